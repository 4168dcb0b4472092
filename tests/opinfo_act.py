"""OpInfo records of the activations (tritensor/ops/activations.py, issue 25.1): elu, selu, celu,
hardshrink, softshrink, hardsigmoid, hardswish, logsigmoid, mish, softplus, threshold, leaky_relu,
rrelu (its training form rrelu_with_noise), prelu, glu, their fused backwards, and the composites
softmin, softsign, tanhshrink.

The references are written here from the definitions in float64 (SciPy's expit, NumPy's
logaddexp, clip ...), independently of backends/numpy_act.py, which the cpu device runs.
Checked by tests/test_ops_table.py (cpu, emulated cuda) and tests/test_op_gradients.py.

Emulated launches cost: every layout and dtype runs on cpu; cuda runs the (3, 67) operand (two
programs of the interpreter's 128-element blocks, the tail masked) and a transposed one in each
dtype. Sample values avoid the kinks (|x| = lambd, x = +-3 ...) by more than a float16 ulp, so
that rounding cannot move a value across one; the kinks themselves are pinned in
tests/test_activations.py against values recorded from torch.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

import tritensor as tt
from opinfo import CPU_ONLY_GRADGRAD, GRAD_CASES, LAYOUTS, SampleInput, _t, record, rng_for, table_op

F = tt.nn.functional
FLOATS = (tt.float32, tt.float64, tt.float16, tt.bfloat16)
TOLERANCES = {tt.float16: (4e-3, 2e-3), tt.bfloat16: (2e-2, 2e-2), tt.float32: (1e-5, 1e-6),
              tt.float64: (1e-10, 1e-12)}
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
CPU_LAYOUTS = ("0d", "empty", "size1", "odd", "transposed", "sliced", "broadcast")
CUDA_LAYOUTS = ("odd", "transposed")


def _away(v, kinks, gap=0.05):
    """Values moved off the kinks (a float16 rounding must not cross one)."""
    for k in kinks:
        v = np.where(np.abs(v - k) < gap, v + 2 * gap, v)
    return v


def _maker(dtype, device, rng, kinks=(0.0,), scale=3.0):
    def make(shape):
        v = _away(rng.standard_normal(shape) * scale, kinks)
        if not dtype.is_floating_point:
            v = np.round(v)
        return tt.tensor(v, dtype=dtype, device=device)
    return make


def _unary_samples(name, kwargs_list, kinks=(0.0,), arity=1):
    """Every layout on cpu, two on cuda; ``arity`` tensors of one layout (grad, x for backwards)."""
    def samples(device, dtype):
        for lay in CPU_LAYOUTS if device == "cpu" else CUDA_LAYOUTS:
            for i, kwargs in enumerate(kwargs_list):
                make = _maker(dtype, device, rng_for(name, dtype, lay, i), kinks)
                yield SampleInput(tuple(LAYOUTS[lay](make) for _ in range(arity)), dict(kwargs), desc=f"{lay}-{i}")
    return samples


# --------------------------------------------------------------------------- references (float64)
def _elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(x))


def _elu_d(x, alpha=1.0):
    return np.where(x > 0, 1.0, alpha * np.exp(x))


def _celu(x, alpha=1.0):
    return np.maximum(0, x) + np.minimum(0, alpha * np.expm1(x / alpha))


def _softplus(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.logaddexp(0, x * beta) / beta)


def _softplus_d(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, 1.0, expit(x * beta))


def _mish_d(x):
    t = np.tanh(np.logaddexp(0, x))
    return t + x * (1 - t * t) * expit(x)


def _hardsigmoid_d(x):
    # torch multiplies by its float constant 1.0f / 6.0f in every dtype
    return np.where(np.abs(x) < 3, float(np.float32(1) / np.float32(6)), 0.0)


def _hardswish_d(x):
    return np.where(x < -3, 0.0, np.where(x < 3, (2 * x + 3) / 6, 1.0))


def _shrink_d(x, lambd=0.5):
    return np.where(np.abs(x) > lambd, 1.0, 0.0)


# name -> (public op, forward reference, derivative reference, kwargs list, kinks, dtypes)
UNARY = {
    "elu": (F.elu, _elu, _elu_d, [{}, {"alpha": 1.7}], (0.0,), FLOATS),
    "celu": (F.celu, _celu, lambda x, alpha=1.0: np.where(x > 0, 1.0, np.exp(x / alpha)),
             [{}, {"alpha": 0.6}], (0.0,), FLOATS),
    "selu": (F.selu, lambda x: SELU_SCALE * _elu(x, SELU_ALPHA), lambda x: SELU_SCALE * _elu_d(x, SELU_ALPHA),
             [{}], (0.0,), FLOATS),
    "hardshrink": (F.hardshrink, lambda x, lambd=0.5: np.where(np.abs(x) > lambd, x, 0.0), _shrink_d,
                   [{}, {"lambd": 1.5}], (-1.5, -0.5, 0.5, 1.5), FLOATS),
    "softshrink": (F.softshrink, lambda x, lambd=0.5: np.sign(x) * np.maximum(np.abs(x) - lambd, 0.0), _shrink_d,
                   [{}, {"lambd": 1.5}], (-1.5, -0.5, 0.5, 1.5), FLOATS),
    "hardsigmoid": (F.hardsigmoid, lambda x: np.clip(x / 6 + 0.5, 0, 1), _hardsigmoid_d, [{}], (-3.0, 3.0), FLOATS),
    "hardswish": (F.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6, _hardswish_d, [{}], (-3.0, 3.0), FLOATS),
    "log_sigmoid": (F.logsigmoid, lambda x: -np.logaddexp(0, -x), lambda x: expit(-x), [{}], (), FLOATS),
    "mish": (F.mish, lambda x: x * np.tanh(np.logaddexp(0, x)), _mish_d, [{}], (), FLOATS),
    "softplus": (F.softplus, _softplus, _softplus_d, [{}, {"beta": 2.0, "threshold": 3.0}], (1.5,), FLOATS),
    "leaky_relu": (F.leaky_relu, lambda x, negative_slope=0.01: np.where(x > 0, x, negative_slope * x),
                   lambda x, negative_slope=0.01: np.where(x > 0, 1.0, negative_slope),
                   [{}, {"negative_slope": 0.2}], (0.0,), FLOATS),
}
# the table entries' attribute names where the public function's differ
_ATTRS = {"softplus": {"beta": 1.0, "threshold": 20.0}, "elu": {"alpha": 1.0}, "celu": {"alpha": 1.0},
          "hardshrink": {"lambd": 0.5}, "softshrink": {"lambd": 0.5}, "leaky_relu": {"negative_slope": 0.01}}


def _backward_op(name):
    def run(grad, x, **kwargs):
        return table_op(name + "_backward", grad, x, **{**_ATTRS.get(name, {}), **kwargs})
    return run


for _name, (_op, _ref, _ref_d, _kwargs, _kinks, _dtypes) in UNARY.items():
    record(_name, _op, _dtypes, _unary_samples(_name, _kwargs, _kinks), _ref, tolerances=TOLERANCES,
           op_db=(f"nn.functional.{'logsigmoid' if _name == 'log_sigmoid' else _name}",))
    record(f"{_name}_backward", _backward_op(_name), _dtypes, _unary_samples(_name + "_backward", _kwargs, _kinks, 2),
           (lambda d: lambda g, x, **kw: g * d(x, **kw))(_ref_d), tolerances=TOLERANCES)

# threshold: integer dtypes too
THRESHOLD_DTYPES = FLOATS + (tt.int32, tt.int64)
record("threshold", F.threshold, THRESHOLD_DTYPES,
       _unary_samples("threshold", [{"threshold": 0.7, "value": -2.0}, {"threshold": -1, "value": 5}], (0.7, -1.0)),
       lambda x, threshold, value: np.where(x > threshold, x, value), tolerances=TOLERANCES,
       op_db=("nn.functional.threshold",))
record("threshold_backward", lambda g, x, threshold: table_op("threshold_backward", g, x, threshold=threshold),
       THRESHOLD_DTYPES, _unary_samples("threshold_backward", [{"threshold": 0.7}, {"threshold": -1}], (0.7, -1.0), 2),
       lambda g, x, threshold: np.where(x > threshold, g, 0), tolerances=TOLERANCES)


# rrelu: eval mode is leaky_relu with the mean slope; training's random slopes are an operand
# (the noise) of rrelu_with_noise, given here
def _noise_samples(name, arity):
    def samples(device, dtype):
        for lay in CPU_LAYOUTS if device == "cpu" else CUDA_LAYOUTS:
            rng = rng_for(name, dtype, lay)
            make = _maker(dtype, device, rng)
            args = [LAYOUTS[lay](make) for _ in range(arity)]
            noise = tt.tensor(rng.uniform(0.1, 0.3, tuple(args[-1].shape)), dtype=dtype, device=device)
            yield SampleInput((*args, noise), desc=lay)
    return samples


record("nn.functional.rrelu", lambda x, **kw: F.rrelu(x, **kw), FLOATS,
       _unary_samples("rrelu", [{}, {"lower": 0.2, "upper": 0.4}]),
       lambda x, lower=1 / 8, upper=1 / 3: np.where(x > 0, x, x * (lower + upper) / 2), tolerances=TOLERANCES)
record("rrelu_with_noise", lambda x, noise: table_op("rrelu_with_noise", x, noise), FLOATS,
       _noise_samples("rrelu_with_noise", 1), lambda x, n: np.where(x > 0, x, x * n), tolerances=TOLERANCES)
record("rrelu_with_noise_backward", lambda g, x, noise: table_op("rrelu_with_noise_backward", g, x, noise), FLOATS,
       _noise_samples("rrelu_with_noise_backward", 2), lambda g, x, n: np.where(x > 0, g, g * n),
       tolerances=TOLERANCES)


# prelu: one weight, or one per channel (dim 1) broadcast over the others
def _prelu_samples(name, arity):
    def samples(device, dtype):
        rng = rng_for(name, dtype)
        make = _maker(dtype, device, rng)
        cases = [("channels", (4, 3, 11), (3,)), ("one", (5, 7), (1,)), ("1d", (67,), (1,))]
        if device == "cpu":
            cases += [("channels-4d", (2, 5, 3, 4), (5,)), ("0d", (), (1,)), ("empty", (0, 3), (3,))]
        for desc, shape, wshape in cases:
            x = [make(shape) for _ in range(arity)]
            w = tt.tensor(rng.uniform(-0.5, 0.5, wshape), dtype=dtype, device=device)
            yield SampleInput((*x, w), desc=desc)
    return samples


def _channel(x, w):
    return w.reshape((1, -1) + (1,) * (x.ndim - 2)) if x.ndim >= 2 and w.size > 1 else w.reshape(()) if w.size == 1 else w


def _prelu_ref(x, w):
    return np.where(x > 0, x, _channel(x, w) * x)


record("prelu", F.prelu, FLOATS, _prelu_samples("prelu", 1), _prelu_ref, tolerances=TOLERANCES,
       op_db=("nn.functional.prelu",))


def _prelu_backward_op(which):
    def run(g, x, w):
        w = w.reshape(tuple(w.numel() if i == 1 else 1 for i in range(x.dim())))     # as F.prelu does
        if which == "input":
            return table_op("prelu_input_backward", g, x, w)
        return table_op("prelu_weight_backward", g, x)
    return run


record("prelu_input_backward", _prelu_backward_op("input"), FLOATS, _prelu_samples("prelu_input_backward", 2),
       lambda g, x, w: np.where(x > 0, g, _channel(x, w) * g), tolerances=TOLERANCES)
record("prelu_weight_backward", _prelu_backward_op("weight"), FLOATS, _prelu_samples("prelu_weight_backward", 2),
       lambda g, x, w: np.where(x > 0, 0.0, x * g), tolerances=TOLERANCES)


# glu: the halves along dim
def _glu_samples(name, arity):
    def samples(device, dtype):
        make = _maker(dtype, device, rng_for(name, dtype), ())
        cases = [("last", lambda: make((3, 134)), {}), ("dim0-transposed", lambda: make((9, 8)).t(), {"dim": 0})]
        if device == "cpu":
            cases += [("dim1-3d", lambda: make((2, 6, 5)), {"dim": 1}), ("empty", lambda: make((0, 4)), {})]
        for desc, build, kwargs in cases:
            x = build()
            args = (x,) if arity == 1 else (_grad_for_glu(x, kwargs.get("dim", -1), dtype, device, make), x)
            yield SampleInput(args, kwargs, desc=desc)
    return samples


def _grad_for_glu(x, dim, dtype, device, make):
    shape = list(x.shape)
    shape[dim] //= 2
    return make(tuple(shape))


def _glu_ref(x, dim=-1):
    a, b = np.split(x, 2, axis=dim)
    return a * expit(b)


def _glu_backward_ref(g, x, dim=-1):
    a, b = np.split(x, 2, axis=dim)
    s = expit(b)
    return np.concatenate([g * s, g * a * s * (1 - s)], axis=dim)


record("glu", F.glu, FLOATS, _glu_samples("glu", 1), _glu_ref, tolerances=TOLERANCES, op_db=("nn.functional.glu",))
record("glu_backward", lambda g, x, dim=-1: table_op("glu_backward", g, x, dim=dim % x.dim()), FLOATS,
       _glu_samples("glu_backward", 2), _glu_backward_ref, tolerances=TOLERANCES)


# the composites (no table entry, no kernel: their ops' records cover the kernels)
def _softmin_ref(x, dim):
    if x.size == 0:
        return x.copy()
    e = np.exp(-x - np.max(-x, axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


record("nn.functional.softmin", lambda x, dim: F.softmin(x, dim), (tt.float32, tt.float64),
       _unary_samples("softmin", [{"dim": 0}, {"dim": -1}]), _softmin_ref, tolerances=TOLERANCES)
record("nn.functional.softsign", F.softsign, FLOATS, _unary_samples("softsign", [{}]),
       lambda x: x / (1 + np.abs(x)), tolerances=TOLERANCES)
record("nn.functional.tanhshrink", F.tanhshrink, FLOATS, _unary_samples("tanhshrink", [{}]),
       lambda x: x - np.tanh(x), tolerances=TOLERANCES)


# --------------------------------------------------------------------------- gradient cases
def _off(values, device):
    return _t(values, device)


_X = [-2.3, -0.8, 0.3, 1.1, 2.2]          # off every kink (0, +-0.5, +-3, threshold 1.5 ...)
_G = [0.7, -1.3, 0.4, 2.0, -0.6]


def _backward_op_kw(name, **attrs):
    return lambda g, x: table_op(name, g, x, **attrs)


def _unary_case(fn, values=_X):
    return lambda d: (fn, (_off(values, d),), {})


def _backward_case(fn, values=_X):
    return lambda d: (fn, (_off(_G, d), _off(values, d)), {})


_ACT_GRAD_CASES = {
    "elu": _unary_case(lambda x: F.elu(x, 1.7)),
    "celu": _unary_case(lambda x: F.celu(x, 0.6)),
    "selu": _unary_case(F.selu),
    "hardshrink": _unary_case(F.hardshrink),
    "softshrink": _unary_case(lambda x: F.softshrink(x, 0.6)),
    "hardsigmoid": _unary_case(F.hardsigmoid, [-3.5, -0.8, 0.3, 1.1, 3.4]),
    "hardswish": _unary_case(F.hardswish, [-3.5, -0.8, 0.3, 1.1, 3.4]),
    "log_sigmoid": _unary_case(F.logsigmoid),
    "mish": _unary_case(F.mish),
    "softplus": _unary_case(lambda x: F.softplus(x, 2.0, 3.0)),
    "threshold": _unary_case(lambda x: F.threshold(x, 0.5, -4.0)),
    "leaky_relu": _unary_case(lambda x: F.leaky_relu(x, 0.2)),
    "elu_backward": _backward_case(_backward_op_kw("elu_backward", alpha=1.7)),
    "celu_backward": _backward_case(_backward_op_kw("celu_backward", alpha=0.6)),
    "selu_backward": _backward_case(_backward_op_kw("selu_backward")),
    "hardshrink_backward": _backward_case(_backward_op_kw("hardshrink_backward", lambd=0.5)),
    "softshrink_backward": _backward_case(_backward_op_kw("softshrink_backward", lambd=0.6)),
    "hardsigmoid_backward": _backward_case(_backward_op_kw("hardsigmoid_backward"), [-3.5, -0.8, 0.3, 1.1, 3.4]),
    "hardswish_backward": _backward_case(_backward_op_kw("hardswish_backward"), [-3.5, -0.8, 0.3, 1.1, 3.4]),
    "log_sigmoid_backward": _backward_case(_backward_op_kw("log_sigmoid_backward")),
    "mish_backward": _backward_case(_backward_op_kw("mish_backward")),
    "softplus_backward": _backward_case(_backward_op_kw("softplus_backward", beta=2.0, threshold=3.0)),
    "threshold_backward": _backward_case(_backward_op_kw("threshold_backward", threshold=0.5)),
    "leaky_relu_backward": _backward_case(_backward_op_kw("leaky_relu_backward", negative_slope=0.2)),
    "rrelu_with_noise": lambda d: (lambda x: table_op("rrelu_with_noise", x, _t([0.2, 0.15, 0.3, 0.25, 0.2], d)
                                                      .detach()), (_off(_X, d),), {}),
    "rrelu_with_noise_backward": lambda d: (
        lambda g, x: table_op("rrelu_with_noise_backward", g, x, _t([0.2, 0.15, 0.3, 0.25, 0.2], d).detach()),
        (_off(_G, d), _off(_X, d)), {}),
    "prelu": lambda d: (F.prelu, (_off([[-2.3, 0.8], [0.3, -1.1], [2.2, -0.4]], d), _off([0.25, -0.3], d)), {}),
    "prelu_input_backward": lambda d: (
        lambda g, x, w: table_op("prelu_input_backward", g, x, w.reshape(1, 2)),
        (_off([[0.7, -1.3], [0.4, 2.0]], d), _off([[-2.3, 0.8], [0.3, -1.1]], d), _off([0.25, -0.3], d)), {}),
    "prelu_weight_backward": lambda d: (
        lambda g, x: table_op("prelu_weight_backward", g, x),
        (_off([[0.7, -1.3], [0.4, 2.0]], d), _off([[-2.3, 0.8], [0.3, -1.1]], d)), {}),
    "glu": lambda d: (lambda x: F.glu(x, 0), (_off([[-2.3, 0.8], [0.3, -1.1], [2.2, -0.4], [0.5, 1.5]], d),), {}),
    "glu_backward": lambda d: (
        lambda g, x: table_op("glu_backward", g, x, dim=1),
        (_off([[0.7, -1.3], [0.4, 2.0]], d), _off([[-2.3, 0.8, 0.3, -1.1], [2.2, -0.4, 0.5, 1.5]], d)), {}),
    "nn.functional.softmin": _unary_case(lambda x: F.softmin(x, 0)),
    "nn.functional.softsign": _unary_case(F.softsign),
    "nn.functional.tanhshrink": _unary_case(F.tanhshrink),
    "nn.functional.rrelu": _unary_case(lambda x: F.rrelu(x, 0.1, 0.3)),
}
# the forward entries: their emulated gradcheck runs the fused backward FNs
_FUSED_FORWARDS = {*UNARY, "threshold", "rrelu_with_noise", "prelu", "glu"}
# Emulated-device cost (the test budget): there the forwards' gradcheck runs (their fused backward
# FNs); the second derivatives and the backward entries' own derivatives are table-op composites,
# the same code on every device, checked on cpu (and real GPUs), as the composites are.
CPU_ONLY_GRADGRAD.update(_ACT_GRAD_CASES)


def _on_cpu_or_gpu(case):
    def make(device):
        if device != "cpu" and tt.cuda.is_emulated():
            pytest.skip("a composite's gradients: cpu and real GPUs (see opinfo_act._on_cpu_or_gpu)")
        return case(device)
    return make


GRAD_CASES.update({name: case if name in _FUSED_FORWARDS else _on_cpu_or_gpu(case)
                   for name, case in _ACT_GRAD_CASES.items()})
