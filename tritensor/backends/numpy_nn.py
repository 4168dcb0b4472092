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


# ------------------------------------------------------------------ rms_norm
def rms_norm_nd(x, weight, rstd, *, eps, n_norm):
    """y = x * rstd * weight over the last ``n_norm`` dims of x, rstd = 1 / sqrt(mean(x^2) + eps)
    per row; writes rstd (M,)."""
    M, N = _row_split(x.shape, n_norm)
    rows = x.reshape(M, N)
    r = 1 / np.sqrt((rows * rows).mean(axis=1, keepdims=True) + np.asarray(eps, x.dtype))
    y = rows * r
    if weight is not None:
        y = y * weight.reshape(-1)
    np.copyto(rstd, r.reshape(rstd.shape), casting="unsafe")
    return y.reshape(x.shape)


def rms_norm_backward_nd(grad, x, weight, rstd, grad_weight, *, n_norm, **_):
    """dx = rstd (gh - xhat mean(gh xhat)) with xhat = x rstd, gh = grad * weight, per row; writes
    grad_weight = sum over rows of grad * xhat when given."""
    M, N = _row_split(x.shape, n_norm)
    g, r = grad.reshape(M, N), rstd.reshape(-1, 1)
    xhat = x.reshape(M, N) * r
    gh = g * weight.reshape(-1) if weight is not None else g
    dx = r * (gh - xhat * (gh * xhat).mean(axis=1, keepdims=True))
    if grad_weight is not None:
        np.copyto(grad_weight, (g * xhat).sum(axis=0).reshape(grad_weight.shape), casting="unsafe")
    return dx.reshape(x.shape)


# ------------------------------------------------------------------ batch norm / group norm
def _ncl(x):
    """x (N, C, *) as an (N, C, L) array (L = 1 without spatial dims)."""
    return x.reshape(x.shape[0], x.shape[1], -1)


def _channel(v):
    return v.reshape(1, -1, 1)


def native_batch_norm(x, weight, bias, running_mean, running_var, *, training, momentum, eps, **_):
    """(out, save_mean, save_invstd) as torch.native_batch_norm: training normalises with the
    batch's mean and biased variance over every dim but the channel dim 1 and moves the running
    statistics (written in place) toward the mean and the UNBIASED variance by ``momentum``; eval
    normalises with the running statistics (save_mean / save_invstd then empty).

    Two full-size temporaries (the centred input, which becomes the output in place, and its
    square for the pairwise sum): each fresh array of activation size costs its page faults, and
    a chain of expressions made six of them (bench/test_bench_batchnorm.py: ~4x slower)."""
    x3 = _ncl(x)
    if training:
        n = x3.shape[0] * x3.shape[2]
        mean = x3.mean(axis=(0, 2))
        y = x3 - _channel(mean)
        m2 = np.square(y).sum(axis=(0, 2))
        invstd = 1 / np.sqrt(m2 / n + np.asarray(eps, x.dtype))
        if running_mean is not None:
            running_mean[...] = momentum * mean + (1 - momentum) * running_mean
            running_var[...] = momentum * (m2 / (n - 1)) + (1 - momentum) * running_var
        save_mean, save_invstd = mean, invstd
    else:
        mean = running_mean
        invstd = 1 / np.sqrt(running_var + np.asarray(eps, running_var.dtype))
        save_mean = save_invstd = np.zeros((0,), x.dtype)
        y = x3 - _channel(mean)
    scale = invstd if weight is None else invstd * weight      # y = (x - mean) invstd w + b
    y *= _channel(scale.astype(y.dtype, copy=False))
    if bias is not None:
        y += _channel(bias)
    return y.reshape(x.shape), save_mean, save_invstd


def native_batch_norm_backward(grad, x, weight, mean, invstd, *, training, output_mask, **_):
    """(dx, dw, db) of batch norm with the given statistics (the batch's in training, the running
    mean and 1 / sqrt(running_var + eps) in eval): with xhat = (x - mean) invstd,
    dw = sum g xhat, db = sum g over every dim but 1; dx = invstd w (g - mean(g) - xhat mean(g xhat))
    in training (the statistics depend on x), invstd w g in eval. Unrequested parts are empty.
    Two full-size temporaries (xhat, and g xhat, which becomes dx in place)."""
    g3, x3 = _ncl(grad), _ncl(x)
    n = g3.shape[0] * g3.shape[2]
    scale = invstd if weight is None else invstd * weight
    empty = np.zeros((0,), x.dtype)
    dx = dw = db = empty
    need_dw = output_mask[1] or (output_mask[0] and training)
    need_db = output_mask[2] or (output_mask[0] and training)
    if need_dw:
        xhat = x3 - _channel(mean)
        xhat *= _channel(invstd)
        gx = g3 * xhat
        sum_gx = gx.sum(axis=(0, 2))
    if need_db:
        sum_g = g3.sum(axis=(0, 2))
    if output_mask[0]:
        if training:
            with np.errstate(divide="ignore", invalid="ignore"):    # (no elements: dx is empty anyway)
                mean_gx, mean_g = sum_gx / n, sum_g / n
            d = np.multiply(xhat, _channel(mean_gx), out=gx)        # g - mean(g) - xhat mean(g xhat)
            np.subtract(g3, d, out=d)
            d -= _channel(mean_g)
            d *= _channel(scale)
        else:
            d = g3 * _channel(scale)
        dx = d.reshape(x.shape)
    if output_mask[1]:
        dw = sum_gx
    if output_mask[2]:
        db = sum_g
    return dx, dw, db


def _groups(x, N, group):
    return x.reshape(N, group, -1)


def native_group_norm(x, weight, bias, *, N, C, HxW, group, eps, **_):
    """(out, mean, rstd) as torch.native_group_norm: x (N, C, *) normalised over each sample's
    group of C / group channels (biased variance), then scaled and shifted per channel; mean and
    rstd (N, group)."""
    xg = _groups(x, N, group)
    if xg.shape[2] == 0:    # empty groups: torch's mean 0 and rstd nan (0 / 0)
        mean = np.zeros(xg.shape[:2], x.dtype)
        return x.copy(), mean, mean + np.nan
    mean = xg.mean(axis=2)
    xc = xg - mean[..., None]
    rstd = 1 / np.sqrt((xc * xc).mean(axis=2) + np.asarray(eps, x.dtype))
    y = (xc * rstd[..., None]).reshape(N, C, -1)
    if weight is not None:
        y = y * _channel(weight)
    if bias is not None:
        y = y + _channel(bias)
    return y.reshape(x.shape), mean, rstd


def native_group_norm_backward(grad, x, mean, rstd, weight, *, N, C, HxW, group, output_mask, **_):
    """(dx, dw, db) of group norm: with xhat the normalised x and gh = g w,
    dx = rstd (gh - mean(gh) - xhat mean(gh xhat)) over each group, dw = sum g xhat and db = sum g
    over the samples and spatial dims. Unrequested parts are empty."""
    g3, x3 = _ncl(grad), _ncl(x)
    xhat = ((_groups(x, N, group) - mean[..., None]) * rstd[..., None]).reshape(x3.shape)
    empty = np.zeros((0,), x.dtype)
    dx = empty
    if output_mask[0]:
        gh = g3 * _channel(weight) if weight is not None else g3
        ghg, xhg = _groups(gh, N, group), _groups(xhat, N, group)
        dx = rstd[..., None] * (ghg - ghg.mean(axis=2, keepdims=True)
                                 - xhg * (ghg * xhg).mean(axis=2, keepdims=True))
        dx = dx.reshape(x.shape)
    dw = (g3 * xhat).sum(axis=(0, 2)) if output_mask[1] else empty
    db = g3.sum(axis=(0, 2)) if output_mask[2] else empty
    return dx, dw, db


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
