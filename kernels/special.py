"""Special-function FNs for the elementwise kernels (tt.special, lgamma, digamma, Bessel ...).

They join the vocabulary of kernels/elementwise.py (``UNARY``/``BINARY``/``TERNARY``, found by
their number of operands) exactly as the FNs defined there do; they live in their own file
because they are long (series and rational approximations) and have nothing to do with the
arithmetic core. Same rules: no libdevice (Triton's interpreter cannot run it), compute in the
dtype the launcher hands in (float32 or float64), helpers start with ``_``.
"""
import triton  # noqa: F401
import triton.language as tl  # noqa: F401
