"""Random ops in captured graphs (issue 26 item 2's "the random ops (dropout) stay reproducible"):
dropout, rand, randn, rand_like, randn_like, bernoulli and randint are recorded by a trace, a
script and tt.compile as nodes that draw from the generator when the graph runs. Each call draws
fresh numbers, and after the same tt.manual_seed a graph draws exactly eager's numbers (the same
generator, the same order). torch's trace records them likewise (aten::dropout, aten::rand ...)
with no TracerWarning; the oracle of every test here is the eager call after the same seed."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import tritensor as tt
import tritensor.nn.functional as F
from tritensor.jit import TracerWarning


@pytest.fixture(autouse=True)
def _tracer_warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error", TracerWarning)
        yield


def draws(x):
    """One of each recorded random function (and an unused draw, which still advances the
    generator, as eager's)."""
    tt.rand(2)
    a = F.dropout(x, 0.5, True) * 2 + tt.rand(x.shape, device=x.device) + tt.randn_like(x)
    b = tt.bernoulli(x.sigmoid()) + tt.rand_like(x) + tt.randn(3, 4, device=x.device)
    return a + b + tt.randint(0, 5, (3, 4), device=x.device)


def _np(t):
    return t.detach().cpu().numpy()


def _capture(kind, fn, x):
    if kind == "trace":
        return tt.jit.trace(fn, (x,))
    if kind == "script":
        return tt.jit.script(fn)
    compiled = tt.compile(fn)
    compiled(x)                                    # the capture (it ran eagerly, drawing once)
    return compiled


def _assert_draws_as_eager(fn, captured, x, seed):
    """Two calls after tt.manual_seed(seed): the graph's numbers are eager's, and fresh each call."""
    tt.manual_seed(seed)
    eager = [_np(fn(x)) for _ in range(2)]
    tt.manual_seed(seed)
    graph = [_np(captured(x)) for _ in range(2)]
    np.testing.assert_array_equal(graph[0], eager[0])
    np.testing.assert_array_equal(graph[1], eager[1])
    assert not np.array_equal(graph[0], graph[1])               # each call draws anew


@pytest.mark.parametrize("kind", ["trace", "script", "compile"])
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_a_graph_draws_eagers_numbers_after_the_same_seed_and_fresh_ones_each_call(kind, device):
    x = tt.rand(3, 4, device=device)
    captured = _capture(kind, draws, x)
    _assert_draws_as_eager(draws, captured, x, 11)
    if kind == "compile":
        assert captured.explain()["graph_count"] == 1 and captured.fallback_reason is None
        listing = str(captured.graphs[0].graph)
    else:
        listing = str(captured.graph)
    for name in ("nn.functional.dropout", "rand", "randn_like", "bernoulli", "rand_like", "randn", "randint"):
        assert f"aten::{name}(" in listing


def test_a_traced_random_op_is_one_node_with_torchs_arguments():
    traced = tt.jit.trace(lambda x: F.dropout(x, 0.25, True) + tt.rand(2, 3), (tt.ones(2, 3),))
    listing = re.sub(r" # \S+:\d+:\d+", "", str(traced.graph))
    assert "aten::nn.functional.dropout(%x, %0, %1)" in listing.replace("%input_0", "%x")
    assert re.search(r"= aten::rand\(%\d+, %\d+\)\n", listing)      # keywords at their defaults dropped
    assert "aten::lt" not in listing and "aten::where" not in listing  # dropout's internals not recorded


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_a_dropout_model_captured_three_ways_equals_eager_values_and_gradients(device):
    tt.manual_seed(0)
    model = tt.nn.Sequential(tt.nn.Linear(5, 4), tt.nn.Dropout(0.5), tt.nn.Tanh(), tt.nn.Linear(4, 2)).to(device)
    x = tt.rand(6, 5, device=device)

    def step(m):
        model.zero_grad()
        tt.manual_seed(7)
        out = m(x)
        out.square().sum().backward()
        return _np(out), [_np(p.grad) for p in model.parameters()]
    expected, expected_grads = step(model)
    dropped = _np(model[1](tt.ones(100, device=device)))         # the mask: 0 or 1 / (1 - p)
    assert set(np.unique(dropped)) <= {0.0, 2.0}
    for kind in ("trace", "script", "compile"):
        captured = {"trace": lambda: tt.jit.trace(model, (x,)), "script": lambda: tt.jit.script(model),
                    "compile": lambda: tt.compile(model)}[kind]()
        captured(x)
        out, grads = step(captured)
        np.testing.assert_array_equal(out, expected, err_msg=kind)
        for g, e in zip(grads, expected_grads):
            np.testing.assert_array_equal(g, e, err_msg=kind)
        if kind == "compile":
            assert captured.explain()["graph_count"] == 1 and captured.fallback_reason is None


def test_random_ops_end_fusion_groups():
    """A fused group holds no random op: the draw stays where eager makes it, between the
    groups before and after it."""
    def f(x, y):
        a = (x * 2 + 1).relu()
        return F.dropout(a, 0.25) + (y * 3 - 1).exp() * a
    x, y = tt.rand(3, 5), tt.rand(3, 5)
    compiled = tt.compile(f)
    compiled(x, y)
    g = compiled.graphs[0].graph_for(x, y)
    kinds = [n.kind for n in g.nodes if n.kind != "prim::Constant"]
    assert kinds == ["prim::FusionGroup", "aten::nn.functional.dropout", "prim::FusionGroup"]
    for group in (n for n in g.nodes if n.kind == "prim::FusionGroup"):
        assert all("dropout" not in m.kind for m in group.attrs["subgraph"].nodes)
    tt.manual_seed(5)
    expected = _np(f(x, y))
    tt.manual_seed(5)
    np.testing.assert_array_equal(_np(compiled(x, y)), expected)


def test_a_saved_random_graph_loads_and_still_draws(tmp_path):
    def f(x):
        return F.dropout(x, 0.5, True) + tt.randn(4)
    x = tt.ones(4)
    traced = tt.jit.trace(f, (x,))
    traced.save(tmp_path / "r.pt")
    loaded = tt.jit.load(tmp_path / "r.pt")
    tt.manual_seed(2)
    expected = _np(f(x))
    tt.manual_seed(2)
    np.testing.assert_array_equal(_np(loaded(x)), expected)


def fills(x):
    """In-place fills of tensors the graph computes (recorded as the methods)."""
    y = x.clone().uniform_(-1, 1) + x.clone().normal_() + (x * 0.5).bernoulli_(0.3)
    return y + x.clone().exponential_() + x.clone().random_(0, 5)


@pytest.mark.parametrize("kind", ["trace", "script", "compile"])
def test_in_place_fills_of_computed_tensors_are_recorded(kind):
    x = tt.rand(3, 4)
    captured = _capture(kind, fills, x)
    _assert_draws_as_eager(fills, captured, x, 4)
    if kind == "trace":
        listing = str(captured.graph)
        for name in ("uniform_", "normal_", "bernoulli_", "exponential_", "random_"):
            assert f"aten::{name}(" in listing


def test_draws_the_trace_cannot_record_still_warn():
    """An explicit generator (a graph cannot hold one) and in-place fills of a tensor the graph
    holds as a constant (every call would refill that one tensor) are not recorded: the values
    would be constants, so the trace warns and tt.compile runs the call eagerly."""
    gen = tt.Generator().manual_seed(0)
    with pytest.warns(TracerWarning, match="A random op ran while tracing"):
        tt.jit.trace(lambda x: x + tt.rand(2, generator=gen), (tt.ones(2),))
    with pytest.warns(TracerWarning, match="A random op ran while tracing"):
        tt.jit.trace(lambda x: x + tt.empty(2).uniform_(), (tt.ones(2),))
    compiled = tt.compile(lambda x: x + tt.empty(3).normal_())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TracerWarning)
        first, second = compiled(tt.ones(3)), compiled(tt.ones(3))
    assert "random op" in compiled.fallback_reason and not np.array_equal(_np(first), _np(second))


def test_a_scripted_module_follows_train_and_eval():
    """torch's scripted modules read ``training`` at run time: after eval() the scripted dropout
    is the identity and batch norm uses its running statistics, after train() both train again."""
    tt.manual_seed(0)
    model = tt.nn.Sequential(tt.nn.Linear(3, 4), tt.nn.BatchNorm1d(4), tt.nn.Dropout(0.5))
    scripted = tt.jit.script(model)
    x = tt.tensor(np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3))
    tt.manual_seed(1)
    trained = _np(scripted(x))                        # batch statistics, a dropout mask
    assert (trained == 0).any()
    scripted.eval()
    assert not model[2].training
    expected = _np(model[1](model[0](x)))             # running statistics, no dropout
    np.testing.assert_array_equal(_np(scripted(x)), expected)
    scripted.train()
    tt.manual_seed(1)
    again = _np(scripted(x))
    model.train()
    tt.manual_seed(1)
    np.testing.assert_array_equal(again, _np(model(x)))
