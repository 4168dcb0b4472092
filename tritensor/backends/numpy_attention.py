"""Blockwise NumPy reference of flash attention and its backward (the cpu device; the oracle of
kernels/attention.py). Arrays only.

Causal: key j takes part in row i when j <= i + causal_shift (0: torch's is_causal, the top-left
triangle; S - L: the bottom-right one). Shapes as the table entries hand them over: q (Z, H, L, E), k (Z, Hk, S, E), v (Z, Hk, S, Ev),
a mask (Z, H, L, S) (bool: True takes part; float: added to the scores; often a broadcast view)
or None; the query heads h read key / value head h // (H // Hk) (GQA). Float16 / bfloat16 come
in already widened to float32 (the entry's compute dtype); float64 stays float64.

The forward walks the keys in blocks of ``BLOCK`` with the online softmax (running max m, running
sum l, rescaled accumulator), so no L x S matrix is ever held: memory is O(Z H L (E + BLOCK)).
It returns the output and the log-sum-exp of each row (+inf for a row no key takes part in,
FlashAttention-2's convention: exp(s - lse) is then 0, and the row's output and gradients are 0).
The backward, with lse known, needs one more pass over the same key blocks: each block's
probabilities are rebuilt exactly, giving that block's dK, dV and its share of dQ.

Dropout is the kernels' counter-based Philox stream (``philox_keep``): element (z, h, i, j) of
the scores draws Philox4x32-10 at counter offset // 4 + ((z H + h) L + i) S + j with key
(seed, 0) and keeps the element when its first word's top 31 bits are below
round((1 - p) 2**31). The forward and the backward regenerate the same mask, on every device.
"""
from __future__ import annotations

import numpy as np

BLOCK = 256     # keys per block: large enough for BLAS, small enough for O(L * BLOCK) memory
_M32 = np.uint64(0xFFFFFFFF)


def _mulhilo(a, b):
    prod = a.astype(np.uint64) * np.uint64(b)
    return (prod >> np.uint64(32)) & _M32, prod & _M32


def philox_first_word(seed, counter):
    """Philox4x32-10's first output word for counters ``counter`` (uint64: low / high words are
    c0 / c1, c2 = c3 = 0) and key (seed mod 2**32, seed >> 32), as triton.language.philox."""
    c0 = counter & _M32
    c1 = counter >> np.uint64(32)
    c2 = np.zeros_like(c0)
    c3 = np.zeros_like(c0)
    k0, k1 = np.uint64(int(seed) & 0xFFFFFFFF), np.uint64((int(seed) >> 32) & 0xFFFFFFFF)
    for _ in range(10):
        hi_b, lo_b = _mulhilo(c2, 0xCD9E8D57)
        hi_a, lo_a = _mulhilo(c0, 0xD2511F53)
        c0, c1, c2, c3 = hi_b ^ c1 ^ k0, lo_b, hi_a ^ c3 ^ k1, lo_a
        k0 = (k0 + np.uint64(0x9E3779B9)) & _M32
        k1 = (k1 + np.uint64(0xBB67AE85)) & _M32
    return c0


def keep_threshold(p):
    """Elements whose 31-bit draw is below this are kept (probability 1 - p)."""
    return int(round((1.0 - p) * 2.0 ** 31))


def philox_keep(seed, offset, zh, i, j, L, S, p):
    """The dropout keep-mask for rows ``i`` (column) and keys ``j`` (row) of the flattened heads
    ``zh`` (leading axis), broadcast as (len(zh), len(i), len(j))."""
    n = (zh[:, None, None].astype(np.uint64) * np.uint64(L) + i[None, :, None].astype(np.uint64)) * np.uint64(S) \
        + j[None, None, :].astype(np.uint64)
    words = philox_first_word(seed, np.uint64(offset // 4) + n)
    return (words >> np.uint64(1)) < np.uint64(keep_threshold(p))


def _scores(q, kb, mask, r0, j0, j1, scale, is_causal, shift):
    """scale * q[r0:] kb^T + mask over keys j0:j1, masked entries -inf: (Z, H, L - r0, j1 - j0)."""
    s = np.matmul(q[:, :, r0:], np.swapaxes(kb, -1, -2))
    s *= q.dtype.type(scale)
    L = q.shape[2]
    if mask is not None:
        mb = mask[:, :, r0:, j0:j1]
        if mb.dtype == np.bool_:
            s[~np.broadcast_to(mb, s.shape)] = -np.inf
        else:
            s += mb.astype(s.dtype, copy=False)
    if is_causal and j1 - 1 > r0 + shift:        # the block crosses the diagonal
        s[:, :, np.arange(j0, j1)[None, :] > np.arange(r0, L)[:, None] + shift] = -np.inf
    return s


def _first_row(j0, is_causal, shift):
    """Rows above j0 - shift see no key of a block starting at j0 (causal)."""
    return max(0, j0 - shift) if is_causal else 0


def _drop(seed, offset, shape, r0, j0, j1, p):
    Z, H, L, S = shape
    keep = philox_keep(seed, offset, np.arange(Z * H), np.arange(r0, L), np.arange(j0, j1), L, S, p)
    return keep.reshape(Z, H, L - r0, j1 - j0)


def _heads(t, H):
    """Key / value heads repeated for the query heads that read them (GQA)."""
    return t if t.shape[1] == H else np.repeat(t, H // t.shape[1], axis=1)


def attention_forward(q, k, v, *, mask, scale, is_causal, dropout_p, seed, offset, causal_shift=0):
    """(out (Z, H, L, Ev), lse (Z, H, L), in the compute dtype) by the online softmax over key
    blocks (causal: only the rows that see a block, and no block past the last row's diagonal)."""
    Z, H, L, _ = q.shape
    S, Ev = k.shape[2], v.shape[3]
    k, v = _heads(k, H), _heads(v, H)
    m = np.full((Z, H, L, 1), -np.inf, q.dtype)
    l = np.zeros((Z, H, L, 1), q.dtype)
    acc = np.zeros((Z, H, L, Ev), q.dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        for j0 in range(0, S, BLOCK):
            j1 = min(S, j0 + BLOCK)
            r0 = _first_row(j0, is_causal, causal_shift)
            if r0 >= L:
                break
            s = _scores(q, k[:, :, j0:j1], mask, r0, j0, j1, scale, is_causal, causal_shift)
            m_old = m[:, :, r0:]
            m_new = np.maximum(m_old, s.max(-1, keepdims=True))
            m_safe = np.where(np.isneginf(m_new), 0, m_new)       # a row with nothing yet: no NaN
            alpha = np.exp(m_old - m_safe)
            s -= m_safe
            p = np.exp(s, out=s)
            l[:, :, r0:] = l[:, :, r0:] * alpha + p.sum(-1, keepdims=True)
            if dropout_p > 0:
                p = np.where(_drop(seed, offset, (Z, H, L, S), r0, j0, j1, dropout_p), p / (1 - dropout_p), 0)
            acc[:, :, r0:] = acc[:, :, r0:] * alpha + np.matmul(p.astype(q.dtype, copy=False), v[:, :, j0:j1])
            m[:, :, r0:] = m_new
        empty = l == 0
        out = np.where(empty, 0, acc / np.where(empty, 1, l))
        lse = np.where(empty, np.inf, m + np.log(np.where(empty, 1, l)))[..., 0]
    return out.astype(q.dtype), lse.astype(q.dtype)


def attention_backward(g, q, k, v, out, lse, *, mask, scale, is_causal, dropout_p, seed, offset, causal_shift=0):
    """(dq, dk, dv) of sum(g * out): per key block, P = exp(s - lse) rebuilt, dV = (P Z)^T g,
    dS = P (Z (g V^T) - rowsum(g out)), dK = scale dS^T q, dQ += scale dS K."""
    Z, H, L, _ = q.shape
    Hk, S = k.shape[1], k.shape[2]
    ke, ve = _heads(k, H), _heads(v, H)
    delta = (g.astype(np.float64) * out).sum(-1, keepdims=True).astype(q.dtype)
    lse = lse.astype(q.dtype)[..., None]
    dq = np.zeros(q.shape, q.dtype)
    dk = np.zeros(ke.shape, q.dtype)
    dv = np.zeros(ve.shape, q.dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        for j0 in range(0, S, BLOCK):
            j1 = min(S, j0 + BLOCK)
            r0 = _first_row(j0, is_causal, causal_shift)
            if r0 >= L:
                break
            s = _scores(q, ke[:, :, j0:j1], mask, r0, j0, j1, scale, is_causal, causal_shift)
            s -= lse[:, :, r0:]
            p = np.exp(s, out=s)                       # lse = +inf on empty rows: p = 0
            gr = g[:, :, r0:]
            dp = np.matmul(gr, np.swapaxes(ve[:, :, j0:j1], -1, -2))
            pz = p
            if dropout_p > 0:
                zmask = _drop(seed, offset, (Z, H, L, S), r0, j0, j1, dropout_p)
                pz = np.where(zmask, p / (1 - dropout_p), 0)
                dp = np.where(zmask, dp / (1 - dropout_p), 0)
            dv[:, :, j0:j1] = np.matmul(np.swapaxes(pz, -1, -2), gr)
            dp -= delta[:, :, r0:]
            dp *= p                                    # dS
            dk[:, :, j0:j1] = np.matmul(np.swapaxes(dp, -1, -2), q[:, :, r0:]) * scale
            dq[:, :, r0:] += np.matmul(dp, ke[:, :, j0:j1]) * scale
    g_k, g_v = H // Hk, H // v.shape[1]
    dk = dk.reshape(Z, Hk, g_k, S, dk.shape[-1]).sum(2)
    dv = dv.reshape(Z, v.shape[1], g_v, S, dv.shape[-1]).sum(2)
    return dq, dk, dv
