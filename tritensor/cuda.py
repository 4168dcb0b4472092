"""tt.cuda: availability, devices, synchronisation, memory statistics, seeding."""
from __future__ import annotations

from .ops.random import cuda_manual_seed as manual_seed  # noqa: F401
from .runtime.allocator import allocator_for
from .runtime.device import as_device, cuda_mode, current_device, device_count, is_available, is_emulated, set_device  # noqa: F401


def manual_seed_all(seed):
    from .ops.random import generator_for
    from .runtime.device import device
    for i in range(device_count()):
        generator_for(device("cuda", i)).manual_seed(seed)


def synchronize(device=None):
    if cuda_mode() == "real":
        import cupy
        cupy.cuda.runtime.deviceSynchronize()


def _alloc(device):
    return allocator_for(as_device("cuda" if device is None else device))


def memory_allocated(device=None) -> int:
    return _alloc(device).allocated


def max_memory_allocated(device=None) -> int:
    return _alloc(device).peak_allocated


def memory_reserved(device=None) -> int:
    return _alloc(device).reserved


def empty_cache():
    for i in range(device_count()):
        _alloc(i).empty_cache()


def get_device_name(device=None) -> str:
    if cuda_mode() == "emulated":
        return "tritensor emulated CUDA device (Triton interpreter)"
    import cupy
    idx = as_device("cuda" if device is None else device).index
    name = cupy.cuda.runtime.getDeviceProperties(idx)["name"]
    return name.decode() if isinstance(name, bytes) else name
