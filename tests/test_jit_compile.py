"""tt.compile (issue 26 item 1): capture per input signature, the guards, and the eager
fallback with a reason one can query (tritensor/_compile.py)."""
from __future__ import annotations

import numpy as np
import pytest

import tritensor as tt
from tritensor._compile import RECOMPILE_LIMIT, Unsupported


def test_one_graph_per_signature_and_the_guards():
    calls = []

    def f(x, y):
        calls.append(1)                      # Python side effects run at capture only
        return (x * y).relu() + 1

    cf = tt.compile(f)
    assert cf(tt.ones(2), tt.ones(2)).tolist() == [2.0, 2.0]
    assert cf(tt.ones(2), -tt.ones(2)).tolist() == [1.0, 1.0]          # the same graph, new values
    assert len(calls) == 1 and cf.explain()["graph_count"] == 1 and cf.fallback_reason is None
    cf(tt.ones(3), tt.ones(3))                 # a new shape: recompiled as dynamic (test_jit_dynamic.py)
    cf(tt.ones(3, dtype=tt.float64), tt.ones(3, dtype=tt.float64))      # a new dtype
    cf(tt.ones(3, requires_grad=True), tt.ones(3))                      # requires_grad
    with tt.no_grad():
        cf(tt.ones(3), tt.ones(3))                                      # grad mode
    assert len(calls) == 5 and cf.explain() == {"graph_count": 5, "dynamic_graph_count": 1, "graph_calls": 6,
                                                "eager_calls": 0, "fallback_reasons": []}
    assert "aten::relu" in str(cf.graphs[0].graph)


def test_gradients_flow_through_a_compiled_call():
    cf = tt.compile(lambda x: (x.exp() * x).sum())
    cf(tt.ones(3, requires_grad=True))                     # the capture
    x = tt.tensor([0.0, 1.0, -1.0], requires_grad=True)
    cf(x).backward()                                       # the graph: d/dx x e^x = (1 + x) e^x
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 2 * np.e, 0.0], atol=1e-6)


def test_data_dependent_control_flow_runs_eagerly_with_a_reason():
    def g(x):
        if x.sum() > 0:
            return x * 2
        return -x

    cg = tt.compile(g)
    assert cg(tt.ones(2)).tolist() == [2.0, 2.0]
    assert cg.fallback_reason.startswith("the trace warned (a graph would bake in this call's values): "
                                         "Converting a tensor to a Python boolean")
    assert cg(-tt.ones(2)).tolist() == [1.0, 1.0]          # eager: the other branch, correctly
    assert cg.explain()["graph_count"] == 0 and cg.explain()["eager_calls"] == 2
    with pytest.raises(Unsupported, match="fullgraph=True.*Converting a tensor to a Python boolean"):
        tt.compile(g, fullgraph=True)(tt.ones(2))


def test_other_fallbacks():
    cf = tt.compile(lambda x: x.sum().item())
    assert cf(tt.ones(3)) == 3.0 and "Python number" in cf.fallback_reason
    co = tt.compile(lambda x: (x + 1, 3))
    assert co(tt.ones(1))[1] == 3 and "outputs that are not tensors" in co.fallback_reason
    ck = tt.compile(lambda x, y=None: x + 1)
    assert ck(tt.ones(1), y=2).tolist() == [2.0] and "keyword arguments" in ck.fallback_reason

    def copies(x):
        y = x.clone()
        y.copy_(x * 3)                # copy_ is not an op the trace records
        return y + 1
    cc = tt.compile(copies)
    assert cc(tt.ones(1)).tolist() == [4.0] and cc(tt.full((1,), 2.0)).tolist() == [7.0]
    assert "modified in place by an operation the trace could not record" in cc.fallback_reason


def test_recompile_limit():
    cf = tt.compile(lambda x: x + 1, dynamic=False)
    for n in range(1, RECOMPILE_LIMIT + 1):
        cf(tt.ones(n))
    assert cf.explain()["graph_count"] == RECOMPILE_LIMIT and cf.fallback_reason is None
    assert cf(tt.ones(RECOMPILE_LIMIT + 1)).tolist() == [2.0] * (RECOMPILE_LIMIT + 1)
    assert cf.fallback_reason.startswith("cache_size_limit reached")
    assert cf(tt.ones(2)).tolist() == [2.0, 2.0] and cf.fallback_reason is None     # a known signature


def test_compiled_module_and_arguments():
    tt.manual_seed(0)
    m = tt.nn.Sequential(tt.nn.Linear(3, 2), tt.nn.Dropout(0.5))
    cm = tt.compile(m)
    assert [n for n, _ in cm.named_parameters()] == ["_orig_mod.0.weight", "_orig_mod.0.bias"]
    m.eval()
    x = tt.tensor([[1.0, 2.0, 3.0]])
    w, b = m[0].weight.detach().numpy(), m[0].bias.detach().numpy()
    np.testing.assert_allclose(cm(x).detach().numpy(), x.numpy() @ w.T + b, rtol=1e-6)
    cm(x).sum().backward()
    assert m[0].bias.grad.tolist() == [1.0, 1.0]
    m.train()                                       # training is guarded: a new capture (its dropout
    cm(x)                                           # recorded as a random op: tests/test_jit_random.py)
    assert cm.explain()["graph_count"] == 2 and cm.fallback_reason is None

    @tt.compile(fullgraph=True, mode="reduce-overhead")
    def scaled(x, k: float):
        return x * k
    assert scaled(tt.ones(2), 3.0).tolist() == [3.0, 3.0] and scaled(tt.ones(2), 4.0).tolist() == [4.0, 4.0]
    assert scaled.explain()["graph_count"] == 2                  # a Python number is a guarded constant
    with pytest.raises(RuntimeError, match="Unrecognized mode=fast, should be one of: default, lite, "
                       "reduce-overhead, max-autotune-no-cudagraphs, max-autotune"):
        tt.compile(lambda x: x, mode="fast")
    f = lambda x: x  # noqa: E731
    assert tt.compile(f, disable=True) is f


def test_reduce_overhead_replays_cuda_graphs():
    cf = tt.compile(lambda x, y: (x * y).relu() + 1, mode="reduce-overhead")
    y = tt.full((5,), 2.0, device="cuda")
    outs = [cf(tt.full((5,), float(i) - 1, device="cuda"), y).tolist() for i in range(4)]
    assert outs == [[1.0] * 5, [1.0] * 5, [3.0] * 5, [5.0] * 5]
    assert len(cf._graphed._entries) == 1 and cf.explain()["graph_count"] == 1   # one CUDA graph, one trace
    tt.manual_seed(0)
    m = tt.nn.Linear(3, 2).to("cuda")
    cm = tt.compile(m, mode="reduce-overhead")
    for _ in range(4):                   # two warm-ups, the capture, a replay: gradients accumulate
        cm(tt.ones(4, 3, device="cuda")).sum().backward()
    assert m.bias.grad.tolist() == [16.0, 16.0] and m.weight.grad.tolist() == [[16.0] * 3] * 2


def test_a_random_op_in_the_function_is_captured_with_fresh_draws():
    """Dropout is recorded as a random op (not baked in): the model is captured, every call draws
    anew, and after the same seed the graph draws eager's numbers."""
    model = tt.nn.Sequential(tt.nn.Linear(4, 4), tt.nn.Dropout(0.5))
    compiled = tt.compile(model)
    x = tt.ones(8, 4)
    tt.manual_seed(0)
    first, second = compiled(x), compiled(x)
    assert compiled.fallback_reason is None and compiled.explain()["graph_count"] == 1
    assert (first != second).any().item()
    tt.manual_seed(0)
    expected = model(x)
    np.testing.assert_array_equal(first.detach().numpy(), expected.detach().numpy())
    np.testing.assert_array_equal(second.detach().numpy(), model(x).detach().numpy())
