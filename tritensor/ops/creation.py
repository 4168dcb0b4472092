"""Factories: tensor, from_numpy, empty/zeros/ones/full, arange, linspace, eye, rand/randn and
the *_like / new_* families."""
from __future__ import annotations

import collections.abc
import math
import warnings

import numpy as np

from .. import _tracing
from .. import dtypes as _dt
from ..memory_formats import contiguous_format, format_name
from ..runtime.device import CPU, as_device
from ..runtime.dlpack import from_cuda_array_interface, from_dlpack as _from_dlpack
from ..runtime.storage import Storage
from ..tensor import Tensor
from . import _layout
from . import _unsigned
from . import copy as _copy
from . import generators as _generators
from .dispatch import empty as _empty


def _size(size, name="empty"):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = []
    for pos, s in enumerate(size, 1):
        if isinstance(s, Tensor):
            s = int(s)
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"{name}(): argument 'size' must be tuple of ints, but found element of type {type(s).__name__}")
        if not -2 ** 63 <= s < 2 ** 63:         # torch reads each size as a C long long
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos {pos} with error "
                            "\"Overflow when unpacking long long\"")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
        out.append(int(s))
    return tuple(out)


def _sizes(name, args, size):
    """The size of empty/zeros/ones/rand/randn: ``*size`` positionally or ``size=`` as a keyword
    (torch accepts both, not together)."""
    if size is None:
        return args
    if args:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    return (size,)


def _finish(t, requires_grad):
    if requires_grad:
        t.requires_grad = True     # the attribute's error text, as torch's factories give
    return t


# --------------------------------------------------------------------------- from data
def _is_sequence(d):
    """torch.tensor's data: a list or tuple, or any other Python sequence (a deque, a range ...)
    but not a string (torch's PySequence_Check, whose str/bytes it refuses)."""
    return isinstance(d, (list, tuple)) or (
        isinstance(d, (collections.abc.Sequence, collections.deque)) and not isinstance(d, (str, bytes, bytearray)))


def _as_lists(data):
    """Nested sequences as nested lists (NumPy and the checks below read lists and tuples)."""
    if isinstance(data, (Tensor, np.ndarray)) or not _is_sequence(data):
        return data
    return [_as_lists(d) for d in data]


def _infer_dtype(data):
    """torch.tensor's inference: bool if all bools, int64 if all ints, else the default float."""
    if isinstance(data, np.ndarray):
        return _dt.from_numpy_dtype(data.dtype)
    if isinstance(data, Tensor):
        return data.dtype
    # Python numbers count by category (bool, int64, the default float); tensors and NumPy
    # values by their own dtype; all of them promote together.
    result = None
    stack = [data]
    while stack:
        d = stack.pop()
        if isinstance(d, (list, tuple)):
            stack.extend(d)
            continue
        if isinstance(d, Tensor):
            dt = d.dtype
        elif isinstance(d, (np.ndarray, np.generic)):
            dt = _dt.from_numpy_dtype(np.asarray(d).dtype)
        elif isinstance(d, (bool, int, float)):
            dt = _dt.scalar_default_dtype(d)
        elif isinstance(d, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(d).__name__}'")
        else:
            raise RuntimeError(f"Could not infer dtype of {type(d).__name__}")
        result = dt if result is None else _dt.promote_types(result, dt)
    return result if result is not None else _dt.get_default_dtype()


def _to_numpy(data):
    if isinstance(data, Tensor):
        return data.detach()._to_host_array()
    if isinstance(data, (list, tuple)) and any(isinstance(d, Tensor) for d in data):
        return np.array([_to_numpy(d) for d in data])
    return np.array(data)   # ragged nesting raises NumPy's ValueError


def _check_python_ints(data, dtype):
    """torch.tensor's unpacking of Python ints into an integer dtype: an int outside int64 is
    ValueError("Overflow when unpacking long long"), one outside a narrower dtype's range
    RuntimeError (NumPy would wrap both silently, or fail with its own OverflowError)."""
    info = np.iinfo(dtype.numpy_dtype)
    # unsigned: a negative int wraps as long as -value fits (c10's checked_convert); uint64 is
    # unpacked as an unsigned long long, which takes no negative int and no float
    low = -int(info.max) if info.min == 0 else info.min
    stack = [data]
    while stack:
        d = stack.pop()
        if isinstance(d, (list, tuple)):
            stack.extend(d)
        elif dtype is _dt.uint64 and not isinstance(d, bool):
            if isinstance(d, float):
                raise TypeError("an integer is required")
            if isinstance(d, int) and not 0 <= d <= info.max:
                raise OverflowError("can't convert negative int to unsigned" if d < 0 else "int too big to convert")
        elif isinstance(d, int) and not isinstance(d, bool) and not low <= d <= info.max:
            if not -2 ** 63 <= d < 2 ** 63:
                raise ValueError("Overflow when unpacking long long")
            raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    if not isinstance(data, (list, tuple, Tensor, np.ndarray, int, float, bool)) and _is_sequence(data):
        data = _as_lists(data)          # a deque, a range ...: read as the list it holds
    elif isinstance(data, (list, tuple)) and any(not isinstance(d, (list, tuple)) and _is_sequence(d) for d in data):
        data = _as_lists(data)
    dtype = _dt.as_dtype(dtype) if dtype is not None else _infer_dtype(data)
    if isinstance(data, (int, list, tuple)) and not dtype.is_floating_point and dtype is not _dt.bool_:
        _check_python_ints(data, dtype)
    # uint64's values >= 2**63 next to small ints would make NumPy infer float64: read them as
    # uint64 directly (the check above let no negative int or float through)
    arr = np.array(data, np.uint64) if dtype is _dt.uint64 and isinstance(data, (int, list, tuple)) \
        else _to_numpy(data)
    with np.errstate(over="ignore"):   # out-of-range values become inf, as in torch
        arr = np.require(arr.astype(dtype.numpy_dtype, copy=False), requirements="C")
    return _finish(_pinned(_from_host_array(arr, dtype, as_device(device)), pin_memory), requires_grad)


def _pinned(t, pin_memory):
    """The factories' pin_memory=True: the tensor in pinned host memory (cpu tensors only)."""
    if not pin_memory:
        return t
    return _copy.pin_memory(t)


def _from_host_array(arr, dtype, device):
    t = _empty(arr.shape, dtype, device)
    if arr.size:
        t._storage.copy_from_host(0, arr)
    return t


def _cuda_array(data):
    """True for an object that exposes CUDA memory through __cuda_array_interface__ (CuPy, Numba...)."""
    if isinstance(data, (Tensor, np.ndarray)):
        return False
    try:
        return hasattr(data, "__cuda_array_interface__")
    except Exception:       # a property that fails for another reason: not a CUDA array
        return False


def _shares_numpy(arr, dtype, device):
    return (dtype is None or _dt.as_dtype(dtype) is _dt.from_numpy_dtype(arr.dtype)) and \
        (device is None or as_device(device) == CPU)


def as_tensor(data, dtype=None, device=None):
    """torch.as_tensor: shares memory with a Tensor, a NumPy array (cpu) or a CUDA array (an object
    with __cuda_array_interface__, such as a CuPy array) where dtype and device allow; copies
    otherwise."""
    if isinstance(data, Tensor):
        return _copy.to(data, device=device, dtype=dtype)
    if _cuda_array(data):
        return _copy.to(from_cuda_array_interface(data), device=device, dtype=dtype)
    if isinstance(data, np.ndarray) and _shares_numpy(data, dtype, device):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """torch.asarray: a tensor sharing ``obj``'s memory where it can (a Tensor, a CUDA array, a
    DLPack producer, a NumPy array), converted to ``dtype``/``device`` if asked. ``copy=True``
    always copies, ``copy=False`` raises ValueError where sharing is impossible. ``requires_grad``
    defaults to the aliased tensor's (with torch's warning) and to False for new data."""
    source = None
    if isinstance(obj, Tensor):
        source = obj
    elif _cuda_array(obj):
        source = from_cuda_array_interface(obj)
    elif hasattr(obj, "__dlpack__") and not isinstance(obj, np.ndarray):
        source = _from_dlpack(obj)
    elif isinstance(obj, np.ndarray):
        source = from_numpy(obj)
    if source is None:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        return _finish(tensor(obj, dtype=dtype, device=device), bool(requires_grad))
    t = source
    if dtype is not None and _dt.as_dtype(dtype) is not t.dtype:
        if copy is False:
            raise ValueError(f"can't alias tensor with dtype '{_dt.type_name(t.dtype)}' into dtype "
                             f"'{_dt.type_name(_dt.as_dtype(dtype))}'.")
        t = _copy.to(t, dtype=dtype)
    if device is not None and as_device(device) != t.device:
        if copy is False:
            raise ValueError(f"can't alias tensor from device '{t.device}' to '{as_device(device)}'.")
        t = _copy.to(t, device=device)
    if copy and t is source:
        t = t.detach().clone()
    if requires_grad is None:
        if t.requires_grad:
            warnings.warn("torch.asarray: unspecified requires_grad now defaults to obj.requires_grad instead of "
                          "False. Pass requires_grad=False explicitly to get the old behavior and silence this "
                          "warning.", UserWarning, stacklevel=2)
    elif requires_grad:
        t.requires_grad_(True)
    elif t.requires_grad:
        t = t.detach()
    return t


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """torch.from_dlpack: a tensor sharing the memory of any DLPack producer (NumPy, CuPy, JAX,
    torch, tritensor) or of a DLPack capsule; see runtime/dlpack.py."""
    return _from_dlpack(ext_tensor, device=device, copy=copy)


def from_numpy(arr: np.ndarray) -> Tensor:
    """A cpu tensor sharing ``arr``'s memory."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    dtype = _dt.from_numpy_dtype(arr.dtype)
    itemsize = arr.dtype.itemsize
    if any(s < 0 for s in arr.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative "
            "strides are not currently supported. (You can probably work around this by making a "
            "copy of your array  with array.copy().) ")
    if any(s % itemsize for s in arr.strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. "
                         "Copy the numpy array to reallocate the memory.")
    span = 0 if arr.size == 0 else sum((d - 1) * s for d, s in zip(arr.shape, arr.strides)) + itemsize
    storage = Storage.wrap_host(arr.ctypes.data, span, arr, CPU)
    if not arr.flags.writeable:
        _warn_not_writable()
        # torch shares the memory and lets writes through (undefined behaviour: the memory may
        # be an immutable bytes object or a read-only mapping); we share it for reading and
        # every write into it is refused by NumPy ("assignment destination is read-only").
        storage.host.flags.writeable = False
    return Tensor._make(storage, arr.shape, tuple(s // itemsize for s in arr.strides), 0, dtype)


_warned_not_writable = False


def _warn_not_writable():
    """torch's warning for a non-writable NumPy array, given once per program as torch's."""
    global _warned_not_writable
    if not _warned_not_writable:
        _warned_not_writable = True
        warnings.warn("The given NumPy array is not writable, and PyTorch does not support non-writable tensors. "
                      "This means writing to this tensor will result in undefined behavior. You may want to copy "
                      "the array to protect its data or make it writable before converting it to a tensor. This "
                      "type of warning will be suppressed for the rest of this program.", UserWarning, stacklevel=3)


# --------------------------------------------------------------------------- by size
def _dtype_or_default(dtype):
    return _dt.as_dtype(dtype) if dtype is not None else _dt.get_default_dtype()


def empty(*args, size=None, dtype=None, device=None, requires_grad=False, out=None, layout=None, pin_memory=False,
          memory_format=None):
    """torch.empty; ``memory_format`` contiguous_format (the default), channels_last (4-D) or
    channels_last_3d (5-D); preserve_format has nothing to preserve (torch's error)."""
    shape = _size(_sizes("empty", args, size))
    strides = None
    if memory_format is not None and memory_format is not contiguous_format:
        name = format_name(memory_format, "empty")
        if name == _layout.PRESERVE:
            raise RuntimeError("unsupported memory format Preserve")
        strides = _layout.format_strides(name, shape)
    return _finish(_pinned(_empty(shape, _dtype_or_default(dtype), as_device(device), strides), pin_memory),
                   requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    if dtype is None:
        dtype = _dt.scalar_default_dtype(fill_value) if isinstance(fill_value, (bool, int, float)) \
            else _dt.get_default_dtype()
    t = _empty(_size((size,), "full"), _dt.as_dtype(dtype), as_device(device))
    _copy.check_scalar_fits(fill_value, t.dtype)     # torch's fill_: no silent wrap
    _copy.fill_into(t, fill_value)
    return _finish(t, requires_grad)


def zeros(*args, size=None, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    return full(_size(_sizes("zeros", args, size), "zeros"), 0, dtype=_dtype_or_default(dtype), device=device, requires_grad=requires_grad)


def ones(*args, size=None, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    return full(_size(_sizes("ones", args, size), "ones"), 1, dtype=_dtype_or_default(dtype), device=device, requires_grad=requires_grad)


def _like(x, dtype, device):
    return (_dt.as_dtype(dtype) if dtype is not None else x.dtype,
            as_device(device) if device is not None else x.device)


def _empty_like(x, dtype, device, memory_format, function):
    """empty_like's tensor: ``x``'s shape, strides by ``memory_format`` (torch's empty_like:
    preserve_format, the default, keeps a dense ``x``'s strides and gives any other ``x`` a
    dense layout with its dims in the same order)."""
    dtype, device = _like(x, dtype, device)
    name = format_name(memory_format, function)
    strides = _layout.like_strides(name, tuple(x._shape), x._stride)
    return _empty(x.shape, dtype, device, None if strides == _layout.contiguous_strides(x._shape) else strides)


def empty_like(x, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _finish(_empty_like(x, dtype, device, memory_format, "empty_like"), requires_grad)


def full_like(x, fill_value, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    t = _empty_like(x, dtype, device, memory_format, "full_like")
    _copy.check_scalar_fits(fill_value, t.dtype)
    _copy.fill_into(t, fill_value)
    return _finish(t, requires_grad)


def zeros_like(x, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    t = _empty_like(x, dtype, device, memory_format, "zeros_like")
    _copy.fill_into(t, 0)
    return _finish(t, requires_grad)


def ones_like(x, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    t = _empty_like(x, dtype, device, memory_format, "ones_like")
    _copy.fill_into(t, 1)
    return _finish(t, requires_grad)


@_tracing.random_op("rand_like")
def rand_like(x, *, dtype=None, device=None, requires_grad=False, generator=None, memory_format=None):
    t = _empty_like(x, dtype, device, memory_format, "rand_like")
    _generators.uniform_(t, 0.0, 1.0, generator=generator)
    return _finish(t, requires_grad)


@_tracing.random_op("randn_like")
def randn_like(x, *, dtype=None, device=None, requires_grad=False, generator=None, memory_format=None):
    t = _empty_like(x, dtype, device, memory_format, "randn_like")
    _generators.normal_(t, 0.0, 1.0, generator=generator)
    return _finish(t, requires_grad)


# new_* take their dtype and device from the tensor they are called on
def new_empty(x, *size, dtype=None, device=None, requires_grad=False):
    dtype, device = _like(x, dtype, device)
    return empty(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def new_zeros(x, *size, dtype=None, device=None, requires_grad=False):
    dtype, device = _like(x, dtype, device)
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def new_ones(x, *size, dtype=None, device=None, requires_grad=False):
    dtype, device = _like(x, dtype, device)
    return ones(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def new_full(x, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    dtype, device = _like(x, dtype, device)
    return full(size, fill_value, dtype=dtype, device=device, requires_grad=requires_grad)


def new_tensor(x, data, *, dtype=None, device=None, requires_grad=False):
    dtype, device = _like(x, dtype, device)
    return tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


# --------------------------------------------------------------------------- ranges
def _cpp_double(v):
    """A number as torch's C++ messages print a double (ostream's default: %g, 6 digits)."""
    return f"{float(v):g}"


def _number(v, what):
    if isinstance(v, Tensor):
        return v.item()
    if isinstance(v, np.generic):
        return v.item()
    if not isinstance(v, (int, float)):
        raise TypeError(f"{what}(): argument must be a Number, not {type(v).__name__}")
    return v


_INT64_MAX = 2 ** 63 - 1


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    """torch.arange: [start, end) by step; int64 when every bound is an integer, else the
    default float dtype. torch's checks (RangeFactories.cpp) in its order: a nonzero step, finite
    bounds, a step whose sign goes from start to end, a size that fits int64 (the tensor itself
    then goes through empty's storage-size check). Integer dtypes accumulate in int64 from the
    bounds truncated toward zero, so float bounds of an int64 range drop their fractions."""
    if end is None:
        start, end = 0, start
    start, end, step = (_number(v, "arange") for v in (start, end, step))
    for v in (start, end, step):
        if isinstance(v, int) and not -2 ** 63 <= v <= _INT64_MAX:
            raise OverflowError("int too big to convert")
    if dtype is None:
        dtype = _dt.int64 if all(isinstance(v, int) for v in (start, end, step)) else _dt.get_default_dtype()
    dtype = _dt.as_dtype(dtype)
    device = as_device(device)
    if dtype is _dt.bool_:
        raise NotImplementedError(f"\"arange_{device.type}\" not implemented for 'Bool'")
    _unsigned.refuse("arange_cpu", dtype, device)
    if not (step > 0 or step < 0):           # (a NaN step too)
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {_cpp_double(start)} -> {_cpp_double(end)}")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    ratio = (float(end) - float(start)) / float(step)
    size = math.ceil(ratio) if math.isfinite(ratio) else math.inf
    if not dtype.is_floating_point:
        if dtype is _dt.int64:
            for v in (start, end, step):
                _copy.check_scalar_fits(v, _dt.int64)
        xstart, xend, xstep = int(start), int(end), int(step)     # int() truncates toward zero
        if dtype is _dt.int64:             # torch sizes an int64 range in integers
            if xstep == 0:
                raise ValueError("step must be nonzero")
            num = xend - xstart + xstep - (1 if xstep > 0 else -1)
            size = abs(num) // abs(xstep) * (1 if (num >= 0) == (xstep > 0) else -1)   # C's truncating /
    if not 0 <= size <= _INT64_MAX:
        raise RuntimeError("invalid size, possible overflow?")
    size = int(size)
    t = _empty((size,), dtype, device)      # the storage-size check before any work
    if size:
        i = np.arange(size, dtype=np.float64 if dtype.is_floating_point else np.int64)
        arr = float(start) + i * float(step) if dtype.is_floating_point else xstart + i * xstep
        t._storage.copy_from_host(0, arr.astype(dtype.numpy_dtype))
    return _finish(t, requires_grad)


def _fma(a, b, c):
    """a * b + c rounded once, as a fused multiply-add (float64 arrays): the product's rounding
    error recovered exactly (Dekker's product), then added with the sum's own error (Knuth's
    two-sum). torch's CPU linspace is compiled with FMA contraction, and an integer linspace
    truncates, so a value one rounding below an integer (14.999999999999998) must stay below it."""
    split = 134217729.0                      # 2**27 + 1 (Veltkamp)
    ta, tb = a * split, b * split
    ah = ta - (ta - a)
    bh = tb - (tb - b)
    al, bl = a - ah, b - bh
    p = a * b
    perr = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    bb = s - p
    serr = (p - (s - bb)) + (c - bb)
    return s + (serr + perr)


def _linspace_values(start, end, steps, dtype):
    """torch's CPU linspace kernel (RangeFactoriesKernel.cpp), value for value: the bounds in the
    result's type, ``step = (end - start) / (steps - 1)`` in double for integer results and in the
    result's type otherwise; the first half ``start + step * i``, the second ``end - step * (steps
    - 1 - i)``, each one fused multiply-add in the step's type (float32: exact in float64, one
    rounding to float32), integers truncated. float16/bfloat16 arithmetic is c10::Half's: every
    operation computed in float32 and rounded back."""
    i = np.arange(steps, dtype=np.int64)
    first = i < steps // 2
    back = steps - 1 - i
    if dtype.is_floating_point and dtype.itemsize == 2:          # c10::Half / c10::BFloat16
        h = dtype.numpy_dtype
        f = lambda v: np.asarray(v).astype(h).astype(np.float32)     # noqa: E731 (round to the type)
        s, e = f(start), f(end)
        step = f(f(e - s) / f(steps - 1))
        with np.errstate(over="ignore", invalid="ignore"):
            return np.where(first, f(s + f(step * f(i))), f(e - f(step * f(back)))).astype(h)
    if dtype is _dt.float32:
        s, e = np.float32(start), np.float32(end)
        step = np.float64(np.float32(np.float32(e - s) / np.float32(steps - 1)))
        fi, fb = i.astype(np.float32).astype(np.float64), back.astype(np.float32).astype(np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            return np.where(first, float(s) + step * fi, float(e) - step * fb).astype(np.float32)
    s, e = float(start), float(end)
    step = (e - s) / (steps - 1)
    with np.errstate(over="ignore", invalid="ignore"):
        vals = np.where(first, _fma(np.float64(step), i.astype(np.float64), s),
                        _fma(np.float64(-step), back.astype(np.float64), e))
    if dtype.is_floating_point:
        return vals
    return np.trunc(vals)


def _linspace_bound(v, name):
    """A bound of linspace: a number, or a 0-d tensor (torch's Tensor overloads)."""
    if isinstance(v, Tensor) and v.dim() != 0:
        return v
    return _number(v, "linspace")


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False, out=None):
    """torch.linspace: ``steps`` values from start to end (numbers or 0-d tensors). The bounds are
    converted to the result's dtype first, with torch's overflow check (no silent wrap of an
    out-of-range bound; a negative integer bound of an unsigned dtype wraps as in C, as torch's);
    the values are torch's CPU kernel's exactly (``_linspace_values``)."""
    if isinstance(start, Tensor) or isinstance(end, Tensor):
        sd, ed = (v.dim() if isinstance(v, Tensor) else 0 for v in (start, end))
        if sd or ed:
            raise RuntimeError(f"linspace only supports 0-dimensional start and end tensors, but got start with "
                               f"{sd} dimension(s) and end with {ed} dimension(s).")
    if isinstance(steps, Tensor):
        steps = int(steps.item())
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
        raise TypeError(f"linspace(): argument 'steps' (position 3) must be int, not {type(steps).__name__}")
    start, end = _number(start, "linspace"), _number(end, "linspace")
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):     # torch's arg parser
        raise TypeError(f"linspace() received an invalid combination of arguments - got ({type(start).__name__}, "
                        f"{type(end).__name__}, {type(steps).__name__}), but expected one of:\n"
                        " * (Tensor start, Tensor end, int steps, *, ...)\n * (Number start, Number end, int steps, *, ...)")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dtype = _dtype_or_default(dtype)
    device = as_device(device)
    if dtype is _dt.bool_:
        raise NotImplementedError(f"\"linspace_{device.type}\" not implemented for 'Bool'")
    _unsigned.refuse("linspace_cpu", dtype, device)
    t = _empty((steps,), dtype, device)
    if steps == 0:
        return _finish(t, requires_grad)
    # torch fills one step with start alone (fill_: a float type takes an out-of-range start as inf)
    bounds = ((start,) if not dtype.is_floating_point else ()) if steps == 1 else (start, end)
    for v in bounds:
        _copy.check_scalar_fits(v, dtype)
    if not dtype.is_floating_point:       # the bounds as the dtype holds them (C's conversion)
        start, end = (int(np.array(v).astype(dtype.numpy_dtype)) for v in (start, end if steps > 1 else start))
    with np.errstate(invalid="ignore", over="ignore"):
        arr = np.array([start]) if steps == 1 else _linspace_values(start, end, steps, dtype)
        t._storage.copy_from_host(0, np.asarray(arr).astype(dtype.numpy_dtype))
    return _finish(t, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False, out=None):
    m = n if m is None else m
    if n < 0 or m < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {min(n, m)}")
    t = zeros(n, m, dtype=dtype, device=device)
    _unsigned.refuse("eye", t.dtype)
    k = min(n, m)
    if k:
        # the diagonal is a strided view with stride m + 1: one fill launch
        diag = Tensor._make(t._storage, (k,), (m + 1,), 0, t.dtype, t._version_counter)
        _copy.fill_into(diag, 1)
    return _finish(t, requires_grad)


# --------------------------------------------------------------------------- random
@_tracing.random_op("rand")
def rand(*args, size=None, dtype=None, device=None, requires_grad=False, generator=None, out=None):
    t = empty(*_sizes("rand", args, size), dtype=dtype, device=device)
    _generators.uniform_(t, 0.0, 1.0, generator=generator)
    return _finish(t, requires_grad)


@_tracing.random_op("randint")
def randint(*args, size=None, dtype=None, device=None, requires_grad=False, generator=None, out=None):
    """torch.randint(high, size) / randint(low, high, size): integers uniform in [low, high),
    int64 unless ``dtype`` says otherwise."""
    if size is not None:
        args = args + (size,)
    if len(args) == 2:
        low, (high, size) = 0, args
    elif len(args) == 3:
        low, high, size = args
    else:
        raise TypeError("randint() takes (high, size) or (low, high, size)")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    t = empty(*size, dtype=dtype or _dt.int64, device=device)
    _generators.random_(t, low, high, generator=generator)
    return _finish(t, requires_grad)


@_tracing.random_op("randint_like")
def randint_like(x, low=0, high=None, *, dtype=None, device=None, requires_grad=False, generator=None,
                 memory_format=None):
    if high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    t = _empty_like(x, dtype, device, memory_format, "randint_like")
    _generators.random_(t, low, high, generator=generator)
    return _finish(t, requires_grad)


@_tracing.random_op("randn")
def randn(*args, size=None, dtype=None, device=None, requires_grad=False, generator=None, out=None):
    t = empty(*_sizes("randn", args, size), dtype=dtype, device=device)
    _generators.normal_(t, 0.0, 1.0, generator=generator)
    return _finish(t, requires_grad)
