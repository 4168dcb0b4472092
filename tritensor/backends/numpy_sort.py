"""NumPy references of the sorting family (ops/sorting.py): the cpu device runs them and the tests
check the kernels (kernels/sort.py) against them.

torch's order: stable (equal values keep their order, ascending or descending), NaN the largest
value (last ascending, first descending), -0.0 equal to 0.0. Arrays in (in the op's compute
dtype, which is the input's own), arrays out; float16/bfloat16 are compared as float32 (exact;
NumPy cannot sort ml_dtypes' bfloat16).
"""
from __future__ import annotations

import numpy as np


def _keys(x):
    """Values NumPy compares as torch does (NaN sorts last in NumPy's own sort too)."""
    half = x.dtype.itemsize == 2 and x.dtype.kind not in "iu"     # float16, bfloat16
    return x.astype(np.float32) if half else x


def stable_order(x, axis, descending=False):
    """The positions that sort ``x`` along ``axis`` stably (torch's order, see above)."""
    keys = _keys(x)
    if not descending:
        return np.argsort(keys, axis=axis, kind="stable")
    # descending and stable: the ascending order of the reversed row, reversed, counted back
    n = keys.shape[axis]
    flipped = np.argsort(np.flip(keys, axis), axis=axis, kind="stable")
    return (n - 1) - np.flip(flipped, axis)


def sort(x, dim, descending, k=None, **_):
    """(values, indices) of x sorted along ``dim``; the first ``k`` of each row when given (topk)."""
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    order = stable_order(x, dim, descending)
    if k is not None:
        order = np.take(order, np.arange(k), axis=dim)
    return np.take_along_axis(x, order, dim), order.astype(np.int64)


def argsort(x, dim, descending, **_):
    if x.ndim == 0:
        return np.zeros((), np.int64)
    return stable_order(x, dim, descending).astype(np.int64)


def topk(x, k, dim, largest, **_):
    """(values, indices) of the k largest (smallest) along ``dim``, in sorted order."""
    return sort(x, dim, largest, k)
