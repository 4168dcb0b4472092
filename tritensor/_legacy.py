"""torch's legacy tensor types: tt.FloatTensor, tt.LongTensor ... and tt.cuda.FloatTensor ...

Each is a class whose metaclass (torch's ``tensortype``) makes it
  a constructor  ``FloatTensor()`` (empty), ``FloatTensor(2, 3)`` or ``FloatTensor(Size)``
                 (uninitialised), ``FloatTensor([1, 2])`` (data, converted), ``FloatTensor(t)``
                 (an alias of a tensor of that dtype), with torch's errors;
  a type test    ``isinstance(t, FloatTensor)``: a strided float32 tensor on the type's device
                 kind (cpu for tt.FloatTensor, cuda for tt.cuda.FloatTensor);
  a name         ``t.type()`` is "torch.FloatTensor" (torch's strings, as programs compare them),
                 and ``t.type("torch.DoubleTensor")`` / ``t.type(tt.DoubleTensor)`` converts.
They are not Tensor subclasses, as in torch.
"""
from __future__ import annotations

import numpy as np

from . import dtypes as _dt
from .layouts import strided
from .runtime.device import device as _device
from .tensor import Size, Tensor

_NAMES = {_dt.float32: "FloatTensor", _dt.float64: "DoubleTensor", _dt.float16: "HalfTensor",
          _dt.bfloat16: "BFloat16Tensor", _dt.int64: "LongTensor", _dt.int32: "IntTensor",
          _dt.int16: "ShortTensor", _dt.int8: "CharTensor", _dt.uint8: "ByteTensor", _dt.bool_: "BoolTensor",
          # torch names these in type strings (x.type() == "torch.UInt32Tensor", x.type("torch.UInt16Tensor"))
          # but has no torch.UInt32Tensor class: they are not exported
          _dt.uint16: "UInt16Tensor", _dt.uint32: "UInt32Tensor", _dt.uint64: "UInt64Tensor"}


class tensortype(type):
    """The metaclass of the legacy types (torch.tensortype)."""

    def __instancecheck__(cls, obj):
        return (isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.layout is strided
                and obj.device.type == cls._device_type)

    def __subclasscheck__(cls, sub):
        return sub is cls

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"

    def __call__(cls, *args, device=None, **kwargs):
        if kwargs:
            raise TypeError(f"new() received an invalid combination of arguments - got unexpected keyword "
                            f"argument(s) {', '.join(map(repr, kwargs))}")
        dev = _device(cls._device_type) if device is None else _device(device)
        if dev.type != cls._device_type:
            raise RuntimeError(f"legacy constructor expects device type: {cls._device_type} but device type: "
                               f"{dev.type} was passed")
        return _construct(cls.dtype, dev, args)


def _construct(dtype, device, args):
    from .ops import creation, views
    if not args:
        return creation.empty(0, dtype=dtype, device=device)
    if len(args) == 1 and isinstance(args[0], Tensor):
        t = args[0]
        if t.dtype is not dtype or t.device.type != device.type:
            raise TypeError(f"expected {_options(dtype, device)} (got {_options(t.dtype, t.device)})")
        return views.basic_index(t, ())        # an alias (AliasBackward0), as torch's
    if len(args) == 1 and isinstance(args[0], Size):
        return creation.empty(tuple(args[0]), dtype=dtype, device=device)
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
        data = args[0]
        if isinstance(data, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
        if isinstance(data, (float, bool, complex)):
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        return creation.tensor(data, dtype=dtype, device=device)
    for pos, s in enumerate(args, 1):
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {pos} with error \"type "
                            f"must be tuple of ints,but got {type(s).__name__}\"")
    return creation.empty(*args, dtype=dtype, device=device)


_CPP = _dt.CPP_NAMES


def _options(dtype, device):
    """torch's printing of TensorOptions, as its legacy constructor's type error shows them."""
    return (f"TensorOptions(dtype={_CPP[dtype.name]}, device={device}, layout=Strided, requires_grad=false (default), "
            "pinned_memory=false (default), memory_format=(nullopt))")


def _type_string(dtype, device_type):
    return f"torch.{'cuda.' if device_type == 'cuda' else ''}{_NAMES[dtype]}"


def _make(dtype, device_type):
    module = "tritensor.cuda" if device_type == "cuda" else "tritensor"
    cls = tensortype(_NAMES[dtype], (), {
        "__module__": module, "dtype": dtype, "_device_type": device_type, "is_cuda": device_type == "cuda",
        "is_sparse": False, "layout": strided,
        "__doc__": f"{_type_string(dtype, device_type)}: the legacy type of {device_type} {dtype} tensors."})
    return cls


_ALL_CPU = {_NAMES[d]: _make(d, "cpu") for d in _NAMES}
_ALL_CUDA = {_NAMES[d]: _make(d, "cuda") for d in _NAMES}
CPU_TYPES = {n: c for n, c in _ALL_CPU.items() if c.dtype not in _dt.UNSIGNED_LIMITED}    # the public classes
CUDA_TYPES = {n: c for n, c in _ALL_CUDA.items() if c.dtype not in _dt.UNSIGNED_LIMITED}
_BY_STRING = {_type_string(c.dtype, "cpu"): c for c in _ALL_CPU.values()}
_BY_STRING.update({_type_string(c.dtype, "cuda"): c for c in _ALL_CUDA.values()})
_BY_STRING.update({s.replace("torch.", "tritensor.", 1): c for s, c in list(_BY_STRING.items())})


def tensor_type(t, dtype=None, non_blocking=False, **kwargs):
    """Tensor.type(): the type string with no argument; else ``t`` converted to the dtype (and device
    kind) a type string, a legacy type or a dtype names (``t`` itself when nothing changes)."""
    if dtype is None:
        return _type_string(t.dtype, t.device.type)
    if isinstance(dtype, str):
        cls = _BY_STRING.get(dtype)
        if cls is None:
            raise ValueError(f"invalid type: '{dtype}'")
    elif isinstance(dtype, tensortype):
        cls = dtype
    elif isinstance(dtype, _dt.dtype):
        return t.to(dtype=dtype, non_blocking=non_blocking)
    else:
        raise TypeError("dtype must be a type, str, or dtype object")
    device = t.device if t.device.type == cls._device_type else _device(cls._device_type)
    return t.to(device=device, dtype=cls.dtype, non_blocking=non_blocking)
