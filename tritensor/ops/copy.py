"""Copies: clone, contiguous, dtype casts, device transfers, copy_/fill_/zero_."""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dtypes as _dt
from ..autograd.grad_mode import is_grad_enabled
from ..memory_formats import contiguous_format, format_name, memory_format as _memory_format
from ..backends import numpy_ref
from ..backends import triton as tb
from ..backends.base import backend_for
from ..runtime.device import as_device
from ..runtime.pinned import empty_pinned, is_pinned_storage
from ..runtime.transfer import copy_bytes
from ..tensor import Tensor
from . import _layout
from ._overlap import assert_no_internal_overlap, assert_no_partial_overlap
from ._shapes import broadcast_shapes
from .dispatch import check_inplace, common_device, dispatch, record, _rebase_inplace
from .. import _dual
from ..autograd import forward_ad as _forward_ad
from .table import LINEAR, Meta, op, signature_rule


def _copy_launch(out, x, *, compute, **_):
    tb.copy(out, x)


@signature_rule
def _same_layout_rule(x, dtype=None, memory_format=None):
    # the output's strides follow memory_format (default preserve_format): dispatch.output_strides
    return Meta(tuple(x.shape), dtype or x.dtype)


CLONE = op("clone", ("x",), rule=_same_layout_rule, layout="preserve", reference=numpy_ref.identity, kernel=_copy_launch,
           backward=lambda ctx, g: g, jvp=LINEAR)
# A dtype cast; the engine casts the gradient back to the input's dtype.
TO_COPY = op("to_copy", ("x",), rule=_same_layout_rule, layout="preserve", reference=numpy_ref.identity, kernel=_copy_launch,
             backward=lambda ctx, g: g, jvp=LINEAR)


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
    from .creation import zeros_like   # late import: creation.py builds on copy.py (fill_into, to)
    need_x, need_src = ctx.needs_input_grad
    grad_src = None
    if need_src:
        grad_src = g.sum() if ctx.node == "fill" else g     # the engine sums g to src's shape
    return (zeros_like(g) if need_x else None), grad_src


def _overwrite_jvp(ctx, tx, tsrc):
    return None if tsrc is None else tsrc.expand(ctx.out.shape)     # (None: a zero tangent)


OVERWRITE = op("overwrite", ("x", "src"), rule=_overwrite_rule,
               reference=numpy_ref.overwrite,
               kernel=_overwrite_launch, backward=_overwrite_backward, jvp=_overwrite_jvp,
               grad_name=lambda args, attrs: {"copy": "CopyBackwards", "zero": "ZeroBackward0",
                                              "fill_tensor": "FillBackward3"}.get(
                   attrs["node"], "FillBackward3" if isinstance(args[1], Tensor) else "FillBackward2"))


def _device_copy_backward(ctx, g):
    return to_device(g, ctx.source)


DEVICE_COPY = op("device_copy", ("x",), backward=_device_copy_backward, grad_name="ToCopyBackward0",
                 jvp=lambda ctx, t: to_device(t, ctx.out.device))


def clone(x, *, memory_format=None):
    """torch.clone: a copy in ``memory_format``; the default, preserve_format, keeps a dense
    input's strides exactly and gives any other input a dense layout with its dims in the same
    order (torch's empty_like); contiguous_format/channels_last/channels_last_3d as named."""
    name = format_name(memory_format, "clone")
    if name == _layout.PRESERVE:
        return dispatch(CLONE, x)
    _layout.check_rank(name, x.dim())
    return dispatch(CLONE, x, memory_format=name)


def contiguous(x, memory_format=contiguous_format):
    """Tensor.contiguous(memory_format=contiguous_format): ``x`` itself when it already is
    contiguous in that format, else a copy in it (clone)."""
    if memory_format is contiguous_format:
        return x if x.is_contiguous() else dispatch(CLONE, x, memory_format=_layout.CONTIGUOUS)
    name = format_name(memory_format, "contiguous", None)
    if _layout.is_contiguous_as(name, x._shape, x._stride):
        return x
    if name == _layout.PRESERVE:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return clone(x, memory_format=memory_format)


def to_dtype(x, dtype):
    return dispatch(TO_COPY, x, dtype=dtype)


def to_device(x, device, non_blocking=False):
    """Copy across devices, in bytes (the values never change), on the streams torch uses
    (runtime/transfer.py). ``non_blocking``: a copy from pinned memory runs asynchronously on
    the current stream; a device -> cpu copy lands in pinned memory and runs asynchronously
    (torch's _to_copy pins its output then); otherwise the host waits for the copy."""
    device = as_device(device)
    if device == x.device:
        return x
    src = _dense(x.detach())
    # where the copy lands: a device -> cpu copy with non_blocking lands in pinned memory
    flat = backend_for(device).copy_target((src.numel(),), src.dtype, device, non_blocking)
    copy_bytes(flat._storage, 0, src._storage, src._offset * src.dtype.itemsize,
               src.numel() * src.dtype.itemsize, non_blocking)
    out = Tensor._make(flat._storage, src._shape, src._stride, 0, src.dtype)
    record(DEVICE_COPY, out, (x,), {"source": x.device})
    if _dual.ACTIVE[0]:
        _forward_ad.apply_rule(DEVICE_COPY, out, (x,), {"source": x.device})
    return out


def _dense(x):
    """``x`` when its elements fill one block of memory (dense, non-overlapping: a byte copy of
    the block keeps its strides, as torch's _to_copy with preserve_format does), else its clone,
    dense with its dims in the same order."""
    if _layout.is_non_overlapping_and_dense(x._shape, x._stride):
        return x
    return dispatch(CLONE, x)


def pin_memory(x, device=None):
    """Tensor.pin_memory(): ``x`` itself if its storage is pinned, else a contiguous copy in
    pinned host memory (differentiable, as torch's)."""
    if not backend_for(x.device).host_memory:
        raise RuntimeError(f"cannot pin '{x._type_description().split(' [')[0]}' only dense CPU tensors can be pinned")
    if device is not None:
        warnings.warn("The argument 'device' of Tensor.pin_memory() is deprecated. Please do not pass this "
                      "argument.", DeprecationWarning, stacklevel=2)
    if is_pinned_storage(x._storage):
        return x
    src = _dense(x.detach())       # the layout is kept, as torch's
    flat = empty_pinned((src.numel(),), src.dtype)
    copy_bytes(flat._storage, 0, src._storage, src._offset * src.dtype.itemsize, src.numel() * src.dtype.itemsize)
    out = Tensor._make(flat._storage, src._shape, src._stride, 0, src.dtype)
    record(DEVICE_COPY, out, (x,), {"source": x.device})
    if _dual.ACTIVE[0]:
        _forward_ad.apply_rule(DEVICE_COPY, out, (x,), {"source": x.device})
    return out


def is_pinned(x, device=None) -> bool:
    """True for a cpu tensor whose storage is pinned host memory (always False on cuda)."""
    return backend_for(x.device).host_memory and is_pinned_storage(x._storage)


def to(x, *args, **kwargs):
    """Tensor.to(device), .to(dtype), .to(device, dtype), .to(other), with device=/dtype=/copy=."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    non_blocking = kwargs.pop("non_blocking", False)
    memory_format = kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    # torch's positional forms end in (non_blocking, copy): to(device, dtype, True), to(other, True)
    flags = [a for a in args if isinstance(a, bool)]
    args = [a for a in args if not isinstance(a, bool)]
    if flags:
        non_blocking = flags[0]
        copy = flags[1] if len(flags) > 1 else copy
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, _dt.dtype):
            dtype = a
        elif a is not None:
            device = a
    out = x
    dtype = None if dtype is None else _dt.as_dtype(dtype)
    device = None if device is None else as_device(device)
    if x._is_sparse_coo or x._is_sparse_csr:   # a sparse tensor moves its indices and values
                                                # (tritensor/_sparse_tensor.py)
        return x._moved(device, dtype, non_blocking, copy)
    if dtype is not None and dtype is not out.dtype and device is not None \
            and backend_for(device).host_memory and not backend_for(x.device).host_memory:
        out = to_dtype(out, dtype)     # cast on the GPU, before a (possibly asynchronous) copy to host
    if device is not None:
        out = to_device(out, device, non_blocking)
    if dtype is not None and dtype is not out.dtype:
        out = to_dtype(out, dtype)
    if copy and out is x:
        out = clone(x, memory_format=memory_format)
    elif memory_format is not None:
        out = _in_format(x, out, memory_format)
    return out


def _in_format(x, out, memory_format):
    """Tensor.to(memory_format=...): ``x`` itself (nothing else asked) stays when its strides
    already suggest that format (torch's to_will_alias and suggest_memory_format); a copy is
    restrided only when it is not contiguous in that format."""
    if type(memory_format) is not _memory_format:
        raise TypeError("to() received an invalid combination of arguments - got "
                        f"(memory_format={type(memory_format).__name__}, )")
    name = format_name(memory_format, "to")
    if name == _layout.PRESERVE:
        return out
    if out is x:
        return x if _layout.suggest_memory_format(x._shape, x._stride) == name else clone(x, memory_format=memory_format)
    return out if _layout.is_contiguous_as(name, out._shape, out._stride) else clone(out, memory_format=memory_format)


# --------------------------------------------------------------------------- raw writes
def copy_into(dst: Tensor, src, non_blocking=False):
    """dst[...] = src (broadcast, cast), with no autograd and no version bump."""
    if isinstance(src, Tensor):
        if src.device != dst.device:
            if _same_bytes(dst, src):
                # one transfer straight into dst (asynchronous when non_blocking with pinned memory)
                copy_bytes(dst._storage, dst._offset * dst.dtype.itemsize, src._storage,
                           src._offset * src.dtype.itemsize, src.numel() * src.dtype.itemsize, non_blocking)
                return
            # non_blocking only into device memory: a host destination is read right after
            backend = backend_for(dst.device)
            src = to_device(src.detach(), dst.device, non_blocking and not backend.host_memory)
        if dst.numel() == 0:
            return
        backend_for(dst.device).copy(dst, src)
    else:
        fill_into(dst, src)


def _same_bytes(dst, src):
    """dst and src hold the same values as the same bytes: one byte copy does dst[...] = src."""
    return (dst.dtype is src.dtype and tuple(dst.shape) == tuple(src.shape) and dst.is_contiguous()
            and src.is_contiguous())


def fill_into(dst: Tensor, value):
    if dst.numel() == 0:
        return
    backend_for(dst.device).fill(dst, value)


# --------------------------------------------------------------------------- scalar conversion
# torch's checked_convert (c10/util/TypeCast.h): a Python number written into a tensor (fill_,
# x[i] = v, masked_fill, full, where/clamp with a scalar) must fit the tensor's dtype.
_C_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
            "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
            "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float"}
_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38}


def check_scalar_fits(value, dtype):
    """Raise torch's overflow error if Python number ``value`` does not fit ``dtype``; anything
    else (a tensor, None) passes, so callers need not sort their operands first."""
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
        elif info.min == 0 and isinstance(value, int):   # unsigned: negative ints wrap as long as
            # -value fits (torch's rule for integers; a float must lie in the range itself)
            bad = value > info.max or -value > info.max
        else:
            bad = value < info.min or value > info.max
    if bad:
        raise RuntimeError(f"value cannot be converted to type {_C_NAMES[name]} without overflow")


# --------------------------------------------------------------------------- in-place API
def copy_(dst: Tensor, src, non_blocking=False):
    if _dual.ACTIVE[0] and not _dual.state.suspended:    # forward AD: dst's tangent becomes src's
        return _forward_ad.copy_tangent(dst, src, lambda: copy_(dst, src, non_blocking))
    check_inplace(dst)
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
    copy_into(dst, src, non_blocking)
    dst._version_counter.value += 1
    return dst


def fill_(dst: Tensor, value, *, _node="fill"):
    if _dual.ACTIVE[0] and not _dual.state.suspended:    # forward AD: a constant's tangent is zero
        return _forward_ad.copy_tangent(dst, value, lambda: fill_(dst, value, _node=_node))
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
        _node = "fill_tensor"        # torch's fill_.Tensor overload: FillBackward3 still
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


__all__ = ["clone", "contiguous", "to", "to_device", "to_dtype", "copy_into", "fill_into", "copy_", "pin_memory", "is_pinned",
           "fill_", "zero_", "common_device"]
