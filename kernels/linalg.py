"""Matrix factorizations and solvers: Cholesky, LU with partial pivoting, triangular solves, the
LU solve, Householder QR and its orthogonal factor.

Two kinds of kernel, both one program per matrix of a batch (program_id(0)):

* Small matrices live in registers: the whole matrix is one [BLOCK, BLOCK] block (BLOCK a power
  of two >= n, masks for the rest) and the factorization is the unblocked right-looking
  algorithm, a loop over its columns. A row or a column is taken out of the block with a masked
  sum (``tl.sum(tl.where(rows == k, a, 0))``), rows are exchanged with ``tl.where``, and the
  rank-1 update of the trailing block is one broadcast product. ``cholesky_kernel``,
  ``lu_kernel``; the solves keep the right-hand side block in registers and read the matrix's
  columns from memory one step at a time (``trsm_kernel``, ``lu_solve_kernel``).
* Large matrices are factorised by the launcher (backends/triton/linalg.py) in panels:
  ``cholesky_kernel`` on each diagonal block, ``lu_panel_kernel`` on each tall panel (in memory,
  in chunks of rows, its row exchanges applied across the whole matrix), ``trsm_kernel`` for the
  off-diagonal blocks and the Triton matmul (kernels/matmul.py) for the trailing updates.
  ``geqrf_kernel`` and ``householder_kernel`` work in memory in chunks at any size.

Conventions follow LAPACK as torch returns them: 1-based int32 pivots (row i was exchanged with
row pivots[i] - 1, in order), info = 1-based index of the first failure (0: none), Householder
reflectors as dlarfg makes them. A kernel that factorises part of a matrix (a diagonal block,
a panel) reports failures at ``offset`` + its own index and keeps an earlier failure
(KEEP_INFO). Offsets are int64 (loop indices are cast before they multiply a stride); the
arithmetic is in the matrix's dtype (float32 or float64). Programs that update memory they
read again in a later step separate the steps with ``tl.debug_barrier()`` (a block-wide
barrier on a GPU). Deterministic: no atomics, a fixed order of operations.
"""
import triton
import triton.language as tl


# --------------------------------------------------------------------------- in registers
@triton.jit
def _entry(a, rows, cols, i, j):
    """a[i, j] of a register block."""
    return tl.sum(tl.sum(tl.where((rows == i) & (cols == j), a, 0.0), axis=1), axis=0)


@triton.jit
def _store_info(info, code, offset, KEEP_INFO: tl.constexpr):
    if KEEP_INFO:
        old = tl.load(info)
        code = tl.where(old != 0, old, tl.where(code != 0, code + offset, 0))
    tl.store(info, code)


@triton.jit
def cholesky_kernel(A, L, info, n, offset,
                    s_ab, s_ar, s_ac, s_lb, s_lr, s_lc, s_ib,
                    UPPER: tl.constexpr, KEEP_INFO: tl.constexpr, BLOCK: tl.constexpr):
    """L = the Cholesky factor of the symmetric matrix read from A's lower (UPPER: upper)
    triangle: lower L, or U = L^T for UPPER, the other triangle zero. A matrix that is not
    positive definite stops at its first non-positive pivot k, left in place as LAPACK's potf2
    leaves it, and reports k + 1 (+ offset) in info. A and L may be the same memory."""
    b = tl.program_id(0).to(tl.int64)
    r = tl.arange(0, BLOCK)
    rows = r[:, None]
    cols = r[None, :]
    inside = (rows < n) & (cols < n)
    a = tl.load(A + b * s_ab + rows.to(tl.int64) * s_ar + cols.to(tl.int64) * s_ac, mask=inside, other=0.0)
    if UPPER:
        a = tl.where(rows <= cols, a, tl.trans(a))
    else:
        a = tl.where(rows >= cols, a, tl.trans(a))
    code = tl.full([], 0, tl.int32)
    for k in range(n):
        d = _entry(a, rows, cols, k, k)
        code = tl.where((code == 0) & ((d > 0) == 0), k + 1, code)   # not d > 0: NaN fails too
        live = code == 0
        s = tl.sqrt(tl.where(live, d, 1.0))
        col = tl.sum(tl.where(cols == k, a, 0.0), axis=1) / s      # column k of L (rows >= k)
        row = tl.sum(tl.where(rows == k, a, 0.0), axis=0) / s      # the same numbers as a row
        a = tl.where(live & (rows > k) & (cols > k), a - col[:, None] * row[None, :], a)
        a = tl.where(live & (cols == k) & (rows >= k), col[:, None], a)
        a = tl.where(live & (rows == k) & (cols > k), row[None, :], a)
    if UPPER:
        a = tl.where(rows <= cols, a, 0.0)
    else:
        a = tl.where(rows >= cols, a, 0.0)
    tl.store(L + b * s_lb + rows.to(tl.int64) * s_lr + cols.to(tl.int64) * s_lc, a, mask=inside)
    _store_info(info + b * s_ib, code, offset, KEEP_INFO)


@triton.jit
def lu_kernel(A, LU, piv, info, m, n,
              s_ab, s_ar, s_ac, s_lb, s_lr, s_lc, s_pb, s_ib,
              PIVOT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """The packed LU factorization of one m x n matrix with partial pivoting (getrf): L's
    strict lower part (unit diagonal implied) and U's upper part in LU, the 1-based row
    exchanges in piv (min(m, n) of them), the first exactly-zero pivot (1-based) in info. The
    pivot is the first entry of largest magnitude (NaN never wins, as in idamax); with a zero
    pivot the column is left unscaled. Without PIVOT no rows are exchanged (piv = 1, 2, ...)."""
    b = tl.program_id(0).to(tl.int64)
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rows = rm[:, None]
    cols = rn[None, :]
    inside = (rows < m) & (cols < n)
    a = tl.load(A + b * s_ab + rows.to(tl.int64) * s_ar + cols.to(tl.int64) * s_ac, mask=inside, other=0.0)
    steps = tl.minimum(m, n)
    pv = tl.zeros([BLOCK_N], dtype=tl.int32)
    code = tl.full([], 0, tl.int32)
    for k in range(steps):
        if PIVOT:
            col = tl.sum(tl.where(cols == k, a, 0.0), axis=1)
            mag = tl.abs(col)
            mag = tl.where(mag == mag, mag, -1.0)                       # NaN: never the pivot
            mag = tl.where((rm >= k) & (rm < m), mag, -2.0)
            big = tl.max(mag, axis=0)
            p = tl.min(tl.where(mag == big, rm, BLOCK_M), axis=0)
            p = tl.where(big < 0, k, p)                                 # all NaN: the row itself
        else:
            p = k
        row_k = tl.sum(tl.where(rows == k, a, 0.0), axis=0)
        row_p = tl.sum(tl.where(rows == p, a, 0.0), axis=0)
        a = tl.where(rows == k, row_p[None, :], tl.where(rows == p, row_k[None, :], a))
        pv = tl.where(rn == k, p + 1, pv)
        d = tl.sum(tl.where(rn == k, row_p, 0.0), axis=0)
        code = tl.where((code == 0) & (d == 0), k + 1, code)
        col = tl.sum(tl.where(cols == k, a, 0.0), axis=1)
        lk = tl.where(d != 0, col / tl.where(d != 0, d, 1.0), col)
        a = tl.where((cols == k) & (rows > k), lk[:, None], a)
        a = tl.where((rows > k) & (cols > k), a - lk[:, None] * row_p[None, :], a)
    tl.store(LU + b * s_lb + rows.to(tl.int64) * s_lr + cols.to(tl.int64) * s_lc, a, mask=inside)
    tl.store(piv + b * s_pb + rn.to(tl.int64), pv, mask=rn < steps)
    tl.store(info + b * s_ib, code)


# --------------------------------------------------------------------------- in memory (large)
@triton.jit
def lu_panel_kernel(A, piv, info, m, n, k0, width,
                    s_ab, s_ar, s_ac, s_pb, s_ib,
                    PIVOT: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr,
                    BLOCK_W: tl.constexpr):
    """Factor the panel of columns k0 .. k0 + width - 1 (rows k0 .. m - 1) of one matrix in
    place, as lu_kernel does, in chunks of BLOCK_R rows: each pivot's row exchange spans the
    whole matrix (all n columns, LAPACK's laswp on both sides of the panel), and only the
    panel's own columns get the rank-1 updates (the launcher updates the rest with a
    triangular solve and a matrix product). Pivots and info are absolute (1-based)."""
    b = tl.program_id(0).to(tl.int64)
    Ab = A + b * s_ab
    rb = tl.arange(0, BLOCK_R)
    cb = tl.arange(0, BLOCK_C)
    wb = tl.arange(0, BLOCK_W)
    code = tl.load(info + b * s_ib)
    for jj in range(width):
        j = k0 + jj
        j64 = tl.cast(j, tl.int64)
        p = j
        if PIVOT:
            best = tl.full([], -1.0, A.dtype.element_ty)
            for r0 in range(j, m, BLOCK_R):
                rows = r0 + rb
                v = tl.abs(tl.load(Ab + rows.to(tl.int64) * s_ar + j64 * s_ac, mask=rows < m, other=0.0))
                v = tl.where((rows < m) & (v == v), v, -1.0)
                cmax = tl.max(v, axis=0)
                cidx = tl.min(tl.where(v == cmax, rows, m), axis=0)
                take = cmax > best
                p = tl.where(take, cidx, p)
                best = tl.where(take, cmax, best)
        tl.store(piv + b * s_pb + j64, p + 1)
        p64 = tl.cast(p, tl.int64)
        for c0 in range(0, n, BLOCK_C):
            c = (c0 + cb).to(tl.int64)
            cm = c < n
            rj = tl.load(Ab + j64 * s_ar + c * s_ac, mask=cm)
            rp = tl.load(Ab + p64 * s_ar + c * s_ac, mask=cm)
            tl.store(Ab + j64 * s_ar + c * s_ac, rp, mask=cm)
            tl.store(Ab + p64 * s_ar + c * s_ac, rj, mask=cm)
        tl.debug_barrier()
        d = tl.load(Ab + j64 * s_ar + j64 * s_ac)
        code = tl.where((code == 0) & (d == 0), j + 1, code)
        wc = j + 1 + wb
        wm = wc < k0 + width
        urow = tl.load(Ab + j64 * s_ar + wc.to(tl.int64) * s_ac, mask=wm, other=0.0)
        for r0 in range(j + 1, m, BLOCK_R):
            rows = r0 + rb
            rmask = rows < m
            r64 = rows.to(tl.int64)
            lcol = tl.load(Ab + r64 * s_ar + j64 * s_ac, mask=rmask, other=0.0)
            lcol = tl.where(d != 0, lcol / tl.where(d != 0, d, 1.0), lcol)
            tl.store(Ab + r64 * s_ar + j64 * s_ac, lcol, mask=rmask)
            ptrs = Ab + r64[:, None] * s_ar + wc.to(tl.int64)[None, :] * s_ac
            bm = rmask[:, None] & wm[None, :]
            blk = tl.load(ptrs, mask=bm, other=0.0)
            tl.store(ptrs, blk - lcol[:, None] * urow[None, :], mask=bm)
        tl.debug_barrier()
    tl.store(info + b * s_ib, code)


# --------------------------------------------------------------------------- solves
@triton.jit
def trsm_kernel(A, B, X, n, nrhs,
                s_ab, s_ar, s_ac, s_bb, s_br, s_bc, s_xb, s_xr, s_xc,
                UPPER: tl.constexpr, UNIT: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """X = A^-1 B for triangular A (n x n; only its triangle is read, the diagonal taken as
    ones with UNIT) and BLOCK_K columns of B per program (program_id(1)): forward (lower) or
    back (upper) substitution with B's block in registers, one column of A read per step. No
    check of the diagonal: a zero gives inf/nan, as LAPACK's trsm. X may be B's memory."""
    b = tl.program_id(0).to(tl.int64)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    r64 = rn.to(tl.int64)
    k64 = rk.to(tl.int64)
    mask = (rn[:, None] < n) & (rk[None, :] < nrhs)
    x = tl.load(B + b * s_bb + r64[:, None] * s_br + k64[None, :] * s_bc, mask=mask, other=0.0)
    Ab = A + b * s_ab
    for t in range(n):
        if UPPER:
            i = n - 1 - t
        else:
            i = t
        acol = tl.load(Ab + r64 * s_ar + tl.cast(i, tl.int64) * s_ac, mask=rn < n, other=0.0)
        xi = tl.sum(tl.where(rn[:, None] == i, x, 0.0), axis=0)
        if not UNIT:
            xi = xi / tl.sum(tl.where(rn == i, acol, 0.0), axis=0)
        x = tl.where(rn[:, None] == i, xi[None, :], x)
        if UPPER:
            below = rn < i
        else:
            below = (rn > i) & (rn < n)
        x = tl.where(below[:, None], x - acol[:, None] * xi[None, :], x)
    tl.store(X + b * s_xb + r64[:, None] * s_xr + k64[None, :] * s_xc, x, mask=mask)


@triton.jit
def _row_order(Pb, rn, n):
    """perm with (P^T B)[i] = B[perm[i]]: the n 1-based row exchanges at Pb applied in order
    to 0, 1, ..., n - 1 (a vector, so the right-hand side is permuted as it is loaded)."""
    perm = rn
    for j in range(n):
        p = tl.load(Pb + j) - 1
        at_j = tl.sum(tl.where(rn == j, perm, 0), axis=0)
        at_p = tl.sum(tl.where(rn == p, perm, 0), axis=0)
        perm = tl.where(rn == j, at_p, tl.where(rn == p, at_j, perm))
    return perm


@triton.jit
def lu_solve_kernel(LU, piv, B, X, n, nrhs,
                    s_lb, s_lr, s_lc, s_pb, s_bb, s_br, s_bc, s_xb, s_xr, s_xc,
                    ADJOINT: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """X = A^-1 B (ADJOINT: A^-T B) for A = P L U given packed as (LU, 1-based pivots), BLOCK_K
    columns of B per program (getrs): B's rows read in the exchanged order, then L's unit-lower
    and U's upper substitutions (ADJOINT: U^T's and L^T's, and the rows written back in the
    exchanged order), with B's block in registers and LU read a column (a row, for the
    transposes) per step."""
    b = tl.program_id(0).to(tl.int64)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    r64 = rn.to(tl.int64)
    k64 = rk.to(tl.int64)
    mask = (rn[:, None] < n) & (rk[None, :] < nrhs)
    Lb = LU + b * s_lb
    inside = rn < n
    perm = _row_order(piv + b * s_pb, rn, n).to(tl.int64)
    if ADJOINT:
        x = tl.load(B + b * s_bb + r64[:, None] * s_br + k64[None, :] * s_bc, mask=mask, other=0.0)
        for i in range(n):                                   # U^T y = b: U's row i is U^T's column i
            urow = tl.load(Lb + tl.cast(i, tl.int64) * s_lr + r64 * s_lc, mask=inside & (rn >= i), other=0.0)
            xi = tl.sum(tl.where(rn[:, None] == i, x, 0.0), axis=0) / tl.sum(tl.where(rn == i, urow, 0.0), axis=0)
            x = tl.where(rn[:, None] == i, xi[None, :], x - urow[:, None] * xi[None, :])
        for t in range(n):                                   # L^T z = y (unit diagonal)
            i = n - 1 - t
            lrow = tl.load(Lb + tl.cast(i, tl.int64) * s_lr + r64 * s_lc, mask=inside & (rn < i), other=0.0)
            xi = tl.sum(tl.where(rn[:, None] == i, x, 0.0), axis=0)
            x = x - lrow[:, None] * xi[None, :]
        # x = P z: row i of z is row perm[i] of x
        tl.store(X + b * s_xb + perm[:, None] * s_xr + k64[None, :] * s_xc, x, mask=mask)
    else:
        x = tl.load(B + b * s_bb + perm[:, None] * s_br + k64[None, :] * s_bc, mask=mask, other=0.0)
        for i in range(n):                                   # L y = P^T b (unit diagonal)
            lcol = tl.load(Lb + r64 * s_lr + tl.cast(i, tl.int64) * s_lc, mask=inside & (rn > i), other=0.0)
            xi = tl.sum(tl.where(rn[:, None] == i, x, 0.0), axis=0)
            x = x - lcol[:, None] * xi[None, :]
        for t in range(n):                                   # U x = y
            i = n - 1 - t
            ucol = tl.load(Lb + r64 * s_lr + tl.cast(i, tl.int64) * s_lc, mask=inside & (rn <= i), other=0.0)
            xi = tl.sum(tl.where(rn[:, None] == i, x, 0.0), axis=0) / tl.sum(tl.where(rn == i, ucol, 0.0), axis=0)
            x = tl.where(rn[:, None] == i, xi[None, :], x - ucol[:, None] * xi[None, :])
        tl.store(X + b * s_xb + r64[:, None] * s_xr + k64[None, :] * s_xc, x, mask=mask)


@triton.jit
def laswp_kernel(X, piv, k, ncols, s_xb, s_xr, s_xc, s_pb,
                 REVERSE: tl.constexpr, BLOCK_C: tl.constexpr):
    """LAPACK's laswp on BLOCK_C columns of one matrix (program_id(1)): rows j and piv[j] - 1
    exchanged for j = 0 .. k - 1 (REVERSE: k - 1 .. 0, undoing them). Every row is read and
    written through the same [BLOCK_C] layout, so each element stays with its thread."""
    b = tl.program_id(0).to(tl.int64)
    c = (tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)).to(tl.int64)
    cm = c < ncols
    Xb = X + b * s_xb + c * s_xc
    for t in range(k):
        if REVERSE:
            j = k - 1 - t
        else:
            j = t
        p = (tl.load(piv + b * s_pb + j) - 1).to(tl.int64)
        j64 = tl.cast(j, tl.int64)
        rj = tl.load(Xb + j64 * s_xr, mask=cm)
        rp = tl.load(Xb + p * s_xr, mask=cm)
        tl.store(Xb + j64 * s_xr, rp, mask=cm)
        tl.store(Xb + p * s_xr, rj, mask=cm)


@triton.jit
def permutation_kernel(piv, perm, m, k, s_pb, s_qb, BLOCK_M: tl.constexpr):
    """perm (int64, m entries) with (P^T A)[i] = A[perm[i]]: the k 1-based row exchanges of
    piv applied in order to 0, 1, ..., m - 1."""
    b = tl.program_id(0).to(tl.int64)
    r = tl.arange(0, BLOCK_M)
    q = r.to(tl.int64)
    for j in range(k):
        p = tl.load(piv + b * s_pb + j) - 1
        qj = tl.sum(tl.where(r == j, q, 0), axis=0)
        qp = tl.sum(tl.where(r == p, q, 0), axis=0)
        q = tl.where(r == j, qp, tl.where(r == p, qj, q))
    tl.store(perm + b * s_qb + r.to(tl.int64), q, mask=r < m)


# --------------------------------------------------------------------------- Householder
@triton.jit
def geqrf_kernel(A, tau, m, n, s_ab, s_ar, s_ac, s_tb,
                 BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """Householder QR of one matrix in place (LAPACK's geqr2): for each column j, dlarfg's
    reflector H = I - tau v v^T with v = (1, x / (alpha - beta)), beta = -sign(alpha) *
    ||(alpha, x)|| (tau = 0 and nothing changed when x is zero), then H applied to the columns
    to its right. R ends on and above the diagonal, the v's below it; tau[j] its factor."""
    b = tl.program_id(0).to(tl.int64)
    Ab = A + b * s_ab
    rb = tl.arange(0, BLOCK_R)
    cb = tl.arange(0, BLOCK_C)
    steps = tl.minimum(m, n)
    for j in range(steps):
        j64 = tl.cast(j, tl.int64)
        alpha = tl.load(Ab + j64 * s_ar + j64 * s_ac)
        ss = alpha * 0.0
        for r0 in range(j + 1, m, BLOCK_R):
            rows = (r0 + rb).to(tl.int64)
            v = tl.load(Ab + rows * s_ar + j64 * s_ac, mask=rows < m, other=0.0)
            ss += tl.sum(v * v, axis=0)
        xnorm = tl.sqrt(ss)
        norm = tl.sqrt(alpha * alpha + ss)
        beta = tl.where(alpha >= 0, -norm, norm)
        trivial = xnorm == 0
        t = tl.where(trivial, 0.0, (beta - alpha) / tl.where(trivial, 1.0, beta))
        scale = tl.where(trivial, 1.0, 1.0 / tl.where(trivial, 1.0, alpha - beta))
        tl.store(tau + b * s_tb + j64, t)
        for r0 in range(j + 1, m, BLOCK_R):
            rows = (r0 + rb).to(tl.int64)
            ptr = Ab + rows * s_ar + j64 * s_ac
            tl.store(ptr, tl.load(ptr, mask=rows < m, other=0.0) * scale, mask=rows < m)
        tl.store(Ab + j64 * s_ar + j64 * s_ac, tl.where(trivial, alpha, beta))
        tl.debug_barrier()
        for c0 in range(j + 1, n, BLOCK_C):                 # A[j:, c] -= tau v (v^T A[j:, c])
            c = (c0 + cb).to(tl.int64)
            cm = c < n
            w = tl.load(Ab + j64 * s_ar + c * s_ac, mask=cm, other=0.0)
            for r0 in range(j + 1, m, BLOCK_R):
                rows = (r0 + rb).to(tl.int64)
                rmask = rows < m
                v = tl.load(Ab + rows * s_ar + j64 * s_ac, mask=rmask, other=0.0)
                blk = tl.load(Ab + rows[:, None] * s_ar + c[None, :] * s_ac, mask=rmask[:, None] & cm[None, :],
                              other=0.0)
                w += tl.sum(v[:, None] * blk, axis=0)
            w = w * t
            top = Ab + j64 * s_ar + c * s_ac
            tl.store(top, tl.load(top, mask=cm, other=0.0) - w, mask=cm)
            for r0 in range(j + 1, m, BLOCK_R):
                rows = (r0 + rb).to(tl.int64)
                rmask = rows < m
                v = tl.load(Ab + rows * s_ar + j64 * s_ac, mask=rmask, other=0.0)
                ptrs = Ab + rows[:, None] * s_ar + c[None, :] * s_ac
                bm = rmask[:, None] & cm[None, :]
                tl.store(ptrs, tl.load(ptrs, mask=bm, other=0.0) - v[:, None] * w[None, :], mask=bm)
        tl.debug_barrier()


@triton.jit
def householder_kernel(A, tau, Q, m, n, k,
                       s_ab, s_ar, s_ac, s_tb, s_qb, s_qr, s_qc,
                       BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    """Q = the first n columns of H_1 ... H_k (orgqr), H_i = I - tau_i v_i v_i^T with v_i read
    from A's column i below the diagonal (1 on it): Q starts as the m x n identity and the
    reflectors are applied innermost first, each to the columns it can change (>= i)."""
    b = tl.program_id(0).to(tl.int64)
    Ab = A + b * s_ab
    Qb = Q + b * s_qb
    rb = tl.arange(0, BLOCK_R)
    cb = tl.arange(0, BLOCK_C)
    for r0 in range(0, m, BLOCK_R):
        rows = r0 + rb
        for c0 in range(0, n, BLOCK_C):
            cols = c0 + cb
            eye = tl.where(rows[:, None] == cols[None, :], 1.0, 0.0)
            tl.store(Qb + rows.to(tl.int64)[:, None] * s_qr + cols.to(tl.int64)[None, :] * s_qc,
                     eye.to(Q.dtype.element_ty), mask=(rows[:, None] < m) & (cols[None, :] < n))
    tl.debug_barrier()
    for s in range(k):
        i = k - 1 - s
        i64 = tl.cast(i, tl.int64)
        t = tl.load(tau + b * s_tb + i64)
        for c0 in range(i, n, BLOCK_C):
            c = (c0 + cb).to(tl.int64)
            cm = c < n
            w = tl.load(Qb + i64 * s_qr + c * s_qc, mask=cm, other=0.0)
            for r0 in range(i + 1, m, BLOCK_R):
                rows = (r0 + rb).to(tl.int64)
                rmask = rows < m
                v = tl.load(Ab + rows * s_ar + i64 * s_ac, mask=rmask, other=0.0)
                blk = tl.load(Qb + rows[:, None] * s_qr + c[None, :] * s_qc, mask=rmask[:, None] & cm[None, :],
                              other=0.0)
                w += tl.sum(v[:, None] * blk, axis=0)
            w = w * t
            top = Qb + i64 * s_qr + c * s_qc
            tl.store(top, tl.load(top, mask=cm, other=0.0) - w, mask=cm)
            for r0 in range(i + 1, m, BLOCK_R):
                rows = (r0 + rb).to(tl.int64)
                rmask = rows < m
                v = tl.load(Ab + rows * s_ar + i64 * s_ac, mask=rmask, other=0.0)
                ptrs = Qb + rows[:, None] * s_qr + c[None, :] * s_qc
                bm = rmask[:, None] & cm[None, :]
                tl.store(ptrs, tl.load(ptrs, mask=bm, other=0.0) - v[:, None] * w[None, :], mask=bm)
        tl.debug_barrier()
