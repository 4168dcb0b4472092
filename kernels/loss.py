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
    layer refuses targets outside [0, N) before launching; they are masked here as well, so
    no target can make the kernel read outside its row."""
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
