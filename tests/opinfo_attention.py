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
from opinfo import (CPU_ONLY_GRADGRAD, GRAD_CASES, NO_DERIVATIVE, NO_SECOND_DERIVATIVE, PARITY_ESCAPES, SampleInput,  # noqa: F401
                    record, rng_for, table_op)
from tritensor.ops.attention import flash_attention

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


def _cpu_or_gpu(case):
    """The public function's gradients on cpu and real GPUs: on the emulated device its kernels'
    gradients are checked by flash_attention_forward's case and tests/test_attention.py."""
    def make(device):
        if device != "cpu" and tt.cuda.is_emulated():
            import pytest
            pytest.skip("checked through flash_attention_forward's case on the emulated device")
        return case(device)
    return make


GRAD_CASES["nn.functional.scaled_dot_product_attention"] = _cpu_or_gpu(_grad_case)
# the fused path's backward has no derivative, as torch's flash backward (the math path's second
# derivative: tests/test_attention.py)
_BACKWARD = "_scaled_dot_product_flash_attention_backward"
NO_SECOND_DERIVATIVE["nn.functional.scaled_dot_product_attention"] = _BACKWARD


# --------------------------------------------------------------------------- the table entries
def _entry_grad_case(device):
    """flash_attention_forward itself: GQA (2 query heads on 1 key head), a float mask, the
    causal triangle from the bottom right (the efficient kernel's custom_mask_type 2)."""
    rng = rng_for("flash_attention_forward-grad")

    def make(*shape):
        return tt.tensor(rng.standard_normal(shape), dtype=tt.float64, device=device, requires_grad=True)

    mask = tt.tensor(rng.standard_normal((1, 2, 2, 3)), dtype=tt.float64, device=device)
    return (lambda q, k, v: flash_attention(q, k, v, mask, scale=0.7, is_causal=True, causal_shift=1)[0],
            (make(1, 2, 2, 3), make(1, 1, 3, 3), make(1, 1, 3, 2)), {})


def _backward_grad_case(device):
    rng = rng_for("flash_attention_backward-grad")

    def make(*shape, grad=False):
        return tt.tensor(rng.standard_normal(shape), dtype=tt.float64, device=device, requires_grad=grad)

    q, k, v = make(1, 1, 2, 3), make(1, 1, 3, 3), make(1, 1, 3, 2)
    out, lse, _, _ = flash_attention(q, k, v, scale=0.5)
    attrs = dict(mask=None, scale=0.5, is_causal=False, dropout_p=0.0, seed=0, offset=0)
    return (lambda g: table_op("flash_attention_backward", g, q, k, v, out, lse, **attrs),
            (make(1, 1, 2, 2, grad=True),), {})


GRAD_CASES["flash_attention_forward"] = _entry_grad_case
NO_SECOND_DERIVATIVE["flash_attention_forward"] = _BACKWARD
GRAD_CASES["flash_attention_backward"] = _backward_grad_case
NO_DERIVATIVE["flash_attention_backward"] = _BACKWARD
PARITY_ESCAPES["flash_attention_forward"] = ("through nn.functional.scaled_dot_product_attention's and the aten "
                                             "operators' records (tests/opinfo_attention.py) and tests/test_attention.py")
PARITY_ESCAPES["flash_attention_backward"] = ("the gradients of tests/test_attention.py (torch's recorded values, "
                                              "dropout's mask) and the gradient cases here")


# --------------------------------------------------------------------------- the aten operators
def _lse_reference(q, k, mask, scale, shift):
    """log-sum-exp of each row's scores (+inf for a row no key takes part in), (B, H, L)."""
    scores = (q @ np.swapaxes(k, -1, -2)) * scale
    L, S = q.shape[-2], k.shape[-2]
    if shift is not None:
        scores = np.where(np.arange(S)[None, :] <= np.arange(L)[:, None] + shift, scores, -np.inf)
    if mask is not None:
        scores = scores + mask
    m = scores.max(-1, keepdims=True, initial=-np.inf)
    z = np.exp(scores - np.where(np.isneginf(m), 0, m)).sum(-1, keepdims=True)
    return np.where(z > 0, (m + np.log(np.where(z > 0, z, 1))), np.inf)[..., 0]


def _bshd_samples(name):
    def samples(device, dtype):
        rng = rng_for(name, dtype)

        def make(*shape):       # (B, H, n, E) values handed over as a (B, n, H, E) view, as op_db does
            return tt.tensor(rng.standard_normal(shape), dtype=dtype, device=device).transpose(1, 2)

        if name == "flash":
            yield SampleInput((make(2, 2, 11, 16), make(2, 2, 33, 16), make(2, 2, 33, 16), None, None, 11, 33, 0.0,
                               True, False), desc="causal-odd")
            yield SampleInput((make(1, 4, 17, 8), make(1, 2, 9, 8), make(1, 2, 9, 8), None, None, 17, 9, 0.0, False,
                               False), {"scale": 1.0}, desc="gqa-scale")
        else:
            bias = tt.tensor(rng.standard_normal((1, 2, 11, 20)), dtype=dtype, device=device)
            for mask_type in (0, 1, 2):
                yield SampleInput((make(2, 2, 11, 16), make(2, 2, 20, 16), make(2, 2, 20, 16), bias, None, None, None,
                                   None, 0.0, mask_type, True), desc=f"bias-mask-type-{mask_type}")
    return samples


def _bshd(a):
    return np.swapaxes(np.asarray(a, np.float64), 1, 2)


def _flash_reference(q, k, v, cq, ck, mq, mk, p, is_causal, debug, scale=None):
    q, k, v = _bshd(q), _bshd(k), _bshd(v)
    s = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    out = attention_reference(q, k, v, is_causal=is_causal, scale=s, enable_gqa=True)
    kk = np.repeat(k, q.shape[1] // k.shape[1], axis=1)
    return np.swapaxes(out, 1, 2), _lse_reference(q, kk, None, s, 0 if is_causal else None)


def _efficient_reference(q, k, v, bias, cq, ck, mq, mk, p, mask_type, compute_lse, scale=None):
    q, k, v = _bshd(q), _bshd(k), _bshd(v)
    s = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    L, S = q.shape[2], k.shape[2]
    shift = {0: None, 1: 0, 2: S - L}[mask_type]
    mask = np.asarray(bias, np.float64)
    if shift is not None:
        mask = mask + np.where(np.arange(S)[None, :] <= np.arange(L)[:, None] + shift, 0.0, -np.inf)
    out = attention_reference(q, k, v, mask, scale=s)
    lse = _lse_reference(q, k, np.asarray(bias, np.float64), s, shift)
    padded = np.full(lse.shape[:-1] + (32,), np.inf)
    padded[..., :L] = lse
    return np.swapaxes(out, 1, 2), padded


_ATEN_TOL = {tt.float16: (5e-3, 5e-3), tt.bfloat16: (3e-2, 3e-2), tt.float32: (2e-5, 2e-5), tt.float64: (1e-10, 1e-10)}
record("ops.aten._flash_attention_forward", lambda *a, **k: tt.ops.aten._flash_attention_forward(*a, **k)[:2],
       (tt.float16, tt.bfloat16, tt.float32), _bshd_samples("flash"), _flash_reference, tolerances=_ATEN_TOL,
       op_db=("torch.ops.aten._flash_attention_forward",))
record("ops.aten._efficient_attention_forward",
       lambda *a, **k: tt.ops.aten._efficient_attention_forward(*a, **k)[:2],
       (tt.float16, tt.float32), _bshd_samples("efficient"), _efficient_reference, tolerances=_ATEN_TOL,
       op_db=("torch.ops.aten._efficient_attention_forward",))
NO_SECOND_DERIVATIVE["flash_attention_backward"] = _BACKWARD
# the second derivatives raise (torch's flash backward has none): checked on cpu, where it is cheap
CPU_ONLY_GRADGRAD.update({"nn.functional.scaled_dot_product_attention", "flash_attention_forward",
                          "flash_attention_backward"})
