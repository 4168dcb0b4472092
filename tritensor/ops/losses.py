"""torch.nn's losses beyond the fused ones of ops/nn.py (issue 25.2), and the distances they use:
kl_div, margin_ranking, hinge_embedding, cosine_embedding, triplet_margin (and with a distance
function), multilabel_margin, multilabel_soft_margin, multi_margin, soft_margin, poisson_nll,
gaussian_nll, linear_cross_entropy; cosine_similarity, pairwise_distance, bilinear.

Each is a composite of table ops written as ATen (aten/src/ATen/native/Loss.cpp,
LossMultiMargin.cpp, LossMultiLabelMargin.cpp, Distance.cpp, Linear.cpp) or torch's Python
(torch/nn/functional.py) computes it, so the values, the gradients at the kinks (a hinge's
gradient is 0 where its argument is exactly 0, as torch's ``z > 0``) and every higher derivative
come from the ops it is made of. Where torch records one node (MultiMarginLossBackward0,
MultilabelMarginLossBackward0, SoftMarginLossBackward0) the composite is named so; elsewhere
the nodes are torch's own composites' (MeanBackward0, SumBackward1, NormBackward1 ...). The
reduction strings arrive checked (nn/functional.py reads the legacy size_average/reduce).
"""
from __future__ import annotations

from .._autocast import autocast_policy as _autocast_policy

import math

from .. import dtypes as _dt
from ..autograd.composite import named_composite
from ..autograd.grad_mode import is_grad_enabled
from ..backends import numpy_ctc
from ..backends.triton import nn as tnn
from ..tensor import Tensor
from . import activations as _act
from . import nn as _nn
from ._checks import check_tensor
from ._shapes import wrap_dim
from .creation import arange, tensor
from .dispatch import dispatch, empty
from .einsum import tensordot
from .elementwise import _not_implemented, broadcast_shapes, where
from .norms import norm, vector_norm
from .pointwise_math import xlogy
from .surface import declare
from .table import Meta, op


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _size(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _clamped_like_torch(t, eps):
    """torch's ``t.clone(); with no_grad: t.clamp_min_(eps)``: the clamped value, with the gradient
    of t itself (the clamp is not recorded)."""
    held = t.detach()
    return t + (held.clamp_min(eps) - held)


# --------------------------------------------------------------------------- distances
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """torch.pairwise_distance: ||x1 - x2 + eps||_p over the last dim of the broadcast inputs."""
    check_tensor("pairwise_distance", x1)
    check_tensor("pairwise_distance", x2, "x2", 2)
    innermost = max(x1.dim(), x2.dim()) - 1
    # one NormBackward1 node (torch's at::norm with a dim), over the difference's SubBackward0
    diff = x1 - x2 + eps
    return named_composite("NormBackward1", norm, diff, p, innermost, keepdim)


@_autocast_policy("cosine_similarity")
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """torch.cosine_similarity: sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) along dim, the
    inputs broadcast; each norm clamped at eps without the clamp's gradient, as ATen."""
    check_tensor("cosine_similarity", x1)
    check_tensor("cosine_similarity", x2, "x2", 2)
    common = _dt.result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {_dt.type_name(common)}")
    shape = tuple(broadcast_shapes(x1.shape, x2.shape))
    x1, x2 = x1.to(common).expand(*shape), x2.to(common).expand(*shape)
    dim = wrap_dim(dim, len(shape))
    n1 = _clamped_like_torch(vector_norm(x1, 2, dim, True), eps)
    n2 = _clamped_like_torch(vector_norm(x2, 2, dim, True), eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


@_autocast_policy("bilinear")
def bilinear(input1, input2, weight, bias=None):
    """torch.bilinear: y_o = sum_ij x1_i A_oij x2_j + b_o over the leading (batch) dims."""
    check_tensor("bilinear", input1)
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got "
                               f"{input1.shape[i]} and {input2.shape[i]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but expected "
                           f"{weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but expected "
                           f"{weight.shape[2]}")
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but expected "
                           f"{weight.shape[0]}")
    batch = tuple(input1.shape[:-1])
    a = input1.reshape(-1, input1.shape[-1])
    b = input2.reshape(-1, input2.shape[-1])
    # (rows, in1) x (out, in1, in2) -> (rows, out, in2), then the in2 contraction with input2's rows
    y = (tensordot(a, weight, ([1], [1])) * b.unsqueeze(1)).sum(-1).reshape(batch + (weight.shape[0],))
    return y + bias if bias is not None else y


# --------------------------------------------------------------------------- losses
def kl_div(input, target, reduction, log_target):
    """torch.kl_div: exp(t) (t - x) with log_target, else xlogy(t, t) - t x (0 where t = 0);
    'batchmean' is the sum over the batch size (input.size(0))."""
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() != 0 else loss.sum()
    return _reduce(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin, reduction):
    """max(0, -y (x1 - x2) + margin)."""
    if not (input1.dim() == input2.dim() == target.dim()):
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin, reduction):
    """x where y = 1, max(0, margin - x) where y = -1 (ATen: both terms where y is neither)."""
    zeros = input.new_zeros(())
    margin_clamp = (margin - input).clamp_min(0)
    loss = where(target != 1, margin_clamp, zeros) + where(target != -1, input, zeros)
    return _reduce(loss, reduction)


def _not_differentiable(function, argument, t):
    """torch's refusal of an argument its derivative formula does not cover."""
    if t is not None and t.requires_grad and is_grad_enabled():
        raise RuntimeError(f"The function '{function}' is not differentiable with respect to argument '{argument}'. "
                           "This input cannot have requires_grad True.")


def soft_margin_loss(input, target, reduction):
    """log(1 + exp(-y x)); one SoftMarginLossBackward0 node, as torch (no derivative in target)."""
    _not_differentiable("soft_margin_loss", "target", target)
    return named_composite("SoftMarginLossBackward0", _soft_margin, input, target, reduction)


def _soft_margin(input, target, reduction):
    return _reduce((-input * target).exp().log1p(), reduction)


_COSINE_EPSILON = 1e-12


def cosine_embedding_loss(input1, input2, target, margin, reduction):
    """1 - cos(x1, x2) where y = 1, max(0, cos - margin) where y = -1 (ATen's EPSILON in the
    squared norms)."""
    targ_dim = target.dim()
    if targ_dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if targ_dim == 1 and not (input1.dim() == 2 and input2.dim() == 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with sizes "
                           f"{_size(input1.shape)} and {_size(input2.shape)}.")
    if targ_dim == 0 and not (input1.dim() == 1 and input2.dim() == 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with sizes "
                           f"{_size(input1.shape)} and {_size(input2.shape)}.")
    prod_sum = (input1 * input2).sum(targ_dim)
    mag1 = (input1 * input1).sum(targ_dim) + _COSINE_EPSILON
    mag2 = (input2 * input2).sum(targ_dim) + _COSINE_EPSILON
    cos = prod_sum / (mag1 * mag2).sqrt()
    zeros = cos.new_zeros(())
    pos = 1 - cos
    neg = (cos - margin).clamp_min(0)
    loss = where(target == 1, pos, zeros) + where(target == -1, neg, zeros)
    return _reduce(loss, reduction)


def _check_triplet_dims(anchor, positive, negative):
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == p == n):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs")


def triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction):
    """max(0, margin + d(a, p) - d(a, n)), d the pairwise p-distance (swap: the smaller of
    d(a, n) and d(p, n))."""
    _check_triplet_dims(anchor, positive, negative)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = d_neg.minimum(pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, distance_function, margin, swap, reduction):
    """torch's Python: the triplet loss with any distance (pairwise_distance by default)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    distance = distance_function if distance_function is not None else pairwise_distance
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(distance(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


def _check_margin_input(input):
    nd = input.dim()
    if not ((nd == 2 and input.shape[1] != 0) or (nd == 1 and input.shape[0] != 0) or nd == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{_size(input.shape)}")


def _check_long(target):
    if target.dtype is not _dt.int64:
        raise RuntimeError(f"expected scalar type Long but found {_dt.type_name(target.dtype)}")


def multi_margin_loss(input, target, p, margin, weight, reduction):
    """sum over i != y of max(0, margin - x[y] + x[i])^p (times w[y]) / C, per sample."""
    _check_margin_input(input)
    nframe = input.shape[0] if input.dim() == 2 else 1
    dim = input.shape[-1] if input.dim() else 1
    if not (target.dim() <= 1 and target.numel() == nframe):
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{nframe}], but got {_size(target.shape)}. "
                           f"Input has shape {_size(input.shape)}.")
    if weight is not None and not (weight.dim() <= 1 and weight.numel() == dim):
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got {_size(weight.shape)}")
    _check_long(target)
    if target.numel() and bool(((target < 0) | (target >= dim)).any()):
        raise RuntimeError("target out of range")
    _not_differentiable("multi_margin_loss", "weight", weight)
    return named_composite("MultiMarginLossBackward0", _multi_margin, input, target, p, margin, weight, reduction)


def _multi_margin(input, target, p, margin, weight, reduction):
    keep_frames = reduction == "none" and target.dim() > 0
    dim = input.shape[-1] if input.dim() else 1
    x = input.reshape(-1, dim)
    t = target.reshape(-1, 1)
    z = margin - x.gather(1, t) + x
    h = z.clamp_min(0)
    if p == 2:
        h = h * h
    h = where(t != arange(dim, device=x.device), h, h.new_zeros(()))      # the target class left out
    if weight is not None:
        h = h * weight.reshape(-1).gather(0, t.reshape(-1)).unsqueeze(1)
    loss = h.sum(1) / dim
    if reduction == "none":
        return loss if keep_frames else loss.reshape(())
    return loss.mean() if reduction == "mean" else loss.sum()


def multilabel_margin_loss(input, target, reduction):
    """Per sample: sum over the targets j (those before the first negative) and the non-target
    classes i of max(0, 1 - (x[y_j] - x[i])) / C."""
    _check_margin_input(input)
    nd = input.dim()
    if nd <= 1:
        dim = 1 if nd == 0 else input.shape[0]
        if not (target.dim() <= 1 and target.numel() == dim):
            raise RuntimeError(f"inconsistent target size: {_size(target.shape)} for input of size: {_size(input.shape)}")
    else:
        if not (target.dim() == 2 and tuple(target.shape) == tuple(input.shape)):
            raise RuntimeError(f"inconsistent target size: {_size(target.shape)} for input of size: {_size(input.shape)}")
    _check_long(target)
    dim = input.shape[-1] if nd else 1
    t = target.reshape(-1, dim)
    valid = (t >= 0).to(_dt.int64).cumprod(1).to(_dt.bool_)         # the targets before the first negative
    if bool((valid & (t >= dim)).any()):
        raise RuntimeError("argument #2 'target' is out of range")
    return named_composite("MultilabelMarginLossBackward0", _multilabel_margin, input, t, valid, reduction)


def _multilabel_margin(input, t, valid, reduction):
    dim = t.shape[1]
    x = input.reshape(-1, dim)
    safe = where(valid, t, 0)
    classes = arange(dim, device=x.device)
    # is_target[n, i]: class i is one of sample n's targets
    is_target = ((safe.unsqueeze(2) == classes) & valid.unsqueeze(2)).any(1)
    x_y = x.gather(1, safe)                                         # (N, dim): x at each target slot
    z = (1 - x_y.unsqueeze(2) + x.unsqueeze(1)).clamp_min(0)        # [n, j, i]
    counted = valid.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = where(counted, z, z.new_zeros(())).sum((1, 2)) / dim
    if reduction == "none":
        return loss if input.dim() == 2 else loss.reshape(())
    return loss.mean() if reduction == "mean" else loss.sum()


def multilabel_soft_margin_loss(input, target, weight, reduction):
    """-(y log sigmoid(x) + (1 - y) log sigmoid(-x)), weighted, averaged over the classes."""
    loss = -(target * _act.logsigmoid(input) + (1 - target) * _act.logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """exp(x) - y x (log_input) or x - y log(x + eps); full adds Stirling's term where y > 1."""
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full, eps, reduction):
    """0.5 (log(var) + (x - y)^2 / var) (+ 0.5 log(2 pi) with full), var clamped at eps without
    the clamp's gradient; torch's shape rules for a homoscedastic var."""
    if isinstance(var, (int, float)) and not isinstance(var, bool):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * input.new_ones(tuple(input.shape))
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = _clamped_like_torch(var, eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def linear_cross_entropy(input, linear_weight, target, linear_bias, weight, reduction, ignore_index, label_smoothing,
                         options):
    """torch 2.13's F.linear_cross_entropy: cross_entropy(linear(input, W, b), target) (the
    reference implementation its docstring states; torch's chunked ``options`` path computes the
    same loss with less memory and is not implemented here)."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    batch = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions (in_features), got "
                           f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batch:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires "
                           f"batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*batch, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    if options is not None:
        raise NotImplementedError("linear_cross_entropy: the chunked path (options=) is not implemented; "
                                  "options=None computes the same loss")
    ignore_index = ignore_index if ignore_index is not None else -100
    logits = tensordot(input, linear_weight, ([input.dim() - 1], [linear_weight.dim() - 1]))
    if linear_bias is not None:
        logits = logits + linear_bias
    return _nn.cross_entropy(logits, target, weight, ignore_index, reduction, float(label_smoothing))


declare("pairwise_distance", pairwise_distance, method=False, functional=True)
declare("cosine_similarity", cosine_similarity, method=False, functional=True)
declare("bilinear", bilinear, method=False, functional=True)


# --------------------------------------------------------------------------- CTC
# Two entries over kernels/loss.py's CTC block: ctc_loss (the per-sample negative log likelihood
# and the alpha lattice it saves) and its backward (beta and torch's gradient of log_probs,
# which assumes they are log_softmax outputs: exp(lp) - posterior, as torch's kernels). torch's
# _ctc_loss_backward has no derivative (its node raises); this one has no backward either.
def _ctc_rule(log_probs, targets, input_lengths, target_lengths, target_offsets, *, max_target, **_):
    T, N, _C = (int(v) for v in log_probs.shape)
    compute = _dt.compute_dtype(log_probs.dtype)
    return (Meta((N,), log_probs.dtype, compute), Meta((N, T, 2 * max_target + 1), log_probs.dtype, compute))


def _ctc_launch(outs, log_probs, targets, input_lengths, target_lengths, target_offsets, *, compute, blank, **_):
    tnn.ctc_loss(outs, log_probs, targets, input_lengths, target_lengths, target_offsets, blank, compute)


def _ctc_backward_rule(grad, log_probs, *_, **__):
    return Meta(tuple(log_probs.shape), log_probs.dtype, _dt.compute_dtype(log_probs.dtype))


def _ctc_backward_launch(out, grad, log_probs, targets, input_lengths, target_lengths, target_offsets, nll, log_alpha,
                         *, compute, blank, zero_infinity, **_):
    beta = empty(tuple(log_alpha.shape), log_alpha.dtype, log_alpha.device)
    tnn.ctc_loss_backward(out, grad, log_probs, targets, input_lengths, target_lengths, target_offsets, nll, log_alpha,
                          beta, blank, zero_infinity, compute)


def _ctc_backward(ctx, g_nll, g_alpha=None):
    if g_nll is None:
        return (None,) * 5
    grad = dispatch(CTC_LOSS_BACKWARD, g_nll, ctx.log_probs, ctx.targets, ctx.input_lengths, ctx.target_lengths,
                    ctx.target_offsets, ctx.nll, ctx.log_alpha, blank=ctx.blank, zero_infinity=ctx.zero_infinity)
    return grad, None, None, None, None


CTC_LOSS_BACKWARD = op("ctc_loss_backward", ("grad", "log_probs", "targets", "input_lengths", "target_lengths",
                                             "target_offsets", "nll", "log_alpha"),
                       rule=_ctc_backward_rule, reference=numpy_ctc.ctc_loss_backward, kernel=_ctc_backward_launch,
                       layout="contiguous")
CTC_LOSS = op("ctc_loss", ("log_probs", "targets", "input_lengths", "target_lengths", "target_offsets"),
              outputs=("nll", "log_alpha"), rule=_ctc_rule, reference=numpy_ctc.ctc_loss, kernel=_ctc_launch,
              backward=_ctc_backward, layout="contiguous",
              saves=("log_probs", "targets", "input_lengths", "target_lengths", "target_offsets", "nll", "log_alpha"),
              grad_name="CtcLossBackward0")


def _lengths(name, v, device):
    if isinstance(v, Tensor):
        if v.dtype.is_floating_point or v.dtype is _dt.bool_:
            raise RuntimeError(f"{name} must be integral")
        return v.detach().to(device=device, dtype=_dt.int64).reshape(-1)
    values = [int(x) for x in (v if isinstance(v, (list, tuple)) else [v])]
    return tensor(values, dtype=_dt.int64, device=device)


def _allocate_check(message):
    return RuntimeError(f"{message} (while checking arguments for ctc_loss_allocate_outputs)")


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity):
    """The CTC loss: -log of the summed probability of every alignment of the target to the
    input frames (blanks between, repeats merged); 'mean' divides each by its target length
    (at least 1) before the batch mean, as torch."""
    check_tensor("ctc_loss", log_probs)
    device = log_probs.device
    if not log_probs.dtype.is_floating_point or log_probs.dtype not in (_dt.float32, _dt.float64):
        raise _not_implemented("ctc_loss", log_probs.dtype, device)
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    tg = targets if batched else targets.unsqueeze(0)
    il = _lengths("input_lengths", input_lengths, device)
    tl_ = _lengths("target_lengths", target_lengths, device)
    T, N, C = (int(v) for v in lp.shape)
    if not 0 <= blank < C:
        raise RuntimeError("blank must be in label range")
    if il.numel() != N:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tl_.numel() != N:
        raise RuntimeError("target_lengths must be of size batch_size")
    lengths = [int(v) for v in tl_.tolist()]
    max_target = max(lengths, default=0)
    tg = tg.detach().to(device=device, dtype=_dt.int64)
    if tg.dim() == 1:
        total = sum(lengths)
        if tg.shape[0] != total:
            raise _allocate_check(f"Expected tensor to have size {total} at dimension 0, but got size {tg.shape[0]} "
                                  "for argument #2 'targets'")
        offsets = [0]
        for v in lengths[:-1]:
            offsets.append(offsets[-1] + v)
    else:
        if tg.shape[1] < max_target:
            raise _allocate_check(f"Expected tensor to have size at least {max_target} at dimension 1, but got size "
                                  f"{tg.shape[1]} for argument #2 'targets'")
        offsets = [n * tg.shape[1] for n in range(N)]
    for name, vals, top in (("input_lengths", il.tolist(), T), ("target_lengths", lengths, None)):
        for v in vals:
            if v < 0:
                raise _allocate_check(f"Expected {name} to have value at least 0, but got value {v}")
            if top is not None and v > top:
                raise _allocate_check(f"Expected {name} to have value at most {top}, but got value {v}")
    nll, _alpha = dispatch(CTC_LOSS, lp.contiguous(), tg.contiguous().reshape(-1), il.contiguous(), tl_.contiguous(),
                           tensor(offsets, dtype=_dt.int64, device=device), blank=int(blank), max_target=max_target,
                           zero_infinity=bool(zero_infinity))
    if zero_infinity:
        nll = where(nll == math.inf, nll.new_zeros(()), nll)
    if reduction == "mean":
        return (nll / tl_.to(nll.dtype).clamp_min(1)).mean()
    if reduction == "sum":
        return nll.sum()
    return nll if batched else nll.squeeze(0)
