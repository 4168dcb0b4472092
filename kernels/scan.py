"""Inclusive scans (cumsum, cumprod) along one dim, one program per BLOCK_M rows.

A program walks its rows in BLOCK_N chunks (from the end when REVERSE), scans each chunk with
tl.associative_scan and adds (multiplies) the running total carried from the previous chunks.
The order of every operation is fixed: bit-identical results run after run, no atomics.
"""
import triton
import triton.language as tl

from .reduce import combine_prod, combine_sum
from .strided import convert, store_cast, strided_offset


@triton.jit
def scan_kernel(x_ptr, out_ptr, M, N, kshape, x_kstrides, o_kstrides, x_nstride, o_nstride,
                OP: tl.constexpr, REVERSE: tl.constexpr, IDENTITY: tl.constexpr,
                COMPUTE: tl.constexpr, KRANK: tl.constexpr,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """out[k, n] = OP over x[k, 0..n] (REVERSE: over x[k, n..N-1]); OP is "sum" or "prod"."""
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    x_row = strided_offset(rows, kshape, x_kstrides, KRANK)
    o_row = strided_offset(rows, kshape, o_kstrides, KRANK)
    j = tl.arange(0, BLOCK_N).to(tl.int64)
    last = (j == BLOCK_N - 1)[None, :]
    carry = tl.full([BLOCK_M], IDENTITY, COMPUTE)
    for n0_ in range(0, N, BLOCK_N):
        n0 = tl.cast(n0_, tl.int64)     # int64 loop index (kernels/__init__.py)
        if REVERSE:
            cols = N - 1 - (n0 + j)
        else:
            cols = n0 + j
        mask = row_mask[:, None] & ((cols >= 0) & (cols < N))[None, :]
        v = convert(tl.load(x_ptr + (x_row[:, None] + cols[None, :] * x_nstride), mask=mask, other=0), COMPUTE)
        v = tl.where(mask, v, IDENTITY).to(COMPUTE)
        if OP == "sum":
            s = tl.associative_scan(v, 1, combine_sum) + carry[:, None]
            carry = tl.sum(tl.where(last, s, 0), 1).to(COMPUTE)
        else:
            s = tl.associative_scan(v, 1, combine_prod) * carry[:, None]
            carry = tl.sum(tl.where(last, s, 0), 1).to(COMPUTE)
        store_cast(out_ptr + (o_row[:, None] + cols[None, :] * o_nstride), s, mask)
