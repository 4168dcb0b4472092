"""Graph nodes: the backward half of every recorded op, and the leaves' gradient accumulators."""
from __future__ import annotations

import itertools
import weakref
from typing import NamedTuple

from .. import _dual
from .grad_mode import _state as _grad_state
from .grad_mode import is_grad_enabled, no_grad  # noqa: F401  (is_grad_enabled: graph's users)
from .hooks import NodeHooks, _saved_hooks_stack, add_hook
from .hooks import RemovableHandle, disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks  # noqa: F401  (torch.autograd.graph's names)

_sequence = itertools.count()

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


PACK_INPLACE_MESSAGE = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack "
    "hook cannot be modified by in-place operations as this can lead to unexpected side-effects. "
    "Please open an issue if you need to perform in-place operations on the input to a pack hook.")


INFERENCE_SAVE_MESSAGE = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference "
    "mode in computation tracked by autograd. To work around this, you can make a clone to get a "
    "normal tensor and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")


class SavedTensor:
    """A tensor kept for backward, with the version it had when saved.

    An input is kept as itself (its grad_fn is older than the node, so no cycle forms). An op's
    own output is kept as a detached alias: output -> node -> output would be a reference cycle.
    Unpacking the output gives it back attached to the node, so a backward rule that uses it is
    itself differentiable (create_graph=True).

    Under ``saved_tensors_hooks`` the tensor is kept as ``pack(tensor)`` instead and unpacked
    with the hooks' ``unpack``; as torch, no version check is then possible, and the unpacked
    tensor takes the saved one's place in the graph (its grad_fn, or its leaf's accumulator)."""
    __slots__ = ("_tensor", "_version", "_is_output", "_output_nr", "_requires_grad", "_was_leaf",
                 "_unpack_hook", "_packed", "_grad_fn", "_grad_acc")

    def __init__(self, tensor, is_output=False):
        if tensor._version_counter.inference:
            raise RuntimeError(INFERENCE_SAVE_MESSAGE)
        self._version = tensor._version_counter.value
        self._is_output = is_output
        # Tensor.grad_fn / requires_grad, inlined (the property is needed only for a view,
        # whose grad_fn may have to be regenerated)
        grad_fn = tensor._grad_fn if tensor._view_version is None else tensor.grad_fn
        self._requires_grad = tensor._requires_grad or grad_fn is not None
        self._output_nr = tensor._output_nr
        self._was_leaf = grad_fn is None
        if _saved_hooks_stack:
            self._pack(tensor, *_saved_hooks_stack[-1])
            return
        self._unpack_hook = None
        self._tensor = tensor._alias_detached() if is_output else tensor
        if is_output and _dual.ACTIVE[0]:   # a saved output keeps its forward-AD tangent, as torch's
            from .forward_ad import carry
            carry(tensor, self._tensor)

    def _pack(self, tensor, pack_hook, unpack_hook):
        self._tensor = None
        self._unpack_hook = unpack_hook
        self._grad_fn = None if self._is_output else tensor.grad_fn
        self._grad_acc = (weakref.ref(grad_accumulator(tensor))
                          if self._was_leaf and self._requires_grad else None)
        with no_grad():                  # torch runs pack hooks with grad mode off
            packed = pack_hook(tensor)
        if tensor._version_counter.value != self._version:
            raise RuntimeError(PACK_INPLACE_MESSAGE)
        self._packed = (packed,)

    def _unpack_packed(self, node):
        from ..tensor import Tensor
        if self._packed is None:
            raise RuntimeError(FREED_MESSAGE)
        data = self._unpack_hook(self._packed[0])
        if not isinstance(data, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {type(data).__name__}")
        producer = node if self._is_output else self._grad_fn
        if producer is not None and self._requires_grad:
            return data._attached_to(producer, self._output_nr)
        t = data._alias_detached()
        if self._grad_acc is not None:
            # a leaf: the unpacked tensor accumulates into the saved leaf's .grad (torch's
            # set_grad_accumulator), so double backward through it reaches the leaf
            t._requires_grad = True
            t._grad_accumulator = self._grad_acc
        return t

    def unpack(self, node):
        if self._unpack_hook is not None:
            return self._unpack_packed(node)
        t = self._tensor
        if t is None:
            raise RuntimeError(FREED_MESSAGE)
        if self._is_output:
            producer = node
        else:
            producer = t._grad_fn if t._view_version is None else t.grad_fn
            if producer is None and not self._was_leaf:
                raise RuntimeError(
                    "Trying to use a saved tensor that has been detached in-place, i.e. with "
                    ".detach_().This is not supported, please use out-of-place `.detach()` instead")
        if t._version_counter.value != self._version:
            from .anomaly import is_anomaly_enabled
            where = f", which is output {self._output_nr} of {producer.name()}," if producer else ""
            hint = ("Hint: the backtrace further above shows the operation that failed to compute "
                    "its gradient. The variable in question was changed in there or anywhere later. "
                    "Good luck!" if is_anomaly_enabled() else
                    "Hint: enable anomaly detection to find the operation that failed to compute "
                    "its gradient, with torch.autograd.set_detect_anomaly(True).")
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{t._type_description()}]{where} "
                f"is at version {t._version_counter.value}; expected version "
                f"{self._version} instead. {hint}"
            )
        if self._is_output and self._requires_grad:
            return t._attached_to(node, self._output_nr)
        return t

    @property
    def requires_grad(self):
        return self._requires_grad

    def release(self):
        self._tensor = None
        if self._unpack_hook is not None:
            self._packed = None


class Node:
    """One backward function in the graph (torch.autograd.graph.Node). ``next_functions`` pairs
    each input's node with the output number of that input on it, as torch does. Every node is an
    instance of a class named as torch's (``MulBackward0``, ``AccumulateGrad``, ``MyFnBackward``):
    ``type(node).__name__ == node.name()``."""

    _node_hooks = None                   # NodeHooks once register_hook/prehook is called
    _stops_capture = False               # autograd.grad captures here without walking further

    def __init__(self):
        self._sequence_nr = next(_sequence)
        self.next_functions: tuple = ()
        self._pre_hooks: dict = {}       # output_nr -> {handle id: fn}  (tensor hooks)
        self._retain: dict = {}          # output_nr -> weakref to a non-leaf that retains grad
        self._anomaly_trace = None

    def name(self) -> str:
        return type(self).__name__

    @property
    def metadata(self) -> dict:
        """A dict for the user's own data about this node (torch's Node.metadata); created on
        first access, so the nodes nobody looks at do not carry one."""
        d = self.__dict__.get("_metadata")
        if d is None:
            d = self.__dict__["_metadata"] = {}
        return d

    def _hooks(self) -> NodeHooks:
        if self._node_hooks is None:
            self._node_hooks = NodeHooks()
        return self._node_hooks

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs) -> None | grad_inputs`` runs after this node's
        backward; a returned tuple replaces the gradients sent on to its inputs."""
        return add_hook(self._hooks().post, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs) -> None | grad_outputs`` runs before this node's backward; a
        returned tuple replaces the gradients it receives."""
        return add_hook(self._hooks().pre, fn)

    def _num_outputs(self) -> int:
        """How many outputs of the forward this node takes gradients for."""
        return 1

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
        # Node.__init__ inlined: one is made per leaf per graph (the graph holds it weakly)
        self._sequence_nr = next(_sequence)
        self.next_functions = ()
        self._pre_hooks = {}
        self._retain = {}
        self._anomaly_trace = None
        self.variable = variable

    def apply(self, grads):
        raise AssertionError("AccumulateGrad is run by the engine")


class DelayedError(Node):
    """Stands in for a backward that cannot be differentiated again: the gradients it produced
    under create_graph=True get this node as their grad_fn, and differentiating them raises.

    Its edges are those of the computation it replaces (the incoming gradients and the inputs
    of the node whose backward ran), so ``autograd.grad`` reaches it whenever the missing
    derivative would have contributed, and never returns a silently wrong result."""

    def __init__(self, message, next_functions=()):
        super().__init__()
        self.message = message
        self.next_functions = tuple(next_functions)

    def apply(self, grads):
        raise NotImplementedError(self.message)


def delay_error(outputs, message, node=None, grads=()):
    """Give every floating tensor in ``outputs`` a DelayedError history (a detached alias of it,
    so the values are unchanged). ``node`` is the node whose backward produced them and
    ``grads`` its incoming gradients: they supply the DelayedError's edges."""
    from ..tensor import Tensor
    edges = [gradient_edge(g) for g in grads if isinstance(g, Tensor) and g.requires_grad]
    if node is not None:
        edges += [e for e in node.next_functions if e[0] is not None]
    err = DelayedError(message, edges)
    single = not isinstance(outputs, (tuple, list))
    wrapped = []
    for i, o in enumerate((outputs,) if single else outputs):
        if isinstance(o, Tensor) and o.dtype.is_floating_point:
            o = o._attached_to(err, i)
        wrapped.append(o)
    return wrapped[0] if single else tuple(wrapped)


_NODE_CLASSES: dict = {}


def node_class(name: str, base: type) -> type:
    """The subclass of ``base`` called ``name`` (torch's MmBackward0 ...), made once and cached."""
    key = (name, base)
    cls = _NODE_CLASSES.get(key)
    if cls is None:      # setdefault: threads racing here all get the first class made
        cls = _NODE_CLASSES.setdefault(key, type(name, (base,), {"__module__": base.__module__}))
    return cls


class OpNode(Node):
    """The backward of one dispatched op: its table entry's rule applied to the saved context.

    ``OpNode(op, ctx, name)`` makes an instance of the subclass named ``name`` (MulBackward0),
    so ``type(node).__name__`` is torch's node name."""

    def __new__(cls, op, ctx, name):
        # every recorded op makes one: the whole construction is here (Node.__init__ inlined,
        # __init__ is object's), one dict lookup finds the class
        if cls is OpNode:
            cls = _OP_NODE_CLASSES.get(name)
            if cls is None:
                cls = _OP_NODE_CLASSES[name] = node_class(name, OpNode)
        self = object.__new__(cls)
        self._sequence_nr = next(_sequence)
        self.next_functions = ()
        self._pre_hooks = {}
        self._retain = {}
        self._anomaly_trace = None
        self.op = op
        self.ctx = ctx
        return self

    __init__ = object.__init__

    def _num_outputs(self) -> int:
        return self.op.n_outputs      # several for an entry with several outputs (sort ...)

    def __getattr__(self, attr):
        # torch's node._saved_<name>: a saved tensor read back (self/other/result name the
        # entry's first two arguments and its output)
        if attr.startswith("_saved_") or attr.startswith("_raw_saved_"):
            key = attr[len("_raw_saved_"):] if attr.startswith("_raw") else attr[len("_saved_"):]
            ctx = self.__dict__.get("ctx")
            if ctx is not None:
                args = self.__dict__["op"].args
                key = {"self": args[0] if args else key, "other": args[1] if len(args) > 1 else key,
                       "result": "out"}.get(key, key)
                saved = ctx.__dict__.get("_saved", {})
                if key in saved:
                    if attr.startswith("_raw"):
                        return saved[key]
                    return None if saved[key] is None else saved[key].unpack(self)
                if key in ctx.attrs:
                    return ctx.attrs[key]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attr}'")

    def apply(self, grads):
        ctx = self.ctx
        ctx._node = self               # saved outputs unpack attached to this node ...
        try:
            outs = self.op.backward(ctx, *grads)
        finally:
            ctx._node = None           # ... and no node <-> ctx cycle outlives the call
        if not isinstance(outs, tuple):
            outs = (outs,)
        # each gradient brought to its input's shape, dtype and device (_fit); one that has
        # them already (the common case) is taken as it is without a call
        fitted = []
        for g, meta in zip(outs, ctx.input_meta):
            if g is not None and (meta is None or g._shape != meta[0] or g.dtype is not meta[1]
                                  or g._storage.device is not meta[2]):
                g = _fit(g, meta, self, len(fitted))
            fitted.append(g)
        outs = tuple(fitted)
        if _grad_state.enabled:
            outs = self._check_differentiable(grads, outs)
        return outs

    def _check_differentiable(self, grads, outs):
        """create_graph=True: a backward rule is linear in the incoming gradient, so when that
        gradient requires grad, every non-zero result must too. One that does not was computed
        outside the graph (a rule with no double backward): rather than let a second derivative
        silently miss it, differentiating it raises NotImplementedError."""
        from ..tensor import Tensor
        if not any(isinstance(g, Tensor) and g.requires_grad for g in grads):
            return outs
        escaped = [isinstance(o, Tensor) and o.dtype.is_floating_point and not o.requires_grad
                   and o.numel() > 0 and (o != 0).sum().item() > 0 for o in outs]
        if not any(escaped):
            return outs
        wrapped = delay_error(
            outs, f"derivative for {self.op.name}_backward is not implemented: the backward of "
                  f"{self.name()} is not differentiable, so it cannot be differentiated again "
                  "(create_graph=True)", self, grads)
        return tuple(w if e else o for w, o, e in zip(wrapped, outs, escaped))

    def release_saved(self):
        # BackwardContext.release / SavedTensor.release, inlined: after it, unpacking raises
        # "Trying to backward through the graph a second time ..."
        for st in self.ctx._saved.values():
            if st is not None:
                st._tensor = None
                st._packed = None


_OP_NODE_CLASSES: dict = {}      # name -> OpNode subclass: the one lookup on every recorded op


def new_op_node(op, attrs, needs_input_grad, input_meta, name):
    """``OpNode(op, BackwardContext(attrs, needs_input_grad, input_meta), name)`` in one call:
    dispatch.record makes one per recorded op, so the two constructors are inlined here."""
    ctx = object.__new__(BackwardContext)
    d = ctx.__dict__
    d.update(attrs)                      # as BackwardContext.__init__
    if not _CONTEXT_NAMES.isdisjoint(attrs):
        for key in _CONTEXT_NAMES.intersection(attrs):
            del d[key]
    d["attrs"] = attrs
    d["needs_input_grad"] = needs_input_grad
    d["input_meta"] = input_meta
    d["_saved"] = {}
    d["_node"] = None
    cls = _OP_NODE_CLASSES.get(name)     # as OpNode.__new__
    if cls is None:
        cls = _OP_NODE_CLASSES[name] = node_class(name, OpNode)
    self = object.__new__(cls)
    self._sequence_nr = next(_sequence)
    self.next_functions = ()
    self._pre_hooks = {}
    self._retain = {}
    self._anomaly_trace = None
    self.op = op
    self.ctx = ctx
    return self


def _fit(grad, meta, node=None, index=0):
    """Bring a gradient to its input's shape and dtype, as torch's engine does: sum over the
    dimensions the forward broadcast, cast back from a promoted dtype. A gradient that no
    broadcast explains, or one on another device, is an error (torch's validate_outputs)."""
    if grad is None or meta is None:
        return None
    shape, dtype, device = meta
    if tuple(grad.shape) != tuple(shape):
        if not _expandable(shape, grad.shape):
            raise RuntimeError(
                f"Function {node.name() if node is not None else 'backward'} returned an invalid "
                f"gradient at index {index} - got [{', '.join(map(str, grad.shape))}] but expected "
                f"shape compatible with [{', '.join(map(str, shape))}]")
        grad = grad.sum_to_size(shape)
    if grad.device != device:
        raise RuntimeError(
            f"Function {node.name() if node is not None else 'backward'} returned an invalid "
            f"gradient at index {index} - expected device {device} but got {grad.device}")
    if grad.dtype is not dtype:
        grad = grad.to(dtype)
    return grad


def _expandable(shape, target):
    """Whether ``shape`` broadcasts to ``target`` (torch's is_expandable_to)."""
    if len(shape) > len(target):
        return False
    for s, t in zip(reversed(tuple(shape)), reversed(tuple(target))):
        if s != t and s != 1:
            return False
    return True


class BackwardContext:
    """What an op's backward sees: attributes, input metadata, saved tensors, needs_input_grad."""

    def __init__(self, attrs, needs_input_grad, input_meta):
        # attributes are instance attributes too: ctx.alpha is a plain read, not __getattr__
        # (a name that would hide a method or a field below stays in attrs only)
        d = self.__dict__
        d.update(attrs)
        if not _CONTEXT_NAMES.isdisjoint(attrs):
            for name in _CONTEXT_NAMES.intersection(attrs):
                del d[name]
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
        d = self.__dict__
        attrs = d.get("attrs", _EMPTY)
        if name in attrs:
            return attrs[name]
        st = d.get("_saved", _EMPTY).get(name, _MISSING)
        if st is _MISSING:
            raise AttributeError(name)
        if st is None:
            return None
        # SavedTensor.unpack's common case, inlined: a saved input (not an output, no hooks)
        # still at its version, with its history intact; anything else unpacks in full
        t = st._tensor
        if (t is not None and not st._is_output and st._unpack_hook is None
                and t._view_version is None and t._version_counter.value == st._version
                and (st._was_leaf or t._grad_fn is not None)):
            return t
        return st.unpack(d["_node"])


_EMPTY: dict = {}
_MISSING = object()
_CONTEXT_NAMES = frozenset(n for n in vars(BackwardContext) if not n.startswith("__")) | frozenset(
    {"attrs", "needs_input_grad", "input_meta", "_saved", "_node"})


def move_retained_grad(tensor, old, node, output_nr):
    """As torch's update_tensor_hooks_on_new_gradfn: retain_grad() follows the tensor to its new
    node, hooks registered before stay with the old one (they see the old value's gradient)."""
    if tensor._retains_grad and old is not None and old is not node:
        ref = old._retain.pop(tensor._output_nr, None)
        if ref is not None:
            node._retain[output_nr] = ref


def rebase_history(tensor, node, output_nr=0):
    """``tensor`` was modified in place: its history becomes output ``output_nr`` of ``node``."""
    old = tensor.grad_fn
    move_retained_grad(tensor, old, node, output_nr)
    tensor._grad_fn, tensor._output_nr, tensor._requires_grad = node, output_nr, False
    if tensor._base is not None:
        # a view given a history of its own (a custom Function that marks it dirty) keeps it:
        # it is not regenerated from its base for the version bump of this very change
        tensor._view_version = tensor._version_counter.value


class CopySlices(Node):
    """The new history of a base after an in-place op on one of its views (torch's CopySlices).

    ``fn`` is the node of the op as computed out of place on the view; its input ``self_index``
    is the view's old value (None when that input could not be identified: fn then keeps its
    edge to the view's old history, which is also correct, only less direct). The gradient of
    the base is the incoming one with the view's region replaced by fn's gradient for the
    view's old value; fn's other inputs get theirs from fn. Geometries are absolute storage
    positions (shape, strides, offset), so views of views and any base layout work."""

    def __init__(self, base_edge, base_geometry, view_geometry, fn, self_index):
        super().__init__()
        self.base_geometry = base_geometry
        self.view_geometry = view_geometry
        self.fn = fn
        self.self_index = self_index
        # fn's other inputs that take a gradient (scalars and tensors without history have none)
        self._keep = tuple(i for i, (node, _) in enumerate(fn.next_functions)
                           if i != self_index and node is not None)
        self.next_functions = (base_edge,) + tuple(fn.next_functions[i] for i in self._keep)

    def apply(self, grads):
        from ..ops import views as _views
        grad = grads[0] if grads else None
        if grad is None:
            return (None,) * len(self.next_functions)
        grad_slice = _views.restride(grad, self.base_geometry, self.view_geometry)
        res = list(self.fn.apply((grad_slice,)))
        res += [None] * (len(self.fn.next_functions) - len(res))
        result = None
        if self.next_functions[0][0] is not None:
            old = res[self.self_index] if self.self_index is not None else None
            result = _views.as_strided_scatter(grad, 0.0 if old is None else old,
                                               self.base_geometry, self.view_geometry)
        return (result,) + tuple(res[i] for i in self._keep)

    def release_saved(self):
        self.fn.release_saved()


def grad_accumulator(tensor):
    """The leaf's AccumulateGrad, created once and kept alive only by the graphs that use it."""
    acc = tensor._grad_accumulator() if tensor._grad_accumulator is not None else None
    if acc is None:
        acc = AccumulateGrad(tensor)
        tensor._grad_accumulator = weakref.ref(acc)
    return acc


def gradient_edge(tensor):
    """(node, output_nr) through which a gradient reaches ``tensor``; (None, 0) if none does."""
    grad_fn = tensor._grad_fn if tensor._view_version is None else tensor.grad_fn
    if grad_fn is not None:
        return grad_fn, tensor._output_nr
    if tensor._requires_grad:
        return grad_accumulator(tensor), 0
    return None, 0


class GradientEdge(NamedTuple):
    """torch.autograd.graph.GradientEdge: the (node, output_nr) a gradient flows into."""
    node: object
    output_nr: int
    ownership_token: object = None


def get_gradient_edge(tensor):
    """The edge through which a gradient reaches ``tensor`` (torch.autograd.graph.get_gradient_edge)."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require gradients")
    node, nr = gradient_edge(tensor)
    return GradientEdge(node, nr)


def increment_version(tensor):
    """Bump the version counter of ``tensor`` (or of each tensor of an iterable), as an in-place
    change would (torch.autograd.graph.increment_version)."""
    from ..tensor import Tensor
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        t._version_counter.value += 1


def rename_node(tensor, name):
    """Make the OpNode just recorded for ``tensor`` an instance of torch's node class ``name``:
    for a public function that runs another overload's table entry (``clamp_min(x, 0.1)`` runs
    clamp's, torch records ClampMinBackward0). Other nodes are left alone. Returns ``tensor``."""
    node = tensor.grad_fn
    if isinstance(node, OpNode) and type(node).__name__ != name:
        cls = _OP_NODE_CLASSES.get(name)
        if cls is None:
            cls = _OP_NODE_CLASSES[name] = node_class(name, OpNode)
        node.__class__ = cls
    return tensor
