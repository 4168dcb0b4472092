"""tt.nn.parallel: torch.nn.parallel's names. DataParallel (one process, several GPUs,
data_parallel.py) and DistributedDataParallel (one process per device, gradients all-reduced over
tritensor.distributed's process group, distributed.py)."""
from __future__ import annotations

from .data_parallel import (  # noqa: F401
    DataParallel, data_parallel, gather, parallel_apply, replicate, scatter, scatter_kwargs,
)

from .distributed import DistributedDataParallel  # noqa: F401
