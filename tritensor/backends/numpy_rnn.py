"""NumPy references of the fused recurrent cell steps (kernels/rnn.py): the cpu device runs
them and the tests check the kernels against them. Arrays arrive in the compute dtype.

LSTM gates are torch's order (i, f, g, o), GRU's (r, z, n) with n = tanh(in + r hn); the
workspaces hold the activated gates (LSTM: i, f, g, o; GRU: r, z, n, hn) for the backward.
"""
from __future__ import annotations

import numpy as np


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x))


def _split(a, k):
    H = a.shape[1] // k
    return [a[:, i * H:(i + 1) * H] for i in range(k)]


def fused_lstm_cell(ig, hg, cx, **_):
    gi, gf, gg, go = _split(ig + hg, 4)
    i, f, g, o = _sigmoid(gi), _sigmoid(gf), np.tanh(gg), _sigmoid(go)
    cy = f * cx + i * g
    hy = o * np.tanh(cy)
    return hy, cy, np.concatenate([i, f, g, o], axis=1)


def fused_lstm_cell_backward(grad_hy, grad_cy, cx, cy, ws, **_):
    i, f, g, o = _split(ws, 4)
    tc = np.tanh(cy)
    dc = np.zeros_like(cx) if grad_cy is None else grad_cy.copy()
    do = np.zeros_like(cx)
    if grad_hy is not None:
        do = grad_hy * tc
        dc = dc + grad_hy * o * (1 - tc * tc)
    gates = np.concatenate([dc * g * i * (1 - i), dc * cx * f * (1 - f), dc * i * (1 - g * g), do * o * (1 - o)],
                           axis=1)
    return gates, dc * f


def fused_gru_cell(ig, hg, hx, **_):
    xr, xz, xn = _split(ig, 3)
    hr, hz, hn = _split(hg, 3)
    r, z = _sigmoid(xr + hr), _sigmoid(xz + hz)
    n = np.tanh(xn + r * hn)
    return n + z * (hx - n), np.concatenate([r, z, n, hn], axis=1)


def fused_gru_cell_backward(grad_hy, hx, ws, **_):
    r, z, n, hn = _split(ws, 4)
    dn = grad_hy * (1 - z) * (1 - n * n)
    dz = grad_hy * (hx - n) * z * (1 - z)
    dr = dn * hn * r * (1 - r)
    return (np.concatenate([dr, dz, dn], axis=1), np.concatenate([dr, dz, dn * r], axis=1), grad_hy * z)


def fused_rnn_cell(ig, hg, *, relu, **_):
    x = ig + hg
    return np.where(np.isnan(x) | (x > 0), x, 0).astype(x.dtype) if relu else np.tanh(x)


def fused_rnn_cell_backward(grad_hy, hy, *, relu, **_):
    if relu:
        return np.where(hy <= 0, 0, grad_hy).astype(grad_hy.dtype)
    return grad_hy * (1 - hy * hy)
