"""Scripted graphs fused (issue 26 items 1-2: graph_for of a scripted function shows its fusion
groups): a scripted function's first calls per input signature are profiled (tritensor/jit/
_profile.py), its pointwise nodes specialised to primitives, and every block (the top level, each
if/loop body) fused on its own; calls then run the groups. Oracles: the formulas in NumPy, and
the eager function (values and gradients)."""
from __future__ import annotations

import numpy as np
import pytest

import tritensor as tt
from tritensor.backends import triton as tb
from tritensor.jit._profile import PROFILED_RUNS

from test_jit_trace import _iou_numpy, iou_loss

GROUP = "prim::FusionGroup"


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("TRITENSOR_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "fused_kernels"))


def _np(t):
    return t.detach().cpu().numpy()


def _groups(block):
    return [n for n in block.nodes if n.kind == GROUP]


def _boxes(n, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.random((n, 4)).astype(np.float32) + 0.1 for _ in range(2)]


def test_the_seeds_iou_loss_scripted_is_one_fusion_group():
    p, t = _boxes(5)
    scripted = tt.jit.script(iou_loss)
    g = scripted.graph_for(tt.tensor(p), tt.tensor(t))
    assert len(_groups(g)) == 1
    inside = [n.kind for n in _groups(g)[0].attrs["subgraph"].nodes]
    assert len(inside) == 20 and set(inside) == {"aten::add", "aten::mul", "aten::sub", "aten::minimum",
                                                 "aten::div", "aten::log", "aten::neg"}
    np.testing.assert_allclose(_np(scripted(tt.tensor(p), tt.tensor(t))), _iou_numpy(p, t), rtol=1e-6)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_a_fused_scripted_call_equals_eager_values_and_gradients(device, monkeypatch):
    p, t = _boxes(300)                      # 300 boxes: 2 blocks of the emulated launch
    scripted = tt.jit.script(iou_loss)
    for _ in range(PROFILED_RUNS + 1):      # profiled calls of this signature, then the group's backward traced
        scripted(tt.tensor(p, device=device, requires_grad=True), tt.tensor(t, device=device))
    launches = []
    real = tb._run
    monkeypatch.setattr(tb, "_run", lambda kernel, *a, **k: (launches.append(kernel.fn.__name__),
                                                             real(kernel, *a, **k))[1])
    results, counts = [], []
    for f in (iou_loss, scripted):
        launches.clear()
        pred = tt.tensor(p, device=device, requires_grad=True)
        out = f(pred, tt.tensor(t, device=device))
        out.sum().backward()
        results.append((_np(out), _np(pred.grad)))
        counts.append(list(launches))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    np.testing.assert_array_equal(results[1][1], results[0][1])
    if device == "cuda":          # the 20-op chain: one fused forward kernel and one fused backward kernel
        assert counts[1].count("fused_kernel") == 2 and "fused_kernel" not in counts[0]
        assert len(counts[1]) < len(counts[0]) // 3


def branchy(x, y):
    if x.sum() > 0:                         # data-dependent: a branch in the scripted graph
        z = (x * y + 1).relu().exp()
    else:
        z = (x - y).abs().sqrt() * 2
    return z


def test_each_branch_of_a_data_dependent_if_is_fused_on_its_own():
    rng = np.random.default_rng(1)
    y = tt.tensor(rng.random(6).astype(np.float32))
    pos, neg = tt.tensor(rng.random(6).astype(np.float32)), tt.tensor(-rng.random(6).astype(np.float32))
    scripted = tt.jit.script(branchy)
    for x in (pos, neg):                    # the two profiled calls take one branch each
        np.testing.assert_array_equal(_np(scripted(x, y)), _np(branchy(x, y)))
    g = scripted.graph_for(pos, y)
    (if_node,) = [n for n in g.nodes if n.kind == "prim::If"]
    for block, chain in zip(if_node.blocks, (["mul", "add", "relu", "exp"], ["sub", "abs", "sqrt", "mul"])):
        (group,) = _groups(block)
        assert [n.kind for n in group.attrs["subgraph"].nodes] == ["aten::" + c for c in chain]
    xn, yn = _np(neg), _np(y)
    np.testing.assert_allclose(_np(scripted(neg, y)), np.sqrt(np.abs(xn - yn)) * 2, rtol=1e-6)
    xp = _np(pos)
    np.testing.assert_allclose(_np(scripted(pos, y)), np.exp(np.maximum(xp * yn + 1, 0)), rtol=1e-6)


def test_a_branch_never_profiled_stays_generic_and_correct():
    y = tt.ones(4)
    scripted = tt.jit.script(branchy)
    for _ in range(PROFILED_RUNS):
        scripted(tt.ones(4), y)
    g = scripted.graph_for(tt.ones(4), y)
    if_node = next(n for n in g.nodes if n.kind == "prim::If")
    assert len(_groups(if_node.blocks[0])) == 1 and not _groups(if_node.blocks[1])
    assert scripted(-tt.full((4,), 3.0), y).tolist() == [4.0] * 4       # sqrt(|-3 - 1|) * 2


def test_a_loop_body_is_fused():
    def loop(x):
        for _ in range(3):
            x = (x * 0.5 + 1).tanh()
        return x
    scripted = tt.jit.script(loop)
    x = tt.tensor([0.0, 1.0, -2.0])
    g = scripted.graph_for(x)
    (loop_node,) = [n for n in g.nodes if n.kind == "prim::Loop"]
    (group,) = _groups(loop_node.blocks[0])
    assert [n.kind for n in group.attrs["subgraph"].nodes] == ["aten::mul", "aten::add", "aten::tanh"]
    expected = np.array([0.0, 1.0, -2.0])
    for _ in range(3):
        expected = np.tanh(expected * 0.5 + 1)
    np.testing.assert_allclose(_np(scripted(x)), expected, rtol=1e-6)


def test_past_the_specialisation_limit_new_signatures_run_the_generic_graph():
    from tritensor.jit._profile import SPECIALISATION_LIMIT
    scripted = tt.jit.script(branchy)
    for n in range(1, SPECIALISATION_LIMIT + 1):
        scripted(tt.ones(n), tt.ones(n))
    x = tt.ones(SPECIALISATION_LIMIT + 1)
    assert scripted.graph_for(x, x) is scripted.graph                 # not specialised: no groups
    np.testing.assert_allclose(_np(scripted(x, x)), np.full(SPECIALISATION_LIMIT + 1, np.exp(2.0)), rtol=1e-6)
