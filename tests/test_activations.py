"""torch.nn's activations (issue 25.1) beyond the OpInfo records (tests/opinfo_act.py): values
and gradients at the kinks, NaN, +-inf and -0.0 as torch 2.13 gives them (recorded by
tests/data/make_activation_values.py), torch's node names (in-place forms included), its errors
word for word, the modules (reprs, PReLU's parameter and its gradient, RReLU's train and eval
modes, Softmax2d, Softmin), rrelu's random slopes.
"""
import json
import math
import pathlib

import numpy as np
import pytest

import opinfo  # noqa: F401,I001  (first: it imports every opinfo_<family> module)
import tritensor as tt
from conftest import to_numpy

F = tt.nn.functional
nn = tt.nn
VALUES = json.loads((pathlib.Path(__file__).parent / "data" / "activation_values.json").read_text())


def _num(v):
    return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "-0.0": -0.0}.get(v, v) if isinstance(v, str) else v


def _expected(values):
    return np.array([_num(v) for v in values], dtype=np.float64)


def _same(got, want, rtol):
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True)
    zeros = want == 0
    np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))   # -0.0 as torch


@pytest.mark.parametrize("case", VALUES["cases"], ids=lambda c: c["name"] + "-" + "-".join(map(str, c["kwargs"].values())))
def test_values_and_gradients_at_the_kinks_as_torch(case, device):
    points = [_num(p) for p in VALUES["points"]]
    dtypes = ("float32", "float64") if device == "cpu" else ("float32",)
    for name in dtypes:
        x = tt.tensor(points, dtype=getattr(tt, name), device=device, requires_grad=True)
        y = getattr(F, case["name"])(x, **case["kwargs"])
        (g,) = tt.autograd.grad(y.sum(), x)
        rtol = 2e-6 if name == "float32" else 1e-13
        _same(to_numpy(y).astype(np.float64), _expected(case[name]["value"]), rtol)
        _same(to_numpy(g).astype(np.float64), _expected(case[name]["grad"]), rtol)


# --------------------------------------------------------------------------- node names
@pytest.mark.parametrize("fn,node,backward_node", [
    (F.elu, "EluBackward0", "EluBackwardBackward0"), (F.selu, "EluBackward0", "EluBackwardBackward0"),
    (F.celu, "CeluBackward0", "EluBackwardBackward0"), (F.hardshrink, "HardshrinkBackward0", "HardshrinkBackwardBackward0"),
    (F.softshrink, "SoftshrinkBackward0", "SoftshrinkBackwardBackward0"),
    (F.hardswish, "HardswishBackward0", "HardswishBackwardBackward0"),
    (F.logsigmoid, "LogSigmoidBackward0", "LogSigmoidBackwardBackward0"),
    (F.softplus, "SoftplusBackward0", "SoftplusBackwardBackward0"),
    (lambda t: F.threshold(t, 0.0, 1.0), "ThresholdBackward0", "ThresholdBackwardBackward0"),
    (F.leaky_relu, "LeakyReluBackward0", "LeakyReluBackwardBackward0"),
    (lambda t: F.rrelu(t, training=True), "RreluWithNoiseBackward0", "RreluWithNoiseBackwardBackward0"),
    (F.rrelu, "RreluWithNoiseBackward0", None), (F.glu, "GluBackward0", "GluBackwardBackward0"),
    (F.mish, "MishBackward0", None), (F.hardsigmoid, "HardsigmoidBackward0", None),
    (F.softsign, "DivBackward0", None), (F.tanhshrink, "SubBackward0", None),
    (lambda t: F.softmin(t, 0), "SoftmaxBackward0", None),
])
def test_node_names_as_torch(fn, node, backward_node):
    x = tt.tensor([0.5, -1.0], requires_grad=True)
    y = fn(x)
    assert y.grad_fn.name() == node
    if backward_node:
        (g,) = tt.autograd.grad(y.sum(), x, create_graph=True)
        assert g.grad_fn.name() == backward_node


def test_prelu_node_names():
    x = tt.tensor([0.5, -1.0], requires_grad=True)
    w = tt.tensor([0.25], requires_grad=True)
    y = F.prelu(x, w)
    assert y.grad_fn.name() == "PreluKernelBackward0"
    gx, gw = tt.autograd.grad(y.sum(), (x, w), create_graph=True)
    assert gx.grad_fn.name() == "PreluKernelBackwardBackward0"


@pytest.mark.parametrize("fn,node", [
    (lambda t: F.elu(t, inplace=True), "EluBackward1"), (lambda t: F.elu_(t, 0.5), "EluBackward1"),
    (lambda t: F.selu(t, inplace=True), "EluBackward1"), (lambda t: tt.selu_(t), "EluBackward1"),
    (lambda t: F.celu(t, inplace=True), "CeluBackward1"), (lambda t: tt.celu_(t, 2.0), "CeluBackward1"),
    (lambda t: F.threshold(t, 0.0, 1.0, inplace=True), "ThresholdBackward1"),
    (lambda t: tt.threshold_(t, 0.0, 1.0), "ThresholdBackward1"),
    (lambda t: F.leaky_relu(t, inplace=True), "LeakyReluBackward1"),
    (lambda t: F.rrelu(t, training=True, inplace=True), "RreluWithNoiseBackward1"),
    (lambda t: F.rrelu_(t), "RreluWithNoiseBackward1"),
    (lambda t: F.hardsigmoid(t, inplace=True), "HardsigmoidBackward0"),
    (lambda t: F.hardswish(t, inplace=True), "HardswishBackward0"), (lambda t: F.mish(t, inplace=True), "MishBackward0"),
])
def test_inplace_forms_write_the_input_and_name_torch_node(fn, node):
    leaf = tt.tensor([0.5, -1.0, 2.0], requires_grad=True)
    x = leaf * 1
    y = fn(x)
    assert y is x and y.grad_fn.name() == node
    (g,) = tt.autograd.grad(y.sum(), leaf)
    assert np.all(np.isfinite(to_numpy(g)))
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in an in-place operation.$"):
        fn(tt.tensor([0.5, -1.0], requires_grad=True))


def test_inplace_gradient_equals_the_out_of_place_one():
    leaf = tt.tensor([0.5, -1.0, -0.2, 2.0], dtype=tt.float64, requires_grad=True)
    for out_of_place, in_place in [(lambda t: F.elu(t, 0.7), lambda t: F.elu(t, 0.7, inplace=True)),
                                   (lambda t: F.celu(t, 2.0), lambda t: F.celu(t, 2.0, inplace=True)),
                                   (F.selu, lambda t: F.selu(t, inplace=True)),
                                   (lambda t: F.threshold(t, 0.0, 3.0), lambda t: F.threshold(t, 0.0, 3.0, True))]:
        (a,) = tt.autograd.grad(out_of_place(leaf).sum(), leaf)
        (b,) = tt.autograd.grad(in_place(leaf * 1).sum(), leaf)
        np.testing.assert_allclose(to_numpy(b), to_numpy(a), rtol=1e-15)


# --------------------------------------------------------------------------- errors
def _raises(exc, message, fn):
    with pytest.raises(exc) as info:
        fn()
    assert str(info.value) == message


def test_errors_word_for_word_as_torch():
    x = tt.randn(3, 4)
    ints = tt.tensor([1, 2])
    _raises(NotImplementedError, "\"elu_cpu\" not implemented for 'Long'", lambda: F.elu(ints))
    _raises(NotImplementedError, "\"softplus_cpu\" not implemented for 'Long'", lambda: F.softplus(ints))
    _raises(NotImplementedError, "\"hardshrink_cpu\" not implemented for 'Long'", lambda: F.hardshrink(ints))
    _raises(NotImplementedError, "\"threshold_cpu\" not implemented for 'Bool'",
            lambda: F.threshold(tt.tensor([True]), 0, 1))
    _raises(RuntimeError, "Halving dimension must be even, but dimension 1 is size 5", lambda: F.glu(tt.randn(3, 5)))
    _raises(RuntimeError, "glu does not support scalars because halving size must be even", lambda: F.glu(tt.tensor(1.0)))
    _raises(RuntimeError, "lambda must be in range [0, 3.40282e+38] for input dtype Float, but found -1",
            lambda: F.softshrink(x, -1.0))
    _raises(RuntimeError, "ZeroDivisionError: alpha cannot be 0 for CELU", lambda: tt.celu(x, 0.0))
    _raises(RuntimeError, "Lower bound should be less than or equal to the upper bound", lambda: F.rrelu(x, 0.5, 0.1))
    _raises(RuntimeError, "Lower bound should be less than or equal to the upper bound",
            lambda: F.rrelu(x, 0.5, 0.1, training=True))
    _raises(RuntimeError, "Mismatch of parameter numbers and input channel size. Found parameter numbers = 3 and "
            "channel size = 4.", lambda: F.prelu(x, tt.randn(3)))
    _raises(RuntimeError, "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = 2",
            lambda: F.prelu(x, tt.randn(4, 1)))
    _raises(RuntimeError, "prelu: Type promoting not supported. Got Float and Double",
            lambda: F.prelu(x, tt.randn(4, dtype=tt.float64)))
    _raises(RuntimeError, "Not allow zero-dim input tensor.", lambda: F.prelu(tt.tensor(1.0), tt.randn(4)))
    _raises(ValueError, "Softmax2d: expected input to be 3D or 4D, got 2D instead", lambda: nn.Softmax2d()(tt.randn(2, 3)))
    _raises(TypeError, "elu(): argument 'alpha' (position 2) must be Number, not str", lambda: F.elu(x, "a"))
    with pytest.warns(UserWarning, match="^Implicit dimension choice for softmin has been deprecated. Change the call "
                      "to include dim=X as an argument.$"):
        F.softmin(x)


def test_threshold_of_integers_truncates_its_scalars_as_torch():
    # torch: threshold(int32 [1, 5, -3], 2.7, 9.9) -> [9, 5, 9]; uint8 with -3 wraps: [9, 9, 9]
    got = F.threshold(tt.tensor([1, 5, -3], dtype=tt.int32), 2.7, 9.9)
    assert got.dtype is tt.int32 and got.tolist() == [9, 5, 9]
    assert F.threshold(tt.tensor([1, 5, 200], dtype=tt.uint8), -3, 9).tolist() == [9, 9, 9]


def test_hardsigmoid_second_derivative():
    """torch raises "derivative for aten::hardsigmoid_backward is not implemented"; the derivative
    is well defined (hardsigmoid_backward is linear in grad, piecewise constant in x): given here."""
    x = tt.tensor([-4.0, -1.0, 2.0, 3.5], dtype=tt.float64, requires_grad=True)
    (g,) = tt.autograd.grad(F.hardsigmoid(x).sum(), x, create_graph=True)
    (gg,) = tt.autograd.grad(g.sum(), x)
    assert to_numpy(gg).tolist() == [0.0, 0.0, 0.0, 0.0]


# --------------------------------------------------------------------------- rrelu
def test_rrelu_training_draws_slopes_in_bounds_from_the_generator_and_saves_them():
    x = tt.tensor(-np.linspace(0.5, 3.0, 200), dtype=tt.float64, requires_grad=True)
    y = F.rrelu(x, 0.2, 0.4, training=True)
    slopes = to_numpy(y) / to_numpy(x.detach())
    assert slopes.min() >= 0.2 and slopes.max() <= 0.4 and slopes.std() > 0.03
    (g,) = tt.autograd.grad(y.sum(), x)
    np.testing.assert_allclose(to_numpy(g), slopes, rtol=1e-12)         # the noise is saved, not drawn again
    tt.manual_seed(7)
    a = F.rrelu(x.detach(), training=True)
    tt.manual_seed(7)
    b = F.rrelu(x.detach(), training=True)
    assert to_numpy(a).tolist() == to_numpy(b).tolist()
    pos = tt.tensor([0.5, 2.0])
    assert F.rrelu(pos, training=True).tolist() == [0.5, 2.0]


def test_rrelu_module_train_and_eval():
    m = nn.RReLU(0.1, 0.3)
    x = tt.tensor([-1.0, 2.0])
    assert m.eval()(x).tolist() == pytest.approx([-0.2, 2.0])
    slope = -m.train()(x)[0].item()
    assert 0.1 <= slope <= 0.3
    assert repr(nn.RReLU(0.1, 0.3, True)) == "RReLU(lower=0.1, upper=0.3, inplace=True)"


# --------------------------------------------------------------------------- modules
def test_module_reprs_as_torch():
    got = [repr(m) for m in (nn.ELU(inplace=True), nn.CELU(2.0), nn.SELU(True), nn.GLU(), nn.Hardshrink(),
                             nn.Hardsigmoid(True), nn.PReLU(3), nn.Softmin(1), nn.Softplus(2, 10), nn.Softshrink(),
                             nn.Threshold(0.1, 20, True), nn.Softmax2d(), nn.Mish(True), nn.Hardswish(True),
                             nn.LogSigmoid(), nn.Softsign(), nn.Tanhshrink(), nn.Softmin())]
    assert got == ["ELU(alpha=1.0, inplace=True)", "CELU(alpha=2.0)", "SELU(inplace=True)", "GLU(dim=-1)",
                   "Hardshrink(0.5)", "Hardsigmoid()", "PReLU(num_parameters=3)", "Softmin(dim=1)",
                   "Softplus(beta=2, threshold=10)", "Softshrink(0.5)", "Threshold(threshold=0.1, value=20, inplace=True)",
                   "Softmax2d()", "Mish(inplace=True)", "Hardswish()", "LogSigmoid()", "Softsign()", "Tanhshrink()",
                   "Softmin(dim=None)"]


def test_modules_compute_their_functions():
    rng = np.random.default_rng(0)
    v = rng.standard_normal((2, 4, 3, 2))
    x = tt.tensor(v)
    for module, expect in [(nn.ELU(0.5), np.where(v > 0, v, 0.5 * np.expm1(v))),
                           (nn.Softplus(2.0, 1.0), np.where(2 * v > 1, v, np.logaddexp(0, 2 * v) / 2)),
                           (nn.Threshold(0.3, -1.0), np.where(v > 0.3, v, -1.0)),
                           (nn.GLU(1), v[:, :2] / (1 + np.exp(-v[:, 2:]))),
                           (nn.Softmin(1), np.exp(-v) / np.exp(-v).sum(1, keepdims=True)),
                           (nn.Softmax2d(), np.exp(v) / np.exp(v).sum(1, keepdims=True)),
                           (nn.Tanhshrink(), v - np.tanh(v)), (nn.Softsign(), v / (1 + np.abs(v))),
                           (nn.LogSigmoid(), -np.logaddexp(0, -v))]:
        np.testing.assert_allclose(to_numpy(module(x)), expect, rtol=1e-5, atol=1e-6)
    # Softmax2d on a 3-d (C, H, W) input: over the channels too
    np.testing.assert_allclose(to_numpy(nn.Softmax2d()(x[0])), np.exp(v[0]) / np.exp(v[0]).sum(0), rtol=1e-5)


def test_prelu_module_parameter_and_its_gradient_summed_over_the_broadcast_dims():
    m = nn.PReLU(3, init=0.1)
    assert list(m.state_dict()) == ["weight"] and m.weight.tolist() == pytest.approx([0.1] * 3)
    rng = np.random.default_rng(1)
    v = rng.standard_normal((4, 3, 5))
    x = tt.tensor(v, dtype=tt.float32, requires_grad=True)
    y = m(x)
    np.testing.assert_allclose(to_numpy(y), np.where(v > 0, v, 0.1 * v), rtol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(to_numpy(m.weight.grad), np.where(v > 0, 0, v).sum((0, 2)), rtol=1e-5)
    np.testing.assert_allclose(to_numpy(x.grad), np.where(v > 0, 1.0, 0.1), rtol=1e-6)
    one = nn.PReLU(dtype=tt.float64)
    assert one.weight.dtype is tt.float64 and one(tt.tensor([-2.0], dtype=tt.float64)).tolist() == [-0.5]


def test_emulated_cuda_training_step_of_the_parametric_ones():
    """One step through PReLU, RReLU (train) and GLU on the device: their fused backwards."""
    dev = "cuda"
    m = nn.PReLU(2).to(dev)
    x = tt.tensor([[-1.0, 2.0, 0.5, -3.0], [1.0, -2.0, -0.5, 4.0]], device=dev, requires_grad=True)
    y = F.glu(m(x.reshape(2, 2, 2)).reshape(2, 4), 1)
    y.sum().backward()
    v = np.array([[-1.0, 2.0, 0.5, -3.0], [1.0, -2.0, -0.5, 4.0]]).reshape(2, 2, 2)
    p = np.where(v > 0, v, 0.25 * v).reshape(2, 4)
    a, b = p[:, :2], p[:, 2:]
    s = 1 / (1 + np.exp(-b))
    dp = np.concatenate([s, a * s * (1 - s)], 1).reshape(2, 2, 2)
    np.testing.assert_allclose(to_numpy(m.weight.grad), np.where(v > 0, 0, v * dp).sum((0, 2)), rtol=1e-5)
    np.testing.assert_allclose(to_numpy(x.grad).reshape(2, 2, 2), np.where(v > 0, dp, 0.25 * dp), rtol=1e-5)
