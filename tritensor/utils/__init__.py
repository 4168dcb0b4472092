"""tt.utils: the data pipeline (tt.utils.data), DLPack exchange (tt.utils.dlpack) and torch's
backcompat switches (tt.utils.backcompat), as torch.utils."""
from . import backcompat, data, dlpack  # noqa: F401
