"""The standard's searching, sorting and set functions over tritensor's argmax/sort/unique/searchsorted."""
from __future__ import annotations

from collections import namedtuple

import tritensor as tt

from ._helpers import dims, ensure_array, promote_pair


def argmax(x, /, *, axis=None, keepdims=False):
    """The index of the first maximum over ``axis`` (of the flattened array when None)."""
    x = ensure_array(x)
    if axis is not None:
        (axis,) = dims(axis, x.ndim) if x.ndim else (axis,)
    return tt.argmax(x, dim=axis, keepdim=keepdims)


def argmin(x, /, *, axis=None, keepdims=False):
    """The index of the first minimum over ``axis`` (of the flattened array when None)."""
    x = ensure_array(x)
    if axis is not None:
        (axis,) = dims(axis, x.ndim) if x.ndim else (axis,)
    return tt.argmin(x, dim=axis, keepdim=keepdims)


def nonzero(x, /):
    """A tuple of index arrays, one per dimension, of the non-zero elements (row-major order)."""
    x = ensure_array(x)
    if x.ndim == 0:
        raise ValueError("nonzero() needs an array of at least one dimension (the standard's rule for 0-d)")
    return tuple(tt.nonzero(x, as_tuple=True))


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    """Where the elements of x2 would go in the sorted 1-D x1 (``side``: the first or the last place)."""
    x1, x2 = ensure_array(x1, "x1"), ensure_array(x2, "x2")
    if x1.ndim != 1:
        raise ValueError(f"searchsorted() needs a 1-D x1, got {x1.ndim} dimensions")
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right', got {side!r}")
    x1, x2 = promote_pair(x1, x2)
    return tt.searchsorted(x1, x2, side=side, sorter=sorter)


def where(condition, x1, x2, /):
    """x1 where condition is true, else x2 (scalars take the other operand's dtype)."""
    condition = ensure_array(condition, "condition")
    if not isinstance(x1, tt.Tensor) and not isinstance(x2, tt.Tensor):
        raise TypeError("where() needs at least one of x1, x2 to be an array")
    return tt.where(condition, *promote_pair(x1, x2))


def sort(x, /, *, axis=-1, descending=False, stable=True):
    """x sorted along ``axis`` (NaNs last; ``stable`` keeps equal elements in order)."""
    return tt.sort(ensure_array(x), dim=axis, descending=descending, stable=stable).values


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    """The indices that sort x along ``axis`` (stable by default, as the standard says)."""
    return tt.argsort(ensure_array(x), dim=axis, descending=descending, stable=stable)


UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def unique_values(x, /):
    """The distinct elements of x, flattened (each NaN is distinct from every other)."""
    return tt.unique(ensure_array(x).reshape(-1))


def unique_counts(x, /):
    """The distinct elements of x and how often each occurs."""
    values, counts = tt.unique(ensure_array(x).reshape(-1), return_counts=True)
    return UniqueCountsResult(values, counts)


def unique_inverse(x, /):
    """The distinct elements of x and, for each element of x, the index of its value (x's shape)."""
    x = ensure_array(x)
    values, inverse = tt.unique(x.reshape(-1), return_inverse=True)
    return UniqueInverseResult(values, inverse.reshape(x.shape))


def unique_all(x, /):
    """values, the index of each value's first occurrence, the inverse indices (x's shape), the counts."""
    x = ensure_array(x)
    flat = x.reshape(-1)
    values, inverse, counts = tt.unique(flat, return_inverse=True, return_counts=True)
    positions = tt.arange(flat.shape[0], device=x.device)
    first = tt.full((values.shape[0],), flat.shape[0], dtype=tt.int64, device=x.device)
    first = first.scatter_reduce(0, inverse, positions, "amin", include_self=True)
    return UniqueAllResult(values, first, inverse.reshape(x.shape), counts)
