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

import math
import operator

from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..backends import numpy_sort
from ..backends.base import backend_for
from ..backends.triton import sort as tsort
from ..tensor import Tensor
from ._checks import check_tensor
from ._return_types import return_types
from ._shapes import reduced_shape, wrap_dim
from .copy import copy_into
from .creation import ones_like, tensor, zeros
from .dispatch import dispatch
from .elementwise import where
from .indexing import scatter
from .joining import cat
from .scan import cumsum
from .surface import declare
from .table import Meta, op


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


SORT = op("sort", ("x",), outputs=("values", "indices"), rule=_sort_rule, reference=numpy_sort.sort,
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


TOPK = op("topk", ("x",), outputs=("values", "indices"), rule=_topk_rule, reference=numpy_sort.topk,
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


KTHVALUE = op("kthvalue", ("x",), outputs=("values", "indices"), rule=_selection_rule,
              reference=numpy_sort.kthvalue, kernel=_kthvalue_launch, backward=_select_backward,
              saves=("indices",))
MEDIAN = op("median", ("x",), outputs=("values", "indices"), rule=_selection_rule, reference=numpy_sort.median,
            kernel=_median_launch, backward=_select_backward, saves=("indices",),
            grad_name=lambda args, attrs: "NanmedianBackward1" if attrs["ignore_nan"] else "MedianBackward1")
MODE = op("mode", ("x",), outputs=("values", "indices"), rule=_selection_rule, reference=numpy_sort.mode,
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


MEDIAN_ALL = op("median_all", ("x",), rule=lambda x, ignore_nan: Meta((), x.dtype, x.dtype),
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
    want exact dtypes (write_out checks tuples itself)."""
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
