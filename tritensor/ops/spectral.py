"""Spectral decompositions (torch.linalg's eigh, eigvalsh, svd, svdvals and the legacy torch.svd)
and what is built on them: pinv / pinverse, matrix_rank, and the randomized svd_lowrank /
pca_lowrank (torch._lowrank's algorithms).

Two table entries, the primitives (NumPy reference in backends/numpy_spectral.py: LAPACK through
numpy.linalg; Triton launcher in backends/triton/linalg_spectral.py: Jacobi kernels):

    linalg_eigh   w, V^T, info        LinalgEighBackward0 (eigh, eigvalsh)
    linalg_svd    U^T, S, V, info     LinalgSvdBackward0 (svd, svdvals, torch.svd)

Their orthogonal factors are stored transposed (column-major, as LAPACK writes them) and handed
out as transposed aliases: eigenvectors, U and Vh have torch's strides. The public functions
give the outputs one node per call with torch's formula (linalg_eig_backward for Hermitian
input, svd_backward), written in tritensor ops so that create_graph differentiates them again.
When the input requires grad, eigvalsh and svdvals compute the vectors too (their gradient needs
them), as torch does.

Errors are torch's: shape and dtype checks first, then LinAlgError for input LAPACK fails on (a
NaN: see backends/numpy_spectral.py for the codes), naming the batch element.
"""
from __future__ import annotations

from .._autocast import autocast_policy as _autocast_policy

from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..backends import numpy_spectral
from ..backends.base import backend_for
from ..backends.triton import linalg_spectral as tls
from ..tensor import Tensor
from . import _linalg as L
from .factorizations import qr
from .solvers import _pinv_backward as _pinv_formula
from .creation import eye, full, randn, zeros
from .dispatch import dispatch
from .elementwise import where
from .surface import declare
from .table import Meta, op

linalg_eigh = L._return_type("linalg_eigh", ["eigenvalues", "eigenvectors"])
linalg_svd = L._return_type("linalg_svd", ["U", "S", "Vh"])
svd_type = L._return_type("svd", ["U", "S", "V"])


def _transposed_alias(t):
    """A tensor of its own (no view: ``t`` has no history and is dropped) over t's memory with
    its last two dims swapped: the column-major factor a primitive wrote as its transpose."""
    shape, strides = tuple(t._shape), tuple(t._stride)
    return Tensor._make(t._storage, shape[:-2] + (shape[-1], shape[-2]), strides[:-2] + (strides[-1], strides[-2]),
                        t._offset, t.dtype)


def _batch(t):
    return tuple(t.shape[:-2])


def _check_info(info, api, text, matrix_input):
    """torch's _linalg_check_errors for eigh / svd: a LinAlgError naming the first failing
    matrix ("(Batch element i)" for a batch); ``text(code)`` is torch's message."""
    if info.numel() == 0:
        return
    failure = L._first_failure(info)
    if failure is not None:
        i, code = failure
        where_ = "" if matrix_input else f": (Batch element {i})"
        raise L.LinAlgError(f"{api}{where_}: {text(code)}")


# =========================================================================== eigh
def _eigh_rule(a, *, lower, compute_v):
    n = a.shape[-1]
    batch = _batch(a)
    return (Meta(batch + (n,), a.dtype, a.dtype), Meta(batch + (n, n) if compute_v else (0,), a.dtype, a.dtype),
            Meta(batch, _dt.int32, a.dtype))


EIGH = op("linalg_eigh", ("a",), outputs=("eigenvalues", "eigenvectors", "info"), rule=_eigh_rule,
          reference=numpy_spectral.eigh, kernel=tls.eigh)


def _eigh_backward(node, gL, gV):
    """torch's linalg_eig_backward for Hermitian input: gA = V (diag(gL) + skew(V^H gV) / E) V^H
    with E_ij = L_j - L_i (1 on the diagonal); eigenvalues only: V diag(gL) V^H."""
    if gL is None and gV is None:
        return (None,)
    w, V = node.saved("eigenvalues"), node.saved("eigenvectors")
    if gV is None:
        return ((V * gL.unsqueeze(-2)) @ V.mT,)
    n = w.shape[-1]
    VhgV = V.mT @ gV
    VhgV = (VhgV - VhgV.mT) * 0.5
    E = w.unsqueeze(-2) - w.unsqueeze(-1) + eye(n, dtype=w.dtype, device=w.device)
    inner = VhgV / E
    if gL is not None:
        inner = inner + gL.diag_embed()
    return (V @ (inner @ V.mT),)


def _uplo(UPLO, fname):
    if not isinstance(UPLO, str):
        raise TypeError(f"{fname}(): argument 'UPLO' (position 2) must be str, not {type(UPLO).__name__}")
    if UPLO.upper() not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO.upper() == "L"


def _eigh_failure(code):
    return ("The algorithm failed to converge because the input matrix is ill-conditioned or has too many "
            f"repeated eigenvalues (error code: {code}).")


def _eigh(A, UPLO, want_vectors, fname):
    L.check_tensor(fname, A, "input", 1)
    L.check_square("linalg.eigh", A)
    lower = _uplo(UPLO, fname)
    L.check_kernel_dtype(A, "linalg_eigh_cpu")
    compute_v = bool(want_vectors) or L.needs_grad(A)
    n = A.shape[-1]
    if A.numel() == 0:
        w = zeros(_batch(A) + (n,), dtype=A.dtype, device=A.device)
        V = zeros(_batch(A) + (n, n), dtype=A.dtype, device=A.device)
    else:
        with no_grad():
            w, vt, info = dispatch(EIGH, A, lower=lower, compute_v=compute_v)
        _check_info(info, "linalg.eigh", _eigh_failure, A.dim() == 2)
        V = _transposed_alias(vt) if compute_v else None
    if compute_v:
        L.record_formula("LinalgEighBackward0", _eigh_backward, (A,), (w, V), save={"eigenvalues": w, "eigenvectors": V})
    return w, V


def eigh(A, UPLO="L"):
    """torch.linalg.eigh: (eigenvalues ascending, eigenvectors as columns) of the symmetric
    matrices read from A's lower ('L') or upper ('U') triangle. The vectors' signs are the
    backend's (LAPACK's on cpu, Jacobi's on cuda): unique only up to sign."""
    w, V = _eigh(A, UPLO, True, "linalg_eigh")
    return linalg_eigh(w, V)


def eigvalsh(A, UPLO="L"):
    """torch.linalg.eigvalsh: the eigenvalues of eigh, ascending."""
    return _eigh(A, UPLO, False, "linalg_eigvalsh")[0]


# =========================================================================== svd
def _svd_rule(a, *, full_matrices, compute_uv):
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = _batch(a)
    if compute_uv:
        ut = Meta(batch + ((m if full_matrices else k), m), a.dtype, a.dtype)
        v = Meta(batch + (n, (n if full_matrices else k)), a.dtype, a.dtype)
    else:
        ut = v = Meta((0,), a.dtype, a.dtype)
    return ut, Meta(batch + (k,), a.dtype, a.dtype), v, Meta(batch, _dt.int32, a.dtype)


SVD = op("linalg_svd", ("a",), outputs=("U", "S", "V", "info"), rule=_svd_rule, reference=numpy_spectral.svd,
         kernel=tls.svd)


def _svd_backward(node, gU, gS, gVh):
    """torch's svd_backward (the real case, Wan and Zhang's formula as derived by Townsend):
    with full_matrices only the first k columns of U and rows of Vh take part."""
    if gU is None and gS is None and gVh is None:
        return (None,)
    U, S, Vh = node.saved("U"), node.saved("S"), node.saved("Vh")
    k = S.shape[-1]
    if node.attrs["full_matrices"]:
        U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)
        gU = gU.narrow(-1, 0, k) if gU is not None else None
        gVh = gVh.narrow(-2, 0, k) if gVh is not None else None
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:
        return ((U @ (gS.unsqueeze(-1) * Vh)) if m >= n else ((U * gS.unsqueeze(-2)) @ Vh),)
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + eye(k, dtype=S.dtype, device=S.device)
    UhgU = VhgV = None
    if gU is not None:
        UhgU = U.mT @ gU
        UhgU = UhgU - UhgU.mT
    if gVh is not None:
        VhgV = Vh @ gVh.mT
        VhgV = VhgV - VhgV.mT
    if UhgU is not None and VhgV is not None:
        gA = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E
    elif UhgU is not None:
        gA = UhgU * (S.unsqueeze(-2) / E)
    else:
        gA = S.unsqueeze(-1) * (VhgV / E)
    if gS is not None:
        gA = gA + gS.diag_embed()
    if m > n and gU is not None:
        gA = U @ gA
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + gUSinv - U @ (U.mT @ gUSinv)
        gA = gA @ Vh
    elif m < n and gVh is not None:
        gA = gA @ Vh
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = gA + SinvgVh - (SinvgVh @ Vh.mT) @ Vh
        gA = U @ gA
    else:
        gA = U @ (gA @ Vh) if m >= n else (U @ gA) @ Vh
    return (gA,)


SVD_DRIVERS = ("gesvd", "gesvdj", "gesvda")
_SVD_DOC = "Check doc at https://pytorch.org/docs/stable/generated/torch.linalg.svd.html"


def _check_driver(A, driver):
    """torch: ``driver=`` is a cuSOLVER choice, refused for cpu input. On cuda every driver
    name torch accepts runs the same Jacobi kernels (cuSOLVER's default, gesvdj, is Jacobi too)."""
    if driver is None:
        return
    refusal = backend_for(A.device).torch_name(
        "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER backend.", None)
    if refusal:
        raise RuntimeError(refusal)
    if driver not in SVD_DRIVERS:
        raise RuntimeError(f"torch.linalg.svd: unknown svd driver {driver} in svd_cusolver computation. {_SVD_DOC}")


def _svd_failure(code):
    return "The algorithm failed to converge because the input matrix contained non-finite values."


def _identity_like(A, size):
    return eye(size, dtype=A.dtype, device=A.device).expand(_batch(A) + (size, size)).contiguous()


def _svd(A, full_matrices, want_uv, driver):
    L.check_matrix("linalg.svd", A)
    L.check_floating("linalg.svd", A)
    _check_driver(A, driver)
    L.check_kernel_dtype(A, "linalg_svd_cpu")
    compute_uv = bool(want_uv) or L.needs_grad(A)
    full_matrices = bool(full_matrices) and compute_uv
    m, n = A.shape[-2:]
    k = min(m, n)
    if A.numel() == 0:
        S = zeros(_batch(A) + (k,), dtype=A.dtype, device=A.device)
        if full_matrices:
            U, Vh = _identity_like(A, m), _identity_like(A, n)
        else:
            U = zeros(_batch(A) + (m, k), dtype=A.dtype, device=A.device)
            Vh = zeros(_batch(A) + (k, n), dtype=A.dtype, device=A.device)
    else:
        with no_grad():
            ut, S, v, info = dispatch(SVD, A, full_matrices=full_matrices, compute_uv=compute_uv)
        _check_info(info, "linalg.svd", _svd_failure, A.dim() == 2)
        U, Vh = (_transposed_alias(ut), _transposed_alias(v)) if compute_uv else (None, None)
    if compute_uv:
        L.record_formula("LinalgSvdBackward0", _svd_backward, (A,), (U, S, Vh), save={"U": U, "S": S, "Vh": Vh},
                         full_matrices=full_matrices)
    return U, S, Vh


def svd(A, full_matrices=True, *, driver=None):
    """torch.linalg.svd: (U, S, Vh) with A = U diag(S) Vh, S descending; U m x m and Vh n x n
    (full_matrices) or m x k and k x n. Singular vectors are unique only up to sign (LAPACK's on
    cpu, Jacobi's on cuda). ``driver`` is accepted on cuda only, as torch."""
    L.check_tensor("linalg_svd", A, "A", 1)
    return linalg_svd(*_svd(A, full_matrices, True, driver))


def svdvals(A, *, driver=None):
    """torch.linalg.svdvals: the singular values, descending."""
    L.check_tensor("linalg_svdvals", A, "A", 1)
    return _svd(A, False, False, driver)[1]


def svd_legacy(input, some=True, compute_uv=True):
    """torch.svd (deprecated): (U, S, V) with V = Vh^T (a view, TransposeBackward0); some=False
    gives the square factors; without compute_uv, U and V are zero matrices m x m and n x n."""
    L.check_tensor("svd", input, "input", 1)
    if input.dim() < 2:
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has {input.dim()} dimensions "
                           "instead")
    L.check_floating("linalg.svd", input)
    if compute_uv:
        U, S, Vh = _svd(input, not some, True, None)
        return svd_type(U, S, Vh.mT)
    S = _svd(input, False, False, None)[1]
    m, n = input.shape[-2:]
    return svd_type(zeros(_batch(input) + (m, m), dtype=input.dtype, device=input.device), S,
                    zeros(_batch(input) + (n, n), dtype=input.dtype, device=input.device))


declare("svd", svd_legacy, out="exact")


# =========================================================================== tolerances
def _epsilon(dtype):
    """torch's _get_epsilon: float32 and float64 only."""
    if dtype is _dt.float32:
        return float(_dt.finfo(_dt.float32).eps)
    if dtype is _dt.float64:
        return float(_dt.finfo(_dt.float64).eps)
    raise RuntimeError("This function doesn't handle types other than float and double")


def _as_tolerance(value, A):
    if value is None or isinstance(value, Tensor):
        return value
    return full((), float(value), dtype=_dt.float64, device=A.device)


def _atol_rtol(A, atol, rtol):
    """torch's get_atol_rtol: atol defaults to 0; rtol to eps * max(m, n), or 0 where atol > 0
    was given; float64 0-d tensors unless given as tensors."""
    atol, rtol = _as_tolerance(atol, A), _as_tolerance(rtol, A)
    given_atol = atol is not None
    if atol is None:
        atol = zeros((), dtype=_dt.float64, device=A.device)
    if rtol is None:
        default = _epsilon(A.dtype) * max(A.shape[-1], A.shape[-2])
        rtol = where(atol > 0, 0.0, default).to(_dt.float64) if given_atol else \
            full((), default, dtype=_dt.float64, device=A.device)
    return atol, rtol


def _threshold(atol, rtol, largest):
    return (atol.unsqueeze(-1)).maximum(rtol.unsqueeze(-1) * largest)


# =========================================================================== pinv
def _pinv_values(A, atol, rtol, hermitian):
    """torch's linalg_pinv: V diag(1/S) U^T over the singular values above max(atol, rtol * s_max)
    (|eigenvalues| of eigh for a symmetric input)."""
    if not hermitian:
        U, S, Vh = _svd(A, False, True, None)
        tol = _threshold(atol, rtol, S.narrow(-1, 0, 1)) if S.shape[-1] else None
        S_inv = where(S > tol, S.reciprocal(), 0.0).to(A.dtype) if tol is not None else S
        return (Vh.mT * S_inv.unsqueeze(-2)) @ U.mT
    w, V = _eigh(A, "L", True, "linalg_pinv")
    S_abs = w.abs()
    tol = _threshold(atol, rtol, S_abs.amax(-1, keepdim=True))
    S_inv = where(S_abs > tol, w.reciprocal(), 0.0).to(A.dtype)
    return (V * S_inv.unsqueeze(-2)) @ V.mT


def _pinv_backward(node, g):
    """torch's pinv_backward (solvers.py's, which lstsq's backward uses too)."""
    if g is None:
        return (None,)
    return (_pinv_formula(g, node.saved("pinv"), node.saved("A")),)


def _pinv(A, atol, rtol, hermitian):
    if A.dtype not in (_dt.float32, _dt.float64) or A.dim() < 2:
        raise RuntimeError(f"linalg.pinv({_dt.type_name(A.dtype)}{{{list(A.shape)}}}): expected a tensor with 2 or "
                           "more dimensions of float, double, cfloat or cdouble types")
    atol, rtol = _atol_rtol(A, atol, rtol)
    with no_grad():
        if A.numel() == 0:
            m, n = A.shape[-2:]
            X = zeros(_batch(A) + (n, m), dtype=A.dtype, device=A.device)
        else:
            X = _pinv_values(A, atol, rtol, bool(hermitian))
    X = L.fresh(X)
    return L.record_formula("LinalgPinvBackward0", _pinv_backward, (A,), (X,), save={"pinv": X, "A": A})[0]


@_autocast_policy("pinverse")
def pinv(input, rcond=None, hermitian=False, *, atol=None, rtol=None):
    """torch.linalg.pinv: the Moore-Penrose pseudo-inverse through the SVD (eigh with
    ``hermitian``), singular values at most max(atol, rtol * s_max) dropped; the deprecated
    ``rcond`` is rtol with atol = 0."""
    L.check_tensor("linalg_pinv", input, "input", 1)
    if rcond is not None:
        if atol is not None or rtol is not None:
            raise TypeError("linalg_pinv() received an invalid combination of arguments - got (Tensor, rcond, atol, "
                            "rtol), but expected one of:\n * (Tensor input, *, Tensor atol = None, Tensor rtol = None, "
                            "bool hermitian = False, Tensor out = None)\n * (Tensor input, float rcond, bool hermitian "
                            "= False, *, Tensor out = None)\n * (Tensor input, Tensor rcond, bool hermitian = False, "
                            "*, Tensor out = None)\n")
        return _pinv(input, 0.0, rcond, hermitian)
    return _pinv(input, atol, rtol, hermitian)


def pinverse(input, rcond=1e-15):
    """torch.pinverse / Tensor.pinverse: linalg.pinv(input, rcond)."""
    L.check_tensor("pinverse", input, "input", 1)
    return _pinv(input, 0.0, rcond, False)


declare("pinverse", pinverse)


# =========================================================================== matrix_rank
def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    """torch.linalg.matrix_rank: the number of singular values (|eigenvalues| with
    ``hermitian``) above max(atol, rtol * largest); the deprecated ``tol`` is atol with rtol = 0.
    int64, over A's batch; 0 for an empty matrix."""
    L.check_tensor("linalg_matrix_rank", A, "input", 1)
    if tol is not None:
        if atol is not None or rtol is not None:
            raise TypeError("linalg_matrix_rank() received an invalid combination of arguments - got (Tensor, tol, "
                            "atol, rtol), but expected one of:\n * (Tensor input, *, Tensor atol = None, Tensor rtol = "
                            "None, bool hermitian = False, Tensor out = None)\n * (Tensor input, float tol, bool "
                            "hermitian = False, *, Tensor out = None)\n * (Tensor input, Tensor tol, bool hermitian = "
                            "False, *, Tensor out = None)\n")
        atol, rtol = tol, 0.0
    if A.dim() < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    if A.numel() == 0:
        return zeros(_batch(A), dtype=_dt.int64, device=A.device)
    atol, rtol = _atol_rtol(A, atol, rtol)
    with no_grad():
        if hermitian:
            S = _eigh(A, "L", False, "linalg_matrix_rank")[0].abs()
            largest = S.amax(-1, keepdim=True)
        else:
            S = _svd(A, False, False, None)[1]
            largest = S.narrow(-1, 0, 1)
        return (S > _threshold(atol, rtol, largest)).sum(-1)


# =========================================================================== randomized low-rank SVD
def _approximate_basis(A, q, niter, M):
    """torch._lowrank.get_approximate_basis (Halko et al. 2009, algorithm 4.4): Q with q
    orthonormal columns whose span approximates A's (A - M's) range, by subspace iteration from
    a Gaussian start drawn from the default generator."""
    dtype = A.dtype if A.dtype.is_floating_point else _dt.float32
    R = randn(A.shape[-1], q, dtype=dtype, device=A.device)
    X = A @ R
    if M is not None:
        X = X - M @ R
    Q = qr(X).Q
    for _ in range(niter):
        X = A.mT @ Q
        if M is not None:
            X = X - M.mT @ Q
        Q = qr(X).Q
        X = A @ Q
        if M is not None:
            X = X - M @ Q
        Q = qr(X).Q
    return Q


def _svd_lowrank(A, q, niter, M):
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2:]
    if M is not None:
        M = M.expand(tuple(A.shape))
    if m < n:
        A = A.mT
        if M is not None:
            M = M.mT
    Q = _approximate_basis(A, q, niter, M)
    B = Q.mT @ A
    if M is not None:
        B = B - Q.mT @ M
    U, S, Vh = svd(B, full_matrices=False)
    V = Vh.mT
    U = Q @ U
    if m < n:
        U, V = V, U
    return U, S, V


def svd_lowrank(A, q=6, niter=2, M=None):
    """torch.svd_lowrank: an approximate (U, S, V) of A (A - M) of rank q, by Halko et al.'s
    randomized algorithm 5.1 (random draws from the default generator)."""
    L.check_tensor("svd_lowrank", A, "A", 1)
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """torch.pca_lowrank: svd_lowrank of A with its column means subtracted (``center``);
    q defaults to min(6, m, n)."""
    L.check_tensor("pca_lowrank", A, "A", 1)
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    C = A.mean(dim=(-2,), keepdim=True)
    return _svd_lowrank(A - C, q, niter, None)


declare("svd_lowrank", svd_lowrank, method=False)
declare("pca_lowrank", pca_lowrank, method=False)
