"""``__array_namespace_info__()``: what this namespace supports (2024.12 "Inspection")."""
from __future__ import annotations

import tritensor as tt

from . import _dtypes

_KIND_NAMES = ("bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating",
               "numeric")


class Info:
    """The inspection namespace: capabilities, devices and dtypes."""
    __module__ = "tritensor.array_api"

    def capabilities(self):
        # tt.nonzero, tt.unique and boolean masks give data-dependent shapes; tensors have up to
        # 64 dims (ops/_shapes.py), as torch's
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self):
        return tt.device("cpu")

    def devices(self):
        """cpu, then each cuda device (the real ones, or the emulated one under TRITENSOR_EMULATE_CUDA)."""
        return [tt.device("cpu")] + [tt.device("cuda", i) for i in range(tt.cuda.device_count())]

    def _check_device(self, device):
        if device is not None and tt.device(device) not in self.devices():
            raise ValueError(f"unknown device {device!r}: expected one of {self.devices()}")

    def default_dtypes(self, *, device=None):
        self._check_device(device)
        return {"real floating": tt.get_default_dtype(), "complex floating": None, "integral": tt.int64,
                "indexing": tt.int64}

    def dtypes(self, *, device=None, kind=None):
        """The standard's dtypes tritensor has, by name (of one kind, or of any of several)."""
        self._check_device(device)
        if kind is not None:
            kinds = kind if isinstance(kind, tuple) else (kind,)
            for k in kinds:
                if not isinstance(k, str) or k not in _KIND_NAMES:
                    raise ValueError(f"unknown dtype kind {k!r}: expected one of {_KIND_NAMES}")
        return {d.name: d for d in _dtypes.STANDARD if kind is None or _dtypes.isdtype(d, kind)}


def __array_namespace_info__():
    """The standard's inspection namespace for tritensor.array_api."""
    return Info()
