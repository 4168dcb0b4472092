"""Zero-copy interchange: DLPack (both capsule kinds) and ``__cuda_array_interface__`` (v3).

DLPack (https://dmlc.github.io/dlpack/latest/, the Array API standard 2023.12):

- ``Tensor.__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)`` returns a
  PyCapsule named ``"dltensor_versioned"`` (a ``DLManagedTensorVersioned``, when the consumer's
  ``max_version`` is 1.x or newer) or ``"dltensor"`` (a legacy ``DLManagedTensor``). The tensor
  stays alive until the consumer calls the struct's ``deleter`` (or, if nobody consumes the
  capsule, until it dies). A consumer renames what it consumes ``"used_dltensor[_versioned]"``.
- Stream handshake (the standard's): on cuda the consumer passes the stream it will use (None or
  1: the legacy default stream, 2: per-thread default (refused, as torch), -1: no
  synchronisation, else a ``cudaStream_t``); the producer makes that stream wait for the work
  queued so far on its current stream (an event), so the consumer never blocks the host.
- ``from_dlpack(obj)`` takes any producer (NumPy, CuPy, JAX, torch, tritensor) or a capsule,
  renames the capsule and calls its deleter when the tensor's storage dies.

The emulated cuda device's memory is host memory, so its tensors export as ``kDLCUDA`` with the
host address, exactly as a GPU's tensors would (NumPy then refuses them as it refuses GPU memory;
tt.from_dlpack takes them back as cuda tensors).

``__cuda_array_interface__`` (Numba's protocol, version 3): the dict of a cuda tensor, with the
producer's current stream under ``"stream"`` (the consumer synchronises on it); and tensors made
from any object that has one (CuPy, Numba, PyTorch) without a copy.
"""
from __future__ import annotations

import ctypes
import enum

import numpy as np

from .. import dtypes as _dt
from .device import CPU, cuda_mode, current_device, device


class DLDeviceType(enum.IntEnum):
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


DLPACK_VERSION = (1, 0)
FLAG_READ_ONLY = 1 << 0
FLAG_IS_COPIED = 1 << 1


# ----------------------------------------------------------------------------- the C structs
class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


# (code, bits) of each dtype: kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLBool 6
_DL_CODES = {"bool": (6, 8), "uint8": (1, 8), "uint16": (1, 16), "uint32": (1, 32), "uint64": (1, 64),
             "int8": (0, 8), "int16": (0, 16), "int32": (0, 32),
             "int64": (0, 64), "float16": (2, 16), "bfloat16": (4, 16), "float32": (2, 32), "float64": (2, 64)}
_FROM_DL = {code: name for name, code in _DL_CODES.items()}

_NAME = b"dltensor"
_NAME_VERSIONED = b"dltensor_versioned"
_USED = b"used_dltensor"
_USED_VERSIONED = b"used_dltensor_versioned"

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_api.PyCapsule_GetName.restype = ctypes.c_char_p
_api.PyCapsule_GetName.argtypes = [ctypes.py_object]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]

_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


# ----------------------------------------------------------------------------- producing
def dlpack_device(t):
    """(DLDeviceType, index) of a tensor's memory (Tensor.__dlpack_device__)."""
    if t.device.type == "cuda":
        return DLDeviceType.kDLCUDA, t.device.index
    pinned = getattr(t, "is_pinned", None)
    if pinned is not None and pinned():
        return DLDeviceType.kDLCUDAHost, 0
    return DLDeviceType.kDLCPU, 0


def _consumer_stream_waits(t, stream):
    """The standard's handshake: the consumer's stream waits for the producer's queued work."""
    from .streams import Event, ExternalStream, current_stream, default_stream
    idx = t.device.index
    if stream is None or stream == 1:
        consumer = default_stream(idx)
    elif stream == 2:
        raise BufferError("per-thread default stream is not supported.")
    elif stream == 0:
        raise AssertionError(f"unsupported stream on CUDA: {stream}.")
    else:
        consumer = ExternalStream(stream, idx)
    producer = current_stream(idx)
    if consumer != producer:
        event = Event()
        event.record(producer)
        consumer.wait_event(event)


def tensor_dlpack(t, stream=None, max_version=None, dl_device=None, copy=None):
    """Tensor.__dlpack__: a capsule sharing the tensor's memory (see the module docstring)."""
    if t.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if stream is not None and type(stream) is not int:
        raise TypeError("stream must be ``int`` or ``none``")
    if t.device.type == "cuda":
        if t.device.index != current_device():
            raise BufferError("Can't export tensors on a different CUDA device index. "
                              f"Expected: {t.device.index}. Current device: {current_device()}.")
        if stream != -1:
            _consumer_stream_waits(t, stream)
    elif stream is not None and stream != -1:
        raise AssertionError("stream should be None on cpu.")
    copied = False
    if dl_device is not None and tuple(dl_device) != tuple(dlpack_device(t)):
        if int(dl_device[0]) != DLDeviceType.kDLCPU:
            raise BufferError(f"Can't export a {t.device.type} tensor to DLPack device {tuple(dl_device)}")
        if copy is False:
            raise BufferError("Can't export to the cpu without a copy (copy=False)")
        t = t.detach().cpu()
        copied = True
    elif copy:
        t = t.detach().clone()
        copied = True
    versioned = max_version is not None and max_version[0] >= 1
    return to_capsule(t, versioned, FLAG_IS_COPIED if copied else 0)


def to_capsule(t, versioned=False, flags=0):
    """A DLPack capsule over ``t``'s memory that keeps ``t`` alive until it is released.

    NumPy builds the capsule (from a NumPy array over the tensor's memory that keeps the tensor
    alive): its deleter and capsule destructor are C code, which a capsule needs, since a
    destructor may run while an exception is being raised (a consumer refusing the capsule),
    where no Python code may run. We then write our device and dtype into the struct: NumPy
    never reads the memory, which may be GPU memory, and has no bfloat16 in DLPack."""
    itemsize = t.dtype.itemsize
    np_dtype = np.dtype(f"u{itemsize}") if t.dtype is _dt.bfloat16 else t.dtype.numpy_dtype
    span = _span(t.shape, t.stride(), itemsize)
    if span:
        buffer = (ctypes.c_char * span).from_address(t.data_ptr())
        buffer.tensor = t            # the array's base keeps the tensor (and its memory) alive
        arr = np.ndarray(tuple(t.shape), dtype=np_dtype, buffer=buffer,
                         strides=tuple(s * itemsize for s in t.stride()))
        host = t._storage.host
        if host is not None and not host.flags.writeable:
            # read-only memory (from_numpy of a read-only array): NumPy marks a versioned
            # capsule READ_ONLY and refuses a legacy one, which cannot say so
            arr.flags.writeable = False
    else:
        arr = np.empty(tuple(t.shape), dtype=np_dtype)      # no elements: no memory to share
    capsule = arr.__dlpack__(max_version=DLPACK_VERSION) if versioned else arr.__dlpack__()
    name = _NAME_VERSIONED if versioned else _NAME
    address = _api.PyCapsule_GetPointer(ctypes.c_void_p(id(capsule)), name)
    managed = (DLManagedTensorVersioned if versioned else DLManagedTensor).from_address(address)
    dev_type, dev_id = dlpack_device(t)
    managed.dl_tensor.device = DLDevice(int(dev_type), dev_id)
    code, bits = _DL_CODES[t.dtype.name]
    managed.dl_tensor.dtype = DLDataType(code, bits, 1)
    if versioned:
        managed.flags |= flags
    return capsule


# ----------------------------------------------------------------------------- consuming
class _DLPackOwner:
    """Keeps a consumed DLPack tensor's memory: calls the producer's deleter when the storage
    made over it dies."""
    __slots__ = ("managed_ptr", "deleter")

    def __init__(self, managed_ptr, deleter):
        self.managed_ptr, self.deleter = managed_ptr, deleter

    def __del__(self):
        if self.deleter:
            _DELETER(self.deleter)(self.managed_ptr)


def _span(shape, strides, itemsize):
    if any(d == 0 for d in shape):
        return 0
    return (sum((d - 1) * s for d, s in zip(shape, strides)) + 1) * itemsize


def _contiguous(shape):
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))


def _wrap(address, shape, strides, dtype, dev, owner):
    """A tensor over memory someone else owns (``owner`` is kept alive by its storage)."""
    from ..tensor import Tensor
    from .storage import Storage
    if any(s < 0 for s in strides):
        raise BufferError("tensors with negative strides are not supported: copy the array first")
    nbytes = _span(shape, strides, dtype.itemsize)
    if dev.type == "cpu" or cuda_mode() == "emulated":
        storage = Storage.wrap_host(address or 0, nbytes, owner, dev)
    else:
        storage = Storage.wrap_device(address or 0, nbytes, owner, dev)
    return Tensor._make(storage, shape, strides, 0, dtype)


def _device_from_dl(dev_type, dev_id):
    if dev_type in (DLDeviceType.kDLCPU, DLDeviceType.kDLCUDAHost):
        return CPU
    if dev_type in (DLDeviceType.kDLCUDA, DLDeviceType.kDLCUDAManaged):
        if cuda_mode() is None:
            raise RuntimeError("from_dlpack: the tensor is on a CUDA device, and there is none here")
        return device("cuda", dev_id)
    raise BufferError(f"Unsupported device_type: {dev_type}")


def from_capsule(capsule):
    """A tensor over the memory a DLPack capsule describes (consumes the capsule)."""
    try:
        name = _api.PyCapsule_GetName(capsule)
    except (ValueError, TypeError, ctypes.ArgumentError):
        name = None
    if name not in (_NAME, _NAME_VERSIONED):
        raise RuntimeError("from_dlpack received an invalid capsule. Note that DLTensor capsules can be "
                           "consumed only once, so you might have already constructed a tensor from it once.")
    versioned = name == _NAME_VERSIONED
    address = _api.PyCapsule_GetPointer(ctypes.c_void_p(id(capsule)), name)
    if versioned:
        managed = DLManagedTensorVersioned.from_address(address)
        if managed.version.major > DLPACK_VERSION[0]:
            raise BufferError(f"from_dlpack: DLPack {managed.version.major}.{managed.version.minor} is newer "
                              f"than the supported {DLPACK_VERSION[0]}.{DLPACK_VERSION[1]}")
    else:
        managed = DLManagedTensor.from_address(address)
    dl = managed.dl_tensor
    code = (dl.dtype.code, dl.dtype.bits)
    if dl.dtype.lanes != 1 or code not in _FROM_DL:
        raise BufferError(f"Unsupported dtype in DLTensor: code {dl.dtype.code}, bits {dl.dtype.bits}, "
                          f"lanes {dl.dtype.lanes}")
    dtype = getattr(_dt, _FROM_DL[code] if _FROM_DL[code] != "bool" else "bool_")
    dev = _device_from_dl(dl.device.device_type, dl.device.device_id)
    shape = tuple(dl.shape[i] for i in range(dl.ndim))
    strides = tuple(dl.strides[i] for i in range(dl.ndim)) if dl.strides else _contiguous(shape)
    # Consumed from here on: the capsule no longer owns the tensor, our storage does.
    _api.PyCapsule_SetName(capsule, _USED_VERSIONED if versioned else _USED)
    owner = _DLPackOwner(address, managed.deleter)
    data = (dl.data or 0) + dl.byte_offset
    t = _wrap(data, shape, strides, dtype, dev, owner)
    if versioned and managed.flags & FLAG_READ_ONLY and t._storage.host is not None:
        t._storage.host.flags.writeable = False      # the producer's memory must not be written
    return t


def from_dlpack(obj, *, device=None, copy=None):
    """tt.from_dlpack: a tensor sharing the memory of any DLPack producer (or of a capsule)."""
    if hasattr(obj, "__dlpack__"):
        dev_type, dev_id = obj.__dlpack_device__()
        kwargs = {"max_version": DLPACK_VERSION}
        if copy is not None:
            kwargs["copy"] = copy
        if int(dev_type) in (DLDeviceType.kDLCUDA, DLDeviceType.kDLCUDAManaged):
            # Our current stream: the producer makes it wait for its own work (1 = legacy default).
            from .streams import current_stream_handle
            handle = current_stream_handle(int(dev_id))
            kwargs["stream"] = 1 if handle == 0 else handle
        try:
            capsule = obj.__dlpack__(**kwargs)
        except TypeError:
            # A producer from before DLPack 1.0 / the 2023.12 signature.
            kwargs.pop("max_version")
            if kwargs.pop("copy", None):
                raise
            capsule = obj.__dlpack__(**kwargs)
    else:
        capsule = obj
    t = from_capsule(capsule)
    if device is not None:
        t = t.to(device)
    return t


# ----------------------------------------------------------------------------- __cuda_array_interface__
def _typestr(dtype):
    if dtype == _dt.bfloat16:
        raise TypeError("bfloat16 has no __cuda_array_interface__ typestr")
    return np.dtype(dtype.numpy_dtype).str


def cuda_array_interface(t) -> dict:
    """Tensor.__cuda_array_interface__ (version 3): shape, typestr, data, strides, stream."""
    if t.device.type != "cuda":
        raise AttributeError(
            f"Can't get __cuda_array_interface__ on non-CUDA tensor type: torch.{_dt.type_name(t.dtype)}Tensor "
            "If CUDA data is required use tensor.cuda() to copy tensor to device memory.")
    if t.requires_grad:
        raise RuntimeError(
            "Can't get __cuda_array_interface__ on Variable that requires grad. "
            "If gradients aren't required, use var.detach() to get Variable that doesn't require grad.")
    itemsize = t.dtype.itemsize
    strides = None if t.is_contiguous() else tuple(s * itemsize for s in t.stride())
    from .streams import current_stream_handle
    handle = current_stream_handle(t.device.index)
    return {"shape": tuple(t.shape), "typestr": _typestr(t.dtype),
            "data": (t.data_ptr() if t.numel() else 0, False), "strides": strides, "version": 3,
            "stream": 1 if handle == 0 else handle}


def from_cuda_array_interface(obj, device_index=None):
    """A cuda tensor over the memory of an object with ``__cuda_array_interface__``, no copy.
    If the object names a stream, the current stream waits for the work queued on it."""
    cai = obj.__cuda_array_interface__
    if cuda_mode() is None:
        raise RuntimeError("__cuda_array_interface__: no CUDA device here")
    if cai.get("mask") is not None:
        raise BufferError("__cuda_array_interface__: masked arrays are not supported")
    shape = tuple(int(d) for d in cai["shape"])
    np_dtype = np.dtype(cai["typestr"])
    dtype = _dt.from_numpy_dtype(np_dtype)
    ptr = int(cai["data"][0] or 0)
    itemsize = np_dtype.itemsize
    if cai.get("strides") is None:
        strides = _contiguous(shape)
    else:
        if any(s % itemsize for s in cai["strides"]):
            raise BufferError("__cuda_array_interface__: strides that are not a multiple of the item size")
        strides = tuple(int(s) // itemsize for s in cai["strides"])
    idx = current_device() if device_index is None else device_index
    if cuda_mode() == "real" and ptr:
        import cupy
        idx = cupy.cuda.runtime.pointerGetAttributes(ptr).device
    stream = cai.get("stream") if cai.get("version", 0) >= 3 else None
    if stream is not None:
        if stream == 0:
            raise ValueError("__cuda_array_interface__: stream 0 is disallowed (1 is the legacy default stream)")
        from .streams import Event, ExternalStream, current_stream, default_stream
        producer = default_stream(idx) if stream == 1 else ExternalStream(stream, idx)
        consumer = current_stream(idx)
        if producer != consumer:
            event = Event()
            event.record(producer)
            consumer.wait_event(event)
    return _wrap(ptr, shape, strides, dtype, device("cuda", idx), obj)
