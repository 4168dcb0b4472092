"""tt.jit.script: a typed subset of Python compiled from its source (``ast``) into the SSA IR.

The subset (TorchScript's core): tensor functions (tt.*, tt.nn.functional.*, math.*) and
tensor methods, arithmetic, comparisons, ``and``/``or``/``not``, conditional expressions,
subscripts and slices, tuples, ``if``/``else`` (early returns included), ``for i in range(...)``,
``while``, ``for m in self`` over a Sequential/ModuleList, calls to other Python functions
(compiled too) and to submodules (inlined), a module's parameters and buffers (prim::GetAttr)
and its plain attributes (constants). Arguments are typed by their annotations (int, float,
bool, Tensor, Tuple[...]; no annotation: Tensor). Data-dependent branches stay branches
(prim::If, prim::Loop). Anything else raises an error naming the line, in TorchScript's form.
"""
from __future__ import annotations

import ast
import builtins
import inspect
import math
import textwrap
import types

from ..tensor import Tensor
from ._interp import BUILTINS, MATH
from ._ir import BOOL, FLOAT, INT, NONE, STR, TENSOR, Block, Graph, Node, Type


class FrontendError(Exception):
    """torch.jit.frontend.FrontendError."""


class NotSupportedError(FrontendError):
    """torch.jit.frontend.NotSupportedError: a construct outside the compiled subset."""


class UnsupportedNodeError(NotSupportedError):
    """torch.jit.frontend.UnsupportedNodeError."""


_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv",
           ast.Mod: "mod", ast.Pow: "pow", ast.MatMult: "matmul", ast.BitAnd: "and_", ast.BitOr: "or_",
           ast.BitXor: "xor", ast.LShift: "lshift", ast.RShift: "rshift"}
_AUGOPS = {ast.Add: "iadd", ast.Sub: "isub", ast.Mult: "imul", ast.Div: "itruediv"}
_CMPOPS = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge",
           ast.Is: "is_", ast.IsNot: "is_not"}
_UNOPS = {ast.USub: "neg", ast.UAdd: "pos", ast.Invert: "invert", ast.Not: "not_"}
# Tensor methods and attributes whose result is not a tensor
_METHOD_TYPES = {"dim": INT, "numel": INT, "item": FLOAT, "is_contiguous": BOOL, "element_size": INT,
                 "is_floating_point": BOOL, "tolist": Type("list")}
TENSOR_ATTRS = {"shape": Type("Tuple"), "dtype": Type("ScalarType"), "ndim": INT, "T": TENSOR, "mT": TENSOR,
                "requires_grad": BOOL, "is_cuda": BOOL, "device": Type("Device")}
INT_MAX = 2 ** 63 - 1
EXCEPTIONS = ("AssertionError", "RuntimeError", "ValueError", "TypeError", "IndexError", "KeyError",
              "NotImplementedError", "ZeroDivisionError", "Exception")
RAISED = "raised"            # block(): every path raises


class _ModuleRef:
    """A compile-time reference: a Python module, a nn.Module (with its attribute prefix), a function."""

    def __init__(self, obj, prefix=""):
        self.obj, self.prefix = obj, prefix


class _Function:
    """A parsed function: its FunctionDef, source lines, file and globals."""

    def __init__(self, fn):
        fn = inspect.unwrap(fn)
        self.fn = fn
        try:
            lines, start = inspect.getsourcelines(fn)
        except (OSError, TypeError) as e:
            raise RuntimeError(f"tt.jit.script: cannot get the source of {fn!r} ({e})") from None
        src = textwrap.dedent("".join(lines))
        self.lines = src.splitlines()
        self.first = start
        self.file = inspect.getsourcefile(fn) or "<unknown>"
        tree = ast.parse(src)
        self.defn = tree.body[0]
        if not isinstance(self.defn, (ast.FunctionDef,)):
            raise NotSupportedError(f"tt.jit.script: {fn!r} is not a function defined with def")
        self.globals = dict(fn.__globals__)
        try:
            cv = inspect.getclosurevars(fn)
            self.globals.update(cv.nonlocals)
        except (TypeError, ValueError):
            pass

    def where(self, node):
        lineno = getattr(node, "lineno", 1)
        return f"{self.file}:{lineno + self.first - 1}:{getattr(node, 'col_offset', 0)}"

    def error(self, node, message, cls=RuntimeError):
        lineno = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0)
        end = getattr(node, "end_col_offset", col + 1) if getattr(node, "end_lineno", lineno) == lineno else \
            len(self.lines[lineno - 1])
        shown = []
        if lineno >= 2:
            shown.append(self.lines[lineno - 2])
        shown.append(self.lines[lineno - 1])
        shown.append(" " * col + "~" * max(end - col, 1) + " <--- HERE")
        if lineno < len(self.lines):
            shown.append(self.lines[lineno])
        text = f"{message}:\n  File \"{self.file}\", line {lineno + self.first - 1}\n" + "\n".join(shown) + "\n"
        return cls(text)


def _annotation_type(fnc, ann, node):
    if ann is None:
        return TENSOR
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        ann = ast.parse(ann.value, mode="eval").body
    if isinstance(ann, ast.Name) and ann.id in ("int", "float", "bool", "str"):
        return {"int": INT, "float": FLOAT, "bool": BOOL, "str": STR}[ann.id]
    if isinstance(ann, ast.Name) and ann.id == "Tensor" or isinstance(ann, ast.Attribute) and ann.attr == "Tensor":
        return TENSOR
    if isinstance(ann, ast.Subscript) and getattr(ann.value, "id", getattr(ann.value, "attr", None)) in ("Tuple", "tuple"):
        elts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        return Type("Tuple", elements=[_annotation_type(fnc, e, node) for e in elts])
    raise fnc.error(ann, f"Unknown type annotation: '{ast.unparse(ann)}'")


def _binary_type(op, a, b):
    if a.kind == "Tensor" or b.kind == "Tensor":
        return TENSOR
    if op in ("eq", "ne", "lt", "le", "gt", "ge", "is_", "is_not", "not_"):
        return BOOL
    if op in ("truediv", "itruediv"):
        return FLOAT
    if a.kind == "float" or b.kind == "float":
        return FLOAT
    if a.kind == "bool" and b.kind == "bool" and op in ("and_", "or_", "xor"):
        return BOOL
    return INT if a.kind in ("int", "bool") and b.kind in ("int", "bool") else Type("Any")


class _Returned(Exception):
    pass


class Compiler:
    def __init__(self, cache=None, stack=()):
        self.cache = cache if cache is not None else {}
        self.stack = stack

    # ------------------------------------------------------------------ entry points
    def function(self, fn, module=None, name=None):
        """The Graph of ``fn`` (with ``module`` bound to its first parameter, for a forward)."""
        if fn in self.stack:
            raise RuntimeError(f"tt.jit.script: {fn.__name__} is recursive; recursion is not supported")
        fnc = _Function(fn)
        self.fnc = fnc
        g = self.graph = Graph()
        args = fnc.defn.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            raise fnc.error(fnc.defn, "Compiled functions can't take variable number of arguments or use "
                            "keyword-only arguments with defaults", NotSupportedError)
        params = list(args.args)
        env = {}
        if module is not None:
            env[params[0].arg] = _ModuleRef(module, "")
            params = params[1:]
        for a in params:
            env[a.arg] = g.add_input(_annotation_type(fnc, a.annotation, a), a.arg)
        self.stack = self.stack + (fn,)
        ret = self.block(fnc.defn.body, g, env)
        if ret is None:
            ret = [self.const(None, g, fnc.defn)]
        g.returns = ret
        return g

    # ------------------------------------------------------------------ helpers
    def const(self, value, block, node):
        n = block.append(Node("prim::Constant", (), {"value": value}, self.fnc.where(node)))
        return n.add_output(self.graph, Type.of(value))

    def emit(self, block, kind, call, inputs, out_type, node, kwargs=None, names=(), n_out=1):
        if call in ("operator", "builtin", "math") and n_out == 1 and not kwargs:
            folded = self._fold(kind, call, inputs, names, block, node)
            if folded is not None:
                return folded
        attrs = {"call": call}
        if kwargs:
            attrs["kwargs"] = kwargs
        if names:
            attrs["names"] = tuple(names)
        n = block.append(Node(kind, inputs, attrs, self.fnc.where(node)))
        for _ in range(n_out):
            n.add_output(self.graph, out_type)
        return n.outputs[0] if n_out == 1 else n.outputs

    def _fold(self, kind, call, inputs, names, block, node):
        """A Python operation on compile-time constants (a module's configuration: ``self.padding_mode
        != "zeros"``) is done now, as TorchScript folds its constants; None when it cannot be."""
        values = []
        for v in inputs:
            c = _constant_of(v)
            if c is _NOT_CONSTANT:
                return None
            values.append(c)
        from ._interp import BUILTINS as _B, OPERATORS as _O
        fn = {"operator": _O, "builtin": _B, "math": MATH}[call].get(kind.split("::", 1)[1])
        if fn is None:
            return None
        pos = values[:len(values) - len(names)]
        try:
            result = fn(*pos, **dict(zip(names, values[len(pos):])))
        except Exception:
            return None                  # (it raises at run time, where eager code would)
        if not (result is None or isinstance(result, (bool, int, float, str))):
            return None
        return self.const(result, block, node)

    def value(self, x, block, node):
        """A graph value from a compile-time constant (numbers, None, tuples of them, dtypes)."""
        if isinstance(x, (_ModuleRef,)):
            raise self.fnc.error(node, "a module or function is not a value")
        if hasattr(x, "graph") and hasattr(x, "__call__") and False:
            return x
        from ._ir import Value
        if isinstance(x, Value):
            return x
        if x is None or isinstance(x, (bool, int, float, str)) or type(x).__name__ == "dtype":
            return self.const(x, block, node)
        if isinstance(x, tuple):
            parts = [self.value(e, block, node) for e in x]
            n = block.append(Node("prim::TupleConstruct", parts, {}, self.fnc.where(node)))
            return n.add_output(self.graph, Type("Tuple", elements=[p.type for p in parts]))
        raise self.fnc.error(node, f"Python value of type '{type(x).__name__}' cannot be used as a value")

    # ------------------------------------------------------------------ statements
    def block(self, stmts, block, env):
        """Compile ``stmts``; the returned values when every path returns, else None."""
        for i, s in enumerate(stmts):
            if isinstance(s, ast.Raise):
                self.raise_stmt(s, block, env)
                return RAISED
            if isinstance(s, ast.Assert):
                self.assert_stmt(s, block, env)
                continue
            if isinstance(s, ast.Return):
                return [self.expr(s.value, block, env)] if s.value is not None else [self.const(None, block, s)]
            if isinstance(s, ast.If):
                cond = self._cond(s.test, block, env)
                folded = _constant_of(cond)
                if folded is not _NOT_CONSTANT:      # a constant test: only the branch taken is compiled
                    return self.block(list(s.body if folded else s.orelse) + list(stmts[i + 1:]), block, env)
                ret = self.if_stmt(s, block, env, stmts[i + 1:], cond)
                if ret is not None:
                    return ret
                if _returns(s.body) or _returns(s.orelse):
                    return None      # (the rest was compiled into the branch that did not return)
                continue
            self.stmt(s, block, env)
        return None

    def _exception(self, exc, node, env):
        """(class name, message) of ``raise Cls("literal")`` / ``raise Cls``."""
        msg = ""
        if isinstance(exc, ast.Call):
            if len(exc.args) > 1 or exc.keywords:
                raise self.fnc.error(exc, "raise takes one message in script", NotSupportedError)
            if exc.args and isinstance(exc.args[0], ast.Constant) and isinstance(exc.args[0].value, str):
                msg = exc.args[0].value
            elif exc.args:
                msg = exc.args[0]          # an expression (an f-string ...): a str value at run time
            exc = exc.func
        name = exc.id if isinstance(exc, ast.Name) else None
        if name not in EXCEPTIONS:
            raise self.fnc.error(exc, f"raise supports the builtin exceptions {', '.join(EXCEPTIONS)}",
                                 NotSupportedError)
        return name, msg

    def raise_stmt(self, s, block, env):
        if s.exc is None or s.cause is not None:
            raise self.fnc.error(s, "raise needs an exception (and no 'from') in script", NotSupportedError)
        name, msg = self._exception(s.exc, s, env)
        if isinstance(msg, ast.AST):
            value = self.emit(block, "aten::str", "builtin", [self.expr(msg, block, env)], STR, s)
            block.append(Node("prim::RaiseException", [value], {"exception": name}, self.fnc.where(s)))
            return
        block.append(Node("prim::RaiseException", (), {"exception": name, "message": msg}, self.fnc.where(s)))

    def assert_stmt(self, s, block, env):
        if s.msg is not None and not (isinstance(s.msg, ast.Constant) and isinstance(s.msg.value, str)):
            raise self.fnc.error(s.msg, "an assert's message must be a string literal in script", NotSupportedError)
        cond = self._cond(s.test, block, env)
        node = Node("prim::If", [cond], {}, self.fnc.where(s))
        ok, fail = Block(self.graph), Block(self.graph)
        fail.append(Node("prim::RaiseException", (), {"exception": "AssertionError",
                                                     "message": s.msg.value if s.msg is not None else ""},
                         self.fnc.where(s)))
        node.blocks = [ok, fail]
        block.append(node)

    def stmt(self, s, block, env):
        fnc = self.fnc
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:
                raise fnc.error(s, "chained assignment is not supported", NotSupportedError)
            target = s.targets[0]
            value = self.expr(s.value, block, env, allow_ref=isinstance(target, ast.Name))
            self.assign(target, value, block, env)
        elif isinstance(s, ast.AnnAssign):
            if s.value is None:
                raise fnc.error(s, "an annotation without a value is not supported", NotSupportedError)
            self.assign(s.target, self.expr(s.value, block, env), block, env)
        elif isinstance(s, ast.AugAssign):
            if not isinstance(s.target, ast.Name) or type(s.op) not in _AUGOPS and type(s.op) not in _BINOPS:
                raise fnc.error(s, "this augmented assignment is not supported", NotSupportedError)
            a = self.expr(s.target, block, env)
            b = self.expr(s.value, block, env)
            op = _AUGOPS.get(type(s.op)) or _BINOPS[type(s.op)]
            env[s.target.id] = self.emit(block, f"aten::{op}", "operator", [a, b], _binary_type(op, a.type, b.type), s)
        elif isinstance(s, ast.Expr):
            if isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
                return       # a docstring
            self.expr(s.value, block, env)
        elif isinstance(s, ast.Pass):
            return
        elif isinstance(s, ast.Raise):
            self.raise_stmt(s, block, env)
        elif isinstance(s, ast.With):
            self.with_stmt(s, block, env)
        elif isinstance(s, ast.Assert):
            self.assert_stmt(s, block, env)
        elif isinstance(s, ast.For):
            self.for_stmt(s, block, env)
        elif isinstance(s, ast.While):
            self.while_stmt(s, block, env)
        elif isinstance(s, ast.Return):
            raise fnc.error(s, "return is only supported at the end of a block", NotSupportedError)
        else:
            what = {ast.Break: "break", ast.Continue: "continue", ast.With: "with statements",
                    ast.Try: "try blocks",
                    ast.Delete: "del statements", ast.Global: "global variables", ast.Nonlocal: "nonlocal variables",
                    ast.FunctionDef: "nested function definitions", ast.ClassDef: "class definitions",
                    ast.Import: "imports", ast.ImportFrom: "imports"}.get(type(s), type(s).__name__)
            raise fnc.error(s, f"{what} aren't supported", UnsupportedNodeError)

    def with_stmt(self, s, block, env):
        """``with tt.no_grad():`` / ``with tt.enable_grad():`` (prim::With, one block)."""
        import tritensor
        item = s.items[0] if len(s.items) == 1 else None
        ctx = None
        if item is not None and item.optional_vars is None and isinstance(item.context_expr, ast.Call) and \
                not item.context_expr.args and not item.context_expr.keywords:
            ref = self._expr(item.context_expr.func, block, env)
            if isinstance(ref, _ModuleRef):
                ctx = {tritensor.no_grad: "no_grad", tritensor.enable_grad: "enable_grad"}.get(ref.obj)
        if ctx is None:
            raise self.fnc.error(s, "with statements aren't supported (except with tt.no_grad() and "
                                 "tt.enable_grad())", UnsupportedNodeError)
        node = Node("prim::With", [], {"context": ctx}, self.fnc.where(s))
        b = Block(self.graph)
        e = dict(env)
        if self.block(s.body, b, e) is not None or _returns(s.body):
            raise self.fnc.error(s, "return inside a with block is not supported", NotSupportedError)
        changed = [n for n in e if not isinstance(e[n], _ModuleRef) and e[n] is not env.get(n)]
        b.returns = [e[n] for n in changed]
        node.blocks.append(b)
        block.append(node)
        for n in changed:
            env[n] = node.add_output(self.graph, e[n].type, n)

    def assign(self, target, v, block, env):
        if isinstance(target, ast.Name):
            env[target.id] = v
            return
        if isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts):
            n = block.append(Node("prim::TupleUnpack", [v], {}, self.fnc.where(target)))
            elems = v.type.elements if v.type.kind == "Tuple" and len(v.type.elements) == len(target.elts) else \
                [TENSOR] * len(target.elts)
            for e, t in zip(target.elts, elems):
                env[e.id] = n.add_output(self.graph, t, e.id)
            return
        raise self.fnc.error(target, "this assignment target is not supported (only names and tuples of names)",
                             NotSupportedError)

    def _cond(self, test, block, env):
        c = self.expr(test, block, env)
        if _constant_of(c) is not _NOT_CONSTANT:
            return self.const(bool(_constant_of(c)), block, test)
        if c.type.kind != "bool":        # a tensor (or number) read as a bool: aten::Bool
            c = self.emit(block, "aten::bool", "builtin", [c], BOOL, test)
        return c

    def if_stmt(self, s, block, env, rest, cond):
        fnc = self.fnc
        node = Node("prim::If", [cond], {}, fnc.where(s))
        then_ret, else_ret = _returns(s.body), _returns(s.orelse)
        bodies = [s.body, s.orelse]
        if then_ret and not else_ret:
            bodies[1] = list(s.orelse) + list(rest)
        elif else_ret and not then_ret:
            bodies[0] = list(s.body) + list(rest)
        envs, rets = [], []
        for stmts in bodies:
            b = Block(self.graph)
            e = dict(env)
            rets.append(self.block(stmts, b, e))
            node.blocks.append(b)
            envs.append(e)
        block.append(node)
        rets_raw = list(rets)
        if rets[0] is RAISED and rets[1] is RAISED:
            return RAISED
        if RAISED in rets and None in rets:          # one branch raises, the other goes on
            rets = [None, None]
        elif RAISED in rets:                         # one branch raises, the other returns
            k = rets.index(RAISED)
            other = rets[1 - k]
            node.blocks[k].returns = [self.const(None, node.blocks[k], s) for _ in other]
            node.blocks[1 - k].returns = other
            return [node.add_output(self.graph, other[0].type)]
        if rets[0] is not None or rets[1] is not None:
            if rets[0] is None or rets[1] is None:
                raise fnc.error(s, "a branch of this if neither returns nor reaches a return", NotSupportedError)
            t0, t1 = rets[0][0].type, rets[1][0].type
            if _unify(t0, t1) is None:
                raise fnc.error(s, f"Previous return statement returned a value of type {t0} but this return "
                                f"statement returns a value of type {t1}")
            for b, r in zip(node.blocks, rets):
                b.returns = r
            return [node.add_output(self.graph, _unify(t0, t1))]
        for k, r in enumerate(rets_raw):
            if r is RAISED:                          # the raising branch's variables: the others'
                envs[k] = dict(envs[1 - k])
        names = [n for n in dict.fromkeys(list(envs[0]) + list(envs[1]))
                 if n in envs[0] and n in envs[1] and (envs[0][n] is not env.get(n) or envs[1][n] is not env.get(n))]
        for n in names:
            a, b_ = envs[0][n], envs[1][n]
            if isinstance(a, _ModuleRef) or isinstance(b_, _ModuleRef):
                continue
            if _unify(a.type, b_.type) is None:
                raise fnc.error(s, f"{n} is not defined in the false branch" if n not in env else
                                f"Type mismatch: {n} is set to type {a.type} in the true branch and type {b_.type} "
                                "in the false branch")
            node.blocks[0].returns.append(a)
            node.blocks[1].returns.append(b_)
            env[n] = node.add_output(self.graph, _unify(a.type, b_.type), n)
        return None

    def _carried(self, body, env):
        assigned = []
        for st in body:
            for sub in ast.walk(st):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store) and sub.id not in assigned:
                    assigned.append(sub.id)
        return [n for n in assigned if n in env and not isinstance(env[n], _ModuleRef)]

    def _loop(self, s, block, env, trip, cond, index_name, start, body_cond):
        """prim::Loop(trip, cond, *carried) with the body ``s.body``."""
        fnc = self.fnc
        carried = self._carried(s.body, env)
        node = Node("prim::Loop", [trip, cond] + [env[n] for n in carried], {}, fnc.where(s))
        b = Block(self.graph)
        i = b.add_input(INT, index_name if start is None else None)
        e = dict(env)
        for n in carried:
            e[n] = b.add_input(env[n].type, n)
        if index_name is not None:
            e[index_name] = i if start is None else self.emit(b, "aten::add", "operator", [start, i], INT, s)
        if self.block(s.body, b, e) is not None or any(_returns([st]) for st in s.body):
            raise fnc.error(s, "return inside a loop is not supported", NotSupportedError)
        for n in carried:
            if e[n].type.kind != env[n].type.kind:
                raise fnc.error(s, f"Variable '{n}' previously had type {env[n].type} but is now being assigned "
                                f"to a value of type {e[n].type}")
        b.returns = [body_cond(b, e)] + [e[n] for n in carried]
        node.blocks.append(b)
        block.append(node)
        for n in carried:
            env[n] = node.add_output(self.graph, env[n].type, n)

    def for_stmt(self, s, block, env):
        fnc = self.fnc
        if s.orelse:
            raise fnc.error(s, "for ... else is not supported", NotSupportedError)
        it = s.iter
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" and \
                it.func.id not in env and not it.keywords and 1 <= len(it.args) <= 2:
            if not isinstance(s.target, ast.Name):
                raise fnc.error(s.target, "a range loop's target must be a name", NotSupportedError)
            args = [self.expr(a, block, env) for a in it.args]
            for a, a_node in zip(args, it.args):
                if a.type.kind != "int":
                    raise fnc.error(a_node, f"range() expects int arguments, not {a.type}")
            start = None
            trip = args[0]
            if len(args) == 2:
                start = args[0]
                trip = self.emit(block, "aten::sub", "operator", [args[1], args[0]], INT, s)
            true = self.const(True, block, s)
            self._loop(s, block, env, trip, true, s.target.id, start, lambda b, e: true)
            return
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range":
            raise fnc.error(it, "range() with a step is not supported", NotSupportedError)
        ref = self.expr(it, block, env, allow_ref=True)
        if isinstance(ref, _ModuleRef) and hasattr(ref.obj, "named_children") and isinstance(s.target, ast.Name):
            for child_name, child in ref.obj.named_children():      # unrolled (Sequential, ModuleList)
                env[s.target.id] = _ModuleRef(child, ref.prefix + child_name + ".")
                for st in s.body:
                    self.stmt(st, block, env)
            return
        raise fnc.error(it, "for loops are supported over range(...) and module containers only",
                        NotSupportedError)

    def while_stmt(self, s, block, env):
        if s.orelse:
            raise self.fnc.error(s, "while ... else is not supported", NotSupportedError)
        cond = self._cond(s.test, block, env)
        trip = self.const(INT_MAX, block, s)
        self._loop(s, block, env, trip, cond, None, None, lambda b, e: self._cond(s.test, b, e))

    # ------------------------------------------------------------------ expressions
    def expr(self, x, block, env, allow_ref=False):
        v = self._expr(x, block, env)
        if isinstance(v, _ModuleRef) and not allow_ref:
            raise self.fnc.error(x, f"'{ast.unparse(x)}' is a module or function, not a value")
        return v

    def _global(self, name, node):
        if name in self.fnc.globals:
            obj = self.fnc.globals[name]
        elif hasattr(builtins, name):
            obj = getattr(builtins, name)
        else:
            raise self.fnc.error(node, f"undefined value {name}")
        return obj

    def _resolve_obj(self, obj, block, node):
        if isinstance(obj, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)) or \
                callable(obj) and not isinstance(obj, (Tensor,)):
            return _ModuleRef(obj)
        if isinstance(obj, Tensor):
            return self.const(obj, block, node)
        return self.value(obj, block, node)

    def _expr(self, x, block, env):
        fnc = self.fnc
        if isinstance(x, ast.Name):
            if x.id in env:
                return env[x.id]
            return self._resolve_obj(self._global(x.id, x), block, x)
        if isinstance(x, ast.Constant):
            if x.value is Ellipsis:
                return self.const(Ellipsis, block, x)
            return self.const(x.value, block, x)
        if isinstance(x, ast.BinOp):
            if type(x.op) not in _BINOPS:
                raise fnc.error(x, "this operator is not supported", NotSupportedError)
            a, b = self.expr(x.left, block, env), self.expr(x.right, block, env)
            op = _BINOPS[type(x.op)]
            return self.emit(block, f"aten::{op}", "operator", [a, b], _binary_type(op, a.type, b.type), x)
        if isinstance(x, ast.UnaryOp):
            a = self.expr(x.operand, block, env)
            op = _UNOPS[type(x.op)]
            t = BOOL if op == "not_" else a.type
            return self.emit(block, f"aten::{op}", "operator", [a], t, x)
        if isinstance(x, ast.Compare):
            if len(x.ops) != 1:
                raise fnc.error(x, "chained comparisons are not supported", NotSupportedError)
            if type(x.ops[0]) not in _CMPOPS:
                raise fnc.error(x, "this comparison is not supported", NotSupportedError)
            a, b = self.expr(x.left, block, env), self.expr(x.comparators[0], block, env)
            op = _CMPOPS[type(x.ops[0])]
            return self.emit(block, f"aten::{op}", "operator", [a, b], _binary_type(op, a.type, b.type), x)
        if isinstance(x, ast.BoolOp):          # short-circuit: prim::If, as TorchScript's
            left = self._cond(x.values[0], block, env)
            for right_node in x.values[1:]:
                known = _constant_of(left)
                if known is not _NOT_CONSTANT:       # short-circuit at compile time
                    stop = (not known) if isinstance(x.op, ast.And) else known
                    left = left if stop else self._cond(right_node, block, env)
                    continue
                node = Node("prim::If", [left], {}, fnc.where(x))
                t, f = Block(self.graph), Block(self.graph)
                if isinstance(x.op, ast.And):
                    t.returns = [self._cond(right_node, t, dict(env))]
                    f.returns = [self.const(False, f, x)]
                else:
                    t.returns = [self.const(True, t, x)]
                    f.returns = [self._cond(right_node, f, dict(env))]
                node.blocks = [t, f]
                block.append(node)
                left = node.add_output(self.graph, BOOL)
            return left
        if isinstance(x, ast.IfExp):
            cond = self._cond(x.test, block, env)
            known = _constant_of(cond)
            if known is not _NOT_CONSTANT:
                return self.expr(x.body if known else x.orelse, block, env)
            node = Node("prim::If", [cond], {}, fnc.where(x))
            t, f = Block(self.graph), Block(self.graph)
            t.returns = [self.expr(x.body, t, dict(env))]
            f.returns = [self.expr(x.orelse, f, dict(env))]
            typ = _unify(t.returns[0].type, f.returns[0].type)
            if typ is None:
                raise fnc.error(x, "the two sides of a conditional expression have different types")
            node.blocks = [t, f]
            block.append(node)
            return node.add_output(self.graph, typ)
        if isinstance(x, (ast.Tuple, ast.List)):
            parts = [self.expr(e, block, env) for e in x.elts]
            n = block.append(Node("prim::TupleConstruct", parts, {"list": isinstance(x, ast.List)}, fnc.where(x)))
            return n.add_output(self.graph, Type("Tuple", elements=[p.type for p in parts]))
        if isinstance(x, ast.Subscript):
            base = self.expr(x.value, block, env)
            idx = self._index(x.slice, block, env)
            if base.type.kind == "Tuple" and idx.node is not None and idx.node.kind == "prim::Constant" and \
                    isinstance(idx.node.attrs["value"], int) and base.type.elements:
                t = base.type.elements[idx.node.attrs["value"]]
            elif base.type.kind == "Tuple":
                t = INT if base.type.elements == () else TENSOR
            else:
                t = TENSOR
            return self.emit(block, "aten::getitem", "operator", [base, idx], t, x)
        if isinstance(x, ast.Attribute):
            return self.attribute(x, block, env)
        if isinstance(x, ast.JoinedStr):            # f"...{v}...": str() of each value, concatenated
            parts = []
            for v in x.values:
                if isinstance(v, ast.Constant):
                    parts.append(self.const(v.value, block, x))
                    continue
                if v.conversion not in (-1, ord("s")) or v.format_spec is not None:
                    raise fnc.error(v, "f-string conversions and format specs are not supported", NotSupportedError)
                parts.append(self.emit(block, "aten::str", "builtin", [self.expr(v.value, block, env)], STR, v))
            out = parts[0] if parts else self.const("", block, x)
            for p in parts[1:]:
                out = self.emit(block, "aten::add", "operator", [out, p], STR, x)
            return out
        if isinstance(x, ast.Call):
            return self.call(x, block, env)
        what = {ast.Lambda: "Lambda aren't supported", ast.ListComp: "List comprehensions aren't supported",
                ast.DictComp: "Dict comprehensions aren't supported", ast.Dict: "Dict literals aren't supported",
                ast.GeneratorExp: "Generator expressions aren't supported", 
                ast.Starred: "Starred expressions aren't supported", ast.Set: "Set literals aren't supported"}
        raise fnc.error(x, what.get(type(x), f"{type(x).__name__} expressions aren't supported"),
                        UnsupportedNodeError)

    def _index(self, s, block, env):
        if isinstance(s, ast.Slice):
            parts = [self.expr(p, block, env) if p is not None else self.const(None, block, s)
                     for p in (s.lower, s.upper, s.step)]
            return self.emit(block, "aten::slice", "builtin", parts, Type("slice"), s)
        if isinstance(s, ast.Tuple):
            parts = [self._index(e, block, env) for e in s.elts]
            n = block.append(Node("prim::TupleConstruct", parts, {}, self.fnc.where(s)))
            return n.add_output(self.graph, Type("Tuple", elements=[p.type for p in parts]))
        return self.expr(s, block, env)

    def attribute(self, x, block, env):
        fnc = self.fnc
        base = self._expr(x.value, block, env)
        if isinstance(base, _ModuleRef):
            obj = base.obj
            if _is_nn_module(obj):
                params = dict(obj.named_parameters(recurse=False))
                params.update(obj.named_buffers(recurse=False))
                if x.attr in params:
                    n = block.append(Node("prim::GetAttr", (), {"name": base.prefix + x.attr}, fnc.where(x)))
                    return n.add_output(self.graph, TENSOR, (base.prefix + x.attr).replace(".", "_"))
                if x.attr in obj._modules:
                    return _ModuleRef(obj._modules[x.attr], base.prefix + x.attr + ".")
                if not hasattr(obj, x.attr):
                    raise fnc.error(x, f"Module '{type(obj).__name__}' has no attribute '{x.attr}'")
                val = getattr(obj, x.attr)
                if isinstance(val, types.MethodType):
                    return _ModuleRef(val, base.prefix)
                return self._resolve_obj(val, block, x)
            if not hasattr(obj, x.attr):
                raise fnc.error(x, f"Module '{getattr(obj, '__name__', obj)}' has no attribute '{x.attr}'")
            return self._resolve_obj(getattr(obj, x.attr), block, x)
        if base.type.kind == "Tensor":
            if x.attr not in TENSOR_ATTRS:
                raise fnc.error(x, f"Tensor attribute '{x.attr}' is not supported in script", NotSupportedError)
            return self.emit(block, f"aten::{x.attr}", "attr", [base], TENSOR_ATTRS[x.attr], x)
        raise fnc.error(x, f"'{base.type}' object has no attribute '{x.attr}'")

    def _args(self, call, block, env):
        args = []
        for a in call.args:
            if isinstance(a, ast.Starred):
                raise self.fnc.error(a, "Starred expressions aren't supported", UnsupportedNodeError)
            args.append(self.expr(a, block, env))
        names, kw = [], []
        for k in call.keywords:
            if k.arg is None:
                raise self.fnc.error(k, "**kwargs are not supported", NotSupportedError)
            names.append(k.arg)
            kw.append(self.expr(k.value, block, env))
        return args, names, kw

    def call(self, x, block, env):
        fnc = self.fnc
        f = x.func
        if isinstance(f, ast.Attribute):
            base = self._expr(f.value, block, env)
            if not isinstance(base, _ModuleRef):          # a method of a value
                args, names, kw = self._args(x, block, env)
                if base.type.kind != "Tensor":
                    raise fnc.error(x, f"methods of '{base.type}' values are not supported", NotSupportedError)
                if f.attr.startswith("_") or not callable(getattr(Tensor, f.attr, None)):
                    raise fnc.error(f, f"'Tensor' object has no attribute or method '{f.attr}'")
                return self.emit(block, f"aten::{f.attr}", "method", [base] + args + kw,
                                 _METHOD_TYPES.get(f.attr, TENSOR), x, names=names)
            target = self.attribute(f, block, env)
        else:
            target = self._expr(f, block, env)
        if not isinstance(target, _ModuleRef):
            raise fnc.error(f, f"'{ast.unparse(f)}' is not callable")
        obj = target.obj
        if obj is type or obj is getattr:          # on compile-time objects: evaluated now
            refs = [self._expr(a, block, env) for a in x.args]
            consts = [r.obj if isinstance(r, _ModuleRef) else
                      r.node.attrs["value"] if r.node is not None and r.node.kind == "prim::Constant" else r
                      for r in refs]
            if obj is type and len(refs) == 1 and isinstance(refs[0], _ModuleRef):
                return _ModuleRef(type(consts[0]))
            if obj is getattr and len(refs) == 2 and isinstance(refs[0], _ModuleRef) and isinstance(consts[1], str):
                if not hasattr(consts[0], consts[1]):
                    raise fnc.error(x, f"'{consts[0]!r}' has no attribute '{consts[1]}'")
                return self._resolve_obj(getattr(consts[0], consts[1]), block, x)
            if obj is type:
                raise fnc.error(x, "type() of a run-time value is not supported", NotSupportedError)
            raise fnc.error(x, "getattr() needs a module or class and a constant name in script", NotSupportedError)
        import tritensor
        if obj is tritensor.jit.annotate:
            return self.expr(x.args[1], block, env)
        if obj is tritensor.jit.is_scripting:
            return self.const(True, block, x)
        if _is_nn_module(obj):                   # a submodule: its forward, inlined
            return self.inline(obj.forward, x, block, env, target.prefix, obj)
        if isinstance(obj, types.MethodType) and _is_nn_module(obj.__self__):
            return self.inline(obj.__func__, x, block, env, target.prefix, obj.__self__)
        args, names, kw = self._args(x, block, env)
        if getattr(obj, "_tt_jit_unused", False):     # torch: the call compiles to a raise
            block.append(Node("prim::RaiseException", (), {
                "exception": "RuntimeError", "message": f"{obj.__name__} was marked @tt.jit.unused and cannot be called"},
                fnc.where(x)))
            placeholder = self.const(None, block, x)      # (never read: the raise comes first)
            ret = inspect.signature(obj).return_annotation
            placeholder.type = {int: INT, float: FLOAT, bool: BOOL}.get(ret, TENSOR)
            return placeholder
        if getattr(obj, "_tt_jit_ignore", False):     # torch: left to Python (and unsaveable)
            ret = inspect.signature(obj).return_annotation
            t = {int: INT, float: FLOAT, bool: BOOL}.get(ret, TENSOR)
            return self._python_op(block, obj, args + kw, names, t, x)
        if obj in BUILTINS.values() and obj is not range:
            name = next(k for k, v in BUILTINS.items() if v is obj)
            t = {"int": INT, "float": FLOAT, "bool": BOOL, "len": INT}.get(name)
            if t is None:
                t = TENSOR if any(a.type.kind == "Tensor" for a in args) else \
                    (FLOAT if any(a.type.kind == "float" for a in args) else INT)
            return self.emit(block, f"aten::{name}", "builtin", args + kw, t, x, names=names)
        if getattr(obj, "__module__", None) == "math" or obj in MATH.values():
            name = next((k for k, v in MATH.items() if v is obj), None)
            if name is None:
                raise fnc.error(f, f"math.{getattr(obj, '__name__', '?')} is not supported in script")
            return self.emit(block, f"aten::{name}", "math", args + kw, FLOAT, x, names=names)
        qual = _tritensor_name(obj)
        if qual is not None:
            return self.emit(block, f"aten::{qual}", "fn", args + kw, TENSOR, x, names=names)
        from . import ScriptFunction
        if isinstance(obj, ScriptFunction):
            graph, name = obj.graph, obj.name
        elif isinstance(obj, types.FunctionType):
            if names:
                raise fnc.error(x, "keyword arguments to compiled functions are not supported", NotSupportedError)
            graph = self.cache.get(obj)
            if graph is None:
                graph = Compiler(self.cache, self.stack).function(obj)
                self.cache[obj] = graph
            name = obj.__name__
        else:
            raise fnc.error(f, f"Python builtin {obj!r} is currently not supported in Torchscript",
                            NotSupportedError)
        if len(args) != len(graph.inputs):
            raise fnc.error(x, f"{name}() expected {len(graph.inputs)} argument(s) but received {len(args)}")
        n = block.append(Node("prim::CallFunction", args, {"graph": graph, "name": name}, fnc.where(x)))
        return n.add_output(self.graph, graph.returns[0].type)

    def _python_op(self, block, obj, inputs, names, t, node):
        attrs = {"name": obj.__name__, "_callable": obj}
        if names:
            attrs["names"] = tuple(names)
        n = block.append(Node("prim::PythonOp", inputs, attrs, self.fnc.where(node)))
        return n.add_output(self.graph, t)

    def inline(self, fn, call, block, env, prefix, module):
        """A submodule's forward compiled into this graph (its attributes under ``prefix``)."""
        if fn in self.stack:
            raise self.fnc.error(call, "recursive module calls are not supported")
        args, names, kw = self._args(call, block, env)
        if names:
            raise self.fnc.error(call, "keyword arguments to submodules are not supported", NotSupportedError)
        sub = Compiler(self.cache, self.stack + (fn,))
        sub.graph = self.graph
        sub.fnc = _Function(fn)
        params = list(sub.fnc.defn.args.args)
        if len(args) != len(params) - 1:
            raise self.fnc.error(call, f"forward() expected {len(params) - 1} argument(s) but received {len(args)}")
        e = {params[0].arg: _ModuleRef(module, prefix)}
        for p, a in zip(params[1:], args):
            e[p.arg] = a
        ret = sub.block(sub.fnc.defn.body, block, e)
        if ret is None:
            return self.const(None, block, call)
        return ret[0]


_NOT_CONSTANT = object()


def _constant_of(v):
    """The Python value of a compile-time constant (not a tensor), else _NOT_CONSTANT."""
    node = getattr(v, "node", None)
    if node is None or node.kind != "prim::Constant":
        return _NOT_CONSTANT
    value = node.attrs.get("value")
    if isinstance(value, Tensor) or not (value is None or isinstance(value, (bool, int, float, str, tuple))):
        return _NOT_CONSTANT
    return value


def _unify(a, b):
    """The type of a value that is ``a`` on one path and ``b`` on the other: the same kind, or
    an optional one (None on one path, as TorchScript's Optional[T]); None when they differ."""
    if a.kind == b.kind:
        return a if a.kind != "Tensor" or a == b else TENSOR
    if a.kind == "NoneType":
        return b
    if b.kind == "NoneType":
        return a
    if {a.kind, b.kind} == {"int", "float"}:
        return None
    return None


def _returns(stmts):
    """Whether every path through ``stmts`` returns."""
    for s in stmts:
        if isinstance(s, (ast.Return, ast.Raise)):
            return True
        if isinstance(s, ast.If) and _returns(s.body) and _returns(s.orelse):
            return True
    return False


def _is_nn_module(obj):
    from ..nn.modules.module import Module
    return isinstance(obj, Module)


def _tritensor_name(obj):
    """``obj``'s dotted name under tritensor (tt.sigmoid -> "sigmoid", F.relu -> "nn.functional.relu"),
    or None when it is not a public tritensor function."""
    import tritensor
    from ._serialization import _public_function
    mod = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__name__", None)
    if not mod.startswith("tritensor") or name is None or isinstance(obj, type):
        return None
    for prefix, ns in (("", tritensor), ("nn.functional.", tritensor.nn.functional), ("linalg.", tritensor.linalg),
                       ("special.", tritensor.special)):
        if getattr(ns, name, None) is obj and _public_function(prefix + name):
            return prefix + name
    return None


del math, NONE
