"""View ops: new shape/strides/offset over the same storage, never a copy.

Each entry's ``view`` computes the new layout; its backward maps the gradient back to the
input's layout with other tritensor ops (so views are differentiable to any order).
"""
from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..autograd.graph import BackwardContext, OpNode, gradient_edge, move_retained_grad
from ..backends import numpy_ref as _numpy_ref
from ..tensor import Tensor, contiguous_strides
from ._overlap import (  # noqa: F401  (re-exported for views' importers)
    assert_no_internal_overlap, assert_no_overlap, assert_no_partial_overlap, check_inplace_overlap,
    has_internal_overlap, is_non_overlapping_and_dense,
)
from ._overlap import (  # noqa: F401  (geometry: views' importers)
    check_scatter_target as _check_scatter_target, check_view_geometry as _check_view_geometry,
    extent as _extent, geometry, geometry_overlaps as _overlaps, squash_broadcast as _squash_broadcast,
)
from . import copy as _copy
from ._shapes import numel as _numel, wrap_dim as _wrap
from .creation import arange, zeros
from .dispatch import dispatch, empty
from .table import LINEAR, Meta, op


def infer_size(shape, numel):
    """Resolve one -1 in a requested shape, with torch's errors."""
    shape = list(shape)
    neg = [i for i, d in enumerate(shape) if d == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for d in shape:
        if d < -1:
            raise RuntimeError(f"invalid shape dimension {d}")
    known = _numel([d for d in shape if d != -1])
    if neg:
        if known == 0 and numel == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape [{', '.join(map(str, shape))}] because the "
                f"unspecified dimension size -1 can be any value and is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
    return tuple(shape)


def view_strides(old_shape, old_strides, new_shape):
    """Strides that present ``old`` as ``new_shape`` without copying, or None if impossible
    (torch's computeStride: the new shape must split/merge only runs of contiguous dims)."""
    if not old_shape:
        return contiguous_strides(new_shape)
    if _numel(old_shape) == 0:
        # torch's computeStride: an empty tensor viewed as its own shape keeps its strides
        if tuple(old_shape) == tuple(new_shape):
            return tuple(old_strides)
        return contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_strides[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1 and
                             old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


# --------------------------------------------------------------------------- entries
def _view_layout(x, shape):
    shape = infer_size(shape, x.numel())
    strides = view_strides(x.shape, x.stride(), shape)
    if strides is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one dimension "
            "spans across two contiguous subspaces). Use .reshape(...) instead.")
    return shape, strides, x.storage_offset()


VIEW = op("view", ("x",), view=_view_layout,
          backward=lambda ctx, g: reshape(g, ctx.input_meta[0][0]))


def _permute_layout(x, dims):
    if len(dims) != x.dim():
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the length "
            f"of the desired ordering of dimensions i.e. input.dim() = {x.dim()} is not equal to "
            f"len(dims) = {len(dims)}".replace("(sparse_coo)", ""))
    dims = [_wrap(d, x.dim()) for d in dims]
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return tuple(x.shape[d] for d in dims), tuple(x.stride()[d] for d in dims), x.storage_offset()


def _inverse(dims):
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d % max(len(dims), 1)] = i
    return tuple(inv)


PERMUTE = op("permute", ("x",), view=_permute_layout,
             backward=lambda ctx, g: permute(g, _inverse(ctx.dims)))


def _transpose_layout(x, dim0, dim1):
    n = x.dim()
    d0, d1 = _wrap(dim0, n), _wrap(dim1, n)
    if n == 0:
        return x.shape, x.stride(), x.storage_offset()
    shape, strides = list(x.shape), list(x.stride())
    shape[d0], shape[d1] = shape[d1], shape[d0]
    strides[d0], strides[d1] = strides[d1], strides[d0]
    return tuple(shape), tuple(strides), x.storage_offset()


TRANSPOSE = op("transpose", ("x",), view=_transpose_layout,
               backward=lambda ctx, g: transpose(g, ctx.dim0, ctx.dim1))


def _expand_layout(x, shape):
    shape = tuple(shape)
    if len(shape) < x.dim():
        raise RuntimeError(
            f"expand({x._type_description().split(' ')[0]}{{[{', '.join(map(str, x.shape))}]}}, "
            f"size=[{', '.join(map(str, shape))}]): the number of sizes provided ({len(shape)}) must be "
            f"greater or equal to the number of dimensions in the tensor ({x.dim()})")
    lead = len(shape) - x.dim()
    # torch's inferExpandGeometry, last dim first: a new leading dim is a size-1 dim whose stride
    # is size x stride of the dim after it (so expand(2, 1, 2) of a (2,) tensor has strides
    # (0, 2, 1)); a dim of size 1 grown to another size gets stride 0.
    out_shape, out_strides = [0] * len(shape), [0] * len(shape)
    for i in range(len(shape) - 1, -1, -1):
        s = shape[i]
        if i < lead:
            if s < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor ({s}) isn't allowed in a leading, non-existing dimension {i}")
            d = 1
            st = out_shape[i + 1] * out_strides[i + 1] if i + 1 < len(shape) else 1
        else:
            d, st = x.shape[i - lead], x.stride()[i - lead]
            if s == -1:
                s = d
        if d != s:
            if d != 1:
                raise RuntimeError(
                    f"The expanded size of the tensor ({s}) must match the existing size ({d}) at "
                    f"non-singleton dimension {i}.  Target sizes: [{', '.join(map(str, shape))}].  "
                    f"Tensor sizes: [{', '.join(map(str, x.shape))}]")
            st = 0
        out_shape[i], out_strides[i] = s, st
    if x.dim() == 0:      # torch's inferExpandGeometry: every dim of an expanded 0-d tensor has stride 0
        out_strides = [0] * len(shape)
    return tuple(out_shape), tuple(out_strides), x.storage_offset()


EXPAND = op("expand", ("x",), view=_expand_layout,
            backward=lambda ctx, g: g.sum_to_size(ctx.input_meta[0][0]))


T = op("t", ("x",), view=lambda x: _transpose_layout(x, 0, -1) if x.dim() == 2 else
       (x.shape, x.stride(), x.storage_offset()), backward=lambda ctx, g: t(g))


def _squeeze_layout(x, dims):
    n = x.dim()
    dims = set(range(n)) if dims is None else {_wrap(d, n) for d in dims}
    keep = [i for i in range(n) if not (i in dims and x.shape[i] == 1)]
    return tuple(x.shape[i] for i in keep), tuple(x.stride()[i] for i in keep), x.storage_offset()


SQUEEZE = op("squeeze", ("x",), view=_squeeze_layout,
             backward=lambda ctx, g: reshape(g, ctx.input_meta[0][0]),
             grad_name=lambda args, attrs: "SqueezeBackward0" if attrs.get("dims") is None else "SqueezeBackward1")


def _unsqueeze_layout(x, dim):
    n = x.dim() + 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    dim %= n
    shape, strides = list(x.shape), list(x.stride())
    new_stride = strides[dim] * shape[dim] if dim < len(shape) else 1
    shape.insert(dim, 1)
    strides.insert(dim, new_stride)
    return tuple(shape), tuple(strides), x.storage_offset()


UNSQUEEZE = op("unsqueeze", ("x",), view=_unsqueeze_layout,
               backward=lambda ctx, g: reshape(g, ctx.input_meta[0][0]))


def _as_strided_layout(x, size, stride, storage_offset):
    return tuple(size), tuple(stride), storage_offset


def _slice_backward(ctx, g):
    """Gradient of a basic-indexing view: zeros of the input's layout with g written into the
    same view of them. A table entry of its own, so that it too is differentiable."""
    return dispatch(SLICE_BACKWARD, g, input_shape=ctx.input_meta[0][0], index=ctx.index)


def _basic_index_layout(x, index):
    """ints, slices (any positive step), None and Ellipsis, as torch's basic indexing."""
    shape, strides, offset = [], [], x.storage_offset()
    n_real = sum(1 for i in index if i is not None and i is not Ellipsis)
    if n_real > x.dim():
        raise IndexError(f"too many indices for tensor of dimension {x.dim()}")
    dim = 0
    for item in index:
        if item is None:
            shape.append(1)
            strides.append(0)
        elif item is Ellipsis:
            skip = x.dim() - n_real
            for _ in range(skip):
                shape.append(x.shape[dim])
                strides.append(x.stride()[dim])
                dim += 1
        elif isinstance(item, slice):
            size, st = x.shape[dim], x.stride()[dim]
            start, stop, step = item.start, item.stop, item.step
            step = 1 if step is None else step
            if step == 0:
                raise ValueError("slice step cannot be zero")      # Python's own slice error, as torch
            if step < 0:
                raise ValueError("step must be greater than zero")
            start = 0 if start is None else (start + size if start < 0 else start)
            stop = size if stop is None else (stop + size if stop < 0 else stop)
            start = min(max(start, 0), size)
            stop = min(max(stop, start), size)
            length = (stop - start + step - 1) // step
            offset += start * st
            shape.append(length)
            strides.append(st * step)
            dim += 1
        else:
            i = int(item)
            size = x.shape[dim]
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")
            offset += (i % size) * x.stride()[dim]
            dim += 1
    for d in range(dim, x.dim()):
        shape.append(x.shape[d])
        strides.append(x.stride()[d])
    return tuple(shape), tuple(strides), offset


def _index_node_name(args, attrs):
    """torch applies an index one step at a time; the node is named after the last real step."""
    for item in reversed(attrs["index"]):
        if isinstance(item, int):
            return "SelectBackward0"
        if item is None:
            return "UnsqueezeBackward0"
        if isinstance(item, slice) and item != slice(None):
            return "SliceBackward0"
    return "AliasBackward0"


INDEX = op("basic_index", ("x",), view=_basic_index_layout, backward=_slice_backward, grad_name=_index_node_name)


def _slice_backward_rule(g, input_shape, index):
    return Meta(tuple(input_shape), g.dtype)


def _slice_backward_launch(out, g, *, compute, input_shape, index):
    _copy.fill_into(out, 0)
    _copy.copy_into(_raw_index(out, index), g)


def _raw_index(t, index):
    shape, strides, offset = _basic_index_layout(t, index)
    return Tensor._make(t._storage, shape, strides, offset, t.dtype, t._version_counter)


SLICE_BACKWARD = op("slice_backward", ("grad",), jvp=LINEAR, rule=_slice_backward_rule,
                    reference=_numpy_ref.slice_backward, kernel=_slice_backward_launch,
                    backward=lambda ctx, gg: basic_index(gg, ctx.index))


# --------------------------------------------------------------------------- functions
def _shape_args(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(int(s) for s in shape)


def view(x, *shape, dtype=None):
    """Tensor.view(*shape) / Tensor.view(dtype): a new shape, or the same bytes read as another
    dtype (view_dtype below)."""
    if dtype is not None or (len(shape) == 1 and isinstance(shape[0], _dt.dtype)):
        if shape and dtype is not None:
            raise TypeError("view() received an invalid combination of arguments")
        return view_dtype(x, dtype if dtype is not None else shape[0])
    return dispatch(VIEW, x, shape=_shape_args(shape))


def view_dtype(x, dtype):
    """torch's view.dtype: ``x``'s bytes read as ``dtype``. With another element size the last
    dim (contiguous) grows or shrinks by the ratio, the other strides and the offset are rescaled,
    with torch's checks that every byte stays where it was. Like torch's, it is not
    differentiable (the result never requires grad) and shares x's version counter."""
    old, new = x.dtype.itemsize, dtype.itemsize
    shape, strides, offset = list(x._shape), list(x._stride), x._offset
    if new != old:
        what = f"to view {_dt.type_name(x.dtype)} as {_dt.type_name(dtype)} (different element sizes)"
        if not shape:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if strides[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")
        if old > new:
            ratio = old // new
            strides = [s * ratio for s in strides[:-1]] + [1]
            shape[-1] *= ratio
            offset *= ratio
        else:
            ratio = new // old
            if shape[-1] % ratio:
                raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got {shape[-1]}")
            if offset % ratio:
                raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what}, but got {offset}")
            for d, s in enumerate(strides[:-1]):
                if s % ratio:
                    raise RuntimeError(f"self.stride({d}) must be divisible by {ratio} {what}, but got {s}")
            strides = [s // ratio for s in strides[:-1]] + [1]
            shape[-1] //= ratio
            offset //= ratio
    return Tensor._make(x._storage, tuple(shape), tuple(strides), offset, dtype, x._version_counter)


def reshape(x, *shape):
    if x._is_sparse_coo:          # (torch's text: view's own error would name aten::view)
        raise RuntimeError("reshape is not implemented for sparse tensors")
    shape = infer_size(_shape_args(shape), x.numel())
    if view_strides(x.shape, x.stride(), shape) is not None:
        return dispatch(VIEW, x, shape=shape)
    # copies only when it must, as torch: _unsafe_view(clone(contiguous)), UnsafeViewBackward0
    return unsafe_view(x.contiguous(), shape)


UNSAFE_VIEW = op("_unsafe_view", ("x",), view=lambda x, shape, node: _view_layout(x, shape),
                 backward=lambda ctx, g: reshape(g, ctx.input_meta[0][0]),
                 grad_name=lambda args, attrs: attrs["node"])


def unsafe_view(x, shape, node="UnsafeViewBackward0"):
    """torch's _unsafe_view: a new shape for a tensor nobody else holds (a fresh copy, an op's
    result inside matmul or reshape), recorded as UnsafeViewBackward0. Unlike a view it is not
    tracked as one (no ``_base``): an in-place op on it is an ordinary in-place op, as torch's.
    ``node`` names the node when torch reshapes its temporary by another in-place op
    (matmul's ``squeeze_`` of a vector-matrix product: SqueezeBackward4)."""
    out = dispatch(UNSAFE_VIEW, x, shape=tuple(shape), node=node)
    out._base = None
    out._view_version = None
    return out


def permute(x, *dims):
    return dispatch(PERMUTE, x, dims=_shape_args(dims))


def transpose(x, dim0, dim1):
    return dispatch(TRANSPOSE, x, dim0=dim0, dim1=dim1)


def t(x):
    if x.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.dim()}D")
    return dispatch(T, x)


def expand(x, *shape):
    return dispatch(EXPAND, x, shape=_shape_args(shape))


def squeeze(x, dim=None):
    dims = None if dim is None else (tuple(dim) if isinstance(dim, (tuple, list)) else (dim,))
    return dispatch(SQUEEZE, x, dims=dims)


def unsqueeze(x, dim):
    return dispatch(UNSQUEEZE, x, dim=dim)


def flatten(x, start_dim=0, end_dim=-1):
    if x.dim() == 0:
        return reshape(x, 1)
    s, e = _wrap(start_dim, x.dim()), _wrap(end_dim, x.dim())
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return x      # torch: flatten(d, d) is the input itself
    shape = x.shape[:s] + (_numel(x.shape[s:e + 1]),) + x.shape[e + 1:]
    return reshape(x, tuple(shape))


def unflatten(x, dim, sizes):
    d = _wrap(dim, x.dim())
    sizes = infer_size(tuple(sizes), x.shape[d])
    return view(x, tuple(x.shape[:d]) + tuple(sizes) + tuple(x.shape[d + 1:]))


def basic_index(x, index):
    return dispatch(INDEX, x, index=index)


def narrow(x, dim, start, length):
    """torch.narrow: ``length`` elements of ``dim`` from ``start`` (a view, SliceBackward0),
    with torch's checks in its order; ``start`` may be a 0-d integer tensor (torch's overload)."""
    if x.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if isinstance(start, Tensor):     # torch's Tensor-start overload: a 0-d integer tensor
        if start.dim() != 0 or start.dtype.is_floating_point or start.dtype is _dt.bool_:
            raise RuntimeError("start must be an 0-dim integral Tensor.")
        start = int(start.item())
    d = _wrap(dim, x.dim())
    size = x.shape[d]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if start > size - length:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return basic_index(x, (slice(None),) * d + (slice(start, start + length),))


def select(x, dim, index):
    """torch.select: index ``index`` of ``dim`` (a view, SelectBackward0)."""
    if x.dim() == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap(dim, x.dim())
    size, index = x.shape[d], int(index)
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(x.shape)} at dimension {d}")
    return basic_index(x, (slice(None),) * d + (index,))


UNBIND = op("unbind", ("x",), view=_basic_index_layout, backward=_slice_backward, grad_name="UnbindBackward0")


def unbind(x, dim=0):
    """Every index of ``dim`` selected, as views whose node is torch's UnbindBackward0."""
    d = _wrap(dim, x.dim())
    lead = (slice(None),) * d
    return tuple(dispatch(UNBIND, x, index=lead + (i,)) for i in range(x.shape[d]))


def normalize_index(item):
    """Split a basic __getitem__ key into its parts. Keys with index tensors, lists or masks are
    resolved by ops.indexing.parse_key, which hands only basic keys to this function."""
    if not isinstance(item, tuple):
        item = (item,)
    for i in item:
        if isinstance(i, Tensor) or isinstance(i, (list,)):
            raise TypeError("normalize_index: advanced keys go through ops.indexing.parse_key")
        if not (i is None or i is Ellipsis or isinstance(i, (int, slice)) or hasattr(i, "__index__")):
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                "valid indices (got {})".format(type(i).__name__))
    if sum(1 for i in item if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    return tuple(i if (i is None or i is Ellipsis or isinstance(i, slice)) else int(i) for i in item)


# --------------------------------------------------------------------------- as_strided
# A geometry is (shape, strides, storage offset): where a tensor's elements lie in its storage.
# as_strided's gradient, the CopySlices node (in-place ops on views) and the regenerated grad_fn
# of a view whose base changed in place all move values between two geometries of one storage.
def _as_strided_view(x, size, stride, storage_offset, input_geometry):
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"[{', '.join(map(str, stride))}]")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: "
                           f"[{', '.join(map(str, size))}]")
    if storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    if _numel(size):
        need = (_extent(size, stride, storage_offset)[1] + 1) * x.dtype.itemsize
        have = x._storage.nbytes
        if need > have:
            raise RuntimeError(
                f"setStorage: sizes [{', '.join(map(str, size))}], strides [{', '.join(map(str, stride))}], "
                f"storage offset {storage_offset}, and itemsize {x.dtype.itemsize} requiring a storage size of "
                f"{need} are out of bounds for storage of size {have}")
    return size, stride, storage_offset


def _as_strided_backward(ctx, g):
    """torch's as_strided_backward: the gradient summed into storage positions (the output's
    geometry may overlap: each position gets every element that reads it), read back through
    the input's geometry; where the input's own elements share a position (an expanded or
    overlapping input), each of them gets the position's sum divided by how many share it."""
    dst = ctx.input_geometry
    grad = restride(g, (ctx.size, ctx.stride, ctx.storage_offset), dst)
    if _numel(dst[0]) and _maybe_overlapping(dst):
        with no_grad():
            counts = restride(_ones(dst[0], g), dst, dst)
        grad = grad / counts
    return grad


def _maybe_overlapping(geom):
    shape, strides, _ = geom
    return any(st == 0 and s > 1 for s, st in zip(shape, strides)) or _overlaps(shape, strides)


def _ones(shape, like):
    t = empty(tuple(shape), like.dtype, like.device)
    _copy.fill_into(t, 1)
    return t


AS_STRIDED = op("as_strided", ("x",), view=_as_strided_view, backward=_as_strided_backward)


def as_strided(x, size, stride, storage_offset=None):
    offset = x.storage_offset() if storage_offset is None else int(storage_offset)
    return dispatch(AS_STRIDED, x, size=tuple(size), stride=tuple(stride), storage_offset=offset,
                    input_geometry=geometry(x))


def _restride_rule(g, src, dst):
    return Meta(tuple(dst[0]), g.dtype)


def _mirror(like, lo, hi):
    """A zeroed buffer standing for storage positions lo..hi of ``like``'s storage."""
    m = empty((hi - lo + 1,), like.dtype, like.device)
    _copy.fill_into(m, 0)
    return m


def _at(buffer, geom, lo):
    shape, strides, offset = geom
    return Tensor._make(buffer._storage, shape, strides, buffer._offset + offset - lo, buffer.dtype)


def _compact(geom):
    shape, strides, _ = geom
    return tuple(strides) == contiguous_strides(shape) or _numel(shape) <= 1


def _within(inner, outer):
    """Whether every position of geometry ``inner`` lies in the range of compact geometry ``outer``."""
    lo, hi = _extent(*inner)
    return lo >= outer[2] and hi < outer[2] + _numel(outer[0])


def _restride_launch(out, g, *, compute, src, dst):
    if _compact(src) and g.is_contiguous() and _within(dst, src):
        # the common case (a view of a contiguous base): read dst's elements straight out of g
        _copy.copy_into(out, _at(g, dst, src[2]))
        return
    keep = _squash_broadcast(src[0], src[1])
    if len(keep) != len(src[0]):   # broadcast dims of src: their gradients sum first
        dims = tuple(d for d in range(len(src[0])) if d not in keep)
        with no_grad():
            g = g.sum(dims)   # reduce.py sits above views.py: through the Tensor method
        src = (tuple(src[0][d] for d in keep), tuple(src[1][d] for d in keep), src[2])
    lo = min(src[2], dst[2])
    hi = max(_extent(*src)[1], _extent(*dst)[1])
    m = _mirror(out, lo, hi)
    if _overlaps(src[0], src[1]):
        # elements of src share positions: each position sums them (a deterministic scatter-add)
        with no_grad():
            m.index_put_((_positions(src, out.device, lo),), g.reshape(-1), accumulate=True)
    else:
        _copy.copy_into(_at(m, src, lo), g)
    _copy.copy_into(out, _at(m, dst, lo))


def _positions(geom, device, lo):
    """The storage positions (minus ``lo``) of a geometry's elements, row-major, as int64."""
    shape, strides, offset = geom
    pos = None
    for d, (size, stride) in enumerate(zip(shape, strides)):
        ramp = arange(size, device=device).mul_(stride).view((1,) * d + (size,) + (1,) * (len(shape) - d - 1))
        pos = ramp if pos is None else pos + ramp
    pos = arange(1, device=device) if pos is None else pos.reshape(-1)
    return pos.add_(offset - lo)


def _restride_reference(g, src, dst):
    return _numpy_ref.restride(g, src, dst)


# out[j] = sum of g over the elements of geometry src at the storage position of element j of
# geometry dst. Linear; its adjoint swaps the geometries, so it is differentiable to any order.
RESTRIDE = op("as_strided_backward", ("grad",), jvp=LINEAR, rule=_restride_rule, reference=_restride_reference,
              kernel=_restride_launch, backward=lambda ctx, gg: restride(gg, ctx.dst, ctx.src))


def restride(g, src, dst):
    return dispatch(RESTRIDE, g, src=src, dst=dst)


def _scatter_rule(x, src, base, view):
    return Meta(tuple(base[0]), x.dtype)


def _scatter_launch(out, x, src, *, compute, base, view):
    if _numel(view[0]) == 0:
        _copy.copy_into(out, x)
        return
    if _compact(base) and _within(view, base):
        _copy.copy_into(out, x)
        _copy.copy_into(_at(out, view, base[2]), src)
        return
    lo = min(base[2], view[2])
    hi = max(_extent(*base)[1], _extent(*view)[1])
    m = _mirror(out, lo, hi)
    _copy.copy_into(_at(m, base, lo), x)
    _copy.copy_into(_at(m, view, lo), src)
    _copy.copy_into(out, _at(m, base, lo))


def _scatter_backward(ctx, g):
    grad_x = as_strided_scatter(g, 0.0, ctx.base, ctx.view) if ctx.needs_input_grad[0] else None
    grad_src = restride(g, ctx.base, ctx.view) if ctx.needs_input_grad[1] else None
    return grad_x, grad_src


# x laid out as geometry ``base``, with the positions of geometry ``view`` holding src instead
# (torch's as_strided_scatter, in absolute storage positions): CopySlices' gradient of the base.
AS_STRIDED_SCATTER = op("as_strided_scatter", ("x", "src"), jvp=LINEAR, rule=_scatter_rule, reference=_numpy_ref.as_strided_scatter,
                        kernel=_scatter_launch, backward=_scatter_backward)


def as_strided_scatter(x, src, base, view):
    _check_view_geometry(base, view)
    return dispatch(AS_STRIDED_SCATTER, x, src, base=base, view=view)


def regenerate_grad_fn(v):
    """The grad_fn of a view whose base (or another view of it) changed in place since the view's
    history was recorded: torch's AsStridedBackward0, the view's geometry taken from the base's
    current history. Called by Tensor.grad_fn when the version counter moved."""
    base = v._base
    old = v._grad_fn
    if old is None and not base.requires_grad:
        return    # nothing to differentiate (yet): torch leaves the version mark as it is
    size, stride, offset = geometry(v)
    ctx = BackwardContext(dict(size=size, stride=stride, storage_offset=offset,
                               input_geometry=geometry(base)),
                          (True,), ((base.shape, base.dtype, base.device),))
    node = OpNode(AS_STRIDED, ctx, "AsStridedBackward0")
    node.next_functions = (gradient_edge(base),)
    v._view_version = v._version_counter.value
    move_retained_grad(v, old, node, 0)
    v._grad_fn, v._output_nr = node, 0


# --------------------------------------------------------------------------- unfold / diagonal
# torch's Tensor.unfold and Tensor.diagonal are views (new strides over the same storage);
# diag_embed and diagonal_scatter return new tensors.
def _unfold_layout(x, dimension, size, step):
    n = x.dim()
    d = _wrap(dimension, n)
    dim_size = x.shape[d] if n else 1
    dim_stride = x.stride()[d] if n else 1
    if size > dim_size:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {dim_size} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if n == 0:
        return (size,), (1,), x.storage_offset()
    shape, strides = list(x.shape), list(x.stride())
    shape[d] = (dim_size - size) // step + 1
    strides[d] = dim_stride * step
    return tuple(shape) + (size,), tuple(strides) + (dim_stride,), x.storage_offset()


def _unfold_backward(ctx, g):
    """torch's unfold_backward: each window's gradient is added back at the input positions it
    read (windows overlap when step < size), through scatter_add along the unfolded dim."""
    shape = tuple(ctx.input_meta[0][0])
    size, step = ctx.size, ctx.step
    if not shape:        # a 0-d input has one window of size 0 or 1
        return g.sum()
    d = _wrap(ctx.dimension, len(shape))
    n_windows = g.shape[d]
    # bring the window-element dim next to the window dim and merge them: position w * size + k
    moved = permute(g, tuple(range(d + 1)) + (g.dim() - 1,) + tuple(range(d + 1, g.dim() - 1)))
    merged_shape = shape[:d] + (n_windows * size,) + shape[d + 1:]
    merged = reshape(moved, merged_shape)
    pos = (arange(n_windows, device=g.device).unsqueeze(1) * step + arange(size, device=g.device)).reshape(-1)
    index = expand(reshape(pos, (1,) * d + (n_windows * size,) + (1,) * (len(shape) - d - 1)), merged_shape)
    # indexing.py sits above views.py: scatter_add through the Tensor method
    return zeros(shape, dtype=g.dtype, device=g.device).scatter_add(d, index, merged)


UNFOLD = op("unfold", ("x",), view=_unfold_layout, backward=_unfold_backward)


def unfold(x, dimension, size, step):
    """Tensor.unfold(dimension, size, step): a view of every window of ``size`` elements taken
    each ``step`` along ``dimension``, the window's elements in a new last dim."""
    return dispatch(UNFOLD, x, dimension=int(dimension), size=int(size), step=int(step))


def _diagonal_dims(ndim, offset, dim1, dim2):
    d1, d2 = _wrap(dim1, ndim), _wrap(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def _diagonal_geometry(shape, strides, offset_storage, offset, d1, d2):
    """torch's diagonal: the two dims are replaced by one last dim of stride stride1 + stride2."""
    if offset >= 0:
        length = max(min(shape[d1], shape[d2] - offset), 0)
    else:
        length = max(min(shape[d1] + offset, shape[d2]), 0)
    if length > 0:
        offset_storage += offset * strides[d2] if offset >= 0 else -offset * strides[d1]
    keep = [i for i in range(len(shape)) if i not in (d1, d2)]
    return (tuple(shape[i] for i in keep) + (length,),
            tuple(strides[i] for i in keep) + (strides[d1] + strides[d2],), offset_storage)


def _diagonal_layout(x, offset, dim1, dim2):
    d1, d2 = _diagonal_dims(x.dim(), offset, dim1, dim2)
    return _diagonal_geometry(tuple(x.shape), tuple(x.stride()), x.storage_offset(), offset, d1, d2)


def _diagonal_backward(ctx, g):
    base = zeros(ctx.input_meta[0][0], dtype=g.dtype, device=g.device)
    return diagonal_scatter(base, g, ctx.offset, ctx.dim1, ctx.dim2)


DIAGONAL = op("diagonal", ("x",), view=_diagonal_layout, backward=_diagonal_backward)


def diagonal(input, offset=0, dim1=0, dim2=1):
    """torch.diagonal: a view of the diagonal ``offset`` (above the main one when positive) of
    the matrices spanned by dims dim1 and dim2, as a new last dim."""
    return dispatch(DIAGONAL, input, offset=int(offset), dim1=int(dim1), dim2=int(dim2))


def _diagonal_scatter_rule(x, src, offset, dim1, dim2):
    d1, d2 = _diagonal_dims(x.dim(), offset, dim1, dim2)
    expected = _diagonal_geometry(tuple(x.shape), contiguous_strides(x.shape), 0, offset, d1, d2)[0]
    if tuple(src.shape) != tuple(expected):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"[{', '.join(map(str, src.shape))}], slice size = [{', '.join(map(str, expected))}]")
    return Meta(tuple(x.shape), x.dtype)


def _diagonal_scatter_launch(out, x, src, *, compute, offset, dim1, dim2):
    _copy.copy_into(out, x)
    d1, d2 = _diagonal_dims(out.dim(), offset, dim1, dim2)
    shape, strides, off = _diagonal_geometry(tuple(out.shape), tuple(out.stride()), out.storage_offset(),
                                             offset, d1, d2)
    _copy.copy_into(Tensor._make(out._storage, shape, strides, off, out.dtype), src)


def _diagonal_scatter_backward(ctx, g):
    grad_x = diagonal_scatter(g, 0.0 * diagonal(g, ctx.offset, ctx.dim1, ctx.dim2), ctx.offset, ctx.dim1,
                              ctx.dim2) if ctx.needs_input_grad[0] else None
    grad_src = diagonal(g, ctx.offset, ctx.dim1, ctx.dim2) if ctx.needs_input_grad[1] else None
    return grad_x, grad_src


DIAGONAL_SCATTER = op("diagonal_scatter", ("x", "src"), jvp=LINEAR, rule=_diagonal_scatter_rule,
                      reference=_numpy_ref.diagonal_scatter, kernel=_diagonal_scatter_launch,
                      backward=_diagonal_scatter_backward)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """torch.diagonal_scatter: a copy of ``input`` whose diagonal (as torch.diagonal(input,
    offset, dim1, dim2) selects it) holds ``src`` (cast to input's dtype)."""
    if src.dtype is not input.dtype:
        src = _copy.to(src, dtype=input.dtype)
    return dispatch(DIAGONAL_SCATTER, input, src, offset=int(offset), dim1=int(dim1), dim2=int(dim2))


def _diag_embed_dims(x, offset, dim1, dim2):
    """The result's shape and the wrapped dims: x's last dim becomes the diagonal ``offset`` of
    new (n + |offset|)-square matrices spanned by dims dim1 and dim2."""
    d1, d2 = _diagonal_dims(len(x.shape) + 1, offset, dim1, dim2)
    k = x.shape[-1] + abs(int(offset))
    shape = list(x.shape[:-1])
    for i in sorted((d1, d2)):
        shape.insert(i, k)
    return tuple(shape), d1, d2


def _diag_embed_rule(x, offset, dim1, dim2):
    return Meta(_diag_embed_dims(x, offset, dim1, dim2)[0], x.dtype)


def _diag_embed_launch(out, x, *, compute, offset, dim1, dim2):
    _copy.fill_into(out, 0)
    shape, strides, off = _diagonal_geometry(tuple(out.shape), tuple(out.stride()), out.storage_offset(),
                                             offset, _wrap(dim1, out.dim()), _wrap(dim2, out.dim()))
    _copy.copy_into(Tensor._make(out._storage, shape, strides, off, out.dtype), x)


DIAG_EMBED = op("diag_embed", ("x",), jvp=LINEAR, rule=_diag_embed_rule, reference=_numpy_ref.diag_embed,
                kernel=_diag_embed_launch,
                backward=lambda ctx, g: diagonal(g, ctx.offset, ctx.dim1, ctx.dim2))


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """torch.diag_embed: the last dim of ``input`` becomes the diagonal ``offset`` of new matrices
    spanned by dims dim1 and dim2 of the result, zeros elsewhere (a new tensor, not a view)."""
    _, d1, d2 = _diag_embed_dims(input, offset, dim1, dim2)
    return dispatch(DIAG_EMBED, input, offset=int(offset), dim1=d1, dim2=d2)


def movedim(input, source, destination):
    """torch.movedim (moveaxis): the dims ``source`` moved to the positions ``destination``, the
    others keeping their order; a permute view (PermuteBackward0)."""
    pair = (isinstance(source, int), isinstance(destination, int))
    if pair[0] != pair[1] and not all(isinstance(v, (int, tuple, list)) for v in (source, destination)):
        raise TypeError("movedim() received an invalid combination of arguments")
    src = [source] if pair[0] else [int(d) for d in source]
    dst = [destination] if pair[1] else [int(d) for d in destination]
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain the "
                           f"same number of dims as destination ({dst} dims)")
    n = input.dim()
    wsrc, wdst = [_wrap(d, n) for d in src], [_wrap(d, n) for d in dst]
    for name, wrapped, given in (("source", wsrc, src), ("destination", wdst, dst)):
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({given})")
    if n == 0:
        return permute(input, ())
    order = [None] * n
    for s, d in zip(wsrc, wdst):
        order[d] = s
    rest = iter(d for d in range(n) if d not in wsrc)
    return permute(input, tuple(o if o is not None else next(rest) for o in order))


moveaxis = movedim
