"""tt.special: torch.special's functions (Bessel functions, orthogonal polynomials, ndtr, zeta,
erfcx, xlog1py ... and its aliases: expit, gammaln, psi, gammainc, multigammaln ...).

Generated from the declarations named ``special.<name>`` (tritensor/ops/special.py, through
ops/surface.py), as the tt namespace is; tests/test_surface.py checks that nothing here is
undeclared.
"""
from .ops import surface as _surface

globals().update(_surface.namespace("special"))
