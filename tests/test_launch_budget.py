"""Issue 14 item 3: the Triton backend's host side of a repeated elementwise launch, counted in
Python calls (``sys.setprofile``, deterministic), and the cached launch plans checked for
correctness: what a cached plan hands the launch equals what the first call did, for every
operand form the plan has slots for (tensor pointers with piece offsets, scalars, two outputs,
ranks past MAX_RANK), and a change of the launch settings drops the plans made under the old ones.
"""
from __future__ import annotations

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy
from tritensor.backends import triton as tb
from tritensor.runtime.launch import KernelArg

from test_dispatch_budget import warm_count

# Python calls of one cached call (the first calls of a signature are not counted).
BUDGET = {
    "elementwise a + b": 2,         # the launcher itself, the launch (a recorder here)
    "elementwise a + 2.5": 3,       # ... and the scalar's kernel value
}
# (the whole forward op's count, "cuda host a + b", is tests/test_dispatch_budget.py's)


class Recorder:
    def __init__(self):
        self.launches = []

    def __call__(self, kernel, grid, *args, **meta):
        self.launches.append((kernel, grid, args, meta))


@pytest.fixture
def recorder(monkeypatch):
    r = Recorder()
    monkeypatch.setattr(tb, "_run", r)
    return r


def _check(name, fn):
    calls = warm_count(fn)
    assert calls <= BUDGET[name], f"{name}: {calls} Python calls, over its budget of {BUDGET[name]}"


def test_cached_elementwise_launch_budget(recorder):
    a, b = tt.randn(1000, device="cuda"), tt.randn(1000, device="cuda")
    out = tt.empty(1000, device="cuda")
    _check("elementwise a + b", lambda: tb.elementwise("add", out, [a, b], "float32"))
    _check("elementwise a + 2.5", lambda: tb.elementwise("add", out, [a, 2.5], "float32"))
    assert recorder.launches


def _norm(launch, base):
    """A launch with pointers as (dtype, byte offset from ``base``): comparable across calls."""
    kernel, grid, args, meta = launch
    return kernel, grid, tuple((a.dtype, a.data_ptr() - base) if isinstance(a, KernelArg) else a
                               for a in args), meta


def _first_and_cached(recorder, fn, base):
    tb._EW_PLANS.clear()
    recorder.launches.clear()
    fn()
    first = list(recorder.launches)
    recorder.launches.clear()
    fn()
    again = list(recorder.launches)
    recorder.launches.clear()
    assert first and len(first) == len(again)
    return [_norm(x, base) for x in first], [_norm(x, base) for x in again]


@pytest.mark.parametrize("case", ["tensors", "scalar first", "scalar last", "ternary", "two outputs",
                                  "past MAX_RANK", "broadcast"])
def test_a_cached_plan_launches_what_the_first_call_did(recorder, case):
    x = tt.randn(2, 3, 2, 3, 2, 3, 2, 4, device="cuda")       # rank 8: pieces with pointer offsets
    base = x._storage.data_ptr()
    big = tt.empty(4, 2, 3, 2, 3, 2, 3, 2, device="cuda").permute(7, 6, 5, 4, 3, 2, 1, 0)   # x's shape, no dim merges
    flat = x.reshape(-1)
    a, b = flat[:100], flat[100:200]
    out = flat[300:400]
    calls = {
        "tensors": lambda: tb.elementwise("mul", out, [a, b], "float32"),
        "scalar first": lambda: tb.elementwise("sub", out, [3, a], "float32"),
        "scalar last": lambda: tb.elementwise("div", out, [a, 0.25], "float32"),
        "ternary": lambda: tb.elementwise("where", out, [a, b, 7.0], "float32"),
        "two outputs": lambda: tb.elementwise("mul_backward", (out, flat[500:600]), [a, b, flat[700:800]],
                                              "float32"),
        "past MAX_RANK": lambda: tb.elementwise("neg", big, [x], "float32"),
        "broadcast": lambda: tb.elementwise("add", flat[:60].view(6, 10), [flat[100:110], 1], "float32"),
    }
    if case == "two outputs":
        from tritensor.kernels import elementwise as ew_k
        if "mul_backward" not in ew_k.TERNARY_2OUT:
            pytest.skip("no two-output function named mul_backward")
    first, again = _first_and_cached(recorder, calls[case], base)
    assert first == again
    if case == "past MAX_RANK":        # one launch per leading index: pointers offset per piece
        assert len(first) == 2 * 3 and len({args[0][1] for _, _, args, _ in first}) == 6


def test_scalar_values_are_filled_in_not_cached():
    x = tt.tensor([1.0, 2.0, 3.0], device="cuda")
    for _ in range(2):
        np.testing.assert_array_equal(to_numpy(x * 2.5), [2.5, 5.0, 7.5])
        np.testing.assert_array_equal(to_numpy(x * 3), [3.0, 6.0, 9.0])
        np.testing.assert_array_equal(to_numpy(2 - x), [1.0, 0.0, -1.0])
        np.testing.assert_array_equal(to_numpy(x[1:] + x[:-1]), [3.0, 5.0])


def test_a_settings_change_drops_the_plans(recorder, monkeypatch):
    a = tt.randn(300, device="cuda")
    tb.elementwise("neg", a, [a], "float32")
    assert tb._EW_PLANS
    monkeypatch.setitem(tb.INTERPRETER_SETTINGS, "elementwise_block", 64)
    assert not tb._EW_PLANS
    monkeypatch.setitem(tb.GPU_SETTINGS, "elementwise_block", 512)
    recorder.launches.clear()
    tb.elementwise("neg", a, [a], "float32")
    tb.elementwise("neg", a, [a], "float32")
    (_, grid0, _, meta0), (_, grid1, _, meta1) = recorder.launches
    block = tb.settings()["elementwise_block"]
    assert meta0["BLOCK"] == meta1["BLOCK"] == block and grid0 == grid1 == (-(-300 // block),)
    monkeypatch.undo()
    assert not tb._EW_PLANS
