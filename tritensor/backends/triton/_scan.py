"""Inclusive scans (kernels/scan.py): cumsum, cumprod and logcumsumexp along one dim, forwards or
reversed (scan_kernel), and cummax/cummin with their indices (scan_index_kernel)."""
from __future__ import annotations

from ...runtime.launch import pointer
from .. import triton as _backend   # the package: every launch goes through _backend._run
from ._plan import _cdiv, _kernels, _prod, _row_blocks, _row_problem, pieces, settings
from ._reduce import _identity

_SCAN_OPS = ("sum", "prod", "logsumexp")


def scan(op, out, x, dim, compute, reverse=False):
    """out = inclusive cumsum (op "sum"), cumprod ("prod") or logcumsumexp ("logsumexp": a float
    compute dtype) of x along ``dim``, from the end when ``reverse``, accumulated in ``compute``.
    Any strides, read in place; deterministic."""
    if op not in _SCAN_OPS:
        raise ValueError(f"scan: unknown op {op!r}")
    if out.numel() == 0:
        return
    k = _kernels()
    cfg = settings()
    ident = float("-inf") if op == "logsumexp" else _identity(op, compute)
    kshape, kstrides, N, nstrides = _row_problem(out.shape, dim, [x, out])
    for p_shape, p_strides, p_offsets, _ in pieces(kshape, kstrides):
        M = _prod(p_shape)
        block_m, block_n = _row_blocks(M, N, cfg["scan_max_block_n"], cfg)
        if op == "logsumexp" and compute == "float64":
            # float64 exp/log are long instruction sequences: a full tile (16 values a thread) needs
            # past 255 registers on sm_90 and spills (tests/sm90.py); half a tile fits (208)
            block_m = max(1, block_m // 2)
        _backend._run(k.scan.scan_kernel, (_cdiv(M, block_m),), pointer(x, p_offsets[0]), pointer(out, p_offsets[1]),
                      M, N, p_shape, p_strides[0], p_strides[1], nstrides[0], nstrides[1], OP=op,
                      REVERSE=bool(reverse), IDENTITY=ident, COMPUTE=k.compute[compute],
                      KRANK=len(p_shape), BLOCK_M=block_m, BLOCK_N=block_n, num_warps=cfg["row_warps"])


def scan_index(op, values, indices, x, dim, compute):
    """values, indices = cummax (op "max") or cummin ("min") of x along ``dim``: the running
    extremum and the position it came from (NaN propagates, ties take the later position, as
    torch). ``values`` has x's dtype, ``indices`` int64; any strides, read and written in place."""
    if op not in ("max", "min"):
        raise ValueError(f"scan_index: unknown op {op!r}")
    if values.numel() == 0:
        return
    k = _kernels()
    cfg = settings()
    kshape, kstrides, N, nstrides = _row_problem(values.shape, dim, [x, values, indices])
    for p_shape, p_strides, p_offsets, _ in pieces(kshape, kstrides):
        M = _prod(p_shape)
        block_m, block_n = _row_blocks(M, N, cfg["scan_max_block_n"], cfg)
        _backend._run(k.scan.scan_index_kernel, (_cdiv(M, block_m),), pointer(x, p_offsets[0]),
                      pointer(values, p_offsets[1]), pointer(indices, p_offsets[2]), M, N, p_shape,
                      p_strides[0], p_strides[1], p_strides[2], nstrides[0], nstrides[1], nstrides[2],
                      IS_MAX=(op == "max"), COMPUTE=k.compute[compute], KRANK=len(p_shape),
                      BLOCK_M=block_m, BLOCK_N=block_n, num_warps=cfg["row_warps"])
