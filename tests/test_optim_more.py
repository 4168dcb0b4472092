"""The rest of tt.optim's optimizers (Adagrad, Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop): each
one's trajectory over several steps against a hand-written NumPy update (torch's formulas in
torch's order, float32 as torch computes them), on cpu and cuda; the state_dict format torch
writes (keys, counters on the cpu or the device), round trips through tt.save/tt.load with
bit-identical resumption; torch's errors word for word; the flags (capturable keeps the
counters on the device, differentiable lets autograd see the step, fused Adagrad takes one
launch per (group, dtype) on cuda)."""
import math

import numpy as np
import pytest

import tritensor as tt
from tritensor.backends import triton as tb

f = np.float32
SHAPES = [(7, 13), (130,), ()]       # cross the emulated kernels' 64-element chunks


# --------------------------------------------------------------------------- NumPy references
def lerp(a, b, w):
    w = f(w)
    return a + w * (b - a) if abs(w) < 0.5 else b - (b - a) * (f(1) - w)


def ref_adagrad(p, grads, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                maximize=False):
    c = p.dtype.type        # float64 params compute in float64
    p, s = p.copy(), np.full_like(p, initial_accumulator_value)
    for step, g in enumerate(grads, 1):
        g = -g if maximize else g
        if weight_decay:
            g = g + c(weight_decay) * p
        clr = lr / (1 + (step - 1) * lr_decay)
        s = s + g * g
        p = p + c(-clr) * (g / (np.sqrt(s) + c(eps)))
    return p


def ref_adadelta(p, grads, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, maximize=False):
    p, sq, acc = p.copy(), np.zeros_like(p), np.zeros_like(p)
    for g in grads:
        g = -g if maximize else g
        if weight_decay:
            g = g + f(weight_decay) * p
        sq = sq * f(rho) + f(1 - rho) * g * g
        delta = np.sqrt(acc + f(eps)) / np.sqrt(sq + f(eps)) * g
        acc = acc * f(rho) + f(1 - rho) * delta * delta
        p = p + f(-lr) * delta
    return p


def ref_adamax(p, grads, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, maximize=False):
    b1, b2 = betas
    p, m, u = p.copy(), np.zeros_like(p), np.zeros_like(p)
    for step, g in enumerate(grads, 1):
        g = -g if maximize else g
        if weight_decay:
            g = g + f(weight_decay) * p
        m = lerp(m, g, 1 - b1)
        u = np.maximum(u * f(b2), np.abs(g) + f(eps))
        p = p + f(-lr / (1 - b1 ** step)) * (m / u)
    return p


def ref_nadam(p, grads, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
              decoupled_weight_decay=False, maximize=False):
    b1, b2 = betas
    p, m, v, mu_product = p.copy(), np.zeros_like(p), np.zeros_like(p), f(1)
    for step, g in enumerate(grads, 1):
        g = -g if maximize else g
        if weight_decay:
            if decoupled_weight_decay:
                p = p * f(1 - lr * weight_decay)
            else:
                g = g + f(weight_decay) * p
        mu = b1 * (1 - 0.5 * 0.96 ** (step * momentum_decay))
        mu_next = b1 * (1 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
        mu_product = f(mu_product * f(mu))          # a float32 counter, as torch keeps it
        m = lerp(m, g, 1 - b1)
        v = v * f(b2) + f(1 - b2) * g * g
        denom = np.sqrt(v / f(1 - b2 ** step)) + f(eps)
        p = p + f(-lr * (1 - mu) / (1 - float(mu_product))) * (g / denom)
        p = p + f(-lr * mu_next / (1 - float(mu_product) * mu_next)) * (m / denom)
    return p


def ref_radam(p, grads, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
              maximize=False):
    b1, b2 = betas
    p, m, v = p.copy(), np.zeros_like(p), np.zeros_like(p)
    rho_inf = 2 / (1 - b2) - 1
    for step, g in enumerate(grads, 1):
        g = -g if maximize else g
        if weight_decay:
            if decoupled_weight_decay:
                p = p * f(1 - lr * weight_decay)
            else:
                g = g + f(weight_decay) * p
        m = lerp(m, g, 1 - b1)
        v = v * f(b2) + f(1 - b2) * g * g
        bc2 = 1 - b2 ** step
        corrected = m / f(1 - b1 ** step)
        rho_t = rho_inf - 2 * step * b2 ** step / bc2
        if rho_t > 5:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            p = p - corrected * f(lr) * (f(bc2 ** 0.5) / (np.sqrt(v) + f(eps))) * f(rect)
        else:
            p = p - corrected * f(lr)
    return p


def ref_asgd(p, grads, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, maximize=False):
    p, ax, eta, mu = p.copy(), np.zeros_like(p), f(lr), f(1)
    for step, g in enumerate(grads, 1):
        g = -g if maximize else g
        if weight_decay:
            g = g + f(weight_decay) * p
        p = p * f(1 - lambd * float(eta))
        p = p + f(-float(eta)) * g
        ax = ax + (p - ax) * mu if mu != 1 else p.copy()
        eta = f(lr / (1 + lambd * lr * step) ** alpha)
        mu = f(1 / max(1, step - t0))
    return p, ax


def ref_rprop(p, grads, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), maximize=False):
    etaminus, etaplus = etas
    p, prev, size = p.copy(), np.zeros_like(p), np.full_like(p, lr)
    for g in grads:
        g = -g if maximize else g
        sign = np.sign(g * prev)
        factor = np.where(sign > 0, f(etaplus), np.where(sign < 0, f(etaminus), f(1)))
        size = np.clip(size * factor, f(step_sizes[0]), f(step_sizes[1]))
        g = np.where(factor == f(etaminus), f(0), g)
        p = p - np.sign(g) * size
        prev = g
    return p


REFS = {"Adagrad": ref_adagrad, "Adadelta": ref_adadelta, "Adamax": ref_adamax, "NAdam": ref_nadam,
        "RAdam": ref_radam, "ASGD": lambda *a, **k: ref_asgd(*a, **k)[0], "Rprop": ref_rprop}

# (name, options): the first case of each optimizer also runs on cuda
CASES = [
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.1, maximize=True)),
    ("Adagrad", {}),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    ("Adadelta", {}),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, maximize=True)),
    ("Adamax", {}),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, momentum_decay=0.01)),
    ("NAdam", dict(weight_decay=0.1, maximize=True)),
    ("NAdam", {}),
    ("RAdam", dict(lr=0.01, betas=(0.5, 0.6), weight_decay=0.1, maximize=True)),     # rectified from step 2
    ("RAdam", dict(betas=(0.5, 0.6), weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", {}),                                                                 # never rectified in 4 steps
    ("ASGD", dict(lr=0.1, lambd=0.01, alpha=0.5, t0=2, weight_decay=0.1, maximize=True)),   # averaging from step 3
    ("ASGD", {}),
    ("Rprop", dict(lr=0.1, etas=(0.3, 1.7), step_sizes=(0.01, 0.2), maximize=True)),
    ("Rprop", {}),
]
FIRSTS = [c for i, c in enumerate(CASES) if i == 0 or CASES[i - 1][0] != c[0]]
STATE_KEYS = {"Adagrad": ["step", "sum"], "Adadelta": ["step", "square_avg", "acc_delta"],
              "Adamax": ["step", "exp_avg", "exp_inf"], "NAdam": ["step", "mu_product", "exp_avg", "exp_avg_sq"],
              "RAdam": ["step", "exp_avg", "exp_avg_sq"], "ASGD": ["step", "eta", "mu", "ax"],
              "Rprop": ["step", "prev", "step_size"]}


def data(seed=0, shapes=SHAPES, steps=4):
    rng = np.random.default_rng(seed)
    params = [rng.standard_normal(s).astype(f) for s in shapes]
    grads = [[rng.standard_normal(s).astype(f) for s in shapes] for _ in range(steps)]
    # Rprop: some elements keep their gradient's sign from step to step, others flip
    return params, grads


def run(opt, params, grads, device):
    for gs in grads:
        for p, g in zip(params, gs):
            p.grad = tt.tensor(g, device=device, dtype=p.dtype)
        opt.step()


def values(t):
    return np.asarray(t.detach().cpu().numpy())


def check(got, want):
    # torch's own kernels differ from these formulas by an ulp here and there (a scalar divisor
    # taken as a reciprocal, an FMA on a GPU): a few float32 ulps of tolerance
    np.testing.assert_allclose(values(got), want, rtol=3e-6, atol=3e-7)


# --------------------------------------------------------------------------- trajectories
@pytest.mark.parametrize("name,options", CASES, ids=str)
def test_trajectory_matches_numpy_on_cpu(name, options):
    arrays, grads = data()
    params = [tt.tensor(a, requires_grad=True) for a in arrays]
    opt = getattr(tt.optim, name)(params, **options)
    run(opt, params, grads, "cpu")
    for i, p in enumerate(params):
        check(p, REFS[name](arrays[i], [g[i] for g in grads], **options))
    assert list(opt.state[params[0]]) == STATE_KEYS[name]
    step = opt.state[params[0]]["step"]
    assert step.dtype == tt.float32 and step.shape == () and step.item() == 4


@pytest.mark.parametrize("name,options", FIRSTS, ids=str)
def test_trajectory_matches_numpy_on_cuda(name, options):
    arrays, grads = data(1, shapes=[(70,), ()], steps=3)
    params = [tt.tensor(a, requires_grad=True, device="cuda") for a in arrays]
    opt = getattr(tt.optim, name)(params, **options)
    run(opt, params, grads, "cuda")
    for i, p in enumerate(params):
        check(p, REFS[name](arrays[i], [g[i] for g in grads], **options))
    state = opt.state[params[0]]
    # torch keeps the counters on the cpu (read without a sync), ASGD's on the param's device
    counters = {"step", "mu_product"} | ({"eta", "mu"} if name == "ASGD" else set())
    for key, value in state.items():
        on = "cuda" if key not in counters or name == "ASGD" else "cpu"
        assert value.device.type == on, key


def test_asgd_average_and_counters():
    arrays, grads = data(2, shapes=[(9,)], steps=5)
    options = dict(lr=0.1, lambd=0.01, alpha=0.5, t0=2, weight_decay=0.1)
    p = tt.tensor(arrays[0], requires_grad=True)
    opt = tt.optim.ASGD([p], **options)
    run(opt, [p], grads, "cpu")
    want_p, want_ax = ref_asgd(arrays[0], [g[0] for g in grads], **options)
    check(p, want_p)
    state = opt.state[p]
    check(state["ax"], want_ax)
    assert state["mu"].item() == f(1 / 3) and state["eta"].item() == f(0.1 / (1 + 0.01 * 0.1 * 5) ** 0.5)


def test_other_dtypes():
    """float64 params compute in float64 (hand-computed in float64); float16 state keeps its dtype."""
    arrays, grads = data(3, shapes=[(11,)], steps=3)
    a64, g64 = arrays[0].astype(np.float64), [g[0].astype(np.float64) for g in grads]
    p = tt.tensor(a64, requires_grad=True)
    opt = tt.optim.Adamax([p], lr=0.01)
    for g in g64:
        p.grad = tt.tensor(g)
        opt.step()
    m, u, want = np.zeros(11), np.zeros(11), a64.copy()
    for step, g in enumerate(g64, 1):
        m = m + (1 - 0.9) * (g - m)
        u = np.maximum(u * 0.999, np.abs(g) + 1e-8)
        want = want - 0.01 / (1 - 0.9 ** step) * m / u
    np.testing.assert_allclose(values(p), want, rtol=1e-14)
    h = tt.tensor(arrays[0], dtype=tt.float16, requires_grad=True)
    opt = tt.optim.Adagrad([h], lr=0.1)
    h.grad = tt.tensor(grads[0][0], dtype=tt.float16)
    opt.step()
    assert opt.state[h]["sum"].dtype == tt.float16
    want16 = (arrays[0].astype(np.float16).astype(f) - f(0.1) * np.sign(grads[0][0].astype(np.float16)))
    np.testing.assert_allclose(values(h).astype(f), want16, rtol=2e-3, atol=2e-3)


# --------------------------------------------------------------------------- state dicts
@pytest.mark.parametrize("name,options", FIRSTS, ids=str)
def test_resume_from_state_dict_is_bit_identical(name, options, tmp_path):
    arrays, grads = data(4, shapes=[(5, 3), (4,)], steps=4)
    params = [tt.tensor(a, requires_grad=True) for a in arrays]
    opt = getattr(tt.optim, name)(params, **options)
    run(opt, params, grads[:2], "cpu")
    path = tmp_path / "opt.pt"
    tt.save({"opt": opt.state_dict(), "params": [p.detach() for p in params]}, path)
    run(opt, params, grads[2:], "cpu")
    saved = tt.load(path)
    assert sorted(saved["opt"]["state"]) == [0, 1] and list(saved["opt"]["state"][0]) == STATE_KEYS[name]
    assert saved["opt"]["param_groups"][0]["params"] == [0, 1]
    resumed = [t.clone().requires_grad_(True) for t in saved["params"]]
    opt2 = getattr(tt.optim, name)(resumed, **options)
    opt2.load_state_dict(saved["opt"])
    run(opt2, resumed, grads[2:], "cpu")
    for a, b in zip(params, resumed):
        np.testing.assert_array_equal(values(a), values(b))
    assert opt2.state[resumed[0]]["step"].item() == 4


def test_state_dict_groups_hold_torchs_options():
    p = tt.zeros(2, requires_grad=True)
    groups = {name: {k: v for k, v in getattr(tt.optim, name)([p]).state_dict()["param_groups"][0].items()}
              for name in REFS}
    # torch 2.13's defaults, in its order
    assert groups["Adagrad"] == {"lr": 0.01, "lr_decay": 0, "eps": 1e-10, "weight_decay": 0,
                                 "initial_accumulator_value": 0, "foreach": None, "maximize": False,
                                 "differentiable": False, "fused": None, "params": [0]}
    assert list(groups["Adadelta"]) == ["lr", "rho", "eps", "weight_decay", "maximize", "capturable", "foreach",
                                        "differentiable", "params"]
    assert list(groups["NAdam"]) == ["lr", "betas", "eps", "weight_decay", "momentum_decay",
                                     "decoupled_weight_decay", "maximize", "foreach", "capturable",
                                     "differentiable", "params"]
    assert groups["NAdam"]["momentum_decay"] == 4e-3 and groups["Adamax"]["lr"] == 2e-3
    assert groups["Rprop"]["etas"] == (0.5, 1.2) and groups["Rprop"]["step_sizes"] == (1e-6, 50)
    assert groups["ASGD"]["t0"] == 1e6 and groups["ASGD"]["lambd"] == 1e-4 and groups["RAdam"]["lr"] == 1e-3
    # Adagrad makes its state at construction, as torch's
    opt = tt.optim.Adagrad([p], initial_accumulator_value=0.5)
    assert opt.state[p]["sum"].tolist() == [0.5, 0.5] and opt.state[p]["step"].item() == 0


# --------------------------------------------------------------------------- flags
@pytest.mark.parametrize("name,options", [("Adamax", {}), ("NAdam", {}), ("RAdam", dict(betas=(0.5, 0.6))),
                                          ("ASGD", dict(t0=1)), ("Rprop", {}), ("Adadelta", {})], ids=str)
def test_capturable_keeps_counters_on_the_device(name, options):
    arrays, grads = data(5, shapes=[(6,)], steps=3)
    p = tt.tensor(arrays[0], requires_grad=True, device="cuda")
    opt = getattr(tt.optim, name)([p], capturable=True, **options)
    run(opt, [p], grads, "cuda")
    check(p, REFS[name](arrays[0], [g[0] for g in grads], **options))
    assert all(v.device.type == "cuda" for v in opt.state[p].values())


def test_capturable_needs_a_cuda_device():
    p = tt.ones(3, requires_grad=True)
    p.grad = tt.ones(3)
    with pytest.raises(AssertionError, match=r"^If capturable=True, params and state_steps must be on supported "
                                             r"devices: \['cuda'\]\.$"):
        tt.optim.RAdam([p], capturable=True).step()
    with pytest.raises(AssertionError, match=r"^If capturable=True, params, mu_products and state_steps must be"):
        tt.optim.NAdam([p], capturable=True).step()


@pytest.mark.parametrize("name,options", [("Adagrad", dict(lr=0.5, weight_decay=0.1)),
                                          ("Adadelta", dict(lr=0.5, weight_decay=0.1)),
                                          ("NAdam", dict(lr=0.5, weight_decay=0.1)),
                                          ("RAdam", dict(lr=0.5, betas=(0.5, 0.6), weight_decay=0.1)),
                                          ("ASGD", dict(lr=0.5, weight_decay=0.1)),
                                          ("Rprop", dict(lr=0.5)),
                                          ("SGD", dict(lr=0.5, momentum=0.9, weight_decay=0.1, nesterov=True)),
                                          ("AdamW", dict(lr=0.5)), ("Adam", dict(lr=0.5)),
                                          ("RMSprop", dict(lr=0.5, weight_decay=0.1))], ids=str)
def test_differentiable_step_is_recorded_by_autograd(name, options):
    """differentiable=True: the step runs with autograd on, so the updated parameter's gradient
    with respect to the gradient fed in equals central finite differences of the same update
    (float64, two steps)."""
    rng = np.random.default_rng(6)
    w0, g1, g2 = rng.standard_normal(4), rng.standard_normal(4), rng.standard_normal(4)

    def step_twice(gv, differentiable):
        w = tt.tensor(w0, requires_grad=True)
        p = w.clone() if differentiable else w
        opt = getattr(tt.optim, name)([p], differentiable=differentiable, **options)
        p.grad = tt.tensor(g1)
        opt.step()
        p.grad = gv
        opt.step()
        return p

    g = tt.tensor(g2, requires_grad=True)
    p = step_twice(g, True)
    assert p.grad_fn is not None
    (p * tt.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    h = 1e-6
    numeric = []
    for i in range(4):
        e = np.zeros(4)
        e[i] = h
        plus = values(step_twice(tt.tensor(g2 + e), False))
        minus = values(step_twice(tt.tensor(g2 - e), False))
        numeric.append(((plus - minus) / (2 * h)) @ np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_allclose(values(g.grad), numeric, rtol=1e-5, atol=1e-7)


def test_fused_adagrad_one_launch_per_group_and_dtype(monkeypatch):
    arrays, grads = data(7, shapes=[(100,), (7, 13), (5,), (40,)], steps=2)
    params = [tt.tensor(a, requires_grad=True, device="cuda") for a in arrays[:3]] + \
        [tt.tensor(arrays[3], requires_grad=True, device="cuda", dtype=tt.float64)]
    opt = tt.optim.Adagrad([{"params": params[:2] + [params[3]]}, {"params": [params[2]], "lr": 0.5}],
                           lr_decay=0.1, fused=True)
    # fused: the counter stays on the host (the launch takes the corrections computed there)
    assert opt.state[params[3]]["step"].device.type == "cpu"
    launches = []
    real_run = tb._run
    monkeypatch.setattr(tb, "_run", lambda kernel, *a, **k: (launches.append(kernel), real_run(kernel, *a, **k)))
    for gs in grads:
        for p, g in zip(params, gs):
            p.grad = tt.tensor(g, device="cuda", dtype=p.dtype)
        launches.clear()
        opt.step()
    names = [getattr(k, "fn", k).__name__ for k in launches]
    assert names.count("adagrad_kernel") == 3       # group 0: float32 + float64; group 1: float32
    for i, lr in [(0, 0.01), (1, 0.01), (2, 0.5)]:
        check(params[i], ref_adagrad(arrays[i], [g[i] for g in grads], lr=lr, lr_decay=0.1))
    np.testing.assert_allclose(values(params[3]), ref_adagrad(arrays[3].astype(np.float64),
                               [g[3].astype(np.float64) for g in grads], lr_decay=0.1), rtol=1e-14)


# --------------------------------------------------------------------------- torch's errors
def test_errors_are_torchs():
    p = tt.zeros(2, requires_grad=True)
    cases = [
        (ValueError, "Invalid learning rate: -1.0", lambda: tt.optim.Adagrad([p], lr=-1.0)),
        (ValueError, "Invalid lr_decay value: -1", lambda: tt.optim.Adagrad([p], lr_decay=-1)),
        (ValueError, "Invalid initial_accumulator_value value: -1",
         lambda: tt.optim.Adagrad([p], initial_accumulator_value=-1)),
        (RuntimeError, "`fused` does not support `differentiable`",
         lambda: tt.optim.Adagrad([p], fused=True, differentiable=True)),
        (RuntimeError, "`fused` and `foreach` cannot be `True` together.",
         lambda: tt.optim.Adagrad([p], fused=True, foreach=True)),
        (ValueError, "Invalid rho value: 1.5", lambda: tt.optim.Adadelta([p], rho=1.5)),
        (ValueError, "Invalid epsilon value: -1", lambda: tt.optim.Adadelta([p], eps=-1)),
        (ValueError, "Invalid beta parameter at index 1: 1.0", lambda: tt.optim.Adamax([p], betas=(0.9, 1.0))),
        (ValueError, "Invalid momentum_decay value: -0.1", lambda: tt.optim.NAdam([p], momentum_decay=-0.1)),
        (ValueError, "Invalid weight_decay value: -0.1", lambda: tt.optim.RAdam([p], weight_decay=-0.1)),
        (ValueError, "Invalid weight_decay value: -1", lambda: tt.optim.ASGD([p], weight_decay=-1)),
        (ValueError, "Invalid eta values: 0.5, 0.9", lambda: tt.optim.Rprop([p], etas=(0.5, 0.9))),
        (ValueError, "Tensor lr must be 1-element", lambda: tt.optim.Rprop([p], lr=tt.ones(2))),
        (TypeError, "Adadelta.__init__() got an unexpected keyword argument 'fused'",
         lambda: tt.optim.Adadelta([p], fused=True)),
    ]
    for error, message, make in cases:
        with pytest.raises(error) as info:
            make()
        assert str(info.value) == message


def test_tensor_lr_and_skipped_params():
    arrays, grads = data(8, shapes=[(5,), (3,)], steps=2)
    params = [tt.tensor(a, requires_grad=True) for a in arrays]
    opt = tt.optim.NAdam(params, lr=tt.tensor(0.01))
    for gs in grads:
        params[0].grad = tt.tensor(gs[0])
        opt.step()
    check(params[0], ref_nadam(arrays[0], [g[0] for g in grads], lr=0.01))
    np.testing.assert_array_equal(values(params[1]), arrays[1])
    assert params[1] not in opt.state


# --------------------------------------------------------------------------- LBFGS
def _lbfgs_cases():
    import json
    import os
    import sys
    data = os.path.join(os.path.dirname(__file__), "data")
    sys.path.insert(0, data)
    import lbfgs_cases
    with open(os.path.join(data, "lbfgs_values.json")) as fh:
        return lbfgs_cases, json.load(fh)


@pytest.mark.parametrize("key", ["fixed_step", "strong_wolfe", "to_convergence", "max_eval"])
def test_lbfgs_trajectory_equals_torchs(key):
    """Rosenbrock in float64 over two parameters: after every step the parameters equal torch
    2.13's recorded ones to 1e-10, with the same numbers of closure evaluations and iterations
    (tests/data/make_lbfgs_values.py)."""
    cases, recorded = _lbfgs_cases()
    got = cases.run(tt, key)
    assert len(got) == len(recorded[key])
    for (loss, flat, evals, iters), (w_loss, w_flat, w_evals, w_iters) in zip(got, recorded[key]):
        assert (evals, iters) == (w_evals, w_iters)
        assert loss == pytest.approx(w_loss, rel=1e-12)
        np.testing.assert_allclose(flat, w_flat, rtol=0, atol=1e-10)
    if key == "to_convergence":
        np.testing.assert_allclose(got[-1][1], np.ones(5), atol=1e-7)      # the minimum of Rosenbrock


def test_lbfgs_state_dict_resumes(tmp_path):
    cases, _ = _lbfgs_cases()

    def make():
        a = tt.tensor(cases.START[0], dtype=tt.float64, requires_grad=True)
        b = tt.tensor(cases.START[1], dtype=tt.float64, requires_grad=True)
        opt = tt.optim.LBFGS([a, b], lr=1, max_iter=4, history_size=3, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = cases.rosenbrock(tt, a, b)
            loss.backward()
            return loss
        return a, b, opt, closure

    a, b, opt, closure = make()
    opt.step(closure)
    tt.save({"opt": opt.state_dict(), "a": a.detach(), "b": b.detach()}, tmp_path / "lbfgs.pt")
    opt.step(closure)
    saved = tt.load(tmp_path / "lbfgs.pt")
    assert {"func_evals", "n_iter", "d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad",
            "prev_loss", "al"} <= set(saved["opt"]["state"][0])
    a2, b2, opt2, closure2 = make()
    with tt.no_grad():
        a2.copy_(saved["a"])
        b2.copy_(saved["b"])
    opt2.load_state_dict(saved["opt"])
    opt2.step(closure2)
    np.testing.assert_array_equal(values(a2), values(a))
    np.testing.assert_array_equal(values(b2), values(b))


def test_lbfgs_errors_are_torchs():
    p = tt.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match=r"^LBFGS doesn't support per-parameter options \(parameter groups\)$"):
        tt.optim.LBFGS([{"params": [p]}, {"params": [tt.zeros(1, requires_grad=True)]}])
    with pytest.raises(ValueError, match=r"^Invalid learning rate: -1$"):
        tt.optim.LBFGS([p], lr=-1)
    opt = tt.optim.LBFGS([p], line_search_fn="armijo")
    assert opt.param_groups[0]["max_eval"] == 25                     # max_iter * 5 // 4

    def closure():
        opt.zero_grad()
        loss = ((p - 1) ** 2).sum()
        loss.backward()
        return loss
    with pytest.raises(RuntimeError, match=r"^only 'strong_wolfe' is supported$"):
        opt.step(closure)


# --------------------------------------------------------------------------- swa_utils
swa = tt.optim.swa_utils


def _model():
    tt.manual_seed(0)
    return tt.nn.Sequential(tt.nn.Linear(3, 2), tt.nn.BatchNorm1d(2))


def _perturb(model, k):
    with tt.no_grad():
        for i, p in enumerate(model.parameters()):
            p.add_(0.1 * (k + 1) * (i + 1))
        model[1].running_mean.add_(float(k))


def test_averaged_model_swa_is_the_running_mean():
    model = _model()
    averaged = swa.AveragedModel(model)
    snapshots = []
    for k in range(4):
        _perturb(model, k)
        snapshots.append([values(p).copy() for p in model.parameters()])
        averaged.update_parameters(model)
    assert averaged.n_averaged.dtype == tt.int64 and averaged.n_averaged.item() == 4
    for i, p in enumerate(averaged.module.parameters()):
        np.testing.assert_allclose(values(p), np.mean([s[i] for s in snapshots], axis=0), rtol=1e-6, atol=1e-7)
    # without use_buffers the buffers are the model's latest, not averaged
    np.testing.assert_array_equal(values(averaged.module[1].running_mean), values(model[1].running_mean))
    x = tt.randn(5, 3)
    averaged.eval()
    np.testing.assert_array_equal(values(averaged(x)), values(averaged.module(x)))
    assert "n_averaged" in averaged.state_dict()


@pytest.mark.parametrize("per_tensor", [False, True], ids=["multi_avg_fn", "avg_fn"])
def test_averaged_model_ema(per_tensor):
    model = _model()
    fn = dict(avg_fn=swa.get_ema_avg_fn(0.75)) if per_tensor else dict(multi_avg_fn=swa.get_ema_multi_avg_fn(0.75))
    averaged = swa.AveragedModel(model, use_buffers=True, **fn)
    ema = None
    for k in range(3):
        _perturb(model, k)
        current = [values(p).copy() for p in model.parameters()] + [values(model[1].running_mean).copy()]
        ema = current if ema is None else [0.75 * e + 0.25 * c for e, c in zip(ema, current)]
        averaged.update_parameters(model)
    got = [values(p) for p in averaged.module.parameters()] + [values(averaged.module[1].running_mean)]
    for g, w in zip(got, ema):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)


def test_update_bn_recomputes_running_statistics():
    model = _model()
    model.eval()
    rng = np.random.default_rng(11)
    batches = [rng.standard_normal((4, 3)).astype(f) * 2 + 1 for _ in range(3)]
    loader = [(tt.tensor(b), tt.zeros(4)) for b in batches]
    swa.update_bn(loader, model)
    with tt.no_grad():
        hidden = [values(model[0](tt.tensor(b))) for b in batches]
    # momentum None: the cumulative average of the batches' means and unbiased variances
    np.testing.assert_allclose(values(model[1].running_mean), np.mean([h.mean(0) for h in hidden], axis=0),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(values(model[1].running_var), np.mean([h.var(0, ddof=1) for h in hidden], axis=0),
                               rtol=1e-5, atol=1e-6)
    assert model[1].momentum == 0.1 and not model.training and model[1].num_batches_tracked.item() == 3
    swa.update_bn([], tt.nn.Linear(2, 2))       # no BatchNorm: nothing to do


def test_swalr_anneals_to_swa_lr():
    def lrs(**kw):
        opt = tt.optim.SGD([{"params": [tt.zeros(1, requires_grad=True)]},
                            {"params": [tt.zeros(1, requires_grad=True)], "lr": 0.1}], lr=0.5)
        sched = swa.SWALR(opt, **kw)
        out = [[g["lr"] for g in opt.param_groups]]
        for _ in range(5):
            opt.step()
            sched.step()
            out.append([g["lr"] for g in opt.param_groups])
        return out, sched

    got, sched = lrs(swa_lr=0.05, anneal_epochs=3)
    for t, row in enumerate(got):        # lr_t = swa_lr + (lr_0 - swa_lr) * (1 - alpha(t / 3)), alpha cosine
        alpha = (1 - math.cos(math.pi * min(t, 3) / 3)) / 2
        assert row == pytest.approx([0.05 + (0.5 - 0.05) * (1 - alpha), 0.05 + (0.1 - 0.05) * (1 - alpha)],
                                    rel=1e-14)
    assert "anneal_func" not in sched.state_dict() and sched.state_dict()["_anneal_strategy"] == "cos"
    got, _ = lrs(swa_lr=[0.05, 0.2], anneal_epochs=4, anneal_strategy="linear")
    np.testing.assert_allclose(got, [[0.5 + (0.05 - 0.5) * min(t, 4) / 4, 0.1 + (0.2 - 0.1) * min(t, 4) / 4]
                                     for t in range(6)], rtol=1e-14)
    got, _ = lrs(swa_lr=0.05, anneal_epochs=0)
    assert got == [[0.05, 0.05]] * 6
    opt = tt.optim.SGD([tt.zeros(1, requires_grad=True)], lr=0.5)
    with pytest.raises(ValueError, match=r"^anneal_strategy must be one of 'cos' or 'linear', instead got exp$"):
        swa.SWALR(opt, 0.1, anneal_strategy="exp")
    with pytest.raises(ValueError, match=r"^anneal_epochs must be equal or greater than 0, got -1$"):
        swa.SWALR(opt, 0.1, anneal_epochs=-1)
    with pytest.raises(ValueError, match=r"^Invalid decay value 1.5 provided. Please provide a value in \[0,1\] range.$"):
        swa.get_ema_multi_avg_fn(1.5)
    with pytest.raises(AssertionError, match=r"^Only one of avg_fn and multi_avg_fn should be provided$"):
        swa.AveragedModel(tt.nn.Linear(1, 1), avg_fn=swa.get_swa_avg_fn(), multi_avg_fn=swa.get_swa_multi_avg_fn())


# --------------------------------------------------------------------------- SparseAdam
def ref_sparse_adam(p, steps, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
    """Lazy Adam by hand: only the rows of each step's (coalesced) gradient move."""
    b1, b2 = betas
    p, m, v = p.copy(), np.zeros_like(p), np.zeros_like(p)
    for step, (idx, val) in enumerate(steps, 1):
        dense = np.zeros_like(p)
        np.add.at(dense, idx, val)          # a fresh array: duplicates summed
        rows = np.unique(idx)
        g = -dense[rows] if maximize else dense[rows]
        m_upd = (g - m[rows]) * f(1 - b1)
        v_upd = (g * g - v[rows]) * f(1 - b2)
        numer, denom = m[rows] + m_upd, np.sqrt(v[rows] + v_upd) + f(eps)
        m[rows] += m_upd
        v[rows] += v_upd
        step_size = lr * math.sqrt(1 - b2 ** step) / (1 - b1 ** step)
        p[rows] += f(-step_size) * (numer / denom)
    return p, m


@pytest.mark.parametrize("device,options", [("cpu", {}), ("cpu", dict(lr=0.1, betas=(0.5, 0.7), maximize=True)),
                                            ("cuda", dict(lr=0.1, maximize=True))], ids=str)
def test_sparse_adam_updates_only_the_gradient_rows(device, options):
    rng = np.random.default_rng(12)
    start = rng.standard_normal((7, 3)).astype(f)
    steps = [([0, 2, 2, 5], rng.standard_normal((4, 3)).astype(f)), ([1, 2], rng.standard_normal((2, 3)).astype(f)),
             ([5, 0, 4], rng.standard_normal((3, 3)).astype(f))]
    p = tt.tensor(start, requires_grad=True, device=device)
    opt = tt.optim.SparseAdam([p], **options)
    for idx, val in steps:
        p.grad = tt.sparse_coo_tensor(tt.tensor([idx], device=device), tt.tensor(val, device=device), (7, 3))
        opt.step()
    want_p, want_m = ref_sparse_adam(start, steps, **options)
    check(p, want_p)
    np.testing.assert_array_equal(values(p)[[3, 6]], start[[3, 6]])       # never in a gradient
    state = opt.state_dict()["state"][0]
    assert list(state) == ["step", "exp_avg", "exp_avg_sq"] and state["step"] == 3       # a Python int
    check(state["exp_avg"], want_m)


def test_sparse_adam_errors_are_torchs():
    p = tt.zeros(3, 2, requires_grad=True)
    p.grad = tt.ones(3, 2)
    with pytest.raises(RuntimeError, match=r"^SparseAdam does not support dense gradients, please consider Adam "
                                           r"instead$"):
        tt.optim.SparseAdam([p]).step()
    with pytest.raises(ValueError, match=r"^Invalid learning rate: 0.0$"):
        tt.optim.SparseAdam([p], lr=0.0)
    with pytest.raises(ValueError, match=r"^Invalid epsilon value: 0.0$"):
        tt.optim.SparseAdam([p], eps=0.0)
    sparse = tt.sparse_coo_tensor(tt.tensor([[0]]), tt.ones(1, 2), (3, 2))
    with pytest.raises(ValueError, match=r"^Sparse params at indices \[\[0, 1\]\]: SparseAdam requires dense "
                                         r"parameter tensors$"):
        tt.optim.SparseAdam([p, sparse])
    empty = tt.zeros(3, 2, requires_grad=True)
    empty.grad = tt.sparse_coo_tensor(tt.zeros(1, 0, dtype=tt.int64), tt.zeros(0, 2), (3, 2))
    tt.optim.SparseAdam([empty]).step()          # an empty gradient: the step count moves, nothing else
    assert empty.abs().sum().item() == 0


def test_adagrad_takes_sparse_gradients():
    """torch's Adagrad accepts sparse gradients: only their rows accumulate and move."""
    rng = np.random.default_rng(13)
    start = rng.standard_normal((6, 2)).astype(f)
    steps = [([0, 3, 3], rng.standard_normal((3, 2)).astype(f)), ([3, 5], rng.standard_normal((2, 2)).astype(f))]
    p = tt.tensor(start, requires_grad=True)
    opt = tt.optim.Adagrad([p], lr=0.1, lr_decay=0.5, initial_accumulator_value=0.25, maximize=True)
    want, acc = start.copy(), np.full_like(start, 0.25)
    for step, (idx, val) in enumerate(steps, 1):
        p.grad = tt.sparse_coo_tensor(tt.tensor([idx]), tt.tensor(val), (6, 2))
        opt.step()
        dense = np.zeros_like(start)
        np.add.at(dense, idx, val)
        rows = np.unique(idx)
        g = -dense[rows]
        acc[rows] += g * g
        want[rows] += f(-0.1 / (1 + (step - 1) * 0.5)) * (g / (np.sqrt(acc[rows]) + f(1e-10)))
    check(p, want)
    check(opt.state[p]["sum"], acc)
    p.grad = tt.sparse_coo_tensor(tt.tensor([[0]]), tt.ones(1, 2), (6, 2))
    with pytest.raises(RuntimeError, match=r"^weight_decay option is not compatible with sparse gradients$"):
        tt.optim.Adagrad([p], weight_decay=0.1).step()


@pytest.mark.parametrize("name", ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"])
def test_sparse_gradients_are_refused_as_torch_refuses_them(name):
    p = tt.zeros(3, 2, requires_grad=True)
    p.grad = tt.sparse_coo_tensor(tt.tensor([[0]]), tt.ones(1, 2), (3, 2))
    with pytest.raises(RuntimeError, match=f"^{name} does not support sparse gradients$"):
        getattr(tt.optim, name)([p]).step()


@pytest.mark.parametrize("name,options", [("Adam", dict(lr=0.1, amsgrad=True, weight_decay=0.1)),
                                          ("AdamW", dict(lr=0.1)),
                                          ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True))], ids=str)
def test_capturable_adam_and_rmsprop(name, options):
    """capturable=True: the counters live on the device and the step reads them as tensors
    (torch's capturable branch); the trajectory is the NumPy update of tests/test_optim.py, to the
    precision of that branch: its bias corrections 1 - beta**step are computed in float32 from the
    float32 counter (cancellation: ~1e-4 relative at step 1 with beta2 = 0.999), not in float64."""
    from test_optim import ref_adam, ref_rmsprop
    arrays, grads = data(14, shapes=[(70,)], steps=3)
    p = tt.tensor(arrays[0], requires_grad=True, device="cuda")
    opt = getattr(tt.optim, name)([p], capturable=True, **options)
    run(opt, [p], grads, "cuda")
    if name == "RMSprop":
        want = ref_rmsprop(arrays[0], [g[0] for g in grads], **options)
    else:
        want = ref_adam(arrays[0], [g[0] for g in grads], decoupled=name == "AdamW",
                        **dict(options, weight_decay=options.get("weight_decay", 1e-2 if name == "AdamW" else 0)))
    if name == "RMSprop":           # its rule reads no counter: the same rounding as the reference
        check(p, want)
    else:
        np.testing.assert_allclose(values(p), want, rtol=1e-4, atol=2e-5)
        with pytest.raises(AssertionError):      # not the float64 corrections: a different rounding
            np.testing.assert_allclose(values(p), want, rtol=1e-7, atol=1e-8)
    assert opt.state[p]["step"].device.type == "cuda" and opt.state[p]["step"].item() == 3
    cpu = tt.ones(2, requires_grad=True)
    cpu.grad = tt.ones(2)
    with pytest.raises(AssertionError, match=r"^If capturable=True, params and state_steps must be on supported"):
        getattr(tt.optim, name)([cpu], capturable=True).step()


def test_fused_flags_are_torchs():
    p = tt.zeros(2, requires_grad=True)
    for name in ("SGD", "Adam", "AdamW", "Adagrad"):
        with pytest.raises(RuntimeError, match=r"^`fused` does not support `differentiable`$"):
            getattr(tt.optim, name)([p], fused=True, differentiable=True)
    p.grad = tt.ones(2)
    opt = tt.optim.Adam([p], fused=True)        # torch fuses Adam on the cpu too: accepted
    opt.step()
    assert opt.state[p]["step"].item() == 1


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_fused_adagrad_16bit_state(dtype):
    """16-bit params on cuda: the fused kernel reads the 16-bit values, computes in float32 and
    rounds once per step, as the cpu update does: the two devices agree to one 16-bit rounding."""
    arrays, grads = data(15, shapes=[(70,)], steps=3)
    out = {}
    for device in ("cpu", "cuda"):
        p = tt.tensor(arrays[0], dtype=getattr(tt, dtype), device=device, requires_grad=True)
        opt = tt.optim.Adagrad([p], lr=0.1, weight_decay=0.1, initial_accumulator_value=0.5)
        run(opt, [p], [[g[0]] for g in grads], device)
        assert opt.state[p]["sum"].dtype == getattr(tt, dtype)
        out[device] = values(p.float())
    np.testing.assert_allclose(out["cuda"], out["cpu"], rtol=1e-2 if dtype == "bfloat16" else 1e-3, atol=1e-3)
    ref = ref_adagrad(arrays[0], [g[0] for g in grads], lr=0.1, weight_decay=0.1, initial_accumulator_value=0.5)
    np.testing.assert_allclose(out["cpu"], ref, rtol=3e-2 if dtype == "bfloat16" else 3e-3, atol=3e-3)


def test_lbfgs_on_cuda_matches_cpu():
    out = {}
    for device in ("cpu", "cuda"):
        a = tt.tensor([-1.2, 1.0], dtype=tt.float64, device=device, requires_grad=True)
        opt = tt.optim.LBFGS([a], max_iter=4, history_size=2, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = 100 * (a[1] - a[0] ** 2) ** 2 + (1 - a[0]) ** 2
            loss.backward()
            return loss
        opt.step(closure)
        out[device] = (values(a), opt.state[a]["func_evals"], opt.state[a]["d"].device.type)
    np.testing.assert_allclose(out["cuda"][0], out["cpu"][0], rtol=1e-12)
    assert out["cuda"][1] == out["cpu"][1] and out["cuda"][2] == "cuda"
