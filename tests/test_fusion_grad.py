"""Autograd of fused groups (issue 26 item 2): one DifferentiableGraphBackward node per group, the
forward one launch that also writes the intermediates the backward reads, the backward one
launch, gradients equal to eager's bit for bit, gradcheck and gradgradcheck (double backward
recomputes the group eagerly). A reduction group's backward is a broadcast of the reduced
gradient (an expand, read with stride 0 in every lane) followed by the prologue's backward:
one pointwise group, one launch."""
from __future__ import annotations

import numpy as np
import pytest

import tritensor as tt
from tritensor.backends import triton as tb

from test_fusion import boxes, iou_loss, iou_mean


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("TRITENSOR_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "fused_kernels"))


@pytest.fixture
def launches(monkeypatch):
    seen = []
    real = tb._run
    monkeypatch.setattr(tb, "_run", lambda kernel, *a, **k: (seen.append(kernel), real(kernel, *a, **k))[1])
    return seen


def _host(t):
    return t.detach().cpu().numpy()


def _grads(fn, args, g):
    return [_host(x) for x in tt.autograd.grad(fn(*args), args, g)]


def test_iou_gradients_equal_eager_and_one_node(device):
    n = 2500 if device == "cpu" else 300               # emulated: 3 blocks of 128
    args = [tt.tensor(c, device=device, requires_grad=True) for c in boxes(n, seed=1)]
    g = tt.tensor(np.random.default_rng(2).random(n).astype(np.float32), device=device)
    f = tt.jit.trace(iou_loss, tuple(args))
    out = f(*args)
    assert type(out.grad_fn).__name__ == "DifferentiableGraphBackward"
    np.testing.assert_array_equal(_host(out), _host(iou_loss(*args)))
    for got, want in zip(_grads(f, args, g), _grads(iou_loss, args, g)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.emulated_blocks("fast")
@pytest.mark.parametrize("loss", ["iou_loss", "iou_mean"])
def test_iou_forward_and_backward_are_one_launch_each(launches, loss):
    """The loss per box, and its mean (the reduction and its backward's broadcast inside the
    groups): one launch forward, one backward, eager's gradients bit for bit."""
    fn = {"iou_loss": iou_loss, "iou_mean": iou_mean}[loss]
    args = [tt.tensor(c, device="cuda", requires_grad=True) for c in boxes(300, seed=3)]
    g = tt.ones(300, device="cuda") if loss == "iou_loss" else tt.tensor(1.0, device="cuda")
    f = tt.jit.trace(fn, tuple(args))
    tt.autograd.grad(f(*args), args, g)                 # the first call traces and generates
    launches.clear()
    out = f(*args)
    assert type(out.grad_fn).__name__ == "DifferentiableGraphBackward"
    assert [k.fn.__name__ for k in launches] == ["fused_kernel"]
    launches.clear()
    got = tt.autograd.grad(out, args, g)
    assert [k.fn.__name__ for k in launches] == ["fused_kernel"]
    out = fn(*args)
    launches.clear()
    want = tt.autograd.grad(out, args, g)
    assert len(launches) >= 20                          # eager's backward
    for a, b in zip(got, want):
        assert _host(a).tobytes() == _host(b).tobytes()


def test_the_forward_saves_only_what_the_backward_reads():
    args = [tt.tensor([0.5, 2.0], requires_grad=True), tt.tensor([3.0, -1.0], requires_grad=True)]

    def f(x, y):
        return (x * y + 1).exp() * 2                   # exp's backward reads exp's output only

    g = tt.jit.trace(f, tuple(args))
    out = g(*args)
    group = [n for n in g.graph_for(*args).nodes if n.kind == "prim::FusionGroup"][0]
    d = next(iter(group.attrs["_plans"].values()))
    assert d.n_inter == 1 and sorted(d.saved_inputs) == [0, 1]   # exp(x*y+1) kept; mul's backward reads x, y
    x, y = np.array([0.5, 2.0]), np.array([3.0, -1.0])
    gx, gy = tt.autograd.grad(out, args, tt.ones(2))
    e = np.exp(x * y + 1) * 2
    np.testing.assert_allclose(_host(gx), e * y, rtol=1e-6)
    np.testing.assert_allclose(_host(gy), e * x, rtol=1e-6)


def test_broadcast_input_gradient_is_reduced(device):
    x = tt.tensor(np.linspace(-1, 1, 12).reshape(3, 4), device=device, requires_grad=True)
    b = tt.tensor([0.5, -0.25, 2.0, 1.0], device=device, requires_grad=True)

    def f(x, b):
        return (x * b + b).tanh() * x

    g = tt.jit.trace(f, (x, b))
    out = g(x, b)
    gx, gb = tt.autograd.grad(out, (x, b), tt.ones(3, 4, device=device))
    xn, bn = np.linspace(-1, 1, 12).reshape(3, 4), np.array([0.5, -0.25, 2.0, 1.0])
    t = np.tanh(xn * bn + bn)
    np.testing.assert_allclose(_host(gx), t + xn * (1 - t ** 2) * bn, rtol=1e-12)
    assert gb.dtype == tt.float32                         # b's own dtype (x is float64)
    np.testing.assert_allclose(_host(gb), (xn * (1 - t ** 2) * (xn + 1)).sum(0), rtol=1e-6)


def test_only_inputs_that_require_grad_get_gradients(device):
    x = tt.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = tt.tensor([3.0, 4.0], device=device)

    def f(x, y):
        return x * y - y / x

    g = tt.jit.trace(f, (x, y))
    (gx,) = tt.autograd.grad(g(x, y), (x,), tt.ones(2, device=device))
    np.testing.assert_allclose(_host(gx), [3.0 + 3.0, 4.0 + 4.0 / 4.0], rtol=1e-6)


def test_gradcheck_and_gradgradcheck(device):
    rng = np.random.default_rng(5)
    n = 5 if device == "cpu" else 2
    x = tt.tensor(rng.random(n) + 0.5, device=device, requires_grad=True)
    y = tt.tensor(rng.random(n) + 0.5, device=device, requires_grad=True)

    def f(x, y):
        return (x * y).sigmoid() / (x + y) - x.exp() * 0.5

    g = tt.jit.trace(f, (x, y))
    assert type(g(x, y).grad_fn).__name__ == "DifferentiableGraphBackward"
    assert tt.autograd.gradcheck(g, (x, y))
    if device == "cpu":                                 # (the emulated double backward: ~10 s)
        assert tt.autograd.gradgradcheck(g, (x, y))


def test_iou_mean_gradients_equal_eager_and_float64(device):
    cols = boxes(2500 if device == "cpu" else 300, seed=7)
    args = [tt.tensor(c, device=device, requires_grad=True) for c in cols]
    f = tt.jit.trace(iou_mean, tuple(args))
    got = tt.autograd.grad(f(*args), args)
    want = tt.autograd.grad(iou_mean(*args), args)
    for a, b in zip(got, want):
        assert _host(a).tobytes() == _host(b).tobytes()
    # d/d px2 of mean(1 - inter/union), in float64 (boxes overlap: clamp and min are active)
    px1, py1, px2, py2, tx1, ty1, tx2, ty2 = (c.astype(np.float64) for c in cols)
    iw = np.minimum(px2, tx2) - np.maximum(px1, tx1)
    ih = np.minimum(py2, ty2) - np.maximum(py1, ty1)
    inter = np.clip(iw, 0, None) * np.clip(ih, 0, None)
    union = (px2 - px1) * (py2 - py1) + (tx2 - tx1) * (ty2 - ty1) - inter + 1e-6
    d_inter = np.where((iw > 0) & (px2 < tx2), np.clip(ih, 0, None), 0.0)
    d_union = (py2 - py1) - d_inter
    want_px2 = -(d_inter * union - inter * d_union) / union ** 2 / len(px1)
    np.testing.assert_allclose(_host(got[2]), want_px2, rtol=1e-4, atol=1e-9)


def test_gradcheck_of_a_reduction_group(device):
    rng = np.random.default_rng(8)
    shape = (3, 4) if device == "cpu" else (2, 3)
    x = tt.tensor(rng.random(shape) + 0.5, device=device, requires_grad=True)
    y = tt.tensor(rng.random(shape[1]) + 0.5, device=device, requires_grad=True)

    def f(x, y):
        return ((x * y).sigmoid() / (x + y)).sum(1, keepdim=True) * 0.5 + 1

    def m(x, y):
        return 1 - (x * y - x.exp()).mean()

    for fn in (f, m):
        g = tt.jit.trace(fn, (x, y))
        assert type(g(x, y).grad_fn).__name__ == "DifferentiableGraphBackward"
        assert tt.autograd.gradcheck(g, (x, y))


@pytest.mark.emulated_blocks("fast")
def test_a_mean_over_a_dim_is_one_launch_each_way(launches):
    """mean(1) without keepdim: its backward is g / n unsqueezed and expanded; the unsqueeze is
    moved onto g (a view of the group's input), so the division, the expand and the prologue's
    backward are one group. Forward one launch, backward one, eager's bits, the float64 formula."""
    rng = np.random.default_rng(9)
    xn, wn = rng.standard_normal((5, 37)).astype(np.float32), rng.standard_normal(37).astype(np.float32)
    x = tt.tensor(xn, device="cuda", requires_grad=True)
    w = tt.tensor(wn, device="cuda", requires_grad=True)
    g = tt.tensor(np.linspace(-1, 1, 5).astype(np.float32), device="cuda")

    def f(x, w):
        return (x * w).tanh().mean(1) * 3

    h = tt.jit.trace(f, (x, w))
    tt.autograd.grad(h(x, w), (x, w), g)
    launches.clear()
    out = h(x, w)
    assert [k.fn.__name__ for k in launches] == ["fused_kernel"]
    launches.clear()
    gx, gw = tt.autograd.grad(out, (x, w), g)
    assert [k.fn.__name__ for k in launches] == ["fused_kernel"]
    for a, b in zip((gx, gw), tt.autograd.grad(f(x, w), (x, w), g)):
        assert _host(a).tobytes() == _host(b).tobytes()
    t = np.tanh(xn.astype(np.float64) * wn)
    d = (1 - t ** 2) * np.linspace(-1, 1, 5)[:, None] * 3 / 37
    np.testing.assert_allclose(_host(gx), d * wn, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(_host(gw), (d * xn).sum(0), rtol=1e-4, atol=1e-6)
