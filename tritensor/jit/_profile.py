"""Fusing scripted graphs (issue 26): TorchScript's profiling executor, in small.

A scripted graph knows its ops by the names the source called (``x * y``: operator "mul",
``x.exp()``: method "exp", ``tt.sigmoid(x)``: function "sigmoid") and its values' types only as
"Tensor". The fuser needs primitives with dtypes and shapes. So a scripted function's first calls
with one input signature are profiled: the graph runs under a tracer, and each straight-line node
that ran exactly one primitive pointwise op of the table (with operands the graph's own values
or Python scalars) is specialised to that primitive, typed with what it produced. The specialised
graph is fused block by block: the top level and each if/loop body (a block's groups never cross
its edges), and calls run it.

A node that did not run while profiled (the branch not taken) keeps its generic form; the first
``PROFILED_RUNS`` calls of a signature are profiled, so a branch taken in one of them is fused.
At most ``SPECIALISATION_LIMIT`` signatures (shapes, dtypes ...) are specialised; later ones run
the generic graph, unfused.
Random ops are recorded as calls of their functions (tritensor/_tracing.py), never primitives, so
they end groups as in traces.
"""
from __future__ import annotations

import warnings

from .. import _tracing
from ..tensor import Tensor
from . import _interp
from ._ir import Block, Graph, Node, Type, _reads
from ._trace import Tracer

PROFILED_RUNS = 2
SPECIALISATION_LIMIT = 8        # input signatures specialised per scripted graph (as the fuser's plans)


class Profiler:
    """What the profiled runs saw: ``primitive`` (id(script node) -> the traced pointwise node
    and the script values (or constants) it read), ``types`` (id(script value) -> Type)."""

    def __init__(self):
        self.primitive = {}
        self.types = {}
        self.tracer = None
        self.objects = {}         # id(runtime object) -> script Value that holds it (this run)
        self._keep = []

    def start(self, graph, args):
        self.tracer = Tracer()
        self.objects = {}
        self._keep = list(args)
        for v, a in zip(graph.inputs, args):
            self._see(v, a)
            if isinstance(a, Tensor):
                self.tracer.bind(a, self.tracer.graph.add_input(Type.of(a), v.name))

    def _see(self, v, obj):
        if isinstance(obj, Tensor):
            self.objects[id(obj)] = v
            self._keep.append(obj)
            self.types[id(v)] = Type.of(obj)

    def before(self, node):
        return len(self.tracer.graph.nodes)

    def see_block_inputs(self, block, values):
        for v, x in zip(block.inputs, values):
            self._see(v, x)

    def after(self, node, mark, outs):
        for v, o in zip(node.outputs, outs):
            self._see(v, o)
        if node.blocks or not node.kind.startswith("aten::") or len(node.outputs) != 1:
            return
        new = [n for n in self.tracer.graph.nodes[mark:] if n.kind != "prim::Constant"]
        if len(new) != 1 or not _pointwise(new[0]) or self.tracer.env.get(id(outs[0])) is not new[0].outputs[0]:
            self.primitive.pop(id(node), None)      # (not one pointwise primitive: stays generic)
            return
        prim, reads = new[0], []
        held = {id(self.tracer.env.get(oid)): v for oid, v in self.objects.items()}
        for i in prim.inputs:
            if i.node is not None and i.node.kind == "prim::Constant" and not isinstance(i.node.attrs["value"], Tensor):
                reads.append(("const", i.node.attrs["value"]))
                continue
            v = held.get(id(i))
            if v is None:                # an operand the script graph does not hold as a value
                self.primitive.pop(id(node), None)
                return
            reads.append(("value", v))
        self.primitive[id(node)] = (prim, reads)


def _pointwise(node):
    from ._fusion import _fusible
    return _fusible(node)


def run_profiled(graph, args, attributes, profiler):
    """``graph``'s outputs for ``args``, profiled (TracerWarnings of the profiling tracer are
    not the user's: an if's condition read as a bool is the graph's control flow)."""
    profiler.start(graph, args)
    _interp.profiling.current = profiler
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", _tracing.TracerWarning)
            with profiler.tracer:
                return _interp.run_graph(graph, args, attributes)
    finally:
        _interp.profiling.current = None
        profiler.tracer = None
        profiler.objects, profiler._keep = {}, []


def specialise(graph, profiler):
    """A copy of ``graph`` whose profiled pointwise nodes are their primitives, typed, then
    fused block by block."""
    g = Graph()
    mapping = {}
    for v in graph.inputs:
        mapping[id(v)] = g.add_input(profiler.types.get(id(v), v.type), v.name)
    _specialise_block(graph, g, g, mapping, profiler)
    g.returns = [mapping[id(v)] for v in graph.returns]
    _drop_unused_constants(g)
    return _fuse_blocks(g)


def _drop_unused_constants(g):
    """The script's constants that only the specialised nodes' generic forms read."""
    read = {id(v) for n in g.all_nodes() for v in n.inputs}
    read |= {id(v) for n in g.all_nodes() for b in n.blocks for v in b.returns} | {id(v) for v in g.returns}

    def prune(block):
        block.nodes[:] = [n for n in block.nodes if n.kind != "prim::Constant" or id(n.outputs[0]) in read]
        for n in block.nodes:
            for b in n.blocks:
                prune(b)
    prune(g)


def _specialise_block(block, graph, out, mapping, profiler):
    for n in block.nodes:
        hit = profiler.primitive.get(id(n))
        if hit is None:
            new = out.append(Node(n.kind, [mapping.get(id(i), i) for i in n.inputs], n.attrs, n.source))
            for o in n.outputs:
                mapping[id(o)] = new.add_output(graph, profiler.types.get(id(o), o.type), o.name)
            if n.blocks:
                for b in n.blocks:
                    nb = Block(graph)
                    for v in b.inputs:
                        mapping[id(v)] = nb.add_input(profiler.types.get(id(v), v.type), v.name)
                    _specialise_block(b, graph, nb, mapping, profiler)
                    nb.returns = [mapping.get(id(v), v) for v in b.returns]
                    new.blocks.append(nb)
            continue
        prim, reads = hit
        inputs = []
        for kind, x in reads:
            inputs.append(graph.constant(out, x) if kind == "const" else mapping[id(x)])
        new = out.append(Node(prim.kind, inputs, prim.attrs, n.source))
        mapping[id(n.outputs[0])] = new.add_output(graph, prim.outputs[0].type, n.outputs[0].name)


def _fuse_blocks(g):
    """The fuser's groups in every block: the top level by fuse_graph, each nested block as a
    graph of its own (its inputs: the block's and the outer values it reads)."""
    from ._fusion import fuse_graph
    fused = fuse_graph(g)
    for n in fused.nodes:
        _fuse_nested(n, fuse_graph)
    return fused


def _fuse_nested(node, fuse_graph):
    for b in node.blocks:
        for n in b.nodes:
            _fuse_nested(n, fuse_graph)
        local = {id(v) for v in b.inputs} | {id(o) for n in b.nodes for o in n.outputs}
        outer, seen = [], set()
        for n in b.nodes:
            for v in _reads(n):
                if id(v) not in local and id(v) not in seen:
                    seen.add(id(v))
                    outer.append(v)
        for v in b.returns:
            if id(v) not in local and id(v) not in seen:
                seen.add(id(v))
                outer.append(v)
        tmp = Graph()
        tmp.inputs = list(b.inputs) + outer
        tmp.nodes = list(b.nodes)
        tmp.returns = list(b.returns)
        f = fuse_graph(tmp)
        back = {id(c): o for c, o in zip(f.inputs, tmp.inputs)}
        _remap(f, back)
        b.nodes = f.nodes
        b.returns = [back.get(id(v), v) for v in f.returns]


def _remap(block, back):
    for n in block.nodes:
        n.inputs = [back.get(id(i), i) for i in n.inputs]
        for b in n.blocks:
            _remap(b, back)
            b.returns = [back.get(id(v), v) for v in b.returns]


class Specialised:
    """One input signature of a scripted function: its profile, the runs profiled, the graph."""

    def __init__(self):
        self.profiler = Profiler()
        self.runs = 0
        self.graph = None


def call(owner, graph, args, attributes=None):
    """Run a scripted ``graph`` (of ``owner``, which keeps the specialisations) for ``args``:
    profiled for the first PROFILED_RUNS calls of a signature, then its fused specialisation.
    Past SPECIALISATION_LIMIT signatures, new ones run the generic graph (unfused)."""
    spec = _entry(owner, args)
    if spec is None:
        return _interp.run_graph(graph, args, attributes)
    if spec.runs >= PROFILED_RUNS or _tracing.state.tracer is not None:
        return _interp.run_graph(spec.graph or graph, args, attributes)
    out = run_profiled(graph, args, attributes, spec.profiler)
    spec.runs += 1
    spec.graph = specialise(graph, spec.profiler)
    return out


def graph_for(owner, graph, args, attributes=None):
    """torch's graph_for: the graph that runs for ``args`` (profiling a run first if needed)."""
    spec = _entry(owner, args)
    if spec is None:
        return graph
    if spec.graph is None:
        call(owner, graph, args, attributes)
    return spec.graph


def _entry(owner, args):
    table = owner.__dict__.setdefault("_tt_specialised", {}).setdefault(id(owner.graph), {})
    from ._fusion import _signature         # (the fuser's plans' key: shapes, strides, dtypes ...)
    key = _signature(args)
    spec = table.get(key)
    if spec is None:
        if len(table) >= SPECIALISATION_LIMIT:
            return None
        spec = table[key] = Specialised()
    return spec
