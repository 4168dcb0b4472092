"""OpInfo records of the factorizations and solvers (ops/factorizations.py, ops/solvers.py).

References are LAPACK through SciPy (getrf, potrf, geqrf, orgqr, sytrf, sytrs, trtrs, getrs ...),
an oracle independent of tritensor's NumPy reference (its own recursive LU, substitutions,
Householder loops) and of its Triton kernels; torch's cpu kernels are the same LAPACK routines,
so pivots and the packed formats compare exactly. Matrices are small (5, and 17 to cross a
16-wide block), in batches of 2, with a transposed or broadcast operand and an empty batch.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
from scipy.linalg import lapack

import tritensor as tt
from opinfo import (CPU_ONLY_GRADGRAD, GRAD_CASES, NO_DERIVATIVE, NO_SECOND_DERIVATIVE, PARITY_ESCAPES, SampleInput, record, rng_for,
                    table_op)

DTYPES = (tt.float32, tt.float64)
TOL = {tt.float32: (2e-4, 2e-4), tt.float64: (1e-9, 1e-10)}


def _emulated(device):
    return device != "cpu" and tt.cuda.is_emulated()


def _big(device):
    """17 (crossing the 16-wide block) for the factorization kernels' own records; the records
    built on them use 7 on the emulated device, where every kernel step is interpreted Python."""
    return 7 if _emulated(device) else 17


def _t(a, dtype, device):
    return tt.tensor(np.asarray(a), dtype=dtype, device=device)


def _np(dtype):
    return np.float32 if dtype is tt.float32 else np.float64


def _each(fn, *arrays, outs=1):
    """fn applied matrix by matrix over the (broadcast) batch of ``arrays``; results stacked."""
    batch = np.broadcast_shapes(*[a.shape[:-2] for a in arrays])
    flat = [np.broadcast_to(a, batch + a.shape[-2:]).reshape((-1,) + a.shape[-2:]) for a in arrays]
    count = int(np.prod(batch)) if batch else 1
    results = [fn(*[f[i] for f in flat]) for i in range(count)]
    if outs == 1:
        results = [(r,) for r in results]
    stacked = []
    for j in range(outs):
        parts = [np.asarray(r[j]) for r in results]
        stacked.append(np.stack(parts).reshape(batch + parts[0].shape) if count else None)
    return tuple(stacked) if outs > 1 else stacked[0]


def _lapack(name, a):
    return lapack.get_lapack_funcs(name, (a,))


def spd(rng, shape, dtype):
    a = rng.standard_normal(shape)
    n = shape[-1]
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(_np(dtype))


def general(rng, shape, dtype):
    return rng.standard_normal(shape).astype(_np(dtype))


def symmetric(rng, shape, dtype):
    a = rng.standard_normal(shape)
    return (a + np.swapaxes(a, -1, -2)).astype(_np(dtype))


# --------------------------------------------------------------------------- Cholesky
def _cholesky_samples(device, dtype):
    rng = rng_for("cholesky", dtype)
    yield SampleInput((_t(spd(rng, (2, 5, 5), dtype), dtype, device),), desc="batch-5")
    yield SampleInput((_t(spd(rng, (17, 17), dtype), dtype, device),), {"upper": True}, desc="17-upper")
    s = spd(rng, (7, 7), dtype)
    noisy = s + np.tril(rng.standard_normal((7, 7)), -1).astype(s.dtype)     # upper of noisy^T = s's
    yield SampleInput((_t(noisy, dtype, device).mT,), desc="transposed-reads-lower-triangle")
    yield SampleInput((_t(np.zeros((0, 3, 3)), dtype, device),), desc="empty-batch")
    yield SampleInput((_t(np.zeros((2, 0, 0)), dtype, device),), desc="0x0")


def _cholesky_reference(a, upper=False):
    def one(m):
        tri = np.triu(m) if upper else np.tril(m)
        s = tri + np.swapaxes(np.triu(m, 1) if upper else np.tril(m, -1), -1, -2)
        c, info = _lapack("potrf", s)(s, lower=not upper, clean=True)
        return c, np.int32(info)
    if a.size == 0:
        return np.zeros(a.shape, a.dtype), np.zeros(a.shape[:-2], np.int32)
    return _each(one, a, outs=2)


record("linalg_cholesky_ex", lambda a, upper=False: tt.linalg.cholesky_ex(a, upper=upper), DTYPES,
       _cholesky_samples, _cholesky_reference, tolerances=TOL, op_db=("linalg.cholesky", "cholesky"))


# --------------------------------------------------------------------------- LU
def _lu_samples(device, dtype):
    rng = rng_for("lu", dtype)
    yield SampleInput((_t(general(rng, (2, 5, 5), dtype), dtype, device),), desc="batch-5")
    yield SampleInput((_t(general(rng, (17, 17), dtype), dtype, device),), desc="17")
    yield SampleInput((_t(general(rng, (3, 6), dtype), dtype, device),), desc="wide")
    yield SampleInput((_t(general(rng, (4, 7), dtype), dtype, device).mT,), desc="tall-transposed")
    singular = np.array([[1, 2, 3], [2, 4, 6], [1, 1, 1]], dtype=_np(dtype))
    yield SampleInput((_t(np.stack([np.eye(3, dtype=singular.dtype), singular]), dtype, device),), desc="singular")
    yield SampleInput((_t(np.zeros((0, 3, 3)), dtype, device),), desc="empty-batch")


def _lu_reference(a):
    def one(m):
        lu, piv, info = _lapack("getrf", m)(m)
        return lu, (piv + 1).astype(np.int32), np.int32(info)
    if a.size == 0:
        k = min(a.shape[-2:])
        return np.zeros(a.shape, a.dtype), np.zeros(a.shape[:-2] + (k,), np.int32), np.zeros(a.shape[:-2], np.int32)
    return _each(one, a, outs=3)


record("linalg_lu_factor_ex", tt.linalg.lu_factor_ex, DTYPES, _lu_samples, _lu_reference, tolerances=TOL,
       op_db=("linalg.lu_factor", "lu"))


def _plu_samples(device, dtype):
    rng = rng_for("plu", dtype)
    yield SampleInput((_t(general(rng, (2, 5, 5), dtype), dtype, device),), desc="batch-5")
    yield SampleInput((_t(general(rng, (3, 6), dtype), dtype, device),), desc="wide")
    yield SampleInput((_t(general(rng, (6, 4), dtype), dtype, device),), desc="tall")


record("linalg.lu", tt.linalg.lu, DTYPES, _plu_samples, lambda a: _each(lambda m: sla.lu(m), a, outs=3),
       tolerances=TOL, op_db=("lu_unpack",))


def _permutation_samples(device, dtype):
    rng = rng_for("perm", dtype)
    for m, k, desc in ((5, 5, "square"), (6, 3, "wide-m")):
        piv = np.stack([[rng.integers(j, m) + 1 for j in range(k)] for _ in range(2)]).astype(np.int32)
        yield SampleInput((_t(piv, tt.int32, device),), {"m": m}, desc=desc)


def _permutation_reference(piv, m):
    """The exchanges applied one by one to range(m), as LAPACK's laswp reads them."""
    out = []
    for row in piv.reshape(-1, piv.shape[-1]):
        p = list(range(m))
        for j, q in enumerate(row):
            p[j], p[q - 1] = p[q - 1], p[j]
        out.append(p)
    return np.array(out, dtype=np.int64).reshape(piv.shape[:-1] + (m,))


record("lu_pivots_to_permutation",
       lambda piv, m: table_op("lu_pivots_to_permutation", piv, m=m),
       (tt.int32,), _permutation_samples, _permutation_reference)


# --------------------------------------------------------------------------- triangular solves
def _trsm_samples(device, dtype):
    rng = rng_for("trsm", dtype)
    a = general(rng, (5, 5), dtype) + 4 * np.eye(5, dtype=_np(dtype))
    yield SampleInput((_t(a, dtype, device), _t(general(rng, (5, 3), dtype), dtype, device)), {"upper": True},
                      desc="upper")
    yield SampleInput((_t(a, dtype, device), _t(general(rng, (3, 5), dtype), dtype, device)),
                      {"upper": False, "left": False, "unitriangular": True}, desc="lower-right-unit")
    big = general(rng, (2, 1, 17, 17), dtype) + 6 * np.eye(17, dtype=_np(dtype))
    yield SampleInput((_t(big, dtype, device), _t(general(rng, (3, 2, 17), dtype), dtype, device).mT),
                      {"upper": False}, desc="broadcast-transposed-b")


def _trsm_reference(a, b, upper, left=True, unitriangular=False):
    if not left:
        return np.swapaxes(_trsm_reference(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), not upper, True,
                                           unitriangular), -1, -2)
    return _each(lambda m, r: sla.solve_triangular(m, r, lower=not upper, unit_diagonal=unitriangular), a, b)


record("linalg_solve_triangular", lambda a, b, **kw: tt.linalg.solve_triangular(a, b, **kw), DTYPES, _trsm_samples,
       _trsm_reference, tolerances=TOL, op_db=("triangular_solve",))


# --------------------------------------------------------------------------- Householder
def _geqrf_samples(device, dtype):
    rng = rng_for("geqrf", dtype)
    yield SampleInput((_t(general(rng, (2, 6, 4), dtype), dtype, device),), desc="tall-batch")
    yield SampleInput((_t(general(rng, (3, 5), dtype), dtype, device),), desc="wide")
    n = _big(device)
    yield SampleInput((_t(general(rng, (n, n), dtype), dtype, device).mT,), desc="big-transposed")


def _geqrf_reference(a):
    return _each(lambda m: _lapack("geqrf", m)(m)[:2], a, outs=2)


record("geqrf", tt.geqrf, DTYPES, _geqrf_samples, _geqrf_reference, tolerances=TOL, op_db=("linalg.qr", "qr"))


def _householder_samples(device, dtype):
    rng = rng_for("orgqr", dtype)
    n = _big(device)
    for shape, k in (((2, 6, 4), 4), ((5, 5), 3), ((n, 9 if n > 9 else n - 2), 5)):
        a = general(rng, shape, dtype)
        qr, tau = _geqrf_reference(a)
        yield SampleInput((_t(qr, dtype, device), _t(tau[..., :k], dtype, device)), desc=f"{shape}-k{k}")


def _householder_reference(a, tau):
    def one(m, t):
        return _lapack("orgqr", m)(m, t[0])[0]
    return _each(one, a, tau[..., None, :])


record("linalg_householder_product", tt.linalg.householder_product, DTYPES, _householder_samples,
       _householder_reference, tolerances=TOL, op_db=("ormqr",))


# --------------------------------------------------------------------------- LDL^T
def _ldl_samples(device, dtype):
    rng = rng_for("ldl", dtype)
    yield SampleInput((_t(symmetric(rng, (2, 5, 5), dtype), dtype, device),), desc="batch-5")
    n = _big(device)
    yield SampleInput((_t(symmetric(rng, (n, n), dtype), dtype, device),), desc="big")
    two_by_two = np.array([[0, 1, 2], [1, 0, 3], [2, 3, 0]], dtype=_np(dtype))     # 2 x 2 pivots
    yield SampleInput((_t(two_by_two, dtype, device),), desc="2x2-pivots")


def _ldl_reference(a):
    def one(m):
        ld, ipiv, info = _lapack("sytrf", m)(m, lower=1)
        return np.tril(ld), ipiv.astype(np.int32), np.int32(info)
    return _each(one, a, outs=3)


record("linalg_ldl_factor_ex", tt.linalg.ldl_factor_ex, DTYPES, _ldl_samples, _ldl_reference, tolerances=TOL,
       op_db=("linalg.ldl_factor",))


def _ldl_solve_samples(device, dtype):
    rng = rng_for("ldl_solve", dtype)
    for a, b, desc in ((symmetric(rng, (2, 5, 5), dtype), general(rng, (2, 5, 3), dtype), "batch"),
                       (np.array([[0, 1, 2], [1, 0, 3], [2, 3, 0]], dtype=_np(dtype)),
                        general(rng, (2, 3, 2), dtype), "2x2-pivots-broadcast-b")):
        ld, piv, _ = _ldl_reference(a)
        yield SampleInput((_t(ld, dtype, device), _t(piv, tt.int32, device), _t(b, dtype, device)), desc=desc)


def _ldl_solve_reference(ld, piv, b):
    return _each(lambda m, p, r: _lapack("sytrs", m)(m, p[0], r, lower=1)[0], ld, piv[..., None, :].astype(np.int32),
                 b)


record("linalg_ldl_solve", tt.linalg.ldl_solve, DTYPES, _ldl_solve_samples, _ldl_solve_reference, tolerances=TOL)


# --------------------------------------------------------------------------- solve, inv, lu_solve
def _solve_samples(device, dtype):
    rng = rng_for("solve", dtype)
    a = general(rng, (2, 5, 5), dtype)
    yield SampleInput((_t(a, dtype, device), _t(general(rng, (2, 5, 3), dtype), dtype, device)), desc="batch")
    yield SampleInput((_t(a, dtype, device), _t(general(rng, (2, 5), dtype), dtype, device)), desc="batched-vectors")
    yield SampleInput((_t(a[0], dtype, device), _t(general(rng, (5,), dtype), dtype, device)), desc="vector")
    n = _big(device)
    yield SampleInput((_t(general(rng, (n, n), dtype), dtype, device).mT,
                       _t(general(rng, (2, n, 2), dtype), dtype, device)), desc="broadcast-transposed-a")
    yield SampleInput((_t(a, dtype, device), _t(general(rng, (2, 3, 5), dtype), dtype, device)), {"left": False},
                      desc="right")


def _solve_reference(a, b, left=True):
    if not left:
        x, info = _solve_reference(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2))
        return np.swapaxes(x, -1, -2), info
    vector = b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])
    bm = b[..., None] if vector else b
    x = _each(lambda m, r: sla.lu_solve(sla.lu_factor(m), r), a, bm)
    return (x[..., 0] if vector else x), np.zeros(a.shape[:-2], np.int32)


record("linalg_solve_ex", tt.linalg.solve_ex, DTYPES, _solve_samples, _solve_reference, tolerances=TOL,
       op_db=("linalg.solve", "linalg.tensorsolve"))


def _inv_samples(device, dtype):
    rng = rng_for("inv", dtype)
    yield SampleInput((_t(general(rng, (2, 5, 5), dtype), dtype, device),), desc="batch")
    n = _big(device)
    yield SampleInput((_t(general(rng, (n, n), dtype), dtype, device).mT,), desc="big-transposed")
    yield SampleInput((_t(np.zeros((2, 0, 0)), dtype, device),), desc="0x0")


def _inv_reference(a):
    if a.size == 0:
        return np.zeros(a.shape, a.dtype), np.zeros(a.shape[:-2], np.int32)
    return _each(sla.inv, a), np.zeros(a.shape[:-2], np.int32)


record("linalg_inv_ex", tt.linalg.inv_ex, DTYPES, _inv_samples, _inv_reference, tolerances=TOL,
       op_db=("linalg.inv", "linalg.tensorinv"))


def _lu_solve_samples(device, dtype):
    rng = rng_for("lu_solve", dtype)
    a = general(rng, (2, 5, 5), dtype)
    lu, piv, _ = _lu_reference(a)
    LU, P = _t(lu, dtype, device), _t(piv, tt.int32, device)
    yield SampleInput((LU, P, _t(general(rng, (2, 5, 3), dtype), dtype, device)), desc="batch")
    yield SampleInput((LU, P, _t(general(rng, (3, 1, 5, 2), dtype), dtype, device)), {"adjoint": True},
                      desc="adjoint-broadcast")
    yield SampleInput((LU, P, _t(general(rng, (2, 2, 5), dtype), dtype, device)), {"left": False}, desc="right")
    n = _big(device)
    lu, piv, _ = _lu_reference(general(rng, (n, n), dtype))
    yield SampleInput((_t(lu, dtype, device), _t(piv, tt.int32, device),
                       _t(general(rng, (n, 2), dtype), dtype, device).mT), {"left": False, "adjoint": True},
                      desc="big-right-adjoint")


def _lu_solve_reference(lu, piv, b, left=True, adjoint=False):
    if not left:      # X A = B <=> A^T X^T = B^T
        return np.swapaxes(_lu_solve_reference(lu, piv, np.swapaxes(b, -1, -2), True, not adjoint), -1, -2)
    return _each(lambda m, p, r: sla.lu_solve((m, p[0] - 1), r, trans=1 if adjoint else 0), lu,
                 piv[..., None, :], b)


record("linalg_lu_solve", tt.linalg.lu_solve, DTYPES, _lu_solve_samples, _lu_solve_reference, tolerances=TOL,
       op_db=("lu_solve",))


# --------------------------------------------------------------------------- determinants
def _det_samples(device, dtype):
    rng = rng_for("det", dtype)
    yield SampleInput((_t(general(rng, (2, 5, 5), dtype), dtype, device),), desc="batch")
    n = _big(device)
    yield SampleInput((_t(general(rng, (n, n), dtype) / 3, dtype, device),), desc="big")
    # singular with an elimination that is exact in any arithmetic (power-of-two multipliers; the
    # second column a multiple of the first): U gets an exactly zero pivot with or without fused
    # multiply-adds. [[1, 2, 3], [2, 4, 6], [1, 1, 1]] left 2 - 6 * fl(1/3) = -4e-8 to a GPU's FMA
    # (the first H200 run: slogdet's sign 1, not 0, in float32 and float64)
    singular = np.array([[4, 2, 1], [2, 1, 0.5], [1, 3, 2]], dtype=_np(dtype))
    yield SampleInput((_t(singular, dtype, device).mT,), desc="singular-transposed")
    yield SampleInput((_t(np.zeros((2, 0, 0)), dtype, device),), desc="0x0")


record("linalg.det", tt.linalg.det, DTYPES, _det_samples,
       lambda a: _each(lambda m: np.array(sla.det(m)), a) if a.size else np.ones(a.shape[:-2]),
       tolerances={tt.float32: (1e-3, 1e-4), tt.float64: (1e-9, 1e-10)}, op_db=("logdet",))


def _slogdet_reference(a):
    if a.size == 0:
        return np.ones(a.shape[:-2]), np.zeros(a.shape[:-2])
    def one(m):
        d = sla.det(m)
        return np.sign(d), np.log(abs(d))
    return _each(one, a, outs=2)


record("linalg.slogdet", tt.linalg.slogdet, DTYPES, _det_samples, _slogdet_reference,
       tolerances={tt.float32: (1e-4, 1e-4), tt.float64: (1e-9, 1e-10)})


# --------------------------------------------------------------------------- least squares
def _lstsq_samples(device, dtype):
    rng = rng_for("lstsq", dtype)
    yield SampleInput((_t(general(rng, (2, 7, 4), dtype), dtype, device), _t(general(rng, (2, 7, 2), dtype), dtype,
                                                                                device)), {"driver": "gels"},
                      desc="tall-batch")
    yield SampleInput((_t(general(rng, (4, 6), dtype), dtype, device), _t(general(rng, (4,), dtype), dtype, device)),
                      {"driver": "gels"}, desc="wide-vector")


def _lstsq_reference(a, b, driver=None):
    vector = b.ndim == a.ndim - 1
    bm = b[..., None] if vector else b
    x = _each(lambda m, r: np.linalg.lstsq(m.astype(np.float64), r.astype(np.float64), rcond=None)[0], a, bm)
    m, n = a.shape[-2:]
    if m > n:
        residuals = ((a.astype(np.float64) @ x - bm) ** 2).sum(-2)
    else:
        residuals = np.zeros((0,))
    return (x[..., 0] if vector else x), residuals, np.zeros((0,), np.int64), np.zeros((0,))


record("linalg.lstsq", tt.linalg.lstsq, DTYPES, _lstsq_samples, _lstsq_reference,
       tolerances={tt.float32: (1e-3, 1e-3), tt.float64: (1e-9, 1e-10)})
PARITY_ESCAPES["linalg_lstsq_svd"] = ("the SVD drivers of lstsq run on cpu only, as torch's: "
                                      "tests/test_linalg_solvers.py (test_lstsq_drivers)")


# --------------------------------------------------------------------------- gradients (float64)
GRAD_RNG = np.random.default_rng(4321)


def _r(device, *shape, shift=0.0):
    a = GRAD_RNG.standard_normal(shape)
    if shift:
        a = a + shift * np.eye(shape[-1])
    return tt.tensor(a, dtype=tt.float64, device=device, requires_grad=True)


def _spd(x):
    return x @ x.mT + tt.eye(x.shape[-1], dtype=x.dtype, device=x.device)


def _piv(device):
    return tt.tensor([2, 3, 3], dtype=tt.int32, device=device)


# The factorizations' second derivatives are thousands of interpreted launches (minutes per op):
# gradgradcheck runs on cpu (and a real GPU) only (opinfo.CPU_ONLY_GRADGRAD); gradcheck runs on
# every device.
_FACTORIZATION_GRADS = {
    "linalg_cholesky_ex": lambda d: (lambda x: tt.linalg.cholesky(_spd(x), upper=True), (_r(d, 3, 3),), {}),
    "linalg_lu_factor_ex": lambda d: (lambda a: tt.linalg.lu_factor(a)[0], (_r(d, 3, 3),), {}),
    "linalg.lu": lambda d: (lambda a: tt.linalg.lu(a)[1:], (_r(d, 2, 3),), {}),
    "linalg_solve_triangular": lambda d: (lambda a, b: tt.linalg.solve_triangular(a, b, upper=True, left=False),
                                          (_r(d, 3, 3, shift=3), _r(d, 2, 3)), {}),
    "linalg_solve_ex": lambda d: (tt.linalg.solve, (_r(d, 2, 3, 3, shift=3), _r(d, 2, 3)), {}),
    "linalg_inv_ex": lambda d: (tt.linalg.inv, (_r(d, 3, 3, shift=3),), {}),
    "linalg_lu_solve": lambda d: (lambda lu, b: tt.linalg.lu_solve(lu, _piv(d), b, adjoint=True),
                                  (_r(d, 3, 3, shift=3), _r(d, 3, 2)), {}),
    "linalg.det": lambda d: (tt.linalg.det, (_r(d, 3, 3),), {}),
    "linalg.slogdet": lambda d: (lambda a: tt.linalg.slogdet(a)[1], (_r(d, 3, 3, shift=3),), {}),
    "linalg.qr": lambda d: (tt.linalg.qr, (_r(d, 3, 2),), {}),
    "linalg_householder_product": lambda d: (tt.linalg.householder_product, (_r(d, 3, 2), _r(d, 2)), {}),
    "linalg.lstsq": lambda d: (lambda a, b: tt.linalg.lstsq(a, b, driver="gels")[:2], (_r(d, 3, 2), _r(d, 3, 1)), {}),
    "geqrf": lambda d: (tt.geqrf, (_r(d, 3, 2),), {}),
    # the ops whose only input is a triangular factor are checked on that triangle (torch's
    # gradcheck_wrapper_triangular_input): their formulas give the gradient of a triangular L
    "cholesky_solve": lambda d: (lambda b, l: tt.cholesky_solve(b, l.tril()), (_r(d, 3, 2), _r(d, 3, 3, shift=3)), {}),
    "cholesky_inverse": lambda d: (lambda l: tt.cholesky_inverse(l.triu(), upper=True), (_r(d, 3, 3, shift=3),), {}),
    "triangular_solve": lambda d: (lambda b, a: tt.triangular_solve(b, a, upper=False, transpose=True),
                                   (_r(d, 3, 2), _r(d, 3, 3, shift=3)), {}),
    "lu_unpack": lambda d: (lambda lu: tt.lu_unpack(lu, _piv(d))[1:], (_r(d, 3, 3),), {}),
    "ormqr": lambda d: (lambda a, t, c: tt.ormqr(a, t, c, left=False, transpose=True), (_r(d, 3, 2), _r(d, 2), _r(d, 2, 3)),
                        {}),
    "logdet": lambda d: (lambda x: tt.logdet(_spd(x)), (_r(d, 3, 3),), {}),
}
GRAD_CASES.update(_FACTORIZATION_GRADS)
CPU_ONLY_GRADGRAD.update(_FACTORIZATION_GRADS)
NO_DERIVATIVE["geqrf"] = "geqrf"
NO_SECOND_DERIVATIVE["geqrf"] = "geqrf"
