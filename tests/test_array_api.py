"""tritensor.array_api against the standard's reference namespace, array-api-strict (an
independent implementation of the 2024.12 text over NumPy): hypothesis draws small arrays of
every standard dtype tritensor has (special values included: NaN, +-inf, -0.0), each function
runs in both namespaces, and the values and the result dtype must agree (issue 28 items 1 and 5).
The standard's official suite (data-apis/array-api-tests) is too slow for CI: its command and
pass rate are in bench/RESULTS.md ("Array API compliance")."""
from __future__ import annotations

import copy
import math
import operator
import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tritensor as tt
import tritensor.array_api as xp

xs = pytest.importorskip("array_api_strict")
xs.set_array_api_strict_flags(api_version="2024.12")

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")   # NumPy's, under array-api-strict
SETTINGS = settings(max_examples=8, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])

INTS = ("int8", "int16", "int32", "int64", "uint8") + tuple(n for n in ("uint16", "uint32", "uint64")
                                                            if hasattr(xp, n))
FLOATS = ("float32", "float64")
NUMERIC = INTS + FLOATS
ALL = ("bool",) + NUMERIC


# --------------------------------------------------------------------------- drawing and comparing
def _elements(dtype, nonzero=False, small=False, finite=False):
    if dtype == "bool":
        return st.booleans()
    if dtype in FLOATS:
        width = 32 if dtype == "float32" else 64
        if small:
            return st.floats(-4, 4, width=width).filter(lambda v: not nonzero or v != 0)
        special = st.sampled_from([math.nan, -0.0, 0.0, 1.0, -1.0, 0.5] + ([] if finite else [math.inf, -math.inf]))
        finite = st.floats(-1e3, 1e3, width=width)
        return st.one_of(special, finite).filter(lambda v: not nonzero or v != 0)
    info = np.iinfo(dtype)
    lo, hi = (max(int(info.min), -20), min(int(info.max), 20)) if small else (int(info.min), int(info.max))
    return st.integers(lo, hi).filter(lambda v: not nonzero or v != 0)


def arrays(draw, dtype, shape, **kw):
    return draw(hnp.arrays(np.dtype(dtype), shape, elements=_elements(dtype, **kw)))


def small_shape(min_dims=0, min_side=0):
    return hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=min_side, max_side=4)


def _to(ns, value):
    """A NumPy array as an array of namespace ``ns``; other arguments as they are."""
    if isinstance(value, np.ndarray):
        if ns is xp:
            return tt.from_numpy(value.copy())
        return xs.asarray(value)
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], np.ndarray):
        return type(value)(_to(ns, v) for v in value)
    if isinstance(value, str) and value.startswith("dtype:"):
        return getattr(ns, value[6:])
    return value


def _np(value):
    if isinstance(value, tt.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def check(name, *args, rtol=1e-5, atol=1e-6, zero_sign=True, **kwargs):
    """Run ``name`` in both namespaces and compare the results: dtype, shape, values (NaN where
    NaN, the sign of a zero where ``zero_sign``); an exception in array-api-strict must be an
    exception here too (any type: the standard leaves the type to the library)."""
    check_call(name, lambda ns, *a, **k: _resolve(ns, name)(*a, **k), args, kwargs, rtol=rtol, atol=atol,
               zero_sign=zero_sign)


def check_call(name, call, args, kwargs=None, *, convert=None, rtol=1e-5, atol=1e-6, zero_sign=True):
    """``call(ns, *args, **kwargs)`` in both namespaces, compared as ``check`` does; NumPy arguments
    become each namespace's arrays by ``convert(ns, value)`` (default: ``_to``)."""
    convert, kwargs = convert or _to, kwargs or {}
    try:
        want = call(xs, *[convert(xs, a) for a in args], **{k: convert(xs, v) for k, v in kwargs.items()})
    except (TypeError, ValueError, IndexError, RuntimeError, OverflowError, ZeroDivisionError):
        with pytest.raises(Exception):
            call(xp, *[convert(xp, a) for a in args], **{k: convert(xp, v) for k, v in kwargs.items()})
        return
    got = call(xp, *[convert(xp, a) for a in args], **{k: convert(xp, v) for k, v in kwargs.items()})
    _compare(name, got, want, rtol, atol, zero_sign)


def _resolve(ns, name):
    obj = ns
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _compare(name, got, want, rtol, atol, zero_sign):
    if isinstance(want, (tuple, list)):
        assert type(got).__name__ == type(want).__name__ or isinstance(got, (tuple, list)), name
        assert len(got) == len(want), name
        if hasattr(want, "_fields"):
            assert got._fields == want._fields, name
        for g, w in zip(got, want):
            _compare(name, g, w, rtol, atol, zero_sign)
        return
    if isinstance(want, (bool, int, float)):
        assert got == want or (math.isnan(want) and math.isnan(got)), (name, got, want)
        return
    assert isinstance(got, tt.Tensor), (name, type(got))
    assert got.dtype.name == str(want.dtype).split(".")[-1], (name, got.dtype, want.dtype)
    g, w = _np(got), np.asarray(want)
    assert g.shape == w.shape, (name, g.shape, w.shape)
    if w.dtype.kind == "f":
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=name)
        if zero_sign:
            zeros = (w == 0) & (g == 0)
            assert (np.signbit(g[zeros]) == np.signbit(w[zeros])).all(), (name, "sign of zero", g, w)
    else:
        np.testing.assert_array_equal(g, w, err_msg=name)


# --------------------------------------------------------------------------- element-wise
UNARY_FLOAT = ["acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp", "expm1", "log", "log1p",
               "log2", "log10", "sin", "sinh", "sqrt", "tan", "tanh", "signbit", "reciprocal"]
UNARY_NUMERIC = ["abs", "negative", "positive", "square", "sign", "ceil", "floor", "trunc", "round", "isfinite",
                 "isinf", "isnan", "conj", "real"]


@pytest.mark.parametrize("name", UNARY_FLOAT + UNARY_NUMERIC + ["bitwise_invert", "logical_not"])
@SETTINGS
@given(data=st.data())
def test_unary(name, data):
    kinds = {"bitwise_invert": INTS + ("bool",), "logical_not": ("bool",)}.get(
        name, FLOATS if name in UNARY_FLOAT else NUMERIC)
    dtype = data.draw(st.sampled_from(kinds))
    x = arrays(data.draw, dtype, data.draw(small_shape()))
    # sign(-0.0) may be either zero (the standard); float32 transcendental functions: a few ulps
    check(name, x, rtol=3e-6 if dtype == "float32" else 1e-12, atol=0, zero_sign=name != "sign")


BINARY = {
    "add": NUMERIC, "subtract": NUMERIC, "multiply": NUMERIC, "maximum": NUMERIC, "minimum": NUMERIC,
    "divide": FLOATS, "pow": FLOATS, "atan2": FLOATS, "copysign": FLOATS, "hypot": FLOATS, "logaddexp": FLOATS,
    "nextafter": FLOATS, "floor_divide": NUMERIC, "remainder": NUMERIC,
    "equal": ALL, "not_equal": ALL, "less": NUMERIC, "less_equal": NUMERIC, "greater": NUMERIC,
    "greater_equal": NUMERIC, "logical_and": ("bool",), "logical_or": ("bool",), "logical_xor": ("bool",),
    "bitwise_and": INTS + ("bool",), "bitwise_or": INTS + ("bool",), "bitwise_xor": INTS + ("bool",),
    "bitwise_left_shift": INTS, "bitwise_right_shift": INTS,
}
_KIND_OF = {**{d: "int" for d in INTS}, **{d: "float" for d in FLOATS}, "bool": "bool"}


@pytest.mark.parametrize("name", sorted(BINARY))
@SETTINGS
@given(data=st.data())
def test_binary(name, data):
    """Two arrays of the same kind, possibly different dtypes and shapes (0-d included): the
    standard's promotion, and values."""
    x1, x2 = _binary_operands(name, data)
    check(name, x1, x2, rtol=3e-6 if "float32" in (x1.dtype, x2.dtype) else 1e-12, atol=0)


def _binary_operands(name, data):
    """Two NumPy arrays for ``name``: one kind, dtypes the standard promotes, broadcastable shapes
    (0-d included), nonzero divisors for integer division, shifts in range."""
    d1 = data.draw(st.sampled_from(BINARY[name]))
    d2 = data.draw(st.sampled_from([d for d in BINARY[name] if _KIND_OF[d] == _KIND_OF[d1]
                                    and {d1, d} != {"int64", "uint64"} and not ({d1, d} & {"uint64"} and
                                                                               {d1, d} & {"int8", "int16", "int32"})]))
    s1, s2 = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3)).input_shapes
    integer_division = name in ("floor_divide", "remainder") and _KIND_OF[d1] == "int"
    shift = name.startswith("bitwise_") and "shift" in name
    # array-api-strict computes float // and % as NumPy does, which misses the standard's special
    # cases for infinite operands (inf // 2 is inf): those are checked by hand values below
    finite = name in ("floor_divide", "remainder")
    x1 = arrays(data.draw, d1, s1, small=integer_division, finite=finite)
    x2 = arrays(data.draw, d2, s2, nonzero=integer_division, small=integer_division or shift, finite=finite)
    if shift:
        x2 = np.asarray(np.abs(x2.astype(np.int64)).astype(x2.dtype) % 8)     # (a 0-d array stays one)
    return x1, x2


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "less", "equal", "maximum", "pow"])
@SETTINGS
@given(data=st.data())
def test_binary_with_a_python_scalar(name, data):
    """A Python scalar takes the array's dtype, on either side (the standard's 2024.12 rule)."""
    dtype = data.draw(st.sampled_from(FLOATS if name in ("divide", "pow") else NUMERIC))
    x = arrays(data.draw, dtype, data.draw(small_shape()), small=True)
    scalar = data.draw(st.integers(0, 5) if dtype in INTS else st.sampled_from([0.5, 2.0, -0.0, math.inf]))
    check(name, x, scalar, rtol=3e-6, atol=0)
    check(name, scalar, x, rtol=3e-6, atol=0)


@SETTINGS
@given(data=st.data())
def test_clip(data):
    dtype = data.draw(st.sampled_from(NUMERIC))
    x = arrays(data.draw, dtype, data.draw(small_shape()))
    lo, hi = sorted(data.draw(st.lists(_elements(dtype, small=True), min_size=2, max_size=2)))
    check("clip", x, lo, hi)
    check("clip", x, min=lo)
    check("clip", x, max=np.asarray(hi, dtype=dtype))


# --------------------------------------------------------------------------- the array object's operators
OPERATORS = {
    "+": ("add", operator.add, operator.iadd), "-": ("subtract", operator.sub, operator.isub),
    "*": ("multiply", operator.mul, operator.imul), "/": ("divide", operator.truediv, operator.itruediv),
    "//": ("floor_divide", operator.floordiv, operator.ifloordiv), "%": ("remainder", operator.mod, operator.imod),
    "**": ("pow", operator.pow, operator.ipow), "&": ("bitwise_and", operator.and_, operator.iand),
    "|": ("bitwise_or", operator.or_, operator.ior), "^": ("bitwise_xor", operator.xor, operator.ixor),
    "<<": ("bitwise_left_shift", operator.lshift, operator.ilshift),
    ">>": ("bitwise_right_shift", operator.rshift, operator.irshift),
    "<": ("less", operator.lt, None), "<=": ("less_equal", operator.le, None), ">": ("greater", operator.gt, None),
    ">=": ("greater_equal", operator.ge, None), "==": ("equal", operator.eq, None),
    "!=": ("not_equal", operator.ne, None),
}


def _array(ns, value):
    """A NumPy value as the namespace's own array (``asarray``: for tritensor an Array, whose
    operators are the standard's)."""
    return ns.asarray(value.copy()) if isinstance(value, np.ndarray) else value


def _inplace(fn):
    def call(ns, a, b):
        before = a
        a = fn(a, b)
        assert a is before or ns is xs          # tritensor's arrays change in place
        return a
    return call


@pytest.mark.parametrize("symbol", sorted(OPERATORS))
@SETTINGS
@given(data=st.data())
def test_operators_follow_the_standard(symbol, data):
    """``x1 op x2`` on the namespace's arrays (0-d ones promote as any array), ``x op scalar`` and
    ``scalar op x`` (the scalar takes the array's dtype), and ``x1 op= x2`` where the promoted dtype
    and the broadcast shape are x1's: array-api-strict's values, dtypes and special cases (``inf // 2``
    is inf, ``-0.0 % 2`` is +0)."""
    name, fn, ifn = OPERATORS[symbol]
    x1, x2 = _binary_operands(name, data)
    tolerance = dict(rtol=3e-6 if "float32" in (x1.dtype, x2.dtype) else 1e-12, atol=0)
    check_call(symbol, lambda ns, a, b: fn(a, b), (x1, x2), convert=_array, **tolerance)
    kind = _KIND_OF[str(x1.dtype)]
    scalar = data.draw({"bool": st.booleans(), "int": st.integers(1, 5),
                        "float": st.sampled_from([0.5, 2.0, -0.0, -3.0] + [math.inf] * (symbol not in "//%"))}[kind])
    check_call(symbol, lambda ns, a, b: fn(a, b), (x1, scalar), convert=_array, **tolerance)
    # (x2 on the right: it holds the valid divisors and shift counts)
    check_call(symbol, lambda ns, a, b: fn(a, b), (scalar, x2), convert=_array, **tolerance)
    if ifn is not None and x1.shape == np.broadcast_shapes(x1.shape, x2.shape) and (
            xs.result_type(getattr(xs, str(x1.dtype)), getattr(xs, str(x2.dtype))) == getattr(xs, str(x1.dtype))):
        check_call(symbol + "=", _inplace(ifn), (x1, x2), convert=_array, **tolerance)


def test_operator_special_cases_and_torchs_rules_on_plain_tensors():
    """Hand values of the standard's special cases, on Arrays; a plain Tensor keeps torch's rules
    (tt is PyTorch's namespace), and ``Tensor op Array`` takes the Array's."""
    inf = math.inf
    x = xp.asarray([inf, -inf, 5.0, -5.0, -0.0, 0.0])
    assert (x // 2).tolist() == [inf, -inf, 2.0, -3.0, -0.0, 0.0]
    assert [math.copysign(1, v) for v in (xp.asarray([1.0, -1.0]) // xp.asarray([-inf, inf])).tolist()] == [-1, -1]
    # the standard's table (IEEE: floor(5 / -inf) is -0; Python's 5.0 // -inf is -1.0)
    assert [math.copysign(1, v) for v in (x // -inf).tolist()[2:4]] == [-1, 1] and (x // -inf)[2:4].tolist() == [0, 0]
    assert math.isnan((x % 2).tolist()[0])
    assert [math.copysign(1, v) for v in (x % 2).tolist()[2:]] == [1, 1, 1, 1]    # -0 % 2 is +0
    assert math.isnan((tt.tensor(inf) // 2).item())                   # torch: inf // 2 is nan
    assert math.copysign(1, (tt.tensor(-0.0) % 2).item()) == -1       # torch keeps x1's zero
    i16, i8 = xp.asarray(300, dtype=xp.int16), xp.asarray([1, 2], dtype=xp.int8)
    assert (i16 + i8).dtype is xp.int16 and (i16 + i8).tolist() == [301, 302]
    assert (tt.tensor(300, dtype=tt.int16) + tt.tensor([1, 2], dtype=tt.int8)).dtype is tt.int8    # torch's 0-d rule
    assert (tt.tensor([1, 2], dtype=tt.int8) + i16).dtype is xp.int16      # the Array's reflected operator
    assert type(tt.ones(2) + xp.ones(2)).__name__ == "Array"
    u = xp.asarray([3, 2**16 - 1], dtype=xp.uint16)
    assert (u + 1).tolist() == [4, 0] and (u + xp.asarray(1, dtype=xp.uint8)).dtype is xp.uint16
    assert (-xp.asarray([1, -2])).tolist() == [-1, 2] and abs(xp.asarray([-1.5])).tolist() == [1.5]
    assert (~xp.asarray([0, 5], dtype=xp.uint8)).tolist() == [255, 250]
    assert int(~xp.asarray(0, dtype=xp.uint64)) == 2**64 - 1 if hasattr(xp, "uint64") else True
    # Python scalars: the array's dtype on either side; an int past the dtype's range is refused
    i8 = xp.asarray([1, -2], dtype=xp.int8)
    assert (3 - i8).tolist() == [2, 5] and (3 - i8).dtype is xp.int8 and (1 / i8).dtype is xp.float32
    assert (2 ** i8[:1]).tolist() == [2] and (1 < i8).tolist() == [False, False] and (i8 * 1.5).dtype is xp.float32
    with pytest.raises(OverflowError):
        i8 + 300
    if hasattr(xp, "uint64"):
        big = xp.asarray([2**63 + 5], dtype=xp.uint64)
        assert (big - 2**63).tolist() == [5] and (2**64 - 1 - big).tolist() == [2**63 - 6]


def test_inplace_operators_keep_the_array():
    x = xp.asarray([1, 2, 3])
    ptr, same = x.data_ptr(), x
    x += 1
    x //= 2
    assert x is same and x.data_ptr() == ptr and x.tolist() == [1, 1, 2]
    y = xp.asarray([1.0, 2.0])
    y **= xp.asarray(2.0)
    assert y.tolist() == [1.0, 4.0]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        x += 1.5
    with pytest.raises(ValueError, match="broadcast"):
        x += xp.ones((2, 3), dtype=xp.int64)
    assert (x @ xp.asarray([1, 1, 1])).tolist() == 4 and (xp.asarray(2.0) < x).dtype is xp.bool
    assert (x == None) is False and x.__add__("a") is NotImplemented       # noqa: E711
    with pytest.raises(TypeError):
        x + "a"


def _slices(draw, n):
    step = draw(st.sampled_from([1, 2, 3, -1, -2, -3, None]))
    bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
    return slice(draw(bound), draw(bound), step)


@SETTINGS
@given(data=st.data())
def test_indexing_with_negative_steps(data):
    """``x[key]`` and ``x[key] = v`` with slices of any step and bound, ints, None and Ellipsis
    among them: NumPy's values, the semantics the standard's indexing is written from (torch refuses
    negative steps; array-api-strict refuses bounds past an axis, which the standard leaves open)."""
    shape = data.draw(small_shape(min_dims=1, min_side=0))
    x = np.arange(math.prod(shape), dtype=np.int16).reshape(shape)
    key = [_slices(data.draw, n) for n in shape]
    if data.draw(st.booleans()) and shape[0] > 0:
        key[0] = data.draw(st.integers(-shape[0], shape[0] - 1))
    key.insert(data.draw(st.integers(0, len(key))), data.draw(st.sampled_from([None, Ellipsis, slice(None)])))
    if key.count(Ellipsis) == 0 and len([k for k in key if k is not None]) > len(shape):
        key.remove(slice(None))
    key = tuple(key)
    got = xp.asarray(x)[key]
    assert type(got).__name__ == "Array"
    np.testing.assert_array_equal(_np(got), x[key], err_msg=str(key))
    value = -7 if data.draw(st.booleans()) else -1 - np.arange(x[key].size, dtype=np.int16).reshape(x[key].shape)
    a, want = xp.asarray(x), x.copy()
    a[key] = value if isinstance(value, int) else xp.asarray(value)
    want[key] = value
    np.testing.assert_array_equal(_np(a), want, err_msg=str(key))


def test_empty_boolean_masks_and_transposes():
    """A boolean mask may have a zero-length axis where x's is longer (it selects nothing); ``x.T``
    is for matrices only (the standard), ``x.mT`` any stack of them; results are Arrays."""
    x = xp.zeros((0, 1))
    assert x[xp.zeros((0, 0), dtype=xp.bool)].shape == (0,)
    y = xp.reshape(xp.arange(6), (2, 3))
    assert y[xp.zeros((2, 0), dtype=xp.bool)].shape == (0,)
    with pytest.raises(IndexError):
        y[xp.zeros((3, 0), dtype=xp.bool)]
    y[xp.zeros((0, 3), dtype=xp.bool)] = 5
    assert y.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert y.T.shape == (3, 2) and type(y.T).__name__ == type(y.mT).__name__ == "Array"
    with pytest.raises(ValueError, match="two-dimensional"):
        xp.arange(3).T


def test_arrays_are_tensors_and_the_callers_tensor_keeps_its_class():
    """The namespace returns Arrays; a Tensor handed in and returned as it is (``copy=False``)
    comes back as an Array view of it: the caller's object keeps torch's operators."""
    t = tt.tensor([1.0, math.inf])
    a = xp.asarray(t, copy=False)
    assert type(t) is tt.Tensor and isinstance(a, tt.Tensor) and type(a).__name__ == "Array"
    a[0] = 3.0
    assert t.tolist() == [3.0, math.inf]                    # a view: the same memory
    assert math.isnan((t // 2)[1].item()) and (a // 2)[1].item() == math.inf
    assert type(xp.unique_all(a).values).__name__ == "Array" and xp.unique_all(a)._fields[0] == "values"
    w = tt.tensor([2.0, 3.0], requires_grad=True)
    z = xp.asarray(w, copy=False) ** 2 // 1                 # the Array's operators keep the graph
    (xp.asarray(w, copy=False) * 3).sum().backward()
    assert w.grad.tolist() == [3.0, 3.0] and z.tolist() == [4.0, 9.0]
    for copied in (copy.deepcopy(a), pickle.loads(pickle.dumps(a))):   # scikit-learn's clone deep-copies
        assert type(copied).__name__ == "Array" and (copied // 2)[1].item() == math.inf


# --------------------------------------------------------------------------- reductions
def _axis(data, ndim):
    choices = [st.none(), st.just(())]
    if ndim:
        choices.append(st.integers(-ndim, ndim - 1))
        choices.append(st.lists(st.integers(0, ndim - 1), unique=True, min_size=1, max_size=ndim).map(tuple))
    return data.draw(st.one_of(*choices))


REDUCTIONS = {"sum": NUMERIC, "prod": NUMERIC, "max": NUMERIC, "min": NUMERIC, "mean": FLOATS, "std": FLOATS,
              "var": FLOATS, "all": ALL, "any": ALL, "count_nonzero": ALL}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@SETTINGS
@given(data=st.data())
def test_reduction(name, data):
    dtype = data.draw(st.sampled_from(REDUCTIONS[name]))
    shape = data.draw(small_shape(min_side=1 if name in ("max", "min") else 0))
    x = arrays(data.draw, dtype, shape, small=name == "prod")
    kwargs = {"axis": _axis(data, len(shape)), "keepdims": data.draw(st.booleans())}
    if name in ("sum", "prod") and dtype in INTS[4:] and not hasattr(xp, "uint64"):
        kwargs["dtype"] = "dtype:int64"     # the standard's default accumulator for unsigned is uint64
    if name in ("std", "var"):
        kwargs["correction"] = data.draw(st.sampled_from([0, 1, 0.5]))
    check(name, x, rtol=1e-4 if dtype == "float32" else 1e-10, atol=1e-5 if dtype == "float32" else 1e-10,
          zero_sign=False, **kwargs)


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod", "argmax", "argmin", "sort", "argsort", "diff"])
@SETTINGS
@given(data=st.data())
def test_along_an_axis(name, data):
    dtype = data.draw(st.sampled_from(NUMERIC))
    shape = data.draw(small_shape(min_dims=1, min_side=1))
    x = arrays(data.draw, dtype, shape, small=name == "cumulative_prod")
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    kwargs = {"axis": axis}
    if name.startswith("cumulative"):
        kwargs["include_initial"] = data.draw(st.booleans())
        if dtype in INTS[4:] and not hasattr(xp, "uint64"):
            kwargs["dtype"] = "dtype:int64"     # the standard's default accumulator for unsigned is uint64
    elif name.startswith("arg") and name != "argsort":
        kwargs["keepdims"] = data.draw(st.booleans())
        if dtype in FLOATS:     # the index of the first NaN is not specified by the standard
            x = np.nan_to_num(x)
    elif name in ("sort", "argsort"):
        kwargs["descending"] = data.draw(st.booleans())
        if name == "argsort" and dtype in FLOATS:
            x = np.nan_to_num(x)    # equal NaNs: a stable order is not specified across NaN payloads
    elif name == "diff":
        kwargs["n"] = data.draw(st.integers(0, 2))
    check(name, x, rtol=1e-4, atol=1e-5, zero_sign=False, **kwargs)


# --------------------------------------------------------------------------- manipulation, indexing
@pytest.mark.parametrize("name", ["broadcast_to", "concat", "stack", "unstack", "expand_dims", "flip", "moveaxis",
                                  "permute_dims", "repeat", "reshape", "roll", "squeeze", "tile", "take",
                                  "take_along_axis", "broadcast_arrays", "matrix_transpose", "tril", "triu"])
@SETTINGS
@given(data=st.data())
def test_manipulation(name, data):
    dtype = data.draw(st.sampled_from(ALL))
    shape = data.draw(small_shape(min_dims=1, min_side=1))
    x = arrays(data.draw, dtype, shape)
    nd = len(shape)
    axis = data.draw(st.integers(-nd, nd - 1))
    if name == "broadcast_to":
        check(name, x, (2,) + shape)
    elif name in ("concat", "stack"):
        other_dtype = data.draw(st.sampled_from([d for d in ALL if _KIND_OF[d] == _KIND_OF[dtype]
                                                 and "uint64" not in (d, dtype)]))
        y = arrays(data.draw, other_dtype, shape)
        check(name, [x, y], axis=axis)
        if name == "concat":
            check(name, [x, y], axis=None)
    elif name == "unstack":
        check(name, x, axis=axis)
    elif name == "expand_dims":
        check(name, x, axis=data.draw(st.integers(-nd - 1, nd)))
    elif name in ("flip", "roll"):
        args = (data.draw(st.integers(-3, 3)),) if name == "roll" else ()
        check(name, x, *args, axis=data.draw(st.one_of(st.none(), st.just(axis))))
    elif name == "moveaxis":
        check(name, x, axis, data.draw(st.integers(-nd, nd - 1)))
    elif name == "permute_dims":
        check(name, x, tuple(data.draw(st.permutations(range(nd)))))
    elif name == "repeat":
        check(name, x, data.draw(st.integers(0, 3)), axis=data.draw(st.one_of(st.none(), st.just(axis))))
    elif name == "reshape":
        check(name, x, (-1,), copy=data.draw(st.sampled_from([None, True])))
        check(name, x, (int(np.prod(shape)), 1))
    elif name == "squeeze":
        check(name, x.reshape(shape + (1,)), axis=-1)
        check(name, x, axis=axis)                   # raises unless that axis has length one
    elif name == "tile":
        check(name, x, tuple(data.draw(st.lists(st.integers(0, 2), min_size=1, max_size=3))))
    elif name == "take":
        idx = np.asarray(data.draw(st.lists(st.integers(-shape[axis], shape[axis] - 1), max_size=4)), np.int64)
        check(name, x, idx, axis=axis)
    elif name == "take_along_axis":
        ishape = list(shape)
        ishape[axis] = data.draw(st.integers(0, 3))
        idx = data.draw(hnp.arrays(np.int64, tuple(ishape), elements=st.integers(0, shape[axis] - 1)))
        check(name, x, idx, axis=axis)
    elif name == "broadcast_arrays":
        check(name, x, x.reshape((1,) + shape))
    elif nd >= 2:       # matrix_transpose, tril, triu
        kwargs = {} if name == "matrix_transpose" else {"k": data.draw(st.integers(-2, 2))}
        check(name, x, **kwargs)


# --------------------------------------------------------------------------- search, sets
@pytest.mark.parametrize("name", ["nonzero", "where", "searchsorted", "unique_values", "unique_counts",
                                  "unique_inverse", "unique_all"])
@SETTINGS
@given(data=st.data())
def test_searching_and_sets(name, data):
    dtype = data.draw(st.sampled_from(NUMERIC))
    shape = data.draw(small_shape(min_dims=1))
    x = arrays(data.draw, dtype, shape, small=True)
    if name == "nonzero":
        check(name, x)
    elif name == "where":
        y = arrays(data.draw, dtype, shape)
        check(name, x > 0, x, y)
        check(name, x > 0, x, 1)
    elif name == "searchsorted":
        sorted_x = np.sort(x.reshape(-1))
        check(name, sorted_x, x, side=data.draw(st.sampled_from(["left", "right"])))
        check(name, x.reshape(-1), x, sorter=np.argsort(x.reshape(-1), kind="stable"))
    else:           # the standard leaves the order of unique values open: both sort here
        check(name, x)


# --------------------------------------------------------------------------- creation, dtypes
@SETTINGS
@given(data=st.data())
def test_creation(data):
    dtype = "dtype:" + data.draw(st.sampled_from(NUMERIC))
    shape = data.draw(small_shape())
    start, stop = data.draw(st.integers(-5, 5)), data.draw(st.integers(-5, 5))
    check("arange", start, stop, data.draw(st.sampled_from([1, 2, -1, -3])))
    f64 = "dtype:float64"       # array-api-strict's default float is float64, tritensor's float32
    check("arange", float(start), stop, 0.5, dtype=f64)
    check("zeros", shape, dtype=dtype)
    check("ones", shape, dtype=dtype)
    check("full", shape, 3)
    check("full", shape, True)
    check("full", shape, 2.5, dtype="dtype:float64")
    check("eye", data.draw(st.integers(0, 4)), data.draw(st.integers(0, 4)), k=data.draw(st.integers(-2, 2)),
          dtype=f64)
    check("linspace", float(start), float(stop), data.draw(st.integers(0, 5)), endpoint=data.draw(st.booleans()),
          dtype=f64)
    x = arrays(data.draw, "float64", shape)
    check("zeros_like", x)
    check("ones_like", x, dtype=dtype)
    check("full_like", x, 7, dtype=dtype)
    check("asarray", x)
    check("asarray", [[1, 2], [3, 4]])
    check("asarray", [1.5, -0.0], dtype=f64)
    check("meshgrid", np.arange(3.0), np.arange(2.0), indexing=data.draw(st.sampled_from(["xy", "ij"])))
    check("astype", x, dtype)


def test_empty_and_empty_like_shapes_and_dtypes():
    assert xp.empty((2, 3), dtype=xp.int16).shape == (2, 3) and xp.empty(4).dtype is xp.float32
    assert xp.empty_like(xp.ones((2,), dtype=xp.uint8)).dtype is xp.uint8


@pytest.mark.parametrize("pair", [(a, b) for a in ALL for b in ALL])
def test_result_type_and_can_cast_follow_the_standards_table(pair):
    a, b = pair
    if _KIND_OF[a] == _KIND_OF[b] and {a, b} != {"int64", "uint64"} and not (
            "uint64" in (a, b) and {a, b} & {"int8", "int16", "int32"}):
        want = xs.result_type(getattr(xs, a), getattr(xs, b))
        assert xp.result_type(getattr(xp, a), getattr(xp, b)).name == xs_name(want), pair
        assert xp.result_type(xp.ones((), dtype=getattr(xp, a)), xp.ones(2, dtype=getattr(xp, b))).name == \
            xs_name(want), pair     # a 0-d array ranks as any other
    assert xp.can_cast(getattr(xp, a), getattr(xp, b)) == xs.can_cast(getattr(xs, a), getattr(xs, b)), pair


def xs_name(d):
    return str(d).split(".")[-1]


def test_isdtype_finfo_iinfo():
    for name in ALL:
        for kind in ("bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating",
                     "numeric"):
            assert xp.isdtype(getattr(xp, name), kind) == xs.isdtype(getattr(xs, name), kind), (name, kind)
    for name in FLOATS:
        got, want = xp.finfo(getattr(xp, name)), xs.finfo(getattr(xs, name))
        assert (got.bits, got.eps, got.max, got.min, got.smallest_normal) == (
            want.bits, want.eps, want.max, want.min, want.smallest_normal)
        assert got.dtype is getattr(xp, name) and xp.finfo(xp.ones(1, dtype=got.dtype)).dtype is got.dtype
    for name in INTS:
        got, want = xp.iinfo(getattr(xp, name)), xs.iinfo(getattr(xs, name))
        assert (got.bits, got.max, got.min, got.dtype) == (want.bits, want.max, want.min, getattr(xp, name))
    with pytest.raises(ValueError, match="kind"):
        xp.isdtype(xp.int8, "integer")


# --------------------------------------------------------------------------- linear algebra
@pytest.mark.parametrize("name", ["matmul", "tensordot", "vecdot", "linalg.outer", "linalg.cross", "linalg.trace",
                                  "linalg.diagonal", "linalg.det", "linalg.inv", "linalg.solve", "linalg.slogdet",
                                  "linalg.matrix_power", "linalg.matrix_norm", "linalg.vector_norm",
                                  "linalg.matrix_rank", "linalg.pinv", "linalg.svdvals", "linalg.eigvalsh",
                                  "linalg.cholesky"])
@SETTINGS
@given(data=st.data())
def test_linalg(name, data):
    n = data.draw(st.integers(1, 3))
    batch = data.draw(st.sampled_from([(), (2,)]))
    a = data.draw(hnp.arrays(np.float64, batch + (n, n), elements=st.floats(-3, 3)))
    b = data.draw(hnp.arrays(np.float64, batch + (n, n), elements=st.floats(-3, 3)))
    v = data.draw(hnp.arrays(np.float64, (3,), elements=st.floats(-3, 3)))
    spd = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    args = {"matmul": (a, b), "tensordot": (a, b), "vecdot": (a, b), "linalg.outer": (v, v[:2]),
            "linalg.cross": (np.stack([v, v[::-1]]), v), "linalg.trace": (a,), "linalg.diagonal": (a,),
            "linalg.det": (spd,), "linalg.inv": (spd,), "linalg.solve": (spd, b), "linalg.slogdet": (spd,),
            "linalg.matrix_power": (a, data.draw(st.integers(0, 3))), "linalg.matrix_norm": (a,),
            "linalg.vector_norm": (a,), "linalg.matrix_rank": (spd,), "linalg.pinv": (spd,),
            "linalg.svdvals": (a,), "linalg.eigvalsh": (spd,), "linalg.cholesky": (spd,)}[name]
    kwargs = {}
    if name in ("tensordot",):
        kwargs["axes"] = data.draw(st.integers(0, 2))
    elif name in ("linalg.trace", "linalg.diagonal"):
        kwargs["offset"] = data.draw(st.integers(-1, 1))
    elif name == "linalg.matrix_norm":
        kwargs["ord"] = data.draw(st.sampled_from(["fro", 1, -1, math.inf, -math.inf, "nuc", 2, -2]))
        kwargs["keepdims"] = data.draw(st.booleans())
    elif name == "linalg.vector_norm":
        kwargs["ord"] = data.draw(st.sampled_from([1, 2, 3, math.inf, -math.inf, 0]))
        kwargs["axis"] = _axis(data, a.ndim)
        kwargs["keepdims"] = data.draw(st.booleans())
    elif name == "linalg.cholesky":
        kwargs["upper"] = data.draw(st.booleans())
    check(name, *args, rtol=1e-7, atol=1e-9, zero_sign=False, **kwargs)


def test_linalg_factorizations_reconstruct_and_name_their_fields():
    a = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    x = xp.asarray(a, dtype=xp.float64)
    w, v = xp.linalg.eigh(x)
    assert xp.linalg.eigh(x)._fields == ("eigenvalues", "eigenvectors")
    np.testing.assert_allclose(_np(v @ (w[:, None] * v.mT)), a, atol=1e-12)
    q, r = xp.linalg.qr(x)
    np.testing.assert_allclose(_np(q @ r), a, atol=1e-12)
    assert xp.linalg.qr(x, mode="complete")._fields == ("Q", "R")
    u, s, vh = xp.linalg.svd(x, full_matrices=False)
    np.testing.assert_allclose(_np((u * s) @ vh), a, atol=1e-12)
    assert xp.linalg.slogdet(x)._fields == ("sign", "logabsdet")
    np.testing.assert_allclose(_np(s), np.linalg.svd(a, compute_uv=False), rtol=1e-12)


# --------------------------------------------------------------------------- the namespace itself
def test_every_function_of_the_standard_is_here_with_its_signature():
    """Each of array-api-strict's public functions exists here, with the same positional-only and
    keyword-only parameters (names and kinds)."""
    import inspect
    skip = {"fft", "__array_api_version__", "__array_namespace_info__", "__version__",
            "isin", "broadcast_shapes",         # 2025.12's additions
            "Device", "ArrayAPIStrictFlags", "set_array_api_strict_flags", "get_array_api_strict_flags",
            "reset_array_api_strict_flags"}     # array-api-strict's own
    complex_only = {"complex64", "complex128"}
    missing, differ = [], []
    for name in xs.__all__:
        if name in skip or name in complex_only:
            continue
        if name in ("uint16", "uint32", "uint64") and not hasattr(xp, name):
            continue        # listed once tt has their ops (tritensor/array_api/_dtypes.py)
        if not hasattr(xp, name):
            missing.append(name)
            continue
        want = getattr(xs, name)
        if inspect.isfunction(want):
            ours = inspect.signature(getattr(xp, name)).parameters
            theirs = inspect.signature(want).parameters
            if [(p.name, p.kind) for p in ours.values()] != [(p.name, p.kind) for p in theirs.values()]:
                differ.append(name)
    for ext in ("linalg",):
        for name in getattr(xs, ext).__all__:
            if not hasattr(getattr(xp, ext), name):
                missing.append(f"{ext}.{name}")
    assert not missing and not differ, (missing, differ)


def test_array_namespace_version_and_info():
    x = tt.ones(2)
    assert x.__array_namespace__() is xp and x.__array_namespace__(api_version="2021.12") is xp
    with pytest.raises(ValueError, match="2030.12"):
        x.__array_namespace__(api_version="2030.12")
    assert tt.__array_api_version__ == xp.__array_api_version__ == "2024.12"
    info = xp.__array_namespace_info__()
    caps = info.capabilities()
    assert caps["boolean indexing"] and caps["data-dependent shapes"] and caps["max dimensions"] == 64
    assert info.default_device() == tt.device("cpu") and tt.device("cpu") in info.devices()
    assert info.default_dtypes()["real floating"] is xp.float32 and info.default_dtypes()["indexing"] is xp.int64
    assert set(info.dtypes(kind="real floating")) == {"float32", "float64"}
    assert set(info.dtypes(kind=("bool", "signed integer"))) == {"bool", "int8", "int16", "int32", "int64"}
    assert ("uint16" in info.dtypes()) == hasattr(xp, "uint16")
    with pytest.raises(ValueError):
        info.dtypes(kind="integer")
    assert (xp.e, xp.pi, xp.inf, xp.newaxis) == (math.e, math.pi, math.inf, None) and math.isnan(xp.nan)


def test_array_api_compat_finds_the_namespace():
    compat = pytest.importorskip("array_api_compat")
    x = tt.ones(3)
    assert compat.array_namespace(x) is xp
    assert compat.array_namespace(x, tt.zeros(1)) is xp
    assert compat.is_array_api_obj(x)


def test_copy_semantics():
    x = xp.asarray([1.0, 2.0])
    y = xp.astype(x, xp.float32, copy=False)
    assert y is x
    assert xp.astype(x, xp.float32) is not x
    assert xp.reshape(x, (2, 1), copy=False)._base is x or xp.reshape(x, (2, 1), copy=False).data_ptr() == x.data_ptr()
    assert xp.reshape(x, (2, 1), copy=True).data_ptr() != x.data_ptr()
    with pytest.raises(ValueError, match="copy=False"):
        xp.reshape(xp.ones((2, 3)).mT, (6,), copy=False)
    with pytest.raises(ValueError):
        xp.squeeze(xp.ones((2, 3)), axis=0)
    with pytest.raises(ValueError):
        xp.nonzero(xp.asarray(1.0))


def test_array_methods_of_the_standard():
    x = xp.asarray([[1.0, 2.0], [3.0, 4.0]])
    assert x.device == tt.device("cpu") and x.to_device("cpu") is x and x.mT.shape == (2, 2)
    assert x.to_device(tt.device("cpu")).data_ptr() == x.data_ptr()
    assert (bool(xp.asarray(True)), int(xp.asarray(3)), float(xp.asarray(2.5)), [0, 1, 2][xp.asarray(2)]) == (
        True, 3, 2.5, 2)
    x[xp.asarray([True, False])] = 0.0           # boolean indexing
    assert x.tolist() == [[0.0, 0.0], [3.0, 4.0]]
    x[..., 1] = xp.asarray([5.0, 6.0])
    assert x.tolist() == [[0.0, 5.0], [3.0, 6.0]]
    np.testing.assert_array_equal(np.from_dlpack(x), [[0.0, 5.0], [3.0, 6.0]])
    assert x.__dlpack_device__() == (1, 0)
    assert xp.from_dlpack(np.arange(3.0)).tolist() == [0.0, 1.0, 2.0]


def test_autograd_flows_through_the_namespace():
    """The namespace is tritensor's ops: gradients flow through its adapters."""
    x = tt.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
    y = xp.sum(xp.square(x), axis=(0, 1)) + xp.mean(xp.clip(x, min=0.0, max=2.0))
    y.backward()
    want = 2 * np.array([[1.0, -2.0], [3.0, 0.5]]) + np.array([[0.25, 0.0], [0.0, 0.25]])
    np.testing.assert_allclose(x.grad.numpy(), want)


@pytest.mark.parametrize("name", ["sum", "sign", "matmul", "unique_counts", "cumulative_sum"])
def test_emulated_cuda_smoke(name):
    """A few functions on the emulated cuda device: the same values as on cpu, the data stays there."""
    a = np.array([[1.5, -0.0, math.nan], [2.0, 2.0, -3.0]], np.float32)
    args = {"sum": (a,), "sign": (a,), "matmul": (a, a.T.copy()), "unique_counts": (a,),
            "cumulative_sum": (a,)}[name]
    kwargs = {"cumulative_sum": {"axis": 1, "include_initial": True}, "sum": {"axis": 1}}.get(name, {})
    fn = getattr(xp, name)
    on_cpu = fn(*[tt.from_numpy(x.copy()) for x in args], **kwargs)
    on_cuda = fn(*[xp.asarray(x, device="cuda") for x in args], **kwargs)
    for c, g in zip(on_cpu if isinstance(on_cpu, tuple) else (on_cpu,),
                    on_cuda if isinstance(on_cuda, tuple) else (on_cuda,)):
        assert g.device.type == "cuda"
        np.testing.assert_allclose(_np(g), _np(c), rtol=1e-6, equal_nan=True)



def test_array_operators_on_the_emulated_cuda_device():
    """The Array's operators and indexing on cuda: the data stays there, the values are cpu's."""
    values = [math.inf, -0.0, 5.0, -5.5]
    for device in ("cpu", "cuda"):
        x = xp.asarray(values, device=device)
        y = x[-2::-2] // 2 + xp.asarray(1.0, device=device)      # [5, inf] // 2 + 1
        x[1::-1] = xp.asarray([7.0, 8.0], device=device)
        assert y.device.type == device and type(y).__name__ == "Array"
        assert y.tolist() == [3.0, math.inf] and x.tolist() == [8.0, 7.0, 5.0, -5.5]


def test_no_fft_extension_without_complex_dtypes():
    """Extensions are optional and detected by presence: no xp.fft until complex dtypes exist."""
    assert not hasattr(xp, "fft")
    assert complex(xp.asarray(2.5)) == 2.5 + 0j


def test_the_standards_promotion_of_the_wide_unsigned_types():
    """tt has uint16/32/64 (torch refuses to promote them with other types); the namespace's
    promotion follows the standard's table for them, checked against array-api-strict's."""
    from tritensor.array_api import _dtypes
    names = [n for n in ("uint16", "uint32", "uint64") if hasattr(tt, n)]
    for a in names:
        for b in INTS[:5] + tuple(names):
            try:
                want = xs_name(xs.result_type(getattr(xs, a), getattr(xs, b)))
            except TypeError:
                with pytest.raises(TypeError):
                    _dtypes.promote(getattr(tt, a), getattr(tt, b))
                continue
            assert _dtypes.promote(getattr(tt, a), getattr(tt, b)).name == want, (a, b)
            assert xp.can_cast(getattr(tt, a), getattr(tt, b)) == xs.can_cast(getattr(xs, a), getattr(xs, b))
        assert xp.isdtype(getattr(tt, a), "unsigned integer") and not xp.isdtype(getattr(tt, a), "signed integer")


def test_eye_with_a_diagonal_past_the_corners_is_zeros():
    assert xp.eye(3, k=2**70).tolist() == [[0.0] * 3] * 3
    assert xp.eye(2, 3, k=-2**70, dtype=xp.int16).tolist() == [[0, 0, 0], [0, 0, 0]]
    assert xp.eye(2, 3, k=2, dtype=xp.int8).tolist() == [[0, 0, 1], [0, 0, 0]]


def test_wide_unsigned_types_work_in_the_namespace_and_torchs_namespace_keeps_its_refusal():
    """uint16/32/64: the namespace lists them and its functions run tt's kernels on them
    (values from Python's integers); tt.add keeps torch's NotImplementedError for the same signature."""
    if not hasattr(xp, "uint32"):
        pytest.skip("the namespace does not list the wide unsigned types")
    x = xp.asarray([1, 2**32 - 1], dtype=xp.uint32)
    assert xp.add(x, 1).tolist() == [2, 0] and xp.max(x).tolist() == 2**32 - 1
    assert xp.sum(x).dtype is xp.uint64 and xp.sum(x).tolist() == 2**32
    assert xp.less(x, xp.asarray(3, dtype=xp.uint16)).tolist() == [True, False]
    assert xp.add(x, xp.asarray([1, 1], dtype=xp.int16)).dtype is xp.int64
    with pytest.raises(NotImplementedError, match="not implemented for 'UInt32'"):
        tt.add(x, x)
    assert xp.__array_namespace_info__().dtypes(kind="unsigned integer").keys() == {"uint8", "uint16", "uint32",
                                                                                   "uint64"}
