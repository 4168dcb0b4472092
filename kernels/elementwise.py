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
    # torch's max(x, 0) with x kept on ties: NaN stays NaN, -0.0 stays -0.0
    return tl.where(x < 0, tl.zeros_like(x), x)


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
    # torch's threshold_backward: 0 where x <= 0, else grad (so a NaN x passes it)
    return tl.where(x <= 0, tl.zeros_like(grad), grad)


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
    # float32 through float64: Triton's float32 exp2 is ex2.approx (2 ulp, subnormal results
    # flushed: exp2(-128) gave 0 and ldexp's x * 2**-1.5 was 0.35355335, torch's 0.35355338);
    # libdevice's float64 exp2 rounded once more to float32 is torch's value (exact 2**k included)
    if x.dtype == tl.float32:
        r = tl.exp2(x.to(tl.float64)).to(tl.float32)
    else:
        r = tl.exp2(x)
    return r


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
def _exponent(x):
    """floor(log2(x)) for finite x > 0, subnormals included (scaled into the normal range first)."""
    if x.dtype == tl.float64:
        tiny = x < 2.2250738585072014e-308
        bits = tl.where(tiny, x * 18014398509481984.0, x).to(tl.int64, bitcast=True)     # 2**54
        e = ((bits >> 52) & 0x7FF).to(tl.int32) - tl.where(tiny, 1023 + 54, 1023)
    else:
        tiny = x < 1.1754943508222875e-38
        bits = tl.where(tiny, x * 16777216.0, x).to(tl.int32, bitcast=True)              # 2**24
        e = ((bits >> 23) & 0xFF) - tl.where(tiny, 127 + 24, 127)
    return e


@triton.jit
def _fmod(a, b):
    """C fmod (the sign of a, exact, as torch's): |a| minus the largest |b| 2**k <= it, until below
    |b|. Each subtraction is exact (Sterbenz: the two are within a factor 2), and nothing contracts
    or rounds it, so the GPU and the interpreter agree bit for bit. (LLVM's frem, a - trunc(a/b) b,
    loses the result once a / b rounds: 1.0 % 0.1 gave 0 or -5.6e-17, not 0.09999999999999995.)
    The loop runs about as many times as the quotient has one bits (at most its binary exponent:
    277 for float32's largest over its smallest, 2098 for float64's)."""
    ax = tl.abs(a)
    bx = tl.abs(b)
    valid = (bx > 0) & (ax != float("inf")) & (ax == ax)      # NaN b compares false
    r = tl.where(valid, ax, 0.0)
    bx = tl.where(valid, bx, 1.0)
    active = r >= bx
    eb = _exponent(bx)
    while tl.max(tl.reshape(active.to(tl.int32), [active.numel]), 0) > 0:
        k = tl.where(active, _exponent(tl.where(active, r, 1.0)) - eb, 0)
        k1 = k // 3                                            # 2**k as three normal powers of two
        k2 = (k - k1) // 2
        t = bx * _pow2(k1, a.dtype) * _pow2(k2, a.dtype) * _pow2(k - k1 - k2, a.dtype)
        t = tl.where(t > r, t * 0.5, t)                        # same exponent as r: one halving at most
        r = tl.where(active, r - t, r)
        active = r >= bx
    r = tl.where(valid, r, float("nan"))
    return tl.where(_signbit(a), r * -1.0, r)


@triton.jit
def div_floor(a, b):
    if a.dtype.is_floating():
        # torch's (and Python's) floor division: from fmod, so that 1 // 0.1 is 9 (a / b rounds
        # to 10), with the quotient rounded to the nearest integer; b == 0 gives IEEE a / b.
        q0 = _div(a, b)
        mod = _fmod(a, b)
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
        m = _fmod(a, b)
        m = tl.where((m != 0) & ((b < 0) != (m < 0)), m + b, m)
    else:
        m = _int_mod_trunc(a, b)
        if a.dtype.is_int_signed():
            m = tl.where((m != 0) & ((m < 0) != (b < 0)), m + b, m)
    return m


@triton.jit
def fmod(a, b):
    # C's sign convention: the result has the sign of a
    if a.dtype.is_floating():
        r = _fmod(a, b)
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
    # torch's order, 2 / sqrt(pi) * exp(-x^2) * grad: a huge grad times exp(-inf) = 0 is 0
    return grad * (1.12837916709551257390 * tl.exp(_negate(x * x)))


# ------------------------------------------------------------------ ternary FNs
@triton.jit
def where(cond, a, b):
    return tl.where(cond != 0, a, b)


@triton.jit
def clamp(x, lo, hi):
    # min(max(x, lo), hi): lo > hi gives hi, as torch; NaN in x or in a bound gives NaN
    return minimum(maximum(x, lo), hi)


# ------------------------------------------------------------------ pointwise math (issue 21.2)
# Inverse and hyperbolic trigonometry, and the rest of torch's pointwise library, without
# libdevice: rational approximations (Cephes) and the expm1/log1p FNs above, so that values near
# 0 keep their relative accuracy. Compute dtypes are float32 (16-bit floats included) or float64.
@triton.jit
def _log1p(x):
    """log1p to about an ulp: the series FN log1p below |x| = 1/4; above, log(1 + x) corrected
    for the rounding of 1 + x (x - ((1 + x) - 1), divided by 1 + x)."""
    u = 1.0 + x
    fix = tl.where((u > 0) & (u < float("inf")), _div(x - (u - 1.0), u), 0.0)
    return tl.where(tl.abs(x) < 0.25, log1p(x), tl.log(u) + fix)


@triton.jit
def _atan_pos(a):
    """atan(a) for a >= 0 (inf and NaN too), Cephes' atan / atanf: range reduction to |t| <= 0.66
    (float64: t + t^3 P(t^2) / Q(t^2)) or to |t| <= tan(pi/8) (float32: a degree-4 polynomial)."""
    if a.dtype == tl.float64:
        big = a > 2.41421356237309504880                 # tan(3 pi/8): atan(a) = pi/2 - atan(1/a)
        mid = (a > 0.66) & ~big                          # atan(a) = pi/4 + atan((a - 1) / (a + 1))
        t = tl.where(big, _div(-1.0, a), tl.where(mid, _div(a - 1.0, a + 1.0), a))
        z = t * t
        p = (((-8.750608600031904122785e-1 * z - 1.615753718733365076637e1) * z
              - 7.500855792314704667340e1) * z - 1.228866684490136173410e2) * z - 6.485021904942025371773e1
        q = ((((z + 2.485846490142306297962e1) * z + 1.650270098316988542046e2) * z
              + 4.328810604912902668951e2) * z + 4.853903996359136964868e2) * z + 1.945506571482613964425e2
        r = t + t * _div(z * p, q)
        # pi/2 and pi/4 in two parts (the rounded value and what rounding dropped), as Cephes
        # (each constant added to a tensor: tl.where of two Python floats would make them float32)
        r = tl.where(big, (r + 6.123233995736765886130e-17) + 1.57079632679489661923,
                     tl.where(mid, (r + 3.061616997868382943065e-17) + 0.78539816339744830962, r))
    else:
        big = a > 2.414213562373095
        mid = (a > 0.4142135623730950) & ~big
        t = tl.where(big, _div(-1.0, a), tl.where(mid, _div(a - 1.0, a + 1.0), a))
        z = t * t
        r = (((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z - 3.33329491539e-1) * z * t + t
        r = tl.where(big, r + 1.57079632679489661923, tl.where(mid, r + 0.78539816339744830962, r))
    return r


@triton.jit
def _with_sign_of(r, x):
    """r (>= 0) carrying the sign bit of x (odd functions: f(-0.0) = -0.0)."""
    return tl.where(_signbit(x), _negate(r), r)


@triton.jit
def atan(x):
    return _with_sign_of(_atan_pos(tl.abs(x)), x)


@triton.jit
def atan2(y, x):
    # the angle of (x, y): atan of min(|x|, |y|) / max(|x|, |y|) <= 1, then reflected into its
    # octant; C99's special values (signed zeros, infinities) come out of the same steps
    ax = tl.abs(x)
    ay = tl.abs(y)
    swap = ay > ax
    hi = tl.where(swap, ay, ax)
    lo = tl.where(swap, ax, ay)
    ratio = _div(lo, tl.where(hi == 0, 1.0, hi))             # atan2(+-0, +-0): ratio 0
    ratio = tl.where((ax == float("inf")) & (ay == float("inf")), 1.0, ratio)   # +-pi/4, +-3pi/4
    r = _atan_pos(ratio)
    # pi/2 - r and pi - r, each constant in two parts (float64: the rounding of pi/2 restored)
    r = tl.where(swap, (1.57079632679489661923 - r) + 6.123233995736765886130e-17, r)
    r = tl.where(_signbit(x), (3.14159265358979323846 - r) + 1.2246467991473532e-16, r)
    r = _with_sign_of(r, y)
    return tl.where((x != x) | (y != y), x + y, r)


@triton.jit
def _sqrt_one_minus_square(x):
    """sqrt(1 - x^2) as sqrt((1 - x)(1 + x)): 1 - x is exact near |x| = 1, where 1 - x*x is not."""
    return sqrt((1.0 - x) * (1.0 + x))


@triton.jit
def asin(x):
    # asin(x) = atan2(x, sqrt(1 - x^2)); |x| > 1 gives NaN through the square root
    return atan2(x, _sqrt_one_minus_square(x))


@triton.jit
def acos(x):
    return atan2(_sqrt_one_minus_square(x), x)


@triton.jit
def asinh(x):
    # glibc's forms: log1p keeps the accuracy near 0; past 2**28, 1 + x^2 rounds to x^2
    a = tl.abs(x)
    a2 = a * a
    small = _log1p(a + _div(a2, 1.0 + sqrt(1.0 + a2)))
    mid = tl.log(2.0 * a + _div(1.0, sqrt(a2 + 1.0) + a))
    big = tl.log(a) + 0.69314718055994530942
    r = tl.where(a > 268435456.0, big, tl.where(a > 2.0, mid, small))
    return _with_sign_of(r, x)


@triton.jit
def acosh(x):
    t = x - 1.0                                            # exact for x in [1, 2]
    small = _log1p(t + sqrt(2.0 * t + t * t))
    mid = tl.log(2.0 * x - _div(1.0, x + sqrt(x * x - 1.0)))
    big = tl.log(x) + 0.69314718055994530942
    r = tl.where(x > 268435456.0, big, tl.where(x > 2.0, mid, small))
    return tl.where(x < 1.0, float("nan"), r)


@triton.jit
def atanh(x):
    # atanh(a) = log1p(2a / (1 - a)) / 2; below 1/2 as log1p(2a + 2a^2 / (1 - a)) / 2 (glibc)
    a = tl.abs(x)
    small = 0.5 * _log1p(2.0 * a + _div(2.0 * a * a, 1.0 - a))
    big = 0.5 * _log1p(_div(2.0 * a, 1.0 - a))
    return _with_sign_of(tl.where(a < 0.5, small, big), x)


@triton.jit
def _exp_limit(x):
    """Just below where exp overflows in x's dtype."""
    if x.dtype == tl.float64:
        r = 709.0
    else:
        r = 88.0
    return r


@triton.jit
def _half_exp(a):
    """e^a / 2 for a >= 0 where e^a alone would overflow: 2**(k-1) e^r with a = k ln2 + r (Cody-Waite:
    k ln2_hi exact, |r| <= ln2 / 2), one exp of a small argument and exact scalings, so it overflows
    only where e^a / 2 does. (e^(a/2) / 2 times e^(a/2) doubled exp's error: sinh(710) was 2 ulp off
    on the H200.) NaN stays NaN."""
    # ln 2 in two parts, written inline (a Python float held in a variable becomes a float32
    # constant in Triton): k * hi is exact, |k| <= 1028 (float64) or 130 (float32)
    if a.dtype == tl.float64:
        am = tl.where(a < 712.0, a, 712.0)
        k = tl.floor(am * 1.4426950408889634 + 0.5)
        r = (am - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10
    else:
        am = tl.where(a < 90.0, a, 90.0)
        k = tl.floor(am * 1.4426950408889634 + 0.5)
        r = (am - k * 0.693145751953125) - k * 1.4286068203094172e-06
    k1 = k.to(tl.int32) - 1
    k2 = k1 // 2
    h = tl.exp(r) * _pow2(k2, a.dtype) * _pow2(k1 - k2, a.dtype)
    return tl.where(a == a, h, a)


@triton.jit
def sinh(x):
    # (e^a - e^-a) / 2 = (E + E / (E + 1)) / 2 with E = expm1(a): no cancellation near 0;
    # where e^a would overflow, e^a / 2 (e^-a is below its rounding there)
    a = tl.abs(x)
    e = expm1(a)
    small = 0.5 * (e + _div(e, e + 1.0))
    r = tl.where(a < _exp_limit(a), small, _half_exp(a))
    return _with_sign_of(r, x)


@triton.jit
def cosh(x):
    a = tl.abs(x)
    e = tl.exp(a)
    return tl.where(a < _exp_limit(a), 0.5 * (e + _div(1.0, e)), _half_exp(a))


@triton.jit
def sinc(x):
    # torch's formula: sin(pi x) / (pi x), and 1 at x = 0 and wherever the formula's (pi x)^2 / 6
    # is below rounding (|x| < 1e-20 in both dtypes): a GPU's float32 sin flushes a subnormal
    # argument to 0 (sin.approx.ftz), which made sinc(1e-40) 0 on the first H200 run
    p = x * 3.14159265358979323846
    return tl.where(tl.abs(x) < 1e-20, 1.0, _div(tl.sin(p), p))


@triton.jit
def deg2rad(x):
    return x * 0.017453292519943295769236907684886127134428718885417      # pi / 180


@triton.jit
def rad2deg(x):
    return x * 57.295779513082320876798154814105170332405472466564         # 180 / pi


@triton.jit
def frac(x):
    return x - _trunc(x)


@triton.jit
def logit(x):
    return tl.log(_div(x, 1.0 - x))


@triton.jit
def logit_eps(x, eps):
    # torch: x clamped to [eps, 1 - eps] as x < lo ? lo : (x > hi ? hi : x) (NaN stays NaN)
    hi = 1.0 - eps
    z = tl.where(x < eps, eps, tl.where(x > hi, hi, x))
    return tl.log(_div(z, 1.0 - z))


@triton.jit
def signbit(x):
    if x.dtype.is_floating():
        r = _signbit(x)
    elif x.dtype.is_int_signed():
        r = x < 0
    else:
        r = x != x       # unsigned and bool: never negative
    return r


@triton.jit
def isposinf(x):
    if x.dtype.is_floating():
        r = x == float("inf")
    else:
        r = x != x
    return r


@triton.jit
def isneginf(x):
    if x.dtype.is_floating():
        r = x == float("-inf")
    else:
        r = x != x
    return r


@triton.jit
def nan_to_num_inf(x, posinf, neginf):
    """nan_to_num's first pass (the kernel has three operands: NaN goes in nan_to_num_nan)."""
    if x.dtype.is_floating():
        r = tl.where(x == float("inf"), posinf, tl.where(x == float("-inf"), neginf, x))
    else:
        r = x
    return r


@triton.jit
def nan_to_num_nan(x, nan):
    if x.dtype.is_floating():
        r = tl.where(x != x, nan, x)
    else:
        r = x
    return r


@triton.jit
def _frexp_parts(x):
    """(mantissa in [0.5, 1) with x's sign, exponent) with x = mantissa * 2**exponent, from the
    exponent bits; zero, inf and NaN give (x, 0) as C's frexp. Subnormals are scaled up first."""
    if x.dtype == tl.float64:
        sub = (x.to(tl.int64, bitcast=True) & 0x7FF0000000000000) == 0
        xs = tl.where(sub, x * 18014398509481984.0, x)                     # 2**54
        bits = xs.to(tl.int64, bitcast=True)
        e = ((bits >> 52) & 0x7FF) - 1022 - tl.where(sub, 54, 0)
        m = ((bits & -9218868437227405313) | 0x3FE0000000000000).to(tl.float64, bitcast=True)
    else:
        sub = (x.to(tl.int32, bitcast=True) & 0x7F800000) == 0
        xs = tl.where(sub, x * 16777216.0, x)                              # 2**24
        bits = xs.to(tl.int32, bitcast=True)
        e = ((bits >> 23) & 0xFF) - 126 - tl.where(sub, 24, 0)
        m = ((bits & -2139095041) | 0x3F000000).to(tl.float32, bitcast=True)   # 0x807FFFFF
    special = (x == 0) | (x != x) | (tl.abs(x) == float("inf"))
    return tl.where(special, x, m), tl.where(special, 0, e).to(tl.int32)


@triton.jit
def frexp_mantissa(x):
    m, _ = _frexp_parts(x)
    return m


@triton.jit
def frexp_exponent(x):
    _, e = _frexp_parts(x)
    return e


@triton.jit
def hypot(a, b):
    if a.dtype == tl.float32:
        # in float64 neither square overflows: one rounding at the end
        a64 = a.to(tl.float64)
        b64 = b.to(tl.float64)
        r = tl.sqrt(a64 * a64 + b64 * b64).to(tl.float32)
    else:
        # max * sqrt(1 + (min / max)^2): no overflow or underflow of the squares
        ax = tl.abs(a)
        ay = tl.abs(b)
        hi = tl.where(ax > ay, ax, ay)
        lo = tl.where(ax > ay, ay, ax)
        t = lo / tl.where(hi == 0, 1.0, hi)
        r = hi * tl.sqrt(1.0 + t * t)
    # C99: an infinite side gives inf even with a NaN on the other
    return tl.where((tl.abs(a) == float("inf")) | (tl.abs(b) == float("inf")), float("inf"), r)


@triton.jit
def copysign(a, b):
    # |a| with the sign bit of b, on the bits (so NaN and -0.0 are exact)
    if a.dtype == tl.float64:
        bits = (a.to(tl.int64, bitcast=True) & 0x7FFFFFFFFFFFFFFF) | (b.to(tl.int64, bitcast=True) & (-9223372036854775807 - 1))
        r = bits.to(tl.float64, bitcast=True)
    else:
        bits = (a.to(tl.int32, bitcast=True) & 0x7FFFFFFF) | (b.to(tl.int32, bitcast=True) & (-2147483647 - 1))
        r = bits.to(tl.float32, bitcast=True)
    return r


@triton.jit
def fmax(a, b):
    # NaN only where both are NaN; a tie keeps a (fmax(-0.0, 0.0) is -0.0, as torch's)
    if a.dtype.is_floating():
        r = tl.where((a >= b) | (b != b), a, b)
    else:
        r = tl.maximum(a, b)
    return r


@triton.jit
def fmin(a, b):
    if a.dtype.is_floating():
        r = tl.where((a <= b) | (b != b), a, b)
    else:
        r = tl.minimum(a, b)
    return r


@triton.jit
def heaviside(x, values):
    # torch: x == 0 ? values : x > 0 (so NaN gives 0)
    return tl.where(x == 0, values, (x > 0).to(values.dtype))


@triton.jit
def _pow2(k, F: tl.constexpr):
    """2**k exactly from the exponent bits, for integer tensors k in the normal range of F."""
    if F == tl.float64:
        r = ((k.to(tl.int64) + 1023) << 52).to(tl.float64, bitcast=True)
    else:
        r = ((k.to(tl.int32) + 127) << 23).to(tl.float32, bitcast=True)
    return r


@triton.jit
def ldexp(x, e):
    # x * 2**e. An integral e scales exactly: 2**e as three powers of two in the normal range
    # (e is clamped where the result is 0 or inf anyway), so only the last product rounds;
    # any other e is x * exp2(e), as torch's x * pow(2, e).
    if x.dtype == tl.float64:
        lim_lo = -3066.0
        lim_hi = 3069.0
    else:
        lim_lo = -378.0
        lim_hi = 381.0
    integral = (e == tl.floor(e)) & (tl.abs(e) != float("inf"))
    k = tl.minimum(tl.maximum(tl.where(integral, e, 0.0), lim_lo), lim_hi).to(tl.int32)
    k1 = k // 3                # C division: each part within the normal exponents
    k2 = (k - k1) // 2
    k3 = k - k1 - k2
    exact = x * _pow2(k1, x.dtype) * _pow2(k2, x.dtype) * _pow2(k3, x.dtype)
    return tl.where(integral, exact, x * exp2(e))


@triton.jit
def logaddexp(a, b):
    # max + log1p(exp(-|a - b|)); equal infinities give themselves (inf - inf would be NaN)
    m = tl.where(a > b, a, b)
    r = m + _log1p(tl.exp(_negate(tl.abs(a - b))))
    return tl.where((a == b) & (tl.abs(a) == float("inf")), a, r)


@triton.jit
def logaddexp2(a, b):
    m = tl.where(a > b, a, b)
    r = m + _log1p(tl.exp2(_negate(tl.abs(a - b)))) * 1.44269504088896340736      # 1 / ln 2
    return tl.where((a == b) & (tl.abs(a) == float("inf")), a, r)


@triton.jit
def xlogy(x, y):
    # torch: NaN if y is NaN, else 0 where x == 0 (even for y = 0 or inf), else x log y
    r = tl.where(x == 0, 0.0, x * tl.log(y))
    return tl.where(y != y, y, r)


@triton.jit
def _next_after_bits(bits, a, b, unit, neg_smallest):
    """The bit pattern next to ``bits`` (a's) toward b, in a sign-magnitude format whose ulp is
    ``unit`` in these bits: a step away from 0 adds a unit, a step toward 0 subtracts one; from
    0, the smallest subnormal of b's sign (``unit``, or ``neg_smallest``: it with the sign bit)."""
    away = (b > a) == (a > 0)
    r = tl.where(away, bits + unit, bits - unit)
    return tl.where(a == 0, tl.where(b > 0, unit, neg_smallest), r).to(bits.dtype)


@triton.jit
def _next_after_special(r, a, b):
    """C's nextafter: b itself where a == b, NaN where either is NaN."""
    r = tl.where(a == b, b, r)
    return tl.where((a != a) | (b != b), a + b, r)


@triton.jit
def nextafter(a, b):
    if a.dtype == tl.float64:
        r = _next_after_bits(a.to(tl.int64, bitcast=True), a, b, 1, -9223372036854775807).to(tl.float64, bitcast=True)
    else:
        r = _next_after_bits(a.to(tl.int32, bitcast=True), a, b, 1, -2147483647).to(tl.float32, bitcast=True)
    return _next_after_special(r, a, b)


@triton.jit
def nextafter_bfloat16(a, b):
    # the next bfloat16 value (its operands arrive widened to float32): a bfloat16 is the top
    # half of the float32 with its value, so one bfloat16 ulp is 1 << 16 in those bits
    bits = _next_after_bits(a.to(tl.int32, bitcast=True), a, b, 65536, -2147418112)
    return _next_after_special(bits.to(tl.float32, bitcast=True), a, b)


@triton.jit
def nextafter_float16(a, b):
    # the next float16 value (its operands arrive widened to float32, exactly)
    bits = _next_after_bits(a.to(tl.float16).to(tl.int16, bitcast=True), a, b, 1, -32767)
    return _next_after_special(bits.to(tl.float16, bitcast=True).to(tl.float32), a, b)


@triton.jit
def _gcd(a, b):
    """Euclid's algorithm on |a| and |b|, as torch's calc_gcd (whose abs wraps the most negative
    value: gcd(-128, 0) is -128 in int8). Loops as often as the block's slowest pair needs."""
    if a.dtype.is_int_signed():
        a = tl.abs(a)
        b = tl.abs(b)
    zero = tl.zeros_like(a)
    one = tl.full(a.shape, 1, a.dtype)
    while tl.max(tl.reshape((a != 0).to(tl.int32), [a.numel]), 0) > 0:   # 1-D or 2-D (tiled) blocks
        nonzero = a != 0
        rem = b % tl.where(nonzero, a, one)
        b = tl.where(nonzero, a, b)
        a = tl.where(nonzero, rem, zero)
    return b


@triton.jit
def gcd(a, b):
    return _gcd(a, b)


@triton.jit
def lcm(a, b):
    # torch: g == 0 ? 0 : abs(a / g * b), where C++ computes int8/int16/uint8 in int
    g = _gcd(a, b)
    if a.dtype.primitive_bitwidth < 32:
        a = a.to(tl.int32)
        b = b.to(tl.int32)
        g = g.to(tl.int32)
    zero = tl.zeros_like(g)
    r = (a // tl.where(g == 0, tl.full(g.shape, 1, g.dtype), g)) * b
    if r.dtype.is_int_signed():
        r = tl.abs(r)
    return tl.where(g == 0, zero, r)


@triton.jit
def bitwise_left_shift(a, b):
    # torch: 0 for a shift below 0 or of at least the width (undefined in C, and in LLVM)
    bad = (b < 0) | (b >= a.dtype.primitive_bitwidth)
    zero = tl.zeros_like(a)
    return tl.where(bad, zero, a << tl.where(bad, zero, b))


@triton.jit
def bitwise_right_shift(a, b):
    # torch: such a shift gives the sign (a >> (width - 1)) for signed types, 0 for unsigned
    width: tl.constexpr = a.dtype.primitive_bitwidth
    bad = (b < 0) | (b >= width)
    if a.dtype.is_int_signed():
        r = a >> tl.where(bad, tl.full(b.shape, width - 1, b.dtype), b)
    else:
        zero = tl.zeros_like(a)
        r = tl.where(bad, zero, a >> tl.where(bad, zero, b))
    return r


@triton.jit
def lerp(a, b, w):
    # torch's two-sided form: exact at w = 0 and at w = 1
    d = b - a
    return tl.where(tl.abs(w) < 0.5, a + w * d, b - d * (1.0 - w))


@triton.jit
def addcmul(x, a, b):
    # torch's addcmul(x, t1, t2, value=v) is x + (v * t1) * t2: the launcher passes v * t1 as a
    return x + a * b


@triton.jit
def addcdiv(x, a, b):
    # x + (v * t1) / t2, a = v * t1 as for addcmul
    return x + _div(a, b)


# ------------------------------------------------------------------ activations (issue 25.1)
# torch.nn's activations and their fused backwards, written with torch's comparisons
# (aten/src/ATen/native/cpu/Activation.cpp) so that the kinks, -0.0 and NaN come out as torch's
# kernels give them. A scalar parameter (alpha, lambd, beta ...) is an operand the launcher
# passes as a kernel scalar.
@triton.jit
def elu(x, alpha):
    # x <= 0 ? alpha * (e^x - 1) : x (NaN takes the x branch)
    return tl.where(x <= 0, alpha * expm1(x), x)


@triton.jit
def elu_backward(grad, x, alpha):
    return tl.where(x <= 0, grad * alpha * tl.exp(x), grad)


@triton.jit
def celu(x, alpha):
    # torch's celu is elu with input_scale 1 / alpha: alpha * (e^(x / alpha) - 1) for x <= 0
    inv = _div(1.0, alpha)
    return tl.where(x <= 0, alpha * expm1(x * inv), x)


@triton.jit
def celu_backward(grad, x, alpha):
    inv = _div(1.0, alpha)
    return tl.where(x <= 0, grad * inv * alpha * tl.exp(x * inv), grad)


@triton.jit
def selu(x):
    # scale * elu(x, alpha) with SELU's constants: negcoef = alpha * scale, poscoef = scale
    return tl.where(x <= 0, (1.6732632423543772848 * 1.0507009873554804934) * expm1(x),
                    1.0507009873554804934 * x)


@triton.jit
def selu_backward(grad, x):
    return tl.where(x <= 0, grad * (1.6732632423543772848 * 1.0507009873554804934) * tl.exp(x),
                    grad * 1.0507009873554804934)


@triton.jit
def _inside(x, lambd):
    # -lambd <= x <= lambd (false for NaN)
    return (x >= _negate(lambd)) & (x <= lambd)


@triton.jit
def hardshrink(x, lambd):
    return tl.where(_inside(x, lambd), 0.0, x)


@triton.jit
def hardshrink_backward(grad, x, lambd):
    # torch's float kernel: 0 inside [-lambd, lambd], grad elsewhere (NaN passes it)
    return tl.where(_inside(x, lambd), 0.0, grad)


@triton.jit
def softshrink(x, lambd):
    # x * 0 in the middle keeps -0.0 and NaN as torch's kernel does
    return tl.where(x > lambd, x - lambd, tl.where(x < _negate(lambd), x + lambd, x * 0.0))


@triton.jit
def softshrink_backward(grad, x, lambd):
    return tl.where(_inside(x, lambd), 0.0, grad)


@triton.jit
def hardsigmoid(x):
    # min(max(x + 3, 0), 6) / 6 with NaN kept
    r = x + 3.0
    r = tl.where(r < 0, 0.0, r)
    r = tl.where(r > 6, 6.0, r)
    return _div(r, tl.full(r.shape, 6.0, r.dtype))


@triton.jit
def hardsigmoid_backward(grad, x):
    # torch multiplies by its float constant 1.0f / 6.0f, in every dtype (float64 too)
    return tl.where((x > -3.0) & (x < 3.0), grad * 0.16666667163372039795, 0.0)


@triton.jit
def hardswish(x):
    r = x + 3.0
    r = tl.where(r < 0, 0.0, r)
    r = tl.where(r > 6, 6.0, r)
    return _div(x * r, tl.full(r.shape, 6.0, r.dtype))


@triton.jit
def hardswish_backward(grad, x):
    # torch: 0 for x <= -3, grad (x / 3 + 1/2) for -3 < x < 3, grad from 3 on (and for NaN)
    mid = grad * (_div(x, tl.full(x.shape, 3.0, x.dtype)) + 0.5)
    return tl.where(x <= -3.0, 0.0, tl.where(x < 3.0, mid, grad))


@triton.jit
def log_sigmoid(x):
    # min(x, 0) - log1p(e^-|x|): no exp overflows; NaN stays NaN
    return tl.where(x > 0, 0.0, x) - _log1p(tl.exp(_negate(tl.abs(x))))


@triton.jit
def log_sigmoid_backward(grad, x):
    z = tl.exp(_negate(tl.abs(x)))
    q = _div(z, 1.0 + z)
    return grad * tl.where(x < 0, 1.0 - q, q)


@triton.jit
def _tanh_softplus(x):
    return tanh(_log1p(tl.exp(x)))


@triton.jit
def mish(x):
    return x * _tanh_softplus(x)


@triton.jit
def mish_backward(grad, x):
    s = sigmoid(x)
    t = _tanh_softplus(x)
    return grad * (t + x * s * (1.0 - t * t))


@triton.jit
def softplus(x, beta, threshold):
    # linear above the threshold (of x * beta), log1p(e^(x beta)) / beta below
    xb = x * beta
    return tl.where(xb > threshold, x, _div(_log1p(tl.exp(xb)), beta))


@triton.jit
def softplus_backward_scaled(grad, xb, threshold):
    # softplus' backward given xb = x * beta (the launcher multiplies first when beta != 1)
    z = tl.exp(xb)
    return tl.where(xb > threshold, grad, _div(grad * z, z + 1.0))


@triton.jit
def threshold(x, th, value):
    return tl.where(x <= th, value, x)


@triton.jit
def threshold_backward(grad, x, th):
    return tl.where(x <= th, tl.zeros_like(grad), grad)


@triton.jit
def glu_halves(a, b):
    return a * sigmoid(b)


@triton.jit
def glu_grad_first(grad, b):
    return grad * sigmoid(b)


@triton.jit
def glu_grad_second(grad, a, b):
    s = sigmoid(b)
    return (1.0 - s) * s * a * grad


@triton.jit
def leaky_relu(x, slope):
    return tl.where(x > 0, x, x * slope)


@triton.jit
def leaky_relu_backward(grad, x, slope):
    return tl.where(x > 0, grad, grad * slope)


@triton.jit
def prelu(x, w):
    return tl.where(x > 0, x, w * x)


@triton.jit
def prelu_input_backward(grad, x, w):
    return tl.where(x > 0, grad, w * grad)


@triton.jit
def prelu_weight_backward(grad, x):
    return tl.where(x > 0, 0.0, x * grad)


@triton.jit
def rrelu_with_noise(x, noise):
    # training mode: a random slope (noise, drawn in [lower, upper]) where x <= 0
    return tl.where(x <= 0, x * noise, x)


@triton.jit
def rrelu_with_noise_backward(grad, x, noise):
    return tl.where(x <= 0, grad * noise, grad)



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
INTEGER_ONLY = {"bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "lcm", "bitwise_left_shift",
                "bitwise_right_shift"}


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
