"""Pointwise ops beyond the table-driven parity (tests/test_ops_table.py): torch's type promotion,
reflected operators and Python scalars, rounding modes with negative operands and NaN/inf,
clamp with tensor bounds, logical and bitwise ops, in-place semantics and torch's errors, the
autograd node names, and a property test over broadcastable shapes (cuda against the NumPy
reference). Every test runs on cpu and on cuda (emulated where there is no GPU).
"""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tritensor as tt
from conftest import to_numpy
from tritensor.backends import numpy_ref
from tritensor.ops import elementwise as ew
from tritensor.ops import pointwise as pw

NAN, INF = float("nan"), float("inf")


def _same(got, expected, rtol=0.0, atol=0.0):
    """Values equal (NaN == NaN) and signs of zero equal."""
    got = to_numpy(got).astype(np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    zeros = expected == 0
    np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(expected[zeros]))


# --------------------------------------------------------------------------- promotion
def test_promotion_follows_torch(device):
    i32 = tt.tensor([7, -7, 3], dtype=tt.int32, device=device)
    i64 = tt.tensor([2, 2, -2], dtype=tt.int64, device=device)
    f16 = tt.tensor([1.5, -2.5, 3.0], dtype=tt.float16, device=device)
    f32 = tt.tensor([0.5, 1.0, -2.0], device=device)
    b = tt.tensor([True, False, True], device=device)
    cases = [
        (i32 + 2.5, tt.float32, [9.5, -4.5, 5.5]),              # int tensor, float scalar
        (i32 + i64, tt.int64, [9, -5, 1]),
        (f16 + f32, tt.float32, [2.0, -1.5, 1.0]),
        (i32 / i64, tt.float32, [3.5, -3.5, -1.5]),             # integer true division is float
        (b + b, tt.bool, [True, False, True]),
        (b * 3, tt.int64, [3, 0, 3]),
        (i32 // i64, tt.int64, [3, -4, -2]),                    # integer floor division stays integer
        (i32 // 2.0, tt.float32, [3.0, -4.0, 1.0]),
        (i32 % i64, tt.int64, [1, 1, -1]),
        (tt.div(i32, 2, rounding_mode="trunc"), tt.int32, [3, -3, 1]),
        (tt.fmod(i32, -2), tt.int32, [1, -1, 1]),
        (tt.clamp(i32, min=0.5), tt.float32, [7.0, 0.5, 3.0]),
        (tt.clamp(i32, max=i64), tt.int64, [2, -7, -2]),
        (i32.exp2(), tt.float32, [128.0, 2.0 ** -7, 8.0]),
        (i32.floor(), tt.int32, [7, -7, 3]),                    # rounding integers keeps the dtype
        (i32.round(), tt.int32, [7, -7, 3]),
        (i32.sign(), tt.int32, [1, -1, 1]),
        (b & True, tt.bool, [True, False, True]),
        (b | 2, tt.int64, [3, 2, 3]),
        (i32 ^ i64, tt.int64, [5, -5, -3]),
        (tt.logical_and(f32, i32), tt.bool, [True, True, True]),
        (f16.round(), tt.float16, [2.0, -2.0, 3.0]),
        (tt.maximum(f16, tt.tensor(2, device=device)), tt.float16, [2.0, 2.0, 3.0]),  # 0-d: no widening
    ]
    for got, dtype, expected in cases:
        assert got.dtype is dtype, (got.dtype, dtype, expected)
        assert got.device.type == device
        np.testing.assert_allclose(to_numpy(got).astype(np.float64), np.asarray(expected, np.float64), rtol=1e-6)


# --------------------------------------------------------------------------- reflected operators
def test_reflected_operators_and_scalars(device):
    xv = np.array([1.5, -2.0, 3.0, -0.5], dtype=np.float32)
    x = tt.tensor(xv, device=device)
    checks = [
        (2 - x, 2 - xv), (3 * x, 3 * xv), (2 ** x, 2 ** xv), (7 // x, np.floor_divide(7, xv)),
        (7 % x, np.remainder(7, xv)), (1 / x, 1 / xv), (x // -2, np.floor_divide(xv, -2)),
        (x % -2, np.remainder(xv, -2)), (-x, -xv), (abs(x), np.abs(xv)),
    ]
    for got, expected in checks:
        assert got.dtype is tt.float32
        np.testing.assert_allclose(to_numpy(got), expected.astype(np.float32), rtol=1e-6)
    n = tt.tensor([5, -6, 12], device=device)
    np.testing.assert_array_equal(to_numpy(7 // n), [1, -2, 0])
    np.testing.assert_array_equal(to_numpy(7 % n), [2, -5, 7])
    np.testing.assert_array_equal(to_numpy(6 & n), [4, 2, 4])
    np.testing.assert_array_equal(to_numpy(1 | n), [5, -5, 13])
    np.testing.assert_array_equal(to_numpy(3 ^ n), [6, -7, 15])
    assert (7 // n).dtype is tt.int64 and (2 ** n.abs()).dtype is tt.int64


def test_functions_and_methods_agree(device):
    x = tt.tensor([[-1.7, 0.2, 2.5], [3.1, -0.0, -4.5]], device=device)
    y = tt.tensor([0.7, -1.5, 2.0], device=device)
    for name in ["sign", "exp2", "expm1", "log1p", "tan", "erf", "floor", "ceil", "round", "trunc",
                 "isnan", "isinf", "isfinite", "logical_not", "sigmoid", "abs"]:
        f = getattr(tt, name)(x)
        m = getattr(x, name)()
        np.testing.assert_array_equal(to_numpy(f), to_numpy(m), err_msg=name)
    for name in ["floor_divide", "remainder", "fmod", "logical_and", "logical_or", "logical_xor", "maximum"]:
        np.testing.assert_array_equal(to_numpy(getattr(tt, name)(x, y)), to_numpy(getattr(x, name)(y)), err_msg=name)
    np.testing.assert_array_equal(to_numpy(tt.max(x, y)), to_numpy(tt.maximum(x, y)))
    np.testing.assert_array_equal(to_numpy(tt.min(x, y)), to_numpy(x.min(y)))
    assert tt.all(x != 7).item() and x.any().item() and not tt.any(x > 10).item() and not x.all().item()
    np.testing.assert_array_equal(to_numpy(tt.clip(x, -1, 1)), to_numpy(x.clamp(-1, 1)))
    np.testing.assert_array_equal(to_numpy(tt.fix(x)), to_numpy(x.trunc()))
    np.testing.assert_array_equal(to_numpy(tt.gelu(x)), to_numpy(tt.gelu(x, approximate="none")))


# --------------------------------------------------------------------------- rounding modes
_A = [7.0, -7.0, 7.0, -7.0, 7.5, -7.5, 0.0, -0.0, 5.0, -5.0, INF, -INF, NAN, 1.0, 1.0, -1.0, 0.0, 6.0]
_B = [2.0, 2.0, -2.0, -2.0, 2.0, -2.0, 3.0, 3.0, INF, INF, 2.0, 2.0, 2.0, 0.0, -0.0, 0.0, 0.0, NAN]


@pytest.mark.parametrize("dtype", [tt.float32, tt.float64], ids=str)
def test_float_rounding_modes_match_python(dtype, device):
    """floor_divide / remainder follow Python's float // and % (torch's algorithm), fmod and
    trunc division C's; division by zero and NaN/inf give IEEE results (NumPy's too)."""
    a = tt.tensor(_A, dtype=dtype, device=device)
    b = tt.tensor(_B, dtype=dtype, device=device)
    an, bn = np.array(_A), np.array(_B)
    with np.errstate(all="ignore"):
        _same(a // b, np.floor_divide(an, bn))
        _same(tt.div(a, b, rounding_mode="floor"), np.floor_divide(an, bn))
        _same(a % b, numpy_ref.remainder(an, bn))    # np.remainder, except -0.0 % 3 = -0.0 (torch)
        _same((a % b)[:7], np.remainder(an, bn)[:7])
        _same(tt.fmod(a, b), np.fmod(an, bn))
        _same(tt.div(a, b, rounding_mode="trunc"), np.trunc(an / bn))
    # spot values written out: Python's sign conventions
    assert (a // b)[:4].tolist() == [3.0, -4.0, -4.0, 3.0]
    assert (a % b)[:4].tolist() == [1.0, 1.0, -1.0, -1.0]
    assert tt.fmod(a, b)[:4].tolist() == [1.0, -1.0, 1.0, -1.0]
    assert tt.div(a, b, rounding_mode="trunc")[:6].tolist() == [3.0, -3.0, -3.0, 3.0, 3.0, 3.0]
    # 1 // 0.1 is 9 (1 / 0.1 rounds to 10): the quotient comes from fmod, as in Python
    assert (tt.tensor([1.0], dtype=tt.float64, device=device) // 0.1).item() == 1.0 // 0.1 == 9.0


@pytest.mark.parametrize("dtype", [tt.int32, tt.int64], ids=str)
def test_integer_rounding_modes(dtype, device):
    av = [7, -7, 7, -7, 0, 9, -9, 1]
    bv = [2, 2, -2, -2, 5, 3, 4, -3]
    a = tt.tensor(av, dtype=dtype, device=device)
    b = tt.tensor(bv, dtype=dtype, device=device)
    assert (a // b).tolist() == [x // y for x, y in zip(av, bv)]
    assert (a % b).tolist() == [x % y for x, y in zip(av, bv)]
    assert tt.fmod(a, b).tolist() == [int(math.fmod(x, y)) for x, y in zip(av, bv)]
    assert tt.div(a, b, rounding_mode="trunc").tolist() == [int(x / y) for x, y in zip(av, bv)]
    assert tt.div(a, b, rounding_mode="floor").tolist() == [x // y for x, y in zip(av, bv)]
    for r in (a // b, a % b, tt.fmod(a, b), tt.div(a, b, rounding_mode="trunc")):
        assert r.dtype is dtype
    low = tt.tensor([np.iinfo(dtype.numpy_dtype).min], dtype=dtype, device=device)
    assert (low // -1).item() == np.iinfo(dtype.numpy_dtype).min     # wraps, like C two's complement
    assert (low % -1).item() == 0


def test_integer_division_by_zero(device):
    """torch's cpu kernels raise; on cuda nothing is checked and the kernels give 0."""
    a = tt.tensor([5, -5, 3], device=device)
    zero = tt.tensor([0, 1, 0], device=device)
    fns = [lambda: a // zero, lambda: a % zero, lambda: tt.fmod(a, zero),
           lambda: tt.div(a, zero, rounding_mode="trunc"), lambda: a // 0]
    for fn in fns:
        if device == "cpu":
            with pytest.raises(RuntimeError, match="ZeroDivisionError"):
                fn()
        else:
            r = fn().tolist()
            assert r[0] == 0 and r[2] == 0
    with np.errstate(all="ignore"):   # float division by zero is IEEE, never an error
        assert math.isinf((a.float() // 0).tolist()[0])


def test_div_rounding_mode_errors(device):
    a = tt.tensor([1.0], device=device)
    with pytest.raises(RuntimeError, match="div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'"):
        tt.div(a, 2, rounding_mode="round")
    b = tt.tensor([True], device=device)
    with pytest.raises(RuntimeError, match="not implemented for 'Bool'"):
        b // b
    with pytest.raises(RuntimeError, match="not implemented for 'Bool'"):
        b % True


@pytest.mark.parametrize("dtype", [tt.float16, tt.bfloat16, tt.float32, tt.float64], ids=str)
def test_round_half_to_even_and_special_values(dtype, device):
    vals = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.25, -0.4, 3.75, -3.5, 0.0, -0.0, INF, -INF, NAN, 1024.5]
    x = tt.tensor(vals, dtype=dtype, device=device)
    exact = to_numpy(x).astype(np.float64)            # the values as stored in dtype
    _same(x.round(), np.rint(exact))
    _same(x.floor(), np.floor(exact))
    _same(x.ceil(), np.ceil(exact))
    _same(x.trunc(), np.trunc(exact))
    _same(x.sign(), np.where(np.isnan(exact), 0.0, np.sign(exact)) + 0.0)   # torch: sign(nan) = 0


def test_round_near_half_and_large_values(device):
    x = tt.tensor([0.49999997, -0.49999997, 2.0 ** 23 + 1, -(2.0 ** 23) - 1, 2.0 ** 22 + 0.5, 1e30],
                  device=device)
    _same(x.round(), np.rint(to_numpy(x).astype(np.float64)))
    d = tt.tensor([0.49999999999999994, 2.0 ** 52 + 1, 4503599627370495.5], dtype=tt.float64, device=device)
    _same(d.round(), np.rint(to_numpy(d)))


@pytest.mark.parametrize("dtype", [tt.float32, tt.float64], ids=str)
def test_fmod_is_exact_at_any_quotient(dtype, device):
    """C fmod is exact (math.fmod's values), also where a / b rounds or is huge: the GPU's frem,
    a - trunc(a / b) * b, gave 0 or -5.6e-17 for 1 % 0.1 (0.09999999999999995), and 0 from 2**24 on
    in float32. The sign is a's, -0.0 included."""
    a = [1.0, -1.0, 1e30, -1e30, 5.0, 1e-40, 123456.789, -0.0, 3.0, 16777217.0, 7.0]
    b = [0.1, 0.1, 7.0, 0.3, 1e-40, 3e-45, 1e-3, 0.3, -2.0, 0.75, INF]
    an = np.array(a, dtype=dtype.numpy_dtype)
    bn = np.array(b, dtype=dtype.numpy_dtype)
    expected = [math.fmod(x, y) for x, y in zip(an.tolist(), bn.tolist())]     # exact: fits the dtype
    got = tt.fmod(tt.tensor(an, device=device), tt.tensor(bn, device=device))
    _same(got, expected)
    same_signs = [0, 2, 4]                                   # where remainder is fmod
    _same(tt.remainder(tt.tensor(an[same_signs], device=device), tt.tensor(bn[same_signs], device=device)),
          [expected[i] for i in same_signs])


def test_exp2_is_exact_at_integers_and_rounded_once(device):
    """float32 exp2: 2**k exactly for every integer k of the range (subnormal results included: the
    GPU's ex2.approx flushed 2**-128 to 0) and the correctly rounded value elsewhere."""
    k = np.arange(-149, 128, dtype=np.float32)
    got = to_numpy(tt.exp2(tt.tensor(np.append(k, [-1.5, 0.5, 10.25]).astype(np.float32), device=device)))
    np.testing.assert_array_equal(got[:-3], [math.ldexp(1.0, int(e)) for e in k])
    np.testing.assert_array_equal(got[-3:], np.array([2 ** -1.5, 2 ** 0.5, 2 ** 10.25], np.float32))


def test_round_decimals(device):
    xv = np.array([1.2345, -1.2355, 1234.5, 15.0, -25.0, 0.125, NAN])
    x = tt.tensor(xv, dtype=tt.float64, device=device)
    _same(x.round(decimals=2), np.rint(xv * 100) / 100, rtol=1e-15)
    _same(tt.round(x, decimals=-1), np.rint(xv / 10) * 10)      # 15 -> 20, -25 -> -20 (half to even)
    y = x.clone()
    y.round_(decimals=1)
    _same(y, np.rint(xv * 10) / 10, rtol=1e-15)
    f = tt.tensor([2.675, -0.0051], dtype=tt.float32, device=device)
    _same(f.round(decimals=2), (np.rint(to_numpy(f) * np.float32(100)) / np.float32(100)))
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        tt.tensor([1, 2], device=device).round(decimals=1)


# --------------------------------------------------------------------------- transcendental
@pytest.mark.parametrize("dtype", [tt.float32, tt.float64], ids=str)
def test_accuracy_near_zero(dtype, device):
    """expm1, log1p and erf keep full relative accuracy where exp(x) - 1 and log(1 + x) cancel."""
    xs = np.array([1e-30, -1e-20, 1e-10, -3e-8, 1e-5, -1e-3, 0.2, -0.24, 0.26, -0.49, 0.51, 2.0])
    x = tt.tensor(xs, dtype=dtype, device=device)
    xn = to_numpy(x).astype(np.float64)
    rtol = 4e-7 if dtype is tt.float32 else 1e-14
    np.testing.assert_allclose(to_numpy(x.expm1()), np.expm1(xn), rtol=rtol)
    np.testing.assert_allclose(to_numpy(x.log1p()), np.log1p(xn), rtol=rtol)
    np.testing.assert_allclose(to_numpy(x.erf()), [math.erf(v) for v in xn], rtol=rtol)
    np.testing.assert_allclose(to_numpy(x.tan()), np.tan(xn), rtol=rtol * 4)


def test_nan_and_inf_in_unary_ops(device):
    vals = [NAN, INF, -INF, 0.0, -0.0, -1.0, 1.0, 30.0, -30.0, 100.0]
    x = tt.tensor(vals, device=device)
    xn = np.array(vals, dtype=np.float32)
    with np.errstate(all="ignore"):
        for name in ["exp2", "expm1", "log2", "log10", "log1p", "rsqrt", "erf", "silu", "gelu", "tan"]:
            ref = numpy_ref.elementwise(name)(xn)
            _same(getattr(tt, name)(x), ref, rtol=2e-6, atol=1e-30)
        for name in ["isnan", "isinf", "isfinite"]:
            np.testing.assert_array_equal(to_numpy(getattr(tt, name)(x)), getattr(np, name)(xn))
        # the tanh form is 0.5 x (1 + tanh(...)): -inf * 0 is NaN, in torch's formula too
        _same(tt.gelu(x, approximate="tanh"), numpy_ref.gelu(xn, approximate="tanh"), rtol=2e-6, atol=1e-30)
    i = tt.tensor([1, -2], device=device)
    assert to_numpy(i.isnan()).tolist() == [False, False] and to_numpy(i.isfinite()).tolist() == [True, True]


def test_gelu_forms(device):
    xv = np.linspace(-5, 5, 41)
    x = tt.tensor(xv, dtype=tt.float64, device=device)
    exact = 0.5 * xv * (1 + np.array([math.erf(v / math.sqrt(2)) for v in xv]))
    np.testing.assert_allclose(to_numpy(tt.gelu(x)), exact, rtol=1e-13, atol=1e-16)
    approx = 0.5 * xv * (1 + np.tanh(math.sqrt(2 / math.pi) * (xv + 0.044715 * xv ** 3)))
    # 1 + tanh(u) cancels for x << 0: both tanh implementations differ by an ulp there
    np.testing.assert_allclose(to_numpy(tt.gelu(x, approximate="tanh")), approx, rtol=1e-8, atol=1e-16)
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        tt.gelu(x, approximate="erf")
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        tt.silu(tt.tensor([1, 2], device=device))


# --------------------------------------------------------------------------- clamp
def test_clamp_bounds(device):
    xv = np.array([[-3.0, -0.5, 0.0, 0.7, 4.0, NAN]])
    x = tt.tensor(xv, device=device)
    _same(x.clamp(-1, 1), np.clip(xv, -1, 1))
    _same(tt.clamp(x, min=0.0), np.maximum(xv, 0.0))
    _same(tt.clamp(x, max=0.5), np.minimum(xv, 0.5))
    lo = tt.tensor([[-1.0], [0.5]], device=device)                         # broadcast: (2, 1) vs (1, 6)
    hi = tt.tensor([2.0, 0.0, 1.0, 0.6, 3.0, 1.0], device=device)
    _same(tt.clamp(x, lo, hi), np.minimum(np.maximum(xv, to_numpy(lo)), to_numpy(hi)))
    _same(tt.clamp(x, min=lo), np.maximum(xv, to_numpy(lo)))
    _same(x.clip(max=hi), np.minimum(xv, to_numpy(hi)))
    # min > max gives max everywhere, as torch; a NaN bound gives NaN
    _same(tt.clamp(tt.tensor([-5.0, 0.0, 5.0], device=device), 2.0, 1.0), [1.0, 1.0, 1.0])
    _same(tt.clamp(tt.tensor([1.0, 2.0], device=device), tt.tensor([NAN, 0.0], device=device), tt.tensor(3.0, device=device)), [NAN, 2.0])
    i = tt.tensor([-5, 3, 9], device=device)
    r = i.clamp(0, 4)
    assert r.dtype is tt.int64 and r.tolist() == [0, 3, 4]
    with pytest.raises(RuntimeError, match="torch.clamp: At least one of 'min' or 'max' must not be None"):
        tt.clamp(x)
    with pytest.raises(RuntimeError, match="torch.clamp: At least one of 'min' or 'max' must not be None"):
        x.clamp_()


# --------------------------------------------------------------------------- logical and bitwise
def test_logical_and_bitwise(device):
    rng = np.random.default_rng(0)
    av = rng.integers(-40, 40, (3, 45))
    bv = rng.integers(-40, 40, (45,))
    a = tt.tensor(av, dtype=tt.int32, device=device)
    b = tt.tensor(bv, dtype=tt.int64, device=device)
    np.testing.assert_array_equal(to_numpy(a & b), av & bv)
    np.testing.assert_array_equal(to_numpy(a | b), av | bv)
    np.testing.assert_array_equal(to_numpy(a ^ b), av ^ bv)
    np.testing.assert_array_equal(to_numpy(~a), ~av)
    assert (~a).dtype is tt.int32
    f = tt.tensor(av * 0.5, device=device)
    np.testing.assert_array_equal(to_numpy(tt.logical_and(f, b)), np.logical_and(av * 0.5, bv))
    np.testing.assert_array_equal(to_numpy(tt.logical_or(f, tt.tensor(0, device=device))), av != 0)
    np.testing.assert_array_equal(to_numpy(tt.logical_xor(f, b)), np.logical_xor(av, bv))
    np.testing.assert_array_equal(to_numpy(tt.logical_not(f)), av == 0)
    np.testing.assert_array_equal(to_numpy(tt.logical_not(tt.tensor([NAN], device=device))), [False])
    m = tt.tensor([True, False, True], device=device)
    n = tt.tensor([True, True, False], device=device)
    assert (m & n).tolist() == [True, False, False] and (m | n).tolist() == [True, True, True]
    assert (m ^ n).tolist() == [False, True, True] and (~m).tolist() == [False, True, False]
    assert (m & n).dtype is tt.bool and tt.bitwise_not(m).dtype is tt.bool


def test_bitwise_on_floats_raises_torchs_error(device):
    x = tt.tensor([1.0, 2.0], device=device)
    suffix = "cuda" if device == "cuda" else "cpu"
    with pytest.raises(RuntimeError, match=f'"bitwise_not_{suffix}" not implemented for \'Float\''):
        ~x
    with pytest.raises(RuntimeError, match=f'"bitwise_and_{suffix}" not implemented for \'Float\''):
        x & x
    with pytest.raises(RuntimeError, match="not implemented for 'Float'"):
        tt.tensor([1, 2], device=device) | 1.5


# --------------------------------------------------------------------------- in place
def test_inplace_keeps_storage_and_bumps_version(device):
    base = tt.tensor([[0.3, -1.7, 2.5], [4.2, -0.5, 1.0]], device=device)
    x = base[:, 1:]                                       # a view: the base sees the result
    ptr, version = x.data_ptr(), x._version_counter.value
    for name in ["tanh_", "exp_", "neg_", "abs_", "sqrt_", "sigmoid_", "relu_", "floor_", "ceil_",
                 "round_", "trunc_", "sign_", "expm1_", "log1p_", "exp2_", "erf_", "tan_",
                 "rsqrt_", "log2_", "log10_", "log_", "sin_", "cos_"]:
        before = x.clone()
        expected = getattr(before, name[:-1])()
        assert getattr(x, name)() is x
        np.testing.assert_allclose(to_numpy(x), to_numpy(expected), rtol=1e-6, equal_nan=True, err_msg=name)
        x.copy_(tt.tensor([[-1.7, 2.5], [-0.5, 1.0]], device=device))
    assert x.data_ptr() == ptr and x._version_counter.value > version
    np.testing.assert_allclose(to_numpy(base[:, 1:]), to_numpy(x))


def test_inplace_operators(device):
    x = tt.tensor([7, -7, 9], device=device)
    ptr = x.data_ptr()
    x //= 2
    assert x.tolist() == [3, -4, 4]
    x %= 3
    assert x.tolist() == [0, 2, 1]
    x **= 2
    assert x.tolist() == [0, 4, 1]
    x &= 5
    assert x.tolist() == [0, 4, 1]
    x |= 2
    assert x.tolist() == [2, 6, 3]
    x ^= tt.tensor([1, 1, 1], device=device)
    assert x.tolist() == [3, 7, 2]
    assert x.data_ptr() == ptr and x.dtype is tt.int64
    f = tt.tensor([5.5, -5.5], device=device)
    f.fmod_(2)
    f.remainder_(tt.tensor([-1.0, 1.0], device=device))
    assert f.tolist() == [-0.5, 0.5]
    f.floor_divide_(0.25)
    assert f.tolist() == [-2.0, 2.0]
    f.clamp_(min=-1.0)
    f.clip_(max=tt.tensor([0.0, 1.5], device=device))
    assert f.tolist() == [-1.0, 1.5]
    f.div_(2, rounding_mode="floor")
    assert f.tolist() == [-1.0, 0.0]
    b = tt.tensor([True, False], device=device)
    b.logical_not_()
    b.bitwise_xor_(True)
    assert b.tolist() == [True, False]


def test_inplace_errors(device):
    i = tt.tensor([1, 2, 3], device=device)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i.clamp_(min=0.5)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i //= 2.5
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i.exp_()
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        i.remainder_(tt.tensor([1.5], device=device))
    small = tt.zeros(3, device=device)
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        small.remainder_(tt.ones(2, 3, device=device))
    leaf = tt.ones(3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation."):
        leaf.tanh_()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation."):
        leaf.clamp_(0, 1)
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor is not supported"):
        tt.tensor([True], device=device).neg_()


def test_inplace_records_history(device):
    x = tt.tensor([-1.0, 0.5, 2.0], device=device, requires_grad=True)
    y = x * 1
    y.clamp_(0, 1)
    assert y.grad_fn.name() == "ClampBackward1"
    pw.silu_(y)          # for nn.functional.silu(inplace=True); torch has no Tensor.silu_
    y.sum().backward()
    s = 1 / (1 + np.exp(-np.array([0.0, 0.5, 1.0])))
    silu_grad = s * (1 + np.array([0.0, 0.5, 1.0]) * (1 - s))
    np.testing.assert_allclose(to_numpy(x.grad), silu_grad * [0.0, 1.0, 0.0], rtol=1e-6)   # 2 > max: 0


# --------------------------------------------------------------------------- masked_fill
def test_masked_fill(device):
    xv = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = tt.tensor(xv, device=device)
    mask = tt.tensor([True, False, False, True], device=device)              # broadcast over rows
    np.testing.assert_array_equal(to_numpy(x.masked_fill(mask, -1.5)), np.where([True, False, False, True], -1.5, xv))
    np.testing.assert_array_equal(to_numpy(tt.masked_fill(x, mask, tt.tensor(7.0))), np.where(to_numpy(mask), 7.0, xv))
    col = tt.tensor([[True], [False], [True]], device=device)
    out = x[:1].masked_fill(col, 0.0)                                        # out of place broadcasts self too
    assert out.shape == (3, 4)
    i = tt.tensor([1, 2, 3], device=device)
    assert i.masked_fill(tt.tensor([False, True, False], device=device), 9.7).tolist() == [1, 9, 3]   # value cast to int
    ptr = x.data_ptr()
    x.masked_fill_(mask, NAN)
    assert x.data_ptr() == ptr and np.isnan(to_numpy(x)[:, 0]).all()
    with pytest.raises(RuntimeError, match="masked_fill_ only supports boolean masks, but got mask with dtype long int"):
        x.masked_fill_(tt.tensor([1, 0, 0, 1], device=device), 0.0)
    with pytest.raises(RuntimeError, match="masked_fill_ only supports boolean masks, but got mask with dtype float"):
        x.masked_fill(tt.tensor([1.0, 0, 0, 1], device=device), 0.0)
    with pytest.raises(RuntimeError, match=r"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension\(s\)."):
        x.masked_fill(mask, tt.tensor([1.0], device=device))
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        x[:1].masked_fill_(col, 0.0)


# --------------------------------------------------------------------------- autograd names
def test_backward_node_names(device):
    x = tt.tensor([0.5, -1.5], device=device, requires_grad=True)
    y = tt.tensor([2.0, 3.0], device=device, requires_grad=True)
    names = {
        # torch.clamp's overloads: tensor bounds ClampBackward0, numbers ClampBackward1
        "ClampBackward0": x.clamp(max=y), "ClampBackward1": x.clamp(min=0),
        "ErfBackward0": x.erf(), "SiluBackward0": tt.silu(x), "GeluBackward0": tt.gelu(x, approximate="tanh"),
        "RemainderBackward1": x % y, "RemainderBackward0": x % 2, "FmodBackward1": tt.fmod(x, y),
        "DivBackward2": tt.div(x, y, rounding_mode="floor"), "DivBackward3": tt.div(x, 2, rounding_mode="trunc"),
        "FloorBackward0": x.floor(), "RoundBackward0": x.round(), "RoundBackward1": x.round(decimals=2),
        "SignBackward0": x.sign(), "Log1PBackward0": x.log1p(),
        "MaskedFillBackward0": x.masked_fill(tt.tensor([True, False], device=device), 1.0),
        "SigmoidBackward0": x.sigmoid(), "Expm1Backward0": x.expm1(), "TanBackward0": x.tan(),
    }
    for name, t in names.items():
        assert t.grad_fn.name() == name
    g, = tt.autograd.grad(x.sigmoid().sum(), x, create_graph=True)
    assert g.grad_fn.name() == "SigmoidBackwardBackward0"
    g, = tt.autograd.grad(tt.gelu(x).sum(), x, create_graph=True)
    assert g.grad_fn.name() == "GeluBackwardBackward0"


def test_step_functions_have_zero_gradient(device):
    x = tt.tensor([0.3, -1.6, 2.5], device=device, requires_grad=True)
    for fn in (tt.floor, tt.ceil, tt.round, tt.trunc, tt.sign, lambda t: t // 0.7):
        grad, = tt.autograd.grad(fn(x).sum(), x)
        assert to_numpy(grad).tolist() == [0.0, 0.0, 0.0]
    y = tt.tensor([0.7, 0.7, -0.7], device=device, requires_grad=True)
    gx, gy = tt.autograd.grad((x % y).sum(), (x, y))
    assert to_numpy(gx).tolist() == [1.0, 1.0, 1.0]
    np.testing.assert_allclose(to_numpy(gy), -np.floor(np.array([0.3, -1.6, 2.5]) / np.array([0.7, 0.7, -0.7])))
    # clamp passes the gradient on the boundaries (min <= x <= max), as torch
    b = tt.tensor([-1.0, 0.0, 1.0, 2.0], device=device, requires_grad=True)
    grad, = tt.autograd.grad(b.clamp(0.0, 1.0).sum(), b)
    assert to_numpy(grad).tolist() == [0.0, 1.0, 1.0, 0.0]


# --------------------------------------------------------------------------- property test
_BINARY_PROPERTY = {
    "add": (tt.add, np.add), "floor_divide": (tt.floor_divide, np.floor_divide),
    "remainder": (tt.remainder, np.remainder), "maximum": (tt.maximum, np.maximum),
    "logical_xor": (tt.logical_xor, np.logical_xor), "clamp_max": (tt.clamp_max, np.minimum),
}


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=5),
       name=st.sampled_from(sorted(_BINARY_PROPERTY)), seed=st.integers(0, 2 ** 16),
       transpose=st.booleans())
def test_broadcast_property_cuda_matches_numpy(shapes, name, seed, transpose):
    """Any pair of mutually broadcastable shapes (size-0 dims included): cuda equals NumPy."""
    rng = np.random.default_rng(seed)
    (sa, sb), out_shape = shapes.input_shapes, shapes.result_shape
    av = rng.integers(-9, 10, sa).astype(np.float32) * 0.75
    bv = rng.integers(1, 10, sb).astype(np.float32) * rng.choice([-0.5, 0.5], sb)
    a = tt.tensor(av, device="cuda")
    if transpose and len(sa) >= 2:   # same values, transposed memory
        a = tt.tensor(np.ascontiguousarray(av.swapaxes(-1, -2)), device="cuda").transpose(-1, -2)
    b = tt.tensor(bv, device="cuda")
    fn, np_fn = _BINARY_PROPERTY[name]
    out = fn(a, b)
    assert out.shape == tuple(out_shape)
    np.testing.assert_array_equal(to_numpy(out), np_fn(av, bv))


# --------------------------------------------------------------------------- fused mul backward
def test_mul_backward_is_one_fused_kernel_on_cuda(monkeypatch):
    """x * y needs grad * y and grad * x: on cuda one two-output kernel gives both (grad, x, y
    read once), then each is summed back over its broadcast dims."""
    from tritensor.backends import triton as tb
    launched = []
    real = tb.elementwise
    monkeypatch.setattr(tb, "elementwise", lambda fn, *a, **k: (launched.append(fn), real(fn, *a, **k))[1])
    rng = np.random.default_rng(5)
    xv, yv, gv = rng.standard_normal((3, 1, 45)), rng.standard_normal((4, 45)), rng.standard_normal((3, 4, 45))
    x = tt.tensor(xv, device="cuda", requires_grad=True)
    y = tt.tensor(yv, device="cuda").t().contiguous().t().requires_grad_()      # transposed memory
    out = x * y
    launched.clear()
    out.backward(tt.tensor(gv, device="cuda"))
    assert launched.count("mul_backward") == 1 and "mul" not in launched
    np.testing.assert_allclose(to_numpy(x.grad), (gv * yv).sum(1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(y.grad), (gv * xv).sum(0), rtol=1e-12)
    # create_graph=True records the two products instead, so they differentiate again
    gx, gy = tt.autograd.grad((x * y).sum(), (x, y), create_graph=True)
    assert gx.grad_fn is not None and gy.grad_fn is not None
    np.testing.assert_allclose(to_numpy(gy), np.broadcast_to(xv, (3, 4, 45)).sum(0), rtol=1e-12)


def test_nn_functional_activations(device):
    F = tt.nn.functional
    x = tt.tensor([-1.0, 0.5, 2.0], dtype=tt.float64, device=device)
    expected_silu = [-1 / (1 + math.e), 0.5 / (1 + math.exp(-0.5)), 2 / (1 + math.exp(-2))]
    np.testing.assert_allclose(to_numpy(F.silu(x)), expected_silu, rtol=1e-12)
    np.testing.assert_allclose(to_numpy(F.gelu(x)), [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in (-1, 0.5, 2)],
                               rtol=1e-12)
    np.testing.assert_allclose(to_numpy(F.relu(x)), [0, 0.5, 2])
    y = x.clone()
    assert F.silu(y, inplace=True) is y and F.relu(y, inplace=True) is y     # in place: the same tensor
    np.testing.assert_allclose(to_numpy(y), [0, expected_silu[1], expected_silu[2]], rtol=1e-12)


def test_where_forms(device):
    x = tt.tensor([[1.0, -2.0], [-3.0, 4.0]], device=device)
    cond = x > 0
    np.testing.assert_array_equal(to_numpy(x.where(cond, 0.0)), [[1.0, 0.0], [0.0, 4.0]])
    rows, cols = tt.where(cond)                                   # one argument: nonzero(as_tuple=True)
    assert to_numpy(rows).tolist() == [0, 1] and to_numpy(cols).tolist() == [0, 1]


# --------------------------------------------------------------------------- torch-audit regressions
def test_sub_rejects_any_bool_operand(device):
    b = tt.tensor([True, False], device=device)
    i = tt.tensor([3, 4], device=device)
    one_bool = r"^Subtraction, the `-` operator, with a bool tensor is not supported"
    for call in (lambda: i - b, lambda: b - i, lambda: b - 2, lambda: 2.5 - b, lambda: i - True,
                 lambda: i.sub_(b), lambda: tt.sub(i, True, alpha=2)):
        with pytest.raises(RuntimeError, match=one_bool):
            call()
    with pytest.raises(RuntimeError, match=r"^Subtraction, the `-` operator, with two bool tensors"):
        b - True
    with pytest.raises(RuntimeError, match=r"^Subtraction, the `-` operator, with two bool tensors"):
        b -= b


def test_uint8_with_negative_python_int_wraps(device):
    u = tt.tensor([0, 1, 200], dtype=tt.uint8, device=device)
    for got, want in ((u + -2, [254, 255, 198]), (u - -2, [2, 3, 202]), (u * -1, [0, 255, 56]),
                      (-2 + u, [254, 255, 198])):
        assert got.dtype is tt.uint8
        assert to_numpy(got).tolist() == want


def test_dtype_dispatch_errors_are_not_implemented_errors(device):
    b = tt.tensor([True, False], device=device)
    f = tt.tensor([1.5, 2.0], dtype=tt.float16, device=device)
    dev = "cuda" if device == "cuda" else "cpu"
    cases = [(lambda: tt.remainder(b, b), f'"remainder_{dev}" not implemented for \'Bool\''),
             (lambda: tt.div(b, True, rounding_mode="floor"), f'"div_floor_{dev}" not implemented for \'Bool\''),
             (lambda: f & f, f'"bitwise_and_{dev}" not implemented for \'Half\''),
             (lambda: tt.abs(b), f'"abs_{dev}" not implemented for \'Bool\''),
             (lambda: b.floor(), f'"floor_{"cuda" if dev == "cuda" else "vml_cpu"}" not implemented for \'Bool\''),
             (lambda: b.round_(), f'"round_{"cuda" if dev == "cuda" else "vml_cpu"}" not implemented for \'Bool\''),
             (lambda: tt.gelu(b), f'"{"GeluCUDAKernelImpl" if dev == "cuda" else "GeluKernelImpl"}" not implemented '
                                  "for 'Bool'"),
             (lambda: b ** b, '"pow" not implemented for \'Bool\''),
             (lambda: True ** b, '"pow" not implemented for \'Bool\'')]
    for call, msg in cases:
        with pytest.raises(NotImplementedError, match="^" + msg.replace("(", r"\(").replace(")", r"\)") + "$"):
            call()
    with pytest.raises(RuntimeError, match="^Boolean inputs not supported for relu$"):
        tt.relu(b)
    assert (b ** True).tolist() == [True, False] and (b ** True).dtype is tt.bool   # a scalar 1: a copy
    assert b.sign().dtype is tt.bool and b.sign().tolist() == [True, False]


def test_tensor_only_binary_ops_reject_numbers(device):
    x = tt.tensor([1.0, -2.0], device=device)
    for call, name in ((lambda: tt.maximum(x, 0), "maximum"), (lambda: tt.minimum(1, x), "minimum"),
                       (lambda: tt.logical_and(x, True), "logical_and"), (lambda: tt.logical_xor(0, x), "logical_xor"),
                       (lambda: x.logical_or_(1), "logical_or_")):
        with pytest.raises(TypeError, match=f"^{name}\\(\\): argument"):
            call()
    for call in (lambda: tt.eq(2, x), lambda: tt.lt(2.0, x), lambda: tt.fmod(2, x),
                 lambda: tt.clamp(x, x, 4.0)):
        with pytest.raises(TypeError, match="received an invalid combination of arguments"):
            call()
    assert (2 < x).tolist() == [False, False] and (x == 1).tolist() == [True, False]  # reflected operators still work


def test_alpha_follows_torch(device):
    i = tt.tensor([1, 2], dtype=tt.int32, device=device)
    with pytest.raises(RuntimeError, match="^For integral input tensors, argument alpha must not be a floating point number.$"):
        tt.add(i, i, alpha=2.5)
    with pytest.raises(RuntimeError, match="^Boolean alpha only supported for Boolean results.$"):
        tt.add(i, i, alpha=True)
    b = tt.tensor([True, False], device=device)
    r = tt.add(b, tt.tensor([False, False], device=device), alpha=2)     # bool stays bool: True + 2*False
    assert r.dtype is tt.bool and r.tolist() == [True, False]
    assert tt.add(i, 3, alpha=2).tolist() == [7, 8] and tt.add(i, 3, alpha=2).dtype is tt.int32
    # input + alpha * other in the result type: float64, not float32 first
    d = tt.add(tt.tensor([0.0], dtype=tt.float64, device=device), tt.tensor([16777217], device=device), alpha=1.0 + 2 ** -30)
    assert d.dtype is tt.float64 and d.item() == 16777217 * (1.0 + 2 ** -30)


def test_where_accepts_uint8_condition_with_a_warning(device):
    c = tt.tensor([1, 0, 2], dtype=tt.uint8, device=device)
    with pytest.warns(UserWarning, match="where received a uint8 condition tensor"):
        out = tt.where(c, 1.0, 2.0)
    assert out.tolist() == [1.0, 2.0, 1.0]
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor, but got a tensor with dtype Int"):
        tt.where(c.int(), 1.0, 2.0)


def test_scalars_written_into_a_tensor_must_fit_its_dtype(device):
    i8 = tt.zeros(2, dtype=tt.int8, device=device)
    for call, cname in ((lambda: i8.fill_(300), "int8_t"), (lambda: i8.masked_fill(i8 == 0, -129), "int8_t"),
                        (lambda: i8.clamp(0, 300), "int8_t"),
                        (lambda: tt.where(i8 == 0, i8, 300), "int8_t"),
                        (lambda: tt.zeros(2, dtype=tt.int32, device=device).fill_(float("nan")), "int"),
                        (lambda: tt.zeros(2, dtype=tt.float16, device=device).fill_(1e10), "c10::Half"),
                        (lambda: tt.zeros(2, dtype=tt.uint8, device=device).fill_(-256), "uint8_t")):
        with pytest.raises(RuntimeError, match=f"^value cannot be converted to type {cname} without overflow$"):
            call()
    assert tt.zeros(2, dtype=tt.uint8, device=device).fill_(-255).tolist() == [1, 1]   # torch's unsigned rule
    assert tt.zeros(1, dtype=tt.float16, device=device).fill_(math.inf).tolist() == [math.inf]
    assert (i8 + 300).tolist() == [44, 44]                                    # arithmetic wraps, no check


def test_inplace_memory_overlap_errors(device):
    internal = r"^unsupported operation: more than one element of the written-to tensor refers to a single memory location"
    partial = r"^unsupported operation: some elements of the input tensor and the written-to tensor refer to a single"
    e = tt.zeros(3, device=device).expand(2, 3)
    for call in (lambda: e.add_(1), lambda: e.exp_(), lambda: e.clamp_(0, 1),
                 lambda: e.copy_(tt.ones(2, 3, device=device)), lambda: e[:, 0].copy_(tt.ones(2, device=device))):
        with pytest.raises(RuntimeError, match=internal):
            call()
    e.fill_(2.0)                       # fill_/zero_ write one value: allowed, as torch
    assert tt.zeros(3, device=device).expand(2, 3).zero_().shape == (2, 3)
    with pytest.warns(UserWarning, match="Use of masked_fill_ on expanded tensors is deprecated"):
        e.masked_fill_(tt.ones(2, 3, dtype=tt.bool, device=device), 5.0)
    assert to_numpy(e).tolist() == [[5.0] * 3] * 2
    t = tt.arange(5.0, device=device)
    for call in (lambda: t[1:].add_(t[:-1]), lambda: t[1:].copy_(t[:-1]), lambda: t[1:].clamp_(t[:-1])):
        with pytest.raises(RuntimeError, match=partial):
            call()
    a = tt.arange(6.0, device=device).view(2, 3)
    with pytest.raises(RuntimeError, match=partial):
        a.t().copy_(a.view(3, 2))             # the same memory read with other strides
    assert to_numpy(t.add_(t)).tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]   # the very same tensor: fine
    t.copy_(t)
    t[::2].add_(t[1::2][:1])                  # strided, too hard to judge: allowed, as torch
    assert to_numpy(t).tolist() == [2.0, 2.0, 6.0, 6.0, 10.0]


def test_copy_fill_zero_record_torch_nodes(device):
    x = tt.ones(3, device=device, requires_grad=True)
    v = tt.tensor(2.0, device=device, requires_grad=True)
    s = tt.tensor([1.0, 2.0, 3.0], dtype=tt.float64, device=device, requires_grad=True)
    assert (x * 1).fill_(2).grad_fn.name() == "FillBackward2"
    assert (x * 1).zero_().grad_fn.name() == "ZeroBackward0"
    assert (x * 1).copy_(s).grad_fn.name() == "CopyBackwards"
    y = x * 1
    y.fill_(v)
    assert y.grad_fn.name() == "FillBackward3"
    (y * tt.tensor([1.0, 2.0, 3.0], device=device)).sum().backward()
    assert v.grad.item() == 6.0 and to_numpy(x.grad).tolist() == [0.0, 0.0, 0.0]   # the old value: zeros
    x.grad = None
    y = x * 1
    y.copy_(s)
    (y * tt.tensor([1.0, 2.0, 3.0], device=device)).sum().backward()
    assert s.grad.dtype is tt.float64 and to_numpy(s.grad).tolist() == [1.0, 2.0, 3.0]
    assert to_numpy(x.grad).tolist() == [0.0, 0.0, 0.0]
    z = tt.zeros(2, 3, dtype=tt.int32, device=device)
    z.copy_(tt.tensor([1.7, -2.5, 3.0], device=device))
    assert z.tolist() == [[1, -2, 3]] * 2


def test_clamp_node_names_follow_torch_overloads(device):
    x = tt.tensor([0.5, -1.5], device=device, requires_grad=True)
    y = tt.tensor([2.0, 3.0], device=device, requires_grad=True)
    assert x.clamp(0, 1).grad_fn.name() == "ClampBackward1"
    assert x.clamp(min=0).grad_fn.name() == "ClampBackward1"
    assert x.clamp(max=y).grad_fn.name() == "ClampBackward0"
    assert x.clamp(y, y + 1).grad_fn.name() == "ClampBackward0"


def test_maximum_minimum_gradients_ties_and_nan(device):
    """torch's rule: ties split the gradient, the losing side gets 0, NaN on either side passes
    the whole gradient to both inputs."""
    nan = float("nan")
    for fn, grads in [(tt.maximum, ([0.5, 1, 1, 0], [0.5, 1, 1, 1])), (tt.minimum, ([0.5, 1, 1, 1], [0.5, 1, 1, 0]))]:
        a = tt.tensor([1.0, nan, 3.0, 2.0], device=device, requires_grad=True)
        b = tt.tensor([1.0, 2.0, nan, 5.0], device=device, requires_grad=True)
        fn(a, b).sum().backward()
        np.testing.assert_array_equal(to_numpy(a.grad), grads[0])
        np.testing.assert_array_equal(to_numpy(b.grad), grads[1])


@pytest.mark.parametrize("a,b,message", [
    ((2, 3, 4), (5, 4), "tensor a (3) must match the size of tensor b (5) at non-singleton dimension 1"),
    ((3,), (2, 4), "tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"),
    ((2, 3), (3, 2), "tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1"),
    ((0,), (2,), "tensor a (0) must match the size of tensor b (2) at non-singleton dimension 0"),
])
def test_broadcast_error_names_the_output_dim(a, b, message):
    """torch's infer_size: dims compared from the last, the output dim named."""
    with pytest.raises(RuntimeError, match=r"The size of " + message.replace("(", r"\(").replace(")", r"\)")):
        tt.zeros(a) + tt.zeros(b)


def test_numpy_scalars_are_numbers_and_arrays_defer(device):
    """NumPy scalars act as the Python numbers they hold (wrapped numbers: the tensor's dtype
    wins), on either side and in functions, methods and in-place forms; an ndarray operand
    leaves its operator to the Tensor (as torch's __array_priority__ does), so no ndarray
    comes back by accident."""
    h = tt.ones(3, dtype=tt.float16, device=device)
    for r in (np.float32(2.0) * h, h * np.float64(2.0), np.int64(4) - h - h, tt.add(h, np.int8(1)),
              tt.where(h > 0, h * 2, np.float64(0.0)), h.clamp(np.float32(2.0), np.float32(3.0))):
        assert isinstance(r, tt.Tensor) and r.dtype is tt.float16
        np.testing.assert_array_equal(to_numpy(r), [2.0, 2.0, 2.0])
    i = tt.arange(3, device=device)
    assert (i * np.float32(1.5)).dtype is tt.float32 and (i + np.bool_(True)).dtype is tt.int64
    h.add_(np.float32(1))
    np.testing.assert_array_equal(to_numpy(h), [2.0, 2.0, 2.0])
    with pytest.raises(TypeError):
        np.ones(3) + h
    with pytest.raises(TypeError):
        np.ones(3) @ h
