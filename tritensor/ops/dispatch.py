"""dispatch(): the one road every primitive op takes.

check inputs (torch's errors) -> shape/dtype rule -> allocate the output -> the device's backend
runs the op (backends/base.py: the NumPy reference on cpu, the Triton launcher on cuda, real or
emulated) -> record the autograd node.
"""
from __future__ import annotations

from .. import dtypes as _dt
from ..autograd import anomaly as _anomaly
from .. import _autocast
from .. import _dual
from .. import _tracing
from ..autograd.grad_mode import _state as _grad_state
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..autograd.graph import (CopySlices, SavedTensor, grad_accumulator, gradient_edge, new_op_node,
                              rebase_history)
from ..backends.base import backend_for
from ..runtime.storage import Storage
from ..tensor import Size, Tensor, check_inference_inplace, contiguous_strides
from . import _layout
from . import _unsigned
from ._overlap import check_view_geometry, geometry
from ._sparse import SparseOperand, sparse_fallback
from .table import OpDef
from ..autograd import forward_ad as _forward_ad


def common_device(tensors):
    """The device an op runs on. A 0-d cpu tensor (host memory) may join a cuda op as a scalar,
    as in torch."""
    if not tensors:
        return None
    devices = [t.device for t in tensors if not (t.dim() == 0 and backend_for(t.device).host_memory)]
    if not devices:
        return tensors[0].device
    dev = devices[0]
    for d in devices[1:]:
        if d != dev:
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two devices, "
                f"{dev} and {d}!")
    return dev


def empty(shape, dtype, device, strides=None) -> Tensor:
    """A new tensor; ``strides`` (default: contiguous) must describe a dense layout of ``shape``
    (a permutation of the contiguous one, as ops/_layout.py computes), so numel elements hold it."""
    shape = tuple(int(s) for s in shape)
    n, overflowed = 1, False
    for s in shape:
        n *= s
        overflowed |= n >= 2 ** 64      # torch multiplies in uint64: a later 0 does not undo it
    if overflowed or n * dtype.itemsize >= 2 ** 63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
    if strides is None:
        strides = contiguous_strides(shape)
    if strides and max(strides) >= 2 ** 63:    # an empty tensor's strides may still be too large
        raise RuntimeError("Stride calculation overflowed")
    storage = Storage(n * dtype.itemsize, device)
    return Tensor._make(storage, shape, strides, 0, dtype)


# ------------------------------------------------------------------------- output layout
# How an op's output is allocated is a declared field of its entry (OpDef.layout, table.py):
# "iterator" keeps the inputs' memory layout as TensorIterator does (x.t().exp() is transposed
# too), "preserve" allocates like the first operand (clone, casts: preserve_format),
# "memory_format" in the format the op's attrs name (convolutions: channels_last ...), and
# "contiguous" is every other op (reductions, softmax, scans, matmul ... as in torch).
# See ops/_layout.py for the rules themselves.


def output_strides(op, shape, args, attrs):
    """The strides torch gives ``op``'s new output of ``shape`` (None: contiguous)."""
    kind = op.layout
    if kind == "contiguous":
        return None
    if kind == "preserve":
        x = args[0]
        if tuple(shape) != x._shape:      # an op's other outputs (batch norm's statistics): contiguous
            return None
        return _layout.like_strides(attrs.get("memory_format", _layout.PRESERVE), x._shape, x._stride)
    if kind == "memory_format":      # the format the op chose (convolutions: channels_last ...)
        strides = _layout.format_strides(attrs["memory_format"], tuple(shape))
        return None if strides == contiguous_strides(shape) else strides
    operands = []
    has_scalars = False
    for a in args:
        if isinstance(a, Tensor):
            operands.append((a._shape, a._stride))
        elif a is not None:
            has_scalars = True
    if not op.numbers_are_operands:
        if op.name == "pow" and not isinstance(args[0], Tensor):
            return None          # pow(number, tensor): torch's pow.Scalar allocates contiguous
        has_scalars = False
    strides = _layout.iterator_strides(shape, operands, has_scalars)
    return None if strides == contiguous_strides(shape) else strides


# ------------------------------------------------------------------------- the fast path
# What an op's rule works out depends only on its inputs' signature (dtypes, devices, shapes,
# strides, scalar operands' types and values, attributes, the default dtype) for the rules
# declared @signature_rule (table.py); their result is cached per signature, so a repeated call
# skips the device check, the rule and the output's shape/strides arithmetic. Rules that read more
# (tensor values, index objects ...) are not declared so: they always take the first-time path. A signature
# whose rule raised is never cached (errors keep coming from the rule, with torch's texts).

# Threads: these caches are read, computed and written without a lock. That is safe because an
# entry is a pure function of its key (two threads racing on one key store equal values) and each
# dict get/set/clear is atomic under the GIL; a clear() racing a get() only costs a miss.
_CACHE_LIMIT = 4096          # signatures kept (the cache is emptied when full: NaN scalars never hit)
_rule_cache: dict = {}
_op_cacheable: dict = {}     # OpDef -> bool (is its rule declared @signature_rule, table.py)
_SCALAR_TYPES = (bool, int, float, str, type(None))
_INT_ONLY = frozenset({int})


def _is_cacheable(op) -> bool:
    ok = _op_cacheable.get(op)
    if ok is None:
        rule = op.rule
        ok = op.view is None and getattr(rule, "signature_only", False)
        # while autocast is active somewhere, its ops take the first-time path (where its
        # policy is applied): the fast path never looks at autocast
        ok = ok and not (_autocast.ACTIVE[0] and op.name in _autocast.POLICY_NAMES)
        # while a forward-AD level is open every op takes the first-time path (where its forward
        # rule runs): the fast path never looks at tangents
        # (and while a trace runs: every op reaches the tracer's hook, tritensor/jit/_trace.py)
        ok = _op_cacheable[op] = ok and not _dual.ACTIVE[0] and not _tracing.ACTIVE[0]
    return ok


def _autocast_changed(active):
    for op in list(_op_cacheable):
        if op.name in _autocast.POLICY_NAMES:
            _op_cacheable.pop(op, None)


_autocast.on_activate(_autocast_changed)
_dual.on_activate(lambda active: _op_cacheable.clear())
_tracing.on_activate(lambda active: _op_cacheable.clear())


def _dispatch_cast(op, *args, **attrs):
    """dispatch() of an op whose arguments autocast has cast (autocast suspended)."""
    return dispatch(op, *args, **attrs)


def _key_of(v):
    """A hashable signature of one operand or attribute, or None when it has none we trust.
    A tensor: dtype, device, shape, strides (never its values); a scalar: its type and value
    (True, 1 and 1.0 promote differently); a dtype object; a tuple of those."""
    if isinstance(v, Tensor):
        dev = v._storage.device
        return (v.dtype, dev.type, dev.index, v._shape, v._stride)
    tp = type(v)
    if tp in _SCALAR_TYPES or tp is _dt.dtype:
        return (tp, v)
    if tp is tuple:
        if _INT_ONLY >= set(map(type, v)):     # dims, sizes: the tuple is its own key (no loop)
            return (tuple, v)
        parts = []
        for x in v:
            k = _key_of(x)
            if k is None:
                return None
            parts.append(k)
        return (tuple, tuple(parts))
    return None


def signature(op, args, attrs):
    """The cache key of a call of ``op`` (None: this call is not cached). Every tensor operand
    must be on one device (mixed devices, 0-d cpu scalars in a cuda op: the first-time path)."""
    ok = _op_cacheable.get(op)
    if not (ok or (ok is None and _is_cacheable(op))):
        return None
    key = [op, _dt._default_float]         # float_rule's result for integer inputs
    dev = None
    for a in args:
        if isinstance(a, Tensor):
            d = a._storage.device
            if dev is None:
                dev = d
            elif d is not dev and (d.type != dev.type or d.index != dev.index):
                return None
            key.append((a._dtype, d.type, d.index, a._shape, a._stride))
        elif type(a) in _SCALAR_TYPES:     # _key_of's scalar case, inlined (issue 14)
            key.append((type(a), a))
        else:
            k = _key_of(a)
            if k is None:
                return None
            key.append(k)
    if dev is None:
        return None
    for name, v in attrs.items():
        tp = type(v)
        if tp in _SCALAR_TYPES or tp is _dt.dtype:     # (inlined, as above)
            k = (tp, v)
        else:
            k = _key_of(v)
            if k is None:
                return None
        key.append(name)
        key.append(k)
    return tuple(key)


def _remember(key, meta, dev, strides=None):
    """Cache a signature's rule result with its output's strides (None: contiguous)."""
    if len(_rule_cache) >= _CACHE_LIMIT:
        _rule_cache.clear()
    shape = Size(int(s) for s in meta.shape)
    dtype = meta.dtype
    compute = meta.compute or dtype
    # the device's backend, bound to this op: a repeated call reaches the reference or the
    # kernel launcher directly (backends/base.py: launcher, compute_arg)
    backend = backend_for(dev)
    _rule_cache[key] = (shape, contiguous_strides(shape) if strides is None else tuple(strides),
                        shape.numel() * dtype.itemsize, dtype, dev, compute,
                        backend.launcher(key[0]), backend.compute_arg(compute))


def clear_cache():
    """Forget every cached signature (tests; a changed rule table)."""
    _rule_cache.clear()
    _op_cacheable.clear()
    _view_cache.clear()


def _cpu_scalars_to_values(args, dev):
    """A 0-d cpu tensor used in a cuda op is read as a Python scalar; one that requires grad
    is copied to the device instead, so its gradient flows back to it."""
    if dev is None or backend_for(dev).host_memory:
        return args

    def convert(a):
        if not (isinstance(a, Tensor) and backend_for(a.device).host_memory):
            return a
        if a.requires_grad and is_grad_enabled():
            from .copy import to_device   # late import: copy.py is built on dispatch (its ops go through it)
            return to_device(a, dev)
        return a.item()
    return tuple(convert(a) for a in args)


def run_kernel(op: OpDef, out: Tensor, args, compute, attrs):
    """Compute op(*args) into ``out`` on out's device; nothing runs for an empty output."""
    if 0 in out._shape:
        return
    backend_for(out._storage.device).run(op, out, args, attrs, compute)


def dispatch(op: OpDef, *args, **attrs):
    # A sparse operand raises SparseOperand where dense code would first touch its memory
    # (ops/_sparse.py): the op then runs its sparse implementation, or raises torch's error.
    # (A try block costs nothing in the common case: no call, no check.)
    try:
        key = signature(op, args, attrs)
        if key is not None:
            hit = _rule_cache.get(key)
            if hit is not None:               # the fast path: nothing about this signature is redone
                shape, strides, nbytes, dtype, dev, _, launch, compute = hit
                out = Tensor._make(Storage(nbytes, dev), shape, strides, 0, dtype)
                if nbytes:                    # zero-size outputs never run a kernel
                    launch(out, *args, compute=compute, **attrs)
                if _grad_state.enabled:         # record() only when an operand may need a node
                    for a in args:              # (no call for a forward nothing differentiates)
                        if isinstance(a, Tensor) and (a._requires_grad or a._grad_fn is not None
                                                      or a._view_version is not None):
                            record(op, out, args, attrs)
                            break
                return out
        if _autocast.ACTIVE[0] and _autocast.policy_for(op.name, args, attrs) is not None:
            return _autocast.call(op.name, _dispatch_cast, (op,) + args, attrs)
        if op.view is not None:          # one tensor operand: no device to agree on
            return _dispatch_view(op, args[0], attrs)
        tensors = [a for a in args if isinstance(a, Tensor)]
        dev = common_device(tensors)
        if op.outputs:                   # several outputs (table.py): a tuple of them
            return _dispatch_outputs(op, args, attrs, dev)
        meta = op.rule(*args, **attrs)            # 0-d cpu tensors still count as tensors here
        cacheable = _unsigned.check(op, args, meta.compute or meta.dtype, dev)    # uint16/32/64: torch's kernels
        strides = output_strides(op, meta.shape, args, attrs)
        if key is not None and cacheable:
            _remember(key, meta, dev, strides)
        written = args                  # (a trace records the call as written: 0-d cpu operands too)
        args = _cpu_scalars_to_values(args, dev)
        out = empty(meta.shape, meta.dtype, dev, strides)
        run_kernel(op, out, args, meta.compute or meta.dtype, attrs)
        if _dual.ACTIVE[0]:             # forward AD: out's tangent from its operands' (before
            _forward_ad.apply_rule(op, out, args, attrs)    # record: a saved out keeps it)
        if _grad_state.enabled:         # record() would return at once otherwise
            record(op, out, args, attrs)
        if _tracing.ACTIVE[0]:          # a trace records the op (tritensor/jit/_trace.py)
            _tracing.record(op, written, attrs, out)
        return out
    except SparseOperand as e:
        return sparse_fallback(op, args, attrs, e)


def _dispatch_outputs(op, args, attrs, dev):
    """dispatch() of an entry with several outputs (table.py): the rule gives one Meta per
    output, each output is allocated by the entry's layout, the backend computes them all in one
    run (nothing runs when every output is empty), and one node records the floating ones."""
    metas = op.rule(*args, **attrs)
    _unsigned.check(op, args, metas[0].compute or metas[0].dtype, dev)
    written = args
    args = _cpu_scalars_to_values(args, dev)
    outs = tuple(empty(m.shape, m.dtype, dev, output_strides(op, m.shape, args, attrs)) for m in metas)
    if any(0 not in o._shape for o in outs):
        meta = metas[0]
        backend_for(dev).run(op, outs, args, attrs, meta.compute or meta.dtype)
    if _dual.ACTIVE[0]:
        _forward_ad.apply_rule(op, outs, args, attrs)
    if _grad_state.enabled:
        record(op, outs, args, attrs)
    if _tracing.ACTIVE[0]:
        _tracing.record(op, written, attrs, outs)
    return outs


# View ops whose layout function reads only the input's shape, strides and offset (and the
# attributes): their (shape, strides, offset) is cached per signature like a rule's result.
CACHEABLE_VIEWS = frozenset({"view", "permute", "transpose", "expand", "t", "squeeze", "unsqueeze"})
_view_cache: dict = {}


def _view_layout(op, x, attrs):
    key = None
    if op.name in CACHEABLE_VIEWS and isinstance(x, Tensor):
        key = [op, x._shape, x._stride, x._offset]
        for name, v in attrs.items():
            k = _key_of(v)
            if k is None:
                key = None
                break
            key.append(name)
            key.append(k)
        if key is not None:
            key = tuple(key)
            layout = _view_cache.get(key)
            if layout is not None:
                return layout
    shape, strides, offset = op.view(x, **attrs)
    if key is not None:
        if len(_view_cache) >= _CACHE_LIMIT:
            _view_cache.clear()
        shape = Size(shape)
        _view_cache[key] = layout = (shape, tuple(int(s) for s in strides), int(offset))
        return layout
    return shape, strides, offset


def _dispatch_view(op, x, attrs):
    shape, strides, offset = _view_layout(op, x, attrs)
    out = Tensor._make(x._storage, shape, strides, offset, x.dtype, x._version_counter)
    out._base = x._base if x._base is not None else x
    if _grad_state.enabled:
        # a differentiable view: when its base changes in place, its grad_fn is regenerated
        # (Tensor.grad_fn); views made under no_grad stay out of the base's history (and
        # record nothing)
        out._view_version = out._version_counter.value
        record(op, out, (x,), attrs)
    if _dual.ACTIVE[0]:       # the same view of x's tangent
        _forward_ad.view_tangent(out, x)
    if _tracing.ACTIVE[0]:
        _tracing.record(op, (x,), attrs, out)
    return out


def record(op: OpDef, out: Tensor, args, attrs):
    """Attach the backward node of ``op`` to ``out`` when some input requires grad (``out`` a
    tuple for an entry with several outputs: each floating one becomes the node's output at its
    position).

    Every recorded op pays this (issue 14): grad mode is one attribute read, the operands are
    walked once for their metadata and edges (gradient_edge inlined), and each saved tensor
    is one SavedTensor."""
    if op.backward is None or not _grad_state.enabled:
        return
    needs = []
    for a in args:        # Tensor.requires_grad, inlined; a view whose base changed in place asks
                          # the property (which regenerates its grad_fn)
        needs.append(isinstance(a, Tensor) and (
            a._requires_grad or (a._grad_fn is not None if a._view_version is None else a.requires_grad)))
    if True not in needs:
        return
    several = type(out) is tuple
    if several:
        for o in out:
            if o.dtype.is_floating_point:
                break
        else:
            return
    elif not out.dtype.is_floating_point:
        return  # integer and bool results never require grad
    if not op.differentiable:
        raise RuntimeError(f"the derivative for '{op.name}' is not implemented.")
    ctx_attrs = dict(attrs)
    meta, edges = [], []
    names = op.args
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            meta.append((a._shape, a.dtype, a._storage.device))
            fn = a._grad_fn if a._view_version is None else a.grad_fn
            if fn is not None:
                edges.append((fn, a._output_nr))
            elif a._requires_grad:      # the leaf's AccumulateGrad (graph.grad_accumulator)
                ref = a._grad_accumulator
                acc = ref() if ref is not None else None
                edges.append((acc if acc is not None else grad_accumulator(a), 0))
            else:
                edges.append(_NO_EDGE)
        else:
            meta.append(None)
            edges.append(_NO_EDGE)
            if i < len(names):
                ctx_attrs[names[i]] = a          # scalar operands are read as ctx.<name>
    grad_name = op.grad_name
    node = new_op_node(op, ctx_attrs, tuple(needs), tuple(meta),
                       grad_name if type(grad_name) is str else op.node_name(args, attrs))
    ctx = node.ctx
    node.next_functions = tuple(edges)
    if several:
        for i, o in enumerate(out):
            o._output_nr = i      # (an integer output keeps its position for saved-tensor errors)
            if o.dtype.is_floating_point:
                o._grad_fn = node
    else:
        out._grad_fn = node       # before saving: a saved output remembers that it requires grad
        out._output_nr = 0
    if op.saves:
        saved = ctx._saved
        only = op.saves_for
        for name in op.saves:
            if only is not None and name in only:     # needed by some inputs' gradients only
                for i in only[name]:
                    if needs[i]:
                        break
                else:
                    continue
            if name == "out":
                saved["out"] = SavedTensor(out, True)
            elif several and name in op.outputs:    # (an integer output has no node: kept as is)
                o = out[op.outputs.index(name)]
                saved[name] = SavedTensor(o, o._grad_fn is node)
            else:
                a = args[names.index(name)]
                if isinstance(a, Tensor):
                    saved[name] = SavedTensor(a)
    if _anomaly._enabled:
        _anomaly.record_trace(node)


_NO_EDGE = (None, 0)


# ------------------------------------------------------------------------- in-place
def check_inplace(t: Tensor):
    if t._version_counter.inference:
        check_inference_inplace(t._version_counter)
    if not is_grad_enabled():
        return
    # is_leaf and requires_grad, inlined: grad_fn is read first (it may regenerate a view's)
    if t.grad_fn is None and t._requires_grad:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation.")
    base = t._base
    if base is not None and base.grad_fn is None and base._requires_grad:
        raise RuntimeError(
            "a view of a leaf Variable that requires grad is being used in an in-place operation.")


def dispatch_inplace(op: OpDef, self: Tensor, *others, **attrs):
    """self = op(self, *others), written into self's memory (views see it)."""
    if _tracing.ACTIVE[0] and not _tracing.state.suspended:    # a trace records one in-place node
        return _tracing.inplace(op, self, others, attrs, dispatch_inplace)
    if _dual.ACTIVE[0] and not _dual.state.suspended:   # forward AD: the tangent too, in place
        return _forward_ad.inplace(op, self, others, attrs, dispatch_inplace)
    if _grad_state.enabled:       # check_inplace returns at once otherwise
        check_inplace(self)
    key = signature(op, (self,) + others, attrs)
    hit = _rule_cache.get(key) if key is not None else None
    launch = None
    if hit is not None:     # a signature seen before: one device, the rule's result known
        shape, dtype, compute = hit[0], hit[3], hit[5]
        launch = hit[6]     # the backend's launcher of op (as in dispatch's fast path)
    else:
        dev = common_device([self] + [a for a in others if isinstance(a, Tensor)])
        meta = op.rule(self, *others, **attrs)
        cacheable = _unsigned.check(op, (self,) + others, meta.compute or meta.dtype, dev)
        if key is not None and cacheable:      # the out-of-place call of this signature reads the same entry
            _remember(key, meta, dev, output_strides(op, meta.shape, (self,) + others, attrs))
        others = _cpu_scalars_to_values(others, dev)
        shape, dtype, compute = meta.shape, meta.dtype, meta.compute
    if shape != self._shape or dtype._kind > self._dtype._kind:    # (_dt.can_cast, inlined)
        check_inplace_result(self, shape, dtype)
    if self._version_counter.inference:     # refused before anything is written
        check_inference_inplace(self._version_counter)
    recording = False
    if op.backward is not None and _grad_state.enabled:
        recording = self._requires_grad or self.grad_fn is not None     # self.requires_grad
        if not recording:
            for a in others:
                if isinstance(a, Tensor) and a.requires_grad:
                    recording = True
                    break
    if recording:
        _rebase_inplace(self, lambda src: dispatch(op, src, *others, **attrs),
                        needs_old_self=op.args[0] in op.saves)
    else:
        if launch is None:
            run_kernel(op, self, (self,) + tuple(others), compute or dtype, attrs)
        elif 0 not in self._shape:
            launch(self, self, *others, compute=hit[7], **attrs)
        self._version_counter.value += 1
    return self


def check_inplace_result(self, shape, dtype):
    if shape != self._shape and tuple(shape) != tuple(self._shape):
        raise RuntimeError(
            f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(shape)}")
    if not _dt.can_cast(dtype, self.dtype):
        raise RuntimeError(
            f"result type {_dt.type_name(dtype)} can't be cast to the desired output type "
            f"{_dt.type_name(self.dtype)}")


def _rebase_inplace(self, compute, needs_old_self):
    """The recorded form of an in-place op: compute out of place (from a snapshot of self when
    the backward needs self's old value), write the result into self, and give self the
    result's history, as torch's rebase_history does.

    On a view of a base, the history goes to the base instead (torch's CopySlices): the base's
    new node writes the op's gradient for the view's old value into the view's region of the
    base's gradient. The view itself (and every other view of the base) then gets its grad_fn
    regenerated from the base (Tensor.grad_fn sees the version counter move)."""
    base = self._base
    if base is not None and self._view_version is None:
        raise RuntimeError(
            "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
            "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
            "your code by moving both the view and the inplace either both inside the no_grad block "
            "(if you don't want the inplace to be tracked) or both outside (if you want the inplace "
            "to be tracked).")
    src = self.clone() if needs_old_self else self
    src_edge = gradient_edge(src)
    result = compute(src)
    from . import copy as _copy   # late import: copy.py is built on dispatch (its ops go through it)
    fn = result.grad_fn
    if base is not None and fn is not None:
        base_geometry, view_geometry = geometry(base), geometry(self)
        check_view_geometry(base_geometry, view_geometry)
        base_edge = gradient_edge(base)
    with no_grad():
        _copy.copy_into(self, result)
    self._version_counter.value += 1
    if base is None or fn is None:
        rebase_history(self, fn, result._output_nr)
        return
    # the input of fn that is the view's old value (src); unidentifiable when src has no history
    self_index = None
    if src_edge[0] is not None:
        for i, edge in enumerate(fn.next_functions):
            if edge[0] is src_edge[0] and edge[1] == src_edge[1]:
                self_index = i
                break
    rebase_history(base, CopySlices(base_edge, base_geometry, view_geometry, fn, self_index), 0)
