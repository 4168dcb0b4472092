"""Tensor methods and operators: each a one-line call into the op layer."""
from __future__ import annotations

from . import dtypes as _dt
from .ops import copy as _copy
from .ops import creation as _creation
from .ops import elementwise as _ew
from .ops import random as _random
from .ops import reduce as _reduce
from .ops import views as _views
from .tensor import Tensor


def _rev(fn):
    return lambda self, other: fn(other, self)


def _method(fn):
    return lambda self, *args, **kwargs: fn(self, *args, **kwargs)


_PLAIN = {
    # elementwise
    "add": _ew.add, "sub": _ew.sub, "subtract": _ew.sub, "mul": _ew.mul, "multiply": _ew.mul,
    "div": _ew.div, "divide": _ew.div, "true_divide": _ew.div, "pow": _ew.pow, "neg": _ew.neg,
    "negative": _ew.neg, "exp": _ew.exp, "log": _ew.log, "sin": _ew.sin, "cos": _ew.cos,
    "tanh": _ew.tanh, "relu": _ew.relu, "sqrt": _ew.sqrt, "sigmoid": _ew.sigmoid, "abs": _ew.abs,
    "maximum": _ew.maximum, "minimum": _ew.minimum,
    "eq": _ew.eq, "ne": _ew.ne, "lt": _ew.lt, "le": _ew.le, "gt": _ew.gt, "ge": _ew.ge,
    "add_": _ew.add_, "sub_": _ew.sub_, "mul_": _ew.mul_, "div_": _ew.div_, "pow_": _ew.pow_,
    # reductions
    "sum": _reduce.sum, "mean": _reduce.mean, "sum_to_size": _reduce.sum_to_size,
    "prod": _reduce.prod, "amax": _reduce.amax, "amin": _reduce.amin, "max": _reduce.max,
    "min": _reduce.min, "argmax": _reduce.argmax, "argmin": _reduce.argmin, "var": _reduce.var,
    "std": _reduce.std, "norm": _reduce.norm, "logsumexp": _reduce.logsumexp, "all": _reduce.all,
    "any": _reduce.any, "count_nonzero": _reduce.count_nonzero, "cumsum": _reduce.cumsum,
    "cumprod": _reduce.cumprod, "softmax": _reduce.softmax, "log_softmax": _reduce.log_softmax,
    # views
    "view": _views.view, "reshape": _views.reshape, "permute": _views.permute,
    "transpose": _views.transpose, "swapaxes": _views.transpose, "t": _views.t,
    "expand": _views.expand, "squeeze": _views.squeeze, "unsqueeze": _views.unsqueeze,
    "flatten": _views.flatten, "unflatten": _views.unflatten, "narrow": _views.narrow,
    "select": _views.select, "unbind": _views.unbind,
    # copies
    "clone": _copy.clone, "to": _copy.to, "copy_": _copy.copy_, "fill_": _copy.fill_,
    "zero_": _copy.zero_,
    # random
    "normal_": _random.normal_, "uniform_": _random.uniform_,
    # factories that take their dtype/device from self
    "new_empty": _creation.new_empty, "new_zeros": _creation.new_zeros, "new_ones": _creation.new_ones,
    "new_full": _creation.new_full, "new_tensor": _creation.new_tensor,
}

for _name, _fn in _PLAIN.items():
    setattr(Tensor, _name, _method(_fn))

_OPERATORS = {
    "__add__": _ew.add, "__radd__": _rev(_ew.add), "__sub__": _ew.sub, "__rsub__": _rev(_ew.sub),
    "__mul__": _ew.mul, "__rmul__": _rev(_ew.mul), "__truediv__": _ew.div, "__rtruediv__": _rev(_ew.div),
    "__pow__": _ew.pow, "__rpow__": _rev(_ew.pow),
    "__eq__": _ew.eq, "__ne__": _ew.ne, "__lt__": _ew.lt, "__le__": _ew.le, "__gt__": _ew.gt,
    "__ge__": _ew.ge,
    "__iadd__": _ew.add_, "__isub__": _ew.sub_, "__imul__": _ew.mul_, "__itruediv__": _ew.div_,
    "__ipow__": _ew.pow_,
}
for _name, _fn in _OPERATORS.items():
    setattr(Tensor, _name, _method(_fn))

Tensor.__neg__ = lambda self: _ew.neg(self)
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = lambda self: _ew.abs(self)
Tensor.__getitem__ = lambda self, item: _views.basic_index(self, _views.normalize_index(item))
Tensor.contiguous = lambda self, memory_format=None: _copy.contiguous(self)
Tensor.view_as = lambda self, other: _views.view(self, other.shape)
Tensor.reshape_as = lambda self, other: _views.reshape(self, other.shape)
Tensor.expand_as = lambda self, other: _views.expand(self, other.shape)
Tensor.T = property(lambda self: _views.permute(self, tuple(reversed(range(self.dim())))))
Tensor.mT = property(lambda self: _views.transpose(self, -2, -1))

# device and dtype shorthands
Tensor.cpu = lambda self, memory_format=None: _copy.to(self, device="cpu")
Tensor.cuda = lambda self, device=None, non_blocking=False, memory_format=None: _copy.to(
    self, device="cuda" if device is None else (f"cuda:{device}" if isinstance(device, int) else device))
for _name, _dtype in {"float": _dt.float32, "double": _dt.float64, "half": _dt.float16,
                      "bfloat16": _dt.bfloat16, "int": _dt.int32, "long": _dt.int64,
                      "short": _dt.int16, "char": _dt.int8, "byte": _dt.uint8, "bool": _dt.bool_}.items():
    setattr(Tensor, _name, (lambda d: lambda self, memory_format=None: _copy.to(self, dtype=d))(_dtype))
Tensor.type_as = lambda self, other: _copy.to(self, dtype=other.dtype)
