"""The padding modules, as torch.nn.modules.padding: F.pad (ops/padding.py) with a fixed padding.

``padding`` is an int (the same on every side) or a tuple of 2, 4 or 6 ints, (left, right, top,
bottom, front, back) as F.pad's; the reprs and CircularPad's input-rank check are torch's.
"""
from __future__ import annotations

from .. import functional as F
from .module import Module
from .utils import _ntuple, _pair, _quadruple

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]

_PARSE = {1: _pair, 2: _quadruple, 3: _ntuple(6)}


class _CircularPadNd(Module):
    __constants__ = ["padding"]
    _dims = 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _PARSE[self._dims](padding)

    def _check_input_dim(self, input):
        k = self._dims
        if input.dim() not in (k + 1, k + 2):
            raise ValueError(f"expected {k + 1}D or {k + 2}D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        return F.pad(input, self.padding, "circular")

    def extra_repr(self):
        return f"{self.padding}"


class CircularPad1d(_CircularPadNd):
    """Pads the last dim of a (C, W) or (N, C, W) input circularly (wrapping around)."""
    _dims = 1


class CircularPad2d(_CircularPadNd):
    """Pads the last two dims of a (C, H, W) or (N, C, H, W) input circularly."""
    _dims = 2


class CircularPad3d(_CircularPadNd):
    """Pads the last three dims of a (C, D, H, W) or (N, C, D, H, W) input circularly."""
    _dims = 3


class _ConstantPadNd(Module):
    __constants__ = ["padding", "value"]
    _dims = 1

    def __init__(self, padding, value):
        super().__init__()
        self.value = value
        self.padding = _PARSE[self._dims](padding)

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with a constant ``value``."""
    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last two dims with a constant ``value``."""
    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last three dims with a constant ``value``."""
    _dims = 3


class ZeroPad1d(ConstantPad1d):
    """Pads the last dim with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pads the last two dims with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pads the last three dims with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class _ModePadNd(Module):
    __constants__ = ["padding"]
    _dims = 1
    _mode = "reflect"

    def __init__(self, padding):
        super().__init__()
        self.padding = _PARSE[self._dims](padding)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_ModePadNd):
    """Pads the last dim with the reflection of the input about its edge (the edge not repeated)."""
    _dims = 1


class ReflectionPad2d(_ModePadNd):
    """Pads the last two dims by reflection."""
    _dims = 2


class ReflectionPad3d(_ModePadNd):
    """Pads the last three dims by reflection."""
    _dims = 3


class ReplicationPad1d(_ModePadNd):
    """Pads the last dim by repeating the edge value."""
    _dims = 1
    _mode = "replicate"


class ReplicationPad2d(_ModePadNd):
    """Pads the last two dims by repeating the edge values."""
    _dims = 2
    _mode = "replicate"


class ReplicationPad3d(_ModePadNd):
    """Pads the last three dims by repeating the edge values."""
    _dims = 3
    _mode = "replicate"
