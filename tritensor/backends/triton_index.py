"""Launchers of the indexing kernels (kernels/index.py).

The op layer (ops/indexing.py) turns an indexing expression into strides over the output's dims;
these launchers coalesce them, split ranks beyond MAX_RANK and launch. Host-side work that needs
the index values (the scatter's grouping of writes by target) happens in the op layer too; the
launchers here take its results as device buffers (``upload``).

The kernel module is imported on first use, as in backends/triton.py: Triton decides between
compiled and interpreted kernels when they are decorated.
"""
from __future__ import annotations

import numpy as np

from ..runtime.launch import pointer
from . import triton as tb

_K = None

# Under the interpreter every program costs ~0.35 ms: few large blocks. On a GPU: 1024-element
# blocks for the memory-bound gathers, 128 targets per scatter program (lanes loop over their
# segment), 1024-element compaction blocks (one prefix-sum entry per block).
# Bounds checks read 4096 indices per program (one count each to read back).
GPU_SETTINGS = {"gather_block": 1024, "scatter_block": 128, "compact_block": 1024, "check_block": 4096,
                "warps": 4}
INTERPRETER_SETTINGS = {"gather_block": 128, "scatter_block": 64, "compact_block": 128, "check_block": 256,
                        "warps": 4}


def settings():
    return INTERPRETER_SETTINGS if tb.interpreting() else GPU_SETTINGS


def _kernels():
    global _K
    if _K is None:
        from tritensor.kernels import index as index_k
        _K = index_k
    return _K


# --------------------------------------------------------------------------- host transfers
def upload(like, array):
    """A contiguous device buffer (a backends.triton._View) on ``like``'s device holding ``array``."""
    array = np.ascontiguousarray(array)
    view = tb._scratch(like, array.shape, tb._dtype(array.dtype.name))
    if array.size:
        storage = view._storage
        if isinstance(storage, tb._HostBuffer):
            storage.host[: array.nbytes] = array.reshape(-1).view(np.uint8)
        else:
            storage.copy_from_host(0, array)
    return view


def download(view, start, count, np_dtype):
    """``count`` elements of a device buffer from element ``start``, as a NumPy array (a sync)."""
    itemsize = np.dtype(np_dtype).itemsize
    storage = view._storage
    first = (view._offset + start) * itemsize
    if isinstance(storage, tb._HostBuffer):
        raw = storage.host[first: first + count * itemsize].copy()
    else:
        raw = storage.copy_to_host(first, count * itemsize)
    return raw.view(np_dtype)


# --------------------------------------------------------------------------- gather
def gather(out, src, src_strides, index, index_strides, dim_size, dim_stride, wrap):
    """out[p] = src[sum(p * src_strides) + index[p] * dim_stride] over out's positions p.

    ``src`` gives the pointer (its storage and offset; its own shape is not used), ``src_strides``
    and ``index_strides`` are per output dim (0 where the operand does not vary). ``wrap``: add
    ``dim_size`` to negative indices. Indices must be in range (the caller checks)."""
    if out.numel() == 0:
        return
    k = _kernels()
    cfg = settings()
    block = cfg["gather_block"]
    shape, strides = tb.coalesce(tuple(out.shape), [tuple(out.stride()), tuple(src_strides), tuple(index_strides)])
    for p_shape, p_strides, p_offsets, _ in tb.pieces(shape, strides):
        n = tb._prod(p_shape)
        tb._run(k.gather_kernel, (tb._cdiv(n, block),), pointer(out, p_offsets[0]), pointer(src, p_offsets[1]),
                pointer(index, p_offsets[2]), n, p_shape, p_strides[0], p_strides[1], p_strides[2],
                int(dim_size), int(dim_stride), RANK=len(p_shape), WRAP=bool(wrap), BLOCK=block,
                num_warps=cfg["warps"])


def index_offsets(acc, index, index_strides, dim_size, dim_stride, first):
    """acc (contiguous int64) = (acc if not first else 0) + wrap(index) * dim_stride, with
    ``index_strides`` over acc's dims."""
    if acc.numel() == 0:
        return
    k = _kernels()
    cfg = settings()
    block = cfg["gather_block"]
    shape = tuple(acc.shape)
    shape, strides = tb.coalesce(shape, [tb._contiguous_strides(shape), tuple(index_strides)])
    for p_shape, p_strides, p_offsets, base in tb.pieces(shape, strides):
        n = tb._prod(p_shape)
        tb._run(k.index_offsets_kernel, (tb._cdiv(n, block),), pointer(acc, base), pointer(index, p_offsets[1]),
                n, p_shape, p_strides[1], int(dim_size), int(dim_stride), FIRST=bool(first),
                RANK=len(p_shape), BLOCK=block, num_warps=cfg["warps"])


def count_out_of_range(index, low, high):
    """How many elements of ``index`` (any strides) lie outside [low, high). One launch, then
    one read back of the per-block counts (a sync: the caller raises torch's error on the host)."""
    n = index.numel()
    if n == 0:
        return 0
    k = _kernels()
    cfg = settings()
    block = cfg["check_block"]
    (index,), shape, (strides,) = _flat_operands(tuple(index.shape), [index])
    n_blocks = tb._cdiv(n, block)
    bad = tb._scratch(index, (n_blocks,), tb._dtype("int64"))
    tb._run(k.bounds_kernel, (n_blocks,), pointer(index), pointer(bad), n, shape, strides, int(low), int(high),
            RANK=len(shape), BLOCK=block, num_warps=cfg["warps"])
    return int(download(bad, 0, n_blocks, np.int64).sum())


# --------------------------------------------------------------------------- scatter
def scatter(out, values, value_shape, value_strides, targets, pairs, starts, max_len, accumulate, compute):
    """Writes grouped by target (see kernels/index.py scatter_kernel). ``targets``, ``pairs``
    and ``starts`` are contiguous int64 device buffers (``upload``); ``values`` is read over
    the pair space ``value_shape`` with ``value_strides``; ``compute`` names the dtype sums are
    taken in."""
    n_seg = targets.numel()
    if n_seg == 0:
        return
    k = _kernels()
    cfg = settings()
    block = cfg["scatter_block"]
    vshape, (vstrides,) = tb.coalesce(tuple(value_shape), [tuple(value_strides)])
    if len(vshape) > tb.MAX_RANK:      # read the values once into a contiguous pair-space copy
        dense = tb._scratch(out, value_shape, values.dtype)
        tb.copy(dense, tb._View(value_shape, value_strides, values._offset, values._storage, values.dtype))
        values, vshape, vstrides = dense, [tb._prod(value_shape)], [1]
    if not vshape:
        vshape, vstrides = [1], [0]
    tb._run(k.scatter_kernel, (tb._cdiv(n_seg, block),), pointer(out), pointer(values), pointer(targets),
            pointer(pairs), pointer(starts), n_seg, int(max_len), tuple(vshape), tuple(vstrides),
            RANK=len(vshape), ACCUMULATE=bool(accumulate), COMPUTE=tb._kernels().compute[compute],
            BLOCK=block, num_warps=cfg["warps"])


_REDUCE_CODES = {"sum": 1, "prod": 2, "amax": 3, "amin": 4, "mean": 5}


def scatter_reduce(out, values, value_shape, value_strides, targets, pairs, starts, max_len, reduce,
                   include_self, compute):
    """torch.scatter_reduce's writes grouped by target (kernels/index.py scatter_reduce_kernel);
    the buffers are those of ``scatter`` with accumulate (a segment of pairs per target)."""
    n_seg = targets.numel()
    if n_seg == 0:
        return
    k = _kernels()
    cfg = settings()
    block = cfg["scatter_block"]
    vshape, (vstrides,) = tb.coalesce(tuple(value_shape), [tuple(value_strides)])
    if len(vshape) > tb.MAX_RANK:
        dense = tb._scratch(out, value_shape, values.dtype)
        tb.copy(dense, tb._View(value_shape, value_strides, values._offset, values._storage, values.dtype))
        values, vshape, vstrides = dense, [tb._prod(value_shape)], [1]
    if not vshape:
        vshape, vstrides = [1], [0]
    integer = compute not in ("float16", "bfloat16", "float32", "float64")
    tb._run(k.scatter_reduce_kernel, (tb._cdiv(n_seg, block),), pointer(out), pointer(values), pointer(targets),
            pointer(pairs), pointer(starts), n_seg, int(max_len), tuple(vshape), tuple(vstrides),
            RANK=len(vshape), REDUCE=_REDUCE_CODES[reduce], INCLUDE_SELF=bool(include_self), FLOOR=integer,
            COMPUTE=tb._kernels().compute[compute], BLOCK=block, num_warps=cfg["warps"])


# --------------------------------------------------------------------------- compaction
def _flat_operands(shape, operands):
    """Coalesced (shape, [strides per operand]) over ``shape``; operands that do not fit in one
    launch are first copied to contiguous scratch (so compaction is one launch per step)."""
    shape = tuple(int(s) for s in shape)
    cshape, cstrides = tb.coalesce(shape, [tb.broadcast_strides(t, shape) for t in operands])
    if len(cshape) <= tb.MAX_RANK:
        return operands, (tuple(cshape) or (1,)), [tuple(s) or (0,) for s in cstrides]
    dense = []
    for t in operands:
        d = tb._scratch(t, shape, t.dtype)
        tb.copy(d, t)
        dense.append(d)
    n = tb._prod(shape)
    return dense, (n,), [(1,) for _ in dense]


def count_blocks(x, shape):
    """Count the nonzero elements of ``x`` (broadcast to ``shape``) per compaction block.
    Returns (incl, n_blocks): ``incl`` (int64 device buffer) holds the inclusive prefix sums of
    the per-block counts, so incl[n_blocks - 1] is the total (read it with ``download``)."""
    k = _kernels()
    cfg = settings()
    block = cfg["compact_block"]
    n = tb._prod(shape)
    (x,), cshape, (xs,) = _flat_operands(shape, [x])
    n_blocks = tb._cdiv(n, block)
    counts = tb._scratch(x, (n_blocks,), tb._dtype("int64"))
    tb._run(k.count_kernel, (n_blocks,), pointer(x), pointer(counts), n, cshape, xs, RANK=len(cshape),
            BLOCK=block, num_warps=cfg["warps"])
    incl = tb._scratch(x, (n_blocks,), tb._dtype("int64"))
    tb.scan("sum", incl, counts, 0, "int64")
    return incl, n_blocks


def compact(out, x, shape, incl, values=None, coord_shape=None):
    """After ``count_blocks(x, shape)``: write the nonzero positions of ``x`` (broadcast to
    ``shape``) in row-major order, as ``values`` (broadcast to ``shape``) at those positions
    (masked_select; out is 1-d) or, when ``values`` is None, as their coordinates in
    ``coord_shape`` (nonzero; out is [count, len(coord_shape)] contiguous int64)."""
    if out.numel() == 0:
        return
    k = _kernels()
    cfg = settings()
    block = cfg["compact_block"]
    n = tb._prod(shape)
    operands = [x] if values is None else [x, values]
    ops, cshape, strides = _flat_operands(shape, operands)
    coords = values is None
    coord_shape = tuple(int(s) for s in (coord_shape or (1,)))
    _, val, val_strides = (None, ops[0], strides[0]) if coords else (None, ops[1], strides[1])
    tb._run(k.compact_kernel, (tb._cdiv(n, block),), pointer(ops[0]), pointer(val), pointer(out), pointer(incl),
            n, cshape, strides[0], val_strides, coord_shape, COORDS=coords, NDIM=len(coord_shape),
            RANK=len(cshape), BLOCK=block, num_warps=cfg["warps"])
