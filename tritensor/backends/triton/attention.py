"""Launchers of kernels/attention.py: the flash-attention forward and its three backward kernels.

Every operand is read in place by its strides (the entries hand over 4-d (Z, H, L, E) views
whose broadcast dims have stride 0; a mask is a (Z, H, L, S) view, usually broadcast). Head dims
are padded to a power of two >= 16 in the blocks (masked loads), so E and Ev may be anything up
to 256. float32 operands go to tl.dot as TF32 or IEEE per the matmul precision setting
(tt.backends.cuda.matmul.allow_tf32); float16 / bfloat16 run the dots in their own dtype with
float32 accumulators; float64 accumulates in float64.

The kernel module is imported on first use (see the package docstring).
"""
from __future__ import annotations

from ...runtime.launch import pointer
from .. import triton as tb
from .matmul import input_precision

# (BLOCK_M, BLOCK_N, warps, stages) by head-dim block, for 16-bit operands; tl.dot needs every
# dim >= 16 on hardware. Shared memory on an H100 (228 KB a block) bounds the tiles: the forward
# keeps a (BLOCK_M, D) query tile and `stages` (BLOCK_N, D) key and value tiles, so 4-byte and
# 8-byte operands take the smaller tiles of WIDE / WIDEST.
GPU = {"fwd": {64: (128, 64, 4, 3), 128: (128, 64, 8, 3), 256: (64, 32, 8, 2)},
       "bwd": {64: (64, 64, 4, 2), 128: (64, 64, 8, 2), 256: (32, 32, 8, 1)}}
GPU_WIDE = {"fwd": {64: (64, 64, 4, 2), 128: (64, 32, 4, 2), 256: (32, 32, 4, 1)},        # float32
            "bwd": {64: (32, 32, 4, 2), 128: (32, 32, 4, 1), 256: (16, 16, 4, 1)}}
GPU_WIDEST = {"fwd": {64: (32, 32, 4, 2), 128: (32, 32, 4, 1), 256: (16, 16, 4, 1)},      # float64
              "bwd": {64: (32, 32, 4, 1), 128: (16, 16, 4, 1), 256: (16, 16, 4, 1)}}
# under the interpreter: L, S of 17 and 33 cross block edges (tests keep the shapes small)
INTERPRETER = {"fwd": {64: (16, 16, 4, 1), 128: (16, 16, 4, 1), 256: (16, 16, 4, 1)},
               "bwd": {64: (16, 16, 4, 1), 128: (16, 16, 4, 1), 256: (16, 16, 4, 1)}}
INTERPRETER_FAST = {"fwd": {64: (64, 64, 4, 1), 128: (64, 64, 4, 1), 256: (32, 32, 4, 1)},
                    "bwd": {64: (32, 32, 4, 1), 128: (32, 32, 4, 1), 256: (32, 32, 4, 1)}}

_K = None
_LOG2E = 1.4426950408889634


def _kernels():
    global _K
    if _K is None:
        tb._kernels()
        from tritensor.kernels import attention as attention_k
        _K = attention_k
    return _K


def _head_block(e):
    return max(16, tb._next_pow2(max(int(e), 1)))


def _config(kind, block_d, itemsize):
    gpu = GPU if itemsize <= 2 else GPU_WIDE if itemsize == 4 else GPU_WIDEST
    table = tb.pick(gpu, INTERPRETER_FAST, INTERPRETER)[kind]
    return table[64 if block_d <= 64 else 128 if block_d <= 128 else 256]


def _acc(compute):
    return tb._kernels().compute[compute]


def _mask_args(q, mask):
    """(pointer, strides, MASK kind): a missing mask reads nothing (its strides are 0)."""
    if mask is None:
        return pointer(q), (0, 0, 0, 0), 0
    return pointer(mask), tuple(mask.stride()), 1 if mask.dtype.name == "bool" else 2


def _kernel_mask(q, mask):
    """The mask the kernels read: a bool one as a float32 additive one for float64 operands
    (the caller keeps it alive until its launches are queued)."""
    if mask is not None and mask.dtype.name == "bool" and q.dtype.name == "float64":
        return _additive_mask(q, mask)
    return mask


def _additive_mask(q, mask):
    """A bool mask as the float32 additive mask torch makes of it (convert_boolean_attn_mask:
    0 where True, -inf where False), over the mask's own elements (its broadcast dims, stride 0,
    stay broadcast), for float64 operands. Why: Triton 3.6 gives a dot operand the MMA layout
    kWidth = 32 / (the narrowest load it derives from) (AccelerateMatmul's computeOrigBitWidth); the
    probabilities derive from the 1-byte mask load, so kWidth 4, and float64 MMA supports kWidth 1
    only ("Currently fp64 don't support largeK MMA", MMAv2.cpp, at LLVM lowering). A 4-byte load
    gives kWidth 1. The 16- and 32-bit dots accept the wider kWidth: they keep the bool path."""
    strides = tuple(mask.stride())
    compact = tuple(1 if st == 0 and n else int(n) for n, st in zip(mask.shape, strides))
    dense = tb._scratch(q, compact, tb._dtype("float32"))
    if dense.numel():
        tb.elementwise("where", dense, [tb._View(compact, strides, mask._offset, mask._storage, mask.dtype),
                                        0.0, float("-inf")], "float32")
    return tb._View(tuple(mask.shape), tuple(0 if st == 0 else d for st, d in zip(strides, dense.stride())), 0,
                    dense._storage, dense.dtype)


def _dropout_args(dropout_p, seed, offset):
    keep = int(round((1.0 - dropout_p) * 2.0 ** 31)) if dropout_p > 0 else 2 ** 31
    inv = 1.0 / (1.0 - dropout_p) if 0 < dropout_p < 1 else 0.0 if dropout_p >= 1 else 1.0
    return int(seed), int(offset) // 4, keep, tb._float_bits(inv), dropout_p > 0


def _dot_args(q, compute):
    """ACC, PRECISION and WIDEN: float32 operands as the matmul precision setting says; 16-bit
    tiles widened to ACC under the interpreter (it multiplies bfloat16 tiles as raw integers)."""
    name = q.dtype.name
    return dict(ACC=_acc(compute), PRECISION=input_precision(name),
                WIDEN=tb.interpreting() and name in ("float16", "bfloat16"))


def forward(out, lse, q, k, v, *, mask, scale, is_causal, dropout_p, seed, offset, compute, causal_shift=0):
    """out (Z, H, L, Ev), lse (Z, H, L) float32 contiguous: the flash forward."""
    Z, H, L, E = (int(s) for s in q.shape)
    Hk, S, Ev = int(k.shape[1]), int(k.shape[2]), int(v.shape[3])
    if out.numel() == 0 and lse.numel() == 0:
        return
    k_ = _kernels()
    block_d, block_dv = _head_block(E), _head_block(Ev)
    bm, bn, warps, stages = _config("fwd", max(block_d, block_dv), q.dtype.itemsize)
    mask = _kernel_mask(q, mask)
    mptr, mstrides, mask_kind = _mask_args(q, mask)
    seed, offset4, keep, inv, drop = _dropout_args(dropout_p, seed, offset)
    tb._run(k_.attention_forward_kernel, (tb._cdiv(L, bm), Z * H),
            pointer(q), pointer(k), pointer(v), mptr, pointer(out), pointer(lse),
            *q.stride(), *k.stride(), *v.stride(), *mstrides, *out.stride(),
            H, L, S, E, Ev, H // Hk, tb._float_bits(float(scale) * _LOG2E), int(causal_shift), seed, offset4, keep,
            inv, MASK=mask_kind, CAUSAL=bool(is_causal), DROPOUT=drop, BLOCK_M=bm, BLOCK_N=bn, BLOCK_D=block_d,
            BLOCK_DV=block_dv, **_dot_args(q, compute), num_warps=warps, num_stages=stages)


def backward(dq, dk, dv, g, q, k, v, out, lse, *, mask, scale, is_causal, dropout_p, seed, offset, compute,
             causal_shift=0):
    """dq, dk, dv of the flash forward (dk, dv summed over the query heads of each key head)."""
    Z, H, L, E = (int(s) for s in q.shape)
    Hk, S, Ev = int(k.shape[1]), int(k.shape[2]), int(v.shape[3])
    k_ = _kernels()
    acc = _acc(compute)
    block_d, block_dv = _head_block(E), _head_block(Ev)
    bm, bn, warps, stages = _config("bwd", max(block_d, block_dv), q.dtype.itemsize)
    delta = tb._scratch(q, (Z * H * L,), tb._dtype("float64" if compute == "float64" else "float32"))
    if L:
        tb._run(k_.attention_backward_preprocess, (tb._cdiv(L, bm), Z * H), pointer(out), pointer(g), pointer(delta),
                *out.stride(), *g.stride(), H, L, Ev, BLOCK_M=bm, BLOCK_DV=block_dv, ACC=acc, num_warps=warps)
    mask = _kernel_mask(q, mask)
    mptr, mstrides, mask_kind = _mask_args(q, mask)
    seed, offset4, keep, inv, drop = _dropout_args(dropout_p, seed, offset)
    meta = dict(MASK=mask_kind, CAUSAL=bool(is_causal), DROPOUT=drop, BLOCK_M=bm, BLOCK_N=bn, BLOCK_D=block_d,
                BLOCK_DV=block_dv, **_dot_args(q, compute), num_warps=warps, num_stages=stages)
    scales = (tb._float_bits(float(scale)), tb._float_bits(float(scale) * _LOG2E))
    if dk.numel() or dv.numel():
        tb._run(k_.attention_backward_dkdv, (tb._cdiv(S, bn), Z * Hk),
                pointer(q), pointer(k), pointer(v), mptr, pointer(g), pointer(lse), pointer(delta), pointer(dk),
                pointer(dv), *q.stride(), *k.stride(), *v.stride(), *mstrides, *g.stride(), *dk.stride(),
                *dv.stride(), H, Hk, L, S, E, Ev, H // Hk, *scales,
                int(causal_shift), seed, offset4, keep, inv, **meta)
    if dq.numel():
        tb._run(k_.attention_backward_dq, (tb._cdiv(L, bm), Z * H),
                pointer(q), pointer(k), pointer(v), mptr, pointer(g), pointer(lse), pointer(delta), pointer(dq),
                *q.stride(), *k.stride(), *v.stride(), *mstrides, *g.stride(), *dq.stride(),
                H, L, S, E, Ev, H // Hk, *scales,
                int(causal_shift), seed, offset4, keep, inv, **meta)
