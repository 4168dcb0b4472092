"""OpInfo records of the transformer family: rms_norm (tritensor/ops/rms_norm.py) and its fused
backward, F.multi_head_attention_forward (tritensor/nn/functional.py); checked by
tests/test_ops_table.py (cpu, emulated cuda) and tests/test_op_gradients.py.

The references are written from the definitions in float64 NumPy, independently of
backends/numpy_nn.py: rms_norm is x / sqrt(mean(x^2) + eps) * w with torch's default eps (the
machine epsilon of the compute dtype: float32's for 16-bit inputs). Emulated launches cost: every
sample runs on cpu in every dtype and on cuda in float32 (sizes crossing the interpreter's
64-element tiles and its 128-byte one-tile rows, so both kernel paths run); the other dtypes run
one sample there.
"""
from __future__ import annotations

import numpy as np

import tritensor as tt
from opinfo import CPU_ONLY_GRADGRAD, GRAD_CASES, PARITY_ESCAPES, SampleInput, _randn, record, rng_for, table_op  # noqa: F401

F = tt.nn.functional
DTYPES = (tt.float32, tt.float64, tt.float16, tt.bfloat16)
TOLERANCES = {tt.float16: (4e-3, 4e-3), tt.bfloat16: (2e-2, 2e-2), tt.float32: (2e-5, 2e-5),
              tt.float64: (1e-10, 1e-10)}


def _maker(dtype, device, rng):
    def make(shape, dt=None):
        return tt.tensor(rng.standard_normal(shape), dtype=dt or dtype, device=device)
    return make


def _few_on_cuda(samples):
    """Every sample on cpu and in float32; the first one on cuda in the other dtypes."""
    def run(device, dtype):
        for i, s in enumerate(samples(device, dtype)):
            if i and device != "cpu" and dtype is not tt.float32:
                return
            yield s
    return run


# --------------------------------------------------------------------------- rms_norm
def _rms_reference(x, normalized_shape, weight=None, eps=None):
    # to_numpy widens 16-bit floats to float32: float64 arrays are the float64 samples', the only
    # ones whose default eps is float64's (16-bit inputs compute in float32, as torch's opmath)
    if eps is None:
        eps = float(np.finfo(np.float64 if x.dtype == np.float64 else np.float32).eps)
    x = x.astype(np.float64)
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    y = x / np.sqrt((x * x).mean(axes, keepdims=True) + eps)
    return y if weight is None else y * weight.astype(np.float64)


def _rms_samples(device, dtype):
    make = _maker(dtype, device, rng_for("rms_norm", dtype))
    yield SampleInput((make((5, 67)), (67,), make((67,))), desc="affine-streamed-rows")
    yield SampleInput((make((3, 2, 5)), (2, 5), make((2, 5))), {"eps": 1e-2}, desc="two-dims-eps")
    yield SampleInput((make((9, 13)).t(), (9,)), desc="transposed-no-weight")
    yield SampleInput((make((4, 6))[::2, 1:], [5], make((5,), dt=tt.float32)), desc="sliced-float32-weight")
    yield SampleInput((make((0, 4)), (4,), make((4,))), desc="empty-batch")
    yield SampleInput((make((7,)) * 1e-3, (7,)), desc="one-small-row")


record("rms_norm", lambda x, shape, weight=None, eps=None: F.rms_norm(x, shape, weight, eps), DTYPES,
       _few_on_cuda(_rms_samples), _rms_reference, tolerances=TOLERANCES, op_db=("nn.functional.rms_norm",))


# the fused backward: (dx, grad_weight) from (grad, x, weight, rstd)
def _rms_backward_op(grad, x, weight, rstd, n_norm):
    gw = tt.zeros(weight.shape, dtype=rstd.dtype, device=x.device) if weight is not None else None
    dx = table_op("rms_norm_backward", grad, x, weight, rstd, gw, n_norm=n_norm)
    return (dx, gw) if weight is not None else dx


def _rms_backward_reference(grad, x, weight, rstd, n_norm):
    g, x = grad.astype(np.float64), x.astype(np.float64)
    axes = tuple(range(x.ndim - n_norm, x.ndim))
    lead = tuple(range(x.ndim - n_norm))
    r = rstd.astype(np.float64).reshape(x.shape[:x.ndim - n_norm] + (1,) * n_norm)
    xhat = x * r
    gh = g * weight if weight is not None else g
    dx = r * (gh - xhat * (gh * xhat).mean(axes, keepdims=True))
    return (dx, (g * xhat).sum(lead)) if weight is not None else dx


def _rms_backward_samples(device, dtype):
    make = _maker(dtype, device, rng_for("rms_norm_backward", dtype))
    rng = rng_for("rms_norm_backward/rstd", dtype)

    def rstd(m):
        return tt.tensor(np.abs(rng.standard_normal(m)) + 0.5, dtype=dtype, device=device)
    yield SampleInput((make((10, 37)), make((10, 37)), make((37,)), rstd(10), 1), desc="affine-streamed")
    yield SampleInput((make((2, 5, 3)), make((2, 5, 6))[..., ::2], make((5, 3)), rstd(2), 2), desc="two-dims-strided")
    yield SampleInput((make((10, 3)), make((3, 10)).t(), None, rstd(10), 1), desc="no-weight-transposed")


record("rms_norm_backward", _rms_backward_op, (tt.float32, tt.float64), _rms_backward_samples,
       _rms_backward_reference, tolerances=TOLERANCES)

# first derivatives through the fused backward (every device); the second through the backward
# written in table ops, the same code on every device: on cpu only (~4 s emulated)
GRAD_CASES["rms_norm"] = lambda d: (lambda x, w: F.rms_norm(x, (3,), w), (_randn((2, 3), d), _randn((3,), d)), {})
CPU_ONLY_GRADGRAD.add("rms_norm")
