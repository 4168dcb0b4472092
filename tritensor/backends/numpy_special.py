"""NumPy references of the special functions (tt.special, lgamma, digamma, Bessel ...): the cpu
device runs them and the tests check the kernels (kernels/special.py) against them.

``numpy_ref.elementwise(name)`` finds a function here by the op's name. Arrays only (no Tensor),
vectorised (no Python loop over elements; loops run over terms or iterations, every element at
once under a mask). Each follows the algorithm of its kernel FN, which follows PyTorch's
(aten/src/ATen/native/Math.h: Cephes, SciPy's igam, Boost's Lanczos sum) except where noted:
lgamma (torch calls the C library's) is a Taylor series around 2 plus recurrence, reflection and
Stirling's series; erfc (the C library's in torch) and erfcx (a table of 100 Chebyshev pieces in
torch) are Cephes' rational functions. Values are computed in float64 and returned in the dtype
handed in (the op's compute dtype), so a float32 result is the float64 one rounded; where torch's
result depends on the dtype (hermite's degree limit, the series' stopping rule) the dtype handed
in decides. The coefficient tables are shared with the kernels (kernels/_special_tables.py).
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ..kernels import _special_tables as T
from ._special import erf as _erf

_PI = math.pi
_INF = math.inf
_NAN = math.nan


def _float64_result(fn):
    """Compute in float64 (the arrays' dtype is the op's compute dtype, read by ``single``) and
    return the result in the first operand's dtype."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        dtype = np.result_type(*[np.asarray(a).dtype for a in args])
        single = dtype != np.float64
        with np.errstate(all="ignore"):
            out = fn(*[np.asarray(a, dtype=np.float64) for a in args], single=single, **kwargs)
        return np.asarray(out).astype(dtype, copy=False)
    return wrapper


def _polevl(x, coeffs):
    """sum coeffs[i] x^(n - i): Horner's rule, highest degree first."""
    acc = np.full(np.shape(x), coeffs[0], dtype=np.float64)
    for c in coeffs[1:]:
        acc = acc * x + c
    return acc


def _chbevl(x, coeffs):
    """Cephes' chbevl: the Chebyshev series sum' coeffs[i] T_i(x/2), constant term last."""
    b0 = np.full(np.shape(x), coeffs[0], dtype=np.float64)
    b1 = np.zeros_like(b0)
    b2 = b1
    for c in coeffs[1:]:
        b2 = b1
        b1 = b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


def _exp_square(x, sign):
    """exp(sign * x^2) without the error of rounding x^2: x = hi + lo with hi a multiple of 2^-10,
    so hi^2 is exact and x^2 = hi^2 + lo (x + hi) (Cephes' expx2)."""
    ax = np.abs(x)
    ax = np.where(ax > 1e10, 1e10, ax)      # exp(+-1e20) is already 0 / inf; the grid would overflow
    hi = np.floor(ax * 1024.0 + 0.5) / 1024.0
    big = np.exp(sign * hi * hi)
    # where that is 0 or inf already, lo (x + hi) may be large: the product would be 0 * inf
    return np.where((big == 0.0) | np.isinf(big), big, big * np.exp(sign * (ax - hi) * (ax + hi)))


# --------------------------------------------------------------------------- error functions
def _erf_small(x):
    """erf(x) for |x| < 1 (Cephes: x T(x^2) / U(x^2))."""
    z = x * x
    return x * _polevl(z, T.ERF_T) / _polevl(z, T.ERF_U)


def _erfcx_nonnegative(x):
    """erfcx(x) = exp(x^2) erfc(x) for x >= 0: Cephes' erfc rational functions without their
    exp(-x^2) factor for x >= 1, exp(x^2) (1 - erf(x)) below, 1 / (sqrt(pi) x) past 5e7."""
    small = _exp_square(x, 1.0) * (1.0 - _erf_small(np.minimum(x, 1.0)))
    mid = _polevl(x, T.ERFC_P) / _polevl(x, T.ERFC_Q)
    xl = np.minimum(x, 5e7)
    large = _polevl(xl, T.ERFC_R) / _polevl(xl, T.ERFC_S)
    r = np.where(x < 1.0, small, np.where(x < 8.0, mid, large))
    return np.where(x >= 5e7, 0.56418958354775628695 / x, r)     # 1 / sqrt(pi) / x: no overflow at the largest x


@_float64_result
def erfc(x, single=False):
    ax = np.abs(x)
    small = 1.0 - _erf_small(np.where(ax < 1.0, x, 0.0))
    y = _exp_square(ax, -1.0) * _erfcx_nonnegative(ax)
    y = np.where(x < 0, 2.0 - y, y)
    return np.where(ax < 1.0, small, y)


@_float64_result
def erfcx(x, single=False):
    pos = _erfcx_nonnegative(np.abs(x))
    neg = 2.0 * _exp_square(x, 1.0) - pos
    r = np.where(x < 0, np.where(x < -26.7, _INF, neg), pos)
    return np.where(np.isnan(x), x, r)


@_float64_result
def erfinv(y, single=False):
    # torch's calc_erfinv: a rational first guess, then two Newton steps on erf(x) = y
    a, b, c, d = T.ERFINV_A, T.ERFINV_B, T.ERFINV_C, T.ERFINV_D
    ay = np.abs(y)
    z = y * y
    central = y * (((a[3] * z + a[2]) * z + a[1]) * z + a[0]) / \
        ((((b[3] * z + b[2]) * z + b[1]) * z + b[0]) * z + 1.0)
    w = np.sqrt(-np.log((1.0 - ay) / 2.0))
    tail = np.copysign(((c[3] * w + c[2]) * w + c[1]) * w + c[0], y) / ((d[1] * w + d[0]) * w + 1.0)
    x = np.where(ay <= 0.7, central, tail)
    for _ in range(2):
        x = x - (_erf(x) - y) / (2.0 / math.sqrt(_PI) * np.exp(-x * x))
    x = np.where(ay == 1.0, np.copysign(_INF, y), x)
    return np.where(ay > 1.0, _NAN, x)


@_float64_result
def ndtri(y, single=False):
    """Cephes ndtri: the x with ndtr(x) = y."""
    s2pi = 2.50662827463100050242
    exp_m2 = 0.13533528323661269189
    upper = y > 1.0 - exp_m2
    yy = np.where(upper, 1.0 - y, y)
    # |y - 1/2| <= 3/8
    c = yy - 0.5
    c2 = c * c
    central = (c + c * (c2 * _polevl(c2, T.NDTRI_P0) / _polevl(c2, T.NDTRI_Q0))) * s2pi
    # the tails, in x = sqrt(-2 log y)
    x = np.sqrt(-2.0 * np.log(yy))
    x0 = x - np.log(x) / x
    z = 1.0 / x
    x1 = np.where(x < 8.0, z * _polevl(z, T.NDTRI_P1) / _polevl(z, T.NDTRI_Q1),
                  z * _polevl(z, T.NDTRI_P2) / _polevl(z, T.NDTRI_Q2))
    tail = x0 - x1
    tail = np.where(upper, tail, -tail)
    r = np.where(yy > exp_m2, central, tail)
    r = np.where(y == 0.0, -_INF, np.where(y == 1.0, _INF, r))
    return np.where((y < 0.0) | (y > 1.0), _NAN, r)


@_float64_result
def log_ndtr(x, single=False):
    # torch's calc_log_ndtr: log(erfcx(-t) / 2) - t^2 below -1 (no underflow), log1p(-erfc(t) / 2) above
    t = x * math.sqrt(0.5)
    low = np.log(erfcx(-t) / 2.0) - t * t
    high = np.log1p(-erfc(t) / 2.0)
    return np.where(x < -1.0, low, high)


# --------------------------------------------------------------------------- gamma family
def _lgamma_positive(x):
    """log|Gamma(x)| for x >= 1/2 (and +inf): the Taylor series of lgamma(2 + e) on [1.5, 2.5],
    recurrence down to it below 13 (lgamma(x) = lgamma(x - k) + log((x - 1)...(x - k))), one step
    up from [0.5, 1.5) (lgamma(x) = lgamma(x + 1) - log1p(x - 1), accurate near the root at 1),
    Stirling's series from 13."""
    u = np.where(x < 13.0, x, 2.0)
    z = np.ones_like(u)
    for _ in range(11):            # 13 -> 2.5: at most 11 steps down (each exact)
        down = u >= 2.5
        u = np.where(down, u - 1.0, u)
        z = np.where(down, z * u, z)
    below = x < 1.5                # lgamma(x) = lgamma(2 + (x - 1)) - log(x), x - 1 exact
    e = np.where(below, x - 1.0, u - 2.0)
    taylor = _polevl(e, T.LGAMMA_TAYLOR) + np.log(z) - np.where(below, np.log1p(e), 0.0)
    xs = np.where(x >= 13.0, x, 13.0)
    lx = np.log(xs)
    stirling = xs * (lx - 1.0) - 0.5 * lx + T.LOG_SQRT_2PI + _polevl(1.0 / (xs * xs), T.LGAMMA_STIRLING) / xs
    r = np.where(x < 13.0, taylor, stirling)
    return np.where(x == _INF, _INF, np.where(np.isnan(x), x, r))


def _lgamma(x):
    """log|Gamma(x)|; below 1/2 by reflection: log(pi / |sin(pi x)|) - lgamma(1 - x), sin(pi x)
    read from x's distance to the nearest integer (exact), so poles and sign changes are exact."""
    reflect = x < 0.5
    y = _lgamma_positive(np.where(reflect, 1.0 - x, x))
    ar = np.abs(x - np.round(x))
    # log(pi / sin(pi r)) as -log(r) - log(sinc(r)): pi r would round a subnormal r
    pr = _PI * ar
    sinc = np.where(ar < 1e-8, 1.0, np.sin(pr) / np.where(ar == 0, 1.0, pr))
    refl = np.where(ar == 0, _INF, -np.log(ar) - np.log(sinc) - y)     # a pole (every x <= -2**52)
    out = np.where(reflect, refl, y)
    return np.where(np.isinf(x), _INF, out)


@_float64_result
def lgamma(x, single=False):
    return _lgamma(x)


def _digamma(x):
    """torch's calc_digamma: reflection below 0, recurrence up to 10, the asymptotic series."""
    frac = x - np.trunc(x)
    reflection = np.where(x < 0, _PI / np.tan(_PI * frac), 0.0)
    y = np.where(x < 0, 1.0 - x, x)
    result = np.zeros_like(y)
    for _ in range(10):
        step = y < 10.0
        result = np.where(step, result - 1.0 / y, result)
        y = np.where(step, y + 1.0, y)
    z = 1.0 / (y * y)
    series = np.where(y < 1e17, z * _polevl(z, T.DIGAMMA_A), 0.0)
    r = np.where(y == 10.0, result + T.PSI_10, result + np.log(y) - 0.5 / y - series)
    r = r - reflection
    r = np.where((x < 0) & (x == np.trunc(x)), _NAN, r)
    return np.where(x == 0, np.copysign(_INF, -x), r)


@_float64_result
def digamma(x, single=False):
    return _digamma(x)


def _trigamma(x):
    """torch's trigamma: reflection below 1/2, six recurrence steps, the asymptotic series."""
    reflect = x < 0.5
    r = x - np.round(x)                   # sin(pi x)^2 from x's distance to an integer
    s = np.sin(_PI * r)
    result = np.where(reflect, -(_PI * _PI) / (s * s), 0.0)
    y = np.where(reflect, 1.0 - x, x)
    for _ in range(6):
        result = result + 1.0 / (y * y)
        y = y + 1.0
    ixx = 1.0 / (y * y)
    result = result + (1.0 + 1.0 / (2.0 * y) + ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / y
    return np.where(reflect, -result, result)


def _zeta(x, q, machep=1.11022302462515654042e-16):
    """Hurwitz zeta(x, q) = sum_k (q + k)^-x (Cephes zeta.c, as torch's): the sum until the terms
    fall below machep, then Euler-Maclaurin's correction with (2k)! / B_2k. torch's cpu kernel
    computes in float64 for float32 too (its accumulate type)."""
    x, q = np.broadcast_arrays(x, q)
    nonpositive_q = (q <= 0) & ((q == np.floor(q)) | (x != np.floor(x)))
    special = (x <= 1.0) | nonpositive_q                  # no sum: the value is set below
    xs, qs = np.where(special, 2.0, x), np.where(special, 1.0, q)
    s = np.power(qs, -xs)
    a = qs.copy()
    b = np.zeros_like(s)
    done = np.zeros(s.shape, dtype=bool)
    i = 0
    while True:
        going = ~done & ((i < 9) | (a <= 9.0))
        if not going.any():
            break
        i += 1
        a = np.where(going, a + 1.0, a)
        b = np.where(going, np.power(a, -xs), b)
        s = np.where(going, s + b, s)
        done |= going & (-machep * s < b) & (b < machep * s)
    w = a.copy()
    s = np.where(done, s, s + b * w / (xs - 1.0) - 0.5 * b)
    fa = np.ones_like(s)
    k = np.zeros_like(s)
    for coeff in T.ZETA_A:
        fa = fa * (xs + k)
        b = b / w
        t = fa * b / coeff
        s = np.where(done, s, s + t)
        done |= np.abs(t / s) < machep
        k = k + 1.0
        fa = fa * (xs + k)
        b = b / w
        k = k + 1.0
    s = np.where(nonpositive_q, np.where(q == np.floor(q), _INF, _NAN), s)
    s = np.where(x < 1.0, _NAN, s)
    return np.where(x == 1.0, _INF, s)


@_float64_result
def zeta(x, q, single=False):
    return _zeta(x, q)


@_float64_result
def polygamma(x, n=0, single=False):
    """polygamma(n, x): digamma, trigamma, else (-1)^(n+1) n! zeta(n + 1, x)."""
    if n == 0:
        return _digamma(x)
    if n == 1:
        return _trigamma(x)
    factorial = np.exp(_lgamma(np.float64(n + 1)))
    return (1.0 if n % 2 else -1.0) * factorial * _zeta(np.float64(n + 1), x)


# --------------------------------------------------------------------------- incomplete gamma
_MAXITER = 2000


def _machep(single):
    return 5.9604644775390625e-8 if single else 1.11022302462515654042e-16


def _lanczos_sum_expg_scaled(a):
    """Boost's rational Lanczos sum, in 1/a past 1 (torch's ratevl; numerator and denominator
    have one degree, so no power of a remains)."""
    num, den = T.LANCZOS_NUM, T.LANCZOS_DENOM
    small = _polevl(a, num) / _polevl(a, den)
    inv = 1.0 / a
    large = _polevl(inv, num[::-1]) / _polevl(inv, den[::-1])
    return np.where(np.abs(a) > 1.0, large, small)


def _igam_fac(a, x, single):
    """x^a exp(-x) / Gamma(a), with the Lanczos form where a ~ x (torch's _igam_helper_fac)."""
    maxlog = 88.72283905206835 if single else 7.09782712893383996843e2
    g = 6.024680040776729583740234375
    ax = a * np.log(x) - x - _lgamma(a)
    direct = np.where(ax < -maxlog, 0.0, np.exp(ax))
    fac = a + g - 0.5
    res = np.sqrt(fac / math.e) / _lanczos_sum_expg_scaled(a)
    near = res * np.exp(a - x) * np.power(x / fac, a)
    numfac = (x - a - g + 0.5) / fac
    far = res * np.exp(a * (np.log1p(numfac) - numfac) + x * (0.5 - g) / fac)
    lanczos = np.where((a < 200) & (x < 200), near, far)
    return np.where(np.abs(a - x) > 0.4 * np.abs(a), direct, lanczos)


def _igam_series(a, x, single):
    """igam by DLMF 8.11.4 (torch's _igam_helper_series)."""
    machep = _machep(single)
    fac = _igam_fac(a, x, single)
    r = a.copy()
    c = np.ones_like(a)
    ans = np.ones_like(a)
    active = fac != 0.0
    for _ in range(_MAXITER):
        if not active.any():
            break
        r = np.where(active, r + 1.0, r)
        c = np.where(active, c * x / r, c)
        ans = np.where(active, ans + c, ans)
        active &= ~(c <= machep * ans)
    return np.where(fac == 0.0, 0.0, ans * fac / a)


def _igamc_series(a, x, single):
    """igamc by DLMF 8.7.3, avoiding cancellation (torch's _igamc_helper_series)."""
    machep = _machep(single)
    fac = np.ones_like(a)
    total = np.zeros_like(a)
    active = np.ones(a.shape, dtype=bool)
    for n in range(1, _MAXITER):
        if not active.any():
            break
        fac = np.where(active, fac * -x / n, fac)
        term = fac / (a + n)
        total = np.where(active, total + term, total)
        active &= ~(np.abs(term) <= machep * np.abs(total))
    logx = np.log(x)
    return -np.expm1(a * logx - _lgamma(1.0 + a)) - np.exp(a * logx - _lgamma(a)) * total


def _igamc_continued_fraction(a, x, single):
    """igamc by DLMF 8.9.2 (torch's _igamc_helper_continued_fraction)."""
    machep = _machep(single)
    big, biginv = (16777216.0, 5.9604644775390625e-8) if single else (4.503599627370496e15, 2.22044604925031308085e-16)
    fac = _igam_fac(a, x, single)
    y = 1.0 - a
    z = x + y + 1.0
    c = np.zeros_like(a)
    pkm2, qkm2 = np.ones_like(a), x.copy()
    pkm1, qkm1 = x + 1.0, z * x
    ans = pkm1 / qkm1
    active = fac != 0.0
    for _ in range(_MAXITER):
        if not active.any():
            break
        c = c + 1.0
        y = y + 1.0
        z = z + 2.0
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        ratio = pk / np.where(qk != 0, qk, 1.0)
        t = np.where(qk != 0, np.abs((ans - ratio) / ratio), 1.0)
        ans = np.where(active & (qk != 0), ratio, ans)
        pkm2, pkm1 = np.where(active, pkm1, pkm2), np.where(active, pk, pkm1)
        qkm2, qkm1 = np.where(active, qkm1, qkm2), np.where(active, qk, qkm1)
        rescale = active & (np.abs(pk) > big)
        pkm2 = np.where(rescale, pkm2 * biginv, pkm2)
        pkm1 = np.where(rescale, pkm1 * biginv, pkm1)
        qkm2 = np.where(rescale, qkm2 * biginv, qkm2)
        qkm1 = np.where(rescale, qkm1 * biginv, qkm1)
        active &= ~(t <= machep)
    return np.where(fac == 0.0, 0.0, ans * fac)


def _igam_asymptotic(a, x, lower, single):
    """igam (lower) / igamc by the uniform asymptotic expansion DLMF 8.12.3/8.12.4 (torch's
    _igam_helper_asymptotic_series): the terms stop where they fall below machep or grow."""
    machep = _machep(single)
    sgn = -1.0 if lower else 1.0
    lam = x / a
    sigma = (x - a) / a
    eta = np.sqrt(-2.0 * (np.log1p(sigma) - sigma))
    eta = np.where(lam > 1, eta, np.where(lam < 1, -eta, 0.0))
    res = 0.5 * erfc(sgn * eta * np.sqrt(a / 2.0))
    total = np.zeros_like(a)
    afac = np.ones_like(a)
    old = np.full_like(a, _INF)
    active = np.ones(a.shape, dtype=bool)
    for row in T.IGAM_D:
        ck = np.full_like(a, row[0])
        inner = np.ones(a.shape, dtype=bool)
        power = np.ones_like(a)
        for coeff in row[1:]:
            power = power * eta
            term = coeff * power
            ck = np.where(inner, ck + term, ck)
            inner &= ~(np.abs(term) < machep * np.abs(ck))
        term = ck * afac
        absterm = np.abs(term)
        active &= ~(absterm > old)
        total = np.where(active, total + term, total)
        active &= ~(absterm < machep * np.abs(total))
        old = absterm
        afac = afac / a
    return res + sgn * np.exp(-0.5 * a * eta * eta) * total / np.sqrt(2.0 * np.float32(_PI) * a)


def _asymptotic_region(a, x):
    ratio = np.abs(x - a) / a
    return ((a > 20) & (a < 200) & (ratio < 0.3)) | ((a > 200) & (ratio < 4.5 / np.sqrt(a)))


def _igamma_boundaries(a, x, r, lower):
    """torch's (SciPy's) values at the edges of the domain; igammac is the complement."""
    # torch's tests in its order (the first that holds decides, so they apply here last to first);
    # a NaN no test catches (igamma(inf, nan) is 0, igamma(nan, 0) is 0) gives NaN
    edge_a0 = np.where(x > 0, 1.0 if lower else 0.0, _NAN)
    r = np.where(np.isnan(x) | np.isnan(a), _NAN, r)
    r = np.where(np.isinf(x), 1.0 if lower else 0.0, r)
    r = np.where(np.isinf(a), np.where(np.isinf(x), _NAN, 0.0 if lower else 1.0), r)
    r = np.where(x == 0, 0.0 if lower else 1.0, r)
    r = np.where(a == 0, edge_a0, r)
    return np.where((x < 0) | (a < 0), _NAN, r)


def _safe(a, x, use):
    """Arguments for a path: the element's own where ``use``, a harmless (1, 1) elsewhere."""
    return np.where(use, a, 1.0), np.where(use, x, 1.0)


def _interior(a, x):
    """The elements no boundary rule decides (0 < a, x < inf); the others compute with (1, 1):
    their series would not converge (NaN) or would run long for nothing."""
    inside = (a > 0) & (x > 0) & (a < _INF) & (x < _INF)
    return np.where(inside, a, 1.0), np.where(inside, x, 1.0)


@_float64_result
def igamma(a, x, single=False):
    a0, x0 = np.broadcast_arrays(a, x)
    a, x = _interior(a0, x0)
    asym = _asymptotic_region(a, x)
    via_c = ~asym & (x > 1.0) & (x > a)
    cf = via_c & (x > 1.1)                      # 1 - igamc's continued fraction ...
    cs = via_c & ~cf                            # ... or its series (1 < x <= 1.1)
    series = ~asym & ~via_c
    r = np.zeros(a.shape)
    r = np.where(asym, _igam_asymptotic(*_safe(a, x, asym), True, single), r)
    r = np.where(cf, 1.0 - _igamc_continued_fraction(*_safe(a, x, cf), single), r)
    r = np.where(cs, 1.0 - _igamc_series(*_safe(a, x, cs), single), r)
    r = np.where(series, _igam_series(*_safe(a, x, series), single), r)
    return _igamma_boundaries(a0, x0, r, True)


@_float64_result
def igammac(a, x, single=False):
    a0, x0 = np.broadcast_arrays(a, x)
    a, x = _interior(a0, x0)
    asym = _asymptotic_region(a, x)
    logx = np.log(np.where(x > 0, x, 1.0))
    via_igam = np.where(x > 1.1, x < a, np.where(x <= 0.5, -0.4 / logx < a, x * 1.1 < a))
    cf = ~asym & (x > 1.1) & ~via_igam
    one_minus = ~asym & via_igam
    cs = ~asym & ~via_igam & ~cf
    r = np.zeros(a.shape)
    r = np.where(asym, _igam_asymptotic(*_safe(a, x, asym), False, single), r)
    r = np.where(cf, _igamc_continued_fraction(*_safe(a, x, cf), single), r)
    r = np.where(one_minus, 1.0 - _igam_series(*_safe(a, x, one_minus), single), r)
    r = np.where(cs, _igamc_series(*_safe(a, x, cs), single), r)
    return _igamma_boundaries(a0, x0, r, False)


# --------------------------------------------------------------------------- Bessel functions
def _i0e(x):
    ax = np.abs(x)
    return np.where(ax <= 8.0, _chbevl(ax / 2.0 - 2.0, T.I0E_A),
                    _chbevl(32.0 / ax - 2.0, T.I0E_B) / np.sqrt(ax))


def _i1e(x):
    ax = np.abs(x)
    r = np.where(ax <= 8.0, _chbevl(ax / 2.0 - 2.0, T.I1E_A) * ax,
                 _chbevl(32.0 / ax - 2.0, T.I1E_B) / np.sqrt(ax))
    return np.where(x < 0, -r, r)


@_float64_result
def i0(x, single=False):
    return np.exp(np.abs(x)) * _i0e(x)


@_float64_result
def i0e(x, single=False):
    return _i0e(x)


@_float64_result
def i1(x, single=False):
    return np.exp(np.abs(x)) * _i1e(x)


@_float64_result
def i1e(x, single=False):
    return _i1e(x)


def _k0_small(x):
    """K0 on (0, 2]: the Chebyshev series minus log(x/2) I0(x)."""
    return _chbevl(x * x - 2.0, T.K0_A) - np.log(0.5 * x) * np.exp(x) * _i0e(x)


def _k1_small(x):
    return np.log(0.5 * x) * np.exp(x) * _i1e(x) + _chbevl(x * x - 2.0, T.K1_A) / x


def _k_scaled_large(x, table):
    """exp(x) K(x) on (2, inf)."""
    return _chbevl(8.0 / x - 2.0, table) / np.sqrt(x)


def _k_domain(x, r):
    return np.where(x == 0, _INF, np.where(x < 0, _NAN, r))


@_float64_result
def modified_bessel_k0(x, single=False):
    return _k_domain(x, np.where(x <= 2.0, _k0_small(x), np.exp(-x) * _k_scaled_large(x, T.K0_B)))


@_float64_result
def modified_bessel_k1(x, single=False):
    return _k_domain(x, np.where(x <= 2.0, _k1_small(x), np.exp(-x) * _k_scaled_large(x, T.K1_B)))


@_float64_result
def scaled_modified_bessel_k0(x, single=False):
    return _k_domain(x, np.where(x <= 2.0, _k0_small(x) * np.exp(x), _k_scaled_large(x, T.K0_B)))


@_float64_result
def scaled_modified_bessel_k1(x, single=False):
    return _k_domain(x, np.where(x <= 2.0, _k1_small(x) * np.exp(x), _k_scaled_large(x, T.K1_B)))


_SQRT_2_OVER_PI = 0.797884560802865355879892119868763737
_PI_4 = 0.785398163397448309615660845819875721
_3PI_4 = 2.356194490192344928846982537459627163


def _bessel_far(x, pp, pq, qp, qq, phase):
    """The modulus-phase forms of J and Y past 5: (p, q) and sqrt(2 / (pi x))."""
    w = 25.0 / (x * x)
    p = _polevl(w, pp) / _polevl(w, pq)
    q = _polevl(w, qp) / _polevl(w, qq)
    return p, 5.0 / x * q, x - phase, _SQRT_2_OVER_PI / np.sqrt(x)


def _j0(x):
    x = np.abs(x)
    z = x * x
    near = (z - 5.78318596294678452118e+00) * (z - 3.04712623436620863991e+01) * \
        _polevl(z, T.J0_RP) / _polevl(z, T.J0_RQ)
    near = np.where(x < 1e-5, 1.0 - z / 4.0, near)
    p, q, t, s = _bessel_far(x, T.J0_PP, T.J0_PQ, T.J0_QP, T.J0_QQ, _PI_4)
    return np.where(x <= 5.0, near, (p * np.cos(t) - q * np.sin(t)) * s)


def _j1(x):
    ax = np.abs(x)
    z = ax * ax
    near = _polevl(z, T.J1_RP) / _polevl(z, T.J1_RQ) * ax * \
        (z - 1.46819706421238932572e+01) * (z - 4.92184563216946036703e+01)
    p, q, t, s = _bessel_far(ax, T.J1_PP, T.J1_PQ, T.J1_QP, T.J1_QQ, _3PI_4)
    r = np.where(ax <= 5.0, near, (p * np.cos(t) - q * np.sin(t)) * s)
    return np.where(x < 0, -r, np.where(x == 0, x, r))      # odd: j1(-0) is -0, as torch's x * ...


@_float64_result
def bessel_j0(x, single=False):
    return _j0(x)


@_float64_result
def bessel_j1(x, single=False):
    return _j1(x)


@_float64_result
def bessel_y0(x, single=False):
    z = x * x
    near = _polevl(z, T.Y0_YP) / _polevl(z, T.Y0_YQ) + 2.0 / _PI * np.log(x) * _j0(x)
    near = np.where(x == 0, -_INF, np.where(x < 0, _NAN, near))
    p, q, t, s = _bessel_far(x, T.J0_PP, T.J0_PQ, T.J0_QP, T.J0_QQ, _PI_4)
    return np.where(x <= 5.0, near, (p * np.sin(t) + q * np.cos(t)) * s)


@_float64_result
def bessel_y1(x, single=False):
    z = x * x
    near = x * (_polevl(z, T.Y1_YP) / _polevl(z, T.Y1_YQ)) + 2.0 / _PI * (_j1(x) * np.log(x) - 1.0 / x)
    near = np.where(x == 0, -_INF, np.where(x < 0, _NAN, near))
    p, q, t, s = _bessel_far(x, T.J1_PP, T.J1_PQ, T.J1_QP, T.J1_QQ, _3PI_4)
    return np.where(x <= 5.0, near, (p * np.sin(t) + q * np.cos(t)) * s)


@_float64_result
def modified_bessel_i0(x, single=False):
    return np.exp(np.abs(x)) * _i0e(x)


@_float64_result
def modified_bessel_i1(x, single=False):
    return np.exp(np.abs(x)) * _i1e(x)


@_float64_result
def spherical_bessel_j0(x, single=False):
    z = x * x
    series = 1.0 + z * (-1.0 / 6.0 + z * (1.0 / 120.0 + z * (-1.0 / 5040.0 + z * (
        1.0 / 362880.0 + z * (-1.0 / 39916800.0 + z * (1.0 / 6227020800.0))))))
    r = np.where(np.abs(x) < 0.5, series, np.sin(x) / x)
    return np.where(np.isinf(x), 0.0, r)


@_float64_result
def airy_ai(x, single=False):
    """torch's airy_ai_forward (Cephes airy.c): the oscillating asymptotic form below -2.09, the
    decaying one from 2.09, the Maclaurin series between (summed until a term is below the dtype's
    epsilon)."""
    eps = np.finfo(np.float32 if single else np.float64).eps
    # x < -2.09
    xn = np.where(x < -2.09, x, -3.0)
    zeta_n = -2.0 * xn * np.sqrt(-xn) / 3.0
    z = 1.0 / zeta_n
    z2 = z * z
    afn = _polevl(z2, T.AIRY_AFN) / _polevl(z2, T.AIRY_AFD)
    agn = _polevl(z2, T.AIRY_AGN) / _polevl(z2, T.AIRY_AGD)
    t = zeta_n + 0.25 * _PI
    oscillating = 5.64189583547756286948e-01 / np.sqrt(np.sqrt(-xn)) * \
        (np.sin(t) * (1.0 + z2 * afn) - np.cos(t) * (z * agn))
    # x >= 2.09
    xp = np.where(x >= 2.09, x, 3.0)
    zeta_p = 2.0 * xp * np.sqrt(xp) / 3.0
    iz = 1.0 / zeta_p
    decaying = 5.64189583547756286948e-01 * (_polevl(iz, T.AIRY_AN) / _polevl(iz, T.AIRY_AD)) / \
        (2.0 * np.sqrt(np.sqrt(xp)) * np.exp(zeta_p))
    # |x| < 2.09: Ai(x) = c1 f(x) - c2 g(x), f and g the series in x^3
    xs = np.where((x < -2.09) | (x >= 2.09), 0.0, x)
    f = np.ones_like(xs)
    g = xs.copy()
    k = np.ones_like(xs)
    m = np.ones_like(xs)
    n = xs.copy()
    cube = xs * xs * xs
    active = np.ones(xs.shape, dtype=bool)
    for _ in range(60):
        if not active.any():
            break
        m = np.where(active, m * cube, m)
        k = np.where(active, k + 1.0, k)
        m = np.where(active, m / k, m)
        n = np.where(active, n * cube, n)
        k = np.where(active, k + 1.0, k)
        n = np.where(active, n / k, n)
        m = np.where(active, m / k, m)
        f = np.where(active, f + m, f)
        k = np.where(active, k + 1.0, k)
        n = np.where(active, n / k, n)
        g = np.where(active, g + n, g)
        active &= np.abs(m / f) > eps
    series = 0.355028053887817239260 * f - 0.258819403792806798405 * g
    r = np.where(x < -2.09, oscillating, np.where(x >= 2.09, decaying, series))
    r = np.where(x > 103.892, 0.0, r)
    return np.where(np.isinf(x) | np.isnan(x), _NAN, r)


# --------------------------------------------------------------------------- entr, xlog1py
@_float64_result
def entr(x, single=False):
    r = np.where(x > 0, -x * np.log(np.where(x > 0, x, 1.0)), np.where(x == 0, 0.0, -_INF))
    return np.where(np.isnan(x), x, r)


@_float64_result
def xlog1py(x, y, single=False):
    x, y = np.broadcast_arrays(x, y)
    r = np.where(x == 0, 0.0, x * np.log1p(y))
    return np.where(np.isnan(y), _NAN, r)


# --------------------------------------------------------------------------- orthogonal polynomials
def _degree(n):
    """torch's static_cast<int64_t>(n): truncation; NaN, infinities and values past int64 (whose
    conversion x86 turns into INT64_MIN) count as negative degrees."""
    ok = np.isfinite(n) & (np.abs(n) < 9.2e18)
    return np.where(ok, np.trunc(np.where(ok, n, -1.0)), -1.0)


def _recurrence(x, p, q, step, last):
    """Run ``r = step(k, x, q, p)`` for k = 2, 3, ... while k <= last, per element, stopping an
    element once q is NaN (as torch's loops do); returns q (the last r). Elements whose value
    comes from elsewhere pass ``last`` < 2 and cost nothing."""
    active = last >= 2
    k = 2
    while active.any():
        r = step(k, x, q, p)
        p = np.where(active, q, p)
        q = np.where(active, r, q)
        k += 1
        active &= (k <= last) & ~np.isnan(q)
    return q


def _chebyshev_recurrence(x, first, last):
    """T, U, V, W share P_k = 2x P_(k-1) - P_(k-2) from P_0 = 1 and P_1 = ``first``."""
    return _recurrence(x, np.ones_like(x), first, lambda k, x, q, p: (x + x) * q - p, last)


def _acos(x):
    return np.arccos(np.clip(x, -1.0, 1.0))


def _poly(fn):
    """Broadcast x and n, read n as torch's integer degree (n < 0 gives 0) and compute in the
    dtype handed in, as torch does: its float32 recurrences overflow to inf and then NaN
    (inf - inf), and its float32 trigonometric forms round as float32 does."""
    @functools.wraps(fn)
    def wrapper(x, n):
        x, n = np.broadcast_arrays(np.asarray(x), np.asarray(n))
        dtype = np.result_type(x.dtype, n.dtype)
        x = x.astype(dtype, copy=False)
        with np.errstate(all="ignore"):
            n = _degree(n.astype(np.float64)).astype(dtype)
            return np.where(n < 0, 0.0, fn(x, n, dtype != np.float64)).astype(dtype, copy=False)
    return wrapper


def _chebyshev(x, n, first, closed_from, closed, edge):
    """A Chebyshev polynomial: ``edge`` at |x| = 1, the trigonometric form ``closed`` for |x| < 1
    past degree ``closed_from``, the recurrence otherwise."""
    use_closed = (n > closed_from) & (np.abs(x) < 1.0)
    at_edge = np.abs(x) == 1.0
    rec = _chebyshev_recurrence(x, first, np.where(use_closed | at_edge, 0, n))
    r = np.where(use_closed, closed(_acos(x), n), np.where(n == 0, 1.0, np.where(n == 1, first, rec)))
    return np.where(at_edge, edge, r)


def _ratio_or(num, den, fallback):
    return np.where(den != 0, num / np.where(den != 0, den, 1.0), fallback)


@_poly
def chebyshev_polynomial_t(x, n, single):
    return _chebyshev(x, n, x, 6, lambda t, n: np.cos(n * t),
                      np.where((x > 0) | (n % 2 == 0), 1.0, -1.0))


@_poly
def chebyshev_polynomial_u(x, n, single):
    def closed(t, n):
        return _ratio_or(np.sin((n + 1) * t), np.sin(t), (n + 1) * np.cos((n + 1) * t) / x)
    return _chebyshev(x, n, x + x, 8, closed, np.where((x > 0) | (n % 2 == 0), n + 1, -(n + 1)))


@_poly
def chebyshev_polynomial_v(x, n, single):
    odd_edge = np.where(n % 2 == 0, n + n + 1, -(n + n + 1))

    def closed(t, n):
        return np.where(np.sin(t / 2.0) != 1.0, np.cos((n + 0.5) * t) / np.cos(t / 2.0), odd_edge)
    return _chebyshev(x, n, x + x - 1.0, 8, closed, np.where(x > 0, 1.0, odd_edge))


@_poly
def chebyshev_polynomial_w(x, n, single):
    edge = np.where(x > 0, n + n + 1, np.where(n % 2 == 0, 1.0, -1.0))

    def closed(t, n):
        return np.where(np.cos(t / 2.0) != 1.0, np.sin((n + 0.5) * t) / np.sin(t / 2.0), edge)
    return _chebyshev(x, n, x + x + 1.0, 8, closed, edge)


def _shifted(x, n, first, closed_from, closed, at_one, at_zero):
    """The shifted Chebyshev polynomials: the same recurrence in y = 2x - 1 (written as torch
    writes it), torch's own values at x = 1 and x = 0."""
    y = x + x - 1.0
    use_closed = (n > closed_from) & (np.abs(y) < 1.0)
    last = np.where(use_closed | (x == 0.0) | (x == 1.0), 0, n)
    rec = _recurrence(x, np.ones_like(x), first, lambda k, x, q, p: (y + y) * q - p, last)
    r = np.where(use_closed, closed(_acos(y), n, y), np.where(n == 0, 1.0, np.where(n == 1, first, rec)))
    r = np.where(x == 0.0, at_zero, r)
    return np.where(x == 1.0, at_one, r)


@_poly
def shifted_chebyshev_polynomial_t(x, n, single):
    y = x + x - 1.0
    return _shifted(x, n, y, 6, lambda t, n, y: np.cos(n * t), 1.0, np.where(n % 2 == 0, 1.0, -1.0))


@_poly
def shifted_chebyshev_polynomial_u(x, n, single):
    y = x + x - 1.0

    def closed(t, n, y):
        return _ratio_or(np.sin((n + 1) * t), np.sin(t), (n + 1) * np.cos((n + 1) * t) / y)
    return _shifted(x, n, y + y, 6, closed, n + 1, np.where(n % 2 == 0, n + 1, -(n + 1)))


@_poly
def shifted_chebyshev_polynomial_v(x, n, single):
    y = x + x - 1.0
    odd_edge = np.where(n % 2 == 0, n + n + 1, -(n + n + 1))

    def closed(t, n, y):
        return np.where(np.sin(t / 2.0) != 1.0, np.cos((n + 0.5) * t) / np.cos(t / 2.0), odd_edge)
    return _shifted(x, n, y + y - 1.0, 6, closed, 1.0, odd_edge)


@_poly
def shifted_chebyshev_polynomial_w(x, n, single):
    y = x + x - 1.0
    parity = np.where(n % 2 == 0, 1.0, -1.0)

    def closed(t, n, y):
        return np.where(np.cos(t / 2.0) != 1.0, np.sin((n + 0.5) * t) / np.sin(t / 2.0), parity)
    return _shifted(x, n, y + y + 1.0, 4, closed, n + n + 1, parity)


@_poly
def hermite_polynomial_h(x, n, single):
    # H_k = 2x H_(k-1) - 2(k-1) H_(k-2); past torch's degree limit (128 float, 512 double): NaN
    limit = 128 if single else 512
    rec = _recurrence(x, np.ones_like(x), x + x, lambda k, x, q, p: (x + x) * q - (2 * k - 2) * p,
                      np.where(n > limit, 0, n))
    r = np.where(n == 0, 1.0, np.where(n == 1, x + x, rec))
    return np.where(n > limit, _NAN, r)


@_poly
def hermite_polynomial_he(x, n, single):
    # He_k = x He_(k-1) - (k-1) He_(k-2)
    limit = 128 if single else 512
    rec = _recurrence(x, np.ones_like(x), x, lambda k, x, q, p: x * q - (k - 1) * p,
                      np.where(n > limit, 0, n))
    r = np.where(n == 0, 1.0, np.where(n == 1, x, rec))
    return np.where(n > limit, _NAN, r)


@_poly
def laguerre_polynomial_l(x, n, single):
    # k L_k = (2(k-1) + 1 - x) L_(k-1) - (k-1) L_(k-2)
    rec = _recurrence(x, np.ones_like(x), 1.0 - x,
                      lambda k, x, q, p: (((k - 1) * 2 + (1.0 - x)) * q - (k - 1) * p) / k,
                      np.where(x == 0.0, 0, n))
    r = np.where(n == 0, 1.0, np.where(n == 1, 1.0 - x, rec))
    return np.where(x == 0.0, 1.0, r)


@_poly
def legendre_polynomial_p(x, n, single):
    # k P_k = (2k - 1) x P_(k-1) - (k-1) P_(k-2)
    at_edge = np.abs(x) == 1.0
    rec = _recurrence(x, np.ones_like(x), x, lambda k, x, q, p: ((2 * k - 1) * x * q - (k - 1) * p) / k,
                      np.where(at_edge, 0, n))
    r = np.where(n == 0, 1.0, np.where(n == 1, x, rec))
    return np.where(at_edge, np.where((x > 0) | (n % 2 == 0), 1.0, -1.0), r)


# ------------------------------------------------------------------ reparameterised gamma/beta gradients
# torch's standard_gamma_grad_one and dirichlet_grad_one (aten/src/ATen/native/Distributions.h:
# Jankowiak & Obermeyer's approximations of -(d/dalpha cdf(x; alpha)) / pdf(x; alpha)), each
# region's formula evaluated everywhere and picked with np.where.
def _digamma_one(x):
    """torch's digamma_one (Distributions.h): digamma, but +inf at 0 and the negative integers."""
    return np.where((x == 0) | ((x < 0) & (x == np.floor(x))), _INF, _digamma(x))


_GAMMA_GRAD_UV = np.array(T.GAMMA_GRAD_UV).reshape(3, 8)


@_float64_result
def standard_gamma_grad(alpha, x, single=False):
    """d x / d alpha for x ~ Gamma(alpha, 1) drawn by inverting its CDF (torch's _standard_gamma_grad)."""
    alpha, x = np.broadcast_arrays(alpha, x)
    # small x: a Taylor series of the incomplete gamma function
    numer, denom = np.ones_like(x), alpha.copy()
    series1, series2 = numer / denom, numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_alpha = x ** alpha
    gamma_pdf = x ** (alpha - 1) * np.exp(-x)
    gamma_cdf = pow_x_alpha * series1
    gamma_cdf_alpha = (np.log(x) - _digamma_one(alpha)) * gamma_cdf - pow_x_alpha * series2
    small = -gamma_cdf_alpha / gamma_pdf
    small = np.where(np.isnan(small), 0.0, small)
    # large alpha: Rice's saddle point expansion (a polynomial near the mode)
    near = (0.9 * alpha <= x) & (x <= 1.1 * alpha)
    numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
    numer_2 = 1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha + alpha * (107 + 3600 * x)
    mode_poly = numer_1 * numer_2 / (1244160 * (alpha * alpha) * (alpha * alpha))
    denom = np.sqrt(8 * alpha)
    term2 = denom / (alpha - x)
    term3 = (x - alpha - alpha * np.log(x / alpha)) ** -1.5
    term23 = np.where(x < alpha, term2 - term3, term2 + term3)
    term1 = np.log(x / alpha) * term23 - np.sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x))
    stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
    saddle = np.where(near, mode_poly, -stirling * (x * term1) / denom)
    # otherwise: a bivariate rational approximation in log(x / alpha) and log(alpha)
    u, v = np.log(x / alpha), np.log(alpha)
    c = [_GAMMA_GRAD_UV[0, i] + u * (_GAMMA_GRAD_UV[1, i] + u * _GAMMA_GRAD_UV[2, i]) for i in range(8)]
    p = c[0] + v * (c[1] + v * (c[2] + v * c[3]))
    q = c[4] + v * (c[5] + v * (c[6] + v * c[7]))
    rational = np.exp(p / q)
    return np.where(x < 0.8, small, np.where(alpha > 8.0, saddle, rational))


_DIRICHLET_GRAD_C = np.array(T.DIRICHLET_GRAD_C).reshape(2, 3, 3, 4)


def _beta_grad_alpha_small(x, alpha, beta):
    factor = _digamma_one(alpha) - _digamma_one(alpha + beta) - np.log(x)
    numer = np.ones_like(x)
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * ((i - beta) * x / i)
        denom = alpha + i
        series = series + numer / denom * (factor + 1 / denom)
    result = x * (1 - x) ** -beta * series
    return np.where(np.isnan(result), 0.0, result)


def _beta_grad_beta_small(x, alpha, beta):
    factor = _digamma_one(alpha + beta) - _digamma_one(beta)
    numer, betas, dbetas, series = np.ones_like(x), np.ones_like(x), np.zeros_like(x), factor / alpha
    for i in range(1, 9):
        numer = numer * (-x / i)
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    result = -(1 - x) ** (1 - beta) * series
    return np.where(np.isnan(result), 0.0, result)


def _beta_grad_alpha_mid(x, alpha, beta):
    total = alpha + beta
    mean = alpha / total
    std = np.sqrt(alpha * beta / (total + 1)) / total
    poly = 47 * x * (beta * beta) * (beta * beta) + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * (beta * beta) * beta + alpha * (
            3 * (59 + 180 * beta - 90 * x) * (beta * beta) + alpha * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (8 * (1 - x) * (135 * beta - 11)))))
    prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
    at_mean = prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / np.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha)) * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta)
    axbx = alpha * (x - 1) + beta * x
    term1 = term1_num / (np.sqrt(2 * alpha / beta) * total ** 1.5 * axbx * axbx)
    term2 = 0.5 * np.log(alpha / (total * x))
    term3 = np.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4 = (beta * np.log(beta / (total * (1 - x))) + alpha * np.log(alpha / (total * x))) ** -1.5
    term1234 = term1 + term2 * (term3 + np.where(x < mean, term4, -term4))
    return np.where((mean - 0.1 * std <= x) & (x <= mean + 0.1 * std), at_mean, stirling * prefactor * term1234)


@_float64_result
def dirichlet_grad(x, alpha, total, single=False):
    """d x / d alpha for x ~ Beta(alpha, total - alpha), scaled by 1 / (1 - x): the pieces of a
    Dirichlet sample's reparameterised gradient (torch's _dirichlet_grad, dirichlet_grad_one)."""
    x, alpha, total = np.broadcast_arrays(x, alpha, total)
    beta = total - alpha
    boundary = total * x * (1 - x)
    c = _DIRICHLET_GRAD_C
    u = np.log(x)
    a = np.log(alpha) - u
    b = np.log(total) - a
    pow_u, pow_a = (1.0, u, u * u), (1.0, a, a * a)
    p = q = 0.0
    for i in range(3):
        for j in range(3):
            ua = pow_u[i] * pow_a[j]
            p = p + ua * (c[0, i, j, 0] + b * (c[0, i, j, 1] + b * (c[0, i, j, 2] + b * c[0, i, j, 3])))
            q = q + ua * (c[1, i, j, 0] + b * (c[1, i, j, 1] + b * (c[1, i, j, 2] + b * c[1, i, j, 3])))
    rational = p / q * (x * (_digamma_one(total) - _digamma_one(alpha)) / beta)
    r = np.where((alpha > 6) & (beta > 6), _beta_grad_alpha_mid(x, alpha, beta), rational)
    r = np.where((x >= 0.5) & (boundary < 0.75), -_beta_grad_beta_small(1 - x, beta, alpha), r)
    return np.where((x <= 0.5) & (boundary < 2.5), _beta_grad_alpha_small(x, alpha, beta), r)
