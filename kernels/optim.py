"""Multi-tensor ("fused") optimizer steps: ONE launch updates every tensor of a parameter group.

torch's fused optimizers pass their tensor lists to the kernel by value (TensorListMetadata);
a Triton kernel takes a fixed argument list, so the list lives in device memory instead: one
int64 buffer, the *table*, written by the host before each launch (backends/triton/optim.py),
as Triton's grouped-GEMM tutorial passes its per-problem pointers. Its layout:

    table[0 : HEADER]                 the group's hyper-parameters, as float64 bit patterns
    table[HEADER + r*ROW : ... + ROW] one row per tensor r:
        [numel, param address, grad address, state0, state1, state2, per-tensor word 0, word 1]
    table[chunk_base + 2*pid : + 2]   program pid's work: (row r, first element of its chunk)

Every program updates one chunk (BLOCK * ITERS elements) of one tensor: the grid is the list of
(tensor, chunk) pairs of the whole group, so tensors of any sizes share one launch.
Addresses are loaded as int64 and cast to typed pointers (``.to(tl.pointer_type(DTYPE))``);
all tensors of a launch have the element type DTYPE (the launcher groups them by dtype) and are
contiguous. Math runs in COMPUTE (float32 for float16/bfloat16/float32, float64 for float64),
rounded to DTYPE to nearest even (``convert``: the interpreter would truncate
bfloat16), with IEEE division and square root (plain ``/`` and ``tl.sqrt`` compile to approximations for
float32) and each formula written in the order torch's single-tensor step evaluates it.
"""
import triton
import triton.language as tl

from .strided import convert

HEADER = 8   # float64 hyper-parameters at the start of the table
ROW = 8      # int64 words per tensor row


@triton.jit
def _header(table, COMPUTE: tl.constexpr):
    """The group's six hyper-parameters (float64 bit patterns), each rounded to the compute dtype
    once, as torch rounds a Python float scalar to the tensor's opmath type. (Helpers return
    several values: every jit helper call costs ~1 ms under the interpreter.)"""
    h0 = tl.load(table + 0).to(tl.float64, bitcast=True).to(COMPUTE)
    h1 = tl.load(table + 1).to(tl.float64, bitcast=True).to(COMPUTE)
    h2 = tl.load(table + 2).to(tl.float64, bitcast=True).to(COMPUTE)
    h3 = tl.load(table + 3).to(tl.float64, bitcast=True).to(COMPUTE)
    h4 = tl.load(table + 4).to(tl.float64, bitcast=True).to(COMPUTE)
    h5 = tl.load(table + 5).to(tl.float64, bitcast=True).to(COMPUTE)
    return h0, h1, h2, h3, h4, h5


@triton.jit
def _row(table, base, DTYPE: tl.constexpr, COMPUTE: tl.constexpr, ALIGNED: tl.constexpr):
    """A tensor's row: its five addresses (param, grad, state0-2) as pointers to DTYPE, and its two
    per-tensor words read as float64 bit patterns in the compute dtype. ALIGNED: the host checked
    that every address of the launch is a multiple of 16 bytes; saying so lets the compiler use
    16-byte vector loads (it cannot know it of an address read from memory)."""
    p = tl.load(table + base + 1).to(tl.pointer_type(DTYPE))
    g = tl.load(table + base + 2).to(tl.pointer_type(DTYPE))
    s0 = tl.load(table + base + 3).to(tl.pointer_type(DTYPE))
    s1 = tl.load(table + base + 4).to(tl.pointer_type(DTYPE))
    s2 = tl.load(table + base + 5).to(tl.pointer_type(DTYPE))
    if ALIGNED:
        p, g = tl.multiple_of(p, 16), tl.multiple_of(g, 16)
        s0, s1, s2 = tl.multiple_of(s0, 16), tl.multiple_of(s1, 16), tl.multiple_of(s2, 16)
    w0 = tl.load(table + base + 6).to(tl.float64, bitcast=True).to(COMPUTE)
    w1 = tl.load(table + base + 7).to(tl.float64, bitcast=True).to(COMPUTE)
    return p, g, s0, s1, s2, w0, w1


@triton.jit
def _div(a, b):
    if b.dtype == tl.float32:
        r = tl.div_rn(a, b)
    else:
        r = a / b
    return r


@triton.jit
def _sqrt(x):
    if x.dtype == tl.float32:
        r = tl.sqrt_rn(x)
    else:
        r = tl.sqrt(x)
    return r


@triton.jit
def _lerp(start, end, weight):
    """torch's lerp: start + w * (end - start) for |w| < 0.5, else end - (end - start) * (1 - w)."""
    small = tl.abs(weight) < 0.5
    return tl.where(small, start + weight * (end - start), end - (end - start) * (1 - weight))


@triton.jit
def _chunk(table, chunk_base, BLOCK: tl.constexpr, ITERS: tl.constexpr):
    """This program's (row base, first element, element count of its tensor)."""
    pid = tl.program_id(0).to(tl.int64)
    row = tl.load(table + chunk_base + 2 * pid)
    start = tl.load(table + chunk_base + 2 * pid + 1)
    start = tl.multiple_of(start, BLOCK)   # chunks start at multiples of BLOCK * ITERS
    base = 8 + row * 8      # HEADER + row * ROW
    n = tl.load(table + base)
    return base, start, n


@triton.jit
def _sgd_block(offs, mask, p_ptr, g_ptr, buf_ptr, first, neg_lr, weight_decay, momentum, one_minus_dampening,
               DTYPE: tl.constexpr, COMPUTE: tl.constexpr, HAS_WD: tl.constexpr, HAS_MOMENTUM: tl.constexpr,
               NESTEROV: tl.constexpr, MAXIMIZE: tl.constexpr):
    p = tl.load(p_ptr + offs, mask=mask).to(COMPUTE)
    g = tl.load(g_ptr + offs, mask=mask).to(COMPUTE)
    if MAXIMIZE:
        g = g * -1.0
    if HAS_WD:
        g = g + weight_decay * p
    if HAS_MOMENTUM:
        buf = tl.load(buf_ptr + offs, mask=mask).to(COMPUTE)
        buf = tl.where(first, g, buf * momentum + one_minus_dampening * g)
        tl.store(buf_ptr + offs, convert(buf, DTYPE), mask=mask)
        if NESTEROV:
            g = g + momentum * buf
        else:
            g = buf
    p = p + neg_lr * g
    tl.store(p_ptr + offs, convert(p, DTYPE), mask=mask)


@triton.jit
def sgd_kernel(table, chunk_base, DTYPE: tl.constexpr, COMPUTE: tl.constexpr, HAS_WD: tl.constexpr,
               HAS_MOMENTUM: tl.constexpr, NESTEROV: tl.constexpr, MAXIMIZE: tl.constexpr, ALIGNED: tl.constexpr,
               BLOCK: tl.constexpr, ITERS: tl.constexpr):
    """SGD (torch's _single_tensor_sgd). Header: [-lr, weight_decay, momentum, 1 - dampening].
    Row: state0 = momentum_buffer; word 0 = 1 when the buffer is new (it starts as the gradient)."""
    base, start, n = _chunk(table, chunk_base, BLOCK, ITERS)
    neg_lr, weight_decay, momentum, one_minus_dampening, _, _ = _header(table, COMPUTE)
    p_ptr, g_ptr, buf_ptr, _, _, _, _ = _row(table, base, DTYPE, COMPUTE, ALIGNED)
    first = tl.load(table + base + 6) != 0      # an integer flag, not a float word
    if start + BLOCK * ITERS <= n:      # a whole chunk: no mask, so loads can be vectors
        for it in tl.static_range(ITERS):
            _sgd_block(start + it * BLOCK + tl.arange(0, BLOCK), None, p_ptr, g_ptr, buf_ptr, first, neg_lr,
                       weight_decay, momentum, one_minus_dampening, DTYPE, COMPUTE, HAS_WD, HAS_MOMENTUM,
                       NESTEROV, MAXIMIZE)
    else:
        for it in tl.static_range(ITERS):
            offs = start + it * BLOCK + tl.arange(0, BLOCK)
            _sgd_block(offs, offs < n, p_ptr, g_ptr, buf_ptr, first, neg_lr, weight_decay, momentum,
                       one_minus_dampening, DTYPE, COMPUTE, HAS_WD, HAS_MOMENTUM, NESTEROV, MAXIMIZE)


@triton.jit
def _adam_block(offs, mask, p_ptr, g_ptr, m_ptr, v_ptr, vmax_ptr, lerp_weight, beta2, one_minus_beta2,
                weight_decay, decay_factor, eps, neg_step_size, bias_correction2_sqrt,
                DTYPE: tl.constexpr, COMPUTE: tl.constexpr, HAS_WD: tl.constexpr, DECOUPLED: tl.constexpr,
                AMSGRAD: tl.constexpr, MAXIMIZE: tl.constexpr):
    p = tl.load(p_ptr + offs, mask=mask).to(COMPUTE)
    g = tl.load(g_ptr + offs, mask=mask).to(COMPUTE)
    m = tl.load(m_ptr + offs, mask=mask).to(COMPUTE)
    v = tl.load(v_ptr + offs, mask=mask).to(COMPUTE)
    if MAXIMIZE:
        g = g * -1.0
    if HAS_WD:
        if DECOUPLED:
            p = p * decay_factor
        else:
            g = g + weight_decay * p
    m = _lerp(m, g, lerp_weight)
    v = v * beta2 + one_minus_beta2 * g * g
    tl.store(m_ptr + offs, convert(m, DTYPE), mask=mask)
    tl.store(v_ptr + offs, convert(v, DTYPE), mask=mask)
    if AMSGRAD:
        vmax = tl.load(vmax_ptr + offs, mask=mask).to(COMPUTE)
        vmax = tl.maximum(vmax, v, propagate_nan=tl.PropagateNan.ALL)
        tl.store(vmax_ptr + offs, convert(vmax, DTYPE), mask=mask)
        denom = _div(_sqrt(vmax), bias_correction2_sqrt) + eps
    else:
        denom = _div(_sqrt(v), bias_correction2_sqrt) + eps
    p = p + neg_step_size * _div(m, denom)
    tl.store(p_ptr + offs, convert(p, DTYPE), mask=mask)


@triton.jit
def adam_kernel(table, chunk_base, DTYPE: tl.constexpr, COMPUTE: tl.constexpr, HAS_WD: tl.constexpr,
                DECOUPLED: tl.constexpr, AMSGRAD: tl.constexpr, MAXIMIZE: tl.constexpr, ALIGNED: tl.constexpr,
                BLOCK: tl.constexpr, ITERS: tl.constexpr):
    """Adam / AdamW (torch's _single_tensor_adam, the non-capturable branch).
    Header: [1 - beta1, beta2, 1 - beta2, weight_decay, 1 - lr * weight_decay, eps].
    Row: state0 = exp_avg, state1 = exp_avg_sq, state2 = max_exp_avg_sq (amsgrad);
    word 0 = -lr / (1 - beta1**step), word 1 = sqrt(1 - beta2**step) (each tensor has its own step)."""
    base, start, n = _chunk(table, chunk_base, BLOCK, ITERS)
    lerp_weight, beta2, one_minus_beta2, weight_decay, decay_factor, eps = _header(table, COMPUTE)
    p_ptr, g_ptr, m_ptr, v_ptr, vmax_ptr, neg_step_size, bias_correction2_sqrt = _row(
        table, base, DTYPE, COMPUTE, ALIGNED)
    if start + BLOCK * ITERS <= n:      # a whole chunk: no mask, so loads can be vectors
        for it in tl.static_range(ITERS):
            _adam_block(start + it * BLOCK + tl.arange(0, BLOCK), None, p_ptr, g_ptr, m_ptr, v_ptr, vmax_ptr,
                        lerp_weight, beta2, one_minus_beta2, weight_decay, decay_factor, eps, neg_step_size,
                        bias_correction2_sqrt, DTYPE, COMPUTE, HAS_WD, DECOUPLED, AMSGRAD, MAXIMIZE)
    else:
        for it in tl.static_range(ITERS):
            offs = start + it * BLOCK + tl.arange(0, BLOCK)
            _adam_block(offs, offs < n, p_ptr, g_ptr, m_ptr, v_ptr, vmax_ptr, lerp_weight, beta2,
                        one_minus_beta2, weight_decay, decay_factor, eps, neg_step_size, bias_correction2_sqrt,
                        DTYPE, COMPUTE, HAS_WD, DECOUPLED, AMSGRAD, MAXIMIZE)


@triton.jit
def _rmsprop_block(offs, mask, p_ptr, g_ptr, sq_ptr, buf_ptr, ga_ptr, neg_lr, alpha, one_minus_alpha, eps,
                   weight_decay, momentum, DTYPE: tl.constexpr, COMPUTE: tl.constexpr, HAS_WD: tl.constexpr,
                   HAS_MOMENTUM: tl.constexpr, CENTERED: tl.constexpr, MAXIMIZE: tl.constexpr):
    p = tl.load(p_ptr + offs, mask=mask).to(COMPUTE)
    g = tl.load(g_ptr + offs, mask=mask).to(COMPUTE)
    sq = tl.load(sq_ptr + offs, mask=mask).to(COMPUTE)
    if MAXIMIZE:
        g = g * -1.0
    if HAS_WD:
        g = g + weight_decay * p
    sq = sq * alpha + one_minus_alpha * g * g
    tl.store(sq_ptr + offs, convert(sq, DTYPE), mask=mask)
    if CENTERED:
        ga = tl.load(ga_ptr + offs, mask=mask).to(COMPUTE)
        ga = _lerp(ga, g, one_minus_alpha)
        tl.store(ga_ptr + offs, convert(ga, DTYPE), mask=mask)
        avg = _sqrt(sq + (ga * -1.0) * ga)
    else:
        avg = _sqrt(sq)
    avg = avg + eps
    if HAS_MOMENTUM:
        buf = tl.load(buf_ptr + offs, mask=mask).to(COMPUTE)
        buf = buf * momentum + _div(g, avg)
        tl.store(buf_ptr + offs, convert(buf, DTYPE), mask=mask)
        p = p + neg_lr * buf
    else:
        p = p + neg_lr * _div(g, avg)
    tl.store(p_ptr + offs, convert(p, DTYPE), mask=mask)


@triton.jit
def rmsprop_kernel(table, chunk_base, DTYPE: tl.constexpr, COMPUTE: tl.constexpr, HAS_WD: tl.constexpr,
                   HAS_MOMENTUM: tl.constexpr, CENTERED: tl.constexpr, MAXIMIZE: tl.constexpr,
                   ALIGNED: tl.constexpr, BLOCK: tl.constexpr, ITERS: tl.constexpr):
    """RMSprop (torch's _single_tensor_rmsprop).
    Header: [-lr, alpha, 1 - alpha, eps, weight_decay, momentum].
    Row: state0 = square_avg, state1 = momentum_buffer, state2 = grad_avg (centered)."""
    base, start, n = _chunk(table, chunk_base, BLOCK, ITERS)
    neg_lr, alpha, one_minus_alpha, eps, weight_decay, momentum = _header(table, COMPUTE)
    p_ptr, g_ptr, sq_ptr, buf_ptr, ga_ptr, _, _ = _row(table, base, DTYPE, COMPUTE, ALIGNED)
    if start + BLOCK * ITERS <= n:      # a whole chunk: no mask, so loads can be vectors
        for it in tl.static_range(ITERS):
            _rmsprop_block(start + it * BLOCK + tl.arange(0, BLOCK), None, p_ptr, g_ptr, sq_ptr, buf_ptr, ga_ptr,
                           neg_lr, alpha, one_minus_alpha, eps, weight_decay, momentum, DTYPE, COMPUTE, HAS_WD,
                           HAS_MOMENTUM, CENTERED, MAXIMIZE)
    else:
        for it in tl.static_range(ITERS):
            offs = start + it * BLOCK + tl.arange(0, BLOCK)
            _rmsprop_block(offs, offs < n, p_ptr, g_ptr, sq_ptr, buf_ptr, ga_ptr, neg_lr, alpha, one_minus_alpha,
                           eps, weight_decay, momentum, DTYPE, COMPUTE, HAS_WD, HAS_MOMENTUM, CENTERED, MAXIMIZE)


@triton.jit
def _adagrad_block(offs, mask, p_ptr, g_ptr, sum_ptr, neg_clr, weight_decay, eps, DTYPE: tl.constexpr,
                   COMPUTE: tl.constexpr, HAS_WD: tl.constexpr, MAXIMIZE: tl.constexpr):
    p = tl.load(p_ptr + offs, mask=mask).to(COMPUTE)
    g = tl.load(g_ptr + offs, mask=mask).to(COMPUTE)
    s = tl.load(sum_ptr + offs, mask=mask).to(COMPUTE)
    if MAXIMIZE:
        g = g * -1.0
    if HAS_WD:
        g = g + weight_decay * p
    s = s + g * g
    tl.store(sum_ptr + offs, convert(s, DTYPE), mask=mask)
    std = _sqrt(s) + eps
    p = p + neg_clr * _div(g, std)
    tl.store(p_ptr + offs, convert(p, DTYPE), mask=mask)


@triton.jit
def adagrad_kernel(table, chunk_base, DTYPE: tl.constexpr, COMPUTE: tl.constexpr, HAS_WD: tl.constexpr,
                   MAXIMIZE: tl.constexpr, ALIGNED: tl.constexpr, BLOCK: tl.constexpr, ITERS: tl.constexpr):
    """Adagrad (torch's _single_tensor_adagrad, dense gradients). Header: [weight_decay, eps].
    Row: state0 = sum; word 0 = -lr / (1 + (step - 1) * lr_decay) (each tensor has its own step)."""
    base, start, n = _chunk(table, chunk_base, BLOCK, ITERS)
    weight_decay, eps, _, _, _, _ = _header(table, COMPUTE)
    p_ptr, g_ptr, sum_ptr, _, _, neg_clr, _ = _row(table, base, DTYPE, COMPUTE, ALIGNED)
    if start + BLOCK * ITERS <= n:      # a whole chunk: no mask, so loads can be vectors
        for it in tl.static_range(ITERS):
            _adagrad_block(start + it * BLOCK + tl.arange(0, BLOCK), None, p_ptr, g_ptr, sum_ptr, neg_clr,
                           weight_decay, eps, DTYPE, COMPUTE, HAS_WD, MAXIMIZE)
    else:
        for it in tl.static_range(ITERS):
            offs = start + it * BLOCK + tl.arange(0, BLOCK)
            _adagrad_block(offs, offs < n, p_ptr, g_ptr, sum_ptr, neg_clr, weight_decay, eps, DTYPE, COMPUTE,
                           HAS_WD, MAXIMIZE)
