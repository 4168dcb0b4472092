"""pytest-benchmark: one optimizer step over a model's worth of parameters.

Rows of a group (same parameters, same gradients):
- ``tritensor_fused``: tt.optim.Adam / SGD (one multi-tensor Triton launch per group and dtype);
- ``tritensor_op_loop``: the same Adam update written as a per-parameter loop of tritensor ops
  (~10 launches per parameter), what the fused kernel replaces;
- ``torch_fused`` / ``torch_foreach``: torch.optim.Adam(fused=True) / the default foreach path,
  where torch with a GPU is importable.

Before it is timed, each implementation takes two steps that are checked against a float64
NumPy reference of torch's update (a fast wrong step is no result).
Adam moves 7 values per element (reads p, g, m, v; writes p, m, v): ``extra_info["bytes"]`` gives
the traffic of one step for a GB/s figure. Tiny sizes on the emulated device (a smoke check).

Issue 25: Adagrad (torch fuses it too) the same way on cuda; and on the cpu every optimizer
added then (Adagrad, Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop) against torch's foreach,
for-loop and fused implementations in the same run (torch on one thread), each implementation
checked first against the hand-written NumPy updates of tests/test_optim_more.py."""
import math

import numpy as np
import pytest

import tritensor as tt

REAL = tt.cuda.is_available() and not tt.cuda.is_emulated()
# real: 24 blocks of a 1024-wide MLP (25M parameters); emulated: a few odd sizes crossing chunks
SHAPES = [(1024, 1024), (1024,)] * 24 if REAL else [(16, 9), (70,), (5,)]
LR, BETAS, EPS = 1e-3, (0.9, 0.999), 1e-8


def _arrays():
    rng = np.random.default_rng(0)
    return ([rng.standard_normal(s).astype(np.float32) for s in SHAPES],
            [rng.standard_normal(s).astype(np.float32) for s in SHAPES])


def _params(lib):
    """The parameters, with their gradients, on the GPU in ``lib`` (tritensor or torch)."""
    values, grads = _arrays()
    params = [lib.tensor(v, device="cuda", requires_grad=True) for v in values]
    for p, g in zip(params, grads):
        p.grad = lib.tensor(g, device="cuda")
    return params


def _op_loop_adam(params):
    """Adam written per parameter with tritensor ops (no fusion): the baseline."""
    states = [(tt.zeros_like(p), tt.zeros_like(p)) for p in params]
    step = [0]
    b1, b2 = BETAS

    def run():
        step[0] += 1
        bc1, bc2_sqrt = 1 - b1 ** step[0], math.sqrt(1 - b2 ** step[0])
        with tt.no_grad():
            for p, (m, v) in zip(params, states):
                g = p.grad
                m.mul_(b1).add_(g, alpha=1 - b1)
                v.mul_(b2).add_(g * g, alpha=1 - b2)
                denom = v.sqrt().div_(bc2_sqrt).add_(EPS)
                p.sub_(m / denom * (LR / bc1))
    return run


def _numel():
    return sum(math.prod(s) for s in SHAPES)


CHECK_STEPS = 2     # steps each implementation takes before it is timed, checked against NumPy


def _reference(kind):
    """The parameters after CHECK_STEPS steps with the same gradient each step, in float64
    NumPy (torch's formulas: Adam with bias corrections; SGD with momentum, first buffer = g)."""
    values, grads = _arrays()
    b1, b2 = BETAS
    out = []
    for p, g in zip(values, grads):
        p, g = p.astype(np.float64), g.astype(np.float64)
        m, v = np.zeros_like(p), np.zeros_like(p)
        for step in range(1, CHECK_STEPS + 1):
            if kind == "adagrad":
                m = m + g * g
                p = p - LR * g / (np.sqrt(m) + 1e-10)
            elif kind == "adam":
                m = b1 * m + (1 - b1) * g
                v = b2 * v + (1 - b2) * g * g
                p = p - LR / (1 - b1 ** step) * m / (np.sqrt(v) / math.sqrt(1 - b2 ** step) + EPS)
            else:
                m = g if step == 1 else 0.9 * m + g
                p = p - LR * m
        out.append(p)
    return out


def _check_against_reference(params, kind):
    for p, want in zip(params, _reference(kind)):
        np.testing.assert_allclose(np.asarray(p.detach().cpu().numpy(), dtype=np.float64), want,
                                   rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("impl", ["tritensor_fused", "tritensor_op_loop", "torch_fused", "torch_foreach"])
def test_adam_step(benchmark, impl):
    benchmark.group = f"adam step, {len(SHAPES)} params, {_numel()} elements"
    benchmark.extra_info["bytes"] = 7 * 4 * _numel()
    if impl.startswith("torch"):
        torch = pytest.importorskip("torch")
        if not torch.cuda.is_available():
            pytest.skip("torch has no GPU here")
        params = _params(torch)
        opt = torch.optim.Adam(params, lr=LR, betas=BETAS, eps=EPS, fused=impl == "torch_fused",
                               foreach=impl == "torch_foreach" or None)
        sync = torch.cuda.synchronize
        step = opt.step
    else:
        params = _params(tt)
        step = tt.optim.Adam(params, lr=LR, betas=BETAS, eps=EPS).step if impl == "tritensor_fused" \
            else _op_loop_adam(params)
        sync = tt.cuda.synchronize

    for _ in range(CHECK_STEPS):        # the timed step is the right step
        step()
    sync()
    _check_against_reference(params, "adam")

    def run():
        step()
        sync()
    benchmark(run)
    first = params[0].detach().cpu()
    assert np.isfinite(np.asarray(first.numpy())).all()


@pytest.mark.parametrize("impl", ["tritensor_fused", "torch_fused"])
def test_sgd_momentum_step(benchmark, impl):
    benchmark.group = f"sgd momentum step, {len(SHAPES)} params, {_numel()} elements"
    benchmark.extra_info["bytes"] = 5 * 4 * _numel()       # reads p, g, buf; writes p, buf
    if impl == "torch_fused":
        torch = pytest.importorskip("torch")
        if not torch.cuda.is_available():
            pytest.skip("torch has no GPU here")
        params = _params(torch)
        opt, sync = torch.optim.SGD(params, lr=LR, momentum=0.9, fused=True), torch.cuda.synchronize
    else:
        params = _params(tt)
        opt, sync = tt.optim.SGD(params, lr=LR, momentum=0.9), tt.cuda.synchronize

    for _ in range(CHECK_STEPS):
        opt.step()
    sync()
    _check_against_reference(params, "sgd")

    def run():
        opt.step()
        sync()
    benchmark(run)


@pytest.mark.parametrize("impl", ["tritensor_fused", "tritensor_op_loop", "torch_fused", "torch_foreach"])
def test_adagrad_step(benchmark, impl):
    benchmark.group = f"adagrad step, {len(SHAPES)} params, {_numel()} elements"
    benchmark.extra_info["bytes"] = 5 * 4 * _numel()       # reads p, g, sum; writes p, sum
    if impl.startswith("torch"):
        torch = pytest.importorskip("torch")
        if not torch.cuda.is_available():
            pytest.skip("torch has no GPU here")
        def make():
            params = _params(torch)
            return params, torch.optim.Adagrad(params, lr=LR, fused=impl == "torch_fused",
                                               foreach=impl == "torch_foreach" or None)
        try:
            make()[1].step()
        except RuntimeError as e:     # torch 2.11-2.13 fuse Adagrad on the cpu only
            pytest.skip(str(e))
        params, opt = make()
        step, sync = opt.step, torch.cuda.synchronize
    else:
        params = _params(tt)
        opt = tt.optim.Adagrad(params, lr=LR)
        step, sync = opt.step, tt.cuda.synchronize
        if impl == "tritensor_op_loop":     # the same update, op by op per parameter
            step = _op_loop(opt)
    for _ in range(CHECK_STEPS):
        step()
    sync()
    _check_against_reference(params, "adagrad")

    def run():
        step()
        sync()
    benchmark(run)


def _op_loop(opt):
    """Adagrad's update as a loop of tritensor ops per parameter (optim/_rules.py), the path
    without the fused kernel."""
    from tritensor.optim import _rules

    def run():
        with tt.no_grad():
            group = opt.param_groups[0]
            params = group["params"]
            steps = _rules.increment_step_tensors([opt.state[p]["step"] for p in params], False)
            _rules.adagrad(params, [p.grad for p in params], [opt.state[p]["sum"] for p in params], steps,
                           lr=group["lr"], weight_decay=0, lr_decay=0, eps=group["eps"], maximize=False,
                           differentiable=False)
    return run


# --------------------------------------------------------------------------- cpu: issue 25's optimizers
CPU_SHAPES = [(256, 256), (256,)] * 8          # 8 layers of a 256-wide MLP: 0.53M parameters
CPU_OPTIMIZERS = ["Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"]
TORCH_FUSES = {"Adagrad"}


def _cpu_arrays():
    rng = np.random.default_rng(1)
    return ([rng.standard_normal(s).astype(np.float32) for s in CPU_SHAPES],
            [rng.standard_normal(s).astype(np.float32) for s in CPU_SHAPES])


@pytest.mark.parametrize("impl", ["tritensor", "tritensor_op_loop", "torch_foreach", "torch_for_loop",
                                  "torch_fused"])
@pytest.mark.parametrize("name", CPU_OPTIMIZERS)
def test_cpu_step(benchmark, name, impl):
    from test_optim_more import REFS
    values, grads = _cpu_arrays()
    benchmark.group = f"cpu {name} step, {len(CPU_SHAPES)} params, {sum(math.prod(s) for s in CPU_SHAPES)} elements"
    if impl == "torch_fused" and name not in TORCH_FUSES:
        pytest.skip(f"torch has no fused {name}")
    if impl == "tritensor_op_loop" and name != "Adagrad":
        pytest.skip("the others run as an op loop already (the tritensor row)")
    if impl.startswith("torch"):
        torch = pytest.importorskip("torch")
        torch.set_num_threads(1)
        params = [torch.tensor(v, requires_grad=True) for v in values]
        for p, g in zip(params, grads):
            p.grad = torch.tensor(g)
        flags = {"torch_foreach": dict(foreach=True), "torch_for_loop": dict(foreach=False),
                 "torch_fused": dict(fused=True)}[impl]
        step = getattr(torch.optim, name)(params, **flags).step
    else:
        params = [tt.tensor(v, requires_grad=True) for v in values]
        for p, g in zip(params, grads):
            p.grad = tt.tensor(g)
        opt = getattr(tt.optim, name)(params)
        step = _op_loop(opt) if impl == "tritensor_op_loop" else opt.step
    for _ in range(CHECK_STEPS):
        step()
    for p, v, g in zip(params, values, grads):
        np.testing.assert_allclose(np.asarray(p.detach().numpy()), REFS[name](v, [g] * CHECK_STEPS),
                                   rtol=1e-5, atol=1e-6)
    benchmark(step)
