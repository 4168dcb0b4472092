"""Pointwise behaviour that the mutation review of backends/numpy_ref.py (tests/MUTATION.md) found
unpinned: each test kills surviving mutants with a value recorded from torch 2.13 or one the
`math` module computes, on the cpu device (whose kernels are those references)."""
import math

import numpy as np
import pytest

import tritensor as tt


def f32(*hexes):
    return [float.fromhex(h) for h in hexes]


@pytest.mark.parametrize("op", [
    lambda a, b: tt.div(a, b, rounding_mode="trunc"),
    lambda a, b: tt.div(a, b, rounding_mode="floor"),
    tt.floor_divide, tt.remainder, tt.fmod,
])
def test_integer_division_by_zero_has_torchs_exact_message(op):
    # torch: RuntimeError('ZeroDivisionError'), the whole message, for each of them
    with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
        op(tt.tensor([1, 2]), tt.tensor([1, 0]))


def test_round_to_negative_decimals():
    # torch.round(x, decimals=-d): rint(x / 10**d) * 10**d, ties to even (-1250 -> -1200, 1350 -> 1400)
    x = tt.tensor([1234.0, -1250.0, 1350.0, 5.0, -49.9])
    assert tt.round(x, decimals=-2).tolist() == [1200.0, -1200.0, 1400.0, 0.0, -0.0]
    assert tt.round(x, decimals=-1).tolist() == [1230.0, -1250.0, 1350.0, 0.0, -50.0]
    assert math.copysign(1, tt.round(x, decimals=-2).tolist()[4]) == -1


def test_logit_with_eps_zero_clamps_to_the_unit_interval():
    # torch: eps=0 still clamps (x < 0 -> 0, x > 1 -> 1), so the outside values are -inf/inf, not NaN
    got = tt.logit(tt.tensor([-0.5, 0.0, 0.25, 1.0, 1.5]), eps=0.0).tolist()
    assert got[:2] == [-math.inf, -math.inf] and got[3:] == [math.inf, math.inf]
    assert got[2] == pytest.approx(math.log(0.25 / 0.75), rel=1e-6)


def test_gcd_lcm_of_int64_values_past_float64s_mantissa():
    # a float64 detour would round these (2**55 + 1 needs 56 bits): math's exact integers are the oracle
    a, b = (2 ** 55 + 1) * 3, (2 ** 55 + 1) * 5
    assert tt.gcd(tt.tensor([a, -a]), tt.tensor([b, b])).tolist() == [math.gcd(a, b)] * 2
    assert tt.lcm(tt.tensor([2 ** 55 + 1]), tt.tensor([7])).tolist() == [math.lcm(2 ** 55 + 1, 7)]
    assert tt.lcm(tt.tensor([2 ** 40]), tt.tensor([3])).tolist() == [3 * 2 ** 40]


def test_lcm_of_int32_wraps_as_torchs_int_arithmetic():
    # torch computes abs(a / g * b) in int for int32: 65537 * 32771 wraps to -2147254269, abs 2147254269
    got = tt.lcm(tt.tensor([65537], dtype=tt.int32), tt.tensor([32771], dtype=tt.int32))
    assert got.dtype == tt.int32 and got.tolist() == [2147254269]


@pytest.mark.parametrize("dtype", [tt.int64, tt.int8, tt.uint8])
def test_isposinf_isneginf_of_integers_are_all_false(dtype):
    x = tt.tensor([[1, 2, 3], [0, 5, 6]], dtype=dtype)
    for op in (tt.isposinf, tt.isneginf):
        got = op(x)
        assert got.dtype == tt.bool and got.tolist() == [[False] * 3] * 2


def test_lerp_switches_formula_at_half_weight():
    # torch's two-sided lerp: x + w (end - x) for |w| < 0.5, else end - (end - x)(1 - w). These
    # float32 inputs give different bits under the two formulas; the values are torch's.
    x = tt.tensor(f32("0x1.002b48p+6", "0x1.925632p+3", "0x1.925632p+3"))
    end = tt.tensor(f32("-0x1.b72472p-1", "0x1.ad5124p-2", "0x1.ad5124p-2"))
    want = f32("0x1.7e89c8p+5", "0x1.9fc0bap+2", "0x1.ba95ccp+1")
    assert tt.lerp(x, end, tt.tensor([0.25, 0.5, 0.75])).tolist() == want
    assert tt.lerp(x[1:2], end[1:2], 0.5).tolist() == want[1:2]


@pytest.mark.parametrize("dtype, a, b", [
    (tt.int8, [-100, 3, 100], [8, 9, -1]),
    (tt.int64, [-100, 3, 100], [64, 65, -1]),
    (tt.uint8, [200, 3, 100], [8, 9, 200]),
])
def test_shifts_past_the_width_or_below_zero(dtype, a, b):
    # torch: a left shift out of [0, width) is 0; a right shift there gives the sign bits
    a, b = tt.tensor(a, dtype=dtype), tt.tensor(b, dtype=dtype)
    assert tt.bitwise_left_shift(a, b).tolist() == [0, 0, 0]
    assert tt.bitwise_right_shift(a, b).tolist() == ([0, 0, 0] if dtype is tt.uint8 else [-1, 0, 0])


def test_int64_shift_keeps_every_bit():
    # (2**53 + 1) << 2 has more significant bits than a float64 holds
    assert tt.bitwise_left_shift(tt.tensor([2 ** 53 + 1]), 2).tolist() == [(2 ** 53 + 1) * 4]
    assert tt.bitwise_right_shift(tt.tensor([2 ** 62 + 3]), 1).tolist() == [(2 ** 62 + 3) >> 1]


def test_signbit_of_integers_and_bools():
    # torch: x < 0 for signed integers, all False for unsigned and bool
    assert tt.signbit(tt.tensor([-1, 0, 2])).tolist() == [True, False, False]
    assert tt.signbit(tt.tensor([-128, 127], dtype=tt.int8)).tolist() == [True, False]
    assert tt.signbit(tt.tensor([0, 255], dtype=tt.uint8)).tolist() == [False, False]
    assert tt.signbit(tt.tensor([True, False])).tolist() == [False, False]


def test_ldexp_of_huge_integral_exponents():
    # x * 2**e: 2**1e10 overflows to inf, 2**-1e10 underflows to 0 (torch: [inf, 0.0, 12.0])
    got = tt.ldexp(tt.tensor([1.0, 1.0, 3.0]), tt.tensor([1e10, -1e10, 2.0]))
    assert got.tolist() == [math.inf, 0.0, 12.0]


def test_nan_to_num_of_integers_is_the_input():
    # torch: integers have no NaN or infinity, the values come back unchanged (same dtype)
    for dtype in (tt.int64, tt.uint8, tt.bool):
        x = tt.tensor([1, 0, 3] if dtype is not tt.bool else [True, False, True], dtype=dtype)
        got = tt.nan_to_num(x, nan=2.0, posinf=5.0, neginf=-5.0)
        assert got.dtype == dtype and got.tolist() == x.tolist()
