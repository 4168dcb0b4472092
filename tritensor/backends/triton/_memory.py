"""Memory the launchers make for themselves: scratch buffers (two-pass reductions, index
offsets, compaction counts), views over existing storage (``_View``: permuted or regrouped
operands), long-lived dtype stand-ins for buffers in a compute dtype, and host <-> device
transfers of small index buffers.

On a GPU scratch comes from the caching allocator (runtime.storage.Storage); under the
interpreter (the emulated device) it is 256-byte-aligned host memory (``_HostBuffer``).
"""
from __future__ import annotations

import numpy as np

from .. import triton as _backend   # the package: _scratch is read there (compile checks rebind it)
from ...runtime import device_errors as _device_errors
from ...runtime import graphs as _graphs
from ._plan import _contiguous_strides, _prod, interpreting


class _DType:
    """A dtype stand-in for scratch buffers in a compute dtype. Get one with ``_dtype(name)``:
    Triton's argument specialization caches a pointer's type by ``id(arg.dtype)``, so dtype
    objects must live forever (one per name), never be created per call."""
    _ITEMSIZE = {"bool": 1, "uint8": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8, "uint16": 2, "uint32": 4,
                 "uint64": 8,
                 "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}

    def __init__(self, name):
        self.name = name
        self.itemsize = self._ITEMSIZE[name]
        self.is_floating_point = name.startswith(("float", "bfloat"))

    def __str__(self):
        return f"tritensor.{self.name}"


_DTYPES: dict = {}


def _dtype(name):
    d = _DTYPES.get(name)
    if d is None:
        d = _DTYPES[name] = _DType(name)
    return d


class _HostBuffer:
    def __init__(self, nbytes):
        raw = np.empty(nbytes + 256, dtype=np.uint8)
        start = (-raw.ctypes.data) % 256
        self.host = raw[start:start + nbytes]
        self._ptr = raw.ctypes.data + start

    def data_ptr(self):
        return self._ptr


class _View:
    """Just what the launchers read from a tensor: for scratch buffers and permuted views."""

    def __init__(self, shape, strides, offset, storage, dtype):
        self.shape = tuple(int(s) for s in shape)
        self._strides = tuple(int(s) for s in strides)
        self._offset = int(offset)
        self._storage = storage
        self.dtype = dtype

    def stride(self):
        return self._strides

    def numel(self):
        return _prod(self.shape)


def _scratch(like, shape, dtype):
    """A contiguous buffer on ``like``'s device (host memory under the interpreter)."""
    nbytes = max(_prod(shape) * dtype.itemsize, 1)
    # During a CUDA graph capture scratch comes from the allocator (the graph's private pool), so
    # the recorded launches' pointers stay valid as long as the graph lives (runtime/graphs.py).
    if interpreting() and not _graphs.CAPTURES:
        storage = _HostBuffer(nbytes)
    else:
        from ...runtime.storage import Storage
        storage = Storage(nbytes, like._storage.device)
    return _View(shape, _contiguous_strides(shape), 0, storage, dtype)


# --------------------------------------------------------------------------- host transfers
def upload(like, array):
    """A contiguous device buffer (a ``_View``) on ``like``'s device holding ``array``."""
    array = np.ascontiguousarray(array)
    view = _backend._scratch(like, array.shape, _dtype(array.dtype.name))   # the package hook
    if array.size:
        storage = view._storage
        if _graphs.CAPTURES and _graphs.record_upload(storage, array):
            return view
        if isinstance(storage, _HostBuffer):
            storage.host[: array.nbytes] = array.reshape(-1).view(np.uint8)
        else:
            storage.copy_from_host(0, array)
    return view


def download(view, start, count, np_dtype):
    """``count`` elements of a device buffer from element ``start``, as a NumPy array (a sync)."""
    itemsize = np.dtype(np_dtype).itemsize
    storage = view._storage
    first = (view._offset + start) * itemsize
    if isinstance(storage, _HostBuffer):
        raw = storage.host[first: first + count * itemsize].copy()
        _device_errors.sync_point()      # emulated: the read a real device waits for
    else:
        raw = storage.copy_to_host(first, count * itemsize)
    return raw.view(np_dtype)

