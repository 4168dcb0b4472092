"""The standard's statistical and utility reductions (axis/keepdims/dtype/correction), over
tritensor's reductions. ``axis=()`` reduces nothing, as the standard says (torch reads an empty
dim list as "every dim"): the adapters then reduce over a new axis of length one."""
from __future__ import annotations

import tritensor as tt

from . import _dtypes
from ._helpers import dims, ensure_array


def _axes(x, axis):
    """(x, dims): an empty tuple of axes becomes a trailing axis of length one."""
    if isinstance(axis, tuple) and len(axis) == 0:
        return x.unsqueeze(-1), (x.ndim,)
    if x.ndim == 0:
        if axis not in (None, 0, -1):
            dims(axis, 0)
        return x.unsqueeze(-1), (0,)
    return x, dims(axis, x.ndim)


def _finish(out, x, axis, keepdims):
    """Shape fix-up for the new axis _axes may have added."""
    if keepdims and ((isinstance(axis, tuple) and len(axis) == 0) or x.ndim == 0):
        out = out.squeeze(-1)
    return out


def _sum_dtype(x, dtype):
    """The standard's accumulator: integers to the default (unsigned: the widest unsigned) integer."""
    if dtype is not None:
        return dtype
    if x.dtype is tt.bool:
        return tt.int64
    if x.dtype._kind == 1:
        widest_unsigned = _dtypes.unsigned[-1]
        if x.dtype in _dtypes.unsigned and widest_unsigned.itemsize == 8:
            return widest_unsigned
        return tt.int64
    return x.dtype


def _reduction(fn, name, doc, with_dtype=False):
    if with_dtype:
        def f(x, /, *, axis=None, dtype=None, keepdims=False):
            x0 = ensure_array(x)
            y, d = _axes(x0, axis)
            return _finish(fn(y, dim=d, keepdim=keepdims, dtype=_sum_dtype(x0, dtype)), x0, axis, keepdims)
    else:
        def f(x, /, *, axis=None, keepdims=False):
            x0 = ensure_array(x)
            y, d = _axes(x0, axis)
            return _finish(fn(y, d, keepdim=keepdims), x0, axis, keepdims)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


def _sum(y, dim, keepdim, dtype):
    return tt.sum(y, dim=dim, keepdim=keepdim, dtype=dtype)


def _prod(y, dim, keepdim, dtype):
    # tt.prod reduces one dim at a time, as torch.prod; its dtype= keeps a narrow integer accumulator
    out = y
    for d in sorted(dim, reverse=True):
        out = tt.prod(out, dim=d, keepdim=keepdim, dtype=dtype)
    return out


sum = _reduction(_sum, "sum", "The sum over ``axis`` (integers accumulate in the default integer dtype).", True)
prod = _reduction(_prod, "prod", "The product over ``axis`` (integers in the default integer dtype).", True)
max = _reduction(lambda y, d, keepdim: tt.amax(y, d, keepdim), "max", "The maximum over ``axis`` (NaN propagates).")
min = _reduction(lambda y, d, keepdim: tt.amin(y, d, keepdim), "min", "The minimum over ``axis`` (NaN propagates).")
mean = _reduction(lambda y, d, keepdim: tt.mean(y, d, keepdim), "mean", "The arithmetic mean over ``axis``.")
all = _reduction(lambda y, d, keepdim: tt.all(y, d, keepdim).to(tt.bool), "all", "Whether every element over ``axis`` is true (a bool array: torch gives uint8 for uint8).")
any = _reduction(lambda y, d, keepdim: tt.any(y, d, keepdim).to(tt.bool), "any", "Whether any element over ``axis`` is true.")


def _moment(fn, name, doc):
    def f(x, /, *, axis=None, correction=0.0, keepdims=False):
        x0 = ensure_array(x)
        y, d = _axes(x0, axis)
        return _finish(fn(y, d, correction=correction, keepdim=keepdims), x0, axis, keepdims)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


var = _moment(tt.var, "var", "The variance over ``axis`` with ``correction`` degrees of freedom removed.")
std = _moment(tt.std, "std", "The standard deviation over ``axis`` with ``correction`` degrees of freedom removed.")


def count_nonzero(x, /, *, axis=None, keepdims=False):
    """How many elements over ``axis`` are not zero (an array of the default integer dtype)."""
    x0 = ensure_array(x)
    y, d = _axes(x0, axis)
    return _finish(tt.sum(y != 0, dim=d, keepdim=keepdims, dtype=tt.int64), x0, axis, keepdims)


def _cumulative(fn, name, initial):
    def f(x, /, *, axis=None, dtype=None, include_initial=False):
        x = ensure_array(x)
        if axis is None:
            if x.ndim > 1:
                raise ValueError(f"{name}() needs axis for an array of more than one dimension")
            axis = 0
        if x.ndim == 0:
            raise ValueError(f"{name}() needs an array of at least one dimension")
        (axis,) = dims(axis, x.ndim)
        dtype = _sum_dtype(x, dtype)
        out = fn(x, axis, dtype=dtype)
        if include_initial:
            shape = list(x.shape)
            shape[axis] = 1
            out = tt.cat([tt.full(shape, initial, dtype=dtype, device=x.device), out], dim=axis)
        return out
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"The running {'sum' if initial == 0 else 'product'} along ``axis``; ``include_initial`` "
                 f"puts the empty one ({initial}) first.")
    return f


cumulative_sum = _cumulative(tt.cumsum, "cumulative_sum", 0)
cumulative_prod = _cumulative(tt.cumprod, "cumulative_prod", 1)


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    """The n-th forward difference along ``axis`` (``prepend``/``append`` joined first)."""
    x = ensure_array(x)
    if n < 0:
        raise ValueError(f"diff() order n must be non-negative, got {n}")
    return tt.diff(x, n=n, dim=axis, prepend=prepend, append=append)
