"""Untyped storage: a run of bytes on one device, shared by every view of it."""
from __future__ import annotations

import ctypes

import numpy as np

from .allocator import allocator_for
from .device import cuda_mode
from .streams import current_stream_handle


class _BlockOwner:
    """Gives an allocator's block back to its cache when the storage holding it dies. Only
    device storages hold one: a cpu storage (NumPy memory) has no ``__del__`` to run, one Python
    call less per tensor that dies (issue 14)."""
    __slots__ = ("block",)

    def __init__(self, block):
        self.block = block

    def __del__(self):
        # The block goes back to the cache when the storage dies, not to the driver.
        block = self.block
        if block is not None:
            self.block = None
            try:
                block.allocator.free(block)
            except Exception:       # interpreter shutdown: the allocator may be gone already
                pass


class Storage:
    __slots__ = ("device", "nbytes", "_ptr", "host", "_keepalive", "_block", "_owner", "__weakref__")

    def __init__(self, nbytes, device):
        self.device = device
        self.nbytes = int(nbytes)
        self._keepalive = None
        self._block = None
        if device.type == "cpu":
            self.host = np.empty(max(self.nbytes, 1), dtype=np.uint8)[: self.nbytes]
            # the address is read when asked (data_ptr): reading it costs more than the allocation
            self._ptr = None
        else:
            # The block belongs to the current stream of the device (reused only there).
            index = device.index
            block = allocator_for(device).malloc(self.nbytes, current_stream_handle(index))
            self._owner = _BlockOwner(block)     # frees the block when this storage dies
            self._block = block
            self._ptr = block.ptr
            self.host = None if block.host is None else block.host_view(self.nbytes)

    def record_stream(self, stream):
        """Do not reuse this storage's memory until the work queued on ``stream`` so far is done."""
        if self._block is not None:
            self._block.allocator.record_stream(self._block, stream)

    @classmethod
    def wrap_host(cls, address, nbytes, owner, device):
        """A storage over host memory someone else owns (zero-copy ``from_numpy``, DLPack on the
        cpu or the emulated device); ``owner`` is kept alive as long as the storage."""
        self = cls.__new__(cls)
        self.device = device
        self.nbytes = int(nbytes)
        self._ptr = address
        self._block = None
        self.host = np.frombuffer((ctypes.c_uint8 * self.nbytes).from_address(address), dtype=np.uint8) \
            if self.nbytes else np.empty(0, np.uint8)
        self._keepalive = owner
        return self

    @classmethod
    def wrap_device(cls, address, nbytes, owner, device):
        """A storage over GPU memory someone else owns (DLPack, __cuda_array_interface__)."""
        self = cls.__new__(cls)
        self.device = device
        self.nbytes = int(nbytes)
        self._ptr = address
        self._block = None
        self.host = None
        self._keepalive = owner
        return self

    def data_ptr(self):
        ptr = self._ptr
        if ptr is None:           # a cpu storage's address, read once
            ptr = self._ptr = self.host.__array_interface__["data"][0]
        return ptr

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
            from .transfer import write_device     # on the current stream (runtime/transfer.py)
            write_device(self, byte_offset, src)

    def copy_to_host(self, byte_offset, nbytes) -> np.ndarray:
        if self.host is not None:
            return self.host[byte_offset: byte_offset + nbytes].copy()
        from .transfer import read_device          # on the current stream (runtime/transfer.py)
        return read_device(self, byte_offset, nbytes)


def device_is_host_backed(device) -> bool:
    return device.type == "cpu" or cuda_mode() == "emulated"
