"""OpInfo records of issue 21's legacy/sparse/random family: the in-place samplers op_db tests
through Tensor.<name>_ (cauchy_, exponential_, geometric_, log_normal_, uniform_), the aten-only
ops (native_dropout_backward, _safe_softmax), native_layer_norm, alpha dropout, and the sparse COO
ops (tests/opinfo_sparse.py has their records). Checked by tests/test_ops_table.py (cpu and the
emulated cuda) and tests/test_op_gradients.py.

Oracles: the samplers' empirical CDF at fixed points against the distribution's CDF written out
here (math, not the sampler: 2048 draws from a fixed generator; the DKW bound at 1e-4 is 0.043);
NumPy expressions for the rest; alpha dropout's defining property (a standard normal input keeps
mean 0 and standard deviation 1).
"""
from __future__ import annotations

import math

import numpy as np

import tritensor as tt
import tritensor.nn.functional as F
from opinfo import GRAD_CASES, SampleInput, _randn, record, rng_for

N_DRAWS = 2048
CDF_TOL = {tt.float64: (0, 0.05)}


# --------------------------------------------------------------------------- the samplers
def _sampler(method, op_db_name, dtypes, params, cdf, points):
    """A record for ``Tensor.<method>``: each sample fills N_DRAWS elements with ``params`` from a
    generator seeded 1234 and returns the empirical CDF at ``points`` (float64)."""
    pts = np.asarray(points, dtype=np.float64)

    def samples(device, dtype):
        for p in params:
            yield SampleInput((tt.empty(N_DRAWS, dtype=dtype, device=device),) + tuple(p),
                              desc=f"{method}{p}", result_dtype=tt.float64)

    def op(t, *p):
        getattr(t, method)(*p, generator=tt.Generator(t.device).manual_seed(1234))
        drawn = t.cpu().double()         # the draws on the device under test; counted on the host
        return (drawn.unsqueeze(1) <= tt.tensor(pts)).double().mean(0).to(t.device)

    def reference(t, *p):
        return cdf(pts, *p)

    record(f"Tensor.{method}", op, dtypes, samples, reference, tolerances=CDF_TOL, op_db=(op_db_name,))


_sampler("exponential_", "exponential", (tt.float32, tt.float64), [(0.5,), (2.0,)],
         lambda x, lambd: 1 - np.exp(-lambd * x), [0.05, 0.2, 0.5, 1.0, 2.0, 4.0])
_sampler("cauchy_", "cauchy", (tt.float32, tt.bfloat16), [(0.0, 0.5), (-2.0, 1.0)],
         lambda x, m, s: 0.5 + np.arctan((x - m) / s) / np.pi, [-5.0, -2.0, -1.0, -0.25, 0.0, 0.5, 3.0])
_sampler("log_normal_", "log_normal", (tt.float32, tt.float64), [(0.0, 0.25), (0.5, 1.0)],
         lambda x, mu, s: np.array([0.5 * math.erfc(-(math.log(v) - mu) / (s * math.sqrt(2))) for v in x]),
         [0.5, 0.8, 1.0, 1.3, 2.0, 5.0])
_sampler("geometric_", "geometric", (tt.float32, tt.int64), [(0.2,), (0.8,)],
         lambda k, p: 1 - (1 - p) ** np.floor(k), [1, 2, 3, 5, 8])
_sampler("uniform_", "uniform", (tt.float32, tt.float16), [(-100.0, 100.0), (1.0, 2.0)],
         lambda x, a, b: np.clip((x - a) / (b - a), 0, 1), [-50.0, 0.0, 1.1, 1.5, 1.9, 60.0])


# --------------------------------------------------------------------------- native_layer_norm
def _native_layer_norm_reference(x, normalized_shape, weight, bias, eps):
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    x64 = x.astype(np.float64)
    mean = x64.mean(axes, keepdims=True)
    rstd = 1 / np.sqrt(((x64 - mean) ** 2).mean(axes, keepdims=True) + eps)
    out = (x64 - mean) * rstd
    out = out * weight if weight is not None else out
    out = out + bias if bias is not None else out
    return out, mean, rstd


def _samples_native_layer_norm(device, dtype):
    rng = rng_for("native_layer_norm", dtype)

    def make(shape):
        return tt.tensor(rng.standard_normal(shape), dtype=dtype, device=device)
    yield SampleInput((make((3, 67)), (67,), make((67,)), make((67,)), 1e-5), desc="affine")
    yield SampleInput((make((2, 2, 3)), (2, 3), None, make((2, 3)), 0.5), desc="two-dims-bias")
    yield SampleInput((make((9, 13)).t(), (9,), None, None, 1e-5), desc="transposed")
    yield SampleInput((make((0, 3)), (3,), None, None, 1e-5), desc="empty")


# (the output is layer_norm's, whose second derivative the layer_norm record checks)
record("native_layer_norm", tt.native_layer_norm, (tt.float32, tt.float64), _samples_native_layer_norm,
       _native_layer_norm_reference, tolerances={tt.float32: (1e-4, 1e-5), tt.float64: (1e-10, 1e-12)},
       gradgradcheck=False)
GRAD_CASES["native_layer_norm"] = lambda d: (
    lambda x, w, b: tt.native_layer_norm(x, (5,), w, b, 1e-5)[0], (_randn((2, 5), d), _randn((5,), d), _randn((5,), d)),
    {})


# --------------------------------------------------------------------------- the aten-only ops
_MASK = np.array([[True, False, True, True], [False, True, False, True], [True, True, True, False]])


def _samples_dropout_backward(device, dtype):
    rng = rng_for("native_dropout_backward", dtype)
    g = tt.tensor(rng.integers(-3, 4, (3, 4)) if not dtype.is_floating_point else rng.standard_normal((3, 4)),
                  dtype=dtype, device=device)
    for scale in (0.0, 1.0, 2.5):
        yield SampleInput((g, tt.tensor(_MASK, device=device), scale), desc=f"scale{scale}",
                          result_dtype=dtype if dtype.is_floating_point else tt.float32)
    yield SampleInput((g.t(), tt.tensor(_MASK.T, device=device), 2.0), desc="transposed")


record("ops.aten.native_dropout_backward", tt.ops.aten.native_dropout_backward.default,
       (tt.float32, tt.float64, tt.int64), _samples_dropout_backward,
       lambda g, m, s: (g * m * s).astype(np.float64 if g.dtype == np.float64 else np.float32),
       op_db=("native_dropout_backward",))
GRAD_CASES["ops.aten.native_dropout_backward"] = lambda d: (
    lambda g: tt.ops.aten.native_dropout_backward(g, tt.tensor(_MASK, device=d), 2.0), (_randn((3, 4), d),), {})


def _safe_softmax_reference(x, dim, dtype=None):
    x = x.astype(np.float64)
    m = np.max(x, axis=dim, keepdims=True)
    masked = np.isneginf(m)
    e = np.exp(x - np.where(masked, 0, m))
    return np.where(masked, 0.0, e / np.sum(e, axis=dim, keepdims=True))


def _samples_safe_softmax(device, dtype):
    rng = rng_for("_safe_softmax", dtype)
    x = rng.standard_normal((5, 67))
    x[1] = -np.inf                                   # a fully masked row: zeros, not NaN
    x[2, ::2] = -np.inf
    yield SampleInput((tt.tensor(x, dtype=dtype, device=device), 1), desc="masked-rows")
    y = rng.standard_normal((9, 13))
    y[:, 3] = -np.inf
    yield SampleInput((tt.tensor(y, dtype=dtype, device=device).t(), 1), desc="transposed-masked-column")
    yield SampleInput((tt.tensor(rng.standard_normal((2, 3, 4)), dtype=dtype, device=device), 0), desc="dim0")


record("ops.aten._safe_softmax.default", tt.ops.aten._safe_softmax.default, (tt.float32, tt.float64),
       _samples_safe_softmax, _safe_softmax_reference, op_db=("torch.ops.aten._safe_softmax.default",))


def _safe_softmax_grad_case(d):
    x = _randn((2, 3), d).detach()
    x[1] = float("-inf")
    return lambda t: tt.ops.aten._safe_softmax.default(t, 1), (x.requires_grad_(),), {}


GRAD_CASES["ops.aten._safe_softmax.default"] = _safe_softmax_grad_case


# --------------------------------------------------------------------------- alpha dropout
def _alpha_dropout_record(name, fn, shape, grad_shape):
    """Deterministic samples (not training, p = 0, p = 1) against their definition, and the
    defining property in training: a standard normal input keeps mean 0 and std 1."""
    def op(x, p, training, stats=False):
        if stats:
            tt.manual_seed(11)
            y = fn(x, p, training)
            return tt.stack([y.mean(), y.std()]).double()
        return fn(x, p, training)

    def samples(device, dtype):
        rng = rng_for(name, dtype)
        x = tt.tensor(rng.standard_normal(shape), dtype=dtype, device=device)
        yield SampleInput((x, 0.5, False), desc="eval")
        yield SampleInput((x, 0.0, True), desc="p0")
        yield SampleInput((x, 1.0, True), desc="p1")
        big = tt.tensor(rng.standard_normal((25, 40, 4)), dtype=dtype, device=device)
        yield SampleInput((big, 0.3, True), {"stats": True}, desc="self-normalizing", result_dtype=tt.float64)

    def reference(x, p, training, stats=False):
        if stats:
            return np.array([0.0, 1.0])
        return x * 0 if training and p == 1 else x

    record(name, op, (tt.float32, tt.float64), samples, reference,
           tolerances={tt.float32: (0, 0), tt.float64: (0, 0.08)}, gradgradcheck=False)   # (linear in x)

    def grad_case(d):
        def f(x):
            tt.manual_seed(3)          # the same mask on every call of the check
            return fn(x, 0.4, True)
        return f, (_randn(grad_shape, d),), {}
    GRAD_CASES[name] = grad_case


_alpha_dropout_record("nn.functional.alpha_dropout", F.alpha_dropout, (6, 5), (2, 3))
_alpha_dropout_record("nn.functional.feature_alpha_dropout", F.feature_alpha_dropout, (6, 5, 2), (2, 3, 1))
