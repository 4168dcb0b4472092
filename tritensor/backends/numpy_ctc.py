"""NumPy reference of the CTC loss (ops/losses.py's ctc entries; the cpu device runs it): the alpha
recursion forward and the beta recursion backward over the alignment lattice in log space,
vectorised over the batch and the extended label positions, a loop over time. Same layout and
formula as kernels/loss.py's CTC block (torch's aten/src/ATen/native/LossCTC.cpp)."""
from __future__ import annotations

import numpy as np

NEG_INF = -np.inf


def _labels(targets, target_lengths, target_offsets, L, blank):
    """(N, L) extended labels l' (blank at even positions and past 2 len + 1) and the mask of the
    positions each sample has."""
    N = len(target_lengths)
    s = np.arange(L)
    live = s[None, :] < 2 * target_lengths[:, None] + 1
    odd = (s % 2 == 1)[None, :] & live
    k = np.where(odd, (s[None, :] - 1) // 2 + target_offsets[:, None], 0)
    flat = np.asarray(targets).reshape(-1)
    picked = flat[np.clip(k, 0, max(len(flat) - 1, 0))] if len(flat) else np.zeros((N, L), np.int64)
    return np.where(odd, picked, blank).astype(np.int64), live


def _emit(log_probs, t, lab, ok):
    """log_probs[t, n, l'_s] (-inf for a label outside [0, C))."""
    T, N, C = log_probs.shape
    safe = np.where(ok, lab, 0)
    return np.where(ok, log_probs[t, np.arange(N)[:, None], safe], NEG_INF)


def _lse(*terms):
    stacked = np.stack(terms)
    m = stacked.max(0)
    safe = np.where(np.isneginf(m), 0, m)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = safe + np.log(np.exp(stacked - safe).sum(0))
    return np.where(np.isneginf(m), NEG_INF, r)


def _shift(a, k):
    """a[:, s - k] (-inf where s < k) for k > 0, a[:, s + |k|] for k < 0."""
    out = np.full_like(a, NEG_INF)
    if k > 0:
        out[:, k:] = a[:, :-k]
    else:
        out[:, :k] = a[:, -k:]
    return out


def _ints(*arrays):
    """The integer operands (the cpu device hands every operand over in the compute dtype)."""
    return [np.asarray(a).astype(np.int64) for a in arrays]


def ctc_loss(log_probs, targets, input_lengths, target_lengths, target_offsets, *, blank, max_target, **_):
    targets, input_lengths, target_lengths, target_offsets = _ints(targets, input_lengths, target_lengths,
                                                                   target_offsets)
    T, N, C = log_probs.shape
    L = 2 * max_target + 1
    lab, live = _labels(targets, target_lengths, target_offsets, L, blank)
    ok = live & (lab >= 0) & (lab < C)
    skip = live & (np.arange(L)[None, :] >= 2) & (lab != _shift_labels(lab, 2, blank))
    alpha = np.full((N, T, L), NEG_INF, dtype=log_probs.dtype)
    if T:
        first = _emit(log_probs, 0, lab, ok & (np.arange(L) < 2)[None, :] & (input_lengths > 0)[:, None])
        alpha[:, 0] = first
    for t in range(1, T):
        prev = np.where(live, alpha[:, t - 1], NEG_INF)
        a2 = np.where(skip, _shift(prev, 2), NEG_INF)
        emit = _emit(log_probs, t, lab, ok & (t < input_lengths)[:, None])
        alpha[:, t] = _lse(prev, _shift(prev, 1), a2) + emit
    nll = np.empty(N, dtype=log_probs.dtype)
    for n in range(N):
        tn, ln = int(input_lengths[n]), int(target_lengths[n])
        if tn == 0:
            nll[n] = 0.0 if ln == 0 else np.inf
            continue
        last = alpha[n, tn - 1]
        nll[n] = -_lse(last[2 * ln], last[2 * ln - 1] if ln > 0 else NEG_INF)
    return nll, alpha


def _shift_labels(lab, k, blank):
    out = np.full_like(lab, blank)
    out[:, k:] = lab[:, :-k]
    return out


def ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths, target_offsets, nll, log_alpha, *,
                      blank, zero_infinity):
    targets, input_lengths, target_lengths, target_offsets = _ints(targets, input_lengths, target_lengths,
                                                                   target_offsets)
    T, N, C = log_probs.shape
    L = log_alpha.shape[2]
    lab, live = _labels(targets, target_lengths, target_offsets, L, blank)
    n_prime = 2 * target_lengths + 1
    ok = live & (lab >= 0) & (lab < C)
    s = np.arange(L)[None, :]
    lab_p2 = np.full_like(lab, blank)
    lab_p2[:, :-2] = lab[:, 2:]
    lab_p2 = np.where(s + 2 < n_prime[:, None], lab_p2, blank)
    skip = live & (s + 2 < n_prime[:, None]) & (lab != lab_p2)
    out = np.zeros_like(log_probs)
    beta_next = np.full((N, L), NEG_INF, dtype=log_probs.dtype)
    gr = np.broadcast_to(np.asarray(grad, dtype=log_probs.dtype), (N,))
    keep = np.ones(N, bool) if not zero_infinity else nll != np.inf
    classes = np.arange(C)
    for t in range(T - 1, -1, -1):
        more = (t + 1 < input_lengths)[:, None]
        b0 = np.where(live & more, beta_next, NEG_INF)
        b1 = np.where(live & more & (s + 1 < n_prime[:, None]), _shift(beta_next, -1), NEG_INF)
        b2 = np.where(skip & more, _shift(beta_next, -2), NEG_INF)
        start = np.where((s == n_prime[:, None] - 1) | (s == n_prime[:, None] - 2), 0.0, NEG_INF)
        emit = _emit(log_probs, t, lab, ok & (t < input_lengths)[:, None])
        beta = np.where(more, _lse(b0, b1, b2), start) + emit
        ab = np.where(live, log_alpha[:, t] + beta, NEG_INF)
        vals = np.where(lab[:, None, :] == classes[None, :, None], ab[:, None, :], NEG_INF)    # (N, C, L)
        lcab = _lse(*np.moveaxis(vals, 2, 0)) if L else np.full((N, C), NEG_INF)
        lp = log_probs[t]
        with np.errstate(all="ignore"):
            g = (np.exp(lp) - np.exp(lcab + nll[:, None] - lp)) * gr[:, None]
        out[t] = np.where(((t < input_lengths) & keep)[:, None], g, 0.0)
        beta_next = beta
    return out
