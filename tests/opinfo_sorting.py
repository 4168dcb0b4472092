"""OpInfo records of the sorting family (tritensor/ops/sorting.py), checked by tests/test_ops_table.py
(cpu, emulated cuda) and tests/test_op_gradients.py.

The references here are independent of backends/numpy_sort.py: Python's own ``sorted`` on each
row, with torch's order written out (NaN largest, -0.0 == 0.0, ties by position), and plain
NumPy for the rest. Values come from a small set (ties everywhere, NaN and signed zeros in the
floats) so that the stable order is what is checked.

Emulated launches cost: the rows that cross the interpreter's 64-element tile (and so take the
merge passes) appear once per op and dtype named (a 64-bit key among them), on a (150, 2) input
sorted along its strided dim 0 (2 rows of 150: 64-element tiles, two merge passes, strided reads).
"""
from __future__ import annotations

import math

import numpy as np

import tritensor as tt
from opinfo import GRAD_CASES, SampleInput, _randn, record, rng_for

SORT_DTYPES = (tt.bool, tt.uint8, tt.int8, tt.int16, tt.int32, tt.int64, tt.float16, tt.bfloat16,
               tt.float32, tt.float64)
TOPK_DTYPES = tuple(d for d in SORT_DTYPES if d is not tt.bool)     # torch's topk refuses bool


def tied_values(shape, dtype, rng):
    """Values with many ties: small integers; floats add NaN, -0.0, +-inf and halves."""
    if dtype is tt.bool:
        return rng.integers(0, 2, size=shape).astype(bool)
    if not dtype.is_floating_point:
        lo = 0 if dtype is tt.uint8 else -4
        return rng.integers(lo, lo + 8, size=shape)
    pool = np.array([-2.5, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0, math.nan, math.inf, -math.inf])
    return rng.choice(pool, size=shape)


def tied(dtype, device, rng):
    def make(shape):
        return tt.tensor(tied_values(shape, dtype, rng), dtype=dtype, device=device)
    return make


# --------------------------------------------------------------------------- the oracle
def _order_key(v, descending):
    """torch's order of one value as a Python sort key (NaN largest; -0.0 == 0.0 already)."""
    v = float(v) if not isinstance(v, (bool, np.bool_)) else float(bool(v))
    if math.isnan(v):
        return (1, 0.0) if not descending else (0, 0.0)
    return (0, v) if not descending else (1, -v)


def row_order(row, descending):
    """The stable order of one row: by torch's value order, ties by position."""
    return sorted(range(len(row)), key=lambda i: (_order_key(row[i], descending), i))


def sorted_reference(x, dim=-1, descending=False, k=None):
    """(values, indices) of x sorted along ``dim``, row by row with Python's sorted."""
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    moved = np.moveaxis(x, dim, -1)
    n = moved.shape[-1]
    k = n if k is None else k
    idx = np.zeros(moved.shape[:-1] + (k,), np.int64)
    for pos in np.ndindex(moved.shape[:-1]):
        idx[pos] = row_order(moved[pos], descending)[:k]
    values = np.take_along_axis(moved, idx, -1)
    return np.moveaxis(values, -1, dim), np.moveaxis(idx, -1, dim)


# --------------------------------------------------------------------------- samples
def _sort_samples(name, long_kwargs, short_kwargs):
    """Short rows in awkward layouts (every dtype on cpu; on the emulated cuda the layouts in
    float32, one sample in the other dtypes: their keys), and the long rows of ``long_kwargs``:
    {dtype: kwargs}."""
    def samples(device, dtype):
        make = tied(dtype, device, rng_for(name, dtype))
        every_layout = device == "cpu" or dtype is tt.float32
        for desc, x, kw in (
                ("2d-dim1", make((5, 37)), short_kwargs[0]),
                ("transposed-dim0", make((9, 13)).t(), short_kwargs[1]),
                ("sliced", make((10, 31))[1::3, ::2], short_kwargs[2]),
                ("size1", make((1, 5, 1)), {"dim": 1}),
                ("0d", make(()), {"dim": 0}),
                ("empty", make((0, 3)), {"dim": 0}))[:None if every_layout else 1]:
            if name == "topk" and "k" not in kw:
                kw = dict(kw, k=min(1, x.shape[kw["dim"]] if x.dim() else 1))
            yield SampleInput((x,), dict(kw), desc=desc)
        if dtype in long_kwargs:      # crosses the interpreter's tiles: the merge passes
            kw = long_kwargs[dtype]
            yield SampleInput((make((150, 2)),), dict(kw), desc=f"long-strided-{kw}")
    return samples


record("sort", lambda x, **kw: tt.sort(x, **kw), SORT_DTYPES,
       _sort_samples("sort", {tt.float32: {"dim": 0}, tt.int64: {"dim": 0, "descending": True}},
                     ({"dim": 1}, {"dim": 0, "descending": True}, {"dim": -1, "descending": True})),
       lambda x, dim=-1, descending=False: sorted_reference(x, dim, descending))
record("argsort", lambda x, **kw: tt.argsort(x, **kw), SORT_DTYPES,
       _sort_samples("argsort", {tt.float16: {"dim": 0, "descending": True}},
                     ({"dim": 1, "descending": True}, {"dim": 0}, {"dim": -1, "stable": True})),
       lambda x, dim=-1, descending=False, stable=False: sorted_reference(x, dim, descending)[1])
record("msort", tt.msort, (tt.float32, tt.int64, tt.bool), lambda device, dtype: (
    SampleInput((tied(dtype, device, rng_for("msort", dtype, d))(shape),), desc=d)
    for d, shape in (("2d", (7, 3)), ("0d", ()), ("empty", (0, 2)))),
       lambda x: sorted_reference(x, 0)[0])
record("topk", lambda x, **kw: tt.topk(x, **kw), TOPK_DTYPES,
       _sort_samples("topk", {tt.float32: {"k": 7, "dim": 0}, tt.int32: {"k": 100, "dim": 0, "largest": False}},
                     ({"k": 4, "dim": 1}, {"k": 9, "dim": 0, "largest": False}, {"k": 5, "dim": -1})),
       lambda x, k, dim=-1, largest=True, sorted=True: sorted_reference(x, dim, largest, k))


GRAD_CASES.update({
    # a permutation of the input: gradient 1 at each position, moved; twice differentiable
    "sort": lambda d: (lambda x: x.sort(descending=True)[0] * tt.arange(3, device=d), (_randn((3,), d),), {}),
    "topk": lambda d: (lambda x: x.topk(2, 0, largest=False)[0], (_randn((3,), d),), {}),
})
