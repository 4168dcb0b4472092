"""Symbolic sizes (issue 26): a trace whose graph serves every size, for tt.compile(dynamic=True)
and tt.jit.trace (torch's trace records aten::size too; there a size read as a plain value warns
with torch's TracerWarning instead of being guarded).

While a symbolic trace runs (``Tracer(symbolic=True)``), ``x.size(d)``, ``x.shape`` and
``x.numel()`` of a tensor the graph computes (an input or an op's result) give ``SymInt``s: ints
with the trace's value that remember where they came from (an expression over ``aten::size`` /
``aten::numel`` of graph values). Arithmetic (+, -, *, //, %, unary -) keeps them symbolic. When
one reaches the graph (an op's argument, a view's shape) the tracer writes its expression as
nodes (``aten::size(%x, 0)``, ``aten::mul`` ...), so the graph computes the size at run time.

Calls taking sizes are recorded as one node with the symbolic arguments while a symbolic trace
runs (Tensor.view/reshape/expand/repeat/new_*, a tensor's operators with a size operand,
tt.zeros/ones/empty/full/reshape: ``SIZED_*``), their internals not recorded, since they turn
sizes into Python ints; so are calls that compute sizes from their operands' inside (flatten,
matmul, F.linear: ``WHOLE_*``).

Anything else that reads a SymInt as a plain value (a comparison, ``bool``, ``int``, an index,
a float) decides something for this trace's sizes only: it is a guard, ``(expression, value)``,
checked against the arguments' sizes before the graph runs (a failing guard means a new capture).
A guard over the size of an intermediate tensor cannot be checked before the graph runs: the
capture then is not dynamic (``Tracer.static_reason``).
Sizes read through a tensor's private ``_shape`` (library internals) are not symbolic; the
calls above, which hand user sizes to such code, are recorded whole for that reason.
"""
from __future__ import annotations

import functools
import operator
import sys
import threading

from .. import _tracing
from ..tensor import Size, Tensor

_ARITH = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "floordiv": operator.floordiv,
          "mod": operator.mod}
_COMPARE = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
            "ge": operator.ge}


def _plain(x):
    return int.__int__(x) if isinstance(x, SymInt) else x


def _expr(x):
    return x.expr if isinstance(x, SymInt) else x


def _tracer():
    t = _tracing.state.tracer
    return t if t is not None and getattr(t, "symbolic", False) and not _tracing.state.suspended else None


def _guard(expr, value, what="integer"):
    """This trace relies on ``expr == value`` (a plain read of a SymInt as ``what``: "integer",
    "float", "boolean" (a comparison's result), "index"; tt.jit.trace warns instead, as torch's)."""
    tracer = _tracer()
    if tracer is not None:
        tracer.add_guard(expr, value, what)


class SymInt(int):
    """An int of a symbolic trace that knows its expression (``expr``: ("size", value, dim),
    ("numel", value), (arith, a, b) or ("neg", a); a and b are expressions or ints)."""

    def __new__(cls, value, expr):
        self = int.__new__(cls, value)
        self.expr = expr
        return self

    __hash__ = int.__hash__

    def __repr__(self):
        return repr(int.__int__(self))

    __str__ = __repr__

    def __neg__(self):
        return SymInt(-int.__int__(self), ("neg", self.expr))

    def __pos__(self):
        return self

    def _specialise(self, what="integer"):
        v = int.__int__(self)
        _guard(self.expr, v, what)
        return v

    def __int__(self):
        return self._specialise()

    def __index__(self):
        return self._specialise("index")

    def __float__(self):
        return float(self._specialise("float"))

    def __bool__(self):
        return bool(self._specialise("boolean"))


def _arith(name, fn, reflected):
    def method(self, other):
        if isinstance(other, bool) or not isinstance(other, int):
            if not isinstance(other, float):
                return NotImplemented            # (a tensor's reflected operator records it)
            return fn(other, self._specialise()) if reflected else fn(self._specialise(), other)
        a, b = (other, self) if reflected else (self, other)
        return SymInt(fn(_plain(a), _plain(b)), (name, _expr(a), _expr(b)))
    return method


def _compare(name, fn):
    def method(self, other):
        if isinstance(other, bool) or not isinstance(other, int):
            if not isinstance(other, float):
                return NotImplemented
            return fn(self._specialise(), other)
        result = fn(int.__int__(self), _plain(other))
        _guard((name, self.expr, _expr(other)), result, "boolean")
        return result
    return method


def _specialising(name):
    base = getattr(int, name)

    def method(self, *args):
        return base(self._specialise(), *(_plain(a) if not isinstance(a, SymInt) else a._specialise()
                                         for a in args))
    return method


for _name, _fn in _ARITH.items():
    setattr(SymInt, f"__{_name}__", _arith(_name, _fn, False))
    setattr(SymInt, f"__r{_name}__", _arith(_name, _fn, True))
for _name, _fn in _COMPARE.items():
    setattr(SymInt, f"__{_name}__", _compare(_name, _fn))
for _name in ("__truediv__", "__rtruediv__", "__pow__", "__rpow__", "__lshift__", "__rlshift__", "__rshift__",
              "__rrshift__", "__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__", "__abs__",
              "__invert__", "__divmod__", "__rdivmod__", "__round__", "__trunc__", "__floor__", "__ceil__",
              "__format__"):
    setattr(SymInt, _name, _specialising(_name))


def contains_symbolic(x):
    if isinstance(x, SymInt):
        return True
    if isinstance(x, (tuple, list)):
        return any(contains_symbolic(e) for e in x)
    if isinstance(x, slice):
        return contains_symbolic((x.start, x.stop, x.step))
    if isinstance(x, dict):
        return any(contains_symbolic(e) for e in x.values())
    return False


def evaluate(expr, sizes):
    """``expr``'s value for the arguments' sizes (``sizes``: id(graph input) -> its shape)."""
    if isinstance(expr, int):
        return expr
    kind = expr[0]
    if kind == "size":
        return sizes[id(expr[1])][expr[2]]
    if kind == "numel":
        n = 1
        for d in sizes[id(expr[1])]:
            n *= d
        return n
    if kind == "neg":
        return -evaluate(expr[1], sizes)
    fn = _ARITH.get(kind) or _COMPARE[kind]
    return fn(evaluate(expr[1], sizes), evaluate(expr[2], sizes))


def leaves(expr):
    """The graph values an expression reads sizes of."""
    if isinstance(expr, int):
        return []
    if expr[0] in ("size", "numel"):
        return [expr[1]]
    return [v for e in expr[1:] for v in leaves(e)]


# ---------------------------------------------------------------------------- Tensor's sizes


def _symbolic_value(t, depth):
    """The graph value whose sizes are symbolic: an input or an op's result (not a constant or
    a module's parameter, whose sizes are fixed), read by the user's code (``depth``: its frame;
    tritensor's own code reads plain sizes)."""
    tracer = _tracer()
    if tracer is None or depth is not None and \
            sys._getframe(depth).f_globals.get("__name__", "").startswith("tritensor"):
        return None
    v = tracer.env.get(id(t))
    if v is None or (v.node is not None and v.node.kind in ("prim::Constant", "prim::GetAttr")):
        return None
    return v


class SymSize(Size):
    """A Size of SymInts: its slices and sums keep them (Size's own would read them as ints)."""

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return tuple.__new__(SymSize, r) if isinstance(item, slice) else r

    def __add__(self, other):
        return tuple.__new__(SymSize, tuple(self) + tuple(other))


_ORIGINAL = {}


def _size(self, dim=None, _depth=2):
    v = _symbolic_value(self, _depth)
    if v is None:
        return _ORIGINAL["size"](self, dim)
    if dim is None:
        return tuple.__new__(SymSize, [SymInt(n, ("size", v, i)) for i, n in enumerate(self._shape)])
    d = self._wrap_dim(dim)
    return SymInt(self._shape[d], ("size", v, d))


def _shape(self):
    return _size(self, None, 3)


def _numel(self):
    v = _symbolic_value(self, 2)
    if v is None:
        return _ORIGINAL["numel"](self)
    return SymInt(self._shape.numel(), ("numel", v))


# Calls that take sizes: recorded whole when an argument is symbolic (methods of Tensor, functions of tt)
SIZED_METHODS = ("view", "reshape", "expand", "repeat", "new_zeros", "new_ones", "new_empty", "new_full",
                 # a tensor with a size as its other operand
                 "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
                 "__rtruediv__", "__floordiv__", "__rfloordiv__", "__pow__", "__rpow__",
                 "__getitem__")      # x[:x.size(0) - 1]
SIZED_FUNCTIONS = ("zeros", "ones", "empty", "full", "reshape")
# Calls recorded whole for any symbolic operand: inside, they compute sizes from their operands'
# sizes (flatten's view, matmul's and linear's flattening of batch dimensions)
WHOLE_METHODS = ("flatten", "matmul", "__matmul__")
WHOLE_FUNCTIONS = ("flatten", "matmul", "nn.functional.linear")


def _sized(call, name, fn, whole=False):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        tracer = _tracer()
        if tracer is None or not (contains_symbolic((args, kwargs)) or whole and _computes_sizes(name, args)):
            return fn(*args, **kwargs)
        _tracing.state.suspended += 1
        try:
            out = fn(*args, **kwargs)
        finally:
            _tracing.state.suspended -= 1
        if name in _DUNDERS:          # a tensor's operator: recorded as the operator (a + b)
            op, reflected = _DUNDERS[name]
            tracer.record_call(op, args[::-1] if reflected else args, kwargs, out, call="operator")
        else:
            tracer.record_call(name, args, kwargs, out, call=call)
        return out
    return wrapper


_DUNDERS = {f"__{r}{op}__": (op, r == "r") for op in ("add", "sub", "mul", "truediv", "floordiv", "pow")
            for r in ("", "r")}
_DUNDERS["__getitem__"] = ("getitem", False)


def _computes_sizes(name, args):
    """Whether a WHOLE_* call computes sizes from a symbolic operand's sizes: flatten always,
    matmul and linear when they flatten batch dimensions (an operand of rank > 2)."""
    symbolic = [a for a in args if isinstance(a, Tensor) and _symbolic_value(a, None) is not None]
    if name == "flatten":
        return bool(symbolic)
    return any(a.dim() > 2 for a in symbolic)


_lock = threading.Lock()
_active = [0]


def activate():
    """Install the symbolic size methods (while one or more symbolic traces run)."""
    import tritensor
    with _lock:
        _active[0] += 1
        if _active[0] > 1:
            return
        _ORIGINAL["size"], _ORIGINAL["numel"] = Tensor.size, Tensor.numel
        _ORIGINAL["shape"] = Tensor.__dict__["shape"]
        Tensor.size, Tensor.numel, Tensor.shape = _size, _numel, property(_shape)
        for name in SIZED_METHODS + WHOLE_METHODS:
            _ORIGINAL["method." + name] = Tensor.__dict__[name]
            setattr(Tensor, name, _sized("method", name, Tensor.__dict__[name], name in WHOLE_METHODS))
        for name in SIZED_FUNCTIONS + WHOLE_FUNCTIONS:
            owner, attr = _owner(tritensor, name)
            _ORIGINAL["fn." + name] = getattr(owner, attr)
            setattr(owner, attr, _sized("fn", name, getattr(owner, attr), name in WHOLE_FUNCTIONS))


def _owner(root, dotted):
    *path, attr = dotted.split(".")
    for part in path:
        root = getattr(root, part)
    return root, attr


def deactivate():
    import tritensor
    with _lock:
        _active[0] -= 1
        if _active[0]:
            return
        Tensor.size, Tensor.numel, Tensor.shape = _ORIGINAL["size"], _ORIGINAL["numel"], _ORIGINAL["shape"]
        for name in SIZED_METHODS + WHOLE_METHODS:
            setattr(Tensor, name, _ORIGINAL["method." + name])
        for name in SIZED_FUNCTIONS + WHOLE_FUNCTIONS:
            setattr(*_owner(tritensor, name), _ORIGINAL["fn." + name])
