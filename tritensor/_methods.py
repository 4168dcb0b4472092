"""Tensor methods and operators: each a one-line call into the op layer."""
from __future__ import annotations

import numpy as _np

from . import dtypes as _dt
from .ops import copy as _copy
from .ops import creation as _creation
from .ops import elementwise as _ew
from .ops import indexing as _indexing
from .ops import joining as _join
from .ops import linalg as _linalg
from .ops import random as _random
from .ops import reduce as _reduce
from .ops import views as _views
from .tensor import Tensor


def _rev(fn):
    return lambda self, other: fn(other, self)     # _method has made NumPy scalars numbers


_NUMPY_SCALARS = (_np.number, _np.bool_)


def _method(fn):
    """A method or operator: NumPy scalar arguments count as the Python numbers they hold."""
    def method(self, *args, **kwargs):
        for a in args:     # converted only when there is one (no generator per call: issue 14)
            if isinstance(a, _NUMPY_SCALARS):
                args = tuple(_ew.as_number(x) for x in args)
                break
        return fn(self, *args, **kwargs)
    return method


_PLAIN = {
    # elementwise
    "add": _ew.add, "sub": _ew.sub, "subtract": _ew.sub, "mul": _ew.mul, "multiply": _ew.mul,
    "div": _ew.div, "divide": _ew.div, "true_divide": _ew.div, "pow": _ew.pow, "neg": _ew.neg,
    "negative": _ew.neg, "exp": _ew.exp, "log": _ew.log, "sin": _ew.sin, "cos": _ew.cos,
    "tanh": _ew.tanh, "relu": _ew.relu, "sqrt": _ew.sqrt, "sigmoid": _ew.sigmoid, "abs": _ew.abs,
    "maximum": _ew.maximum, "minimum": _ew.minimum,
    "eq": _ew.eq, "ne": _ew.ne, "lt": _ew.lt, "le": _ew.le, "gt": _ew.gt, "ge": _ew.ge,
    "add_": _ew.add_, "sub_": _ew.sub_, "mul_": _ew.mul_, "div_": _ew.div_, "pow_": _ew.pow_,
    "subtract_": _ew.sub_, "multiply_": _ew.mul_, "divide_": _ew.div_, "true_divide_": _ew.div_,
    "neg_": _ew.neg_, "negative_": _ew.neg_, "exp_": _ew.exp_, "log_": _ew.log_, "sin_": _ew.sin_,
    "cos_": _ew.cos_, "tanh_": _ew.tanh_, "relu_": _ew.relu_, "sqrt_": _ew.sqrt_,
    "sigmoid_": _ew.sigmoid_, "abs_": _ew.abs_, "absolute": _ew.abs, "absolute_": _ew.abs_,
    "sign": _ew.sign, "sign_": _ew.sign_, "exp2": _ew.exp2, "exp2_": _ew.exp2_, "expm1": _ew.expm1,
    "expm1_": _ew.expm1_, "log2": _ew.log2, "log2_": _ew.log2_, "log10": _ew.log10,
    "log10_": _ew.log10_, "log1p": _ew.log1p, "log1p_": _ew.log1p_, "rsqrt": _ew.rsqrt,
    "rsqrt_": _ew.rsqrt_, "tan": _ew.tan, "tan_": _ew.tan_, "erf": _ew.erf, "erf_": _ew.erf_,
    "floor": _ew.floor, "floor_": _ew.floor_, "ceil": _ew.ceil, "ceil_": _ew.ceil_,
    "round": _ew.round, "round_": _ew.round_, "trunc": _ew.trunc, "trunc_": _ew.trunc_,
    "fix": _ew.fix, "fix_": _ew.fix_, "floor_divide": _ew.floor_divide,
    "floor_divide_": _ew.floor_divide_, "remainder": _ew.remainder, "remainder_": _ew.remainder_,
    "fmod": _ew.fmod, "fmod_": _ew.fmod_, "clamp": _ew.clamp, "clamp_": _ew.clamp_, "clip": _ew.clip,
    "clip_": _ew.clip_, "clamp_min": _ew.clamp_min, "clamp_max": _ew.clamp_max,
    "logical_and": _ew.logical_and, "logical_and_": _ew.logical_and_, "logical_or": _ew.logical_or,
    "logical_or_": _ew.logical_or_, "logical_xor": _ew.logical_xor, "logical_xor_": _ew.logical_xor_,
    "logical_not": _ew.logical_not, "logical_not_": _ew.logical_not_,
    "bitwise_and": _ew.bitwise_and, "bitwise_and_": _ew.bitwise_and_, "bitwise_or": _ew.bitwise_or,
    "bitwise_or_": _ew.bitwise_or_, "bitwise_xor": _ew.bitwise_xor, "bitwise_xor_": _ew.bitwise_xor_,
    "bitwise_not": _ew.bitwise_not, "bitwise_not_": _ew.bitwise_not_, "isnan": _ew.isnan,
    "isinf": _ew.isinf, "isfinite": _ew.isfinite, "masked_fill": _ew.masked_fill,
    "masked_fill_": _ew.masked_fill_,
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
    "select": _views.select, "unbind": _views.unbind, "unfold": _views.unfold, "diagonal": _views.diagonal,
    "diag_embed": _views.diag_embed, "diagonal_scatter": _views.diagonal_scatter,
    # copies
    "clone": _copy.clone, "to": _copy.to, "copy_": _copy.copy_, "fill_": _copy.fill_,
    "zero_": _copy.zero_,
    # random
    "normal_": _random.normal_, "uniform_": _random.uniform_, "random_": _random.random_,
    "bernoulli": _random.bernoulli, "bernoulli_": _random.bernoulli_, "multinomial": _random.multinomial,
    # matrix multiplication
    "mm": _linalg.mm, "bmm": _linalg.bmm, "matmul": _linalg.matmul, "addmm": _linalg.addmm,
    "baddbmm": _linalg.baddbmm, "dot": _linalg.dot, "mv": _linalg.mv, "addmm_": _linalg.addmm_,
    "baddbmm_": _linalg.baddbmm_, "outer": _linalg.outer, "ger": _linalg.ger,
    # joining, splitting, flipping and triangular parts (ops/joining.py)
    "split": _join.split, "split_with_sizes": _join.split_with_sizes, "chunk": _join.chunk,
    "tensor_split": _join.tensor_split, "flip": _join.flip, "fliplr": _join.fliplr,
    "flipud": _join.flipud, "tril": _join.tril, "triu": _join.triu, "tril_": _join.tril_,
    "triu_": _join.triu_, "as_strided": _views.as_strided,
    # indexing (ops/indexing.py)
    "index_select": _indexing.index_select, "gather": _indexing.gather, "scatter": _indexing.scatter,
    "scatter_": _indexing.scatter_, "scatter_add": _indexing.scatter_add,
    "scatter_add_": _indexing.scatter_add_, "masked_select": _indexing.masked_select,
    "nonzero": _indexing.nonzero, "index_put_": _indexing.index_put_, "index_put": _indexing.index_put,
    "take": _indexing.take, "scatter_reduce": _indexing.scatter_reduce, "scatter_reduce_": _indexing.scatter_reduce_,
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
    "__floordiv__": _ew.floor_divide, "__rfloordiv__": _rev(_ew.floor_divide),
    "__mod__": _ew.remainder, "__rmod__": _rev(_ew.remainder),
    "__and__": _ew.bitwise_and, "__rand__": _rev(_ew.bitwise_and), "__or__": _ew.bitwise_or,
    "__ror__": _rev(_ew.bitwise_or), "__xor__": _ew.bitwise_xor, "__rxor__": _rev(_ew.bitwise_xor),
    "__ifloordiv__": _ew.floor_divide_, "__imod__": _ew.remainder_, "__iand__": _ew.bitwise_and_,
    "__ior__": _ew.bitwise_or_, "__ixor__": _ew.bitwise_xor_,
    "__matmul__": _linalg.matmul_operator, "__rmatmul__": _linalg.rmatmul,
}
for _name, _fn in _OPERATORS.items():
    setattr(Tensor, _name, _method(_fn))

Tensor.__neg__ = lambda self: _ew.neg(self)
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = lambda self: _ew.abs(self)
Tensor.__invert__ = lambda self: _ew.bitwise_not(self)
Tensor.__getitem__ = lambda self, item: _indexing.getitem(self, item)
Tensor.__setitem__ = lambda self, item, value: _indexing.setitem(self, item, value)
Tensor.contiguous = lambda self, memory_format=None: _copy.contiguous(self)
Tensor.view_as = lambda self, other: _views.view(self, other.shape)
Tensor.reshape_as = lambda self, other: _views.reshape(self, other.shape)
Tensor.expand_as = lambda self, other: _views.expand(self, other.shape)
Tensor.T = property(lambda self: _views.permute(self, tuple(reversed(range(self.dim())))))
Tensor.mT = property(lambda self: _views.transpose(self, -2, -1))

# device and dtype shorthands
Tensor.cpu = lambda self, memory_format=None: _copy.to(self, device="cpu")
Tensor.cuda = lambda self, device=None, non_blocking=False, memory_format=None: _copy.to(
    self, device="cuda" if device is None else (f"cuda:{device}" if isinstance(device, int) else device),
    non_blocking=non_blocking)
Tensor.pin_memory = _copy.pin_memory
Tensor.is_pinned = _copy.is_pinned
for _name, _dtype in {"float": _dt.float32, "double": _dt.float64, "half": _dt.float16,
                      "bfloat16": _dt.bfloat16, "int": _dt.int32, "long": _dt.int64,
                      "short": _dt.int16, "char": _dt.int8, "byte": _dt.uint8, "bool": _dt.bool_}.items():
    setattr(Tensor, _name, (lambda d: lambda self, memory_format=None: _copy.to(self, dtype=d))(_dtype))
Tensor.type_as = lambda self, other: _copy.to(self, dtype=other.dtype)
Tensor.where = lambda self, condition, other: _ew.where(condition, self, other)   # torch: self where cond, else other
