"""Elementwise kernels: ONE generic kernel per arity (unary, binary, ternary) applying a small
``@triton.jit`` function ``FN`` passed as a ``tl.constexpr`` argument.

Every operand is either a tensor (a pointer plus strides broadcast to the output's shape; stride 0
on broadcast dims) or a scalar kernel argument. Each loaded value is cast explicitly to the
compute dtype ``COMPUTE`` before ``FN`` sees it (no reliance on Triton's implicit promotion), and
the result is cast to the output's element type on the way out (bool means != 0).

The FN functions below are the whole op vocabulary; ``UNARY``, ``BINARY`` and ``TERNARY`` name
them for the launcher.
"""
import triton
import triton.language as tl

from .strided import convert, scalar_value, store_cast, strided_offset

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
    while tl.max(e, 0) > 0:
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


# ------------------------------------------------------------------ ternary FNs
@triton.jit
def where(cond, a, b):
    return tl.where(cond != 0, a, b)


UNARY = {f.__name__: f for f in (identity, neg, exp, log, sin, cos, tanh, relu, sqrt, abs, sigmoid)}
BINARY = {f.__name__: f for f in (add, sub, mul, div, pow, maximum, minimum, eq, ne, lt, le, gt, ge,
                                  tanh_backward, relu_backward)}
TERNARY = {"where": where}


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
                 FN: tl.constexpr, COMPUTE: tl.constexpr, RANK: tl.constexpr, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    a = convert(tl.load(a_ptr + strided_offset(idx, shape, a_strides, RANK), mask=mask, other=0), COMPUTE)
    r = FN(a)
    store_cast(out_ptr + strided_offset(idx, shape, out_strides, RANK), r, mask)


@triton.jit(do_not_specialize=["a_val", "b_val"])
def binary_kernel(out_ptr, a_ptr, a_val, b_ptr, b_val, n, shape, out_strides, a_strides, b_strides,
                  FN: tl.constexpr, A_KIND: tl.constexpr, B_KIND: tl.constexpr,
                  COMPUTE: tl.constexpr, RANK: tl.constexpr, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    a = _operand(a_ptr, a_val, idx, mask, shape, a_strides, A_KIND, COMPUTE, RANK)
    b = _operand(b_ptr, b_val, idx, mask, shape, b_strides, B_KIND, COMPUTE, RANK)
    r = FN(a, b)
    store_cast(out_ptr + strided_offset(idx, shape, out_strides, RANK), r, mask)


@triton.jit(do_not_specialize=["a_val", "b_val", "c_val"])
def ternary_kernel(out_ptr, a_ptr, a_val, b_ptr, b_val, c_ptr, c_val, n, shape,
                   out_strides, a_strides, b_strides, c_strides,
                   FN: tl.constexpr, A_KIND: tl.constexpr, B_KIND: tl.constexpr, C_KIND: tl.constexpr,
                   COMPUTE: tl.constexpr, RANK: tl.constexpr, BLOCK: tl.constexpr):
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    a = _operand(a_ptr, a_val, idx, mask, shape, a_strides, A_KIND, COMPUTE, RANK)
    b = _operand(b_ptr, b_val, idx, mask, shape, b_strides, B_KIND, COMPUTE, RANK)
    c = _operand(c_ptr, c_val, idx, mask, shape, c_strides, C_KIND, COMPUTE, RANK)
    r = FN(a, b, c)
    store_cast(out_ptr + strided_offset(idx, shape, out_strides, RANK), r, mask)
