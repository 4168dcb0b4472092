"""Elementwise ops: shape rule (broadcasting), dtype rule (torch's result_type), one table entry each.

Every entry shares one generic Triton kernel per arity; the entry names the small jitted
function the kernel applies (``backends.triton.elementwise(fn, ...)``) and the NumPy ufunc
that is its reference.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dtypes as _dt
from ..backends import numpy_ref
from ..backends import triton as tb
from ..backends.base import backend_for
from ..tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.grad_mode import _state as _grad_state
from .dispatch import dispatch, empty
from .dispatch import dispatch_inplace as _dispatch_inplace
from .table import DIAGONAL, Meta, op, signature_rule
from ._checks import check_tensor, not_tensor_error
from ._overlap import check_inplace_overlap
from ._scalars import as_number
from ._shapes import broadcast_shapes  # noqa: F401  (re-exported: ew.broadcast_shapes)
from .copy import check_scalar_fits, to_dtype
from .creation import zeros_like
from .surface import declare, unary


def dispatch_inplace(entry, self, *others, **attrs):
    """An in-place elementwise op: torch's memory-overlap checks (an expanded ``self``, an input
    partly overlapping it), then dispatch's in-place road."""
    check_inplace_overlap(self, *others)
    return _dispatch_inplace(entry, self, *others, **attrs)


# --------------------------------------------------------------------------- rules
def _shapes(args):
    return [a.shape for a in args if isinstance(a, Tensor)]


def _check_operands(name, args):
    for a in args:
        if not isinstance(a, (Tensor, bool, int, float)):
            raise TypeError(f"{name}(): argument 'other' must be Tensor or Number, not {type(a).__name__}")


@signature_rule
def same_type_rule(*args, **_):
    """Arithmetic: the result has the promoted type; 16-bit floats compute in float32."""
    dtype = _dt.result_type(*args)
    return Meta(broadcast_shapes(*_shapes(args)), dtype, _dt.compute_dtype(dtype))


@signature_rule
def float_rule(*args, **_):
    """Ops whose result is floating even for integer inputs (exp, log, true division ...)."""
    dtype = _dt.result_type(*args)
    if not dtype.is_floating_point:
        dtype = _dt.get_default_dtype()
    return Meta(broadcast_shapes(*_shapes(args)), dtype, _dt.compute_dtype(dtype))


@signature_rule
def compare_rule(*args, **_):
    dtype = _dt.result_type(*args)
    return Meta(broadcast_shapes(*_shapes(args)), _dt.bool_, _dt.compute_dtype(dtype))


def launcher(fn):
    """The Triton launch of elementwise function ``fn`` (see backends/triton/_elementwise.py)."""
    def launch(out, *args, compute, **attrs):
        tb.elementwise(fn, out, list(args), compute, **attrs)
    return launch


def _elementwise(name, args, rule, backward=None, saves=(), differentiable=True, fn=None, grad_name=None,
                 **fields):
    """A pointwise entry: the shared kernel of its arity applying FN ``fn`` (default: the name),
    the FN's NumPy reference, TensorIterator's output layout."""
    fn = fn or name
    fields.setdefault("layout", "iterator")
    if backward is not None:
        fields.setdefault("jvp", DIAGONAL)      # a diagonal Jacobian: the backward is its own transpose
    return op(name, args, rule=rule, reference=numpy_ref.elementwise(fn),
              kernel=launcher(fn), backward=backward, saves=saves,
              differentiable=differentiable, grad_name=grad_name, **fields)


def _by_scalar_position(base):
    """torch numbers overloads: Tensor-Scalar 0, Tensor-Tensor 1, Scalar-Tensor 2 (PowBackward2)."""
    def name(args, attrs):
        x, y = args
        return f"{base}{0 if not isinstance(y, Tensor) else (1 if isinstance(x, Tensor) else 2)}"
    return name


def _not_implemented(kernel, dtype, device):
    """torch's dispatch error for a dtype a kernel has no case for."""
    where_ = backend_for(device).torch_kind if device is not None else "cpu"
    return NotImplementedError(f'"{kernel}_{where_}" not implemented for \'{_dt.type_name(dtype)}\'')


def _device_of(*args):
    for a in args:
        if isinstance(a, Tensor):
            return a.device
    return None


def _zeros(ctx, g):
    """The gradient of a step function (floor, sign, ...): zero, as torch's zeros_like(grad)."""
    return zeros_like(g)


def _integer_division_rule(name):
    def rule(x, y, **_):
        meta = same_type_rule(x, y)
        if meta.dtype is _dt.bool_:
            raise _not_implemented(name, _dt.bool_, _device_of(x, y))
        return meta
    return rule


# --------------------------------------------------------------------------- entries
# Backward rules are tritensor ops, so they are differentiable again (create_graph=True).
# the arithmetic core's forward rules are written out (DIAGONAL would run the backward once per
# dual operand): a tangent None is a zero one
def _sum_of(a, b):
    return b if a is None else (a if b is None else add(a, b))


ADD = _elementwise("add", ("x", "y"), same_type_rule, lambda ctx, g: (g, g), jvp=lambda ctx, tx, ty: _sum_of(tx, ty))
SUB = _elementwise("sub", ("x", "y"), same_type_rule, lambda ctx, g: (g, neg(g)),
                   grad_name=lambda args, attrs: "RsubBackward1" if not isinstance(args[0], Tensor) else "SubBackward0",
                   jvp=lambda ctx, tx, ty: _sum_of(tx, None if ty is None else neg(ty)))
def _needed(ctx, *grads):
    """Only the gradients some input needs are computed: each is a thunk."""
    out = []      # a loop, not a generator: no Python call per gradient (issue 14)
    for fn, need in zip(grads, ctx.needs_input_grad):
        out.append(fn() if need else None)
    return tuple(out)


def _mul_backward(ctx, g):
    need_x, need_y = ctx.needs_input_grad
    # dispatch directly (the forward's operands passed mul's checks): still tritensor ops, so
    # create_graph=True records them (issue 14: no front end per gradient). Only the operand a
    # gradient needs is unpacked (as torch's MulBackward0): the other may have been modified in
    # place since without failing the version check.
    if need_x and need_y:
        x, y = ctx.x, ctx.y
        if _fusable_mul_grads(g, x, y):
            return mul_grads(g, x, y)
        return dispatch(MUL, g, y), dispatch(MUL, g, x)
    return (dispatch(MUL, g, ctx.y) if need_x else None), (dispatch(MUL, g, ctx.x) if need_y else None)


def _fusable_mul_grads(g, x, y):
    """Both gradients of x * y come from one kernel (3 reads, 2 writes instead of 4 reads and 2
    writes) where the device's backend has that kernel (Triton's), when no graph of the backward
    is recorded (create_graph=False: the fused results need no history) and both gradients have
    one dtype."""
    # the cheap tests first (grad mode is one attribute read; the backend's kernels one call):
    # on the cpu a repeated backward pays two calls here (issue 14)
    if _grad_state.enabled or not isinstance(x, Tensor) or not isinstance(y, Tensor):
        return False
    dev = g._storage.device
    return ("mul_backward" in backend_for(dev).fused_kernels
            and x.device == dev and y.device == dev
            and _dt.result_type(g, x) is _dt.result_type(g, y))


def mul_grads(grad, x, y):
    """(grad * y, grad * x) in one pass over memory, full size (the autograd layer sums each back
    over its input's broadcast dims). Not recorded: only for backward passes without create_graph."""
    dtype = _dt.result_type(grad, x)
    shape = broadcast_shapes(grad.shape, x.shape, y.shape)
    gx, gy = empty(shape, dtype, grad.device), empty(shape, dtype, grad.device)
    tb.elementwise("mul_backward", (gx, gy), [grad, x, y], _dt.compute_dtype(dtype).name)
    return gx, gy


MUL = _elementwise("mul", ("x", "y"), same_type_rule, _mul_backward, saves=("x", "y"),
                   jvp=lambda ctx, tx, ty: _sum_of(None if tx is None else mul(tx, ctx.y),
                                                   None if ty is None else mul(ctx.x, ty)))
def _div_backward(ctx, g):
    need_x, need_y = ctx.needs_input_grad
    y = ctx.y        # tritensor ops dispatched directly (the forward's operands passed div's checks)
    return (dispatch(DIV, g, y) if need_x else None,
            neg(dispatch(DIV, dispatch(MUL, g, ctx.out), y)) if need_y else None)


DIV = _elementwise("div", ("x", "y"), float_rule, _div_backward, saves=("y", "out"),      # (tx - out ty) / y
                   jvp=lambda ctx, tx, ty: div(_sum_of(tx, None if ty is None else neg(mul(ctx.out, ty))), ctx.y))
# d/dx 1/x = -1/x^2 = -out^2 (torch: -grad * (result * result).conj())
RECIPROCAL = _elementwise("reciprocal", ("x",), float_rule,
                          lambda ctx, g: mul(g, neg(mul(ctx.out, ctx.out))), saves=("out",))
# div with a rounding mode (trunc: C's, floor: Python's); the quotients are step functions:
# zero gradients.
def _zero_grads(ctx, g):
    return _needed(ctx, lambda: _zeros(ctx, g), lambda: _zeros(ctx, g))


DIV_TRUNC = _elementwise("div_trunc", ("x", "y"), _integer_division_rule("div_trunc"), _zero_grads,
                         grad_name=lambda args, attrs: "DivBackward2" if isinstance(args[1], Tensor) else "DivBackward3")
DIV_FLOOR = _elementwise("div_floor", ("x", "y"), _integer_division_rule("div_floor"), _zero_grads,
                         grad_name=lambda args, attrs: "DivBackward2" if isinstance(args[1], Tensor) else "DivBackward3")


NEG = _elementwise("neg", ("x",), same_type_rule, lambda ctx, g: neg(g))
EXP = _elementwise("exp", ("x",), float_rule, lambda ctx, g: mul(g, ctx.out), saves=("out",))
LOG = _elementwise("log", ("x",), float_rule, lambda ctx, g: div(g, ctx.x), saves=("x",))
SIN = _elementwise("sin", ("x",), float_rule, lambda ctx, g: mul(g, cos(ctx.x)), saves=("x",))
COS = _elementwise("cos", ("x",), float_rule, lambda ctx, g: neg(mul(g, sin(ctx.x))), saves=("x",))
SQRT = _elementwise("sqrt", ("x",), float_rule, lambda ctx, g: div(g, mul(ctx.out, 2)), saves=("out",))
# sigmoid's gradient is one fused kernel from its saved output: grad * y * (1 - y)
SIGMOID = _elementwise("sigmoid", ("x",), float_rule, lambda ctx, g: sigmoid_backward(g, ctx.out),
                       saves=("out",))


def _tanh_backward_backward(ctx, gg):
    # d/dgrad [grad * (1 - y^2)] = 1 - y^2 ;  d/dy = -2 * grad * y
    return tanh_backward(gg, ctx.y), mul(mul(gg, ctx.grad), mul(ctx.y, -2))


# sigmoid's gradient: one fused kernel grad * y * (1 - y) (its own derivative composite)
def _sigmoid_backward_backward(ctx, gg):
    # grad * y (1 - y): d/dgrad = y (1 - y); d/dy = grad (1 - 2y)
    y = ctx.y
    return _needed(ctx, lambda: sigmoid_backward(gg, y),
                   lambda: mul(mul(gg, ctx.grad), sub(1, mul(y, 2))))


SIGMOID_BACKWARD = _elementwise("sigmoid_backward", ("grad", "y"), float_rule, _sigmoid_backward_backward,
                                saves=("grad", "y"))


# tanh's gradient comes from its saved output in one fused kernel: grad * (1 - y*y).
TANH_BACKWARD = _elementwise("tanh_backward", ("grad", "y"), float_rule, _tanh_backward_backward,
                             saves=("grad", "y"))
TANH = _elementwise("tanh", ("x",), float_rule, lambda ctx, g: tanh_backward(g, ctx.out), saves=("out",))

# relu's gradient is one fused kernel: where(x > 0, grad, 0); it is linear in grad.
RELU_BACKWARD = _elementwise("relu_backward", ("grad", "x"), same_type_rule,
                             lambda ctx, gg: (relu_backward(gg, ctx.x), None), saves=("x",))
@signature_rule
def _relu_rule(x, **_):
    if x.dtype is _dt.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    return same_type_rule(x)


RELU = _elementwise("relu", ("x",), _relu_rule, lambda ctx, g: relu_backward(g, ctx.x), saves=("x",))


def _abs_backward(ctx, g):
    x = ctx.x
    return mul(g, sub(gt(x, 0).to(g.dtype), lt(x, 0).to(g.dtype)))  # g * sign(x), sign(0) = 0


def no_bool_rule(cpu_kernel, cuda_kernel):
    """same_type_rule for ops torch has no bool kernel for (abs, floor ...): its dispatch error,
    naming torch's kernel on each device."""
    @signature_rule
    def rule(x, *rest, **_):
        if x.dtype is _dt.bool_:
            name = backend_for(x.device).torch_name(cpu_kernel, cuda_kernel)
            raise NotImplementedError(f'"{name}" not implemented for \'Bool\'')
        return same_type_rule(x, *rest)
    return rule


ABS = _elementwise("abs", ("x",), no_bool_rule("abs_cpu", "abs_cuda"), _abs_backward, saves=("x",))


@signature_rule
def _pow_rule(x, y):
    meta = same_type_rule(x, y)
    if meta.dtype is _dt.bool_ and not (isinstance(x, Tensor) and isinstance(y, bool)):
        # torch's pow kernels have no bool case; a bool scalar exponent is 1 (a copy) or 0 (ones)
        raise NotImplementedError('"pow" not implemented for \'Bool\'')
    if not meta.dtype.is_floating_point and isinstance(y, int) and not isinstance(y, bool) and y < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    return meta


def _pow_backward(ctx, g):
    x, y, out = ctx.x, ctx.y, ctx.out
    gx = gy = None
    if ctx.needs_input_grad[0]:
        if isinstance(y, (int, float)) and y == 0:
            gx = zeros_like(g)            # torch: zeros_like(self), even where g is NaN or inf
        elif isinstance(y, Tensor):
            # torch's pow_backward_self: 0 where the exponent is 0 (so 0 ** 0 gives 0, not 0 * inf)
            gx = where(eq(y, 0), 0.0, mul(g, mul(y, pow(x, sub(y, 1)))))
        else:
            gx = mul(g, mul(pow(x, y - 1), y))
    if ctx.needs_input_grad[1]:
        # d/dy x^y = x^y log x, taken as 0 where x == 0 and y >= 0 (torch's convention)
        safe = where(logical_and_eq0_ge0(x, y), 0.0, log(x) if isinstance(x, Tensor) else _scalar_log(x))
        gy = mul(mul(g, out), safe)
    return gx, gy


def _scalar_log(x):
    return math.log(x) if x > 0 else (float("-inf") if x == 0 else float("nan"))


def logical_and_eq0_ge0(x, y):
    """(x == 0) & (y >= 0), from elementwise primitives (x or y may be a scalar)."""
    return mul(eq(x, 0), ge(y, 0)) if isinstance(x, Tensor) else mul(ge(y, 0), x == 0)


POW = op("pow", ("x", "y"), jvp=DIAGONAL, rule=_pow_rule, layout="iterator", numbers_are_operands=False, reference=numpy_ref.pow, kernel=launcher("pow"),
         backward=_pow_backward, saves=("x", "y", "out"), grad_name=_by_scalar_position("PowBackward"))


def _max_min_backward(loses):
    """torch's rule: tied inputs split the gradient evenly, the losing side gets 0, and every
    other element (NaN on either side) passes the whole gradient to both inputs."""
    def backward(ctx, g):
        x, y = ctx.x, ctx.y
        tie, half = eq(x, y), mul(g, 0.5)
        return where(tie, half, where(loses(x, y), 0.0, g)), where(tie, half, where(loses(y, x), 0.0, g))
    return backward


MAXIMUM = _elementwise("maximum", ("x", "y"), same_type_rule, _max_min_backward(lambda a, b: lt(a, b)),
                       saves=("x", "y"))
MINIMUM = _elementwise("minimum", ("x", "y"), same_type_rule, _max_min_backward(lambda a, b: gt(a, b)),
                       saves=("x", "y"))

COMPARISONS = {n: _elementwise(n, ("x", "y"), compare_rule, differentiable=False) for n in
               ("eq", "ne", "lt", "le", "gt", "ge")}


@signature_rule
def _where_rule(cond, a, b):
    if isinstance(cond, Tensor) and cond.dtype is not _dt.bool_ and cond.dtype is not _dt.uint8:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype {_dt.type_name(cond.dtype)}")
    dtype = _dt.result_type(a, b)
    return Meta(broadcast_shapes(*_shapes((cond, a, b))), dtype, _dt.compute_dtype(dtype))


WHERE = op("where", ("condition", "x", "y"), jvp=DIAGONAL, rule=_where_rule, layout="iterator", reference=numpy_ref.where,
           kernel=launcher("where"),
           backward=lambda ctx, g: (None, where(ctx.condition, g, 0.0), where(ctx.condition, 0.0, g)),
           saves=("condition",))


# --------------------------------------------------------------------------- functions
def _binary(entry, x, y):
    if isinstance(x, Tensor) and (isinstance(y, Tensor) or type(y) in _PLAIN_NUMBERS):
        return dispatch(entry, x, y)       # nothing to convert or check (issue 14: 3 calls less)
    x, y = as_number(x), as_number(y)
    _check_operands(entry.name, (x, y))
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        raise not_tensor_error(entry.name, x, "input", None)
    return dispatch(entry, x, y)


_PLAIN_NUMBERS = frozenset({bool, int, float})


def _tensor_args(name, x, y):
    """torch's ops with Tensor-Tensor overloads only (maximum, logical_and ...)."""
    check_tensor(name, x)
    check_tensor(name, y, "other", 2)


def _tensor_first(name, x):
    """torch's ops with (Tensor, Tensor) and (Tensor, Scalar) overloads but no (Scalar, Tensor)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({type(x).__name__}, Tensor)")


def add(input, other, *, alpha=1):
    if type(alpha) is not int or alpha != 1:
        other = _scaled(input, as_number(other), alpha)
    return _binary(ADD, input, other)     # (which reads NumPy scalars as numbers)


def _scaled(input, other, alpha):
    """alpha * other, for add/sub's ``alpha`` (``other`` may be a Python number), with torch's
    checks; the result keeps result_type(input, other), as torch computes input + alpha * other
    in that type."""
    _check_operands("add", (input, other))
    dtype = _dt.result_type(input, other)
    if isinstance(alpha, bool) and dtype is not _dt.bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and not dtype.is_floating_point:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if dtype is _dt.bool_:
        alpha = bool(alpha)
    if not isinstance(other, Tensor):
        return bool(other and alpha) if dtype is _dt.bool_ else other * alpha
    if other.dtype is not dtype and other.dim() > 0:
        other = to_dtype(other, dtype)
    return mul(other, alpha)


def _is_bool(a):
    return isinstance(a, bool) or (isinstance(a, Tensor) and a.dtype is _dt.bool_)


def _check_sub(input, other):
    """torch's sub_check: no bool operand (a Python bool counts as a bool tensor)."""
    input_bool = input.dtype is _dt.bool_ if isinstance(input, Tensor) else isinstance(input, bool)
    other_bool = other.dtype is _dt.bool_ if isinstance(other, Tensor) else isinstance(other, bool)
    if input_bool and other_bool:      # (_is_bool of each, inlined: issue 14)
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
                           "`^` or `logical_xor()` operator instead.")
    if input_bool or other_bool:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
                           "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def sub(input, other, *, alpha=1):
    input, other = as_number(input), as_number(other)
    _check_sub(input, other)
    if type(alpha) is not int or alpha != 1:
        other = _scaled(input, other, alpha)
    return _binary(SUB, input, other)


def mul(input, other):
    return _binary(MUL, input, other)


def div(input, other, *, rounding_mode=None):
    """True division, or with ``rounding_mode`` 'trunc' (C) / 'floor' (Python, as floor_divide):
    then integers stay integers (torch's result_type)."""
    return _binary(DIV if rounding_mode is None else rounding_entry(rounding_mode), input, other)


def pow(input, exponent):
    return _binary(POW, input, exponent)


def maximum(input, other):
    _tensor_args("maximum", input, other)
    return _binary(MAXIMUM, input, other)


def minimum(input, other):
    _tensor_args("minimum", input, other)
    return _binary(MINIMUM, input, other)


def neg(input):
    if input.dtype is _dt.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead.")
    return dispatch(NEG, input)


# Plain unary ops: function (with out=) and in-place form generated from the entry and declared
# (ops/surface.py), tt.<name>_ too where torch has it.
exp, exp_ = unary(EXP, inplace_function=True)
log, log_ = unary(LOG, inplace_function=True)
sin, sin_ = unary(SIN, inplace_function=True)
cos, cos_ = unary(COS, inplace_function=True)
tanh, tanh_ = unary(TANH, inplace_function=True, functional=True)
relu, relu_ = unary(RELU, inplace_function=True, functional="own", out=None)
sqrt, sqrt_ = unary(SQRT, inplace_function=True)
sigmoid, sigmoid_ = unary(SIGMOID, inplace_function=True, functional=True)
reciprocal, reciprocal_ = unary(RECIPROCAL, inplace_function=True)


def _rtruediv(self, other):
    """``other / self`` for a number ``other``: torch's Tensor.__rtruediv__ is
    ``self.reciprocal() * other`` (MulBackward0 over ReciprocalBackward0), and anything else is
    NotImplemented (Python's own TypeError)."""
    other = as_number(other)
    if not isinstance(other, (bool, int, float, Tensor)):
        return NotImplemented
    return mul(reciprocal(self), other)
abs, abs_ = unary(ABS, inplace_function=("abs",), aliases=("absolute",), operators=("__abs__",))  # no torch.absolute_
absolute, absolute_ = abs, abs_


def neg_(self):
    if self.dtype is _dt.bool_:
        neg(self)        # torch's error for bool
    return dispatch_inplace(NEG, self)


negative_ = neg_


def tanh_backward(grad, y):
    return dispatch(TANH_BACKWARD, grad, y)


def sigmoid_backward(grad, y):
    return dispatch(SIGMOID_BACKWARD, grad, y)


_ROUNDING = {"trunc": DIV_TRUNC, "floor": DIV_FLOOR}


def rounding_entry(rounding_mode):
    """The table entry of div with ``rounding_mode`` (None: true division, in elementwise.py)."""
    if rounding_mode not in _ROUNDING:
        raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                           f"found '{rounding_mode}'")
    return _ROUNDING[rounding_mode]


def div_trunc(input, other):
    return _binary(DIV_TRUNC, input, other)


def div_floor(input, other):
    return _binary(DIV_FLOOR, input, other)


def relu_backward(grad, x):
    return dispatch(RELU_BACKWARD, grad, x)


def where(condition, input=None, other=None):
    """torch.where; the one-argument form is nonzero(condition, as_tuple=True)."""
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)   # indexing.py sits above elementwise.py
    input, other = as_number(input), as_number(other)
    if isinstance(condition, Tensor) and condition.dtype is _dt.uint8:
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and will be "
                      "removed in a future version of PyTorch. Use a boolean condition instead.", UserWarning,
                      stacklevel=2)
        condition = ne(condition, 0)
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        dtype = _dt.result_type(input, other)
        for v in (input, other):
            check_scalar_fits(v, dtype)       # a no-op for the tensor
    return dispatch(WHERE, condition, input, other)


def _compare(name):
    entry = COMPARISONS[name]

    def fn(input, other):
        _tensor_first(name, input)
        return _binary(entry, input, other)
    fn.__name__ = name
    return fn


eq, ne, lt, le, gt, ge = (_compare(n) for n in ("eq", "ne", "lt", "le", "gt", "ge"))


# --------------------------------------------------------------------------- in-place
def _inplace_binary(entry, self, other):
    return dispatch_inplace(entry, self, other)


def add_(self, other, *, alpha=1):
    if type(alpha) is not int or alpha != 1:
        other = _scaled(self, other, alpha)
    return _inplace_binary(ADD, self, other)


def sub_(self, other, *, alpha=1):
    _check_sub(self, other)
    if type(alpha) is not int or alpha != 1:
        other = _scaled(self, other, alpha)
    return _inplace_binary(SUB, self, other)


def mul_(self, other):
    return _inplace_binary(MUL, self, other)


def div_(self, other, *, rounding_mode=None):
    return _inplace_binary(DIV if rounding_mode is None else rounding_entry(rounding_mode), self, other)


def pow_(self, other):
    return _inplace_binary(POW, self, other)


# --------------------------------------------------------------------------- public surface
# The variants of the hand-written functions above (ops/surface.py); tt, Tensor's methods and
# operators are generated from these.
declare("add", add, inplace=add_, operators=("__add__", "__radd__", "__iadd__"), out="cast")
declare("sub", sub, inplace=sub_, operators=("__sub__", "__rsub__", "__isub__"), aliases=("subtract",),
        out="cast")
declare("mul", mul, inplace=mul_, operators=("__mul__", "__rmul__", "__imul__"), aliases=("multiply",),
        out="cast")
declare("div", div, inplace=div_, operators=("__truediv__", ("__rtruediv__", _rtruediv), "__itruediv__"),
        aliases=("divide", "true_divide"), out="cast")
def square(input):
    """torch.square: ``pow(input, 2)`` (PowBackward0); a bool input gives int64, as pow's."""
    return pow(input, 2)


def square_(self):
    return pow_(self, 2)


declare("square", square, inplace=square_, inplace_function=True, out="cast")
declare("pow", pow, inplace=pow_, operators=("__pow__", "__rpow__", "__ipow__"), out="cast")
declare("neg", neg, inplace=neg_, inplace_function=True, operators=("__neg__",), aliases=("negative",),
        out="cast")
declare("maximum", maximum, out="cast")
declare("minimum", minimum, out="cast")
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    declare(_name, globals()[_name], operators=(f"__{_name}__",), out="cast")
# Tensor.where(condition, y) is self where condition, else y
declare("where", where, method=lambda self, condition, other: where(condition, self, other), out="where")
