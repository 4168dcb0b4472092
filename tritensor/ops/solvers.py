"""Linear solvers, inverses and determinants on the factorizations (ops/factorizations.py):
torch.linalg's solve, inv, det, slogdet, lu_solve, ldl_solve, lstsq, tensorinv, tensorsolve,
householder-based ormqr, and the legacy torch.* names (inverse, det, slogdet, logdet,
lu_solve, cholesky_solve, cholesky_inverse).

Table entries (primitives, no backward of their own):

    linalg_solve_ex     X = A^-1 B, info      cpu: numpy.linalg.solve; cuda: LU kernel + LU solve
    linalg_inv_ex       A^-1, info            cpu: numpy.linalg.inv;   cuda: LU of A, LU solve of I
    linalg_lu_solve     X from (LU, pivots)   getrs (the row exchanges, two triangular solves)
    linalg_ldl_solve    X from (LD, pivots)   sytrs (the NumPy reference; a host round trip on cuda)
    linalg_lstsq_svd    the SVD drivers of lstsq (gelsy/gelsd/gelss: cpu only, as torch's)

and composites of primitives (det and slogdet from the LU factorization, cholesky_solve and
cholesky_inverse from triangular solves, gels-lstsq from QR). Each public function gives its
outputs torch's node (LinalgSolveExBackward0, LinalgInvExBackward0, LinalgDetBackward0,
LinalgSlogdetBackward0, LinalgLuSolveBackward0, CholeskySolveBackward0,
CholeskyInverseBackward0, LinalgLstsqBackward0 ...) with torch's formula in tritensor ops.
"""
from __future__ import annotations

from .._autocast import autocast_policy as _autocast_policy

import math
import warnings

from .. import dtypes as _dt
from ..autograd.composite import named_composite
from ..autograd.grad_mode import no_grad
from ..backends import numpy_linalg
from ..backends.base import backend_for
from ..backends.triton import linalg as tla
from ..tensor import Tensor
from . import _linalg as L
from . import factorizations as F
from .creation import arange, eye, zeros
from .dispatch import dispatch
from .elementwise import where
from .joining import cat, tril, triu
from .surface import declare
from .table import Meta, op

_int32, _int64 = _dt.int32, _dt.int64


def _mH(t):
    return t.mT


def _batch(t):
    return tuple(t.shape[:-2])


def _diag(v, n):
    """Batches of n x n matrices with v (one value per matrix) on the diagonal."""
    return v.unsqueeze(-1).expand(tuple(v.shape) + (n,)).diag_embed()


def _alias(t, shape, strides):
    """A tensor of its own (not a view: ``t`` has no history and is dropped) over t's memory."""
    return Tensor._make(t._storage, tuple(shape), tuple(strides), t._offset, t.dtype)


def _squeeze_last(t):
    return _alias(t, t.shape[:-1], t.stride()[:-1])


def _transposed(t):
    shape, strides = tuple(t.shape), tuple(t.stride())
    return _alias(t, shape[:-2] + (shape[-1], shape[-2]), strides[:-2] + (strides[-1], strides[-2]))


# =========================================================================== solve
def _solve_rule(a, b):
    batch = L.broadcast_batch(a.shape[:-2], b.shape[:-2])
    return Meta(batch + tuple(b.shape[-2:]), a.dtype), Meta(tuple(a.shape[:-2]), _int32)


SOLVE = op("linalg_solve_ex", ("a", "b"), rule=_solve_rule, reference=numpy_linalg.solve, kernel=tla.solve,
           outputs=("result", "info"))


def is_vector_rhs(A, B):
    """torch's linalg_solve_is_vector_rhs: B is one vector, or a batch of them shaped as A
    without its last dim."""
    return B.dim() == 1 or (A.dim() - 1 == B.dim() and tuple(B.shape) == tuple(A.shape[:-1]))


def _solve_backward(node, gX, _ginfo=None):
    """torch's linalg_solve_backward: gB = A^-H gX (the same side), gA = -gB X^H (left) or
    -X^H gB."""
    if gX is None:
        return None, None
    A, X = node.saved("A"), node.saved("X")
    left, vector = node.attrs["left"], node.attrs["vector"]
    if vector:
        gX, X = gX.unsqueeze(-1), X.unsqueeze(-1)
    gB = solve_ex(_mH(A), gX, left=left)[0]
    gA = None
    if node.needs_input_grad[0]:
        gA = -(gB @ _mH(X)) if left else -(_mH(X) @ gB)
    if not node.needs_input_grad[1]:
        gB = None
    elif vector:
        gB = gB.squeeze(-1)
    return gA, gB


def _solve(A, B, left, fname):
    L.check_tensor(fname, A, "A", 1)
    L.check_tensor(fname, B, "B", 2)
    L.check_floating("linalg.solve", A)
    if A.dtype is not B.dtype:
        L.check_same_dtype("linalg.solve", A, B, "A", "B")
    vector = is_vector_rhs(A, B)
    B_ = B.unsqueeze(-1) if vector else B
    L.check_square("linalg.solve", A)
    L.check_matrix("linalg.solve", B_, "B")
    if (A.shape[-2] != B_.shape[-2]) if left else (A.shape[-1] != B_.shape[-1]):
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{A.shape[-1]} and "
                           f"{B_.shape[-2]}x{B_.shape[-1]})")
    L.broadcast_batch(B_.shape[:-2], A.shape[:-2])
    if not left and vector:
        raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. "
                           "In this case linalg.solve is equivalent to B / A.squeeze(-1)")
    L.check_same_device(A, B)
    L.check_kernel_dtype(A, "lu_cpu")
    if left:
        X, info = dispatch(SOLVE, A, B_)
    else:      # X A = B  <=>  A^T X^T = B^T
        X, info = dispatch(SOLVE, A.mT, B_.mT)
        X = _transposed(X)
    if vector:
        X = _squeeze_last(X)
    L.record_formula("LinalgSolveExBackward0", _solve_backward, (A, B), (X, info), save={"A": A, "X": X},
                     left=bool(left), vector=vector)
    return X, info


def solve_ex(A, B, *, left=True, check_errors=False):
    """torch.linalg.solve_ex: (X, info), X with A X = B (X A = B without ``left``), B a matrix
    or (batches of) vectors, batch dims broadcast; info = the first zero pivot of A's LU."""
    X, info = _solve(A, B, left, "linalg_solve_ex")
    if check_errors:
        L.check_errors(info, "torch.linalg.solve_ex", "solve", A.dim() == 2)
    return L.linalg_solve_ex(X, info)


def solve(A, B, *, left=True):
    """torch.linalg.solve: X with A X = B (X A = B); a singular A raises LinAlgError."""
    X, info = _solve(A, B, left, "linalg_solve")
    L.check_errors(info, "torch.linalg.solve", "solve", A.dim() == 2)
    return X


# =========================================================================== inverse
INV = op("linalg_inv_ex", ("a",), rule=lambda a: (Meta(tuple(a.shape), a.dtype), Meta(tuple(a.shape[:-2]), _int32)),
         reference=numpy_linalg.inv, kernel=tla.inv, outputs=("inverse", "info"))


def _inv_backward(node, g, _ginfo=None):
    """torch's inverse backward: -A^-H g A^-H."""
    if g is None:
        return (None,)
    inv_h = _mH(node.saved("inverse"))
    return (-(inv_h @ (g @ inv_h)),)


def _inv(A, fname, api="linalg.inv"):
    L.check_tensor(fname, A, "A" if fname.startswith("linalg") else "input", 1)
    L.check_square(api, A)
    L.check_floating(api, A, low_precision=False)
    X, info = dispatch(INV, A)
    L.record_formula("LinalgInvExBackward0", _inv_backward, (A,), (X, info), save={"inverse": X})
    return X, info


def inv_ex(A, *, check_errors=False):
    """torch.linalg.inv_ex: (A^-1, info), info = the first zero pivot of A's LU."""
    X, info = _inv(A, "linalg_inv_ex")
    if check_errors:
        L.check_errors(info, "linalg.inv_ex", "inv", A.dim() == 2)
    return L.linalg_inv_ex(X, info)


def inv(A):
    """torch.linalg.inv: A^-1; a singular A raises LinAlgError naming its zero pivot."""
    X, info = _inv(A, "linalg_inv")
    L.check_errors(info, "linalg.inv", "inv", A.dim() == 2)
    return X


@_autocast_policy("inverse")
def inverse(input):
    """torch.inverse / Tensor.inverse: linalg.inv."""
    X, info = _inv(input, "inverse")
    L.check_errors(info, "linalg.inv", "inv", input.dim() == 2)
    return X


declare("inverse", inverse, out="exact")


# =========================================================================== det, slogdet
def _pivot_sign(pivots, dtype):
    """(-1)^(number of row exchanges) per matrix."""
    n = pivots.shape[-1]
    moved = (pivots != arange(1, n + 1, dtype=_int32, device=pivots.device)).sum(-1)
    return (1 - 2 * (moved % 2)).to(dtype)


def _lu_parts(A):
    """(diagonal of U, sign of the permutation) of A's LU, with no history."""
    with no_grad():
        LU, pivots, _ = F._lu_factor(A, True)
        return LU.diagonal(0, -2, -1), _pivot_sign(pivots, A.dtype)


def _cofactor_of_singular(A):
    """det(A) A^-T at matrices whose LU has an exactly zero pivot, as the limit it is: each zero
    pivot of U is replaced by the dtype's eps, and det(A') A'^-T of that factorization differs
    from the cofactor matrix of A by O(eps) (both are polynomials in the entries). No history:
    its own derivative is not taken (torch's uses the SVD there)."""
    with no_grad():
        LU, pivots, _ = F._lu_factor(A, True)
        d = LU.diagonal(0, -2, -1)
        eps = _dt.finfo(A.dtype).eps
        LU = LU + where(d == 0, eps, 0.0).to(A.dtype).diag_embed()
        det = LU.diagonal(0, -2, -1).prod(-1) * _pivot_sign(pivots, A.dtype)
        n = A.shape[-1]
        inv_t = dispatch(LU_SOLVE, LU, pivots, eye(n, dtype=A.dtype, device=A.device), left=True, adjoint=True)
        return det.unsqueeze(-1).unsqueeze(-1) * inv_t


def _det_backward(node, g):
    """torch's linalg_det_backward: g det(A) A^-H, solved as A^H X = diag(g det) (differentiable
    again); matrices with an exactly zero pivot (where that solve has no answer) get
    g times their cofactor matrix instead (see _cofactor_of_singular)."""
    if g is None:
        return (None,)
    A, det = node.saved("A"), node.saved("det")
    if A.numel() == 0:
        return (zeros(tuple(A.shape), dtype=A.dtype, device=A.device),)
    n = A.shape[-1]
    d = _diag(g * det, n)
    singular = det == 0
    if not bool(singular.any()):
        return (solve_ex(_mH(A), d)[0],)
    cof = g.unsqueeze(-1).unsqueeze(-1) * _cofactor_of_singular(A)
    if bool(singular.all()):
        return (cof,)
    mask = singular.unsqueeze(-1).unsqueeze(-1)
    stand_in = where(mask, eye(n, dtype=A.dtype, device=A.device), A)
    return (where(mask, cof, solve_ex(_mH(stand_in), d)[0]),)


def _det(A, fname):
    L.check_tensor(fname, A, "A" if fname.startswith("linalg") else "input", 1)
    L.check_square("linalg.det", A)
    L.check_floating("linalg.det", A)
    L.check_kernel_dtype(A, "lu_cpu")
    diag, sign = _lu_parts(A)
    with no_grad():
        det = diag.prod(-1) * sign
    L.record_formula("LinalgDetBackward0", _det_backward, (A,), (det,), save={"A": A, "det": det})
    return det


def det(A):
    """torch.linalg.det: the determinant of each matrix (the product of U's diagonal and the
    permutation's sign, from the LU factorization)."""
    return _det(A, "linalg_det")


def det_legacy(input):
    """torch.det / Tensor.det."""
    return _det(input, "det")


declare("det", det_legacy)


def _slogdet_backward(node, _gsign, glogabsdet):
    """torch's slogdet_backward (real): g A^-H, as the solve A^H X = diag(g)."""
    if glogabsdet is None:
        return (None,)
    A = node.saved("A")
    return (solve_ex(_mH(A), _diag(glogabsdet, A.shape[-1]))[0],)


def _slogdet(A, api, return_type):
    L.check_square(api, A)
    L.check_floating(api, A, low_precision=False)
    diag, psign = _lu_parts(A)
    with no_grad():
        sign = diag.sign().prod(-1) * psign
        logabsdet = diag.abs().log().sum(-1)
    L.record_formula("LinalgSlogdetBackward0", _slogdet_backward, (A,), (sign, logabsdet), save={"A": A})
    return return_type(sign, logabsdet)


def slogdet(A):
    """torch.linalg.slogdet: (sign, log|det|) of each matrix; a singular one gives (0, -inf)."""
    L.check_tensor("linalg_slogdet", A, "A", 1)
    return _slogdet(A, "linalg.slogdet", L.linalg_slogdet)


def slogdet_legacy(input):
    """torch.slogdet / Tensor.slogdet."""
    L.check_tensor("slogdet", input, "input", 1)
    return _slogdet(input, "linalg.slogdet", L.slogdet)


def logdet(input):
    """torch.logdet: log(det(A)): NaN for a negative determinant, -inf for a singular matrix."""
    L.check_tensor("logdet", input, "input", 1)
    L.check_square("logdet", input)
    L.check_floating("logdet", input, low_precision=False)
    sign, logabsdet = _slogdet(input, "linalg.slogdet", L.slogdet)
    return where(sign == -1, math.nan, logabsdet)


declare("slogdet", slogdet_legacy, out="exact")
declare("logdet", logdet)


# =========================================================================== lu_solve
def _lu_solve_rule(lu, pivots, b, *, left, adjoint):
    batch = L.broadcast_batch(lu.shape[:-2], b.shape[:-2])
    return Meta(batch + tuple(b.shape[-2:]), lu.dtype)


LU_SOLVE = op("linalg_lu_solve", ("lu", "pivots", "b"), rule=_lu_solve_rule, reference=numpy_linalg.lu_solve,
              kernel=tla.lu_solve)


def _lu_solve_LU(gX, LU, pivots, X, left, adjoint):
    """torch's linalg_lu_solve_LU: the gradient with respect to the packed factors."""
    P, Lf, U = F.lu_unpack(LU, pivots, True, left == adjoint)
    if left != adjoint:
        rhs = -((gX if left else _mH(gX)) @ (_mH(X) if left else X))
        gR = F.solve_triangular(_mH(U), rhs, upper=False)
        gL = tril(F.solve_triangular(_mH(Lf), gR @ _mH(U), upper=True, unitriangular=True), -1)
        return gL + triu(gR)
    gR = -(P.mT @ (X if left else _mH(X)) @ (_mH(gX) if left else gX) @ P)
    gR = F.solve_triangular(_mH(Lf), gR, upper=True, left=False, unitriangular=True)
    gU = triu(F.solve_triangular(_mH(U), _mH(Lf) @ gR, upper=False, left=False))
    return tril(gR, -1) + gU


def _lu_solve_backward(node, gX):
    if gX is None:
        return None, None, None
    LU, pivots = node.saved("LU"), node.saved("pivots")
    left, adjoint = node.attrs["left"], node.attrs["adjoint"]
    gLU = _lu_solve_LU(gX, LU, pivots, node.saved("X"), left, adjoint) if node.needs_input_grad[0] else None
    gB = lu_solve(LU, pivots, gX, left=left, adjoint=not adjoint) if node.needs_input_grad[2] else None
    return gLU, None, gB


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """torch.linalg.lu_solve: X with A X = B (A^H X = B with ``adjoint``; X A = B without
    ``left``) for A = P L U given by lu_factor's (LU, pivots); batch dims broadcast."""
    L.check_tensor("linalg_lu_solve", LU, "LU", 1)
    L.check_tensor("linalg_lu_solve", pivots, "pivots", 2)
    L.check_tensor("linalg_lu_solve", B, "B", 3)
    L.check_floating("torch.linalg.lu_solve", LU)
    if LU.dtype is not B.dtype:
        L.check_same_dtype("linalg.lu_solve", LU, B, "LU", "B")
    if pivots.dtype is not _int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32")
    L.check_square("torch.linalg.lu_solve", LU)
    L.check_matrix("linalg.lu_solve", B, "B")
    if (LU.shape[-2] != B.shape[-2]) if left else (LU.shape[-1] != B.shape[-1]):
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({LU.shape[-2]}x{LU.shape[-1]} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    if pivots.dim() == 0 or LU.shape[-1] != pivots.shape[-1]:
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the dimension of the matrix")
    if tuple(LU.shape[:-1]) != tuple(pivots.shape):
        raise RuntimeError(f"linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots "
                           f"with shape {list(pivots.shape)} instead")
    L.broadcast_batch(B.shape[:-2], LU.shape[:-2])
    L.check_same_device(LU, B)
    L.check_same_device(LU, pivots)
    L.check_kernel_dtype(LU, "linalg.lu_solve_cpu")
    checked = F._check_pivot_values(pivots, LU.shape[-2], "Pivots given to lu_solve must all be smaller or equal "
                                    "to LU.size(-2). Did you properly pass the result of lu_factor?")
    X = dispatch(LU_SOLVE, LU, checked, B, left=bool(left), adjoint=bool(adjoint))
    return L.record_formula("LinalgLuSolveBackward0", _lu_solve_backward, (LU, None, B), (X,),
                            save={"LU": LU, "pivots": pivots, "X": X}, left=bool(left), adjoint=bool(adjoint))[0]


def lu_solve_legacy(input, LU_data, LU_pivots):
    """torch.lu_solve (deprecated): linalg.lu_solve(LU_data, LU_pivots, b)."""
    L.check_tensor("lu_solve", input, "input", 1)
    warnings.warn(
        "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future PyTorch "
        "release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\n"
        "should be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)", UserWarning, stacklevel=2)
    return lu_solve(LU_data, LU_pivots, input)


declare("lu_solve", lu_solve_legacy, out="exact")


# =========================================================================== Cholesky solves
def _cholesky_solve_values(B, Lf, upper):
    """(L L^H)^-1 B (U^H U with ``upper``): two triangular solves, no history."""
    with no_grad():
        Y = dispatch(F.SOLVE_TRIANGULAR, _mH(Lf) if upper else Lf, B, upper=False, left=True, unitriangular=False)
        return dispatch(F.SOLVE_TRIANGULAR, Lf if upper else _mH(Lf), Y, upper=True, left=True, unitriangular=False)


def _cholesky_solve_backward(node, gX):
    """torch's cholesky_solve_backward."""
    if gX is None:
        return None, None
    Lf, X, upper = node.saved("L"), node.saved("X"), node.attrs["upper"]
    gB = cholesky_solve(gX, Lf, upper)
    gL = None
    if node.needs_input_grad[1]:
        common = gB @ _mH(X)
        common = common + _mH(common)
        gL = -(Lf @ common) if upper else -(common @ Lf)
    return (gB if node.needs_input_grad[0] else None), gL


def cholesky_solve(input, input2, upper=False):
    """torch.cholesky_solve(B, L, upper): X with A X = B for A = L L^H (U^H U), given the
    Cholesky factor; batch dims broadcast."""
    L.check_tensor("cholesky_solve", input, "input", 1)
    L.check_tensor("cholesky_solve", input2, "input2", 2)
    B, Lf = input, input2
    if B.dim() < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {B.dim()} dimensions instead")
    if Lf.dim() < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {Lf.dim()} dimensions instead")
    F._linear_solve_check(B, Lf, "cholesky_solve")
    L.check_kernel_dtype(Lf, "cholesky_solve_cpu")
    X = _cholesky_solve_values(B, Lf, upper)
    return L.record_formula("CholeskySolveBackward0", _cholesky_solve_backward, (B, Lf), (X,),
                            save={"L": Lf, "X": X}, upper=bool(upper))[0]


def _cholesky_inverse_backward(node, g):
    """torch's cholesky_inverse_backward."""
    if g is None:
        return (None,)
    Lf, inverse, upper = node.saved("L"), node.saved("inverse"), node.attrs["upper"]
    common = inverse @ ((g + _mH(g)) @ inverse)
    return (-(Lf @ common) if upper else -(common @ Lf),)


def cholesky_inverse(input, upper=False):
    """torch.cholesky_inverse(L, upper): (L L^H)^-1 (U^H U)^-1 from the Cholesky factor."""
    L.check_tensor("cholesky_inverse", input, "input", 1)
    L.check_square("cholesky_inverse", input)
    L.check_kernel_dtype(input, "cholesky_inverse_out_cpu")
    n = input.shape[-1]
    I = eye(n, dtype=input.dtype, device=input.device).expand(_batch(input) + (n, n))
    X = _cholesky_solve_values(I, input, upper)
    return L.record_formula("CholeskyInverseBackward0", _cholesky_inverse_backward, (input,), (X,),
                            save={"L": input, "inverse": X}, upper=bool(upper))[0]


declare("cholesky_solve", cholesky_solve, out="exact")
declare("cholesky_inverse", cholesky_inverse, out="exact")


# =========================================================================== LDL solve
def _ldl_solve_rule(ld, pivots, b, *, hermitian):
    batch = L.broadcast_batch(ld.shape[:-2], b.shape[:-2])
    return Meta(batch + tuple(b.shape[-2:]), ld.dtype)


LDL_SOLVE = op("linalg_ldl_solve", ("ld", "pivots", "b"), rule=_ldl_solve_rule, reference=numpy_linalg.ldl_solve,
               kernel=tla.ldl_solve)


def ldl_solve(LD, pivots, B, *, hermitian=False):
    """torch.linalg.ldl_solve: X with A X = B from ldl_factor's (LD, pivots) (sytrs); batch
    dims broadcast. No derivative (torch has none)."""
    L.check_tensor("linalg_ldl_solve", LD, "LD", 1)
    L.check_tensor("linalg_ldl_solve", pivots, "pivots", 2)
    L.check_tensor("linalg_ldl_solve", B, "B", 3)
    L.check_square("torch.linalg.ldl_solve", LD)
    L.check_floating("torch.linalg.ldl_solve", LD)
    if B.dim() < 2:     # torch reads B.size(-2) before it checks B's dims
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(B.dim(), 1)}, "
                         f"{max(B.dim(), 1) - 1}], but got -2)")
    F._linear_solve_check(B, LD, "torch.linalg.ldl_solve")
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the same, but got "
                           f"pivots with shape {list(pivots.shape)} instead")
    if pivots.dtype.is_floating_point or pivots.dtype is _dt.bool_:
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected pivots to be integers. Got {_dt.type_name(pivots.dtype)}")
    L.broadcast_batch(B.shape[:-2], LD.shape[:-2])
    L.check_kernel_dtype(LD, "ldl_solve_kernel_cpu")
    X = dispatch(LDL_SOLVE, LD, pivots.to(_int32), B, hermitian=bool(hermitian))
    return F.not_implemented_node("aten::linalg_ldl_solve", (LD, B), (X,))[0]


# =========================================================================== least squares
def _lstsq_svd_rule(a, b, *, rcond):
    batch = L.broadcast_batch(a.shape[:-2], b.shape[:-2])
    return (Meta(batch + (a.shape[-1], b.shape[-1]), a.dtype), Meta(tuple(a.shape[:-2]), _int64),
            Meta(tuple(a.shape[:-2]) + (min(a.shape[-2:]),), a.dtype))


LSTSQ_SVD = op("linalg_lstsq_svd", ("a", "b"), rule=_lstsq_svd_rule, reference=numpy_linalg.lstsq_svd,
               kernel=tla.lstsq_svd, outputs=("solution", "rank", "singular_values"))

DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _gels(A, B):
    """The least-squares solution through A's QR (full rank): R X = Q^T B when A is tall,
    X = Q R^-T B from A^T's QR when it is wide (the minimum-norm solution). No history."""
    m, n = A.shape[-2:]
    with no_grad():
        if m >= n:
            a, tau = F._geqrf(A)
            Q = dispatch(F.HOUSEHOLDER, a.narrow(-1, 0, n), tau)
            return dispatch(F.SOLVE_TRIANGULAR, triu(a.narrow(-2, 0, n)), _mH(Q) @ B, upper=True, left=True,
                            unitriangular=False)
        a, tau = F._geqrf(_mH(A))
        Q = dispatch(F.HOUSEHOLDER, a.narrow(-1, 0, m), tau)
        Y = dispatch(F.SOLVE_TRIANGULAR, _mH(triu(a.narrow(-2, 0, m))), B, upper=False, left=True,
                     unitriangular=False)
        return Q @ Y


def _pinv_full_rank(A):
    """A's pseudo-inverse for a matrix of full rank: (A^H A)^-1 A^H (tall) or A^H (A A^H)^-1,
    in differentiable ops (torch's lstsq backward uses linalg.pinv)."""
    m, n = A.shape[-2:]
    if m >= n:
        return solve(_mH(A) @ A, _mH(A))
    return _mH(solve(A @ _mH(A), A))


def _pinv_backward(grad, pinvA, A):
    """torch's pinv_backward: the derivative of A^+ in terms of A^+ itself."""
    m, n = A.shape[-2:]
    pinvAh, gradh = _mH(pinvA), _mH(grad)
    if m <= n:
        K = gradh @ pinvA
        KpinvAh = K @ pinvAh
        return -_mH(pinvA @ K) + KpinvAh - (A @ pinvA) @ KpinvAh + (pinvAh @ pinvA) @ (gradh - K @ A)
    K = pinvA @ gradh
    pinvAhK = pinvAh @ K
    return -_mH(K @ pinvA) + ((gradh - A @ K) @ pinvA) @ pinvAh + pinvAhK - (pinvAhK @ pinvA) @ A


def _lstsq_backward(node, gX, gres=None, _grank=None, _gsv=None):
    """torch's linalg_lstsq_backward: the solution is pinv(A) B; the residuals |A X - B|^2 add
    their own term."""
    A, B, X = node.saved("A"), node.saved("B"), node.saved("X")
    vector = node.attrs["vector"]
    has_gres = gres is not None and gres.numel() > 0
    if gX is None and not has_gres:
        return None, None
    if vector:         # (B is saved as the matrix it was solved with)
        X = X.unsqueeze(-1)
        gX = gX.unsqueeze(-1) if gX is not None else None
    gA = gB = None
    if gX is not None:
        pinvA = _pinv_full_rank(A)
        if node.needs_input_grad[0]:
            gA = _pinv_backward(gX @ _mH(B), pinvA, A)
        if node.needs_input_grad[1]:
            gB = _mH(pinvA) @ gX
    if has_gres:
        r = A @ X - B
        gl = gres.unsqueeze(-2)
        if node.needs_input_grad[0]:
            term = ((gl * r) @ _mH(X)) * 2
            gA = term if gA is None else gA + term
        if node.needs_input_grad[1]:
            term = gl * r * -2
            gB = term if gB is None else gB + term
    if gB is not None and vector:
        gB = gB.squeeze(-1)
    return gA, gB


def lstsq(input, b, rcond=None, *, driver=None):
    """torch.linalg.lstsq: (solution, residuals, rank, singular_values) of min |A X - B|.
    Drivers: 'gels' (QR; A of full rank), and on cpu 'gelsy' (the default there), 'gelsd',
    'gelss' (the minimum-norm solution, singular values below rcond * s_max counted as zero;
    computed through the SVD for all three). On cuda only 'gels' (the default there), as torch.
    residuals: |A X - B|^2 per column when m > n and every matrix has full rank (gels, gelsd,
    gelss), else empty; rank: gelsy/gelsd/gelss; singular_values: gelsd/gelss."""
    L.check_tensor("linalg_lstsq", input, "input", 1)
    L.check_tensor("linalg_lstsq", b, "b", 2)
    A = input
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if b.dim() < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if A.dtype is not b.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
                           f"dtype {_dt.type_name(A.dtype)} and other's dtype {_dt.type_name(b.dtype)}")
    diff = A.dim() - b.dim()
    if not 0 <= diff <= 1:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
                           "(input.dim() - other.dim()) <= 1")
    vector = diff == 1
    B = b.unsqueeze(-1) if vector else b
    if A.shape[-2] != B.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-1)" if vector else
                           "torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    L.check_same_device(A, B)
    default = backend_for(A.device).torch_name("gelsy", "gels")
    if driver is None:
        driver = default
    if driver not in DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if driver != "gels" and default == "gels":
        raise RuntimeError("torch.linalg.lstsq: `driver` other than `gels` is not supported on CUDA")
    if A.dtype not in (_dt.float32, _dt.float64):
        raise RuntimeError("This function doesn't handle types other than float and double")
    batch = L.broadcast_batch(A.shape[:-2], B.shape[:-2])
    m, n = A.shape[-2:]
    k = min(m, n)
    if rcond is None:
        rcond = _dt.finfo(A.dtype).eps * max(m, n)
    empty_int = zeros(0, dtype=_int64, device=A.device)
    sv = zeros(0, dtype=A.dtype, device=A.device)
    if driver == "gels":
        rank = empty_int
        X = _gels(A, B) if A.numel() and B.numel() else zeros(batch + (n, B.shape[-1]), dtype=A.dtype,
                                                               device=A.device)
        full_rank = True
    else:
        X, rank, singular_values = dispatch(LSTSQ_SVD, A, B, rcond=float(rcond))
        if driver != "gelsy":
            sv = singular_values
        full_rank = rank.numel() == 0 or bool((rank == n).all())
    with no_grad():
        if m > n and driver != "gelsy" and full_rank:
            residuals = ((A @ X - B) ** 2).sum(-2)
        else:
            residuals = zeros(0, dtype=A.dtype, device=A.device)
    if vector:
        X = _squeeze_last(X)
    L.record_formula("LinalgLstsqBackward0", _lstsq_backward, (A, b), (X, residuals, rank, sv),
                     save={"A": A, "B": B, "X": X}, vector=vector)
    return L.linalg_lstsq(X, residuals, rank, sv)


# =========================================================================== tensorinv, tensorsolve, ormqr
def tensorinv(input, ind=2):
    """torch.linalg.tensorinv: the inverse of ``input`` seen as a square matrix whose rows are
    its first ``ind`` dims; shaped shape[ind:] + shape[:ind]."""
    L.check_tensor("linalg_tensorinv", input, "input", 1)
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(input.shape)
    rows, cols = math.prod(shape[:ind]), math.prod(shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    X, info = _inv(input.reshape(rows, cols), "linalg_tensorinv", api="linalg.inv")
    L.check_errors(info, "inv", "inv", True)
    return X.reshape(shape[ind:] + shape[:ind])


def tensorsolve(A, B, dims=None):
    """torch.linalg.tensorsolve: X with tensordot(A, X, X.ndim) = B; ``dims`` of A are moved to
    the end first."""
    L.check_tensor("linalg_tensorsolve", A, "input", 1)
    L.check_tensor("linalg_tensorsolve", B, "other", 2)
    if dims is not None:
        dims = tuple(dims)
        A = A.movedim(dims, tuple(range(A.dim() - len(dims), A.dim())))
    result_shape = tuple(A.shape[B.dim():])
    result_n, other_n = math.prod(result_shape), math.prod(tuple(B.shape))
    if result_n != other_n:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {result_n} != {other_n}")
    return solve(A.reshape(other_n, result_n), B.reshape(-1)).reshape(result_shape)


def _ormqr_values(input, tau, other, left, transpose):
    m = input.shape[-2]
    k = min(m, input.shape[-1])
    refl = input.narrow(-1, 0, k)
    if k < m:
        refl = cat([refl, zeros(_batch(input) + (m, m - k), dtype=input.dtype, device=input.device)], -1)
    Q = F._reflector_product(refl, tau) if L.needs_grad(input, tau) else dispatch(F.HOUSEHOLDER, refl, tau)
    Q = _mH(Q) if transpose else Q
    return Q @ other if left else other @ Q


def ormqr(input, input2, input3, left=True, transpose=False):
    """torch.ormqr(A, tau, C, left, transpose): C multiplied by Q (Q^T with ``transpose``) from
    the left or the right, Q = the product of the Householder reflectors (A, tau) of geqrf."""
    L.check_tensor("ormqr", input, "input", 1)
    L.check_tensor("ormqr", input2, "input2", 2)
    L.check_tensor("ormqr", input3, "input3", 3)
    A, tau, C = input, input2, input3
    if A.dim() < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    if C.dim() < 2:
        raise RuntimeError("torch.ormqr: other must have at least 2 dimensions.")
    side = -2 if left else -1
    if C.shape[side] != A.shape[-2]:
        raise RuntimeError(f"torch.ormqr: other.shape[{side}] must be equal to input.shape[-2]")
    if tau.dim() and C.shape[side] < tau.shape[-1]:
        raise RuntimeError(f"torch.ormqr: other.shape[{side}] must be greater than or equal to tau.shape[-1]")
    if tau.dim() and tau.shape[-1] > A.shape[-1]:
        raise RuntimeError("torch.ormqr: tau.shape[-1] must be less than or equal to input.shape[-1]")
    if A.dim() - tau.dim() != 1:
        raise RuntimeError(f"torch.ormqr: Expected tau to have one dimension less than input, but got tau.ndim equal "
                           f"to {tau.dim()} and input.ndim is equal to {A.dim()}")
    if A.dim() != C.dim():
        raise RuntimeError(f"torch.ormqr: Expected other to have the same number of dimensions as input, but got "
                           f"other.ndim equal to {C.dim()} and input.ndim is equal to {A.dim()}")
    if A.dim() > 2:
        if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
            raise RuntimeError(f"torch.ormqr: Expected batch dimensions of tau to be equal to input.shape[:-2], but "
                               f"got {list(tau.shape[:-1])}")
        if tuple(C.shape[:-2]) != tuple(A.shape[:-2]):
            raise RuntimeError(f"torch.ormqr: Expected batch dimensions of other to be equal to input.shape[:-2], "
                               f"but got {list(C.shape[:-2])}")
    for t, name in ((C, "other"), (tau, "tau")):
        if t.dtype is not A.dtype:
            raise RuntimeError(f"torch.ormqr: Expected input and {name} to have the same dtype, but input has dtype"
                               f"{_dt.type_name(A.dtype)} and {name} has dtype {_dt.type_name(t.dtype)}")
    L.check_kernel_dtype(A, "ormqr_cpu")
    if L.needs_grad(A, tau, C):
        return named_composite("OrmqrBackward0", _ormqr_values, A, tau, C, left, transpose)
    return _ormqr_values(A, tau, C, left, transpose)


declare("ormqr", ormqr, out="exact")
