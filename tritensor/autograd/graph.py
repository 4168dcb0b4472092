"""Graph nodes: the backward half of every recorded op, and the leaves' gradient accumulators."""
from __future__ import annotations

import itertools
import weakref

_sequence = itertools.count()

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


class SavedTensor:
    """A tensor kept for backward, with the version it had when saved.

    An input is kept as itself (its grad_fn is older than the node, so no cycle forms). An op's
    own output is kept as a detached alias: output -> node -> output would be a reference cycle.
    Unpacking the output gives it back attached to the node, so a backward rule that uses it is
    itself differentiable (create_graph=True)."""
    __slots__ = ("_tensor", "_version", "_is_output", "_output_nr", "_requires_grad")

    def __init__(self, tensor, is_output=False):
        self._version = tensor._version.value
        self._is_output = is_output
        self._requires_grad = tensor.requires_grad
        self._output_nr = tensor._output_nr
        self._tensor = tensor._alias_detached() if is_output else tensor

    def unpack(self, node):
        t = self._tensor
        if t is None:
            raise RuntimeError(FREED_MESSAGE)
        if t._version.value != self._version:
            producer = node if self._is_output else t.grad_fn
            where = f", which is output {self._output_nr} of {producer.name()}," if producer else ""
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{t._type_description()}]{where} "
                f"is at version {t._version.value}; expected version "
                f"{self._version} instead. Hint: enable anomaly detection to find the operation "
                "that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True)."
            )
        if self._is_output and self._requires_grad:
            return t._attached_to(node, self._output_nr)
        return t

    def release(self):
        self._tensor = None


class Node:
    """One backward function in the graph. ``next_functions`` pairs each input's node with the
    output number of that input on it, as torch does."""

    def __init__(self):
        self._sequence_nr = next(_sequence)
        self.next_functions: tuple = ()
        self._pre_hooks: dict = {}       # output_nr -> {handle id: fn}  (tensor hooks)
        self._retain: dict = {}          # output_nr -> weakref to a non-leaf that retains grad
        self.metadata: dict = {}
        self._anomaly_trace = None

    def name(self) -> str:
        return type(self).__name__

    def apply(self, grads):
        raise NotImplementedError

    def release_saved(self):
        pass

    def __call__(self, *grads):
        return self.apply(grads)

    def __repr__(self):
        return f"<{self.name()} object at 0x{id(self):x}>"


class AccumulateGrad(Node):
    """The node of a leaf that requires grad: adds the incoming gradient to ``leaf.grad``."""

    def __init__(self, variable):
        super().__init__()
        self.variable = variable

    def apply(self, grads):
        raise AssertionError("AccumulateGrad is run by the engine")


class OpNode(Node):
    """The backward of one dispatched op: its table entry's rule applied to the saved context."""

    def __init__(self, op, ctx, name):
        super().__init__()
        self.op = op
        self.ctx = ctx
        self._name = name

    def name(self):
        return self._name

    def apply(self, grads):
        self.ctx._node = self          # saved outputs unpack attached to this node ...
        try:
            outs = self.op.backward(self.ctx, *grads)
        finally:
            self.ctx._node = None      # ... and no node <-> ctx cycle outlives the call
        if not isinstance(outs, tuple):
            outs = (outs,)
        return tuple(_fit(g, m) for g, m in zip(outs, self.ctx.input_meta))

    def release_saved(self):
        self.ctx.release()


def _fit(grad, meta):
    """Bring a gradient to its input's shape and dtype, as torch's engine does: sum over the
    dimensions the forward broadcast, cast back from a promoted dtype."""
    if grad is None or meta is None:
        return None
    shape, dtype, _ = meta
    if tuple(grad.shape) != tuple(shape):
        grad = grad.sum_to_size(shape)
    if grad.dtype is not dtype:
        grad = grad.to(dtype)
    return grad


class BackwardContext:
    """What an op's backward sees: attributes, input metadata, saved tensors, needs_input_grad."""

    def __init__(self, attrs, needs_input_grad, input_meta):
        self.attrs = attrs
        self.needs_input_grad = needs_input_grad
        self.input_meta = input_meta       # per input: (shape, dtype, device) or None for a scalar
        self._saved = {}
        self._node = None

    def save(self, name, tensor, is_output=False):
        self._saved[name] = None if tensor is None else SavedTensor(tensor, is_output)

    def saved(self, name):
        st = self._saved[name]
        return None if st is None else st.unpack(self._node)

    def release(self):
        for st in self._saved.values():
            if st is not None:
                st.release()

    def __getattr__(self, name):
        # Attributes read like ctx.alpha; saved tensors like ctx.x.
        attrs = self.__dict__.get("attrs", {})
        if name in attrs:
            return attrs[name]
        saved = self.__dict__.get("_saved", {})
        if name in saved:
            return self.saved(name)
        raise AttributeError(name)


def grad_accumulator(tensor):
    """The leaf's AccumulateGrad, created once and kept alive only by the graphs that use it."""
    acc = tensor._grad_accumulator() if tensor._grad_accumulator is not None else None
    if acc is None:
        acc = AccumulateGrad(tensor)
        tensor._grad_accumulator = weakref.ref(acc)
    return acc


def gradient_edge(tensor):
    """(node, output_nr) through which a gradient reaches ``tensor``; (None, 0) if none does."""
    if tensor.grad_fn is not None:
        return tensor.grad_fn, tensor._output_nr
    if tensor.requires_grad:
        return grad_accumulator(tensor), 0
    return None, 0
