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
    """The positions that sort ``x`` along ``axis`` stably (torch's order, see above). Keys of up
    to 32 bits are packed with their position into one int64 (key << 32 | position), which
    NumPy's fast unstable sort orders as the stable sort would (no two are equal): 2x (one long
    row) to 5x (many short rows) faster than a stable argsort; 64-bit keys take the argsort."""
    keys = _keys(x)
    n = keys.shape[axis] if keys.ndim else 1
    if keys.ndim and keys.dtype.itemsize <= 4 and n < 2 ** 31:
        packed = ordered_keys(keys).astype(np.int64)
        if keys.dtype == np.uint32:     # keys past 2**31 would reach the sign bit once shifted
            packed -= 2 ** 31
        if descending:
            packed = ~packed
        shape = [1] * keys.ndim
        shape[axis] = n
        packed <<= 32
        packed |= np.arange(n, dtype=np.int64).reshape(shape)
        packed.sort(axis)
        packed &= 0xFFFFFFFF
        return packed
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


def ordered_keys(x):
    """Integers whose order is torch's order of ``x`` (kernels/sort.py's order_key): integers as
    themselves, floats by their bits with the magnitude of negative ones flipped, -0.0 as 0.0,
    every NaN the largest."""
    if x.dtype.kind == "b":
        return x.astype(np.int8)
    if x.dtype.kind in "iu":
        return x
    f = _keys(x)
    ints = np.int64 if f.dtype.itemsize == 8 else np.int32
    bits = np.ascontiguousarray(f).view(ints)
    top = np.iinfo(ints).max
    keys = bits ^ ((bits >> (8 * f.dtype.itemsize - 1)) & ints(top))     # negatives: magnitude flipped
    keys[f == 0] = 0
    keys[np.isnan(f)] = top
    return keys


def _candidates(row, k, largest):
    """Positions of a superset of the k largest (smallest) of one long NaN-free row, in index
    order, or None: every element at least as large as the 4k-th largest of a strided sample of
    256k elements (about 4k * n / 256k of them; each of the k is among them whenever the sample
    holds 4k values at least as large as the k-th, checked by the count)."""
    n = row.shape[0]
    sample = row[::max(n // (256 * k), 1)]
    r = min(4 * k, sample.shape[0])
    if largest:
        threshold = np.partition(sample, sample.shape[0] - r)[sample.shape[0] - r]
        at = np.flatnonzero(row >= threshold)
    else:
        threshold = np.partition(sample, r - 1)[r - 1]
        at = np.flatnonzero(row <= threshold)
    return at if at.shape[0] >= k else None


def topk(x, k, dim, largest, **_):
    """(values, indices) of the k largest (smallest) along ``dim``, in sorted order, ties in index
    order. A selection, not a sort, when k is small (_select); a few long NaN-free rows are first
    narrowed to the candidates a strided sample bounds (_candidates)."""
    n = x.shape[dim] if x.ndim else 1
    if x.ndim == 0 or 4 * k >= n:
        return sort(x, dim, largest, k)
    rows = np.moveaxis(x, dim, -1)
    lead = rows.shape[:-1]
    rows = rows.reshape(-1, n)
    pos = None
    if rows.shape[0] <= 8 and n >= 256 * k and not (rows.dtype.kind == "f" and np.isnan(_keys(rows)).any()):
        picks = [_candidates(_keys(row), k, largest) for row in rows]
        if all(p is not None and 4 * p.shape[0] < n for p in picks):
            pos = np.stack([p[_select(row[p][None], k, largest)[0]] for row, p in zip(rows, picks)])
    if pos is None:
        pos = _select(rows, k, largest)
    values = np.take_along_axis(rows, pos, -1)
    shape = lead + (k,)
    return (np.moveaxis(values.reshape(shape), -1, dim), np.moveaxis(pos.reshape(shape), -1, dim).astype(np.int64))


def _select(rows, k, largest):
    """The positions of each row's k largest (smallest), in torch's stable order: the k-th key by
    np.partition, the keys before it and the first of the keys equal to it (in index order),
    then those k sorted."""
    keys = ordered_keys(rows)
    if largest:
        keys = ~keys                                   # the reversed order (every integer type)
    kth = np.partition(keys, k - 1, axis=-1)[:, k - 1:k]
    take = keys < kth
    equal = keys == kth
    need = k - take.sum(-1, keepdims=True)
    if (equal.sum(-1, keepdims=True) == need).all():
        take |= equal
    else:                                              # more ties than places: the first ones
        take |= equal & (np.cumsum(equal, -1) <= need)
    pos = np.nonzero(take)[1].reshape(-1, k)           # per row, in index order
    return np.take_along_axis(pos, np.argsort(np.take_along_axis(keys, pos, -1), -1, kind="stable"), -1)


# ------------------------------------------------------------------ selections along one dim
def _rows(x, dim):
    """x with ``dim`` moved last (a 0-d x: one row of one element)."""
    return np.moveaxis(x.reshape(1) if x.ndim == 0 else x, 0 if x.ndim == 0 else dim, -1)


def _pick(x, dim, keepdim, positions, order):
    """(values, indices) at ``positions`` (one per row) of each row's stable order, shaped as a
    reduction over ``dim``."""
    rows = _rows(x, dim)
    at = np.expand_dims(positions, -1)
    idx = np.take_along_axis(order, at, -1)
    values = np.take_along_axis(rows, idx, -1)
    if x.ndim == 0:
        return values.reshape(()), idx.reshape(())
    if keepdim:
        return np.moveaxis(values, -1, dim), np.moveaxis(idx, -1, dim).astype(np.int64)
    return values[..., 0], idx[..., 0].astype(np.int64)


def kthvalue(x, k, dim, keepdim, **_):
    """The k-th smallest along ``dim`` and its index (ties: the stable order's)."""
    order = stable_order(_rows(x, dim), -1)
    return _pick(x, dim, keepdim, np.full(order.shape[:-1], k - 1), order)


def _nan_count(rows):
    return np.isnan(_keys(rows)).sum(-1) if rows.dtype.kind not in "biu" else np.zeros(rows.shape[:-1], np.int64)


def median_position(n, nan_count, ignore_nan):
    """torch's median position in a row's stable order: the lower of the two middle values; with
    NaN, median() takes the first NaN (NaN sorts last) and nanmedian() the median of the rest
    (position 0 when every value is NaN)."""
    if ignore_nan:
        return np.maximum((n - nan_count - 1) // 2, 0)
    return np.where(nan_count > 0, n - nan_count, (n - 1) // 2)


def median(x, dim, keepdim, ignore_nan, **_):
    rows = _rows(x, dim)
    order = stable_order(rows, -1)
    return _pick(x, dim, keepdim, median_position(rows.shape[-1], _nan_count(rows), ignore_nan), order)


def median_all(x, ignore_nan, **_):
    """The median of every element (0-d); NaN when there are none."""
    flat = x.reshape(-1)
    if flat.size == 0:
        return np.array(np.nan)
    return median(flat, 0, False, ignore_nan)[0]


def mode(x, dim, keepdim, **_):
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and the index
    of its last occurrence, as torch's cpu kernel gives them (each NaN counts once: NaN != NaN)."""
    rows = _rows(x, dim)
    order = stable_order(rows, -1)
    s = np.take_along_axis(rows, order, -1)
    start = np.ones(s.shape, bool)
    start[..., 1:] = s[..., 1:] != s[..., :-1]
    run = np.cumsum(start, -1) - 1                                   # each element's run
    flat_run = run.reshape(-1, run.shape[-1])
    offsets = np.arange(flat_run.shape[0])[:, None] * run.shape[-1]
    counts = np.bincount((flat_run + offsets).reshape(-1), minlength=flat_run.size)
    freq = counts[(flat_run + offsets)].reshape(run.shape)            # the length of its run
    most = freq.max(-1)
    first = np.argmax(freq == most[..., None], -1)                   # the smallest such value
    values = np.take_along_axis(s, first[..., None], -1)
    idx = np.take_along_axis(order, (first + most - 1)[..., None], -1)     # the run's last position
    if x.ndim == 0:
        return values.reshape(()), idx.reshape(()).astype(np.int64)
    if keepdim:
        return np.moveaxis(values, -1, dim), np.moveaxis(idx, -1, dim).astype(np.int64)
    return values[..., 0], idx[..., 0].astype(np.int64)


# ------------------------------------------------------------------ searchsorted
def searchsorted(boundaries, values, right=False, sorter=None, out_int32=False, **_):
    """torch's binary search: boundaries [rows, N] (one row for every value, or row i // the
    values' last dim), read through ``sorter`` when given; the lower bound (first b >= v) or the
    upper bound (first b > v) with torch's NaN behaviour (comparisons with NaN are false: a NaN
    value passes every boundary, a NaN boundary is never >= a value)."""
    rows, n = boundaries.shape
    v = np.asarray(values)
    flat = v.reshape(-1)
    row = np.arange(flat.size) // max(v.shape[-1] if v.ndim else 1, 1) if rows > 1 else np.zeros(flat.size, np.int64)
    lo = np.zeros(flat.size, np.int64)
    hi = np.full(flat.size, n, np.int64)
    for _ in range(n.bit_length()):
        active = lo < hi
        mid = (lo + hi) // 2
        at = mid if sorter is None else sorter[row, np.minimum(mid, n - 1)]
        b = boundaries[row, np.minimum(at, n - 1)]
        right_of = ~(b > flat) if right else ~(b >= flat)
        lo = np.where(active & right_of, mid + 1, lo)
        hi = np.where(active & ~right_of, mid, hi)
    return lo.reshape(v.shape).astype(np.int32 if out_int32 else np.int64)


def bin_count(positions, size, **_):
    """How often each of ``size`` bins occurs among ``positions`` (negative ones not counted)."""
    return np.bincount(positions[positions >= 0], minlength=size).astype(np.int64)
