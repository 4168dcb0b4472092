"""Device objects and the decision of what ``cuda`` means on this machine.

``cuda`` is real when CuPy sees an NVIDIA GPU, and emulated (host memory, the same Triton kernels
under Triton's interpreter) when ``TRITON_INTERPRET=1`` or ``TRITENSOR_EMULATE_CUDA=1`` is set.
The interpreter reads kernel arguments from host memory, so once either variable is set the
emulated device is used even where a GPU exists; this also lets a GPU machine run the emulated
path on purpose.
"""
from __future__ import annotations

import functools
import os
import sys
import threading


class device:
    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            if index is not None:
                raise ValueError("device(): index given twice")
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and not isinstance(type, bool):
            type, index = "cuda", type
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got ({type!r})")
        name = type
        if ":" in name:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: {name}")
            name, _, idx = name.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
        if name not in ("cpu", "cuda"):
            raise RuntimeError(
                f"Expected one of cpu, cuda device type at start of device string: {type}")
        if index is not None and (not isinstance(index, int) or index < 0):
            raise RuntimeError("Device index must not be negative")
        if name == "cpu" and index not in (None, 0):
            raise RuntimeError(f"CPU device index must be -1 or zero, got {index}")
        self.type = name
        self.index = index

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __reduce__(self):
        return (device, (self.type, self.index))


CPU = device("cpu")


def as_device(d) -> device:
    """Normalise a user's device argument; a bare ``cuda`` means the current CUDA device."""
    if d is None:
        return CPU
    d = d if isinstance(d, device) else device(d)
    if d.type == "cuda":
        if d.index is None:
            d = device("cuda", current_device())
        _check_cuda_index(d.index)
    return d


def _env_true(name):
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


@functools.lru_cache(maxsize=None)
def interpreter_breaks_on(index_source: str, numpy_version: str) -> bool:
    """True when Triton's interpreter cannot run our kernels: before the fix of
    triton-lang/triton#9171 it turns a scalar into a Python int with int() of a 1-element array,
    which NumPy >= 2.4 refuses (every loop bound over a kernel argument fails)."""
    major, minor = (int(p) for p in numpy_version.split(".")[:2])
    return "int(self.handle.data)" in index_source and (major, minor) >= (2, 4)


@functools.lru_cache(maxsize=None)
def _check_interpreter():
    import inspect

    import numpy
    import triton
    from triton.runtime import interpreter
    if interpreter_breaks_on(inspect.getsource(interpreter._patch_lang_tensor), numpy.__version__):
        raise RuntimeError(
            f"the emulated cuda device runs Triton's interpreter, and Triton {triton.__version__}'s "
            f"interpreter fails with NumPy {numpy.__version__} (triton-lang/triton#9171). Install "
            "numpy<2.4, or a Triton release with the fix (3.9 works).")


_MODE = []     # cuda_mode()'s answer, once decided


def cuda_mode():
    """'real', 'emulated' or None; decided once per process (at the first question: it is asked
    on every device check and allocation, and the real answer costs a driver call)."""
    if _MODE:
        return _MODE[0]
    mode = _decide_cuda_mode()
    _MODE.append(mode)
    return mode


def _decide_cuda_mode():
    if _env_true("TRITENSOR_EMULATE_CUDA") or _env_true("TRITON_INTERPRET"):
        # Triton decides interpreted-or-compiled when a kernel is decorated, which happens
        # when tritensor first imports its kernels, after this point; Triton's own helpers,
        # decorated already if triton was imported first, are re-decorated (interpreter.py).
        os.environ["TRITON_INTERPRET"] = "1"
        if "triton" in sys.modules:
            from .interpreter import interpret_preloaded_language
            interpret_preloaded_language()
        _check_interpreter()
        return "emulated"
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0:
            return "real"
    except Exception:  # no CuPy, no driver, or no device: all mean "no real GPU"
        pass
    return None


def is_available() -> bool:
    return cuda_mode() is not None


def is_emulated() -> bool:
    return cuda_mode() == "emulated"


def emulated_device_count() -> int:
    """How many GPUs the emulated device stands for: ``TRITENSOR_EMULATED_DEVICES`` (default 1),
    read once, at the first question about devices (so a test's conftest can set it before)."""
    global _emulated_count
    if _emulated_count is None:
        raw = os.environ.get("TRITENSOR_EMULATED_DEVICES", "1").strip() or "1"
        if not raw.isdigit() or int(raw) < 1:
            raise RuntimeError(f"TRITENSOR_EMULATED_DEVICES must be a positive integer, got {raw!r}")
        _emulated_count = int(raw)
    return _emulated_count


_emulated_count = None


def device_count() -> int:
    mode = cuda_mode()
    if mode == "real":
        import cupy
        return cupy.cuda.runtime.getDeviceCount()
    return emulated_device_count() if mode == "emulated" else 0


# The current device is per host thread, as CUDA's (cudaSetDevice) and torch's are.
_tls = threading.local()


def current_device() -> int:
    return getattr(_tls, "index", 0)


def set_device(d):
    """Make ``d`` (an int, a string or a tt.device) the current CUDA device. A negative index
    does nothing, as in torch."""
    idx = _cuda_index(d)
    if idx < 0:
        return
    _check_cuda_index(idx)
    _tls.index = idx
    if cuda_mode() == "real":
        import cupy
        cupy.cuda.runtime.setDevice(idx)


def exchange_device(idx: int) -> int:
    """Make ``idx`` current and return the previous current device (torch.cuda._exchange_device)."""
    prev = current_device()
    if idx != prev:
        set_device(idx)
    return prev


def _cuda_index(d) -> int:
    """torch's _get_device_index(optional=True) for CUDA: None and -1 mean "keep the current"."""
    if d is None:
        return -1
    if isinstance(d, int) and not isinstance(d, bool):
        return d
    if isinstance(d, str):
        d = device(d)
    if not isinstance(d, device):
        raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{d}")
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return current_device() if d.index is None else d.index


class cuda_device:
    """``with tt.cuda.device(i):`` makes CUDA device ``i`` (int, string or tt.device) current
    inside the block and restores the previous one after (torch.cuda.device). None or -1 do
    nothing."""

    def __init__(self, device):
        self.idx = _cuda_index(device)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = exchange_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx >= 0:
            exchange_device(self.prev_idx)
        return False


class device_of(cuda_device):
    """``with tt.cuda.device_of(t):`` makes ``t``'s device current (nothing for a cpu tensor)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.device.type == "cuda" else -1)


def _check_cuda_index(idx):
    if cuda_mode() is None:
        raise AssertionError("no CUDA device: install CuPy (the cuda12/cuda13 extra) on a machine "
                             "with an NVIDIA GPU, or set TRITENSOR_EMULATE_CUDA=1 to emulate one")
    n = device_count()
    if not 0 <= idx < n:
        raise RuntimeError(f"CUDA error: invalid device ordinal (device {idx}, {n} available)")


# ---------------------------------------------------------------------- properties
class CudaDeviceProperties:
    """What ``tt.cuda.get_device_properties`` returns (torch's _CudaDeviceProperties fields)."""
    __slots__ = ("name", "major", "minor", "total_memory", "multi_processor_count", "L2_cache_size",
                 "pci_bus_id")

    def __init__(self, name, major, minor, total_memory, multi_processor_count, L2_cache_size=0, pci_bus_id=0):
        self.name, self.major, self.minor = name, major, minor
        self.total_memory, self.multi_processor_count = total_memory, multi_processor_count
        self.L2_cache_size, self.pci_bus_id = L2_cache_size, pci_bus_id

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count}, "
                f"L2_cache_size={self.L2_cache_size // (1024 * 1024)}MB)")


EMULATED_NAME = "tritensor emulated CUDA device (Triton interpreter)"
# The emulated device runs the kernels written for sm_90 (Hopper) under the interpreter, so it
# reports that capability; its memory is host memory (with the capacity runtime/allocator.py
# gives each emulated device) and its "multiprocessors" are host cores.
EMULATED_CAPABILITY = (9, 0)


@functools.lru_cache(maxsize=None)
def get_device_properties(idx: int) -> CudaDeviceProperties:
    _check_cuda_index(idx)
    if cuda_mode() == "emulated":
        major, minor = EMULATED_CAPABILITY
        return CudaDeviceProperties(EMULATED_NAME, major, minor, mem_get_info(idx)[1], os.cpu_count() or 1)
    import cupy
    p = cupy.cuda.runtime.getDeviceProperties(idx)
    name = p["name"].decode() if isinstance(p["name"], bytes) else p["name"]
    return CudaDeviceProperties(name, p["major"], p["minor"], p["totalGlobalMem"], p["multiProcessorCount"],
                                p.get("l2CacheSize", 0), p.get("pciBusID", 0))


def mem_get_info(idx: int):
    """(free, total) bytes of device ``idx`` (cudaMemGetInfo)."""
    _check_cuda_index(idx)
    if cuda_mode() == "emulated":
        # each emulated device has a capacity of its own (the allocator's, runtime/allocator.py)
        from .allocator import allocator_for
        return tuple(int(v) for v in allocator_for(device("cuda", idx)).mem_info())
    import cupy
    with cupy.cuda.Device(idx):
        free, total = cupy.cuda.runtime.memGetInfo()
    return int(free), int(total)
