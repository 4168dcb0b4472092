"""tt.autograd.Function: user-defined forward/backward pairs recorded as one graph node."""
from __future__ import annotations

import functools

from .. import _dual
from . import forward_ad as _forward_ad
from .grad_mode import is_grad_enabled, no_grad
from .graph import Node, SavedTensor, _fit, delay_error, gradient_edge, rebase_history


class FunctionCtx:
    def __init__(self):
        self.needs_input_grad = ()
        self._to_save = ()
        self._saved = None
        self._dirty = ()
        self._non_differentiable = ()
        self.materialize_grads = True
        self._node = None

    def save_for_forward(self, *tensors):
        """Tensors the ``jvp`` reads back as ``ctx.saved_tensors`` (torch's save_for_forward)."""
        self._fw_to_save = tensors

    def save_for_backward(self, *tensors):
        from ..tensor import Tensor
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_backward can only save variables, but argument {i} is of type "
                    f"{type(t).__name__}")
        self._to_save = tensors

    @property
    def saved_tensors(self):
        if self.__dict__.get("_in_jvp"):
            return self.__dict__.get("_fw_to_save", self._to_save)
        if self._saved is None:
            return self._to_save  # inside forward, or a Function that was never recorded
        return tuple(None if s is None else s.unpack(self._node) for s in self._saved)

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool):
        self.materialize_grads = value


class BackwardFunction(Node):
    """The node of one Function.apply: an instance of ``<Function>Backward`` (``MyFnBackward``),
    a subclass made once per Function class and kept as its ``_backward_cls``, as torch's."""

    def __new__(cls, fn_cls=None, *args):
        if cls is BackwardFunction:
            cls = fn_cls.__dict__.get("_backward_cls")
            if cls is None:
                cls = type(f"{fn_cls.__name__}Backward", (BackwardFunction,),
                           {"__module__": BackwardFunction.__module__, "_forward_cls": fn_cls})
                fn_cls._backward_cls = cls
        return object.__new__(cls)

    def __init__(self, cls, ctx, input_meta, output_meta):
        super().__init__()
        self._cls, self.ctx, self._input_meta, self._output_meta = cls, ctx, input_meta, output_meta

    def _num_outputs(self):
        return len(self._output_meta)

    def apply(self, grads):
        from ..ops import creation
        grads = list(grads) + [None] * (len(self._output_meta) - len(grads))
        if self.ctx.materialize_grads:
            grads = [creation.zeros(m[0], dtype=m[1], device=m[2]) if g is None and m is not None else g
                     for g, m in zip(grads, self._output_meta)]
        self.ctx._node = self
        try:
            result = self._cls.backward(self.ctx, *grads)
        finally:
            self.ctx._node = None   # no node <-> ctx cycle outlives the call
        if not isinstance(result, tuple):
            result = (result,)
        n = len(self._input_meta)
        if len(result) != n:
            if len(result) > n and all(r is None for r in result[n:]):
                result = result[:n]
            else:
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of gradients "
                    f"(expected {n}, got {len(result)})")
        return tuple(_fit(g, m, self, i) for i, (g, m) in enumerate(zip(result, self._input_meta)))

    def release_saved(self):
        if self.ctx._saved is not None:
            for s in self.ctx._saved:
                if s is not None:
                    s.release()


class Function:
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``, then call
    ``apply``. (The newer form, ``forward(*args)`` plus ``setup_context(ctx, inputs, output)``,
    works too.)"""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """The forward-mode rule (tt.autograd.forward_ad): one tangent per output from one per
        input (None for an input without one)."""
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        from ..tensor import Tensor
        ctx = FunctionCtx()
        grad_on = is_grad_enabled()
        ctx.needs_input_grad = tuple(grad_on and isinstance(a, Tensor) and a.requires_grad for a in args)
        separate_setup = cls.setup_context is not Function.setup_context
        dual = _dual.ACTIVE[0] and _forward_ad.has_tangents(args)
        with no_grad(), _forward_ad.suspended_if(dual):     # (the forward's own ops make no tangents)
            raw = cls.forward(*args, **kwargs) if separate_setup else cls.forward(ctx, *args, **kwargs)
        if separate_setup:
            cls.setup_context(ctx, args, raw)
        is_tuple = isinstance(raw, tuple)
        outputs = raw if is_tuple else (raw,)
        tangents = _forward_ad.function_jvp(cls, ctx, args, outputs) if dual else None
        result = cls._record(ctx, args, raw, is_tuple, outputs)
        if tangents is not None:
            _forward_ad.set_output_tangents(result if is_tuple else (result,), tangents, ctx._dirty)
        return result

    @classmethod
    def _record(cls, ctx, args, raw, is_tuple, outputs):
        from ..tensor import Tensor
        out_ids = {id(o) for o in outputs if isinstance(o, Tensor)}
        if any(id(t) not in out_ids for t in ctx._dirty):
            raise RuntimeError(
                "Some elements marked as dirty during the forward method were not returned as "
                "output. The inputs that are modified inplace must all be outputs of the Function.")
        if not any(ctx.needs_input_grad):
            return raw

        input_meta = tuple((a.shape, a.dtype, a.device) if isinstance(a, Tensor) else None for a in args)
        output_meta = tuple((o.shape, o.dtype, o.device) if isinstance(o, Tensor) else None for o in outputs)
        node = BackwardFunction(cls, ctx, input_meta, output_meta)
        node.next_functions = tuple(gradient_edge(a) if isinstance(a, Tensor) else (None, 0) for a in args)
        from .anomaly import record_trace
        record_trace(node)

        dirty = {id(t) for t in ctx._dirty}
        non_diff = {id(t) for t in ctx._non_differentiable}
        inputs = {id(a) for a in args if isinstance(a, Tensor)}
        wrapped = []
        for i, o in enumerate(outputs):
            if not isinstance(o, Tensor):
                wrapped.append(o)
                continue
            marked_non_diff = id(o) in non_diff   # before detach() below gives o a new identity
            if id(o) in dirty:
                if o.is_leaf and o._requires_grad:
                    raise RuntimeError(
                        "a leaf Variable that requires grad has been used in an in-place operation.")
            elif id(o) in inputs:
                o = o.detach()   # an input returned as is becomes a new output alias
            if not marked_non_diff and o.dtype.is_floating_point:
                rebase_history(o, node, i)
            elif id(o) in dirty:
                o.detach_()      # a modified input that is not differentiable loses its history
            wrapped.append(o)
        outputs_ids = {id(o) for o in wrapped if isinstance(o, Tensor)}
        ctx._saved = tuple(None if t is None else SavedTensor(t, is_output=id(t) in outputs_ids)
                           for t in ctx._to_save)
        ctx._to_save = ()   # the raw references would make output -> node -> ctx -> output a cycle
        return tuple(wrapped) if is_tuple else wrapped[0]


def once_differentiable(backward):
    """Run a backward without recording it: it has no double backward. Under create_graph=True
    its results still require grad, through a DelayedError node that raises NotImplementedError
    (a RuntimeError) if they are differentiated. Works for a Function's ``backward(ctx, *grads)``
    and for an op table entry's backward rule alike.

    torch wraps the results only when an incoming gradient requires grad; here a saved tensor
    that requires grad counts too, so that the second derivative through it is an error rather
    than silently missing."""
    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        with no_grad():
            outputs = backward(ctx, *grads)
        if not is_grad_enabled():
            return outputs
        from ..tensor import Tensor
        if not (any(isinstance(g, Tensor) and g.requires_grad for g in grads)
                or _saved_require_grad(ctx)):
            return outputs
        return delay_error(outputs, "trying to differentiate twice a function that was marked "
                                    "with @once_differentiable", getattr(ctx, "_node", None), grads)
    return wrapper


def _saved_require_grad(ctx):
    saved = ctx.__dict__.get("_saved")
    values = saved.values() if isinstance(saved, dict) else (saved or ())
    return any(s is not None and s.requires_grad for s in values)
