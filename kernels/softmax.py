"""softmax / log_softmax along one dim, forward and backward, one program per BLOCK_M rows.

Rows that fit in one [BLOCK_M, BLOCK_N] tile (ONE_TILE: N <= BLOCK_N, up to 16384 float32 values
on a GPU) are read once and kept in registers: max, sum and the result come from the same load,
one read and one write per element (two reads and one write for the backward), which is all the
memory traffic the op needs. Longer rows stream:

Forward (online softmax): one pass over the row in BLOCK_N chunks keeps a running max ``m`` and a
running sum ``s`` of exp(x - m), rescaled by exp(m_old - m_new) whenever the max grows; a second
pass writes exp(x - m) / s (softmax) or x - m - log(s) (log_softmax). Rows of any length take
the same two reads and one write, however long.
Backward: one pass for the row sum (sum(g * y) for softmax, sum(g) for log_softmax), one pass
writing y * (g - sum) or g - exp(y) * sum.
Rows are the kept dims (kshape, per-operand strides; row-major index), the softmax dim is one
dim of length N with a stride per operand. Accumulation is in COMPUTE (float32, or float64);
the order of every sum is fixed, so results are bit-identical run after run.
"""
import triton
import triton.language as tl

from .strided import convert, store_cast, strided_offset

SOFTMAX, LOG_SOFTMAX, SOFTMAX_BACKWARD, LOG_SOFTMAX_BACKWARD = 0, 1, 2, 3


@triton.jit
def softmax_kernel(x_ptr, g_ptr, out_ptr, M, N, kshape, x_kstrides, g_kstrides, o_kstrides,
                   x_nstride, g_nstride, o_nstride,
                   MODE: tl.constexpr, COMPUTE: tl.constexpr, KRANK: tl.constexpr,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, ONE_TILE: tl.constexpr):
    """MODE 0: out = softmax(x); 1: out = log_softmax(x); 2: out = softmax backward with
    x = y (the softmax output) and g the incoming gradient; 3: the same for log_softmax.
    ONE_TILE: N <= BLOCK_N, every row is read once (the streaming path with a single chunk
    computes the same values in the same order, so both give the same bits)."""
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    x_row = strided_offset(rows, kshape, x_kstrides, KRANK)
    g_row = strided_offset(rows, kshape, g_kstrides, KRANK)
    o_row = strided_offset(rows, kshape, o_kstrides, KRANK)
    cols0 = tl.arange(0, BLOCK_N).to(tl.int64)
    if ONE_TILE:
        mask = row_mask[:, None] & (cols0 < N)[None, :]
        x_ptrs = x_ptr + (x_row[:, None] + cols0[None, :] * x_nstride)
        out_ptrs = out_ptr + (o_row[:, None] + cols0[None, :] * o_nstride)
        if MODE < 2:
            v = tl.where(mask, convert(tl.load(x_ptrs, mask=mask, other=0), COMPUTE), float("-inf"))
            m = tl.max(v, 1)
            # a row of nothing but -inf has m = -inf: exp(nan) = nan everywhere, as in torch
            p = tl.exp(v - m[:, None])
            s = tl.sum(tl.where(mask, p, 0.0).to(COMPUTE), 1)
            if MODE == 0:
                r = p / s[:, None]
            else:
                r = (v - m[:, None]) - tl.log(s)[:, None]
        else:
            g = convert(tl.load(g_ptr + (g_row[:, None] + cols0[None, :] * g_nstride), mask=mask, other=0), COMPUTE)
            y = convert(tl.load(x_ptrs, mask=mask, other=0), COMPUTE)
            if MODE == 2:
                total = tl.sum(tl.where(mask, g * y, 0.0).to(COMPUTE), 1)
                r = y * (g - total[:, None])
            else:
                total = tl.sum(tl.where(mask, g, 0.0).to(COMPUTE), 1)
                r = g - tl.exp(y) * total[:, None]
        store_cast(out_ptrs, r, mask)
    elif MODE < 2:
        m = tl.full([BLOCK_M], float("-inf"), COMPUTE)
        s = tl.zeros([BLOCK_M], COMPUTE)
        for n0_ in range(0, N, BLOCK_N):
            n0 = tl.cast(n0_, tl.int64)     # int64 loop index (kernels/__init__.py)
            cols = n0 + cols0
            mask = row_mask[:, None] & (cols < N)[None, :]
            v = convert(tl.load(x_ptr + (x_row[:, None] + cols[None, :] * x_nstride), mask=mask, other=0), COMPUTE)
            v = tl.where(mask, v, float("-inf"))
            m_new = tl.maximum(m, tl.max(v, 1))
            empty = m_new == float("-inf")          # nothing but -inf so far: keep s = 0
            alpha = tl.where(empty, 1.0, tl.exp(m - m_new)).to(COMPUTE)
            p = tl.where(empty[:, None], 0.0, tl.exp(v - m_new[:, None])).to(COMPUTE)
            s = s * alpha + tl.sum(p, 1)            # NaN anywhere in the row reaches s
            m = m_new
        log_s = tl.log(s)
        for n0_ in range(0, N, BLOCK_N):
            n0 = tl.cast(n0_, tl.int64)     # int64 loop index (kernels/__init__.py)
            cols = n0 + cols0
            mask = row_mask[:, None] & (cols < N)[None, :]
            v = convert(tl.load(x_ptr + (x_row[:, None] + cols[None, :] * x_nstride), mask=mask, other=0), COMPUTE)
            if MODE == 0:
                r = tl.exp(v - m[:, None]) / s[:, None]
            else:
                r = (v - m[:, None]) - log_s[:, None]
            store_cast(out_ptr + (o_row[:, None] + cols[None, :] * o_nstride), r, mask)
    else:
        acc = tl.zeros([BLOCK_M, BLOCK_N], COMPUTE)
        for n0_ in range(0, N, BLOCK_N):
            n0 = tl.cast(n0_, tl.int64)     # int64 loop index (kernels/__init__.py)
            cols = n0 + cols0
            mask = row_mask[:, None] & (cols < N)[None, :]
            g = convert(tl.load(g_ptr + (g_row[:, None] + cols[None, :] * g_nstride), mask=mask, other=0), COMPUTE)
            if MODE == 2:
                y = convert(tl.load(x_ptr + (x_row[:, None] + cols[None, :] * x_nstride), mask=mask, other=0), COMPUTE)
                acc += tl.where(mask, g * y, 0.0).to(COMPUTE)
            else:
                acc += tl.where(mask, g, 0.0).to(COMPUTE)
        total = tl.sum(acc, 1)
        for n0_ in range(0, N, BLOCK_N):
            n0 = tl.cast(n0_, tl.int64)     # int64 loop index (kernels/__init__.py)
            cols = n0 + cols0
            mask = row_mask[:, None] & (cols < N)[None, :]
            g = convert(tl.load(g_ptr + (g_row[:, None] + cols[None, :] * g_nstride), mask=mask, other=0), COMPUTE)
            y = convert(tl.load(x_ptr + (x_row[:, None] + cols[None, :] * x_nstride), mask=mask, other=0), COMPUTE)
            if MODE == 2:
                r = y * (g - total[:, None])
            else:
                r = g - tl.exp(y) * total[:, None]
            store_cast(out_ptr + (o_row[:, None] + cols[None, :] * o_nstride), r, mask)
