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
