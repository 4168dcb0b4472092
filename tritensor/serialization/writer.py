"""tt.save: PyTorch's zip checkpoint format, written without torch (see the package docstring)."""
from __future__ import annotations

import collections
import io
import os
import pickle
import struct
import uuid
import zipfile

import numpy as np

from .. import dtypes as _dt
from ..runtime.device import device as _device
from ..tensor import Size, Tensor
from .unpickler import STORAGE_NAMES as _STORAGE_NAMES

DEFAULT_PROTOCOL = 2
_ALIGNMENT = 64


class _Global:
    """Stands for a global (module.name) in the pickle stream; written as a GLOBAL opcode, so the
    file names torch's callables without torch having to be importable here."""
    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):   # pickle insists that a reduce callable be callable
        raise TypeError(f"{self.module}.{self.name} is a name written into a checkpoint, not a function")


_REBUILD_TENSOR_V2 = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_TENSOR_V3 = _Global("torch._utils", "_rebuild_tensor_v3")
_UNTYPED_STORAGE = _Global("torch.storage", "UntypedStorage")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_TORCH_SIZE = _Global("torch", "Size")
_TORCH_DEVICE = _Global("torch", "device")
_DTYPE_GLOBALS = {d: _Global("torch", d.name) for d in _dt.ALL}
_STORAGE_GLOBALS = {d: _Global("torch", n) for d, n in _STORAGE_NAMES.items()}


class _StorageRef:
    """A tensor's storage seen through its dtype (torch's TypedStorage), for persistent_id."""
    __slots__ = ("storage", "dtype")

    def __init__(self, storage, dtype):
        self.storage, self.dtype = storage, dtype


def _is_parameter(obj):
    from ..nn.parameter import Parameter     # nn imports tensor machinery: not at module import
    return isinstance(obj, Parameter)


class _TorchPickler(pickle._Pickler):
    """The pure-Python pickler (its ``save`` can be extended): writes tritensor objects under
    torch's names and collects the storages they use."""

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages = {}        # id(Storage) -> (key, dtype, Storage); saved once each

    def save(self, obj, save_persistent_id=True):
        if type(obj) is _Global:
            memo = self.memo.get(id(obj))
            if memo is not None:
                self.write(self.get(memo[0]))
                return
            self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
            self.memoize(obj)
            return
        if isinstance(obj, _dt.dtype):
            return self.save(_DTYPE_GLOBALS[obj])
        super().save(obj, save_persistent_id)

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            hooks = collections.OrderedDict()
            if _is_parameter(obj):
                data = Tensor._make(obj._storage, obj._shape, obj._stride, obj._offset, obj.dtype)
                return (_REBUILD_PARAMETER, (data, obj.requires_grad, hooks))
            if obj.dtype not in _STORAGE_GLOBALS:     # uint16/32/64 have no typed storage: torch's v3
                return (_REBUILD_TENSOR_V3, (_StorageRef(obj._storage, None), obj._offset, tuple(obj._shape),
                                             tuple(obj._stride), obj.requires_grad, hooks, obj.dtype))
            return (_REBUILD_TENSOR_V2, (_StorageRef(obj._storage, obj.dtype), obj._offset,
                                         tuple(obj._shape), tuple(obj._stride), obj.requires_grad, hooks))
        if isinstance(obj, Size):
            return (_TORCH_SIZE, (tuple(int(d) for d in obj),))
        if isinstance(obj, _device):
            return (_TORCH_DEVICE, (obj.type,) if obj.index is None else (obj.type, obj.index))
        return NotImplemented

    def persistent_id(self, obj):
        if type(obj) is not _StorageRef:
            return None
        st, dtype = obj.storage, obj.dtype
        entry = self.storages.get(id(st))
        if entry is None:
            entry = self.storages[id(st)] = (str(len(self.storages)), dtype, st)
        elif entry[1] is not dtype:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different types")
        location = "cpu" if st.device.type == "cpu" else f"cuda:{st.device.index or 0}"
        if dtype is None:          # an untyped storage (torch.storage.UntypedStorage): its size in bytes
            return ("storage", _UNTYPED_STORAGE, entry[0], location, st.nbytes)
        return ("storage", _STORAGE_GLOBALS[dtype], entry[0], location, st.nbytes // dtype.itemsize)


def _write_record(zf, name, data):
    """A stored (uncompressed) zip record whose data starts on a 64-byte boundary, padded with an
    extra field as PyTorch's writer does (so the file can be memory-mapped)."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    start = zf.fp.tell() + 30 + len(name.encode("utf-8"))
    pad = (-(start + 4)) % _ALIGNMENT
    info.extra = struct.pack("<HH", 0x4246, pad) + b"Z" * pad     # 'FB' + padding, as torch
    zf.writestr(info, data)


def _storage_bytes(st):
    if st.host is not None:
        return memoryview(np.ascontiguousarray(st.host))
    return memoryview(st.copy_to_host(0, st.nbytes))


def save(obj, f, pickle_module=None, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save ``obj`` to ``f`` (a file name, os.PathLike or a writable binary file object) in
    PyTorch's zip checkpoint format (torch.save)."""
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("tritensor.save writes only the zip format; "
                                  "_use_new_zipfile_serialization=False (torch's legacy format) is not supported")
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError("tritensor.save pickles with the standard pickle module only")
    buf = io.BytesIO()
    pickler = _TorchPickler(buf, pickle_protocol)
    pickler.dump(obj)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            _write_archive(fh, buf.getvalue(), pickler.storages, _disable_byteorder_record)
    else:
        _write_archive(f, buf.getvalue(), pickler.storages, _disable_byteorder_record)


def _write_archive(fh, pickled, storages, no_byteorder):
    with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED) as zf:
        _write_record(zf, "archive/data.pkl", pickled)
        _write_record(zf, "archive/.format_version", b"1")
        _write_record(zf, "archive/.storage_alignment", str(_ALIGNMENT).encode())
        if not no_byteorder:
            _write_record(zf, "archive/byteorder", b"little")
        for key, _dtype, st in sorted(storages.values(), key=lambda e: int(e[0])):
            _write_record(zf, f"archive/data/{key}", _storage_bytes(st))
        _write_record(zf, "archive/version", b"3\n")
        _write_record(zf, "archive/.data/serialization_id", uuid.uuid4().hex.encode()[:40].ljust(40, b"0"))
