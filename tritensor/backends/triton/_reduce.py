"""Reductions (kernels/reduce.py): sum/prod/amax/amin/xor/count_nonzero over any dims, and
argmax/argmin. Deterministic: no atomics; few outputs over a long range run in two passes
through a scratch buffer."""
from __future__ import annotations

import math

import numpy as np

from ...runtime.launch import KernelArg, pointer
from ...runtime.launch import _state as _launch_state
from .. import triton as _backend   # the package: every launch goes through _backend._run
from ._copy import copy, fill
from ._memory import _dtype, _View
from ._plan import (MAX_RANK, _cdiv, _contiguous_strides, _kernels, _next_pow2, _prod, coalesce, on_settings_change,
                    settings)


_STORAGE_OF_COMPUTE = {"bool": "int32", "float16": "float32", "bfloat16": "float32"}


def _identity(op, compute):
    if op in ("sum", "xor"):
        return 0
    if op == "prod":
        return 1
    name = _STORAGE_OF_COMPUTE.get(compute, compute)
    if name.startswith("float"):
        return float("-inf") if op == "amax" else float("inf")
    info = np.iinfo(name)
    return int(info.min) if op == "amax" else int(info.max)


def _regrouped(x, kept, red, n_out, R):
    """Too many dims for one launch: copy x once, kept dims first, reduced dims last, so that
    each group is one contiguous run. Returns the copy and its (kept, reduced) shapes/strides."""
    xshape, xstrides = tuple(int(s) for s in x.shape), tuple(int(s) for s in x.stride())
    perm = kept + red
    view = _View([xshape[d] for d in perm], [xstrides[d] for d in perm], x._offset, x._storage, x.dtype)
    x = _backend._scratch(x, view.shape, x.dtype)
    copy(x, view)
    kshape, kstrides = ([n_out], [R]) if n_out > 1 else ([], [])
    rshape, rstrides = ([R], [1]) if R > 1 else ([], [])
    return x, kshape, kstrides, rshape, rstrides


# Launch plans per signature (op, dims, compute dtype, x's and out's shape/strides/dtype, the
# launch mode, INDEX32_LIMIT), as _elementwise.py keeps them: a repeated reduction only allocates
# its scratch (two passes) and fills in the pointers. Planning cost ~50 Python calls a call, and
# on the first H200 run's host ~0.55 us each, inside every timed sum. A change of the launch
# settings drops them.
_PLANS: dict = {}
_PLANS_LIMIT = 4096
on_settings_change(_PLANS.clear)
_new_object = object.__new__
_X, _OUT, _PARTIAL = 0, 1, 2      # the operands a planned launch reads and writes


def reduce(op, out, x, dims, compute):
    """out = OP of x over ``dims`` (sorted non-negative ints; empty = a cast copy; all = a 0-d out),
    op in sum/prod/amax/amin/xor (xor: integer bits, hash_tensor), accumulated in dtype ``compute``. ``out`` is contiguous with x's
    shape minus ``dims``; x may have any strides and is read in place. Deterministic: no atomics,
    every run adds in the same order. An empty reduced range gives the identity (0 / 1); amax/amin
    of an empty range is an error the caller raises first."""
    try:
        key = (op, tuple(dims), compute, _launch_state["mode"], _backend.INDEX32_LIMIT, x._shape, x._stride,
               x.dtype, out._shape, out._stride, out.dtype)
        plan = _PLANS.get(key)
    except (TypeError, AttributeError):      # not tensors as a plan knows them
        key = plan = None
    if plan is None:
        plan = _reduce_planned(op, out, x, dims, compute)
        if plan is None:                     # done without a plan (nothing to do, a fill, a regrouped copy)
            return
        if key is not None:
            if len(_PLANS) >= _PLANS_LIMIT:
                _PLANS.clear()
            _PLANS[key] = plan
    _run_plan(plan, out, x)


def _run_plan(plan, out, x):
    scratch, launches = plan
    operands = [x, out, None if scratch is None else _backend._scratch(x, *scratch)]
    run = _backend._run
    for kernel, grid, (src, dst), tail, meta in launches:
        a, b = operands[src], operands[dst]
        try:
            src_ptr, dst_ptr = _address(a), _address(b)
        except (AttributeError, TypeError):     # a storage whose address or device is not at hand
            src_ptr, dst_ptr = pointer(a), pointer(b)
        run(kernel, grid, src_ptr, dst_ptr, *tail, **meta)


def _address(t):
    """runtime.launch.pointer(t) without its calls (storage.data_ptr, KernelArg.__init__)."""
    storage = t._storage
    dtype = t.dtype
    arg = _new_object(KernelArg)
    arg._ptr = storage._ptr + t._offset * dtype.itemsize
    arg.dtype = dtype
    arg.device_index = storage.device.index
    return arg


def _reduce_planned(op, out, x, dims, compute):
    """The checks and the plan of reduce(): (scratch (shape, dtype) or None, launches); None when
    the call was done here without one."""
    nan_as_zero = op == "nansum"     # sum with NaN read as 0 (on the loaded value)
    if op == "count_nonzero":   # sum of (x != 0) in int64, tested on the loaded value
        op, compute, nonzero = "sum", "int64", True
    elif op in ("sum", "prod", "amax", "amin", "nansum", "xor"):
        op, nonzero = ("sum" if nan_as_zero else op), False
    else:
        raise ValueError(f"reduce: unknown op {op!r}")
    dims = tuple(sorted({int(d) for d in dims}))
    xshape, xstrides = tuple(int(s) for s in x.shape), tuple(int(s) for s in x.stride())
    kept = [d for d in range(len(xshape)) if d not in dims]
    kept_shape = tuple(xshape[d] for d in kept)
    if tuple(out.shape) != kept_shape:
        raise ValueError(f"reduce: out has shape {tuple(out.shape)}, expected {kept_shape}")
    n_out = _prod(kept_shape)
    if n_out == 0:
        return
    if any(st != cs for st, cs, s in zip(out.stride(), _contiguous_strides(kept_shape), kept_shape) if s != 1):
        raise ValueError("reduce: out must be contiguous")
    R = _prod(xshape[d] for d in dims)
    if R == 0:
        if op in ("amax", "amin"):
            raise ValueError(f"reduce: {op} of an empty range has no identity")
        fill(out, 0 if op in ("sum", "xor") else 1)
        return None
    kshape, (kstrides,) = coalesce([xshape[d] for d in kept], [[xstrides[d] for d in kept]])
    # Reduced dims in order of decreasing stride: the innermost reduced index walks memory fastest.
    red = sorted((d for d in dims if xshape[d] != 1), key=lambda d: -abs(xstrides[d]))
    rshape, (rstrides,) = coalesce([xshape[d] for d in red], [[xstrides[d] for d in red]])
    plan = None
    if len(kshape) > MAX_RANK or len(rshape) > MAX_RANK:
        x, kshape, kstrides, rshape, rstrides = _regrouped(x, kept, red, n_out, R)
        _run_plan(_reduce_plan(op, n_out, R, kshape, kstrides, rshape, rstrides, compute, nonzero, nan_as_zero),
                  out, x)     # x is a fresh copy: the plan is not for the caller's x
    else:
        plan = _reduce_plan(op, n_out, R, kshape, kstrides, rshape, rstrides, compute, nonzero, nan_as_zero)
    return plan


def _reduce_blocks(n_out, R, kinner, rinner, cfg):
    """(BLOCK_OUT, BLOCK_RED) for a [kept, reduced] problem: the tile's long side is the index
    that walks memory fastest (smallest stride), so that loads are coalesced."""
    tile = cfg["reduce_tile"]
    if kinner < rinner:   # kept index contiguous (e.g. column sums)
        block_red = min(_next_pow2(R), max(1, tile // cfg["reduce_max_block_out"]))
        block_out = min(_next_pow2(n_out), max(1, tile // block_red))
    else:                 # reduced index contiguous (e.g. row sums)
        block_red = min(_next_pow2(R), tile)
        block_out = min(_next_pow2(n_out), max(1, tile // block_red))
    return block_out, block_red


def _chunking(n_blocks, R, block_red, cfg):
    """(chunks, chunk): split the reduced range when there are too few programs to fill the GPU,
    into chunks of at least reduce_min_iters tiles (a multiple of block_red). Same split every
    run: the result stays deterministic."""
    chunks, chunk = 1, R
    if n_blocks < cfg["reduce_target_programs"] and R > block_red * cfg["reduce_min_iters"]:
        chunks = min(_cdiv(R, block_red * cfg["reduce_min_iters"]), _cdiv(cfg["reduce_target_programs"], n_blocks))
        chunk = _cdiv(_cdiv(R, chunks), block_red) * block_red
        chunks = _cdiv(R, chunk)
    return chunks, chunk


def _reduce_plan(op, n_out, R, kshape, kstrides, rshape, rstrides, compute, nonzero=False, nan_as_zero=False):
    """(scratch, launches) of a [kept, reduced] problem: one launch from x to out, or two through
    a scratch buffer of partial results (shape, dtype)."""
    k = _kernels()
    cfg = settings()
    compute_tl = k.compute[compute]
    ident = _identity(op, compute)
    kinner = abs(kstrides[-1]) if kshape else math.inf
    rinner = abs(rstrides[-1]) if rshape else math.inf
    kshape, kstrides = (tuple(kshape), tuple(kstrides)) if kshape else ((1,), (0,))
    rshape, rstrides = (tuple(rshape), tuple(rstrides)) if rshape else ((1,), (0,))
    block_out, block_red = _reduce_blocks(n_out, R, kinner, rinner, cfg)
    n_blocks = _cdiv(n_out, block_out)
    chunks, chunk = _chunking(n_blocks, R, block_red, cfg)
    meta = dict(OP=op, IDENTITY=ident, COMPUTE=compute_tl, num_warps=cfg["reduce_warps"])
    kernel = k.reduce.reduce_kernel
    if chunks == 1:
        return None, [(kernel, (n_blocks, 1), (_X, _OUT), (n_out, R, R, kshape, kstrides, rshape, rstrides, 1, 0),
                       dict(KRANK=len(kshape), RRANK=len(rshape), BLOCK_OUT=block_out, BLOCK_RED=block_red,
                            NONZERO=nonzero, NAN_AS_ZERO=nan_as_zero, **meta))]
    # Pass 1: partial[k, c] = OP over chunk c of x[k, :]. Pass 2: out[k] = OP over c of partial[k, c].
    scratch = ((n_out, chunks), _dtype(_STORAGE_OF_COMPUTE.get(compute, compute)))
    first = (kernel, (n_blocks, chunks), (_X, _PARTIAL),
             (n_out, R, chunk, kshape, kstrides, rshape, rstrides, chunks, 1),
             dict(KRANK=len(kshape), RRANK=len(rshape), BLOCK_OUT=block_out, BLOCK_RED=block_red,
                  NONZERO=nonzero, NAN_AS_ZERO=nan_as_zero, **meta))
    block_out, block_red = _reduce_blocks(n_out, chunks, chunks, 1, cfg)
    second = (kernel, (_cdiv(n_out, block_out), 1), (_PARTIAL, _OUT),
              (n_out, chunks, chunks, (n_out,), (chunks,), (chunks,), (1,), 1, 0),
              dict(KRANK=1, RRANK=1, BLOCK_OUT=block_out, BLOCK_RED=block_red, **meta))
    return scratch, [first, second]


# --------------------------------------------------------------------------- argmax / argmin
def arg_reduce(op, out, x, dim, compute):
    """out = the index of the max (op "argmax") or min ("argmin") of x along ``dim`` (an int), or
    over all of x in row-major order (dim None; out is then 0-d). ``out`` is int64, contiguous,
    with x's shape minus ``dim``; x may have any strides and is read in place. NaN wins, the first
    index wins ties (torch's rules). The caller rejects an empty reduced range."""
    if op not in ("argmax", "argmin"):
        raise ValueError(f"arg_reduce: unknown op {op!r}")
    k = _kernels()
    cfg = settings()
    xshape, xstrides = tuple(int(s) for s in x.shape), tuple(int(s) for s in x.stride())
    red = list(range(len(xshape))) if dim is None else [int(dim)]
    kept = [d for d in range(len(xshape)) if d not in red]
    n_out = _prod(xshape[d] for d in kept)
    R = _prod(xshape[d] for d in red)
    if n_out == 0 or out.numel() == 0:
        return
    if R == 0:
        raise ValueError(f"arg_reduce: {op} of an empty range")
    kshape, (kstrides,) = coalesce([xshape[d] for d in kept], [[xstrides[d] for d in kept]])
    rshape, (rstrides,) = coalesce([xshape[d] for d in red], [[xstrides[d] for d in red]])  # row-major
    if len(kshape) > MAX_RANK or len(rshape) > MAX_RANK:
        x, kshape, kstrides, rshape, rstrides = _regrouped(x, kept, red, n_out, R)
    kinner = abs(kstrides[-1]) if kshape else math.inf
    rinner = abs(rstrides[-1]) if rshape else math.inf
    kshape, kstrides = (tuple(kshape), tuple(kstrides)) if kshape else ((1,), (0,))
    rshape, rstrides = (tuple(rshape), tuple(rstrides)) if rshape else ((1,), (0,))
    block_out, block_red = _reduce_blocks(n_out, R, kinner, rinner, cfg)
    n_blocks = _cdiv(n_out, block_out)
    meta = dict(IS_MAX=(op == "argmax"), IDENTITY=_identity("amax" if op == "argmax" else "amin", compute),
                COMPUTE=k.compute[compute], num_warps=cfg["reduce_warps"])
    chunks, chunk = _chunking(n_blocks, R, block_red, cfg)
    if chunks == 1:
        _backend._run(k.reduce.arg_reduce_kernel, (n_blocks, 1), pointer(x), pointer(x), pointer(out), pointer(out),
                      n_out, R, R, kshape, kstrides, rshape, rstrides, 1, 0, KRANK=len(kshape), RRANK=len(rshape),
                      BLOCK_OUT=block_out, BLOCK_RED=block_red, HAS_IDX=False, STORE_VAL=False, **meta)
        return
    # Few outputs, long ranges (the whole-tensor argmax above all): pass 1 finds the winner of
    # each chunk, pass 2 the winner among the chunk winners (their values and indices).
    values = _backend._scratch(x, (n_out, chunks), _dtype(_STORAGE_OF_COMPUTE.get(compute, compute)))
    indices = _backend._scratch(x, (n_out, chunks), _dtype("int64"))
    _backend._run(k.reduce.arg_reduce_kernel, (n_blocks, chunks), pointer(x), pointer(x), pointer(values),
                  pointer(indices), n_out, R, chunk, kshape, kstrides, rshape, rstrides, chunks, 1,
                  KRANK=len(kshape), RRANK=len(rshape), BLOCK_OUT=block_out, BLOCK_RED=block_red,
                  HAS_IDX=False, STORE_VAL=True, **meta)
    block_out, block_red = _reduce_blocks(n_out, chunks, chunks, 1, cfg)
    _backend._run(k.reduce.arg_reduce_kernel, (_cdiv(n_out, block_out), 1), pointer(values), pointer(indices),
                  pointer(out), pointer(out), n_out, chunks, chunks, (n_out,), (chunks,), (chunks,), (1,), 1, 0,
                  KRANK=1, RRANK=1, BLOCK_OUT=block_out, BLOCK_RED=block_red, HAS_IDX=True, STORE_VAL=False, **meta)

