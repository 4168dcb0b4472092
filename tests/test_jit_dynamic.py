"""tt.compile's dynamic shapes (issue 26 item 2's "symbolic shapes when dynamic"): with
dynamic=True one capture serves every size (x.size(0), x.shape[1], x.numel() are graph ops),
dynamic=None recompiles as dynamic at the second shape (torch's automatic_dynamic_shapes),
dynamic=False keeps one graph per shape and the recompile limit. The oracle is the eager call."""
from __future__ import annotations

import numpy as np
import pytest

import tritensor as tt
import tritensor.nn.functional as F
from tritensor._compile import RECOMPILE_LIMIT


def flat(x):
    return (x.view(x.size(0), -1) * 2 + 1).relu().sum(1) + x.numel()


def _np(t):
    return t.detach().cpu().numpy()


def test_one_dynamic_capture_serves_every_batch_size():
    cf = tt.compile(flat, dynamic=True)
    for b in (3, 5, 7):
        x = tt.randn(b, 4, 5)
        np.testing.assert_array_equal(_np(cf(x)), _np(flat(x)))
    assert cf.explain() == {"graph_count": 1, "dynamic_graph_count": 1, "graph_calls": 3, "eager_calls": 0,
                            "fallback_reasons": []}
    listing = str(cf.graphs[0].graph)
    # the sizes are graph ops, not constants
    assert "aten::size(%arg0, %" in listing and "aten::numel(%arg0)" in listing
    assert "shape=[3" not in listing


def test_automatic_dynamic_recompiles_once_at_the_second_shape_and_static_keeps_one_per_shape():
    auto, static = tt.compile(flat), tt.compile(flat, dynamic=False)
    for b in (3, 5, 7, 9):
        x = tt.randn(b, 2, 3)
        for cf in (auto, static):
            np.testing.assert_array_equal(_np(cf(x)), _np(flat(x)))
    assert auto.explain()["graph_count"] == 2 and auto.explain()["dynamic_graph_count"] == 1
    assert static.explain()["graph_count"] == 4 and static.explain()["dynamic_graph_count"] == 0
    for b in range(10, 10 + RECOMPILE_LIMIT):          # dynamic=False: past 8 shapes it runs eagerly
        x = tt.ones(b, 2, 3)
        np.testing.assert_array_equal(_np(static(x)), _np(flat(x)))
    assert static.explain()["graph_count"] == RECOMPILE_LIMIT
    assert static.fallback_reason.startswith("cache_size_limit reached")


def test_sizes_0_and_1_rank_dtype_and_contiguity_are_part_of_the_symbolic_key():
    def f(x):
        return (x.reshape(x.size(0), x.size(1) * x.size(2)) * 2).sum(1)
    cf = tt.compile(f, dynamic=True)
    for x in (tt.ones(3, 2, 2), tt.ones(4, 2, 2), tt.ones(1, 2, 2), tt.ones(3, 1, 2), tt.ones(0, 2, 2),
              tt.ones(3, 2, 2, dtype=tt.float64), tt.arange(12.0).reshape(3, 2, 2).transpose(1, 2)):
        np.testing.assert_array_equal(_np(cf(x)), _np(f(x)))
    assert cf.explain()["graph_count"] == 6       # (3 and 4 share one)
    with pytest.raises(RuntimeError, match="cannot reshape tensor of 0 elements into shape"):
        flat(tt.ones(0, 2, 2))                    # (eager's error: view(0, -1) is ambiguous)
    with pytest.raises(RuntimeError, match="cannot reshape tensor of 0 elements into shape"):
        tt.compile(flat, dynamic=True)(tt.ones(0, 2, 2))


def test_a_size_compared_in_python_is_a_guard():
    def f(x):
        if x.size(0) > 4:                     # decided at capture: guarded, not baked blindly
            return x * 2
        return x * 3
    cf = tt.compile(f, dynamic=True)
    for b in (2, 3, 6, 8):
        x = tt.ones(b)
        np.testing.assert_array_equal(_np(cf(x)), _np(f(x)))
    assert cf.explain()["graph_count"] == 2       # one graph per outcome of the comparison


def test_a_graph_whose_intermediate_sizes_decide_something_stays_static():
    def f(x):
        y = x.sum(1)
        return y * 2 if y.size(0) > 4 else y * 3
    cf = tt.compile(f, dynamic=True)
    for b in (2, 6):
        x = tt.ones(b, 3)
        np.testing.assert_array_equal(_np(cf(x)), _np(f(x)))
    info = cf.explain()
    assert info["dynamic_graph_count"] == 0 and info["graph_count"] == 2
    assert "a size of an intermediate tensor was read as a Python value" in info["fallback_reasons"][0]


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_a_dynamic_model_with_flatten_linear_and_dropout_equals_eager_with_gradients(device):
    tt.manual_seed(0)
    model = tt.nn.Sequential(tt.nn.Flatten(), tt.nn.Linear(6, 3), tt.nn.Dropout(0.25), tt.nn.Tanh()).to(device)
    cm = tt.compile(model, dynamic=True)
    for b in (2, 5, 3):
        x = tt.randn(b, 2, 3, device=device)
        results = []
        for m in (model, cm):
            model.zero_grad()
            tt.manual_seed(b)
            out = m(x)
            out.sum().backward()
            results.append((_np(out), [_np(p.grad) for p in model.parameters()]))
        np.testing.assert_array_equal(results[1][0], results[0][0])
        for g, e in zip(results[1][1], results[0][1]):
            np.testing.assert_array_equal(g, e)
    assert cm.explain()["graph_count"] == 1 and cm.explain()["dynamic_graph_count"] == 1


def test_dynamic_fused_groups_on_the_emulated_device_share_one_kernel_source():
    def f(x):
        return F.relu(x.reshape(-1, x.shape[-1]) * 3 - 1).exp()
    cf = tt.compile(f, dynamic=True)
    for b in (3, 5, 70):                         # (3: the capture) 70 * 4: two blocks of the kernel
        x = tt.randn(b, 4, device="cuda")
        np.testing.assert_allclose(_np(cf(x)), _np(f(x)), rtol=1e-6)
    assert cf.explain()["graph_count"] == 1
    fused = cf.graphs[0].graph._tt_fused
    groups = [n for n in fused.nodes if n.kind == "prim::FusionGroup"]
    assert len(groups) == 1
    # one symbolic signature; the two sizes' plans run one source (sizes are kernel arguments)
    assert len(groups[0].attrs["_plans"]) == 1
    plans = list(groups[0].attrs["_sized"].values())
    assert len(plans) == 2 and plans[0].source == plans[1].source and plans[0].module is plans[1].module
