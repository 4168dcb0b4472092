"""The Triton launchers: they turn tensors into pointers, shapes and strides and call kernels/.

From a tensor a launcher uses only ``shape``, ``stride()``, ``_offset``, ``_storage.data_ptr()``,
``dtype`` (``name``, ``itemsize``, ``is_floating_point``) and ``numel()``; kernel pointers come
from ``runtime.launch.pointer``. Every launcher

- returns at once for a zero-size output (no kernel is launched);
- broadcasts each input's strides to the output's shape (stride 0 on broadcast dims) and reads
  every operand in place, whatever its strides;
- coalesces dims across all operands (size-1 dims dropped, neighbours merged where every operand
  is contiguous across them), so contiguous tensors become rank 1 with stride 1, a value Triton
  specialises to a constant and vectorizes;
- passes at most ``MAX_RANK`` dims per launch, looping in Python over leading dims beyond that
  (each piece gets pointers offset to its first element).

Compute dtypes arrive as tritensor dtype names. Two of them compute in a wider type (the result
is the same as computing in the named type and rounding once): ``bool`` computes in int32 with
0/1 values (Triton's int1 arithmetic wraps: True + True would be False), and ``float16`` /
``bfloat16`` compute in float32 (Triton's math functions take only float32/float64).

Reductions with few outputs and a long reduced range run in two deterministic passes through a
scratch buffer (``_scratch``: the caching allocator on a GPU, host memory under the interpreter).

Dtype objects handed to Triton (``tensor.dtype``) must be long-lived singletons: Triton caches a
pointer argument's type by ``id(arg.dtype)``, so a dtype object created per call can be mistaken
for a dead one of another type that had the same id.

The kernel modules are imported on first use, not with this module: Triton decides between
compiled and interpreted kernels when they are decorated, and the runtime sets
``TRITON_INTERPRET`` (emulated device) before the first launch.
"""
from __future__ import annotations

import itertools
import math
import numbers
import os
import struct

import numpy as np

from ..runtime.launch import _state as _launch_state
from ..runtime.launch import KernelArg, launch_kernel, pointer

MAX_RANK = 6   # dims per launch (kernels/strided.py says the same)

# Launch settings. On a GPU: 1024-element blocks for the memory-bound elementwise kernels, reduction
# tiles of 4096 elements. Under the interpreter every program costs ~0.35 ms of Python, so small
# blocks keep the test shapes (a few hundred elements) crossing block boundaries with few programs.
GPU_SETTINGS = {
    "elementwise_block": 1024, "elementwise_warps": 4,
    "copy_block": 1024, "copy_warps": 4,
    "tile": 64, "tile_warps": 4,    # transposed operands: [64, 64] tiles (elementwise, copy)
    "random_block": 1024, "random_warps": 4,
    "reduce_tile": 4096,            # elements of one [BLOCK_OUT, BLOCK_RED] tile
    "reduce_max_block_out": 256,    # kept-contiguous tiles are at least this wide in BLOCK_OUT
    "reduce_warps": 8,
    "reduce_target_programs": 528,  # split the reduced range when fewer programs than this ...
    "reduce_min_iters": 4,          # ... into chunks of at least this many tiles
    "row_tile": 4096,               # softmax / scan: elements of one [BLOCK_M, BLOCK_N] tile ...
    "row_max_block_n": 4096,        # ... whose row chunk is at most this long
    "row_resident_bytes": 65536,    # softmax rows up to this size (in the compute dtype) are read once
    "row_resident_warps": 16,       # ... by up to this many warps (32 float32 values a thread)
    "scan_max_block_n": 1024,
    "row_warps": 8,
}
INTERPRETER_SETTINGS = {
    "elementwise_block": 128, "elementwise_warps": 4,
    "copy_block": 128, "copy_warps": 4,
    "tile": 8, "tile_warps": 4,
    "random_block": 128, "random_warps": 4,
    "reduce_tile": 64,
    "reduce_max_block_out": 16,
    "reduce_warps": 4,
    "reduce_target_programs": 4,
    "reduce_min_iters": 2,
    "row_tile": 64,
    "row_max_block_n": 32,
    "row_resident_bytes": 128,      # float32 rows of <= 32 values take the one-tile path
    "row_resident_warps": 4,
    "scan_max_block_n": 16,
    "row_warps": 4,
}


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET") == "1"


def settings() -> dict:
    return INTERPRETER_SETTINGS if interpreting() else GPU_SETTINGS


# --------------------------------------------------------------------------- lazy kernel import
class _Kernels:
    pass


_K = None


def _kernels():
    global _K
    if _K is None:
        import triton.language as tl

        from tritensor.kernels import copy as copy_k
        from tritensor.kernels import elementwise as ew_k
        from tritensor.kernels import random as random_k
        from tritensor.kernels import reduce as reduce_k
        from tritensor.kernels import scan as scan_k
        from tritensor.kernels import softmax as softmax_k
        from tritensor.kernels import tiled as tiled_k
        from tritensor.kernels.strided import MAX_RANK as kernel_max_rank
        assert kernel_max_rank == MAX_RANK
        k = _Kernels()
        k.tl, k.elementwise, k.copy, k.reduce, k.random = tl, ew_k, copy_k, reduce_k, random_k
        k.softmax, k.scan, k.tiled = softmax_k, scan_k, tiled_k
        k.compute = {
            "bool": tl.int32, "uint8": tl.uint8, "int8": tl.int8, "int16": tl.int16,
            "int32": tl.int32, "int64": tl.int64, "float16": tl.float32, "bfloat16": tl.float32,
            "float32": tl.float32, "float64": tl.float64,
        }
        _K = k
    return _K


# Every launch goes through here: runtime/launch.py runs it on the current stream of the
# arguments' device (and under the interpreter with NumPy's float warnings silenced).
_run = launch_kernel


# --------------------------------------------------------------------------- shapes and strides
def _cdiv(a, b):
    return -(-a // b)


def _next_pow2(n):
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


def _prod(xs):
    return math.prod(int(x) for x in xs)


def _contiguous_strides(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(int(s), 1)
    return tuple(reversed(strides))


_TENSOR_TYPES: dict = {}    # type -> is it a tensor (the ABC check once per type, not per call)


def _is_tensor(x):
    tp = type(x)
    r = _TENSOR_TYPES.get(tp)
    if r is None:
        r = _TENSOR_TYPES[tp] = not issubclass(tp, (numbers.Number, np.generic))
    return r


def broadcast_strides(t, out_shape):
    """``t``'s strides for reading it as ``out_shape`` (right-aligned; stride 0 on new and size-1 dims)."""
    shape, strides = tuple(t.shape), tuple(t.stride())
    lead = len(out_shape) - len(shape)
    if lead < 0:
        raise ValueError(f"cannot broadcast shape {shape} to {tuple(out_shape)}")
    result = []
    for j, size in enumerate(out_shape):
        i = j - lead
        if i < 0 or (shape[i] == 1 and size != 1):
            result.append(0)
        elif shape[i] == size:
            result.append(int(strides[i]))
        else:
            raise ValueError(f"cannot broadcast shape {shape} to {tuple(out_shape)}")
    return tuple(result)


def coalesce(shape, strides_list):
    """Drop size-1 dims and merge dims i, i+1 wherever every operand has
    stride[i] == stride[i+1] * shape[i+1]. Returns (shape, [strides per operand]); row-major
    order is preserved, so a linear index means the same element before and after."""
    new_shape, new_strides = [], [[] for _ in strides_list]
    for d, size in enumerate(shape):
        size = int(size)
        if size == 1:
            continue
        if new_shape and all(ns[-1] == int(s[d]) * size for ns, s in zip(new_strides, strides_list)):
            new_shape[-1] *= size
            for ns, s in zip(new_strides, strides_list):
                ns[-1] = int(s[d])
        else:
            new_shape.append(size)
            for ns, s in zip(new_strides, strides_list):
                ns.append(int(s[d]))
    return new_shape, new_strides


def pieces(shape, strides_list):
    """Split a coalesced problem into launches of rank 1..MAX_RANK. Yields
    (shape, [strides per operand], [element offset per operand], linear index of the first element)."""
    if not shape:   # 0-d (or all size-1): one element
        yield (1,), [(0,) for _ in strides_list], [0] * len(strides_list), 0
        return
    lead = len(shape) - MAX_RANK
    if lead <= 0:
        yield tuple(shape), [tuple(s) for s in strides_list], [0] * len(strides_list), 0
        return
    inner_shape = tuple(shape[lead:])
    inner_strides = [tuple(s[lead:]) for s in strides_list]
    inner_n = _prod(inner_shape)
    for linear, idx in enumerate(itertools.product(*(range(s) for s in shape[:lead]))):
        offsets = [sum(i * st for i, st in zip(idx, s[:lead])) for s in strides_list]
        yield inner_shape, inner_strides, offsets, linear * inner_n


def fast_dim(shape, strides):
    """The dim along which an operand is contiguous (stride +-1, size > 1), else None."""
    for d in range(len(shape) - 1, -1, -1):
        if abs(strides[d]) == 1 and shape[d] > 1:
            return d
    return None


def tile_plan(shape, strides_list, n_out=1):
    """How to walk a coalesced elementwise problem whose operands (outputs first) disagree about
    their contiguous dim. Returns (shape, strides_list, tiled): the dims reordered so that the
    first output's contiguous dim comes last (as torch's TensorIterator orders them), and, when
    some input still has its contiguous dim elsewhere (and reads more than a broadcast along the
    last dim), that dim moved second to last with tiled True: a 2-D tile over the last two dims
    then reads every operand along its own fast dim (kernels/tiled.py). Otherwise tiled is False
    and the 1-D kernels walk the (reordered) problem."""
    rank = len(shape)
    if rank < 2:
        return shape, strides_list, False
    order = list(range(rank))
    out_fast = fast_dim(shape, strides_list[0])
    if out_fast is not None and out_fast != rank - 1:
        order.remove(out_fast)
        order.append(out_fast)
    last = order[-1]
    tile_dim = None
    for strides in strides_list[n_out:]:
        d = fast_dim(shape, strides)
        if d is not None and d != last and strides[last] != 0:
            tile_dim = d
            break
    if tile_dim is not None:
        order.remove(tile_dim)
        order.insert(len(order) - 1, tile_dim)
    if order == list(range(rank)) and tile_dim is None:
        return shape, strides_list, False
    shape = [shape[d] for d in order]
    strides_list = [[st[d] for d in order] for st in strides_list]
    if tile_dim is None:      # reordered only: merge what has become mergeable
        shape, strides_list = coalesce(shape, strides_list)
        return shape, strides_list, False
    return shape, strides_list, rank <= MAX_RANK


def _launch_tiled(fn, out, operands, kinds, shape, strides_list, compute, cfg):
    """One tiled_kernel launch over ``shape`` (the last two dims are the tile's R and C, see
    tile_plan). ``operands``: up to 3 tensors or scalars with their (kind, value) in ``kinds``;
    ``strides_list``: the output's strides, then one entry per tensor operand."""
    k = _kernels()
    R, C = int(shape[-2]), int(shape[-1])
    outer = list(shape[:-2]) or [1]
    tile_r, tile_c = min(cfg["tile"], _next_pow2(R)), min(cfg["tile"], _next_pow2(C))
    def outer_then_tile(st):      # a size-1 outer dim of stride 0 when the problem has none
        return tuple(st[:-2] or [0]) + tuple(st[-2:])

    strides = iter(strides_list[1:])
    out_ptr = pointer(out)
    args, all_strides = [], [outer_then_tile(strides_list[0])]
    unused = [(None, (1, 0))] * (3 - len(operands))      # operand slots the kernel never reads
    for x, (kind, value) in list(zip(operands, kinds)) + unused:
        if kind == 0:
            args += [pointer(x), 0]
            all_strides.append(outer_then_tile(next(strides)))
        else:             # a scalar (or an unused slot): the pointer is never loaded
            args += [out_ptr, value]
            all_strides.append((0,) * (len(outer) + 2))
    kinds = [kind for kind, _ in kinds] + [1] * len(unused)
    grid = (_prod(outer) * _cdiv(R, tile_r) * _cdiv(C, tile_c),)
    _run(k.tiled.tiled_kernel, grid, out_ptr, *args, R, C, tuple(outer), *all_strides,
         FN=fn, N_IN=len(operands), A_KIND=kinds[0], B_KIND=kinds[1], C_KIND=kinds[2],
         COMPUTE=k.compute[compute], ORANK=len(outer), TILE_R=tile_r, TILE_C=tile_c,
         num_warps=cfg["tile_warps"])


INDEX32_LIMIT = 2 ** 31 - 1   # kernels index in int32 while every index and offset stays below


def needs_int64(n, block, shape, strides_list):
    """True when a launch over ``n`` elements of ``shape`` (blocks of ``block``) must index in
    int64: the last block's indices, or the largest element offset of some operand (strides
    are never negative), would pass INDEX32_LIMIT."""
    if n + block > INDEX32_LIMIT:
        return True
    return any(sum((d - 1) * abs(st) for d, st in zip(shape, strides)) > INDEX32_LIMIT
               for strides in strides_list)


# --------------------------------------------------------------------------- scalars
INT_SCALAR, FLOAT_SCALAR = 1, 2   # operand kinds; 0 is a tensor


def _float_bits(v):
    """The int64 bit pattern of float64(v): Triton would type a Python float argument float32."""
    return struct.unpack("<q", struct.pack("<d", float(v)))[0]


def _scalar_arg(v):
    if isinstance(v, (bool, np.bool_)):
        return INT_SCALAR, int(bool(v))
    if isinstance(v, numbers.Integral):
        return INT_SCALAR, int(v)
    if isinstance(v, numbers.Real):
        return FLOAT_SCALAR, _float_bits(v)
    raise TypeError(f"unsupported scalar operand {v!r} of type {type(v).__name__}")


# --------------------------------------------------------------------------- scratch memory
class _DType:
    """A dtype stand-in for scratch buffers in a compute dtype. Get one with ``_dtype(name)``:
    Triton's argument specialization caches a pointer's type by ``id(arg.dtype)``, so dtype
    objects must live forever (one per name), never be created per call."""
    _ITEMSIZE = {"bool": 1, "uint8": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8,
                 "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}

    def __init__(self, name):
        self.name = name
        self.itemsize = self._ITEMSIZE[name]
        self.is_floating_point = name.startswith(("float", "bfloat"))

    def __str__(self):
        return f"tritensor.{self.name}"


_DTYPES: dict = {}


def _dtype(name):
    d = _DTYPES.get(name)
    if d is None:
        d = _DTYPES[name] = _DType(name)
    return d


class _HostBuffer:
    def __init__(self, nbytes):
        raw = np.empty(nbytes + 256, dtype=np.uint8)
        start = (-raw.ctypes.data) % 256
        self.host = raw[start:start + nbytes]
        self._ptr = raw.ctypes.data + start

    def data_ptr(self):
        return self._ptr


class _View:
    """Just what the launchers read from a tensor: for scratch buffers and permuted views."""

    def __init__(self, shape, strides, offset, storage, dtype):
        self.shape = tuple(int(s) for s in shape)
        self._strides = tuple(int(s) for s in strides)
        self._offset = int(offset)
        self._storage = storage
        self.dtype = dtype

    def stride(self):
        return self._strides

    def numel(self):
        return _prod(self.shape)


def _scratch(like, shape, dtype):
    """A contiguous buffer on ``like``'s device (host memory under the interpreter)."""
    nbytes = max(_prod(shape) * dtype.itemsize, 1)
    if interpreting():
        storage = _HostBuffer(nbytes)
    else:
        from ..runtime.storage import Storage
        storage = Storage(nbytes, like._storage.device)
    return _View(shape, _contiguous_strides(shape), 0, storage, dtype)


# --------------------------------------------------------------------------- elementwise
# The launch plan of an elementwise call depends only on its signature: the function, every
# operand's shape/strides/dtype (or a scalar's kind), the output(s)' shape/strides/dtype, the
# compute dtype and the settings in force. A signature seen before reuses the plan (grid, coalesced
# shapes and strides, pieces, meta-parameters): only the pointers and the scalar values are new.
_EW_PLANS: dict = {}
_EW_PLANS_LIMIT = 4096


def elementwise(fn, out, inputs, compute, **scalars):
    """out[...] = FN(*inputs): see _elementwise_planned. A signature seen before goes straight
    to the launch with its cached plan."""
    if scalars:
        _elementwise_planned(fn, out, inputs, compute, **scalars)     # raises
        return
    outs = out if isinstance(out, (tuple, list)) else (out,)
    # the signature: the launch mode (fixed at the first launch: interpreted or compiled) stands
    # for the settings the plan was made with (None before any launch); tensors by shape,
    # strides and dtype; scalars by kind (int or float bits), never by value
    # every module setting the plan was made with is in the key too (tests change them)
    key = [fn, compute, _launch_state["mode"], len(outs), INDEX32_LIMIT, MAX_RANK,
           INTERPRETER_SETTINGS["elementwise_block"], INTERPRETER_SETTINGS["elementwise_warps"],
           GPU_SETTINGS["elementwise_block"], GPU_SETTINGS["elementwise_warps"]]
    values = []               # per input: None for a tensor, else the scalar's kernel value
    try:
        for o in outs:
            key.append((o._shape, o._stride, o.dtype))
        for x in inputs:
            is_tensor = _TENSOR_TYPES.get(type(x))
            if is_tensor is None:
                is_tensor = _is_tensor(x)
            if is_tensor:
                key.append((x._shape, x._stride, x.dtype))
                values.append(None)
            else:
                kind, value = _scalar_arg(x)
                key.append(kind)
                values.append(value)
        key = tuple(key)
    except (TypeError, AttributeError):     # not tensors as the plan knows them: no plan
        key = None
    plan = _EW_PLANS.get(key) if key is not None else None
    if plan is not None:
        _launch_plan(plan, outs, inputs, values)
        return
    plan = _elementwise_planned(fn, out, inputs, compute)
    if key is not None and plan is not None:
        if len(_EW_PLANS) >= _EW_PLANS_LIMIT:
            _EW_PLANS.clear()
        _EW_PLANS[key] = plan


_new_object = object.__new__


def _pointer(x, extra):
    """runtime.launch.pointer, for storages whose address and device are known (KernelArg
    filled in without its __init__); anything else goes through pointer()."""
    storage = x._storage
    ptr = getattr(storage, "_ptr", None)
    device = getattr(storage, "device", None)
    if ptr is None or device is None:
        return pointer(x, extra)
    dtype = x.dtype
    arg = _new_object(KernelArg)
    arg._ptr = ptr + (x._offset + extra) * dtype.itemsize
    arg.dtype = dtype
    arg.device_index = device.index
    return arg


def _launch_plan(plan, outs, inputs, values):
    """The launches of a cached plan: (kernel, meta, pieces), each piece (grid, n, shape,
    output strides, operand strides, offsets, WIDE). ``values``: None per tensor input, the
    kernel value per scalar."""
    kernel, meta, pieces_ = plan
    two_slots = len(inputs) > 1          # binary/ternary kernels take (pointer, value) per operand
    for grid, n, p_shape, out_strides, operand_strides, p_offsets, wide in pieces_:
        out_ptrs = []
        for i, o in enumerate(outs):
            out_ptrs.append(_pointer(o, p_offsets[i]))
        out_ptr = out_ptrs[0]
        operands = []
        t = len(outs)
        for x, value in zip(inputs, values):
            if value is None:
                operands.append(_pointer(x, p_offsets[t]))
                if two_slots:
                    operands.append(0)
                t += 1
            else:
                operands += [out_ptr, value]
        _run(kernel, grid, *out_ptrs, *operands, n, p_shape, *out_strides, *operand_strides,
             RANK=len(p_shape), WIDE=wide, **meta)


def _elementwise_planned(fn, out, inputs, compute, **scalars):
    """out[...] = FN(*inputs), computed in dtype ``compute`` (a dtype name) and cast to out's dtype.

    ``inputs``: 1-3 operands, each a tensor broadcastable to ``out.shape`` or a Python
    bool/int/float (passed as a kernel scalar). ``out`` may have any strides (in-place ops write
    through views). ``fn`` names a function of kernels/elementwise.py (UNARY, BINARY, TERNARY).
    ``out`` may also be a pair of same-shape tensors for an FN with two results (TERNARY_2OUT,
    e.g. both gradients of a product in one pass over memory).
    No FN takes extra scalar attributes yet: passing any is an error.
    """
    if scalars:
        raise TypeError(f"elementwise({fn!r}): unexpected attributes {sorted(scalars)}")
    k = _kernels()
    inputs = list(inputs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if len(outs) == 2:
        table = k.elementwise.TERNARY_2OUT if len(inputs) == 3 else None
        if any(tuple(o.shape) != tuple(outs[0].shape) for o in outs):
            raise ValueError(f"elementwise({fn!r}): the outputs must have one shape")
    else:
        table = {1: k.elementwise.UNARY, 2: k.elementwise.BINARY, 3: k.elementwise.TERNARY}.get(len(inputs))
    if table is None or fn not in table:
        raise ValueError(f"elementwise: no {len(inputs)}-operand function named {fn!r} with {len(outs)} result(s)")
    if not any(_is_tensor(x) for x in inputs):
        raise ValueError(f"elementwise({fn!r}): at least one operand must be a tensor")
    out = outs[0]
    if out.numel() == 0:
        return
    out_shape = tuple(out.shape)
    tensors = [x for x in inputs if _is_tensor(x)]
    strides = [tuple(o.stride()) for o in outs] + [broadcast_strides(x, out_shape) for x in tensors]
    shape, strides = coalesce(out_shape, strides)
    # operand kind (0 tensor, 1 int, 2 float bits) and scalar value, per input
    kinds = [(0, 0) if _is_tensor(x) else _scalar_arg(x) for x in inputs]
    if len(inputs) == 1 and kinds[0][0] != 0:
        raise ValueError(f"elementwise({fn!r}): the operand must be a tensor")
    shape, strides, tiled = tile_plan(shape, strides, len(outs))
    if tiled and len(outs) == 1:
        _launch_tiled(table[fn], out, inputs, kinds, shape, strides, compute, settings())
        return None      # tiled launches are not planned (their path is already short)
    kernel = {1: k.elementwise.unary_kernel, 2: k.elementwise.binary_kernel,
              3: k.elementwise.ternary_kernel}[len(inputs)]
    if len(outs) == 2:
        kernel = k.elementwise.ternary_2out_kernel
    cfg = settings()
    block = cfg["elementwise_block"]
    meta = dict(FN=table[fn], COMPUTE=k.compute[compute], BLOCK=block, num_warps=cfg["elementwise_warps"])
    if len(inputs) > 1:
        meta.update(zip(("A_KIND", "B_KIND", "C_KIND"), (kind for kind, _ in kinds)))
    planned = []
    for p_shape, p_strides, p_offsets, _ in pieces(shape, strides):
        n = _prod(p_shape)
        out_ptrs = [pointer(o, p_offsets[i]) for i, o in enumerate(outs)]
        out_ptr = out_ptrs[0]
        operands, operand_strides = [], []
        t = len(outs)   # index of the next tensor operand in p_strides / p_offsets
        for x, (kind, value) in zip(inputs, kinds):
            if kind == 0:
                operands += [pointer(x, p_offsets[t])] + ([0] if len(inputs) > 1 else [])
                operand_strides.append(p_strides[t])
                t += 1
            else:   # a scalar: the pointer slot is unused (any pointer will do)
                operands += [out_ptr, value]
                operand_strides.append((0,) * len(p_shape))
        grid = (_cdiv(n, block),)
        wide = needs_int64(n, block, p_shape, p_strides)
        _run(kernel, grid, *out_ptrs, *operands, n, p_shape, *p_strides[:len(outs)],
             *operand_strides, RANK=len(p_shape), WIDE=wide, **meta)
        planned.append((grid, n, tuple(p_shape), tuple(tuple(st) for st in p_strides[:len(outs)]),
                        tuple(tuple(st) for st in operand_strides), tuple(p_offsets), wide))
    return kernel, meta, tuple(planned)


# --------------------------------------------------------------------------- copy and fill
def copy(out, src):
    """out[...] = src (broadcast to out.shape, cast to out's dtype); both may have any strides.
    float -> int truncates toward zero, anything -> bool is != 0, bool -> number is 0/1."""
    if not _is_tensor(src):
        return fill(out, src)
    if out.numel() == 0:
        return
    k = _kernels()
    out_shape = tuple(out.shape)
    shape, strides = coalesce(out_shape, [tuple(out.stride()), broadcast_strides(src, out_shape)])
    cfg = settings()
    shape, strides, tiled = tile_plan(shape, strides)
    if tiled:     # a transpose: identity in the source's own compute dtype, then the store's cast
        _launch_tiled(k.elementwise.UNARY["identity"], out, [src], [(0, 0)], shape, strides, src.dtype.name, cfg)
        return
    block = cfg["copy_block"]
    for p_shape, p_strides, p_offsets, _ in pieces(shape, strides):
        n = _prod(p_shape)
        _run(k.copy.copy_kernel, (_cdiv(n, block),), pointer(out, p_offsets[0]), pointer(src, p_offsets[1]),
             n, p_shape, p_strides[0], p_strides[1], RANK=len(p_shape), BLOCK=block,
             WIDE=needs_int64(n, block, p_shape, p_strides), num_warps=cfg["copy_warps"])


def _fill_arg(dtype, value):
    """(kind, kernel argument) storing ``value`` into a tensor of ``dtype`` as torch's fill_ does."""
    if dtype.name == "bool":
        return INT_SCALAR, int(bool(value))
    if dtype.is_floating_point:
        return FLOAT_SCALAR, _float_bits(value)
    if isinstance(value, numbers.Integral):
        v = int(value)
    else:
        v = float(value)
        v = int(v) if math.isfinite(v) else 0     # truncate toward zero; nan/inf have no integer
    bits = dtype.itemsize * 8
    v &= (1 << bits) - 1                            # wrap into the dtype's range like a C cast
    if dtype.name != "uint8" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return INT_SCALAR, v


def fill(out, value):
    """out[...] = value (a Python bool/int/float); ``out`` may have any strides."""
    if out.numel() == 0:
        return
    k = _kernels()
    kind, arg = _fill_arg(out.dtype, value)
    shape, strides = coalesce(tuple(out.shape), [tuple(out.stride())])
    cfg = settings()
    block = cfg["copy_block"]
    for p_shape, p_strides, p_offsets, _ in pieces(shape, strides):
        n = _prod(p_shape)
        _run(k.copy.fill_kernel, (_cdiv(n, block),), pointer(out, p_offsets[0]), arg, n, p_shape,
             p_strides[0], KIND=kind, RANK=len(p_shape), BLOCK=block,
             WIDE=needs_int64(n, block, p_shape, p_strides), num_warps=cfg["copy_warps"])


# --------------------------------------------------------------------------- reductions
_STORAGE_OF_COMPUTE = {"bool": "int32", "float16": "float32", "bfloat16": "float32"}


def _identity(op, compute):
    if op == "sum":
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
    x = _scratch(x, view.shape, x.dtype)
    copy(x, view)
    kshape, kstrides = ([n_out], [R]) if n_out > 1 else ([], [])
    rshape, rstrides = ([R], [1]) if R > 1 else ([], [])
    return x, kshape, kstrides, rshape, rstrides


def reduce(op, out, x, dims, compute):
    """out = OP of x over ``dims`` (sorted non-negative ints; empty = a cast copy; all = a 0-d out),
    op in sum/prod/amax/amin, accumulated in dtype ``compute``. ``out`` is contiguous with x's
    shape minus ``dims``; x may have any strides and is read in place. Deterministic: no atomics,
    every run adds in the same order. An empty reduced range gives the identity (0 / 1); amax/amin
    of an empty range is an error the caller raises first."""
    if op == "count_nonzero":   # sum of (x != 0) in int64, tested on the loaded value
        op, compute, nonzero = "sum", "int64", True
    elif op in ("sum", "prod", "amax", "amin"):
        nonzero = False
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
        return fill(out, 0 if op == "sum" else 1)
    kshape, (kstrides,) = coalesce([xshape[d] for d in kept], [[xstrides[d] for d in kept]])
    # Reduced dims in order of decreasing stride: the innermost reduced index walks memory fastest.
    red = sorted((d for d in dims if xshape[d] != 1), key=lambda d: -abs(xstrides[d]))
    rshape, (rstrides,) = coalesce([xshape[d] for d in red], [[xstrides[d] for d in red]])
    if len(kshape) > MAX_RANK or len(rshape) > MAX_RANK:
        x, kshape, kstrides, rshape, rstrides = _regrouped(x, kept, red, n_out, R)
    _reduce_launch(op, out, x, n_out, R, kshape, kstrides, rshape, rstrides, compute, nonzero)


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


def _reduce_launch(op, out, x, n_out, R, kshape, kstrides, rshape, rstrides, compute, nonzero=False):
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
    if chunks == 1:
        _run(k.reduce.reduce_kernel, (n_blocks, 1), pointer(x), pointer(out), n_out, R, R,
             kshape, kstrides, rshape, rstrides, 1, 0, KRANK=len(kshape), RRANK=len(rshape),
             BLOCK_OUT=block_out, BLOCK_RED=block_red, NONZERO=nonzero, **meta)
        return
    # Pass 1: partial[k, c] = OP over chunk c of x[k, :]. Pass 2: out[k] = OP over c of partial[k, c].
    partial = _scratch(x, (n_out, chunks), _dtype(_STORAGE_OF_COMPUTE.get(compute, compute)))
    _run(k.reduce.reduce_kernel, (n_blocks, chunks), pointer(x), pointer(partial), n_out, R, chunk,
         kshape, kstrides, rshape, rstrides, chunks, 1, KRANK=len(kshape), RRANK=len(rshape),
         BLOCK_OUT=block_out, BLOCK_RED=block_red, NONZERO=nonzero, **meta)
    block_out, block_red = _reduce_blocks(n_out, chunks, chunks, 1, cfg)
    _run(k.reduce.reduce_kernel, (_cdiv(n_out, block_out), 1), pointer(partial), pointer(out), n_out,
         chunks, chunks, (n_out,), (chunks,), (chunks,), (1,), 1, 0, KRANK=1, RRANK=1,
         BLOCK_OUT=block_out, BLOCK_RED=block_red, **meta)


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
        _run(k.reduce.arg_reduce_kernel, (n_blocks, 1), pointer(x), pointer(x), pointer(out), pointer(out),
             n_out, R, R, kshape, kstrides, rshape, rstrides, 1, 0, KRANK=len(kshape), RRANK=len(rshape),
             BLOCK_OUT=block_out, BLOCK_RED=block_red, HAS_IDX=False, STORE_VAL=False, **meta)
        return
    # Few outputs, long ranges (the whole-tensor argmax above all): pass 1 finds the winner of
    # each chunk, pass 2 the winner among the chunk winners (their values and indices).
    values = _scratch(x, (n_out, chunks), _dtype(_STORAGE_OF_COMPUTE.get(compute, compute)))
    indices = _scratch(x, (n_out, chunks), _dtype("int64"))
    _run(k.reduce.arg_reduce_kernel, (n_blocks, chunks), pointer(x), pointer(x), pointer(values),
         pointer(indices), n_out, R, chunk, kshape, kstrides, rshape, rstrides, chunks, 1,
         KRANK=len(kshape), RRANK=len(rshape), BLOCK_OUT=block_out, BLOCK_RED=block_red,
         HAS_IDX=False, STORE_VAL=True, **meta)
    block_out, block_red = _reduce_blocks(n_out, chunks, chunks, 1, cfg)
    _run(k.reduce.arg_reduce_kernel, (_cdiv(n_out, block_out), 1), pointer(values), pointer(indices),
         pointer(out), pointer(out), n_out, chunks, chunks, (n_out,), (chunks,), (chunks,), (1,), 1, 0,
         KRANK=1, RRANK=1, BLOCK_OUT=block_out, BLOCK_RED=block_red, HAS_IDX=True, STORE_VAL=False, **meta)


# --------------------------------------------------------------------------- softmax and scans
def _row_problem(shape, dim, operands):
    """Split ``shape`` into rows (every dim but ``dim``, coalesced jointly over the operands) and
    the dim of length N. Returns (kshape, [kept strides per operand], N, [dim stride per operand])."""
    shape = tuple(int(s) for s in shape)
    strides = [broadcast_strides(t, shape) for t in operands]
    if not shape:                       # 0-d: one row of one element
        shape, strides, dim = (1,), [(0,) for _ in operands], 0
    kept = [d for d in range(len(shape)) if d != dim]
    kshape, kstrides = coalesce([shape[d] for d in kept], [[st[d] for d in kept] for st in strides])
    return kshape, kstrides, shape[dim], [st[dim] for st in strides]


def _row_blocks(M, N, max_block_n, cfg):
    block_n = min(_next_pow2(N), max_block_n)
    block_m = min(_next_pow2(M), max(1, cfg["row_tile"] // block_n))
    return block_m, block_n


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
        _run(k.softmax.softmax_kernel, (_cdiv(M, block_m),), pointer(x, p_offsets[0]), g_ptr,
             pointer(out, p_offsets[1]), M, N, p_shape, p_strides[0], p_strides[2], p_strides[1],
             nstrides[0], nstrides[2], nstrides[1], MODE=m, COMPUTE=k.compute[compute],
             KRANK=len(p_shape), BLOCK_M=block_m, BLOCK_N=block_n, ONE_TILE=one_tile, num_warps=warps)


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
        _run(k.scan.scan_kernel, (_cdiv(M, block_m),), pointer(x, p_offsets[0]), pointer(out, p_offsets[1]),
             M, N, p_shape, p_strides[0], p_strides[1], nstrides[0], nstrides[1], OP=op,
             REVERSE=bool(reverse), IDENTITY=_identity(op, compute), COMPUTE=k.compute[compute],
             KRANK=len(p_shape), BLOCK_M=block_m, BLOCK_N=block_n, num_warps=cfg["row_warps"])


# --------------------------------------------------------------------------- random
def random(out, kind, seed, offset, a, b):
    """Fill ``out`` (float dtype, any strides) from Philox stream (seed, offset): the element at
    row-major position i gets the number at stream position offset + i. kind "uniform": U[a, b);
    "normal": mean a, std b; "integers": a + (a 32-bit word mod b), for ints a and 1 <= b <= 2**32
    (any out dtype). The caller advances its offset past numel numbers; float64 uniform/normal
    take two words per number (full precision), positions offset + 2i and offset + 2i + 1, so
    the caller advances 2 * numel (and passes an even offset)."""
    kinds = {"uniform": 0, "normal": 1, "integers": 2}
    if kind not in kinds:
        raise ValueError(f"random: unknown kind {kind!r}")
    if kind != "integers" and not out.dtype.is_floating_point:
        raise TypeError(f"random: {kind} needs a floating point tensor, got {out.dtype}")
    if kind == "integers" and not 1 <= b <= 2 ** 32:
        raise ValueError(f"random: an integer range of {b} is outside 1 .. 2**32")
    if out.numel() == 0:
        return
    k = _kernels()
    tl = k.tl
    if kind == "integers":
        compute, a_arg, b_arg = tl.int64, int(a), int(b)
    else:
        compute, a_arg, b_arg = (tl.float64 if out.dtype.name == "float64" else tl.float32), _float_bits(a), _float_bits(b)
    shape, strides = coalesce(tuple(out.shape), [tuple(out.stride())])
    cfg = settings()
    block = max(4, cfg["random_block"])
    seed, offset = int(seed), int(offset)
    if kind != "integers" and out.dtype.name == "float64":
        # full float64 precision: two stream words per number (the caller advances 2 * numel)
        if offset % 2:
            raise ValueError(f"random: a float64 fill needs an even stream offset, got {offset}")
        for p_shape, p_strides, p_offsets, base in pieces(shape, strides):
            n = _prod(p_shape)
            start = offset + 2 * base
            shift = (start % 4) // 2
            _run(k.random.random_f64_kernel, (_cdiv(n + shift, block),), pointer(out, p_offsets[0]), n, seed,
                 start // 4, a_arg, b_arg, p_shape, p_strides[0], SHIFT=shift, KIND=kinds[kind],
                 RANK=len(p_shape), BLOCK=block, num_warps=cfg["random_warps"])
        return
    for p_shape, p_strides, p_offsets, base in pieces(shape, strides):
        n = _prod(p_shape)
        start = offset + base    # stream position of this piece's first element
        _run(k.random.random_kernel, (_cdiv(n + start % 4, block),), pointer(out, p_offsets[0]), n, seed,
             start // 4, a_arg, b_arg, p_shape, p_strides[0], SHIFT=start % 4,
             KIND=kinds[kind], COMPUTE=compute, RANK=len(p_shape), BLOCK=block,
             num_warps=cfg["random_warps"])
