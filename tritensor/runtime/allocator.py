"""One caching allocator per device.

Freed blocks are kept in per-size free lists and handed out again, so the steady state of a
training loop makes no cudaMalloc/cudaFree calls. Sizes are rounded up to 512 bytes so that
nearby sizes share blocks. The raw memory comes from CuPy's runtime bindings on a real GPU and
from NumPy on the emulated device (whose "device memory" is host memory the interpreter reads).
"""
from __future__ import annotations

import threading
from collections import defaultdict

import numpy as np

ROUND = 512
ALIGN = 256  # what cudaMalloc guarantees; Triton specialises on 16-byte alignment


class Block:
    """A piece of device memory: its address, its size, and (emulated device) the host buffer."""
    __slots__ = ("ptr", "size", "host", "allocator", "__weakref__")

    def __init__(self, ptr, size, host, allocator):
        self.ptr, self.size, self.host, self.allocator = ptr, size, host, allocator


class HostMemory:
    """Aligned host buffers standing in for device memory."""

    def alloc(self, nbytes):
        raw = np.empty(nbytes + ALIGN, dtype=np.uint8)
        start = (-raw.ctypes.data) % ALIGN
        buf = raw[start:start + nbytes]
        return buf.ctypes.data, buf

    def free(self, ptr, host):
        pass  # NumPy frees the buffer with its last reference


class CudaMemory:
    def __init__(self, index):
        self.index = index

    def alloc(self, nbytes):
        import cupy
        with cupy.cuda.Device(self.index):
            return cupy.cuda.runtime.malloc(nbytes), None

    def free(self, ptr, host):
        import cupy
        with cupy.cuda.Device(self.index):
            cupy.cuda.runtime.free(ptr)


class CachingAllocator:
    def __init__(self, raw):
        self._raw = raw
        self._free = defaultdict(list)   # rounded size -> blocks ready for reuse
        self._lock = threading.Lock()
        self.allocated = 0               # bytes in live blocks
        self.reserved = 0                # bytes obtained from the raw allocator
        self.peak_allocated = 0

    def malloc(self, nbytes) -> Block:
        size = max(ROUND, -(-nbytes // ROUND) * ROUND)
        with self._lock:
            bucket = self._free.get(size)
            if bucket:
                block = bucket.pop()
            else:
                block = None
        if block is None:
            try:
                ptr, host = self._raw.alloc(size)
            except Exception:
                # Out of memory: give the cache back and try once more, as torch does.
                self.empty_cache()
                ptr, host = self._raw.alloc(size)
            block = Block(ptr, size, host, self)
            self.reserved += size
        self.allocated += size
        self.peak_allocated = max(self.peak_allocated, self.allocated)
        return block

    def release(self, block: Block):
        """Return a block to the cache (called when the last storage using it dies)."""
        with self._lock:
            self.allocated -= block.size
            self._free[block.size].append(block)

    def empty_cache(self):
        with self._lock:
            blocks = [b for bucket in self._free.values() for b in bucket]
            self._free.clear()
        for b in blocks:
            self._raw.free(b.ptr, b.host)
            self.reserved -= b.size


_allocators: dict = {}


def allocator_for(dev) -> CachingAllocator:
    key = (dev.type, dev.index)
    alloc = _allocators.get(key)
    if alloc is None:
        from .device import cuda_mode
        raw = HostMemory() if cuda_mode() == "emulated" else CudaMemory(dev.index)
        alloc = _allocators[key] = CachingAllocator(raw)
    return alloc
