"""tt.nn.functional: the functional forms torch users call as F.*.

Each function takes torch.nn.functional's signature, defaults and errors. The primitives live in
the op table (layer_norm and the class-index cross entropy have their own fused kernels:
ops/nn.py); the other losses are short compositions of table ops, so their gradients (and
gradients of gradients) come from the ops they are made of.
"""
from .._autocast import autocast_policy as _autocast_policy
import warnings as _warnings

from .. import _tracing
from .. import dtypes as _dt
from ..autograd.composite import named_composite as _named_composite
from ..ops import copy as _copy
from ..ops import creation as _creation
from ..ops import activations as _act
from ..ops import elementwise as _ew
from ..ops import losses as _losses
from ..ops import pointwise as _pw
from ..ops import nn as _nn
from ..ops import padding as _padding
from ..ops import resample as _resample
from ..ops import normalization as _norm
from ..ops import reduce as _reduce
from ..ops import softmax as _softmax
from ..ops.elementwise import sigmoid, tanh  # noqa: F401
from ..ops.linalg import linear  # noqa: F401
from ..ops.losses import bilinear, cosine_similarity, pairwise_distance  # noqa: F401
from ..tensor import Tensor as _Tensor


def _softmax_dim(name, input, dim, stacklevel):
    if dim is None:    # torch's deprecated implicit dim, with its warning
        _warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                       "include dim=X as an argument.", UserWarning, stacklevel=stacklevel)
        return _softmax._implicit_dim(input.dim())
    return dim


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    return _softmax.softmax(input, _softmax_dim("softmax", input, dim, _stacklevel), dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    return _softmax.log_softmax(input, _softmax_dim("log_softmax", input, dim, _stacklevel), dtype=dtype)


def relu(input, inplace=False):
    return _ew.relu_(input) if inplace else _ew.relu(input)


def silu(input, inplace=False):
    return _pw.silu_(input) if inplace else _pw.silu(input)


def gelu(input, approximate="none"):
    return _pw.gelu(input, approximate=approximate)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x where x > 0, else negative_slope * x (NaN stays NaN); the gradient is 1 or the slope,
    the slope at 0, as torch's leaky_relu_backward (self > 0). One fused entry (ops/activations.py)."""
    return _act.leaky_relu(input, negative_slope, inplace)


def leaky_relu_(input, negative_slope=0.01):
    return _act.leaky_relu(input, negative_slope, inplace=True)


# ------------------------------------------------------------------ padding
def pad(input, pad, mode="constant", value=None):
    """torch.nn.functional.pad: constant (any dims; negative pads cut), reflect, replicate,
    circular (the last 1-3 dims), with torch's errors (ops/padding.py)."""
    return _padding.pad(input, pad, mode, value)


# ------------------------------------------------------------------ folding and shuffling
def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """torch.nn.functional.unfold (im2col): the sliding blocks of a (N, C, H, W) input as the
    columns of a (N, C*kh*kw, L) tensor (ops/resample.py)."""
    return _resample.im2col(input, kernel_size, dilation, padding, stride)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """torch.nn.functional.fold (col2im): the columns of a (N, C*kh*kw, L) tensor summed back
    into a (N, C, H, W) output, overlapping blocks added (ops/resample.py)."""
    return _resample.col2im(input, output_size, kernel_size, dilation, padding, stride)


# ------------------------------------------------------------------ interpolation
def _is_integer(x):
    import numpy as _np
    return isinstance(x, (int, _np.integer)) and not isinstance(x, bool)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """torch.nn.functional.interpolate: resize the spatial dims of a (N, C, *) input to ``size`` or
    by ``scale_factor`` with torch's coordinate rules (ops/resample.py): nearest, nearest-exact,
    linear (3D), bilinear / bicubic (4D, antialias too), trilinear (5D), area (adaptive average
    pooling). With a scale_factor and recompute_scale_factor not True, the factor itself (not
    in / out) maps output to input coordinates, as torch's."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    elif size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError("Input and output must have the same number of spatial dimensions, but got input "
                                 f"with spatial dimensions of {list(input.shape[2:])} and output size of {size}. "
                                 "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                                 "(o1, o2, ...,oK) format.")
            if not all(_is_integer(x) for x in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                                f"Tuple[int, int, int], but got size with types {[type(x) for x in size]}")
            output_size = list(size)
        else:
            if not _is_integer(size):
                raise TypeError(f"interpolate(): size must be an int or a tuple of ints, not {type(size).__name__}")
            output_size = [size for _ in range(dim)]
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError("Input and scale_factor must have the same number of spatial dimensions, but got "
                                 f"input with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape "
                                 f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = [float(f) for f in scale_factor]
        else:
            scale_factors = [float(scale_factor) for _ in range(dim)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor is not None and recompute_scale_factor:
        output_size = []
        for i in range(dim):
            v = float(input.shape[i + 2]) * scale_factors[i]
            if v != v or v in (float("inf"), float("-inf")):
                raise RuntimeError("value cannot be converted to type int64_t without overflow")
            output_size.append(int(v))      # torch's _sym_int: truncation
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         "4-D tensor as input")
    if 3 <= input.dim() <= 5 and mode in ("nearest", "nearest-exact"):
        return _resample.upsample_nearest(input, output_size, scale_factors, exact=mode == "nearest-exact")
    if 3 <= input.dim() <= 5 and mode == "area":
        pool = globals().get(f"adaptive_avg_pool{dim}d")
        if pool is None:
            raise NotImplementedError("interpolate(mode='area') is adaptive average pooling, which tritensor does not "
                                      "have yet")
        return pool(input, output_size)
    if (input.dim(), mode) in ((3, "linear"), (4, "bilinear"), (5, "trilinear")):
        if antialias:
            return _resample.upsample_antialiased(input, output_size, align_corners, scale_factors, "bilinear")
        return _resample.upsample_linear(input, output_size, align_corners, scale_factors)
    if input.dim() == 4 and mode == "bicubic":
        if antialias:
            return _resample.upsample_antialiased(input, output_size, align_corners, scale_factors, "bicubic")
        return _resample.upsample_linear(input, output_size, align_corners, scale_factors, mode="cubic")
    if input.dim() == 4 and mode == "lanczos":
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
        raise NotImplementedError("interpolate(mode='lanczos') is not implemented in tritensor")
    for d, m, need in ((3, "bilinear", "4D"), (3, "trilinear", "5D"), (4, "linear", "3D"), (4, "trilinear", "5D"),
                       (5, "linear", "3D"), (5, "bilinear", "4D")):
        if input.dim() == d and mode == m:
            raise NotImplementedError(f"Got {d}D input, but {m} mode needs {need} input")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the "
                              "modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
                              f"nearest-exact (got {mode})")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """torch.nn.functional.upsample: the deprecated name of interpolate (with its warning)."""
    _warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """torch.nn.functional.upsample_nearest: interpolate(mode='nearest'), deprecated (warns)."""
    _warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                   stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """torch.nn.functional.upsample_bilinear: interpolate(mode='bilinear', align_corners=True),
    deprecated (warns)."""
    _warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                   stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ------------------------------------------------------------------ grid sampling
_GRID_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please "
                 "specify align_corners=True if the old behavior is desired. See the documentation of grid_sample for "
                 "details.")


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """torch.nn.functional.grid_sample: input (N, C, [D,] H, W) sampled at the normalised
    coordinates of grid (N, [Do,] Ho, Wo, 2 or 3) in [-1, 1] (ops/resample.py)."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        _warnings.warn(_GRID_WARNING, stacklevel=2)
        align_corners = False
    return _resample.grid_sampler(input, grid, ("bilinear", "nearest", "bicubic").index(mode),
                                  ("zeros", "border", "reflection").index(padding_mode), align_corners)


def affine_grid(theta, size, align_corners=None):
    """torch.nn.functional.affine_grid: the grid of F.grid_sample for a batch of affine maps
    theta (N, 2, 3) over size (N, C, H, W), or (N, 3, 4) over (N, C, D, H, W)."""
    if align_corners is None:
        _warnings.warn(_GRID_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got "
                             f"{theta.shape}.")
        spatial_size = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got "
                             f"{theta.shape}.")
        spatial_size = size[-3:]
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if align_corners and min(spatial_size) == 1:
        _warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                       "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                       "of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return _resample.affine_grid_generator(theta, size, align_corners)


# ------------------------------------------------------------------ pooling (ops/pool.py)
from ..ops.pool import (adaptive_avg_pool2d, adaptive_avg_pool3d, adaptive_max_pool2d,  # noqa: E402,F401
                        adaptive_max_pool3d, avg_pool2d, avg_pool3d, fractional_max_pool2d, fractional_max_pool3d,
                        lp_pool1d, lp_pool2d, lp_pool3d, max_unpool1d, max_unpool2d, max_unpool3d,
                        max_pool2d_with_indices, max_pool3d_with_indices, adaptive_max_pool1d_with_indices,
                        adaptive_max_pool2d_with_indices, adaptive_max_pool3d_with_indices,
                        fractional_max_pool2d_with_indices, fractional_max_pool3d_with_indices)


# ------------------------------------------------------------------ normalization
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """torch.nn.functional.layer_norm: normalize over the last len(normalized_shape) dims with
    the biased variance, then scale by weight and shift by bias (one fused kernel each way)."""
    return _nn.layer_norm(input, normalized_shape, weight, bias, eps)


def _verify_batch_size(size):
    size_prods = size[0]
    for i in range(len(size) - 2):
        size_prods *= size[i + 2]
    if size_prods == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def _verify_spatial_size(size):
    size_prods = 1
    for i in range(2, len(size)):
        size_prods *= size[i]
    if size_prods == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {size}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """torch.nn.functional.batch_norm: normalise every channel (dim 1) over the batch and the
    spatial dims; training uses the batch's statistics and moves running_mean / running_var
    (when given) toward them, eval uses the running statistics (fused kernels: ops/normalization.py)."""
    if training:
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return _norm.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, True)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """torch.nn.functional.instance_norm: every channel of every sample normalised over its
    spatial dims (batch norm of the (1, N * C, *) view, as torch)."""
    if use_input_stats:
        _verify_spatial_size(input.size())
    return _norm.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, True)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """torch.nn.functional.group_norm: each sample's channels in num_groups groups, each group
    normalised over its channels and spatial dims, then a per-channel affine map."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    _verify_batch_size([input.size(0) * input.size(1) // num_groups, num_groups] + list(input.size()[2:]))
    return _norm.group_norm(input, num_groups, weight, bias, eps, True)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """torch.nn.functional.local_response_norm: input / (k + alpha * mean over ``size``
    neighbouring channels of input^2)^beta."""
    return _norm.local_response_norm(input, size, alpha, beta, k)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p along dim, eps), as torch."""
    if out is not None:
        raise NotImplementedError("normalize(out=...) is not supported by tritensor")
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom


# ------------------------------------------------------------------ reductions of losses
def _legacy_reduction(size_average, reduce):
    """torch's _Reduction.legacy_get_string, with its deprecation warning."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else ("sum" if reduce else "none")
    _warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                   UserWarning, stacklevel=3)
    return ret


def _reduction(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction == "elementwise_mean":
        _warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                       UserWarning, stacklevel=3)
        return "mean"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _apply_reduction(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _check_target_size(input, target):
    if tuple(target.shape) != tuple(input.shape):
        _warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
            "This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", UserWarning, stacklevel=3)


def _expanded(input, target):
    from ..ops.elementwise import broadcast_shapes
    shape = broadcast_shapes(input.shape, target.shape)
    return input.expand(*shape), target.expand(*shape)


def _check_float(name, *tensors):
    for t in tensors:
        if not t.dtype.is_floating_point:
            raise NotImplementedError(f'"{name}" not implemented for \'{_dt.type_name(t.dtype)}\'')


def _weighted(loss, weight, reduction, input):
    """torch's manual weighted path of mse_loss/l1_loss: 'mean' divides by the sum of weights."""
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / weight.sum()


@_autocast_policy("mse_loss")
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _check_target_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    x, y = _expanded(input, target)
    _check_float("mse_cpu", x, y)
    if weight is not None:
        diff = x - y
        return _weighted(diff * diff, weight, reduction, input)
    # one MseLossBackward0 node with the input's and target's edges, as torch's
    return _named_composite("MseLossBackward0", _mse, input, target, reduction)


def _mse(input, target, reduction):
    x, y = _expanded(input, target)
    diff = x - y
    return _apply_reduction(diff * diff, reduction)


@_autocast_policy("l1_loss")
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _check_target_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    x, y = _expanded(input, target)
    loss = (x - y).abs()
    if weight is not None:
        return _weighted(loss, weight, reduction, input)
    return _apply_reduction(loss, reduction)


def _smooth_l1(diff, beta):
    """0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (torch's smooth_l1)."""
    a = diff.abs()
    return _ew.where(_ew.lt(a, beta), a * a * (0.5 / beta), a - 0.5 * beta)


@_autocast_policy("smooth_l1_loss")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    _check_target_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    x, y = _expanded(input, target)
    if beta == 0.0:                      # torch takes l1_loss here
        return _apply_reduction((x - y).abs(), reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _check_float("smooth_l1_cpu", x, y)
    return _named_composite("SmoothL1LossBackward0", _smooth_l1_loss, input, target, reduction, beta)


def _smooth_l1_loss(input, target, reduction, beta):
    x, y = _expanded(input, target)
    return _apply_reduction(_smooth_l1(x - y, beta), reduction)


@_autocast_policy("huber_loss")
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """delta * smooth_l1(beta=delta): 0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta) elsewhere."""
    _check_target_size(input, target)
    x, y = _expanded(input, target)
    if reduction not in ("none", "mean", "sum") and weight is None:
        _reduction(None, None, reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _check_float("huber_cpu", x, y)
    if weight is None:
        reduction = _reduction(None, None, reduction)
        return _named_composite("HuberLossBackward0", _huber_loss, input, target, reduction, delta)
    loss = _huber(x - y, delta)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")
    return _apply_reduction(loss, reduction)


def _huber(d, delta):
    a = d.abs()
    return _ew.where(_ew.lt(a, delta), a * a * 0.5, (a - 0.5 * delta) * delta)


def _huber_loss(input, target, reduction, delta):
    x, y = _expanded(input, target)
    return _apply_reduction(_huber(x - y, delta), reduction)


@_autocast_policy("binary_cross_entropy")
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-w (t log(x) + (1 - t) log(1 - x)), each log clamped at -100 as torch does, so x = 0 or 1
    gives a finite loss (100) and a finite gradient."""
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input size ({input.size()}) is "
            "deprecated. Please ensure they have the same size.")
    if not input.dtype.is_floating_point or target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {_dt.type_name(target.dtype)} but expected "
                           f"{_dt.type_name(input.dtype)}")
    if input.numel() and bool(((input < 0) | (input > 1)).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    # one BinaryCrossEntropyBackward0 node, as torch's
    return _named_composite("BinaryCrossEntropyBackward0", _bce, input, target, weight, reduction)


def _bce(input, target, weight, reduction):
    log_x = input.log().clamp_min(-100)
    log_1mx = (1 - input).log().clamp_min(-100)
    loss = -(target * log_x + (1 - target) * log_1mx)
    if weight is not None:
        loss = loss * weight.expand(*_shape_of(target, weight))
    return _apply_reduction(loss, reduction)


def _shape_of(target, weight):
    from ..ops.elementwise import broadcast_shapes
    return broadcast_shapes(target.shape, weight.shape)


@_autocast_policy("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """The stable form torch uses: (1 - t) x + (1 + (pw - 1) t) softplus(-x), with
    softplus(-x) = m - x + log(exp(-m) + exp(x - m)) for m = max(x, 0): no exp overflows for
    any |x|, and the value does not depend on m, so every derivative is exact (also at x = 0,
    where a form with |x| would take abs's zero subgradient)."""
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    if not target.dtype.is_floating_point:
        result = _dt.promote_types(input.dtype, target.dtype)
        raise RuntimeError(f"result type {_dt.type_name(result)} can't be cast to the desired output type "
                           f"{_dt.type_name(target.dtype)}")
    # one BinaryCrossEntropyWithLogitsBackward0 node, as torch's
    return _named_composite("BinaryCrossEntropyWithLogitsBackward0", _bce_with_logits, input, target, weight,
                           pos_weight, reduction)


def _bce_with_logits(input, target, weight, pos_weight, reduction):
    m = input.detach().clamp_min(0)
    softplus_neg = (m - input) + ((-m).exp() + (input - m).exp()).log()
    if pos_weight is not None:
        log_weight = (pos_weight - 1) * target + 1
        loss = (1 - target) * input + log_weight * softplus_neg
    else:
        loss = (1 - target) * input + softplus_neg
    if weight is not None:
        loss = loss * weight
    return _apply_reduction(loss, reduction)


@_autocast_policy("nll_loss")
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """-w[t] input[t] along the class dim (1, or 0 for an unbatched (C,) input); 'mean' divides
    by the sum of w[t] over the targets that are not ignore_index (nan when all are ignored)."""
    reduction = _reduction(size_average, reduce, reduction)
    return _nn.nll_loss(input, target, weight, ignore_index, reduction)


@_autocast_policy("cross_entropy")
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """log_softmax along the class dim then the negative log likelihood, fused (ops/nn.py).

    Class-index targets: as nll_loss, with label smoothing mixing in (eps / C) times the
    (weighted) sum over all classes, as torch. Class-probability targets (a float target of
    input's shape): -sum_c w_c q_c log_softmax(x)_c with q smoothed to (1 - eps) q + eps / C;
    'mean' divides by the number of rows."""
    reduction = _reduction(size_average, reduce, reduction)
    return _nn.cross_entropy(input, target, weight, ignore_index, reduction, float(label_smoothing))


# ------------------------------------------------------------------ sparse and random
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """weight's rows at the indices ``input`` (any shape): out shape input.shape + (D,). The
    gradient is summed into a dense weight gradient (deterministic scatter-add); the
    padding_idx row gets none; scale_grad_by_freq divides each position's gradient by the count
    of its index in ``input``. max_norm first rescales (in place, without autograd) every row
    ``input`` refers to whose norm_type-norm exceeds max_norm to max_norm / (norm + 1e-7)."""
    if padding_idx is not None:
        n = weight.size(0)
        if padding_idx > 0 and padding_idx >= n or padding_idx < 0 and padding_idx < -n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            padding_idx = n + padding_idx
    if sparse:
        raise NotImplementedError("embedding(sparse=True): tritensor has no sparse gradients")
    if max_norm is not None:
        _nn.embedding_renorm_(weight, input.contiguous(), max_norm, norm_type)
    # one EmbeddingBackward0 node whose edge is the weight's, as torch's
    return _named_composite("EmbeddingBackward0", _nn.embedding, input, weight, padding_idx, scale_grad_by_freq)



def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxima of bags of weight's rows without materialising them: input 1-D
    with offsets (each bag's first position; include_last_offset: the last one closes the last
    bag) or 2-D (rows of equal bags). per_sample_weights scales each row (sum mode only);
    padding_idx's entries are left out (not counted by mean); an empty bag gives zeros. One
    EmbeddingBagBackward0 node (ops/embedding_bag.py)."""
    from ..ops.embedding_bag import MODES, embedding_bag_forward
    if weight.dtype is _dt.int64 and input.dtype.is_floating_point:
        _warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, "
                       "input, ...)` is deprecated, and should now be `embedding_bag(input, weight, ...)`.",
                       stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed "
                             f"length sequences. However, found offsets of type {type(offsets)}")
        offsets = _creation.arange(0, input.numel(), input.size(1), dtype=input.dtype, device=input.device)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    if sparse:
        raise NotImplementedError("embedding_bag(sparse=True): tritensor has no sparse gradients")
    if max_norm is not None:
        _nn.embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    return embedding_bag_forward(weight, input, offsets, scale_grad_by_freq, MODES[mode], per_sample_weights,
                                 include_last_offset, padding_idx)[0]

@_tracing.random_op("nn.functional.dropout")
def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p and scale the rest by 1 / (1 - p); the mask comes
    from tt.rand on input's device (tt.manual_seed reproduces it). Identity when not training."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"result type Float can't be cast to the desired output type {_dt.type_name(input.dtype)}")
    from ..ops import creation as _creation
    if p == 1.0:
        scale = _creation.zeros_like(input)
    else:        # keep with probability 1 - p (torch's bernoulli_(1 - p)), scaled so the mean is kept
        u = _creation.rand_like(input)
        scale = _ew.where(_ew.lt(u, 1.0 - p), 1.0 / (1.0 - p), 0.0).to(input.dtype)
    if inplace:
        return input.mul_(scale)
    return input * scale


def _feature_dropout(input, p, training, inplace):
    """torch's _dropout_impl<feature_dropout>: one keep/drop draw per (sample, channel), shared by
    every position of the channel, kept ones scaled by 1 / (1 - p)."""
    if p == 0 or not training or input.numel() == 0:
        return input
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if p == 1:
        zero = _creation.zeros((), dtype=input.dtype, device=input.device)
        return input.mul_(zero) if inplace else input * zero
    noise = _creation.empty(*input.shape[:2], *([1] * (input.dim() - 2)), dtype=input.dtype, device=input.device)
    noise.bernoulli_(1 - p)
    noise.div_(1 - p)
    return input.mul_(noise) if inplace else input * noise


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _batched_feature_dropout(input, p, training, inplace, batched):
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _feature_dropout(input, p, training, inplace)
    if not batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


@_tracing.random_op("nn.functional.dropout1d")
def dropout1d(input, p=0.5, training=True, inplace=False):
    """torch.nn.functional.dropout1d: zero whole channels of a (N, C, L) or (C, L) input with
    probability p, the rest scaled by 1 / (1 - p)."""
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _batched_feature_dropout(input, p, training, inplace, input.dim() == 3)


@_tracing.random_op("nn.functional.dropout2d")
def dropout2d(input, p=0.5, training=True, inplace=False):
    """torch.nn.functional.dropout2d: channel-wise dropout of a (N, C, H, W) input (dim 1 is the
    channel for any rank, with torch's deprecation warnings for ranks other than 4)."""
    _check_p(p)
    d = input.dim()
    if d not in (3, 4):
        _warnings.warn(f"dropout2d: Received a {d}-D input to dropout2d, which is deprecated and will result in an "
                       "error in a future release. To retain the behavior and silence this warning, please use "
                       "dropout instead. Note that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                       "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D "
                       "inputs).", stacklevel=2)
    if d == 3:
        _warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                       "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                       "This behavior will change in a future release to interpret the input as one without a batch "
                       "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                       "switch to using dropout1d instead.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


@_tracing.random_op("nn.functional.dropout3d")
def dropout3d(input, p=0.5, training=True, inplace=False):
    """torch.nn.functional.dropout3d: channel-wise dropout of a (N, C, D, H, W) or (C, D, H, W) input."""
    _check_p(p)
    d = input.dim()
    if d not in (4, 5):
        _warnings.warn(f"dropout3d: Received a {d}-D input to dropout3d, which is deprecated and will result in an "
                       "error in a future release. To retain the behavior and silence this warning, please use "
                       "dropout instead. Note that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                       "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D "
                       "inputs).", stacklevel=2)
    return _batched_feature_dropout(input, p, training, inplace, d == 5)


_SELU_ALPHA = 1.7580993408473766     # -scale * alpha of SELU: where alpha dropout sends a dropped value


def _alpha_dropout(input, p, training, inplace, feature):
    """torch's _dropout_impl<alpha_dropout>: keep each value (or each channel, feature=True) with
    probability 1 - p, send the dropped ones to SELU's negative saturation, then the affine map
    a * x + b that restores zero mean and unit variance for a standard input."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        zero = _creation.zeros((), dtype=input.dtype, device=input.device)
        return input.mul_(zero) if inplace else input * zero
    if feature:
        if input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        noise = _creation.empty(*input.shape[:2], *([1] * (input.dim() - 2)), dtype=input.dtype, device=input.device)
    else:
        noise = _creation.empty_like(input)
    noise.bernoulli_(1 - p)
    a = 1.0 / ((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p)) ** 0.5
    b = noise.add(-1).mul_(_SELU_ALPHA * a).add_(_SELU_ALPHA * a * p)
    noise.mul_(a)
    return (input.mul_(noise) if inplace else input * noise).add_(b)


@_tracing.random_op("nn.functional.alpha_dropout")
def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """torch.nn.functional.alpha_dropout: dropout that keeps a SELU network's self-normalization
    (mean 0, variance 1); the input itself when not training or p == 0."""
    return _alpha_dropout(input, p, training, inplace, feature=False)


@_tracing.random_op("nn.functional.feature_alpha_dropout")
def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """torch.nn.functional.feature_alpha_dropout: alpha dropout of whole channels (dim 1)."""
    return _alpha_dropout(input, p, training, inplace, feature=True)


def one_hot(tensor, num_classes=-1):
    """int64 tensor of shape tensor.shape + (num_classes,), 1 where the last index equals the value."""
    if not isinstance(tensor, _Tensor) or tensor.dtype is not _dt.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0 and num_classes <= 0:     # (torch: any num_classes <= 0 of an empty tensor)
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    if num_classes == -1:
        num_classes = int(tensor.max().item()) + 1
    if tensor.numel():
        if int(tensor.min().item()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if int(tensor.max().item()) >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    elif num_classes < 0:
        raise RuntimeError("Class values must be smaller than num_classes.")
    import tritensor as _tt
    classes = _tt.arange(num_classes, device=tensor.device)
    return _ew.eq(tensor.unsqueeze(-1), classes).to(_dt.int64)


from ..ops.pdist import pdist  # noqa: F401
from ..ops.attention import scaled_dot_product_attention  # noqa: F401,E402


# ------------------------------------------------------------------ hardtanh family
def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """x clamped to [min_val, max_val]; the gradient passes only strictly inside the interval, as
    torch's hardtanh_backward (clamp's passes at the bounds too). One HardtanhBackward0 node."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if not input.dtype.is_floating_point:
        return _hardtanh_integer(input, min_val, max_val, inplace)
    if inplace:
        return input.copy_(_hardtanh(input, min_val, max_val))
    return _named_composite("HardtanhBackward0", _hardtanh, input, min_val, max_val)


def _hardtanh_integer(input, min_val, max_val, inplace):
    """torch's hardtanh of an integer tensor: the bounds converted to its dtype (truncated, with
    torch's overflow error), the result in its dtype; no bool, no negative bound if unsigned."""
    if input.dtype is _dt.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if input.dtype is _dt.uint8 and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    for v in (min_val, max_val):
        _copy.check_scalar_fits(v, input.dtype)
    low, high = int(min_val), int(max_val)
    return input.clamp_(low, high) if inplace else input.clamp(low, high)


def _hardtanh(input, min_val, max_val):
    if input.dtype is _dt.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if not input.dtype.is_floating_point:   # torch clamps integers to the bounds as integers
        min_val, max_val = int(min_val), int(max_val)
        if input.dtype is _dt.uint8 and (min_val < 0 or max_val < 0):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    # torch's hardtanh_backward passes the gradient unless x <= min or x >= max (a NaN passes it);
    # the value is x itself unless it lies outside the bounds (so -0.0 at a bound 0 stays -0.0)
    passes = _pw.logical_not(_pw.logical_or(_ew.le(input, min_val), _ew.ge(input, max_val)))
    held = input.detach()
    held = _ew.where(_pw.logical_or(_ew.lt(held, min_val), _ew.gt(held, max_val)), held.clamp(min_val, max_val), held)
    return _ew.where(passes, input, held)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    """hardtanh(input, 0, 6), as torch's (HardtanhBackward0)."""
    return hardtanh(input, 0.0, 6.0, inplace)


# ------------------------------------------------------------------ activations (ops/activations.py)
def elu(input, alpha=1.0, inplace=False):
    """alpha (e^x - 1) for x <= 0, x above; EluBackward0 (EluBackward1 in place)."""
    return _act.elu(input, alpha, inplace)


def elu_(input, alpha=1.0):
    return _act.elu(input, alpha, inplace=True)


def selu(input, inplace=False):
    """scale * elu(x, alpha) with SELU's constants (torch records EluBackward0)."""
    return _act.selu_(input) if inplace else _act.selu(input)


def selu_(input):
    return _act.selu_(input)


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha (e^(x / alpha) - 1))."""
    return _act.celu_(input, alpha) if inplace else _act.celu(input, alpha)


def celu_(input, alpha=1.0):
    return _act.celu_(input, alpha)


def threshold(input, threshold, value, inplace=False):
    """value where x <= threshold, x elsewhere."""
    return _act.threshold_(input, threshold, value) if inplace else _act.threshold(input, threshold, value)


def threshold_(input, threshold, value):
    return _act.threshold_(input, threshold, value)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: random slopes in [lower, upper] in training, their mean in eval."""
    return (_act.rrelu_(input, lower, upper, training) if inplace
            else _act.rrelu(input, lower, upper, training))


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return _act.rrelu_(input, lower, upper, training)


def glu(input, dim=-1):
    """a * sigmoid(b) for the halves a, b of the input along dim."""
    return _act.glu(input, dim)


def hardsigmoid(input, inplace=False):
    return _act.hardsigmoid(input, inplace)


def hardswish(input, inplace=False):
    return _act.hardswish(input, inplace)


def logsigmoid(input):
    return _act.logsigmoid(input)


def mish(input, inplace=False):
    return _act.mish(input, inplace)


def softplus(input, beta=1.0, threshold=20.0):
    return _act.softplus(input, beta, threshold)


def softshrink(input, lambd=0.5):
    return _act.softshrink(input, lambd)


def softsign(input):
    return _act.softsign(input)


def tanhshrink(input):
    return _act.tanhshrink(input)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along dim (torch's deprecated implicit dim, with its warning)."""
    return _act.softmin(input, _softmax_dim("softmin", input, dim, _stacklevel), dtype=dtype)


# ------------------------------------------------------------------ losses (ops/losses.py)
@_autocast_policy("kl_div")
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Pointwise KL divergence with log-probability inputs: t (log t - x), or e^t (t - x) with
    log_target; 'batchmean' divides the sum by the batch size ('mean' by every element, with
    torch's warning)."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    elif reduction == "mean":
        _warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                       "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                       "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                       UserWarning, stacklevel=2)
    elif reduction != "batchmean":
        reduction = _reduction(None, None, reduction)
    return _losses.kl_div(input, target, reduction, log_target)


@_autocast_policy("margin_ranking_loss")
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    return _losses.margin_ranking_loss(input1, input2, target, margin, _reduction(size_average, reduce, reduction))


@_autocast_policy("hinge_embedding_loss")
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    return _losses.hinge_embedding_loss(input, target, margin, _reduction(size_average, reduce, reduction))


@_autocast_policy("multilabel_margin_loss")
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _losses.multilabel_margin_loss(input, target, _reduction(size_average, reduce, reduction))


@_autocast_policy("soft_margin_loss")
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _losses.soft_margin_loss(input, target, _reduction(size_average, reduce, reduction))


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    return _losses.multilabel_soft_margin_loss(input, target, weight, reduction)


@_autocast_policy("cosine_embedding_loss")
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    return _losses.cosine_embedding_loss(input1, input2, target, margin, _reduction(size_average, reduce, reduction))


@_autocast_policy("multi_margin_loss")
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
    reduction = _reduction(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    return _losses.multi_margin_loss(input, target, p, margin, weight, reduction)


@_autocast_policy("triplet_margin_loss")
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    reduction = _reduction(size_average, reduce, reduction)
    if margin <= 0:         # torch.nn.functional's own check, after the reduction's
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return _losses.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    return _losses.triplet_margin_with_distance_loss(anchor, positive, negative, distance_function, margin, swap,
                                                     reduction)


@_autocast_policy("poisson_nll_loss")
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    return _losses.poisson_nll_loss(input, target, log_input, full, eps, _reduction(size_average, reduce, reduction))


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    return _losses.gaussian_nll_loss(input, target, var, full, eps, reduction)


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...), torch 2.13's API."""
    return _losses.linear_cross_entropy(input, linear_weight, target, linear_bias, weight,
                                        _reduction(None, None, reduction), ignore_index, label_smoothing, options)


@_autocast_policy("ctc_loss")
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The connectionist temporal classification loss (ops/losses.py; Triton kernels over the
    alignment lattice): log_probs (T, N, C) or (T, C), targets padded (N, S) or concatenated."""
    return _losses.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                            _reduction(None, None, reduction), zero_infinity)


# multi-head attention (nn/_multi_head_attention.py): torch's functional and its mask helpers
from ._multi_head_attention import (_canonical_mask, _in_projection, _in_projection_packed,  # noqa: E402,F401
                                    _mha_shape_check, _none_or_dtype, multi_head_attention_forward)
