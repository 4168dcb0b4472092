"""tt.nn.parallel: torch.nn.parallel's names. Data parallelism (one module replicated over
several devices, its gradients reduced) is issue 27's (tritensor.distributed); until it lands,
constructing either wrapper raises NotImplementedError."""
from __future__ import annotations

_ISSUE = "issue 27 (distributed and data-parallel training)"


class DataParallel:
    """torch.nn.DataParallel: not built yet (see the module docstring)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        raise NotImplementedError(f"tt.nn.parallel.DataParallel is not implemented yet: {_ISSUE}")


class DistributedDataParallel:
    """torch.nn.parallel.DistributedDataParallel: not built yet (see the module docstring)."""

    def __init__(self, module, *args, **kwargs):
        raise NotImplementedError(f"tt.nn.parallel.DistributedDataParallel is not implemented yet: {_ISSUE}")


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    raise NotImplementedError(f"tt.nn.parallel.data_parallel is not implemented yet: {_ISSUE}")
