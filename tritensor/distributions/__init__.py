"""tt.distributions: torch.distributions' probability distributions, transforms and KL
divergences, written in tritensor ops (so each runs on cpu and cuda and differentiates).

The modules are a port of PyTorch's own source (torch/distributions, torch 2.13), file by file,
with torch's tensor calls replaced by tritensor's: most of their lines are torch's. PyTorch's
BSD-3-Clause licence and copyright notice, which that source carries, are in LICENSE_PYTORCH next
to this file. (The project's rule is to read public code and write its own; this package predates
the rule being applied to it, and rewriting it is an open follow-up.) Their classes, arguments,
constraints, validation and error texts are torch's: a ``Distribution`` has ``batch_shape``/``event_shape``,
``sample``/``rsample`` (the reparameterised, differentiable draw where the family has one),
``log_prob``, ``cdf``/``icdf``, ``entropy``, ``mean``/``variance`` and ``expand``; parameters
are checked against their ``constraints`` when ``validate_args`` is on (the default, as in
torch: ``Distribution.set_default_validate_args``). ``kl_divergence(p, q)`` dispatches on the
most specific registered pair (``register_kl``). Every family of torch 2.13 is here: the ones
issue 25 asks for and the rest (Gumbel, HalfNormal, Pareto, Weibull, Wishart, LKJCholesky,
MixtureSameFamily, LowRankMultivariateNormal, VonMises ...), with all of torch's KL pairs.

Gamma, Beta, Dirichlet, Chi2 and StudentT draw from ``tt._standard_gamma`` (Marsaglia-Tsang)
and differentiate through its implicit reparameterisation gradient (``tt._standard_gamma_grad``,
``tt._dirichlet_grad``), as torch's.
"""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import _add_kl_info, kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F403
from .transforms import __all__ as _transforms_all
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

_add_kl_info()
del _add_kl_info

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
    "Distribution", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto",
    "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy",
    "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal", "LowRankMultivariateNormal", "MixtureSameFamily",
    "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical",
    "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical",
    "StudentT", "TransformedDistribution", "Uniform", "VonMises", "Weibull", "Wishart",
    "biject_to", "kl_divergence", "register_kl", "transform_to",
]
__all__.extend(_transforms_all)
