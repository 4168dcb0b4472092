"""The nn ops: layer_norm and the class-index cross entropy (fused kernels), nll_loss, embedding.

layer_norm and cross entropy are table ops, each with one fused Triton kernel forward and one
backward (kernels/norm.py, kernels/loss.py) and a NumPy reference (backends/numpy_nn.py). The
table gives every op one output; the statistics the backward needs travel as extra tensor
arguments the kernel writes (layer_norm's per-row mean and rstd), allocated here.
"""
from __future__ import annotations

import math

from .. import dtypes as _dt
from ..tensor import Tensor
from . import elementwise as _ew
from . import reduce as _reduce
from . import views as _views


def _shape_str(shape):
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


# ------------------------------------------------------------------ layer_norm
def _check_layer_norm(input, normalized_shape, weight, bias):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)   # torch's Python API accepts an int too (LayerNorm does)
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


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    k = _check_layer_norm(input, normalized_shape, weight, bias)
    dims = tuple(range(input.dim() - k, input.dim()))
    mean = input.mean(dims, keepdim=True)
    centered = input - mean
    var = (centered * centered).mean(dims, keepdim=True)
    y = centered * (var + eps).rsqrt()
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


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
    A read of the target on the host: torch checks on the cpu and asserts inside its cuda kernel."""
    if target.numel() == 0:
        return
    t = target.detach().to(_dt.int64)
    bad = ((t < 0) | (t >= C)) & (t != ignore_index)
    if bool(bad.any()):
        first = int(t.masked_select(bad)[0].item())
        raise IndexError(f"Target {first} is out of bounds.")


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


def _mean_by(total, denominator):
    return total / denominator


def nll_loss(input, target, weight, ignore_index, reduction):
    C = _check_nll(input, target, weight)
    _check_target_range(target, C, ignore_index)
    w_t = _target_weights(target, weight, ignore_index, input.dtype)
    loss = -(_picked(input, target, ignore_index) * w_t)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return _mean_by(loss.sum(), w_t.sum())


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
    logp = _reduce.log_softmax(input, cdim)
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


def cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing):
    if tuple(input.shape) == tuple(target.shape):
        return _cross_entropy_probabilities(input, target, weight, ignore_index, reduction, label_smoothing)
    if label_smoothing > 0.0 and label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if input.dim() == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    cdim = _class_dim(input)
    logp = _reduce.log_softmax(input, cdim)
    C = _check_nll(logp, target, weight)
    _check_target_range(target, C, ignore_index)
    w_t = _target_weights(target, weight, ignore_index, input.dtype)
    nll = -(_picked(logp, target, ignore_index) * w_t)
    smoothing = label_smoothing > 0.0
    if smoothing:
        terms = logp if weight is None else logp * _class_weight_view(weight, input)
        smooth = -terms.sum(cdim) * _ew.ne(target, ignore_index).to(input.dtype)
    return _reduce_cross_entropy(nll, smooth if smoothing else None, w_t, weight is not None, reduction,
                                 label_smoothing, C)


def _reduce_cross_entropy(nll, smooth, w_t, weighted, reduction, label_smoothing, C):
    """torch's cross_entropy_loss_label_smoothing: (1 - eps) nll + (eps / C) smooth, where 'mean'
    divides nll by sum(w[t]) and smooth by sum(w[t]) with weights, by the element count without."""
    if reduction == "none":
        return nll if smooth is None else nll * (1 - label_smoothing) + smooth * (label_smoothing / C)
    if reduction == "sum":
        total = nll.sum()
        return total if smooth is None else total * (1 - label_smoothing) + smooth.sum() * (label_smoothing / C)
    den = w_t.sum()
    loss = nll.sum() / den
    if smooth is None:
        return loss
    smooth_mean = smooth.sum() / den if weighted else smooth.mean()
    return loss * (1 - label_smoothing) + smooth_mean * (label_smoothing / C)


# ------------------------------------------------------------------ embedding
def embedding(input, weight, padding_idx):
    if input.dtype not in (_dt.int64, _dt.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {_tensor_type_name(input)} instead (while checking arguments for "
                           "embedding)")
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    flat = input.reshape(-1)
    rows = weight.index_select(0, flat)
    if padding_idx is not None:
        # the padding row's value is read, its gradient is not: the same values through a
        # detached branch where the index is padding_idx
        pad = _ew.eq(flat, padding_idx).unsqueeze(1)
        rows = _ew.where(pad, rows.detach(), rows)
    return rows.reshape(tuple(input.shape) + (weight.shape[1],))


def _tensor_type_name(t):
    prefix = "torch.cuda." if t.device.type == "cuda" else "torch."
    return prefix + _dt.type_name(t.dtype) + "Tensor"


__all__ = ["layer_norm", "nll_loss", "cross_entropy", "embedding", "Tensor", "_views"]
