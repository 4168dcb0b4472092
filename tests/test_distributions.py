"""tt.distributions against independent oracles: every family's log_prob / cdf / icdf / entropy /
mean / variance against scipy.stats (or a hand-written density where SciPy has none), the
transforms' inverses and log-det-Jacobians against finite differences, kl_divergence against
numerical integration (scipy.integrate.quad, sums over the support) and closed forms written here,
register_kl's dispatch, shapes (batch/event/expand/sample), validation with torch's error texts
(recorded from torch 2.13, "torch" read as "tritensor"), and reparameterised gradients by
gradcheck. Sampling statistics and the gamma samplers: tests/test_distributions_sampling.py.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import integrate, special, stats

import tritensor as tt
import tritensor.distributions as D
from tritensor.distributions import constraints, transforms as T


def _t(x):
    return tt.tensor(np.asarray(x, dtype=np.float64), dtype=tt.float64)


def _np(x):
    return x.detach().cpu().numpy()


def _close(actual, expected, rtol=1e-9, atol=1e-12):
    np.testing.assert_allclose(_np(actual), np.asarray(expected, dtype=np.float64), rtol=rtol, atol=atol)


# --------------------------------------------------------------------------- the families vs SciPy
LOC, SCALE = [0.3, -1.2, 2.0], [0.5, 1.7, 3.0]
X = [0.1, -2.5, 4.0]
POS = [0.4, 1.5, 7.0]
A, B = [0.5, 2.0, 9.0], [1.3, 0.7, 4.0]
P01 = [0.15, 0.5, 0.9]
Q = [0.1, 0.5, 0.9]      # icdf's probabilities

# name: (make the distribution, SciPy's frozen distribution, values, {method: False where the
# family does not define it})
FAMILIES = {
    "Normal": (lambda: D.Normal(_t(LOC), _t(SCALE)), stats.norm(LOC, SCALE), X, {}),
    "Laplace": (lambda: D.Laplace(_t(LOC), _t(SCALE)), stats.laplace(LOC, SCALE), X, {}),
    "Cauchy": (lambda: D.Cauchy(_t(LOC), _t(SCALE)), stats.cauchy(LOC, SCALE), X, {"mean": False, "variance": False}),
    "Uniform": (lambda: D.Uniform(_t([-1.0, 0.0, 2.0]), _t([0.5, 3.0, 2.5])),
                stats.uniform([-1.0, 0.0, 2.0], [1.5, 3.0, 0.5]), [0.2, 2.9, 2.1], {}),
    "Exponential": (lambda: D.Exponential(_t(POS)), stats.expon(scale=1 / np.array(POS)), [0.3, 2.0, 0.05], {}),
    "LogNormal": (lambda: D.LogNormal(_t(LOC), _t(SCALE)), stats.lognorm(SCALE, scale=np.exp(LOC)), POS,
                  {"icdf": True}),
    "Gamma": (lambda: D.Gamma(_t(A), _t(B)), stats.gamma(A, scale=1 / np.array(B)), POS, {"icdf": False}),
    "Chi2": (lambda: D.Chi2(_t(POS)), stats.chi2(POS), [0.3, 2.0, 5.5], {"icdf": False}),
    "Beta": (lambda: D.Beta(_t(A), _t(B)), stats.beta(A, B), [0.3, 0.9, 0.6], {"icdf": False, "cdf": False}),
    "StudentT": (lambda: D.StudentT(_t([2.5, 3.0, 30.0]), _t(LOC), _t(SCALE)), stats.t([2.5, 3.0, 30.0], LOC, SCALE), X,
                 {"icdf": False, "cdf": False}),
    "Poisson": (lambda: D.Poisson(_t(POS)), stats.poisson(POS), [0.0, 2.0, 11.0], {"icdf": False, "cdf": False}),
    "Binomial": (lambda: D.Binomial(_t([5.0, 10.0, 1.0]), _t(P01)), stats.binom([5, 10, 1], P01), [2.0, 10.0, 0.0],
                 {"icdf": False, "cdf": False}),
    "Geometric": (lambda: D.Geometric(_t(P01)), stats.geom(P01, loc=-1), [0.0, 3.0, 1.0],
                  {"icdf": False, "cdf": False}),
    "Bernoulli": (lambda: D.Bernoulli(_t(P01)), stats.bernoulli(P01), [1.0, 0.0, 1.0], {"icdf": False, "cdf": False}),
}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_family_matches_scipy(name):
    make, ref, values, skip = FAMILIES[name]
    d = make()
    assert tuple(d.batch_shape) == (3,) and tuple(d.event_shape) == ()
    v = _t(values)
    discrete = hasattr(ref.dist, "pmf")
    _close(d.log_prob(v), ref.logpmf(values) if discrete else ref.logpdf(values), rtol=1e-8)
    if skip.get("cdf", True):
        _close(d.cdf(v), ref.cdf(values), rtol=1e-8)
    else:
        with pytest.raises(NotImplementedError):
            d.cdf(v)
    if skip.get("icdf", True):
        _close(d.icdf(_t(Q)), ref.ppf(Q), rtol=1e-8)
    if name not in ("Poisson", "Binomial"):        # SciPy's discrete entropies are sums; torch's too
        _close(d.entropy(), ref.entropy(), rtol=1e-8, atol=1e-10)
    if skip.get("mean", True):
        _close(d.mean, ref.mean(), rtol=1e-10)
        _close(d.variance, ref.var(), rtol=1e-10)
        _close(d.stddev, np.sqrt(ref.var()), rtol=1e-10)
    else:      # Cauchy: no moments (torch: nan mean, inf variance)
        assert np.isnan(_np(d.mean)).all() and np.isinf(_np(d.variance)).all()


def test_binomial_and_poisson_entropy_by_summing_the_support():
    b = D.Binomial(_t([6.0]), _t([0.3]))
    k = np.arange(7)
    pmf = stats.binom.pmf(k, 6, 0.3)
    _close(b.entropy(), [-(pmf * np.log(pmf)).sum()])
    _close(b.enumerate_support(expand=False).reshape(-1), k)


def test_categorical_and_one_hot():
    p = np.array([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]])
    c = D.Categorical(probs=_t(p))
    assert tuple(c.batch_shape) == (2,) and tuple(c.event_shape) == ()
    _close(c.log_prob(_t([2.0, 0.0])), np.log([0.5, 0.1]))
    _close(c.entropy(), -(p * np.log(p)).sum(-1))
    _close(D.Categorical(logits=_t(np.log(p) + 3.0)).probs, p)     # logits are normalised
    oh = D.OneHotCategorical(probs=_t(p))
    assert tuple(oh.event_shape) == (3,)
    values = np.eye(3)[[2, 1]]
    _close(oh.log_prob(_t(values)), [stats.multinomial(1, p[i]).logpmf(values[i]) for i in range(2)])
    _close(oh.entropy(), -(p * np.log(p)).sum(-1))
    _close(oh.mean, p)
    _close(oh.variance, p * (1 - p))
    support = oh.enumerate_support()
    assert tuple(support.shape) == (3, 2, 3)
    _close(c.enumerate_support(expand=False).reshape(-1), [0, 1, 2])


def test_dirichlet_and_mvn_against_scipy():
    alpha = np.array([0.7, 2.0, 3.5])
    d = D.Dirichlet(_t(alpha))
    x = np.array([0.2, 0.3, 0.5])
    _close(d.log_prob(_t(x)), stats.dirichlet(alpha).logpdf(x), rtol=1e-10)
    _close(d.entropy(), stats.dirichlet(alpha).entropy(), rtol=1e-10)
    _close(d.mean, stats.dirichlet(alpha).mean())
    _close(d.variance, stats.dirichlet(alpha).var())
    loc = np.array([0.5, -1.0, 2.0])
    m = np.array([[2.0, 0.3, -0.4], [0.3, 1.0, 0.2], [-0.4, 0.2, 1.5]])
    pts = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 3.5]])
    for kw in ({"covariance_matrix": _t(m)}, {"precision_matrix": _t(np.linalg.inv(m))},
               {"scale_tril": _t(np.linalg.cholesky(m))}):
        mvn = D.MultivariateNormal(_t(loc), **kw)
        assert tuple(mvn.batch_shape) == () and tuple(mvn.event_shape) == (3,)
        _close(mvn.log_prob(_t(pts)), stats.multivariate_normal(loc, m).logpdf(pts), rtol=1e-9)
        _close(mvn.entropy(), stats.multivariate_normal(loc, m).entropy(), rtol=1e-10)
        _close(mvn.covariance_matrix, m, atol=1e-12)
        _close(mvn.variance, np.diag(m))


def test_independent_and_transformed():
    base = D.Normal(_t([LOC, LOC]), _t([SCALE, SCALE]))
    ind = D.Independent(base, 1)
    assert tuple(ind.batch_shape) == (2,) and tuple(ind.event_shape) == (3,)
    v = np.array([X, LOC])
    _close(ind.log_prob(_t(v)), stats.norm(LOC, SCALE).logpdf(v).sum(-1))
    _close(ind.entropy(), np.full(2, stats.norm(LOC, SCALE).entropy().sum()))
    # exp(a + b N(mu, s)) is LogNormal(a + b mu, b s)
    td = D.TransformedDistribution(D.Normal(_t(LOC), _t(SCALE)), [T.AffineTransform(0.5, 2.0), T.ExpTransform()])
    ref = stats.lognorm(2.0 * np.array(SCALE), scale=np.exp(0.5 + 2.0 * np.array(LOC)))
    _close(td.log_prob(_t(POS)), ref.logpdf(POS), rtol=1e-9)
    _close(td.cdf(_t(POS)), ref.cdf(POS), rtol=1e-9)
    _close(td.icdf(_t(Q)), ref.ppf(Q), rtol=1e-9)
    # a decreasing transform flips the cdf
    neg = D.TransformedDistribution(D.Exponential(_t([2.0])), T.AffineTransform(1.0, -1.0))
    _close(neg.cdf(_t([0.5])), [np.exp(-2.0 * 0.5)])


def test_relaxed_distributions_against_the_concrete_density():
    # Maddison et al. (2017): the binary Concrete density with temperature lam, odds a
    lam, p = 0.7, np.array([0.3, 0.8])
    y = np.array([0.25, 0.9])
    a = p / (1 - p)
    dens = lam * a * y ** (-lam - 1) * (1 - y) ** (-lam - 1) / (a * y ** -lam + (1 - y) ** -lam) ** 2
    rb = D.RelaxedBernoulli(_t(lam), probs=_t(p))
    _close(rb.log_prob(_t(y)), np.log(dens), rtol=1e-9)
    # the Concrete density on the simplex (n categories)
    probs = np.array([0.2, 0.5, 0.3])
    y = np.array([0.1, 0.6, 0.3])
    n = 3
    dens = math.factorial(n - 1) * lam ** (n - 1) * np.prod(probs * y ** (-lam - 1)) / (probs * y ** -lam).sum() ** n
    ro = D.RelaxedOneHotCategorical(_t(lam), probs=_t(probs))
    _close(ro.log_prob(_t(y)), np.log(dens), rtol=1e-9)
    s = ro.rsample((4,))
    assert tuple(s.shape) == (4, 3)
    _close(s.sum(-1), np.ones(4))


# --------------------------------------------------------------------------- transforms
def _numeric_log_det(f, x, h=1e-6):
    return np.log(np.abs((f(x + h) - f(x - h)) / (2 * h)))


SCALAR_TRANSFORMS = {
    "exp": (T.ExpTransform(), np.exp, [-1.0, 0.3, 2.0]),
    "affine": (T.AffineTransform(0.5, -3.0), lambda x: 0.5 - 3.0 * x, [-1.0, 0.3, 2.0]),
    "sigmoid": (T.SigmoidTransform(), special.expit, [-3.0, 0.3, 2.0]),
    "tanh": (T.TanhTransform(), np.tanh, [-1.5, 0.3, 2.0]),
    "power": (T.PowerTransform(_t(2.5)), lambda x: x ** 2.5, [0.2, 1.3, 2.0]),
    "softplus": (T.SoftplusTransform(), lambda x: np.logaddexp(0, x), [-2.0, 0.3, 3.0]),
    "compose": (T.ComposeTransform([T.AffineTransform(1.0, 2.0), T.ExpTransform()]), lambda x: np.exp(1 + 2 * x),
                [-1.0, 0.3, 0.7]),
    "inverse-exp": (T.ExpTransform().inv, np.log, [0.2, 1.3, 4.0]),
}


@pytest.mark.parametrize("name", sorted(SCALAR_TRANSFORMS))
def test_transform_round_trip_and_log_det(name):
    t, f, xs = SCALAR_TRANSFORMS[name]
    x = _t(xs)
    y = t(x)
    _close(y, f(np.array(xs)), rtol=1e-12)
    _close(t.inv(y), xs, rtol=1e-10)
    _close(t.log_abs_det_jacobian(x, y), _numeric_log_det(f, np.array(xs)), rtol=1e-6, atol=1e-7)


def test_abs_softmax_stick_breaking_lower_cholesky():
    x = np.array([-1.5, 0.3, 2.0])
    _close(T.AbsTransform()(_t(x)), np.abs(x))
    _close(T.SoftmaxTransform()(_t(x)), special.softmax(x))
    sb = T.StickBreakingTransform()
    y = sb(_t(x))
    assert tuple(y.shape) == (4,)
    _close(y.sum(), 1.0)
    _close(sb.inv(y), x, rtol=1e-10)
    # log |det J| of the stick-breaking map onto the first K coordinates (the last is 1 - sum)
    def head(v):
        return _np(sb(_t(v)))[:3]
    h = 1e-6
    jac = np.stack([(head(x + h * e) - head(x - h * e)) / (2 * h) for e in np.eye(3)], axis=1)
    _close(sb.log_abs_det_jacobian(_t(x), y), np.log(abs(np.linalg.det(jac))), rtol=1e-6)
    lc = T.LowerCholeskyTransform()
    m = np.array([[0.5, 9.0], [-1.0, 0.2]])
    _close(lc(_t(m)), [[np.exp(0.5), 0.0], [-1.0, np.exp(0.2)]])
    assert T.identity_transform(_t(x)) is not None
    assert constraints.simplex.check(y)


def test_biject_to_and_transform_to():
    for c, v in ((constraints.positive, [0.5, 3.0]), (constraints.unit_interval, [0.2, 0.9]),
                 (constraints.interval(-1.0, 2.0), [-0.5, 1.5]), (constraints.simplex, [0.2, 0.3, 0.5]),
                 (constraints.real, [-3.0, 4.0])):
        t = D.biject_to(c)
        y = _t(v)
        x = t.inv(y)
        _close(t(x), v, rtol=1e-10)
        assert bool(c.check(t(x)).all())
        assert D.transform_to(c) is not None


# --------------------------------------------------------------------------- kl_divergence
def _kl_quad(p, q, lo, hi):
    """KL(p || q) = int p log(p / q), by quadrature over p's support (SciPy frozen distributions)."""
    with np.errstate(over="ignore"):      # (SciPy's Gumbel density overflows its exp far out: 0 there)
        return integrate.quad(lambda x: p.pdf(x) * (p.logpdf(x) - q.logpdf(x)) if p.pdf(x) > 0 else 0.0,
                              lo, hi, limit=200)[0]


CONTINUOUS_KL = {
    "normal-normal": (lambda: (D.Normal(_t(0.3), _t(1.2)), D.Normal(_t(-1.0), _t(0.7))),
                      stats.norm(0.3, 1.2), stats.norm(-1.0, 0.7), -np.inf, np.inf),
    "gamma-gamma": (lambda: (D.Gamma(_t(2.5), _t(1.5)), D.Gamma(_t(1.2), _t(0.5))),
                    stats.gamma(2.5, scale=1 / 1.5), stats.gamma(1.2, scale=2.0), 0, np.inf),
    "beta-beta": (lambda: (D.Beta(_t(2.0), _t(3.0)), D.Beta(_t(1.5), _t(0.8))),
                  stats.beta(2.0, 3.0), stats.beta(1.5, 0.8), 0, 1),
    "laplace-normal": (lambda: (D.Laplace(_t(0.5), _t(0.8)), D.Normal(_t(0.0), _t(1.5))),
                       stats.laplace(0.5, 0.8), stats.norm(0.0, 1.5), -np.inf, np.inf),
    "exponential-gamma": (lambda: (D.Exponential(_t(1.5)), D.Gamma(_t(2.0), _t(0.7))),
                          stats.expon(scale=1 / 1.5), stats.gamma(2.0, scale=1 / 0.7), 0, np.inf),
    "uniform-normal": (lambda: (D.Uniform(_t(-0.5), _t(1.5)), D.Normal(_t(0.2), _t(0.9))),
                       stats.uniform(-0.5, 2.0), stats.norm(0.2, 0.9), -0.5, 1.5),
    "cauchy-cauchy": (lambda: (D.Cauchy(_t(0.5), _t(0.8)), D.Cauchy(_t(-1.0), _t(2.0))),
                      stats.cauchy(0.5, 0.8), stats.cauchy(-1.0, 2.0), -np.inf, np.inf),
    "normal-laplace": (lambda: (D.Normal(_t(0.2), _t(0.6)), D.Laplace(_t(-0.4), _t(1.1))),
                       stats.norm(0.2, 0.6), stats.laplace(-0.4, 1.1), -np.inf, np.inf),
    "lognormal-lognormal": (lambda: (D.LogNormal(_t(0.2), _t(0.6)), D.LogNormal(_t(-0.4), _t(1.1))),
                            stats.lognorm(0.6, scale=np.exp(0.2)), stats.lognorm(1.1, scale=np.exp(-0.4)), 0, np.inf),
}


@pytest.mark.parametrize("name", sorted(CONTINUOUS_KL))
def test_kl_against_numerical_integration(name):
    make, p_ref, q_ref, lo, hi = CONTINUOUS_KL[name]
    p, q = make()
    _close(D.kl_divergence(p, q), _kl_quad(p_ref, q_ref, lo, hi), rtol=1e-6, atol=1e-8)


def test_discrete_kl_by_summing_the_support():
    k = np.arange(0, 200)
    def kl_sum(pp, qq):
        return (pp * (np.log(pp) - np.log(qq))).sum()
    def kl_sum_log(lp, lq):      # from log-pmfs: the far tails underflow as pmfs
        return (np.exp(lp) * (lp - lq)).sum()
    _close(D.kl_divergence(D.Poisson(_t(3.0)), D.Poisson(_t(1.5))),
           kl_sum_log(stats.poisson.logpmf(k, 3.0), stats.poisson.logpmf(k, 1.5)), rtol=1e-9)
    _close(D.kl_divergence(D.Geometric(_t(0.3)), D.Geometric(_t(0.6))),
           kl_sum_log(stats.geom.logpmf(k + 1, 0.3), stats.geom.logpmf(k + 1, 0.6)), rtol=1e-9)
    _close(D.kl_divergence(D.Binomial(8, _t(0.3)), D.Binomial(8, _t(0.55))),
           kl_sum_log(stats.binom.logpmf(k[:9], 8, 0.3), stats.binom.logpmf(k[:9], 8, 0.55)), rtol=1e-9)
    _close(D.kl_divergence(D.Bernoulli(_t(0.3)), D.Bernoulli(_t(0.8))),
           kl_sum(np.array([0.7, 0.3]), np.array([0.2, 0.8])))
    p, q = np.array([0.2, 0.3, 0.5]), np.array([0.6, 0.1, 0.3])
    _close(D.kl_divergence(D.Categorical(_t(p)), D.Categorical(_t(q))), kl_sum(p, q))
    _close(D.kl_divergence(D.OneHotCategorical(_t(p)), D.OneHotCategorical(_t(q))), kl_sum(p, q))
    # no support overlap: infinite
    assert np.isinf(_np(D.kl_divergence(D.Poisson(_t(1.0)), D.Bernoulli(_t(0.5)))))


def test_kl_closed_forms_multivariate():
    # MVN: 1/2 (tr(S1^-1 S0) + (m1 - m0)^T S1^-1 (m1 - m0) - k + ln(det S1 / det S0))
    m0, m1 = np.array([0.5, -1.0]), np.array([0.0, 0.3])
    s0, s1 = np.array([[1.5, 0.3], [0.3, 0.8]]), np.array([[0.9, -0.2], [-0.2, 1.7]])
    i1 = np.linalg.inv(s1)
    want = 0.5 * (np.trace(i1 @ s0) + (m1 - m0) @ i1 @ (m1 - m0) - 2 + np.log(np.linalg.det(s1) / np.linalg.det(s0)))
    _close(D.kl_divergence(D.MultivariateNormal(_t(m0), _t(s0)), D.MultivariateNormal(_t(m1), _t(s1))), want, rtol=1e-10)
    # Dirichlet: ln B(b) - ln B(a) + sum (a_i - b_i)(psi(a_i) - psi(a_0))
    a, b = np.array([0.7, 2.0, 3.5]), np.array([1.5, 1.0, 0.5])
    ln_b = lambda v: special.gammaln(v).sum() - special.gammaln(v.sum())
    want = ln_b(b) - ln_b(a) + ((a - b) * (special.digamma(a) - special.digamma(a.sum()))).sum()
    _close(D.kl_divergence(D.Dirichlet(_t(a)), D.Dirichlet(_t(b))), want, rtol=1e-10)
    # Independent: the sum over the reinterpreted dims
    p = D.Independent(D.Normal(_t([0.0, 1.0]), _t([1.0, 2.0])), 1)
    q = D.Independent(D.Normal(_t([0.5, 0.0]), _t([1.5, 1.0])), 1)
    want = sum(_kl_quad(stats.norm(a_, b_), stats.norm(c_, d_), -np.inf, np.inf)
               for a_, b_, c_, d_ in ((0.0, 1.0, 0.5, 1.5), (1.0, 2.0, 0.0, 1.0)))
    _close(D.kl_divergence(p, q), want, rtol=1e-7)
    # disjoint supports are infinite
    assert np.isinf(_np(D.kl_divergence(D.Normal(_t(0.0), _t(1.0)), D.Uniform(_t(0.0), _t(1.0)))))


def test_register_kl_dispatches_on_the_most_specific_pair():
    class N1(D.Normal):
        pass

    class N2(N1):
        pass

    @D.register_kl(N1, D.Normal)
    def _kl_n1(p, q):
        return tt.tensor(1.0)

    @D.register_kl(N2, N1)
    def _kl_n2(p, q):
        return tt.tensor(2.0)

    n, n1, n2 = D.Normal(0.0, 1.0), N1(0.0, 1.0), N2(0.0, 1.0)
    assert float(D.kl_divergence(n1, n)) == 1.0
    assert float(D.kl_divergence(n2, n1)) == 2.0
    assert float(D.kl_divergence(n2, n)) == 1.0          # (N1, Normal) is the only match
    assert float(D.kl_divergence(n, n)) == 0.0           # the library's Normal-Normal

    class N3(D.Normal):
        pass

    @D.register_kl(N3, D.Normal)
    def _kl_a(p, q):
        return tt.tensor(3.0)

    @D.register_kl(D.Normal, N3)
    def _kl_b(p, q):
        return tt.tensor(4.0)

    with pytest.warns(RuntimeWarning, match="Ambiguous kl_divergence"):
        D.kl_divergence(N3(0.0, 1.0), N3(0.0, 1.0))
    with pytest.raises(NotImplementedError, match=r"^No KL\(p \|\| q\) is implemented for p type Normal and q type "
                                                  r"Categorical$"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Categorical(tt.tensor([0.5, 0.5])))


# --------------------------------------------------------------------------- validation, shapes, reprs
def test_constraint_errors_word_for_word():
    with pytest.raises(ValueError) as e:
        D.Normal(tt.tensor([0.0, 1.0]), tt.tensor([1.0, -2.0]))
    assert str(e.value) == (
        "Expected parameter scale (Tensor of shape (2,)) of distribution Normal(loc: tritensor.Size([2]), "
        "scale: tritensor.Size([2])) to satisfy the constraint GreaterThan(lower_bound=0.0), but found invalid "
        "values:\ntensor([ 1., -2.])")
    with pytest.raises(ValueError) as e:
        D.Bernoulli(probs=tt.tensor([0.2])).log_prob(tt.tensor([0.5]))
    assert str(e.value) == (
        "Expected value argument (Tensor of shape (1,)) to be within the support (Boolean()) of the distribution "
        "Bernoulli(probs: tensor([0.2000])), but found invalid values:\ntensor([0.5000])")
    with pytest.raises(ValueError) as e:
        D.Uniform(0.0, 1.0).cdf(tt.tensor(2.0))
    assert str(e.value) == (
        "Expected value argument (Tensor of shape ()) to be within the support (Interval(lower_bound=0.0, "
        "upper_bound=1.0)) of the distribution Uniform(low: 0.0, high: 1.0), but found invalid values:\n2.0")
    with pytest.raises(ValueError, match=r"^Value is not broadcastable with batch_shape\+event_shape: "
                                         r"tritensor.Size\(\[3\]\) vs tritensor.Size\(\[2\]\).$"):
        D.Normal(tt.tensor([0.0, 1.0]), tt.tensor([1.0, 2.0])).log_prob(tt.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match=r"^Either `probs` or `logits` must be specified, but not both.$"):
        D.Bernoulli(probs=tt.tensor([0.2]), logits=tt.tensor([0.1]))
    with pytest.raises(ValueError, match="^Exactly one of covariance_matrix or precision_matrix or scale_tril may be "
                                         "specified.$"):
        D.MultivariateNormal(tt.zeros(2))
    with pytest.raises(ValueError, match="constraint PositiveDefinite()"):
        D.MultivariateNormal(tt.zeros(2), tt.tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="^`probs` parameter must be at least one-dimensional.$"):
        D.Categorical(probs=tt.tensor(0.5))
    with pytest.raises(ValueError, match=r"^Expected reinterpreted_batch_ndims <= len\(base_distribution.batch_shape\), "
                                         r"actual 2 vs 1$"):
        D.Independent(D.Normal(tt.zeros(2), tt.ones(2)), 2)
    with pytest.raises(ValueError, match="^Input arguments must all be instances of Number, tritensor.Tensor"):
        D.Normal(tt.zeros(1), "a")
    with pytest.raises(ValueError, match="constraint IntegerGreaterThan"):
        D.Binomial(tt.tensor([2.5]), tt.tensor([0.3]))


def test_validate_args_switches():
    # per instance: no check, the density computes as it may (log of a negative scale: NaN)
    d = D.Normal(tt.tensor(0.0), tt.tensor(-1.0), validate_args=False)
    assert np.isnan(float(d.log_prob(tt.tensor(0.0))))
    old = D.Distribution._validate_args
    try:
        D.Distribution.set_default_validate_args(False)
        D.Normal(tt.tensor(0.0), tt.tensor(-1.0))        # no error
        D.Distribution.set_default_validate_args(True)
        with pytest.raises(ValueError):
            D.Normal(tt.tensor(0.0), tt.tensor(-1.0))
        with pytest.raises(ValueError):
            D.Distribution.set_default_validate_args("yes")
    finally:
        D.Distribution.set_default_validate_args(old)


def test_shapes_expand_and_sample():
    d = D.Normal(tt.zeros(3), tt.ones(3))
    e = d.expand((4, 3))
    assert tuple(e.batch_shape) == (4, 3) and tuple(e.sample((2,)).shape) == (2, 4, 3)
    assert type(e) is D.Normal and e._validate_args == d._validate_args
    with pytest.raises(RuntimeError, match="must match the existing size"):
        d.expand((2,))
    mvn = D.MultivariateNormal(tt.zeros(2, 3), tt.eye(3))
    assert tuple(mvn.batch_shape) == (2,) and tuple(mvn.event_shape) == (3,)
    assert tuple(mvn.expand((5, 2)).rsample((7,)).shape) == (7, 5, 2, 3)
    ind = D.Independent(D.Normal(tt.zeros(2, 3), tt.ones(2, 3)), 1).expand((4, 2))
    assert tuple(ind.batch_shape) == (4, 2) and tuple(ind.event_shape) == (3,)
    for dist in (D.Bernoulli(tt.tensor([0.3, 0.6])), D.Categorical(tt.ones(2, 4)), D.Gamma(tt.ones(2), tt.ones(2)),
                 D.Dirichlet(tt.ones(2, 3)), D.Poisson(tt.ones(2)), D.Beta(tt.ones(2), tt.ones(2)),
                 D.Binomial(3, tt.tensor([0.2, 0.5])), D.StudentT(tt.ones(2)), D.Geometric(tt.tensor([0.3, 0.6]))):
        s = dist.sample((3,))
        assert tuple(s.shape) == (3,) + tuple(dist.batch_shape) + tuple(dist.event_shape), dist
        assert tuple(dist.expand((5,) + tuple(dist.batch_shape)).sample().shape) == (
            (5,) + tuple(dist.batch_shape) + tuple(dist.event_shape))
    assert D.Normal(0.0, 1.0).has_rsample and not D.Bernoulli(0.5).has_rsample
    with pytest.raises(NotImplementedError):
        D.Categorical(tt.ones(3)).rsample()
    with pytest.warns(FutureWarning, match="sample_n"):
        D.Normal(0.0, 1.0).sample_n(2)


def test_reprs():
    assert repr(D.Normal(tt.zeros(2), tt.ones(2))) == "Normal(loc: tritensor.Size([2]), scale: tritensor.Size([2]))"
    assert repr(D.Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"
    assert repr(D.Categorical(tt.tensor([0.3, 0.7]))) == "Categorical(probs: tritensor.Size([2]))"
    assert repr(D.Independent(D.Normal(tt.zeros(3), tt.ones(3)), 1)) == \
        "Independent(Normal(loc: tritensor.Size([3]), scale: tritensor.Size([3])), 1)"
    assert repr(D.MultivariateNormal(tt.zeros(2), tt.eye(2))) == \
        "MultivariateNormal(loc: tritensor.Size([2]), covariance_matrix: tritensor.Size([2, 2]))"
    assert repr(T.ExpTransform().inv) == "_InverseTransform(ExpTransform())"
    assert repr(constraints.interval(0, 1)) == "Interval(lower_bound=0, upper_bound=1)"


# --------------------------------------------------------------------------- reparameterised gradients
def _seeded(fn):
    def run(*args):
        tt.manual_seed(1234)
        return fn(*args)
    return run


@pytest.mark.parametrize("name,fn,args", [
    ("normal", lambda m, s: D.Normal(m, s).rsample((3,)), ([0.3, -1.0], [0.5, 2.0])),
    ("laplace", lambda m, s: D.Laplace(m, s).rsample((3,)), ([0.3, -1.0], [0.5, 2.0])),
    ("cauchy", lambda m, s: D.Cauchy(m, s).rsample((2,)), ([0.3, -1.0], [0.5, 2.0])),
    ("uniform", lambda lo, hi: D.Uniform(lo, hi).rsample((3,)), ([0.3, -1.0], [0.9, 2.0])),
    ("exponential", lambda r: D.Exponential(r).rsample((3,)), ([0.3, 2.0],)),
    ("lognormal", lambda m, s: D.LogNormal(m, s).rsample((3,)), ([0.3, -1.0], [0.5, 0.7])),
    ("mvn", lambda m, l: D.MultivariateNormal(m, scale_tril=l.tril()).rsample((2,)), ([0.3, -1.0],
                                                                                        [[1.0, 0.0], [0.4, 0.8]])),
    ("relaxed-bernoulli", lambda p: D.RelaxedBernoulli(tt.tensor(0.5, dtype=tt.float64), probs=p).rsample((3,)),
     ([0.3, 0.8],)),
])
def test_rsample_gradcheck(name, fn, args):
    inputs = tuple(tt.tensor(a, dtype=tt.float64, requires_grad=True) for a in args)
    assert tt.autograd.gradcheck(_seeded(fn), inputs)


def test_log_prob_and_entropy_gradients():
    m = tt.tensor([0.3, -1.0], dtype=tt.float64, requires_grad=True)
    s = tt.tensor([0.5, 2.0], dtype=tt.float64, requires_grad=True)
    assert tt.autograd.gradcheck(lambda m, s: D.Normal(m, s).log_prob(tt.tensor([0.1, 0.2], dtype=tt.float64)), (m, s))
    a = tt.tensor([0.7, 2.5], dtype=tt.float64, requires_grad=True)
    b = tt.tensor([1.5, 0.5], dtype=tt.float64, requires_grad=True)
    assert tt.autograd.gradcheck(lambda a, b: D.Beta(a, b).entropy() + D.kl_divergence(D.Gamma(a, b), D.Gamma(b, a)),
                                 (a, b))


def test_torch_parity_when_available():
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tp = torch.distributions.StudentT(torch.tensor([3.0]), torch.tensor([0.5]), torch.tensor([2.0]))
    up = D.StudentT(tt.tensor([3.0]), tt.tensor([0.5]), tt.tensor([2.0]))
    np.testing.assert_allclose(_np(up.log_prob(tt.tensor([1.0]))), tp.log_prob(torch.tensor([1.0])).numpy(), rtol=1e-6)


def test_families_on_cuda():
    """The same tritensor ops on the cuda device (the emulated kernels): densities, entropies and
    a KL against SciPy, samples on the device."""
    if not tt.cuda.is_available():
        pytest.skip("no cuda device")
    def c(x):
        return tt.tensor(np.asarray(x, dtype=np.float64), dtype=tt.float64, device="cuda")
    _close(D.Normal(c(LOC), c(SCALE)).log_prob(c(X)), stats.norm(LOC, SCALE).logpdf(X), rtol=1e-9)
    _close(D.Gamma(c(A), c(B)).log_prob(c(POS)), stats.gamma(A, scale=1 / np.array(B)).logpdf(POS), rtol=1e-9)
    alpha = np.array([0.7, 2.0, 3.5])
    d = D.Dirichlet(c(alpha))
    _close(d.log_prob(c([0.2, 0.3, 0.5])), stats.dirichlet(alpha).logpdf([0.2, 0.3, 0.5]), rtol=1e-9)
    _close(d.entropy(), stats.dirichlet(alpha).entropy(), rtol=1e-9)
    m = np.array([[2.0, 0.3], [0.3, 1.0]])
    mvn = D.MultivariateNormal(c([0.5, -1.0]), c(m))
    _close(mvn.log_prob(c([1.0, 0.0])), stats.multivariate_normal([0.5, -1.0], m).logpdf([1.0, 0.0]), rtol=1e-9)
    assert mvn.rsample((2,)).device.type == "cuda"
    p, q = D.Beta(c(2.0), c(3.0)), D.Beta(c(1.5), c(0.8))
    _close(D.kl_divergence(p, q), _kl_quad(stats.beta(2.0, 3.0), stats.beta(1.5, 0.8), 0, 1), rtol=1e-6)
    s = D.Categorical(c([[0.2, 0.3, 0.5]])).sample((4,))
    assert s.device.type == "cuda" and tuple(s.shape) == (4, 1)


def test_structural_transforms():
    x = np.array([-1.0, 0.3, 2.0, 0.5, -0.2])
    cat = T.CatTransform([T.ExpTransform(), T.AffineTransform(0.0, 2.0)], dim=0, lengths=[2, 3])
    _close(cat(_t(x)), np.concatenate([np.exp(x[:2]), 2 * x[2:]]))
    _close(cat.inv(cat(_t(x))), x, rtol=1e-12)
    _close(cat.log_abs_det_jacobian(_t(x), cat(_t(x))), np.concatenate([x[:2], np.full(3, np.log(2.0))]))
    m = np.array([[-1.0, 0.3, 2.0], [0.5, -0.2, 1.1]])
    stack = T.StackTransform([T.ExpTransform(), T.SigmoidTransform()], dim=0)
    _close(stack(_t(m)), np.stack([np.exp(m[0]), special.expit(m[1])]))
    _close(stack.inv(stack(_t(m))), m, rtol=1e-10)
    ind = T.IndependentTransform(T.ExpTransform(), 1)
    _close(ind.log_abs_det_jacobian(_t(m), ind(_t(m))), m.sum(-1))
    rs = T.ReshapeTransform((6,), (2, 3))
    assert tuple(rs(_t(m.reshape(6))).shape) == (2, 3) and tuple(rs.forward_shape((4, 6))) == (4, 2, 3)
    _close(rs.inv(_t(m)), m.reshape(6))
    cdf = T.CumulativeDistributionTransform(D.Normal(_t(0.0), _t(1.0)))
    _close(cdf(_t(x)), special.ndtr(x))
    _close(cdf.log_abs_det_jacobian(_t(x), cdf(_t(x))), stats.norm.logpdf(x))
    _close(cdf.inv(cdf(_t(x))), x, rtol=1e-9)
    a = np.array([[0.3, 9.0, 9.0], [-1.0, 0.2, 9.0], [0.5, 0.4, -0.7]])
    pd = T.PositiveDefiniteTransform()
    low = np.tril(a, -1) + np.diag(np.exp(np.diag(a)))
    _close(pd(_t(a)), low @ low.T)
    _close(pd.inv(pd(_t(a))), np.tril(a), rtol=1e-10, atol=1e-12)
    cc = T.CorrCholeskyTransform()
    v = np.array([0.3, -1.2, 0.8, 2.0, -0.4, 0.1])
    lc = _np(cc(_t(v)))
    assert lc.shape == (4, 4)
    np.testing.assert_allclose(np.triu(lc, 1), 0.0)
    np.testing.assert_allclose((lc ** 2).sum(-1), 1.0, rtol=1e-12)      # unit rows: a correlation's factor
    assert np.all(np.diag(lc) > 0)
    _close(cc.inv(_t(lc)), v, rtol=1e-9)


# --------------------------------------------------------------------------- torch's further families
ALPHA = [3.0, 4.0, 5.0]
MORE_FAMILIES = {
    "Gumbel": (lambda: D.Gumbel(_t(LOC), _t(SCALE)), stats.gumbel_r(LOC, SCALE), X, {}),
    "HalfNormal": (lambda: D.HalfNormal(_t(SCALE)), stats.halfnorm(scale=SCALE), POS, {}),
    "HalfCauchy": (lambda: D.HalfCauchy(_t(SCALE)), stats.halfcauchy(scale=SCALE), POS, {"mean": False}),
    "Pareto": (lambda: D.Pareto(_t(POS), _t(ALPHA)), stats.pareto(ALPHA, scale=POS), [0.5, 2.0, 9.0],
               {"icdf": True}),
    "Weibull": (lambda: D.Weibull(_t(SCALE), _t(A)), stats.weibull_min(A, scale=SCALE), POS, {}),
    "FisherSnedecor": (lambda: D.FisherSnedecor(_t(A), _t([5.0, 7.0, 9.0])), stats.f(A, [5.0, 7.0, 9.0]), POS,
                       {"cdf": False, "icdf": False, "entropy": False}),
    "InverseGamma": (lambda: D.InverseGamma(_t(ALPHA), _t(B)), stats.invgamma(ALPHA, scale=B), POS, {"icdf": False}),
    "NegativeBinomial": (lambda: D.NegativeBinomial(_t(A), _t(P01)), stats.nbinom(A, 1 - np.array(P01)),
                         [0.0, 3.0, 20.0], {"cdf": False, "icdf": False, "entropy": False}),
    "GeneralizedPareto": (lambda: D.GeneralizedPareto(_t(LOC), _t(SCALE), _t([0.2, -0.1, 0.0])),
                          stats.genpareto([0.2, -0.1, 0.0], LOC, SCALE), [0.4, -1.0, 2.5], {}),
    # torch's log I0 is a polynomial approximation (about 1e-8)
    "VonMises": (lambda: D.VonMises(_t(LOC), _t(A)), stats.vonmises(A, LOC), [0.1, -2.5, 2.4],
                 {"cdf": False, "icdf": False, "entropy": False, "mean": False, "rtol": 1e-7}),
}


@pytest.mark.parametrize("name", sorted(MORE_FAMILIES))
def test_further_family_matches_scipy(name):
    make, ref, values, skip = MORE_FAMILIES[name]
    old = tt.get_default_dtype()
    tt.set_default_dtype(tt.float64)    # (GeneralizedPareto compares with a default-dtype 0, as torch's)
    try:
        d = make()
        v = _t(values)
        discrete = hasattr(ref.dist, "pmf")
        _close(d.log_prob(v), ref.logpmf(values) if discrete else ref.logpdf(values), rtol=skip.get("rtol", 1e-8))
        _check_further(d, ref, v, skip)
    finally:
        tt.set_default_dtype(old)


def _check_further(d, ref, v, skip):
    values = _np(v)
    if skip.get("cdf", True):
        _close(d.cdf(v), ref.cdf(values), rtol=1e-8)
    if skip.get("icdf", True):
        _close(d.icdf(_t(Q)), ref.ppf(Q), rtol=1e-8)
    if skip.get("entropy", True):
        _close(d.entropy(), ref.entropy(), rtol=1e-8, atol=1e-10)
    if skip.get("mean", True):
        _close(d.mean, ref.mean(), rtol=1e-9)
        _close(d.variance, ref.var(), rtol=1e-9)
    s = d.sample((2,))
    assert tuple(s.shape) == (2, 3)


def test_further_families_by_their_densities():
    # Kumaraswamy: pdf a b x^(a-1) (1 - x^a)^(b-1), mean b B(1 + 1/a, b)
    a, b, x = np.array(A), np.array(B), np.array([0.3, 0.9, 0.6])
    k = D.Kumaraswamy(_t(a), _t(b))
    _close(k.log_prob(_t(x)), np.log(a * b * x ** (a - 1) * (1 - x ** a) ** (b - 1)), rtol=1e-9)
    _close(k.mean, b * special.beta(1 + 1 / a, b), rtol=1e-9)
    # ContinuousBernoulli: C(l) l^x (1 - l)^(1 - x), C = 2 atanh(1 - 2l) / (1 - 2l) (2 at l = 1/2)
    lam = np.array([0.2, 0.5, 0.8])
    c = np.where(lam == 0.5, 2.0, 2 * np.arctanh(1 - 2 * lam) / np.where(lam == 0.5, 1.0, 1 - 2 * lam))
    _close(D.ContinuousBernoulli(_t(lam)).log_prob(_t(x)), np.log(c) + x * np.log(lam) + (1 - x) * np.log1p(-lam),
           rtol=1e-6)
    # Multinomial, Wishart, low-rank MVN, a Gaussian mixture
    p = np.array([0.2, 0.3, 0.5])
    _close(D.Multinomial(5, _t(p)).log_prob(_t([1.0, 1.0, 3.0])), stats.multinomial(5, p).logpmf([1, 1, 3]))
    s = np.array([[2.0, 0.5], [0.5, 1.0]])
    w = np.array([[1.0, 0.2], [0.2, 1.5]])
    wd = D.Wishart(_t(4.0), _t(s))
    _close(wd.log_prob(_t(w)), stats.wishart(4.0, s).logpdf(w), rtol=1e-9)
    _close(wd.entropy(), stats.wishart(4.0, s).entropy(), rtol=1e-9)
    _close(wd.mean, 4.0 * s)
    loc, factor, diag = np.array([0.0, 1.0]), np.array([[1.0], [0.5]]), np.array([1.0, 2.0])
    cov = factor @ factor.T + np.diag(diag)
    lr = D.LowRankMultivariateNormal(_t(loc), _t(factor), _t(diag))
    _close(lr.log_prob(_t([0.3, -1.0])), stats.multivariate_normal(loc, cov).logpdf([0.3, -1.0]), rtol=1e-10)
    _close(lr.entropy(), stats.multivariate_normal(loc, cov).entropy(), rtol=1e-10)
    _close(lr.covariance_matrix, cov)
    mix = D.MixtureSameFamily(D.Categorical(_t([0.3, 0.7])), D.Normal(_t([0.0, 1.0]), _t([1.0, 2.0])))
    _close(mix.log_prob(_t([0.3, -1.0])),
           np.log(0.3 * stats.norm(0, 1).pdf([0.3, -1.0]) + 0.7 * stats.norm(1, 2).pdf([0.3, -1.0])), rtol=1e-10)
    _close(mix.mean, 0.7)
    _close(mix.variance, 0.3 * 1 + 0.7 * 4 + 0.3 * 0.7 ** 2 + 0.7 * 0.3 ** 2)
    # LogisticNormal: a Normal through the stick-breaking map (offset logits); its density by the
    # change of variables, the inverse map's Jacobian (in the first K - 1 coordinates) by differences
    ln = D.LogisticNormal(_t([0.0, 1.0]), _t([1.0, 2.0]))

    def inv(head):
        yy = np.append(head, 1 - head.sum())
        rest = 1 - np.concatenate([[0.0], np.cumsum(yy[:-1])])[:-1]
        frac = yy[:-1] / rest
        return np.log(frac / (1 - frac)) + np.log(np.arange(len(head), 0, -1))
    head, h = np.array([0.2, 0.3]), 1e-6
    jac = np.stack([(inv(head + h * e) - inv(head - h * e)) / (2 * h) for e in np.eye(2)], axis=1)
    want = stats.norm([0.0, 1.0], [1.0, 2.0]).logpdf(inv(head)).sum() + np.log(abs(np.linalg.det(jac)))
    _close(ln.log_prob(_t([0.2, 0.3, 0.5])), want, rtol=1e-7)
    # LKJCholesky: for 2 x 2 factors the density of the correlation r, (r + 1) / 2 ~ Beta(eta, eta)
    lkj = D.LKJCholesky(2, _t([0.5, 2.0]))
    lf = np.array([[1.0, 0.0], [0.6, 0.8]])
    _close(lkj.log_prob(_t(lf)), np.log(0.5 * stats.beta.pdf(0.8, [0.5, 2.0], [0.5, 2.0])), rtol=1e-9)
    # ... and 3 x 3: torch 2.13's value
    l3 = np.array([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.6, 0.8]])
    _close(D.LKJCholesky(3, _t(1.5)).log_prob(_t(l3)), -1.6963775041356457, rtol=1e-12)
    sample = _np(D.LKJCholesky(4, _t(1.0)).sample((3,)))
    np.testing.assert_allclose((sample ** 2).sum(-1), 1.0, rtol=1e-9)
    np.testing.assert_array_equal(np.triu(sample, 1), 0.0)


def test_further_kl_pairs():
    cases = [
        ("gumbel-gumbel", D.Gumbel(_t(0.3), _t(1.2)), D.Gumbel(_t(-1.0), _t(0.7)), stats.gumbel_r(0.3, 1.2),
         stats.gumbel_r(-1.0, 0.7), -np.inf, np.inf),
        ("halfnormal", D.HalfNormal(_t(1.2)), D.HalfNormal(_t(0.7)), stats.halfnorm(scale=1.2),
         stats.halfnorm(scale=0.7), 0, np.inf),
        ("pareto-pareto", D.Pareto(_t(1.0), _t(3.0)), D.Pareto(_t(0.5), _t(2.0)), stats.pareto(3.0, scale=1.0),
         stats.pareto(2.0, scale=0.5), 1.0, np.inf),
        ("normal-gumbel", D.Normal(_t(0.3), _t(1.2)), D.Gumbel(_t(-1.0), _t(0.7)), stats.norm(0.3, 1.2),
         stats.gumbel_r(-1.0, 0.7), -np.inf, np.inf),
    ]
    for name, p, q, pr, qr, lo, hi in cases:
        _close(D.kl_divergence(p, q), _kl_quad(pr, qr, lo, hi), rtol=1e-6, atol=1e-8)
    loc, factor, diag = np.array([0.0, 1.0]), np.array([[1.0], [0.5]]), np.array([1.0, 2.0])
    s0 = factor @ factor.T + np.diag(diag)
    m1, s1 = np.array([0.5, -0.2]), np.array([[1.5, 0.3], [0.3, 0.8]])
    i1 = np.linalg.inv(s1)
    want = 0.5 * (np.trace(i1 @ s0) + (m1 - loc) @ i1 @ (m1 - loc) - 2 + np.log(np.linalg.det(s1) / np.linalg.det(s0)))
    _close(D.kl_divergence(D.LowRankMultivariateNormal(_t(loc), _t(factor), _t(diag)),
                           D.MultivariateNormal(_t(m1), _t(s1))), want, rtol=1e-10)
