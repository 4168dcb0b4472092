"""NumPy references of the special functions (tt.special, lgamma, digamma, Bessel ...): the cpu
device runs them and the tests check the kernels (kernels/special.py) against them.

``numpy_ref.elementwise(name)`` finds a function here by the op's name. Arrays only (no Tensor),
vectorised (no Python loop over elements), computed in the dtype handed in.
"""
from __future__ import annotations

import numpy as np  # noqa: F401
