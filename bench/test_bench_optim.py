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
the traffic of one step for a GB/s figure. Tiny sizes on the emulated device (a smoke check)."""
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


def _tt_params():
    values, grads = _arrays()
    params = [tt.tensor(v, device="cuda", requires_grad=True) for v in values]
    for p, g in zip(params, grads):
        p.grad = tt.tensor(g, device="cuda")
    return params


def _torch_params(torch):
    values, grads = _arrays()
    params = [torch.tensor(v, device="cuda", requires_grad=True) for v in values]
    for p, g in zip(params, grads):
        p.grad = torch.tensor(g, device="cuda")
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
            if kind == "adam":
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
        params = _torch_params(torch)
        opt = torch.optim.Adam(params, lr=LR, betas=BETAS, eps=EPS, fused=impl == "torch_fused",
                               foreach=impl == "torch_foreach" or None)
        sync = torch.cuda.synchronize
        step = opt.step
    else:
        params = _tt_params()
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
        params = _torch_params(torch)
        opt, sync = torch.optim.SGD(params, lr=LR, momentum=0.9, fused=True), torch.cuda.synchronize
    else:
        params = _tt_params()
        opt, sync = tt.optim.SGD(params, lr=LR, momentum=0.9), tt.cuda.synchronize

    for _ in range(CHECK_STEPS):
        opt.step()
    sync()
    _check_against_reference(params, "sgd")

    def run():
        opt.step()
        sync()
    benchmark(run)
