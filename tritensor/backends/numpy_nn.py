"""NumPy references of the nn ops (arrays only): the cpu device runs them, tests check the
kernels against them. Inputs arrive in the compute dtype (backends/numpy_ref.run_op), class-index
targets too (exact: class counts are far below 2**24); they are read back as integers here.

Extra outputs (layer_norm's mean/rstd, the backward's grad_weight/grad_bias) are arrays in the
compute dtype that share the output tensors' memory: the references write them in place.
"""
from __future__ import annotations

import math

import numpy as np


# ------------------------------------------------------------------ layer_norm
def layer_norm(x, weight, bias, mean, rstd, *, eps):
    """x: (M, N). Biased variance of the centred values, as torch; writes mean and rstd (M,)."""
    mu = x.mean(axis=1, keepdims=True)
    xc = x - mu
    r = 1 / np.sqrt((xc * xc).mean(axis=1, keepdims=True) + np.asarray(eps, x.dtype))
    y = xc * r
    if weight is not None:
        y = y * weight.reshape(-1)
    if bias is not None:
        y = y + bias.reshape(-1)
    np.copyto(mean, mu.reshape(mean.shape), casting="unsafe")
    np.copyto(rstd, r.reshape(rstd.shape), casting="unsafe")
    return y


def _row_split(shape, n_norm):
    """(M, N): the product of the leading dims and of the last n_norm (normalized) dims."""
    k = len(shape) - n_norm
    return math.prod(shape[:k]), math.prod(shape[k:])


def layer_norm_nd(x, weight, bias, mean, rstd, *, eps, n_norm):
    """layer_norm over the last ``n_norm`` dims of x (any rank), as rows of (M, N)."""
    M, N = _row_split(x.shape, n_norm)
    return layer_norm(x.reshape(M, N), weight, bias, mean, rstd, eps=eps).reshape(x.shape)


def layer_norm_backward_nd(grad, x, weight, mean, rstd, grad_weight, grad_bias, *, n_norm, **_):
    """layer_norm_backward over the last ``n_norm`` dims of x (any rank), as rows of (M, N)."""
    M, N = _row_split(x.shape, n_norm)
    return layer_norm_backward(grad.reshape(M, N), x.reshape(M, N), weight, mean, rstd, grad_weight,
                               grad_bias).reshape(x.shape)


def layer_norm_backward(grad, x, weight, mean, rstd, grad_weight, grad_bias):
    """dx = rstd (gh - mean(gh) - xhat mean(gh xhat)) with gh = grad * weight; writes the column
    sums grad_weight = sum(grad * xhat) and grad_bias = sum(grad) when given."""
    r = rstd.reshape(-1, 1)
    xhat = (x - mean.reshape(-1, 1)) * r
    gh = grad * weight.reshape(-1) if weight is not None else grad
    dx = r * (gh - gh.mean(axis=1, keepdims=True) - xhat * (gh * xhat).mean(axis=1, keepdims=True))
    if grad_weight is not None:
        np.copyto(grad_weight, (grad * xhat).sum(axis=0).reshape(grad_weight.shape), casting="unsafe")
    if grad_bias is not None:
        np.copyto(grad_bias, grad.sum(axis=0).reshape(grad_bias.shape), casting="unsafe")
    return dx


# ------------------------------------------------------------------ cross entropy (class indices)
def _rows(x, cdim):
    """x with the class dim last, and its log-sum-exp per row."""
    a = np.moveaxis(x, cdim, -1)
    m = np.max(a, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    lse = m + np.log(np.exp(a - m).sum(axis=-1, keepdims=True))
    return a, lse


def _targets(target, weight, ignore_index, C, dtype):
    t = target.astype(np.int64)
    valid = t != ignore_index
    safe = np.where(valid, t, 0)
    w = weight if weight is not None else np.ones(C, dtype)
    return safe, valid, w


def cross_entropy(x, target, weight, *, cdim, ignore_index):
    """(2,) + target.shape: [0] = w[t] (lse - x[t]), [1] = sum_c w[c] (lse - x[c]); 0 where
    t == ignore_index."""
    a, lse = _rows(x, cdim)
    safe, valid, w = _targets(target, weight, ignore_index, a.shape[-1], x.dtype)
    logp = a - lse
    picked = np.take_along_axis(logp, safe[..., None], axis=-1)[..., 0]
    nll = np.where(valid, -w[safe] * picked, 0)
    smooth = np.where(valid, -(logp * w).sum(axis=-1), 0)
    return np.stack([nll, smooth]).astype(x.dtype, copy=False)


def cross_entropy_backward(grad, x, target, weight, *, cdim, ignore_index):
    """dx = p (g0 w[t] + g1 W) - g0 w[t] onehot(t) - g1 w, zero rows where t == ignore_index."""
    a, lse = _rows(x, cdim)
    C = a.shape[-1]
    safe, valid, w = _targets(target, weight, ignore_index, C, x.dtype)
    p = np.exp(a - lse)
    g0 = np.where(valid, grad[0], 0)[..., None]
    g1 = np.where(valid, grad[1], 0)[..., None]
    wt = w[safe][..., None]
    onehot = np.arange(C) == safe[..., None]
    dx = p * (g0 * wt + g1 * w.sum()) - np.where(onehot, g0 * wt, 0) - g1 * w
    return np.moveaxis(dx, -1, cdim)
