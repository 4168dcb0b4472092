"""Python/NumPy scalar operands as op modules read them.

A leaf module: it imports no op module (tests/test_ops_layering.py checks).
"""
from __future__ import annotations

import numpy as np


def as_number(a):
    """A NumPy scalar (np.float32(2), np.int64(3), np.bool_) as the Python number it holds:
    torch reads them as it reads Python numbers (wrapped numbers in type promotion)."""
    return a.item() if isinstance(a, (np.number, np.bool_)) else a
