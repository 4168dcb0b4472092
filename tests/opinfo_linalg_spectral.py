"""OpInfo records of the spectral half of tt.linalg (ops/spectral.py, ops/norms.py,
ops/matrix_functions.py).

References are independent of tritensor's: SciPy's LAPACK drivers (scipy.linalg.eigh is syevr,
scipy.linalg.svd gesdd, expm Al-Mohy and Higham's Pade algorithm), NumPy's own norms and
products, and the definitions written out here. Eigenvectors and singular vectors are unique
only up to sign: the records compare them with each column's largest entry made positive (the
same normalisation on both sides); full_matrices' completion columns (any orthonormal basis of
the complement) are compared through their defining properties in tests/test_linalg_spectral.py.

Sizes: 5 and 17 (17 crosses a 16-wide block) on cpu; on the emulated device, where every round
of a Jacobi sweep is interpreted Python, the records built on eigh / svd use small matrices and
one 17 x 17 case each for the kernels' own records.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg as sla

import tritensor as tt
from opinfo import GRAD_CASES, SampleInput, record, rng_for

DTYPES = (tt.float32, tt.float64)
TOL = {tt.float32: (1e-4, 1e-4), tt.float64: (1e-9, 1e-10)}


def _emulated(device):
    return device != "cpu" and tt.cuda.is_emulated()


def _np(dtype):
    return np.float32 if dtype is tt.float32 else np.float64


def _t(a, dtype, device):
    return tt.tensor(np.asarray(a), dtype=dtype, device=device)


def _each(fn, a, outs=1):
    """fn applied matrix by matrix over a's batch; results stacked."""
    batch = a.shape[:-2]
    flat = a.reshape((-1,) + a.shape[-2:])
    results = [fn(m) for m in flat]
    if outs == 1:
        results = [(r,) for r in results]
    stacked = []
    for j in range(outs):
        parts = [np.asarray(r[j]) for r in results]
        stacked.append(np.stack(parts).reshape(batch + parts[0].shape))
    return tuple(stacked) if outs > 1 else stacked[0]


def _symmetric(rng, shape, dtype):
    a = rng.standard_normal(shape)
    return (a + np.swapaxes(a, -1, -2)).astype(_np(dtype))


def _general(rng, shape, dtype):
    return rng.standard_normal(shape).astype(_np(dtype))


# --------------------------------------------------------------------------- sign normalisation
def _signs_np(V):
    """+-1 per column: the sign of the column's entry of largest magnitude."""
    if V.size == 0:
        return np.ones(V.shape[:-2] + (1, V.shape[-1]), V.dtype)
    idx = np.abs(V).argmax(axis=-2)[..., None, :]
    return np.where(np.take_along_axis(V, idx, axis=-2) < 0, -1, 1).astype(V.dtype)


def _signs_tt(V):
    if V.numel() == 0:
        return tt.ones(tuple(V.shape[:-2]) + (1, V.shape[-1]), dtype=V.dtype, device=V.device)
    idx = V.abs().argmax(-2, keepdim=True)
    return tt.where(V.gather(-2, idx) < 0, -1.0, 1.0).to(V.dtype)


# --------------------------------------------------------------------------- eigh / eigvalsh
def _eigh_samples(device, dtype):
    rng = rng_for("eigh", dtype)
    yield SampleInput((_t(_symmetric(rng, (2, 5, 5), dtype), dtype, device),), desc="batch-5")
    yield SampleInput((_t(_general(rng, (4, 4), dtype), dtype, device),), {"UPLO": "U"}, desc="upper-of-general")
    yield SampleInput((_t(_general(rng, (5, 5), dtype), dtype, device).mT,), {"values_only": True},
                      desc="eigvalsh-transposed")
    if not _emulated(device) or dtype is tt.float32:      # (the float64 kernel runs the same rounds)
        yield SampleInput((_t(_symmetric(rng, (17, 17), dtype), dtype, device),), desc="17")
    yield SampleInput((_t(np.zeros((0, 3, 3)), dtype, device),), desc="empty-batch")
    yield SampleInput((_t(np.zeros((2, 0, 0)), dtype, device),), {"values_only": True}, desc="0x0")


def _eigh_op(a, UPLO="L", values_only=False):
    if values_only:
        return tt.linalg.eigvalsh(a, UPLO)
    w, V = tt.linalg.eigh(a, UPLO)
    return w, V * _signs_tt(V)


def _eigh_reference(a, UPLO="L", values_only=False):
    lower = UPLO == "L"
    if a.size == 0:
        w, V = np.zeros(a.shape[:-1]), np.zeros(a.shape)
    else:
        w, V = _each(lambda m: sla.eigh(m.astype(np.float64), lower=lower), a, outs=2)
    if values_only:
        return w
    return w, V * _signs_np(V)


record("linalg_eigh", _eigh_op, DTYPES, _eigh_samples, _eigh_reference, tolerances=TOL,
       op_db=("linalg.eigh", "linalg.eigvalsh"))


# --------------------------------------------------------------------------- svd / svdvals / torch.svd
def _svd_samples(device, dtype):
    rng = rng_for("svd", dtype)
    yield SampleInput((_t(_general(rng, (2, 6, 4), dtype), dtype, device),), {"full_matrices": False},
                      desc="tall-batch")
    yield SampleInput((_t(_general(rng, (3, 7), dtype), dtype, device),), desc="wide-full")
    yield SampleInput((_t(_general(rng, (5, 5), dtype), dtype, device).mT,), {"legacy": True},
                      desc="torch.svd-transposed")
    if not _emulated(device) or dtype is tt.float64:
        yield SampleInput((_t(_general(rng, (17, 17), dtype), dtype, device),), {"values_only": True},
                          desc="svdvals-17")
    rank2 = _general(rng, (6, 2), dtype) @ _general(rng, (2, 5), dtype)
    yield SampleInput((_t(rank2, dtype, device),), {"full_matrices": False, "rank": 2}, desc="rank-deficient")
    yield SampleInput((_t(np.zeros((0, 3, 2)), dtype, device),), desc="empty-batch")


def _svd_op(a, full_matrices=True, values_only=False, legacy=False, rank=None):
    """The vectors that are defined: the first k (the first ``rank`` where the other singular
    values are zero, whose vectors are any basis of a null space)."""
    k = min(a.shape[-2:]) if rank is None else rank
    if values_only:
        return tt.linalg.svdvals(a)
    if legacy:
        U, S, V = tt.svd(a)
        sign = _signs_tt(U)
        return U * sign, S, V * sign
    U, S, Vh = tt.linalg.svd(a, full_matrices=full_matrices)
    U, Vh = U[..., :k], Vh[..., :k, :]
    sign = _signs_tt(U)
    return U * sign, S, Vh * sign.mT


def _svd_reference(a, full_matrices=True, values_only=False, legacy=False, rank=None):
    m, n = a.shape[-2:]
    k = min(m, n)
    if a.size == 0:
        U, S, Vh = np.zeros(a.shape[:-2] + (m, k)), np.zeros(a.shape[:-2] + (k,)), np.zeros(a.shape[:-2] + (k, n))
    else:
        U, S, Vh = _each(lambda x: sla.svd(x.astype(np.float64), full_matrices=False), a, outs=3)
    if values_only:
        return S
    if rank is not None:
        U, Vh = U[..., :rank], Vh[..., :rank, :]
    sign = _signs_np(U)
    if legacy:
        return U * sign, S, np.swapaxes(Vh, -1, -2) * sign
    return U * sign, S, Vh * np.swapaxes(sign, -1, -2)


record("linalg_svd", _svd_op, DTYPES, _svd_samples, _svd_reference, tolerances=TOL,
       op_db=("linalg.svd", "linalg.svdvals", "svd"))


# --------------------------------------------------------------------------- pinv, matrix_rank
def _rank_deficient(rng, dtype, batch=()):
    return (_general(rng, batch + (5, 2), dtype) @ _general(rng, batch + (2, 4), dtype)).astype(_np(dtype))


def _pinv_samples(device, dtype):
    rng = rng_for("pinv", dtype)
    yield SampleInput((_t(_rank_deficient(rng, dtype), dtype, device),), desc="rank-2")
    yield SampleInput((_t(_symmetric(rng, (4, 4), dtype), dtype, device),), {"hermitian": True}, desc="hermitian")
    if not _emulated(device):
        yield SampleInput((_t(_general(rng, (2, 4, 3), dtype), dtype, device),), desc="batch-tall")
        yield SampleInput((_t(_general(rng, (3, 5), dtype), dtype, device),), {"atol": 1.0, "rtol": 0.0}, desc="atol")
    yield SampleInput((_t(np.zeros((2, 0, 3)), dtype, device),), desc="empty")


def _tolerance(s, atol, rtol, m, n, dtype):
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else np.finfo(dtype).eps * max(m, n)
    return max(atol or 0.0, rtol * (s.max() if s.size else 0.0))


def _pinv_reference(a, hermitian=False, atol=None, rtol=None):
    m, n = a.shape[-2:]
    if a.size == 0:
        return np.zeros(a.shape[:-2] + (n, m))

    def one(x):
        U, s, Vh = np.linalg.svd(x.astype(np.float64), full_matrices=False)
        tol = _tolerance(s, atol, rtol, m, n, a.dtype)
        inv = np.where(s > tol, 1 / np.where(s > tol, s, 1), 0)
        return (Vh.T * inv) @ U.T
    return _each(one, a)


record("linalg.pinv", tt.linalg.pinv, DTYPES, _pinv_samples, _pinv_reference,
       tolerances={tt.float32: (1e-3, 1e-4), tt.float64: (1e-9, 1e-10)}, op_db=("pinverse",))


def _rank_samples(device, dtype):
    rng = rng_for("matrix_rank", dtype)
    yield SampleInput((_t(_rank_deficient(rng, dtype, (2,)), dtype, device),), desc="rank-2-batch")
    yield SampleInput((_t(_general(rng, (3, 4), dtype), dtype, device),), {"atol": 0.5, "rtol": 0.3}, desc="tolerances")
    w = np.diag([3.0, -2.0, 1e-9, 0.0]).astype(_np(dtype))
    yield SampleInput((_t(w, dtype, device),), {"hermitian": True}, desc="hermitian-diagonal")
    yield SampleInput((_t(np.zeros((2, 0, 3)), dtype, device),), desc="empty")


def _rank_of(a, hermitian=False, atol=None, rtol=None):
    m, n = a.shape[-2:]
    if a.size == 0:
        return np.zeros(a.shape[:-2], np.int64)
    flat = a.reshape((-1, m, n))
    out = []
    for x in flat:
        if x.size == 0:
            out.append(0)
            continue
        s = np.abs(np.linalg.eigvalsh(x.astype(np.float64))) if hermitian else \
            np.linalg.svd(x.astype(np.float64), compute_uv=False)
        out.append(int((s > _tolerance(s, atol, rtol, m, n, a.dtype)).sum()))
    return np.array(out, np.int64).reshape(a.shape[:-2])


record("linalg.matrix_rank", tt.linalg.matrix_rank, DTYPES, _rank_samples, _rank_of)


# --------------------------------------------------------------------------- cond
def _cond_samples(device, dtype):
    rng = rng_for("cond", dtype)
    a = _general(rng, (2, 4, 4), dtype) + 3 * np.eye(4, dtype=_np(dtype))
    ords = (None, 1) if _emulated(device) else (None, 2, -2, "fro", "nuc", 1, -1, math.inf, -math.inf)
    for p in ords:
        yield SampleInput((_t(a, dtype, device),), {"p": p}, desc=f"p={p}")
    singular = np.array([[1, 2, 3], [2, 4, 6], [1, 1, 1]], dtype=_np(dtype))
    yield SampleInput((_t(singular, dtype, device),), {"p": 1}, desc="singular-1")
    yield SampleInput((_t(np.zeros((2, 0, 0)), dtype, device),), {"p": "fro"}, desc="0x0")


def _cond_reference(a, p=None):
    if a.size == 0:
        return np.zeros(a.shape[:-2])

    def one(x):
        x = x.astype(np.float64)
        s = np.linalg.svd(x, compute_uv=False)
        if p is None or p == 2:
            return s[0] / s[-1]
        if p == -2:
            return s[-1] / s[0]
        if p == "nuc":
            return s.sum() * (1 / s).sum()
        if s[-1] == 0 or np.linalg.matrix_rank(x) < x.shape[-1]:
            return np.inf
        return np.linalg.norm(x, p) * np.linalg.norm(np.linalg.inv(x), p)
    return _each(lambda x: np.array(one(x)), a)


record("linalg.cond", tt.linalg.cond, DTYPES, _cond_samples, _cond_reference,
       tolerances={tt.float32: (1e-3, 1e-4), tt.float64: (1e-9, 1e-10)})


# --------------------------------------------------------------------------- norms
def _vector_norm_samples(device, dtype):
    rng = rng_for("vector_norm", dtype)
    x = _general(rng, (3, 7), dtype)
    ords = ((2, {}), (1, {"dim": 1}), (0, {"dim": (0, 1)}), (math.inf, {"dim": 0, "keepdim": True}),
            (-math.inf, {"dim": -1}), (3.5, {"dim": 1}), (-1, {}), (0.5, {"dim": 0}))
    for ord_, kw in (ords[2:6] if _emulated(device) else ords):      # (the vector norms' kernels are reduce.py's)
        yield SampleInput((_t(x, dtype, device), ord_), kw, desc=f"ord={ord_}")
    yield SampleInput((_t(_general(rng, (9, 5), dtype), dtype, device).mT, 2), {"dim": 1, "dtype": tt.float64},
                      desc="transposed-dtype", result_dtype=tt.float64)
    yield SampleInput((_t(np.zeros((0, 3)), dtype, device), 2), {"dim": 0}, desc="empty-dim")


def _vector_norm_reference(x, ord_, dim=None, keepdim=False, dtype=None):
    x = x.astype(np.float64)
    axes = tuple(range(x.ndim)) if dim is None else ((dim,) if isinstance(dim, int) else dim)
    a = np.abs(x)
    if ord_ == math.inf:
        r = a.max(axis=axes, keepdims=keepdim)
    elif ord_ == -math.inf:
        r = a.min(axis=axes, keepdims=keepdim)
    elif ord_ == 0:
        r = (x != 0).sum(axis=axes, keepdims=keepdim).astype(np.float64)
    else:
        with np.errstate(divide="ignore"):
            r = (a ** ord_).sum(axis=axes, keepdims=keepdim) ** (1.0 / ord_)
    return r


record("linalg.vector_norm", tt.linalg.vector_norm, DTYPES, _vector_norm_samples, _vector_norm_reference,
       tolerances={tt.float32: (1e-5, 1e-5), tt.float64: (1e-12, 1e-12)})


def _matrix_norm_samples(device, dtype):
    rng = rng_for("matrix_norm", dtype)
    x = _general(rng, (2, 3, 4), dtype)
    ords = ("fro", 1) if _emulated(device) else ("fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf)
    for ord_ in ords:
        yield SampleInput((_t(x, dtype, device), ord_), desc=f"ord={ord_}")
    for ord_ in (("nuc", -math.inf) if _emulated(device) else ("nuc", -2, -1, math.inf)):
        yield SampleInput((_t(x, dtype, device), ord_), {"dim": (2, 0), "keepdim": True}, desc=f"dims-keepdim-{ord_}")


def _matrix_norm_reference(x, ord_, dim=(-2, -1), keepdim=False):
    d0, d1 = (d % x.ndim for d in dim)
    m = np.moveaxis(x.astype(np.float64), (d0, d1), (-2, -1))
    r = _each(lambda a: np.array(np.linalg.norm(a, ord_)), m) if m.ndim > 2 else np.linalg.norm(m, ord_)
    if keepdim:
        for d in sorted((d0, d1)):
            r = np.expand_dims(r, d)
    return r


record("linalg.matrix_norm", tt.linalg.matrix_norm, DTYPES, _matrix_norm_samples, _matrix_norm_reference,
       tolerances={tt.float32: (1e-4, 1e-5), tt.float64: (1e-10, 1e-12)})


def _norm_samples(device, dtype):
    rng = rng_for("linalg.norm", dtype)
    yield SampleInput((_t(_general(rng, (2, 3, 4), dtype), dtype, device),), desc="flattened")
    yield SampleInput((_t(_general(rng, (3, 4), dtype), dtype, device), 1), desc="matrix-1")
    yield SampleInput((_t(_general(rng, (3, 4), dtype), dtype, device), 3), {"dim": 1}, desc="vector-3")
    yield SampleInput((_t(_general(rng, (2, 3, 4), dtype), dtype, device), "fro"), {"dim": (0, 2)}, desc="fro-dims")


def _norm_reference(x, ord_=None, dim=None, keepdim=False):
    x = x.astype(np.float64)
    if dim is None and ord_ is None:
        return np.linalg.norm(x.reshape(-1))
    return np.linalg.norm(x, ord_, axis=dim, keepdims=keepdim)


record("linalg.norm", tt.linalg.norm, DTYPES, _norm_samples, _norm_reference,
       tolerances={tt.float32: (1e-5, 1e-5), tt.float64: (1e-12, 1e-12)})


# --------------------------------------------------------------------------- matrix_power, matrix_exp
def _power_samples(device, dtype):
    rng = rng_for("matrix_power", dtype)
    a = _general(rng, (2, 4, 4), dtype) / 2 + np.eye(4, dtype=_np(dtype))
    for n in (0, 1, 3, 6, -2):
        yield SampleInput((_t(a, dtype, device), n), desc=f"n={n}")
    yield SampleInput((_t(_general(rng, (5, 5), dtype), dtype, device).mT, 2), desc="transposed")
    yield SampleInput((_t(np.zeros((0, 3, 3)), dtype, device), 3), desc="empty-batch")


record("linalg.matrix_power", tt.linalg.matrix_power, DTYPES, _power_samples,
       lambda a, n: np.linalg.matrix_power(a.astype(np.float64), n),
       tolerances={tt.float32: (1e-4, 1e-5), tt.float64: (1e-10, 1e-12)})


def _exp_samples(device, dtype):
    rng = rng_for("matrix_exp", dtype)
    scales = () if _emulated(device) else (1e-9, 1e-3, 0.05, 0.4, 1.2, 6.0)      # (the batch has three)
    for scale in scales:       # every degree, then scaling and squaring
        yield SampleInput((_t(_general(rng, (4, 4), dtype) * scale / 4, dtype, device),), desc=f"norm~{scale}")
    mixed = _general(rng, (3, 5, 5), dtype) * np.array([1e-4, 0.3, 8.0], dtype=_np(dtype))[:, None, None] / 5
    yield SampleInput((_t(mixed, dtype, device).mT,), desc="batch-of-degrees-transposed")
    yield SampleInput((_t(_general(rng, (2, 1, 1), dtype), dtype, device),), desc="1x1")
    yield SampleInput((_t(np.zeros((2, 0, 0)), dtype, device),), desc="0x0")


def _expm(a):
    if a.size == 0:
        return np.zeros(a.shape)
    return _each(lambda m: sla.expm(m.astype(np.float64)), a)


record("linalg.matrix_exp", tt.linalg.matrix_exp, DTYPES, _exp_samples, _expm,
       tolerances={tt.float32: (1e-5, 1e-6), tt.float64: (1e-12, 1e-13)}, op_db=("matrix_exp",))


# --------------------------------------------------------------------------- products
def _multi_dot_samples(device, dtype):
    rng = rng_for("multi_dot", dtype)
    shapes = ((7,), (7, 3), (3, 17), (17, 2))
    yield SampleInput(([_t(_general(rng, s, dtype), dtype, device) for s in shapes],), desc="vector-ends-4")
    yield SampleInput(([_t(_general(rng, s, dtype), dtype, device) for s in ((2, 9), (9, 1), (1, 5))],), desc="three")
    yield SampleInput(([_t(_general(rng, (4, 3), dtype), dtype, device).mT, _t(_general(rng, (4,), dtype), dtype,
                                                                              device)],), desc="two")


record("linalg.multi_dot", tt.linalg.multi_dot, DTYPES, _multi_dot_samples,
       lambda ts: np.linalg.multi_dot([t.detach().cpu().numpy().astype(np.float64) for t in ts]),
       tolerances={tt.float32: (1e-5, 1e-5), tt.float64: (1e-12, 1e-12)})


def _vecdot_samples(device, dtype):
    rng = rng_for("vecdot", dtype)
    yield SampleInput((_t(_general(rng, (2, 5), dtype), dtype, device), _t(_general(rng, (3, 1, 5), dtype), dtype,
                                                                          device)), desc="broadcast")
    yield SampleInput((_t(_general(rng, (5, 3), dtype), dtype, device).mT, _t(_general(rng, (3, 5), dtype), dtype,
                                                                             device)), {"dim": 0}, desc="dim0-strided")
    yield SampleInput((_t(_general(rng, (6,), dtype), dtype, device), _t(_general(rng, (6,), dtype), dtype, device)),
                      desc="vectors")


def _vecdot_reference(x, y, dim=-1):
    return (x.astype(np.float64) * y.astype(np.float64)).sum(axis=dim)


record("linalg.vecdot", tt.linalg.vecdot, DTYPES, _vecdot_samples, _vecdot_reference,
       tolerances={tt.float32: (1e-5, 1e-5), tt.float64: (1e-12, 1e-12)})


def _cross_samples(device, dtype):
    rng = rng_for("cross", dtype)
    make = (lambda s: _t(rng.integers(-9, 9, s), dtype, device)) if dtype is tt.int64 else \
        (lambda s: _t(_general(rng, s, dtype), dtype, device))
    yield SampleInput((make((1, 2, 3)), make((4, 1, 3))[0:1].expand(4, 1, 3)), desc="broadcast")
    yield SampleInput((make((3, 5)), make((5, 3)).mT), {"dim": 0}, desc="dim0-transposed")


def _cross_reference(a, b, dim=-1):
    return np.cross(a, b, axis=dim)


record("linalg.cross", tt.linalg.cross, DTYPES + (tt.int64,), _cross_samples, _cross_reference,
       tolerances={tt.float32: (1e-5, 1e-5), tt.float64: (1e-12, 1e-12)}, op_db=("cross",))


def _vander_samples(device, dtype):
    rng = rng_for("vander", dtype)
    make = (lambda s: _t(rng.integers(-4, 4, s), dtype, device)) if dtype is tt.int64 else \
        (lambda s: _t(_general(rng, s, dtype), dtype, device))
    yield SampleInput((make((2, 4)),), desc="batch")
    yield SampleInput((make((5,))[::2],), {"N": 6}, desc="strided-N")


def _vander_reference(x, N=None):
    n = x.shape[-1] if N is None else N
    return np.stack([np.vander(v, n, increasing=True) for v in x.reshape(-1, x.shape[-1])]).reshape(
        x.shape + (n,))


record("linalg.vander", tt.linalg.vander, DTYPES + (tt.int64,), _vander_samples, _vander_reference,
       tolerances={tt.float32: (1e-5, 1e-5), tt.float64: (1e-12, 1e-12)})


def _diagonal_samples(device, dtype):
    rng = rng_for("diagonal", dtype)
    yield SampleInput((_t(_general(rng, (2, 3, 4), dtype), dtype, device),), {"offset": 1}, desc="offset")
    yield SampleInput((_t(_general(rng, (3, 4, 2), dtype), dtype, device),), {"dim1": 0, "dim2": 2, "offset": -1},
                      desc="dims")


record("linalg.diagonal", tt.linalg.diagonal, DTYPES, _diagonal_samples,
       lambda a, offset=0, dim1=-2, dim2=-1: np.diagonal(a, offset, dim1, dim2))


# --------------------------------------------------------------------------- randomized low rank
def _lowrank_samples(device, dtype):
    rng = rng_for("lowrank", dtype)
    yield SampleInput((_t(_general(rng, (6, 2), dtype) @ _general(rng, (2, 5), dtype), dtype, device),), {"q": 3},
                      desc="rank-2-tall")
    if not _emulated(device):
        yield SampleInput((_t(_general(rng, (2, 3, 2), dtype) @ _general(rng, (2, 2, 7), dtype), dtype, device),),
                          {"q": 2}, desc="rank-2-wide-batch")


def _lowrank_op(fn):
    """The defining properties, as values: the reconstruction U diag(S) V^T (A itself for a
    matrix of rank <= q) and the singular values (exact there too)."""
    def op(a, **kw):
        tt.manual_seed(0)
        U, S, V = fn(a, **kw)
        return (U * S.unsqueeze(-2)) @ V.mT, S
    return op


def _lowrank_reference(center):
    def ref(a, q):
        a = a.astype(np.float64)
        if center:
            a = a - a.mean(axis=-2, keepdims=True)
        s = np.linalg.svd(a, compute_uv=False)[..., :q]
        return a, np.where(s > 1e-6 * s[..., :1], s, 0.0)
    return ref


LOWRANK_TOL = {tt.float32: (1e-4, 1e-4), tt.float64: (1e-8, 1e-8)}
record("svd_lowrank", _lowrank_op(tt.svd_lowrank), DTYPES, _lowrank_samples, _lowrank_reference(False),
       tolerances=LOWRANK_TOL)
record("pca_lowrank", _lowrank_op(lambda a, q: tt.pca_lowrank(a, q=q, center=True)), DTYPES, _lowrank_samples,
       _lowrank_reference(True), tolerances=LOWRANK_TOL)


# --------------------------------------------------------------------------- gradients (float64)
GRAD_RNG = np.random.default_rng(2468)


def _r(device, *shape, shift=0.0):
    a = GRAD_RNG.standard_normal(shape)
    if shift:
        a = a + shift * np.eye(shape[-1])
    return tt.tensor(a, dtype=tt.float64, device=device, requires_grad=True)


def _on_cpu_or_gpu(case):
    """Gradient cases run on cpu and on a real GPU. On the emulated device a gradgradcheck is
    hundreds of interpreted launches (through eigh / svd, thousands of Jacobi rounds): 10-45 s
    per op. The formulas are tritensor ops, the same on every device; the emulated kernels are
    checked by the parity records, and tests/test_linalg_spectral.py runs first derivatives of
    eigh, svd and matrix_exp there."""
    def make(device):
        if _emulated(device):
            pytest.skip("gradients through eigh / svd: cpu and real GPUs (see _on_cpu_or_gpu)")
        return case(device)
    return make


def _sym(x):
    return x + x.mT


GRAD_CASES.update({name: _on_cpu_or_gpu(case) for name, case in {
    # eigenvectors and singular vectors up to sign: their absolute values (torch's op_db does the same)
    "linalg_eigh": lambda d: (lambda x: (lambda wv: (wv[0], wv[1].abs()))(tt.linalg.eigh(_sym(x))),
                              (_r(d, 3, 3),), {}),
    "linalg_svd": lambda d: (lambda x: (lambda usv: (usv[0].abs(), usv[1], usv[2].abs()))(
        tt.linalg.svd(x, full_matrices=False)), (_r(d, 4, 3),), {}),
    "linalg.pinv": lambda d: (tt.linalg.pinv, (_r(d, 3, 2),), {}),
    "linalg.cond": lambda d: (lambda x: tt.linalg.cond(x) + tt.linalg.cond(x, "nuc") + tt.linalg.cond(x, 1),
                              (_r(d, 3, 3, shift=2),), {}),
    "linalg.matrix_norm": lambda d: (lambda x: tt.linalg.matrix_norm(x, "nuc") + tt.linalg.matrix_norm(x, -2)
                                     + tt.linalg.matrix_norm(x, math.inf), (_r(d, 3, 2),), {}),
    "svd_lowrank": lambda d: (lambda x: (tt.manual_seed(0), tt.svd_lowrank(x, q=2)[1])[1], (_r(d, 4, 3),), {}),
    "pca_lowrank": lambda d: (lambda x: (tt.manual_seed(0), tt.pca_lowrank(x, q=2)[1])[1], (_r(d, 4, 3),), {}),
}.items()})
GRAD_CASES.update({name: _on_cpu_or_gpu(case) for name, case in {
    "linalg.vector_norm": lambda d: (lambda x: tt.linalg.vector_norm(x, 3.5, dim=1) + tt.linalg.vector_norm(x, 1, 1),
                                     (_r(d, 2, 3),), {}),
    "linalg.norm": lambda d: (lambda x: tt.linalg.norm(x, 1), (_r(d, 2, 3),), {}),
    "linalg.matrix_power": lambda d: (lambda x: tt.linalg.matrix_power(x, 3) + tt.linalg.matrix_power(x, -2),
                                      (_r(d, 2, 2, shift=2),), {}),
    "linalg.matrix_exp": lambda d: (tt.linalg.matrix_exp, (_r(d, 2, 2),), {}),
    "linalg.multi_dot": lambda d: (lambda a, b, c: tt.linalg.multi_dot([a, b, c]), (_r(d, 2), _r(d, 2, 3), _r(d, 3, 2)),
                                   {}),
    "linalg.vecdot": lambda d: (tt.linalg.vecdot, (_r(d, 2, 3), _r(d, 3)), {}),
    "linalg.cross": lambda d: (tt.linalg.cross, (_r(d, 2, 3), _r(d, 1, 3)), {}),
    "linalg.vander": lambda d: (lambda x: tt.linalg.vander(x, N=4), (_r(d, 3),), {}),
    "linalg.diagonal": lambda d: (lambda x: tt.linalg.diagonal(x, offset=-1), (_r(d, 3, 3),), {}),
}.items()})
