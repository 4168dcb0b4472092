"""Reductions over any set of dims, read in place: sum (primitive); mean and sum_to_size on top."""
from __future__ import annotations

from .. import dtypes as _dt
from ..backends import numpy_ref
from ..backends import triton as tb
from ..tensor import Tensor
from .dispatch import dispatch
from .table import Meta, op
from .views import _wrap


def normalize_dims(x, dim):
    """torch's dim argument: None (all), an int, or a tuple/list of ints; returns sorted dims."""
    if dim is None:
        return tuple(range(x.dim()))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) == 0:
        return tuple(range(x.dim()))
    wrapped = [_wrap(d, x.dim()) for d in dims]
    for d in set(wrapped):
        if wrapped.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return tuple(sorted(set(wrapped))) if x.dim() else ()


def reduced_shape(shape, dims, keepdim):
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def _sum_rule(x, dims, keepdim, dtype, **_):
    out = dtype or (_dt.int64 if not x.dtype.is_floating_point else x.dtype)
    return Meta(reduced_shape(x.shape, dims, keepdim), out, _dt.compute_dtype(out))


def _reduce_launcher(name):
    def launch(out, x, *, compute, dims, keepdim, **_):
        # The kernel writes a contiguous result of the reduced shape; size-1 keepdim dims do
        # not change that layout, so the same memory serves both shapes.
        flat = Tensor._make(out._storage, reduced_shape(x.shape, dims, False),
                            _contiguous(reduced_shape(x.shape, dims, False)), out._offset, out.dtype)
        tb.reduce(name, flat, x, dims, compute)
    return launch


def _contiguous(shape):
    from ..tensor import contiguous_strides
    return contiguous_strides(shape)


def _sum_reference(x, dims, keepdim, dtype, **_):
    return numpy_ref.reduce("sum")(x, dims, keepdim)


def _sum_backward(ctx, g):
    shape = ctx.input_meta[0][0]
    if not ctx.keepdim:
        for d in ctx.dims:
            g = g.unsqueeze(d)
    return g.expand(shape)


SUM = op("sum", ("x",), rule=_sum_rule, reference=_sum_reference, kernel=_reduce_launcher("sum"),
         backward=_sum_backward,
         grad_name=lambda args, attrs: "SumBackward1" if attrs.get("dim_given") else "SumBackward0")


def sum(input, dim=None, keepdim=False, *, dtype=None):
    dims = normalize_dims(input, dim)
    if dtype is not None:
        dtype = _dt.as_dtype(dtype)
    return dispatch(SUM, input, dims=dims, keepdim=keepdim, dtype=dtype, dim_given=dim is not None)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    out_dtype = _dt.as_dtype(dtype) if dtype is not None else input.dtype
    if not out_dtype.is_floating_point:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {_dt.type_name(input.dtype)}")
    dims = normalize_dims(input, dim)
    count = 1
    for d in dims:
        count *= input.shape[d]
    total = sum(input, dim, keepdim, dtype=out_dtype)
    return total / count   # the mean of nothing is 0/0 = nan, as in torch


def sum_to_size(x, *shape):
    """Sum ``x`` down to ``shape`` (the reverse of broadcasting ``shape`` up to ``x.shape``)."""
    shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else tuple(shape)
    if tuple(x.shape) == shape:
        return x
    lead = x.dim() - len(shape)
    if lead < 0 or any(s != 1 and s != x.shape[lead + i] for i, s in enumerate(shape)):
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size {{{list(x.shape)}}}.")
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and x.shape[lead + i] != 1)
    out = sum(x, dims, keepdim=True) if dims else x
    return out.view(shape) if lead else out
