"""Normalisation layers beyond their op records (tests/opinfo_norm.py): BatchNorm's running
statistics over several steps against a hand computation (momentum and the cumulative average,
the unbiased running variance, num_batches_tracked), eval mode, the modules' state_dict keys,
loading, resets and reprs (torch's strings), torch's errors and node names, layouts, mixed
dtypes, and values recorded from torch 2.13 (tests/data/make_norm_values.py)."""
import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy

F = tt.nn.functional
nn = tt.nn


def _np(t):
    return to_numpy(t).astype(np.float64)


# --------------------------------------------------------------------------- running statistics
def _batches():
    rng = np.random.default_rng(7)
    return [rng.standard_normal((5, 3, 4)) * (k + 1) + k for k in range(3)]


@pytest.mark.parametrize("momentum", [0.1, None])
def test_running_statistics_over_several_steps_against_a_hand_computation(momentum, device):
    bn = nn.BatchNorm1d(3, momentum=momentum).to(device)
    mean, var = np.zeros(3), np.ones(3)
    for k, b in enumerate(_batches(), start=1):
        out = bn(tt.tensor(b, dtype=tt.float32, device=device))
        m, v = b.mean((0, 2)), b.var((0, 2))
        factor = momentum if momentum is not None else 1.0 / k     # None: the cumulative average
        mean = (1 - factor) * mean + factor * m
        var = (1 - factor) * var + factor * v * 20 / 19           # the unbiased variance (n = 20)
        np.testing.assert_allclose(_np(out), (b - m[:, None]) / np.sqrt(v[:, None] + 1e-5), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(_np(bn.running_mean), mean, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(_np(bn.running_var), var, rtol=1e-5)
        assert bn.num_batches_tracked.item() == k and bn.num_batches_tracked.dtype is tt.int64
    bn.eval()                  # eval: the running statistics normalise, and do not move
    x = tt.tensor(_batches()[0], dtype=tt.float32, device=device)
    np.testing.assert_allclose(_np(bn(x)), (_batches()[0] - mean[:, None]) / np.sqrt(var[:, None] + 1e-5),
                               rtol=1e-4, atol=1e-5)
    assert bn.num_batches_tracked.item() == 3
    np.testing.assert_allclose(_np(bn.running_mean), mean, rtol=1e-5, atol=1e-6)


def test_without_tracked_statistics_batch_statistics_are_used_in_eval_too():
    bn = nn.BatchNorm2d(2, track_running_stats=False, affine=False)
    assert bn.running_mean is None and bn.num_batches_tracked is None
    assert list(bn.state_dict()) == []
    bn.eval()
    x = np.random.default_rng(1).standard_normal((3, 2, 2, 2))
    want = (x - x.mean((0, 2, 3), keepdims=True)) / np.sqrt(x.var((0, 2, 3), keepdims=True) + 1e-5)
    np.testing.assert_allclose(_np(bn(tt.tensor(x))), want, rtol=1e-6, atol=1e-7)


def _recorded_inputs():
    """The inputs of tests/data/make_norm_values.py (the same NumPy expressions)."""
    i = np.arange(2 * 4 * 3, dtype=np.float64).reshape(2, 4, 3)
    return ((i * 7) % 11) / 3 - 1.2, np.array([0.5, -1.0, 2.0, 1.5]), np.array([0.1, 0.2, -0.3, 0.0])


def test_values_recorded_from_torch():
    x_np, w_np, b_np = _recorded_inputs()
    x = tt.tensor(x_np, requires_grad=True)
    w, b = tt.tensor(w_np), tt.tensor(b_np)
    bn = nn.BatchNorm1d(4).double()
    with tt.no_grad():
        bn.weight.copy_(w)
        bn.bias.copy_(b)
    y = bn(x)
    bn(x * 2 + 1)
    g = tt.linspace(-1, 1, 24, dtype=tt.float64).reshape(2, 4, 3)
    (dx,) = tt.autograd.grad(y, x, g)
    bn.eval()
    for got, want in ((y, BATCH_NORM["train"]), (dx, BATCH_NORM["dx"]), (bn.running_mean, BATCH_NORM["running_mean"]),
                      (bn.running_var, BATCH_NORM["running_var"]), (bn(x), BATCH_NORM["eval"])):
        np.testing.assert_allclose(_np(got), want, atol=2e-6)
    gn = F.group_norm(x, 2, w, b)
    (gdx,) = tt.autograd.grad(gn, x, g)
    np.testing.assert_allclose(_np(gn), GROUP_NORM["out"], atol=2e-6)
    np.testing.assert_allclose(_np(gdx), GROUP_NORM["dx"], atol=2e-6)
    np.testing.assert_allclose(_np(F.instance_norm(x, weight=w, bias=b)), INSTANCE_NORM, atol=2e-6)
    np.testing.assert_allclose(_np(F.local_response_norm(x, 3, alpha=0.5, beta=0.75, k=1.5)), LOCAL_RESPONSE_NORM,
                               atol=2e-6)


# --------------------------------------------------------------------------- modules
def test_state_dict_keys_reset_and_old_checkpoints():
    bn = nn.BatchNorm2d(3)
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    bn(tt.randn(4, 3, 2, 2))
    assert bn.num_batches_tracked.item() == 1 and bn.running_mean.abs().sum().item() > 0
    bn.reset_running_stats()
    assert bn.running_mean.tolist() == [0, 0, 0] and bn.running_var.tolist() == [1, 1, 1]
    assert bn.num_batches_tracked.item() == 0
    # a checkpoint from before num_batches_tracked (no version metadata): the buffer defaults
    old = {k: v for k, v in nn.BatchNorm2d(3).state_dict().items() if k != "num_batches_tracked"}
    fresh = nn.BatchNorm2d(3)
    fresh.num_batches_tracked.fill_(5)
    fresh.load_state_dict(old)
    assert fresh.num_batches_tracked.item() == 5
    # InstanceNorm keeps no running statistics by default, and says so about old checkpoints
    inorm = nn.InstanceNorm1d(3)
    assert list(inorm.state_dict()) == []
    with pytest.raises(RuntimeError, match='Unexpected running stats buffer\\(s\\) "running_mean" and '
                                           '"running_var" for InstanceNorm1d with track_running_stats=False'):
        inorm.load_state_dict({"running_mean": tt.zeros(3), "running_var": tt.ones(3)})
    assert list(nn.InstanceNorm2d(3, affine=True, track_running_stats=True).state_dict()) == [
        "weight", "bias", "running_mean", "running_var", "num_batches_tracked"]


def test_reprs_are_torchs():
    assert repr(nn.BatchNorm2d(3)) == ("BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, "
                                       "track_running_stats=True)")
    assert repr(nn.BatchNorm1d(3, affine=False, momentum=None, track_running_stats=False)) == (
        "BatchNorm1d(3, eps=1e-05, momentum=None, affine=False, bias=False, track_running_stats=False)")
    assert repr(nn.GroupNorm(2, 4)) == "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)"
    assert repr(nn.InstanceNorm2d(3)) == ("InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, "
                                          "track_running_stats=False)")
    assert repr(nn.LocalResponseNorm(3)) == "LocalResponseNorm(3, alpha=0.0001, beta=0.75, k=1.0)"


def test_instance_norm_modules_running_statistics_and_unbatched_input():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 5))
    m = nn.InstanceNorm1d(3, track_running_stats=True, momentum=0.5)
    m(tt.tensor(x, dtype=tt.float32))
    means, variances = x.mean(2), x.var(2) * 5 / 4       # per instance, the unbiased variance
    np.testing.assert_allclose(_np(m.running_mean), 0.5 * means.mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(m.running_var), 0.5 + 0.5 * variances.mean(0), rtol=1e-5)
    m.eval()         # tracked statistics normalise in eval
    np.testing.assert_allclose(_np(m(tt.tensor(x, dtype=tt.float32))),
                               (x - _np(m.running_mean)[:, None]) / np.sqrt(_np(m.running_var)[:, None] + 1e-5),
                               rtol=1e-4, atol=1e-5)
    unbatched = nn.InstanceNorm1d(3)(tt.tensor(x[0]))
    np.testing.assert_allclose(_np(unbatched), (x[0] - means[0][:, None]) / np.sqrt(x[0].var(1)[:, None] + 1e-5),
                               rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match=r"^expected input's size at dim=1 to match num_features \(4\), but got: 3\.$"):
        nn.InstanceNorm1d(4, affine=True)(tt.randn(2, 3, 4))
    with pytest.warns(UserWarning, match="input's size at dim=1 does not match num_features"):
        nn.InstanceNorm1d(4)(tt.randn(2, 3, 4))


def test_group_norm_and_local_response_norm_modules():
    x = tt.randn(2, 4, 3)
    gn = nn.GroupNorm(2, 4)
    assert list(gn.state_dict()) == ["weight", "bias"]
    np.testing.assert_allclose(_np(gn(x)), _np(F.group_norm(x, 2, gn.weight, gn.bias)), rtol=1e-6)
    with pytest.raises(ValueError, match=r"^num_channels \(3\) must be divisible by num_groups \(2\)$"):
        nn.GroupNorm(2, 3)
    np.testing.assert_allclose(_np(nn.LocalResponseNorm(2)(x)), _np(F.local_response_norm(x, 2)), rtol=1e-6)


# --------------------------------------------------------------------------- errors (torch's texts)
@pytest.mark.parametrize("call, error, text", [
    (lambda: F.batch_norm(tt.randn(1, 3), tt.zeros(3), tt.ones(3), training=True), ValueError,
     "Expected more than 1 value per channel when training, got input size tritensor.Size([1, 3])"),
    (lambda: F.batch_norm(tt.randn(4, 3, 5), tt.zeros(4), tt.ones(3), training=True), RuntimeError,
     "running_mean should contain 3 elements not 4"),
    (lambda: F.batch_norm(tt.randn(4, 3, 5), tt.zeros(3), tt.ones(3), tt.ones(4), training=True), RuntimeError,
     "weight should contain 3 elements not 4"),
    (lambda: F.batch_norm(tt.randn(4, 3, 5), None, None, training=False), RuntimeError,
     "running_mean must be defined in evaluation mode"),
    (lambda: F.batch_norm(tt.randn(4, 3, 5), tt.zeros(3), None, training=True), ValueError,
     "running_mean and running_var must either both be None or neither be None"),
    (lambda: F.batch_norm(tt.ones(4, 3, dtype=tt.int64), tt.zeros(3), tt.ones(3)), NotImplementedError,
     "\"batch_norm\" not implemented for 'Long'"),
    (lambda: F.batch_norm(tt.randn(4, 3), tt.zeros(3, dtype=tt.float64), tt.ones(3, dtype=tt.float64),
                          training=True), RuntimeError, "mixed dtype (CPU): expect parameter to have scalar type of Float"),
    (lambda: F.batch_norm(tt.randn(4, 3, dtype=tt.float64), tt.zeros(3), tt.ones(3), training=True), RuntimeError,
     "mixed dtype (CPU): all inputs must share same datatype."),
    (lambda: F.batch_norm(tt.randn(4, 3), None, None, training=True, eps=0), ValueError,
     "batch_norm eps must be positive during training, but got 0"),
    (lambda: F.batch_norm(tt.randn(4, 3), tt.zeros(3), tt.ones(3), momentum=None, training=True), TypeError,
     "batch_norm(): argument 'momentum' (position 7) must be float, not NoneType"),
    (lambda: tt.native_batch_norm(tt.randn(0, 3), None, None, None, None, True, 0.1, 1e-5), RuntimeError,
     "input tensor must have at least one element, but got input_sizes = [0, 3]"),
    (lambda: nn.BatchNorm1d(3)(tt.randn(2, 3, 4, 5)), ValueError, "expected 2D or 3D input (got 4D input)"),
    (lambda: nn.BatchNorm2d(3)(tt.randn(2, 3, 4)), ValueError, "expected 4D input (got 3D input)"),
    (lambda: nn.BatchNorm3d(3)(tt.randn(2, 3, 4)), ValueError, "expected 5D input (got 3D input)"),
    (lambda: F.group_norm(tt.randn(4, 3, 5), 2), RuntimeError, "Expected number of channels in input to be divisible "
     "by num_groups, but got input of shape [4, 3, 5] and num_groups=2"),
    (lambda: F.group_norm(tt.randn(4, 3, 5), 3, tt.ones(4)), RuntimeError, "Expected weight to be a vector of size "
     "equal to the number of channels in input, but got weight of shape [4] and input of shape [4, 3, 5]"),
    (lambda: F.group_norm(tt.randn(3), 1), RuntimeError, "Expected at least 2 dimensions for input tensor but "
     "received 1"),
    (lambda: F.group_norm(tt.randn(1, 3), 3), ValueError, "Expected more than 1 value per channel when training, "
     "got input size [1, 3]"),
    (lambda: F.group_norm(tt.ones(4, 3, dtype=tt.int64), 3), NotImplementedError,
     "\"GroupNormKernelImpl\" not implemented for 'Long'"),
    (lambda: F.instance_norm(tt.randn(2, 3, 1)), ValueError,
     "Expected more than 1 spatial element when training, got input size tritensor.Size([2, 3, 1])"),
    (lambda: F.instance_norm(tt.randn(2, 3, 4), use_input_stats=False), RuntimeError,
     "Expected running_mean and running_var to be defined when use_input_stats is false"),
    (lambda: nn.InstanceNorm1d(3)(tt.randn(2, 3, 4, 5)), ValueError, "expected 2D or 3D input (got 4D input)"),
    (lambda: F.local_response_norm(tt.randn(2, 3), 2), ValueError,
     "Expected 3D or higher dimensionality                          input (got 2 dimensions)"),
])
def test_errors_are_torchs(call, error, text):
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == text


def test_edge_cases_batch_size_one_and_empty():
    x = tt.randn(1, 3)
    np.testing.assert_allclose(_np(F.batch_norm(x, tt.zeros(3), tt.ones(3))), _np(x) / np.sqrt(1 + 1e-5), rtol=1e-6)
    rm, rv = tt.zeros(3), tt.ones(3)
    w = tt.tensor([2.0, 3.0, 4.0], requires_grad=True)
    e = F.batch_norm(tt.randn(0, 3), rm, rv, w, training=True)    # no elements: a copy times weight[0]
    assert e.shape == (0, 3) and e.grad_fn.name() == "MulBackward0"
    assert rm.tolist() == [0, 0, 0] and rv.tolist() == [1, 1, 1]
    assert F.local_response_norm(tt.randn(2, 0, 3), 2).shape == (0 + 2, 0, 3)
    out, mean, rstd = tt.native_group_norm(tt.randn(2, 4, 0), None, None, 2, 4, 0, 2, 1e-5)
    assert out.shape == (2, 4, 0) and mean.tolist() == [[0, 0], [0, 0]] and np.isnan(_np(rstd)).all()


# --------------------------------------------------------------------------- autograd, layouts, dtypes
def test_node_names_and_saved_nothing_when_frozen():
    x = tt.randn(4, 3, 2, requires_grad=True)
    w = tt.ones(3, requires_grad=True)
    y = F.batch_norm(x, None, None, w, training=True)
    assert y.grad_fn.name() == "NativeBatchNormBackward0"
    (dx,) = tt.autograd.grad(y, x, tt.ones_like(y), create_graph=True)
    assert dx.grad_fn.name() == "NativeBatchNormBackwardBackward0"
    assert F.group_norm(x, 3).grad_fn.name() == "NativeGroupNormBackward0"
    inorm = F.instance_norm(x)
    assert inorm.grad_fn.name() == "ViewBackward0"
    assert inorm.grad_fn.next_functions[0][0].name() == "NativeBatchNormBackward0"
    assert F.local_response_norm(x, 2).grad_fn.name() == "DivBackward0"
    out, mean, invstd = tt.native_batch_norm(x, w, None, None, None, True, 0.1, 1e-5)
    assert not mean.requires_grad and not invstd.requires_grad       # torch's: not differentiable outputs
    assert all(t.requires_grad for t in tt.native_group_norm(x, None, None, 4, 3, 2, 3, 1e-5))
    frozen = nn.BatchNorm1d(3)
    frozen.requires_grad_(False)
    assert frozen(tt.randn(4, 3, 2)).grad_fn is None         # a frozen layer records (and saves) nothing


def test_group_norm_mean_and_rstd_outputs_are_differentiable():
    x = tt.tensor(np.random.default_rng(5).standard_normal((2, 4, 3)), requires_grad=True)
    assert tt.autograd.gradcheck(lambda x: tuple(tt.native_group_norm(x, None, None, 2, 4, 3, 2, 1e-5)[1:]), (x,))


def test_output_layouts_follow_the_input(device):
    x = tt.randn(2, 4, 3, 5, device=device).contiguous(memory_format=tt.channels_last).requires_grad_()
    y = F.batch_norm(x, None, None, training=True)
    assert y.stride() == (60, 1, 20, 4)
    (dx,) = tt.autograd.grad(y, x, tt.randn(2, 4, 3, 5, device=device))
    assert dx.stride() == (60, 1, 20, 4)
    assert F.group_norm(x, 2).stride() == (60, 1, 20, 4)
    assert F.batch_norm(tt.randn(5, 4, device=device).t(), None, None, training=True).stride() == (5, 1)


def test_mixed_and_half_dtypes(device):
    x = tt.randn(6, 3, 4, device=device).half()
    out, mean, invstd = tt.native_batch_norm(x, tt.ones(3, device=device), None, None, None, True, 0.1, 1e-5)
    assert out.dtype is tt.float16 and mean.dtype is tt.float32 and invstd.dtype is tt.float32
    out, mean, _ = tt.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-5)
    assert out.dtype is tt.float16 and mean.dtype is tt.float16
    bn = nn.BatchNorm1d(3).to(device).half()          # half running statistics move too
    bn(x)
    assert bn.running_mean.dtype is tt.float16
    xf = _np(x)
    np.testing.assert_allclose(_np(bn.running_mean), 0.1 * xf.mean((0, 2)), rtol=1e-2, atol=1e-3)


def test_kernels_are_deterministic():
    rng = np.random.default_rng(11)
    x_np = rng.standard_normal((6, 5, 37)).astype(np.float32) * 2 + 3
    runs = []
    for _ in range(2):
        x = tt.tensor(x_np, device="cuda", requires_grad=True)
        y = F.batch_norm(x, None, None, training=True)
        (dx,) = tt.autograd.grad(y, x, tt.tensor(x_np[::-1].copy(), device="cuda"))
        runs.append((to_numpy(y), to_numpy(dx)))
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


BATCH_NORM = {
    'train': [[[-0.653775, 0.40151, -0.20151], [-1.153819, 0.145847, 1.445514], [2.407639, -0.191694, -2.791028], [2.030729, 0.081229, -1.868271]], [[0.40151, -0.20151, 0.853775], [0.145847, 1.445514, -0.828903], [-0.191694, -2.791028, 1.757806], [0.081229, -1.868271, 1.543354]]],  # noqa: E501
    'dx': [[[-0.078656, -0.314619, -0.117983], [0.524971, 0.505831, 0.486691], [-1.049942, -1.011662, -0.973382], [-0.787457, -0.758747, -0.730036]], [[0.117983, 0.314619, 0.078656], [-0.426539, -0.445679, -0.645276], [0.853077, 0.891357, 1.290552], [0.639808, 0.668518, 0.967914]]],  # noqa: E501
    'running_mean': [0.235333, 0.315889, 0.219222, 0.122556],
    'running_var': [1.528667, 1.428852, 1.428852, 1.428852],
    'eval': [[[-0.48045, 0.463152, -0.076049], [-1.320429, -0.204995, 0.910438], [2.344878, 0.114012, -2.116855], [1.686675, 0.013525, -1.659625]], [[0.463152, -0.076049, 0.867553], [-0.204995, 0.910438, -1.04157], [0.114012, -2.116855, 1.787162], [0.013525, -1.659625, 1.268387]]],  # noqa: E501
}
GROUP_NORM = {'out': [[[-0.596523, 0.448262, -0.148758], [-1.392053, -0.198013, 0.996027], [2.423928, 0.002659, -2.418611], [1.588958, -0.226994, -2.042946]], [[0.243149, -0.443966, 0.758485], [0.25726, 1.631488, -0.773412], [0.272595, -2.475862, 2.333938], [-0.085889, -2.147232, 1.460118]]], 'dx': [[[-0.20885, -0.659695, -0.340884], [0.201141, 0.403143, 0.605146], [-0.217578, -0.243493, -0.269408], [0.308885, 0.243493, 0.178101]], [[0.181084, 0.270854, 0.236989], [-0.143765, -0.18843, -0.356731], [-0.22663, 0.018732, 0.082278], [-0.098072, 0.102479, 0.121213]]]}  # noqa: E501
INSTANCE_NORM = [[[-0.481235, 0.739359, 0.041876], [-1.02474, 0.2, 1.42474], [2.149479, -0.3, -2.749479], [1.83711, 0.0, -1.83711]], [[0.158124, -0.539359, 0.681235], [0.083753, 1.478717, -0.96247], [-0.067506, -2.857434, 2.02494], [0.174371, -1.918076, 1.743705]]]  # noqa: E501
LOCAL_RESPONSE_NORM = [[[-0.603836, 0.723055, -0.14369], [0.926963, 0.502892, -0.361543], [0.759999, 0.321143, -0.532887], [0.760982, 0.096484, -0.751865]], [[0.723055, -0.14369, 0.985967], [0.502892, -0.361543, 0.759999], [0.321143, -0.532887, 0.71372], [0.096484, -0.751865, 0.656103]]]  # noqa: E501
