"""torch.linalg's solvers, inverses and determinants (ops/solvers.py): solve(_ex), inv(_ex),
det, slogdet, logdet, solve_triangular, triangular_solve, lu_solve, cholesky_solve,
cholesky_inverse, lstsq, tensorinv, tensorsolve. Checked by A X = B and hand-computed values;
error texts and output shapes are torch 2.13's, recorded here as literals.
"""
import math
import re
import warnings

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy

RNG = np.random.default_rng(77)
SINGULAR = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]]


def T(a, device="cpu", dtype=tt.float64):
    return tt.tensor(np.asarray(a), dtype=dtype, device=device)


def raises(exc, message):
    return pytest.raises(exc, match="^" + re.escape(message) + "$")


def well(n, batch=()):
    return RNG.standard_normal(batch + (n, n)) + n * np.eye(n)


# --------------------------------------------------------------------------- solve
def test_solve_shapes_and_broadcasting(device):
    A = well(3, (2,))
    for B, shape in ((RNG.standard_normal((4, 1, 3, 2)), (4, 2, 3, 2)),    # torch's broadcast
                     (RNG.standard_normal((2, 3)), (2, 3)),                 # batched vectors
                     (RNG.standard_normal(3), (2, 3))):                     # one vector
        X = tt.linalg.solve(T(A, device), T(B, device))
        assert tuple(X.shape) == shape
        Xm = to_numpy(X)
        vec = B.ndim == 1 or B.shape == A.shape[:-1]
        lhs = A @ (Xm[..., None] if vec else Xm)
        assert np.allclose(lhs, np.broadcast_to(B[..., None] if vec else B, lhs.shape))
    X = tt.linalg.solve(T(A, device), T(RNG.standard_normal((2, 4, 3)), device), left=False)
    assert X.shape == (2, 4, 3)
    Y = T(RNG.standard_normal((5, 3)), device)
    assert tt.linalg.solve(T(np.zeros((0, 3, 3)), device), T(np.zeros((0, 3, 1)), device)).shape == (0, 3, 1)
    assert tt.linalg.solve(T(np.zeros((2, 0, 0)), device), T(np.zeros((2, 0, 4)), device)).shape == (2, 0, 4)
    assert tt.linalg.solve_ex(T(A, device), Y.mT.contiguous()[..., :2]).info.shape == (2,)


def test_solve_singular_and_info(device):
    S = T(SINGULAR, device)
    with raises(tt.linalg.LinAlgError, "torch.linalg.solve: The solver failed because the input matrix is singular."):
        tt.linalg.solve(S, tt.ones(3, dtype=tt.float64, device=device))
    with raises(tt.linalg.LinAlgError, "torch.linalg.solve: (Batch element 1): The solver failed because the input "
                "matrix is singular."):
        tt.linalg.solve(tt.stack([tt.eye(3, dtype=tt.float64, device=device), S]), tt.ones(3, dtype=tt.float64,
                                                                                            device=device))
    res = tt.linalg.solve_ex(S, tt.ones(3, dtype=tt.float64, device=device))
    assert type(res).__name__ == "linalg_solve_ex" and int(res.info) == 3
    with raises(tt.linalg.LinAlgError, "torch.linalg.solve_ex: The solver failed because the input matrix is singular."):
        tt.linalg.solve_ex(S, tt.eye(3, dtype=tt.float64, device=device), check_errors=True)


def test_solve_errors():
    with raises(RuntimeError, "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 2x1)"):
        tt.linalg.solve(tt.eye(3), tt.ones(2))
    with raises(RuntimeError, "linalg.solve: Incompatible shapes of A and B for the equation XA = B (3x3 and 3x2)"):
        tt.linalg.solve(tt.eye(3), tt.ones(3, 2), left=False)
    with raises(RuntimeError, "linalg.solve: Expected A and B to have the same dtype, but found A of type Float and B "
                "of type Double instead"):
        tt.linalg.solve(tt.eye(3), tt.ones(3, dtype=tt.float64))
    with raises(RuntimeError, "linalg.solve: A must be batches of square matrices, but they are 3 by 2 matrices"):
        tt.linalg.solve(tt.ones(3, 2), tt.ones(2, 4))
    with raises(RuntimeError, "linalg.solve: Expected a floating point or complex tensor as input. Got Long"):
        tt.linalg.solve(tt.ones(3, 3, dtype=tt.int64), tt.ones(3, dtype=tt.int64))
    with raises(RuntimeError, "linalg.solve: The input tensor B must have at least 2 dimensions."):
        tt.linalg.solve(tt.eye(3), tt.tensor(1.0))
    with raises(RuntimeError, "linalg.solve: Vector broadcasting of the left hand side is not supported for left=False. "
                "In this case linalg.solve is equivalent to B / A.squeeze(-1)"):
        tt.linalg.solve(tt.ones(2, 1, 1), tt.ones(2, 1), left=False)
    with raises(NotImplementedError, "\"lu_cpu\" not implemented for 'Half'"):
        tt.linalg.solve(tt.ones(3, 3, dtype=tt.float16), tt.ones(3, dtype=tt.float16))
    with raises(TypeError, "linalg_solve(): argument 'B' (position 2) must be Tensor, not float"):
        tt.linalg.solve(tt.eye(3), 1.0)


# --------------------------------------------------------------------------- inverse
def test_inv(device):
    A = T([[2.0, 1.0], [7.0, 4.0]], device)                  # det 1: the inverse is [[4, -1], [-7, 2]]
    assert np.allclose(to_numpy(tt.linalg.inv(A)), [[4.0, -1.0], [-7.0, 2.0]])
    assert np.allclose(to_numpy(A.inverse()), [[4.0, -1.0], [-7.0, 2.0]])
    res = tt.linalg.inv_ex(T(SINGULAR, device))
    assert type(res).__name__ == "linalg_inv_ex" and int(res.info) == 3
    assert tt.linalg.inv(T(np.zeros((2, 0, 0)), device)).shape == (2, 0, 0)
    with raises(tt.linalg.LinAlgError, "linalg.inv: (Batch element 1): The diagonal element 3 is zero, the inversion "
                "could not be completed because the input matrix is singular."):
        tt.linalg.inv(tt.stack([tt.eye(3, dtype=tt.float64, device=device), T(SINGULAR, device)]))


def test_inv_errors():
    msg = "The diagonal element 3 is zero, the inversion could not be completed because the input matrix is singular."
    with raises(tt.linalg.LinAlgError, f"linalg.inv: {msg}"):
        tt.linalg.inv(T(SINGULAR))
    with raises(tt.linalg.LinAlgError, f"linalg.inv_ex: {msg}"):
        tt.linalg.inv_ex(T(SINGULAR), check_errors=True)
    with raises(tt.linalg.LinAlgError, f"linalg.inv: {msg}"):
        tt.inverse(T(SINGULAR))
    with raises(tt.linalg.LinAlgError, "linalg.inv: The diagonal element 1 is zero, the inversion could not be "
                "completed because the input matrix is singular."):
        tt.linalg.inv(tt.zeros(3, 3))
    with raises(RuntimeError, "linalg.inv: A must be batches of square matrices, but they are 3 by 2 matrices"):
        tt.linalg.inv(tt.ones(3, 2))
    with raises(RuntimeError, "linalg.inv: Expected a floating point or complex tensor as input. Got Long"):
        tt.linalg.inv(tt.ones(3, 3, dtype=tt.int64))
    with raises(RuntimeError, "linalg.inv: Low precision dtypes not supported. Got Half"):
        tt.linalg.inv(tt.ones(3, 3, dtype=tt.float16))
    with raises(TypeError, "linalg_inv(): argument 'A' (position 1) must be Tensor, not list"):
        tt.linalg.inv([[1.0]])


# --------------------------------------------------------------------------- determinants
def test_det_slogdet_logdet(device):
    A = T([[1.0, 2.0], [3.0, 4.0]], device)                  # det -2
    assert math.isclose(float(tt.linalg.det(A)), -2.0) and math.isclose(float(A.det()), -2.0)
    sign, logabsdet = tt.linalg.slogdet(A)
    assert float(sign) == -1.0 and math.isclose(float(logabsdet), math.log(2.0))
    assert type(tt.slogdet(A)).__name__ == "slogdet" and type(tt.linalg.slogdet(A)).__name__ == "linalg_slogdet"
    assert math.isnan(float(tt.logdet(A)))
    assert math.isclose(float(tt.logdet(T([[2.0, 1.0], [1.0, 3.0]], device))), math.log(5.0))
    S = T(SINGULAR, device)
    assert float(tt.linalg.det(S)) == 0.0
    sign, logabsdet = tt.linalg.slogdet(S)
    assert float(sign) == 0.0 and float(logabsdet) == -math.inf and float(tt.logdet(S)) == -math.inf
    empty = T(np.zeros((2, 0, 0)), device)
    assert to_numpy(tt.linalg.det(empty)).tolist() == [1.0, 1.0]
    sign, logabsdet = tt.linalg.slogdet(empty)
    assert to_numpy(sign).tolist() == [1.0, 1.0] and to_numpy(logabsdet).tolist() == [0.0, 0.0]
    P = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])     # a 3-cycle: det +1
    assert float(tt.linalg.det(T(P * 2, device))) == 8.0


def test_det_errors_and_nodes():
    with raises(RuntimeError, "linalg.det: A must be batches of square matrices, but they are 3 by 2 matrices"):
        tt.linalg.det(tt.ones(3, 2))
    with raises(RuntimeError, "linalg.det: The input tensor A must have at least 2 dimensions."):
        tt.det(tt.ones(3))
    with raises(RuntimeError, "linalg.det: Expected a floating point or complex tensor as input. Got Long"):
        tt.linalg.det(tt.ones(3, 3, dtype=tt.int64))
    with raises(NotImplementedError, "\"lu_cpu\" not implemented for 'Half'"):
        tt.linalg.det(tt.ones(3, 3, dtype=tt.float16))
    with raises(RuntimeError, "linalg.slogdet: Low precision dtypes not supported. Got Half"):
        tt.linalg.slogdet(tt.ones(3, 3, dtype=tt.float16))
    with raises(RuntimeError, "logdet: Expected a floating point or complex tensor as input. Got Int"):
        tt.logdet(tt.ones(2, 2, dtype=tt.int32))
    x = T(RNG.standard_normal((3, 3))).requires_grad_()
    assert tt.linalg.det(x).grad_fn.name() == "LinalgDetBackward0"
    sign, logabsdet = tt.linalg.slogdet(x)
    assert sign.grad_fn is logabsdet.grad_fn and sign.grad_fn.name() == "LinalgSlogdetBackward0"
    assert tt.logdet(x).grad_fn.name() == "WhereBackward0"


# --------------------------------------------------------------------------- triangular solves
def test_solve_triangular(device):
    U = np.triu(well(4)) + 3 * np.eye(4)
    B = RNG.standard_normal((2, 4, 3))
    X = to_numpy(tt.linalg.solve_triangular(T(U + np.tril(np.ones((4, 4)), -1), device), T(B, device), upper=True))
    assert np.allclose(U @ X, B)                             # the lower triangle is not read
    Xr = tt.linalg.solve_triangular(T(U.T, device), T(B, device).mT, upper=False, left=False, unitriangular=True)
    Lu = np.tril(U.T, -1) + np.eye(4)
    assert np.allclose(to_numpy(Xr) @ Lu, np.swapaxes(B, -1, -2))
    # torch reads B in A's dtype
    assert tt.linalg.solve_triangular(tt.eye(3), tt.ones(3, 2, dtype=tt.float64), upper=True).dtype is tt.float32
    x = T(U).requires_grad_()
    assert tt.linalg.solve_triangular(x, T(B), upper=True).grad_fn.name() == "LinalgSolveTriangularBackward0"


def test_triangular_solve_legacy(device):
    A = T([[2.0, 1.0, 1.0], [5.0, 1.0, 2.0], [7.0, 7.0, 4.0]], device)
    with pytest.warns(UserWarning, match="torch.triangular_solve is deprecated"):
        res = tt.triangular_solve(T(np.ones((3, 2)), device), A, transpose=True)
    # torch 2.13: the upper triangle, transposed: solution [[0.5, 0.5], [0.5, 0.5], [-0.125, -0.125]]
    assert to_numpy(res.solution).tolist() == [[0.5, 0.5], [0.5, 0.5], [-0.125, -0.125]]
    assert to_numpy(res.cloned_coefficient).tolist() == to_numpy(A).tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        batched = tt.triangular_solve(T(np.ones((2, 3, 2)), device), A)
        assert batched.cloned_coefficient.shape == (2, 3, 3)
        with raises(RuntimeError, "torch.triangular_solve: Expected b to have at least 2 dimensions, but it has 1 "
                    "dimensions instead"):
            tt.triangular_solve(tt.ones(3), tt.eye(3))
        with raises(RuntimeError, "Incompatible matrix sizes for triangular_solve: each A matrix is 3 by 3 but each b "
                    "matrix is 4 by 2"):
            tt.triangular_solve(tt.ones(4, 2), tt.eye(3))
        with raises(RuntimeError, "Expected b and A to have the same dtype, but found b of type Double and A of type "
                    "Float instead."):
            tt.triangular_solve(tt.ones(3, 2, dtype=tt.float64), tt.eye(3))


def test_solve_triangular_errors():
    with raises(RuntimeError, "linalg.solve_triangular: Incompatible shapes of A and B for the equation AX = B (3x3 and "
                "2x3)"):
        tt.linalg.solve_triangular(tt.eye(3), tt.ones(2, 3), upper=True)
    with raises(RuntimeError, "linalg.solve_triangular: A must be batches of square matrices, but they are 3 by 2 "
                "matrices"):
        tt.linalg.solve_triangular(tt.ones(3, 2), tt.ones(3, 2), upper=True)
    with raises(NotImplementedError, "\"triangular_solve_cpu\" not implemented for 'Long'"):
        tt.linalg.solve_triangular(tt.eye(3, dtype=tt.int64), tt.ones(3, 2), upper=True)
    with pytest.raises(TypeError):
        tt.linalg.solve_triangular(tt.eye(3), tt.ones(3, 2))          # upper is required


# --------------------------------------------------------------------------- LU and Cholesky solves
def test_lu_solve(device):
    A = well(4, (2,))
    LU, piv = tt.linalg.lu_factor(T(A, device))
    B = RNG.standard_normal((3, 1, 4, 2))
    assert np.allclose(A @ to_numpy(tt.linalg.lu_solve(LU, piv, T(B, device))), B)
    with pytest.warns(UserWarning, match="torch.lu_solve is deprecated"):
        X = tt.lu_solve(T(B[0], device), LU, piv)
    assert np.allclose(A @ to_numpy(X), B[0])


def test_lu_solve_errors():
    piv = tt.tensor([1, 2, 3], dtype=tt.int32)
    with raises(RuntimeError, "linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32"):
        tt.linalg.lu_solve(tt.eye(3), piv.long(), tt.ones(3, 2))
    with raises(RuntimeError, "linalg.lu_solve: The input tensor B must have at least 2 dimensions."):
        tt.linalg.lu_solve(tt.eye(3), piv, tt.ones(3))
    with raises(RuntimeError, "linalg.lu_solve: Number of pivots per batch should be same as the dimension of the "
                "matrix"):
        tt.linalg.lu_solve(tt.eye(3), piv[:2], tt.ones(3, 1))
    with raises(RuntimeError, "torch.linalg.lu_solve: A must be batches of square matrices, but they are 3 by 2 "
                "matrices"):
        tt.linalg.lu_solve(tt.ones(3, 2), piv[:2], tt.ones(3, 1))
    with raises(RuntimeError, "linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type Float and "
                "B of type Double instead"):
        tt.linalg.lu_solve(tt.eye(3), piv, tt.ones(3, 2, dtype=tt.float64))
    with raises(RuntimeError, "torch.linalg.lu_solve: Expected a floating point or complex tensor as input. Got Long"):
        tt.linalg.lu_solve(tt.eye(3, dtype=tt.int64), piv, tt.ones(3, 2, dtype=tt.int64))
    with raises(RuntimeError, "Pivots given to lu_solve must all be smaller or equal to LU.size(-2). Did you properly "
                "pass the result of lu_factor?"):
        tt.linalg.lu_solve(tt.eye(3), tt.tensor([1, 2, 5], dtype=tt.int32), tt.ones(3, 1))


def test_cholesky_solve_and_inverse(device):
    a = RNG.standard_normal((2, 3, 3))
    S = a @ np.swapaxes(a, -1, -2) + 3 * np.eye(3)
    Lf = tt.linalg.cholesky(T(S, device))
    B = RNG.standard_normal((2, 3, 2))
    assert np.allclose(S @ to_numpy(tt.cholesky_solve(T(B, device), Lf)), B)
    assert np.allclose(S @ to_numpy(tt.cholesky_solve(T(B, device), Lf.mT, upper=True)), B)
    assert np.allclose(to_numpy(tt.cholesky_inverse(Lf)) @ S, np.eye(3))
    assert np.allclose(to_numpy(Lf.mT.cholesky_inverse(upper=True)) @ S, np.eye(3))
    with raises(RuntimeError, "b should have at least 2 dimensions, but has 1 dimensions instead"):
        tt.cholesky_solve(tt.ones(3), tt.eye(3))
    with raises(RuntimeError, "Incompatible matrix sizes for cholesky_solve: each A matrix is 3 by 3 but each b matrix "
                "is 2 by 2"):
        tt.cholesky_solve(tt.ones(2, 2), tt.eye(3))
    with raises(RuntimeError, "cholesky_inverse: A must be batches of square matrices, but they are 3 by 2 matrices"):
        tt.cholesky_inverse(tt.ones(3, 2))
    with raises(NotImplementedError, "\"cholesky_solve_cpu\" not implemented for 'Half'"):
        tt.cholesky_solve(tt.ones(3, 2, dtype=tt.float16), tt.eye(3, dtype=tt.float16))
    x = Lf.detach().cpu().requires_grad_()
    assert tt.cholesky_solve(T(B), x).grad_fn.name() == "CholeskySolveBackward0"
    assert tt.cholesky_inverse(x).grad_fn.name() == "CholeskyInverseBackward0"


# --------------------------------------------------------------------------- least squares
def test_lstsq_gels(device):
    A = RNG.standard_normal((2, 6, 3))
    B = RNG.standard_normal((2, 6, 2))
    res = tt.linalg.lstsq(T(A, device), T(B, device), driver="gels")
    x = np.stack([np.linalg.lstsq(A[i], B[i], rcond=None)[0] for i in range(2)])
    assert np.allclose(to_numpy(res.solution), x)
    assert np.allclose(to_numpy(res.residuals), ((A @ x - B) ** 2).sum(-2))
    assert res.rank.shape == (0,) and res.rank.dtype is tt.int64 and res.singular_values.shape == (0,)
    W = RNG.standard_normal((3, 5))                          # underdetermined: the minimum-norm solution
    b = RNG.standard_normal(3)
    res = tt.linalg.lstsq(T(W, device), T(b, device), driver="gels")
    assert np.allclose(to_numpy(res.solution), np.linalg.pinv(W) @ b) and res.residuals.shape == (0,)


def test_lstsq_drivers():
    """cpu: gelsy (the default), gelsd, gelss: the minimum-norm solution, ranks, singular values;
    the output shapes are torch 2.13's."""
    A = RNG.standard_normal((1, 5, 3))
    A[0, :, 2] = A[0, :, 1]                                  # rank 2
    B = RNG.standard_normal((3, 5, 4))
    expected = np.linalg.pinv(A[0]) @ B
    shapes = {"gelsy": ((0,), (1,), (0,)), "gelsd": ((0,), (1,), (1, 3)), "gelss": ((0,), (1,), (1, 3))}
    for driver, (res_shape, rank_shape, sv_shape) in shapes.items():
        res = tt.linalg.lstsq(T(A), T(B), driver=driver)
        assert np.allclose(to_numpy(res.solution), expected), driver
        assert res.solution.shape == (3, 3, 4) and res.residuals.shape == res_shape
        assert res.rank.shape == rank_shape and to_numpy(res.rank).tolist() == [2]
        assert res.singular_values.shape == sv_shape
    full = RNG.standard_normal((5, 3))
    res = tt.linalg.lstsq(T(full), T(RNG.standard_normal(5)), driver="gelsd")
    assert res.residuals.shape == (1,) and res.solution.shape == (3,) and int(res.rank) == 3
    assert tt.linalg.lstsq(T(full), T(RNG.standard_normal((5, 2)))).residuals.shape == (0,)   # gelsy: none


def test_lstsq_errors():
    with raises(RuntimeError, "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"):
        tt.linalg.lstsq(tt.ones(5, 3), tt.ones(5, 2), driver="foo")
    with raises(RuntimeError, "torch.linalg.lstsq: input.size(-2) should match other.size(-2)"):
        tt.linalg.lstsq(tt.ones(5, 3), tt.ones(4, 2))
    with raises(RuntimeError, "torch.linalg.lstsq: input.size(-2) should match other.size(-1)"):
        tt.linalg.lstsq(tt.ones(3, 3), tt.ones(2))
    with raises(RuntimeError, "torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
                "(input.dim() - other.dim()) <= 1"):
        tt.linalg.lstsq(tt.ones(5, 3), tt.ones(2, 5, 2))
    with raises(RuntimeError, "torch.linalg.lstsq: input must have at least 2 dimensions."):
        tt.linalg.lstsq(tt.ones(3), tt.ones(3))
    with raises(RuntimeError, "torch.linalg.lstsq: other must have at least 1 dimension."):
        tt.linalg.lstsq(tt.ones(3, 3), tt.tensor(1.0))
    with raises(RuntimeError, "torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
                "dtype Long and other's dtype Float"):
        tt.linalg.lstsq(tt.ones(3, 3, dtype=tt.int64), tt.ones(3))
    with raises(RuntimeError, "This function doesn't handle types other than float and double"):
        tt.linalg.lstsq(tt.ones(3, 3, dtype=tt.float16), tt.ones(3, dtype=tt.float16))
    with raises(RuntimeError, "torch.linalg.lstsq: `driver` other than `gels` is not supported on CUDA"):
        tt.linalg.lstsq(tt.ones(5, 3, device="cuda"), tt.ones(5, 2, device="cuda"), driver="gelsd")
    x = T(RNG.standard_normal((4, 2))).requires_grad_()
    res = tt.linalg.lstsq(x, T(RNG.standard_normal((4, 2))), driver="gels")
    assert res.solution.grad_fn.name() == "LinalgLstsqBackward0" and res.rank.grad_fn is None


# --------------------------------------------------------------------------- tensorinv, tensorsolve
def test_tensorinv_tensorsolve():
    A = well(6).reshape(6, 2, 3)
    inv = tt.linalg.tensorinv(T(A), ind=1)
    assert inv.shape == (2, 3, 6)
    assert np.allclose(to_numpy(inv).reshape(6, 6) @ A.reshape(6, 6), np.eye(6))
    B = RNG.standard_normal((2, 3))
    A2 = well(6).reshape(2, 3, 6)
    X = tt.linalg.tensorsolve(T(A2), T(B))
    assert X.shape == (6,) and np.allclose(np.tensordot(A2, to_numpy(X), 1), B)
    X = tt.linalg.tensorsolve(T(np.moveaxis(A2, 2, 0)), T(B), dims=(0,))
    assert np.allclose(np.tensordot(A2, to_numpy(X), 1), B)
    with raises(RuntimeError, "Expected a strictly positive integer for 'ind', but got 0"):
        tt.linalg.tensorinv(tt.ones(2, 3, 6), ind=0)
    with raises(RuntimeError, "Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), "
                "but got 18 != 2"):
        tt.linalg.tensorinv(tt.ones(2, 3, 6), ind=1)
    with raises(tt.linalg.LinAlgError, "inv: The diagonal element 2 is zero, the inversion could not be completed "
                "because the input matrix is singular."):
        tt.linalg.tensorinv(tt.ones(2, 3, 6), ind=2)
    with raises(RuntimeError, "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                "prod(self.shape[:other.ndim]), but got 18 != 6"):
        tt.linalg.tensorsolve(tt.ones(2, 3, 6), tt.ones(6))
