"""tt.nn layers, nn.init and nn.utils: forward values against NumPy on cpu and cuda,
initialisation bounds and statistics against torch's formulas, extra_repr strings as torch
2.13 prints them, gradient clipping against a NumPy norm."""
import math
import warnings

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy
from tritensor import nn

RNG = np.random.default_rng(0)


def _t(arr, device, **kw):
    return tt.tensor(np.asarray(arr, dtype=np.float32), device=device, **kw)


def _log_softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


# --------------------------------------------------------------------------- repr
@pytest.mark.parametrize("module, text", [
    (lambda: nn.Linear(3, 4, bias=False), "Linear(in_features=3, out_features=4, bias=False)"),
    (lambda: nn.Embedding(10, 3, padding_idx=0), "Embedding(10, 3, padding_idx=0)"),
    (lambda: nn.Embedding(10, 3, padding_idx=-1), "Embedding(10, 3, padding_idx=9)"),
    (lambda: nn.LeakyReLU(), "LeakyReLU(negative_slope=0.01)"),
    (lambda: nn.LeakyReLU(0.2, True), "LeakyReLU(negative_slope=0.2, inplace=True)"),
    (lambda: nn.Softmax(dim=1), "Softmax(dim=1)"),
    (lambda: nn.LogSoftmax(1), "LogSoftmax(dim=1)"),
    (lambda: nn.Flatten(), "Flatten(start_dim=1, end_dim=-1)"),
    (lambda: nn.Unflatten(1, (2, 3)), "Unflatten(dim=1, unflattened_size=(2, 3))"),
    (lambda: nn.SiLU(), "SiLU()"),
    (lambda: nn.ReLU(), "ReLU()"),
    (lambda: nn.Identity(), "Identity()"),
    (lambda: nn.CrossEntropyLoss(), "CrossEntropyLoss()"),
    (lambda: nn.BCEWithLogitsLoss(pos_weight=tt.ones(3)), "BCEWithLogitsLoss()"),
    (lambda: nn.SmoothL1Loss(beta=0.5), "SmoothL1Loss()"),
    (lambda: nn.LayerNorm((2, 3), elementwise_affine=False),
     "LayerNorm((2, 3), eps=1e-05, elementwise_affine=False, bias=False)"),
    (lambda: nn.LayerNorm(4, bias=False), "LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=False)"),
    (lambda: nn.Dropout(), "Dropout(p=0.5, inplace=False)"),
    (lambda: nn.GELU(), "GELU(approximate='none')"),
])
def test_extra_repr_as_torch(module, text):
    assert repr(module()) == text


# --------------------------------------------------------------------------- Linear and init
def test_linear_default_init_bounds_and_factory_kwargs(device):
    lin = nn.Linear(20, 50, device=device, dtype=tt.float64)
    assert lin.weight.device.type == device and lin.weight.dtype is tt.float64
    assert lin.weight.shape == (50, 20) and lin.bias.shape == (50,)
    bound = 1 / math.sqrt(20)            # kaiming_uniform_(a=sqrt(5)) gives exactly 1/sqrt(fan_in)
    w, b = to_numpy(lin.weight), to_numpy(lin.bias)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.1 * bound / math.sqrt(3)
    assert np.abs(b).max() <= bound and np.unique(b).size == 50
    assert nn.Linear(3, 2).weight.dtype is tt.float32
    x = RNG.standard_normal((3, 20))
    out = lin(tt.tensor(x, device=device))
    np.testing.assert_allclose(to_numpy(out), x @ w.T + b, rtol=1e-10)
    no_bias = nn.Linear(20, 2, bias=False)
    assert no_bias.bias is None and [n for n, _ in no_bias.named_parameters()] == ["weight"]


def test_calculate_gain_and_fans():
    gain = nn.init.calculate_gain
    assert gain("linear") == 1 and gain("conv2d") == 1 and gain("sigmoid") == 1
    assert gain("tanh") == 5.0 / 3 and gain("relu") == math.sqrt(2.0) and gain("selu") == 0.75
    assert gain("leaky_relu") == math.sqrt(2.0 / (1 + 0.01 ** 2))
    assert gain("leaky_relu", 0.2) == math.sqrt(2.0 / 1.04) and gain("leaky_relu", 1) == 1.0
    with pytest.raises(ValueError, match="^Unsupported nonlinearity foo$"):
        gain("foo")
    with pytest.raises(ValueError, match="^negative_slope True not a valid number$"):
        gain("leaky_relu", True)
    assert nn.init._calculate_fan_in_and_fan_out(tt.empty(5, 3, 2, 2)) == (12, 20)
    with pytest.raises(ValueError, match="^Fan in and fan out can not be computed for tensor with fewer than 2 "
                                         "dimensions$"):
        nn.init._calculate_fan_in_and_fan_out(tt.empty(3))
    with pytest.raises(ValueError, match=r"Mode fan_avg not supported, please use one of \['fan_in', 'fan_out'\]"):
        nn.init.kaiming_uniform_(tt.empty(2, 2), mode="fan_avg")


def test_init_bounds_and_stds(device):
    # the statistics need a few thousand draws: on the emulated cuda device (slow random kernel)
    # only the bounds are checked, on a small tensor
    tt.manual_seed(1234)
    fan_out, fan_in = (64, 48) if device == "cpu" else (8, 6)
    w = tt.empty(fan_out, fan_in, device=device)
    nn.init.xavier_uniform_(w, gain=2.0)
    a = 2.0 * math.sqrt(6.0 / (fan_in + fan_out))
    v = to_numpy(w)
    assert np.abs(v).max() <= a and np.abs(v).max() > 0.7 * a
    nn.init.kaiming_uniform_(w, a=0, mode="fan_out", nonlinearity="relu")
    bound = math.sqrt(2.0) * math.sqrt(3.0 / fan_out)
    v = to_numpy(w)
    assert np.abs(v).max() <= bound and np.abs(v).max() > 0.7 * bound
    nn.init.uniform_(w, -0.25, 0.75)
    assert to_numpy(w).min() >= -0.25 and to_numpy(w).max() <= 0.75
    nn.init.constant_(w, 0.3)
    np.testing.assert_array_equal(to_numpy(w), np.full((fan_out, fan_in), 0.3, dtype=np.float32))
    nn.init.zeros_(w)
    assert not to_numpy(w).any()
    nn.init.ones_(w)
    assert (to_numpy(w) == 1).all()
    if device == "cpu":
        nn.init.kaiming_normal_(w, nonlinearity="relu")
        assert abs(to_numpy(w).std() / (math.sqrt(2.0) / math.sqrt(fan_in)) - 1) < 0.06
        nn.init.kaiming_normal_(w, a=0.2, mode="fan_out")
        assert abs(to_numpy(w).std() / (math.sqrt(2.0 / 1.04) / math.sqrt(fan_out)) - 1) < 0.06
        nn.init.xavier_normal_(w)
        assert abs(to_numpy(w).std() / math.sqrt(2.0 / (fan_in + fan_out)) - 1) < 0.06
        nn.init.normal_(w, mean=3.0, std=0.5)
        assert abs(to_numpy(w).mean() - 3.0) < 0.03 and abs(to_numpy(w).std() - 0.5) < 0.03


def test_init_under_no_grad_keeps_parameter_and_generator():
    p = nn.Parameter(tt.empty(4, 5))
    out = nn.init.kaiming_uniform_(p, a=math.sqrt(5))
    assert out is p and p.is_leaf and p.grad_fn is None and p.requires_grad
    g1, g2 = tt.Generator(), tt.Generator()
    g1.manual_seed(7)
    g2.manual_seed(7)
    a = nn.init.xavier_uniform_(tt.empty(3, 4), generator=g1)
    b = nn.init.xavier_uniform_(tt.empty(3, 4), generator=g2)
    np.testing.assert_array_equal(to_numpy(a), to_numpy(b))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        nn.init.kaiming_uniform_(tt.empty(0, 3))
    assert "Initializing zero-element tensors is a no-op" in str(w[0].message)


def _truncated_mean(mean, std, a, b):
    pdf = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)   # noqa: E731
    cdf = lambda z: (1 + math.erf(z / math.sqrt(2))) / 2             # noqa: E731
    al, be = (a - mean) / std, (b - mean) / std
    return mean + std * (pdf(al) - pdf(be)) / (cdf(be) - cdf(al))


@pytest.mark.parametrize("mean, std, a, b", [(0.0, 1.0, -2.0, 2.0),     # rejection of normal draws
                                             (0.0, 1.0, 1.0, 3.0),      # uniform proposals (p < 0.3)
                                             (0.5, 0.2, 0.0, 0.6)])
def test_trunc_normal_within_bounds(mean, std, a, b):
    tt.manual_seed(0)
    t = nn.init.trunc_normal_(tt.empty(4000), mean=mean, std=std, a=a, b=b)
    v = to_numpy(t)
    assert v.min() >= a and v.max() <= b
    assert abs(v.mean() - _truncated_mean(mean, std, a, b)) < 0.05 * std


def test_trunc_normal_on_cuda():
    v = to_numpy(nn.init.trunc_normal_(tt.empty(128, device="cuda"), std=0.02, a=-0.04, b=0.04))
    assert v.min() >= -0.04 and v.max() <= 0.04 and v.std() > 0.01


def test_eye_dirac_orthogonal():
    np.testing.assert_array_equal(to_numpy(nn.init.eye_(tt.empty(2, 3))), np.eye(2, 3))
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        nn.init.eye_(tt.empty(2))
    d = to_numpy(nn.init.dirac_(tt.empty(2, 3, 3)))
    expected = np.zeros((2, 3, 3))
    expected[0, 0, 1] = expected[1, 1, 1] = 1
    np.testing.assert_array_equal(d, expected)
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        nn.init.dirac_(tt.empty(3, 3, 3), groups=2)
    for shape in ((4, 6), (6, 4)):
        q = to_numpy(nn.init.orthogonal_(tt.empty(*shape), gain=2.0)).astype(np.float64)
        small = q @ q.T if shape[0] < shape[1] else q.T @ q
        np.testing.assert_allclose(small, 4 * np.eye(4), atol=1e-5)


# --------------------------------------------------------------------------- activations and shapes
def _gelu(x, approximate):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


@pytest.mark.parametrize("make, ref", [
    (lambda: nn.ReLU(), lambda x: np.maximum(x, 0)),
    (lambda: nn.LeakyReLU(0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    (lambda: nn.Tanh(), np.tanh),
    (lambda: nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    (lambda: nn.GELU(), lambda x: _gelu(x, "none")),
    (lambda: nn.GELU(approximate="tanh"), lambda x: _gelu(x, "tanh")),
    (lambda: nn.SiLU(), lambda x: x / (1 + np.exp(-x))),
    (lambda: nn.Softmax(dim=1), lambda x: np.exp(_log_softmax(x, 1))),
    (lambda: nn.LogSoftmax(dim=0), lambda x: _log_softmax(x, 0)),
    (lambda: nn.Identity(54, unused=1), lambda x: x),
], ids=["relu", "leaky_relu", "tanh", "sigmoid", "gelu", "gelu_tanh", "silu", "softmax", "log_softmax",
        "identity"])
def test_activation_forward(device, make, ref):
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    np.testing.assert_allclose(to_numpy(make()(_t(x, device))), ref(x.astype(np.float64)), rtol=2e-5, atol=1e-6)


def test_inplace_activations(device):
    x = _t([-1.0, 2.0], device)
    assert nn.ReLU(inplace=True)(x) is x and to_numpy(x).tolist() == [0.0, 2.0]
    y = _t([-1.0, 2.0], device)
    nn.LeakyReLU(0.5, inplace=True)(y)
    assert to_numpy(y).tolist() == [-0.5, 2.0]


def test_flatten_unflatten(device):
    x = _t(np.arange(24).reshape(2, 3, 4), device)
    assert nn.Flatten()(x).shape == (2, 12) and nn.Flatten(0, 1)(x).shape == (6, 4)
    np.testing.assert_array_equal(to_numpy(nn.Flatten()(x)), np.arange(24).reshape(2, 12))
    assert nn.Unflatten(2, (2, 2))(x).shape == (2, 3, 2, 2)
    with pytest.raises(TypeError, match="unflattened_size must be tuple of ints, but found element of type float"):
        nn.Unflatten(1, (2, 2.0))
    with pytest.raises(TypeError, match="unflattened_size must be a tuple of ints, but found type int"):
        nn.Unflatten(1, 4)


def test_dropout_train_and_eval(device):
    tt.manual_seed(0)
    with pytest.raises(ValueError) as e:
        nn.Dropout(1.5)
    assert str(e.value) == "dropout probability has to be between 0 and 1, but got 1.5"
    drop = nn.Dropout(0.5)
    n = 2000 if device == "cpu" else 500        # the emulated device's random kernel is slow
    x = tt.ones(n, device=device)
    v = to_numpy(drop(x))
    assert set(np.unique(v).tolist()) <= {0.0, 2.0} and abs((v == 0).mean() - 0.5) < 0.08
    drop.eval()
    np.testing.assert_array_equal(to_numpy(drop(x)), np.ones(n))
    assert (to_numpy(nn.Dropout(1.0)(x)) == 0).all()
    np.testing.assert_array_equal(to_numpy(nn.Dropout(0.0)(x)), np.ones(n))


def test_layer_norm(device):
    x = RNG.standard_normal((4, 2, 3)).astype(np.float32)
    ln = nn.LayerNorm((2, 3), eps=1e-5, device=device)
    assert (to_numpy(ln.weight) == 1).all() and not to_numpy(ln.bias).any()
    with tt.no_grad():
        ln.weight.copy_(_t(RNG.standard_normal((2, 3)), device))
        ln.bias.fill_(0.5)
    mu = x.mean(axis=(1, 2), keepdims=True)
    var = x.var(axis=(1, 2), keepdims=True)
    ref = (x - mu) / np.sqrt(var + 1e-5) * to_numpy(ln.weight) + 0.5
    np.testing.assert_allclose(to_numpy(ln(_t(x, device))), ref, rtol=1e-4, atol=1e-5)
    plain = nn.LayerNorm(3, elementwise_affine=False)
    assert plain.weight is None and list(plain.parameters()) == []
    np.testing.assert_allclose(to_numpy(plain(_t(x, "cpu"))),
                               (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5),
                               rtol=1e-4, atol=1e-5)


def test_embedding(device):
    emb = nn.Embedding(6, 3, padding_idx=-2, device=device)
    assert emb.padding_idx == 4 and emb.weight.device.type == device
    w = to_numpy(emb.weight)
    assert not w[4].any() and w[[0, 1, 2, 3, 5]].all()
    idx = tt.tensor([[0, 4], [5, 5]], device=device)
    out = emb(idx)
    np.testing.assert_array_equal(to_numpy(out), w[[[0, 4], [5, 5]]])
    out.sum().backward()
    g = to_numpy(emb.weight.grad)
    np.testing.assert_array_equal(g[[0, 4, 5, 1]], [[1, 1, 1], [0, 0, 0], [2, 2, 2], [0, 0, 0]])
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)
    pre = nn.Embedding.from_pretrained(_t([[1.0, 2.0], [3.0, 4.0]], device))
    assert not pre.weight.requires_grad and repr(pre) == "Embedding(2, 2)"
    np.testing.assert_array_equal(to_numpy(pre(tt.tensor([1], device=device))), [[3.0, 4.0]])
    assert nn.Embedding.from_pretrained(tt.ones(2, 2), freeze=False).weight.requires_grad
    with pytest.raises(AssertionError, match="Shape of weight does not match"):
        nn.Embedding(3, 2, _weight=tt.ones(2, 2))


# --------------------------------------------------------------------------- losses
def test_regression_losses(device):
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    y = RNG.standard_normal((4, 3)).astype(np.float32)
    d = (x - y).astype(np.float64)
    xt, yt = _t(x, device), _t(y, device)
    np.testing.assert_allclose(to_numpy(nn.MSELoss()(xt, yt)), (d ** 2).mean(), rtol=1e-5)
    np.testing.assert_allclose(to_numpy(nn.L1Loss(reduction="sum")(xt, yt)), np.abs(d).sum(), rtol=1e-5)
    np.testing.assert_allclose(to_numpy(nn.L1Loss(reduction="none")(xt, yt)), np.abs(d), rtol=1e-5)
    beta = 0.5
    smooth = np.where(np.abs(d) < beta, 0.5 * d ** 2 / beta, np.abs(d) - 0.5 * beta)
    np.testing.assert_allclose(to_numpy(nn.SmoothL1Loss(beta=beta)(xt, yt)), smooth.mean(), rtol=1e-5)
    huber = np.where(np.abs(d) < beta, 0.5 * d ** 2, beta * (np.abs(d) - 0.5 * beta))
    np.testing.assert_allclose(to_numpy(nn.HuberLoss(delta=beta)(xt, yt)), huber.mean(), rtol=1e-5)


def test_legacy_reduction_args_warn():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        loss = nn.MSELoss(size_average=False)
    assert loss.reduction == "sum"
    assert str(w[0].message) == "size_average and reduce args will be deprecated, please use reduction='sum' instead."
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert nn.L1Loss(reduce=False).reduction == "none"
        assert nn.CrossEntropyLoss(size_average=True, reduce=True).reduction == "mean"


def test_classification_losses(device):
    logits = RNG.standard_normal((5, 4)).astype(np.float32)
    target = np.array([0, 3, 1, -100, 2])
    weight = np.array([1.0, 2.0, 0.5, 1.5], dtype=np.float32)
    logp = _log_softmax(logits.astype(np.float64), 1)
    keep = target != -100
    picked = -logp[np.arange(5)[keep], target[keep]]
    w = weight[target[keep]]
    xt, tt_target = _t(logits, device), tt.tensor(target, device=device)
    ce = nn.CrossEntropyLoss(weight=_t(weight, device))
    assert "weight" in dict(ce.named_buffers()) and list(ce.state_dict().keys()) == ["weight"]
    np.testing.assert_allclose(to_numpy(ce(xt, tt_target)), (w * picked).sum() / w.sum(), rtol=1e-5)
    np.testing.assert_allclose(to_numpy(nn.NLLLoss(reduction="sum")(_t(logp, device), tt_target)), picked.sum(),
                               rtol=1e-5)
    t2 = np.array([0, 3, 1, 2, 2])
    eps = 0.1
    lp = _log_softmax(logits.astype(np.float64), 1)
    smooth = (1 - eps) * -lp[np.arange(5), t2] + eps * (-lp).mean(axis=1)
    np.testing.assert_allclose(to_numpy(nn.CrossEntropyLoss(label_smoothing=eps)(xt, tt.tensor(t2, device=device))),
                               smooth.mean(), rtol=1e-5)


def test_binary_losses(device):
    z = RNG.standard_normal((3, 4)).astype(np.float32)
    y = (RNG.random((3, 4)) > 0.5).astype(np.float32)
    w = RNG.random(4).astype(np.float32) + 0.5
    pw = np.array([1.0, 2.0, 3.0, 0.5], dtype=np.float32)
    p = 1 / (1 + np.exp(-z.astype(np.float64)))
    bce = -(y * np.log(p) + (1 - y) * np.log(1 - p))
    zt, yt = _t(z, device), _t(y, device)
    np.testing.assert_allclose(to_numpy(nn.BCELoss(weight=_t(w, device))(_t(p, device), yt)), (w * bce).mean(),
                               rtol=1e-5)
    loss = nn.BCEWithLogitsLoss(pos_weight=_t(pw, device), reduction="sum")
    assert [n for n, _ in loss.named_buffers()] == ["pos_weight"]     # weight=None: a None buffer
    ref = -(pw * y * np.log(p) + (1 - y) * np.log(1 - p))
    np.testing.assert_allclose(to_numpy(loss(zt, yt)), ref.sum(), rtol=1e-5)


def test_loss_buffers_follow_module_to():
    loss = nn.CrossEntropyLoss(weight=tt.ones(3)).to("cuda")
    assert loss.weight.device.type == "cuda"


# --------------------------------------------------------------------------- utils
def _params_with_grads(device, grads):
    params = []
    for g in grads:
        p = nn.Parameter(tt.zeros(*np.shape(g), device=device))
        p.grad = _t(g, device)
        params.append(p)
    return params


@pytest.mark.parametrize("norm_type", [2.0, 1, math.inf])
def test_clip_grad_norm(device, norm_type):
    grads = [RNG.standard_normal((3, 2)).astype(np.float32), RNG.standard_normal(4).astype(np.float32)]
    flat = np.concatenate([g.ravel() for g in grads]).astype(np.float64)
    total = np.linalg.norm(flat, ord=norm_type)
    params = _params_with_grads(device, grads)
    out = nn.utils.clip_grad_norm_(iter(params), max_norm=0.5, norm_type=norm_type)
    assert isinstance(out, tt.Tensor) and out.dim() == 0 and out.device.type == device
    np.testing.assert_allclose(out.item(), total, rtol=1e-5)
    coef = min(0.5 / (total + 1e-6), 1.0)
    for p, g in zip(params, grads):
        np.testing.assert_allclose(to_numpy(p.grad), g * coef, rtol=1e-5)
    # under the limit nothing changes
    params = _params_with_grads(device, grads)
    nn.utils.clip_grad_norm_(params, max_norm=1e6, norm_type=norm_type)
    np.testing.assert_allclose(to_numpy(params[1].grad), grads[1], rtol=1e-6)


def test_clip_grad_norm_edge_cases():
    p = nn.Parameter(tt.ones(2))
    assert nn.utils.clip_grad_norm_([p], 1.0).item() == 0.0             # no grads: tensor(0.)
    p.grad = tt.tensor([math.inf, 1.0])
    with pytest.raises(RuntimeError) as e:
        nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    assert str(e.value) == (
        "The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be clipped. To "
        "disable this error and scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        nn.utils.clip_grad_norm_((q for q in []), 1.0)
    assert "empty generator" in str(w[0].message)


def test_clip_grad_value_and_vector_conversion(device):
    params = _params_with_grads(device, [[-3.0, 0.2], [[5.0], [-0.1]]])
    nn.utils.clip_grad_value_(params, 1.0)
    assert to_numpy(params[0].grad).tolist() == [-1.0, np.float32(0.2)]
    assert to_numpy(params[1].grad).ravel().tolist() == [1.0, np.float32(-0.1)]
    lin = nn.Linear(2, 3, device=device)
    vec = nn.utils.parameters_to_vector(lin.parameters())
    np.testing.assert_array_equal(to_numpy(vec), np.concatenate([to_numpy(lin.weight).ravel(),
                                                                 to_numpy(lin.bias)]))
    w = lin.weight
    nn.utils.vector_to_parameters(tt.arange(9, dtype=tt.float32, device=device), lin.parameters())
    assert lin.weight is w
    np.testing.assert_array_equal(to_numpy(lin.weight), np.arange(6).reshape(3, 2))
    np.testing.assert_array_equal(to_numpy(lin.bias), [6, 7, 8])
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        nn.utils.vector_to_parameters([1.0], lin.parameters())


# --------------------------------------------------------------------------- end to end
def test_mlp_gradients_match_numpy_backprop(device):
    """Sequential(Linear, Tanh, Linear) + MSELoss: parameter gradients against hand-written
    backpropagation in NumPy."""
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2)).to(device)
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    y = RNG.standard_normal((4, 2)).astype(np.float32)
    loss = nn.MSELoss()(model(_t(x, device)), _t(y, device))
    loss.backward()
    w1, b1, w2, b2 = (to_numpy(p).astype(np.float64) for p in model.parameters())
    h = np.tanh(x @ w1.T + b1)
    out = h @ w2.T + b2
    np.testing.assert_allclose(loss.item(), ((out - y) ** 2).mean(), rtol=1e-5)
    d_out = 2 * (out - y) / out.size
    d_pre = (d_out @ w2) * (1 - h ** 2)
    expected = [d_pre.T @ x, d_pre.sum(0), d_out.T @ h, d_out.sum(0)]
    for p, g in zip(model.parameters(), expected):
        np.testing.assert_allclose(to_numpy(p.grad), g, rtol=1e-4, atol=1e-6)


def test_default_init_follows_manual_seed(device):
    tt.manual_seed(0)
    a = nn.Linear(3, 2, device=device)
    tt.manual_seed(0)
    b = nn.Linear(3, 2, device=device)
    c = nn.Linear(3, 2, device=device)
    np.testing.assert_array_equal(to_numpy(a.weight), to_numpy(b.weight))
    np.testing.assert_array_equal(to_numpy(a.bias), to_numpy(b.bias))
    assert not np.array_equal(to_numpy(b.weight), to_numpy(c.weight))
