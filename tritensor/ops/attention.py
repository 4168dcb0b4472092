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
from ..autograd.grad_mode import is_grad_enabled as _grad_enabled
from ..backends import numpy_attention
from ..backends.triton import attention as triton_attention
from ..tensor import Tensor
from . import creation as _creation
from . import elementwise as _ew
from .dispatch import dispatch
from .generators import generator_for
from .table import Meta, op
from .linalg import matmul as _matmul
from .softmax import safe_softmax as _safe_softmax
from .surface import declare

_TYPEMETA = _dt.CPP_NAMES


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


# --------------------------------------------------------------------------- the flash entries
# The entries take 4-d views: q (Z, H, L, E), k (Z, Hk, S, E), v (Z, Hk, S, Ev), H a multiple of Hk
# (query head h reads key head h // (H // Hk)); the mask (Z, H, L, S) view rides as an attribute
# (its own dtype, bool or float, never cast to the compute dtype, and given no gradient here).
_BACKWARD_NAME = "_scaled_dot_product_flash_attention_backward"


def _forward_rule(q, k, v, **_):
    Z, H, L, _e = q.shape
    return (Meta((Z, H, L, v.shape[3]), q.dtype, _dt.compute_dtype(q.dtype)),
            Meta((Z, H, L), _dt.compute_dtype(q.dtype), _dt.compute_dtype(q.dtype)))   # float32 (float64)


def _forward_launch(outs, q, k, v, *, compute, **attrs):
    triton_attention.forward(*outs, q, k, v, compute=compute, **attrs)


def _backward_rule(g, q, k, v, out, lse, **_):
    compute = _dt.compute_dtype(q.dtype)
    return (Meta(tuple(q.shape), q.dtype, compute), Meta(tuple(k.shape), q.dtype, compute),
            Meta(tuple(v.shape), q.dtype, compute))


def _backward_launch(outs, g, q, k, v, out, lse, *, compute, **attrs):
    triton_attention.backward(*outs, g, q, k, v, out, lse, compute=compute, **attrs)


def _flash_backward(ctx, g_out, g_lse=None):
    """The kernels' dQ, dK, dV (the log-sum-exp's own gradient is not taken, as torch's flash)."""
    if g_out is None:
        return None, None, None
    return dispatch(FLASH_ATTENTION_BACKWARD, g_out, ctx.q, ctx.k, ctx.v, ctx.output, ctx.lse, mask=ctx.mask,
                    scale=ctx.scale, is_causal=ctx.is_causal, dropout_p=ctx.dropout_p, seed=ctx.seed,
                    offset=ctx.offset, causal_shift=ctx.causal_shift)


def _no_second_derivative(ctx, *grads):
    raise NotImplementedError(f"the derivative for '{_BACKWARD_NAME}' is not implemented.")


FLASH_ATTENTION_BACKWARD = op("flash_attention_backward", ("grad", "q", "k", "v", "out", "lse"),
                              outputs=("dq", "dk", "dv"), rule=_backward_rule,
                              reference=numpy_attention.attention_backward, kernel=_backward_launch,
                              backward=_no_second_derivative,
                              grad_name="ScaledDotProductFlashAttentionBackwardBackward0")
FLASH_ATTENTION_FORWARD = op("flash_attention_forward", ("q", "k", "v"), outputs=("output", "lse"),
                             rule=_forward_rule, reference=numpy_attention.attention_forward,
                             kernel=_forward_launch, backward=_flash_backward,
                             saves=("q", "k", "v", "output", "lse"),
                             grad_name="ScaledDotProductFlashAttentionBackward0")


def flash_attention(q, k, v, mask=None, *, scale, is_causal=False, dropout_p=0.0, causal_shift=0, generator=None):
    """(out, lse) of the flash entry on 4-d views (see above); with is_causal, key j takes part in
    row i when j <= i + causal_shift. Dropout draws its Philox stream position from
    ``generator`` (the device's default), advancing it past every score. Returns
    (out, lse, seed, offset)."""
    seed = offset = 0
    if dropout_p > 0:
        gen = generator if generator is not None else generator_for(q.device)
        Z, H, L, _e = q.shape
        seed, offset = gen._kernel_seed(), gen._take_offset(4 * Z * H * L * k.shape[2])
    out, lse = dispatch(FLASH_ATTENTION_FORWARD, q, k, v, mask=mask, scale=float(scale), is_causal=bool(is_causal),
                        dropout_p=float(dropout_p) if dropout_p > 0 else 0.0, seed=seed, offset=offset,
                        causal_shift=int(causal_shift))
    return out, lse, seed, offset


def _as_4d(t, lead, heads):
    """t expanded to lead + (heads, n, e) and folded to (Z, heads, n, e) (a view where it can be)."""
    shape = tuple(lead) + (heads,) + tuple(t.shape[-2:])
    if len(lead) == 1 and tuple(t.shape) == shape:
        return t
    return t.expand(*shape).reshape(math.prod(lead), heads, *t.shape[-2:])


def _flash_path(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    heads = [t.size(-3) if t.dim() >= 3 else 1 for t in (query, key, value)]
    lead = tuple(_ew.broadcast_shapes(*(tuple(t.shape[:-3]) for t in (query, key, value))))
    if enable_gqa:
        H = heads[0]
    else:
        H = max(heads) if min(heads) else 0
    hk, hv = heads[1], heads[2]
    if hk != hv:             # one head count for both: GQA repeats them, broadcasting expands them
        if enable_gqa:
            key = _repeat_heads(key, H, True) if hk != H else key
            value = _repeat_heads(value, H, True) if hv != H else value
        hk = hv = H
    q = _as_4d(query, lead, H)
    k = _as_4d(key, lead, hk)
    v = _as_4d(value, lead, hv)
    L, S = q.shape[2], k.shape[2]
    mask = None
    if attn_mask is not None:
        mask = attn_mask.detach()
        full = tuple(lead) + (H, L, S)
        if mask.dim() > len(full):       # (leading 1s: _check_mask_shape)
            mask = mask.reshape(tuple(mask.shape)[mask.dim() - len(full):])
        mask = mask.expand(*full).reshape(math.prod(lead), H, L, S)
    s = _scale_value(query, scale) if query.size(-1) else 0.0     # empty head dim: the scores are 0
    out = flash_attention(q, k, v, mask, scale=s, is_causal=is_causal, dropout_p=dropout_p)[0]
    batch = tuple(_ew.broadcast_shapes(tuple(query.shape[:-2]), tuple(key.shape[:-2]) if not enable_gqa else (),
                                       tuple(value.shape[:-2]) if not enable_gqa else ()))
    if enable_gqa:
        batch = tuple(lead) + (H,)
    shape = tuple(batch) + (L, value.size(-1))
    return out if tuple(out.shape) == shape else out.reshape(shape)


# --------------------------------------------------------------------------- the aten operators
def _unsupported(fn, **named):
    for name, value in named.items():
        if value is not None:
            raise NotImplementedError(f"{fn}: {name} is not supported by tritensor's flash kernels (it must be None)")


def _check_bshd(fn, query, key, value):
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(t).__name__}")
        if t.dim() != 4:
            raise RuntimeError(f"{fn}: {name} must be 4-dimensional (batch, seqlen, heads, head_dim), got {t.dim()}-d")
    if not (query.dtype == key.dtype == value.dtype) or not query.dtype.is_floating_point:
        raise RuntimeError(f"{fn}: query, key and value must have the same floating point dtype")
    if key.shape[1] != value.shape[1] or key.shape[0] != query.shape[0] or value.shape[0] != query.shape[0]:
        raise RuntimeError(f"{fn}: key and value must have the same sequence length, and all three the same batch")
    if query.shape[3] != key.shape[3]:
        raise RuntimeError(f"{fn}: query and key must have the same head dim")
    if query.shape[2] % key.shape[2] or key.shape[2] != value.shape[2]:
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")


def _rng_tensors(dropout_p, seed, offset, device, flash):
    """torch's philox state outputs, as int64 (tritensor has no uint64 dtype)."""
    if flash:
        if dropout_p > 0:
            return _creation.tensor([seed, offset], dtype=_dt.int64, device=device)
        return _creation.empty(0, dtype=_dt.int64, device=device)
    if dropout_p > 0:
        return (_creation.tensor(seed, dtype=_dt.int64, device=device),
                _creation.tensor(offset, dtype=_dt.int64, device=device))
    return (_creation.empty(0, dtype=_dt.int64, device=device), _creation.empty(0, dtype=_dt.int64, device=device))


def flash_attention_forward_aten(query, key, value, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal,
                                 return_debug_mask, *, scale=None, window_size_left=None, window_size_right=None,
                                 seqused_k=None, alibi_slopes=None, block_table=None, num_splits=None):
    """torch.ops.aten._flash_attention_forward: query (B, L, H, E), key / value (B, S, Hk, E)
    (flash's sequence-major layout) -> (output (B, L, H, Ev), softmax_logsumexp (B, H, L) float32,
    rng_state, unused, debug_attn_mask), on the flash kernels. rng_state is (seed, offset) as
    int64 (torch: uint64) when dropout_p > 0; unused and debug_attn_mask are empty. Variable
    lengths (cum_seq_*), windows, alibi, paged KV and the debug mask are not supported."""
    fn = "_flash_attention_forward"
    _unsupported(fn, cum_seq_q=cum_seq_q, cum_seq_k=cum_seq_k, window_size_left=window_size_left,
                 window_size_right=window_size_right, seqused_k=seqused_k, alibi_slopes=alibi_slopes,
                 block_table=block_table, num_splits=num_splits)
    if return_debug_mask:
        raise NotImplementedError(f"{fn}: return_debug_mask=True is not supported (the flash kernels never "
                                  "hold the attention matrix)")
    _check_bshd(fn, query, key, value)
    q, k, v = (t.transpose(1, 2) for t in (query, key, value))
    s = _scale_value(q, scale) if q.size(-1) else 0.0
    out, lse, seed, offset = flash_attention(q, k, v, None, scale=s, is_causal=bool(is_causal),
                                             dropout_p=float(dropout_p))
    if lse.dtype is not _dt.float32:
        lse = lse.to(_dt.float32)
    empty = _creation.empty(0, dtype=query.dtype, device=query.device)
    unused = _creation.empty(0, dtype=_dt.int64, device=query.device)
    return (out.transpose(1, 2).contiguous(), lse, _rng_tensors(dropout_p, seed, offset, query.device, True),
            unused, empty)


_LSE_ALIGN = 32     # the efficient kernel's logsumexp rows are padded to a multiple of 32


def efficient_attention_forward_aten(query, key, value, bias, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                                     max_seqlen_k, dropout_p, custom_mask_type, compute_log_sumexp=False, *,
                                     scale=None, seqlen_k=None, window_size=None):
    """torch.ops.aten._efficient_attention_forward: query (B, L, H, E), key / value (B, S, Hk, E),
    bias an additive (B, H, L, S)-broadcastable float mask, custom_mask_type 0 (none), 1 (causal
    from the top left) or 2 (causal from the bottom right) -> (output (B, L, H, Ev), logsumexp
    (B, H, ceil(L / 32) * 32) float32 (+inf in the padding; empty unless compute_log_sumexp),
    philox_seed, philox_offset (int64 0-d, torch: uint64; empty without dropout), max_seqlen_batch_q,
    max_seqlen_batch_k), on the flash kernels. Variable lengths and windows are not supported."""
    fn = "_efficient_attention_forward"
    _unsupported(fn, cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k, seqlen_k=seqlen_k,
                 window_size=window_size)
    _check_bshd(fn, query, key, value)
    if custom_mask_type not in (0, 1, 2):
        raise RuntimeError(f"{fn}: custom_mask_type must be 0, 1 or 2, got {custom_mask_type}")
    q, k, v = (t.transpose(1, 2) for t in (query, key, value))
    B, H, L, _e = q.shape
    S = k.shape[2]
    mask = None
    if bias is not None:
        if bias.dtype not in (query.dtype, _dt.float32):
            raise RuntimeError(f"{fn}: bias must be of the query's dtype or float32")
        _check_mask_shape(tuple(bias.shape), (B, H, L, S))
        mask = bias.detach().expand(B, H, L, S)
    s = _scale_value(q, scale) if q.size(-1) else 0.0
    out, lse, seed, offset = flash_attention(q, k, v, mask, scale=s, is_causal=custom_mask_type != 0,
                                             dropout_p=float(dropout_p),
                                             causal_shift=S - L if custom_mask_type == 2 else 0)
    lse = lse.detach().to(_dt.float32)
    if compute_log_sumexp:
        padded = _creation.full((B, H, -(-L // _LSE_ALIGN) * _LSE_ALIGN), math.inf, dtype=_dt.float32,
                                device=query.device)
        padded[:, :, :L] = lse
        lse = padded
    else:
        lse = _creation.empty(0, dtype=_dt.float32, device=query.device)
    philox_seed, philox_offset = _rng_tensors(dropout_p, seed, offset, query.device, False)
    return out.transpose(1, 2).contiguous(), lse, philox_seed, philox_offset, L, S


# --------------------------------------------------------------------------- the public function
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """torch.nn.functional.scaled_dot_product_attention (see the module docstring)."""
    _check_arguments(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    enabled = _ENABLED[0]
    fused = not enabled.isdisjoint(_FUSED)
    # the mask's gradient is the scores' gradient: only the math formulation has it (as torch)
    if fused and not (attn_mask is not None and attn_mask.requires_grad and _grad_enabled()):
        return _flash_path(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    if _MATH in enabled:
        return math_attention(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    if not fused:
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely due to "
                           "turning off both the math kernel and the fused kernels.")
    raise RuntimeError("No available kernel.  Aborting execution.")


# --------------------------------------------------------------------------- backend selection
# torch.nn.attention.sdpa_kernel's state (tt.nn.attention): the SDPBackend values allowed now.
_MATH, _FUSED = 0, frozenset({1, 2, 3, 4})
_ENABLED = [frozenset({0, 1, 2, 3, 4})]


def set_enabled_backends(backends):
    """Allow only ``backends`` (SDPBackend values); returns the previous set."""
    previous = _ENABLED[0]
    _ENABLED[0] = frozenset(int(b) for b in backends)
    return previous


declare("scaled_dot_product_attention", method=False, functional="own")   # tt.nn.functional's only
