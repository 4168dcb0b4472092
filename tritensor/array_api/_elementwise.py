"""The standard's element-wise functions: each a thin adapter over tritensor's op of the same
meaning. Binary functions take Python scalars for either operand and promote 0-d arrays as any
other array (the standard's rule; torch lets a 0-d tensor of the same kind yield)."""
from __future__ import annotations

import tritensor as tt

from ._helpers import ensure_array, promote_pair, scalar_fits


def _unary(fn, name):
    def f(x, /):
        return fn(ensure_array(x))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"The standard's ``{name}``: tritensor's ``{fn.__name__}``, element-wise."
    return f


# tt's functions that take a Python scalar as their second operand with the standard's result
# (the array's dtype where the scalar's kind fits it): they get it as it is, with no 0-d array made
_TAKES_A_SCALAR = {"add", "subtract", "multiply", "divide", "equal", "not_equal", "less", "less_equal", "greater",
                   "greater_equal", "pow", "copysign", "bitwise_and", "bitwise_or", "bitwise_xor",
                   "bitwise_left_shift", "bitwise_right_shift"}


# ... and ``scalar op array`` by the Tensor's reflected operator, or the mirrored comparison
_SCALAR_FIRST = {
    "add": tt.add, "multiply": tt.mul, "equal": tt.eq, "not_equal": tt.ne, "bitwise_and": tt.bitwise_and,
    "bitwise_or": tt.bitwise_or, "bitwise_xor": tt.bitwise_xor, "less": tt.gt, "less_equal": tt.ge,
    "greater": tt.lt, "greater_equal": tt.le, "subtract": tt.Tensor.__rsub__, "divide": tt.Tensor.__rtruediv__,
    "pow": tt.Tensor.__rpow__, "bitwise_left_shift": tt.Tensor.__rlshift__,
    "bitwise_right_shift": tt.Tensor.__rrshift__,
}


def _binary(fn, name):
    takes_a_scalar = name in _TAKES_A_SCALAR
    scalar_first = _SCALAR_FIRST.get(name)

    def f(x1, x2, /):
        if takes_a_scalar and isinstance(x1, tt.Tensor) and scalar_fits(x2, x1.dtype):
            return fn(x1, x2)
        if scalar_first is not None and isinstance(x2, tt.Tensor) and scalar_fits(x1, x2.dtype):
            return scalar_first(x2, x1)
        return fn(*promote_pair(x1, x2))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"The standard's ``{name}``: tritensor's ``{fn.__name__}`` of the promoted operands."
    return f


_UNARY = {
    "abs": tt.abs, "acos": tt.acos, "acosh": tt.acosh, "asin": tt.asin, "asinh": tt.asinh, "atan": tt.atan,
    "atanh": tt.atanh, "bitwise_invert": tt.bitwise_not, "ceil": tt.ceil, "cos": tt.cos, "cosh": tt.cosh,
    "exp": tt.exp, "expm1": tt.expm1, "floor": tt.floor, "isfinite": tt.isfinite, "isinf": tt.isinf,
    "isnan": tt.isnan, "log": tt.log, "log1p": tt.log1p, "log2": tt.log2, "log10": tt.log10,
    "logical_not": tt.logical_not, "negative": tt.negative, "positive": tt.positive, "round": tt.round,
    "signbit": tt.signbit, "sin": tt.sin, "sinh": tt.sinh, "square": tt.square, "sqrt": tt.sqrt, "tan": tt.tan,
    "tanh": tt.tanh, "trunc": tt.trunc,
}
_BINARY = {
    "add": tt.add, "atan2": tt.atan2, "bitwise_and": tt.bitwise_and, "bitwise_left_shift": tt.bitwise_left_shift,
    "bitwise_or": tt.bitwise_or, "bitwise_right_shift": tt.bitwise_right_shift, "bitwise_xor": tt.bitwise_xor,
    "copysign": tt.copysign, "divide": tt.divide, "equal": tt.eq,
    "greater": tt.gt, "greater_equal": tt.ge, "hypot": tt.hypot, "less": tt.lt, "less_equal": tt.le,
    "logaddexp": tt.logaddexp, "logical_and": tt.logical_and, "logical_or": tt.logical_or,
    "logical_xor": tt.logical_xor, "maximum": tt.maximum, "minimum": tt.minimum, "multiply": tt.mul,
    "nextafter": tt.nextafter, "not_equal": tt.ne, "pow": tt.pow,
    "subtract": tt.sub,
}
globals().update({name: _unary(fn, name) for name, fn in _UNARY.items()})
globals().update({name: _binary(fn, name) for name, fn in _BINARY.items()})


def sign(x, /):
    """-1, 0 or 1 by the sign of x; NaN stays NaN (the standard's special case; torch gives 0)."""
    x = ensure_array(x)
    s = tt.sign(x)
    return tt.where(tt.isnan(x), x, s) if x.dtype.is_floating_point else s


def floor_divide(x1, x2, /):
    """The quotient rounded down. Floats: where an operand is infinite, floor(x1 / x2) (the
    standard's special cases: inf // 2 is inf, 1 // -inf is -0; torch's floor_divide gives NaN, -1)."""
    x1, x2 = promote_pair(x1, x2)
    out = tt.floor_divide(x1, x2)
    if out.dtype.is_floating_point:
        out = tt.where(tt.isinf(x1) | tt.isinf(x2), tt.floor(x1 / x2), out)
    return out


def remainder(x1, x2, /):
    """x1 - floor_divide(x1, x2) * x2, with x2's sign. Floats: a zero result takes x2's sign too
    (the standard's special cases: -0 % 2 is +0, +0 % -2 is -0; torch keeps x1's zero)."""
    x1, x2 = promote_pair(x1, x2)
    out = tt.remainder(x1, x2)
    if out.dtype.is_floating_point:
        out = tt.where(out == 0, tt.copysign(tt.zeros_like(out), x2), out)
    return out


def reciprocal(x, /):
    """1 / x (a float result for an integer x, as divide)."""
    return tt.reciprocal(ensure_array(x))


def conj(x, /):
    """The complex conjugate: a real array is its own (a new array)."""
    return ensure_array(x).clone()


def real(x, /):
    """The real part: a real array's own values (a new array)."""
    return ensure_array(x).clone()


def imag(x, /):
    """The imaginary part: zeros for a real array."""
    return tt.zeros_like(ensure_array(x))


def _clip_bound(x, bound, clamp_to):
    if bound is None or isinstance(bound, tt.Tensor):
        return bound
    if x.dtype._kind == 1 and not isinstance(bound, bool) and isinstance(bound, int):
        info = tt.iinfo(x.dtype)          # a bound past the dtype's range clips nothing on that side
        return min(max(bound, info.min), info.max)
    return bound


def clip(x, /, min=None, max=None):
    """x clamped to [min, max] (scalars or arrays that broadcast with x); the result keeps x's dtype."""
    x = ensure_array(x)
    lo, hi = _clip_bound(x, min, "min"), _clip_bound(x, max, "max")
    if lo is None and hi is None:
        return x.clone()
    if isinstance(lo, tt.Tensor) or isinstance(hi, tt.Tensor):
        out = x
        if lo is not None:
            out = tt.maximum(*promote_pair(out, lo))
        if hi is not None:
            out = tt.minimum(*promote_pair(out, hi))
        out = tt.where(tt.isnan(x), x, out) if x.dtype.is_floating_point else out
        return out.to(x.dtype) if out.dtype is not x.dtype else out
    return tt.clamp(x, lo, hi)


__all__ = sorted(list(_UNARY) + list(_BINARY) + ["floor_divide", "remainder", "sign", "reciprocal", "conj", "real", "imag", "clip"])
