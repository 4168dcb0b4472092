"""assert_close: torch.testing.assert_close's rules, tolerances and mismatch report.

Inputs are compared as torch compares them: tensors with tensors (or NumPy arrays with NumPy
arrays), Python numbers with numbers, and sequences and mappings element by element, with the
failing item named at the end of the message. Tensors must agree in shape, and by default in
dtype and device, before their values are compared; values are close when
``|actual - expected| <= atol + rtol * |expected|`` (infinities must match exactly, NaN only with
``equal_nan``). Default tolerances are torch's, per dtype; with ``check_dtype=False`` two
different dtypes are compared in their promoted dtype with the looser of the two tolerances.
"""
from __future__ import annotations

import collections.abc
import math

import numpy as np

from .. import dtypes as _dt
from ..tensor import Size, Tensor

# torch/testing/_comparison.py: _DTYPE_PRECISIONS (rtol, atol); integers and bool compare exactly
DTYPE_PRECISIONS = {
    _dt.float16: (0.001, 1e-5),
    _dt.bfloat16: (0.016, 1e-5),
    _dt.float32: (1.3e-6, 1e-5),
    _dt.float64: (1e-7, 1e-7),
}


def default_tolerances(*inputs):
    """torch's (rtol, atol) for tensors, NumPy arrays or dtypes: the loosest among them."""
    rtols, atols = [0.0], [0.0]
    for x in inputs:
        d = _tensor_like_dtype(x)
        rtol, atol = DTYPE_PRECISIONS.get(d, (0.0, 0.0))
        rtols.append(rtol)
        atols.append(atol)
    return max(rtols), max(atols)


def _tensor_like_dtype(x):
    if isinstance(x, _dt.dtype):
        return x
    if isinstance(x, Tensor):
        return x.dtype
    if isinstance(x, np.ndarray):
        return _dt.from_numpy_dtype(x.dtype)
    return _dt.scalar_default_dtype(x) if isinstance(x, float) else None


class _Mismatch(AssertionError):
    """A failed comparison; ``path`` names the item of a container where it happened."""

    def __init__(self, msg, path=()):
        super().__init__(msg)
        self.msg, self.path = msg, path


class _TypeMismatch(TypeError):
    pass


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Assert that ``actual`` and ``expected`` are close (torch.testing.assert_close).

    ``msg`` replaces the message, or (a callable) rewrites it. Raises AssertionError with torch's
    report: how many elements mismatch, the greatest absolute and relative difference and where.
    """
    if (rtol is None) ^ (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'rtol' if rtol is None else 'atol'}.")
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                   check_device=check_device, check_dtype=check_dtype, check_stride=check_stride)
    try:
        _compare(actual, expected, (), options)
    except _Mismatch as e:
        text = e.msg
        if e.path:
            text += "\n\nThe failure occurred for item " + "".join(f"[{p!r}]" for p in e.path)
        if msg is not None:
            text = msg(text) if callable(msg) else msg
        raise AssertionError(text) from None


def _is_tensor_like(x):
    return isinstance(x, (Tensor, np.ndarray))


def _compare(actual, expected, path, options):
    if _is_tensor_like(actual) and _is_tensor_like(expected):
        if isinstance(actual, Tensor) != isinstance(expected, Tensor):
            _no_pair(actual, expected)
        if not options["allow_subclasses"] and type(actual) is not type(expected):
            _no_pair(actual, expected)
        return _compare_tensors(actual, expected, path, options)
    if isinstance(actual, bool) and isinstance(expected, bool):
        if actual != expected:
            raise _Mismatch(f"Booleans mismatch: {actual} is not {expected}", path)
        return
    if _is_number(actual) and _is_number(expected):
        return _compare_numbers(actual, expected, path, options)
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", path)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, path + (i,), options)
        return
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        missing = [k for k in expected if k not in actual]
        extra = [k for k in actual if k not in expected]
        if missing or extra:
            raise _Mismatch("The keys of the mappings do not match:\n"
                            f"Missing keys in the actual mapping: {sorted(missing, key=repr)}\n"
                            f"Additional keys in the actual mapping: {sorted(extra, key=repr)}", path)
        for k in expected:
            _compare(actual[k], expected[k], path + (k,), options)
        return
    _no_pair(actual, expected)


def _no_pair(actual, expected):
    raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and "
                    f"{type(expected)}.")


def _is_number(x):
    return isinstance(x, (int, float, np.number)) and not isinstance(x, np.bool_)


def _is_sequence(x):
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, (str, bytes))


def _compare_numbers(actual, expected, path, options):
    # torch compares a pair of Python numbers only when they are of one kind (int or float)
    kinds = (isinstance(actual, (float, np.floating)), isinstance(expected, (float, np.floating)))
    if kinds[0] != kinds[1]:
        raise _Mismatch(f"The (d)types do not match: {type(actual)} != {type(expected)}.", path)
    rtol, atol = options["rtol"], options["atol"]
    if rtol is None:
        rtol, atol = DTYPE_PRECISIONS[_dt.float64] if kinds[0] else (0.0, 0.0)
    a, e = actual, expected
    if a == e or (options["equal_nan"] and _isnan(a) and _isnan(e)):
        return
    if kinds[0] and not (math.isinf(a) or math.isinf(e)) and abs(a - e) <= atol + rtol * abs(e):
        return
    raise _Mismatch(_scalar_message(a, e, rtol, atol), path)


def _isnan(x):
    return isinstance(x, (float, np.floating)) and math.isnan(x)


def _scalar_message(actual, expected, rtol, atol, identifier="Scalars"):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_message(identifier, f"Expected {expected} but got {actual}.", abs_diff, None,
                             atol, rel_diff, None, rtol)


def _mismatch_message(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    """torch's _make_mismatch_msg, word for word."""
    equality = rtol == 0 and atol == 0

    def line(kind, diff, idx, tol):
        text = f"{kind.title()} difference: {diff}" if idx is None else \
            f"Greatest {kind} difference: {diff} at index {idx}"
        return text + ("" if equality else f" (up to {tol} allowed)") + "\n"

    text = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        text += f"{extra.strip()}\n"
    text += line("absolute", abs_diff, abs_idx, atol) + line("relative", rel_diff, rel_idx, rtol)
    return text.strip()


def _host_values(x):
    """(NumPy array of x's values on the host, its tritensor dtype)."""
    if isinstance(x, np.ndarray):
        return x, _dt.from_numpy_dtype(x.dtype)
    return np.asarray(x.detach().cpu().numpy()), x.dtype


def _attribute(name, a, e, path):
    if a != e:
        raise _Mismatch(f"The values for attribute '{name}' do not match: {a} != {e}.", path)


def _compare_tensors(actual, expected, path, options):
    if isinstance(actual, Tensor):
        _attribute("shape", actual.shape, expected.shape, path)
        if options["check_device"]:
            _attribute("device", actual.device, expected.device, path)
        if options["check_dtype"]:
            _attribute("dtype", actual.dtype, expected.dtype, path)
        if options["check_stride"] and actual.numel() > 0:
            _attribute("stride()", actual.stride(), expected.stride(), path)
    else:                                  # NumPy arrays are compared as the tensors they make
        _attribute("shape", Size(actual.shape), Size(expected.shape), path)
        if options["check_dtype"]:
            _attribute("dtype", _dt.from_numpy_dtype(actual.dtype), _dt.from_numpy_dtype(expected.dtype), path)
    a, a_dtype = _host_values(actual)
    e, e_dtype = _host_values(expected)
    rtol, atol = options["rtol"], options["atol"]
    if rtol is None:
        rtol, atol = default_tolerances(a_dtype, e_dtype)
    common = _dt.promote_types(a_dtype, e_dtype)
    a, e = a.astype(common.numpy_dtype), e.astype(common.numpy_dtype)
    matches = _isclose(a, e, rtol, atol, options["equal_nan"], common)
    if matches.all():
        return
    if a.ndim == 0:
        raise _Mismatch(_scalar_message(a.item(), e.item(), rtol, atol), path)
    raise _Mismatch(_tensor_message(a, e, matches, rtol, atol, common), path)


def _isclose(a, e, rtol, atol, equal_nan, dtype):
    """torch.isclose: exact equality for bool/integers, the tolerance rule for floats."""
    if not dtype.is_floating_point or (rtol == 0 and atol == 0):
        eq = a == e
        if dtype.is_floating_point and equal_nan:
            eq |= np.isnan(a) & np.isnan(e)
        return eq
    a64, e64 = a.astype(np.float64), e.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        close = (a64 == e64) | (np.abs(a64 - e64) <= atol + rtol * np.abs(e64))
    finite = np.isfinite(a64) & np.isfinite(e64)
    close &= finite | (a64 == e64)               # infinities are close only to themselves
    if equal_nan:
        close |= np.isnan(a64) & np.isnan(e64)
    return close


def _tensor_message(a, e, matches, rtol, atol, dtype):
    """torch's make_tensor_mismatch_msg: counts and the greatest differences among mismatches,
    computed in the compared dtype (integers widened to int64, as torch does)."""
    total = matches.size
    mismatched = total - int(matches.sum())
    extra = f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"
    a_flat, e_flat, m_flat = a.reshape(-1), e.reshape(-1), matches.reshape(-1)
    if not dtype.is_floating_point:
        a_flat, e_flat = a_flat.astype(np.int64), e_flat.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(a_flat - e_flat)
        abs_diff[m_flat] = 0
        # integer differences divide as torch's true division does: in the default float dtype
        denom = np.abs(e_flat) if dtype.is_floating_point else np.abs(e_flat).astype(np.float32)
        num = abs_diff if dtype.is_floating_point else abs_diff.astype(np.float32)
        rel_diff = num / denom
        rel_diff[m_flat] = 0
    abs_i, rel_i = _argmax_nan_first(abs_diff), _argmax_nan_first(rel_diff)
    return _mismatch_message("Tensor-likes", extra, abs_diff[abs_i].item(), _unravel(abs_i, a.shape),
                             atol, rel_diff[rel_i].item(), _unravel(rel_i, a.shape), rtol)


def _argmax_nan_first(x):
    """torch.max's index: NaN propagates, so the first NaN wins; else the first maximum."""
    if x.dtype.kind == "f":
        nan = np.isnan(x.astype(np.float64))
        if nan.any():
            return int(np.argmax(nan))
    return int(np.argmax(x))


def _unravel(flat, shape):
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()
