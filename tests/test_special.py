"""The vectorised erf of the cpu reference against math.erf (correctly rounded): within 2 ulp in
float64, identical after rounding to float32 and float16; special values as C's erf."""
import math

import numpy as np

from tritensor.backends._special import erf


def test_erf_float64_within_two_ulp_of_math_erf():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-7, 7, 20000), rng.normal(0, 1e-3, 500), rng.normal(0, 1, 5000),
                        np.arange(-6.5, 6.5, 1 / 128), [5.999999, 6.0, 1e-300, -1e-310, 2.0 ** -1074]])
    ref = np.array([math.erf(v) for v in x])
    got = erf(x)
    ulp = np.abs(got - ref) / np.spacing(np.maximum(np.abs(ref), np.finfo(np.float64).tiny))
    assert ulp.max() <= 2


def test_erf_rounds_like_math_erf_in_float32_and_float16():
    rng = np.random.default_rng(1)
    x32 = rng.normal(0, 2, 40000).astype(np.float32)     # several chunks of the blocked loop
    assert np.array_equal(erf(x32), np.array([math.erf(float(v)) for v in x32]).astype(np.float32))
    x16 = x32[:5000].astype(np.float16)
    assert erf(x16).dtype == np.float16
    assert np.array_equal(erf(x16), np.array([math.erf(float(v)) for v in x16]).astype(np.float16))


def test_erf_special_values_and_shapes():
    got = erf(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 40.0, -40.0]))
    assert got[0] == 0 and not np.signbit(got[0]) and got[1] == 0 and np.signbit(got[1])
    assert list(got[2:4]) == [1.0, -1.0] and np.isnan(got[4]) and list(got[5:]) == [1.0, -1.0]
    assert erf(np.ones((2, 0))).shape == (2, 0)
    assert erf(np.array(0.5)).shape == () and erf(np.array(0.5)) == math.erf(0.5)
    assert erf(np.arange(6.0).reshape(2, 3).T).shape == (3, 2)
