"""Factories with explicit layouts and ranges: empty_strided / Tensor.new_empty_strided,
empty_permuted, logspace, scalar_tensor.

empty_strided and empty_permuted allocate exactly the storage their layout spans (torch's
computeStorageNbytes), uninitialised as torch.empty. logspace follows torch's CPU kernel
(RangeFactories.cpp) step by step, on the host as linspace does: the bounds converted to the
dtype (with torch's overflow check), the exponent from start forward for the first half and
from end backward for the second, ``base ** exponent`` in double precision (an integer dtype's
base read as a C float first, as torch's kernel does), then the conversion to the dtype.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _dt
from ..backends.base import backend_for
from ..runtime.device import as_device
from ..runtime.storage import Storage
from ..tensor import Tensor
from . import copy as _copy
from .creation import _dtype_or_default, _empty, _finish, _like, _number, _pinned, _size, full
from .surface import declare


def _strided(shape, strides, dtype, device):
    """A new tensor of ``shape`` and ``strides`` over a storage just large enough for them."""
    numel = 1
    for s in shape:
        numel *= s
    if numel == 0:
        span = 0
    else:
        span = 1
        for s, st in zip(shape, strides):
            if st < 0:
                raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)} and "
                                   f"strides={list(strides)}")
            span += (s - 1) * st
    nbytes = span * dtype.itemsize
    if nbytes >= 2 ** 63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)} and strides={list(strides)}")
    return Tensor._make(Storage(nbytes, device), shape, tuple(strides), 0, dtype)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """torch.empty_strided: an uninitialised tensor with exactly these sizes and strides."""
    shape = _size((size,), "empty_strided")
    strides = tuple(int(s) for s in stride)
    if len(shape) != len(strides):
        raise RuntimeError(f"dimensionality of sizes ({len(shape)}) must match dimensionality of strides "
                           f"({len(strides)})")
    t = _strided(shape, strides, _dtype_or_default(dtype), as_device(device))
    return _finish(_pinned(t, pin_memory), requires_grad)


def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                      pin_memory=False):
    """Tensor.new_empty_strided: empty_strided with this tensor's dtype and device by default."""
    dtype, device = _like(self, dtype, device)
    return empty_strided(size, stride, dtype=dtype, device=device, requires_grad=requires_grad,
                         pin_memory=pin_memory)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """torch.empty_permuted: a dense tensor of ``size`` whose dims lie in memory in the order
    ``physical_layout`` (outermost first): empty(size permuted).permute(inverse)."""
    shape = _size((size,), "empty_permuted")
    order = [int(d) for d in physical_layout]
    n = len(shape)
    if len(order) != n:
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {n} is not equal to len(physical_layout) = {len(order)}")
    seen = set()
    for i, d in enumerate(order):
        if not 0 <= d < n:
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and {n - 1}, but got {d} at index "
                               f"{i}).  NB: negative dims not currently supported; file an issue if you want it.")
        if d in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d)
    strides = [0] * n
    step = 1
    for d in reversed(order):
        strides[d] = step
        step *= max(shape[d], 1)
    t = _strided(shape, strides, _dtype_or_default(dtype), as_device(device))
    return _finish(_pinned(t, pin_memory), requires_grad)


def _bound(v, which):
    if isinstance(v, Tensor):
        if v.dim() != 0:
            raise RuntimeError(f"logspace only supports 0-dimensional start and end tensors, but got {which} with "
                               f"{v.dim()} dimension(s).")
        return v.item()
    return _number(v, "logspace")


def logspace(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None, requires_grad=False, out=None):
    """torch.logspace: ``base ** linspace(start, end, steps)``, as torch's CPU kernel computes it."""
    start, end = _bound(start, "start"), _bound(end, "end")
    if not isinstance(steps, int) or isinstance(steps, bool):
        raise TypeError(f"logspace(): argument 'steps' (position 3) must be int, not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dtype = _dtype_or_default(dtype)
    device = as_device(device)
    if dtype is _dt.bool_:
        name = backend_for(device).torch_name("logspace_cpu", "logspace_cuda")
        raise NotImplementedError(f'"{name}" not implemented for \'Bool\'')
    t = _empty((steps,), dtype, device)
    if steps == 0:
        return _finish(t, requires_grad)
    base = float(base)
    with np.errstate(all="ignore"):
        if steps == 1:
            values = np.array([_pow(base, float(start))])
        else:
            for v in (start, end):
                _copy.check_scalar_fits(v, dtype)
            values = _logspace_values(start, end, steps, base, dtype)
        t._storage.copy_from_host(0, _to_dtype(values, dtype))
    return _finish(t, requires_grad)


def _logspace_values(start, end, steps, base, dtype):
    i = np.arange(steps, dtype=np.float64)
    if dtype.is_floating_point:
        # the bounds as the dtype holds them, their difference in the dtype's arithmetic (C++'s
        # scalar_t - scalar_t: rounded to float32, float16 or bfloat16)
        s, e = np.array([start, end], dtype=np.float64).astype(dtype.numpy_dtype)
        diff = float(e - s)
        s, e = float(s), float(e)
    else:
        s, e = (int(np.array(v).astype(dtype.numpy_dtype)) for v in (start, end))   # C's conversion
        diff = float(e - s)
        base = float(np.float32(base))      # the kernel's float scalar_base
    step = diff / (steps - 1)
    exponent = np.where(i < steps // 2, s + step * i, e - step * (steps - i - 1))
    # C's pow (NumPy's float64 power can differ from it in the last bit)
    return np.fromiter((_pow(base, x) for x in exponent.tolist()), dtype=np.float64, count=steps)


def _pow(base, x):
    try:
        return math.pow(base, x)
    except (OverflowError, ValueError):       # C's pow gives inf / nan there
        return float(np.power(base, x))


def _to_dtype(values, dtype):
    """C's double -> integer conversion as x86 does it (truncation; a value out of the 32-bit (64-bit
    for int64) range or NaN becomes the smallest integer), then the dtype's width."""
    if dtype.is_floating_point:
        return values.astype(dtype.numpy_dtype)
    bits = 64 if dtype.itemsize == 8 else 32
    lo, hi = -2.0 ** (bits - 1), 2.0 ** (bits - 1)
    v = np.trunc(values)
    v = np.where(np.isnan(v) | (v < lo) | (v >= hi), lo, v)
    return v.astype(np.int64).astype(dtype.numpy_dtype)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """torch.scalar_tensor: a 0-d tensor holding the number ``s``, of the default dtype unless
    ``dtype`` says otherwise (whatever the number's own type)."""
    if isinstance(s, Tensor):
        if s.dim() != 0:
            raise TypeError("scalar_tensor(): argument 's' (position 1) must be Number, not Tensor")
        s = s.item()
    elif isinstance(s, np.generic):
        s = s.item()
    if not isinstance(s, (int, float, bool)):
        raise TypeError(f"scalar_tensor(): argument 's' (position 1) must be Number, not {type(s).__name__}")
    t = full((), s, dtype=_dtype_or_default(dtype), device=device)
    return _finish(_pinned(t, pin_memory), requires_grad)


declare("empty_strided", empty_strided, method=False)
declare("new_empty_strided", method=new_empty_strided)
declare("empty_permuted", empty_permuted, method=False)
declare("logspace", logspace, method=False, out="factory")
declare("scalar_tensor", scalar_tensor, method=False)
