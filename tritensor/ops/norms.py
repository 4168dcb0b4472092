"""Norms and condition numbers: torch.linalg's vector_norm, matrix_norm, norm and cond, and torch.norm.

All are composites, as torch's are (aten/src/ATen/native/LinearAlgebra.cpp):

    vector_norm   the p-norms of ops/reduce.py (every p: inf, -inf, 0, negative, fractional),
                  one LinalgVectorNormBackward0 node with torch's subgradients at 0
    matrix_norm   'fro': vector_norm over the two dims; 'nuc': the sum of the singular values
                  (SumBackward1); 2 / -2: their max / min (AmaxBackward0 / AminBackward0);
                  1 / -1 / inf / -inf: the max / min of the column (row) sums of |A|
    norm          vector_norm or matrix_norm as ord and dim say (torch's dispatch rules)
    cond          2 / -2 / None: s_max / s_min of the singular values; 'nuc': sum(s) sum(1/s);
                  'fro', 1, -1, inf, -inf: norm(A) norm(A^-1), inf for a singular A
                  (torch's nan_to_num of 0 * inf)
    torch.norm    the dispatch of torch/functional.py onto vector_norm and matrix_norm

The singular values come from ops/spectral.py's svdvals, which runs on every device (the Jacobi
kernels on cuda), and is differentiated through svd's backward.
"""
from __future__ import annotations

from .._autocast import autocast_policy as _autocast_policy

import math

from .. import dtypes as _dt
from ..autograd.composite import named_composite
from ..tensor import Tensor
from . import _linalg as L
from . import spectral as _sp
from ._checks import check_tensor
from ._shapes import wrap_dim
from .creation import zeros
from .elementwise import where
from .reduce import _norm
from .solvers import inv_ex
from .surface import declare


def _number(value):
    """A Python number from an ord argument (a 0-d tensor reads as its value)."""
    if isinstance(value, Tensor):
        return value.item()
    return value


def _fmt(value):
    """A number as torch's C++ prints a double (3 -> 3, 1.5 -> 1.5, inf -> inf)."""
    value = float(value)
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:g}"


# =========================================================================== vector_norm
def _vector_dims(dim):
    if dim is None:
        return None
    if isinstance(dim, bool) or not isinstance(dim, (int, tuple, list)):
        raise TypeError(f"linalg_vector_norm(): argument 'dim' must be tuple of ints, not {type(dim).__name__}")
    if isinstance(dim, int):
        return dim
    for d in dim:
        if isinstance(d, bool) or not isinstance(d, int):
            raise TypeError(f"linalg_vector_norm(): argument 'dim' must be tuple of ints, not {type(d).__name__}")
    return tuple(dim) if len(dim) else None


@_autocast_policy("vector_norm")
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.vector_norm: (sum |x|^ord)^(1/ord) over ``dim`` (every element when None),
    ord any number (inf: max |x|, -inf: min |x|, 0: the number of nonzeros); computed in
    ``dtype`` when given."""
    check_tensor("linalg_vector_norm", x)
    ord = _number(ord)
    if isinstance(ord, bool):
        ord = int(ord)
    if not isinstance(ord, (int, float)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
                        f"{type(ord).__name__}")
    dim = _vector_dims(dim)
    return named_composite("LinalgVectorNormBackward0", _norm, x, ord, dim, bool(keepdim), dtype)


# =========================================================================== matrix_norm
def _backshift(d0, d1, ndim):
    """torch's create_dim_backshift_permutation: the other dims in order, then d0, d1."""
    return tuple(d for d in range(ndim) if d not in (d0, d1)) + (d0, d1)


def _inverse(perm):
    out = [0] * len(perm)
    for i, p in enumerate(perm):
        out[p] = i
    return tuple(out)


def _matrix_norm_checks(A, dim, dtype, low_precision):
    """torch's _linalg_matrix_norm_checks: (dim0, dim1) wrapped."""
    L.check_matrix("linalg.matrix_norm", A)
    L.check_floating("linalg.matrix_norm", A, low_precision=low_precision)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dims))}")
    d0, d1 = wrap_dim(dims[0], A.dim()), wrap_dim(dims[1], A.dim())
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    _check_norm_dtype(dtype, A.dtype, "linalg.matrix_norm")
    return d0, d1


def _check_norm_dtype(dtype, input_dtype, api):
    """torch's check_linalg_norm_dtype."""
    if dtype is None:
        return
    dtype = _dt.as_dtype(dtype)
    if not dtype.is_floating_point:
        raise RuntimeError(f"{api}: dtype should be floating point or complex, but got {_dt.type_name(dtype)}")
    if _dt.promote_types(input_dtype, dtype) is not dtype:
        raise RuntimeError(f"{api}: the dtype of the input ({_dt.type_name(input_dtype)}) should be convertible "
                           f"without narrowing to the specified dtype ({_dt.type_name(dtype)})")


def _over_singular_values(A, d0, d1, keepdim, dtype, reduce):
    """reduce(svdvals) of the matrices spanned by (d0, d1), kept in place with ``keepdim``."""
    A_ = A.to(_dt.as_dtype(dtype)) if dtype is not None else A
    perm = _backshift(d0, d1, A.dim())
    result = reduce(_sp.svdvals(A_.permute(perm)))
    if keepdim:
        result = result.unsqueeze(-1).permute(_inverse(perm))
    return result


@_autocast_policy("matrix_norm")
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """torch.linalg.matrix_norm over the two dims ``dim``: 'fro', 'nuc', 2, -2 (largest /
    smallest singular value), 1, -1 (max / min column sum of |A|), inf, -inf (max / min row
    sum)."""
    check_tensor("linalg_matrix_norm", A)
    keepdim = bool(keepdim)
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
        d0, d1 = _matrix_norm_checks(A, dim, dtype, low_precision=ord != "nuc")
        if ord == "fro":
            return vector_norm(A, 2, (d0, d1), keepdim, dtype=dtype)
        return _over_singular_values(A, d0, d1, keepdim, dtype, lambda s: s.sum(-1, keepdim))
    ord = _number(ord)
    if ord is None or isinstance(ord, str) or not isinstance(ord, (int, float)):
        raise TypeError(f"linalg_matrix_norm(): argument 'ord' must be Number or str, not {type(ord).__name__}")
    ord = float(ord)
    if abs(ord) not in (1.0, 2.0, math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {_fmt(ord)} not supported.")
    d0, d1 = _matrix_norm_checks(A, dim, dtype, low_precision=abs(ord) != 2)

    def max_min(t, d):
        return t.amax(d, keepdim) if ord > 0 else t.amin(d, keepdim)
    if abs(ord) == 2:
        return _over_singular_values(A, d0, d1, keepdim, dtype, lambda s: max_min(s, -1))
    if abs(ord) == math.inf:      # the inf norm is the 1 norm of the transpose
        d0, d1 = d1, d0
    if not keepdim and d0 < d1:
        d1 -= 1
    return max_min(vector_norm(A, 1, (d0,), keepdim, dtype=dtype), d1)


# =========================================================================== linalg.norm
def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.norm: a matrix norm where ord is given and dim names two dims (or A is 2-D
    and dim is None), else a vector norm (ord None: the 2-norm of the flattened input)."""
    check_tensor("linalg_norm", A)
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dims)}")
    elif ord is not None and A.dim() not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{A.dim()}D.")
    if isinstance(ord, str):
        return matrix_norm(A, ord, (0, 1) if dim is None else dim, keepdim, dtype=dtype)
    if ord is not None and ((dim is not None and len(dims) == 2) or (dim is None and A.dim() == 2)):
        return matrix_norm(A, ord, (0, 1) if dim is None else dims, keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


# =========================================================================== torch.norm
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """torch.norm (deprecated in favour of torch.linalg's norms): a string p is 'fro' (a vector
    2-norm over at most two dims) or a matrix norm (over ``dim``, every dim when None); a number
    is a vector norm."""
    check_tensor("norm", input)
    dims = None if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return vector_norm(input, 2, dims, keepdim, dtype=dtype)
        return matrix_norm(input, p, list(range(input.dim())) if dims is None else dims, keepdim, dtype=dtype)
    return vector_norm(input, 2.0 if p is None else p, dims, keepdim, dtype=dtype)


declare("norm", norm, out="exact")


# =========================================================================== cond
def _cond_ord(ord):
    """torch's _linalg_cond_check_ord."""
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.cond got an invalid norm type: {ord}")
        return ord
    value = float(_number(ord))
    if abs(value) not in (1.0, 2.0, math.inf):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {_fmt(value)}")
    return value


def _square_name(ord):
    """The name torch's square check gives cond: std::to_string of the ord (1 -> '1' for an
    integer, '1.000000' for a float, 'inf')."""
    if isinstance(ord, str):
        return ord
    if isinstance(ord, float):
        return _fmt(ord) if math.isinf(ord) else f"{ord:.6f}"
    return str(int(ord))


def cond(A, p=None):
    """torch.linalg.cond: the condition number of each matrix in the p-norm (2 when None):
    s_max / s_min for 2 (its inverse for -2), sum(s) sum(1/s) for 'nuc', else
    norm(A, p) norm(A^-1, p), inf for a singular matrix. 0 for an empty matrix."""
    check_tensor("linalg_cond", A)
    if A.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    ord = 2 if p is None else _number(p)
    kind = _cond_ord(ord)
    if not isinstance(kind, str) and abs(kind) == 2:
        if A.numel() == 0:
            return zeros(tuple(A.shape[:-2]), dtype=A.dtype, device=A.device)
        s = _sp.svdvals(A)
        s_max, s_min = s.narrow(-1, 0, 1), s.narrow(-1, s.shape[-1] - 1, 1)
        return (s_min / s_max if kind < 0 else s_max / s_min).squeeze(-1)
    L.check_square(f"linalg.cond(ord={_square_name(ord)})", A)
    if A.numel() == 0:
        return zeros(tuple(A.shape[:-2]), dtype=A.dtype, device=A.device)
    if kind == "nuc":
        s = _sp.svdvals(A)
        return s.sum(-1) * s.reciprocal().sum(-1)
    inverse, info = inv_ex(A)
    inverse = where((info > 0).unsqueeze(-1).unsqueeze(-1), math.inf, inverse)
    result = matrix_norm(A, kind) * matrix_norm(inverse, kind)
    return result.nan_to_num(math.inf, math.inf, -math.inf)   # 0 * inf: NumPy's inf
