"""NumPy references of the sparse ops' table entries (ops/sparse.py): the cpu device runs them,
and the tests check the Triton kernel (kernels/sparse.py) against them."""
from __future__ import annotations

import numpy as np


def sparse_mm(values, dense, *, rows, cols, crow, nrows, **_):
    """out[nrows, N] = sum over nonzeros k of values[k] * dense[cols[k], :] into row rows[k]: the
    nonzeros come sorted by row, ``crow`` their row pointers; each row's products are summed in the
    nonzeros' order (np.add.reduceat over the row segments, on a fresh array)."""
    out = np.zeros((nrows, dense.shape[1]), dtype=np.result_type(values.dtype, dense.dtype))
    if values.size and out.size:
        crow = np.asarray(crow, np.int64)
        filled = np.flatnonzero(crow[1:] > crow[:-1])                 # rows with entries
        products = values[:, None] * dense[np.asarray(cols, np.int64)]
        out[filled] = np.add.reduceat(products, crow[filled], axis=0)
    return out


def sampled_addmm(values, mat1, mat2, *, rows, cols, beta, alpha, **_):
    """out[e] = beta * values[e] + alpha * (mat1[rows[e]] . mat2[:, cols[e]]) for each stored entry."""
    rows, cols = np.asarray(rows, np.int64), np.asarray(cols, np.int64)
    # (mat2's columns gathered as rows of a contiguous transpose: a strided gather is slower)
    dots = np.einsum("ek,ek->e", mat1[rows], np.ascontiguousarray(mat2.T)[cols]) if rows.size else \
        np.zeros(0, values.dtype)
    return (beta * values + alpha * dots).astype(values.dtype)
