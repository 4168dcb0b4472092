"""Advanced indexing: integer-tensor and boolean-mask keys for __getitem__ / __setitem__,
index_put_, index_select, gather, scatter, scatter_add, masked_select, nonzero, take.

An indexing expression is resolved once into an ``IndexKey``: its basic part (ints, slices,
None; a full slice where an index tensor goes) gives a view of the indexed tensor, and index
tensors index some dims of that view (boolean masks become index tensors through nonzero). One
gather kernel reads the source in place at the gathered positions; one scatter kernel writes
them, grouped by target on the host so that repeated indices are deterministic ("last write
wins", or summed in index order with accumulate=True; no atomics).

Backward rules are written with these ops, so every gradient is differentiable again:
  index (getitem)  -> index_put(zeros, key, grad, accumulate=True)
  index_put        -> grad with the indexed positions zeroed (kept when accumulating); values: grad[key]
  gather           -> scatter_add into zeros;   scatter / scatter_add -> gather of the gradient
  masked_select    -> index_put of the gradient into zeros at the mask's positions

Bounds (``check_range``): the cpu raises torch's error at the call. On cuda the check is torch's
device-side assert: a kernel records a bad index on the device, the op goes on with a copy of
the index clamped into range, and the error ("CUDA error: device-side assert triggered" and the
cpu's message) surfaces at the next sync (runtime/device_errors.py); the scatter launchers read
the index on the host, so theirs surfaces within the call. CUDA_LAUNCH_BLOCKING=1: at the call.
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from .. import dtypes as _dt
from ..autograd.graph import SavedTensor, rename_node
from .. import _dual
from ..autograd import forward_ad as _forward_ad
from ..backends import numpy_ref
from ..backends.base import backend_for
from ..backends.triton import index as ti
from ..runtime import device_errors as _device_errors
from ..tensor import Tensor
from . import _unsigned
from . import copy as _copy
from . import elementwise as ew
from . import pointwise as pw
from . import views as _views
from ._checks import check_tensor
from ._shapes import broadcast_shapes, wrap_dim as _wrap
from .creation import arange, full, ones_like, tensor, zeros, zeros_like
from .dispatch import common_device, dispatch, dispatch_inplace, record
from .table import FROM_BACKWARD, LINEAR, Meta, op, signature_rule
from .reduce import sum_to_size
from .views import _basic_index_layout


def _shape_str(shape):
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def _host(t):
    """The values of tensor ``t`` as a NumPy array (a device-to-host copy on a real GPU)."""
    return np.asarray(t.detach()._to_host_array())


# --------------------------------------------------------------------------- the key
class IndexKey:
    """A resolved indexing expression for tensors of one shape.

    ``basic``: ints, slices and None (no Ellipsis), with slice(None) where an index tensor goes:
    it gives the view the index tensors apply to. ``dims``: the view dims indexed, in key order;
    ``indices``: int32/int64 tensors on the indexed tensor's device, in range (checked), of
    broadcast shape ``bshape``. As in torch, the broadcast dims replace the indexed dims in place
    when those are adjacent and go first otherwise."""
    __slots__ = ("basic", "dims", "indices", "bshape", "_saved")

    def __init__(self, basic, dims, indices, bshape):
        self.basic = tuple(basic)
        self.dims = tuple(dims)
        self.indices = tuple(indices)
        self.bshape = tuple(bshape)
        self._saved = tuple(SavedTensor(t) for t in self.indices)

    def check_unchanged(self):
        """A backward reads the index tensors again: torch's error if one was modified in place
        since the forward (they are saved tensors there)."""
        for saved in self._saved:
            saved.unpack(None)

    def out_axes(self, view_ndim):
        """(view dims before the broadcast dims, view dims after them) in the result."""
        dims = self.dims
        rest = [d for d in range(view_ndim) if d not in dims]
        if dims[-1] - dims[0] == len(dims) - 1:
            return [d for d in rest if d < dims[0]], [d for d in rest if d > dims[-1]]
        return [], rest

    def view_layout(self, t):
        return _basic_index_layout(t, self.basic)

    def result_shape(self, view_shape):
        before, after = self.out_axes(len(view_shape))
        return tuple(view_shape[d] for d in before) + self.bshape + tuple(view_shape[d] for d in after)

    def numpy_key(self, view_ndim):
        """The same index on the view, for NumPy (whose rules agree with torch's there)."""
        key = [slice(None)] * view_ndim
        for d, t in zip(self.dims, self.indices):
            key[d] = _host(t).astype(np.int64)
        return tuple(key)

    def __repr__(self):
        return f"IndexKey(basic={self.basic}, dims={self.dims}, bshape={self.bshape})"


_INDEX_DTYPES = ("int32", "int64")
_MASK_DTYPES = ("bool", "uint8")


def _key_items(key):
    """torch's treatSequenceAsTuple: a tuple, or a short list holding slices, None, Ellipsis,
    tensors or sequences, is a tuple of items; anything else is one item."""
    if isinstance(key, tuple):
        return key
    if isinstance(key, list) and len(key) < 32 and any(
            i is None or i is Ellipsis or isinstance(i, (slice, Tensor, list, tuple, range, np.ndarray)) for i in key):
        return tuple(key)
    return (key,)


def _item(item, keep_scalar_tensors):
    if item is None or item is Ellipsis or isinstance(item, slice):
        return item
    if isinstance(item, (bool, np.bool_)):
        return tensor(bool(item))                       # a 0-d mask
    if isinstance(item, Tensor):
        if item.dtype.name not in _INDEX_DTYPES + _MASK_DTYPES:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        if item.dim() == 0 and item.dtype.name in _INDEX_DTYPES and not keep_scalar_tensors:
            return int(item.item())                     # torch indexes with it like an int: a view
        return item
    if isinstance(item, (list, tuple, range, np.ndarray)):     # a range is a sequence of ints, as in torch
        arr = np.asarray(item)
        if arr.size == 0 and arr.dtype.kind == "f":
            arr = arr.astype(np.int64)                  # [] selects nothing
        if arr.dtype.kind not in "biu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        # a 0-d integer array then indexes like an int, as the tensor it becomes does
        return _item(tensor(arr if arr.dtype.kind == "b" else arr.astype(np.int64)), keep_scalar_tensors)
    if hasattr(item, "__index__"):
        return operator.index(item)
    raise IndexError(
        "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
        f"indices (got {type(item).__name__})")


def parse_key(x, key, keep_scalar_tensors=False):
    """Resolve ``x[key]``. Returns (IndexKey, None) for an advanced key, or (None, basic items)
    when the key has no index tensors (then it is a view: views.basic_index)."""
    items = [_item(i, keep_scalar_tensors) for i in _key_items(key)]
    if not any(isinstance(i, Tensor) for i in items):
        return None, _views.normalize_index(tuple(items))
    if sum(1 for i in items if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = 0
    for i in items:
        if isinstance(i, Tensor):
            consumed += i.dim() if i.dtype.name in _MASK_DTYPES else 1
        elif i is not None and i is not Ellipsis:
            consumed += 1
    if consumed > x.dim():
        raise IndexError(f"too many indices for tensor of dimension {x.dim()}")
    basic, pending, vd = [], [], 0
    for i in items:
        if i is Ellipsis:
            basic += [slice(None)] * (x.dim() - consumed)
            vd += x.dim() - consumed
        elif i is None:
            basic.append(None)
            vd += 1
        elif isinstance(i, slice):
            basic.append(i)
            vd += 1
        elif isinstance(i, Tensor):
            if i.dtype.name in _MASK_DTYPES and i.dim() == 0:
                basic.append(None)          # a 0-d mask adds a dim of size 1 (True) or 0 (False)
                pending.append(("mask0", vd, i))
                vd += 1
            elif i.dtype.name in _MASK_DTYPES:
                basic += [slice(None)] * i.dim()
                pending.append(("mask", vd, i))
                vd += i.dim()
            else:
                basic.append(slice(None))
                pending.append(("index", vd, i))
                vd += 1
        else:
            basic.append(i)                 # an int selects: no view dim
    vshape = _basic_index_layout(x, tuple(basic))[0]
    dims, indices, checked = [], [], set()
    for kind, d, t in pending:
        t = t.detach()
        if t.device != x.device:            # torch accepts cpu indices for a cuda tensor
            t = _copy.to_device(t, x.device)
        if kind == "mask0":
            dims.append(d)
            indices.append(zeros(int(bool(t.item())), dtype=_dt.int64, device=x.device))
            checked.add(len(indices) - 1)
        elif kind == "mask":
            for j in range(t.dim()):
                if t.shape[j] != vshape[d + j]:
                    raise IndexError(
                        f"The shape of the mask {_shape_str(t.shape)} at index {j} does not match the "
                        f"shape of the indexed tensor {_shape_str(vshape)} at index {d + j}")
            nz = nonzero(t)
            for j in range(t.dim()):
                dims.append(d + j)
                indices.append(_views.basic_index(nz, (slice(None), j)))
                checked.add(len(indices) - 1)   # a mask's coordinates are in range by construction
        else:
            dims.append(d)
            indices.append(t)
    try:
        bshape = broadcast_shapes(*(t.shape for t in indices))
    except RuntimeError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + ", ".join(_shape_str(t.shape) for t in indices)) from None
    for j, (d, t) in enumerate(zip(dims, indices)):
        if j not in checked:
            if vshape[d] == 0 and t.numel():
                raise IndexError("index is out of bounds for dimension with size 0")
            indices[j] = check_range(t, vshape[d], j)   # torch names the index tensor's position, not the dim
    return IndexKey(basic, dims, indices, bshape), None


def check_range(index, size, dim, wrap=True, error=IndexError, message=None):
    """torch's bounds check of an index tensor against a dim of ``size`` (negative indices count
    from the end when ``wrap``); returns the index the op must go on with. The cpu raises
    ``error`` with the first offending value at once. A cuda device reads nothing back: the check
    runs on the device and a bad value surfaces at the next sync as torch's "device-side assert
    triggered" (runtime/device_errors.py), and the op gets a copy of the index clamped into
    range, so its kernels touch nothing outside the storages; under CUDA_LAUNCH_BLOCKING=1 it
    checks at the call, as the cpu."""
    if index.numel() == 0:
        return index
    text = (message.format(index="{index}", dim=dim, size=size) if message else
            f"index {{index}} is out of bounds for dimension {dim} with size {size}")
    return backend_for(index.device).check_index(index, -size if wrap else 0, size, _device_errors.check(text, error))


# --------------------------------------------------------------------------- index (getitem)
def _index_rule(x, key, **_):
    return Meta(key.result_shape(key.view_layout(x)[0]), x.dtype)


def _index_launch(out, x, *, compute, key, **_):
    ti.index(out, x, key)


def _index_backward(ctx, g):
    ctx.key.check_unchanged()
    base = zeros(ctx.input_meta[0][0], dtype=g.dtype, device=g.device)
    return dispatch(INDEX_PUT, base, g, key=ctx.key, accumulate=True)


INDEX = op("index", ("x",), jvp=LINEAR, rule=_index_rule, reference=numpy_ref.advanced_index, kernel=_index_launch,
           backward=_index_backward, grad_name="IndexBackward0")
INDEX_SELECT = op("index_select", ("x",), jvp=LINEAR, rule=_index_rule, reference=numpy_ref.advanced_index,
                  kernel=_index_launch, backward=_index_backward)


# --------------------------------------------------------------------------- index_put
def _index_put_rule(x, values, key, accumulate, **_):
    return Meta(tuple(x.shape), x.dtype, _dt.compute_dtype(x.dtype) if accumulate else x.dtype)


def _index_put_launch(out, x, values, *, compute, key, accumulate, **_):
    ti.index_put(out, x, values, key, [_host(t) for t in key.indices], accumulate, compute)


def _zero_scalar(g):
    return zeros((), dtype=g.dtype, device=g.device)


def _index_put_backward(ctx, g):
    need_x, need_v = ctx.needs_input_grad
    ctx.key.check_unchanged()
    grad_x = grad_v = None
    if need_x:
        grad_x = g if ctx.accumulate else dispatch(INDEX_PUT, g, _zero_scalar(g), key=ctx.key, accumulate=False)
    if need_v:
        grad_v = sum_to_size(dispatch(INDEX, g, key=ctx.key), ctx.input_meta[1][0])
    return grad_x, grad_v


# index_put's output is allocated like its input (preserve_format), as torch's clone
INDEX_PUT = op("index_put", ("x", "values"), jvp=LINEAR, rule=_index_put_rule, layout="preserve", reference=numpy_ref.index_put,
               kernel=_index_put_launch, backward=_index_put_backward)


def _values_for(x, key, value, cast):
    """Values of an index_put: a tensor on x's device (cast to x's dtype when ``cast``),
    broadcastable to the indexed shape (leading size-1 dims dropped, as torch does)."""
    if not isinstance(value, Tensor):
        return full((), value, dtype=x.dtype, device=x.device)
    if value.device != x.device:
        value = _copy.to_device(value, x.device)
    if cast and value.dtype is not x.dtype:
        value = _copy.to_dtype(value, x.dtype)
    shape = key.result_shape(key.view_layout(x)[0])
    while value.dim() > len(shape) and value.shape[0] == 1:
        value = _views.reshape(value, value.shape[1:])
    try:
        ok = broadcast_shapes(value.shape, shape) == tuple(shape)
    except RuntimeError:
        ok = False
    if not ok:
        raise RuntimeError(f"shape mismatch: value tensor of shape {_shape_str(value.shape)} cannot be "
                           f"broadcast to indexing result of shape {_shape_str(shape)}")
    if value._storage is x._storage:     # the kernel reads values while writing x: read a copy
        value = _copy.clone(value)
    return value


def _index_put_key(x, indices):
    if not isinstance(indices, (tuple, list)):
        raise TypeError("index_put_(): argument 'indices' must be tuple of Tensors")
    items = []
    for i in indices:
        if i is not None and not isinstance(i, Tensor):
            raise TypeError("index_put_(): argument 'indices' must be tuple of Tensors")
        items.append(slice(None) if i is None else i)
    key, _ = parse_key(x, tuple(items), keep_scalar_tensors=True)
    if key is None:                      # no index tensor at all: every element of x
        key = IndexKey((), (0,), (arange(x.shape[0], device=x.device),), (x.shape[0],)) if x.dim() else \
            IndexKey((None,), (0,), (arange(1, device=x.device),), (1,))
    return key


def _check_put_dtype(x, values):
    if isinstance(values, Tensor) and values.dtype is not x.dtype:
        raise RuntimeError(
            f"Index put requires the source and destination dtypes match, got {_dt.type_name(x.dtype)} "
            f"for the destination and {_dt.type_name(values.dtype)} for the source.")


def index_put_(input, indices, values, accumulate=False):
    _check_put_dtype(input, values)
    key = _index_put_key(input, indices)
    _check_put_overlap(input, key, values)
    return dispatch_inplace(INDEX_PUT, input, _values_for(input, key, values, cast=False), key=key,
                            accumulate=bool(accumulate))


def index_put(input, indices, values, accumulate=False):
    _check_put_dtype(input, values)
    key = _index_put_key(input, indices)
    return dispatch(INDEX_PUT, input, _values_for(input, key, values, cast=False), key=key,
                    accumulate=bool(accumulate))


# --------------------------------------------------------------------------- __getitem__ / __setitem__
def getitem(x, key):
    k, basic = parse_key(x, key)
    if k is None:
        return _views.basic_index(x, basic)
    return dispatch(INDEX, x, key=k)


def _masked_fill_form(x, key, value):
    """torch's canDispatchToMaskedFill: x[mask] = v with one bool/uint8 index tensor and a value
    of one element held on the host (a Python number, or a cpu tensor) is masked_fill_(mask,
    v.item()): the value is converted to x's dtype. Returns the mask tensor, or None.
    A one-element value on x's own device takes the same path, so that x[mask] = v accepts a
    value of another dtype on cuda as it does on cpu (as the issue-16 comparison with torch found)."""
    if isinstance(value, Tensor) and not (value.numel() == 1 and (
            backend_for(value.device).host_memory or backend_for(value.device) is backend_for(x.device))):
        return None
    items = [i for i in _key_items(key) if isinstance(i, (Tensor, list, tuple, np.ndarray, bool, np.bool_))]
    if len(items) != 1:
        return None
    item = _item(items[0], False)
    return item if isinstance(item, Tensor) and item.dtype.name in _MASK_DTYPES else None


def setitem(x, key, value):
    k, basic = parse_key(x, key)
    if k is None:
        shape, strides, offset = _basic_index_layout(x, basic)
        same = (tuple(shape), tuple(strides), offset) == (tuple(x.shape), tuple(x.stride()), x.storage_offset())
        target = x if same else _views.basic_index(x, basic)   # x[...] = v writes x itself
        if isinstance(value, Tensor):
            while value.dim() > target.dim() and value.shape[0] == 1:
                value = _views.reshape(value, value.shape[1:])
            if tuple(value.shape) != tuple(target.shape):
                value = _views.expand(value, tuple(target.shape))     # torch's expand error text
            _copy.copy_(target, value)
        else:
            # torch copies the scalar as a tensor, so copy_'s overlap check applies (fill_ has none)
            _views.assert_no_internal_overlap(target)
            _copy.fill_(target, value)
        return
    mask = _masked_fill_form(x, key, value)
    if mask is not None:
        if mask.dtype is _dt.uint8:
            raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")
        _unsigned.refuse("masked_fill", x.dtype)      # (torch's masked_fill_ has no uint16/32/64 kernel)
    else:
        _check_put_dtype(x, values=value)
    _copy.check_scalar_fits(value, x.dtype)      # a no-op for a tensor value
    cast = mask is not None
    _check_put_overlap(x, k, value)
    values = _values_for(x, k, value, cast=cast)
    shape, strides, offset = k.view_layout(x)
    if (tuple(shape), tuple(strides), offset) != (tuple(x.shape), tuple(x.stride()), x.storage_offset()):
        # as torch: the ints, slices and None give a view first, the index tensors are put into
        # it (so a tensor with history gets CopySlices)
        x = _views.basic_index(x, k.basic)
        k = IndexKey((), k.dims, k.indices, k.bshape)
    dispatch_inplace(INDEX_PUT, x, values, key=k, accumulate=False)


def _check_put_overlap(x, key, value):
    """torch's index_put_ checks: no write into an expanded tensor's shared memory is reported
    (torch warns), but a value or an index tensor overlapping x is an error."""
    if isinstance(value, Tensor) and value.device == x.device:
        _views.assert_no_overlap(x, value)
    for t in key.indices:
        if t.device == x.device:
            _views.assert_no_overlap(x, t)


# --------------------------------------------------------------------------- index_select / take
def index_select(input, dim, index):
    check_tensor("index_select", index, "index", 3)
    if index.dtype.name not in _INDEX_DTYPES:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    common_device([input, index])
    if input.dim() == 0:
        if index.numel() != 1:
            raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {index.numel()} "
                               "value(s)")
        out = index_select(_views.reshape(input, (1,)), 0, index)
        return _views.reshape(out, ())       # torch: a 0-d input gives a 0-d result
    d = _wrap(dim, input.dim())
    index = _views.reshape(index.detach(), (-1,))
    index = check_range(index, input.shape[d], d, wrap=False, message="index out of range in self")
    return dispatch(INDEX_SELECT, input, key=IndexKey((), (d,), (index,), tuple(index.shape)))


def take(input, index):
    if not isinstance(index, Tensor) or index.dtype is not _dt.int64:
        raise RuntimeError("take(): Expected a long tensor for index, but got " +
                           (_dt.type_name(index.dtype) if isinstance(index, Tensor) else type(index).__name__))
    common_device([input, index])
    _unsigned.refuse("take_cpu", input.dtype, input.device)
    flat = _views.reshape(input, (-1,))
    index = check_range(index.detach(), flat.shape[0], 0, message="out of range: tried to access index {index} on a "
                        f"tensor of {flat.shape[0]} elements.")
    return rename_node(dispatch(INDEX, flat, key=IndexKey((), (0,), (index,), tuple(index.shape))),
                       "TakeBackward0")    # torch's node for take


# --------------------------------------------------------------------------- gather / scatter
def _size(t, d):
    return t.shape[d] if t.dim() else 1


@signature_rule
def _gather_rule(x, dim, index, **_):
    return Meta(tuple(index.shape), x.dtype)


def _gather_launch(out, x, *, compute, dim, index, **_):
    xs = x.stride()
    ti.gather(out, x, [0 if d == dim else xs[d] for d in range(x.dim())], index, index.stride(),
              x.shape[dim], xs[dim], wrap=False)


def _pad_to(t, shape):
    """``t`` placed at the start of zeros of ``shape`` (a src bigger than the index gets zero
    gradient where it was not read)."""
    if tuple(t.shape) == tuple(shape):
        return t
    return dispatch(_views.SLICE_BACKWARD, t, input_shape=tuple(shape), index=tuple(slice(0, s) for s in t.shape))


def _index_attrs(index):
    """The attributes naming a gather/scatter index: the tensor, and a SavedTensor of it so that
    the backward can tell whether it was modified in place since (torch's error)."""
    return {"index": index, "saved_index": SavedTensor(index)}


def _saved_index(ctx):
    return ctx.saved_index.unpack(None)


def _gather_backward(ctx, g):
    index = _saved_index(ctx)
    base = zeros(ctx.input_meta[0][0], dtype=g.dtype, device=g.device)
    if index.numel() == 0:
        # nothing was read (an empty index need not match the input's dims): a zero gradient,
        # still a function of g so that a double backward reaches it
        return g.sum() * 0 + base
    return dispatch(SCATTER_ADD, base, g, dim=ctx.dim, value_form=False, **_index_attrs(index))


GATHER = op("gather", ("x",), jvp=LINEAR, rule=_gather_rule, reference=numpy_ref.gather, kernel=_gather_launch,
            backward=_gather_backward)


def _scatter_rule(x, src, dim, index, **_):
    return Meta(tuple(x.shape), x.dtype, _dt.compute_dtype(x.dtype))


def _scatter_launcher(accumulate):
    def launch(out, x, src, *, compute, dim, index, **_):
        idx = _host(index).astype(np.int64)
        bad = (idx < 0) | (idx >= out.shape[dim])
        if bad.any():     # before anything is written (the frontend checks on the cpu device)
            raise RuntimeError(f"index {int(idx[bad][0])} is out of bounds for dimension {dim} with size "
                               f"{out.shape[dim]}")
        ti.scatter_along(out, x, src, dim, idx, accumulate, compute)
    return launch


def _gather_grad(ctx, g, index):
    """grad_src of scatter / scatter_add: the gradient at the positions written, src-shaped."""
    return _pad_to(dispatch(GATHER, g, dim=ctx.dim, **_index_attrs(index)), ctx.input_meta[1][0])


def _scatter_backward(ctx, g):
    need_x, need_src = ctx.needs_input_grad
    index = _saved_index(ctx)
    grad_x = dispatch(SCATTER, g, _zero_scalar(g), dim=ctx.dim, value_form=True, **_index_attrs(index)) \
        if need_x else None
    return grad_x, (_gather_grad(ctx, g, index) if need_src else None)


def _scatter_add_backward(ctx, g):
    need_x, need_src = ctx.needs_input_grad
    index = _saved_index(ctx)
    return (g if need_x else None), (_gather_grad(ctx, g, index) if need_src else None)


SCATTER = op("scatter", ("x", "src"), jvp=FROM_BACKWARD, rule=_scatter_rule, reference=numpy_ref.scatter(False),
             kernel=_scatter_launcher(False), backward=_scatter_backward,
             grad_name=lambda args, attrs: "ScatterBackward1" if attrs.get("value_form") else "ScatterBackward0")
SCATTER_ADD = op("scatter_add", ("x", "src"), jvp=FROM_BACKWARD, rule=_scatter_rule, reference=numpy_ref.scatter(True),
                 kernel=_scatter_launcher(True), backward=_scatter_add_backward)


def _gather_checks(name, input, dim, index, src=None):
    check_tensor(name, index, "index", None)
    common_device([input, index] + ([src] if isinstance(src, Tensor) else []))
    d = _wrap(dim, input.dim())
    if index.numel() == 0:
        return d, index
    if index.dtype.name not in _INDEX_DTYPES:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    nd = max(input.dim(), 1)
    if name == "gather":
        if max(index.dim(), 1) != nd:
            raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
        for i in range(nd):
            if i != d and _size(index, i) > _size(input, i):
                raise RuntimeError(
                    f"Size does not match at dimension {i} expected index {_shape_str(index.shape)} to be "
                    f"no larger than self {_shape_str(input.shape)} apart from dimension {d}")
    else:
        if max(index.dim(), 1) != nd:
            raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
        if src is not None and max(index.dim(), 1) != max(src.dim(), 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
        bad = any(i != d and _size(index, i) > _size(input, i) for i in range(nd))
        bad = bad or (src is not None and any(_size(index, i) > _size(src, i) for i in range(nd)))
        if bad:
            extra = f" and to be no larger size than src {_shape_str(src.shape)}" if src is not None else ""
            raise RuntimeError(f"Expected index {_shape_str(index.shape)} to be no larger than self "
                               f"{_shape_str(input.shape)} apart from dimension {d}{extra}")
    # (scatter's Triton launcher checks the host copy of the index it reads again: the same error)
    return d, check_range(index.detach(), _size(input, d), d, wrap=False, error=RuntimeError)


def _as_1d(t):
    return _views.reshape(t, (1,)) if t.dim() == 0 else t


def gather(input, dim, index, *, sparse_grad=False):
    d, index = _gather_checks("gather", input, dim, index)
    if input.dim() == 0 or index.dim() == 0:     # torch reads 0-d operands as 1-element vectors
        out = dispatch(GATHER, _as_1d(input), dim=0, **_index_attrs(_as_1d(index.detach())))
        return _views.reshape(out, tuple(index.shape))
    return dispatch(GATHER, input, dim=d, **_index_attrs(index.detach()))


def _scatter(entry, name, input, dim, index, src, inplace, reduce=None):
    if reduce is not None:
        raise NotImplementedError(f"tritensor: {name}(reduce={reduce!r}) is not supported")
    value_form = not isinstance(src, Tensor)
    if value_form:
        src_t = full((), src, dtype=input.dtype, device=input.device)
    else:
        src_t = src
        if src.dtype is not input.dtype:
            raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    d, index = _gather_checks(name, input, dim, index, None if value_form else src_t)
    index = index.detach()
    if src_t.device != input.device:
        src_t = _copy.to_device(src_t, input.device)
    if input.dim() == 0 or index.dim() == 0:
        # torch reads 0-d operands as 1-element vectors
        src1 = src_t if value_form else _as_1d(src_t)
        out = dispatch(entry, _as_1d(input), src1, dim=0, value_form=value_form, **_index_attrs(_as_1d(index)))
        out = _views.reshape(out, tuple(input.shape))
        if inplace:
            return _copy.copy_(input, out)
        return out
    if inplace:
        _views.assert_no_internal_overlap(input)
        _views.assert_no_overlap(input, index)
        if not value_form:
            _views.assert_no_overlap(input, src_t)
    if not value_form and src_t._storage is input._storage:
        src_t = _copy.clone(src_t)
    if inplace:
        return dispatch_inplace(entry, input, src_t, dim=d, value_form=value_form, **_index_attrs(index))
    return dispatch(entry, input, src_t, dim=d, value_form=value_form, **_index_attrs(index))


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    if reduce is not None:
        return _legacy_scatter_reduce(input, dim, index, value if src is None else src, reduce, False)
    return _scatter(SCATTER, "scatter", input, dim, index, value if src is None else src, False, reduce)


def scatter_(input, dim, index, src=None, *, value=None, reduce=None):
    if reduce is not None:
        return _legacy_scatter_reduce(input, dim, index, value if src is None else src, reduce, True)
    return _scatter(SCATTER, "scatter", input, dim, index, value if src is None else src, True, reduce)


def scatter_add(input, dim, index, src):
    return _scatter(SCATTER_ADD, "scatter_add", input, dim, index, src, False)


def scatter_add_(input, dim, index, src):
    return _scatter(SCATTER_ADD, "scatter_add", input, dim, index, src, True)


# --------------------------------------------------------------------------- scatter_reduce
_SCATTER_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _scatter_reduce_launch(out, x, src, *, compute, dim, index, reduce, include_self, **_):
    ti.scatter_reduce_along(out, x, src, dim, _host(index).astype(np.int64), reduce, include_self, compute)


def _scatter_reduce_backward(ctx, g):
    """torch's scatter_reduce_backward, rule for rule (so ties, zeros and include_self give its
    gradients): sum g; prod the product of the others (zeros handled as torch); mean g over the
    count; amax/amin g shared evenly among the elements equal to the result."""
    if ctx.legacy:
        raise RuntimeError("derivative for aten::scatter is not implemented")
    x, src, out = ctx.x, ctx.src, ctx.out
    index = _saved_index(ctx)
    dim, reduce, inc = ctx.dim, ctx.reduce, ctx.include_self

    def gather_(t):
        return dispatch(GATHER, t, dim=dim, **_index_attrs(index))

    def reduce_into(base, values, how, include_self):
        return dispatch(SCATTER_REDUCE, base, values, dim=dim, reduce=how, include_self=include_self,
                        legacy=False, **_index_attrs(index))
    if reduce == "sum":
        grad_x, grad_src = g, gather_(g)
    elif reduce == "prod":
        masked_x = ew.where(ew.eq(x, 0), 1.0, x)
        grad_x = ew.div(ew.mul(g, reduce_into(masked_x, src, "prod", inc)), masked_x)
        src_zero = ew.eq(src, 0)
        zeros_per_target = gather_(reduce_into(zeros_like(x), src_zero.to(x.dtype), "sum", True))
        single_zero = pw.logical_and(src_zero, ew.eq(zeros_per_target, 1))
        masked_src_result = reduce_into(x, ew.where(single_zero, 1.0, src), "prod", inc)
        grad_src = ew.where(single_zero, gather_(ew.mul(g, masked_src_result)),
                            ew.div(gather_(ew.mul(g, out)), ew.where(src_zero, 1.0, src)))
    elif reduce == "mean":
        n = reduce_into(ones_like(g) if inc else zeros_like(g), ones_like(src), "sum", True)
        n = ew.where(ew.eq(n, 0), 1.0, n)
        grad_x, grad_src = ew.div(g, n), ew.div(gather_(g), gather_(n))
    else:
        value = gather_(out)
        x_is_result = ew.eq(x, out).to(g.dtype)
        src_is_result = ew.eq(src, value).to(g.dtype)
        shared = ew.div(g, reduce_into(x_is_result, src_is_result, "sum", True))
        grad_x, grad_src = ew.mul(x_is_result, shared), ew.mul(src_is_result, gather_(shared))
    if not inc:
        grad_x = dispatch(SCATTER, grad_x, _zero_scalar(grad_x), dim=dim, value_form=True, **_index_attrs(index))
    return grad_x, _pad_to(grad_src, ctx.input_meta[1][0])


SCATTER_REDUCE = op("scatter_reduce", ("x", "src"), jvp=FROM_BACKWARD, rule=_scatter_rule, reference=numpy_ref.scatter_reduce,
                    kernel=_scatter_reduce_launch, backward=_scatter_reduce_backward, saves=("x", "src", "out"),
                    grad_name=lambda args, attrs: "ScatterBackward0" if attrs.get("legacy") else "ScatterReduceBackward0")


def _scatter_reduce(input, dim, index, src, reduce, include_self, inplace, legacy=False):
    name = "scatter" if legacy else "scatter_reduce"
    if not isinstance(src, Tensor):
        src = full(tuple(index.shape), src, dtype=input.dtype, device=input.device)
    elif src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")     # torch's text for both
    d, index = _gather_checks(name, input, dim, index, src)
    if reduce == "mean" and input.dtype is _dt.bool_:      # (torch's kernels have no boolean mean)
        raise NotImplementedError(f"\"scatter_gather_tensor_{input.device.type}_reduce_mean\" not implemented "
                                  "for 'Bool'")
    index = index.detach()
    if src.device != input.device:
        src = _copy.to_device(src, input.device)
    attrs = dict(reduce=reduce, include_self=bool(include_self), legacy=legacy)
    if input.dim() == 0 or index.dim() == 0:      # torch reads 0-d operands as 1-element vectors
        out = dispatch(SCATTER_REDUCE, _as_1d(input), _as_1d(src), dim=0, **attrs, **_index_attrs(_as_1d(index)))
        out = _views.reshape(out, tuple(input.shape))
        return _copy.copy_(input, out) if inplace else out
    if inplace:
        _views.assert_no_internal_overlap(input)
        _views.assert_no_overlap(input, index)
        _views.assert_no_overlap(input, src)
        return dispatch_inplace(SCATTER_REDUCE, input, src, dim=d, **attrs, **_index_attrs(index))
    if src._storage is input._storage:
        src = _copy.clone(src)
    return dispatch(SCATTER_REDUCE, input, src, dim=d, **attrs, **_index_attrs(index))


def _check_reduce(reduce):
    if reduce not in _SCATTER_REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """torch.scatter_reduce: input with src's values folded in at the index positions along dim,
    reduce in sum, prod, mean (floor division for integers), amax, amin; include_self=False leaves
    input's own value out of every position written. Deterministic (each target's values are
    folded in index order by one lane on cuda)."""
    _check_reduce(reduce)
    return _scatter_reduce(input, dim, index, src, reduce, include_self, False)


def scatter_reduce_(input, dim, index, src, reduce, *, include_self=True):
    _check_reduce(reduce)
    return _scatter_reduce(input, dim, index, src, reduce, include_self, True)


def _legacy_scatter_reduce(input, dim, index, src, reduce, inplace):
    """scatter(..., reduce='add'|'multiply'): scatter_reduce's sum/prod with input included; no
    gradient (torch: "derivative for aten::scatter is not implemented")."""
    if reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if isinstance(src, Tensor):
        warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in "
                      "a future PyTorch release. Use torch.scatter_reduce instead for more reduction options.",
                      UserWarning, stacklevel=3)
    return _scatter_reduce(input, dim, index, src, "sum" if reduce == "add" else "prod", True, inplace, legacy=True)


# --------------------------------------------------------------------------- nonzero / masked_select

def nonzero(input, *, as_tuple=False):
    if as_tuple:
        if input.dim() == 0:
            return (nonzero(_views.reshape(input, (1,)))[:, 0],)
        nz = nonzero(input)
        return tuple(_views.basic_index(nz, (slice(None), d)) for d in range(input.dim()))
    _unsigned.refuse("nonzero_count_cpu", input.dtype, input.device)
    return backend_for(input.device).compact(input, tuple(input.shape), _dt.int64)


def _masked_select_backward(ctx, g):
    base = zeros(ctx.shape, dtype=g.dtype, device=g.device)
    key, _ = parse_key(base, (_views.expand(ctx.mask, ctx.shape),))
    grad = dispatch(INDEX_PUT, base, g, key=key, accumulate=False)
    return sum_to_size(grad, ctx.input_meta[0][0]), None


# the forward is a compaction recorded by hand (its output size is data-dependent)
MASKED_SELECT = op("masked_select", ("x", "mask"), backward=_masked_select_backward, saves=("mask",),
                   jvp=lambda ctx, t, _: masked_select(t, ctx.mask))


def masked_select(input, mask):
    if not isinstance(mask, Tensor) or mask.dtype is not _dt.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    _unsigned.refuse("masked_select", input.dtype)
    dev = common_device([input, mask])
    shape = broadcast_shapes(input.shape, mask.shape)
    m = mask if mask.device == dev else _copy.to_device(mask, dev)     # a 0-d cpu mask
    out = backend_for(dev).compact(m, shape, input.dtype, values=input)
    record(MASKED_SELECT, out, (input, mask), {"shape": shape})
    if _dual.ACTIVE[0]:
        _forward_ad.apply_rule(MASKED_SELECT, out, (input, mask), {"shape": shape})
    return out


__all__ = ["IndexKey", "parse_key", "getitem", "setitem", "index_put_", "index_put", "index_select", "take",
           "gather", "scatter", "scatter_", "scatter_add", "scatter_add_", "nonzero", "masked_select"]
