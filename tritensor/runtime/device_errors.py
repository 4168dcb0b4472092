"""Deferred device errors: torch's device-side asserts, without a host synchronisation.

torch checks the indices of its cuda indexing kernels on the device (``CUDA_KERNEL_ASSERT``): the
op returns at once, and a bad index surfaces later, at whatever call next waits for the device,
as ``RuntimeError: CUDA error: device-side assert triggered``. tritensor does the same on the
cuda device (real and emulated alike):

- Each cuda device has one *error record* in device memory: two int64 words, (check id, an
  offending value), allocated once, outside the caching allocator (it never shows in the memory
  statistics). A bounds-check kernel (kernels/index.py ``deferred_bounds_kernel``) that finds a
  bad value claims the record with an atomic compare-and-swap on word 0 (the first failing check
  wins, later ones leave it alone) and stores the value in word 1.
- The host keeps what it needs to word the error: each distinct check (its message, with the
  dim and size filled in, and its exception type when CUDA_LAUNCH_BLOCKING=1) is interned once
  and named by a small integer, the check id. A device with checks queued since they were
  waited for is *dirty*, with the streams they were queued on: a clean device costs one dict
  test at a sync point, nothing more. A wait for one stream clears that stream's mark only (a
  check queued on another stream may not have run yet); a device-wide wait clears them all, and
  so does any wait on the emulated device, whose launches are done when they return.
- Every synchronisation point that waits for the device anyway calls ``sync_point``:
  ``Tensor.item()/tolist()/numpy()/cpu()``, copies to the host (their stream wait), the launchers'
  small read-backs (``download``), ``tt.cuda.synchronize()``, ``Stream.synchronize()`` and
  ``Event.synchronize()``. For a dirty device it reads the record (16 bytes, after the wait
  the caller made, on a stream with nothing else queued: no extra synchronisation), clears
  the marks of what was waited for, and when the record is set, zeroes it and raises torch's
  RuntimeError: the assert line, the op's own message with the offending value ("index 7 is
  out of bounds for dimension 0 with size 5", as the cpu says) and torch's hint lines. Unlike
  torch's, the device stays usable afterwards.
- ``CUDA_LAUNCH_BLOCKING=1`` (read once, at the first launch: runtime/launch.py) keeps the
  synchronous check: the op reads the check's count back and raises the cpu's error at the call.

The kernels behind a deferred check never read or write outside a tensor's storage: the check
hands the op a clamped copy of the index (each value forced into range; it shares the index's
version counter, so an in-place change of the index still fails a backward that reads it),
whose bad lanes give an unspecified result, never one from outside the storage. On a clean
run the copy costs one write of the index beside the check's read of it, in the same kernel.
A CUDA graph replay runs its captured checks again (graphs.py marks the device dirty).
Launchers that read indices on the host anyway (the scatter family's grouping by target) sync
there, so their deferred error surfaces inside the same call.
"""
from __future__ import annotations

import threading

import numpy as np

ASSERT_LINE = "CUDA error: device-side assert triggered"
HINT = ("CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below "
        "might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1")

DIRTY: dict = {}                # device index -> handles of the streams with checks not yet waited for
SYNCS = [0]                     # sync points reached on cuda devices (bench: syncs per training step)
_records: dict = {}             # device index -> _Record
_checks: list = [None]          # check id -> Check (0: the record is clear)
_check_ids: dict = {}
_lock = threading.Lock()


class Check:
    """One kind of bounds check: its message (``{index}`` stands for the offending value) and
    the exception the synchronous check raises."""
    __slots__ = ("message", "error", "id")

    def __init__(self, message, error):
        self.message = message
        self.error = error
        self.id = 0

    def exception(self, value):
        """The synchronous check's exception (the cpu, CUDA_LAUNCH_BLOCKING=1)."""
        return self.error(self.message.format(index=value))


def check(message, error=IndexError) -> Check:
    """The interned Check for ``message`` (dims and sizes already in it) and ``error``."""
    key = (message, error)
    c = _check_ids.get(key)
    if c is None:
        with _lock:
            c = _check_ids.get(key)
            if c is None:
                c = Check(message, error)
                c.id = len(_checks)
                _checks.append(c)
                _check_ids[key] = c
    return c


def deferred() -> bool:
    """Whether cuda bounds checks are deferred (not under CUDA_LAUNCH_BLOCKING=1)."""
    from . import launch
    if launch._state["mode"] is None:
        launch._first_launch()
    return not launch._state["blocking"]


class _RecordStorage:
    """16 bytes of device memory that live as long as the process (not the caching allocator's:
    the record is no tensor's and must not count in memory_allocated). On a real GPU it is read
    and cleared on a stream of its own (non-blocking, nothing else queued on it), so a read
    never waits for work the caller did not wait for: no extra synchronisation."""
    __slots__ = ("device", "host", "_ptr", "_keep", "_stream")

    def __init__(self, device):
        self.device = device
        from .device import cuda_mode
        if cuda_mode() == "real":
            import cupy
            with cupy.cuda.Device(device.index):
                self._stream = cupy.cuda.Stream(non_blocking=True)
                with self._stream:
                    self._keep = cupy.zeros(2, dtype=cupy.int64)      # kept for the process's life
                self._stream.synchronize()                             # zeroed before any check runs
                self._ptr = self._keep.data.ptr
            self.host = None
        else:
            raw = np.zeros(16 + 64, dtype=np.uint8)
            start = (-raw.ctypes.data) % 64
            self._keep = raw
            self._stream = None
            self.host = raw[start:start + 16]
            self._ptr = raw.ctypes.data + start

    def data_ptr(self):
        return self._ptr

    def read(self):
        if self.host is not None:
            return self.host.view(np.int64).copy()
        import cupy
        with cupy.cuda.Device(self.device.index):
            out = self._keep.get(stream=self._stream)
            self._stream.synchronize()
        return out

    def clear(self):
        if self.host is not None:
            self.host[:] = 0
            return
        import cupy
        with cupy.cuda.Device(self.device.index):
            with self._stream:
                self._keep.fill(0)
            self._stream.synchronize()


class _Record:
    """The record as a kernel argument (runtime/launch.py ``pointer``): int64 words."""
    __slots__ = ("_storage", "_offset", "dtype", "shape")

    def __init__(self, device):
        from ..dtypes import int64
        self._storage = _RecordStorage(device)
        self._offset = 0
        self.dtype = int64
        self.shape = (2,)


def record_for(device):
    """``device``'s error record (made on first use), marked dirty on the current stream: a
    check is being queued there."""
    from .streams import current_stream_handle
    index = device.index
    r = _records.get(index)
    if r is None:
        with _lock:
            r = _records.get(index)
            if r is None:
                r = _records[index] = _Record(device)
    DIRTY.setdefault(index, set()).add(current_stream_handle(index))
    return r


def _done_on_return() -> bool:
    """The emulated device: every launch has completed when it returns."""
    from .device import cuda_mode
    return cuda_mode() != "real"


def sync_point(index=None, stream=None):
    """The host has waited for cuda device ``index`` (None: every device): for all its work
    (``stream`` None), for one stream (its handle), or for part of one (``stream`` -1: an
    event). Raise the deferred error its kernels recorded, if any."""
    SYNCS[0] += 1
    if not DIRTY:
        return
    indices = list(DIRTY) if index is None else ([index] if index in DIRTY else [])
    for i in indices:
        if stream is None or _done_on_return():
            DIRTY.pop(i, None)
        else:
            pending = DIRTY.get(i, set())
            pending.discard(stream)
            if not pending:
                DIRTY.pop(i, None)
        r = _records[i]._storage
        check_id, value = (int(w) for w in r.read())
        if check_id:
            r.clear()
            c = _checks[check_id] if check_id < len(_checks) else None
            detail = c.message.format(index=value) if c is not None else f"index {value} is out of bounds"
            raise RuntimeError(f"{ASSERT_LINE}\n{detail}\n{HINT}")


def mark_dirty(index):
    """A replayed CUDA graph may run captured checks: the next sync point reads the record."""
    if index in _records:
        from .streams import current_stream_handle
        DIRTY.setdefault(index, set()).add(current_stream_handle(index))
