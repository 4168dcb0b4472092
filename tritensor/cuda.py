"""tt.cuda: availability, devices, synchronisation, memory statistics, seeding, CUDA graphs."""
from __future__ import annotations

from .ops.random import cuda_manual_seed as manual_seed  # noqa: F401
from .ops.random import (  # noqa: F401
    cuda_get_rng_state as get_rng_state, cuda_get_rng_state_all as get_rng_state_all,
    cuda_set_rng_state as set_rng_state, cuda_set_rng_state_all as set_rng_state_all,
)
from .runtime.device import as_device, cuda_mode, current_device, device_count, is_available, is_emulated, set_device  # noqa: F401
# devices, streams and events (runtime/device.py, runtime/streams.py)
from .runtime.device import CudaDeviceProperties as _CudaDeviceProperties  # noqa: F401
from .runtime.device import cuda_device as device, device_of  # noqa: F401
from .runtime.streams import Event, ExternalStream, Stream, StreamContext, current_stream, default_stream, set_stream, stream, synchronize  # noqa: F401
# CUDA graphs (runtime/graphs.py; graphed callables in cuda_graphs.py)
from .runtime.graphs import CUDAGraph, graph, graph_pool_handle, is_current_stream_capturing  # noqa: F401
from .cuda_graphs import make_graphed_callables  # noqa: F401


def manual_seed_all(seed):
    from .ops.random import generator_for
    from .runtime.device import device
    for i in range(device_count()):
        generator_for(device("cuda", i)).manual_seed(seed)


# memory: the caching allocator's statistics, limits and reports (runtime/memory.py)
from .runtime.memory import (OutOfMemoryError, caching_allocator_alloc, caching_allocator_delete, empty_cache,  # noqa: E402,F401
                             get_per_process_memory_fraction, max_memory_allocated, max_memory_cached,
                             max_memory_reserved, memory_allocated, memory_cached, memory_reserved,
                             memory_snapshot, memory_stats, memory_stats_as_nested_dict, memory_summary,
                             reset_accumulated_memory_stats, reset_max_memory_allocated, reset_max_memory_cached,
                             reset_peak_memory_stats, set_per_process_memory_fraction)


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
