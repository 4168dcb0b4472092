"""Resampling and rearranging: pixel_shuffle / pixel_unshuffle, channel_shuffle, im2col (F.unfold)
and col2im (F.fold), and the upsampling ops behind F.interpolate, all composites of existing ops.

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
upsample_*         separable: per resampled dim, each output position is a weighted sum of one
                   (nearest), two (linear) or four (cubic) input positions along that dim, each an
                   index_select along the dim times a per-position weight. Indices and weights are
                   torch's (UpSample.h: area_pixel_compute_scale, area_pixel_compute_source_index,
                   guard_index_and_lambda, nearest_idx, the cubic convolution with A = -0.75 and
                   clamped taps), computed on the host in torch's opmath precision (float32 for
                   every dtype but float64; nearest's scale is a float32 as torch's). Only the taps
                   a position reads enter its sum, so non-finite inputs spread as in torch. 16-bit
                   inputs are computed in float32 and rounded once. Backward: index_select's
                   scatter-add and the products' rules, in tritensor ops (double backward works).
                   One node named as torch's (UpsampleBilinear2DBackward0 ...).
"""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _dt
from .. import memory_formats as _memory_formats
from ..autograd.composite import named_composite
from ..tensor import Tensor
from . import _layout
from . import creation as _creation
from . import indexing as _indexing
from . import padding as _padding
from . import scatter as _scatter
from . import views as _views
from .surface import declare


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
