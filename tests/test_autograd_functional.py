"""tt.autograd.functional against closed-form derivatives and torch 2.13's documented behaviour:
result shapes and tuple nesting, create_graph, strict mode and torch's error texts."""
import numpy as np
import pytest

import tritensor as tt
from tritensor.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp


def f64(values):
    return tt.tensor(values, dtype=tt.float64)


def arr(t):
    return t.detach().cpu().numpy()


X = [0.5, -1.25, 2.0]


def cube_sum(x):
    return (x ** 3).sum()


def test_jacobian_of_an_elementwise_map_is_its_diagonal_derivative():
    x = f64(X)
    np.testing.assert_allclose(arr(jacobian(lambda t: t.sin(), x)), np.diag(np.cos(X)), rtol=1e-12)


def test_jacobian_of_a_linear_map_is_its_matrix():
    a = np.arange(12.0).reshape(3, 4) - 5
    A = f64(a.tolist())
    jac = jacobian(lambda v: A @ v, f64([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(arr(jac), a)


def test_jacobian_shapes_follow_outputs_then_inputs():
    x = tt.ones(2, 3, dtype=tt.float64)
    y = tt.ones(4, dtype=tt.float64)
    jac = jacobian(lambda a, b: (a.sum(1), b * 2, a.sum() * b.sum()), (x, y))
    assert isinstance(jac, tuple) and len(jac) == 3 and all(len(row) == 2 for row in jac)
    assert [[tuple(j.shape) for j in row] for row in jac] == [
        [(2, 2, 3), (2, 4)], [(4, 2, 3), (4, 4)], [(2, 3), (4,)]]
    np.testing.assert_array_equal(arr(jac[1][1]), 2 * np.eye(4))
    np.testing.assert_array_equal(arr(jac[0][1]), np.zeros((2, 4)))     # independent: zeros
    np.testing.assert_array_equal(arr(jac[2][0]), np.full((2, 3), 4.0))  # d(sum a * sum b)/da = sum b


def test_jacobian_of_a_tuple_of_one_input_keeps_the_tuple():
    jac = jacobian(lambda a: a * 3, (f64(X),))
    assert isinstance(jac, tuple) and len(jac) == 1
    np.testing.assert_array_equal(arr(jac[0]), 3 * np.eye(3))


def test_hessian_of_a_quadratic_form_is_the_symmetrised_matrix():
    a = np.array([[2.0, 1.0, 0.0], [3.0, -1.0, 4.0], [0.5, 0.0, 1.0]])
    A = f64(a.tolist())
    h = hessian(lambda x: x @ A @ x, f64(X))
    np.testing.assert_allclose(arr(h), a + a.T, rtol=1e-12)


def test_hessian_of_two_inputs_is_a_tuple_of_tuples():
    # f(x, y) = sum(x**2 * y): H_xx = diag(2y), H_xy = diag(2x), H_yy = 0
    x, y = f64([1.0, 2.0]), f64([3.0, -1.0])
    h = hessian(lambda a, b: (a ** 2 * b).sum(), (x, y))
    np.testing.assert_allclose(arr(h[0][0]), np.diag([6.0, -2.0]))
    np.testing.assert_allclose(arr(h[0][1]), np.diag([2.0, 4.0]))
    np.testing.assert_allclose(arr(h[1][0]), np.diag([2.0, 4.0]))
    np.testing.assert_allclose(arr(h[1][1]), np.zeros((2, 2)))


def test_vjp_jvp_hvp_vhp_match_the_closed_forms():
    x, v = f64(X), f64([1.0, -2.0, 0.5])
    xs, vs = np.array(X), np.array([1.0, -2.0, 0.5])
    out, g = vjp(lambda t: t.exp(), x, v)
    np.testing.assert_allclose(arr(out), np.exp(xs), rtol=1e-12)
    np.testing.assert_allclose(arr(g), vs * np.exp(xs), rtol=1e-12)
    out, g = jvp(lambda t: t.exp().cumsum(0), x, v)          # J is lower-triangular
    np.testing.assert_allclose(arr(g), np.cumsum(vs * np.exp(xs)), rtol=1e-12)
    for product in (hvp, vhp):
        value, g = product(cube_sum, x, v)
        assert value.item() == pytest.approx(float((xs ** 3).sum()))
        np.testing.assert_allclose(arr(g), 6 * xs * vs, rtol=1e-12)


def test_hvp_and_vhp_agree_on_a_non_diagonal_hessian():
    x, v = f64(X), f64([0.3, 1.0, -1.0])
    fn = lambda t: (t.sin().sum()) * (t ** 2).sum()  # noqa: E731
    np.testing.assert_allclose(arr(hvp(fn, x, v)[1]), arr(vhp(fn, x, v)[1]), rtol=1e-12)
    np.testing.assert_allclose(arr(hvp(fn, x, v)[1]), arr(hessian(fn, x)) @ arr(v), rtol=1e-12)


def test_v_may_be_omitted_only_for_a_single_element():
    out, g = vjp(lambda t: (t * t).sum(), f64(X))
    np.testing.assert_allclose(arr(g), 2 * np.array(X))
    out, g = jvp(lambda t: t * t, f64([3.0]))
    assert g.tolist() == [6.0]
    with pytest.raises(RuntimeError, match="^The vector v can only be None if the user-provided function "
                       "returns a single Tensor with a single element.$"):
        vjp(lambda t: t * 2, f64(X))
    with pytest.raises(RuntimeError, match="^The vector v can only be None if the input to the user-provided "
                       "function is a single Tensor with a single element.$"):
        jvp(lambda t: t * 2, f64(X))


def test_results_carry_no_history_unless_create_graph():
    x = f64(X).requires_grad_()
    _, g = vjp(cube_sum, x)
    assert not g.requires_grad and g.grad_fn is None
    _, g = vjp(cube_sum, x, create_graph=True)
    assert g.requires_grad
    g.sum().backward()                           # d/dx sum(3 x^2) = 6 x
    np.testing.assert_allclose(arr(x.grad), 6 * np.array(X))
    h = hessian(cube_sum, x, create_graph=True)
    assert h.requires_grad


def test_inputs_are_not_modified_and_need_not_require_grad():
    x = f64(X)
    jacobian(lambda t: t * 2, x)
    assert not x.requires_grad and x.grad is None


def test_strict_mode_raises_torchs_errors():
    x, y = f64(X), f64([1.0, 1.0, 1.0])
    with pytest.raises(RuntimeError, match="^Output 0 of the user-provided function does not require gradients"):
        vjp(lambda t: tt.ones(3, dtype=tt.float64), x, y, strict=True)
    with pytest.raises(RuntimeError, match="^The output of the user-provided function is independent of input 1. "
                       "This is not allowed in strict mode.$"):
        vjp(lambda a, b: a * 2, (x, y), y, strict=True)
    with pytest.raises(RuntimeError, match="^Output 0 of the user-provided function is independent of input 1. "
                       "This is not allowed in strict mode.$"):
        jacobian(lambda a, b: a * 2, (x, y), strict=True)
    with pytest.raises(RuntimeError, match="^While computing the hessian, found that the jacobian of the "
                       "user-provided function with respect to input 0 is independent of the input"):
        hessian(lambda t: t.sum() * 2, x, strict=True)
    # not strict: the independent blocks are zeros
    np.testing.assert_array_equal(arr(hessian(lambda t: t.sum() * 2, x)), np.zeros((3, 3)))


def test_argument_errors_match_torch():
    with pytest.raises(TypeError, match="^The inputs given to jacobian must be either a Tensor or a tuple of "
                       "Tensors but the value at index 1 has type <class 'int'>.$"):
        jacobian(lambda a, b: a, (f64(X), 3))
    with pytest.raises(TypeError, match="^The outputs of the user-provided function given to vjp must be either "
                       "a Tensor or a tuple of Tensors but the given outputs of the user-provided function has "
                       "type <class 'float'>.$"):
        vjp(lambda a: 1.0, f64(X), f64(X))
    with pytest.raises(RuntimeError, match=r"^v has invalid size: should be tritensor.Size\(\[3\]\) but got "
                       r"tritensor.Size\(\[2\]\).$"):
        jvp(lambda t: t, f64(X), f64([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="^v is a tuple of invalid length: should be 2 but got 1.$"):
        jvp(lambda a, b: a + b, (f64(X), f64(X)), (f64(X),))
    with pytest.raises(RuntimeError, match="^The function given to hessian should return a single Tensor$"):
        hessian(lambda t: (t.sum(), t.sum()), f64(X))
    with pytest.raises(RuntimeError, match="^The Tensor returned by the function given to hvp should contain a "
                       "single element$"):
        hvp(lambda t: t * t, f64(X), f64(X))
    with pytest.raises(AssertionError, match='^Expected strategy to be either "forward-mode" or "reverse-mode"'):
        jacobian(lambda t: t, f64(X), strategy="sideways")
    with pytest.raises(NotImplementedError, match="^Computing Jacobian using forward-AD or forward-over-reverse "
                       "Hessian isonly implemented for `vectorize=True`.$"):    # (torch's text, sic)
        jacobian(lambda t: t, f64(X), strategy="forward-mode")
    with pytest.raises(RuntimeError, match="`strict=True` and `vectorized=True` are not supported together"):
        jacobian(lambda t: t, f64(X), strict=True, vectorize=True)


def test_vectorize_gives_the_same_jacobian():
    x = f64(X)
    fn = lambda t: (t.exp(), t.sum())  # noqa: E731
    for a, b in zip(jacobian(fn, x), jacobian(fn, x, vectorize=True)):
        np.testing.assert_array_equal(arr(a), arr(b))


def test_jacobian_on_cuda_matches_cpu():
    x = f64(X)
    fn = lambda t: t.tanh() * t.sum()  # noqa: E731
    t = np.tanh(np.array(X))
    expected = np.diag(1 - t ** 2) * sum(X) + t[:, None]     # d(tanh(x_i) * sum x)/dx_j
    np.testing.assert_allclose(arr(jacobian(fn, x)), expected, rtol=1e-12)
    np.testing.assert_allclose(arr(jacobian(fn, x.to("cuda"))), expected, rtol=1e-12)
