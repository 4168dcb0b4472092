"""Sorting and selection: sort, argsort, msort, topk (the merge-sort kernels of kernels/sort.py,
launched by backends/triton/sort.py; NumPy references in backends/numpy_sort.py); kthvalue,
median, nanmedian, mode (table entries whose cuda launchers select from a sort with the gather,
scan and reduction kernels), quantile and nanquantile (composites of sort, gather and lerp).

Order, as torch's: NaN is the largest value (last ascending, first descending), -0.0 equals 0.0,
and every sort here is stable (``stable=`` is accepted and always honoured), so equal values keep
their order and ties are deterministic. Where torch leaves the index of a tie unspecified (topk's
order of equal values, kthvalue's index among equal values: torch's cpu quickselect picks one),
tritensor's is the stable order's.

sort, topk, kthvalue, median(dim) and mode are table entries with two outputs (ops/table.py),
values and int64 indices; their gradient sends each output gradient back to the input position
its index names (torch's value_selecting_reduction_backward: a scatter into zeros, written with
tritensor ops so that it is differentiable again). median() of a whole tensor splits its gradient
evenly among the elements equal to the median (torch's evenly_distribute_backward). The public
functions return torch.return_types named tuples.

median's index is torch's exactly (torch breaks ties by position too); mode's is the last
occurrence of the mode, which is what torch's cpu kernel returns for small rows (its unstable
std::sort makes it unspecified for long ones).
"""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from .. import dtypes as _dt
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..autograd.graph import DelayedError, gradient_edge, node_class
from ..backends import numpy_sort
from ..backends.base import backend_for
from ..backends.triton import sort as tsort
from ..runtime import device_errors as _device_errors
from ..tensor import Tensor
from . import _unsigned
from ._checks import check_tensor
from ._return_types import return_types
from ._shapes import reduced_shape, wrap_dim
from .copy import copy_into
from .creation import arange, ones_like, tensor, zeros
from .dispatch import dispatch
from .elementwise import where
from .factorizations import not_implemented_node
from .indexing import scatter
from .joining import cat
from .scan import cumsum
from .surface import declare
from .table import FROM_BACKWARD, Meta, op


def _length(x, dim):
    """The length of ``dim`` (a 0-d tensor is one element along its dim 0)."""
    return x.shape[dim] if x.dim() else 1


def _as_int(name, value, arg, position):
    """torch's int arguments: an int (or an integer NumPy scalar / 0-d integer tensor via
    __index__), never a bool ... only an int."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be int, not {type(value).__name__}")
    return operator.index(value)


# ------------------------------------------------------------------ the gradient of a selection
def _select_backward(ctx, grad, *_):
    """torch's value_selecting_reduction_backward: each gradient goes to the input position its
    index names (a scatter into zeros); reduced outputs (keepdim=False) are unsqueezed first."""
    shape = tuple(ctx.input_meta[0][0])
    indices = ctx.indices
    if not shape:
        return grad.reshape(())
    dim = ctx.dim
    if not ctx.attrs.get("keepdim", True):
        grad, indices = grad.unsqueeze(dim), indices.unsqueeze(dim)
    return scatter(zeros(shape, dtype=grad.dtype, device=grad.device), dim, indices, grad)


# ------------------------------------------------------------------ sort / argsort
def _sort_rule(x, dim, descending):
    return (Meta(tuple(x.shape), x.dtype, x.dtype), Meta(tuple(x.shape), _dt.int64, x.dtype))


def _sort_launch(outs, x, *, compute, dim, descending):
    tsort.sort(outs[0], outs[1], x, dim, descending)


SORT = op("sort", ("x",), jvp=FROM_BACKWARD, outputs=("values", "indices"), rule=_sort_rule, reference=numpy_sort.sort,
          kernel=_sort_launch, backward=_select_backward, saves=("indices",), layout="preserve")


def _argsort_launch(out, x, *, compute, dim, descending):
    tsort.sort(None, out, x, dim, descending)


ARGSORT = op("argsort", ("x",), rule=lambda x, dim, descending: Meta(tuple(x.shape), _dt.int64, x.dtype),
             reference=numpy_sort.argsort, kernel=_argsort_launch, layout="preserve", differentiable=False)


def sort(input, dim=-1, descending=False, *, stable=False):
    """torch.sort: (values, indices) along ``dim``, stable (see the module docstring); the
    outputs have the input's memory layout, as torch's."""
    check_tensor("sort", input)
    dim = wrap_dim(_as_int("sort", dim, "dim", 2), input.dim())
    return return_types.sort(*dispatch(SORT, input, dim=dim, descending=bool(descending)))


def argsort(input, dim=-1, descending=False, *, stable=False):
    """torch.argsort: the indices that sort ``input`` along ``dim`` (stably)."""
    check_tensor("argsort", input)
    dim = wrap_dim(_as_int("argsort", dim, "dim", 2), input.dim())
    return dispatch(ARGSORT, input, dim=dim, descending=bool(descending))


def msort(input):
    """torch.msort: sort(input, 0).values."""
    check_tensor("msort", input)
    return sort(input, 0).values


declare("sort", sort, out="exact")
declare("argsort", argsort)
declare("msort", msort, out="exact")


# ------------------------------------------------------------------ topk
def _topk_rule(x, k, dim, largest):
    shape = tuple(x.shape[:dim]) + (k,) + tuple(x.shape[dim + 1:]) if x.dim() else ()
    return (Meta(shape, x.dtype, x.dtype), Meta(shape, _dt.int64, x.dtype))


def _topk_launch(outs, x, *, compute, k, dim, largest):
    tsort.sort(outs[0], outs[1], x, dim, largest, k)


TOPK = op("topk", ("x",), jvp=FROM_BACKWARD, outputs=("values", "indices"), rule=_topk_rule, reference=numpy_sort.topk,
          kernel=_topk_launch, backward=_select_backward, saves=("indices",))


def topk(input, k, dim=-1, largest=True, sorted=True):
    """torch.topk: the ``k`` largest (smallest with largest=False) values along ``dim`` and their
    indices, always in sorted order (torch's sorted=False leaves the order unspecified); equal
    values come in index order."""
    check_tensor("topk", input)
    k = _as_int("topk", k, "k", 2)
    dim = wrap_dim(_as_int("topk", dim, "dim", 3), input.dim())
    if input.dtype is _dt.bool_:
        where = backend_for(input.device).torch_name("CPU", "CUDA")
        raise RuntimeError(f"topk does not support bool dtypes on {where}")
    if not 0 <= k <= _length(input, dim):
        raise RuntimeError("selected index k out of range")
    if input.dim() == 0:
        k = 1        # torch's topk(0-d, 0) is the element too
    return return_types.topk(*dispatch(TOPK, input, k=k, dim=dim, largest=bool(largest)))


declare("topk", topk, out="exact")


# ------------------------------------------------------------------ kthvalue / median / nanmedian / mode
# One row of values in, the value at one position of the row's stable order and its index out.
# The launchers (cuda) take that position from a sort with the gather, scan and reduction
# kernels; a 0-d input is passed as one row of one element.
def _selection_rule(x, dim, keepdim, **_):
    shape = reduced_shape(x.shape, (dim,), keepdim)
    return (Meta(shape, x.dtype, x.dtype), Meta(shape, _dt.int64, x.dtype))


def _write_selection(outs, values, indices, dim, keepdim):
    """values/indices (one element along ``dim``) into the outputs."""
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    copy_into(outs[0], values)
    copy_into(outs[1], indices)


def _kthvalue_launch(outs, x, *, compute, k, dim, keepdim):
    with no_grad():
        values, indices = dispatch(TOPK, x, k=k, dim=dim, largest=False)
        _write_selection(outs, values.narrow(dim, k - 1, 1), indices.narrow(dim, k - 1, 1), dim, keepdim)


def median_position(n, nan_count, ignore_nan):
    """torch's median position in a row's stable order (backends/numpy_sort.median_position), in
    tritensor ops: the lower middle; with NaN, median() the first NaN and nanmedian() the middle
    of the rest (0 when every value is NaN)."""
    if ignore_nan:
        return ((n - 1) - nan_count).div(2, rounding_mode="floor").clamp(min=0)
    return where(nan_count > 0, n - nan_count, (n - 1) // 2)


def _median_launch(outs, x, *, compute, dim, keepdim, ignore_nan):
    with no_grad():
        values, indices = dispatch(SORT, x, dim=dim, descending=False)
        at = median_position(x.shape[dim], x.isnan().sum(dim, keepdim=True), ignore_nan)
        _write_selection(outs, values.gather(dim, at), indices.gather(dim, at), dim, keepdim)


def _mode_launch(outs, x, *, compute, dim, keepdim):
    """Runs of equal values in the sorted row (NaN != NaN: each NaN is a run of one, as torch's),
    each element's run length from a scatter_add of ones over its run number (a cumsum of the
    run starts), the first position of the longest run (the smallest value), and its last index."""
    with no_grad():
        values, order = dispatch(SORT, x, dim=dim, descending=False)
        n = x.shape[dim]
        first = ones_like(values.narrow(dim, 0, 1), dtype=_dt.bool_)
        starts = cat([first, values.narrow(dim, 1, n - 1) != values.narrow(dim, 0, n - 1)], dim)
        run = cumsum(starts, dim) - 1
        length = zeros(tuple(run.shape), dtype=_dt.int64, device=x.device).scatter_add(dim, run, ones_like(run))
        length = length.gather(dim, run)
        longest = length.amax(dim, keepdim=True)
        at = (length == longest).to(_dt.int32).argmax(dim, keepdim=True)
        _write_selection(outs, values.gather(dim, at), order.gather(dim, at + longest - 1), dim, keepdim)


KTHVALUE = op("kthvalue", ("x",), jvp=FROM_BACKWARD, outputs=("values", "indices"), rule=_selection_rule,
              reference=numpy_sort.kthvalue, kernel=_kthvalue_launch, backward=_select_backward,
              saves=("indices",))
MEDIAN = op("median", ("x",), jvp=FROM_BACKWARD, outputs=("values", "indices"), rule=_selection_rule, reference=numpy_sort.median,
            kernel=_median_launch, backward=_select_backward, saves=("indices",),
            grad_name=lambda args, attrs: "NanmedianBackward1" if attrs["ignore_nan"] else "MedianBackward1")
MODE = op("mode", ("x",), jvp=FROM_BACKWARD, outputs=("values", "indices"), rule=_selection_rule, reference=numpy_sort.mode,
          kernel=_mode_launch, backward=_select_backward, saves=("indices",))


def _evenly_distribute_backward(ctx, grad):
    """torch's evenly_distribute_backward: the gradient split among the elements equal to the
    result (the NaN elements when the result is NaN)."""
    x, out = ctx.x, ctx.out
    hit = where(out.isnan(), x.isnan(), x == out).to(grad.dtype)
    return hit * (grad / hit.sum())


def _median_all_launch(out, x, *, compute, ignore_nan):
    with no_grad():
        flat = x.reshape(-1)
        if flat.numel() == 0:
            copy_into(out, tensor(math.nan, device=out.device))     # (integer dtypes: 0)
            return
        values, _ = dispatch(MEDIAN, flat, dim=0, keepdim=False, ignore_nan=ignore_nan)
        copy_into(out, values)


MEDIAN_ALL = op("median_all", ("x",), jvp=FROM_BACKWARD, rule=lambda x, ignore_nan: Meta((), x.dtype, x.dtype),
                reference=numpy_sort.median_all, kernel=_median_all_launch, backward=_evenly_distribute_backward,
                saves=("x", "out"),
                grad_name=lambda args, attrs: "NanmedianBackward0" if attrs["ignore_nan"] else "MedianBackward0")


def _check_reduction_dim(name, input, dim):
    """torch's zero_numel_check_dims: an empty tensor reduced over an empty dim."""
    if input.numel() == 0 and input.dim() and input.shape[dim] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")


def _no_bool(kernel, input):
    if input.dtype is _dt.bool_:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _select(entry, input, dim, keepdim, **attrs):
    if input.dim() == 0:              # one row of one element
        return dispatch(entry, input.reshape(1), dim=0, keepdim=False, **attrs)
    return dispatch(entry, input, dim=dim, keepdim=bool(keepdim), **attrs)


def kthvalue(input, k, dim=-1, keepdim=False):
    """torch.kthvalue: the k-th smallest value along ``dim`` and its index (among equal values,
    the stable order's; torch's quickselect leaves which one unspecified)."""
    check_tensor("kthvalue", input)
    k = _as_int("kthvalue", k, "k", 2)
    dim = wrap_dim(_as_int("kthvalue", dim, "dim", 3), input.dim())
    _no_bool(backend_for(input.device).torch_name("kthvalue_cpu", "kthvalue_cuda"), input)
    _check_reduction_dim("kthvalue", input, dim)
    if not 1 <= k <= _length(input, dim):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    return return_types.kthvalue(*_select(KTHVALUE, input, dim, keepdim, k=k))


class _NoDim:
    def __repr__(self):
        return "no dim"


_NO_DIM = _NoDim()      # median(x) and median(x, dim) are two overloads in torch: dim=None is neither


def _median(name, input, dim, keepdim, ignore_nan):
    check_tensor(name, input)
    if dim is _NO_DIM:
        _no_bool(backend_for(input.device).torch_name("median_cpu", "median_cuda"), input)
        return dispatch(MEDIAN_ALL, input, ignore_nan=ignore_nan)
    if dim is None:
        raise TypeError(f"{name}(): argument 'dim' must be int, not NoneType")
    dim = wrap_dim(_as_int(name, dim, "dim", 2), input.dim())
    _no_bool("median_out", input)
    _check_reduction_dim("median", input, dim)
    return getattr(return_types, name)(*_select(MEDIAN, input, dim, keepdim, ignore_nan=ignore_nan))


def median(input, dim=_NO_DIM, keepdim=False):
    """torch.median: the lower of the two middle values (NaN if there is one); with ``dim``,
    (values, indices) along it, the index the first of equal values in stable order (torch's)."""
    return _median("median", input, dim, keepdim, False)


def nanmedian(input, dim=_NO_DIM, keepdim=False):
    """torch.nanmedian: median ignoring NaN (NaN where every value is NaN)."""
    return _median("nanmedian", input, dim, keepdim, True)


def mode(input, dim=-1, keepdim=False):
    """torch.mode: the most frequent value along ``dim`` (the smallest of equally frequent ones)
    and the index of its last occurrence."""
    check_tensor("mode", input)
    dim = wrap_dim(_as_int("mode", dim, "dim", 2), input.dim())
    _check_reduction_dim("mode", input, dim)
    return return_types.mode(*_select(MODE, input, dim, keepdim))


def _out_needs_dim(name, result, out):
    """median/nanmedian: out= exists only with dim (torch's overloads); values and indices then
    want exact dtypes (write_out checks a tuple's outputs itself, exactly)."""
    raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')


declare("kthvalue", kthvalue, out="exact")
declare("median", median, out=_out_needs_dim)
declare("nanmedian", nanmedian, out=_out_needs_dim)
declare("mode", mode, out="exact")


# ------------------------------------------------------------------ quantile / nanquantile
# Composites, as torch's (aten's quantile_impl): the row sorted, each q turned into a rank in it,
# the two values around the rank gathered and interpolated. Differentiable through sort, gather
# and the interpolation.
INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _lerp(start, end, weight):
    """torch.lerp's formula (exact at weight 1 too): start + w (end - start) below w = 0.5, else
    end - (end - start)(1 - w)."""
    diff = end - start
    return where(weight < 0.5, start + weight * diff, end - diff * (1 - weight))


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    check_tensor(name, input)
    if not isinstance(q, Tensor):
        if not isinstance(q, (int, float)):
            raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, "
                            f"{type(q).__name__}), but expected one of:\n * (Tensor input, Tensor q, int dim = None, "
                            "bool keepdim = False, *, str interpolation = \"linear\", Tensor out = None)\n"
                            " * (Tensor input, float q, int dim = None, bool keepdim = False, *, str interpolation "
                            "= \"linear\", Tensor out = None)")
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {float(q)}")
    if interpolation not in INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    if dim is not None:
        dim = wrap_dim(_as_int(name, dim, "dim", 3), input.dim())
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    scalar_q = not isinstance(q, Tensor)
    if scalar_q:
        q = tensor(float(q), dtype=input.dtype, device=input.device)
    if q.dim() > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input.dtype not in (_dt.float32, _dt.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if q.dtype is not input.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if q.device != input.device:
        raise RuntimeError("quantile() q tensor must be on the same device as the input tensor")
    if not scalar_q and not bool(((q >= 0) & (q <= 1)).all()):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    one_q = q.dim() == 0
    # the rows: every value (dim None) or the dim moved last; R the reduced shape
    x = input.reshape(-1) if dim is None or input.dim() == 0 else input.movedim(dim, -1)
    ordered = sort(x, -1).values
    n = ordered.shape[-1]
    if n > 2 ** 24:      # ranks are computed in the input's dtype (float32: exact to 2**24)
        raise RuntimeError("quantile() input tensor is too large")
    qs = q.reshape(-1)
    if ignore_nan:          # ranks among the non-NaN values (0 when there are none: NaN)
        ranks = (qs * ((~ordered.isnan()).sum(-1, keepdim=True) - 1)).clamp(min=0)
    else:                   # a NaN in the row: the last rank, where NaN sorts
        ranks = where(ordered.isnan().any(-1, keepdim=True), float(n - 1), qs * (n - 1))
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()          # half to even, as torch's round
    below = ranks.to(_dt.int64)
    result = ordered.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        weights = ranks - below if interpolation == "linear" else ones_like(ranks) * 0.5
        result = _lerp(result, ordered.gather(-1, ranks.ceil().to(_dt.int64)), weights)
    result = result.movedim(-1, 0)           # (q, *R)
    if one_q:
        result = result.squeeze(0)
    if keepdim:
        lead = 0 if one_q else 1
        if dim is None:
            result = result.reshape(tuple(result.shape[:lead]) + (1,) * input.dim())
        elif input.dim():
            result = result.unsqueeze(lead + dim)
    return result


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """torch.quantile: the q-th quantiles of ``input`` (every value, or along ``dim``), each
    interpolated between the two values around its rank q * (n - 1); a row with NaN gives NaN."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """torch.nanquantile: quantile of the non-NaN values (NaN where every value is NaN)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


def _quantile_out(name, result, out):
    if out.dtype is not result.dtype:
        raise RuntimeError("quantile() out tensor must be same dtype as the input tensor")
    if out.device != result.device:
        raise RuntimeError("quantile() out tensor must be on the same device as the input tensor")


declare("quantile", quantile, out=_quantile_out)
declare("nanquantile", nanquantile, out=_quantile_out)


# ------------------------------------------------------------------ searchsorted / bucketize
# One table entry, the binary-search kernel: boundaries come as [rows, N] (a view of the
# boundaries when one exists), values in any layout; the sorter is an attribute (an index: the
# cpu reference reads it in its own dtype).
def _searchsorted_rule(seq, x, right, out_int32, sorter):
    compute = _dt.compute_dtype(_dt.promote_types(seq.dtype, x.dtype))
    return Meta(tuple(x.shape), _dt.int32 if out_int32 else _dt.int64, compute)


def _searchsorted_launch(out, seq, x, *, compute, right, out_int32, sorter):
    tsort.searchsorted(out, seq, x, sorter, right, compute)


SEARCHSORTED = op("searchsorted", ("seq", "x"), rule=_searchsorted_rule, reference=numpy_sort.searchsorted,
                  kernel=_searchsorted_launch, differentiable=False)


def _shape_text(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _searchsorted(sorted_sequence, input, out_int32, right, side, sorter, name="searchsorted"):
    check_tensor(name, sorted_sequence, "sorted_sequence" if name == "searchsorted" else "boundaries",
                 1 if name == "searchsorted" else 2)
    api = "torch.searchsorted()"
    if sorted_sequence.dim() == 0:
        raise RuntimeError(f"{api}: boundaries tensor should have positive dimension, but got 0 dimension")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"{api}: side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError(f"{api}: side and right can't be set to opposites, got side of left while right was True")
        right = side == "right"
    scalar = not isinstance(input, Tensor)
    if scalar:
        if sorted_sequence.dim() != 1:
            raise RuntimeError(f"{api}: input value can be a scalar only when boundaries tensor dimension is 1, "
                               f"but we got boundaries tensor dim({sorted_sequence.dim()}) and input value's dim(0) numel(1)")
        input = tensor(input, dtype=_dt.result_type(sorted_sequence, input), device=sorted_sequence.device)
    if sorter is not None:
        check_tensor(name, sorter, "sorter", None)
        if sorter.dtype is not _dt.int64:
            raise RuntimeError(f"{api}: sorter must be a tensor of long dtype but got dtype {_dt.type_name(sorter.dtype)}")
        if tuple(sorter.shape) != tuple(sorted_sequence.shape):
            raise RuntimeError(f"{api}: boundary and sorter must have the same size, but got boundary tensor "
                               f"{_shape_text(sorted_sequence.shape)}and got sorter tensor {_shape_text(sorter.shape)}")
    if sorted_sequence.dim() > 1 and (input.dim() != sorted_sequence.dim()
                                      or tuple(input.shape[:-1]) != tuple(sorted_sequence.shape[:-1])):
        raise RuntimeError(f"{api}: boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
                           f"tensor and input value tensor must match, but we got boundaries tensor "
                           f"{_shape_text(sorted_sequence.shape)} and input value tensor {_shape_text(input.shape)}")
    if _dt.bool_ in (sorted_sequence.dtype, input.dtype):
        kernel = backend_for(sorted_sequence.device).torch_name("searchsorted_out_cpu", "searchsorted_cuda")
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    n = sorted_sequence.shape[-1]
    if sorter is not None and sorter.numel():
        # on cuda a device-side check, its error deferred to the next sync (ops/indexing.py check_range)
        sorter = backend_for(sorter.device).check_index(sorter.detach(), 0, n, _device_errors.check(
            f"{api}: sorter index out of range", RuntimeError))
    shape = (math.prod(sorted_sequence.shape[:-1]), n)      # (rows, N): a view where there is one
    rows = sorted_sequence.reshape(shape)
    order = sorter.reshape(shape) if sorter is not None else None
    return dispatch(SEARCHSORTED, rows, input, right=bool(right), out_int32=bool(out_int32), sorter=order)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """torch.searchsorted: where each value would be inserted into its row of the sorted
    boundaries (the left or, with right=True / side='right', the right insertion point)."""
    return _searchsorted(sorted_sequence, input, out_int32, right, side, sorter)


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """torch.bucketize: searchsorted(boundaries, input) for one row of boundaries."""
    if isinstance(boundaries, Tensor) and boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.dim()})")
    return _searchsorted(boundaries, input, out_int32, right, None, None, name="bucketize")


def _index_out(name, result, out):
    """searchsorted/bucketize: out's dtype follows out_int32 (the result's dtype says which)."""
    if out.dtype is not result.dtype:
        raise RuntimeError("torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
                           "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's "
                           f"dtype {_dt.type_name(out.dtype)} and out_int32 flag is {result.dtype is _dt.int32}")


declare("searchsorted", searchsorted, method=False, out=_index_out)
declare("bucketize", bucketize, method=False, out=_index_out)


# ------------------------------------------------------------------ outputs with no derivative
def _no_derivative(node_name, torch_op, inputs, outputs):
    """torch's node of an op without a derivative (Unique2Backward0 ...): when an input requires
    grad, the floating outputs do too, and differentiating them raises torch's error."""
    if not (is_grad_enabled() and any(isinstance(t, Tensor) and t.requires_grad for t in inputs)):
        return outputs
    node = node_class(node_name, DelayedError)(f"the derivative for '{torch_op}' is not implemented.",
                                               tuple(gradient_edge(t) for t in inputs if isinstance(t, Tensor)))
    for i, o in enumerate(outputs):
        if o.dtype.is_floating_point:
            o._grad_fn, o._output_nr = node, i
    return outputs


# ------------------------------------------------------------------ isin / argwhere
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """torch.isin: whether each of ``elements`` is among ``test_elements`` (compared in their
    common dtype; NaN is in nothing, -0.0 is 0.0): the test elements sorted, each element's
    insertion point searched (the binary-search kernel) and the value there compared."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(f"isin() received an invalid combination of arguments - got ({type(elements).__name__}, "
                        f"{type(test_elements).__name__}), but expected one of:\n"
                        " * (Tensor elements, Tensor test_elements, *, bool assume_unique = False, bool invert = False, Tensor out = None)\n"
                        " * (Number element, Tensor test_elements, *, bool assume_unique = False, bool invert = False, Tensor out = None)\n"
                        " * (Tensor elements, Number test_element, *, bool assume_unique = False, bool invert = False, Tensor out = None)\n")
    like = elements if isinstance(elements, Tensor) else test_elements
    common = _dt.result_type(elements, test_elements)
    for t in (elements, test_elements):
        if isinstance(t, Tensor) and t.dtype is _dt.bool_:
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    as_tensor = (lambda v: v.to(common) if isinstance(v, Tensor) else tensor(v, dtype=common, device=like.device))
    elements, test_elements = as_tensor(elements).detach(), as_tensor(test_elements).detach()
    with no_grad():
        tests = sort(test_elements.reshape(-1)).values
        m = tests.numel()
        if m == 0:
            found = zeros(tuple(elements.shape), dtype=_dt.bool_, device=elements.device)
        else:
            # NaN sorts last but compares false: searched as inf, so the binary search stays monotone
            keys = where(tests.isnan(), math.inf, tests) if tests.dtype.is_floating_point else tests
            at = _searchsorted(keys, elements, False, False, None, None)
            found = (at < m) & (tests.gather(0, at.clamp(max=m - 1).reshape(-1)).reshape(tuple(at.shape)) == elements)
    return ~found if invert else found


def argwhere(input):
    """torch.argwhere: the coordinates of the nonzero elements, (n, input.dim()) int64."""
    check_tensor("argwhere", input)
    return input.nonzero()


declare("isin", isin, method=False, out="exact")
declare("argwhere", argwhere)


# ------------------------------------------------------------------ unique / unique_consecutive
# Runs of equal values (NaN != NaN: each NaN its own run, as torch's) in the sorted values
# (unique) or in the input itself (unique_consecutive): the first of each run kept (the
# compaction kernel), the inverse from a cumsum of the run starts, the counts from the starts'
# positions. With ``dim``: runs of equal slices, the slices sorted lexicographically by stable
# sorts of their columns from the last (a least-significant-first radix sort).
def _run_starts(values, dim=None):
    """True where a run starts along dim 0 of ``values`` (rows: a slice differs anywhere)."""
    n = values.shape[0]
    first = ones_like(values.narrow(0, 0, 1), dtype=_dt.bool_)
    differs = cat([first, values.narrow(0, 1, n - 1) != values.narrow(0, 0, n - 1)], 0)
    return differs.reshape(n, -1).any(1) if values.dim() > 1 else differs


def _runs(starts, n, return_inverse, return_counts, order=None):
    """(run number of each position (in the input's order when ``order`` maps sorted positions
    to input positions), run lengths)."""
    inverse = counts = None
    if return_inverse:
        run = cumsum(starts, 0) - 1
        inverse = run if order is None else zeros((n,), dtype=_dt.int64, device=run.device).scatter(0, order, run)
    if return_counts:
        at = starts.nonzero().reshape(-1)
        ends = cat([at.narrow(0, 1, at.numel() - 1), tensor([n], device=at.device)])
        counts = ends - at
    return inverse, counts


def _unique_flat(input, sort_values, return_inverse, return_counts):
    flat = input.reshape(-1)
    n = flat.numel()
    if n == 0:
        empty_i = zeros((0,), dtype=_dt.int64, device=input.device)
        return flat.clone(), empty_i.reshape(tuple(input.shape)), empty_i
    values, order = sort(flat) if sort_values else (flat, None)
    starts = _run_starts(values)
    inverse, counts = _runs(starts, n, return_inverse, return_counts, order)
    return values[starts], (inverse.reshape(tuple(input.shape)) if inverse is not None else None), counts


def _unique_dim(name, input, dim, sort_values, return_inverse, return_counts):
    if input.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dim = wrap_dim(dim, input.dim())
    n = input.shape[dim]
    if input.numel() == 0 and n != 0:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    if n == 0:
        empty_i = zeros((0,), dtype=_dt.int64, device=input.device)
        return input.clone(), empty_i, empty_i
    rows = input.movedim(dim, 0).reshape(n, -1)
    order = None
    if sort_values:      # stable sorts of the columns, last first: the rows in lexicographic order
        order = arange(n, device=input.device)
        for j in range(rows.shape[1] - 1, -1, -1):
            order = order.gather(0, argsort(rows.select(1, j).gather(0, order)))
        rows = rows.index_select(0, order)
    starts = _run_starts(rows)
    inverse, counts = _runs(starts, n, return_inverse, return_counts, order)
    keep = starts.nonzero().reshape(-1)
    out = (input if order is None else input.index_select(dim, order)).index_select(dim, keep)
    return out, inverse, counts


def _unique(name, torch_op, node_name, input, sort_values, return_inverse, return_counts, dim):
    check_tensor(name, input)
    with no_grad():
        if dim is None:
            out, inverse, counts = _unique_flat(input, sort_values, return_inverse, return_counts)
        else:
            out, inverse, counts = _unique_dim(name, input, dim, sort_values, return_inverse, return_counts)
    out = out if out._base is None else out.clone()
    _no_derivative(node_name, torch_op, (input,), (out,))
    if not (return_inverse or return_counts):
        return out
    return (out,) + ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """torch.unique: the distinct values (or slices along ``dim``) in sorted order, with the index
    of each input element's value among them and their counts when asked. Always sorted (torch's
    sorted=False may return another order on cpu)."""
    node, op_name = ("Unique2Backward0", "_unique2") if dim is None else ("UniqueDimBackward0", "unique_dim")
    return _unique("unique", op_name, node, input, True, return_inverse, return_counts, dim)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """torch.unique_consecutive: the first of each run of equal consecutive values (or slices
    along ``dim``), with each element's run number and the run lengths when asked."""
    return _unique("unique_consecutive", "unique_consecutive", "UniqueConsecutiveBackward0", input, False,
                   return_inverse, return_counts, dim)


declare("unique", unique)
declare("unique_consecutive", unique_consecutive)


# ------------------------------------------------------------------ bincount / histc / histogram / histogramdd
# The bin of each element comes from torch's formulas (-1: not counted). Counts are one table
# entry, BIN_COUNT (kernels/sort.py count_kernel: int64 atomics, whose sums do not depend on
# their order); weighted sums are a deterministic scatter_add of the weights (ops/indexing.py:
# each bin summed by one lane, in input order, no float atomics). Like torch, the sizes and
# ranges read from the data are read on the host.
BIN_COUNT = op("bin_count", ("positions",), rule=lambda positions, size: Meta((size,), _dt.int64, _dt.int64),
               reference=numpy_sort.bin_count, kernel=lambda out, positions, *, compute, size: tsort.count(out, positions),
               differentiable=False)


def _counts(positions, size, dtype):
    """How often each of ``size`` bins occurs among int64 ``positions`` (< 0: not counted), in ``dtype``."""
    counts = dispatch(BIN_COUNT, positions.contiguous(), size=size)
    return counts if dtype is _dt.int64 else counts.to(dtype)

def _number_text(v):
    return "inf" if v == math.inf else "-inf" if v == -math.inf else "nan" if v != v else f"{v:g}"


def bincount(input, weights=None, minlength=0):
    """torch.bincount: how often each value of a 1-d non-negative integer tensor occurs (the sum
    of ``weights`` at its positions when given), over max(input) + 1 and at least ``minlength``
    bins; int64 counts, or weights' float32 / float64 for every other weights dtype."""
    check_tensor("bincount", input)
    if input.dtype.is_floating_point or input.dtype is _dt.bool_ or _unsigned.is_limited(input.dtype):
        kernel = backend_for(input.device).torch_name("bincount_cpu", "bincount_cuda")
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dt.type_name(input.dtype)}'")
    minlength = _as_int("bincount", minlength, "minlength", 3)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input.dim() != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.dim() != 1 or weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    n = input.numel()
    if n == 0:
        return zeros((minlength,), dtype=_dt.int64, device=input.device)
    with no_grad():
        low, high = int(input.amin().item()), int(input.amax().item())
        if low < 0:
            raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
        size = max(minlength, high + 1)
        index = input.to(_dt.int64)
        if weights is None:
            return _counts(index, size, _dt.int64)
        dtype = _dt.float32 if weights.dtype is _dt.float32 else _dt.float64
        out = zeros((size,), dtype=dtype, device=input.device).scatter_add(0, index, weights.to(dtype))
    return not_implemented_node("aten::bincount", (weights,), (out,))[0]


def _torch_linspace(low, high, steps, dtype):
    """torch's cpu linspace in the result's own dtype (first half forward from low, second half
    back from high), on the host: the bin edges, exactly as torch computes them."""
    t = dtype.numpy_dtype.type
    lo, hi = t(low), t(high)
    i = np.arange(steps)
    if steps == 1:
        return np.array([lo])
    step = (hi - lo) / t(steps - 1)
    with np.errstate(all="ignore"):
        return np.where(i < steps // 2, lo + step * i.astype(dtype.numpy_dtype),
                        hi - step * (steps - 1 - i).astype(dtype.numpy_dtype)).astype(dtype.numpy_dtype)


def histc(input, bins=100, min=0, max=0):
    """torch.histc: counts in ``bins`` equal bins over [min, max] (the data's range when min ==
    max; widened by 1 each way when that is one value), elements outside (and NaN) dropped; the
    bin is int((x - min) / (max - min) * bins) in the input's dtype, x == max the last one."""
    check_tensor("histc", input)
    bins = _as_int("histc", bins, "bins", 2)
    if not input.dtype.is_floating_point:
        kernel = backend_for(input.device).torch_name("histogram_cpu", "histogram_cuda")
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dt.type_name(input.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    low, high = float(min), float(max)
    with no_grad():
        if low == high and input.numel():
            low, high = input.amin().item(), input.amax().item()
            if low != low or high != high:
                raise RuntimeError("torch.histc: range of [-nan, -nan] is not finite")
        if low == high:
            low, high = low - 1, high + 1
        if not (math.isfinite(low) and math.isfinite(high)):
            raise RuntimeError(f"torch.histc: range of [{_number_text(low)}, {_number_text(high)}] is not finite")
        if low > high:
            raise RuntimeError("torch.histc: max must be larger than min")
        x = input.reshape(-1)
        lo, hi = (tensor(v, dtype=input.dtype, device=input.device) for v in (low, high))
        inside = (x >= lo) & (x <= hi)
        pos = ((x - lo) / (hi - lo) * bins).to(_dt.int64).clamp(max=bins - 1)
        return _counts(where(inside, pos, -1), bins, input.dtype)


def _histogramdd(api, input, bins, range_, weight, density):
    check_tensor(api, input)
    if input.dtype not in (_dt.float32, _dt.float64):
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_dt.type_name(input.dtype)}'")
    if input.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    D = input.shape[-1]
    points = input.reshape(-1, D)
    edges_given = not isinstance(bins, int) and all(isinstance(b, Tensor) for b in bins)
    counts = [bins] * D if isinstance(bins, int) else list(bins)
    if len(counts) != D:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    if weight is not None:
        if weight.dtype is not input.dtype:
            raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should "
                               f"have the same dtype, but got input({_dt.type_name(input.dtype).lower()}), and "
                               f"weight({_dt.type_name(weight.dtype).lower()})")
        if tuple(weight.shape) != tuple(input.shape[:-1]):
            raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                               "input tensor excluding its innermost dimension, but got input with shape "
                               f"{_shape_text(input.shape)} and weight with shape {_shape_text(weight.shape)}")
    if range_ is not None and len(range_) != 2 * D:
        raise RuntimeError(f"torch.histogramdd: for a {D}-dimensional histogram range should have {2 * D} elements, "
                           f"but got {len(range_)}")
    with no_grad():
        edges = []
        for d in builtins.range(D):
            if edges_given:
                e = counts[d]
                if e.dim() != 1:
                    raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, but got "
                                       f"{e.dim()} dimensions in the bins tensor for dimension {d}")
                if e.dtype is not input.dtype:
                    raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the same dtype, "
                                       f"but got input with dtype {_dt.type_name(input.dtype).lower()} and bins for "
                                       f"dimension {d} with dtype {_cpp_name(e.dtype)}")
                if e.numel() < 2:
                    raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {e.numel() - 1} for dimension {d}")
                edges.append(e.detach().clone())
                continue
            n_bins = _as_int(api, counts[d], "bins", 2)
            if n_bins <= 0:
                raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {n_bins} for dimension {d}")
            if range_ is not None:
                low, high = float(range_[2 * d]), float(range_[2 * d + 1])
            elif points.shape[0]:
                column = points.select(1, d)
                low, high = column.amin().item(), column.amax().item()
            else:
                low, high = 0.0, 1.0
            if not (math.isfinite(low) and math.isfinite(high)):
                raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{_number_text(low)}, "
                                   f"{_number_text(high)}] is not finite")
            if low > high:
                raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {_number_text(low)} "
                                   f"max {_number_text(high)} for dimension {d}")
            if low == high:
                low, high = low - 0.5, high + 0.5
            edges.append(tensor(_torch_linspace(low, high, n_bins + 1, input.dtype), device=input.device))
        # each point's bin along each dim: the last edge <= x (x == the last edge: the last bin)
        shape = tuple(e.numel() - 1 for e in edges)
        flat = zeros((points.shape[0],), dtype=_dt.int64, device=input.device)
        inside = ones_like(flat, dtype=_dt.bool_)
        for d, e in enumerate(edges):
            x = points.select(1, d).contiguous()
            inside = inside & (x >= e[0]) & (x <= e[-1])
            pos = (_searchsorted(e, x, False, True, None, None) - 1).clamp(0, shape[d] - 1)
            flat = flat * shape[d] + pos
        if weight is None:
            hist = _counts(where(inside, flat, -1), math.prod(shape), input.dtype).reshape(shape)
        else:
            keep = inside.nonzero().reshape(-1)
            hist = zeros((math.prod(shape),), dtype=input.dtype, device=input.device)
            hist = hist.scatter_add(0, flat.index_select(0, keep), weight.reshape(-1).index_select(0, keep)).reshape(shape)
        if density:      # torch's order: over the total, then over each dim's bin widths
            hist = hist / hist.sum()
            for d, e in enumerate(edges):
                width = e.narrow(0, 1, shape[d]) - e.narrow(0, 0, shape[d])
                hist = hist / width.reshape(tuple(-1 if i == d else 1 for i in builtins.range(D)))
    return hist, edges


def _cpp_name(dtype):
    return {"int64": "long int", "int32": "int", "float64": "double", "float32": "float"}.get(dtype.name, dtype.name)


def histogramdd(input, bins=10, *, range=None, weight=None, density=False):
    """torch.histogramdd: the histogram of the points in input's last dim (bins: a count for
    every dim, one per dim, or each dim's edges); returns (hist, bin_edges)."""
    hist, edges = _histogramdd("histogramdd", input, bins, range, weight, density)
    not_implemented_node("aten::_histogramdd_from_bin_cts", [t for t in (input, weight) if t is not None],
                         (hist,) + tuple(edges))
    return return_types.histogramdd(hist, tuple(edges))


def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """torch.histogram: the histogram of every element (bins: a count of equal bins over
    ``range`` or the data's, or the edges themselves); returns (hist, bin_edges)."""
    check_tensor("histogram", input)
    if isinstance(bins, Tensor):
        bins = [bins]
    hist, (edges,) = _histogramdd("histogram", input.reshape(-1, 1), bins, range,
                                  weight.reshape(-1) if isinstance(weight, Tensor) and weight.shape == input.shape
                                  else weight, density)
    not_implemented_node("aten::histogram", [t for t in (input, weight) if t is not None], (hist, edges))
    return return_types.histogram(hist, edges)


def _histc_out(name, result, out):
    if out.dtype is not result.dtype:
        raise RuntimeError("torch.histogram: input tensor and hist tensor should have the same dtype, but got input "
                           f"{_dt.type_name(result.dtype).lower()} and hist {_dt.type_name(out.dtype).lower()}")


declare("bincount", bincount)
declare("histc", histc, out=_histc_out)
declare("histogram", histogram, out="exact")
declare("histogramdd", histogramdd, method=False)
