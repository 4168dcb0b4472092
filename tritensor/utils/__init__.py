"""tt.utils: the data pipeline (tt.utils.data), as torch.utils."""
from . import data  # noqa: F401
