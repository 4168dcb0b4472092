"""make_tensor: torch.testing.make_tensor's signature, value ranges and errors.

One departure, on purpose: the values are always drawn by the cpu generator and then moved to
``device``. torch draws on the device's own generator, so the same seed gives different values
on cpu and cuda; here the same seed gives the same values on every device, which is what a test
that runs one body on cpu and on cuda and compares the results needs.
"""
from __future__ import annotations

import collections.abc
import math
import warnings

from .. import dtypes as _dt


def _limits(dtype):
    if dtype.is_floating_point:
        info = _dt.finfo(dtype)
        return info.min, info.max
    info = _dt.iinfo(dtype)
    return info.min, info.max + (1 if dtype is not _dt.int64 else 0)


def _low_high(low, high, dtype, default_low, default_high):
    """torch's modify_low_high: defaults, checks, clamping to the dtype's range."""
    lowest_inclusive, highest_exclusive = _limits(dtype)
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype.is_floating_point:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types "
                      "is deprecated since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.",
                      FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest_inclusive or low >= highest_exclusive:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), but "
                         f"{dtype} only supports [{lowest_inclusive}, {highest_exclusive})")
    low = min(max(low, lowest_inclusive), highest_exclusive)
    high = min(max(high, lowest_inclusive), highest_exclusive)
    if not dtype.is_floating_point:
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of ``shape`` filled with random values, as torch.testing.make_tensor.

    Floats are uniform in [low, high) (default [-9, 9)), integers in [low, high) (default
    [-9, 10), clamped to the dtype), bools are random. ``noncontiguous`` returns a view with
    every other element of a twice-as-wide last dim (when the tensor has more than one
    element); ``exclude_zero`` replaces zeros by 1 (integers) or the dtype's tiny (floats).
    """
    import tritensor as tt
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(int(s) for s in shape)
    dtype = _dt.as_dtype(dtype)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, but "
                         f"got noncontiguous={noncontiguous} and memory_format={memory_format}")
    if memory_format is not None and memory_format != "contiguous_format":
        raise NotImplementedError("make_tensor: tritensor has only the contiguous memory format")
    if requires_grad and not dtype.is_floating_point:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral dtypes, but got "
                         f"dtype={dtype}")
    numel = math.prod(shape)
    noncontiguous = noncontiguous and numel > 1
    if noncontiguous:
        shape = shape[:-1] + (2 * shape[-1],)

    if dtype is _dt.bool_:
        result = tt.randint(0, 2, shape, dtype=dtype)
    elif not dtype.is_floating_point:
        low, high = _low_high(low, high, dtype, -9, 10)
        result = tt.randint(low, high, shape, dtype=dtype)
    else:
        low, high = _low_high(low, high, dtype, -9, 9)
        result = tt.empty(shape, dtype=dtype)
        if high - low >= _dt.finfo(dtype).max:      # the width would overflow: draw half, double
            result.uniform_(low / 2, high / 2).mul_(2)
        else:
            result.uniform_(low, high)
    if noncontiguous:
        result = result[..., ::2]
    if exclude_zero:
        result[result == 0] = 1 if not dtype.is_floating_point else _dt.finfo(dtype).tiny
    result = result.to(device)
    if noncontiguous and result.is_contiguous():
        # .to() of a cpu tensor onto cuda copies it compact: rebuild the strided view there
        wide = tt.empty(shape, dtype=dtype, device=device)
        wide[..., ::2] = result
        result = wide[..., ::2]
    if dtype.is_floating_point:
        result.requires_grad_(requires_grad)
    return result
