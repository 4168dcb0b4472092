"""Launch planning shared by every launcher of the package: the block/tile settings, the lazy
kernel import, shapes and strides (broadcast, coalesce, pieces, tile plans), the int32/int64
index-width choice, kernel scalars, and the row problems of softmax/scan/nn.

Nothing here launches: these are pure functions of shapes, strides and settings.
"""
from __future__ import annotations

import contextlib
import itertools
import math
import numbers
import os
import struct
import threading

import numpy as np

from .. import triton as _backend   # the package: INDEX32_LIMIT is read there (tests rebind it)
from ...runtime.launch import _state as _LAUNCH_STATE

MAX_RANK = 6   # dims per launch (kernels/strided.py says the same)

_SETTINGS_LISTENERS = []


def on_settings_change(callback):
    """Call ``callback()`` whenever a launch setting changes (the launchers' cached plans,
    made under the old values, are dropped that way)."""
    _SETTINGS_LISTENERS.append(callback)


class _Settings(dict):
    """A dict of launch settings that tells on_settings_change's listeners of every change
    (tests patch single settings with monkeypatch.setitem)."""

    def _changed(self):
        for callback in _SETTINGS_LISTENERS:
            callback()

    def __setitem__(self, name, value):
        super().__setitem__(name, value)
        self._changed()

    def __delitem__(self, name):
        super().__delitem__(name)
        self._changed()

    def update(self, *args, **kwargs):
        super().update(*args, **kwargs)
        self._changed()


# Launch settings. On a GPU: 1024-element blocks for the memory-bound elementwise kernels, reduction
# tiles of 4096 elements. Under the interpreter every program costs ~0.35 ms of Python, so small
# blocks keep the test shapes (a few hundred elements) crossing block boundaries with few programs.
GPU_SETTINGS = _Settings({
    "elementwise_block": 1024, "elementwise_warps": 4,
    "copy_block": 1024, "copy_warps": 4,
    "tile": 64, "tile_warps": 4,    # transposed operands: [64, 64] tiles (elementwise, copy)
    "random_block": 1024, "random_warps": 4,
    "sample_block": 256,            # rejection samplers: a block loops until its last lane accepts
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
})
INTERPRETER_SETTINGS = _Settings({
    "elementwise_block": 128, "elementwise_warps": 4,
    "copy_block": 128, "copy_warps": 4,
    "tile": 8, "tile_warps": 4,
    "random_block": 128, "random_warps": 4,
    "sample_block": 512,
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
})
# The emulated device's default (see "launch profiles" below): a block of 16k elements costs the
# interpreter little more than one of 128, so small tensors, whole rows and whole reductions of up
# to 64k elements take one program.
INTERPRETER_FAST_SETTINGS = _Settings({
    "elementwise_block": 16384, "elementwise_warps": 4,
    "copy_block": 16384, "copy_warps": 4,
    "tile": 128, "tile_warps": 4,
    "random_block": 16384, "random_warps": 4,
    "sample_block": 4096,           # (a block's rejection rounds run until its last lane accepts)
    "reduce_tile": 65536,
    "reduce_max_block_out": 256,
    "reduce_warps": 4,
    "reduce_target_programs": 1,    # never split the reduced range in two passes
    "reduce_min_iters": 1,
    "row_tile": 65536,
    "row_max_block_n": 16384,
    "row_resident_bytes": 65536,
    "row_resident_warps": 4,
    "scan_max_block_n": 4096,
    "row_warps": 4,
})


def interpreting() -> bool:
    """Whether launches run under Triton's interpreter: fixed at the process's first launch
    (runtime/launch.py), TRITON_INTERPRET until then. Asked on the launch path of many ops: a
    dictionary lookup, not an environment read (~50 a training step on the first H200 run)."""
    mode = _LAUNCH_STATE["mode"]
    if mode is None:
        return os.environ.get("TRITON_INTERPRET") == "1"
    return mode == "interpreted"


# --------------------------------------------------------------------------- launch profiles
# Every family's block/tile settings come in three profiles, and pick() chooses one per launch:
#   "gpu"    the real GPU's configurations (compiled launches always use these);
#   "fast"   the emulated device's default: few programs with large blocks. Under the interpreter a
#            program costs ~0.3 ms of Python whatever its block, while a block's NumPy arithmetic
#            costs little more for 16k elements than for 128, so whole small tensors, whole rows
#            and whole small matrices go in one program (bounded by memory: a block is a few
#            NumPy arrays of its size per live value);
#   "small"  today's small blocks, so that the test shapes (a few hundred elements) cross block
#            edges and exercise the masks with few programs: tests of single ops ask for it
#            (tests/conftest.py), as does TRITENSOR_EMULATED_BLOCKS=small.
# TRITENSOR_EMULATED_BLOCKS (fast, small or gpu; read once, at import) sets the emulated device's
# profile; launch_profile(name) / gpu_launch_configs() override it for a block of code, in every
# thread (the traffic counter replays the real GPU's configurations on the emulated device).
EMULATED_BLOCKS_ENV = "TRITENSOR_EMULATED_BLOCKS"
PROFILES = ("gpu", "fast", "small")


def _env_profile():
    name = os.environ.get(EMULATED_BLOCKS_ENV, "").strip().lower() or "fast"
    if name not in PROFILES:
        raise ValueError(f"{EMULATED_BLOCKS_ENV}={name!r}: expected one of {', '.join(PROFILES)}")
    return name


_EMULATED = [_env_profile()]    # the emulated device's profile when nothing overrides it
_OVERRIDES = []                 # [token, name] of each launch_profile() block in force, innermost last
_OVERRIDE_LOCK = threading.Lock()


def current_profile() -> str:
    """The launch profile in force: "gpu", "fast" or "small" (see above)."""
    if _OVERRIDES:
        return _OVERRIDES[-1][1]
    return _EMULATED[0] if interpreting() else "gpu"


def pick(gpu, fast, small):
    """The one selection every family's settings go through: ``gpu``, ``fast`` or ``small``
    (any objects: dicts of settings, matmul Configs ...) for the profile in force."""
    if _OVERRIDES:
        name = _OVERRIDES[-1][1]
    elif interpreting():
        name = _EMULATED[0]
    else:
        return gpu
    return gpu if name == "gpu" else fast if name == "fast" else small


def settings() -> dict:
    return pick(GPU_SETTINGS, INTERPRETER_FAST_SETTINGS, INTERPRETER_SETTINGS)


def _notify_if_changed(before):
    if current_profile() != before:
        for callback in _SETTINGS_LISTENERS:
            callback()


def set_emulated_profile(name: str) -> str:
    """Make ``name`` the emulated device's profile from now on (what TRITENSOR_EMULATED_BLOCKS
    sets at import); returns the previous one. Cached launch plans are dropped."""
    if name not in PROFILES:
        raise ValueError(f"unknown launch profile {name!r}: expected one of {', '.join(PROFILES)}")
    with _launch_lock(), _OVERRIDE_LOCK:
        before = current_profile()
        previous, _EMULATED[0] = _EMULATED[0], name
        _notify_if_changed(before)
    return previous


def _launch_lock():
    from ...runtime.launch import _INTERPRETER_LOCK   # no launch runs half under each profile
    return _INTERPRETER_LOCK


@contextlib.contextmanager
def launch_profile(name: str):
    """Launch with profile ``name`` ("gpu", "fast" or "small") inside the block, on every device
    and in every thread (a process-wide setting, as the block settings themselves are). Blocks
    nest; a block left in another order than it was entered (threads) removes only its own entry.
    Entering and leaving wait for an interpreted launch in progress (runtime/launch.py's lock),
    and cached launch plans are dropped whenever the profile in force changes."""
    if name not in PROFILES:
        raise ValueError(f"unknown launch profile {name!r}: expected one of {', '.join(PROFILES)}")
    token = object()
    with _launch_lock(), _OVERRIDE_LOCK:
        before = current_profile()
        _OVERRIDES.append([token, name])
        _notify_if_changed(before)
    try:
        yield
    finally:
        with _launch_lock(), _OVERRIDE_LOCK:
            before = current_profile()
            _OVERRIDES[:] = [entry for entry in _OVERRIDES if entry[0] is not token]
            _notify_if_changed(before)


@contextlib.contextmanager
def emulated_blocks(name: str):
    """The emulated device's profile is ``name`` inside the block (set_emulated_profile, then
    the previous one back); compiled launches on a real GPU are unaffected, unlike
    launch_profile(). tests/conftest.py selects a test's profile with it."""
    previous = set_emulated_profile(name)
    try:
        yield
    finally:
        set_emulated_profile(previous)


def gpu_launch_configs():
    """Inside the block every family launches with the real GPU's configurations (block sizes,
    tiles, program counts), even on the emulated device: ``with gpu_launch_configs(): ...``."""
    return launch_profile("gpu")


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
            "uint16": tl.uint16, "uint32": tl.uint32, "uint64": tl.uint64,
            "float32": tl.float32, "float64": tl.float64,
        }
        _K = k
    return _K


# Every launch goes through here: runtime/launch.py runs it on the current stream of the
# --------------------------------------------------------------------------- shapes and strides
def _cdiv(a, b):
    return -(-a // b)


def _next_pow2(n):
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


def _prod(xs):
    return math.prod([int(x) for x in xs])     # a list comprehension: Python 3.12 inlines it


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
        if new_shape and all([ns[-1] == int(s[d]) * size for ns, s in zip(new_strides, strides_list)]):
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

def needs_int64(n, block, shape, strides_list):
    """True when a launch over ``n`` elements of ``shape`` (blocks of ``block``) must index in
    int64: the last block's indices, or the largest element offset of some operand (strides
    are never negative), would pass the package's INDEX32_LIMIT."""
    limit = _backend.INDEX32_LIMIT
    if n + block > limit:
        return True
    return any(sum((d - 1) * abs(st) for d, st in zip(shape, strides)) > limit
               for strides in strides_list)


# --------------------------------------------------------------------------- scalars
INT_SCALAR, FLOAT_SCALAR = 1, 2   # operand kinds; 0 is a tensor


_FLOAT64_AS_INT64 = struct.Struct("<d"), struct.Struct("<q")


def _float_bits(v):
    """The int64 bit pattern of float64(v): Triton would type a Python float argument float32."""
    return _FLOAT64_AS_INT64[1].unpack(_FLOAT64_AS_INT64[0].pack(float(v)))[0]


def _scalar_arg(v):
    """(operand kind, kernel value) of a Python/NumPy scalar operand."""
    t = type(v)
    if t is float:                   # the common cases first, without the ABC checks
        return FLOAT_SCALAR, _FLOAT64_AS_INT64[1].unpack(_FLOAT64_AS_INT64[0].pack(v))[0]
    if t is int:
        return INT_SCALAR, v
    if isinstance(v, (bool, np.bool_)):
        return INT_SCALAR, int(bool(v))
    if isinstance(v, numbers.Integral):
        return INT_SCALAR, int(v)
    if isinstance(v, numbers.Real):
        return FLOAT_SCALAR, _float_bits(v)
    raise TypeError(f"unsupported scalar operand {v!r} of type {type(v).__name__}")


# --------------------------------------------------------------------------- rows (softmax, scan, nn)
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


