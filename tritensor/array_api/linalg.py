"""The standard's ``linalg`` extension (tritensor.array_api.linalg): see _linalg.py."""
from ._linalg import (  # noqa: F401
    LINALG as __all__, cholesky, cross, det, diagonal, eigh, eigvalsh, inv, matmul, matrix_norm, matrix_power,
    matrix_rank, matrix_transpose, outer, pinv, qr, slogdet, solve, svd, svdvals, tensordot, trace, vecdot,
    vector_norm)
