"""The pointwise math of issue 21.2 (tritensor/ops/pointwise_math.py) against independent oracles:
values recorded from torch (tests/data/pointwise_math_values.json, written by
tests/data/make_pointwise_math_values.py), NumPy's libm for the kernels' accuracy in ulps, the
math module, and hand-computed values; torch's errors, out= rules, in-place forms, aliases,
gradients of every overload and torch's node names.

The parity and gradient records are in tests/opinfo_pointwise.py (run by test_ops_table.py and
test_op_gradients.py).
"""
import json
import math
import pathlib

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy
from tritensor.autograd import gradcheck, gradgradcheck
from tritensor.backends import triton as tb

DATA = json.loads((pathlib.Path(__file__).parent / "data" / "pointwise_math_values.json").read_text())
CASES = DATA["cases"]
# results torch computes with its libm (within a few ulps of the correctly rounded value, as ours)
TRANSCENDENTAL = {"acos", "asin", "atan", "asinh", "acosh", "atanh", "sinh", "cosh", "sinc", "atan2", "hypot",
                  "logaddexp", "logaddexp2", "xlogy", "logit", "float_power", "lerp", "addcdiv"}
ULPS = 4
# log(2^a + 2^b) = max + log1p(...) cancels where the result is near 0: torch's own error there is
# absolute (logaddexp2(-1, -1) is -1e-8 in its float32, exactly 0 in NumPy's)
ABSOLUTE = {"logaddexp", "logaddexp2"}


def _build(arg, device):
    if isinstance(arg, dict):
        return tt.tensor(arg["values"], dtype=getattr(tt, arg["dtype"]), device=device)
    return arg


def _run(case, device):
    args = [_build(a, device) for a in case["args"]]
    kwargs = {k: _build(v, device) for k, v in case["kwargs"].items()}
    op = case["op"]
    if op.startswith("Tensor."):
        return getattr(args[0], op[len("Tensor."):])(*args[1:], **kwargs)
    return getattr(tt, op)(*args, **kwargs)


def _decode(values):
    return np.array([float.fromhex(v) if v != "nan" else np.nan for v in values])


def _check_result(got, want, op):
    if "tuple" in want:
        assert isinstance(got, tuple) and len(got) == len(want["tuple"])
        for g, w in zip(got, want["tuple"]):
            _check_result(g, w, op)
        return
    assert str(got.dtype) == "tritensor." + want["dtype"], (got.dtype, want["dtype"])
    assert list(got.shape) == want["shape"]
    host = to_numpy(got).reshape(-1)
    if not got.dtype.is_floating_point:
        assert host.tolist() == want["values"]
        return
    expected = _decode(want["values"])
    host = host.astype(np.float64)
    assert np.array_equal(np.isnan(host), np.isnan(expected)), (host, expected)
    differ = ~np.isnan(host) & ((host != expected) | (np.signbit(host) != np.signbit(expected)))
    if op not in TRANSCENDENTAL:
        assert not differ.any(), (host[differ], expected[differ])      # signed zeros too
        return
    assert np.isfinite(expected[differ]).all(), (host[differ], expected[differ])
    scale = np.abs(expected[differ])
    if op in ABSOLUTE:
        scale = np.maximum(scale, 1.0)
    ulp = np.spacing(scale.astype(got.dtype.numpy_dtype)).astype(np.float64)
    assert (np.abs(host[differ] - expected[differ]) <= ULPS * ulp).all(), (host[differ], expected[differ])


VALUE_CASES = [c for c in CASES if "result" in c]
ERROR_CASES = [c for c in CASES if "error" in c]


def _case_id(c):
    args = ",".join(a["dtype"] if isinstance(a, dict) else repr(a) for a in c["args"])
    return f"{c['op']}({args})"


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_values_recorded_from_torch(device):
    """Every recorded case (NaN, infinities, signed zeros, subnormals, the atan2 quadrants,
    out-of-range shifts, gcd of the most negative integer ...) gives torch's dtype, shape and
    values: bit for bit, or within 4 ulps for the transcendental functions (torch's libm)."""
    failures = []
    for case in VALUE_CASES:
        try:
            _check_result(_run(case, device), case["result"], case["op"])
        except Exception as e:          # collect them all: one report names every failing case
            failures.append(f"{_case_id(case)}: {type(e).__name__}: {str(e)[:300]}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("case", ERROR_CASES, ids=[_case_id(c) for c in ERROR_CASES])
def test_errors_recorded_from_torch(case):
    kind, message = case["error"]
    with pytest.raises(getattr(__import__("builtins"), kind)) as info:
        _run(case, "cpu")
    assert str(info.value) == message


def test_kernel_names_in_errors_follow_the_device():
    with pytest.raises(NotImplementedError, match='^"hypot_cuda" not implemented for \'Long\'$'):
        tt.hypot(tt.ones(2, dtype=tt.int64, device="cuda"), tt.ones(2, dtype=tt.int64, device="cuda"))
    with pytest.raises(NotImplementedError, match='^"lshift_cuda" not implemented for \'Float\'$'):
        tt.ones(2, device="cuda") << 1


# --------------------------------------------------------------------------- accuracy in ulps
@pytest.fixture
def one_program(monkeypatch):
    """Whole test arrays in one interpreted program (each program costs the interpreter's
    per-op overhead, not per element)."""
    monkeypatch.setitem(tb.INTERPRETER_SETTINGS, "elementwise_block", 8192)


def _grid(rng, dtype):
    """Values where these functions are hard: near 0 (down to subnormals), near +-1, large."""
    tiny = 10.0 ** rng.uniform(-300 if dtype == np.float64 else -37, 0, 1500)
    big = 10.0 ** rng.uniform(0, 300 if dtype == np.float64 else 37, 1000)
    near_one = 1 - 10.0 ** rng.uniform(-15 if dtype == np.float64 else -7, -0.3, 1000)
    x = np.concatenate([tiny, -tiny, big, -big, near_one, -near_one, 2 - near_one, rng.uniform(-5, 5, 1500)])
    return x.astype(dtype)


UNARY_NUMPY = {"acos": np.arccos, "asin": np.arcsin, "atan": np.arctan, "asinh": np.arcsinh,
               "acosh": np.arccosh, "atanh": np.arctanh, "sinh": np.sinh, "cosh": np.cosh}
BINARY_NUMPY = {"atan2": np.arctan2, "hypot": np.hypot, "logaddexp": np.logaddexp, "logaddexp2": np.logaddexp2}


def _max_ulps(got, want, dtype, scale=None):
    """The largest error in ulps of ``want`` (of ``scale`` where given: an absolute error)."""
    got, want = got.astype(np.float64), want.astype(np.float64)
    both_nan = np.isnan(got) & np.isnan(want)
    assert not (np.isnan(got) ^ np.isnan(want)).any()
    ok = both_nan | (got == want)
    ulp = np.spacing(np.abs(want if scale is None else scale).astype(dtype)).astype(np.float64)
    err = np.where(ok, 0.0, np.abs(got - want) / np.where(ulp == 0, 1, ulp))
    return float(err.max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_kernel_accuracy_against_libm(dtype, one_program):
    """The emulated cuda kernels (Cephes' atan, log1p-based inverse hyperbolics, expm1-based sinh
    ...) within 3 ulps of NumPy's libm (float32: of the float64 result rounded once) on values
    near 0, near 1, large and random; NumPy's own float64 is within 1 ulp of the exact value.
    logaddexp's max + log1p(exp(-|a - b|)) (torch's and NumPy's formula) cancels near a zero
    result: its error is in ulps of the larger operand."""
    rng = np.random.default_rng(21)
    x = _grid(rng, dtype)
    y = _grid(rng, dtype)[rng.permutation(x.size)]
    with np.errstate(all="ignore"):
        for name, ref in UNARY_NUMPY.items():
            got = to_numpy(getattr(tt, name)(tt.tensor(x, device="cuda")))
            want = ref(x.astype(np.float64)).astype(dtype)
            assert _max_ulps(got, want, dtype) <= 3, name
        for name, ref in BINARY_NUMPY.items():
            got = to_numpy(getattr(tt, name)(tt.tensor(x, device="cuda"), tt.tensor(y, device="cuda")))
            want = ref(x.astype(np.float64), y.astype(np.float64)).astype(dtype)
            scale = np.maximum(np.maximum(np.abs(x), np.abs(y)), np.abs(want)) if name.startswith("logaddexp") else None
            assert _max_ulps(got, want, dtype, scale) <= 3, name


def test_exact_kernels_against_numpy(one_program):
    """ldexp, frexp, nextafter and copysign are exact: bit for bit NumPy's (math.ldexp's) values."""
    rng = np.random.default_rng(5)
    for dtype, span in ((np.float64, 1100), (np.float32, 160)):
        x = (rng.standard_normal(3000) * 10.0 ** rng.uniform(-30, 30, 3000)).astype(dtype)
        e = rng.integers(-span, span, 3000)
        got = to_numpy(tt.ldexp(tt.tensor(x, device="cuda"), tt.tensor(e, device="cuda")))
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(got, np.ldexp(x, e.astype(np.int32)))
        mantissa, exponent = tt.frexp(tt.tensor(x, device="cuda"))
        want_m, want_e = np.frexp(x)
        np.testing.assert_array_equal(to_numpy(mantissa), want_m)
        np.testing.assert_array_equal(to_numpy(exponent), want_e)
        y = x[rng.permutation(x.size)]
        np.testing.assert_array_equal(to_numpy(tt.nextafter(tt.tensor(x, device="cuda"), tt.tensor(y, device="cuda"))),
                                      np.nextafter(x, y))
        np.testing.assert_array_equal(to_numpy(tt.copysign(tt.tensor(x, device="cuda"), tt.tensor(y, device="cuda"))),
                                      np.copysign(x, y))


def test_hand_values(device):
    """A few values by hand / from the math module, on each device."""
    d = device
    f64 = dict(dtype=tt.float64, device=d)
    assert tt.atan(tt.tensor([1.0], **f64)).item() == math.atan(1.0) == math.pi / 4
    assert tt.atan2(tt.tensor([-0.0], **f64), tt.tensor([-1.0], **f64)).item() == -math.pi
    assert tt.acos(tt.tensor([-1.0], **f64)).item() == math.pi
    assert tt.sinh(tt.tensor([710.0], **f64)).item() == pytest.approx(math.sinh(710.0), rel=3e-16)  # past exp's overflow
    assert tt.asinh(tt.tensor([1e300], **f64)).item() == pytest.approx(math.asinh(1e300), rel=1e-15)
    assert tt.atanh(tt.tensor([1e-300], **f64)).item() == 1e-300
    assert tt.hypot(tt.tensor([3e300], **f64), tt.tensor([4e300], **f64)).item() == pytest.approx(5e300, rel=1e-15)
    assert tt.hypot(tt.tensor([3e-300], **f64), tt.tensor([4e-300], **f64)).item() == pytest.approx(5e-300, rel=1e-15)
    assert tt.logaddexp(tt.tensor([1000.0], **f64), tt.tensor([1000.0], **f64)).item() == 1000.0 + math.log(2)
    assert tt.ldexp(tt.tensor([1.0], **f64), tt.tensor([-1074], device=d)).item() == 5e-324
    assert tt.gcd(tt.tensor([2 ** 61 * 3], device=d), tt.tensor([2 ** 59 * 9], device=d)).item() == 3 * 2 ** 59
    assert tt.lcm(tt.tensor([4], device=d), tt.tensor([-6], device=d)).item() == 12
    assert (tt.tensor([1], device=d) << 62).item() == 2 ** 62
    assert (tt.tensor([-(2 ** 62)], device=d) >> 70).item() == -1
    assert tt.sinc(tt.tensor([0.5], **f64)).item() == pytest.approx(2 / math.pi, rel=1e-15)


# --------------------------------------------------------------------------- variants
def test_aliases_in_place_forms_and_methods():
    for name, alias in (("acos", "arccos"), ("asin", "arcsin"), ("atan", "arctan"), ("asinh", "arcsinh"),
                        ("acosh", "arccosh"), ("atanh", "arctanh"), ("atan2", "arctan2")):
        assert getattr(tt, alias)._out_impl is getattr(tt, name)._out_impl if hasattr(getattr(tt, name), "_out_impl") \
            else getattr(tt, alias) is getattr(tt, name)
        assert hasattr(tt.Tensor, alias) and hasattr(tt.Tensor, alias + "_")
    for name in ("acos_", "arccos_", "sinh_", "sinc_", "deg2rad_", "frac_", "logit_", "nan_to_num_", "ldexp_",
                 "xlogy_", "gcd_", "lcm_", "fill_"):
        assert hasattr(tt, name), name
    for name in ("atan2_", "hypot_", "sgn_", "copysign_", "heaviside_", "nextafter_", "lerp_", "addcmul_",
                 "addcdiv_", "float_power_", "bitwise_left_shift_", "bitwise_right_shift_"):
        assert hasattr(tt.Tensor, name) and not hasattr(tt, name), name      # torch has no tt.<name>_
    for name in ("fmax", "fmin", "logaddexp", "logaddexp2", "signbit", "isposinf", "isneginf", "isreal",
                 "positive", "frexp"):
        assert hasattr(tt.Tensor, name) and not hasattr(tt.Tensor, name + "_"), name
    assert not hasattr(tt.Tensor, "rsub") and not hasattr(tt.Tensor, "fill")


def test_in_place_forms_write_self(device):
    x = tt.tensor([0.25, -0.5], device=device)
    view = x[:]
    assert x.asin_() is x and view.tolist() == pytest.approx([math.asin(0.25), math.asin(-0.5)], rel=1e-6)
    y = tt.tensor([1.0, 2.0], device=device)
    y.atan2_(tt.tensor([1.0, -1.0], device=device))
    assert y.tolist() == pytest.approx([math.atan2(1, 1), math.atan2(2, -1)], rel=1e-6)
    z = tt.tensor([1.0, 2.0], device=device)
    z.lerp_(tt.tensor([3.0, 4.0], device=device), 0.5).addcmul_(z, z, value=2)
    assert z.tolist() == [2.0 + 2 * 4.0, 3.0 + 2 * 9.0]
    i = tt.tensor([12, 18], device=device)
    i.gcd_(tt.tensor([8, 27], device=device))
    i <<= 2
    assert i.tolist() == [16, 36]
    i >>= tt.tensor([1, 2], device=device)
    assert i.tolist() == [8, 9]
    w = tt.tensor([1.0, 4.0], dtype=tt.float64, device=device)
    assert w.float_power_(0.5).tolist() == [1.0, 2.0]
    n = tt.tensor([float("nan"), float("inf")], device=device)
    assert tt.nan_to_num_(n, posinf=3.0) is n and n.tolist() == [0.0, 3.0]


def test_operators_and_reflected_shifts(device):
    x = tt.tensor([1, 2, 3], device=device)
    assert (x << 2).tolist() == [4, 8, 12] and (2 << x).tolist() == [4, 8, 16]
    assert (x >> 1).tolist() == [0, 1, 1] and (16 >> x).tolist() == [8, 4, 2]
    assert (x << np.int64(1)).tolist() == [2, 4, 6]


def test_out_rules():
    f = tt.tensor([0.5, 0.25])
    out = tt.empty(2, dtype=tt.float64)
    assert tt.atan(f, out=out) is out and out.tolist() == pytest.approx([math.atan(0.5), math.atan(0.25)], rel=1e-6)
    for fn, message in ((lambda: tt.frac(f, out=tt.empty(2, dtype=tt.float64)), "Found dtype Double but expected Float"),
                        (lambda: tt.sgn(tt.tensor([1, 2]), out=tt.empty(2, dtype=tt.int32)),
                         "Found dtype Int but expected Long"),
                        (lambda: tt.signbit(f, out=tt.empty(2)), "signbit does not support non-boolean outputs."),
                        (lambda: tt.isposinf(f, out=tt.empty(2)), "isposinf does not support non-boolean outputs."),
                        (lambda: tt.nan_to_num(f, out=tt.empty(2, dtype=tt.float64)),
                         "nan_to_num: dtype of out: Double should be same as input: Float"),
                        (lambda: tt.float_power(f, 2, out=tt.empty(2)),
                         "the output given to float_power has dtype Float but the operation's result requires dtype Double"),
                        (lambda: tt.heaviside(f, f, out=tt.empty(2, dtype=tt.float64)),
                         "heaviside is not yet implemented for tensors with different dtypes."),
                        (lambda: tt.lerp(f, f, f, out=tt.empty(2, dtype=tt.float64)), "Found dtype Double but expected Float"),
                        (lambda: tt.atan(f, out=tt.empty(2, dtype=tt.int64)),
                         "result type Float can't be cast to the desired output type Long"),
                        (lambda: tt.frexp(f, out=(tt.empty(2, dtype=tt.float64), tt.empty(2, dtype=tt.int32))),
                         "torch.frexp() expects mantissa to have dtype float but got double"),
                        (lambda: tt.frexp(f, out=(tt.empty(2), tt.empty(2, dtype=tt.int64))),
                         "torch.frexp() expects exponent to have int dtype but got long int")):
        with pytest.raises(RuntimeError) as info:
            fn()
        assert str(info.value) == message
    assert tt.lerp(f, f, 0.5, out=out) is out                       # a scalar weight: cast into out
    assert tt.signbit(tt.tensor([-1.0]), out=tt.empty(1, dtype=tt.bool)).tolist() == [True]
    m, e = tt.empty(2), tt.empty(2, dtype=tt.int32)
    result = tt.frexp(tt.tensor([3.0, -0.25]), out=(m, e))
    assert result.mantissa is m and result.exponent is e and m.tolist() == [0.75, -0.5] and e.tolist() == [2, -1]


def test_frexp_is_torchs_named_tuple():
    result = tt.frexp(tt.tensor([8.0]))
    assert type(result) is tt.return_types.frexp and result._fields == ("mantissa", "exponent")
    assert repr(result).startswith("tritensor.return_types.frexp(\nmantissa=tensor(")
    assert result.exponent.dtype is tt.int32 and tt.tensor([8.0]).frexp().mantissa.tolist() == [0.5]


def test_positive_is_the_input_and_isreal_is_true():
    x = tt.tensor([1.0, -2.0])
    assert tt.positive(x) is x and x.positive() is x
    assert tt.isreal(tt.tensor([1, 2])).tolist() == [True, True]


def test_fill_keeps_the_layout_and_the_dtype():
    x = tt.zeros(3, 4).t()
    y = tt.fill(x, 2)
    assert y.stride() == x.stride() and y.dtype is tt.float32 and (y == 2).all().item()
    assert tt.fill(tt.zeros(2, dtype=tt.int32), tt.tensor(2.9, dtype=tt.float64)).tolist() == [2, 2]
    z = tt.zeros(2)
    assert tt.fill_(z, 3) is z and z.tolist() == [3.0, 3.0]


# --------------------------------------------------------------------------- gradients
def _leaf(values):
    return tt.tensor(values, dtype=tt.float64, requires_grad=True)


def test_node_names_follow_torch():
    x, y, w = _leaf([0.3, 0.6]), _leaf([0.2, 0.9]), _leaf([0.5, 0.1])
    names = {
        "AcosBackward0": tt.acos(x), "AcoshBackward0": tt.acosh(x + 1), "AsinhBackward0": tt.arcsinh(x),
        "Deg2RadBackward0": tt.deg2rad(x), "Rad2DegBackward0": tt.rad2deg(x), "FracBackward0": tt.frac(x),
        "LogitBackward0": tt.logit(x, 0.1), "SgnBackward0": tt.sgn(x), "SincBackward0": tt.sinc(x),
        "NanToNumBackward0": tt.nan_to_num(x), "Atan2Backward0": tt.arctan2(x, y), "HypotBackward0": tt.hypot(x, y),
        "CopysignBackward0": tt.copysign(x, y), "CopysignBackward1": tt.copysign(x, -1.0),
        "FmaxBackward0": tt.fmax(x, y), "FminBackward0": tt.fmin(x, y), "LdexpBackward0": tt.ldexp(x, y),
        "LogaddexpBackward0": tt.logaddexp(x, y), "Logaddexp2Backward0": tt.logaddexp2(x, y),
        "XlogyBackward0": tt.xlogy(x, y), "XlogyBackward1": tt.xlogy(2.0, y), "XlogyBackward2": tt.xlogy(x, 2.0),
        "NextafterBackward0": tt.nextafter(x, y), "PowBackward1": tt.float_power(x, y),
        "PowBackward0": tt.float_power(x, 2), "PowBackward2": tt.float_power(2, y),
        "RsubBackward0": tt.rsub(x, y, alpha=2), "RsubBackward1": tt.rsub(x, 3.0),
        "LerpBackward0": tt.lerp(x, y, 0.3), "LerpBackward1": tt.lerp(x, y, w),
        "AddcmulBackward0": tt.addcmul(x, y, w), "AddcdivBackward0": tt.addcdiv(x, y, w),
        "FrexpBackward0": tt.frexp(x).mantissa, "FillBackward0": tt.fill(x, 2.0), "FillBackward1": tt.fill(x, w[0]),
        "NotImplemented": tt.heaviside(x, y),
    }
    for name, result in names.items():
        assert type(result.grad_fn).__name__ == name
    assert tt.float_power(x.float(), 2).grad_fn.next_functions[0][0].__class__.__name__ == "ToCopyBackward0"
    assert tt.frexp(x).exponent.grad_fn is None and not tt.signbit(x).requires_grad


def test_heaviside_has_torchs_missing_derivative():
    x = _leaf([1.0, -1.0])
    out = tt.heaviside(x, tt.tensor([0.5], dtype=tt.float64))
    assert out.requires_grad
    with pytest.raises(RuntimeError, match="^derivative for aten::heaviside is not implemented$"):
        out.sum().backward()


def test_gradients_of_the_other_overloads():
    """The scalar overloads and keyword forms the records' cases leave out, on the cpu: first
    and second derivatives."""
    x, y = _leaf([0.3, 1.7]), _leaf([0.6, 2.5])
    cases = [
        (lambda x: tt.logit(x, eps=0.2), (_leaf([0.1, 0.3, 0.75, 0.9]),)),    # clamped on both sides: 0
        (lambda y: tt.xlogy(2.0, y), (y,)), (lambda x: tt.xlogy(x, 3.0), (x,)),
        (lambda x, y: tt.lerp(x, y, 0.75), (x, y)), (lambda x, y: tt.lerp(x, y, 0.25), (x, y)),
        (lambda x: tt.copysign(x, -1.0), (x,)), (lambda x, y: tt.rsub(x, y, alpha=2), (x, y)),
        (lambda x: tt.rsub(x, 3.0, alpha=0.5), (x,)), (lambda x, y: tt.float_power(x, y), (x, y)),
        (lambda y: tt.float_power(2, y), (y,)), (lambda x: tt.fill(x, 2.0) * x, (x,)),
        (lambda x: tt.ldexp(x, tt.tensor([-3, 2])), (x,)),          # an integer exponent: exact 2**e
    ]
    for fn, inputs in cases:
        assert gradcheck(fn, inputs) and gradgradcheck(fn, inputs)


def test_gradient_values_at_the_edges():
    """torch's conventions where the derivative is undefined or one-sided."""
    x = _leaf([0.0, 1.0, 0.5])
    (g,) = tt.autograd.grad(tt.logit(x).sum(), x)
    assert g.tolist() == [math.inf, math.inf, 4.0]               # torch's logit_backward: g * inf at 0 and 1
    x = _leaf([0.0, -2.0])
    (g,) = tt.autograd.grad(tt.copysign(x, tt.tensor([-1.0, 1.0], dtype=tt.float64)).sum(), x)
    assert g.tolist() == [0.0, -1.0]
    a, b = _leaf([0.0]), _leaf([0.0])
    assert [t.item() for t in tt.autograd.grad(tt.atan2(a, b), (a, b))] == [0.0, 0.0]   # 0 at the origin
    a, b = _leaf([1.0, 2.0]), _leaf([1.0, 3.0])
    ga, gb = tt.autograd.grad(tt.nextafter(a, b).sum(), (a, b))
    assert ga.tolist() == [0.0, 1.0] and gb.tolist() == [0.0, 0.0]
    a, b = _leaf([2.0, float("nan")]), _leaf([2.0, 1.0])
    ga, gb = tt.autograd.grad(tt.fmax(a, b).sum(), (a, b))
    assert ga.tolist() == [1.0, 0.0] and gb.tolist() == [0.0, 1.0]      # a tie goes to a; NaN to the other
    x = _leaf([0.0, -5.0])
    (g,) = tt.autograd.grad(tt.xlogy(x, tt.tensor([0.0, 2.0], dtype=tt.float64)).sum(), x)
    assert g.tolist() == [0.0, math.log(2.0)]
