"""CUDA streams and events, with torch.cuda's API and ordering rules.

Every device has a legacy default stream (handle 0) and a *current* stream per host thread
(torch's rule: ``set_stream`` and ``with tt.cuda.stream(s):`` change it for the calling thread).
Every kernel tritensor launches goes to the current stream of its tensors' device
(runtime/launch.py hands it to Triton), and so do copies.

``Stream()`` does not create a stream: as torch does, it hands out the streams of a pool, 32 per
priority level per device (``STREAMS_PER_POOL``), round-robin, made on the device's first
``Stream()`` and never destroyed. So a program that makes a new stream per iteration uses at most
32 streams a level, and the caching allocator, which keeps the blocks freed on a stream for that
stream, keeps at most that many per-stream caches (a new CUDA stream per iteration grew reserved
memory by a segment each time). Like torch, the 1st and 33rd streams of a level are the same
stream (equal, one queue). Levels: priorities 0, -1, ... down to the device's greatest priority
but at most ``MAX_STREAM_PRIORITIES`` of them (torch's max_compile_time_stream_priorities), which
is the range ``Stream.priority_range()`` reports; a priority outside it is clamped.

On a real GPU the pool's streams are CUDA streams made with ``cudaStreamCreateWithPriority``
(non-blocking, as torch's) and an ``Event`` is a CUDA event, both through CuPy's runtime
bindings. On the emulated device the interpreter runs each kernel to completion when it
is launched, so all recorded work is always done: ``query()`` is true, ``synchronize()`` returns
at once, and ``Event.elapsed_time`` is the host time between the two ``record`` calls. The API,
its argument checks and its errors are the same on both.
"""
from __future__ import annotations

import functools
import itertools
import threading
import time
import weakref

from . import device as _device
from . import device_errors as _errors
from . import graphs as _graphs

_NOT_READY = 600          # cudaErrorNotReady: the queried work is still running
_STREAM_NON_BLOCKING = 1  # cudaStreamNonBlocking: torch's streams do not sync with stream 0
_EVENT_BLOCKING_SYNC, _EVENT_DISABLE_TIMING, _EVENT_INTERPROCESS = 1, 2, 4
# Priorities of the emulated device: what an H100 reports (cudaDeviceGetStreamPriorityRange)
_EMULATED_PRIORITY_RANGE = (0, -5)   # (least, greatest): lower numbers run first

_emulated_handles = itertools.count(0x1000, 0x10)   # fake cudaStream_t values, never 0
_tls = threading.local()


def _real() -> bool:
    return _device.cuda_mode() == "real"


def _index_of(device) -> int:
    """A CUDA device index from None (current), an int, a string or a tt.device."""
    if device is None:
        _device._check_cuda_index(_device.current_device())
        return _device.current_device()
    if isinstance(device, int) and not isinstance(device, bool):
        idx = device
    else:
        d = device if isinstance(device, _device.device) else _device.device(device)
        if d.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {d}")
        idx = _device.current_device() if d.index is None else d.index
    _device._check_cuda_index(idx)
    return idx


def _check(status, what):
    if status not in (0, _NOT_READY):
        raise RuntimeError(f"CUDA error: {what} failed with status {status}")
    return status == 0


class Stream:
    """A queue of work on one device (torch.cuda.Stream).

    ``Stream(device=None, priority=0)`` is the next stream of ``device``'s pool (default: the
    current device) for that priority (see the module docstring). Lower priority numbers run
    first; values outside ``priority_range()`` are clamped to it, as torch does.
    """
    __slots__ = ("device", "device_index", "cuda_stream", "priority", "__weakref__")

    def __init__(self, device=None, priority=0, **kwargs):
        stream_ptr = kwargs.pop("_stream_ptr", None)
        if kwargs:
            raise TypeError(f"Stream() got an unexpected keyword argument '{next(iter(kwargs))}'")
        idx = _index_of(device)
        self.device_index = idx
        self.device = _device.device("cuda", idx)
        if stream_ptr is not None:              # the default stream, or an external one
            self.cuda_stream = int(stream_ptr)
            self.priority = 0
            if self.cuda_stream and _real():
                import cupy
                with cupy.cuda.Device(idx):
                    self.priority = cupy.cuda.runtime.streamGetPriority(self.cuda_stream)
            return
        if not isinstance(priority, int) or isinstance(priority, bool):
            raise TypeError(f"Stream(): argument 'priority' must be int, not {type(priority).__name__}")
        self.cuda_stream, self.priority = _pool_of(idx).take(priority)

    @staticmethod
    def priority_range():
        """(least, greatest) priority of the current device's pool streams (torch's order): the
        device's range, cut to MAX_STREAM_PRIORITIES levels as torch cuts it."""
        least, greatest = _device_priority_range(_device.current_device())
        return least, max(least - MAX_STREAM_PRIORITIES + 1, greatest)

    # ------------------------------------------------------------------ ordering
    def wait_event(self, event):
        """Make all future work on this stream wait for ``event`` (does not block the host)."""
        event.wait(self)

    def wait_stream(self, stream):
        """Make all future work on this stream wait for the work queued on ``stream`` so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        """Record ``event`` (a new one if None) on this stream and return it."""
        if event is None:
            event = Event()
        event.record(self)
        return event

    def query(self) -> bool:
        """True when all work queued on this stream has completed."""
        if _graphs.CAPTURES:
            _graphs.check_stream_not_capturing(self.cuda_stream)
        if not _real():
            return True
        import cupy
        with cupy.cuda.Device(self.device_index):
            return _check(cupy.cuda.runtime.streamQuery(self.cuda_stream), "cudaStreamQuery")

    def synchronize(self):
        """Block the host until all work queued on this stream has completed."""
        if _graphs.CAPTURES:          # CUDA graphs: no sync during a capture (runtime/graphs.py)
            _graphs.check_not_capturing()
        if _real():
            import cupy
            with cupy.cuda.Device(self.device_index):
                cupy.cuda.runtime.streamSynchronize(self.cuda_stream)
        _errors.sync_point(self.device_index, self.cuda_stream)   # a deferred device-side assert surfaces here

    # ------------------------------------------------------------------ identity
    def __eq__(self, other):
        return isinstance(other, Stream) and self.device == other.device and self.cuda_stream == other.cuda_stream

    def __hash__(self):
        return hash((self.device, self.cuda_stream))

    def __repr__(self):
        return f"<tritensor.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"

    # ``with s:`` is ``with tt.cuda.stream(s):`` (torch.Stream supports it too)
    def __enter__(self):
        ctx = stream(self)
        _ctx_stack().append(ctx)
        ctx.__enter__()
        return self

    def __exit__(self, *exc):
        _ctx_stack().pop().__exit__(*exc)
        return False


class ExternalStream(Stream):
    """A stream allocated elsewhere (e.g. by CuPy), given by its ``cudaStream_t`` value;
    tritensor never destroys it (torch.cuda.ExternalStream)."""

    def __init__(self, stream_ptr, device=None):
        super().__init__(device, _stream_ptr=stream_ptr)


# ---------------------------------------------------------------------- the stream pool
STREAMS_PER_POOL = 32        # torch's kStreamsPerPool
MAX_STREAM_PRIORITIES = 4    # torch's max_compile_time_stream_priorities: pools 0, -1, -2, -3


class _StreamPool:
    """One device's pool streams: ``STREAMS_PER_POOL`` per priority level (level i holds streams
    of priority -i), handed out round-robin by a counter per level (torch's getStreamFromPool).
    ``next`` on an itertools.count is atomic, so threads taking streams at once need no lock."""
    __slots__ = ("handles", "priorities", "counters")

    def __init__(self, idx):
        least, greatest = _device_priority_range(idx)
        levels = min(least - greatest + 1, MAX_STREAM_PRIORITIES)
        self.handles, self.priorities = [], []
        for level in range(levels):
            made = [_new_stream(idx, least - level) for _ in range(STREAMS_PER_POOL)]
            self.handles.append(tuple(h for h, _ in made))
            self.priorities.append(made[0][1])
        self.counters = [itertools.count() for _ in range(levels)]

    def take(self, priority):
        """(handle, priority) of the next stream of the level ``priority`` falls in (clamped)."""
        level = min(max(-priority, 0), len(self.handles) - 1)
        return self.handles[level][next(self.counters[level]) % STREAMS_PER_POOL], self.priorities[level]


_pools: dict = {}
_pools_lock = threading.Lock()


def _pool_of(idx) -> _StreamPool:
    pool = _pools.get(idx)
    if pool is None:
        with _pools_lock:        # one pool per device, whichever thread asks first
            pool = _pools.get(idx)
            if pool is None:
                pool = _pools[idx] = _StreamPool(idx)
    return pool


def _new_stream(idx, priority):
    """A pool stream: (cudaStream_t handle, its priority), never destroyed."""
    if _real():
        import cupy
        with cupy.cuda.Device(idx):
            handle = cupy.cuda.runtime.streamCreateWithPriority(_STREAM_NON_BLOCKING, priority)
            return handle, cupy.cuda.runtime.streamGetPriority(handle)
    least, greatest = _EMULATED_PRIORITY_RANGE
    return next(_emulated_handles), min(least, max(greatest, priority))


def _device_priority_range(idx):
    """The device's own (least, greatest) stream priorities (cudaDeviceGetStreamPriorityRange)."""
    return _real_priority_range(idx) if _real() else _EMULATED_PRIORITY_RANGE


@functools.lru_cache(maxsize=None)
def _real_priority_range(idx):
    """CUDA clamps a priority to the device's range, so two streams made with far-out
    priorities read back the range (CuPy binds no cudaDeviceGetStreamPriorityRange)."""
    import cupy
    rt = cupy.cuda.runtime
    ends = []
    with cupy.cuda.Device(idx):
        for priority in (1 << 20, -(1 << 20)):
            handle = rt.streamCreateWithPriority(_STREAM_NON_BLOCKING, priority)
            ends.append(rt.streamGetPriority(handle))
            rt.streamDestroy(handle)
    return tuple(ends)


def _ctx_stack():
    stack = getattr(_tls, "stream_ctx", None)
    if stack is None:
        stack = _tls.stream_ctx = []
    return stack


# ---------------------------------------------------------------------- current and default
_defaults: dict = {}


def default_stream(device=None) -> Stream:
    """The device's legacy default stream (``cuda_stream == 0``)."""
    idx = _index_of(device)
    s = _defaults.get(idx)
    if s is None:     # setdefault: threads racing here all get one object
        s = _defaults.setdefault(idx, Stream(idx, _stream_ptr=0))
    return s


def _current_streams() -> dict:
    streams = getattr(_tls, "streams", None)
    if streams is None:
        streams = _tls.streams = {}
    return streams


def current_stream(device=None) -> Stream:
    """The calling thread's current stream on ``device`` (default: the current device)."""
    idx = _index_of(device)
    s = _current_streams().get(idx)
    return default_stream(idx) if s is None else s


def current_stream_handle(index: int) -> int:
    """``current_stream(index).cuda_stream`` for the launch path: no argument checks (and the
    thread's stream table read inline: this runs on every launch)."""
    streams = getattr(_tls, "streams", None)
    s = None if streams is None else streams.get(index)
    return 0 if s is None else s.cuda_stream


def set_stream(stream_):
    """Make ``stream_`` the current stream of its device, and its device the current device
    (torch.cuda.set_stream). None does nothing."""
    if stream_ is None:
        return
    if _device.current_device() != stream_.device_index:
        _device.set_device(stream_.device_index)
    _current_streams()[stream_.device_index] = stream_


class stream:
    """``with tt.cuda.stream(s):`` runs the block with ``s`` as the current stream (and its device
    as the current device), restoring both afterwards (torch.cuda.StreamContext). None does
    nothing."""

    def __init__(self, stream_):
        self.stream = stream_
        self._src_prev = self._dst_prev = None

    def __enter__(self):
        s = self.stream
        if s is None:
            return s
        self._src_prev = current_stream(None)
        if self._src_prev.device != s.device:
            self._dst_prev = current_stream(s.device_index)
        set_stream(s)
        return s

    def __exit__(self, *exc):
        s = self.stream
        if s is None:
            return False
        if self._dst_prev is not None:
            set_stream(self._dst_prev)
        set_stream(self._src_prev)
        return False


StreamContext = stream


# ---------------------------------------------------------------------- events
class Event:
    """A marker in a stream's work (torch.cuda.Event): ``record`` it, then ``wait`` on it from
    another stream, ``query``/``synchronize`` it from the host, or time work between two events.

    The CUDA event is created lazily by the first ``record``, on the recording stream's device.
    """
    __slots__ = ("enable_timing", "blocking", "interprocess", "device_index", "cuda_event",
                 "_host_time", "__weakref__")

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.enable_timing = bool(enable_timing)
        self.blocking = bool(blocking)
        self.interprocess = bool(interprocess)
        if self.interprocess and self.enable_timing:
            raise ValueError("Interprocess events cannot be created with enable_timing=True")
        self.device_index = None      # set by the first record
        self.cuda_event = 0           # 0 until the first record (torch: created lazily)
        self._host_time = None        # emulated device: perf_counter() at record

    @property
    def device(self):
        return None if self.device_index is None else _device.device("cuda", self.device_index)

    def _create(self, idx):
        self.device_index = idx
        if _real():
            import cupy
            flags = (_EVENT_BLOCKING_SYNC if self.blocking else 0) | \
                (0 if self.enable_timing else _EVENT_DISABLE_TIMING) | \
                (_EVENT_INTERPROCESS if self.interprocess else 0)
            with cupy.cuda.Device(idx):
                self.cuda_event = cupy.cuda.runtime.eventCreateWithFlags(flags)
            weakref.finalize(self, _destroy_event, idx, self.cuda_event)
        else:
            self.cuda_event = next(_emulated_handles)

    def record(self, stream=None):
        """Record the event on ``stream`` (default: the current stream)."""
        if stream is None:
            stream = current_stream()
        if self.device_index is None:
            self._create(stream.device_index)
        elif self.device_index != stream.device_index:
            raise RuntimeError(f"Event device {self.device_index} does not match recording stream's device "
                               f"{stream.device_index}.")
        if _real():
            import cupy
            with cupy.cuda.Device(stream.device_index):
                cupy.cuda.runtime.eventRecord(self.cuda_event, stream.cuda_stream)
        else:
            self._host_time = time.perf_counter()   # all earlier work is already done

    def wait(self, stream=None):
        """Make all future work on ``stream`` (default: current) wait for this event. An event
        never recorded is a no-op, as in torch."""
        if stream is None:
            stream = current_stream()
        if self.device_index is None:
            return
        if _real():
            import cupy
            with cupy.cuda.Device(stream.device_index):
                cupy.cuda.runtime.streamWaitEvent(stream.cuda_stream, self.cuda_event, 0)

    def query(self) -> bool:
        """True when the work captured by the last record is done (or it was never recorded)."""
        if self.device_index is None or not _real():
            return True
        import cupy
        with cupy.cuda.Device(self.device_index):
            return _check(cupy.cuda.runtime.eventQuery(self.cuda_event), "cudaEventQuery")

    def synchronize(self):
        """Block the host until the work captured by the last record is done."""
        if _graphs.CAPTURES:
            _graphs.check_not_capturing()
        if self.device_index is None:
            return
        if _real():
            import cupy
            with cupy.cuda.Device(self.device_index):
                cupy.cuda.runtime.eventSynchronize(self.cuda_event)
        _errors.sync_point(self.device_index, -1)     # a deferred device-side assert surfaces here

    def elapsed_time(self, end_event) -> float:
        """Milliseconds between this event's record and ``end_event``'s (after both completed)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        if self.device_index is None or end_event.device_index is None:
            raise ValueError("Both events must be recorded before calculating elapsed time.")
        if _real():
            import cupy
            with cupy.cuda.Device(self.device_index):
                return float(cupy.cuda.runtime.eventElapsedTime(self.cuda_event, end_event.cuda_event))
        return (end_event._host_time - self._host_time) * 1000.0

    def ipc_handle(self):
        raise NotImplementedError("tritensor does not share CUDA events between processes (ipc_handle)")

    @classmethod
    def from_ipc_handle(cls, device, handle):
        raise NotImplementedError("tritensor does not share CUDA events between processes (from_ipc_handle)")

    def __repr__(self):
        if self.device_index is None:
            return "<tritensor.cuda.Event uninitialized>"
        return f"<tritensor.cuda.Event {self.cuda_event:#x}>"


def _destroy_event(idx, handle):
    try:
        import cupy
        with cupy.cuda.Device(idx):
            cupy.cuda.runtime.eventDestroy(handle)
    except Exception:   # interpreter shutdown: nothing left to free
        pass


def synchronize(device=None):
    """Wait for all work on every stream of ``device`` (default: the current device)."""
    idx = _index_of(device)
    if _graphs.CAPTURES:
        _graphs.check_not_capturing()
    if _real():
        import cupy
        with cupy.cuda.Device(idx):
            cupy.cuda.runtime.deviceSynchronize()
    from .transfer import pending_copies
    pending_copies()          # finished asynchronous copies let go of their storages now
    _errors.sync_point(idx)   # a deferred device-side assert surfaces here


__all__ = ["Stream", "ExternalStream", "Event", "current_stream", "default_stream", "set_stream",
           "stream", "StreamContext", "synchronize", "current_stream_handle"]
