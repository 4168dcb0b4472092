"""Pointwise math beyond the arithmetic core of elementwise.py: rounding and integer division,
the transcendental functions, activations (silu, gelu), clamp, logical and bitwise ops,
NaN/inf tests and masked_fill, each one table entry; plus every in-place form.

Like elementwise.py, every entry names a small jitted FN of kernels/elementwise.py applied by the
shared kernel of its arity and a NumPy reference (backends/numpy_ref.py). This module builds on
elementwise.py (never the other way round); the public forms of both are declared next to their
entries (ops/surface.py) and tt.* is generated from the declarations.

Integer division by zero (floor_divide, remainder, fmod, div with a rounding mode): the cpu
device raises ``RuntimeError: ZeroDivisionError`` as torch's cpu kernels do. On cuda nothing is
checked (a check would cost a reduction and a device sync; torch's CUDA kernels do not check
either) and the kernels define the result as 0 instead of torch's unspecified value.
"""
from __future__ import annotations

import math
import warnings

from .. import dtypes as _dt
from ..autograd.graph import rename_node
from ..backends import numpy_ref
from ..backends import triton as tb
from ..backends.base import backend_for
from ..tensor import Tensor
from ._checks import check_tensor
from ._overlap import assert_no_partial_overlap, has_internal_overlap
from .copy import check_scalar_fits
from .dispatch import dispatch
from .dispatch import dispatch_inplace as _unchecked_inplace
from .elementwise import (  # noqa: F401  (div_trunc ... stay importable from here)
    _device_of, _integer_division_rule, _not_implemented, _zero_grads, _zeros, div_floor, div_trunc,
    rounding_entry, sigmoid_backward,
    _binary, _check_operands, _elementwise, _needed, _tensor_args, _tensor_first, add, as_number, broadcast_shapes,
    compare_rule, dispatch_inplace, div, exp, float_rule, ge, gt, le, lt, mul, neg, no_bool_rule,
    same_type_rule, sigmoid, sub, tanh, where,
)
from .surface import declare, unary
from .table import DIAGONAL, Meta, op, signature_rule

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)

_TYPEMETA_NAMES = _dt.CPP_NAMES


def _by_tensor_other(base):
    """torch's overload numbering for Tensor-Scalar (0) vs Tensor-Tensor (1)."""
    def name(args, attrs):
        return f"{base}{1 if any(isinstance(a, Tensor) for a in args[1:]) else 0}"
    return name


# --------------------------------------------------------------------------- rules
def _bitwise_rule(name):
    def rule(*args, **_):
        meta = same_type_rule(*args)
        if meta.dtype.is_floating_point:
            raise _not_implemented(name, meta.dtype, _device_of(*args))
        return meta
    return rule


def _logical_rule(*args, **_):
    return compare_rule(*args)


def _float_input_rule(name, kernels=None):
    """Activations torch defines for floating inputs only (silu, gelu); ``kernels``: torch's
    (cpu, cuda) kernel names where they are not name_cpu / name_cuda."""
    @signature_rule
    def rule(x, *rest, **_):
        meta = same_type_rule(x, *rest)
        if not meta.dtype.is_floating_point:
            if kernels is None:
                raise _not_implemented(name, meta.dtype, x.device)
            kernel = backend_for(x.device).torch_name(*kernels)
            raise NotImplementedError(f'"{kernel}" not implemented for \'{_dt.type_name(meta.dtype)}\'')
        return meta
    return rule


def _clamp_rule(x, *bounds, **_):
    return same_type_rule(x, *bounds)


def _masked_fill_rule(x, mask, value, **_):
    shape = broadcast_shapes(x.shape, mask.shape)
    return Meta(shape, x.dtype, _dt.compute_dtype(x.dtype))


# --------------------------------------------------------------------------- entries
# Step functions: zero gradient wherever they are differentiable (torch's convention).
SIGN = _elementwise("sign", ("x",), same_type_rule, _zeros)
# torch has no bool kernel for the rounding functions (on cpu its error names the vml kernel)
FLOOR = _elementwise("floor", ("x",), no_bool_rule("floor_vml_cpu", "floor_cuda"), _zeros)
CEIL = _elementwise("ceil", ("x",), no_bool_rule("ceil_vml_cpu", "ceil_cuda"), _zeros)
TRUNC = _elementwise("trunc", ("x",), no_bool_rule("trunc_vml_cpu", "trunc_cuda"), _zeros)
ROUND = _elementwise("round", ("x",), no_bool_rule("round_vml_cpu", "round_cuda"), _zeros)
# round(x, decimals=d): ``scale`` is 10**d, or -10**-d for d < 0 (see the FN)
ROUND_DECIMALS = _elementwise("round_decimals", ("x", "scale"), same_type_rule,
                              lambda ctx, g: (_zeros(ctx, g), None), grad_name="RoundBackward1",
                              numbers_are_operands=False)

EXP2 = _elementwise("exp2", ("x",), float_rule, lambda ctx, g: mul(mul(g, ctx.out), _LN2), saves=("out",))
EXPM1 = _elementwise("expm1", ("x",), float_rule, lambda ctx, g: mul(g, add(ctx.out, 1)), saves=("out",))
LOG2 = _elementwise("log2", ("x",), float_rule, lambda ctx, g: div(g, mul(ctx.x, _LN2)), saves=("x",))
LOG10 = _elementwise("log10", ("x",), float_rule, lambda ctx, g: div(g, mul(ctx.x, _LN10)), saves=("x",))
LOG1P = _elementwise("log1p", ("x",), float_rule, lambda ctx, g: div(g, add(ctx.x, 1)), saves=("x",),
                     grad_name="Log1PBackward0")    # torch title-cases its names: Log1P
# d/dx x^-1/2 = -1/2 x^-3/2 = -1/2 out^3
RSQRT = _elementwise("rsqrt", ("x",), float_rule,
                     lambda ctx, g: mul(g, mul(mul(mul(ctx.out, ctx.out), ctx.out), -0.5)), saves=("out",))
TAN = _elementwise("tan", ("x",), float_rule,
                   lambda ctx, g: mul(g, add(mul(ctx.out, ctx.out), 1)), saves=("out",))


# erf, silu, gelu, sigmoid: the first derivative is ONE fused kernel (grad in, grad out); its own
# derivative is written with composite ops, so any order differentiates.
def _erf_backward_backward(ctx, gg):
    # d/dgrad = erf'(x); d/dx [grad erf'(x)] = grad erf'(x) (-2x)
    x = ctx.x
    return _needed(ctx, lambda: erf_backward(gg, x),
                   lambda: mul(erf_backward(mul(gg, ctx.grad), x), mul(x, -2)))


ERF_BACKWARD = _elementwise("erf_backward", ("grad", "x"), float_rule, _erf_backward_backward,
                            saves=("grad", "x"))
ERF = _elementwise("erf", ("x",), float_rule, lambda ctx, g: erf_backward(g, ctx.x), saves=("x",))


def _silu_second(x):
    """silu''(x) = s (1 - s) (2 + x (1 - 2 s)), s = sigmoid(x)."""
    s = sigmoid(x)
    return mul(mul(s, sub(1, s)), add(mul(x, sub(1, mul(s, 2))), 2))


SILU_BACKWARD = _elementwise(
    "silu_backward", ("grad", "x"), _float_input_rule("silu_backward"),
    lambda ctx, gg: _needed(ctx, lambda: silu_backward(gg, ctx.x),
                            lambda: mul(mul(gg, ctx.grad), _silu_second(ctx.x))),
    saves=("grad", "x"))
SILU = _elementwise("silu", ("x",), _float_input_rule("silu"), lambda ctx, g: silu_backward(g, ctx.x),
                    saves=("x",))

_K_BETA = math.sqrt(2.0 / math.pi)
_K_KAPPA = 0.044715


def _gelu_second(x, approximate):
    """gelu''(x). 'none': phi(x) (2 - x^2). 'tanh' (f = x/2 (1 + t), t = tanh u,
    u = b (x + k x^3)): (1 - t^2) (u' + x/2 (u'' - 2 t u'^2))."""
    if approximate == "tanh":
        x2 = mul(x, x)
        t = tanh(mul(add(x, mul(mul(x2, x), _K_KAPPA)), _K_BETA))
        du = mul(add(mul(x2, 3 * _K_KAPPA), 1), _K_BETA)
        ddu = mul(x, 6 * _K_KAPPA * _K_BETA)
        inner = add(du, mul(mul(x, 0.5), sub(ddu, mul(mul(t, 2), mul(du, du)))))
        return mul(sub(1, mul(t, t)), inner)
    phi = mul(exp(mul(mul(x, x), -0.5)), 1 / math.sqrt(2 * math.pi))
    return mul(phi, sub(2, mul(x, x)))


def _gelu_launcher(exact, tanh_form):
    def launch(out, *args, compute, approximate="none"):
        tb.elementwise(tanh_form if approximate == "tanh" else exact, out, list(args), compute)
    return launch


GELU_BACKWARD = op(
    "gelu_backward", ("grad", "x"), rule=_float_input_rule("gelu_backward"), layout="iterator",
    reference=numpy_ref.gelu_backward, kernel=_gelu_launcher("gelu_backward", "gelu_tanh_backward"),
    backward=lambda ctx, gg: _needed(
        ctx, lambda: gelu_backward(gg, ctx.x, approximate=ctx.approximate),
        lambda: mul(mul(gg, ctx.grad), _gelu_second(ctx.x, ctx.approximate))),
    saves=("grad", "x"), jvp=DIAGONAL)
GELU = op("gelu", ("x",), jvp=DIAGONAL, rule=_float_input_rule("gelu", ("GeluKernelImpl", "GeluCUDAKernelImpl")), layout="iterator",
          reference=numpy_ref.gelu,
          kernel=_gelu_launcher("gelu", "gelu_tanh"),
          backward=lambda ctx, g: gelu_backward(g, ctx.x, approximate=ctx.approximate), saves=("x",))


# Integer division. Gradients: zero for the rounded quotients (step functions); remainder and
# fmod pass the gradient to x and give y -grad * (the rounded quotient).
FLOOR_DIVIDE = _elementwise("floor_divide", ("x", "y"), _integer_division_rule("div_floor"), _zero_grads,
                            fn="div_floor")
REMAINDER = _elementwise(
    "remainder", ("x", "y"), _integer_division_rule("remainder"),
    lambda ctx, g: _needed(ctx, lambda: g, lambda: neg(mul(g, div_floor(ctx.x, ctx.y)))),
    saves=("x", "y"), grad_name=_by_tensor_other("RemainderBackward"))
FMOD = _elementwise(
    "fmod", ("x", "y"), _integer_division_rule("fmod"),
    lambda ctx, g: _needed(ctx, lambda: g, lambda: neg(mul(g, div_trunc(ctx.x, ctx.y)))),
    saves=("x", "y"), grad_name=_by_tensor_other("FmodBackward"))


def _clamp_node_name(args, attrs):
    """torch.clamp's overloads: clamp.Tensor (any tensor bound) is ClampBackward0, clamp with
    numbers ClampBackward1 (min- or max-only clamps are clamp too)."""
    return f"ClampBackward{0 if any(isinstance(a, Tensor) for a in args[1:]) else 1}"


# clamp: the gradient passes where min <= x <= max (boundaries included, as torch); a tensor
# bound gets it where it is the active one (min only while min < max, as torch).
def _clamp_backward(ctx, g):
    x, lo, hi = ctx.x, ctx.min, ctx.max
    return _needed(ctx,
                   lambda: where(_and(ge(x, lo), le(x, hi)), g, 0.0),
                   lambda: where(_and(lt(x, lo), lt(lo, hi)), g, 0.0),
                   lambda: where(_or(gt(x, hi), lt(hi, lo)), g, 0.0))


CLAMP = op("clamp", ("x", "min", "max"), jvp=DIAGONAL, rule=_clamp_rule, reference=numpy_ref.clamp,
           layout="iterator", numbers_are_operands=False,
           kernel=lambda out, *args, compute: tb.elementwise("clamp", out, list(args), compute),
           backward=_clamp_backward, saves=("x", "min", "max"), grad_name=_clamp_node_name)
CLAMP_MIN = _elementwise(
    "clamp_min", ("x", "min"), _clamp_rule,
    lambda ctx, g: _needed(ctx, lambda: where(ge(ctx.x, ctx.min), g, 0.0),
                           lambda: where(lt(ctx.x, ctx.min), g, 0.0)),
    saves=("x", "min"), fn="maximum", grad_name=_clamp_node_name, numbers_are_operands=False)
CLAMP_MAX = _elementwise(
    "clamp_max", ("x", "max"), _clamp_rule,
    lambda ctx, g: _needed(ctx, lambda: where(le(ctx.x, ctx.max), g, 0.0),
                           lambda: where(gt(ctx.x, ctx.max), g, 0.0)),
    saves=("x", "max"), fn="minimum", grad_name=_clamp_node_name, numbers_are_operands=False)

LOGICAL = {n: _elementwise(n, ("x", "y"), _logical_rule, differentiable=False)
           for n in ("logical_and", "logical_or", "logical_xor")}
LOGICAL_NOT = _elementwise("logical_not", ("x",), _logical_rule, differentiable=False)
BITWISE = {n: _elementwise(n, ("x", "y"), _bitwise_rule(n), differentiable=False)
           for n in ("bitwise_and", "bitwise_or", "bitwise_xor")}
# bitwise_not of a bool is logical not: bools compute as int32 0/1, where ~1 would be -2 (True)
BITWISE_NOT = op("bitwise_not", ("x",), rule=_bitwise_rule("bitwise_not"), reference=numpy_ref.bitwise_not,
                 layout="iterator",
                 kernel=lambda out, x, compute: tb.elementwise(
                     "logical_not" if x.dtype is _dt.bool_ else "bitwise_not", out, [x], compute),
                 differentiable=False)
CHECKS = {n: _elementwise(n, ("x",), compare_rule, differentiable=False)
          for n in ("isnan", "isinf", "isfinite")}


def _masked_fill_backward(ctx, g):
    mask = ctx.mask
    return _needed(ctx, lambda: where(mask, 0.0, g), lambda: None, lambda: where(mask, g, 0.0))


# contiguous output: torch's masked_fill clones self contiguous first, then fills in place
MASKED_FILL = op("masked_fill", ("x", "mask", "value"), jvp=DIAGONAL, rule=_masked_fill_rule,
                 reference=numpy_ref.masked_fill,
                 # where(mask, value, x), computed in x's dtype
                 kernel=lambda out, x, mask, value, compute: tb.elementwise("where", out, [mask, value, x], compute),
                 backward=_masked_fill_backward, saves=("mask",),
                 grad_name=lambda args, attrs: f"MaskedFillBackward{1 if isinstance(args[2], Tensor) else 0}")


# --------------------------------------------------------------------------- functions
def _and(a, b):
    return dispatch(LOGICAL["logical_and"], a, b)


def _or(a, b):
    return dispatch(LOGICAL["logical_or"], a, b)


def _tensor_input(name, input):
    check_tensor(name, input)


# Plain unary ops: function (with out=) and in-place form generated from the entry and declared
# (ops/surface.py); tt.<name>_ too where torch has it.
sign, sign_ = unary(SIGN)
floor, floor_ = unary(FLOOR, inplace_function=True)
ceil, ceil_ = unary(CEIL, inplace_function=True)
trunc, trunc_ = unary(TRUNC, inplace_function=True, aliases=("fix",))
fix, fix_ = trunc, trunc_
exp2, exp2_ = unary(EXP2, inplace_function=True)
expm1, expm1_ = unary(EXPM1, inplace_function=True)
log2, log2_ = unary(LOG2, inplace_function=True)
log10, log10_ = unary(LOG10, inplace_function=True)
log1p, log1p_ = unary(LOG1P, inplace_function=True)
rsqrt, rsqrt_ = unary(RSQRT, inplace_function=True)
tan, tan_ = unary(TAN, inplace_function=True)
erf, erf_ = unary(ERF, inplace_function=True)
# torch has F.silu (with inplace=) and no Tensor.silu; silu_ serves F.silu(inplace=True)
silu, silu_ = unary(SILU, method=False, inplace_method=False, functional="own", out=None)
# in place, the bool result is written as 1/0 in self's dtype, as torch does
logical_not, logical_not_ = unary(LOGICAL_NOT)
isnan = unary(CHECKS["isnan"], inplace=False, out=None)[0]
isinf = unary(CHECKS["isinf"], inplace=False, out=None)[0]
isfinite = unary(CHECKS["isfinite"], inplace=False, out=None)[0]
bitwise_not, bitwise_not_ = unary(BITWISE_NOT, operators=("__invert__",))


def _round_decimals_scale(input, decimals):
    if not input.dtype.is_floating_point:
        raise _not_implemented("round", input.dtype, input.device)
    return float(10 ** decimals) if decimals >= 0 else -float(10 ** -decimals)


def round(input, *, decimals=0):
    _tensor_input("round", input)
    if decimals == 0:
        return dispatch(ROUND, input)
    return dispatch(ROUND_DECIMALS, input, _round_decimals_scale(input, decimals))


def round_(self, *, decimals=0):
    if decimals == 0:
        return dispatch_inplace(ROUND, self)
    return dispatch_inplace(ROUND_DECIMALS, self, _round_decimals_scale(self, decimals))


def _check_approximate(approximate):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")


def gelu(input, approximate="none"):
    _tensor_input("gelu", input)
    _check_approximate(approximate)
    return dispatch(GELU, input, approximate=approximate)


def gelu_(self, approximate="none"):
    _check_approximate(approximate)
    return dispatch_inplace(GELU, self, approximate=approximate)


def silu_backward(grad, x):
    return dispatch(SILU_BACKWARD, grad, x)


def gelu_backward(grad, x, approximate="none"):
    _check_approximate(approximate)
    return dispatch(GELU_BACKWARD, grad, x, approximate=approximate)


def erf_backward(grad, x):
    return dispatch(ERF_BACKWARD, grad, x)




def floor_divide(input, other):
    return _binary(FLOOR_DIVIDE, input, other)


def remainder(input, other):
    return _binary(REMAINDER, input, other)


def fmod(input, other):
    _tensor_first("fmod", input)
    return _binary(FMOD, input, other)


def floor_divide_(self, other):
    return dispatch_inplace(FLOOR_DIVIDE, self, other)


def remainder_(self, other):
    return dispatch_inplace(REMAINDER, self, other)


def fmod_(self, other):
    return dispatch_inplace(FMOD, self, other)


# clamp
def _clamp_entry_and_args(input, min, max):
    _check_operands("clamp", tuple(b for b in (min, max) if b is not None))
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if min is not None and max is not None and isinstance(min, Tensor) != isinstance(max, Tensor):
        raise TypeError("clamp() received an invalid combination of arguments - got (Tensor, "
                        f"{type(min).__name__}, {type(max).__name__}): the bounds are both Tensors or both Numbers")
    dtype = _dt.result_type(input, *(b for b in (min, max) if b is not None))
    for b in (min, max):
        check_scalar_fits(b, dtype)       # a no-op for tensors and None
    if max is None:
        return CLAMP_MIN, (min,)
    if min is None:
        return CLAMP_MAX, (max,)
    return CLAMP, (min, max)


def clamp(input, min=None, max=None):
    min, max = as_number(min), as_number(max)
    _tensor_input("clamp", input)
    entry, bounds = _clamp_entry_and_args(input, min, max)
    return dispatch(entry, input, *bounds)


def clamp_(self, min=None, max=None):
    entry, bounds = _clamp_entry_and_args(self, min, max)
    return dispatch_inplace(entry, self, *bounds)


clip, clip_ = clamp, clamp_


def clamp_min(input, min):
    # torch's own overloads: ClampMinBackward0 (number), ClampMinBackward1 (tensor)
    return rename_node(clamp(input, min=min), f"ClampMinBackward{int(isinstance(min, Tensor))}")


def clamp_max(input, max):
    return rename_node(clamp(input, max=max), f"ClampMaxBackward{int(isinstance(max, Tensor))}")


# logical and bitwise
def logical_and(input, other):
    _tensor_args("logical_and", input, other)
    return _binary(LOGICAL["logical_and"], input, other)


def logical_or(input, other):
    _tensor_args("logical_or", input, other)
    return _binary(LOGICAL["logical_or"], input, other)


def logical_xor(input, other):
    _tensor_args("logical_xor", input, other)
    return _binary(LOGICAL["logical_xor"], input, other)


def logical_and_(self, other):
    _tensor_args("logical_and_", self, other)
    return dispatch_inplace(LOGICAL["logical_and"], self, other)


def logical_or_(self, other):
    _tensor_args("logical_or_", self, other)
    return dispatch_inplace(LOGICAL["logical_or"], self, other)


def logical_xor_(self, other):
    _tensor_args("logical_xor_", self, other)
    return dispatch_inplace(LOGICAL["logical_xor"], self, other)


def bitwise_and(input, other):
    return _binary(BITWISE["bitwise_and"], input, other)


def bitwise_or(input, other):
    return _binary(BITWISE["bitwise_or"], input, other)


def bitwise_xor(input, other):
    return _binary(BITWISE["bitwise_xor"], input, other)


def bitwise_and_(self, other):
    return dispatch_inplace(BITWISE["bitwise_and"], self, other)


def bitwise_or_(self, other):
    return dispatch_inplace(BITWISE["bitwise_or"], self, other)


def bitwise_xor_(self, other):
    return dispatch_inplace(BITWISE["bitwise_xor"], self, other)


# masked_fill
def _check_masked_fill(x, mask, value):
    check_tensor("masked_fill", mask, "mask", 1)
    if mask.dtype is not _dt.bool_:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_TYPEMETA_NAMES[mask.dtype.name]}")
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got tensor "
                               f"with {value.dim()} dimension(s).")
    elif not isinstance(value, (bool, int, float)):
        raise TypeError(f"masked_fill() received an invalid combination of arguments: value of type "
                        f"{type(value).__name__}")
    else:
        check_scalar_fits(value, x.dtype)


def masked_fill(input, mask, value):
    _tensor_input("masked_fill", input)
    _check_masked_fill(input, mask, value)
    return dispatch(MASKED_FILL, input, mask, value)


def masked_fill_(self, mask, value):
    _check_masked_fill(self, mask, value)
    if has_internal_overlap(self):
        warnings.warn("Use of masked_fill_ on expanded tensors is deprecated. Please clone() the tensor before "
                      "performing this operation. This also applies to advanced indexing e.g. tensor[mask] = "
                      "scalar", UserWarning, stacklevel=2)
    assert_no_partial_overlap(self, mask)
    return _unchecked_inplace(MASKED_FILL, self, mask, value)


# --------------------------------------------------------------------------- public surface
# The variants of the hand-written functions above (ops/surface.py); tt, Tensor's methods and
# operators are generated from these.
declare("round", round, inplace=round_, inplace_function=True, out="cast")
declare("gelu", gelu, method=False, functional="own")
declare("floor_divide", floor_divide, inplace=floor_divide_,
        operators=("__floordiv__", "__rfloordiv__", "__ifloordiv__"), out="cast")
declare("remainder", remainder, inplace=remainder_, operators=("__mod__", "__rmod__", "__imod__"), out="cast")
declare("fmod", fmod, inplace=fmod_, out="cast")
declare("clamp", clamp, inplace=clamp_, inplace_function=True, aliases=("clip",), out="clamp")
declare("clamp_min", clamp_min)
declare("clamp_max", clamp_max)
for _name in ("logical_and", "logical_or", "logical_xor"):
    declare(_name, globals()[_name], inplace=globals()[_name + "_"], out="cast")
for _name, _op in (("bitwise_and", "and"), ("bitwise_or", "or"), ("bitwise_xor", "xor")):
    declare(_name, globals()[_name], inplace=globals()[_name + "_"],
            operators=(f"__{_op}__", f"__r{_op}__", f"__i{_op}__"), out="cast")
declare("masked_fill", masked_fill, inplace=masked_fill_)
