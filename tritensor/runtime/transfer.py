"""Byte copies between storages on any two devices, with torch's stream rules
(aten/src/ATen/native/cuda/Copy.cu):

- host -> device runs on the current stream of the destination's device, device -> host on the
  current stream of the source's device. The host then waits for that stream, unless the copy is
  ``non_blocking`` and its host side is pinned memory: then the copy runs while the host goes on,
  and the storages it reads and writes are kept alive until it is done (``pending_copies``).
  A non_blocking copy from pageable memory needs nothing kept: CUDA has staged the bytes by the
  time ``cudaMemcpyAsync`` returns.
- device -> device across two devices runs on the source device's current stream, after the
  destination's current stream has reached the copy (an event), and the destination's stream
  waits for the copy (another event): the copy is ordered on both devices' streams, and the host
  never waits for it.

On the emulated device every copy is a NumPy copy that is done when it returns, so the stream
steps are recorded (events, waits) but nothing is ever pending for long.
"""
from __future__ import annotations

import numpy as np

from . import graphs as _graphs
from . import streams as _streams
from .pinned import is_pinned_storage

_in_flight: list = []   # (event, storages) of asynchronous copies not yet known to be done


def _reap():
    """Forget the copies that have finished (their storages may now be freed)."""
    if _in_flight:
        _in_flight[:] = [(e, keep) for e, keep in _in_flight if not e.query()]


def pending_copies() -> int:
    """How many asynchronous copies may still be running (each keeps its storages alive)."""
    _reap()
    return len(_in_flight)


def _keep_alive_until_done(stream, *storages):
    _reap()
    event = _streams.Event()
    event.record(stream)
    _in_flight.append((event, storages))


def _host_bytes(storage, offset, nbytes):
    return storage.host[offset: offset + nbytes]


def copy_bytes(dst, dst_offset, src, src_offset, nbytes, non_blocking=False):
    """dst[dst_offset:+nbytes] = src[src_offset:+nbytes] for storages on any devices."""
    if nbytes == 0:
        return
    dst_cuda, src_cuda = dst.device.type == "cuda", src.device.type == "cuda"
    if _graphs.CAPTURES and (dst_cuda or src_cuda):
        _graphs.check_not_capturing()     # a transfer syncs the host: not during a CUDA graph capture
    if not dst_cuda and not src_cuda:
        _host_bytes(dst, dst_offset, nbytes)[...] = _host_bytes(src, src_offset, nbytes)
    elif not src_cuda:
        _to_device(dst, dst_offset, src, src_offset, nbytes, non_blocking)
    elif not dst_cuda:
        _to_host(dst, dst_offset, src, src_offset, nbytes, non_blocking)
    else:
        _between_devices(dst, dst_offset, src, src_offset, nbytes)


def _memcpy_async(dst_ptr, src_ptr, nbytes, kind, device_index, stream):
    import cupy
    with cupy.cuda.Device(device_index):
        cupy.cuda.runtime.memcpyAsync(dst_ptr, src_ptr, nbytes, kind, stream.cuda_stream)


def _to_device(dst, dst_offset, src, src_offset, nbytes, non_blocking):
    stream = _streams.current_stream(dst.device.index)
    if dst.host is not None:       # emulated device: host memory
        _host_bytes(dst, dst_offset, nbytes)[...] = _host_bytes(src, src_offset, nbytes)
    else:
        import cupy
        _memcpy_async(dst.data_ptr() + dst_offset, src.data_ptr() + src_offset, nbytes,
                      cupy.cuda.runtime.memcpyHostToDevice, dst.device.index, stream)
    _finish(stream, non_blocking, src, dst, src)


def _to_host(dst, dst_offset, src, src_offset, nbytes, non_blocking):
    stream = _streams.current_stream(src.device.index)
    if src.host is not None:
        _host_bytes(dst, dst_offset, nbytes)[...] = _host_bytes(src, src_offset, nbytes)
    else:
        import cupy
        _memcpy_async(dst.data_ptr() + dst_offset, src.data_ptr() + src_offset, nbytes,
                      cupy.cuda.runtime.memcpyDeviceToHost, src.device.index, stream)
    _finish(stream, non_blocking, dst, dst, src)


def _finish(stream, non_blocking, host_side, *storages):
    """The host waits for the copy unless it is non_blocking. A non_blocking copy from or to
    pinned memory runs on while the host goes on (its storages are kept until it is done); from
    or to pageable memory CUDA itself returns only once the host bytes were read or written."""
    if not non_blocking:
        stream.synchronize()
    elif is_pinned_storage(host_side):
        _keep_alive_until_done(stream, *storages)


def _between_devices(dst, dst_offset, src, src_offset, nbytes):
    src_index, dst_index = src.device.index, dst.device.index
    copy_stream = _streams.current_stream(src_index)
    dst_stream = _streams.current_stream(dst_index)
    crosses = src_index != dst_index
    if crosses:
        # the copy may overwrite dst only after the work already queued on dst's stream
        copy_stream.wait_event(dst_stream.record_event())
    if src.host is not None:
        _host_bytes(dst, dst_offset, nbytes)[...] = _host_bytes(src, src_offset, nbytes)
    else:
        import cupy
        with cupy.cuda.Device(src_index):
            cupy.cuda.runtime.memcpyPeerAsync(dst.data_ptr() + dst_offset, dst_index, src.data_ptr() + src_offset,
                                              src_index, nbytes, copy_stream.cuda_stream)
    if crosses:
        # later work on dst's device sees the copied bytes
        dst_stream.wait_event(copy_stream.record_event())
    if src.host is None:
        _keep_alive_until_done(copy_stream, dst, src)


# ---------------------------------------------------------------------- synchronous host I/O
def read_device(storage, offset, nbytes) -> np.ndarray:
    """A host copy of a real-GPU storage's bytes, read on the current stream (waits for it)."""
    out = np.empty(nbytes, dtype=np.uint8)
    if nbytes:
        import cupy
        stream = _streams.current_stream(storage.device.index)
        _memcpy_async(out.ctypes.data, storage.data_ptr() + offset, nbytes, cupy.cuda.runtime.memcpyDeviceToHost,
                      storage.device.index, stream)
        stream.synchronize()
    return out


def write_device(storage, offset, src: np.ndarray):
    """Write host bytes into a real-GPU storage on the current stream (waits for it)."""
    if src.size:
        import cupy
        stream = _streams.current_stream(storage.device.index)
        _memcpy_async(storage.data_ptr() + offset, src.ctypes.data, src.size, cupy.cuda.runtime.memcpyHostToDevice,
                      storage.device.index, stream)
        stream.synchronize()

