"""tt.optim: every optimizer's step against a hand-written NumPy update (torch's formulas, in
torch's order), on cpu and cuda; param groups, errors, state_dict round trips and bit-for-bit
resumption; one fused launch per (group, dtype) on cuda; the kernels compile for sm_90."""
import copy
import os

import numpy as np
import pytest

import tritensor as tt
from tritensor.backends import triton as tb

SHAPES = [(7, 13), (130,), ()]       # cross the emulated kernels' 64-element chunks
STEPS = 3


# --------------------------------------------------------------------------- NumPy references
def lerp(a, b, w):
    w = np.float32(w)
    return a + w * (b - a) if abs(w) < 0.5 else b - (b - a) * (np.float32(1) - w)


def ref_sgd(p, grads, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False, maximize=False):
    f = np.float32
    p = p.copy()
    buf = None
    for g in grads:
        g = -g if maximize else g
        if weight_decay:
            g = g + f(weight_decay) * p
        if momentum:
            buf = g.copy() if buf is None else buf * f(momentum) + f(1 - dampening) * g
            g = g + f(momentum) * buf if nesterov else buf
        p = p + f(-lr) * g
    return p


def ref_adam(p, grads, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, maximize=False,
             decoupled=False):
    f = np.float32
    b1, b2 = betas
    p = p.copy()
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    vmax = np.zeros_like(p)
    for step, g in enumerate(grads, 1):
        g = -g if maximize else g
        if weight_decay:
            if decoupled:
                p = p * f(1 - lr * weight_decay)
            else:
                g = g + f(weight_decay) * p
        m = lerp(m, g, 1 - b1)
        v = v * f(b2) + f(1 - b2) * g * g
        bc2_sqrt = (1 - b2 ** step) ** 0.5
        step_size = lr / (1 - b1 ** step)
        if amsgrad:
            vmax = np.maximum(vmax, v)
            denom = np.sqrt(vmax) / f(bc2_sqrt) + f(eps)
        else:
            denom = np.sqrt(v) / f(bc2_sqrt) + f(eps)
        p = p + f(-step_size) * (m / denom)
    return p


def ref_rmsprop(p, grads, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                maximize=False):
    f = np.float32
    p = p.copy()
    sq, buf, ga = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    for g in grads:
        g = -g if maximize else g
        if weight_decay:
            g = g + f(weight_decay) * p
        sq = sq * f(alpha) + f(1 - alpha) * g * g
        if centered:
            ga = lerp(ga, g, 1 - alpha)
            avg = np.sqrt(sq + (ga * f(-1)) * ga)
        else:
            avg = np.sqrt(sq)
        avg = avg + f(eps)
        if momentum:
            buf = buf * f(momentum) + g / avg
            p = p + f(-lr) * buf
        else:
            p = p + f(-lr) * (g / avg)
    return p


# --------------------------------------------------------------------------- helpers
def data(seed=0, shapes=SHAPES, steps=STEPS, dtype=np.float32):
    rng = np.random.default_rng(seed)
    params = [rng.standard_normal(s).astype(dtype) for s in shapes]
    grads = [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(steps)]
    return params, grads


def make_params(arrays, device, dtype=None):
    return [tt.tensor(a, device=device, dtype=dtype, requires_grad=True) for a in arrays]


def run(opt, params, grads, device):
    for gs in grads:
        for p, g in zip(params, gs):
            p.grad = tt.tensor(g, device=device, dtype=p.dtype)
        opt.step()


def values(t):
    return np.asarray(t.detach().cpu().numpy())


def check(device, got, want):
    if device == "cpu":     # the same formulas in the same order with NumPy: the same bits
        np.testing.assert_array_equal(values(got), want)
    else:                   # a GPU may contract a * b + c to one FMA
        np.testing.assert_allclose(values(got), want, rtol=2e-6, atol=1e-7)


# --------------------------------------------------------------------------- the update rules
SGD_CASES = [dict(lr=0.1), dict(lr=0.1, momentum=0.9, dampening=0.25), dict(lr=0.05, momentum=0.8, nesterov=True,
             weight_decay=0.01), dict(lr=0.1, momentum=0.5, weight_decay=0.1, maximize=True)]


@pytest.mark.parametrize("options", SGD_CASES, ids=str)
def test_sgd_matches_numpy(device, options):
    arrays, grads = data()
    params = make_params(arrays, device)
    run(tt.optim.SGD(params, **options), params, grads, device)
    for i, p in enumerate(params):
        check(device, p, ref_sgd(arrays[i], [g[i] for g in grads], **options))


ADAM_CASES = [("Adam", dict(lr=0.01)), ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
              ("Adam", dict(lr=0.02, betas=(0.8, 0.99), eps=1e-6, maximize=True)),
              ("AdamW", dict(lr=0.01)), ("AdamW", dict(lr=0.01, weight_decay=0.3, amsgrad=True, maximize=True))]


@pytest.mark.parametrize("name,options", ADAM_CASES, ids=str)
def test_adam_matches_numpy(device, name, options):
    arrays, grads = data(1)
    params = make_params(arrays, device)
    opt = getattr(tt.optim, name)(params, **options)
    run(opt, params, grads, device)
    expected_options = dict(options, decoupled=name == "AdamW")
    if name == "AdamW":
        expected_options.setdefault("weight_decay", 1e-2)    # AdamW's default
    for i, p in enumerate(params):
        check(device, p, ref_adam(arrays[i], [g[i] for g in grads], **expected_options))
    state = opt.state[params[0]]
    assert sorted(state) == sorted(["step", "exp_avg", "exp_avg_sq"] + (["max_exp_avg_sq"] if options.get("amsgrad") else []))
    assert state["step"].device.type == "cpu" and state["step"].dtype == tt.float32 and state["step"].item() == STEPS
    assert state["exp_avg"].device.type == device


@pytest.mark.parametrize("name,options", [("Adam", {}), ("AdamW", dict(amsgrad=True))], ids=str)
def test_adam_default_eps_is_seen(device, name, options):
    """Gradients of size 1e-8 make sqrt(v) as small as the default eps = 1e-8, so the update
    depends on eps by a factor of about 2: the cuda check's tolerance (rtol 2e-6) sees eps at its
    default, which it cannot with gradients near 1 (eps then moves the result by 1e-8). The same
    reference without eps is shown to fail the check."""
    arrays, grads = data(10, shapes=[(70,)], steps=2)
    grads = [[g * np.float32(1e-8) for g in gs] for gs in grads]
    params = make_params(arrays, device)
    run(getattr(tt.optim, name)(params, lr=0.01, **options), params, grads, device)
    ref = dict(options, decoupled=name == "AdamW", weight_decay=1e-2 if name == "AdamW" else 0)
    check(device, params[0], ref_adam(arrays[0], [g[0] for g in grads], lr=0.01, **ref))
    with pytest.raises(AssertionError):
        check(device, params[0], ref_adam(arrays[0], [g[0] for g in grads], lr=0.01, eps=0.0, **ref))


RMSPROP_CASES = [dict(), dict(lr=0.01, momentum=0.9, centered=True), dict(lr=0.03, alpha=0.9, weight_decay=0.1,
                 maximize=True, eps=1e-4), dict(centered=True)]


@pytest.mark.parametrize("options", RMSPROP_CASES, ids=str)
def test_rmsprop_matches_numpy(device, options):
    arrays, grads = data(2)
    params = make_params(arrays, device)
    opt = tt.optim.RMSprop(params, **options)
    run(opt, params, grads, device)
    for i, p in enumerate(params):
        check(device, p, ref_rmsprop(arrays[i], [g[i] for g in grads], **options))
    expected = {"step", "square_avg"} | ({"momentum_buffer"} if options.get("momentum") else set()) \
        | ({"grad_avg"} if options.get("centered") else set())
    assert set(opt.state[params[1]]) == expected


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_other_dtypes(device, dtype):
    """16-bit params: state in their dtype, math in float32 from the stored values, rounded once
    per step; float64 params compute in float64."""
    arrays, grads = data(3, shapes=[(70,)], steps=2)
    params = make_params(arrays, device, dtype=getattr(tt, dtype))
    opt = tt.optim.Adam(params, lr=0.01, weight_decay=0.1)
    run(opt, params, grads, device)
    assert opt.state[params[0]]["exp_avg"].dtype == getattr(tt, dtype)
    if dtype == "float64":
        f = np.float64
        p, m, v = arrays[0].astype(f), 0.0, 0.0
        for step, g in enumerate([gs[0].astype(f) for gs in grads], 1):
            g = g + 0.1 * p
            m = m + 0.1 * (g - m)
            v = v * 0.999 + 0.001 * g * g
            p = p + -(0.01 / (1 - 0.9 ** step)) * (m / (np.sqrt(v) / (1 - 0.999 ** step) ** 0.5 + 1e-8))
        np.testing.assert_allclose(values(params[0]), p, rtol=1e-13)
        return
    np16 = params[0].dtype.numpy_dtype
    p = arrays[0].astype(np16)
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    f = np.float32
    for step, gs in enumerate(grads, 1):
        g = gs[0].astype(np16).astype(f)
        pf, mf, vf = p.astype(f), m.astype(f), v.astype(f)
        g = g + f(0.1) * pf
        mf = lerp(mf, g, 0.1)
        vf = vf * f(0.999) + f(1 - 0.999) * g * g
        denom = np.sqrt(vf) / f((1 - 0.999 ** step) ** 0.5) + f(1e-8)
        pf = pf + f(-(0.01 / (1 - 0.9 ** step))) * (mf / denom)
        p, m, v = pf.astype(np16), mf.astype(np16), vf.astype(np16)
    got = values(params[0]).astype(f)
    if device == "cpu":
        np.testing.assert_array_equal(got, p.astype(f))
    else:       # at most one 16-bit rounding step apart
        np.testing.assert_allclose(got, p.astype(f), rtol=1e-2, atol=1e-3)


def test_grad_none_is_skipped(device):
    arrays, grads = data(4, shapes=[(5,), (6,)], steps=1)
    params = make_params(arrays, device)
    opt = tt.optim.Adam(params, lr=0.1)
    params[0].grad = tt.tensor(grads[0][0], device=device)
    opt.step()
    np.testing.assert_array_equal(values(params[1]), arrays[1])
    assert params[1] not in opt.state and opt.state[params[0]]["step"].item() == 1
    assert tt.optim.SGD(params, lr=0.1).step() is None       # no grads at all: nothing happens


def test_param_groups_with_their_own_options(device):
    arrays, grads = data(5, shapes=[(40,), (3, 5), (9,)])
    params = make_params(arrays, device)
    opt = tt.optim.SGD([{"params": params[:2], "momentum": 0.9, "nesterov": True},
                        {"params": [params[2]], "lr": 0.5, "weight_decay": 0.1}], lr=0.01)
    assert opt.param_groups[1]["momentum"] == 0 and opt.param_groups[0]["lr"] == 0.01
    run(opt, params, grads, device)
    for i in range(2):
        check(device, params[i], ref_sgd(arrays[i], [g[i] for g in grads], lr=0.01, momentum=0.9, nesterov=True))
    check(device, params[2], ref_sgd(arrays[2], [g[2] for g in grads], lr=0.5, weight_decay=0.1))
    assert "momentum_buffer" not in opt.state[params[2]]


def test_tensor_lr_and_non_contiguous_param(device):
    base = np.random.default_rng(6).standard_normal((6, 9)).astype(np.float32)
    p = tt.tensor(base, device=device).t().detach().requires_grad_(True)     # a transposed leaf
    assert not p.is_contiguous()
    grads = [np.random.default_rng(7 + i).standard_normal((9, 6)).astype(np.float32) for i in range(2)]
    opt = tt.optim.RMSprop([p], lr=tt.tensor(0.01), momentum=0.5)
    run(opt, [p], [[g] for g in grads], device)
    check(device, p, ref_rmsprop(base.T, grads, lr=0.01, momentum=0.5))


def test_closure_runs_with_grad_and_returns_loss(device):
    p = tt.tensor([1.0, -2.0], device=device, requires_grad=True)
    opt = tt.optim.SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with tt.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 5.0
    np.testing.assert_array_equal(values(p), [0.5, -1.0])     # p - 0.25 * 2p


def test_zero_grad(device):
    p = tt.tensor([1.0, 2.0], device=device, requires_grad=True)
    opt = tt.optim.SGD([p])
    p.grad = tt.ones(2, device=device)
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(values(p.grad), [0.0, 0.0])
    opt.zero_grad()
    assert p.grad is None


def test_step_hooks():
    p = tt.zeros(2, requires_grad=True)
    opt = tt.optim.SGD([p], lr=1.0)
    calls = []
    pre = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", p.tolist())))
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", p.tolist())))
    p.grad = tt.ones(2)
    opt.step()
    pre.remove()
    opt.step()
    assert calls == [("pre", [0.0, 0.0]), ("post", [-1.0, -1.0]), ("post", [-2.0, -2.0])]


# --------------------------------------------------------------------------- errors and bookkeeping
def test_errors_are_torchs():
    p = tt.zeros(3, requires_grad=True)
    cases = [
        (lambda: tt.optim.SGD(p), TypeError,
         "params argument given to the optimizer should be an iterable of Tensors or dicts, but got torch.FloatTensor"),
        (lambda: tt.optim.SGD([]), ValueError, "optimizer got an empty parameter list"),
        (lambda: tt.optim.SGD([p * 2]), ValueError, "can't optimize a non-leaf Tensor"),
        (lambda: tt.optim.SGD([{"params": [p]}, {"params": [p]}]), ValueError,
         "some parameters appear in more than one parameter group"),
        (lambda: tt.optim.SGD([1]), TypeError, "optimizer can only optimize Tensors, but one of the params is int"),
        (lambda: tt.optim.SGD([{"params": {p}}]), TypeError,
         "optimizer parameters need to be organized in ordered collections, but the ordering of tensors in sets "
         "will change between runs. Please use a list instead."),
        (lambda: tt.optim.SGD([p], lr=-0.1), ValueError, "Invalid learning rate: -0.1"),
        (lambda: tt.optim.SGD([p], momentum=-1), ValueError, "Invalid momentum value: -1"),
        (lambda: tt.optim.SGD([p], weight_decay=-1), ValueError, "Invalid weight_decay value: -1"),
        (lambda: tt.optim.SGD([p], nesterov=True), ValueError, "Nesterov momentum requires a momentum and zero dampening"),
        (lambda: tt.optim.SGD([p], momentum=0.9, dampening=0.1, nesterov=True), ValueError,
         "Nesterov momentum requires a momentum and zero dampening"),
        (lambda: tt.optim.Adam([p], lr=-0.1), ValueError, "Invalid learning rate: -0.1"),
        (lambda: tt.optim.Adam([p], eps=-0.1), ValueError, "Invalid epsilon value: -0.1"),
        (lambda: tt.optim.Adam([p], betas=(1.0, 0.9)), ValueError, "Invalid beta parameter at index 0: 1.0"),
        (lambda: tt.optim.Adam([p], betas=(0.9, -0.1)), ValueError, "Invalid beta parameter at index 1: -0.1"),
        (lambda: tt.optim.AdamW([p], weight_decay=-0.1), ValueError, "Invalid weight_decay value: -0.1"),
        (lambda: tt.optim.RMSprop([p], alpha=-1), ValueError, "Invalid alpha value: -1"),
        (lambda: tt.optim.RMSprop([p], momentum=-1), ValueError, "Invalid momentum value: -1"),
        (lambda: tt.optim.RMSprop([p], eps=-1), ValueError, "Invalid epsilon value: -1"),
        (lambda: tt.optim.SGD([p]).add_param_group([p]), TypeError, "param_group must be a dict, but got <class 'list'>"),
        (lambda: tt.optim.SGD([p]).load_state_dict({"state": {}, "param_groups": []}), ValueError,
         "loaded state dict has a different number of parameter groups"),
        (lambda: tt.optim.SGD([p]).load_state_dict({"state": {}, "param_groups": [{"params": [0, 1]}]}), ValueError,
         "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"),
    ]
    for make, error, text in cases:
        with pytest.raises(error) as info:
            make()
        assert str(info.value) == text
    with pytest.warns(UserWarning, match="duplicate parameters"):
        tt.optim.SGD([p, p])
    assert len(tt.optim.SGD({p}).param_groups[0]["params"]) == 1     # torch 2.13 accepts a set of tensors


def test_defaults_repr_and_state_dict_format():
    a, b, c = (tt.zeros(2, requires_grad=True) for _ in range(3))
    opt = tt.optim.SGD([{"params": [a, b]}, {"params": [c], "lr": 0.5}], lr=0.1, momentum=0.9)
    assert tt.optim.AdamW([a]).defaults == {
        "lr": 0.001, "betas": (0.9, 0.999), "eps": 1e-08, "weight_decay": 0.01, "amsgrad": False, "maximize": False,
        "foreach": None, "capturable": False, "differentiable": False, "fused": None, "decoupled_weight_decay": True}
    assert repr(tt.optim.SGD([a], lr=0.1)) == (
        "SGD (\nParameter Group 0\n    dampening: 0\n    differentiable: False\n    foreach: None\n    fused: None\n"
        "    lr: 0.1\n    maximize: False\n    momentum: 0\n    nesterov: False\n    weight_decay: 0\n)")
    for p in (a, c):
        p.grad = tt.ones(2)
    opt.step()
    sd = opt.state_dict()
    assert sd["param_groups"] == [
        {"lr": 0.1, "momentum": 0.9, "dampening": 0, "weight_decay": 0, "nesterov": False, "maximize": False,
         "foreach": None, "differentiable": False, "fused": None, "params": [0, 1]},
        {"lr": 0.5, "momentum": 0.9, "dampening": 0, "weight_decay": 0, "nesterov": False, "maximize": False,
         "foreach": None, "differentiable": False, "fused": None, "params": [2]}]
    assert sorted(sd["state"]) == [0, 2] and list(sd["state"][0]) == ["momentum_buffer"]
    assert sd["state"][2]["momentum_buffer"] is opt.state[c]["momentum_buffer"]   # not copied, as torch


def _round_trip(state_dict, tmp_path):
    tt.save(state_dict, tmp_path / "optim.pt")
    return tt.load(tmp_path / "optim.pt")


@pytest.mark.parametrize("name,options", [("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
                                          ("Adam", dict(lr=0.01, amsgrad=True)), ("AdamW", dict(lr=0.01)),
                                          ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True))], ids=str)
def test_resume_from_state_dict_is_bit_identical(device, name, options, tmp_path):
    """Train 2 steps, checkpoint (through tt.save/tt.load), train 2 more; a fresh optimizer loaded
    from the checkpoint continues with exactly the same bits."""
    arrays, grads = data(8, shapes=[(70,), (3, 4)], steps=4)
    params = make_params(arrays, device)
    opt = getattr(tt.optim, name)(params, **options)
    run(opt, params, grads[:2], device)
    checkpoint = _round_trip(opt.state_dict(), tmp_path)
    saved_params = [values(p).copy() for p in params]
    run(opt, params, grads[2:], device)

    resumed = make_params(saved_params, device)
    opt2 = getattr(tt.optim, name)(resumed, lr=123.0)       # options come from the checkpoint
    opt2.load_state_dict(checkpoint)
    assert opt2.param_groups[0]["lr"] == options["lr"]
    run(opt2, resumed, grads[2:], device)
    for p, q in zip(params, resumed):
        np.testing.assert_array_equal(values(q), values(p))
    if name != "SGD":
        assert opt2.state[resumed[0]]["step"].item() == 4


def test_load_state_dict_casts_state_to_the_param(device):
    """Loaded state follows the param's device and (floating) dtype; step counters stay as saved."""
    src = tt.zeros(4, dtype=tt.float64, requires_grad=True)
    opt = tt.optim.Adam([src], lr=0.1)
    src.grad = tt.ones(4, dtype=tt.float64)
    opt.step()
    sd = copy.deepcopy(opt.state_dict())
    dst = tt.zeros(4, device=device, requires_grad=True)
    opt2 = tt.optim.Adam([dst])
    opt2.load_state_dict(sd)
    state = opt2.state[dst]
    assert state["exp_avg"].dtype == tt.float32 and state["exp_avg"].device.type == device
    assert state["step"].device.type == "cpu" and state["step"].dtype == tt.float32 and state["step"].item() == 1
    dst.grad = tt.ones(4, device=device)
    opt2.step()
    assert state["step"].item() == 2


def test_old_float_step_becomes_a_tensor():
    p = tt.zeros(2, requires_grad=True)
    opt = tt.optim.RMSprop([p])
    opt.load_state_dict({"state": {0: {"step": 3, "square_avg": tt.zeros(2)}},
                         "param_groups": [dict(opt.state_dict()["param_groups"][0])]})
    step = opt.state[p]["step"]
    assert isinstance(step, tt.Tensor) and step.item() == 3.0


# --------------------------------------------------------------------------- fused launches on cuda
def test_one_launch_per_group_and_dtype(monkeypatch):
    """Every kernel launch of a step is counted (tb._run is the only way to a kernel)."""
    arrays, grads = data(9, shapes=[(100,), (7, 13), (5,), (40,)], steps=2)
    params = make_params(arrays[:3], "cuda") + make_params(arrays[3:], "cuda", dtype=tt.float64)
    opt = tt.optim.Adam([{"params": params[:2] + [params[3]]}, {"params": [params[2]], "lr": 0.5}], amsgrad=True)
    for p, g in zip(params, grads[0]):
        p.grad = tt.tensor(g, device="cuda", dtype=p.dtype)
    opt.step()                          # creates the state (fills), then updates
    launches = []
    real_run = tb._run
    monkeypatch.setattr(tb, "_run", lambda kernel, *a, **k: (launches.append(kernel), real_run(kernel, *a, **k)))
    opt.step()
    names = [getattr(k, "fn", k).__name__ for k in launches]
    assert names == ["adam_kernel"] * 3     # group 0: float32 + float64; group 1: float32
    launches.clear()
    tt.optim.SGD(params[:2], lr=0.1, momentum=0.9).step()
    assert [getattr(k, "fn", k).__name__ for k in launches] == ["sgd_kernel"]   # new buffers need no fill


_COMPILE_SCRIPT = r'''
import os, sys
sys.path.insert(0, os.environ["TRITENSOR_SM90_TESTS"])
import sm90_compile   # tests/sm90_compile.py: a target-only driver (sm_90, no GPU); the launches compiled
import tritensor as tt
from tritensor.backends.triton import optim as to
from sm90_compile import LAST

sm90_compile.install()


def ptx():
    return LAST[0].asm["ptx"]


class Shape(tuple):
    def numel(self):
        return self[0]


class Storage:
    def __init__(self, address):
        self._ptr = address

    def data_ptr(self):
        return self._ptr


class Param:   # what the launchers read from a tensor
    def __init__(self, n, dtype, address=1 << 20):
        self.dtype = self._dtype = dtype
        self._shape, self._storage, self._offset = Shape((n,)), Storage(address), 0


def ps(name, address=1 << 20):
    return [Param(5000, getattr(tt, name), address), Param(3, getattr(tt, name), address)]


f32 = ps("float32")
to.sgd(f32, f32, f32, [True, False], lr=0.1, weight_decay=0.01, momentum=0.9, dampening=0.0, nesterov=True,
       maximize=True)
to.adam(f32, f32, f32, f32, f32, [3, 4], lr=0.1, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.1,
        amsgrad=True, maximize=True, decoupled_weight_decay=True)
assert "ld.global.v4.b32" in ptx() and "sqrt.rn.f32" in ptx() and "div.rn.f32" in ptx()
b16 = ps("bfloat16", address=(1 << 20) + 2)     # misaligned: no vector hint
to.adam(b16, b16, b16, b16, b16, [3, 4], lr=0.1, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.1,
        amsgrad=False, maximize=False, decoupled_weight_decay=False)
f16 = ps("float16")
to.rmsprop(f16, f16, f16, f16, f16, lr=0.1, alpha=0.99, eps=1e-8, weight_decay=0.1, momentum=0.9, centered=True,
           maximize=True)
f64 = ps("float64")
to.rmsprop(f64, f64, f64, f64, f64, lr=0.1, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False,
           maximize=False)
to.adagrad(f32, f32, f32, [1, 2], lr=0.1, weight_decay=0.1, lr_decay=0.01, eps=1e-10, maximize=True)
assert "ld.global.v4.b32" in ptx() and "sqrt.rn.f32" in ptx() and "div.rn.f32" in ptx()
to.adagrad(b16, b16, b16, [1, 2], lr=0.1, weight_decay=0.0, lr_decay=0.0, eps=1e-10, maximize=False)
# GradScaler's kernels (kernels/amp.py) share the table machinery
from tritensor.backends.triton import amp as ta
one = Param(1, tt.float32, 1 << 21)
ta.unscale(f32, one, one)
assert "ld.global.v4.b32" in ptx()
ta.unscale(b16, one, one)
ta.unscale(f64, one, one)
ta.update_scale(one, Param(1, tt.int32, 1 << 22), one, 2.0, 0.5, 2000)
sm90_compile.finish()
'''


@pytest.mark.skipif(os.environ.get("TRITENSOR_COMPILE_CHECK", "1") == "0", reason="TRITENSOR_COMPILE_CHECK=0")
def test_optimizer_kernels_compile_for_sm90(tmp_path):
    """The interpreter accepts things the compiler refuses: compile the fused optimizer kernels
    (each optimizer, every dtype, the aligned and unaligned variants; GradScaler's unscale and
    scale update) to sm_90 cubin in a fresh process, and check the aligned one loads 16-byte
    vectors with IEEE sqrt and division; no variant spills (their static facts, read off the cubin
    by tests/sm90.py)."""
    import sm90
    reason = sm90.has_compiler()
    if reason:
        pytest.skip(reason)
    counts, _ = sm90.check_compile(_COMPILE_SCRIPT, tmp_path)
    assert (counts["compiled"], counts["launches"]) == (10, 11), counts     # two launches, one variant


def test_empty_parameters_launch_nothing(device, monkeypatch):
    empty = tt.zeros(0, device=device, requires_grad=True)
    empty.grad = tt.zeros(0, device=device)
    opt = tt.optim.SGD([empty], lr=0.1, momentum=0.9)
    launches = []
    real_run = tb._run
    monkeypatch.setattr(tb, "_run", lambda kernel, *a, **k: (launches.append(kernel), real_run(kernel, *a, **k)))
    opt.step()
    assert launches == [] and tuple(opt.state[empty]["momentum_buffer"].shape) == (0,)


def test_a_step_advances_version_counters(device):
    """The update is in place: tensors saved for backward before it are detected as modified."""
    p = tt.ones(4, device=device, requires_grad=True)
    opt = tt.optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = tt.ones(4, device=device)
    before = p._version
    opt.step()
    buf = opt.state[p]["momentum_buffer"]
    assert p._version == before + 1
    buf_before = buf._version
    opt.step()
    assert p._version == before + 2 and buf._version == buf_before + 1
