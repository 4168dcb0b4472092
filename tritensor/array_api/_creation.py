"""The standard's creation functions: tritensor's factories with ``device=`` and the standard's
argument names (``n_rows``/``n_cols``/``k``, ``num``/``endpoint``, ``copy``)."""
from __future__ import annotations

import math
import operator

import numpy as np

import tritensor as tt

from ._helpers import ensure_array


def _shape(shape):
    return (operator.index(shape),) if not isinstance(shape, (tuple, list)) else tuple(shape)


def arange(start, /, stop=None, step=1, *, dtype=None, device=None):
    """Evenly spaced values in [start, stop): empty when the step points away from stop."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange() step must not be zero")
    if dtype is None and all(isinstance(v, int) for v in (start, stop, step)):
        dtype = tt.int64
    n = max(0, math.ceil((stop - start) / step))
    if n == 0:
        return tt.empty(0, dtype=dtype if dtype is not None else tt.get_default_dtype(), device=device)
    return tt.arange(start, stop, step, dtype=dtype, device=device)


def _negative_strides(obj):
    return isinstance(obj, np.ndarray) and any(s < 0 for s in obj.strides)


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """An array from an array, a (nested) sequence of Python scalars, or a buffer; ``copy=False``
    never copies (ValueError if it must), ``copy=True`` always does. A NumPy array with negative
    strides (``a[::-1]``) is copied unless ``copy=False``: torch.asarray refuses it even when
    asked to copy, the standard copies whenever a copy is allowed (scikit-learn's ``move_to``
    falls back on asarray for NumPy arrays)."""
    if copy is not False and _negative_strides(obj):
        obj, copy = np.ascontiguousarray(obj), None     # the fresh copy may be shared
    return tt.asarray(obj, dtype=dtype, device=device, copy=copy)


def empty(shape, *, dtype=None, device=None):
    """An uninitialised array of ``shape``."""
    return tt.empty(_shape(shape), dtype=dtype, device=device)


def zeros(shape, *, dtype=None, device=None):
    """An array of ``shape`` filled with zeros."""
    return tt.zeros(_shape(shape), dtype=dtype, device=device)


def ones(shape, *, dtype=None, device=None):
    """An array of ``shape`` filled with ones."""
    return tt.ones(_shape(shape), dtype=dtype, device=device)


def full(shape, fill_value, *, dtype=None, device=None):
    """An array of ``shape`` filled with ``fill_value`` (its dtype inferred from the value)."""
    if isinstance(fill_value, complex):
        raise TypeError("tritensor has no complex dtypes")
    return tt.full(_shape(shape), fill_value, dtype=dtype, device=device)


def _like(fn, name):
    def f(x, /, *, dtype=None, device=None):
        x = ensure_array(x)
        return fn(x, dtype=dtype or x.dtype, device=device if device is not None else x.device)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"The standard's ``{name}``: an array of x's shape (and dtype, device unless given)."
    return f


empty_like = _like(tt.empty_like, "empty_like")
zeros_like = _like(tt.zeros_like, "zeros_like")
ones_like = _like(tt.ones_like, "ones_like")


def full_like(x, /, fill_value, *, dtype=None, device=None):
    """An array of x's shape (and dtype, device unless given) filled with ``fill_value``."""
    x = ensure_array(x)
    return tt.full_like(x, fill_value, dtype=dtype or x.dtype, device=device if device is not None else x.device)


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None):
    """A 2-D array with ones on the k-th diagonal and zeros elsewhere."""
    n_cols = n_rows if n_cols is None else n_cols
    k = max(-n_rows, min(n_cols, operator.index(k)))    # past the corners: no diagonal (and no int64 overflow)
    rows = tt.arange(n_rows, device=device).unsqueeze(1)
    cols = tt.arange(n_cols, device=device).unsqueeze(0)
    return (cols - rows == k).to(dtype if dtype is not None else tt.get_default_dtype())


def from_dlpack(x, /, *, device=None, copy=None):
    """An array sharing the memory of any DLPack producer (``copy=True`` copies it). With
    ``copy=None`` a NumPy array with negative strides, which no tensor can view, is copied."""
    if copy is None and _negative_strides(x):
        copy = True
    return tt.from_dlpack(x, device=device, copy=copy)


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    """``num`` evenly spaced values from start to stop (stop included unless ``endpoint=False``)."""
    if isinstance(start, complex) or isinstance(stop, complex):
        raise TypeError("tritensor has no complex dtypes")
    if endpoint:
        return tt.linspace(start, stop, num, dtype=dtype, device=device)
    return tt.linspace(start, stop, num + 1, dtype=dtype, device=device)[:num]


def meshgrid(*arrays, indexing="xy"):
    """Coordinate arrays from 1-D arrays (``indexing``: "xy" Cartesian, "ij" matrix)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"indexing must be 'xy' or 'ij', got {indexing!r}")
    if not arrays:
        return []
    return list(tt.meshgrid(*[ensure_array(a) for a in arrays], indexing=indexing))


def tril(x, /, *, k=0):
    """x's lower triangle (on and below the k-th diagonal), zeros elsewhere."""
    return tt.tril(ensure_array(x), k)


def triu(x, /, *, k=0):
    """x's upper triangle (on and above the k-th diagonal), zeros elsewhere."""
    return tt.triu(ensure_array(x), k)
