"""Launchers of the sorting kernels (kernels/sort.py): sort / argsort / topk along one dim,
searchsorted's binary search and the histogram counts.

A row is every element along ``dim`` at one position of the other dims (coalesced across the
operands, any strides, read and written in place; ranks past MAX_RANK loop in pieces). Rows that
fit one tile are sorted and written in one launch; longer rows leave sorted tiles in scratch
buffers (keys and positions, contiguous [rows, N]) that log2(N / tile) merge launches combine,
the last one writing the outputs.

The kernel module is imported on first use, as in the rest of this package.
"""
from __future__ import annotations

from ...runtime.launch import pointer
from .. import triton as tb
from ._memory import _dtype

_K = None

# On a GPU: tiles of up to 512 elements of a row and 1024 of a program (short rows share one),
# merges of 512 outputs a program (a 1024-lane bitonic merge). The unrolled network's compile time
# grows with the tile (sm_90, measured on a loaded 2-core machine: 256 lanes 8 s, 1024 lanes 14 s,
# 4096 lanes 90 s; tl.sort of 1024 int64 takes 9 s), so tiles stay moderate. Under the
# interpreter every program costs ~0.35 ms plus ~1 ms per network stage: 64-element tiles (a row
# of 150 takes two merge passes), 128-output merges.
GPU_SETTINGS = {"tile_n": 512, "tile": 1024, "merge_block": 512, "search_block": 1024, "warps": 4}
INTERPRETER_SETTINGS = {"tile_n": 64, "tile": 256, "merge_block": 128, "search_block": 128, "warps": 4}
INTERPRETER_FAST_SETTINGS = dict(GPU_SETTINGS)   # the emulated default (_plan.py): the GPU tiles (fewer programs)

_INT32_MAX = 2 ** 31 - 1


def settings():
    return tb.pick(GPU_SETTINGS, INTERPRETER_FAST_SETTINGS, INTERPRETER_SETTINGS)


def _kernels():
    global _K
    if _K is None:
        from tritensor.kernels import sort as sort_k
        _K = sort_k
    return _K


def _log2_ceil(n):
    return max(int(n) - 1, 0).bit_length()


def row_problem(x, dim, operands):
    """``x``'s rows along ``dim``: (kept shape, [kept strides per operand], N, [dim stride per
    operand]). The operands have x's shape except along ``dim`` (topk's k), so only the kept dims
    are coalesced across them. A 0-d x is one row of one element."""
    shape = tuple(int(s) for s in x.shape)
    strides = [tuple(int(s) for s in t.stride()) for t in operands]
    if not shape:
        shape, strides, dim = (1,), [(0,) for _ in operands], 0
    kept = [d for d in range(len(shape)) if d != dim]
    kshape, kstrides = tb.coalesce([shape[d] for d in kept], [[st[d] for d in kept] for st in strides])
    return kshape, kstrides, shape[dim], [st[dim] for st in strides]


def sort(values, indices, x, dim, descending, k=None):
    """Sort x along ``dim`` (stably: equal values keep their order, ascending or descending; NaN
    largest, -0.0 equal to 0.0, as torch) and write the first ``k`` (all by default) of each row:
    ``values`` (x's dtype; None: only the indices, argsort) and ``indices`` (int64), both of x's
    shape with ``dim`` of length k."""
    n_along = int(x.shape[dim]) if len(x.shape) else 1
    K = n_along if k is None else int(k)
    if indices.numel() == 0 or K == 0:
        return
    k_ = _kernels()
    cfg = settings()
    operands = [x, indices] if values is None else [x, values, indices]
    kshape, kstrides, N, nstrides = row_problem(x, dim, operands)
    if values is None:             # the value pointer and strides are not read: the indices' stand in
        kstrides.insert(1, kstrides[1])
        nstrides.insert(1, nstrides[1])
    key64 = x.dtype.name in ("int64", "float64", "uint32", "uint64")     # (kernels/sort.py: order_key)
    idx64 = N >= _INT32_MAX        # positions and the sentinel past them fit int32 below this
    for p_shape, p_strides, p_offsets, _ in tb.pieces(kshape, kstrides):
        ptrs = [pointer(t, off) for t, off in zip(operands, p_offsets)]
        if values is None:
            ptrs.insert(1, ptrs[1])
        _sort_rows(k_, cfg, ptrs, tb._prod(p_shape), N, K, p_shape, p_strides, nstrides, descending, key64, idx64, x)


def _sort_rows(k_, cfg, ptrs, M, N, K, kshape, kstrides, nstrides, descending, key64, idx64, like):
    x_ptr, val_ptr, ind_ptr = ptrs
    write_values = val_ptr is not ind_ptr
    log_n = max(1, _log2_ceil(min(N, cfg["tile_n"])))
    block_n = 1 << log_n
    n_tiles = tb._cdiv(N, block_n)
    log_m = _log2_ceil(min(M, max(1, cfg["tile"] // block_n)))
    final = n_tiles == 1
    key_dtype, idx_dtype = _dtype("int64" if key64 else "int32"), _dtype("int64" if idx64 else "int32")
    if final:
        keys = idxs = None
        key_arg = idx_arg = ind_ptr          # not read
    else:
        keys = [tb._scratch(like, (M, N), key_dtype) for _ in range(2)]
        idxs = [tb._scratch(like, (M, N), idx_dtype) for _ in range(2)]
        key_arg, idx_arg = pointer(keys[0]), pointer(idxs[0])
    common = (kshape, kstrides[0], kstrides[1], kstrides[2], nstrides[0], nstrides[1], nstrides[2])
    tb._run(k_.sort_tile_kernel, (tb._cdiv(M, 1 << log_m) * n_tiles,), x_ptr, key_arg, idx_arg, val_ptr, ind_ptr,
            M, N, K, n_tiles, *common, DESCENDING=bool(descending), FINAL=final, WRITE_VALUES=write_values,
            KEY64=key64, IDX64=idx64, KRANK=len(kshape), LOG_M=log_m, LOG_N=log_n, num_warps=cfg["warps"])
    width, src = block_n, 0
    while width < N:
        final = 2 * width >= N
        out_len = min(2 * width, K)
        log_block = _log2_ceil(min(cfg["merge_block"], out_len))
        n_pairs = tb._cdiv(N, 2 * width)
        n_chunks = tb._cdiv(out_len, 1 << log_block)
        tb._run(k_.merge_kernel, (M * n_pairs * n_chunks,), pointer(keys[src]), pointer(idxs[src]),
                pointer(keys[1 - src]), pointer(idxs[1 - src]), x_ptr, val_ptr, ind_ptr, N, width, K, n_pairs,
                n_chunks, min(width, K).bit_length(), *common, FINAL=final, WRITE_VALUES=write_values,
                KEY64=key64, IDX64=idx64, KRANK=len(kshape), LOG_BLOCK=log_block, num_warps=cfg["warps"])
        width, src = 2 * width, 1 - src


def searchsorted(out, boundaries, values, sorter, right, compute):
    """out (int32 or int64, values' shape) = the insertion points of ``values`` in ``boundaries``
    ([rows, N], any strides: one row, or row i // values.shape[-1] for value i), read in the
    order of ``sorter`` ([rows, N] int64) when given; compared in dtype ``compute``."""
    n = out.numel()
    if n == 0:
        return
    k_ = _kernels()
    cfg = settings()
    block = cfg["search_block"]
    rows, N = (int(s) for s in boundaries.shape)
    b_row_stride, b_stride = (int(s) for s in boundaries.stride())
    s_row_stride, s_stride = (int(s) for s in sorter.stride()) if sorter is not None else (0, 0)
    per_row = rows > 1
    inner = int(values.shape[-1]) if len(values.shape) else 1
    shape, strides = tb.coalesce(tuple(out.shape), [tuple(values.stride()), tuple(out.stride())])
    for p_shape, p_strides, p_offsets, first in tb.pieces(shape, strides):
        m = tb._prod(p_shape)
        tb._run(k_.searchsorted_kernel, (tb._cdiv(m, block),), pointer(boundaries),
                pointer(sorter if sorter is not None else boundaries), pointer(values, p_offsets[0]),
                pointer(out, p_offsets[1]), m, first, N, inner, p_shape, p_strides[0], p_strides[1],
                b_row_stride, b_stride, s_row_stride, s_stride, N.bit_length(), RIGHT=bool(right),
                SORTER=sorter is not None, PER_ROW=per_row, COMPUTE=tb._kernels().compute[compute],
                VRANK=len(p_shape), BLOCK=block, num_warps=cfg["warps"])


def count(out, positions):
    """out (int64, contiguous) = how often each bin occurs among ``positions`` (contiguous int64;
    negative positions are not counted)."""
    tb.fill(out, 0)
    n = positions.numel()
    if n == 0 or out.numel() == 0:
        return
    cfg = settings()
    block = cfg["search_block"]
    tb._run(_kernels().count_kernel, (tb._cdiv(n, block),), pointer(positions), pointer(out), n, BLOCK=block,
            num_warps=cfg["warps"])
