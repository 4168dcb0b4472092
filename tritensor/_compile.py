"""tt.compile: torch.compile's spelling of tt.jit's capture (issue 26 item 1).

A compiled callable captures its function by tracing (tritensor/jit/_trace.py), once per input
signature, and replays the graph on later calls with the same signature. The signature (the
guards) is: each tensor argument's dtype, shape, device and requires_grad; every other
argument's value; grad mode; whether autocast is active; a module's training flag.

Shapes: ``dynamic=False`` guards every size (one graph per shape). ``dynamic=True`` captures
with symbolic sizes (tritensor/jit/_symbolic.py): ``x.size(0)``, ``x.shape[1]``, ``x.numel()``
and the arithmetic on them are recorded as graph ops, so one graph serves every size; its key is
the symbolic signature (each tensor's dtype, rank, which sizes are 0 or 1 (specialised, as
torch's), contiguity, device, requires_grad), and the guards the trace made (a size compared or
read as a plain value) are checked against the arguments' sizes before it runs.
``dynamic=None`` (torch's automatic_dynamic_shapes): static at first; a second shape of the same
symbolic signature recompiles as dynamic. A capture whose intermediate sizes decide something
stays static (explain() says why).

``mode="reduce-overhead"``: calls whose tensors are all on a cuda device also run through CUDA
graphs (tritensor/cuda_graphs.py's ``graphed``: two warm-up calls per signature, then one graph
replayed), the captured graph inside them.

What the trace cannot capture runs eagerly instead, and says why: a tensor read as a Python value
(data-dependent control flow, ``.item()``), outputs that are not tensors, keyword arguments,
in-place changes the trace could not see, a nested capture, or more than
``RECOMPILE_LIMIT`` signatures of one function (torch's cache_size_limit, 8). The reason is
``compiled.fallback_reason`` (the latest call's, None when it ran a graph) and every reason
seen is in ``compiled.explain()``. ``fullgraph=True`` raises instead of falling back, as torch's.
"""
from __future__ import annotations

import functools
import warnings

from . import _autocast, _tracing
from .autograd.grad_mode import is_grad_enabled
from .tensor import Tensor

RECOMPILE_LIMIT = 8
MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")    # torch 2.13's
BACKENDS = ("inductor", "eager", "aot_eager")


class Unsupported(RuntimeError):
    """torch._dynamo.exc.Unsupported: with fullgraph=True, something the capture cannot handle."""


class _Fallback(Exception):
    def __init__(self, reason, result=None, has_result=False):
        super().__init__(reason)
        self.reason, self.result, self.has_result = reason, result, has_result


class CompiledFunction:
    """What tt.compile returns for a function: call it like the function."""

    def __init__(self, fn, fullgraph, dynamic, mode, module=None):
        self._fn = fn
        self._module = module
        self.fullgraph, self.dynamic, self.mode = fullgraph, dynamic, mode
        self._graphs = {}            # guard key -> ScriptFunction / ScriptModule
        self._dynamic = {}           # symbolic key -> [(ScriptFunction / ScriptModule, guards, inputs)]
        self._static_shapes = set()  # the symbolic keys of the static graphs (dynamic=None's second shape)
        self._eager_keys = {}        # guard key -> the reason it runs eagerly
        self.fallback_reason = None
        self._reasons = []
        self._calls = {"graph": 0, "eager": 0}
        functools.update_wrapper(self, fn)

    def explain(self):
        """What the compiler did so far (torch._dynamo.explain's counts): graphs captured,
        calls run as a graph and eagerly, and every reason for running eagerly."""
        dynamic = sum(len(v) for v in self._dynamic.values())
        return {"graph_count": len(self._graphs) + dynamic, "dynamic_graph_count": dynamic,
                "graph_calls": self._calls["graph"], "eager_calls": self._calls["eager"],
                "fallback_reasons": list(self._reasons)}

    def _key(self, args, symbolic=False):
        key = [is_grad_enabled(), _autocast.ACTIVE[0] > 0, symbolic]
        if self._module is not None:
            key.append(self._module.training)
        for a in args:
            if isinstance(a, Tensor):
                if symbolic:         # sizes 0 and 1 specialised (broadcasting, empty tensors), as torch's
                    shape = (tuple(min(n, 2) for n in a._shape), a.is_contiguous())
                else:
                    shape = tuple(a._shape)
                key.append((a.dtype, shape, str(a.device), a.requires_grad))
            else:
                try:
                    hash(a)
                except TypeError:
                    return None
                key.append((type(a), a))
        return tuple(key)

    def _eager(self, args, kwargs, reason, key=None):
        if self.fullgraph:
            raise Unsupported(f"tt.compile(fullgraph=True) cannot capture {self._name()}: {reason}")
        if reason not in self._reasons:
            self._reasons.append(reason)
        if key is not None:
            self._eager_keys[key] = reason
        self.fallback_reason = reason
        self._calls["eager"] += 1
        return self._fn(*args, **kwargs)

    def _name(self):
        return getattr(self._fn, "__qualname__", getattr(self._fn, "__name__", repr(self._fn)))

    def __call__(self, *args, **kwargs):
        if self.mode == "reduce-overhead" and not kwargs and _tracing.state.tracer is None and args and \
                all(a.device.type == "cuda" for a in args if isinstance(a, Tensor)):
            graphed = self.__dict__.get("_graphed")
            if graphed is None:       # CUDA graphs of the captured graph (tritensor/cuda_graphs.py)
                from .cuda_graphs import graphed as _graphed
                graphed = self._graphed = _graphed(_captured_call(self))
            return graphed(*args)
        return self._call(*args, **kwargs)

    def _call(self, *args, **kwargs):
        if kwargs:
            return self._eager(args, kwargs, "keyword arguments are not captured (pass tensors positionally)")
        if _tracing.state.tracer is not None:
            return self._eager(args, kwargs, "called inside another capture: runs as part of it")
        key = self._key(args)
        if key is None:
            return self._eager(args, kwargs, "an argument is neither a tensor nor a hashable constant")
        compiled = self._graphs.get(key)
        if compiled is not None:
            self.fallback_reason = None
            self._calls["graph"] += 1
            return compiled(*[a for a in args if isinstance(a, Tensor)])
        if key in self._eager_keys:
            return self._eager(args, kwargs, self._eager_keys[key])
        skey = self._key(args, symbolic=True) if self.dynamic is not False else None
        if skey is not None:
            for entry, guards, inputs in self._dynamic.get(skey, ()):
                if _guards_hold(guards, inputs, [a for a in args if isinstance(a, Tensor)]):
                    self.fallback_reason = None
                    self._calls["graph"] += 1
                    return entry(*[a for a in args if isinstance(a, Tensor)])
        entries = len(self._graphs) + len(self._eager_keys) + sum(len(v) for v in self._dynamic.values())
        if entries >= RECOMPILE_LIMIT:
            return self._eager(args, kwargs, f"cache_size_limit reached: {self._name()} was recompiled "
                               f"{RECOMPILE_LIMIT} times; it runs eagerly from now on")
        symbolic = skey is not None and (self.dynamic is True or skey in self._static_shapes)
        try:
            compiled, result, tracer = self._capture(args, symbolic)
        except _Fallback as e:
            if self.fullgraph:
                raise Unsupported(f"tt.compile(fullgraph=True) cannot capture {self._name()}: {e.reason}") from None
            self._eager_keys[key] = e.reason
            if e.reason not in self._reasons:
                self._reasons.append(e.reason)
            self.fallback_reason = e.reason
            self._calls["eager"] += 1
            if e.has_result:            # the capture ran the function eagerly already: its result
                return e.result
            return self._fn(*args)
        if symbolic and tracer.static_reason is None:
            compiled.graph.dynamic = True       # the fuser keys its groups' plans symbolically
            self._dynamic.setdefault(skey, []).append((compiled, tracer.guards, compiled.graph.inputs))
        else:
            if symbolic:
                reason = "dynamic shapes: the graph is specialised to these sizes: " + tracer.static_reason
                if reason not in self._reasons:
                    self._reasons.append(reason)
            self._graphs[key] = compiled
            if skey is not None:
                self._static_shapes.add(skey)
        self.fallback_reason = None
        self._calls["graph"] += 1
        return result

    def _capture(self, args, symbolic=False):
        from .jit import ScriptFunction, _script_module_class
        from .jit._trace import Tracer, trace_graph
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in positions]

        def run(*ts):                   # non-tensor arguments are constants of this signature
            full = list(args)
            for i, t in zip(positions, ts):
                full[i] = t
            return self._fn(*full)
        watched = list(tensors)
        attributes = ()
        if self._module is not None:
            attributes = list(self._module.named_parameters(remove_duplicate=False)) + \
                list(self._module.named_buffers(remove_duplicate=False))
            watched += [t for _, t in attributes]
        versions = [t._version_counter.value for t in watched]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", _tracing.TracerWarning)
            try:
                tracer = Tracer(symbolic=symbolic)
                graph, result = trace_graph(run, tensors, [f"arg{i}" for i in positions], attributes, tracer)
            except RuntimeError as e:
                if "can be output from traced functions" in str(e):
                    warned = [str(w.message) for w in caught if issubclass(w.category, _tracing.TracerWarning)]
                    if warned:
                        raise _Fallback("the trace warned (a graph would bake in this call's values): " + warned[0]) \
                            from None
                    raise _Fallback("outputs that are not tensors (or tuples/lists of tensors) are not "
                                    "captured") from None
                raise
        for w in caught:
            if not issubclass(w.category, _tracing.TracerWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        tracer_warnings = [str(w.message) for w in caught if issubclass(w.category, _tracing.TracerWarning)]
        if tracer_warnings:
            raise _Fallback("the trace warned (a graph would bake in this call's values): " + tracer_warnings[0],
                            result, True)
        changed = any(t._version_counter.value != v for t, v in zip(watched, versions))
        if changed and not any(n.attrs.get("call") == "inplace" for n in graph.all_nodes()):
            raise _Fallback("an in-place change to an input the trace could not record", result, True)
        if self._module is not None:
            compiled = _script_module_class()._from_module(self._module, graph, type(self._module).__name__)
        else:
            compiled = ScriptFunction(graph, getattr(self._fn, "__name__", "forward"))
        return compiled, result, tracer

    @property
    def graphs(self):
        """The captured graphs, one per signature (their .graph, .code): the static ones, then
        the dynamic ones."""
        return list(self._graphs.values()) + [e[0] for v in self._dynamic.values() for e in v]


def _guards_hold(guards, inputs, tensors):
    """Whether the arguments' sizes give every guarded size expression the trace's value."""
    if not guards:
        return True
    from .jit._symbolic import evaluate
    sizes = {id(v): t._shape for v, t in zip(inputs, tensors)}
    return all(evaluate(expr, sizes) == value for expr, value in guards)


def _captured_call(compiled):
    """The compiled call as cuda_graphs.graphed sees it: for a module, a _ModuleCall (its
    parameters are graph inputs, so a training step's backward is graphed too)."""
    if compiled._module is None:
        return lambda *args: compiled._call(*args)
    from .cuda_graphs import _ModuleCall

    class CapturedModuleCall(_ModuleCall):
        def __call__(self, *args):
            return compiled._call(*args)
    return CapturedModuleCall(compiled._module)


def _optimized_module_class():
    from .nn.modules.module import Module

    class OptimizedModule(Module):
        """torch._dynamo's OptimizedModule: the original module (``_orig_mod``) with a compiled
        forward."""

        def __init__(self, mod, compiled):
            super().__init__()
            self._orig_mod = mod
            object.__setattr__(self, "_compiled", compiled)

        def forward(self, *args, **kwargs):
            return self._compiled(*args, **kwargs)

        @property
        def fallback_reason(self):
            return self._compiled.fallback_reason

        def explain(self):
            return self._compiled.explain()

    return OptimizedModule


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False):
    """torch.compile: ``model`` (a function or a module) captured as graphs, one per input
    signature; see this module's docstring for the guards and the eager fallback."""
    if mode is not None and mode not in MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(MODES)}")
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if callable(backend) and not isinstance(backend, str):
        raise NotImplementedError("tt.compile: custom backend callables are not supported; use 'inductor' or 'eager'")
    if backend not in BACKENDS:
        raise RuntimeError(f"invalid backend {backend!r}: tt.compile knows {', '.join(BACKENDS)}")
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    if disable:
        return model
    from .nn.modules.module import Module
    if isinstance(model, Module):
        compiled = CompiledFunction(model, fullgraph, dynamic, mode, module=model)
        return _optimized_module_class()(model, compiled)
    if not callable(model):
        raise RuntimeError("torch.compile expects a callable or a nn.Module")
    return CompiledFunction(model, fullgraph, dynamic, mode)
