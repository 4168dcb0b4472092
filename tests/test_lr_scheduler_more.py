"""The rest of tt.optim.lr_scheduler (PolynomialLR, CosineAnnealingWarmRestarts, CyclicLR,
ReduceLROnPlateau, SequentialLR, ChainedScheduler, MultiplicativeLR): each case's learning
rates (and cycled momenta) equal the ones torch 2.13 produced for it (recorded by
tests/data/make_lr_scheduler_more.py from the cases in tests/data/lr_scheduler_cases.py), a few
also against hand-computed closed forms; state_dict round trips resume the same sequence;
torch's errors and warnings word for word."""
import json
import math
import os
import sys
import warnings

import pytest

import tritensor as tt

DATA = os.path.join(os.path.dirname(__file__), "data")
sys.path.insert(0, DATA)
from lr_scheduler_cases import CASES, build, run  # noqa: E402

with open(os.path.join(DATA, "lr_scheduler_more.json")) as _f:
    RECORDED = json.load(_f)

S = tt.optim.lr_scheduler


@pytest.mark.parametrize("key", sorted(CASES))
def test_sequence_equals_torchs(key):
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # stepped in the right order: no warning
        opt, sched = build(tt, key)
        assert [g["lr"] for g in opt.param_groups] == RECORDED[key]["initial"]
        got = run(key, opt, sched)
    want = RECORDED[key]["steps"]
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        for field in w:
            assert g[field] == pytest.approx(w[field], rel=1e-15, abs=1e-18), (i, field)


@pytest.mark.parametrize("key", sorted(CASES))
def test_state_dict_resumes_the_sequence(key, tmp_path):
    opt, sched = build(tt, key)
    half = CASES[key]["steps"] // 2
    run(key, opt, sched, 0, half)
    path = tmp_path / "sched.pt"
    tt.save({"opt": opt.state_dict(), "sched": sched.state_dict()}, path)
    saved = tt.load(path)
    opt2, sched2 = build(tt, key)
    opt2.load_state_dict(saved["opt"])
    sched2.load_state_dict(saved["sched"])
    assert run(key, opt2, sched2, half) == run(key, opt, sched, half)


def hand(schedule, steps):
    opt = tt.optim.SGD([tt.zeros(1, requires_grad=True)], lr=0.1)
    sched = schedule(opt)
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(steps):
        opt.step()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    return lrs


def test_closed_forms_by_hand():
    lrs = hand(lambda o: S.PolynomialLR(o, total_iters=4, power=2.0), 6)
    assert lrs == pytest.approx([0.1 * (1 - min(t, 4) / 4) ** 2 for t in range(7)], rel=1e-12, abs=1e-15)
    lrs = hand(lambda o: S.CosineAnnealingWarmRestarts(o, T_0=3, eta_min=0.01), 7)
    assert lrs == pytest.approx([0.01 + 0.09 * (1 + math.cos(math.pi * (t % 3) / 3)) / 2 for t in range(8)],
                                rel=1e-13)
    lrs = hand(lambda o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2, cycle_momentum=False), 8)
    assert lrs == pytest.approx([0.01 + 0.09 * (1 - abs(t / 2 - 1 - 2 * math.floor(t / 4))) for t in range(9)],
                                rel=1e-13)


def test_warm_restarts_fractional_epochs():
    opt = tt.optim.SGD([tt.zeros(1, requires_grad=True)], lr=1.0)
    sched = S.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2)
    for epoch, (t_cur, t_i) in [(0.5, (0.5, 2)), (2.5, (0.5, 4)), (6.0, (0.0, 8)), (1.0, (1.0, 2))]:
        sched.step(epoch)
        assert (sched.T_cur, sched.T_i) == (t_cur, t_i)
        assert opt.param_groups[0]["lr"] == pytest.approx((1 + math.cos(math.pi * t_cur / t_i)) / 2, rel=1e-15)
    assert sched.last_epoch == 1
    with pytest.raises(ValueError, match=r"^Expected non-negative epoch, but got -1$"):
        sched.step(-1)


def test_reduce_on_plateau_details():
    opt = tt.optim.SGD([tt.zeros(1, requires_grad=True)], lr=1.0)
    sched = S.ReduceLROnPlateau(opt, patience=0, factor=0.5, min_lr=0.3, eps=0.1)
    for m in [1.0, 1.0, 1.0, 1.0]:
        sched.step(tt.tensor(m))                 # a 0-d tensor metric is read with float()
    # 1.0 -> 0.5 -> 0.3 (min_lr); then 0.3 - 0.3 = 0 is below eps: unchanged
    assert opt.param_groups[0]["lr"] == 0.3 and sched.get_last_lr() == [0.3]
    assert sched.last_epoch == 4 and sched.best == 1.0 and sched.num_bad_epochs == 0
    with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)` was not necessary"):
        sched.step(0.5, epoch=10)
    assert sched.last_epoch == 10


def test_tensor_lr_is_filled_in_place():
    lr = tt.tensor(0.1)
    opt = tt.optim.Adam([tt.zeros(1, requires_grad=True)], lr=lr)
    sched = S.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=2)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr and lr.item() == pytest.approx(0.055)
    assert opt.param_groups[0]["betas"][0] == pytest.approx(0.85)


def test_errors_are_torchs():
    opt = tt.optim.SGD([tt.zeros(1, requires_grad=True)], lr=0.1)
    other = tt.optim.SGD([tt.zeros(1, requires_grad=True)], lr=0.1)
    plateau = S.ReduceLROnPlateau(opt)
    exp = S.ExponentialLR(opt, gamma=0.9)
    cases = [
        (ValueError, "Factor should be < 1.0.", lambda: S.ReduceLROnPlateau(opt, factor=1.0)),
        (ValueError, "mode up is unknown!", lambda: S.ReduceLROnPlateau(opt, mode="up")),
        (ValueError, "threshold mode x is unknown!", lambda: S.ReduceLROnPlateau(opt, threshold_mode="x")),
        (ValueError, "expected 1 min_lrs, got 2", lambda: S.ReduceLROnPlateau(opt, min_lr=[0, 0])),
        (TypeError, "int is not an Optimizer", lambda: S.ReduceLROnPlateau(3)),
        (ValueError, "Expected positive integer T_0, but got 0", lambda: S.CosineAnnealingWarmRestarts(opt, 0)),
        (ValueError, "Expected integer T_mult >= 1, but got 1.5",
         lambda: S.CosineAnnealingWarmRestarts(opt, 2, T_mult=1.5)),
        (ValueError, "Expected float or int eta_min, but got x of type <class 'str'>",
         lambda: S.CosineAnnealingWarmRestarts(opt, 2, eta_min="x")),
        (ValueError, "mode is invalid and scale_fn is None", lambda: S.CyclicLR(opt, 0.1, 1.0, mode="up")),
        (ValueError, "optimizer must support momentum or beta1 with `cycle_momentum` option enabled",
         lambda: S.CyclicLR(tt.optim.Adagrad([tt.zeros(1, requires_grad=True)]), 0.1, 1.0)),
        (ValueError, "SequentialLR expects at least one scheduler, but got no scheduler.",
         lambda: S.SequentialLR(opt, [], [])),
        (ValueError, "SequentialLR does not support `ReduceLROnPlateau` scheduler as it requires additional kwargs "
                     "to be specified when calling `step`, but got one at index 1 in the given schedulers sequence.",
         lambda: S.SequentialLR(opt, [exp, plateau], [2])),
        (ValueError, "Sequential Schedulers expects number of schedulers provided to be one more than the number "
                     "of milestone points, but got number of schedulers 1 and the number of milestones to be equal "
                     "to 1", lambda: S.SequentialLR(opt, [exp], [2])),
        (TypeError, "ChainedScheduler at index 0 should have `optimizer` as its attribute.",
         lambda: S.ChainedScheduler([object()], optimizer=opt)),
        (ValueError, "ChainedScheduler expects at least one scheduler to be chained, but got no scheduler.",
         lambda: S.ChainedScheduler([])),
        (ValueError, f"ChainedScheduler expects all schedulers to belong to the same optimizer, but got scheduler "
                     f"ExponentialLR at index 0 has {opt}, which is different from SGD.",
         lambda: S.ChainedScheduler([exp], optimizer=other)),
    ]
    for error, message, make in cases:
        with pytest.raises(error) as info:
            make()
        assert str(info.value) == message


def test_step_before_optimizer_step_warns():
    opt = tt.optim.SGD([tt.zeros(1, requires_grad=True)], lr=0.1)
    sched = S.PolynomialLR(opt)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step\\(\\)`"):
        sched.step()
