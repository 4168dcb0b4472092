"""Sparse COO times dense (SpMM): out[M, N] = S[M, K] @ D[K, N] for S given by its nonzeros
sorted by row (a stable sort of the COO entries: duplicates are kept, each adds its product).

The launcher passes the nonzeros as CSR-style row pointers (``crow[r] .. crow[r + 1]`` are row
r's entries in ``col`` / ``val``), which it builds from the sorted COO rows. One program computes
a [BLOCK_ROWS, BLOCK_N] tile of the output: for each of its rows it walks that row's nonzeros in
order and accumulates ``val[k] * D[col[k], n-block]`` in ACC (float32; float64 for float64, int64 for
the integer dtypes, which wrap as torch's do),
then stores the row. Every output element is summed by one program in the nonzeros' order:
deterministic, no atomics. D and out are read and written in place with their own strides;
``val`` and ``col`` have their own strides (strided views of the values and coordinates). Rows without nonzeros get zeros.

Index arithmetic is int64 (row pointers and the loop indices, cast first thing in each loop).
"""
import triton
import triton.language as tl


@triton.jit
def spmm_kernel(out_ptr, crow_ptr, col_ptr, val_ptr, d_ptr, M, N,
                stride_col, stride_val, stride_dk, stride_dn, stride_om, stride_on,
                ACC: tl.constexpr, BLOCK_ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0).to(tl.int64)
    pid_n = tl.program_id(1).to(tl.int64)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N).to(tl.int64)
    mask_n = offs_n < N
    for r_ in range(0, BLOCK_ROWS):
        r = tl.cast(r_, tl.int64)
        row = pid_m * BLOCK_ROWS + r
        if row < M:
            start = tl.load(crow_ptr + row).to(tl.int64)
            end = tl.load(crow_ptr + row + 1).to(tl.int64)
            acc = tl.zeros([BLOCK_N], dtype=ACC)
            for k_ in range(start, end):
                k = tl.cast(k_, tl.int64)
                c = tl.load(col_ptr + k * stride_col).to(tl.int64)
                v = tl.load(val_ptr + k * stride_val).to(ACC)
                d = tl.load(d_ptr + c * stride_dk + offs_n * stride_dn, mask=mask_n, other=0).to(ACC)
                acc += v * d
            tl.store(out_ptr + row * stride_om + offs_n * stride_on,
                     acc.to(out_ptr.dtype.element_ty), mask=mask_n)
