"""copy and fill (kernels/copy.py): a strided, casting copy of any tensor into any other, and a
fill with torch's fill_ conversion of the value."""
from __future__ import annotations

import math
import numbers

from ...runtime.launch import pointer
from .. import triton as _backend   # the package: every launch goes through _backend._run
from ._plan import (FLOAT_SCALAR, INT_SCALAR, _cdiv, _float_bits, _is_tensor, _kernels, _prod,
                    broadcast_strides, coalesce, needs_int64, pieces, settings, tile_plan)
from ._tiled import launch_tiled


def copy(out, src):
    """out[...] = src (broadcast to out.shape, cast to out's dtype); both may have any strides.
    float -> int truncates toward zero, anything -> bool is != 0, bool -> number is 0/1."""
    if not _is_tensor(src):
        return fill(out, src)
    if out.numel() == 0:
        return
    k = _kernels()
    out_shape = tuple(out.shape)
    shape, strides = coalesce(out_shape, [tuple(out.stride()), broadcast_strides(src, out_shape)])
    cfg = settings()
    shape, strides, tiled = tile_plan(shape, strides)
    if tiled:     # a transpose: identity in the source's own compute dtype, then the store's cast
        launch_tiled(k.elementwise.UNARY["identity"], out, [src], [(0, 0)], shape, strides, src.dtype.name, cfg)
        return
    block = cfg["copy_block"]
    for p_shape, p_strides, p_offsets, _ in pieces(shape, strides):
        n = _prod(p_shape)
        _backend._run(k.copy.copy_kernel, (_cdiv(n, block),), pointer(out, p_offsets[0]), pointer(src, p_offsets[1]),
                      n, p_shape, p_strides[0], p_strides[1], RANK=len(p_shape), BLOCK=block,
                      WIDE=needs_int64(n, block, p_shape, p_strides), num_warps=cfg["copy_warps"])


def _fill_arg(dtype, value):
    """(kind, kernel argument) storing ``value`` into a tensor of ``dtype`` as torch's fill_ does."""
    if dtype.name == "bool":
        return INT_SCALAR, int(bool(value))
    if dtype.is_floating_point:
        return FLOAT_SCALAR, _float_bits(value)
    if isinstance(value, numbers.Integral):
        v = int(value)
    else:
        v = float(value)
        v = int(v) if math.isfinite(v) else 0     # truncate toward zero; nan/inf have no integer
    bits = dtype.itemsize * 8
    v &= (1 << bits) - 1                            # wrap into the dtype's range like a C cast
    if dtype.name != "uint8" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return INT_SCALAR, v


def fill(out, value):
    """out[...] = value (a Python bool/int/float); ``out`` may have any strides."""
    if out.numel() == 0:
        return
    k = _kernels()
    kind, arg = _fill_arg(out.dtype, value)
    shape, strides = coalesce(tuple(out.shape), [tuple(out.stride())])
    cfg = settings()
    block = cfg["copy_block"]
    for p_shape, p_strides, p_offsets, _ in pieces(shape, strides):
        n = _prod(p_shape)
        _backend._run(k.copy.fill_kernel, (_cdiv(n, block),), pointer(out, p_offsets[0]), arg, n, p_shape,
                      p_strides[0], KIND=kind, RANK=len(p_shape), BLOCK=block,
                      WIDE=needs_int64(n, block, p_shape, p_strides), num_warps=cfg["copy_warps"])

