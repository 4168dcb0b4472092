"""One named node for a composite op (torch's MeanBackward0, StdBackward0, LogsumexpBackward0 ...).

A composite such as ``mean = sum / n`` records one node per primitive it runs (DivBackward0 ->
SumBackward1), where torch records a single node named after the op. ``named_composite`` runs
the composite on stand-ins of its differentiable inputs and gives the result one node of the
torch name whose edges are the real inputs' edges. Its backward runs the engine over the
composite's own graph, recorded in the forward, down to the stand-ins:

* the gradients are exactly those of the composite (every special case it handles stays);
* nothing is recomputed in the backward;
* each stand-in is an alias of its input whose node passes gradients through to the input's
  edge, so a gradient computed with create_graph=True is connected to the real inputs and
  double backward works;
* the stand-ins share their inputs' version counters, so an in-place change of an input after
  the op is still caught when the backward reads a saved value.
"""
from __future__ import annotations

from ..tensor import Tensor
from . import anomaly as _anomaly
from .engine import run_backward
from .grad_mode import _state as _grad_state
from .graph import Node, gradient_edge, node_class


class CompositeInput(Node):
    """The node of a stand-in: gradients pass through unchanged to the input's edge. The
    composite's backward captures its gradient there and walks no further (_stops_capture), so
    it costs the composite's graph only, never the graph behind the inputs."""

    _stops_capture = True

    def apply(self, grads):
        return tuple(grads[:1])


class CompositeNode(Node):
    """The single node recorded for a composite; its class is named as torch's node."""

    def __init__(self, inner_out, stand_ins, next_functions):
        super().__init__()
        self._inner_out = inner_out          # the composite's result: holds its inner graph
        self._stand_ins = stand_ins          # per input (edge): its stand-in, or None
        self.next_functions = next_functions

    def apply(self, grads):
        g = grads[0] if grads else None
        stand_ins = self._stand_ins
        result = [None] * len(stand_ins)
        wanted = []
        for s in stand_ins:
            if s is not None:
                wanted.append(s)
        if g is None or not wanted:
            return tuple(result)
        got = run_backward((self._inner_out,), (g,), retain_graph=True, create_graph=_grad_state.enabled,
                           inputs=wanted, allow_unused=True, accumulate=False)
        k = 0
        for i, s in enumerate(stand_ins):
            if s is not None:
                result[i] = got[k]
                k += 1
        return tuple(result)

    def release_saved(self):
        """Free the saved tensors of the inner graph (down to the stand-ins), as the engine
        frees those of any node after a backward without retain_graph."""
        stop = set()
        for s in self._stand_ins:
            if s is not None:
                stop.add(s.grad_fn)
        seen, stack = set(), [self._inner_out.grad_fn]
        while stack:
            node = stack.pop()
            if node is None or node in seen or node in stop:
                continue
            seen.add(node)
            node.release_saved()
            for nxt, _ in node.next_functions:
                stack.append(nxt)


def named_composite(name, fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, recorded as one node called ``name`` when a tensor argument
    requires grad (and grad mode is on); otherwise simply ``fn(*args, **kwargs)``.

    ``fn`` must return one tensor computed from ``args`` with recorded (differentiable) ops;
    every tensor that may require grad must be passed in ``args`` (not closed over), since only
    the arguments' edges are the node's."""
    if not _grad_state.enabled:
        return fn(*args, **kwargs)
    # (loops rather than generator expressions: every mean() of a loss pays this)
    stand_ins, call_args = [], []
    recorded = False
    for a in args:
        if isinstance(a, Tensor) and a.requires_grad:
            s = _stand_in(a)
            stand_ins.append(s)
            call_args.append(s)
            recorded = True
        else:
            stand_ins.append(None)
            call_args.append(a)
    if not recorded:          # no argument requires grad
        return fn(*args, **kwargs)
    inner = fn(*call_args, **kwargs)
    if not isinstance(inner, Tensor) or inner.grad_fn is None:
        return inner
    # the node's edges are its floating tensor arguments' (as torch's: an index is no input)
    kept, edges = [], []
    for a, s in zip(args, stand_ins):
        if isinstance(a, Tensor) and a.dtype.is_floating_point:
            kept.append(s)
            edges.append(gradient_edge(a) if s is not None else (None, 0))
    node = node_class(name, CompositeNode)(inner, tuple(kept), tuple(edges))
    if _anomaly._enabled:
        _anomaly.record_trace(node)
    return inner._attached_to(node, 0)


def _stand_in(t):
    node = CompositeInput()
    node.next_functions = (gradient_edge(t),)
    return t._attached_to(node, 0)
