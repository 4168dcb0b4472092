"""Pooling (ops/pool.py, nn/modules/pooling.py) against torch's recorded values, indices,
gradients, strides, node names, reprs and errors (tests/data/pool_torch_values.npz, written by
tests/data/make_pool_torch_values.py), and the definitions in tests/opinfo_pool.py.

The emulated cuda device runs the Triton kernels (~0.1 s a launch): its cases are few and small
but cross a 64-lane block, and cover channels_last, overlapping windows and the gradients'
gathers (run twice: the same bits).
"""
import builtins
import json
import pathlib

import numpy as np
import pytest

import tritensor as tt
import tritensor.nn.functional as F
from conftest import to_numpy
import opinfo  # noqa: F401,I001  (first: it imports every opinfo_<family> module, this one's included)
from opinfo_pool import pool_definition, unpool_definition
from tritensor.autograd import gradcheck, gradgradcheck

DATA = np.load(pathlib.Path(__file__).parent / "data" / "pool_torch_values.npz")
META = json.loads(str(DATA["meta"]))
CASES = {c["name"]: c for c in META["cases"]}
UNPOOL = {c["name"]: c for c in META["unpool"]}
CUDA_CASES = ("max_pool2d_resnet", "max_pool2d_channels_last", "max_pool3d_ceil", "avg_pool2d_exclude_ceil_cl",
              "adaptive_avg_pool2d_odd", "adaptive_max_pool1d", "lp_pool2d")


def _kwargs(kwargs):
    return {k: tuple(v) if isinstance(v, list) else v for k, v in kwargs.items()}


def _run(case, device, dtype):
    n = case["name"]
    x = tt.tensor(DATA[n + ".x"], dtype=dtype, device=device)
    if case["channels_last"]:
        x = x.contiguous(memory_format=tt.channels_last if x.dim() == 4 else tt.channels_last_3d)
    x.requires_grad_()
    kwargs = _kwargs(case["kwargs"])
    args = (kwargs.pop("norm_type"),) if case["fn"].startswith("lp_pool") else ()
    out = getattr(F, case["fn"])(x, *args, **kwargs)
    y = out[0] if isinstance(out, tuple) else out
    (gx,) = tt.autograd.grad(y, [x], tt.tensor(DATA[n + ".g"], dtype=dtype, device=device))
    return out, y, gx


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_indices_gradients_layouts_and_nodes_match_torch_cpu(name):
    case = CASES[name]
    out, y, gx = _run(case, "cpu", tt.float64)
    assert y.grad_fn.name() == case["node"]
    if y.dim() > 1 and 0 not in y.shape:
        assert list(y.stride()) == case["stride"]
    np.testing.assert_allclose(to_numpy(y), DATA[name + ".y"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(to_numpy(gx), DATA[name + ".gx"], rtol=1e-12, atol=1e-12)
    if isinstance(out, tuple):
        assert out[1].dtype is tt.int64 and list(out[1].stride()) == case["stride"]
        np.testing.assert_array_equal(to_numpy(out[1]), DATA[name + ".i"])


@pytest.mark.parametrize("name", CUDA_CASES)
def test_values_indices_and_gradients_match_torch_cuda(name):
    case = CASES[name]
    out, y, gx = _run(case, "cuda", tt.float32)
    assert y.device.type == "cuda" and list(y.stride()) == case["stride"]
    np.testing.assert_allclose(to_numpy(y), DATA[name + ".y"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(to_numpy(gx), DATA[name + ".gx"], rtol=1e-5, atol=1e-5)
    if isinstance(out, tuple):
        np.testing.assert_array_equal(to_numpy(out[1]), DATA[name + ".i"])


@pytest.mark.parametrize("name,device", [(n, "cpu") for n in sorted(UNPOOL)] + [("max_unpool2d", "cuda")])
def test_max_unpool_matches_torch(name, device):
    case = UNPOOL[name]
    y = tt.tensor(DATA[name + ".y"], device=device, requires_grad=True)
    u = getattr(F, name)(y, tt.tensor(DATA[name + ".i"], device=device), **_kwargs(case["pool_kwargs"]),
                         **_kwargs(case["kwargs"]))
    assert u.grad_fn.name() == case["node"]
    (gy,) = tt.autograd.grad(u, [y], tt.tensor(DATA[name + ".g"], device=device))
    np.testing.assert_array_equal(to_numpy(u), DATA[name + ".u"])
    np.testing.assert_array_equal(to_numpy(gy), DATA[name + ".gy"])


FRACTIONAL = {c["name"]: c for c in META["fractional"]}


@pytest.mark.parametrize("name,device", [(n, "cpu") for n in sorted(FRACTIONAL)] + [("fractional_max_pool2d", "cuda")])
def test_fractional_max_pool_matches_torch(name, device):
    """The same samples give torch's windows, values, indices and gradient."""
    case = FRACTIONAL[name]
    x = tt.tensor(DATA[name + ".x"], device=device, requires_grad=True)
    y, i = getattr(F, case["fn"])(x, **_kwargs(case["kwargs"]), return_indices=True,
                                  _random_samples=tt.tensor(DATA[name + ".u"], device=device))
    assert y.grad_fn.name() == case["node"] and y.is_contiguous()
    (gx,) = tt.autograd.grad(y, [x], tt.tensor(DATA[name + ".g"], device=device))
    np.testing.assert_array_equal(to_numpy(y.detach()), DATA[name + ".y"])
    np.testing.assert_array_equal(to_numpy(i), DATA[name + ".i"])
    np.testing.assert_allclose(to_numpy(gx), DATA[name + ".gx"], rtol=1e-12, atol=1e-12)


def test_fractional_max_pool_draws_its_samples():
    """Without _random_samples the windows come from tt.rand (the library's generator: seeded,
    the same windows); the module keeps given samples as a buffer."""
    x = tt.randn(2, 3, 10, 9)
    tt.manual_seed(3)
    a = F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5), return_indices=True)[1]
    tt.manual_seed(3)
    b = tt.nn.FractionalMaxPool2d(2, output_ratio=0.5, return_indices=True)(x)[1]
    assert tt.equal(a, b) and tuple(a.shape) == (2, 3, 5, 4)
    m = tt.nn.FractionalMaxPool3d(2, output_size=2, _random_samples=tt.rand(1, 2, 3))
    assert list(m.state_dict()) == ["_random_samples"] and tuple(m(tt.randn(1, 2, 4, 4, 4)).shape) == (1, 2, 2, 2, 2)
    for kwargs, message in (({}, "FractionalMaxPool2d requires specifying either an output size, or a pooling ratio"),
                            ({"output_size": 2, "output_ratio": 0.5},
                             "only one of output_size and output_ratio may be specified"),
                            ({"output_ratio": 1.5}, r"output_ratio must be between 0 and 1 \(got 1.5\)")):
        with pytest.raises(ValueError, match=f"^{message}$"):
            tt.nn.FractionalMaxPool2d(2, **kwargs)


# --------------------------------------------------------------------------- torch's errors
def _tensor(spec):
    t = tt.zeros(tuple(spec["shape"]), dtype=getattr(tt, spec["dtype"]))
    return t.fill_(spec["value"]) if "value" in spec else t


@pytest.mark.parametrize("case", META["errors"], ids=lambda c: f"{c['fn']}-{c['x']['shape']}-{c['kwargs']}")
def test_errors_are_torchs(case):
    kind, message = case["error"]
    kwargs = {k: _tensor(v) if isinstance(v, dict) else v for k, v in _kwargs(case["kwargs"]).items()}
    args = (kwargs.pop("norm_type"),) if case["fn"].startswith("lp_pool") else ()
    if "indices" in case:
        args = (_tensor(case["indices"]),)
    with pytest.raises(getattr(builtins, kind)) as e:
        getattr(F, case["fn"])(_tensor(case["x"]), *args, **kwargs)
    assert str(e.value) == message


# --------------------------------------------------------------------------- modules
def test_module_reprs_are_torchs():
    for case in META["modules"]:
        args = [tuple(a) if isinstance(a, list) else a for a in case["args"]]
        assert repr(getattr(tt.nn, case["cls"])(*args, **_kwargs(case["kwargs"]))) == case["repr"]


def test_modules_run_the_functions_and_hold_no_state():
    x = tt.tensor(DATA["max_pool2d_resnet.x"])
    m = tt.nn.MaxPool2d(3, 2, 1, return_indices=True)
    y, i = m(x)
    np.testing.assert_array_equal(to_numpy(y), DATA["max_pool2d_resnet.y"])
    np.testing.assert_array_equal(to_numpy(i), DATA["max_pool2d_resnet.i"])
    assert list(m.state_dict()) == [] and list(m.parameters()) == []
    u = tt.nn.MaxUnpool2d(3, 2, 1)(y, i, output_size=(9, 8))
    np.testing.assert_array_equal(to_numpy(u), unpool_definition(to_numpy(y), to_numpy(i), 2, (9, 8)))
    x2 = tt.tensor(DATA["adaptive_avg_pool2d_none.x"])
    np.testing.assert_allclose(to_numpy(tt.nn.AdaptiveAvgPool2d((None, 3))(x2)),
                               pool_definition(DATA["adaptive_avg_pool2d_none.x"], 2, "adaptive_avg",
                                               output_size=(None, 3)), rtol=1e-12)
    x1 = tt.tensor(DATA["lp_pool1d.x"])
    np.testing.assert_allclose(to_numpy(tt.nn.LPPool1d(3, 2)(x1)), DATA["lp_pool1d.y"], rtol=1e-12)
    np.testing.assert_allclose(to_numpy(tt.nn.AvgPool1d(3, 2, 1, count_include_pad=False)(
        tt.tensor(DATA["avg_pool1d_padded.x"]))), DATA["avg_pool1d_padded.y"], rtol=1e-12)


def test_resnet_head_and_stem():
    """torchvision's ResNet: maxpool (3, 2, 1) after the stem, avgpool to (1, 1) before fc (a
    mean, MeanBackward1, as torch; channels_last stays channels_last)."""
    x = tt.randn(2, 4, 9, 9, requires_grad=True)
    y = tt.nn.AdaptiveAvgPool2d((1, 1))(tt.nn.MaxPool2d(3, 2, 1)(x))
    assert tuple(y.shape) == (2, 4, 1, 1) and y.grad_fn.name() == "MeanBackward1"
    np.testing.assert_allclose(to_numpy(y.detach())[..., 0, 0],
                               pool_definition(to_numpy(x.detach()), 2, "max", kernel_size=3, stride=2,
                                               padding=1)[0].mean((-1, -2)), rtol=1e-5)
    xc = x.detach().contiguous(memory_format=tt.channels_last)
    assert F.max_pool2d(xc, 3, 2, 1).is_contiguous(memory_format=tt.channels_last)
    assert tuple(F.adaptive_avg_pool2d(xc, 1).stride()) == (4, 1, 4, 4)


# --------------------------------------------------------------------------- semantics torch defines
def test_nan_propagates_ties_keep_the_first_and_minus_inf_is_a_value(device):
    x = tt.tensor([[[1.0, float("nan"), 2.0, float("nan"), 3.0, 3.0, -float("inf"), -float("inf")]]], device=device)
    y, i = F.max_pool1d(x, 2, return_indices=True)
    np.testing.assert_array_equal(to_numpy(y), [[[np.nan, np.nan, 3.0, -np.inf]]])
    np.testing.assert_array_equal(to_numpy(i), [[[1, 3, 4, 6]]])
    y, i = F.adaptive_max_pool1d(x, 1, return_indices=True)      # the last NaN wins
    assert np.isnan(to_numpy(y)).all() and int(i.item()) == 3
    # padding reads nothing: an inf next to it stays in its own windows only
    z = tt.tensor([[[float("inf"), 1.0, 2.0, 4.0]]], device=device, requires_grad=True)
    y = F.avg_pool1d(z, 2, 2, padding=1, count_include_pad=False)
    np.testing.assert_array_equal(to_numpy(y.detach()), [[[np.inf, 1.5, 4.0]]])
    (gz,) = tt.autograd.grad(y, [z], tt.ones_like(y))
    np.testing.assert_array_equal(to_numpy(gz), [[[1.0, 0.5, 0.5, 1.0]]])


def test_a_window_with_no_tap_inside_the_input(device):
    """Dilation past the padding can leave a window with no tap inside the input (torch allows
    it): its value is the lowest (-inf, as torch's), its gradient 0; its index is -1 here (torch
    writes a position outside the plane)."""
    x = tt.tensor([[[0.5, 2.0, 1.0]]], dtype=tt.float64, device=device, requires_grad=True)
    y, i = F.max_pool1d(x[..., :1], 2, 1, padding=1, dilation=2, return_indices=True)
    assert to_numpy(y.detach()).tolist() == [[[-np.inf]]] and i.item() == -1
    (g,) = tt.autograd.grad(y, [x], tt.ones_like(y))
    np.testing.assert_array_equal(to_numpy(g), [[[0.0, 0.0, 0.0]]])
    y, i = F.max_pool1d(x, 2, 1, padding=1, dilation=3, return_indices=True)     # one tap inside each
    np.testing.assert_array_equal(to_numpy(y.detach()), [[[1.0, 0.5]]])
    np.testing.assert_array_equal(to_numpy(i), [[[2, 0]]])


def test_with_indices_forms_return_the_pair():
    x = tt.tensor(DATA["max_pool2d_resnet.x"])
    for pair in (F.max_pool2d_with_indices(x, 3, 2, 1), tt.max_pool1d_with_indices(x[0], 3, 2, 1),
                 F.max_pool3d_with_indices(x, 2, return_indices=False), F.adaptive_max_pool2d_with_indices(x, 3),
                 F.adaptive_max_pool1d_with_indices(x[0], 2), F.adaptive_max_pool3d_with_indices(x, 2),
                 F.fractional_max_pool2d_with_indices(x, 2, 3), F.fractional_max_pool3d_with_indices(x, 2, 1)):
        assert isinstance(pair, tuple) and len(pair) == 2 and pair[1].dtype is tt.int64
    np.testing.assert_array_equal(to_numpy(F.max_pool2d_with_indices(x, 3, 2, 1)[1]), DATA["max_pool2d_resnet.i"])


def test_integer_pooling_on_the_cpu():
    x = tt.tensor([[[[7, -3, 2], [5, 9, -8], [1, 1, 4]]]])
    y, i = F.max_pool2d(x, 2, 1, return_indices=True)
    assert y.dtype is tt.int64
    np.testing.assert_array_equal(to_numpy(y), [[[[9, 9], [9, 9]]]])
    np.testing.assert_array_equal(to_numpy(i), [[[[4, 4], [4, 4]]]])
    # torch's integer average truncates toward zero: (7 - 3 + 5 + 9) / 4 = 4.5 -> 4, (-3 + 2 + 9 - 8) / 4 = 0
    np.testing.assert_array_equal(to_numpy(F.avg_pool2d(x, 2, 1)), [[[[4, 0], [4, 1]]]])


def test_gradients_are_gathers_deterministic_on_cuda():
    """Overlapping windows (kernel 3, stride 1) pick the same max for several outputs: the
    input-gradient kernel sums them per input element, in a fixed order (the same bits twice)."""
    rng = np.random.default_rng(5)
    x = tt.tensor(rng.standard_normal((1, 3, 9, 9)).astype(np.float32), device="cuda", requires_grad=True)
    g = tt.tensor(rng.standard_normal((1, 3, 7, 7)).astype(np.float32), device="cuda")
    y, i = F.max_pool2d(x, 3, 1, return_indices=True)
    runs = [to_numpy(tt.autograd.grad(y, [x], g, retain_graph=True)[0]) for _ in range(2)]
    np.testing.assert_array_equal(runs[0], runs[1])
    expected = np.zeros(81 * 3, np.float64)
    np.add.at(expected, (np.arange(3)[:, None] * 81 + to_numpy(i).reshape(3, -1)).reshape(-1),
              to_numpy(g).reshape(-1))
    np.testing.assert_allclose(runs[0].reshape(-1), expected, rtol=1e-6, atol=1e-6)


# --------------------------------------------------------------------------- derivatives (float64, cpu)
def _r(shape):
    return tt.tensor(np.random.default_rng(sum(shape)).standard_normal(shape), dtype=tt.float64, requires_grad=True)


GRAD = {
    "max_pool1d": (lambda x: F.max_pool1d(x, 3, 2, padding=1, dilation=1, ceil_mode=True), (1, 2, 6)),
    "max_pool3d": (lambda x: F.max_pool3d(x, 2, 1, padding=(1, 0, 0)), (1, 1, 2, 3, 2)),
    "avg_pool1d": (lambda x: F.avg_pool1d(x, 3, 2, padding=1, ceil_mode=True), (1, 2, 6)),
    "avg_pool2d_divisor": (lambda x: F.avg_pool2d(x, (2, 3), 2, padding=(1, 1), divisor_override=4), (1, 1, 3, 4)),
    "avg_pool3d": (lambda x: F.avg_pool3d(x, 2, 1, count_include_pad=False, padding=1), (1, 1, 2, 2, 3)),
    "adaptive_avg_pool1d": (lambda x: F.adaptive_avg_pool1d(x, 3), (2, 5)),
    "adaptive_avg_pool2d": (lambda x: F.adaptive_avg_pool2d(x, (2, 3)), (1, 1, 3, 4)),
    "adaptive_avg_pool3d": (lambda x: F.adaptive_avg_pool3d(x, (2, 1, 2)), (1, 1, 3, 2, 3)),
    "adaptive_max_pool2d": (lambda x: F.adaptive_max_pool2d(x, (2, 3)), (1, 1, 3, 4)),
    "adaptive_max_pool3d": (lambda x: F.adaptive_max_pool3d(x, 2), (1, 1, 3, 2, 3)),
    "lp_pool2d": (lambda x: F.lp_pool2d(x * x + 0.5, 2.0, 2), (1, 1, 4, 4)),
    "max_unpool1d": (lambda x: F.max_unpool1d(x, tt.tensor([[[1, 2, 5]]]), 2), (1, 1, 3)),
    "fractional_max_pool2d": (lambda x: F.fractional_max_pool2d(x, 2, (2, 3), _random_samples=tt.tensor(
        [[[0.3, 0.8]]], dtype=tt.float64)), (1, 1, 4, 5)),
    "fractional_max_pool3d": (lambda x: F.fractional_max_pool3d(x, (1, 2, 2), 2, _random_samples=tt.tensor(
        [[[0.1, 0.5, 0.9]]], dtype=tt.float64)), (1, 1, 2, 3, 3)),
}


@pytest.mark.parametrize("name", sorted(GRAD))
def test_first_and_second_derivatives_cpu(name):
    fn, shape = GRAD[name]
    x = (_r(shape),)
    assert gradcheck(fn, x)
    assert gradgradcheck(fn, x)
