"""rms_norm: y = x / sqrt(mean(x^2) + eps) * weight over the trailing normalized dims.

A table op with one fused Triton kernel each way (kernels/rms_norm.py: one read of a row
forward, the per-row rstd saved; the backward's dx and a deterministic grad_weight from
per-program partial column sums) and NumPy references (backends/numpy_nn.py). The node is
torch's FusedRmsNormBackward0 (torch's CUDA path; its CPU path is a composite). Under
create_graph the backward is written with table ops, so every order differentiates.
"""
from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.grad_mode import is_grad_enabled
from ..backends import numpy_nn
from ..backends.triton import nn as tnn
from . import creation as _creation
from .dispatch import dispatch, empty
from .nn import _as_rows, _norm_dims, _rows_mergeable, _shape_str, _split_rows, _sum_lead
from .surface import declare
from .table import FROM_BACKWARD, Meta, op


def _check_rms_norm(input, normalized_shape, weight):
    """at::rms_norm's checks (_check_rms_norm_inputs), torch's texts."""
    if not isinstance(normalized_shape, (tuple, list)):     # tt.Size is a tuple
        raise TypeError("rms_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
                        f"{type(normalized_shape).__name__}")
    normalized_shape = tuple(int(s) for s in normalized_shape)
    if len(normalized_shape) == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
                           "one element, but got normalized_shape = []")
    if weight is not None and tuple(weight.shape) != normalized_shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{_shape_str(weight.shape)} and normalized_shape = {_shape_str(normalized_shape)}")
    k = len(normalized_shape)
    if input.dim() < k or tuple(input.shape[input.dim() - k:]) != normalized_shape:
        expected = "[*" + ", ".join(str(s) for s in normalized_shape) + "]"
        raise RuntimeError(f"Given normalized_shape={_shape_str(normalized_shape)}, expected input with shape "
                           f"{expected}, but got input of size{_shape_str(input.shape)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"rms_norm" not implemented for \'{_dt.type_name(input.dtype)}\'')
    return k


def _rms_norm_rule(x, weight, rstd, **_):
    compute = _dt.compute_dtype(x.dtype)
    assert rstd.dtype is compute    # the reference writes it as a view
    return Meta(tuple(x.shape), x.dtype, compute)


def _rms_norm_launch(out, x, weight, rstd, *, compute, eps, n_norm, **_):
    tnn.rms_norm(_as_rows(out, n_norm), _as_rows(x, n_norm), weight, rstd, eps, compute)


def _rms_norm_backward_rule(grad, x, weight, rstd, grad_weight, **_):
    return Meta(tuple(x.shape), x.dtype, _dt.compute_dtype(x.dtype))


def _rms_norm_backward_launch(out, grad, x, weight, rstd, grad_weight, *, compute, n_norm, **_):
    tnn.rms_norm_backward(_as_rows(out, n_norm), _as_rows(grad, n_norm), _as_rows(x, n_norm), weight, rstd,
                          grad_weight, compute)


def _rms_norm_backward_composite(g, x, weight, n_norm, eps, needs):
    """dx = r (gh - xhat mean(gh xhat)) and dw = sum g xhat (xhat = x r, gh = g w,
    r = 1 / sqrt(mean(x^2) + eps)) in table ops: differentiable again (create_graph)."""
    dims, lead = _norm_dims(x, n_norm)
    compute = _dt.compute_dtype(x.dtype)
    xc, gc = x.to(compute), g.to(compute)
    r = ((xc * xc).mean(dims, keepdim=True) + eps).rsqrt()
    xhat = xc * r
    dx = dw = None
    if needs[0]:
        gh = gc * weight.to(compute) if weight is not None else gc
        dx = (r * (gh - xhat * (gh * xhat).mean(dims, keepdim=True))).to(x.dtype)
    if needs[1]:
        dw = _sum_lead(gc * xhat, lead).to(weight.dtype)
    return dx, dw


def _rms_norm_backward(ctx, g):
    x, weight, n_norm, eps = ctx.x, ctx.weight, ctx.n_norm, ctx.eps
    needs = ctx.needs_input_grad
    if is_grad_enabled():
        dx, dw = _rms_norm_backward_composite(g, x, weight, n_norm, eps, needs)
        return dx, dw, None
    if not _rows_mergeable(g, n_norm):
        g = g.contiguous()
    compute = _dt.compute_dtype(x.dtype)
    gw = None
    if needs[1]:   # an empty batch launches nothing: its column sums are zeros
        alloc = empty if x.numel() else (lambda s, d, dev: _creation.zeros(s, dtype=d, device=dev))
        gw = alloc(tuple(weight.shape), compute, x.device)
    dx = dispatch(RMS_NORM_BACKWARD, g, x, weight, ctx.rstd, gw, n_norm=n_norm)
    if gw is not None and gw.dtype is not weight.dtype:
        gw = gw.to(weight.dtype)
    return (dx if needs[0] else None), gw, None


RMS_NORM = op("rms_norm", ("x", "weight", "rstd"), jvp=FROM_BACKWARD, rule=_rms_norm_rule, reference=numpy_nn.rms_norm_nd,
              kernel=_rms_norm_launch, backward=_rms_norm_backward, saves=("x", "weight", "rstd"),
              grad_name="FusedRmsNormBackward0")
# The fused first-order backward: dx, plus grad_weight written into the last argument when given.
RMS_NORM_BACKWARD = op("rms_norm_backward", ("grad", "x", "weight", "rstd", "grad_weight"),
                       rule=_rms_norm_backward_rule, reference=numpy_nn.rms_norm_backward_nd,
                       kernel=_rms_norm_backward_launch)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """torch.rms_norm / F.rms_norm: input * rsqrt(mean(input^2 over the last
    len(normalized_shape) dims) + eps) * weight, computed in float32 for 16-bit inputs (torch's
    opmath), the result in input's dtype. eps=None: the machine epsilon of the compute dtype
    (torch's std::numeric_limits<opmath_t>::epsilon())."""
    k = _check_rms_norm(input, normalized_shape, weight)
    compute = _dt.compute_dtype(input.dtype)
    if eps is None:
        eps = _dt.finfo(compute).eps
    elif not isinstance(eps, (int, float)):
        raise TypeError(f"rms_norm(): argument 'eps' (position 4) must be float, not {type(eps).__name__}")
    if not _rows_mergeable(input, k):
        input = input.contiguous()
    weight = weight.contiguous() if weight is not None else None     # read as N contiguous values
    M, _ = _split_rows(tuple(input.shape), k)
    rstd = empty((M,), compute, input.device)
    return dispatch(RMS_NORM, input, weight, rstd, eps=float(eps), n_norm=k)


declare("rms_norm", rms_norm, method=False, functional=True)
