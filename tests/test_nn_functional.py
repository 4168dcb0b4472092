"""tt.nn.functional against NumPy and torch's documented behaviour, on cpu and cuda.

layer_norm and the class-index cross entropy run fused kernels on cuda (emulated here): the
shapes cross the interpreter's block sizes (one-tile rows hold up to 128 bytes: rows of 37 take
the streaming path, float32 rows of <= 32 values the one-tile path; more rows than one program's
share exercise the two-stage dw/db sums). First and second derivatives of both ops: tests/test_op_gradients.py.
"""
import warnings

import numpy as np
import pytest

import tritensor as tt
import tritensor.nn.functional as F
from conftest import to_numpy
from tritensor.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(7)
TOL = {tt.float16: 2e-3, tt.bfloat16: 2e-2, tt.float32: 1e-5, tt.float64: 1e-12}


def _t(values, device, dtype=tt.float64, requires_grad=False):
    return tt.tensor(np.asarray(values), dtype=dtype, device=device, requires_grad=requires_grad)


def _close(got, expected, tol):
    np.testing.assert_allclose(to_numpy(got).astype(np.float64), expected, rtol=tol, atol=tol)


# ------------------------------------------------------------------ layer_norm
def _np_layer_norm(x, k, w=None, b=None, eps=1e-5):
    axes = tuple(range(x.ndim - k, x.ndim))
    mu = x.mean(axis=axes, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


def _np_layer_norm_grads(x, k, w, g, eps=1e-5):
    axes = tuple(range(x.ndim - k, x.ndim))
    lead = tuple(range(x.ndim - k))
    mu = x.mean(axis=axes, keepdims=True)
    r = 1 / np.sqrt(((x - mu) ** 2).mean(axis=axes, keepdims=True) + eps)
    xhat = (x - mu) * r
    gh = g * w
    dx = r * (gh - gh.mean(axis=axes, keepdims=True) - xhat * (gh * xhat).mean(axis=axes, keepdims=True))
    return dx, (g * xhat).sum(axis=lead), g.sum(axis=lead)


@pytest.mark.parametrize("dtype", [tt.float32, tt.float64, tt.float16, tt.bfloat16], ids=str)
# streaming rows; float32 rows of 32 values in one tile (float64 streams); rows of 6 in one tile
@pytest.mark.parametrize("shape,k", [((9, 37), 1), ((3, 4, 8), 2), ((7, 6), 1)])
def test_layer_norm_forward_and_backward(shape, k, dtype, device):
    x = RNG.standard_normal(shape) * 3 + 1
    norm = shape[len(shape) - k:]
    w, b, g = RNG.standard_normal(norm), RNG.standard_normal(norm), RNG.standard_normal(shape)
    xt = _t(x, device, dtype, True)
    wt, bt = _t(w, device, dtype, True), _t(b, device, dtype, True)
    y = F.layer_norm(xt, norm, wt, bt)
    assert y.dtype is dtype and y.grad_fn.name() == "NativeLayerNormBackward0"
    ref_in = lambda a: to_numpy(_t(a, "cpu", dtype)).astype(np.float64)   # the values as rounded to dtype
    _close(y, _np_layer_norm(ref_in(x), k, ref_in(w), ref_in(b)), TOL[dtype] * 4)
    y.backward(_t(g, device, dtype))
    dx, dw, db = _np_layer_norm_grads(ref_in(x), k, ref_in(w), ref_in(g))
    tol = TOL[dtype] * 20 if dtype in (tt.float16, tt.bfloat16) else TOL[dtype] * 10
    _close(xt.grad, dx, tol)
    _close(wt.grad, dw, tol * 5)
    _close(bt.grad, db, tol * 5)


def test_layer_norm_without_affine_and_layouts(device):
    x = RNG.standard_normal((37, 6))
    xt = _t(x, device).t()                      # (6, 37), column stride 6: read in place
    _close(F.layer_norm(xt, (37,)), _np_layer_norm(x.T, 1), 1e-12)
    xb = _t(RNG.standard_normal((1, 5)), device).expand(4, 5)   # broadcast rows (row stride 0)
    _close(F.layer_norm(xb, [5], eps=0.5), _np_layer_norm(to_numpy(xb), 1, eps=0.5), 1e-12)
    x3 = _t(RNG.standard_normal((4, 3, 5)), device).permute(1, 0, 2)      # dims that do not merge
    _close(F.layer_norm(x3, (4, 5)), _np_layer_norm(to_numpy(x3), 2), 1e-12)


def test_layer_norm_empty_and_mixed_parameter_dtype(device):
    x = _t(np.zeros((0, 5)), device, requires_grad=True)
    w = _t(np.ones(5), device, requires_grad=True)
    y = F.layer_norm(x, (5,), w, w)
    assert y.shape == (0, 5)
    y.sum().backward()
    assert np.all(to_numpy(w.grad) == 0)       # an empty batch sums to zero gradients
    h = _t(RNG.standard_normal((3, 5)), device, tt.float16)
    out = F.layer_norm(h, (5,), _t(np.full(5, 2.0), device, tt.float32))
    assert out.dtype is tt.float16             # float weights with a half input, as torch allows


def test_layer_norm_backward_is_deterministic(device, monkeypatch):
    from tritensor.backends.triton import nn as triton_nn
    monkeypatch.setitem(triton_nn.INTERPRETER_SETTINGS, "backward_programs", 3)
    x = _t(RNG.standard_normal((13, 37)), device, tt.float32, True)    # 2 programs of two 4-row blocks
    w = _t(RNG.standard_normal(37), device, tt.float32, True)
    grads = []
    for _ in range(2):
        x.grad = w.grad = None
        F.layer_norm(x, (37,), w, w).sum().backward()
        grads.append((to_numpy(x.grad).copy(), to_numpy(w.grad).copy()))
    assert all(np.array_equal(a, b) for a, b in zip(grads[0], grads[1]))


def test_layer_norm_gradgradcheck_with_bias_and_two_normalized_dims():
    # cpu only: tests/test_op_gradients.py runs the op's case on cuda too (emulated launches are slow)
    x, w, b = (_t(RNG.standard_normal(s), "cpu", requires_grad=True) for s in [(2, 2, 3), (2, 3), (2, 3)])
    assert gradgradcheck(lambda x, w, b: F.layer_norm(x, (2, 3), w, b, eps=1e-3), (x, w, b))


def test_layer_norm_third_derivative_through_the_fused_backward():
    g, x, w = (_t(RNG.standard_normal(s), "cpu", requires_grad=True) for s in [(2, 4), (2, 4), (4,)])

    def first(g, x, w):
        dx = tt.autograd.grad(F.layer_norm(x, (4,), w), (x,), g, create_graph=True)[0]
        assert dx.grad_fn.name() == "NativeLayerNormBackwardBackward0"
        return dx
    assert gradgradcheck(first, (g, x, w))


def test_cross_entropy_gradgradcheck_with_weights_ignore_and_smoothing():
    x = _t(RNG.standard_normal((3, 4)), "cpu", requires_grad=True)
    t, w = tt.tensor([0, -100, 3]), _t(RNG.random(4) + 0.5, "cpu")
    assert gradgradcheck(lambda x: F.cross_entropy(x, t, w, label_smoothing=0.3), (x,))
    x3 = _t(RNG.standard_normal((2, 3, 2)), "cpu", requires_grad=True)
    assert gradgradcheck(lambda x: F.cross_entropy(x, tt.tensor([[1, 2], [0, -100]]), reduction="none"), (x3,))
    x1 = _t(RNG.standard_normal(4), "cpu", requires_grad=True)          # unbatched: (C,) with a 0-d target
    assert gradgradcheck(lambda x: F.cross_entropy(x, tt.tensor(2), w, label_smoothing=0.1), (x1,))


def test_cross_entropy_reads_strided_inputs_in_place(device):
    x = RNG.standard_normal((37, 5))
    t = np.array([3, 0, 36, 7, 3])
    xt = _t(x, device, requires_grad=True)
    loss = F.cross_entropy(xt.t(), tt.tensor(t, device=device), reduction="none", label_smoothing=0.2)
    _close(loss, _np_cross_entropy(x.T, t, reduction="none", ls=0.2), 1e-12)
    loss.backward(_t(np.ones(5), device).expand(5))     # a stride-0 incoming gradient
    eps, num = 1e-6, np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        num[i] = (_np_cross_entropy((x + d).T, t, reduction="sum", ls=0.2)
                  - _np_cross_entropy((x - d).T, t, reduction="sum", ls=0.2)) / (2 * eps)
    _close(xt.grad, num, 1e-6)
    xb = _t(RNG.standard_normal((1, 4)), device).expand(3, 4)            # broadcast rows
    tb = tt.tensor([1], device=device).expand(3)
    _close(F.cross_entropy(xb, tb, reduction="none"), _np_cross_entropy(to_numpy(xb), np.array([1, 1, 1]),
                                                                         reduction="none"), 1e-12)


def test_layer_norm_errors():
    x = tt.randn(3, 5)
    with pytest.raises(RuntimeError, match=r"^Given normalized_shape=\[4\], expected input with shape \[\*, 4\], "
                                           r"but got input of size\[3, 5\]$"):
        F.layer_norm(x, (4,))
    with pytest.raises(RuntimeError, match=r"Expected weight to be of same shape as normalized_shape, but got "
                                           r"weight of shape \[4\] and normalized_shape = \[5\]"):
        F.layer_norm(x, (5,), tt.ones(4))
    with pytest.raises(RuntimeError, match=r"Expected bias to be of same shape"):
        F.layer_norm(x, (5,), None, tt.ones(4))
    with pytest.raises(RuntimeError, match="Expected normalized_shape to be at least 1-dimensional"):
        F.layer_norm(x, ())
    with pytest.raises(TypeError, match=r"^layer_norm\(\): argument 'normalized_shape' \(position 2\) must be "
                                        "tuple of ints, not int$"):
        F.layer_norm(x, 5)
    with pytest.raises(NotImplementedError, match="\"LayerNormKernelImpl\" not implemented for 'Long'"):
        F.layer_norm(x.long(), (5,))
    with pytest.raises(RuntimeError, match="mixed dtype \\(CPU\\): expect parameter to have scalar type of Float"):
        F.layer_norm(x, (5,), tt.ones(5, dtype=tt.float64))


# ------------------------------------------------------------------ cross entropy / nll
def _np_log_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def _np_cross_entropy(x, t, w=None, ignore_index=-100, reduction="mean", ls=0.0):
    """torch's definition, class dim 1 (or 0 for (C,) inputs), written out plainly."""
    cdim = 0 if x.ndim == 1 else 1
    C = x.shape[cdim]
    logp = np.moveaxis(_np_log_softmax(x, cdim), cdim, -1)
    w = np.ones(C) if w is None else w
    valid = t != ignore_index
    safe = np.where(valid, t, 0)
    wt = np.where(valid, w[safe], 0.0)
    nll = -wt * np.take_along_axis(logp, safe[..., None], -1)[..., 0]
    smooth = np.where(valid, -(logp * w).sum(-1), 0.0)
    loss = (1 - ls) * nll + ls / C * smooth
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    with np.errstate(invalid="ignore"):
        return loss.sum() / wt.sum()


CE_CASES = {
    "2d": ((6, 37), (6,)),            # C = 37: the streaming path on the interpreter
    "spatial": ((2, 5, 3, 2), (2, 3, 2)),
    "unbatched": ((7,), ()),
}


@pytest.mark.parametrize("case", list(CE_CASES))
@pytest.mark.parametrize("weighted,ls", [(False, 0.0), (True, 0.0), (True, 0.3), (False, 0.25)])
def test_cross_entropy_class_indices(case, weighted, ls, device):
    xshape, tshape = CE_CASES[case]
    C = xshape[0] if len(xshape) == 1 else xshape[1]
    x = RNG.standard_normal(xshape) * 2
    t = RNG.integers(0, C, tshape)
    if t.ndim:
        t.reshape(-1)[1] = -100                    # one ignored target
    w = RNG.random(C) + 0.5 if weighted else None
    xt = _t(x, device, requires_grad=True)
    wt = _t(w, device) if weighted else None
    tt_t = tt.tensor(t, device=device)
    for reduction in ["none", "sum"]:
        loss = F.cross_entropy(xt, tt_t, wt, reduction=reduction, label_smoothing=ls)
        _close(loss, _np_cross_entropy(x, t, w, reduction=reduction, ls=ls), 1e-12)
    loss = F.cross_entropy(xt, tt_t, wt, label_smoothing=ls)          # 'mean'
    _close(loss, _np_cross_entropy(x, t, w, ls=ls), 1e-12)
    loss.backward()
    eps = 1e-6                                     # the gradient against central differences of the reference
    num = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        num[i] = (_np_cross_entropy(x + d, t, w, ls=ls) - _np_cross_entropy(x - d, t, w, ls=ls)) / (2 * eps)
    _close(xt.grad, num, 1e-6)


@pytest.mark.parametrize("dtype", [tt.float32, tt.float16, tt.bfloat16], ids=str)
def test_cross_entropy_low_precision(dtype, device):
    x = RNG.standard_normal((5, 20)) * 3
    t = RNG.integers(0, 20, 5)
    xt = _t(x, device, dtype)
    loss = F.cross_entropy(xt, tt.tensor(t, device=device), label_smoothing=0.1)
    assert loss.dtype is dtype
    _close(loss, _np_cross_entropy(to_numpy(xt).astype(np.float64), t, ls=0.1), TOL[dtype] * 5)


def test_cross_entropy_large_logits_and_uint8_targets(device):
    x = np.array([[1000.0, 0.0, -1000.0], [5e3, 5e3 + 1, 5e3 - 2]])
    t = np.array([1, 2], dtype=np.uint8)
    got = F.cross_entropy(_t(x, device), tt.tensor(t, device=device), reduction="none", label_smoothing=0.5)
    _close(got, _np_cross_entropy(x, t.astype(np.int64), reduction="none", ls=0.5), 1e-9)


def test_cross_entropy_probability_targets(device):
    x = RNG.standard_normal((4, 6, 2))
    q = RNG.random((4, 6, 2))
    q /= q.sum(1, keepdims=True)
    w = RNG.random(6) + 0.5
    xt = _t(x, device, requires_grad=True)
    for reduction, ls in [("mean", 0.0), ("sum", 0.2), ("none", 0.1)]:
        got = F.cross_entropy(xt, _t(q, device), _t(w, device), reduction=reduction, label_smoothing=ls)
        qs = q * (1 - ls) + ls / 6
        per_row = -(_np_log_softmax(x, 1) * qs * w[None, :, None]).sum(1)
        expected = {"none": per_row, "sum": per_row.sum(), "mean": per_row.sum() / 8}[reduction]
        _close(got, expected, 1e-12)
    if device == "cpu":     # a composite of table ops (each gradient-checked on cuda in test_op_gradients)
        assert gradcheck(lambda a, b: F.cross_entropy(a, b.softmax(1)), (_t(x[:2, :3, 0], device, requires_grad=True),
                                                                          _t(q[:2, :3, 0], device, requires_grad=True)))


def test_cross_entropy_all_ignored_and_empty(device):
    x = _t(RNG.standard_normal((3, 4)), device)
    t = tt.tensor([-100, -100, -100], device=device)
    assert np.isnan(to_numpy(F.cross_entropy(x, t)))
    assert to_numpy(F.cross_entropy(x, t, reduction="sum")) == 0
    empty = _t(np.zeros((0, 4)), device)
    e = tt.zeros(0, dtype=tt.int64, device=device)
    assert np.isnan(to_numpy(F.cross_entropy(empty, e)))
    assert to_numpy(F.cross_entropy(empty, e, reduction="sum")) == 0
    assert F.cross_entropy(empty, e, reduction="none").shape == (0,)
    assert np.isnan(to_numpy(F.cross_entropy(empty, _t(np.zeros((0, 4)), device))))


def test_cross_entropy_class_weights_are_constants():
    """torch's nll_loss_forward has no derivative for the class weights: refused while grad
    mode records, computed as constants under no_grad."""
    x = _t(RNG.standard_normal((3, 4)), "cpu", requires_grad=True)
    w = _t(RNG.random(4) + 0.5, "cpu", requires_grad=True)
    t = tt.tensor([0, 3, -100])
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'weight'"):
        F.cross_entropy(x, t, w, label_smoothing=0.2)
    with tt.no_grad():
        got = F.cross_entropy(x, t, w, label_smoothing=0.2)
    assert got.item() == pytest.approx(F.cross_entropy(x.detach(), t, w.detach(), label_smoothing=0.2).item())


def test_nll_loss(device):
    x = RNG.standard_normal((5, 4, 3))
    t = RNG.integers(0, 4, (5, 3))
    t[0, 0] = 2
    w = RNG.random(4)
    for reduction in ["none", "mean", "sum"]:
        got = F.nll_loss(_t(x, device), tt.tensor(t, device=device), _t(w, device), ignore_index=2, reduction=reduction)
        valid = t != 2
        per = np.where(valid, -w[t] * np.take_along_axis(x, t[:, None], 1)[:, 0], 0)
        expected = {"none": per, "sum": per.sum(), "mean": per.sum() / np.where(valid, w[t], 0).sum()}[reduction]
        _close(got, expected, 1e-12)
    if device == "cpu":     # composite: gather, where, sum (each gradient-checked on cuda elsewhere)
        assert gradgradcheck(lambda a: F.nll_loss(a, tt.tensor([1, 0], device=device)),
                             (_t(x[:2, :2, 0], device, requires_grad=True),))


def test_legacy_reduction_arguments_warn():
    x, t = tt.randn(3, 5), tt.tensor([1, 2, 2])
    with pytest.warns(UserWarning, match=r"size_average and reduce args will be deprecated, please use "
                                         r"reduction='sum' instead\."):
        s = F.cross_entropy(x, t, size_average=False)
    np.testing.assert_allclose(to_numpy(s), to_numpy(F.cross_entropy(x, t, reduction="sum")), rtol=1e-6)
    with pytest.warns(UserWarning, match="reduction='none'"):
        assert F.nll_loss(x, t, reduce=False).shape == (3,)


def test_cross_entropy_on_cuda_reads_nothing_back(monkeypatch):
    """torch checks class indices on the cpu and asserts inside its cuda kernel, asynchronously:
    a cuda training step never waits there. The target's range check read it back on every step
    (1.8 ms a step on the first H200 run); on cuda nothing of the step is read on the host now.
    An out-of-range target is recorded on the device and surfaces at the next sync as torch's
    device-side assert (the kernel masks it: no read outside the row); the cpu still raises
    torch's IndexError (test below)."""
    x = np.array([[0.5, -1.0, 2.0, 0.0, 1.5], [1.0, 1.0, -2.0, 0.5, 0.0], [-0.5, 3.0, 0.0, 1.0, 2.0]])
    t = np.array([1, 4, 0])
    xc = tt.tensor(x, device="cuda", requires_grad=True)
    tc = tt.tensor(t, device="cuda")
    real = tt.Tensor._to_host_array

    def refuse(self):
        assert self.device.type != "cuda", "a cuda tensor was read back on the host"
        return real(self)
    monkeypatch.setattr(tt.Tensor, "_to_host_array", refuse)
    loss = F.cross_entropy(xc, tc)
    loss.backward()
    F.cross_entropy(xc, tt.tensor([1, 5, -3], device="cuda"))       # no error raised on the host yet
    monkeypatch.undo()
    with pytest.raises(RuntimeError, match=r"^CUDA error: device-side assert triggered\nTarget 5 is out of bounds\.\n"):
        tt.cuda.synchronize()
    lse = np.log(np.exp(x).sum(1))
    _close(loss, (lse - x[np.arange(3), t]).mean(), 1e-6)
    softmax = np.exp(x - lse[:, None])
    _close(xc.grad, (softmax - np.eye(5)[t]) / 3, 1e-6)


def test_cross_entropy_and_nll_errors():
    x = tt.randn(3, 5)
    cases = [
        (lambda: F.cross_entropy(x, tt.tensor([1, 5, 2])), IndexError, "^Target 5 is out of bounds.$"),
        (lambda: F.nll_loss(x, tt.tensor([1, -3, 2])), IndexError, "^Target -3 is out of bounds.$"),
        (lambda: F.cross_entropy(x, tt.tensor([1.0, 2.0, 2.0])), RuntimeError,
         "^expected target dtype to be Long or Byte, but got Float$"),
        (lambda: F.cross_entropy(x, tt.tensor([1, 2], dtype=tt.int32)), ValueError,
         r"^Expected input batch_size \(3\) to match target batch_size \(2\)\.$"),
        (lambda: F.cross_entropy(x, tt.tensor([1, 2, 2], dtype=tt.int32)), RuntimeError,
         "^expected target dtype to be Long or Byte, but got Int$"),
        (lambda: F.cross_entropy(x, tt.tensor([1, 2, 2]), reduction="foo"), ValueError,
         "^foo is not a valid value for reduction$"),
        (lambda: F.cross_entropy(x, tt.tensor([1, 2, 2]), weight=tt.ones(4)), RuntimeError,
         r"^weight tensor should be defined either for all 5 classes or no classes but got weight tensor of "
         r"shape: \[4\]$"),
        (lambda: F.cross_entropy(x, tt.tensor([1, 2, 2]), label_smoothing=1.5), RuntimeError,
         "^label_smoothing must be between 0.0 and 1.0. Got: 1.5$"),
        (lambda: F.cross_entropy(x.long(), tt.tensor([1, 2, 2])), NotImplementedError,
         "\"log_softmax_lastdim_kernel_impl\" not implemented for 'Long'"),
        (lambda: F.cross_entropy(tt.randn(()), tt.tensor(1)), RuntimeError,
         "^Expected floating point type for target with class probabilities, got Long$"),
        (lambda: F.cross_entropy(tt.randn(2, 5, 3), tt.zeros(2, 4, dtype=tt.int64)), RuntimeError,
         r"^Expected target size \[2, 3\], got \[2, 4\]$"),
        (lambda: F.nll_loss(tt.randn(2, 5, 3, 4), tt.zeros(2, 3, 5, dtype=tt.int64)), RuntimeError,
         r"^size mismatch \(got input: \[2, 5, 3, 4\] , target: \[2, 3, 5\]$"),
        (lambda: F.cross_entropy(x, tt.rand(3, 5), ignore_index=1), RuntimeError,
         "^ignore_index is not supported for floating point target$"),
        (lambda: F.cross_entropy(x.bfloat16(), tt.tensor([1, 2, 2]), weight=tt.ones(5)), RuntimeError,
         "^expected scalar type BFloat16 but found Float$"),
        (lambda: F.nll_loss(tt.randn(()), tt.tensor(0)), ValueError, r"^Expected 1 or more dimensions \(got 0\)$"),
        (lambda: F.nll_loss(x, tt.tensor([[1, 2, 3]])), ValueError,
         r"^Expected input batch_size \(3\) to match target batch_size \(1\)\.$"),
    ]
    for fn, error, message in cases:
        with pytest.raises(error, match=message):
            fn()


# ------------------------------------------------------------------ regression losses
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_regression_losses(reduction, device):
    x, y = RNG.standard_normal((4, 3)) * 2, RNG.standard_normal((4, 3)) * 2
    d = x - y
    a = np.abs(d)
    expected = {
        "mse_loss": (lambda: F.mse_loss, d * d),
        "l1_loss": (lambda: F.l1_loss, a),
        "smooth_l1_loss": (lambda: lambda p, q, reduction: F.smooth_l1_loss(p, q, reduction=reduction, beta=0.7),
                           np.where(a < 0.7, 0.5 * d * d / 0.7, a - 0.35)),
        "huber_loss": (lambda: lambda p, q, reduction: F.huber_loss(p, q, reduction=reduction, delta=0.7),
                       np.where(a < 0.7, 0.5 * d * d, 0.7 * (a - 0.35))),
    }
    for name, (fn, per) in expected.items():
        got = fn()(_t(x, device), _t(y, device), reduction=reduction)
        _close(got, {"none": per, "mean": per.mean(), "sum": per.sum()}[reduction], 1e-12)
    w = RNG.random((4, 3))
    got = F.mse_loss(_t(x, device), _t(y, device), reduction=reduction, weight=_t(w, device))
    per = d * d * w
    _close(got, {"none": per, "mean": per.sum() / w.sum(), "sum": per.sum()}[reduction], 1e-12)


def test_regression_loss_warnings_and_errors():
    x, y = tt.randn(3, 1), tt.randn(3)
    for fn in (F.mse_loss, F.l1_loss, F.smooth_l1_loss, F.huber_loss):
        with pytest.warns(UserWarning, match=r"Using a target size \(tritensor\.Size\(\[3\]\)\) that is different "
                                             r"to the input size \(tritensor\.Size\(\[3, 1\]\)\)\. This will likely "
                                             r"lead to incorrect results due to broadcasting\."):
            assert fn(x, y, reduction="none").shape == (3, 3)
    with pytest.raises(RuntimeError, match="^smooth_l1_loss does not support negative values for beta.$"):
        F.smooth_l1_loss(y, y, beta=-1.0)
    with pytest.raises(RuntimeError, match="^huber_loss does not support non-positive values for delta.$"):
        F.huber_loss(y, y, delta=0.0)
    with pytest.raises(NotImplementedError, match="\"mse_cpu\" not implemented for 'Long'"):
        F.mse_loss(tt.ones(3, dtype=tt.int64), tt.ones(3, dtype=tt.int64))
    with pytest.raises(ValueError, match="^x is not a valid value for reduction$"):
        F.l1_loss(y, y, reduction="x")
    assert F.smooth_l1_loss(x.squeeze(1), y, beta=0.0).item() == pytest.approx(F.l1_loss(x.squeeze(1), y).item())


def test_binary_cross_entropy(device):
    p = RNG.random((4, 3)) * 0.98 + 0.01
    t = RNG.random((4, 3))
    w = RNG.random(3)
    got = F.binary_cross_entropy(_t(p, device), _t(t, device), _t(w, device), reduction="none")
    _close(got, -w * (t * np.log(p) + (1 - t) * np.log(1 - p)), 1e-12)
    edge = F.binary_cross_entropy(_t([0.0, 1.0], device), _t([1.0, 0.0], device), reduction="none")
    _close(edge, [100.0, 100.0], 0)                # log clamped at -100, as torch
    if device == "cpu":     # composite
        assert gradcheck(lambda a, b: F.binary_cross_entropy(a, b), (_t(p[:2, :2], device, requires_grad=True),
                                                                   _t(t[:2, :2], device, requires_grad=True)))
    with pytest.raises(RuntimeError, match="^all elements of input should be between 0 and 1$"):
        F.binary_cross_entropy(_t([1.5], device), _t([0.5], device))
    with pytest.raises(ValueError, match=r"Using a target size \(tritensor\.Size\(\[3, 1\]\)\) that is different "
                                         r"to the input size \(tritensor\.Size\(\[3\]\)\) is deprecated"):
        F.binary_cross_entropy(tt.rand(3), tt.rand(3, 1))
    with pytest.raises(RuntimeError, match="^Found dtype Long but expected Float$"):
        F.binary_cross_entropy(tt.rand(3), tt.ones(3, dtype=tt.int64))


def test_binary_cross_entropy_with_logits(device):
    x = np.array([[-800.0, -3.0, 0.0, 2.5, 900.0]])    # large |x| must not overflow
    t = np.array([[0.0, 1.0, 0.3, 0.0, 1.0]])
    pw, w = np.array([1.0, 2.0, 0.5, 3.0, 1.5]), np.array([0.5, 1.0, 2.0, 1.0, 1.0])
    got = F.binary_cross_entropy_with_logits(_t(x, device), _t(t, device), _t(w, device), reduction="none",
                                             pos_weight=_t(pw, device))
    softplus = lambda v: np.logaddexp(0, v)
    _close(got, w * (pw * t * softplus(-x) + (1 - t) * softplus(x)), 1e-12)
    if device == "cpu":     # composite; x = 0 checks the derivatives where |x| has its kink
        assert gradgradcheck(lambda a: F.binary_cross_entropy_with_logits(a, _t(t[:, :3], device),
                                                                          pos_weight=_t(pw[:3], device)),
                             (_t(x[:, 1:4], device, requires_grad=True),))
    with pytest.raises(ValueError, match=r"^Target size \(tritensor\.Size\(\[3, 1\]\)\) must be the same as input "
                                         r"size \(tritensor\.Size\(\[3\]\)\)$"):
        F.binary_cross_entropy_with_logits(tt.rand(3), tt.rand(3, 1))


# ------------------------------------------------------------------ embedding, dropout, one_hot, leaky_relu
def test_embedding_and_padding_gradient(device):
    w = _t(RNG.standard_normal((6, 3)), device, requires_grad=True)
    idx = tt.tensor([[1, 4, 1], [0, 1, 5]], device=device)
    out = F.embedding(idx, w, padding_idx=1)
    np.testing.assert_array_equal(to_numpy(out), to_numpy(w)[to_numpy(idx)])
    g = RNG.standard_normal((2, 3, 3))
    out.backward(_t(g, device))
    expected = np.zeros((6, 3))
    for (i, j), row in np.ndenumerate(to_numpy(idx)):
        if row != 1:
            expected[row] += g[i, j]
    _close(w.grad, expected, 1e-12)
    assert F.embedding(tt.tensor(2, device=device), w).shape == (3,)
    assert F.embedding(tt.tensor([1, 2], dtype=tt.int32, device=device), w, padding_idx=-5).shape == (2, 3)


def test_embedding_scale_grad_by_freq_and_max_norm(device):
    W = RNG.standard_normal((6, 3)) * 2
    idx = np.array([[1, 4, 1], [0, 1, 5]])
    g = RNG.standard_normal((2, 3, 3))
    w = _t(W, device, requires_grad=True)
    F.embedding(tt.tensor(idx, device=device), w, padding_idx=4, scale_grad_by_freq=True).backward(_t(g, device))
    counts = np.bincount(idx.reshape(-1), minlength=6)
    expected = np.zeros((6, 3))
    for (i, j), row in np.ndenumerate(idx):
        if row != 4:
            expected[row] += g[i, j] / counts[row]
    _close(w.grad, expected, 1e-12)
    w = _t(W, device, requires_grad=True)
    out = F.embedding(tt.tensor(idx, device=device), w, max_norm=1.5, norm_type=1.0)
    norms = np.abs(W).sum(1, keepdims=True)
    used = np.isin(np.arange(6), idx)[:, None]
    renormed = np.where(used & (norms > 1.5), W * (1.5 / (norms + 1e-7)), W)
    _close(w, renormed, 1e-12)                 # rescaled in place (rows 2 and 3 are not used)
    _close(out, renormed[idx], 1e-12)


def test_embedding_errors():
    w = tt.randn(5, 3)
    with pytest.raises(IndexError, match="^index out of range in self$"):
        F.embedding(tt.tensor([1, 7]), w)
    with pytest.raises(AssertionError, match="^Padding_idx must be within num_embeddings$"):
        F.embedding(tt.tensor([1]), w, padding_idx=5)
    with pytest.raises(AssertionError, match="^Padding_idx must be within num_embeddings$"):
        F.embedding(tt.tensor([1]), w, padding_idx=-6)
    with pytest.raises(RuntimeError, match="^'weight' must be 2-D$"):
        F.embedding(tt.tensor([1]), tt.randn(5))
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices' to have one of the following "
                                           "scalar types: Long, Int; but got torch.FloatTensor instead"):
        F.embedding(tt.tensor([1.0]), w)
    with pytest.raises(NotImplementedError, match="sparse"):
        F.embedding(tt.tensor([1]), w, sparse=True)


def test_dropout(device):
    x = _t(np.ones((40, 10)), device, tt.float32, True)
    tt.manual_seed(3)
    a = F.dropout(x, 0.3)
    tt.manual_seed(3)
    b = F.dropout(x, 0.3)
    va = to_numpy(a)
    np.testing.assert_array_equal(va, to_numpy(b))       # the seed reproduces the mask
    assert set(np.unique(va)) <= {0.0, np.float32(1 / 0.7)}
    assert 0.15 < (va == 0).mean() < 0.45
    a.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), va)  # the gradient is the same mask and scale
    assert F.dropout(x, 0.3, training=False) is x
    assert np.all(to_numpy(F.dropout(x, 1.0)) == 0)
    y = _t(np.ones(5), device, tt.float32)
    assert F.dropout(y, 0.5, inplace=True) is y
    with pytest.raises(ValueError, match="^dropout probability has to be between 0 and 1, but got 1.5$"):
        F.dropout(x, 1.5)
    with pytest.raises(RuntimeError, match="^result type Float can't be cast to the desired output type Long$"):
        F.dropout(tt.ones(3, dtype=tt.int64), 0.5)
    assert F.dropout(tt.ones(3, dtype=tt.int64), 0.0).dtype is tt.int64


def test_one_hot(device):
    t = tt.tensor([[0, 2], [3, 1]], device=device)
    out = F.one_hot(t)
    assert out.dtype is tt.int64 and out.shape == (2, 2, 4)
    np.testing.assert_array_equal(to_numpy(out), np.eye(4, dtype=np.int64)[to_numpy(t)])
    assert F.one_hot(tt.zeros(0, dtype=tt.int64, device=device), 3).shape == (0, 3)
    for fn, message in [(lambda: F.one_hot(tt.tensor([0, 5]), 3), "Class values must be smaller than num_classes."),
                        (lambda: F.one_hot(tt.tensor([0, -1]), 3), "Class values must be non-negative."),
                        (lambda: F.one_hot(tt.tensor([0.0])), "one_hot is only applicable to index tensor of type "
                                                               "LongTensor."),
                        (lambda: F.one_hot(tt.zeros(0, dtype=tt.int64)), "Can not infer total number of classes "
                                                                          "from empty tensor.")]:
        with pytest.raises(RuntimeError, match="^" + message.replace(".", r"\.") + "$"):
            fn()


def test_leaky_relu_and_normalize(device):
    x = np.array([-2.0, -0.0, 0.0, 3.0, np.nan])
    got = F.leaky_relu(_t(x, device), 0.2)
    _close(got, np.where(x > 0, x, 0.2 * x), 0)
    xt = _t([-1.5, 0.0, 2.0], device, requires_grad=True)
    F.leaky_relu(xt, 0.1).sum().backward()
    _close(xt.grad, [0.1, 0.1, 1.0], 0)          # the slope at 0, as torch
    y = _t([-1.0, 2.0], device)
    assert F.leaky_relu(y, 0.5, inplace=True) is y and to_numpy(y)[0] == -0.5
    with pytest.raises(NotImplementedError, match="\"leaky_relu_cpu\" not implemented for 'Long'"):
        F.leaky_relu(tt.tensor([1, -2]))
    v = np.array([[3.0, 4.0], [0.0, 0.0]])
    _close(F.normalize(_t(v, device)), [[0.6, 0.8], [0.0, 0.0]], 1e-12)
    _close(F.normalize(_t(v, device), p=1, dim=0), v / np.maximum(np.abs(v).sum(0), 1e-12), 1e-12)


def test_softmax_family_still_exported():
    x = tt.randn(2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for fn in (F.softmax, F.log_softmax):
            assert fn(x, 1).shape == (2, 3)
    for fn in (F.relu, F.silu, F.gelu, F.sigmoid, F.tanh):
        assert fn(x).shape == (2, 3)
    assert F.linear(x, tt.randn(4, 3)).shape == (2, 4)
