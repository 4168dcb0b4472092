"""NumPy references of issue 21.4's scatters along a dim (ops/scatter.py): index_add, index_copy,
index_fill, index_reduce and masked_scatter. The cpu device runs them; tests check the kernels
(kernels/index.py index_segment_kernel) against them.

Arrays in (in the op's compute dtype), arrays out. Every fold runs on a fresh copy (np.add.at and
its kin ignore the read-only flag, so they never touch tensor memory) in index order: repeated
indices sum, multiply ... in the order torch's cpu loop takes them, and index_copy keeps the last
write of a repeated index (torch leaves it unspecified; tritensor's cuda kernel does the same).
"""
from __future__ import annotations

import numpy as np


def _along(x, src, dim, index):
    """A fresh copy of x and the source, both with ``dim`` first, and the index as int64."""
    out = np.array(x, copy=True, order="C")
    o = np.moveaxis(out, dim, 0)
    s = None if src is None else np.moveaxis(np.asarray(src), dim, 0)
    return out, o, s, np.asarray(index, dtype=np.int64).reshape(-1)


def _identity(reduce, dtype):
    if reduce == "prod":
        return 1
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    if dtype.kind == "b":
        return reduce == "amin"
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def index_add(x, src, dim, index, alpha=1, **_):
    """out[.., index[i], ..] += alpha * src[.., i, ..], in index order."""
    out, o, s, idx = _along(x, src, dim, index)
    if alpha != 1:
        s = s * np.asarray(alpha).astype(out.dtype)
    if out.dtype == bool:
        np.logical_or.at(o, idx, s)
    else:
        np.add.at(o, idx, s.astype(out.dtype, copy=False))
    return out


def index_copy(x, src, dim, index, **_):
    """out[.., index[i], ..] = src[.., i, ..]; the last of repeated indices wins."""
    out, o, s, idx = _along(x, src, dim, index)
    if idx.size:
        _, first_in_reversed = np.unique(idx[::-1], return_index=True)
        last = idx.size - 1 - first_in_reversed
        o[idx[last]] = s[last]
    return out


def index_fill(x, value, dim, index, **_):
    """out[.., index[i], ..] = value (negative indices already wrapped by the op layer)."""
    out, o, _, idx = _along(x, None, dim, index)
    o[idx] = np.asarray(value).astype(out.dtype)
    return out


def index_reduce(x, src, dim, index, reduce, include_self, **_):
    """torch.index_reduce: src's slices folded into x's at the index positions with prod, mean
    (floor division for integers), amax or amin (NaN propagates); include_self=False leaves x's
    own value out of every position named."""
    out, o, s, idx = _along(x, src, dim, index)
    s = s.astype(out.dtype, copy=False)
    if not include_self:
        o[idx] = _identity(reduce, out.dtype) if reduce != "mean" else 0
    ufunc = {"prod": np.multiply, "mean": np.add, "amax": np.maximum, "amin": np.minimum}[reduce]
    ufunc.at(o, idx, s)
    if reduce == "mean" and idx.size:
        count = np.zeros(o.shape[0], dtype=np.int64)
        np.add.at(count, idx, 1)
        hit = np.unique(idx)
        n = (count[hit] + (1 if include_self else 0)).reshape((-1,) + (1,) * (o.ndim - 1))
        o[hit] = o[hit] / n if out.dtype.kind == "f" else np.floor_divide(o[hit], n)
    return out


def masked_scatter(x, src, mask, count=None, **_):
    """x with its masked positions (row-major, mask broadcast to x's shape) taking src's
    elements in order."""
    out = np.array(np.broadcast_to(x, np.broadcast_shapes(x.shape, mask.shape)), copy=True, order="C")
    m = np.broadcast_to(mask, out.shape).astype(bool)
    n = int(m.sum())
    out[m] = np.asarray(src).reshape(-1)[:n].astype(out.dtype, copy=False)
    return out


def _scatter_into_view(x, src, key):
    out = np.array(x, copy=True)
    out[key] = src
    return out


def select_scatter(x, src, dim, index, **_):
    """torch.select_scatter: a copy of x whose x.select(dim, index) holds src."""
    return _scatter_into_view(x, src, (slice(None),) * dim + (index,))


def slice_scatter(x, src, dim, start, end, step, **_):
    """torch.slice_scatter: a copy of x whose [start:end:step] along dim holds src."""
    return _scatter_into_view(x, src, (slice(None),) * dim + (slice(start, end, step),))
