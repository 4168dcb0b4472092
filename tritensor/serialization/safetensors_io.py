"""tt.save_file / tt.load_file: the safetensors format (safetensors.torch's functions)."""
from __future__ import annotations

import os

import numpy as np

from .. import dtypes as _dt
from ..runtime.device import CPU, as_device, device as _device
from ..tensor import Tensor


_SAFETENSORS_DTYPES = {
    _dt.bool_: "BOOL", _dt.uint8: "U8", _dt.uint16: "U16", _dt.uint32: "U32", _dt.uint64: "U64", _dt.int8: "I8", _dt.int16: "I16", _dt.int32: "I32", _dt.int64: "I64",
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
    from ..ops.creation import from_numpy
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
