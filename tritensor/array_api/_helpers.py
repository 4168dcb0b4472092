"""What every adapter of the namespace needs: arrays from Python scalars, the standard's promotion
of two operands, and the standard's ``axis`` argument as tritensor's ``dim``."""
from __future__ import annotations

import builtins
import operator

from .. import ops as _ops  # noqa: F401  (the generated namespace below)
from ..tensor import Tensor
from . import _dtypes

_SCALARS = (builtins.bool, builtins.int, builtins.float)


def ensure_array(x, name="x"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} must be an array, got {type(x).__name__}")
    return x


def _scalar_array(value, like):
    import tritensor as tt
    dtype = _dtypes.scalar_result(like.dtype, value)
    if dtype._kind == 1 and not isinstance(value, builtins.bool):
        info = tt.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise OverflowError(f"Python integer {value} out of bounds for {dtype}")
    return tt.tensor(value, dtype=dtype, device=like.device)


_INT_RANGES = {}


def scalar_fits(value, dtype):
    """Whether a Python scalar ``value`` takes ``dtype`` by itself: its kind is no higher than the
    dtype's, and an integer is in the dtype's range (then torch's scalar rule is the standard's)."""
    kind = type(value)
    if kind is builtins.float:
        return dtype._kind >= 2
    if kind is builtins.bool:
        return True
    if kind is not builtins.int or dtype._kind < 1:
        return False
    if dtype._kind > 1:
        return True
    bounds = _INT_RANGES.get(dtype)
    if bounds is None:
        import tritensor as tt
        info = tt.iinfo(dtype)
        bounds = _INT_RANGES[dtype] = (builtins.max(info.min, -2**63), builtins.min(info.max, 2**63 - 1))
    return bounds[0] <= value <= bounds[1]


def promote_pair(x1, x2):
    """Both operands as arrays of their standard result dtype (Python scalars take the array's
    dtype; a 0-d array ranks as any other array, unlike in torch)."""
    if isinstance(x1, Tensor):
        if isinstance(x2, Tensor):
            if x1.dtype is not x2.dtype:
                dtype = _dtypes.promote(x1.dtype, x2.dtype)
                x1, x2 = x1.to(dtype), x2.to(dtype)
            return x1, x2
        if isinstance(x2, _SCALARS):
            x2 = _scalar_array(x2, x1)
            return (x1.to(x2.dtype), x2) if x2.dtype is not x1.dtype else (x1, x2)
        raise TypeError(f"unsupported operand type {type(x2).__name__}")
    if isinstance(x2, Tensor) and isinstance(x1, _SCALARS):
        x1 = _scalar_array(x1, x2)
        return (x1, x2.to(x1.dtype)) if x1.dtype is not x2.dtype else (x1, x2)
    raise TypeError(f"expected at least one array operand, got {type(x1).__name__} and {type(x2).__name__}")


def dims(axis, ndim):
    """The standard's ``axis`` (None, an int, a tuple) as a normalized tuple of dims."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, tuple):
        axes = axis
    else:
        axes = (operator.index(axis),)
    out = []
    for a in axes:
        a = operator.index(a)
        if not -builtins.max(ndim, 1) <= a < builtins.max(ndim, 1):
            raise IndexError(f"axis {a} is out of bounds for array of dimension {ndim}")
        a = a % builtins.max(ndim, 1)
        if a in out:
            raise ValueError(f"repeated axis {a}")
        out.append(a)
    return tuple(out)
