"""tt.utils: the data pipeline (tt.utils.data), DLPack exchange (tt.utils.dlpack), activation
checkpointing (tt.utils.checkpoint) and torch's backcompat switches (tt.utils.backcompat), as
torch.utils."""
from . import backcompat, checkpoint, data, dlpack  # noqa: F401
