"""Launchers of kernels/linalg_spectral.py: eigh and svd by Jacobi's method.

The primitives' outputs (ops/spectral.py): eigh writes (w, V^T, info), svd (U^T, S, V, info);
the orthogonal factors are stored transposed (LAPACK's column-major layout, torch's strides) and
the kernels write them through transposed views. Batches are read in place with their strides,
one program per matrix (linalg.py's ``_batches``).

eigh   ``jacobi_kernel`` (two-sided) on each matrix, in registers (n <= ``small_n``).
svd    ``jacobi_kernel`` (one-sided) on X = A (m >= n) or X = A^T (m < n, as A = V S U^T):
       S, V and U = X V S^-1, completed to an orthonormal basis (of m columns with
       full_matrices) where singular values vanish.

Larger matrices take block Jacobi, with blocks of B = small_n / 2 indices (the matrix zero-padded
to an even number of blocks) and the blocks paired by the circle method; per round, for every
pair of every matrix at once:

    eigh   pair_block_kernel gathers the 2B x 2B subproblems (rows and columns I u J), jacobi_kernel
           diagonalises them (unsorted: padding stays put), pair_rotate_kernel applies their
           eigenvectors Q to the rows, then the columns, of the matrix and to the columns of V
    svd    one-sided: pair_block_kernel forms the Gram matrices of the column pairs of X (tl.dot
           over the rows), jacobi_kernel diagonalises them, pair_rotate_kernel rotates X's and V's
           column pairs; at the end S = X's column norms and U the Q of the sorted X's Householder
           QR (kernels/linalg.py's geqrf and householder kernels) signed by R's diagonal

Sweeps stop after the sweep whose off-diagonal measure (the subproblems' off-diagonal parts as
they were gathered, squared: against |A|_F^2 for eigh, the largest squared cosine of two columns
for svd) was below eps: quadratic convergence leaves below eps after it. At most
``block_sweeps``; one host sync per sweep. The results are then sorted (the sort kernels) and
the vectors gathered in that order; a matrix with an inf or NaN gets NaN results (and, for a
NaN, torch's info code).
"""
from __future__ import annotations

import numpy as np

from ...runtime.launch import pointer
from .. import triton as tb
from . import linalg as tla
from . import sort as tsort
from .linalg import _batches, _mat, _mT, _pow2, _view

GPU = {"small_n": 32, "max_sweeps": 30, "block_sweeps": 20, "tile": 64, "row_block": 64, "warps": 4}
INTERPRETER = {"small_n": 32, "max_sweeps": 30, "block_sweeps": 20, "tile": 32, "row_block": 32, "warps": 4}
INTERPRETER_FAST = dict(GPU)   # the emulated device's default profile (_plan.py): the GPU's larger tiles

_K = None


def _kernels():
    global _K
    if _K is None:
        tb._kernels()
        from tritensor.kernels import linalg_spectral as spectral_k
        _K = spectral_k
    return _K


def settings():
    return tb.pick(GPU, INTERPRETER_FAST, INTERPRETER)


def _eps(t):
    return float(np.finfo(np.dtype(t.dtype.name)).eps)


def _block(n):
    return _pow2(n, 16)          # tl.dot's minimum block dimension on a GPU


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


def _jacobi(x, Q, S, V, info, one_sided, lower, compute_v, full=False, sort=True):
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
                SORT=bool(sort), BLOCK_M=_block(m) if one_sided else 16, BLOCK=block, num_warps=cfg["warps"])


# --------------------------------------------------------------------------- eigh
def eigh(outs, a, *, compute, lower, compute_v):
    """w = the eigenvalues (ascending), vt = the eigenvectors as rows (when compute_v), info =
    torch's code for a NaN in the triangle read."""
    w, vt, info = outs
    n = int(a.shape[-1])
    cfg = settings()
    if n > cfg["small_n"]:
        _eigh_blocked(w, _mT(vt) if compute_v else None, info, a, lower, compute_v)
        return
    _jacobi(a, None, w, _mT(vt) if compute_v else None, info, False, lower, compute_v)


# --------------------------------------------------------------------------- svd
def svd(outs, a, *, compute, full_matrices, compute_uv):
    """ut = U^T, s = the singular values (descending), v = V (= Vh^T), info = 1 where a has a NaN."""
    ut, s, v, info = outs
    m, n = (int(d) for d in a.shape[-2:])
    cfg = settings()
    tall = m >= n
    if max(m, n) > cfg["small_n"]:
        _svd_blocked(_mT(ut) if compute_uv else None, s, v if compute_uv else None, info,
                     a if tall else _mT(a), tall, full_matrices, compute_uv)
        return
    x = a if tall else _mT(a)
    if not compute_uv:
        _jacobi(x, None, s, None, info, True, False, False)
        return
    u = _mT(ut)                       # U: m x m (full) or m x k
    # X = A: the kernel's V is A's V and its Q is U; X = A^T (A = V S U^T): the roles swap
    small, big = (v, u) if tall else (u, v)
    _jacobi(x, big, s, small, info, True, False, True, full=full_matrices and m != n)


# --------------------------------------------------------------------------- block Jacobi
def _circle_rounds(nb):
    """The circle method's rounds for nb (even) blocks, as rows of an int32 table: round r lists
    its nb / 2 pairs as [I0, J0, I1, J1, ...]."""
    M = nb - 1
    rounds = []
    for r in range(M):
        row = []
        for i in range(M):
            j = (r - i) % M
            if j == i:
                row += [i, M]
            elif i < j:
                row += [i, j]
        rounds.append(row)
    return np.asarray(rounds, np.int32)


def _count(batch):
    out = 1
    for s in batch:
        out *= int(s)
    return out


def _identity(like, shape):
    """A scratch batch of identity matrices."""
    V = tb._scratch(like, shape, like.dtype)
    tb.fill(V, 0)
    n = shape[-1]
    diag = tb._View(shape[:-1], tuple(V.stride()[:-2]) + (n + 1,), 0, V._storage, V.dtype)
    tb.fill(diag, 1)
    return V


def _sum_squares(x, last):
    """The sum of squares of every matrix of x (its ``last`` trailing dims), on the host (a sync)."""
    name = x.dtype.name
    sq = tb._scratch(x, tuple(x.shape), x.dtype)
    tb.elementwise("mul", sq, [x, x], name)
    batch = tuple(x.shape[:len(x.shape) - last])
    out = tb._scratch(x, batch, x.dtype)
    tb.reduce("sum", out, sq, tuple(range(len(batch), len(x.shape))), name)
    return tb.download(out, 0, max(_count(batch), 1), np.dtype(name)).reshape(batch)


class _Sweeps:
    """The block Jacobi loop's buffers and launches for ``count`` matrices of npad = nb * B."""

    def __init__(self, like, count, nb, B):
        cfg = settings()
        self.cfg, self.count, self.nb, self.B, self.P = cfg, count, nb, B, nb // 2
        self.rounds = tb.upload(like, _circle_rounds(nb))
        problems = count * self.P
        self.sub = tb._scratch(like, (problems, 2 * B, 2 * B), like.dtype)
        self.Q = tb._scratch(like, (problems, 2 * B, 2 * B), like.dtype)
        self.values = tb._scratch(like, (problems, 2 * B), like.dtype)
        self.info = tb._scratch(like, (problems,), tb._dtype("int32"))
        self.measure = tb._scratch(like, (nb - 1, problems), like.dtype)

    def round(self, r, X, gram, m, targets):
        """Gather round r's subproblems of X, diagonalise them, rotate ``targets``: (tensor,
        rows?, length) for each (X's rows/columns, V's columns)."""
        k = _kernels()
        cfg, B, P = self.cfg, self.B, self.P
        blocks = pointer(self.rounds, r * self.nb)
        grid = (self.count * P,)
        tb._run(k.pair_block_kernel, grid, pointer(X), pointer(self.sub), pointer(self.measure, r * self.count * P),
                blocks, m, P, *_strides3(X), *_strides3(self.sub), GRAM=bool(gram), B=B,
                BLOCK_R=cfg["row_block"], num_warps=cfg["warps"])
        _jacobi(self.sub, None, self.values, self.Q, self.info, False, True, True, sort=False)
        for target, rows, length in targets:
            tb._run(k.pair_rotate_kernel, (self.count * P, tb._cdiv(length, cfg["tile"])), pointer(target),
                    pointer(self.Q), blocks, length, P, *_strides3(target), *_strides3(self.Q), ROWS=bool(rows),
                    B=B, BLOCK_T=cfg["tile"], num_warps=cfg["warps"])

    def converged(self, gram, total, eps):
        """Whether the sweep just made was the last one: its measure (the subproblems'
        off-diagonal parts as they were gathered, squared; relative to |A|_F^2, or the largest
        squared cosine of two columns) is below eps, so that after it (quadratic convergence) the
        off-diagonal part is below eps itself."""
        m = tb.download(self.measure, 0, (self.nb - 1) * self.count * self.P, np.dtype(self.measure.dtype.name))
        m = np.nan_to_num(m.reshape(self.nb - 1, self.count, self.P))
        if gram:
            measure = m.max()
        else:
            measure = (m.sum(axis=(0, 2)) / np.where(total > 0, total, 1)).max()
        return bool(measure <= eps)

    def poison(self, tensors, bad):
        """NaN in every matrix (index of the flat batch) whose input was not finite."""
        for b in np.flatnonzero(bad):
            for t in tensors:
                shape = tuple(t.shape[1:])
                tb.fill(tb._View(shape, tuple(t.stride()[1:]), t._offset + int(b) * int(t.stride()[0]), t._storage,
                                 t.dtype), float("nan"))


def _strides3(t):
    """(batch, row, column) strides of a batch of matrices flattened to one batch dim."""
    strides = tuple(int(s) for s in t.stride())
    return (strides[-3] if len(strides) > 2 else 0,) + strides[-2:]


def _flat(t, count):
    """t (a contiguous batch of matrices) as (count, rows, cols)."""
    shape = tuple(t.shape)
    return tb._View((count,) + shape[-2:], (shape[-2] * shape[-1],) + tuple(t.stride()[-2:]), t._offset,
                    t._storage, t.dtype)


def _eigh_blocked(w, v, info, a, lower, compute_v):
    """Block Jacobi for n > small_n (module docstring)."""
    cfg = settings()
    k = _kernels()
    n = int(a.shape[-1])
    batch = tuple(a.shape[:-2])
    count = _count(batch)
    B = cfg["small_n"] // 2
    nb = -(-n // B)
    nb += nb % 2
    npad = nb * B
    X = tb._scratch(a, (count, npad, npad), a.dtype)
    Xb = tb._View(batch + (npad, npad), tb._contiguous_strides(batch + (npad, npad)), 0, X._storage, a.dtype)
    tiles = tb._cdiv(npad, cfg["tile"])
    for cnt, (pa, px), (ba, bx) in _batches(batch, [(a, 2), (Xb, 2)]):
        tb._run(k.symmetric_pad_kernel, (cnt, tiles, tiles), pa, px, n, npad, ba, *_mat(a), bx, *_mat(Xb),
                LOWER=bool(lower), BLOCK=cfg["tile"], num_warps=cfg["warps"])
    total = _sum_squares(X, 2).reshape(count)
    V = _identity(a, (count, npad, npad)) if compute_v else None
    sweeps = _Sweeps(a, count, nb, B)
    finite = np.isfinite(total)
    for _ in range(cfg["block_sweeps"] if finite.any() else 0):
        for r in range(nb - 1):
            targets = [(X, True, npad), (X, False, npad)] + ([(V, False, npad)] if compute_v else [])
            sweeps.round(r, X, False, npad, targets)
        if sweeps.converged(False, np.where(finite, total, 0), _eps(a)):
            break
    sweeps.poison([X] + ([V] if compute_v else []), ~finite)
    # the eigenvalues (X's diagonal, the first n) ascending, the eigenvectors in their order
    diag = tb._View((count, n), (npad * npad, npad + 1), 0, X._storage, a.dtype)
    order = tb._scratch(a, (count, n), tb._dtype("int64"))
    wf = tb._scratch(a, (count, n), a.dtype)
    tsort.sort(wf, order, diag, 1, False)
    codes = np.where(np.isnan(total), (n - 1 if compute_v else n - 2), 0).astype(np.int32)
    tb.copy(info, _batched(tb.upload(a, codes), batch))
    tb.copy(w, _batched(wf, batch))
    if compute_v:
        _gather_columns(v, V, order, n, n, batch)


def _batched(t, batch):
    """A flat scratch batch (count, ...) seen with the batch shape ``batch``."""
    tail = tuple(t.shape[1:])
    shape = tuple(batch) + tail
    strides = tb._contiguous_strides(tuple(batch) + (1,))[:-1] if batch else ()
    step = int(t.stride()[0])
    return tb._View(shape, tuple(s * step for s in strides) + tuple(t.stride()[1:]), t._offset, t._storage, t.dtype)


def _gather_columns(dst, src, order, rows, cols, batch):
    """dst[..., :, k] = src[..., :rows, order[..., k]] (src, order: flat scratch batches)."""
    k = _kernels()
    cfg = settings()
    tile = cfg["tile"]
    grid_r, grid_c = tb._cdiv(rows, tile), tb._cdiv(cols, tile)
    src_b, order_b = _batched(src, batch), _batched(order, batch)
    for cnt, (pd, ps, po), (bd, bs, bo) in _batches(batch, [(dst, 2), (src_b, 2), (order_b, 1)]):
        tb._run(k.column_gather_kernel, (cnt, grid_r, grid_c), ps, pd, po, rows, cols,
                bs, *_mat(src_b), bd, *_mat(dst), bo, BLOCK_R=tile, BLOCK_C=tile, num_warps=cfg["warps"])


def _svd_blocked(u, s, v, info, x, tall, full_matrices, compute_uv):
    """One-sided block Jacobi on x (M x N, M >= N; x = A or A^T) for max(m, n) > small_n (module
    docstring). u: U (m x m or m x k), v: V = Vh^T (n x n or n x k), s: S."""
    cfg = settings()
    M, N = (int(d) for d in x.shape[-2:])
    batch = tuple(x.shape[:-2])
    count = _count(batch)
    B = cfg["small_n"] // 2
    nb = -(-N // B)
    nb += nb % 2
    npad = nb * B
    W = tb._scratch(x, (count, M, npad), x.dtype)
    tb.fill(W, 0)
    Wb = _batched(W, batch)
    tb.copy(_view(Wb, 0, 0, M, N), x)
    total = _sum_squares(x, 2).reshape(count)
    V = _identity(x, (count, npad, npad)) if compute_uv else None
    sweeps = _Sweeps(x, count, nb, B)
    finite = np.isfinite(total)
    for _ in range(cfg["block_sweeps"] if finite.any() else 0):
        for r in range(nb - 1):
            targets = [(W, False, M)] + ([(V, False, npad)] if compute_uv else [])
            sweeps.round(r, W, True, M, targets)
        if sweeps.converged(True, total, _eps(x)):
            break
    sweeps.poison([W] + ([V] if compute_uv else []), ~finite)
    # S: W's column norms, descending; the vectors in their order
    name = x.dtype.name
    sq = tb._scratch(x, (count, M, N), x.dtype)
    Wn = _view(W, 0, 0, M, N)
    tb.elementwise("mul", sq, [Wn, Wn], name)
    norms = tb._scratch(x, (count, N), x.dtype)
    tb.reduce("sum", norms, sq, (1,), name)
    tb.elementwise("sqrt", norms, [norms], name)
    order = tb._scratch(x, (count, N), tb._dtype("int64"))
    sorted_s = tb._scratch(x, (count, N), x.dtype)
    tsort.sort(sorted_s, order, norms, 1, True)
    tb.copy(s, _batched(sorted_s, batch))
    codes = np.where(np.isnan(total), 1, 0).astype(np.int32)
    tb.copy(info, _batched(tb.upload(x, codes), batch) if codes.size else info)
    if not compute_uv:
        return
    small, big = (v, u) if tall else (u, v)
    _gather_columns(small, V, order, N, N, batch)
    Ws = tb._scratch(x, (count, M, N), x.dtype)
    _gather_columns(_batched(Ws, batch), W, order, M, N, batch)
    _orthonormal_columns(big, _batched(Ws, batch))


def _orthonormal_columns(Q, W):
    """Q (M x M or M x N) = the Q of W's Householder QR, its first N columns signed as W's
    columns: W's normalised columns where they are nonzero, an orthonormal completion elsewhere.
    W (scratch) is overwritten by its QR."""
    k = _kernels()
    cfg = settings()
    M, N = (int(d) for d in W.shape[-2:])
    batch = tuple(W.shape[:-2])
    tau = tb._scratch(W, batch + (N,), W.dtype)
    tla.geqrf((W, tau), W, compute=None)                    # in place: R on top, reflectors below
    tla.householder_product(Q, W, tau, compute=None)
    block_k = min(32, _pow2(N))
    for cnt, (pq, pw), (bq, bw) in _batches(batch, [(Q, 2), (W, 2)]):
        tb._run(k.column_signs_kernel, (cnt, tb._cdiv(N, block_k)), pq, pw, M, N, bq, *_mat(Q), bw, *_mat(W),
                BLOCK_R=cfg["row_block"], BLOCK_K=block_k, num_warps=cfg["warps"])
