"""Scaled dot-product attention: torch.nn.functional.scaled_dot_product_attention.

    out = dropout(softmax(scale * Q K^T + mask)) V

with torch's signature and semantics (torch/nn/functional.py, aten's
_scaled_dot_product_attention_math in aten/src/ATen/native/transformers/attention.cpp):
  - query (..., Hq, L, E), key (..., Hk, S, E), value (..., Hv, S, Ev) -> (..., Hq, L, Ev); at
    least 2-d; batch dims broadcast as matmul broadcasts them
  - attn_mask: bool (True = takes part) or additive float (float32 or the query's dtype),
    broadcast to (..., Hq, L, S) as an in-place add into the scores (torch's add_: the mask may
    not widen the result)
  - is_causal: the lower triangle aligned at the top left, torch.ones(L, S).tril(); no attn_mask
    with it
  - scale: default 1 / sqrt(E)
  - enable_gqa: key / value heads repeat_interleave'd up to the query heads
  - dropout_p > 0: each attention weight dropped with probability dropout_p, the rest scaled by
    1 / (1 - dropout_p) (dropout_p <= 0: none)
  - a fully masked row (no key takes part) gives zeros and zero gradients: torch 2.13's result on
    cpu with every backend (math's _safe_softmax, the fused cpu flash kernel), recorded in
    tests/data/attention_torch.json
"""
from __future__ import annotations

import math

from .. import dtypes as _dt
from ..tensor import Tensor
from . import creation as _creation
from . import elementwise as _ew
from .linalg import matmul as _matmul
from .softmax import safe_softmax as _safe_softmax
from .surface import declare

_TYPEMETA = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
             "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
             "uint8": "unsigned char", "bool": "bool"}


def _typemeta(dtype):
    return _TYPEMETA.get(dtype.name, dtype.name)


def _device_type(t):
    return t.device.type


# --------------------------------------------------------------------------- argument checks
def _check_arguments(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    """torch's argument parsing and validate_sdpa_input, in torch's order and words."""
    for pos, (name, t) in enumerate((("query", query), ("key", key), ("value", value)), 1):
        if not isinstance(t, Tensor):
            raise TypeError(f"scaled_dot_product_attention(): argument '{name}' (position {pos}) must be "
                            f"Tensor, not {type(t).__name__}")
    if attn_mask is not None and not isinstance(attn_mask, Tensor):
        raise TypeError("scaled_dot_product_attention(): argument 'attn_mask' (position 4) must be Tensor, "
                        f"not {type(attn_mask).__name__}")
    if isinstance(dropout_p, Tensor) or not isinstance(dropout_p, (int, float)):
        raise TypeError("scaled_dot_product_attention(): argument 'dropout_p' (position 5) must be float, "
                        f"not {type(dropout_p).__name__}")
    if scale is not None and (isinstance(scale, Tensor) or not isinstance(scale, (int, float))):
        raise TypeError("scaled_dot_product_attention(): argument 'scale' must be float, not "
                        f"{type(scale).__name__}")
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError("Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{_typemeta(query.dtype)} key.dtype: {_typemeta(key.dtype)} and value.dtype: "
                           f"{_typemeta(value.dtype)} instead.")
    if not (query.device == key.device == value.device):
        raise RuntimeError("Expected query, key, and value to have the same device type, but got query.device: "
                           f"{query.device} key.device: {key.device} and value.device: {value.device} instead.")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError("Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
    if attn_mask is not None:
        if attn_mask.dtype not in (_dt.bool_, _dt.float32, query.dtype):
            raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                               f"attn_mask.dtype: {_typemeta(attn_mask.dtype)} and  query.dtype: "
                               f"{_typemeta(query.dtype)} instead.")
        if attn_mask.device != query.device:
            raise RuntimeError("Expected all tensors to be on the same device, but found at least two devices, "
                               f"{query.device} and {attn_mask.device}!")
    if not query.dtype.is_floating_point:
        raise RuntimeError(f"expected scalar type Float but found {_dt.type_name(query.dtype)}")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    if enable_gqa:
        hq, hk, hv = query.size(-3), key.size(-3), value.size(-3)
        if hq % hk or hq % hv:
            raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
    # (the order of torch's math path: the scores' matmul, the mask's add, dropout, the output's matmul)
    qk_batch, _ = _shapes(query, key, value, enable_gqa)
    if attn_mask is not None:
        _check_mask_shape(tuple(attn_mask.shape), qk_batch + (query.size(-2), key.size(-2)))
    if dropout_p > 0.0 and dropout_p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {float(dropout_p)}")


def _broadcast_error(a, b):
    """torch's message for shapes that do not broadcast (the first mismatching dim from the right)."""
    for i in range(1, min(len(a), len(b)) + 1):
        if a[-i] != b[-i] and a[-i] != 1 and b[-i] != 1:
            return RuntimeError(f"The size of tensor a ({a[-i]}) must match the size of tensor b ({b[-i]}) at "
                                f"non-singleton dimension {max(len(a), len(b)) - i}")
    return None


def _check_mask_shape(mask_shape, scores_shape):
    """The mask is added into the scores in place (torch's attn.add_(mask)): it must broadcast to
    the scores' shape without widening it."""
    error = _broadcast_error(tuple(scores_shape), tuple(mask_shape))
    if error is not None:
        raise error
    n = max(len(mask_shape), len(scores_shape))
    a = (1,) * (n - len(scores_shape)) + tuple(scores_shape)
    b = (1,) * (n - len(mask_shape)) + tuple(mask_shape)
    full = tuple(max(x, y) if min(x, y) != 0 else 0 for x, y in zip(a, b))
    if full != tuple(scores_shape):
        sa = ", ".join(map(str, scores_shape))
        sf = ", ".join(map(str, full))
        raise RuntimeError(f"output with shape [{sa}] doesn't match the broadcast shape [{sf}]")


def _matmul_check(batch, a, b):
    """torch's matmul error for scores = a @ b when a's columns are not b's rows (a, b: the
    last two sizes; batch: the folded batch size, None for 2-d operands, which take mm)."""
    if a[1] == b[0]:
        return
    if batch is None:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a[0]}x{a[1]} and {b[0]}x{b[1]})")
    raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, {a[1]}] but "
                       f"got: [{batch}, {b[0]}].")


def _shapes(query, key, value, enable_gqa):
    """The broadcast batch shape of the scores (..., Hq, L, S) and of the output, with torch's
    matmul errors for mismatched E (query @ key^T) and S (weights @ value)."""
    kshape, vshape = list(key.shape), list(value.shape)
    if enable_gqa:   # the repeat_interleave'd heads
        kshape[-3] = query.size(-3)
        vshape[-3] = query.size(-3)
    L, E, S = query.size(-2), query.size(-1), key.size(-2)
    qk_batch = tuple(_ew.broadcast_shapes(tuple(query.shape[:-2]), tuple(kshape[:-2])))
    two_d = query.dim() == 2 and key.dim() == 2
    _matmul_check(None if two_d else math.prod(qk_batch), (L, E), (key.size(-1), S))
    batch = tuple(_ew.broadcast_shapes(qk_batch, tuple(vshape[:-2])))
    two_d = two_d and value.dim() == 2
    _matmul_check(None if two_d else math.prod(batch), (L, S), (value.size(-2), value.size(-1)))
    return qk_batch, batch


def _scale_value(query, scale):
    if scale is None:
        e = query.size(-1)
        return 1.0 / math.sqrt(e) if e else math.inf
    return float(scale)


# --------------------------------------------------------------------------- the math formulation
def _repeat_heads(t, hq, enable_gqa):
    if not enable_gqa or t.dim() < 3 or t.size(-3) == hq:
        return t
    return t.repeat_interleave(hq // t.size(-3), dim=-3)


def math_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                   enable_gqa=False):
    """torch's _scaled_dot_product_attention_math, in tritensor ops: the L x S scores are held
    in memory (the flash path never holds them). Twice differentiable, and the only path that
    gives a float attn_mask a gradient (as torch, whose fused kernels do not either)."""
    s = _scale_value(query, scale)
    root = math.sqrt(abs(s)) if math.isfinite(s) else math.inf
    q = query * (-root if s < 0 else root)
    mask = attn_mask
    if is_causal:
        L, S = query.size(-2), key.size(-2)
        mask = _creation.ones(L, S, dtype=_dt.bool_, device=query.device).tril()
    if mask is not None and mask.dtype is _dt.bool_:
        mask = _ew.where(mask, 0.0, -math.inf).to(query.dtype)
    k = _repeat_heads(key, query.size(-3) if query.dim() >= 3 else 1, enable_gqa)
    v = _repeat_heads(value, query.size(-3) if query.dim() >= 3 else 1, enable_gqa)
    if query.size(-1) == 0:      # torch scales the empty operands: the scores are exactly 0
        scores = _matmul(query, k.transpose(-2, -1))
    else:
        scores = _matmul(q, k.transpose(-2, -1) * root)
    if mask is not None:
        _check_mask_shape(tuple(mask.shape), tuple(scores.shape))
        scores = (scores + mask).to(scores.dtype)       # torch adds in place: the scores' dtype stays
    weights = _safe_softmax(scores, -1)
    if dropout_p > 0.0:      # torch's at::dropout(weights, p, train=True)
        if dropout_p == 1.0:
            weights = weights * 0.0
        else:
            keep = _ew.lt(_creation.rand_like(weights), 1.0 - dropout_p)
            weights = weights * _ew.where(keep, 1.0 / (1.0 - dropout_p), 0.0).to(weights.dtype)
    return _matmul(weights, v)


# --------------------------------------------------------------------------- the public function
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """torch.nn.functional.scaled_dot_product_attention (see the module docstring)."""
    _check_arguments(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    return math_attention(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)


declare("scaled_dot_product_attention", method=False, functional="own")   # tt.nn.functional's only
