"""embedding_bag: sums, means or maxima of bags of embedding rows without materialising the
rows, as torch.nn.functional.embedding_bag.

One table entry, ``_embedding_bag(weight, per_sample_weights; input, starts, ends ...) ->
(out, max_indices)`` (the index tensors are attributes: read in their own dtype), with a Triton kernel (kernels/embedding_bag.py: one program per bag and
column block, walking the bag in order) and a NumPy reference (backends/numpy_embedding_bag.py).
Its backward is written in table ops (so it differentiates again): every input position's
share of its bag's gradient (times its per-sample weight, or over the bag's count in mean mode;
none for padding_idx) scattered into the weight's rows by index_add (deterministic: no float
atomics); in max mode each column's gradient goes to the row that held the maximum. The bag of
each position (``bag_of``) is computed once on the host from the offsets, which torch's checks
read there too.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..backends import numpy_embedding_bag
from ..backends.base import backend_for
from ..backends.triton import embedding_bag as teb
from . import elementwise as _ew
from .creation import arange, tensor, zeros
from .dispatch import dispatch
from .table import Meta, op

MODES = {"sum": 0, "mean": 1, "max": 2}


def _rule(weight, per_sample_weights=None, *, starts, mode, **_):
    B, D = int(starts.shape[0]), int(weight.shape[1])
    return (Meta((B, D), weight.dtype, _dt.compute_dtype(weight.dtype)),
            Meta((B, D) if mode == 2 else (0, D), _dt.int64))


def _launch(outs, weight, per_sample_weights=None, *, input, starts, ends, compute, mode, padding_idx, **_):
    teb.embedding_bag(outs, weight, input, starts, ends, per_sample_weights, mode, padding_idx, compute)


def _backward(ctx, g, g_indices=None):
    """EmbeddingBagBackward0: the gradients of the weight and the per-sample weights."""
    needs = ctx.needs_input_grad
    weight_meta = ctx.input_meta[0]
    N, D = int(weight_meta[0][0]), int(weight_meta[0][1])
    input, bag_of, mode = ctx.input, ctx.bag_of, ctx.mode
    g_weight = g_psw = None
    if g.shape[0] == 0:     # no bags: nothing reached any row
        g_weight = zeros((N, D), dtype=g.dtype, device=g.device) if needs[0] else None
        g_psw = zeros(ctx.per_sample_weights.shape, dtype=g.dtype, device=g.device) \
            if needs[1] and ctx.per_sample_weights is not None else None
        return g_weight, g_psw
    if needs[0]:
        if mode == 2:
            idx = ctx.max_indices
            held = _ew.ge(idx, 0)
            flat = (_ew.where(held, idx, 0) * D + arange(D, device=g.device)).reshape(-1)
            vals = _ew.where(held, g, 0.0).reshape(-1)
            g_weight = zeros(N * D, dtype=g.dtype, device=g.device).index_add(0, flat, vals).reshape(N, D)
        else:
            rows = g.index_select(0, bag_of)
            scale = ctx.position_scale
            if ctx.per_sample_weights is not None:
                scale = scale * ctx.per_sample_weights
            rows = rows * scale.unsqueeze(1).to(rows.dtype)
            g_weight = zeros((N, D), dtype=g.dtype, device=g.device).index_add(0, input.to(_dt.int64), rows)
    if needs[1] and ctx.per_sample_weights is not None:      # sum mode: d out[b] / d psw[p] = weight[input[p]]
        picked = ctx.weight.index_select(0, input.to(_dt.int64))
        keep = ctx.keep.unsqueeze(1).to(picked.dtype)
        g_psw = (g.index_select(0, bag_of) * picked * keep).sum(1)
    return g_weight, g_psw


EMBEDDING_BAG = op("_embedding_bag", ("weight", "per_sample_weights"),
                   outputs=("out", "max_indices"), rule=_rule, reference=numpy_embedding_bag.embedding_bag,
                   kernel=_launch, backward=_backward, saves=("weight", "per_sample_weights", "max_indices"),
                   grad_name="EmbeddingBagBackward0")


def _check_indices(input, offsets):
    for name, t in (("indices", input), ("offsets", offsets)):
        if t.dtype not in (_dt.int64, _dt.int32):
            arg = "#1 'indices'" if name == "indices" else "#2 'offsets'"
            raise RuntimeError(f"Expected tensor for argument {arg} to have one of the following scalar types: Long, "
                               f"Int; but got {_type_name(t)} instead (while checking arguments for embedding_bag)")


def _type_name(t):
    prefix = backend_for(t.device).torch_name("torch.", "torch.cuda.")
    return prefix + _dt.type_name(t.dtype) + "Tensor"


def embedding_bag_forward(weight, input, offsets, scale_grad_by_freq, mode, per_sample_weights, include_last_offset,
                          padding_idx):
    """torch.embedding_bag's work on a 1-D input with offsets (mode 0 sum, 1 mean, 2 max):
    (output (B, D), max_indices). The host reads the offsets and indices for torch's checks
    and to know each position's bag."""
    _check_indices(input, offsets)
    N = int(weight.shape[0])
    if padding_idx is not None:
        if not -N <= padding_idx < N:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, {-N} through {N - 1}, but got "
                               f"{padding_idx}")
        if padding_idx < 0:
            padding_idx += N
    host_off = np.asarray(offsets.detach()._to_host_array(), dtype=np.int64).reshape(-1)
    host_idx = np.asarray(input.detach()._to_host_array(), dtype=np.int64).reshape(-1)
    P = host_idx.size
    if host_off.size and host_off[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {host_off[0]}")
    if host_off.size and host_off[-1] > P:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {P} but got offsets[-1] of "
                           f"{host_off[-1]}")
    if np.any(host_off[1:] < host_off[:-1]):
        raise RuntimeError("Expected i < index_size to be true, but got false.  (Could this error message be improved?  "
                           "If so, please report an enhancement request to PyTorch.)")     # torch's text for it
    bad = np.nonzero((host_idx < 0) | (host_idx >= N))[0]
    if bad.size:
        raise RuntimeError(f"Index {bad[0]} of input takes value {host_idx[bad[0]]} which is not in the valid range "
                           f"[0, {N})")
    # bag b covers [offsets[b], offsets[b + 1]); the last bag runs to the end of the input, also
    # with include_last_offset (whose last offset only closes the count of bags), as torch's cpu
    starts_h = host_off[:-1] if include_last_offset else host_off
    B = starts_h.size
    ends_h = np.append(starts_h[1:], P) if B else np.zeros(0, np.int64)
    bag_of_h = np.repeat(np.arange(B), ends_h - starts_h) if B else np.zeros(P, np.int64)
    pad = -1 if padding_idx is None else padding_idx
    keep = (host_idx != pad).astype(np.float64) if B else np.zeros(P)
    counts = np.bincount(bag_of_h, weights=keep, minlength=B) if P else np.zeros(B)
    valid = keep / np.maximum(counts[bag_of_h], 1) if mode == 1 and P else keep.copy()
    if scale_grad_by_freq and P:
        # torch 2.13's cpu kernel scales the j-th distinct index (in sorted order) by one over the
        # count of sorted_indices[j], not of that index itself; tritensor gives torch's gradients
        freq = np.bincount(host_idx, minlength=N)
        order = np.sort(host_idx)
        distinct = np.unique(host_idx)
        scale = np.zeros(N)
        scale[distinct] = 1.0 / freq[order[:distinct.size]]
        valid = valid * scale[host_idx]
    dev = weight.device
    starts, ends = tensor(starts_h.astype(np.int64), device=dev), tensor(ends_h.astype(np.int64), device=dev)
    if per_sample_weights is not None and per_sample_weights.dtype is not weight.dtype:
        raise RuntimeError(f"expected scalar type {_dt.type_name(weight.dtype)} but found "
                           f"{_dt.type_name(per_sample_weights.dtype)}")
    out, max_indices = dispatch(EMBEDDING_BAG, weight, per_sample_weights, input=input, starts=starts, ends=ends,
                                mode=int(mode),
                                padding_idx=padding_idx, bag_of=tensor(bag_of_h, device=dev),
                                position_scale=tensor(valid, dtype=_dt.compute_dtype(weight.dtype), device=dev),
                                keep=tensor(keep, dtype=_dt.compute_dtype(weight.dtype), device=dev))
    return out, max_indices


