"""Shape and construction composites: broadcast_to/broadcast_tensors, atleast_1d/2d/3d,
hsplit/vsplit/dsplit, column_stack/dstack, ravel, tile, rot90, kron, block_diag, meshgrid,
cartesian_prod, combinations, diag/diagflat, repeat_interleave, unsafe_split/unsafe_chunk.

Every op here is built from existing views and ops (no kernel of its own), as torch builds
them in ATen (TensorShape.cpp, LinearAlgebra.cpp, Repeat.cpp): the views stay views, the
autograd graph is the one torch records (ExpandBackward0, SliceBackward0 ...), and where torch
records one node for a composite (Rot90Backward0, BlockDiagBackward0) ``named_composite`` gives
it that node. Argument errors are torch's, word for word.
"""
from __future__ import annotations

import itertools
import warnings

from .. import dtypes as _dt
from ..autograd.composite import named_composite
from ..backends.base import backend_for
from ..memory_formats import contiguous_format
from ..tensor import Tensor
from . import copy as _copy
from . import joining as _join
from . import views as _views
from ._checks import check_tensor
from ._shapes import broadcast_shapes, wrap_dim
from .creation import empty, full, tensor, zeros
from .dispatch import dispatch
from .elementwise import mul
from .indexing import index_select
from .scan import cumsum
from .surface import OUT_RULES, declare
from .table import op
from .view_copies import diagonal_copy


def _sizes(shape):
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def _int_tuple(name, arg, value, position):
    """torch's parser for an ``int[]`` argument given as a tuple/list (a bare int refused)."""
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be tuple of ints, "
                        f"not {type(value).__name__}")
    return tuple(int(v) for v in value)


def _tensors_arg(tensors):
    """The tensors of a variadic ``f(*tensors)`` that also takes one list or tuple."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(tensors[0])
    return tuple(tensors)


# --------------------------------------------------------------------------- broadcasting
def broadcast_to(input, size):
    """torch.broadcast_to: ``input.expand(size)`` (a view, ExpandBackward0)."""
    check_tensor("broadcast_to", input)
    return _views.expand(input, _int_tuple("broadcast_to", "size", size, 2))


def _broadcast_to_method(self, *size, **kwargs):
    """Tensor.broadcast_to: the size as one sequence, as ints (``x.broadcast_to(2, 3)``, which
    torch.broadcast_to refuses), or as ``size=``; torch's TypeErrors otherwise."""
    if kwargs:
        if size or set(kwargs) != {"size"}:
            raise TypeError(f"broadcast_to() got an unexpected keyword argument "
                            f"'{next(k for k in kwargs if k != 'size' or size)}'")
        size = (kwargs["size"],)
    if not size:
        raise TypeError('broadcast_to() missing 1 required positional arguments: "size"')
    if len(size) > 1:
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in size):
            raise TypeError(f"broadcast_to() takes 1 positional argument but {len(size)} were given")
        return broadcast_to(self, size)
    return broadcast_to(self, size[0])


def broadcast_tensors(*tensors):
    """torch.broadcast_tensors: every tensor expanded to the common shape; one whose shape already
    is that shape is returned itself (torch's expand_outplace)."""
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    shape = broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(t if tuple(t.shape) == shape else _views.expand(t, shape) for t in tensors)


# --------------------------------------------------------------------------- atleast_nd
def _atleast1(t):
    return _views.reshape(t, (1,)) if t.dim() == 0 else t


def _atleast2(t):
    if t.dim() == 0:
        return _views.reshape(t, (1, 1))
    return _views.unsqueeze(t, 0) if t.dim() == 1 else t


def _atleast3(t):
    if t.dim() == 0:
        return _views.reshape(t, (1, 1, 1))
    if t.dim() == 1:
        return _views.unsqueeze(_views.unsqueeze(t, 0), -1)
    return _views.unsqueeze(t, -1) if t.dim() == 2 else t


def _atleast(name, one, tensors):
    """torch.atleast_nd(*tensors): one tensor gives one result, a list/tuple (or several
    tensors) a tuple; a tensor with enough dims is returned itself."""
    if len(tensors) == 1:
        tensors = tensors[0]
    if isinstance(tensors, Tensor):
        return one(tensors)
    if not isinstance(tensors, (list, tuple)) or not all(isinstance(t, Tensor) for t in tensors):
        got = type(tensors).__name__
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected "
                        f"one of:\n * (Tensor input)\n * (tuple of Tensors tensors)\n")
    return tuple(one(t) for t in tensors)


def atleast_1d(*tensors):
    return _atleast("atleast_1d", _atleast1, tensors)


def atleast_2d(*tensors):
    return _atleast("atleast_2d", _atleast2, tensors)


def atleast_3d(*tensors):
    return _atleast("atleast_3d", _atleast3, tensors)


# --------------------------------------------------------------------------- h/v/dsplit
def _directional_split(name, input, indices_or_sections, min_dim, dim):
    if isinstance(indices_or_sections, (str, float, complex)) or indices_or_sections is None:
        got = type(indices_or_sections).__name__ if indices_or_sections is not None else "NoneType"
        why = f"      didn't match because some of the arguments have invalid types: (Tensor, !{got}!)\n"
        raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, {got}), but expected "
                        f"one of:\n * (Tensor input, int sections)\n{why} * (Tensor input, tuple of ints indices)\n{why}")
    if input.dim() < min_dim:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} dimension, but got a tensor "
                           f"with {input.dim()} dimensions!")
    if not isinstance(indices_or_sections, (list, tuple, Tensor)):
        sections = int(indices_or_sections)
        size = input.shape[dim]
        if sections == 0 or size % sections != 0:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                               f"dimension {size} is not divisible by the split_size {sections}!")
    return _join.tensor_split(input, indices_or_sections, dim)


def hsplit(input, indices_or_sections):
    """torch.hsplit: tensor_split along dim 1 (dim 0 of a 1-D tensor); sections must divide it."""
    return _directional_split("hsplit", input, indices_or_sections, 1, 0 if input.dim() == 1 else 1)


def vsplit(input, indices_or_sections):
    return _directional_split("vsplit", input, indices_or_sections, 2, 0)


def dsplit(input, indices_or_sections):
    return _directional_split("dsplit", input, indices_or_sections, 3, 2)


# --------------------------------------------------------------------------- column_stack / dstack
def column_stack(tensors):
    """torch.column_stack: 0-d and 1-d tensors become columns (numel, 1), then hstack."""
    tensors = _join._check_tensor_list(tensors, "column_stack")
    if not tensors:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    return _join.hstack([_views.reshape(t, (t.numel(), 1)) if t.dim() <= 1 else t for t in tensors])


def dstack(tensors):
    """torch.dstack: atleast_3d, then cat along dim 2."""
    tensors = _join._check_tensor_list(tensors, "dstack")
    if not tensors:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return _join.cat([_atleast3(t) for t in tensors], 2)


def ravel(input):
    """torch.ravel: ``input.contiguous().view(-1)`` (a view of a contiguous input, else of a copy)."""
    check_tensor("ravel", input)
    return _views.view(_copy.contiguous(input), -1)


# --------------------------------------------------------------------------- tile / rot90 / kron
def tile(input, *dims):
    """torch.tile: repeat, with dims padded by leading 1s up to input's rank (numpy.tile);
    Tensor.tile also takes the dims as separate ints."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        reps = tuple(int(d) for d in dims[0])
    elif len(dims) == 1 and not isinstance(dims[0], int):
        raise TypeError(f"tile(): argument 'dims' (position 2) must be tuple of ints, not {type(dims[0]).__name__}")
    else:
        reps = tuple(int(d) for d in dims)
    pad = input.dim() - len(reps)
    if pad > 0:
        reps = (1,) * pad + reps
    return _join.repeat(input, reps)


def _tile_function(input, dims):
    """torch.tile(input, dims): dims must be a tuple or list (a bare int is torch's TypeError)."""
    return tile(input, _int_tuple("tile", "dims", dims, 2))


def rot90(input, k=1, dims=(0, 1)):
    """torch.rot90: rotate by 90 degrees k times in the plane of ``dims`` (from the first dim
    towards the second): a flip and a transposed view, one Rot90Backward0 node."""
    check_tensor("rot90", input)
    dims = tuple(int(d) for d in dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    n = input.dim()
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    d0, d1 = wrap_dim(dims[0], n), wrap_dim(dims[1], n)
    if d0 == d1:      # (torch compares the wrapped dims and prints the given ones)
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    return named_composite("Rot90Backward0", _rot90, input, (int(k) % 4 + 4) % 4, d0, d1)


def _rot90(x, k, d0, d1):
    if k == 1:
        return _views.transpose(_join.flip(x, (d1,)), d0, d1)
    if k == 2:
        return _join.flip(x, (d0, d1))
    if k == 3:
        return _views.transpose(_join.flip(x, (d0,)), d0, d1)
    return _copy.clone(x, memory_format=contiguous_format)


def kron(input, other):
    """torch.kron: the Kronecker product, as ATen's KronImpl: input viewed as (a0, 1, a1, 1 ...),
    other as (1, b0, 1, b1 ...) (the smaller rank padded with leading 1s), one broadcast multiply
    (dtype promoted as mul) and a view to (a0*b0, a1*b1 ...). torch 2.13 raises "view size is not
    compatible" when the product's layout cannot be viewed so (a transposed operand); tritensor
    copies it to a contiguous layout first and returns the product."""
    check_tensor("kron", input)
    check_tensor("kron", other, "other", 2)
    nd = max(input.dim(), other.dim())
    a = (1,) * (nd - input.dim()) + tuple(input.shape)
    b = (1,) * (nd - other.dim()) + tuple(other.shape)
    a_view = _views.unsafe_view(input, tuple(v for s in a for v in (s, 1)))
    b_view = _views.unsafe_view(other, tuple(v for s in b for v in (1, s)))
    product = mul(a_view, b_view)
    shape = tuple(x * y for x, y in zip(a, b))
    if _views.view_strides(tuple(product.shape), product.stride(), shape) is None:
        product = _copy.contiguous(product)
    return _views.unsafe_view(product, shape)


# --------------------------------------------------------------------------- block_diag
def block_diag(*tensors):
    """torch.block_diag: the tensors (0-d as 1x1, 1-d as a row) as the diagonal blocks of one
    matrix of their promoted dtype, zeros elsewhere; one BlockDiagBackward0 node."""
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    if not tensors:
        return empty(1, 0)
    device = tensors[0].device
    for i, t in enumerate(tensors):
        if t.device != device:
            raise RuntimeError(f"torch.block_diag: input tensors must all be on the same device. Input 0 is on "
                               f"device {device} and input {i} is on device {t.device}")
    for i, t in enumerate(tensors):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.dim()} dimensions")
    dtype = _dt.result_type(*tensors)
    return named_composite("BlockDiagBackward0", _block_diag, *tensors, dtype=dtype)


def _block_diag(*tensors, dtype):
    blocks = [t if t.dim() == 2 else _views.expand(t, (1, t.numel())) for t in tensors]
    rows = sum(b.shape[0] for b in blocks)
    cols = sum(b.shape[1] for b in blocks)
    out = zeros(rows, cols, dtype=dtype, device=tensors[0].device)
    r = c = 0
    for b in blocks:
        h, w = b.shape
        if h and w:
            _views.narrow(_views.narrow(out, 0, r, h), 1, c, w).copy_(b)
        r, c = r + h, c + w
    return out


# --------------------------------------------------------------------------- meshgrid & co
def _print_tensor(t):
    """The tensor as ATen's operator<< ends it (the values are left out): its type and sizes."""
    kind = backend_for(t.device).torch_name("CPU", "CUDA")
    return f"[ {kind}{_dt.type_name(t.dtype)}Type{{{','.join(str(s) for s in t.shape)}}} ]"


def meshgrid(*tensors, indexing=None):
    """torch.meshgrid: each 0-d/1-d tensor viewed along its own dim and expanded to the grid
    (views, ExpandBackward0); indexing "ij" (the default, with torch's warning when not given)
    or "xy" (the first two grids swapped)."""
    tensors = _tensors_arg(tensors)
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
                      "argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    return _meshgrid(tensors, indexing)


def _meshgrid(tensors, indexing):
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for a, b in zip(tensors[:-1], tensors[1:]):
        if a.dtype is not b.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if a.device != b.device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    refs = list(tensors)
    swap = False
    if indexing == "xy":
        swap = len(refs) >= 2
        if swap:
            refs[0], refs[1] = refs[1], refs[0]
    elif indexing != "ij":
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    for t in refs:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
                               f"{_print_tensor(t)}")
    shape = tuple(t.numel() for t in refs)
    grids = []
    for i, t in enumerate(refs):
        view_shape = [1] * len(refs)
        view_shape[i] = -1
        grids.append(_views.expand(_views.view(t, tuple(view_shape)), shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def _check_vector(t):
    if t.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {_sizes(t.shape)}")


def cartesian_prod(*tensors):
    """torch.cartesian_prod: the rows of every combination (itertools.product order) of the 1-D
    tensors' elements: their "ij" meshgrid flattened and stacked along dim 1."""
    for t in tensors:
        check_tensor("cartesian_prod", t)
        _check_vector(t)
    if len(tensors) == 1:
        return tensors[0]
    grids = _meshgrid(tensors, "ij")
    return _join.stack([_views.flatten(g) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    """torch.combinations: the length-r combinations of a 1-D tensor's elements (as
    itertools.combinations / combinations_with_replacement order them), one per row. The index
    of each element is computed from the length alone; the values are gathered by index_select
    per column and stacked (StackBackward0, as torch's)."""
    check_tensor("combinations", input)
    if not isinstance(r, int) or isinstance(r, bool):
        raise TypeError(f"combinations(): argument 'r' must be int, not {type(r).__name__}")
    _check_vector(input)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return empty(0, dtype=input.dtype, device=input.device)
    n = input.shape[0]
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(range(n), r))
    columns = []
    for j in range(r):
        index = _index_tensor([row[j] for row in rows], input.device)
        columns.append(index_select(input, 0, index))
    return _join.stack(columns, 1)


def _index_tensor(values, device):
    return tensor(values, dtype=_dt.int64, device=device) if values else empty(0, dtype=_dt.int64, device=device)


# --------------------------------------------------------------------------- diag / diagflat
def diag(input, diagonal=0):
    """torch.diag: a 1-D input becomes the diagonal ``diagonal`` of a square matrix
    (diag_embed), a 2-D input gives a copy of that diagonal (diagonal_copy)."""
    check_tensor("diag", input)
    if input.dim() not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.dim()}D")
    if input.dim() == 1:
        return _views.diag_embed(input, diagonal, 0, 1)
    return diagonal_copy(input, diagonal)


def diagflat(input, offset=0):
    """torch.diagflat: the flattened input on the diagonal ``offset`` of a square matrix."""
    check_tensor("diagflat", input)
    return diag(_views.view(_copy.contiguous(input), -1), offset)


# --------------------------------------------------------------------------- repeat_interleave
def _repeats_indices(repeats, output_size=None):
    """torch.repeat_interleave(repeats): index i repeated repeats[i] times, in repeats' dtype.
    Computed on the device: the running sum of repeats marks where each index starts; a
    scatter_add of ones at those starts, summed along, gives the index at every position."""
    if repeats.dtype not in (_dt.int64, _dt.int32):
        name = backend_for(repeats.device).torch_name("repeat_interleave_cpu", "repeat_interleave_cuda")
        raise NotImplementedError(f'"{name}" not implemented for \'{_dt.type_name(repeats.dtype)}\'')
    if repeats.dim() != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    n = repeats.shape[0]
    if n == 0:
        return empty(0, dtype=repeats.dtype, device=repeats.device)
    ends = cumsum(repeats, 0, dtype=repeats.dtype)
    total = int(ends[-1].item())
    if output_size is None:
        if bool((repeats < 0).any().item()):
            raise RuntimeError("repeats can not be negative")
    elif int(output_size) != total:
        raise RuntimeError("allocated size does not match required size")
    marks = zeros(total + 1, dtype=repeats.dtype, device=repeats.device)
    if n > 1:
        starts = _views.narrow(ends, 0, 0, n - 1).to(_dt.int64)
        ones = full((n - 1,), 1, dtype=repeats.dtype, device=repeats.device)
        marks = marks.scatter_add(0, starts, ones)
    return cumsum(_views.narrow(marks, 0, 0, total), 0, dtype=repeats.dtype)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """torch.repeat_interleave(input, repeats, dim=None, *, output_size=None): each element (of
    the flattened input when dim is None) repeated; an int repeats is an expand and a copy
    (ViewBackward0), a tensor of repeats an index_select (IndexSelectBackward0). With only a
    tensor of repeats: the indices ``i`` repeated ``repeats[i]`` times."""
    if repeats is None:
        check_tensor("repeat_interleave", input, "repeats")
        return _repeats_indices(input, output_size)
    check_tensor("repeat_interleave", input)
    if isinstance(repeats, Tensor):
        x = input
        if dim is None:
            x, d = _views.flatten(input), 0
        else:
            d = wrap_dim(int(dim), input.dim())
        size = x.shape[d] if x.dim() else 1
        if repeats.dim() == 0 or (repeats.dim() == 1 and repeats.shape[0] == 1):
            repeats = _views.expand(_views.reshape(repeats, (1,)), (size,))
        elif repeats.dim() == 1:
            if repeats.shape[0] != size:
                raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                                   f"{repeats.shape[0]} and input.size({d}) = {size}")
        else:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        return index_select(x, d, _repeats_indices(repeats, output_size))
    repeats = int(repeats)
    x = input if dim is not None else _views.flatten(input)
    d = wrap_dim(0 if dim is None else int(dim), input.dim())
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    shape = list(x.shape)
    expected = (shape[d] if shape else 1) * repeats
    if output_size is not None and int(output_size) != expected:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {expected} but got {output_size}")
    grown = _views.unsqueeze(x, d + 1)
    target = list(grown.shape)
    target[d + 1] = repeats
    if shape:
        shape[d] *= repeats
    else:
        shape = [repeats]
    copied = _copy.clone(_views.expand(grown, tuple(target)), memory_format=contiguous_format)
    return _views.view(copied, tuple(shape))


# --------------------------------------------------------------------------- unsafe_split / unsafe_chunk
def _unsafe_name(args, attrs):
    return "UnsafeSplitWithSizesBackward0" if attrs["with_sizes"] else "UnsafeSplitBackward0"


# split's pieces under torch's unsafe names: not tracked as views of the input (no _base), so an
# in-place op on a piece is an ordinary in-place op (torch's unsafe_split)
UNSAFE_SPLIT = op("unsafe_split", ("x",), view=_join._split_layout, backward=_join._split_backward,
                  grad_name=_unsafe_name)


def _unsafe(pieces_of, tensor, *args):
    pieces = []
    for kw in pieces_of(tensor, *args):
        piece = dispatch(UNSAFE_SPLIT, tensor, **kw)
        piece._base = None
        piece._view_version = None
        pieces.append(piece)
    return tuple(pieces)


def _split_pieces(tensor, sizes, dim, with_sizes):
    start = 0
    for s in sizes:
        yield dict(dim=dim, start=start, length=s, with_sizes=with_sizes)
        start += s


def unsafe_split(tensor, split_size, dim=0):
    """torch.unsafe_split: split's pieces, not tracked as views (UnsafeSplitBackward0)."""
    pieces = _join.split(tensor, int(split_size), dim)     # torch's checks; the sizes
    d = wrap_dim(dim, tensor.dim())
    return _unsafe(lambda t: _split_pieces(t, [p.shape[d] for p in pieces], d, False), tensor)


def unsafe_split_with_sizes(tensor, split_sizes, dim=0):
    _join.split(tensor, list(split_sizes), dim)
    d = wrap_dim(dim, tensor.dim())
    return _unsafe(lambda t: _split_pieces(t, [int(s) for s in split_sizes], d, True), tensor)


def unsafe_chunk(tensor, chunks, dim=0):
    """torch.unsafe_chunk: chunk's pieces through unsafe_split / unsafe_split_with_sizes."""
    if tensor.dim() == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, tensor.dim())
    size = tensor.shape[d]
    step = (size + chunks - 1) // chunks
    if step == 0 and size == 0:
        return unsafe_split_with_sizes(tensor, [0] * chunks, d)
    return unsafe_split(tensor, step, d)


# --------------------------------------------------------------------------- declarations
declare("broadcast_to", broadcast_to, method=_broadcast_to_method)
declare("broadcast_tensors", broadcast_tensors, method=False)
for _name in ("atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "cartesian_prod", "combinations",
              "meshgrid"):
    declare(_name, globals()[_name], method=False)
declare("column_stack", column_stack, method=False, out="cat")
declare("dstack", dstack, method=False, out="cat")
for _name in ("hsplit", "vsplit", "dsplit", "ravel", "rot90", "diagflat", "repeat_interleave", "unsafe_split",
              "unsafe_split_with_sizes", "unsafe_chunk"):
    declare(_name, globals()[_name])
declare("tile", _tile_function, method=tile)
declare("kron", kron, out="cast")


def _diag_out(name, result, out):
    if not _dt.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"diag: result type {_dt.type_name(result.dtype)} can't be cast to the desired out= "
                           f"type {_dt.type_name(out.dtype)}")
    OUT_RULES["exact"](name, result, out)


declare("diag", diag, out=_diag_out)
