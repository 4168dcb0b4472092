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



# =============================================================================================
# Batch norm and group norm: per-"statistic" moments over a strided set of elements, an affine
# apply pass, and the backward's sums and apply pass.
#
# A statistic s (a channel for batch norm, an (n, group) pair for group norm, an (n, channel)
# pair for group norm's backward sums) owns the elements
#     base(s) + p * p_stride + q * q_stride,   p < P, q < Q,
#     base(s) = (s // S_INNER) * s_outer + (s % S_INNER) * s_inner
# so every layout (NCHW, channels_last, a transposed 2-D input) is read in place. The grid is
# (statistic blocks, splits): each program reduces [BLOCK_S, BLOCK_Q] tiles of its statistics
# over its own run of "units" (a unit is one p and one BLOCK_Q-wide run of q), so a layer with
# few channels still spreads over the whole GPU. Per-program partials are combined by a second
# kernel in split order: no atomics, the same bits on every run.
#
# Moments: each tile gives (count, mean, sum of squared deviations) from registers (two passes
# over the tile, no E[x^2] - E[x]^2 cancellation), merged into the running triple with Chan's
# parallel formula (Welford's update for blocks); the finalize kernel merges the splits the same
# way. All in COMPUTE (float32, or float64 for float64 inputs). Statistics, coefficients and
# partial sums live in COMPUTE buffers (the launchers see to it).
#
# Under Triton's interpreter every call of a @triton.jit helper re-patches the language (about
# 1.5 ms), so these kernels convert inline: `.to(COMPUTE)` for every dtype but bfloat16, whose
# exact widening (and round-to-nearest-even narrowing) needs strided.convert / store_cast; the
# dtype tests are resolved when the kernel is compiled.
# =============================================================================================
@triton.jit
def moments_partial_kernel(x_ptr, part_ptr, S, S_INNER, s_outer, s_inner, p_stride, Q, q_stride, UNITS,
                           units_per_split, COMPUTE: tl.constexpr, BLOCK_S: tl.constexpr,
                           BLOCK_Q: tl.constexpr):
    """part (3, splits, S): this split's (count, mean, M2) of each statistic of the block."""
    s = tl.program_id(0).to(tl.int64) * BLOCK_S + tl.arange(0, BLOCK_S).to(tl.int64)
    split = tl.program_id(1).to(tl.int64)
    splits = tl.num_programs(1).to(tl.int64)
    s_mask = s < S
    base = (s // S_INNER) * s_outer + (s % S_INNER) * s_inner
    q0 = tl.arange(0, BLOCK_Q).to(tl.int64)
    q_blocks = tl.cdiv(Q, BLOCK_Q)
    first = split * units_per_split
    n_units = tl.minimum(units_per_split, UNITS - first)     # >= 1: the launcher sizes the splits
    mean = tl.zeros([BLOCK_S], COMPUTE)
    m2 = tl.zeros([BLOCK_S], COMPUTE)
    n_a = tl.zeros([BLOCK_S], COMPUTE)
    for u_ in range(0, n_units):
        u = tl.cast(u_, tl.int64)     # int64 loop index (kernels/__init__.py)
        u = first + u
        p = u // q_blocks
        q = (u % q_blocks) * BLOCK_Q + q0
        q_mask = q < Q
        mask = s_mask[:, None] & q_mask[None, :]
        x = tl.load(x_ptr + (base[:, None] + p * p_stride + q[None, :] * q_stride), mask=mask, other=0)
        if x.dtype == tl.bfloat16:
            x = convert(x, COMPUTE)
        x = x.to(COMPUTE)
        n_b = tl.sum(tl.where(q_mask, 1.0, 0.0).to(COMPUTE), 0)
        mean_b = tl.sum(x, 1) / n_b
        d = tl.where(mask, x - mean_b[:, None], 0.0).to(COMPUTE)
        m2_b = tl.sum(d * d, 1)
        n_ab = n_a + n_b
        delta = mean_b - mean
        mean = mean + delta * (n_b / n_ab)
        m2 = m2 + m2_b + delta * delta * (n_a * (n_b / n_ab))
        n_a = n_ab
    tl.store(part_ptr + split * S + s, n_a, mask=s_mask)
    tl.store(part_ptr + (splits + split) * S + s, mean, mask=s_mask)
    tl.store(part_ptr + (2 * splits + split) * S + s, m2, mask=s_mask)


@triton.jit
def moments_finalize_kernel(part_ptr, mean_ptr, rstd_ptr, rmean_ptr, rvar_ptr, S, SPLITS, eps_bits, momentum_bits,
                            UPDATE_RUNNING: tl.constexpr, COMPUTE: tl.constexpr, BLOCK_S: tl.constexpr):
    """mean and rstd = 1 / sqrt(biased var + eps) of each statistic, the splits merged in order;
    with UPDATE_RUNNING, running_mean/running_var (COMPUTE buffers) move toward the batch's mean
    and UNBIASED variance by ``momentum`` (torch's batch_norm update)."""
    s = tl.program_id(0).to(tl.int64) * BLOCK_S + tl.arange(0, BLOCK_S).to(tl.int64)
    mask = s < S
    mean = tl.zeros([BLOCK_S], COMPUTE)
    m2 = tl.zeros([BLOCK_S], COMPUTE)
    n_a = tl.zeros([BLOCK_S], COMPUTE)
    for k_ in range(0, SPLITS):
        k = tl.cast(k_, tl.int64)     # int64 loop index (kernels/__init__.py)
        n_b = tl.load(part_ptr + k * S + s, mask=mask, other=1)
        mean_b = tl.load(part_ptr + (SPLITS + k) * S + s, mask=mask, other=0)
        m2_b = tl.load(part_ptr + (2 * SPLITS + k) * S + s, mask=mask, other=0)
        n_ab = n_a + n_b
        delta = mean_b - mean
        mean = mean + delta * (n_b / n_ab)
        m2 = m2 + m2_b + delta * delta * (n_a * (n_b / n_ab))
        n_a = n_ab
    eps = eps_bits.to(tl.int64).to(tl.float64, bitcast=True).to(COMPUTE)    # a float64 passed as its bits
    rstd = 1.0 / tl.sqrt(m2 / n_a + eps)
    tl.store(mean_ptr + s, mean, mask=mask)
    tl.store(rstd_ptr + s, rstd, mask=mask)
    if UPDATE_RUNNING:
        momentum = momentum_bits.to(tl.int64).to(tl.float64, bitcast=True).to(COMPUTE)
        rm = tl.load(rmean_ptr + s, mask=mask, other=0)
        rv = tl.load(rvar_ptr + s, mask=mask, other=0)
        tl.store(rmean_ptr + s, momentum * mean + (1.0 - momentum) * rm, mask=mask)
        tl.store(rvar_ptr + s, momentum * (m2 / (n_a - 1.0)) + (1.0 - momentum) * rv, mask=mask)


@triton.jit
def norm_apply_kernel(x_ptr, y_ptr, mean_ptr, rstd_ptr, w_ptr, b_ptr, C, B, B_BLOCKS, x_sa, x_sc, x_sb, y_sa, y_sc,
                      y_sb, STAT_A, CPG, eps_bits, HAS_W: tl.constexpr, HAS_B: tl.constexpr,
                      VAR_INPUT: tl.constexpr, COMPUTE: tl.constexpr, BLOCK_C: tl.constexpr,
                      BLOCK_B: tl.constexpr):
    """y = (x - mean[st]) * rstd[st] * w[c] + b[c] on an (A, C, B) view (A: samples, C: channels,
    B: the rest), st = a * STAT_A + c // CPG (batch norm: STAT_A 0, CPG 1; group norm: STAT_A the
    groups, CPG channels per group). program_id(0) walks a and the B blocks, program_id(1) the
    channel blocks. VAR_INPUT: rstd_ptr holds a variance (eval mode's running_var),
    rstd = 1 / sqrt(var + eps)."""
    pid = tl.program_id(0).to(tl.int64)
    a = pid // B_BLOCKS
    bb = (pid % B_BLOCKS) * BLOCK_B + tl.arange(0, BLOCK_B).to(tl.int64)
    c = tl.program_id(1).to(tl.int64) * BLOCK_C + tl.arange(0, BLOCK_C).to(tl.int64)
    c_mask = c < C
    st = a * STAT_A + c // CPG
    mean = tl.load(mean_ptr + st, mask=c_mask, other=0)
    rstd = tl.load(rstd_ptr + st, mask=c_mask, other=1)
    if VAR_INPUT:
        rstd = 1.0 / tl.sqrt(rstd + eps_bits.to(tl.int64).to(tl.float64, bitcast=True).to(COMPUTE))
    scale = rstd
    if HAS_W:
        w = tl.load(w_ptr + c, mask=c_mask, other=0)
        if w.dtype == tl.bfloat16:
            w = convert(w, COMPUTE)
        scale = scale * w.to(COMPUTE)
    mask = c_mask[:, None] & (bb < B)[None, :]
    x = tl.load(x_ptr + (a * x_sa + c[:, None] * x_sc + bb[None, :] * x_sb), mask=mask, other=0)
    if x.dtype == tl.bfloat16:
        x = convert(x, COMPUTE)
    y = (x.to(COMPUTE) - mean[:, None]) * scale[:, None]
    if HAS_B:
        b = tl.load(b_ptr + c, mask=c_mask, other=0)
        if b.dtype == tl.bfloat16:
            b = convert(b, COMPUTE)
        y = y + b.to(COMPUTE)[:, None]
    y_off = a * y_sa + c[:, None] * y_sc + bb[None, :] * y_sb
    if y_ptr.dtype.element_ty == tl.bfloat16:
        store_cast(y_ptr + y_off, y, mask)
    else:
        tl.store(y_ptr + y_off, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def grad_sums_partial_kernel(g_ptr, x_ptr, mean_ptr, part_ptr, S, S_INNER, g_so, g_si, g_sp, g_sq, x_so, x_si,
                             x_sp, x_sq, Q, MEAN_OUTER, MEAN_CPG, UNITS, units_per_split,
                             COMPUTE: tl.constexpr, BLOCK_S: tl.constexpr, BLOCK_Q: tl.constexpr):
    """part (2, splits, S): this split's sums of g and of g * (x - mean[m]) for each statistic s
    (elements as in moments_partial_kernel, g and x with their own strides), centred on
    mean[m], m = (s // S_INNER) * MEAN_OUTER + (s % S_INNER) // MEAN_CPG."""
    s = tl.program_id(0).to(tl.int64) * BLOCK_S + tl.arange(0, BLOCK_S).to(tl.int64)
    split = tl.program_id(1).to(tl.int64)
    splits = tl.num_programs(1).to(tl.int64)
    s_mask = s < S
    g_base = (s // S_INNER) * g_so + (s % S_INNER) * g_si
    x_base = (s // S_INNER) * x_so + (s % S_INNER) * x_si
    m = (s // S_INNER) * MEAN_OUTER + (s % S_INNER) // MEAN_CPG
    mean = tl.load(mean_ptr + m, mask=s_mask, other=0)
    q0 = tl.arange(0, BLOCK_Q).to(tl.int64)
    q_blocks = tl.cdiv(Q, BLOCK_Q)
    first = split * units_per_split
    n_units = tl.minimum(units_per_split, UNITS - first)
    acc_g = tl.zeros([BLOCK_S, BLOCK_Q], COMPUTE)
    acc_gx = tl.zeros([BLOCK_S, BLOCK_Q], COMPUTE)
    for u_ in range(0, n_units):
        u = tl.cast(u_, tl.int64)     # int64 loop index (kernels/__init__.py)
        u = first + u
        p = u // q_blocks
        q = (u % q_blocks) * BLOCK_Q + q0
        mask = s_mask[:, None] & (q < Q)[None, :]
        g = tl.load(g_ptr + (g_base[:, None] + p * g_sp + q[None, :] * g_sq), mask=mask, other=0)
        if g.dtype == tl.bfloat16:
            g = convert(g, COMPUTE)
        x = tl.load(x_ptr + (x_base[:, None] + p * x_sp + q[None, :] * x_sq), mask=mask, other=0)
        if x.dtype == tl.bfloat16:
            x = convert(x, COMPUTE)
        g = g.to(COMPUTE)
        acc_g += g
        acc_gx += tl.where(mask, g * (x.to(COMPUTE) - mean[:, None]), 0.0).to(COMPUTE)
    tl.store(part_ptr + split * S + s, tl.sum(acc_g, 1), mask=s_mask)
    tl.store(part_ptr + (splits + split) * S + s, tl.sum(acc_gx, 1), mask=s_mask)


@triton.jit
def batch_norm_bwd_finalize_kernel(part_ptr, rstd_ptr, w_ptr, dw_ptr, db_ptr, coef_ptr, S, SPLITS, count,
                                   HAS_W: tl.constexpr, NEED_DW: tl.constexpr, NEED_DB: tl.constexpr,
                                   TRAINING: tl.constexpr, COMPUTE: tl.constexpr, BLOCK_S: tl.constexpr):
    """Per channel, the splits' sums added in order: sum_g = sum g, sum_gx = sum g (x - mean);
    dw = sum_gx * rstd, db = sum_g; in training, the coefficients of
    dx = rstd w g + cb (x - mean) + cd:  cb = -rstd^3 w sum_gx / M,  cd = -rstd w sum_g / M
    (coef (2, S))."""
    s = tl.program_id(0).to(tl.int64) * BLOCK_S + tl.arange(0, BLOCK_S).to(tl.int64)
    mask = s < S
    sum_g = tl.zeros([BLOCK_S], COMPUTE)
    sum_gx = tl.zeros([BLOCK_S], COMPUTE)
    for k_ in range(0, SPLITS):
        k = tl.cast(k_, tl.int64)     # int64 loop index (kernels/__init__.py)
        sum_g += tl.load(part_ptr + k * S + s, mask=mask, other=0)
        sum_gx += tl.load(part_ptr + (SPLITS + k) * S + s, mask=mask, other=0)
    rstd = tl.load(rstd_ptr + s, mask=mask, other=0)
    if NEED_DW:
        if dw_ptr.dtype.element_ty == tl.bfloat16:
            store_cast(dw_ptr + s, sum_gx * rstd, mask)
        else:
            tl.store(dw_ptr + s, (sum_gx * rstd).to(dw_ptr.dtype.element_ty), mask=mask)
    if NEED_DB:
        if db_ptr.dtype.element_ty == tl.bfloat16:
            store_cast(db_ptr + s, sum_g, mask)
        else:
            tl.store(db_ptr + s, sum_g.to(db_ptr.dtype.element_ty), mask=mask)
    if TRAINING:
        w = tl.full([BLOCK_S], 1.0, COMPUTE)
        if HAS_W:
            w = tl.load(w_ptr + s, mask=mask, other=0)
            if w.dtype == tl.bfloat16:
                w = convert(w, COMPUTE)
            w = w.to(COMPUTE)
        m = tl.zeros([BLOCK_S], COMPUTE) + count
        tl.store(coef_ptr + s, -(rstd * rstd * rstd) * w * sum_gx / m, mask=mask)
        tl.store(coef_ptr + S + s, -rstd * w * sum_g / m, mask=mask)


@triton.jit
def group_norm_bwd_coef_kernel(sums_ptr, rstd_ptr, w_ptr, coef_ptr, NG, C, G, CPG, count, HAS_W: tl.constexpr,
                               COMPUTE: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_J: tl.constexpr):
    """Per (n, group) row r: with the per-(n, channel) sums A = sum g, B = sum g (x - mean)
    (sums (2, N * C)), u1 = sum_c w A, u2 = sum_c w B over the group's channels, the
    coefficients of dx = rstd w g + cb (x - mean) + cd:  cb = -rstd^3 u2 / M,  cd = -rstd u1 / M."""
    r = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R).to(tl.int64)
    r_mask = r < NG
    n = r // G
    g0 = (r % G) * CPG
    j0 = tl.arange(0, BLOCK_J).to(tl.int64)
    u1 = tl.zeros([BLOCK_R], COMPUTE)
    u2 = tl.zeros([BLOCK_R], COMPUTE)
    for j_ in range(0, CPG, BLOCK_J):
        j = tl.cast(j_, tl.int64)     # int64 loop index (kernels/__init__.py)
        j = j + j0
        mask = r_mask[:, None] & (j < CPG)[None, :]
        c = g0[:, None] + j[None, :]
        a = tl.load(sums_ptr + (n[:, None] * C + c), mask=mask, other=0)
        b = tl.load(sums_ptr + (NG * CPG + n[:, None] * C + c), mask=mask, other=0)
        if HAS_W:
            w = tl.load(w_ptr + c, mask=mask, other=0)
            if w.dtype == tl.bfloat16:
                w = convert(w, COMPUTE)
            a = a * w.to(COMPUTE)
            b = b * w.to(COMPUTE)
        u1 += tl.sum(a, 1)
        u2 += tl.sum(b, 1)
    rstd = tl.load(rstd_ptr + r, mask=r_mask, other=0)
    m = tl.zeros([BLOCK_R], COMPUTE) + count
    tl.store(coef_ptr + r, -(rstd * rstd * rstd) * u2 / m, mask=r_mask)
    tl.store(coef_ptr + NG + r, -rstd * u1 / m, mask=r_mask)


@triton.jit
def group_norm_param_grad_kernel(sums_ptr, rstd_ptr, dw_ptr, db_ptr, N, C, G, CPG, NEED_DW: tl.constexpr,
                                 NEED_DB: tl.constexpr, COMPUTE: tl.constexpr, BLOCK_N: tl.constexpr,
                                 BLOCK_C: tl.constexpr):
    """dw[c] = sum_n rstd[n, c // CPG] B[n, c],  db[c] = sum_n A[n, c] (sums (2, N * C)), the
    samples added in order."""
    c = tl.program_id(0).to(tl.int64) * BLOCK_C + tl.arange(0, BLOCK_C).to(tl.int64)
    c_mask = c < C
    n0 = tl.arange(0, BLOCK_N).to(tl.int64)
    dw = tl.zeros([BLOCK_C], COMPUTE)
    db = tl.zeros([BLOCK_C], COMPUTE)
    for i_ in range(0, N, BLOCK_N):
        n = tl.cast(i_, tl.int64)     # int64 loop index (kernels/__init__.py)
        n = n + n0
        mask = (n < N)[:, None] & c_mask[None, :]
        idx = n[:, None] * C + c[None, :]
        if NEED_DB:
            db += tl.sum(tl.load(sums_ptr + idx, mask=mask, other=0), 0)
        if NEED_DW:
            rstd = tl.load(rstd_ptr + (n[:, None] * G + c[None, :] // CPG), mask=mask, other=0)
            dw += tl.sum(rstd * tl.load(sums_ptr + (N * C + idx), mask=mask, other=0), 0)
    if NEED_DW:
        if dw_ptr.dtype.element_ty == tl.bfloat16:
            store_cast(dw_ptr + c, dw, c_mask)
        else:
            tl.store(dw_ptr + c, dw.to(dw_ptr.dtype.element_ty), mask=c_mask)
    if NEED_DB:
        if db_ptr.dtype.element_ty == tl.bfloat16:
            store_cast(db_ptr + c, db, c_mask)
        else:
            tl.store(db_ptr + c, db.to(db_ptr.dtype.element_ty), mask=c_mask)


@triton.jit
def norm_backward_apply_kernel(g_ptr, x_ptr, dx_ptr, mean_ptr, rstd_ptr, w_ptr, coef_ptr, C, B, B_BLOCKS, NSTAT,
                               g_sa, g_sc, g_sb, x_sa, x_sc, x_sb, d_sa, d_sc, d_sb, STAT_A, CPG,
                               HAS_W: tl.constexpr, TRAINING: tl.constexpr, COMPUTE: tl.constexpr,
                               BLOCK_C: tl.constexpr, BLOCK_B: tl.constexpr):
    """dx = rstd[st] w[c] g + cb[st] (x - mean[st]) + cd[st] on the (A, C, B) view of
    norm_apply_kernel (coef (2, NSTAT) = (cb, cd)); without TRAINING (eval-mode batch norm:
    the running statistics are constants) dx = rstd w g."""
    pid = tl.program_id(0).to(tl.int64)
    a = pid // B_BLOCKS
    bb = (pid % B_BLOCKS) * BLOCK_B + tl.arange(0, BLOCK_B).to(tl.int64)
    c = tl.program_id(1).to(tl.int64) * BLOCK_C + tl.arange(0, BLOCK_C).to(tl.int64)
    c_mask = c < C
    st = a * STAT_A + c // CPG
    scale = tl.load(rstd_ptr + st, mask=c_mask, other=0)
    if HAS_W:
        w = tl.load(w_ptr + c, mask=c_mask, other=0)
        if w.dtype == tl.bfloat16:
            w = convert(w, COMPUTE)
        scale = scale * w.to(COMPUTE)
    mask = c_mask[:, None] & (bb < B)[None, :]
    g = tl.load(g_ptr + (a * g_sa + c[:, None] * g_sc + bb[None, :] * g_sb), mask=mask, other=0)
    if g.dtype == tl.bfloat16:
        g = convert(g, COMPUTE)
    dx = g.to(COMPUTE) * scale[:, None]
    if TRAINING:
        mean = tl.load(mean_ptr + st, mask=c_mask, other=0)
        cb = tl.load(coef_ptr + st, mask=c_mask, other=0)
        cd = tl.load(coef_ptr + NSTAT + st, mask=c_mask, other=0)
        x = tl.load(x_ptr + (a * x_sa + c[:, None] * x_sc + bb[None, :] * x_sb), mask=mask, other=0)
        if x.dtype == tl.bfloat16:
            x = convert(x, COMPUTE)
        dx = dx + cb[:, None] * (x.to(COMPUTE) - mean[:, None]) + cd[:, None]
    d_off = a * d_sa + c[:, None] * d_sc + bb[None, :] * d_sb
    if dx_ptr.dtype.element_ty == tl.bfloat16:
        store_cast(dx_ptr + d_off, dx, mask)
    else:
        tl.store(dx_ptr + d_off, dx.to(dx_ptr.dtype.element_ty), mask=mask)
