"""NumPy references of the matrix factorizations and solvers (ops/factorizations.py,
ops/solvers.py): the cpu device runs them, and the emulated kernels are checked against them.

Every function takes batches of matrices (..., m, n), vectorised over the batch, in the op's
compute dtype, and follows LAPACK's conventions as torch's cpu kernels return them:

    cholesky           potrf: the lower (or upper) factor; info = order of the first leading
                       minor that is not positive definite (0: success)
    lu_factor          getrf: partial pivoting, 1-based int32 row interchanges (row i was swapped
                       with row pivots[i] - 1, in order), info = first exactly-zero pivot (1-based)
    solve_triangular   trsm: forward/back substitution, no check of the diagonal (a zero gives inf/nan)
    lu_solve           getrs: the interchanges, then the two triangular solves
    geqrf              Householder QR in LAPACK's packed (a, tau) form (dlarfg's reflectors)
    householder_product  orgqr: the product H_1 ... H_k of those reflectors (its first n columns)
    ldl_factor         sytrf: Bunch-Kaufman symmetric indefinite LDL^T with LAPACK's ipiv (1-based,
                       negative pairs for 2 x 2 blocks)
    ldl_solve          sytrs

numpy.linalg serves where it has the function (cholesky, solve, inv, qr's geqrf); the rest is
written here, blocked so that the O(n^3) work is matrix products (recursive LU as LAPACK's getrf2,
recursive triangular solves). The factorizations return every output (the factor and its
pivots, info, tau ...) as a tuple: their table entries have several outputs (ops/table.py).

The unblocked loops (Cholesky, getf2, substitution) run with the batch as the LAST, contiguous
axis: each step is a handful of NumPy operations over every matrix of the batch at once, on
contiguous rows, which for many small matrices (4096 of 8 x 8) is several times faster than
numpy.linalg's per-matrix LAPACK calls. numpy.linalg serves the larger ones.
"""
from __future__ import annotations

import numpy as np

LEAF = 16        # columns (rows) of the unblocked leaves of the recursive algorithms


def _mT(a):
    return np.swapaxes(a, -1, -2)


def _batched(a):
    """a as (B, m, n) (a copy when the batch cannot be folded into one dim; B counted, as -1 is
    ambiguous for empty matrices)."""
    return a.reshape((int(np.prod(a.shape[:-2])),) + a.shape[-2:])


def _last(M):
    """(B, m, n) -> a contiguous (m, n, B) copy (always a copy: the loops work in place), the
    batch-last working layout."""
    return np.array(np.moveaxis(M, 0, -1), order="C", copy=True)


def _first(W):
    """(m, n, B) -> (B, m, n) (a view)."""
    return np.moveaxis(W, -1, 0)


def _broadcast_pair(a, b):
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:])


# --------------------------------------------------------------------------- Cholesky
def _symmetric_from(a, upper):
    """The symmetric matrix the factorization reads: a's lower (upper) triangle mirrored (a
    C-contiguous array: numpy.linalg's batched loops are several times slower on other layouts)."""
    if upper:
        s = np.triu(a)
        s += _mT(np.triu(a, 1))
    else:
        s = np.tril(a)
        s += _mT(np.tril(a, -1))
    return s


def _cholesky_last(W):
    """Right-looking Cholesky of W (n, n, B), symmetric matrices batch last, in place (the
    factor in the lower triangle, the upper one left as updated); a matrix stops at its first
    non-positive (or NaN) pivot, which is left in place as LAPACK's potf2 leaves it. Returns
    info (B,)."""
    n, B = W.shape[0], W.shape[-1]
    info = np.zeros(B, np.int32)
    alive = None                        # all alive until a pivot fails
    for k in range(n):
        d = W[k, k]
        if alive is None and not (d > 0).all():
            alive = np.ones(B, bool)
        if alive is not None:
            bad = alive & ~(d > 0)
            info[bad] = k + 1
            alive &= ~bad
            col = W[k:, k] / np.sqrt(np.where(alive, d, 1))
            W[k:, k] = np.where(alive, col, W[k:, k])
            c = np.where(alive, col[1:], 0)
        else:
            col = W[k:, k] / np.sqrt(d)
            W[k:, k] = col
            c = col[1:]
        W[k + 1:, k + 1:] -= c[:, None, :] * c[None, :, :]
    return info


def _potrf(S):
    """LAPACK's recursive potrf2 on symmetric S (B, n, n): L11 of the leading half, L21 =
    A21 L11^-T, the trailing half's Cholesky of A22 - L21 L21^T; the leaves (<= LEAF) run
    batch last. Returns (L with a zero upper triangle, info)."""
    n = S.shape[-1]
    if n <= LEAF:
        W = _last(S)
        info = _cholesky_last(W)
        r, c = np.triu_indices(n, 1)
        W[r, c] = 0
        return _first(W), info
    n1 = n // 2
    L11, info1 = _potrf(S[:, :n1, :n1])
    L21 = _mT(_trsm_lower(L11, _mT(S[:, n1:, :n1])))
    L22, info2 = _potrf(S[:, n1:, n1:] - L21 @ _mT(L21))
    L = np.zeros(S.shape, S.dtype)
    L[:, :n1, :n1] = L11
    L[:, n1:, :n1] = L21
    L[:, n1:, n1:] = L22
    info = np.where(info1 != 0, info1, np.where(info2 != 0, info2 + n1, 0)).astype(np.int32)
    return L, info


def _many(a, per_size):
    """A batch large against the matrix size (count >= per_size * n): the batch-last loops and
    recursive blocks beat numpy.linalg's per-matrix LAPACK calls there."""
    count = int(np.prod(a.shape[:-2])) if a.ndim > 2 else 1
    return count >= per_size * a.shape[-1]


def cholesky(a, *, upper):
    """(L, info): L (lower) or U = L^T (upper) with A = L L^T, from A's lower (upper) triangle;
    info = potrf's code per matrix."""
    n = a.shape[-1]
    if n <= LEAF and _many(a, 4):       # one leaf: batch last from the input to the output
        W = _last(_batched(a))
        r, c = np.triu_indices(n, 1)
        if upper:
            W[c, r] = W[r, c]           # the symmetric matrix the upper triangle defines
        else:
            W[r, c] = W[c, r]
        info = _cholesky_last(W).reshape(a.shape[:-2])
        W[r, c] = 0
        L = _first(W).reshape(a.shape)
        return (_mT(L) if upper else L), info
    s = _symmetric_from(a, upper)
    if not _many(a, 4):
        try:
            L = np.linalg.cholesky(s)
            return (_mT(L) if upper else L), np.zeros(a.shape[:-2], np.int32)
        except np.linalg.LinAlgError:   # some matrix is not positive definite: find which, and where
            pass
    L, codes = _potrf(_batched(s))
    L = L.reshape(a.shape)
    return (_mT(L) if upper else L), codes.reshape(a.shape[:-2])


# --------------------------------------------------------------------------- LU
def _swap_rows(M, j, p):
    """Swap rows j and p[b] of every matrix b of M (B, m, n), in place."""
    idx = np.arange(M.shape[0])
    row = M[idx, j].copy()
    M[idx, j] = M[idx, p]
    M[idx, p] = row


def _swap_last(W, j, p):
    """Swap rows j and p[b] of every matrix b of W (m, n, B) (batch last), in place."""
    idx = np.broadcast_to(p.reshape((1,) * (W.ndim - 1) + (-1,)), (1,) + W.shape[1:])
    row_p = np.take_along_axis(W, idx, axis=0)
    row_j = W[j].copy()
    W[j] = row_p[0]
    np.put_along_axis(W, idx, row_j[None], axis=0)


def _getf2_last(W, pivot):
    """Unblocked right-looking LU of W (m, n, B) in place, batch last: (0-based pivots (k, B),
    info (B,))."""
    m, n, B = W.shape
    k = min(m, n)
    piv = np.empty((k, B), np.int64)
    info = np.zeros(B, np.int32)
    for j in range(k):
        if pivot:
            # idamax: the first largest |a|; a NaN never compares larger, so it is not chosen
            col = np.abs(W[j:, j])
            if np.isnan(col).any():
                col = np.where(np.isnan(col), -1.0, col)
            p = j + np.argmax(np.ascontiguousarray(col.T), axis=1)    # (along contiguous rows: faster)
            if (p != j).any():
                _swap_last(W, j, p)
        else:
            p = np.full(B, j)
        piv[j] = p
        d = W[j, j]
        zero = d == 0
        if zero.any():
            info[(info == 0) & zero] = j + 1
            W[j + 1:, j] = np.where(zero, W[j + 1:, j], W[j + 1:, j] / np.where(zero, 1, d))
        else:
            W[j + 1:, j] /= d
        W[j + 1:, j + 1:] -= W[j + 1:, j, None] * W[j, None, j + 1:]
    return piv, info


def _getf2(M, pivot):
    """_getf2_last on M (B, m, n) in place: (0-based pivots (B, k), info (B,))."""
    W = _last(M)
    piv, info = _getf2_last(W, pivot)
    M[...] = _first(W)
    return piv.T, info


def _lu_solve_last(W, piv, X, adjoint=False):
    """getrs in the batch-last layout, in place on X (n, k, B): W (n, n, B) the packed LU,
    piv (n, B) its 0-based exchanges."""
    n = W.shape[0]
    if not adjoint:
        for j in range(n):
            _swap_last(X, j, piv[j])
        for i in range(n - 1):                      # L y = P^T b: unit diagonal
            X[i + 1:] -= W[i + 1:, i, None] * X[i, None]
        for i in range(n - 1, -1, -1):              # U x = y
            X[i] /= W[i, i]
            X[:i] -= W[:i, i, None] * X[i, None]
        return X
    for i in range(n):                              # U^T y = b
        X[i] /= W[i, i]
        X[i + 1:] -= W[i, i + 1:, None] * X[i, None]
    for i in range(n - 1, 0, -1):                   # L^T z = y
        X[:i] -= W[i, :i, None] * X[i, None]
    for j in range(n - 1, -1, -1):                  # x = P z
        _swap_last(X, j, piv[j])
    return X


def _apply_swaps(M, piv, reverse=False):
    """Row interchanges row j <-> piv[b, j] (0-based) of M (B, m, n), in order (or reversed)."""
    order = range(piv.shape[-1] - 1, -1, -1) if reverse else range(piv.shape[-1])
    for j in order:
        _swap_rows(M, j, piv[:, j])


def _getrf(M, pivot):
    """LAPACK's recursive getrf2 on M (B, m, n) in place: the left half of the columns is
    factored, its interchanges applied to the right half, A12 = L11^-1 A12, A22 -= A21 A12, the
    rest factored, and its interchanges applied back to A21. Same pivots as the unblocked
    algorithm; the work is in the matrix products."""
    B, m, n = M.shape
    k = min(m, n)
    if k <= LEAF:
        return _getf2(M, pivot)
    n1 = k // 2
    left = M[:, :, :n1]
    p1, info1 = _getrf(left, pivot)
    right = M[:, :, n1:]
    _apply_swaps(right, p1)
    right[:, :n1] = _trsm_lower(M[:, :n1, :n1], right[:, :n1], unit=True)
    right[:, n1:] -= M[:, n1:, :n1] @ right[:, :n1]
    p2, info2 = _getrf(M[:, n1:, n1:], pivot)
    _apply_swaps(M[:, n1:, :n1], p2)
    info = np.where(info1 != 0, info1, np.where(info2 != 0, info2 + n1, 0)).astype(np.int32)
    return np.concatenate([p1, p2 + n1], axis=-1), info


def lu_factor(a, *, pivot=True):
    """(LU, pivots, info): the packed LU factorization (L's strict lower part, U's upper part) of
    each matrix, its 1-based int32 interchanges and its first zero pivot."""
    batch, k = a.shape[:-2], min(a.shape[-2:])
    if k <= LEAF:                            # one unblocked leaf: batch last throughout
        W = _last(_batched(a))
        piv, codes = _getf2_last(W, pivot)
        return (_first(W).reshape(a.shape), (piv.T + 1).reshape(batch + (k,)).astype(np.int32),
                codes.reshape(batch))
    M = _batched(a).copy()
    piv, codes = _getrf(M, pivot)
    return M.reshape(a.shape), (piv + 1).reshape(batch + (k,)).astype(np.int32), codes.reshape(batch)


def pivots_to_permutation(piv, *, m):
    """perm with (P^T A)[i] = A[perm[i]]: the interchanges (1-based) applied to range(m)."""
    batch, k = piv.shape[:-1], piv.shape[-1]
    p = piv.reshape(int(np.prod(batch)), k).astype(np.int64) - 1
    perm = np.broadcast_to(np.arange(m), (p.shape[0], m)).copy()
    idx = np.arange(p.shape[0])
    for j in range(k):
        row = perm[idx, j].copy()
        perm[idx, j] = perm[idx, p[:, j]]
        perm[idx, p[:, j]] = row
    return perm.reshape(batch + (m,))


# --------------------------------------------------------------------------- triangular solves
def _trsm_lower(L, B, unit=False):
    """X with L X = B, L lower triangular (B, n, n), B (B, n, k): recursive blocks, the leaves
    forward substitution in the batch-last layout."""
    n = L.shape[-1]
    if n <= LEAF:
        Lw, X = _last(L), _last(B)           # (n, n, B), (n, k, B)
        for i in range(n):
            if not unit:
                X[i] /= Lw[i, i]
            X[i + 1:] -= Lw[i + 1:, i, None] * X[i, None]
        return _first(X)
    n1 = n // 2
    X1 = _trsm_lower(L[:, :n1, :n1], B[:, :n1], unit)
    X2 = _trsm_lower(L[:, n1:, n1:], B[:, n1:] - L[:, n1:, :n1] @ X1, unit)
    return np.concatenate([X1, X2], axis=1)


def _trsm_upper(U, B, unit=False):
    """X with U X = B, U upper triangular: the lower solve of the reversed system."""
    return _trsm_lower(U[:, ::-1, ::-1], B[:, ::-1], unit)[:, ::-1]


def _trsm(A, B, upper, unit):
    return (_trsm_upper if upper else _trsm_lower)(A, B, unit)


def solve_triangular(a, b, *, upper, left=True, unitriangular=False):
    """X with A X = B (left) or X A = B, A triangular (only its triangle is read); batch dims
    broadcast."""
    if not left:      # X A = B  <=>  A^T X^T = B^T
        return _mT(solve_triangular(_mT(a), _mT(b), upper=not upper, left=True, unitriangular=unitriangular))
    a, b = _broadcast_pair(a, b)
    shape = b.shape
    X = _trsm(_batched(a), _batched(b), upper, unitriangular)
    return X.reshape(shape)


# --------------------------------------------------------------------------- solvers on LU
def _lu_solve_left(LU, piv, B, adjoint):
    """X with A X = B (or A^T X = B), A = P L U given by (LU, 1-based pivots); (B, n, n) LU,
    (B, n, k) B."""
    p = piv.astype(np.int64) - 1
    if not adjoint:
        X = np.array(B, copy=True)
        _apply_swaps(X, p)
        X = _trsm_lower(LU, X, unit=True)
        return _trsm_upper(LU, X)
    # A^T = U^T L^T P^T: solve U^T y = B, L^T z = y, then undo the interchanges
    X = _trsm_lower(_mT(LU), B)
    X = _trsm_upper(_mT(LU), X, unit=True)
    X = np.ascontiguousarray(X)
    _apply_swaps(X, p, reverse=True)
    return X


def lu_solve(lu, piv, b, *, left=True, adjoint=False):
    """X with A X = B, A^H X = B, X A = B or X A^H = B (getrs), batch dims broadcast."""
    if not left:      # X A = B <=> A^T X^T = B^T
        return _mT(lu_solve(lu, piv, _mT(b), left=True, adjoint=not adjoint))
    batch = np.broadcast_shapes(lu.shape[:-2], piv.shape[:-1], b.shape[:-2])
    n = lu.shape[-1]
    LU = _batched(np.broadcast_to(lu, batch + lu.shape[-2:]))
    P = np.broadcast_to(piv, batch + piv.shape[-1:]).reshape(int(np.prod(batch)), piv.shape[-1])
    B = _batched(np.broadcast_to(b, batch + b.shape[-2:]))
    return _lu_solve_left(LU, P, B, adjoint).reshape(batch + (n, b.shape[-1]))


def _lu_info(a):
    """getrf of (B, n, n): (LU, pivots, info)."""
    M = np.array(a, copy=True)
    piv, info = _getrf(M, True)
    return M, piv + 1, info


def _small_batch(a):
    """Many small matrices (one unblocked leaf each): LU and its solve batch last."""
    return a.shape[-1] <= LEAF and _many(a, 16)


def _solve_small(a, b):
    """solve for a batch of small matrices (b's batch that of a), batch last throughout."""
    W = _last(_batched(a))
    piv, codes = _getf2_last(W, True)
    X = _last(_batched(np.broadcast_to(b, a.shape[:-2] + b.shape[-2:])))
    return _first(_lu_solve_last(W, piv, X)).reshape(a.shape[:-2] + b.shape[-2:]), codes.reshape(a.shape[:-2])


def solve(a, b):
    """(X, info): X with A X = B for each (broadcast) pair, info getrf's code for each matrix of
    A (a singular matrix's X is whatever the substitutions give: inf/nan, as torch's)."""
    if _small_batch(a) and a.shape[:-2] == np.broadcast_shapes(a.shape[:-2], b.shape[:-2]):
        return _solve_small(a, b)
    try:
        return np.linalg.solve(a, b), np.zeros(a.shape[:-2], np.int32)
    except np.linalg.LinAlgError:
        LU, piv, codes = _lu_info(_batched(a))
        x = lu_solve(LU.reshape(a.shape), piv.reshape(a.shape[:-1]).astype(np.int32), b)
        return x, codes.reshape(a.shape[:-2])


def inv(a):
    """(A^-1, info) of each matrix, info getrf's code."""
    eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
    if _small_batch(a):
        return _solve_small(a, eye)
    try:
        return np.linalg.inv(a), np.zeros(a.shape[:-2], np.int32)
    except np.linalg.LinAlgError:
        LU, piv, codes = _lu_info(_batched(a))
        return _lu_solve_left(LU, piv, _batched(eye), False).reshape(a.shape), codes.reshape(a.shape[:-2])


# --------------------------------------------------------------------------- Householder
def geqrf(a):
    """(a, tau), LAPACK's geqrf: R on and above the diagonal, the reflectors' vectors below it
    (their leading 1 implicit), tau their scalar factors."""
    m, n = a.shape[-2:]
    k = min(m, n)
    if a.size == 0 or k == 0:
        return np.array(a, copy=True), np.zeros(a.shape[:-2] + (k,), a.dtype)
    h, t = np.linalg.qr(a, mode="raw")       # h is the transposed (Fortran-order) result
    return _mT(h).astype(a.dtype, copy=False), t[..., :k]


def _reflectors(a, k):
    """The Householder vectors v_i (unit leading entry, zeros above) of a's first k columns."""
    m = a.shape[-2]
    v = np.tril(a[..., :, :k], -1)
    idx = np.arange(k)
    v[..., idx, idx] = 1
    return v[..., :m, :]


def householder_product(a, tau):
    """orgqr: the first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T (v_i from a's
    columns), for a of shape (..., m, n) and tau (..., k)."""
    m, n = a.shape[-2:]
    k = tau.shape[-1]
    Q = np.broadcast_to(np.eye(m, n, dtype=a.dtype), a.shape).copy()
    v = _reflectors(a, k)
    for i in range(k - 1, -1, -1):       # Q = H_i Q, innermost reflector first
        vi = v[..., :, i:i + 1]
        Q -= tau[..., i, None, None] * (vi @ (_mT(vi) @ Q))
    return Q


# --------------------------------------------------------------------------- LDL^T (Bunch-Kaufman)
ALPHA = (1 + np.sqrt(17.0)) / 8        # LAPACK's sytf2 pivot threshold


def _sytf2_lower(A):
    """dsytf2 with uplo='L' on one symmetric matrix (its lower triangle), in place: the packed
    factor and LAPACK's ipiv (1-based, negative pairs for 2 x 2 pivots), info."""
    n = A.shape[0]
    ipiv = np.zeros(n, np.int64)
    info = 0
    k = 0
    while k < n:
        kstep = 1
        absakk = abs(A[k, k])
        if k < n - 1:
            imax = k + 1 + int(np.argmax(np.abs(A[k + 1:, k])))
            colmax = abs(A[imax, k])
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0 or np.isnan(absakk):
            if info == 0:
                info = k + 1
            kp = k
        else:
            if absakk >= ALPHA * colmax:
                kp = k
            else:
                # the largest off-diagonal entry in row/column imax
                rowmax = np.max(np.abs(A[imax, k:imax])) if imax > k else 0.0
                if imax < n - 1:
                    rowmax = max(rowmax, np.max(np.abs(A[imax + 1:, imax])))
                if absakk >= ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif abs(A[imax, imax]) >= ALPHA * rowmax:
                    kp = imax
                else:
                    kp = imax
                    kstep = 2
            kk = k + kstep - 1
            if kp != kk:
                # interchange rows and columns kk and kp in the trailing submatrix
                if kp < n - 1:
                    A[kp + 1:, kk], A[kp + 1:, kp] = A[kp + 1:, kp].copy(), A[kp + 1:, kk].copy()
                t = A[kk + 1:kp, kk].copy()
                A[kk + 1:kp, kk] = A[kp, kk + 1:kp]
                A[kp, kk + 1:kp] = t
                A[kk, kk], A[kp, kp] = A[kp, kp], A[kk, kk]
                if kstep == 2:
                    A[k + 1, k], A[kp, k] = A[kp, k], A[k + 1, k]
            if kstep == 1:
                if k < n - 1:
                    r1 = 1.0 / A[k, k]
                    col = A[k + 1:, k].copy()
                    A[k + 1:, k + 1:] -= np.tril(r1 * np.outer(col, col))
                    A[k + 1:, k] *= r1
            elif k < n - 2:
                d21 = A[k + 1, k]
                d11 = A[k + 1, k + 1] / d21
                d22 = A[k, k] / d21
                t = 1.0 / (d11 * d22 - 1.0)
                d21 = t / d21
                wk = d21 * (d11 * A[k + 2:, k] - A[k + 2:, k + 1])
                wkp1 = d21 * (d22 * A[k + 2:, k + 1] - A[k + 2:, k])
                A[k + 2:, k + 2:] -= np.tril(np.outer(A[k + 2:, k], wk) + np.outer(A[k + 2:, k + 1], wkp1))
                A[k + 2:, k] = wk
                A[k + 2:, k + 1] = wkp1
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return ipiv, info


def ldl_factor(a, *, hermitian=False):
    """(LD, pivots, info), sytrf (lower): L D L^T with D block diagonal (1 x 1 and 2 x 2
    blocks), packed in the lower triangle (the upper is zero, as torch returns it); pivots
    LAPACK's ipiv, info the first zero diagonal block. For real matrices ``hermitian`` changes
    nothing."""
    M = _batched(a).astype(a.dtype, copy=True)
    P = np.zeros((M.shape[0], a.shape[-1]), np.int32)
    I = np.zeros(M.shape[0], np.int32)
    for b in range(M.shape[0]):
        P[b], I[b] = _sytf2_lower(M[b])
    return np.tril(M).reshape(a.shape), P.reshape(a.shape[:-1]), I.reshape(a.shape[:-2])


def _ldl_solve_one(LD, ipiv, B):
    """dsytrs (lower) for one matrix: X with A X = B from (LD, ipiv)."""
    n = LD.shape[0]
    X = np.array(B, copy=True)
    # solve L D Y = P^T B, moving forward through the blocks
    k = 0
    while k < n:
        if ipiv[k] > 0:
            kp = ipiv[k] - 1
            if kp != k:
                X[[k, kp]] = X[[kp, k]]
            X[k + 1:] -= np.outer(LD[k + 1:, k], X[k])
            X[k] /= LD[k, k]
            k += 1
        else:
            kp = -ipiv[k] - 1
            if kp != k + 1:
                X[[k + 1, kp]] = X[[kp, k + 1]]
            if k < n - 2:
                X[k + 2:] -= np.outer(LD[k + 2:, k], X[k]) + np.outer(LD[k + 2:, k + 1], X[k + 1])
            akm1k = LD[k + 1, k]
            akm1 = LD[k, k] / akm1k
            ak = LD[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1.0
            bkm1 = X[k] / akm1k
            bk = X[k + 1] / akm1k
            X[k] = (ak * bkm1 - bk) / denom
            X[k + 1] = (akm1 * bk - bkm1) / denom
            k += 2
    # solve L^T X = Y, moving backward
    k = n - 1
    while k >= 0:
        if ipiv[k] > 0:
            if k < n - 1:
                X[k] -= LD[k + 1:, k] @ X[k + 1:]
            kp = ipiv[k] - 1
            if kp != k:
                X[[k, kp]] = X[[kp, k]]
            k -= 1
        else:
            if k < n - 1:
                X[k] -= LD[k + 1:, k] @ X[k + 1:]
                X[k - 1] -= LD[k + 1:, k - 1] @ X[k + 1:]
            kp = -ipiv[k] - 1
            if kp != k:
                X[[k, kp]] = X[[kp, k]]
            k -= 2
    return X


def ldl_solve(ld, piv, b, *, hermitian=False):
    """sytrs: X with A X = B from ldl_factor's (LD, pivots); batch dims broadcast."""
    batch = np.broadcast_shapes(ld.shape[:-2], piv.shape[:-1], b.shape[:-2])
    LD = _batched(np.broadcast_to(ld, batch + ld.shape[-2:]))
    P = np.broadcast_to(piv, batch + piv.shape[-1:]).reshape(int(np.prod(batch)), piv.shape[-1]).astype(np.int64)
    B = _batched(np.broadcast_to(b, batch + b.shape[-2:]))
    X = np.stack([_ldl_solve_one(LD[i], P[i], B[i]) for i in range(B.shape[0])]) if B.shape[0] else \
        np.zeros(B.shape, B.dtype)
    return X.reshape(batch + b.shape[-2:])


# --------------------------------------------------------------------------- least squares (SVD drivers)
def lstsq_svd(a, b, *, rcond):
    """(solution, rank, singular values): the minimum-norm least-squares solution through the
    SVD (gelsd / gelss; gelsy's complete orthogonal factorization gives the same solution),
    singular values below rcond * s_max counted as zero; the rank and the singular values are
    those of each matrix of a (its own batch, as torch's), the solution has the broadcast batch."""
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    out_shape = batch + (n, b.shape[-1])
    if a.size == 0 or k == 0:
        return (np.zeros(out_shape, a.dtype), np.zeros(a.shape[:-2], np.int64),
                np.zeros(a.shape[:-2] + (k,), a.dtype))
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    keep = s > rcond * s[..., :1]
    inv_s = np.where(keep, 1 / np.where(keep, s, 1), 0)
    x = np.broadcast_to((_mT(vt) * inv_s[..., None, :]) @ _mT(u) @ b, out_shape)
    return x, keep.sum(-1).astype(np.int64), s
