"""tt.testing: assert_close reports exactly what torch.testing.assert_close reports (messages
copied from torch 2.13), make_tensor follows torch.testing.make_tensor, and the cross-device
helpers run one body on cpu and cuda and catch a difference."""
import math
import unittest

import numpy as np
import pytest

import tritensor as tt
from tritensor.testing import assert_close, compare_devices, make_tensor, run_on_devices


def _message(actual, expected, **kw):
    with pytest.raises(AssertionError) as info:
        assert_close(actual, expected, **kw)
    return str(info.value)


def test_close_tensors_pass_within_dtype_tolerances():
    assert_close(tt.tensor([1.0, 2.0]), tt.tensor([1.0, 2.0 + 2e-6]))           # float32: 1.3e-6 * 2 + 1e-5
    assert_close(tt.tensor([1.0], dtype=tt.float16), tt.tensor([1.0009], dtype=tt.float16))
    assert_close(tt.tensor([1.0], dtype=tt.bfloat16), tt.tensor([1.0078125], dtype=tt.bfloat16))
    assert_close(tt.tensor([math.inf, -math.inf]), tt.tensor([math.inf, -math.inf]))
    assert_close(tt.tensor([math.nan]), tt.tensor([math.nan]), equal_nan=True)
    assert_close(np.array([1.0, 2.0]), np.array([1.0, 2.0]))
    assert_close({"a": [1, 2.0], "b": (tt.tensor(3),)}, {"a": [1, 2.0], "b": (tt.tensor(3),)})


def test_float32_mismatch_report_is_torchs():
    assert _message(tt.tensor([1.0, 2.0, 3.0]), tt.tensor([1.0, 2.5, 3.0])) == (
        "Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)")
    assert _message(tt.tensor([[1.0, 2.0], [3.0, 4]]), tt.tensor([[1.0, 2.0], [3.5, 4.5]])) == (
        "Tensor-likes are not close!\n\nMismatched elements: 2 / 4 (50.0%)\n"
        "Greatest absolute difference: 0.5 at index (1, 0) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.1428571492433548 at index (1, 0) (up to 1.3e-06 allowed)")


def test_integer_bool_and_special_value_reports():
    assert _message(tt.tensor([1, 2]), tt.tensor([1, 3])) == (
        "Tensor-likes are not equal!\n\nMismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 1 at index (1,)\n"
        "Greatest relative difference: 0.3333333432674408 at index (1,)")
    assert _message(tt.tensor([True]), tt.tensor([False])) == (
        "Tensor-likes are not equal!\n\nMismatched elements: 1 / 1 (100.0%)\n"
        "Greatest absolute difference: 1 at index (0,)\nGreatest relative difference: inf at index (0,)")
    assert _message(tt.tensor([math.inf]), tt.tensor([-math.inf])) == (
        "Tensor-likes are not close!\n\nMismatched elements: 1 / 1 (100.0%)\n"
        "Greatest absolute difference: inf at index (0,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: nan at index (0,) (up to 1.3e-06 allowed)")
    assert _message(tt.tensor([math.nan]), tt.tensor([math.nan])) == (
        "Tensor-likes are not close!\n\nMismatched elements: 1 / 1 (100.0%)\n"
        "Greatest absolute difference: nan at index (0,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: nan at index (0,) (up to 1.3e-06 allowed)")
    assert _message(tt.tensor([0.0, 1e-10]), tt.tensor([1e-3, 0.0])) == (
        "Tensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 0.0010000000474974513 at index (0,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 1.0 at index (0,) (up to 1.3e-06 allowed)")


def test_scalar_reports_and_zero_dim_tensors():
    assert _message(1.0, 1.5) == (
        "Scalars are not close!\n\nExpected 1.5 but got 1.0.\n"
        "Absolute difference: 0.5 (up to 1e-07 allowed)\nRelative difference: 0.3333333333333333 (up to 1e-07 allowed)")
    assert _message(1, 2) == (
        "Scalars are not equal!\n\nExpected 2 but got 1.\nAbsolute difference: 1\nRelative difference: 0.5")
    assert _message(tt.tensor(1.0), tt.tensor(2.0)) == (
        "Scalars are not close!\n\nExpected 2.0 but got 1.0.\n"
        "Absolute difference: 1.0 (up to 1e-05 allowed)\nRelative difference: 0.5 (up to 1.3e-06 allowed)")
    assert _message(True, False) == "Booleans mismatch: True is not False"
    assert _message(1, 1.0) == "The (d)types do not match: <class 'int'> != <class 'float'>."


def test_attribute_checks():
    assert _message(tt.tensor([1.0, 2.0]), tt.tensor([1.0, 2.0, 3.0])) == (
        "The values for attribute 'shape' do not match: tritensor.Size([2]) != tritensor.Size([3]).")
    assert _message(tt.tensor([1.0, 2.0]), tt.tensor([1.0, 2.0], dtype=tt.float64)) == (
        "The values for attribute 'dtype' do not match: tritensor.float32 != tritensor.float64.")
    assert _message(tt.zeros(2, 2).t(), tt.zeros(2, 2), check_stride=True) == (
        "The values for attribute 'stride()' do not match: (1, 2) != (2, 1).")
    assert_close(tt.zeros(2, 2).t(), tt.zeros(2, 2))                  # strides unchecked by default


def test_dtype_mismatch_allowed_compares_in_promoted_dtype_with_looser_tolerance():
    # float32 vs float64: compared in float64 (relative difference exactly 0.2), float32's tolerances
    assert _message(tt.tensor([1.0, 2.0]), tt.tensor([1.0, 2.5], dtype=tt.float64), check_dtype=False) == (
        "Tensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.2 at index (1,) (up to 1.3e-06 allowed)")
    assert "(up to 0.016 allowed)" in _message(tt.tensor([1.0, 2.0]), tt.tensor([1.0, 2.5]).bfloat16(),
                                               check_dtype=False)


def test_containers_name_the_failing_item():
    assert _message([tt.tensor(1.0), tt.tensor(2.0)], [tt.tensor(1.0), tt.tensor(3.0)]).endswith(
        "\n\nThe failure occurred for item [1]")
    assert _message({"a": tt.tensor(1.0)}, {"a": tt.tensor(3.0)}).endswith("The failure occurred for item ['a']")
    assert _message([[1.0, 2.0]], [[1.0, 2.5]]).endswith("The failure occurred for item [0][1]")
    assert _message([1, 2], [1, 2, 3]) == "The length of the sequences mismatch: 2 != 3"
    assert _message({"a": 1}, {"b": 1}) == ("The keys of the mappings do not match:\n"
                                            "Missing keys in the actual mapping: ['b']\n"
                                            "Additional keys in the actual mapping: ['a']")


def test_options_and_type_errors():
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol' must be either specified or omitted, but got no atol."):
        assert_close(tt.tensor([1.0]), tt.tensor([1.0]), rtol=1e-3)
    with pytest.raises(TypeError, match="No comparison pair was able to handle inputs of type"):
        assert_close(tt.tensor([1.0, 2.0]), [1.0, 2.0])
    with pytest.raises(TypeError, match="No comparison pair"):
        assert_close(tt.tensor([1.0]), np.array([1.0]))
    with pytest.raises(TypeError, match="No comparison pair"):
        assert_close("a", "b")
    assert _message(tt.tensor([1.0, 2.0]), tt.tensor([1.0, 3.0]), msg="custom") == "custom"
    assert _message(tt.tensor([1.0, 2.0]), tt.tensor([1.0, 3.0]), msg=lambda m: m + "!!").endswith("allowed)!!")
    assert _message(tt.tensor([1.0, 2.0]), tt.tensor([1.0, 2.5]), rtol=0.1, atol=0).endswith(
        "(up to 0 allowed)\nGreatest relative difference: 0.20000000298023224 at index (1,) (up to 0.1 allowed)")
    assert_close(tt.tensor([1.0, 2.0]), tt.tensor([1.0, 2.5]), rtol=0.3, atol=0)


def test_device_mismatch_and_cross_device(device):
    x = tt.tensor([1.0, 2.0], device=device)
    assert_close(x, tt.tensor([1.0, 2.0], device=device))
    if device == "cuda":
        assert _message(tt.tensor([1.0]), tt.tensor([1.0], device="cuda")) == (
            "The values for attribute 'device' do not match: cpu != cuda:0.")
        assert_close(tt.tensor([1.0]), tt.tensor([1.0], device="cuda"), check_device=False)


@pytest.mark.parametrize("dtype", [tt.bool, tt.uint8, tt.int32, tt.int64, tt.float16, tt.bfloat16, tt.float32, tt.float64])
def test_make_tensor_ranges(dtype):
    tt.manual_seed(0)
    x = make_tensor(40, 3, dtype=dtype, device="cpu")
    assert x.shape == (40, 3) and x.dtype == dtype and x.is_contiguous()
    v = x.numpy().astype(np.float64)
    if dtype is tt.bool:
        assert set(np.unique(v)) <= {0.0, 1.0}
    elif dtype is tt.uint8:
        assert v.min() >= 0 and v.max() < 10         # default low -9 is clamped to the dtype's 0
    elif dtype.is_floating_point:
        assert v.min() >= -9 and v.max() <= 9 and len(np.unique(v)) > 20
    else:
        assert v.min() >= -9 and v.max() < 10
    y = make_tensor((5,), dtype=dtype, device="cpu", low=2, high=4) if dtype is not tt.bool else None
    if y is not None:
        w = y.numpy().astype(np.float64)
        assert w.min() >= 2 and (w.max() < 4 if not dtype.is_floating_point else w.max() <= 4)


def test_make_tensor_options(device):
    x = make_tensor(2, 3, dtype=tt.float32, device=device, noncontiguous=True, requires_grad=True)
    assert x.shape == (2, 3) and x.stride() == (6, 2) and not x.is_contiguous() and x.requires_grad
    assert str(x.device).startswith(device)
    assert make_tensor((), dtype=tt.float32, device=device, noncontiguous=True).stride() == ()
    z = make_tensor(200, dtype=tt.int64, device=device, low=-1, high=2, exclude_zero=True)
    assert (z != 0).all().item()
    zf = make_tensor(50, dtype=tt.float16, device=device, low=0, high=1e-4, exclude_zero=True)
    assert (zf != 0).all().item()
    with pytest.raises(ValueError, match=r"`low` must be less than `high`, but got 5 >= 1"):
        make_tensor((2, 3), dtype=tt.float32, device=device, low=5, high=1)
    with pytest.raises(ValueError, match="`low` and `high` cannot be NaN, but got low=nan and high=9"):
        make_tensor((2, 3), dtype=tt.float32, device=device, low=float("nan"))
    with pytest.raises(ValueError, match="`requires_grad=True` is not supported for boolean and integral dtypes"):
        make_tensor(3, dtype=tt.int64, device=device, requires_grad=True)
    with pytest.raises(ValueError, match=r"The value interval specified by `low` and `high` is \[300, 400\), "
                                         r"but tritensor.uint8 only supports \[0, 256\)"):
        make_tensor(3, dtype=tt.uint8, device=device, low=300, high=400)


def test_make_tensor_same_values_on_every_device():
    tt.manual_seed(3)
    a = make_tensor(7, 5, dtype=tt.float32, device="cpu")
    tt.manual_seed(3)
    b = make_tensor(7, 5, dtype=tt.float32, device="cuda")
    assert np.array_equal(a.numpy(), b.cpu().numpy())


@compare_devices(rtol=1e-5, atol=1e-6)
def test_compare_devices_decorator_passes_on_agreeing_kernels(device):
    x = make_tensor(37, 5, dtype=tt.float32, device=device, requires_grad=True)
    y = (x.tanh() * 2 + x.exp() / 8).sum(1)
    y.sum().backward()
    return {"y": y, "grad": x.grad}


def test_run_on_devices_catches_a_device_difference():
    def differs(device):
        return tt.ones(3, device=device) * (2.0 if device == "cuda" else 1.0)
    with pytest.raises(AssertionError, match="cuda differs from the cpu reference: Tensor-likes are not close!"):
        run_on_devices(differs)
    run_on_devices(lambda device: tt.zeros(2, device=device).log(), equal_nan=True)


def test_run_on_devices_errors():
    def raises_everywhere(device):
        raise ValueError("bad input")
    run_on_devices(raises_everywhere, accept_error=ValueError)
    with pytest.raises(AssertionError, match="raised on cpu: ValueError: bad input"):
        run_on_devices(raises_everywhere)

    def raises_on_cuda(device):
        if device == "cuda":
            raise ValueError("only here")
        return tt.ones(1)
    with pytest.raises(AssertionError, match="the devices disagree about raising"):
        run_on_devices(raises_on_cuda, accept_error=ValueError)
    with pytest.raises(unittest.SkipTest):
        run_on_devices(lambda device: tt.ones(1), devices=["cpu"])


def test_plugin_fixtures(tt_device, cross_device):
    assert tt_device in ("cpu", "cuda")
    cross_device(lambda n, device: tt.arange(n, device=device).float().softmax(0), 40)


def test_finfo_iinfo_are_torchs():
    assert repr(tt.finfo(tt.float32)) == (
        "finfo(resolution=1e-06, min=-3.40282e+38, max=3.40282e+38, eps=1.19209e-07, "
        "smallest_normal=1.17549e-38, tiny=1.17549e-38, dtype=float32)")
    assert repr(tt.iinfo(tt.int8)) == "iinfo(min=-128, max=127, dtype=int8)"
    assert tt.finfo(tt.bfloat16).eps == 0.0078125 and tt.finfo(tt.float16).max == 65504.0
    assert tt.finfo().dtype == "float32" and tt.iinfo(tt.int64).max == 2 ** 63 - 1
    with pytest.raises(TypeError, match=r"torch.finfo\(\) requires a floating point input type"):
        tt.finfo(tt.int32)
    with pytest.raises(TypeError, match=r"torch.iinfo\(\) requires an integer input type"):
        tt.iinfo(tt.float32)
    with pytest.raises(TypeError, match="torch.bool is not supported by torch.iinfo"):
        tt.iinfo(tt.bool)
