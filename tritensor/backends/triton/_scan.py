"""Inclusive scans (kernels/scan.py): cumsum and cumprod along one dim, forwards or reversed."""
from __future__ import annotations

from ...runtime.launch import pointer
from .. import triton as _backend   # the package: every launch goes through _backend._run
from ._plan import _cdiv, _kernels, _prod, _row_blocks, _row_problem, pieces, settings
from ._reduce import _identity


def scan(op, out, x, dim, compute, reverse=False):
    """out = inclusive cumsum (op "sum") or cumprod ("prod") of x along ``dim``, from the end when
    ``reverse``, accumulated in ``compute``. Any strides, read in place; deterministic."""
    if op not in ("sum", "prod"):
        raise ValueError(f"scan: unknown op {op!r}")
    if out.numel() == 0:
        return
    k = _kernels()
    cfg = settings()
    kshape, kstrides, N, nstrides = _row_problem(out.shape, dim, [x, out])
    for p_shape, p_strides, p_offsets, _ in pieces(kshape, kstrides):
        M = _prod(p_shape)
        block_m, block_n = _row_blocks(M, N, cfg["scan_max_block_n"], cfg)
        _backend._run(k.scan.scan_kernel, (_cdiv(M, block_m),), pointer(x, p_offsets[0]), pointer(out, p_offsets[1]),
                      M, N, p_shape, p_strides[0], p_strides[1], nstrides[0], nstrides[1], OP=op,
                      REVERSE=bool(reverse), IDENTITY=_identity(op, compute), COMPUTE=k.compute[compute],
                      KRANK=len(p_shape), BLOCK_M=block_m, BLOCK_N=block_n, num_warps=cfg["row_warps"])

