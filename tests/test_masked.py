"""tt.masked against torch.masked's recorded answers (tests/data/masked_values.json.gz, written by
tests/data/make_masked_values.py with torch 2.13): op_db's sample inputs of the 19 masked.*
entries in every dtype tritensor has, their float64 gradients, and hand-written edge cases
(argument checks and their texts, fully masked-out rows, 0-d and size-0 inputs, dtype=).

The whole fixture replays on cpu; on the emulated cuda device a few samples per op run (the
kernels are the ones of sum, amax, softmax ...; tests/test_ops_table.py runs the parity records
of tests/opinfo_masked.py there too).
"""
import functools
import gzip
import json
import pathlib

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy

FIXTURE = pathlib.Path(__file__).parent / "data" / "masked_values.json.gz"
TOLERANCES = {"float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2), "float32": (1e-5, 1e-6),
              "float64": (1e-10, 1e-12)}
# torch's message where tritensor's names differ (type names and kernel names of the ops underneath)
MESSAGES = {}


@functools.lru_cache(maxsize=None)
def fixture():
    return json.loads(gzip.decompress(FIXTURE.read_bytes()))


def dec(v, device):
    if isinstance(v, dict):
        if "tuple" in v:
            return tuple(dec(x, device) for x in v["tuple"])
        dtype = getattr(tt, v["dtype"])
        if "values" not in v:
            return dtype
        values = np.array(v["values"], dtype=np.float64 if dtype.is_floating_point else None)
        if dtype is tt.bool:
            values = values.astype(bool)
        return tt.tensor(values.reshape(v["shape"]), dtype=dtype, device=device)
    return v


def _call(case, device, requires_grad=False):
    x = dec(case["input"], device)
    if requires_grad:
        x.requires_grad_(True)
    args = [dec(a, device) for a in case["args"]]
    kwargs = {k: dec(v, device) for k, v in case["kwargs"].items()}
    return x, getattr(tt.masked, case["op"].split(".", 1)[1])(x, *args, **kwargs)


def _compare(got, want):
    assert str(got.dtype) == "tritensor." + want["dtype"], (got.dtype, want["dtype"])
    assert list(got.shape) == want["shape"]
    expected = np.array(want["values"], dtype=np.float64).reshape(want["shape"])
    actual = to_numpy(got).astype(np.float64)
    if want["dtype"] in TOLERANCES:
        rtol, atol = TOLERANCES[want["dtype"]]
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(actual, expected)


def _check(case, device):
    if "error" in case:
        kind, message = case["error"]
        with pytest.raises(Exception) as info:
            _call(case, device)
        assert type(info.value).__name__ == kind, (case["op"], info.value)
        expected = message.replace("torch.", "tritensor.")
        assert str(info.value) == MESSAGES.get(f"{kind}: {message}", expected), case["op"]
        return
    _, out = _call(case, device)
    _compare(out, case["out"])


def _ids(cases):
    return [f"{i}-{c['op']}-{c['input']['dtype']}" for i, c in enumerate(cases)]


def _by_op(cases):
    ops = {}
    for case in cases:
        ops.setdefault(case["op"], []).append(case)
    return ops


def test_the_fixture_covers_every_masked_op_in_every_dtype_op_db_lists():
    ops = _by_op(fixture()["samples"])
    assert len(ops) == 19
    assert {c["input"]["dtype"] for c in ops["masked.sum"]} == {
        "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"}
    # op_db's masks include broadcast ones and fully masked-out slices
    masks = [c["kwargs"]["mask"] for c in fixture()["samples"] if isinstance(c["kwargs"].get("mask"), dict)]
    assert any(m["shape"] != c["input"]["shape"] for m, c in zip(masks, fixture()["samples"]))
    assert any(not any(m["values"]) for m in masks if m["values"])


@pytest.mark.parametrize("op", sorted(_by_op(fixture()["samples"])))
def test_op_db_samples_match_torch_on_cpu(op):
    for case in _by_op(fixture()["samples"])[op]:
        try:
            _check(case, "cpu")
        except Exception as e:
            raise AssertionError(f"{op} {case['input']['dtype']} {case['kwargs']}: {e}") from e


@pytest.mark.parametrize("op", sorted(_by_op(fixture()["samples"])))
def test_float64_gradients_match_torch_on_cpu(op):
    cases = [c for c in _by_op(fixture()["samples"])[op] if "grad" in c]
    if op in ("masked.argmax", "masked.argmin"):
        assert not cases
        return
    assert cases
    for case in cases:
        x, out = _call(case, "cpu", requires_grad=True)
        w = tt.tensor(np.linspace(-1.5, 2.0, out.numel()), dtype=out.dtype).reshape(out.shape)
        (grad,) = tt.autograd.grad((out * w).sum(), x, allow_unused=True)
        _compare(grad if grad is not None else tt.zeros_like(x), case["grad"])


def _same_zero_signs(got, want):
    expected = np.array(want["values"], dtype=np.float64).reshape(want["shape"])
    actual = to_numpy(got).astype(np.float64)
    zeros = (expected == 0) & (actual == 0)
    np.testing.assert_array_equal(np.signbit(actual[zeros]), np.signbit(expected[zeros]))


@pytest.mark.parametrize("index", range(len(fixture()["special"])), ids=_ids(fixture()["special"]))
def test_nan_infinities_and_signed_zeros_match_torch_with_gradients(index):
    """Input with NaN, +-inf, -0.0 and +0.0, some masked out: torch's values (NaN where NaN, the
    sign of each zero) and torch's float64 gradient of (out * w).sum() (NaN where NaN; the signs of
    the gradient's zeros are not compared: masked.norm's backward gives -0.0 at an input of -0.0
    where torch's gives +0.0)."""
    case = fixture()["special"][index]
    x, out = _call(case, "cpu", requires_grad="grad" in case)
    _compare(out, case["out"])
    if out.dtype.is_floating_point:
        _same_zero_signs(out, case["out"])
    if "grad" in case:
        w = tt.tensor(np.linspace(-1.5, 2.0, out.numel()), dtype=out.dtype).reshape(out.shape)
        (grad,) = tt.autograd.grad((out * w).sum(), x, allow_unused=True)
        grad = grad if grad is not None else tt.zeros_like(x)
        _compare(grad, case["grad"])


@pytest.mark.parametrize("index", range(len(fixture()["cases"])), ids=_ids(fixture()["cases"]))
def test_edge_cases_match_torch_on_cpu(index):
    _check(fixture()["cases"][index], "cpu")


def test_a_few_samples_per_op_on_the_emulated_device(device):
    if device == "cpu":
        pytest.skip("the cpu device replays the whole fixture above")
    for op, cases in _by_op(fixture()["samples"]).items():
        floats = [c for c in cases if c["input"]["dtype"] == "float32" and "mask" in c["kwargs"]
                  and c["kwargs"]["mask"] is not None and c["input"]["shape"]]
        for case in (floats or [c for c in cases if c["input"]["dtype"] == "float32"])[:1]:
            _check(case, device)


def test_sparse_inputs_and_masked_tensor_are_not_implemented():
    x = tt.tensor([[1.0, 0.0], [0.0, 2.0]])
    with pytest.raises(NotImplementedError, match="sparse_coo input is not supported"):
        tt.masked.sum(x.to_sparse(), 1)
    with pytest.raises(NotImplementedError, match="MaskedTensor"):
        tt.masked.masked_tensor(x, x > 0)
    with pytest.raises(NotImplementedError, match="MaskedTensor"):
        tt.masked.as_masked_tensor(x, x > 0)
    with pytest.raises(NotImplementedError, match="MaskedTensor"):
        tt.masked.MaskedTensor(x, x > 0)


def test_a_sparse_coo_mask_is_read_as_its_dense_values():
    # torch: masked.sum(x, 1, mask=m.to_sparse()) == masked.sum(x, 1, mask=m) == [4, 0]
    x = tt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    m = tt.tensor([[True, False, True], [False, False, False]])
    assert tt.masked.sum(x, 1, mask=m.to_sparse()).tolist() == [4.0, 0.0]
    assert tt.masked.amax(x, 0, mask=m[0].to_sparse()).tolist() == [4.0, float("-inf"), 6.0]


def test_a_non_tensor_input_raises_torchs_attribute_error():
    with pytest.raises(AttributeError, match="'int' object has no attribute 'layout'"):
        tt.masked.sum(3, 1)


def test_the_mask_takes_no_gradient_and_masked_out_elements_get_zero():
    # d/dx of masked.sum: 1 where valid, 0 where masked out (torch's where backward)
    x = tt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    m = tt.tensor([True, False, True])
    tt.masked.sum(x, mask=m).backward()
    assert x.grad.tolist() == [[1.0, 0.0, 1.0], [1.0, 0.0, 1.0]]
