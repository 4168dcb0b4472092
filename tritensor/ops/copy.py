"""Copies: clone, contiguous, dtype casts, device transfers, copy_/fill_/zero_."""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..autograd.grad_mode import is_grad_enabled
from ..backends import numpy_ref
from ..backends import triton as tb
from ..runtime.device import as_device
from ..tensor import Tensor
from .dispatch import check_inplace, common_device, dispatch, empty, record, _rebase_inplace
from .elementwise import broadcast_shapes
from .table import Meta, op


def _copy_launch(out, x, *, compute, **_):
    tb.copy(out, x)


def _same_layout_rule(x, dtype=None):
    return Meta(tuple(x.shape), dtype or x.dtype)


CLONE = op("clone", ("x",), rule=_same_layout_rule, reference=numpy_ref.identity, kernel=_copy_launch,
           backward=lambda ctx, g: g)
# A dtype cast; the engine casts the gradient back to the input's dtype.
TO_COPY = op("to_copy", ("x",), rule=_same_layout_rule, reference=numpy_ref.identity, kernel=_copy_launch,
             backward=lambda ctx, g: g)


# The recorded forms of copy_/fill_/zero_ (torch's CopyBackwards, FillBackward2/3, ZeroBackward0):
# out = src (or the fill value) broadcast and cast to self's dtype; self's old value gets zeros.
def _overwrite_rule(x, src, **_):
    compute = _dt.compute_dtype(src.dtype if isinstance(src, Tensor) else x.dtype)
    return Meta(tuple(x.shape), x.dtype, compute)


def _overwrite_launch(out, x, src, *, compute, **_):
    if isinstance(src, Tensor):
        tb.copy(out, src)
    else:
        tb.fill(out, src)


def _overwrite_backward(ctx, g):
    from .creation import zeros_like
    from .reduce import sum as _sum
    need_x, need_src = ctx.needs_input_grad
    grad_src = None
    if need_src:
        grad_src = _sum(g) if ctx.node == "fill" else g     # the engine sums g to src's shape
    return (zeros_like(g) if need_x else None), grad_src


OVERWRITE = op("overwrite", ("x", "src"), rule=_overwrite_rule,
               reference=lambda x, src, **_: np.broadcast_to(src, x.shape),
               kernel=_overwrite_launch, backward=_overwrite_backward,
               grad_name=lambda args, attrs: {"copy": "CopyBackwards", "zero": "ZeroBackward0"}.get(
                   attrs["node"], "FillBackward3" if isinstance(args[1], Tensor) else "FillBackward2"))


def _device_copy_backward(ctx, g):
    return to_device(g, ctx.source)


DEVICE_COPY = op("device_copy", ("x",), backward=_device_copy_backward, grad_name="ToCopyBackward0")


def clone(x, *, memory_format=None):
    return dispatch(CLONE, x)


def contiguous(x):
    return x if x.is_contiguous() else clone(x)


def to_dtype(x, dtype):
    return dispatch(TO_COPY, x, dtype=dtype)


def to_device(x, device):
    """Copy across devices: through host memory, in bytes; the values never change."""
    device = as_device(device)
    if device == x.device:
        return x
    src = contiguous(x.detach())
    out = empty(src.shape, src.dtype, device)
    nbytes = src.numel() * src.dtype.itemsize
    raw = src._storage.copy_to_host(src._offset * src.dtype.itemsize, nbytes)
    out._storage.copy_from_host(0, raw)
    record(DEVICE_COPY, out, (x,), {"source": x.device})
    return out


def to(x, *args, **kwargs):
    """Tensor.to(device), .to(dtype), .to(device, dtype), .to(other), with device=/dtype=/copy=."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, _dt.dtype):
            dtype = a
        elif a is not None:
            device = a
    out = x
    if device is not None:
        out = to_device(out, device)
    if dtype is not None and _dt.as_dtype(dtype) is not out.dtype:
        out = to_dtype(out, _dt.as_dtype(dtype))
    if copy and out is x:
        out = clone(x)
    return out


# --------------------------------------------------------------------------- raw writes
def copy_into(dst: Tensor, src):
    """dst[...] = src (broadcast, cast), with no autograd and no version bump."""
    if isinstance(src, Tensor):
        if src.device != dst.device:
            src = to_device(src.detach(), dst.device)
        if dst.numel() == 0:
            return
        if dst.device.type == "cpu":
            np.copyto(dst._host_view(), numpy_ref._cast(src._host_view(), dst.dtype), casting="unsafe")
        else:
            tb.copy(dst, src)
    else:
        fill_into(dst, src)


def fill_into(dst: Tensor, value):
    if dst.numel() == 0:
        return
    if dst.device.type == "cpu":
        dst._host_view()[...] = numpy_ref._cast(np.asarray(value), dst.dtype)
    else:
        tb.fill(dst, value)


# --------------------------------------------------------------------------- scalar conversion
# torch's checked_convert (c10/util/TypeCast.h): a Python number written into a tensor (fill_,
# x[i] = v, masked_fill, full, where/clamp with a scalar) must fit the tensor's dtype.
_C_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
            "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float"}
_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38}


def check_scalar_fits(value, dtype):
    """Raise torch's overflow error if Python number ``value`` does not fit ``dtype``; anything
    else (a tensor, None) passes, so callers need not sort their operands first."""
    import math
    if isinstance(value, bool) or dtype is _dt.bool_ or dtype is _dt.float64 or \
            not isinstance(value, (int, float)):
        return
    name = dtype.name
    if dtype.is_floating_point:
        bad = math.isfinite(value) and abs(value) > _FLOAT_MAX[name]
    else:
        info = np.iinfo(dtype.numpy_dtype)
        if isinstance(value, float) and not math.isfinite(value):
            bad = True
        elif info.min == 0:      # unsigned: negatives wrap as long as -value fits (torch's rule)
            bad = value > info.max or -value > info.max
        else:
            bad = value < info.min or value > info.max
    if bad:
        raise RuntimeError(f"value cannot be converted to type {_C_NAMES[name]} without overflow")


# --------------------------------------------------------------------------- in-place API
def copy_(dst: Tensor, src, non_blocking=False):
    check_inplace(dst)
    from .views import assert_no_internal_overlap, assert_no_partial_overlap
    if isinstance(src, Tensor):
        same_data = src is dst or (
            src._storage is dst._storage and src.storage_offset() == dst.storage_offset()
            and tuple(src.stride()) == tuple(dst.stride()) and tuple(src.shape) == tuple(dst.shape)
            and src.dtype is dst.dtype)
        if not same_data:        # torch copies nothing (checks nothing) when src is dst's very data
            assert_no_internal_overlap(dst)
            assert_no_partial_overlap(dst, src)
        shape = broadcast_shapes(dst.shape, src.shape)
        if shape != tuple(dst.shape):
            raise RuntimeError(
                f"output with shape {list(dst.shape)} doesn't match the broadcast shape {list(shape)}")
    if isinstance(src, Tensor) and is_grad_enabled() and (src.requires_grad or dst.requires_grad):
        common = src if src.device == dst.device else to_device(src, dst.device)
        # the result is src (broadcast, cast to dst's dtype); dst's old value gets zeros
        _rebase_inplace(dst, lambda old: dispatch(OVERWRITE, old, common, node="copy"), needs_old_self=False)
        return dst
    copy_into(dst, src)
    dst._version_counter.value += 1
    return dst


def fill_(dst: Tensor, value, *, _node="fill"):
    check_inplace(dst)
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} dimensions.")
        if is_grad_enabled() and value.requires_grad:
            # torch's FillBackward3: the value gets the sum of the gradient, the old value zeros
            v = value if value.device == dst.device else to_device(value, dst.device)
            _rebase_inplace(dst, lambda old: dispatch(OVERWRITE, old, v, node="fill"), needs_old_self=False)
            return dst
        value = value.item()
    else:
        check_scalar_fits(value, dst.dtype)
    if is_grad_enabled() and dst.requires_grad:
        # the old value is overwritten: zeros flow to it
        _rebase_inplace(dst, lambda old: dispatch(OVERWRITE, old, value, node=_node), needs_old_self=False)
        return dst
    fill_into(dst, value)
    dst._version_counter.value += 1
    return dst


def zero_(dst: Tensor):
    return fill_(dst, 0, _node="zero")


__all__ = ["clone", "contiguous", "to", "to_device", "to_dtype", "copy_into", "fill_into", "copy_",
           "fill_", "zero_", "common_device"]
