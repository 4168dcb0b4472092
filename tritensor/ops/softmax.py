"""The softmax family along one dim: softmax, log_softmax and their backward ops
(kernels/softmax.py), each backward differentiable again (double backward)."""
from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.composite import named_composite
from ..backends import numpy_ref
from ..backends import triton as tb
from . import elementwise as _ew
from ._checks import check_tensor
from ._shapes import wrap_dim
from .dispatch import dispatch
from .reduce import sum as _sum
from .table import FROM_BACKWARD, Meta, op, signature_rule


@signature_rule
def _softmax_rule(x, dim, **_):
    if not x.dtype.is_floating_point:
        raise RuntimeError(f'"softmax" not implemented for \'{_dt.type_name(x.dtype).replace("torch.", "").capitalize()}\'')
    return Meta(tuple(x.shape), x.dtype, _dt.compute_dtype(x.dtype))


@signature_rule
def _softmax_backward_rule(grad, y, dim, **_):
    dtype = _dt.result_type(grad, y)
    return Meta(tuple(y.shape), dtype, _dt.compute_dtype(dtype))


def _row_launcher(mode):
    def launch(out, *args, compute, dim, **_):
        if len(args) == 1:
            tb.softmax(mode, out, args[0], dim, compute)
        else:
            grad, y = args
            tb.softmax(mode, out, y, dim, compute, grad=grad)
    return launch


def _softmax_backward_backward(ctx, gg):
    grad, y, dim = ctx.grad, ctx.y, ctx.dim
    gg_grad = gg_y = None
    if ctx.needs_input_grad[0]:
        gg_grad = softmax_backward(gg, y, dim)
    if ctx.needs_input_grad[1]:
        s = _sum(_ew.mul(grad, y), dim, keepdim=True)
        gg_y = _ew.sub(_ew.mul(gg, _ew.sub(grad, s)), _ew.mul(grad, _sum(_ew.mul(gg, y), dim, keepdim=True)))
    return gg_grad, gg_y


def _log_softmax_backward_backward(ctx, gg):
    grad, y, dim = ctx.grad, ctx.y, ctx.dim
    gg_grad = gg_y = None
    e = _ew.exp(y)
    if ctx.needs_input_grad[0]:
        gg_grad = _ew.sub(gg, _sum(_ew.mul(gg, e), dim, keepdim=True))
    if ctx.needs_input_grad[1]:
        gg_y = _ew.neg(_ew.mul(_ew.mul(gg, e), _sum(grad, dim, keepdim=True)))
    return gg_grad, gg_y


SOFTMAX_BACKWARD = op("softmax_backward", ("grad", "y"), jvp=FROM_BACKWARD, rule=_softmax_backward_rule,
                      reference=numpy_ref.softmax_backward, kernel=_row_launcher("softmax_backward"),
                      backward=_softmax_backward_backward, saves=("grad", "y"),
                      grad_name="SoftmaxBackwardDataBackward0")
LOG_SOFTMAX_BACKWARD = op("log_softmax_backward", ("grad", "y"), jvp=FROM_BACKWARD, rule=_softmax_backward_rule,
                          reference=numpy_ref.log_softmax_backward,
                          kernel=_row_launcher("log_softmax_backward"),
                          backward=_log_softmax_backward_backward, saves=("grad", "y"),
                          grad_name="LogSoftmaxBackwardDataBackward0")
def _log_softmax_jvp(t, y, dim):
    return _ew.sub(t, _sum(_ew.mul(_ew.exp(y), t), dim, keepdim=True))


# softmax's Jacobian diag(y) - y y^T is symmetric: its forward rule is its backward; log_softmax's
# I - 1 softmax^T is not: t - sum(softmax * t)
SOFTMAX = op("softmax", ("x",), rule=_softmax_rule, reference=numpy_ref.softmax, kernel=_row_launcher("softmax"),
             backward=lambda ctx, g: softmax_backward(g, ctx.out, ctx.dim), saves=("out",),
             jvp=lambda ctx, t: softmax_backward(t.to(ctx.out.dtype), ctx.out, ctx.dim),
             grad_name="SoftmaxBackward0")
LOG_SOFTMAX = op("log_softmax", ("x",), rule=_softmax_rule, reference=numpy_ref.log_softmax,
                 kernel=_row_launcher("log_softmax"),
                 backward=lambda ctx, g: log_softmax_backward(g, ctx.out, ctx.dim), saves=("out",),
                 jvp=lambda ctx, t: _log_softmax_jvp(t.to(ctx.out.dtype), ctx.out, ctx.dim),
                 grad_name="LogSoftmaxBackward0")


def softmax_backward(grad, y, dim):
    return dispatch(SOFTMAX_BACKWARD, grad, y, dim=dim)


def log_softmax_backward(grad, y, dim):
    return dispatch(LOG_SOFTMAX_BACKWARD, grad, y, dim=dim)


def _implicit_dim(ndim):
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_call(entry, name, input, dim, dtype):
    check_tensor(name, input)
    if dim is None or isinstance(dim, (tuple, list)):
        raise TypeError(f"{name}(): argument 'dim' (position 1) must be int, not {type(dim).__name__}")
    dim = wrap_dim(dim, input.dim())
    if dtype is not None:
        dtype = _dt.as_dtype(dtype)
        if input.dtype is not dtype:
            input = input.to(dtype)
    if not input.dtype.is_floating_point:
        if input.numel() == 0:          # torch launches no kernel, so it has nothing to refuse
            return input.clone()
        last = "lastdim_" if dim == input.dim() - 1 or input.dim() == 0 else ""
        raise NotImplementedError(
            f'"{name}_{last}kernel_impl" not implemented for \'{_dt.type_name(input.dtype)}\'')
    return dispatch(entry, input, dim=dim)


def softmax(input, dim, dtype=None):
    """torch.softmax / Tensor.softmax: dim is required (F.softmax may leave it out)."""
    return _softmax_call(SOFTMAX, "softmax", input, dim, dtype)


def log_softmax(input, dim, dtype=None):
    return _softmax_call(LOG_SOFTMAX, "log_softmax", input, dim, dtype)


def safe_softmax(input, dim, dtype=None):
    """aten._safe_softmax (tt.ops.aten._safe_softmax): softmax, except that a slice whose values
    are all -inf gives zeros instead of NaN (attention over fully masked rows); one
    SafeSoftmaxBackward0 node, as torch's."""
    return named_composite("SafeSoftmaxBackward0", _safe_softmax, input, dim, dtype)


def _safe_softmax(input, dim, dtype):
    d = wrap_dim(dim, input.dim())
    masked = _ew.eq(input.detach(), float("-inf"))
    if input.dim():
        masked = masked.all(d, keepdim=True)
    # the masked slices are softmaxed as zeros, then replaced: no NaN forward, and none in the
    # gradient (torch's is 0 there: the output it differentiates through is 0)
    out = softmax(_ew.where(masked, 0.0, input), dim, dtype)
    return _ew.where(masked, 0.0, out)
