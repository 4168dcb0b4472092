"""NumPy references of the sparse ops' table entries (ops/sparse.py): the cpu device runs them,
and the tests check the Triton kernel (kernels/sparse.py) against them."""
from __future__ import annotations

import numpy as np


def sparse_mm(values, dense, *, rows, cols, nrows, **_):
    """out[nrows, N] = sum over nonzeros k of values[k] * dense[cols[k], :] into row rows[k],
    accumulated in the nonzeros' order (np.add.at, on a fresh array)."""
    out = np.zeros((nrows, dense.shape[1]), dtype=np.result_type(values.dtype, dense.dtype))
    if values.size:
        np.add.at(out, rows, values[:, None] * dense[cols])
    return out


def sampled_addmm(values, mat1, mat2, *, rows, cols, beta, alpha, **_):
    """out[e] = beta * values[e] + alpha * (mat1[rows[e]] . mat2[:, cols[e]]) for each stored entry."""
    rows, cols = np.asarray(rows, np.int64), np.asarray(cols, np.int64)
    dots = np.einsum("ek,ke->e", mat1[rows], mat2[:, cols]) if rows.size else np.zeros(0, values.dtype)
    return (beta * values + alpha * dots).astype(values.dtype)
