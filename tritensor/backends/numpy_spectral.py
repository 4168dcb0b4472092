"""NumPy references of the spectral decompositions (ops/spectral.py): the cpu device runs them,
and the emulated Jacobi kernels (kernels/linalg_spectral.py) are checked against their values.

numpy.linalg is LAPACK (syevd, gesdd) as torch's cpu kernels are, so eigenvalues, singular values
and the decompositions agree with torch's cpu results to rounding; eigenvectors and singular
vectors are unique only up to sign (and rotations within repeated values), as they are between
LAPACK builds. Batches (..., m, n) in the op's compute dtype (float32 or float64).

The primitives return the orthogonal factors in LAPACK's column-major layout, as the contiguous
transpose of the factor: ``eigh`` returns (w, V^T, info) and ``svd`` (U^T, S, V, info); the op
layer views them back (a column-major V, U and Vh = V^T, strides as torch's).

Non-finite input is reported as torch's LAPACK calls report it:

    eigh   a NaN in the triangle read, for n >= 3: info = n - 1 (eigenvectors wanted) or n - 2
           (eigenvalues only): torch's codes for a matrix of NaNs (LAPACK's code for a matrix
           that is NaN in a few places depends on where they sit; every such matrix is an error
           here). An inf, or a NaN for n <= 2: NaN results and info 0.
    svd    a NaN anywhere: info = 1 (torch: "the input matrix contained non-finite values");
           an inf: NaN results and info 0.
"""
from __future__ import annotations

import numpy as np


def _mT(a):
    return np.swapaxes(a, -1, -2)


def symmetric_from(a, lower):
    """The symmetric matrix eigh reads: a's lower (upper) triangle mirrored."""
    if lower:
        return np.tril(a) + _mT(np.tril(a, -1))
    return np.triu(a) + _mT(np.triu(a, 1))


def _finite_stand_in(a, bad):
    """``a`` with its non-finite matrices (``bad``, over the batch) replaced by zeros, so that
    numpy.linalg (which raises on them) computes the rest."""
    if not bad.any():
        return a
    return np.where(bad[..., None, None], 0, a)


def eigh(a, *, lower, compute_v):
    """(eigenvalues ascending, eigenvectors transposed (each row one eigenvector) or an empty
    array, info) of the symmetric matrices read from a's lower (upper) triangle."""
    n = a.shape[-1]
    s = symmetric_from(a, lower)
    triangle = np.tril(np.ones((n, n), bool)) if lower else np.triu(np.ones((n, n), bool))
    nan = np.isnan(np.where(triangle, a, 0)).any(axis=(-2, -1))
    bad = ~np.isfinite(s).all(axis=(-2, -1))
    if compute_v:
        w, V = np.linalg.eigh(_finite_stand_in(s, bad))
        if bad.any():
            w = np.where(bad[..., None], np.nan, w)
            V = np.where(bad[..., None, None], np.nan if n > 1 else 1.0, V)
        vt = np.ascontiguousarray(_mT(V))
    else:
        w = np.linalg.eigvalsh(_finite_stand_in(s, bad))
        w = np.where(bad[..., None], np.nan, w)
        vt = np.zeros((0,), a.dtype)
    code = (n - 1 if compute_v else n - 2) if n >= 3 else 0
    return w.astype(a.dtype), vt.astype(a.dtype), np.where(nan, code, 0).astype(np.int32)


def svd(a, *, full_matrices, compute_uv):
    """(U^T, S descending, V, info) of each matrix (U^T and V empty arrays without
    ``compute_uv``); U is m x m (m x k) and V n x n (n x k) with (without) ``full_matrices``."""
    bad = ~np.isfinite(a).all(axis=(-2, -1))
    info = np.isnan(a).any(axis=(-2, -1)).astype(np.int32)
    clean = _finite_stand_in(a, bad)
    if not compute_uv:
        S = np.linalg.svd(clean, compute_uv=False)
        S = np.where(bad[..., None], np.nan, S)
        empty = np.zeros((0,), a.dtype)
        return empty, S.astype(a.dtype), empty, info
    U, S, Vh = np.linalg.svd(clean, full_matrices=full_matrices)
    if bad.any():
        S = np.where(bad[..., None], np.nan, S)
        U = np.where(bad[..., None, None], np.nan, U)
        Vh = np.where(bad[..., None, None], np.nan, Vh)
    return (np.ascontiguousarray(_mT(U)).astype(a.dtype), S.astype(a.dtype),
            np.ascontiguousarray(_mT(Vh)).astype(a.dtype), info)
