"""repr(tensor) in torch's style: tensor([[1.5000, 2.0000]], device='cuda:0', requires_grad=True)."""
from __future__ import annotations

import numpy as np

from . import dtypes as _dt

_DEFAULT_SHOWN = {_dt.int64, _dt.bool_}


def _formatter(arr, dtype):
    if dtype is _dt.bool_:
        return {"bool": lambda v: "True" if v else "False"}
    if not dtype.is_floating_point:
        return None
    finite = arr[np.isfinite(arr)]
    if finite.size and np.all(finite == np.trunc(finite)) and np.abs(finite).max() < 1e8:
        # torch prints integral floats as "1."
        return {"float_kind": lambda v: f"{v:.0f}." if np.isfinite(v) else ("nan" if np.isnan(v) else ("inf" if v > 0 else "-inf"))}
    big = finite.size and (np.abs(finite).max() >= 1e8 or (np.abs(finite[finite != 0]).min() < 1e-4 if np.any(finite != 0) else False))
    if big:
        return {"float_kind": lambda v: f"{v:.4e}"}
    return {"float_kind": lambda v: f"{v:.4f}" if np.isfinite(v) else ("nan" if np.isnan(v) else ("inf" if v > 0 else "-inf"))}


def format_tensor(t) -> str:
    arr = t.detach()._to_host_array()
    if t.dtype in (_dt.bfloat16, _dt.float16):
        arr = arr.astype(np.float32)
    suffix = []
    if t.device.type != "cpu":
        suffix.append(f"device='{t.device}'")
    if t.numel() == 0 and t.dim() != 1:
        body = "[]"
        suffix.insert(0, f"size={tuple(t.shape)}")
    else:
        body = np.array2string(arr, separator=", ", prefix="tensor(", formatter=_formatter(arr, t.dtype),
                               threshold=1000, edgeitems=3, max_line_width=80)
    if t.dtype is not _dt.get_default_dtype() and t.dtype not in _DEFAULT_SHOWN:
        suffix.append(f"dtype={t.dtype}")
    if t.grad_fn is not None:
        suffix.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffix.append("requires_grad=True")
    return "tensor(" + ", ".join([body] + suffix) + ")"
