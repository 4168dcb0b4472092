"""Rejection samplers of torch's parameterised distributions (aten/src/ATen/native/Distributions.h),
one element per lane, from Triton's Philox:

    KIND 0 gamma     Gamma(alpha, 1): Marsaglia and Tsang (2000); alpha < 1 boosted to alpha + 1
                     and scaled by U^(1/alpha); at least the dtype's smallest normal (torch's clamp)
    KIND 1 poisson   rate >= 10: Hormann's transformed rejection (PTRS); below: the product of
                     uniforms until it falls under exp(-rate)
    KIND 2 binomial  count * min(p, 1 - p) >= 10: Hormann's BTRS; below: the inversion by sums of
                     geometric draws; p > 1/2 drawn as count - Binomial(count, 1 - p)

The stream: element i owns Philox counter ``counter0 + i`` (its two 32-bit halves are the first
two counter words); round k of its rejection loop is the third word, so each round's call gives
four fresh 32-bit words (four uniforms, or a Box-Muller pair and two uniforms) and an element's
draws depend only on (seed, counter0 + i), never on the launch configuration. The launcher takes
one counter per element from the generator (a reserved range: round 0 is the position a uniform
fill of the same counters would read, the other rounds are no fill's).

The rounds of a block run while any of its elements still rejects (``more``), up to MAX_ROUNDS
(a guard: the chance that a lane needs more is below 1e-30 for every parameter); lanes already
accepted keep their value. Compute in COMPUTE (float32 or float64, as torch's CUDA accscalar;
16-bit floats in float32).
"""
import triton
import triton.language as tl

from .special import _lgamma


@triton.jit
def _uniforms(seed, counter, k, COMPUTE: tl.constexpr):
    """Four uniforms in [0, 1) for round k of the elements' counters."""
    c0 = (counter & 0xFFFFFFFF).to(tl.uint32)
    c1 = (counter >> 32).to(tl.uint32)
    c2 = tl.zeros_like(c0) + tl.cast(k, tl.uint32)
    r0, r1, r2, r3 = tl.philox(seed, c0, c1, c2, tl.zeros_like(c0))
    return (tl.uint_to_uniform_float(r0).to(COMPUTE), tl.uint_to_uniform_float(r1).to(COMPUTE),
            tl.uint_to_uniform_float(r2).to(COMPUTE), tl.uint_to_uniform_float(r3).to(COMPUTE))


@triton.jit
def _any(flags):
    return tl.max(flags.to(tl.int32), 0) > 0


@triton.jit
def _stirling_tail(k):
    """torch's stirling_approx_tail: log k! - Stirling's approximation (a table below 10)."""
    kp1sq = (k + 1.0) * (k + 1.0)
    r = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1.0)
    r = tl.where(k == 0.0, 0.0810614667953272, r)
    r = tl.where(k == 1.0, 0.0413406959554092, r)
    r = tl.where(k == 2.0, 0.0276779256849983, r)
    r = tl.where(k == 3.0, 0.02079067210376509, r)
    r = tl.where(k == 4.0, 0.0166446911898211, r)
    r = tl.where(k == 5.0, 0.0138761288230707, r)
    r = tl.where(k == 6.0, 0.0118967099458917, r)
    r = tl.where(k == 7.0, 0.0104112652619720, r)
    r = tl.where(k == 8.0, 0.00925546218271273, r)
    return tl.where(k == 9.0, 0.00833056343336287, r)


@triton.jit
def _gamma(seed, counter, alpha, live, COMPUTE: tl.constexpr, MAX_ROUNDS: tl.constexpr, TINY: tl.constexpr):
    inside = live & (alpha > 0.0) & (alpha < float("inf"))
    boost = alpha < 1.0
    a = tl.where(inside, tl.where(boost, alpha + 1.0, alpha), 1.0)
    d = a - 1.0 / 3.0
    c = 1.0 / tl.sqrt(9.0 * d)
    # the boost's uniform (word 3 of round 0, which the loop leaves unused): pow(1 - U, 1 / alpha)
    _, _, _, ub = _uniforms(seed, counter, 0, COMPUTE)
    scale = tl.where(boost, tl.exp(tl.log(1.0 - ub) / tl.where(inside, alpha, 1.0)), 1.0)
    result = tl.where(alpha == float("inf"), float("inf"), 0.0).to(COMPUTE)
    todo = inside
    k = 0
    more = _any(todo)
    while more:
        u0, u1, u2, _ = _uniforms(seed, counter, k, COMPUTE)
        # Box-Muller from u0, u1 (1 - u0 in (0, 1]: the log is finite)
        x = tl.sqrt(-2.0 * tl.log(1.0 - u0)) * tl.cos(6.283185307179586 * u1)
        y = 1.0 + c * x
        v = y * y * y
        u = 1.0 - u2
        xx = x * x
        accept = (y > 0.0) & ((u < 1.0 - 0.0331 * xx * xx) |
                              (tl.log(u) < 0.5 * xx + d * (1.0 - v + tl.log(tl.where(y > 0.0, v, 1.0)))))
        take = todo & accept
        result = tl.where(take, scale * d * v, result)
        todo = todo & ~accept
        k += 1
        more = _any(todo) & (k < MAX_ROUNDS)
    return tl.where(result > TINY, result, TINY)


@triton.jit
def _poisson(seed, counter, rate, live, COMPUTE: tl.constexpr, MAX_ROUNDS: tl.constexpr):
    big = rate >= 10.0
    lam = tl.where(big, rate, 10.0)              # PTRS's constants from a valid rate everywhere
    slam = tl.sqrt(lam)
    loglam = tl.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    invalpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2.0)
    enlam = tl.exp(-tl.where(big, 0.0, rate))
    prod = tl.full(rate.shape, 1.0, COMPUTE)
    count = tl.zeros_like(rate)
    result = tl.zeros_like(rate)
    todo = live & (rate > 0.0)
    k = 0
    more = _any(todo)
    while more:
        u0, u1, u2, u3 = _uniforms(seed, counter, k, COMPUTE)
        # large rates: two PTRS attempts per round
        for j in tl.static_range(2):
            uu = tl.where(j == 0, u0, u2) - 0.5
            vv = tl.where(j == 0, u1, u3)
            us = 0.5 - tl.abs(uu)
            kk = tl.floor((2.0 * a / us + b) * uu + lam + 0.43)
            fast = (us >= 0.07) & (vv <= vr)
            bad = (kk < 0.0) | ((us < 0.013) & (vv > us))
            slow = tl.log(vv) + tl.log(invalpha) - tl.log(a / (us * us) + b) <= -lam + kk * loglam - _lgamma(kk + 1.0)
            accept = todo & big & (fast | (~bad & slow))
            result = tl.where(accept, kk, result)
            todo = todo & ~accept
        # small rates: four factors per round
        for j in tl.static_range(4):
            uj = tl.where(j == 0, u0, tl.where(j == 1, u1, tl.where(j == 2, u2, u3)))
            step = todo & ~big
            prod = tl.where(step, prod * uj, prod)
            stop = step & (prod <= enlam)
            result = tl.where(stop, count, result)
            count = tl.where(step & ~stop, count + 1.0, count)
            todo = todo & ~stop
        k += 1
        more = _any(todo) & (k < MAX_ROUNDS)
    # an infinite rate: torch's cast of inf to int64 (its lowest value)
    return tl.where(rate == float("inf"), -9.223372036854775808e18, result)


@triton.jit
def _binomial(seed, counter, n, prob, live, COMPUTE: tl.constexpr, MAX_ROUNDS: tl.constexpr):
    flip = prob > 0.5
    p = tl.where(flip, 1.0 - prob, prob)
    normal = live & (n > 0.0) & (prob > 0.0) & (prob < 1.0)
    big = n * p >= 10.0
    # BTRS's constants (from valid values everywhere)
    nb = tl.where(normal & big, n, 100.0)
    pb = tl.where(normal & big, p, 0.25)
    stddev = tl.sqrt(nb * pb * (1.0 - pb))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * pb
    c = nb * pb + 0.5
    v_r = 0.92 - 4.2 / b
    r = pb / (1.0 - pb)
    alpha = (2.83 + 5.1 / b) * stddev
    m = tl.floor((nb + 1.0) * pb)
    # the inversion's state
    logq = tl.log(1.0 - tl.where(normal & ~big, p, 0.5))
    geom_sum = tl.zeros_like(n)
    num_geom = tl.zeros_like(n)
    result = tl.zeros_like(n)
    todo = normal
    k = 0
    more = _any(todo)
    while more:
        u0, u1, u2, u3 = _uniforms(seed, counter, k, COMPUTE)
        for j in tl.static_range(2):
            uu = tl.where(j == 0, u0, u2) - 0.5
            vv = tl.where(j == 0, u1, u3)
            us = 0.5 - tl.abs(uu)
            kk = tl.floor((2.0 * a / us + b) * uu + c)
            inside = (kk >= 0.0) & (kk <= nb)
            fast = (us >= 0.07) & (vv <= v_r)
            lv = tl.log(vv * alpha / (a / (us * us) + b))
            kc = tl.where(inside, kk, 0.0)
            upper = (m + 0.5) * tl.log((m + 1.0) / (r * (nb - m + 1.0))) \
                + (nb + 1.0) * tl.log((nb - m + 1.0) / (nb - kc + 1.0)) \
                + (kc + 0.5) * tl.log(r * (nb - kc + 1.0) / (kc + 1.0)) \
                + _stirling_tail(m) + _stirling_tail(nb - m) - _stirling_tail(kc) - _stirling_tail(nb - kc)
            accept = todo & big & inside & (fast | (lv <= upper))
            result = tl.where(accept, kk, result)
            todo = todo & ~accept
        for j in tl.static_range(4):
            uj = tl.where(j == 0, u0, tl.where(j == 1, u1, tl.where(j == 2, u2, u3)))
            step = todo & ~big
            geom_sum = tl.where(step, geom_sum + tl.ceil(tl.log(uj) / logq), geom_sum)
            stop = step & (geom_sum > n)
            result = tl.where(stop, num_geom, result)
            num_geom = tl.where(step & ~stop, num_geom + 1.0, num_geom)
            todo = todo & ~stop
        k += 1
        more = _any(todo) & (k < MAX_ROUNDS)
    result = tl.where(flip, n - result, result)
    result = tl.where(live & (prob >= 1.0), n, result)
    result = tl.where((n <= 0.0) | (prob <= 0.0), 0.0, result)
    return tl.where((prob != prob) | (n != n), float("nan"), result)


@triton.jit(do_not_specialize=["seed", "counter0"])
def sample_kernel(out_ptr, p0_ptr, p1_ptr, n, seed, counter0, KIND: tl.constexpr, COMPUTE: tl.constexpr,
                  MAX_ROUNDS: tl.constexpr, TINY: tl.constexpr, BLOCK: tl.constexpr):
    """out[i] = a draw with parameters p0[i] (and p1[i]); every operand contiguous. TINY: the
    smallest normal number of out's dtype (gamma draws are at least that, as torch's)."""
    pid = tl.program_id(0).to(tl.int64)
    i = pid * BLOCK + tl.arange(0, BLOCK)
    live = i < n
    counter = counter0.to(tl.int64) + i
    p0 = tl.load(p0_ptr + i, mask=live, other=1.0).to(COMPUTE)
    if KIND == 0:
        v = _gamma(seed, counter, p0, live, COMPUTE, MAX_ROUNDS, TINY)
    elif KIND == 1:
        v = _poisson(seed, counter, p0, live, COMPUTE, MAX_ROUNDS)
    else:
        p1 = tl.load(p1_ptr + i, mask=live, other=0.5).to(COMPUTE)
        v = _binomial(seed, counter, p0, p1, live, COMPUTE, MAX_ROUNDS)
    tl.store(out_ptr + i, v.to(out_ptr.dtype.element_ty), mask=live)
