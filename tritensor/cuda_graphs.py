"""Graphed callables: forward and backward passes captured as CUDA graphs (torch.cuda's
make_graphed_callables), and the graph runner of ``tt.compile(mode="reduce-overhead")``.

The graphs themselves (capture, replay, private pools) are runtime/graphs.py. Here:

- ``make_graphed_callables(callables, sample_args)``: torch's algorithm. Warm-up iterations on a
  side stream (every kernel specialisation is launched, so compiled, before any capture), then
  the forward graphs in order and the backward graphs in reverse order, all in one memory pool.
  Each callable becomes an autograd Function whose forward copies new inputs into the static
  inputs and replays the forward graph, and whose backward copies the incoming gradients into
  the static gradient buffers and replays the backward graph.
- ``graphed(fn)``: what ``tt.compile(fn, mode="reduce-overhead")`` calls (helper "jit" owns
  tt.compile and calls ``tritensor.cuda_graphs.graphed``). One graph per input signature
  (shapes, strides, dtypes, devices, requires_grad, grad mode), captured at the third call of a
  signature (two eager warm-up calls first, as torch's cudagraph trees warm up); calls whose
  tensors are not all on a cuda device run eagerly.
"""
from __future__ import annotations

from . import autograd as _autograd
from .autograd.grad_mode import is_grad_enabled, no_grad
from .runtime.graphs import CUDAGraph, graph, graph_pool_handle
from .runtime.streams import Stream, stream, synchronize
from .tensor import Tensor


# --------------------------------------------------------------------------- pytrees (tensors)
def _flatten(obj):
    """Leaves and a spec of nested tuples/lists/dicts (torch.utils._pytree's tree_flatten)."""
    if isinstance(obj, (tuple, list)):
        leaves, specs = [], []
        for item in obj:
            sub, spec = _flatten(item)
            leaves.extend(sub)
            specs.append(spec)
        return leaves, (type(obj), tuple(specs))
    if isinstance(obj, dict):
        leaves, specs = [], []
        for key, item in obj.items():
            sub, spec = _flatten(item)
            leaves.extend(sub)
            specs.append((key, spec))
        return leaves, (dict, tuple(specs))
    return [obj], None


def _unflatten(leaves, spec):
    it = iter(leaves)

    def build(s):
        if s is None:
            return next(it)
        kind, parts = s
        if kind is dict:
            return {key: build(p) for key, p in parts}
        return kind(build(p) for p in parts)
    return build(spec)


# --------------------------------------------------------------------------- make_graphed_callables
def make_graphed_callables(callables, sample_args, num_warmup_iters=3, allow_unused_input=False, pool=None):
    """Graphed versions of ``callables`` (a function or nn.Module, or a tuple of them) for
    ``sample_args`` (a tuple of tensors, or a tuple of such tuples), torch.cuda's contract:
    static input shapes, outputs and gradients that are tensors, no hooks on modules, only
    parameters trainable. A module keeps its object; its ``forward`` replays the graphs while
    its training mode is the one it was graphed in."""
    from .nn.modules.module import Module
    from .amp.autocast_mode import is_autocast_cache_enabled, is_autocast_enabled
    if is_autocast_enabled() and is_autocast_cache_enabled():
        raise RuntimeError("make_graphed_callables does not support the autocast caching. "
                           "Please set `cache_enabled=False`.")
    just_one = not isinstance(callables, tuple)
    if just_one:
        callables = (callables,)
        sample_args = (sample_args,)
    flat_args = []
    for c, args in zip(callables, sample_args):
        if isinstance(c, Module):
            if c._backward_hooks or c._forward_hooks or c._forward_pre_hooks:
                raise AssertionError("Modules must not have hooks registered at the time they are passed. However, "
                                     "registering hooks on modules after passing them through make_graphed_callables "
                                     "is allowed.")
            if not all(b.requires_grad is False for b in c.buffers()):
                raise AssertionError("In any :class:`~torch.nn.Module` passed to :func:`~make_graphed_callables`, "
                                     "only parameters may be trainable. All buffers must have "
                                     "``requires_grad=False``.")
        leaves, _ = _flatten(tuple(args))
        if not all(isinstance(a, Tensor) for a in leaves):
            raise AssertionError("In the beta API, sample_args for each callable must contain only Tensors. "
                                 "Other types are not allowed.")
        flat_args.append(tuple(leaves))
    params = [tuple(c.parameters()) if isinstance(c, (Module, _ModuleCall)) else () for c in callables]
    surfaces = [flat_args[i] + params[i] for i in range(len(callables))]
    mempool = graph_pool_handle() if pool is None else pool

    # Warm-up on a side stream: every kernel specialisation compiles outside the captures.
    synchronize()
    with stream(Stream()):
        for func, args, surface in zip(callables, sample_args, surfaces):
            for _ in range(num_warmup_iters):
                outputs, _ = _flatten(func(*args))
                needing = tuple(o for o in outputs if o.requires_grad)
                if needing:
                    _autograd.grad(needing, tuple(i for i in surface if i.requires_grad),
                                   grad_outputs=tuple(o.new_empty(o.shape) for o in needing),
                                   only_inputs=True, allow_unused=allow_unused_input)
            del outputs
    synchronize()

    fwd_graphs = [CUDAGraph() for _ in callables]
    bwd_graphs = [CUDAGraph() for _ in callables]
    static_outputs, specs = [], []
    for func, args, g in zip(callables, sample_args, fwd_graphs):
        with graph(g, pool=mempool):
            outs = func(*args)
        leaves, spec = _flatten(outs)
        static_outputs.append(tuple(leaves))
        specs.append(spec)

    # backward graphs in reverse order: replays then never corrupt each other's memory
    static_grad_outputs, static_grad_inputs = [], []
    for surface, outs, g in zip(reversed(surfaces), reversed(static_outputs), reversed(bwd_graphs)):
        grad_outs = tuple(o.new_empty(o.shape) if o.requires_grad else None for o in outs)
        needing = tuple(o for o in outs if o.requires_grad)
        grads = None
        if needing:
            with graph(g, pool=mempool):
                grads = _autograd.grad(needing, tuple(i for i in surface if i.requires_grad),
                                       grad_outputs=tuple(x for x in grad_outs if x is not None),
                                       only_inputs=True, allow_unused=allow_unused_input)
        per_input, k = [], 0
        for arg in surface:
            if arg.requires_grad and grads is not None:
                per_input.append(grads[k])
                k += 1
            else:
                per_input.append(None)
        static_grad_outputs.append(grad_outs)
        static_grad_inputs.append(tuple(per_input))
    static_grad_outputs.reverse()
    static_grad_inputs.reverse()

    result = []
    for i, func in enumerate(callables):
        run = _graphed_function(fwd_graphs[i], bwd_graphs[i], params[i], len(flat_args[i]), specs[i],
                                surfaces[i], static_outputs[i], static_grad_outputs[i], static_grad_inputs[i])
        if isinstance(func, Module):
            func.forward = _graphed_forward(func, func.training, run, func.forward)
            result.append(func)
        else:
            result.append(run)
    return result[0] if just_one else tuple(result)


def _graphed_function(fwd_graph, bwd_graph, module_params, n_user_args, spec, surface, static_outputs,
                      static_grad_outputs, static_grad_inputs):
    class Graphed(_autograd.Function):
        @staticmethod
        def forward(ctx, *inputs):
            for i in range(n_user_args):       # only the user's arguments may be new tensors
                if surface[i].data_ptr() != inputs[i].data_ptr():
                    surface[i].copy_(inputs[i])
            fwd_graph.replay()
            return tuple(o.detach() for o in static_outputs)

        @staticmethod
        @_autograd.once_differentiable
        def backward(ctx, *grads):
            for buffer, g in zip(static_grad_outputs, grads):
                if buffer is not None and g is not None and buffer.data_ptr() != g.data_ptr():
                    buffer.copy_(g)
            bwd_graph.replay()
            return tuple(b.detach() if b is not None else None for b in static_grad_inputs)

    def functionalized(*user_args):
        leaves, _ = _flatten(tuple(user_args))
        out = Graphed.apply(*(tuple(leaves) + module_params))
        return _unflatten(out if isinstance(out, tuple) else (out,), spec)

    functionalized.graphs = (fwd_graph, bwd_graph)
    return functionalized


def _graphed_forward(module, training, run, original):
    def forward(*args, **kwargs):
        if module.training == training:
            return run(*args, **kwargs)
        return original(*args, **kwargs)
    return forward


# --------------------------------------------------------------------------- tt.compile(mode="reduce-overhead")
_WARMUP_CALLS = 2


def _signature(leaves):
    key = [is_grad_enabled()]
    for t in leaves:
        if not isinstance(t, Tensor):
            return None
        if t.device.type != "cuda":
            return None
        key.append((t.shape, t.stride(), t.dtype, t.device, t.requires_grad))
    return tuple(key)


class graphed:
    """``fn`` run through CUDA graphs, one per input signature (see the module docstring).

    Without grad (or when no input requires grad), the call is captured whole and replayed
    after copying the arguments into the static inputs; with grad, the forward and backward are
    graphed by ``make_graphed_callables`` (so ``fn`` may be an nn.Module whose parameters train).
    Outputs are fresh tensors (copies of the graph's static outputs), so a later call never
    overwrites a result the caller still holds. ``reasons`` says why a call ran eagerly."""

    def __init__(self, fn):
        self.fn = fn
        self._entries = {}
        self._calls = {}
        self.reasons = []

    def __call__(self, *args):
        leaves, _ = _flatten(tuple(args))
        key = _signature(leaves)
        if key is None:
            self.reasons.append("an argument is not a cuda tensor: ran eagerly")
            return self.fn(*args)
        entry = self._entries.get(key)
        if entry is None:
            n = self._calls.get(key, 0) + 1
            self._calls[key] = n
            if n <= _WARMUP_CALLS:
                return self.fn(*args)
            entry = self._entries[key] = self._capture(args, leaves)
        return entry(args, leaves)

    def _capture(self, args, leaves):
        needs_grad = is_grad_enabled() and (any(t.requires_grad for t in leaves) or self._has_trainable_params())
        if needs_grad:
            from .nn.modules.module import Module
            statics = tuple(t.detach().clone().requires_grad_(t.requires_grad) for t in leaves)
            target = self.fn
            if isinstance(target, Module):
                module = target
                target = _ModuleCall(module)
            run = make_graphed_callables(target, statics)

            def call(args_, leaves_):
                return run(*args_)
            return call
        statics = [t.detach().clone() for t in leaves]
        _, arg_spec = _flatten(tuple(args))
        g = CUDAGraph()
        synchronize()
        with stream(Stream()):
            self.fn(*_unflatten(statics, arg_spec))          # one more warm-up, on the side stream
        synchronize()
        with no_grad() if not is_grad_enabled() else _Nothing():
            with graph(g):
                outs = self.fn(*_unflatten(statics, arg_spec))
        out_leaves, out_spec = _flatten(outs)

        def call(args_, leaves_):
            with no_grad():
                for s, t in zip(statics, leaves_):
                    if s.data_ptr() != t.data_ptr():
                        s.copy_(t)
            g.replay()
            return _unflatten([o.clone() if isinstance(o, Tensor) else o for o in out_leaves], out_spec)
        call.graph = g
        return call

    def _has_trainable_params(self):
        params = getattr(self.fn, "parameters", None)
        return callable(params) and any(p.requires_grad for p in params())


class _ModuleCall:
    """A module's call as a plain function with the module's parameters as graph inputs (so
    make_graphed_callables leaves the module's own forward alone)."""

    def __init__(self, module):
        self.module = module

    def parameters(self):
        return self.module.parameters()

    def __call__(self, *args):
        return self.module(*args)


class _Nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False
