"""The rest of torch's reductions, scans and comparisons (issue 21.3): nansum, nanmean, aminmax,
logcumsumexp, cummax/cummin, std_mean/var_mean, isclose/allclose/equal, renorm, hash_tensor.

Primitives (a table entry, a kernel, a NumPy reference in backends/numpy_reduce.py, torch's
backward written in tritensor ops):

  nansum        the reduce kernel reading NaN as 0 on the loaded value (one pass; the composite
                sum(where(isnan(x), 0, x)) would write and read a temporary the size of x)
  aminmax       one entry with two outputs (min, max): two passes of the reduce kernel
  logcumsumexp  the scan kernel with a log-add-exp combine (kernels/scan.py)
  cummax/cummin the (value, index) scan kernel: NaN propagates, ties take the later index
  std_mean/var_mean   one entry with two outputs, so that one StdMeanBackward0 node holds both
  renorm        an entry (so that renorm_ records RenormBackward0 in place) computed with ops
  hash_tensor   the reduce kernel with an xor combine over the elements' 64-bit patterns (int64,
                read back as uint64); not differentiable, as torch's

Composites: nanmean (nansum / count, torch's own definition: DivBackward0), isclose, allclose,
equal (bool results, nothing to differentiate).
"""
from __future__ import annotations

import math as _math
import numbers
import warnings

import numpy as np

from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..backends import numpy_reduce
from ..backends import triton as tb
from ..backends.base import backend_for
from ..tensor import Tensor
from . import elementwise as _ew
from . import pointwise as _pw
from . import _unsigned
from ._checks import check_tensor
from ._return_types import return_types
from ._shapes import contiguous_strides, normalize_dims, reduced_shape, wrap_dim
from .copy import copy_into
from .creation import zeros
from .dispatch import dispatch, dispatch_inplace
from .indexing import scatter_add
from .reduce import (_expand_back, _extremum_backward, _reduces_all, _sum_rule,
                     _var_backward, _var_value, _zero_safe)
from .reduce import mean as _mean
from .reduce import _norm as _vector_norm
from .reduce import sum as _sum
from .scan import _scan_rule
from .surface import declare
from .table import FROM_BACKWARD, Meta, op


def _flat(out, x, dims):
    """``out`` (keepdim or not) as the contiguous reduced-shape tensor the reduce kernel writes."""
    shape = reduced_shape(x.shape, dims, False)
    return Tensor._make(out._storage, shape, contiguous_strides(shape), out._offset, out.dtype)


def _int_dim(name, dim, position):
    """torch's parser check of an int dim (``position`` None: keyword-only, no position shown)."""
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        where = f" (position {position})" if position is not None else ""
        raise TypeError(f"{name}(): argument 'dim'{where} must be int, not {type(dim).__name__}")
    return int(dim)


def _count(shape, dims):
    n = 1
    for d in dims:
        n *= shape[d]
    return n


# ------------------------------------------------------------------ nansum / nanmean
def _nansum_launch(out, x, *, compute, dims, keepdim, **_):
    tb.reduce("nansum", _flat(out, x, dims), x, dims, compute)


def _nansum_backward(ctx, g):
    """torch's nansum_backward: the gradient expanded back, 0 where the input was NaN."""
    x = ctx.x
    if g.dtype is not x.dtype:
        g = g.to(x.dtype)
    return _ew.mul(_expand_back(g, ctx), _pw.logical_not(_pw.isnan(x)))


NANSUM = op("nansum", ("x",), jvp=FROM_BACKWARD, rule=_sum_rule, reference=numpy_reduce.nansum, kernel=_nansum_launch,
            backward=_nansum_backward, saves=("x",))


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """torch.nansum: the sum treating NaN as zero (integers and bool: their sum, in int64)."""
    check_tensor("nansum", input)
    dtype = None if dtype is None else _dt.as_dtype(dtype)
    return dispatch(NANSUM, input, dims=normalize_dims(input, dim), keepdim=bool(keepdim), dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """torch.nanmean: nansum over the number of non-NaN elements (torch's definition: its node is
    the division's, DivBackward0); NaN where every element is NaN."""
    check_tensor("nanmean", input)
    if not input.dtype.is_floating_point:
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_dt.type_name(input.dtype)}")
    count = _sum(_pw.logical_not(_pw.isnan(input)), dim, keepdim)
    return _ew.div(nansum(input, dim, keepdim, dtype=dtype), count)


declare("nansum", nansum, out="dtype")
declare("nanmean", nanmean, out="dtype")


# ------------------------------------------------------------------ aminmax
def _aminmax_rule(x, dims, keepdim, whole):
    shape = (1,) * x.dim() if whole and keepdim else reduced_shape(x.shape, dims, keepdim)
    meta = Meta(shape, x.dtype, _dt.compute_dtype(x.dtype))
    return meta, meta


def _aminmax_launch(outs, x, *, compute, dims, keepdim, whole):
    for out, name in zip(outs, ("amin", "amax")):
        tb.reduce(name, _flat(out, x, dims), x, dims, compute)


def _both(grads):
    """The gradients of a two-output node (the engine may hand over fewer: None for the rest)."""
    grads = tuple(grads) + (None, None)
    return grads[0], grads[1]


def _aminmax_backward(ctx, *grads):
    """torch's rule for each output (amin's and amax's): its gradient split evenly among the
    elements equal to it; the two added."""
    g_min, g_max = _both(grads)
    grads = []
    for g, out in ((g_min, ctx.min), (g_max, ctx.max)):
        if g is not None:
            grads.append(_extremum_backward(_ExtremumContext(ctx, out), g))
    if not grads:
        return None
    return grads[0] if len(grads) == 1 else _ew.add(grads[0], grads[1])


class _ExtremumContext:
    """reduce._extremum_backward's view of one aminmax output: x, out, dims, keepdim, input_meta
    (a whole-tensor keepdim result is the keepdim reduction over every dim)."""

    def __init__(self, ctx, out):
        self.x, self.out, self.dims, self.input_meta, self.attrs = ctx.x, out, ctx.dims, ctx.input_meta, {}
        self.keepdim = ctx.keepdim


AMINMAX = op("aminmax", ("x",), jvp=FROM_BACKWARD, outputs=("min", "max"), rule=_aminmax_rule, reference=numpy_reduce.aminmax,
             kernel=_aminmax_launch, backward=_aminmax_backward, saves=("x", "min", "max"))


def aminmax(input, *, dim=None, keepdim=False):
    """torch.aminmax: (min, max) over ``dim`` (every dim by default), NaN propagating."""
    check_tensor("aminmax", input)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation "
                               "has no identity.")
        dims = normalize_dims(input, None)
    else:
        dims = normalize_dims(input, _int_dim("aminmax", dim, None))
        for d in dims:
            if input.shape[d] == 0:
                raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
    mn, mx = dispatch(AMINMAX, input, dims=dims, keepdim=bool(keepdim), whole=dim is None)
    return return_types.aminmax(mn, mx)


declare("aminmax", aminmax, out="exact")


# ------------------------------------------------------------------ logcumsumexp
def _logcumsumexp_launch(out, x, *, compute, dim, reverse, **_):
    tb.scan("logsumexp", out, x, dim, compute, reverse)


def _logcumsumexp_backward(ctx, g):
    """torch's logcumsumexp_backward: with L = log|g| split by the sign of g (the lowest finite
    value where g has the other sign), grad = exp(rlcse(L+ - out) + x) - exp(rlcse(L- - out) + x),
    rlcse the logcumsumexp taken the other way along the dim."""
    if g.dim() == 0 or g.numel() == 0:
        return g
    x, out = ctx.x, ctx.out
    lowest = _LOWEST[g.dtype.name]
    log_abs = _ew.log(_ew.abs(g))
    parts = []
    for sign in (_ew.gt, _ew.lt):
        log_part = _ew.where(sign(g, 0), log_abs, lowest)
        scanned = dispatch(LOGCUMSUMEXP, _ew.sub(log_part, out), dim=ctx.dim, reverse=not ctx.reverse, dtype=None)
        parts.append(_ew.exp(_ew.add(scanned, x)))
    return _ew.sub(parts[0], parts[1])


_LOWEST = {"float16": float(np.finfo(np.float16).min), "bfloat16": -3.3895313892515355e38,
           "float32": float(np.finfo(np.float32).min), "float64": float(np.finfo(np.float64).min)}
LOGCUMSUMEXP = op("logcumsumexp", ("x",), jvp=FROM_BACKWARD, rule=_scan_rule, reference=numpy_reduce.logcumsumexp,
                  kernel=_logcumsumexp_launch, backward=_logcumsumexp_backward, saves=("x", "out"))


def _scalar_type_out(name, result, out):
    """The out= check of torch's cummax/cummin/logcumsumexp kernels (check_scalar_type)."""
    if out.dtype is not result.dtype:
        raise RuntimeError(f"expected scalar_type {_dt.type_name(result.dtype)} but found "
                           f"{_dt.type_name(out.dtype)}")


_scalar_type_out.checks_each_output = True    # cummax's (values, indices) each get this text


def logcumsumexp(input, dim):
    """torch.logcumsumexp: log(cumsum(exp(x))) along ``dim``, without overflow (floats only)."""
    check_tensor("logcumsumexp", input)
    dim = wrap_dim(_int_dim("logcumsumexp", dim, 2), input.dim())
    if not input.dtype.is_floating_point:
        where = backend_for(input.device).torch_name("cpu", "cuda")
        raise NotImplementedError(f'"logcumsumexp_out_{where}" not implemented for \'{_dt.type_name(input.dtype)}\'')
    return dispatch(LOGCUMSUMEXP, input, dim=dim, reverse=False, dtype=None)


declare("logcumsumexp", logcumsumexp, out=_scalar_type_out)


# ------------------------------------------------------------------ cummax / cummin
def _cumext_rule(x, dim):
    compute = _dt.compute_dtype(x.dtype)
    return Meta(tuple(x.shape), x.dtype, compute), Meta(tuple(x.shape), _dt.int64, compute)


def _cumext_launcher(which):
    def launch(outs, x, *, compute, dim):
        tb.scan_index(which, outs[0], outs[1], x, dim, compute)
    return launch


def _cumext_backward(ctx, g, *_):
    """torch's cummaxmin_backward: each gradient added to the input position its index names (a
    scatter_add into zeros, differentiable again: its gradient is a gather)."""
    if g is None:
        return None
    shape = tuple(ctx.input_meta[0][0])
    if 0 in shape:
        return g
    return scatter_add(zeros(shape, dtype=g.dtype, device=g.device), ctx.dim, ctx.indices, g)


CUMMAX = op("cummax", ("x",), jvp=FROM_BACKWARD, outputs=("values", "indices"), rule=_cumext_rule, reference=numpy_reduce.cummax,
            kernel=_cumext_launcher("max"), backward=_cumext_backward, saves=("indices",))
CUMMIN = op("cummin", ("x",), jvp=FROM_BACKWARD, outputs=("values", "indices"), rule=_cumext_rule, reference=numpy_reduce.cummin,
            kernel=_cumext_launcher("min"), backward=_cumext_backward, saves=("indices",))


def _cumext(entry, name, input, dim):
    check_tensor(name, input)
    dim = wrap_dim(_int_dim(name, dim, 2), input.dim())
    return getattr(return_types, name)(*dispatch(entry, input, dim=dim))


def cummax(input, dim):
    """torch.cummax: the running max along ``dim`` and the index it was found at (NaN
    propagates; among equal values the last index)."""
    return _cumext(CUMMAX, "cummax", input, dim)


def cummin(input, dim):
    """torch.cummin: the running min along ``dim`` and its index (as cummax)."""
    return _cumext(CUMMIN, "cummin", input, dim)


declare("cummax", cummax, out=_scalar_type_out)
declare("cummin", cummin, out=_scalar_type_out)


# ------------------------------------------------------------------ std_mean / var_mean
def _var_mean_rule(x, dims, keepdim, correction, dim_given, root):
    meta = Meta(reduced_shape(x.shape, dims, keepdim), x.dtype, _dt.compute_dtype(x.dtype))
    return meta, meta


def _var_mean_launch(outs, x, *, compute, dims, keepdim, correction, dim_given, root):
    with no_grad():
        v = _var_value(x, dims, keepdim, correction)
        copy_into(outs[0], _zero_safe(_ew.sqrt, v) if root else v)
        copy_into(outs[1], _mean(x, dims, keepdim))


def _var_mean_backward(ctx, *grads):
    """torch's var_mean_backward / std_mean_backward: var's gradient (std's through
    g / (2 std), 0 where std is 0) plus the mean's (g / n expanded back)."""
    g_var, g_mean = _both(grads)
    grads = []
    if g_var is not None:
        if ctx.root:
            std = ctx.std_or_var
            g_var = _ew.where(_ew.eq(std, 0), 0.0, _ew.div(g_var, _ew.mul(std, 2.0)))
        grads.append(_var_backward(ctx, g_var))
    if g_mean is not None:
        n = _count(tuple(ctx.input_meta[0][0]), ctx.dims)
        grads.append(_expand_back(_ew.div(g_mean, n), ctx))
    if not grads:
        return None
    return grads[0] if len(grads) == 1 else _ew.add(grads[0], grads[1])


def _var_mean_entry(name, root, reference):
    return op(name, ("x",), outputs=("std_or_var", "mean"), jvp=FROM_BACKWARD, rule=_var_mean_rule, reference=reference,
              kernel=_var_mean_launch, backward=_var_mean_backward, saves=("x", "std_or_var"))


STD_MEAN = _var_mean_entry("std_mean", True, numpy_reduce.std_mean)
VAR_MEAN = _var_mean_entry("var_mean", False, numpy_reduce.var_mean)


def _var_mean(entry, name, input, dim, unbiased, keepdim, correction):
    check_tensor(name, input)
    if isinstance(dim, bool):          # var_mean(x, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got both unbiased and "
                        "correction, but expected one of:\n * (Tensor input, tuple of ints dim, bool unbiased = True, "
                        "bool keepdim = False)\n * (Tensor input, tuple of ints dim = None, *, Number correction = None, "
                        "bool keepdim = False)\n * (Tensor input, bool unbiased = True)")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    dims = normalize_dims(input, dim)
    if _count(input.shape, dims) - correction <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                      "reduction factor (input numel divided by output numel).", UserWarning, stacklevel=3)
    dim_given = not _reduces_all(dim) and input.dim() > 0
    return dispatch(entry, input, dims=dims, keepdim=bool(keepdim), correction=correction, dim_given=dim_given,
                    root=entry is STD_MEAN)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """torch.std_mean: (std, mean) over ``dim`` with torch's correction/unbiased rules, one node."""
    return _var_mean(STD_MEAN, "std_mean", input, dim, unbiased, keepdim, correction)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """torch.var_mean: (var, mean) over ``dim``, one node."""
    return _var_mean(VAR_MEAN, "var_mean", input, dim, unbiased, keepdim, correction)


declare("std_mean", std_mean, method=False)
declare("var_mean", var_mean, method=False)


# ------------------------------------------------------------------ isclose / allclose / equal
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """torch.isclose: |input - other| <= atol + rtol * |other| elementwise (exact equality, and
    NaN == NaN with equal_nan, always close). Same dtypes only; bools and uint16/32/64 compare as
    the default float dtype, the other integers subtract in their own dtype, as torch's."""
    check_tensor("isclose", input)
    check_tensor("isclose", other, "other", 2)
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{_dt.type_name(input.dtype)} did not match {_dt.type_name(other.dtype)}")
    rtol, atol = float(rtol), float(atol)
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {_fmt(rtol)}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {_fmt(atol)}")
    close = _ew.eq(input, other)
    if equal_nan and input.dtype.is_floating_point:
        close = _pw.logical_or(close, _pw.logical_and(_pw.isnan(input), _pw.isnan(other)))
    if rtol == 0 and atol == 0:
        return close
    a, b = input, other
    if a.dtype is _dt.bool_ or a.dtype in _dt.UNSIGNED_LIMITED:     # (uint16/32/64 have no sub kernel in
        a, b = a.to(_dt.get_default_dtype()), b.to(_dt.get_default_dtype())   # torch: its isclose casts too)
    allowed = _ew.add(_ew.abs(_ew.mul(b, rtol)), atol)
    actual = _ew.abs(_ew.sub(a, b))
    return _pw.logical_or(close, _pw.logical_and(_pw.isfinite(actual), _ew.le(actual, allowed)))


def _fmt(v):
    """A double as torch's messages print it (-1, not -1.0)."""
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """torch.allclose: whether isclose holds everywhere (a Python bool)."""
    check_tensor("allclose", input)
    check_tensor("allclose", other, "other", 2)
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


def equal(input, other):
    """torch.equal: same shape and equal values (compared after type promotion, as torch's;
    NaN is never equal); a Python bool."""
    check_tensor("equal", input)
    check_tensor("equal", other, "other", 2)
    if tuple(input.shape) != tuple(other.shape):
        return False
    if input.numel() == 0:
        return True
    return bool(_ew.eq(input, other).all().item())


declare("isclose", isclose)
declare("allclose", allclose)
declare("equal", equal)


# ------------------------------------------------------------------ renorm
def _renorm_rule(x, p, dim, maxnorm):
    return Meta(tuple(x.shape), x.dtype, _dt.compute_dtype(x.dtype))


def _renorm_value(x, p, dim, maxnorm):
    """x times maxnorm / (norm + 1e-7) where the p-norm of x.select(dim, i) exceeds maxnorm (1
    elsewhere); the norm taken in float32 for the half types, as torch's."""
    dims = tuple(d for d in range(x.dim()) if d != dim)
    wide = x.to(_dt.float32) if x.dtype in (_dt.float16, _dt.bfloat16) else x
    norm = _vector_norm(wide, p, dims, True, None)
    factor = _ew.where(_ew.gt(norm, maxnorm), _ew.div(maxnorm, _ew.add(norm, 1e-7)), 1.0)
    return _ew.mul(x, factor.to(x.dtype) if factor.dtype is not x.dtype else factor)


def _renorm_launch(out, x, *, compute, p, dim, maxnorm):
    with no_grad():
        copy_into(out, _renorm_value(x, p, dim, maxnorm))


def _norm_backward(grad, x, p, norm, dims):
    """torch's norm_backward for a p-norm over ``dims`` kept (p > 0): grad * d norm / d x."""
    if p == 1:
        return _ew.mul(_pw.sign(x), grad)
    if p == 2:
        return _ew.mul(grad, _ew.where(_ew.eq(norm, 0), 0.0, _ew.div(x, norm)))
    if _math.isinf(p):       # amax(|x|)'s gradient, NaN counting as the max
        a = _ew.abs(x)
        mask = _pw.logical_or(_ew.eq(a, norm), _pw.isnan(a)).to(x.dtype)
        return _ew.mul(_pw.sign(x), _ew.mul(_ew.div(grad, _sum(mask, dims, True)), mask))
    if p < 1:
        power = _ew.where(_ew.eq(x, 0), 0.0, _ew.pow(_ew.abs(x), p - 1))
        return _ew.mul(_ew.mul(_ew.mul(_pw.sign(x), power), grad), _ew.pow(norm, 1 - p))
    if p < 2:
        r = _ew.mul(_ew.mul(_ew.mul(_pw.sign(x), _ew.pow(_ew.abs(x), p - 1)), grad), _ew.pow(norm, 1 - p))
    else:
        r = _ew.div(_ew.mul(_ew.mul(x, _ew.pow(_ew.abs(x), p - 2)), grad), _ew.pow(norm, p - 1))
    return _ew.where(_ew.eq(norm, 0), 0.0, r)


def _renorm_backward(ctx, g):
    """torch's renorm_backward: where the slice's norm n exceeds maxnorm, with f = maxnorm /
    (n + 1e-7): f g - f / (n + 1e-7) * norm_backward(sum(x g over the slice)); g elsewhere."""
    x, p, dim, maxnorm = ctx.x, ctx.p, ctx.dim, ctx.maxnorm
    dims = tuple(d for d in range(x.dim()) if d != dim)
    wide = x.to(_dt.float32) if x.dtype in (_dt.float16, _dt.bfloat16) else x
    gw = g.to(wide.dtype) if g.dtype is not wide.dtype else g
    norm = _vector_norm(wide, p, dims, True, None)
    nb = _norm_backward(_sum(_ew.mul(wide, gw), dims, True), wide, p, norm, dims)
    invnorm = _ew.reciprocal(_ew.add(norm, 1e-7))
    factor = _ew.mul(invnorm, maxnorm)
    scaled = _ew.sub(_ew.mul(factor, gw), _ew.mul(_ew.mul(factor, invnorm), nb))
    out = _ew.where(_ew.gt(norm, maxnorm), scaled, gw)
    return out.to(g.dtype) if out.dtype is not g.dtype else out


RENORM = op("renorm", ("x",), jvp=FROM_BACKWARD, rule=_renorm_rule, reference=numpy_reduce.renorm, kernel=_renorm_launch,
            backward=_renorm_backward, saves=("x",))


def _renorm_args(input, p, dim, maxnorm):
    check_tensor("renorm", input)
    for name, v in (("p", p), ("maxnorm", maxnorm)):
        if isinstance(v, Tensor):
            v = v.item()
        if not isinstance(v, numbers.Real) or isinstance(v, bool):
            raise TypeError(f"renorm(): argument '{name}' must be Number, not {type(v).__name__}")
    p = float(p.item() if isinstance(p, Tensor) else p)
    maxnorm = float(maxnorm.item() if isinstance(maxnorm, Tensor) else maxnorm)
    if not p > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {_fmt(maxnorm)}")
    if input.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions")
    if not input.dtype.is_floating_point:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. "
                           f"Got {_dt.type_name(input.dtype)}")
    return p, wrap_dim(dim, input.dim()), maxnorm


def renorm(input, p, dim, maxnorm):
    """torch.renorm: each slice input.select(dim, i) whose p-norm exceeds maxnorm scaled down to
    norm maxnorm (by maxnorm / (norm + 1e-7), as torch)."""
    p, dim, maxnorm = _renorm_args(input, p, dim, maxnorm)
    return dispatch(RENORM, input, p=p, dim=dim, maxnorm=maxnorm)


def renorm_(input, p, dim, maxnorm):
    p, dim, maxnorm = _renorm_args(input, p, dim, maxnorm)
    return dispatch_inplace(RENORM, input, p=p, dim=dim, maxnorm=maxnorm)


declare("renorm", renorm, inplace=renorm_, out="exact")


# ------------------------------------------------------------------ hash_tensor
# torch.hash_tensor (mode 0): each element upcast to its 64-bit kind (float64 / int64; bool and
# uint8 zero-extend, signed ints sign-extend), its bits read as uint64, xor-reduced. The entry
# reduces the int64 bit patterns (xor does not care for the sign) and types the result uint64.
def _hash_rule(x, dims, keepdim, **_):
    return Meta(reduced_shape(x.shape, dims, keepdim), _dt.uint64, _dt.int64)


def _hash_launch(out, x, *, compute, dims, keepdim, **_):
    tb.reduce("xor", _flat(out, x, dims), x, dims, compute)


HASH_TENSOR = op("hash_tensor", ("x",), rule=_hash_rule, reference=numpy_reduce.xor_sum, kernel=_hash_launch,
                 differentiable=False)


def _hash_dims(input, dim):
    """torch's checks, in its order: dim's type, range and repeats; then an empty reduction."""
    if dim is not None and not isinstance(dim, int) and not (
            isinstance(dim, (tuple, list)) and all(isinstance(d, int) for d in dim)):
        bad = dim if not isinstance(dim, (tuple, list)) else next(d for d in dim if not isinstance(d, int))
        raise TypeError(f"hash_tensor(): argument 'dim' (position 2) must be tuple of ints, not {type(bad).__name__}")
    dims = normalize_dims(input, dim)
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        if input.numel() == 0:
            raise RuntimeError("hash_tensor: Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        return dims
    given = (dim,) if isinstance(dim, int) else dim
    for d in given:
        if input.shape[wrap_dim(d, input.dim())] == 0:
            raise IndexError(f"hash_tensor: Expected reduction dim {d} to have non-zero size.")
    return dims


def hash_tensor(input, dim=None, keepdim=False, *, mode=0):
    """torch.hash_tensor: the xor of the elements' bit patterns upcast to 64 bits (float64 for the
    floating dtypes, int64 for the integers and bool), as a uint64 tensor, over ``dim`` (all
    dims when None or empty). uint16/32/64 have no kernel in torch (NotImplementedError)."""
    check_tensor("hash_tensor", input)
    if not isinstance(mode, int) or isinstance(mode, bool):
        raise TypeError(f"hash_tensor(): argument 'mode' must be int, not {type(mode).__name__}")
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    dims = _hash_dims(input, dim)
    if _unsigned.is_limited(input.dtype):
        kind = backend_for(input.device).torch_kind
        raise NotImplementedError(f'"xor_sum_{kind}" not implemented for \'{_dt.type_name(input.dtype)}\'')
    with no_grad():         # torch's result never requires grad
        if input.dtype.is_floating_point:
            bits = input.to(_dt.float64).view(_dt.int64)
        else:
            bits = input.to(_dt.int64)
        return dispatch(HASH_TENSOR, bits, dims=dims, keepdim=bool(keepdim))


def _hash_out(name, result, out):
    """torch's out= check of hash_tensor (a structured kernel: the dtype exactly)."""
    if out.dtype is not result.dtype:
        raise RuntimeError(f"Expected result to be of dtype {result.dtype.name}, but got {_dt.type_name(out.dtype)}")


declare("hash_tensor", hash_tensor, out=_hash_out)
