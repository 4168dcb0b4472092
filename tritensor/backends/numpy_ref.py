"""The NumPy reference: it serves the cpu device and is the oracle the kernels are checked against.

Inputs reach a reference already cast to the op's compute dtype (16-bit floats widened to
float32, as torch computes them); ``run`` casts the result to the output dtype and writes it into
the output's memory.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt


def _as_compute(a, compute):
    from ..tensor import Tensor
    if isinstance(a, Tensor):
        return a._host_view().astype(compute.numpy_dtype, copy=False)
    if isinstance(a, (bool, int, float)):
        return np.asarray(a, dtype=compute.numpy_dtype)
    return a


def run(reference, out, args, compute, attrs):
    with np.errstate(all="ignore"):   # NaN/inf/overflow follow IEEE, as on the GPU
        arrays = [_as_compute(a, compute) for a in args]
        result = np.asarray(reference(*arrays, **attrs))
        np.copyto(out._host_view(), _cast(result, out.dtype), casting="unsafe")


def _cast(result, dtype):
    if dtype is _dt.bool_:
        return result != 0
    if not dtype.is_floating_point and result.dtype.kind == "f":
        # float -> int truncates toward zero; NaN/inf have no integer value (torch leaves
        # them undefined); make them 0 rather than let NumPy warn.
        result = np.where(np.isfinite(result), np.trunc(result), 0)
    return result


# ------------------------------------------------------------------ elementwise references
def identity(x, **_):
    return x


def relu(x):
    return np.where(np.isnan(x) | (x > 0), x, np.zeros_like(x)) if x.dtype.kind == "f" else np.maximum(x, 0)


def div(x, y):
    return np.true_divide(x, y)


def pow(x, y):
    return np.power(x, y)   # integer powers stay exact; negative ones are rejected by the rule


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def where(cond, a, b):
    return np.where(cond.astype(bool), a, b)


def tanh_backward(grad, y):
    return grad * (1 - y * y)


def relu_backward(grad, x):
    return np.where(x > 0, grad, np.zeros_like(grad))


def maximum(x, y):
    return np.maximum(x, y)   # propagates NaN, as torch.maximum


def minimum(x, y):
    return np.minimum(x, y)


UFUNCS = {
    "neg": np.negative, "exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos,
    "tanh": np.tanh, "sqrt": np.sqrt, "abs": np.abs,
    "add": np.add, "sub": np.subtract, "mul": np.multiply,
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal,
}


def elementwise(name):
    """The reference of elementwise op ``name``."""
    return UFUNCS.get(name) or globals()[name]


# ------------------------------------------------------------------ reductions
def reduce(op):
    fn = {"sum": np.sum, "prod": np.prod, "amax": np.max, "amin": np.min}[op]

    def ref(x, dims, keepdim=False, **_):
        return fn(x, axis=tuple(dims), keepdims=keepdim) if x.ndim else x
    return ref


def arg_reduce(op):
    """argmax / argmin: the first index of the max (min); NaN counts as the max and the min."""
    fn = {"argmax": np.argmax, "argmin": np.argmin}[op]

    def ref(x, dim=None, keepdim=False, **_):
        if dim is None:
            r = fn(x.reshape(-1)) if x.ndim else np.int64(0)
            return np.reshape(r, (1,) * x.ndim) if keepdim else r
        if x.ndim == 0:
            return np.int64(0)
        return fn(x, axis=dim, keepdims=keepdim)
    return ref


def _row_axis(x, dim):
    return x.reshape(1) if x.ndim == 0 else x, (0 if x.ndim == 0 else dim)


def softmax(x, dim, **_):
    a, ax = _row_axis(x, dim)
    e = np.exp(a - np.max(a, axis=ax, keepdims=True))
    return (e / e.sum(axis=ax, keepdims=True)).reshape(x.shape)


def log_softmax(x, dim, **_):
    a, ax = _row_axis(x, dim)
    sh = a - np.max(a, axis=ax, keepdims=True)
    return (sh - np.log(np.exp(sh).sum(axis=ax, keepdims=True))).reshape(x.shape)


def softmax_backward(grad, y, dim, **_):
    g, ax = _row_axis(grad, dim)
    yy = y.reshape(g.shape)
    return (yy * (g - (g * yy).sum(axis=ax, keepdims=True))).reshape(grad.shape)


def log_softmax_backward(grad, y, dim, **_):
    g, ax = _row_axis(grad, dim)
    yy = y.reshape(g.shape)
    return (g - np.exp(yy) * g.sum(axis=ax, keepdims=True)).reshape(grad.shape)


def scan(op):
    fn = {"sum": np.cumsum, "prod": np.cumprod}[op]

    def ref(x, dim, reverse=False, **_):
        a, ax = _row_axis(x, dim)
        if reverse:
            return np.flip(fn(np.flip(a, ax), axis=ax), ax).reshape(x.shape)
        return fn(a, axis=ax).reshape(x.shape)
    return ref
