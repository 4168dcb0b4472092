"""The rest of torch's pointwise library (issue 21.2): inverse and hyperbolic trigonometry (with
the ``arc*`` aliases), atan2, hypot, sinc, deg2rad/rad2deg, logit, logaddexp/logaddexp2, xlogy,
copysign, fmax/fmin, frac, heaviside, ldexp, frexp, nan_to_num, float_power, sgn, signbit,
isposinf/isneginf/isreal, nextafter, gcd/lcm, the bit shifts, lerp, addcmul/addcdiv, positive,
rsub and fill: each a table entry (an FN of kernels/elementwise.py, a NumPy reference in
backends/numpy_ref.py) or a composite of entries, with its public variants declared under it.

Backward rules are written in tritensor ops (so any order differentiates) after torch's
derivatives.yaml; the nodes carry torch's names (AsinBackward0, Atan2Backward0, LerpBackward0/1,
XlogyBackward0/1/2 ...). Integer and bool results record no gradient; heaviside records torch's
``NotImplemented`` node. One deliberate difference: ldexp's gradient for x is g * 2**e for every
exponent (torch's pow(2, e) in integers gives 0 for a negative integer e). ldexp scales exactly (the
table entry) a floating input by an integer exponent only, as torch 2.13; a floating exponent or an
integer input is input * 2**other in the result dtype (2**other over/underflows first), as torch's.
"""
from __future__ import annotations

import math

from .. import dtypes as _dt
from ..autograd.composite import named_composite
from ..autograd.grad_mode import is_grad_enabled
from ..backends import numpy_ref
from ..backends import triton as tb
from ..backends.base import backend_for
from ..tensor import Tensor
from ._checks import check_tensor
from ._return_types import return_types
from ._scalars import as_number
from .copy import _overwrite_launch, check_scalar_fits, to_dtype
from .creation import ones_like, zeros_like
from .dispatch import dispatch, empty
from .elementwise import (
    _binary, _device_of, _elementwise, _needed, _not_implemented, _zeros, add, broadcast_shapes, compare_rule, cos,
    dispatch_inplace, div, eq, exp, float_rule, ge, gt, le, lt, mul, ne, neg, pow, pow_, same_type_rule, sin, sub,
    where,
)
from .pointwise import exp2, isfinite, isnan, logical_and, logical_or, rsqrt
from .surface import declare, unary, write_out
from .table import DIAGONAL, FROM_BACKWARD, Meta, op

_LN2 = math.log(2.0)


# --------------------------------------------------------------------------- rules
def _float_only_rule(kernel):
    """same_type_rule for ops torch defines for floating dtypes only; its dispatch error names
    the kernel on each device ("hypot_cpu" / "hypot_cuda")."""
    def rule(*args, **_):
        meta = same_type_rule(*args)
        if not meta.dtype.is_floating_point:
            raise _not_implemented(kernel, meta.dtype, _device_of(*args))
        return meta
    return rule


def _integer_only_rule(kernel):
    """same_type_rule for ops torch defines for integers only (gcd, lcm, the shifts)."""
    def rule(*args, **_):
        meta = same_type_rule(*args)
        if meta.dtype.is_floating_point or meta.dtype is _dt.bool_:
            raise _not_implemented(kernel, meta.dtype, _device_of(*args))
        return meta
    return rule


def _nextafter_rule(a, b, **_):
    """nextafter steps in the storage dtype: float16/bfloat16 compute as themselves (their FNs
    take the values widened to float32 and step by one 16-bit ulp)."""
    meta = _float_only_rule("nextafter")(a, b)
    return Meta(meta.shape, meta.dtype, meta.dtype)


def _heaviside_rule(x, values, **_):
    if x.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return same_type_rule(x, values)


def _lerp_rule(x, end, weight, **_):
    """torch's lerp: input and end of one dtype (a weight tensor too, unless 0-d), floating."""
    if end.dtype is not x.dtype:
        raise RuntimeError(f"expected dtype {_CPP[x.dtype.name]} for `end` but got dtype {_CPP[end.dtype.name]}")
    if isinstance(weight, Tensor) and weight.dim() and weight.dtype is not x.dtype:
        raise RuntimeError(f"expected dtype {_CPP[x.dtype.name]} for `weight` but got dtype "
                           f"{_CPP[weight.dtype.name]}")
    if not x.dtype.is_floating_point:
        kernel = "lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar"
        raise NotImplementedError(f'"{_backend_name(x, kernel, "lerp_cuda")}" not implemented for '
                                  f"'{_dt.type_name(x.dtype)}'")
    shape = broadcast_shapes(*(a.shape for a in (x, end, weight) if isinstance(a, Tensor)))
    return Meta(shape, x.dtype, _dt.compute_dtype(x.dtype))


# torch's dtype names in its lerp messages (c10's ScalarType printed as a C++ type)
_CPP = _dt.CPP_NAMES


def _backend_name(x, cpu, cuda):
    return backend_for(x.device).torch_name(cpu, cuda)


def _addc_rule(kernel):
    def rule(x, t1, t2, **_):
        meta = same_type_rule(x, t1, t2)
        if meta.dtype is _dt.bool_:
            raise NotImplementedError(f'"{_backend_name(x, kernel, kernel.replace("cpu_out", "cuda"))}" not '
                                      "implemented for 'Bool'")
        return meta
    return rule


def _frexp_rule(kind):
    def rule(x, **_):
        if not x.dtype.is_floating_point:
            raise RuntimeError("torch.frexp() only supports floating-point dtypes")
        compute = _dt.compute_dtype(x.dtype)
        return Meta(tuple(x.shape), x.dtype if kind == "mantissa" else _dt.int32, compute)
    return rule


def _fill_rule(x, value, **_):
    compute = _dt.compute_dtype(value.dtype if isinstance(value, Tensor) else x.dtype)
    return Meta(tuple(x.shape), x.dtype, compute)


# --------------------------------------------------------------------------- node names
def _by_tensor_other(base):
    """torch's overloads: Tensor-Tensor 0, Tensor-Scalar 1 (CopysignBackward0/1)."""
    def name(args, attrs):
        return f"{base}{0 if isinstance(args[1], Tensor) else 1}"
    return name


def _xlogy_node(args, attrs):
    """xlogy.Tensor 0, xlogy.Scalar_Self 1, xlogy.Scalar_Other 2."""
    x, y = args
    return "XlogyBackward" + ("0" if isinstance(x, Tensor) and isinstance(y, Tensor) else
                              "1" if isinstance(y, Tensor) else "2")


# --------------------------------------------------------------------------- backward rules
def _square(x):
    return mul(x, x)


def _sinc_backward(ctx, g):
    # torch: (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 where x == 0
    x = ctx.x
    x_pi = mul(x, math.pi)
    x2_pi = mul(_square(x), math.pi)
    out = div(mul(g, sub(mul(x_pi, cos(x_pi)), sin(x_pi))), x2_pi)
    return where(eq(x2_pi, 0.0), 0.0, out)


def _logit_backward(ctx, g):
    # torch: g / (x (1 - x)); outside [0, 1] NaN, or with eps outside [eps, 1 - eps] 0. Without a
    # graph (its logit_backward kernel) g * inf at x = 0 and x = 1; with one (create_graph, its
    # infinitely_differentiable_logit_backward) not, as a g * inf branch would make every second
    # derivative NaN (0 * inf through where's unselected side)
    x, eps = ctx.x, ctx.eps
    out = div(g, mul(x, sub(1, x)))
    if not is_grad_enabled():
        out = where(logical_or(eq(x, 0), eq(x, 1)), mul(g, float("inf")), out)
    if eps is None or eps < 0:
        return where(logical_or(lt(x, 0), gt(x, 1)), float("nan"), out)
    return where(logical_or(lt(x, eps), gt(x, 1 - eps)), 0.0, out)


def _atan2_backward(ctx, g):
    y, x = ctx.x, ctx.y          # atan2(input, other): input is the ordinate
    denominator = add(_square(y), _square(x))
    recip = where(eq(denominator, 0), 0.0, div(1, denominator))      # torch: 0 at the origin
    return _needed(ctx, lambda: mul(mul(g, x), recip), lambda: mul(mul(g, neg(y)), recip))


def _copysign_backward(ctx, g):
    # torch: g * (result / self), 0 where self == 0; the sign source gets zeros
    x, out = ctx.x, ctx.out
    ratio = where(eq(x, 0), 0.0, div(out, x))
    return _needed(ctx, lambda: mul(g, ratio), lambda: zeros_like(ctx.y))


def _fmax_fmin_backward(wins):
    # torch: a gets g where a wins or b is NaN; b gets the rest
    def backward(ctx, g):
        a_wins = logical_or(wins(ctx.x, ctx.y), isnan(ctx.y))
        return _needed(ctx, lambda: where(a_wins, g, 0.0), lambda: where(a_wins, 0.0, g))
    return backward


def _heaviside_backward(ctx, g):
    raise RuntimeError("derivative for aten::heaviside is not implemented")


def _ldexp_backward(ctx, g):
    # d/dx x 2^e = 2^e (exactly: ldexp of g), d/de = x 2^e ln 2 = out ln 2
    return _needed(ctx, lambda: ldexp(g, ctx.y), lambda: mul(mul(g, ctx.out), _LN2))


def _logaddexp_backward(base):
    def grow(t):
        return exp(t) if base is None else pow(2, t)

    def backward(ctx, g):
        a, b = ctx.x, ctx.y
        return _needed(ctx, lambda: div(g, add(grow(sub(b, a)), 1)), lambda: div(g, add(grow(sub(a, b)), 1)))
    return backward


def _xlogy_backward(ctx, g):
    x, y = ctx.x, ctx.y

    def grad_x():      # xlogy(g, y), 0 where x == 0 and y <= 0
        gx = xlogy(g, y)
        if isinstance(y, Tensor):
            return where(logical_and(eq(x, 0), le(y, 0)), 0.0, gx)
        return where(eq(x, 0), 0.0, gx) if y <= 0 else gx
    return _needed(ctx, grad_x, lambda: div(mul(g, x), y))


# Saved tensors are unpacked only for the gradients that are needed (as torch's nodes do): an
# operand that does not require grad may be modified in place after the op (the optimizers'
# differentiable steps update their state this way) without failing the version check.
def _lerp_backward(ctx, g):
    w = ctx.weight
    keep = sub(1, w) if isinstance(w, Tensor) else 1 - w
    return _needed(ctx, lambda: mul(g, keep), lambda: mul(g, w), lambda: mul(g, sub(ctx.end, ctx.x)))


def _addcmul_backward(ctx, g):
    value = ctx.value
    return _needed(ctx, lambda: g, lambda: mul(g, mul(ctx.tensor2, value)),
                   lambda: mul(g, mul(ctx.tensor1, value)))


def _addcdiv_backward(ctx, g):
    value = ctx.value
    return _needed(ctx, lambda: g, lambda: mul(g, div(value, ctx.tensor2)),
                   lambda: neg(mul(g, div(mul(ctx.tensor1, value), mul(ctx.tensor2, ctx.tensor2)))))


def _fill_backward(ctx, g):
    # the input's values are all replaced: zeros; a tensor value gets the sum of the gradient
    return _needed(ctx, lambda: zeros_like(g), lambda: g.sum())


# --------------------------------------------------------------------------- launchers
def _logit_launch(out, x, *, compute, eps=None):
    if eps is None or eps < 0:
        tb.elementwise("logit", out, [x], compute)
    else:
        tb.elementwise("logit_eps", out, [x, float(eps)], compute)


def _nan_to_num_launch(out, x, *, compute, nan, posinf, neginf):
    # the kernels have at most three operands: the infinities in one pass, NaN in a second
    tb.elementwise("nan_to_num_inf", out, [x, posinf, neginf], compute)
    tb.elementwise("nan_to_num_nan", out, [out, nan], compute)


def _nextafter_launch(out, a, b, *, compute):
    fn = {"float16": "nextafter_float16", "bfloat16": "nextafter_bfloat16"}.get(compute, "nextafter")
    tb.elementwise(fn, out, [a, b], compute)


def _addc_launch(fn):
    def launch(out, x, t1, t2, *, compute, value=1):
        if value != 1:
            # torch computes x + (value * t1) * t2 (or / t2): value * t1 first, in the compute dtype
            scaled = empty(t1.shape, getattr(_dt, compute), t1.device)      # (compute: a dtype name)
            tb.elementwise("mul", scaled, [t1, value], compute)
            t1 = scaled
        tb.elementwise(fn, out, [x, t1, t2], compute)
    return launch


def _fill_launch(out, x, value, *, compute):
    _overwrite_launch(out, x, value, compute=compute)


# --------------------------------------------------------------------------- entries
def _unary_float(name, backward, saves=("x",), **fields):
    return _elementwise(name, ("x",), float_rule, backward, saves=saves, **fields)


ACOS = _unary_float("acos", lambda ctx, g: neg(mul(g, rsqrt(sub(1, _square(ctx.x))))))
ASIN = _unary_float("asin", lambda ctx, g: mul(g, rsqrt(sub(1, _square(ctx.x)))))
ATAN = _unary_float("atan", lambda ctx, g: div(g, add(_square(ctx.x), 1)))
ASINH = _unary_float("asinh", lambda ctx, g: mul(g, rsqrt(add(_square(ctx.x), 1))))
ACOSH = _unary_float("acosh", lambda ctx, g: mul(g, rsqrt(sub(_square(ctx.x), 1))))
ATANH = _unary_float("atanh", lambda ctx, g: div(g, sub(1, _square(ctx.x))))
SINH = _unary_float("sinh", lambda ctx, g: mul(g, cosh(ctx.x)))
COSH = _unary_float("cosh", lambda ctx, g: mul(g, sinh(ctx.x)))
SINC = _unary_float("sinc", _sinc_backward)
DEG2RAD = _unary_float("deg2rad", lambda ctx, g: mul(g, math.pi / 180), saves=(), grad_name="Deg2RadBackward0")
RAD2DEG = _unary_float("rad2deg", lambda ctx, g: mul(g, 180 / math.pi), saves=(), grad_name="Rad2DegBackward0")
FRAC = _elementwise("frac", ("x",), _float_only_rule("frac"), lambda ctx, g: g)
LOGIT = op("logit", ("x",), jvp=DIAGONAL, rule=float_rule, layout="iterator", reference=numpy_ref.logit, kernel=_logit_launch,
           backward=_logit_backward, saves=("x",))
SGN = _elementwise("sgn", ("x",), same_type_rule, _zeros, fn="sign")
SIGNBIT = _elementwise("signbit", ("x",), compare_rule, differentiable=False)
ISPOSINF = _elementwise("isposinf", ("x",), compare_rule, differentiable=False)
ISNEGINF = _elementwise("isneginf", ("x",), compare_rule, differentiable=False)
NAN_TO_NUM = op("nan_to_num", ("x",), jvp=DIAGONAL, rule=same_type_rule, layout="iterator", reference=numpy_ref.nan_to_num,
                kernel=_nan_to_num_launch, backward=lambda ctx, g: mul(g, isfinite(ctx.x)), saves=("x",),
                grad_name="NanToNumBackward0")
# frexp's two results, one entry each (the exponent, int32, has no gradient)
FREXP_EXPONENT = _elementwise("frexp_exponent", ("x",), _frexp_rule("exponent"), differentiable=False)
FREXP_MANTISSA = _elementwise("frexp_mantissa", ("x",), _frexp_rule("mantissa"),
                              lambda ctx, g: div(g, exp2(dispatch(FREXP_EXPONENT, ctx.x))), saves=("x",),
                              grad_name="FrexpBackward0")

ATAN2 = _elementwise("atan2", ("x", "y"), float_rule, _atan2_backward, saves=("x", "y"))
HYPOT = _elementwise("hypot", ("x", "y"), _float_only_rule("hypot"),
                     lambda ctx, g: _needed(ctx, lambda: div(mul(g, ctx.x), ctx.out),
                                            lambda: div(mul(g, ctx.y), ctx.out)), saves=("x", "y", "out"))
COPYSIGN = _elementwise("copysign", ("x", "y"), float_rule, _copysign_backward, saves=("x", "y", "out"),
                        grad_name=_by_tensor_other("CopysignBackward"))
FMAX = _elementwise("fmax", ("x", "y"), same_type_rule, _fmax_fmin_backward(lambda a, b: ge(a, b)), saves=("x", "y"))
FMIN = _elementwise("fmin", ("x", "y"), same_type_rule, _fmax_fmin_backward(lambda a, b: le(a, b)), saves=("x", "y"))
HEAVISIDE = _elementwise("heaviside", ("x", "values"), _heaviside_rule, _heaviside_backward,
                         grad_name="NotImplemented")
LDEXP = _elementwise("ldexp", ("x", "y"), float_rule, _ldexp_backward, saves=("y", "out"))
LOGADDEXP = _elementwise("logaddexp", ("x", "y"), _float_only_rule("logaddexp"), _logaddexp_backward(None),
                         saves=("x", "y"))
LOGADDEXP2 = _elementwise("logaddexp2", ("x", "y"), _float_only_rule("logaddexp2"), _logaddexp_backward(2),
                          saves=("x", "y"))
XLOGY = _elementwise("xlogy", ("x", "y"), float_rule, _xlogy_backward, saves=("x", "y"), grad_name=_xlogy_node)
NEXTAFTER = op("nextafter", ("x", "y"), jvp=DIAGONAL, rule=_nextafter_rule, layout="iterator", reference=numpy_ref.nextafter,
               kernel=_nextafter_launch,
               backward=lambda ctx, g: _needed(ctx, lambda: where(ne(ctx.x, ctx.y), g, 0.0), lambda: zeros_like(ctx.y)),
               saves=("x", "y"))
GCD = _elementwise("gcd", ("x", "y"), _integer_only_rule("gcd"), differentiable=False)
LCM = _elementwise("lcm", ("x", "y"), _integer_only_rule("lcm"), differentiable=False)
LEFT_SHIFT = _elementwise("bitwise_left_shift", ("x", "y"), _integer_only_rule("lshift"), differentiable=False)
RIGHT_SHIFT = _elementwise("bitwise_right_shift", ("x", "y"), _integer_only_rule("rshift"), differentiable=False)

LERP = op("lerp", ("x", "end", "weight"), jvp=DIAGONAL, rule=_lerp_rule, layout="iterator", numbers_are_operands=False,
          reference=numpy_ref.lerp, kernel=lambda out, *args, compute: tb.elementwise("lerp", out, list(args), compute),
          backward=_lerp_backward, saves=("x", "end", "weight"),
          grad_name=lambda args, attrs: f"LerpBackward{int(isinstance(args[2], Tensor))}")
ADDCMUL = op("addcmul", ("x", "tensor1", "tensor2"), jvp=DIAGONAL, rule=_addc_rule("addcmul_cpu_out"), layout="iterator",
             reference=numpy_ref.addcmul, kernel=_addc_launch("addcmul"), backward=_addcmul_backward,
             saves=("tensor1", "tensor2"))
ADDCDIV = op("addcdiv", ("x", "tensor1", "tensor2"), jvp=DIAGONAL, rule=_addc_rule("addcdiv_cpu_out"), layout="iterator",
             reference=numpy_ref.addcdiv, kernel=_addc_launch("addcdiv"), backward=_addcdiv_backward,
             saves=("tensor1", "tensor2"))
FILL = op("fill", ("x", "value"), jvp=FROM_BACKWARD, rule=_fill_rule, layout="preserve", reference=numpy_ref.overwrite,
          kernel=_fill_launch, backward=_fill_backward,
          grad_name=lambda args, attrs: f"FillBackward{int(isinstance(args[1], Tensor))}")


# --------------------------------------------------------------------------- out= rules (torch's texts)
def _bool_out(name, result, out):
    if out.dtype is not _dt.bool_:
        raise RuntimeError(f"{name} does not support non-boolean outputs.")


def _nan_to_num_out(name, result, out):
    if out.dtype is not result.dtype:
        raise RuntimeError(f"nan_to_num: dtype of out: {_dt.type_name(out.dtype)} should be same as input: "
                           f"{_dt.type_name(result.dtype)}")


def _heaviside_out(name, result, out):
    if out.dtype is not result.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")


def _ldexp_out(name, result, out):
    if not _dt.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"ldexp can't be cast to the desired output type {_dt.type_name(out.dtype)}")


def _float_power_out(name, result, out):
    if out.dtype is not _dt.float64:
        raise RuntimeError(f"the output given to float_power has dtype {_dt.type_name(out.dtype)} but the "
                           "operation's result requires dtype Double")


# --------------------------------------------------------------------------- unary functions
# function (with out=), in-place form and aliases generated from the entry (ops/surface.py)
acos, acos_ = unary(ACOS, inplace_function=True, aliases=("arccos",))
asin, asin_ = unary(ASIN, inplace_function=True, aliases=("arcsin",))
atan, atan_ = unary(ATAN, inplace_function=True, aliases=("arctan",))
asinh, asinh_ = unary(ASINH, inplace_function=True, aliases=("arcsinh",))
acosh, acosh_ = unary(ACOSH, inplace_function=True, aliases=("arccosh",))
atanh, atanh_ = unary(ATANH, inplace_function=True, aliases=("arctanh",))
arccos, arccos_, arcsin, arcsin_, arctan, arctan_ = acos, acos_, asin, asin_, atan, atan_
arcsinh, arcsinh_, arccosh, arccosh_, arctanh, arctanh_ = asinh, asinh_, acosh, acosh_, atanh, atanh_
sinh, sinh_ = unary(SINH, inplace_function=True)
cosh, cosh_ = unary(COSH, inplace_function=True)
sinc, sinc_ = unary(SINC, inplace_function=True)
deg2rad, deg2rad_ = unary(DEG2RAD, inplace_function=True)
rad2deg, rad2deg_ = unary(RAD2DEG, inplace_function=True)
frac, frac_ = unary(FRAC, inplace_function=True, out="clamp")      # out: the result's dtype exactly
sgn, sgn_ = unary(SGN, out="clamp")                                 # (no torch.sgn_)
signbit = unary(SIGNBIT, inplace=False, out=_bool_out)[0]
isposinf = unary(ISPOSINF, inplace=False, out=_bool_out)[0]
isneginf = unary(ISNEGINF, inplace=False, out=_bool_out)[0]


def isreal(input):
    """True everywhere: tritensor has no complex dtypes (torch: imag == 0 for complex input)."""
    check_tensor("isreal", input)
    return ones_like(input, dtype=_dt.bool_)


def positive(input):
    """``input`` itself (torch returns the same tensor); refused for bool, as unary ``+``."""
    check_tensor("positive", input)
    if input.dtype is _dt.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def _eps(eps):
    if eps is not None and (isinstance(eps, bool) or not isinstance(as_number(eps), (int, float))):
        raise TypeError(f"logit(): argument 'eps' must be float, not {type(eps).__name__}")
    return None if eps is None else float(as_number(eps))


def logit(input, eps=None):
    """log(x / (1 - x)); with eps >= 0, x is clamped to [eps, 1 - eps] first (eps < 0: none)."""
    check_tensor("logit", input)
    return dispatch(LOGIT, input, eps=_eps(eps))


def logit_(self, eps=None):
    return dispatch_inplace(LOGIT, self, eps=_eps(eps))


def _nan_to_num_values(input, nan, posinf, neginf):
    """torch's replacements: nan 0.0, the infinities the dtype's largest finite values."""
    for arg, v in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if v is not None and not isinstance(as_number(v), (int, float)):
            raise TypeError(f"nan_to_num(): argument '{arg}' must be float, not {type(v).__name__}")
    if not input.dtype.is_floating_point:
        return {"nan": 0.0, "posinf": 0.0, "neginf": 0.0}        # integers come back unchanged
    info = _dt.finfo(input.dtype)
    return {"nan": 0.0 if nan is None else float(as_number(nan)),
            "posinf": info.max if posinf is None else float(as_number(posinf)),
            "neginf": info.min if neginf is None else float(as_number(neginf))}


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    check_tensor("nan_to_num", input)
    return dispatch(NAN_TO_NUM, input, **_nan_to_num_values(input, nan, posinf, neginf))


def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    return dispatch_inplace(NAN_TO_NUM, self, **_nan_to_num_values(self, nan, posinf, neginf))


def frexp(input, *, out=None):
    """(mantissa, exponent) with input = mantissa * 2**exponent, |mantissa| in [0.5, 1) (0, inf
    and NaN: themselves with exponent 0); the exponent is int32."""
    check_tensor("frexp", input)
    result = return_types.frexp(dispatch(FREXP_MANTISSA, input), dispatch(FREXP_EXPONENT, input))
    if out is None:
        return result
    mantissa, exponent = out
    if mantissa.dtype is not input.dtype:
        raise RuntimeError(f"torch.frexp() expects mantissa to have dtype {_CPP[input.dtype.name]} but got "
                           f"{_CPP[mantissa.dtype.name]}")
    if exponent.dtype is not _dt.int32:
        raise RuntimeError(f"torch.frexp() expects exponent to have int dtype but got {_CPP[exponent.dtype.name]}")
    return write_out("frexp", result, out, "exact")


def _frexp_method(self):
    return frexp(self)


# --------------------------------------------------------------------------- binary functions
def _tensors(name, other_arg="other"):
    """A binary op with Tensor-Tensor overloads only, and its in-place form."""
    def fn(input, other):
        check_tensor(name, input)
        check_tensor(name, other, other_arg, 2)
        return dispatch(_ENTRIES[name], input, other)

    def fn_(self, other):
        check_tensor(name + "_", other, other_arg, 1)
        return dispatch_inplace(_ENTRIES[name], self, other)
    fn.__name__ = fn.__qualname__ = name
    fn_.__name__ = fn_.__qualname__ = name + "_"
    return fn, fn_


_ENTRIES = {"atan2": ATAN2, "hypot": HYPOT, "fmax": FMAX, "fmin": FMIN, "heaviside": HEAVISIDE, "ldexp": LDEXP,
            "logaddexp": LOGADDEXP, "logaddexp2": LOGADDEXP2, "nextafter": NEXTAFTER, "gcd": GCD, "lcm": LCM}
atan2, atan2_ = _tensors("atan2")
hypot, hypot_ = _tensors("hypot")
fmax, _ = _tensors("fmax")
fmin, _ = _tensors("fmin")
heaviside, heaviside_ = _tensors("heaviside", "values")
_ldexp_exact, _ldexp_exact_ = _tensors("ldexp")


def _ldexp_product_form(input, other):
    """torch 2.13 scales exactly (its ldexp_cpu_exp kernel: the LDEXP entry) only a floating
    input by an integer exponent; otherwise it computes input * pow(2, other) in the result dtype,
    so 2**other over- or underflows first (0 * 2**1000.0 is NaN, 1e-40 * 2**200.0 is inf)."""
    return other.dtype.is_floating_point or not input.dtype.is_floating_point


def _ldexp_product(x, e):
    rt = _dt.result_type(x, e)
    if not rt.is_floating_point:
        rt = _dt.get_default_dtype()
    return mul(x if x.dtype is rt else to_dtype(x, rt), exp2(e if e.dtype is rt else to_dtype(e, rt)))


def ldexp(input, other):
    check_tensor("ldexp", input)
    check_tensor("ldexp", other, "other", 2)
    if _ldexp_product_form(input, other):
        return named_composite("LdexpBackward0", _ldexp_product, input, other)
    return _ldexp_exact(input, other)


def ldexp_(self, other):
    check_tensor("ldexp_", other, "other", 1)
    if _ldexp_product_form(self, other):
        result = named_composite("LdexpBackward0", _ldexp_product, self, other)
        if not _dt.can_cast(result.dtype, self.dtype):
            raise RuntimeError(f"ldexp can't be cast to the desired output type {_dt.type_name(self.dtype)}")
        return self.copy_(result)
    return _ldexp_exact_(self, other)


logaddexp, _ = _tensors("logaddexp")
logaddexp2, _ = _tensors("logaddexp2")
nextafter, nextafter_ = _tensors("nextafter")
gcd, gcd_ = _tensors("gcd")
lcm, lcm_ = _tensors("lcm")
arctan2, arctan2_ = atan2, atan2_


def copysign(input, other):
    if not isinstance(input, Tensor):
        raise TypeError(f"copysign() received an invalid combination of arguments - got ({type(input).__name__}, "
                        f"{type(other).__name__}), but expected one of:\n"
                        " * (Tensor input, Tensor other, *, Tensor out = None)\n"
                        " * (Tensor input, Number other, *, Tensor out = None)\n")
    return _binary(COPYSIGN, input, other)


def copysign_(self, other):
    return dispatch_inplace(COPYSIGN, self, as_number(other))


def xlogy(input, other):
    return _binary(XLOGY, input, other)


def xlogy_(self, other):
    return dispatch_inplace(XLOGY, self, as_number(other))


def bitwise_left_shift(input, other):
    return _binary(LEFT_SHIFT, input, other)


def bitwise_left_shift_(self, other):
    return dispatch_inplace(LEFT_SHIFT, self, as_number(other))


def bitwise_right_shift(input, other):
    return _binary(RIGHT_SHIFT, input, other)


def bitwise_right_shift_(self, other):
    return dispatch_inplace(RIGHT_SHIFT, self, as_number(other))


def _as_double(a):
    """float_power's operands in float64 (a tensor cast when it is not already: no copy then)."""
    if isinstance(a, Tensor):
        return a if a.dtype is _dt.float64 else to_dtype(a, _dt.float64)
    return float(a)


def float_power(input, exponent):
    """pow in float64 whatever the operands' dtypes (torch: PowBackward over ToCopyBackward0)."""
    input, exponent = as_number(input), as_number(exponent)
    for a in (input, exponent):
        if not isinstance(a, (Tensor, bool, int, float)):
            raise TypeError(f"float_power(): argument 'exponent' must be Tensor or Number, not {type(a).__name__}")
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError(f"float_power() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(exponent).__name__}), but expected one of:\n"
                        " * (Tensor input, Tensor exponent, *, Tensor out = None)\n"
                        " * (Number self, Tensor exponent, *, Tensor out = None)\n"
                        " * (Tensor input, Number exponent, *, Tensor out = None)\n")
    return pow(_as_double(input), _as_double(exponent))


def float_power_(self, exponent):
    if self.dtype is not _dt.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {_dt.type_name(self.dtype)} but the "
                           "operation's result requires dtype Double")
    return pow_(self, _as_double(as_number(exponent)))


def rsub(input, other, alpha=1):
    """other - alpha * input, recorded as torch's one RsubBackward0 (tensor other) or
    RsubBackward1 (number other) node."""
    input, other = as_number(input), as_number(other)
    if not isinstance(input, Tensor) or not isinstance(other, (Tensor, bool, int, float)):
        raise TypeError(f"rsub() received an invalid combination of arguments - got ({type(input).__name__}, "
                        f"{type(other).__name__}), but expected one of:\n"
                        " * (Tensor input, Tensor other, *, Number alpha = 1)\n"
                        " * (Tensor input, Number other, Number alpha = 1)\n")
    if isinstance(other, Tensor):
        return named_composite("RsubBackward0", lambda i, o: sub(o, i, alpha=alpha), input, other)
    return named_composite("RsubBackward1", lambda i: sub(other, i, alpha=alpha), input)


# --------------------------------------------------------------------------- ternary functions
def _lerp_weight(input, end, weight):
    weight = as_number(weight)
    check_tensor("lerp", input)
    if not isinstance(end, Tensor) or not isinstance(weight, (Tensor, bool, int, float)):
        raise TypeError(f"lerp() received an invalid combination of arguments - got ({type(input).__name__}, "
                        f"{type(end).__name__}, {type(weight).__name__}), but expected one of:\n"
                        " * (Tensor input, Tensor end, Tensor weight, *, Tensor out = None)\n"
                        " * (Tensor input, Tensor end, Number weight, *, Tensor out = None)\n")
    return weight


def _lerp(input, end, weight):
    return dispatch(LERP, input, end, _lerp_weight(input, end, weight))


def lerp(input, end, weight, *, out=None):
    """input + weight * (end - input) (torch's two-sided formula). out=: with a weight tensor,
    out must have the result's dtype (torch's lerp.Tensor is structured), else it is cast."""
    result = _lerp(input, end, weight)
    if out is None:
        return result
    return write_out("lerp", result, out, "clamp" if isinstance(weight, Tensor) else "cast")


def lerp_(self, end, weight):
    return dispatch_inplace(LERP, self, end, _lerp_weight(self, end, weight))


def _addc_value(name, input, tensor1, tensor2, value):
    check_tensor(name, input)
    check_tensor(name, tensor1, "tensor1", 2)
    check_tensor(name, tensor2, "tensor2", 3)
    value = as_number(value)
    if isinstance(value, Tensor):       # a 0-d tensor is a Scalar to torch's argument parser
        value = value.item()
    if not isinstance(value, (bool, int, float)):
        raise TypeError(f"{name}(): argument 'value' must be Number, not {type(value).__name__}")
    if name.startswith("addcdiv") and not tensor1.dtype.is_floating_point and not tensor2.dtype.is_floating_point:
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform "
            "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
            "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
            "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the "
            "latter implementation: (input + value * tensor1 / tensor2), for all dtypes.")
    return value


def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2."""
    value = _addc_value("addcmul", input, tensor1, tensor2, value)
    return dispatch(ADDCMUL, input, tensor1, tensor2, value=value)


def addcmul_(self, tensor1, tensor2, *, value=1):
    value = _addc_value("addcmul_", self, tensor1, tensor2, value)
    return dispatch_inplace(ADDCMUL, self, tensor1, tensor2, value=value)


def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2 (true division; integer tensor1 and tensor2 refused)."""
    value = _addc_value("addcdiv", input, tensor1, tensor2, value)
    return dispatch(ADDCDIV, input, tensor1, tensor2, value=value)


def addcdiv_(self, tensor1, tensor2, *, value=1):
    value = _addc_value("addcdiv_", self, tensor1, tensor2, value)
    return dispatch_inplace(ADDCDIV, self, tensor1, tensor2, value=value)


def fill(input, value):
    """torch.fill: a new tensor like input (its layout kept), every element ``value`` (a number
    or a 0-d tensor) in input's dtype."""
    check_tensor("fill", input)
    value = as_number(value)
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} "
                               "dimensions.")
    elif isinstance(value, (bool, int, float)):
        check_scalar_fits(value, input.dtype)
    else:
        got = type(value).__name__
        raise TypeError(f"fill() received an invalid combination of arguments - got (Tensor, {got}), but expected "
                        f"one of:\n * (Tensor input, Tensor value)\n      didn't match because some of the arguments "
                        f"have invalid types: (Tensor, !{got}!)\n * (Tensor input, Number value)\n      didn't match "
                        f"because some of the arguments have invalid types: (Tensor, !{got}!)\n")
    return dispatch(FILL, input, value)


# --------------------------------------------------------------------------- public surface
declare("isreal", isreal)
declare("positive", positive)
declare("logit", logit, inplace=logit_, inplace_function=True, out="cast")
declare("nan_to_num", nan_to_num, inplace=nan_to_num_, inplace_function=True, out=_nan_to_num_out)
declare("frexp", frexp, method=_frexp_method)                          # out=(mantissa, exponent): frexp
declare("atan2", atan2, inplace=atan2_, aliases=("arctan2",), out="cast")
declare("hypot", hypot, inplace=hypot_, out="cast")
declare("fmax", fmax, out="cast")
declare("fmin", fmin, out="cast")
declare("heaviside", heaviside, inplace=heaviside_, out=_heaviside_out)
declare("ldexp", ldexp, inplace=ldexp_, inplace_function=True, out=_ldexp_out)
declare("logaddexp", logaddexp, out="cast")
declare("logaddexp2", logaddexp2, out="cast")
declare("nextafter", nextafter, inplace=nextafter_, out="cast")
declare("gcd", gcd, inplace=gcd_, inplace_function=True, out="cast")
declare("lcm", lcm, inplace=lcm_, inplace_function=True, out="cast")
declare("copysign", copysign, inplace=copysign_, out="cast")
declare("xlogy", xlogy, inplace=xlogy_, inplace_function=True, out="cast")
declare("bitwise_left_shift", bitwise_left_shift, inplace=bitwise_left_shift_,
        operators=("__lshift__", "__rlshift__", "__ilshift__"), out="cast")
declare("bitwise_right_shift", bitwise_right_shift, inplace=bitwise_right_shift_,
        operators=("__rshift__", "__rrshift__", "__irshift__"), out="cast")
declare("float_power", float_power, inplace=float_power_, out=_float_power_out)
declare("rsub", rsub, method=False)
declare("lerp", lerp, method=_lerp, inplace=lerp_)          # out= handled by lerp (its rule needs the weight)
declare("addcmul", addcmul, inplace=addcmul_, out="cast")
declare("addcdiv", addcdiv, inplace=addcdiv_, out="cast")
