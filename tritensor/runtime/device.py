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


def cuda_mode():
    """'real', 'emulated' or None; decided once per process."""
    if _env_true("TRITENSOR_EMULATE_CUDA") or _env_true("TRITON_INTERPRET"):
        # Triton decides interpreted-or-compiled when a kernel is decorated, which happens
        # when tritensor first imports its kernels, after this point.
        os.environ["TRITON_INTERPRET"] = "1"
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


def device_count() -> int:
    mode = cuda_mode()
    if mode == "real":
        import cupy
        return cupy.cuda.runtime.getDeviceCount()
    return 1 if mode == "emulated" else 0


_current = 0


def current_device() -> int:
    return _current


def set_device(d):
    global _current
    idx = d if isinstance(d, int) else as_device(d).index
    _check_cuda_index(idx)
    _current = idx
    if cuda_mode() == "real":
        import cupy
        cupy.cuda.runtime.setDevice(idx)


def _check_cuda_index(idx):
    if cuda_mode() is None:
        raise AssertionError("no CUDA device: install CuPy (the cuda12/cuda13 extra) on a machine "
                             "with an NVIDIA GPU, or set TRITENSOR_EMULATE_CUDA=1 to emulate one")
    n = device_count()
    if not 0 <= idx < n:
        raise RuntimeError(f"CUDA error: invalid device ordinal (device {idx}, {n} available)")
