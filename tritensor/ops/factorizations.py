"""Matrix factorizations (torch.linalg's cholesky, lu, qr, ldl families and their legacy torch.*
names) and the triangular solves they are differentiated with.

Table entries are the primitives: one computation each (NumPy reference in
backends/numpy_linalg.py, Triton launcher in backends/triton/linalg.py), entries with several
outputs (the factor with its pivots, info, tau ...; ops/table.py). They have no backward of their own:
the public functions give their outputs one node per call with torch's name and formula
(ops/_linalg.py record_formula), written in tritensor ops so that create_graph differentiates
them again:

    linalg_cholesky_ex        L, info                   LinalgCholeskyExBackward0 (CholeskyBackward0)
    linalg_lu_factor_ex       LU, pivots, info          LinalgLuFactorExBackward0
    lu_pivots_to_permutation  the row order the pivots make (lu_unpack's P)
    linalg_solve_triangular   X                         LinalgSolveTriangularBackward0
    geqrf                     a, tau                    GeqrfBackward0 (no derivative, as torch)
    linalg_householder_product Q                        LinalgHouseholderProductBackward0
    linalg_ldl_factor_ex      LD, pivots, info          no derivative (torch has none)

and on top of them (no kernel of their own): linalg.cholesky, cholesky (legacy), linalg.lu
(LinalgLuBackward0), lu_factor, lu_unpack (LuUnpackBackward0), torch.lu, linalg.qr / qr
(LinalgQrBackward0), triangular_solve (TriangularSolveBackward0), ldl_factor.

Errors are torch's: shape and dtype checks before any work, then the factorization's own
(LinAlgError for a matrix that is not positive definite, torch's lu_factor text for a zero
pivot), naming the batch element that failed. Float32 and float64 only: float16/bfloat16 and
integers get torch's texts for the op (its dtype check, or its kernel's "not implemented").
"""
from __future__ import annotations

from .._autocast import autocast_policy as _autocast_policy

import warnings

from .. import _dual
from ..autograd import forward_ad as _forward_ad
from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..autograd.composite import named_composite
from ..autograd.graph import Node, gradient_edge
from ..backends import numpy_linalg
from ..backends.base import backend_for
from ..backends.triton import linalg as tla
from ..runtime import device_errors as _device_errors
from . import _linalg as L
from .creation import arange, eye, zeros
from .dispatch import dispatch
from .joining import cat, tril, triu
from .surface import declare
from .table import Meta, op

_int32, _int64 = _dt.int32, _dt.int64


def _mH(t):
    return t.mT           # real dtypes: the adjoint is the transpose


def _batch(t):
    return tuple(t.shape[:-2])


# =========================================================================== triangular solves
def _solve_triangular_rule(a, b, *, upper, left, unitriangular):
    batch = L.broadcast_batch(a.shape[:-2], b.shape[:-2])
    return Meta(batch + tuple(b.shape[-2:]), a.dtype)


SOLVE_TRIANGULAR = op("linalg_solve_triangular", ("a", "b"), rule=_solve_triangular_rule,
                      reference=numpy_linalg.solve_triangular, kernel=tla.solve_triangular)


def _solve_triangular_backward(node, g):
    """torch's linalg_solve_triangular_backward: gB = A^-H g (same triangle flipped); gA =
    -gB X^H (left) or -X^H gB, kept in A's triangle (off the diagonal when it is unit)."""
    if g is None:
        return None, None
    A, X = node.saved("A"), node.saved("X")
    upper, left, unit = node.attrs["upper"], node.attrs["left"], node.attrs["unitriangular"]
    gB = solve_triangular(_mH(A), g, upper=not upper, left=left, unitriangular=unit)
    gA = None
    if node.needs_input_grad[0]:
        gA = -(gB @ _mH(X)) if left else -(_mH(X) @ gB)
        gA = triu(gA, 1 if unit else 0) if upper else tril(gA, -1 if unit else 0)
    return gA, (gB if node.needs_input_grad[1] else None)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """torch.linalg.solve_triangular: X with A X = B (left) or X A = B, reading only A's upper
    (lower) triangle and taking its diagonal as ones with ``unitriangular``; batch dims
    broadcast. B is read in A's dtype, as torch does."""
    L.check_tensor("linalg_solve_triangular", A, "input", 1)
    L.check_tensor("linalg_solve_triangular", B, "B", 2)
    L.check_square("linalg.solve_triangular", A)
    L.check_matrix("linalg.solve_triangular", B)
    if (A.shape[-2] != B.shape[-2]) if left else (A.shape[-1] != B.shape[-1]):
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{A.shape[-1]} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    L.check_same_device(A, B)
    L.check_kernel_dtype(A, "triangular_solve_cpu")
    if B.dtype is not A.dtype:
        B = B.to(A.dtype)
    X = dispatch(SOLVE_TRIANGULAR, A, B, upper=bool(upper), left=bool(left), unitriangular=bool(unitriangular))
    return L.record_formula("LinalgSolveTriangularBackward0", _solve_triangular_backward, (A, B), (X,),
                            save={"A": A, "X": X}, upper=bool(upper), left=bool(left),
                            unitriangular=bool(unitriangular))[0]


def _triangular_solve_backward(node, g_x, g_m):
    """torch's triangular_solve_backward: the solution's gradient as solve_triangular's (on
    op(A) = A or A^T), plus the cloned coefficient's gradient going straight to A."""
    A, X = node.saved("A"), node.saved("X")
    upper, transpose, unit = node.attrs["upper"], node.attrs["transpose"], node.attrs["unitriangular"]
    g_b = g_a = None
    if g_x is not None:
        g_b = triangular_solve(g_x, A, upper, not transpose, unit)[0]
        if node.needs_input_grad[1]:
            g_a = -(X @ g_b.mT) if transpose else -(g_b @ _mH(X))
            g_a = triu(g_a, 1 if unit else 0) if upper else tril(g_a, -1 if unit else 0)
    if g_m is not None and node.needs_input_grad[1]:
        g_a = g_m if g_a is None else g_a + g_m
    return (g_b if node.needs_input_grad[0] else None), g_a


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    """torch.triangular_solve (deprecated): (X, A's copy) with op(A) X = b, op(A) = A or A^T;
    batch dims broadcast (the copy too)."""
    L.check_tensor("triangular_solve", input, "input", 1)
    L.check_tensor("triangular_solve", A, "A", 2)
    warnings.warn(
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be removed in a "
        "future PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed and does not return a "
        "copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
        "X = torch.linalg.solve_triangular(A, B).", UserWarning, stacklevel=2)
    b = input
    if b.dim() < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, but it has "
                           f"{b.dim()} dimensions instead")
    if A.dim() < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected A to have at least 2 dimensions, but it has "
                           f"{A.dim()} dimensions instead")
    _linear_solve_check(b, A, "triangular_solve")
    L.check_kernel_dtype(A, "triangular_solve_cpu")
    batch = L.broadcast_batch(b.shape[:-2], A.shape[:-2])
    with no_grad():
        coefficient = A.expand(batch + tuple(A.shape[-2:])).clone()
        X = dispatch(SOLVE_TRIANGULAR, A.mT if transpose else A, b, upper=bool(upper) != bool(transpose),
                     left=True, unitriangular=bool(unitriangular))
    X, coefficient = L.record_formula("TriangularSolveBackward0", _triangular_solve_backward, (b, A),
                                      (X, coefficient), save={"A": A, "X": X}, upper=bool(upper),
                                      transpose=bool(transpose), unitriangular=bool(unitriangular))
    return L.triangular_solve(X, coefficient)


declare("triangular_solve", triangular_solve, out="exact")


def _linear_solve_check(b, A, name):
    """torch's linearSolveCheckInputs (cholesky_solve, triangular_solve, ldl_solve)."""
    if b.device != A.device:
        raise RuntimeError(f"Expected b and A to be on the same device, but found b on {b.device} and A on "
                           f"{A.device} instead.")
    if b.dtype is not A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {_dt.type_name(b.dtype)} "
                           f"and A of type {_dt.type_name(A.dtype)} instead.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} "
                           "matrices")
    if A.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {A.shape[-1]} by "
                           f"{A.shape[-1]} but each b matrix is {b.shape[-2]} by {b.shape[-1]}")


# =========================================================================== Cholesky
def _factor_rule(*extra):
    """The rule of a factorization: the factor shaped as the input, then the integer outputs
    (``extra``: (dims of the input kept: "batch", "rows", "k"; dtype))."""
    def rule(x, **_):
        shape = tuple(x.shape)
        sizes = {"batch": shape[:-2], "rows": shape[:-1], "k": shape[:-2] + (min(shape[-2:]),)}
        return (Meta(shape, x.dtype),) + tuple(Meta(sizes[which], dtype) for which, dtype in extra)
    return rule


CHOLESKY = op("linalg_cholesky_ex", ("x",), rule=_factor_rule(("batch", _int32)), reference=numpy_linalg.cholesky,
              kernel=tla.cholesky, outputs=("L", "info"))


def _cholesky_backward(node, gL, _ginfo=None):
    """torch's cholesky_backward (Iain Murray, arXiv:1602.07527): with A = L L^H,
    gA = L^-H Phi(L^H gL) L^-1 symmetrised, Phi = the lower triangle with half its diagonal."""
    if gL is None:
        return (None,)
    Lf = node.saved("L")
    if node.attrs["upper"]:
        Lf, gL = _mH(Lf), _mH(gL)
    gA = tril(_mH(Lf) @ gL)
    gA = (gA + _mH(tril(gA, -1))) * 0.5
    gA = solve_triangular(_mH(Lf), gA, upper=True, left=True)
    return (solve_triangular(Lf, gA, upper=False, left=False),)


def _cholesky(A, upper, api, node_name):
    Lf, info = dispatch(CHOLESKY, A, upper=bool(upper))
    L.record_formula(node_name, _cholesky_backward, (A,), (Lf, info), save={"L": Lf}, upper=bool(upper))
    return Lf, info


def cholesky_ex(A, *, upper=False, check_errors=False):
    """torch.linalg.cholesky_ex: (L, info) with A = L L^H (U^H U with ``upper``), read from A's
    lower (upper) triangle; info = order of the first leading minor that is not positive
    definite (0 for success), an error instead only with check_errors."""
    L.check_tensor("linalg_cholesky_ex", A, "input", 1)
    L.check_square("linalg.cholesky", A)
    L.check_floating("linalg.cholesky", A)
    L.check_kernel_dtype(A, "cholesky_cpu")
    Lf, info = _cholesky(A, upper, "linalg.cholesky_ex", "LinalgCholeskyExBackward0")
    if check_errors:
        L.check_errors(info, "linalg.cholesky_ex", "cholesky", A.dim() == 2)
    return L.linalg_cholesky_ex(Lf, info)


def linalg_cholesky(A, *, upper=False):
    """torch.linalg.cholesky: the factor L (U with ``upper``); a matrix that is not positive
    definite raises LinAlgError naming the leading minor (and the batch element)."""
    L.check_tensor("linalg_cholesky", A, "input", 1)
    L.check_square("linalg.cholesky", A)
    L.check_floating("linalg.cholesky", A)
    L.check_kernel_dtype(A, "cholesky_cpu")
    Lf, info = _cholesky(A, upper, "linalg.cholesky", "LinalgCholeskyExBackward0")
    L.check_errors(info, "linalg.cholesky", "cholesky", A.dim() == 2)
    return Lf


@_autocast_policy("cholesky")
def cholesky(input, upper=False):
    """torch.cholesky (deprecated): the same factor, CholeskyBackward0, torch's "cholesky"
    texts."""
    L.check_tensor("cholesky", input, "input", 1)
    warnings.warn(
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future PyTorch "
        "release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\nand\n"
        "U = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\n"
        "This transform will produce equivalent results for all valid (symmetric positive definite) inputs.",
        UserWarning, stacklevel=2)
    if input.numel() == 0:
        return zeros(tuple(input.shape), dtype=input.dtype, device=input.device)
    L.check_square("cholesky", input)
    L.check_kernel_dtype(input, "cholesky_cpu")
    Lf, info = _cholesky(input, upper, "cholesky", "CholeskyBackward0")
    L.check_errors(info, "cholesky", "cholesky", input.dim() == 2)
    return Lf


declare("cholesky", cholesky, out="exact")


# =========================================================================== LU
LU_FACTOR = op("linalg_lu_factor_ex", ("x",), rule=_factor_rule(("k", _int32), ("batch", _int32)),
               reference=numpy_linalg.lu_factor, kernel=tla.lu_factor, outputs=("LU", "pivots", "info"))
PERMUTATION = op("lu_pivots_to_permutation", ("pivots",),
                 rule=lambda pivots, *, m: Meta(tuple(pivots.shape[:-1]) + (m,), _int64, _int64),
                 reference=numpy_linalg.pivots_to_permutation, kernel=tla.lu_pivots_to_permutation,
                 differentiable=False)


def _check_lu_input(A, api):
    if A.dim() < 2:
        raise RuntimeError(f"{api}: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} instead")


def _lu_factor(A, pivot, api="torch.lu_factor"):
    """(LU, pivots, info) of A with their LinalgLuFactorExBackward0 node."""
    _check_lu_input(A, api)
    L.check_kernel_dtype(A, "lu_cpu")
    if not pivot:
        no_pivot = backend_for(A.device).torch_name("linalg.lu_factor: LU without pivoting is not implemented on "
                                                    "the CPU", None)
        if no_pivot:
            raise RuntimeError(no_pivot)
    LU, pivots, info = dispatch(LU_FACTOR, A, pivot=bool(pivot))
    L.record_formula("LinalgLuFactorExBackward0", _lu_factor_backward, (A,), (LU, pivots, info),
                     save={"LU": LU, "pivots": pivots}, pivot=bool(pivot))
    return LU, pivots, info


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """torch.linalg.lu_factor_ex: (LU, pivots, info), LAPACK's getrf: L (unit diagonal) below
    the diagonal of LU and U on and above it, pivots the 1-based int32 row exchanges, info the
    first zero pivot (1-based; 0: none). Without ``pivot`` (cuda only, as torch) no rows move."""
    L.check_tensor("linalg_lu_factor_ex", A, "A", 1)
    LU, pivots, info = _lu_factor(A, pivot)
    if check_errors:
        L.check_errors(info, "torch.linalg.lu_factor_ex", "lu_factor", A.dim() == 2)
    return L.linalg_lu_factor_ex(LU, pivots, info)


def lu_factor(A, *, pivot=True):
    """torch.linalg.lu_factor: (LU, pivots); a zero pivot is torch's RuntimeError (use
    lu_factor_ex, or linalg.lu, to factor singular matrices)."""
    L.check_tensor("linalg_lu_factor", A, "A", 1)
    LU, pivots, info = _lu_factor(A, pivot)
    L.check_errors(info, "torch.linalg.lu_factor", "lu_factor", A.dim() == 2)
    return L.linalg_lu_factor(LU, pivots)


def _permutation_matrix(pivots, m, dtype):
    """P with A = P L U from the 1-based row exchanges (P[perm[i], i] = 1)."""
    perm = dispatch(PERMUTATION, pivots, m=int(m))
    rows = arange(m, device=pivots.device).unsqueeze(-1)
    return (rows == perm.unsqueeze(-2)).to(dtype)


def _unpack(LU, pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) of a packed factorization, with no history (callers give them a node)."""
    m, n = LU.shape[-2:]
    k = min(m, n)
    empty = zeros(0, dtype=LU.dtype, device=LU.device)
    with no_grad():
        P = _permutation_matrix(pivots, m, LU.dtype) if unpack_pivots else empty
        if unpack_data:
            Lf = tril(LU.narrow(-1, 0, k), -1) + eye(m, k, dtype=LU.dtype, device=LU.device)
            U = triu(LU.narrow(-2, 0, k))
        else:
            Lf, U = empty, zeros(0, dtype=LU.dtype, device=LU.device)
    return P, Lf, U


def _lu_unpack_backward(node, _gP, gL, gU):
    """torch's lu_unpack_backward: L's strict lower part and U's upper part go back where
    they were read from."""
    m, n = node.attrs["m"], node.attrs["n"]
    k = min(m, n)
    if gL is None and gU is None:
        return (None,)
    parts = []
    if gL is not None:
        gl = tril(gL, -1)
        parts.append(gl if m >= n else cat([gl, zeros(_batch(gl) + (m, n - k), dtype=gl.dtype, device=gl.device)], -1))
    if gU is not None:
        gu = triu(gU)
        parts.append(gu if n >= m else cat([gu, zeros(_batch(gu) + (m - k, n), dtype=gu.dtype, device=gu.device)], -2))
    return (parts[0] if len(parts) == 1 else parts[0] + parts[1],)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """torch.lu_unpack: (P, L, U) from lu_factor's packed output (empty tensors for the parts
    not asked for); L and U carry LuUnpackBackward0."""
    L.check_tensor("lu_unpack", LU_data, "LU_data", 1)
    L.check_tensor("lu_unpack", LU_pivots, "LU_pivots", 2)
    _check_lu_input(LU_data, "torch.lu_unpack")
    if unpack_pivots:
        if LU_pivots.dtype is not _int32:
            raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
                               "dtype.\nNote: this function is intended to be used with the output produced by "
                               "torch.linalg.lu_factor")
        LU_pivots = _check_pivot_values(LU_pivots, LU_data.shape[-2], "pivots passed to lu_unpack must be between "
                                        "1 and LU.size(-2) inclusive.Did you properly pass the result of lu_factor?")
    P, Lf, U = _unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)
    if unpack_data:
        m, n = LU_data.shape[-2:]
        L.record_formula("LuUnpackBackward0", _lu_unpack_backward, (LU_data,), (P, Lf, U), frozen=(0,),
                         m=int(m), n=int(n))
    return L.lu_unpack(P, Lf, U)


def _check_pivot_values(pivots, m, message):
    """torch's check that LU pivots lie in [1, m]; returns the pivots to go on with (on cuda: the
    device-side check's clamped copy, the error deferred to the next sync: ops/indexing.py
    check_range)."""
    return backend_for(pivots.device).check_index(pivots.detach(), 1, int(m) + 1,
                                                  _device_errors.check(message, RuntimeError))


def _lu_backward(gL, gU, P, Lf, U, pivot):
    """torch's linalg_lu_backward: gA for A = P L U from the factors' gradients (square, wide
    and tall A), through two triangular solves."""
    if gL is None and gU is None:
        return None
    m, n = Lf.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        gA = tril(_mH(Lf) @ gL, -1) if gL is not None else None
        if gU is not None:
            up = triu(gU @ _mH(U))
            gA = up if gA is None else gA + up
        gA = solve_triangular(_mH(U), gA, upper=False, left=False)
        gA = solve_triangular(_mH(Lf), gA, upper=True, left=True, unitriangular=True)
    elif m < n:
        U1 = U.narrow(-1, 0, k)
        gA = _mH(Lf) @ gL if gL is not None else None
        if gU is not None:
            term = -(triu(gU) @ _mH(U))
            gA = term if gA is None else gA + term
        gA = solve_triangular(_mH(U1), tril(gA, -1), upper=False, left=False)
        if gU is not None:
            gA = cat([gA + triu(gU.narrow(-1, 0, k)), gU.narrow(-1, k, n - k)], -1)
        gA = solve_triangular(_mH(Lf), gA, upper=True, left=True, unitriangular=True)
        if gU is None:
            gA = cat([gA, zeros(_batch(gA) + (m, n - k), dtype=gA.dtype, device=gA.device)], -1)
    else:
        L1 = Lf.narrow(-2, 0, k)
        gA = gU @ _mH(U) if gU is not None else None
        if gL is not None:
            term = -(_mH(Lf) @ tril(gL, -1))
            gA = term if gA is None else gA + term
        gA = solve_triangular(_mH(L1), triu(gA), upper=True, left=True, unitriangular=True)
        if gL is not None:
            gA = cat([gA + tril(gL.narrow(-2, 0, k), -1), gL.narrow(-2, k, m - k)], -2)
        gA = solve_triangular(_mH(U), gA, upper=False, left=False)
        if gL is None:
            gA = cat([gA, zeros(_batch(gA) + (m - k, n), dtype=gA.dtype, device=gA.device)], -2)
    return P @ gA if pivot else gA


def _lu_factor_backward(node, g, _gpiv=None, _ginfo=None):
    """torch's lu_factor_ex_backward: the packed gradient split into L's columns and U's rows."""
    if g is None:
        return (None,)
    LU, pivots = node.saved("LU"), node.saved("pivots")
    pivot = node.attrs["pivot"]
    m, n = LU.shape[-2:]
    k = min(m, n)
    P, Lf, U = lu_unpack(LU, pivots, True, pivot)
    return (_lu_backward(g.narrow(-1, 0, k), g.narrow(-2, 0, k), P, Lf, U, pivot),)


def _linalg_lu_backward(node, _gP, gL, gU):
    return (_lu_backward(gL, gU, node.saved("P"), node.saved("L"), node.saved("U"), node.attrs["pivot"]),)


def lu(A, *, pivot=True):
    """torch.linalg.lu: (P, L, U) with A = P L U (P empty without ``pivot``); L and U carry
    LinalgLuBackward0. Singular matrices are factored (no error)."""
    L.check_tensor("linalg_lu", A, "A", 1)
    _check_lu_input(A, "linalg.lu")
    with no_grad():
        LU, pivots, _ = _lu_factor(A, pivot)
        P, Lf, U = _unpack(LU, pivots, True, pivot)
    L.record_formula("LinalgLuBackward0", _linalg_lu_backward, (A,), (P, Lf, U),
                     save={"P": P, "L": Lf, "U": U}, frozen=(0,), pivot=bool(pivot))
    return L.linalg_lu(P, Lf, U)


def lu_legacy(A, pivot=True, get_infos=False):
    """torch.lu (deprecated): (LU, pivots) or, with get_infos, (LU, pivots, info); never raises
    for a singular matrix."""
    L.check_tensor("lu", A, "A", 1)
    warnings.warn(
        "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be removed "
        "in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\n"
        "LU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
        "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\n"
        "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)", UserWarning, stacklevel=2)
    LU, pivots, info = _lu_factor(A, pivot)
    if get_infos:
        return L.lu_with_info(LU, pivots, info)
    return LU, pivots


declare("lu_unpack", lu_unpack, method=False, out="exact")
declare("lu", lu_legacy, out="exact")


# =========================================================================== Householder QR
def _geqrf_rule(x):
    shape = tuple(x.shape)
    return Meta(shape, x.dtype), Meta(shape[:-2] + (min(shape[-2:]),), x.dtype)


GEQRF = op("geqrf", ("x",), rule=_geqrf_rule, reference=numpy_linalg.geqrf, kernel=tla.geqrf, outputs=("a", "tau"))
HOUSEHOLDER = op("linalg_householder_product", ("a", "tau"), rule=lambda a, tau: Meta(tuple(a.shape), a.dtype),
                 reference=numpy_linalg.householder_product, kernel=tla.householder_product)


def _not_implemented(name):
    def backward(node, *grads):
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
    return backward


def _geqrf(A):
    return dispatch(GEQRF, A)


def geqrf(input):
    """torch.geqrf: LAPACK's packed Householder QR (a, tau): R on and above a's diagonal, the
    reflectors' vectors below it. Not differentiable (GeqrfBackward0 raises, as torch's)."""
    L.check_tensor("geqrf", input, "input", 1)
    if input.dim() < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    L.check_kernel_dtype(input, "geqrf_cpu")
    a, tau = _geqrf(input)
    L.record_formula("GeqrfBackward0", _not_implemented("geqrf"), (input,), (a, tau))
    return L.geqrf(a, tau)


def _check_householder(input, tau, api="torch.linalg.householder_product"):
    if input.dim() < 2:
        raise RuntimeError(f"{api}: input must have at least 2 dimensions.")
    if input.shape[-2] < input.shape[-1]:
        raise RuntimeError(f"{api}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if input.shape[-1] < tau.shape[-1] if tau.dim() else False:
        raise RuntimeError(f"{api}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if input.dim() - tau.dim() != 1:
        raise RuntimeError(f"{api}: Expected tau to have one dimension less than input, but got tau.ndim equal "
                           f"to {tau.dim()} and input.ndim is equal to {input.dim()}")
    if input.dim() > 2 and tuple(tau.shape[:-1]) != tuple(input.shape[:-2]):
        raise RuntimeError(f"{api}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(tau.shape[:-1])}")
    if tau.dtype is not input.dtype:
        raise RuntimeError(f"{api}: tau dtype {_dt.type_name(tau.dtype)} does not match input dtype "
                           f"{_dt.type_name(input.dtype)}")
    if tau.device != input.device:
        raise RuntimeError(f"{api}: Expected tau and input tensors to be on the same device, but got tau on "
                           f"{tau.device} and input on {input.device}")


def _reflector_product(A, tau):
    """H_1 ... H_k applied to the m x n identity, in differentiable tritensor ops (the
    householder_product's recorded form: its gradient is the product rule through each
    reflector)."""
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    Q = eye(m, n, dtype=A.dtype, device=A.device).expand(_batch(A) + (m, n))
    below = tril(A.narrow(-1, 0, k), -1) + eye(m, k, dtype=A.dtype, device=A.device)
    for i in range(k - 1, -1, -1):
        v = below.narrow(-1, i, 1)
        Q = Q - (tau.narrow(-1, i, 1).unsqueeze(-1) * v) @ (v.mT @ Q)
    return Q


def householder_product(input, tau):
    """torch.linalg.householder_product (torch.orgqr): the first n columns of the product of
    the Householder reflectors (I - tau_i v_i v_i^T) stored below the diagonal of ``input``."""
    L.check_tensor("linalg_householder_product", input, "input", 1)
    L.check_tensor("linalg_householder_product", tau, "tau", 2)
    _check_householder(input, tau)
    L.check_kernel_dtype(input, "orgqr_cpu")
    if L.needs_grad(input, tau):
        return named_composite("LinalgHouseholderProductBackward0", _reflector_product, input, tau)
    return dispatch(HOUSEHOLDER, input, tau)


declare("orgqr", householder_product, out="exact")


def _qr_backward(node, gQ, gR):
    """torch's linalg_qr_backward (A = Q R: m >= n, and the wide case)."""
    mode = node.attrs["mode"]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
                           "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    Q, R = node.saved("Q"), node.saved("R")
    m, n = Q.shape[-2], R.shape[-1]
    if mode != "reduced" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    if gQ is None and gR is None:
        return (None,)
    if gQ is not None:
        gA = gR @ _mH(R) - _mH(Q) @ gQ if gR is not None else -(_mH(Q) @ gQ)
    else:
        gA = gR @ _mH(R)
    if m >= n:
        sym = triu(gA)
        sym = sym + _mH(sym)
        sym = sym - (sym.diagonal(0, -2, -1) * 0.5).diag_embed()
        gA = Q @ sym
        if gQ is not None:
            gA = gA + gQ
        return (solve_triangular(_mH(R), gA, upper=False, left=False),)
    X = -gA
    gA = Q @ tril(X - _mH(X))
    gA = solve_triangular(_mH(R.narrow(-1, 0, m)), gA, upper=False, left=False)
    gA = cat([gA, zeros(_batch(gA) + (m, n - m), dtype=gA.dtype, device=gA.device)], -1)
    if gR is not None:
        gA = gA + Q @ gR
    return (gA,)


def _qr_mode(mode):
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    return mode


def _qr(A, mode, return_type):
    m, n = A.shape[-2:]
    k = min(m, n)
    with no_grad():
        a, tau = _geqrf(A)
        if mode == "complete" and m > n:
            R = triu(a)
            padded = cat([a, zeros(_batch(a) + (m, m - n), dtype=a.dtype, device=a.device)], -1)
            Q = dispatch(HOUSEHOLDER, padded, tau)
        else:
            R = triu(a.narrow(-2, 0, k))
            Q = dispatch(HOUSEHOLDER, a.narrow(-1, 0, k), tau) if mode != "r" else \
                zeros(0, dtype=A.dtype, device=A.device)
    Q, R = L.fresh(Q), L.fresh(R)
    L.record_formula("LinalgQrBackward0", _qr_backward, (A,), (Q, R), save={"Q": Q, "R": R}, mode=mode)
    return return_type(Q, R)


def qr(A, mode="reduced"):
    """torch.linalg.qr: (Q, R) with A = Q R, Q with orthonormal columns, R upper triangular;
    mode 'reduced' (k = min(m, n) columns of Q), 'complete' (Q square) or 'r' (Q empty).
    Householder QR as LAPACK's geqrf/orgqr (R's diagonal may be negative)."""
    L.check_tensor("linalg_qr", A, "A", 1)
    L.check_matrix("linalg.qr", A)
    L.check_floating("linalg.qr", A)
    mode = _qr_mode(mode)
    L.check_kernel_dtype(A, "geqrf_cpu")
    return _qr(A, mode, L.linalg_qr)


def qr_legacy(input, some=True):
    """torch.qr (deprecated): linalg.qr with mode 'reduced' (some) or 'complete'."""
    L.check_tensor("qr", input, "input", 1)
    warnings.warn(
        "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch release.\n"
        "The boolean parameter 'some' has been replaced with a string parameter 'mode'.\nQ, R = torch.qr(A, some)\n"
        "should be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if some else 'complete')", UserWarning,
        stacklevel=2)
    L.check_matrix("linalg.qr", input)
    L.check_floating("linalg.qr", input)
    L.check_kernel_dtype(input, "geqrf_cpu")
    return _qr(input, "reduced" if some else "complete", L.qr)


declare("geqrf", geqrf, out="exact")
declare("qr", qr_legacy, out="exact")


# =========================================================================== LDL^T
LDL_FACTOR = op("linalg_ldl_factor_ex", ("x",), rule=_factor_rule(("rows", _int32), ("batch", _int32)),
                reference=numpy_linalg.ldl_factor, kernel=tla.ldl_factor, outputs=("LD", "pivots", "info"))


class NotImplementedNode(Node):
    """torch's ``torch::autograd::NotImplemented``: the grad_fn of an op with no derivative
    formula; differentiating through it raises."""

    def __init__(self, message, next_functions):
        super().__init__()
        self.message = message
        self.next_functions = next_functions

    def apply(self, grads):
        raise RuntimeError(self.message)


NotImplementedNode.__name__ = "torch::autograd::NotImplemented"


def not_implemented_node(aten_name, inputs, outputs):
    """Attach torch's NotImplemented node to ``outputs`` when an input requires grad (and, as
    torch, refuse a dual input under forward AD)."""
    if _dual.ACTIVE[0] and _forward_ad.has_tangents(inputs):
        raise NotImplementedError(f"Trying to use forward AD with {aten_name} that does not support it.")
    if not L.needs_grad(*inputs):
        return outputs
    node = NotImplementedNode(f"derivative for {aten_name} is not implemented",
                              tuple(gradient_edge(t) for t in inputs))
    for i, o in enumerate(outputs):
        if o.dtype.is_floating_point:
            o._grad_fn, o._output_nr = node, i
    return outputs


def _ldl_factor(A, hermitian, api):
    L.check_square(api, A)
    L.check_floating(api, A)
    L.check_kernel_dtype(A, "ldl_factor_kernel_cpu")
    LD, pivots, info = dispatch(LDL_FACTOR, A, hermitian=bool(hermitian))
    not_implemented_node("aten::linalg_ldl_factor_ex", (A,), (LD, pivots, info))
    return LD, pivots, info


def ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    """torch.linalg.ldl_factor_ex: (LD, pivots, info), LAPACK's sytrf (Bunch-Kaufman): A =
    L D L^T with D block diagonal (1 x 1 and 2 x 2 blocks), L unit lower triangular, packed in
    LD's lower triangle; pivots in LAPACK's form (1-based, a negative pair for a 2 x 2 block);
    info > 0 where D has an exactly zero block."""
    L.check_tensor("linalg_ldl_factor_ex", A, "input", 1)
    LD, pivots, info = _ldl_factor(A, hermitian, "torch.linalg.ldl_factor_ex")
    if check_errors:
        L.check_errors(info, "torch.linalg.ldl_factor_ex", "ldl", A.dim() == 2)
    return L.linalg_ldl_factor_ex(LD, pivots, info)


def ldl_factor(A, *, hermitian=False):
    """torch.linalg.ldl_factor: (LD, pivots) of ldl_factor_ex, checked."""
    L.check_tensor("linalg_ldl_factor", A, "input", 1)
    LD, pivots, info = _ldl_factor(A, hermitian, "torch.linalg.ldl_factor_ex")
    L.check_errors(info, "torch.linalg.ldl_factor", "ldl", A.dim() == 2)
    return L.linalg_ldl_factor(LD, pivots)
