"""tt.cuda: availability, devices, synchronisation, memory statistics, seeding."""
from __future__ import annotations

from .ops.random import cuda_manual_seed as manual_seed  # noqa: F401
from .runtime.allocator import allocator_for
from .runtime.device import as_device, cuda_mode, current_device, device_count, is_available, is_emulated, set_device  # noqa: F401
# devices, streams and events (runtime/device.py, runtime/streams.py)
from .runtime.device import CudaDeviceProperties as _CudaDeviceProperties  # noqa: F401
from .runtime.device import cuda_device as device, device_of  # noqa: F401
from .runtime.streams import Event, ExternalStream, Stream, StreamContext, current_stream, default_stream, set_stream, stream, synchronize  # noqa: F401


def manual_seed_all(seed):
    from .ops.random import generator_for
    from .runtime.device import device
    for i in range(device_count()):
        generator_for(device("cuda", i)).manual_seed(seed)


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


def _index(device) -> int:
    from .runtime.device import _check_cuda_index, _cuda_index
    idx = _cuda_index(device)
    idx = current_device() if idx < 0 else idx
    _check_cuda_index(idx)
    return idx


def get_device_properties(device=None):
    """name, total_memory, multi_processor_count, major, minor (torch.cuda.get_device_properties)."""
    from .runtime.device import get_device_properties as props
    return props(_index(device))


def get_device_name(device=None) -> str:
    return get_device_properties(device).name


def get_device_capability(device=None) -> tuple:
    p = get_device_properties(device)
    return p.major, p.minor


def mem_get_info(device=None) -> tuple:
    """(free, total) bytes on the device (cudaMemGetInfo; host memory for the emulated device)."""
    from .runtime.device import mem_get_info as info
    return info(_index(device))
