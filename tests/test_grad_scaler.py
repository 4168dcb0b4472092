"""tt.amp.GradScaler and its two ops against torch 2.13's algorithm (torch/amp/grad_scaler.py,
ATen's amp_update_scale kernel): hand-computed unscale/inf checks in every dtype, the scale
update's growth/backoff sequence, the stage errors, state_dict, one fused launch per dtype on
cuda, and a training loop under autocast + GradScaler that tracks float32 and skips overflowing
steps."""
import pickle

import numpy as np
import pytest

import tritensor as tt
from tritensor.backends import triton as tb

INF, NAN = float("inf"), float("nan")


# --------------------------------------------------------------------------- the two ops
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_unscale_multiplies_in_place_and_flags_non_finite(device, dtype):
    dt = getattr(tt, dtype)
    clean = tt.tensor([1.0, -2.0, 4.0, 0.0] * 80, dtype=dt, device=device)   # 320: crosses chunks
    found, inv = tt.zeros((), device=device), tt.full((), 0.25, device=device)
    tt._amp_foreach_non_finite_check_and_unscale_([clean], found, inv)
    assert found.item() == 0.0
    assert clean.float().cpu().numpy().tolist() == [0.25, -0.5, 1.0, 0.0] * 80
    for bad in (INF, -INF, NAN):
        values = [1.0] * 300
        values[257] = bad                                     # in the masked tail chunk
        g = tt.tensor(values, dtype=dt, device=device)
        tt._amp_foreach_non_finite_check_and_unscale_([g], found.zero_(), inv)
        assert found.item() == 1.0, bad
        assert g[0].item() == 0.25


def test_unscale_many_tensors_mixed_dtypes_and_layouts(device):
    base = tt.arange(12.0, device=device).reshape(3, 4)
    view = base.t()                                           # non-contiguous: staged, written back
    grads = [view, tt.ones(5, dtype=tt.float64, device=device), tt.zeros(0, device=device),
             tt.full((2,), 3.0, dtype=tt.float16, device=device)]
    found, inv = tt.zeros((), device=device), tt.full((), 0.5, device=device)
    tt._amp_foreach_non_finite_check_and_unscale_(grads, found, inv)
    np.testing.assert_array_equal(base.cpu().numpy(), np.arange(12.0).reshape(3, 4) / 2)
    assert grads[1].tolist() == [0.5] * 5 and grads[3].tolist() == [1.5, 1.5] and found.item() == 0.0


def test_unscale_is_one_launch_per_dtype_on_cuda(monkeypatch):
    grads = [tt.ones(n, device="cuda") for n in (3, 700, 64)] + [tt.ones(9, dtype=tt.float16, device="cuda")]
    found, inv = tt.zeros((), device="cuda"), tt.ones((), device="cuda")
    launches = []
    real = tb._run
    monkeypatch.setattr(tb, "_run", lambda k, *a, **kw: (launches.append(getattr(k, "fn", k).__name__), real(k, *a, **kw)))
    tt._amp_foreach_non_finite_check_and_unscale_(grads, found, inv)
    assert launches == ["amp_unscale_kernel", "amp_unscale_kernel"]


def test_unscale_errors_match_torch():
    g = [tt.ones(2)]
    with pytest.raises(RuntimeError, match="^found_inf must be a 1-element tensor.$"):
        tt._amp_foreach_non_finite_check_and_unscale_(g, tt.zeros(2), tt.ones(()))
    with pytest.raises(RuntimeError, match="^inv_scale must be a 1-element tensor.$"):
        tt._amp_foreach_non_finite_check_and_unscale_(g, tt.zeros(()), tt.ones(2))
    with pytest.raises(RuntimeError, match="^inv_scale must be a float tensor.$"):
        tt._amp_foreach_non_finite_check_and_unscale_(g, tt.zeros(()), tt.ones((), dtype=tt.float64))
    with pytest.raises(RuntimeError, match="^found_inf must be a float tensor.$"):
        tt._amp_foreach_non_finite_check_and_unscale_(g, tt.zeros((), dtype=tt.float64), tt.ones(()))
    with pytest.raises(NotImplementedError, match="not implemented for 'Int'"):
        tt._amp_foreach_non_finite_check_and_unscale_([tt.ones(2, dtype=tt.int32)], tt.zeros(()), tt.ones(()))


def test_update_scale_grows_backs_off_and_keeps_a_finite_scale(device):
    scale = tt.full((), 65536.0, device=device)
    tracker = tt.zeros((), dtype=tt.int32, device=device)
    found = tt.zeros((), device=device)
    seen = []
    for overflow in (1, 0, 0, 0, 0, 1, 0):
        found.fill_(float(overflow))
        out = tt._amp_update_scale_(scale, tracker, found, 2.0, 0.5, 3)
        assert out is scale
        seen.append((scale.item(), tracker.item()))
    # torch: overflow halves and resets; the third clean step in a row doubles and resets
    assert seen == [(32768.0, 0), (32768.0, 1), (32768.0, 2), (65536.0, 0), (65536.0, 1), (32768.0, 0),
                    (32768.0, 1)]
    big = tt.full((), 3e38, device=device)                    # 6e38 overflows float32: kept as it was
    tr = tt.full((), 2, dtype=tt.int32, device=device)
    tt._amp_update_scale_(big, tr, tt.zeros((), device=device), 2.0, 0.5, 3)
    assert big.item() == pytest.approx(3e38) and tr.item() == 0
    odd = tt.full((), 1000.0, device=device)                  # the product is rounded from float64
    tt._amp_update_scale_(odd, tt.zeros((), dtype=tt.int32, device=device), tt.ones((), device=device), 2.0,
                          0.1, 3)
    assert odd.item() == float(np.float32(1000.0 * 0.1))


def test_update_scale_errors_match_torch():
    t = tt.zeros((), dtype=tt.int32)
    with pytest.raises(RuntimeError, match="^current_scale must be a float tensor.$"):
        tt._amp_update_scale_(tt.ones((), dtype=tt.float64), t, tt.zeros(()), 2.0, 0.5, 3)
    with pytest.raises(RuntimeError, match="^growth_tracker must be an int tensor.$"):
        tt._amp_update_scale_(tt.ones(()), tt.zeros(()), tt.zeros(()), 2.0, 0.5, 3)
    with pytest.raises(RuntimeError, match="^found_inf must be a 1-element tensor.$"):
        tt._amp_update_scale_(tt.ones(()), t, tt.zeros(2), 2.0, 0.5, 3)


# --------------------------------------------------------------------------- GradScaler
def model_and_opt(device, lr=0.1):
    tt.manual_seed(0)
    model = tt.nn.Linear(3, 2).to(device)
    return model, tt.optim.SGD(model.parameters(), lr=lr)


def test_scale_unscale_step_update(device):
    model, opt = model_and_opt(device)
    scaler = tt.amp.GradScaler(device, init_scale=1024.0, growth_interval=2)
    x = tt.ones(4, 3, device=device)
    loss = model(x).sum()
    scaled = scaler.scale(loss)
    assert scaled.item() == pytest.approx(loss.item() * 1024, rel=1e-6)
    scaled.backward()
    assert model.bias.grad.tolist() == [4096.0, 4096.0]       # d(sum)/db = 4 rows, times 1024
    before = model.bias.detach().clone()
    scaler.unscale_(opt)
    assert model.bias.grad.tolist() == [4.0, 4.0]
    with pytest.raises(RuntimeError, match=r"^unscale_\(\) has already been called on this optimizer since the "
                       r"last update\(\).$"):
        scaler.unscale_(opt)
    scaler.step(opt)
    np.testing.assert_allclose(model.bias.detach().cpu().numpy(), before.cpu().numpy() - 0.4, rtol=1e-6)
    with pytest.raises(RuntimeError, match=r"^step\(\) has already been called since the last update\(\).$"):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match=r"^unscale_\(\) is being called after step\(\).$"):
        scaler.unscale_(opt)
    scaler.update()
    assert scaler.get_scale() == 1024.0 and scaler._get_growth_tracker() == 1
    opt.zero_grad()
    scaler.scale(model(x).sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 2048.0 and scaler._get_growth_tracker() == 0


def test_an_overflowing_step_is_skipped_and_the_scale_backs_off(device):
    model, opt = model_and_opt(device)
    scaler = tt.amp.GradScaler(device, init_scale=2.0 ** 16)
    before = [p.detach().clone() for p in model.parameters()]
    scaler.scale(model(tt.ones(2, 3, device=device)).sum()).backward()
    model.weight.grad[0, 0] = INF
    assert scaler.step(opt) is None
    for p, b in zip(model.parameters(), before):
        assert p.detach().cpu().tolist() == b.cpu().tolist()
    scaler.update()
    assert scaler.get_scale() == 2.0 ** 15 and scaler._get_growth_tracker() == 0


def test_errors_and_disabled_scaler():
    with pytest.raises(AssertionError, match="^The growth factor must be > 1.0.$"):
        tt.amp.GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(AssertionError, match="^The backoff factor must be < 1.0.$"):
        tt.amp.GradScaler("cpu", backoff_factor=1.0)
    model, opt = model_and_opt("cpu")
    scaler = tt.amp.GradScaler("cpu")
    with pytest.raises(AssertionError, match=r"^Attempted step but _scale is None.  This may indicate your script "
                       r"did not use scaler.scale\(loss or outputs\) earlier in the iteration.$"):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match="^Closure use is not currently supported if GradScaler is enabled.$"):
        scaler.scale(tt.ones(()))
        scaler.step(opt, closure=lambda: None)
    with pytest.raises(ValueError, match="^outputs must be a Tensor or an iterable of Tensors$"):
        scaler.scale([3])
    off = tt.amp.GradScaler("cpu", enabled=False)
    loss = tt.ones(())
    assert off.scale(loss) is loss and off.get_scale() == 1.0 and off.state_dict() == {}
    with pytest.warns(FutureWarning, match=r"^`torch.cuda.amp.GradScaler\(args...\)` is deprecated. Please use "
                      r"`torch.amp.GradScaler\('cuda', args...\)` instead.$"):
        tt.cuda.amp.GradScaler()


def test_scale_of_nested_outputs():
    scaler = tt.amp.GradScaler("cpu", init_scale=4.0)
    out = scaler.scale([tt.ones(2), (tt.ones(1) * 2, tt.ones(()))])
    assert out[0].tolist() == [4.0, 4.0] and out[1][0].tolist() == [8.0] and out[1][1].item() == 4.0
    assert isinstance(out, list) and isinstance(out[1], tuple)


def test_state_dict_round_trip_and_pickle():
    model, opt = model_and_opt("cpu")
    scaler = tt.amp.GradScaler("cpu", init_scale=256.0, growth_factor=3.0, backoff_factor=0.25, growth_interval=7)
    scaler.scale(model(tt.ones(1, 3)).sum()).backward()
    scaler.step(opt)
    scaler.update()
    state = scaler.state_dict()
    assert state == {"scale": 256.0, "growth_factor": 3.0, "backoff_factor": 0.25, "growth_interval": 7,
                     "_growth_tracker": 1}
    other = tt.amp.GradScaler("cpu")
    other.load_state_dict(state)
    assert other.state_dict() == state
    restored = pickle.loads(pickle.dumps(scaler))
    assert restored.get_scale() == 256.0 and restored._get_growth_tracker() == 1
    with pytest.raises(RuntimeError, match="^The source state dict is empty"):
        other.load_state_dict({})


def train(device, mixed, steps, poison_step=None):
    """A small regression problem trained with SGD, in float32 or under autocast + GradScaler;
    returns the losses, whether each step left the weights unchanged, and the scaler."""
    rng = np.random.default_rng(0)
    xs = tt.tensor(rng.standard_normal((64, 8)), dtype=tt.float32, device=device)
    ys = tt.tensor(rng.standard_normal((64, 1)), dtype=tt.float32, device=device)
    tt.manual_seed(1)
    model = tt.nn.Sequential(tt.nn.Linear(8, 16), tt.nn.Tanh(), tt.nn.Linear(16, 1)).to(device)
    opt = tt.optim.SGD(model.parameters(), lr=0.05)
    scaler = tt.amp.GradScaler(device, init_scale=2.0 ** 10, enabled=mixed)
    losses, skipped = [], []
    for step in range(steps):
        opt.zero_grad()
        with tt.autocast(device, enabled=mixed):
            loss = tt.nn.functional.mse_loss(model(xs).float(), ys)
        scaler.scale(loss).backward()
        if step == poison_step:
            model[0].weight.grad[0, 0] = NAN
        weights = model[0].weight.detach().clone()
        scaler.step(opt)
        scaler.update()
        skipped.append(bool((model[0].weight.detach() == weights).all().item()))
        losses.append(loss.item())
    return losses, skipped, scaler


def test_training_under_autocast_and_grad_scaler_tracks_float32_and_skips_overflow():
    """The mixed-precision losses agree with float32's to bfloat16 accuracy; a step whose
    gradients overflow is skipped and the scale backs off once."""
    full, _, _ = train("cpu", False, 12)
    mixed, skipped, _ = train("cpu", True, 12)
    np.testing.assert_allclose(mixed, full, rtol=0.03, atol=0.03)
    assert full[-1] < full[0] and mixed[-1] < mixed[0] and not any(skipped)
    _, skipped, scaler = train("cpu", True, 12, poison_step=3)
    assert skipped == [False, False, False, True] + [False] * 8
    assert scaler.get_scale() == 2.0 ** 9                    # one backoff, no growth within 2000 steps


def test_training_under_autocast_and_grad_scaler_on_cuda():
    full, _, _ = train("cuda", False, 3)
    mixed, skipped, scaler = train("cuda", True, 3, poison_step=1)      # float16 on cuda
    np.testing.assert_allclose(mixed[:2], full[:2], rtol=0.01, atol=0.01)
    assert mixed[2] == pytest.approx(mixed[1], rel=2e-3)     # step 1 was skipped: the same weights
    assert skipped == [False, True, False] and scaler.get_scale() == 2.0 ** 9
