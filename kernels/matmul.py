"""Tiled matrix multiplication: C[b] = alpha * A[b] @ B[b] (+ beta * D[b]), one kernel for mm, bmm,
matmul, addmm, baddbmm and linear.

Every operand arrives as a pointer plus (batch, row, column) strides, so transposed, sliced and
broadcast operands (batch stride 0) are read in place, never copied. A program computes one
[BLOCK_M, BLOCK_N] tile of one batch entry (program_id 1), walking K in BLOCK_K steps with
``tl.dot`` into an accumulator of ACC (float32 for 16/32-bit inputs, float64 for float64).

Programs are ordered in groups of GROUP_M tile rows: consecutive programs share the same few
tiles of A and sweep across B, so the tiles they read are still in L2 (Triton's grouped
ordering). Rows and columns past M / N are clamped with a modulo (never out of bounds, loads stay
unmasked in those dims, which pipelines better) and masked only at the store; the K tail is
masked with zeros, which add nothing.

The float32 precision is the launcher's choice (``PRECISION``: "ieee" or "tf32"), never
Triton's default (tf32), so that the setting tt.backends.cuda.matmul.allow_tf32 is what decides.
Every block dimension must be >= 16 on a GPU (tl.dot's minimum; the interpreter accepts less).
"""
import triton
import triton.language as tl

from .strided import scalar_value, store_cast


@triton.jit(do_not_specialize=["alpha_bits", "beta_bits"])
def matmul_kernel(a_ptr, b_ptr, c_ptr, d_ptr, M, N, K,
                  stride_ab, stride_am, stride_ak,
                  stride_bb, stride_bk, stride_bn,
                  stride_cb, stride_cm, stride_cn,
                  stride_db, stride_dm, stride_dn,
                  alpha_bits, beta_bits,
                  HAS_D: tl.constexpr, SCALE: tl.constexpr, ACC: tl.constexpr, PRECISION: tl.constexpr,
                  WIDEN: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_M: tl.constexpr):
    """C = alpha * A @ B + beta * D for one batch entry per program_id(1). A is [M, K], B [K, N],
    C and D [M, N] (D read with any strides, 0 on broadcast dims). alpha/beta arrive as the int64
    bit patterns of float64 values (a Python float argument would be typed float32); SCALE says
    whether alpha differs from 1, HAS_D whether beta * D is added (beta == 0 ignores D entirely,
    NaN included, as torch does). WIDEN converts the loaded tiles to ACC before tl.dot: Triton's
    interpreter multiplies bfloat16 tiles as raw 16-bit integers, so the launcher sets it there
    (products of bfloat16 values are exact in float32, so the result is the same); on a GPU
    16-bit tiles go to the tensor cores as they are."""
    pid = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    in_group = GROUP_M * num_pid_n
    group = pid // in_group
    first_m = group * GROUP_M
    group_rows = tl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % in_group) % group_rows
    pid_n = (pid % in_group) // group_rows

    rm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    am = rm % M     # clamped rows/columns: in bounds, their results are never stored
    bn = rn % N
    # K offsets in int64 too: a transposed operand's K stride can be ~M, and BLOCK_K * M overflows
    # int32 long before M * K does
    sak = tl.cast(stride_ak, tl.int64)
    sbk = tl.cast(stride_bk, tl.int64)
    a_ptrs = a_ptr + batch * stride_ab + am[:, None] * stride_am + rk[None, :] * sak
    b_ptrs = b_ptr + batch * stride_bb + rk[:, None] * sbk + bn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=ACC)
    for k_ in range(0, tl.cdiv(K, BLOCK_K)):
        k = tl.cast(k_, tl.int64)     # int64 loop index (kernels/__init__.py)
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=rk[None, :] < k_left, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < k_left, other=0.0)
        if WIDEN:
            a = a.to(ACC)
            b = b.to(ACC)
        acc = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=ACC)
        a_ptrs += BLOCK_K * sak
        b_ptrs += BLOCK_K * sbk

    if SCALE:
        acc = acc * scalar_value(alpha_bits, 2, ACC)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    if HAS_D:
        d = tl.load(d_ptr + batch * stride_db + rm[:, None] * stride_dm + rn[None, :] * stride_dn,
                    mask=mask, other=0.0)
        acc += scalar_value(beta_bits, 2, ACC) * d.to(ACC)
    c_ptrs = c_ptr + batch * stride_cb + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    if c_ptr.dtype.element_ty == tl.bfloat16:
        store_cast(c_ptrs, acc, mask)   # round to nearest even, the same bits compiled or interpreted
    else:
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit(do_not_specialize=["alpha", "beta"])
def matmul_int_kernel(a_ptr, b_ptr, c_ptr, d_ptr, M, N, K,
                      stride_ab, stride_am, stride_ak,
                      stride_bb, stride_bk, stride_bn,
                      stride_cb, stride_cm, stride_cn,
                      stride_db, stride_dm, stride_dn,
                      alpha, beta,
                      HAS_D: tl.constexpr, SCALE: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr):
    """The integer C = alpha * A @ B + beta * D (uint8, int8, int16, int32, int64 operands), exact:
    every product and sum in int64, wrapping modulo 2**64 as torch's CPU kernels do, then
    truncated to C's width on the store (the low bits of a wrapped sum are those of the sum in any
    wider type, so a narrow result equals torch's). tl.dot has no int64 form on a GPU (and its
    int8 form accumulates in int32), so each K step is a broadcast multiply of the [BLOCK_M,
    BLOCK_K] and [BLOCK_K, BLOCK_N] tiles summed over K: CUDA-core work, no tensor cores.
    alpha and beta are the integers torch converts its scalars to; the tile order and the
    clamped rows/columns are matmul_kernel's."""
    pid = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    in_group = GROUP_M * num_pid_n
    group = pid // in_group
    first_m = group * GROUP_M
    group_rows = tl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % in_group) % group_rows
    pid_n = (pid % in_group) // group_rows

    rm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    am = rm % M
    bn = rn % N
    sak = tl.cast(stride_ak, tl.int64)
    sbk = tl.cast(stride_bk, tl.int64)
    a_ptrs = a_ptr + batch * stride_ab + am[:, None] * stride_am + rk[None, :] * sak
    b_ptrs = b_ptr + batch * stride_bb + rk[:, None] * sbk + bn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int64)
    for k_ in range(0, tl.cdiv(K, BLOCK_K)):
        k = tl.cast(k_, tl.int64)     # int64 loop index (kernels/__init__.py)
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=rk[None, :] < k_left, other=0).to(tl.int64)
        b = tl.load(b_ptrs, mask=rk[:, None] < k_left, other=0).to(tl.int64)
        acc += tl.sum(a[:, :, None] * b[None, :, :], axis=1)
        a_ptrs += BLOCK_K * sak
        b_ptrs += BLOCK_K * sbk

    if SCALE:
        acc = acc * alpha.to(tl.int64)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    if HAS_D:
        d = tl.load(d_ptr + batch * stride_db + rm[:, None] * stride_dm + rn[None, :] * stride_dn,
                    mask=mask, other=0)
        acc += beta.to(tl.int64) * d.to(tl.int64)
    c_ptrs = c_ptr + batch * stride_cb + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)
