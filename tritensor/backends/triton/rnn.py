"""Launchers of kernels/rnn.py: the fused recurrent cell steps and their backward.

Every operand is 2-D (B, k H) with unit column stride (the op layer guarantees it) and is read
in place with its row stride; the grid covers the (B, H) elements in blocks. Empty grids launch
nothing. The kernel module is imported on first use (see the package docstring).
"""
from __future__ import annotations

from ...runtime.launch import pointer
from .. import triton as tb

GPU = {"block": 1024, "warps": 4}
INTERPRETER = {"block": 64, "warps": 4}     # few programs; test shapes still cross a block edge

_K = None


def _kernels():
    global _K
    if _K is None:
        tb._kernels()
        from tritensor.kernels import rnn as rnn_k
        _K = rnn_k
    return _K


def _launch(kernel, B, H, args, compute, **meta):
    if B * H == 0:
        return
    cfg = INTERPRETER if tb.interpreting() else GPU
    block = min(cfg["block"], tb._next_pow2(B * H))
    tb._run(kernel, (tb._cdiv(B * H, block),), *args, COMPUTE=tb._kernels().compute[compute], BLOCK=block,
            num_warps=cfg["warps"], **meta)


def _row(t):
    return t.stride()[0] if t.shape[0] > 1 else 0


def lstm_cell(outs, ig, hg, cx, compute):
    hy, cy, ws = outs
    B, H = (int(s) for s in cx.shape)
    _launch(_kernels().lstm_cell_kernel, B, H,
            (pointer(ig), pointer(hg), pointer(cx), pointer(hy), pointer(cy), pointer(ws), B, H, _row(ig), _row(hg),
             _row(cx), _row(hy), _row(cy), _row(ws)), compute)


def lstm_cell_backward(outs, grad_hy, grad_cy, cx, cy, ws, compute):
    gg, gcx = outs
    B, H = (int(s) for s in cx.shape)
    _launch(_kernels().lstm_cell_bwd_kernel, B, H,
            (pointer(grad_hy if grad_hy is not None else cx), pointer(grad_cy if grad_cy is not None else cx),
             pointer(cx), pointer(cy), pointer(ws), pointer(gg), pointer(gcx), B, H,
             _row(grad_hy) if grad_hy is not None else 0, _row(grad_cy) if grad_cy is not None else 0, _row(cx),
             _row(cy), _row(ws), _row(gg), _row(gcx)), compute,
            HAS_GHY=grad_hy is not None, HAS_GCY=grad_cy is not None)


def gru_cell(outs, ig, hg, hx, compute):
    hy, ws = outs
    B, H = (int(s) for s in hx.shape)
    _launch(_kernels().gru_cell_kernel, B, H,
            (pointer(ig), pointer(hg), pointer(hx), pointer(hy), pointer(ws), B, H, _row(ig), _row(hg), _row(hx),
             _row(hy), _row(ws)), compute)


def gru_cell_backward(outs, grad_hy, hx, ws, compute):
    gi, gh, ghx = outs
    B, H = (int(s) for s in hx.shape)
    _launch(_kernels().gru_cell_bwd_kernel, B, H,
            (pointer(grad_hy), pointer(hx), pointer(ws), pointer(gi), pointer(gh), pointer(ghx), B, H, _row(grad_hy),
             _row(hx), _row(ws), _row(gi), _row(gh), _row(ghx)), compute)


def rnn_cell(hy, ig, hg, relu, compute):
    B, H = (int(s) for s in hy.shape)
    _launch(_kernels().rnn_cell_kernel, B, H,
            (pointer(ig), pointer(hg), pointer(hy), B, H, _row(ig), _row(hg), _row(hy)), compute, RELU=bool(relu))


def rnn_cell_backward(gx, grad_hy, hy, relu, compute):
    B, H = (int(s) for s in hy.shape)
    _launch(_kernels().rnn_cell_bwd_kernel, B, H,
            (pointer(grad_hy), pointer(hy), pointer(gx), B, H, _row(grad_hy), _row(hy), _row(gx)), compute,
            RELU=bool(relu))
