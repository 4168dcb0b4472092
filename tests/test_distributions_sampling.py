"""Sampling for tt.distributions: the samplers (tt._standard_gamma, _sample_dirichlet, poisson,
binomial) and every family's sample moments within statistical bounds (fixed seeds: deterministic,
so they cannot flake; the bounds are 6 standard errors), reproducibility, torch's edge values and
errors (recorded from torch 2.13), and the implicit reparameterisation gradients against finite
differences of the CDF inversion (SciPy's regularised incomplete gamma and beta functions).
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

import tritensor as tt
import tritensor.distributions as D

N = 20000


def _np(x):
    return x.detach().cpu().numpy()


def _check_moments(samples, mean, var, n=N):
    """The sample mean within 6 standard errors of ``mean``, the sample variance within 6 of its
    own (using the 4th moment estimated from the samples)."""
    s = np.asarray(samples, dtype=np.float64)
    mean, var = np.asarray(mean, dtype=np.float64), np.asarray(var, dtype=np.float64)
    m = s.mean(0)
    assert np.all(np.abs(m - mean) <= 6 * np.sqrt(var / n)), (m, mean)
    v = s.var(0)
    m4 = ((s - m) ** 4).mean(0)
    assert np.all(np.abs(v - var) <= 6 * np.sqrt(np.maximum(m4 - v ** 2, 1e-30) / n) + 1e-12), (v, var)


MOMENTS = {
    "Normal": lambda: D.Normal(tt.tensor([0.3, -2.0]), tt.tensor([0.5, 3.0])),
    "Laplace": lambda: D.Laplace(tt.tensor([0.3, -2.0]), tt.tensor([0.5, 3.0])),
    "Uniform": lambda: D.Uniform(tt.tensor([0.3, -2.0]), tt.tensor([0.5, 3.0])),
    "Exponential": lambda: D.Exponential(tt.tensor([0.5, 3.0])),
    "LogNormal": lambda: D.LogNormal(tt.tensor([0.3, -2.0]), tt.tensor([0.5, 0.3])),
    "Gamma": lambda: D.Gamma(tt.tensor([0.3, 4.0]), tt.tensor([0.5, 3.0])),
    "Chi2": lambda: D.Chi2(tt.tensor([0.7, 5.0])),
    "Beta": lambda: D.Beta(tt.tensor([0.3, 4.0]), tt.tensor([0.5, 3.0])),
    "StudentT": lambda: D.StudentT(tt.tensor([5.0, 9.0]), tt.tensor([0.3, -1.0]), tt.tensor([0.5, 2.0])),
    "Poisson": lambda: D.Poisson(tt.tensor([0.5, 30.0])),
    "Binomial": lambda: D.Binomial(tt.tensor([5.0, 100.0]), tt.tensor([0.3, 0.9])),
    "Geometric": lambda: D.Geometric(tt.tensor([0.3, 0.9])),
    "Bernoulli": lambda: D.Bernoulli(tt.tensor([0.3, 0.9])),
    "Dirichlet": lambda: D.Dirichlet(tt.tensor([0.5, 2.0, 4.0])),
    "MultivariateNormal": lambda: D.MultivariateNormal(tt.tensor([0.3, -1.0]),
                                                       tt.tensor([[1.0, 0.5], [0.5, 2.0]])),
    "Categorical": lambda: D.OneHotCategorical(tt.tensor([0.2, 0.3, 0.5])),
    "RelaxedBernoulli": lambda: D.RelaxedBernoulli(tt.tensor(0.01), probs=tt.tensor([0.3, 0.9])),
    "Gumbel": lambda: D.Gumbel(tt.tensor([0.3, -2.0]), tt.tensor([0.5, 3.0])),
    "Weibull": lambda: D.Weibull(tt.tensor([0.5, 3.0]), tt.tensor([1.5, 4.0])),
    "Pareto": lambda: D.Pareto(tt.tensor([0.5, 3.0]), tt.tensor([5.0, 6.0])),
    "NegativeBinomial": lambda: D.NegativeBinomial(tt.tensor([3.0, 20.0]), tt.tensor([0.3, 0.6])),
    "HalfNormal": lambda: D.HalfNormal(tt.tensor([0.5, 3.0])),
    "InverseGamma": lambda: D.InverseGamma(tt.tensor([5.0, 9.0]), tt.tensor([0.5, 3.0])),
}
# independent moments: SciPy's
SCIPY = {
    "Normal": stats.norm([0.3, -2.0], [0.5, 3.0]),
    "Laplace": stats.laplace([0.3, -2.0], [0.5, 3.0]),
    "Uniform": stats.uniform([0.3, -2.0], [0.2, 5.0]),
    "Exponential": stats.expon(scale=[2.0, 1 / 3.0]),
    "LogNormal": stats.lognorm([0.5, 0.3], scale=np.exp([0.3, -2.0])),
    "Gamma": stats.gamma([0.3, 4.0], scale=[2.0, 1 / 3.0]),
    "Chi2": stats.chi2([0.7, 5.0]),
    "Beta": stats.beta([0.3, 4.0], [0.5, 3.0]),
    "StudentT": stats.t([5.0, 9.0], [0.3, -1.0], [0.5, 2.0]),
    "Poisson": stats.poisson([0.5, 30.0]),
    "Binomial": stats.binom([5, 100], [0.3, 0.9]),
    "Geometric": stats.geom([0.3, 0.9], loc=-1),
    "Bernoulli": stats.bernoulli([0.3, 0.9]),
    "Dirichlet": None,
    "MultivariateNormal": None,
    "Categorical": None,
    "RelaxedBernoulli": None,    # at a low temperature (0.01): close to Bernoulli(p)
    "Gumbel": stats.gumbel_r([0.3, -2.0], [0.5, 3.0]),
    "Weibull": stats.weibull_min([1.5, 4.0], scale=[0.5, 3.0]),
    "Pareto": stats.pareto([5.0, 6.0], scale=[0.5, 3.0]),
    "NegativeBinomial": stats.nbinom([3.0, 20.0], [0.7, 0.4]),
    "HalfNormal": stats.halfnorm(scale=[0.5, 3.0]),
    "InverseGamma": stats.invgamma([5.0, 9.0], scale=[0.5, 3.0]),
}


@pytest.mark.parametrize("name", sorted(MOMENTS))
def test_sample_moments(name):
    tt.manual_seed(7)
    d = MOMENTS[name]()
    s = _np(d.sample((N,)))
    assert s.shape == (N,) + tuple(d.batch_shape) + tuple(d.event_shape)
    ref = SCIPY[name]
    if ref is not None:
        _check_moments(s, ref.mean(), ref.var())
    elif name == "Dirichlet":
        a = np.array([0.5, 2.0, 4.0])
        _check_moments(s, stats.dirichlet(a).mean(), stats.dirichlet(a).var())
        np.testing.assert_allclose(s.sum(-1), 1.0, rtol=1e-6)
    elif name == "MultivariateNormal":
        _check_moments(s, [0.3, -1.0], [1.0, 2.0])
        assert abs(np.cov(s.T)[0, 1] - 0.5) < 6 * np.sqrt((1.0 * 2.0 + 0.25) / N)
    elif name == "Categorical":
        p = np.array([0.2, 0.3, 0.5])
        _check_moments(s, p, p * (1 - p))
    else:
        p = np.array([0.3, 0.9])
        assert np.all(np.abs(s.mean(0) - p) <= 6 * np.sqrt(p * (1 - p) / N) + 0.02)


def test_circular_and_matrix_samples():
    tt.manual_seed(8)
    kappa = np.array([0.5, 4.0])
    v = _np(D.VonMises(tt.tensor([0.3, -2.0], dtype=tt.float64), tt.tensor(kappa, dtype=tt.float64)).sample((N,)))
    assert np.all(np.abs(v) <= np.pi)
    # the mean resultant length is I1(kappa) / I0(kappa), the mean direction the location
    r = np.hypot(np.cos(v).mean(0), np.sin(v).mean(0))
    np.testing.assert_allclose(r, special.i1(kappa) / special.i0(kappa), atol=6 / np.sqrt(N))
    np.testing.assert_allclose(np.arctan2(np.sin(v).mean(0), np.cos(v).mean(0))[1], -2.0, atol=0.05)
    s = np.array([[2.0, 0.5], [0.5, 1.0]])
    with pytest.warns(UserWarning, match="Singular sample detected"):
        # torch 2.13 warns so for every sample (its check reads support.check's True as singular)
        w = _np(D.Wishart(tt.tensor(6.0, dtype=tt.float64), tt.tensor(s, dtype=tt.float64)).sample((4000,)))
    var = 6.0 * (s ** 2 + np.outer(np.diag(s), np.diag(s)))
    assert np.all(np.abs(w.mean(0) - 6.0 * s) <= 6 * np.sqrt(var / 4000))
    m = _np(D.Multinomial(10, tt.tensor([0.2, 0.3, 0.5])).sample((4000,)))
    assert np.all(m.sum(-1) == 10)
    _check_moments(m, 10 * np.array([0.2, 0.3, 0.5]), 10 * np.array([0.16, 0.21, 0.25]), n=4000)


def test_samples_are_reproducible_with_the_seed():
    for make in (lambda: tt._standard_gamma(tt.tensor([0.3, 2.0, 9.0])),
                 lambda: tt.poisson(tt.tensor([0.3, 20.0])),
                 lambda: tt.binomial(tt.tensor([10.0, 50.0]), tt.tensor([0.3, 0.6])),
                 lambda: D.Dirichlet(tt.tensor([0.5, 2.0])).sample()):
        tt.manual_seed(3)
        a = _np(make())
        tt.manual_seed(3)
        b = _np(make())
        tt.manual_seed(4)
        c = _np(make())
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, c)
    g = tt.Generator().manual_seed(5)
    x = _np(tt._standard_gamma(tt.tensor([1.5] * 4), generator=g))
    g.manual_seed(5)
    np.testing.assert_array_equal(x, _np(tt._standard_gamma(tt.tensor([1.5] * 4), generator=g)))


def test_sampler_edge_values_as_torch():
    tt.manual_seed(0)
    tiny = np.finfo(np.float32).tiny
    g = _np(tt._standard_gamma(tt.tensor([-1.0, 0.0, float("nan"), float("inf")])))
    np.testing.assert_array_equal(g, [tiny, tiny, tiny, np.inf])
    g = _np(tt._standard_gamma(tt.tensor([0.0], dtype=tt.float64)))
    np.testing.assert_array_equal(g, [np.finfo(np.float64).tiny])
    np.testing.assert_array_equal(_np(tt._sample_dirichlet(tt.tensor([[0.0, 0.0]]))), [[0.5, 0.5]])
    # torch's cpu kernel: float64 gammas (small concentrations keep their spread), the result in
    # [smallest normal, the float below 1]
    d = _np(tt._sample_dirichlet(tt.tensor([[0.01, 0.01]]).expand(200, 2)))
    assert d.min() >= tiny and d.max() <= np.nextafter(np.float32(1), np.float32(0))
    assert np.any((d > 1e-30) & (d < 1e-3))       # float32 gammas would have underflowed to ties
    np.testing.assert_array_equal(_np(tt.poisson(tt.tensor([0.0, float("inf")]))), [0.0, -2.0 ** 63])
    b = _np(tt.binomial(tt.tensor([5.0, 2.0, 0.0, -1.0, 3.0]), tt.tensor([1.5, -0.2, 0.5, 0.5, float("nan")])))
    np.testing.assert_array_equal(b, [5.0, 0.0, 0.0, 0.0, np.nan])
    assert tuple(tt._standard_gamma(tt.zeros(0, 3)).shape) == (0, 3)
    assert tt._sample_dirichlet(tt.tensor(2.0)).shape == ()


def test_sampler_errors_as_torch():
    with pytest.raises(NotImplementedError, match="^\"gamma_cpu\" not implemented for 'Long'$"):
        tt._standard_gamma(tt.tensor([1, 2]))
    with pytest.raises(NotImplementedError, match="^\"gamma_cpu\" not implemented for 'BFloat16'$"):
        tt._standard_gamma(tt.tensor([1.0], dtype=tt.bfloat16))
    with pytest.raises(NotImplementedError, match="^\"dirichlet\" not implemented for 'Half'$"):
        tt._sample_dirichlet(tt.tensor([1.0, 2.0], dtype=tt.float16))
    with pytest.raises(RuntimeError, match="^invalid Poisson rate, expected rate to be non-negative$"):
        tt.poisson(tt.tensor([-1.0, 2.0]))
    with pytest.raises(RuntimeError, match="^invalid Poisson rate, expected rate to be non-negative$"):
        tt.poisson(tt.tensor([float("nan")]))
    with pytest.raises(NotImplementedError, match="^\"poisson_cpu\" not implemented for 'Long'$"):
        tt.poisson(tt.tensor([1, 2]))
    assert tt.poisson(tt.tensor([1.0, 2.0], dtype=tt.float16)).dtype is tt.float16
    with pytest.raises(ValueError, match="^binomial only supports floating-point dtypes for count, got: Long$"):
        tt.binomial(tt.tensor([5, 2]), tt.tensor([1, 0]))
    with pytest.raises(RuntimeError, match="^Found dtype Double but expected Float$"):
        tt.binomial(tt.tensor([5.0]), tt.tensor([0.5], dtype=tt.float64))
    with pytest.raises(RuntimeError, match="^Found dtype Double but expected Float$"):
        tt._standard_gamma_grad(tt.tensor([1.0]), tt.tensor([1.0], dtype=tt.float64))
    with pytest.raises(RuntimeError, match="^Found dtype Long but expected Float$"):
        tt._dirichlet_grad(tt.tensor([0.1]), tt.tensor([1]), tt.tensor([3]))
    with pytest.raises(NotImplementedError, match="^\"_standard_gamma_grad_cpu\" not implemented for 'Half'$"):
        tt._standard_gamma_grad(tt.tensor([1.0], dtype=tt.float16), tt.tensor([1.0], dtype=tt.float16))
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        tt._standard_gamma_grad(tt.tensor([1.0, 2.0]), tt.tensor([1.0, 2.0, 3.0]))


def test_sampler_autograd_nodes_as_torch():
    a = tt.tensor([0.5, 2.0], requires_grad=True)
    s = tt._standard_gamma(a)
    assert type(s.grad_fn).__name__ == "StandardGammaBackward0"
    s.sum().backward()
    np.testing.assert_allclose(_np(a.grad), _np(tt._standard_gamma_grad(a.detach(), s.detach())), rtol=1e-6)
    p = tt.poisson(a)
    assert type(p.grad_fn).__name__ == "PoissonBackward0"
    (g,) = tt.autograd.grad(p.sum(), a)
    np.testing.assert_array_equal(_np(g), [0.0, 0.0])
    with pytest.raises(RuntimeError, match="^derivative for aten::binomial is not implemented$"):
        tt.autograd.grad(tt.binomial(a, tt.tensor([0.5, 0.2])).sum(), a)
    with pytest.raises(RuntimeError, match="^derivative for aten::_sample_dirichlet is not implemented$"):
        tt.autograd.grad(tt._sample_dirichlet(a).sum(), a)
    # double backward through the implicit gradient: torch's NotImplementedError
    a = tt.tensor([1.5], dtype=tt.float64, requires_grad=True)
    (g,) = tt.autograd.grad(tt._standard_gamma(a).sum(), a, create_graph=True)
    with pytest.raises(NotImplementedError, match="^the derivative for '_standard_gamma_grad' is not implemented.$"):
        g.sum().backward()


# --------------------------------------------------------------------------- the implicit gradients
def _gamma_cdf_inversion_grad(alpha, x, h=1e-6):
    """d x / d alpha holding the CDF fixed: -(dF/d alpha) / (dF/dx), F = P(alpha, x)."""
    dF_da = (special.gammainc(alpha + h, x) - special.gammainc(alpha - h, x)) / (2 * h)
    return -dF_da / stats.gamma.pdf(x, alpha)


def _beta_cdf_inversion_grad(x, alpha, beta, h=1e-6):
    dF_da = (special.betainc(alpha + h, beta, x) - special.betainc(alpha - h, beta, x)) / (2 * h)
    return -dF_da / stats.beta.pdf(x, alpha, beta)


def test_standard_gamma_grad_against_the_cdf_inversion():
    # every region of torch's approximation: x < 0.8 (series), alpha > 8 near and away from the
    # mode (saddle point), and the rational fit; at quantiles 0.05 .. 0.95 of each alpha
    alphas = np.array([0.05, 0.3, 1.0, 2.5, 6.0, 9.0, 30.0, 200.0])
    qs = np.array([0.05, 0.3, 0.5, 0.7, 0.95])
    alpha = np.repeat(alphas, len(qs))
    x = stats.gamma.ppf(np.tile(qs, len(alphas)), alpha)
    want = _gamma_cdf_inversion_grad(alpha, x)
    got = _np(tt._standard_gamma_grad(tt.tensor(alpha, dtype=tt.float64), tt.tensor(x, dtype=tt.float64)))
    np.testing.assert_allclose(got, want, rtol=5e-3, atol=1e-6)


def test_dirichlet_grad_against_the_beta_cdf_inversion():
    cases = [(0.5, 2.0), (2.0, 3.0), (0.7, 0.4), (10.0, 9.0), (20.0, 7.0), (3.0, 0.5), (1.0, 1.0)]
    xs, want, a_, t_ = [], [], [], []
    for a, b in cases:
        for q in (0.1, 0.5, 0.9):
            x = stats.beta.ppf(q, a, b)
            xs.append(x)
            a_.append(a)
            t_.append(a + b)
            want.append(_beta_cdf_inversion_grad(x, a, b) / (1 - x))
    got = _np(tt._dirichlet_grad(*(tt.tensor(v, dtype=tt.float64) for v in (xs, a_, t_))))
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-6)


def test_gamma_and_beta_rsample_gradients_are_the_implicit_ones():
    tt.manual_seed(11)
    alpha = tt.tensor([0.4, 1.7, 12.0], dtype=tt.float64, requires_grad=True)
    rate = tt.tensor([2.0, 0.5, 1.0], dtype=tt.float64, requires_grad=True)
    x = D.Gamma(alpha, rate).rsample()
    x.sum().backward()
    z = _np(x) * _np(rate)                       # the standard gamma draw
    np.testing.assert_allclose(_np(alpha.grad), _gamma_cdf_inversion_grad(_np(alpha), z) / _np(rate), rtol=5e-3)
    np.testing.assert_allclose(_np(rate.grad), -_np(x) / _np(rate), rtol=1e-10)
    a = tt.tensor([0.8, 3.0], dtype=tt.float64, requires_grad=True)
    b = tt.tensor([2.5, 1.5], dtype=tt.float64, requires_grad=True)
    tt.manual_seed(12)
    y = D.Beta(a, b).rsample()
    y.sum().backward()
    yv = _np(y)
    np.testing.assert_allclose(_np(a.grad), _beta_cdf_inversion_grad(yv, _np(a), _np(b)), rtol=1e-2, atol=1e-6)
    # d y / d beta = -(d (1 - y) / d beta) for 1 - y ~ Beta(beta, alpha)
    np.testing.assert_allclose(_np(b.grad), -_beta_cdf_inversion_grad(1 - yv, _np(b), _np(a)), rtol=1e-2, atol=1e-6)
    # Dirichlet: each coordinate's gradient in its own concentration is its Beta marginal's
    conc = tt.tensor([0.8, 3.0, 1.5], dtype=tt.float64, requires_grad=True)
    tt.manual_seed(13)
    s = D.Dirichlet(conc).rsample()
    s[0].backward()
    a0, rest = 0.8, 4.5
    np.testing.assert_allclose(_np(conc.grad)[0], _beta_cdf_inversion_grad(_np(s)[0], a0, rest), rtol=1e-2)
    np.testing.assert_allclose(_np(conc.grad).sum() * 0, 0.0)


# --------------------------------------------------------------------------- emulated cuda
def test_samplers_on_cuda():
    if not tt.cuda.is_available():
        pytest.skip("no cuda device")
    tt.cuda.manual_seed(5)
    alpha = tt.tensor([0.3, 1.0, 4.5, 30.0], device="cuda")
    n = 512         # one launch of the interpreter's 512-lane sample blocks per column group
    g = _np(tt._standard_gamma(alpha.expand(n, 4)))
    assert g.shape == (n, 4) and np.all(g > 0)
    ref = stats.gamma(_np(alpha))
    _check_moments(g, ref.mean(), ref.var(), n=n)
    tt.cuda.manual_seed(5)
    again = _np(tt._standard_gamma(alpha.expand(n, 4)))
    np.testing.assert_array_equal(g, again)
    d = _np(tt._sample_dirichlet(tt.tensor([[0.5, 2.0, 4.0]], device="cuda").expand(n, 3)))
    _check_moments(d, stats.dirichlet([0.5, 2.0, 4.0]).mean(), stats.dirichlet([0.5, 2.0, 4.0]).var(), n=n)
    p = _np(tt.poisson(tt.tensor([0.5, 4.0, 30.0, 0.0], device="cuda").expand(n, 4)))
    _check_moments(p, [0.5, 4.0, 30.0, 0.0], [0.5, 4.0, 30.0, 0.0], n=n)
    assert np.array_equal(p, np.round(p))
    b = _np(tt.binomial(tt.tensor([5.0, 100.0, 3.0, 40.0], device="cuda").expand(n, 4),
                        tt.tensor([0.3, 0.9, 1.0, 0.05], device="cuda").expand(n, 4)))
    _check_moments(b, [1.5, 90.0, 3.0, 2.0], [1.05, 9.0, 0.0, 1.9], n=n)
    tiny = np.finfo(np.float32).tiny
    np.testing.assert_array_equal(_np(tt._standard_gamma(tt.tensor([-1.0, 0.0, float("inf")], device="cuda"))),
                                  [tiny, tiny, np.inf])
    # the 16-bit floats, which torch's cuda kernels draw too (in float32; at least the dtype's tiny)
    h = _np(tt._standard_gamma(tt.tensor([-1.0, 2.5], device="cuda", dtype=tt.float16)).float())
    assert h[0] == np.float32(6.103515625e-05) and 0 < h[1] < 60
    assert tt._sample_dirichlet(tt.ones(3, device="cuda", dtype=tt.bfloat16)).dtype is tt.bfloat16
    assert tt.binomial(tt.tensor([5.0], device="cuda", dtype=tt.float16),
                       tt.tensor([1.0], device="cuda", dtype=tt.float16)).tolist() == [5.0]
    g16 = tt._standard_gamma_grad(tt.tensor([1.5], device="cuda", dtype=tt.float16),
                                  tt.tensor([0.7], device="cuda", dtype=tt.float16))
    np.testing.assert_allclose(_np(g16.float()), _gamma_cdf_inversion_grad(1.5, 0.7), rtol=5e-3)
    with pytest.raises(NotImplementedError, match="^\"_dirichlet_grad_cuda\" not implemented for 'Half'$"):
        tt._dirichlet_grad(*(tt.tensor([0.5], device="cuda", dtype=tt.float16),) * 3)
    # float64 and a rate-1 Gamma's rsample through the kernel
    a = tt.tensor([2.0], dtype=tt.float64, device="cuda", requires_grad=True)
    x = D.Gamma(a, 1.0).rsample((4,))
    x.sum().backward()
    np.testing.assert_allclose(_np(a.grad), _gamma_cdf_inversion_grad(2.0, _np(x)).sum(), rtol=5e-3)


def test_cuda_draws_do_not_depend_on_the_launch_configuration(monkeypatch):
    """Element i draws from Philox counter counter0 + i, its rounds in the counter's third word:
    other block sizes (other programs, other rounds per block) give the same numbers."""
    if not tt.cuda.is_available() or not tt.cuda.is_emulated():
        pytest.skip("the emulated device's launch settings")
    from tritensor.backends import triton as tb
    alpha = tt.tensor(np.linspace(0.2, 12.0, 96), device="cuda")
    draws = []
    for block in (512, 32):
        monkeypatch.setitem(tb.INTERPRETER_SETTINGS, "sample_block", block)
        monkeypatch.setitem(tb.INTERPRETER_FAST_SETTINGS, "sample_block", block)
        tt.cuda.manual_seed(9)
        draws.append((_np(tt._standard_gamma(alpha)), _np(tt.poisson(alpha * 2)),
                      _np(tt.binomial(alpha.floor() + 5, alpha / 13))))
    for a, b in zip(*draws):
        np.testing.assert_array_equal(a, b)


def test_dirichlet_rsample_gradient_on_cuda():
    if not tt.cuda.is_available():
        pytest.skip("no cuda device")
    conc = tt.tensor([0.8, 3.0, 1.5], dtype=tt.float64, device="cuda", requires_grad=True)
    tt.cuda.manual_seed(13)
    s = D.Dirichlet(conc).rsample()
    s[0].backward()
    np.testing.assert_allclose(_np(conc.grad)[0], _beta_cdf_inversion_grad(_np(s)[0], 0.8, 4.5), rtol=1e-2)
    np.testing.assert_allclose(_np(s).sum(), 1.0, rtol=1e-12)
