"""Launchers of kernels/sparse.py: CSR (or row-sorted COO) @ dense, and the sampled product.

``spmm(out, crow, col, val, dense, acc)``: out[M, N] = S @ dense, S given by its row pointers
``crow`` (int64, M + 1, contiguous), column of each nonzero ``col`` (int64) and values ``val``
(1-D views, any stride), every operand read in place; ``acc`` the accumulator ("float32",
"float64", "int64"). A program computes one row times BLOCK_N columns, reading the row's
nonzeros BLOCK_K at a time.

``sampled_dot(out, val, a, b, rows, cols, beta, alpha)``: out[e] = beta * val[e] + alpha *
a[rows[e]] . b[:, cols[e]] for the nnz entries (rows, cols: contiguous int64), BLOCK_E entries per
program. The kernel module is imported on first use (see the package docstring).
"""
from __future__ import annotations

from ...runtime.launch import pointer
from .. import triton as tb

# spmm: a row per program (grid: rows x column blocks); sampled: BLOCK_E entries per program
GPU = {"block_k": 32, "block_n": 64, "block_e": 64, "block_kk": 32, "warps": 4}
INTERPRETER = {"block_k": 4, "block_n": 16, "block_e": 8, "block_kk": 4, "warps": 4}   # masks crossed in tests
INTERPRETER_FAST = {"block_k": 64, "block_n": 128, "block_e": 256, "block_kk": 64, "warps": 4}   # few programs

_K = None


def _kernels():
    global _K
    if _K is None:
        tb._kernels()
        from tritensor.kernels import sparse as sparse_k
        _K = sparse_k
    return _K


def _acc(name):
    tl = tb._kernels().tl
    return {"float64": tl.float64, "int64": tl.int64}.get(name, tl.float32)


def spmm(out, crow, col, val, dense, acc):
    M, N = out.shape
    if M == 0 or N == 0:
        return
    k = _kernels()
    cfg = tb.pick(GPU, INTERPRETER_FAST, INTERPRETER)
    grid = (M, tb._cdiv(N, cfg["block_n"]))
    tb._run(k.spmm_kernel, grid, pointer(out), pointer(crow), pointer(col), pointer(val), pointer(dense), N,
            col.stride()[0], val.stride()[0], dense.stride()[0], dense.stride()[1], out.stride()[0],
            out.stride()[1], ACC=_acc(acc), BLOCK_K=cfg["block_k"], BLOCK_N=cfg["block_n"], num_warps=cfg["warps"])


def sampled_dot(out, val, a, b, rows, cols, beta, alpha):
    nnz = out.shape[0]
    if nnz == 0:
        return
    k = _kernels()
    cfg = tb.pick(GPU, INTERPRETER_FAST, INTERPRETER)
    grid = (tb._cdiv(nnz, cfg["block_e"]),)
    tb._run(k.sampled_dot_kernel, grid, pointer(out), pointer(val), pointer(a), pointer(b), pointer(rows),
            pointer(cols), nnz, a.shape[1], val.stride()[0], a.stride()[0], a.stride()[1], b.stride()[0],
            b.stride()[1], tb._float_bits(beta), tb._float_bits(alpha),
            ACC=_acc("float64" if out.dtype.name == "float64" else "float32"), BLOCK_E=cfg["block_e"],
            BLOCK_K=cfg["block_kk"], num_warps=cfg["warps"])
