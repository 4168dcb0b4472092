"""NumPy references of the reductions that numpy_ref.reduce does not cover: variance and
count_nonzero (the nuclear norm is a composite on the SVD: ops/norms.py). Arrays in (already in the
op's compute dtype), arrays out; ops/reduce.py names them in its op table."""
from __future__ import annotations

import numpy as np


def var(x, dims, keepdim, correction, dim_given=False):
    """sum((x - mean)^2) / max(n - correction, 0) over ``dims``; an empty range gives NaN."""
    n = int(np.prod([x.shape[d] for d in dims])) if dims else 1
    centered = x - (x.sum(axis=dims, keepdims=True) / n if n else np.full_like(x, np.nan))
    return (centered * centered).sum(axis=dims, keepdims=keepdim) / np.float64(max(n - correction, 0)).astype(x.dtype)


def count_nonzero(x, dims, keepdim, **_):
    return np.count_nonzero(x, axis=tuple(dims), keepdims=keepdim) if x.ndim else np.int64(x != 0)


# ------------------------------------------------------------------ issue 21.3 (ops/reductions_extra.py)
def nansum(x, dims, keepdim, **_):
    """sum over ``dims`` with NaN counted as 0 (integers have none: their sum)."""
    if x.ndim == 0:
        return np.where(x != x, 0, x) if x.dtype.kind == "f" else x
    return np.nansum(x, axis=tuple(dims), keepdims=keepdim) if x.dtype.kind == "f" else \
        x.sum(axis=tuple(dims), keepdims=keepdim)


def aminmax(x, dims, keepdim, **_):
    """(min, max) over ``dims``, NaN propagating (NumPy's min/max propagate it too)."""
    if x.ndim == 0:
        return x, x
    axis = tuple(dims)
    return x.min(axis=axis, keepdims=keepdim), x.max(axis=axis, keepdims=keepdim)


def _along(x, dim):
    """x with ``dim`` moved last (a 0-d x as one element), and the function moving it back."""
    if x.ndim == 0:
        return x.reshape(1), lambda r: r.reshape(())
    return np.moveaxis(x, dim, -1), lambda r: np.moveaxis(r, -1, dim)


def logcumsumexp(x, dim, reverse=False, **_):
    """log(cumsum(exp(x))) along ``dim`` (from the end when ``reverse``), as np.logaddexp's
    running fold: equal infinities give themselves, NaN propagates."""
    a, back = _along(x, dim)
    if reverse:
        return back(np.flip(np.logaddexp.accumulate(np.flip(a, -1), axis=-1), -1))
    return back(np.logaddexp.accumulate(a, axis=-1))


def cummax(x, dim, largest=True, **_):
    """(values, indices) of the running max (min unless ``largest``) along ``dim``, torch's
    sequential rule: the value at n replaces the running one when it is NaN, or when the running
    one is not NaN and it is >= (<=) it; so NaN stays, and the last of equal values wins."""
    a, back = _along(x, dim)
    values = np.empty_like(a)
    indices = np.zeros(a.shape, np.int64)
    if a.shape[-1]:
        best, at = a[..., 0].copy(), np.zeros(a.shape[:-1], np.int64)
        values[..., 0], indices[..., 0] = best, at
        for n in range(1, a.shape[-1]):
            v = a[..., n]
            better = (v >= best) if largest else (v <= best)
            take = (v != v) | ((best == best) & better)
            best = np.where(take, v, best)
            at = np.where(take, n, at)
            values[..., n], indices[..., n] = best, at
    return back(values), back(indices)


def cummin(x, dim, **_):
    return cummax(x, dim, largest=False)


def var_mean(x, dims, keepdim, correction, **_):
    """(variance, mean) over ``dims`` (var's rule above)."""
    n = int(np.prod([x.shape[d] for d in dims])) if dims else 1
    mean = x.sum(axis=tuple(dims), keepdims=keepdim) / np.asarray(n).astype(x.dtype) if n else \
        np.full(x.sum(axis=tuple(dims), keepdims=keepdim).shape, np.nan, x.dtype)
    return var(x, dims, keepdim, correction), mean


def std_mean(x, dims, keepdim, correction, **_):
    v, mean = var_mean(x, dims, keepdim, correction)
    return np.sqrt(v), mean


def renorm(x, p, dim, maxnorm, **_):
    """x scaled by maxnorm / (norm + 1e-7) on each slice along ``dim`` whose p-norm (over the
    other dims) exceeds maxnorm."""
    axes = tuple(d for d in range(x.ndim) if d != dim)
    a = np.abs(x)
    if np.isinf(p):
        norm = a.max(axis=axes, keepdims=True) if x.size else np.zeros([1 if d in axes else s for d, s in enumerate(x.shape)], x.dtype)
    else:
        norm = (a ** p).sum(axis=axes, keepdims=True) ** (1.0 / p)
    factor = np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return x * factor.astype(x.dtype)


# ------------------------------------------------------------------ hash_tensor (ops/reductions_extra.py)
def xor_sum(x, dims, keepdim, **_):
    """The xor of x's elements over ``dims`` (x: the int64 bit patterns hash_tensor reduces)."""
    if x.ndim == 0:
        return x
    return np.bitwise_xor.reduce(x, axis=tuple(dims), keepdims=keepdim)
