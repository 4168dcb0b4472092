"""The traffic counter of the emulated device: what each kernel launch moves, and how well.

Under Triton's interpreter (``TRITON_INTERPRET=1``, the emulated cuda device) every ``tl.load``,
``tl.store``, ``tl.dot``, atomic and arithmetic op of a kernel ends in a method of Triton's one
``InterpreterBuilder`` (``triton.runtime.interpreter.interpreter_builder``), with the block's
pointers as a NumPy array of byte addresses and its mask as a NumPy bool array. While a
``TrafficCounter`` is enabled those methods are wrapped on that instance (and the grid
executor, to attribute each launch); disabling deletes the wrappers, so a process that never
counts runs Triton's own methods: no cost when off. Kernels are not changed.

What a launch records (``LaunchRecord``):

- ``load_bytes`` / ``store_bytes``: bytes moved by the *active* (unmasked) lanes: lanes x the
  element size of the pointer. A lane re-reading an address another program read already counts
  again (on a GPU that re-read may hit L2; ``unique_load_bytes`` is the distinct addresses of the
  launch, the traffic of a perfect cache);
- ``load_sectors`` / ``store_sectors``: 32-byte sectors touched per *warp group*, and
  ``load_used`` / ``store_used`` the distinct bytes those groups asked for: coalescing =
  used / (32 x sectors). The warp group is 32 consecutive lanes in the order Triton gives a
  block's threads: its coalescing pass puts the axis along which the pointers are contiguous
  fastest (``coalescing_axis``: what Triton's axis analysis proves from ``tl.arange`` and unit
  strides, which it specialises to the constant 1), the last axis when none is. That scores a
  contiguous float32 load 100 %, a stride-2 load 50 %, a column of a row-major matrix (or a
  tile whose lanes are strided on every axis) 12.5 %; a [64, 64] tile of a transposed matrix
  scores 100 % (Triton reads it along its contiguous axis and converts the layout in shared
  memory). A group whose active lanes all read one address (a scalar, a broadcast row element)
  is a broadcast, not a coalescing question: it counts as fully used;
- ``atomics`` / ``atomic_bytes``: active lanes of atomic read-modify-writes and compare-and-swaps;
- ``dot_flops``: 2*M*N*K per ``tl.dot`` of [M, K] x [K, N] blocks (per dot input kind: "fp16"
  for 16-bit floats, "tf32" / "fp32" for float32 by the dot's input precision, "fp64", "int8");
- ``flops``: pointwise float operations, one per element (an fma is two), and reductions /
  scans: one per input element folded in (``tl.sum`` of n values: n - 1 ... counted as n - out).

Each launch is attributed to the op being dispatched (the innermost ``tritensor.ops.dispatch``
frame on the stack: read only while counting), and each op call records its *minimum*
traffic (each input read once, each output written once, in the call's dtypes; see
``minimum_bytes``). ``launch_kernel`` serialises interpreted launches, so one counter is active
at a time.
"""
from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field

import numpy as np

SECTOR = 32             # bytes: the unit of DRAM/L2 transfers on NVIDIA GPUs
WARP = 32               # lanes of one warp group
_SENTINEL = np.uint64(2 ** 64 - 1)


@dataclass
class LaunchRecord:
    kernel: str                 # the kernel function's name
    family: str                 # its module under kernels/ (elementwise, reduce, matmul ...)
    grid: tuple
    meta: dict                  # constexpr / launch options passed by name (BLOCK sizes, num_warps)
    op: str | None              # the dispatched op that launched it (None: launched outside dispatch)
    call: int                   # index of the op call in the counter (launches of one call share it)
    load_bytes: int = 0
    store_bytes: int = 0
    load_lanes: int = 0
    store_lanes: int = 0
    load_sectors: int = 0
    store_sectors: int = 0
    load_used: int = 0
    store_used: int = 0
    atomics: int = 0
    atomic_bytes: int = 0
    flops: int = 0
    dot_flops: dict = field(default_factory=dict)
    unique_load_bytes: int = 0
    unique_store_bytes: int = 0

    @property
    def programs(self):
        n = 1
        for g in self.grid:
            n *= g
        return n

    @property
    def bytes(self):
        return self.load_bytes + self.store_bytes + self.atomic_bytes

    @property
    def coalescing(self):
        """Bytes the warp groups asked for / bytes in the 32-byte sectors they touched."""
        sectors = self.load_sectors + self.store_sectors
        return 1.0 if not sectors else (self.load_used + self.store_used) / (SECTOR * sectors)

    @property
    def total_flops(self):
        return self.flops + sum(self.dot_flops.values())


@dataclass
class OpCall:
    op: str
    minimum: int | None          # bytes: inputs read once + outputs written once (None: unknown)
    launches: list = field(default_factory=list)

    @property
    def bytes(self):
        return sum(r.bytes for r in self.launches)


@dataclass
class Summary:
    """Totals over a set of launches (one kernel, one op, or all)."""
    name: str
    launches: int = 0
    calls: int = 0
    bytes: int = 0
    load_bytes: int = 0
    store_bytes: int = 0
    atomic_bytes: int = 0
    atomics: int = 0
    minimum: int | None = 0
    sectors: int = 0
    used: int = 0
    flops: int = 0
    dot_flops: dict = field(default_factory=dict)
    unique_bytes: int = 0

    @property
    def coalescing(self):
        return 1.0 if not self.sectors else self.used / (SECTOR * self.sectors)

    @property
    def ratio(self):
        """Traffic / minimum traffic (None when a minimum is unknown)."""
        return None if not self.minimum else self.bytes / self.minimum

    @property
    def total_flops(self):
        return self.flops + sum(self.dot_flops.values())

    def add(self, r: LaunchRecord):
        self.launches += 1
        self.bytes += r.bytes
        self.load_bytes += r.load_bytes
        self.store_bytes += r.store_bytes
        self.atomic_bytes += r.atomic_bytes
        self.atomics += r.atomics
        self.sectors += r.load_sectors + r.store_sectors
        self.used += r.load_used + r.store_used
        self.flops += r.flops
        for k, v in r.dot_flops.items():
            self.dot_flops[k] = self.dot_flops.get(k, 0) + v
        self.unique_bytes += r.unique_load_bytes + r.unique_store_bytes


# --------------------------------------------------------------------------- counting
def _itemsize(ptrs):
    return max(1, ptrs.get_element_ty().primitive_bitwidth // 8)


def _groups(values, active):
    """``values`` (flat uint64) in warp groups of 32 lanes, inactive lanes set to the sentinel."""
    n = values.size
    if active is not None:
        values = np.where(active, values, _SENTINEL)
    pad = (-n) % WARP
    if pad:
        values = np.concatenate([values, np.full(pad, _SENTINEL, dtype=np.uint64)])
    g = np.sort(values.reshape(-1, WARP), axis=1)
    return g


def _distinct_per_group(g):
    """Distinct non-sentinel values in each row of ``g`` (rows sorted)."""
    distinct = (np.diff(g, axis=1) != 0).sum(axis=1) + 1
    return distinct - (g[:, -1] == _SENTINEL)


def coalescing_axis(addresses, itemsize):
    """The axis Triton's coalescing pass orders a block's threads along: the axis on which
    consecutive lanes' addresses are ``itemsize`` apart for the most lanes (Triton's axis analysis
    proves that contiguity from ``tl.arange`` and unit strides, which it specialises to the
    constant 1); the last axis when none is contiguous or several tie."""
    ndim = addresses.ndim
    best, best_count = ndim - 1, -1
    if ndim < 2:
        return best
    signed = addresses.view(np.int64) if addresses.dtype == np.uint64 else addresses.astype(np.int64)
    for axis in range(ndim - 1, -1, -1):
        if addresses.shape[axis] < 2:
            continue
        count = int(np.count_nonzero(np.diff(signed, axis=axis) == itemsize))
        if count > best_count:
            best, best_count = axis, count
    return best if best_count > 0 else ndim - 1


def access_stats(addresses, mask, itemsize):
    """(active lanes, sectors touched, bytes used) of one block access: ``addresses`` the byte
    addresses of the block's lanes, ``mask`` its active lanes (None: all). The lanes are grouped
    by 32 in the order Triton's coalescing pass gives the threads (``coalescing_axis`` fastest,
    then the others row-major). Public for the tests."""
    addresses = np.asarray(addresses, dtype=np.uint64)
    if mask is not None:
        mask = np.broadcast_to(np.asarray(mask, dtype=bool), addresses.shape)
    axis = coalescing_axis(addresses, itemsize)
    if axis != addresses.ndim - 1:
        addresses = np.moveaxis(addresses, axis, -1)
        if mask is not None:
            mask = np.moveaxis(mask, axis, -1)
    addr = np.ascontiguousarray(addresses).reshape(-1)
    active = None
    if mask is not None:
        active = np.ascontiguousarray(mask).reshape(-1)
        lanes = int(np.count_nonzero(active))
        if lanes == addr.size:
            active = None
    else:
        lanes = addr.size
    if lanes == 0:
        return 0, 0, 0
    sectors = _distinct_per_group(_groups(addr >> np.uint64(5), active))
    distinct = _distinct_per_group(_groups(addr, active))
    # a group of one address (scalar, broadcast) is served by its sector: fully used
    used = np.where(distinct <= 1, sectors * SECTOR, distinct * itemsize)
    return lanes, int(sectors.sum()), int(used.sum())


def _dot_kind(a, precision):
    ty = a.get_element_ty()
    if ty.is_floating():
        bits = ty.primitive_bitwidth
        if bits <= 16:
            return "fp16" if bits == 16 else "fp8"
        if bits == 32:
            return "tf32" if "TF32" in str(precision).upper() else "fp32"
        return "fp64"
    return "int8"


_POINTWISE_FLOPS = {
    **{name: 1 for name in (
        "create_fadd", "create_fsub", "create_fmul", "create_fdiv", "create_frem", "create_fneg",
        "create_precise_divf", "create_approx_divf", "create_minimumf", "create_maximumf",
        "create_minnumf", "create_maxnumf", "create_exp", "create_exp2", "create_log", "create_log2",
        "create_sqrt", "create_precise_sqrt", "create_rsqrt", "create_sin", "create_cos", "create_erf",
        "create_floor", "create_ceil", "create_fabs")},
    "create_fma": 2,
}


class _Active:
    """The enabled counter and what was replaced (one at a time: launches are serialised)."""
    counter = None
    saved_grid_call = None
    lock = threading.Lock()


def _frame_op(frame):
    """The innermost dispatch frame above ``frame``: (frame, op name) or (None, None)."""
    f = frame
    while f is not None:
        if f.f_globals.get("__name__") == "tritensor.ops.dispatch":
            op = f.f_locals.get("op")
            name = getattr(op, "name", None)
            if isinstance(name, str):
                return f, name
        f = f.f_back
    return None, None


class TrafficCounter:
    """Counts the traffic of every interpreted launch while enabled (``with counter:`` or
    ``enable()`` / ``disable()``); ``launches`` / ``calls`` hold the records."""

    def __init__(self, unique=True):
        self.unique = unique        # also count distinct addresses per launch (costs a sort)
        self.launches: list[LaunchRecord] = []
        self.calls: list[OpCall] = []
        self._record = None
        self._unique_loads = []
        self._unique_stores = []
        self._op_frame = None       # the dispatch frame of the current op call (held: identity is exact)
        self._in_reduce = 0
        self._wrapped = []

    # ----------------------------------------------------------------- enable / disable
    def __enter__(self):
        self.enable()
        return self

    def __exit__(self, *exc):
        self.disable()
        return False

    def enable(self):
        import os
        if os.environ.get("TRITON_INTERPRET") != "1":
            raise RuntimeError(
                "the traffic counter needs the emulated device (TRITON_INTERPRET=1, "
                "TRITENSOR_EMULATE_CUDA=1): compiled launches cannot be observed from Python")
        from triton.runtime import interpreter as ti
        from ..runtime import interpreter as _interp
        missing = [name for name in ("interpreter_builder", "GridExecutor", "ReduceOps", "ScanOps") if not hasattr(ti, name)]
        builder = getattr(ti, "interpreter_builder", None)
        missing += [name for name in ("create_masked_load", "create_masked_store", "create_dot", "create_atomic_rmw",
                                      "create_atomic_cas") if builder is not None and not hasattr(builder, name)]
        if missing:                 # another Triton's interpreter: say so rather than count wrongly
            raise RuntimeError(f"the traffic counter does not know this Triton's interpreter (no {', '.join(missing)})")
        _interp.install()          # first: its grid wrapper must sit below ours
        with _Active.lock:
            if _Active.counter is not None:
                raise RuntimeError("another TrafficCounter is already counting")
            _Active.counter = self
        self._wrap(builder, "create_masked_load", self._load)
        self._wrap(builder, "create_masked_store", self._store)
        self._wrap(builder, "create_dot", self._dot)
        self._wrap(builder, "create_atomic_rmw", self._atomic_rmw)
        self._wrap(builder, "create_atomic_cas", self._atomic_cas)
        for name, k in _POINTWISE_FLOPS.items():
            if hasattr(builder, name):
                self._wrap(builder, name, lambda original, k=k: self._pointwise(original, k))
        for cls in (ti.ReduceOps, ti.ScanOps):
            original = cls.apply
            cls.apply = self._reduction(original)
            self._wrapped.append((cls, "apply", original))
        _Active.saved_grid_call = ti.GridExecutor.__call__
        ti.GridExecutor.__call__ = self._grid_call(ti.GridExecutor.__call__)
        return self

    def disable(self):
        if _Active.counter is not self:
            return
        from triton.runtime import interpreter as ti
        ti.GridExecutor.__call__ = _Active.saved_grid_call
        for owner, name, original in reversed(self._wrapped):
            if original is None:
                delattr(owner, name)       # the instance attribute goes: the class method is back
            else:
                setattr(owner, name, original)
        self._wrapped.clear()
        self._op_frame = None
        _Active.counter = None

    def _wrap(self, builder, name, make):
        # an instance attribute over the class's method (the class keeps the original)
        had = name in vars(builder)
        original = getattr(builder, name)
        setattr(builder, name, make(original))
        self._wrapped.append((builder, name, original if had else None))

    # ----------------------------------------------------------------- the launch
    def _grid_call(self, original):
        counter = self

        def grid_call(executor, *args, **kwargs):
            from triton.runtime import interpreter as ti
            fn = executor.fn
            module = getattr(fn, "__module__", "") or ""
            frame, op = _frame_op(sys._getframe(1))
            if frame is None:
                counter._op_frame = None
                call = OpCall(_caller_name(sys._getframe(1)), None)
                counter.calls.append(call)
            elif frame is not counter._op_frame:
                counter._op_frame = frame
                call = OpCall(op, minimum_bytes(op, frame.f_locals))
                counter.calls.append(call)
            else:
                call = counter.calls[-1]
            meta = {k: v for k, v in kwargs.items() if type(v) in (int, bool, str, float)}
            names = getattr(executor, "arg_names", ())
            constexprs = set(getattr(executor, "constexprs", ()))
            for name, value in zip(names, args):
                if name in constexprs and type(value) in (int, bool, str, float):
                    meta[name] = value
            rec = LaunchRecord(fn.__name__, module.rsplit(".", 1)[-1], (), meta, op, len(counter.calls) - 1)
            counter._record = rec
            counter._unique_loads, counter._unique_stores = [], []
            try:
                return original(executor, *args, **kwargs)
            finally:
                counter._record = None
                rec.grid = tuple(getattr(ti.interpreter_builder, "grid_dim", ()))
                if counter.unique:
                    rec.unique_load_bytes = _unique_bytes(counter._unique_loads)
                    rec.unique_store_bytes = _unique_bytes(counter._unique_stores)
                counter._unique_loads = counter._unique_stores = None
                counter.launches.append(rec)
                call.launches.append(rec)
        return grid_call

    # ----------------------------------------------------------------- the builder hooks
    def _access(self, ptrs, mask, store):
        rec = self._record
        if rec is None:
            return
        itemsize = _itemsize(ptrs)
        m = None if mask is None else mask.data
        lanes, sectors, used = access_stats(ptrs.data, m, itemsize)
        if store:
            rec.store_lanes += lanes
            rec.store_bytes += lanes * itemsize
            rec.store_sectors += sectors
            rec.store_used += used
        else:
            rec.load_lanes += lanes
            rec.load_bytes += lanes * itemsize
            rec.load_sectors += sectors
            rec.load_used += used
        if self.unique and lanes:
            addr = np.asarray(ptrs.data, dtype=np.uint64).reshape(-1)
            if m is not None:
                addr = addr[np.broadcast_to(m, ptrs.data.shape).reshape(-1)]
            (self._unique_stores if store else self._unique_loads).append((itemsize, addr))

    def _load(self, original):
        def create_masked_load(ptrs, mask, other, cache_policy, is_volatile):
            self._access(ptrs, mask, False)
            return original(ptrs, mask, other, cache_policy, is_volatile)
        return create_masked_load

    def _store(self, original):
        def create_masked_store(ptrs, value, mask, cache_policy):
            self._access(ptrs, mask, True)
            return original(ptrs, value, mask, cache_policy)
        return create_masked_store

    def _dot(self, original):
        def create_dot(a, b, d, input_precision, max_num_imprecise_acc):
            rec = self._record
            if rec is not None:
                sa, sb = a.data.shape, b.data.shape
                batch = 1
                for s in sa[:-2]:
                    batch *= s
                flops = 2 * batch * sa[-2] * sa[-1] * sb[-1]
                kind = _dot_kind(a, input_precision)
                rec.dot_flops[kind] = rec.dot_flops.get(kind, 0) + flops
            return original(a, b, d, input_precision, max_num_imprecise_acc)
        return create_dot

    def _atomic(self, ptrs, mask):
        rec = self._record
        if rec is None:
            return
        if mask is None:
            lanes = ptrs.data.size
        else:
            lanes = int(np.count_nonzero(np.broadcast_to(mask.data, ptrs.data.shape)))
        rec.atomics += lanes
        rec.atomic_bytes += lanes * _itemsize(ptrs)

    def _atomic_rmw(self, original):
        def create_atomic_rmw(rmwOp, ptr, val, mask, sem, scope):
            self._atomic(ptr, mask)
            return original(rmwOp, ptr, val, mask, sem, scope)
        return create_atomic_rmw

    def _atomic_cas(self, original):
        def create_atomic_cas(ptr, cmp, val, sem, scope):
            self._atomic(ptr, None)
            return original(ptr, cmp, val, sem, scope)
        return create_atomic_cas

    def _pointwise(self, original, k):
        def op(*args):
            out = original(*args)
            rec = self._record
            if rec is not None and not self._in_reduce:
                rec.flops += k * out.data.size
            return out
        return op

    def _reduction(self, original):
        counter = self

        def apply(reduce_op, input):
            rec = counter._record
            if rec is None:
                return original(reduce_op, input)
            counter._in_reduce += 1
            try:
                out = original(reduce_op, input)
            finally:
                counter._in_reduce -= 1
            first = input[0] if isinstance(input, tuple) else input
            try:
                if first.dtype.scalar.is_floating():
                    n_in = first.handle.data.size
                    o = out[0] if isinstance(out, tuple) else out
                    n_out = np.size(o.handle.data)
                    scan = type(reduce_op).__name__ == "ScanOps"
                    rec.flops += n_in if scan else max(n_in - n_out, 0)
            except AttributeError:
                pass
            return out
        return apply

    # ----------------------------------------------------------------- reading
    def by_kernel(self):
        """{kernel name: Summary} (minimum: None; a kernel's minimum is its op's)."""
        out = {}
        for r in self.launches:
            s = out.get(r.kernel)
            if s is None:
                s = out[r.kernel] = Summary(r.kernel, minimum=None)
            s.add(r)
        return out

    def by_op(self):
        """{op name: Summary}: launches, traffic and the summed minimum of its calls."""
        out = {}
        for c in self.calls:
            s = out.get(c.op)
            if s is None:
                s = out[c.op] = Summary(c.op)
            s.calls += 1
            for r in c.launches:
                s.add(r)
            if s.minimum is not None:
                s.minimum = None if c.minimum is None else s.minimum + c.minimum
        return out

    def total(self):
        s = Summary("total", minimum=None)
        for r in self.launches:
            s.add(r)
        s.calls = len(self.calls)
        mins = [c.minimum for c in self.calls]
        s.minimum = None if (not mins or None in mins) else sum(mins)
        return s

    def clear(self):
        self.launches.clear()
        self.calls.clear()
        self._op_frame = None

    def table(self, per_launch=False):
        """A printable table: per op (its calls' launches, traffic, summed minimum, traffic /
        minimum), per kernel, and with ``per_launch`` every launch (its op call's minimum)."""
        lines = [f"{'op / kernel':40s} {'launches':>8s} {'bytes':>12s} {'minimum':>12s} {'ratio':>6s} "
                 f"{'coalesc':>7s} {'flops':>12s}"]
        for title, groups in (("op", self.by_op()), ("kernel", self.by_kernel())):
            for name, s in groups.items():
                ratio = "-" if s.ratio is None else f"{s.ratio:.2f}"
                minimum = "-" if not s.minimum else str(s.minimum)
                lines.append(f"{title + ' ' + name:40s} {s.launches:8d} {s.bytes:12d} {minimum:>12s} "
                             f"{ratio:>6s} {100 * s.coalescing:6.1f}% {s.total_flops:12d}")
        if per_launch:
            for i, r in enumerate(self.launches):
                minimum = self.calls[r.call].minimum
                ratio = "-" if not minimum else f"{r.bytes / minimum:.2f}"
                label = f"launch {i} {r.kernel} grid={r.grid[0]}x{r.grid[1]}x{r.grid[2]} ({r.op or '-'})"
                lines.append(f"{label:40s} {1:8d} {r.bytes:12d} {minimum or '-':>12} {ratio:>6s} "
                             f"{100 * r.coalescing:6.1f}% {r.total_flops:12d}")
        return "\n".join(lines)


def _unique_bytes(accesses):
    total = 0
    by_size = {}
    for itemsize, addr in accesses:
        by_size.setdefault(itemsize, []).append(addr)
    for itemsize, arrays in by_size.items():
        total += itemsize * np.unique(np.concatenate(arrays)).size
    return total


def _caller_name(frame):
    """For a launch outside dispatch (copy, fill, random ...): the nearest tritensor function
    outside the runtime and the backends, as '(copy_)'."""
    f = frame
    while f is not None:
        mod = f.f_globals.get("__name__", "")
        if (mod.startswith("tritensor.") and not mod.startswith(("tritensor.runtime", "tritensor.backends",
                                                                   "tritensor.profiler"))):
            return f"({f.f_code.co_name})"
        f = f.f_back
    return "(outside tritensor)"


# --------------------------------------------------------------------------- minimum traffic
def _view_bytes(t):
    """Bytes of the distinct elements a tensor view addresses (stride-0 dims count once)."""
    n = 1
    for size, stride in zip(t._shape, t._stride):
        if stride != 0:
            n *= size
        elif size == 0:
            return 0
    return n * t.dtype.itemsize


def _tensors(x):
    from ..tensor import Tensor
    if isinstance(x, Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        out = []
        for v in x:
            out += _tensors(v)
        return out
    return []


MATMUL_OPS = frozenset({"mm", "bmm", "matmul", "addmm", "baddbmm", "addbmm", "linear"})
IDEAL_TILE = (128, 128)      # BLOCK_M x BLOCK_N of an H100-class GEMM (the "ideal blocking")


def matmul_minimum(m, n, k, a_itemsize, b_itemsize, out_itemsize, batch=1, tile=IDEAL_TILE):
    """Bytes of C[m, n] = A[m, k] @ B[k, n] (``batch`` times) under output tiles tile[0] x tile[1]
    that each read their row panel of A and column panel of B once: A is read ceil(n / BN) times,
    B ceil(m / BM) times, C written once. The tiling bound, which is the compulsory traffic
    (each operand once) when one tile covers the output."""
    bm, bn = tile
    a_reads = -(-n // bn)
    b_reads = -(-m // bm)
    return batch * (m * k * a_itemsize * a_reads + k * n * b_itemsize * b_reads + m * n * out_itemsize)


def minimum_bytes(op, frame_locals):
    """The minimum traffic of one call of ``op`` from its dispatch frame's locals: each distinct
    input element read once and each output element written once (in-place: the tensor is read
    and written); matmuls also pay the re-reads of an ideal blocking (``matmul_minimum``)."""
    inputs = _tensors(frame_locals.get("args", ()))
    inputs += _tensors(frame_locals.get("others", ()))
    outs = _tensors(frame_locals.get("outs", ())) or _tensors(frame_locals.get("out"))
    self_ = frame_locals.get("self")
    if not outs and self_ is not None:
        outs = _tensors(self_)
    if self_ is not None and not any(t is self_ for t in inputs):
        inputs = _tensors(self_) + inputs
    if op in MATMUL_OPS and outs:
        mats = [t for t in inputs if t.dim() >= 2]
        if len(mats) >= 2:
            a, b = mats[-2], mats[-1]
            m, k, n = a._shape[-2], a._shape[-1], b._shape[-1]
            batch = outs[0].numel() // max(m * n, 1)
            extra = sum(_view_bytes(t) for t in inputs if t is not a and t is not b)
            return matmul_minimum(m, n, k, a.dtype.itemsize, b.dtype.itemsize, outs[0].dtype.itemsize,
                                  batch) + extra
    seen = set()
    total = 0
    for t in inputs:
        key = (t._storage.data_ptr() if hasattr(t._storage, "data_ptr") else id(t._storage),
               t._offset, t._shape, t._stride, t.dtype)
        if key in seen:
            continue
        seen.add(key)
        total += _view_bytes(t)
    for t in outs:
        total += t.numel() * t.dtype.itemsize
    return total
