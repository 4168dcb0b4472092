"""CUDA graphs: capture a stream's work once, replay it with one call (torch.cuda.CUDAGraph).

A capture runs between ``capture_begin()`` and ``capture_end()`` on a non-default stream. While
it runs, the work queued on that stream is *recorded*, not executed; ``replay()`` executes the
recorded work again, on the same memory, as often as asked. So a graph's inputs and outputs are
*static* tensors: new values go in with ``static_input.copy_(x)`` before a replay, results are
read from the tensors the capture produced.

Memory. While a stream captures, the caching allocator serves it from a *private pool* (torch's
MempoolId, a ``(0, n)`` tuple; ``graph_pool_handle()`` makes one to share between graphs): the
pool's blocks are reused only by captures into the same pool, never by ordinary allocations, so
a replay never overwrites memory someone else owns. Blocks freed during the capture are reused
within it, as torch's are. The pool lives as long as a graph (or a handle) uses it; when the
last goes (``reset()`` or garbage collection), its cached segments go back to the device.

What a capture refuses (torch's errors; CUDA's cudaStreamCaptureModeGlobal): synchronising
(``tt.cuda.synchronize()``, ``Stream.synchronize()``, ``Event.synchronize()``), reading device
memory on the host (``.item()``, ``.cpu()``, ``.tolist()``), host -> device uploads, autotuning
(it times on the host) and drawing random numbers (a replay would repeat the same numbers;
torch registers the generator's state with the graph, tritensor does not yet:
``NotImplementedError``). An illegal operation raises ``RuntimeError("CUDA error: operation not
permitted when stream is capturing")`` and invalidates the capture: ``capture_end()`` then
raises too, as cudaStreamEndCapture does.

Two devices, one semantics:

- real GPU: CUDA stream capture through CuPy (``cupy.cuda.ExternalStream.begin_capture`` /
  ``end_capture`` -> ``cupy.cuda.Graph``, ``launch(stream)``). Triton's launches are
  ``cuLaunchKernel`` calls on our stream, so they are captured. The compiled kernels a graph
  launches are kept referenced by the graph. The host calls a capture needs that CUDA counts as
  unsafe (the allocator's cudaMalloc/cudaFree, a pinned buffer's cudaHostAlloc) run in the
  relaxed capture mode (``relaxed_capture_mode``, torch's CUDAStreamCaptureModeGuard); event
  records and queries of ``record_stream`` wait for the end of the capture, as torch's do. (On
  the H200, 2026-11-26, launches were captured and replayed; cudaMalloc invalidated every
  capture that allocated, which this guard fixes: not yet rerun on a GPU.)
- emulated device: runtime/launch.py hands each launch of a capturing stream to ``record``
  instead of running it; ``replay()`` re-runs the recorded launches under the interpreter's
  lock, with the same pointers. Scratch buffers of the launchers come from the allocator (the
  private pool) during a capture, so the pointers stay valid as long as the graph lives.

Warm up before capturing (torch's rule, which ``make_graphed_callables`` follows): the first
launch of a kernel specialisation compiles it, which must not happen inside a capture.

The hooks cost nothing when no capture runs: launch.py and the allocator test the truthiness of
one dict (``CAPTURES``, ``CachingAllocator.capture_pools``) and make no call.
"""
from __future__ import annotations

import itertools
import threading
import warnings

CAPTURES: dict = {}        # capturing stream handle (cudaStream_t) -> CUDAGraph; empty: no capture
_lock = threading.Lock()
_pool_ids = itertools.count(1)
_pool_users: dict = {}      # pool id -> number of graphs and handles using it

CAPTURE_ERROR = "CUDA error: operation not permitted when stream is capturing"
INVALIDATED = "CUDA error: operation failed due to a previous error during capture"


# --------------------------------------------------------------------------- the capture mode
# cudaStreamCaptureMode: how strictly CUDA refuses "unsafe" calls (cudaMalloc, cudaHostAlloc,
# cudaFree, synchronous copies, event queries ...) while a capture runs. A capture begun in the
# global mode (the default, torch's) makes every thread's unsafe call an error that invalidates
# the capture; a thread whose own mode is relaxed may make them. A caching allocator must be able
# to grow during a capture, so torch wraps its cudaMalloc in a guard that sets the calling
# thread's mode to relaxed and puts the previous one back (c10/cuda/CUDAGraphsC10Utils.h,
# CUDAStreamCaptureModeGuard, used by CUDACachingAllocator.cpp while captures are underway).
CAPTURE_MODE_RELAXED = 2


def _driver_exchange_capture_mode(mode: int) -> int:
    """cuThreadExchangeStreamCaptureMode: set the calling thread's capture mode, return the
    previous one. Through cuda-bindings when installed, else the driver library by ctypes (the
    mode is driver state, shared with the runtime that CuPy and Triton use). CuPy has no binding."""
    try:
        from cuda.bindings import driver
    except ImportError:
        driver = None
    if driver is not None:
        err, previous = driver.cuThreadExchangeStreamCaptureMode(driver.CUstreamCaptureMode(mode))
        if err != driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"CUDA error: cuThreadExchangeStreamCaptureMode failed ({err!r})")
        return int(previous)
    import ctypes
    value = ctypes.c_int(mode)
    err = ctypes.CDLL("libcuda.so.1").cuThreadExchangeStreamCaptureMode(ctypes.byref(value))
    if err != 0:
        raise RuntimeError(f"CUDA error: cuThreadExchangeStreamCaptureMode failed (CUresult {err})")
    return value.value


exchange_capture_mode = _driver_exchange_capture_mode     # tests replace it (no GPU here)


class relaxed_capture_mode:
    """``with relaxed_capture_mode():`` around an unsafe CUDA call on the real device while a
    capture may run (torch's CUDAStreamCaptureModeGuard(cudaStreamCaptureModeRelaxed)). Does
    nothing when no capture runs, so no driver call is made outside captures."""
    __slots__ = ("previous",)

    def __enter__(self):
        self.previous = exchange_capture_mode(CAPTURE_MODE_RELAXED) if CAPTURES else None
        return self

    def __exit__(self, *exc):
        if self.previous is not None:
            exchange_capture_mode(self.previous)
        return False


# --------------------------------------------------------------------------- the capture checks
def check_not_capturing(what=None):
    """Raise torch's error if a capture is underway (call only after ``if CAPTURES:``). The
    capture is invalidated, as CUDA invalidates it (global capture mode)."""
    if not CAPTURES:
        return
    for graph in list(CAPTURES.values()):
        graph._invalidated = True
    raise RuntimeError(CAPTURE_ERROR)


def check_stream_not_capturing(handle):
    """Raise torch's error if the stream with cudaStream_t ``handle`` is capturing."""
    graph = CAPTURES.get(handle)
    if graph is not None:
        graph._invalidated = True
        raise RuntimeError(CAPTURE_ERROR)


def check_random_not_capturing(device):
    """A generator of ``device`` hands out Philox counters: refused on a cuda device while a
    capture runs (the cpu generator draws on the host, outside any graph)."""
    if CAPTURES and device.type == "cuda":
        for graph in list(CAPTURES.values()):
            graph._invalidated = True     # the graph would miss the draw
        raise NotImplementedError(
            "drawing random numbers on a cuda device during CUDA graph capture is not supported by tritensor "
            "yet: a replay would repeat the captured numbers (torch registers the generator's seed and offset "
            "with the graph). Draw them outside the capture and copy them into a static tensor.")


def host_reads_refused(device) -> bool:
    """Whether reading ``device``'s memory on the host would be refused now (a capture is
    underway and the device is a cuda device): ops with host-side checks skip them then."""
    return bool(CAPTURES) and device.type == "cuda"


def record(kernel, grid, args, meta) -> bool:
    """Emulated device: keep the launch for the capturing graph instead of running it. False
    when the launch's stream is not capturing (it then runs as usual)."""
    from . import device as _device
    from .streams import current_stream_handle
    index = None
    for a in args:
        if hasattr(a, "device_index") and hasattr(a, "data_ptr"):
            index = a.device_index
            break
    if index is None:
        index = _device.current_device()
    graph = CAPTURES.get(current_stream_handle(index))
    if graph is None:
        return False
    graph._launches.append((kernel, grid, args, dict(meta)))
    # The graph keeps the host memory of every segment its launches address: a tensor the
    # graph reads may die and its segment go back (empty_cache) before a replay; the replay then
    # reads stale values, as on a GPU, but never memory the process no longer owns.
    from .allocator import allocator_for
    alloc = allocator_for(_device.device("cuda", index))
    keep = graph._segment_buffers
    for a in args:
        if hasattr(a, "device_index") and hasattr(a, "data_ptr"):
            buf = alloc.segment_host_buffer(a.data_ptr())
            if buf is not None:
                keep[id(buf)] = buf
    return True


_UPLOAD = object()          # a recorded host -> device copy (emulated graphs)


def record_upload(storage, array) -> bool:
    """A launcher's small host -> device upload (index or pointer tables) during a capture of
    the storage's device's current stream: it becomes a copy *in* the graph, redone at every
    replay (CUDA: a memcpy node from pinned memory the graph keeps; emulated: a recorded write),
    so a later reuse of the buffer inside the capture cannot leave a replay a stale table.
    False when that stream is not capturing (the caller's upload then raises: it would sync)."""
    import numpy as np

    from .streams import current_stream_handle
    handle = current_stream_handle(storage.device.index)
    graph = CAPTURES.get(handle)
    if graph is None:
        return False
    data = np.ascontiguousarray(array).reshape(-1).view(np.uint8).copy()
    if storage.host is not None:
        graph._launches.append((_UPLOAD, storage.host[: data.size], data, None))
        return True
    import cupy
    with relaxed_capture_mode():       # cudaHostAlloc is unsafe in a global-mode capture
        pinned = cupy.cuda.alloc_pinned_memory(max(data.size, 1))
    np.frombuffer(pinned, np.uint8, data.size)[...] = data
    with cupy.cuda.Device(storage.device.index):
        cupy.cuda.runtime.memcpyAsync(storage.data_ptr(), pinned.ptr, data.size,
                                      cupy.cuda.runtime.memcpyHostToDevice, handle)
    graph._kernels.add(pinned)         # the memcpy node reads it at every replay
    return True


def keep_kernel(kernel):
    """Real GPU: a compiled launch during capture; the graph keeps its kernel referenced."""
    from . import device as _device
    from .streams import current_stream_handle
    graph = CAPTURES.get(current_stream_handle(_device.current_device()))
    if graph is not None:
        graph._kernels.add(kernel)


def is_current_stream_capturing() -> bool:
    """True when the current stream of the current device is capturing (torch.cuda)."""
    if not CAPTURES:
        return False
    from . import device as _device
    from .streams import current_stream_handle
    return current_stream_handle(_device.current_device()) in CAPTURES


# --------------------------------------------------------------------------- pools
def graph_pool_handle():
    """A new memory pool id for captures to share (torch.cuda.graph_pool_handle): pass it as
    ``pool=`` to several graphs and their captures reuse each other's freed memory."""
    return (0, next(_pool_ids))


def _use_pool(pool, device_index):
    from . import device as _device
    from .allocator import allocator_for
    alloc = allocator_for(_device.device("cuda", device_index))
    with _lock:
        _pool_users[pool] = _pool_users.get(pool, 0) + 1
        alloc.live_pools.add(pool)
    return alloc


def _release_pool(pool, device_index):
    with _lock:
        n = _pool_users.get(pool, 0) - 1
        if n > 0:
            _pool_users[pool] = n
            return
        _pool_users.pop(pool, None)
    from . import device as _device
    from .allocator import allocator_for
    allocator_for(_device.device("cuda", device_index)).release_pool(pool)


def _check_pool(pool):
    if not (isinstance(pool, tuple) and len(pool) == 2 and all(type(v) is int for v in pool)):
        raise TypeError(f"capture_begin(): pool must be a handle from graph_pool_handle() or CUDAGraph.pool(), "
                        f"got {type(pool).__name__}")
    return pool


# --------------------------------------------------------------------------- the graph
_MODES = ("global", "thread_local", "relaxed")


class CUDAGraph:
    """A captured sequence of launches on one device (torch.cuda.CUDAGraph).

    ``capture_begin(pool=None, capture_error_mode="global")`` starts capturing the current
    stream (which must not be the default stream); ``capture_end()`` ends it; ``replay()`` runs
    the captured work on the current stream; ``reset()`` drops it and lets the private pool go;
    ``pool()`` is the pool id to share with other captures. Usually used through
    ``with tt.cuda.graph(g):``."""

    def __init__(self, keep_graph=False):
        self._keep_graph = bool(keep_graph)
        self._launches = []          # emulated: (kernel, grid, args, meta)
        self._kernels = set()        # real GPU: compiled kernels the graph launches
        self._segment_buffers = {}   # emulated: the host memory its launches address, kept alive
        self._pool = None
        self._device_index = None
        self._stream = None          # the capturing Stream
        self._capturing = False
        self._captured = False
        self._invalidated = False
        self._cupy_graph = None

    # ------------------------------------------------------------------ capture
    def capture_begin(self, pool=None, capture_error_mode="global"):
        from . import device as _device
        from .streams import current_stream
        if self._captured or self._capturing:
            raise RuntimeError("This CUDAGraph instance already owns a captured graph. "
                               "To capture a new graph, create a new instance.")
        if capture_error_mode not in _MODES:
            raise RuntimeError(f"Unknown capture_error_mode. Expected one of {', '.join(map(repr, _MODES))}, "
                               f"got {capture_error_mode!r}")
        index = _device.current_device()
        _device._check_cuda_index(index)
        stream = current_stream(index)
        if stream.cuda_stream == 0:
            raise RuntimeError("CUDA graphs must be captured on a non-default stream. "
                               "(However, after capture, it's ok to replay them on the default stream.)")
        if stream.cuda_stream in CAPTURES:
            raise RuntimeError("CUDA error: operation not permitted when stream is capturing")
        pool = (0, next(_pool_ids)) if pool is None else _check_pool(pool)
        alloc = _use_pool(pool, index)
        self._pool, self._device_index, self._stream = pool, index, stream
        self._invalidated = False
        if _device.cuda_mode() == "real":
            import cupy
            mode = {"global": 0, "thread_local": 1, "relaxed": 2}[capture_error_mode]
            cupy_stream = cupy.cuda.ExternalStream(stream.cuda_stream, index)
            with cupy.cuda.Device(index):
                cupy_stream.begin_capture(mode)
            self._cupy_stream = cupy_stream
        alloc.capture_pools[stream.cuda_stream] = pool
        CAPTURES[stream.cuda_stream] = self
        self._capturing = True

    def capture_end(self):
        from . import device as _device
        from .allocator import allocator_for
        from .streams import current_stream
        if not self._capturing:
            raise RuntimeError("Called CUDAGraph::capture_end without a preceding capture_begin.")
        if current_stream(self._device_index) != self._stream:
            raise RuntimeError("Capture must end on the same stream it began on.")
        handle = self._stream.cuda_stream
        CAPTURES.pop(handle, None)
        alloc = allocator_for(_device.device("cuda", self._device_index))
        alloc.capture_pools.pop(handle, None)
        self._capturing = False
        cupy_graph = cuda_error = None
        try:
            if _device.cuda_mode() == "real":
                import cupy
                with cupy.cuda.Device(self._device_index):
                    try:
                        cupy_graph = self._cupy_stream.end_capture()
                    except cupy.cuda.runtime.CUDARuntimeError as e:
                        # CUDA invalidated the capture (an unsafe call in it: an operation CUDA
                        # refuses, a kernel's first load ...): torch's error follows, CUDA's as
                        # its cause, and the graph lets its pool go as for our own refusals
                        self._invalidated, cuda_error = True, e
                self._cupy_stream = None
        finally:
            if alloc._events_deferred:
                alloc.insert_deferred_events()
        if self._invalidated:
            self._launches = []
            self._kernels = set()
            self._segment_buffers = {}
            self._let_pool_go()
            if cuda_error is not None:
                raise RuntimeError(INVALIDATED) from cuda_error
            raise RuntimeError(INVALIDATED)
        self._cupy_graph = cupy_graph
        self._captured = True
        if not self._launches and not self._kernels:
            warnings.warn("The CUDA Graph is empty. This usually means that the graph was attempted to be "
                          "captured on wrong device or stream.", UserWarning, stacklevel=2)

    # ------------------------------------------------------------------ use
    def replay(self):
        """Run the captured work on the current stream."""
        if not self._captured:
            raise RuntimeError("Called CUDAGraph::replay without a preceding successful capture.")
        from . import device as _device
        from . import device_errors
        device_errors.mark_dirty(self._device_index)   # captured bounds checks run again (runtime/device_errors.py)
        if self._cupy_graph is not None:
            import cupy
            from .streams import current_stream
            with cupy.cuda.Device(self._device_index):
                self._cupy_graph.launch(cupy.cuda.ExternalStream(current_stream(self._device_index).cuda_stream,
                                                                 self._device_index))
            return
        if CAPTURES:
            # replaying inside another capture would have to record the replayed launches
            check_not_capturing()
        import numpy as np
        from .launch import _INTERPRETER_LOCK
        current = _device.current_device()
        if current != self._device_index:
            _device.exchange_device(self._device_index)
        try:
            with _INTERPRETER_LOCK, np.errstate(all="ignore"):
                for kernel, grid, args, meta in self._launches:
                    if kernel is _UPLOAD:
                        grid[...] = args            # (destination bytes, recorded bytes)
                    else:
                        kernel[grid](*args, **meta)
        finally:
            if current != self._device_index:
                _device.exchange_device(current)

    def reset(self):
        """Drop the captured graph; its private pool goes back once no graph uses it."""
        if self._capturing:
            raise RuntimeError("Called CUDAGraph::reset during a capture.")
        self._launches = []
        self._kernels = set()
        self._segment_buffers = {}
        self._cupy_graph = None
        self._captured = False
        self._let_pool_go()

    def pool(self):
        """The id of this graph's memory pool, to share with other captures (``pool=``)."""
        if self._pool is None:
            raise RuntimeError("Called CUDAGraph::pool() without a preceding successful capture.")
        return self._pool

    def instantiate(self):
        if not self._keep_graph:
            raise RuntimeError("instantiate() is intended to be called by the user only when keep_graph=true")
        if not self._captured:
            raise RuntimeError("Called CUDAGraph::instantiate without a preceding successful capture.")

    def enable_debug_mode(self):
        raise NotImplementedError("CUDAGraph.enable_debug_mode: tritensor keeps no debug dump of its graphs")

    def debug_dump(self, debug_path):
        raise NotImplementedError("CUDAGraph.debug_dump: tritensor keeps no debug dump of its graphs")

    @property
    def num_launches(self) -> int:
        """Launches the emulated device recorded (0 on a real GPU, whose graph CUDA keeps)."""
        return len(self._launches)

    def _let_pool_go(self):
        pool, self._pool = self._pool, None
        if pool is not None:
            _release_pool(pool, self._device_index)

    def __del__(self):
        try:
            if self._capturing:
                return
            self._let_pool_go()
        except Exception:      # interpreter shutdown
            pass


# --------------------------------------------------------------------------- the context manager
class graph:
    """``with tt.cuda.graph(g, pool=None, stream=None):`` captures the block into ``g``
    (torch.cuda.graph). The capture runs on ``stream``, default a side stream shared by all
    ``graph`` contexts; on entry the device is synchronised and the cache emptied, as torch does."""
    default_capture_stream = None

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global"):
        from .streams import Stream
        from .streams import stream as stream_ctx
        if stream is None and graph.default_capture_stream is None:
            graph.default_capture_stream = Stream()
        self.pool = () if pool is None else (pool,)
        self.capture_stream = stream if stream is not None else graph.default_capture_stream
        self.stream_ctx = stream_ctx(self.capture_stream)
        self.cuda_graph = cuda_graph
        self.capture_error_mode = capture_error_mode

    def __enter__(self):
        import gc

        from .memory import empty_cache
        from .streams import synchronize
        synchronize()
        gc.collect()
        empty_cache()
        self.stream_ctx.__enter__()
        try:
            self.cuda_graph.capture_begin(*self.pool, capture_error_mode=self.capture_error_mode)
        except BaseException:
            self.stream_ctx.__exit__(None, None, None)
            raise

    def __exit__(self, *exc):
        try:
            self.cuda_graph.capture_end()
        finally:
            self.stream_ctx.__exit__(*exc)
        return False
