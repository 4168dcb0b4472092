"""Inclusive scans along one dim, one program per BLOCK_M rows: cumsum, cumprod, logcumsumexp
(scan_kernel) and cummax/cummin with their indices (scan_index_kernel).

A program walks its rows in BLOCK_N chunks (from the end when REVERSE), scans each chunk with
tl.associative_scan and combines it with the running total carried from the previous chunks.
The order of every operation is fixed: bit-identical results run after run, no atomics.
"""
import triton
import triton.language as tl

from .elementwise import logaddexp as combine_logaddexp   # equal infinities give themselves
from .reduce import combine_prod, combine_sum
from .strided import convert, store_cast, strided_offset


@triton.jit
def scan_kernel(x_ptr, out_ptr, M, N, kshape, x_kstrides, o_kstrides, x_nstride, o_nstride,
                OP: tl.constexpr, REVERSE: tl.constexpr, IDENTITY: tl.constexpr,
                COMPUTE: tl.constexpr, KRANK: tl.constexpr,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """out[k, n] = OP over x[k, 0..n] (REVERSE: over x[k, n..N-1]); OP is "sum", "prod" or
    "logsumexp" (log(exp(a) + exp(b)), torch's logcumsumexp; IDENTITY -inf)."""
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
        elif OP == "prod":
            s = tl.associative_scan(v, 1, combine_prod) * carry[:, None]
            carry = tl.sum(tl.where(last, s, 0), 1).to(COMPUTE)
        else:
            s = combine_logaddexp(tl.associative_scan(v, 1, combine_logaddexp), carry[:, None])
            carry = tl.sum(tl.where(last, s, 0), 1).to(COMPUTE)    # (0 + -inf is -inf, NaN stays)
        store_cast(out_ptr + (o_row[:, None] + cols[None, :] * o_nstride), s, mask)


# --------------------------------------------------------------------------- cummax / cummin
@triton.jit
def combine_cummax(v1, i1, v2, i2):
    """(value, index) of the later candidate 2 when it is NaN, or when 1 is not NaN and
    v2 >= v1; else candidate 1. Candidate 2 always comes later in the row, so this is the max
    under the total order (value with NaN largest, then index): associative, and torch's
    sequential rule (``if isnan(x) || (!isnan(out) && x >= out)``: a NaN stays, the last of
    equal values wins)."""
    take = (v2 != v2) | ((v1 == v1) & (v2 >= v1))
    return tl.where(take, v2, v1), tl.where(take, i2, i1)


@triton.jit
def combine_cummin(v1, i1, v2, i2):
    """cummin's rule, as combine_cummax's with <= (a NaN still wins: once NaN, NaN)."""
    take = (v2 != v2) | ((v1 == v1) & (v2 <= v1))
    return tl.where(take, v2, v1), tl.where(take, i2, i1)


@triton.jit
def scan_index_kernel(x_ptr, val_ptr, idx_ptr, M, N, kshape, x_kstrides, v_kstrides, i_kstrides,
                      x_nstride, v_nstride, i_nstride, IS_MAX: tl.constexpr, COMPUTE: tl.constexpr,
                      KRANK: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """values[k, n], indices[k, n] = the running max (IS_MAX) or min of x[k, 0..n] and the
    position it was found at (combine_cummax / combine_cummin: NaN propagates, ties take the
    later position). A chunk is scanned as (value, index) pairs and combined with the pair
    carried from the chunks before it (always the earlier candidate)."""
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    x_row = strided_offset(rows, kshape, x_kstrides, KRANK)
    v_row = strided_offset(rows, kshape, v_kstrides, KRANK)
    i_row = strided_offset(rows, kshape, i_kstrides, KRANK)
    j = tl.arange(0, BLOCK_N).to(tl.int64)
    last = (j == BLOCK_N - 1)[None, :]
    carry_v = tl.zeros([BLOCK_M, 1], COMPUTE)
    carry_i = tl.full([BLOCK_M, 1], -1, tl.int64)     # -1: nothing carried yet (the first chunk)
    for n0_ in range(0, N, BLOCK_N):
        n0 = tl.cast(n0_, tl.int64)     # int64 loop index (kernels/__init__.py)
        cols = n0 + j
        mask = row_mask[:, None] & (cols < N)[None, :]
        v = convert(tl.load(x_ptr + (x_row[:, None] + cols[None, :] * x_nstride), mask=mask, other=0), COMPUTE)
        i = tl.broadcast_to(cols[None, :], [BLOCK_M, BLOCK_N])
        # masked lanes lie after every real one in their row: whatever they hold is never stored
        if IS_MAX:
            s_v, s_i = tl.associative_scan((v, i), 1, combine_cummax)
            c_v, c_i = combine_cummax(carry_v, carry_i, s_v, s_i)
        else:
            s_v, s_i = tl.associative_scan((v, i), 1, combine_cummin)
            c_v, c_i = combine_cummin(carry_v, carry_i, s_v, s_i)
        first = carry_i < 0
        s_v = tl.where(first, s_v, c_v)
        s_i = tl.where(first, s_i, c_i)
        store_cast(val_ptr + (v_row[:, None] + cols[None, :] * v_nstride), s_v, mask)
        tl.store(idx_ptr + (i_row[:, None] + cols[None, :] * i_nstride), s_i, mask=mask)
        carry_v = tl.sum(tl.where(last, s_v, 0), 1, keep_dims=True).to(COMPUTE)
        carry_i = tl.sum(tl.where(last, s_i, 0), 1, keep_dims=True)
