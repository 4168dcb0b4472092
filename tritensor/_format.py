"""repr(tensor) in torch's style: tensor([[1.5000, 2.0000]], device='cuda:0', requires_grad=True)."""
from __future__ import annotations

import numpy as np

from . import dtypes as _dt

_DEFAULT_SHOWN = {_dt.int64, _dt.bool_}


def _special(v):
    return "nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")


def _element_format(arr, dtype):
    """The per-element text torch uses: '1.' for integral floats, 4 decimals otherwise,
    scientific when magnitudes are very large or small."""
    if dtype is _dt.bool_:
        return lambda v: "True" if v else "False"
    if not dtype.is_floating_point:
        return lambda v: str(int(v))
    finite = arr[np.isfinite(arr)]
    nonzero = np.abs(finite[finite != 0])
    if finite.size and np.all(finite == np.trunc(finite)) and np.abs(finite).max() < 1e8:
        return lambda v: f"{v:.0f}." if np.isfinite(v) else _special(v)
    if nonzero.size and (nonzero.max() >= 1e8 or nonzero.min() < 1e-4 or nonzero.max() / nonzero.min() > 1e3):
        return lambda v: f"{v:.4e}" if np.isfinite(v) else _special(v)
    return lambda v: f"{v:.4f}" if np.isfinite(v) else _special(v)


def _formatter(arr, dtype):
    fmt = _element_format(arr, dtype)
    width = max((len(fmt(v)) for v in arr.reshape(-1)), default=0)   # right-aligned columns
    return {"all": lambda v: fmt(v).rjust(width)}


def format_tensor(t) -> str:
    arr = t.detach()._to_host_array()
    if t.dtype in (_dt.bfloat16, _dt.float16):
        arr = arr.astype(np.float32)
    suffix = []
    if t.device.type != "cpu":
        suffix.append(f"device='{t.device}'")
    if t.numel() == 0:
        # torch: the shape when it is not (0,), and any dtype but the default float one (an
        # empty tensor has no elements to tell an int64 by)
        body = "[]"
        if t.dim() != 1:
            suffix.append(f"size={tuple(t.shape)}")
        if t.dtype is not _dt.get_default_dtype():
            suffix.append(f"dtype={t.dtype}")
    else:
        body = np.array2string(arr, separator=", ", prefix="tensor(", formatter=_formatter(arr, t.dtype),
                               threshold=1000, edgeitems=3, max_line_width=80)
        body = body.replace(", ..., ", ",  ..., ")   # torch's elision entry is " ..."
        if t.dtype is not _dt.get_default_dtype() and t.dtype not in _DEFAULT_SHOWN:
            suffix.append(f"dtype={t.dtype}")
    if t.grad_fn is not None:
        suffix.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffix.append("requires_grad=True")
    return "tensor(" + ", ".join([body] + suffix) + ")"
