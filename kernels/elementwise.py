"""Elementwise kernels: ONE generic kernel per arity (unary, binary, ternary) applying a small
``@triton.jit`` function ``FN`` passed as a ``tl.constexpr`` argument.

Every operand is either a tensor (a pointer plus strides broadcast to the output's shape; stride 0
on broadcast dims) or a scalar kernel argument. Each loaded value is cast explicitly to the
compute dtype ``COMPUTE`` before ``FN`` sees it (no reliance on Triton's implicit promotion), and
the result is cast to the output's element type on the way out (bool means != 0).

The FN functions below are the whole op vocabulary; ``UNARY``, ``BINARY`` and ``TERNARY`` name
them for the launcher, ``TERNARY_2OUT`` the FNs with two results (``ternary_2out_kernel``), and
``INTEGER_ONLY`` those with no floating-point form (bitwise ops).
Everything here runs under Triton's interpreter too, so libdevice (extern calls the interpreter
cannot run) is not used: rounding, expm1 and log1p are built from tl.floor/tl.ceil/tl.exp/tl.log.
"""
import triton
import triton.language as tl

from .strided import block_indices, convert, scalar_value, store_cast, strided_offset

# ------------------------------------------------------------------ helpers
@triton.jit
def _div(a, b):
    """True division; float32 is IEEE round-to-nearest (plain '/' compiles to an approximation).
    ``b`` must be a tensor; ``a`` may be a Python number."""
    if b.dtype == tl.float32:
        r = tl.div_rn(a, b)
    else:
        r = a / b
    return r


@triton.jit
def _negate(x):
    """-x. For floats as x * -1: Triton 3.6 compiles -x to 0 - x, which turns -(0.0) into +0.0."""
    if x.dtype.is_floating():
        r = x * -1.0
    else:
        r = -x
    return r


@triton.jit
def _signbit(x):
    """True where the sign bit of float ``x`` is set (also for -0.0 and -nan)."""
    if x.dtype == tl.float64:
        r = x.to(tl.int64, bitcast=True) < 0
    else:
        r = x.to(tl.int32, bitcast=True) < 0
    return r


@triton.jit
def _powi(x, e):
    """x ** e for non-negative integer tensors ``e`` by repeated squaring (exact for integers,
    wrapping on overflow like C). Loops only as many times as the largest exponent has bits."""
    result = tl.full(x.shape, 1, x.dtype)
    base = x
    while tl.max(tl.reshape(e, [e.numel]), 0) > 0:   # 1-D or 2-D (tiled) blocks
        result = tl.where((e & 1) != 0, result * base, result)
        base = base * base
        e = e >> 1
    return result


# ------------------------------------------------------------------ unary FNs
@triton.jit
def identity(x):
    return x


@triton.jit
def neg(x):
    return _negate(x)


@triton.jit
def exp(x):
    return tl.exp(x)


@triton.jit
def log(x):
    return tl.log(x)


@triton.jit
def sin(x):
    return tl.sin(x)


@triton.jit
def cos(x):
    return tl.cos(x)


@triton.jit
def tanh(x):
    # tanh(|x|) = (1 - t) / (1 + t) with t = exp(-2|x|) never overflows; near 0 that formula
    # cancels, so |x| < 1/16 uses the odd Taylor series up to x**9 instead.
    ax = tl.abs(x)
    t = tl.exp(-2.0 * ax)
    big = _div(1.0 - t, 1.0 + t)
    big = tl.where(x < 0, _negate(big), big)
    x2 = x * x
    small = x * (1.0 + x2 * (-1.0 / 3.0 + x2 * (2.0 / 15.0 + x2 * (-17.0 / 315.0 + x2 * (62.0 / 2835.0)))))
    return tl.where(ax < 0.0625, small, big)


@triton.jit
def relu(x):
    # NaN stays NaN (as torch); -0.0 becomes 0
    return tl.where((x > 0) | (x != x), x, tl.zeros_like(x))


@triton.jit
def sqrt(x):
    if x.dtype == tl.float32:
        r = tl.sqrt_rn(x)        # IEEE; tl.sqrt compiles to an approximation for float32
    else:
        r = tl.sqrt(x)
    return r


@triton.jit
def abs(x):
    return tl.abs(x)


@triton.jit
def sigmoid(x):
    return _div(1.0, 1.0 + tl.exp(-x))


# ------------------------------------------------------------------ binary FNs
@triton.jit
def add(a, b):
    return a + b


@triton.jit
def sub(a, b):
    return a - b


@triton.jit
def mul(a, b):
    return a * b


@triton.jit
def div(a, b):
    return _div(a, b)


@triton.jit
def pow(x, y):
    if x.dtype.is_floating():
        # Small non-negative integer exponents by repeated squaring: exact like np.power for
        # x**2, x**3 ...; everything else as exp2(y * log2|x|) with C99 pow's special cases.
        fast = (y == tl.floor(y)) & (y >= 0) & (y <= 64)
        by_squaring = _powi(x, tl.where(fast, y, 0).to(tl.int32))
        ax = tl.abs(x)
        r = tl.exp2(y * tl.log2(ax))
        y_int = tl.floor(y) == y                        # also true for +-inf
        y_odd = y_int & ((y - 2.0 * tl.floor(y * 0.5)) == 1.0)
        r = tl.where(_signbit(x) & y_odd, _negate(r), r)   # (-2)**3 = -8, (-0)**-1 = -inf
        nan = tl.full(r.shape, float("nan"), r.dtype)
        r = tl.where((x < 0) & (ax != float("inf")) & ~y_int, nan, r)   # (-2)**0.5 = nan
        r = tl.where((x == -1) & (tl.abs(y) == float("inf")), 1.0, r)  # (-1)**inf = 1
        r = tl.where((y == 0) | (x == 1), 1.0, r)      # x**0 = 1 and 1**y = 1, even for nan
        r = tl.where(fast, by_squaring, r)
    elif x.dtype.is_int_signed():
        # Integers: exact by repeated squaring, wrapping on overflow; negative exponents as
        # torch: 1**-n = 1, (-1)**-n = +-1, anything else 0.
        r = _powi(x, tl.where(y < 0, 0, y))
        one = tl.full(r.shape, 1, r.dtype)
        zero = tl.zeros_like(one)
        r_neg = tl.where(x == 1, one, zero)
        r_neg = tl.where(x == -1, tl.where((y & 1) != 0, -one, one), r_neg)
        r = tl.where(y < 0, r_neg, r)
    else:
        r = _powi(x, y)   # unsigned: no negative exponents
    return r


@triton.jit
def maximum(a, b):
    if a.dtype.is_floating():
        r = tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)
    else:
        r = tl.maximum(a, b)
    return r


@triton.jit
def minimum(a, b):
    if a.dtype.is_floating():
        r = tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)
    else:
        r = tl.minimum(a, b)
    return r


@triton.jit
def eq(a, b):
    return a == b


@triton.jit
def ne(a, b):
    return a != b


@triton.jit
def lt(a, b):
    return a < b


@triton.jit
def le(a, b):
    return a <= b


@triton.jit
def gt(a, b):
    return a > b


@triton.jit
def ge(a, b):
    return a >= b


@triton.jit
def tanh_backward(grad, y):
    return grad * (1 - y * y)


@triton.jit
def relu_backward(grad, x):
    return tl.where(x > 0, grad, tl.zeros_like(grad))


# ------------------------------------------------------------------ rounding helpers
# libdevice (floor/trunc/rint/expm1/log1p ...) cannot run under Triton's interpreter, so rounding
# and the functions that need accuracy near 0 are built from tl.floor/tl.ceil/tl.exp/tl.log here.
@triton.jit
def _trunc(x):
    """Round toward zero; keeps -0.0, NaN and inf."""
    return tl.where(x < 0, tl.ceil(x), tl.floor(x))


@triton.jit
def _rint(x):
    """Round half to even (torch.round, C nearbyint). x - floor(x) is exact except for x in
    (-1, 0), where any rounding of it still picks 0 (the even neighbour) or -1 correctly."""
    f = tl.floor(x)
    d = x - f
    f_odd = (f - 2.0 * tl.floor(f * 0.5)) == 1.0
    r = tl.where((d > 0.5) | ((d == 0.5) & f_odd), f + 1.0, f)
    return tl.where(r == 0, x * 0.0, r)      # round(-0.4) is -0.0, as in C


# ------------------------------------------------------------------ more unary FNs
@triton.jit
def sign(x):
    # torch: (0 < x) - (x < 0), so sign(nan) = 0 and sign(-0.0) = 0
    pos = (x > 0).to(x.dtype)
    negative = (x < 0).to(x.dtype)
    return pos - negative


@triton.jit
def exp2(x):
    return tl.exp2(x)


@triton.jit
def expm1(x):
    # exp(x) - 1 loses all accuracy near 0: there the Taylor series x(1 + x/2(1 + x/3(...))),
    # 17 terms (float64 accuracy at |x| = 0.5), elsewhere exp(x) - 1 (at most ~1 bit lost).
    p = tl.full(x.shape, 1.0, x.dtype)
    for k in tl.static_range(17, 1, -1):
        p = 1.0 + x * p * (1.0 / k)
    small = x * p
    return tl.where(tl.abs(x) < 0.5, small, tl.exp(x) - 1.0)


@triton.jit
def log1p(x):
    # log(1 + x) = 2 atanh(s), s = x / (2 + x): the odd series in s is accurate near 0 (where
    # log(1 + x) rounds 1 + x); |x| < 0.25 keeps s^2 < 0.021, 12 terms give float64 accuracy.
    s = _div(x, 2.0 + x)
    s2 = s * s
    q = tl.full(x.shape, 1.0 / 25.0, x.dtype)
    for k in tl.static_range(11, -1, -1):
        q = q * s2 + 1.0 / (2 * k + 1)
    small = 2.0 * s * q
    return tl.where(tl.abs(x) < 0.25, small, tl.log(1.0 + x))


@triton.jit
def log2(x):
    return tl.log2(x)


@triton.jit
def log10(x):
    return tl.log(x) * 0.43429448190325182765    # 1 / ln(10)


@triton.jit
def rsqrt(x):
    # tl.rsqrt is an approximation on the GPU; 1 / sqrt rounded twice is within 1 ulp
    return _div(1.0, sqrt(x))


@triton.jit
def reciprocal(x):
    return _div(1.0, x)


@triton.jit
def tan(x):
    return _div(tl.sin(x), tl.cos(x))


@triton.jit
def erf(x):
    return tl.erf(x)


@triton.jit
def silu(x):
    return _div(x, 1.0 + tl.exp(_negate(x)))


@triton.jit
def gelu(x):
    return 0.5 * x * (1.0 + tl.erf(x * 0.70710678118654752440))    # x * Phi(x)


@triton.jit
def gelu_tanh(x):
    inner = 0.79788456080286535588 * (x + 0.044715 * x * x * x)     # sqrt(2 / pi) (x + k x^3)
    return 0.5 * x * (1.0 + tanh(inner))


@triton.jit
def floor(x):
    if x.dtype.is_floating():
        r = tl.floor(x)
    else:
        r = x            # integers are their own floor (torch returns a copy)
    return r


@triton.jit
def ceil(x):
    if x.dtype.is_floating():
        r = tl.ceil(x)
    else:
        r = x
    return r


@triton.jit
def trunc(x):
    if x.dtype.is_floating():
        r = _trunc(x)
    else:
        r = x
    return r


@triton.jit
def round(x):
    if x.dtype.is_floating():
        r = _rint(x)
    else:
        r = x
    return r


@triton.jit
def logical_not(x):
    return x == 0


@triton.jit
def bitwise_not(x):
    return ~x


@triton.jit
def isnan(x):
    return x != x


@triton.jit
def isinf(x):
    if x.dtype.is_floating():
        r = tl.abs(x) == float("inf")
    else:
        r = x != x       # all False: integers are never infinite
    return r


@triton.jit
def isfinite(x):
    if x.dtype.is_floating():
        r = (x == x) & (tl.abs(x) != float("inf"))
    else:
        r = x == x
    return r


# ------------------------------------------------------------------ more binary FNs
@triton.jit
def _int_div_trunc(a, b):
    """C integer division without undefined behaviour: x / 0 gives 0 (torch's cpu raises before
    any kernel runs; its CUDA kernels return garbage), MIN / -1 wraps to MIN."""
    if a.dtype.is_int_signed():
        safe = tl.where((b == 0) | (b == -1), 1, b)
        q = tl.where(b == -1, -a, a // safe)
    else:
        safe = tl.where(b == 0, 1, b)
        q = a // safe
    return tl.where(b == 0, 0, q)


@triton.jit
def _int_mod_trunc(a, b):
    """C remainder (sign of a) without undefined behaviour: x % 0 = 0, x % -1 = 0."""
    if a.dtype.is_int_signed():
        safe = tl.where((b == 0) | (b == -1), 1, b)
    else:
        safe = tl.where(b == 0, 1, b)
    return tl.where(b == 0, 0, a % safe)


@triton.jit
def div_trunc(a, b):
    if a.dtype.is_floating():
        r = _trunc(_div(a, b))
    else:
        r = _int_div_trunc(a, b)
    return r


@triton.jit
def div_floor(a, b):
    if a.dtype.is_floating():
        # torch's (and Python's) floor division: from fmod, so that 1 // 0.1 is 9 (a / b rounds
        # to 10), with the quotient rounded to the nearest integer; b == 0 gives IEEE a / b.
        q0 = _div(a, b)
        mod = a % b                                   # C fmod
        d = _div(a - mod, b)
        d = tl.where((mod != 0) & ((b < 0) != (mod < 0)), d - 1.0, d)
        fl = tl.floor(d)
        fl = tl.where(d - fl > 0.5, fl + 1.0, fl)
        zero = q0 * 0.0       # copysign(0, a / b): q0 is finite here; a literal -0.0 can lose its sign
        r = tl.where(d != 0, fl, zero)
        r = tl.where(b == 0, q0, r)
    else:
        q = _int_div_trunc(a, b)
        r = _int_mod_trunc(a, b)
        if a.dtype.is_int_signed():
            q = tl.where((r != 0) & ((r < 0) != (b < 0)), q - 1, q)
        r = q
    return r


@triton.jit
def remainder(a, b):
    # Python's sign convention: the result has the sign of b
    if a.dtype.is_floating():
        m = a % b                                      # C fmod: exact in the interpreter; on the GPU
        m = tl.where((m != 0) & ((b < 0) != (m < 0)), m + b, m)   # a - trunc(a/b)*b (see fmod)
    else:
        m = _int_mod_trunc(a, b)
        if a.dtype.is_int_signed():
            m = tl.where((m != 0) & ((m < 0) != (b < 0)), m + b, m)
    return m


@triton.jit
def fmod(a, b):
    # C's sign convention: the result has the sign of a. Floats compile to LLVM frem, which the
    # NVPTX backend expands to a - trunc(a / b) * b: exact while |a / b| < 2**24 (float32).
    if a.dtype.is_floating():
        r = a % b
    else:
        r = _int_mod_trunc(a, b)
    return r


@triton.jit
def round_decimals(x, scale):
    # torch.round(x, decimals=d): scale = 10**d for d >= 0 (round(x * scale) / scale), and
    # -10**-d for d < 0 (round(x / 10**-d) * 10**-d)
    up = _div(_rint(x * scale), scale)
    down = _rint(_div(x, _negate(scale))) * _negate(scale)
    return tl.where(scale > 0, up, down)


@triton.jit
def logical_and(a, b):
    return (a != 0) & (b != 0)


@triton.jit
def logical_or(a, b):
    return (a != 0) | (b != 0)


@triton.jit
def logical_xor(a, b):
    return (a != 0) != (b != 0)


@triton.jit
def bitwise_and(a, b):
    return a & b


@triton.jit
def bitwise_or(a, b):
    return a | b


@triton.jit
def bitwise_xor(a, b):
    return a ^ b


@triton.jit
def sigmoid_backward(grad, y):
    return grad * y * (1.0 - y)


@triton.jit
def silu_backward(grad, x):
    s = _div(1.0, 1.0 + tl.exp(_negate(x)))
    return grad * s * (1.0 + x * (1.0 - s))


@triton.jit
def gelu_backward(grad, x):
    cdf = 0.5 * (1.0 + tl.erf(x * 0.70710678118654752440))
    pdf = tl.exp(-0.5 * x * x) * 0.39894228040143267794          # 1 / sqrt(2 pi)
    return grad * (cdf + x * pdf)


@triton.jit
def gelu_tanh_backward(grad, x):
    x2 = x * x
    t = tanh(0.79788456080286535588 * (x + 0.044715 * x2 * x))
    dinner = 0.79788456080286535588 * (1.0 + 3.0 * 0.044715 * x2)
    return grad * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * dinner)


@triton.jit
def erf_backward(grad, x):
    return grad * 1.12837916709551257390 * tl.exp(_negate(x * x))    # 2 / sqrt(pi)


# ------------------------------------------------------------------ ternary FNs
@triton.jit
def where(cond, a, b):
    return tl.where(cond != 0, a, b)


@triton.jit
def clamp(x, lo, hi):
    # min(max(x, lo), hi): lo > hi gives hi, as torch; NaN in x or in a bound gives NaN
    return minimum(maximum(x, lo), hi)


from . import special as _special  # noqa: E402  (the special functions' FNs: their own file)


def _fns_of_arity(n):
    """The vocabulary: every public single-result FN defined above or in kernels/special.py (not
    the helpers starting with ``_``, nor what strided.py lends), by its number of operands. A new
    FN is one definition, nothing to list."""
    # a jitted FN (JITFunction, or InterpretedFunction under TRITON_INTERPRET) wraps its Python
    # function as ``.fn``
    return {name: f for module in (globals(), vars(_special)) for name, f in module.items()
            if not name.startswith("_") and getattr(getattr(f, "fn", None), "__module__", None)
            in (__name__, _special.__name__) and f.fn.__code__.co_argcount == n}


UNARY, BINARY, TERNARY = _fns_of_arity(1), _fns_of_arity(2), _fns_of_arity(3)


# ------------------------------------------------------------------ two-output FNs
@triton.jit
def mul_backward(grad, x, y):
    # both gradients of x * y in one pass over memory: grad, x, y read once
    return grad * y, grad * x


# FNs of three operands returning two results (ternary_2out_kernel)
TERNARY_2OUT = {"mul_backward": mul_backward}
# FNs defined for integer (and bool) compute dtypes only: bitwise operations have no float form
INTEGER_ONLY = {"bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor"}


# ------------------------------------------------------------------ the kernels
@triton.jit
def _operand(ptr, val, idx, mask, shape, strides, KIND: tl.constexpr, COMPUTE: tl.constexpr,
             RANK: tl.constexpr):
    if KIND == 0:
        off = strided_offset(idx, shape, strides, RANK)
        r = convert(tl.load(ptr + off, mask=mask, other=0), COMPUTE)
    else:
        # a scalar argument, given the block's shape so every FN sees block operands
        r = tl.broadcast_to(scalar_value(val, KIND, COMPUTE), idx.shape)
    return r


@triton.jit
def unary_kernel(out_ptr, a_ptr, n, shape, out_strides, a_strides,
                 FN: tl.constexpr, COMPUTE: tl.constexpr, RANK: tl.constexpr, BLOCK: tl.constexpr, WIDE: tl.constexpr):
    idx = block_indices(BLOCK, WIDE)
    mask = idx < n
    a = convert(tl.load(a_ptr + strided_offset(idx, shape, a_strides, RANK), mask=mask, other=0), COMPUTE)
    r = FN(a)
    store_cast(out_ptr + strided_offset(idx, shape, out_strides, RANK), r, mask)


@triton.jit(do_not_specialize=["a_val", "b_val"])
def binary_kernel(out_ptr, a_ptr, a_val, b_ptr, b_val, n, shape, out_strides, a_strides, b_strides,
                  FN: tl.constexpr, A_KIND: tl.constexpr, B_KIND: tl.constexpr,
                  COMPUTE: tl.constexpr, RANK: tl.constexpr, BLOCK: tl.constexpr, WIDE: tl.constexpr):
    idx = block_indices(BLOCK, WIDE)
    mask = idx < n
    a = _operand(a_ptr, a_val, idx, mask, shape, a_strides, A_KIND, COMPUTE, RANK)
    b = _operand(b_ptr, b_val, idx, mask, shape, b_strides, B_KIND, COMPUTE, RANK)
    r = FN(a, b)
    store_cast(out_ptr + strided_offset(idx, shape, out_strides, RANK), r, mask)


@triton.jit(do_not_specialize=["a_val", "b_val", "c_val"])
def ternary_kernel(out_ptr, a_ptr, a_val, b_ptr, b_val, c_ptr, c_val, n, shape,
                   out_strides, a_strides, b_strides, c_strides,
                   FN: tl.constexpr, A_KIND: tl.constexpr, B_KIND: tl.constexpr, C_KIND: tl.constexpr,
                   COMPUTE: tl.constexpr, RANK: tl.constexpr, BLOCK: tl.constexpr, WIDE: tl.constexpr):
    idx = block_indices(BLOCK, WIDE)
    mask = idx < n
    a = _operand(a_ptr, a_val, idx, mask, shape, a_strides, A_KIND, COMPUTE, RANK)
    b = _operand(b_ptr, b_val, idx, mask, shape, b_strides, B_KIND, COMPUTE, RANK)
    c = _operand(c_ptr, c_val, idx, mask, shape, c_strides, C_KIND, COMPUTE, RANK)
    r = FN(a, b, c)
    store_cast(out_ptr + strided_offset(idx, shape, out_strides, RANK), r, mask)


@triton.jit(do_not_specialize=["a_val", "b_val", "c_val"])
def ternary_2out_kernel(out0_ptr, out1_ptr, a_ptr, a_val, b_ptr, b_val, c_ptr, c_val, n, shape,
                        out0_strides, out1_strides, a_strides, b_strides, c_strides,
                        FN: tl.constexpr, A_KIND: tl.constexpr, B_KIND: tl.constexpr,
                        C_KIND: tl.constexpr, COMPUTE: tl.constexpr, RANK: tl.constexpr,
                        BLOCK: tl.constexpr, WIDE: tl.constexpr):
    """ternary_kernel for an FN with two results, each stored to its own output."""
    idx = block_indices(BLOCK, WIDE)
    mask = idx < n
    a = _operand(a_ptr, a_val, idx, mask, shape, a_strides, A_KIND, COMPUTE, RANK)
    b = _operand(b_ptr, b_val, idx, mask, shape, b_strides, B_KIND, COMPUTE, RANK)
    c = _operand(c_ptr, c_val, idx, mask, shape, c_strides, C_KIND, COMPUTE, RANK)
    r0, r1 = FN(a, b, c)
    store_cast(out0_ptr + strided_offset(idx, shape, out0_strides, RANK), r0, mask)
    store_cast(out1_ptr + strided_offset(idx, shape, out1_strides, RANK), r1, mask)
