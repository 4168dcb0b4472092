"""tt.save / tt.load in PyTorch's own zip format, and tt.save_file / tt.load_file (safetensors).

The checkpoint format is exactly what ``torch.save`` writes (torch/serialization.py), so a file
written by PyTorch loads here without torch, and a file written here loads with
``torch.load(f, weights_only=True)``:

    archive/data.pkl                 the object, pickled (protocol 2) with persistent ids
                                     ('storage', torch.FloatStorage, key, location, numel)
    archive/.format_version          "1"
    archive/.storage_alignment       "64"
    archive/byteorder                "little"
    archive/data/<key>               each storage's raw bytes, once, aligned to 64 bytes
    archive/version                  "3"
    archive/.data/serialization_id   an id for this file

A tensor is pickled as ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
requires_grad, OrderedDict())``; views of one storage name the same key, so they stay views of one
storage after loading. A Parameter is ``torch._utils._rebuild_parameter(tensor, requires_grad,
OrderedDict())``. dtypes are the globals ``torch.float32`` ..., devices ``torch.device(...)``.

Loading is safe for untrusted files by default (``weights_only=True``, as torch >= 2.6): the
unpickler resolves only an allowlist of globals, each to a tritensor function that checks its
arguments, and refuses everything else with ``pickle.UnpicklingError`` ("Unsupported global").
Nothing in the file can name a callable outside that list, so nothing in it can run code.
"""
from __future__ import annotations

import collections
import io
import os
import pickle
import struct
import uuid
import zipfile

import numpy as np

from . import dtypes as _dt
from .runtime.device import CPU, as_device, device as _device
from .runtime.storage import Storage
from .tensor import Size, Tensor

__all__ = ["save", "load", "save_file", "load_file"]

DEFAULT_PROTOCOL = 2
_ALIGNMENT = 64

# torch's typed storage class for each dtype (torch/storage.py _pickle_storage_type)
_STORAGE_NAMES = {
    _dt.float32: "FloatStorage", _dt.float64: "DoubleStorage", _dt.float16: "HalfStorage",
    _dt.bfloat16: "BFloat16Storage", _dt.int64: "LongStorage", _dt.int32: "IntStorage",
    _dt.int16: "ShortStorage", _dt.int8: "CharStorage", _dt.uint8: "ByteStorage", _dt.bool_: "BoolStorage",
}
# torch's dtype globals (torch.float32 pickles as GLOBAL 'torch float32'), aliases included
_TORCH_DTYPE_NAMES = {d.name: d for d in _dt.ALL}
_TORCH_DTYPE_NAMES.update(half=_dt.float16, float=_dt.float32, double=_dt.float64, short=_dt.int16,
                          int=_dt.int32, long=_dt.int64)


# ===================================================================================== saving
class _Global:
    """Stands for a global (module.name) in the pickle stream; written as a GLOBAL opcode, so the
    file names torch's callables without torch having to be importable here."""
    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):   # pickle insists that a reduce callable be callable
        raise TypeError(f"{self.module}.{self.name} is a name written into a checkpoint, not a function")


_REBUILD_TENSOR_V2 = _Global("torch._utils", "_rebuild_tensor_v2")
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
    from .nn.parameter import Parameter     # nn imports tensor machinery: not at module import
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


# ===================================================================================== loading
class _StorageType:
    """What ``torch.FloatStorage`` ... (or ``torch.UntypedStorage``) resolves to when loading."""
    __slots__ = ("dtype", "name")

    def __init__(self, dtype, name):
        self.dtype, self.name = dtype, name

    def __repr__(self):
        return f"torch.{self.name}"


_STORAGE_TYPES = {n: _StorageType(d, n) for d, n in _STORAGE_NAMES.items()}
_UNTYPED = _StorageType(_dt.uint8, "UntypedStorage")


class _LoadedStorage:
    """A loaded storage with the dtype its persistent id named (torch's TypedStorage)."""
    __slots__ = ("storage", "dtype")

    def __init__(self, storage, dtype):
        self.storage, self.dtype = storage, dtype

    def numel(self):
        return self.storage.nbytes // self.dtype.itemsize


class MappedStorage:
    """The storage a ``map_location`` callable receives, as torch's (storage, location) callback:
    a cpu storage that can be moved with ``.cpu()``, ``.cuda(index)`` or ``.to(device)``."""

    def __init__(self, storage):
        self._storage = storage

    @property
    def device(self):
        return self._storage.device

    def nbytes(self):
        return self._storage.nbytes

    def to(self, device):
        device = as_device(device)
        if device == self._storage.device:
            return self
        out = Storage(self._storage.nbytes, device)
        if self._storage.nbytes:
            out.copy_from_host(0, self._storage.copy_to_host(0, self._storage.nbytes))
        return MappedStorage(out)

    def cpu(self):
        return self.to(CPU)

    def cuda(self, device=None):
        if device is None:
            device = "cuda"
        elif isinstance(device, int):
            device = _device("cuda", device)
        return self.to(device)


def _check_int(name, v):
    if type(v) is not int:
        raise pickle.UnpicklingError(f"Weights only load failed: {name} must be an int, got {type(v).__name__}")
    return v


def _check_int_tuple(name, v):
    if not isinstance(v, (tuple, list)):
        raise pickle.UnpicklingError(
            f"Weights only load failed: {name} must be a tuple of ints, got {type(v).__name__}")
    return tuple(_check_int(name, x) for x in v)


def _tensor_from_storage(storage, storage_offset, size, stride):
    if not isinstance(storage, _LoadedStorage):
        raise pickle.UnpicklingError("Weights only load failed: a tensor must be rebuilt from a storage in the file")
    offset = _check_int("storage_offset", storage_offset)
    size = _check_int_tuple("size", size)
    stride = _check_int_tuple("stride", stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} strides for {len(size)} dims")
    if any(s < 0 for s in size) or any(s < 0 for s in stride) or offset < 0:
        raise RuntimeError(f"as_strided: negative sizes, strides or offset are not allowed "
                           f"(size {list(size)}, stride {list(stride)}, offset {offset})")
    itemsize = storage.dtype.itemsize
    if 0 not in size:
        needed = offset + 1 + sum((s - 1) * st for s, st in zip(size, stride))
        if needed * itemsize > storage.storage.nbytes:
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                f"itemsize {itemsize} requiring a storage size of {needed * itemsize} are out of bounds "
                f"for storage of size {storage.storage.nbytes}")
    return Tensor._make(storage.storage, size, stride, offset, storage.dtype)


def _set_requires_grad(t, requires_grad):
    if type(requires_grad) is not bool:
        raise pickle.UnpicklingError("Weights only load failed: requires_grad must be a bool")
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    """torch._utils._rebuild_tensor_v2 (backward hooks are not restored, as torch warns)."""
    return _set_requires_grad(_tensor_from_storage(storage, storage_offset, size, stride), requires_grad)


def _rebuild_tensor(storage, storage_offset, size, stride):
    """torch._utils._rebuild_tensor (older checkpoints)."""
    return _tensor_from_storage(storage, storage_offset, size, stride)


def _make_parameter(data, requires_grad):
    if not isinstance(data, Tensor):
        raise pickle.UnpicklingError("Weights only load failed: a Parameter must wrap a tensor")
    if type(requires_grad) is not bool:
        raise pickle.UnpicklingError("Weights only load failed: requires_grad must be a bool")
    from .nn.parameter import Parameter
    return Parameter(data, requires_grad)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    return _make_parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    """torch._utils._rebuild_parameter_with_state: a Parameter plus Python attributes."""
    param = _make_parameter(data, requires_grad)
    if isinstance(state, tuple):       # (dict state, slots state) as copyreg writes it
        state = {k: v for part in state if isinstance(part, dict) for k, v in part.items()}
    if state:
        if not isinstance(state, dict):
            raise pickle.UnpicklingError("Weights only load failed: a Parameter's state must be a dict")
        for k, v in state.items():
            if not isinstance(k, str) or k.startswith("_"):
                raise pickle.UnpicklingError(f"Weights only load failed: refused Parameter attribute {k!r}")
            setattr(param, k, v)
    return param


def _make_size(dims=()):
    return Size(_check_int_tuple("torch.Size", dims))


def _make_device(kind, index=None):
    if not isinstance(kind, str) or (index is not None and type(index) is not int):
        raise pickle.UnpicklingError("Weights only load failed: torch.device takes a string and an optional int")
    return _device(kind, index)


def _codecs_encode(text, encoding="utf-8"):
    """_codecs.encode, which protocol-2 pickles use for bytes: only str -> latin1/utf-8 bytes."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1", "utf-8", "utf8"):
        raise pickle.UnpicklingError("Weights only load failed: _codecs.encode only turns text into bytes")
    return text.encode(encoding)


_SAFE_GLOBALS = {
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
    ("torch", "Size"): _make_size,
    ("torch", "device"): _make_device,
    ("torch", "UntypedStorage"): _UNTYPED,
    ("torch.storage", "UntypedStorage"): _UNTYPED,
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("_codecs", "encode"): _codecs_encode,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "bytearray"): bytearray,
    ("builtins", "complex"): complex,
    ("builtins", "slice"): slice,
}
_SAFE_GLOBALS.update({("torch", n): st for n, st in _STORAGE_TYPES.items()})
_SAFE_GLOBALS.update({("torch", n): d for n, d in _TORCH_DTYPE_NAMES.items()})


def _refused(module, name):
    return pickle.UnpicklingError(
        "Weights only load failed. Re-running `tritensor.load` with `weights_only` set to `False` will "
        "likely succeed, but it can result in arbitrary code execution. Do it only if you got the file "
        "from a trusted source.\n\nWeightsUnpickler error: Unsupported global: "
        f"GLOBAL {module}.{name} was not an allowed global by default.")


def _normalise_module(module):
    return "builtins" if module == "__builtin__" else module


class _WeightsUnpickler(pickle.Unpickler):
    """Resolves only the allowlisted globals; persistent ids name storages in the archive."""

    def __init__(self, file, storage_loader, encoding="utf-8"):
        super().__init__(file, encoding=encoding)
        self._storage_loader = storage_loader

    def find_class(self, module, name):
        try:
            return _SAFE_GLOBALS[(_normalise_module(module), name)]
        except (KeyError, TypeError):
            raise _refused(module, name) from None

    def persistent_load(self, pid):
        return self._storage_loader(pid)


def _full_unpickler_class(pickle_module):
    """weights_only=False: torch's names map to tritensor's, any other global resolves normally
    (this runs whatever the file names: trusted files only)."""
    base = pickle_module.Unpickler

    class _FullUnpickler(base):
        def __init__(self, file, storage_loader, **pickle_load_args):
            pickle_load_args.setdefault("encoding", "utf-8")
            super().__init__(file, **pickle_load_args)
            self._storage_loader = storage_loader

        def find_class(self, module, name):
            hit = _SAFE_GLOBALS.get((_normalise_module(module), name))
            if hit is not None:
                return hit
            if module.split(".")[0] == "torch":
                raise pickle.UnpicklingError(f"tritensor.load cannot rebuild torch global {module}.{name}")
            return super().find_class(module, name)

        def persistent_load(self, pid):
            return self._storage_loader(pid)

    return _FullUnpickler


def _cuda_check(dev):
    from .runtime import device as _rd
    if not _rd.is_available():
        raise RuntimeError(
            "Attempting to deserialize object on a CUDA device but tritensor.cuda.is_available() is False. "
            "If you are running on a CPU-only machine, please use tritensor.load with "
            "map_location=tritensor.device('cpu') to map your storages to the CPU.")
    idx = dev.index or 0
    n = _rd.device_count()
    if idx >= n:
        raise RuntimeError(
            f"Attempting to deserialize object on CUDA device {idx} but tritensor.cuda.device_count() is {n}. "
            "Please use tritensor.load with map_location to map your storages to an existing device.")
    return _device("cuda", idx)


def _restore_location(location):
    """torch's default_restore_location: 'cpu' or 'cuda[:N]'."""
    if not isinstance(location, (str, _device)):
        raise pickle.UnpicklingError("Weights only load failed: a storage location must be a string")
    try:
        dev = _device(location) if isinstance(location, str) else location
    except Exception:
        raise RuntimeError(f"don't know how to restore data location of torch.storage.UntypedStorage "
                           f"(tagged with {location})") from None
    return CPU if dev.type == "cpu" else _cuda_check(dev)


def _place(storage, location, map_location):
    """Move a freshly read cpu storage where map_location (None, str, device, dict, callable) says."""
    if map_location is None:
        target = _restore_location(location)
    elif isinstance(map_location, dict):
        target = _restore_location(map_location.get(location, location))
    elif isinstance(map_location, (str, _device)):
        target = _restore_location(map_location)
    elif callable(map_location):
        moved = map_location(MappedStorage(storage), location)
        if moved is None:
            target = _restore_location(location)
        elif isinstance(moved, MappedStorage):
            return moved._storage
        elif isinstance(moved, Storage):
            return moved
        else:
            raise TypeError(f"map_location should return a storage or None, got {type(moved).__name__}")
    else:
        raise ValueError(f"map_location should be a string, a device, a dict or a callable, got {map_location!r}")
    if target == storage.device:
        return storage
    out = Storage(storage.nbytes, target)
    if storage.nbytes:
        out.copy_from_host(0, storage.host)
    return out


def _record_data_offset(fh, info):
    """Where a stored record's bytes start in the file (its local header's extra field may differ
    from the central directory's)."""
    fh.seek(info.header_offset)
    header = fh.read(30)
    if header[:4] != b"PK\x03\x04":
        raise RuntimeError(f"PytorchStreamReader failed reading record {info.filename}: bad local header")
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    return info.header_offset + 30 + name_len + extra_len


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args):
    """Load an object saved with ``torch.save`` / ``tt.save`` (PyTorch's zip format).

    ``weights_only=True`` (the default, as torch >= 2.6) allows only tensors, Parameters, dtypes,
    devices, sizes and primitive containers; ``map_location`` is a device, a string, a dict
    {saved location: new location} or a callable (storage, location) -> storage or None.
    ``mmap=True`` maps cpu storages from the file instead of reading them (file names only);
    ``pickle_load_args`` go to the unpickler (only ``encoding`` when weights_only)."""
    if weights_only and pickle_module is not None and pickle_module is not pickle:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load_archive(fh, map_location, pickle_module, weights_only, os.fspath(f) if mmap else None,
                                 pickle_load_args)
    return _load_archive(f, map_location, pickle_module, weights_only, None, pickle_load_args)


def _load_archive(fh, map_location, pickle_module, weights_only, mmap_path, pickle_load_args):
    start = fh.tell()
    if not zipfile.is_zipfile(fh):
        fh.seek(start)
        head = fh.read(2)
        if head[:1] == b"\x80":
            raise NotImplementedError("tritensor.load reads PyTorch's zip format only; this file is in "
                                      "torch's legacy (pre-1.6) format: re-save it with torch.save")
        raise pickle.UnpicklingError("invalid load key: not a PyTorch zip checkpoint")
    fh.seek(start)
    zf = zipfile.ZipFile(fh)
    names = zf.namelist()
    pkl = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
    if not pkl:
        raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
    prefix = pkl[0][: -len("data.pkl")]
    byteorder = zf.read(prefix + "byteorder").decode() if prefix + "byteorder" in names else "little"
    if byteorder not in ("little", "big"):
        raise ValueError(f"Unknown endianness type: {byteorder}")
    mapped = None
    if mmap_path is not None:
        mapped = np.memmap(mmap_path, dtype=np.uint8, mode="c")   # copy-on-write, as torch's MAP_PRIVATE

    loaded = {}

    def read_storage(key, nbytes):
        info = zf.getinfo(f"{prefix}data/{key}")
        if info.file_size != nbytes:
            raise RuntimeError(f"storage {key} holds {info.file_size} bytes where the checkpoint names {nbytes}")
        if mapped is not None and info.compress_type == zipfile.ZIP_STORED and byteorder == "little":
            off = _record_data_offset(fh, info)
            return Storage.wrap_host(mapped[off:off + nbytes].ctypes.data if nbytes else 0, nbytes, mapped, CPU)
        st = Storage(nbytes, CPU)
        if nbytes:
            st.host[:] = np.frombuffer(zf.read(info), dtype=np.uint8)
        return st

    def storage_loader(pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"Weights only load failed: unknown persistent id {pid!r:.80}")
        _, storage_type, key, location, numel = pid
        if not isinstance(storage_type, _StorageType) or not isinstance(key, str) or type(numel) is not int \
                or numel < 0:
            raise pickle.UnpicklingError("Weights only load failed: malformed storage record")
        dtype = storage_type.dtype
        if key not in loaded:
            st = read_storage(key, numel * dtype.itemsize)
            if byteorder == "big" and dtype.itemsize > 1:
                st.host[:] = st.host.view(dtype.numpy_dtype).byteswap().view(np.uint8)
            loaded[key] = _place(st, location, map_location)
        return _LoadedStorage(loaded[key], dtype)

    data = zf.read(pkl[0])
    if weights_only:
        unknown = set(pickle_load_args) - {"encoding"}
        if unknown:
            raise RuntimeError(f"weights_only loading takes only the 'encoding' pickle argument, got {sorted(unknown)}")
        unpickler = _WeightsUnpickler(io.BytesIO(data), storage_loader, pickle_load_args.get("encoding", "utf-8"))
    else:
        unpickler = _full_unpickler_class(pickle_module or pickle)(io.BytesIO(data), storage_loader,
                                                                    **pickle_load_args)
    result = unpickler.load()
    if isinstance(result, _LoadedStorage):
        raise NotImplementedError("tritensor.load: a bare storage (not inside a tensor) cannot be returned")
    return result


# ================================================================================ safetensors
_SAFETENSORS_DTYPES = {
    _dt.bool_: "BOOL", _dt.uint8: "U8", _dt.int8: "I8", _dt.int16: "I16", _dt.int32: "I32", _dt.int64: "I64",
    _dt.float16: "F16", _dt.bfloat16: "BF16", _dt.float32: "F32", _dt.float64: "F64",
}
_FROM_SAFETENSORS = {v: k for k, v in _SAFETENSORS_DTYPES.items()}
_FROM_SAFETENSORS.update({d.name: d for d in _dt.ALL})     # some releases name dtypes as NumPy does


def _safetensors():
    try:
        import safetensors
    except ImportError:
        raise ImportError("tritensor.save_file / load_file need the safetensors package: "
                          "pip install tritensor[safetensors]") from None
    return safetensors


def save_file(tensors, filename, metadata=None):
    """Save a flat dict {name: tensor} in the safetensors format (safetensors.torch.save_file)."""
    st = _safetensors()
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, tensor] but received {type(tensors)}")
    invalid = {k for k, v in tensors.items() if not isinstance(v, Tensor)}
    if invalid:
        raise ValueError(f"Key `{sorted(invalid)[0]}` is invalid, expected tensor but received "
                         f"{type(tensors[sorted(invalid)[0]])}")
    by_storage = {}
    for k, v in tensors.items():
        if v.numel():
            by_storage.setdefault(id(v._storage), []).append(k)
    shared = [names for names in by_storage.values() if len(names) > 1]
    if shared:
        raise RuntimeError(
            f"Some tensors share memory, this will lead to duplicate memory on disk and potential differences "
            f"when loading them again: {shared}.\nA potential way to correctly save your model is to use "
            "`save_model`.\nMore information at https://huggingface.co/docs/safetensors/torch_shared_tensors")
    arrays, payload = {}, {}
    for k, v in tensors.items():
        if not v.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{k}` which is not allowed. It either means you"
                " are trying to save tensors which are reference of each other in which case it's recommended "
                "to save only the full tensors, and reslice at load time, or simply call `.contiguous()` on "
                "your tensor to pack it before saving.")
        arr = arrays[k] = np.ascontiguousarray(v.detach()._to_host_array())
        if hasattr(st, "TensorSpec"):      # safetensors >= 0.8: specs over memory we keep alive (arrays)
            payload[k] = st.TensorSpec(dtype=v.dtype.name, shape=list(v.shape), data_ptr=arr.ctypes.data,
                                       data_len=arr.nbytes)
        else:                              # older releases take the bytes themselves
            payload[k] = {"dtype": v.dtype.name, "shape": list(v.shape), "data": arr.tobytes()}
    st.serialize_file(payload, os.fspath(filename), metadata)
    del arrays


def load_file(filename, device="cpu"):
    """Load a safetensors file into a dict {name: tensor} on ``device`` (safetensors.torch.load_file)."""
    st = _safetensors()
    from .ops.creation import from_numpy
    with open(filename, "rb") as fh:
        raw = fh.read()
    out = {}
    target = as_device(device) if not isinstance(device, int) else _device("cuda", device)
    for name, spec in st.deserialize(raw):
        code = spec["dtype"]
        if code not in _FROM_SAFETENSORS:
            raise TypeError(f"tritensor.load_file: safetensors dtype {code} is not supported")
        dtype = _FROM_SAFETENSORS[code]
        arr = np.frombuffer(bytearray(spec["data"]), dtype=dtype.numpy_dtype).reshape(spec["shape"])
        t = from_numpy(arr)
        out[name] = t if target == CPU else t.to(target)
    return out
