"""The fuser under tt.compile(dynamic=True) (issue 26 item 2's cache key): a group's plans are
keyed by the symbolic signature (dtypes, ranks, sizes 0/1, stride pattern, device,
requires_grad, grad mode), so every size of one signature runs the same generated kernel (one
source file, one Triton compile: the sizes are runtime arguments) with no recompile warning; the
static path (tt.jit.trace) keeps exact-size plans and its limit of 8."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tritensor as tt
from tritensor.backends import triton as tb
from tritensor.backends.triton import fused
from tritensor.jit import _fusion

from test_fusion import boxes, iou_loss, iou_numpy

# block edges of the emulated launch (the small profile: 128 elements a program) and below them
SIZES = (3, 17, 64, 127, 128, 129, 200, 255, 256, 300)


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty TRITENSOR_CACHE_DIR and no module loaded yet in this process, so every source a
    test generates is written there."""
    monkeypatch.setenv("TRITENSOR_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(fused, "_MODULES", {})
    return tmp_path


@pytest.fixture
def launches(monkeypatch):
    seen = []
    real = tb._run
    monkeypatch.setattr(tb, "_run", lambda kernel, *a, **k: (seen.append(kernel.fn.__name__), real(kernel, *a, **k))[1])
    return seen


def _host(t):
    return t.detach().cpu().numpy()


def _group(compiled, args):
    (graph,) = compiled.graphs
    groups = [n for n in graph.graph_for(*args).nodes if n.kind == "prim::FusionGroup"]
    assert len(groups) == 1
    return groups[0]


def test_ten_sizes_share_one_plan_and_one_kernel_file(fresh_cache, launches):
    compiled = tt.compile(iou_loss, dynamic=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # no recompile warning, no fallback
        for n in SIZES:
            cols = boxes(n, seed=n)
            args = [tt.tensor(c, device="cuda") for c in cols]
            launches.clear()
            out = compiled(*args)
            if n != SIZES[0]:                    # the first call is the capture (eager)
                assert launches == ["fused_kernel"], n
            assert tuple(out.shape) == (n,)
            np.testing.assert_allclose(_host(out), iou_numpy(*(c.astype(np.float64) for c in cols)),
                                       rtol=0, atol=2e-6)
            if n in (127, 129):                  # bit for bit the eager chain's (20 launches)
                np.testing.assert_array_equal(_host(out), _host(iou_loss(*args)))
    assert compiled.explain()["graph_count"] == 1 and compiled.fallback_reason is None
    group = _group(compiled, args)
    assert len(group.attrs["_plans"]) == 1                   # one symbolic signature
    files = sorted(fresh_cache.glob("fused_*.py"))
    assert len(files) == 1                                   # one source for every size
    text = files[0].read_text()
    assert "over 1-d" in text and not any(f"[{n}]" in text for n in SIZES)


def test_a_reduction_group_serves_every_size_with_its_own_launch_geometry(fresh_cache, launches):
    """The reduction's tiles and chunks depend on the size: they are launch arguments
    (constexprs of one source), so a 300-element sum split in chunks (two launches) and a
    short one (one launch) run the same generated file."""
    def loss_sum(*b):
        return iou_loss(*b).sum()
    compiled = tt.compile(loss_sum, dynamic=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in (5, 40, 300):
            cols = boxes(n, seed=n)
            args = [tt.tensor(c, device="cuda") for c in cols]
            launches.clear()
            out = compiled(*args)
            if n == 40:
                assert launches == ["fused_kernel"]
            if n == 300:
                assert launches == ["fused_kernel", "fused_finish"]
            want = iou_numpy(*(c.astype(np.float64) for c in cols)).sum()
            np.testing.assert_allclose(float(out), want, rtol=2e-6)
            assert _host(out).tobytes() == _host(loss_sum(*args)).tobytes()
    assert len(sorted(fresh_cache.glob("fused_*.py"))) == 1


def test_new_symbolic_signatures_are_new_plans(device):
    """Sizes of one symbolic signature share a plan; a strided input or another dtype is a
    signature of its own (a graph of its own too: tt.compile keys its captures the same way)."""
    def f(x, y):
        return x * 2 + y

    compiled = tt.compile(f, dynamic=True)
    for n in (4, 9, 6):
        x, y = tt.ones(n, device=device), tt.arange(n, device=device, dtype=tt.float32)
        np.testing.assert_array_equal(_host(compiled(x, y)), 2 + np.arange(n, dtype=np.float32))
    col = tt.ones(6, 2, device=device)[:, 0]                          # stride 2
    for n in (6, 7):
        col = tt.ones(n, 2, device=device)[:, 0]
        np.testing.assert_array_equal(_host(compiled(col, tt.full((n,), 3.0, device=device))), np.full(n, 5.0))
    for n in (5, 8):
        out = compiled(tt.ones(n, device=device, dtype=tt.float64), tt.ones(n, device=device, dtype=tt.float64))
        assert out.dtype == tt.float64
        np.testing.assert_array_equal(_host(out), np.full(n, 3.0))
    assert compiled.explain()["graph_count"] == 3
    for graph in compiled.graphs:
        groups = [g for g in graph.graph_for(x, y).nodes if g.kind == "prim::FusionGroup"]
        assert [len(g.attrs["_plans"]) for g in groups] == [1]


def test_gradients_under_dynamic_sizes_equal_eager():
    """A group needing a gradient is differentiated per exact size (the traced backward bakes
    sizes in, as sum's expand does), still counted once per symbolic signature: 10 sizes, no
    warning, the gradients of the eager ops."""
    def f(x, y):
        return (x * y + x).sum()

    compiled = tt.compile(f, dynamic=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in range(2, 12):
            xv = np.linspace(-1, 1, n, dtype=np.float32)
            yv = np.arange(n, dtype=np.float32)
            x, y = tt.tensor(xv, requires_grad=True), tt.tensor(yv, requires_grad=True)
            compiled(x, y).backward()
            np.testing.assert_array_equal(_host(x.grad), yv + 1)        # d/dx = y + 1
            np.testing.assert_array_equal(_host(y.grad), xv)            # d/dy = x
    group = _group(compiled, (x, y))
    assert len(group.attrs["_plans"]) == 1 and len(group.attrs["_sized"]) == 9
    assert all(d.eager is None for d in group.attrs["_sized"].values())      # fused, not eager


def test_the_static_path_keeps_exact_sizes_and_the_limit(fresh_cache, device):
    """tt.jit.trace's groups are specialised per size: past 8 they run eagerly and warn, though
    the sizes still share one generated source."""
    g = tt.jit.trace(lambda x: x * 2 + 1, (tt.ones(1, device=device),))
    for n in range(1, _fusion.RECOMPILE_LIMIT + 1):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            g(tt.ones(n, device=device))
    with pytest.warns(RuntimeWarning, match="specialised for 8 input signatures"):
        out = g(tt.ones(20, device=device))
    np.testing.assert_array_equal(_host(out), np.full(20, 3.0, np.float32))
    if device == "cuda":
        assert len(sorted(fresh_cache.glob("fused_*.py"))) == 1


def test_the_exact_size_plans_of_a_dynamic_group_stay_bounded():
    """Past SIZED_PLANS sizes the oldest exact-size plan is dropped (made again if its size
    comes back): no warning, the values right."""
    compiled = tt.compile(lambda x: x * 2 + 1, dynamic=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in list(range(2, _fusion.SIZED_PLANS + 8)) + [3]:
            np.testing.assert_array_equal(_host(compiled(tt.ones(n))), np.full(n, 3.0, np.float32))
    group = _group(compiled, (tt.ones(3),))
    assert len(group.attrs["_sized"]) == _fusion.SIZED_PLANS and len(group.attrs["_plans"]) == 1


def test_a_mean_under_dynamic_sizes_divides_by_its_own_count():
    # a dynamic capture recorded mean's element count as a constant (aten::div(%sum, 4)), so a later
    # size divided by the first size's count: such a count keeps the capture static (the reason says so)
    compiled = tt.compile(lambda x: x.mean(), dynamic=True)
    for n in (4, 5, 6, 7):
        assert float(compiled(tt.arange(n, dtype=tt.float32))) == (n - 1) / 2
    default = tt.compile(lambda x: x.var(), dynamic=None)
    for n in (4, 5, 6, 7):
        x = tt.arange(n, dtype=tt.float32)
        want = np.var(np.arange(n, dtype=np.float64), ddof=1)
        np.testing.assert_allclose(float(default(x)), want, rtol=1e-6)
