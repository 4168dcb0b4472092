"""Launchers of kernels/linalg.py: Cholesky, LU, triangular solves, the LU solve, solve and inv,
the pivots' permutation, Householder QR and its orthogonal factor.

Batches. Every operand is read in place with its own strides; the batch dims of the operands
are broadcast to the output's and coalesced, the innermost runs on grid axis 0 (one program
per matrix), any further ones are looped over here (``_batches``).

Small and large matrices. A matrix of at most ``small_n`` rows and columns is factorised by one
program holding it in registers (``cholesky_kernel``, ``lu_kernel``; the solves hold the
right-hand side's block of columns). Larger ones take blocked algorithms whose O(n^3) work is
the Triton matmul (backends/triton/matmul.py), in panels of ``panel`` columns:

    Cholesky   for each diagonal block: factor it (cholesky_kernel, in place); L21 = A21 L11^-T
               (trsm on the transposed views); A22 -= L21 L21^T (matmul); tril at the end
    LU         for each panel: lu_panel_kernel (pivot search and the panel's updates in memory,
               row exchanges across the whole matrix); U12 = L11^-1 A12 (trsm, unit);
               A22 -= L21 U12 (matmul)
    trsm       for each diagonal block of A: X_i = A_ii^-1 X_i (trsm_kernel); the blocks after
               it (before it, for an upper A) lose A_ji X_i (matmul)
    LU solve   the row exchanges (laswp_kernel), then the blocked trsm twice
    solve/inv  LU, then the LU solve (inv: of the identity)

QR (geqrf_kernel) and its Q (householder_kernel) run unblocked in memory, in chunks, at any
size. ``SETTINGS`` holds the sizes (tests lower ``small_n`` and ``panel`` to reach the blocked
paths with small matrices). The kernel module is imported on first use.
"""
from __future__ import annotations

import itertools

import numpy as np

from ...runtime.launch import pointer
from .. import triton as tb
from . import join as tj
from . import matmul as tmm

GPU = {"small_n": 64, "panel": 32, "rhs_block": 32, "row_block": 64, "col_block": 64, "warps": 4}
INTERPRETER = {"small_n": 32, "panel": 16, "rhs_block": 16, "row_block": 16, "col_block": 16, "warps": 4}
INTERPRETER_FAST = dict(GPU)   # the emulated device's default profile (_plan.py): the GPU's larger tiles

_K = None


def _kernels():
    global _K
    if _K is None:
        tb._kernels()
        from tritensor.kernels import linalg as linalg_k
        _K = linalg_k
    return _K


def settings():
    return tb.pick(GPU, INTERPRETER_FAST, INTERPRETER)


def _pow2(n, floor=2):
    return max(tb._next_pow2(n), floor)


# --------------------------------------------------------------------------- views and batches
def _view(t, r0, c0, rows, cols, transpose=False):
    """The (rows x cols) block at (r0, c0) of every matrix of ``t`` (transposed: of t^T)."""
    shape, strides = tuple(t.shape), tuple(t.stride())
    sr, sc = strides[-2:]
    if transpose:
        sr, sc = sc, sr
    return tb._View(shape[:-2] + (rows, cols), strides[:-2] + (sr, sc), t._offset + r0 * sr + c0 * sc,
                    t._storage, t.dtype)


def _mT(t):
    return _view(t, 0, 0, t.shape[-1], t.shape[-2], transpose=True)


def _batch_strides(t, batch, tail):
    """t's strides over ``batch`` (0 where t is broadcast): its dims other than the last
    ``tail`` ones."""
    shape, strides = tuple(t.shape[:len(t.shape) - tail]), tuple(t.stride()[:len(t.shape) - tail])
    view = tb._View(shape, strides, 0, None, t.dtype)
    return tb.broadcast_strides(view, batch)


def _batches(batch, operands):
    """Launch pieces over the batch: yields (count, pointers, batch strides), one pointer and
    one stride per (tensor, tail) operand, the count matrices to run on grid axis 0."""
    bstrides = [_batch_strides(t, batch, tail) for t, tail in operands]
    bshape, bstrides = tb.coalesce(batch, bstrides)
    if not bshape:
        yield 1, [pointer(t) for t, _ in operands], [0] * len(operands)
        return
    inner = bshape[-1]
    for idx in itertools.product(*(range(s) for s in bshape[:-1])):
        offs = [sum(i * st for i, st in zip(idx, s[:-1])) for s in bstrides]
        yield inner, [pointer(t, o) for (t, _), o in zip(operands, offs)], [s[-1] for s in bstrides]


def _mat(t):
    return tuple(int(s) for s in t.stride()[-2:])


# --------------------------------------------------------------------------- Cholesky
def _cholesky_small(out, x, info, upper, offset=0, keep_info=False):
    k = _kernels()
    n = int(out.shape[-1])
    batch = tuple(out.shape[:-2])
    for count, (px, po, pi), (bx, bo, bi) in _batches(batch, [(x, 2), (out, 2), (info, 0)]):
        tb._run(k.cholesky_kernel, (count,), px, po, pi, n, offset, bx, *_mat(x), bo, *_mat(out), bi,
                UPPER=bool(upper), KEEP_INFO=keep_info, BLOCK=_pow2(n), num_warps=settings()["warps"])


def cholesky(outs, x, *, compute, upper):
    """outs = (the Cholesky factor of x (lower, or U = L^T with ``upper``) read from x's lower
    (upper) triangle, info = the order of the first leading minor that is not positive
    definite (0: none))."""
    out, info = outs
    n = int(out.shape[-1])
    cfg = settings()
    if n <= cfg["small_n"]:
        _cholesky_small(out, x, info, upper)
        return
    tb.copy(out, x)
    tb.fill(info, 0)                         # the diagonal blocks keep the first failure
    work = _mT(out) if upper else out       # the lower triangle of work is the one x gave
    nb = cfg["panel"]
    for k0 in range(0, n, nb):
        b = min(nb, n - k0)
        diag = _view(work, k0, k0, b, b)
        _cholesky_small(diag, diag, info, False, offset=k0, keep_info=True)
        rest = n - k0 - b
        if rest:
            a21 = _view(work, k0 + b, k0, rest, b)
            _trsm(diag, _mT(a21), _mT(a21), upper=False, unit=False)       # L21 = A21 L11^-T
            a22 = _view(work, k0 + b, k0 + b, rest, rest)
            tmm.matmul(a22, a21, _mT(a21), a22, alpha=-1.0, beta=1.0)     # A22 -= L21 L21^T
    tj.tri(out, out, 0, bool(upper))


# --------------------------------------------------------------------------- LU
def lu_factor(outs, x, *, compute, pivot):
    """outs = (the packed LU factorization of x (getrf), its 1-based row exchanges, its first
    zero pivot (1-based; 0: none))."""
    out, pivots, info = outs
    m, n = (int(s) for s in out.shape[-2:])
    kmin = min(m, n)
    cfg = settings()
    k = _kernels()
    batch = tuple(out.shape[:-2])
    if max(m, n) <= cfg["small_n"]:
        for count, (px, po, pp, pi), (bx, bo, bp, bi) in _batches(
                batch, [(x, 2), (out, 2), (pivots, 1), (info, 0)]):
            tb._run(k.lu_kernel, (count,), px, po, pp, pi, m, n, bx, *_mat(x), bo, *_mat(out), bp, bi,
                    PIVOT=bool(pivot), BLOCK_M=_pow2(m), BLOCK_N=_pow2(n), num_warps=cfg["warps"])
        return
    tb.copy(out, x)
    tb.fill(info, 0)                         # the panels keep the first zero pivot
    nb = cfg["panel"]
    for k0 in range(0, kmin, nb):
        w = min(nb, kmin - k0)
        for count, (po, pp, pi), (bo, bp, bi) in _batches(batch, [(out, 2), (pivots, 1), (info, 0)]):
            tb._run(k.lu_panel_kernel, (count,), po, pp, pi, m, n, k0, w, bo, *_mat(out), bp, bi,
                    PIVOT=bool(pivot), BLOCK_R=cfg["row_block"], BLOCK_C=cfg["col_block"], BLOCK_W=_pow2(w),
                    num_warps=cfg["warps"])
        right = n - k0 - w
        if right:
            l11 = _view(out, k0, k0, w, w)
            a12 = _view(out, k0, k0 + w, w, right)
            _trsm(l11, a12, a12, upper=False, unit=True)                  # U12 = L11^-1 A12
            below = m - k0 - w
            if below:
                a21 = _view(out, k0 + w, k0, below, w)
                a22 = _view(out, k0 + w, k0 + w, below, right)
                tmm.matmul(a22, a21, a12, a22, alpha=-1.0, beta=1.0)      # A22 -= L21 U12


def lu_pivots_to_permutation(out, piv, *, compute, m):
    """out (int64) = the permutation the 1-based row exchanges ``piv`` make of range(m)."""
    k = _kernels()
    piv = _contiguous_last(piv)
    steps = int(piv.shape[-1])
    for count, (pp, po), (bp, bo) in _batches(tuple(out.shape[:-1]), [(piv, 1), (out, 1)]):
        tb._run(k.permutation_kernel, (count,), pp, po, int(m), steps, bp, bo, BLOCK_M=_pow2(m),
                num_warps=settings()["warps"])


def _contiguous_last(t):
    """t itself when its last dim is contiguous (the kernels index pivots by position), else a
    contiguous copy."""
    if t.shape[-1] <= 1 or t.stride()[-1] == 1:
        return t
    copy = tb._scratch(t, tuple(t.shape), t.dtype)
    tb.copy(copy, t)
    return copy


# --------------------------------------------------------------------------- triangular solves
def _trsm_small(A, B, X, upper, unit):
    k = _kernels()
    cfg = settings()
    n, nrhs = (int(s) for s in X.shape[-2:])
    block_k = min(cfg["rhs_block"], _pow2(nrhs))
    batch = tuple(X.shape[:-2])
    for count, (pa, pb, px), (ba, bb, bx) in _batches(batch, [(A, 2), (B, 2), (X, 2)]):
        tb._run(k.trsm_kernel, (count, tb._cdiv(nrhs, block_k)), pa, pb, px, n, nrhs,
                ba, *_mat(A), bb, *_mat(B), bx, *_mat(X), UPPER=bool(upper), UNIT=bool(unit),
                BLOCK_N=_pow2(n), BLOCK_K=block_k, num_warps=cfg["warps"])


def _trsm(A, B, X, upper, unit):
    """X = A^-1 B for triangular A (batch dims broadcast to X's); X may be B's memory."""
    n, nrhs = (int(s) for s in X.shape[-2:])
    if n == 0 or nrhs == 0 or X.numel() == 0:
        return
    cfg = settings()
    if n <= cfg["small_n"]:
        _trsm_small(A, B, X, upper, unit)
        return
    if B is not X:
        tb.copy(X, B)
    nb = cfg["panel"]
    starts = list(range(0, n, nb))
    for i0 in (reversed(starts) if upper else starts):
        b = min(nb, n - i0)
        xi = _view(X, i0, 0, b, nrhs)
        _trsm_small(_view(A, i0, i0, b, b), xi, xi, upper, unit)
        if upper and i0:
            rest = _view(X, 0, 0, i0, nrhs)
            tmm.matmul(rest, _view(A, 0, i0, i0, b), xi, rest, alpha=-1.0, beta=1.0)
        elif not upper and i0 + b < n:
            rest = _view(X, i0 + b, 0, n - i0 - b, nrhs)
            tmm.matmul(rest, _view(A, i0 + b, i0, n - i0 - b, b), xi, rest, alpha=-1.0, beta=1.0)


def solve_triangular(out, a, b, *, compute, upper, left=True, unitriangular=False):
    """out = A^-1 B (left) or B A^-1, A triangular (only its triangle read), batches broadcast."""
    if not left:      # X A = B  <=>  A^T X^T = B^T
        _trsm(_mT(a), _mT(b), _mT(out), not upper, unitriangular)
        return
    _trsm(a, b, out, upper, unitriangular)


# --------------------------------------------------------------------------- solves on LU
def _laswp(X, piv, reverse):
    """Apply the 1-based row exchanges piv (in order, or undone in reverse) to X in place."""
    k = _kernels()
    cfg = settings()
    n, ncols = (int(s) for s in X.shape[-2:])
    piv = _contiguous_last(piv)
    block = cfg["col_block"]
    for count, (px, pp), (bx, bp) in _batches(tuple(X.shape[:-2]), [(X, 2), (piv, 1)]):
        tb._run(k.laswp_kernel, (count, tb._cdiv(ncols, block)), px, pp, int(piv.shape[-1]), ncols,
                bx, *_mat(X), bp, REVERSE=bool(reverse), BLOCK_C=block, num_warps=cfg["warps"])


def _lu_solve_left(out, lu, piv, b, adjoint):
    """out = A^-1 B (adjoint: A^-T B) for A = P L U packed in (lu, piv); batches broadcast."""
    n, nrhs = (int(s) for s in out.shape[-2:])
    if out.numel() == 0:
        return
    cfg = settings()
    if n <= cfg["small_n"]:
        k = _kernels()
        piv = _contiguous_last(piv)
        block_k = min(cfg["rhs_block"], _pow2(nrhs))
        for count, (pl, pp, pb, po), (bl, bp, bb, bo) in _batches(
                tuple(out.shape[:-2]), [(lu, 2), (piv, 1), (b, 2), (out, 2)]):
            tb._run(k.lu_solve_kernel, (count, tb._cdiv(nrhs, block_k)), pl, pp, pb, po, n, nrhs,
                    bl, *_mat(lu), bp, bb, *_mat(b), bo, *_mat(out), ADJOINT=bool(adjoint),
                    BLOCK_N=_pow2(n), BLOCK_K=block_k, num_warps=cfg["warps"])
        return
    tb.copy(out, b)
    if not adjoint:
        _laswp(out, piv, False)
        _trsm(lu, out, out, upper=False, unit=True)
        _trsm(lu, out, out, upper=True, unit=False)
    else:
        _trsm(_mT(lu), out, out, upper=False, unit=False)      # U^T y = b
        _trsm(_mT(lu), out, out, upper=True, unit=True)        # L^T z = y
        _laswp(out, piv, True)


def lu_solve(out, lu, piv, b, *, compute, left=True, adjoint=False):
    """out = the solution of A X = B, A^T X = B, X A = B or X A^T = B (getrs)."""
    if not left:      # X A = B <=> A^T X^T = B^T
        _lu_solve_left(_mT(out), lu, piv, _mT(b), not adjoint)
        return
    _lu_solve_left(out, lu, piv, b, adjoint)


def _factor(a, info):
    """(LU, pivots) of every matrix of a (scratch buffers), info written."""
    n = int(a.shape[-1])
    batch = tuple(a.shape[:-2])
    lu = tb._scratch(a, batch + (n, n), a.dtype)
    piv = tb._scratch(a, batch + (n,), tb._dtype("int32"))
    lu_factor((lu, piv, info), a, compute=None, pivot=True)
    return lu, piv


def solve(outs, a, b, *, compute):
    """outs = (A^-1 B for each (broadcast) pair, the first zero pivot of each matrix of A): A
    factorised over its own batch, then the LU solve."""
    out, info = outs
    lu, piv = _factor(a, info)
    _lu_solve_left(out, lu, piv, b, False)


def inv(outs, a, *, compute):
    """outs = (A^-1: the LU solve of the identity, the first zero pivot of each matrix)."""
    out, info = outs
    n = int(a.shape[-1])
    lu, piv = _factor(a, info)
    eye = tb.upload(a, np.eye(n, dtype=np.dtype(a.dtype.name)))
    eye = tb._View(tuple(out.shape), (0,) * (len(out.shape) - 2) + (n, 1), 0, eye._storage, a.dtype)
    _lu_solve_left(out, lu, piv, eye, False)


# --------------------------------------------------------------------------- Householder
def geqrf(outs, x, *, compute):
    """outs = (x's Householder QR in LAPACK's packed form, the reflectors' factors tau)."""
    out, tau = outs
    k = _kernels()
    cfg = settings()
    m, n = (int(s) for s in out.shape[-2:])
    tb.copy(out, x)
    for count, (po, pt), (bo, bt) in _batches(tuple(out.shape[:-2]), [(out, 2), (tau, 1)]):
        tb._run(k.geqrf_kernel, (count,), po, pt, m, n, bo, *_mat(out), bt,
                BLOCK_R=cfg["row_block"], BLOCK_C=cfg["col_block"], num_warps=cfg["warps"])


def householder_product(out, a, tau, *, compute):
    """out = the first n columns of the product of the reflectors stored in (a, tau) (orgqr)."""
    k = _kernels()
    cfg = settings()
    m, n = (int(s) for s in out.shape[-2:])
    tau = _contiguous_last(tau)
    for count, (pa, pt, po), (ba, bt, bo) in _batches(tuple(out.shape[:-2]), [(a, 2), (tau, 1), (out, 2)]):
        tb._run(k.householder_kernel, (count,), pa, pt, po, m, n, int(tau.shape[-1]), ba, *_mat(a), bt,
                bo, *_mat(out), BLOCK_R=cfg["row_block"], BLOCK_C=cfg["col_block"], num_warps=cfg["warps"])


# --------------------------------------------------------------------------- on the host
def _to_host(t):
    return np.array(t._to_host_array(), copy=True)


def _write(dst, array):
    array = np.asarray(array)
    flat = tb.upload(dst, array.reshape(-1))        # (upload makes a 0-d array 1-d)
    tb.copy(dst, tb._View(array.shape, tb._contiguous_strides(array.shape), 0, flat._storage, flat.dtype))


def ldl_factor(outs, x, *, compute, hermitian):
    """sytrf's Bunch-Kaufman LDL^T has no Triton kernel: its pivoting decides between 1 x 1 and
    2 x 2 blocks matrix by matrix; the NumPy reference runs on a host copy and the results are
    copied back (a synchronising round trip)."""
    from .. import numpy_linalg
    for out, array in zip(outs, numpy_linalg.ldl_factor(_to_host(x), hermitian=hermitian)):
        if out.numel():
            _write(out, array)


def ldl_solve(out, ld, piv, b, *, compute, hermitian):
    """sytrs on the host, as ldl_factor."""
    from .. import numpy_linalg
    _write(out, numpy_linalg.ldl_solve(_to_host(ld), _to_host(piv), _to_host(b), hermitian=hermitian))


def lstsq_svd(outs, a, b, *, compute, rcond):
    """torch has only the QR driver ('gels') on cuda, and so does tritensor."""
    raise NotImplementedError("torch.linalg.lstsq: `driver` other than `gels` is not supported on CUDA")
