"""Spectral decompositions by Jacobi's method: the symmetric eigendecomposition (two-sided
Jacobi) and the singular value decomposition (one-sided Jacobi, Hestenes), one program per matrix
of a batch (program_id(0)), the matrix in registers.

The rotations of a sweep run in the parallel (round-robin) order: the n indices (n rounded up
to even; the extra index is a zero row and column) are paired by the circle method, n - 1 rounds
of n / 2 disjoint pairs, so every pair (p, q) meets once per sweep. The rotations of a round
commute; they are assembled into one orthogonal matrix J (the identity but for c on the
diagonal and +-s at (p, q), (q, p)) and applied as matrix products on the tensor cores:

    eigh   A <- J^T A J (then symmetrised exactly), V <- V J; each rotation zeroes a_pq:
           theta = (a_qq - a_pp) / (2 a_pq), t = sign(theta) / (|theta| + sqrt(theta^2 + 1)),
           c = 1 / sqrt(t^2 + 1), s = t c (Rutishauser's formulas)
    svd    X <- X J, V <- V J, with the rotation that diagonalises the pair's 2 x 2 Gram matrix
           [[g_pp, g_pq], [g_pq, g_qq]] of G = X^T X (the columns p and q become orthogonal)

The matrix is scaled by its largest magnitude first (no overflow or underflow in the squares).
A pair whose off-diagonal entry is already negligible, |a_pq| <= eps sqrt(|a_pp a_qq|), is not
rotated. Jacobi converges quadratically: after a sweep whose rotations all had |tan| <= tau =
sqrt(eps), the next one's would be below eps and change nothing, so the sweeps stop there (at
most MAX_SWEEPS; 4-8 sweeps for the sizes that fit here).

The results are sorted as torch (LAPACK) returns them: eigenvalues ascending, singular values
descending, ties in index order, NaN last; the vectors are permuted with them by a product with
the permutation matrix. Non-finite input gives NaN results; ``info`` reports a NaN as torch's
LAPACK calls do (backends/numpy_spectral.py). Eigenvector and singular vector signs are
Jacobi's (not LAPACK's): the decompositions are equal, the vectors up to sign.

Row sums inside the rounds are ``tl.reduce(x, axis, tl.standard._sum_combine)``: tl.sum itself,
without the device-function call that Triton's interpreter pays ~4 ms for (it re-patches the
language on every such call; the emulated device runs these loops hundreds of times).

Every block dimension is >= 16 (tl.dot's minimum on a GPU); float32 products are IEEE (never
TF32: a rotation's error would be 1e-3). Offsets are int64; loop indices are cast first thing
(kernels/__init__.py).
"""
import triton
import triton.language as tl


@triton.jit
def _order(key, idx, n, DESCENDING: tl.constexpr):
    """The rank of each of the n keys in torch's order (ascending or descending; ties by index;
    NaN last); indices past n keep their own position."""
    ki = key[:, None]
    kj = key[None, :]
    nan_i = ki != ki
    nan_j = kj != kj
    if DESCENDING:
        before = kj > ki
    else:
        before = kj < ki
    tie = (kj == ki) | (nan_i & nan_j)
    first = (~nan_j & (nan_i | before)) | (tie & (idx[None, :] < idx[:, None]))
    rank = tl.sum(tl.where(first & (idx[None, :] < n), 1, 0), axis=1)
    return tl.where(idx < n, rank, idx)


@triton.jit
def jacobi_kernel(A, Q, S, V, info, pairs, m, n, eps, tau, MAX_SWEEPS,
                  s_ab, s_ar, s_ac, s_qb, s_qr, s_qc, s_sb, s_sc, s_vb, s_vr, s_vc, s_ib,
                  ONE_SIDED: tl.constexpr, LOWER: tl.constexpr, COMPUTE_V: tl.constexpr, FULL: tl.constexpr,
                  SORT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK: tl.constexpr):
    """Two-sided (eigh) or one-sided (ONE_SIDED: svd) Jacobi on one matrix.

    eigh: S = the eigenvalues of the symmetric n x n matrix read from A's lower (LOWER) or upper
    triangle, ascending, and (COMPUTE_V) V = its eigenvectors as columns; info = torch's code for
    a NaN in that triangle (n - 1 with COMPUTE_V, else n - 2; 0 for n <= 2).
    svd: A is m x n with m >= n: A V = W with orthogonal columns, so A = U diag(S) V^T with S =
    W's column norms (descending) and U = W diag(S)^-1; with COMPUTE_V, V (n x n) and Q = U
    (m x n, or m x m with FULL) in S's order. U's columns whose singular value is negligible
    (<= eps s_max: their W column is rounding noise) and, with FULL, its columns past n complete
    the others to an orthonormal basis: each is the unit vector e_i least covered by the columns
    so far (the smallest row of U, so |(I - U U^T) e_i|^2 >= 1 - k / m), orthogonalised twice
    against them ("twice is enough"). info = 1 where A has a NaN.

    Without SORT the values and vectors stay in the order of the indices (block Jacobi's
    subproblems: a zero row and column of padding stays where it is).

    ``pairs`` holds the circle method's partners: row r (r < N - 1, N = n rounded up to even)
    gives the index paired with each of the BLOCK indices in round r."""
    b = tl.program_id(0).to(tl.int64)
    idx = tl.arange(0, BLOCK)
    rows = idx[:, None]
    cols = idx[None, :]
    on_diag = rows == cols
    if ONE_SIDED:
        ri = tl.arange(0, BLOCK_M)[:, None]
        x_mask = (ri < m) & (cols < n)
        a = tl.load(A + b * s_ab + ri.to(tl.int64) * s_ar + cols.to(tl.int64) * s_ac, mask=x_mask, other=0.0)
        code = tl.where(tl.sum(tl.sum(tl.where(a != a, 1, 0), axis=1), axis=0) > 0, 1, 0)
    else:
        inside = (rows < n) & (cols < n)
        a = tl.load(A + b * s_ab + rows.to(tl.int64) * s_ar + cols.to(tl.int64) * s_ac, mask=inside, other=0.0)
        if LOWER:
            a = tl.where(rows >= cols, a, 0.0)
        else:
            a = tl.where(rows <= cols, a, 0.0)
        if COMPUTE_V:
            nan_code = n - 1
        else:
            nan_code = n - 2
        has_nan = tl.sum(tl.sum(tl.where(a != a, 1, 0), axis=1), axis=0) > 0
        code = tl.where(has_nan & (n >= 3), nan_code, 0)
        a = a + tl.trans(tl.where(on_diag, 0.0, a))
    tl.store(info + b * s_ib, code.to(tl.int32))
    ACC = a.dtype
    v = tl.where(on_diag, 1.0, 0.0).to(ACC)
    # scaled by the largest magnitude (squares and products of the entries neither overflow nor
    # underflow); the values are scaled back at the end
    magnitude = tl.abs(a)
    finite = tl.sum(tl.sum(tl.where(magnitude < float("inf"), 0, 1), axis=1), axis=0) == 0     # no inf, no NaN
    largest = tl.max(tl.max(tl.where(finite, magnitude, 0.0), axis=1), axis=0)
    scale = tl.where(finite & (largest > 0), largest, 1.0)
    a = a / scale
    total = tl.sum(tl.sum(a * a, axis=1), axis=0)
    N = n + n % 2
    eps2 = eps * eps
    go = tl.where(finite & (total > 0), 1, 0)
    for sweep in range(MAX_SWEEPS):
        if go > 0:
            largest_t = tl.zeros([BLOCK], ACC)
            for r_ in range(N - 1):
                r = tl.cast(r_, tl.int64)
                partner = tl.load(pairs + r * BLOCK + idx)
                if ONE_SIDED:
                    g = tl.dot(tl.trans(a), a, input_precision="ieee", out_dtype=ACC)
                else:
                    g = a
                # the rotation of each pair (p, q) = (i, partner(i)) that zeroes g_pq, seen from
                # both of its indices: diff = g_qq - g_pp, t = tan of the angle (Rutishauser),
                # J_pp = J_qq = c, J_pq = s, J_qp = -s
                is_partner = cols == partner[:, None]
                d = tl.reduce(tl.where(on_diag, g, 0.0), 1, tl.standard._sum_combine)
                d_partner = tl.reduce(tl.where(is_partner, d[None, :], 0.0), 1, tl.standard._sum_combine)
                off = tl.reduce(tl.where(is_partner, g, 0.0), 1, tl.standard._sum_combine)
                sign = tl.where(idx < partner, 1.0, -1.0)
                diff = (d_partner - d) * sign
                t = 2.0 * off / (tl.abs(diff) + tl.sqrt(diff * diff + 4.0 * off * off))
                t = tl.where(off * off <= eps2 * tl.abs(d * d_partner), 0.0, tl.where(diff < 0, -t, t))
                c = 1.0 / tl.sqrt(1.0 + t * t)
                J = tl.where(on_diag, c[:, None], tl.where(is_partner, (sign * t * c)[:, None], 0.0))
                if ONE_SIDED:
                    a = tl.dot(a, J, input_precision="ieee", out_dtype=ACC)
                else:
                    a = tl.dot(tl.trans(J), tl.dot(a, J, input_precision="ieee", out_dtype=ACC),
                               input_precision="ieee", out_dtype=ACC)
                if COMPUTE_V:
                    v = tl.dot(v, J, input_precision="ieee", out_dtype=ACC)
                largest_t = tl.maximum(largest_t, tl.abs(t))
            if not ONE_SIDED:
                a = (a + tl.trans(a)) * 0.5               # exactly symmetric again
            # quadratic convergence: after a sweep whose rotations were all below sqrt(eps), the
            # next one's would be below eps (and change nothing)
            go = tl.where(tl.max(largest_t, axis=0) > tau, 1, 0)
    if ONE_SIDED:
        values = tl.sqrt(tl.sum(a * a, axis=0))
    else:
        values = tl.sum(tl.where(on_diag, a, 0.0), axis=1)
    if SORT:
        rank = _order(tl.where(finite, values, float("nan")), idx, n, ONE_SIDED)
    else:
        rank = idx
    perm = rank[:, None] == cols                        # perm[i, k]: value i goes to position k
    in_order = tl.sum(tl.where(perm, values[:, None], 0.0), axis=0)
    tl.store(S + b * s_sb + idx.to(tl.int64) * s_sc, tl.where(finite, in_order * scale, float("nan")),
             mask=idx < n)
    if COMPUTE_V:
        p = perm.to(ACC)
        v = tl.dot(v, p, input_precision="ieee", out_dtype=ACC)
        v = tl.where(finite | (n == 1), v, float("nan"))
        tl.store(V + b * s_vb + rows.to(tl.int64) * s_vr + cols.to(tl.int64) * s_vc, v,
                 mask=(rows < n) & (cols < n))
        if ONE_SIDED:
            ri_ = tl.arange(0, BLOCK_M)
            keep = (in_order > eps * tl.max(in_order, axis=0)) & (idx < n)
            u = tl.dot(a, p, input_precision="ieee", out_dtype=ACC)
            u = tl.where(keep[None, :], u / tl.where(keep, in_order, 1.0)[None, :], 0.0)
            if FULL:                                    # U is m x m: u's columns, then room for more
                qi = ri_
                u = tl.dot(u, (rows == qi[None, :]).to(ACC), input_precision="ieee", out_dtype=ACC)
                filled = tl.reduce(tl.where((rows == qi[None, :]) & keep[:, None], 1, 0), 0,
                                   tl.standard._sum_combine) > 0
                columns = m
            else:
                qi = idx
                filled = keep
                columns = n
            for j_ in range(columns):
                j = tl.cast(j_, tl.int64)
                if tl.reduce(tl.where((qi == j) & ~filled, 1, 0), 0, tl.standard._sum_combine) > 0:
                    coverage = tl.reduce(u * u, 1, tl.standard._sum_combine)
                    coverage = tl.where(ri_ < m, coverage, 2.0)
                    least = tl.reduce(coverage, 0, tl.standard._elementwise_min)
                    first = tl.reduce(tl.where(coverage == least, ri_, BLOCK_M), 0, tl.standard._elementwise_min)
                    c = tl.where(ri_ == first, 1.0, 0.0).to(ACC)
                    for _ in tl.static_range(2):
                        coef = tl.reduce(u * c[:, None], 0, tl.standard._sum_combine)
                        c = c - tl.reduce(u * coef[None, :], 1, tl.standard._sum_combine)
                    c = c / tl.sqrt(tl.reduce(c * c, 0, tl.standard._sum_combine))
                    u = tl.where(qi[None, :] == j, c[:, None], u)
                    filled = filled | (qi == j)
            u = tl.where(finite, u, float("nan"))
            tl.store(Q + b * s_qb + ri.to(tl.int64) * s_qr + qi[None, :].to(tl.int64) * s_qc, u,
                     mask=(ri < m) & (qi[None, :] < columns))


# --------------------------------------------------------------------------- block Jacobi (large n)
# Matrices past the registers are diagonalised by block Jacobi (backends/triton/linalg_spectral.py):
# the n indices in blocks of B, the blocks paired by the circle method, and for each pair (I, J)
# of a round the 2B x 2B subproblem (the rows and columns I u J; for the svd the Gram matrix of
# the columns I u J) diagonalised by jacobi_kernel; its eigenvectors Q then rotate the rows and
# columns I u J of the matrix (the columns of the svd's working matrix) and the columns of V, by
# tl.dot in tiles. The working matrices are zero-padded to a whole, even number of blocks.

@triton.jit
def symmetric_pad_kernel(A, X, n, n_pad, s_ab, s_ar, s_ac, s_xb, s_xr, s_xc,
                         LOWER: tl.constexpr, BLOCK: tl.constexpr):
    """X (n_pad x n_pad) = the symmetric matrix read from A's lower (upper) triangle, zero past n;
    one BLOCK x BLOCK tile per program (program_id(1), program_id(2))."""
    b = tl.program_id(0).to(tl.int64)
    r = (tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK))[:, None]
    c = (tl.program_id(2).to(tl.int64) * BLOCK + tl.arange(0, BLOCK))[None, :]
    if LOWER:
        first = r >= c
    else:
        first = r <= c
    row = tl.where(first, r, c)
    col = tl.where(first, c, r)
    inside = (r < n) & (c < n)
    a = tl.load(A + b * s_ab + row * s_ar + col * s_ac, mask=inside, other=0.0)
    tl.store(X + b * s_xb + r * s_xr + c * s_xc, a, mask=(r < n_pad) & (c < n_pad))


@triton.jit
def _pair_indices(blocks, p, B: tl.constexpr):
    """The 2B indices of the pair p: block blocks[2p] then block blocks[2p + 1]."""
    k = tl.arange(0, 2 * B)
    first = tl.load(blocks + 2 * p).to(tl.int64)
    second = tl.load(blocks + 2 * p + 1).to(tl.int64)
    return tl.where(k < B, first * B + k, second * B + (k - B))


@triton.jit
def pair_block_kernel(X, Out, measure, blocks, m, pairs_per_matrix,
                      s_xb, s_xr, s_xc, s_ob, s_or, s_oc,
                      GRAM: tl.constexpr, B: tl.constexpr, BLOCK_R: tl.constexpr):
    """Out[matrix, pair] = the 2B x 2B subproblem of pair p of matrix b: X's rows and columns of
    the pair (GRAM: the Gram matrix of X's columns of the pair, over X's m rows). ``measure``
    gets its off-diagonal part: the sum of its squares (two-sided) or, GRAM, the largest
    g_ij^2 / (g_ii g_jj) (the cosine of two columns' angle, squared)."""
    pid = tl.program_id(0).to(tl.int64)
    b = pid // pairs_per_matrix
    p = pid % pairs_per_matrix
    idx = _pair_indices(blocks, p, B)
    k = tl.arange(0, 2 * B)
    if GRAM:
        g = tl.zeros([2 * B, 2 * B], X.dtype.element_ty)
        rb = tl.arange(0, BLOCK_R)
        for r0_ in range(0, m, BLOCK_R):
            r0 = tl.cast(r0_, tl.int64)
            rows = r0 + rb
            x = tl.load(X + b * s_xb + rows[:, None] * s_xr + idx[None, :] * s_xc, mask=(rows < m)[:, None],
                        other=0.0)
            g += tl.dot(tl.trans(x), x, input_precision="ieee", out_dtype=X.dtype.element_ty)
        d = tl.sum(tl.where(k[:, None] == k[None, :], g, 0.0), axis=1)
        cosine2 = (g * g) / tl.where((d[:, None] * d[None, :]) > 0, d[:, None] * d[None, :], 1.0)
        off = tl.max(tl.max(tl.where(k[:, None] == k[None, :], 0.0, cosine2), axis=1), axis=0)
    else:
        g = tl.load(X + b * s_xb + idx[:, None] * s_xr + idx[None, :] * s_xc)
        off = tl.sum(tl.sum(tl.where(k[:, None] == k[None, :], 0.0, g * g), axis=1), axis=0)
    tl.store(Out + pid * s_ob + k[:, None].to(tl.int64) * s_or + k[None, :].to(tl.int64) * s_oc, g)
    tl.store(measure + pid, off)


@triton.jit
def pair_rotate_kernel(X, Q, blocks, length, pairs_per_matrix,
                       s_xb, s_xr, s_xc, s_qb, s_qr, s_qc,
                       ROWS: tl.constexpr, B: tl.constexpr, BLOCK_T: tl.constexpr):
    """In place, for pair p of matrix b (program_id(0)) and BLOCK_T of the other dim
    (program_id(1)): X's rows of the pair become Q^T times them (ROWS), or X's columns of the pair
    become them times Q. Each program owns its rows (columns) and its tile: no two write the
    same element."""
    pid = tl.program_id(0).to(tl.int64)
    b = pid // pairs_per_matrix
    p = pid % pairs_per_matrix
    idx = _pair_indices(blocks, p, B)
    k = tl.arange(0, 2 * B)
    q = tl.load(Q + pid * s_qb + k[:, None].to(tl.int64) * s_qr + k[None, :].to(tl.int64) * s_qc)
    t = tl.program_id(1).to(tl.int64) * BLOCK_T + tl.arange(0, BLOCK_T)
    if ROWS:
        ptrs = X + b * s_xb + idx[:, None] * s_xr + t[None, :] * s_xc
        mask = (t < length)[None, :]
        x = tl.load(ptrs, mask=mask, other=0.0)
        y = tl.dot(tl.trans(q), x, input_precision="ieee", out_dtype=q.dtype)
    else:
        ptrs = X + b * s_xb + t[:, None] * s_xr + idx[None, :] * s_xc
        mask = (t < length)[:, None]
        x = tl.load(ptrs, mask=mask, other=0.0)
        y = tl.dot(x, q, input_precision="ieee", out_dtype=q.dtype)
    tl.store(ptrs, y, mask=mask)


@triton.jit
def column_gather_kernel(Src, Dst, order, rows, cols, s_sb, s_sr, s_sc, s_db, s_dr, s_dc, s_ob,
                         BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """Dst[:, k] = Src[:, order[k]] (rows x cols; order int64, per matrix) in tiles
    (program_id(1), program_id(2))."""
    b = tl.program_id(0).to(tl.int64)
    r = tl.program_id(1).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)
    c = tl.program_id(2).to(tl.int64) * BLOCK_C + tl.arange(0, BLOCK_C)
    src = tl.load(order + b * s_ob + c, mask=c < cols, other=0)
    mask = (r < rows)[:, None] & (c < cols)[None, :]
    v = tl.load(Src + b * s_sb + r[:, None] * s_sr + src[None, :] * s_sc, mask=mask, other=0.0)
    tl.store(Dst + b * s_db + r[:, None] * s_dr + c[None, :] * s_dc, v, mask=mask)


@triton.jit
def column_signs_kernel(Q, R, m, k, s_qb, s_qr, s_qc, s_rb, s_rr, s_rc,
                        BLOCK_R: tl.constexpr, BLOCK_K: tl.constexpr):
    """Q[:, j] *= sign(R[j, j]) for the first k columns (a zero diagonal counts as +1): the Q of a
    Householder QR W = Q R of a matrix W with orthogonal columns, turned into W's normalised
    columns (the left singular vectors), with an orthonormal completion where W's are zero."""
    b = tl.program_id(0).to(tl.int64)
    j = tl.program_id(1).to(tl.int64) * BLOCK_K + tl.arange(0, BLOCK_K)
    jm = j < k
    d = tl.load(R + b * s_rb + j * s_rr + j * s_rc, mask=jm, other=1.0)
    sign = tl.where(d < 0, -1.0, 1.0)
    rb = tl.arange(0, BLOCK_R)
    for r0_ in range(0, m, BLOCK_R):
        r0 = tl.cast(r0_, tl.int64)
        rows = r0 + rb
        ptrs = Q + b * s_qb + rows[:, None] * s_qr + j[None, :] * s_qc
        mask = (rows[:, None] < m) & jm[None, :]
        q = tl.load(ptrs, mask=mask, other=0.0)
        tl.store(ptrs, q * sign[None, :].to(q.dtype), mask=mask)
