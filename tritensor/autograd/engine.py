"""The backward engine: iterative, so a graph of any depth runs without recursion.

1. Walk the graph from the roots (an explicit stack) and count, for every node, how many
   edges lead into it.
2. Run nodes whose every consumer has run, newest first (highest sequence number, as torch's
   ready queue does), summing the gradients that arrive for each of a node's outputs.
3. At a leaf's AccumulateGrad, add into ``.grad``; for ``autograd.grad``, capture instead.
"""
from __future__ import annotations

import heapq

from .grad_mode import enable_grad, is_grad_enabled, no_grad
from .graph import AccumulateGrad, gradient_edge


def _add_grads(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _collect(roots, stop_at=frozenset()):
    """Count the incoming edges of every node reachable from ``roots``."""
    deps = {}
    seen = set()
    stack = [n for n in roots if n is not None]
    for n in stack:
        seen.add(n)
    while stack:
        node = stack.pop()
        if node in stop_at:
            continue
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return deps


def _needed(roots, targets, stop_at):
    """Nodes from which some target is reachable: only they need to run for autograd.grad."""
    # Reverse reachability without recursion: order nodes so that consumers come before
    # producers, then propagate "leads to a target" from producers back to consumers.
    order, seen, stack = [], set(), [(n, False) for n in roots if n is not None]
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
    needed = set()
    for node in order:  # post-order: producers first
        if node in targets or (node not in stop_at and any(
                nxt in needed for nxt, _ in node.next_functions if nxt is not None)):
            needed.add(node)
    return needed


def run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs=None,
                 allow_unused=False, accumulate=True):
    """Backpropagate ``grad_tensors`` from ``tensors``.

    accumulate=True (Tensor.backward): add into the ``.grad`` of leaves (only ``inputs`` if given).
    accumulate=False (autograd.grad): return the gradients of ``inputs`` and touch no ``.grad``.
    """
    from ..tensor import Tensor

    roots = []   # (node, output_nr, grad)
    for t, g in zip(tensors, grad_tensors):
        node, nr = gradient_edge(t)
        if node is None:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
        roots.append((node, nr, g))

    # Where the gradients of the requested inputs are taken.
    capture = {}     # (node, output_nr) -> index into inputs
    stop_at = set()  # nodes whose gradient is captured and not propagated further
    if inputs is not None:
        for i, t in enumerate(inputs):
            node, nr = gradient_edge(t)
            if node is None:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            capture[(node, nr)] = i
            if isinstance(node, AccumulateGrad) and not accumulate:
                stop_at.add(node)

    root_nodes = [r[0] for r in roots]
    deps = _collect(root_nodes, stop_at)
    needed = None
    if inputs is not None:
        needed = _needed(root_nodes, {n for n, _ in capture}, stop_at)

    buffers = {}     # node -> list of summed gradients, one slot per output
    for node, nr, g in roots:
        slots = buffers.setdefault(node, {})
        slots[nr] = _add_grads(slots.get(nr), g)

    results = [None] * (len(inputs) if inputs is not None else 0)
    ready = [(-n._sequence_nr, id(n), n) for n in set(root_nodes) if deps.get(n, 0) == 0]
    heapq.heapify(ready)
    with (enable_grad() if create_graph else no_grad()):
        while ready:
            _, _, node = heapq.heappop(ready)
            slots = buffers.pop(node, {})
            outs = None
            if needed is None or node in needed:
                if isinstance(node, AccumulateGrad):
                    _leaf(node, slots.get(0), inputs, results, capture, accumulate, create_graph)
                else:
                    grads = _call_hooks(node, slots)
                    for nr, g in enumerate(grads):
                        idx = capture.get((node, nr))
                        if idx is not None and g is not None:
                            results[idx] = g
                            if accumulate:
                                _accumulate(inputs[idx], g, create_graph)
                    if any(g is not None for g in grads):
                        outs = _apply(node, grads)
                    if not retain_graph:
                        node.release_saved()
            for i, (nxt, nr) in enumerate(node.next_functions):
                if nxt is None:
                    continue
                if outs is not None and i < len(outs) and outs[i] is not None:
                    nslots = buffers.setdefault(nxt, {})
                    nslots[nr] = _add_grads(nslots.get(nr), outs[i])
                deps[nxt] -= 1
                if deps[nxt] == 0:
                    heapq.heappush(ready, (-nxt._sequence_nr, id(nxt), nxt))

    if inputs is not None and not accumulate and not allow_unused:
        if any(r is None for r in results):
            raise RuntimeError(
                "One of the differentiated Tensors appears to not have been used in the graph. "
                "Set allow_unused=True if this is the desired behavior.")
    return results


def _call_hooks(node, slots):
    """Tensor hooks registered on a non-leaf run on the summed gradient of that output;
    retain_grad() stores it."""
    for nr, hooks in node._pre_hooks.items():
        g = slots.get(nr)
        if g is None:
            continue
        for fn in list(hooks.values()):
            new = fn(g)
            if new is not None:
                g = new
        slots[nr] = g
    for nr, ref in node._retain.items():
        t = ref()
        g = slots.get(nr)
        if t is not None and g is not None:
            _accumulate(t, g, create_graph=is_grad_enabled())  # grad mode is on iff create_graph
    return [slots.get(i) for i in range(max(slots, default=-1) + 1)]


def _apply(node, grads):
    try:
        outs = node.apply(grads)
    except Exception as e:
        if node._anomaly_trace is not None:
            import warnings
            warnings.warn(
                f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
                + node._anomaly_trace, stacklevel=2)
        raise e
    if node._anomaly_trace is not None:
        from .anomaly import check_nan
        check_nan(node, outs)
    if not isinstance(outs, (tuple, list)):
        outs = (outs,)
    return outs


def _leaf(node, g, inputs, results, capture, accumulate, create_graph):
    """A leaf's gradient: its hooks run first, then it is captured and/or accumulated."""
    if g is None:
        return
    leaf = node.variable
    g = _run_leaf_hooks(leaf, g)
    idx = capture.get((node, 0))
    if idx is not None:
        results[idx] = g
    if accumulate and (inputs is None or idx is not None):
        _accumulate(leaf, g, create_graph)


def _accumulate(t, g, create_graph):
    """``t.grad += g``; the sum keeps its graph only under create_graph, as in torch.

    The first gradient is cloned: what arrives may be a broadcast view, the seed the user passed
    or a buffer another leaf also received, and ``.grad`` must be a dense tensor of its own."""
    if not create_graph:
        g = g.detach()
    new = g.clone() if t._grad is None else t._grad + g
    t._grad = new if create_graph else new.detach()


def _run_leaf_hooks(leaf, g):
    for fn in list(leaf._hooks.values()):
        new = fn(g)
        if new is not None:
            g = new
    return g
