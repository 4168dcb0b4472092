"""tt.nn.parallel: torch.nn.parallel's names. DataParallel (one process, several GPUs) is here;
DistributedDataParallel (one process per device, gradients all-reduced) needs
tritensor.distributed's process groups and raises NotImplementedError until it is built."""
from __future__ import annotations

from .data_parallel import (  # noqa: F401
    DataParallel, data_parallel, gather, parallel_apply, replicate, scatter, scatter_kwargs,
)

_ISSUE = "issue 27 (distributed and data-parallel training)"


class DistributedDataParallel:
    """torch.nn.parallel.DistributedDataParallel: not built yet (see the module docstring)."""

    def __init__(self, module, *args, **kwargs):
        raise NotImplementedError(f"tt.nn.parallel.DistributedDataParallel is not implemented yet: {_ISSUE}")
