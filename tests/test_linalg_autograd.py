"""Gradients of the factorizations and solvers beyond tests/opinfo_linalg.py's cases (which run
gradcheck and gradgradcheck in float64 on cpu and on a real GPU): first derivatives on the
emulated device for cholesky, solve and det (the kernels the others build on), the determinant's gradient at singular
matrices, and the torch values the formulas must give where the function has a choice (a
symmetric gradient for Cholesky)."""
import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy
from tritensor.autograd import gradcheck

RNG = np.random.default_rng(11)


def R(device, *shape, shift=0.0):
    a = RNG.standard_normal(shape) + shift * np.eye(shape[-1])
    return tt.tensor(a, dtype=tt.float64, device=device, requires_grad=True)


CASES = {
    "cholesky": lambda d: (lambda x: tt.linalg.cholesky(x @ x.mT + tt.eye(2, dtype=tt.float64, device=d)),
                           (R(d, 2, 2),)),
    "solve": lambda d: (tt.linalg.solve, (R(d, 2, 2, shift=2), R(d, 2, 1))),
    "det": lambda d: (tt.linalg.det, (R(d, 2, 2),)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_first_derivatives_on_the_emulated_device(name):
    fn, inputs = CASES[name]("cuda")
    assert gradcheck(fn, inputs)


def test_det_gradient_at_singular_matrices_is_the_cofactor_matrix():
    """d det / dA = cof(A), also where det = 0 (torch 2.13 gives it with create_graph=True)."""
    device = "cpu"
    A = tt.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=tt.float64, device=device, requires_grad=True)
    tt.linalg.det(A).backward()
    assert np.allclose(to_numpy(A.grad), [[4.0, -2.0], [-2.0, 1.0]])
    B = tt.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]], dtype=tt.float64, device=device,
                  requires_grad=True)
    mixed = tt.stack([B, B.detach() + tt.eye(3, dtype=tt.float64, device=device)])
    g, = tt.autograd.grad(tt.linalg.det(mixed).sum(), B)
    cof = np.array([[-2.0, 4.0, -2.0], [1.0, -2.0, 1.0], [0.0, 0.0, 0.0]])   # cofactors of B
    assert np.allclose(to_numpy(g), cof)


def test_cholesky_gradient_is_symmetric_as_torchs():
    """torch's cholesky_backward returns the symmetric part: for A = [[4, 2], [2, 5]] and the
    loss sum(L), torch 2.13 gives [[0.1875, 0.125], [0.125, 0.25]]."""
    A = tt.tensor([[4.0, 2.0], [2.0, 5.0]], dtype=tt.float64, requires_grad=True)
    tt.linalg.cholesky(A).sum().backward()
    assert np.allclose(to_numpy(A.grad), [[0.1875, 0.125], [0.125, 0.25]])


def test_double_backward_records_linalg_nodes():
    A = R("cpu", 3, 3, shift=3)
    g, = tt.autograd.grad(tt.linalg.inv(A).sum(), A, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    gg, = tt.autograd.grad(g.sum(), A)
    assert gg.shape == (3, 3) and np.isfinite(to_numpy(gg)).all()
