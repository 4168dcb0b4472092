"""OpInfo records of the distributions' gradient functions (tritensor/ops/random_dists.py):
``_standard_gamma_grad`` and ``_dirichlet_grad``, elementwise entries whose FNs are in
kernels/special.py.

Parity (tests/test_ops_table.py) checks the cpu device and the emulated cuda kernel against the
table's NumPy reference over every region of torch's approximations (small x, large alpha near
and away from the mode, the rational fits); the independent oracles (values recorded from torch
2.13, finite differences of SciPy's incomplete gamma/beta CDF inversion) are in
tests/test_distributions_sampling.py. On cuda each runs one launch of a (3, 67) transposed
operand (two programs, the tail masked). Neither has a derivative (torch's NotImplementedError).
"""
from __future__ import annotations

import numpy as np

import tritensor as tt
from opinfo import GRAD_CASES, NO_DERIVATIVE, NO_SECOND_DERIVATIVE, SampleInput, _t, record, rng_for

_DTYPES = (tt.float32, tt.float64)
# the reference computes in float64; the kernel in the dtype (torch's cuda accscalar), so float32
# differs where the formulas cancel (the saddle point expansion near the mode)
_TOLERANCES = {tt.float32: (2e-4, 1e-5), tt.float64: (1e-10, 1e-12)}


def _gamma_pairs(rng, shape):
    """(alpha, x) over the regions: alpha in (0.05, 30), x a quantile-ish multiple of alpha
    (x < 0.8 and x near alpha both reached)."""
    alpha = np.exp(rng.uniform(np.log(0.05), np.log(30.0), shape))
    x = alpha * np.exp(rng.uniform(-2.0, 1.0, shape))
    x.flat[:4] = [0.3, 9.5, 15.0, 0.01]                 # small x; near the mode; the saddle point's tails
    alpha.flat[:4] = [2.0, 10.0, 9.0, 0.2]
    return alpha, x


def _dirichlet_triples(rng, shape):
    """(x, alpha, total): x in (0, 1), alpha in (0.1, 20), beta = total - alpha in (0.1, 20)."""
    alpha = np.exp(rng.uniform(np.log(0.1), np.log(20.0), shape))
    beta = np.exp(rng.uniform(np.log(0.1), np.log(20.0), shape))
    x = rng.uniform(0.02, 0.98, shape)
    x.flat[:4] = [0.05, 0.97, 0.5, 0.45]               # near 0; near 1; both parameters large
    alpha.flat[:4] = [0.5, 3.0, 10.0, 8.0]
    beta.flat[:4] = [2.0, 0.5, 9.0, 10.0]
    return x, alpha, alpha + beta


def _samples(name, make_values):
    def gen(device, dtype):
        layouts = (("odd-transposed", (67, 3)),) if device != "cpu" else (
            ("odd", (3, 67)), ("0d", ()), ("empty", (0, 3)), ("odd-transposed", (67, 3)))
        for desc, shape in layouts:
            arrays = make_values(rng_for(name, dtype, desc), shape)
            args = tuple(tt.tensor(a, dtype=dtype, device=device) for a in arrays)
            if desc == "odd-transposed":
                args = tuple(a.t() for a in args)
            yield SampleInput(args, desc=desc)
        if device == "cpu":      # broadcast operands
            arrays = make_values(rng_for(name, dtype, "broadcast"), (5, 1))
            args = tuple(tt.tensor(a, dtype=dtype, device=device) for a in arrays)
            yield SampleInput((args[0].expand(5, 4),) + args[1:], desc="broadcast")
    return gen


record("_standard_gamma_grad", tt._standard_gamma_grad, _DTYPES, _samples("_standard_gamma_grad", _gamma_pairs),
       "table", tolerances=dict(_TOLERANCES), kernel_fn="standard_gamma_grad")
record("_dirichlet_grad", tt._dirichlet_grad, _DTYPES, _samples("_dirichlet_grad", _dirichlet_triples),
       "table", tolerances=dict(_TOLERANCES), kernel_fn="dirichlet_grad")

GRAD_CASES.update({
    "_standard_gamma_grad": lambda d: (tt._standard_gamma_grad, (_t([1.5, 3.0], d), _t([0.5, 2.0], d)), {}),
    "_dirichlet_grad": lambda d: (tt._dirichlet_grad, (_t([0.3], d), _t([1.5], d), _t([4.0], d)), {}),
})
NO_DERIVATIVE["_standard_gamma_grad"] = "_standard_gamma_grad"
NO_DERIVATIVE["_dirichlet_grad"] = "_dirichlet_grad"
NO_SECOND_DERIVATIVE.update({"_standard_gamma_grad": "_standard_gamma_grad", "_dirichlet_grad": "_dirichlet_grad"})
