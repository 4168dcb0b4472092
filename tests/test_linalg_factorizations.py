"""torch.linalg's factorizations (ops/factorizations.py): cholesky, lu, qr, ldl and their legacy
names. Values are checked by the properties that define them (L L^T = A, P L U = A, Q R = A with Q
orthonormal, L D L^T = A) and against torch 2.13's outputs recorded here as literals (pivots,
packed formats, the partial factor of a failed Cholesky, error texts). Parity with LAPACK (SciPy)
over dtypes and layouts is tests/opinfo_linalg.py's; the blocked large-matrix paths of the cuda
kernels run here with the size thresholds lowered.
"""
import warnings

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy
from tritensor.backends.triton import linalg as tla

RNG = np.random.default_rng(2024)


def T(a, device="cpu", dtype=tt.float64):
    return tt.tensor(np.asarray(a), dtype=dtype, device=device)


def spd(n, batch=()):
    a = RNG.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def raises(exc, message):
    return pytest.raises(exc, match="^" + __import__("re").escape(message) + "$")


# --------------------------------------------------------------------------- Cholesky
def test_cholesky_factor_and_info(device):
    S = spd(5, (2,))
    Lf = tt.linalg.cholesky(T(S, device))
    assert np.allclose(to_numpy(Lf) @ np.swapaxes(to_numpy(Lf), -1, -2), S)
    assert np.array_equal(to_numpy(Lf), np.tril(to_numpy(Lf)))
    U = tt.linalg.cholesky(T(S, device), upper=True)
    assert np.allclose(to_numpy(U), np.swapaxes(to_numpy(Lf), -1, -2))
    # torch 2.13: the failed matrix keeps its updated pivot (LAPACK's potrf), info = failing order
    bad = T([[[1.0, 2.0], [2.0, 1.0]], [[4.0, 2.0], [2.0, 5.0]]], device)
    L2, info = tt.linalg.cholesky_ex(bad)
    assert to_numpy(info).tolist() == [2, 0] and info.dtype is tt.int32
    assert to_numpy(L2)[0].tolist() == [[1.0, 0.0], [2.0, -3.0]]
    assert to_numpy(L2)[1].tolist() == [[2.0, 0.0], [1.0, 2.0]]


def test_cholesky_reads_one_triangle(device):
    A = T([[4.0, 1.0], [3.0, 2.0]], device)       # not symmetric: each call reads its own triangle
    with raises(tt.linalg.LinAlgError, "linalg.cholesky: The factorization could not be completed because the input "
                "is not positive-definite (the leading minor of order 2 is not positive-definite)."):
        tt.linalg.cholesky(A)
    U = to_numpy(tt.linalg.cholesky(A, upper=True))   # torch: [[2, 0.5], [0, 1.3229]]
    assert np.allclose(U, [[2.0, 0.5], [0.0, np.sqrt(1.75)]])


def test_cholesky_errors():
    S = T([[1.0, 2.0], [2.0, 1.0]])
    prefix = "The factorization could not be completed because the input is not positive-definite (the leading minor of order 2 is not positive-definite)."
    with raises(tt.linalg.LinAlgError, f"linalg.cholesky: (Batch element 1): {prefix}"):
        tt.linalg.cholesky(tt.stack([tt.eye(2, dtype=tt.float64), S]))
    with raises(tt.linalg.LinAlgError, f"linalg.cholesky_ex: {prefix}"):
        tt.linalg.cholesky_ex(S, check_errors=True)
    with pytest.warns(UserWarning, match="torch.cholesky is deprecated"):
        with raises(tt.linalg.LinAlgError, f"cholesky: {prefix}"):
            tt.cholesky(S)
    assert issubclass(tt.linalg.LinAlgError, RuntimeError)
    with raises(RuntimeError, "linalg.cholesky: A must be batches of square matrices, but they are 3 by 2 matrices"):
        tt.linalg.cholesky(tt.ones(3, 2))
    with raises(RuntimeError, "linalg.cholesky: The input tensor A must have at least 2 dimensions."):
        tt.linalg.cholesky(tt.ones(3))
    with raises(RuntimeError, "linalg.cholesky: Expected a floating point or complex tensor as input. Got Long"):
        tt.linalg.cholesky(tt.ones(2, 2, dtype=tt.int64))
    with raises(NotImplementedError, "\"cholesky_cpu\" not implemented for 'Half'"):
        tt.linalg.cholesky(tt.ones(2, 2, dtype=tt.float16))
    with raises(TypeError, "linalg_cholesky(): argument 'input' (position 1) must be Tensor, not list"):
        tt.linalg.cholesky([[1.0]])


def test_cholesky_empty_and_legacy(device):
    L0, info0 = tt.linalg.cholesky_ex(tt.zeros(0, 3, 3, device=device))
    assert L0.shape == (0, 3, 3) and info0.shape == (0,)
    L1, info1 = tt.linalg.cholesky_ex(tt.zeros(2, 0, 0, device=device))
    assert L1.shape == (2, 0, 0) and to_numpy(info1).tolist() == [0, 0]
    with pytest.warns(UserWarning):
        U = tt.cholesky(T(spd(3), device), upper=True)
    assert U.grad_fn is None and np.array_equal(to_numpy(U), np.triu(to_numpy(U)))
    x = T(spd(3), device).requires_grad_()
    with pytest.warns(UserWarning):
        assert tt.cholesky(x).grad_fn.name() == "CholeskyBackward0"
    assert tt.linalg.cholesky(x).grad_fn.name() == "LinalgCholeskyExBackward0"
    Lx, info = tt.linalg.cholesky_ex(x)
    assert info.grad_fn is None and not info.requires_grad


def test_cholesky_out_and_return_type():
    S = T(spd(3))
    out = tt.empty(3, 3, dtype=tt.float64)
    assert tt.linalg.cholesky(S, out=out) is out
    assert np.allclose(to_numpy(out) @ to_numpy(out).T, to_numpy(S))
    res = tt.linalg.cholesky_ex(S, out=(tt.empty(0, dtype=tt.float64), tt.empty(0, dtype=tt.int32)))
    assert type(res).__name__ == "linalg_cholesky_ex" and res.L.shape == (3, 3) and res.info.shape == ()
    with raises(RuntimeError, "Expected out tensor to have dtype float, but got double instead"):
        tt.linalg.cholesky(S.float(), out=tt.empty(3, 3, dtype=tt.float64))
    assert repr(tt.linalg.cholesky_ex(T([[4.0]]))).startswith("tritensor.return_types.linalg_cholesky_ex(\nL=")


# --------------------------------------------------------------------------- LU
SINGULAR = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]]


def test_lu_factor_of_a_singular_matrix_as_torch(device):
    LU, piv, info = tt.linalg.lu_factor_ex(T(SINGULAR, device))
    # torch 2.13 (LAPACK getrf): LU [[2, 4, 6], [0.5, -1, -2], [0.5, -0, 0]], pivots [2, 3, 3], info 3
    assert np.allclose(to_numpy(LU), [[2, 4, 6], [0.5, -1, -2], [0.5, 0, 0]])
    assert to_numpy(piv).tolist() == [2, 3, 3] and piv.dtype is tt.int32
    assert int(info) == 3


def test_lu_properties(device):
    for shape in ((2, 5, 5), (3, 6), (6, 4)):
        A = RNG.standard_normal(shape)
        P, Lf, U = tt.linalg.lu(T(A, device))
        P, Lf, U = to_numpy(P), to_numpy(Lf), to_numpy(U)
        assert np.allclose(P @ Lf @ U, A)
        k = min(shape[-2:])
        assert Lf.shape[-2:] == (shape[-2], k) and U.shape[-2:] == (k, shape[-1])
        assert np.allclose(np.diagonal(Lf, axis1=-2, axis2=-1), 1) and np.abs(Lf).max() <= 1 + 1e-12


def test_lu_unpack_as_torch():
    LU = T(RNG.standard_normal((4, 3)))
    P, Lf, U = tt.lu_unpack(LU, tt.tensor([2, 3, 3], dtype=tt.int32))
    # torch 2.13
    assert to_numpy(P).tolist() == [[0, 0, 1, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1]]
    assert np.allclose(to_numpy(Lf), np.tril(to_numpy(LU), -1) + np.eye(4, 3))
    assert np.allclose(to_numpy(U), np.triu(to_numpy(LU)[:3]))
    P, Lf, U = tt.lu_unpack(T(RNG.standard_normal((3, 4))), tt.tensor([2, 3, 3], dtype=tt.int32), unpack_data=False)
    assert P.shape == (3, 3) and Lf.shape == (0,) and U.shape == (0,)
    P, Lf, U = tt.lu_unpack(T(RNG.standard_normal((3, 4))), tt.tensor([2, 3, 3], dtype=tt.int32), unpack_pivots=False)
    assert P.shape == (0,) and Lf.shape == (3, 3) and U.shape == (3, 4)


def test_lu_errors():
    with raises(RuntimeError, "torch.linalg.lu_factor: U[3,3] is zero and using it on lu_solve would result in a "
                "division by zero. If you still want to perform the factorization, consider calling linalg.lu(A, "
                "pivot) or linalg.lu_factor_ex(A, pivot)"):
        tt.linalg.lu_factor(T(SINGULAR))
    with raises(RuntimeError, "torch.linalg.lu_factor: (Batch element 1): U[3,3] is zero and using it on lu_solve "
                "would result in a division by zero. If you still want to perform the factorization, consider "
                "calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"):
        tt.linalg.lu_factor(tt.stack([tt.eye(3, dtype=tt.float64), T(SINGULAR)]))
    with raises(RuntimeError, "torch.linalg.lu_factor_ex: U[3,3] is zero and using it on lu_solve would result in a "
                "division by zero. If you still want to perform the factorization, consider calling linalg.lu(A, "
                "pivot) or linalg.lu_factor_ex(A, pivot)"):
        tt.linalg.lu_factor_ex(T(SINGULAR), check_errors=True)
    with raises(RuntimeError, "torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: [3] instead"):
        tt.linalg.lu_factor(tt.ones(3))
    with raises(RuntimeError, "linalg.lu: Expected tensor with 2 or more dimensions. Got size: [3] instead"):
        tt.linalg.lu(tt.ones(3))
    with raises(RuntimeError, "linalg.lu_factor: LU without pivoting is not implemented on the CPU"):
        tt.linalg.lu_factor(tt.eye(3), pivot=False)
    with raises(NotImplementedError, "\"lu_cpu\" not implemented for 'Long'"):
        tt.linalg.lu_factor(tt.ones(3, 3, dtype=tt.int64))
    with raises(RuntimeError, "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: [3] instead"):
        tt.lu_unpack(tt.ones(3), tt.ones(3, dtype=tt.int32))
    with raises(RuntimeError, "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
                "dtype.\nNote: this function is intended to be used with the output produced by torch.linalg.lu_factor"):
        tt.lu_unpack(tt.eye(3), tt.tensor([1, 2, 3]))
    with raises(RuntimeError, "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive.Did you properly "
                "pass the result of lu_factor?"):
        tt.lu_unpack(tt.eye(3), tt.tensor([1, 2, 5], dtype=tt.int32))
    with raises(TypeError, "linalg_lu_factor(): argument 'A' (position 1) must be Tensor, not list"):
        tt.linalg.lu_factor([[1.0]])


def test_lu_without_pivoting_on_cuda():
    A = T([[1.0, 2.0], [3.0, 4.0]], "cuda")
    LU, piv = tt.linalg.lu_factor(A, pivot=False)
    assert np.allclose(to_numpy(LU), [[1, 2], [3, -2]]) and to_numpy(piv).tolist() == [1, 2]
    P, Lf, U = tt.linalg.lu(A, pivot=False)
    assert P.shape == (0,) and np.allclose(to_numpy(Lf) @ to_numpy(U), to_numpy(A))


def test_legacy_lu_and_nodes():
    A = T(RNG.standard_normal((3, 3))).requires_grad_()
    with pytest.warns(UserWarning, match="torch.lu is deprecated"):
        LU, piv = tt.lu(A)
    assert LU.grad_fn.name() == "LinalgLuFactorExBackward0" and piv.grad_fn is None
    with pytest.warns(UserWarning):
        res = A.detach().lu(get_infos=True)        # never raises, even for a singular matrix
    assert type(res).__name__ == "_lu_with_info" and len(res) == 3
    with pytest.warns(UserWarning):
        assert int(tt.lu(T(SINGULAR), get_infos=True).info) == 3
    P, Lf, U = tt.linalg.lu(A)
    assert P.grad_fn is None and Lf.grad_fn is U.grad_fn and U.grad_fn.name() == "LinalgLuBackward0"
    P, Lf, U = tt.lu_unpack(LU.detach().requires_grad_(), piv)
    assert P.grad_fn is None and Lf.grad_fn.name() == "LuUnpackBackward0"


# --------------------------------------------------------------------------- QR
def test_qr_modes(device):
    for shape in ((2, 5, 3), (3, 5)):
        A = RNG.standard_normal(shape)
        m, n = shape[-2:]
        k = min(m, n)
        for mode, q_cols, r_rows in (("reduced", k, k), ("complete", m, m)):
            Q, R = (to_numpy(t) for t in tt.linalg.qr(T(A, device), mode=mode))
            assert Q.shape[-2:] == (m, q_cols) and R.shape[-2:] == (r_rows, n)
            assert np.allclose(Q @ R, A)
            assert np.allclose(np.swapaxes(Q, -1, -2) @ Q, np.eye(q_cols))
            assert np.array_equal(R, np.triu(R))
        Q, R = tt.linalg.qr(T(A, device), mode="r")
        assert Q.shape == (0,) and np.allclose(np.abs(to_numpy(R)), np.abs(to_numpy(tt.linalg.qr(T(A, device))[1])))


def test_qr_errors_and_nodes():
    with raises(RuntimeError, "qr received unrecognized mode 'foo' but expected one of 'reduced' (default), 'r', "
                "or 'complete'"):
        tt.linalg.qr(tt.eye(3), mode="foo")
    with raises(RuntimeError, "linalg.qr: The input tensor A must have at least 2 dimensions."):
        tt.linalg.qr(tt.ones(3))
    with raises(RuntimeError, "linalg.qr: Expected a floating point or complex tensor as input. Got Long"):
        tt.linalg.qr(tt.ones(3, 3, dtype=tt.int64))
    with raises(NotImplementedError, "\"geqrf_cpu\" not implemented for 'Half'"):
        tt.linalg.qr(tt.ones(3, 3, dtype=tt.float16))
    x = T(RNG.standard_normal((3, 3))).requires_grad_()
    Q, R = tt.linalg.qr(x, mode="r")
    assert R.grad_fn.name() == "LinalgQrBackward0"
    with raises(RuntimeError, "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
                "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr."):
        R.sum().backward()
    Q, R = tt.linalg.qr(T(RNG.standard_normal((4, 3))).requires_grad_(), mode="complete")
    with raises(RuntimeError, "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."):
        (Q.sum() + R.sum()).backward()
    with pytest.warns(UserWarning, match="torch.qr is deprecated"):
        Q, R = tt.qr(x, some=False)
        assert type(tt.qr(x)).__name__ == "qr"
    assert Q.grad_fn.name() == "LinalgQrBackward0"


def test_geqrf_householder_ormqr(device):
    A = RNG.standard_normal((2, 5, 3))
    a, tau = tt.geqrf(T(A, device))
    assert type(tt.geqrf(T(A))).__name__ == "geqrf"
    Q = to_numpy(tt.linalg.householder_product(a, tau))
    R = np.triu(to_numpy(a)[..., :3, :])
    assert np.allclose(Q @ R, A)
    full = to_numpy(tt.orgqr(tt.cat([a, tt.zeros(2, 5, 2, dtype=tt.float64, device=device)], -1), tau))
    C = RNG.standard_normal((2, 5, 4))
    assert np.allclose(to_numpy(tt.ormqr(a, tau, T(C, device))), full @ C)
    assert np.allclose(to_numpy(tt.ormqr(a, tau, T(C, device), transpose=True)), np.swapaxes(full, -1, -2) @ C)
    D = RNG.standard_normal((2, 4, 5))
    assert np.allclose(to_numpy(tt.ormqr(a, tau, T(D, device), left=False)), D @ full)
    x = T(A).requires_grad_()
    a2, tau2 = tt.geqrf(x)
    assert a2.grad_fn.name() == "GeqrfBackward0" and tau2.grad_fn is a2.grad_fn
    with raises(NotImplementedError, "the derivative for 'geqrf' is not implemented."):
        a2.sum().backward()


def test_householder_and_ormqr_errors():
    with raises(RuntimeError, "torch.geqrf: input must have at least 2 dimensions."):
        tt.geqrf(tt.ones(3))
    with raises(RuntimeError, "torch.linalg.householder_product: input.shape[-2] must be greater than or equal to "
                "input.shape[-1]"):
        tt.linalg.householder_product(tt.ones(3, 4), tt.ones(3))
    with raises(RuntimeError, "torch.linalg.householder_product: input.shape[-1] must be greater than or equal to "
                "tau.shape[-1]"):
        tt.linalg.householder_product(tt.ones(4, 3), tt.ones(4))
    with raises(RuntimeError, "torch.linalg.householder_product: Expected tau to have one dimension less than input, "
                "but got tau.ndim equal to 2 and input.ndim is equal to 2"):
        tt.linalg.householder_product(tt.ones(4, 3), tt.ones(2, 3))
    with raises(RuntimeError, "torch.linalg.householder_product: tau dtype Double does not match input dtype Float"):
        tt.linalg.householder_product(tt.ones(4, 3), tt.ones(3, dtype=tt.float64))
    with raises(NotImplementedError, "\"orgqr_cpu\" not implemented for 'Long'"):
        tt.linalg.householder_product(tt.ones(4, 3, dtype=tt.int64), tt.ones(3, dtype=tt.int64))
    with raises(RuntimeError, "torch.ormqr: other.shape[-2] must be equal to input.shape[-2]"):
        tt.ormqr(tt.ones(4, 3), tt.ones(3), tt.ones(3, 2))
    with raises(RuntimeError, "torch.ormqr: other.shape[-1] must be equal to input.shape[-2]"):
        tt.ormqr(tt.ones(4, 3), tt.ones(3), tt.ones(4, 2), left=False)
    with raises(RuntimeError, "torch.ormqr: Expected input and other to have the same dtype, but input has dtypeFloat "
                "and other has dtype Double"):
        tt.ormqr(tt.ones(4, 3), tt.ones(3), tt.ones(4, 2, dtype=tt.float64))


# --------------------------------------------------------------------------- LDL^T
def test_ldl_factor_as_torch(device):
    A = T([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 3.0, 0.0]], device)
    LD, piv, info = tt.linalg.ldl_factor_ex(A)
    # torch 2.13 (LAPACK sytrf): a 2 x 2 pivot block with rows 2 and 3 exchanged
    assert np.allclose(to_numpy(LD), [[0, 0, 0], [2, 0, 0], [1.5, 0.5, -3]])
    assert to_numpy(piv).tolist() == [-3, -3, 3] and int(info) == 0
    X = tt.linalg.ldl_solve(LD, piv, T(np.eye(3), device))
    assert np.allclose(to_numpy(X) @ to_numpy(A), np.eye(3))
    S = RNG.standard_normal((2, 4, 4))
    S = S + np.swapaxes(S, -1, -2)
    LD, piv = tt.linalg.ldl_factor(T(S, device))
    B = RNG.standard_normal((2, 4, 2))
    assert np.allclose(S @ to_numpy(tt.linalg.ldl_solve(LD, piv, T(B, device))), B)


def test_ldl_errors_and_no_derivative():
    LD, piv, info = tt.linalg.ldl_factor_ex(tt.zeros(3, 3))
    assert int(info) == 1 and to_numpy(piv).tolist() == [1, 2, 3]
    with raises(RuntimeError, "torch.linalg.ldl_factor: Unknown error code: 1."):
        tt.linalg.ldl_factor(tt.zeros(3, 3))
    with raises(RuntimeError, "torch.linalg.ldl_factor_ex: A must be batches of square matrices, but they are 3 by 2 "
                "matrices"):
        tt.linalg.ldl_factor(tt.ones(3, 2))
    with raises(RuntimeError, "torch.linalg.ldl_factor_ex: Expected a floating point or complex tensor as input. Got Long"):
        tt.linalg.ldl_factor(tt.ones(3, 3, dtype=tt.int64))
    LD, piv = tt.linalg.ldl_factor(tt.eye(3))
    with raises(IndexError, "Dimension out of range (expected to be in range of [-1, 0], but got -2)"):
        tt.linalg.ldl_solve(LD, piv, tt.ones(3))
    with raises(RuntimeError, "Expected b and A to have the same dtype, but found b of type Double and A of type Float "
                "instead."):
        tt.linalg.ldl_solve(LD, piv, tt.ones(3, 2, dtype=tt.float64))
    with raises(RuntimeError, "torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the same, but got "
                "pivots with shape [2] instead"):
        tt.linalg.ldl_solve(LD, piv[:2], tt.ones(3, 2))
    with raises(RuntimeError, "torch.linalg.ldl_solve: Expected pivots to be integers. Got Float"):
        tt.linalg.ldl_solve(LD, tt.ones(3), tt.ones(3, 2))
    x = tt.eye(3, dtype=tt.float64, requires_grad=True)
    LD, piv = tt.linalg.ldl_factor(x * 2)
    assert LD.grad_fn.name() == "torch::autograd::NotImplemented"
    with raises(RuntimeError, "derivative for aten::linalg_ldl_factor_ex is not implemented"):
        LD.sum().backward()


# --------------------------------------------------------------------------- the blocked (large-matrix) kernels
@pytest.fixture
def blocked(monkeypatch):
    """The cuda paths for matrices past the one-program limit, reached with small matrices: at
    most 4 rows in registers, panels of 4 columns (the trailing updates are Triton matmuls)."""
    monkeypatch.setitem(tla.INTERPRETER, "small_n", 4)
    monkeypatch.setitem(tla.INTERPRETER, "panel", 4)
    monkeypatch.setitem(tla.GPU, "small_n", 4)
    monkeypatch.setitem(tla.GPU, "panel", 4)


def test_blocked_cholesky(blocked):
    S = spd(10, (2,))
    S[1, 6, 6] = -50.0                     # not positive definite from order 7 on (third panel)
    Lf, info = tt.linalg.cholesky_ex(T(S, "cuda"))
    assert to_numpy(info).tolist() == [0, 7]
    assert np.allclose(to_numpy(Lf)[0] @ to_numpy(Lf)[0].T, S[0])
    U = tt.linalg.cholesky(T(S[0], "cuda"), upper=True)
    assert np.allclose(to_numpy(U).T @ to_numpy(U), S[0])


def test_blocked_lu_and_solves(blocked):
    A = RNG.standard_normal((10, 10))
    LU, piv = tt.linalg.lu_factor(T(A, "cuda"))
    cpu_LU, cpu_piv = tt.linalg.lu_factor(T(A))
    assert np.allclose(to_numpy(LU), to_numpy(cpu_LU)) and np.array_equal(to_numpy(piv), to_numpy(cpu_piv))
    W = RNG.standard_normal((5, 9))
    P, Lf, U = tt.linalg.lu(T(W, "cuda"))
    assert np.allclose(to_numpy(P) @ to_numpy(Lf) @ to_numpy(U), W)
    B = RNG.standard_normal((10, 3))
    assert np.allclose(A @ to_numpy(tt.linalg.solve(T(A, "cuda"), T(B, "cuda"))), B)
    assert np.allclose(A.T @ to_numpy(tt.linalg.lu_solve(LU, piv, T(B, "cuda"), adjoint=True)), B)
    assert np.allclose(to_numpy(tt.linalg.inv(T(A, "cuda"))) @ A, np.eye(10))
    X = tt.linalg.solve_triangular(T(np.triu(A) + 5 * np.eye(10), "cuda"), T(B, "cuda"), upper=True)
    assert np.allclose((np.triu(A) + 5 * np.eye(10)) @ to_numpy(X), B)


def test_inputs_are_left_unchanged(device):
    """The factorizations work on copies: a single matrix, or a batch of one, whose batch-last
    working layout is a view of the input's memory, must not be written through."""
    for shape in ((3, 3), (1, 3, 3), (3, 1, 1)):
        A = T(spd(shape[-1], shape[:-2]), device)
        B = T(RNG.standard_normal(shape[:-1] + (2,)), device)
        before, b_before = to_numpy(A).copy(), to_numpy(B).copy()
        LU, piv = tt.linalg.lu_factor(A)
        tt.linalg.cholesky(A)
        tt.linalg.solve(A, B)
        tt.linalg.inv(A)
        tt.linalg.det(A)
        tt.linalg.solve_triangular(A, B, upper=False)
        tt.linalg.lu_solve(LU, piv, B)
        tt.linalg.qr(A)
        tt.linalg.ldl_factor(A)
        assert np.array_equal(to_numpy(A), before) and np.array_equal(to_numpy(B), b_before), shape
