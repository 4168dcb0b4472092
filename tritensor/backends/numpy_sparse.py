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
