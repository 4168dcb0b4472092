"""Untyped storage: a run of bytes on one device, shared by every view of it."""
from __future__ import annotations

import ctypes

import numpy as np

from . import device_errors as _errors
from . import graphs as _graphs
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
        if _graphs.CAPTURES and self.device.type == "cuda":
            _graphs.check_not_capturing()       # an upload syncs the host (runtime/graphs.py)
        if self.host is not None:
            self.host[byte_offset: byte_offset + src.size] = src
        elif src.size:
            from .transfer import write_device     # on the current stream (runtime/transfer.py)
            write_device(self, byte_offset, src)

    def copy_to_host(self, byte_offset, nbytes) -> np.ndarray:
        if _graphs.CAPTURES and self.device.type == "cuda":
            _graphs.check_not_capturing()       # a host read syncs (runtime/graphs.py)
        if self.host is not None:
            out = self.host[byte_offset: byte_offset + nbytes].copy()
            if self.device.type == "cuda":
                _errors.sync_point(self.device.index)   # emulated: the read a real device waits for
            return out
        from .transfer import read_device          # on the current stream (runtime/transfer.py)
        return read_device(self, byte_offset, nbytes)


def device_is_host_backed(device) -> bool:
    return device.type == "cpu" or cuda_mode() == "emulated"


# =========================================================================== the public storages
# torch.UntypedStorage / torch.TypedStorage: what Tensor.untyped_storage() and Tensor.storage()
# return. Each is a face over the runtime ``Storage`` above (the bytes every view of a tensor
# shares); the runtime object stays internal, so its fields (nbytes, host ...) are free to differ
# from torch's methods (nbytes(), size() ...).
import threading as _threading  # noqa: E402
import warnings as _warnings  # noqa: E402
import weakref as _weakref  # noqa: E402

_faces = _weakref.WeakValueDictionary()   # id(Storage) -> its live UntypedStorage (one per storage)
_faces_lock = _threading.Lock()


def _host_bytes(storage, start=0, n=None):
    """A copy of ``n`` bytes of ``storage`` from ``start`` (any device), as uint8."""
    n = storage.nbytes - start if n is None else n
    return storage.copy_to_host(start, n) if n > 0 else np.empty(0, np.uint8)


class UntypedStorage:
    """torch.UntypedStorage: the bytes under a tensor, shared by all of its views. Tensors that
    share memory return the same object from ``untyped_storage()`` (while it is alive), so
    ``a.untyped_storage() is b.untyped_storage()`` tells views of one storage apart, as in torch.
    ``UntypedStorage(n, device=...)`` allocates n new bytes (uninitialised, as torch's)."""
    __slots__ = ("_storage", "__weakref__")

    def __init__(self, size=0, *, device=None):
        from .device import as_device
        self._storage = Storage(int(size), as_device(device))

    @classmethod
    def _of(cls, storage):
        """The one live face of a runtime Storage (made on first use)."""
        with _faces_lock:
            face = _faces.get(id(storage))
            if face is None or face._storage is not storage:
                face = cls.__new__(cls)
                face._storage = storage
                _faces[id(storage)] = face
            return face

    # ---------------------------------------------------------------- torch's queries
    @property
    def device(self):
        return self._storage.device

    @property
    def is_cuda(self):
        return self._storage.device.type == "cuda"

    def get_device(self):
        return self._storage.device.index if self.is_cuda else -1

    def data_ptr(self):
        return self._storage.data_ptr()

    def nbytes(self):
        return self._storage.nbytes

    def size(self):
        return self._storage.nbytes

    def __len__(self):
        return self._storage.nbytes

    def element_size(self):
        return 1

    @property
    def is_sparse(self):
        return False

    def untyped(self):
        return self

    def tolist(self):
        """The bytes as Python ints."""
        return _host_bytes(self._storage).tolist()

    def __getitem__(self, idx):
        """An int: that byte; a slice with step 1: a storage over those bytes (sharing them)."""
        n = self._storage.nbytes
        if isinstance(idx, slice):
            start, stop, step = idx.indices(n)
            if step != 1:
                raise RuntimeError(f"Trying to slice with a step of {step}, but only a step of 1 is supported")
            st = self._storage
            size = max(stop - start, 0)
            wrap = Storage.wrap_host if st.host is not None else Storage.wrap_device
            return UntypedStorage._of(wrap(st.data_ptr() + start, size, st, st.device))
        if not isinstance(idx, int) or isinstance(idx, bool):
            raise RuntimeError(f"can't index a torch.UntypedStorage with {type(idx).__name__}")
        if idx < 0:
            idx += n
        if not 0 <= idx < n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
        return int(_host_bytes(self._storage, idx, 1)[0])

    def __repr__(self):
        body = "\n".join(f" {b}" for b in self.tolist())
        tail = f"[tritensor.storage.UntypedStorage(device={self.device}) of size {len(self)}]"
        return f"{body}\n{tail}" if body else f" \n{tail}"

    def __eq__(self, other):
        return isinstance(other, UntypedStorage) and other._storage is self._storage

    __hash__ = object.__hash__


_warned_typed = False


def warn_typed_storage_removal():
    """torch's deprecation warning for TypedStorage, once per process as torch gives it."""
    global _warned_typed
    if not _warned_typed:
        _warned_typed = True
        _warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
                       "only storage class. This should only matter to you if you are using storages directly.  To "
                       "access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
                       UserWarning, stacklevel=3)


class TypedStorage:
    """torch.TypedStorage (``Tensor.storage()``, deprecated in torch with a warning): the same
    bytes read as elements of ``dtype``; ``size()`` counts elements."""
    __slots__ = ("_untyped_storage", "dtype")

    def __init__(self, untyped, dtype):
        self._untyped_storage = untyped
        self.dtype = dtype

    @property
    def device(self):
        return self._untyped_storage.device

    @property
    def is_cuda(self):
        return self._untyped_storage.is_cuda

    def get_device(self):
        return self._untyped_storage.get_device()

    def untyped(self):
        return self._untyped_storage

    def data_ptr(self):
        return self._untyped_storage.data_ptr()

    def nbytes(self):
        return self._untyped_storage.nbytes()

    def element_size(self):
        return self.dtype.itemsize

    def size(self):
        return self.nbytes() // self.dtype.itemsize

    def __len__(self):
        return self.size()

    @property
    def is_sparse(self):
        return False

    def _values(self, start=0, n=None):
        n = self.size() - start if n is None else n
        raw = _host_bytes(self._untyped_storage._storage, start * self.dtype.itemsize, n * self.dtype.itemsize)
        vals = raw.view(self.dtype.numpy_dtype)
        return vals.astype(np.float32) if self.dtype.name == "bfloat16" else vals

    def tolist(self):
        return self._values().tolist()

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        n = self.size()
        if not isinstance(idx, int) or isinstance(idx, bool):
            raise RuntimeError(f"can't index a TypedStorage with {type(idx).__name__}")
        if idx < 0:
            idx += n
        if not 0 <= idx < n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
        return self._values(idx, 1)[0].item()

    def __repr__(self):
        vals = self.tolist()
        body = "\n".join(f" {v}" for v in vals)
        tail = f"[tritensor.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size {len(vals)}]"
        return f"{body}\n{tail}" if body else f" \n{tail}"
