"""CUDA graphs (issue 26 item 3): capture and replay semantics, private pools, the operations a
capture refuses, graphed callables (forward and backward graphs) and the graph runner of
``tt.compile(mode="reduce-overhead")``.

On the emulated device a capture records the launches of the capturing stream without running
them and ``replay()`` re-runs them on the same memory, so the semantics are torch's: kernels do
not run during capture, inputs and outputs are static tensors, new values go in with ``copy_``.
The oracles are hand-computed values and eager runs of the same computation (graph == eager is
the property under test); tolerances are exact (the same kernels on the same values).
"""
import gc

import numpy as np
import pytest

import tritensor as tt
from tritensor.cuda_graphs import graphed
from tritensor.runtime import graphs as _graphs

from conftest import to_numpy

CAPTURE_ERROR = "operation not permitted when stream is capturing"
emulated_only = pytest.mark.skipif(not tt.cuda.is_emulated(), reason="inspects the emulated graph's recorded launches")


@pytest.fixture(autouse=True)
def _no_capture_left():
    yield
    leftover = dict(_graphs.CAPTURES)
    _graphs.CAPTURES.clear()
    tt.cuda.set_stream(tt.cuda.default_stream(0))
    assert not leftover, "a test left a capture running"


def _warm(fn, *args):
    """torch's rule: run once on a side stream before capturing."""
    s = tt.cuda.Stream()
    with tt.cuda.stream(s):
        fn(*args)


# ----------------------------------------------------------------------------- capture and replay
def test_replay_recomputes_from_static_inputs():
    x = tt.zeros(5, device="cuda")
    _warm(lambda: x * 2 + 1)
    g = tt.cuda.CUDAGraph()
    with tt.cuda.graph(g):
        out = x * 2 + 1
    assert g.num_launches == (2 if tt.cuda.is_emulated() else 0)      # a real GPU's graph is CUDA's
    ptr = out.data_ptr()
    x.copy_(tt.tensor([0.0, 1.0, 2.0, 3.0, 4.0], device="cuda"))
    g.replay()
    assert to_numpy(out).tolist() == [1.0, 3.0, 5.0, 7.0, 9.0]
    x.copy_(tt.tensor([-1.0, 0.5, 10.0, 0.0, 2.5], device="cuda"))
    g.replay()
    assert to_numpy(out).tolist() == [-1.0, 2.0, 21.0, 1.0, 6.0]
    assert out.data_ptr() == ptr                  # the output is a static tensor


def test_kernels_do_not_run_during_capture_and_run_at_each_replay():
    acc = tt.zeros(3, device="cuda")
    _warm(lambda: acc.add_(0))
    g = tt.cuda.CUDAGraph()
    with tt.cuda.graph(g):
        acc.add_(1.5)
    assert to_numpy(acc).tolist() == [0.0, 0.0, 0.0]
    g.replay()
    g.replay()
    assert to_numpy(acc).tolist() == [3.0, 3.0, 3.0]
    g.replay()                                    # replay on the default stream is fine (torch)
    assert to_numpy(acc).tolist() == [4.5, 4.5, 4.5]


def test_capture_begin_end_by_hand_and_is_current_stream_capturing():
    x = tt.ones(4, device="cuda")
    g = tt.cuda.CUDAGraph()
    s = tt.cuda.Stream()
    assert not tt.cuda.is_current_stream_capturing()
    with tt.cuda.stream(s):
        x.mul_(3)                                 # warm-up
        g.capture_begin()
        assert tt.cuda.is_current_stream_capturing()
        x.mul_(2)
        g.capture_end()
    assert not tt.cuda.is_current_stream_capturing()
    assert to_numpy(x).tolist() == [3.0] * 4
    g.replay()
    assert to_numpy(x).tolist() == [6.0] * 4


def test_whole_training_step_graph_equals_eager():
    """torch's whole-network capture: forward, backward and optimizer step in one graph."""
    tt.manual_seed(0)
    layers = lambda: tt.nn.Sequential(tt.nn.Linear(8, 16), tt.nn.ReLU(), tt.nn.Linear(16, 4)).to("cuda")
    model, ref = layers(), layers()
    ref.load_state_dict(model.state_dict())
    opt, ref_opt = tt.optim.SGD(model.parameters(), lr=0.1), tt.optim.SGD(ref.parameters(), lr=0.1)
    loss_fn = tt.nn.MSELoss()
    static_x, static_y = tt.randn(4, 8, device="cuda"), tt.randn(4, 4, device="cuda")
    s = tt.cuda.Stream()
    with tt.cuda.stream(s):                       # warm-up: the same steps on both models
        for m, o in ((model, opt), (ref, ref_opt)):
            o.zero_grad(set_to_none=True)
            loss_fn(m(static_x), static_y).backward()
            o.step()
    g = tt.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with tt.cuda.graph(g):
        static_loss = loss_fn(model(static_x), static_y)
        static_loss.backward()
        opt.step()
    for _ in range(3):
        x, y = tt.randn(4, 8, device="cuda"), tt.randn(4, 4, device="cuda")
        static_x.copy_(x)
        static_y.copy_(y)
        g.replay()
        ref_opt.zero_grad(set_to_none=True)
        loss = loss_fn(ref(x), y)
        loss.backward()
        ref_opt.step()
        assert static_loss.item() == loss.item()
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_array_equal(to_numpy(p.detach()), to_numpy(q.detach()))


# ----------------------------------------------------------------------------- private pools
def test_capture_allocates_from_a_private_pool_not_reused_outside():
    x = tt.ones(256, device="cuda")
    _warm(lambda: (x * 2) + 1)
    g = tt.cuda.CUDAGraph()
    with tt.cuda.graph(g):
        tmp = x * 2
        tmp_ptr = tmp.data_ptr()
        out = tmp + 1
        del tmp                                   # freed inside the capture: stays in the pool
    # ordinary allocations of the same size never get the pool's freed block
    others = [tt.empty(256, device="cuda") for _ in range(4)]
    assert tmp_ptr not in {t.data_ptr() for t in others}
    tt.cuda.empty_cache()                         # keeps the memory of a live graph
    x.fill_(4.0)
    g.replay()
    assert to_numpy(out).tolist() == [9.0] * 256


def test_freed_blocks_are_reused_within_a_capture_and_by_a_shared_pool():
    x = tt.ones(256, device="cuda")
    _warm(lambda: x * 3)
    g1 = tt.cuda.CUDAGraph()
    with tt.cuda.graph(g1):
        a = x * 2
        a_ptr = a.data_ptr()
        del a
        b = x * 3                                 # same size: the block freed in this capture
    assert b.data_ptr() == a_ptr
    pool = g1.pool()
    assert isinstance(pool, tuple) and len(pool) == 2
    g2 = tt.cuda.CUDAGraph()
    with tt.cuda.graph(g2, pool=pool):
        c = x * 5                                 # b still holds a_ptr: another block of the pool
        d = x + 7
    del c
    g3 = tt.cuda.CUDAGraph()
    handle = tt.cuda.graph_pool_handle()
    assert handle != pool
    with tt.cuda.graph(g3, pool=handle):
        e = x - 1
    assert e.data_ptr() not in (b.data_ptr(), d.data_ptr())
    x.fill_(2.0)
    g1.replay()
    g2.replay()
    assert to_numpy(b).tolist() == [6.0] * 256 and to_numpy(d).tolist() == [9.0] * 256


def test_reset_releases_the_pool():
    x = tt.ones(1024, device="cuda")              # the pool gets a small-pool segment of its own
    _warm(lambda: x * 2)
    gc.collect()
    tt.cuda.empty_cache()
    reserved = tt.cuda.memory_reserved()
    g = tt.cuda.CUDAGraph()
    with tt.cuda.graph(g):
        out = x * 2
    assert tt.cuda.memory_reserved() > reserved
    g.replay()
    assert to_numpy(out)[:3].tolist() == [2.0, 2.0, 2.0]
    del out
    g.reset()
    assert tt.cuda.memory_reserved() == reserved
    with pytest.raises(RuntimeError, match="replay without a preceding successful capture"):
        g.replay()
    with pytest.raises(RuntimeError, match=r"pool\(\) without a preceding successful capture"):
        g.pool()


# ----------------------------------------------------------------------------- refusals
def test_capture_on_the_default_stream_is_refused():
    g = tt.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match=r"CUDA graphs must be captured on a non-default stream. \(However, after "
                                           r"capture, it's ok to replay them on the default stream.\)"):
        g.capture_begin()
    assert not _graphs.CAPTURES


def test_lifecycle_errors():
    g = tt.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="Called CUDAGraph::replay without a preceding successful capture."):
        g.replay()
    with pytest.raises(RuntimeError, match="capture_end without a preceding capture_begin"):
        g.capture_end()
    x = tt.ones(2, device="cuda")
    with tt.cuda.graph(g):
        x.add_(1)
    with pytest.raises(RuntimeError, match="This CUDAGraph instance already owns a captured graph. To capture a new "
                                           "graph, create a new instance."):
        with tt.cuda.graph(g):
            pass
    with pytest.raises(RuntimeError, match="Unknown capture_error_mode"):
        with tt.cuda.graph(tt.cuda.CUDAGraph(), capture_error_mode="loose"):
            pass
    with pytest.warns(UserWarning, match="The CUDA Graph is empty"):
        with tt.cuda.graph(tt.cuda.CUDAGraph()):
            pass


@pytest.mark.parametrize("illegal", ["item", "cpu", "tolist", "synchronize", "stream_sync", "event_sync",
                                     "stream_query", "upload"])
def test_illegal_operations_during_capture_raise_and_invalidate(illegal):
    x = tt.ones(3, device="cuda")
    _warm(lambda: x + 1)
    actions = {
        "item": lambda: x.sum().item(),
        "cpu": lambda: x.cpu(),
        "tolist": lambda: x.tolist(),
        "synchronize": tt.cuda.synchronize,
        "stream_sync": lambda: tt.cuda.current_stream().synchronize(),
        "event_sync": lambda: tt.cuda.Event().synchronize(),
        "stream_query": lambda: tt.cuda.current_stream().query(),
        "upload": lambda: tt.tensor([1.0, 2.0], device="cuda"),
    }
    g = tt.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="operation failed due to a previous error during capture") as info:
        with tt.cuda.graph(g):
            y = x + 1
            actions[illegal]()
    assert CAPTURE_ERROR in str(info.value.__context__)
    assert not _graphs.CAPTURES and not tt.cuda.is_current_stream_capturing()
    with pytest.raises(RuntimeError, match="without a preceding successful capture"):
        g.replay()
    assert to_numpy(x + 1).tolist() == [2.0, 2.0, 2.0]     # the device works on after the failed capture
    del y


def test_random_numbers_during_capture_are_not_supported():
    g = tt.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="previous error during capture") as info:
        with tt.cuda.graph(g):
            tt.rand(4, device="cuda")
    assert isinstance(info.value.__context__, NotImplementedError)
    assert "random numbers" in str(info.value.__context__)


def test_autotuning_during_capture_raises():
    from tritensor.runtime.timing import event_median_ms
    g = tt.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="previous error during capture") as info:
        with tt.cuda.graph(g):
            event_median_ms(lambda: None, warmup=0, rep=1)
    assert CAPTURE_ERROR in str(info.value.__context__)


# ----------------------------------------------------------------------------- make_graphed_callables
def test_make_graphed_callables_module_forward_and_backward_equal_eager():
    tt.manual_seed(1)
    layers = lambda: tt.nn.Sequential(tt.nn.Linear(8, 16), tt.nn.ReLU(), tt.nn.Linear(16, 4)).to("cuda")
    model, ref = layers(), layers()
    ref.load_state_dict(model.state_dict())
    sample = tt.randn(4, 8, device="cuda", requires_grad=True)
    graphed_model = tt.cuda.make_graphed_callables(model, (sample,))
    assert graphed_model is model
    for _ in range(2):
        x = tt.randn(4, 8, device="cuda")
        xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
        model.zero_grad(set_to_none=True)
        ref.zero_grad(set_to_none=True)
        out, expected = graphed_model(xa), ref(xb)
        assert type(out.grad_fn).__name__ == "GraphedBackward"
        np.testing.assert_array_equal(to_numpy(out.detach()), to_numpy(expected.detach()))
        (out * out).sum().backward()
        (expected * expected).sum().backward()
        np.testing.assert_array_equal(to_numpy(xa.grad), to_numpy(xb.grad))
        for p, q in zip(model.parameters(), ref.parameters()):
            np.testing.assert_array_equal(to_numpy(p.grad), to_numpy(q.grad))
    model.eval()                                  # another training mode: the eager forward
    assert model(tt.randn(4, 8, device="cuda")).grad_fn is not None
    assert type(model(tt.randn(4, 8, device="cuda")).grad_fn).__name__ != "GraphedBackward"


def test_make_graphed_callables_functions_hand_computed_gradients():
    f = lambda a, b: (a * a * b, a + b)
    g = lambda c: (c * 3.0).sum()
    a0 = tt.zeros(3, device="cuda", requires_grad=True)
    b0 = tt.zeros(3, device="cuda")                       # no grad: None gradient
    c0 = tt.zeros(3, device="cuda", requires_grad=True)
    gf, gg = tt.cuda.make_graphed_callables((f, g), ((a0, b0), (c0,)))
    a = tt.tensor([1.0, 2.0, -3.0], device="cuda", requires_grad=True)
    b = tt.tensor([0.5, 4.0, 2.0], device="cuda")
    p, q = gf(a, b)
    assert to_numpy(p.detach()).tolist() == [0.5, 16.0, 18.0] and to_numpy(q.detach()).tolist() == [1.5, 6.0, -1.0]
    (p.sum() + gg(q)).backward()                          # d/da: 2ab + 3
    assert to_numpy(a.grad).tolist() == [4.0, 19.0, -9.0]


def test_make_graphed_callables_argument_checks():
    x = tt.zeros(2, device="cuda", requires_grad=True)
    with pytest.raises(AssertionError, match="sample_args for each callable must contain only Tensors"):
        tt.cuda.make_graphed_callables(lambda a, k: a * k, (x, 2.0))
    m = tt.nn.Linear(2, 2).to("cuda")
    m.register_forward_hook(lambda *a: None)
    with pytest.raises(AssertionError, match="Modules must not have hooks registered"):
        tt.cuda.make_graphed_callables(m, (x,))


# ----------------------------------------------------------------------------- tt.compile(mode="reduce-overhead")
def test_graphed_runner_warms_up_captures_and_replays():
    calls = []

    def fn(a, b):
        calls.append(1)
        return (a * b + 1).sum(dim=1)

    run = graphed(fn)
    results = []
    with tt.no_grad():
        for i in range(5):
            a = tt.full((3, 4), float(i), device="cuda")
            b = tt.full((3, 4), 2.0, device="cuda")
            results.append(run(a, b))
    # two eager warm-ups, one side-stream warm-up and the capture, then replays only
    assert len(calls) == 4
    for i, r in enumerate(results):                # earlier results are not overwritten
        assert to_numpy(r).tolist() == [8.0 * i + 4.0] * 3
    assert to_numpy(run(tt.ones(1, 2), tt.ones(1, 2))).tolist() == [4.0]
    assert run.reasons == ["an argument is not a cuda tensor: ran eagerly"]


def test_graphed_runner_with_grad_graphs_forward_and_backward():
    tt.manual_seed(2)
    model = tt.nn.Linear(4, 3).to("cuda")
    ref = tt.nn.Linear(4, 3).to("cuda")
    ref.load_state_dict(model.state_dict())
    run = graphed(model)
    for _ in range(4):
        x = tt.randn(2, 4, device="cuda")
        model.zero_grad(set_to_none=True)
        ref.zero_grad(set_to_none=True)
        run(x).sum().backward()
        ref(x).sum().backward()
        for p, q in zip(model.parameters(), ref.parameters()):
            np.testing.assert_array_equal(to_numpy(p.grad), to_numpy(q.grad))


@emulated_only
def test_replay_after_its_input_died_reads_no_foreign_memory():
    """torch: a graph keeps no tensor alive (the caller must); a replay after the input died
    reads stale values. The emulated device must never read memory given back to the system:
    the graph keeps the host memory of the segments its launches address."""
    import weakref
    from tritensor.runtime.allocator import allocator_for
    gc.collect()
    tt.cuda.empty_cache()
    with tt.cuda.stream(tt.cuda.Stream()):        # a segment of x's own (a stream's own cache)
        x = tt.full((1024,), 3.0, device="cuda")
    alloc = allocator_for(tt.device("cuda", 0))
    segment = weakref.ref(alloc.segment_host_buffer(x.data_ptr()))
    _warm(lambda: x * 2)
    g = tt.cuda.CUDAGraph()
    with tt.cuda.graph(g):
        out = x * 2
    reserved = tt.cuda.memory_reserved()
    del x
    gc.collect()
    tt.cuda.empty_cache()
    assert tt.cuda.memory_reserved() < reserved    # x's segment went back to the device ...
    assert segment() is not None                   # ... but its memory lives while the graph does
    g.replay()
    assert to_numpy(out)[:2].tolist() == [6.0, 6.0]
    g.reset()
    assert segment() is None


# ----------------------------------------------------------------------------- the real device's capture mode
class _FakeCupy:
    """Stands for CuPy's runtime bindings (no GPU here): logs every call into ``log``."""

    class CUDARuntimeError(Exception):
        def __init__(self, status):
            super().__init__(f"status {status}")
            self.status = status

    def __init__(self, log, malloc_status=None):
        import contextlib
        import types
        fail = self.CUDARuntimeError

        def malloc(n):
            log.append(("malloc", n))
            if malloc_status is not None:
                raise fail(malloc_status)
            return 0x7000

        runtime = types.SimpleNamespace(CUDARuntimeError=fail, malloc=malloc,
                                        free=lambda p: log.append(("free", p)),
                                        memGetInfo=lambda: (log.append(("memGetInfo",)), (5, 8))[1])
        self.cuda = types.SimpleNamespace(runtime=runtime, Device=lambda i: contextlib.nullcontext())


def test_real_device_memory_calls_run_in_relaxed_capture_mode_during_a_capture(monkeypatch):
    """CUDA refuses cudaMalloc (and cudaFree, cudaMemGetInfo) in a thread whose capture mode is
    global while a capture runs, and invalidates the capture; torch's allocator switches the
    thread to the relaxed mode around them and back (CUDAStreamCaptureModeGuard). Outside a
    capture no mode call is made."""
    import sys
    from tritensor.runtime.allocator import CudaMemory, _RawOutOfMemory
    log = []
    monkeypatch.setattr(_graphs, "exchange_capture_mode", lambda mode: (log.append(("mode", mode)), 1)[1])
    monkeypatch.setitem(sys.modules, "cupy", _FakeCupy(log))
    raw = CudaMemory(0)
    assert raw.alloc(2 << 20) == (0x7000, None)
    raw.free(0x7000, 2 << 20, None)
    assert log == [("malloc", 2 << 20), ("free", 0x7000)]
    log.clear()
    _graphs.CAPTURES[0xCA11] = object()                       # a capture is underway
    try:
        assert raw.alloc(512) == (0x7000, None)
        raw.free(0x7000, 512, None)
        assert raw.mem_info() == (5, 8)
        # relaxed (2) around each call, then the thread's previous mode (thread-local, 1) back
        assert log == [("mode", 2), ("malloc", 512), ("mode", 1), ("mode", 2), ("free", 0x7000), ("mode", 1),
                       ("mode", 2), ("memGetInfo",), ("mode", 1)]
        log.clear()
        monkeypatch.setitem(sys.modules, "cupy", _FakeCupy(log, malloc_status=2))   # out of memory
        with pytest.raises(_RawOutOfMemory):
            raw.alloc(512)
        assert log == [("mode", 2), ("malloc", 512), ("mode", 1)]                   # the mode is back
    finally:
        _graphs.CAPTURES.pop(0xCA11)


def test_the_capture_mode_exchange_calls_the_driver(monkeypatch):
    """cuThreadExchangeStreamCaptureMode through cuda-bindings: the new mode goes in as the
    driver's enum, the previous one comes back; a failure raises."""
    import enum
    import sys
    import types
    calls = []

    class Mode(enum.IntEnum):
        GLOBAL, THREAD_LOCAL, RELAXED = 0, 1, 2

    class Result(enum.IntEnum):
        CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE = 0, 1

    def exchange(mode):
        calls.append(mode)
        return (Result.CUDA_SUCCESS if isinstance(mode, Mode) else Result.CUDA_ERROR_INVALID_VALUE), Mode.GLOBAL

    driver = types.SimpleNamespace(cuThreadExchangeStreamCaptureMode=exchange, CUstreamCaptureMode=Mode,
                                   CUresult=Result)
    bindings = types.ModuleType("cuda.bindings")
    bindings.driver = driver
    monkeypatch.setitem(sys.modules, "cuda", types.ModuleType("cuda"))
    monkeypatch.setitem(sys.modules, "cuda.bindings", bindings)
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", driver)
    assert _graphs._driver_exchange_capture_mode(2) == 0 and calls == [Mode.RELAXED]
    monkeypatch.setattr(driver, "CUstreamCaptureMode", int)   # not the enum: the driver refuses
    with pytest.raises(RuntimeError, match="cuThreadExchangeStreamCaptureMode failed"):
        _graphs._driver_exchange_capture_mode(2)


def test_record_stream_events_wait_for_the_end_of_the_capture():
    """torch: no event is recorded or queried while a capture runs (cudaEventQuery is illegal
    then); a block other streams used and freed during a capture gets its events when the
    capture ends, and stays out of the pool until they complete."""
    from tritensor.runtime.allocator import allocator_for
    alloc = allocator_for(tt.device("cuda", 0))
    x = tt.ones(256, device="cuda")
    _warm(lambda: x * 2)
    side = tt.cuda.Stream()
    g = tt.cuda.CUDAGraph()
    with tt.cuda.graph(g):
        pending = len(alloc._pending)             # (entering the capture synchronised: none left)
        y = x * 2
        y.record_stream(side)
        ptr = y.data_ptr()
        del y
        gc.collect()
        assert len(alloc._events_deferred) == 1 and len(alloc._pending) == pending
        z = x * 3                                 # the block waits for its event: not reused
        assert z.data_ptr() != ptr
    assert not alloc._events_deferred and len(alloc._pending) == pending + 1
    g.replay()
    assert to_numpy(z).tolist() == [3.0] * 256


def test_a_captured_upload_allocates_its_pinned_buffer_in_relaxed_mode(monkeypatch):
    """A launcher's upload during a capture on a real GPU: the pinned buffer (cudaHostAlloc, unsafe
    in a global-mode capture) is made in the relaxed mode; the copy from it is queued on the
    capturing stream, so it becomes a node of the graph, which keeps the buffer."""
    import sys
    import types
    from tritensor.runtime.streams import current_stream_handle
    log = []

    class Pinned(bytearray):          # CuPy's PinnedMemoryPointer: a buffer, hashed by identity
        ptr = 0xB0F
        __hash__ = object.__hash__

    fake = _FakeCupy(log)
    fake.cuda.alloc_pinned_memory = lambda n: (log.append(("pinned", n)), Pinned(n))[1]
    fake.cuda.runtime.memcpyHostToDevice = 1
    fake.cuda.runtime.memcpyAsync = lambda *a: log.append(("memcpyAsync",) + a)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr(_graphs, "exchange_capture_mode", lambda mode: (log.append(("mode", mode)), 0)[1])
    storage = types.SimpleNamespace(device=tt.device("cuda", 0), host=None, data_ptr=lambda: 0xD0)
    graph = types.SimpleNamespace(_kernels=set())
    handle = current_stream_handle(0)
    _graphs.CAPTURES[handle] = graph
    try:
        assert _graphs.record_upload(storage, np.array([7, 9], dtype=np.int64))
    finally:
        _graphs.CAPTURES.pop(handle)
    assert log == [("mode", 2), ("pinned", 16), ("mode", 0), ("memcpyAsync", 0xD0, 0xB0F, 16, 1, handle)]
    (pinned,) = graph._kernels
    assert np.frombuffer(pinned, np.int64).tolist() == [7, 9]


def test_a_capture_cuda_invalidated_raises_torchs_error_and_lets_its_pool_go(monkeypatch):
    """Real GPU: when CUDA itself invalidated the capture (cudaStreamEndCapture fails), torch's
    error is raised with CUDA's as its cause, and the graph's private pool is let go, as for the
    operations tritensor refuses."""
    import sys
    import types
    from tritensor.runtime import device as _device
    from tritensor.runtime.allocator import allocator_for
    log = []
    fake = _FakeCupy(log)
    invalidated = fake.CUDARuntimeError(901)             # cudaErrorStreamCaptureInvalidated
    fake.cuda.runtime.getDeviceCount = lambda: 1

    def end_capture():
        raise invalidated

    fake.cuda.ExternalStream = lambda handle, index: types.SimpleNamespace(
        begin_capture=lambda mode: log.append(("begin_capture", handle, mode)), end_capture=end_capture)
    s = tt.cuda.Stream()
    g = tt.cuda.CUDAGraph()
    with tt.cuda.stream(s):
        monkeypatch.setitem(sys.modules, "cupy", fake)
        monkeypatch.setattr(_device, "cuda_mode", lambda: "real")
        g.capture_begin()
        pool = g.pool()
        assert pool in allocator_for(tt.device("cuda", 0)).live_pools
        with pytest.raises(RuntimeError, match="operation failed due to a previous error during capture") as info:
            g.capture_end()
    assert info.value.__cause__ is invalidated and log == [("begin_capture", s.cuda_stream, 0)]   # global mode
    assert pool not in allocator_for(tt.device("cuda", 0)).live_pools and not _graphs.CAPTURES
    with pytest.raises(RuntimeError, match="replay without a preceding successful capture"):
        g.replay()
