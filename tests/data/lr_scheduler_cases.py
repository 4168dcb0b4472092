"""The scheduler cases of tests/test_lr_scheduler_more.py, runnable with torch or tritensor (the
same API): make_lr_scheduler_more.py runs them with torch to record lr_scheduler_more.json."""

CASES = {
    "PolynomialLR": dict(opt=("SGD", dict(lr=0.1)), sched=dict(total_iters=6, power=2.0), steps=9),
    "PolynomialLR_groups": dict(opt=("SGD", dict(lr=0.1)), lr2=0.5, sched=dict(total_iters=4), steps=6,
                                name="PolynomialLR"),
    "CosineAnnealingWarmRestarts": dict(opt=("SGD", dict(lr=0.1)), sched=dict(T_0=3, eta_min=0.01), steps=10),
    "CosineAnnealingWarmRestarts_mult": dict(opt=("SGD", dict(lr=0.1)), sched=dict(T_0=2, T_mult=2), steps=16,
                                             name="CosineAnnealingWarmRestarts"),
    "CyclicLR_triangular": dict(opt=("SGD", dict(lr=0.1, momentum=0.9)),
                                sched=dict(base_lr=0.01, max_lr=0.1, step_size_up=3), steps=14, name="CyclicLR"),
    "CyclicLR_triangular2": dict(opt=("SGD", dict(lr=0.1, momentum=0.9)),
                                 sched=dict(base_lr=0.01, max_lr=0.1, step_size_up=2, step_size_down=3,
                                            mode="triangular2"), steps=16, name="CyclicLR"),
    "CyclicLR_exp_range_adam": dict(opt=("Adam", dict(lr=0.1)),
                                    sched=dict(base_lr=[0.01], max_lr=[0.2], step_size_up=4, mode="exp_range",
                                               gamma=0.9), steps=12, name="CyclicLR"),
    "CyclicLR_no_momentum": dict(opt=("Adagrad", dict(lr=0.1)),
                                 sched=dict(base_lr=0.001, max_lr=0.01, step_size_up=2, cycle_momentum=False),
                                 steps=7, name="CyclicLR"),
    "ReduceLROnPlateau": dict(opt=("SGD", dict(lr=1.0)), sched=dict(patience=1, factor=0.5, min_lr=0.1),
                              metrics=[5, 4, 4, 4, 3, 3, 3, 3, 2.9999, 2, 2, 2, 2, 2, 2], steps=15),
    "ReduceLROnPlateau_max_abs_cooldown": dict(opt=("SGD", dict(lr=1.0)), lr2=0.1,
                                               sched=dict(mode="max", threshold_mode="abs", threshold=0.5,
                                                          patience=0, cooldown=2, factor=0.3, min_lr=[0.2, 0.0]),
                                               metrics=[1, 1.4, 2, 2, 2, 2, 3, 3, 3, 3], steps=10,
                                               name="ReduceLROnPlateau"),
    "SequentialLR": dict(opt=("SGD", dict(lr=0.1)), steps=12,
                         inner=[("ConstantLR", dict(factor=0.1, total_iters=2)),
                                ("ExponentialLR", dict(gamma=0.9)), ("PolynomialLR", dict(total_iters=3))],
                         sched=dict(milestones=[2, 6])),
    "ChainedScheduler": dict(opt=("SGD", dict(lr=1.0)), steps=8,
                             inner=[("ConstantLR", dict(factor=0.1, total_iters=2)),
                                    ("ExponentialLR", dict(gamma=0.9)),
                                    ("MultiplicativeLR", dict(lr_lambda="halve"))], sched={}),
    "MultiplicativeLR": dict(opt=("SGD", dict(lr=1.0)), sched=dict(lr_lambda="halve"), steps=5),
}


def _halve(epoch):
    return 0.5 if epoch % 2 else 0.9


def build(lib, key):
    """(optimizer, scheduler) for CASES[key], with ``lib`` torch or tritensor."""
    case = CASES[key]
    p = lib.zeros(2, requires_grad=True)
    groups = [{"params": [p]}]
    if "lr2" in case:
        groups.append({"params": [lib.zeros(2, requires_grad=True)], "lr": case["lr2"]})
    name, options = case["opt"]
    opt = getattr(lib.optim, name)(groups, **options)
    return opt, make_scheduler(lib, key, opt)


def make_scheduler(lib, key, opt):
    case = CASES[key]
    S = lib.optim.lr_scheduler

    def fix(kwargs):
        return {k: (_halve if v == "halve" else v) for k, v in kwargs.items()}
    if "inner" in case:
        inner = [getattr(S, n)(opt, **fix(kw)) for n, kw in case["inner"]]
        if "milestones" in case["sched"]:
            return S.SequentialLR(opt, inner, **case["sched"])
        return S.ChainedScheduler(inner, optimizer=opt)
    return getattr(S, case.get("name", key))(opt, **fix(case["sched"]))


def run(key, opt, sched, start=0, stop=None):
    """The lrs (and momenta) after each step from ``start`` to ``stop``."""
    case = CASES[key]
    out = []
    for i in range(start, case["steps"] if stop is None else stop):
        opt.step()
        if "metrics" in case:
            sched.step(case["metrics"][i])
        else:
            sched.step()
        row = {"lr": [float(g["lr"]) for g in opt.param_groups]}
        if "momentum" in opt.param_groups[0]:
            row["momentum"] = [g["momentum"] for g in opt.param_groups]
        if "betas" in opt.param_groups[0]:
            row["beta1"] = [g["betas"][0] for g in opt.param_groups]
        row["last_lr"] = [float(x) for x in sched.get_last_lr()]
        out.append(row)
    return out
