"""The fused softmax family (kernels/softmax.py): softmax, log_softmax and their backwards along
one dim, rows that fit in registers read once, longer rows streamed."""
from __future__ import annotations

from ...runtime.launch import pointer
from .. import triton as _backend   # the package: every launch goes through _backend._run
from ._memory import _dtype
from ._plan import _cdiv, _kernels, _next_pow2, _prod, _row_blocks, _row_problem, pieces, settings


_SOFTMAX_MODES = {"softmax": 0, "log_softmax": 1, "softmax_backward": 2, "log_softmax_backward": 3}


def softmax(mode, out, x, dim, compute, grad=None):
    """Fused softmax family along ``dim`` (non-negative int), computed in ``compute``:
    "softmax" / "log_softmax": out = f(x); "softmax_backward" / "log_softmax_backward": x is the
    forward's output y and ``grad`` the incoming gradient; out = y * (grad - sum(grad * y)) or
    grad - exp(y) * sum(grad). Every operand may have any strides; all are read in place."""
    m = _SOFTMAX_MODES[mode]
    if out.numel() == 0:
        return
    if (grad is None) != (m < 2):
        raise ValueError(f"softmax({mode!r}): grad is {'missing' if grad is None else 'unexpected'}")
    k = _kernels()
    cfg = settings()
    operands = [x, out] + ([grad] if grad is not None else [])
    kshape, kstrides, N, nstrides = _row_problem(out.shape, dim, operands)
    if grad is None:
        kstrides.append(kstrides[0])
        nstrides.append(nstrides[0])
    # A row that fits in registers is read once (ONE_TILE); longer rows stream in chunks.
    one_tile = N * _dtype(compute).itemsize <= cfg["row_resident_bytes"]
    for p_shape, p_strides, p_offsets, _ in pieces(kshape, kstrides):
        M = _prod(p_shape)
        block_m, block_n = _row_blocks(M, N, _next_pow2(N) if one_tile else cfg["row_max_block_n"], cfg)
        warps = cfg["row_warps"]
        if one_tile:   # about 32 values of 4 bytes per thread: enough loads in flight, no spills
            warps = min(cfg["row_resident_warps"], max(warps // 2, block_m * block_n // 1024))
        g_ptr = pointer(grad, p_offsets[2]) if grad is not None else pointer(x, p_offsets[0])
        _backend._run(k.softmax.softmax_kernel, (_cdiv(M, block_m),), pointer(x, p_offsets[0]), g_ptr,
                      pointer(out, p_offsets[1]), M, N, p_shape, p_strides[0], p_strides[2], p_strides[1],
                      nstrides[0], nstrides[2], nstrides[1], MODE=m, COMPUTE=k.compute[compute],
                      KRANK=len(p_shape), BLOCK_M=block_m, BLOCK_N=block_n, ONE_TILE=one_tile, num_warps=warps)

