"""The backward engine: iterative, so a graph of any depth runs without recursion.

1. Walk the graph from the roots (an explicit stack) and count, for every node, how many
   edges lead into it.
2. Run nodes whose every consumer has run, newest first (highest sequence number, as torch's
   ready queue does), summing the gradients that arrive for each of a node's outputs.
3. At a leaf's AccumulateGrad, add into ``.grad``; for ``autograd.grad``, capture instead.

When ``inputs`` are given, only the nodes that lead to one of them run (torch's exec_info):
a node whose gradient is captured but from which no other input is reachable is not run.

The loop is the host-side cost of every backward (issue 14), so the common case is inlined:
a node without hooks is applied directly, a leaf without hooks whose first gradient nobody
else holds takes that gradient as its ``.grad`` (torch's AccumulateGrad steals the buffer),
and the machinery for hooks, retain_grad, capture and anomaly mode runs only when present.
"""
from __future__ import annotations

import sys
import threading
from heapq import heapify, heappop, heappush

from .. import _autocast
from . import anomaly as _anomaly
from .grad_mode import _state as _grad_state
from .graph import AccumulateGrad, OpNode, gradient_edge
from .hooks import run_posthooks, run_prehooks


def _add_grads(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a + b


# ------------------------------------------------------------------ who else holds a gradient
# torch's AccumulateGrad uses a first gradient as the leaf's .grad when no one else holds it
# (its use_count); sys.getrefcount is CPython's equivalent. What it reports for an object held
# by one local variable is measured here through the same call the engine makes, not assumed.
class _Probe:
    pass


def _refs_seen_by_callee(obj, variable=None) -> int:
    return sys.getrefcount(obj)


def _sole_holder_count() -> int:
    probe = _Probe()
    n = _refs_seen_by_callee(probe)
    probe.seen = n               # probe stays alive past the call, as the engine's gradient does
    return n


_OP_NODE_RELEASE = OpNode.release_saved

# Callbacks queued during a backward (torch's Variable._execution_engine.queue_callback), run in
# order once the current backward has finished; DistributedDataParallel waits for its gradient
# all-reduces here. Per thread, as backward runs in its caller's thread (DataParallel's forward
# threads must not run another thread's callbacks). A backward that queued nothing pays one test.
class _Callbacks(threading.local):
    queue = None      # a list, made by the thread's first queue_callback


_callbacks = _Callbacks()


def queue_callback(callback):
    """Run ``callback()`` when the backward now running finishes (after every gradient has been
    accumulated); a callback may queue further callbacks, run in the same pass."""
    if _callbacks.queue is None:
        _callbacks.queue = []
    _callbacks.queue.append(callback)


def _run_final_callbacks():
    queue = _callbacks.queue
    while queue:
        queue.pop(0)()
_SOLE = _sole_holder_count() if hasattr(sys, "getrefcount") else -1   # -1: never steal


def _takes_as_is(grad, variable) -> bool:
    """Whether ``grad`` may become ``variable.grad`` itself (torch's AccumulateGrad: no one
    else holds it, and it obeys the layout contract). Called exactly as _refs_seen_by_callee
    is, so the count that means "only the engine's local variable" is the measured _SOLE."""
    if sys.getrefcount(grad) > _SOLE:
        return False
    if variable._is_sparse_coo or variable._is_sparse_csr:   # a sparse leaf keeps a sparse gradient
        return grad.layout is variable.layout                    # as it is (torch's)
    if grad._is_sparse_csr:
        return False
    gs = grad._stride
    if gs == variable._stride and 0 not in gs:
        # the common case: the variable's own strides, which obey the contract exactly when
        # the variable is non-overlapping and dense (known per shape and strides)
        key = (variable._shape, gs)
        dense = _DENSE_LAYOUTS.get(key)
        if dense is None:
            from ..ops.views import is_non_overlapping_and_dense
            if len(_DENSE_LAYOUTS) >= 1024:
                _DENSE_LAYOUTS.clear()
            dense = _DENSE_LAYOUTS[key] = is_non_overlapping_and_dense(variable)
        return dense
    return _obeys_layout_contract(grad, variable)


_DENSE_LAYOUTS: dict = {}     # (shape, strides) -> non-overlapping and dense


def _obeys_layout_contract(grad, variable) -> bool:
    """torch's obeys_layout_contract: a gradient may become ``variable.grad`` as it is when it
    has the variable's strides (a non-overlapping, dense variable; size-1 dims ignored, but a
    0 stride is a broadcast view), or is contiguous (any other variable)."""
    gs = grad._stride
    from ..ops.views import is_non_overlapping_and_dense
    if is_non_overlapping_and_dense(variable):
        for size, g_st, v_st in zip(grad._shape, gs, variable._stride):
            if size != 1:
                if g_st != v_st:
                    return False
            elif g_st == 0:
                return False
        return True
    return grad.is_contiguous()


def _clone_obey_contract(grad, variable):
    """torch's clone_obey_contract: a copy of ``grad`` with the variable's strides when the
    variable is non-overlapping and dense, contiguous otherwise (never a broadcast view)."""
    from ..ops import copy as _copy
    from ..ops.dispatch import empty
    from ..ops.views import is_non_overlapping_and_dense
    if grad._is_sparse_coo or variable._is_sparse_coo or grad._is_sparse_csr or variable._is_sparse_csr:
        # (a sparse gradient or leaf: no layout to keep)
        return grad.clone()
    if variable.is_contiguous() or not is_non_overlapping_and_dense(variable):
        out = empty(variable._shape, grad.dtype, grad.device)
    else:
        from ..runtime.storage import Storage
        from ..tensor import Tensor
        out = Tensor._make(Storage(variable.numel() * grad.dtype.itemsize, grad.device),
                           variable._shape, variable._stride, 0, grad.dtype)
    _copy.copy_into(out, grad)
    return out


def ones_seed(out):
    """The implicit gradient of a one-element output: ones_like(out), made directly (an empty
    tensor filled with 1) since every ``y.backward()`` makes one."""
    ops = _OPS
    if not ops:       # ops import autograd: taken on first use, then kept (no import per call)
        from ..backends.base import backend_for
        from ..runtime.storage import Storage
        from ..tensor import Tensor
        ops[:] = (Tensor._make, Storage, backend_for)
    make, storage, backend_for = ops
    shape = out._shape                     # one element: every stride 1, as contiguous_strides
    dev = out._storage.device
    g = make(storage(out.dtype.itemsize, dev), shape, (1,) * len(shape), 0, out.dtype)
    backend_for(dev).fill(g, 1)            # (copy.fill_into, less its size-0 test: one element)
    return g


_OPS: list = []


# ------------------------------------------------------------------ graph walks
def _collect(roots, stop_at=frozenset()):
    """Count the incoming edges of every node reachable from ``roots``."""
    deps = {}
    # (never None: every root has a node; each once: two outputs of one node, grad([a, b]) of
    # std_mean's, are one root, else its inputs would count two edges and never be ready)
    stack = list(dict.fromkeys(roots))
    seen = set(stack)
    while stack:
        node = stack.pop()
        if stop_at and node in stop_at:
            continue
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            if nxt in seen:      # (a root reached from another root has no count yet)
                deps[nxt] = deps.get(nxt, 0) + 1
            else:
                deps[nxt] = 1
                seen.add(nxt)
                stack.append(nxt)
    return deps


def _to_execute(roots, targets, stop_at):
    """The nodes that must run so that every target receives its gradient: those with an
    edge to a target or to another such node. (A target itself only runs when something
    behind it is needed too.)"""
    # Post-order without recursion: producers are finished before their consumers.
    order, seen, stack = [], set(), []
    for n in roots:
        if n is not None:
            stack.append((n, False))
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        if node in stop_at:
            continue
        for nxt, _ in node.next_functions:
            if nxt is not None and nxt not in seen:
                stack.append((nxt, False))
    execute, reaches = set(), set()
    for node in order:
        leads = False
        if node not in stop_at:
            for nxt, _ in node.next_functions:
                if nxt is not None and nxt in reaches:
                    leads = True
                    break
        if leads:
            execute.add(node)
            reaches.add(node)
        elif node in targets:
            reaches.add(node)
    return execute


# ------------------------------------------------------------------ the engine
def run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs=None,
                 allow_unused=False, accumulate=True):
    """Backpropagate ``grad_tensors`` from ``tensors``.

    accumulate=True (Tensor.backward): add into the ``.grad`` of leaves (only ``inputs`` if given).
    accumulate=False (autograd.grad): return the gradients of ``inputs`` and touch no ``.grad``.
    """
    if _autocast.ACTIVE[0] and not _autocast.state.suspended:
        # under autocast, backward ops run in the dtypes the forward chose (torch's rule)
        with _autocast.suspended():
            return run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs, allow_unused,
                                accumulate)
    roots = []   # (node, output_nr, grad)
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        node, nr = gradient_edge(t)
        if node is None:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn")
        roots.append((node, nr, g))

    # Where the gradients of the requested inputs are taken.
    capture = {}     # (node, output_nr) -> index into inputs
    stop_at = set()  # leaves whose gradient is captured, not accumulated
    root_nodes = []
    for r in roots:
        root_nodes.append(r[0])
    if inputs is not None:
        for i, t in enumerate(inputs):
            node, nr = gradient_edge(t)
            if node is None:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            capture[(node, nr)] = i
            if not accumulate and (isinstance(node, AccumulateGrad) or node._stops_capture):
                stop_at.add(node)
        targets = set()
        for n, _ in capture:
            targets.add(n)
        execute = _to_execute(root_nodes, targets, stop_at)
        results = [None] * len(inputs)
    else:
        targets = execute = None
        results = []
    deps = _collect(root_nodes, stop_at)

    buffers = {}     # node -> [summed gradient per output_nr] (None where nothing arrived)
    for node, nr, g in roots:
        slot = buffers.setdefault(node, [])
        if nr >= len(slot):
            slot.extend([None] * (nr + 1 - len(slot)))
        slot[nr] = g if slot[nr] is None else _add_grads(slot[nr], g)
    roots = None

    ready = []
    for node in set(root_nodes):
        if node not in deps:
            ready.append((-node._sequence_nr, id(node), node))
    heapify(ready)
    check_nan = _anomaly._enabled and _anomaly._check_nan
    # a leaf's first gradient may become its .grad as it is (plain backward, no graph built)
    may_steal = inputs is None and not create_graph and _SOLE > 0
    # grad mode for the backward: on to record it (create_graph), off otherwise (set directly:
    # this is what enable_grad()/no_grad() do, without their calls)
    prev_mode = _grad_state.enabled
    _grad_state.enabled = bool(create_graph)
    try:
        while ready:
            node = heappop(ready)[2]
            grads = buffers.pop(node, None)
            outs = None
            if type(node) is AccumulateGrad:
                if grads is not None and (execute is None or node in targets):
                    g = grads[0]
                    grads = None
                    leaf = node.variable
                    if (may_steal and g is not None and leaf._grad is None and not leaf._hooks
                            and node._node_hooks is None
                            and "_post_accumulate_grad_hooks" not in leaf.__dict__):
                        # torch's AccumulateGrad: a gradient no one else holds, laid out as the
                        # leaf, becomes .grad itself; any other is copied in the leaf's layout
                        if _takes_as_is(g, leaf):
                            if g._base is None and g._grad_fn is None and not g._requires_grad:
                                leaf._grad = g
                            else:
                                leaf._grad = g.detach()
                        else:
                            leaf._grad = _clone_obey_contract(g, leaf)
                    else:
                        _leaf(node, g, inputs, results, capture, accumulate, create_graph)
                    g = None
            elif grads is not None and (execute is None or node in execute or node in targets):
                if node._pre_hooks or node._retain:
                    grads = _call_hooks(node, grads, create_graph)
                if capture:
                    for nr, g in enumerate(grads):
                        idx = capture.get((node, nr))
                        if idx is not None and g is not None:
                            results[idx] = g
                            if accumulate:
                                _accumulate(inputs[idx], g, create_graph)
                    g = None
                live = False     # some gradient arrived (list.count would compare tensors)
                for g in grads:
                    if g is not None:
                        live = True
                        break
                g = None
                if live and (execute is None or node in execute):
                    hooks = node._node_hooks
                    if hooks is None:
                        try:
                            outs = node.apply(grads)
                            if not isinstance(outs, (tuple, list)):
                                outs = (outs,)
                            if check_nan:
                                _anomaly.check_nan(node, outs)
                        except Exception:
                            if _anomaly._enabled:
                                _anomaly.report_failure(node)
                            raise
                    else:
                        outs = _apply_with_hooks(node, hooks, grads, check_nan)
                    if not retain_graph:
                        if type(node).release_saved is _OP_NODE_RELEASE:
                            # OpNode.release_saved, inlined (every recorded op comes here)
                            for st in node.ctx._saved.values():
                                if st is not None:
                                    st._tensor = None
                                    st._packed = None
                        else:
                            node.release_saved()
                grads = None
            if stop_at and node in stop_at:
                continue
            n_outs = len(outs) if outs is not None else 0
            for i, (nxt, nr) in enumerate(node.next_functions):
                if nxt is None:
                    continue
                if i < n_outs:
                    g = outs[i]
                    if g is not None:
                        slot = buffers.get(nxt)
                        if slot is None:
                            if nr == 0:
                                buffers[nxt] = [g]
                            else:
                                slot = buffers[nxt] = [None] * (nr + 1)
                                slot[nr] = g
                        else:
                            if nr >= len(slot):
                                slot.extend([None] * (nr + 1 - len(slot)))
                            old = slot[nr]
                            slot[nr] = g if old is None else old + g
                            old = None
                        g = slot = None
                d = deps[nxt] - 1
                deps[nxt] = d
                if d == 0:
                    heappush(ready, (-nxt._sequence_nr, id(nxt), nxt))
            outs = None
    except BaseException:
        if _callbacks.queue:
            _callbacks.queue.clear()   # a failed backward runs none of its callbacks (as torch)
        raise
    finally:
        _grad_state.enabled = prev_mode

    if _callbacks.queue:
        _run_final_callbacks()
    if inputs is not None and not accumulate and not allow_unused:
        if any(r is None for r in results):
            raise RuntimeError(
                "One of the differentiated Tensors appears to not have been used in the graph. "
                "Set allow_unused=True if this is the desired behavior.")
    return results


def _call_hooks(node, grads, create_graph):
    """Tensor hooks registered on a non-leaf run on the summed gradient of that output, in the
    order they were registered; retain_grad() then stores the result (it always runs last)."""
    grads = list(grads)
    for nr, hooks in node._pre_hooks.items():
        g = grads[nr] if nr < len(grads) else None
        if g is None:
            continue
        grads[nr] = _run_hooks(hooks, g)
    for nr, ref in node._retain.items():
        t = ref()
        g = grads[nr] if nr < len(grads) else None
        if t is not None and g is not None:
            _accumulate(t, g, create_graph)
    return grads


def _apply_with_hooks(node, hooks, grads, check_nan):
    """torch's call_function: pre hooks (after the tensor hooks), the backward, post hooks."""
    grads = tuple(grads) + (None,) * (node._num_outputs() - len(grads))
    if hooks.pre:
        grads = run_prehooks(hooks.pre, grads)
    if any(g is not None for g in grads):
        outs = tuple(_apply(node, list(grads), check_nan))
    else:
        outs = ()
    if hooks.post:
        outs = outs + (None,) * (len(node.next_functions) - len(outs))
        outs = run_posthooks(hooks.post, outs, grads)
    return outs


def _apply(node, grads, check_nan):
    try:
        outs = node.apply(grads)
        if not isinstance(outs, (tuple, list)):
            outs = (outs,)
        if check_nan:
            _anomaly.check_nan(node, outs)
    except Exception:
        if _anomaly.is_anomaly_enabled():
            _anomaly.report_failure(node)
        raise
    return outs


def _leaf(node, g, inputs, results, capture, accumulate, create_graph):
    """A leaf's gradient: its hooks run first, then it is captured and/or accumulated."""
    if g is None:
        return
    leaf = node.variable
    if leaf._hooks:
        g = _run_hooks(leaf._hooks, g)
    idx = capture.get((node, 0))
    if idx is not None:
        results[idx] = g
    if accumulate and (inputs is None or idx is not None):
        hooks = node._node_hooks
        if hooks is not None and hooks.pre:
            g = run_prehooks(hooks.pre, (g,))[0]
            if g is None:
                return
        _accumulate(leaf, g, create_graph, leaf=True)
        post = leaf.__dict__.get("_post_accumulate_grad_hooks")
        if post:
            for fn in list(post.values()):
                res = fn(leaf)
                if res is not None:
                    raise TypeError(f"expected Variable, but hook returned '{type(res).__name__}'")
        if hooks is not None and hooks.post:
            run_posthooks(hooks.post, (), (g,))


def _accumulate(t, g, create_graph, leaf=False):
    """``t.grad += g``, as torch's AccumulateGrad (leaves) and retain_grad (non-leaves) do.

    The first gradient is copied here (the engine's fast path takes an unshared one as it is):
    what arrives may be a broadcast view, the seed the user passed or a buffer another leaf
    also received, and ``.grad`` must be a dense tensor of its own, laid out as the leaf.
    Later ones are added in place into a leaf's existing ``.grad`` when no graph is being
    built (so a reference to ``x.grad`` sees the sum, as in torch), out of place otherwise:
    under create_graph the sum keeps its graph."""
    if not create_graph:
        g = g.detach()
        if t._grad is None:
            t._grad = _clone_obey_contract(g, t) if leaf else g.clone()
        elif leaf and not (t._grad._is_sparse_coo or g._is_sparse_coo or t._grad._is_sparse_csr
                           or g._is_sparse_csr):
            t._grad.add_(g)
        else:
            t._grad = _sum_of_grads(t._grad, g).detach()
        return
    t._grad = g.clone() if t._grad is None else _sum_of_grads(t._grad, g)


def _sum_of_grads(a, b):
    """a + b, the dense one first where one is sparse (torch adds dense + sparse only)."""
    a_sparse, b_sparse = a._is_sparse_coo or a._is_sparse_csr, b._is_sparse_coo or b._is_sparse_csr
    return b + a if a_sparse and not b_sparse else a + b


def _run_hooks(hooks, g):
    """Tensor hooks in registration order; one that returns a tensor replaces the gradient,
    which must keep its dtype, device and size (torch's check_variable_result)."""
    from ..tensor import Tensor
    for fn in list(hooks.values()):
        new = fn(g)
        if new is None:
            continue
        if not isinstance(new, Tensor):
            raise TypeError(f"expected Variable or None (got {type(new).__name__})")
        name = getattr(fn, "__name__", type(fn).__name__)
        if new.dtype is not g.dtype or new.device.type != g.device.type:
            raise RuntimeError(
                f"hook '{name}' has changed the type of value (was {g._type_description().split()[0]} "
                f"got {new._type_description().split()[0]})")
        if tuple(new.shape) != tuple(g.shape):
            raise RuntimeError(f"hook '{name}' has changed the size of value")
        g = new
    return g
