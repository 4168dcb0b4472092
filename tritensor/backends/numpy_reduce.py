"""NumPy references of the reductions that numpy_ref.reduce does not cover: variance, the
nuclear norm and its gradient (through NumPy's SVD), count_nonzero. Arrays in (already in the
op's compute dtype), arrays out; ops/reduce.py names them in its op table."""
from __future__ import annotations

import numpy as np


def var(x, dims, keepdim, correction, dim_given=False):
    """sum((x - mean)^2) / max(n - correction, 0) over ``dims``; an empty range gives NaN."""
    n = int(np.prod([x.shape[d] for d in dims])) if dims else 1
    centered = x - (x.sum(axis=dims, keepdims=True) / n if n else np.full_like(x, np.nan))
    return (centered * centered).sum(axis=dims, keepdims=keepdim) / np.float64(max(n - correction, 0)).astype(x.dtype)


def _as_matrices(a, d0, d1):
    """a with dims d0, d1 moved last (rows, columns)."""
    return np.moveaxis(np.asarray(a), (d0, d1), (-2, -1))


def nuclear_norm(x, dims, keepdim):
    """The sum of the singular values of each matrix spanned by ``dims`` (0 for empty ones)."""
    m = _as_matrices(x, *dims).astype(np.float64 if x.dtype == np.float64 else np.float32)
    if m.size == 0:
        s = np.zeros(m.shape[:-2], dtype=m.dtype)
    else:
        s = np.linalg.svd(m, compute_uv=False).sum(axis=-1)
    if keepdim:
        for d in sorted(dims):
            s = np.expand_dims(s, d)
    return s


def polar(x, dims):
    """U V^T of the thin SVD of each matrix (the nuclear norm's gradient), in x's layout."""
    m = _as_matrices(x, *dims)
    if m.size == 0:
        return np.zeros(x.shape, dtype=x.dtype)
    u, _, vt = np.linalg.svd(m, full_matrices=False)
    return np.moveaxis(u @ vt, (-2, -1), dims).astype(x.dtype)


def count_nonzero(x, dims, keepdim, **_):
    return np.count_nonzero(x, axis=tuple(dims), keepdims=keepdim) if x.ndim else np.int64(x != 0)
