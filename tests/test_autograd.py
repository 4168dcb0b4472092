"""Autograd: the graph, the engine, grad mode, hooks, custom Functions and gradcheck, on cpu and
on cuda; gradients are checked against hand-derived values."""
import math
import time

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy

RNG = np.random.default_rng(1234)


def leaf(values, device, dtype=tt.float64):
    return tt.tensor(values, dtype=dtype, device=device, requires_grad=True)


def const(values, device, dtype=tt.float64):
    return tt.tensor(values, dtype=dtype, device=device)


# ----------------------------------------------------------------------------- graph structure
def test_requires_grad_propagation(device):
    x = leaf([1.0, 2.0], device)
    c = const([3.0, 4.0], device)
    assert x.requires_grad and x.is_leaf and x.grad_fn is None
    assert not c.requires_grad and c.is_leaf
    y = x * c
    assert y.requires_grad and not y.is_leaf and y.grad_fn is not None
    z = c * 2 + c
    assert not z.requires_grad and z.is_leaf and z.grad_fn is None
    w = (y + z).sum()
    assert w.requires_grad and not w.is_leaf
    # comparisons and integer results never require grad
    assert not (x > 1).requires_grad
    assert not x.long().requires_grad
    assert x.double().requires_grad


GRAD_FN_NAMES = [
    ("AddBackward0", lambda x, y: x + y),
    ("AddBackward0", lambda x, y: x + 1),
    ("AddBackward0", lambda x, y: 1 + x),
    ("SubBackward0", lambda x, y: x - y),
    ("MulBackward0", lambda x, y: x * y),
    ("MulBackward0", lambda x, y: x * 2),
    ("DivBackward0", lambda x, y: x / y),
    ("NegBackward0", lambda x, y: -x),
    ("PowBackward0", lambda x, y: x ** 2),
    ("PowBackward1", lambda x, y: x ** y),
    ("ExpBackward0", lambda x, y: x.exp()),
    ("LogBackward0", lambda x, y: x.log()),
    ("SinBackward0", lambda x, y: x.sin()),
    ("CosBackward0", lambda x, y: tt.cos(x)),
    ("TanhBackward0", lambda x, y: x.tanh()),
    ("SigmoidBackward0", lambda x, y: x.sigmoid()),
    ("ReluBackward0", lambda x, y: x.relu()),
    ("SqrtBackward0", lambda x, y: x.sqrt()),
    ("AbsBackward0", lambda x, y: x.abs()),
    ("MaximumBackward0", lambda x, y: tt.maximum(x, y)),
    ("WhereBackward0", lambda x, y: tt.where(x > 0, x, y)),
    ("SumBackward0", lambda x, y: x.sum()),
    ("SumBackward1", lambda x, y: x.sum(0)),
    ("ViewBackward0", lambda x, y: x.view(3, 2)),
    ("ViewBackward0", lambda x, y: x.reshape(-1)),
    ("ViewBackward0", lambda x, y: x.flatten()),
    ("PermuteBackward0", lambda x, y: x.permute(1, 0)),
    ("TransposeBackward0", lambda x, y: x.transpose(0, 1)),
    ("TBackward0", lambda x, y: x.t()),
    ("ExpandBackward0", lambda x, y: x[:1].expand(4, 3)),
    ("UnsqueezeBackward0", lambda x, y: x.unsqueeze(0)),
    ("SqueezeBackward0", lambda x, y: x[:1].squeeze()),
    ("SliceBackward0", lambda x, y: x[:, 1:]),
    ("SliceBackward0", lambda x, y: x.narrow(1, 0, 2)),
    ("SelectBackward0", lambda x, y: x[0]),
    ("SelectBackward0", lambda x, y: x.select(1, 2)),
    ("CloneBackward0", lambda x, y: x.clone()),
    ("ToCopyBackward0", lambda x, y: x.float()),
]


@pytest.mark.parametrize("name,fn", GRAD_FN_NAMES,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(GRAD_FN_NAMES)])
def test_grad_fn_names(device, name, fn):
    x = leaf([[0.5, 1.0, 2.0], [1.5, 2.5, 3.0]], device)
    y = leaf([[1.0, 2.0, 0.5], [2.0, 1.0, 0.25]], device)
    out = fn(x, y)
    assert out.grad_fn is not None
    assert out.grad_fn.name() == name
    assert repr(out.grad_fn).startswith(f"<{name} object at 0x")


def test_to_device_grad_fn_name():
    x = leaf([1.0, 2.0], "cpu")
    assert x.cuda().grad_fn.name() == "ToCopyBackward0"
    assert x.to("cuda").cpu().grad_fn.name() == "ToCopyBackward0"


def test_next_functions_structure(device):
    x = leaf([1.0, 2.0], device)
    y = leaf([3.0, 4.0], device)
    z = x * y + x
    add = z.grad_fn
    assert add.name() == "AddBackward0"
    assert len(add.next_functions) == 2
    (mul, mul_nr), (acc_x, acc_nr) = add.next_functions
    assert mul.name() == "MulBackward0" and mul_nr == 0
    assert acc_x.name() == "AccumulateGrad" and acc_nr == 0
    assert acc_x.variable is x
    (a0, n0), (a1, n1) = mul.next_functions
    assert a0 is acc_x                  # one accumulator per leaf, shared by every use
    assert a1.name() == "AccumulateGrad" and a1.variable is y
    assert (n0, n1) == (0, 0)
    # operands that do not require grad have no edge
    s = x * 2
    assert s.grad_fn.next_functions[0][0] is acc_x
    assert s.grad_fn.next_functions[1] == (None, 0)
    c = x * const([1.0, 1.0], device)
    assert c.grad_fn.next_functions[1] == (None, 0)
    # the chain continues through non-leaf inputs
    e = z.exp()
    assert e.grad_fn.next_functions[0][0] is add


# ----------------------------------------------------------------------------- backward basics
def test_grad_accumulates_over_backward_calls(device):
    x = leaf([1.0, -2.0, 3.0], device)
    (x * x).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [2.0, -4.0, 6.0])
    (x * x).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [4.0, -8.0, 12.0])
    assert x.grad.device == x.device and x.grad.dtype is x.dtype and not x.grad.requires_grad
    x.grad = None
    (x * 3).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [3.0, 3.0, 3.0])
    x.grad.zero_()
    (x * 5).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [5.0, 5.0, 5.0])


def test_leaf_grad_is_a_dense_tensor_of_its_own(device):
    # torch's AccumulateGrad stores a fresh tensor laid out like the parameter
    # (clone_obey_contract), never an expanded or transposed view of the incoming gradient
    x = leaf(np.zeros((2, 3)), device)
    x.sum().backward()                          # the incoming gradient is ones expanded (stride 0)
    assert x.grad.stride() == x.stride() == (3, 1)
    assert x.grad.is_contiguous()
    with tt.no_grad():
        x.grad.add_(const([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device))   # what an optimizer does
    np.testing.assert_allclose(to_numpy(x.grad), [[2.0, 3.0, 4.0], [5.0, 6.0, 7.0]])
    x.grad[0, 0].fill_(-1.0)
    assert to_numpy(x.grad)[1, 2] == 7.0
    y = leaf(np.zeros((3, 2)), device)
    (y.t() * const(np.ones((2, 3)), device)).sum().backward()    # arrives transposed
    assert y.grad.stride() == y.stride() == (2, 1)


def test_gradients_do_not_alias_each_other_or_the_seed(device):
    x = leaf([0.0, 0.0, 0.0], device)
    y = leaf([0.0, 0.0, 0.0], device)
    g = const([1.0, 2.0, 3.0], device)
    (x + y).backward(g)                         # AddBackward0 hands the same gradient to both
    assert x.grad.data_ptr() != y.grad.data_ptr()
    assert x.grad.data_ptr() != g.data_ptr() and y.grad.data_ptr() != g.data_ptr()
    x.grad.zero_()
    np.testing.assert_allclose(to_numpy(y.grad), [1.0, 2.0, 3.0])
    np.testing.assert_allclose(to_numpy(g), [1.0, 2.0, 3.0])
    z = leaf([0.0, 0.0, 0.0], device)
    z.backward(g)                               # a leaf as the root
    assert z.grad.data_ptr() != g.data_ptr()
    g.fill_(9.0)
    np.testing.assert_allclose(to_numpy(z.grad), [1.0, 2.0, 3.0])


def test_assigning_grad_is_checked(device):
    x = leaf([1.0, 2.0], device)
    with pytest.raises(RuntimeError, match="assigned grad has data of a different size"):
        x.grad = const([1.0, 2.0, 3.0], device)
    with pytest.raises(RuntimeError, match="assigned grad has data of a different type"):
        x.grad = const([1.0, 2.0], device, dtype=tt.float32)
    other = "cpu" if device == "cuda" else "cuda"
    with pytest.raises(RuntimeError, match="assigned grad has data located on a different device"):
        x.grad = const([1.0, 2.0], other)
    x.grad = const([5.0, 6.0], device)
    (x * 1).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [6.0, 7.0])


def test_diamond_graph_sums_both_paths(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    z = (y * y + y).sum()               # dz/dx = (2y + 1) * 2
    z.backward()
    np.testing.assert_allclose(to_numpy(x.grad), (2 * np.array([2.0, 4.0]) + 1) * 2)


def test_backward_with_gradient_argument(device):
    x = leaf([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device)
    g = np.array([[1.0, 0.5, -1.0], [2.0, 0.0, 3.0]])
    y = x * 3
    y.backward(gradient=const(g, device))
    np.testing.assert_allclose(to_numpy(x.grad), 3 * g)
    x.grad = None
    z = x.exp()
    tt.autograd.backward(z, const(g, device))
    np.testing.assert_allclose(to_numpy(x.grad), g * np.exp(to_numpy(x)))
    x.grad = None
    (x * x).backward(const(g, device))      # positional
    np.testing.assert_allclose(to_numpy(x.grad), 2 * g * to_numpy(x))
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(const([1.0, 2.0], device))


def test_implicit_gradient_needs_a_scalar(device):
    x = leaf([1.0, 2.0], device)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    # a one-element tensor of any shape is fine
    (x[:1] * 2).view(1, 1).backward()
    np.testing.assert_allclose(to_numpy(x.grad), [2.0, 0.0])


def test_backward_twice_needs_retain_graph(device):
    x = leaf([0.5, 1.0], device)
    y = x.exp().sum()                     # ExpBackward0 saves its output
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    x.grad = None
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(to_numpy(x.grad), 4 * to_numpy(x))


def test_backward_twice_without_saved_tensors_is_allowed(device):
    # torch only complains when a freed saved tensor is needed; add and sum save nothing
    x = leaf([0.5, 1.0], device)
    y = (x + 1).sum()
    y.backward()
    y.backward()
    np.testing.assert_allclose(to_numpy(x.grad), [2.0, 2.0])


def test_backward_of_tensor_without_grad_raises(device):
    c = const([1.0, 2.0], device)
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        c.sum().backward()
    x = leaf([1.0], device)
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a grad_fn"):
        tt.autograd.grad(c.sum(), x)


def test_backward_inputs_restricts_accumulation(device):
    x = leaf([1.0, 2.0], device)
    y = leaf([3.0, 4.0], device)
    (x * y).sum().backward(inputs=[x])
    np.testing.assert_allclose(to_numpy(x.grad), [3.0, 4.0])
    assert y.grad is None


# ----------------------------------------------------------------------------- autograd.grad
def test_autograd_grad_with_grad_outputs(device):
    x = leaf([1.0, 2.0, 3.0], device)
    y = leaf([-1.0, 0.5, 2.0], device)
    z = x * y
    g = const([1.0, 10.0, 100.0], device)
    gx, gy = tt.autograd.grad(z, (x, y), grad_outputs=g)
    np.testing.assert_allclose(to_numpy(gx), [-1.0, 5.0, 200.0])
    np.testing.assert_allclose(to_numpy(gy), [1.0, 20.0, 300.0])
    assert x.grad is None and y.grad is None      # grad() does not touch .grad
    assert not gx.requires_grad


def test_autograd_grad_of_intermediate(device):
    x = leaf([1.0, 2.0], device)
    h = x * 3
    out = (h * h).sum()
    (gh,) = tt.autograd.grad(out, h)
    np.testing.assert_allclose(to_numpy(gh), 2 * np.array([3.0, 6.0]))


def test_autograd_grad_allow_unused(device):
    x = leaf([1.0, 2.0], device)
    u = leaf([5.0], device)
    out = (x * 2).sum()
    gx, gu = tt.autograd.grad(out, (x, u), allow_unused=True, retain_graph=True)
    np.testing.assert_allclose(to_numpy(gx), [2.0, 2.0])
    assert gu is None
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors appears to not have been used in the graph"):
        tt.autograd.grad(out, (x, u), retain_graph=True)
    gx, gu = tt.autograd.grad(out, (x, u), materialize_grads=True)
    np.testing.assert_allclose(to_numpy(gu), [0.0])


def test_autograd_grad_input_must_require_grad(device):
    x = leaf([1.0], device)
    c = const([1.0], device)
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require grad"):
        tt.autograd.grad((x * c).sum(), c)


SECOND_DERIVATIVES = [
    ("cube", lambda x: x ** 3, lambda a: 3 * a ** 2, lambda a: 6 * a),
    ("x*x*x", lambda x: x * x * x, lambda a: 3 * a ** 2, lambda a: 6 * a),
    ("sin", lambda x: x.sin(), np.cos, lambda a: -np.sin(a)),
    ("cos", lambda x: x.cos(), lambda a: -np.sin(a), lambda a: -np.cos(a)),
    ("exp", lambda x: (x * 2).exp(), lambda a: 2 * np.exp(2 * a), lambda a: 4 * np.exp(2 * a)),
    ("tanh", lambda x: x.tanh(), lambda a: 1 - np.tanh(a) ** 2,
     lambda a: -2 * np.tanh(a) * (1 - np.tanh(a) ** 2)),
    ("sigmoid", lambda x: x.sigmoid(), lambda a: _sig(a) * (1 - _sig(a)),
     lambda a: _sig(a) * (1 - _sig(a)) * (1 - 2 * _sig(a))),
    ("log", lambda x: (x * x + 1).log(), lambda a: 2 * a / (a * a + 1),
     lambda a: (2 - 2 * a * a) / (a * a + 1) ** 2),
    ("reciprocal", lambda x: 1 / (x + 3), lambda a: -1 / (a + 3) ** 2, lambda a: 2 / (a + 3) ** 3),
    ("sqrt", lambda x: (x * x + 1).sqrt(), lambda a: a / np.sqrt(a * a + 1), lambda a: (a * a + 1) ** -1.5),
]


def _sig(a):
    return 1 / (1 + np.exp(-a))


@pytest.mark.parametrize("name,f,d1,d2", SECOND_DERIVATIVES, ids=[p[0] for p in SECOND_DERIVATIVES])
def test_second_derivatives_with_create_graph(device, name, f, d1, d2):
    a = np.array([0.5, -1.25, 2.0])
    x = leaf(a, device)
    (g,) = tt.autograd.grad(f(x).sum(), x, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    np.testing.assert_allclose(to_numpy(g), d1(a), rtol=1e-10, atol=1e-12)
    (gg,) = tt.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(to_numpy(gg), d2(a), rtol=1e-10, atol=1e-12)


def test_third_derivative_and_backward_create_graph(device):
    a = np.array([0.5, -2.0])
    x = leaf(a, device)
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad.requires_grad                       # the gradient is itself differentiable
    np.testing.assert_allclose(to_numpy(x.grad), 3 * a ** 2)
    (g2,) = tt.autograd.grad(x.grad.sum(), x, create_graph=True)
    np.testing.assert_allclose(to_numpy(g2), 6 * a)
    (g3,) = tt.autograd.grad(g2.sum(), x)
    np.testing.assert_allclose(to_numpy(g3), [6.0, 6.0])


def test_mixed_partial_derivative(device):
    x = leaf([1.5, -2.0], device)
    y = leaf([0.5, 3.0], device)
    f = (x * x * y).sum()                   # d2f/dxdy = 2x
    (gx,) = tt.autograd.grad(f, x, create_graph=True)
    (gxy,) = tt.autograd.grad(gx.sum(), y)
    np.testing.assert_allclose(to_numpy(gxy), [3.0, -4.0])


# ----------------------------------------------------------------------------- grad mode
def test_no_grad_context(device):
    x = leaf([1.0, 2.0], device)
    assert tt.is_grad_enabled()
    with tt.no_grad():
        assert not tt.is_grad_enabled()
        y = x * 2
        assert not y.requires_grad and y.grad_fn is None
        with tt.enable_grad():
            assert tt.is_grad_enabled()
            z = x * 2
            assert z.requires_grad and z.grad_fn.name() == "MulBackward0"
        assert not tt.is_grad_enabled()
    assert tt.is_grad_enabled()
    np.testing.assert_allclose(to_numpy(y), [2.0, 4.0])


def test_grad_mode_restored_after_exception(device):
    with pytest.raises(ValueError):
        with tt.no_grad():
            raise ValueError
    assert tt.is_grad_enabled()


def test_grad_mode_decorators(device):
    x = leaf([1.0, 2.0], device)

    @tt.no_grad()
    def f(t):
        assert not tt.is_grad_enabled()
        return t * 2

    @tt.enable_grad()
    def g(t):
        return t * 2

    @tt.set_grad_enabled(False)
    def h(t):
        return t * 2

    assert not f(x).requires_grad
    assert tt.is_grad_enabled()
    with tt.no_grad():
        assert g(x).requires_grad
        assert not tt.is_grad_enabled()
    assert not h(x).requires_grad
    assert tt.is_grad_enabled()
    assert f.__name__ == "f"


def test_grad_mode_decorators_without_parentheses(device):
    # torch >= 2.1: no_grad and enable_grad decorate without being called
    x = leaf([1.0, 2.0], device)

    @tt.no_grad
    def f(t):
        return t * 2

    @tt.enable_grad
    def g(t):
        return t * 2

    assert not f(x).requires_grad
    with tt.no_grad():
        assert g(x).requires_grad


def test_set_grad_enabled(device):
    x = leaf([1.0, 2.0], device)
    with tt.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert tt.is_grad_enabled()
    with tt.set_grad_enabled(True):
        assert (x * 2).requires_grad
    try:
        tt.set_grad_enabled(False)            # a plain call takes effect at once
        assert not tt.is_grad_enabled()
        assert not (x * 2).requires_grad
    finally:
        tt.set_grad_enabled(True)
    assert tt.is_grad_enabled()


# ----------------------------------------------------------------------------- detach / requires_grad_
def test_detach_shares_storage_and_leaves_the_graph(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    assert d.data_ptr() == y.data_ptr()
    d.fill_(7.0)                                # writes show in y
    np.testing.assert_allclose(to_numpy(y), [7.0, 7.0])
    assert y.requires_grad                      # y itself is unchanged


def test_detach_inplace(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    assert y.detach_() is y
    assert not y.requires_grad and y.is_leaf and y.grad_fn is None
    z = (y * x).sum()
    z.backward()
    np.testing.assert_allclose(to_numpy(x.grad), [2.0, 4.0])   # y is a constant now


def test_requires_grad_(device):
    x = const([1.0, 2.0], device)
    assert x.requires_grad_() is x and x.requires_grad and x.is_leaf
    x.requires_grad_(False)
    assert not x.requires_grad
    x.requires_grad = True
    assert x.requires_grad
    i = tt.tensor([1, 2], device=device)
    with pytest.raises(RuntimeError, match="^only Tensors of floating point dtype can require gradients$"):
        i.requires_grad_()            # torch's method and attribute word their errors differently
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype can require gradients$"):
        i.requires_grad = True
    i.requires_grad_(False)                    # turning it off is always fine


def test_requires_grad_on_non_leaf(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2
    # torch (VariableTypeManual.cpp requires_grad_): only *clearing* the flag of a non-leaf is an error
    assert y.requires_grad_() is y
    assert y.requires_grad and y.grad_fn is not None
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad_(False)
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad = False


# ----------------------------------------------------------------------------- in-place and versions
INPLACE_ON_LEAF = [
    ("add_", lambda x: x.add_(1)),
    ("mul_", lambda x: x.mul_(2)),
    ("iadd", lambda x: x.__iadd__(1)),
    ("fill_", lambda x: x.fill_(0.0)),
    ("zero_", lambda x: x.zero_()),
    ("copy_", lambda x: x.copy_(tt.ones_like(x))),
]


@pytest.mark.parametrize("name,op", INPLACE_ON_LEAF, ids=[p[0] for p in INPLACE_ON_LEAF])
def test_inplace_on_leaf_requiring_grad_raises(device, name, op):
    x = leaf([1.0, 2.0], device)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation."):
        op(x)
    np.testing.assert_allclose(to_numpy(x), [1.0, 2.0])
    with tt.no_grad():
        op(x)                                  # allowed without grad mode
    assert x.requires_grad and x.is_leaf


def test_inplace_on_a_view_of_a_leaf_requiring_grad_raises(device):
    x = leaf([1.0, 2.0], device)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an in-place operation."):
        x[0].add_(1)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an in-place operation."):
        x.view(2, 1).fill_(0.0)
    np.testing.assert_allclose(to_numpy(x), [1.0, 2.0])
    with tt.no_grad():
        x[1].mul_(10)
    np.testing.assert_allclose(to_numpy(x), [1.0, 20.0])


def test_inplace_on_non_leaf_is_recorded(device):
    x = leaf([1.0, 2.0, 3.0], device)
    y = x * 1
    y.add_(1)
    assert y.grad_fn.name() == "AddBackward0"
    y.mul_(3)
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [3.0, 3.0, 3.0])
    np.testing.assert_allclose(to_numpy(y), 3 * (np.array([1.0, 2.0, 3.0]) + 1))


def test_inplace_mul_uses_the_old_value(device):
    x = leaf([1.0, 2.0, 3.0], device)
    y = x.clone()
    y.mul_(x)                                  # y = x * x
    y.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [2.0, 4.0, 6.0])


def test_modified_saved_output_raises(device):
    x = leaf([0.0, 1.0, 2.0], device)
    y = x.exp()
    y.add_(1)                                  # ExpBackward0 saved y at version 0
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as err:
        y.sum().backward()
    assert "is at version 1; expected version 0 instead" in str(err.value)
    assert "ExpBackward0" in str(err.value)


def test_modified_saved_input_raises(device):
    x = leaf([1.0, 2.0], device)
    a = x * 1
    b = a * a                                  # MulBackward0 saves a
    a.add_(1)
    with pytest.raises(RuntimeError, match="one of the variables needed for gradient computation has been modified by an inplace operation"):
        b.sum().backward()


def test_modified_leaf_under_no_grad_raises(device):
    x = leaf([1.0, 2.0], device)
    y = (x * x).sum()
    with tt.no_grad():
        x.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_detach_shares_the_version_counter_but_data_does_not(device):
    x = leaf([0.5, 1.0], device)
    y = x.exp()
    y.detach().zero_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    x.grad = None
    y = x.exp()
    y.data.fill_(2.0)                          # .data hides the change from autograd
    y.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [2.0, 2.0])


# ----------------------------------------------------------------------------- retain_grad / hooks
def test_retain_grad_on_non_leaf(device):
    x = leaf([1.0, -2.0], device)
    y = x * 2
    y.retain_grad()
    assert y.retains_grad
    (y * y).sum().backward()
    np.testing.assert_allclose(to_numpy(y.grad), 2 * to_numpy(y))
    np.testing.assert_allclose(to_numpy(x.grad), 8 * np.array([1.0, -2.0]))


def test_non_leaf_grad_access_warns(device):
    x = leaf([1.0], device)
    y = x * 2
    y.sum().backward()
    with pytest.warns(UserWarning, match="is not a leaf Tensor"):
        assert y.grad is None


def test_register_hook_on_leaf_and_remove(device):
    x = leaf([1.0, 2.0], device)
    seen = []
    h = x.register_hook(lambda g: g * 2)
    h2 = x.register_hook(lambda g: seen.append(to_numpy(g)))     # returning None keeps g
    (x * 3 + x * 4).sum().backward()            # the hook runs once, on the summed gradient
    np.testing.assert_allclose(to_numpy(x.grad), [14.0, 14.0])
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], [14.0, 14.0])
    h.remove()
    h2.remove()
    x.grad = None
    (x * 3).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [3.0, 3.0])
    assert len(seen) == 1


def test_register_hook_on_non_leaf(device):
    x = leaf([1.0, 2.0], device)
    y = x * 3
    h = y.register_hook(lambda g: g * 2)
    y.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [6.0, 6.0])
    h.remove()
    x.grad = None
    y = x * 3
    y.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [3.0, 3.0])


def test_register_hook_requires_grad(device):
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        const([1.0], device).register_hook(lambda g: g)


# ----------------------------------------------------------------------------- custom Function
class MyExp(tt.autograd.Function):
    needs = []

    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        MyExp.needs.append(ctx.needs_input_grad)
        (y,) = ctx.saved_tensors
        return grad * y


class ScaleBy(tt.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, k):
        ctx.save_for_backward(x, w)
        ctx.k = k
        ctx.seen_needs = ctx.needs_input_grad
        return x * w * k

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        gx = grad * w * ctx.k if ctx.needs_input_grad[0] else None
        gw = grad * x * ctx.k if ctx.needs_input_grad[1] else None
        return gx, gw, None


def test_custom_function(device):
    a = np.array([0.0, 1.0, -0.5])
    x = leaf(a, device)
    MyExp.needs.clear()
    y = MyExp.apply(x)
    assert y.requires_grad and not y.is_leaf
    assert y.grad_fn.name() == "MyExpBackward"
    assert y.grad_fn.next_functions[0][0].variable is x
    np.testing.assert_allclose(to_numpy(y), np.exp(a))
    (y * 2).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), 2 * np.exp(a))
    assert MyExp.needs == [(True,)]


def test_custom_function_saved_tensors_are_freed(device):
    x = leaf([0.5], device)
    y = MyExp.apply(x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    with tt.no_grad():
        z = MyExp.apply(x)
    assert not z.requires_grad and z.grad_fn is None


def test_custom_function_double_backward(device):
    a = np.array([0.25, -1.0])
    x = leaf(a, device)
    (g,) = tt.autograd.grad(MyExp.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(to_numpy(g), np.exp(a))
    (gg,) = tt.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(to_numpy(gg), np.exp(a))


def _freed_without_gc(make):
    """True when the tensor ``make()`` returns dies as soon as its last reference goes (no
    reference cycle through the graph that only the cyclic GC could break)."""
    import gc
    import weakref
    enabled = gc.isenabled()
    gc.disable()
    try:
        t = make()
        ref = weakref.ref(t)
        del t
        return ref() is None
    finally:
        if enabled:
            gc.enable()


def test_graphs_are_freed_without_the_cyclic_gc(device):
    x = leaf([0.5, 1.5], device)

    def op_graph():
        y = (x * 2).exp()
        y.sum().backward()
        return y

    def function_graph():
        y = MyExp.apply(x)
        y.sum().backward()
        return y

    def function_graph_without_backward():
        return MyExp.apply(x * 1)

    assert _freed_without_gc(lambda: (x * 2).exp())
    assert _freed_without_gc(op_graph)
    # torch frees a custom Function's saved output with its graph; a ctx that keeps the
    # tensors given to save_for_backward closes the cycle output -> grad_fn -> ctx -> output
    assert _freed_without_gc(function_graph)
    assert _freed_without_gc(function_graph_without_backward)


def test_custom_function_needs_input_grad(device):
    x = leaf([1.0, 2.0], device)
    w = const([3.0, 4.0], device)
    out = ScaleBy.apply(x, w, 2.0)
    assert out.grad_fn.ctx.seen_needs == (True, False, False)
    out.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [6.0, 8.0])
    assert w.grad is None
    with tt.no_grad():
        assert ScaleBy.apply(x, w, 2.0).grad_fn is None


def test_custom_function_wrong_number_of_grads(device):
    class Bad(tt.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, g):
            return g

    x = leaf([1.0], device)
    y = leaf([1.0], device)
    with pytest.raises(RuntimeError, match="returned an incorrect number of gradients"):
        Bad.apply(x, y).sum().backward()


# ----------------------------------------------------------------------------- gradcheck
def _randn(*shape):
    return RNG.standard_normal(shape)


GRADCHECK = [
    ("mul-exp", lambda x, y: (x * y).exp(), [(2, 3), (2, 3)]),
    ("div-broadcast", lambda x, y: x / (1 + y * y), [(3, 1), (4,)]),
    ("tanh-sigmoid", lambda x, y: x.tanh() * y.sigmoid() - x, [(2, 2), (2, 2)]),
    ("views", lambda x: x[1:, ::2].t().reshape(-1) * x[0, 0], [(3, 4)]),
    ("sum-pow-mean", lambda x: x.sum(0) ** 2 + x.mean(), [(2, 3)]),
    ("sqrt-log-sin", lambda x: (x * x + 1).sqrt().log() * x.sin(), [(5,)]),
    ("expand-squeeze", lambda x, y: (x.unsqueeze(1).expand(3, 2, 2) * y).squeeze(), [(3, 2), (2, 2)]),
]


def _gc_inputs(shapes, device, rng_seed):
    rng = np.random.default_rng(rng_seed)
    return [tt.tensor(rng.standard_normal(s), dtype=tt.float64, device=device, requires_grad=True)
            for s in shapes]


@pytest.mark.parametrize("name,fn,shapes", GRADCHECK, ids=[p[0] for p in GRADCHECK])
def test_gradcheck(device, name, fn, shapes):
    inputs = _gc_inputs(shapes, device, 0)
    assert tt.autograd.gradcheck(fn, inputs) is True


@pytest.mark.parametrize("name,fn,shapes", [GRADCHECK[0], GRADCHECK[2], GRADCHECK[4]],
                         ids=["mul-exp", "tanh-sigmoid", "sum-pow-mean"])
def test_gradgradcheck(device, name, fn, shapes):
    inputs = _gc_inputs([tuple(min(d, 2) for d in s) for s in shapes], device, 1)
    assert tt.autograd.gradgradcheck(fn, inputs) is True


class WrongSin(tt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.cos() * 1.1             # off by 10%


def test_gradcheck_detects_a_wrong_backward(device):
    x = _gc_inputs([(4,)], device, 2)[0]
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        tt.autograd.gradcheck(WrongSin.apply, (x,))
    assert tt.autograd.gradcheck(WrongSin.apply, (x,), raise_exception=False) is False
    assert tt.autograd.gradcheck(MyExp.apply, (x,)) is True


# ----------------------------------------------------------------------------- broadcasting
def test_broadcast_gradients_are_summed_to_input_shape(device):
    a = np.array([[1.0], [2.0], [3.0]])
    b = np.array([10.0, 20.0, 30.0, 40.0])
    x = leaf(a, device)
    y = leaf(b, device)
    z = x + y
    assert z.shape == (3, 4)
    z.sum().backward()
    assert x.grad.shape == (3, 1) and y.grad.shape == (4,)
    np.testing.assert_allclose(to_numpy(x.grad), np.full((3, 1), 4.0))
    np.testing.assert_allclose(to_numpy(y.grad), np.full(4, 3.0))
    x.grad = y.grad = None
    (x * y).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), np.full((3, 1), b.sum()))
    np.testing.assert_allclose(to_numpy(y.grad), np.full(4, a.sum()))


def test_broadcast_gradient_to_0d_and_size1(device):
    x = leaf([[1.0, 2.0, 3.0]], device)          # (1, 3)
    s = leaf(2.0, device)                       # 0-d
    out = x * s + tt.zeros(4, 1, 3, dtype=tt.float64, device=device)   # (4, 1, 3)
    out.sum().backward()
    assert s.grad.shape == () and x.grad.shape == (1, 3)
    assert s.grad.item() == pytest.approx(4 * 6.0)
    np.testing.assert_allclose(to_numpy(x.grad), [[8.0, 8.0, 8.0]])


def test_gradient_dtype_follows_the_input(device):
    x = leaf([1.0, 2.0], device, dtype=tt.float32)
    y = leaf([3.0, 4.0], device, dtype=tt.float64)
    (x * y).sum().backward()                    # the product is float64
    assert x.grad.dtype is tt.float32 and y.grad.dtype is tt.float64
    np.testing.assert_allclose(to_numpy(x.grad), [3.0, 4.0])


def test_gradient_across_devices():
    x = leaf([1.0, 2.0], "cpu")
    y = x.cuda() * 3
    assert y.device == tt.device("cuda", 0)
    y.sum().backward()
    assert x.grad.device == tt.device("cpu")
    np.testing.assert_allclose(to_numpy(x.grad), [3.0, 3.0])


# ----------------------------------------------------------------------------- deep graphs
def test_very_long_chain_does_not_recurse():
    x = tt.tensor([1.0, 2.0], dtype=tt.float64, requires_grad=True)
    start = time.perf_counter()
    y = x
    for _ in range(100_000):
        y = y * 1.0001
    y.sum().backward()
    del y                                       # freeing the long graph must not recurse either
    elapsed = time.perf_counter() - start
    np.testing.assert_allclose(to_numpy(x.grad), [1.0001 ** 100_000] * 2, rtol=1e-9)
    assert elapsed < 60


# ----------------------------------------------------------------------------- cuda == cpu
CROSS_DEVICE = [
    ("done-when", lambda x: (x * 2 + 1).exp().sum()),
    ("elementwise", lambda x: (x.sin() * x.cos() + x.tanh() - x.sigmoid() * x).sum()),
    ("div-sqrt", lambda x: (x / (x * x + 1).sqrt()).sum()),
    ("views", lambda x: (x.t()[1:] * x[:, ::2].t()).sum()),
    ("broadcast", lambda x: (x.sum(0, keepdim=True) * x - x.mean(1).unsqueeze(1)).sum()),
    ("relu-abs-max", lambda x: (x.relu() + x.abs() * tt.maximum(x, x * 0.5)).sum()),
]


@pytest.mark.parametrize("name,f", CROSS_DEVICE, ids=[p[0] for p in CROSS_DEVICE])
def test_cuda_gradients_match_cpu(name, f):
    a = np.random.default_rng(5).standard_normal((4, 3)).astype(np.float32)
    xs = {}
    for dev in ("cpu", "cuda"):
        x = tt.tensor(a, device=dev, requires_grad=True)
        f(x).backward()
        xs[dev] = x
    assert xs["cuda"].grad.device == tt.device("cuda", 0)
    np.testing.assert_allclose(to_numpy(xs["cuda"].grad), to_numpy(xs["cpu"].grad), rtol=1e-5, atol=1e-6)


def test_done_when_example():
    tt.manual_seed(0)
    x = tt.randn(4, 3, device="cuda", requires_grad=True)
    (x * 2 + 1).exp().sum().backward()
    xc = x.detach().cpu().requires_grad_()
    (xc * 2 + 1).exp().sum().backward()
    assert x.grad.device == tt.device("cuda", 0) and x.grad.shape == (4, 3)
    np.testing.assert_allclose(to_numpy(x.grad), to_numpy(xc.grad), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_numpy(xc.grad), 2 * np.exp(2 * to_numpy(xc) + 1), rtol=1e-5)
