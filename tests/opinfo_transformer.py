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


# --------------------------------------------------------------------------- multi_head_attention_forward
def _mha_reference(query, key, value, embed_dim, num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v,
                   add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training=True, key_padding_mask=None,
                   need_weights=True, attn_mask=None, average_attn_weights=True):
    """softmax(Q K^T / sqrt(d) + masks) V per head, from the definition (float64; no bias_k /
    zero attention, no dropout: the samples use none)."""
    q, k, v = (a.astype(np.float64) for a in (query, key, value))
    L, N, E = q.shape
    S = k.shape[0]
    d = E // num_heads
    w = np.split(in_proj_weight.astype(np.float64), 3)
    b = np.split(in_proj_bias.astype(np.float64), 3) if in_proj_bias is not None else [0.0] * 3
    heads = [(t @ wi.T + bi).reshape(t.shape[0], N, num_heads, d).transpose(1, 2, 0, 3)
             for t, wi, bi in zip((q, k, v), w, b)]       # (N, H, L or S, d)
    scores = heads[0] @ heads[1].transpose(0, 1, 3, 2) / np.sqrt(d)
    if attn_mask is not None:
        am = np.where(attn_mask, -np.inf, 0.0) if attn_mask.dtype == bool else attn_mask.astype(np.float64)
        scores = scores + am.reshape((N, num_heads, L, S) if am.ndim == 3 else (1, 1, L, S))
    if key_padding_mask is not None:
        scores = scores + np.where(key_padding_mask, -np.inf, 0.0)[:, None, None, :]
    p = np.exp(scores - scores.max(-1, keepdims=True))
    p = p / p.sum(-1, keepdims=True)
    out = (p @ heads[2]).transpose(2, 0, 1, 3).reshape(L, N, E)
    out = out @ out_proj_weight.astype(np.float64).T + (out_proj_bias if out_proj_bias is not None else 0.0)
    if not need_weights:
        return out
    return out, (p.mean(1) if average_attn_weights else p)


def _mha_op(*args, **kwargs):
    out, weights = F.multi_head_attention_forward(*args, **kwargs)
    return out if weights is None else (out, weights)


def _mha_samples(device, dtype):
    """(query, key, value, E, heads, in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
    dropout_p, out_proj_weight, out_proj_bias, training, key_padding_mask, need_weights,
    attn_mask): the masks positional, so the reference gets them as arrays."""
    make = _maker(dtype, device, rng_for("multi_head_attention_forward", dtype))
    x = make((5, 3, 8))
    causal = tt.ones(5, 5, dtype=tt.bool, device=device).triu(1)
    kpm = tt.tensor([[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True]], device=device)
    yield SampleInput((x, x, x, 8, 2, make((24, 8)), make((24,)), None, None, False, 0.0, make((8, 8)), make((8,)),
                       True, kpm, True, causal), desc="self-attention-bool-masks")
    kv = make((7, 3, 8))
    yield SampleInput((make((4, 3, 8)), kv, kv, 8, 4, make((24, 8)), None, None, None, False, 0.0, make((8, 8)),
                       None, True, None, True, make((12, 4, 7))), {"average_attn_weights": False},
                      desc="cross-attention-float-mask-per-head")
    yield SampleInput((x, x, x, 8, 2, make((24, 8)), make((24,)), None, None, False, 0.0, make((8, 8)), make((8,)),
                       False, tt.zeros(3, 5, dtype=dtype, device=device).masked_fill(kpm, float("-inf")), False,
                       make((5, 5))), desc="sdpa-path-float-masks")


record("nn.functional.multi_head_attention_forward", _mha_op, (tt.float32, tt.float64), _mha_samples,
       _mha_reference, tolerances={tt.float32: (1e-4, 1e-5), tt.float64: (1e-10, 1e-10)})
# the explicit path (need_weights) differentiated through q (query, key and value at once), on
# the smallest shapes: every numerical derivative is a whole forward of interpreted matmuls
# (~0.25 s emulated); the weights' gradients are checked against torch's in test_transformer.py
GRAD_CASES["nn.functional.multi_head_attention_forward"] = lambda d: (
    lambda q: F.multi_head_attention_forward(
        q, q, q, 2, 2, tt.tensor([[0.5, -1.0], [2.0, 0.25], [1.5, 0.5], [-0.5, 1.0], [0.3, 0.7], [1.2, -0.4]],
                                 dtype=tt.float64, device=d), None, None, None, False, 0.0,
        tt.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=tt.float64, device=d), None)[0],
    (_randn((2, 1, 2), d),), {})
CPU_ONLY_GRADGRAD.add("nn.functional.multi_head_attention_forward")
