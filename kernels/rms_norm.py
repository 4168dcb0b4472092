"""rms_norm forward and backward, one program per BLOCK_M rows of an (M, N) problem.

The launcher views the input as M rows of N elements (the normalized dims, one stride each way;
rows may be strided). Sums are accumulated in COMPUTE (float32, or float64).

Forward: rstd = 1 / sqrt(mean(x^2) + eps) per row and y = x * rstd * w. Rows that fit in one
[BLOCK_M, BLOCK_N] tile (ONE_TILE) are read once; longer rows are read twice (the sum of squares,
then y). rstd is stored per row for the backward.

Backward: with xhat = x * rstd and gh = g * w (g where there is no weight),
  dx = rstd * (gh - xhat * mean(gh * xhat))      per row
  dw = sum over rows of g * xhat
Each program owns a contiguous range of ROWS rows (whole BLOCK_M blocks) and writes its partial
column sums of g * xhat to its own row of a (programs, N) scratch buffer; the launcher reduces
that buffer over the programs with the deterministic reduce kernel. No atomics: the same input
gives the same bits on every run (the layer_norm kernels' scheme, kernels/norm.py).
"""
import triton
import triton.language as tl

from .strided import convert, scalar_value, store_cast


@triton.jit
def rms_norm_fwd_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, M, N, x_rstride, x_cstride, y_rstride, eps_bits,
                        HAS_W: tl.constexpr, COMPUTE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                        ONE_TILE: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < M
    cols0 = tl.arange(0, BLOCK_N).to(tl.int64)
    eps = scalar_value(eps_bits, 2, COMPUTE)
    n_total = scalar_value(N, 1, COMPUTE)
    if ONE_TILE:
        col_mask = cols0 < N
        mask = row_mask[:, None] & col_mask[None, :]
        x = convert(tl.load(x_ptr + (rows[:, None] * x_rstride + cols0[None, :] * x_cstride), mask=mask, other=0),
                    COMPUTE)
        rstd = 1.0 / tl.sqrt(tl.sum(x * x, 1) / n_total + eps)
        y = x * rstd[:, None]
        if HAS_W:
            y = y * convert(tl.load(w_ptr + cols0, mask=col_mask, other=0), COMPUTE)[None, :]
        store_cast(y_ptr + (rows[:, None] * y_rstride + cols0[None, :]), y, mask)
    else:
        acc = tl.zeros([BLOCK_M, BLOCK_N], COMPUTE)
        for n0_ in range(0, N, BLOCK_N):
            n0 = tl.cast(n0_, tl.int64)     # int64 loop index (kernels/__init__.py)
            cols = n0 + cols0
            mask = row_mask[:, None] & (cols < N)[None, :]
            x = convert(tl.load(x_ptr + (rows[:, None] * x_rstride + cols[None, :] * x_cstride), mask=mask,
                                other=0), COMPUTE)
            acc += x * x
        rstd = 1.0 / tl.sqrt(tl.sum(acc, 1) / n_total + eps)
        for n0_ in range(0, N, BLOCK_N):
            n0 = tl.cast(n0_, tl.int64)     # int64 loop index (kernels/__init__.py)
            cols = n0 + cols0
            col_mask = cols < N
            mask = row_mask[:, None] & col_mask[None, :]
            x = convert(tl.load(x_ptr + (rows[:, None] * x_rstride + cols[None, :] * x_cstride), mask=mask,
                                other=0), COMPUTE)
            y = x * rstd[:, None]
            if HAS_W:
                y = y * convert(tl.load(w_ptr + cols, mask=col_mask, other=0), COMPUTE)[None, :]
            store_cast(y_ptr + (rows[:, None] * y_rstride + cols[None, :]), y, mask)
    tl.store(rstd_ptr + rows, rstd, mask=row_mask)


@triton.jit
def rms_norm_bwd_kernel(g_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, dw_part_ptr, M, N, ROWS,
                        g_rstride, g_cstride, x_rstride, x_cstride, dx_rstride,
                        HAS_W: tl.constexpr, NEED_DW: tl.constexpr, COMPUTE: tl.constexpr,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, ONE_TILE: tl.constexpr):
    """dx for rows [pid * ROWS, (pid + 1) * ROWS) and this program's partial column sums of
    g * xhat (dw_part[pid, :]); ROWS is a multiple of BLOCK_M. The partial buffer starts at zero
    (the launcher fills it) unless ONE_TILE, where it is written once from registers."""
    pid = tl.program_id(0).to(tl.int64)
    first = pid * ROWS
    cols0 = tl.arange(0, BLOCK_N).to(tl.int64)
    n_total = scalar_value(N, 1, COMPUTE)
    if ONE_TILE:
        col_mask = cols0 < N
        dw_acc = tl.zeros([BLOCK_N], COMPUTE)
        for r0_ in range(0, ROWS, BLOCK_M):
            r0 = tl.cast(r0_, tl.int64)     # int64 loop index (kernels/__init__.py)
            rows = first + r0 + tl.arange(0, BLOCK_M)
            row_mask = rows < M
            mask = row_mask[:, None] & col_mask[None, :]
            rstd = tl.load(rstd_ptr + rows, mask=row_mask, other=0)
            g = convert(tl.load(g_ptr + (rows[:, None] * g_rstride + cols0[None, :] * g_cstride), mask=mask,
                                other=0), COMPUTE)
            xhat = convert(tl.load(x_ptr + (rows[:, None] * x_rstride + cols0[None, :] * x_cstride), mask=mask,
                                   other=0), COMPUTE) * rstd[:, None]
            gh = g
            if HAS_W:
                gh = g * convert(tl.load(w_ptr + cols0, mask=col_mask, other=0), COMPUTE)[None, :]
            c1 = tl.sum(gh * xhat, 1) / n_total
            dx = (gh - xhat * c1[:, None]) * rstd[:, None]
            store_cast(dx_ptr + (rows[:, None] * dx_rstride + cols0[None, :]), dx, mask)
            if NEED_DW:
                dw_acc += tl.sum(g * xhat, 0)
        if NEED_DW:
            tl.store(dw_part_ptr + pid * N + cols0, dw_acc, mask=col_mask)
    else:
        for r0_ in range(0, ROWS, BLOCK_M):
            r0 = tl.cast(r0_, tl.int64)     # int64 loop index (kernels/__init__.py)
            rows = first + r0 + tl.arange(0, BLOCK_M)
            row_mask = rows < M
            rstd = tl.load(rstd_ptr + rows, mask=row_mask, other=0)
            acc = tl.zeros([BLOCK_M, BLOCK_N], COMPUTE)
            for n0_ in range(0, N, BLOCK_N):
                n0 = tl.cast(n0_, tl.int64)     # int64 loop index (kernels/__init__.py)
                cols = n0 + cols0
                col_mask = cols < N
                mask = row_mask[:, None] & col_mask[None, :]
                g = convert(tl.load(g_ptr + (rows[:, None] * g_rstride + cols[None, :] * g_cstride), mask=mask,
                                    other=0), COMPUTE)
                x = convert(tl.load(x_ptr + (rows[:, None] * x_rstride + cols[None, :] * x_cstride), mask=mask,
                                    other=0), COMPUTE)
                if HAS_W:
                    g = g * convert(tl.load(w_ptr + cols, mask=col_mask, other=0), COMPUTE)[None, :]
                acc += g * x
            c1 = tl.sum(acc, 1) * rstd / n_total      # mean(gh * xhat)
            for n0_ in range(0, N, BLOCK_N):
                n0 = tl.cast(n0_, tl.int64)     # int64 loop index (kernels/__init__.py)
                cols = n0 + cols0
                col_mask = cols < N
                mask = row_mask[:, None] & col_mask[None, :]
                g = convert(tl.load(g_ptr + (rows[:, None] * g_rstride + cols[None, :] * g_cstride), mask=mask,
                                    other=0), COMPUTE)
                xhat = convert(tl.load(x_ptr + (rows[:, None] * x_rstride + cols[None, :] * x_cstride), mask=mask,
                                       other=0), COMPUTE) * rstd[:, None]
                gh = g
                if HAS_W:
                    gh = g * convert(tl.load(w_ptr + cols, mask=col_mask, other=0), COMPUTE)[None, :]
                dx = (gh - xhat * c1[:, None]) * rstd[:, None]
                store_cast(dx_ptr + (rows[:, None] * dx_rstride + cols[None, :]), dx, mask)
                if NEED_DW:
                    part = dw_part_ptr + pid * N + cols
                    tl.store(part, tl.load(part, mask=col_mask, other=0) + tl.sum(g * xhat, 0), mask=col_mask)
