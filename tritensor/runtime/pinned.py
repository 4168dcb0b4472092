"""Pinned (page-locked) host memory, for asynchronous host<->device copies.

``Tensor.pin_memory()`` copies a cpu tensor into a pinned storage; ``is_pinned()`` asks whether a
cpu tensor's storage is one. On a real GPU the bytes come from CuPy's pinned memory pool
(``cudaHostAlloc``: the DMA engines read and write them directly, so a copy from or to them can
run while the host goes on). On the emulated device, whose "device memory" is host memory, a
pinned buffer is an ordinary aligned host buffer, tracked the same way, so the API, the
``is_pinned()`` answers and the copy rules are the same.

A pinned storage is a cpu ``Storage`` over the block's memory whose owner (``_keepalive``) is the
``PinnedBlock``; the block goes back to the pool when the last storage using it dies, and
runtime/transfer.py keeps a storage alive while an asynchronous copy still reads or writes it.
"""
from __future__ import annotations

import threading

import numpy as np

from .device import CPU, cuda_mode

ALIGN = 256


class PinnedBlock:
    """Page-locked host bytes: ``ptr``, ``nbytes`` and what owns the memory."""
    __slots__ = ("ptr", "nbytes", "_mem", "__weakref__")

    def __init__(self, nbytes):
        self.nbytes = int(nbytes)
        if cuda_mode() == "real":
            import cupy
            # CuPy's pool calls cudaHostAlloc and reuses freed blocks, as torch's CachingHostAllocator
            self._mem = cupy.cuda.alloc_pinned_memory(max(self.nbytes, 1))
            self.ptr = int(self._mem.ptr)
        else:
            raw = np.empty(self.nbytes + ALIGN, dtype=np.uint8)
            start = (-raw.ctypes.data) % ALIGN
            self._mem = raw
            self.ptr = raw.ctypes.data + start
        with _lock:
            _stats["allocated"] += self.nbytes
            _stats["blocks"] += 1

    def __del__(self):
        try:
            with _lock:
                _stats["allocated"] -= self.nbytes
                _stats["blocks"] -= 1
        except Exception:   # interpreter shutdown
            pass


_lock = threading.Lock()
_stats = {"allocated": 0, "blocks": 0}


def host_memory_stats() -> dict:
    """Bytes and blocks of pinned host memory in use (torch.cuda.host_memory_stats' core counts)."""
    with _lock:
        return {"allocated_bytes.current": _stats["allocated"], "num_blocks.current": _stats["blocks"]}


def pinned_storage(nbytes):
    """A cpu Storage of ``nbytes`` page-locked bytes."""
    from .storage import Storage
    if cuda_mode() is None:
        raise RuntimeError("Cannot access accelerator device when none is available.")
    block = PinnedBlock(nbytes)
    return Storage.wrap_host(block.ptr, block.nbytes, block, CPU)


def is_pinned_storage(storage) -> bool:
    return isinstance(getattr(storage, "_keepalive", None), PinnedBlock)


def empty_pinned(shape, dtype):
    """A contiguous cpu tensor in pinned memory (torch.empty(..., pin_memory=True))."""
    from ..ops.dispatch import contiguous_strides
    from ..tensor import Tensor
    shape = tuple(int(s) for s in shape)
    n = 1
    for s in shape:
        n *= s
    return Tensor._make(pinned_storage(n * dtype.itemsize), shape, contiguous_strides(shape), 0, dtype)
