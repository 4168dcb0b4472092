"""Convolution as implicit GEMM: the forward pass, the input gradient (which is also the
transposed convolution) and the weight gradient, for 1, 2 and 3 spatial dims.

One kernel family serves every rank: the launcher (backends/triton/conv.py) hands each kernel
three spatial dims (D, H, W), a 1-d or 2-d problem having leading spatial dims of size 1 with
kernel 1, stride 1, padding 0 (Triton specialises the 1s, so their index arithmetic folds away).
No im2col buffer exists: every program computes the addresses of its operand tiles from the
pixel and tap indices, and out-of-image taps (zero padding) are masked loads that read 0.

Notation (the convolution ``y = conv(x, w)``, groups G):
  x [N, G * CI, ID, IH, IW], w [G * CO, CI, KD, KH, KW], y [N, G * CO, OD, OH, OW]
  y[n, g*CO + co, o] = sum_{ci, k} x[n, g*CI + ci, o * stride - padding + k * dilation] * w[g*CO + co, ci, k]

Each kernel is a GEMM whose operands are gathered on the fly (program_id(1) walks the groups,
and for the input gradient the stride's residue classes, or for the weight gradient the
split-K slices; the launcher chunks that axis to 65535):
  forward        M = N*OD*OH*OW output pixels, N = CO, K = (kd, kh, kw, ci) flattened, ci innermost
  input grad     per residue class r of the input pixels modulo the stride (the pixels
                 i = r + stride * j): M = N*JD*JH*JW of them, N = CI, K = (the taps that reach
                 class r, co). Only taps with (r + padding - k * dilation) divisible by the stride
                 reach class r: they are every ``step``-th tap from the first one (step =
                 stride / gcd(stride, dilation)), so no program multiplies zeros a strided
                 convolution's gradient would otherwise hold (the "sub-pixel" decomposition).
                 y[n, co, o] reaches x[n, ci, i] through tap k where o = (i + padding - k*dilation)
                 / stride = j + (r + padding - k*dilation) / stride, the division exact.
  weight grad    M = CO, N = (kd, kh, kw, ci) flattened, K = N*OD*OH*OW pixels, cut into SPLIT
                 slices: each writes its own partial sums (a [SPLIT, *weight] buffer, reduced
                 in a fixed order by the launcher), so the result never depends on timing: no
                 atomics, bit-identical on every run.

Every index and offset is int64 (pixel and tap indices, loop indices: kernels/__init__.py).
Operands of any strides are read in place (NCHW, channels_last, sliced); tiles go through
``tl.dot`` with an accumulator of ACC (float32 for 16/32-bit inputs, float64 for float64) and
the launcher's float32 PRECISION ("ieee" or "tf32", the matmul precision setting). WIDEN widens
the tiles to ACC first (the interpreter multiplies bfloat16 tiles as integers; matmul.py does
the same). Every block dim must be >= 16 on a GPU (tl.dot's minimum).
"""
import triton
import triton.language as tl

from .strided import store_cast


@triton.jit
def _tile_ids(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """(row tile, column tile) of program ``pid`` in Triton's grouped order: GROUP_M row tiles
    sweep the columns together, so the tiles they share stay in L2."""
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    in_group = GROUP_M * num_n
    first_m = (pid // in_group) * GROUP_M
    rows = tl.minimum(num_m - first_m, GROUP_M)
    return first_m + (pid % in_group) % rows, (pid % in_group) // rows


@triton.jit
def _store(ptrs, acc, mask):
    if ptrs.dtype.element_ty == tl.bfloat16:
        store_cast(ptrs, acc, mask)     # round to nearest even, the same bits compiled or interpreted
    else:
        tl.store(ptrs, acc.to(ptrs.dtype.element_ty), mask=mask)


@triton.jit
def conv_forward_kernel(x_ptr, w_ptr, b_ptr, y_ptr, g_base,
                        M, CI, CO, ID, IH, IW, OD, OH, OW, KD, KH, KW,
                        sd, sh, sw, pd, ph, pw, dd, dh, dw,
                        sxn, sxc, sxd, sxh, sxw,
                        swo, swc, swd, swh, sww,
                        syn, syc, syd, syh, syw,
                        HAS_BIAS: tl.constexpr, ACC: tl.constexpr, PRECISION: tl.constexpr,
                        WIDEN: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                        BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """y[:, g*CO:(g+1)*CO] = conv(x[:, g*CI:(g+1)*CI], w[g*CO:(g+1)*CO]) (+ bias) for group
    g = g_base + program_id(1); M = N*OD*OH*OW."""
    g = g_base + tl.program_id(1).to(tl.int64)
    pid_m, pid_n = _tile_ids(tl.program_id(0), M, CO, BLOCK_M, BLOCK_N, GROUP_M)
    rm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    m_ok = rm < M
    n_ok = rn < CO
    ow = rm % OW
    t = rm // OW
    oh = t % OH
    t = t // OH
    od = t % OD
    n = t // OD
    id0 = od * sd - pd       # the window's corner in the input, per output pixel
    ih0 = oh * sh - ph
    iw0 = ow * sw - pw
    x_rows = n * sxn + id0 * sxd + ih0 * sxh + iw0 * sxw + g * CI * sxc
    co = g * CO + rn
    w_cols = co * swo

    K = CI * KD * KH * KW
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    for k_ in range(0, tl.cdiv(K, BLOCK_K)):
        k = tl.cast(k_, tl.int64)     # int64 loop index (kernels/__init__.py)
        rk = k * BLOCK_K + tl.arange(0, BLOCK_K)
        k_ok = rk < K
        ci = rk % CI
        tap = rk // CI
        kw = tap % KW
        tap = tap // KW
        kh = tap % KH
        kd = tap // KH
        idd = id0[:, None] + (kd * dd)[None, :]
        ihh = ih0[:, None] + (kh * dh)[None, :]
        iww = iw0[:, None] + (kw * dw)[None, :]
        a_mask = (m_ok[:, None] & k_ok[None, :] & (idd >= 0) & (idd < ID) & (ihh >= 0) & (ihh < IH)
                  & (iww >= 0) & (iww < IW))
        x_cols = ci * sxc + kd * dd * sxd + kh * dh * sxh + kw * dw * sxw
        a = tl.load(x_ptr + x_rows[:, None] + x_cols[None, :], mask=a_mask, other=0.0)
        w_rows = ci * swc + kd * swd + kh * swh + kw * sww
        b = tl.load(w_ptr + w_rows[:, None] + w_cols[None, :], mask=k_ok[:, None] & n_ok[None, :], other=0.0)
        if WIDEN:
            a = a.to(ACC)
            b = b.to(ACC)
        acc = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=ACC)

    if HAS_BIAS:
        acc += tl.load(b_ptr + co, mask=n_ok, other=0.0).to(ACC)[None, :]
    y_rows = n * syn + od * syd + oh * syh + ow * syw
    _store(y_ptr + y_rows[:, None] + (co * syc)[None, :], acc, m_ok[:, None] & n_ok[None, :])


@triton.jit
def _first_tap(base, dil, stride, step):
    """The smallest tap k in [0, step) with (base - k * dil) divisible by stride, or ``step``
    when there is none (then no tap at all reaches the residue class: the solutions of
    k * dil = base (mod stride) repeat every step = stride / gcd(stride, dil) taps)."""
    first = tl.cast(step, tl.int64)
    for t_ in range(0, step):
        t = tl.cast(t_, tl.int64)     # int64 loop index (kernels/__init__.py)
        hit = ((base - t * dil) % stride == 0) & (first == step)
        first = tl.where(hit, t, first)
    return first


@triton.jit
def _tap_count(first, step, K):
    """How many taps k = first + step * t lie in [0, K) (none when first == step: no solution)."""
    return tl.where(first < step, tl.maximum(K - first + step - 1, 0) // step, 0)


@triton.jit
def conv_input_grad_kernel(gy_ptr, w_ptr, b_ptr, gx_ptr, z_base, classes,
                           N, CI, CO, ID, IH, IW, OD, OH, OW, KD, KH, KW,
                           sd, sh, sw, pd, ph, pw, dd, dh, dw, step_d, step_h, step_w, JD, JH, JW,
                           sgn, sgc, sgd, sgh, sgw,
                           swo, swc, swd, swh, sww,
                           sxn, sxc, sxd, sxh, sxw,
                           HAS_BIAS: tl.constexpr, ACC: tl.constexpr, PRECISION: tl.constexpr,
                           WIDEN: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                           BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """gx = the gradient of conv(x, w) for x, from gy (the transposed convolution of gy by w,
    plus bias[gx's channel] when HAS_BIAS), for group g and residue class r where
    z_base + program_id(1) = g * classes + r. gx's pixels outside [0, I) are not written; a
    pixel no (o, k) reaches gets 0 (+ bias). The class's pixels are i = r + stride * j, j in
    [0, J) (J = ceil(I / stride)), M = N*JD*JH*JW of them."""
    z = z_base + tl.program_id(1).to(tl.int64)
    g = z // classes
    r = z % classes
    rw = r % sw
    rh = (r // sw) % sh
    rd = r // (sw * sh)
    kd0 = _first_tap(rd + pd, dd, sd, step_d)
    kh0 = _first_tap(rh + ph, dh, sh, step_h)
    kw0 = _first_tap(rw + pw, dw, sw, step_w)
    TD = _tap_count(kd0, step_d, KD)
    TH = _tap_count(kh0, step_h, KH)
    TW = _tap_count(kw0, step_w, KW)

    M = N * JD * JH * JW
    pid_m, pid_n = _tile_ids(tl.program_id(0), M, CI, BLOCK_M, BLOCK_N, GROUP_M)
    rm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    jw = rm % JW
    t = rm // JW
    jh = t % JH
    t = t // JH
    jd = t % JD
    n = t // JD
    i_d = rd + jd * sd
    i_h = rh + jh * sh
    i_w = rw + jw * sw
    m_ok = (rm < M) & (i_d < ID) & (i_h < IH) & (i_w < IW)
    n_ok = rn < CI
    gy_rows = n * sgn + jd * sgd + jh * sgh + jw * sgw
    ci = g * CI + rn         # gx's channel (w's dim 1 counts the group's channels: rn)
    w_cols = rn * swc

    K = CO * TD * TH * TW
    # the divisors below are never 0 (a class no tap reaches has K = 0 and runs no step): an
    # integer division by TW is undefined behaviour where TW may be 0, so LLVM inferred TW != 0
    # and folded _tap_count's "no tap" branch away (the first H200 run: such classes got taps)
    TWd = tl.maximum(TW, 1)
    THd = tl.maximum(TH, 1)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    for k_ in range(0, tl.cdiv(K, BLOCK_K)):
        k = tl.cast(k_, tl.int64)     # int64 loop index (kernels/__init__.py)
        rk = k * BLOCK_K + tl.arange(0, BLOCK_K)
        k_ok = rk < K
        co = g * CO + rk % CO
        tap = rk // CO
        kw = kw0 + (tap % TWd) * step_w
        tap = tap // TWd
        kh = kh0 + (tap % THd) * step_h
        kd = kd0 + (tap // THd) * step_d
        # exact divisions: the taps of this class make the numerators multiples of the stride
        qd = (rd + pd - kd * dd) // sd
        qh = (rh + ph - kh * dh) // sh
        qw = (rw + pw - kw * dw) // sw
        o_d = jd[:, None] + qd[None, :]
        o_h = jh[:, None] + qh[None, :]
        o_w = jw[:, None] + qw[None, :]
        a_mask = (m_ok[:, None] & k_ok[None, :] & (o_d >= 0) & (o_d < OD) & (o_h >= 0) & (o_h < OH)
                  & (o_w >= 0) & (o_w < OW))
        gy_cols = co * sgc + qd * sgd + qh * sgh + qw * sgw
        a = tl.load(gy_ptr + gy_rows[:, None] + gy_cols[None, :], mask=a_mask, other=0.0)
        w_rows = co * swo + kd * swd + kh * swh + kw * sww
        b = tl.load(w_ptr + w_rows[:, None] + w_cols[None, :], mask=k_ok[:, None] & n_ok[None, :], other=0.0)
        if WIDEN:
            a = a.to(ACC)
            b = b.to(ACC)
        acc = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=ACC)

    if HAS_BIAS:
        acc += tl.load(b_ptr + ci, mask=n_ok, other=0.0).to(ACC)[None, :]
    gx_rows = n * sxn + i_d * sxd + i_h * sxh + i_w * sxw
    _store(gx_ptr + gx_rows[:, None] + (ci * sxc)[None, :], acc, m_ok[:, None] & n_ok[None, :])


@triton.jit
def conv_weight_grad_kernel(gy_ptr, x_ptr, gw_ptr, z_base, splits, pixels_per_split,
                            M, CI, CO, ID, IH, IW, OD, OH, OW, KD, KH, KW,
                            sd, sh, sw, pd, ph, pw, dd, dh, dw,
                            sgn, sgc, sgd, sgh, sgw,
                            sxn, sxc, sxd, sxh, sxw,
                            sos, swo, swc, swd, swh, sww,
                            ACC: tl.constexpr, PRECISION: tl.constexpr, WIDEN: tl.constexpr,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                            GROUP_M: tl.constexpr):
    """gw[s] = the part of the gradient of conv(x, w) for w[g*CO:(g+1)*CO] that output pixels
    [s * pixels_per_split, (s + 1) * pixels_per_split) contribute, where z_base + program_id(1)
    = g * splits + s; gw[s] is at gw_ptr + s * sos (sos = 0 with one split: gw is the
    gradient itself). M = N*OD*OH*OW; pixels_per_split is a multiple of BLOCK_K."""
    z = z_base + tl.program_id(1).to(tl.int64)
    g = z // splits
    s = z % splits
    NCOL = KD * KH * KW * CI
    pid_m, pid_n = _tile_ids(tl.program_id(0), CO, NCOL, BLOCK_M, BLOCK_N, GROUP_M)
    rm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    m_ok = rm < CO
    n_ok = rn < NCOL
    co = g * CO + rm
    ci = rn % CI
    tap = rn // CI
    kw = tap % KW
    tap = tap // KW
    kh = tap % KH
    kd = tap // KH
    gy_rows = co * sgc
    x_cols = (g * CI + ci) * sxc + kd * dd * sxd + kh * dh * sxh + kw * dw * sxw

    start = s * pixels_per_split
    stop = tl.minimum(start + pixels_per_split, M)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    for k_ in range(0, tl.cdiv(stop - start, BLOCK_K)):
        k = tl.cast(k_, tl.int64)     # int64 loop index (kernels/__init__.py)
        rk = start + k * BLOCK_K + tl.arange(0, BLOCK_K)
        k_ok = rk < stop
        ow = rk % OW
        t = rk // OW
        oh = t % OH
        t = t // OH
        od = t % OD
        n = t // OD
        gy_cols = n * sgn + od * sgd + oh * sgh + ow * sgw
        a = tl.load(gy_ptr + gy_rows[:, None] + gy_cols[None, :], mask=m_ok[:, None] & k_ok[None, :], other=0.0)
        id0 = od * sd - pd
        ih0 = oh * sh - ph
        iw0 = ow * sw - pw
        idd = id0[:, None] + (kd * dd)[None, :]
        ihh = ih0[:, None] + (kh * dh)[None, :]
        iww = iw0[:, None] + (kw * dw)[None, :]
        b_mask = (k_ok[:, None] & n_ok[None, :] & (idd >= 0) & (idd < ID) & (ihh >= 0) & (ihh < IH)
                  & (iww >= 0) & (iww < IW))
        x_rows = n * sxn + id0 * sxd + ih0 * sxh + iw0 * sxw
        b = tl.load(x_ptr + x_rows[:, None] + x_cols[None, :], mask=b_mask, other=0.0)
        if WIDEN:
            a = a.to(ACC)
            b = b.to(ACC)
        acc = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=ACC)

    gw_cols = ci * swc + kd * swd + kh * swh + kw * sww
    _store(gw_ptr + s * sos + (co * swo)[:, None] + gw_cols[None, :], acc, m_ok[:, None] & n_ok[None, :])
