"""Reductions, scans and the softmax family (issue 4), on cpu and cuda, against NumPy.

Inputs are non-contiguous (transposed, step-sliced) and large enough to cross the emulated
kernels' blocks (reduce tile 64, softmax chunks of 32, scan chunks of 16)."""
import math

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy
from tritensor.autograd import gradcheck, gradgradcheck

FLOATS = [tt.float16, tt.bfloat16, tt.float32, tt.float64]
RTOL = {tt.float16: 4e-3, tt.bfloat16: 2e-2, tt.float32: 2e-5, tt.float64: 1e-10}


def _x(dtype, device, shape=(6, 5, 70), seed=0, nan=False):
    """A (70, 5, 6) non-contiguous view (a permutation of a (6, 5, 70) tensor)."""
    rng = np.random.default_rng(seed)
    if dtype is tt.bool:
        v = rng.integers(0, 2, size=shape).astype(bool)
    elif not dtype.is_floating_point:
        v = rng.integers(-5, 6, size=shape)
    else:
        v = rng.standard_normal(shape)
        if nan:
            v[1, 2, 9] = np.nan
    return tt.tensor(v, dtype=dtype, device=device).permute(2, 1, 0)


def _close(got, expected, dtype, scale=1.0):
    got = to_numpy(got).astype(np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape
    if dtype.is_floating_point:
        rtol = RTOL[dtype] * scale
        with np.errstate(all="ignore"):      # values past float16's range are inf in the op too
            expected = expected.astype(dtype.numpy_dtype).astype(np.float64)
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, expected)


def _np(x):
    return to_numpy(x).astype(np.float64)


DIMS = [None, 0, -1, (0, 2), (2, 0, 1)]


@pytest.mark.parametrize("dims", DIMS, ids=str)
@pytest.mark.parametrize("dtype", [tt.int32, tt.float16, tt.bfloat16, tt.float32, tt.float64], ids=str)
@pytest.mark.parametrize("name", ["prod", "amax", "amin"])
def test_reduce_ops(name, dtype, dims, device):
    x = _x(dtype, device)
    if name == "prod" and dtype.is_floating_point:
        x = x.abs() * 0.05 + 0.99          # keep the product of 70 values finite
    keepdim = isinstance(dims, tuple)
    fn = getattr(x, name)
    if name == "prod" and keepdim:
        # torch's prod takes one int dim; the kernel (and prod's backward) reduce any set of dims
        with pytest.raises(TypeError, match=r"prod\(\): argument 'dim' \(position 1\) must be int, not tuple"):
            fn(dims)
        from tritensor.ops.dispatch import dispatch
        from tritensor.ops.reduce import PROD, normalize_dims
        out = dispatch(PROD, x, dims=normalize_dims(x, dims), keepdim=True, dtype=None, dim_given=True)
    else:
        out = fn() if dims is None else fn(dims, keepdim=keepdim)
    axis = None if dims is None else dims
    ref = {"prod": np.prod, "amax": np.max, "amin": np.min}[name]
    expected = ref(_np(x), axis=axis, keepdims=keepdim and dims is not None)
    if name == "prod":
        assert out.dtype is (tt.int64 if not dtype.is_floating_point else dtype)
    else:
        assert out.dtype is dtype
    _close(out, expected, dtype, scale=8 if name == "prod" else 1)


@pytest.mark.parametrize("dim", [None, 0, 1, -1])
@pytest.mark.parametrize("dtype", [tt.bool, tt.int64, tt.float16, tt.float32, tt.float64], ids=str)
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin(name, dtype, dim, device):
    keepdim = dim in (None, 1)
    x = _x(dtype, device, nan=True)
    if dtype is tt.bool:
        # torch refuses bools in argmax/argmin, but max/min(dim) of bools give the same indices
        with pytest.raises(RuntimeError, match=rf"^{name}\(\): does not support bool input$"):
            getattr(tt, name)(x, dim, keepdim)
        if dim is None:
            return
        out = getattr(tt, name[3:])(x, dim, keepdim).indices
    else:
        out = getattr(tt, name)(x, dim, keepdim)
    a = to_numpy(x)
    fn = getattr(np, name)
    if dim is None:
        expected = fn(a.reshape(-1))
        expected = np.reshape(expected, (1,) * a.ndim) if keepdim else expected
    else:
        expected = fn(a, axis=dim, keepdims=keepdim)
    assert out.dtype is tt.int64
    np.testing.assert_array_equal(to_numpy(out), expected)


def test_argmax_ties_and_nan(device):
    x = tt.tensor([[1.0, 3.0, 3.0, float("nan"), float("nan")], [2.0] * 5,
                   [-math.inf] * 5], device=device)
    assert to_numpy(x.argmax(1)).tolist() == [3, 0, 0]
    assert to_numpy(x.argmin(1)).tolist() == [3, 0, 0]
    assert x.argmax().item() == 3
    v, i = x.max(1)
    assert math.isnan(to_numpy(v)[0]) and to_numpy(i).tolist() == [3, 0, 0]
    assert math.isnan(x.amax().item()) and math.isnan(x.max().item())


@pytest.mark.parametrize("dtype", [tt.int32, tt.float16, tt.float32], ids=str)
def test_max_min_with_dim(dtype, device):
    x = _x(dtype, device)
    for name in ("max", "min"):
        for keepdim in (False, True):
            r = getattr(x, name)(1, keepdim=keepdim)
            assert type(r).__name__ == name and r.values is r[0] and r.indices is r[1]
            a = to_numpy(x)
            _close(r.values, getattr(np, "a" + name)(a, axis=1, keepdims=keepdim), dtype)
            np.testing.assert_array_equal(to_numpy(r.indices), getattr(np, "arg" + name)(a, axis=1, keepdims=keepdim))
    assert tt.max(x).item() == np.max(to_numpy(x))
    y = tt.max(x, tt.zeros_like(x))                 # max(a, b) is maximum
    _close(y, np.maximum(to_numpy(x), 0), dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_var_std_mean_norm_logsumexp(dtype, device):
    x = _x(dtype, device)
    a = _np(x)
    s = 4
    _close(x.var(0), a.var(0, ddof=1), dtype, s)
    _close(x.var((0, 2), keepdim=True, correction=0), a.var((0, 2), keepdims=True), dtype, s)
    _close(x.std(1, unbiased=False), a.std(1), dtype, s)
    _close(tt.std(x), a.std(ddof=1), dtype, s)
    _close(x.mean(-1, dtype=tt.float64), a.mean(-1), tt.float64, 1e6)
    _close(x.norm(), np.sqrt((a * a).sum()), dtype, s)
    _close(x.norm(1, dim=0), np.abs(a).sum(0), dtype, s)
    _close(x.norm(math.inf, dim=(1, 2), keepdim=True), np.abs(a).max((1, 2), keepdims=True), dtype, s)
    _close(x.norm(3, dim=1), (np.abs(a) ** 3).sum(1) ** (1 / 3), dtype, s)
    _close(x.norm("fro", dim=(0, 1)), np.sqrt((a * a).sum((0, 1))), dtype, s)
    for v in (x.var(0), x.norm(), x.logsumexp(0)):
        assert v.dtype is dtype
    m = a.max(0, keepdims=True)
    _close(x.logsumexp(0), np.log(np.exp(a - m).sum(0)) + m[0], dtype, s)
    _close(x.logsumexp((1, 2), keepdim=True), np.log(np.exp(a).sum((1, 2), keepdims=True)), dtype, s)


def test_logsumexp_extremes(device):
    x = tt.tensor([[1000.0, 1000.0], [-math.inf, -math.inf], [-1000.0, 0.0]], device=device)
    out = to_numpy(x.logsumexp(1))
    np.testing.assert_allclose(out, [1000 + math.log(2), -math.inf, 0.0], rtol=1e-6)
    assert tt.zeros(0, device=device).logsumexp(0).item() == -math.inf


@pytest.mark.parametrize("dtype", [tt.bool, tt.int32, tt.float32], ids=str)
def test_all_any_count_nonzero(dtype, device):
    x = _x(dtype, device)
    a = to_numpy(x)
    np.testing.assert_array_equal(to_numpy(x.all(1)), a.all(1))
    np.testing.assert_array_equal(to_numpy(x.any((0, 2), keepdim=True)), a.any((0, 2), keepdims=True))
    assert x.all().dtype is tt.bool and x.all().item() == a.all()
    np.testing.assert_array_equal(to_numpy(x.count_nonzero(0)), np.count_nonzero(a, 0))
    assert tt.count_nonzero(x).item() == np.count_nonzero(a)
    assert tt.zeros(0, device=device).all().item() is True
    assert tt.zeros(0, device=device).any().item() is False


@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("dtype", [tt.bool, tt.int32, tt.float16, tt.bfloat16, tt.float32, tt.float64], ids=str)
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_scans(name, dtype, dim, device):
    x = _x(dtype, device, shape=(3, 4, 37))[::2]   # (19, 4, 3): sliced and permuted
    if name == "cumprod" and dtype.is_floating_point:
        x = x.abs() * 0.1 + 0.95
    out = getattr(x, name)(dim)
    a = to_numpy(x).astype(np.float64) if dtype.is_floating_point else to_numpy(x).astype(np.int64)
    expected = getattr(np, name)(a, axis=dim)
    assert out.dtype is (tt.int64 if not dtype.is_floating_point else dtype)
    _close(out, expected, dtype, scale=4)
    out2 = getattr(tt, name)(x, dim, dtype=tt.float64)
    assert out2.dtype is tt.float64
    _close(out2, expected, tt.float32 if dtype.is_floating_point else tt.float64, 1e2)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_family(name, dtype, dim, device):
    x = _x(dtype, device, nan=(dim == 0)) * 3
    out = getattr(x, name)(dim)
    a = _np(x)
    m = np.max(a, axis=dim, keepdims=True)
    e = np.exp(a - m)
    s = e.sum(axis=dim, keepdims=True)
    expected = e / s if name == "softmax" else (a - m) - np.log(s)
    assert out.dtype is dtype and out.shape == x.shape
    _close(out, expected, dtype, 4)
    fn = getattr(tt.nn.functional, name)
    _close(fn(x, dim=dim, dtype=tt.float64), expected, tt.float32)


def test_softmax_extremes(device):
    x = tt.tensor([[-math.inf] * 3, [0.0, -math.inf, 1.0], [math.inf, 0.0, 0.0], [1e4, 1e4, -1e4]], device=device)
    s = to_numpy(x.softmax(1))
    assert np.isnan(s[0]).all()
    np.testing.assert_allclose(s[1], [1 / (1 + math.e), 0, math.e / (1 + math.e)], rtol=1e-6)
    np.testing.assert_allclose(s[3], [0.5, 0.5, 0.0])
    ls = to_numpy(x.log_softmax(1))
    assert ls[1, 1] == -math.inf
    assert tt.tensor(2.0, device=device).softmax(0).item() == 1.0        # 0-d
    assert tt.zeros(3, 0, device=device).softmax(1).shape == (3, 0)


def test_softmax_long_rows_cross_many_chunks(device):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 300)) * 10
    a[:, 250] = 60                     # the max arrives late: the running sum is rescaled
    x = tt.tensor(a, dtype=tt.float32, device=device)
    e = np.exp(a - a.max(1, keepdims=True))
    np.testing.assert_allclose(to_numpy(x.softmax(-1)), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_errors_follow_torch(device):
    e = tt.zeros(0, 3, device=device)
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified for "
                       r"input.numel\(\) == 0. Specify the reduction dim with the 'dim' argument."):
        e.max()
    with pytest.raises(IndexError, match=r"amax\(\): Expected reduction dim 0 to have non-zero size."):
        e.amax(0)
    with pytest.raises(RuntimeError, match=r"amax\(\): Expected reduction dim to be specified for "
                       r"input.numel\(\) == 0. Specify the reduction dim with the 'dim' argument."):
        tt.zeros(0, device=device).amax()
    with pytest.raises(IndexError, match="max"):
        e.max(0)
    with pytest.raises(IndexError, match=r"^argmax\(\): Expected reduction dim to be specified for "
                       r"input.numel\(\) == 0.$"):
        e.argmax()
    assert e.amax(1).shape == (0,) and e.max(1).indices.shape == (0,)
    assert e.sum().item() == 0 and e.prod().item() == 1
    with pytest.raises(IndexError, match="Dimension out of range"):
        tt.ones(3, device=device).sum(1)
    with pytest.raises(RuntimeError, match="appears multiple times"):
        tt.ones(3, 3, device=device).amax((0, -2))


def test_zero_dim_inputs(device):
    x = tt.tensor(-2.5, device=device)
    for name in ("sum", "prod", "amax", "amin", "mean", "logsumexp" ):
        fn = getattr(x, name)
        assert (fn(0) if name == "logsumexp" else fn()).item() == -2.5
    assert x.argmax().item() == 0 and x.argmax(0).item() == 0
    v, i = x.max(0)
    assert v.item() == -2.5 and i.item() == 0
    assert x.cumsum(0).item() == -2.5 and x.cumprod(0).item() == -2.5


def test_deterministic(device):
    x = tt.randn(9, 100, device=device) * 1000
    for fn in (lambda: x.sum(), lambda: x.sum(0), lambda: x.softmax(1), lambda: x.cumsum(1),
               lambda: x.t().logsumexp(1), lambda: x.var(1)):
        a, b = to_numpy(fn()), to_numpy(fn())
        assert a.tobytes() == b.tobytes()


def test_half_precision_accumulates_in_float32(device):
    x = tt.full((4096,), 1.0, dtype=tt.float16, device=device) * 0.1   # 2048 would stall a float16 sum
    assert abs(x.sum().item() - 409.6) < 0.5
    assert abs(x.cumsum(0)[-1].item() - 409.6) < 0.5


# ------------------------------------------------------------------ gradients of composites
def _r(shape, device, seed=0):
    return tt.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=tt.float64, device=device,
                     requires_grad=True)


GRAD_CASES = {
    "mean": lambda x: x.mean(1) + x.mean(),
    "var": lambda x: x.var(0) + x.var(1, correction=0).sum(),
    "std": lambda x: x.std(1, keepdim=True),
    "norm": lambda x: x.norm() + x.norm(1, dim=0).sum() + x.norm(3, dim=1).sum(),
    "norm_inf": lambda x: x.norm(math.inf, dim=1),
    "norm_p_below_1": lambda x: x.norm(0.5, dim=1) + x.norm(-1.5),
    "logsumexp": lambda x: x.logsumexp(1) + x.logsumexp((0, 1)),
    "max_dim": lambda x: x.max(1).values + x.min(0, keepdim=True).values.sum(),
    "max_all": lambda x: x.max() + x.min(),
    "prod_zero": lambda x: (x * tt.tensor([[1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0], [1.0] * 4],
                                          dtype=tt.float64, device=x.device)).prod(1),
    "softmax_dtype": lambda x: tt.nn.functional.log_softmax(x, dim=0) * 2,
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_composite_gradients(name, device):
    x = _r((3, 4), device)
    assert gradcheck(GRAD_CASES[name], (x,))
    # second derivatives: the primitives' own gradgradchecks run on both devices
    if device == "cpu" and name not in ("norm_inf", "max_all", "max_dim"):
        assert gradgradcheck(GRAD_CASES[name], (x,))


def test_amax_splits_ties_evenly_and_max_dim_goes_to_the_index(device):
    x = tt.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], device=device, requires_grad=True)
    x.amax(1).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [[0, 0.5, 0.5], [1 / 3] * 3])
    x.grad = None
    x.max(1).values.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [[0, 1, 0], [1, 0, 0]])
    x.grad = None
    x.max().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [[0, 0.5, 0.5], [0, 0, 0]])


def test_softmax_create_graph(device):
    x = _r((2, 5), device)
    y = x.softmax(1)
    assert y.grad_fn.name() == "SoftmaxBackward0"
    (g,) = tt.autograd.grad((y * y).sum(), x, create_graph=True)
    assert g.grad_fn is not None
    g.sum().backward()
    assert x.grad is not None


def test_norm_gradient_at_zero_is_zero_as_in_torch(device):
    x = tt.tensor([[3.0, 4.0], [0.0, 0.0]], dtype=tt.float64, device=device, requires_grad=True)
    n = tt.norm(x, dim=1)
    np.testing.assert_allclose(to_numpy(n), [5.0, 0.0])
    n.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [[0.6, 0.8], [0.0, 0.0]])   # no NaN at the zero row


def test_cumprod_gradient_with_zeros(device):
    # out = [1, 2, 0, 0]; d sum(out) / dx_i = sum over j >= i of the product of x_k, k <= j, k != i
    x = tt.tensor([1.0, 2.0, 0.0, 3.0], dtype=tt.float64, device=device, requires_grad=True)
    x.cumprod(0).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [3.0, 1.0, 8.0, 0.0])
    # lines with no zero, one zero, a zero first, two zeros; along both dims; first and second
    # derivatives (a zero's second derivative reaches the positions after it)
    v = tt.tensor([[1.5, 0.0, 2.0, 0.0, 3.0], [0.5, 2.0, 0.0, 1.2, -1.0], [1.1, 1.2, 1.3, -0.7, 0.9],
                   [0.0, 0.8, 1.4, 0.0, 0.0]], dtype=tt.float64, device=device, requires_grad=True)
    if device != "cpu":   # the same rule of ops; emulated cuda checks a smaller case, first order
        assert gradcheck(lambda t: t.cumprod(1), (v[:2, 1:].detach().requires_grad_(),))
        return
    for dim in (0, 1):
        assert gradcheck(lambda t: t.cumprod(dim), (v,))
        assert gradgradcheck(lambda t: t.cumprod(dim), (v,))


def test_argmax_over_many_chunks_keeps_the_first_winner(device):
    # long enough that the whole-tensor argmax runs in two passes over chunks (on cuda)
    a = np.zeros((3, 1000), np.float32)
    a[0, 700] = a[2, 10] = a[1, 5] = 5.0          # ties in different chunks: the first one wins
    x = tt.tensor(a, device=device)
    assert x.argmax().item() == 700 and x.argmin().item() == 0
    np.testing.assert_array_equal(to_numpy(x.argmax(1)), [700, 5, 10])
    a[2, 999] = np.nan                             # NaN in the last chunk beats every number
    x = tt.tensor(a, device=device)
    assert x.argmax().item() == 2999 and x.argmin().item() == 2999
    assert x.t().argmax().item() == np.argmax(a.T)  # transposed, read in place


@pytest.mark.parametrize("dtype", [tt.float16, tt.bfloat16, tt.float32, tt.float64, tt.int8], ids=str)
def test_all_any_count_nonzero_test_the_values_not_a_cast(dtype, device):
    # 0.25 and -0.5 are nonzero (a cast to an integer first would lose them); NaN is truthy
    vals = [[0.25, 0.0, float("nan")], [0.0, 0.0, -0.5], [1.0, 2.0, 3.0]]
    if not dtype.is_floating_point:
        vals = [[1, 0, -3], [0, 0, -1], [1, 2, 3]]
    x = tt.tensor(vals, dtype=dtype, device=device)
    np.testing.assert_array_equal(to_numpy(x.count_nonzero(1)), [2, 1, 3])
    np.testing.assert_array_equal(to_numpy(x.any(1)), [True, True, True])
    np.testing.assert_array_equal(to_numpy(x.all(1)), [False, False, True])
    np.testing.assert_array_equal(to_numpy(x.t().all(0, keepdim=True)), [[False, False, True]])
    assert x.count_nonzero().item() == 6 and x.any().item() and not x.all().item()
    assert tt.count_nonzero(tt.tensor(0.5, device=device)).item() == 1


# ------------------------------------------------------------------ torch's behaviour at the edges
# (found by a differential audit against PyTorch; the expected values are torch's, written out)
def test_argument_checks_follow_torch(device):
    x = tt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=device)
    for call, name in ((lambda: x.argmax((0, 1)), "argmax"), (lambda: x.cumsum((0,)), "cumsum"),
                       (lambda: x.prod((0, 1)), "prod"), (lambda: tt.softmax(x, (1,)), "softmax")):
        with pytest.raises(TypeError, match=rf"^{name}\(\): argument 'dim' \(position 1\) must be int, not tuple"):
            call()
    with pytest.raises(TypeError, match=r"^max\(\) received an invalid combination of arguments - got \(tuple\)"):
        x.max((0, 1))
    with pytest.raises(TypeError, match="softmax"):
        x.softmax()                                   # dim is required outside F.softmax
    with pytest.raises(RuntimeError, match=r"^mean\(\): could not infer output dtype. Optional dtype must be "
                       r"either a floating point or complex dtype. Got: Long$"):
        x.mean(dtype=tt.int64)
    with pytest.raises(RuntimeError, match=r"^mean\(\): could not infer output dtype. Input dtype must be "
                       r"either a floating point or complex dtype. Got: Int$"):
        x.int().mean()
    with pytest.raises(NotImplementedError, match=r"^\"cumsum_out_cpu\" not implemented for 'Bool'$"):
        x.cumsum(0, dtype=tt.bool)
    with pytest.raises(NotImplementedError, match=r"^\"cumprod_out_cpu\" not implemented for 'Bool'$"):
        x.cumprod(1, dtype=tt.bool)
    with pytest.raises(TypeError, match=r"^var\(\) received an invalid combination"):
        x.var(1, unbiased=True, correction=1)
    with pytest.raises(TypeError, match=r"^std\(\) received an invalid combination"):
        x.std(1, unbiased=False, correction=0)
    with pytest.warns(UserWarning, match=r"^std\(\): degrees of freedom is <= 0"):
        v = x.std(1, correction=3)                    # 3 - 3 = 0 degrees of freedom: inf, as in torch
    assert to_numpy(v).tolist() == [math.inf, math.inf]


def test_softmax_of_integers_and_implicit_dim(device):
    i = tt.tensor([[1, 2], [3, 4]], device=device)
    with pytest.raises(NotImplementedError, match=r"^\"softmax_lastdim_kernel_impl\" not implemented for 'Long'$"):
        i.softmax(-1)
    with pytest.raises(NotImplementedError, match=r"^\"log_softmax_kernel_impl\" not implemented for 'Long'$"):
        i.log_softmax(0)
    with pytest.raises(NotImplementedError, match="'Bool'"):
        tt.softmax(i.float(), 1, dtype=tt.bool)
    e = tt.zeros(0, 3, dtype=tt.int64, device=device).softmax(0)     # nothing to compute, no error
    assert e.dtype is tt.int64 and e.shape == (0, 3)
    np.testing.assert_allclose(to_numpy(tt.nn.functional.softmax(i, 1, dtype=tt.float64)),
                               [[1 / (1 + math.e), math.e / (1 + math.e)]] * 2, rtol=1e-12)
    x = tt.tensor([[0.0, math.log(3.0)], [0.0, 0.0]], device=device)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax has been deprecated"):
        s = tt.nn.functional.softmax(x)               # 2-d: dim 1, as torch picks
    np.testing.assert_allclose(to_numpy(s), [[0.25, 0.75], [0.5, 0.5]], rtol=1e-6)
    with pytest.warns(UserWarning, match="log_softmax"):
        ls = tt.nn.functional.log_softmax(x[0])       # 1-d: dim 0
    np.testing.assert_allclose(to_numpy(ls), np.log([0.25, 0.75]), rtol=1e-6)


def test_all_any_keep_uint8_and_reduce_nothing_over_empty_dims(device):
    u = tt.tensor([[0, 3], [1, 2]], dtype=tt.uint8, device=device)
    for r, expected in ((u.all(1), [0, 1]), (u.any(0), [1, 1]), (u.all(), 0), (tt.any(u, 1, keepdim=True), [[1], [1]])):
        assert r.dtype is tt.uint8
        np.testing.assert_array_equal(to_numpy(r), expected)
    f = tt.tensor([[0.0, float("nan")], [-1.0, 0.0]], device=device)
    for r in (f.all(()), f.any(dim=[]), tt.all(f, ())):     # torch: dim=() reduces nothing here
        assert r.dtype is tt.bool and r.shape == (2, 2)
        np.testing.assert_array_equal(to_numpy(r), [[False, True], [True, False]])
    assert u.all(()).dtype is tt.uint8
    assert f.count_nonzero(()).item() == 2 and f.sum(()).shape == ()    # these do reduce everything


def test_max_min_forms(device):
    x = tt.tensor([[1.0, 5.0], [7.0, -2.0]], device=device)
    y = tt.tensor([[3.0, 0.0], [9.0, -3.0]], device=device)
    np.testing.assert_array_equal(to_numpy(tt.min(x, other=y)), [[1, 0], [7, -3]])
    np.testing.assert_array_equal(to_numpy(tt.max(x, y)), [[3, 5], [9, -2]])
    r = x.max(dim=1)
    assert type(r).__module__ == "tritensor.return_types" and isinstance(r, tuple)
    assert repr(r) == f"tritensor.return_types.max(\nvalues={r.values!r},\nindices={r.indices!r})"
    v, i = tt.tensor([[True, False], [False, False]], device=device).max(1)   # bools: max(dim) is fine
    assert v.dtype is tt.bool and to_numpy(v).tolist() == [True, False] and to_numpy(i).tolist() == [0, 0]


def test_norm_arguments_follow_torch(device):
    x = tt.tensor([[3.0, -4.0], [0.0, 1.0]], device=device)
    np.testing.assert_allclose(to_numpy(x.norm(None, 1)), [5.0, 1.0])          # p=None is the 2-norm
    np.testing.assert_allclose(to_numpy(x.norm("fro", dim=1)), [5.0, 1.0])
    with pytest.raises(RuntimeError, match=r"^linalg.vector_norm: Expected a floating point or complex tensor "
                       r"as input. Got Long$"):
        x.long().norm(dtype=tt.float64)                # checked before the cast, as in torch
    with pytest.raises(RuntimeError, match=r"the dtype of the input \(Double\) should be convertible without "
                       r"narrowing to the specified dtype \(Float\)"):
        x.double().norm(dtype=tt.float32)
    assert x.norm(dtype=tt.float64).dtype is tt.float64
    with pytest.raises(RuntimeError, match=r"^linalg.matrix_norm: Order abc not supported.$"):
        x.norm("abc")
    # the nuclear norm exists now (issue 16): its values, gradient and errors in test_parity_issue16.py
    np.testing.assert_allclose(x.norm("nuc").item(), np.linalg.svd(to_numpy(x), compute_uv=False).sum(), rtol=1e-6)
    e = tt.zeros(0, 3, device=device)
    with pytest.raises(RuntimeError, match=r"^linalg.vector_norm cannot compute the inf norm on an empty tensor "
                       r"because the operation does not have an identity$"):
        e.norm(math.inf)
    with pytest.raises(RuntimeError, match=r"cannot compute the -1 norm on the dimension 0because this "
                       r"dimension is empty"):
        e.norm(-1, 0)
    assert e.norm(-1, 1).shape == (0,) and e.norm(2).item() == 0 and e.norm(math.inf, 1).shape == (0,)


def test_gradients_at_zero_follow_torch(device):
    f64 = dict(dtype=tt.float64, device=device, requires_grad=True)
    # p-norms: the derivative of |x|^p at 0 and of the root at a zero norm are taken as 0
    z = tt.tensor([[0.0, 0.0], [3.0, -4.0]], **f64)
    z.norm(3, 1).sum().backward()
    n = 91 ** (1 / 3)
    np.testing.assert_allclose(to_numpy(z.grad), [[0, 0], [9 / n ** 2, -16 / n ** 2]], rtol=1e-12)
    z = tt.tensor([[0.0, 4.0], [1.0, 0.0]], **f64)
    z.norm(0.5, 1).sum().backward()
    np.testing.assert_allclose(to_numpy(z.grad), [[0, 1], [1, 0]], rtol=1e-12)
    z = tt.tensor([[0.0, 2.0], [1.0, 4.0]], **f64)
    out = z.norm(-1, 1)                               # a zero makes the -1 norm 0
    np.testing.assert_allclose(to_numpy(out), [0.0, 0.8], rtol=1e-12)
    out.sum().backward()
    np.testing.assert_allclose(to_numpy(z.grad), [[0, 0], [0.64, 0.04]], rtol=1e-12)
    z = tt.tensor([[0.0, 2.0], [1.0, 4.0]], **f64)
    out = z.norm(0)                                   # differentiable, with a zero gradient
    assert out.item() == 3.0
    out.backward()
    np.testing.assert_array_equal(to_numpy(z.grad), np.zeros((2, 2)))
    # std of constant rows: torch's gradient there is 0, not nan
    s = tt.tensor([[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]], **f64)
    s.std(1).sum().backward()
    np.testing.assert_allclose(to_numpy(s.grad), [[0, 0, 0], [-0.5, 0, 0.5]], rtol=1e-12)


def test_nan_gradients_of_whole_max_and_inf_norm(device):
    nan = float("nan")
    f64 = dict(dtype=tt.float64, device=device, requires_grad=True)
    # max()/min() of a whole tensor (torch's MaxBackward1) split the gradient among the NaNs
    y = tt.tensor([[1.0, nan, nan], [2.0, -5.0, 5.0]], **f64)
    m = y.max()
    assert m.grad_fn.name() == "MaxBackward1" and y.amax().grad_fn.name() == "AmaxBackward0"
    m.backward()
    np.testing.assert_array_equal(to_numpy(y.grad), [[0, 0.5, 0.5], [0, 0, 0]])
    y.grad = None
    y.min().backward()
    np.testing.assert_array_equal(to_numpy(y.grad), [[0, 0.5, 0.5], [0, 0, 0]])
    # the inf-norm: ties in |x| share the gradient (with x's sign); a NaN row passes 0
    x = tt.tensor([[1.0, nan, -3.0], [2.0, -5.0, 5.0]], **f64)
    x.norm(math.inf, 1).sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [[0, 0, 0], [0, -0.5, 0.5]])



def test_max_min_refuse_a_number_as_dim(device):
    x = tt.ones(3, device=device)
    for fn in (tt.max, tt.min):
        for bad in (2.5, True):
            with pytest.raises(TypeError, match="received an invalid combination of arguments"):
                fn(x, bad)


def test_all_any_name_themselves_in_argument_errors():
    for fn, name in ((tt.all, "all"), (tt.any, "any")):
        with pytest.raises(TypeError, match=rf"^{name}\(\): argument 'input' \(position 1\) must be Tensor"):
            fn(3)
