"""The standard's manipulation and indexing functions over tritensor's views and joins."""
from __future__ import annotations

import operator

import tritensor as tt

from . import _dtypes
from ._helpers import dims, ensure_array


def _promoted(arrays):
    arrays = [ensure_array(a, "arrays[i]") for a in arrays]
    if not arrays:
        raise ValueError("expected a non-empty sequence of arrays")
    dtype = _dtypes.result_type(*arrays)
    return [a if a.dtype is dtype else a.to(dtype) for a in arrays]


def broadcast_arrays(*arrays):
    """The arrays broadcast against each other (a list of views)."""
    return list(tt.broadcast_tensors(*[ensure_array(a) for a in arrays]))


def broadcast_to(x, /, shape):
    """x broadcast to ``shape`` (a view)."""
    return tt.broadcast_to(ensure_array(x), tuple(shape))


def concat(arrays, /, *, axis=0):
    """The arrays joined along ``axis`` (flattened first when axis is None), promoted to one dtype."""
    arrays = _promoted(arrays)
    if axis is None:
        return tt.cat([a.reshape(-1) for a in arrays])
    return tt.cat(arrays, dim=axis)


def stack(arrays, /, *, axis=0):
    """The arrays (of one shape) joined along a new ``axis``, promoted to one dtype."""
    return tt.stack(_promoted(arrays), dim=axis)


def unstack(x, /, *, axis=0):
    """The slices of x along ``axis``, as a tuple of views."""
    x = ensure_array(x)
    if x.ndim == 0:
        raise ValueError("unstack() needs an array of at least one dimension")
    return tuple(tt.unbind(x, axis))


def expand_dims(x, /, axis=0):
    """x with a new axis of length one at ``axis`` (in [-ndim-1, ndim])."""
    x = ensure_array(x)
    axis = operator.index(axis)
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise IndexError(f"axis {axis} is out of bounds for array of dimension {x.ndim + 1}")
    return tt.unsqueeze(x, axis)


def flip(x, /, *, axis=None):
    """x reversed along ``axis`` (every axis when None)."""
    x = ensure_array(x)
    return tt.flip(x, dims(axis, x.ndim) if x.ndim else ())


def moveaxis(x, source, destination, /):
    """x with the axes ``source`` moved to ``destination`` (a view)."""
    return tt.moveaxis(ensure_array(x), source, destination)


def permute_dims(x, /, axes):
    """x with its axes permuted (a view)."""
    return tt.permute(ensure_array(x), tuple(axes))


def repeat(x, repeats, /, *, axis=None):
    """Each element repeated ``repeats`` times along ``axis`` (of the flattened array when None)."""
    x = ensure_array(x)
    if axis is None:
        x, axis = x.reshape(-1), 0
    if isinstance(repeats, tt.Tensor) and repeats.dtype is not tt.int64:
        repeats = repeats.to(tt.int64)          # any integer dtype (torch's kernel takes int64)
    return tt.repeat_interleave(x, repeats, dim=axis)


def reshape(x, /, shape, *, copy=None):
    """x with a new shape: a view when possible; ``copy=True`` always copies, ``copy=False``
    raises ValueError where a view cannot be had."""
    x = ensure_array(x)
    shape = tuple(shape)
    if copy is True:
        return tt.reshape(x.clone(), shape)
    if copy is False:
        try:
            return x.view(shape)
        except RuntimeError as e:
            raise ValueError(f"reshape(copy=False): no view of this array has shape {shape}") from e
    return tt.reshape(x, shape)


def roll(x, /, shift, *, axis=None):
    """x's elements shifted by ``shift`` along ``axis`` (of the flattened array when None), wrapping."""
    x = ensure_array(x)
    if axis is None:
        return tt.roll(x.reshape(-1), shift).reshape(x.shape)
    return tt.roll(x, shift, axis)


def squeeze(x, /, axis):
    """x without the axes ``axis``, which must have length one (else ValueError)."""
    x = ensure_array(x)
    axes = dims(axis, x.ndim)
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"cannot squeeze axis {a} of length {x.shape[a]}")
    return tt.squeeze(x, axes) if axes else x.view(x.shape)


def tile(x, repetitions, /):
    """x repeated ``repetitions`` times along each axis."""
    return tt.tile(ensure_array(x), tuple(repetitions))


def take(x, indices, /, *, axis=None):
    """The elements of x at ``indices`` (1-D) along ``axis`` (needed unless x is 1-D); negative
    indices count from the end."""
    x, indices = ensure_array(x), ensure_array(indices, "indices")
    if axis is None:
        if x.ndim > 1:
            raise ValueError("take() needs axis for an array of more than one dimension")
        axis = 0
    (axis,) = dims(axis, x.ndim)
    n = x.shape[axis] if x.ndim else 1
    indices = tt.where(indices < 0, indices + n, indices)
    return tt.index_select(x, axis, indices)


def take_along_axis(x, indices, /, *, axis=-1):
    """The elements of x at ``indices`` along ``axis`` (indices has x's number of dimensions)."""
    x, indices = ensure_array(x), ensure_array(indices, "indices")
    (axis,) = dims(axis, x.ndim)
    indices = tt.where(indices < 0, indices + x.shape[axis], indices)
    return tt.take_along_dim(x, indices, dim=axis)
