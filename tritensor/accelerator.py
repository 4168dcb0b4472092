"""tt.accelerator: torch.accelerator's device-agnostic API, over tritensor's one accelerator kind.

tritensor's accelerator is ``cuda``: a real GPU, or the emulated device (Triton's interpreter on
host memory), as ``tt.cuda.is_available()`` reports them. Without either, ``is_available()`` is
False, ``current_accelerator()`` None, ``device_count()`` 0, and the calls that need a device raise
torch's RuntimeError.
"""
from __future__ import annotations

from . import cuda as _cuda
from .runtime.device import device as _device


def is_available() -> bool:
    return _cuda.is_available()


def current_accelerator(check_available: bool = False):
    """tt.device("cuda"), or None where there is none (``check_available`` changes nothing then)."""
    return _device("cuda") if is_available() else None


def device_count() -> int:
    return _cuda.device_count() if is_available() else 0


def _require():
    if not is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")


def _index_of(device):
    """An int, "cuda:1" or a tt.device: its index (None: the current one)."""
    if device is None:
        return _cuda.current_device()
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    d = device if isinstance(device, _device) else _device(device)
    if d.type != "cuda":
        raise ValueError(f"{d.type} doesn't match the current accelerator cuda.")
    return _cuda.current_device() if d.index is None else d.index


def current_device_index() -> int:
    _require()
    return _cuda.current_device()


def set_device_index(device, /) -> None:
    _require()
    _cuda.set_device(_index_of(device))


current_device_idx = current_device_index     # torch's deprecated names
set_device_idx = set_device_index


def current_stream(device=None, /):
    _require()
    return _cuda.current_stream(_index_of(device))


def set_stream(stream) -> None:
    _require()
    _cuda.set_stream(stream)


def synchronize(device=None, /) -> None:
    _require()
    _cuda.synchronize(_index_of(device))


class device_index:
    """``with tt.accelerator.device_index(i):`` device ``i`` is current inside the block, the
    previous one after it; None changes nothing."""

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            _require()
            self.prev_idx = _cuda.current_device()
            _cuda.set_device(self.idx)

    def __exit__(self, *exc_info):
        if self.idx is not None:
            _cuda.set_device(self.prev_idx)


# memory: the caching allocator of the current accelerator (tt.cuda's functions)
def empty_cache() -> None:
    if is_available():
        _cuda.empty_cache()


def memory_allocated(device_index=None, /) -> int:
    _require()
    return _cuda.memory_allocated(_index_of(device_index))


def max_memory_allocated(device_index=None, /) -> int:
    _require()
    return _cuda.max_memory_allocated(_index_of(device_index))


def memory_reserved(device_index=None, /) -> int:
    _require()
    return _cuda.memory_reserved(_index_of(device_index))


def max_memory_reserved(device_index=None, /) -> int:
    _require()
    return _cuda.max_memory_reserved(_index_of(device_index))


def memory_stats(device_index=None, /) -> dict:
    _require()
    return _cuda.memory_stats(_index_of(device_index))


def reset_peak_memory_stats(device_index=None, /) -> None:
    _require()
    _cuda.reset_peak_memory_stats(_index_of(device_index))


def reset_accumulated_memory_stats(device_index=None, /) -> None:
    _require()
    _cuda.reset_accumulated_memory_stats(_index_of(device_index))


def get_memory_info(device_index=None, /) -> tuple:
    """(free, total) bytes of the device (tt.cuda.mem_get_info)."""
    _require()
    return _cuda.mem_get_info(_index_of(device_index))
