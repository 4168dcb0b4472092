"""The standard's linear-algebra functions (matmul, matrix_transpose, tensordot, vecdot) and its
``linalg`` extension, over tt.linalg. The results with several arrays are tt.linalg's named tuples,
whose fields are the standard's (eigenvalues/eigenvectors, Q/R, sign/logabsdet, U/S/Vh)."""
from __future__ import annotations

import tritensor as tt

from ._helpers import ensure_array, promote_pair


def matmul(x1, x2, /):
    """The matrix product (1-D operands as vectors, batch dimensions broadcast)."""
    return tt.matmul(*promote_pair(ensure_array(x1, "x1"), ensure_array(x2, "x2")))


def matrix_transpose(x, /):
    """x with its last two axes swapped (a view); x needs at least two dimensions."""
    x = ensure_array(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose() needs at least two dimensions, got {x.ndim}")
    return x.mT


def tensordot(x1, x2, /, *, axes=2):
    """The sum of products over ``axes`` (a count of trailing/leading axes, or two sequences)."""
    x1, x2 = promote_pair(ensure_array(x1, "x1"), ensure_array(x2, "x2"))
    if isinstance(axes, int):
        if not 0 <= axes <= min(x1.ndim, x2.ndim):
            raise ValueError(f"tensordot(): axes={axes} must be in [0, {min(x1.ndim, x2.ndim)}]")
        pairs = list(zip(range(x1.ndim - axes, x1.ndim), range(axes)))
    else:
        axes = (list(axes[0]), list(axes[1]))
        if len(axes[0]) != len(axes[1]):
            raise ValueError("tensordot(): the two sequences of axes differ in length")
        pairs = list(zip(*axes))
    for a, b in pairs:      # the standard: contracted axes match exactly (torch broadcasts a length one)
        if x1.shape[a] != x2.shape[b]:
            raise ValueError(f"tensordot(): axis {a} of x1 (length {x1.shape[a]}) and axis {b} of x2 "
                             f"(length {x2.shape[b]}) differ")
    return tt.tensordot(x1, x2, dims=axes)


def vecdot(x1, x2, /, *, axis=-1):
    """The dot product of vectors along ``axis`` (other axes broadcast; the axis' lengths must match)."""
    x1, x2 = promote_pair(ensure_array(x1, "x1"), ensure_array(x2, "x2"))
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError("vecdot() needs arrays of at least one dimension")
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"vecdot(): x1 and x2 differ in the length of axis {axis}: "
                         f"{x1.shape[axis]} and {x2.shape[axis]}")
    a, b = tt.broadcast_tensors(x1, x2)
    return tt.sum(a * b, dim=axis, dtype=a.dtype)     # the operands' dtype (sum would widen integers)


def cholesky(x, /, *, upper=False):
    """The Cholesky factor of a symmetric positive-definite matrix (upper: U with x = U^T U)."""
    return tt.linalg.cholesky(ensure_array(x), upper=upper)


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-vectors along ``axis``."""
    x1, x2 = promote_pair(ensure_array(x1, "x1"), ensure_array(x2, "x2"))
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError("cross() needs axis of length 3 in both arrays")
    return tt.linalg.cross(*tt.broadcast_tensors(x1, x2), dim=axis)


def det(x, /):
    return tt.linalg.det(ensure_array(x))


def diagonal(x, /, *, offset=0):
    """The ``offset`` diagonal of each matrix (over the last two axes)."""
    return tt.diagonal(ensure_array(x), offset, -2, -1)


def eigh(x, /):
    return tt.linalg.eigh(ensure_array(x))


def eigvalsh(x, /):
    return tt.linalg.eigvalsh(ensure_array(x))


def inv(x, /):
    return tt.linalg.inv(ensure_array(x))


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    return tt.linalg.matrix_norm(ensure_array(x), ord=ord, keepdim=keepdims)


def matrix_power(x, n, /):
    return tt.linalg.matrix_power(ensure_array(x), n)


def matrix_rank(x, /, *, rtol=None):
    return tt.linalg.matrix_rank(ensure_array(x), rtol=rtol)


def outer(x1, x2, /):
    """The outer product of two 1-D arrays."""
    x1, x2 = promote_pair(ensure_array(x1, "x1"), ensure_array(x2, "x2"))
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError("outer() needs two 1-D arrays")
    return tt.outer(x1, x2)


def pinv(x, /, *, rtol=None):
    return tt.linalg.pinv(ensure_array(x), rtol=rtol)


def qr(x, /, *, mode="reduced"):
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr() mode must be 'reduced' or 'complete', got {mode!r}")
    return tt.linalg.qr(ensure_array(x), mode=mode)


def slogdet(x, /):
    return tt.linalg.slogdet(ensure_array(x))


def solve(x1, x2, /):
    return tt.linalg.solve(*promote_pair(ensure_array(x1, "x1"), ensure_array(x2, "x2")))


def svd(x, /, *, full_matrices=True):
    return tt.linalg.svd(ensure_array(x), full_matrices=full_matrices)


def svdvals(x, /):
    return tt.linalg.svdvals(ensure_array(x))


def trace(x, /, *, offset=0, dtype=None):
    """The sum of the ``offset`` diagonal of each matrix (integers in the default integer dtype)."""
    from ._statistical import _sum_dtype
    x = ensure_array(x)
    d = tt.diagonal(x, offset, -2, -1)
    return tt.sum(d, dim=-1, dtype=_sum_dtype(x, dtype))


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    x = ensure_array(x)
    if isinstance(axis, tuple) and len(axis) == 0:
        return tt.linalg.vector_norm(x.unsqueeze(-1), ord=ord, dim=-1, keepdim=False)
    return tt.linalg.vector_norm(x, ord=ord, dim=axis, keepdim=keepdims)


for _f in (det, eigh, eigvalsh, inv, matrix_norm, matrix_power, matrix_rank, pinv, qr, slogdet, solve, svd,
           svdvals, vector_norm):
    _f.__doc__ = f"The standard's ``linalg.{_f.__name__}``: tt.linalg.{_f.__name__} (torch.linalg's)."
del _f

LINALG = ("cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm",
          "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve", "svd",
          "svdvals", "tensordot", "trace", "vecdot", "vector_norm")
