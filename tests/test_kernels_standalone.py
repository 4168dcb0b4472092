"""The Triton launchers (the tritensor/backends/triton package) and kernels (kernels/) on their own.

The launchers run on small NumPy-backed stand-in tensors (just the attributes a launcher reads:
shape, stride(), _offset, _storage.data_ptr(), dtype, numel()) under Triton's interpreter, and are
checked against NumPy: shapes that cross block boundaries, transposed / sliced / broadcast
(stride 0) operands, non-contiguous outputs, 0-d, size-0 and size-1 dims, ranks past MAX_RANK,
every dtype, NaN and inf. The interpreter costs ~1 ms per launch plus ~0.35 ms per program, so the
shapes are small and the interpreter's block sizes (INTERPRETER_SETTINGS) are small too.
"""
import json
import math
import os

import ml_dtypes
import numpy as np
import pytest

# Host-memory stand-ins need the interpreter. Triton decides interpreted-or-compiled when the kernel
# modules are decorated (on the launchers' first call), so this has to happen before any launch.
if os.environ.get("TRITENSOR_EMULATE_CUDA", "").strip().lower() not in ("", "0", "false", "no", "off"):
    os.environ["TRITON_INTERPRET"] = "1"
if os.environ.get("TRITON_INTERPRET") != "1":
    pytest.skip("standalone kernel tests run under Triton's interpreter (set TRITON_INTERPRET=1)",
                allow_module_level=True)

from tritensor.backends import triton as tb  # noqa: E402

if not type(tb._kernels().elementwise.unary_kernel).__name__.startswith("Interpreted"):
    pytest.skip("the kernels were already imported compiled in this process", allow_module_level=True)

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["int32", "int64", "int16", "int8", "uint8"]
ALL = ["bool"] + INTS + FLOATS


# --------------------------------------------------------------------------- stand-in tensors
def np_dtype(name):
    return BF16 if name == "bfloat16" else np.dtype(name)


class FakeDType:
    """Get one with fake_dtype(name): Triton caches a pointer argument's type by id(arg.dtype), so
    dtype objects must be long-lived singletons, as tritensor's are."""

    def __init__(self, name):
        self.name = name
        self.itemsize = np_dtype(name).itemsize
        self.is_floating_point = name in FLOATS

    def __str__(self):
        return "tritensor." + self.name


_FAKE_DTYPES = {}


def fake_dtype(name):
    if name not in _FAKE_DTYPES:
        _FAKE_DTYPES[name] = FakeDType(name)
    return _FAKE_DTYPES[name]


class FakeStorage:
    def __init__(self, ptr):
        self._ptr = ptr

    def data_ptr(self):
        return self._ptr


class FT:
    """A tensor stand-in viewing a NumPy array (any strides, including 0 and negative)."""

    def __init__(self, arr):
        self.arr = arr
        self.shape = self._shape = tuple(arr.shape)      # (_shape, _stride: the launch-plan caches' keys)
        self._strides = self._stride = tuple(s // arr.itemsize for s in arr.strides)
        self._offset = 0
        self._storage = FakeStorage(arr.ctypes.data)
        self.dtype = fake_dtype(arr.dtype.name)

    def stride(self):
        return self._strides

    def numel(self):
        return int(np.prod(self.shape))


def values(shape, name, rng, special=True, lo=-4.0, hi=4.0):
    """Random values of dtype ``name``; floats include nan/inf/-0.0 when ``special``."""
    if name == "bool":
        return rng.random(shape) < 0.5
    if name in INTS:
        info = np.iinfo(name)
        return rng.integers(max(info.min, -50), min(info.max, 50), size=shape, endpoint=True).astype(name)
    v = rng.uniform(lo, hi, size=shape)
    if special and v.size >= 8:
        flat = v.reshape(-1)
        flat[rng.choice(flat.size, 5, replace=False)] = [np.nan, np.inf, -np.inf, -0.0, 0.0]
    return v.astype(np_dtype(name))


def layout(arr, how):
    """``arr``'s values in another memory layout (same logical shape)."""
    if how == "contiguous":
        return np.array(arr, order="C")
    if how == "transposed":   # memory in reversed dim order
        return np.array(arr.transpose(), order="C").transpose()
    if how == "sliced":       # every other element of a bigger buffer, plus an offset
        buf = np.zeros(arr.shape[:-1] + (2 * arr.shape[-1] + 1,), arr.dtype)
        view = buf[..., 1::2]
        view[...] = arr
        return view
    raise ValueError(how)


def widen(a):
    return a.astype(np.float32) if a.dtype in (BF16, np.float16) else a


def cast_like_kernel(result, name):
    """The kernels' cast into dtype ``name``: bool is != 0, float -> int truncates (through int64)."""
    result = np.asarray(result)
    if name == "bool":
        return result != 0
    if name in INTS and result.dtype.kind == "f":
        result = np.where(np.isfinite(result), np.trunc(result), 0).astype(np.int64)
    with np.errstate(all="ignore"):
        return result.astype(np_dtype(name))


def compute_of(name):
    return "float32" if name in ("float16", "bfloat16") else name


def assert_same(got, expected, name, rtol=None):
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if name in FLOATS:
        default = {"float32": 2e-6, "float64": 1e-13, "float16": 1e-3, "bfloat16": 8e-3}[name]
        np.testing.assert_allclose(widen(got).astype(np.float64), widen(expected).astype(np.float64),
                                   rtol=rtol or default, atol=(rtol or default) * 1e-3, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, expected)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


# --------------------------------------------------------------------------- references
def _relu(x):
    return np.where(np.isnan(x) | (x > 0), x, 0).astype(x.dtype) if x.dtype.kind == "f" else np.maximum(x, 0)


UNARY = {
    "identity": lambda x: x, "neg": np.negative, "exp": np.exp, "log": np.log, "sin": np.sin,
    "cos": np.cos, "tanh": np.tanh, "relu": _relu, "sqrt": np.sqrt, "abs": np.abs,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
}


def _int_pow(x, y):
    x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
    out = np.empty(x.shape, x.dtype)
    for i in np.ndindex(x.shape):
        b, e = int(x[i]), int(y[i])
        if e >= 0:
            r = b ** e
        else:
            r = 1 if b == 1 else ((-1 if e % 2 else 1) if b == -1 else 0)
        bits = 8 * x.dtype.itemsize
        r &= (1 << bits) - 1
        if x.dtype.kind == "i" and r >= 1 << (bits - 1):
            r -= 1 << bits
        out[i] = r
    return out


BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "pow": lambda x, y: np.power(x, y) if np.asarray(x).dtype.kind == "f" else _int_pow(x, y),
    "maximum": np.maximum, "minimum": np.minimum, "eq": np.equal, "ne": np.not_equal,
    "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
    "tanh_backward": lambda g, y: g * (1 - y * y),
    "relu_backward": lambda g, x: np.where(x <= 0, np.zeros_like(g), g),     # torch's threshold_backward
}
COMPARE = {"eq", "ne", "lt", "le", "gt", "ge"}


def reference(fn, inputs, compute, out_name):
    ops = [np.asarray(widen(x) if isinstance(x, np.ndarray) else x).astype(np_dtype(compute))
           for x in inputs]
    with np.errstate(all="ignore"):
        if fn == "where":
            r = np.where(ops[0] != 0, ops[1], ops[2])
        elif len(ops) == 1:
            r = UNARY[fn](ops[0])
        else:
            r = BINARY[fn](*ops)
    return cast_like_kernel(r, out_name)


def run_elementwise(fn, inputs, out_name, compute=None, out_layout="contiguous", shape=None):
    compute = compute or compute_of(out_name)
    arrays = [x for x in inputs if isinstance(x, np.ndarray)]
    shape = shape if shape is not None else np.broadcast_shapes(*(a.shape for a in arrays))
    out = layout(np.zeros(shape, np_dtype(out_name)), out_layout)
    tb.elementwise(fn, FT(out), [FT(x) if isinstance(x, np.ndarray) else x for x in inputs], compute)
    return out, reference(fn, inputs, compute, out_name)


# --------------------------------------------------------------------------- machinery
def test_coalesce_and_pieces():
    assert tb.coalesce((4, 5, 6), [(30, 6, 1)]) == ([120], [[1]])
    assert tb.coalesce((4, 5, 6), [(1, 4, 20)]) == ([4, 5, 6], [[1, 4, 20]])
    assert tb.coalesce((4, 1, 6), [(6, 99, 1), (0, 0, 1)]) == ([4, 6], [[6, 1], [0, 1]])
    assert tb.coalesce((4, 5, 6), [(30, 6, 1), (0, 6, 1)]) == ([4, 30], [[30, 1], [0, 1]])
    assert tb.coalesce((), [()]) == ([], [[]])
    assert tb.broadcast_strides(FT(np.zeros((5, 1))), (3, 5, 7)) == (0, 1, 0)
    with pytest.raises(ValueError):
        tb.broadcast_strides(FT(np.zeros((5, 2))), (5, 3))
    shape = [2, 3, 2, 2, 2, 2, 2, 5]
    strides = [[1000, 100, 50, 25, 12, 6, 3, 1]]
    got = list(tb.pieces(shape, strides))
    assert len(got) == 6 and all(p[0] == (2, 2, 2, 2, 2, 5) for p in got)
    assert [p[2][0] for p in got] == [0, 100, 200, 1000, 1100, 1200]
    assert [p[3] for p in got] == [i * 160 for i in range(6)]


def test_zero_size_launches_nothing(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("a kernel was launched for a zero-size tensor")
    monkeypatch.setattr(tb, "_run", fail)
    e = np.zeros((3, 0, 2), np.float32)
    tb.elementwise("add", FT(e), [FT(e), 1.0], "float32")
    tb.elementwise("exp", FT(e), [FT(e)], "float32")
    tb.elementwise("where", FT(e), [FT(e.astype(bool)), FT(e), 0.0], "float32")
    tb.copy(FT(e), FT(np.zeros((0, 2), np.float64)))
    tb.fill(FT(e), 3.0)
    tb.random(FT(e), "normal", 1, 0, 0.0, 1.0)
    tb.reduce("sum", FT(np.zeros((3, 0), np.float32)), FT(e), (2,), "float32")


# --------------------------------------------------------------------------- elementwise
@pytest.mark.parametrize("fn", sorted(UNARY))
@pytest.mark.parametrize("name", FLOATS)
def test_unary_float(fn, name, rng):
    x = layout(values((7, 50), name, rng), "transposed")   # 350 elements: 3 blocks of 128
    if fn in ("exp", "sigmoid", "tanh", "sin", "cos"):
        x[0, :8] = np.array([1e-5, -3e-4, 0.05, -0.07, 0.5, 20.0, -20.0, 100.0], dtype=x.dtype)
    out, expected = run_elementwise(fn, [x], name, out_layout="sliced")
    rtol = {"tanh": 3e-6 if name == "float32" else None}.get(fn)
    assert_same(out, expected, name, rtol)


@pytest.mark.parametrize("fn", ["identity", "neg", "abs", "relu"])
@pytest.mark.parametrize("name", INTS)
def test_unary_int(fn, name, rng):
    x = layout(values((3, 1, 70), name, rng), "sliced")
    out, expected = run_elementwise(fn, [x], name)
    assert_same(out, expected, name)


@pytest.mark.parametrize("fn", sorted(BINARY))
@pytest.mark.parametrize("name", ["float32", "float64", "bfloat16", "int32", "int64"])
def test_binary(fn, name, rng):
    if fn == "div" and name in INTS:
        pytest.skip("true division computes in a float dtype (tested below)")
    a = layout(values((3, 1, 50), name, rng), "transposed")
    b = layout(values((4, 50), name, rng), "sliced")
    if fn == "pow" and name in INTS:
        b = np.abs(b) % 5
    if name in FLOATS and fn in ("maximum", "minimum"):
        a[0, 0, :3] = [np.nan, 1.0, np.nan]
    out_name = "bool" if fn in COMPARE else name
    out, expected = run_elementwise(fn, [a, b], out_name, compute=compute_of(name))
    assert out.shape == (3, 4, 50)
    assert_same(out, expected, out_name)


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("scalar", [2, -3, 2.5, True, 1, 0.1])
@pytest.mark.parametrize("fn", ["add", "mul", "sub", "pow", "lt", "maximum"])
def test_binary_scalar_operand(fn, scalar, side, rng):
    x = values((9, 31), "float64", rng)
    inputs = [x, scalar] if side == "right" else [scalar, x]
    if fn == "pow" and side == "left":
        inputs = [abs(scalar) if not isinstance(scalar, bool) else scalar, x]
    out_name = "bool" if fn in COMPARE else "float64"
    out, expected = run_elementwise(fn, inputs, out_name, compute="float64")
    assert_same(out, expected, out_name)


def test_float64_scalars_are_not_rounded_to_float32(rng):
    x = np.zeros(5)
    out, _ = run_elementwise("add", [x, 0.1], "float64", compute="float64")
    assert (out == 0.1).all()
    out, _ = run_elementwise("add", [np.zeros(5, np.int64), 2 ** 40 + 1], "int64")
    assert (out == 2 ** 40 + 1).all()


def test_mixed_input_dtypes_cast_to_compute(rng):
    a = values((5, 40), "bfloat16", rng)
    b = values((40,), "float64", rng)
    out, expected = run_elementwise("mul", [a, b], "float64", compute="float64")
    assert_same(out, expected, "float64")
    i = values((5, 40), "int32", rng)
    out, expected = run_elementwise("div", [i, np.array(3, np.int64)], "float32", compute="float32")
    assert_same(out, expected, "float32")
    out, expected = run_elementwise("add", [i, b], "float16", compute="float32")
    assert_same(out, expected, "float16")


def test_bool_compute_is_logical(rng):
    a = layout(values((6, 30), "bool", rng), "transposed")
    b = values((30,), "bool", rng)
    for fn, np_fn in [("add", np.logical_or), ("mul", np.logical_and), ("maximum", np.logical_or),
                      ("minimum", np.logical_and), ("lt", np.less), ("ge", np.greater_equal)]:
        out, _ = run_elementwise(fn, [a, b], "bool", compute="bool")
        np.testing.assert_array_equal(out, np_fn(a, b), err_msg=fn)
    out, _ = run_elementwise("add", [a, True], "int64", compute="int64")
    np.testing.assert_array_equal(out, a.astype(np.int64) + 1)


@pytest.mark.parametrize("name", ["float32", "float64"])
def test_pow_special_values(name):
    bases = np.array([-np.inf, -3, -2, -1, -0.5, -0.0, 0.0, 0.5, 1, 2, 3, 10, np.inf, np.nan])
    exps = np.array([-np.inf, -3, -2.5, -2, -1, -0.5, 0, 0.5, 1, 2, 2.5, 3, 7, 64, 65, 100.5, np.inf, np.nan])
    x, y = np.meshgrid(bases, exps, indexing="ij")
    x, y = x.astype(name), y.astype(name)
    out, expected = run_elementwise("pow", [x, y], name)
    with np.errstate(all="ignore"):
        expected = np.power(x, y)
    np.testing.assert_array_equal(np.signbit(out) | np.isnan(out), np.signbit(expected) | np.isnan(expected))
    np.testing.assert_allclose(out, expected, rtol=2e-6 if name == "float32" else 1e-13, equal_nan=True)
    # small integer exponents are exact (repeated squaring), as in NumPy
    v = np.array([3.0, -7.0, 1.1, 123.0], name)
    for e in (2, 3, 5):
        out, _ = run_elementwise("pow", [v, e], name)
        np.testing.assert_array_equal(out, np.power(v, np.array(e, name)))


@pytest.mark.parametrize("name", ["int32", "int64", "int8", "uint8"])
def test_pow_integer(name, rng):
    signed = name != "uint8"
    x = np.arange(-5 if signed else 0, 6).astype(name)
    e = np.arange(-3 if signed else 0, 12).astype(name)
    x2, e2 = np.meshgrid(x, e, indexing="ij")
    out, expected = run_elementwise("pow", [x2, e2], name)
    assert_same(out, expected, name)
    out, expected = run_elementwise("pow", [np.array([3, 7], name), 40], name)  # wraps like C
    assert_same(out, expected, name)


def test_where(rng):
    cond = values((4, 1, 33), "bool", rng)
    a = layout(values((4, 5, 33), "float32", rng), "transposed")
    b = values((33,), "float64", rng)
    out, expected = run_elementwise("where", [cond, a, b], "float64", compute="float64")
    assert_same(out, expected, "float64")
    out, expected = run_elementwise("where", [cond, a, 0.0], "float32")
    assert_same(out, expected, "float32")
    out, expected = run_elementwise("where", [cond, 1, -2], "int64")
    assert_same(out, expected, "int64")
    out, expected = run_elementwise("where", [True, a, b], "float32")
    assert_same(out, expected, "float32")
    out, expected = run_elementwise("where", [cond, True, False], "bool", compute="bool")
    assert_same(out, expected, "bool")


def test_signed_zeros():
    z = np.array([0.0, -0.0], np.float32)
    out, _ = run_elementwise("neg", [z], "float32")
    assert list(np.signbit(out)) == [True, False]
    out, _ = run_elementwise("abs", [z], "float32")
    assert list(np.signbit(out)) == [False, False]
    out, _ = run_elementwise("tanh", [z], "float32")
    assert list(np.signbit(out)) == [False, True]


def test_relu_keeps_nan_and_maximum_propagates_nan():
    x = np.array([np.nan, -1.0, -0.0, 0.0, 2.0], np.float32)
    out, _ = run_elementwise("relu", [x], "float32")
    # torch's max(x, 0) keeps x on a tie: relu(-0.0) is -0.0 (torch 2.13's cpu, recorded in
    # tests/data/torch_oracle.bin.gz; tests/test_edge_values.py checks it on both devices)
    assert np.isnan(out[0]) and list(out[1:]) == [0, 0, 0, 2] and np.signbit(out[2]) and not np.signbit(out[1])
    out, _ = run_elementwise("maximum", [x, np.float32(0.0) + np.zeros(5, np.float32)], "float32")
    assert np.isnan(out[0]) and list(out[1:]) == [0, 0, 0, 2]
    out, _ = run_elementwise("minimum", [np.zeros(5, np.float32), x], "float32")
    assert np.isnan(out[0])


def test_out_views_and_untouched_neighbours(rng):
    buf = np.full((6, 41), 7.0, np.float32)
    out = buf[:, 1::2]                      # writes through a strided view
    x = values((6, 20), "float32", rng, special=False)
    tb.elementwise("neg", FT(out), [FT(x)], "float32")
    np.testing.assert_array_equal(out, -x)
    assert (buf[:, 0::2] == 7.0).all()
    x = values((5, 3), "float64", rng)      # in place: out is the input
    expected = np.exp(x)
    tb.elementwise("exp", FT(x), [FT(x)], "float64")
    assert_same(x, expected, "float64")


def test_zero_dim_and_size_one_dims(rng):
    x = np.array(2.5, np.float32)
    out, expected = run_elementwise("sqrt", [x], "float32")
    assert out.shape == () and out == np.float32(np.sqrt(2.5))
    out, expected = run_elementwise("add", [x, np.ones((1, 3, 1), np.float32)], "float32")
    assert_same(out, expected, "float32")
    a = values((1, 5, 1, 7), "int64", rng)
    out, expected = run_elementwise("mul", [a, values((5, 1), "int64", rng)], "int64")
    assert out.shape == (1, 5, 5, 7)
    assert_same(out, expected, "int64")


def test_rank_past_max_rank(rng):
    shape = (2, 3, 2, 2, 3, 2, 2, 3)        # rank 8; reversed memory order: no dims merge
    a = layout(values(shape, "float32", rng), "transposed")
    b = values(shape[3:], "float32", rng)   # broadcast over the 3 leading dims
    out = layout(np.zeros(shape, np.float32), "sliced")
    tb.elementwise("sub", FT(out), [FT(a), FT(b)], "float32")
    assert_same(out, a - b, "float32")
    c = np.broadcast_to(values((1,) * 7 + (3,), "bool", rng), shape)
    out2, expected = run_elementwise("where", [c, a, b], "float32")
    assert_same(out2, expected, "float32")


def test_elementwise_rejects_unknown_names():
    x = np.zeros(3, np.float32)
    with pytest.raises(ValueError):
        tb.elementwise("nope", FT(x), [FT(x)], "float32")
    with pytest.raises(ValueError):
        tb.elementwise("add", FT(x), [FT(x)], "float32")     # add is binary
    with pytest.raises(TypeError):
        tb.elementwise("add", FT(x), [FT(x), 1], "float32", alpha=2)


# --------------------------------------------------------------------------- copy and fill
@pytest.mark.parametrize("src_name", ALL)
def test_copy_casts(src_name, rng):
    src = values((5, 29), src_name, rng, special=False, lo=-100, hi=100)
    if src_name in FLOATS:
        src.reshape(-1)[:4] = np.array([-3.7, 3.7, -0.5, 0.5]).astype(np_dtype(src_name))
    src = layout(src, "transposed")
    for dst_name in ALL:
        out = np.zeros((5, 29), np_dtype(dst_name))
        tb.copy(FT(out), FT(src))
        expected = cast_like_kernel(widen(src) if src_name == "bfloat16" and dst_name != "bfloat16" else src,
                                    dst_name)
        if dst_name == "bfloat16" and src_name not in ("float32", "bfloat16", "bool"):
            expected = src.astype(np.float64).astype(BF16)   # one rounding, to nearest even
        np.testing.assert_array_equal(widen(out), widen(expected), err_msg=f"{src_name} -> {dst_name}")


def test_copy_rounding_to_16_bit_floats_is_nearest_even(rng):
    x64 = rng.standard_normal(600) * 10.0 ** rng.integers(-45, 45, 600)
    x64[:6] = [np.nan, np.inf, -np.inf, 3.5e38, -1e-300, 1.0 + 2 ** -8]
    with np.errstate(over="ignore"):
        x32 = x64.astype(np.float32)
    for src in (x64, x32):
        for dst in (BF16, np.dtype(np.float16)):
            out = np.zeros(600, dst)
            tb.copy(FT(out), FT(src))
            with np.errstate(all="ignore"):
                expected = src.astype(dst)
            same = (out.view(np.uint16) == expected.view(np.uint16)) | (np.isnan(out) & np.isnan(expected))
            assert same.all(), (src.dtype, dst, src[~same][:5])


def test_copy_layouts(rng):
    src = values((3, 1, 40), "float64", rng)
    out = layout(np.zeros((2, 3, 5, 40), np.float32), "transposed")   # broadcast into a strided out
    tb.copy(FT(out), FT(src))
    assert_same(out, np.broadcast_to(src, out.shape).astype(np.float32), "float32")
    scalar = np.array(-2.75, np.float64)
    out = np.zeros((3, 50), np.int32)
    tb.copy(FT(out), FT(scalar))
    assert (out == -2).all()
    out0 = np.zeros((), np.int8)
    tb.copy(FT(out0), FT(np.array(300, np.int64)))
    assert out0 == np.int8(44)
    rev = np.arange(200, dtype=np.int16)[::-1]                        # a negative stride
    out = np.zeros(200, np.int64)
    tb.copy(FT(out), FT(rev))
    np.testing.assert_array_equal(out, rev)
    shape = (2, 2, 3, 2, 2, 3, 2, 2)
    src8 = layout(values(shape, "int32", rng), "transposed")
    out8 = layout(np.zeros(shape, np.float64), "sliced")
    tb.copy(FT(out8), FT(src8))
    np.testing.assert_array_equal(out8, src8)


@pytest.mark.parametrize("name,value,expected", [
    ("float32", 0.1, np.float32(0.1)), ("float64", 0.1, 0.1), ("float16", 1e9, np.inf),
    ("bfloat16", 0.1, ml_dtypes.bfloat16(0.1)), ("float32", float("nan"), np.nan),
    ("int64", 2 ** 40 + 3, 2 ** 40 + 3), ("int32", -3.9, -3), ("uint8", -1, 255), ("int8", 200, -56),
    ("bool", 0.5, True), ("bool", 0, False), ("float64", True, 1.0), ("int16", True, 1),
])
def test_fill(name, value, expected):
    buf = np.zeros((4, 70), np_dtype(name))
    out = buf[:, ::2]
    tb.fill(FT(out), value)
    np.testing.assert_array_equal(widen(out), widen(np.full(out.shape, expected, np_dtype(name))))
    assert (buf[:, 1::2] == 0).all()
    zero_d = np.zeros((), np_dtype(name))
    tb.fill(FT(zero_d), value)
    np.testing.assert_array_equal(widen(zero_d), widen(np.array(expected, np_dtype(name))))


# --------------------------------------------------------------------------- reductions
NP_REDUCE = {"sum": np.sum, "prod": np.prod, "amax": np.max, "amin": np.min}


def reduce_compute(name):
    return "int64" if name in INTS + ["bool"] else compute_of(name)


def run_reduce(op, x, dims, out_name=None, compute=None):
    out_name = out_name or ("int64" if x.dtype.kind in "biu" and op in ("sum", "prod") else x.dtype.name)
    compute = compute or reduce_compute(x.dtype.name)
    shape = tuple(s for d, s in enumerate(x.shape) if d not in dims)
    out = np.full(shape, 99, np_dtype(out_name))
    tb.reduce(op, FT(out), FT(x), dims, compute)
    with np.errstate(all="ignore"):
        ref = NP_REDUCE[op](widen(x).astype(np_dtype(compute)), axis=tuple(dims)) if dims else \
            widen(x).astype(np_dtype(compute))
    return out, cast_like_kernel(ref, out_name), out_name


@pytest.mark.parametrize("op", ["sum", "prod", "amax", "amin"])
@pytest.mark.parametrize("name", ["float32", "float64", "float16", "bfloat16", "int32", "int64", "bool", "uint8"])
def test_reduce_ops_and_dtypes(op, name, rng):
    x = layout(values((6, 5, 7), name, rng, special=False), "transposed")
    if op == "prod" and name in FLOATS:
        x = (x.astype(np.float64) / 4 + 1).astype(x.dtype)   # keep products finite
    for dims in [(1,), (0, 2), (0, 1, 2)]:
        out, expected, out_name = run_reduce(op, x, dims)
        # float32: the kernel and NumPy add 210 values in different orders (a few ulps apart)
        assert_same(out, expected, out_name, rtol={"float16": 4e-3, "bfloat16": 2e-2, "float32": 1e-5}.get(out_name))


@pytest.mark.parametrize("op", ["amax", "amin", "sum"])
def test_reduce_nan_propagates(op, rng):
    x = values((4, 40), "float32", rng, special=False)
    x[1, 7] = np.nan
    x[3, 39] = np.nan
    out, expected, _ = run_reduce(op, x, (1,))
    assert np.isnan(out[1]) and np.isnan(out[3]) and not np.isnan(out[[0, 2]]).any()
    assert_same(out, expected, "float32", rtol=1e-5)
    x[2, 3] = np.inf
    out, _, _ = run_reduce(op, x, (0, 1))
    assert np.isnan(out)


def test_reduce_layouts_and_split_paths(rng):
    cases = [
        ((3, 500), (1,), "contiguous"),   # few outputs, long rows: two passes over chunks
        ((500, 7), (0,), "contiguous"),   # kept dim contiguous (column sums), chunked
        ((9, 300), (1,), "transposed"),
        ((40, 33), (0,), "sliced"),
        ((2, 3, 4, 5), (0, 2), "transposed"),
        ((1, 7, 1), (0, 2), "contiguous"),   # size-1 dims only reduced
        ((5, 1, 4), (1,), "contiguous"),
    ]
    for shape, dims, how in cases:
        x = layout(values(shape, "float64", rng, special=False), how)
        out, expected, _ = run_reduce("sum", x, dims)
        assert_same(out, expected, "float64", rtol=1e-12)
    x = np.broadcast_to(values((1, 50), "float32", rng, special=False), (30, 50))   # stride 0
    out, expected, _ = run_reduce("sum", x, (0,))
    assert_same(out, expected, "float32", rtol=1e-5)


def test_reduce_is_deterministic(rng):
    x = values((3, 2000), "float32", rng, special=False)
    outs = [run_reduce("sum", x, (0, 1))[0] for _ in range(2)]
    assert outs[0].tobytes() == outs[1].tobytes()
    np.testing.assert_allclose(outs[0], x.astype(np.float64).sum(), rtol=1e-5)


def test_reduce_edge_cases(rng):
    x = values((3, 0, 4), "float32", rng)
    out, _, _ = run_reduce("sum", x, (1,))
    assert out.shape == (3, 4) and (out == 0).all()
    out, _, _ = run_reduce("prod", x, (1,))
    assert (out == 1).all()
    with pytest.raises(ValueError):
        run_reduce("amax", x, (1,))
    z = np.array(3.5, np.float16)                          # 0-d input, no dims
    out, expected, _ = run_reduce("sum", z, ())
    assert out.shape == () and out == np.float16(3.5)
    x = layout(values((4, 6), "int32", rng), "transposed")  # no dims: a cast copy
    out, expected, _ = run_reduce("sum", x, ())
    assert_same(out, expected, "int64")
    out, expected, _ = run_reduce("sum", values((7,), "float16", rng), (0,), out_name="float64", compute="float64")
    assert_same(out, expected, "float64")


def test_reduce_xor_of_int64_bits(rng):
    """hash_tensor's combine: xor over int64 bit patterns into a uint64 out, in one pass (rows
    and columns crossing the tile) and in two (few rows, long: chunks, then the partials)."""
    for shape, dims in [((3, 70), (1,)), ((70, 3), (0,)), ((2, 5000), (1,)), ((4, 6, 5), (0, 2))]:
        x = rng.integers(-2 ** 63, 2 ** 63 - 1, size=shape, dtype=np.int64, endpoint=True)
        out = np.full(tuple(s for d, s in enumerate(shape) if d not in dims), 99, np.uint64)
        tb.reduce("xor", FT(out), FT(x), dims, "int64")
        expected = np.bitwise_xor.reduce(x.view(np.uint64), axis=dims)   # NumPy's own xor, in uint64
        np.testing.assert_array_equal(out, expected)
    empty = np.full((3,), 99, np.uint64)
    tb.reduce("xor", FT(empty), FT(np.zeros((3, 0), np.int64)), (1,), "int64")
    assert (empty == 0).all()      # an empty range: the identity 0


def test_reduce_rank_past_max_rank(rng):
    # Strides 1, 3, 9 ... on dims of size 2 never merge: 7 reduced dims, then 7 kept dims.
    buf = values((3 * 3 ** 7,), "float32", rng, special=False)
    strides = tuple(3 ** i * 4 for i in range(7))
    x = np.lib.stride_tricks.as_strided(buf, (3,) + (2,) * 7, (3 ** 7 * 4,) + strides)
    out, expected, _ = run_reduce("sum", x, tuple(range(1, 8)))
    assert_same(out, expected, "float32", rtol=1e-5)
    x = np.lib.stride_tricks.as_strided(buf, (2,) * 7 + (3,), strides + (3 ** 7 * 4,))
    out, expected, _ = run_reduce("amax", x, (7,))
    assert_same(out, expected, "float32")
    out, expected, _ = run_reduce("prod", x, (0, 2, 4, 7))
    assert_same(out, expected, "float32", rtol=1e-5)


# --------------------------------------------------------------------------- transposed operands
def test_tile_plan():
    """Dims are reordered so the output's contiguous dim is last; an input contiguous along
    another dim makes the problem tiled over that dim and the last."""
    # out contiguous [R, C], b transposed: tiled over (0, 1) as they are
    assert tb.tile_plan([30, 40], [[40, 1], [40, 1], [1, 30]]) == ([30, 40], [[40, 1], [40, 1], [1, 30]], True)
    # every operand agrees: untouched
    assert tb.tile_plan([30, 40], [[40, 1], [40, 1]]) == ([30, 40], [[40, 1], [40, 1]], False)
    # the output transposed too: its fast dim goes last, then every operand agrees (1-D, merged)
    assert tb.tile_plan([30, 40], [[1, 30], [1, 30]]) == ([1200], [[1], [1]], False)
    # a broadcast along the output's fast dim reads one element per row: no tile needed
    assert tb.tile_plan([30, 40], [[40, 1], [1, 0]])[2] is False
    # 3-D: the input contiguous along dim 0 of [A, B, C] -> order (1, 0, 2), tiled
    shape, strides, tiled = tb.tile_plan([5, 6, 7], [[42, 7, 1], [1, 35, 5]])
    assert (shape, strides, tiled) == ([6, 5, 7], [[7, 42, 1], [35, 1, 5]], True)


@pytest.mark.parametrize("name", ["float32", "float64", "bfloat16", "int64", "bool"])
def test_binary_with_a_transposed_operand(name, rng):
    """a + b.T (and b.T + a), output contiguous: ragged tiles (the interpreter's tile is 8),
    a broadcast row, a scalar, every dtype."""
    a = values((19, 13), name, rng)
    b = layout(values((19, 13), name, rng), "transposed")
    for inputs in ([a, b], [b, a], [b, values((13,), name, rng)], [b, 2], [3, b]):
        fn = "maximum" if name == "bool" else "add"
        out, expected = run_elementwise(fn, inputs, name)
        assert_same(out, expected, name)
    if name in ("float32", "int64"):     # pow's squaring loop over a 2-D tile
        e = layout(np.abs(values((19, 13), name, rng, special=False)) % 5, "transposed")
        out, expected = run_elementwise("pow", [a, e], name)
        assert_same(out, expected, name)


def test_ternary_and_unary_with_transposed_operands(rng):
    cond = layout(values((3, 17, 11), "bool", rng), "transposed")
    x = values((3, 17, 11), "float32", rng)
    out, expected = run_elementwise("where", [cond, x, 0.5], "float32")
    assert_same(out, expected, "float32")
    t = layout(values((17, 11), "float32", rng, special=False), "transposed")
    out, expected = run_elementwise("exp", [t], "float32")
    assert_same(out, expected, "float32")
    out, expected = run_elementwise("sub", [t, t], "float32", out_layout="transposed")   # all agree
    assert_same(out, expected, "float32")


@pytest.mark.parametrize("src_name,dst_name", [("float32", "float32"), ("float16", "bfloat16"),
                                               ("float64", "int32"), ("bool", "float32"), ("int8", "int64")])
def test_copy_transposes(src_name, dst_name, rng):
    """contiguous() of a transpose / a permutation, a copy into a transposed view: the values
    of a direct cast, in place."""
    for shape, perm in [((23, 9), (1, 0)), ((4, 10, 7), (0, 2, 1)), ((4, 10, 7), (2, 0, 1)), ((3, 4, 5, 6), (3, 1, 2, 0))]:
        src = np.transpose(values(shape, src_name, rng), perm)
        out = np.zeros(src.shape, np_dtype(dst_name))
        tb.copy(FT(out), FT(src))
        np.testing.assert_array_equal(widen(out), widen(cast_like_kernel(src, dst_name)))
    src = values((12, 17), src_name, rng)
    out_t = np.zeros((17, 12), np_dtype(dst_name)).T                # write through a transposed view
    tb.copy(FT(out_t), FT(src))
    np.testing.assert_array_equal(widen(out_t), widen(cast_like_kernel(src, dst_name)))


# --------------------------------------------------------------------------- softmax
def _softmax_ref(mode, a, axis, g=None):
    a = a.astype(np.float64)
    if mode == "softmax":
        e = np.exp(a - a.max(axis, keepdims=True))
        return e / e.sum(axis, keepdims=True)
    if mode == "log_softmax":
        m = a.max(axis, keepdims=True)
        return (a - m) - np.log(np.exp(a - m).sum(axis, keepdims=True))
    g = g.astype(np.float64)
    if mode == "softmax_backward":
        return a * (g - (g * a).sum(axis, keepdims=True))
    return g - np.exp(a) * g.sum(axis, keepdims=True)


def run_softmax(mode, a, dim, name, g=None, monkeypatch=None, resident_bytes=None):
    """tb.softmax on stand-ins, optionally with another one-tile limit (row_resident_bytes)."""
    if resident_bytes is not None:
        monkeypatch.setitem(tb.INTERPRETER_SETTINGS, "row_resident_bytes", resident_bytes)
    out = np.zeros(a.shape, np_dtype(name))
    tb.softmax(mode, FT(out), FT(a), dim, compute_of(name), grad=None if g is None else FT(g))
    return out


@pytest.mark.parametrize("mode", ["softmax", "log_softmax", "softmax_backward", "log_softmax_backward"])
@pytest.mark.parametrize("name", ["float32", "float64", "bfloat16"])
def test_softmax_one_tile_and_streaming_paths_agree(mode, name, monkeypatch, rng):
    """Rows that fit in registers are read once; longer rows stream in chunks. With the limit
    moved so that the same rows take either path, both give the same values as NumPy, and the
    same bits as each other (a single chunk sums in the same order)."""
    if "backward" not in mode:
        a, g = rng.uniform(-4, 4, size=(5, 29)), None
        a[1, 3], a[2, :] = -np.inf, -np.inf     # a -inf entry, and a row of nothing but -inf
    else:                                       # y: probabilities, or their logs
        a, g = rng.uniform(0.01, 1, size=(5, 29)), rng.uniform(-1, 1, size=(5, 29)).astype(np_dtype(name))
        a = np.log(a) if mode.startswith("log") else a
    a = a.astype(np_dtype(name))
    one = run_softmax(mode, a, 1, name, g, monkeypatch, resident_bytes=1 << 20)
    chunk = tb.INTERPRETER_SETTINGS["row_max_block_n"]
    assert a.shape[1] <= chunk       # a single chunk when streaming too
    streamed = run_softmax(mode, a, 1, name, g, monkeypatch, resident_bytes=0)
    np.testing.assert_array_equal(one.view(np.uint8), streamed.view(np.uint8))
    with np.errstate(all="ignore"):
        expected = _softmax_ref(mode, widen(a), 1, None if g is None else widen(g))
    # backward: g - sum(g * y) cancels, so float32 keeps fewer correct digits than its epsilon
    rtol = {"bfloat16": 2e-2, "float32": 1e-4 if g is not None else None}.get(name)
    assert_same(one, expected.astype(np_dtype(name)), name, rtol=rtol)


@pytest.mark.parametrize("mode", ["softmax", "log_softmax", "softmax_backward"])
def test_softmax_one_tile_layouts(mode, monkeypatch, rng):
    """The one-tile path on a strided softmax dim (columns of a row-major matrix), a transposed
    input, several rows per program and a ragged last block of rows."""
    a = rng.standard_normal((23, 7)).astype(np.float32)
    g = rng.standard_normal((23, 7)).astype(np.float32) if "backward" in mode else None
    for dim in (0, 1):
        for how in ("contiguous", "transposed"):
            x = layout(a, how)
            out = run_softmax(mode, x, dim, "float32", None if g is None else layout(g, how), monkeypatch,
                              resident_bytes=1 << 20)
            assert_same(out, _softmax_ref(mode, a, dim, g).astype(np.float32), "float32", rtol=1e-5)


# --------------------------------------------------------------------------- random
def run_random(shape, kind, seed, offset, a, b, name="float32", how="contiguous"):
    out = layout(np.zeros(shape, np_dtype(name)), how)
    tb.random(FT(out), kind, seed, offset, a, b)
    return out


@pytest.mark.parametrize("name", FLOATS)
def test_random_distributions(name):
    u = widen(run_random((2048,), "uniform", 7, 0, -2.0, 3.0, name)).astype(np.float64)
    assert u.min() >= -2.0 and u.max() <= 3.0 and abs(u.mean() - 0.5) < 0.15
    assert abs(u.std() - 5 / math.sqrt(12)) < 0.1
    n = widen(run_random((2048,), "normal", 7, 0, 1.5, 2.0, name)).astype(np.float64)
    assert abs(n.mean() - 1.5) < 0.15 and abs(n.std() - 2.0) < 0.15
    if name in ("float32", "float64"):
        assert len(np.unique(n)) == n.size


def test_random_stream_positions():
    base = run_random((700,), "normal", 42, 0, 0.0, 1.0)
    np.testing.assert_array_equal(base, run_random((700,), "normal", 42, 0, 0.0, 1.0))
    assert not np.array_equal(base, run_random((700,), "normal", 43, 0, 0.0, 1.0))
    for shift in (4, 1, 7):   # element i draws from stream position offset + i
        shifted = run_random((700 - shift,), "normal", 42, shift, 0.0, 1.0)
        np.testing.assert_array_equal(shifted, base[shift:])
    big = run_random((64,), "uniform", 42, 2 ** 34 + 4, 0.0, 1.0)   # counters past 32 bits
    assert 0 <= big.min() and big.max() < 1 and len(np.unique(big)) == 64


def test_random_layouts():
    shape = (2, 3, 2, 3, 2, 3, 2, 3)
    flat = run_random(shape, "uniform", 5, 12, 0.0, 1.0, "float64")
    for how in ("transposed", "sliced"):   # position i goes to row-major element i
        np.testing.assert_array_equal(run_random(shape, "uniform", 5, 12, 0.0, 1.0, "float64", how), flat)
    zero_d = run_random((), "normal", 5, 12, 0.0, 1.0, "float64")
    assert zero_d == flat.reshape(-1)[0] or np.isfinite(zero_d)
    with pytest.raises(TypeError):
        run_random((3,), "uniform", 5, 0, 0.0, 1.0, "int32")


# --------------------------------------------------------------------------- compiled for a GPU
# issue 24 (helper "transformer"): the rms_norm kernels (kernels/rms_norm.py), one-tile and streaming
# rows, with and without a weight, grad_weight's partial sums; a list of its own, spliced into the
# compile script before the int64-index variants
_TRANSFORMER_LAUNCHES = r'''
from tritensor.backends.triton import nn as tnn
for name, c in [("float32", "float32"), ("bfloat16", "float32"), ("float16", "float32"), ("float64", "float64")]:
    for n in (1000, 20000):
        tnn.rms_norm(T((64, n), name), T((64, n), name), T((n,), name), T((64,), c), 1e-5, c)
        tnn.rms_norm_backward(T((64, n), name), T((64, n), name), T((n, 64), name, True), T((n,), name), T((64,), c),
                              T((n,), c), c)
    tnn.rms_norm(T((64, 1000), name), T((64, 1000), name, True), None, T((64,), c), 1e-5, c)
    tnn.rms_norm_backward(T((64, 1000), name), T((64, 1000), name), T((64, 1000), name), None, T((64,), c), None, c)
'''

# issue 24 (helper "rnn"): the fused recurrent cell steps (kernels/rnn.py), forward and backward,
# in every storage dtype (16-bit ones compute in float32), the LSTM backward with one incoming
# gradient absent, relu and tanh steps; embedding_bag (kernels/embedding_bag.py) in its three
# modes, int32/int64 indices, a transposed weight; a list of its own, spliced in after the transformer's
_RNN_LAUNCHES = r'''
from tritensor.backends.triton import rnn as trnn
for name in ("float32", "float64", "bfloat16", "float16"):
    c = compute_of(name)
    trnn.lstm_cell((T((20, 200), name), T((20, 200), name), T((20, 800), name)), T((20, 800), name),
                   T((20, 800), name), T((20, 200), name), c)
    trnn.lstm_cell_backward((T((20, 800), name), T((20, 200), name)), T((20, 200), name), None, T((20, 200), name),
                            T((20, 200), name), T((20, 800), name), c)
    trnn.gru_cell((T((20, 200), name), T((20, 800), name)), T((20, 600), name), T((20, 600), name),
                  T((20, 200), name), c)
    trnn.gru_cell_backward((T((20, 600), name), T((20, 600), name), T((20, 200), name)), T((20, 200), name),
                           T((20, 200), name), T((20, 800), name), c)
    for relu in (False, True):
        trnn.rnn_cell(T((20, 200), name), T((20, 200), name), T((20, 200), name), relu, c)
        trnn.rnn_cell_backward(T((20, 200), name), T((20, 200), name), T((20, 200), name), relu, c)
trnn.lstm_cell_backward((T((20, 800), "float32"), T((20, 200), "float32")), None, T((20, 200), "float32"),
                        T((20, 200), "float32"), T((20, 200), "float32"), T((20, 800), "float32"), "float32")
from tritensor.backends.triton import embedding_bag as teb   # embedding_bag: sum (+ per-sample weights), mean, max
for name, idx in (("float32", "int64"), ("bfloat16", "int32"), ("float64", "int64"), ("float16", "int64")):
    for mode, psw in ((0, True), (1, False), (2, False)):
        teb.embedding_bag((T((16, 300), name), T((16, 300), "int64")), T((1000, 300), name, name == "float32"),
                          T((64,), idx), T((16,), "int64"), T((16,), "int64"), T((64,), name) if psw else None, mode,
                          3 if mode == 1 else None, compute_of(name))
'''

# issue 24 (helper "attn"): the flash-attention kernels (kernels/attention.py), forward and the
# three backward kernels, per dtype and head-dim block, with causal / bool / float masks, GQA and
# dropout; a list of its own, spliced into the compile script after the transformer's
_ATTENTION_LAUNCHES = r'''
from tritensor.backends.triton import attention as tattn


def attention_launches(name, c, E, mask_kind, causal, p, Ev=None, shift=0, broadcast=False, backward=True):
    Z, H, Hk, L, S, Ev = 2, 4, 2, 100, 130, Ev or E
    q, k, v, g = T((Z, H, L, E), name), T((Z, Hk, S, E), name), T((Z, Hk, S, Ev), name), T((Z, H, L, Ev), name)
    out, lse = T((Z, H, L, Ev), name), T((Z, H, L), c)
    mask = None if mask_kind is None else T((Z, H, L, S), mask_kind)
    if broadcast:    # an (L, S) mask expanded over batch and heads (stride 0)
        mask = FT(np.broadcast_to(np.zeros((L, S), np_dtype(mask_kind)), (Z, H, L, S)))
    kw = dict(mask=mask, scale=0.125, is_causal=causal, dropout_p=p, seed=7, offset=16, compute=c, causal_shift=shift)
    tattn.forward(out, lse, q, k, v, **kw)
    if backward:
        tattn.backward(T((Z, H, L, E), name), T((Z, Hk, S, E), name), T((Z, Hk, S, Ev), name), g, q, k, v, out, lse,
                       **kw)


for name, c in [("float16", "float32"), ("bfloat16", "float32"), ("float32", "float32"), ("float64", "float64")]:
    attention_launches(name, c, 64, None, True, 0.0)
attention_launches("float16", "float32", 128, "bool", False, 0.1)
attention_launches("bfloat16", "float32", 256, "float32", True, 0.0)
# the variants tests/test_attention.py and the attention op records (tests/opinfo_attention.py)
# launch on a GPU: head dims <= 32 (BLOCK_D 16 or 32), every mask kind they pass per dtype. The
# first real-GPU run (Triton 3.6) failed to compile float64 with a bool mask, which this list
# lacked (and Triton 3.9 compiles it: tests/sm90.py's fp64_dot_kwidth catches it under any
# Triton). Verified compiling with Triton 3.6.0 and 3.9.0 (TRITENSOR_COMPILE_PYTHON: a venv
# with triton==3.6.0 and tritensor installed).
attention_launches("float64", "float64", 16, "bool", False, 0.0, broadcast=True)
attention_launches("float64", "float64", 16, "float64", True, 0.0, shift=1)      # the aten ops' bottom-right causal
attention_launches("float64", "float64", 16, None, True, 0.3, Ev=8)              # dropout's gradients
attention_launches("float32", "float32", 8, None, False, 0.25, Ev=32, backward=False)
attention_launches("float32", "float32", 16, "float32", True, 0.0, shift=1, broadcast=True, backward=False)
attention_launches("float16", "float32", 16, "float16", True, 0.0, broadcast=True, backward=False)
'''

_COMPILE_SCRIPT = r'''
import json, os, re, sys
import numpy as np
sys.path.insert(0, os.environ["TRITENSOR_SM90_TESTS"])
import sm90_compile   # tests/sm90_compile.py: a target-only driver (sm_90, no GPU); this part's variants
from sm90 import expect, mark   # tests/sm90.py: each compiled variant's static facts (registers, spills ...)
from sm90_compile import LAST as compiled_last   # None after a launch another part compiles: checks of it run there
from tritensor.backends import triton as tb
from tritensor.backends.triton import _plan
assert _plan.current_profile() == "gpu", _plan.current_profile()   # the GPU's launch settings, not the emulator's
sm90_compile.install()
''' + "\n".join(__import__("inspect").getsource(c) for c in (FakeDType, FakeStorage, FT)) + r'''
_D = {}


def fake_dtype(name):
    return _D.setdefault(name, FakeDType(name))


def np_dtype(name):
    import ml_dtypes
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


FLOATS = ["float32", "float64", "float16", "bfloat16"]


def compute_of(name):
    return "float32" if name in ("float16", "bfloat16") else name


def T(shape, name, transposed=False):
    a = np.zeros(shape[::-1] if transposed else shape, np_dtype(name))
    return FT(a.T if transposed else a)


launched = set()


def elementwise_once(fn, compute, out, ins):
    """One launch per (FN, compute, output and input dtypes): a transposed input for a unary FN, a
    broadcast second operand for a binary one."""
    if (fn, compute, out, tuple(ins)) in launched:
        return
    launched.add((fn, compute, out, tuple(ins)))
    if len(ins) == 1:
        tb.elementwise(fn, T((5, 40), out), [T((5, 40), ins[0], True)], compute)
    elif len(ins) == 2:
        tb.elementwise(fn, T((5, 40), out), [T((5, 40), ins[0]), T((40,), ins[1])], compute)
    else:   # a ternary FN: a transposed first operand, a broadcast last one
        tb.elementwise(fn, T((5, 40), out), [T((5, 40), ins[0], True), T((5, 40), ins[1]), T((40,), ins[2])],
                       compute)


k = tb._kernels()
# the elementwise op records of tests/opinfo.py (elementwise_signatures): each op's FN in the
# float32, int64 and bool flavours its dtypes reach
for fn, compute, out, ins in json.loads(os.environ.get("TRITENSOR_COMPILE_RECORDS", "[]")):
    elementwise_once(fn, compute, out, ins)
for fn in sorted(set(k.elementwise.UNARY) - k.elementwise.INTEGER_ONLY):   # every FN once, plus the integer and float64 flavours
    elementwise_once(fn, "float32", "float32", ["float32"])
for fn, c in [("neg", "int64"), ("abs", "int8"), ("relu", "uint8"), ("identity", "bool"), ("tanh", "float64")]:
    elementwise_once(fn, c, c, [c])
tb.elementwise("exp", T((64,), "bfloat16"), [T((64,), "float16")], "float32")
for fn in sorted(set(k.elementwise.BINARY) - k.elementwise.INTEGER_ONLY):
    out = "bool" if fn in ("eq", "ne", "lt", "le", "gt", "ge") else "float32"
    elementwise_once(fn, "float32", out, ["float32", "float32"])
for fn, c in [("pow", "int32"), ("pow", "uint8"), ("pow", "float64"), ("add", "bool"), ("maximum", "int64"),
              ("lt", "int8"), ("relu_backward", "int64")]:
    out = "bool" if fn == "lt" else c
    elementwise_once(fn, c, out, [c, c])
tb.elementwise("mul", T((5, 40), "float64"), [2.5, T((5, 40), "float64", True)], "float64")
tb.elementwise("sub", T((5, 40), "int64"), [T((5, 40), "int32", True), 3], "int64")
tb.elementwise("where", T((5, 40), "float32"), [T((5, 1), "bool"), T((5, 40), "float32"), 0.0], "float32")
tb.elementwise("where", T((5, 40), "int64"), [T((5, 1), "bool"), 1, True], "int64")
for s, d in [("bool", "bfloat16"), ("uint8", "float64"), ("int64", "int8"), ("float16", "bool"),
             ("bfloat16", "int32"), ("float32", "bfloat16"), ("float64", "float16"), ("float64", "bfloat16"),
             ("bfloat16", "float64")]:
    tb.copy(T((5, 40), d), T((5, 40), s, True))
for d, v in [("bfloat16", 1.5), ("int16", 3), ("bool", True)]:
    tb.fill(T((5, 40), d, True), v)
for op, name, c in [("sum", "float32", "float32"), ("prod", "float64", "float64"), ("amax", "bfloat16", "float32"),
                    ("amin", "int32", "int64"), ("sum", "bool", "int64")]:
    out = "int64" if c == "int64" else name
    tb.reduce(op, T((7,), out), T((7, 5000), name), (1,), c)       # rows, two passes
    tb.reduce(op, T((3000,), out), T((70, 3000), name), (0,), c)   # columns
for name in ("float16", "bool", "int8"):   # count_nonzero/any/all: x != 0 tested in the kernel
    tb.reduce("count_nonzero", T((7,), "int64"), T((7, 5000), name), (1,), "float32")
for name in FLOATS:
    tb.random(T((5, 40), name, True), "normal" if name != "float16" else "uniform", 123, 2 ** 33 + 4, -1.0, 2.0)
tb.random(T((64,), "float32"), "uniform", 123, 5, 0.0, 1.0)
tb.random(T((5, 40), "float64", True), "uniform", 123, 2 ** 33 + 2, -1.0, 2.0)   # two words a number
for name, low, span in [("int64", -3, 8), ("int8", 0, 2 ** 32), ("float32", 2, 5), ("bool", 0, 2)]:
    tb.random(T((5, 40), name, True), "integers", 123, 2 ** 33 + 4, low, span)
for kind, a, b in [("exponential", 0.5, 0.0), ("cauchy", 1.0, 2.0), ("log_normal", 0.5, 0.25), ("geometric", 0.0, -2.8)]:
    # each transform in float32 (geometric counts stored into int64) and in full float64
    tb.random(T((5, 40), "int64" if kind == "geometric" else "float32", True), kind, 123, 2 ** 33 + 4, a, b)
    tb.random(T((5, 40), "float64", True), kind, 123, 2 ** 33 + 4, a, b)
for name in ("float32", "float64"):   # the rejection samplers (kernels/random_sample.py)
    tb.sample(T((300,), name), "gamma", [T((300,), name)], 123, 2 ** 33 + 1)
    tb.sample(T((300,), name), "poisson", [T((300,), name)], 123, 2 ** 33 + 1)
    tb.sample(T((300,), name), "binomial", [T((300,), name), T((300,), name)], 123, 2 ** 33 + 1)
tb.sample(T((300,), "float16"), "gamma", [T((300,), "float16")], 123, 5)      # 16-bit: in float32
for op, name, c in [("argmax", "float32", "float32"), ("argmin", "bfloat16", "float32"),
                    ("argmax", "int64", "int64"), ("argmin", "float64", "float64")]:
    tb.arg_reduce(op, T((7,), "int64"), T((7, 5000), name), 1, c)          # along rows
    tb.arg_reduce(op, T((3000,), "int64"), T((70, 3000), name), 0, c)     # along columns
    tb.arg_reduce(op, T((), "int64"), T((70, 30), name, True), None, c)    # whole tensor
for mode in ("softmax", "log_softmax"):
    for name, c in [("float32", "float32"), ("bfloat16", "float32"), ("float64", "float64")]:
        tb.softmax(mode, T((5, 5000), name), T((5, 5000), name), 1, c)        # one tile, read once
        tb.softmax(mode, T((3, 40000), name), T((3, 40000), name), 1, c)      # long rows, online
        tb.softmax(mode, T((300, 7), name), T((300, 7), name, True), 0, c)   # strided dim
for mode in ("softmax_backward", "log_softmax_backward"):
    for name, c in [("float32", "float32"), ("float16", "float32"), ("float64", "float64")]:
        tb.softmax(mode, T((5, 5000), name), T((5, 5000), name), 1, c, grad=T((5, 5000), name))
        tb.softmax(mode, T((3, 40000), name), T((3, 40000), name), 1, c, grad=T((3, 40000), name))
for op, name, c in [("sum", "float32", "float32"), ("prod", "float64", "float64"), ("sum", "int32", "int64"),
                    ("sum", "int64", "int64"), ("prod", "bfloat16", "float32"), ("sum", "bool", "int64")]:
    out = "int64" if c == "int64" else name
    tb.scan(op, T((5, 3000), out), T((5, 3000), name), 1, c)
    tb.scan(op, T((3000, 5), out), T((3000, 5), name, True), 0, c, reverse=True)
# issue 21.3: nansum (NaN read as 0 in the reduce kernel), logcumsumexp (the log-add-exp scan, both
# ways), cummax/cummin (the (value, index) scan) in the dtypes' compute flavours
for name, c in [("float32", "float32"), ("bfloat16", "float32"), ("float64", "float64")]:
    tb.reduce("nansum", T((7,), name), T((7, 5000), name), (1,), c)
    tb.scan("logsumexp", T((5, 3000), name), T((5, 3000), name), 1, c)
    tb.scan("logsumexp", T((3000, 5), name), T((3000, 5), name, True), 0, c, reverse=True)
for op, name, c in [("max", "float32", "float32"), ("min", "float16", "float32"), ("max", "int64", "int64"),
                    ("min", "bool", "bool"), ("max", "uint8", "uint8"), ("min", "float64", "float64")]:
    tb.scan_index(op, T((5, 3000), name), T((5, 3000), "int64"), T((5, 3000), name, True), 1, c)
for r in range(1, 9):   # every rank a launch can have
    shape = ((2, 3) * 4)[:r]
    tb.elementwise("add", T(shape, "float32", True), [T(shape, "float32"), T(shape[1:], "float32", True)], "float32")
    tb.copy(T(shape, "float32", True), T(shape, "float64"))
    tb.reduce("sum", T(shape[1:], "float32"), T(shape, "float32", True), (0,), "float32")
from tritensor.backends import cuda as backends_cuda
from tritensor.backends.triton import matmul as tmm   # matmul: every dtype, both fp32 precisions
_MM_BIG, _MM_SMALL, _MM_SKINNY = tmm.Config(128, 256, 64, 8, 8, 3), tmm.Config(64, 64, 32, 8, 4, 4), tmm.Config(16, 128, 64, 1, 4, 3)
for name, prec, cfg in [("float16", "ieee", _MM_BIG), ("bfloat16", "ieee", _MM_BIG), ("float32", "highest", _MM_SMALL),
                        ("float32", "high", tmm.Config(128, 128, 32, 8, 8, 4)), ("float64", "highest", tmm.Config(64, 64, 16, 8, 4, 4)),
                        ("float16", "ieee", _MM_SKINNY)]:
    backends_cuda.set_float32_matmul_precision("high" if prec == "high" else "highest")
    mark()
    tmm.matmul(T((300, 200), name), T((300, 70), name), T((70, 200), name), config=cfg)
    # Hopper's tensor-core path: warpgroup MMA for 16-bit and TF32 tiles of >= 64 rows, DMMA for float64
    ptx = compiled_last[0].asm["ptx"] if compiled_last[0] is not None else None
    if ptx is None:
        pass
    elif cfg.BLOCK_M >= 64 and (name in ("float16", "bfloat16") or prec == "high"):
        assert "wgmma.mma_async" in ptx, (name, prec, cfg)
        expect("hgmma")     # and in the SASS (tests/sm90.py)
    elif name == "float64":
        assert re.search(r"mma\.sync\.aligned\.m\d+n\d+k\d+\.row\.col\.f64", ptx), cfg   # m8n8k4 (3.9), m16n8k16 (3.6)
        expect("dmma")
    elif name in ("float16", "bfloat16"):
        expect("mma")       # skinny tiles: mma.sync (HMMA)
tmm.matmul(T((300, 200), "float16"), T((300, 70), "float16", True), T((70, 200), "float16", True), config=_MM_BIG)  # A^T, B^T
tmm.matmul(T((3, 40, 50), "bfloat16"), T((3, 40, 70), "bfloat16"), T((3, 70, 50), "bfloat16", True),
           T((50,), "bfloat16"), alpha=0.5, beta=2.0, config=_MM_SMALL)                     # batched + bias epilogue
tmm.matmul(T((3, 40, 50), "float32"), T((3, 40, 70), "float32"), T((70, 50), "float32"), config=_MM_SMALL)  # batch folded
for name in ("int64", "int8", "uint8"):   # the integer kernel: int64 multiply-adds (no tl.dot), bias epilogue
    tmm.matmul(T((3, 40, 50), name), T((3, 40, 70), name), T((70, 50), name, True), T((50,), name),
               alpha=3, beta=2, config=tmm.INT_CONFIG)
# pointwise math: integer flavours of the rounding / division FNs, the integer-only bitwise FNs,
# float64 for the series (expm1, log1p) and the clamp ternary with scalar bounds
for fn in ("floor", "ceil", "trunc", "round", "sign", "bitwise_not", "logical_not", "isnan", "isinf", "isfinite"):
    for c in ("int64", "uint8"):
        out = "bool" if fn.startswith(("is", "logical")) else c
        elementwise_once(fn, c, out, [c])
for fn in ("expm1", "log1p", "round", "erf", "gelu_tanh", "tan"):
    elementwise_once(fn, "float64", "float64", ["float64"])
for fn in ("div_trunc", "div_floor", "remainder", "fmod", "bitwise_and", "bitwise_or", "bitwise_xor",
           "logical_xor"):
    for c in ("int32", "int64", "uint8"):
        out = "bool" if fn.startswith("logical") else c
        elementwise_once(fn, c, out, [c, c])
for fn in ("div_floor", "remainder", "fmod"):
    tb.elementwise(fn, T((5, 40), "float64"), [T((5, 40), "float64"), 2.5], "float64")
tb.elementwise("bitwise_and", T((5, 40), "bool"), [T((5, 40), "bool"), True], "bool")
tb.elementwise("round_decimals", T((5, 40), "float16"), [T((5, 40), "float16"), -100.0], "float32")
tb.elementwise("clamp", T((5, 40), "float32"), [T((5, 40), "float32", True), -1.0, 2.5], "float32")
tb.elementwise("clamp", T((5, 40), "int64"), [T((5, 40), "int64"), T((40,), "int64"), 7], "int64")
# pointwise math (issue 21.2; float32 launches come from the records above): the float64 branches
# (Cephes' atan core, the exponent bits of frexp/ldexp/nextafter/copysign), lcm's widening of
# narrow integers, the unsigned right shift, the ternary FNs
for fn in ("atan2", "frexp_mantissa", "copysign", "nextafter", "ldexp"):
    elementwise_once(fn, "float64", "float64", ["float64"] * (2 if fn in k.elementwise.BINARY else 1))
elementwise_once("lcm", "int8", "int8", ["int8", "int8"])
# special FNs whose float64 code differs (the first GPU run, Triton 3.6, failed to compile these):
# igamma's float64 asymptotic table; a Chebyshev recurrence's data-dependent loop on the flat
# launch of two transposed (3, 67) operands
elementwise_once("igammac", "float64", "float64", ["float64", "float64"])
tb.elementwise("chebyshev_polynomial_w", T((3, 67), "float64", True), [T((3, 67), "float64", True)] * 2, "float64")
elementwise_once("bitwise_right_shift", "uint8", "uint8", ["uint8", "uint8"])
tb.elementwise("lerp", T((5, 40), "bfloat16"), [T((5, 40), "bfloat16", True), T((40,), "bfloat16"), 0.25], "float32")
tb.elementwise("nan_to_num_inf", T((5, 40), "float16"), [T((5, 40), "float16"), 65504.0, -65504.0], "float32")
tb.elementwise("mul_backward", (T((5, 40), "float32"), T((5, 40), "float32", True)),
               [T((5, 40), "float32"), T((40,), "float32"), T((5, 1), "float32")], "float32")
tb.elementwise("mul_backward", (T((5, 40), "bfloat16"), T((5, 40), "bfloat16")),
               [T((5, 40), "bfloat16", True), 2.5, T((5, 40), "float16")], "float32")
# indexing (kernels/index.py): gathers with int32/int64 indices, wrapped or not, every data dtype;
# deterministic scatters (last write wins, accumulate in each compute dtype); compaction; bounds checks
from tritensor.backends.triton import index as ti
for name in ["float32", "float64", "float16", "bfloat16", "bool", "int8", "int64"]:
    ti.gather(T((5, 40), name), T((9, 40), name, True), (0, 1), T((5, 40), "int64"), (40, 1), 9, 40, True)
    ti.gather(T((5, 40, 3), name), T((9, 40, 3), name), (0, 3, 1), T((5, 40), "int32", True), (1, 5, 0), 9, 120, False)
ti.gather(T(((2, 3) * 4)[:8], "float32"), T((64,), "float32"), (0,) * 8, T(((2, 3) * 4)[:8], "int64", True),
          T(((2, 3) * 4)[:8], "int64", True).stride(), 64, 1, True)
for idx in ("int32", "int64"):
    for first in (True, False):
        ti.index_offsets(T((5, 40), "int64"), T((5, 40), idx, True), (1, 5), 9, 40, first)
for name, c in [("float32", "float32"), ("bfloat16", "float32"), ("float16", "float32"), ("float64", "float64"),
                ("int64", "int64"), ("int32", "int32"), ("bool", "bool"), ("uint8", "uint8")]:
    for acc in (True, False):
        ti.scatter(T((50,), name), T((5, 40), name, True), (5, 40), (1, 5), T((30,), "int64"), T((200,), "int64"),
                   T((31,), "int64"), 7, acc, c)
ti.scatter(T((50,), "float32"), T((), "float32"), (5, 40), (0, 0), T((30,), "int64"), T((200,), "int64"),
           T((31,), "int64"), 1, False, "float32")
for name, c in [("float32", "float32"), ("bfloat16", "float32"), ("float64", "float64"), ("int64", "int64"),
                ("int8", "int8")]:     # scatter_reduce: each reduction, with and without self
    for how in ("sum", "prod", "mean", "amax", "amin"):
        for inc in (True, False):
            ti.scatter_reduce(T((50,), name), T((5, 40), name, True), (5, 40), (1, 5), T((30,), "int64"),
                              T((200,), "int64"), T((31,), "int64"), 7, how, inc, c)
for name in ["bool", "float32", "bfloat16", "float16", "int64", "uint8"]:
    ti.count_blocks(T((5, 40), name, True), (5, 40))
    ti.compact(T((100,), name), T((5, 40), "bool"), (5, 40), T((4,), "int64"), values=T((5, 40), name, True))
    for nd in [(200,), (5, 40), (5, 4, 10)]:
        ti.compact(T((100, len(nd)), "int64"), T(nd, name), nd, T((4,), "int64"), coord_shape=nd)
for idx in ("int32", "int64"):
    ti.count_out_of_range(T((5, 40), idx, True), -9, 9)
    # the deferred check (runtime/device_errors.py): clamped copy or not, with and without ignore_index
    ti.check_deferred(T((5, 40), idx, True), T((5, 40), idx), T((2,), "int64"), -9, 9, 3)
    ti.check_deferred(T((5, 40), idx), None, T((2,), "int64"), 0, 9, 3, ignore=-100)
    # every int argument 1 (Triton makes those constexprs): lu pivots' low, a one-element index, check id 1
    ti.check_deferred(T((1,), idx), T((1,), idx), T((2,), "int64"), 1, 2, 1, ignore=1)
# index_add & co. (issue 21.4): the sorted-segment kernel in each mode, strided operands, int32/int64 indices
from tritensor.backends.triton import sort as tsort_of_index   # (the index's sort: a smaller network, as below)
_SORT_GPU_FOR_INDEX = dict(tsort_of_index.GPU_SETTINGS)
tsort_of_index.GPU_SETTINGS.update(tile_n=64, tile=256, merge_block=64)
for mode, name, c, idx in [("add", "float32", "float32", "int64"), ("add", "bfloat16", "float32", "int32"),
                           ("add", "int64", "int64", "int64"), ("add", "bool", "bool", "int64"),
                           ("copy", "float16", "float32", "int64"), ("prod", "float64", "float64", "int32"),
                           ("mean", "int32", "int32", "int64"), ("mean", "float32", "float32", "int64"),
                           ("amax", "float32", "float32", "int64"), ("amin", "int8", "int8", "int64")]:
    for inc in ((True, False) if mode in ("prod", "mean", "amax", "amin") else (True,)):
        ti.index_segments(T((40, 30), name), T((40, 30), name, True), T((300, 30), name), None, 0,
                          T((300,), idx), mode, inc, 2.5 if name.startswith("float") else 2, c)
ti.index_segments(T((5, 40), "float32"), T((5, 40), "float32"), None, T((), "float32"), 1, T((7,), "int64"),
                  "fill", compute="float32")
# index_add's default alpha=1 (an int): Triton makes an int argument equal to 1 a constexpr unless
# told not to (the first GPU run failed here: fold, index_add, upsample_nearest's backward)
ti.index_segments(T((40, 30), "float32"), T((40, 30), "float32"), T((300, 30), "float32"), None, 0,
                  T((300,), "int64"), "add", True, 1, "float32")
tsort_of_index.GPU_SETTINGS.update(_SORT_GPU_FOR_INDEX)
from tritensor.backends.triton import join as tj   # cat/stack are strided copies; flip, tril/triu kernels
tj.cat(T((5, 70), "float32"), [T((5, 30), "bfloat16", True), T((5, 40), "float32")], 1)
tj.stack(T((2, 5, 40), "int64"), [T((5, 40), "int32"), T((5, 40), "int64", True)], 0)
for name in ("float32", "float64", "bfloat16", "float16", "int64", "int8", "bool"):
    tj.flip(T((5, 40), name), T((5, 40), name, True), (0,))
tj.flip(T((3, 4, 5), "float32"), T((3, 4, 5), "float32", True), (0, 2))
tj.flip(T((2, 3) * 4, "float32"), T((2, 3) * 4, "float32", True), (0, 3, 7))    # leading dims loop
for name, diagonal, upper in [("float32", 0, False), ("float32", -2, True), ("bool", 3, False),
                              ("bfloat16", 1, True), ("int64", -1, False), ("float64", 0, True)]:
    tj.tri(T((3, 5, 40), name), T((3, 5, 40), name, True), diagonal, upper)
tj.tri(T((2, 3) * 4, "float16"), T((2, 3) * 4, "float16", True), 1, False)     # leading dims loop
for name in ("float32", "bfloat16", "int8", "float64"):    # transposed operands: 2-D tiles
    tb.elementwise("add", T((300, 200), name), [T((300, 200), name), T((300, 200), name, True)], compute_of(name))
    tb.copy(T((300, 200), name), T((300, 200), name, True))
tb.elementwise("where", T((3, 300, 200), "float32"), [T((3, 300, 200), "bool", True), T((3, 300, 200), "float32"), 0.0], "float32")
tb.elementwise("exp", T((300, 200), "float32"), [T((300, 200), "float16", True)], "float32")
tb.copy(T((300, 200), "float16", True), T((300, 200), "float32"))
for name in ("float32", "int32"):      # pow loops on the block's largest exponent, here a 2-D tile
    tb.elementwise("pow", T((300, 200), name), [T((300, 200), name), T((300, 200), name, True)], name)
from tritensor.backends.triton import nn as tnn   # layer_norm / cross entropy: one-tile and streaming rows
for name, c in [("float32", "float32"), ("bfloat16", "float32"), ("float16", "float32"), ("float64", "float64")]:
    for n in (1000, 20000):
        tnn.layer_norm(T((64, n), name), T((64, n), name), T((n,), name), T((n,), name), T((64,), c), T((64,), c), 1e-5, c)
        tnn.layer_norm_backward(T((64, n), name), T((64, n), name), T((n, 64), name, True), T((n,), name), T((64,), c),
                                T((64,), c), T((n,), name), T((n,), name), c)
    tnn.layer_norm(T((64, 1000), name), T((64, 1000), name), None, None, T((64,), c), T((64,), c), 1e-5, c)
    tnn.layer_norm_backward(T((64, 1000), name), T((64, 1000), name), T((64, 1000), name), None, T((64,), c),
                            T((64,), c), None, None, c)
    for n in (1000, 50000):
        for w in (None, T((n,), name)):
            tnn.cross_entropy(T((2, 64), name), T((64, n), name), T((64,), "int64"), w, 1, -100, c)
            tnn.cross_entropy_backward(T((64, n), name), T((2, 64), name), T((64, n), name), T((64,), "uint8"), w, 1,
                                       -100, c)
    tnn.cross_entropy(T((2, 4, 9), name), T((4, 1000, 9), name), T((4, 9), "int64", True), None, 1, -100, c)
for c in ("float32", "float64"):     # CTC: the alpha lattice; beta and the gradient (both zero_infinity flavours)
    tnn.ctc_loss((T((3,), c), T((3, 20, 9), c)), T((20, 3, 50), c), T((12,), "int64"), T((3,), "int64"),
                 T((3,), "int64"), T((3,), "int64"), 0, c)
    for zi in (False, True):
        tnn.ctc_loss_backward(T((20, 3, 50), c), T((3,), c), T((20, 3, 50), c), T((12,), "int64"), T((3,), "int64"),
                              T((3,), "int64"), T((3,), "int64"), T((3,), c), T((3, 20, 9), c), T((3, 20, 9), c), 0, zi,
                              c)
for name, c, p, cl in [("float32", "float32", "float32", False), ("float32", "float32", "float32", True),
                       ("bfloat16", "float32", "float32", True), ("float16", "float32", "float16", False),
                       ("float64", "float64", "float64", False)]:   # batch / group norm, both layouts
    x, g, out = (T((8, 16, 40), name, cl) for _ in range(3))
    tnn.batch_norm(out, x, T((16,), p), T((16,), p), T((16,), c), T((16,), c), T((16,), c), T((16,), c), True, 0.1,
                   1e-5, c)
    tnn.batch_norm_backward((T((8, 16, 40), name, cl), T((16,), p), T((16,), p)), g, x, T((16,), p), T((16,), c),
                            T((16,), c), True, c)
    tnn.group_norm((out, T((8, 4), c), T((8, 4), c)), x, T((16,), p), T((16,), p), 4, 1e-5, c)
    tnn.group_norm_backward((T((8, 16, 40), name, cl), T((16,), p), T((16,), p)), g, x, T((8, 4), c), T((8, 4), c),
                            T((16,), p), 4, c)
tnn.batch_norm(T((8, 16, 40), "bfloat16"), T((8, 16, 40), "bfloat16"), None, None, T((16,), "float32"),
               T((16,), "float32"), T((16,), "float32"), T((16,), "float32"), False, 0.1, 1e-5, "float32")   # eval
tnn.batch_norm_backward((T((8, 16, 40), "bfloat16"), None, None), T((8, 16, 40), "bfloat16"),
                        T((8, 16, 40), "bfloat16"), None, T((16,), "float32"), T((16,), "float32"), False, "float32")
from tritensor.backends.triton import pdist as tpd   # pdist/cdist: direct slabs (any p), Gram tiles (tl.dot), both backward paths
for name, p in [("float32", 1.5), ("float32", 2.0), ("float64", 2.0), ("float64", float("inf")), ("float32", 0.0)]:
    tpd.pdist(T((300 * 299 // 2,), name), T((300, 70), name), p, name)
    tpd.pdist_backward(T((300, 70), name), T((300 * 299 // 2,), name), T((300, 70), name, True),
                       T((300 * 299 // 2,), name), p, name)          # p = 0: zeros, no kernel
tpd.cdist(T((2, 3, 40, 50), "float32"), T((2, 1, 40, 70), "float32"), T((3, 50, 70), "float32", True), 2.0, True, "float32")
tpd.cdist_backward(T((2, 40, 70), "float32"), T((2, 40, 50), "float32"), T((2, 40, 70), "float32"),
                   T((2, 50, 70), "float32", True), T((2, 40, 50), "float32"), float("inf"), "float32")
backends_cuda.set_float32_matmul_precision("high")   # TF32 Gram tiles of 64 rows: warpgroup MMA
tpd.pdist(T((300 * 299 // 2,), "float32"), T((300, 70), "float32"), 2.0, "float32")
assert compiled_last[0] is None or "wgmma.mma_async" in compiled_last[0].asm["ptx"]
backends_cuda.set_float32_matmul_precision("highest")
tpd.pair_index_probe(T((64,), "int64"), T((64,), "int64"), T((64,), "int64"), T((64,), "int64"), 2 ** 32)
from tritensor.backends.triton import linalg as tla   # factorizations: registers (small) and panels + matmul (blocked)
from tritensor.backends.triton import matmul as tmm_linalg


class _ConfiguredMatmul:    # the blocked paths' trailing updates, with a fixed configuration (no autotuning here)
    def matmul(self, *args, **kwargs):
        return tmm_linalg.matmul(*args, config=tmm_linalg.Config(64, 64, 32, 8, 4, 3), **kwargs)


tla.tmm = _ConfiguredMatmul()
for name in ("float32", "float64"):        # one program per matrix, in registers
    tla.cholesky((T((3, 40, 40), name), T((3,), "int32")), T((3, 40, 40), name, True), compute=name, upper=True)
    tla.lu_factor((T((3, 40, 50), name), T((3, 40), "int32"), T((3,), "int32")), T((3, 40, 50), name, True),
                  compute=name, pivot=name == "float32")
    tla.solve_triangular(T((3, 40, 8), name), T((40, 40), name, True), T((3, 40, 8), name), compute=name,
                         upper=True, left=True, unitriangular=False)
    for adjoint in (False, True):
        tla.lu_solve(T((3, 40, 8), name), T((3, 40, 40), name), T((3, 40), "int32"), T((3, 40, 8), name, True),
                     compute=name, left=True, adjoint=adjoint)
tla.GPU.update(small_n=16, panel=16)       # the blocked paths: panels, trsm blocks, laswp, matmul updates
tla.cholesky((T((3, 40, 40), "float32"), T((3,), "int32")), T((3, 40, 40), "float32"), compute="float32", upper=False)
tla.lu_factor((T((3, 40, 50), "float32"), T((3, 40), "int32"), T((3,), "int32")), T((3, 40, 50), "float32"),
              compute="float32", pivot=True)
tla.lu_solve(T((3, 40, 8), "float32"), T((3, 40, 40), "float32"), T((3, 40), "int32"), T((3, 40, 8), "float32"),
             compute="float32", left=True, adjoint=True)
tla.GPU.update(small_n=64, panel=32)
for name in ("float32", "float64"):        # Householder QR and its Q, in memory
    tla.geqrf((T((3, 70, 40), name), T((3, 40), name)), T((3, 70, 40), name, True), compute=name)
    tla.householder_product(T((3, 70, 40), name), T((3, 70, 40), name, True), T((3, 30), name), compute=name)
tla.lu_pivots_to_permutation(T((3, 70), "int64"), T((3, 40), "int32"), compute="int64", m=70)
from tritensor.backends.triton import linalg_spectral as tls   # Jacobi eigh / svd: one program per matrix
for name in ("float32", "float64"):
    i32 = T((3,), "int32")
    tls.eigh((T((3, 20), name), T((3, 20, 20), name), i32), T((3, 20, 20), name, True), compute=name, lower=True,
             compute_v=True)
    tls.eigh((T((3, 5), name), T((0,), name), i32), T((3, 5, 5), name), compute=name, lower=False, compute_v=False)
    tls.svd((T((3, 30, 30), name), T((3, 20), name), T((3, 20, 20), name), i32), T((3, 30, 20), name), compute=name,
            full_matrices=True, compute_uv=True)                   # tall, U completed to 30 columns
    tls.svd((T((3, 20, 20), name), T((3, 20), name), T((3, 30, 20), name), i32), T((3, 20, 30), name, True),
            compute=name, full_matrices=False, compute_uv=True)    # wide: the transposed problem
    tls.svd((T((0,), name), T((3, 20), name), T((0,), name), i32), T((3, 30, 20), name), compute=name,
            full_matrices=False, compute_uv=False)
    # block Jacobi past the registers: subproblems of 32, their gathers, rotations, sorts and gathers
    tls.eigh((T((2, 70), name), T((2, 70, 70), name), T((2,), "int32")), T((2, 70, 70), name, True), compute=name,
             lower=True, compute_v=True)
    tls.svd((T((90, 90), name), T((40,), name), T((40, 40), name), T((), "int32")), T((90, 40), name),
            compute=name, full_matrices=True, compute_uv=True)
from tritensor.backends.triton import sort as tsort   # sort/argsort/topk: tile sorts, merges, 64-bit keys
_SORT_GPU = dict(tsort.GPU_SETTINGS)
tsort.GPU_SETTINGS.update(tile_n=64, tile=256, merge_block=64)   # the same code, a smaller unrolled network
for name, descending in [("float32", False), ("int64", True), ("bfloat16", True), ("uint64", False), ("uint32", True)]:
    tsort.sort(T((5, 300), name), T((5, 300), "int64"), T((5, 300), name, True), 1, descending)   # tiles + merges
tsort.sort(None, T((5, 40), "int64"), T((5, 40), "bool"), 1, False)                # argsort, one tile
tsort.sort(T((3, 7), "float64"), T((3, 7), "int64"), T((300, 3), "float64", True), 0, True, 7)   # topk
tsort.GPU_SETTINGS.update(_SORT_GPU)
for b_name, v_name, c, right in [("float32", "float32", "float32", False), ("int64", "int32", "int64", True),
                                 ("bfloat16", "float64", "float64", False)]:     # searchsorted's binary search
    tsort.searchsorted(T((3, 40), "int64"), T((3, 500), b_name, True), T((3, 40), v_name), None, right, c)
tsort.searchsorted(T((40, 3), "int32"), T((1, 500), "float32"), T((3, 40), "float32", True), T((1, 500), "int64"), True,
                   "float32")                                                    # one row, a sorter, int32 out
tsort.count(T((50,), "int64"), T((3000,), "int64"))                             # histogram counts: int64 atomics
from tritensor.backends.triton import conv as tconv   # convolutions: forward, input gradient, split-K weight gradient
_CONV = {"16bit": tconv.CONFIGS["16bit"][0], "tf32": tconv.CONFIGS["tf32"][0], "ieee32": tconv.CONFIGS["ieee32"][0],
         "float64": tconv.CONFIGS["float64"][0]}
for name, prec, fam in [("float16", "highest", "16bit"), ("float32", "high", "tf32"), ("float32", "highest", "ieee32"),
                        ("float64", "highest", "float64")]:      # (bfloat16: its rounding store in the 3-d launch below)
    backends_cuda.set_float32_matmul_precision(prec)
    c = compute_of(name)
    cfg = _CONV[fam]
    mark()
    tconv.forward(T((4, 64, 28, 28), name), T((4, 32, 56, 56), name, True), T((64, 32, 3, 3), name), T((64,), name),
                  (2, 2), (1, 1), (1, 1), 1, c, config=cfg)                                   # NCHW-strided input, bias
    ptx = compiled_last[0].asm["ptx"] if compiled_last[0] is not None else None
    if ptx is not None and fam in ("16bit", "tf32"):      # warpgroup MMA (the gathered tiles staged through smem)
        assert "wgmma.mma_async" in ptx, (name, prec)
        expect("hgmma")
    elif ptx is not None and fam == "float64":
        assert re.search(r"mma\.sync\.aligned\.m\d+n\d+k\d+\.row\.col\.f64", ptx), name
        expect("dmma")
    tconv.input_grad(T((4, 32, 56, 56), name), T((4, 64, 28, 28), name, True), T((64, 32, 3, 3), name), None,
                     (2, 2), (1, 1), (1, 1), 1, c, config=cfg)                                # residue classes
    tconv.weight_grad(T((64, 32, 3, 3), name), T((4, 64, 28, 28), name), T((4, 32, 56, 56), name, True),
                      (2, 2), (1, 1), (1, 1), 1, c, config=cfg)                               # split-K + reduction
tconv.forward(T((2, 6, 9), "float32"), T((2, 4, 20), "float32"), T((6, 2, 3), "float32"), None, (2,), (1,), (2,), 2,
              "float32", config=_CONV["ieee32"])                                               # 1-d, grouped
tconv.input_grad(T((1, 2, 5, 9, 9), "bfloat16"), T((1, 4, 3, 4, 4), "bfloat16"), T((4, 2, 1, 3, 3), "bfloat16"),
                 T((2,), "bfloat16"), (2, 2, 2), (0, 1, 1), (1, 2, 1), 1, "float32", config=_CONV["16bit"])  # 3-d, bias
tconv.weight_grad(T((3, 3, 2, 2), "float16"), T((1, 3, 4, 4), "float16"), T((1, 3, 5, 5), "float16"), (1, 1), (0, 0),
                  (1, 1), 1, "float32", config=_CONV["16bit"])                                 # one split: straight out
from tritensor.backends.triton import pool as tpool   # pooling: separable tables (both ways), window max, its gradient
_POOL_W = (("window", 56, 28, 3, 2, 1, 1, "include"),) * 2          # ResNet's stem pool (kernel 3, stride 2, pad 1)
_POOL_A = (("adaptive", 5, 3), ("adaptive", 7, 4), ("adaptive", 9, 2))
_POOL_CL = lambda name: FT(np.zeros((2, 28, 28, 8), np_dtype(name)).transpose(0, 3, 1, 2))   # channels_last out
tpool.separable(_POOL_CL("float32"), T((2, 8, 56, 56), "float32", True), _POOL_W, False, "float32")  # divisors, NHWC
tpool.separable(T((2, 8, 56, 56), "bfloat16"), T((2, 8, 28, 28), "bfloat16"), _POOL_W, True, "float32")  # weights
tpool.separable(T((1, 2, 3, 4, 2), "float64"), T((1, 2, 5, 7, 9), "float64"), _POOL_A, False, "float64")  # 3-d
tpool.separable(T((2, 8, 28, 28), "int64"), T((2, 8, 56, 56), "int64"), _POOL_W, False, "int64")   # truncating
for name in ("float16", "float64", "int64"):
    tpool.window_max(T((2, 8, 28, 28), name), T((2, 8, 28, 28), "int64"), T((2, 8, 56, 56), name, True), _POOL_W,
                     compute_of(name))
tpool.window_max(_POOL_CL("float32"), _POOL_CL("int64"), T((2, 8, 56, 56), "float32"), _POOL_W, "float32")
for name in ("float32", "bfloat16"):
    tpool.window_max_backward(T((2, 8, 56, 56), name), T((2, 8, 28, 28), name), T((2, 8, 28, 28), "int64"), _POOL_W,
                              compute_of(name))
backends_cuda.set_float32_matmul_precision("highest")
from tritensor.backends.triton import sparse as tsparse   # CSR / row-sorted COO @ dense: a row per program
for name, acc in [("float32", "float32"), ("float64", "float64"), ("bfloat16", "float32"), ("float16", "float32"),
                  ("int64", "int64")]:
    tsparse.spmm(T((20, 70), name), T((21,), "int64"), T((40,), "int64"), T((40,), name), T((9, 70), name, True),
                 acc)
for name in ("float32", "float64"):       # sampled_addmm's per-entry dots (a transposed mat2, float64 alpha/beta)
    tsparse.sampled_dot(T((40,), name), T((40,), name), T((20, 9), name), T((9, 70), name, True), T((40,), "int64"),
                        T((40,), "int64"), 0.5, -2.0)
from tritensor.backends.triton import resample as trs   # grid_sampler_2d: every mode x padding, 16-bit, float64
for mode in range(3):
    for padding in range(3):
        trs.grid_sample_2d(T((2, 3, 5, 7), "float32"), T((2, 3, 8, 9), "float32", mode == 1),
                           T((2, 5, 7, 2), "float32"), mode, padding, mode == padding, "float32")
trs.grid_sample_2d(T((1, 2, 3, 4), "bfloat16"), T((1, 2, 6, 5), "bfloat16"), T((1, 3, 4, 2), "bfloat16"), 2, 2, False,
                   "float32")
trs.grid_sample_2d(T((1, 2, 3, 4), "float64"), T((1, 2, 6, 5), "float64"), T((1, 3, 4, 2), "float64"), 0, 1, True,
                   "float64")
trs.upsample_nearest(T((2, 3, 7, 9), "float32"), T((2, 3, 4, 5), "float32", True), T((1,), "int64"),
                     T((7,), "int64"), T((9,), "int64"))                    # 2-d, a transposed input
trs.upsample_nearest(T((1, 2, 3, 4, 5), "uint8"), T((1, 2, 2, 2, 2), "uint8"), T((3,), "int64"), T((4,), "int64"),
                     T((5,), "int64"))                                       # 3-d
for mode, padding in [(0, 2), (1, 1), (0, 0)]:
    trs.grid_sample_3d(T((2, 3, 2, 4, 5), "float32"), T((2, 3, 3, 4, 5), "float32"), T((2, 2, 4, 5, 3), "float32"),
                       mode, padding, padding == 1, "float32")
trs.grid_sample_3d(T((1, 2, 2, 3, 4), "float16"), T((1, 2, 3, 3, 4), "float16", True), T((1, 2, 3, 4, 3), "float16"),
                   0, 1, False, "float32")
trs.upsample_taps(T((2, 3, 7, 9), "float32"), T((2, 3, 4, 5), "float32", True), T((1, 1), "int64"),
                  T((1, 1), "float32"), T((4, 7), "int64"), T((4, 7), "float32"), T((4, 9), "int64"),
                  T((4, 9), "float32"), "float32")                         # bicubic 2-d
trs.upsample_taps(T((1, 2, 3, 4, 5), "bfloat16"), T((1, 2, 2, 2, 2), "bfloat16"), T((2, 3), "int64"),
                  T((2, 3), "float32"), T((2, 4), "int64"), T((2, 4), "float32"), T((2, 5), "int64"),
                  T((2, 5), "float32"), "float32")                         # trilinear, 16-bit
''' + _TRANSFORMER_LAUNCHES + _RNN_LAUNCHES + _ATTENTION_LAUNCHES + r'''
# issue 23.6: contiguous pointwise and reduction kernels move 16 bytes a thread (LDG.E.128 /
# STG.E.128) for the 2-, 4- and 8-byte dtypes; the exceptions, with their reasons, are listed in
# tests/sm90.py's VECTOR_EXCEPTIONS
from tritensor.backends.triton import nn as tnn_vec
_V = (8, 1024)
mark()
for name in ("float32", "bfloat16", "float16", "float64", "int32"):
    c = compute_of(name)
    tb.elementwise("neg", T(_V, name), [T(_V, name)], c)
    expect("ldg128", "stg128")
    tb.elementwise("add", T(_V, name), [T(_V, name), T(_V, name)], c)
    expect("ldg128", "stg128")
    tb.elementwise("where", T(_V, name), [T(_V, "bool"), T(_V, name), T(_V, name)], c)
    expect("ldg128", "stg128")
    tb.copy(T(_V, name), T(_V, name))
    expect("ldg128", "stg128")
    tb.fill(T(_V, name), 1)
    expect("stg128")
    tb.reduce("sum", T((1024,), name), T(_V, name), (0,), c)          # kept dim contiguous
    expect("ldg128")      # (its store: see sm90.VECTOR_EXCEPTIONS)
    tb.reduce("sum", T((8,), name), T(_V, name), (1,), c)             # reduced dim contiguous
    expect("ldg128")
for name in ("float32", "bfloat16", "float16", "float64"):
    c = compute_of(name)
    tb.elementwise("exp", T(_V, name), [T(_V, name)], c)
    expect("ldg128", "stg128")
    tb.elementwise("lt", T(_V, "bool"), [T(_V, name), T(_V, name)], c)   # a bool out: 8 bytes a thread
    expect("ldg128")
    tb.copy(T(_V, "float32"), T(_V, name))
    expect("ldg128", "stg128")
    tb.softmax("softmax", T(_V, name), T(_V, name), 1, c)
    expect("ldg128", "stg128")
    tb.softmax("softmax_backward", T(_V, name), T(_V, name), 1, c, grad=T(_V, name))
    expect("ldg128", "stg128")
    tnn_vec.layer_norm(T(_V, name), T(_V, name), T((1024,), name), T((1024,), name), T((8,), c), T((8,), c), 1e-5, c)
    expect("ldg128", "stg128")
# uint16/32/64 (issue 28, helper "udtypes"): torch's kernels for them (mul, eq, bitwise, casts both
# ways, fill, the int64 sum; the sort keys above), unsigned conversions and wrap-around
for fn, c, out, src in [("mul", "uint64", "uint64", "uint64"), ("eq", "uint32", "bool", "uint32"),
                        ("bitwise_xor", "uint16", "uint16", "uint16"), ("div", "float32", "float32", "uint64"),
                        # past torch's set (ops/_unsigned.unrestricted, the Array API namespace)
                        ("lt", "uint64", "bool", "uint64"), ("div_floor", "uint64", "uint64", "uint64"),
                        ("remainder", "uint32", "uint32", "uint32"), ("bitwise_right_shift", "uint64", "uint64", "uint64"),
                        ("maximum", "uint16", "uint16", "uint16")]:
    tb.elementwise(fn, T((5, 40), out), [T((5, 40), src), T((40,), src)], c)
for s, d in [("uint64", "float32"), ("float64", "uint64"), ("int64", "uint32"), ("uint16", "int64")]:
    tb.copy(T((5, 40), d), T((5, 40), s, True))
tb.fill(T((5, 40), "uint64", True), -1)
tb.reduce("sum", T((7,), "int64"), T((7, 5000), "uint32"), (1,), "int64")
# hash_tensor: the xor combine over int64 bit patterns, stored as uint64 (rows in two passes, columns)
tb.reduce("xor", T((7,), "uint64"), T((7, 5000), "int64"), (1,), "int64")
tb.reduce("xor", T((3000,), "uint64"), T((70, 3000), "int64", True), (0,), "int64")
tb.INDEX32_LIMIT = 0   # the int64-index variants (tensors past 2**31 elements or offsets)
tb.elementwise("add", T((5, 40), "float32", True), [T((5, 40), "float32"), T((40,), "float32")], "float32")
tb.elementwise("where", T((5, 40), "float32"), [T((5, 1), "bool"), T((5, 40), "float32"), 0.0], "float32")
tb.elementwise("exp", T((5, 40), "bfloat16"), [T((5, 40), "float32", True)], "float32")
tb.copy(T((5, 40), "float16", True), T((5, 40), "float32"))
tb.fill(T((5, 40), "int64", True), 3)
tb.INDEX32_LIMIT = 2 ** 31 - 1
sm90_compile.finish()
'''

COMPILE_PARTS = 8      # (each part a fresh process under a 600 s limit: ~1400 launches, ~1150 variants in all)


def elementwise_signatures():
    from opinfo import elementwise_signatures as from_records   # the op records (tests/opinfo.py)
    return from_records()


def _table_launch_fn(entry):
    """The kernel FN a plain elementwise table entry launches (ops/elementwise.py ``launcher(fn)``
    keeps it in its closure), or None for an entry with a launcher of its own (gelu's two FNs,
    bitwise_not of bool, clamp's ternary)."""
    kernel = entry.kernel
    if kernel is None or kernel.__qualname__ != "launcher.<locals>.launch":
        return None
    return dict(zip(kernel.__code__.co_freevars, (c.cell_contents for c in kernel.__closure__)))["fn"]


def _check_compile_launches(records, signatures):
    """Each launch is a kernel FN of its arity; each elementwise record names the FN its table
    entry really launches (read from the entry, not from the record) and the check compiles it."""
    from tritensor.ops.table import TABLE
    k = tb._kernels()
    for fn, compute, out, ins in signatures:
        assert fn in {1: k.elementwise.UNARY, 2: k.elementwise.BINARY, 3: k.elementwise.TERNARY}[len(ins)], (fn, ins)
    launched = {sig[0] for sig in signatures}
    for r in records:
        if r.reference != "table":
            continue
        table_fn = _table_launch_fn(TABLE[r.name])
        assert r.kernel_fn or table_fn is None, f"{r.name}: its entry launches {table_fn}, the record names none"
        if table_fn is not None:
            assert r.kernel_fn == table_fn, f"{r.name}: the record names {r.kernel_fn}, the entry launches {table_fn}"
        assert r.kernel_fn is None or r.kernel_fn in launched, f"{r.name}: {r.kernel_fn} is never compiled"


def test_compile_check_launches_every_elementwise_record():
    """The compile check's elementwise launches come from the op records, and the records name
    the FNs the table launches: a record naming another FN than its entry's (or none) fails, as
    the two broken copies below show."""
    import dataclasses
    from opinfo import OPS, RECORDS
    signatures = elementwise_signatures()
    _check_compile_launches(RECORDS, signatures)
    for broken in (dataclasses.replace(OPS["floor_divide"], kernel_fn="floor_divide"),
                   dataclasses.replace(OPS["clamp_min"], kernel_fn=None)):
        with pytest.raises(AssertionError):
            _check_compile_launches([broken], signatures)


@pytest.mark.skipif(os.environ.get("TRITENSOR_COMPILE_CHECK", "1") == "0", reason="TRITENSOR_COMPILE_CHECK=0")
@pytest.mark.parametrize("part", range(COMPILE_PARTS))
def test_kernels_compile_for_sm90(tmp_path, part):
    """The interpreter runs Python: some errors only show when Triton compiles (constexpr rules,
    what tl.reduce accepts, tl.dot block sizes ...). Compile a representative set of launch
    variants to sm_90 cubin in a fresh process (kernels here are already interpreted), no GPU needed."""
    import sm90
    reason = sm90.has_compiler()
    if reason:
        pytest.skip(reason)
    # each part compiles its share of the distinct variants (tests/sm90_compile.py); the static
    # facts of each, read off its cubin (tests/sm90.py): no spills, and the 16-byte accesses /
    # tensor-core instructions the launches marked with expect(...)
    counts, _ = sm90.check_compile(_COMPILE_SCRIPT, tmp_path, {
        "TRITENSOR_COMPILE_PART": str(part), "TRITENSOR_COMPILE_PARTS": str(COMPILE_PARTS),
        "TRITENSOR_COMPILE_RECORDS": json.dumps(elementwise_signatures())})
    assert (counts["part"], counts["parts"]) == (part, COMPILE_PARTS), counts
    # a fair share: every part sees all the variants and takes about 1/PARTS of them by hash
    assert counts["compiled"] > counts["variants"] / COMPILE_PARTS / 2, counts
