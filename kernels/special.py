"""Special-function FNs for the elementwise kernels (tt.special, lgamma, digamma, Bessel ...).

They join the vocabulary of kernels/elementwise.py (``UNARY``/``BINARY``/``TERNARY``, found by
their number of operands) exactly as the FNs defined there do; they live in their own file
because they are long (series and rational approximations) and have nothing to do with the
arithmetic core. Same rules: no libdevice (Triton's interpreter cannot run it), compute in the
dtype the launcher hands in (float32 or float64), helpers start with ``_``.

The algorithms are PyTorch's (aten/src/ATen/native/Math.h: Cephes, SciPy's incomplete gamma,
Boost's Lanczos sum), written branch-free: every element of a block evaluates each region's
formula with harmless arguments where it is not its region, and ``tl.where`` picks; data-dependent
loops run while any element of the block still needs them (``_any``) and leave finished elements
unchanged. lgamma, erfc and erfcx, which torch takes from the C library or from a table of 100
polynomials, are Cephes-style here (see each). The NumPy references (backends/numpy_special.py)
follow the same algorithms; the coefficient tables are shared (_special_tables.py).

float32 accuracy on a GPU: Triton compiles float32 ``tl.exp`` to ``ex2.approx`` (relative error
growing with |x|) and ``tl.sqrt`` to an approximation: ``_exp`` and ``_sqrt`` here stay within a
few ulp. Divisions are plain ``/`` (float32: within 2 ulp on the GPU; the arithmetic core's
correctly rounded ``_div`` is a device-function call, which costs ~3 ms each under Triton's
interpreter: the hot loops here make none). float64 lowers to libdevice's accurate routines.
A float is negated as ``x * -1.0``, never ``-x``: Triton 3.6 compiles ``-x`` to ``0 - x``, which
turns -(+0.0) into +0.0 (i1e(-inf) and log_ndtr(inf) were +0.0 on the H200, torch's -0.0).
"""
import triton
import triton.language as tl

from . import _special_tables as _T


class _Table(tl.constexpr):
    """A coefficient tuple the jitted code can index with static indices (``C[i]``, ``len(C)``)
    both compiled and under the interpreter."""

    def __len__(self):
        return len(self.value)


_I0E_A, _I0E_B, _I1E_A, _I1E_B = _Table(_T.I0E_A), _Table(_T.I0E_B), _Table(_T.I1E_A), _Table(_T.I1E_B)
_K0_A, _K0_B, _K1_A, _K1_B = _Table(_T.K0_A), _Table(_T.K0_B), _Table(_T.K1_A), _Table(_T.K1_B)
_J0_PP, _J0_PQ, _J0_QP, _J0_QQ = _Table(_T.J0_PP), _Table(_T.J0_PQ), _Table(_T.J0_QP), _Table(_T.J0_QQ)
_J0_RP, _J0_RQ = _Table(_T.J0_RP), _Table(_T.J0_RQ)
_J1_PP, _J1_PQ, _J1_QP, _J1_QQ = _Table(_T.J1_PP), _Table(_T.J1_PQ), _Table(_T.J1_QP), _Table(_T.J1_QQ)
_J1_RP, _J1_RQ = _Table(_T.J1_RP), _Table(_T.J1_RQ)
_Y0_YP, _Y0_YQ, _Y1_YP, _Y1_YQ = _Table(_T.Y0_YP), _Table(_T.Y0_YQ), _Table(_T.Y1_YP), _Table(_T.Y1_YQ)
_AIRY_AN, _AIRY_AD = _Table(_T.AIRY_AN), _Table(_T.AIRY_AD)
_AIRY_AFN, _AIRY_AFD = _Table(_T.AIRY_AFN), _Table(_T.AIRY_AFD)
_AIRY_AGN, _AIRY_AGD = _Table(_T.AIRY_AGN), _Table(_T.AIRY_AGD)
_NDTRI_P0, _NDTRI_Q0 = _Table(_T.NDTRI_P0), _Table(_T.NDTRI_Q0)
_NDTRI_P1, _NDTRI_Q1 = _Table(_T.NDTRI_P1), _Table(_T.NDTRI_Q1)
_NDTRI_P2, _NDTRI_Q2 = _Table(_T.NDTRI_P2), _Table(_T.NDTRI_Q2)
_ERF_T, _ERF_U = _Table(_T.ERF_T), _Table(_T.ERF_U)
_ERFC_P, _ERFC_Q, _ERFC_R, _ERFC_S = _Table(_T.ERFC_P), _Table(_T.ERFC_Q), _Table(_T.ERFC_R), _Table(_T.ERFC_S)
_ERFINV_A, _ERFINV_B = _Table(_T.ERFINV_A), _Table(_T.ERFINV_B)
_ERFINV_C, _ERFINV_D = _Table(_T.ERFINV_C), _Table(_T.ERFINV_D)
_DIGAMMA_A = _Table(_T.DIGAMMA_A)
_LGAMMA_TAYLOR, _LGAMMA_STIRLING = _Table(_T.LGAMMA_TAYLOR), _Table(_T.LGAMMA_STIRLING)
_ASIN_TAYLOR = _Table(_T.ASIN_TAYLOR)
_ZETA_A = _Table(_T.ZETA_A)
_GAMMA_GRAD_UV, _DIRICHLET_GRAD_C = _Table(_T.GAMMA_GRAD_UV), _Table(_T.DIRICHLET_GRAD_C)
_LANCZOS_NUM, _LANCZOS_DENOM = _Table(_T.LANCZOS_NUM), _Table(_T.LANCZOS_DENOM)
_LANCZOS_NUM_REV, _LANCZOS_DENOM_REV = _Table(_T.LANCZOS_NUM[::-1]), _Table(_T.LANCZOS_DENOM[::-1])
# the asymptotic expansion's rows, highest power first (Horner; IGAM_D's rows are lowest first),
# as many as float64 and float32 need (see _igam_asymptotic); each row a _Table too: ``d[k]`` of a
# table of plain tuples is a tuple, which compiled Triton (3.6) passes to _polevl as a tuple of
# values rather than a constexpr and fails on its floats
_IGAM_D64 = _Table(tuple(_Table(tuple(row[:16][::-1])) for row in _T.IGAM_D[:12]))
_IGAM_D32 = _Table(tuple(_Table(tuple(row[:10][::-1])) for row in _T.IGAM_D[:6]))

# Constants are literals in the expressions, tensors on the left: a float assigned to a local name
# becomes a float32 constant in the jitted code (Boost's g = 6.0246800407767296 would lose 1e-7),
# and under the interpreter a tl.constexpr on the left of a tensor does not compute.


# ------------------------------------------------------------------ arithmetic helpers
@triton.jit
def _sqrt(x):
    if x.dtype == tl.float32:
        r = tl.sqrt_rn(x)
    else:
        r = tl.sqrt(x)
    return r


@triton.jit
def _exp(x):
    """exp(x). float32: Cody-Waite reduction x = k ln2 + r (|r| <= ln2 / 2), a degree-7 Taylor
    polynomial for exp(r) and 2^k as two exact powers of two (k up to 128 and down to -150), since
    Triton's float32 exp is ex2.approx(x log2 e), whose error grows with |x|."""
    if x.dtype == tl.float32:
        k = tl.floor(x * 1.4426950408889634 + 0.5)
        k = tl.where(k == k, tl.minimum(tl.maximum(k, -252.0), 254.0), 0.0)
        r = x - k * 0.693145751953125            # ln 2 in two parts: k * hi is exact
        r = r - k * 1.4286068203094172e-06
        p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120 + r * (
            1.0 / 720 + r * (1.0 / 5040)))))))
        ki = k.to(tl.int32)
        k1 = ki >> 1
        k2 = ki - k1
        s1 = ((k1 + 127) << 23).to(tl.float32, bitcast=True)
        s2 = ((k2 + 127) << 23).to(tl.float32, bitcast=True)
        e = p * s1 * s2
        e = tl.where(x > 88.72283935546875, float("inf"), e)
        e = tl.where(x < -104.0, 0.0, e)
        e = tl.where(x != x, x, e)
    else:
        e = tl.exp(x)
    return e


@triton.jit
def _expm1(x):
    """exp(x) - 1: the Taylor series near 0 (17 terms: float64 accuracy at |x| = 1/2)."""
    p = tl.full(x.shape, 1.0, x.dtype)
    for k in tl.static_range(17, 1, -1):
        p = 1.0 + x * p * (1.0 / k)
    return tl.where(tl.abs(x) < 0.5, x * p, _exp(x) - 1.0)


@triton.jit
def _log1p(x):
    """log(1 + x) = 2 atanh(x / (2 + x)): the odd series near 0 (12 terms), log(1 + x) elsewhere."""
    s = x / (2.0 + x)
    s2 = s * s
    q = tl.full(x.shape, 1.0 / 25.0, x.dtype)
    for k in tl.static_range(11, -1, -1):
        q = q * s2 + 1.0 / (2 * k + 1)
    series = tl.where(tl.abs(x) < 1e-18, x, 2.0 * s * q)    # x itself: x / (2 + x) would round a subnormal
    return tl.where(tl.abs(x) < 0.25, series, tl.log(1.0 + x))


@triton.jit
def _signbit(x):
    """True where the sign bit of float ``x`` is set (-0.0 included)."""
    if x.dtype == tl.float64:
        r = x.to(tl.int64, bitcast=True) < 0
    else:
        r = x.to(tl.int32, bitcast=True) < 0
    return r


@triton.jit
def _counter(start: tl.constexpr):
    """A loop counter (an int32 scalar: a loop-carried value keeps its type)."""
    return tl.full([], start, tl.int32)


@triton.jit
def _trunc(x):
    return tl.where(x < 0, tl.ceil(x), tl.floor(x))


@triton.jit
def _is_odd(n):
    """n (an integer-valued float) is odd."""
    return (n - 2.0 * tl.floor(n * 0.5)) == 1.0


@triton.jit
def _any(mask):
    """Whether any element of the block is set: the condition of a data-dependent loop."""
    return tl.max(tl.reshape(mask.to(tl.int32), [mask.numel]), 0) > 0


@triton.jit
def _polevl(x, coeffs: tl.constexpr):
    """sum coeffs[i] x^(n - i): Horner's rule, highest degree first."""
    acc = tl.zeros_like(x) + coeffs[0]
    for i in tl.static_range(1, len(coeffs)):
        acc = acc * x + coeffs[i]
    return acc


@triton.jit
def _chbevl(x, coeffs: tl.constexpr):
    """Cephes' chbevl: the Chebyshev series sum' coeffs[i] T_i(x/2), constant term last."""
    b0 = tl.zeros_like(x) + coeffs[0]
    b1 = tl.zeros_like(x)
    b2 = tl.zeros_like(x)
    for i in tl.static_range(1, len(coeffs)):
        b2 = b1
        b1 = b0
        b0 = x * b1 - b2 + coeffs[i]
    return 0.5 * (b0 - b2)


@triton.jit
def _exp_square(x, sign: tl.constexpr):
    """exp(sign * x^2) without the error of rounding x^2 (which grows with x^2): x = hi + lo with
    hi on a grid fine enough that hi^2 is exact, x^2 = hi^2 + lo (x + hi)."""
    ax = tl.abs(x)
    ax = tl.where(ax > 1e10, 1e10, ax)     # exp(+-1e20) is already 0 / inf; the grid would overflow
    if x.dtype == tl.float32:
        hi = tl.floor(ax * 256.0 + 0.5) * (1.0 / 256.0)
    else:
        hi = tl.floor(ax * 1024.0 + 0.5) * (1.0 / 1024.0)
    big = _exp(sign * hi * hi)
    # where that is 0 or inf already, lo (x + hi) may be large: the product would be 0 * inf
    return tl.where((big == 0.0) | (big == float("inf")), big, big * _exp(sign * (ax - hi) * (ax + hi)))


@triton.jit
def _acos(x):
    """acos on [-1, 1] from the asin series on [-1/2, 1/2]: pi/2 - asin(x) in the middle,
    2 asin(sqrt((1 - |x|) / 2)) (1 - |x| exact) towards the ends."""
    ax = tl.abs(x)
    middle = ax <= 0.5
    s = tl.where(middle, x, _sqrt((1.0 - tl.minimum(ax, 1.0)) * 0.5))     # one series for both
    asin = s * _polevl(s * s, _ASIN_TAYLOR)
    end = tl.where(x > 0, 2.0 * asin, 3.141592653589793 - 2.0 * asin)
    return tl.where(middle, 3.141592653589793 / 2 - asin, end)


# ------------------------------------------------------------------ error functions
@triton.jit
def _erf_small(x):
    """erf(x) for |x| <= 1 (Cephes: x T(x^2) / U(x^2))."""
    z = x * x
    return (x * _polevl(z, _ERF_T)) / _polevl(z, _ERF_U)


@triton.jit
def _erfcx_nonnegative(x):
    """erfcx(x) = exp(x^2) erfc(x) for x >= 0: Cephes' erfc rational functions without their
    exp(-x^2) factor from 1 on, exp(x^2) (1 - erf(x)) below, 1 / (sqrt(pi) x) past 5e7."""
    xs = tl.minimum(x, 1.0)
    small = _exp_square(xs, 1.0) * (1.0 - _erf_small(xs))
    xm = tl.minimum(x, 8.0)
    mid = _polevl(xm, _ERFC_P) / _polevl(xm, _ERFC_Q)
    xl = tl.minimum(x, 5e7)
    large = _polevl(xl, _ERFC_R) / _polevl(xl, _ERFC_S)
    r = tl.where(x < 1.0, small, tl.where(x < 8.0, mid, large))
    return tl.where(x >= 5e7, 0.56418958354775628695 / x, r)


@triton.jit
def _erfc(x):
    ax = tl.abs(x)
    small = 1.0 - _erf_small(tl.where(ax < 1.0, x, 0.0))
    y = _exp_square(ax, -1.0) * _erfcx_nonnegative(ax)
    y = tl.where(x < 0, 2.0 - y, y)
    return tl.where(ax < 1.0, small, y)


@triton.jit
def _erf(x):
    ax = tl.abs(x)
    big = 1.0 - _exp_square(ax, -1.0) * _erfcx_nonnegative(ax)
    big = tl.where(x < 0, big * -1.0, big)
    return tl.where(ax < 1.0, _erf_small(tl.where(ax < 1.0, x, 0.0)), big)


@triton.jit
def _erfcx(x):
    pos = _erfcx_nonnegative(tl.abs(x))
    neg = 2.0 * _exp_square(x, 1.0) - pos
    r = tl.where(x < 0, tl.where(x < -26.7, float("inf"), neg), pos)
    return tl.where(x != x, x, r)


@triton.jit
def erfc(x):
    return _erfc(x)


@triton.jit
def erfcx(x):
    return _erfcx(x)


@triton.jit
def erfinv(y):
    # torch's calc_erfinv: a rational first guess, then two Newton steps on erf(x) = y
    ay = tl.abs(y)
    z = y * y
    num = ((z * _ERFINV_A[3] + _ERFINV_A[2]) * z + _ERFINV_A[1]) * z + _ERFINV_A[0]
    dem = (((z * _ERFINV_B[3] + _ERFINV_B[2]) * z + _ERFINV_B[1]) * z + _ERFINV_B[0]) * z + 1.0
    central = (y * num) / dem
    w = _sqrt(-tl.log(tl.maximum((1.0 - ay) * 0.5, 1e-300)))
    num = ((w * _ERFINV_C[3] + _ERFINV_C[2]) * w + _ERFINV_C[1]) * w + _ERFINV_C[0]
    dem = (w * _ERFINV_D[1] + _ERFINV_D[0]) * w + 1.0
    tail = tl.where(y < 0, num * -1.0, num) / dem
    x = tl.where(ay <= 0.7, central, tail)
    x = tl.where(ay < 1.0, x, 0.0)
    for _ in tl.static_range(2):
        x = x - (_erf(x) - y) / (1.1283791670955126 * _exp(-x * x))
    x = tl.where(ay == 1.0, tl.where(y < 0, float("-inf"), float("inf")), x)
    return tl.where(ay > 1.0, float("nan"), tl.where(y != y, y, x))


@triton.jit
def ndtri(y):
    """Cephes ndtri: the x with ndtr(x) = y."""
    upper = y > 1.0 - 0.13533528323661269189
    yy = tl.where(upper, 1.0 - y, y)
    c = yy - 0.5
    c2 = c * c
    central = (c + c * (c2 * _polevl(c2, _NDTRI_P0)) / _polevl(c2, _NDTRI_Q0)) * 2.50662827463100050242
    x = _sqrt(-2.0 * tl.log(tl.minimum(tl.maximum(yy, 1e-300), 0.5)))
    x0 = x - tl.log(x) / x
    z = 1.0 / x
    x1 = tl.where(x < 8.0, (z * _polevl(z, _NDTRI_P1)) / _polevl(z, _NDTRI_Q1),
                  (z * _polevl(z, _NDTRI_P2)) / _polevl(z, _NDTRI_Q2))
    tail = x0 - x1
    tail = tl.where(upper, tail, tail * -1.0)
    r = tl.where(yy > 0.13533528323661269189, central, tail)
    r = tl.where(y == 0.0, float("-inf"), tl.where(y == 1.0, float("inf"), r))
    return tl.where((y < 0.0) | (y > 1.0) | (y != y), float("nan"), r)


@triton.jit
def log_ndtr(x):
    # torch's calc_log_ndtr: log(erfcx(-t) / 2) - t^2 below -1 (no underflow), log1p(-erfc(t) / 2)
    t = x * 0.70710678118654752440
    low = tl.log(_erfcx(-t) * 0.5) - t * t
    high = _log1p(_erfc(t) * -0.5)
    return tl.where(x < -1.0, low, high)


# ------------------------------------------------------------------ gamma family
@triton.jit
def _lgamma_positive(x):
    """log Gamma(x) for x >= 1/2 (and +inf): the Taylor series of lgamma(2 + e), |e| <= 1/2,
    reached by exact steps down from below 13 (lgamma(x) = lgamma(x - k) + log((x-1)...(x-k)))
    or one step up from [0.5, 1.5) (- log1p(x - 1), accurate at the root x = 1); Stirling's
    series from 13."""
    u = tl.where(x < 13.0, x, 2.0)
    z = tl.full(x.shape, 1.0, x.dtype)
    for _ in tl.static_range(11):
        down = u >= 2.5
        u = tl.where(down, u - 1.0, u)
        z = tl.where(down, z * u, z)
    below = x < 1.5
    e = tl.where(below, x - 1.0, u - 2.0)
    taylor = _polevl(e, _LGAMMA_TAYLOR) + tl.log(z) - tl.where(below, _log1p(e), 0.0)
    xs = tl.where(x >= 13.0, x, 13.0)
    lx = tl.log(xs)
    stirling = xs * (lx - 1.0) - 0.5 * lx + 0.91893853320467274178 + \
        _polevl(1.0 / (xs * xs), _LGAMMA_STIRLING) / xs
    r = tl.where(x < 13.0, taylor, stirling)
    return tl.where(x == float("inf"), float("inf"), tl.where(x != x, x, r))


@triton.jit
def _lgamma(x):
    """log|Gamma(x)|; below 1/2 by reflection, log(pi / |sin(pi x)|) - lgamma(1 - x), sin read
    from x's distance to the nearest integer (exact)."""
    reflect = x < 0.5
    y = _lgamma_positive(tl.where(reflect, 1.0 - x, x))
    ar = tl.abs(x - tl.floor(x + 0.5))
    # log(pi / sin(pi r)) as -log(r) - log(sinc(r)): pi r would round a subnormal r
    pr = 3.141592653589793 * ar
    sinc = tl.where(ar < 1e-8, 1.0, tl.sin(pr) / pr)
    refl = tl.where(ar == 0, float("inf"), -tl.log(ar) - tl.log(sinc) - y)   # a pole (every x <= -2**52)
    out = tl.where(reflect, refl, y)
    return tl.where(tl.abs(x) == float("inf"), float("inf"), out)


@triton.jit
def lgamma(x):
    return _lgamma(x)


@triton.jit
def _digamma(x):
    """torch's calc_digamma: reflection below 0, recurrence up to 10, the asymptotic series."""
    frac = x - _trunc(x)
    # pi / tan(pi r) in float64 for float32 too, as torch: near a pole it is the whole result
    pf = 3.141592653589793 * frac.to(tl.float64)
    reflection = tl.where(x < 0, ((3.141592653589793 * tl.cos(pf)) / tl.sin(pf)).to(x.dtype), 0.0)
    y = tl.where(x < 0, 1.0 - x, x)
    result = tl.zeros_like(x)
    for _ in tl.static_range(10):
        step = y < 10.0
        result = tl.where(step, result - 1.0 / y, result)
        y = tl.where(step, y + 1.0, y)
    z = 1.0 / (y * y)
    series = tl.where(y < 1e17, z * _polevl(z, _DIGAMMA_A), 0.0)
    r = tl.where(y == 10.0, result + 2.25175258906672110764, result + tl.log(y) - 0.5 / y - series)
    r = r - reflection
    r = tl.where((x < 0) & (x == _trunc(x)), float("nan"), r)
    return tl.where(x == 0, tl.where(_signbit(x), float("inf"), float("-inf")), r)


@triton.jit
def digamma(x):
    return _digamma(x)


@triton.jit
def trigamma(x):
    """torch's trigamma (polygamma(1, x)): reflection below 1/2, six recurrence steps, the
    asymptotic series."""
    reflect = x < 0.5
    s = tl.sin(3.141592653589793 * (x - tl.floor(x + 0.5)))
    result = tl.where(reflect, (-(3.141592653589793 * 3.141592653589793)) / (s * s), 0.0)
    y = tl.where(reflect, 1.0 - x, x)
    for _ in tl.static_range(6):
        result = result + 1.0 / (y * y)
        y = y + 1.0
    ixx = 1.0 / (y * y)
    result = result + (1.0 + 1.0 / (2.0 * y) + ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / y
    return tl.where(reflect, result * -1.0, result)


@triton.jit
def _pow(a, y):
    """a^y for a > 0, or a < 0 with an integer y (the Hurwitz zeta's terms)."""
    r = _exp(y * tl.log(tl.abs(a)))
    r = tl.where((a < 0) & _is_odd(y), r * -1.0, r)
    return tl.where(a == 1.0, 1.0, r)          # 1^y = 1, even for an infinite y (C's pow)


@triton.jit
def _zeta(x, q):
    """Hurwitz zeta(x, q) = sum_k (q + k)^-x (Cephes zeta.c, as torch's): the sum until the terms
    fall below machep, then Euler-Maclaurin's correction with (2k)! / B_2k."""
    if x.dtype == tl.float64:
        machep = 1.11022302462515654042e-16
    else:
        machep = 5.9604644775390625e-8
    nonpositive_q = (q <= 0) & ((q == tl.floor(q)) | (x != tl.floor(x)))
    special = (x <= 1.0) | nonpositive_q | (x != x) | (q != q)      # no sum: the value is set below
    xs = tl.where(special, 2.0, x)
    a = tl.where(special, 1.0, q)
    s = _pow(a, -xs)
    b = tl.zeros_like(s)
    done = tl.zeros_like(s) != 0.0
    odd = _is_odd(xs)
    i = _counter(0)
    going = ~done
    while tl.max(tl.reshape(going.to(tl.int32), [going.numel]), 0) > 0:
        i += 1
        a = tl.where(going, a + 1.0, a)
        t = _exp(-xs * tl.log(tl.abs(a)))           # (q + i)^-x, as _pow
        t = tl.where((a < 0) & odd, -t, t)
        b = tl.where(going, tl.where(a == 1.0, 1.0, t), b)
        s = tl.where(going, s + b, s)
        done = done | (going & (-machep * s < b) & (b < machep * s))
        going = ~done & ((i < 9) | (a <= 9.0))
    w = a
    s = tl.where(done, s, s + (b * w) / (xs - 1.0) - 0.5 * b)
    fa = tl.full(s.shape, 1.0, s.dtype)
    k = tl.zeros_like(s)
    for j in tl.static_range(len(_ZETA_A)):
        fa = fa * (xs + k)
        b = b / w
        t = (fa * b) / (tl.zeros_like(fa) + _ZETA_A[j])
        s = tl.where(done, s, s + t)
        done = done | (tl.abs(t / s) < machep)
        k = k + 1.0
        fa = fa * (xs + k)
        b = b / w
        k = k + 1.0
    # torch's tests, the first that holds deciding (so applied last to first): a NaN operand gives
    # NaN only where none decides (zeta(1, nan) is inf, zeta(nan, 0) is inf)
    s = tl.where((x != x) | (q != q), x + q, s)
    s = tl.where(nonpositive_q, tl.where(q == tl.floor(q), float("inf"), float("nan")), s)
    s = tl.where(x < 1.0, float("nan"), s)
    return tl.where(x == 1.0, float("inf"), s)


@triton.jit
def zeta(x, q):
    return _zeta(x, q)


@triton.jit
def polygamma(x, n):
    """polygamma(n, x) for n >= 2 (n: an integer-valued operand): (-1)^(n+1) n! zeta(n + 1, x);
    n = 0 and 1 are digamma and trigamma."""
    sign = tl.where(_is_odd(n), 1.0, -1.0)
    return sign * _exp(_lgamma(n + 1.0)) * _zeta(n + 1.0, x)


# ------------------------------------------------------------------ incomplete gamma
# torch's calc_igamma / calc_igammac: each element takes one of four paths (the uniform asymptotic
# expansion where a ~ x is large, the series, the continued fraction, igamc's own series). The
# code of each path is emitted once per FN: the prefactor x^a e^-x / Gamma(a) and lgamma(a) are
# computed once for every element and handed to the paths, and a path no element of the block
# takes is skipped (``if _any(...)``).
@triton.jit
def _lanczos_sum_expg_scaled(a):
    """Boost's rational Lanczos sum, in 1/a past 1 (torch's ratevl)."""
    small = _polevl(a, _LANCZOS_NUM) / _polevl(a, _LANCZOS_DENOM)
    inv = 1.0 / a
    large = _polevl(inv, _LANCZOS_NUM_REV) / _polevl(inv, _LANCZOS_DENOM_REV)
    return tl.where(tl.abs(a) > 1.0, large, small)


@triton.jit
def _igam_fac(a, x, lgamma_a):
    """x^a exp(-x) / Gamma(a), with the Lanczos form where a ~ x (torch's _igam_helper_fac)."""
    if a.dtype == tl.float64:
        maxlog = 7.09782712893383996843e2
    else:
        maxlog = 88.72283905206835
    ax = a * tl.log(x) - x - lgamma_a
    direct = tl.where(ax < -maxlog, 0.0, _exp(ax))
    fac = a + 6.024680040776729583740234375 - 0.5          # a + g - 1/2, g: the Lanczos g
    res = _sqrt(fac * 0.36787944117144233) / _lanczos_sum_expg_scaled(a)     # sqrt(fac / e)
    near = res * _exp(a - x) * _exp(a * tl.log(x / fac))
    numfac = (x - a - 6.024680040776729583740234375 + 0.5) / fac
    far = res * _exp(a * (_log1p(numfac) - numfac) + (x * (0.5 - 6.024680040776729583740234375)) / fac)
    lanczos = tl.where((a < 200) & (x < 200), near, far)
    return tl.where(tl.abs(a - x) > 0.4 * tl.abs(a), direct, lanczos)


@triton.jit
def _machep_of(x):
    if x.dtype == tl.float64:
        r = 1.11022302462515654042e-16
    else:
        r = 5.9604644775390625e-8
    return r


@triton.jit
def _igam_series(a, x, fac, use):
    """igam by DLMF 8.11.4 (torch's _igam_helper_series) where ``use``, at most 2000 terms."""
    machep = _machep_of(a)
    r = a
    c = tl.full(a.shape, 1.0, a.dtype)
    ans = tl.full(a.shape, 1.0, a.dtype)
    active = use & (fac != 0.0)
    i = _counter(0)
    while (tl.max(tl.reshape(active.to(tl.int32), [active.numel]), 0) > 0) & (i < 2000):
        i += 1
        r = tl.where(active, r + 1.0, r)
        c = tl.where(active, (c * x) / r, c)
        ans = tl.where(active, ans + c, ans)
        active = active & ~(c <= machep * ans)
    return tl.where(fac == 0.0, 0.0, (ans * fac) / a)


@triton.jit
def _igamc_series(a, x, lgamma_a, lgamma_a1, use):
    """igamc by DLMF 8.7.3, avoiding cancellation (torch's _igamc_helper_series)."""
    machep = _machep_of(a)
    fac = tl.full(a.shape, 1.0, a.dtype)
    total = tl.zeros_like(a)
    active = use
    i = _counter(0)
    while (tl.max(tl.reshape(active.to(tl.int32), [active.numel]), 0) > 0) & (i < 1999):
        i += 1
        n = tl.zeros_like(a) + i.to(a.dtype)
        fac = tl.where(active, (fac * -x) / n, fac)
        term = fac / (a + n)
        total = tl.where(active, total + term, total)
        active = active & ~(tl.abs(term) <= machep * tl.abs(total))
    logx = tl.log(x)
    return -_expm1(a * logx - lgamma_a1) - _exp(a * logx - lgamma_a) * total


@triton.jit
def _igamc_continued_fraction(a, x, fac, use):
    """igamc by DLMF 8.9.2 (torch's _igamc_helper_continued_fraction), at most 2000 steps."""
    machep = _machep_of(a)
    if a.dtype == tl.float64:
        big = 4.503599627370496e15           # 2^52 and 2^-52: exact as any float
        biginv = 2.22044604925031308085e-16
    else:
        big = 16777216.0
        biginv = 5.9604644775390625e-8
    y = 1.0 - a
    z = x + y + 1.0
    c = tl.zeros_like(a)
    pkm2 = tl.full(a.shape, 1.0, a.dtype)
    qkm2 = x
    pkm1 = x + 1.0
    qkm1 = z * x
    ans = pkm1 / qkm1
    active = use & (fac != 0.0)
    i = _counter(0)
    while (tl.max(tl.reshape(active.to(tl.int32), [active.numel]), 0) > 0) & (i < 2000):
        i += 1
        c = c + 1.0
        y = y + 1.0
        z = z + 2.0
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        nonzero = qk != 0
        ratio = pk / tl.where(nonzero, qk, 1.0)
        t = tl.where(nonzero, tl.abs((ans - ratio) / ratio), 1.0)
        ans = tl.where(active & nonzero, ratio, ans)
        pkm2 = tl.where(active, pkm1, pkm2)
        pkm1 = tl.where(active, pk, pkm1)
        qkm2 = tl.where(active, qkm1, qkm2)
        qkm1 = tl.where(active, qk, qkm1)
        rescale = active & (tl.abs(pk) > big)
        pkm2 = tl.where(rescale, pkm2 * biginv, pkm2)
        pkm1 = tl.where(rescale, pkm1 * biginv, pkm1)
        qkm2 = tl.where(rescale, qkm2 * biginv, qkm2)
        qkm1 = tl.where(rescale, qkm1 * biginv, qkm1)
        active = active & ~(t <= machep)
    return tl.where(fac == 0.0, 0.0, ans * fac)


@triton.jit
def _asymptotic_sum(a, eta, machep, d: tl.constexpr):
    """sum_k c_k(eta) a^-k with c_k = polevl(eta, d[k]), stopping per element where a term falls
    below machep of the sum or grows (the series is asymptotic)."""
    total = tl.zeros_like(a)
    afac = tl.full(a.shape, 1.0, a.dtype)
    old = tl.full(a.shape, float("inf"), a.dtype)
    active = a == a
    for k in tl.static_range(len(d)):
        term = _polevl(eta, d[k]) * afac
        absterm = tl.abs(term)
        active = active & ~(absterm > old)
        total = tl.where(active, total + term, total)
        active = active & ~(absterm < machep * tl.abs(total))
        old = absterm
        afac = afac / a
    return total


@triton.jit
def _igam_asymptotic(a, x, sgn: tl.constexpr):
    """igam (sgn = -1) / igamc (sgn = 1) by the uniform asymptotic expansion DLMF 8.12.3/8.12.4
    (torch's _igam_helper_asymptotic_series): sum_k c_k(eta) a^-k, each c_k a polynomial in eta,
    the terms stopping where they fall below machep or start to grow. In the region where it is
    used (a > 20, |eta| < 0.3) the first 12 rows and 16 powers of SciPy's 25 x 25 table reach
    float64 rounding (6 x 10 float32's); torch's loops break before the rest too."""
    machep = _machep_of(a)
    lam = x / a
    sigma = (x - a) / a
    eta = _sqrt(-2.0 * (_log1p(sigma) - sigma))
    eta = tl.where(lam > 1, eta, tl.where(lam < 1, -eta, 0.0))
    res = 0.5 * _erfc(sgn * eta * _sqrt(a * 0.5))
    if a.dtype == tl.float64:
        total = _asymptotic_sum(a, eta, machep, _IGAM_D64)
    else:
        total = _asymptotic_sum(a, eta, machep, _IGAM_D32)
    # torch divides by sqrt(2 pi a) with pi rounded to float32 (c10::pi<float>): kept
    return res + sgn * (_exp(-0.5 * a * eta * eta) * total) / _sqrt(2.0 * 3.1415927410125732 * a)


@triton.jit
def _asymptotic_region(a, x):
    ratio = tl.abs(x - a) / a
    return ((a > 20) & (a < 200) & (ratio < 0.3)) | ((a > 200) & (ratio < 4.5 / _sqrt(a)))


@triton.jit
def _igamma_boundaries(a, x, r, lower: tl.constexpr):
    """torch's (SciPy's) values at the edges of the domain; igammac is the complement."""
    if lower:
        one = 1.0
        zero = 0.0
    else:
        one = 0.0
        zero = 1.0
    # torch's tests in its order (the first that holds decides, so they apply here last to first);
    # a NaN no test catches (igamma(inf, nan) is 0, igamma(nan, 0) is 0) gives NaN
    r = tl.where((x != x) | (a != a), float("nan"), r)
    r = tl.where(tl.abs(x) == float("inf"), one, r)
    r = tl.where(tl.abs(a) == float("inf"), tl.where(tl.abs(x) == float("inf"), float("nan"), zero), r)
    r = tl.where(x == 0, zero, r)
    r = tl.where(a == 0, tl.where(x > 0, one, float("nan")), r)
    return tl.where((x < 0) | (a < 0), float("nan"), r)


@triton.jit
def _incomplete_gamma(a0, x0, lower: tl.constexpr):
    """P(a, x) (lower) or Q(a, x): the paths of torch's calc_igamma / calc_igammac. The elements
    a boundary rule decides (a or x zero, negative, infinite or NaN) compute with a = x = 1."""
    inside = (a0 > 0) & (x0 > 0) & (a0 < float("inf")) & (x0 < float("inf"))
    a = tl.where(inside, a0, 1.0)
    x = tl.where(inside, x0, 1.0)
    asym = _asymptotic_region(a, x)
    if lower:
        # igam: 1 - igamc past max(1, a) (by its continued fraction, or its series up to 1.1)
        complement = ~asym & (x > 1.0) & (x > a)
        cf = complement & (x > 1.1)
        gs = ~asym & ~complement                     # igam's series
        cs = complement & ~cf                        # igamc's series
    else:
        # igamc: 1 - igam where igam's series is the better one
        logx = tl.log(x)
        complement = ~asym & tl.where(x > 1.1, x < a, tl.where(x <= 0.5, -0.4 / logx < a, x * 1.1 < a))
        cf = ~asym & (x > 1.1) & ~complement
        gs = complement
        cs = ~asym & ~complement & ~cf
    lgamma_a = _lgamma(a)
    fac = _igam_fac(a, x, lgamma_a)
    r = tl.zeros_like(a)
    if _any(asym):
        if lower:
            r = tl.where(asym, _igam_asymptotic(tl.where(asym, a, 30.0), tl.where(asym, x, 30.0), -1.0), r)
        else:
            r = tl.where(asym, _igam_asymptotic(tl.where(asym, a, 30.0), tl.where(asym, x, 30.0), 1.0), r)
    if _any(gs):
        r = tl.where(gs, _igam_series(a, x, fac, gs), r)
    if _any(cf):
        r = tl.where(cf, _igamc_continued_fraction(a, x, fac, cf), r)
    if _any(cs):
        r = tl.where(cs, _igamc_series(a, x, lgamma_a, _lgamma(a + 1.0), cs), r)
    r = tl.where(complement, 1.0 - r, r)
    return _igamma_boundaries(a0, x0, r, lower)


@triton.jit
def igamma(a, x):
    """The regularized lower incomplete gamma function P(a, x)."""
    return _incomplete_gamma(a, x, True)


@triton.jit
def igammac(a, x):
    """The regularized upper incomplete gamma function Q(a, x)."""
    return _incomplete_gamma(a, x, False)


# ------------------------------------------------------------------ modified Bessel functions
@triton.jit
def _i0e(x):
    ax = tl.abs(x)
    big = tl.maximum(ax, 8.0)
    near = _chbevl(ax * 0.5 - 2.0, _I0E_A)
    far = _chbevl(32.0 / big - 2.0, _I0E_B) / _sqrt(big)
    return tl.where(ax <= 8.0, near, tl.where(x != x, x, far))


@triton.jit
def _i1e(x):
    ax = tl.abs(x)
    big = tl.maximum(ax, 8.0)
    near = _chbevl(ax * 0.5 - 2.0, _I1E_A) * ax
    far = _chbevl(32.0 / big - 2.0, _I1E_B) / _sqrt(big)
    r = tl.where(ax <= 8.0, near, tl.where(x != x, x, far))
    return tl.where(x < 0, r * -1.0, r)


@triton.jit
def _scale_exp_abs(x, v):
    """exp(|x|) v without overflowing before the product does: exp(|x|/2) twice."""
    h = _exp(0.5 * tl.abs(x))
    return h * v * h


@triton.jit
def i0(x):
    return _scale_exp_abs(x, _i0e(x))


@triton.jit
def i0e(x):
    return _i0e(x)


@triton.jit
def i1(x):
    return _scale_exp_abs(x, _i1e(x))


@triton.jit
def i1e(x):
    return _i1e(x)


@triton.jit
def _k_small(x, one: tl.constexpr):
    """K0 (one = False) or K1 on (0, 2]: the Chebyshev series and the log(x/2) I term."""
    xs = tl.minimum(tl.where(x > 0, x, 1.0), 2.0)
    if one:
        r = tl.log(0.5 * xs) * _exp(xs) * _i1e(xs) + _chbevl(xs * xs - 2.0, _K1_A) / xs
    else:
        # log(x) - log(2), as torch's double log(0.5 * x): a halved float32 subnormal would round to 0
        r = _chbevl(xs * xs - 2.0, _K0_A) - (tl.log(xs) - 0.69314718055994530942) * _exp(xs) * _i0e(xs)
    return r


@triton.jit
def _k_large_scaled(x, one: tl.constexpr):
    """exp(x) K0(x) or exp(x) K1(x) on (2, inf)."""
    xl = tl.maximum(x, 2.0)
    if one:
        r = _chbevl(8.0 / xl - 2.0, _K1_B) / _sqrt(xl)
    else:
        r = _chbevl(8.0 / xl - 2.0, _K0_B) / _sqrt(xl)
    return r


@triton.jit
def _k_domain(x, r):
    return tl.where(x == 0, float("inf"), tl.where((x < 0) | (x != x), float("nan"), r))


@triton.jit
def modified_bessel_k0(x):
    return _k_domain(x, tl.where(x <= 2.0, _k_small(x, False), _exp(-x) * _k_large_scaled(x, False)))


@triton.jit
def modified_bessel_k1(x):
    return _k_domain(x, tl.where(x <= 2.0, _k_small(x, True), _exp(-x) * _k_large_scaled(x, True)))


@triton.jit
def scaled_modified_bessel_k0(x):
    return _k_domain(x, tl.where(x <= 2.0, _k_small(x, False) * _exp(tl.minimum(x, 2.0)),
                                 _k_large_scaled(x, False)))


@triton.jit
def scaled_modified_bessel_k1(x):
    return _k_domain(x, tl.where(x <= 2.0, _k_small(x, True) * _exp(tl.minimum(x, 2.0)),
                                 _k_large_scaled(x, True)))


# ------------------------------------------------------------------ Bessel functions J, Y
@triton.jit
def _bessel_far(x, one: tl.constexpr):
    """The modulus-phase form past 5: P and 5/x Q of J0/Y0 (one = False) or J1/Y1, the phase
    x - pi/4 (x - 3 pi/4) and sqrt(2 / (pi x))."""
    xf = tl.maximum(x, 5.0)
    w = 25.0 / (xf * xf)
    if one:
        p = _polevl(w, _J1_PP) / _polevl(w, _J1_PQ)
        q = _polevl(w, _J1_QP) / _polevl(w, _J1_QQ)
        t = xf - 2.356194490192344928846982537459627163
    else:
        p = _polevl(w, _J0_PP) / _polevl(w, _J0_PQ)
        q = _polevl(w, _J0_QP) / _polevl(w, _J0_QQ)
        t = xf - 0.785398163397448309615660845819875721
    return p, 5.0 / xf * q, t, 0.797884560802865355879892119868763737 / _sqrt(xf)


@triton.jit
def _j0(x):
    ax = tl.abs(x)
    z = ax * ax
    near = (z - 5.78318596294678452118e+00) * (z - 3.04712623436620863991e+01) * \
        _polevl(z, _J0_RP) / _polevl(z, _J0_RQ)
    near = tl.where(ax < 1e-5, 1.0 - z * 0.25, near)
    p, q, t, s = _bessel_far(ax, False)
    far = (p * tl.cos(t) - q * tl.sin(t)) * s
    return tl.where(ax <= 5.0, near, tl.where(ax == ax, far, ax))


@triton.jit
def _j1(x):
    ax = tl.abs(x)
    z = ax * ax
    near = _polevl(z, _J1_RP) / _polevl(z, _J1_RQ) * ax * \
        (z - 1.46819706421238932572e+01) * (z - 4.92184563216946036703e+01)
    p, q, t, s = _bessel_far(ax, True)
    far = (p * tl.cos(t) - q * tl.sin(t)) * s
    r = tl.where(ax <= 5.0, near, tl.where(ax == ax, far, ax))
    return tl.where(x < 0, r * -1.0, tl.where(x == 0, x, r))      # odd: j1(-0) is -0, as torch's x * ...


@triton.jit
def bessel_j0(x):
    return _j0(x)


@triton.jit
def bessel_j1(x):
    return _j1(x)


@triton.jit
def bessel_y0(x):
    xn = tl.where(x > 0, x, 1.0)
    z = xn * xn
    near = _polevl(z, _Y0_YP) / _polevl(z, _Y0_YQ) + 0.636619772367581343075535053490057448 * tl.log(xn) * _j0(xn)
    near = tl.where(x == 0, float("-inf"), tl.where(x < 0, float("nan"), near))
    p, q, t, s = _bessel_far(x, False)
    far = (p * tl.sin(t) + q * tl.cos(t)) * s
    return tl.where(x <= 5.0, near, tl.where(x == x, far, x))


@triton.jit
def bessel_y1(x):
    xn = tl.where(x > 0, x, 1.0)
    z = xn * xn
    near = xn * _polevl(z, _Y1_YP) / _polevl(z, _Y1_YQ) + \
        0.636619772367581343075535053490057448 * (_j1(xn) * tl.log(xn) - 1.0 / xn)
    near = tl.where(x == 0, float("-inf"), tl.where(x < 0, float("nan"), near))
    p, q, t, s = _bessel_far(x, True)
    far = (p * tl.sin(t) + q * tl.cos(t)) * s
    return tl.where(x <= 5.0, near, tl.where(x == x, far, x))


@triton.jit
def spherical_bessel_j0(x):
    z = x * x
    series = 1.0 + z * (-1.0 / 6.0 + z * (1.0 / 120.0 + z * (-1.0 / 5040.0 + z * (
        1.0 / 362880.0 + z * (-1.0 / 39916800.0 + z * (1.0 / 6227020800.0))))))
    r = tl.where(tl.abs(x) < 0.5, series, tl.sin(x) / tl.where(tl.abs(x) < 0.5, 1.0, x))
    return tl.where(tl.abs(x) == float("inf"), 0.0, r)


@triton.jit
def airy_ai(x):
    """torch's airy_ai_forward (Cephes airy.c): the oscillating asymptotic form below -2.09, the
    decaying one from 2.09, the Maclaurin series between, summed until a term falls below the
    dtype's epsilon."""
    if x.dtype == tl.float64:
        eps = 2.220446049250313e-16
    else:
        eps = 1.1920928955078125e-07
    # x < -2.09
    xn = tl.where(x < -2.09, x, -3.0)
    rn = _sqrt(-xn)
    zeta_n = -2.0 * xn * rn * (1.0 / 3.0)
    z = 1.0 / zeta_n
    z2 = z * z
    afn = _polevl(z2, _AIRY_AFN) / _polevl(z2, _AIRY_AFD)
    agn = _polevl(z2, _AIRY_AGN) / _polevl(z2, _AIRY_AGD)
    t = zeta_n + 0.25 * 3.141592653589793
    oscillating = 5.64189583547756286948e-01 / _sqrt(rn) * (tl.sin(t) * (1.0 + z2 * afn) - tl.cos(t) * (z * agn))
    # x >= 2.09
    xp = tl.where(x >= 2.09, x, 3.0)
    zeta_p = 2.0 * xp * _sqrt(xp) * (1.0 / 3.0)
    iz = 1.0 / zeta_p
    decaying = (5.64189583547756286948e-01 * _polevl(iz, _AIRY_AN) / _polevl(iz, _AIRY_AD)) / (2.0 * _sqrt(_sqrt(xp)) * _exp(zeta_p))
    # |x| < 2.09: Ai(x) = c1 f(x) - c2 g(x), f and g power series in x^3
    xs = tl.where((x < -2.09) | (x >= 2.09), 0.0, x)
    f = tl.full(x.shape, 1.0, x.dtype)
    g = xs
    k = tl.full(x.shape, 1.0, x.dtype)
    m = tl.full(x.shape, 1.0, x.dtype)
    n = xs
    cube = xs * xs * xs
    active = x == x
    i = _counter(0)
    while (tl.max(tl.reshape(active.to(tl.int32), [active.numel]), 0) > 0) & (i < 60):
        i += 1
        m = tl.where(active, m * cube, m)
        k = tl.where(active, k + 1.0, k)
        m = tl.where(active, m / k, m)
        n = tl.where(active, n * cube, n)
        k = tl.where(active, k + 1.0, k)
        n = tl.where(active, n / k, n)
        m = tl.where(active, m / k, m)
        f = tl.where(active, f + m, f)
        k = tl.where(active, k + 1.0, k)
        n = tl.where(active, n / k, n)
        g = tl.where(active, g + n, g)
        active = active & (tl.abs(m / f) > eps)
    series = 0.355028053887817239260 * f - 0.258819403792806798405 * g
    r = tl.where(x < -2.09, oscillating, tl.where(x >= 2.09, decaying, series))
    r = tl.where(x > 103.892, 0.0, r)
    return tl.where((tl.abs(x) == float("inf")) | (x != x), float("nan"), r)


@triton.jit
def entr(x):
    lx = tl.log(tl.where(x > 0, x, 1.0))
    r = tl.where(x > 0, -x * lx, tl.where(x == 0, 0.0, float("-inf")))
    return tl.where(x != x, x, r)


@triton.jit
def xlog1py(x, y):
    r = tl.where(x == 0, 0.0, x * _log1p(y))
    return tl.where(y != y, y, r)


# ------------------------------------------------------------------ orthogonal polynomials
@triton.jit
def _degree(n):
    """torch's static_cast<int64_t>(n): truncation; NaN, infinities and values past int64 count
    as negative degrees (x86 converts them to INT64_MIN)."""
    ok = (n == n) & (tl.abs(n) < 9.2e18)
    return tl.where(ok, _trunc(tl.where(ok, n, -1.0)), -1.0)


@triton.jit
def _steps(last):
    """The last recurrence index as int32 (the loop counter; 2^31 - 1 at most)."""
    return tl.minimum(tl.maximum(last, 0.0), 2147483647.0).to(tl.int32)


@triton.jit
def _chebyshev_recurrence(x, p, q, two_x, last):
    """P_k = 2x P_(k-1) - P_(k-2) for k = 2 ... last (per element; a NaN stays NaN)."""
    # the loop's condition is a scalar computed in the body (``more``), not the reduction of
    # ``going`` in the while's condition: Triton 3.6's TritonGPURemoveLayoutConversions crashes on
    # that form of these recurrences (sm_90, "Result number is out of range"); the same for the
    # Hermite, Laguerre and Legendre loops below
    k = _counter(2)
    going = (k <= last) & (q == q)
    more = tl.max(tl.reshape(going.to(tl.int32), [going.numel]), 0) > 0
    while more:
        step = k <= last
        r = two_x * q - p
        p = tl.where(step, q, p)
        q = tl.where(step, r, q)
        k += 1
        going = (k <= last) & (q == q)
        more = tl.max(tl.reshape(going.to(tl.int32), [going.numel]), 0) > 0
    return q


@triton.jit
def _chebyshev(x, n, first, closed_from: tl.constexpr, kind: tl.constexpr):
    """T (kind 0), U (1), V (2), W (3): the value at |x| = 1, the trigonometric form for |x| < 1
    past degree ``closed_from``, the recurrence otherwise (torch's chebyshev_polynomial_*)."""
    use_closed = (n > closed_from) & (tl.abs(x) < 1.0)
    at_edge = tl.abs(x) == 1.0
    last = _steps(tl.where(use_closed | at_edge, 0.0, n))
    rec = _chebyshev_recurrence(x, tl.full(x.shape, 1.0, x.dtype), first, x + x, last)
    theta = _acos(tl.where(use_closed, x, 0.0))
    even = ~_is_odd(n)
    if kind == 0:
        closed = tl.cos(n * theta)
        edge = tl.where((x > 0) | even, 1.0, -1.0)
    elif kind == 1:
        s = tl.sin(theta)
        closed = tl.where(s != 0, tl.sin((n + 1.0) * theta) / tl.where(s != 0, s, 1.0),
                          ((n + 1.0) * tl.cos((n + 1.0) * theta)) / x)
        edge = tl.where((x > 0) | even, n + 1.0, -(n + 1.0))
    elif kind == 2:
        odd_edge = tl.where(even, n + n + 1.0, -(n + n + 1.0))
        closed = tl.where(tl.sin(theta * 0.5) != 1.0,
                          tl.cos((n + 0.5) * theta) / tl.cos(theta * 0.5), odd_edge)
        edge = tl.where(x > 0, 1.0, odd_edge)
    else:
        edge = tl.where(x > 0, n + n + 1.0, tl.where(even, 1.0, -1.0))
        closed = tl.where(tl.cos(theta * 0.5) != 1.0,
                          tl.sin((n + 0.5) * theta) / tl.sin(theta * 0.5), edge)
    r = tl.where(use_closed, closed, tl.where(n == 0, 1.0, tl.where(n == 1, first, rec)))
    r = tl.where(at_edge, edge, r)
    return tl.where(n < 0, 0.0, r)


@triton.jit
def chebyshev_polynomial_t(x, n):
    n = _degree(n)
    return _chebyshev(x, n, x, 6, 0)


@triton.jit
def chebyshev_polynomial_u(x, n):
    n = _degree(n)
    return _chebyshev(x, n, x + x, 8, 1)


@triton.jit
def chebyshev_polynomial_v(x, n):
    n = _degree(n)
    return _chebyshev(x, n, x + x - 1.0, 8, 2)


@triton.jit
def chebyshev_polynomial_w(x, n):
    n = _degree(n)
    return _chebyshev(x, n, x + x + 1.0, 8, 3)


@triton.jit
def _shifted(x, n, closed_from: tl.constexpr, kind: tl.constexpr):
    """The shifted Chebyshev polynomials: the recurrence in y = 2x - 1 (written as torch writes
    it), torch's own values at x = 1 and x = 0."""
    n = _degree(n)
    y = x + x - 1.0
    use_closed = (n > closed_from) & (tl.abs(y) < 1.0)
    last = _steps(tl.where(use_closed | (x == 0.0) | (x == 1.0), 0.0, n))
    theta = _acos(tl.where(use_closed, y, 0.0))
    even = ~_is_odd(n)
    if kind == 0:
        first = y
        closed = tl.cos(n * theta)
        at_one = tl.full(x.shape, 1.0, x.dtype)
        at_zero = tl.where(even, 1.0, -1.0)
    elif kind == 1:
        first = y + y
        s = tl.sin(theta)
        closed = tl.where(s != 0, tl.sin((n + 1.0) * theta) / tl.where(s != 0, s, 1.0),
                          ((n + 1.0) * tl.cos((n + 1.0) * theta)) / y)
        at_one = n + 1.0
        at_zero = tl.where(even, n + 1.0, -(n + 1.0))
    elif kind == 2:
        first = y + y - 1.0
        at_one = tl.full(x.shape, 1.0, x.dtype)
        at_zero = tl.where(even, n + n + 1.0, -(n + n + 1.0))
        closed = tl.where(tl.sin(theta * 0.5) != 1.0,
                          tl.cos((n + 0.5) * theta) / tl.cos(theta * 0.5), at_zero)
    else:
        first = y + y + 1.0
        at_one = n + n + 1.0
        at_zero = tl.where(even, 1.0, -1.0)
        closed = tl.where(tl.cos(theta * 0.5) != 1.0,
                          tl.sin((n + 0.5) * theta) / tl.sin(theta * 0.5), at_zero)
    rec = _chebyshev_recurrence(x, tl.full(x.shape, 1.0, x.dtype), first, y + y, last)
    r = tl.where(use_closed, closed, tl.where(n == 0, 1.0, tl.where(n == 1, first, rec)))
    r = tl.where(x == 0.0, at_zero, r)
    r = tl.where(x == 1.0, at_one, r)
    return tl.where(n < 0, 0.0, r)


@triton.jit
def shifted_chebyshev_polynomial_t(x, n):
    return _shifted(x, n, 6, 0)


@triton.jit
def shifted_chebyshev_polynomial_u(x, n):
    return _shifted(x, n, 6, 1)


@triton.jit
def shifted_chebyshev_polynomial_v(x, n):
    return _shifted(x, n, 6, 2)


@triton.jit
def shifted_chebyshev_polynomial_w(x, n):
    return _shifted(x, n, 4, 3)


@triton.jit
def _hermite(x, n, physicists: tl.constexpr):
    """H_k = 2x H_(k-1) - 2(k-1) H_(k-2) (physicists') or He_k = x He_(k-1) - (k-1) He_(k-2);
    past torch's degree limit (128 for float32, 512 for float64) the result is NaN."""
    n = _degree(n)
    if x.dtype == tl.float64:
        limit = 512.0
    else:
        limit = 128.0
    if physicists:
        scale = x + x
        weight = 2.0
    else:
        scale = x
        weight = 1.0
    last = _steps(tl.where(n > limit, 0.0, n))
    p = tl.full(x.shape, 1.0, x.dtype)
    q = scale
    k = _counter(2)
    going = (k <= last) & (q == q)
    more = tl.max(tl.reshape(going.to(tl.int32), [going.numel]), 0) > 0
    while more:
        step = k <= last
        r = scale * q - (weight * (k - 1).to(x.dtype)) * p
        p = tl.where(step, q, p)
        q = tl.where(step, r, q)
        k += 1
        going = (k <= last) & (q == q)
        more = tl.max(tl.reshape(going.to(tl.int32), [going.numel]), 0) > 0
    r = tl.where(n == 0, 1.0, tl.where(n == 1, scale, q))
    r = tl.where(n > limit, float("nan"), r)
    return tl.where(n < 0, 0.0, r)


@triton.jit
def hermite_polynomial_h(x, n):
    return _hermite(x, n, True)


@triton.jit
def hermite_polynomial_he(x, n):
    return _hermite(x, n, False)


@triton.jit
def laguerre_polynomial_l(x, n):
    # k L_k = (2(k-1) + 1 - x) L_(k-1) - (k-1) L_(k-2)
    n = _degree(n)
    last = _steps(tl.where(x == 0.0, 0.0, n))
    p = tl.full(x.shape, 1.0, x.dtype)
    q = 1.0 - x
    k = _counter(2)
    going = (k <= last) & (q == q)
    more = tl.max(tl.reshape(going.to(tl.int32), [going.numel]), 0) > 0
    while more:
        step = k <= last
        kf = k.to(x.dtype)
        r = (((kf - 1.0) * 2.0 + (1.0 - x)) * q - (kf - 1.0) * p) / (tl.zeros_like(x) + kf)
        p = tl.where(step, q, p)
        q = tl.where(step, r, q)
        k += 1
        going = (k <= last) & (q == q)
        more = tl.max(tl.reshape(going.to(tl.int32), [going.numel]), 0) > 0
    r = tl.where(n == 0, 1.0, tl.where(n == 1, 1.0 - x, q))
    r = tl.where(x == 0.0, 1.0, r)
    return tl.where(n < 0, 0.0, r)


@triton.jit
def legendre_polynomial_p(x, n):
    # k P_k = (2k - 1) x P_(k-1) - (k-1) P_(k-2)
    n = _degree(n)
    at_edge = tl.abs(x) == 1.0
    last = _steps(tl.where(at_edge, 0.0, n))
    p = tl.full(x.shape, 1.0, x.dtype)
    q = x
    k = _counter(2)
    going = (k <= last) & (q == q)
    more = tl.max(tl.reshape(going.to(tl.int32), [going.numel]), 0) > 0
    while more:
        step = k <= last
        kf = k.to(x.dtype)
        r = ((2.0 * kf - 1.0) * x * q - (kf - 1.0) * p) / (tl.zeros_like(x) + kf)
        p = tl.where(step, q, p)
        q = tl.where(step, r, q)
        k += 1
        going = (k <= last) & (q == q)
        more = tl.max(tl.reshape(going.to(tl.int32), [going.numel]), 0) > 0
    r = tl.where(n == 0, 1.0, tl.where(n == 1, x, q))
    r = tl.where(at_edge, tl.where((x > 0) | ~_is_odd(n), 1.0, -1.0), r)
    return tl.where(n < 0, 0.0, r)


# ------------------------------------------------------------------ reparameterised gamma/beta gradients
# torch's standard_gamma_grad_one and dirichlet_grad_one (aten/src/ATen/native/Distributions.h),
# every region evaluated and picked with tl.where (pow(x, y) as exp(y log x): NaN for a negative
# base, as C's pow).
@triton.jit
def _digamma_one(x):
    """torch's digamma_one: digamma, but +inf at 0 and the negative integers."""
    return tl.where((x == 0) | ((x < 0) & (x == tl.floor(x))), float("inf"), _digamma(x))


@triton.jit
def _cpow(x, y):
    """C's pow(x, y) as exp(y log x): NaN for a negative base (named apart from the Hurwitz zeta's
    _pow above, which this module-level name would otherwise replace)."""
    return _exp(y * tl.log(x))


@triton.jit
def standard_gamma_grad(alpha, x):
    """d x / d alpha for x ~ Gamma(alpha, 1) (torch's _standard_gamma_grad)."""
    # small x: a Taylor series of the incomplete gamma function
    numer = tl.full(x.shape, 1.0, x.dtype)
    denom = alpha
    series1 = numer / denom
    series2 = numer / (denom * denom)
    for i in tl.static_range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1.0
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_alpha = _cpow(x, alpha)
    gamma_pdf = _cpow(x, alpha - 1.0) * _exp(-x)
    gamma_cdf = pow_x_alpha * series1
    gamma_cdf_alpha = (tl.log(x) - _digamma_one(alpha)) * gamma_cdf - pow_x_alpha * series2
    small = -gamma_cdf_alpha / gamma_pdf
    small = tl.where(small != small, 0.0, small)
    # large alpha: Rice's saddle point expansion (a polynomial near the mode)
    near = (0.9 * alpha <= x) & (x <= 1.1 * alpha)
    numer_1 = 1.0 + 24.0 * alpha * (1.0 + 12.0 * alpha)
    numer_2 = 1440.0 * (alpha * alpha) + 6.0 * x * (53.0 - 120.0 * x) - 65.0 * x * x / alpha \
        + alpha * (107.0 + 3600.0 * x)
    mode_poly = numer_1 * numer_2 / (1244160.0 * (alpha * alpha) * (alpha * alpha))
    sq = _sqrt(8.0 * alpha)
    term2 = sq / (alpha - x)
    term3 = _cpow(x - alpha - alpha * tl.log(x / alpha), tl.zeros_like(x) - 1.5)
    term23 = tl.where(x < alpha, term2 - term3, term2 + term3)
    term1 = tl.log(x / alpha) * term23 - _sqrt(2.0 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x))
    stirling = 1.0 + 1.0 / (12.0 * alpha) * (1.0 + 1.0 / (24.0 * alpha))
    saddle = tl.where(near, mode_poly, -stirling * (x * term1) / sq)
    # otherwise: a bivariate rational approximation in log(x / alpha) and log(alpha)
    u = tl.log(x / alpha)
    v = tl.log(alpha)
    c0 = _GAMMA_GRAD_UV[0] + u * (_GAMMA_GRAD_UV[8] + u * _GAMMA_GRAD_UV[16])
    c1 = _GAMMA_GRAD_UV[1] + u * (_GAMMA_GRAD_UV[9] + u * _GAMMA_GRAD_UV[17])
    c2 = _GAMMA_GRAD_UV[2] + u * (_GAMMA_GRAD_UV[10] + u * _GAMMA_GRAD_UV[18])
    c3 = _GAMMA_GRAD_UV[3] + u * (_GAMMA_GRAD_UV[11] + u * _GAMMA_GRAD_UV[19])
    c4 = _GAMMA_GRAD_UV[4] + u * (_GAMMA_GRAD_UV[12] + u * _GAMMA_GRAD_UV[20])
    c5 = _GAMMA_GRAD_UV[5] + u * (_GAMMA_GRAD_UV[13] + u * _GAMMA_GRAD_UV[21])
    c6 = _GAMMA_GRAD_UV[6] + u * (_GAMMA_GRAD_UV[14] + u * _GAMMA_GRAD_UV[22])
    c7 = _GAMMA_GRAD_UV[7] + u * (_GAMMA_GRAD_UV[15] + u * _GAMMA_GRAD_UV[23])
    p = c0 + v * (c1 + v * (c2 + v * c3))
    q = c4 + v * (c5 + v * (c6 + v * c7))
    rational = _exp(p / q)
    return tl.where(x < 0.8, small, tl.where(alpha > 8.0, saddle, rational))


@triton.jit
def _beta_grad_alpha_small(x, alpha, beta):
    factor = _digamma_one(alpha) - _digamma_one(alpha + beta) - tl.log(x)
    numer = tl.full(x.shape, 1.0, x.dtype)
    series = numer / alpha * (factor + 1.0 / alpha)
    for i in tl.static_range(1, 11):
        numer = numer * ((i - beta) * x / i)
        denom = alpha + i
        series = series + numer / denom * (factor + 1.0 / denom)
    result = x * _cpow(1.0 - x, -beta) * series
    return tl.where(result != result, 0.0, result)


@triton.jit
def _beta_grad_beta_small(x, alpha, beta):
    factor = _digamma_one(alpha + beta) - _digamma_one(beta)
    numer = tl.full(x.shape, 1.0, x.dtype)
    betas = tl.full(x.shape, 1.0, x.dtype)
    dbetas = tl.zeros_like(x)
    series = factor / alpha
    for i in tl.static_range(1, 9):
        numer = numer * (-x / i)
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    result = -_cpow(1.0 - x, 1.0 - beta) * series
    return tl.where(result != result, 0.0, result)


@triton.jit
def _beta_grad_alpha_mid(x, alpha, beta):
    total = alpha + beta
    mean = alpha / total
    std = _sqrt(alpha * beta / (total + 1.0)) / total
    bb = beta * beta
    poly = 47.0 * x * bb * bb + alpha * (
        (43.0 + 20.0 * (16.0 + 27.0 * beta) * x) * bb * beta + alpha * (
            3.0 * (59.0 + 180.0 * beta - 90.0 * x) * bb + alpha * (
                (453.0 + 1620.0 * beta * (1.0 - x) - 455.0 * x) * beta + alpha * (
                    8.0 * (1.0 - x) * (135.0 * beta - 11.0)))))
    prefactor_num = (1.0 + 12.0 * alpha) * (1.0 + 12.0 * beta) / (total * total)
    prefactor_den = 12960.0 * alpha * alpha * alpha * beta * beta * (1.0 + 12.0 * total)
    at_mean = prefactor_num / (1.0 - x) * poly / prefactor_den
    prefactor = -x / _sqrt(2.0 * alpha * beta / total)
    stirling = (1.0 + 1.0 / (12.0 * alpha) + 1.0 / (288.0 * alpha * alpha)) \
        * (1.0 + 1.0 / (12.0 * beta) + 1.0 / (288.0 * beta * beta)) \
        / (1.0 + 1.0 / (12.0 * total) + 1.0 / (288.0 * total * total))
    term1_num = 2.0 * (alpha * alpha) * (x - 1.0) + alpha * beta * (x - 1.0) - x * bb
    axbx = alpha * (x - 1.0) + beta * x
    term1 = term1_num / (_sqrt(2.0 * alpha / beta) * _cpow(total, tl.zeros_like(x) + 1.5) * axbx * axbx)
    term2 = 0.5 * tl.log(alpha / (total * x))
    term3 = _sqrt(8.0 * alpha * beta / total) / (beta * x + alpha * (x - 1.0))
    term4 = _cpow(beta * tl.log(beta / (total * (1.0 - x))) + alpha * tl.log(alpha / (total * x)),
                 tl.zeros_like(x) - 1.5)
    term1234 = term1 + term2 * (term3 + tl.where(x < mean, term4, -term4))
    return tl.where((mean - 0.1 * std <= x) & (x <= mean + 0.1 * std), at_mean, stirling * prefactor * term1234)


@triton.jit
def dirichlet_grad(x, alpha, total):
    """d x / d alpha for x ~ Beta(alpha, total - alpha), over (1 - x): the pieces of a Dirichlet
    sample's reparameterised gradient (torch's _dirichlet_grad). Computed in float64: the
    rational fit and the saddle point expansion cancel (float32 loses 3 to 4 digits)."""
    dtype = x.dtype
    x = x.to(tl.float64)
    alpha = alpha.to(tl.float64)
    total = total.to(tl.float64)
    beta = total - alpha
    boundary = total * x * (1.0 - x)
    u = tl.log(x)
    a = tl.log(alpha) - u
    b = tl.log(total) - a
    p = tl.zeros_like(x)
    q = tl.zeros_like(x)
    pu = tl.full(x.shape, 1.0, x.dtype)
    for i in tl.static_range(3):
        ua = pu
        for j in tl.static_range(3):
            # (static indices written out: a name assigned in the loop would be a run-time value)
            p = p + ua * (_DIRICHLET_GRAD_C[(i * 3 + j) * 4] + b * (_DIRICHLET_GRAD_C[(i * 3 + j) * 4 + 1] + b * (
                _DIRICHLET_GRAD_C[(i * 3 + j) * 4 + 2] + b * _DIRICHLET_GRAD_C[(i * 3 + j) * 4 + 3])))
            q = q + ua * (_DIRICHLET_GRAD_C[36 + (i * 3 + j) * 4] + b * (
                _DIRICHLET_GRAD_C[37 + (i * 3 + j) * 4] + b * (
                    _DIRICHLET_GRAD_C[38 + (i * 3 + j) * 4] + b * _DIRICHLET_GRAD_C[39 + (i * 3 + j) * 4])))
            ua = ua * a
        pu = pu * u
    rational = p / q * (x * (_digamma_one(total) - _digamma_one(alpha)) / beta)
    r = tl.where((alpha > 6.0) & (beta > 6.0), _beta_grad_alpha_mid(x, alpha, beta), rational)
    r = tl.where((x >= 0.5) & (boundary < 0.75), -_beta_grad_beta_small(1.0 - x, beta, alpha), r)
    return tl.where((x <= 0.5) & (boundary < 2.5), _beta_grad_alpha_small(x, alpha, beta), r).to(dtype)
