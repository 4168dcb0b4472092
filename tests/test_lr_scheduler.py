"""tt.optim.lr_scheduler: each schedule's learning rates against their closed forms (torch's
documented formulas), OneCycleLR's phases and momentum cycling, state_dict round trips, torch's
warnings and errors. Schedulers only touch Python floats: one device is enough."""
import copy
import math
import warnings

import pytest

import tritensor as tt
from tritensor.optim import lr_scheduler as S


def sgd(lr=0.1, groups=1, **kw):
    params = [tt.zeros(2, requires_grad=True) for _ in range(groups)]
    return tt.optim.SGD([{"params": [p]} for p in params], lr=lr, momentum=0.9, **kw)


def lrs(opt, sched, steps, key=None):
    """The lr after construction and after each of ``steps`` (optimizer.step, scheduler.step)
    pairs; with ``key``, also that group value (momentum / betas[0]) after each step."""
    out, extra = [sched.get_last_lr()[0]], []
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append(sched.get_last_lr()[0])
        if key:
            extra.append(key(opt.param_groups[0]))
    return out, extra


def close(got, want):
    assert got == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_step_lr():
    opt = sgd()
    got, _ = lrs(opt, S.StepLR(opt, step_size=3, gamma=0.5), 10)
    assert got == [0.1 * 0.5 ** (e // 3) for e in range(11)]     # powers of two: exact
    assert opt.param_groups[0]["initial_lr"] == 0.1 and opt.param_groups[0]["lr"] == got[-1]


def test_multistep_lr_counts_repeated_milestones():
    opt = sgd()
    got, _ = lrs(opt, S.MultiStepLR(opt, milestones=[2, 5, 5, 8], gamma=0.1), 10)
    decays = [0, 0, 1, 1, 1, 3, 3, 3, 4, 4, 4]                   # 5 is listed twice
    close(got, [0.1 * 0.1 ** k for k in decays])


def test_exponential_lr():
    opt = sgd(lr=0.2)
    got, _ = lrs(opt, S.ExponentialLR(opt, gamma=0.9), 10)
    close(got, [0.2 * 0.9 ** e for e in range(11)])


def test_cosine_annealing_lr_recursive_form_follows_the_closed_form_over_periods():
    opt = sgd()
    got, _ = lrs(opt, S.CosineAnnealingLR(opt, T_max=5, eta_min=0.01), 23)
    close(got, [0.01 + (0.1 - 0.01) * (1 + math.cos(math.pi * e / 5)) / 2 for e in range(24)])
    assert got[5] == 0.01    # the minimum is reached exactly


def test_cosine_annealing_follows_an_lr_changed_from_outside():
    """The recursive form rescales whatever lr the group has (torch's chainable behaviour)."""
    opt = sgd()
    sched = S.CosineAnnealingLR(opt, T_max=10)
    opt.step()
    sched.step()
    opt.param_groups[0]["lr"] *= 0.5
    opt.step()
    sched.step()
    ratio = (1 + math.cos(math.pi * 2 / 10)) / (1 + math.cos(math.pi * 1 / 10))
    close(sched.get_last_lr(), [ratio * 0.5 * 0.1 * (1 + math.cos(math.pi / 10)) / 2])


def test_lambda_lr_per_group_and_multiplicative():
    opt = sgd(groups=2)
    sched = S.LambdaLR(opt, [lambda e: 0.95 ** e, lambda e: 1.0 / (e + 1)])
    for _ in range(4):
        opt.step()
        sched.step()
    close(sched.get_last_lr(), [0.1 * 0.95 ** 4, 0.1 / 5])
    opt = sgd()
    got, _ = lrs(opt, S.MultiplicativeLR(opt, lambda e: 0.5), 4)
    assert got == [0.1, 0.05, 0.025, 0.0125, 0.00625]


def test_linear_and_constant_lr():
    opt = sgd()
    got, _ = lrs(opt, S.LinearLR(opt, start_factor=0.25, end_factor=1.0, total_iters=4), 6)
    close(got, [0.1 * (0.25 + 0.75 * min(e, 4) / 4) for e in range(7)])
    opt = sgd()
    got, _ = lrs(opt, S.ConstantLR(opt, factor=0.5, total_iters=3), 5)
    close(got, [0.05, 0.05, 0.05, 0.1, 0.1, 0.1])


def _anneal_cos(start, end, pct):
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


def test_one_cycle_cos_with_sgd_momentum():
    opt = sgd()
    sched = S.OneCycleLR(opt, max_lr=1.0, total_steps=10)       # pct_start 0.3: the peak at step 2
    got, momenta = lrs(opt, sched, 9, key=lambda g: g["momentum"])
    initial, low = 1.0 / 25, 1.0 / 25 / 1e4
    want = [_anneal_cos(initial, 1.0, s / 2) if s <= 2 else _anneal_cos(1.0, low, (s - 2) / 7) for s in range(10)]
    close(got, want)
    want_momenta = [_anneal_cos(0.95, 0.85, s / 2) if s <= 2 else _anneal_cos(0.85, 0.95, (s - 2) / 7)
                    for s in range(1, 10)]
    close(momenta, want_momenta)
    group = opt.param_groups[0]
    assert (group["max_lr"], group["max_momentum"], group["base_momentum"]) == (1.0, 0.95, 0.85)
    close([group["initial_lr"], group["min_lr"]], [initial, low])
    opt.step()
    sched.step()                        # step 10 still computes (past the end of the last phase) ...
    with pytest.raises(ValueError, match="^Tried to step 11 times. The specified number of total steps is 10$"):
        opt.step()
        sched.step()                    # ... step 11 is torch's error


def test_one_cycle_linear_three_phase_cycles_adams_beta1():
    opt = tt.optim.Adam([tt.zeros(2, requires_grad=True)], lr=0.1, betas=(0.9, 0.99))
    sched = S.OneCycleLR(opt, max_lr=1.0, total_steps=12, anneal_strategy="linear", three_phase=True,
                         div_factor=10, final_div_factor=100)
    got, betas = lrs(opt, sched, 11, key=lambda g: g["betas"])
    ends = [3.6 - 1, 7.2 - 2, 11]      # float(pct * total) - 1, float(2 * pct * total) - 2, total - 1

    def linear(start, end, pct):
        return (end - start) * pct + start

    def expected(s, values):
        starts = [0.0] + ends[:2]
        phase = 0 if s <= ends[0] else 1 if s <= ends[1] else 2
        return linear(values[phase], values[phase + 1], (s - starts[phase]) / (ends[phase] - starts[phase]))

    close(got, [expected(s, [0.1, 1.0, 0.1, 0.001]) for s in range(12)])
    close([b[0] for b in betas], [expected(s, [0.95, 0.85, 0.95, 0.95]) for s in range(1, 12)])
    assert all(b[1] == 0.99 for b in betas)


def test_one_cycle_errors():
    opt = sgd()
    cases = [
        (lambda: S.OneCycleLR(opt, 1.0), ValueError, "You must define either total_steps OR (epochs AND steps_per_epoch)"),
        (lambda: S.OneCycleLR(opt, 1.0, total_steps=0), ValueError, "Expected positive integer total_steps, but got 0"),
        (lambda: S.OneCycleLR(opt, 1.0, total_steps=5, anneal_strategy="x"), ValueError,
         "anneal_strategy must be one of 'cos' or 'linear', instead got x"),
        (lambda: S.OneCycleLR(opt, [1.0, 2.0], total_steps=5), ValueError,
         "max_lr must have the same length as optimizer.param_groups. max_lr has 2 values, param_groups has 1."),
        (lambda: S.StepLR([], 3), TypeError, "list is not an Optimizer"),
        (lambda: S.LambdaLR(opt, [lambda e: 1, lambda e: 2]), ValueError, "Expected 1 lr_lambdas, but got 2"),
    ]
    for make, error, text in cases:
        with pytest.raises(error) as info:
            make()
        assert str(info.value) == text

    class NoMomentum(tt.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.1})

    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        S.OneCycleLR(NoMomentum([tt.zeros(1, requires_grad=True)]), 1.0, total_steps=5)
    assert S.OneCycleLR(opt, 1.0, epochs=2, steps_per_epoch=3).total_steps == 6


@pytest.mark.parametrize("make", [lambda o: S.StepLR(o, 2, 0.5), lambda o: S.MultiStepLR(o, [1, 3]),
                                  lambda o: S.ExponentialLR(o, 0.7), lambda o: S.CosineAnnealingLR(o, 4, 0.001),
                                  lambda o: S.OneCycleLR(o, 1.0, total_steps=8)],
                         ids=["step", "multistep", "exponential", "cosine", "onecycle"])
def test_state_dict_round_trip_resumes_the_schedule(make):
    opt = sgd()
    sched = make(opt)
    for _ in range(3):
        opt.step()
        sched.step()
    saved_sched = copy.deepcopy(sched.state_dict())
    saved_opt = copy.deepcopy(opt.state_dict())
    assert "optimizer" not in saved_sched and saved_sched["last_epoch"] == 3
    reference, _ = lrs(opt, sched, 3)

    opt2 = sgd(lr=7.0)
    sched2 = make(opt2)
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved_sched)
    resumed, _ = lrs(opt2, sched2, 3)
    assert resumed == reference


def test_lambda_lr_state_dict_keeps_callable_objects_only():
    class Decay:
        def __init__(self, rate):
            self.rate = rate

        def __call__(self, epoch):
            return self.rate ** epoch

    opt = sgd(groups=2)
    sched = S.LambdaLR(opt, [lambda e: 1.0, Decay(0.5)])
    state = sched.state_dict()
    assert state["lr_lambdas"] == [None, {"rate": 0.5}] and "optimizer" not in state
    state["lr_lambdas"][1] = {"rate": 0.25}
    sched.load_state_dict(state)
    assert sched.lr_lambdas[1].rate == 0.25


def test_warnings():
    opt = sgd()
    sched = S.StepLR(opt, 2)
    with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before `optimizer.step\(\)`"):
        sched.step()
    opt = sgd()
    sched = S.StepLR(opt, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
        sched.step()
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()
    with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)` was not necessary"):
        sched.step(6)
    assert sched.get_last_lr() == [0.1 * 0.1 ** 3]         # the closed form at epoch 6
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups\\[0\\]"):
        S.StepLR(sgd(), 2, last_epoch=3)
