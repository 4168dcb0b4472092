"""OpInfo records of issue 21.3 (reductions, scans, comparisons: tritensor/ops/reductions_extra.py
and the composites of tritensor/ops/numerical.py) and 21.4 (indexing and scatter:
tritensor/ops/scatter.py), checked by tests/test_ops_table.py (cpu, emulated cuda) and
tests/test_op_gradients.py.

The references are independent of the backends' NumPy references: plain NumPy expressions
written here (np.nansum is not used for nansum: NaN is zeroed by hand; the running max is a
Python loop over torch's rule; cov is NumPy's own np.cov), and torch-recorded values and hand
values in tests/test_reductions_extra.py and tests/test_indexing_extra.py.

Costs: every dtype runs on cpu; on the emulated cuda the layouts run in float32 and the other
dtypes one sample each, sizes crossing the interpreter's blocks (the scan chunk of 16, the
reduce tile of 64) with few programs.
"""
from __future__ import annotations

import functools
import math
import operator

import numpy as np
import pytest

import tritensor as tt
from opinfo import GRAD_CASES, SampleInput, _randn, _t, record, rng_for

ALL = (tt.bool, tt.uint8, tt.int8, tt.int16, tt.int32, tt.int64, tt.float16, tt.bfloat16, tt.float32, tt.float64)
NUMBERS = ALL[1:]
FLOATS = (tt.float16, tt.bfloat16, tt.float32, tt.float64)
F64 = np.float64
NAN = math.nan


def _values(shape, dtype, rng, nan=True):
    """Small values with ties; floats with NaN (when ``nan``), infinities and signed zeros."""
    if dtype is tt.bool:
        return rng.integers(0, 2, size=shape).astype(bool)
    if not dtype.is_floating_point:
        lo = 0 if dtype is tt.uint8 else -5
        return rng.integers(lo, lo + 11, size=shape)
    v = np.round(rng.standard_normal(shape) * 3, 1)
    if nan and v.size:
        flat = v.reshape(-1)
        picks = rng.choice(flat.size, size=max(1, flat.size // 12), replace=False)
        flat[picks[::3]] = NAN
        flat[picks[1::3]] = np.inf
        flat[picks[2::3]] = -0.0
    return v


def _make(dtype, device, rng, nan=True):
    def make(shape):
        return tt.tensor(_values(shape, dtype, rng, nan), dtype=dtype, device=device)
    return make


def _samples(name, specs, nan=True, cuda=3):
    """Samples from ``(desc, build, kwargs)``: every spec on cpu; on cuda the first ``cuda`` specs
    in float32 and the first one in the other dtypes (the emulated launches cost: the specs come
    in order of what they add for a kernel)."""
    def samples(device, dtype):
        count = len(specs) if device == "cpu" else (cuda if dtype is tt.float32 else 1)
        for desc, build, kwargs in specs[:count]:
            args = build(_make(dtype, device, rng_for(name, dtype, desc), nan))
            yield SampleInput(args if isinstance(args, tuple) else (args,), dict(kwargs), desc=desc)
    return samples


def _axes(x, dim):
    return None if dim is None else dim


# --------------------------------------------------------------------------- nansum / nanmean
def _nansum_reference(x, dim=None, keepdim=False, dtype=None):
    v = np.where(np.isnan(x), 0, x) if x.dtype.kind == "f" else x.astype(np.int64)
    return np.asarray(v.astype(F64).sum(axis=_axes(x, dim), keepdims=keepdim and dim is not None))


REDUCE_SPECS = (
    ("transposed-dim0", lambda m: m((7, 33)).t(), {"dim": 0}),
    ("all", lambda m: m((7, 33)).t(), {}),
    ("dims-keepdim", lambda m: m((3, 5, 70))[:, ::2], {"dim": (0, 2), "keepdim": True}),
    ("0d", lambda m: m(()), {}),
    ("empty", lambda m: m((0, 4)), {"dim": 0}),
)
record("nansum", tt.nansum, ALL, _samples("nansum", REDUCE_SPECS), _nansum_reference,
       tolerances={tt.float16: (2e-3, 2e-2), tt.bfloat16: (1.6e-2, 0.2), tt.float32: (1e-5, 1e-4),
                   tt.float64: (1e-10, 1e-10)})


def _nanmean_reference(x, dim=None, keepdim=False):
    keep = keepdim and dim is not None
    x = x.astype(F64)
    total = np.where(np.isnan(x), 0, x).sum(axis=_axes(x, dim), keepdims=keep)
    count = (~np.isnan(x)).sum(axis=_axes(x, dim), keepdims=keep)
    with np.errstate(all="ignore"):
        return np.asarray(total / count)


record("nanmean", tt.nanmean, FLOATS, _samples("nanmean", REDUCE_SPECS[:4]), _nanmean_reference,
       tolerances={tt.float16: (2e-3, 2e-3), tt.bfloat16: (1.6e-2, 2e-2), tt.float32: (1e-5, 1e-5),
                   tt.float64: (1e-10, 1e-10)})


# --------------------------------------------------------------------------- hash_tensor
def _hash_tensor_reference(x, dim=None, keepdim=False):
    """torch.hash_tensor's definition with Python ints: each element's 64-bit pattern (float64 for
    floats; bool and integers as int64, two's complement), xor-ed row by row."""
    bits = x.astype(F64).view(np.uint64) if x.dtype.kind == "f" else x.astype(np.int64).view(np.uint64)
    dims = tuple(range(x.ndim)) if dim is None or dim == () else \
        tuple(sorted(d % x.ndim for d in ((dim,) if isinstance(dim, int) else dim))) if x.ndim else ()
    kept = [d for d in range(x.ndim) if d not in dims]
    n_kept, n_red = (int(np.prod([x.shape[d] for d in ds])) for ds in (kept, dims))
    rows = np.transpose(bits, kept + list(dims)).reshape(n_kept, n_red)
    out = np.array([functools.reduce(operator.xor, (int(v) for v in row), 0) for row in rows], np.uint64)
    shape = [1 if d in dims else n for d, n in enumerate(x.shape)] if keepdim else [x.shape[d] for d in kept]
    return out.reshape(shape)


HASH_SPECS = (
    ("transposed-dim0", lambda m: m((7, 33)).t(), {"dim": 0}),   # crosses the reduce tile (64)
    ("all", lambda m: m((7, 33)).t(), {}),
    ("dims-keepdim", lambda m: m((3, 5, 70))[:, ::2], {"dim": (0, -1), "keepdim": True}),
    ("0d", lambda m: m(()), {}),
    ("empty-kept", lambda m: m((0, 4)), {"dim": 1}),
)
# uint64 results compare exactly; not differentiable (the entry says so), hence no gradient case
record("hash_tensor", tt.hash_tensor, ALL, _samples("hash_tensor", HASH_SPECS), _hash_tensor_reference)


# --------------------------------------------------------------------------- aminmax
def _aminmax_reference(x, dim=None, keepdim=False):
    if x.ndim == 0:
        return x, x
    axis = dim
    keep = keepdim
    lo = x.min(axis=axis, keepdims=keep) if x.dtype.kind != "f" else np.asarray(np.min(x, axis=axis, keepdims=keep))
    hi = np.asarray(np.max(x, axis=axis, keepdims=keep))
    return np.asarray(lo), hi


record("aminmax", lambda x, **kw: tuple(tt.aminmax(x, **kw)), ALL, _samples("aminmax", (
    ("transposed-dim1", lambda m: m((7, 33)).t(), {"dim": 1}),
    ("all-keepdim", lambda m: m((7, 33)).t(), {"keepdim": True}),
    ("sliced-dim0", lambda m: m((70, 5))[::2], {"dim": 0, "keepdim": True}),
    ("0d", lambda m: m(()), {"dim": 0}),
    ("empty-kept", lambda m: m((0, 4)), {"dim": 1}))), _aminmax_reference)


# --------------------------------------------------------------------------- scans
SCAN_SPECS = (       # rows of 20 cross the interpreter's 16-long scan chunk
    ("transposed-dim0", lambda m: m((5, 20)).t(), {"dim": 0}),
    ("0d", lambda m: m(()), {"dim": 0}),
    ("sliced-last", lambda m: m((4, 5, 40))[:, 1::2, ::2], {"dim": -1}),
    ("rows-dim1", lambda m: m((3, 37)), {"dim": 1}),
    ("empty", lambda m: m((0, 3)), {"dim": 0}),
)


def _logcumsumexp_reference(x, dim):
    a = np.moveaxis(np.atleast_1d(x).astype(F64), dim if x.ndim else 0, -1)
    out = np.empty_like(a)
    acc = np.full(a.shape[:-1], -np.inf)
    for n in range(a.shape[-1]):
        v = a[..., n]
        big, small = np.maximum(acc, v), np.minimum(acc, v)
        with np.errstate(all="ignore"):
            acc = np.where(np.isnan(acc) | np.isnan(v), NAN,
                           np.where(small == big, big + np.log(2.0) * np.isfinite(big),
                                    big + np.log1p(np.exp(small - big))))
            acc = np.where(np.isneginf(big), -np.inf, acc)
        out[..., n] = acc
    return np.moveaxis(out, -1, dim if x.ndim else 0).reshape(x.shape)


record("logcumsumexp", tt.logcumsumexp, FLOATS, _samples("logcumsumexp", SCAN_SPECS), _logcumsumexp_reference,
       tolerances={tt.float16: (2e-3, 2e-3), tt.bfloat16: (1.6e-2, 2e-2), tt.float32: (2e-5, 1e-5),
                   tt.float64: (1e-10, 1e-10)})


def _running(x, dim, better):
    """(values, indices) of a running extremum, torch's rule written out element by element."""
    a = np.moveaxis(np.atleast_1d(x), dim if x.ndim else 0, -1)
    values, indices = np.empty_like(a), np.zeros(a.shape, np.int64)
    for pos in np.ndindex(a.shape[:-1]):
        best, at = None, 0
        for n, v in enumerate(a[pos]):
            if best is None or v != v or (best == best and better(v, best)):
                best, at = v, n
            values[pos + (n,)], indices[pos + (n,)] = best, at
    back = (lambda r: np.moveaxis(r, -1, dim if x.ndim else 0).reshape(x.shape))
    return back(values), back(indices)


record("cummax", lambda x, dim: tuple(tt.cummax(x, dim)), ALL, _samples("cummax", SCAN_SPECS),
       lambda x, dim: _running(x, dim, lambda v, b: v >= b))
record("cummin", lambda x, dim: tuple(tt.cummin(x, dim)), ALL, _samples("cummin", SCAN_SPECS),
       lambda x, dim: _running(x, dim, lambda v, b: v <= b))


# --------------------------------------------------------------------------- std_mean / var_mean
def _var_mean_reference(root):
    def reference(x, dim=None, correction=1, keepdim=False):
        x = x.astype(F64)
        axis = dim if dim is not None else None
        n = x.size if dim is None else int(np.prod([x.shape[d] for d in np.atleast_1d(dim)]))
        mean = x.mean(axis=axis, keepdims=keepdim)
        with np.errstate(all="ignore"):
            var = ((x - x.mean(axis=axis, keepdims=True)) ** 2).sum(axis=axis, keepdims=keepdim) / max(n - correction, 0)
        return (np.sqrt(var) if root else var), mean
    return reference


VAR_SPECS = (
    ("transposed-dim0", lambda m: m((7, 33)).t(), {"dim": 0}),
    ("all", lambda m: m((7, 33)), {"correction": 0}),
    ("dims-keepdim", lambda m: m((3, 5, 70))[:, ::2], {"dim": (0, 2), "keepdim": True, "correction": 2}),
)
for _name, _root in (("std_mean", True), ("var_mean", False)):
    record(_name, getattr(tt, _name), FLOATS, _samples(_name, VAR_SPECS, nan=False, cuda=2), _var_mean_reference(_root),
           tolerances={tt.float16: (4e-3, 4e-3), tt.bfloat16: (2e-2, 3e-2), tt.float32: (2e-5, 1e-5),
                       tt.float64: (1e-10, 1e-10)})


# --------------------------------------------------------------------------- isclose / allclose / equal
def _isclose_reference(x, y, rtol=1e-05, atol=1e-08, equal_nan=False):
    if x.dtype == bool:
        x, y = x.astype(np.float32), y.astype(np.float32)
    if x.dtype.kind == "f":
        x, y = x.astype(F64), y.astype(F64)
    with np.errstate(all="ignore"):
        close = (x == y) | ((np.abs(x - y) <= atol + rtol * np.abs(y.astype(F64))) & np.isfinite(np.abs(x - y)))
    if equal_nan and x.dtype.kind == "f":
        close |= np.isnan(x) & np.isnan(y)
    return close


def _close_pair(dtype, device, rng, shape):
    a = _values(shape, dtype, rng)
    b = np.array(a, copy=True)
    if dtype.is_floating_point:
        flat = b.reshape(-1)
        flat[::3] = flat[::3] * (1 + 1e-6)          # within rtol
        flat[1::5] = flat[1::5] + 0.5               # not
    elif dtype is not tt.bool:
        b.reshape(-1)[::4] += 1
    else:
        b.reshape(-1)[::4] ^= True
    return tt.tensor(a, dtype=dtype, device=device), tt.tensor(b, dtype=dtype, device=device)


def _isclose_samples(device, dtype):
    rng = rng_for("isclose", dtype)
    a, b = _close_pair(dtype, device, rng, (7, 13))
    yield SampleInput((a, b), desc="default")
    if device == "cpu" or dtype is tt.float32:
        yield SampleInput((a.t(), b.t()), {"rtol": 0.1, "atol": 1, "equal_nan": True}, desc="transposed-loose")
        yield SampleInput((a[:, :1], b), {"rtol": 0.0, "atol": 0.0}, desc="broadcast-exact")


record("isclose", tt.isclose, ALL, _isclose_samples, _isclose_reference)
record("allclose", lambda x, y, **kw: tt.tensor(tt.allclose(x, y, **kw), device=x.device), (tt.float32, tt.int64),
       _isclose_samples, lambda x, y, **kw: np.asarray(_isclose_reference(x, y, **kw).all()))


def _equal_samples(device, dtype):
    rng = rng_for("equal", dtype)
    a, b = _close_pair(dtype, device, rng, (5, 9))
    yield SampleInput((a, a.clone()), desc="same-values")
    yield SampleInput((a, b), desc="different")
    yield SampleInput((a, a[:1]), desc="other-shape")
    yield SampleInput((a.t(), a.t().contiguous()), desc="layouts")


def _equal_reference(x, y):
    return np.asarray(x.shape == y.shape and bool(np.all(x == y)))


record("equal", lambda x, y: tt.tensor(tt.equal(x, y), device=x.device), (tt.bool, tt.int32, tt.float32), _equal_samples,
       _equal_reference)


# --------------------------------------------------------------------------- renorm
def _renorm_reference(x, p, dim, maxnorm):
    x = x.astype(F64)
    axes = tuple(d for d in range(x.ndim) if d != dim % x.ndim)
    norm = (np.abs(x) ** p).sum(axis=axes, keepdims=True) ** (1 / p) if not np.isinf(p) else \
        np.abs(x).max(axis=axes, keepdims=True)
    return x * np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)


record("renorm", tt.renorm, FLOATS, _samples("renorm", (
    ("transposed-dim0", lambda m: m((7, 33)).t(), {"p": 2, "dim": 0, "maxnorm": 5.0}),
    ("p1-dim1", lambda m: m((5, 37)), {"p": 1, "dim": 1, "maxnorm": 4.0}),
    ("inf-3d", lambda m: m((3, 4, 9))[:, ::2], {"p": math.inf, "dim": -1, "maxnorm": 2.0}),
    ("p3-empty", lambda m: m((2, 0)), {"p": 3, "dim": 0, "maxnorm": 1.0})), nan=False), _renorm_reference,
    tolerances={tt.float16: (4e-3, 4e-3), tt.bfloat16: (2e-2, 3e-2), tt.float32: (2e-5, 1e-5),
                tt.float64: (1e-10, 1e-10)})


# --------------------------------------------------------------------------- composites (ops/numerical.py)
def _pnorm(v, p):
    a = np.abs(v.astype(F64)).reshape(-1)
    if p == 0:
        return np.asarray(float(np.count_nonzero(a)))
    if np.isinf(p):
        return np.asarray(a.max() if p > 0 else a.min())
    return np.asarray((a ** p).sum() ** (1 / p))


record("dist", tt.dist, FLOATS, _samples("dist", (
    ("broadcast", lambda m: (m((7, 33)).t(), m((7,))), {}),
    ("p1", lambda m: (m((5, 3)), m((5, 3))), {"p": 1}),
    ("p0-inf", lambda m: (m((4, 6))[:, ::2], m((4, 3))), {"p": math.inf}),
    ("p3", lambda m: (m((9,)), m(())), {"p": 3})), nan=False), lambda x, y, p=2: _pnorm(x - y, p),
    tolerances={tt.float16: (4e-3, 4e-3), tt.bfloat16: (2e-2, 3e-2), tt.float32: (2e-5, 1e-5),
                tt.float64: (1e-10, 1e-10)})
record("trace", tt.trace, NUMBERS, _samples("trace", (
    ("wide", lambda m: m((4, 7)), {}), ("transposed", lambda m: m((9, 5)).t(), {}),
    ("empty", lambda m: m((0, 3)), {})), nan=False),
    lambda x: np.asarray(np.trace(x.astype(F64))),
    tolerances={tt.float16: (4e-3, 4e-2), tt.bfloat16: (2e-2, 0.3), tt.float32: (2e-5, 1e-5),
                tt.float64: (1e-10, 1e-10)})


def _cov_reference(x, correction=1, fweights=None, aweights=None):
    fweights, aweights = (None if w is None else w.cpu().numpy() for w in (fweights, aweights))
    with np.errstate(all="ignore"):
        return np.asarray(np.cov(x.astype(F64), ddof=correction, fweights=fweights, aweights=aweights))


def _cov_samples(device, dtype):
    make = _make(dtype, device, rng_for("cov", dtype), nan=False)
    yield SampleInput((make((3, 11)),), desc="rows")
    if device == "cpu" or dtype is tt.float32:
        yield SampleInput((make((11, 3)).t(),), {"correction": 0}, desc="transposed")
        yield SampleInput((make((9,)),), desc="vector")
        fw = tt.tensor([1, 2, 0, 3, 1, 1, 2], device=device)
        aw = tt.tensor([0.5, 1.0, 2.0, 0.25, 1.0, 3.0, 0.5], device=device,
                       dtype=tt.float64 if dtype is tt.float64 else tt.float32)
        yield SampleInput((make((2, 7)),), {"fweights": fw, "aweights": aw}, desc="weights")
        yield SampleInput((make((2, 7)),), {"aweights": aw, "correction": 2}, desc="aweights")


record("cov", tt.cov, (tt.int64, tt.float32, tt.float64), _cov_samples, _cov_reference)
record("corrcoef", tt.corrcoef, (tt.int64, tt.float32, tt.float64), _samples("corrcoef", (
    ("rows", lambda m: m((3, 11)), {}), ("transposed", lambda m: m((11, 4)).t(), {})), nan=False),
    lambda x: np.asarray(np.corrcoef(x.astype(F64))))


def _diff_reference(x, n=1, dim=-1, prepend=None, append=None):
    parts = [p for p in (prepend, x, append) if p is not None]
    a = np.concatenate(parts, axis=dim) if len(parts) > 1 else x
    for _ in range(min(n, a.shape[dim])):
        b = np.take(a, range(1, a.shape[dim]), axis=dim)
        c = np.take(a, range(0, a.shape[dim] - 1), axis=dim)
        a = (b != c) if a.dtype == bool else b - c
    return a


record("diff", tt.diff, NUMBERS + (tt.bool,), _samples("diff", (
    ("transposed", lambda m: m((7, 13)).t(), {"dim": 0}),
    ("n2", lambda m: m((3, 20)), {"n": 2}),
    ("prepend-append", lambda m: (m((4, 5)), 1, 1, m((4, 2)), m((4, 1))), {}),
    ("n-past-length", lambda m: m((2, 3)), {"n": 5}),
    ("n0", lambda m: m((3,)), {"n": 0})), nan=False), _diff_reference)


def _gradient_reference(x, spacing=1, dim=None, edge_order=1):
    dims = list(range(x.ndim)) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    if isinstance(spacing, (list, tuple)):
        steps = list(spacing)
    else:
        steps = [spacing] * len(dims)
    out = np.gradient(x.astype(F64), *steps, axis=tuple(dims), edge_order=edge_order)
    return tuple(out) if len(dims) > 1 else (out,)


def _gradient_samples(device, dtype):
    make = _make(dtype, device, rng_for("gradient", dtype), nan=False)
    yield SampleInput((make((5, 7)),), desc="all-dims")
    if device == "cpu":
        yield SampleInput((make((9, 4)).t(),), {"spacing": 2.0, "dim": 1, "edge_order": 2}, desc="transposed")
        yield SampleInput((make((4, 6)),), {"spacing": [0.5, 3.0], "edge_order": 2}, desc="steps")
    if device == "cpu" or dtype is tt.float32:
        coords = tt.tensor([0.0, 0.5, 1.5, 1.75, 3.0, 4.5], dtype=dtype if dtype.is_floating_point else tt.float32,
                           device=device)
        yield SampleInput((make((3, 6)),), {"spacing": (coords,), "dim": [1], "edge_order": 2},
                          desc="coordinates-order2")
    if device == "cpu":
        yield SampleInput((make((3, 6)),), {"spacing": (coords,), "dim": 1}, desc="coordinates")


def _gradient_reference_any(x, spacing=1, dim=None, edge_order=1):
    if isinstance(spacing, tuple) and spacing and not np.isscalar(spacing[0]):
        return _gradient_reference(x, [s.cpu().numpy() for s in spacing], dim, edge_order)
    return _gradient_reference(x, spacing, dim, edge_order)


record("gradient", lambda x, **kw: tuple(tt.gradient(x, **kw)), (tt.int64, tt.float32, tt.float64),
       _gradient_samples, _gradient_reference_any)


def _trapezoid_reference(y, x=None, dx=None, dim=-1):
    y = y.astype(F64)
    if y.shape[dim] == 0:
        return np.zeros(np.delete(np.array(y.shape), dim % y.ndim))
    if x is None:
        return np.asarray(np.trapezoid(y, dx=1.0 if dx is None else dx, axis=dim))
    return np.asarray(np.trapezoid(y, x=x.astype(F64), axis=dim))


def _cumulative_trapezoid_reference(y, x=None, dx=None, dim=-1):
    y = np.moveaxis(y.astype(F64), dim, -1)
    if x is None:
        h = np.full(y.shape[-1] - 1 if y.shape[-1] else 0, 1.0 if dx is None else dx)
    else:
        h = np.diff(np.moveaxis(np.broadcast_to(x.astype(F64), y.shape) if x.ndim > 1 else x.astype(F64), -1, -1)
                    if x.ndim > 1 else x.astype(F64), axis=-1)
    out = np.cumsum((y[..., 1:] + y[..., :-1]) * h / 2, axis=-1)
    return np.moveaxis(out, -1, dim)


TRAPEZOID_SPECS = (
    ("rows", lambda m: m((3, 17)), {}),
    ("dx-dim0", lambda m: m((9, 4)).t(), {"dx": 0.5, "dim": 0}),
    ("x-1d", lambda m: (m((4, 6)), m((6,))), {}),
    ("x-2d", lambda m: (m((3, 5)), m((3, 5))), {"dim": 1}),
    ("empty", lambda m: m((2, 0)), {}),
)
for _name in ("trapezoid", "trapz"):
    record(_name, getattr(tt, _name), (tt.int64, tt.float32, tt.float64), _samples(_name, TRAPEZOID_SPECS, nan=False),
           _trapezoid_reference)
record("cumulative_trapezoid", tt.cumulative_trapezoid, (tt.int64, tt.float32, tt.float64),
       _samples("cumulative_trapezoid", TRAPEZOID_SPECS[:4], nan=False), _cumulative_trapezoid_reference)


# --------------------------------------------------------------------------- gradient cases (float64)
def _emulated(device):
    return device != "cpu" and tt.cuda.is_emulated()


def _cpu_or_gpu(case):
    """A gradient case on cpu and real GPUs only: for a composite (its derivative is its ops'
    own) or a backward written as a long chain of ops, the formulas are the same on every device,
    and under the emulated device a gradgradcheck is thousands of interpreted launches (minutes);
    the kernels are checked by the parity records and the cheap primitives' cases."""
    def make(device):
        if _emulated(device):
            pytest.skip("a composite's gradients: cpu and real GPUs (see _cpu_or_gpu)")
        return case(device)
    return make


GRAD_CASES.update({
    # primitives: small inputs (every element is a forward of the backward graph per derivative)
    "nansum": lambda d: (lambda x: tt.nansum(x, 1, keepdim=True), (_randn((2, 3), d),), {}),
    "aminmax": lambda d: (lambda x: tt.aminmax(x, dim=1)[0] * 2 + tt.aminmax(x, dim=1)[1],
                          (_t([[1.0, 3.0, -2.0]], d),), {}),
    "cummax": lambda d: (lambda x: tt.cummax(x, 0).values, (_randn((4, 1), d),), {}),
    "cummin": lambda d: (lambda x: tt.cummin(x, -1)[0], (_randn((1, 4), d),), {}),
})
# primitives whose backward is a long chain of ops (the same on every device): cpu and real GPUs;
# their first derivatives on the emulated device are in tests/test_reductions_extra.py
GRAD_CASES.update({name: _cpu_or_gpu(case) for name, case in {
    "logcumsumexp": lambda d: (lambda x: tt.logcumsumexp(x, 1), (_randn((2, 4), d),), {}),
    "std_mean": lambda d: (lambda x: tt.std_mean(x, 1), (_randn((3, 4), d),), {}),
    "var_mean": lambda d: (lambda x: tt.var_mean(x, 0, keepdim=True, correction=0), (_randn((3, 4), d),), {}),
    "renorm": lambda d: (lambda x: tt.renorm(x, 3, 0, 1.0), (_randn((3, 4), d),), {}),
}.items()})
GRAD_CASES.update({name: _cpu_or_gpu(case) for name, case in {
    "nanmean": lambda d: (lambda x: tt.nanmean(x, 0), (_randn((3, 4), d),), {}),
    "dist": lambda d: (lambda x, y: tt.dist(x, y, 2.5), (_randn((3, 4), d), _randn((4,), d)), {}),
    "trace": lambda d: (tt.trace, (_randn((3, 4), d),), {}),
    "cov": lambda d: (lambda x, w: tt.cov(x, aweights=w), (_randn((2, 5), d), _randn((5,), d, positive=True)), {}),
    "corrcoef": lambda d: (tt.corrcoef, (_randn((3, 5), d),), {}),
    "diff": lambda d: (lambda x, p: tt.diff(x, 2, 0, prepend=p), (_randn((4, 3), d), _randn((1, 3), d)), {}),
    "gradient": lambda d: (lambda x: tt.gradient(x, spacing=2.0, edge_order=2), (_randn((3, 4), d),), {}),
    "trapezoid": lambda d: (tt.trapezoid, (_randn((3, 4), d), _randn((4,), d)), {}),
    "cumulative_trapezoid": lambda d: (lambda y: tt.cumulative_trapezoid(y, dx=0.5), (_randn((3, 4), d),), {}),
}.items()})


# =========================================================================== issue 21.4: indexing and scatter
def _fold(x, dim, index, src, step):
    """x with src's slices folded into the slices index[i] along dim one at a time, in index
    order: ``step(current, incoming, first)`` gives the new slice (a Python loop: the oracle)."""
    out = np.array(x, copy=True)
    o, s = np.moveaxis(out, dim, 0), np.moveaxis(np.asarray(src), dim, 0)
    seen = set()
    for i, t in enumerate(np.asarray(index).reshape(-1)):
        o[t] = step(o[t], s[i], t not in seen)
        seen.add(int(t))
    return out, seen


def _index_add_reference(x, dim, index, source, alpha=1):
    if x.ndim == 0:
        return x + alpha * source
    alpha = np.asarray(alpha).astype(x.dtype)
    if x.dtype == bool:
        return _fold(x, dim, index, source, lambda cur, v, first: cur | v)[0]
    return _fold(x, dim, index, source, lambda cur, v, first: cur + alpha * v)[0]


def _index_copy_reference(x, dim, index, source):
    if x.ndim == 0:
        return np.asarray(source)
    return _fold(x, dim, index, source, lambda cur, v, first: v)[0]


def _index_fill_reference(x, dim, index, value):
    out = np.array(x, copy=True)
    if out.ndim == 0:
        out[()] = value
        return out
    o = np.moveaxis(out, dim, 0)
    for t in np.asarray(index).reshape(-1):
        o[t] = value
    return out


def _index_reduce_reference(x, dim, index, source, reduce, include_self=True):
    x64 = x.astype(F64) if x.dtype.kind == "f" else x.astype(np.int64)
    if x.ndim == 0:
        x64, source, index, dim = x64.reshape(1), np.asarray(source).reshape(1), np.asarray(index).reshape(1), 0
    s64 = np.asarray(source).astype(x64.dtype)
    op = {"prod": lambda a, b: a * b, "mean": lambda a, b: a + b, "amax": lambda a, b: np.where(np.isnan(b) | (b > a), b, a),
          "amin": lambda a, b: np.where(np.isnan(b) | (b < a), b, a)}[reduce]
    out, seen = _fold(x64, dim, index, s64, lambda cur, v, first: v if (first and not include_self) else op(cur, v))
    if reduce == "mean":
        o = np.moveaxis(out, dim, 0)
        counts = {int(t): list(np.asarray(index).reshape(-1)).count(t) for t in seen}
        for t, c in counts.items():
            n = c + (1 if include_self else 0)
            o[t] = o[t] / n if out.dtype.kind == "f" else np.floor_divide(o[t], n)
    return out.reshape(x.shape)


def _idx(values, device, dtype=tt.int64):
    return tt.tensor(values, dtype=dtype, device=device)


def _index_samples(name):
    """Samples of index_add/index_copy/index_reduce: repeated indices, both dims of a transposed
    input, int32 indices, 0-d operands, an empty index; on cuda (float32) an index of 70 (past the
    interpreter's 64-element sort tile: the merge pass) into 5 slices."""
    def samples(device, dtype):
        if name == "index_reduce":       # each reduction in turn, one layout each (cpu: all)
            for i, reduce in enumerate(("prod", "mean", "amax", "amin")):
                for sample in _index_samples_of(name, device, dtype, {"reduce": reduce}, i):
                    yield sample
            return
        yield from _index_samples_of(name, device, dtype, {}, 0)
    return samples


def _index_samples_of(name, device, dtype, kw, which):
    rng = rng_for(name, dtype, which)
    make = _make(dtype, device, rng, nan=False)
    reduce = kw.get("reduce")
    dup = name != "index_copy"             # (index_copy's repeated indices: tests/test_indexing_extra.py)
    every_layout = device == "cpu" or (dtype is tt.float32 and which == 0)
    yield SampleInput((make((13, 7)).t(), 0, _idx([6, 0, 6, 3] if dup else [6, 0, 3], device),
                       make((4 if dup else 3, 13))),
                      dict(kw, **({"alpha": 2} if name == "index_add" else {})), desc="transposed-dim0")
    if every_layout:
        index_dtype = tt.int32 if name != "index_copy" else tt.int64
        yield SampleInput((make((4, 9)), 1, _idx([8, 0, 8, 8] if dup else [8, 0, 2], device, index_dtype),
                           make((4 if dup else 3, 4)).t()),
                          dict(kw, **({"include_self": False} if reduce else {})), desc="dim1-strided-source")
        yield SampleInput((make(()), 0, _idx([0], device), make(())), dict(kw), desc="0d")
        if name != "index_copy":
            yield SampleInput((make((3, 4)), 0, _idx([], device), make((0, 4))), dict(kw), desc="empty-index")
    if device != "cpu" and dtype is tt.float32 and which == 0:
        index = rng.integers(0, 5, 70) if dup else rng.permutation(5)
        yield SampleInput((make((5, 3)), 0, _idx(index, device), make((len(index), 3))), dict(kw), desc="long-index")


record("index_add", lambda x, dim, index, src, **kw: tt.index_add(x, dim, index, src, **kw), ALL,
       _index_samples("index_add"), lambda x, dim, index, src, alpha=1: _index_add_reference(x, dim, index, src, alpha),
       tolerances={tt.float16: (4e-3, 2e-2), tt.bfloat16: (2e-2, 0.2), tt.float32: (2e-5, 1e-5), tt.float64: (1e-10, 1e-10)})
record("index_copy", lambda x, dim, index, src: x.index_copy(dim, index, src), ALL, _index_samples("index_copy"),
       _index_copy_reference)
record("index_reduce", lambda x, dim, index, src, **kw: x.index_reduce(dim, index, src, **kw), NUMBERS,
       _index_samples("index_reduce"), _index_reduce_reference,
       tolerances={tt.float16: (4e-3, 4e-3), tt.bfloat16: (2e-2, 3e-2), tt.float32: (2e-5, 1e-5),
                   tt.float64: (1e-10, 1e-10)})


def _index_fill_samples(device, dtype):
    make = _make(dtype, device, rng_for("index_fill", dtype), nan=False)
    yield SampleInput((make((13, 7)).t(), 1, _idx([12, -1, 0, 12], device), 3), desc="negative-and-repeated")
    if device == "cpu" or dtype is tt.float32:
        yield SampleInput((make((4, 9)), 0, _idx([2], device), make(())), desc="tensor-value")
        yield SampleInput((make(()), 0, _idx(0, device), 1), desc="0d")


def _index_fill_reference_any(x, dim, index, value):
    size = x.shape[dim] if x.ndim else 1
    index = np.where(np.asarray(index) < 0, np.asarray(index) + size, np.asarray(index))
    return _index_fill_reference(x, dim, index, value)


record("index_fill", lambda x, dim, index, value: x.index_fill(dim, index, value), ALL, _index_fill_samples,
       _index_fill_reference_any)


def _masked_scatter_samples(device, dtype):
    rng = rng_for("masked_scatter", dtype)
    make = _make(dtype, device, rng, nan=False)
    mask = tt.tensor(rng.integers(0, 2, (13, 9)).astype(bool), device=device)
    yield SampleInput((make((9, 13)).t(), mask, make((130,))), desc="transposed")
    if device == "cpu" or dtype is tt.float32:
        yield SampleInput((make((1, 9)), mask[:4], make((6, 7))), desc="broadcast-self")
        yield SampleInput((make((4, 9)), mask[0], make((80,))[::2]), desc="broadcast-mask-strided-source")
        yield SampleInput((make((3, 2)), tt.zeros(3, 2, dtype=tt.bool, device=device), make((0,))), desc="no-ones")


def _masked_scatter_reference(x, mask, src):
    shape = np.broadcast_shapes(x.shape, mask.shape)
    out = np.array(np.broadcast_to(x, shape), copy=True).reshape(-1)
    m = np.broadcast_to(mask, shape).reshape(-1)
    flat_src, k = np.asarray(src).reshape(-1), 0
    for p in range(out.size):          # the k-th True position takes the k-th source element
        if m[p]:
            out[p] = flat_src[k]
            k += 1
    return out.reshape(shape)


record("masked_scatter", tt.masked_scatter, ALL, _masked_scatter_samples, _masked_scatter_reference)


def _put_samples(device, dtype):
    make = _make(dtype, device, rng_for("put", dtype), nan=False)
    yield SampleInput((make((7, 5)).t(), _idx([3, -1, 3, 20], device), make((4,))), desc="transposed")
    if device == "cpu" or dtype is tt.float32:
        yield SampleInput((make((4, 5)), _idx([[3, 3], [0, 19]], device), make((2, 2))), {"accumulate": True},
                          desc="accumulate")
        yield SampleInput((make(()), _idx([0, -1], device), make((2,))), {"accumulate": True}, desc="0d")


def _put_reference(x, index, src, accumulate=False):
    out = np.array(x, copy=True)
    flat = out.reshape(-1)
    for i, v in zip(np.asarray(index).reshape(-1), np.asarray(src).reshape(-1)):
        if accumulate:
            flat[i] = flat[i] | v if out.dtype == bool else flat[i] + v
        else:
            flat[i] = v
    return flat.reshape(x.shape)


record("put", lambda x, index, src, **kw: x.put(index, src, **kw), ALL, _put_samples, _put_reference)


def _take_along_dim_samples(device, dtype):
    make = _make(dtype, device, rng_for("take_along_dim", dtype), nan=False)
    yield SampleInput((make((7, 5)).t(), _idx([[6, 0], [0, 3], [6, 6], [1, 2], [5, 4]], device)),
                      {"dim": 1}, desc="transposed")
    if device == "cpu" or dtype is tt.float32:
        yield SampleInput((make((3, 4)), _idx([[2, 0, 1, 1]], device)), {"dim": 0}, desc="broadcast-indices")
        yield SampleInput((make((3, 1)), _idx([[0, 0, 0]], device)), {"dim": 0}, desc="broadcast-input")
        yield SampleInput((make((3, 4)), _idx([11, 0, 5], device)), {}, desc="flat")


def _take_along_dim_reference(x, indices, dim=None):
    if dim is None:
        return x.reshape(-1)[indices.reshape(-1)]
    shape = list(np.broadcast_shapes(tuple(1 if d == dim else s for d, s in enumerate(x.shape)),
                                     tuple(1 if d == dim else s for d, s in enumerate(indices.shape))))
    xs, ids = list(shape), list(shape)
    xs[dim], ids[dim] = x.shape[dim], indices.shape[dim]
    return np.take_along_axis(np.broadcast_to(x, xs), np.broadcast_to(indices, ids), dim)


record("take_along_dim", tt.take_along_dim, ALL, _take_along_dim_samples, _take_along_dim_reference)


def _scatter_view_samples(name):
    def samples(device, dtype):
        make = _make(dtype, device, rng_for(name, dtype), nan=False)
        if name == "select_scatter":
            yield SampleInput((make((7, 5)).t(), make((7,)), 0, -1), desc="transposed")
            if device == "cpu" or dtype is tt.float32:
                yield SampleInput((make((3, 4, 2)), make((4, 2)), 0, 1), desc="3d")
        elif name == "slice_scatter":
            yield SampleInput((make((7, 9)).t(), make((3, 7))), {"dim": 0, "start": 1, "end": None, "step": 3},
                              desc="transposed-step")
            if device == "cpu" or dtype is tt.float32:
                yield SampleInput((make((4, 6)), make((4, 2))), {"dim": 1, "start": -3, "end": -1}, desc="negative")
                yield SampleInput((make((4, 6)), make((0, 6))), {"start": 9, "end": 20}, desc="empty")
        else:
            yield SampleInput((make((4, 6))[1:], make((2, 3))), {"size": (2, 3), "stride": (1, 6)},
                              desc="sliced-default-offset")
            if device == "cpu" or dtype is tt.float32:
                yield SampleInput((make((4, 6)).t(), make((3,))), {"size": (3,), "stride": (7,), "storage_offset": 1},
                                  desc="transposed-diagonal")
    return samples


def _select_scatter_reference(x, src, dim, index):
    out = np.array(x, copy=True)
    out[(slice(None),) * dim + (index,)] = src
    return out


def _slice_scatter_reference(x, src, dim=0, start=None, end=None, step=1):
    out = np.array(x, copy=True)
    out[(slice(None),) * dim + (slice(start, end, step),)] = src
    return out


def _as_strided_scatter_reference(x, src, size, stride, storage_offset=None):
    """By hand: x's elements sit at storage positions (the sample's x is a view of a contiguous
    (4, 6)); the ones the new geometry names take src."""
    out = np.array(x, copy=True)
    if x.shape == (3, 6):                  # make((4, 6))[1:]: offset 6, strides (6, 1)
        positions = 6 + np.arange(3)[:, None] * 6 + np.arange(6)[None, :]
    else:                                  # make((4, 6)).t(): offset 0, strides (1, 6)
        positions = np.arange(6)[:, None] + np.arange(4)[None, :] * 6
    offset = positions.min() if storage_offset is None else storage_offset
    view = offset + sum(np.arange(n).reshape((-1,) + (1,) * (len(size) - 1 - i)) * st
                        for i, (n, st) in enumerate(zip(size, stride)))
    for pos, v in zip(np.broadcast_to(view, size).reshape(-1), np.asarray(src).reshape(-1)):
        out[positions == pos] = v
    return out


record("select_scatter", tt.select_scatter, ALL, _scatter_view_samples("select_scatter"), _select_scatter_reference)
record("slice_scatter", tt.slice_scatter, ALL, _scatter_view_samples("slice_scatter"), _slice_scatter_reference)
record("as_strided_scatter", tt.as_strided_scatter, (tt.float32, tt.int64, tt.bool),
       _scatter_view_samples("as_strided_scatter"), _as_strided_scatter_reference)


def _tri_indices_samples(name):
    def samples(device, dtype):
        for desc, args in (("wide", (3, 5, 1)), ("tall", (5, 3, -2)), ("empty", (0, 4, 0)), ("past", (3, 3, 9))):
            yield SampleInput(args, {"dtype": dtype, "device": device}, desc=desc)
    return samples


record("tril_indices", tt.tril_indices, (tt.int64, tt.int32), _tri_indices_samples("tril"),
       lambda row, col, offset=0, dtype=None, device=None: np.stack(
           [np.array([r for r in range(row) for c in range(col) if c - r <= offset], dtype=np.int64).reshape(-1),
            np.array([c for r in range(row) for c in range(col) if c - r <= offset], dtype=np.int64).reshape(-1)]))
record("triu_indices", tt.triu_indices, (tt.int64, tt.int32), _tri_indices_samples("triu"),
       lambda row, col, offset=0, dtype=None, device=None: np.stack(
           [np.array([r for r in range(row) for c in range(col) if c - r >= offset], dtype=np.int64).reshape(-1),
            np.array([c for r in range(row) for c in range(col) if c - r >= offset], dtype=np.int64).reshape(-1)]))


def _unravel_samples(device, dtype):
    yield SampleInput((_idx([[4, 1, 11], [0, 12, -1]], device, dtype), (3, 4)), desc="2d-wrapping")
    yield SampleInput((_idx(7, device, dtype), (2, 2, 2)), desc="0d")


def _unravel_reference(indices, shape):
    """Floor division by the row-major strides, then Python's modulo (its sign follows the divisor)."""
    strides = [int(np.prod(shape[i + 1:])) for i in range(len(shape))]
    flat = np.asarray(indices).astype(np.int64)
    return tuple(np.vectorize(lambda v, st=st, n=n: (v // st) % n)(flat).astype(np.int64)
                 for st, n in zip(strides, shape))


record("unravel_index", tt.unravel_index, (tt.int64, tt.int32, tt.int16), _unravel_samples, _unravel_reference)


def _nonzero_static_samples(device, dtype):
    make = _make(dtype, device, rng_for("nonzero_static", dtype), nan=False)
    yield SampleInput((make((5, 7)).t(),), {"size": 4}, desc="cut")
    yield SampleInput((make((2, 3)),), {"size": 9, "fill_value": -7}, desc="padded")
    yield SampleInput((make(()),), {"size": 2}, desc="0d")


def _nonzero_static_reference(x, size, fill_value=-1):
    nz = np.argwhere(x)
    out = np.full((size, x.ndim), fill_value, dtype=np.int64)
    out[:min(size, len(nz))] = nz[:size]
    return out


record("nonzero_static", lambda x, **kw: tt.nonzero_static(x, **kw), ALL, _nonzero_static_samples,
       _nonzero_static_reference)


# gradient cases: the entries on tiny inputs everywhere (their backwards are index ops over the
# same kernels), the composites on cpu and real GPUs
def _i(values, device):
    return tt.tensor(values, dtype=tt.int64, device=device)


GRAD_CASES.update({
    "index_add": lambda d: (lambda a, s: a.index_add(1, _i([2, 0, 2], d), s, alpha=-2), (_randn((1, 3), d), _randn((1, 3), d)), {}),
    "index_copy": lambda d: (lambda a, s: a.index_copy(0, _i([2, 0], d), s), (_randn((3, 1), d), _randn((2, 1), d)), {}),
    "index_fill": lambda d: (lambda a, v: a.index_fill(0, _i([2, 0, 2], d), v), (_randn((3, 1), d), _randn((), d)), {}),
    "masked_scatter": lambda d: (lambda a, s: a.masked_scatter(tt.tensor([[True, False], [False, True]], device=d), s),
                                 (_randn((2, 2), d), _randn((3,), d)), {}),
    "select_scatter": lambda d: (lambda a, s: tt.select_scatter(a, s, 1, -1), (_randn((3, 2), d), _randn((3,), d)), {}),
    "slice_scatter": lambda d: (lambda a, s: tt.slice_scatter(a, s, 0, 1, None, 2), (_randn((4, 2), d), _randn((2, 2), d)), {}),
})
GRAD_CASES.update({name: _cpu_or_gpu(case) for name, case in {
    # index_reduce's backward runs index_reduce twice more: its first derivative on the emulated
    # device is in tests/test_indexing_extra.py
    "index_reduce": lambda d: (lambda a, s: a.index_reduce(0, _i([0, 2, 0], d), s, "prod"), (_randn((3, 2), d), _randn((3, 2), d)), {}),
    "put": lambda d: (lambda a, s: a.put(_i([1, -1, 1], d), s, accumulate=True), (_randn((2, 3), d), _randn((3,), d)), {}),
    "take_along_dim": lambda d: (lambda a: tt.take_along_dim(a, _i([[1, 0, 1]], d), 0), (_randn((3, 3), d),), {}),
}.items()})
