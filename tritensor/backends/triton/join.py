"""Launchers of the joining and triangular ops: cat, stack, flip, tril/triu.

cat and stack are one strided copy (backends.triton.copy) per input, into the narrow (cat) or
select (stack) view of the output that input fills. flip and tril/triu launch kernels/join.py.
The kernel module is imported inside the launchers, never with this module: Triton decides
between compiled and interpreted kernels when the kernels are decorated (see triton._kernels).
"""
from __future__ import annotations

import itertools

from ...runtime.launch import pointer
from .. import triton as tb

_JOIN = None


def _join_kernels():
    global _JOIN
    if _JOIN is None:
        tb._kernels()     # the shared kernel modules first (and the MAX_RANK check)
        from tritensor.kernels import join as join_k
        _JOIN = join_k
    return _JOIN


def _sub_view(out, shape, strides, extra_offset):
    return tb._View(shape, strides, out._offset + extra_offset, out._storage, out.dtype)


def cat(out, inputs, dim):
    """out = the inputs joined along ``dim``; an input of shape (0,) is skipped (torch's legacy
    rule), every input is cast to out's dtype and read in place whatever its strides."""
    shape, strides = tuple(out.shape), tuple(out.stride())
    start = 0
    for x in inputs:
        if len(x.shape) == 1 and x.numel() == 0:
            continue
        size = int(x.shape[dim])
        if x.numel():
            piece_shape = shape[:dim] + (size,) + shape[dim + 1:]
            tb.copy(_sub_view(out, piece_shape, strides, start * strides[dim]), x)
        start += size


def stack(out, inputs, dim):
    """out.select(dim, i) = inputs[i] (cast to out's dtype)."""
    shape, strides = tuple(out.shape), tuple(out.stride())
    piece_shape, piece_strides = shape[:dim] + shape[dim + 1:], strides[:dim] + strides[dim + 1:]
    for i, x in enumerate(inputs):
        if x.numel():
            tb.copy(_sub_view(out, piece_shape, piece_strides, i * strides[dim]), x)


def _leading_loop(shape, strides_list, inner_rank):
    """Split a problem into launches of at most ``inner_rank`` trailing dims: yields
    (leading coordinates, element offset per operand) for every leading position."""
    lead = max(len(shape) - inner_rank, 0)
    for coords in itertools.product(*(range(s) for s in shape[:lead])):
        yield coords, [sum(c * st for c, st in zip(coords, s[:lead])) for s in strides_list]


def flip(out, x, dims):
    """out = x reversed along ``dims`` (non-negative ints); out and x may have any strides."""
    if out.numel() == 0:
        return
    k = _join_kernels()
    flips = [1 if d in set(dims) else 0 for d in range(len(x.shape))]
    # Coalesce jointly: drop size-1 dims, merge neighbours with the same flip flag that both
    # operands can merge (reversing both coordinates of a merged run reverses the run).
    shape, ost, sst, fl = [], [], [], []
    for d, size in enumerate(out.shape):
        if size == 1:
            continue
        o, s = out.stride()[d], x.stride()[d]
        if shape and fl[-1] == flips[d] and ost[-1] == o * size and sst[-1] == s * size:
            shape[-1] *= size
            ost[-1], sst[-1] = o, s
        else:
            shape.append(int(size))
            ost.append(int(o))
            sst.append(int(s))
            fl.append(flips[d])
    if not shape:
        shape, ost, sst, fl = [1], [0], [0], [0]
    cfg = tb.settings()
    block = cfg["copy_block"]
    lead = max(len(shape) - tb.MAX_RANK, 0)
    inner = tuple(shape[lead:])
    n = tb._prod(inner)
    for coords, (o_off, _) in _leading_loop(shape, [ost, sst], tb.MAX_RANK):
        # the source coordinate of a flipped leading dim is reversed here, in Python
        s_off = sum((shape[d] - 1 - c if fl[d] else c) * sst[d] for d, c in enumerate(coords))
        tb._run(k.flip_kernel, (tb._cdiv(n, block),), pointer(out, o_off), pointer(x, s_off), n, inner,
                tuple(ost[lead:]), tuple(sst[lead:]), tuple(fl[lead:]), RANK=len(inner), BLOCK=block,
                num_warps=cfg["copy_warps"])


def tri(out, x, diagonal, upper):
    """tril (upper False) / triu (upper True) over the last two dims, batched over the others.
    ``out`` may be ``x`` itself (tril_/triu_)."""
    if out.numel() == 0:
        return
    k = _join_kernels()
    shape = tuple(int(s) for s in x.shape)
    ostr, sstr = tuple(int(s) for s in out.stride()), tuple(int(s) for s in x.stride())
    bshape, (bo, bs) = tb.coalesce(shape[:-2], [ostr[:-2], sstr[:-2]])
    full_shape = list(bshape) + list(shape[-2:])
    ost, sst = list(bo) + list(ostr[-2:]), list(bs) + list(sstr[-2:])
    cfg = tb.settings()
    block = cfg["copy_block"]
    lead = max(len(full_shape) - tb.MAX_RANK, 0)
    inner = tuple(full_shape[lead:])
    n = tb._prod(inner)
    for _, (o_off, s_off) in _leading_loop(full_shape, [ost, sst], tb.MAX_RANK):
        tb._run(k.tri_kernel, (tb._cdiv(n, block),), pointer(out, o_off), pointer(x, s_off), n, int(diagonal),
                inner, tuple(ost[lead:]), tuple(sst[lead:]), UPPER=bool(upper), RANK=len(inner), BLOCK=block,
                num_warps=cfg["copy_warps"])
