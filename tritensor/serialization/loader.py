"""tt.load: reads PyTorch's zip checkpoint format through the checked zip reader
(zipfile_reader.py) and, by default, the weights-only unpickler (unpickler.py)."""
from __future__ import annotations

import io
import os
import pickle
import re

import numpy as np

from ..runtime.device import CPU, as_device, device as _device
from ..runtime.storage import Storage
from . import unpickler as _wo
from .zipfile_reader import ZipReader

_MAX_VERSION, _MIN_VERSION = 10, 1       # caffe2/serialize/versions.h (kMaxSupportedFileFormatVersion)
_UNSAFE_MESSAGE = ("Re-running `tritensor.load` with `weights_only` set to `False` will likely succeed, but it can "
                   "result in arbitrary code execution. Do it only if you got the file from a trusted source.")


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


def _cuda_check(dev):
    from ..runtime import device as _rd
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


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args):
    """Load an object saved with ``torch.save`` / ``tt.save`` (PyTorch's zip format).

    ``weights_only=True`` (the default, as torch >= 2.6) allows only tensors, Parameters, dtypes,
    devices, sizes and standard containers, and is safe for untrusted files (README, "Security");
    ``map_location`` is a device, a string, a dict {saved location: new location} or a callable
    (storage, location) -> storage or None. ``mmap=True`` maps cpu storages from the file instead
    of reading them (file names only); ``pickle_load_args`` go to the unpickler (only
    ``encoding`` when weights_only)."""
    if weights_only and pickle_module is not None and pickle_module is not pickle:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if weights_only:
        unknown = set(pickle_load_args) - {"encoding"}
        if unknown:
            raise RuntimeError(f"weights_only loading takes only the 'encoding' pickle argument, got {sorted(unknown)}")
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load_archive(fh, map_location, pickle_module, weights_only, os.fspath(f) if mmap else None,
                                 pickle_load_args)
    return _load_archive(f, map_location, pickle_module, weights_only, None, pickle_load_args)


def _check_zip_magic(fh):
    """torch's _is_zipfile: a checkpoint starts with a zip local header; anything else is torch's
    legacy format (not read here) or not a checkpoint."""
    start = fh.tell()
    head = fh.read(4)
    fh.seek(start)
    if head == b"PK\x03\x04":
        return
    if not head:
        raise pickle.UnpicklingError("tritensor.load: the file is empty, not a PyTorch zip checkpoint")
    if head[:1] == b"\x80":
        raise NotImplementedError("tritensor.load reads PyTorch's zip format only; this file is in "
                                  "torch's legacy (pre-1.6) format: re-save it with torch.save")
    raise pickle.UnpicklingError(f"invalid load key, {head[:1]!r}: not a PyTorch zip checkpoint")


def _check_version(zf, prefix):
    """PyTorchStreamReader's version record check, with its messages."""
    name = prefix + ".data/version" if zf.has(prefix + ".data/version") else prefix + "version"
    if not zf.has(name):
        raise RuntimeError('Expected hasRecord("version") to be true, but got false.')
    text = zf.read(name, "version").decode("latin-1")
    m = re.match(r"\s*([+-]?\d+)", text)
    if m is None or abs(int(m.group(1))) > _wo.INT64_MAX:
        raise RuntimeError(f"Couldn't parse the version {text} as Long Long.")
    version = int(m.group(1))
    if version < _MIN_VERSION:
        raise RuntimeError(f"Attempted to read a PyTorch file with version {version}, but the minimum supported "
                           f"version for reading is {_MIN_VERSION}. Your PyTorch script module file is too old. "
                           "Please regenerate it with latest version of PyTorch to mitigate this issue.")
    if version > _MAX_VERSION:
        raise RuntimeError(f"Attempted to read a PyTorch file with version {version}, but the maximum supported "
                           f"version for reading is {_MAX_VERSION}. The version of your PyTorch installation may be "
                           "too old, please upgrade PyTorch to latest version to mitigate this issue.")


def _wo_message(message):
    return f"Weights only load failed. {_UNSAFE_MESSAGE}\n\nWeightsUnpickler error: {message}"


def _load_archive(fh, map_location, pickle_module, weights_only, mmap_path, pickle_load_args):
    _check_zip_magic(fh)
    zf = ZipReader(fh)
    first = zf.names()[0] if zf.names() else ""
    if "/" not in first:
        raise RuntimeError(f"file in archive is not in a subdirectory: {first}")
    prefix = first[:first.index("/") + 1]
    _check_version(zf, prefix)
    byteorder = "little"
    if zf.has(prefix + "byteorder"):
        byteorder = zf.read(prefix + "byteorder", "byteorder").decode("utf-8", "replace")
        if byteorder not in ("little", "big"):
            raise ValueError(f"Unknown endianness type: {byteorder}")
    data = zf.read(prefix + "data.pkl", "data.pkl")
    mapped = None
    if mmap_path is not None:
        mapped = np.memmap(mmap_path, dtype=np.uint8, mode="c")   # copy-on-write, as torch's MAP_PRIVATE
        if mapped.size != zf.start + zf.size:
            raise RuntimeError(f"tritensor.load: {mmap_path} changed while it was being loaded")
    loaded = {}

    def read_storage(key, numel, dtype):
        name, shown = f"{prefix}data/{key}", f"data/{key}"
        nbytes = numel * dtype.itemsize
        size = zf.size_of(name, shown)
        if size != nbytes:
            raise RuntimeError(f"record size ({size} bytes) does not match expected size ({nbytes} bytes = {numel} "
                               f"elements * {dtype.itemsize} bytes/element) for dtype {dtype.name}")
        offset = zf.stored_offset(name, shown) if mapped is not None and byteorder == "little" else None
        if offset is not None:        # checked by ZipReader: offset + nbytes lies inside the file
            return Storage.wrap_host(mapped[offset:offset + nbytes].ctypes.data if nbytes else 0, nbytes, mapped, CPU)
        st = Storage(nbytes, CPU)
        if nbytes:
            st.host[:] = np.frombuffer(zf.read(name, shown), dtype=np.uint8)
        if byteorder == "big" and dtype.itemsize > 1:
            st.host[:] = st.host.view(dtype.numpy_dtype).byteswap().view(np.uint8)
        return st

    def storage_loader(pid):
        if len(pid) != 5:
            raise pickle.UnpicklingError(f"a storage's persistent id has 5 fields, got {len(pid)}")
        _, storage_type, key, location, numel = pid
        if type(storage_type) is not _wo.StorageType or type(key) is not str or type(numel) is not int \
                or not 0 <= numel <= _wo.INT64_MAX:
            raise pickle.UnpicklingError(f"malformed storage record {pid!r:.200}")
        if isinstance(location, bytes):
            location = location.decode("ascii", "replace")
        if key not in loaded:
            loaded[key] = _place(read_storage(key, numel, storage_type.dtype), location, map_location)
        return _wo.LoadedStorage(loaded[key], storage_type.dtype)

    if weights_only:
        unpickler = _wo.WeightsUnpickler(data, storage_loader, pickle_load_args.get("encoding", "utf-8"))
        try:
            result = unpickler.load()
        except pickle.UnpicklingError as e:
            raise pickle.UnpicklingError(_wo_message(str(e))) from None
    else:
        unpickler = _full_unpickler_class(pickle_module or pickle)(io.BytesIO(data), storage_loader,
                                                                    **pickle_load_args)
        result = unpickler.load()
    _wo.check_result(result, strict=weights_only)
    return result


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
            hit = _wo.SAFE_GLOBALS.get((module, name))
            if hit is not None:
                return hit
            if module.split(".")[0] == "torch":
                raise pickle.UnpicklingError(f"tritensor.load cannot rebuild torch global {module}.{name}")
            return super().find_class(module, name)

        def persistent_load(self, pid):
            if not (isinstance(pid, tuple) and pid and pid[0] in ("storage", b"storage")):
                raise pickle.UnpicklingError(f"unsupported persistent id {pid!r:.100}")
            return self._storage_loader(pid)

    return _FullUnpickler
