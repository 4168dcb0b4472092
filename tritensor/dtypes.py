"""dtype objects under torch's names, torch's promotion rules, and the NumPy mapping.

A dtype's ``str()`` is ``tritensor.float32``: Triton reads the part after the last dot to type a
pointer argument, so the same object can be handed to Triton's launcher and interpreter.

The unsigned dtypes uint16, uint32 and uint64 are torch's "limited" dtypes (torch 2.3+): tensors
of them can be created, copied, converted, viewed, stored and exchanged (DLPack, NumPy), but few
kernels handle them (ops/unsigned.py lists which: torch 2.13's CPU set) and torch has NO
promotion rule between them and any other integer or bool dtype: ``promote_types(uint32, int32)``
raises torch's RuntimeError (it is not int64). With a floating dtype they promote to the floating
one; with a Python int scalar or an integer 0-d tensor (lower priority, same category) the
unsigned tensor's dtype wins. The Array API standard's table (uint32 + int32 -> int64, uint8 +
uint16 -> uint16 ...) is a different rule, applied only in the standard namespace
(tritensor.array_api); this module is torch's.
"""
from __future__ import annotations

import builtins as _builtins   # float/int are dtype names in this module

import ml_dtypes
import numpy as np


class dtype:
    __slots__ = ("name", "itemsize", "is_floating_point", "is_signed", "is_complex", "_np", "_rank", "_kind",
                 "numpy_dtype")

    def __init__(self, name, np_dtype, kind, rank):
        self.name = name
        self._np = np.dtype(np_dtype)
        self.numpy_dtype = self._np  # a plain attribute: read on every cpu op (no property call)
        self.itemsize = self._np.itemsize
        self._kind = kind            # 0 bool, 1 integer, 2 floating: torch's category order
        self._rank = rank            # order inside a category, for promotion
        self.is_floating_point = kind == 2
        self.is_signed = kind != 0 and not name.startswith("u")   # torch.uint8.is_signed is False
        self.is_complex = False

    def to_real(self):
        return self

    def __repr__(self):
        return f"tritensor.{self.name}"

    __str__ = __repr__

    def __reduce__(self):
        return (_by_name, (self.name,))


def _by_name(name):
    return _NAMES[name]


bool_ = dtype("bool", np.bool_, 0, 0)
uint8 = dtype("uint8", np.uint8, 1, 0)
int8 = dtype("int8", np.int8, 1, 1)
int16 = dtype("int16", np.int16, 1, 2)
int32 = dtype("int32", np.int32, 1, 3)
int64 = dtype("int64", np.int64, 1, 4)
uint16 = dtype("uint16", np.uint16, 1, 5)     # torch's limited unsigned dtypes: see the docstring
uint32 = dtype("uint32", np.uint32, 1, 6)
uint64 = dtype("uint64", np.uint64, 1, 7)
float16 = dtype("float16", np.float16, 2, 0)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, 2, 1)
float32 = dtype("float32", np.float32, 2, 2)
float64 = dtype("float64", np.float64, 2, 3)

ALL = (bool_, uint8, int8, int16, int32, int64, uint16, uint32, uint64, float16, bfloat16, float32, float64)
UNSIGNED_LIMITED = (uint16, uint32, uint64)   # no promotion with other integers, few kernels
FLOATING = (float16, bfloat16, float32, float64)
_NAMES = {d.name: d for d in ALL}
_FROM_NP = {d.numpy_dtype: d for d in ALL}

# torch's aliases
half, float, double, short, int, long = float16, float32, float64, int16, int32, int64

_default_float = float32


def get_default_dtype():
    return _default_float


def set_default_dtype(d):
    global _default_float
    if d not in (float32, float64, float16, bfloat16):
        raise TypeError("only floating-point types are supported as the default type")
    _default_float = d


def from_numpy_dtype(np_dtype) -> dtype:
    try:
        return _FROM_NP[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError(
            f"can't convert np.ndarray of type {np.dtype(np_dtype)}. The only supported types are: "
            "float64, float32, float16, bfloat16, int64, int32, int16, int8, uint64, uint32, uint16, uint8, "
            "and bool."
        ) from None


def as_dtype(d) -> dtype:
    """Accept a tritensor dtype, a NumPy dtype or a Python type, as torch's factories do."""
    if isinstance(d, dtype):
        return d
    if d is _py_float:
        return float64
    if d is _py_int:
        return int64
    if d is _py_bool:
        return bool_
    return from_numpy_dtype(d)


_py_float, _py_int, _py_bool = type(1.0), type(1), type(True)


def _category(d):
    return d._kind


def promote_types(a: dtype, b: dtype) -> dtype:
    """torch.promote_types for the dtypes we have. uint16/uint32/uint64 promote only with
    themselves and with floating dtypes (torch: "Promotion for uint16, uint32, uint64 types is not
    supported"); the Array API standard's table is tritensor.array_api's, not this one."""
    if a is b:
        return a
    if (a._rank > 4 or b._rank > 4) and a._kind < 2 and b._kind < 2:     # (ranks > 4: uint16/32/64)
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
                           f"{type_name(a)} and {type_name(b)}")
    if a._kind != b._kind:
        return a if a._kind > b._kind else b
    if a._kind == 2:
        # float16 with bfloat16 has no common 16-bit type: torch gives float32.
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a._rank > b._rank else b
    if a._kind == 1:
        if uint8 in (a, b):
            other = b if a is uint8 else a
            # uint8 with a signed type needs the next wider signed type
            return int16 if other is int8 else other
        return a if a._rank > b._rank else b
    return a


def scalar_category(value) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, _py_int):
        return 1
    if isinstance(value, _py_float):
        return 2
    raise TypeError(f"unsupported scalar type {type(value).__name__}")


def scalar_default_dtype(value) -> dtype:
    """The dtype torch.tensor(value) would infer."""
    return (bool_, int64, get_default_dtype())[scalar_category(value)]


# tensor.py registers its Tensor class here when it defines it (register_tensor_type):
# result_type tells tensors from Python scalars by it, and this module, which tensor.py
# imports, must not import tensor.py back (a lower layer reaching up).
_tensor_type: type = type(NotImplemented)    # stands in until tensor.py registers Tensor


def register_tensor_type(cls):
    global _tensor_type
    _tensor_type = cls


def result_type(*operands) -> dtype:
    """torch.result_type: tensors of dim > 0 outrank 0-d tensors, which outrank Python scalars;
    a lower-priority operand only matters when its category (bool < int < float) is higher."""
    Tensor = _tensor_type
    dims = [o.dtype for o in operands if isinstance(o, Tensor) and o.dim() > 0]
    zero_dims = [o.dtype for o in operands if isinstance(o, Tensor) and o.dim() == 0]
    scalars = [o for o in operands if not isinstance(o, Tensor)]

    def fold(ds):
        out = None
        for d in ds:
            out = d if out is None else promote_types(out, d)
        return out

    result = fold(dims)
    zd = fold(zero_dims)
    if zd is not None:
        if result is None:
            result = zd
        elif zd._kind > result._kind:
            # torch's combine_categories promotes a bool result with the 0-d dtype (an error
            # for uint16/32/64) and otherwise takes the higher category's dtype
            result = promote_types(result, zd) if result is bool_ else zd
    if scalars:
        cat = max(scalar_category(s) for s in scalars)
        if result is None:
            result = (bool_, int64, get_default_dtype())[cat]
        elif cat > result._kind:
            result = int64 if cat == 1 else get_default_dtype()
    return result


def compute_dtype(d: dtype) -> dtype:
    """The dtype arithmetic happens in: 16-bit floats are widened to float32, as torch does."""
    return float32 if d in (float16, bfloat16) else d


def can_cast(src: dtype, dst: dtype) -> bool:
    """torch.can_cast: no cast to a lower category (float -> int, int -> bool)."""
    return src._kind <= dst._kind


_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
               "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
               "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64", "bool": "Bool"}


# torch's TypeMeta names (a ScalarType printed as its C++ type, as in "Expected out tensor to
# have dtype float, but got unsigned int instead")
CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
             "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
             "uint8": "unsigned char", "uint16": "short unsigned int", "uint32": "unsigned int",
             "uint64": "long unsigned int", "bool": "bool"}


def type_name(d: dtype) -> str:
    """torch's scalar-type name, as its error messages print it (Float, Long ...)."""
    return _TYPE_NAMES[d.name]


class finfo:
    """torch.finfo: the numerical limits of a floating dtype (default: the default dtype)."""

    def __init__(self, type=None):
        type = get_default_dtype() if type is None else as_dtype(type)
        if not type.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to "
                            "handle 'torch.finfo'")
        info = ml_dtypes.finfo(type.numpy_dtype)
        self.dtype = type.name
        self.bits = type.itemsize * 8
        self.eps = _builtins.float(info.eps)
        self.max = _builtins.float(info.max)
        self.min = _builtins.float(info.min)
        self.tiny = self.smallest_normal = _builtins.float(info.tiny)
        self.resolution = 10.0 ** -info.precision   # a float64 power of ten, as torch

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """torch.iinfo: the limits of an integer dtype."""

    def __init__(self, type):
        type = as_dtype(type)
        if type.is_floating_point:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle "
                            "'torch.iinfo'")
        if type is bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        info = np.iinfo(type.numpy_dtype)
        self.dtype = type.name
        self.bits = type.itemsize * 8
        self.max = _builtins.int(info.max)
        self.min = _builtins.int(info.min)

    def __repr__(self):
        # torch prints the limits as C's %g (iinfo(min=0, max=4.29497e+09, dtype=uint32))
        return f"iinfo(min={_builtins.float(self.min):g}, max={_builtins.float(self.max):g}, dtype={self.dtype})"
