"""layer_norm forward and backward, one program per BLOCK_M rows of an (M, N) problem.

The launcher views the input as M rows of N elements (the normalized dims, one stride each way;
rows may be strided). Statistics are accumulated in COMPUTE (float32, or float64).

Forward: rows that fit in one [BLOCK_M, BLOCK_N] tile (ONE_TILE) are read once: mean, then the
variance of the centred values (two passes over registers, not E[x^2] - E[x]^2, which cancels),
rstd = 1 / sqrt(var + eps), and y = (x - mean) * rstd * w + b are computed from the same load.
Longer rows read the row twice: the first pass merges per-chunk (mean, sum of squared deviations)
pairs with Chan's parallel formula (as exact as the two-pass form), the second writes y.
mean and rstd are stored per row for the backward.

Backward: with xhat = (x - mean) * rstd and gh = g * w (g where there is no weight),
  dx = rstd * (gh - mean(gh) - xhat * mean(gh * xhat))      per row
  dw = sum over rows of g * xhat,   db = sum over rows of g
Each program owns a contiguous range of ROWS rows (whole BLOCK_M blocks) and writes its partial
column sums of g * xhat and g to its own row of a (programs, N) scratch buffer; the launcher then
reduces that buffer over its programs with the deterministic reduce kernel. No atomics: the same
input gives the same bits on every run.
"""
import triton
import triton.language as tl

from .strided import convert, scalar_value, store_cast


@triton.jit
def layer_norm_fwd_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, M, N, x_rstride, x_cstride,
                          y_rstride, eps_bits,
                          HAS_W: tl.constexpr, HAS_B: tl.constexpr, COMPUTE: tl.constexpr,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, ONE_TILE: tl.constexpr):
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
        mean = tl.sum(x, 1) / n_total
        xc = tl.where(mask, x - mean[:, None], 0.0).to(COMPUTE)
        var = tl.sum(xc * xc, 1) / n_total
        rstd = 1.0 / tl.sqrt(var + eps)
        y = xc * rstd[:, None]
        if HAS_W:
            y = y * convert(tl.load(w_ptr + cols0, mask=col_mask, other=0), COMPUTE)[None, :]
        if HAS_B:
            y = y + convert(tl.load(b_ptr + cols0, mask=col_mask, other=0), COMPUTE)[None, :]
        store_cast(y_ptr + (rows[:, None] * y_rstride + cols0[None, :]), y, mask)
    else:
        mean = tl.zeros([BLOCK_M], COMPUTE)
        m2 = tl.zeros([BLOCK_M], COMPUTE)
        n_a = tl.zeros([BLOCK_M], COMPUTE)      # values merged so far (the same for every row)
        for n0_ in range(0, N, BLOCK_N):
            n0 = tl.cast(n0_, tl.int64)     # int64 loop index (kernels/__init__.py)
            cols = n0 + cols0
            mask = row_mask[:, None] & (cols < N)[None, :]
            x = convert(tl.load(x_ptr + (rows[:, None] * x_rstride + cols[None, :] * x_cstride), mask=mask,
                                other=0), COMPUTE)
            n_b = tl.sum(tl.where(mask, 1.0, 0.0).to(COMPUTE), 1)
            mean_b = tl.sum(x, 1) / n_b
            d = tl.where(mask, x - mean_b[:, None], 0.0).to(COMPUTE)
            m2_b = tl.sum(d * d, 1)
            n_ab = n_a + n_b
            delta = mean_b - mean
            mean = mean + delta * (n_b / n_ab)
            m2 = m2 + m2_b + delta * delta * (n_a * n_b / n_ab)
            n_a = n_ab
        rstd = 1.0 / tl.sqrt(m2 / n_total + eps)
        for n0_ in range(0, N, BLOCK_N):
            n0 = tl.cast(n0_, tl.int64)     # int64 loop index (kernels/__init__.py)
            cols = n0 + cols0
            col_mask = cols < N
            mask = row_mask[:, None] & col_mask[None, :]
            x = convert(tl.load(x_ptr + (rows[:, None] * x_rstride + cols[None, :] * x_cstride), mask=mask,
                                other=0), COMPUTE)
            y = (x - mean[:, None]) * rstd[:, None]
            if HAS_W:
                y = y * convert(tl.load(w_ptr + cols, mask=col_mask, other=0), COMPUTE)[None, :]
            if HAS_B:
                y = y + convert(tl.load(b_ptr + cols, mask=col_mask, other=0), COMPUTE)[None, :]
            store_cast(y_ptr + (rows[:, None] * y_rstride + cols[None, :]), y, mask)
    tl.store(mean_ptr + rows, mean, mask=row_mask)
    tl.store(rstd_ptr + rows, rstd, mask=row_mask)


@triton.jit
def _row_terms(g_ptr, x_ptr, w_ptr, rows, cols, mask, col_mask, mean, rstd, g_rstride, g_cstride, x_rstride,
               x_cstride, HAS_W: tl.constexpr, COMPUTE: tl.constexpr):
    """g, xhat and gh = g * w on one [BLOCK_M, BLOCK_N] tile (zeros outside ``mask``)."""
    g = convert(tl.load(g_ptr + (rows[:, None] * g_rstride + cols[None, :] * g_cstride), mask=mask, other=0),
                COMPUTE)
    x = convert(tl.load(x_ptr + (rows[:, None] * x_rstride + cols[None, :] * x_cstride), mask=mask, other=0),
                COMPUTE)
    xhat = tl.where(mask, (x - mean[:, None]) * rstd[:, None], 0.0).to(COMPUTE)
    gh = g
    if HAS_W:
        gh = g * convert(tl.load(w_ptr + cols, mask=col_mask, other=0), COMPUTE)[None, :]
    return g, xhat, gh


@triton.jit
def layer_norm_bwd_kernel(g_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, dx_ptr, dw_part_ptr, db_part_ptr, M, N, ROWS,
                          g_rstride, g_cstride, x_rstride, x_cstride, dx_rstride,
                          HAS_W: tl.constexpr, NEED_DW: tl.constexpr, NEED_DB: tl.constexpr,
                          COMPUTE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          ONE_TILE: tl.constexpr):
    """dx for rows [pid * ROWS, (pid + 1) * ROWS) and this program's partial column sums of
    g * xhat (dw_part[pid, :]) and g (db_part[pid, :]); ROWS is a multiple of BLOCK_M. The
    partial buffers start at zero (the launcher fills them) unless ONE_TILE, where they are
    written once from registers."""
    pid = tl.program_id(0).to(tl.int64)
    first = pid * ROWS
    cols0 = tl.arange(0, BLOCK_N).to(tl.int64)
    n_total = scalar_value(N, 1, COMPUTE)
    if ONE_TILE:
        col_mask = cols0 < N
        dw_acc = tl.zeros([BLOCK_N], COMPUTE)
        db_acc = tl.zeros([BLOCK_N], COMPUTE)
        for r0_ in range(0, ROWS, BLOCK_M):
            r0 = tl.cast(r0_, tl.int64)     # int64 loop index (kernels/__init__.py)
            rows = first + r0 + tl.arange(0, BLOCK_M)
            row_mask = rows < M
            mask = row_mask[:, None] & col_mask[None, :]
            mean = tl.load(mean_ptr + rows, mask=row_mask, other=0)
            rstd = tl.load(rstd_ptr + rows, mask=row_mask, other=0)
            g, xhat, gh = _row_terms(g_ptr, x_ptr, w_ptr, rows, cols0, mask, col_mask, mean, rstd, g_rstride,
                                     g_cstride, x_rstride, x_cstride, HAS_W, COMPUTE)
            c1 = tl.sum(gh * xhat, 1) / n_total
            c2 = tl.sum(gh, 1) / n_total
            dx = (gh - (xhat * c1[:, None] + c2[:, None])) * rstd[:, None]
            store_cast(dx_ptr + (rows[:, None] * dx_rstride + cols0[None, :]), dx, mask)
            if NEED_DW:
                dw_acc += tl.sum(g * xhat, 0)
            if NEED_DB:
                db_acc += tl.sum(g, 0)
        if NEED_DW:
            tl.store(dw_part_ptr + pid * N + cols0, dw_acc, mask=col_mask)
        if NEED_DB:
            tl.store(db_part_ptr + pid * N + cols0, db_acc, mask=col_mask)
    else:
        for r0_ in range(0, ROWS, BLOCK_M):
            r0 = tl.cast(r0_, tl.int64)     # int64 loop index (kernels/__init__.py)
            rows = first + r0 + tl.arange(0, BLOCK_M)
            row_mask = rows < M
            mean = tl.load(mean_ptr + rows, mask=row_mask, other=0)
            rstd = tl.load(rstd_ptr + rows, mask=row_mask, other=0)
            acc1 = tl.zeros([BLOCK_M, BLOCK_N], COMPUTE)
            acc2 = tl.zeros([BLOCK_M, BLOCK_N], COMPUTE)
            for n0_ in range(0, N, BLOCK_N):
                n0 = tl.cast(n0_, tl.int64)     # int64 loop index (kernels/__init__.py)
                cols = n0 + cols0
                col_mask = cols < N
                mask = row_mask[:, None] & col_mask[None, :]
                g, xhat, gh = _row_terms(g_ptr, x_ptr, w_ptr, rows, cols, mask, col_mask, mean, rstd, g_rstride,
                                         g_cstride, x_rstride, x_cstride, HAS_W, COMPUTE)
                acc1 += gh * xhat
                acc2 += gh
            c1 = tl.sum(acc1, 1) / n_total
            c2 = tl.sum(acc2, 1) / n_total
            for n0_ in range(0, N, BLOCK_N):
                n0 = tl.cast(n0_, tl.int64)     # int64 loop index (kernels/__init__.py)
                cols = n0 + cols0
                col_mask = cols < N
                mask = row_mask[:, None] & col_mask[None, :]
                g, xhat, gh = _row_terms(g_ptr, x_ptr, w_ptr, rows, cols, mask, col_mask, mean, rstd, g_rstride,
                                         g_cstride, x_rstride, x_cstride, HAS_W, COMPUTE)
                dx = (gh - (xhat * c1[:, None] + c2[:, None])) * rstd[:, None]
                store_cast(dx_ptr + (rows[:, None] * dx_rstride + cols[None, :]), dx, mask)
                if NEED_DW:
                    part = dw_part_ptr + pid * N + cols
                    tl.store(part, tl.load(part, mask=col_mask, other=0) + tl.sum(g * xhat, 0), mask=col_mask)
                if NEED_DB:
                    part = db_part_ptr + pid * N + cols
                    tl.store(part, tl.load(part, mask=col_mask, other=0) + tl.sum(g, 0), mask=col_mask)
