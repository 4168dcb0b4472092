"""Joining, splitting and triangular ops: cat/stack, split/chunk/tensor_split, flip, tril/triu.

cat and stack are table entries whose inputs are the tensors themselves (a variable number of
positional arguments); their backward hands each input its narrow/select view of the gradient.
split and chunk return views (one view entry per piece, named as torch names the node).
flip returns a copy: tritensor has no negative strides.
"""
from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.composite import named_composite
from ..backends import numpy_ref
from ..backends.triton import join as triton_join
from ..memory_formats import contiguous_format
from ..tensor import Tensor
from . import copy as _copy, views as _views
from .dispatch import dispatch, dispatch_inplace
from .table import LINEAR, Meta, op


def _wrap(dim, ndim):
    return _views._wrap(dim, ndim)


def _sizes(shape):
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def _check_tensor_list(tensors, fn):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fn}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return tuple(tensors)


# --------------------------------------------------------------------------- cat
def _skipped(t):
    """torch's legacy rule: a 1-D tensor with no elements is left out of cat's shape checks."""
    return t.dim() == 1 and t.numel() == 0


def _cat_shape(tensors, dim):
    """(output shape, wrapped dim) with torch's checks; dim stays as given if every input is skipped."""
    for i, t in enumerate(tensors):
        if t.dim() == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    valid = [i for i, t in enumerate(tensors) if not _skipped(t)]
    if not valid:
        return (0,), dim
    first = tensors[valid[0]]
    dim = _wrap(dim, first.dim())
    total = 0
    for i in valid:
        t = tensors[i]
        if t.dim() != first.dim():
            raise RuntimeError(f"Tensors must have same number of dimensions: got {first.dim()} and {t.dim()}")
        for d in range(first.dim()):
            if d != dim and t.shape[d] != first.shape[d]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size {first.shape[d]} "
                    f"but got size {t.shape[d]} for tensor number {i} in the list.")
        total += t.shape[dim]
    return tuple(first.shape[:dim]) + (total,) + tuple(first.shape[dim + 1:]), dim


def _cat_rule(*tensors, dim):
    shape, _ = _cat_shape(tensors, dim)
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = _dt.promote_types(dtype, t.dtype)
    return Meta(shape, dtype)


def _cat_launch(out, *tensors, compute, dim):
    triton_join.cat(out, tensors, dim)


def _cat_backward(ctx, g):
    """Each input's gradient is its narrow view of g (a skipped input gets an empty one)."""
    grads, start = [], 0
    for need, (shape, _, _) in zip(ctx.needs_input_grad, ctx.input_meta):
        if len(shape) == 1 and shape[0] == 0:
            grads.append(g.new_zeros((0,)) if need else None)
            continue
        size = shape[ctx.dim]
        grads.append(_views.narrow(g, ctx.dim, start, size) if need else None)
        start += size
    return tuple(grads)


CAT = op("cat", ("tensors",), jvp=LINEAR, rule=_cat_rule, reference=numpy_ref.cat, kernel=_cat_launch,
         backward=_cat_backward)


def cat(tensors, dim=0, *, out=None):
    tensors = _check_tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    if out is not None:
        raise NotImplementedError("tritensor: cat(out=...) is not supported")
    _, dim = _cat_shape(tensors, dim)
    return dispatch(CAT, *tensors, dim=dim)


concat = concatenate = cat


# --------------------------------------------------------------------------- stack
def _stack_rule(*tensors, dim):
    shape = tuple(tensors[0].shape)
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = _dt.promote_types(dtype, t.dtype)
    return Meta(shape[:dim] + (len(tensors),) + shape[dim:], dtype)


def _stack_launch(out, *tensors, compute, dim):
    triton_join.stack(out, tensors, dim)


def _stack_backward(ctx, g):
    return tuple(_views.select(g, ctx.dim, i) if need else None
                 for i, need in enumerate(ctx.needs_input_grad))


STACK = op("stack", ("tensors",), jvp=LINEAR, rule=_stack_rule, reference=numpy_ref.stack, kernel=_stack_launch,
           backward=_stack_backward)


def stack(tensors, dim=0, *, out=None):
    tensors = _check_tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    if out is not None:
        raise NotImplementedError("tritensor: stack(out=...) is not supported")
    dim = _wrap(dim, tensors[0].dim() + 1)
    for i, t in enumerate(tensors[1:], 1):
        if tuple(t.shape) != tuple(tensors[0].shape):
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {_sizes(tensors[0].shape)} at entry 0 "
                f"and {_sizes(t.shape)} at entry {i}")
    return dispatch(STACK, *tensors, dim=dim)


def _atleast(t, n):
    if t.dim() >= n:
        return t
    if n == 1 or t.dim() == 0:
        return _views.reshape(t, (1,) * n)
    return _views.unsqueeze(t, 0)


def hstack(tensors):
    tensors = [_atleast(t, 1) for t in _check_tensor_list(tensors, "hstack")]
    if not tensors:
        raise RuntimeError("hstack expects a non-empty TensorList")
    return cat(tensors, 0 if tensors[0].dim() == 1 else 1)


def vstack(tensors):
    tensors = [_atleast(t, 2) for t in _check_tensor_list(tensors, "vstack")]
    if not tensors:
        raise RuntimeError("vstack expects a non-empty TensorList")
    return cat(tensors, 0)


row_stack = vstack


# --------------------------------------------------------------------------- split / chunk (views)
def _split_layout(x, dim, start, length, with_sizes):
    return _views._basic_index_layout(x, (slice(None),) * dim + (slice(start, start + length),))


def _split_backward(ctx, g):
    index = (slice(None),) * ctx.dim + (slice(ctx.start, ctx.start + ctx.length),)
    return dispatch(_views.SLICE_BACKWARD, g, input_shape=ctx.input_meta[0][0], index=index)


SPLIT = op("split", ("x",), view=_split_layout, backward=_split_backward,
           grad_name=lambda args, attrs: "SplitWithSizesBackward0" if attrs["with_sizes"] else "SplitBackward0")


def _pieces(x, dim, sizes, with_sizes):
    out, start = [], 0
    for s in sizes:
        out.append(dispatch(SPLIT, x, dim=dim, start=start, length=s, with_sizes=with_sizes))
        start += s
    return tuple(out)


def split(tensor, split_size_or_sections, dim=0):
    if tensor.dim() == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    dim = _wrap(dim, tensor.dim())
    size = tensor.shape[dim]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [int(s) for s in split_size_or_sections]
        if any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, "
                               f"but got split_sizes={_sizes(sizes)}")
        if sum(sizes) != size:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at "
                f"dimension {dim}), but got split_sizes={_sizes(sizes)}")
        return _pieces(tensor, dim, sizes, True)
    step = int(split_size_or_sections)
    if step < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
    if step == 0 and size != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
    n = 1 if step == 0 else max(-(-size // step), 1)
    sizes = [step] * (n - 1) + [size - step * (n - 1)]
    return _pieces(tensor, dim, sizes, False)


def split_with_sizes(tensor, split_sizes, dim=0):
    return split(tensor, list(split_sizes), dim)


def chunk(tensor, chunks, dim=0):
    if tensor.dim() == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    dim = _wrap(dim, tensor.dim())
    size = tensor.shape[dim]
    step = (size + chunks - 1) // chunks
    if step == 0 and size == 0:   # torch keeps the number of (empty) chunks here
        return _pieces(tensor, dim, [0] * chunks, True)
    return split(tensor, step, dim)


def tensor_split(input, indices_or_sections, dim=0):
    """Views, as torch's tensor_split: n sections (the first size % n one longer) or split points."""
    if input.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    dim = _wrap(dim, input.dim())
    size = input.shape[dim]
    if isinstance(indices_or_sections, Tensor):
        indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, (list, tuple)):
        bounds = [0] + [min(max(int(i) + (size if int(i) < 0 else 0), 0), size) for i in indices_or_sections]
        bounds.append(size)
        pieces = []
        for a, b in zip(bounds[:-1], bounds[1:]):
            pieces.append(_views.narrow(input, dim, a, max(b, a) - a))
        return tuple(pieces)
    n = int(indices_or_sections)
    if n <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {n}")
    base, extra = divmod(size, n)
    pieces, start = [], 0
    for i in range(n):
        length = base + (1 if i < extra else 0)
        pieces.append(_views.narrow(input, dim, start, length))
        start += length
    return tuple(pieces)


# --------------------------------------------------------------------------- flip
def _flip_rule(x, dims):
    return Meta(tuple(x.shape), x.dtype)


def _flip_launch(out, x, *, compute, dims):
    triton_join.flip(out, x, dims)


# torch allocates flip's output like its input (preserve_format)
FLIP = op("flip", ("x",), jvp=LINEAR, rule=_flip_rule, layout="preserve", reference=numpy_ref.flip, kernel=_flip_launch,
          backward=lambda ctx, g: flip(g, ctx.dims))


def flip(input, *args, dims=None):
    """torch.flip(input, dims) / Tensor.flip(*dims); ``dims=`` as a keyword too."""
    if dims is not None:
        if args:
            raise TypeError("flip() got multiple values for argument 'dims'")
        args = (dims,)
    if not args:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    dims = args
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = tuple(dims[0])
    n = input.dim()
    wrapped = tuple(_wrap(int(d), n) for d in dims)
    for i, d in enumerate(wrapped):
        if d in wrapped[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    if n == 0:
        wrapped = ()
    return dispatch(FLIP, input, dims=tuple(sorted(wrapped)))


def fliplr(input):
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


# --------------------------------------------------------------------------- tril / triu
def _tri_rule(x, diagonal):
    return Meta(tuple(x.shape), x.dtype)


def _tri_launch(upper):
    def launch(out, x, *, compute, diagonal):
        triton_join.tri(out, x, diagonal, upper)
    return launch


TRIL = op("tril", ("x",), jvp=LINEAR, rule=_tri_rule, reference=numpy_ref.tril, kernel=_tri_launch(False),
          backward=lambda ctx, g: tril(g, ctx.diagonal))
TRIU = op("triu", ("x",), jvp=LINEAR, rule=_tri_rule, reference=numpy_ref.triu, kernel=_tri_launch(True),
          backward=lambda ctx, g: triu(g, ctx.diagonal))


def _check_tri(name, x):
    if x.dim() < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


def tril(input, diagonal=0):
    _check_tri("tril", input)
    return dispatch(TRIL, input, diagonal=int(diagonal))


def triu(input, diagonal=0):
    _check_tri("triu", input)
    return dispatch(TRIU, input, diagonal=int(diagonal))


def tril_(input, diagonal=0):
    _check_tri("tril", input)
    return dispatch_inplace(TRIL, input, diagonal=int(diagonal))


def triu_(input, diagonal=0):
    _check_tri("triu", input)
    return dispatch_inplace(TRIU, input, diagonal=int(diagonal))


__all__ = ["cat", "concat", "concatenate", "stack", "hstack", "vstack", "row_stack", "split",
           "split_with_sizes", "chunk", "tensor_split", "flip", "fliplr", "flipud", "tril", "triu",
           "tril_", "triu_"]


def repeat(input, *sizes):
    """Tensor.repeat: the tensor tiled ``sizes`` times along each dim (leading new dims for extra
    sizes); one RepeatBackward0 node, whose gradient sums the tiles."""
    sizes = _views._shape_args(sizes)
    if len(sizes) < input.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    padded = (1,) * (len(sizes) - input.dim()) + tuple(input.shape)
    target = [s * r for s, r in zip(padded, sizes)]
    for t in target:
        if t < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {t}: {target}")
    return named_composite("RepeatBackward0", _repeat, input, tuple(sizes), padded)


def _repeat(x, sizes, padded):
    # (1, s0, 1, s1 ...) expanded to (r0, s0, r1, s1 ...), then copied once into a new contiguous
    # tensor, as torch's repeat always is: a reshape alone may return a view, with stride 0 over
    # the tiles of a new leading dim (an in-place op on it then fails on the overlap) or, for
    # repeats of 1, aliasing the input
    interleaved = tuple(v for s in padded for v in (1, s))
    tiled = tuple(v for r, s in zip(sizes, padded) for v in (r, s))
    expanded = x.reshape(interleaved).expand(*tiled)
    return _copy.clone(expanded, memory_format=contiguous_format).view(tuple(r * s for r, s in zip(sizes, padded)))


def roll(input, shifts, dims=None):
    """torch.roll: elements shifted along ``dims`` and wrapped around; with no dims the flattened
    tensor is rolled and the shape restored. One RollBackward0 node."""
    shifts = [int(shifts)] if isinstance(shifts, int) else [int(s) for s in shifts]
    dims = [] if dims is None else ([int(dims)] if isinstance(dims, int) else [int(d) for d in dims])
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:
        return named_composite("RollBackward0", _roll_flat, input, shifts[0])
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    dims = [_wrap(d, input.dim()) for d in dims]
    return named_composite("RollBackward0", _roll, input, tuple(shifts), tuple(dims))


def _roll_flat(x, shift):
    return _roll(x.flatten(), (shift,), (0,)).view(tuple(x.shape))


def _roll(x, shifts, dims):
    out = x
    for shift, d in zip(shifts, dims):
        size = out.shape[d]
        s = shift % size if size else 0
        if s:      # the last s entries first, then the rest
            out = cat([_views.narrow(out, d, size - s, s), _views.narrow(out, d, 0, size - s)], d)
    return out if out is not x else x.clone()      # always a new tensor, as torch's
