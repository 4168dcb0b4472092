"""Tracing: the ops one call runs, recorded as a Graph (torch.jit.trace).

While a trace runs (tritensor/_tracing.py's switch), dispatch() hands every primitive it runs to
``Tracer.record``; a composite function (built from other ops) is therefore recorded as the
primitives it runs. A tensor the trace has not seen (a closure's, one made by a factory) becomes
a constant of the graph; a module's parameters and buffers become ``prim::GetAttr`` values, so
the traced module keeps using (and training) the module's own tensors. A tensor read as a Python
value (``bool(t)``, ``t.item()`` ...) is baked in as a constant, with torch's TracerWarning.
Sizes read from the graph's tensors are recorded (``aten::size``, _symbolic.py), as torch's are;
random functions are recorded as calls (tritensor/_tracing.py's random_op).
"""
from __future__ import annotations

import os
import sys
import warnings

from .. import _tracing
from ..tensor import Tensor
from ._ir import Graph, Node, Type

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_source():
    """``file:line:0`` of the innermost frame outside tritensor (the user's line, as torch's)."""
    f = sys._getframe(2)
    while f is not None:
        path = os.path.abspath(f.f_code.co_filename)
        # (tritensor's generated wrappers, exec'd without a module name, are not the user's)
        if not path.startswith(_PACKAGE_DIR + os.sep) and "__name__" in f.f_globals:
            return f"{f.f_code.co_filename}:{f.f_lineno}:0"
        f = f.f_back
    return None


class Tracer:
    """``symbolic``: sizes read from the graph's tensors are symbolic (_symbolic.py), recorded as
    size expressions; ``guards`` the (expression, value) pairs the graph relies on;
    ``static_reason`` why the graph cannot serve other sizes (None when it can)."""

    def __init__(self, symbolic=False, guarding=True):
        self.graph = Graph()
        self.env = {}           # id(tensor) -> Value
        self.keep = []          # the tensors of env (their ids stay unique while the trace runs)
        self.versions = {}      # id(tensor) -> (its version counter, the version the graph knows)
        self.unrecorded = False
        self.symbolic = symbolic
        self.guarding = guarding     # False (tt.jit.trace): a size read as a plain value warns, as torch's
        self.guards = []
        self.static_reason = None
        self._sym_values = {}   # expression -> the Value computing it
        self.size_values = set()  # (symbolic) products of the inputs' sizes: see check_baked

    def before_call(self, args):
        """Before a recorded call that may write its operands: their unrecorded changes so far."""
        for a in args:
            if isinstance(a, Tensor) and id(a) in self.env:
                self.check_version(a)

    def computes(self, t):
        """Whether ``t`` is a value the graph computes (an input or an op's result; not a
        constant or a module's tensor)."""
        v = self.env.get(id(t)) if isinstance(t, Tensor) else None
        return v is not None and (v.node is None or v.node.kind not in ("prim::Constant", "prim::GetAttr"))

    def add_guard(self, expr, value, what="integer"):
        if not self.guarding:        # torch's trace: the value is a constant from now on (an index: silently)
            if what != "index":
                f, level = sys._getframe(0), 2          # (the warning points at the user's line)
                while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_PACKAGE_DIR + os.sep):
                    f, level = f.f_back, level + 1
                _tracing.warn_conversion(what, stacklevel=level)
            return
        from ._symbolic import leaves
        if any(v.node is not None for v in leaves(expr)):
            if self.static_reason is None:
                self.static_reason = ("a size of an intermediate tensor was read as a Python value "
                                      f"(it decides something at {_user_source() or 'an unknown line'})")
            return
        self.guards.append((expr, value))

    def watch_sizes(self, shape):
        """Remember the products of ``shape``'s sizes (> 1): a size computed inside tritensor
        from an input's sizes (matmul's flattening, flatten's view) is one of them."""
        products = {1}
        for n in shape:
            products |= {p * n for p in products}
        self.size_values |= {p for p in products if p > 1}

    def check_baked(self, op_name, attrs):
        """A size-like attribute holding a plain int that is one of the inputs' sizes (or a
        product of them) was computed from sizes inside tritensor, not recorded: the graph is
        then specialised to these sizes (``static_reason``)."""
        if self.static_reason is not None:
            return
        for name, value in attrs.items():
            if name in SIZE_ATTRIBUTES and any(n in self.size_values for n in _plain_ints(value)):
                self.static_reason = (f"aten::{op_name}'s {name} was computed from sizes inside tritensor "
                                      "(not recorded as size expressions)")
                return

    def check_baked_scalars(self, op_name, args):
        """A division by a plain number that is a product of the inputs' sizes (or one more than
        that number is: a count with Bessel's correction), or a multiplication by its reciprocal,
        was most likely computed from sizes inside a composite (mean's ``sum / n``, var's
        ``/ (n - 1)``, a loss's mean): a graph serving other sizes would divide by this size's
        count, so the capture stays static. A user's ``x / 2`` with a dim of 2 makes it static
        too: the safe side (a graph per shape, never a wrong value)."""
        if self.static_reason is not None or not self.size_values or op_name not in _COUNT_OPS:
            return
        from ._symbolic import SymInt
        for a in args[1:]:
            if isinstance(a, bool) or isinstance(a, SymInt) or not isinstance(a, (int, float)) or a == 0:
                continue
            if op_name == "mul":         # x * (1 / n): only a non-integer factor can be a reciprocal
                if float(a).is_integer():
                    continue
                a = 1 / a
                nearest = round(a)
                if abs(a - nearest) > 1e-6 * abs(a):
                    continue
                a = nearest
            elif not float(a).is_integer():
                continue
            if int(a) in self.size_values or int(a) + 1 in self.size_values:
                self.static_reason = (f"aten::{op_name} by {args[1]!r}, a count of the inputs' sizes computed "
                                      "inside tritensor (mean, var, a loss's mean), is baked in: the graph "
                                      "would be wrong at other sizes")
                return

    def symbolic_value(self, expr):
        """The graph value computing a size expression (written once, where first needed)."""
        if isinstance(expr, int):
            return self.graph.constant(self.graph, expr)
        v = self._sym_values.get(expr)
        if v is not None:
            return v
        kind = expr[0]
        if kind == "size":
            node = Node("aten::size", [expr[1], self.graph.constant(self.graph, expr[2])], {"call": "method"})
        elif kind == "numel":
            node = Node("aten::numel", [expr[1]], {"call": "method"})
        elif kind == "neg":
            node = Node("aten::neg", [self.symbolic_value(expr[1])], {"call": "operator"})
        else:
            node = Node("aten::" + kind, [self.symbolic_value(e) for e in expr[1:]], {"call": "operator"})
        self.graph.append(node)
        from ._ir import INT
        v = self._sym_values[expr] = node.add_output(self.graph, INT)
        return v

    def bind(self, t, value):
        self.env[id(t)] = value
        self.keep.append(t)
        self.versions[id(t)] = (t._version_counter, t._version_counter.value)

    def check_version(self, t):
        """A tensor changed in place by something dispatch did not see (a copy_ into it, ...):
        the graph would replay without that change."""
        counter, known = self.versions[id(t)]
        if counter.value != known and not self.unrecorded:
            self.unrecorded = True
            warnings.warn("A tensor was modified in place by an operation the trace could not record; "
                          "the trace might not generalize to other inputs!", _tracing.TracerWarning, stacklevel=5)

    def value_of(self, a):
        """The graph value of an operand: a seen tensor's value, or a new constant."""
        if isinstance(a, Tensor):
            v = self.env.get(id(a))
            if v is not None:
                self.check_version(a)
            else:
                v = self.graph.constant(self.graph, a.detach(), _user_source())
                self.bind(a, v)
            return v
        if self.symbolic:
            from ._symbolic import SymInt, contains_symbolic
            if isinstance(a, SymInt):
                return self.symbolic_value(a.expr)
            symbolic = contains_symbolic(a)
            if symbolic and isinstance(a, slice):       # x[:n]: the slice built at run time
                parts = [self.value_of(p) for p in (a.start, a.stop, a.step)]
                node = self.graph.append(Node("aten::slice", parts, {"call": "builtin"}))
                return node.add_output(self.graph, Type("slice"))
        else:
            symbolic = False
        if isinstance(a, (tuple, list)) and (symbolic or any(isinstance(x, Tensor) for x in a)):
            parts = [self.value_of(x) for x in a]
            node = self.graph.append(Node("prim::TupleConstruct", parts, {"list": isinstance(a, list)}))
            return node.add_output(self.graph, Type("Tuple", elements=[p.type for p in parts]))
        return self.graph.constant(self.graph, a)

    def record(self, op, args, attrs, out):
        inputs = [self.value_of(a) for a in args]
        info = {"call": "op", "kwargs": dict(attrs)}
        if self.symbolic:
            from ._symbolic import contains_symbolic
            self.check_baked(op.name, attrs)
            self.check_baked_scalars(op.name, args)
            named = [k for k, v in attrs.items() if contains_symbolic(v)]
            if named:        # symbolic attributes are inputs, passed by name
                inputs += [self.value_of(attrs[k]) for k in named]
                info["kwargs"] = {k: v for k, v in attrs.items() if k not in named}
                info["names"] = tuple(named)
        node = self.graph.append(Node("aten::" + op.name, inputs, info, _user_source()))
        for o in (out if type(out) is tuple else (out,)):
            self.bind(o, node.add_output(self.graph, Type.of(o)))

    def record_inplace(self, op, self_, others, attrs):
        counter = self_._version_counter          # the op just ran: self and its aliases are current
        for k, (c, _) in self.versions.items():
            if c is counter:
                self.versions[k] = (c, c.value)
        inputs = [self.value_of(self_)] + [self.value_of(a) for a in others]
        node = self.graph.append(Node("aten::" + op.name + "_", inputs, {"call": "inplace", "kwargs": dict(attrs)},
                                      _user_source()))
        self.bind(self_, node.add_output(self.graph, Type.of(self_)))

    def record_call(self, qualname, args, kwargs, out, call="fn"):
        """A random function's call (tritensor/_tracing.py's random_op), or a call taking
        symbolic sizes (_symbolic.py, call "fn" or "method"): one node calling
        ``tt.<qualname>`` (or the method) again at run time. An in-place call (dropout(inplace=True)) changed
        its input: the versions the graph knows follow, and the node is kept as an in-place one."""
        from ..runtime.device import device as _device
        args = [str(a) if isinstance(a, _device) else a for a in args]
        kwargs = {k: str(v) if isinstance(v, _device) else v for k, v in kwargs.items()}
        for t in (a for a in list(args) + list(kwargs.values()) if isinstance(a, Tensor)):
            counter = t._version_counter     # (checked before the call: before_call)
            for k, (c, _) in self.versions.items():
                if c is counter:
                    self.versions[k] = (c, c.value)
        inputs = [self.value_of(a) for a in args] + [self.value_of(v) for v in kwargs.values()]
        attrs = {"call": call}       # (a method's self is its first argument)
        if kwargs:
            attrs["names"] = tuple(kwargs)
        node = self.graph.append(Node("aten::" + qualname, inputs, attrs, _user_source()))
        for o in (out if type(out) is tuple else (out,)):
            self.bind(o, node.add_output(self.graph, Type.of(o)))

    def __enter__(self):
        if _tracing.state.tracer is not None:
            raise RuntimeError("tt.jit.trace: a trace is already running in this thread")
        _tracing.state.tracer = self
        _tracing.trace_started()
        if self.symbolic:
            from ._symbolic import activate
            activate()
        return self

    def __exit__(self, *exc):
        _tracing.state.tracer = None
        _tracing.trace_ended()
        if self.symbolic:
            from ._symbolic import deactivate
            deactivate()


def _flatten_outputs(out, tracer):
    """The graph's outputs for a traced function's result: a tensor or a (nested) tuple/list
    of tensors, as torch's "Only tensors, lists, tuples of tensors, or dictionary of tensors"."""
    if isinstance(out, Tensor):
        if id(out) in tracer.env:
            tracer.check_version(out)
        return tracer.value_of(out)
    if isinstance(out, (tuple, list)):
        parts = [_flatten_outputs(o, tracer) for o in out]
        node = tracer.graph.append(Node("prim::TupleConstruct", parts, {"list": isinstance(out, list)}))
        return node.add_output(tracer.graph, Type("Tuple", elements=[p.type for p in parts]))
    raise RuntimeError("Only tensors, lists, tuples of tensors, or dictionary of tensors can be output "
                       "from traced functions")


def trace_graph(fn, inputs, input_names, attributes=(), tracer=None):
    """Run ``fn(*inputs)`` once under a tracer (``tracer``, or a new one); the Graph of what it
    ran and its result. ``attributes``: (name, tensor) pairs (a module's parameters and buffers)."""
    tracer = tracer or Tracer()
    g = tracer.graph
    for name, x in zip(input_names, inputs):
        if not isinstance(x, Tensor):
            raise RuntimeError(f"Type '{type(x).__name__}' cannot be traced. Only Tensors and (possibly nested) "
                               "Lists, Dicts, and Tuples of Tensors can be traced")
        tracer.bind(x, g.add_input(Type.of(x), name))
        if tracer.symbolic:
            tracer.watch_sizes(x._shape)
    for name, t in attributes:
        if id(t) in tracer.env:
            continue
        node = g.append(Node("prim::GetAttr", (), {"name": name}))
        tracer.bind(t, node.add_output(g, Type.of(t), name.replace(".", "_")))
    with tracer:
        out = fn(*inputs)
        g.returns = [_flatten_outputs(out, tracer)]
        for x in inputs:
            tracer.check_version(x)
    _drop_unused(g)
    return g, out


def _drop_unused(g):
    """Remove nodes whose outputs nothing reads (dead code: ops whose results the trace did not
    return, constants of the Python values that were only compared). In-place nodes stay, and so
    do random ones (an unused draw still advances the generator, as eager's)."""
    live = {id(v) for v in g.returns}
    kept = []
    for n in reversed(g.nodes):
        if n.attrs.get("call") == "inplace" or any(id(o) in live for o in n.outputs) or _is_random(n):
            kept.append(n)
            live.update(id(i) for i in n.inputs)
    g.nodes[:] = reversed(kept)


# ops whose plain-number operand may be a count computed from sizes (check_baked_scalars)
_COUNT_OPS = frozenset({"div", "true_divide", "floor_divide", "mul"})

# the attributes of recorded ops that hold sizes (view's shape, a slice's bounds, split's length ...)
SIZE_ATTRIBUTES = frozenset({"shape", "size", "sizes", "stride", "strides", "start", "starts", "end", "length",
                             "index", "output_size", "input_size", "weight_shape", "nrows", "rows", "cols",
                             "split_size", "split_sizes", "offset", "storage_offset"})


def _plain_ints(value):
    from ._symbolic import SymInt
    if isinstance(value, slice):
        value = (value.start, value.stop, value.step)
    if isinstance(value, (tuple, list)):
        return [n for v in value for n in _plain_ints(v)]
    if isinstance(value, int) and not isinstance(value, (bool, SymInt)):
        return [abs(value)]
    return []


def _is_random(node):
    """A node calling a random function (it draws from the generator when it runs)."""
    return node.attrs.get("call") in ("fn", "method") and node.kind.startswith("aten::") and \
        node.kind[6:] in _tracing.RANDOM_FNS
