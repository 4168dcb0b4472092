"""torch.nn's activations (issue 25.1): elu, selu, celu, hardshrink, softshrink, hardsigmoid,
hardswish, logsigmoid, mish, softplus, threshold, glu, leaky_relu, prelu, rrelu, and the
composites softmin, softsign, tanhshrink.

Each pointwise activation is a table entry whose FN (kernels/elementwise.py's activation block)
the shared elementwise kernel applies, with a NumPy reference (backends/numpy_act.py), and its
first derivative is ONE fused entry of its own (``xxx_backward(grad, x)``, torch's
EluBackwardBackward0 ... when recorded) whose derivative is written with tritensor ops, so every
order differentiates. Scalar parameters (alpha, lambd, beta ...) are attributes the launcher hands
the FN as kernel scalars. torch's node names: selu records EluBackward0, celu CeluBackward0, the
in-place forms EluBackward1, CeluBackward1, ThresholdBackward1, LeakyReluBackward1,
RreluWithNoiseBackward1 (torch saves the result there; this saves the input: the same gradient).

The public functions here have torch's signatures (tt.selu, tt.threshold_, tt.prelu ...);
nn/functional.py's F.elu, F.selu(inplace=) ... are thin forms over them.
"""
from __future__ import annotations


from .. import dtypes as _dt
from ..autograd.graph import rename_node
from ..backends import numpy_act
from ..backends import numpy_ref
from ..backends import triton as tb
from ..tensor import Tensor
from . import softmax as _softmax
from ._checks import check_tensor
from ._shapes import wrap_dim
from .copy import check_scalar_fits
from .creation import zeros_like
from .dispatch import dispatch, empty
from .generators import uniform_
from .joining import cat
from .elementwise import (
    _needed, _not_implemented, abs as _abs, add, div, exp, gt, le, lt, mul, neg, same_type_rule, sigmoid, sub,
    tanh, where,
)
from .elementwise import dispatch_inplace
from .pointwise import _and, _float_input_rule
from .surface import declare
from .table import DIAGONAL, FROM_BACKWARD, Meta, op, signature_rule


# --------------------------------------------------------------------------- entries
def _launcher(fn, scalars):
    """Launch FN ``fn`` on the tensor operands followed by the attributes named ``scalars``."""
    def launch(out, *tensors, compute, **attrs):
        tb.elementwise(fn, out, [*tensors, *(attrs[s] for s in scalars)], compute)
    return launch


def _entry(name, args, rule, backward, saves=("x",), scalars=(), fn=None, reference=None, **fields):
    """A pointwise activation entry: FN ``fn`` (default: the name) of kernels/elementwise.py on
    the operands ``args`` then the attributes ``scalars``; TensorIterator's output layout."""
    fn = fn or name
    fields.setdefault("jvp", DIAGONAL)      # pointwise: a diagonal Jacobian (autograd/forward_ad.py)
    return op(name, args, rule=rule, layout="iterator", reference=reference or numpy_ref.elementwise(fn),
              kernel=_launcher(fn, scalars), backward=backward, saves=saves, **fields)


def _zeros_for_x(ctx, gg):
    """The derivative of a backward that is piecewise constant in x (hardshrink, threshold ...):
    zeros, as torch's zeros_like(grad)."""
    return zeros_like(gg)


def _backward_entry(name, rule, forward_again, d_x, scalars=(), fn=None, args=("grad", "x"), **fields):
    """The fused first derivative ``name(grad, x, ...)``: linear in grad, so its derivative in
    grad is itself applied to gg (``forward_again(ctx, gg)``); ``d_x(ctx, gg)`` the one in x."""
    def backward(ctx, gg):
        return _needed(ctx, lambda: forward_again(ctx, gg), lambda: d_x(ctx, gg), *((lambda: None,) * (len(args) - 2)))
    return _entry(name, args, rule, backward, saves=args, scalars=scalars, fn=fn, **fields)


def _torch_kernel_rule(kernel):
    """torch's floating-only kernels, named as its dispatch error names them (elu_cpu ...)."""
    return _float_input_rule(kernel)


# elu, celu, selu: torch's elu kernel (negcoef, poscoef, input_scale); its dtype error names elu_cpu
_ELU_RULE = _torch_kernel_rule("elu")
_ELU_BACKWARD_RULE = _torch_kernel_rule("elu_backward")


def _elu_second(ctx, gg):
    return where(le(ctx.x, 0), mul(mul(gg, ctx.grad), mul(exp(ctx.x), ctx.alpha)), 0.0)


def _celu_second(ctx, gg):
    inv = 1.0 / ctx.alpha
    return where(le(ctx.x, 0), mul(mul(gg, ctx.grad), mul(exp(mul(ctx.x, inv)), inv)), 0.0)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _selu_second(ctx, gg):
    return where(le(ctx.x, 0), mul(mul(gg, ctx.grad), mul(exp(ctx.x), _SELU_ALPHA * _SELU_SCALE)), 0.0)


ELU_BACKWARD = _backward_entry("elu_backward", _ELU_BACKWARD_RULE,
                               lambda ctx, gg: dispatch(ELU_BACKWARD, gg, ctx.x, alpha=ctx.alpha), _elu_second,
                               scalars=("alpha",))
CELU_BACKWARD = _backward_entry("celu_backward", _ELU_BACKWARD_RULE,
                                lambda ctx, gg: dispatch(CELU_BACKWARD, gg, ctx.x, alpha=ctx.alpha), _celu_second,
                                scalars=("alpha",), grad_name="EluBackwardBackward0")
SELU_BACKWARD = _backward_entry("selu_backward", _ELU_BACKWARD_RULE,
                                lambda ctx, gg: dispatch(SELU_BACKWARD, gg, ctx.x), _selu_second,
                                grad_name="EluBackwardBackward0")
ELU = _entry("elu", ("x",), _ELU_RULE, lambda ctx, g: dispatch(ELU_BACKWARD, g, ctx.x, alpha=ctx.alpha),
             scalars=("alpha",))
CELU = _entry("celu", ("x",), _ELU_RULE, lambda ctx, g: dispatch(CELU_BACKWARD, g, ctx.x, alpha=ctx.alpha),
              scalars=("alpha",))
SELU = _entry("selu", ("x",), _ELU_RULE, lambda ctx, g: dispatch(SELU_BACKWARD, g, ctx.x),
              grad_name="EluBackward0")

# hardshrink, softshrink: the gradient passes outside [-lambd, lambd]
HARDSHRINK_BACKWARD = _backward_entry(
    "hardshrink_backward", _torch_kernel_rule("hardshrink_backward"),
    lambda ctx, gg: dispatch(HARDSHRINK_BACKWARD, gg, ctx.x, lambd=ctx.lambd), _zeros_for_x, scalars=("lambd",))
SOFTSHRINK_BACKWARD = _backward_entry(
    "softshrink_backward", _torch_kernel_rule("softshrink_backward"),
    lambda ctx, gg: dispatch(SOFTSHRINK_BACKWARD, gg, ctx.x, lambd=ctx.lambd), _zeros_for_x, scalars=("lambd",))
HARDSHRINK = _entry("hardshrink", ("x",), _torch_kernel_rule("hardshrink"),
                    lambda ctx, g: dispatch(HARDSHRINK_BACKWARD, g, ctx.x, lambd=ctx.lambd), scalars=("lambd",))
# torch's softshrink checks lambd in a kernel named softshrink_check (cpu and cuda alike)
SOFTSHRINK = _entry("softshrink", ("x",), _float_input_rule("softshrink", ("softshrink_check", "softshrink_check")),
                    lambda ctx, g: dispatch(SOFTSHRINK_BACKWARD, g, ctx.x, lambd=ctx.lambd), scalars=("lambd",))


# hardsigmoid: torch's hardsigmoid_backward has no derivative (its NotImplemented node raises
# "derivative for aten::hardsigmoid_backward is not implemented"); the derivative is well defined
# (itself in grad, 0 in x: the backward is piecewise constant in x), so this one gives it
HARDSIGMOID_BACKWARD = _backward_entry(
    "hardsigmoid_backward", _torch_kernel_rule("hardsigmoid_backward"),
    lambda ctx, gg: dispatch(HARDSIGMOID_BACKWARD, gg, ctx.x), _zeros_for_x)
HARDSIGMOID = _entry("hardsigmoid", ("x",), _torch_kernel_rule("hardsigmoid"),
                     lambda ctx, g: dispatch(HARDSIGMOID_BACKWARD, g, ctx.x))

# hardswish: d/dx [grad (x/3 + 1/2)] = grad / 3 strictly inside (-3, 3), as torch's double backward
HARDSWISH_BACKWARD = _backward_entry(
    "hardswish_backward", _torch_kernel_rule("hardswish_backward"),
    lambda ctx, gg: dispatch(HARDSWISH_BACKWARD, gg, ctx.x),
    lambda ctx, gg: where(_and(gt(ctx.x, -3.0), lt(ctx.x, 3.0)), div(mul(gg, ctx.grad), 3.0), 0.0))
HARDSWISH = _entry("hardswish", ("x",), _torch_kernel_rule("hardswish"),
                   lambda ctx, g: dispatch(HARDSWISH_BACKWARD, g, ctx.x))

# logsigmoid: d/dx log(sigmoid(x)) = 1 - sigmoid(x); its derivative -s (1 - s)
LOG_SIGMOID_BACKWARD = _backward_entry(
    "log_sigmoid_backward", _torch_kernel_rule("log_sigmoid_backward"),
    lambda ctx, gg: dispatch(LOG_SIGMOID_BACKWARD, gg, ctx.x),
    lambda ctx, gg: _log_sigmoid_second(ctx.x, mul(gg, ctx.grad)))
LOG_SIGMOID = _entry("log_sigmoid", ("x",), _torch_kernel_rule("log_sigmoid"),
                     lambda ctx, g: dispatch(LOG_SIGMOID_BACKWARD, g, ctx.x), grad_name="LogSigmoidBackward0")


def _log_sigmoid_second(x, g):
    s = sigmoid(x)
    return mul(mul(g, sub(s, 1)), s)


# softplus: linear above threshold (of x * beta); the backward FN reads x * beta (one multiply
# first when beta != 1); the second derivative is beta s (1 - s), s = sigmoid(x beta), below it
def _softplus_backward_launch(out, grad, x, *, compute, beta, threshold):
    if beta != 1.0:
        scaled = out if out.dtype.name == compute else empty(out.shape, _dt.as_dtype(compute), out.device)
        tb.elementwise("mul", scaled, [x, beta], compute)
        x = scaled
    tb.elementwise("softplus_backward_scaled", out, [grad, x, threshold], compute)


def _softplus_second(ctx, gg):
    xb = mul(ctx.x, ctx.beta)
    s = sigmoid(xb)
    return where(lt(xb, ctx.threshold), mul(mul(mul(gg, ctx.grad), mul(s, sub(1, s))), ctx.beta), 0.0)


SOFTPLUS_BACKWARD = op("softplus_backward", ("grad", "x"), jvp=DIAGONAL, rule=_torch_kernel_rule("softplus_backward"),
                       layout="iterator", reference=numpy_act.softplus_backward, kernel=_softplus_backward_launch,
                       backward=lambda ctx, gg: _needed(ctx, lambda: _softplus_backward(gg, ctx),
                                                        lambda: _softplus_second(ctx, gg)),
                       saves=("grad", "x"))


def _softplus_backward(g, ctx):
    return dispatch(SOFTPLUS_BACKWARD, g, ctx.x, beta=ctx.beta, threshold=ctx.threshold)


SOFTPLUS = _entry("softplus", ("x",), _torch_kernel_rule("softplus"), lambda ctx, g: _softplus_backward(g, ctx),
                  scalars=("beta", "threshold"))


# mish: x tanh(softplus(x)); mish'' = (1 - t^2) s (2 + x (1 - s) - 2 x s t), t = tanh(softplus(x))
def _mish_second(x):
    s = sigmoid(x)
    t = tanh(dispatch(SOFTPLUS, x, beta=1.0, threshold=20.0))
    inner = sub(add(mul(x, sub(1, s)), 2), mul(mul(mul(x, s), t), 2))
    return mul(mul(sub(1, mul(t, t)), s), inner)


MISH_BACKWARD = _backward_entry(
    "mish_backward", _torch_kernel_rule("mish_backward"), lambda ctx, gg: dispatch(MISH_BACKWARD, gg, ctx.x),
    lambda ctx, gg: mul(mul(gg, ctx.grad), _mish_second(ctx.x)))
MISH = _entry("mish", ("x",), _torch_kernel_rule("mish"), lambda ctx, g: dispatch(MISH_BACKWARD, g, ctx.x))


# threshold: integer dtypes too (not bool); the gradient is 0 where x <= threshold
@signature_rule
def _threshold_rule(x, *rest, **_):
    meta = same_type_rule(x, *rest)
    if meta.dtype is _dt.bool_:
        raise _not_implemented("threshold", meta.dtype, x.device)
    return meta


THRESHOLD_BACKWARD = _backward_entry(
    "threshold_backward", _threshold_rule,
    lambda ctx, gg: dispatch(THRESHOLD_BACKWARD, gg, ctx.x, threshold=ctx.threshold), _zeros_for_x,
    scalars=("threshold",))
THRESHOLD = _entry("threshold", ("x",), _threshold_rule,
                   lambda ctx, g: dispatch(THRESHOLD_BACKWARD, g, ctx.x, threshold=ctx.threshold),
                   scalars=("threshold", "value"))

# leaky_relu (and rrelu in eval mode, with slope (lower + upper) / 2)
LEAKY_RELU_BACKWARD = _backward_entry(
    "leaky_relu_backward", _torch_kernel_rule("leaky_relu_backward"),
    lambda ctx, gg: dispatch(LEAKY_RELU_BACKWARD, gg, ctx.x, negative_slope=ctx.negative_slope), _zeros_for_x,
    scalars=("negative_slope",))
LEAKY_RELU = _entry("leaky_relu", ("x",), _torch_kernel_rule("leaky_relu"),
                    lambda ctx, g: dispatch(LEAKY_RELU_BACKWARD, g, ctx.x, negative_slope=ctx.negative_slope),
                    scalars=("negative_slope",))

# rrelu in training mode: x * noise where x <= 0, the noise drawn in [lower, upper] and saved
RRELU_WITH_NOISE_BACKWARD = _backward_entry(
    "rrelu_with_noise_backward", _torch_kernel_rule("rrelu_with_noise_backward"),
    lambda ctx, gg: dispatch(RRELU_WITH_NOISE_BACKWARD, gg, ctx.x, ctx.noise), _zeros_for_x,
    args=("grad", "x", "noise"))
RRELU_WITH_NOISE = _entry("rrelu_with_noise", ("x", "noise"), _torch_kernel_rule("rrelu_with_noise_out"),
                          lambda ctx, g: (dispatch(RRELU_WITH_NOISE_BACKWARD, g, ctx.x, ctx.noise), None),
                          saves=("x", "noise"))


# prelu: torch's _prelu_kernel(x, weight), weight already shaped to broadcast over x's channel dim;
# the weight's gradient comes full-size and autograd sums it over the broadcast dims
PRELU_INPUT_BACKWARD = _backward_entry(
    "prelu_input_backward", _torch_kernel_rule("prelu_backward"),
    lambda ctx, gg: dispatch(PRELU_INPUT_BACKWARD, gg, ctx.x, ctx.w), _zeros_for_x, args=("grad", "x", "w"),
    grad_name="PreluKernelBackwardBackward0")
PRELU_INPUT_BACKWARD.backward = lambda ctx, gg: _needed(
    ctx, lambda: dispatch(PRELU_INPUT_BACKWARD, gg, ctx.x, ctx.w), lambda: zeros_like(gg),
    lambda: where(gt(ctx.x, 0), 0.0, mul(gg, ctx.grad)))
PRELU_WEIGHT_BACKWARD = _backward_entry(
    "prelu_weight_backward", _torch_kernel_rule("prelu_backward"),
    lambda ctx, gg: dispatch(PRELU_WEIGHT_BACKWARD, gg, ctx.x),
    lambda ctx, gg: where(gt(ctx.x, 0), 0.0, mul(gg, ctx.grad)), grad_name="PreluKernelBackwardBackward0")
PRELU = _entry("prelu", ("x", "w"), _torch_kernel_rule("prelu"),
               lambda ctx, g: _needed(ctx, lambda: dispatch(PRELU_INPUT_BACKWARD, g, ctx.x, ctx.w),
                                      lambda: dispatch(PRELU_WEIGHT_BACKWARD, g, ctx.x)),
               saves=("x", "w"), grad_name="PreluKernelBackward0")


# glu: a * sigmoid(b) for the two halves a, b of x along dim (views of x's memory)
def _halves(t, dim):
    """The two halves of ``t`` along ``dim`` as views sharing its storage (no autograd)."""
    h = t.shape[dim] // 2
    shape = tuple(t.shape[:dim]) + (h,) + tuple(t.shape[dim + 1:])
    strides = t.stride()
    return (Tensor._make(t._storage, shape, strides, t._offset, t.dtype),
            Tensor._make(t._storage, shape, strides, t._offset + h * strides[dim], t.dtype))


@signature_rule
def _glu_rule(x, *, dim):
    if not x.dtype.is_floating_point:
        raise _not_implemented("glu", x.dtype, x.device)
    shape = list(x.shape)
    shape[dim] //= 2
    return Meta(tuple(shape), x.dtype, _dt.compute_dtype(x.dtype))


@signature_rule
def _glu_backward_rule(grad, x, *, dim):
    dtype = _dt.result_type(grad, x)
    return Meta(tuple(x.shape), dtype, _dt.compute_dtype(dtype))


def _glu_launch(out, x, *, compute, dim):
    tb.elementwise("glu_halves", out, list(_halves(x, dim)), compute)


def _glu_backward_launch(out, grad, x, *, compute, dim):
    a, b = _halves(x, dim)
    out_a, out_b = _halves(out, dim)
    tb.elementwise("glu_grad_first", out_a, [grad, b], compute)
    tb.elementwise("glu_grad_second", out_b, [grad, a, b], compute)


def _glu_backward_backward(ctx, gg):
    """dx = [g s, g a s (1 - s)] (s = sigmoid(b)): its derivatives given gg = [gga, ggb]."""
    grad, x, dim = ctx.grad, ctx.x, ctx.dim
    h = x.shape[dim] // 2
    a, b = x.narrow(dim, 0, h), x.narrow(dim, h, h)
    gga, ggb = gg.narrow(dim, 0, h), gg.narrow(dim, h, h)
    s = sigmoid(b)
    ds = mul(s, sub(1, s))                       # s'
    d_grad = d_x = None
    if ctx.needs_input_grad[0]:
        d_grad = add(mul(gga, s), mul(mul(ggb, a), ds))
    if ctx.needs_input_grad[1]:
        d_a = mul(mul(ggb, grad), ds)
        d_b = add(mul(mul(gga, grad), ds), mul(mul(mul(ggb, grad), a), mul(ds, sub(1, mul(s, 2)))))
        d_x = cat([d_a, d_b], dim)
    return d_grad, d_x


GLU_BACKWARD = op("glu_backward", ("grad", "x"), jvp=FROM_BACKWARD, rule=_glu_backward_rule, reference=numpy_act.glu_backward,
                  kernel=_glu_backward_launch, backward=_glu_backward_backward, saves=("grad", "x"))
GLU = op("glu", ("x",), jvp=FROM_BACKWARD, rule=_glu_rule, reference=numpy_act.glu, kernel=_glu_launch,
         backward=lambda ctx, g: dispatch(GLU_BACKWARD, g, ctx.x, dim=ctx.dim), saves=("x",))


# --------------------------------------------------------------------------- functions
def _number(name, arg, v, position):
    """A Scalar argument as torch reads it: a Python number, or a one-element tensor's value."""
    if isinstance(v, Tensor):
        return v.item()
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Number, not {type(v).__name__}")
    return v


def _inplace_named(self, name):
    """torch names the node of an in-place activation ...Backward1 (it saves the result)."""
    if self._base is None:
        rename_node(self, name)
    return self


def elu(input, alpha=1.0, inplace=False):
    """F.elu: x for x > 0, alpha (e^x - 1) otherwise."""
    check_tensor("elu", input)
    alpha = float(_number("elu", "alpha", alpha, 2))
    if inplace:
        return _inplace_named(dispatch_inplace(ELU, input, alpha=alpha), "EluBackward1")
    return dispatch(ELU, input, alpha=alpha)


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def selu(input):
    """torch.selu: scale * elu(x, alpha) with SELU's constants (EluBackward0, as torch)."""
    check_tensor("selu", input)
    return dispatch(SELU, input)


def selu_(input):
    check_tensor("selu_", input)
    return _inplace_named(dispatch_inplace(SELU, input), "EluBackward1")


def _celu_alpha(name, alpha):
    alpha = float(_number(name, "alpha", alpha, 2))
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return alpha


def celu(input, alpha=1.0):
    """torch.celu: max(0, x) + min(0, alpha (e^(x / alpha) - 1))."""
    check_tensor("celu", input)
    return dispatch(CELU, input, alpha=_celu_alpha("celu", alpha))


def celu_(input, alpha=1.0):
    check_tensor("celu_", input)
    return _inplace_named(dispatch_inplace(CELU, input, alpha=_celu_alpha("celu_", alpha)), "CeluBackward1")


def hardshrink(input, lambd=0.5):
    """torch.hardshrink: 0 for -lambd <= x <= lambd, x elsewhere."""
    check_tensor("hardshrink", input)
    return dispatch(HARDSHRINK, input, lambd=float(_number("hardshrink", "lambd", lambd, 2)))


def softshrink(input, lambd=0.5):
    """F.softshrink: x - lambd above lambd, x + lambd below -lambd, 0 between."""
    check_tensor("softshrink", input)
    lambd = float(_number("softshrink", "lambd", lambd, 2))
    if input.dtype.is_floating_point and not 0 <= lambd <= _dt.finfo(input.dtype).max:
        raise RuntimeError(f"lambda must be in range [0, {_dt.finfo(input.dtype).max:g}] for input dtype "
                           f"{_dt.type_name(input.dtype)}, but found {lambd:g}")
    return dispatch(SOFTSHRINK, input, lambd=lambd)


def hardsigmoid(input, inplace=False):
    """F.hardsigmoid: relu6(x + 3) / 6."""
    check_tensor("hardsigmoid", input)
    return dispatch_inplace(HARDSIGMOID, input) if inplace else dispatch(HARDSIGMOID, input)


def hardswish(input, inplace=False):
    """F.hardswish: x relu6(x + 3) / 6."""
    check_tensor("hardswish", input)
    return dispatch_inplace(HARDSWISH, input) if inplace else dispatch(HARDSWISH, input)


def logsigmoid(input):
    """F.logsigmoid: log(1 / (1 + e^-x)), computed without overflow."""
    check_tensor("log_sigmoid", input)
    return dispatch(LOG_SIGMOID, input)


def mish(input, inplace=False):
    """F.mish: x tanh(softplus(x))."""
    check_tensor("mish", input)
    return dispatch_inplace(MISH, input) if inplace else dispatch(MISH, input)


def softplus(input, beta=1.0, threshold=20.0):
    """F.softplus: log(1 + e^(beta x)) / beta, linear (x) where beta x > threshold."""
    check_tensor("softplus", input)
    return dispatch(SOFTPLUS, input, beta=float(_number("softplus", "beta", beta, 2)),
                    threshold=float(_number("softplus", "threshold", threshold, 3)))


def _threshold_scalars(name, input, threshold, value):
    """torch's Scalars in the input's dtype: an integer tensor truncates them (C++'s cast)."""
    threshold = _number(name, "threshold", threshold, 2)
    value = _number(name, "value", value, 3)
    dtype = input.dtype
    for v in (threshold, value):
        check_scalar_fits(v, dtype)
    if dtype.is_floating_point:
        return float(threshold), float(value)
    if dtype is _dt.bool_:
        raise _not_implemented("threshold", dtype, input.device)
    bits = dtype.itemsize * 8
    if dtype is _dt.uint8:       # a negative int wraps, as C++'s conversion
        return int(threshold) % (1 << bits), int(value) % (1 << bits)
    return int(threshold), int(value)


def threshold(input, threshold, value):
    """torch.threshold: value where x <= threshold, x elsewhere."""
    check_tensor("threshold", input)
    th, value = _threshold_scalars("threshold", input, threshold, value)
    return dispatch(THRESHOLD, input, threshold=th, value=value)


def threshold_(input, threshold, value):
    check_tensor("threshold_", input)
    th, value = _threshold_scalars("threshold_", input, threshold, value)
    return _inplace_named(dispatch_inplace(THRESHOLD, input, threshold=th, value=value), "ThresholdBackward1")


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """F.leaky_relu: x for x > 0, negative_slope * x otherwise (NaN stays NaN); the gradient is
    1 or the slope, the slope at 0 (torch's leaky_relu_backward: self > 0)."""
    check_tensor("leaky_relu", input)
    slope = float(_number("leaky_relu", "negative_slope", negative_slope, 2))
    if inplace:
        return _inplace_named(dispatch_inplace(LEAKY_RELU, input, negative_slope=slope), "LeakyReluBackward1")
    return dispatch(LEAKY_RELU, input, negative_slope=slope)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


def _check_rrelu_bounds(lower, upper):
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")


def _rrelu(name, input, lower, upper, training, generator, inplace):
    check_tensor(name, input)
    lower = float(_number(name, "lower", lower, 2))
    upper = float(_number(name, "upper", upper, 3))
    _check_rrelu_bounds(lower, upper)
    node = "RreluWithNoiseBackward1" if inplace else "RreluWithNoiseBackward0"
    if not training:         # torch: leaky_relu with the mean slope, recorded as rrelu's node
        if not input.dtype.is_floating_point:
            raise _not_implemented("leaky_relu", input.dtype, input.device)
        slope = (lower + upper) / 2
        out = (dispatch_inplace(LEAKY_RELU, input, negative_slope=slope) if inplace
               else dispatch(LEAKY_RELU, input, negative_slope=slope))
        return _inplace_named(out, node) if inplace else rename_node(out, node)
    if not input.dtype.is_floating_point:
        raise _not_implemented("rrelu_with_noise_out", input.dtype, input.device)
    noise = empty(tuple(input.shape), input.dtype, input.device)
    uniform_(noise, lower, upper, generator=generator)
    if inplace:
        return _inplace_named(dispatch_inplace(RRELU_WITH_NOISE, input, noise), node)
    return dispatch(RRELU_WITH_NOISE, input, noise)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """torch.rrelu: in training, x * a where x <= 0 with a drawn uniformly in [lower, upper] from
    the library's generator (saved for the backward); in eval, leaky_relu with slope
    (lower + upper) / 2."""
    return _rrelu("rrelu", input, lower, upper, training, generator, False)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return _rrelu("rrelu_", input, lower, upper, training, generator, True)


def prelu(input, weight):
    """torch.prelu: x for x > 0, w * x otherwise, w one value or one per channel (dim 1)."""
    check_tensor("prelu", input)
    check_tensor("prelu", weight, "weight", 2)
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {_dt.type_name(input.dtype)} and "
                           f"{_dt.type_name(weight.dtype)}")
    ndim = input.dim()
    if weight.numel() != 1:
        if ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if ndim > 1 else 1
        if channels != weight.numel():
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{weight.numel()} and channel size = {channels}.")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
    if ndim != weight.dim():
        shape = [1] * ndim
        if ndim > 1:
            shape[1] = weight.numel()
        weight = weight.reshape(tuple(shape))
    return dispatch(PRELU, input, weight)


def glu(input, dim=-1):
    """F.glu: a * sigmoid(b), a and b the halves of the input along dim."""
    check_tensor("glu", input)
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = wrap_dim(dim, input.dim())
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {input.shape[dim]}")
    return dispatch(GLU, input, dim=dim)


def softmin(input, dim, dtype=None):
    """softmax(-x) along dim (torch records NegBackward0 then SoftmaxBackward0)."""
    return _softmax.softmax(neg(input), dim, dtype=dtype)


def softsign(input):
    """F.softsign: x / (1 + |x|), as torch composes it (DivBackward0)."""
    return div(input, add(_abs(input), 1))


def tanhshrink(input):
    """F.tanhshrink: x - tanh(x), as torch composes it (SubBackward0)."""
    return sub(input, tanh(input))


def softmax2d_dim(input):
    """Softmax2d's dim: -3 of a 3-d or 4-d input (torch's check and message)."""
    if input.dim() not in (3, 4):
        raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
    return -3


# --------------------------------------------------------------------------- public surface
# torch.* and Tensor.* forms (F's are in nn/functional.py, declared "own" there)
declare("selu", selu, method=False, inplace=selu_, inplace_function=True, inplace_method=False, functional="own")
declare("celu", celu, method=False, inplace=celu_, inplace_function=True, inplace_method=False, functional="own")
declare("threshold", threshold, method=False, inplace=threshold_, inplace_function=True, inplace_method=False,
        functional="own")
declare("rrelu", rrelu, method=False, inplace=rrelu_, inplace_function=True, inplace_method=False, functional="own")
declare("hardshrink", hardshrink, functional=True)
declare("prelu", prelu, functional=True)
for _name in ("elu", "elu_", "selu_", "celu_", "threshold_", "rrelu_", "glu", "hardsigmoid", "hardswish",
              "logsigmoid", "mish", "softmin", "softplus", "softshrink", "softsign", "tanhshrink"):
    declare(_name, method=False, functional="own")
