"""tt.utils: the data pipeline (tt.utils.data) and DLPack exchange (tt.utils.dlpack), as torch.utils."""
from . import data, dlpack  # noqa: F401
