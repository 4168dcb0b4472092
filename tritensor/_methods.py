"""Tensor methods and operators, generated from the op declarations (ops/surface.py).

Every method, in-place method and operator of an op is declared next to its table entry (or in
ops/declarations.py) and bound here: nothing is listed twice. Tensor's own attributes (shape,
dtype, grad, backward ...) are written in tensor.py.
"""
from __future__ import annotations

from .ops import declarations  # noqa: F401  (imports every declaring op module)
from .ops import surface as _surface
from .tensor import Tensor

_surface.install_methods(Tensor)
