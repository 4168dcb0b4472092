"""Resampling and rearranging: pixel_shuffle / pixel_unshuffle, channel_shuffle, im2col (F.unfold)
and col2im (F.fold) as composites of existing ops; the upsampling ops behind F.interpolate and the
grid samplers as table entries with Triton kernels (kernels/resample.py).

pixel_shuffle      a reshape, a permute and a reshape (torch's own decomposition); one node each,
pixel_unshuffle    PixelShuffleBackward0 / PixelUnshuffleBackward0 / ChannelShuffleBackward0, as
channel_shuffle    torch's.
im2col             the input padded with zeros (constant_pad_nd), its H*W plane flattened, then
                   ONE index_select of the kh*kw*L positions the sliding blocks read: an exact
                   gather (no 0 * x products, so inf and NaN stay where they are) whose backward is
                   index_select's deterministic scatter-add, i.e. col2im. Node Im2ColBackward0.
col2im             the adjoint: index_add of the columns into a zero (N, C, Hp*Wp) plane, then the
                   padding cut off; its backward is index_add's (an index_select: im2col).
                   Node Col2ImBackward0.
upsample_nearest   a table entry: one gather kernel reads every output element from its source
                   (per-dim index vectors computed as torch's, below); backward: index_add per dim.
upsample_taps      linear, cubic and antialiased upsampling, a table entry: separable, each output
                   position of a dim a weighted sum of two (linear), four (cubic) or the filter's
                   (antialias) input positions along it; one kernel sums all dims' taps at once
                   from per-dim (taps, out) index and weight tables. Indices and weights are
                   torch's (UpSample.h: area_pixel_compute_scale, area_pixel_compute_source_index,
                   guard_index_and_lambda, nearest_idx, the cubic convolution with A = -0.75 and
                   clamped taps), computed on the host in torch's opmath precision (float32 for
                   every dtype but float64). Only the taps a position reads enter its sum, so
                   non-finite inputs spread as in torch. 16-bit inputs are computed in float32 and
                   rounded once. Backward: per dim, index_add of each tap's weighted gradient, in
                   tritensor ops (double backward works). Nodes named as torch's
                   (UpsampleBilinear2DBackward0 ...).
grid_sampler       grid_sampler_2d/3d are table entries: the forward one Triton kernel (kernels/resample.py;
                   NumPy reference backends/numpy_resample.py), the backward differentiates the
                   composite below at the saved input and grid.
                   The composite is torch's GridSampler.h written in tritensor ops: the grid's
affine_grid_generator
                   (x, y[, z]) unnormalised to pixel coordinates, the padding mode applied
                   (border: clipped; reflection: reflected about the edges, then clipped, with
                   torch's zero gradient at the clip bounds), then per corner tap a gather of the
                   flattened input and a weight (bilinear/trilinear: products of the fractions;
                   nearest: round half to even; bicubic: the cubic convolution, A = -0.75, over
                   4x4 taps each padded as torch's get_value_bounded). Taps outside the input
                   contribute 0 through a where (never 0 * value). Gradients to input (gather's
                   scatter-add) and grid (through the fractions) come from the ops. One node,
                   GridSampler2DBackward0 / GridSampler3DBackward0. affine_grid_generator is
                   torch's base grid times theta^T (one bmm), AffineGridGeneratorBackward0.
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _dt
from .. import memory_formats as _memory_formats
from .. import autograd as _autograd
from ..autograd import grad_mode as _grad_mode
from ..autograd.composite import named_composite
from ..backends import numpy_resample
from ..backends.triton import resample as triton_resample
from ..tensor import Tensor
from . import _layout
from . import creation as _creation
from . import elementwise as _ew
from . import indexing as _indexing
from . import joining as _joining
from . import padding as _padding
from . import scatter as _scatter
from . import views as _views
from .dispatch import dispatch
from .surface import declare
from .table import FROM_BACKWARD, Meta, op


def _require_int(fn, name, position, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be int, not {type(value).__name__}")
    return int(value)


def _require_tensor(fn, value, name="input", position=1):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not {type(value).__name__}")


# --------------------------------------------------------------------------- pixel / channel shuffle
def _pixel_shuffle(x, r):
    *batch, c, h, w = (int(s) for s in x.shape)
    oc = c // (r * r)
    nb = len(batch)
    y = x.reshape(*batch, oc, r, r, h, w)
    perm = list(range(nb)) + [nb, nb + 3, nb + 1, nb + 4, nb + 2]
    return y.permute(*perm).reshape(*batch, oc, h * r, w * r)


def pixel_shuffle(input, upscale_factor):
    """torch.pixel_shuffle: (*, C*r*r, H, W) -> (*, C, H*r, W*r); out[c, h*r + i, w*r + j] =
    in[c*r*r + i*r + j, h, w]."""
    _require_tensor("pixel_shuffle", input)
    r = _require_int("pixel_shuffle", "upscale_factor", 2, upscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c = int(input.shape[-3])
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    return named_composite("PixelShuffleBackward0", _pixel_shuffle, input, r)


def _pixel_unshuffle(x, r):
    *batch, c, h, w = (int(s) for s in x.shape)
    nb = len(batch)
    y = x.reshape(*batch, c, h // r, r, w // r, r)
    perm = list(range(nb)) + [nb, nb + 2, nb + 4, nb + 1, nb + 3]
    return y.permute(*perm).reshape(*batch, c * r * r, h // r, w // r)


def pixel_unshuffle(input, downscale_factor):
    """torch.pixel_unshuffle: the inverse of pixel_shuffle, (*, C, H*r, W*r) -> (*, C*r*r, H, W)."""
    _require_tensor("pixel_unshuffle", input)
    r = _require_int("pixel_unshuffle", "downscale_factor", 2, downscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    h, w = int(input.shape[-2]), int(input.shape[-1])
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)={h}"
                           f" is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)={w}"
                           f" is not divisible by {r}")
    return named_composite("PixelUnshuffleBackward0", _pixel_unshuffle, input, r)


def _channel_shuffle(x, groups):
    n, c, *rest = (int(s) for s in x.shape)
    y = x.reshape(n, groups, c // groups, *rest).transpose(1, 2)
    return y.reshape(n, c, *rest)


def channel_shuffle(input, groups):
    """torch.channel_shuffle: (N, C, *) with C = g * k: channel i*k + j goes to j*g + i (the
    groups interleaved), as ShuffleNet's."""
    _require_tensor("channel_shuffle", input)
    groups = _require_int("channel_shuffle", "groups", 2, groups)
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{_padding._size_str(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    c = int(input.shape[1])
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    return named_composite("ChannelShuffleBackward0", _channel_shuffle, input, groups)


# --------------------------------------------------------------------------- im2col / col2im
def _pair_arg(fn_name, name, value):
    value = tuple(value) if isinstance(value, (tuple, list)) else (value, value)
    if len(value) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(value)}")
    return tuple(int(v) for v in value)


def _check_kernel_args(kernel, dilation, padding, stride, order):
    checks = {
        "kernel": (kernel[0] > 0 and kernel[1] > 0, "kernel size should be greater than zero, but got kernel_height: "
                   f"{kernel[0]} kernel_width: {kernel[1]}"),
        "dilation": (dilation[0] > 0 and dilation[1] > 0, "dilation should be greater than zero, but got "
                     f"dilation_height: {dilation[0]} dilation_width: {dilation[1]}"),
        "padding": (padding[0] >= 0 and padding[1] >= 0, f"padding should be non-negative, but got pad_height: "
                    f"{padding[0]} pad_width: {padding[1]}"),
        "stride": (stride[0] > 0 and stride[1] > 0, f"stride should be greater than zero, but got stride_height: "
                   f"{stride[0]} stride_width: {stride[1]}"),
    }
    for key in order:
        ok, message = checks[key]
        if not ok:
            raise RuntimeError(message)


def _check_im2col_dtype(kernel, x):
    if not (x.dtype.is_floating_point or x.dtype is _dt.bool_):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dt.type_name(x.dtype)}\'')


def _block_positions(hp, wp, kernel, dilation, stride, blocks):
    """The flat (row * wp + col) positions of the padded plane that the sliding blocks read, in
    im2col's column order: (kernel row, kernel col, block row, block col)."""
    ki = np.arange(kernel[0], dtype=np.int64)[:, None, None, None] * dilation[0]
    kj = np.arange(kernel[1], dtype=np.int64)[None, :, None, None] * dilation[1]
    bi = np.arange(blocks[0], dtype=np.int64)[None, None, :, None] * stride[0]
    bj = np.arange(blocks[1], dtype=np.int64)[None, None, None, :] * stride[1]
    return ((ki + bi) * wp + (kj + bj)).reshape(-1)


def _dim_out_of_range(x, d):
    if x.dim() == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    raise IndexError(f"Dimension out of range (expected to be in range of [{-x.dim()}, {x.dim() - 1}], but got {d})")


def _im2col(x, kernel, dilation, padding, stride, blocks):
    if x.dim() == 3:       # unbatched: one node, as torch's
        return _views.squeeze(_im2col(_views.unsqueeze(x, 0), kernel, dilation, padding, stride, blocks), 0)
    n, c, h, w = (int(s) for s in x.shape)
    if padding[0] or padding[1]:
        x = _padding.constant_pad_nd(x, [padding[1], padding[1], padding[0], padding[0]], 0)
    hp, wp = h + 2 * padding[0], w + 2 * padding[1]
    idx = _creation.tensor(_block_positions(hp, wp, kernel, dilation, stride, blocks), device=x.device)
    cols = _indexing.index_select(x.reshape(n, c, hp * wp), 2, idx)
    return cols.reshape(n, c * kernel[0] * kernel[1], blocks[0] * blocks[1])


def im2col(input, kernel_size, dilation=1, padding=0, stride=1):
    """torch.nn.functional.unfold (aten.im2col): (N, C, H, W) -> (N, C*kh*kw, L), column l the
    flattened block l (channel-major, then kernel row, kernel col); an unbatched (C, H, W) too."""
    _require_tensor("im2col", input)
    kernel = _pair_arg("im2col", "kernel_size", kernel_size)
    dilation = _pair_arg("im2col", "dilation", dilation)
    padding = _pair_arg("im2col", "padding", padding)
    stride = _pair_arg("im2col", "stride", stride)
    _check_kernel_args(kernel, dilation, padding, stride, ("kernel", "dilation", "padding", "stride"))
    if input.dim() < 3:
        _dim_out_of_range(input, 1 if input.dim() < 2 else 2)
    shape = [int(s) for s in input.shape]
    valid = input.dim() in (3, 4) and shape[-2] != 0 and shape[-1] != 0 and (input.dim() == 4 and shape[1] != 0
                                                                               or input.dim() == 3 and shape[0] != 0)
    if not valid:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {_padding._size_str(shape)}")
    h, w = shape[-2], shape[-1]
    blocks = tuple((s + 2 * p - (d * (k - 1) + 1)) // st + 1
                   for s, p, d, k, st in zip((h, w), padding, dilation, kernel, stride))
    if blocks[0] < 1 or blocks[1] < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size=({kernel[0]}, {kernel[1]}), "
                           f"dilation=({dilation[0]}, {dilation[1]}), padding=({padding[0]}, {padding[1]}), "
                           f"calculated shape of the array of sliding blocks as ({blocks[0]}, {blocks[1]}), but its "
                           "components must be at least one.")
    _check_im2col_dtype("im2col_out_cpu", input)
    return named_composite("Im2ColBackward0", _im2col, input, kernel, dilation, padding, stride, blocks)


def _col2im(cols, output_size, kernel, dilation, padding, stride, blocks):
    if cols.dim() == 2:    # unbatched: one node, as torch's
        return _views.squeeze(_col2im(_views.unsqueeze(cols, 0), output_size, kernel, dilation, padding, stride,
                                      blocks), 0)
    n = int(cols.shape[0])
    c = int(cols.shape[1]) // (kernel[0] * kernel[1])
    hp, wp = output_size[0] + 2 * padding[0], output_size[1] + 2 * padding[1]
    idx = _creation.tensor(_block_positions(hp, wp, kernel, dilation, stride, blocks), device=cols.device)
    plane = _creation.zeros(n, c, hp * wp, dtype=cols.dtype, device=cols.device)
    plane = _scatter.index_add(plane, 2, idx, cols.reshape(n, c, -1)).reshape(n, c, hp, wp)
    return _views.narrow(_views.narrow(plane, 2, padding[0], output_size[0]), 3, padding[1], output_size[1])


def col2im(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """torch.nn.functional.fold (aten.col2im): (N, C*kh*kw, L) -> (N, C, H, W), each column's
    values added back to the block it came from (overlaps sum); an unbatched (C*kh*kw, L) too."""
    _require_tensor("col2im", input)
    output_size = _pair_arg("col2im", "output_size", output_size)
    kernel = _pair_arg("col2im", "kernel_size", kernel_size)
    dilation = _pair_arg("col2im", "dilation", dilation)
    padding = _pair_arg("col2im", "padding", padding)
    stride = _pair_arg("col2im", "stride", stride)
    _check_kernel_args(kernel, dilation, padding, stride, ("kernel", "stride", "dilation", "padding"))
    shape = [int(s) for s in input.shape]
    if not (input.dim() == 2 and shape[0] != 0 and shape[1] != 0 or input.dim() == 3 and shape[1] != 0
            and shape[2] != 0):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {_padding._size_str(shape)}")
    planes, length = shape[-2], shape[-1]
    if planes % (kernel[0] * kernel[1]):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={planes} and kernel_size=({kernel[0]}, {kernel[1]}).")
    blocks = tuple((o + 2 * p - d * (k - 1) - 1) // st + 1
                   for o, p, d, k, st in zip(output_size, padding, dilation, kernel, stride))
    given = (f"Given output_size=({output_size[0]}, {output_size[1]}), kernel_size=({kernel[0]}, {kernel[1]}), "
             f"dilation=({dilation[0]}, {dilation[1]}), padding=({padding[0]}, {padding[1]}), "
             f"stride=({stride[0]}, {stride[1]}), ")
    if length != blocks[0] * blocks[1]:
        raise RuntimeError(given + "expected size of input's dimension 2 to match the calculated number of sliding "
                           f"blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got input.size(2)="
                           f"{length}.")
    if blocks[0] < 1 or blocks[1] < 1:
        raise RuntimeError(given + f"calculated shape of the array of sliding blocks as ({blocks[0]}, {blocks[1]}), "
                           "which is too small (non-positive)")
    _check_im2col_dtype("col2im_out_cpu", input)
    return named_composite("Col2ImBackward0", _col2im, input, output_size, kernel, dilation, padding, stride, blocks)


# --------------------------------------------------------------------------- declarations
declare("pixel_shuffle", pixel_shuffle, method=False, functional=True)
declare("pixel_unshuffle", pixel_unshuffle, method=False, functional=True)
declare("channel_shuffle", channel_shuffle, method=False, functional=True)


# --------------------------------------------------------------------------- upsampling
# Each helper returns, for one resampled dim, the taps: a list of (input index per output
# position, weight per output position) pairs; nearest has one tap and no weight (its index
# vectors feed the gather kernel of the upsample_nearest entry).
_A = -0.75      # torch's cubic convolution coefficient (Keys' a; -0.5 in the antialiased filter)


def _opmath(dtype):
    return np.float64 if dtype is _dt.float64 else np.float32


def _scale_value(in_size, out_size, scale, t):
    """compute_scales_value: 1 / scale_factor when one was given (> 0), else in / out."""
    if scale is not None and scale > 0:
        return t(1.0 / scale)
    return t(in_size) / t(out_size)


def _area_scale(in_size, out_size, align_corners, scale, t):
    """area_pixel_compute_scale."""
    if align_corners:
        return t(in_size - 1) / t(out_size - 1) if out_size > 1 else t(0)
    return _scale_value(in_size, out_size, scale, t)


def _source_index(scale, out_size, align_corners, cubic, t):
    """area_pixel_compute_source_index for every output position."""
    i = np.arange(out_size).astype(t)
    if align_corners:
        return scale * i
    src = scale * (i + t(0.5)) - t(0.5)
    return src if cubic else np.where(src < 0, t(0), src)


def _guard(real, in_size, t):
    """guard_index_and_lambda: the floor clamped to the last index, the fraction to [0, 1]."""
    index = np.minimum(np.floor(real.astype(np.float32)).astype(np.int64), in_size - 1)
    lam = np.clip(real - index.astype(t), t(0), t(1)).astype(t)
    return index, lam


def _nearest_taps(in_size, out_size, scale, exact, t):
    s = _area_scale(in_size, out_size, False, scale, t)
    if exact:      # HelperInterpNearestExact: round half up of the half-pixel source
        real = _source_index(s, out_size, False, False, t)
        index = np.floor((real + t(0.5)).astype(np.float32)).astype(np.int64)
    else:          # HelperInterpNearest: floor(i * scale)
        real = _source_index(s, out_size, True, False, t)
        index = np.floor(real.astype(np.float32)).astype(np.int64)
    return [(np.minimum(index, in_size - 1), None)]


def _linear_taps(in_size, out_size, align_corners, scale, t):
    """compute_source_index_and_lambda (the identity when the size is kept)."""
    if in_size == out_size:
        i = np.arange(out_size, dtype=np.int64)
        return [(i, np.ones(out_size, t)), (i, np.zeros(out_size, t))]
    ratio = _area_scale(in_size, out_size, align_corners, scale, t)
    i0, lam1 = _guard(_source_index(ratio, out_size, align_corners, False, t), in_size, t)
    i1 = i0 + (i0 < in_size - 1)
    return [(i0, (t(1) - lam1).astype(t)), (i1, lam1)]


def _cubic_coefficients(x, a, t):
    x = x.astype(t)

    def near(v):      # cubic_convolution1: |v| <= 1
        return ((a + 2) * v - (a + 3)) * v * v + 1

    def far(v):       # cubic_convolution2: 1 < |v| < 2
        return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a

    one, two = t(1), t(2)
    return [far(x + one).astype(t), near(x).astype(t), near(one - x).astype(t), far(two - x).astype(t)]


def _cubic_taps(in_size, out_size, align_corners, scale, t):
    """HelperInterpCubic: four taps around floor(src), clamped to the edges, with the cubic
    convolution's weights (A = -0.75)."""
    s = _area_scale(in_size, out_size, align_corners, scale, t)
    index, lam = _guard(_source_index(s, out_size, align_corners, True, t), in_size, t)
    coeffs = _cubic_coefficients(lam, t(_A), t)
    return [(np.clip(index - 1 + j, 0, in_size - 1), coeffs[j]) for j in range(4)]


def _aa_filter(mode, x):
    x = np.abs(x)
    if mode == "bilinear":
        return np.where(x < 1, 1 - x, 0.0)
    a = -0.5
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1, near, np.where(x < 2, far, 0.0))


def _antialias_taps(in_size, out_size, align_corners, scale, mode, t):
    """_compute_indices_min_size_weights_aa: a filter (triangle or Keys' a = -0.5 cubic) widened by
    the scale when shrinking, normalised to sum 1; the taps a position does not reach get weight 0."""
    interp = 2 if mode == "bilinear" else 4
    s = float(_area_scale(in_size, out_size, align_corners, scale, t))
    support = interp * 0.5 * s if s >= 1.0 else interp * 0.5
    invscale = 1.0 / s if s >= 1.0 else 1.0
    centers = s * (np.arange(out_size) + 0.5)
    lo = np.maximum((centers - support + 0.5).astype(np.int64), 0)
    hi = np.minimum((centers + support + 0.5).astype(np.int64), in_size)
    width = int((hi - lo).max())
    j = np.arange(width)[None, :]
    w = _aa_filter(mode, (j + lo[:, None] - centers[:, None] + 0.5) * invscale)
    w = np.where(j < (hi - lo)[:, None], w, 0.0)
    total = w.sum(1, keepdims=True)
    w = np.where(total != 0, w / np.where(total != 0, total, 1), w)
    return [(np.minimum(lo + k, in_size - 1), w[:, k].astype(t)) for k in range(width)]


_AXES_BY_DIMS = {1: ("W",), 2: ("H", "W"), 3: ("D", "H", "W")}
_KERNEL_NAMES = {"nearest": "compute_indices_weights_nearest", "nearest-exact": "compute_indices_weights_nearest",
                 "linear": "compute_indices_weights_linear", "cubic": "compute_indices_weights_cubic",
                 "aa": "compute_indices_weights_aa"}


def _output_size(input, output_size, scale_factors):
    k = input.dim() - 2
    if output_size is not None:
        return [int(s) for s in output_size]
    sizes = []
    for s, f in zip(input.shape[2:], scale_factors):
        v = float(s) * float(f)
        if not math.isfinite(v):
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
        sizes.append(int(v))
    assert len(sizes) == k
    return sizes


def _check_upsample(input, out_sizes, kind):
    k = input.dim() - 2
    ins = [int(s) for s in input.shape[2:]]
    if not all(s > 0 for s in ins + out_sizes):
        axes = _AXES_BY_DIMS[k]
        i = ", ".join(f"{a}: {s}" for a, s in zip(axes, ins))
        o = ", ".join(f"{a}: {s}" for a, s in zip(axes, out_sizes))
        sep = " and output" if k == 1 else " output"
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({i}){sep} ({o})")
    if input.numel() == 0 and int(np.prod([int(s) for s in input.shape[1:]])) == 0:
        raise RuntimeError(f"Non-empty {k + 2}D data tensor expected but got a tensor with sizes "
                           f"{_padding._size_str(input.shape)}")
    floating = input.dtype.is_floating_point
    if not floating and not (input.dtype is _dt.uint8 and kind in ("nearest", "nearest-exact")):
        if input.dtype is _dt.uint8:
            raise NotImplementedError(f"interpolate: {kind} interpolation of uint8 images is not supported by "
                                      "tritensor (convert to a float dtype)")
        name = _KERNEL_NAMES[kind]
        if k == 2 and kind in ("nearest", "nearest-exact", "linear"):    # torch's 2d kernels check this first
            name = f"upsample_{'bilinear' if kind == 'linear' else 'nearest'}2d_channels_last"
        raise NotImplementedError(f'"{name}" not implemented for \'{_dt.type_name(input.dtype)}\'')


def _compute_dtype(x):
    return _dt.float64 if x.dtype is _dt.float64 else _dt.float32 if x.dtype.is_floating_point else x.dtype


_DIM_NAMES = {1: "1D", 2: "2D", 3: "3D"}


def upsample_nearest(input, output_size, scale_factors=None, exact=False):
    """aten.upsample_nearest{1,2,3}d and _upsample_nearest_exact{1,2,3}d (output_size or
    scale_factors: one per spatial dim)."""
    out = _output_size(input, output_size, scale_factors)
    kind = "nearest-exact" if exact else "nearest"
    _check_upsample(input, out, kind)
    scales = scale_factors if output_size is None else [None] * len(out)
    t = _opmath(input.dtype)
    taps = [_nearest_taps(int(s), o, f, exact, t) for s, o, f in zip(input.shape[2:], out, scales)]
    indices = [_creation.tensor(index, device=input.device) for ((index, _),) in taps]
    zero = _creation.zeros(1, dtype=_dt.int64, device=input.device)
    indices = [zero] * (3 - len(indices)) + indices          # (D, H, W): missing dims read index 0
    return dispatch(UPSAMPLE_NEAREST, input, *indices, output_size=tuple(out),
                    input_size=tuple(int(s) for s in input.shape[2:]), exact=bool(exact),
                    memory_format=_layout.suggest_memory_format(input._shape, input._stride))


# Nearest upsampling is a table entry: one gather kernel (kernels/resample.py) reads each output
# element from its source (the per-dim index vectors computed above); the backward adds each
# dim's gradient back onto the positions its outputs read (index_add: deterministic, and its own
# backward is index_select, so double backward works).
def _upsample_nearest_rule(input, idx_d, idx_h, idx_w, *, output_size, input_size, exact, memory_format):
    return Meta((int(input.shape[0]), int(input.shape[1])) + tuple(output_size), input.dtype)


def _upsample_nearest_launch(out, input, idx_d, idx_h, idx_w, *, compute, output_size, input_size, exact,
                             memory_format):
    triton_resample.upsample_nearest(out, input, idx_d, idx_h, idx_w)


def _upsample_nearest_backward(ctx, g):
    k = len(ctx.output_size)
    indices = (ctx.idx_d, ctx.idx_h, ctx.idx_w)[3 - k:]
    for d in reversed(range(k)):
        shape = list(g.shape)
        shape[2 + d] = ctx.input_size[d]
        g = _scatter.index_add(_creation.zeros(*shape, dtype=g.dtype, device=g.device), 2 + d, indices[d], g)
    return g, None, None, None


UPSAMPLE_NEAREST = op("upsample_nearest", ("input", "idx_d", "idx_h", "idx_w"), jvp=FROM_BACKWARD, rule=_upsample_nearest_rule,
                      reference=numpy_resample.upsample_nearest, kernel=_upsample_nearest_launch,
                      backward=_upsample_nearest_backward, saves=("idx_d", "idx_h", "idx_w"),
                      grad_name=lambda args, attrs: (f"UpsampleNearest{'Exact' if attrs['exact'] else ''}"
                                                     f"{_DIM_NAMES[len(attrs['output_size'])]}Backward0"),
                      layout="memory_format")


def upsample_linear(input, output_size, align_corners, scale_factors=None, mode="linear"):
    """aten.upsample_linear1d, upsample_bilinear2d, upsample_trilinear3d ("linear" in any number
    of dims) and upsample_bicubic2d (mode "cubic")."""
    out = _output_size(input, output_size, scale_factors)
    _check_upsample(input, out, mode)
    scales = scale_factors if output_size is None else [None] * len(out)
    t = _opmath(input.dtype)
    make = _cubic_taps if mode == "cubic" else _linear_taps
    taps = [make(int(s), o, bool(align_corners), f, t) for s, o, f in zip(input.shape[2:], out, scales)]
    name = {"cubic": "UpsampleBicubic2DBackward0"}.get(mode) or \
        {1: "UpsampleLinear1DBackward0", 2: "UpsampleBilinear2DBackward0", 3: "UpsampleTrilinear3DBackward0"}[len(out)]
    return _upsample_by_taps(input, taps, out, name)


def upsample_antialiased(input, output_size, align_corners, scale_factors=None, mode="bilinear"):
    """aten._upsample_bilinear2d_aa / _upsample_bicubic2d_aa: PIL-style resampling, the filter
    widened by the scale when shrinking."""
    out = _output_size(input, output_size, scale_factors)
    _check_upsample(input, out, "aa")
    scales = scale_factors if output_size is None else [None] * len(out)
    t = _opmath(input.dtype)
    taps = [_antialias_taps(int(s), o, bool(align_corners), f, mode, t) for s, o, f in
            zip(input.shape[2:], out, scales)]
    name = "UpsampleBilinear2DAaBackward0" if mode == "bilinear" else "UpsampleBicubic2DAaBackward0"
    return _upsample_by_taps(input, taps, out, name)


def _upsample_by_taps(input, taps, out, node):
    """Dispatch the upsample_taps entry with each dim's (taps, out) index and weight tables."""
    compute = _compute_dtype(input)
    tables = []
    for dim_taps in taps:
        tables.append(_creation.tensor(np.stack([index for index, _ in dim_taps]), device=input.device))
        tables.append(_creation.tensor(np.stack([weight for _, weight in dim_taps]), dtype=compute,
                                       device=input.device))
    while len(tables) < 6:       # (D, H, W): a missing dim has one tap, index 0, weight 1
        tables[:0] = [_creation.zeros(1, 1, dtype=_dt.int64, device=input.device),
                      _creation.ones(1, 1, dtype=compute, device=input.device)]
    return dispatch(UPSAMPLE_TAPS, input, *tables, output_size=tuple(out),
                    input_size=tuple(int(s) for s in input.shape[2:]), node=node,
                    memory_format=_layout.suggest_memory_format(input._shape, input._stride))


# Linear, cubic and antialiased upsampling are one table entry: a kernel sums each output's taps
# over every resampled dim in one pass (kernels/resample.py), from the (taps, out) index and weight
# tables above; the backward, per dim from the last, adds each tap's weighted gradient back onto the
# positions it read (index_add: deterministic; its own backward an index_select, so double
# backward works).
def _upsample_taps_rule(input, idx_d, w_d, idx_h, w_h, idx_w, w_w, *, output_size, input_size, node,
                        memory_format):
    return Meta((int(input.shape[0]), int(input.shape[1])) + tuple(output_size), input.dtype,
                _compute_dtype(input))


def _upsample_taps_launch(out, input, idx_d, w_d, idx_h, w_h, idx_w, w_w, *, compute, output_size, input_size,
                          node, memory_format):
    triton_resample.upsample_taps(out, input, idx_d, w_d, idx_h, w_h, idx_w, w_w, compute)


def _upsample_taps_backward(ctx, g):
    k = len(ctx.output_size)
    tables = ((ctx.idx_d, ctx.w_d), (ctx.idx_h, ctx.w_h), (ctx.idx_w, ctx.w_w))[3 - k:]
    dtype = g.dtype
    g = g.to(ctx.w_w.dtype)          # accumulate in the compute dtype (float32 for 16-bit inputs)
    for d in reversed(range(k)):
        index, weight = tables[d]
        shape = list(g.shape)
        shape[2 + d] = ctx.input_size[d]
        acc = _creation.zeros(*shape, dtype=g.dtype, device=g.device)
        for t in range(int(index.shape[0])):
            w = weight.select(0, t).reshape((-1,) + (1,) * (k - 1 - d))
            acc = _scatter.index_add(acc, 2 + d, index.select(0, t), g * w)
        g = acc
    return (g.to(dtype),) + (None,) * 6


UPSAMPLE_TAPS = op("upsample_taps", ("input", "idx_d", "w_d", "idx_h", "w_h", "idx_w", "w_w"), jvp=FROM_BACKWARD,
                   rule=_upsample_taps_rule, reference=numpy_resample.upsample_taps, kernel=_upsample_taps_launch,
                   backward=_upsample_taps_backward, saves=("idx_d", "w_d", "idx_h", "w_h", "idx_w", "w_w"),
                   grad_name=lambda args, attrs: attrs["node"], layout="memory_format")



# --------------------------------------------------------------------------- grid sampling
_GRID_MODES = ("bilinear", "nearest", "bicubic")
_GRID_PADDINGS = ("zeros", "border", "reflection")


def _unnormalize(coord, size, align_corners):
    """grid_sampler_unnormalize: [-1, 1] to pixel indices (corner pixels' centres, or their edges)."""
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _clip(coord, size):
    """clip_coordinates: into [0, size - 1], the gradient 0 at and past the bounds (torch's)."""
    return _ew.where(coord <= 0, 0.0, _ew.where(coord >= size - 1, float(size - 1), coord))


def _reflect(coord, twice_low, twice_high):
    """reflect_coordinates: fold coord into [low, high] by reflecting about the edges."""
    if twice_low == twice_high:
        return coord * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    a = (coord - low).abs()
    flips = (a / span).floor().detach()
    extra = a - flips * span
    even = (flips - (flips / 2).floor() * 2) == 0
    return _ew.where(even, extra + low, (extra * -1) + (span + low))


def _padded(coord, size, padding_mode, align_corners):
    """compute_coordinates."""
    if padding_mode == "border":
        return _clip(coord, size)
    if padding_mode == "reflection":
        coord = _reflect(coord, 0, 2 * (size - 1)) if align_corners else _reflect(coord, -1, 2 * size - 1)
        return _clip(coord, size)
    return coord


def _tap(flat, points, sizes, weight):
    """input values at integer-valued float points (one (N, *out) tensor per dim, W first), 0 where
    a point lies outside; times weight (None: 1). flat: (N, C, prod(sizes)), sizes W first."""
    n, c = int(flat.shape[0]), int(flat.shape[1])
    out_shape = tuple(int(s) for s in points[0].shape[1:])
    valid = None
    index = None
    stride = 1
    for p, size in zip(points, sizes):
        p = p.detach()
        inside = (p >= 0) & (p <= size - 1)
        valid = inside if valid is None else valid & inside
        safe = _ew.where(inside, p, 0.0).to(_dt.int64)
        index = safe * stride if index is None else index + safe * stride
        stride *= size
    length = int(np.prod(out_shape)) if out_shape else 1
    index = index.reshape(n, 1, length).expand(n, c, length)
    values = _indexing.gather(flat, 2, index).reshape(n, c, *out_shape)
    if weight is not None:
        values = values * weight.unsqueeze(1)
    return _ew.where(valid.unsqueeze(1), values, 0.0)


def _grid_sample(input, grid, mode, padding_mode, align_corners):
    compute = _dt.float32 if input.dtype in (_dt.float16, _dt.bfloat16) else input.dtype
    x, g = input.to(compute), grid.to(compute)
    k = input.dim() - 2
    sizes = [int(s) for s in reversed(input.shape[2:])]            # W, H[, D]
    n, c = int(input.shape[0]), int(input.shape[1])
    flat = x.reshape(n, c, -1)
    coords = [g.select(-1, d) for d in range(k)]                    # x, y[, z]
    if mode == "bicubic":
        out = _bicubic(flat, coords, sizes, padding_mode, align_corners)
    else:
        src = [_padded(_unnormalize(co, s, align_corners), s, padding_mode, align_corners)
               for co, s in zip(coords, sizes)]
        if mode == "nearest":
            rounded = [p.round() for p in src]
            # a weight of exactly 1 whose gradient is round's (zero): the grid gets torch's zero gradient
            out = _tap(flat, rounded, sizes, (rounded[0] - rounded[0].detach()) + 1)
        else:
            lows = [p.floor().detach() for p in src]
            fracs = [p - lo for p, lo in zip(src, lows)]
            out = None
            for corner in range(2 ** k):
                bits = [(corner >> d) & 1 for d in range(k)]
                weight = None
                for b, f in zip(bits, fracs):
                    term = f if b else (f * -1) + 1
                    weight = term if weight is None else weight * term
                term = _tap(flat, [lo + b for lo, b in zip(lows, bits)], sizes, weight)
                out = term if out is None else out + term
    return out.to(input.dtype) if out.dtype is not input.dtype else out


def _bicubic(flat, coords, sizes, padding_mode, align_corners):
    ix, iy = (_unnormalize(co, s, align_corners) for co, s in zip(coords, sizes))
    x0, y0 = ix.floor().detach(), iy.floor().detach()
    cx = _cubic_weights(ix - x0)
    cy = _cubic_weights(iy - y0)
    out = None
    for i in range(4):
        py = _padded(y0 + (i - 1), sizes[1], padding_mode, align_corners).detach()
        row = None
        for j in range(4):
            px = _padded(x0 + (j - 1), sizes[0], padding_mode, align_corners).detach()
            term = _tap(flat, [px.trunc(), py.trunc()], sizes, cx[j])
            row = term if row is None else row + term
        term = row * cy[i].unsqueeze(1)
        out = term if out is None else out + term
    return out


def _cubic_weights(t):
    """get_cubic_upsample_coefficients(t), A = -0.75, as tensors (differentiable in t)."""
    a = _A

    def near(v):
        return ((v * (a + 2)) - (a + 3)) * v * v + 1

    def far(v):
        return (((v * a) - 5 * a) * v + 8 * a) * v - 4 * a

    return [far(t + 1), near(t), near((t * -1) + 1), far((t * -1) + 2)]


def _grid_error(message):
    raise RuntimeError("grid_sampler(): " + message)


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """torch.grid_sampler (aten.grid_sampler_2d / _3d): input (N, C, [D,] H, W) sampled at grid
    (N, [Do,] Ho, Wo, 2 or 3) with modes 0 bilinear, 1 nearest, 2 bicubic and padding modes
    0 zeros, 1 border, 2 reflection."""
    _require_tensor("grid_sampler", input)
    _require_tensor("grid_sampler", grid, "grid", 2)
    if input.device != grid.device:
        _grid_error(f"expected input and grid to be on same device, but input is on {input.device} and grid is on "
                    f"{grid.device}")
    if int(input.shape[0]) != int(grid.shape[0]) if input.dim() and grid.dim() else False:
        _grid_error(f"expected grid and input to have same batch size, but got input with sizes "
                    f"{_padding._size_str(input.shape)} and grid with sizes {_padding._size_str(grid.shape)}")
    if int(grid.shape[-1]) != input.dim() - 2:
        _grid_error(f"expected grid to have size {input.dim() - 2} in last dimension, but got grid with sizes "
                    f"{_padding._size_str(grid.shape)}")
    if input.dim() not in (4, 5) or grid.dim() != input.dim():
        rank = f"{input.dim()}D" if input.dim() in (4, 5) else "4D or 5D"
        _grid_error(f"expected {rank} input and grid with same number of dimensions, but got input with sizes "
                    f"{_padding._size_str(input.shape)} and grid with sizes {_padding._size_str(grid.shape)}")
    for d in range(2, input.dim()):
        if int(input.shape[d]) == 0:
            _grid_error(f"expected input to have non-empty spatial dimensions, but input has sizes "
                        f"{_padding._size_str(input.shape)} with dimension {d} being empty")
    mode = _GRID_MODES[int(interpolation_mode)]
    if mode == "bicubic" and input.dim() != 4:
        _grid_error("bicubic interpolation only supports 4D input")
    if input.dtype is not grid.dtype:
        raise RuntimeError(f"expected scalar type {_dt.type_name(input.dtype)} but found {_dt.type_name(grid.dtype)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"grid_sampler_{input.dim() - 2}d_cpu" not implemented for '
                                  f"'{_dt.type_name(input.dtype)}'")
    entry = GRID_SAMPLER_2D if input.dim() == 4 else GRID_SAMPLER_3D
    return dispatch(entry, input, grid, mode=int(interpolation_mode), padding_mode=int(padding_mode),
                    align_corners=bool(align_corners))


# The samplers are table entries: the forward is one kernel (kernels/resample.py) or the NumPy
# reference (backends/numpy_resample.py); the backward differentiates the composite above (the same
# formulas in tritensor ops) at the saved input and grid, so gradients to input and grid, and their
# own gradients under create_graph=True, come from the ops; the forward's cost is one launch.
def _grid_sampler_rule(input, grid, mode, padding_mode, align_corners):
    n, c = int(input.shape[0]), int(input.shape[1])
    compute = _dt.float32 if input.dtype in (_dt.float16, _dt.bfloat16) else input.dtype
    return Meta((n, c) + tuple(int(s) for s in grid.shape[1:-1]), input.dtype, compute)


def _grid_sampler_2d_launch(out, input, grid, *, compute, mode, padding_mode, align_corners):
    triton_resample.grid_sample_2d(out, input, grid, mode, padding_mode, align_corners, compute)


def _grid_sampler_3d_launch(out, input, grid, *, compute, mode, padding_mode, align_corners):
    triton_resample.grid_sample_3d(out, input, grid, mode, padding_mode, align_corners, compute)


def _grid_sampler_backward(ctx, g):
    need_input, need_grid = ctx.needs_input_grad
    creating = _grad_mode.is_grad_enabled()      # create_graph=True: differentiable gradients
    with _grad_mode.enable_grad():
        x = ctx.input if creating else ctx.input.detach().requires_grad_(need_input)
        grid = ctx.grid if creating else ctx.grid.detach().requires_grad_(need_grid)
        out = _grid_sample(x, grid, _GRID_MODES[ctx.mode], _GRID_PADDINGS[ctx.padding_mode], ctx.align_corners)
        wanted = [t for t, need in ((x, need_input), (grid, need_grid)) if need]
        got = list(_autograd.grad(out, wanted, g, create_graph=creating, allow_unused=True))
    return tuple(got.pop(0) if need else None for need in (need_input, need_grid))


GRID_SAMPLER_2D = op("grid_sampler_2d", ("input", "grid"), rule=_grid_sampler_rule,
                     reference=numpy_resample.grid_sampler_2d, kernel=_grid_sampler_2d_launch,
                     backward=_grid_sampler_backward, saves=("input", "grid"),
                     grad_name="GridSampler2DBackward0")
GRID_SAMPLER_3D = op("grid_sampler_3d", ("input", "grid"), rule=_grid_sampler_rule,
                     reference=numpy_resample.grid_sampler_3d, kernel=_grid_sampler_3d_launch,
                     backward=_grid_sampler_backward, saves=("input", "grid"),
                     grad_name="GridSampler3DBackward0")


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """aten.grid_sampler_2d: grid_sampler of a 4D input."""
    if input.dim() != 4:
        _grid_error("expected 4D input and grid with same number of dimensions, but got input with sizes "
                    f"{_padding._size_str(input.shape)} and grid with sizes {_padding._size_str(grid.shape)}")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """aten.grid_sampler_3d: grid_sampler of a 5D input."""
    if input.dim() != 5:
        _grid_error("expected 5D input and grid with same number of dimensions, but got input with sizes "
                    f"{_padding._size_str(input.shape)} and grid with sizes {_padding._size_str(grid.shape)}")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def _base_axis(steps, align_corners, theta):
    if steps <= 1:
        return _creation.zeros(max(steps, 1), dtype=theta.dtype, device=theta.device)
    r = _creation.linspace(-1, 1, steps, dtype=theta.dtype, device=theta.device)
    return r if align_corners else r * ((steps - 1) / steps)


def _affine_grid(theta, size, align_corners):
    n = int(size[0])
    spatial = [int(s) for s in size[2:]]                     # [D,] H, W
    axes = [_base_axis(s, align_corners, theta) for s in reversed(spatial)]   # W, H[, D]
    k = len(spatial)
    total = int(np.prod(spatial))
    columns = []
    for d in range(k):       # column d is coordinate d (x, y, z) of every base point, row-major
        shape = [1] * k
        shape[k - 1 - d] = spatial[k - 1 - d]
        columns.append(axes[d].reshape(*shape).expand(*spatial).reshape(total, 1))
    columns.append(_creation.ones(total, 1, dtype=theta.dtype, device=theta.device))
    base = _joining.cat(columns, 1)
    grid = base.unsqueeze(0).expand(n, total, k + 1).matmul(theta.transpose(1, 2))
    return grid.reshape(n, *spatial, k)


def affine_grid_generator(theta, size, align_corners):
    """torch.affine_grid_generator: the sampling grid of the affine maps theta (N, 2, 3) or
    (N, 3, 4) over an output of ``size`` (N, C, H, W) or (N, C, D, H, W)."""
    _require_tensor("affine_grid_generator", theta, "theta")
    size = [int(s) for s in size]
    return named_composite("AffineGridGeneratorBackward0", _affine_grid, theta, size, bool(align_corners))


declare("grid_sampler", grid_sampler, method=False)
declare("grid_sampler_2d", grid_sampler_2d, method=False)
declare("grid_sampler_3d", grid_sampler_3d, method=False)
declare("affine_grid_generator", affine_grid_generator, method=False)
