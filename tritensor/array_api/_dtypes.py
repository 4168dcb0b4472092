"""The standard's data types and data-type functions (2024.12, "Data Types", "Data Type Functions").

The namespace's dtypes are tritensor's dtype objects. Promotion between arrays is torch's pairwise
table (tt.promote_types), which is the standard's table wherever the standard defines one; what
differs is the rank of 0-d arrays (torch lets a 0-d tensor of the same kind yield: the standard
does not) and the standard's narrower `can_cast`.
"""
from __future__ import annotations

import builtins

from .. import dtypes as _dt
from ..tensor import Tensor

bool = _dt.bool_
int8, int16, int32, int64 = _dt.int8, _dt.int16, _dt.int32, _dt.int64
uint8 = _dt.uint8
float32, float64 = _dt.float32, _dt.float64
# The unsigned types wider than 8 bits. torch gives them few kernels (add, comparisons, max, abs ...
# raise NotImplementedError), tt's kernels handle them whole: every function of this namespace runs
# under ops/_unsigned.unrestricted() (__init__.py), so the namespace lists them. The switch below
# takes them out again should that ever be needed.
_WIDE_UNSIGNED_READY = True
_UNSIGNED_WIDE = tuple(getattr(_dt, n) for n in ("uint16", "uint32", "uint64")
                       if _WIDE_UNSIGNED_READY and hasattr(_dt, n))
unsigned = (uint8,) + _UNSIGNED_WIDE
_ALL_UNSIGNED = (uint8,) + tuple(getattr(_dt, n) for n in ("uint16", "uint32", "uint64") if hasattr(_dt, n))
signed = (int8, int16, int32, int64)
real_floating = (float32, float64)
# The standard's dtypes that tritensor has, in the order __array_namespace_info__().dtypes() lists them.
STANDARD = (bool,) + signed + unsigned + real_floating

_KINDS = {
    "bool": lambda d: d is bool,
    "signed integer": lambda d: d._kind == 1 and d not in _ALL_UNSIGNED,
    "unsigned integer": lambda d: d in _ALL_UNSIGNED,
    "integral": lambda d: d._kind == 1,
    "real floating": lambda d: d.is_floating_point,
    "complex floating": lambda d: False,          # tritensor has no complex dtypes
    "numeric": lambda d: d is not bool,
}


def _dtype_of(x):
    if isinstance(x, Tensor):
        return x.dtype
    if isinstance(x, _dt.dtype):
        return x
    raise TypeError(f"expected a dtype or an array, got {type(x).__name__}")


def isdtype(dtype, kind):
    """Whether ``dtype`` is of ``kind``: a dtype, a kind name, or a tuple of either."""
    if not isinstance(dtype, _dt.dtype):
        raise TypeError(f"isdtype() expects a dtype, got {type(dtype).__name__}")
    if isinstance(kind, tuple):
        return builtins.any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, _dt.dtype):
        return dtype is kind
    if isinstance(kind, str):
        try:
            return _KINDS[kind](dtype)
        except KeyError:
            raise ValueError(f"unknown dtype kind {kind!r}: expected one of {sorted(_KINDS)}") from None
    raise TypeError(f"isdtype() kind must be a dtype, a str or a tuple of them, got {type(kind).__name__}")


def promote(a, b):
    """The standard's promotion of two dtypes. Integers: the wider of two signed or two unsigned
    types; an unsigned with a signed type, the narrowest signed type that holds both (none for
    uint64: TypeError). torch refuses to promote uint16/32/64 with other types; its table agrees with
    the standard's for the rest, and decides the pairs the standard leaves open (bool with numbers,
    integers with floats)."""
    if a is b:
        return a
    if a._kind == 1 and b._kind == 1 and (a in _ALL_UNSIGNED) != (b in _ALL_UNSIGNED):
        u, i = (a, b) if a in _ALL_UNSIGNED else (b, a)
        if i.itemsize > u.itemsize:
            return i
        wider = {1: int16, 2: int32, 4: int64}.get(u.itemsize)
        if wider is None:
            raise TypeError(f"{a} and {b} have no common dtype (the standard's promotion table)")
        return wider
    if a._kind == 1 and b._kind == 1 and a in _ALL_UNSIGNED:
        return a if a.itemsize > b.itemsize else b
    if a._kind != b._kind:
        # torch's rule across kinds (the standard leaves it open): the higher kind's type wins
        return a if a._kind > b._kind else b
    return _dt.promote_types(a, b)


def result_type(*arrays_and_dtypes):
    """The dtype the standard's promotion gives: arrays and dtypes rank alike whatever their
    shape; Python scalars are weak (they take the arrays' dtype when their kind fits)."""
    dtypes = [_dtype_of(x) for x in arrays_and_dtypes if not isinstance(x, (builtins.bool, builtins.int,
                                                                              builtins.float, builtins.complex))]
    scalars = [x for x in arrays_and_dtypes if isinstance(x, (builtins.bool, builtins.int, builtins.float,
                                                              builtins.complex))]
    if not dtypes:
        raise ValueError("result_type() needs at least one array or dtype")
    out = dtypes[0]
    for d in dtypes[1:]:
        out = promote(out, d)
    for s in scalars:
        out = scalar_result(out, s)
    return out


def scalar_result(dtype, scalar):
    """The dtype of ``array op scalar``: the array's dtype where the scalar's kind fits it; else
    the scalar's kind, at its default dtype (the standard leaves that case to the library; this is torch's)."""
    if isinstance(scalar, builtins.complex):
        raise TypeError("tritensor has no complex dtypes")
    kind = _dt.scalar_category(scalar)
    if kind <= dtype._kind:
        return dtype
    return int64 if kind == 1 else _dt.get_default_dtype()


def can_cast(from_, to, /):
    """Whether the standard's promotion can take ``from_`` to ``to`` (same kind, no narrowing)."""
    src = _dtype_of(from_)
    if not isinstance(to, _dt.dtype):
        raise TypeError(f"can_cast() expects a dtype as 'to', got {type(to).__name__}")
    if src is to:
        return True
    if src._kind != to._kind:
        return False
    try:
        return promote(src, to) is to
    except TypeError:       # a pair without a common type (uint64 with a signed type)
        return False


class finfo_object:
    """finfo's result in the standard's form: bits, eps, max, min, smallest_normal (Python floats/int), dtype."""
    __slots__ = ("bits", "eps", "max", "min", "smallest_normal", "dtype")

    def __init__(self, dtype):
        info = _dt.finfo(dtype)
        self.bits, self.eps, self.max, self.min = info.bits, info.eps, info.max, info.min
        self.smallest_normal, self.dtype = info.smallest_normal, dtype

    def __repr__(self):
        return (f"finfo(bits={self.bits}, eps={self.eps}, max={self.max}, min={self.min}, "
                f"smallest_normal={self.smallest_normal}, dtype={self.dtype})")


class iinfo_object:
    """iinfo's result in the standard's form: bits, max, min (Python ints), dtype."""
    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, dtype):
        info = _dt.iinfo(dtype)
        self.bits, self.max, self.min, self.dtype = info.bits, info.max, info.min, dtype

    def __repr__(self):
        return f"iinfo(bits={self.bits}, max={self.max}, min={self.min}, dtype={self.dtype})"


def finfo(type, /):
    """Machine limits of a floating dtype (or of an array's dtype)."""
    d = _dtype_of(type)
    if not d.is_floating_point:
        raise TypeError(f"finfo() expects a floating-point dtype, got {d}")
    return finfo_object(d)


def iinfo(type, /):
    """Machine limits of an integer dtype (or of an array's dtype)."""
    d = _dtype_of(type)
    if d._kind != 1:
        raise TypeError(f"iinfo() expects an integer dtype, got {d}")
    return iinfo_object(d)


def astype(x, dtype, /, *, copy=True, device=None):
    """``x`` as ``dtype`` (and on ``device``): a new array unless ``copy=False`` and nothing changes."""
    if not isinstance(x, Tensor):
        raise TypeError(f"astype() expects an array, got {type(x).__name__}")
    if not isinstance(dtype, _dt.dtype):
        raise TypeError(f"astype() expects a dtype, got {type(dtype).__name__}")
    out = x.to(dtype=dtype) if device is None else x.to(device=device, dtype=dtype)
    if copy and out is x:
        out = x.clone()
    return out
