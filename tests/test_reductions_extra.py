"""Issue 21.3's torch edge cases beyond the OpInfo records of tests/opinfo_reductions_indexing.py:
nansum, nanmean, aminmax, logcumsumexp, cummax/cummin, std_mean/var_mean, isclose/allclose/equal,
renorm (ops/reductions_extra.py) and dist, trace, cov, corrcoef, diff, gradient, trapezoid
(ops/numerical.py). Expected values are literals recorded from torch 2.13 (no torch import here);
errors are torch's texts. Tensors are tiny: the emulated device interprets every launch.
"""
import math
import warnings

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy
from tritensor.autograd import gradcheck

NAN, INF = math.nan, math.inf


def _close(t, expected, rtol=1e-6, atol=1e-6):
    np.testing.assert_allclose(to_numpy(t).astype(np.float64), np.asarray(expected, dtype=np.float64),
                               rtol=rtol, atol=atol, equal_nan=True)


def _node(t):
    return type(t.grad_fn).__name__


# --------------------------------------------------------------------------- nansum / nanmean
def test_nansum_and_nanmean_values(device):
    x = tt.tensor([[1.0, NAN, 3.0], [4.0, 5.0, NAN]], device=device)
    _close(tt.nansum(x), 13.0)
    _close(x.nansum(1), [4.0, 9.0])
    _close(tt.nanmean(x), 3.25)
    _close(tt.nanmean(tt.tensor([[NAN, NAN], [1.0, 3.0]], device=device), 1), [NAN, 2.0])
    _close(tt.nansum(tt.tensor([NAN, INF, -INF], device=device)), NAN)      # inf + -inf
    _close(tt.nansum(tt.tensor([NAN, INF], device=device)), INF)


def test_nansum_of_integers_and_bools_is_their_int64_sum():
    b = tt.nansum(tt.tensor([[True, False], [True, True]]), 0)
    assert b.dtype is tt.int64 and b.tolist() == [2, 1]
    assert tt.nansum(tt.tensor([1, 2], dtype=tt.int8)).dtype is tt.int64
    assert tt.nansum(tt.ones(2), dtype=tt.int64).item() == 2          # torch converts, as sum does
    assert tt.nansum(tt.tensor([1.5, NAN]), dtype=tt.float64).dtype is tt.float64


def test_nanmean_wants_floats_and_its_node_is_the_division():
    with pytest.raises(RuntimeError, match=r"^nanmean\(\): expected input to have floating point or complex "
                                           r"dtype but got Long$"):
        tt.nanmean(tt.tensor([1, 2]))
    x = tt.tensor([1.0, NAN, 3.0], requires_grad=True)
    y = tt.nanmean(x)
    assert _node(y) == "DivBackward0"
    y.backward()
    _close(x.grad, [0.5, 0.0, 0.5])
    s = tt.nansum(x)
    assert _node(s) == "NansumBackward0"
    assert to_numpy(tt.autograd.grad(s, x)[0]).tolist() == [1.0, 0.0, 1.0]


def test_nansum_out_computes_in_outs_dtype():
    out = tt.empty(0, dtype=tt.float64)
    assert tt.nansum(tt.tensor([1.0, NAN]), 0, out=out) is out and out.item() == 1.0
    assert tt.nanmean(tt.tensor([[1.0, NAN], [2.0, 4.0]]), 0, out=tt.empty(2)).tolist() == [1.5, 4.0]


# --------------------------------------------------------------------------- aminmax
def test_aminmax_values_nan_and_return_type(device):
    x = tt.tensor([[2, 7, -1], [0, 7, 3]], dtype=tt.int16, device=device)
    r = tt.aminmax(x, dim=-1)
    assert type(r) is tt.return_types.aminmax and r._fields == ("min", "max")
    assert to_numpy(r.min).tolist() == [-1, 0] and to_numpy(r.max).tolist() == [7, 7] and r.min.dtype is tt.int16
    f = tt.tensor([[1.0, NAN, 3.0], [4.0, 5.0, 0.5]], device=device)
    mn, mx = f.aminmax()
    assert math.isnan(mn.item()) and math.isnan(mx.item())
    whole = tt.aminmax(f[1:], keepdim=True)
    assert whole.min.shape == (1, 1) and whole.min.item() == 0.5 and whole.max.item() == 5.0
    b = tt.aminmax(tt.tensor([True, False], device=device))
    assert b.min.item() is False and b.max.item() is True
    z = tt.aminmax(tt.tensor(3.0, device=device), dim=0, keepdim=True)
    assert z.min.shape == () and z.max.item() == 3.0


def test_aminmax_errors():
    with pytest.raises(RuntimeError, match=r"^aminmax\(\): cannot compute aminmax over an empty dimension as the "
                                           r"operation has no identity\.$"):
        tt.aminmax(tt.zeros(0))
    with pytest.raises(IndexError, match=r"^aminmax: Expected reduction dim 1 to have non-zero size\.$"):
        tt.aminmax(tt.zeros(2, 0), dim=1)
    assert tt.aminmax(tt.zeros(0, 3), dim=1).min.shape == (0,)
    with pytest.raises(TypeError, match=r"^aminmax\(\): argument 'dim' must be int, not tuple$"):
        tt.aminmax(tt.ones(2, 3), dim=(0, 1))
    with pytest.raises(RuntimeError, match="^Expected out tensor to have dtype float, but got double instead$"):
        tt.aminmax(tt.ones(2), out=(tt.empty(0, dtype=tt.float64), tt.empty(0)))


def test_aminmax_gradient_is_shared_among_ties_as_torch():
    # torch: loss = 2 min + max over the whole tensor; min and max tied twice each
    x = tt.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 1.0]], requires_grad=True)
    mn, mx = tt.aminmax(x)
    assert _node(mn) == "AminmaxBackward0" and mn.grad_fn is mx.grad_fn
    (mn * 2 + mx).backward()
    assert to_numpy(x.grad).tolist() == [[1.0, 0.5, 0.5], [0.0, 0.0, 1.0]]
    x.grad = None
    tt.aminmax(x, dim=1).max.sum().backward()                 # only the max output used
    assert to_numpy(x.grad).tolist() == [[0.0, 0.5, 0.5], [0.5, 0.5, 0.0]]


# --------------------------------------------------------------------------- cumsum's zeros
def test_cumsum_of_negative_zeros_is_positive_zero_as_torchs(device):
    """torch's running sum starts from +0.0: torch.cumsum([-0., -0., 1.]) is [0., 0., 1.] and
    [-0., -1., 1.] gives [0., -1., 0.] (values and signs read from torch 2.13), forward and reversed."""
    for values, want in (([-0.0, -0.0, 1.0], [0.0, 0.0, 1.0]), ([-0.0, -1.0, 1.0], [0.0, -1.0, 0.0])):
        for dtype in (tt.float32, tt.float64):
            out = to_numpy(tt.cumsum(tt.tensor(values, dtype=dtype, device=device), 0))
            assert out.tolist() == want and not np.signbit(out[out == 0]).any()
    back = to_numpy(tt.tensor([-0.0, -0.0], device=device).flip(0).cumsum(0).flip(0))
    assert not np.signbit(back).any()


# --------------------------------------------------------------------------- logcumsumexp
def test_logcumsumexp_values_infinities_and_nan(device):
    _close(tt.logcumsumexp(tt.tensor([0.0, 1.0, -INF, INF, 2.0], device=device), 0),
           [0.0, 1.3132616875182228, 1.3132616875182228, INF, INF])
    _close(tt.logcumsumexp(tt.tensor([-INF, -INF], device=device), 0), [-INF, -INF])
    _close(tt.logcumsumexp(tt.tensor([INF, INF], device=device), 0), [INF, INF])
    _close(tt.logcumsumexp(tt.tensor([1.0, NAN, 2.0], device=device), 0), [1.0, NAN, NAN])
    big = tt.tensor([1000.0, 1000.0, 999.0], device=device)       # no overflow
    _close(big.logcumsumexp(0), [1000.0, 1000.6931471805599, 1000.8620464], rtol=1e-7)
    assert tt.logcumsumexp(tt.tensor(2.0, device=device), 0).item() == 2.0
    assert tt.logcumsumexp(tt.zeros(0, device=device), 0).shape == (0,)


def test_logcumsumexp_gradient_matches_torch():
    x = tt.tensor([3.0, -1.0, 4.0, 1.5], requires_grad=True)
    y = tt.logcumsumexp(x, 0)
    assert _node(y) == "LogcumsumexpBackward0"
    _close(y, [3.0, 3.0181498527526855, 4.318175315856934, 4.376175403594971])
    y.backward(tt.tensor([1.0, -2.0, 0.5, 3.0]))      # mixed signs: both log branches
    _close(x.grad, [-0.07258832454681396, -0.019645141437649727, 2.4231836795806885, 0.16904960572719574],
           rtol=1e-5, atol=1e-6)


def test_logcumsumexp_errors():
    with pytest.raises(NotImplementedError, match="^\"logcumsumexp_out_cpu\" not implemented for 'Long'$"):
        tt.logcumsumexp(tt.tensor([1, 2]), 0)
    with pytest.raises(NotImplementedError, match="^\"logcumsumexp_out_cpu\" not implemented for 'Bool'$"):
        tt.logcumsumexp(tt.tensor([True]), 0)
    with pytest.raises(TypeError, match=r"^logcumsumexp\(\): argument 'dim' \(position 2\) must be int, not tuple$"):
        tt.logcumsumexp(tt.ones(2), (0,))
    with pytest.raises(RuntimeError, match="^expected scalar_type Float but found Double$"):
        tt.logcumsumexp(tt.ones(1), 0, out=tt.empty(1, dtype=tt.float64))


# --------------------------------------------------------------------------- cummax / cummin
def test_cummax_cummin_propagate_nan_and_take_the_last_tie(device):
    v, i = tt.cummax(tt.tensor([1.0, 3.0, 2.0, 3.0, NAN, 5.0, NAN], device=device), 0)
    _close(v, [1, 3, 3, 3, NAN, NAN, NAN])
    assert to_numpy(i).tolist() == [0, 1, 1, 3, 4, 4, 6]
    r = tt.cummin(tt.tensor([3.0, 1.0, 2.0, 1.0, NAN, 0.0], device=device), 0)
    assert type(r) is tt.return_types.cummin and r._fields == ("values", "indices")
    assert to_numpy(r.indices).tolist() == [0, 1, 1, 3, 4, 4]
    m = tt.cummax(tt.tensor([[1, 5], [5, 2], [3, 5]], dtype=tt.int8, device=device), 0)
    assert to_numpy(m.values).tolist() == [[1, 5], [5, 5], [5, 5]] and m.values.dtype is tt.int8
    assert to_numpy(m.indices).tolist() == [[0, 0], [1, 0], [1, 2]]
    b = tt.cummax(tt.tensor([True, False, True], device=device), 0)
    assert to_numpy(b.values).tolist() == [True, True, True] and to_numpy(b.indices).tolist() == [0, 0, 2]


def test_cummax_long_rows_cross_the_scan_chunks(device):
    rng = np.random.default_rng(3)
    a = rng.integers(-20, 20, size=(3, 40)).astype(np.float32)
    a[1, 17] = NAN
    x = tt.tensor(a, device=device).t()            # rows along dim 0, strided
    v, i = tt.cummin(x, 0)
    expected = np.minimum.accumulate(np.where(np.isnan(a), -np.inf, a), axis=1)
    got = to_numpy(v).T
    assert np.isnan(got[1, 17:]).all()
    np.testing.assert_array_equal(np.delete(got, 1, 0), np.delete(expected, 1, 0))
    idx = to_numpy(i).T
    assert (np.take_along_axis(a, idx, 1)[[0, 2]] == got[[0, 2]]).all() and (idx[1, 17:] == 17).all()


def test_cummax_cummin_gradients_and_layout():
    x = tt.tensor([1.0, 3.0, 2.0, 3.0, 0.5], requires_grad=True)
    v, i = tt.cummin(x, 0)
    assert _node(v) == "CumminBackward0" and not i.requires_grad and i.grad_fn is None
    v.backward(tt.arange(5.0))
    assert to_numpy(x.grad).tolist() == [6.0, 0.0, 0.0, 0.0, 4.0]    # torch's values
    y = tt.tensor([1.0, 2.0, 2.0, 0.5], requires_grad=True)
    tt.cummax(y, 0).values.sum().backward()
    assert to_numpy(y.grad).tolist() == [1.0, 1.0, 2.0, 0.0]
    t = tt.randn(3, 4).t()
    assert tt.cummax(t, 0).values.stride() == (3, 1) and tt.logcumsumexp(t, 0).stride() == (3, 1)


def test_cummax_errors_and_out():
    with pytest.raises(TypeError, match=r"^cummin\(\): argument 'dim' \(position 2\) must be int, not list$"):
        tt.cummin(tt.ones(2), [0])
    with pytest.raises(IndexError, match=r"^Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)$"):
        tt.cummax(tt.ones(2), 1)
    with pytest.raises(RuntimeError, match="^expected scalar_type Long but found Int$"):
        tt.cummax(tt.ones(1), 0, out=(tt.empty(1), tt.empty(1, dtype=tt.int32)))
    values, indices = tt.empty(0), tt.empty(0, dtype=tt.int64)
    r = tt.cummax(tt.tensor([2.0, 1.0]), 0, out=(values, indices))
    assert r.values is values and values.tolist() == [2.0, 2.0] and indices.tolist() == [0, 0]
    assert tt.cummax(tt.zeros(0), 0).indices.dtype is tt.int64


# --------------------------------------------------------------------------- std_mean / var_mean
def test_std_mean_values_one_node_and_gradient():
    x = tt.tensor([[1.0, 2.0, 3.0], [4.0, 6.0, 9.0]], requires_grad=True)
    s, m = tt.std_mean(x, 1)
    assert _node(s) == "StdMeanBackward0" and s.grad_fn is m.grad_fn
    _close(s, [1.0, 2.5166115760803223])
    _close(m, [2.0, 6.333333492279053])
    (s.sum() * 2 + m.sum()).backward()
    _close(x.grad, [[-0.6666666269302368, 0.3333333432674408, 1.3333333730697632],
                    [-0.5938394069671631, 0.2008800506591797, 1.3929591178894043]], rtol=1e-6)
    v, m = tt.var_mean(x.detach(), (0, 1), correction=2)
    _close(v, 10.708333333333334)
    _close(m, 4.166666666666667)
    assert _node(tt.var_mean(x, 0)[0]) == "VarMeanBackward0"


def test_std_mean_argument_forms_and_errors():
    x = tt.tensor([[1.0, 2.0], [3.0, 5.0]])
    s, m = tt.std_mean(x, True)                     # (input, unbiased)
    _close(s, 1.7078251838684082)
    _close(m, 2.75)
    s, _ = tt.std_mean(x, 0, False)                 # (input, dim, unbiased)
    _close(s, [1.0, 1.5])
    v, m = tt.var_mean(x, 1, keepdim=True, correction=0)
    assert v.shape == (2, 1) and to_numpy(v).ravel().tolist() == [0.25, 1.0]
    with pytest.raises(RuntimeError, match="^var_mean only support floating point and complex dtypes$"):
        tt.var_mean(tt.tensor([1, 2]))
    with pytest.raises(TypeError, match=r"^var_mean\(\) received an invalid combination of arguments"):
        tt.var_mean(x, 0, True, correction=1)
    with pytest.warns(UserWarning, match=r"^std_mean\(\): degrees of freedom is <= 0"):
        s, m = tt.std_mean(tt.tensor(3.0))
    assert math.isnan(s.item()) and m.item() == 3.0
    with pytest.warns(UserWarning, match=r"^var_mean\(\): degrees of freedom is <= 0"):
        v, _ = tt.var_mean(x, 1, correction=2)
    assert to_numpy(v).tolist() == [INF, INF]
    assert not hasattr(tt.Tensor, "std_mean")       # torch has no method


def test_first_derivatives_on_the_emulated_device():
    """The backwards kept off the emulated device's gradient records (long op chains): first
    derivatives here, once, on tiny inputs."""
    rng = np.random.default_rng(5)
    x = tt.tensor(rng.standard_normal((1, 3)), dtype=tt.float64, device="cuda", requires_grad=True)
    assert gradcheck(lambda a: tt.logcumsumexp(a, 1), (x,))
    assert gradcheck(lambda a: tt.std_mean(a, 1), (x,))


# --------------------------------------------------------------------------- isclose / allclose / equal
def test_isclose_values_of_every_kind(device):
    def on(*vals, dtype=None):
        return tt.tensor(list(vals), dtype=dtype, device=device)
    got = tt.isclose(on(1.0, NAN, INF, 1.0), on(1.0 + 1e-9, NAN, INF, 1.1), equal_nan=True)
    assert to_numpy(got).tolist() == [True, True, True, False]
    assert to_numpy(tt.isclose(on(INF, -INF, INF, 1.0), on(INF, INF, 1e38, INF))).tolist() == [True, False, False, False]
    assert to_numpy(tt.isclose(on(1, 2, 3), on(1, 3, 3))).tolist() == [True, False, True]
    assert to_numpy(tt.isclose(on(1, 2, 300), on(1, 3, 303), rtol=0.01, atol=0)).tolist() == [True, False, True]
    assert to_numpy(tt.isclose(on(True, False, True), on(True, True, False), rtol=0, atol=1)).tolist() == [True] * 3
    assert to_numpy(tt.isclose(on(1.0, 2.0).view(2, 1), on(1.0, 2.0))).tolist() == [[True, False], [False, True]]


def test_isclose_errors():
    with pytest.raises(RuntimeError, match="^Long did not match Float$"):
        tt.isclose(tt.tensor([1, 2]), tt.tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="^rtol must be greater than or equal to zero, but got -1$"):
        tt.isclose(tt.ones(1), tt.ones(1), rtol=-1)
    with pytest.raises(RuntimeError, match="^atol must be greater than or equal to zero, but got -1$"):
        tt.isclose(tt.ones(1), tt.ones(1), atol=-1)
    with pytest.raises(TypeError, match=r"^isclose\(\): argument 'other' \(position 2\) must be Tensor, not float$"):
        tt.isclose(tt.ones(1), 1.0)


def test_allclose_and_equal_are_python_bools(device):
    a = tt.tensor([1.0, NAN], device=device)
    assert tt.allclose(a, a.clone()) is False and tt.allclose(a, a, equal_nan=True) is True
    assert a.allclose(a + 1e-9, equal_nan=True) is True
    assert tt.equal(a, a) is False                              # NaN is never equal, even to itself
    assert tt.equal(tt.tensor([1, 2], device=device), tt.tensor([1.0, 2.0], device=device)) is True
    assert tt.equal(tt.tensor([True, False], device=device), tt.tensor([1, 0], device=device)) is True
    assert tt.equal(tt.zeros(0, 2), tt.zeros(2, 0)) is False and tt.equal(tt.zeros(0), tt.zeros(0)) is True
    assert tt.equal(tt.tensor([[1, 2]]), tt.tensor([1, 2])) is False
    with pytest.raises(TypeError, match=r"^equal\(\): argument 'other' \(position 2\) must be Tensor, not int$"):
        tt.equal(tt.tensor([1]), 1)


# --------------------------------------------------------------------------- renorm
def test_renorm_values_gradient_and_in_place():
    x = tt.tensor([[1.0, 2.0, 3.0], [4.0, 6.0, 9.0]], requires_grad=True)
    r = tt.renorm(x, 2, 0, 5.0)
    assert _node(r) == "RenormBackward0"
    _close(r, [[1.0, 2.0, 3.0], [1.734220027923584, 2.601330041885376, 3.9019951820373535]])
    r.backward(tt.tensor([[1.0, 0.0, -1.0], [0.5, 2.0, 1.0]]))
    _close(x.grad, [[1.0, 0.0, -1.0], [-0.08312520384788513, 0.4172559380531311, -0.24122607707977295]], rtol=1e-5)
    y = tt.tensor([[0.5, -2.0, 3.0], [4.0, 6.0, -9.0]], requires_grad=True)
    r = y.renorm(1, 1, 4.0)
    _close(r, [[0.4444444477558136, -1.0, 1.0], [3.555555582046509, 3.0, -3.0]])
    r.sum().backward()
    _close(y.grad, [[1.9753086277773946e-08, 0.75, 0.5], [1.9753086277773946e-08, 0.25, 0.1666666716337204]],
           rtol=1e-5, atol=1e-7)
    z = tt.tensor([[3.0, 4.0], [0.1, 0.1]]).requires_grad_()
    w = z * 1
    version = w._version
    assert w.renorm_(2, 0, 1.0) is w and w._version == version + 1 and _node(w) == "RenormBackward0"
    _close(w, [[0.6, 0.8], [0.1, 0.1]])


def test_renorm_errors():
    a = tt.ones(2, 2)
    with pytest.raises(RuntimeError, match="^renorm: non-positive-norm not supported$"):
        tt.renorm(a, 0, 0, 1.0)
    with pytest.raises(RuntimeError, match="^renorm: expected maxnorm to be >= 0 but got -1$"):
        tt.renorm(a, 2, 0, -1.0)
    with pytest.raises(RuntimeError, match="^renorm: input needs at least 2 dimensions, got 1 dimensions$"):
        tt.renorm(tt.tensor([1, 2]), 2, 0, 1.0)
    with pytest.raises(RuntimeError, match="^linalg.vector_norm: Expected a floating point or complex tensor as "
                                           "input. Got Long$"):
        tt.renorm(tt.tensor([[1, 2]]), 2, 0, 1.0)
    with pytest.raises(RuntimeError, match="^Expected out tensor to have dtype float, but got double instead$"):
        tt.renorm(a, 2, 0, 1.0, out=tt.empty(0, dtype=tt.float64))


# --------------------------------------------------------------------------- dist / trace
def test_dist_and_trace(device):
    a = tt.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    b = tt.tensor([1.0, 0.0], device=device)
    for p, expected in ((2, 4.898979663848877), (0, 3.0), (INF, 4.0), (-INF, 0.0), (1.5, 5.713479042053223),
                        (-1, 0.0), (3, 4.3088693618774414)):
        _close(tt.dist(a, b, p), expected)
    _close(tt.dist(a, b, tt.tensor(2.0)), 4.898979663848877)
    assert tt.dist(a.half(), b.half()).dtype is tt.float16
    assert tt.dist(a, b.double()).dtype is tt.float64
    assert tt.trace(tt.tensor([[1, 2, 3], [4, 5, 6]], device=device)).item() == 6
    assert tt.trace(tt.ones(2, 2, dtype=tt.int32)).dtype is tt.int64
    assert a.trace().item() == 5.0 and tt.trace(a.half()).dtype is tt.float16


def test_dist_trace_nodes_and_errors():
    x = tt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    assert _node(tt.dist(x, tt.zeros(2))) == "DistBackward0" and _node(tt.trace(x)) == "TraceBackward0"
    tt.trace(x).backward()
    assert to_numpy(x.grad).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    with pytest.raises(RuntimeError, match="^norm\\(\\): input dtype should be either floating point or complex. "
                                           "Got Long instead.$"):
        tt.dist(tt.tensor([1, 2]), tt.tensor([1, 3]))
    with pytest.raises(RuntimeError, match=r"^The size of tensor a \(2\) must match the size of tensor b \(3\) at "
                                           r"non-singleton dimension 1$"):
        tt.dist(x, tt.ones(3))
    with pytest.raises(TypeError, match=r"^dist\(\): argument 'p' \(position 3\) must be Number, not str$"):
        tt.dist(x, x, "fro")
    with pytest.raises(RuntimeError, match="^trace: expected a matrix, but got tensor with dim 1$"):
        tt.trace(tt.ones(3))
    with pytest.raises(NotImplementedError, match="^\"trace\" not implemented for 'Bool'$"):
        tt.trace(tt.ones(2, 2, dtype=tt.bool))


# --------------------------------------------------------------------------- cov / corrcoef
def test_cov_and_corrcoef_match_torch():
    c = tt.tensor([[1.0, 2.0, 4.0, 7.0], [0.5, -1.0, 2.0, 0.0]])
    _close(tt.cov(c, correction=2, fweights=tt.tensor([2, 1, 1, 3])),
           [[9.771428108215332, -0.2571428716182709], [-0.2571428418159485, 0.9857142567634583]], rtol=1e-5)
    _close(c.cov(aweights=tt.tensor([0.5, 1.0, 2.0, 0.25])),
           [[3.742856979370117, 1.557142734527588], [1.557142734527588, 2.703571319580078]], rtol=1e-5)
    _close(c.corrcoef(), [[1.0, 0.1259881556034088], [0.1259881556034088, 1.0]], rtol=1e-5)
    _close(tt.cov(tt.tensor([1, 2, 4])), 2.3333332538604736)           # integers: the default float
    _close(tt.corrcoef(tt.tensor([[1, 2, 3], [1, 1, 1]])), [[1.0, NAN], [NAN, NAN]])
    _close(tt.corrcoef(tt.tensor([1.0, 2.0])), 1.0)
    with pytest.warns(UserWarning, match=r"^cov\(\): degrees of freedom is <= 0"):
        assert math.isnan(tt.cov(tt.tensor([1.0])).item())
    one = tt.tensor([[2.0], [3.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = tt.cov(one, fweights=tt.tensor([2]))
    assert to_numpy(r).tolist() == [[0.0, 0.0], [0.0, 0.0]] and one.tolist() == [[2.0], [3.0]]  # input kept


def test_cov_errors():
    c = tt.ones(2, 3)
    cases = [
        (lambda: tt.cov(tt.zeros(2, 2, 2)), "cov(): expected input to have two or fewer dimensions but got an input "
                                            "with 3 dimensions"),
        (lambda: tt.cov(tt.tensor([True, False])), "cov(): bool dtype is not supported for input"),
        (lambda: tt.cov(c, fweights=tt.tensor([1.0, 2.0, 1.0])), "cov(): expected fweights to have integral dtype "
                                                                 "but got fweights with Float dtype"),
        (lambda: tt.cov(c, fweights=tt.tensor([1, -2, 1])), "cov(): fweights cannot be negative"),
        (lambda: tt.cov(c, aweights=tt.tensor([1.0, -2.0, 1.0])), "cov(): aweights cannot be negative"),
        (lambda: tt.cov(c, fweights=tt.tensor([1, 2])), "cov(): expected fweights to have the same numel as there "
                                                        "are observations in the input but got 2 != 3"),
        (lambda: tt.cov(c, aweights=tt.tensor([[1.0, 2.0, 1.0]])), "cov(): expected aweights to have one or fewer "
                                                                   "dimensions but got aweights with 2 dimensions"),
        (lambda: tt.cov(c, aweights=tt.tensor([1, 1, 1])), "cov(): expected aweights to have floating point dtype "
                                                           "but got aweights with Long dtype"),
        (lambda: tt.cov(c, fweights=tt.tensor([0, 0, 0])), "cov(): weights sum to zero, can't be normalized"),
        (lambda: tt.corrcoef(tt.zeros(2, 2, 2)), "corrcoef(): expected input to have two or fewer dimensions but got "
                                                 "an input with 3 dimensions"),
    ]
    for fn, message in cases:
        with pytest.raises(RuntimeError) as info:
            fn()
        assert str(info.value) == message


# --------------------------------------------------------------------------- diff
def test_diff_values_and_errors(device):
    def on(*vals):
        return tt.tensor(list(vals), device=device)
    assert to_numpy(tt.diff(on(1, 3, 6, 10))).tolist() == [2, 3, 4]
    assert to_numpy(on(1, 3, 6, 10).diff(n=2)).tolist() == [1, 1]
    assert to_numpy(tt.diff(on(True, False, False))).tolist() == [True, False]
    assert to_numpy(tt.diff(on(1.0, 2.0), prepend=on(0.0), append=on(5.0, 6.0))).tolist() == [1.0, 1.0, 3.0, 1.0]
    assert to_numpy(tt.diff(on(1, 2), prepend=on(1.0))).tolist() == [0.0, 1.0]        # promoted
    assert tt.diff(tt.ones(2, 2, device=device), n=5).shape == (2, 0)
    x = tt.ones(2, 3)
    assert tt.diff(x, n=0) is not x and tt.diff(x, n=0).tolist() == x.tolist()
    with pytest.raises(RuntimeError, match="^diff expects input to be at least one-dimensional$"):
        tt.diff(tt.tensor(1.0))
    with pytest.raises(RuntimeError, match="^order must be non-negative but got -1$"):
        tt.diff(x, n=-1)
    with pytest.raises(RuntimeError, match="^diff expects prepend or append to be the same dimension as input$"):
        tt.diff(x, prepend=tt.tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError, match=r"^diff expects the shape of tensor to prepend or append to match that of "
                                           r"input except along the differencing dimension; input.size\(0\) = 2, "
                                           r"but got tensor.size\(0\) = 3$"):
        tt.diff(x, append=tt.ones(3, 3))
    with pytest.raises(RuntimeError, match="^result type Float can't be cast to the desired output type Long$"):
        tt.diff(x, out=tt.empty(0, dtype=tt.int64))


# --------------------------------------------------------------------------- gradient
Y = [[1.0, 2.0, 4.0, 8.0], [10.0, 20.0, 40.0, 80.0]]


def test_gradient_forms_match_torch(device):
    y = tt.tensor(Y, device=device)
    g0, g1 = tt.gradient(y)
    _close(g0, [[9.0, 18.0, 36.0, 72.0]] * 2)
    _close(g1, [[1.0, 1.5, 3.0, 4.0], [10.0, 15.0, 30.0, 40.0]])
    _close(tt.gradient(y, spacing=[2.0, 3.0])[1], [[0.3333333, 0.5, 1.0, 1.3333333], [3.3333333, 5.0, 10.0, 13.333333]])
    (e,) = tt.gradient(y, dim=1, edge_order=2)
    _close(e, [[0.5, 1.5, 3.0, 5.0], [5.0, 15.0, 30.0, 50.0]])
    (c,) = tt.gradient(y, spacing=(tt.tensor([0.0, 1.0, 3.0, 4.0], device=device),), dim=1)
    _close(c, [[1.0, 1.0, 3.0, 4.0], [10.0, 10.0, 30.0, 40.0]])


def test_gradient_coordinates_second_order_and_integers():
    y = tt.cat([tt.tensor(Y), tt.tensor(Y) * 3])
    g0, g1 = tt.gradient(y, spacing=(tt.tensor([0.0, 1.0, 2.5, 3.0]), tt.tensor([0.0, 1.0, 3.0, 4.0])), edge_order=2)
    _close(g0, [[14.4667, 28.9333, 57.8667, 115.7333], [3.5333, 7.0667, 14.1333, 28.2667],
                [39.3333, 78.6667, 157.3333, 314.6667], [68.6667, 137.3333, 274.6667, 549.3333]], rtol=1e-4)
    _close(g1, [[1, 1, 3, 5], [10, 10, 30, 50], [3, 3, 9, 15], [30, 30, 90, 150]])
    (i,) = tt.gradient(tt.tensor([1, 2, 4]))
    assert i.dtype is tt.float32 and to_numpy(i).tolist() == [1.0, 1.5, 2.0]
    assert tt.gradient(tt.tensor(1.0)) == ()
    assert isinstance(tt.gradient(tt.tensor(Y), dim=[1]), tuple)


def test_gradient_errors():
    y = tt.tensor(Y)
    cases = [
        (lambda: tt.gradient(y, spacing=[1.0, 2.0, 3.0]), RuntimeError,
         "torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal to 'self.dim() = 2', "
         "since dim argument was not given, but got a list of length 3"),
        (lambda: tt.gradient(y, spacing=[1.0], dim=[0, 1]), RuntimeError,
         "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim arguments to have the "
         "same length, but got a spacing argument of length 1 and a dim argument of length 2."),
        (lambda: tt.gradient(y, edge_order=3), RuntimeError, "torch.gradient only supports edge_order=1 and "
                                                             "edge_order=2."),
        (lambda: tt.gradient(tt.ones(2, 2), edge_order=2), RuntimeError,
         "torch.gradient expected each dimension size to be at least edge_order+1"),
        (lambda: tt.gradient(tt.tensor([1, 2, 4], dtype=tt.uint8)), RuntimeError,
         "torch.gradient does not support uint8 input."),
        (lambda: tt.gradient(y, spacing=(tt.tensor([[0.0, 1.0, 3.0, 4.0]]),), dim=1), RuntimeError,
         "torch.gradient expected each element of spacing to have one dimension, but got an element with 2 "
         "dimensions!"),
        (lambda: tt.gradient(y, dim=[0, 0]), RuntimeError, "dim 0 appears multiple times in the list of dims"),
    ]
    for fn, kind, message in cases:
        with pytest.raises(kind) as info:
            fn()
        assert str(info.value) == message
    with pytest.raises(TypeError, match=r"^gradient\(\) received an invalid combination of arguments - got "
                                        r"\(Tensor, spacing=Tensor\)"):
        tt.gradient(y, spacing=tt.tensor([1.0, 2.0]))


# --------------------------------------------------------------------------- trapezoid family
def test_trapezoid_family_matches_torch(device):
    y = tt.tensor(Y, device=device)
    x = tt.tensor([0.0, 1.0, 3.0, 4.0], device=device)
    _close(tt.trapezoid(y), [10.5, 105.0])
    _close(tt.trapezoid(y, dx=2.0), [21.0, 210.0])
    _close(tt.trapezoid(y, x), [13.5, 135.0])
    _close(tt.trapezoid(y, dim=0), [5.5, 11.0, 22.0, 44.0])
    _close(tt.trapezoid(y, tt.tensor([[0.0, 1.0, 3.0, 4.0], [0.0, 2.0, 3.0, 5.0]], device=device)), [13.5, 180.0])
    _close(tt.trapz(y, dx=3.0), [31.5, 315.0])
    _close(tt.cumulative_trapezoid(y), [[1.5, 4.5, 10.5], [15.0, 45.0, 105.0]])
    _close(tt.cumulative_trapezoid(y, x), [[1.5, 7.5, 13.5], [15.0, 75.0, 135.0]])
    i = tt.trapezoid(tt.tensor([1, 2, 3], device=device))
    assert i.dtype is tt.float32 and i.item() == 4.0
    assert tt.trapezoid(tt.zeros(2, 0, device=device)).tolist() == [0.0, 0.0]
    assert tt.cumulative_trapezoid(tt.zeros(2, 0, device=device)).shape == (2, 0)


def test_trapezoid_errors():
    y = tt.tensor(Y)
    with pytest.raises(RuntimeError, match="^trapezoid: There must be one `x` value for each sample point$"):
        tt.trapezoid(y, tt.tensor([0.0, 1.0]))
    with pytest.raises(RuntimeError, match="^trapezoid: received a bool input for `y`, but bool is not supported$"):
        tt.trapezoid(tt.tensor([True]))
    with pytest.raises(RuntimeError, match="^trapezoid: Currently, we only support dx as a real number.$"):
        tt.trapezoid(y, dx=True)
    with pytest.raises(TypeError, match=r"^trapezoid\(\) received an invalid combination of arguments"):
        tt.trapezoid(y, tt.tensor([0.0, 1.0, 3.0, 4.0]), dx=2.0)
    with pytest.raises(IndexError, match="^Dimension specified as -1 but tensor has no dimensions$"):
        tt.trapezoid(tt.tensor(1.0))
    with pytest.raises(RuntimeError, match="^cumulative_trapezoid: There must be one `x` value for each sample "
                                           "point$"):
        tt.cumulative_trapezoid(y, tt.tensor([0.0, 1.0]))
