"""Launchers of kernels/pool.py: separable (average and adaptive average pooling, and their
gradients through the transposed tables), window_max (max pooling) and its gradient.

Every operand is read in place with its own strides (NCHW, channels_last, sliced, unbatched);
a tensor with k spatial dims and one or two leading dims is seen as [N, C, S0, S1, S2] (a
missing batch dim has stride 0, missing spatial dims size 1). The per-dim tables come from
backends/numpy_pool.py (the specs in the op's attributes), packed and uploaded once per device
and spec (a bounded cache: the same pooling layer reuses its tables on every call).
"""
from __future__ import annotations

import numpy as np

from ...runtime.launch import pointer
from .. import numpy_pool
from .. import triton as tb

GPU_SETTINGS = {"block": 256, "warps": 4}
INTERPRETER_SETTINGS = {"block": 64, "warps": 4}
INTERPRETER_FAST_SETTINGS = {"block": 16384, "warps": 4}   # the emulated device's default profile (_plan.py): few, large programs
_TABLE_LIMIT = 256
_TABLES: dict = {}
_K = None


def settings():
    return tb.pick(GPU_SETTINGS, INTERPRETER_FAST_SETTINGS, INTERPRETER_SETTINGS)


def _kernels():
    global _K
    if _K is None:
        tb._kernels()
        from tritensor.kernels import pool as pool_k
        _K = pool_k
    return _K


def _lift(t, k):
    """(sizes, strides) of ``t`` (one or two leading dims, then k spatial dims) as
    [N, C, S0, S1, S2]."""
    shape, strides = tuple(int(s) for s in t.shape), tuple(int(s) for s in t.stride())
    lead = len(shape) - k
    head_shape, head_strides = shape[:lead], strides[:lead]
    while len(head_shape) < 2:
        head_shape, head_strides = (1,) + head_shape, (0,) + head_strides
    extra = 3 - k
    return (head_shape + (1,) * extra + shape[lead:], head_strides + (0,) * extra + strides[lead:])


def _channels_last(sizes, strides):
    """Whether to walk the output channels innermost (its memory order)."""
    return sizes[1] > 1 and strides[1] == 1 and any(s > 1 for s in sizes[2:])


def _acc(compute):
    return tb._kernels().compute["float64" if compute == "float64" else
                                 "int64" if compute == "int64" else "float32"]


def _tables(like, dims, transposed, compute, weights):
    """(idx, w or None, q or None, counts): the packed device tables of the lifted ``dims``."""
    dtype_name = "float64" if compute == "float64" else "float32"
    key = (getattr(like._storage, "device", None), dims, transposed, dtype_name, weights)
    hit = _TABLES.get(key)
    if hit is not None:
        return hit
    specs = numpy_pool.lifted(dims)
    idx, ws, qs, counts = [], [], [], []
    for spec in specs:
        if transposed:
            entries, w = numpy_pool.transposed_table(spec, dtype_name)
            T = numpy_pool.forward_table(spec, dtype_name)[0].shape[1]
            idx.append(np.where(entries >= 0, entries // T, -1))
            ws.append(w)
            qs.append(None)
        else:
            i, w, q = numpy_pool.forward_table(spec, dtype_name)
            idx.append(i)
            ws.append(w if w is not None else np.ones(i.shape, dtype_name))
            qs.append(q if q is not None else np.ones(i.shape[0], np.int64))
        counts.append(idx[-1].shape[1])
    has_q = not transposed and any(numpy_pool.forward_table(s, dtype_name)[2] is not None for s in specs)
    has_w = weights and (transposed or any(numpy_pool.forward_table(s, dtype_name)[1] is not None for s in specs))
    packed = (tb.upload(like, np.concatenate([i.reshape(-1) for i in idx])),
              tb.upload(like, np.concatenate([w.reshape(-1) for w in ws])) if has_w else None,
              tb.upload(like, np.concatenate(qs)) if has_q else None, tuple(counts))
    if len(_TABLES) >= _TABLE_LIMIT:
        _TABLES.clear()
    _TABLES[key] = packed
    return packed


def separable(out, x, dims, transposed, compute):
    """out = the separable map of ``dims`` (transposed: its transpose) applied to x."""
    if out.numel() == 0:
        return
    k = len(dims)
    (N, C, *osz), ost = _lift(out, k)
    _, xst = _lift(x, k)
    idx, w, q, (T0, T1, T2) = _tables(out, dims, transposed, compute, weights=compute != "int64")
    cfg = settings()
    total = out.numel()
    tb._run(_kernels().separable_kernel, (tb._cdiv(total, cfg["block"]),), pointer(x), pointer(out), pointer(idx),
            pointer(w) if w is not None else pointer(idx), pointer(q) if q is not None else pointer(idx),
            total, C, osz[0], osz[1], osz[2], T0, T1, T2, *xst, *ost,
            HAS_W=w is not None, HAS_Q=q is not None, CHANNELS_LAST=_channels_last((N, C, *osz), ost),
            ACC=_acc(compute), BLOCK=cfg["block"], num_warps=cfg["warps"])


def window_max(values, indices, x, dims, compute):
    """values, indices = the max over each output's box of taps and its flat input position."""
    if values.numel() == 0:
        return
    k = len(dims)
    (N, C, *osz), ost = _lift(values, k)
    (_, _, _, I1, I2), xst = _lift(x, k)
    _, ist = _lift(indices, k)
    idx, _, _, (T0, T1, T2) = _tables(values, dims, False, compute, weights=False)
    cfg = settings()
    total = values.numel()
    tb._run(_kernels().window_max_kernel, (tb._cdiv(total, cfg["block"]),), pointer(x), pointer(values),
            pointer(indices), pointer(idx), total, C, osz[0], osz[1], osz[2], T0, T1, T2, I1, I2, *xst, *ost, *ist,
            CHANNELS_LAST=_channels_last((N, C, *osz), ost), ACC=_acc(compute), BLOCK=cfg["block"],
            num_warps=cfg["warps"])


def window_max_backward(out, grad, indices, dims, compute):
    """out = the input's gradient: per input element, the gradients of the outputs whose max
    it is, gathered through the transposed tables."""
    if out.numel() == 0:
        return
    k = len(dims)
    (N, C, *isz), xst = _lift(out, k)
    _, gst = _lift(grad, k)
    _, ist = _lift(indices, k)
    idx, _, _, (U0, U1, U2) = _tables(out, dims, True, compute, weights=False)
    cfg = settings()
    total = out.numel()
    tb._run(_kernels().window_max_backward_kernel, (tb._cdiv(total, cfg["block"]),), pointer(grad),
            pointer(indices), pointer(out), pointer(idx), total, C, isz[0], isz[1], isz[2], U0, U1, U2,
            *gst, *ist, *xst, CHANNELS_LAST=_channels_last((N, C, *isz), xst), ACC=_acc(compute),
            BLOCK=cfg["block"], num_warps=cfg["warps"])
