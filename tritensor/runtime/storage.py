"""Untyped storage: a run of bytes on one device, shared by every view of it."""
from __future__ import annotations

import ctypes
import weakref

import numpy as np

from .allocator import allocator_for
from .device import cuda_mode


class Storage:
    __slots__ = ("device", "nbytes", "_ptr", "host", "_keepalive", "__weakref__")

    def __init__(self, nbytes, device):
        self.device = device
        self.nbytes = int(nbytes)
        self._keepalive = None
        if device.type == "cpu":
            self.host = np.empty(max(self.nbytes, 1), dtype=np.uint8)[: self.nbytes]
            self._ptr = self.host.ctypes.data
        else:
            block = allocator_for(device).malloc(self.nbytes)
            self._ptr = block.ptr
            self.host = None if block.host is None else block.host[: self.nbytes]
            # The block goes back to the cache when the storage dies, not to the driver.
            weakref.finalize(self, block.allocator.release, block)

    @classmethod
    def wrap_host(cls, address, nbytes, owner, device):
        """A CPU storage over memory NumPy owns (zero-copy ``from_numpy``)."""
        self = cls.__new__(cls)
        self.device = device
        self.nbytes = int(nbytes)
        self._ptr = address
        self.host = np.frombuffer((ctypes.c_uint8 * self.nbytes).from_address(address), dtype=np.uint8) \
            if self.nbytes else np.empty(0, np.uint8)
        self._keepalive = owner
        return self

    def data_ptr(self):
        return self._ptr

    def element_view(self, np_dtype, shape, strides, offset):
        """A NumPy array over this host-backed storage (strides and offset in elements)."""
        itemsize = np.dtype(np_dtype).itemsize
        if any(s == 0 for s in shape):
            return np.empty(shape, dtype=np_dtype)   # touches no memory: its offset may be past the end
        return np.ndarray(shape, dtype=np_dtype, buffer=self.host, offset=offset * itemsize,
                          strides=tuple(s * itemsize for s in strides))

    # Host transfers. Host-backed storages (cpu, emulated cuda) copy with NumPy; a real GPU
    # goes through CuPy's runtime bindings.
    def copy_from_host(self, byte_offset, src: np.ndarray):
        src = np.require(src, requirements="C").reshape(-1).view(np.uint8)
        if self.host is not None:
            self.host[byte_offset: byte_offset + src.size] = src
        elif src.size:
            import cupy
            cupy.cuda.runtime.memcpy(self._ptr + byte_offset, src.ctypes.data, src.size,
                                     cupy.cuda.runtime.memcpyHostToDevice)

    def copy_to_host(self, byte_offset, nbytes) -> np.ndarray:
        if self.host is not None:
            return self.host[byte_offset: byte_offset + nbytes].copy()
        out = np.empty(nbytes, dtype=np.uint8)
        if nbytes:
            import cupy
            cupy.cuda.runtime.memcpy(out.ctypes.data, self._ptr + byte_offset, nbytes,
                                     cupy.cuda.runtime.memcpyDeviceToHost)
        return out


def device_is_host_backed(device) -> bool:
    return device.type == "cpu" or cuda_mode() == "emulated"
