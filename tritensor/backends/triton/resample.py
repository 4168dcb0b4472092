"""Launchers of kernels/resample.py: grid_sampler_2d/3d's forward (one program per BLOCK output points
of a sample, a loop over the channels inside) and nearest upsampling (a gather: one program per
BLOCK output points of an (n, c) plane). Every operand is read in place with its strides.

The kernel module is imported on first use (see the package docstring).
"""
from __future__ import annotations

from ...runtime.launch import pointer
from .. import triton as tb

GPU = {"block": 128, "warps": 4}
INTERPRETER = {"block": 32, "warps": 4}     # few programs under the interpreter
INTERPRETER_FAST = {"block": 4096, "warps": 4}   # the emulated device's default profile (_plan.py): few, large programs

_K = None


def _kernels():
    global _K
    if _K is None:
        tb._kernels()
        from tritensor.kernels import resample as resample_k
        _K = resample_k
    return _K


def grid_sample_2d(out, x, grid, mode, padding_mode, align_corners, compute):
    """out[n, c, h, w] = x[n, c] sampled at grid[n, h, w] (torch's grid_sampler_2d)."""
    if out.numel() == 0:
        return
    k = _kernels()
    cfg = tb.pick(GPU, INTERPRETER_FAST, INTERPRETER)
    n, c, h, w = (int(s) for s in x.shape)
    oh, ow = int(grid.shape[1]), int(grid.shape[2])
    points = oh * ow
    blocks = tb._cdiv(points, cfg["block"])
    tb._run(k.grid_sample_2d_kernel, (n * blocks,),
            pointer(x), pointer(grid), pointer(out), c, h, w, ow, points, blocks,
            *x.stride(), *grid.stride(), *out.stride(),
            MODE=mode, PADDING=padding_mode, ALIGN=bool(align_corners), ACC=tb._kernels().compute[compute],
            BLOCK=cfg["block"], num_warps=cfg["warps"])


def upsample_nearest(out, x, idx_d, idx_h, idx_w):
    """out = x gathered at the per-dim source indices (1-3 spatial dims; missing dims padded with
    size 1 here, their index vector [0] a one-element int64 tensor the op passes)."""
    if out.numel() == 0:
        return
    k = _kernels()
    cfg = tb.pick(GPU, INTERPRETER_FAST, INTERPRETER)
    pad = 5 - len(x.shape)        # view (N, C, *spatial) as (N, C, D, H, W)
    xs = list(x.stride())
    os_ = list(out.stride())
    x_strides = xs[:2] + [0] * pad + xs[2:]
    o_strides = os_[:2] + [0] * pad + os_[2:]
    oshape = [1] * pad + [int(s) for s in out.shape[2:]]
    n, c = int(out.shape[0]), int(out.shape[1])
    points = oshape[0] * oshape[1] * oshape[2]
    blocks = tb._cdiv(points, cfg["block"])
    tb._run(k.upsample_nearest_kernel, (n * c * blocks,),
            pointer(x), pointer(out), pointer(idx_d), pointer(idx_h), pointer(idx_w), c, oshape[1], oshape[2],
            points, blocks, *x_strides, *o_strides, BLOCK=cfg["block"], num_warps=cfg["warps"])


def grid_sample_3d(out, x, grid, mode, padding_mode, align_corners, compute):
    """out[n, c, d, h, w] = x[n, c] sampled at grid[n, d, h, w] (torch's grid_sampler_3d)."""
    if out.numel() == 0:
        return
    k = _kernels()
    cfg = tb.pick(GPU, INTERPRETER_FAST, INTERPRETER)
    n, c, d, h, w = (int(s) for s in x.shape)
    od, oh, ow = (int(s) for s in grid.shape[1:4])
    points = od * oh * ow
    blocks = tb._cdiv(points, cfg["block"])
    tb._run(k.grid_sample_3d_kernel, (n * blocks,),
            pointer(x), pointer(grid), pointer(out), c, d, h, w, oh, ow, points, blocks,
            *x.stride(), *grid.stride(), *out.stride(),
            MODE=mode, PADDING=padding_mode, ALIGN=bool(align_corners), ACC=tb._kernels().compute[compute],
            BLOCK=cfg["block"], num_warps=cfg["warps"])


def upsample_taps(out, x, idx_d, w_d, idx_h, w_h, idx_w, w_w, compute):
    """out = the separable resampling of x by per-dim (taps, out) index / weight tables."""
    if out.numel() == 0:
        return
    k = _kernels()
    cfg = tb.pick(GPU, INTERPRETER_FAST, INTERPRETER)
    pad = 5 - len(x.shape)
    xs, os_ = list(x.stride()), list(out.stride())
    x_strides = xs[:2] + [0] * pad + xs[2:]
    o_strides = os_[:2] + [0] * pad + os_[2:]
    od, oh, ow = [1] * pad + [int(s) for s in out.shape[2:]]
    n, c = int(out.shape[0]), int(out.shape[1])
    points = od * oh * ow
    blocks = tb._cdiv(points, cfg["block"])
    tb._run(k.upsample_taps_kernel, (n * c * blocks,),
            pointer(x), pointer(out), pointer(idx_d), pointer(w_d), pointer(idx_h), pointer(w_h), pointer(idx_w),
            pointer(w_w), c, od, oh, ow, points, blocks, *x_strides, *o_strides,
            TD=int(idx_d.shape[0]), TH=int(idx_h.shape[0]), TW=int(idx_w.shape[0]),
            ACC=tb._kernels().compute[compute], BLOCK=cfg["block"], num_warps=cfg["warps"])
