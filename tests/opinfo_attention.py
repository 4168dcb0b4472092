"""OpInfo records of scaled dot-product attention (tritensor/ops/attention.py), checked by
tests/test_ops_table.py (cpu, emulated cuda) and tests/test_op_gradients.py.

The reference is the math definition written here in float64 NumPy over the whole L x S score
matrix (independently of the blockwise reference in backends/numpy_attention.py): softmax of
scale * Q K^T + mask, a fully masked row 0. Samples cross the emulated kernels' 16-wide blocks
(L, S = 17, 33), broadcast a bool and a float mask over batch and heads, take the causal
triangle with L < S and L > S, GQA, and transposed (non-contiguous) inputs; the other dtypes run
one sample on the emulated device.
"""
from __future__ import annotations

import math

import numpy as np

import tritensor as tt
from opinfo import CPU_ONLY_GRADGRAD, GRAD_CASES, SampleInput, record, rng_for  # noqa: F401

F = tt.nn.functional
DTYPES = (tt.float32, tt.float64, tt.float16, tt.bfloat16)
TOLERANCES = {tt.float16: (5e-3, 5e-3), tt.bfloat16: (3e-2, 3e-2), tt.float32: (2e-5, 2e-5),
              tt.float64: (1e-10, 1e-10)}


def attention_reference(q, k, v, mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    if enable_gqa:
        k = np.repeat(k, q.shape[-3] // k.shape[-3], axis=-3)
        v = np.repeat(v, q.shape[-3] // v.shape[-3], axis=-3)
    s = (1 / math.sqrt(q.shape[-1])) if scale is None else scale
    scores = (q @ np.swapaxes(k, -1, -2)) * s
    if is_causal:
        mask = np.tril(np.ones((q.shape[-2], k.shape[-2]), bool))
    if mask is not None:
        scores = scores + (np.where(mask, 0.0, -np.inf) if mask.dtype == np.bool_ else mask.astype(np.float64))
    m = scores.max(-1, keepdims=True, initial=-np.inf)
    e = np.exp(scores - np.where(np.isneginf(m), 0, m))
    z = e.sum(-1, keepdims=True)
    return np.where(z > 0, e / np.where(z > 0, z, 1), 0.0) @ v


def _samples(device, dtype):
    rng = rng_for("scaled_dot_product_attention", dtype)

    def make(*shape, dt=None):
        return tt.tensor(rng.standard_normal(shape), dtype=dt or dtype, device=device)

    bool_mask = tt.tensor(rng.random((17, 33)) < 0.7, device=device)
    yield SampleInput((make(1, 2, 17, 16), make(1, 2, 33, 16), make(1, 2, 33, 16), bool_mask), desc="bool-mask-odd")
    if device != "cpu" and dtype is not tt.float32:
        return
    fmask = rng.standard_normal((2, 1, 5, 7))
    fmask[0, 0, 2] = -np.inf                                                # a fully masked row
    yield SampleInput((make(2, 3, 5, 8), make(2, 3, 7, 8), make(2, 3, 7, 6),
                       tt.tensor(fmask, dtype=tt.float32, device=device)), desc="float-mask-broadcast-heads")
    yield SampleInput((make(1, 2, 9, 8), make(1, 2, 20, 8), make(1, 2, 20, 8)), {"is_causal": True},
                      desc="causal-wide")
    yield SampleInput((make(1, 1, 20, 8), make(1, 1, 9, 8), make(1, 1, 9, 8)), {"is_causal": True, "scale": 0.5},
                      desc="causal-tall-scale")
    yield SampleInput((make(2, 4, 6, 8), make(2, 2, 9, 8), make(2, 1, 9, 4)), {"enable_gqa": True}, desc="gqa")
    yield SampleInput((make(2, 9, 3, 8).transpose(1, 2), make(2, 11, 3, 8).transpose(1, 2),
                       make(3, 11, 8)), desc="transposed-broadcast")


record("nn.functional.scaled_dot_product_attention", F.scaled_dot_product_attention, DTYPES, _samples,
       attention_reference, tolerances=TOLERANCES)


def _grad_case(device):
    rng = rng_for("sdpa-grad")

    def make(*shape):
        return tt.tensor(rng.standard_normal(shape), dtype=tt.float64, device=device, requires_grad=True)

    mask = tt.tensor(np.array([[True, False, True], [True, True, False]]), device=device)
    return (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
            (make(1, 2, 2, 3), make(1, 2, 3, 3), make(1, 2, 3, 2)), {})


GRAD_CASES["nn.functional.scaled_dot_product_attention"] = _grad_case
CPU_ONLY_GRADGRAD.add("nn.functional.scaled_dot_product_attention")    # ~45 s of interpreted launches
