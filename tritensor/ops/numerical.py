"""Numerical composites of issue 21.3: dist, trace, cov, corrcoef, diff, gradient, trapezoid,
trapz, cumulative_trapezoid.

Each is torch's own definition written with tritensor ops (the aten sources: Correlation.cpp,
ReduceOps.cpp's diff and gradient, Integration.cpp), so each needs no kernel and no backward of
its own; where torch records a single node (DistBackward0, TraceBackward0) it is one named
composite node. The argument checks and their texts are torch 2.13's.
"""
from __future__ import annotations

from .._autocast import autocast_policy as _autocast_policy

import numbers
import warnings

from .. import dtypes as _dt
from ..autograd.composite import named_composite
from ..tensor import Tensor
from . import _unsigned
from . import elementwise as _ew
from . import pointwise as _pw
from . import views as _views
from ._checks import check_tensor
from ._shapes import wrap_dim
from .copy import clone
from .creation import tensor, zeros, zeros_like
from .joining import cat
from .linalg import mm
from .reduce import _norm as _vector_norm
from .reduce import sum as _sum
from .scan import cumsum
from .surface import declare


def _real_number(value):
    if isinstance(value, Tensor):
        return value.item()
    return value


# ------------------------------------------------------------------ dist / trace
def _dist_value(input, other, p):
    return _vector_norm(_ew.sub(input, other), p, None, False, None)


@_autocast_policy("dist")
def dist(input, other, p=2):
    """torch.dist: the p-norm of input - other (broadcast), one DistBackward0 node."""
    check_tensor("dist", input)
    check_tensor("dist", other, "other", 2)
    p = _real_number(p)
    if not isinstance(p, numbers.Real) or isinstance(p, bool):
        raise TypeError(f"dist(): argument 'p' (position 3) must be Number, not {type(p).__name__}")
    dtype = _dt.result_type(input, other)
    if not dtype.is_floating_point:
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {_dt.type_name(dtype)} instead.")
    return named_composite("DistBackward0", _dist_value, input, other, float(p))


@_autocast_policy("trace")
def trace(input):
    """torch.trace: the sum of a matrix's main diagonal (integers sum to int64), TraceBackward0."""
    check_tensor("trace", input)
    if input.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.dim()}")
    if input.dtype is _dt.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    _unsigned.refuse("trace", input.dtype)
    return named_composite("TraceBackward0", lambda x: _sum(_views.diagonal(x)), input)


declare("dist", dist)
declare("trace", trace)


# ------------------------------------------------------------------ cov / corrcoef
def _check_weights(name, w, kind, integral, observations):
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                           f"{w.dim()} dimensions")
    ok = (not w.dtype.is_floating_point and w.dtype is not _dt.bool_) if integral else w.dtype.is_floating_point
    if not ok:
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                           f"{_dt.type_name(w.dtype)} dtype")
    if w.numel() != observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the "
                           f"input but got {w.numel()} != {observations}")
    if observations and w.min().item() < 0:
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(input, *, correction=1, fweights=None, aweights=None):
    """torch.cov: the covariance matrix of the variables in input's rows (observations in its
    columns; a vector is one variable), with frequency and/or analytic weights and torch's
    corrections and corner cases (Correlation.cpp). Unlike torch, a single observation with one
    kind of weights does not zero the caller's input in place: a zero copy is used."""
    check_tensor("cov", input)
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    if input.dtype is _dt.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    observations = x.shape[1]
    w = None
    if fweights is not None:
        check_tensor("cov", fweights, "fweights", None)
        _check_weights("fweights", fweights, "integral", True, observations)
        w = fweights
    if aweights is not None:
        check_tensor("cov", aweights, "aweights", None)
        _check_weights("aweights", aweights, "floating point", False, observations)
        w = aweights if w is None else _ew.mul(w, aweights)
    if w is not None:
        w_sum = _sum(w)
        if w_sum.item() == 0:
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    else:
        w_sum = tensor(observations, dtype=_dt.int64, device=x.device)
    avg = _ew.div(_sum(_ew.mul(x, w) if w is not None else x, 1), w_sum)
    if w is None:
        norm_factor = tensor(observations - correction, dtype=_dt.int64, device=x.device)
    elif correction == 0:
        norm_factor = w_sum
    elif aweights is None:
        norm_factor = _ew.sub(w_sum, correction)
    elif fweights is None and observations == 1 and correction == 1:
        norm_factor = tensor(0, dtype=_dt.int64, device=x.device)
    else:
        norm_factor = _ew.sub(w_sum, _ew.div(_ew.mul(_sum(_ew.mul(w, aweights)), correction), w_sum))
    if norm_factor.item() <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number "
                      "of observations.", UserWarning, stacklevel=2)
        norm_factor = zeros_like(norm_factor)
    if observations == 1 and (fweights is None) != (aweights is None):
        # one observation, one kind of weights: the weighted mean is the observation itself
        x = zeros(tuple(x.shape), dtype=x.dtype if x.dtype.is_floating_point else _dt.float32, device=x.device)
    else:
        x = _ew.sub(x, avg.unsqueeze(1))
    c = mm(x, (_ew.mul(x, w) if w is not None else x).t())
    return _ew.div(c, norm_factor).squeeze()


def corrcoef(input):
    """torch.corrcoef: Pearson's correlation coefficients, cov normalised by the standard
    deviations and clipped to [-1, 1] (as NumPy); c / c for a single variable."""
    check_tensor("corrcoef", input)
    if input.dim() > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.dim()} dimensions")
    c = cov(input)
    if c.dim() == 0:
        return _ew.div(c, c)
    stddev = _ew.sqrt(_views.diagonal(c))
    c = _ew.div(c, stddev.view(-1, 1))
    c = _ew.div(c, stddev.view(1, -1))
    return _pw.clamp(c, -1, 1)


declare("cov", cov)
declare("corrcoef", corrcoef)


# ------------------------------------------------------------------ diff
def _check_diff_other(input, other, dim):
    if other is None:
        return
    check_tensor("diff", other, "prepend/append", None)
    if other.dim() != input.dim():
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    d = wrap_dim(dim, input.dim())
    for i in range(other.dim()):
        if i != d and other.shape[i] != input.shape[i]:
            raise RuntimeError("diff expects the shape of tensor to prepend or append to match that of input "
                               f"except along the differencing dimension; input.size({i}) = {input.shape[i]}, "
                               f"but got tensor.size({i}) = {other.shape[i]}")


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """torch.diff: the n-th forward difference along ``dim`` (logical_xor for bool), after
    prepend/append are joined on; n beyond the length gives an empty dim."""
    check_tensor("diff", input)
    if input.dim() < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    _check_diff_other(input, prepend, dim)
    _check_diff_other(input, append, dim)
    dim = wrap_dim(dim, input.dim())
    if n == 0:
        return clone(input)
    x = input
    if prepend is not None or append is not None:
        x = cat([t for t in (prepend, input, append) if t is not None], dim)
    length = x.shape[dim] - 1
    for _ in range(min(n, x.shape[dim])):
        after, before = _views.narrow(x, dim, 1, length), _views.narrow(x, dim, 0, length)
        x = _pw.logical_xor(after, before) if x.dtype is _dt.bool_ else _ew.sub(after, before)
        length -= 1
    return x


declare("diff", diff, out="cast")


# ------------------------------------------------------------------ gradient
_GRADIENT_SIGNATURES = (
    " * (Tensor input, *, tuple of ints dim, int edge_order = 1)\n"
    " * (Tensor input, *, Number spacing, tuple of ints dim, int edge_order = 1)\n"
    " * (Tensor input, *, Number spacing = None, int dim = None, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of Scalars spacing, int dim = None, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of Scalars spacing, tuple of ints dim, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of Tensors spacing, int dim = None, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of Tensors spacing, tuple of ints dim, int edge_order = 1)\n")


def _slice(x, dim, start, stop=None):
    """x[..., start:stop] along ``dim`` (torch's at::slice with negative bounds)."""
    n = x.shape[dim]
    start = max(start + n, 0) if start < 0 else min(start, n)
    stop = n if stop is None else (max(stop + n, 0) if stop < 0 else min(stop, n))
    return _views.narrow(x, dim, start, max(stop - start, 0))


def _join_ends(center, prepend, append, dim):
    return cat([prepend, center, append], dim)


def _gradient_scalar(x, spacing, dims, edge_order):
    """gradient_helper_float: uniform spacing per dim."""
    result = []
    for d, h in zip(dims, spacing):
        center = _ew.div(_ew.sub(_slice(x, d, 2), _slice(x, d, 0, -2)), h)
        if edge_order == 1:
            prepend = _ew.div(_ew.sub(_slice(x, d, 1, 2), _slice(x, d, 0, 1)), h)
            append = _ew.div(_ew.sub(_slice(x, d, -1), _slice(x, d, -2, -1)), h)
        else:
            prepend = _ew.div(_ew.add(_ew.add(_ew.mul(_slice(x, d, 0, 1), -1.5), _ew.mul(_slice(x, d, 1, 2), 2)),
                                      _ew.mul(_slice(x, d, 2, 3), -0.5)), h)
            append = _ew.div(_ew.add(_ew.add(_ew.mul(_slice(x, d, -3, -2), 0.5), _ew.mul(_slice(x, d, -2, -1), -2)),
                                     _ew.mul(_slice(x, d, -1), 1.5)), h)
        result.append(_join_ends(_ew.div(center, 2), prepend, append, d))
    return tuple(result)


def _gradient_coordinates(x, coordinates, dims, edge_order):
    """gradient_helper: sample coordinates per dim (second-order accurate interior)."""
    for c in coordinates:
        if c.device != x.device:
            raise RuntimeError(f"torch.gradient expected each tensor to be on the same device, but got devices "
                               f"{x.device} and {c.device}!")
    result = []
    for d, c in zip(dims, coordinates):
        if c.dim() != 1:
            raise RuntimeError(f"torch.gradient expected each element of spacing to have one dimension, but got "
                               f"an element with {c.dim()} dimensions!")
        shape = [1] * x.dim()
        shape[d] = -1
        h = diff(c, 1, 0)
        h1, h2 = _slice(h, 0, 0, -1), _slice(h, 0, 1)
        a = _ew.div(_ew.neg(h2), _ew.mul(h1, _ew.add(h1, h2))).reshape(shape)
        b = _ew.div(_ew.sub(h2, h1), _ew.mul(h1, h2)).reshape(shape)
        cc = _ew.div(h1, _ew.mul(h2, _ew.add(h1, h2))).reshape(shape)
        center = _ew.add(_ew.add(_ew.mul(a, _slice(x, d, 0, -2)), _ew.mul(b, _slice(x, d, 1, -1))),
                         _ew.mul(cc, _slice(x, d, 2)))
        first, second, last, before_last = h[0], h[1], h[-1], h[-2]
        if edge_order == 1:
            prepend = _ew.div(_ew.sub(_slice(x, d, 1, 2), _slice(x, d, 0, 1)), first)
            append = _ew.div(_ew.sub(_slice(x, d, -1), _slice(x, d, -2, -1)), last)
        else:
            s = _ew.add(first, second)
            a = _ew.div(_ew.neg(_ew.add(_ew.mul(first, 2.0), second)), _ew.mul(first, s))
            b = _ew.div(s, _ew.mul(first, second))
            cc = _ew.div(_ew.neg(first), _ew.mul(second, s))
            prepend = _ew.add(_ew.add(_ew.mul(a, _slice(x, d, 0, 1)), _ew.mul(b, _slice(x, d, 1, 2))),
                              _ew.mul(cc, _slice(x, d, 2, 3)))
            s = _ew.add(last, before_last)
            a = _ew.div(last, _ew.mul(before_last, s))
            b = _ew.div(_ew.neg(s), _ew.mul(last, before_last))
            cc = _ew.div(_ew.add(_ew.mul(last, 2), before_last), _ew.mul(last, s))
            append = _ew.add(_ew.add(_ew.mul(a, _slice(x, d, -3, -2)), _ew.mul(b, _slice(x, d, -2, -1))),
                             _ew.mul(cc, _slice(x, d, -1)))
        result.append(_join_ends(center, prepend, append, d))
    return tuple(result)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """torch.gradient: the derivative estimated by central differences in the interior and
    first- or second-order one-sided differences at the ends, along ``dim`` (every dim by
    default). ``spacing``: a number (the step of every dim), a list of numbers (one per dim), or
    a list of 1-D coordinate tensors (one per dim). Returns one tensor per dim."""
    check_tensor("gradient", input)
    if isinstance(spacing, Tensor):
        raise TypeError(f"gradient() received an invalid combination of arguments - got (Tensor, "
                        f"spacing=Tensor), but expected one of:\n{_GRADIENT_SIGNATURES}")
    dim_list = None if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    if spacing is None:         # torch's Python binding: spacing=None is the unit step
        spacing = 1
    if isinstance(spacing, (list, tuple)):
        spacing = list(spacing)
        spacing_size = len(spacing)
    else:               # one step for every dim differentiated: no length to check
        spacing_size = input.dim() if dim_list is None else len(dim_list)
        spacing = [spacing] * spacing_size
    if input.dtype is _dt.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if dim_list is None and spacing_size != input.dim():
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal "
                           f"to 'self.dim() = {input.dim()}', since dim argument was not given, but got a list of "
                           f"length {spacing_size}")
    if dim_list is not None and spacing_size != len(dim_list):
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length {spacing_size} "
                           f"and a dim argument of length {len(dim_list)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = list(range(input.dim())) if dim_list is None else [wrap_dim(d, input.dim()) for d in dim_list]
    if len(set(dims)) != len(dims):
        first = next(d for d in dims if dims.count(d) > 1)
        raise RuntimeError(f"dim {first} appears multiple times in the list of dims")
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    if any(isinstance(s, Tensor) for s in spacing):
        return _gradient_coordinates(input, spacing, dims, edge_order)
    return _gradient_scalar(input, spacing, dims, edge_order)


declare("gradient", gradient, method=False)


# ------------------------------------------------------------------ trapezoid / cumulative_trapezoid
def _trapezoid_dim(name, y, dim):
    if y.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return wrap_dim(dim, y.dim())


def _check_dx(name, dx):
    if isinstance(dx, bool) or not isinstance(dx, numbers.Real):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    return float(dx)


def _x_viewed(name, y, x, dim):
    """x laid out against y (Integration.cpp): a 1-D x along ``dim``; a lower-rank x padded with
    leading 1s; otherwise as it is (its differences broadcast against y's)."""
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y.dim()
        shape[dim] = x.shape[0]
        return x.view(shape)
    if x.dim() < y.dim():
        return x.view((1,) * (y.dim() - x.dim()) + tuple(x.shape))
    return x


def _both_given(name):
    return TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, Tensor, dx=float), "
                     f"but expected one of:\n * (Tensor y, Tensor x, *, int dim = -1)\n"
                     f" * (Tensor y, *, Number dx = 1, int dim = -1)\n")


def _trapezoid(name, y, x, dx, dim):
    check_tensor(name, y, "y")
    if x is not None and dx is not None:
        raise _both_given(name)
    dim = _trapezoid_dim(name, y, dim)
    if y.shape[dim] == 0:          # NumPy's answer for no samples: 0
        return zeros(tuple(s for i, s in enumerate(y.shape) if i != dim), dtype=y.dtype, device=y.device)
    if x is None:
        if y.dtype is _dt.bool_:
            raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not supported")
        h = _check_dx("trapezoid", 1 if dx is None else _real_number(dx))
        # with a constant step: h * (sum(y) - (y_first + y_last) / 2)
        ends = _ew.add(_views.select(y, dim, 0), _views.select(y, dim, -1))
        return _ew.mul(_ew.sub(_sum(y, dim), _ew.mul(ends, 0.5)), h)
    check_tensor(name, x, "x", 2)
    if y.dtype is _dt.bool_ or x.dtype is _dt.bool_:
        raise RuntimeError("trapezoid: received a bool input for `x` or `y`, but bool is not supported")
    xv = _x_viewed("trapezoid", y, x, dim)
    h = _ew.sub(_slice(xv, dim, 1), _slice(xv, dim, 0, -1))
    pairs = _ew.add(_slice(y, dim, 0, -1), _slice(y, dim, 1))
    return _ew.div(_sum(_ew.mul(pairs, h), dim), 2.0)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """torch.trapezoid: the trapezoidal rule along ``dim``, with sample points ``x`` (a tensor
    whose differences broadcast against y's) or a constant step ``dx`` (1 by default); 0 over
    no samples."""
    return _trapezoid("trapezoid", y, x, dx, dim)


def trapz(y, x=None, *, dx=None, dim=-1):
    """torch.trapz: trapezoid's older name."""
    return _trapezoid("trapz", y, x, dx, dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """torch.cumulative_trapezoid: the running trapezoidal integral along ``dim`` (one value
    fewer than the samples)."""
    check_tensor("cumulative_trapezoid", y, "y")
    if x is not None and dx is not None:
        raise _both_given("cumulative_trapezoid")
    dim = _trapezoid_dim("cumulative_trapezoid", y, dim)
    pairs = _ew.add(_slice(y, dim, 0, -1), _slice(y, dim, 1))
    if x is None:
        if y.dtype is _dt.bool_:
            raise RuntimeError("cumulative_trapezoid: received a bool input for `y`, but bool is not supported")
        h = _check_dx("cumulative_trapezoid", 1 if dx is None else _real_number(dx))
        return cumsum(_ew.mul(pairs, h / 2.0), dim)
    check_tensor("cumulative_trapezoid", x, "x", 2)
    if y.dtype is _dt.bool_ or x.dtype is _dt.bool_:
        raise RuntimeError("cumulative_trapezoid: received a bool input for `x` or `y`, but bool is not supported")
    xv = _x_viewed("cumulative_trapezoid", y, x, dim)
    h = _ew.sub(_slice(xv, dim, 1), _slice(xv, dim, 0, -1))
    return _ew.div(cumsum(_ew.mul(pairs, h), dim), 2.0)


declare("trapezoid", trapezoid, method=False)
declare("trapz", trapz, method=False)
declare("cumulative_trapezoid", cumulative_trapezoid, method=False)
