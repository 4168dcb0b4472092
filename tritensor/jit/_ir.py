"""A small SSA IR shared by trace, script, compile and the fuser (issue 26).

A ``Graph`` is a ``Block``: typed input ``Value``s, a list of ``Node``s and the values it
returns. A node has a ``kind`` ("aten::mul", "prim::Constant", "prim::If" ...), input and output
values, constant ``attrs`` and, for control flow, nested ``blocks``. Every value is defined once
(SSA); ``value.node`` is the node that defines it (None for a block input).

Kinds (what the interpreter, _interp.py, runs):
  aten::<name>          attrs["call"] says how: "op" (a primitive of the op table, through
                        dispatch: traced graphs), "inplace" (dispatch_inplace), "fn" (tt.<name>),
                        "method" (Tensor.<name>), "operator" (operator.<name>), "builtin" (int,
                        float, bool, len, abs, min, max). attrs["kwargs"] holds constant keyword
                        arguments; attrs["names"] (optional) names keyword inputs: the last
                        len(names) inputs are passed by those names.
  prim::Constant        attrs["value"]: a number, bool, None, str, dtype, tuple, or a tensor
  prim::GetAttr         attrs["name"]: a module's parameter or buffer (traced/scripted modules)
  prim::TupleConstruct, prim::TupleUnpack, prim::TupleIndex (attrs["index"])
  prim::If              inputs (cond,), blocks (then, else): each block returns the outputs
  prim::Loop            inputs (max_trip_count, initial condition, *carried) as TorchScript's;
                        one block with inputs (i, *carried) returning (condition, *carried)
  prim::CallFunction    attrs["graph"]: another Graph (a scripted function it calls)
  prim::FusionGroup     attrs["subgraph"]: a Graph (the fuser's groups, see Graph.replace_nodes)

For the fuser: walk ``graph.nodes`` (top level) or ``graph.all_nodes()``; a node's
``kind``, ``inputs``, ``outputs``, ``attrs``; ``value.uses()`` lists the nodes reading a
value. ``graph.replace_nodes(nodes, kind, attrs)`` replaces a run of nodes by one node whose
inputs are the values the run reads from outside and whose outputs are the run's values read
afterwards (or returned); its attrs["subgraph"] is a Graph of the run itself.
"""
from __future__ import annotations

from .. import dtypes as _dt

# ---------------------------------------------------------------------------- types


class Type:
    """A value's type: "Tensor" (dtype, shape, strides, requires_grad, device: each None where
    unknown), "int", "float", "bool", "str", "NoneType", "Device", "ScalarType", or "Tuple"
    (elements)."""
    __slots__ = ("kind", "dtype", "shape", "strides", "requires_grad", "device", "elements")

    def __init__(self, kind, dtype=None, shape=None, strides=None, requires_grad=None, device=None,
                 elements=()):
        self.kind = kind
        self.dtype, self.shape, self.strides = dtype, shape, strides
        self.requires_grad, self.device = requires_grad, device
        self.elements = tuple(elements)

    @staticmethod
    def of(v):
        """The type of a runtime value (a complete tensor type: a trace's)."""
        from ..tensor import Tensor
        if isinstance(v, Tensor):
            return Type("Tensor", v.dtype, tuple(v.shape), tuple(v.stride()), bool(v.requires_grad),
                        str(v.device))
        if isinstance(v, bool):
            return BOOL
        if isinstance(v, int):
            return INT
        if isinstance(v, float):
            return FLOAT
        if isinstance(v, str):
            return STR
        if v is None:
            return NONE
        if isinstance(v, _dt.dtype):
            return Type("ScalarType")
        if isinstance(v, (tuple, list)):
            return Type("Tuple", elements=[Type.of(e) for e in v])
        return Type(type(v).__name__)

    def __str__(self):
        if self.kind == "Tensor":
            if self.dtype is None:
                return "Tensor"
            parts = [str(s) for s in self.shape or ()]
            if self.shape:
                parts.append(f"strides=[{', '.join(map(str, self.strides))}]")
            parts.append(f"requires_grad={int(bool(self.requires_grad))}")
            parts.append(f"device={self.device}")
            return f"{_dt.type_name(self.dtype)}({', '.join(parts)})"
        if self.kind == "Tuple":
            return "(" + ", ".join(map(str, self.elements)) + ")"
        return self.kind

    def __eq__(self, other):
        return isinstance(other, Type) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


TENSOR = Type("Tensor")
INT, FLOAT, BOOL, STR, NONE = Type("int"), Type("float"), Type("bool"), Type("str"), Type("NoneType")

# ---------------------------------------------------------------------------- values, nodes, blocks


class Value:
    __slots__ = ("name", "type", "node", "graph")

    def __init__(self, graph, type, name=None):
        self.graph = graph
        self.type = type
        self.node = None
        self.name = graph._fresh(name)

    def uses(self):
        """The nodes (anywhere in the graph) that read this value."""
        return [n for n in self.graph.all_nodes() if any(i is self for i in n.inputs)]

    def __repr__(self):
        return f"%{self.name}"


class Node:
    __slots__ = ("kind", "inputs", "outputs", "attrs", "blocks", "source")

    def __init__(self, kind, inputs=(), attrs=None, source=None):
        self.kind = kind
        self.inputs = list(inputs)
        self.outputs = []
        self.attrs = dict(attrs or {})
        self.blocks = []
        self.source = source        # "file:line:col", as TorchScript's comments

    @property
    def name(self):
        """The op's name without its namespace ("mul" for "aten::mul")."""
        return self.kind.split("::", 1)[1]

    def add_output(self, graph, type, name=None):
        v = Value(graph, type, name)
        v.node = self
        self.outputs.append(v)
        return v

    def __repr__(self):
        return f"<Node {self.kind} {self.inputs} -> {self.outputs}>"


class Block:
    def __init__(self, graph):
        self.graph = graph
        self.inputs = []
        self.nodes = []
        self.returns = []

    def add_input(self, type, name=None):
        v = Value(self.graph, type, name)
        self.inputs.append(v)
        return v

    def append(self, node):
        self.nodes.append(node)
        return node


class Graph(Block):
    """The top-level block: ``inputs``, ``nodes``, ``outputs`` (its returns)."""

    def __init__(self):
        self._names = set()
        self._counter = 0
        super().__init__(self)

    @property
    def outputs(self):
        return self.returns

    def _fresh(self, name):
        if name is not None and name.replace(".", "_").isidentifier() | name.isdigit() and name not in self._names:
            self._names.add(name)
            return name
        if name is not None and name.isidentifier():       # a reassigned variable: x.1, x.2 ...
            i = 1
            while f"{name}.{i}" in self._names:
                i += 1
            self._names.add(f"{name}.{i}")
            return f"{name}.{i}"
        while str(self._counter) in self._names:
            self._counter += 1
        self._names.add(str(self._counter))
        return str(self._counter)

    def all_nodes(self):
        """Every node, nested blocks included, in order."""
        out = []

        def walk(block):
            for n in block.nodes:
                out.append(n)
                for b in n.blocks:
                    walk(b)
        walk(self)
        return out

    def constant(self, block, value, source=None):
        node = block.append(Node("prim::Constant", (), {"value": value}, source))
        node.add_output(self, Type.of(value) if not _is_tensor(value) else Type.of(value))
        return node.outputs[0]

    def replace_nodes(self, nodes, kind="prim::FusionGroup", attrs=None):
        """Replace ``nodes`` (a run of consecutive top-level nodes, in order) by one node of
        ``kind``; its attrs["subgraph"] is a Graph of the run. Returns the new node."""
        start = self.nodes.index(nodes[0])
        if self.nodes[start:start + len(nodes)] != list(nodes):
            raise ValueError("replace_nodes: the nodes must be consecutive top-level nodes, in order")
        inside = {id(o) for n in nodes for o in n.outputs}
        later = self.nodes[start + len(nodes):]
        needed = {id(i) for n in later for i in _reads(n)} | {id(v) for v in self.returns}
        ins, seen = [], set()
        for n in nodes:
            for i in _reads(n):
                if id(i) not in inside and id(i) not in seen:
                    seen.add(id(i))
                    ins.append(i)
        outs = [o for n in nodes for o in n.outputs if id(o) in needed]
        fused = Node(kind, ins, dict(attrs or {}, subgraph=extract(nodes, ins, outs)), nodes[0].source)
        fused.outputs = outs          # the same Value objects: later readers need no rewrite
        for o in outs:
            o.node = fused
        self.nodes[start:start + len(nodes)] = [fused]
        return fused

    def __str__(self):
        return format_graph(self)

    def copy(self):
        return extract(self.nodes, self.inputs, self.returns)


def extract(nodes, inputs, returns):
    """A new Graph of copies of ``nodes`` (top-level nodes, in order, with their blocks) reading
    copies of ``inputs`` and returning the copies of ``returns``: a graph's copy, a fused group's
    subgraph, the forward and backward halves of a differentiable group."""
    g = Graph()
    mapping = {}
    for v in inputs:
        mapping[id(v)] = g.add_input(v.type, v.name)
    for n in nodes:
        _copy_node(n, g, g, mapping)
    g.returns = [mapping[id(v)] for v in returns]
    return g


def _reads(node):
    """Values a node reads, its nested blocks' reads from outside included."""
    out = list(node.inputs)
    for b in node.blocks:
        local = {id(v) for v in b.inputs}
        for n in b.nodes:
            local.update(id(o) for o in n.outputs)
        for n in b.nodes:
            out.extend(v for v in _reads(n) if id(v) not in local)
        out.extend(v for v in b.returns if id(v) not in local)
    return out


def _copy_node(n, graph, block, mapping):
    new = block.append(Node(n.kind, [mapping.get(id(i), i) for i in n.inputs], n.attrs, n.source))
    for o in n.outputs:
        mapping[id(o)] = new.add_output(graph, o.type, o.name)
    for b in n.blocks:
        nb = Block(graph)
        for v in b.inputs:
            mapping[id(v)] = nb.add_input(v.type, v.name)
        for m in b.nodes:
            _copy_node(m, graph, nb, mapping)
        nb.returns = [mapping.get(id(v), v) for v in b.returns]
        new.blocks.append(nb)
    return new


def _is_tensor(v):
    from ..tensor import Tensor
    return isinstance(v, Tensor)

# ---------------------------------------------------------------------------- printing


def format_attr(v):
    if _is_tensor(v):
        if v.numel() == 1:
            x = v.detach().cpu().reshape(()).item()
            return "{" + (repr(x) if not isinstance(x, float) or x != int(x) else str(int(x))) + "}"
        return "<Tensor>"
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, _dt.dtype):
        return str(v.name)
    if isinstance(v, str):
        return '"' + v + '"'
    if isinstance(v, (tuple, list)):
        return "[" + ", ".join(format_attr(x) for x in v) + "]"
    if isinstance(v, Graph):
        return "<Graph>"
    return repr(v)


def _node_attrs(node):
    shown = {}
    for k, v in node.attrs.items():
        if k in ("call", "names", "graph", "subgraph", "list") or k.startswith("_"):
            continue
        if k == "kwargs":
            shown.update(v)
        else:
            shown[k] = v
    if not shown:
        return ""
    return "[" + ", ".join(f"{k}={format_attr(v)}" for k, v in shown.items()) + "]"


def _format_block(block, indent, lines):
    pad = "  " * indent
    for n in block.nodes:
        outs = ", ".join(f"%{o.name} : {o.type}" for o in n.outputs)
        lhs = f"{outs} = " if outs else ""
        src = f" # {n.source}" if n.source else ""
        lines.append(f"{pad}{lhs}{n.kind}{_node_attrs(n)}({', '.join('%' + i.name for i in n.inputs)}){src}")
        for k, b in enumerate(n.blocks):
            params = ", ".join(f"%{v.name} : {v.type}" for v in b.inputs)
            lines.append(f"{pad}  block{k}({params}):")
            _format_block(b, indent + 2, lines)
            lines.append(f"{pad}    -> ({', '.join('%' + v.name for v in b.returns)})")
        sub = n.attrs.get("subgraph")
        if isinstance(sub, Graph):
            for line in format_graph(sub).splitlines():
                lines.append(f"{pad}  {line}")


def format_graph(graph):
    """TorchScript's listing: ``graph(%x : Float(3, 4, ...), ...):``, one line per node,
    ``return (%out)``."""
    params = (",\n" + " " * 6).join(f"%{v.name} : {v.type}" for v in graph.inputs)
    lines = [f"graph({params}):"]
    _format_block(graph, 1, lines)
    lines.append(f"  return ({', '.join('%' + v.name for v in graph.returns)})")
    return "\n".join(lines) + "\n"
