"""Launcher of kernels/sparse.py: sparse COO (row-sorted nonzeros) times dense.

``spmm(out, crow, col, val, dense, acc)``: out[M, N] = S @ dense, S given by its row pointers
``crow`` (int64, M + 1, contiguous), column of each nonzero ``col`` (int64) and values ``val``
(1-D views, any stride), every operand read in place; ``acc`` the accumulator ("float32",
"float64", "int64"). A program computes BLOCK_ROWS rows times BLOCK_N
columns, walking each row's nonzeros (kernels/sparse.py). The kernel module is imported on first
use (see the package docstring).
"""
from __future__ import annotations

from ...runtime.launch import pointer
from .. import triton as tb

GPU = {"block_rows": 16, "block_n": 64, "warps": 4}
INTERPRETER = {"block_rows": 8, "block_n": 16, "warps": 4}    # few programs: each costs ~0.35 ms there
INTERPRETER_FAST = dict(GPU)   # the emulated device's default profile (_plan.py): the GPU's larger tiles

_K = None


def _kernels():
    global _K
    if _K is None:
        tb._kernels()
        from tritensor.kernels import sparse as sparse_k
        _K = sparse_k
    return _K


def spmm(out, crow, col, val, dense, acc):
    M, N = out.shape
    if M == 0 or N == 0:
        return
    k = _kernels()
    cfg = tb.pick(GPU, INTERPRETER_FAST, INTERPRETER)
    tl = tb._kernels().tl
    grid = (tb._cdiv(M, cfg["block_rows"]), tb._cdiv(N, cfg["block_n"]))
    tb._run(k.spmm_kernel, grid, pointer(out), pointer(crow), pointer(col), pointer(val), pointer(dense), M, N,
            col.stride()[0], val.stride()[0], dense.stride()[0], dense.stride()[1], out.stride()[0],
            out.stride()[1], ACC={"float64": tl.float64, "int64": tl.int64}.get(acc, tl.float32),
            BLOCK_ROWS=cfg["block_rows"], BLOCK_N=cfg["block_n"], num_warps=cfg["warps"])
