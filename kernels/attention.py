"""Flash attention (FlashAttention-2: Dao, 2023): the forward with the online softmax and its
deterministic backward, for any L, S, head dims up to 256, masks of any strides, causal, GQA
and dropout.

Layout: q (Z, H, L, E), k (Z, Hk, S, E), v (Z, Hk, S, Ev), out (Z, H, L, Ev), each read by its own
strides (broadcast dims have stride 0); the query head h reads key / value head h // GROUP. A
mask (MASK 1: bool, True takes part; MASK 2: float, added) is (Z, H, L, S) by strides. The
log-sum-exp of each row (lse, float32 (float64 for float64), (Z * H, L) contiguous) is saved for the backward; a row
no key takes part in gets lse = +inf and output 0 (FlashAttention-2's convention), so the
backward's exp(s - lse) is 0 there.

Scores are computed in base 2: s2 = (scale q.k + mask) log2(e), so that exp2 serves the
softmax. The accumulators are float32 (float64 for float64 inputs, ACC); the probabilities go to
the second dot in the inputs' dtype, as FlashAttention's. WIDEN (the interpreter only) converts the
loaded tiles to ACC first: Triton's interpreter multiplies bfloat16 tiles as raw 16-bit integers.
Float scalars (scale, 1 / (1 - p)) arrive as the int64 bit patterns of float64 values
(strided.scalar_value): a Python float argument would be typed float32.

The forward: one program per (query block, z * H + h); it walks the key blocks, and with CAUSAL
stops at the diagonal: key j takes part in query row i when j <= i + shift (shift 0: the lower
triangle aligned at the top left, torch's is_causal; shift S - L: aligned at the bottom right,
the efficient-attention kernel's custom_mask_type 2).
The backward: ``attention_backward_preprocess`` (delta = rowsum(dO * O)), then
``attention_backward_dkdv`` (one program per (key block, z * Hk + hk), walking the query blocks
of each of the GROUP query heads that read that key head) and ``attention_backward_dq`` (one
program per (query block, z * H + h), walking the key blocks): each output element is written by
one program, no atomics, so the gradients are bit-identical run to run.

Dropout: element (z, h, i, j) draws Philox4x32-10 at counter offset4 + ((z H + h) L + i) S + j
(key: the seed); it is kept when its first word's top 31 bits are below KEEP (round((1 - p) 2^31)).
The backward regenerates the same draws (tritensor/backends/numpy_attention.py is the twin).
"""
import triton
import triton.language as tl

from .strided import scalar_value, store_cast

LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453


@triton.jit
def _keep(seed, offset4, row, cols, S, KEEP):
    """The dropout keep-mask of rows ``row`` (a column of (z H + h) L + i) and keys ``cols``."""
    counter = offset4 + row * S + cols
    c0 = (counter & 0xFFFFFFFF).to(tl.uint32)
    c1 = ((counter >> 32) & 0xFFFFFFFF).to(tl.uint32)
    zero = tl.zeros_like(c0)
    r0, _r1, _r2, _r3 = tl.philox(seed, c0, c1, zero, zero)
    return (r0 >> 1).to(tl.int64) < KEEP


@triton.jit
def _scores(q, k_ptrs, mask_ptrs, offs_m, offs_n, d_ok, L, S, qk_scale, shift, MASK: tl.constexpr,
            CAUSAL: tl.constexpr, PRECISION: tl.constexpr, ACC: tl.constexpr, WIDEN: tl.constexpr):
    """(BLOCK_M, BLOCK_N) scores in base 2, -inf where masked or out of range (k^T read where
    d_ok, the head-dim column (BLOCK_D, 1) inside E)."""
    valid_n = offs_n < S
    kt = tl.load(k_ptrs, mask=valid_n[None, :] & d_ok, other=0.0)
    if WIDEN:
        kt = kt.to(ACC)
    s = tl.dot(q, kt, input_precision=PRECISION, out_dtype=ACC) * qk_scale
    inside = (offs_m[:, None] < L) & valid_n[None, :]
    if MASK == 1:
        mb = tl.load(mask_ptrs, mask=inside, other=0)
        inside = inside & (mb != 0)
    elif MASK == 2:
        mf = tl.load(mask_ptrs, mask=inside, other=0.0).to(ACC)
        s = s + mf * 1.4426950408889634
    if CAUSAL:
        inside = inside & (offs_n[None, :] <= offs_m[:, None] + shift)
    return tl.where(inside, s, float("-inf"))


@triton.jit(do_not_specialize=["seed", "offset4", "shift"])
def attention_forward_kernel(Q, K, V, M, O, LSE,
                             sqz, sqh, sql, sqd, skz, skh, sks, skd, svz, svh, svs, svd,
                             smz, smh, sml, sms, soz, soh, sol, sod,
                             H, L, S, E, EV, GROUP, qk_scale_bits, shift, seed, offset4, KEEP, inv_keep_bits,
                             MASK: tl.constexpr, CAUSAL: tl.constexpr, DROPOUT: tl.constexpr,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
                             BLOCK_DV: tl.constexpr, ACC: tl.constexpr, PRECISION: tl.constexpr,
                             WIDEN: tl.constexpr):
    start_m = tl.program_id(0).to(tl.int64)
    zh = tl.program_id(1).to(tl.int64)
    z = zh // H
    h = zh % H
    hk = h // GROUP
    qk_scale = scalar_value(qk_scale_bits, 2, ACC)
    inv_keep = scalar_value(inv_keep_bits, 2, ACC)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n0 = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    offs_dv = tl.arange(0, BLOCK_DV)
    q_ptrs = Q + z * sqz + h * sqh + offs_m[:, None] * sql + offs_d[None, :] * sqd
    q = tl.load(q_ptrs, mask=(offs_m[:, None] < L) & (offs_d[None, :] < E), other=0.0)
    if WIDEN:     # the interpreter multiplies bfloat16 tiles as raw integers
        q = q.to(ACC)
    k_base = K + z * skz + hk * skh + offs_d[:, None] * skd
    v_base = V + z * svz + hk * svh + offs_dv[None, :] * svd
    m_base = M + z * smz + h * smh + offs_m[:, None] * sml
    m_i = tl.full([BLOCK_M], float("-inf"), ACC)
    l_i = tl.zeros([BLOCK_M], ACC)
    acc = tl.zeros([BLOCK_M, BLOCK_DV], ACC)
    end_n = S + start_m * 0      # (int64 in both branches)
    if CAUSAL:
        end_n = tl.minimum(S, (start_m + 1) * BLOCK_M + shift)
    for n0_ in range(0, end_n, BLOCK_N):
        n0 = tl.cast(n0_, tl.int64)
        offs_n = n0 + offs_n0
        s = _scores(q, k_base + offs_n[None, :] * sks, m_base + offs_n[None, :] * sms, offs_m, offs_n, offs_d[:, None] < E, L, S,
                    qk_scale, shift, MASK, CAUSAL, PRECISION, ACC, WIDEN)
        m_new = tl.maximum(m_i, tl.max(s, 1))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)      # nothing taken part yet: no NaN
        alpha = tl.exp2(m_i - m_safe)
        p = tl.exp2(s - m_safe[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        if DROPOUT:
            keep = _keep(seed, offset4, (zh * L + offs_m)[:, None], offs_n[None, :], S, KEEP)
            p = tl.where(keep, p * inv_keep, 0.0)
        vb = tl.load(v_base + offs_n[:, None] * svs, mask=(offs_n[:, None] < S) & (offs_dv[None, :] < EV), other=0.0)
        if WIDEN:     # the interpreter multiplies bfloat16 tiles as raw integers
            vb = vb.to(ACC)
        acc = acc * alpha[:, None] + tl.dot(p.to(vb.dtype), vb, input_precision=PRECISION, out_dtype=ACC)
        m_i = m_new
    empty = l_i == 0.0
    out = acc / tl.where(empty, 1.0, l_i)[:, None]
    lse = tl.where(empty, float("inf"), (m_i + tl.log2(tl.where(empty, 1.0, l_i))) * 0.6931471805599453)
    o_ptrs = O + z * soz + h * soh + offs_m[:, None] * sol + offs_dv[None, :] * sod
    store_cast(o_ptrs, out, (offs_m[:, None] < L) & (offs_dv[None, :] < EV))
    tl.store(LSE + zh * L + offs_m, lse.to(LSE.dtype.element_ty), mask=offs_m < L)


@triton.jit
def attention_backward_preprocess(O, DO, DELTA, soz, soh, sol, sod, sgz, sgh, sgl, sgd, H, L, EV,
                                  BLOCK_M: tl.constexpr, BLOCK_DV: tl.constexpr, ACC: tl.constexpr):
    """delta = rowsum(dO * O), (Z * H, L) contiguous, in ACC."""
    start_m = tl.program_id(0).to(tl.int64)
    zh = tl.program_id(1).to(tl.int64)
    z = zh // H
    h = zh % H
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_dv = tl.arange(0, BLOCK_DV)
    inside = (offs_m[:, None] < L) & (offs_dv[None, :] < EV)
    o = tl.load(O + z * soz + h * soh + offs_m[:, None] * sol + offs_dv[None, :] * sod, mask=inside, other=0.0)
    g = tl.load(DO + z * sgz + h * sgh + offs_m[:, None] * sgl + offs_dv[None, :] * sgd, mask=inside, other=0.0)
    delta = tl.sum(o.to(ACC) * g.to(ACC), 1)
    tl.store(DELTA + zh * L + offs_m, delta, mask=offs_m < L)


@triton.jit(do_not_specialize=["seed", "offset4", "shift"])
def attention_backward_dkdv(Q, K, V, M, DO, LSE, DELTA, DK, DV,
                            sqz, sqh, sql, sqd, skz, skh, sks, skd, svz, svh, svs, svd,
                            smz, smh, sml, sms, sgz, sgh, sgl, sgd,
                            sdkz, sdkh, sdks, sdkd, sdvz, sdvh, sdvs, sdvd,
                            H, HK, L, S, E, EV, GROUP, scale_bits, qk_scale_bits, shift, seed, offset4, KEEP, inv_keep_bits,
                            MASK: tl.constexpr, CAUSAL: tl.constexpr, DROPOUT: tl.constexpr,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
                            BLOCK_DV: tl.constexpr, ACC: tl.constexpr, PRECISION: tl.constexpr,
                             WIDEN: tl.constexpr):
    """dK and dV of one key block of key head hk, summed over the GROUP query heads reading it."""
    start_n = tl.program_id(0).to(tl.int64)
    zhk = tl.program_id(1).to(tl.int64)
    z = zhk // HK
    hk = zhk % HK
    scale = scalar_value(scale_bits, 2, ACC)
    qk_scale = scalar_value(qk_scale_bits, 2, ACC)
    inv_keep = scalar_value(inv_keep_bits, 2, ACC)
    offs_n = start_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_m0 = tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    offs_dv = tl.arange(0, BLOCK_DV)
    valid_n = offs_n < S
    k = tl.load(K + z * skz + hk * skh + offs_n[:, None] * sks + offs_d[None, :] * skd,
                mask=valid_n[:, None] & (offs_d[None, :] < E), other=0.0)
    if WIDEN:     # the interpreter multiplies bfloat16 tiles as raw integers
        k = k.to(ACC)
    v = tl.load(V + z * svz + hk * svh + offs_n[:, None] * svs + offs_dv[None, :] * svd,
                mask=valid_n[:, None] & (offs_dv[None, :] < EV), other=0.0)
    if WIDEN:     # the interpreter multiplies bfloat16 tiles as raw integers
        v = v.to(ACC)
    dk = tl.zeros([BLOCK_N, BLOCK_D], ACC)
    dv = tl.zeros([BLOCK_N, BLOCK_DV], ACC)
    start_m0 = start_n * 0       # (int64 in both branches)
    if CAUSAL:      # query rows above the block's first key never see it
        start_m0 = (tl.maximum(start_n * BLOCK_N - shift, 0) // BLOCK_M) * BLOCK_M
    for g_ in range(0, GROUP):
        gh = tl.cast(g_, tl.int64)
        h = hk * GROUP + gh
        zh = z * H + h
        for m0_ in range(start_m0, L, BLOCK_M):
            m0 = tl.cast(m0_, tl.int64)
            offs_m = m0 + offs_m0
            valid_m = offs_m < L
            q = tl.load(Q + z * sqz + h * sqh + offs_m[:, None] * sql + offs_d[None, :] * sqd,
                        mask=valid_m[:, None] & (offs_d[None, :] < E), other=0.0)
            if WIDEN:     # the interpreter multiplies bfloat16 tiles as raw integers
                q = q.to(ACC)
            do = tl.load(DO + z * sgz + h * sgh + offs_m[:, None] * sgl + offs_dv[None, :] * sgd,
                         mask=valid_m[:, None] & (offs_dv[None, :] < EV), other=0.0)
            if WIDEN:     # the interpreter multiplies bfloat16 tiles as raw integers
                do = do.to(ACC)
            lse = tl.load(LSE + zh * L + offs_m, mask=valid_m, other=float("inf"))
            delta = tl.load(DELTA + zh * L + offs_m, mask=valid_m, other=0.0)
            # the transposed scores (BLOCK_N, BLOCK_M): keys as rows
            st = tl.dot(k, tl.trans(q), input_precision=PRECISION, out_dtype=ACC) * qk_scale
            inside = valid_n[:, None] & valid_m[None, :]
            if MASK == 1:
                mb = tl.load(M + z * smz + h * smh + offs_m[None, :] * sml + offs_n[:, None] * sms, mask=inside, other=0)
                inside = inside & (mb != 0)
            elif MASK == 2:
                mf = tl.load(M + z * smz + h * smh + offs_m[None, :] * sml + offs_n[:, None] * sms, mask=inside,
                             other=0.0).to(ACC)
                st = st + mf * 1.4426950408889634
            if CAUSAL:
                inside = inside & (offs_n[:, None] <= offs_m[None, :] + shift)
            pt = tl.where(inside, tl.exp2(st - lse[None, :] * 1.4426950408889634), 0.0)
            dpt = tl.dot(v, tl.trans(do), input_precision=PRECISION, out_dtype=ACC)
            pzt = pt
            if DROPOUT:
                keep = _keep(seed, offset4, (zh * L + offs_m)[None, :], offs_n[:, None], S, KEEP)
                pzt = tl.where(keep, pt * inv_keep, 0.0)
                dpt = tl.where(keep, dpt * inv_keep, 0.0)
            dv += tl.dot(pzt.to(do.dtype), do, input_precision=PRECISION, out_dtype=ACC)
            dst = pt * (dpt - delta[None, :])
            dk += tl.dot(dst.to(q.dtype), q, input_precision=PRECISION, out_dtype=ACC)
    dk = dk * scale
    store_cast(DK + z * sdkz + hk * sdkh + offs_n[:, None] * sdks + offs_d[None, :] * sdkd, dk,
               valid_n[:, None] & (offs_d[None, :] < E))
    store_cast(DV + z * sdvz + hk * sdvh + offs_n[:, None] * sdvs + offs_dv[None, :] * sdvd, dv,
               valid_n[:, None] & (offs_dv[None, :] < EV))


@triton.jit(do_not_specialize=["seed", "offset4", "shift"])
def attention_backward_dq(Q, K, V, M, DO, LSE, DELTA, DQ,
                          sqz, sqh, sql, sqd, skz, skh, sks, skd, svz, svh, svs, svd,
                          smz, smh, sml, sms, sgz, sgh, sgl, sgd, sdqz, sdqh, sdql, sdqd,
                          H, L, S, E, EV, GROUP, scale_bits, qk_scale_bits, shift, seed, offset4, KEEP, inv_keep_bits,
                          MASK: tl.constexpr, CAUSAL: tl.constexpr, DROPOUT: tl.constexpr,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
                          BLOCK_DV: tl.constexpr, ACC: tl.constexpr, PRECISION: tl.constexpr,
                             WIDEN: tl.constexpr):
    """dQ of one query block: dS = P (dP - delta) over the key blocks, dQ = scale dS K."""
    start_m = tl.program_id(0).to(tl.int64)
    zh = tl.program_id(1).to(tl.int64)
    z = zh // H
    h = zh % H
    hk = h // GROUP
    scale = scalar_value(scale_bits, 2, ACC)
    qk_scale = scalar_value(qk_scale_bits, 2, ACC)
    inv_keep = scalar_value(inv_keep_bits, 2, ACC)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n0 = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    offs_dv = tl.arange(0, BLOCK_DV)
    valid_m = offs_m < L
    q = tl.load(Q + z * sqz + h * sqh + offs_m[:, None] * sql + offs_d[None, :] * sqd,
                mask=valid_m[:, None] & (offs_d[None, :] < E), other=0.0)
    if WIDEN:     # the interpreter multiplies bfloat16 tiles as raw integers
        q = q.to(ACC)
    do = tl.load(DO + z * sgz + h * sgh + offs_m[:, None] * sgl + offs_dv[None, :] * sgd,
                 mask=valid_m[:, None] & (offs_dv[None, :] < EV), other=0.0)
    if WIDEN:     # the interpreter multiplies bfloat16 tiles as raw integers
        do = do.to(ACC)
    lse = tl.load(LSE + zh * L + offs_m, mask=valid_m, other=float("inf")) * 1.4426950408889634
    delta = tl.load(DELTA + zh * L + offs_m, mask=valid_m, other=0.0)
    k_base = K + z * skz + hk * skh + offs_d[:, None] * skd
    v_base = V + z * svz + hk * svh + offs_dv[:, None] * svd
    m_base = M + z * smz + h * smh + offs_m[:, None] * sml
    dq = tl.zeros([BLOCK_M, BLOCK_D], ACC)
    end_n = S + start_m * 0      # (int64 in both branches)
    if CAUSAL:
        end_n = tl.minimum(S, (start_m + 1) * BLOCK_M + shift)
    for n0_ in range(0, end_n, BLOCK_N):
        n0 = tl.cast(n0_, tl.int64)
        offs_n = n0 + offs_n0
        s = _scores(q, k_base + offs_n[None, :] * sks, m_base + offs_n[None, :] * sms, offs_m, offs_n, offs_d[:, None] < E, L, S,
                    qk_scale, shift, MASK, CAUSAL, PRECISION, ACC, WIDEN)
        p = tl.exp2(s - lse[:, None])          # -inf scores and +inf lse (empty rows) give 0
        vt = tl.load(v_base + offs_n[None, :] * svs, mask=(offs_n[None, :] < S) & (offs_dv[:, None] < EV), other=0.0)
        if WIDEN:     # the interpreter multiplies bfloat16 tiles as raw integers
            vt = vt.to(ACC)
        dp = tl.dot(do, vt, input_precision=PRECISION, out_dtype=ACC)
        if DROPOUT:
            keep = _keep(seed, offset4, (zh * L + offs_m)[:, None], offs_n[None, :], S, KEEP)
            dp = tl.where(keep, dp * inv_keep, 0.0)
        ds = p * (dp - delta[:, None])
        kb = tl.load(K + z * skz + hk * skh + offs_n[:, None] * sks + offs_d[None, :] * skd,
                     mask=(offs_n[:, None] < S) & (offs_d[None, :] < E), other=0.0)
        if WIDEN:     # the interpreter multiplies bfloat16 tiles as raw integers
            kb = kb.to(ACC)
        dq += tl.dot(ds.to(kb.dtype), kb, input_precision=PRECISION, out_dtype=ACC)
    dq = dq * scale
    store_cast(DQ + z * sdqz + h * sdqh + offs_m[:, None] * sdql + offs_d[None, :] * sdqd, dq,
               valid_m[:, None] & (offs_d[None, :] < E))
