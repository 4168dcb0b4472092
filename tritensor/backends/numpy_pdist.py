"""Blocked NumPy references of pdist / cdist and their backward (the cpu device; the oracle of
kernels/pdist.py). Arrays only.

Nothing here builds an N x N x D array: rows go in blocks, so a difference slab holds at most
``SLAB`` elements, and p = 2 runs as Gram blocks through BLAS (with the kernels' cancellation
guard: entries small against the row norms are recomputed from the differences, so identical
rows give exactly 0). pdist writes each block of rows straight into its packed range (the pairs of
rows i0..i1 are contiguous in torch's order).

Derivatives follow torch's (aten/src/ATen/native/cpu/DistanceOpsKernel.cpp): zero where the
distance is 0; p = 0 has zero derivative; p = 1 gives sign(diff); p = inf gives sign(diff) on the
features that reach the max; other p give sign(diff) * (|diff| / d) ** (p - 1), 0 where diff is 0.
"""
from __future__ import annotations

import math

import numpy as np

SLAB = 1 << 20          # elements of one [rows, cols, features] difference slab
GRAM_ROWS = 256         # rows of one Gram block
GRAM_TOL = 2.0 ** -6    # as the kernels' IEEE threshold (backends/triton/pdist.py)


# --------------------------------------------------------------------------- the pair index
def _tri(r):
    r = np.asarray(r, dtype=np.int64)
    return np.where(r % 2 == 0, (r // 2) * (r + 1), r * ((r + 1) // 2))


def pair_row_start(i, n):
    """Packed index of the pair (i, i + 1) of an n-row pdist (the twin of the kernels')."""
    n = np.int64(n)
    return _tri(n - 1) - _tri(n - 1 - np.asarray(i, dtype=np.int64))


def pair_from_index(k, n):
    """(i, j) of packed indices k, the twin of kernels/pdist.py's pair_from_index (the same
    float64 square root counted from the end, then one integer correction each way)."""
    n = np.int64(n)
    k = np.asarray(k, dtype=np.int64)
    total = _tri(n - 1)
    m = total - 1 - k
    r = ((np.sqrt(m.astype(np.float64) * 8.0 + 1.0) - 1.0) * 0.5).astype(np.int64) + 1
    r = np.clip(r, 1, n - 1)
    r = np.where(_tri(r - 1) > m, r - 1, r)
    r = np.where(_tri(r) <= m, r + 1, r)
    i = n - 1 - r
    return i, k - (total - _tri(r)) + i + 1


# --------------------------------------------------------------------------- blocks
def _reduce_slab(diff, p):
    """The per-pair reduction of |diff| (a [rows, cols, features] slab) before the root."""
    if p == 0:
        return np.count_nonzero(diff, axis=-1).astype(diff.dtype)
    if p == 1:
        return diff.sum(axis=-1)
    if p == 2:
        return np.einsum("ijk,ijk->ij", diff, diff)
    if math.isinf(p):
        return diff.max(axis=-1, initial=0)
    return (diff ** p).sum(axis=-1)


def _finish(acc, p):
    if p == 2:
        return np.sqrt(acc)
    if p in (0, 1) or math.isinf(p):
        return acc
    return acc ** (1.0 / p)


def _direct(a, b, p):
    """[len(a), len(b)] distances from slabs of at most SLAB elements."""
    out = np.empty((a.shape[0], b.shape[0]), dtype=a.dtype)
    D = max(a.shape[1], 1)
    cols = max(1, min(b.shape[0], SLAB // (D * max(a.shape[0], 1)) or 1))
    rows = max(1, min(a.shape[0], SLAB // (D * cols)))
    for i0 in range(0, a.shape[0], rows):
        for j0 in range(0, b.shape[0], cols):
            diff = np.abs(a[i0:i0 + rows, None, :] - b[None, j0:j0 + cols, :])
            out[i0:i0 + rows, j0:j0 + cols] = _reduce_slab(diff, p)
    return _finish(out, p)


def _gram(a, b):
    """Euclidean distances through a @ b.T, cancellation-guarded (see the module docstring)."""
    scale = np.add.outer(np.einsum("ij,ij->i", a, a), np.einsum("ij,ij->i", b, b))
    sq = a @ b.T                       # in place from here: these blocks are the big arrays
    sq *= -2
    sq += scale
    scale *= GRAM_TOL
    ii, jj = np.nonzero(sq <= scale)
    np.maximum(sq, 0, out=sq)
    if len(ii):
        diff = a[ii] - b[jj]
        sq[ii, jj] = np.einsum("ij,ij->i", diff, diff)
    return np.sqrt(sq, out=sq)


def _rows_block(x, p, i0, i1, gram):
    """Distances of rows i0..i1 to rows i0..n (the part of the triangle these rows own)."""
    a, b = x[i0:i1], x[i0:]
    return _gram(a, b) if gram else _direct(a, b, p)


def _upper_mask(i0, i1, n):
    rows = np.arange(i0, i1)[:, None]
    return np.arange(i0, n)[None, :] > rows


# --------------------------------------------------------------------------- pdist
def pdist(x, p):
    n, D = x.shape
    out = np.empty(n * (n - 1) // 2, dtype=x.dtype)
    gram = p == 2
    rows = GRAM_ROWS if gram else 64
    for i0 in range(0, max(n - 1, 0), rows):
        i1 = min(i0 + rows, n)
        block = _rows_block(x, p, i0, i1, gram)
        out[pair_row_start(i0, n):pair_row_start(i1, n) if i1 < n else len(out)] = block[_upper_mask(i0, i1, n)]
    return out


def _grad_weights(diff, d, g, p):
    """torch's per-feature derivative times g, for a slab diff [rows, cols, features] with the
    pair distances d and gradients g [rows, cols] (0 where d is 0)."""
    d = d[..., None]
    g = g[..., None]
    sign = np.sign(diff)
    if p == 1:
        return sign * g
    if math.isinf(p):
        return np.where(np.abs(diff) == d, sign * g, 0)
    safe = np.where(d == 0, 1, d)
    if p == 2:
        return np.where(d == 0, 0, diff * (g / safe))
    ratio = np.abs(diff) / safe
    with np.errstate(divide="ignore"):
        return np.where((d == 0) | (diff == 0), 0, sign * ratio ** (p - 1) * g)


def _pair_grads(a, b, g, d, p):
    """(sum_j g_ij f(a_i - b_j), sum_i g_ij f(a_i - b_j)) for blocks a, b with g, d [len(a), len(b)]."""
    if p == 2:
        zero = d == 0
        w = g / np.where(zero, 1, d)
        w[zero] = 0
        return w.sum(1)[:, None] * a - w @ b, w.T @ a - w.sum(0)[:, None] * b
    ga = np.zeros_like(a)
    gb = np.zeros_like(b)
    D = max(a.shape[1], 1)
    cols = max(1, min(b.shape[0], SLAB // (D * max(a.shape[0], 1)) or 1))
    rows = max(1, min(a.shape[0], SLAB // (D * cols)))
    for i0 in range(0, a.shape[0], rows):
        for j0 in range(0, b.shape[0], cols):
            sl = (slice(i0, i0 + rows), slice(j0, j0 + cols))
            diff = a[sl[0], None, :] - b[None, sl[1], :]
            f = _grad_weights(diff, d[sl], g[sl], p)
            ga[sl[0]] += f.sum(axis=1)
            gb[sl[1]] += f.sum(axis=0)
    return ga, gb


def pdist_backward(g, x, dist, p):
    """d(sum g * pdist(x, p)) / dx: each pair (i < j) adds g f(x_i - x_j) to row i and takes it
    from row j, block of rows by block of rows."""
    n, D = x.shape
    res = np.zeros_like(x)
    if p == 0 or n < 2:
        return res
    rows = GRAM_ROWS if p == 2 else 64
    for i0 in range(0, n - 1, rows):
        i1 = min(i0 + rows, n)
        mask = _upper_mask(i0, i1, n)
        lo, hi = pair_row_start(i0, n), pair_row_start(i1, n) if i1 < n else len(dist)
        gb = np.zeros(mask.shape, dtype=x.dtype)
        db = np.zeros(mask.shape, dtype=x.dtype)
        gb[mask] = g[lo:hi]
        db[mask] = dist[lo:hi]
        to_a, to_b = _pair_grads(x[i0:i1], x[i0:], gb, db, p)
        res[i0:i1] += to_a
        res[i0:] -= to_b
    return res


# --------------------------------------------------------------------------- cdist
def _batched(arrays, batch_shape):
    """Each array broadcast to batch_shape + its last two dims, flattened over the batch."""
    count = math.prod(batch_shape)
    return [np.broadcast_to(a, tuple(batch_shape) + a.shape[-2:]).reshape((count,) + a.shape[-2:])
            for a in arrays]


def cdist(x1, x2, p, use_mm):
    batch_shape = np.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    a, b = _batched([x1, x2], batch_shape)
    out = np.empty((a.shape[0], a.shape[1], b.shape[1]), dtype=x1.dtype)
    gram = p == 2 and use_mm
    for e in range(a.shape[0]):
        for i0 in range(0, a.shape[1], GRAM_ROWS):
            ai = a[e, i0:i0 + GRAM_ROWS]
            out[e, i0:i0 + GRAM_ROWS] = _gram(ai, b[e]) if gram else _direct(ai, b[e], p)
    return out.reshape(tuple(batch_shape) + out.shape[1:])


def cdist_backward(g, a, b, dist, p):
    """torch's _cdist_backward: res[..., i, :] = sum_j g[..., i, j] d dist[..., i, j] / d a[..., i, :]
    (every operand already of res's batch shape)."""
    batch_shape = a.shape[:-2]
    ga, aa, bb, da = _batched([g, a, b, dist], batch_shape)
    res = np.zeros(aa.shape, dtype=a.dtype)
    if p != 0 and bb.shape[1]:
        for e in range(aa.shape[0]):
            for i0 in range(0, aa.shape[1], GRAM_ROWS):
                sl = slice(i0, i0 + GRAM_ROWS)
                res[e, sl] = _pair_grads(aa[e, sl], bb[e], ga[e, sl], da[e, sl], p)[0]
    return res.reshape(a.shape)
