"""Every op in the table, on cpu and cuda, against its NumPy reference.

Inputs cover every dtype the op supports and awkward layouts: 0-d, size-0, size-1 dims, odd
sizes that cross kernel block boundaries, transposed, step-sliced and broadcast (stride 0)
operands, Python scalars on either side, NaN and inf.
"""
import math

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy
from tritensor.backends import numpy_ref
from tritensor.ops import TABLE
from tritensor.ops import elementwise as ew

ALL_DTYPES = [tt.bool, tt.int32, tt.int64, tt.float16, tt.bfloat16, tt.float32, tt.float64]
FLOATS = [tt.float16, tt.bfloat16, tt.float32, tt.float64]
NUMERIC = [tt.int32, tt.int64] + FLOATS

# op name -> (dtypes, domain) ; domain: "any", "positive" (log, sqrt ...), "small" (exp, pow)
UNARY = {
    "neg": (NUMERIC, "any"), "exp": (NUMERIC, "small"), "log": (NUMERIC, "positive"),
    "sin": (NUMERIC, "any"), "cos": (NUMERIC, "any"), "tanh": (NUMERIC, "any"),
    "relu": (NUMERIC, "any"), "sqrt": (NUMERIC, "positive"), "sigmoid": (NUMERIC, "any"),
    "abs": (NUMERIC, "any"),
    "sign": (NUMERIC, "any"), "exp2": (NUMERIC, "small"), "expm1": (NUMERIC, "small"),
    "log2": (NUMERIC, "positive"), "log10": (NUMERIC, "positive"), "log1p": (NUMERIC, "log1p"),
    "rsqrt": (NUMERIC, "positive"), "tan": (NUMERIC, "tan"), "erf": (NUMERIC, "any"),
    "silu": (FLOATS, "any"), "gelu": (FLOATS, "any"), "floor": (NUMERIC, "any"),
    "ceil": (NUMERIC, "any"), "round": (NUMERIC, "any"), "trunc": (NUMERIC, "any"),
    "logical_not": (NUMERIC, "any"), "bitwise_not": ([tt.int32, tt.int64], "any"),
    "isnan": (NUMERIC, "any"), "isinf": (NUMERIC, "any"), "isfinite": (NUMERIC, "any"),
}
BINARY = {
    "add": (ALL_DTYPES, "any"), "sub": (NUMERIC, "any"), "mul": (ALL_DTYPES, "any"),
    "div": (NUMERIC, "nonzero"), "pow": (FLOATS, "pow"), "maximum": (NUMERIC, "any"),
    "minimum": (NUMERIC, "any"), "eq": (ALL_DTYPES, "any"), "ne": (ALL_DTYPES, "any"),
    "lt": (NUMERIC, "any"), "le": (NUMERIC, "any"), "gt": (NUMERIC, "any"), "ge": (NUMERIC, "any"),
    "tanh_backward": (FLOATS, "any"), "relu_backward": (FLOATS, "any"),
    "div_trunc": (NUMERIC, "nonzero"), "div_floor": (NUMERIC, "nonzero"),
    "floor_divide": (NUMERIC, "nonzero"), "remainder": (NUMERIC, "nonzero"), "fmod": (NUMERIC, "nonzero"),
    "clamp_min": (NUMERIC, "any"), "clamp_max": (NUMERIC, "any"),
    "logical_and": (ALL_DTYPES, "any"), "logical_or": (ALL_DTYPES, "any"), "logical_xor": (ALL_DTYPES, "any"),
    "bitwise_and": ([tt.bool, tt.int32, tt.int64], "any"), "bitwise_or": ([tt.bool, tt.int32, tt.int64], "any"),
    "bitwise_xor": ([tt.bool, tt.int32, tt.int64], "any"),
    "sigmoid_backward": (FLOATS, "any"), "silu_backward": (FLOATS, "any"),
    "gelu_backward": (FLOATS, "any"), "erf_backward": (FLOATS, "any"),
}
# clamp, masked_fill and round(decimals=) (round_decimals): tests/test_elementwise.py
TERNARY = {"where", "clamp", "masked_fill"}
# pairwise distances and their backward ops: tests/test_pdist.py
PDIST = {"pdist", "pdist_backward", "cdist", "cdist_backward"}
# ops tested through their own suites (views: test_views; copies/reductions/backward helpers below)
OTHER = {"view", "permute", "transpose", "t", "expand", "squeeze", "unsqueeze", "basic_index",
         "slice_backward", "clone", "to_copy", "device_copy", "sum",
         # the recorded copy_/fill_/zero_: tests/test_elementwise.py (test_copy_fill_zero_record_torch_nodes)
         "overwrite",
         # reductions, scans and the softmax family: tests/test_reductions.py
         "prod", "amax", "amin", "argmax", "argmin", "cumsum", "cumprod", "softmax", "log_softmax", "count_nonzero",
         "softmax_backward", "log_softmax_backward", "round_decimals",
         # joining, splitting, flip, tril/triu and as_strided: tests/test_joining.py, test_copy_slices.py
         "cat", "stack", "split", "flip", "tril", "triu", "as_strided", "as_strided_backward",
         "as_strided_scatter",
         # matrix multiplication: tests/test_matmul.py
         "mm", "bmm", "matmul", "addmm", "baddbmm",
         # unfold, diagonal, diag_embed, diagonal_scatter: tests/test_parity_issue16.py
         "unfold", "diagonal", "diag_embed", "diagonal_scatter",
         # var (torch's var_backward as its own rule): tests/test_reductions.py, test_parity_issue16.py
         "var", "scatter_reduce", "nuclear_norm", "nuclear_norm_backward",
         # advanced indexing and the index ops: tests/test_indexing.py
         "index", "index_select", "index_put", "gather", "scatter", "scatter_add", "masked_select",
         # the fused nn ops (ops/nn.py): tests/test_nn_functional.py
         "layer_norm", "layer_norm_backward", "cross_entropy", "cross_entropy_backward"}

LAYOUTS = {
    "0d": lambda make: make(()),
    "empty": lambda make: make((0, 3)),
    "size1": lambda make: make((1, 5, 1)),
    "odd": lambda make: make((3, 67)),          # 201 elements: crosses the 128-element block
    "transposed": lambda make: make((9, 13)).t(),
    "sliced": lambda make: make((10, 31))[1::3, ::2],
    "broadcast": lambda make: make((17, 1)).expand(17, 11),
}


def _values(shape, dtype, domain, rng):
    if dtype is tt.bool:
        return rng.integers(0, 2, size=shape).astype(bool)
    if not dtype.is_floating_point:
        lo, hi = {"positive": (1, 20), "nonzero": (1, 9), "small": (-3, 4), "log1p": (0, 20),
                  "tan": (-3, 4)}.get(domain, (-20, 20))
        v = rng.integers(lo, hi, size=shape)
        if domain == "nonzero":
            v = v * rng.choice([-1, 1], size=shape)
        return v
    v = rng.standard_normal(shape) * 3
    if domain == "positive":
        v = np.abs(v) + 0.1
    elif domain == "small":
        v = v / 3
    elif domain == "nonzero":
        v = np.where(np.abs(v) < 0.1, 0.5, v)
    elif domain == "pow":
        v = np.abs(v) + 0.5
    elif domain == "log1p":     # (-1, inf), with values near 0 where log(1 + x) would lose digits
        v = np.where(np.abs(v) < 1.5, v * 1e-3, np.abs(v) - 0.9)
    elif domain == "tan":       # away from the poles at +-pi/2
        v = np.clip(v / 3, -1.4, 1.4)
    return v


def _make_factory(dtype, domain, device, rng):
    def make(shape):
        return tt.tensor(_values(shape, dtype, domain, rng), dtype=dtype, device=device)
    return make


def _tolerance(dtype):
    return {tt.float16: (2e-3, 1e-3), tt.bfloat16: (1.6e-2, 1e-2), tt.float32: (2e-5, 1e-6),
            tt.float64: (1e-10, 1e-12)}.get(dtype, (0, 0))


def _check(out, args, name):
    host_args = [a.detach().cpu() if isinstance(a, tt.Tensor) else a for a in args]
    compute = tt.float32 if out.dtype in (tt.float16, tt.bfloat16) else tt.result_type(*host_args)
    if out.dtype.is_floating_point and compute is not tt.float32 and not compute.is_floating_point:
        compute = out.dtype
    cast = [a._host_view().astype(compute.numpy_dtype) if isinstance(a, tt.Tensor) else a
            for a in host_args]
    with np.errstate(all="ignore"):
        expected = np.asarray(numpy_ref.elementwise(name)(*cast))
    got = to_numpy(out)
    assert got.shape == expected.shape
    if out.dtype is tt.bool:
        np.testing.assert_array_equal(got, expected.astype(bool))
    elif not out.dtype.is_floating_point:
        np.testing.assert_array_equal(got, expected.astype(got.dtype))
    else:
        rtol, atol = _tolerance(out.dtype)
        with np.errstate(all="ignore"):   # values past float16's range become inf, as in the op
            expected = expected.astype(out.dtype.numpy_dtype).astype(np.float64)
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)


def _call(name, *args):
    fn = getattr(ew, name)
    return fn(*args)


def test_every_op_in_the_table_is_specified_here():
    covered = set(UNARY) | set(BINARY) | TERNARY | OTHER | PDIST
    assert set(TABLE) <= covered, f"ops without a parity test: {sorted(set(TABLE) - covered)}"


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dtype", NUMERIC, ids=str)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary(name, dtype, layout, device):
    dtypes, domain = UNARY[name]
    if dtype not in dtypes:
        pytest.skip("dtype not supported by this op")
    rng = np.random.default_rng(abs(hash((name, str(dtype), layout))) % 2**32)
    x = LAYOUTS[layout](_make_factory(dtype, domain, device, rng))
    out = _call(name, x)
    assert out.device == x.device and out.shape == x.shape
    _check(out, (x,), name)


@pytest.mark.parametrize("layout", ["0d", "empty", "odd", "transposed", "sliced", "broadcast"])
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary(name, dtype, layout, device):
    dtypes, domain = BINARY[name]
    if dtype not in dtypes:
        pytest.skip("dtype not supported by this op")
    rng = np.random.default_rng(abs(hash((name, str(dtype), layout))) % 2**32)
    make = _make_factory(dtype, domain, device, rng)
    x = LAYOUTS[layout](make)
    y = LAYOUTS[layout](make)
    _check(_call(name, x, y), (x, y), name)


@pytest.mark.parametrize("dtype", NUMERIC, ids=str)
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "lt", "eq"])
def test_binary_broadcasting_and_mixed_layouts(name, dtype, device):
    """A (5, 1, 7) transposed view against a (3, 1) slice and a 0-d tensor: all broadcast."""
    rng = np.random.default_rng(1)
    make = _make_factory(dtype, "nonzero", device, rng)
    a = make((7, 1, 5)).permute(2, 1, 0)          # (5, 1, 7), non-contiguous
    b = make((6, 1))[::2]                         # (3, 1), stride 2
    out = _call(name, a, b)
    assert out.shape == (5, 3, 7)
    _check(out, (a, b), name)
    c = make(())
    _check(_call(name, a, c), (a, c), name)


@pytest.mark.parametrize("scalar", [2, -3, 2.5, True])
@pytest.mark.parametrize("dtype", [tt.int32, tt.int64, tt.float16, tt.float32], ids=str)
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow"])
def test_python_scalars_either_side(name, dtype, scalar, device):
    if name == "sub" and scalar is True:
        pytest.skip("bool scalar subtraction is rejected (tested in errors)")
    if name == "pow" and not dtype.is_floating_point and (isinstance(scalar, float) or scalar < 0):
        pytest.skip("integer power rules tested separately")
    rng = np.random.default_rng(2)
    x = _make_factory(dtype, "pow" if name == "pow" else "nonzero", device, rng)((4, 33))
    for args in ((x, scalar), (scalar, x)):
        if name == "pow" and not isinstance(args[0], tt.Tensor) and not dtype.is_floating_point:
            continue
        out = _call(name, *args)
        assert out.dtype is tt.result_type(*args) or name == "div"
        _check(out, args, name)


def test_result_types_follow_torch(device):
    i32 = tt.ones(3, dtype=tt.int32, device=device)
    i64 = tt.ones(3, dtype=tt.int64, device=device)
    f16 = tt.ones(3, dtype=tt.float16, device=device)
    f32 = tt.ones(3, device=device)
    b = tt.ones(3, dtype=tt.bool, device=device)
    assert (i32 + 2.5).dtype is tt.float32          # int tensor with a float scalar
    assert (i32 + i64).dtype is tt.int64
    assert (f16 + f32).dtype is tt.float32
    assert (f16 + 2.5).dtype is tt.float16          # a scalar doesn't widen within its category
    assert (i32 / i32).dtype is tt.float32          # true division of ints is float
    assert (b + b).dtype is tt.bool
    assert (b * 2).dtype is tt.int64
    assert (i32 + tt.tensor(5, device=device)).dtype is tt.int32   # 0-d doesn't widen either
    assert (i32 + tt.tensor(5.0, dtype=tt.float64, device=device)).dtype is tt.float64  # higher category: its type
    assert i32.exp().dtype is tt.float32


def test_nan_and_inf(device):
    vals = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.0, -2.0]
    x = tt.tensor(vals, device=device)
    y = tt.tensor(vals[::-1], device=device)
    for name in ["exp", "log", "tanh", "relu", "sqrt", "sigmoid", "neg", "abs", "sin"]:
        _check(_call(name, x), (x,), name)
    for name in ["add", "mul", "div", "maximum", "minimum", "pow", "eq", "lt"]:
        _check(_call(name, x, y), (x, y), name)
    assert math.isnan(tt.maximum(x, y)[0].item())   # NaN propagates like torch


def test_where_with_tensors_and_scalars(device):
    rng = np.random.default_rng(3)
    cond = tt.tensor(rng.integers(0, 2, (4, 1)).astype(bool), device=device)
    a = tt.tensor(rng.standard_normal((4, 37)), dtype=tt.float32, device=device)
    b = tt.tensor(rng.standard_normal((37,)), dtype=tt.float64, device=device)
    out = tt.where(cond, a, b)
    assert out.dtype is tt.float64 and out.shape == (4, 37)
    np.testing.assert_allclose(to_numpy(out), np.where(to_numpy(cond), to_numpy(a), to_numpy(b)), rtol=1e-7)
    out2 = tt.where(cond, a, 0.0)
    np.testing.assert_allclose(to_numpy(out2), np.where(to_numpy(cond), to_numpy(a), 0.0), rtol=1e-7)


@pytest.mark.parametrize("src", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("dst", ALL_DTYPES, ids=str)
def test_casts(src, dst, device):
    vals = np.array([0, 1, -2.7, 3.9, 100.5, -0.0, 7])
    if src is tt.bool:
        vals = vals != 0
    elif not src.is_floating_point:
        vals = np.trunc(vals)
    x = tt.tensor(vals, dtype=src, device=device)[::2]      # strided source
    out = x.to(dst)
    assert out.dtype is dst
    base = to_numpy(x).astype(np.float64) if src is not tt.bool else to_numpy(x)
    expected = (base != 0) if dst is tt.bool else (
        np.trunc(base) if not dst.is_floating_point else base.astype(dst.numpy_dtype))
    np.testing.assert_allclose(to_numpy(out).astype(np.float64), np.asarray(expected, np.float64),
                               rtol=1e-2 if dst in (tt.float16, tt.bfloat16) else 0)


@pytest.mark.parametrize("dims", [None, 0, 1, -1, (0, 2), (1, 2)])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dtype", [tt.bool, tt.int32, tt.float16, tt.bfloat16, tt.float32, tt.float64], ids=str)
def test_sum(dims, keepdim, dtype, device):
    rng = np.random.default_rng(4)
    x = _make_factory(dtype, "any", device, rng)((5, 3, 70)).transpose(0, 2)    # (70, 3, 5), non-contiguous
    out = x.sum(dims, keepdim=keepdim) if dims is not None else x.sum()
    axis = None if dims is None else dims
    expected = to_numpy(x).astype(np.float64).sum(axis=axis, keepdims=keepdim and dims is not None)
    assert out.dtype is (tt.int64 if not dtype.is_floating_point else dtype)
    rtol = {tt.float16: 2e-3, tt.bfloat16: 1e-2}.get(dtype, 1e-5)
    np.testing.assert_allclose(to_numpy(out).astype(np.float64), expected, rtol=rtol, atol=rtol)


def test_sum_edge_cases(device):
    assert tt.zeros(0, device=device).sum().item() == 0              # the sum of nothing is 0
    assert to_numpy(tt.ones(3, 0, device=device).sum(1)).tolist() == [0, 0, 0]
    assert tt.tensor(2.5, device=device).sum().item() == 2.5          # 0-d
    assert math.isnan(tt.zeros(0, device=device).mean().item())
    x = tt.arange(12, dtype=tt.float32, device=device).view(3, 4)
    np.testing.assert_allclose(to_numpy(x.mean(1)), [1.5, 5.5, 9.5])


@pytest.mark.parametrize("dtype", [tt.float16, tt.bfloat16, tt.float32, tt.float64], ids=str)
def test_random_fills_every_element(dtype, device):
    tt.manual_seed(5)
    x = tt.empty(3, 100, dtype=dtype, device=device)
    x.fill_(float("nan"))
    x[:, ::3].uniform_(2.0, 3.0)       # strided target
    v = to_numpy(x)
    picked = v[:, ::3]
    assert np.all((picked >= 2.0) & (picked <= 3.0))
    assert np.isnan(v[:, 1::3]).all()
