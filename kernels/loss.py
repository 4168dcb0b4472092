"""Cross entropy with class-index targets: log_softmax and the negative log likelihood fused,
forward and backward, one program per BLOCK_M rows; log_softmax is never written to memory.

A row is one sample's C class scores (the class dim has one stride; rows are the other dims,
described by kshape and per-operand strides as in kernels/softmax.py). Per row, with
lse = max + log(sum(exp(x - max))) and t the target class:
  nll    = w[t] * (lse - x[t])                 (w = 1 without weights)
  smooth = sum_c w[c] * (lse - x[c])           (the label-smoothing term)
both 0 where t == ignore_index. The forward writes the two per-row values to out[0] and out[1]
(out[1] sits PART elements after out[0]); the op layer mixes and reduces them.
Backward, with g0, g1 the incoming gradients of nll and smooth, p = softmax(x), W = sum_c w[c]:
  dx[c] = p[c] * (g0 * w[t] + g1 * W) - g0 * w[t] * [c == t] - g1 * w[c]
Rows that fit one [BLOCK_M, BLOCK_N] tile (ONE_TILE) are read once per pass; longer rows keep an
online max and rescaled sum (as the softmax kernel), and the backward reads them a second time
to write dx. Accumulation is in COMPUTE (float32, or float64); every sum has a fixed order, so
results are bit-identical run after run.
"""
import triton
import triton.language as tl

from .strided import convert, store_cast, strided_offset


@triton.jit
def _row_stats(x_ptr, w_ptr, x_row, row_mask, cols0, N, x_cstride, HAS_W: tl.constexpr, COMPUTE: tl.constexpr,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, ONE_TILE: tl.constexpr):
    """(max, log-sum-exp, sum_c w[c] (x[c] - ref), ref, W) per row; ``ref`` is the first chunk's
    row max (a fixed shift that keeps the weighted sum free of cancellation for large x)."""
    if ONE_TILE:
        mask = row_mask[:, None] & (cols0 < N)[None, :]
        x = convert(tl.load(x_ptr + (x_row[:, None] + cols0[None, :] * x_cstride), mask=mask, other=0), COMPUTE)
        v = tl.where(mask, x, float("-inf"))
        m = tl.max(v, 1)
        s = tl.sum(tl.where(mask, tl.exp(v - m[:, None]), 0.0).to(COMPUTE), 1)
        ref = m
        if HAS_W:
            w = convert(tl.load(w_ptr + cols0, mask=cols0 < N, other=0), COMPUTE)
        else:
            w = tl.where(cols0 < N, 1.0, 0.0).to(COMPUTE)
        wx = tl.sum(tl.where(mask, (x - ref[:, None]) * w[None, :], 0.0).to(COMPUTE), 1)
        wsum = tl.sum(w, 0)
    else:
        m = tl.full([BLOCK_M], float("-inf"), COMPUTE)
        s = tl.zeros([BLOCK_M], COMPUTE)
        ref = tl.zeros([BLOCK_M], COMPUTE)
        wx = tl.zeros([BLOCK_M], COMPUTE)
        wsum = tl.zeros([BLOCK_N], COMPUTE)
        for n0_ in range(0, N, BLOCK_N):
            n0 = tl.cast(n0_, tl.int64)     # int64 loop index (kernels/__init__.py)
            cols = n0 + cols0
            mask = row_mask[:, None] & (cols < N)[None, :]
            x = convert(tl.load(x_ptr + (x_row[:, None] + cols[None, :] * x_cstride), mask=mask, other=0), COMPUTE)
            v = tl.where(mask, x, float("-inf"))
            m_new = tl.maximum(m, tl.max(v, 1))
            empty = m_new == float("-inf")
            alpha = tl.where(empty, 1.0, tl.exp(m - m_new)).to(COMPUTE)
            p = tl.where(empty[:, None], 0.0, tl.exp(v - m_new[:, None])).to(COMPUTE)
            s = s * alpha + tl.sum(p, 1)
            if n0 == 0:
                ref = m_new
            m = m_new
            if HAS_W:
                w = convert(tl.load(w_ptr + cols, mask=cols < N, other=0), COMPUTE)
            else:
                w = tl.where(cols < N, 1.0, 0.0).to(COMPUTE)
            wx += tl.sum(tl.where(mask, (x - ref[:, None]) * w[None, :], 0.0).to(COMPUTE), 1)
            wsum += w
        wsum = tl.sum(wsum, 0)
    lse = m + tl.log(s)
    return m, lse, wx, ref, wsum


@triton.jit
def _target(t_ptr, w_ptr, x_ptr, t_row, x_row, row_mask, N, x_cstride, ignore_index, HAS_W: tl.constexpr,
            COMPUTE: tl.constexpr):
    """(t, valid, w[t], x[t]) per row: one gathered load each, none for ignored rows. The op
    layer checks targets against [0, N), on cuda as a device-side assert that lets them reach
    this kernel (runtime/device_errors.py); they are masked here, so no target can make the
    kernel read outside its row."""
    t = tl.load(t_ptr + t_row, mask=row_mask, other=0).to(tl.int64)
    valid = row_mask & (t != ignore_index) & (t >= 0) & (t < N)
    xt = convert(tl.load(x_ptr + (x_row + t * x_cstride), mask=valid, other=0), COMPUTE)
    if HAS_W:
        wt = convert(tl.load(w_ptr + t, mask=valid, other=0), COMPUTE)
    else:
        wt = tl.where(valid, 1.0, 0.0).to(COMPUTE)
    return t, valid, wt, xt


@triton.jit
def cross_entropy_fwd_kernel(x_ptr, t_ptr, w_ptr, out_ptr, M, N, kshape, x_kstrides, t_kstrides, o_kstrides,
                             x_cstride, PART, ignore_index,
                             HAS_W: tl.constexpr, COMPUTE: tl.constexpr, KRANK: tl.constexpr,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, ONE_TILE: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    x_row = strided_offset(rows, kshape, x_kstrides, KRANK)
    t_row = strided_offset(rows, kshape, t_kstrides, KRANK)
    o_row = strided_offset(rows, kshape, o_kstrides, KRANK)
    cols0 = tl.arange(0, BLOCK_N).to(tl.int64)
    m, lse, wx, ref, wsum = _row_stats(x_ptr, w_ptr, x_row, row_mask, cols0, N, x_cstride, HAS_W, COMPUTE,
                                       BLOCK_M, BLOCK_N, ONE_TILE)
    t, valid, wt, xt = _target(t_ptr, w_ptr, x_ptr, t_row, x_row, row_mask, N, x_cstride, ignore_index, HAS_W,
                               COMPUTE)
    nll = tl.where(valid, wt * (lse - xt), 0.0)
    smooth = tl.where(valid, wsum * (lse - ref) - wx, 0.0)
    store_cast(out_ptr + o_row, nll, row_mask)
    store_cast(out_ptr + (o_row + PART), smooth, row_mask)


@triton.jit
def cross_entropy_bwd_kernel(g_ptr, x_ptr, t_ptr, w_ptr, dx_ptr, M, N, kshape, g_kstrides, x_kstrides, t_kstrides,
                             d_kstrides, x_cstride, d_cstride, G_PART, ignore_index,
                             HAS_W: tl.constexpr, COMPUTE: tl.constexpr, KRANK: tl.constexpr,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, ONE_TILE: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    g_row = strided_offset(rows, kshape, g_kstrides, KRANK)
    x_row = strided_offset(rows, kshape, x_kstrides, KRANK)
    t_row = strided_offset(rows, kshape, t_kstrides, KRANK)
    d_row = strided_offset(rows, kshape, d_kstrides, KRANK)
    cols0 = tl.arange(0, BLOCK_N).to(tl.int64)
    m, lse, wx, ref, wsum = _row_stats(x_ptr, w_ptr, x_row, row_mask, cols0, N, x_cstride, HAS_W, COMPUTE,
                                       BLOCK_M, BLOCK_N, ONE_TILE)
    t, valid, wt, xt = _target(t_ptr, w_ptr, x_ptr, t_row, x_row, row_mask, N, x_cstride, ignore_index, HAS_W,
                               COMPUTE)
    g0 = tl.where(valid, convert(tl.load(g_ptr + g_row, mask=row_mask, other=0), COMPUTE), 0.0)
    g1 = tl.where(valid, convert(tl.load(g_ptr + (g_row + G_PART), mask=row_mask, other=0), COMPUTE), 0.0)
    a = g0 * wt
    scale = a + g1 * wsum
    for n0_ in range(0, N, BLOCK_N):
        n0 = tl.cast(n0_, tl.int64)     # int64 loop index (kernels/__init__.py)
        cols = n0 + cols0
        col_mask = cols < N
        mask = row_mask[:, None] & col_mask[None, :]
        x = convert(tl.load(x_ptr + (x_row[:, None] + cols[None, :] * x_cstride), mask=mask, other=0), COMPUTE)
        p = tl.exp(x - lse[:, None])
        if HAS_W:
            w = convert(tl.load(w_ptr + cols, mask=col_mask, other=0), COMPUTE)
        else:
            w = tl.where(col_mask, 1.0, 0.0).to(COMPUTE)
        dx = p * scale[:, None] - tl.where(cols[None, :] == t[:, None], a[:, None], 0.0) - g1[:, None] * w[None, :]
        store_cast(dx_ptr + (d_row[:, None] + cols[None, :] * d_cstride), dx, mask)


# --------------------------------------------------------------------------- CTC (issue 25.2)
# The connectionist temporal classification loss over the alignment lattice, in log space, one
# program per batch element looping over time; the extended label sequence l' (blanks between
# and around the target's labels, 2 L + 1 positions) is a vector of BLOCK_S lanes. A row of the
# lattice (alpha[t, :], beta[t, :]) is stored to memory and read back shifted by one or two
# positions for the next step (a barrier between: the lanes of a row belong to several threads).
# Inputs (the op layer makes them so): log_probs (T, N, C) contiguous; targets int64, sample n's
# labels at tg_off[n] .. tg_off[n] + tg_len[n]; in_len, tg_len, tg_off int64 (N,);
# log_alpha / beta (N, T, L) contiguous, L = 2 * max target length + 1. A label outside [0, C)
# has probability 0 (its loads are masked: the loss is inf, as torch's cpu kernel gives).
@triton.jit
def _ctc_labels(tg_ptr, off, s, n_prime, blank):
    """l'_s: blank at even s, the target's label (s - 1) / 2 at odd s (blank past the end)."""
    odd = (s % 2 == 1) & (s < n_prime)
    k = tl.where(odd, (s - 1) // 2, 0)
    return tl.where(odd, tl.load(tg_ptr + off + k, mask=odd, other=0), blank)


@triton.jit
def _lse3(a, b, c):
    m = tl.maximum(tl.maximum(a, b), c)
    safe = tl.where(m == float("-inf"), 0.0, m)
    r = safe + tl.log(tl.exp(a - safe) + tl.exp(b - safe) + tl.exp(c - safe))
    return tl.where(m == float("-inf"), float("-inf"), r)


@triton.jit
def ctc_alpha_kernel(lp_ptr, tg_ptr, tg_off_ptr, tg_len_ptr, in_len_ptr, alpha_ptr, nll_ptr, T, N, C, L, blank,
                     COMPUTE: tl.constexpr, BLOCK_S: tl.constexpr):
    n = tl.program_id(0).to(tl.int64)
    s = tl.arange(0, BLOCK_S).to(tl.int64)
    t_n = tl.load(in_len_ptr + n)
    l_n = tl.load(tg_len_ptr + n)
    off = tl.load(tg_off_ptr + n)
    n_prime = 2 * l_n + 1
    live = s < n_prime
    lab = _ctc_labels(tg_ptr, off, s, n_prime, blank)
    lab_m2 = _ctc_labels(tg_ptr, off, s - 2, n_prime, blank)
    skip = live & (s >= 2) & (lab != lab_m2)
    lab_ok = live & (lab >= 0) & (lab < C)
    row = alpha_ptr + n * T * L
    t_n_s = tl.zeros_like(s) + t_n          # scalars broadcast to the lanes before they join a mask
    first = tl.load(lp_ptr + n * C + lab, mask=lab_ok & (s < 2) & (t_n_s > 0), other=float("-inf")).to(COMPUTE)
    tl.store(row + s, first, mask=s < L)
    for t_ in range(1, T):
        t = tl.cast(t_, tl.int64)
        tl.debug_barrier()
        prev = row + (t - 1) * L
        a0 = tl.load(prev + s, mask=live, other=float("-inf")).to(COMPUTE)
        a1 = tl.load(prev + s - 1, mask=live & (s >= 1), other=float("-inf")).to(COMPUTE)
        a2 = tl.load(prev + s - 2, mask=skip, other=float("-inf")).to(COMPUTE)
        emit = tl.load(lp_ptr + (t * N + n) * C + lab, mask=lab_ok & (t < t_n_s), other=float("-inf")).to(COMPUTE)
        tl.store(row + t * L + s, _lse3(a0, a1, a2) + emit, mask=s < L)
    tl.debug_barrier()
    last = row + (t_n - 1) * L
    has_t = t_n > 0
    e0 = tl.load(last + 2 * l_n, mask=has_t, other=float("-inf")).to(COMPUTE)
    e1 = tl.load(last + 2 * l_n - 1, mask=has_t & (l_n > 0), other=float("-inf")).to(COMPUTE)
    lse = _lse3(e0, e1, tl.full(e0.shape, float("-inf"), COMPUTE))
    # no frames: an empty target has probability 1 (loss 0), any other 0 (loss inf)
    lse = tl.where(has_t, lse, tl.where(l_n == 0, 0.0, float("-inf")))
    tl.store(nll_ptr + n, -lse)


@triton.jit
def ctc_grad_kernel(lp_ptr, tg_ptr, tg_off_ptr, tg_len_ptr, in_len_ptr, alpha_ptr, beta_ptr, nll_ptr, gr_ptr,
                    gr_stride, out_ptr, T, N, C, L, blank, ZERO_INFINITY: tl.constexpr, COMPUTE: tl.constexpr,
                    BLOCK_S: tl.constexpr, BLOCK_C: tl.constexpr):
    """beta backwards in time, then torch's gradient of log_probs per frame and class:
    (exp(lp) - exp(log(sum over l'_s = c of alpha beta) + nll - lp)) * grad, 0 past the input's
    length (and everywhere with zero_infinity where the loss is inf)."""
    n = tl.program_id(0).to(tl.int64)
    s = tl.arange(0, BLOCK_S).to(tl.int64)
    cls0 = tl.arange(0, BLOCK_C).to(tl.int64)
    t_n = tl.load(in_len_ptr + n)
    l_n = tl.load(tg_len_ptr + n)
    off = tl.load(tg_off_ptr + n)
    nll = tl.load(nll_ptr + n).to(COMPUTE)
    gr = tl.load(gr_ptr + n * gr_stride).to(COMPUTE)
    n_prime = 2 * l_n + 1
    live = s < n_prime
    lab = _ctc_labels(tg_ptr, off, s, n_prime, blank)
    lab_p2 = _ctc_labels(tg_ptr, off, s + 2, n_prime, blank)
    skip = live & (s + 2 < n_prime) & (lab != lab_p2)
    lab_ok = live & (lab >= 0) & (lab < C)
    t_n_s = tl.zeros_like(s) + t_n          # scalars broadcast to the lanes before they join a mask
    brow = beta_ptr + n * T * L
    arow = alpha_ptr + n * T * L
    alive = 1      # 0: every gradient of this sample is 0 (zero_infinity and an infinite loss)
    if ZERO_INFINITY:
        alive = tl.where(nll == float("inf"), 0, 1)
    for i_ in range(0, T):
        i = tl.cast(i_, tl.int64)
        t = T - 1 - i
        emit = tl.load(lp_ptr + (t * N + n) * C + lab, mask=lab_ok & (t < t_n_s), other=float("-inf")).to(COMPUTE)
        tl.debug_barrier()
        nxt = brow + (t + 1) * L
        more = t + 1 < t_n_s
        b0 = tl.load(nxt + s, mask=live & more, other=float("-inf")).to(COMPUTE)
        b1 = tl.load(nxt + s + 1, mask=live & more & (s + 1 < n_prime), other=float("-inf")).to(COMPUTE)
        b2 = tl.load(nxt + s + 2, mask=skip & more, other=float("-inf")).to(COMPUTE)
        # the last frame starts the recursion at the last blank and the last label
        start = tl.where((s == n_prime - 1) | (s == n_prime - 2), 0.0, float("-inf"))
        beta = tl.where(more, _lse3(b0, b1, b2), start) + emit
        tl.store(brow + t * L + s, beta, mask=s < L)
        ab = tl.load(arow + t * L + s, mask=live, other=float("-inf")).to(COMPUTE) + beta
        ab = tl.where(live, ab, float("-inf"))
        for c0_ in range(0, C, BLOCK_C):
            c0 = tl.cast(c0_, tl.int64)
            cls = c0 + cls0
            cmask = cls < C
            vals = tl.where(lab[None, :] == cls[:, None], ab[None, :], float("-inf"))
            m = tl.max(vals, 1)
            safe = tl.where(m == float("-inf"), 0.0, m)
            lcab = safe + tl.log(tl.sum(tl.exp(vals - safe[:, None]), 1))
            lcab = tl.where(m == float("-inf"), float("-inf"), lcab)
            lp = tl.load(lp_ptr + (t * N + n) * C + cls, mask=cmask, other=0.0).to(COMPUTE)
            g = (tl.exp(lp) - tl.exp(lcab + nll - lp)) * gr
            keep = (tl.zeros_like(cls) + t < t_n) & ((tl.zeros_like(cls) + alive) != 0)
            g = tl.where(keep, g, 0.0)
            tl.store(out_ptr + (t * N + n) * C + cls, g, mask=cmask)
