"""F.multi_head_attention_forward and its helpers, as torch.nn.functional's (PyTorch 2.13).

A composite of tritensor ops, step for step as torch's: the in-projection (one packed linear for
self-attention, or three), bias_k/bias_v and the zero attention column, the key padding mask
merged into the attention mask, then either the explicit softmax(Q K^T / sqrt(d)) V (need_weights:
the weights are returned, averaged over the heads or not) or F.scaled_dot_product_attention
(need_weights=False), and the out-projection. Masks are canonicalised as torch's
``_canonical_mask``: a bool mask becomes an additive float mask (-inf where True).
"""
from __future__ import annotations

import math
import warnings

from .. import dtypes as _dt
from ..ops import creation as _creation
from ..ops import joining as _joining
from ..ops import linalg as _linalg
from ..ops.attention import scaled_dot_product_attention as _sdpa
from ..ops.linalg import linear
from ..ops.padding import pad as _pad
from ..ops.softmax import softmax as _softmax


def _dropout(x, p):
    # nn.functional imports this module (it re-exports the functions below): imported on use
    from .functional import dropout
    return dropout(x, p=p)


def _size(shape):
    """torch.Size's repr of a shape (the error texts show it)."""
    return "torch.Size([" + ", ".join(str(int(s)) for s in shape) + "])"


def _is_float(t):
    return t.dtype.is_floating_point


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """torch's F._canonical_mask: a bool mask as an additive float mask of ``target_type`` (-inf
    where True); a float mask unchanged; any other dtype refused. A mask whose dtype differs from
    ``other_type`` warns (torch's deprecation)."""
    if mask is not None:
        mask_dtype = mask.dtype
        is_float = _is_float(mask)
        if mask_dtype is not _dt.bool_ and not is_float:
            raise AssertionError(f"only bool and floating types of {mask_name} are supported")
        if check_other and other_type is not None and mask_dtype is not other_type:
            warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for "
                          "both instead.", stacklevel=2)
        if not is_float:
            mask = _creation.zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _none_or_dtype(input):
    from ..tensor import Tensor
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the inputs are batched (3-D query) or not (2-D), with torch's shape checks."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                                 f"{attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3:
                expected = (num_heads, int(query.shape[0]), int(key.shape[0]))
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                         f"{_size(attn_mask.shape)}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query tensor")


def _in_projection_packed(q, k, v, w, b=None):
    """q, k, v projected by the packed (3E, E) weight: one linear for self-attention, one for q
    and one for the (k, v) pair when k is v, three otherwise (torch's order and layout)."""
    E = int(q.shape[-1])
    if k is v:
        if q is k:
            proj = linear(q, w, b)
            proj = proj.unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([E, E * 2])
        b_q, b_kv = (None, None) if b is None else b.split([E, E * 2])
        q_proj = linear(q, w_q, b_q)
        kv_proj = linear(k, w_kv, b_kv)
        kv_proj = kv_proj.unflatten(-1, (2, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return q_proj, kv_proj[0], kv_proj[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    """Three projections with separate weights (kdim / vdim other than embed_dim)."""
    Eq, Ek, Ev = int(q.shape[-1]), int(k.shape[-1]), int(v.shape[-1])
    for name, t, want in (("query weights", w_q, (Eq, Eq)), ("key weights", w_k, (Eq, Ek)),
                          ("value weights", w_v, (Eq, Ev)), ("query bias", b_q, (Eq,)), ("key bias", b_k, (Eq,)),
                          ("value bias", b_v, (Eq,))):
        if t is not None and tuple(t.shape) != want:
            raise AssertionError(f"expecting {name} shape of {want}, but got {_size(t.shape)}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """torch.nn.functional.multi_head_attention_forward: query (L, N, E) or (L, E), key/value
    (S, N, E*) or (S, E*) -> (attn_output (L, N, E), attn_weights (N, L, S) averaged over the
    heads, (N, num_heads, L, S) with average_attn_weights=False, or None without need_weights)."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:      # computed as a batch of one, squeezed at the end
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)

    tgt_len, bsz, embed_dim = (int(s) for s in query.shape)
    src_len = int(key.shape[0])
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask",
                                       query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None        # SDPA's is_causal stands for the mask
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False   # the merged mask is no longer causal

    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {_size(key.shape[:2])} do not match value's "
                                 f"{_size(value.shape[:2])}")
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {_size(key.shape)} does not match value shape {_size(value.shape)}")

    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, t in (("q_proj_weight", q_proj_weight), ("k_proj_weight", k_proj_weight),
                        ("v_proj_weight", v_proj_weight)):
            if t is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name} is None")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v)

    if attn_mask is not None:       # as (1 or N * heads, L, S)
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {_size(attn_mask.shape)}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {_size(attn_mask.shape)}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:       # one more key / value position
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = _joining.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _joining.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = _pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = _pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    # (N * heads, L or S, head_dim), batch first
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.view(int(k.shape[0]), bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if int(static_k.shape[0]) != bsz * num_heads:
            raise AssertionError(f"expecting static_k.size(0) of {bsz * num_heads}, but got {int(static_k.shape[0])}")
        if int(static_k.shape[2]) != head_dim:
            raise AssertionError(f"expecting static_k.size(2) of {head_dim}, but got {int(static_k.shape[2])}")
        k = static_k
    if static_v is None:
        v = v.view(int(v.shape[0]), bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if int(static_v.shape[0]) != bsz * num_heads:
            raise AssertionError(f"expecting static_v.size(0) of {bsz * num_heads}, but got {int(static_v.shape[0])}")
        if int(static_v.shape[2]) != head_dim:
            raise AssertionError(f"expecting static_v.size(2) of {head_dim}, but got {int(static_v.shape[2])}")
        v = static_v

    if add_zero_attn:       # a key / value of zeros every query may attend to
        zero_shape = (bsz * num_heads, 1, head_dim)
        k = _joining.cat([k, _creation.zeros(zero_shape, dtype=k.dtype, device=k.device)], 1)
        v = _joining.cat([v, _creation.zeros(zero_shape, dtype=v.dtype, device=v.device)], 1)
        if attn_mask is not None:
            attn_mask = _pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = _pad(key_padding_mask, (0, 1))
    src_len = int(k.shape[1])

    if key_padding_mask is not None:     # merged into the attention mask, per head
        if int(key_padding_mask.shape[0]) != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{int(key_padding_mask.shape[0])}")
        if int(key_padding_mask.shape[1]) != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{int(key_padding_mask.shape[1])}")
        key_padding_mask = (key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
                            .reshape(bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask

    if not training:
        dropout_p = 0.0

    if need_weights:
        _, _, E = (int(s) for s in q.shape)
        q_scaled = q * math.sqrt(1.0 / float(E))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        if attn_mask is not None:
            weights = _linalg.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = _linalg.bmm(q_scaled, k.transpose(-2, -1))
        weights = _softmax(weights, -1)
        if dropout_p > 0.0:
            weights = _dropout(weights, dropout_p)
        out = _linalg.bmm(weights, v)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias)
        out = out.view(tgt_len, bsz, int(out.shape[1]))
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights

    if attn_mask is not None:       # (1, L, S) -> (1, 1, L, S); (N * heads, L, S) -> (N, heads, L, S)
        if int(attn_mask.shape[0]) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = _sdpa(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, int(out.shape[1]))
    if not is_batched:
        out = out.squeeze(1)
    return out, None
