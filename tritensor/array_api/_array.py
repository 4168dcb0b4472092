"""The standard's array object: ``Array``, the tritensor Tensor that the namespace's functions return.

An ``Array`` is a ``tt.Tensor`` (same storage, views, devices, autograd, DLPack; every tritensor
function takes it), whose operators follow the standard instead of torch (2024.12, "Array object"):

- ``x1 op x2`` is the namespace's function (``x1 // x2`` is ``floor_divide(x1, x2)``), so 0-d arrays
  promote as any other array, Python scalars take the array's dtype, the unsigned types promote by the
  standard's table, and ``//``/``%`` keep the standard's special values (``inf // 2`` is inf);
- ``x1 op= x2`` computes the same and writes the result into x1 (its shape and dtype stay x1's);
- ``x[key]`` and ``x[key] = v`` also take negative slice steps, and a boolean mask with a
  zero-length axis (the standard's "empty mask"), which torch refuses.

The top-level ``tritensor`` keeps torch's rules: a plain Tensor's operators are torch's. Arrays meet
Tensors through the namespace (either kind goes in, an Array comes out), and ``Tensor op Array``
takes the Array's rule (Python asks the subclass's reflected operator first).
"""
from __future__ import annotations

import builtins
import contextlib

import numpy as np

from .. import dtypes as _dt
from ..ops._unsigned import unrestricted
from ..tensor import Tensor
from ._dtypes import _UNSIGNED_WIDE

_SCALARS = (builtins.bool, builtins.int, builtins.float)


class Array(Tensor):
    """A tritensor Tensor with the Array API standard's operators (see the module's docstring)."""
    __slots__ = ()

    # The standard's transposes give arrays too.
    @property
    def T(self):
        """The transpose of a 2-D array (the standard: any other rank is an error)."""
        if self.ndim != 2:
            raise ValueError(f"x.T needs a two-dimensional array, got {self.ndim} dimensions "
                             "(x.mT transposes the last two axes of a stack of matrices)")
        return as_array(self.t(), (self,))

    @property
    def mT(self):
        return as_array(Tensor.mT.fget(self), (self,))

    def to_device(self, device, /, *, stream=None):
        return as_array(Tensor.to_device(self, device, stream=stream), (self,))

    def __int__(self):
        """The element as a Python int: all of a uint64's range (torch's int() stops at int64's)."""
        if self._dtype is _dt.uint64:
            return int(self._scalar_value("int"))
        return Tensor.__int__(self)

    def __index__(self):
        if self._dtype is _dt.uint64 and self.numel() == 1:
            return int(self.item())
        return Tensor.__index__(self)

    def __reduce_ex__(self, proto):
        """Pickles and deep copies (scikit-learn's clone) are Arrays again."""
        rebuild, args = Tensor.__reduce_ex__(self, proto)
        return _rebuild_array, (rebuild, args)

    def __getitem__(self, key):
        flips, key = _standard_key(self, key)
        with _unsigned_context():
            source = self.flip(flips) if flips else self
            return as_array(Tensor.__getitem__(source, key), (self,))

    def __setitem__(self, key, value):
        flips, key = _standard_key(self, key)
        with _unsigned_context():
            if not flips:
                Tensor.__setitem__(self, key, value)
                return
            # Negative steps: write through the flipped copy, then back (tritensor has no negative strides).
            flipped = self.flip(flips)
            Tensor.__setitem__(flipped, key, value)
            self.copy_(flipped.flip(flips))


def _rebuild_array(rebuild, args):
    return as_array(rebuild(*args))


def _unsigned_context():
    """What the namespace's functions run under: every unsigned type's kernels where it lists them."""
    return unrestricted() if _UNSIGNED_WIDE else contextlib.nullcontext()


def as_array(out, inputs=()):
    """``out`` (a Tensor, or a tuple/list/named tuple of them) as Arrays; other values pass through.
    A Tensor that is one of ``inputs`` (a call's arguments: tensors, or lists/tuples of them) is not
    changed: the Array is a view of it (the caller's object keeps its class and torch's operators)."""
    kind = type(out)
    if kind is Tensor and not _is_input(out, inputs):
        out.__class__ = Array             # a fresh result: it becomes the Array itself
        return out
    if kind is Array:
        return out
    if isinstance(out, Tensor):
        return _alias(out)
    if isinstance(out, tuple):
        items = [as_array(o, inputs) for o in out]
        return kind(*items) if hasattr(out, "_fields") else tuple(items)
    if kind is list:
        return [as_array(o, inputs) for o in out]
    return out


def _is_input(t, inputs):
    for x in inputs:
        if x is t or (type(x) in (list, tuple) and builtins.any(y is t for y in x)):
            return True
    return False


def _alias(t):
    """An Array over ``t``'s memory: of an argument returned as it is, or of a Tensor subclass's
    instance (an nn.Parameter, say). Where autograd follows ``t``, a view (gradients flow back to
    t); else ``detach()``'s alias (the same memory and version counter, and no view for dispatch
    to track on every later op)."""
    alias = Tensor.view(t, t.shape) if t._requires_grad or t._grad_fn is not None else Tensor.detach(t)
    alias.__class__ = Array
    return alias


# ----------------------------------------------------------------------------- indexing
def _standard_key(x, key):
    """(dims to flip, key torch's indexing accepts) for the standard's ``key`` on ``x``.

    A slice with a negative step becomes the positive slice over the same elements of ``x`` flipped
    on that axis. A boolean mask with a zero-length axis selects nothing: it becomes an all-false
    mask of the axes it covers (the standard allows a zero where x's axis is longer)."""
    parts = key if isinstance(key, tuple) else (key,)
    if not builtins.any(_needs_rewrite(p, x) for p in parts):
        return (), key
    consumed = builtins.sum(_axes_consumed(p) for p in parts if p is not Ellipsis)
    out, flips, axis = [], [], 0
    for p in parts:
        if p is Ellipsis:
            out.append(p)
            axis += builtins.max(x.ndim - consumed, 0)
            continue
        if isinstance(p, slice) and p.step is not None and p.step < 0 and axis < x.ndim:
            p = _forward_slice(p, x.shape[axis])
            flips.append(axis)
        elif _is_empty_mask(p, x, axis):
            import tritensor as tt
            p = tt.zeros(tuple(x.shape[axis:axis + p.ndim]), dtype=_dt.bool_, device=x.device)
        out.append(p)
        axis += _axes_consumed(p)
    return tuple(flips), tuple(out)


def _needs_rewrite(p, x):
    if isinstance(p, slice):
        return p.step is not None and p.step < 0
    return isinstance(p, Tensor) and p.dtype is _dt.bool_ and p.ndim > 0 and 0 in p.shape


def _axes_consumed(p):
    if p is None or isinstance(p, builtins.bool):
        return 0
    if isinstance(p, Tensor) and p.dtype is _dt.bool_:
        return p.ndim
    return 1


def _is_empty_mask(p, x, axis):
    if not (isinstance(p, Tensor) and p.dtype is _dt.bool_ and p.ndim > 0 and 0 in p.shape):
        return False
    covered = x.shape[axis:axis + p.ndim]
    # the shape must fit x's axes (a zero may stand for any length); else torch's IndexError stays
    return len(covered) == p.ndim and builtins.all(k in (n, 0) for k, n in zip(p.shape, covered))


def _forward_slice(s, n):
    """The positive-step slice that picks, from x flipped on an axis of length n, the elements that
    ``s`` (negative step) picks from x, in the same order."""
    start, stop, step = s.indices(n)
    count = len(range(start, stop, step))
    if count == 0:
        return slice(0, 0, 1)
    first = n - 1 - start
    return slice(first, first + (-step) * (count - 1) + 1, -step)


# ----------------------------------------------------------------------------- operators
# operator name -> the namespace function it is
BINARY = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide", "floordiv": "floor_divide",
    "mod": "remainder", "pow": "pow", "matmul": "matmul", "and": "bitwise_and", "or": "bitwise_or",
    "xor": "bitwise_xor", "lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift",
}
COMPARISONS = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal", "eq": "equal",
               "ne": "not_equal"}
UNARY = {"abs": "abs", "neg": "negative", "pos": "positive", "invert": "bitwise_invert"}


def _operand(other):
    """``other`` as an operand of the standard's operators: an array, or a Python scalar (a NumPy
    scalar counts as its Python value, as in torch); None for anything else (NotImplemented)."""
    if isinstance(other, Tensor) or isinstance(other, _SCALARS):
        return other
    if isinstance(other, np.generic) and other.dtype.kind in "biuf":
        return other.item()
    return None


def _write_back(x, result, op):
    """The in-place operator's last step: ``result`` into x, whose shape and dtype it must keep."""
    if result.shape != x.shape:
        raise ValueError(f"operator __i{op}__: the result's shape {tuple(result.shape)} is not the array's "
                         f"{tuple(x.shape)} (an in-place operand must broadcast to the array's shape)")
    if result.dtype is not x.dtype and not _dt.can_cast(result.dtype, x.dtype):
        raise RuntimeError(f"result type {_dt.type_name(result.dtype)} can't be cast to the desired output type "
                           f"{_dt.type_name(x.dtype)}")
    x.copy_(result)
    return x


def install(namespace):
    """Give Array the operators, each calling ``namespace``'s function of the same meaning (called
    once, by the namespace, after its functions are final)."""
    def binary(fn, op):
        def forward(self, other):
            other = _operand(other)
            return NotImplemented if other is None else fn(self, other)

        def reflected(self, other):
            other = _operand(other)
            return NotImplemented if other is None else fn(other, self)

        def inplace(self, other):
            other = _operand(other)
            return NotImplemented if other is None else _write_back(self, fn(self, other), op)
        return forward, reflected, inplace

    for op, name in BINARY.items():
        forward, reflected, inplace = binary(getattr(namespace, name), op)
        for dunder, f in ((f"__{op}__", forward), (f"__r{op}__", reflected), (f"__i{op}__", inplace)):
            f.__name__ = f.__qualname__ = dunder
            f.__doc__ = f"The standard's ``{dunder}``: ``{name}`` of the namespace."
            setattr(Array, dunder, f)
    for op, name in COMPARISONS.items():
        forward = binary(getattr(namespace, name), op)[0]
        forward.__name__ = forward.__qualname__ = f"__{op}__"
        forward.__doc__ = f"The standard's ``__{op}__``: ``{name}`` of the namespace."
        setattr(Array, f"__{op}__", forward)
    for op, name in UNARY.items():
        fn = getattr(namespace, name)

        def unary(self, __fn=fn):
            return __fn(self)
        unary.__name__ = unary.__qualname__ = f"__{op}__"
        unary.__doc__ = f"The standard's ``__{op}__``: ``{name}`` of the namespace."
        setattr(Array, f"__{op}__", unary)
    Array.__hash__ = Tensor.__hash__        # defining __eq__ would otherwise drop identity hashing
