"""Sorting and selection: sort, argsort, msort, topk (the merge-sort kernels of kernels/sort.py,
launched by backends/triton/sort.py; NumPy references in backends/numpy_sort.py).

Order, as torch's: NaN is the largest value (last ascending, first descending), -0.0 equals 0.0,
and every sort here is stable (``stable=`` is accepted and always honoured), so equal values keep
their order and ties are deterministic. Where torch leaves the index of a tie unspecified (topk's
order of equal values, kthvalue's index among equal values: torch's cpu quickselect picks one),
tritensor's is the stable order's.

sort and topk are table entries with two outputs (ops/table.py), values and int64 indices; their
gradient sends each output gradient back to the input position its index names (torch's
value_selecting_reduction_backward: a scatter into zeros, written with tritensor ops so that it is
differentiable again). The public functions return torch.return_types named tuples.
"""
from __future__ import annotations

import operator

from .. import dtypes as _dt
from ..backends import numpy_sort
from ..backends.base import backend_for
from ..backends.triton import sort as tsort
from ._checks import check_tensor
from ._return_types import return_types
from ._shapes import wrap_dim
from .creation import zeros
from .dispatch import dispatch
from .indexing import scatter
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
