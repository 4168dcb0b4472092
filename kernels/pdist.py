"""Pairwise p-norm distances (pdist, cdist) and their backward, never an N x N x D temporary.

Two kernels serve both ops:

``dist_forward_kernel`` computes one [BLOCK_I, BLOCK_J] tile of distances between rows of ``a``
and rows of ``b`` (one batch entry per program_id(1)). For pdist (PACKED) ``b`` is ``a``, only the
tiles on and above the diagonal run (program t -> tile (ti, tj), ti <= tj, through the same
triangular mapping as the pairs, ``pair_from_index``), and each pair i < j is written to torch's
packed upper-triangle index ``pair_row_start(i, n) + j - i - 1``. Two ways to get a tile:
  - direct (any p): |a_i - b_j| as [BLOCK_I, BLOCK_J, BLOCK_K] slabs, reduced over BLOCK_K
    features at a time (a count for p = 0, a sum of |d|**p, a max for p = inf);
  - GRAM (p = 2): a Gram tile a @ b^T by ``tl.dot`` (the matrix units), with the row norms
    accumulated in the same loop; the epilogue forms |a|^2 + |b|^2 - 2 a.b, clamps it at 0 and
    takes the square root. Where that difference is small against the norms (below TOL times
    |a|^2 + |b|^2, i.e. where cancellation could have eaten its digits), the tile is recomputed
    by the direct path and those entries replaced: identical rows give exactly 0, near
    duplicates keep their digits.

``dist_backward_kernel`` computes, for a block of rows of ``a`` and a block of features,
grad_a[i] = sum_j G[i, j] * f(a_i - b_j) where f is torch's per-p derivative of the distance
(zero where the distance is 0; see ``_grad_term``). For pdist G is the symmetric extension of the
packed gradient (read at pair_row_start(min, max) + ...), b is a, and i == j is skipped; for cdist
the launcher calls it once for x1 and once for x2 with G transposed (f is odd in the difference).
For p = 2 (GRAM) the sum is rowsum(W) * a_i - W @ b with W = G / dist, on the matrix units.

Index arithmetic is int64 throughout. Block sizes are launch parameters (tests under the
interpreter use few, small programs); ``tl.dot`` tiles are >= 16 on a GPU. Accumulation is in
ACC (float32 for float32, float64 for float64). float scalars (p) arrive as float64 bit patterns.
"""
import triton
import triton.language as tl

from .strided import scalar_value

P_ZERO, P_ONE, P_TWO, P_INF, P_GENERAL = 0, 1, 2, 3, 4


# --------------------------------------------------------------------------- index mapping
@triton.jit
def _tri(r):
    """r * (r + 1) / 2 for int64 r < 2**32 without overflowing first: halve the even factor."""
    return tl.where(r % 2 == 0, (r // 2) * (r + 1), r * ((r + 1) // 2))


@triton.jit
def pair_row_start(i, n):
    """Packed index of the pair (i, i + 1): the n - 1 - r pairs of every earlier row come first.
    Written as total - tri(n - 1 - i), which stays below 2**63 for n <= 2**32."""
    n = n.to(tl.int64)
    return _tri(n - 1) - _tri(n - 1 - i.to(tl.int64))


@triton.jit
def pair_from_index(k, n):
    """(i, j), 0 <= i < j < n, of packed upper-triangle index k (torch's order, row by row).

    Counted from the end, m = total - 1 - k lies in the row with r = n - 1 - i pairs, the smallest
    r with tri(r) > m: r = floor((sqrt(8m + 1) - 1) / 2) + 1. The float64 square root is off by
    far less than 1 for m < 2**63, so one integer check each way makes r exact (n up to 2**32);
    counting from the end keeps the square root's argument small where rows are short, where
    counting from the start would lose the answer to cancellation."""
    n = n.to(tl.int64)
    k = k.to(tl.int64)
    total = _tri(n - 1)
    m = total - 1 - k
    s = tl.sqrt(m.to(tl.float64) * 8.0 + 1.0)
    r = ((s - 1.0) * 0.5).to(tl.int64) + 1
    r = tl.minimum(tl.maximum(r, 1), n - 1)
    r = tl.where(_tri(r - 1) > m, r - 1, r)
    r = tl.where(_tri(r) <= m, r + 1, r)
    i = n - 1 - r
    j = k - (total - _tri(r)) + i + 1
    return i, j


@triton.jit(do_not_specialize=["n", "count"])
def pair_index_probe_kernel(k_ptr, i_ptr, j_ptr, start_ptr, n, count, BLOCK: tl.constexpr):
    """(i, j) and pair_row_start(i) for ``count`` packed indices: tests the mapping at any n
    (past 2**31 pairs) without an output of n * (n - 1) / 2 elements."""
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < count
    k = tl.load(k_ptr + idx, mask=mask, other=0)
    i, j = pair_from_index(k, n)
    tl.store(i_ptr + idx, i, mask=mask)
    tl.store(j_ptr + idx, j, mask=mask)
    tl.store(start_ptr + idx, pair_row_start(i, n), mask=mask)


# --------------------------------------------------------------------------- forward
@triton.jit
def _pow_abs(x, p):
    """x ** p for x >= 0 (0 ** p is 0 for p > 0)."""
    safe = tl.where(x == 0, 1.0, x)
    return tl.where(x == 0, 0.0, tl.exp2(p * tl.log2(safe)))


@triton.jit
def _direct_tile(a_base, b_base, ri, rj, mi, mj, D, s_ai, s_ak, s_bj, s_bk, p,
                 P_KIND: tl.constexpr, ACC: tl.constexpr, BLOCK_I: tl.constexpr, BLOCK_J: tl.constexpr,
                 BLOCK_K: tl.constexpr):
    """The reduced sum (max for inf, count for 0) of |a_i - b_j| over the features, before the
    final root: a [BLOCK_I, BLOCK_J] tile built from [BLOCK_I, BLOCK_J, BLOCK_K] slabs."""
    acc = tl.zeros((BLOCK_I, BLOCK_J), dtype=ACC)
    for k0_ in range(0, D, BLOCK_K):
        k0 = tl.cast(k0_, tl.int64)     # int64 loop index (kernels/__init__.py)
        rk = k0 + tl.arange(0, BLOCK_K).to(tl.int64)
        mk = rk < D
        a = tl.load(a_base + ri[:, None] * s_ai + rk[None, :] * s_ak, mask=mi[:, None] & mk[None, :],
                    other=0.0).to(ACC)
        b = tl.load(b_base + rj[:, None] * s_bj + rk[None, :] * s_bk, mask=mj[:, None] & mk[None, :],
                    other=0.0).to(ACC)
        diff = tl.abs(a[:, None, :] - b[None, :, :])       # padded features: 0 - 0, adds nothing
        if P_KIND == 0:
            acc += tl.sum((diff != 0).to(ACC), axis=2)
        elif P_KIND == 1:
            acc += tl.sum(diff, axis=2)
        elif P_KIND == 2:
            acc += tl.sum(diff * diff, axis=2)
        elif P_KIND == 3:
            acc = tl.maximum(acc, tl.max(diff, axis=2))
        else:
            acc += tl.sum(_pow_abs(diff, p), axis=2)
    return acc


@triton.jit
def _finish(acc, p, P_KIND: tl.constexpr):
    """The distance from the reduced tile: the p-th root where there is one."""
    if P_KIND == 2:
        d = tl.sqrt(acc)
    elif P_KIND == 4:
        d = _pow_abs(acc, 1.0 / p)
    else:
        d = acc
    return d


@triton.jit(do_not_specialize=["n_a", "n_b", "D", "p_bits"])
def dist_forward_kernel(a_ptr, b_ptr, out_ptr, n_a, n_b, D,
                        s_ab, s_ai, s_ak, s_bb, s_bj, s_bk, s_ob, s_oi, s_oj,
                        p_bits, tol,
                        PACKED: tl.constexpr, P_KIND: tl.constexpr, GRAM: tl.constexpr,
                        ACC: tl.constexpr, PRECISION: tl.constexpr,
                        BLOCK_I: tl.constexpr, BLOCK_J: tl.constexpr, BLOCK_K: tl.constexpr,
                        BLOCK_KD: tl.constexpr):
    """out[b, i, j] = ||a[b, i] - b[b, j]||_p (PACKED: out[pair index of i < j], a is b, n_a rows).
    BLOCK_K: features per step of the Gram loop; BLOCK_KD: of the direct [I, J, K] slabs (for the
    Gram path: of its recomputation, which the launcher keeps at about as many elements as a
    direct tile's slab). ``tol``: the cancellation threshold of the Gram path (module docstring)."""
    t = tl.program_id(0).to(tl.int64)
    batch = tl.program_id(1).to(tl.int64)
    if PACKED:   # tiles ti <= tj are the pairs (ti, tj + 1) of a triangle of tiles + 1 rows
        ti, tj1 = pair_from_index(t, tl.cdiv(n_a, BLOCK_I) + 1)
        tj = tj1 - 1
    else:
        tiles_j = tl.cdiv(n_b, BLOCK_J)
        ti = t // tiles_j
        tj = t % tiles_j
    ri = ti * BLOCK_I + tl.arange(0, BLOCK_I).to(tl.int64)
    rj = tj * BLOCK_J + tl.arange(0, BLOCK_J).to(tl.int64)
    mi = ri < n_a
    mj = rj < n_b
    valid = mi[:, None] & mj[None, :]
    if PACKED:
        valid = valid & (ri[:, None] < rj[None, :])
    a_base = a_ptr + batch * s_ab
    b_base = b_ptr + batch * s_bb
    p = scalar_value(p_bits, 2, ACC)

    if GRAM:
        gram = tl.zeros((BLOCK_I, BLOCK_J), dtype=ACC)
        norm_a = tl.zeros((BLOCK_I,), dtype=ACC)
        norm_b = tl.zeros((BLOCK_J,), dtype=ACC)
        for k0_ in range(0, D, BLOCK_K):
            k0 = tl.cast(k0_, tl.int64)     # int64 loop index (kernels/__init__.py)
            rk = k0 + tl.arange(0, BLOCK_K).to(tl.int64)
            mk = rk < D
            a = tl.load(a_base + ri[:, None] * s_ai + rk[None, :] * s_ak, mask=mi[:, None] & mk[None, :],
                        other=0.0)
            bt = tl.load(b_base + rk[:, None] * s_bk + rj[None, :] * s_bj, mask=mk[:, None] & mj[None, :],
                         other=0.0)                                   # b^T: [BLOCK_K, BLOCK_J]
            gram = tl.dot(a, bt, gram, input_precision=PRECISION, out_dtype=ACC)
            a = a.to(ACC)
            bt = bt.to(ACC)
            norm_a += tl.sum(a * a, axis=1)
            norm_b += tl.sum(bt * bt, axis=0)
        scale = norm_a[:, None] + norm_b[None, :]
        sq = scale - 2.0 * gram
        cancelled = valid & (sq <= tol * scale)
        sq = tl.maximum(sq, 0.0)
        if tl.max(tl.max(cancelled.to(tl.int32), axis=1), axis=0) > 0:
            exact = _direct_tile(a_base, b_base, ri, rj, mi, mj, D, s_ai, s_ak, s_bj, s_bk, p,
                                 2, ACC, BLOCK_I, BLOCK_J, BLOCK_KD)
            sq = tl.where(cancelled, exact, sq)
        d = tl.sqrt(sq)
    else:
        d = _finish(_direct_tile(a_base, b_base, ri, rj, mi, mj, D, s_ai, s_ak, s_bj, s_bk, p,
                                 P_KIND, ACC, BLOCK_I, BLOCK_J, BLOCK_KD), p, P_KIND)

    if PACKED:
        off = pair_row_start(ri, n_a)[:, None] + (rj[None, :] - ri[:, None] - 1)
        off = tl.where(valid, off, 0)
        tl.store(out_ptr + off * s_oi, d.to(out_ptr.dtype.element_ty), mask=valid)
    else:
        tl.store(out_ptr + batch * s_ob + ri[:, None] * s_oi + rj[None, :] * s_oj,
                 d.to(out_ptr.dtype.element_ty), mask=valid)


# --------------------------------------------------------------------------- backward
@triton.jit
def _grad_term(diff, d, g, p, P_KIND: tl.constexpr):
    """torch's derivative of the distance d (= ||diff||_p) times the gradient g, per feature;
    0 wherever d is 0 (torch's zero subgradient). p = 1: sign(diff); p = inf: sign(diff) on the
    features that reach the max; other p: sign(diff) * (|diff| / d) ** (p - 1), and 0 where
    diff is 0 (for p < 1 that power would be infinite: torch gives 0 there too)."""
    sign = tl.where(diff > 0, 1.0, tl.where(diff < 0, -1.0, 0.0)).to(diff.dtype)
    if P_KIND == 1:
        r = sign * g
    elif P_KIND == 2:
        r = tl.where(d == 0, 0.0, diff * (g / tl.where(d == 0, 1.0, d)))
    elif P_KIND == 3:
        r = tl.where(tl.abs(diff) == d, sign * g, 0.0)
    else:
        ratio = tl.abs(diff) / tl.where(d == 0, 1.0, d)
        r = tl.where((d == 0) | (diff == 0), 0.0, sign * _pow_abs(ratio, p - 1.0) * g)
    return r


@triton.jit(do_not_specialize=["n_a", "n_b", "D", "p_bits"])
def dist_backward_kernel(g_ptr, d_ptr, a_ptr, b_ptr, res_ptr, n_a, n_b, D,
                         s_gb, s_gi, s_gj, s_db, s_di, s_dj,
                         s_ab, s_ai, s_ak, s_bb, s_bj, s_bk, s_rb, s_ri, s_rk,
                         p_bits,
                         PACKED: tl.constexpr, P_KIND: tl.constexpr, GRAM: tl.constexpr,
                         ACC: tl.constexpr, PRECISION: tl.constexpr,
                         BLOCK_I: tl.constexpr, BLOCK_J: tl.constexpr, BLOCK_D: tl.constexpr):
    """res[b, i, k] = sum_j G[b, i, j] * f(a[b, i, k] - b[b, j, k]) for a block of rows i and of
    features k (program_id 0 and 1; batch on 2). PACKED: G and dist are packed pdist vectors
    (element stride s_gi / s_di), b is a and j runs over every row but i."""
    ri = tl.program_id(0).to(tl.int64) * BLOCK_I + tl.arange(0, BLOCK_I).to(tl.int64)
    rk = tl.program_id(1).to(tl.int64) * BLOCK_D + tl.arange(0, BLOCK_D).to(tl.int64)
    batch = tl.program_id(2).to(tl.int64)
    mi = ri < n_a
    mk = rk < D
    p = scalar_value(p_bits, 2, ACC)
    a_base = a_ptr + batch * s_ab
    b_base = b_ptr + batch * s_bb
    a = tl.load(a_base + ri[:, None] * s_ai + rk[None, :] * s_ak, mask=mi[:, None] & mk[None, :],
                other=0.0).to(ACC)
    acc = tl.zeros((BLOCK_I, BLOCK_D), dtype=ACC)
    wsum = tl.zeros((BLOCK_I,), dtype=ACC)
    for j0_ in range(0, n_b, BLOCK_J):
        j0 = tl.cast(j0_, tl.int64)     # int64 loop index (kernels/__init__.py)
        rj = j0 + tl.arange(0, BLOCK_J).to(tl.int64)
        mj = rj < n_b
        pair = mi[:, None] & mj[None, :]
        if PACKED:
            pair = pair & (ri[:, None] != rj[None, :])
            lo = tl.minimum(ri[:, None], rj[None, :])
            hi = tl.maximum(ri[:, None], rj[None, :])
            k = tl.where(pair, pair_row_start(lo, n_a) + (hi - lo - 1), 0)
            g = tl.load(g_ptr + k * s_gi, mask=pair, other=0.0).to(ACC)
            d = tl.load(d_ptr + k * s_di, mask=pair, other=0.0).to(ACC)
        else:
            g = tl.load(g_ptr + batch * s_gb + ri[:, None] * s_gi + rj[None, :] * s_gj, mask=pair,
                        other=0.0).to(ACC)
            d = tl.load(d_ptr + batch * s_db + ri[:, None] * s_di + rj[None, :] * s_dj, mask=pair,
                        other=0.0).to(ACC)
        b = tl.load(b_base + rj[:, None] * s_bj + rk[None, :] * s_bk, mask=mj[:, None] & mk[None, :],
                    other=0.0).to(ACC)
        if GRAM:   # p = 2: sum_j W_ij (a_i - b_j) = rowsum(W) a_i - (W @ b)_i
            w = tl.where(d == 0, 0.0, g / tl.where(d == 0, 1.0, d))
            acc = tl.dot(w, b, acc, input_precision=PRECISION, out_dtype=ACC)
            wsum += tl.sum(w, axis=1)
        else:
            diff = a[:, None, :] - b[None, :, :]
            acc += tl.sum(_grad_term(diff, d[:, :, None], g[:, :, None], p, P_KIND), axis=1)
    if GRAM:
        acc = wsum[:, None] * a - acc
    tl.store(res_ptr + batch * s_rb + ri[:, None] * s_ri + rk[None, :] * s_rk,
             acc.to(res_ptr.dtype.element_ty), mask=mi[:, None] & mk[None, :])
