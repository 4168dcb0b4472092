"""The NumPy reference: it serves the cpu device (through backends/numpy_backend.py) and is the
oracle the kernels are checked against.

Inputs reach a reference already cast to the op's compute dtype (16-bit floats widened to
float32, as torch computes them); ``run`` casts the result to the output dtype and writes it into
the output's memory.
"""
from __future__ import annotations

import functools
import math
from itertools import repeat as _repeat
from operator import mul as _mul

import numpy as np

from .. import dtypes as _dt
from ..tensor import Tensor
from . import numpy_act, numpy_special
from ._special import erf  # noqa: F401  (a reference: ops name it by attribute)


def _as_compute(a, compute):
    if isinstance(a, Tensor):
        view = a._host_array
        if view is None:
            view = _view(a) if 0 not in a._shape else a._host_view()
        return view if a.dtype is compute else view.astype(compute.numpy_dtype, copy=False)
    if isinstance(a, (bool, int, float)):
        # through NumPy's own type first: an out-of-range Python int wraps (uint8 - 2), as in torch
        return np.asarray(a).astype(compute.numpy_dtype)
    return a


try:     # np.errstate's own machinery, without building a context manager per op
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj
    _IGNORE_ERRORS = _make_extobj(all="ignore")
except (ImportError, TypeError):          # another NumPy layout: the fast path is off
    _extobj_contextvar = None


def _view(t):
    """A NumPy view of host-backed tensor ``t`` (with elements): Tensor._host_view, inlined, and
    kept on the tensor (never handed out: references only read it, outputs only write it)."""
    arr = t._host_array
    if arr is None:
        dtype = t.dtype
        itemsize = dtype.itemsize
        arr = t._host_array = np.ndarray(t._shape, dtype.numpy_dtype, t._storage.host, t._offset * itemsize,
                                         tuple(map(_mul, t._stride, _repeat(itemsize))))
    return arr


_ufunc_writes_out: dict = {}    # (ufunc, compute np dtype, out np dtype, nin) -> bool


def _writes_out(ufunc, compute, out_dtype, nin):
    """Does ``ufunc`` on ``nin`` operands of dtype ``compute`` give ``out_dtype`` itself? Then it
    can write into the output's memory (``out=``) with the same values as compute-then-cast."""
    key = (ufunc, compute, out_dtype, nin)
    ok = _ufunc_writes_out.get(key)
    if ok is None:
        try:
            with np.errstate(all="ignore"):
                sample = ufunc(*[np.ones(1, compute)] * nin)
            ok = isinstance(sample, np.ndarray) and sample.dtype == out_dtype
        except Exception:
            ok = False
        _ufunc_writes_out[key] = ok
    return ok


def _run_ufunc(ufunc, out, args, compute):
    """The cpu fast path: a NumPy ufunc writes straight into the output's memory, reading every
    tensor operand in place (any strides; no cast: each already has the compute dtype). Returns
    False, having done nothing, when the operands do not allow it."""
    cd = compute.numpy_dtype
    ok = _ufunc_writes_out.get((ufunc, cd, out.dtype.numpy_dtype, len(args)))
    if not ok and (ok is not None or _extobj_contextvar is None
                   or not _writes_out(ufunc, cd, out.dtype.numpy_dtype, len(args))):
        return False
    arrays = []
    for a in args:
        if isinstance(a, Tensor):
            if a.dtype is not compute or a._storage.host is None or 0 in a._shape:
                return False
            arr = a._host_array
            arrays.append(arr if arr is not None else _view(a))
        elif type(a) in (bool, int, float):
            arrays.append(np.asarray(a).astype(cd))     # as _as_compute: wraps like torch
        else:
            return False
    token = _extobj_contextvar.set(_IGNORE_ERRORS)      # NaN/inf/overflow follow IEEE
    try:
        arr = out._host_array
        ufunc(*arrays, out=arr if arr is not None else _view(out))
    finally:
        _extobj_contextvar.reset(token)
    return True


# Ops whose reference, for a floating compute dtype, is this ufunc exactly (pow's reference only
# differs for integer powers): their cached cpu launches write straight into the output too.
FLOAT_UFUNCS = {"pow": np.power}


def launcher(op):
    """run_op bound to ``op``: the launcher dispatch caches with each signature (backends/base.py).
    For a ufunc op, _run_ufunc's common case is inlined (the operands' kept views, the output's
    view made here): a repeated elementwise op pays one Python call in the backend (issue 14).
    Anything else (a cast, an operand without memory, attributes) goes to run_op, unchanged."""
    reference = op.reference
    ufunc = reference if type(reference) is np.ufunc else FLOAT_UFUNCS.get(op.name)
    if ufunc is None or _extobj_contextvar is None:
        return functools.partial(run_op, op)
    floating_only = ufunc is not reference
    writes_out = _ufunc_writes_out
    plain = (bool, int, float)

    def launch(out, *args, compute, **attrs):
        storage = out._storage
        cd = compute.numpy_dtype
        dtype = out._dtype
        if (not attrs and storage.host is not None and (compute.is_floating_point or not floating_only)
                and writes_out.get((ufunc, cd, dtype.numpy_dtype, len(args)))):
            arrays = []
            for a in args:
                if isinstance(a, Tensor):
                    if a._dtype is not compute or a._storage.host is None or 0 in a._shape:
                        break
                    arr = a._host_array
                    arrays.append(arr if arr is not None else _view(a))
                elif type(a) in plain:
                    arrays.append(np.asarray(a).astype(cd))     # as _as_compute: wraps like torch
                else:
                    break
            else:
                arr = out._host_array
                if arr is None:         # _view(out), inlined (a fresh output has none yet)
                    itemsize = dtype.itemsize
                    arr = out._host_array = np.ndarray(out._shape, dtype.numpy_dtype, storage.host,
                                                       out._offset * itemsize,
                                                       tuple(map(_mul, out._stride, _repeat(itemsize))))
                token = _extobj_contextvar.set(_IGNORE_ERRORS)      # NaN/inf/overflow follow IEEE
                try:
                    ufunc(*arrays, out=arr)
                finally:
                    _extobj_contextvar.reset(token)
                return
        run_op(op, out, *args, compute=compute, **attrs)
    return launch


MATMUL_OPS = frozenset({"mm", "bmm", "matmul"})   # ops whose reference is np.matmul(x, y)


def _run_matmul(out, args, compute):
    """mm/bmm/matmul on the cpu: np.matmul writes into the output's memory and reads both
    operands in their own layout (a transposed view goes to BLAS as a transposed operand, not a
    copy). Only when nothing is cast and the output shares no memory with an operand."""
    if _extobj_contextvar is None or out.dtype is not compute or len(args) != 2:
        return False
    for a in args:
        if not isinstance(a, Tensor) or a.dtype is not compute or a._storage is out._storage \
                or a._storage.host is None or 0 in a._shape:
            return False
    x, y = args
    x = x._host_array if x._host_array is not None else _view(x)     # kept views: no call
    y = y._host_array if y._host_array is not None else _view(y)
    token = _extobj_contextvar.set(_IGNORE_ERRORS)
    try:
        if compute.is_floating_point:
            np.matmul(x, y, out=_view(out))
        else:
            np.copyto(_view(out), integer_matmul(x, y), casting="unsafe")
    finally:
        _extobj_contextvar.reset(token)
    return True


ADDMM_OPS = frozenset({"addmm", "baddbmm"})      # input + x @ y (alpha = beta = 1: nn.Linear's form)


def _run_addmm(out, args, compute, attrs):
    """addmm/baddbmm with alpha = beta = 1 on the cpu: the product written by BLAS into the
    output, then the input added in place (the same two roundings as the reference's
    ``x @ y + input``), under _run_matmul's conditions, and the input not aliasing the output."""
    if attrs.get("alpha", 1) != 1 or attrs.get("beta", 1) != 1 or len(args) != 3:
        return False
    bias = args[0]
    if not isinstance(bias, Tensor) or bias.dtype is not compute or bias._storage is out._storage \
            or bias._storage.host is None or 0 in bias._shape:
        return False
    if not _run_matmul(out, args[1:], compute):
        return False
    view = _view(out)
    np.add(view, _view(bias), out=view)
    return True


def run_op(op, out, *args, compute, **attrs):
    """Compute primitive ``op`` (an OpDef: its ``reference``, its ``name`` for the forms that
    write into ``out`` directly) of ``args`` into ``out``, in compute dtype ``compute``. The
    launcher's calling convention (backends/base.py): the cpu backend hands this function, bound
    to one op, to dispatch's signature cache."""
    reference = op.reference
    name = op.name
    if type(out) is tuple:       # several outputs (ops/table.py): the reference returns one array each
        return _run_outputs(reference, out, args, compute, attrs)
    if out._storage.host is not None:
        if attrs:
            if name in ADDMM_OPS and _run_addmm(out, args, compute, attrs):
                return
            if name == "index_put":
                _run_index_put(out, *args, compute=compute, **attrs)
                return
        elif type(reference) is np.ufunc:
            if _run_ufunc(reference, out, args, compute):
                return
        elif name in FLOAT_UFUNCS and compute.is_floating_point:
            if _run_ufunc(FLOAT_UFUNCS[name], out, args, compute):
                return
        elif name in MATMUL_OPS and _run_matmul(out, args, compute):
            return
        elif name in ADDMM_OPS and _run_addmm(out, args, compute, attrs):
            return
    if _extobj_contextvar is None:
        with np.errstate(all="ignore"):   # NaN/inf/overflow follow IEEE, as on the GPU
            _run_reference(reference, out, args, compute, attrs)
        return
    token = _extobj_contextvar.set(_IGNORE_ERRORS)   # the same, without np.errstate's object
    try:
        _run_reference(reference, out, args, compute, attrs)
    finally:
        _extobj_contextvar.reset(token)


def _run_index_put(out, x, values, compute, key, accumulate, **_):
    """index_put on host memory, written into the output's memory: in place (out is x) it costs
    the elements written, never a copy of x (issue 20: a one-element write into a 256 MiB
    tensor allocated 768 MiB); out of place, one copy of x first."""
    if 0 in out._shape:
        return
    dst = _view(out)
    if not (x._storage is out._storage and x._offset == out._offset and x._stride == out._stride):
        np.copyto(dst, x._host_view(), casting="unsafe")
    with np.errstate(all="ignore"):
        index_put_into(dst, _as_compute(values, compute), key, accumulate, compute.numpy_dtype)


def _run_reference(reference, out, args, compute, attrs):
    arrays = []
    for a in args:       # _as_compute, its common case inlined (issue 14: a call per operand less)
        view = a._host_array if isinstance(a, Tensor) else None
        arrays.append(view if view is not None and a.dtype is compute else _as_compute(a, compute))
    for name, v in attrs.items():
        if isinstance(v, Tensor):         # a tensor attribute (an index): its host array, own dtype
            attrs = dict(attrs)
            attrs[name] = v._host_view()
    result = reference(*arrays, **attrs)
    if 0 not in out._shape and isinstance(result, _ARRAY_TYPES) and result.dtype == out.dtype.numpy_dtype:
        # the result has the output's dtype already (_cast would keep its values): written
        # straight into the output's memory, without np.copyto's Python wrapper
        view = out._host_array
        (view if view is not None else _view(out))[...] = result
        return
    result = np.asarray(result)
    np.copyto(_view(out) if 0 not in out._shape else out._host_view(), _cast(result, out.dtype),
              casting="unsafe")


_ARRAY_TYPES = (np.ndarray, np.generic)


def _run_outputs(reference, outs, args, compute, attrs):
    """The reference of an op with several outputs: its arrays written into ``outs`` in order."""
    arrays = [_as_compute(a, compute) for a in args]
    attrs = {k: v._host_view() if isinstance(v, Tensor) else v for k, v in attrs.items()}
    with np.errstate(all="ignore"):
        results = reference(*arrays, **attrs)
    for out, result in zip(outs, results):
        if 0 not in out._shape:
            np.copyto(_view(out), _cast(np.asarray(result), out.dtype), casting="unsafe")


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


def overwrite(x, src, **_):
    """copy_/fill_'s recorded form: src (or the fill value) broadcast to x's shape."""
    return np.broadcast_to(src, x.shape)


def relu(x):
    # torch's max(x, 0) keeps x on ties: NaN stays NaN, -0.0 stays -0.0 (np.maximum gives +0.0)
    return np.where(x < 0, x.dtype.type(0), x)


def pow(x, y):
    """Integer powers stay exact. A negative integer exponent (a tensor one: the rule rejects a
    scalar one) gives torch's integer values, where NumPy raises: 1 ** -n = 1,
    (-1) ** -n = +-1 by n's parity, any other base 0 (the truncated reciprocal)."""
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind in "iu" and y.dtype.kind in "iu" and (y < 0).any():
        neg = y < 0
        out = np.power(x, np.where(neg, 0, y))
        odd = (y % 2) != 0
        reciprocal = np.where(x == 1, 1, np.where(x == -1, np.where(odd, -1, 1), 0))
        return np.where(neg, reciprocal, out).astype(out.dtype)
    return np.power(x, y)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def where(cond, a, b):
    return np.where(cond.astype(bool), a, b)


def tanh_backward(grad, y):
    return grad * (1 - y * y)


def relu_backward(grad, x):
    return np.where(x <= 0, grad.dtype.type(0), grad)    # torch's threshold_backward: NaN passes grad


def maximum(x, y):
    return np.maximum(x, y)   # propagates NaN, as torch.maximum


def minimum(x, y):
    return np.minimum(x, y)


# ------------------------------------------------------------------ pointwise math
# NumPy has no erf: _special.erf (imported above) is vectorised, within 2 ulp of math.erf in
# float64 and exact after rounding to float32/float16.


def sign(x):
    if x.dtype.kind == "b":
        return x.copy()          # sign(True) is True, as torch
    return np.where(np.isnan(x), 0, np.sign(x)).astype(x.dtype) if x.dtype.kind == "f" else np.sign(x)


def rsqrt(x):
    return 1 / np.sqrt(x)


def reciprocal(x):
    return 1 / x


def silu(x):
    return x / (1 + np.exp(-x))


def gelu(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + erf(x / np.sqrt(2).astype(x.dtype)))


def _rounding(np_fn):
    def ref(x):
        return np_fn(x) if x.dtype.kind == "f" else x.copy()   # integers: unchanged
    return ref


floor, ceil, trunc = _rounding(np.floor), _rounding(np.ceil), _rounding(np.trunc)
round = _rounding(np.rint)         # half to even, like torch.round


def round_decimals(x, scale):
    scale = np.asarray(scale, x.dtype)
    return np.where(scale > 0, np.rint(x * scale) / scale, np.rint(x / -scale) * -scale)


def _check_int_divisor(x, y):
    """torch's cpu kernels reject integer division by zero (its CUDA kernels don't check)."""
    if np.asarray(y).dtype.kind in "iub" and np.any(np.asarray(y) == 0):
        raise RuntimeError("ZeroDivisionError")


def div_trunc(x, y):
    _check_int_divisor(x, y)
    if np.asarray(x).dtype.kind == "f":
        return np.trunc(np.true_divide(x, y))
    # C division truncates toward zero: the floor quotient, one up where it was rounded down
    # (not |x| // |y|, which overflows at the minimum: 1 / INT_MIN is 0)
    q = np.floor_divide(x, y)
    return np.where((np.remainder(x, y) != 0) & ((x < 0) != (y < 0)), q + 1, q).astype(np.result_type(x, y))


def div_floor(x, y):
    _check_int_divisor(x, y)
    return np.floor_divide(x, y)     # Python's algorithm (fmod based), as torch's


def remainder(x, y):
    # torch's formula, not np.remainder: remainder(-0.0, 3) keeps fmod's -0.0 (NumPy gives +0.0)
    _check_int_divisor(x, y)
    m = np.fmod(x, y)
    return np.where((m != 0) & ((y < 0) != (m < 0)), m + y, m)


def fmod(x, y):
    _check_int_divisor(x, y)
    return np.fmod(x, y)


def bitwise_not(x):
    return np.logical_not(x) if x.dtype == np.bool_ else np.invert(x)


def sigmoid_backward(grad, y):
    return grad * y * (1 - y)


def silu_backward(grad, x):
    s = 1 / (1 + np.exp(-x))
    return grad * s * (1 + x * (1 - s))


def gelu_backward(grad, x, approximate="none"):
    if approximate == "tanh":
        k = np.sqrt(2 / np.pi)
        t = np.tanh(k * (x + 0.044715 * x ** 3))
        return grad * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x))
    cdf = 0.5 * (1 + erf(x / np.sqrt(2).astype(x.dtype)))
    return grad * (cdf + x * np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi))


def erf_backward(grad, x):
    # torch's order, 2 / sqrt(pi) * exp(-x^2) * grad: a huge grad times exp(-inf) = 0 is 0
    return grad * (2 / np.sqrt(np.pi) * np.exp(-x * x))


def exp2(x):
    # float32 through float64, as the kernel: NumPy's float32 exp2 is an ulp off at some integers
    # (exp2(127) is 1.7014120e38, torch's 2**127 = 1.7014118e38)
    if x.dtype == np.float32:
        return np.exp2(x.astype(np.float64)).astype(np.float32)
    return np.exp2(x)


def clamp(x, lo, hi):
    return np.minimum(np.maximum(x, lo), hi)   # NaN anywhere propagates, lo > hi gives hi


def masked_fill(x, mask, value):
    return np.where(mask.astype(bool), value, x)


UFUNCS = {
    "neg": np.negative, "exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos,
    "tanh": np.tanh, "sqrt": np.sqrt, "abs": np.abs,
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal,
    "exp2": exp2, "expm1": np.expm1, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
    "tan": np.tan, "logical_not": np.logical_not, "logical_and": np.logical_and,
    "logical_or": np.logical_or, "logical_xor": np.logical_xor, "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor, "isnan": np.isnan,
    "isinf": np.isinf, "isfinite": np.isfinite, "floor_divide": div_floor,
    "clamp_min": np.maximum, "clamp_max": np.minimum,
}


# ------------------------------------------------------------------ pointwise math (issue 21.2)
# The references of ops/pointwise_math.py. NumPy's own ufunc where it is torch's function (the
# kernels there are approximations checked against them); torch's formula where they differ
# (heaviside of NaN, fmax of signed zeros, nextafter of equal values, integer gcd of INT_MIN ...).
UFUNCS.update({
    "acos": np.arccos, "asin": np.arcsin, "atan": np.arctan, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "sinh": np.sinh, "cosh": np.cosh,
    "atan2": np.arctan2, "hypot": np.hypot, "copysign": np.copysign, "logaddexp": np.logaddexp,
    "logaddexp2": np.logaddexp2,
})


def deg2rad(x):
    return x * np.asarray(np.pi / 180).astype(x.dtype)     # torch: one product with the rounded constant


def rad2deg(x):
    return x * np.asarray(180 / np.pi).astype(x.dtype)     # (np.rad2deg rounds differently in float32)


def sinc(x):
    return np.sinc(x)         # sin(pi x) / (pi x), 1 at 0: torch's formula (np.sinc is no ufunc)


def _scalar_as(value, like):
    """A Python number in the compute dtype of ``like`` (torch converts Scalar arguments so:
    addcmul's value 2.5 is 2 for integers)."""
    return np.asarray(value).astype(like.dtype)


def frac(x):
    return x - np.trunc(x)


def logit(x, eps=None):
    if eps is not None and eps >= 0:
        lo, hi = _scalar_as(eps, x), _scalar_as(1 - eps, x)   # torch: x < lo ? lo : (x > hi ? hi : x)
        x = np.where(x < lo, lo, np.where(x > hi, hi, x))
    return np.log(x / (1 - x))


def _is_float(x):
    return x.dtype.kind not in "biu"          # (bfloat16, from ml_dtypes, is of kind "V")


def signbit(x):
    if _is_float(x):
        return np.signbit(x.astype(np.float32) if x.dtype.kind == "V" else x)
    return x < 0 if x.dtype.kind == "i" else np.zeros(x.shape, bool)


def isposinf(x):
    return x == np.inf if _is_float(x) else np.zeros(x.shape, bool)


def isneginf(x):
    return x == -np.inf if _is_float(x) else np.zeros(x.shape, bool)


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    if not _is_float(x):
        return x.copy()
    return np.where(np.isnan(x), _scalar_as(nan, x), np.where(x == np.inf, _scalar_as(posinf, x),
                                                             np.where(x == -np.inf, _scalar_as(neginf, x), x)))


def frexp_mantissa(x):
    return np.frexp(x)[0]


def frexp_exponent(x):
    return np.frexp(x)[1].astype(np.int32)


def fmax(a, b):
    # a where a >= b or b is NaN (fmax(-0.0, 0.0) is -0.0 in torch; NumPy's SIMD loop gives 0.0)
    return np.where((a >= b) | (b != b), a, b) if np.result_type(a, b).kind == "f" else np.maximum(a, b)


def fmin(a, b):
    return np.where((a <= b) | (b != b), a, b) if np.result_type(a, b).kind == "f" else np.minimum(a, b)


def heaviside(x, values):
    return np.where(x == 0, values, (x > 0).astype(np.result_type(x, values)))   # NaN gives 0, as torch


def ldexp(x, e):
    # x * 2**e, exact for integral e (np.ldexp's exponent is an int: clamped past any finite result)
    x, e = np.broadcast_arrays(x, e)
    integral = np.isfinite(e) & (e == np.floor(e))
    k = np.clip(np.where(integral, e, 0), -3000, 3000).astype(np.int32)
    return np.where(integral, np.ldexp(x, k), x * exp2(e)).astype(x.dtype, copy=False)


def xlogy(x, y):
    # torch: NaN where y is NaN, else 0 where x == 0 (even for y <= 0), else x log y
    with np.errstate(all="ignore"):
        return np.where(np.isnan(y), y, np.where(x == 0, 0, x * np.log(y))).astype(np.result_type(x, y))


def nextafter(a, b):
    return np.where(a == b, b, np.nextafter(a, b))    # C returns b itself (signed zeros); NumPy's float16 a


def gcd(a, b):
    """torch's calc_gcd: Euclid on abs(a), abs(b) with C's remainder, in the integer type (so the
    most negative value's abs wraps: gcd(-128, 0) is -128 in int8, gcd(-128, -49) is -1)."""
    a, b = np.broadcast_arrays(np.abs(a), np.abs(b))
    a, b = a.copy(), b.copy()
    while np.any(a != 0):
        nonzero = a != 0
        rem = np.fmod(b, np.where(nonzero, a, 1))     # C's remainder (the dividend's sign)
        b = np.where(nonzero, a, b)
        a = np.where(nonzero, rem, 0).astype(a.dtype)
    return b


def lcm(a, b):
    # torch: g == 0 ? 0 : abs(a / g * b), which C++ computes in int for the narrow types
    g = gcd(a, b)
    wide = np.int64 if a.dtype.itemsize == 8 else np.int32
    safe = np.where(g == 0, 1, g).astype(wide)
    with np.errstate(all="ignore"):
        r = np.abs((a.astype(wide) // safe) * np.asarray(b).astype(wide))   # a / g is exact
    return np.where(g == 0, 0, r).astype(a.dtype)


def _as_operands(a, b):
    """Two integer operands in one dtype (a Python number takes the other's)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype:
        a, b = (a.astype(b.dtype), b) if a.ndim == 0 else (a, b.astype(a.dtype))
    return a, b


def bitwise_left_shift(a, b):
    # torch: 0 for a shift below 0 or of at least the width
    a, b = _as_operands(a, b)
    bad = (b < 0) | (b >= 8 * a.dtype.itemsize)
    return np.where(bad, 0, np.left_shift(a, np.where(bad, 0, b).astype(a.dtype))).astype(a.dtype)


def bitwise_right_shift(a, b):
    # torch: such a shift gives the sign bits (a >> (width - 1)) for signed types, 0 for unsigned
    a, b = _as_operands(a, b)
    width = 8 * a.dtype.itemsize
    bad = (b < 0) | (b >= width)
    if a.dtype.kind == "i":
        return np.right_shift(a, np.where(bad, width - 1, b).astype(a.dtype))
    return np.where(bad, 0, np.right_shift(a, np.where(bad, 0, b).astype(a.dtype))).astype(a.dtype)


def lerp(x, end, weight):
    # torch's two-sided form: x + w (end - x) for |w| < 1/2, else end - (end - x)(1 - w)
    d = end - x
    return np.where(np.abs(weight) < 0.5, x + weight * d, end - d * (1 - weight))


def addcmul(x, t1, t2, value=1):
    return x + (_scalar_as(value, x) * t1) * t2        # torch's order: (value * t1) * t2


def addcdiv(x, t1, t2, value=1):
    return x + (_scalar_as(value, x) * t1) / t2


def elementwise(name):
    """The reference of elementwise op ``name``: a UFUNCS entry, a function here named as the op,
    or one of backends/numpy_special.py / numpy_act.py (the special functions' and the
    activations' references, their own files)."""
    found = (UFUNCS.get(name) or globals().get(name) or getattr(numpy_special, name, None)
             or getattr(numpy_act, name, None))
    if found is None:
        raise KeyError(f"no NumPy reference for elementwise op {name!r}")
    return found


# ------------------------------------------------------------------ reductions
def reduce(op):
    # the arrays' own methods: np.sum's Python wrappers cost four calls per reduction (issue 14)
    method = {"sum": "sum", "prod": "prod", "amax": "max", "amin": "min"}[op]

    def ref(x, dims, keepdim=False, **_):
        return getattr(x, method)(axis=tuple(dims), keepdims=keepdim) if x.ndim else x
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
            out = np.flip(fn(np.flip(a, ax), axis=ax), ax).reshape(x.shape)
        else:
            out = fn(a, axis=ax).reshape(x.shape)
        if op == "sum" and out.dtype.kind == "f":
            # torch's running sum starts from +0 (as the scan kernel's identity): a leading -0.0
            # stays -0.0 in NumPy's cumsum, +0.0 in torch's; adding +0.0 changes nothing else
            out += 0.0
        return out
    return ref


# ------------------------------------------------------------------ matmul family (ops/linalg.py)
def integer_matmul(x, y):
    """x @ y of integer arrays, exact and wrapping as torch's CPU kernels (and NumPy's integer
    matmul, a plain loop: ~20x slower than BLAS). When no partial sum can reach 2**53 the product
    goes through float64 BLAS instead, exactly (its result converted back to x's dtype)."""
    k = x.shape[-1]
    if x.size and y.size and k:
        # in Python integers: abs() of the most negative int64 would overflow in NumPy
        bound = max(-int(x.min()), int(x.max())) * max(-int(y.min()), int(y.max())) * k
        if bound < 2 ** 53:
            return np.matmul(x.astype(np.float64), y.astype(np.float64)).astype(np.int64).astype(x.dtype)
    return np.matmul(x, y)


def matmul(*arrays, beta=1, alpha=1):
    """mm, bmm, matmul, addmm, baddbmm: alpha * (x @ y) [+ beta * input], from [input,] x, y."""
    x, y = arrays[-2:]
    prod = integer_matmul(x, y) if np.issubdtype(x.dtype, np.integer) else np.matmul(x, y)
    if alpha != 1:
        prod = prod * alpha
    if len(arrays) == 3 and beta != 0:   # beta == 0 ignores input entirely (NaN too), as torch
        input = arrays[0]
        prod = prod + (input if beta == 1 else input * beta)
    return prod


# ------------------------------------------------------------------ joining, triangular, as_strided
def cat(*arrays, dim):
    kept = [a for a in arrays if not (a.ndim == 1 and a.shape[0] == 0)]   # torch's legacy skip
    return np.concatenate(kept, axis=dim)


def stack(*arrays, dim):
    return np.stack(arrays, axis=dim)


def flip(x, dims):
    return np.flip(x, axis=dims) if dims else x


def tril(x, diagonal):
    return np.tril(x, k=diagonal)


def triu(x, diagonal):
    return np.triu(x, k=diagonal)


def slice_backward(g, input_shape, index):
    """The gradient of a basic-index view: zeros of the input's shape, g at ``index``."""
    out = np.zeros(input_shape, dtype=g.dtype)
    out[index] = g
    return out


def diagonal_scatter(x, src, offset, dim1, dim2):
    """x with its diagonal (torch.diagonal(x, offset, dim1, dim2): the two dims replaced by a
    last one) replaced by src."""
    out = np.array(x, copy=True, order="C")
    d1, d2 = dim1 % out.ndim, dim2 % out.ndim
    row0, col0 = max(-offset, 0), max(offset, 0)
    length = max(min(out.shape[d1] - row0, out.shape[d2] - col0), 0)
    if length:
        i = np.arange(length)
        np.moveaxis(out, (d1, d2), (-2, -1))[..., i + row0, i + col0] = src
    return out


def diag_embed(x, offset, dim1, dim2):
    """x's last dim as diagonal ``offset`` of new square matrices over dims dim1, dim2 (wrapped)."""
    shape = list(x.shape[:-1])
    for d in sorted((dim1, dim2)):
        shape.insert(d, x.shape[-1] + abs(int(offset)))
    return diagonal_scatter(np.zeros(shape, dtype=x.dtype), x, offset, dim1, dim2)


def _positions(geometry):
    """Storage position of every element of a (shape, strides, offset) geometry, row-major."""
    shape, strides, offset = geometry
    pos = np.full(tuple(shape), offset, dtype=np.int64)
    for d, (size, st) in enumerate(zip(shape, strides)):
        idx = np.arange(size, dtype=np.int64) * st
        pos = pos + idx.reshape((size,) + (1,) * (len(shape) - d - 1))
    return pos


def restride(g, src, dst):
    """out[j] = sum of g[i] over the elements i of geometry ``src`` whose storage position is that
    of element j of geometry ``dst`` (0 where none is): as_strided's gradient and its adjoint."""
    ps, pd = _positions(src), _positions(dst)
    lo = min(ps.min(initial=0), pd.min(initial=0))
    hi = max(ps.max(initial=0), pd.max(initial=0))
    mirror = np.zeros(hi - lo + 1, dtype=g.dtype)
    np.add.at(mirror, (ps - lo).reshape(-1), np.broadcast_to(g, ps.shape).reshape(-1))
    return mirror[pd - lo]


def as_strided_scatter(x, src, base, view):
    """x (laid out as geometry ``base``) with the elements that share a storage position with
    geometry ``view`` replaced by src's element at that position."""
    pb, pv = _positions(base), _positions(view)
    lo = min(pb.min(initial=0), pv.min(initial=0))
    hi = max(pb.max(initial=0), pv.max(initial=0))
    mirror = np.zeros(hi - lo + 1, dtype=x.dtype)
    mirror[(pb - lo).reshape(-1)] = np.broadcast_to(x, pb.shape).reshape(-1)
    mirror[(pv - lo).reshape(-1)] = np.broadcast_to(src, pv.shape).reshape(-1)
    return mirror[pb - lo]


# ------------------------------------------------------------------ indexing (ops/indexing.py)
# ``key`` is an ops.indexing.IndexKey: a basic part (ints, slices, None) giving a view, and index
# arrays on some dims of that view, where NumPy's advanced-indexing rules agree with torch's.
def advanced_index(x, key, **_):
    view = x[key.basic + (Ellipsis,)]
    return view[key.numpy_key(view.ndim)]


def _last_writers(pos):
    """Positions in ``pos`` of the last occurrence of each distinct value."""
    _, first_in_reversed = np.unique(pos[::-1], return_index=True)
    return len(pos) - 1 - first_in_reversed


def _put(out, pos, vals, accumulate):
    """out.flat[pos] = vals (the last write wins) or += (every write adds, in order)."""
    flat = out.reshape(-1)          # out is C-contiguous: a view
    if accumulate:
        np.add.at(flat, pos, vals)
    elif pos.size:
        last = _last_writers(pos)
        flat[pos[last]] = vals[last]
    return out


def scatter_reduce(x, src, dim, index, reduce, include_self, **_):
    """torch.scatter_reduce: src's values folded into x at the index positions along dim."""
    out = np.array(x, copy=True, order="C")
    idx = np.asarray(index, dtype=np.int64)
    coords = list(np.indices(idx.shape, sparse=True))
    coords[dim] = idx
    pos = np.ravel_multi_index(tuple(np.broadcast_arrays(*coords)), out.shape).reshape(-1)
    vals = np.broadcast_to(src, idx.shape) if src.ndim == 0 else src[tuple(slice(0, s) for s in idx.shape)]
    vals = vals.reshape(-1).astype(out.dtype)
    flat = out.reshape(-1)
    floating = out.dtype.kind == "f"
    if not include_self:       # the operation's identity where a value lands
        low, high = ((-np.inf, np.inf) if floating else (False, True) if out.dtype == np.bool_
                     else (np.iinfo(out.dtype).min, np.iinfo(out.dtype).max))
        flat[pos] = {"sum": 0, "mean": 0, "prod": 1, "amax": low, "amin": high}[reduce]
    ufunc = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}[reduce]
    ufunc.at(flat, pos, vals)
    if reduce == "mean" and pos.size:
        count = np.zeros(flat.size, dtype=np.int64)
        np.add.at(count, pos, 1)
        hit = np.unique(pos)
        n = count[hit] + (1 if include_self else 0)
        flat[hit] = flat[hit] / n if floating else np.floor_divide(flat[hit], n)
    return out


def index_put(x, values, key, accumulate, **_):
    out = np.array(x, copy=True, order="C")
    index_put_into(out, values, key, accumulate, out.dtype)
    return out


def _written_positions(shape, key):
    """Row-major positions, in an array of ``shape`` (the key's view), of the elements
    ``key``'s index arrays select, laid out as the indexing result (torch's and NumPy's rule: the
    broadcast index dims in place of adjacent indexed dims, first otherwise). Built from the
    index arrays and a ramp per dim kept whole, so the cost is the number of elements selected,
    never ``shape``'s size."""
    steps = [1] * len(shape)
    for d in reversed(range(len(shape) - 1)):
        steps[d] = steps[d + 1] * shape[d + 1]
    before, after = key.out_axes(len(shape))
    nb = len(key.bshape)
    result_ndim = len(before) + nb + len(after)

    def placed(arr, first_axis):      # arr's dims become result axes first_axis, first_axis + 1, ...
        return arr.reshape((1,) * first_axis + arr.shape + (1,) * (result_ndim - first_axis - arr.ndim))

    pos = np.zeros((), dtype=np.int64)
    for i, d in enumerate(before):
        pos = pos + placed(np.arange(shape[d], dtype=np.int64) * steps[d], i)
    for d, idx in zip(key.dims, key.indices):
        host = np.asarray(idx.detach()._to_host_array(), dtype=np.int64) % max(shape[d], 1)   # (negatives)
        pos = pos + placed(np.broadcast_to(host, key.bshape) * steps[d], len(before))
    for i, d in enumerate(after):
        pos = pos + placed(np.arange(shape[d], dtype=np.int64) * steps[d], len(before) + nb + i)
    return np.broadcast_to(pos, tuple(shape[d] for d in before) + key.bshape + tuple(shape[d] for d in after))


def index_put_into(dst, values, key, accumulate, acc_dtype):
    """dst[key] = values, or += with ``accumulate`` (summed in ``acc_dtype``, in index order),
    written into the NumPy array ``dst`` itself: time and extra memory are those of the elements
    written. Repeated indices: the last write wins, as torch's cpu loop. A read-only ``dst``
    (read-only memory) is refused by NumPy on the write."""
    view = dst[key.basic + (Ellipsis,)]         # basic indexing: a view of dst
    if view.size == 0:
        return dst
    pos = _written_positions(view.shape, key)
    if accumulate and pos.size:
        width = math.prod(view.shape[d] for d in key.out_axes(view.ndim)[1])    # the dims kept whole, last
        if width > 1 and _accumulate_rows(view, pos, width, values, acc_dtype):
            return dst
    vals = np.broadcast_to(values, pos.shape).reshape(-1)
    pos = pos.reshape(-1)
    if not pos.size:
        return dst
    if accumulate:
        targets, slot = np.unique(pos, return_inverse=True)
        coords = np.unravel_index(targets, view.shape)
        acc = view[coords].astype(acc_dtype)
        np.add.at(acc, slot.reshape(-1), vals.astype(acc_dtype, copy=False))     # acc is our own copy
        view[coords] = acc                       # (rounded back to dst's dtype)
    else:
        last = _last_writers(pos)
        view[np.unravel_index(pos[last], view.shape)] = vals[last]
    return dst


# _accumulate_rows adds a target row's repeats one pass per repeat: up to this many passes it beats
# np.add.at's element-by-element loop (embedding backward, 700 rows of 200: 34 ms -> ~2 ms)
_MAX_ROW_REPEATS = 64


def _accumulate_rows(view, pos, width, values, acc_dtype):
    """index_put's ``+=`` a row at a time: ``pos`` (the written positions) ends in the dims the key
    keeps whole, ``width`` elements, so it is a row of positions per selection of the index arrays,
    and rows with the same first position are the same target. Each target's rows are added in index order, exactly as element-wise (a stable
    sort groups them; pass k adds every target's k-th row). Returns False, doing nothing, where a
    target repeats more than _MAX_ROW_REPEATS times (np.add.at is then cheaper)."""
    rows = pos.reshape(-1, width)
    order = np.argsort(rows[:, 0], kind="stable")
    starts = rows[order, 0]
    new_target = np.empty(len(starts), dtype=bool)
    new_target[0], new_target[1:] = True, starts[1:] != starts[:-1]
    target = np.cumsum(new_target) - 1                # the sorted row's target
    first = np.flatnonzero(new_target)
    repeat = np.arange(len(starts)) - first[target]   # the row's place among its target's rows
    passes = int(repeat.max()) + 1
    if passes > _MAX_ROW_REPEATS:
        return False
    heads = starts[first]
    if view.flags.c_contiguous and not (heads % width).any() and (rows[0] - rows[0, 0] == np.arange(width)).all():
        table, where = view.reshape(-1, width), heads // width       # whole rows of a C-contiguous view
    else:
        table, where = view, np.unravel_index(rows[order[first]].reshape(-1), view.shape)
    current = table[where]
    acc = current.astype(acc_dtype).reshape(len(first), width)
    vals = np.broadcast_to(values, pos.shape).reshape(-1, width)[order].astype(acc_dtype, copy=False)
    for k in range(passes):
        at = repeat == k
        acc[target[at]] += vals[at]                   # distinct targets within a pass
    table[where] = acc.reshape(current.shape)         # (rounded back to dst's dtype)
    return True


def gather(x, dim, index, **_):
    idx = np.asarray(index, dtype=np.int64)
    src = x[tuple(slice(None) if d == dim else slice(0, s) for d, s in enumerate(idx.shape))]
    return np.take_along_axis(src, idx, axis=dim)


def scatter(accumulate):
    def ref(x, src, dim, index, **_):
        out = np.array(x, copy=True, order="C")
        idx = np.asarray(index, dtype=np.int64)
        coords = list(np.indices(idx.shape, sparse=True))
        coords[dim] = idx
        pos = np.ravel_multi_index(tuple(np.broadcast_arrays(*coords)), out.shape).reshape(-1)
        vals = np.broadcast_to(src, idx.shape) if src.ndim == 0 else src[tuple(slice(0, s) for s in idx.shape)]
        return _put(out, pos, vals.reshape(-1), accumulate)
    return ref


# ------------------------------------------------------------------ parameterised samplers (ops/random_dists.py)
def sample(kind, params, engine):
    """Draws of torch's _standard_gamma ("gamma": alpha), poisson ("poisson": rate) and binomial
    ("binomial": count, prob) from NumPy Generator ``engine``, computed in float64 and returned
    in the parameters' dtype, with torch's values at the edges (cpu kernels, Distributions.h)."""
    dtype = params[0].dtype
    args = [np.asarray(p, dtype=np.float64) for p in params]
    with np.errstate(invalid="ignore", over="ignore"):
        if kind == "gamma":
            (alpha,) = args
            inside = (alpha > 0) & np.isfinite(alpha)
            draws = engine.standard_gamma(np.where(inside, alpha, 1.0))
            draws = np.where(inside, draws, np.where(alpha == np.inf, np.inf, 0.0)).astype(dtype)
            # torch: max(smallest normal, sample): alpha <= 0 and NaN give it too
            return np.where(draws > 0, draws, np.finfo(dtype).tiny).astype(dtype)
        if kind == "poisson":
            (rate,) = args
            ok = np.isfinite(rate) & (rate < 9e18)
            draws = engine.poisson(np.where(ok, rate, 0.0)).astype(np.float64)
            # an infinite rate: torch's cast of inf to int64 (its lowest value); past numpy's
            # range the rate itself (within its own standard deviation of any draw)
            draws = np.where(ok, draws, np.where(rate == np.inf, -2.0 ** 63, rate))
            return draws.astype(dtype)
        if kind == "binomial":
            count, prob = args
            n = np.floor(np.where(np.isfinite(count) & (count > 0), count, 0.0))
            p = np.where((prob > 0) & (prob < 1), prob, 0.0)
            draws = engine.binomial(n.astype(np.int64), p).astype(np.float64)
            draws = np.where(prob >= 1, n, draws)
            draws = np.where((count <= 0) | (prob <= 0), 0.0, draws)
            return np.where(np.isnan(prob) | np.isnan(count), np.nan, draws).astype(dtype)
    raise ValueError(f"sample: unknown kind {kind!r}")
