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
from opinfo import GRAD_CASES, SampleInput, _randn, cases, record, rng_for, table_op

SORT_DTYPES = (tt.bool, tt.uint8, tt.int8, tt.int16, tt.int32, tt.int64, tt.float16, tt.bfloat16,
               tt.float32, tt.float64)
TOPK_DTYPES = tuple(d for d in SORT_DTYPES if d is not tt.bool)     # torch's topk refuses bool


def tied_values(shape, dtype, rng, infinite=True):
    """Values with many ties: small integers; floats add NaN, -0.0, halves and +-inf (unless not
    ``infinite``)."""
    if dtype is tt.bool:
        return rng.integers(0, 2, size=shape).astype(bool)
    if not dtype.is_floating_point:
        lo = 0 if dtype is tt.uint8 else -4
        return rng.integers(lo, lo + 8, size=shape)
    pool = [-2.5, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0, math.nan] + ([math.inf, -math.inf] if infinite else [])
    return rng.choice(np.array(pool), size=shape)


def tied(dtype, device, rng, infinite=True):
    def make(shape):
        return tt.tensor(tied_values(shape, dtype, rng, infinite), dtype=dtype, device=device)
    return make


# --------------------------------------------------------------------------- the oracle
def _order_key(v, descending):
    """torch's order of one value as a Python sort key (NaN largest; -0.0 == 0.0 already)."""
    if isinstance(v, np.integer):     # exact (uint64 past 2**53 would collapse as a float)
        return (0, int(v)) if not descending else (1, -int(v))
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


# uint32/uint64 (torch sorts them; their negative samples wrap past 2**31 / 2**63: the unsigned keys)
record("sort", lambda x, **kw: tt.sort(x, **kw), SORT_DTYPES + (tt.uint32, tt.uint64),
       _sort_samples("sort", {tt.float32: {"dim": 0}, tt.int64: {"dim": 0, "descending": True},
                              tt.uint64: {"dim": 0}},
                     ({"dim": 1}, {"dim": 0, "descending": True}, {"dim": -1, "descending": True})),
       lambda x, dim=-1, descending=False: sorted_reference(x, dim, descending))
record("argsort", lambda x, **kw: tt.argsort(x, **kw), SORT_DTYPES + (tt.uint32,),
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
       lambda x, k, dim=-1, largest=True, sorted=True: sorted_reference(x, dim, largest, k),
       gradgradcheck=False)     # the sort's backward (_select_backward): its second derivative is checked there


GRAD_CASES.update({
    # a permutation of the input: gradient 1 at each position, moved; twice differentiable
    "sort": lambda d: (lambda x: x.sort(descending=True)[0] * tt.arange(3, device=d), (_randn((3,), d),), {}),
    "topk": lambda d: (lambda x: x.topk(2, 0, largest=False)[0], (_randn((3,), d),), {}),
})


# --------------------------------------------------------------------------- selections
# The keys of every dtype are the sort's (checked by its records); a selection's cuda launcher is a
# dozen launches (~0.1-0.3 s emulated), so these records take a few dtypes. Their backward is the
# sort's (_select_backward: a scatter, linear in the gradient), whose second derivative the sort's
# case checks: these check the first.
SELECT_DTYPES = (tt.int64, tt.bfloat16, tt.float32)
SAME_BACKWARD_AS_SORT = {"gradgradcheck": False}


def _rows_of(x, dim):
    return np.moveaxis(x.reshape(1) if x.ndim == 0 else x, 0 if x.ndim == 0 else dim, -1)


def _reduced(x, dim, keepdim, pick):
    """(values, indices) with ``pick(row) -> index`` applied to each row along ``dim``."""
    rows = _rows_of(x, dim)
    idx = np.zeros(rows.shape[:-1], np.int64)
    for pos in np.ndindex(rows.shape[:-1]):
        idx[pos] = pick(list(rows[pos]))
    values = np.take_along_axis(rows, idx[..., None], -1)[..., 0]
    if keepdim and x.ndim:
        values, idx = np.expand_dims(values, dim), np.expand_dims(idx, dim)
    return values, idx


def _isnan(v):
    return isinstance(v, (float, np.floating)) and math.isnan(v)


def median_pick(row, ignore_nan=False):
    """torch's median index: the first NaN if any (median); else the lower middle of the stable
    order of the (non-NaN) values."""
    nans = [i for i, v in enumerate(row) if _isnan(v)]
    if nans and not ignore_nan:
        return nans[0]
    order = row_order(row, False)
    return order[max((len(row) - len(nans) - 1) // 2, 0)]


def mode_pick(row):
    """The smallest of the most frequent values (each NaN a value of its own), its last index."""
    counts = {}
    for i, v in enumerate(row):
        key = ("nan", i) if _isnan(v) else float(v)
        counts.setdefault(key, []).append(i)
    most = max(len(at) for at in counts.values())
    best = min((k for k, at in counts.items() if len(at) == most),
               key=lambda k: (1, k[1]) if isinstance(k, tuple) else (0, k))
    return counts[best][-1]


def _selection_samples(name, kwargs, extra=()):
    """Tied values: a 2-d row dim, a transposed one with keepdim, then 0-d and an empty row set
    (every dtype on cpu; on the emulated cuda the first two in float32, the first in the other
    dtypes: a 0-d input is a row of one and an empty one launches nothing, in every device's ops)."""
    def samples(device, dtype):
        make = tied(dtype, device, rng_for(name, dtype))
        cases = [("2d-dim1", make((5, 37)), dict(kwargs, dim=1)),
                 ("transposed-keepdim", make((9, 13)).t(), dict(kwargs, dim=0, keepdim=True))]
        if device == "cpu":
            cases += [("0d", make(()), dict(kwargs, dim=0, **({"k": 1} if "k" in kwargs else {}))),
                      ("empty", make((0, 3)), dict(kwargs, dim=1))]
        cases += [(d, build(make), kw) for d, build, kw in extra]
        for desc, x, kw in cases[:None if device == "cpu" or dtype is tt.float32 else 1]:
            yield SampleInput((x,), kw, desc=desc)
    return samples


record("kthvalue", lambda x, **kw: tt.kthvalue(x, **kw), SELECT_DTYPES, _selection_samples("kthvalue", {"k": 2}),
       lambda x, k, dim=-1, keepdim=False: _reduced(x, dim, keepdim, lambda row: row_order(row, False)[k - 1]),
       **SAME_BACKWARD_AS_SORT)
record("median", lambda x, **kw: tt.median(x, **kw), SELECT_DTYPES, _selection_samples("median", {}),
       lambda x, dim, keepdim=False: _reduced(x, dim, keepdim, median_pick), **SAME_BACKWARD_AS_SORT)
_ALL_NAN = ("all-nan-row", lambda make: tt.tensor([[math.nan] * 3, [1.0, math.nan, 2.0]], device=make(()).device), {"dim": 1})
record("nanmedian", lambda x, **kw: tt.nanmedian(x, **kw), (tt.float32, tt.float64),
       _selection_samples("nanmedian", {}, (_ALL_NAN,)),
       lambda x, dim, keepdim=False: _reduced(x, dim, keepdim, lambda row: median_pick(row, True)))
record("mode", lambda x, **kw: tt.mode(x, **kw), (tt.bool, tt.int32, tt.float32), _selection_samples("mode", {}),
       lambda x, dim, keepdim=False: _reduced(x, dim, keepdim, mode_pick), **SAME_BACKWARD_AS_SORT)


def _median_all_reference(x, ignore_nan=False):
    flat = list(x.reshape(-1))
    if not flat:
        return np.array(math.nan)
    return np.array(flat[median_pick(flat, ignore_nan)])


record("median_all", lambda x, ignore_nan: (tt.nanmedian if ignore_nan else tt.median)(x),
       (tt.int64, tt.float32, tt.float64), lambda device, dtype: (
           SampleInput((tied(dtype, device, rng_for("median_all", dtype, d))(shape),), {"ignore_nan": nan}, desc=d)
           for d, shape, nan in (("2d", (7, 9), False), ("transposed", (4, 5), True), ("0d", (), False))),
       _median_all_reference, gradgradcheck=False)     # second derivative: tests/test_sorting.py (cpu)


# --------------------------------------------------------------------------- quantiles
def _quantile_reference(ignore_nan):
    def ref(x, q, dim=None, keepdim=False, interpolation="linear"):
        fn = np.nanquantile if ignore_nan else np.quantile
        x64 = x.astype(np.float64)
        with np.errstate(all="ignore"):
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)      # all-NaN rows
                r = fn(x64, np.asarray(q, np.float64), axis=dim, keepdims=keepdim, method=interpolation)
        return r
    return ref


def _quantile_samples(name):
    """Ties and NaN, no infinities: NumPy interpolates towards the next rank even at a whole rank
    (lerp(3, inf, 0) = NaN) where torch takes the rank itself; tests/test_sorting.py pins those."""
    def samples(device, dtype):
        make = tied(dtype, device, rng_for(name, dtype), infinite=False)
        qs = tt.tensor([0.0, 0.3, 0.5, 0.75, 1.0], dtype=dtype, device=device)
        cases = [("dim1-linear", (make((4, 9)), qs), {"dim": 1}),
                 ("transposed-nearest-keepdim", (make((5, 6)).t(), qs), {"dim": 0, "keepdim": True,
                                                                       "interpolation": "nearest"})]
        if device == "cpu" or dtype is tt.float64:
            cases += [(f"all-{how}", (make((3, 4)), 0.4), {"interpolation": how})
                      for how in ("lower", "higher", "midpoint")]
            cases += [("0d-keepdim", (make(()), qs[1:3]), {"keepdim": True})]
        for desc, args, kw in cases:
            yield SampleInput(args, kw, desc=desc)
    return samples


record("quantile", lambda x, q, **kw: tt.quantile(x, q, **kw), (tt.float32, tt.float64),
       _quantile_samples("quantile"), _quantile_reference(False),
       gradgradcheck=False)     # second derivative: tests/test_sorting.py (cpu)
record("nanquantile", lambda x, q, **kw: tt.nanquantile(x, q, **kw), (tt.float32, tt.float64),
       _quantile_samples("nanquantile"), _quantile_reference(True))


# The smallest cases: every emulated launch costs, and a selection's cuda launcher is a dozen of
# them. The second derivatives of median_all's own rule and of quantile (a composite of ops whose
# second derivatives their records check) are checked on cpu in tests/test_sorting.py: on the
# emulated device a gradgradcheck of either is ~10 s.
GRAD_CASES.update({
    "kthvalue": lambda d: (lambda x: x.kthvalue(2, 0, keepdim=True)[0], (_randn((3,), d),), {}),
    "median": lambda d: (lambda x: x.median(0)[0], (_randn((3,), d),), {}),
    "median_all": lambda d: (lambda x: tt.median(x), (_randn((3,), d),), {}),
    # distinct values: every count is 1, the mode is the smallest value
    "mode": lambda d: (lambda x: x.mode(0)[0], (_randn((2,), d),), {}),
    "quantile": lambda d: (lambda x: tt.quantile(x, 0.3), (_randn((2,), d),), {}),
})


# --------------------------------------------------------------------------- searching and counting
# Composites of the sort and binary-search kernels with the compaction, scan and scatter kernels:
# one dtype each on the emulated device (two samples at most), more on cpu.
import bisect  # noqa: E402
import itertools  # noqa: E402


def _bisect_rows(boundaries, values, right=False, sorter=None):
    """Python's bisect on each row (NaN-free values): the oracle of searchsorted/bucketize."""
    rows = boundaries.reshape(-1, boundaries.shape[-1]) if boundaries.ndim else boundaries.reshape(1, 1)
    if sorter is not None:
        rows = np.take_along_axis(rows, sorter.reshape(rows.shape), -1)
    find = bisect.bisect_right if right else bisect.bisect_left
    v = np.asarray(values)
    out = np.zeros(v.shape, np.int64)
    for pos in np.ndindex(v.shape):
        row = rows[0] if rows.shape[0] == 1 else rows[int(np.ravel_multi_index(pos[:-1], v.shape[:-1]))]
        out[pos] = find(list(row), v[pos])
    return out


def _searchsorted_samples(device, dtype):
    rng = rng_for("searchsorted", dtype)
    T = (lambda a: tt.tensor(a, dtype=dtype, device=device))
    rows = np.sort(rng.integers(-6, 7, (3, 70)), axis=1)            # ties; a row longer than a block
    yield SampleInput((T(rows), T(rng.integers(-8, 9, (3, 5)))), {"right": True}, desc="per-row-right")
    yield SampleInput((T(rows[0]), T(rng.integers(-8, 9, (4, 3))).t()), {"side": "left"}, desc="1d-transposed-values")
    if device == "cpu" or dtype is tt.int64:
        perm = rng.permuted(np.tile(np.arange(7), (2, 1)), axis=1)
        shuffled = np.take_along_axis(np.sort(rng.integers(0, 9, (2, 7)), 1), np.argsort(perm, 1), 1)
        yield SampleInput((T(shuffled), T(rng.integers(-1, 10, (2, 4)))),
                          {"sorter": tt.tensor(perm, device=device), "out_int32": True}, desc="sorter-int32")
        yield SampleInput((T(rows[1]), T(np.zeros((0,)))), {}, desc="no-values")


record("searchsorted", lambda s, v, **kw: tt.searchsorted(s, v, **kw), (tt.int64, tt.float32, tt.bfloat16),
       _searchsorted_samples,
       lambda s, v, right=False, side=None, sorter=None, out_int32=False: _bisect_rows(
           s, v, right or side == "right", None if sorter is None else np.asarray(sorter.cpu().numpy())))
record("bucketize", lambda x, b, **kw: tt.bucketize(x, b, **kw), (tt.float32, tt.int32), lambda device, dtype: (
    SampleInput((tied(dtype, device, rng_for("bucketize", dtype), infinite=False)((5, 3)).nan_to_num(2.0),
                 tt.tensor([-2.5, -1.0, 0.0, 0.5, 3.0], device=device).to(dtype)), kw, desc=f"{kw}")
    for kw in ({}, {"right": True, "out_int32": True})),
       lambda x, b, right=False, out_int32=False: _bisect_rows(b, x.reshape(-1, 1), right).reshape(x.shape))


def _isin_samples(device, dtype):
    make = tied(dtype, device, rng_for("isin", dtype))
    yield SampleInput((make((4, 9)), make((7,))), {}, desc="nan-zeros-ties")
    yield SampleInput((make((3, 5)).t(), make((2, 2))), {"invert": True}, desc="transposed-invert")
    if device == "cpu":
        yield SampleInput((make((3,)), make((0,))), {}, desc="empty-tests")


record("isin", lambda e, t, **kw: tt.isin(e, t, **kw), (tt.float32, tt.int64), _isin_samples,
       lambda e, t, invert=False: np.isin(e, t, invert=invert))
record("argwhere", tt.argwhere, (tt.float32, tt.bool), cases(
    "argwhere", "any", ("2d", lambda m: m((4, 5)) * (m((4, 5)) > 0), {}), ("0d", lambda m: m(()), {})),
       np.argwhere)


def _unique_reference(x, return_inverse=False, return_counts=False, dim=None):
    """NumPy's unique of the non-NaN values, then each NaN a value of its own in input order
    (torch's; NumPy's NaNs come in its sort's order)."""
    if dim is not None:
        values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True, axis=dim)
        inverse = inverse.reshape(-1)
    else:
        flat = x.reshape(-1)
        nan = np.isnan(flat) if flat.dtype.kind == "f" else np.zeros(flat.shape, bool)
        values, inv, counts = np.unique(flat[~nan], return_inverse=True, return_counts=True)
        inverse = np.zeros(flat.shape, np.int64)
        inverse[~nan] = inv.reshape(-1)
        inverse[nan] = len(values) + np.arange(nan.sum())
        values = np.concatenate([values, flat[nan]])
        counts = np.concatenate([counts, np.ones(nan.sum(), np.int64)])
        inverse = inverse.reshape(x.shape)
    return (values,) + ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())


def _unique_samples(device, dtype):
    make = tied(dtype, device, rng_for("unique", dtype))
    yield SampleInput((make((4, 9)),), {"return_inverse": True, "return_counts": True}, desc="flat-inverse-counts")
    if device == "cpu" or dtype is tt.int64:
        rows = tied(dtype, device, rng_for("unique-rows", dtype), infinite=False)((3, 2)).nan_to_num(1.0)
        yield SampleInput((tt.cat([rows, rows.flip(0)], 0).t(),), {"dim": 1, "return_inverse": True,
                                                                  "return_counts": True}, desc="dim1-slices")
    if device == "cpu":
        yield SampleInput((make(()),), {"return_counts": True}, desc="0d")
        yield SampleInput((make((0, 2)),), {}, desc="empty")


def _consecutive_reference(x, return_inverse=False, return_counts=False, dim=None):
    items = list(x.reshape(-1)) if dim is None else [tuple(s.reshape(-1)) for s in np.moveaxis(x, dim, 0)]
    keyed = [(("nan", i) if isinstance(v, float) and math.isnan(v) else v) for i, v in enumerate(items)]
    groups = [list(g) for _, g in itertools.groupby(range(len(items)), key=lambda i: keyed[i])]
    firsts = [g[0] for g in groups]
    out = x.reshape(-1)[firsts] if dim is None else np.take(x, firsts, axis=dim)
    result = [out]
    if return_inverse:
        inv = np.zeros(len(items), np.int64)
        for k, g in enumerate(groups):
            inv[g] = k
        result.append(inv.reshape(x.shape) if dim is None else inv)
    if return_counts:
        result.append(np.array([len(g) for g in groups], np.int64))
    return tuple(result) if len(result) > 1 else out


def _consecutive_samples(device, dtype):
    rng = rng_for("unique_consecutive", dtype)
    runs = np.repeat(tied_values((9,), dtype, rng), rng.integers(1, 4, 9))
    yield SampleInput((tt.tensor(runs, dtype=dtype, device=device),), {"return_inverse": True, "return_counts": True},
                      desc="runs")
    if device == "cpu" or dtype is tt.int64:
        rows = tt.tensor(np.repeat(rng.integers(0, 2, (3, 2)), 2, axis=0), dtype=dtype, device=device)
        yield SampleInput((rows,), {"dim": 0, "return_counts": True}, desc="dim0-slices")


record("unique", lambda x, **kw: tt.unique(x, **kw), (tt.float32, tt.int64, tt.bool), _unique_samples,
       _unique_reference)
record("unique_consecutive", lambda x, **kw: tt.unique_consecutive(x, **kw), (tt.float32, tt.int64),
       _consecutive_samples, _consecutive_reference)


def _bincount_samples(device, dtype):
    rng = rng_for("bincount", dtype)
    x = tt.tensor(rng.integers(0, 9, 40), dtype=dtype, device=device)
    yield SampleInput((x,), {"minlength": 12}, desc="minlength")
    yield SampleInput((x, tt.tensor(rng.standard_normal(40), dtype=tt.float32, device=device)), {}, desc="weights")


record("bincount", lambda x, w=None, **kw: tt.bincount(x, w, **kw), (tt.int64, tt.uint8), _bincount_samples,
       lambda x, w=None, minlength=0: np.bincount(x, w, minlength))


def _histogram_samples(name):
    def samples(device, dtype):
        rng = rng_for(name, dtype)
        x = tt.tensor(rng.standard_normal((6, 9)) * 2, dtype=dtype, device=device)
        if name == "histc":
            yield SampleInput((x,), {"bins": 7, "min": -2.0, "max": 3.0}, desc="range")
            yield SampleInput((x.t(),), {"bins": 5}, desc="data-range")
        elif name == "histogram":      # (input, bins or edges, weight)
            w = tt.tensor(rng.random((6, 9)), dtype=dtype, device=device)
            yield SampleInput((x, 7, w), {"range": (-2.0, 3.0)}, desc="range-weight")
            if device == "cpu" or dtype is tt.float64:
                edges = tt.tensor([-4.0, -1.0, 0.0, 0.5, 5.0], dtype=dtype, device=device)
                yield SampleInput((x.t(), edges, None), {"density": True}, desc="edges-density")
        else:                          # (points, weight)
            points = x.reshape(-1, 3)
            yield SampleInput((points, points[:, 0].abs()), {"bins": [3, 4, 2]}, desc="3d-weight")
            if device == "cpu" or dtype is tt.float64:
                yield SampleInput((x.reshape(-1, 2), None), {"bins": 3, "range": [-3.0, 3.0, -1.0, 2.0],
                                                             "density": True}, desc="range-density")
    return samples


def _np_histogram(x, bins, weight, range=None, density=False):
    h, e = np.histogram(x, bins, range, weights=weight, density=density)
    return h, e


def _np_histogramdd(x, weight, bins=10, range=None, density=False):
    d = x.shape[-1]
    ranges = None if range is None else [range[2 * i: 2 * i + 2] for i in builtins_range(d)]
    h, e = np.histogramdd(x.reshape(-1, d), bins, ranges, weights=weight, density=density)
    return (h,) + tuple(e)


builtins_range = range
record("histc", lambda x, **kw: tt.histc(x, **kw), (tt.float32, tt.float64), _histogram_samples("histc"),
       lambda x, bins=100, min=0.0, max=0.0: np.histogram(
           x, bins, (min, max) if min != max else (x.min(), x.max()))[0])
record("histogram", lambda x, bins, weight, **kw: tt.histogram(x, bins, weight=weight, **kw), (tt.float32, tt.float64),
       _histogram_samples("histogram"), _np_histogram)
record("histogramdd", lambda x, weight, **kw: (lambda r: (r.hist,) + tuple(r.bin_edges))(
    tt.histogramdd(x, weight=weight, **kw)),
       (tt.float32, tt.float64), _histogram_samples("histogramdd"), _np_histogramdd)


def _count_reference(positions, size):
    counts = np.zeros(size, np.int64)
    for p in positions.reshape(-1).tolist():
        if p >= 0:
            counts[p] += 1
    return counts


record("bin_count", lambda p, size: table_op("bin_count", p, size=size), (tt.int64,), lambda device, dtype: (
    SampleInput((tt.tensor(rng_for("bin_count", d).integers(-2, 7, n), device=device),), {"size": size}, desc=d)
    for d, n, size in (("crossing-blocks", 300, 9), ("none", 0, 3))), _count_reference)
