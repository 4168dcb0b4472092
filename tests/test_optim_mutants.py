"""Optimizer behaviour that the mutation review of tritensor/optim (tests/MUTATION.md) found
unpinned: the options an old pickle lacks, torch's argument checks and their exact messages, the
type names in torch's errors, zero_grad of a gradient with history, and handle bookkeeping of the
step hooks. Every expectation was recorded from torch 2.13."""
import numpy as np
import pytest

import tritensor as tt
from tritensor import optim

KEEP = {"params", "lr", "betas", "eps", "weight_decay", "alpha", "dampening"}


@pytest.mark.parametrize("cls, kwargs, restored", [
    (optim.SGD, {"lr": 0.1},
     {"differentiable": False, "foreach": None, "fused": False, "maximize": False, "nesterov": False}),
    (optim.Adam, {}, {"amsgrad": False, "capturable": False, "decoupled_weight_decay": False,
                      "differentiable": False, "foreach": None, "fused": None, "maximize": False}),
    (optim.AdamW, {}, {"amsgrad": False, "capturable": False, "decoupled_weight_decay": True,
                       "differentiable": False, "foreach": None, "fused": None, "maximize": False}),
    (optim.RMSprop, {}, {"capturable": False, "centered": False, "differentiable": False, "foreach": None,
                         "maximize": False, "momentum": 0}),
])
def test_setstate_gives_an_old_pickles_groups_torchs_defaults(cls, kwargs, restored):
    # an optimizer pickled before these options existed: __setstate__ fills each with torch's default
    p = tt.zeros(2, requires_grad=True)
    state = cls([p], **kwargs).__getstate__()
    state["param_groups"] = [{k: v for k, v in g.items() if k in KEEP | ({"momentum"} if cls is optim.SGD else set())}
                             for g in state["param_groups"]]
    opt = cls.__new__(cls)
    opt.__setstate__(state)
    group = opt.param_groups[0]
    assert {k: group[k] for k in restored} == restored
    assert all(type(group[k]) is type(v) for k, v in restored.items())     # False, not 0 or None


def test_rmsprop_arguments_as_torch_checks_them():
    p = tt.zeros(2, requires_grad=True)
    for kwargs, message in [({"lr": -1.0}, "Invalid learning rate: -1.0"), ({"eps": -1.0}, "Invalid epsilon value: -1.0"),
                            ({"momentum": -1.0}, "Invalid momentum value: -1.0"),
                            ({"weight_decay": -1.0}, "Invalid weight_decay value: -1.0"),
                            ({"alpha": -1.0}, "Invalid alpha value: -1.0"),
                            ({"lr": tt.tensor([0.1, 0.2])}, "Tensor lr must be 1-element")]:
        with pytest.raises(ValueError) as info:
            optim.RMSprop([p], **kwargs)
        assert str(info.value) == message
    optim.RMSprop([p], lr=0.0, eps=0.0, alpha=0.0)            # zero is allowed for each
    assert sorted(optim.RMSprop([p]).defaults) == ["alpha", "capturable", "centered", "differentiable", "eps",
                                                   "foreach", "lr", "maximize", "momentum", "weight_decay"]


def test_adamw_passes_its_keyword_options_to_the_group():
    p = tt.zeros(2, requires_grad=True)
    group = optim.AdamW([p], foreach=True).param_groups[0]
    assert (group["foreach"], group["differentiable"], group["capturable"], group["fused"],
            group["decoupled_weight_decay"]) == (True, False, False, None, True)
    assert optim.AdamW([p], foreach=False, fused=False).param_groups[0]["foreach"] is False
    assert optim.AdamW([p], fused=False).param_groups[0]["fused"] is False


def test_type_names_in_torchs_errors():
    with pytest.raises(TypeError) as info:
        optim.SGD(tt.tensor([1.0]), lr=0.1)
    assert str(info.value) == ("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                               "but got torch.FloatTensor")
    with pytest.raises(TypeError) as info:
        optim.SGD(tt.tensor([1.0], device="cuda"), lr=0.1)
    assert str(info.value).endswith("but got torch.cuda.FloatTensor")
    with pytest.raises(TypeError) as info:
        optim.SGD([np.zeros(2)], lr=0.1)
    assert str(info.value) == "optimizer can only optimize Tensors, but one of the params is numpy.ndarray"


def test_zero_grad_keeps_a_gradient_with_history_and_zeroes_it():
    # torch: set_to_none=False detaches a gradient that has a grad_fn, else clears requires_grad
    p, q = tt.ones(2, requires_grad=True), tt.ones(2, requires_grad=True)
    x = tt.ones(2, requires_grad=True)
    p.grad = x * 2                                  # a gradient with history (create_graph's kind)
    q.grad = tt.ones(2, requires_grad=True)         # a leaf that requires grad
    optim.SGD([p, q], lr=0.1).zero_grad(set_to_none=False)
    for g in (p.grad, q.grad):
        assert g.tolist() == [0.0, 0.0] and g.grad_fn is None and not g.requires_grad


def test_step_hook_handles_are_distinct_and_removable():
    p = tt.zeros(2, requires_grad=True)
    p.grad = tt.ones(2)
    opt = optim.SGD([p], lr=0.1)
    calls = []
    a = opt.register_step_post_hook(lambda o, args, kwargs: calls.append("a"))
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append("b"))
    opt.step()
    assert calls == ["a", "b"]
    a.remove()
    a.remove()                                      # a second remove is a no-op, as torch
    opt.step()
    assert calls == ["a", "b", "b"]


def test_rmsprop_step_returns_the_closures_loss():
    p = tt.tensor([1.0, -2.0], requires_grad=True)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    opt = optim.RMSprop([p], lr=0.01)
    assert opt.step(closure).item() == 5.0


def test_weight_decay_of_one():
    # hand-computed single steps with weight_decay=1 (the gradient becomes g + p):
    # SGD: p - lr (g + p); RMSprop: p - lr g' / sqrt((1 - alpha) g'^2) = p - 0.1 sign(g') here
    p = tt.tensor([1.0, 2.0], requires_grad=True)
    p.grad = tt.tensor([1.0, 1.0])
    optim.SGD([p], lr=0.1, weight_decay=1.0).step()
    assert p.tolist() == pytest.approx([0.8, 1.7], rel=1e-6)
    p = tt.tensor([1.0, 3.0], requires_grad=True)
    p.grad = tt.tensor([1.0, -1.0])                # g' = [2, 2]; without the decay it would be [1, -1]
    optim.RMSprop([p], lr=0.01, alpha=0.99, weight_decay=1.0).step()
    assert p.tolist() == pytest.approx([0.9, 2.9], rel=1e-6)


def test_state_dict_and_load_state_dict_hooks():
    p = tt.zeros(2, requires_grad=True)
    p.grad = tt.ones(2)
    opt = optim.Adam([p])
    opt.step()
    calls = []
    opt.register_state_dict_pre_hook(lambda o: calls.append(("sd_pre", o is opt)))
    opt.register_state_dict_post_hook(lambda o, sd: (calls.append(("sd_post", o is opt, "state" in sd)),
                                                     {**sd, "extra": 1})[1])
    sd = opt.state_dict()
    assert sorted(sd) == ["extra", "param_groups", "state"]          # the post hook's result replaces it
    assert calls == [("sd_pre", True), ("sd_post", True, True)]
    del sd["extra"]
    q = tt.zeros(2, requires_grad=True)
    other = optim.Adam([q])
    other.register_load_state_dict_pre_hook(
        lambda o, sd: (calls.append(("load_pre", o is other, sorted(sd))),
                       {**sd, "param_groups": [{**g, "lr": 0.5} for g in sd["param_groups"]]})[1])
    other.register_load_state_dict_post_hook(lambda o: calls.append(("load_post", o is other, o.param_groups[0]["lr"])))
    other.load_state_dict(sd)
    assert calls[2:] == [("load_pre", True, ["param_groups", "state"]), ("load_post", True, 0.5)]
    assert other.param_groups[0]["lr"] == 0.5


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_load_state_dict_casts_state_to_the_parameter_but_not_step(device):
    # torch: floating state follows the parameter's dtype and device; "step" is kept as saved
    p = tt.zeros(2, requires_grad=True)
    p.grad = tt.ones(2)
    opt = optim.Adam([p])
    opt.step()
    sd = opt.state_dict()
    sd["state"][0]["pair"] = (tt.ones(1), tt.ones(1))        # an iterable keeps its type, items cast
    sd["state"][0]["count"] = tt.tensor(3)                   # any tensor follows a floating parameter
    q = tt.zeros(2, dtype=tt.float64, device=device, requires_grad=True)
    other = optim.Adam([q])
    other.load_state_dict(sd)
    state = other.state[q]
    assert state["exp_avg"].dtype == tt.float64 and state["exp_avg"].device.type == device
    assert state["step"].dtype == tt.float32 and state["step"].device.type == "cpu"
    assert state["count"].dtype == tt.float64 and state["count"].device.type == device
    assert type(state["pair"]) is tuple and all(t.dtype == tt.float64 and t.device.type == device
                                                for t in state["pair"])


def test_load_state_dict_keeps_unknown_keys_and_param_names():
    q = tt.zeros(2, requires_grad=True)
    sd = optim.SGD([q], lr=0.1, momentum=0.9).state_dict()
    sd["state"]["extra"] = {"x": 1}
    opt = optim.SGD([q], lr=0.1, momentum=0.9)
    opt.load_state_dict(sd)
    assert dict(opt.state) == {"extra": {"x": 1}}
    assert opt.state_dict()["state"] == {"extra": {"x": 1}}          # a key that is no parameter stays as is
    q.grad = tt.ones(2)
    opt.step()                                          # a parameter without saved state starts fresh
    assert q.tolist() == pytest.approx([-0.1, -0.1])
    model = tt.nn.Linear(2, 1)
    named = optim.SGD(model.named_parameters(), lr=0.1)
    sd = named.state_dict()
    assert sd["param_groups"][0]["param_names"] == ["weight", "bias"]
    del sd["param_groups"][0]["param_names"]
    named.load_state_dict(sd)
    assert named.param_groups[0]["param_names"] == ["weight", "bias"]
    sd["param_groups"][0]["param_names"] = ["a", "b"]              # saved names win over the current ones
    named.load_state_dict(sd)
    assert named.param_groups[0]["param_names"] == ["a", "b"]
    ps = [tt.zeros(1, requires_grad=True) for _ in range(3)]
    three = optim.SGD([{"params": [ps[0]]}, {"params": [ps[1]]}, {"params": [ps[2]]}], lr=0.1)
    assert [g["params"] for g in three.state_dict()["param_groups"]] == [[0], [1], [2]]


def test_an_unpickled_optimizer_has_its_hook_tables():
    # torch's __setstate__ recreates the hook dictionaries (and defaults' differentiable) an old
    # pickle lacks: hooks can be registered, state_dict and load_state_dict run
    p = tt.zeros(2, requires_grad=True)
    state = optim.SGD([p], lr=0.1).__getstate__()
    state["defaults"] = {k: v for k, v in state["defaults"].items() if k != "differentiable"}
    opt = optim.SGD.__new__(optim.SGD)
    opt.__setstate__({k: state[k] for k in ("defaults", "state", "param_groups")})
    assert opt.defaults["differentiable"] is False
    calls = []
    opt.register_step_pre_hook(lambda o, a, k: calls.append("step_pre"))
    opt.register_step_post_hook(lambda o, a, k: calls.append("step_post"))
    opt.register_state_dict_pre_hook(lambda o: calls.append("sd_pre"))
    opt.register_state_dict_post_hook(lambda o, sd: calls.append("sd_post"))
    opt.register_load_state_dict_pre_hook(lambda o, sd: calls.append("load_pre"))
    opt.register_load_state_dict_post_hook(lambda o: calls.append("load_post"))
    p.grad = tt.ones(2)
    opt.step()
    opt.load_state_dict(opt.state_dict())
    assert calls == ["step_pre", "step_post", "sd_pre", "sd_post", "load_pre", "load_post"]


def _error(fn):
    try:
        fn()
    except Exception as e:       # noqa: BLE001 (the type and text are the expectation)
        return type(e).__name__, str(e)
    return "ok"


def test_adam_and_sgd_arguments_as_torch_checks_them():
    p = tt.zeros(2, requires_grad=True)
    T = tt.tensor
    cases = [
        (lambda: optim.Adam([p], lr=T([0.1, 0.2])), ("ValueError", "Tensor lr must be 1-element")),
        (lambda: optim.Adam([p], lr=T(0.1), foreach=True),
         ("ValueError", "lr as a Tensor is not supported for capturable=False and foreach=True")),
        (lambda: optim.Adam([p], betas=(0.9, T(0.99))), ("ValueError", "betas must be either both floats or both Tensors")),
        (lambda: optim.Adam([p], betas=(T(0.9), T(0.99)), foreach=True),
         ("ValueError", "betas[0] as a Tensor is not supported for capturable=False and foreach=True")),
        (lambda: optim.Adam([p], lr=0.0, eps=0.0, betas=(0.0, 0.0)), "ok"),
        (lambda: optim.Adam([p], betas=(0.9, 1.0)), ("ValueError", "Invalid beta parameter at index 1: 1.0")),
        (lambda: optim.Adam([p], lr=T(0.1)), "ok"),
        (lambda: optim.SGD([p], lr=T([0.1, 0.2])), ("ValueError", "Tensor lr must be 1-element")),
        (lambda: optim.SGD([p], lr=0.0), "ok"),
        (lambda: optim.SGD([p], lr=0.1, fused=True, foreach=True),
         ("RuntimeError", "`fused` and `foreach` cannot be `True` together.")),
        (lambda: optim.SGD([p], lr=0.1, foreach=True), "ok"),
        (lambda: optim.SGD([p], lr=0.1, fused=True), "ok"),
        (lambda: optim.Adam([p], lr=0.1, fused=True, foreach=True),
         ("RuntimeError", "`fused` and `foreach` cannot be `True` together.")),
    ]
    assert [_error(fn) for fn, _ in cases] == [want for _, want in cases]
    betas = optim.Adam([p], betas=(T([0.9]), T([0.99]))).param_groups[0]["betas"]
    assert [tuple(b.shape) for b in betas] == [(), ()]            # one-element betas are squeezed
    assert optim.SGD([p]).defaults["lr"] == 0.001 and optim.Adam([p]).defaults["lr"] == 0.001


def test_sgd_with_momentum_one():
    # buf = g, then buf = 1 * buf + g: with lr 0.1 and g = 1 the steps are 0.1 and 0.2 (torch: -0.3)
    q = tt.zeros(2, requires_grad=True)
    opt = optim.SGD([q], lr=0.1, momentum=1.0)
    for _ in range(2):
        q.grad = tt.ones(2)
        opt.step()
    assert q.tolist() == pytest.approx([-0.3, -0.3], rel=1e-6)


def _two_steps(cls, **kwargs):
    p = tt.tensor([1.0, -2.0], requires_grad=True)
    opt = cls([p], **kwargs)
    for i in range(2):
        p.grad = tt.tensor([0.5, -1.5]) * (i + 1)
        opt.step()
    return p.tolist()


@pytest.mark.parametrize("cls, kwargs, want", [
    # beta1 <= 0.5 takes lerp's second form (w = 1 - beta1 >= 0.5) for the first moment
    (optim.Adam, {"lr": 0.1, "betas": (0.3, 0.999)}, [0.7881208658218384, -1.7881207466125488]),
    (optim.Adam, {"lr": 0.1, "weight_decay": 1.0}, [0.8000757694244385, -1.8005033731460571]),
    (optim.Adam, {"lr": tt.tensor(0.1)}, [0.8034818172454834, -1.8034818172454834]),
    (optim.SGD, {"lr": tt.tensor(0.1), "momentum": 0.5}, [0.824999988079071, -1.475000023841858]),
])
def test_two_steps_against_torch(cls, kwargs, want):
    # values recorded from torch 2.13 (float32 parameters, gradients [0.5, -1.5] then twice that)
    assert _two_steps(cls, **kwargs) == pytest.approx(want, rel=2e-6)


@pytest.mark.parametrize("cls", [optim.Adam, optim.RMSprop])
def test_step_counter_counts_and_bumps_its_version(cls):
    # torch: a float32 cpu tensor, one in-place add per step (its version counter says 3 after 3)
    p = tt.zeros(2, requires_grad=True)
    opt = cls([p])
    for _ in range(3):
        p.grad = tt.ones(2)
        opt.step()
    step = opt.state[p]["step"]
    assert step.item() == 3.0 and step.dtype == tt.float32 and step._version == 3


def test_hook_order_prepend_and_global_step_hooks():
    from tritensor.optim import optimizer as base
    p = tt.zeros(2, requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    calls = []
    for kind in ("state_dict_pre", "load_state_dict_post"):
        register = getattr(opt, f"register_{kind}_hook")
        register(lambda o, kind=kind: calls.append((kind, "first")))
        register(lambda o, kind=kind: calls.append((kind, "second")))
        register(lambda o, kind=kind: calls.append((kind, "front")), prepend=True)
    for kind in ("state_dict_post", "load_state_dict_pre"):
        register = getattr(opt, f"register_{kind}_hook")
        register(lambda o, sd, kind=kind: calls.append((kind, "first")))
        register(lambda o, sd, kind=kind: calls.append((kind, "second")))
        register(lambda o, sd, kind=kind: calls.append((kind, "front")), prepend=True)
    removed = opt.register_state_dict_pre_hook(lambda o: calls.append("removed"))
    removed.remove()
    opt.load_state_dict(opt.state_dict())
    assert calls == [(k, w) for k in ("state_dict_pre", "state_dict_post", "load_state_dict_pre", "load_state_dict_post")
                     for w in ("front", "first", "second")]
    # the global hooks (torch.optim.optimizer.register_optimizer_step_pre/post_hook) run around
    # every optimizer's step, until removed
    seen = []
    handles = [base.register_optimizer_step_pre_hook(lambda o, a, k: seen.append("pre")),
               base.register_optimizer_step_post_hook(lambda o, a, k: seen.append("post"))]
    try:
        p.grad = tt.ones(2)
        opt.step()
    finally:
        for h in handles:
            h.remove()
    opt.step()
    assert seen == ["pre", "post"]
    assert repr(base.required) == "<required parameter>"
    assert sorted(opt.__getstate__()) == ["defaults", "param_groups", "state"]


def test_step_counter_follows_the_default_dtype():
    # torch: the counter is float64 while the default dtype is float64 (_get_scalar_dtype)
    p = tt.zeros(2, requires_grad=True)
    opt = optim.Adam([p])
    p.grad = tt.ones(2)
    previous = tt.get_default_dtype()
    tt.set_default_dtype(tt.float64)
    try:
        opt.step()
    finally:
        tt.set_default_dtype(previous)
    assert opt.state[p]["step"].dtype == tt.float64 and opt.state[p]["step"].item() == 1.0
    p = tt.zeros(2, requires_grad=True)                # a half default dtype still counts in float32
    opt = optim.Adam([p])
    p.grad = tt.ones(2)
    tt.set_default_dtype(tt.float16)
    try:
        opt.step()
    finally:
        tt.set_default_dtype(previous)
    assert opt.state[p]["step"].dtype == tt.float32


@pytest.mark.parametrize("cls", [optim.SGD, optim.Adam])
def test_step_returns_the_closures_loss(cls):
    p = tt.tensor([1.0, -2.0], requires_grad=True)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    opt = cls([p], lr=0.01)
    assert opt.step(closure).item() == 5.0


def test_add_param_group_as_torch_checks_it():
    import warnings
    from tritensor.optim.optimizer import Optimizer, required
    p, q = tt.zeros(2, requires_grad=True), tt.zeros(2, requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    opt.add_param_group({"params": q})                       # one tensor is a group of one
    assert [len(g["params"]) for g in opt.param_groups] == [1, 1] and opt.param_groups[1]["params"][0] is q

    class Custom(Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": required, "x": 1})

    cases = [
        (lambda: optim.SGD([("a", p), q], lr=0.1),
         ("ValueError", "all optimizer params should be with/without names. Some param names are missing")),
        (lambda: optim.SGD([p * 2], lr=0.1), ("ValueError", "can't optimize a non-leaf Tensor")),
        (lambda: Custom([p]), ("ValueError", "parameter group didn't specify a value of required optimization parameter lr")),
        (lambda: Custom([{"params": [p], "lr": 0.1}]), "ok"),
        (lambda: optim.SGD([p], lr=0.1).add_param_group({"params": [("b", q)]}),
         ("ValueError", "all optimizer param groups should be with/without names. "
                        "cannot add param group with names to the optimizer")),
        (lambda: optim.SGD([("a", p)], lr=0.1).add_param_group({"params": [q]}),
         ("ValueError", "all optimizer param groups should be with/without names. "
                        "cannot add param group without names to the optimizer")),
    ]
    assert [_error(fn) for fn, _ in cases] == [want for _, want in cases]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        optim.SGD([p, p], lr=0.1)
    assert [(w.category, str(w.message)) for w in caught] == [
        (UserWarning, "optimizer contains a parameter group with duplicate parameters; in future, this will cause an "
                      "error; see github.com/pytorch/pytorch/issues/40967 for more information")]


def test_fused_cuda_step_reads_a_non_contiguous_gradient():
    # the fused launch needs contiguous operands: a transposed gradient is staged, not read as is
    p = tt.zeros(3, 4, device="cuda", requires_grad=True)
    g = tt.arange(12.0, device="cuda").reshape(4, 3).t()
    assert not g.is_contiguous()
    p.grad = g
    optim.SGD([p], lr=0.5).step()
    assert p.detach().cpu().tolist() == [[-0.5 * v for v in row] for row in g.cpu().tolist()]
