"""Launchers of kernels/linalg_spectral.py: eigh and svd by Jacobi's method.

The primitives' outputs (ops/spectral.py): eigh writes (w, V^T, info), svd (U^T, S, V, info);
the orthogonal factors are stored transposed (LAPACK's column-major layout, torch's strides) and
the kernels write them through transposed views. Batches are read in place with their strides,
one program per matrix (linalg.py's ``_batches``).

eigh   ``jacobi_kernel`` (two-sided) on each matrix, in registers (n <= ``small_n``).
svd    ``jacobi_kernel`` (one-sided) on X = A (m >= n) or X = A^T (m < n, as A = V S U^T):
       S, V and U = X V S^-1, completed to an orthonormal basis (of m columns with
       full_matrices) where singular values vanish.

Above ``small_n`` rows or columns the launchers raise NotImplementedError (the register
kernels hold the whole matrix).
"""
from __future__ import annotations

import numpy as np

from ...runtime.launch import pointer
from .. import triton as tb
from .linalg import _batches, _mat, _mT, _pow2

GPU = {"small_n": 32, "max_sweeps": 30, "row_block": 64, "warps": 4}
INTERPRETER = {"small_n": 32, "max_sweeps": 30, "row_block": 16, "warps": 4}

_K = None


def _kernels():
    global _K
    if _K is None:
        tb._kernels()
        from tritensor.kernels import linalg_spectral as spectral_k
        _K = spectral_k
    return _K


def settings():
    return INTERPRETER if tb.interpreting() else GPU


def _eps(t):
    return float(np.finfo(np.dtype(t.dtype.name)).eps)


def _block(n):
    return _pow2(n, 16)          # tl.dot's minimum block dimension on a GPU


def _too_large(name, m, n, limit):
    raise NotImplementedError(
        f"{name}: the Jacobi kernels hold a matrix in registers and take at most {limit} rows and columns on "
        f"cuda; got a {m} x {n} matrix")


_PAIRS: dict = {}


def _pairs(like, N, block):
    """The circle method's rounds for N (even) indices, as an int32 table [N - 1, block]: entry
    (r, i) is the index paired with i in round r (i + j = r mod N - 1 for i, j < N - 1, the
    one left over with N - 1); indices past N are their own partners. Uploaded once per device
    and size."""
    key = (getattr(like._storage, "device", None), N, block)
    table = _PAIRS.get(key)
    if table is None:
        M = N - 1
        idx = np.arange(block)
        rows = []
        for r in range(max(M, 1)):
            p = (r - idx) % max(M, 1)
            p = np.where(p == idx, M, p)
            p[M] = (r * (N // 2)) % M if M else 0
            p[N:] = idx[N:]
            rows.append(p)
        table = _PAIRS[key] = tb.upload(like, np.asarray(rows, np.int32))
    return table


def _jacobi(x, Q, S, V, info, one_sided, lower, compute_v, full=False):
    """jacobi_kernel on every matrix of x (eigh: n x n; svd: M x N with M >= N, Q = U)."""
    k = _kernels()
    cfg = settings()
    m, n = (int(s) for s in x.shape[-2:])
    batch = tuple(x.shape[:-2])
    block = _block(n)
    pairs = _pairs(x, n + n % 2, block)
    operands = [(x, 2), (S, 1), (info, 0)]
    if compute_v:
        operands.append((V, 2))
        if one_sided:
            operands.append((Q, 2))
    for count, ptrs, bstrides in _batches(batch, operands):
        px, ps, pi = ptrs[:3]
        bx, bs, bi = bstrides[:3]
        pv, vstrides = (ptrs[3], (bstrides[3],) + _mat(V)) if compute_v else (ps, (0, 0, 0))
        pq, qstrides = (ptrs[4], (bstrides[4],) + _mat(Q)) if compute_v and one_sided else (ps, (0, 0, 0))
        tb._run(k.jacobi_kernel, (count,), px, pq, ps, pv, pi, pointer(pairs), m, n, _eps(x), _eps(x) ** 0.5,
                cfg["max_sweeps"], bx, *_mat(x), *qstrides, bs, int(S.stride()[-1]), *vstrides, bi,
                ONE_SIDED=bool(one_sided), LOWER=bool(lower), COMPUTE_V=bool(compute_v), FULL=bool(full),
                BLOCK_M=_block(m) if one_sided else 16, BLOCK=block, num_warps=cfg["warps"])


# --------------------------------------------------------------------------- eigh
def eigh(outs, a, *, compute, lower, compute_v):
    """w = the eigenvalues (ascending), vt = the eigenvectors as rows (when compute_v), info =
    torch's code for a NaN in the triangle read."""
    w, vt, info = outs
    n = int(a.shape[-1])
    cfg = settings()
    if n > cfg["small_n"]:
        _too_large("linalg.eigh", n, n, cfg["small_n"])
    _jacobi(a, None, w, _mT(vt) if compute_v else None, info, False, lower, compute_v)


# --------------------------------------------------------------------------- svd
def svd(outs, a, *, compute, full_matrices, compute_uv):
    """ut = U^T, s = the singular values (descending), v = V (= Vh^T), info = 1 where a has a NaN."""
    ut, s, v, info = outs
    m, n = (int(d) for d in a.shape[-2:])
    cfg = settings()
    if max(m, n) > cfg["small_n"]:
        _too_large("linalg.svd", m, n, cfg["small_n"])
    tall = m >= n
    x = a if tall else _mT(a)
    if not compute_uv:
        _jacobi(x, None, s, None, info, True, False, False)
        return
    u = _mT(ut)                       # U: m x m (full) or m x k
    # X = A: the kernel's V is A's V and its Q is U; X = A^T (A = V S U^T): the roles swap
    small, big = (v, u) if tall else (u, v)
    _jacobi(x, big, s, small, info, True, False, True, full=full_matrices and m != n)
