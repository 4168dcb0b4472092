"""Running a Graph: an interpreter over the IR that calls tritensor's ops, so autograd records
through it as through eager code (the fuser's groups run their own way, see FUSION_GROUP_RUNNERS).
"""
from __future__ import annotations

import builtins
import math
import operator
import threading

from ..ops.table import TABLE

BUILTINS = {"int": int, "float": float, "bool": bool, "len": len, "abs": abs, "min": min, "max": max,
            "range": range, "slice": slice, "str": str}
OPERATORS = {n: getattr(operator, n) for n in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "neg", "pos", "invert", "not_",
    "and_", "or_", "xor", "lshift", "rshift", "eq", "ne", "lt", "le", "gt", "ge", "getitem", "is_", "is_not",
    "contains", "iadd", "isub", "imul", "itruediv")}
TENSOR_ATTRS = frozenset({"shape", "dtype", "ndim", "T", "mT", "requires_grad", "is_cuda", "device"})
MATH = {n: getattr(math, n) for n in ("sqrt", "exp", "log", "floor", "ceil", "sin", "cos", "tanh", "pi", "e", "inf")}

EXCEPTIONS = {e.__name__: e for e in (AssertionError, RuntimeError, ValueError, TypeError, IndexError, KeyError,
                                       NotImplementedError, ZeroDivisionError, Exception)}
# kind -> runner(node, inputs) -> outputs tuple, for the fuser's node kinds
FUSION_GROUP_RUNNERS = {}


class _Profiling(threading.local):
    current = None        # this thread's profiler of a scripted graph's run (_profile.py), or None


profiling = _Profiling()


def _resolve(node):
    """The callable of an ``aten::`` node (validated names only: _serialization checks the same)."""
    call = node.attrs.get("call", "op")
    name = node.name
    if call == "op":
        from ..ops.dispatch import dispatch
        op = TABLE[name]
        return lambda *a, **k: dispatch(op, *a, **k)
    if call == "inplace":
        from ..ops.dispatch import dispatch_inplace
        op = TABLE[name[:-1]]
        return lambda *a, **k: dispatch_inplace(op, *a, **k)
    if call == "fn":
        import tritensor
        target = tritensor
        for part in name.split("."):
            target = getattr(target, part)
        return target
    if call == "method":
        return lambda self, *a, **k: getattr(self, name)(*a, **k)
    if call == "operator":
        return OPERATORS[name]
    if call == "attr":
        if name not in TENSOR_ATTRS:
            raise RuntimeError(f"unknown tensor attribute {name!r}")
        return lambda self: getattr(self, name)
    if call == "builtin":
        return BUILTINS[name]
    if call == "math":
        return MATH[name]
    raise RuntimeError(f"unknown call kind {call!r} of {node.kind}")


def run_graph(graph, args, attributes=None, modules=None):
    """The values ``graph`` returns for ``args`` (one per input); ``attributes`` maps
    prim::GetAttr names to tensors."""
    env = {}
    for v, a in zip(graph.inputs, args):
        env[id(v)] = a
    return _run_block(graph, env, attributes or {})


def _run_block(block, env, attributes):
    prof = profiling.current
    for node in block.nodes:
        if prof is not None:
            mark = prof.before(node)
        kind = node.kind
        if kind == "prim::Constant":        # (no operands: the traced graph's hoisted constants)
            outs = (node.attrs.get("value"),)
        else:
            ins = [env[id(i)] for i in node.inputs]
            if kind == "prim::GetAttr":
                outs = (attributes[node.attrs["name"]],)
            elif kind == "prim::TupleConstruct":
                outs = (list(ins) if node.attrs.get("list") else tuple(ins),)
            elif kind == "prim::TupleUnpack":
                seq = tuple(ins[0])
                if len(seq) != len(node.outputs):
                    raise ValueError(f"too many values to unpack (expected {len(node.outputs)})"
                                     if len(seq) > len(node.outputs) else
                                     f"not enough values to unpack (expected {len(node.outputs)}, got {len(seq)})")
                outs = seq
            elif kind == "prim::TupleIndex":
                outs = (ins[0][node.attrs["index"]],)
            elif kind == "prim::If":
                branch = node.blocks[0] if bool(ins[0]) else node.blocks[1]
                outs = _run_block(branch, env, attributes)
            elif kind == "prim::Loop":
                outs = _run_loop(node, ins, env, attributes)
            elif kind == "prim::CallFunction":
                outs = run_graph(node.attrs["graph"], ins, attributes)
            elif kind == "prim::With":
                from ..autograd.grad_mode import enable_grad, no_grad
                with (no_grad() if node.attrs["context"] == "no_grad" else enable_grad()):
                    outs = _run_block(node.blocks[0], env, attributes)
            elif kind == "prim::RaiseException":
                raise EXCEPTIONS[node.attrs["exception"]](ins[0] if ins else node.attrs.get("message", ""))
            elif kind == "prim::PythonOp":          # a @tt.jit.ignore'd function, left to Python
                names = node.attrs.get("names") or ()
                pos = ins[:len(ins) - len(names)]
                outs = (node.attrs["_callable"](*pos, **dict(zip(names, ins[len(pos):]))),)
            elif kind in FUSION_GROUP_RUNNERS:
                outs = FUSION_GROUP_RUNNERS[kind](node, ins)
            elif kind == "prim::FusionGroup":
                outs = run_graph(node.attrs["subgraph"], ins, attributes)
            else:
                fn = node.attrs.get("_fn")
                if fn is None:
                    fn = node.attrs["_fn"] = _resolve(node)
                kwargs = dict(node.attrs.get("kwargs") or {})
                names = node.attrs.get("names") or ()
                if names:
                    kwargs.update(zip(names, ins[len(ins) - len(names):]))
                    ins = ins[:len(ins) - len(names)]
                result = fn(*ins, **kwargs)
                outs = result if len(node.outputs) > 1 else (result,)
        for v, x in zip(node.outputs, outs):
            env[id(v)] = x
        if prof is not None:
            prof.after(node, mark, outs)
    return tuple(env[id(v)] for v in block.returns)


def _run_loop(node, ins, env, attributes):
    trip, cond, carried = ins[0], ins[1], list(ins[2:])
    body = node.blocks[0]
    i = 0
    while bool(cond) and i < trip:
        env[id(body.inputs[0])] = i
        for v, x in zip(body.inputs[1:], carried):
            env[id(v)] = x
        if profiling.current is not None:
            profiling.current.see_block_inputs(body, [i] + carried)
        res = _run_block(body, env, attributes)
        cond, carried = res[0], list(res[1:])
        i += 1
    return tuple(carried)


del builtins
