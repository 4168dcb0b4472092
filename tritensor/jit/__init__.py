"""tt.jit: capture a function's ops as a graph (torch.jit's namesake, issue 26).

``trace(fn_or_module, example_inputs)`` runs once and records the primitives dispatch() runs
(tritensor/jit/_trace.py); the result is a ScriptFunction (or a ScriptModule for a module) with
torch's surface: calling it runs the graph (an interpreter over tritensor ops: autograd works
through it), ``.graph`` lists it in TorchScript's SSA form, ``.code`` writes it back as Python,
``graph_for(*inputs)`` shows the graph chosen for those inputs (the fusion groups, once the fuser
groups them), ``save(path)`` / ``tt.jit.load(path)`` keep it in a file with no pickled code
(_serialization.py). The IR itself (Graph, Node, Value) is in _ir.py.
"""
from __future__ import annotations

import inspect

from .. import _tracing
from ..tensor import Tensor
from ._codegen import graph_code
from ._interp import run_graph
from ._ir import Block, Graph, Node, Type, Value  # noqa: F401  (the IR, for the fuser)
from ._trace import trace_graph

TracerWarning = _tracing.TracerWarning

__all__ = ["trace", "load", "save", "ScriptFunction", "ScriptModule", "TracerWarning", "ignore", "unused",
           "is_scripting", "is_tracing", "annotate", "Graph"]

# graph_for's hook: fn(graph, inputs) -> the graph with its fusion groups (the fuser installs one)
GRAPH_FOR_HOOKS = []


class _Callable:
    def _graph_for(self, inputs):
        g = self.graph
        for hook in GRAPH_FOR_HOOKS:
            g = hook(g, inputs)
        return g

    _scripted = False          # a scripted graph is profiled, then fused (_profile.py)

    def _sync_training(self):
        """(a scripted module: its graph for the current training flags, _script_module_class)"""

    def graph_for(self, *inputs, **kwargs):
        """The graph that runs for ``inputs`` (torch's graph_for: its fusion groups shown; a
        scripted function runs once for them first, as torch's profiling executor)."""
        self._sync_training()
        if self._scripted:
            from ._profile import graph_for
            return graph_for(self, self.graph, inputs, self._attributes())
        return self._graph_for(inputs)

    def _attributes(self):
        return None

    def _run(self, args):
        self._sync_training()
        if self._scripted:
            from ._profile import call
            return call(self, self.graph, args, self._attributes())
        return run_graph(self._graph_for(args), args, self._attributes())

    @property
    def code(self):
        self._sync_training()
        if isinstance(self, _script_module_class()):
            return graph_code(self.graph, "forward", True)
        return graph_code(self.graph, self.name)

    @property
    def inlined_graph(self):
        return self.graph

    def save(self, f, **kwargs):
        from ._serialization import save as _save
        _save(self, f)


class ScriptFunction(_Callable):
    """A traced or scripted function (torch.jit.ScriptFunction)."""

    def __init__(self, graph, name):
        self.graph = graph
        self.name = name
        self.__name__ = name

    def __call__(self, *args, **kwargs):
        if kwargs:
            raise RuntimeError(f"{self.name}() takes no keyword arguments in its compiled form")
        _check_arity(self.graph, args, self.name)
        out = self._run(args)
        return out[0] if len(out) == 1 else out

    def __repr__(self):
        return f"<tritensor.jit.ScriptFunction object {self.name}>"


def _check_arity(graph, args, name):
    n = len(graph.inputs)
    if len(args) == n:            # the common case: no declaration text built, no call per tensor
        for v, a in zip(graph.inputs, args):
            if not (isinstance(a, Tensor) if v.type.kind == "Tensor" else _matches(v.type, a)):
                break
        else:
            return
    decl = f"{name}({', '.join(f'{_decl_type(v.type)} {v.name}' for v in graph.inputs)})"
    if len(args) != n:
        raise RuntimeError(f"{name}() expected at most {n} argument(s) but received {len(args)} argument(s). "
                           f"Declaration: {decl}")
    for i, (v, a) in enumerate(zip(graph.inputs, args)):
        if not _matches(v.type, a):
            found = "Tensor" if isinstance(a, Tensor) else type(a).__name__
            raise RuntimeError(f"{name}() Expected a value of type '{_decl_type(v.type)}' for argument '{v.name}' "
                               f"but instead found type '{found}'.\nPosition: {i}\nValue: {a!r}\nDeclaration: {decl}")


def _decl_type(t):
    if t.kind == "Tuple":
        return "(" + ", ".join(_decl_type(e) for e in t.elements) + ")"
    return t.kind


def _matches(t, a):
    """torch's argument check: a value of the declared type (an int where a float is declared)."""
    kind = t.kind
    if kind == "Tensor":
        return isinstance(a, Tensor)
    if kind == "int":
        return isinstance(a, int) and not isinstance(a, bool)
    if kind == "float":
        return isinstance(a, (int, float)) and not isinstance(a, bool)
    if kind == "bool":
        return isinstance(a, bool)
    if kind == "str":
        return isinstance(a, str)
    if kind == "Tuple":
        return isinstance(a, tuple) and len(a) == len(t.elements) and all(map(_matches, t.elements, a))
    return True


def _nn_module():
    from ..nn.modules.module import Module
    return Module


def _make_script_module_class():
    Module = _nn_module()

    class ScriptModule(_Callable, Module):
        """A traced or scripted module (torch.jit.ScriptModule): its parameters and buffers are
        the module's own (a traced module trains the original's), its forward the graph."""

        def __init__(self):
            Module.__init__(self)

        @classmethod
        def _from_module(cls, module, graph, name):
            self = cls()
            self.graph = graph
            self.name = name
            for child_name, child in module.named_children():
                self.add_module(child_name, child)
            for pname, p in module.named_parameters(recurse=False):
                self.register_parameter(pname, p)
            for bname, b in module.named_buffers(recurse=False):
                self.register_buffer(bname, b)
            self.training = module.training
            return self

        @classmethod
        def _from_attributes(cls, graph, name, named, params):
            from ..nn.parameter import Parameter
            self = cls()
            self.graph = graph
            self.name = name
            for full, t in named.items():
                owner = self
                *path, leaf = full.split(".")
                for part in path:
                    child = owner._modules.get(part)
                    if child is None:
                        child = Module()
                        owner.add_module(part, child)
                    owner = child
                if full in params:
                    owner.register_parameter(leaf, Parameter(t))
                else:
                    owner.register_buffer(leaf, t)
            return self

        def _attributes(self):
            return self._graph_attributes()

        def _sync_training(self):
            """A scripted module's graph folds each module's ``training`` flag as a constant (its
            train/eval branches compiled as the one taken); after train()/eval() the graph for the
            new flags is compiled (once per combination), so dropout and batch norm follow the mode
            as torch's scripted modules (which read prim::GetAttr[name="training"]) do."""
            source = self.__dict__.get("_script_source")
            if source is None:
                return
            key = tuple(m.training for m in self.modules())
            graphs = self.__dict__.setdefault("_graphs_by_training", {})
            graph = graphs.get(key)
            if graph is None:
                from ._script import Compiler
                was = source.training
                source.training = self.training
                try:
                    graph = graphs[key] = Compiler().function(type(source).forward, module=source)
                finally:
                    source.training = was
            self.graph = graph

        def _graph_attributes(self):
            tensors = dict(self.named_parameters(remove_duplicate=False))
            tensors.update(self.named_buffers(remove_duplicate=False))
            return {n.attrs["name"]: tensors[n.attrs["name"]]
                    for n in self.graph.all_nodes() if n.kind == "prim::GetAttr"}

        def forward(self, *args):
            _check_arity(self.graph, args, "forward")
            out = self._run(args)
            return out[0] if len(out) == 1 else out

        def __repr__(self):
            return f"RecursiveScriptModule(original_name={self.name})"

    return ScriptModule


class _Lazy:
    cls = None


def __getattr__(name):
    if name == "ScriptModule":
        if _Lazy.cls is None:
            _Lazy.cls = _make_script_module_class()
        return _Lazy.cls
    raise AttributeError(f"module 'tritensor.jit' has no attribute {name!r}")


def _script_module_class():
    return __getattr__("ScriptModule")


def _input_names(fn, n):
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    params = params[:n]
    return params + [f"input_{i}" for i in range(len(params), n)]


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None, example_kwarg_inputs=None,
          _store_inputs=True):
    """torch.jit.trace: run ``func(*example_inputs)`` once and record the ops it runs.

    Control flow that depends on tensor values is not recorded: the branch taken is baked in
    (a tensor read as a Python value warns with TracerWarning, as torch's)."""
    if example_kwarg_inputs is not None:
        raise NotImplementedError("tt.jit.trace: example_kwarg_inputs is not supported; pass example_inputs")
    inputs = example_inputs
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    elif isinstance(inputs, list):
        inputs = tuple(inputs)
    elif not isinstance(inputs, tuple):
        raise RuntimeError("example_inputs must be a Tensor or a tuple of Tensors")
    if isinstance(func, _Callable):
        return func
    Module = _nn_module()
    if isinstance(func, Module):
        fn = func.forward
        attributes = list(func.named_parameters(remove_duplicate=False)) + \
            list(func.named_buffers(remove_duplicate=False))
        graph, _ = trace_graph(func, inputs, _input_names(fn, len(inputs)), attributes, _sizes_tracer())
        return _script_module_class()._from_module(func, graph, type(func).__name__)
    if not callable(func):
        raise RuntimeError(f"tt.jit.trace expects a function or a module, not {type(func).__name__}")
    graph, _ = trace_graph(func, inputs, _input_names(func, len(inputs)), (), _sizes_tracer())
    return ScriptFunction(graph, getattr(func, "__name__", "forward"))


def _sizes_tracer():
    """torch's trace records the sizes it reads (``x.size(0)`` is aten::size, so a traced view
    follows the batch size) and warns where a size becomes a Python number: a symbolic tracer
    that warns instead of guarding."""
    from ._trace import Tracer
    return Tracer(symbolic=True, guarding=False)


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """torch.jit.script: compile ``obj`` (a function, or a module's forward) from its Python
    source (tritensor/jit/_script.py's subset); control flow that depends on data stays control
    flow. Anything outside the subset raises an error naming the line."""
    from ._script import Compiler
    if isinstance(obj, _Callable):
        return obj
    Module = _nn_module()
    if isinstance(obj, Module):
        graph = Compiler().function(type(obj).forward, module=obj)
        m = _script_module_class()._from_module(obj, graph, type(obj).__name__)
        object.__setattr__(m, "_scripted", True)
        m.__dict__["_script_source"] = obj
        m.__dict__["_graphs_by_training"] = {tuple(x.training for x in m.modules()): graph}
        return m
    if inspect.isfunction(obj) or inspect.ismethod(obj):
        f = ScriptFunction(Compiler().function(obj), obj.__name__)
        f._scripted = True
        return f
    raise RuntimeError(f"tt.jit.script expects a function or a module, not {type(obj).__name__}")


from . import _fusion  # noqa: E402  (the fuser: graph_for's groups, and how calls run them)

_fusion._install()


def trace_module(mod, inputs, **kwargs):
    """torch.jit.trace_module with one method ("forward")."""
    if set(inputs) != {"forward"}:
        raise NotImplementedError("tt.jit.trace_module traces forward only")
    return trace(mod, inputs["forward"], **kwargs)


def load(f, map_location=None, _extra_files=None):
    """torch.jit.load: a ScriptFunction / ScriptModule saved by ``save`` (a zip of JSON and raw
    tensor bytes; anything else, a pickle above all, is refused)."""
    from ._serialization import load as _load
    return _load(f, map_location)


def save(m, f, _extra_files=None):
    """torch.jit.save."""
    m.save(f)


def is_tracing():
    return _tracing.state.tracer is not None


def is_scripting():
    """False when run by Python (as torch's; a scripted function never calls it at run time)."""
    return False


def annotate(the_type, the_value):
    """torch.jit.annotate: the value itself (the type is for script's compiler)."""
    return the_value


def ignore(drop=False, **kwargs):
    """torch.jit.ignore: leave a function to Python (script calls it as it is)."""
    if callable(drop):
        drop._tt_jit_ignore = True
        return drop

    def deco(fn):
        fn._tt_jit_ignore = True
        return fn
    return deco


def unused(fn):
    """torch.jit.unused: script replaces calls to ``fn`` by a raise."""
    fn._tt_jit_unused = True
    return fn
