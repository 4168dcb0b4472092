"""``.code``: a Graph written back as Python (TorchScript's regenerated source), for reading."""
from __future__ import annotations

from ._ir import format_attr

_BINARY = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**",
           "matmul": "@", "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
           "and_": "&", "or_": "|", "xor": "^", "lshift": "<<", "rshift": ">>", "is_": "is", "is_not": "is not"}
_UNARY = {"neg": "-", "pos": "+", "invert": "~", "not_": "not "}


def _py(v):
    """A Python literal for a constant."""
    from ..tensor import Tensor
    if isinstance(v, Tensor):
        return f"CONSTANTS.c{format_attr(v)}"
    if hasattr(v, "is_floating_point") and hasattr(v, "itemsize"):
        return f"tt.{v.name}"
    return repr(v)


class _Writer:
    def __init__(self):
        self.names = {}
        self.lines = []

    def name(self, v):
        n = self.names.get(id(v))
        if n is None:
            if v.node is not None and v.node.kind == "prim::Constant":
                return _py(v.node.attrs.get("value"))
            base = v.name.replace(".", "_")
            n = base if base.isidentifier() and not base[0].isdigit() else f"_{base}"
            self.names[id(v)] = n
        return n

    def expr(self, node, ins):
        kind, call = node.kind, node.attrs.get("call")
        kwargs = dict(node.attrs.get("kwargs") or {})
        names = node.attrs.get("names") or ()
        pos = ins[:len(ins) - len(names)] if names else ins
        args = list(pos) + [f"{k}={_py(v)}" for k, v in kwargs.items()] + \
            [f"{k}={v}" for k, v in zip(names, ins[len(ins) - len(names):])]
        if kind == "prim::GetAttr":
            expr = "self"
            for part in node.attrs["name"].split("."):
                expr = f"{expr}.{part}" if part.isidentifier() else f"getattr({expr}, {part!r})"
            return expr
        if kind == "prim::TupleConstruct":
            inner = ", ".join(ins)
            return f"[{inner}]" if node.attrs.get("list") else f"({inner}{',' if len(ins) == 1 else ''})"
        if kind == "prim::TupleIndex":
            return f"{ins[0]}[{node.attrs['index']}]"
        if kind == "prim::CallFunction":
            return f"{node.attrs.get('name', 'fn')}({', '.join(ins)})"
        if kind == "prim::RaiseException":
            return f"raise {node.attrs['exception']}({ins[0] if ins else repr(node.attrs.get('message', ''))})"
        if kind == "prim::PythonOp":
            return f"{node.attrs['name']}({', '.join(pos + [f'{k}={v}' for k, v in zip(names, ins[len(pos):])])})"
        name = node.name
        if call == "operator" and name in _BINARY and len(ins) == 2:
            return f"{ins[0]} {_BINARY[name]} {ins[1]}"
        if call == "operator" and name in _UNARY:
            return f"{_UNARY[name]}{ins[0]}"
        if call == "operator" and name == "getitem":
            return f"{ins[0]}[{ins[1]}]"
        if call == "attr":
            return f"{ins[0]}.{name}"
        if call == "method":
            return f"{args[0]}.{name}({', '.join(args[1:])})"
        if call in ("builtin", "math"):
            return f"{'math.' if call == 'math' else ''}{name}({', '.join(args)})"
        prefix = "tt." if call == "fn" else "ops."
        return f"{prefix}{name}({', '.join(args)})"

    def block(self, block, indent):
        pad = "  " * indent
        for node in block.nodes:
            if node.kind == "prim::Constant":
                continue
            ins = [self.name(i) for i in node.inputs]
            outs = [self.name(o) for o in node.outputs]
            if node.kind == "prim::If":
                self.lines.append(f"{pad}if {ins[0]}:")
                for b in node.blocks:
                    if b is node.blocks[1]:
                        self.lines.append(f"{pad}else:")
                    start = len(self.lines)
                    self.block(b, indent + 1)
                    for o, r in zip(outs, b.returns):
                        self.lines.append(f"{pad}  {o} = {self.name(r)}")
                    if len(self.lines) == start:
                        self.lines.append(f"{pad}  pass")
                continue
            if node.kind == "prim::Loop":
                body = node.blocks[0]
                carried = [self.name(v) for v in body.inputs[1:]]
                for c, i in zip(carried, ins[2:]):
                    self.lines.append(f"{pad}{c} = {i}")
                i_name = self.name(body.inputs[0])
                always = ins[1] == "True" and self.name(body.returns[0]) == "True"
                unbounded = ins[0] == str(2 ** 63 - 1)
                cond = f"_cond_{i_name}"
                if always:                       # a range loop
                    self.lines.append(f"{pad}for {i_name} in range({ins[0]}):")
                elif unbounded:                  # a while loop
                    self.lines.append(f"{pad}{cond} = {ins[1]}")
                    self.lines.append(f"{pad}while {cond}:")
                else:
                    self.lines.append(f"{pad}{i_name} = 0")
                    self.lines.append(f"{pad}{cond} = {ins[1]}")
                    self.lines.append(f"{pad}while {cond} and {i_name} < {ins[0]}:")
                self.block(body, indent + 1)
                rets = [self.name(r) for r in body.returns]
                if not always:
                    self.lines.append(f"{pad}  {cond} = {rets[0]}")
                for c, r in zip(carried, rets[1:]):
                    self.lines.append(f"{pad}  {c} = {r}")
                if not (always or unbounded):
                    self.lines.append(f"{pad}  {i_name} = {i_name} + 1")
                for o, c in zip(outs, carried):
                    self.lines.append(f"{pad}{o} = {c}")
                continue
            if node.kind == "prim::With":
                self.lines.append(f"{pad}with tt.{node.attrs['context']}():")
                start = len(self.lines)
                self.block(node.blocks[0], indent + 1)
                for o, r in zip(outs, node.blocks[0].returns):
                    self.lines.append(f"{pad}  {o} = {self.name(r)}")
                if len(self.lines) == start:
                    self.lines.append(f"{pad}  pass")
                continue
            if node.kind == "prim::TupleUnpack":
                lhs = ", ".join(outs) + ("," if len(outs) == 1 else "")
                self.lines.append(f"{pad}{lhs} = {ins[0]}")
                continue
            rhs = self.expr(node, ins)
            if not outs:
                self.lines.append(f"{pad}{rhs}")
            else:
                lhs = ", ".join(outs) + ("," if len(outs) == 1 and len(node.outputs) > 1 else "")
                self.lines.append(f"{pad}{lhs} = {rhs}")


def graph_code(graph, name="forward", is_method=False):
    w = _Writer()
    params = ["self"] if is_method else []
    params += [f"{w.name(v)}: {_annot(v.type)}" for v in graph.inputs]
    rets = [w.name(v) for v in graph.returns]
    ret_type = _annot(graph.returns[0].type) if len(graph.returns) == 1 else "Tuple"
    head = f"def {name}(" + ",\n    ".join(params) + f") -> {ret_type}:"
    w.block(graph, 1)
    w.lines.append(f"  return {', '.join(rets)}")
    return head + "\n" + "\n".join(w.lines) + "\n"


def _annot(t):
    if t.kind == "Tensor":
        return "Tensor"
    if t.kind == "Tuple":
        return "Tuple[" + ", ".join(_annot(e) for e in t.elements) + "]"
    return t.kind
