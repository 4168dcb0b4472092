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


# --------------------------------------------------------------------------- in-place API
def copy_(dst: Tensor, src, non_blocking=False):
    check_inplace(dst)
    if isinstance(src, Tensor):
        shape = broadcast_shapes(dst.shape, src.shape)
        if shape != tuple(dst.shape):
            raise RuntimeError(
                f"output with shape {list(dst.shape)} doesn't match the broadcast shape {list(shape)}")
    if isinstance(src, Tensor) and is_grad_enabled() and (src.requires_grad or dst.requires_grad):
        common = src if src.device == dst.device else to_device(src, dst.device)
        # the result is src (broadcast, cast to dst's dtype); dst's old value gets no gradient
        from .elementwise import where

        def overwrite(old):
            # where(True, src, old): src's gradient flows to src, zeros to dst's old value
            out = where(True, common, old)
            return out if out.dtype is dst.dtype else to_dtype(out, dst.dtype)
        _rebase_inplace(dst, overwrite, needs_old_self=False)
        return dst
    copy_into(dst, src)
    dst._version.value += 1
    return dst


def fill_(dst: Tensor, value):
    check_inplace(dst)
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} dimensions.")
        value = value.item()
    if is_grad_enabled() and dst.requires_grad:
        # the old value is overwritten: no gradient flows to it
        from .elementwise import where
        _rebase_inplace(dst, lambda old: where(True, value, old), needs_old_self=False)
        return dst
    fill_into(dst, value)
    dst._version.value += 1
    return dst


def zero_(dst: Tensor):
    return fill_(dst, 0)


__all__ = ["clone", "contiguous", "to", "to_device", "to_dtype", "copy_into", "fill_into", "copy_",
           "fill_", "zero_", "common_device"]
