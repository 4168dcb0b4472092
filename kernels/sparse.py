"""Sparse times dense: CSR @ dense (SpMM) and the sampled dense product at a CSR pattern (SDDMM).

``spmm_kernel``: out[M, N] = S[M, K] @ D[K, N] for S given by row pointers (``crow[r] .. crow[r + 1]``
are row r's entries in ``col`` / ``val``): the CSR layout itself, or sparse COO entries sorted by
row (a stable sort: duplicates are kept, each adds its product). One program computes one row
times BLOCK_N columns: it loads the row's entries BLOCK_K at a time (columns and values), gathers
the BLOCK_K dense rows they name ([BLOCK_K, BLOCK_N], masked past the row's end and the last
column), and accumulates their weighted sum in ACC (float32; float64 for float64, int64 for the
integer dtypes, which wrap as torch's do). Every output element is summed by one program in a
fixed order: deterministic, no atomics. Rows without entries get zeros.

``sampled_dot_kernel``: out[e] = beta * val[e] + alpha * (A[rows[e], :] . B[:, cols[e]]) for
each stored entry e of a CSR pattern (torch.sparse.sampled_addmm): a program takes BLOCK_E entries
and walks K in BLOCK_K slices, gathering a [BLOCK_E, BLOCK_K] tile of A's rows and of B's columns
and summing their product along K. alpha and beta arrive as the int64 bit patterns of float64s.

Every operand is read in place with its own strides. Index arithmetic is int64 (row pointers,
columns, the loop indices, cast first thing in each loop). Sums along a tile use
``tl.reduce(x, axis, tl.standard._sum_combine)`` (tl.sum's combine without its extra jitted
call: cheaper under the interpreter, the same code on a GPU).
"""
import triton
import triton.language as tl

from .strided import scalar_value


@triton.jit
def spmm_kernel(out_ptr, crow_ptr, col_ptr, val_ptr, d_ptr, N,
                stride_col, stride_val, stride_dk, stride_dn, stride_om, stride_on,
                ACC: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs_n = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N).to(tl.int64)
    mask_n = offs_n < N
    start = tl.load(crow_ptr + row).to(tl.int64)
    end = tl.load(crow_ptr + row + 1).to(tl.int64)
    acc = tl.zeros([BLOCK_N], dtype=ACC)
    for k0_ in range(start, end, BLOCK_K):
        k0 = tl.cast(k0_, tl.int64)
        offs_k = k0 + tl.arange(0, BLOCK_K).to(tl.int64)
        mask_k = offs_k < end
        c = tl.load(col_ptr + offs_k * stride_col, mask=mask_k, other=0).to(tl.int64)
        v = tl.load(val_ptr + offs_k * stride_val, mask=mask_k, other=0).to(ACC)
        d = tl.load(d_ptr + c[:, None] * stride_dk + offs_n[None, :] * stride_dn,
                    mask=mask_k[:, None] & mask_n[None, :], other=0).to(ACC)
        acc += tl.reduce(v[:, None] * d, 0, tl.standard._sum_combine)
    tl.store(out_ptr + row * stride_om + offs_n * stride_on, acc.to(out_ptr.dtype.element_ty), mask=mask_n)


@triton.jit(do_not_specialize=["alpha_bits", "beta_bits"])
def sampled_dot_kernel(out_ptr, val_ptr, a_ptr, b_ptr, rows_ptr, cols_ptr, NNZ, K,
                       stride_val, stride_am, stride_ak, stride_bk, stride_bn, beta_bits, alpha_bits,
                       ACC: tl.constexpr, BLOCK_E: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_e = tl.program_id(0).to(tl.int64) * BLOCK_E + tl.arange(0, BLOCK_E).to(tl.int64)
    mask_e = offs_e < NNZ
    r = tl.load(rows_ptr + offs_e, mask=mask_e, other=0).to(tl.int64)
    c = tl.load(cols_ptr + offs_e, mask=mask_e, other=0).to(tl.int64)
    acc = tl.zeros([BLOCK_E], dtype=ACC)
    for k0_ in range(0, K, BLOCK_K):
        k0 = tl.cast(k0_, tl.int64)
        offs_k = k0 + tl.arange(0, BLOCK_K).to(tl.int64)
        m = mask_e[:, None] & (offs_k < K)[None, :]
        a = tl.load(a_ptr + r[:, None] * stride_am + offs_k[None, :] * stride_ak, mask=m, other=0).to(ACC)
        b = tl.load(b_ptr + offs_k[None, :] * stride_bk + c[:, None] * stride_bn, mask=m, other=0).to(ACC)
        acc += tl.reduce(a * b, 1, tl.standard._sum_combine)
    v = tl.load(val_ptr + offs_e * stride_val, mask=mask_e, other=0).to(ACC)
    res = scalar_value(beta_bits, 2, ACC) * v + scalar_value(alpha_bits, 2, ACC) * acc
    tl.store(out_ptr + offs_e, res.to(out_ptr.dtype.element_ty), mask=mask_e)
