"""Reductions over any set of dims, read in place: sum (primitive); mean and sum_to_size on top;
prod, amax/amin, argmax/argmin, max/min, var/std, norms, logsumexp, all/any/count_nonzero.
Scans live in scan.py, the softmax family in softmax.py (as in kernels/)."""
from __future__ import annotations

from .._autocast import autocast_policy as _autocast_policy

import builtins as _builtins
import math as _math
import warnings

import numpy as np

from .. import dtypes as _dt
from ..autograd import anomaly as _anomaly
from ..autograd.composite import named_composite
from ..autograd.grad_mode import _state as _grad_state
from ..autograd.graph import Node, gradient_edge, node_class
from ..autograd.grad_mode import is_grad_enabled as _grad_enabled
from ..autograd.grad_mode import no_grad
from ..backends import numpy_reduce, numpy_ref
from ..backends import triton as tb
from ..tensor import Tensor
from . import elementwise as _ew
from . import _unsigned
from . import pointwise as _pw
from ._checks import check_int_dim, check_tensor
from ._sparse import not_supported
from ._return_types import return_types
from ._shapes import contiguous_strides, normalize_dims, reduced_shape, wrap_dim
from .copy import copy_into
from .creation import ones, zeros
from .joining import cat, flip
from .dispatch import dispatch
from .table import FROM_BACKWARD, LINEAR, Meta, op, signature_rule
from .views import EXPAND


@signature_rule
def _sum_rule(x, dims, keepdim, dtype, **_):
    out = dtype or (_dt.int64 if not x.dtype.is_floating_point else x.dtype)
    return Meta(reduced_shape(x.shape, dims, keepdim), out, _dt.compute_dtype(out))


def _reduce_launcher(name):
    def launch(out, x, *, compute, dims, keepdim, **_):
        # The kernel writes a contiguous result of the reduced shape; size-1 keepdim dims do
        # not change that layout, so the same memory serves both shapes.
        flat = Tensor._make(out._storage, reduced_shape(x.shape, dims, False),
                            contiguous_strides(reduced_shape(x.shape, dims, False)), out._offset, out.dtype)
        tb.reduce(name, flat, x, dims, compute)
    return launch


def _sum_backward(ctx, g):
    return _expand_back(g, ctx)


SUM = op("sum", ("x",), jvp=LINEAR, rule=_sum_rule, reference=numpy_ref.reduce("sum"), kernel=_reduce_launcher("sum"),
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
        which = "Input" if dtype is None else "Optional"
        raise RuntimeError(
            f"mean(): could not infer output dtype. {which} dtype must be either a floating point or "
            f"complex dtype. Got: {_dt.type_name(out_dtype)}")
    if input._is_sparse_coo or input._is_sparse_csr:    # (sum has a sparse form; mean, as torch's, has none)
        raise not_supported("mean.out" if input._is_sparse_csr else "mean.dim", input)
    dims = normalize_dims(input, dim)
    count = 1
    sizes = tuple(input._shape)       # (a plain tuple: Size's own __getitem__ is a Python call)
    for d in dims:
        count *= sizes[d]
    # one node, as torch's: MeanBackward0 for the whole tensor, MeanBackward1 over dims
    name = "MeanBackward0" if dim is None else "MeanBackward1"
    if dtype is None and _grad_state.enabled and input.requires_grad:
        # the common case (every loss's mean): the node's backward written directly
        return _recorded_mean(name, input, dims, keepdim, count,
                              _unrecorded(_mean_value, input, dim, keepdim, out_dtype, count))
    return named_composite(name, _mean_value, input, dim, keepdim, out_dtype, count)


def _mean_value(input, dim, keepdim, dtype, count):
    return sum(input, dim, keepdim, dtype=dtype) / count   # the mean of nothing is 0/0 = nan, as in torch


def _unrecorded(fn, *args):
    """fn(*args) with grad mode off (set directly, as the engine does: no context manager)."""
    prev = _grad_state.enabled
    _grad_state.enabled = False
    try:
        return fn(*args)
    finally:
        _grad_state.enabled = prev


class _MeanNode(Node):
    """mean's node (MeanBackward0/1) when no dtype is asked: the gradient is ``grad / count``
    expanded back to the input's shape, in tritensor ops (so create_graph=True records them),
    the same values the composite ``sum / count`` gives (DivBackward0, then SumBackward's
    expand), without running the engine over an inner graph on every backward (issue 14)."""

    def apply(self, grads):
        g = grads[0] if grads else None
        if g is None:
            return (None,)
        return (_expand_back(dispatch(_ew.DIV, g, self.count), self),)


def _recorded_mean(name, input, dims, keepdim, count, out):
    node = node_class(name, _MeanNode)()
    node.next_functions = (gradient_edge(input),)
    node.count, node.dims, node.keepdim = count, dims, keepdim
    node.input_meta = ((input._shape, input.dtype, input._storage.device),)    # as _expand_back reads it
    if _anomaly._enabled:
        _anomaly.record_trace(node)
    out._grad_fn = node       # (out is a fresh result: no history of its own)
    out._output_nr = 0
    return out


def sum_to_size(x, *shape):
    """Sum ``x`` down to ``shape`` (the reverse of broadcasting ``shape`` up to ``x.shape``)."""
    shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else tuple(shape)
    if not shape and x.dim() == 0:
        return sum(x)     # torch's sum_to: the shape () is always a full sum (an integer becomes int64)
    if tuple(x.shape) == shape:
        return x
    lead = x.dim() - len(shape)
    if lead < 0 or _builtins.any(s != 1 and s != x.shape[lead + i] for i, s in enumerate(shape)):
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size {{{list(x.shape)}}}.")
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and x.shape[lead + i] != 1)
    out = sum(x, dims, keepdim=True) if dims else x
    return out.view(shape) if lead else out


# =========================================================================== issue 4: the rest


def _reduces_all(dim):
    return dim is None or (not isinstance(dim, int) and len(dim) == 0)


def _check_nonempty_all(name, x, dim):
    """amax/amin/max/min of a whole empty tensor: torch asks for a dim."""
    if _reduces_all(dim) and x.numel() == 0:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")


def _check_nonempty(name, x, dims, given=None):
    """A reduction over an empty dim has no identity: torch's IndexError, naming the dim as the
    caller gave it (``given``: -1 stays -1)."""
    named = dict(zip(dims, dims))
    if given is not None and not _reduces_all(given):
        named = {wrap_dim(d, x.dim()): d for d in ((given,) if isinstance(given, int) else given)}
    for d in dims:
        if x.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {named.get(d, d)} to have non-zero size.")


def _expand_back(g, ctx):
    """g (the reduced shape) unsqueezed back to keepdim form and expanded to the input's shape."""
    shape = ctx.input_meta[0][0]
    if not ctx.keepdim and g._shape:      # a 0-d g (a full reduction) expands as it is
        for d in ctx.dims:
            g = g.unsqueeze(d)
    # expand's own dispatch (a plain tuple: the view layout cache keys it): no front end per
    # backward (issue 14)
    return dispatch(EXPAND, g, shape=tuple(shape))


def _keep(t, ctx):
    """An output of the reduced shape, in keepdim form (broadcastable against the input)."""
    if not ctx.keepdim:
        for d in ctx.dims:
            t = t.unsqueeze(d)
    return t


# ------------------------------------------------------------------ prod
def _prod_backward(ctx, g):
    """torch's prod_backward, branch for branch, so that inf and zero inputs give torch's values
    (inf, 0 or NaN as its formulas do, never an inf * 0 of tritensor's own): without zeros
    g * out / x; with zeros the product of the others from exclusive cumprods both ways; a
    whole-tensor product with several zeros outside create_graph is zeros, as torch shortcuts."""
    x, out = ctx.x, _keep(ctx.out, ctx)
    g = _keep(g, ctx)
    if x.dtype is not g.dtype:
        x = x.to(g.dtype)
    shape = tuple(ctx.input_meta[0][0])
    if not shape:
        return g.reshape(())
    n_zero = int(sum(_ew.eq(x, 0)).item())      # torch takes the same host decision
    if n_zero == 0:
        return _ew.mul(g.expand(shape), _ew.div(out, x))
    if ctx.dim_given:
        return _prod_safe_zeros_backward(g, x, ctx.dims[0])
    if n_zero > 1 and not _grad_enabled():
        return zeros(shape, dtype=g.dtype, device=g.device)
    flat = _prod_safe_zeros_backward(g.reshape((1,)), x.reshape((x.numel(),)), 0)
    return flat.reshape(shape)


def _prod_safe_zeros_backward(g, x, dim):
    """The product of every element but one along dim, as exclusive cumprods from both ends
    (torch's prod_safe_zeros_backward)."""
    from .scan import cumprod   # late import: scan.py sits above reduce.py (cumprod's gradient sums)
    n = x.shape[dim]
    if x.numel() == 0:
        return g.expand(tuple(x.shape))
    ones_shape = tuple(1 if i == dim else s for i, s in enumerate(x.shape))
    one = ones(ones_shape, dtype=g.dtype, device=g.device)
    normal = cumprod(cat([one, x.narrow(dim, 0, n - 1)], dim), dim)
    reverse = flip(cumprod(cat([one, flip(x.narrow(dim, 1, n - 1), [dim])], dim), dim), [dim])
    return _ew.mul(g, _ew.mul(normal, reverse))


PROD = op("prod", ("x",), jvp=FROM_BACKWARD, rule=_sum_rule, reference=numpy_ref.reduce("prod"), kernel=_reduce_launcher("prod"),
          backward=_prod_backward, saves=("x", "out"),
          grad_name=lambda args, attrs: "ProdBackward1" if attrs.get("dim_given") else "ProdBackward0")


def prod(input, dim=None, keepdim=False, *, dtype=None):
    check_tensor("prod", input)
    check_int_dim("prod", dim)
    dims = normalize_dims(input, dim)
    if dtype is not None:
        dtype = _dt.as_dtype(dtype)
    return dispatch(PROD, input, dims=dims, keepdim=keepdim, dtype=dtype, dim_given=dim is not None)


# ------------------------------------------------------------------ amax / amin
@signature_rule
def _same_rule(x, dims, keepdim, **_):
    return Meta(reduced_shape(x.shape, dims, keepdim), x.dtype, _dt.compute_dtype(x.dtype))


def _extremum_backward(ctx, g):
    """torch's amax/amin rule: the gradient is split evenly among the elements equal to the result.
    max()/min() of a whole tensor (torch's evenly_distribute_backward) and the inf-norms also count
    NaN as equal to a NaN result; amax/amin do not (a NaN result gets a NaN gradient, as in torch)."""
    x, out = ctx.x, _keep(ctx.out, ctx)
    hit = _ew.eq(x, out)
    if ctx.attrs.get("nan_ties"):
        hit = _pw.logical_or(hit, _pw.logical_and(_pw.isnan(x), _pw.isnan(out)))
    hit = hit.to(g.dtype)
    count = sum(hit, ctx.dims, keepdim=True)
    return _ew.mul(_expand_back(g, ctx), _ew.div(hit, count))


def _extremum_grad_name(name):
    # max()/min() of a whole tensor are torch's MaxBackward1/MinBackward1
    def grad_name(args, attrs):
        return attrs.get("whole_name") or f"{name.capitalize()}Backward0"
    return grad_name


AMAX = op("amax", ("x",), jvp=FROM_BACKWARD, rule=_same_rule, reference=numpy_ref.reduce("amax"), kernel=_reduce_launcher("amax"),
          backward=_extremum_backward, saves=("x", "out"), grad_name=_extremum_grad_name("amax"))
AMIN = op("amin", ("x",), jvp=FROM_BACKWARD, rule=_same_rule, reference=numpy_ref.reduce("amin"), kernel=_reduce_launcher("amin"),
          backward=_extremum_backward, saves=("x", "out"), grad_name=_extremum_grad_name("amin"))


def amax(input, dim=(), keepdim=False):
    check_tensor("amax", input)
    _check_nonempty_all("amax", input, dim)
    dims = normalize_dims(input, dim)
    _check_nonempty("amax", input, dims, dim)
    return dispatch(AMAX, input, dims=dims, keepdim=keepdim)


def amin(input, dim=(), keepdim=False):
    check_tensor("amin", input)
    _check_nonempty_all("amin", input, dim)
    dims = normalize_dims(input, dim)
    _check_nonempty("amin", input, dims, dim)
    return dispatch(AMIN, input, dims=dims, keepdim=keepdim)


# ------------------------------------------------------------------ argmax / argmin
def _arg_rule(x, dim, keepdim, **_):
    if dim is None:
        shape = (1,) * x.dim() if keepdim else ()
    else:
        shape = reduced_shape(x.shape, (dim,) if x.dim() else (), keepdim)
    return Meta(shape, _dt.int64, _dt.compute_dtype(x.dtype))


def _arg_launcher(name):
    def launch(out, x, *, compute, dim, keepdim, **_):
        d = None if (dim is None or x.dim() == 0) else dim
        flat_shape = () if d is None else reduced_shape(x.shape, (d,), False)
        flat = Tensor._make(out._storage, flat_shape, contiguous_strides(flat_shape), out._offset, out.dtype)
        tb.arg_reduce(name, flat, x, d, compute)
    return launch


ARGMAX = op("argmax", ("x",), rule=_arg_rule, reference=numpy_ref.arg_reduce("argmax"),
            kernel=_arg_launcher("argmax"), differentiable=False)
ARGMIN = op("argmin", ("x",), rule=_arg_rule, reference=numpy_ref.arg_reduce("argmin"),
            kernel=_arg_launcher("argmin"), differentiable=False)


def _arg(entry, name, input, dim, keepdim, bool_ok=False):
    check_tensor(name, input)
    check_int_dim(name, dim)
    if input.dtype is _dt.bool_ and not bool_ok:     # max(dim) of bools is fine, argmax is not
        raise RuntimeError(f"{name}(): does not support bool input")
    if dim is None:
        if input.numel() == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
    else:
        dim = wrap_dim(dim, input.dim())
        if input.dim():
            _check_nonempty(name, input, (dim,))
    return dispatch(entry, input, dim=dim, keepdim=keepdim)


def argmax(input, dim=None, keepdim=False):
    return _arg(ARGMAX, "argmax", input, dim, keepdim)


def argmin(input, dim=None, keepdim=False):
    return _arg(ARGMIN, "argmin", input, dim, keepdim)


# ------------------------------------------------------------------ max / min
def _max_min(name, input, dim, keepdim, other, other_fn, whole_entry, arg_entry):
    check_tensor(name, input)
    if other is not None and dim is None:
        dim = other
    if isinstance(dim, Tensor):                     # torch.max(a, b) is maximum
        return other_fn(input, dim)
    if isinstance(dim, (tuple, list, bool, float)):     # torch.max(x, 2.5) is no dim
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({type(dim).__name__}), but expected one of:\n"
                        " * (Tensor input, int dim, bool keepdim = False)\n * (Tensor input, Tensor other)")
    _unsigned.refuse(f"{name}_all" if dim is None else f"{name}_cpu", input.dtype, input.device)
    if dim is None:
        _check_nonempty_all(name, input, None)
        # torch's MaxBackward1: the gradient is split among the elements equal to the result,
        # NaN counting as equal to a NaN result
        return dispatch(whole_entry, input, dims=normalize_dims(input, None), keepdim=False,
                        nan_ties=True, whole_name=f"{name.capitalize()}Backward1")
    dim = wrap_dim(dim, input.dim())
    tuple_type = getattr(return_types, name)
    node_name = f"{name.capitalize()}Backward0"     # torch's MaxBackward0 / MinBackward0
    if input.dim() == 0:
        return tuple_type(named_composite(node_name, lambda t: t.clone(), input), _zeros_index(input))
    _check_nonempty(name, input, (dim,))
    indices = _arg(arg_entry, "arg" + name, input, dim, keepdim, bool_ok=True)
    if input.requires_grad and _grad_enabled() and input.dtype.is_floating_point:
        values = named_composite(node_name, _value_at, input, indices if keepdim else indices.unsqueeze(dim),
                                 dim, keepdim)
    else:
        values = (amax if name == "max" else amin)(input, dim, keepdim)
    return tuple_type(values, indices)


def _value_at(input, idx, dim, keepdim):
    """The value at the index, as a differentiable selection: the gradient goes to the index.
    A gather, so the value is the element itself (a masked sum would turn -0.0 into 0.0)."""
    picked = input.gather(dim, idx)    # (the method: ops/indexing.py imports this module)
    return picked if keepdim else picked.squeeze(dim)


def _zeros_index(x):
    return zeros((), dtype=_dt.int64, device=x.device)


def max(input, dim=None, keepdim=False, *, other=None):
    return _max_min("max", input, dim, keepdim, other, _ew.maximum, AMAX, ARGMAX)


def min(input, dim=None, keepdim=False, *, other=None):
    return _max_min("min", input, dim, keepdim, other, _ew.minimum, AMIN, ARGMIN)


# ------------------------------------------------------------------ var / std
def _float_only(name, x):
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{name}(): input dtype should be either floating point or complex dtypes. "
                           f"Got {_dt.type_name(x.dtype)} instead.")


def _widen(x):
    return x.to(_dt.float32) if x.dtype in (_dt.float16, _dt.bfloat16) else x


def _var(name, input, dim, unbiased, keepdim, correction):
    check_tensor(name, input)
    if isinstance(dim, bool):          # var(x, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got both unbiased and "
                        "correction, but expected one of:\n * (Tensor input, tuple of ints dim, bool unbiased = True, "
                        "bool keepdim = False)\n * (Tensor input, tuple of ints dim = None, *, Number correction = None, "
                        "bool keepdim = False)")
    if not input.dtype.is_floating_point:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    dims = normalize_dims(input, dim)
    n = 1
    for d in dims:
        n *= input.shape[d]
    if n - correction <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=3)
    dim_given = not _reduces_all(dim) and input.dim() > 0
    if name == "std":    # one StdBackward0 node, as torch's
        return named_composite("StdBackward0", _std_value, input, dims, keepdim, correction, dim_given)
    return dispatch(VAR, input, dims=dims, keepdim=keepdim, correction=correction, dim_given=dim_given)


def _std_value(input, dims, keepdim, correction, dim_given):
    out = dispatch(VAR, input, dims=dims, keepdim=keepdim, correction=correction, dim_given=dim_given)
    return _zero_safe(_ew.sqrt, out)     # torch's std_backward: 0 where std is 0


def _var_value(x, dims, keepdim, correction):
    """sum((x - mean)^2) / max(n - correction, 0), computed in float32 for the half types."""
    n = 1
    for d in dims:
        n *= x.shape[d]
    x = _widen(x)
    centered = _ew.sub(x, mean(x, dims, keepdim=True))
    return _ew.div(sum(_ew.mul(centered, centered), dims, keepdim), _builtins.max(n - correction, 0))


def _var_rule(x, dims, keepdim, correction, dim_given):
    return Meta(reduced_shape(x.shape, dims, keepdim), x.dtype, _dt.compute_dtype(x.dtype))


def _var_launch(out, x, *, compute, dims, keepdim, correction, dim_given):
    with no_grad():
        copy_into(out, _var_value(x, dims, keepdim, correction))


def _var_backward(ctx, g):
    """torch's var_backward: 2 / (n - correction) * g * (x - mean(x)), so that an inf input gives
    its -inf/NaN values (not the NaN the composite's chain rule gives everywhere); with no
    degrees of freedom and no dim, g * (NaN where x == mean, else inf)."""
    x = ctx.x
    shape = tuple(ctx.input_meta[0][0])
    g = _keep(g, ctx)
    n = 1
    for d in ctx.dims:
        n *= shape[d]
    dof = n - ctx.correction
    mu = mean(x, ctx.dims, keepdim=True)
    centered = _ew.sub(x, mu)
    if dof <= 0 and not ctx.dim_given:
        return _ew.mul(g, _ew.where(_ew.eq(x, mu), _math.nan, _math.inf))
    scale = 2.0 / dof if dof != 0 else _math.inf
    return _ew.mul(_ew.mul(g, scale), centered)


VAR = op("var", ("x",), jvp=FROM_BACKWARD, rule=_var_rule, reference=numpy_reduce.var, kernel=_var_launch,
         backward=_var_backward, saves=("x",),
         grad_name=lambda args, attrs: "VarBackward0")


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var("var", input, dim, unbiased, keepdim, correction)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var("std", input, dim, unbiased, keepdim, correction)


def _zero_safe(root, v):
    """root(v) for a root (sqrt, or s ** (1/p)) whose derivative is infinite at 0, with 0 there;
    torch defines the gradient of std and of the p-norms at 0 as 0. Zeros are routed around the
    root so that no inf * 0 reaches the gradient."""
    zero = _ew.eq(v, 0)
    return _ew.where(zero, 0.0, root(_ew.where(zero, 1.0, v)))


# ------------------------------------------------------------------ norm / logsumexp
def _norm_check_empty(input, p, dim, dims):
    """inf and negative norms have no identity: torch refuses them over empty dims."""
    if not (p < 0 or p == _math.inf):
        return
    if dim is None and input.numel() == 0:
        raise RuntimeError(f"linalg.vector_norm cannot compute the {float(p):g} norm on an empty tensor "
                           "because the operation does not have an identity")
    for d in dims:
        if input.shape[d] == 0:   # (sic: torch's message has no space before "because")
            raise RuntimeError(f"linalg.vector_norm cannot compute the {float(p):g} norm on the dimension {d}"
                               "because this dimension is empty and the operation does not have an identity")


def _norm(input, p, dim, keepdim, dtype):
    check_tensor("norm", input)
    if not input.dtype.is_floating_point:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. "
                           f"Got {_dt.type_name(input.dtype)}")
    if dtype is not None:
        dtype = _dt.as_dtype(dtype)
        if not dtype.is_floating_point:
            raise RuntimeError("linalg.vector_norm: dtype should be floating point or complex, but got "
                               f"{_dt.type_name(dtype)}")
        if _dt.promote_types(input.dtype, dtype) is not dtype:
            raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({_dt.type_name(input.dtype)}) "
                               "should be convertible without narrowing to the specified dtype "
                               f"({_dt.type_name(dtype)})")
        input = input.to(dtype)
    if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not {type(p).__name__}")
    dims = normalize_dims(input, dim)
    _norm_check_empty(input, p, dim, dims)
    x = _widen(input)
    a = _ew.abs(x)
    if p == 2:
        out = _zero_safe(_ew.sqrt, sum(_ew.mul(x, x), dims, keepdim))
    elif p == 1:
        out = sum(a, dims, keepdim)
    elif p == _math.inf or p == -_math.inf:
        # torch's gradient: split evenly among the elements of largest (smallest) |x|, NaN among NaNs
        out = dispatch(AMAX if p > 0 else AMIN, a, dims=dims, keepdim=keepdim, nan_ties=True)
    elif p == 0:
        # the number of nonzeros; differentiable with a zero gradient, as in torch
        out = sum(_ew.where(_ew.ne(x, 0), 1.0, _ew.mul(x, 0.0)), dims, keepdim)
    else:
        # |x|^p with its derivative at x = 0 taken as 0 (torch masks it for p < 1), and for p > 0
        # the root's derivative at a zero sum taken as 0 (torch's norm_backward)
        zero = _ew.eq(a, 0)
        ap = _ew.where(zero, _ew.pow(a.detach(), p), _ew.pow(_ew.where(zero, 1.0, a), p))
        s = sum(ap, dims, keepdim)
        if p > 0:
            out = _zero_safe(lambda t: _ew.pow(t, 1.0 / p), s)
        else:
            out = _ew.pow(s, 1.0 / p)
    return out.to(input.dtype) if out.dtype is not input.dtype else out


@_autocast_policy("logsumexp")
def logsumexp(input, dim, keepdim=False):
    check_tensor("logsumexp", input)
    return named_composite("LogsumexpBackward0", _logsumexp, input, dim, keepdim)


def _logsumexp(input, dim, keepdim):
    x = input if input.dtype.is_floating_point else input.to(_dt.get_default_dtype())
    xw = _widen(x)
    dims = normalize_dims(x, dim)
    if _builtins.any(x.shape[d] == 0 for d in dims):
        out = _ew.log(sum(_ew.exp(xw), dims, keepdim))
    else:
        m = amax(xw.detach(), dims, keepdim=True)
        m = _ew.where(_ew.eq(_ew.abs(m), _math.inf), 0.0, m)     # all -inf (or inf): no shift
        out = _ew.log(sum(_ew.exp(_ew.sub(xw, m)), dims, keepdim))
        out = _ew.add(out, m if keepdim else m.view(out.shape))
    return out.to(x.dtype) if out.dtype is not x.dtype else out


# ------------------------------------------------------------------ all / any / count_nonzero
# One primitive: the number of nonzero elements (NaN counts, as it is truthy). The kernel tests
# each loaded element, so no temporary bool tensor is written and read back; any and all compare
# the (small) count with 0 and with the number of elements reduced.
def _count_nonzero_rule(x, dims, keepdim, **_):
    return Meta(reduced_shape(x.shape, dims, keepdim), _dt.int64, _dt.compute_dtype(x.dtype))


COUNT_NONZERO = op("count_nonzero", ("x",), rule=_count_nonzero_rule, reference=numpy_reduce.count_nonzero,
                   kernel=_reduce_launcher("count_nonzero"), differentiable=False)


def _count(name, input, dim, keepdim):
    check_tensor(name, input)
    dims = normalize_dims(input, dim)
    n = 1
    for d in dims:
        n *= input.shape[d]
    return dispatch(COUNT_NONZERO, input, dims=dims, keepdim=keepdim), n


def _logical_result(name, input, dim, reduce):
    check_tensor(name, input)
    if dim is not None and not isinstance(dim, int) and len(dim) == 0:
        out = _ew.ne(input, 0)            # torch's all/any over dim=() reduce nothing
    else:
        out = reduce()
    return out.to(_dt.uint8) if input.dtype is _dt.uint8 else out   # torch keeps uint8


def _truth(input):
    """uint16/32/64 have no count kernel in torch, but all/any: theirs reads x != 0."""
    return _ew.ne(input, 0) if isinstance(input, Tensor) and _unsigned.is_limited(input.dtype) else input


def all(input, dim=None, keepdim=False):
    def reduce():
        count, n = _count("all", _truth(input), dim, keepdim)
        return _ew.eq(count, n)
    return _logical_result("all", input, dim, reduce)


def any(input, dim=None, keepdim=False):
    def reduce():
        return _ew.ne(_count("any", _truth(input), dim, keepdim)[0], 0)
    return _logical_result("any", input, dim, reduce)


def count_nonzero(input, dim=None):
    # torch: uint16/32/64 have no whole-tensor count kernel, but count along dims (x != 0).sum(dims)
    return _count("count_nonzero", input if dim is None else _truth(input), dim, False)[0]
