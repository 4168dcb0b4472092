"""Convolutions and padding (ops/conv.py, ops/padding.py, nn/modules/conv.py) against torch's
recorded values and errors (tests/data/conv_torch_values.npz, written by
tests/data/make_conv_torch_values.py) and the definitions in tests/opinfo_conv.py.

The emulated cuda device runs the Triton kernels (~0.1 s a launch): its cases are few and small
but cross tile edges (M past 32 rows, K past a 16-wide step, two split-K slices), and cover the
kernels' special paths (residue classes no tap reaches, 1x1 as a matmul, channels_last).
"""
import builtins
import json
import math
import pathlib
import re
import warnings

import numpy as np
import pytest

import tritensor as tt
import tritensor.nn.functional as F
from conftest import to_numpy
import opinfo  # noqa: F401,I001  (first: it imports every opinfo_<family> module, this one's included)
from opinfo_conv import conv_definition, conv_transpose_definition, weight_grad_definition
from tritensor.autograd import gradcheck, gradgradcheck

DATA = np.load(pathlib.Path(__file__).parent / "data" / "conv_torch_values.npz")
META = json.loads(str(DATA["meta"]))
CONV_CASES = {c["name"]: c for c in META["conv"]}
# the cases the emulated device runs too (each ~3-4 launches forward + backward)
CUDA_CASES = ("conv2d_strided_dilated_groups", "conv2d_same_even", "conv2d_pointwise", "conv1d_strided_dilated",
              "conv3d_mixed", "conv_transpose2d_full", "conv_transpose1d_strided")


def _t(a, device, dtype=tt.float64, grad=True):
    return tt.tensor(np.asarray(a), dtype=dtype, device=device, requires_grad=grad)


def _run_case(case, device, dtype):
    n = case["name"]
    args = [_t(DATA[n + ".x"], device, dtype), _t(DATA[n + ".w"], device, dtype)]
    if case["bias"]:
        args.append(_t(DATA[n + ".b"], device, dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")    # padding='same' with an even kernel warns, as torch
        y = getattr(F, case["fn"])(args[0], args[1], args[2] if case["bias"] else None, **case["kwargs"])
    grads = tt.autograd.grad(y, args, tt.tensor(DATA[n + ".g"], dtype=dtype, device=device))
    return y, grads


@pytest.mark.parametrize("name", sorted(CONV_CASES))
def test_values_and_gradients_match_torch_cpu(name):
    y, grads = _run_case(CONV_CASES[name], "cpu", tt.float64)
    assert y.grad_fn.name() in ("ConvolutionBackward0", "SqueezeBackward1")
    np.testing.assert_allclose(to_numpy(y), DATA[name + ".y"], rtol=1e-12, atol=1e-12)
    for g, key in zip(grads, ("gx", "gw", "gb")):
        np.testing.assert_allclose(to_numpy(g), DATA[f"{name}.{key}"], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", CUDA_CASES)
def test_values_and_gradients_match_torch_cuda(name):
    y, grads = _run_case(CONV_CASES[name], "cuda", tt.float32)
    assert y.device.type == "cuda"
    np.testing.assert_allclose(to_numpy(y), DATA[name + ".y"], rtol=1e-5, atol=2e-5)
    for g, key in zip(grads, ("gx", "gw", "gb")):
        np.testing.assert_allclose(to_numpy(g), DATA[f"{name}.{key}"], rtol=1e-5, atol=2e-5)


PAD_CASES = [(c, "cpu") for c in META["pad"]] + [(c, "cuda") for c in META["pad"] if c["name"].endswith("2d")]


@pytest.mark.parametrize("case,device", PAD_CASES, ids=lambda v: v["name"] if isinstance(v, dict) else v)
def test_pad_matches_torch(case, device):
    n = case["name"]
    x = _t(DATA[n + ".x"], device)
    y = F.pad(x, **case["kwargs"])
    assert y.grad_fn.name() == case["node"]
    (gx,) = tt.autograd.grad(y, [x], tt.tensor(DATA[n + ".g"], dtype=tt.float64, device=device))
    np.testing.assert_array_equal(to_numpy(y), DATA[n + ".y"])
    np.testing.assert_allclose(to_numpy(gx), DATA[n + ".gx"], rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------- torch's errors
def _zeros(spec):
    shape, dtype = spec
    return tt.zeros(tuple(shape), dtype=getattr(tt, dtype))


@pytest.mark.parametrize("case", META["errors"], ids=lambda c: f"{c['fn']}-{c['x'][0]}-{c['w'][0]}-{c['kwargs']}")
def test_errors_are_torchs(case):
    kind, message = case["error"]
    b = None if case["b"] is None else _zeros(case["b"])
    kwargs = {k: tuple(v) if isinstance(v, list) and case["fn"] != "conv2d" else v for k, v in case["kwargs"].items()}
    with pytest.raises(getattr(builtins, kind)) as e:
        getattr(F, case["fn"])(_zeros(case["x"]), _zeros(case["w"]), b, **kwargs)
    if "invalid combination" in message:   # torch lists the arguments as they were passed
        head, _, tail = message.partition(", but expected one of:")
        assert str(e.value).startswith("conv2d() received an invalid combination of arguments - got (Tensor, Tensor")
        assert str(e.value).endswith(", but expected one of:" + tail)
    else:
        assert str(e.value) == message


def _set_free(message):
    """The message with its {...} set sorted (torch prints a Python set in hash order)."""
    return re.sub(r"\{([^}]*)\}", lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", message)


@pytest.mark.parametrize("case", META["module_errors"], ids=lambda c: f"{c['cls']}-{c['kwargs']}")
def test_module_errors_are_torchs(case):
    kind, message = case["error"]
    with pytest.raises(ValueError) as e:
        getattr(tt.nn, case["cls"])(*case["args"], **case["kwargs"])
    assert kind == "ValueError" and _set_free(str(e.value)) == _set_free(message)


def test_integer_convolutions_run_on_the_cpu_only():
    rng = np.random.default_rng(3)
    x, w = rng.integers(-3, 4, (2, 3, 5, 4)), rng.integers(-3, 4, (4, 3, 2, 2))
    y = F.conv2d(tt.tensor(x, dtype=tt.int32), tt.tensor(w, dtype=tt.int32), stride=(1, 2))
    assert y.dtype is tt.int32
    np.testing.assert_array_equal(to_numpy(y), conv_definition(x, w, stride=(1, 2)).astype(np.int64))
    with pytest.raises(NotImplementedError, match="^\"slow_conv2d_cuda\" not implemented for 'Int'$"):
        F.conv2d(tt.tensor(x, dtype=tt.int32, device="cuda"), tt.tensor(w, dtype=tt.int32, device="cuda"))


def test_pad_errors_are_torchs():
    x = tt.zeros(1, 2, 3, 4)
    cases = [
        (lambda: F.pad(x, (1,)), RuntimeError, "Padding length must be divisible by 2"),
        (lambda: F.pad(x, (1, 1) * 5), RuntimeError, "Padding length should be less than or equal to two times the "
                                                     "input dimension but got padding length 10 and input of dimension 4"),
        (lambda: F.pad(x, (1, 1), mode="reflect"), NotImplementedError, "Padding size 2 is not supported for 4D input "
                                                                        "tensor.\nSupported combinations"),
        (lambda: F.pad(x, (4, 1, 1, 1), mode="reflect"), RuntimeError,
         "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (4, 1) at "
         "dimension 3 of input [1, 2, 3, 4]"),
        (lambda: F.pad(x, (1, 1, 3, 1), mode="reflect"), RuntimeError,
         "Argument #6: Padding size should be less than the corresponding input dimension, but got: padding (3, 1) at "
         "dimension 2 of input [1, 2, 3, 4]"),
        (lambda: F.pad(x, (-2, -2, -1, -2), mode="reflect"), RuntimeError,
         "input (H: 3, W: 4) is too small. Calculated output H: 0 W: 0"),
        (lambda: F.pad(x, (-2, -2, -1, -2), mode="replicate"), RuntimeError,
         "input (H: 3, W: 4 ) is too small. Calculated output H: 0 W: 0"),
        (lambda: F.pad(tt.zeros(1, 2, 5), (-6, 1), mode="replicate"), RuntimeError,
         "input (W: 5) is too small. Calculated output W: 0"),
        (lambda: F.pad(tt.zeros(2, 0, 3, 4), (1, 1, 1, 1), mode="reflect"), RuntimeError,
         "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but "
         "got: [2, 0, 3, 4]"),
        (lambda: F.pad(tt.zeros(1, 2, 5), (6, 1), mode="circular"), RuntimeError,
         "Padding value causes wrapping around more than once."),
        (lambda: F.pad(x, (1, 1), mode="reflect", value=1.0), RuntimeError,
         "Padding mode \"reflect\" doesn't take in value argument"),
        (lambda: F.pad(x.bool(), (1, 1, 1, 1), mode="reflect"), NotImplementedError,
         "\"reflection_pad2d\" not implemented for 'Bool'"),
        (lambda: F.pad(x, (1, 1), mode="foo"), NotImplementedError, "Unrecognised padding mode foo"),
        (lambda: F.pad(x, (1.5, 1)), TypeError, "pad(): argument 'pad' (position 2) must be tuple of ints, but found "
                                                "element of type float at pos 0"),
        (lambda: F.pad(x, 3), TypeError, "pad(): argument 'pad' (position 2) must be tuple of ints, not int"),
        (lambda: F.pad(x, (-3, -2)), RuntimeError, "narrow(): length must be non-negative."),
        (lambda: tt.constant_pad_nd(x, (1,)), RuntimeError, "Length of pad must be even but instead it equals 1"),
    ]
    for fn, kind, message in cases:
        with pytest.raises(kind) as e:
            fn()
        assert str(e.value).startswith(message), (str(e.value), message)


# --------------------------------------------------------------------------- the modules
def test_modules_match_torch_with_padding_modes_and_reprs():
    for case in META["modules"]:
        n = case["name"]
        args = [tuple(a) if isinstance(a, list) else a for a in case["args"]]
        kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in case["kwargs"].items()}
        m = getattr(tt.nn, case["cls"])(*args, **kwargs, dtype=tt.float64)
        assert repr(m) == case["repr"]
        m.load_state_dict({"weight": tt.tensor(DATA[n + ".w"]), "bias": tt.tensor(DATA[n + ".b"])})
        np.testing.assert_allclose(to_numpy(m(tt.tensor(DATA[n + ".x"]))), DATA[n + ".y"], rtol=1e-12, atol=1e-12)


def test_module_parameters_attributes_and_initialisation():
    tt.manual_seed(0)
    m = tt.nn.Conv2d(6, 8, (3, 5), groups=2)
    assert list(m.state_dict()) == ["weight", "bias"] and tuple(m.weight.shape) == (8, 3, 3, 5)
    assert (m.kernel_size, m.stride, m.padding, m.dilation, m.output_padding) == ((3, 5), (1, 1), (0, 0), (1, 1), (0, 0))
    assert m.transposed is False and m.padding_mode == "zeros" and m._reversed_padding_repeated_twice == (0, 0, 0, 0)
    bound = 1 / math.sqrt(3 * 3 * 5)      # kaiming_uniform_(a=sqrt(5)) = U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    w, b = to_numpy(m.weight.detach()), to_numpy(m.bias.detach())
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound and np.abs(b).max() <= bound
    t = tt.nn.ConvTranspose3d(4, 6, 2, stride=2, groups=2, bias=False)
    assert tuple(t.weight.shape) == (4, 3, 2, 2, 2) and t.bias is None and t.transposed is True
    assert repr(t) == "ConvTranspose3d(4, 6, kernel_size=(2, 2, 2), stride=(2, 2, 2), groups=2, bias=False)"
    same = tt.nn.Conv2d(1, 1, (4, 3), padding="same", dilation=(1, 2))
    assert same._reversed_padding_repeated_twice == [2, 2, 1, 2]
    y = tt.nn.ConvTranspose2d(4, 8, 3, stride=2)(tt.randn(1, 4, 5, 5), output_size=[1, 8, 12, 12])
    assert tuple(y.shape) == (1, 8, 12, 12)
    with pytest.raises(ValueError, match=r"^ConvTranspose2D: for 4D input, output_size must have 2 or 4 elements "
                                         r"\(got 1\)$"):
        tt.nn.ConvTranspose2d(4, 8, 3, stride=2)(tt.randn(1, 4, 5, 5), output_size=[11])


# --------------------------------------------------------------------------- layouts
def test_channels_last_in_channels_last_out(device):
    x = tt.randn(2, 3, 5, 4, device=device).contiguous(memory_format=tt.channels_last).requires_grad_()
    w = tt.randn(4, 3, 3, 3, device=device, requires_grad=True)
    y = F.conv2d(x, w, padding=1)
    assert y.is_contiguous(memory_format=tt.channels_last) and not y.is_contiguous()
    (gx,) = tt.autograd.grad(y.sum(), [x])
    assert gx.is_contiguous(memory_format=tt.channels_last)
    np.testing.assert_allclose(to_numpy(y), conv_definition(to_numpy(x), to_numpy(w), padding=1), rtol=1e-4, atol=1e-4)
    y3 = F.conv3d(tt.randn(1, 2, 3, 3, 3, device=device).contiguous(memory_format=tt.channels_last_3d),
                  tt.randn(2, 2, 1, 1, 1, device=device))
    assert y3.is_contiguous(memory_format=tt.channels_last_3d)
    assert F.conv2d(tt.randn(1, 3, 4, 4, device=device), w).is_contiguous()


def test_empty_batches_and_channels(device):
    w = tt.randn(4, 3, 3, 3, device=device)
    assert tuple(F.conv2d(tt.randn(0, 3, 5, 5, device=device), w).shape) == (0, 4, 3, 3)
    y = F.conv2d(tt.randn(2, 0, 5, 5, device=device), tt.randn(4, 0, 3, 3, device=device), tt.ones(4, device=device))
    np.testing.assert_array_equal(to_numpy(y), np.ones((2, 4, 3, 3)))
    assert tuple(F.conv_transpose2d(tt.randn(2, 8, 2, 2, device=device), tt.randn(8, 4, 3, 3, device=device),
                                    padding=2).shape) == (2, 4, 0, 0)


def test_unbatched_input_squeezes_back():
    x = tt.randn(3, 5, 5, requires_grad=True)
    y = F.conv2d(x, tt.randn(2, 3, 3, 3), padding=1)
    assert tuple(y.shape) == (2, 5, 5) and y.grad_fn.name() == "SqueezeBackward1"
    assert y.grad_fn.next_functions[0][0].name() == "ConvolutionBackward0"


# --------------------------------------------------------------------------- the kernels' special paths
def _cuda_vs_definition(x, w, b, kind, **kw):
    xt, wt = tt.tensor(x, device="cuda"), tt.tensor(w, device="cuda")
    bt = None if b is None else tt.tensor(b, device="cuda")
    y = getattr(F, kind)(xt, wt, bt, **kw)
    oracle = conv_transpose_definition if "transpose" in kind else conv_definition
    np.testing.assert_allclose(to_numpy(y), oracle(x, w, b, **kw), rtol=1e-4, atol=1e-4)


def test_input_gradient_residue_classes_on_cuda():
    """The transposed convolution (the input-gradient kernel) where some residue classes of the
    stride get no tap at all (stride 3 past a 2-tap kernel; stride 2 with dilation 2: every tap
    lands on even pixels) and where the output padding adds pixels no tap reaches."""
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((2, 3, 4, 3)).astype(np.float32), rng.standard_normal((3, 2, 2, 2)).astype(np.float32)
    _cuda_vs_definition(x, w, None, "conv_transpose2d", stride=(3, 2), dilation=(1, 2), output_padding=(2, 1))
    x1, w1 = rng.standard_normal((1, 2, 9)).astype(np.float32), rng.standard_normal((2, 3, 1)).astype(np.float32)
    _cuda_vs_definition(x1, w1, rng.standard_normal(3).astype(np.float32), "conv_transpose1d", stride=2,
                        output_padding=1)


def test_weight_gradient_is_split_deterministic_and_right_on_cuda():
    """K = 2 * 8 * 8 = 128 pixels: two split-K slices of the weight gradient, summed in a fixed
    order: the same bits on every run."""
    rng = np.random.default_rng(8)
    x, g = rng.standard_normal((2, 3, 8, 8)).astype(np.float32), rng.standard_normal((2, 4, 8, 8)).astype(np.float32)
    attrs = dict(weight_shape=(4, 3, 3, 3), stride=(1, 1), padding=(1, 1), dilation=(1, 1), groups=1)
    from tritensor.ops.conv import convolution_weight_grad
    runs = [to_numpy(convolution_weight_grad(tt.tensor(g, device="cuda"), tt.tensor(x, device="cuda"),
                                             attrs["weight_shape"], (1, 1), (1, 1), (1, 1), 1)) for _ in range(2)]
    np.testing.assert_array_equal(runs[0], runs[1])
    np.testing.assert_allclose(runs[0], weight_grad_definition(g.astype(np.float64), x.astype(np.float64),
                                                               **attrs), rtol=1e-4, atol=1e-4)


def test_pointwise_convolutions_run_as_matmuls_on_cuda(monkeypatch):
    """A 1x1 stride-1 convolution (grouped, channels_last or not) and its gradients go through
    the matmul kernel, never the convolution kernels."""
    from tritensor.backends.triton import conv as tconv
    monkeypatch.setattr(tconv, "_kernels", lambda: pytest.fail("a 1x1 convolution launched a conv kernel"))
    rng = np.random.default_rng(9)
    x, w = rng.standard_normal((2, 4, 3, 5)).astype(np.float32), rng.standard_normal((6, 2, 1, 1)).astype(np.float32)
    xt = tt.tensor(x, device="cuda").contiguous(memory_format=tt.channels_last).requires_grad_()
    wt = tt.tensor(w, device="cuda", requires_grad=True)
    y = F.conv2d(xt, wt, groups=2)
    np.testing.assert_allclose(to_numpy(y), conv_definition(x, w, groups=2), rtol=1e-5, atol=1e-5)
    gx, gw = tt.autograd.grad(y, [xt, wt], tt.ones_like(y))
    g = np.ones(y.shape)
    np.testing.assert_allclose(to_numpy(gw), weight_grad_definition(g, x, w.shape, (1, 1), (0, 0), (1, 1), 2),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(to_numpy(gx), conv_transpose_definition(g, w, groups=2), rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------- derivatives (float64)
def _r(shape, device="cpu"):
    return _t(np.random.default_rng(abs(hash(shape)) % 2 ** 32).standard_normal(shape), device)


GRAD = {
    "conv1d": (lambda x, w, b: F.conv1d(x, w, b, stride=2, padding="valid", dilation=2, groups=2),
               ((1, 2, 7), (4, 1, 2), (4,))),
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2),
               ((2, 4, 4, 5), (2, 2, 2, 2), (2,))),
    "conv2d_same": (lambda x, w: F.conv2d(x, w, padding="same"), ((1, 2, 3, 3), (1, 2, 2, 3))),
    "conv3d": (lambda x, w: F.conv3d(x, w, padding=(1, 0, 1), stride=(1, 2, 1)), ((1, 2, 3, 3, 2), (2, 2, 2, 2, 2))),
    "conv_transpose1d": (lambda x, w, b: F.conv_transpose1d(x, w, b, stride=3, dilation=2, output_padding=2),
                         ((1, 2, 3), (2, 1, 2), (1,))),
    "conv_transpose2d": (lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1, groups=2),
                         ((1, 2, 3, 2), (2, 2, 3, 2))),
    "conv_transpose3d": (lambda x, w: F.conv_transpose3d(x, w, stride=(1, 2, 1), output_padding=(0, 1, 0)),
                         ((1, 1, 2, 2, 2), (1, 2, 2, 1, 2))),
    "pad_reflect": (lambda x: F.pad(x, (2, 1, 1, -1), mode="reflect"), ((1, 2, 3, 4),)),
    "pad_replicate": (lambda x: F.pad(x, (1, 0, 2, 1, 1, 1), mode="replicate"), ((1, 2, 2, 3),)),
    "pad_circular": (lambda x: F.pad(x, (2, -1), mode="circular"), ((2, 4),)),
    "pad_constant": (lambda x: F.pad(x, (1, -1, 0, 2), value=2.0), ((2, 3),)),
}


@pytest.mark.parametrize("name", sorted(GRAD))
def test_first_and_second_derivatives_cpu(name):
    fn, shapes = GRAD[name]
    inputs = tuple(_r(s) for s in shapes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert gradcheck(fn, inputs)
        assert gradgradcheck(fn, inputs)


def test_first_derivatives_cuda():
    fn, shapes = GRAD["conv2d"]
    assert gradcheck(fn, tuple(_r(s, "cuda") for s in ((1, 4, 3, 3), (2, 2, 2, 2), (2,))))
