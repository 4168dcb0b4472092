"""Issue 23 item 8: the launch profiles of backends/triton/_plan.py. The real GPU's
configurations ("gpu"), the emulated device's default of few large programs ("fast") and the
small blocks that make the tests' shapes cross block edges ("small"); gpu_launch_configs() gives
every family the GPU's configurations even under the interpreter (the traffic counter needs them).
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy
from tritensor.backends import triton as tb
from tritensor.backends.triton import _plan
from tritensor.backends.triton import conv as tconv
from tritensor.backends.triton import index as tindex
from tritensor.backends.triton import linalg as tlinalg
from tritensor.backends.triton import linalg_spectral as tspectral
from tritensor.backends.triton import matmul as tmm
from tritensor.backends.triton import nn as tnn
from tritensor.backends.triton import optim as toptim
from tritensor.backends.triton import pdist as tpdist
from tritensor.backends.triton import pool as tpool
from tritensor.backends.triton import sort as tsort

# every test starts from the small profile, whatever TRITENSOR_EMULATED_BLOCKS says
pytestmark = [pytest.mark.skipif(not tt.cuda.is_emulated(), reason="the profiles of the emulated device"),
              pytest.mark.emulated_blocks("small")]

# every family's settings function -> its (gpu, fast, small) settings
FAMILIES = {
    "elementwise/copy/reduce/rows": (tb.settings, tb.GPU_SETTINGS, tb.INTERPRETER_FAST_SETTINGS,
                                     tb.INTERPRETER_SETTINGS),
    "index": (tindex.settings, tindex.GPU_SETTINGS, tindex.INTERPRETER_FAST_SETTINGS, tindex.INTERPRETER_SETTINGS),
    "linalg": (tlinalg.settings, tlinalg.GPU, tlinalg.INTERPRETER_FAST, tlinalg.INTERPRETER),
    "linalg_spectral": (tspectral.settings, tspectral.GPU, tspectral.INTERPRETER_FAST, tspectral.INTERPRETER),
    "nn": (tnn.settings, tnn.GPU_SETTINGS, tnn.INTERPRETER_FAST_SETTINGS, tnn.INTERPRETER_SETTINGS),
    "optim": (toptim.settings, toptim.GPU_SETTINGS, toptim.INTERPRETER_FAST_SETTINGS, toptim.INTERPRETER_SETTINGS),
    "pdist": (tpdist._settings, tpdist.GPU, tpdist.INTERPRETER_FAST, tpdist.INTERPRETER),
    "pool": (tpool.settings, tpool.GPU_SETTINGS, tpool.INTERPRETER_FAST_SETTINGS, tpool.INTERPRETER_SETTINGS),
    "sort": (tsort.settings, tsort.GPU_SETTINGS, tsort.INTERPRETER_FAST_SETTINGS, tsort.INTERPRETER_SETTINGS),
}


class Recorder:
    """Stands in for tb._run: records (kernel name, grid, meta) and runs the launch."""

    def __init__(self, run):
        self.run, self.launches = run, []

    def __call__(self, kernel, grid, *args, **meta):
        self.launches.append((getattr(kernel, "__name__", str(kernel)), tuple(grid), meta))
        self.run(kernel, grid, *args, **meta)

    def programs(self):
        return sum(int(np.prod(grid)) for _, grid, _ in self.launches)


@pytest.fixture
def recorder(monkeypatch):
    r = Recorder(tb._run)
    monkeypatch.setattr(tb, "_run", r)
    return r


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_resolves_to_the_profile_in_force(family):
    settings, gpu, fast, small = FAMILIES[family]
    assert tb.current_profile() == "small"          # (pytestmark)
    assert settings() is small
    with tb.gpu_launch_configs():
        assert tb.current_profile() == "gpu" and settings() is gpu
        with tb.launch_profile("fast"):             # blocks nest, the innermost wins
            assert settings() is fast
        assert settings() is gpu
    with tb.emulated_blocks("fast"):
        assert settings() is fast
    assert settings() is small
    assert set(gpu) == set(fast) == set(small)      # the same keys in every profile


def test_matmul_and_conv_configs_follow_the_profile():
    assert tb.pick(None, tmm.INTERPRETER_FAST_CONFIG, tmm.INTERPRETER_CONFIG) is tmm.INTERPRETER_CONFIG
    with tb.emulated_blocks("fast"):
        assert tb.pick(None, tconv.INTERPRETER_FAST_CONFIG, tconv.INTERPRETER_CONFIG) is tconv.INTERPRETER_FAST_CONFIG
    for cfg in (tmm.INTERPRETER_FAST_CONFIG, tconv.INTERPRETER_FAST_CONFIG, tmm.INTERPRETER_CONFIG):
        assert min(cfg.BLOCK_M, cfg.BLOCK_N, cfg.BLOCK_K) >= 16    # tl.dot's minimum on a GPU
    # the fast tiles are cut down to small problems (the main job's logits: 64 x 10, K = 256)
    fitted = tmm.fitted(tmm.INTERPRETER_FAST_CONFIG, 64, 10, 256)
    assert (fitted.BLOCK_M, fitted.BLOCK_N, fitted.BLOCK_K) == (64, 16, 64)
    fitted = tmm.fitted(tmm.INTERPRETER_FAST_CONFIG, 3, 2, 5)
    assert (fitted.BLOCK_M, fitted.BLOCK_N, fitted.BLOCK_K) == (16, 16, 16)


def test_gpu_launch_configs_launch_the_gpu_blocks(recorder):
    a, b = tt.randn(3000, device="cuda"), tt.randn(3000, device="cuda")
    p, q = tt.randn(40, 70, device="cuda"), tt.randn(70, 24, device="cuda")
    expected = to_numpy(a) + to_numpy(b)
    recorder.launches.clear()
    with tb.gpu_launch_configs():
        c = a + b
        m = p @ q
    np.testing.assert_array_equal(to_numpy(c), expected)
    (name, grid, meta), *mm = recorder.launches
    assert meta["BLOCK"] == 1024 and grid == (3,)                   # GPU_SETTINGS' block
    assert mm and mm[-1][2]["BLOCK_M"] >= 64                        # a Hopper tile, not the interpreter's 32
    np.testing.assert_allclose(to_numpy(m), to_numpy(p) @ to_numpy(q), rtol=1e-3, atol=1e-3)   # TF32
    recorder.launches.clear()
    c = a + b                                                      # the plans made for the GPU are gone
    assert recorder.launches[0][2]["BLOCK"] == tb.INTERPRETER_SETTINGS["elementwise_block"]


def test_the_fast_profile_launches_few_programs(recorder):
    """The emulated default: a + b of 16k elements and the sum of 65k in one program each, a
    softmax over 4k-wide rows and the main job's products in one or two."""
    with tb.emulated_blocks("fast"):
        a, b = tt.randn(128, 128, device="cuda"), tt.randn(128, 128, device="cuda")
        w = tt.randn(256, 256, device="cuda")
        x, m = tt.randn(64, 256, device="cuda"), tt.randn(8, 4096, device="cuda")
        recorder.launches.clear()
        c = a + b
        assert recorder.programs() == 1
        for dims in ((), (0,), (1,)):
            recorder.launches.clear()
            s = w.sum(dims)
            assert recorder.programs() == 1, (dims, recorder.launches)
            np.testing.assert_allclose(to_numpy(s), to_numpy(w).astype(np.float64).sum(dims or None),
                                       rtol=1e-5, atol=1e-4)
        recorder.launches.clear()
        p = tt.softmax(m, 1)
        y = x @ w
        assert recorder.programs() <= 2, recorder.launches
    np.testing.assert_allclose(to_numpy(c), to_numpy(a) + to_numpy(b))
    e = np.exp(to_numpy(m) - to_numpy(m).max(1, keepdims=True))
    np.testing.assert_allclose(to_numpy(p), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(to_numpy(y), to_numpy(x) @ to_numpy(w), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op", ["amax", "amin", "argmax", "argmin", "prod"])
def test_fast_reductions_keep_nan_and_first_index_rules(op):
    """amax/amin and argmax/argmin finish their rows with tl.max/tl.min (one NumPy call under the
    interpreter): NaN still wins, the first index still wins ties, in every profile."""
    x_np = np.tile(np.array([1.0, 3.0, -2.0, 3.0, 0.5], np.float32), (6, 40))    # (6, 200), ties
    x_np[2, 150] = np.nan
    x_np[4, 7] = x_np[4, 120] = np.nan
    x_np[5] = -np.inf
    if op == "prod":
        x_np = np.where(np.isfinite(x_np), 1.0 + np.abs(x_np) / 512, x_np).astype(np.float32)
    x = tt.tensor(x_np, device="cuda")
    expected = {"amax": lambda: np.max(x_np, 1), "amin": lambda: np.min(x_np, 1),
                "argmax": lambda: [int(np.nanargmax(r)) if not np.isnan(r).any() else int(np.argmax(np.isnan(r)))
                                   for r in x_np],
                "argmin": lambda: [int(np.nanargmin(r)) if not np.isnan(r).any() else int(np.argmax(np.isnan(r)))
                                   for r in x_np],
                "prod": lambda: np.prod(x_np.astype(np.float64), 1)}[op]()
    if op == "argmax":
        assert list(expected[:2]) == [1, 1]          # the first of the tied maxima
    for name in ("fast", "small"):
        with tb.emulated_blocks(name):
            got = to_numpy(getattr(x, op)(1))
            whole = to_numpy(getattr(x, op)())
        np.testing.assert_allclose(got, expected, rtol=1e-5, equal_nan=True, err_msg=name)
        if op in ("argmax", "argmin"):
            assert int(whole) == 2 * 200 + 150, name        # the first NaN in row-major order
        else:
            assert np.isnan(whole), name


def test_the_small_profile_crosses_block_edges(recorder):
    x = tt.arange(300, dtype=tt.float32, device="cuda")
    y = x * 2 + 1
    assert recorder.launches and all(int(np.prod(grid)) >= 3 for _, grid, _ in recorder.launches)
    np.testing.assert_array_equal(to_numpy(y), np.arange(300, dtype=np.float32) * 2 + 1)


def test_profiles_give_the_same_values():
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((37, 53)).astype(np.float32)
    x = tt.tensor(x_np, device="cuda")
    results = {}
    for name in tb.PROFILES:
        with tb.emulated_blocks(name):
            results[name] = [to_numpy(f(x)) for f in (lambda t: t * 3 - 1, lambda t: t.t() + t[:, 0],
                                                          lambda t: t.amax(1), lambda t: tt.softmax(t, 1),
                                                          lambda t: t.cumsum(0), lambda t: t.argmax(0))]
    expected = [x_np * 3 - 1, x_np.T + x_np[:, 0], x_np.max(1)]
    for name, got in results.items():
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-6, err_msg=name)
        np.testing.assert_allclose(got[4], np.cumsum(x_np, 0), rtol=1e-5, atol=1e-5, err_msg=name)
        np.testing.assert_array_equal(got[5], x_np.argmax(0), err_msg=name)
        e = np.exp(x_np - x_np.max(1, keepdims=True))
        np.testing.assert_allclose(got[3], e / e.sum(1, keepdims=True), rtol=1e-5, err_msg=name)


def test_the_profile_is_process_wide_and_blocks_leave_in_any_order():
    seen = []
    entered, leave = threading.Event(), threading.Event()

    def worker():
        with tb.launch_profile("fast"):
            entered.set()
            leave.wait(10)

    t = threading.Thread(target=worker)
    with tb.gpu_launch_configs():
        t.start()
        entered.wait(10)
        seen.append(tb.current_profile())           # the thread's block is innermost now
    seen.append(tb.current_profile())               # ours left first: the thread's stays
    leave.set()
    t.join(10)
    seen.append(tb.current_profile())
    assert seen == ["fast", "fast", "small"]


def test_unknown_profiles_are_refused(monkeypatch):
    with pytest.raises(ValueError, match="unknown launch profile 'huge'"):
        with tb.launch_profile("huge"):
            pass
    with pytest.raises(ValueError, match="unknown launch profile"):
        tb.set_emulated_profile("tiny")
    monkeypatch.setenv("TRITENSOR_EMULATED_BLOCKS", "Large")
    with pytest.raises(ValueError, match="TRITENSOR_EMULATED_BLOCKS='large'"):
        _plan._env_profile()
    monkeypatch.setenv("TRITENSOR_EMULATED_BLOCKS", "")
    assert _plan._env_profile() == "fast"             # the user's default


@pytest.mark.emulated_blocks("fast")
def test_the_marker_selects_the_profile():
    assert tb.current_profile() == "fast"     # the closest marker wins over the module's
