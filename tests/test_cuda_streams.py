"""Streams and events (torch.cuda's API and ordering rules) and the launch path that puts every
kernel on the current stream of its device, without torch.

On the emulated device every launch is done when it returns, so streams are always idle; the
API, the bookkeeping (current/default streams, priorities, events) and the errors are the same
as on a GPU. The tests marked ``gpu`` check what only hardware shows: real overlap.
"""
import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import tritensor as tt
from tritensor.runtime import launch

from conftest import to_numpy

two_devices = pytest.mark.skipif(tt.cuda.device_count() < 2, reason="needs two CUDA devices")


@pytest.fixture(autouse=True)
def _restore_streams():
    """Each test starts and ends on device 0 with default streams current."""
    yield
    for i in range(tt.cuda.device_count()):
        tt.cuda.set_stream(tt.cuda.default_stream(i))
    tt.cuda.set_device(0)


# ----------------------------------------------------------------------------- streams
def test_default_and_current_stream():
    d = tt.cuda.default_stream()
    assert d.cuda_stream == 0 and d.device == tt.device("cuda:0") and d.device_index == 0
    assert tt.cuda.current_stream() == d
    assert tt.cuda.current_stream(0) == d and tt.cuda.current_stream("cuda:0") == d
    assert tt.cuda.current_stream(tt.device("cuda")) == d
    assert d.query() is True
    d.synchronize()


def test_new_stream_attributes_and_identity():
    s = tt.cuda.Stream()
    assert s.cuda_stream != 0 and s.device == tt.device("cuda", 0) and s.priority == 0
    t = tt.cuda.Stream()
    assert s != t and s == s and s != tt.cuda.default_stream()
    assert s == tt.cuda.ExternalStream(s.cuda_stream)     # the same queue, seen from outside
    assert len({s, t, tt.cuda.ExternalStream(s.cuda_stream)}) == 2
    assert f"cuda_stream={s.cuda_stream:#x}" in repr(s)


def test_stream_priorities_clamp_to_the_device_range():
    least, greatest = tt.cuda.Stream.priority_range()
    assert least >= greatest            # lower numbers run first
    assert tt.cuda.Stream(priority=-1).priority == max(-1, greatest)
    assert tt.cuda.Stream(priority=-1000).priority == greatest
    assert tt.cuda.Stream(priority=1000).priority == least
    with pytest.raises(TypeError):
        tt.cuda.Stream(priority=0.5)


def test_streams_come_from_a_pool_of_32_per_priority_level():
    """torch's stream pools: tt.cuda.Stream() hands out 32 streams per priority level per device,
    round-robin, so the 1st and the 33rd are the same stream; each level has its own streams."""
    taken = [tt.cuda.Stream() for _ in range(2 * 32)]
    assert len({s.cuda_stream for s in taken}) == 32
    assert all(taken[i] == taken[i + 32] and taken[i] != taken[i + 1] for i in range(31))
    least, greatest = tt.cuda.Stream.priority_range()
    assert least == 0 and -3 <= greatest < 0          # at most 4 levels (0, -1, -2, -3), as torch
    levels = [{tt.cuda.Stream(priority=p).cuda_stream for _ in range(32)} for p in range(least, greatest - 1, -1)]
    assert [len(level) for level in levels] == [32] * len(levels)
    assert levels[0] == {s.cuda_stream for s in taken}
    assert all(a.isdisjoint(b) for i, a in enumerate(levels) for b in levels[i + 1:])
    assert {tt.cuda.Stream(priority=greatest).priority, tt.cuda.Stream(priority=-100).priority} == {greatest}
    on_1 = tt.cuda.Stream(device=tt.cuda.device_count() - 1)
    assert on_1.device_index == tt.cuda.device_count() - 1


def test_a_new_stream_per_iteration_keeps_reserved_memory_bounded():
    """Issue 20.7: a new stream per iteration with an allocation on it grew reserved memory by a
    segment each time (each stream keeps its own cached blocks). With the pool, the 33rd stream is
    the 1st again and reuses the block cached there."""
    def step():
        with tt.cuda.stream(tt.cuda.Stream()):
            return tt.empty(3 * 2 ** 20, dtype=tt.uint8, device="cuda")     # a 20 MiB segment, untouched

    start = tt.cuda.memory_reserved()
    held = None
    reserved = []
    for _ in range(100):
        held = step()
        reserved.append(tt.cuda.memory_reserved())
    del held
    assert reserved[-1] == reserved[32]                  # after one turn of the pool: no growth
    assert reserved[-1] - start <= 32 * (20 * 2 ** 20 + 2 * 2 ** 20)
    tt.cuda.empty_cache()


def test_stream_context_sets_and_restores():
    s1, s2 = tt.cuda.Stream(), tt.cuda.Stream()
    with tt.cuda.stream(s1) as entered:
        assert entered is s1 and tt.cuda.current_stream() == s1
        with tt.cuda.stream(s2):
            assert tt.cuda.current_stream() == s2
        assert tt.cuda.current_stream() == s1
        with tt.cuda.stream(None):      # torch: a None stream changes nothing
            assert tt.cuda.current_stream() == s1
    assert tt.cuda.current_stream() == tt.cuda.default_stream()
    with s2:
        assert tt.cuda.current_stream() == s2
    assert tt.cuda.current_stream() == tt.cuda.default_stream()
    tt.cuda.set_stream(s1)
    assert tt.cuda.current_stream() == s1


def test_current_stream_is_per_thread():
    import threading
    s = tt.cuda.Stream()
    seen = []
    with tt.cuda.stream(s):
        th = threading.Thread(target=lambda: seen.append(tt.cuda.current_stream()))
        th.start()
        th.join()
    assert seen == [tt.cuda.default_stream()]


def test_work_on_streams_is_ordered():
    a = tt.arange(300, dtype=tt.float32, device="cuda")
    s1, s2 = tt.cuda.Stream(), tt.cuda.Stream()
    with tt.cuda.stream(s1):
        b = a * 2 + 1
        done = s1.record_event()
    s2.wait_event(done)
    with tt.cuda.stream(s2):
        c = b.sum()
    s2.synchronize()
    assert done.query() and s1.query() and s2.query()
    assert c.item() == float((np.arange(300) * 2 + 1).sum())
    s3 = tt.cuda.Stream()
    s3.wait_stream(s2)
    with tt.cuda.stream(s3):
        d = c - 1
    tt.cuda.synchronize()
    assert d.item() == c.item() - 1


def test_invalid_devices_for_streams():
    n = tt.cuda.device_count()
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        tt.cuda.Stream(n)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        tt.cuda.current_stream(n)
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        tt.cuda.current_stream("cpu")
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        tt.cuda.synchronize(n)


# ----------------------------------------------------------------------------- events
def test_event_before_record():
    e = tt.cuda.Event()
    assert e.query() is True        # nothing recorded: nothing to wait for (torch)
    e.synchronize()
    e.wait()                        # a no-op, as in torch
    assert e.device is None


def test_event_timing_errors():
    a, b = tt.cuda.Event(), tt.cuda.Event()
    a.record()
    b.record()
    with pytest.raises(ValueError, match="Both events must be created with argument 'enable_timing=True'"):
        a.elapsed_time(b)
    t0, t1 = tt.cuda.Event(enable_timing=True), tt.cuda.Event(enable_timing=True)
    t0.record()
    with pytest.raises(ValueError, match="Both events must be recorded before calculating elapsed time"):
        t0.elapsed_time(t1)
    with pytest.raises(ValueError):
        tt.cuda.Event(enable_timing=True, interprocess=True)


def test_event_elapsed_time_measures_the_interval():
    s = tt.cuda.Stream()
    start, end = tt.cuda.Event(enable_timing=True), tt.cuda.Event(enable_timing=True, blocking=True)
    start.record(s)
    time.sleep(0.03)
    s.record_event(end)
    end.synchronize()
    assert end.query() and start.device == tt.device("cuda:0")
    ms = start.elapsed_time(end)
    assert 25.0 <= ms < 1000.0


def test_record_event_returns_a_new_event():
    s = tt.cuda.Stream()
    e = s.record_event()
    assert isinstance(e, tt.cuda.Event) and e.query()
    mine = tt.cuda.Event()
    assert s.record_event(mine) is mine


@two_devices
def test_event_device_must_match_the_recording_stream():
    e = tt.cuda.Event()
    e.record(tt.cuda.Stream(0))
    with pytest.raises(RuntimeError, match="Event device 0 does not match recording stream's device 1."):
        e.record(tt.cuda.Stream(1))


@two_devices
def test_stream_context_on_another_device_switches_the_current_device():
    s1 = tt.cuda.Stream(1)
    with tt.cuda.stream(s1):
        assert tt.cuda.current_device() == 1
        assert tt.cuda.current_stream() == s1
        assert tt.cuda.current_stream(0) == tt.cuda.default_stream(0)
        x = tt.ones(3, device="cuda")
    assert x.device == tt.device("cuda:1")
    assert tt.cuda.current_device() == 0
    assert tt.cuda.current_stream(1) == tt.cuda.default_stream(1)


# ----------------------------------------------------------------------------- the launch path
def test_every_launch_goes_through_launch_kernel():
    from tritensor.backends import triton as tb
    assert tb._run is launch.launch_kernel
    x = tt.arange(10.0, device="cuda")
    ptr = launch.pointer(x)
    assert ptr.device_index == 0 and ptr.data_ptr() == x.data_ptr()


@pytest.mark.skipif(not tt.cuda.is_emulated(), reason="the interpreter runs only on the emulated device")
def test_interpreted_launches_do_not_touch_tritons_driver():
    """Under TRITON_INTERPRET Triton asks no driver: the hook is neither installed nor needed,
    and a driver set by someone else is left alone."""
    from triton.runtime import driver

    class Recording:
        calls = 0

        def __getattr__(self, name):
            Recording.calls += 1
            raise AssertionError(f"the interpreter asked the driver for {name}")

    saved = driver._active
    driver.set_active(Recording())
    try:
        s = tt.cuda.Stream()
        with tt.cuda.stream(s):
            y = tt.arange(200.0, device="cuda") * 3
        np.testing.assert_array_equal(to_numpy(y), np.arange(200.0, dtype=np.float32) * 3)
        assert Recording.calls == 0
        assert launch._state["mode"] == "interpreted" and launch.installed_driver() is None
    finally:
        driver._active = saved
    assert "torch" not in sys.modules


_HOOK_SCRIPT = textwrap.dedent(r'''
    import json, os, sys
    import triton
    import triton.language as tl
    from triton.backends.nvidia.driver import CudaDriver

    import tritensor as tt
    from tritensor.runtime import device as rd, launch, streams

    # No GPU here: device and stream bookkeeping as on the emulated device (two GPUs), while the
    # kernel below is compiled for real (sm_90, from the capability tritensor reports); Triton's
    # binary loader and C launcher are replaced by recorders.
    rd.cuda_mode = lambda: "emulated"

    @triton.jit
    def add_one(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)

    class Utils:
        loads = []
        def get_device_properties(self, device):
            return {"max_shared_mem": 232448, "multiprocessor_count": 132}
        def load_binary(self, name, kernel, shared, device):
            self.loads.append(device)
            return 1, 2, 0, 0, 1024
        def unload_module(self, module):
            pass

    launches = []
    class RecordingLauncher:
        def __init__(self, src, metadata):
            pass
        def __call__(self, gx, gy, gz, stream, function, *rest):
            launches.append([gx, stream, rd.current_device()])

    drv = launch.install_triton_driver(CudaDriver, Utils(), RecordingLauncher)
    from triton.runtime import driver
    assert driver.active is drv
    on0 = launch.KernelArg(4096, tt.float32, 0)
    on1 = launch.KernelArg(4096, tt.float32, 1)
    launch.launch_kernel(add_one, (1,), on0, 10, BLOCK=16)           # default stream
    s0 = streams.Stream(0)
    with streams.stream(s0):
        launch.launch_kernel(add_one, (2,), on0, 10, BLOCK=16)       # the current stream
    s1 = streams.Stream(1)
    streams.set_stream(s1)
    rd.set_device(0)
    launch.launch_kernel(add_one, (3,), on1, 10, BLOCK=16)           # device 1's current stream
    after = rd.current_device()
    synced = []
    streams.Stream.synchronize = lambda self: synced.append(self.cuda_stream)
    launch._state["blocking"] = True                                 # CUDA_LAUNCH_BLOCKING=1
    launch.launch_kernel(add_one, (4,), on1, 10, BLOCK=16)
    print(json.dumps({"launches": launches, "s0": s0.cuda_stream, "s1": s1.cuda_stream,
                      "after": after, "loads": Utils.loads, "synced": synced,
                      "torch": "torch" in sys.modules, "triton": triton.__version__}))
''')


def test_compiled_launch_gets_tritensors_device_and_stream_without_torch(tmp_path):
    """A compiled (not interpreted) launch through Triton's own JIT path, with tritensor's driver
    hook on Triton's CudaDriver: each launch gets the current stream of its tensors' device,
    runs with that device current, restores the caller's device, and torch is never imported."""
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "TRITENSOR_EMULATE_CUDA")}
    env["TRITENSOR_EMULATED_DEVICES"] = "2"
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    script = tmp_path / "hook.py"        # @triton.jit wants its source in a file
    script.write_text(_HOOK_SCRIPT)
    # an importable torch (an empty stand-in where none is installed): Triton 3.6's argument
    # specializer imports torch when it can, which the first real GPU run caught
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("")
    env["PYTHONPATH"] = os.pathsep.join([p for p in (env.get("PYTHONPATH"), str(tmp_path)) if p])
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["launches"] == [[1, 0, 0], [2, r["s0"], 0], [3, r["s1"], 1], [4, r["s1"], 1]]
    assert r["after"] == 0               # the caller's current device is back after the launch
    assert r["loads"] == [0, 1]          # the kernel was loaded on each device it ran on
    assert r["synced"] == [r["s1"]]      # CUDA_LAUNCH_BLOCKING waits for the launch's stream
    assert r["torch"] is False


def test_launch_blocking_is_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("CUDA_LAUNCH_BLOCKING", "1")
    assert launch.launch_blocking() is True
    monkeypatch.setenv("CUDA_LAUNCH_BLOCKING", "0")
    assert launch.launch_blocking() is False


# ----------------------------------------------------------------------------- real GPU only
@pytest.mark.gpu
def test_two_streams_really_overlap():
    """Two kernels that each occupy one SM for milliseconds (a scan of one long row runs as a
    single program) finish together in clearly less time than one after the other when they are
    on two streams."""
    x = tt.randn(1 << 22, device="cuda")
    y = tt.randn(1 << 22, device="cuda")
    x.cumsum(0)
    tt.cuda.synchronize()
    start, end = tt.cuda.Event(enable_timing=True), tt.cuda.Event(enable_timing=True)
    start.record()
    x.cumsum(0)
    y.cumsum(0)
    end.record()
    end.synchronize()
    serial = start.elapsed_time(end)
    s1, s2 = tt.cuda.Stream(), tt.cuda.Stream()
    start.record()
    s1.wait_stream(tt.cuda.current_stream())
    s2.wait_stream(tt.cuda.current_stream())
    with tt.cuda.stream(s1):
        x.cumsum(0)
    with tt.cuda.stream(s2):
        y.cumsum(0)
    tt.cuda.current_stream().wait_stream(s1)
    tt.cuda.current_stream().wait_stream(s2)
    end.record()
    end.synchronize()
    overlapped = start.elapsed_time(end)
    assert overlapped < 0.75 * serial, (overlapped, serial)
