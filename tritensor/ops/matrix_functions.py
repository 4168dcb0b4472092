"""Functions of matrices and products: torch.linalg's matrix_exp, matrix_power, multi_dot, cross,
vecdot, vander and diagonal, and the legacy torch.matrix_exp, torch.matrix_power, torch.cross.

All are composites of existing ops (matmul, inv, index_select, cumprod ...), as torch's are but
for matrix_exp and cross, whose nodes carry torch's names:

    matrix_exp   torch's algorithm (Bader, Blanes and Casas 2019): a Taylor polynomial of degree
                 1, 2, 4, 8, 12 or 18 evaluated with few products, the degree chosen from the
                 1-norm of each matrix, and for larger norms the degree-18 one on A / 2^s squared
                 s times. LinalgMatrixExpBackward0: torch's block-triangular formula, the upper
                 right block of exp([[A^T, G], [0, A^T]]), differentiable again.
    cross        (a1 b2 - a2 b1, ...) from index_select's rotations of the two inputs, one
                 LinalgCrossBackward0 node.
    matrix_power repeated squaring (n < 0: of the inverse); n = 0: the identity as torch makes it
                 (a copy_ into a clone: CopyBackwards, a zero gradient).
    multi_dot    the cheapest parenthesization (the matrix-chain dynamic program for more than
                 three matrices, torch's cost comparison for three).
    vecdot       sum(x * y, dim); two vectors: the dot product (VdotBackward0).
    vander       cumulative products of x after a column of ones.
"""
from __future__ import annotations

from .._autocast import autocast_policy as _autocast_policy

import math
import warnings

import numpy as np

from .. import dtypes as _dt
from ..autograd.composite import named_composite
from ..autograd.grad_mode import no_grad
from . import _linalg as L
from ._checks import check_tensor
from ._shapes import broadcast_shapes, wrap_dim
from .creation import eye, full, ones, tensor, zeros
from .joining import cat, stack
from .linalg import matmul, vdot
from .solvers import inv
from .surface import declare


# =========================================================================== matrix_exp
# torch's bounds on the 1-norm for each degree (float32 and float64), from LinearAlgebra.cpp
_THETAS = {
    "float32": (1.192092800768788e-07, 5.978858893805233e-04, 5.116619363445086e-02, 5.800524627688768e-01,
                1.461661507209034e+00, 3.010066362817634e+00),
    "float64": (2.220446049250313e-16, 2.580956802971767e-08, 3.397168839976962e-04, 4.991228871115323e-02,
                2.996158913811580e-01, 1.090863719290036e+00),
}

_SQRT_177 = 0.1330413469565007072504e+2
_X3 = 2. / 3.
_T8 = dict(x1=_X3 * ((1. + _SQRT_177) / 88.), x2=_X3 * ((1. + _SQRT_177) / 352.),
           x4=(-271. + 29. * _SQRT_177) / (315. * _X3), x5=(-11. + 11. * _SQRT_177) / (1260. * _X3),
           x6=(-99. + 11. * _SQRT_177) / (5040. * _X3), x7=(89. - _SQRT_177) / (5040. * _X3),
           y2=(857. - 58. * _SQRT_177) / 630.)
_T12 = ((9.0198e-16, 0.46932117595418237389, -0.20099424927047284052, -0.04623946134063071740),
        (5.31597895759871264183, 1.19926790417132231573, 0.01179296240992997031, 0.01108844528519167989),
        (0.18188869982170434744, 0.05502798439925399070, 0.09351590770535414968, 0.00610700528898058230),
        (-2.0861320e-13, -0.13181061013830184015, -0.02027855540589259079, -0.00675951846863086359))
_T18 = ((0., -1.00365581030144618291e-01, -8.02924648241156932449e-03, -8.92138498045729985177e-04, 0.),
        (0., 3.97849749499645077844e-01, 1.36783778460411720168e+00, 4.98289622525382669416e-01,
         -6.37898194594723280150e-04),
        (-1.09676396052962061844e+01, 1.68015813878906206114e+00, 5.71779846478865511061e-02,
         -6.98210122488052056106e-03, 3.34975017086070470649e-05),
        (-9.04316832390810593223e-02, -6.76404519071381882256e-02, 6.75961301770459654925e-02,
         2.95552570429315521194e-02, -1.39180257516060693404e-05),
        (0., 0., -9.23364619367118555360e-02, -1.69364939002081722752e-02, -1.40086798182036094347e-05))


def _combinations(powers, coefficients):
    """B_i = sum_j c_ij powers[j] for every row i (torch's _compute_linear_combination): one
    matrix product of the coefficients with the stacked, flattened powers."""
    shape = tuple(powers[0].shape)
    stacked = stack(powers).reshape(len(powers), -1)
    c = tensor(coefficients, dtype=stacked.dtype, device=stacked.device)
    return (c @ stacked).reshape((len(coefficients),) + shape).unbind(0)


def _taylor(A, degree):
    """torch's compute_T<degree>: the Taylor polynomial of exp of that degree, in few products."""
    n = A.shape[-1]
    I = eye(n, dtype=A.dtype, device=A.device).expand(tuple(A.shape))
    if degree == 1:
        return I + A
    A2 = A @ A
    if degree == 2:
        return I + A + A2 * 0.5
    if degree == 4:
        return I + A + A2 @ (I * 0.5 + A / 6.0 + A2 / 24.0)
    if degree == 8:
        c = _T8
        A4 = A2 @ (A * c["x1"] + A2 * c["x2"])
        A8 = (A2 * _X3 + A4) @ (I * c["x4"] + A * c["x5"] + A2 * c["x6"] + A4 * c["x7"])
        return I + A + A2 * c["y2"] + A8
    A3 = A @ A2
    if degree == 12:
        B = _combinations((I, A, A2, A3), _T12)
        A6 = B[2] + B[3] @ B[3]
        return B[0] + (B[1] + A6) @ A6
    A6 = A3 @ A3
    B = _combinations((I, A, A2, A3, A6), _T18)
    A9 = B[0] @ B[4] + B[3]
    return B[1] + (B[2] + A9) @ A9


def _scaled_taylor18(A, norms, theta):
    """torch's compute_T18_scale_square: the degree-18 polynomial of A / 2^s, squared s times,
    s = max(0, ceil(log2(|A|_1 / theta))) per matrix."""
    s = [max(0, math.ceil(math.log2(v / theta))) if v > 0 and math.isfinite(v) else 0 for v in norms]
    scale = tensor([2.0 ** -k for k in s], dtype=A.dtype, device=A.device).reshape(-1, 1, 1)
    X = _taylor(A * scale, 18)
    for step in range(max(s, default=0)):
        todo = [i for i, k in enumerate(s) if k > step]
        if len(todo) == len(s):
            X = X @ X
        else:
            idx = tensor(todo, dtype=_dt.int64, device=A.device)
            part = X.index_select(0, idx)
            X = X.index_put((idx,), part @ part)
    return X


def _matrix_exp_values(A):
    """exp(A) of every matrix, in A's dtype (float16/bfloat16 in float32), with no history."""
    n = A.shape[-1]
    if n == 0:
        return A.clone()
    if n == 1:
        return A.exp()
    work = A.to(_dt.float32) if A.dtype in (_dt.float16, _dt.bfloat16) else A
    thetas = _THETAS[work.dtype.name]
    flat = work.reshape(-1, n, n)
    norms = flat.abs().sum(-2).amax(-1).cpu().tolist()          # one host sync, as torch
    res = full(tuple(flat.shape), math.nan, dtype=work.dtype, device=work.device)
    buckets = {}
    for i, v in enumerate(norms):
        for degree_index, bound in enumerate(thetas[:-1]):
            if v <= bound:
                buckets.setdefault(degree_index, []).append(i)
                break
        else:
            if v >= thetas[-2]:
                buckets.setdefault(5, []).append(i)
    for degree_index, members in buckets.items():
        whole = len(members) == len(norms)
        sub = flat if whole else flat.index_select(0, tensor(members, dtype=_dt.int64, device=A.device))
        if degree_index == 5:
            value = _scaled_taylor18(sub, [norms[i] for i in members], thetas[-1])
        else:
            value = _taylor(sub, (1, 2, 4, 8, 12)[degree_index])
        res = value if whole else res.index_put((tensor(members, dtype=_dt.int64, device=A.device),), value)
    return res.reshape(tuple(A.shape)).to(A.dtype)


def _matrix_exp_backward(node, g):
    """torch's linalg_matrix_exp_differential (adjoint): exp([[A^T, G], [0, A^T]])'s upper right
    block."""
    if g is None:
        return (None,)
    A = node.saved("A")
    At = A.mT
    n = A.shape[-1]
    top = cat([At, g], -1)
    bottom = cat([zeros(tuple(At.shape), dtype=At.dtype, device=At.device), At], -1)
    return (matrix_exp(cat([top, bottom], -2)).narrow(-2, 0, n).narrow(-1, n, n),)


def matrix_exp(A):
    """torch.linalg.matrix_exp / torch.matrix_exp: exp(A) = sum A^k / k! of every matrix."""
    check_tensor("linalg_matrix_exp", A)
    L.check_square("linalg.matrix_exp", A)
    L.check_floating("linalg.matrix_exp", A)
    with no_grad():
        X = _matrix_exp_values(A)
    X = L.fresh(X)
    return L.record_formula("LinalgMatrixExpBackward0", _matrix_exp_backward, (A,), (X,), save={"A": A})[0]


declare("matrix_exp", matrix_exp)


# =========================================================================== matrix_power
def matrix_power(A, n):
    """torch.linalg.matrix_power: A^n by repeated squaring (n < 0: of A^-1; n = 0: the identity);
    integer matrices too, for n >= 0."""
    check_tensor("linalg_matrix_power", A)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"linalg_matrix_power(): argument 'n' (position 2) must be int, not {type(n).__name__}")
    n = int(n)
    L.check_square("linalg.matrix_power", A)
    if n == 0:
        return A.clone().copy_(eye(A.shape[-2], dtype=A.dtype, device=A.device))
    if n == 1:
        return A.clone()
    if n == -1:
        return inv(A)
    if n < 0:
        A = inv(A)
        n = -n
    if n == 2:
        return matmul(A, A)
    if n == 3:
        return matmul(matmul(A, A), A)
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = A if z is None else matmul(z, z)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


declare("matrix_power", matrix_power, out="exact")


# =========================================================================== multi_dot
def matrix_chain_order(shapes):
    """torch's matrix_chain_order: the split s[i][j] of the cheapest product of matrices i..j
    (the classic dynamic program; the first cheapest split wins)."""
    n = len(shapes)
    p = [shapes[0][0]] + [s[1] for s in shapes]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def chain_product(tensors, split, i, j):
    """The product of matrices i..j in the order matrix_chain_order chose (also chain_matmul's)."""
    if i == j:
        return tensors[i]
    k = split[i][j]
    return chain_product(tensors, split, i, k).mm(chain_product(tensors, split, k + 1, j))


def multi_dot(tensors):
    """torch.linalg.multi_dot: the product of the matrices in the cheapest order; the first
    (last) may be a vector, read as a row (column) and dropped from the result."""
    tensors = list(tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    for i, t in enumerate(tensors):
        L.check_tensor("linalg_multi_dot", t, "tensors", 1)
    first, last = tensors[0], tensors[-1]
    out_shape = []
    if first.dim() == 1:
        mats = [first.unsqueeze(0)]
    elif first.dim() == 2:
        mats = [first]
        out_shape.append(first.shape[0])
    else:
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first.dim()}D")
    for i in range(1, n - 1):
        if tensors[i].dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].dim()}D")
        mats.append(tensors[i])
    if last.dim() == 1:
        mats.append(last.unsqueeze(-1))
    elif last.dim() == 2:
        mats.append(last)
        out_shape.append(last.shape[1])
    else:
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.dim()}D")
    dtype, device = mats[0].dtype, mats[0].device
    for i in range(1, n):
        if mats[i].dtype is not dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{_cpp(dtype)} and tensor {i} {_cpp(mats[i].dtype)}")
        if mats[i].device != device:
            raise RuntimeError(f"multi_dot(): all tensors must be on the same device but tensor 0 is on {device} "
                               f"and tensor {i} on {mats[i].device}")
        if mats[i - 1].shape[-1] != mats[i].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes {list(tensors[i - 1].shape)} and "
                               f"{list(tensors[i].shape)} cannot be multiplied")
    if n == 2:
        result = mats[0].mm(mats[1])
    elif n == 3:
        a, b = mats[0].shape[0], mats[1].shape[0]
        c, d = mats[2].shape[0], mats[2].shape[1]
        if (a * c) * (b + d) > (b * d) * (a + c):
            result = mats[0].mm(mats[1].mm(mats[2]))
        else:
            result = mats[0].mm(mats[1]).mm(mats[2])
    else:
        result = chain_product(mats, matrix_chain_order([tuple(m.shape) for m in mats]), 0, n - 1)
    return result.view(tuple(out_shape))


def _cpp(dtype):
    """The C++ (caffe2 TypeMeta) name torch's multi_dot prints for a dtype."""
    return _dt.CPP_NAMES[dtype.name]


# =========================================================================== cross
_cross_warned = False


def _cross_values(a, b, dim):
    i1 = tensor([1, 2, 0], dtype=_dt.int64, device=a.device)
    i2 = tensor([2, 0, 1], dtype=_dt.int64, device=a.device)
    return a.index_select(dim, i1) * b.index_select(dim, i2) - a.index_select(dim, i2) * b.index_select(dim, i1)


def linalg_cross(input, other, *, dim=-1):
    """torch.linalg.cross: the cross product of 3-vectors along ``dim``; the other dims
    broadcast."""
    check_tensor("linalg_cross", input)
    L.check_tensor("linalg_cross", other, "other", 2)
    if input.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = wrap_dim(dim, input.dim())
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and "
                           f"{other.shape[d]}")
    shape = tuple(broadcast_shapes(tuple(input.shape), tuple(other.shape)))
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {_dt.type_name(input.dtype)} but found {_dt.type_name(other.dtype)}")
    if input.dtype is _dt.bool_:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    L.check_same_device(input, other)
    a, b = input.expand(shape), other.expand(shape)
    return named_composite("LinalgCrossBackward0", _cross_values, a, b, d)


@_autocast_policy("cross")
def cross(input, other, dim=None):
    """torch.cross: linalg.cross along ``dim``; without it (deprecated, warned once) the first dim
    of size 3."""
    global _cross_warned
    check_tensor("cross", input)
    L.check_tensor("cross", other, "other", 2)
    if dim is None:
        if not _cross_warned:
            _cross_warned = True
            warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the "
                          "dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will change "
                          "to agree with that of linalg.cross in a future release.", UserWarning, stacklevel=2)
        for i, s in enumerate(input.shape):
            if s == 3:
                dim = i
                break
        else:
            raise RuntimeError("no dimension of size 3 in input")
    return linalg_cross(input, other, dim=dim)


declare("cross", cross, out="exact")


# =========================================================================== vecdot
@_autocast_policy("linalg_vecdot")
def vecdot(x, y, *, dim=-1):
    """torch.linalg.vecdot: sum(x * y) along ``dim`` (broadcast); two vectors: their dot
    product."""
    check_tensor("linalg_vecdot", x)
    L.check_tensor("linalg_vecdot", y, "y", 2)
    L.check_floating("linalg.vecdot", x)
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{_dt.type_name(x.dtype)} and y of type {_dt.type_name(y.dtype)} instead")
    if x.dim() == 1 and y.dim() == 1:
        wrap_dim(dim, 1)
        return vdot(x, y)
    return (x * y).sum(dim)


# =========================================================================== vander
def vander(x, *, N=None):
    """torch.linalg.vander: the Vandermonde matrix [1, x, x^2, ..., x^(N-1)] along a new last
    dim (N defaults to x.shape[-1]); a column of ones, then cumulative products."""
    check_tensor("linalg_vander", x)
    if not (x.dtype in (_dt.float32, _dt.float64) or (not x.dtype.is_floating_point and x.dtype is not _dt.bool_)):
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer tensors, but got "
                           f"{_dt.type_name(x.dtype)}")
    x_ = x.unsqueeze(-1) if x.dim() == 0 else x
    shape = tuple(x_.shape)
    n = shape[-1] if N is None else int(N)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = x_.unsqueeze(-1).expand(shape + (n - 1,)).cumprod(-1)
    return cat([ones(shape + (1,), dtype=x.dtype, device=x.device), powers], -1)


# =========================================================================== diagonal
def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """torch.linalg.diagonal: A.diagonal(offset, dim1, dim2), with the matrix dims last by
    default."""
    check_tensor("linalg_diagonal", A)
    return A.diagonal(offset, dim1, dim2)
