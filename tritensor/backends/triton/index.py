"""Launchers of the indexing kernels (kernels/index.py).

The op layer (ops/indexing.py) resolves an indexing expression (an IndexKey: the basic part as a
view, the index tensors, their broadcast shape) and checks the indices; the launches of the
indexing ops (the end of this module: ``index``, ``index_put``, ``scatter_along``,
``scatter_reduce_along``, ``compacted``) turn it into kernel launches. The lower launchers
coalesce strides, split ranks beyond MAX_RANK and launch. Host-side work that needs the index
values (the scatter's grouping of writes by target) runs on the host with NumPy; its results
reach the kernels as device buffers (``upload``).

The kernel module is imported on first use, as in the rest of this package: Triton decides between
compiled and interpreted kernels when they are decorated.
"""
from __future__ import annotations

import numpy as np

from ...runtime.launch import pointer
from .. import triton as tb
from ._memory import download, upload

_K = None

# Under the interpreter every program costs ~0.35 ms: few large blocks. On a GPU: 1024-element
# blocks for the memory-bound gathers, 128 targets per scatter program (lanes loop over their
# segment), 1024-element compaction blocks (one prefix-sum entry per block).
# Bounds checks read 4096 indices per program (one count each to read back).
# index_add & co.: up to 256 positions of the other dims per program (one destination index each).
GPU_SETTINGS = {"gather_block": 1024, "scatter_block": 128, "compact_block": 1024, "check_block": 4096,
                "segment_block": 256, "warps": 4}
INTERPRETER_SETTINGS = {"gather_block": 128, "scatter_block": 64, "compact_block": 128, "check_block": 256,
                        "segment_block": 64, "warps": 4}
INTERPRETER_FAST_SETTINGS = {"gather_block": 16384, "scatter_block": 1024, "compact_block": 16384,   # emulated
                             "check_block": 16384, "segment_block": 1024, "warps": 4}                # default


def settings():
    return tb.pick(GPU_SETTINGS, INTERPRETER_FAST_SETTINGS, INTERPRETER_SETTINGS)


def _kernels():
    global _K
    if _K is None:
        from tritensor.kernels import index as index_k
        _K = index_k
    return _K


# --------------------------------------------------------------------------- gather
def gather(out, src, src_strides, index, index_strides, dim_size, dim_stride, wrap):
    """out[p] = src[sum(p * src_strides) + index[p] * dim_stride] over out's positions p.

    ``src`` gives the pointer (its storage and offset; its own shape is not used), ``src_strides``
    and ``index_strides`` are per output dim (0 where the operand does not vary). ``wrap``: add
    ``dim_size`` to negative indices. Indices must be in range: the op's check (ops/indexing.py
    check_range) raised, or on cuda handed over a copy clamped into range, its error deferred."""
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
    one read back of the per-block counts (a sync: the caller raises torch's error on the host).
    The synchronous check of CUDA_LAUNCH_BLOCKING=1; otherwise ``check_deferred`` reads nothing back."""
    n = index.numel()
    if n == 0:
        return 0
    index, shape, strides, n_blocks, meta = _check_launch(index)
    bad = tb._scratch(index, (n_blocks,), tb._dtype("int64"))
    tb._run(_kernels().bounds_kernel, (n_blocks,), pointer(index), pointer(bad), n, shape, strides, int(low),
            int(high), **meta)
    return int(download(bad, 0, n_blocks, np.int64).sum())


def _check_launch(index):
    """A bounds check's operand over ``index``'s elements (coalesced, or a contiguous copy past
    MAX_RANK): (index, shape, strides, number of programs, launch meta-parameters)."""
    cfg = settings()
    (index,), shape, (strides,) = _flat_operands(tuple(index.shape), [index])
    return index, shape, strides, tb._cdiv(index.numel(), cfg["check_block"]), dict(
        RANK=len(shape), BLOCK=cfg["check_block"], num_warps=cfg["warps"])


def check_deferred(index, safe, record, low, high, check_id, ignore=None):
    """Queue the bounds check of ``index`` (any strides) against [low, high) (values equal to
    ``ignore`` pass) with nothing read back: a bad value claims ``record`` for ``check_id``
    (kernels/index.py deferred_bounds_kernel). ``safe``: None, or a contiguous tensor of
    ``index``'s shape and dtype that receives the index clamped into range."""
    n = index.numel()
    if n == 0:
        return
    index, shape, strides, n_blocks, meta = _check_launch(index)
    tb._run(_kernels().deferred_bounds_kernel, (n_blocks,), pointer(index),
            pointer(safe if safe is not None else index), pointer(record), n, shape, strides, int(low), int(high),
            0 if ignore is None else int(ignore), int(check_id), HAS_IGNORE=ignore is not None,
            SAFE=safe is not None, **meta)


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


# --------------------------------------------------------------------------- launches of the indexing ops
# The op layer hands these its resolved key (an ops.indexing.IndexKey: ``basic`` view through
# ``view_layout(t)``, ``dims``, ``indices``, ``bshape``, ``out_axes``, ``result_shape``) and, where
# the targets of writes depend on index values, those values as host int64 arrays (its bounds
# checks read them first).
def _segments(targets, accumulate):
    """Group the writes by target element: a stable sort, so the pair order within a target is
    the index order. Returns (targets of the groups, pairs, starts, longest group)."""
    order = np.argsort(targets, kind="stable")
    st = targets[order]
    first = np.flatnonzero(np.r_[True, st[1:] != st[:-1]])
    ends = np.r_[first[1:], len(st)]
    if accumulate:
        return st[first], order, np.r_[first, len(st)].astype(np.int64), int((ends - first).max())
    winners = order[ends - 1]           # the last write of each target wins
    return st[first], winners, winners, 1


def _same_memory(out, x):
    return out._storage is x._storage and out._offset == x._offset and tuple(out.stride()) == tuple(x.stride())


def scatter_pairs(out, x, values, pair_shape, value_strides, targets, accumulate, compute):
    """out = x, then the writes of pair p (element offset targets[p] in out, a host int64 array;
    value read at pair p of ``values`` over ``pair_shape`` with ``value_strides``) applied
    deterministically: the last write wins, or all are summed when ``accumulate``."""
    if not _same_memory(out, x):
        tb.copy(out, x)
    if targets.size == 0:
        return
    seg_targets, pairs, starts, max_len = _segments(targets.astype(np.int64), accumulate)
    scatter(out, values, pair_shape, value_strides, upload(out, seg_targets), upload(out, pairs),
            upload(out, starts), max_len, accumulate, compute)


def _axis_term(values, axis, ndim):
    shape = [1] * ndim
    shape[axis] = -1
    return values.reshape(shape)


def _dim_targets(out, pair_shape, dim, index):
    """Element offsets in ``out`` written by torch.scatter along ``dim`` (``index``: host int64)."""
    os_ = tuple(out.stride())
    ndim = len(pair_shape)
    total = np.zeros((1,) * ndim, dtype=np.int64)
    for d in range(ndim):
        if d != dim:
            total = total + _axis_term(np.arange(pair_shape[d], dtype=np.int64) * os_[d], d, ndim)
    total = total + index * os_[dim]
    return np.broadcast_to(total, pair_shape).reshape(-1)


def scatter_along(out, x, src, dim, index, accumulate, compute):
    """torch.scatter / scatter_add into ``out`` (= x first): index (host int64, in range, of the
    index tensor's shape) gives the position along ``dim`` of each src element."""
    pair_shape = tuple(index.shape)
    src_strides = tuple(src.stride()) if src.dim() else (0,) * len(pair_shape)
    scatter_pairs(out, x, src, pair_shape, src_strides, _dim_targets(out, pair_shape, dim, index),
                  accumulate, compute)


def scatter_reduce_along(out, x, src, dim, index, reduce, include_self, compute):
    """torch.scatter_reduce into ``out`` (= x first); ``index`` as in ``scatter_along``."""
    pair_shape = tuple(index.shape)
    targets = _dim_targets(out, pair_shape, dim, index)
    if not _same_memory(out, x):
        tb.copy(out, x)
    if targets.size == 0:
        return
    seg_targets, pairs, starts, max_len = _segments(targets, True)
    src_strides = tuple(src.stride()) if src.dim() else (0,) * len(pair_shape)
    scatter_reduce(out, src, pair_shape, src_strides, upload(out, seg_targets), upload(out, pairs),
                   upload(out, starts), max_len, reduce, include_self, compute)


def index_targets(out, key, host_indices):
    """Element offsets (from out's first element) written by each position of out[key], row-major;
    ``host_indices``: the key's index tensors as host arrays."""
    vshape, vstrides, voff = key.view_layout(out)
    before, after = key.out_axes(len(vshape))
    nb = len(key.bshape)
    ndim = len(before) + nb + len(after)
    total = np.zeros((1,) * ndim, dtype=np.int64) + (voff - out._offset)
    for axis, d in enumerate(before):
        total = total + _axis_term(np.arange(vshape[d], dtype=np.int64) * vstrides[d], axis, ndim)
    for j, d in enumerate(after):
        total = total + _axis_term(np.arange(vshape[d], dtype=np.int64) * vstrides[d], len(before) + nb + j, ndim)
    for d, values in zip(key.dims, host_indices):
        idx = np.broadcast_to(np.asarray(values).astype(np.int64), key.bshape)
        idx = np.where(idx < 0, idx + vshape[d], idx) * vstrides[d]
        total = total + idx.reshape((1,) * len(before) + key.bshape + (1,) * len(after))
    return np.broadcast_to(total, key.result_shape(vshape)).reshape(-1)


def index(out, x, key):
    """out = x[key] (advanced indexing; the indices checked in range): one gather, after one
    pass summing the element offsets when there are several index tensors."""
    vshape, vstrides, voff = key.view_layout(x)
    src = tb._View(vshape, vstrides, voff, x._storage, x.dtype)
    before, after = key.out_axes(len(vshape))
    nb = len(key.bshape)
    src_strides = [vstrides[d] for d in before] + [0] * nb + [vstrides[d] for d in after]
    pad_b, pad_a = [0] * len(before), [0] * len(after)
    if len(key.indices) == 1:
        d, idx = key.dims[0], key.indices[0]
        gather(out, src, src_strides, idx, pad_b + list(tb.broadcast_strides(idx, key.bshape)) + pad_a,
               vshape[d], vstrides[d], wrap=True)
        return
    # several index tensors: one element offset per broadcast position first, then one gather
    acc = tb._scratch(out, key.bshape, tb._dtype("int64"))
    for j, (d, idx) in enumerate(zip(key.dims, key.indices)):
        index_offsets(acc, idx, tb.broadcast_strides(idx, key.bshape), vshape[d], vstrides[d], first=(j == 0))
    gather(out, src, src_strides, acc, pad_b + list(tb._contiguous_strides(key.bshape)) + pad_a, 1, 1,
           wrap=False)


def index_put(out, x, values, key, host_indices, accumulate, compute):
    """out = x with out[key] = values (or += when ``accumulate``); ``host_indices`` as in
    ``index_targets``."""
    pair_shape = key.result_shape(key.view_layout(out)[0])
    scatter_pairs(out, x, values, pair_shape, tb.broadcast_strides(values, pair_shape),
                  index_targets(out, key, host_indices), accumulate, compute)


def compacted(mask, shape, new_output, values=None):
    """Stream compaction on the device: a count per block, their prefix sums, one read back of
    the total (the output's size must be known on the host: a sync, as in torch), then one
    compacting pass. ``new_output(shape)`` allocates the result: (count,) of ``values`` at the
    nonzero positions of ``mask`` (masked_select), or, when ``values`` is None, (count, ndim)
    int64 coordinates (nonzero)."""
    ndim = len(shape)
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if n == 0:
        return new_output((0,) if values is not None else (0, ndim))
    incl, n_blocks = count_blocks(mask, shape)
    total = int(download(incl, n_blocks - 1, 1, np.int64)[0])
    out = new_output((total,) if values is not None else (total, ndim))
    if values is not None or ndim:
        compact(out, mask, shape, incl, values=values, coord_shape=None if values is not None else shape)
    return out


# --------------------------------------------------------------------------- index_add & co. (segments of a sorted index)
_SEGMENT_MODES = {"add": 0, "copy": 1, "fill": 2, "prod": 3, "mean": 4, "amax": 5, "amin": 6}


def index_segments(out, x, src, value, dim, index, mode, include_self=True, alpha=1, compute=None):
    """torch's index_add (mode "add", ``alpha``), index_copy ("copy"), index_fill ("fill",
    ``value`` a 0-d tensor on the device) and index_reduce ("prod", "mean", "amax", "amin",
    ``include_self``) of ``x`` along ``dim`` into ``out`` (x's shape; out may be x itself),
    ``index`` a 1-D int32/int64 tensor of in-range, non-negative indices (the op layer checks and
    wraps them) and ``src`` x's shape with ``index.numel()`` along ``dim`` (None for fill).

    Deterministic without atomics (torch's CUDA index_add uses atomics): the index is sorted
    stably on the device (kernels/sort.py), then one program per destination index finds its
    segment of the sorted index by binary search and folds the source slices it names in index
    order (kernels/index.py index_segment_kernel). Every operand is read in place."""
    if out.numel() == 0:
        return
    k = _kernels()
    cfg = settings()
    from . import sort as tsort
    shape = tuple(int(s) for s in out.shape)
    D, L = shape[dim], int(index.numel())
    keys = tb._scratch(out, (max(L, 1),), tb._dtype(index.dtype.name))
    perm = tb._scratch(out, (max(L, 1),), tb._dtype("int64"))
    if L:
        tsort.sort(keys, perm, index, 0, False)
    src = x if src is None else src
    kept = [d for d in range(len(shape)) if d != dim]
    strides = [tuple(int(st) for st in t.stride()) for t in (out, x, src)]
    kshape, kstrides = tb.coalesce([shape[d] for d in kept], [[st[d] for d in kept] for st in strides])
    kind, alpha_arg = tb._scalar_arg(alpha)
    integer = compute not in ("float16", "bfloat16", "float32", "float64")
    n_search = max(L, 1).bit_length() + 1
    value_ptr = pointer(value) if value is not None else pointer(out)
    for p_shape, p_strides, p_offsets, _ in tb.pieces(kshape, kstrides):
        K = tb._prod(p_shape)
        block = min(tb._next_pow2(K), cfg["segment_block"])
        n_kblocks = tb._cdiv(K, block)
        tb._run(k.index_segment_kernel, (D * n_kblocks,), pointer(out, p_offsets[0]), pointer(x, p_offsets[1]),
                pointer(src, p_offsets[2]), value_ptr, pointer(perm), pointer(keys), L, D, K, n_kblocks, n_search,
                alpha_arg, tuple(p_shape), p_strides[0], p_strides[1], p_strides[2], strides[0][dim], strides[1][dim],
                strides[2][dim], MODE=_SEGMENT_MODES[mode], INCLUDE_SELF=bool(include_self) or mode == "add",
                FLOOR=integer, ALPHA_KIND=kind, COMPUTE=tb._kernels().compute[compute], KRANK=len(p_shape),
                BLOCK_K=block, num_warps=cfg["warps"])
