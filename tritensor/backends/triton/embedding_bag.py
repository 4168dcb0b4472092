"""Launcher of kernels/embedding_bag.py: one program per (bag, column block); every operand is
read in place with its strides. The kernel module is imported on first use."""
from __future__ import annotations

from ...runtime.launch import pointer
from .. import triton as tb

GPU = {"block_d": 256, "warps": 4}
INTERPRETER = {"block_d": 16, "warps": 4}      # test widths still cross a block edge

_K = None


def _kernels():
    global _K
    if _K is None:
        tb._kernels()
        from tritensor.kernels import embedding_bag as eb_k
        _K = eb_k
    return _K


def embedding_bag(outs, weight, input, starts, ends, per_sample_weights, mode, padding_idx, compute):
    """outs = (out (B, D), max_indices (B, D) int64, written in max mode only)."""
    out, max_indices = outs
    B, D = (int(s) for s in out.shape)
    if B * D == 0:
        return
    cfg = INTERPRETER if tb.interpreting() else GPU
    block_d = min(cfg["block_d"], tb._next_pow2(D))
    k = _kernels()
    psw = per_sample_weights
    maxi = max_indices if mode == k.MODE_MAX else out
    ws, os_, ms = weight.stride(), out.stride(), maxi.stride()
    tb._run(k.embedding_bag_kernel, (B, tb._cdiv(D, block_d)), pointer(weight), pointer(input), pointer(starts),
            pointer(ends), pointer(psw if psw is not None else weight), pointer(out), pointer(maxi), D, ws[0], ws[1],
            input.stride()[0] if len(input.shape) else 1, psw.stride()[0] if psw is not None else 0, os_[0], os_[1],
            ms[0], ms[1], -1 if padding_idx is None else int(padding_idx), MODE=int(mode), HAS_PSW=psw is not None,
            COMPUTE=tb._kernels().compute[compute], BLOCK_D=block_d, num_warps=cfg["warps"])
