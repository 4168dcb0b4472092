"""Indexing and scatter, issue 21.4: index_add, index_copy, index_fill, index_reduce (and their
in-place forms), masked_scatter, put, take_along_dim, select_scatter, slice_scatter,
as_strided_scatter, fill_diagonal_, tril_indices/triu_indices, unravel_index, nonzero_static.

index_add/index_copy/index_fill/index_reduce are table entries whose cuda kernel is
deterministic where torch's CUDA index_add is not (float atomics): the index is sorted stably on
the device and each destination index folds its segment of source slices in index order
(backends/triton/index.py index_segments; kernels/index.py index_segment_kernel). Repeated
indices: summed/multiplied ... in index order, and index_copy keeps the last write (torch leaves
that unspecified). The NumPy references are backends/numpy_index.py. Backward rules are torch's
(derivatives.yaml: index_reduce_backward ...), written in tritensor ops so they differentiate again.

masked_scatter is an entry computed with ops (a cumsum of the mask picks each source element),
so masked_scatter_ records MaskedScatterBackward0 in place; select/slice_scatter are entries as
diagonal_scatter is (ops/views.py); the rest are composites of existing ops.

Index bounds: ops/indexing.py check_range (on cuda a device-side assert, raised at the next sync;
the op indexes with the check's clamped copy, so no kernel goes outside a storage).
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np

from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..autograd.graph import rename_node
from ..backends import numpy_index
from ..backends.triton import index as ti
from ..tensor import Tensor
from . import copy as _copy
from . import elementwise as _ew
from . import pointwise as _pw
from . import views as _views
from ._checks import check_tensor
from ._overlap import geometry
from ._shapes import broadcast_shapes, wrap_dim
from .creation import full, tensor, zeros, zeros_like
from .dispatch import dispatch, dispatch_inplace
from .indexing import (_index_attrs, _saved_index, check_range, gather, index_put, index_put_, index_select,
                       masked_select, nonzero)
from .joining import cat
from .reduce import sum as _sum
from .reduce import sum_to_size
from .scan import cumsum
from .surface import declare
from .table import FROM_BACKWARD, LINEAR, Meta, op


def _shape_str(shape):
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def _same_rule(x, *_, **__):
    return Meta(tuple(x.shape), x.dtype, _dt.compute_dtype(x.dtype))


def _as_1d(t):
    return _views.reshape(t, (1,)) if t.dim() == 0 else t


def _finish(input, out, inplace):
    """A result computed on 1-d stand-ins of 0-d operands, back to input's shape (in place:
    written into input)."""
    out = _views.reshape(out, tuple(input.shape))
    return _copy.copy_(input, out) if inplace else out


# =========================================================================== index_add & co.
def _segments_launcher(mode):
    def launch(out, x, src, *, compute, dim, index, alpha=1, reduce=None, include_self=True, **_):
        if mode == "fill":
            ti.index_segments(out, x, None, src, dim, index, "fill", compute=compute)
        else:
            ti.index_segments(out, x, src, None, dim, index, reduce or mode, include_self, alpha, compute)
    return launch


def _index_add_backward(ctx, g):
    """torch: self gets grad; source gets grad.index_select(dim, index) (times alpha)."""
    need_x, need_src = ctx.needs_input_grad
    grad_src = None
    if need_src:
        grad_src = index_select(g, ctx.dim, _saved_index(ctx))
        if ctx.alpha != 1:
            grad_src = _ew.mul(grad_src, ctx.alpha)
    return (g if need_x else None), grad_src


def _index_copy_backward(ctx, g):
    """torch: self gets grad with the copied slices zeroed; source gets grad.index_select."""
    need_x, need_src = ctx.needs_input_grad
    index = _saved_index(ctx)
    grad_x = dispatch(INDEX_FILL, g, zeros((), dtype=g.dtype, device=g.device), dim=ctx.dim,
                      **_index_attrs(index)) if need_x else None
    return grad_x, (index_select(g, ctx.dim, index) if need_src else None)


def _index_fill_backward(ctx, g):
    """torch: self gets grad with the filled slices zeroed; a tensor value gets the sum of grad
    over the filled positions (each position once, as torch's unique index)."""
    need_x, need_value = ctx.needs_input_grad
    index = _saved_index(ctx)
    zero = zeros((), dtype=g.dtype, device=g.device)
    grad_x = dispatch(INDEX_FILL, g, zero, dim=ctx.dim, **_index_attrs(index)) if need_x else None
    grad_value = None
    if need_value:
        filled = dispatch(INDEX_FILL, zeros_like(g), full((), 1.0, dtype=g.dtype, device=g.device), dim=ctx.dim,
                          **_index_attrs(index))
        grad_value = _sum(_ew.mul(g, filled))
    return grad_x, grad_value


def _index_reduce_backward(ctx, g):
    """torch's index_reduce_backward, rule for rule: prod the product of the others (zeros as
    torch); mean g over the count; amax/amin g shared among the elements equal to the result
    (x's own value counted even with include_self=False, as torch); then x's named slices zeroed
    when include_self is False."""
    x, src, out = ctx.x, ctx.src, ctx.out
    index = _saved_index(ctx)
    dim, reduce, inc = ctx.dim, ctx.reduce, ctx.include_self

    def select(t):
        return index_select(t, dim, index)

    def add_into(base, values):
        return dispatch(INDEX_ADD, base, values, dim=dim, alpha=1, **_index_attrs(index))

    def reduce_into(base, values, how, include_self):
        return dispatch(INDEX_REDUCE, base, values, dim=dim, reduce=how, include_self=include_self,
                        **_index_attrs(index))
    if reduce == "prod":
        masked_x = _ew.where(_ew.eq(x, 0), 1.0, x)
        grad_x = _ew.div(_ew.mul(g, reduce_into(masked_x, src, "prod", inc)), masked_x)
        src_zero = _ew.eq(src, 0)
        zeros_per_target = select(add_into(zeros_like(x), src_zero.to(x.dtype)))
        single_zero = _pw.logical_and(src_zero, _ew.eq(zeros_per_target, 1))
        masked_src_result = reduce_into(x, _ew.where(single_zero, 1.0, src), "prod", inc)
        grad_src = _ew.where(single_zero, select(_ew.mul(g, masked_src_result)),
                             _ew.div(select(_ew.mul(g, out)), _ew.where(src_zero, 1.0, src)))
    elif reduce == "mean":
        n = add_into(full(tuple(g.shape), 1.0 if inc else 0.0, dtype=g.dtype, device=g.device),
                     full(tuple(src.shape), 1.0, dtype=g.dtype, device=g.device))
        n = _ew.where(_ew.eq(n, 0), 1.0, n)
        grad_x = _ew.div(g, n)
        grad_src = _ew.div(select(g), select(n))
    else:
        value = select(out)
        x_is_result = _ew.eq(x, out).to(g.dtype)
        src_is_result = _ew.eq(src, value).to(g.dtype)
        shared = _ew.div(g, add_into(x_is_result, src_is_result))
        grad_x = _ew.mul(x_is_result, shared)
        grad_src = _ew.mul(src_is_result, select(shared))
    if not inc:
        grad_x = dispatch(INDEX_FILL, grad_x, zeros((), dtype=g.dtype, device=g.device), dim=dim,
                          **_index_attrs(index))
    return grad_x, grad_src


INDEX_ADD = op("index_add", ("x", "src"), jvp=FROM_BACKWARD, rule=_same_rule, reference=numpy_index.index_add,
               kernel=_segments_launcher("add"), backward=_index_add_backward, layout="preserve")
INDEX_COPY = op("index_copy", ("x", "src"), jvp=FROM_BACKWARD, rule=_same_rule, reference=numpy_index.index_copy,
                kernel=_segments_launcher("copy"), backward=_index_copy_backward, layout="preserve")
INDEX_FILL = op("index_fill", ("x", "value"), jvp=FROM_BACKWARD, rule=_same_rule, reference=numpy_index.index_fill,
                kernel=_segments_launcher("fill"), backward=_index_fill_backward, layout="preserve",
                grad_name=lambda args, attrs: "IndexFillBackward1" if attrs.get("value_tensor") else "IndexFillBackward0")
INDEX_REDUCE = op("index_reduce", ("x", "src"), jvp=FROM_BACKWARD, rule=_same_rule, reference=numpy_index.index_reduce,
                  kernel=_segments_launcher("reduce"), backward=_index_reduce_backward, saves=("x", "src", "out"),
                  layout="preserve")


def _index_vector(func, index):
    if index.dim() > 1:
        raise IndexError(f"{func}(): Index is supposed to be a vector, but got dim: {index.dim()} with type: "
                         f"{_dt.type_name(index.dtype)} and size: {_shape_str(index.shape)}")


def _func_checks(func, input, dim, index, source):
    """torch's index_func_meta_impl (index_add_, index_reduce_): the index a vector of int32/int64,
    same dtypes, one index per source slice, matching slice shapes."""
    check_tensor(func, index, "index", 3)
    check_tensor(func, source, "source", 4)
    d = wrap_dim(dim, input.dim())
    _index_vector(func, index)
    if index.dtype not in (_dt.int32, _dt.int64):
        raise RuntimeError(f"{func}(): Expected dtype int32/int64 for index but got: {_dt.type_name(index.dtype)}")
    if input.dtype is not source.dtype:
        raise RuntimeError(f"{func}(): self ({_dt.type_name(input.dtype)}) and source "
                           f"({_dt.type_name(source.dtype)}) must have the same scalar type")
    if not (d == 0 or d < source.dim()):
        raise IndexError(f"{func}(): Indexing dim {d} is out of bounds of the source tensor with dim {source.dim()}")
    n = index.numel()
    along = source.shape[d] if source.dim() else 1
    if n != along:
        raise RuntimeError(f"{func}(): Number of indices ({n}) should be equal to source.size(dim): ({along}), "
                           f"for dim: {d}")
    a, b = list(input.shape), list(source.shape)
    if input.dim() and source.dim():
        del a[d], b[d]
    if a != b:
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {_shape_str(input.shape)} source.shape = {_shape_str(source.shape)}")
    return d


def _overlap_checks(input, *others):
    _views.assert_no_internal_overlap(input)
    for t in others:
        if isinstance(t, Tensor) and t.device == input.device:
            _views.assert_no_overlap(input, t)


def _run(entry, input, operand, d, index, inplace, **attrs):
    """Dispatch ``entry`` (0-d operands as 1-element vectors, as torch reads them)."""
    index = _views.reshape(index.detach(), (-1,))
    if input.dim() == 0 or (isinstance(operand, Tensor) and operand.dim() == 0 and entry is not INDEX_FILL):
        x1 = _as_1d(input)
        o1 = _as_1d(operand) if entry is not INDEX_FILL else operand
        out = dispatch(entry, x1, o1, dim=0, **attrs, **_index_attrs(index))
        return _finish(input, out, inplace)
    if inplace:
        _overlap_checks(input, index, operand)
        return dispatch_inplace(entry, input, operand, dim=d, **attrs, **_index_attrs(index))
    if isinstance(operand, Tensor) and operand._storage is input._storage:
        operand = _copy.clone(operand)
    return dispatch(entry, input, operand, dim=d, **attrs, **_index_attrs(index))


def _alpha(input, alpha):
    if isinstance(alpha, Tensor):
        alpha = alpha.item()
    if isinstance(alpha, bool):
        return int(alpha)
    if not input.dtype.is_floating_point and isinstance(alpha, float):
        return int(alpha)            # torch converts alpha to the integer scalar type
    return alpha


def _index_add(input, dim, index, source, alpha, inplace):
    check_tensor("index_add", input)
    d = _func_checks("index_add_", input, dim, index, source)
    index = check_range(index.detach(), input.shape[d] if input.dim() else 1, d, wrap=False, error=RuntimeError)
    return _run(INDEX_ADD, input, source, d, index, inplace, alpha=_alpha(input, alpha))


def index_add(input, dim, index, source, *, alpha=1):
    """torch.index_add: input with alpha * source[i] added to input's slice index[i] along dim
    (repeated indices add up, in index order: deterministic on every device)."""
    return _index_add(input, dim, index, source, alpha, False)


def index_add_(input, dim, index, source, *, alpha=1):
    return _index_add(input, dim, index, source, alpha, True)


def _index_copy(input, dim, index, source, inplace):
    check_tensor("index_copy", input)
    check_tensor("index_copy", index, "index", 3)
    check_tensor("index_copy", source, "source", 4)
    if index.dim() >= 2:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.dim()})")
    n = index.numel()
    if source.dim() == 0 and n != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element (got {n})")
    if source.dim() != input.dim() and source.dim() != 0 and input.dim() != 0:
        raise IndexError("index_copy_(): When source and destination are not scalars, their dimensionality must "
                         f"match. Source dimensionality ({source.dim()}), destination dimensionality ({input.dim()})")
    if index.dtype is not _dt.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {_dt.type_name(index.dtype)}")
    if input.dtype is not source.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{_dt.type_name(input.dtype)} and (source) {_dt.type_name(source.dtype)}")
    d = wrap_dim(dim, input.dim())
    a, b = list(input.shape), list(source.shape)
    if a:
        del a[d]
    if b:
        del b[d]
    if a != b:
        def show(v):
            return " ".join(map(str, v))
        raise RuntimeError("index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
                           f"shape: {show(a)} at dimension {d} and source slice shape: {show(b)} at dimension 0.")
    if source.dim() and n != source.shape[d]:
        raise IndexError(f"index_copy_(): Number of indices ({n}) should be equal to source.size(dim) "
                         f"({source.shape[d]})")
    size = input.shape[d] if input.dim() else 1
    index = check_range(index.detach(), size, d, wrap=False, message="index_copy_(): index {index} is out of bounds "
                        "for dimension {dim} with size {size}")
    return _run(INDEX_COPY, input, source, d, index, inplace)


def index_copy(input, dim, index, source):
    """torch.index_copy: input with source[i] copied into input's slice index[i] along dim; of
    repeated indices the last write wins (torch leaves it unspecified)."""
    return _index_copy(input, dim, index, source, False)


def index_copy_(input, dim, index, source):
    return _index_copy(input, dim, index, source, True)


def _index_fill(input, dim, index, value, inplace):
    check_tensor("index_fill", input)
    check_tensor("index_fill", index, "index", 3)
    if index.dtype is not _dt.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    value_tensor = isinstance(value, Tensor)
    if value_tensor:
        if value.dim() != 0:
            raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.dim()} dimension(s).")
        v = value if value.device == input.device else _copy.to_device(value, input.device)
        v = v.to(input.dtype) if v.dtype is not input.dtype else v
    else:
        if not isinstance(value, numbers.Number):
            raise TypeError(f"index_fill(): argument 'value' must be Number, not {type(value).__name__}")
        v = full((), value, dtype=input.dtype, device=input.device)
    if index.dim() > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    d = wrap_dim(dim, input.dim())
    size = input.shape[d] if input.dim() else 1
    index = check_range(index.detach(), size, d, wrap=True)
    index = _views.reshape(index.detach(), (-1,))
    index = _ew.where(_ew.lt(index, 0), _ew.add(index, size), index)     # torch wraps negative indices
    return _run(INDEX_FILL, input, v, d, index, inplace, value_tensor=value_tensor)


def index_fill(input, dim, index, value):
    """torch.index_fill: input with the slices index[i] along dim set to ``value`` (a number or
    a 0-d tensor, differentiable); negative indices count from the end."""
    return _index_fill(input, dim, index, value, False)


def index_fill_(input, dim, index, value):
    return _index_fill(input, dim, index, value, True)


_INDEX_REDUCES = ("prod", "mean", "amax", "amin")
_warned_beta = [False]


def _index_reduce(input, dim, index, source, reduce, include_self, inplace):
    check_tensor("index_reduce", input)
    if not _warned_beta[0]:
        _warned_beta[0] = True
        warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning, stacklevel=3)
    if reduce not in _INDEX_REDUCES:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    d = _func_checks("index_reduce_", input, dim, index, source)
    if input.dtype is _dt.bool_:
        raise NotImplementedError("\"index_func_\" not implemented for 'Bool'")
    index = check_range(index.detach(), input.shape[d] if input.dim() else 1, d, wrap=False,
                        message="index out of range in self")
    return _run(INDEX_REDUCE, input, source, d, index, inplace, reduce=reduce, include_self=bool(include_self))


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """torch.index_reduce: source's slices folded into input's slices index[i] along dim with
    prod, mean (floor division for integers), amax or amin (NaN propagates); include_self=False
    leaves input's own value out of every slice named. Deterministic (folded in index order)."""
    return _index_reduce(input, dim, index, source, reduce, include_self, False)


def index_reduce_(input, dim, index, source, reduce, *, include_self=True):
    return _index_reduce(input, dim, index, source, reduce, include_self, True)


declare("index_add", index_add, inplace=index_add_, out="exact")
declare("index_copy", index_copy, inplace=index_copy_, out="exact")
declare("index_fill", index_fill, inplace=index_fill_)
declare("index_reduce", index_reduce, inplace=index_reduce_, out="exact")


# =========================================================================== masked_scatter
def _masked_scatter_rule(x, src, mask, count):
    return Meta(broadcast_shapes(x.shape, mask.shape), x.dtype)


def _masked_scatter_launch(out, x, src, *, compute, mask, count):
    """The k-th masked position (row-major) takes src's k-th element: a cumsum of the mask
    numbers them, one gather reads them, a where places them."""
    with no_grad():
        shape = tuple(out.shape)
        m = _views.expand(mask, shape)
        if count == 0:
            _copy.copy_into(out, _views.expand(x, shape))
            return
        flat = _views.reshape(m, (-1,))
        pos = _ew.where(flat, _ew.sub(cumsum(flat, 0), 1), 0)
        picked = gather(_views.reshape(src, (-1,)), 0, pos)
        _copy.copy_into(out, _ew.where(m, _views.reshape(picked, shape), x))


def _masked_scatter_backward(ctx, g):
    """torch: self gets grad with the masked positions zeroed (summed back to its shape); the
    source's first ``count`` elements get the masked gradient in order, the rest zeros."""
    need_x, need_src = ctx.needs_input_grad
    mask = ctx.mask
    grad_x = grad_src = None
    if need_x:
        grad_x = sum_to_size(_ew.where(mask, 0.0, g), tuple(ctx.input_meta[0][0]))
    if need_src:
        src_shape = tuple(ctx.input_meta[1][0])
        n = 1
        for s in src_shape:
            n *= s
        picked = masked_select(g, mask)
        if n > ctx.count:
            picked = cat([picked, zeros(n - ctx.count, dtype=g.dtype, device=g.device)])
        grad_src = _views.reshape(picked, src_shape)
    return grad_x, grad_src


MASKED_SCATTER = op("masked_scatter", ("x", "src"), jvp=FROM_BACKWARD, rule=_masked_scatter_rule, reference=numpy_index.masked_scatter,
                    kernel=_masked_scatter_launch, backward=_masked_scatter_backward)


def _masked_scatter(input, mask, source, inplace):
    check_tensor("masked_scatter", input)
    check_tensor("masked_scatter", mask, "mask", 2)
    check_tensor("masked_scatter", source, "source", 3)
    if mask.dtype is not _dt.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{_dt.type_name(mask.dtype)}")
    if input.dtype is not source.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but got"
                           f"{_dt.type_name(input.dtype)} and {_dt.type_name(source.dtype)}")
    if inplace:
        m = mask.expand(tuple(input.shape)) if tuple(mask.shape) != tuple(input.shape) else mask
        shape = tuple(input.shape)
    else:
        shape = broadcast_shapes(input.shape, mask.shape)
        m = mask.expand(shape) if tuple(mask.shape) != shape else mask
    if m.device != input.device:
        m = _copy.to_device(m, input.device)
    count = int(_sum(m).item()) if m.numel() else 0      # a sync, as torch's cpu check
    if count > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if source.device != input.device:
        source = _copy.to_device(source, input.device)
    if inplace:
        _overlap_checks(input, m, source)
        return dispatch_inplace(MASKED_SCATTER, input, source, mask=m.detach(), count=count)
    return dispatch(MASKED_SCATTER, input, source, mask=m.detach(), count=count)


def masked_scatter(input, mask, source):
    """torch.masked_scatter: input (broadcast with mask) with its masked positions, in row-major
    order, taking source's elements in order."""
    return _masked_scatter(input, mask, source, False)


def masked_scatter_(input, mask, source):
    return _masked_scatter(input, mask, source, True)


declare("masked_scatter", masked_scatter, inplace=masked_scatter_)


# =========================================================================== put / take_along_dim
def _put_args(input, index, source):
    check_tensor("put", input)
    check_tensor("put", index, "index", 2)
    check_tensor("put", source, "source", 3)
    if index.dtype is not _dt.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {_dt.type_name(index.dtype)}")
    if input.dtype is not source.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{_dt.type_name(input.dtype)} and source.dtype = {_dt.type_name(source.dtype)}")
    if source.numel() != index.numel():
        raise IndexError("put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    n = input.numel()
    index = check_range(index.detach(), n, 0, message="out of range: tried to access index {index} on a tensor of "
                        f"{n} elements.")
    index = index.detach()
    if index.device != input.device:
        index = _copy.to_device(index, input.device)
    # the linear positions (negative ones from the end) as coordinates of input's dims
    flat = _views.reshape(_ew.where(_ew.lt(index, 0), _ew.add(index, n), index), (-1,))
    coords = _unravel(flat, tuple(input.shape)) if input.dim() else ()
    return coords, _views.reshape(source, (-1,))


def _renamed(t, name):
    return rename_node(t, name)


def put(input, index, source, accumulate=False):
    """torch.put: input (as one row-major vector) with source's elements written at ``index``
    (the last of repeated indices wins) or added there with accumulate=True, in index order."""
    coords, values = _put_args(input, index, source)
    if input.dim() == 0:
        out = index_put(_as_1d(input), (zeros(values.shape, dtype=_dt.int64, device=input.device),), values,
                        accumulate)
        return _renamed(_views.reshape(out, ()), "PutBackward0")
    return _renamed(index_put(input, coords, values, accumulate), "PutBackward0")


def put_(input, index, source, accumulate=False):
    coords, values = _put_args(input, index, source)
    if input.dim() == 0:
        return _copy.copy_(input, put(input, index, source, accumulate))
    index_put_(input, coords, values, accumulate)
    return _renamed(input, "PutBackward0")


declare("put", put, inplace=put_)


def take_along_dim(input, indices, dim=None):
    """torch.take_along_dim: the values of input at ``indices`` along ``dim`` (both broadcast
    but along dim), or at the flat positions ``indices`` when dim is None (a gather)."""
    check_tensor("take_along_dim", input)
    check_tensor("take_along_dim", indices, "indices", 2)
    if dim is None:
        if indices.dtype is not _dt.int64:
            raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                               f"{_dt.type_name(indices.dtype)}")
        return gather(input.view(-1), 0, indices.reshape(-1))
    if input.dim() != indices.dim():
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.dim()} dimensions for input, and {indices.dim()} dimensions for indices")
    if indices.dtype is not _dt.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_dt.type_name(indices.dtype)}")
    d = wrap_dim(dim, input.dim())
    sizes = list(input.shape)
    if sizes:
        sizes[d] = indices.shape[d]
    idx = indices.expand(broadcast_shapes(tuple(sizes), indices.shape))
    sizes = list(indices.shape)
    if sizes:
        sizes[d] = input.shape[d]
    x = input.expand(broadcast_shapes(tuple(sizes), input.shape))
    if x.dim() and x.shape[d]:      # torch wraps every index modulo the size (-1 is the last, size is 0)
        idx = _pw.remainder(idx, x.shape[d])
    return gather(x, d, idx)


declare("take_along_dim", take_along_dim, out="exact")


# =========================================================================== select / slice / as_strided scatter
def _slice_geometry(x, dim, start, end, step):
    """torch's slice: the wrapped/clamped (start, end) of ``dim``."""
    size = x.shape[dim]
    start = 0 if start is None else int(start)
    end = size if end is None else int(end)
    if start < 0:
        start += size
    if end < 0:
        end += size
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    return start, end, int(step)


def _view_of(t, kind, attrs):
    if kind == "select":
        return _views.select(t, attrs["dim"], attrs["index"])
    dim, start, end, step = attrs["dim"], attrs["start"], attrs["end"], attrs["step"]
    return _views.basic_index(t, (slice(None),) * dim + (slice(start, end, step),))


def _scatter_view_rule(kind):
    def rule(x, src, **attrs):
        expected = tuple(_view_shape(tuple(x.shape), kind, attrs))
        if tuple(src.shape) != expected:
            raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                               f"{_shape_str(src.shape)}, slice size = {_shape_str(expected)}")
        return Meta(tuple(x.shape), x.dtype)
    return rule


def _view_shape(shape, kind, attrs):
    shape = list(shape)
    d = attrs["dim"]
    if kind == "select":
        del shape[d]
    else:
        start, end, step = attrs["start"], attrs["end"], attrs["step"]
        shape[d] = max(0, -(-(end - start) // step))
    return shape


def _scatter_view_launch(kind):
    def launch(out, x, src, *, compute, **attrs):
        _copy.copy_into(out, x)
        _copy.copy_into(_view_of(out, kind, attrs), src)
    return launch


def _scatter_view_backward(kind, entry_name):
    def backward(ctx, g):
        need_x, need_src = ctx.needs_input_grad
        attrs = {k: getattr(ctx, k) for k in (("dim", "index") if kind == "select" else ("dim", "start", "end", "step"))}
        grad_x = grad_src = None
        if need_x:
            src_zero = zeros(tuple(ctx.input_meta[1][0]), dtype=g.dtype, device=g.device)
            grad_x = dispatch(_ENTRIES[entry_name], g, src_zero, **attrs)
        if need_src:
            grad_src = _view_of(g, kind, attrs)
        return grad_x, grad_src
    return backward


_ENTRIES = {}
for _kind in ("select", "slice"):
    _ENTRIES[f"{_kind}_scatter"] = op(f"{_kind}_scatter", ("x", "src"), jvp=LINEAR, rule=_scatter_view_rule(_kind),
                                      reference=getattr(numpy_index, f"{_kind}_scatter"), kernel=_scatter_view_launch(_kind),
                                      backward=_scatter_view_backward(_kind, f"{_kind}_scatter"))
SELECT_SCATTER, SLICE_SCATTER = _ENTRIES["select_scatter"], _ENTRIES["slice_scatter"]


def _src_like(input, src):
    if src.device != input.device:
        src = _copy.to_device(src, input.device)
    return src.to(input.dtype) if src.dtype is not input.dtype else src


def select_scatter(input, src, dim, index):
    """torch.select_scatter: a copy of input whose slice input.select(dim, index) holds src."""
    check_tensor("select_scatter", input)
    check_tensor("select_scatter", src, "src", 2)
    _views.select(input, dim, index)              # torch's select() errors (0-d, index range)
    d = wrap_dim(dim, input.dim())
    size = input.shape[d]
    index = int(index) + size if int(index) < 0 else int(index)
    return dispatch(SELECT_SCATTER, input, _src_like(input, src), dim=d, index=index)


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """torch.slice_scatter: a copy of input whose slice [start:end:step] along dim holds src."""
    check_tensor("slice_scatter", input)
    check_tensor("slice_scatter", src, "src", 2)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    d = wrap_dim(dim, input.dim())
    start, end, step = _slice_geometry(input, d, start, end, step)
    return dispatch(SLICE_SCATTER, input, _src_like(input, src), dim=d, start=start, end=end, step=step)


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """torch.as_strided_scatter: a copy of input (its storage, strides and offset kept) whose
    elements under input.as_strided(size, stride, storage_offset) hold src."""
    check_tensor("as_strided_scatter", input)
    check_tensor("as_strided_scatter", src, "src", 2)
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if tuple(src.shape) != size:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{_shape_str(src.shape)}, slice size = {_shape_str(size)}")
    offset = input.storage_offset() if storage_offset is None else int(storage_offset)
    return _views.as_strided_scatter(input, _src_like(input, src), geometry(input), (size, stride, offset))


declare("select_scatter", select_scatter)
declare("slice_scatter", slice_scatter, out="exact")
declare("as_strided_scatter", as_strided_scatter)


# =========================================================================== fill_diagonal_
def fill_diagonal_(input, fill_value, wrap=False):
    """Tensor.fill_diagonal_: the main diagonal (every dim's index equal) set to fill_value; a
    tall matrix with wrap=True restarts it every width + 1 rows, as torch's."""
    check_tensor("fill_diagonal_", input)
    n = input.dim()
    if n < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = input.shape[0], input.shape[1]
    if n > 2 and any(s != height for s in input.shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    stride = sum(input.stride())
    offset = input.storage_offset()
    size = min(height, width)
    _copy.fill_(_views.as_strided(input, (size,), (stride,), offset), fill_value)
    if wrap and n == 2 and height > width + 1:
        step = width + 1
        wrap_size = (input.numel() + step - 1) // step - size
        _copy.fill_(_views.as_strided(input, (wrap_size,), (stride,), offset + input.stride(0) * (width + 1)),
                    fill_value)
    return input


declare("fill_diagonal", method=False, inplace=fill_diagonal_)


# =========================================================================== tril_indices / triu_indices
def _tri_indices(name, row, col, offset, dtype, device, upper):
    for arg, v in (("row", row), ("col", col), ("offset", offset)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"{name}(): argument '{arg}' must be int, not {type(v).__name__}")
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dtype = _dt.int64 if dtype is None else _dt.as_dtype(dtype)
    if dtype.is_floating_point or dtype is _dt.bool_:
        raise NotImplementedError(f"\"{name}\" not implemented for '{_dt.type_name(dtype)}'")
    # the coordinates, row by row, as arithmetic on the host (the output's size is known there);
    # one copy to the device, as a factory from data
    rows, cols = (np.triu_indices if upper else np.tril_indices)(int(row), int(offset), int(col))
    return tensor(np.stack([rows, cols]).astype(dtype.numpy_dtype).reshape(2, -1), dtype=dtype, device=device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False):
    """torch.tril_indices: the (2, N) coordinates of the lower triangle (diagonal ``offset``
    included) of a row x col matrix, row-major."""
    return _tri_indices("tril_indices", row, col, offset, dtype, device, False)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False):
    """torch.triu_indices: the coordinates of the upper triangle from diagonal ``offset``."""
    return _tri_indices("triu_indices", row, col, offset, dtype, device, True)


declare("tril_indices", tril_indices, method=False)
declare("triu_indices", triu_indices, method=False)


# =========================================================================== unravel_index / nonzero_static
def _unravel(indices, shape):
    """torch's _unravel_index: indices // (the row-major strides of shape) % shape, stacked last."""
    coefs, acc = [], 1
    for s in reversed(shape[1:] + (1,)):
        acc *= s
        coefs.append(acc)
    coefs = tuple(reversed(coefs))
    device = indices.device
    q = _pw.floor_divide(indices.unsqueeze(-1), tensor(coefs, dtype=_dt.int64, device=device))
    return _views.unbind(_pw.remainder(q, tensor(shape, dtype=_dt.int64, device=device)), -1)


def unravel_index(indices, shape):
    """torch.unravel_index: the coordinates in ``shape`` of flat indices (floor-divided and
    wrapped as torch's: no range check), as a tuple of tensors of indices' shape."""
    check_tensor("unravel_index", indices, "indices")
    if indices.dtype.is_floating_point or indices.dtype is _dt.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = (int(shape),)
    elif isinstance(shape, (tuple, list)):
        for d in shape:
            if isinstance(d, bool) or not isinstance(d, numbers.Integral):
                raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(d)}")
        shape = tuple(int(d) for d in shape)
    else:
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    if any(d < 0 for d in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    return tuple(_unravel(indices, shape))


declare("unravel_index", unravel_index, method=False)


def nonzero_static(input, *, size, fill_value=-1):
    """torch.nonzero_static: nonzero's (n, ndim) coordinates cut or padded with fill_value to
    exactly ``size`` rows."""
    check_tensor("nonzero_static", input)
    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    nz = nonzero(input)
    n = nz.shape[0]
    if n >= size:
        return _copy.clone(nz[:size])
    pad = full((size - n, input.dim()), int(fill_value), dtype=_dt.int64, device=input.device)
    return cat([nz, pad]) if n else pad


def _nonzero_static_out(name, result, out):
    if out.dtype is not _dt.int64:
        raise RuntimeError(f"nonzero_static: Expected out tensor to have scalar type Long but got scalar type"
                           f"{_dt.type_name(out.dtype)}")


declare("nonzero_static", nonzero_static, out=_nonzero_static_out)
