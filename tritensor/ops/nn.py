"""The nn ops: layer_norm and the class-index cross entropy (fused kernels), nll_loss, embedding.

layer_norm and cross entropy are table ops, each with one fused Triton kernel forward and one
backward (kernels/norm.py, kernels/loss.py) and a NumPy reference (backends/numpy_nn.py). The
table gives every op one output; the statistics the backward needs travel as extra tensor
arguments the kernel writes (layer_norm's per-row mean and rstd), allocated here.
"""
from __future__ import annotations

import math

import numpy as np

from ..runtime import device_errors as _device_errors
from .. import dtypes as _dt
from ..autograd.composite import named_composite
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..backends import triton as tb
from ..backends.base import backend_for
from ..backends import numpy_nn
from ..backends.triton import nn as tnn
from . import creation as _creation
from . import elementwise as _ew
from . import reduce as _reduce
from . import softmax as _softmax
from .dispatch import dispatch, empty
from .joining import stack
from .table import FROM_BACKWARD, Meta, op


def _shape_str(shape):
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


# ------------------------------------------------------------------ layer_norm
def _check_layer_norm(input, normalized_shape, weight, bias):
    if not isinstance(normalized_shape, (tuple, list)):     # tt.Size is a tuple
        raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
                        f"{type(normalized_shape).__name__}")
    normalized_shape = tuple(int(s) for s in normalized_shape)
    if len(normalized_shape) == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
                           "one element, but got normalized_shape = []")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != normalized_shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{_shape_str(t.shape)} and normalized_shape = {_shape_str(normalized_shape)}")
    k = len(normalized_shape)
    if input.dim() < k or tuple(input.shape[input.dim() - k:]) != normalized_shape:
        expected = "[*, " + ", ".join(str(s) for s in normalized_shape) + "]"
        raise RuntimeError(f"Given normalized_shape={_shape_str(normalized_shape)}, expected input with shape "
                           f"{expected}, but got input of size{_shape_str(input.shape)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"LayerNormKernelImpl" not implemented for \'{_dt.type_name(input.dtype)}\'')
    for t in (weight, bias):
        if t is not None and t.dtype is not input.dtype and not (
                input.dtype in (_dt.float16, _dt.bfloat16) and t.dtype is _dt.float32):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of "
                               f"{_dt.type_name(input.dtype)}")
    return k


def _layer_norm_rule(x, weight, bias, mean, rstd, **_):
    compute = _dt.compute_dtype(x.dtype)
    assert mean.dtype is compute and rstd.dtype is compute   # the reference writes them as views
    return Meta(tuple(x.shape), x.dtype, compute)


def _split_rows(shape, k):
    """(M, N): the product of the leading dims and of the last k (normalized) dims."""
    return math.prod(shape[:len(shape) - k]), math.prod(shape[len(shape) - k:])


def _as_rows(t, k):
    """t (shape (*, normalized)) as an (M, N) view with one row stride and one column stride;
    the op layer makes a tensor contiguous first when its dims do not merge that way."""
    return tnn.rows_view(t, k)


def _rows_mergeable(t, k):
    lead = t.dim() - k
    return all(len(tb.coalesce([t.shape[d] for d in dims], [[t.stride()[d] for d in dims]])[0]) <= 1
               for dims in (range(lead), range(lead, t.dim())))


def _layer_norm_launch(out, x, weight, bias, mean, rstd, *, compute, eps, n_norm, **_):
    tnn.layer_norm(_as_rows(out, n_norm), _as_rows(x, n_norm), weight, bias, mean, rstd, eps, compute)


def _layer_norm_backward_rule(grad, x, weight, mean, rstd, grad_weight, grad_bias, **_):
    return Meta(tuple(x.shape), x.dtype, _dt.compute_dtype(x.dtype))


def _layer_norm_backward_launch(out, grad, x, weight, mean, rstd, grad_weight, grad_bias, *, compute, n_norm, **_):
    tnn.layer_norm_backward(_as_rows(out, n_norm), _as_rows(grad, n_norm), _as_rows(x, n_norm), weight, mean, rstd,
                            grad_weight, grad_bias, compute)


def _norm_dims(x, n_norm):
    """(normalized dims, leading dims) of x."""
    return tuple(range(x.dim() - n_norm, x.dim())), tuple(range(x.dim() - n_norm))


def _normalized(x, n_norm, eps):
    """xhat = (x - mean) * rstd through the fused forward (differentiable: its backward is
    _layer_norm_backward), and rstd written with table ops (differentiable too)."""
    dims, _ = _norm_dims(x, n_norm)
    xhat = layer_norm(x, tuple(x.shape[x.dim() - n_norm:]), eps=eps)
    xc = x - x.mean(dims, keepdim=True)
    r = ((xc * xc).mean(dims, keepdim=True) + eps).rsqrt()
    return xhat, r


def _sum_lead(t, lead):
    return t.sum(lead) if lead else t


def _layer_norm_backward_backward(ctx, a):
    """Derivatives of dx = r (gh - mean(gh) - xhat mean(gh xhat)), gh = grad * w, per row of N
    normalized values, given a (the gradient of dx), in table ops so they differentiate again.

    dx is linear in gh through the symmetric projection P = I - 11'/N - xhat xhat'/N, so
    d gh = r P a. Through x (xhat and r depend on it: d xhat_j/d x_k = r (d_jk - 1/N -
    xhat_j xhat_k / N), d r/d x_k = -r^2 xhat_k / N), with u = dx / r, m2 = mean(gh xhat) and
    v = m2 a + (a . xhat / N) gh:
        d x = -r^2 (xhat (a . u) / N + v - mean(v) - xhat mean(v xhat))."""
    grad, x, weight, n_norm, eps = ctx.grad, ctx.x, ctx.weight, ctx.n_norm, ctx.eps
    needs = ctx.needs_input_grad
    dims, lead = _norm_dims(x, n_norm)
    n = math.prod(x.shape[x.dim() - n_norm:])
    xhat, r = _normalized(x, n_norm, eps)

    def mean(t):
        return t.mean(dims, keepdim=True)

    gh = grad * weight if weight is not None else grad
    d_grad = d_x = d_weight = None
    if needs[0] or needs[2]:
        d_gh = r * (a - mean(a) - xhat * mean(a * xhat))
        if needs[0]:
            d_grad = d_gh * weight if weight is not None else d_gh
        if needs[2]:
            d_weight = _sum_lead(d_gh * grad, lead)
    if needs[1]:
        m2 = mean(gh * xhat)
        u = gh - mean(gh) - xhat * m2
        v = m2 * a + gh * ((a * xhat).sum(dims, keepdim=True) / n)
        d_x = -(r * r) * (xhat * ((a * u).sum(dims, keepdim=True) / n) + v - mean(v) - xhat * mean(v * xhat))
    return d_grad, d_x, d_weight, None, None, None, None


def _layer_norm_backward(ctx, g):
    x, needs, n_norm, eps = ctx.x, ctx.needs_input_grad, ctx.n_norm, ctx.eps
    weight = ctx.weight
    if not _rows_mergeable(g, n_norm):
        g = g.contiguous()
    if is_grad_enabled():
        # create_graph: dx from the fused kernel, recorded with its own backward
        # (_layer_norm_backward_backward); dw and db as sums over a differentiable xhat
        dims, lead = _norm_dims(x, n_norm)
        dx = dw = db = None
        if needs[0]:
            dx = dispatch(LAYER_NORM_BACKWARD, g, x, weight, ctx.mean, ctx.rstd, None, None, n_norm=n_norm, eps=eps)
        if needs[1]:
            dw = _sum_lead(g * _normalized(x, n_norm, eps)[0], lead)
        if needs[2]:
            db = _sum_lead(g, lead)
        return dx, dw, db, None, None
    compute = _dt.compute_dtype(x.dtype)
    norm_shape = tuple(x.shape[x.dim() - n_norm:])
    # an empty batch launches nothing: its column sums are zeros
    alloc = empty if x.numel() else (lambda shape, dtype, device: _creation.zeros(shape, dtype=dtype, device=device))
    gw = alloc(norm_shape, compute, x.device) if needs[1] else None
    gb = alloc(norm_shape, compute, x.device) if needs[2] else None
    dx = dispatch(LAYER_NORM_BACKWARD, g, x, weight, ctx.mean, ctx.rstd, gw, gb, n_norm=n_norm, eps=eps)
    if gw is not None and ctx.input_meta[1][1] is not compute:
        gw = gw.to(ctx.input_meta[1][1])
    if gb is not None and ctx.input_meta[2][1] is not compute:
        gb = gb.to(ctx.input_meta[2][1])
    return (dx if needs[0] else None), gw, gb, None, None


LAYER_NORM = op("layer_norm", ("x", "weight", "bias", "mean", "rstd"), jvp=FROM_BACKWARD, rule=_layer_norm_rule,
                reference=numpy_nn.layer_norm_nd, kernel=_layer_norm_launch, backward=_layer_norm_backward,
                saves=("x", "weight", "mean", "rstd"), grad_name="NativeLayerNormBackward0")
# The fused backward: dx, plus grad_weight/grad_bias written into the last two arguments when
# given (first-order backward). Recorded under create_graph with dx as its one differentiable
# output; its own backward is written with table ops.
LAYER_NORM_BACKWARD = op("layer_norm_backward", ("grad", "x", "weight", "mean", "rstd", "grad_weight", "grad_bias"), jvp=FROM_BACKWARD,
                         rule=_layer_norm_backward_rule, reference=numpy_nn.layer_norm_backward_nd,
                         kernel=_layer_norm_backward_launch, backward=_layer_norm_backward_backward,
                         saves=("grad", "x", "weight"), grad_name="NativeLayerNormBackwardBackward0")


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """torch.nn.functional.layer_norm on the fused kernels (one read of each row forward)."""
    k = _check_layer_norm(input, normalized_shape, weight, bias)
    if not _rows_mergeable(input, k):
        input = input.contiguous()
    weight = weight.contiguous() if weight is not None else None     # read as N contiguous values
    bias = bias.contiguous() if bias is not None else None
    M, _ = _split_rows(tuple(input.shape), k)
    compute = _dt.compute_dtype(input.dtype)
    mean = empty((M,), compute, input.device)
    rstd = empty((M,), compute, input.device)
    return dispatch(LAYER_NORM, input, weight, bias, mean, rstd, eps=float(eps), n_norm=k)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """torch.native_layer_norm: (layer_norm's output, the per-row mean, the per-row rstd), the
    statistics shaped as input with its normalized dims kept as size 1, in input's dtype, and
    not differentiable (torch's output_differentiability); the output's node is layer_norm's
    NativeLayerNormBackward0."""
    k = _check_layer_norm(input, normalized_shape, weight, bias)
    if not _rows_mergeable(input, k):
        input = input.contiguous()
    weight = weight.contiguous() if weight is not None else None
    bias = bias.contiguous() if bias is not None else None
    M, _ = _split_rows(tuple(input.shape), k)
    compute = _dt.compute_dtype(input.dtype)
    mean = empty((M,), compute, input.device)
    rstd = empty((M,), compute, input.device)
    out = dispatch(LAYER_NORM, input, weight, bias, mean, rstd, eps=float(eps), n_norm=k)
    stat_shape = tuple(input.shape[:input.dim() - k]) + (1,) * k
    return out, mean.view(stat_shape).to(input.dtype), rstd.view(stat_shape).to(input.dtype)


def native_dropout_backward(grad_output, mask, scale):
    """aten.native_dropout_backward: grad_output * mask * scale (torch's promotion: an integer or
    bool gradient times the float scale is the default float dtype); one
    NativeDropoutBackwardBackward0 node, differentiable again."""
    return named_composite("NativeDropoutBackwardBackward0", _dropout_backward, grad_output, mask, float(scale))


def _dropout_backward(grad_output, mask, scale):
    return _ew.mul(_ew.mul(grad_output, mask), scale)


# ------------------------------------------------------------------ nll_loss / cross_entropy checks
def _check_target_dtype(target):
    if target.dtype not in (_dt.int64, _dt.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_dt.type_name(target.dtype)}")


def _check_nll(input, target, weight):
    """torch's nll_loss_nd checks, in its order and with its texts."""
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    target_batch = target.shape[0] if target.dim() else 0     # torch reads sizes()[0] of a 0-d target as 0
    if input.dim() != 1 and input.shape[0] != target_batch:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target_batch}).")
    C = input.shape[0] if input.dim() == 1 else input.shape[1]
    if input.dim() <= 2:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        no_batch = input.dim() == 1 and target.dim() == 0
        if not no_batch and input.shape[0] != target.shape[0]:
            raise RuntimeError(f"size mismatch (got input: {_shape_str(input.shape)}, target: "
                               f"{_shape_str(target.shape)})")
    elif input.dim() == 4:
        if target.dim() != 3:
            raise RuntimeError("only batches of spatial targets supported (3D tensors) but got targets of "
                               f"dimension: {target.dim()}")
    if weight is not None and (weight.dim() != 1 or weight.numel() != C):
        raise RuntimeError(f"weight tensor should be defined either for all {C} classes or no classes but got "
                           f"weight tensor of shape: {_shape_str(weight.shape)}")
    if input.dim() == 4:
        if (input.shape[0], input.shape[2], input.shape[3]) != tuple(target.shape):
            raise RuntimeError(f"size mismatch (got input: {_shape_str(input.shape)} , target: "
                               f"{_shape_str(target.shape)}")
    elif input.dim() >= 3 and tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise RuntimeError(f"Expected target size {_shape_str((input.shape[0],) + tuple(input.shape[2:]))}, "
                           f"got {_shape_str(target.shape)}")
    _check_target_dtype(target)
    if weight is not None and weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {_dt.type_name(input.dtype)} but found "
                           f"{_dt.type_name(weight.dtype)}")
    return C


def _check_target_range(target, C, ignore_index):
    """torch's "Target t is out of bounds." for a class index outside [0, C) (ignore_index aside).
    torch checks on the cpu and asserts inside its cuda kernel, asynchronously ("device-side
    assert triggered"), so a cuda step never waits for the device there; so does tritensor: on
    cuda the check runs on the device and its error surfaces at the next sync
    (runtime/device_errors.py; the first H200 run measured the former read-back at 1.8 ms a
    step), or at the call under CUDA_LAUNCH_BLOCKING=1. The loss kernels mask such a target
    (cross_entropy counts it as ignored, nll_loss gathers a clamped index), so nothing outside a
    row is read."""
    if target.numel():
        backend_for(target.device).check_index(target.detach(), 0, C, _device_errors.check(
            "Target {index} is out of bounds.", IndexError), ignore=int(ignore_index), safe=False)


def _class_dim(input):
    return 0 if input.dim() == 1 else 1


def _target_weights(target, weight, ignore_index, dtype):
    """w[t] for each target (1 without weights), 0 where the target is ignore_index."""
    valid = _ew.ne(target, ignore_index)
    if weight is None:
        return valid.to(dtype)
    safe = _ew.where(valid, target, 0).to(_dt.int64)
    picked = weight.index_select(0, safe.reshape(-1)).reshape(tuple(target.shape))
    return _ew.where(valid, picked, 0.0)


def _picked(values, target, ignore_index):
    """values[..., t, ...] along the class dim (0 where t is ignore_index)."""
    cdim = _class_dim(values)
    valid = _ew.ne(target, ignore_index)
    safe = _ew.where(valid, target, 0).to(_dt.int64)
    if values.dim() == 1:
        return values.gather(0, safe.reshape(1)).reshape(())
    return values.gather(cdim, safe.unsqueeze(cdim)).squeeze(cdim)


def _check_constant_weight(weight):
    """torch's nll_loss_forward has no derivative for the class weights: a weight that requires
    grad is refused while grad mode records (cross_entropy's class-index path included)."""
    if weight is not None and weight.requires_grad and is_grad_enabled():
        raise RuntimeError("The function 'nll_loss_forward' is not differentiable with respect to argument "
                           "'weight'. This input cannot have requires_grad True.")


def nll_loss(input, target, weight, ignore_index, reduction):
    C = _check_nll(input, target, weight)
    _check_target_range(target, C, ignore_index)
    _check_constant_weight(weight)
    # one NllLossBackward0 node, as torch records (the pick, the weights and the mean inside it);
    # NllLoss2DBackward0 for an (N, C, d1, ...) input
    return _nd_named(input, reduction, _nll_loss, input, target, weight, ignore_index, reduction)


def _nd_named(input, reduction, fn, *args):
    """torch's nll_loss_nd: nll_loss for 1-d/2-d inputs, nll_loss2d for the others (those not
    4-d through a (N, C, 1, rest) view, the unreduced loss viewed back: ViewBackward0 on top)."""
    if input.dim() < 3:
        return named_composite("NllLossBackward0", fn, *args)
    out = named_composite("NllLoss2DBackward0", fn, *args)
    if reduction == "none" and input.dim() != 4:
        return out.view(tuple(out.shape))
    return out


def _nll_loss(input, target, weight, ignore_index, reduction):
    w_t = _target_weights(target, weight, ignore_index, input.dtype)
    loss = -(_picked(input, target, ignore_index) * w_t)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / w_t.sum()      # nan when every target is ignored, as torch


def _class_weight_view(weight, input):
    cdim = _class_dim(input)
    shape = [1] * input.dim()
    shape[cdim] = weight.shape[0]
    return weight.reshape(tuple(shape))


def _cross_entropy_probabilities(input, target, weight, ignore_index, reduction, label_smoothing):
    if not target.dtype.is_floating_point:
        raise RuntimeError("Expected floating point type for target with class probabilities, got "
                           f"{_dt.type_name(target.dtype)}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    if label_smoothing < 0.0 or label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    cdim = _class_dim(input) if input.dim() else 0
    C = input.shape[cdim] if input.dim() else 1
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / C
    logp = _softmax.log_softmax(input, cdim)
    terms = logp * target
    if weight is not None:
        if weight.dim() != 1 or weight.numel() != C:
            raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {C} classes or no "
                               f"classes but got weight tensor of shape: {_shape_str(weight.shape)}")
        terms = terms * _class_weight_view(weight, input)
    loss = -terms.sum(cdim)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    rows = input.numel() // C if C else 0
    return loss.sum() / rows if rows else loss.sum() * math.nan


def _cross_entropy_rule(x, target, weight, **_):
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"cross_entropy: expected a floating point input, got {_dt.type_name(x.dtype)}")
    return Meta((2,) + tuple(target.shape), x.dtype, _dt.compute_dtype(x.dtype))


def _cross_entropy_launch(out, x, target, weight, *, compute, cdim, ignore_index, **_):
    tnn.cross_entropy(out, x, target, weight, cdim, ignore_index, compute)


def _cross_entropy_backward_rule(grad, x, target, weight, **_):
    return Meta(tuple(x.shape), x.dtype, _dt.compute_dtype(x.dtype))


def _cross_entropy_backward_launch(out, grad, x, target, weight, *, compute, cdim, ignore_index, **_):
    tnn.cross_entropy_backward(out, grad, x, target, weight, cdim, ignore_index, compute)


def _cross_entropy_backward_backward(ctx, gg):
    """Derivatives of dx = p (g0 w[t] + g1 W) - g0 w[t] onehot(t) - g1 w (p = softmax(x)) with
    respect to (g0, g1) and x, written with table ops (differentiable again). With
    S = sum_c gg_c p_c per row:  d g0 = w[t] (S - gg[t]),  d g1 = W S - sum_c gg_c w_c,
    d x = (g0 w[t] + g1 W) p (gg - S)."""
    grad, x, target, weight = ctx.grad, ctx.x, ctx.target, ctx.weight
    cdim, ignore_index = ctx.cdim, ctx.ignore_index
    p = _softmax.softmax(x, cdim)
    valid = _ew.ne(target, ignore_index).to(x.dtype)
    w_t = _target_weights(target, weight, ignore_index, x.dtype)
    total_w = weight.sum() if weight is not None else float(x.shape[cdim])
    s = (gg * p).sum(cdim)
    d_grad = d_x = None
    if ctx.needs_input_grad[0]:
        gg_w = (gg * _class_weight_view(weight, x)).sum(cdim) if weight is not None else gg.sum(cdim)
        d0 = w_t * (s - _picked(gg, target, ignore_index))
        d1 = valid * (s * total_w - gg_w)
        d_grad = _stack_parts(d0, d1)
    if ctx.needs_input_grad[1]:
        a = grad[0] * w_t + grad[1] * valid * total_w
        d_x = a.unsqueeze(cdim) * p * (gg - s.unsqueeze(cdim))
    return d_grad, d_x, None, None


def _stack_parts(a, b):
    return stack([a, b], 0)


CROSS_ENTROPY_BACKWARD = op("cross_entropy_backward", ("grad", "x", "target", "weight"), jvp=FROM_BACKWARD,
                            rule=_cross_entropy_backward_rule, reference=numpy_nn.cross_entropy_backward,
                            kernel=_cross_entropy_backward_launch, backward=_cross_entropy_backward_backward,
                            saves=("grad", "x", "target", "weight"), grad_name="CrossEntropyBackwardBackward0")
CROSS_ENTROPY = op("cross_entropy", ("x", "target", "weight"), jvp=FROM_BACKWARD, rule=_cross_entropy_rule,
                   reference=numpy_nn.cross_entropy, kernel=_cross_entropy_launch,
                   backward=lambda ctx, g: (cross_entropy_backward(g, ctx.x, ctx.target, ctx.weight, ctx.cdim,
                                                                   ctx.ignore_index), None, None),
                   saves=("x", "target", "weight"), grad_name="CrossEntropyLossBackward0")


def cross_entropy_backward(grad, x, target, weight, cdim, ignore_index):
    return dispatch(CROSS_ENTROPY_BACKWARD, grad, x, target, weight, cdim=cdim, ignore_index=ignore_index)


def cross_entropy_parts(input, target, weight, ignore_index):
    """The fused kernel's per-row terms, (2,) + target.shape: [0] the weighted nll, [1] the
    label-smoothing sum; 0 where the target is ignore_index."""
    return dispatch(CROSS_ENTROPY, input, target, weight, cdim=_class_dim(input), ignore_index=int(ignore_index))


def cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing):
    if tuple(input.shape) == tuple(target.shape):
        return _cross_entropy_probabilities(input, target, weight, ignore_index, reduction, label_smoothing)
    if label_smoothing > 1.0:        # negative smoothing is not refused (torch only checks > 0)
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if input.dim() == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    cdim = _class_dim(input)
    if not input.dtype.is_floating_point:
        _softmax.log_softmax(input, cdim)            # torch's error for an integer input
    C = _check_nll(input, target, weight)
    _check_target_range(target, C, ignore_index)
    _check_constant_weight(weight)
    if label_smoothing > 0.0:        # torch: (1 - eps) nll + eps / C smooth, an AddBackward0 node
        return _fused_cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing, C)
    # without smoothing torch runs log_softmax + nll_loss: one NllLossBackward0 node on top
    return _nd_named(input, reduction, _fused_cross_entropy, input, target, weight, ignore_index, reduction,
                     label_smoothing, C)


def _fused_cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing, C):
    parts = cross_entropy_parts(input, target, weight.contiguous() if weight is not None else None, ignore_index)
    smoothing = label_smoothing > 0.0
    w_t = _target_weights(target, weight, ignore_index, input.dtype) if reduction == "mean" else None
    return _reduce_cross_entropy(parts[0], parts[1] if smoothing else None, w_t, weight is not None, reduction,
                                 label_smoothing, C)


def _reduce_cross_entropy(nll, smooth, w_t, weighted, reduction, label_smoothing, C):
    """torch's cross_entropy_loss_label_smoothing: (1 - eps) nll + (eps / C) smooth; 'mean'
    divides both sums by sum(w[t]) over the targets that are not ignored (their count without
    weights): nan when every target is ignored."""
    if reduction == "none":
        return nll if smooth is None else nll * (1 - label_smoothing) + smooth * (label_smoothing / C)
    if reduction == "sum":
        total = nll.sum()
        return total if smooth is None else total * (1 - label_smoothing) + smooth.sum() * (label_smoothing / C)
    den = w_t.sum()
    loss = nll.sum() / den
    if smooth is None:
        return loss
    return loss * (1 - label_smoothing) + (smooth.sum() / den) * (label_smoothing / C)


# ------------------------------------------------------------------ embedding
def _check_embedding(input, weight):
    if input.dtype not in (_dt.int64, _dt.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {_tensor_type_name(input)} instead (while checking arguments for "
                           "embedding)")
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")


class _ScaleGrad:
    """Identity forward; backward multiplies the gradient by ``scale`` (scale_grad_by_freq)."""
    _fn = None

    @classmethod
    def apply(cls, rows, scale):
        if cls._fn is None:

            class EmbeddingScaleGrad(Function):
                @staticmethod
                def forward(ctx, rows, scale):
                    ctx.save_for_backward(scale)
                    return rows.clone()

                @staticmethod
                def backward(ctx, g):
                    (scale,) = ctx.saved_tensors
                    return g * scale, None
            cls._fn = EmbeddingScaleGrad
        return cls._fn.apply(rows, scale)


def embedding(input, weight, padding_idx, scale_grad_by_freq=False):
    _check_embedding(input, weight)
    flat = input.reshape(-1)
    # torch gathers uint16/32/64 rows although it has no index_select for them: indexing does
    rows = weight[flat] if weight.dtype in _dt.UNSIGNED_LIMITED else weight.index_select(0, flat)
    if padding_idx is not None:
        # the padding row's value is read, its gradient is not: the same values through a
        # detached branch where the index is padding_idx
        pad = _ew.eq(flat, padding_idx).unsqueeze(1)
        rows = _ew.where(pad, rows.detach(), rows)
    if scale_grad_by_freq and rows.requires_grad:
        idx = np.asarray(flat.detach()._to_host_array(), dtype=np.int64)     # a host read, as torch's counts
        counts = np.bincount(idx, minlength=weight.shape[0]).astype(np.float64)
        scale = _creation.tensor((1.0 / counts[idx]).reshape(-1, 1), dtype=weight.dtype, device=weight.device)
        rows = _ScaleGrad.apply(rows, scale)
    return rows.reshape(tuple(input.shape) + (weight.shape[1],))


def embedding_renorm_(weight, input, max_norm, norm_type):
    """torch.embedding_renorm_: rows of ``weight`` that ``input`` refers to with a norm above
    max_norm are scaled to max_norm / (norm + 1e-7), in place and outside autograd."""
    _check_embedding(input, weight)
    unique = np.unique(np.asarray(input.detach()._to_host_array(), dtype=np.int64).reshape(-1))
    if unique.size == 0:
        return weight
    if unique[0] < 0 or unique[-1] >= weight.shape[0]:
        raise IndexError("index out of range in self")
    with no_grad():
        idx = _creation.tensor(unique, device=weight.device)
        rows = weight.index_select(0, idx)
        norms = rows.norm(norm_type, 1, keepdim=True)
        scale = _ew.where(_ew.gt(norms, max_norm), max_norm / (norms + 1e-7), 1.0)
        weight[idx] = rows * scale
    return weight


def _tensor_type_name(t):
    prefix = backend_for(t.device).torch_name("torch.", "torch.cuda.")
    return prefix + _dt.type_name(t.dtype) + "Tensor"

