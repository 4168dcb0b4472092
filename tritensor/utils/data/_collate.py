"""default_collate / default_convert / pin_memory: torch.utils.data._utils.collate's rules.

default_collate turns a list of samples into a batch: tensors are stacked along a new first dim,
NumPy arrays and NumPy scalars become tensors, Python floats a float64 tensor, ints (and bools) an
int64 (bool) tensor, strings stay a list; dicts are collated key by key, namedtuples field by
field, and other sequences are transposed (a tuple gives a list, as torch keeps for backward
compatibility).
"""
from __future__ import annotations

import collections.abc
import copy
import re

import numpy as np

from ... import dtypes as _dt
from ...ops.creation import as_tensor, tensor
from ...ops.joining import stack
from ...tensor import Tensor

__all__ = ["default_collate", "default_convert", "pin_memory"]

_NP_STR_OBJ = re.compile(r"[SaUO]")
_COLLATE_ERR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _is_numpy(elem):
    t = type(elem)
    return t.__module__ == "numpy" and t.__name__ not in ("str_", "string_", "bytes_")


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def default_convert(data):
    """Turn NumPy arrays (and arrays inside containers) into tensors, without batching: what a
    DataLoader with batch_size=None applies to each sample."""
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if _is_numpy(data):
        if elem_type.__name__ == "ndarray" and _NP_STR_OBJ.search(data.dtype.str) is not None:
            return data       # arrays of strings or objects stay arrays
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            clone = copy.copy(data)
            clone.update({key: default_convert(data[key]) for key in data})
            return clone
        except TypeError:    # the mapping cannot be copied or updated
            return {key: default_convert(data[key]) for key in data}
    if _is_namedtuple(data):
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """Collate a list of samples into a batch (torch.utils.data.default_collate)."""
    elem = batch[0]
    elem_type = type(elem)
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if _is_numpy(elem):
        if elem_type.__name__ in ("ndarray", "memmap"):
            if _NP_STR_OBJ.search(elem.dtype.str) is not None:
                raise TypeError(_COLLATE_ERR.format(elem.dtype))
            return default_collate([as_tensor(np.asarray(b)) for b in batch])
        if elem.shape == ():   # NumPy scalars
            return as_tensor(np.asarray(batch))
        raise TypeError(_COLLATE_ERR.format(elem_type))
    if isinstance(elem, float):
        return tensor(batch, dtype=_dt.float64)
    if isinstance(elem, int):          # bools too: a bool tensor
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            clone = copy.copy(elem)
            clone.update({key: default_collate([d[key] for d in batch]) for key in elem})
            return clone
        except TypeError:
            return {key: default_collate([d[key] for d in batch]) for key in elem}
    if _is_namedtuple(elem):
        return elem_type(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = default_collate(samples)
                return clone
            return elem_type([default_collate(samples) for samples in transposed])
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(_COLLATE_ERR.format(elem_type))


def pin_memory(data, device=None):
    """Pin every tensor of a batch (Tensor.pin_memory), walking containers as default_collate builds them."""
    if isinstance(data, Tensor):
        return data.pin_memory() if device is None else data.pin_memory(device)
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        try:
            clone = copy.copy(data)
            clone.update({k: pin_memory(sample, device) for k, sample in data.items()})
            return clone
        except TypeError:
            return {k: pin_memory(sample, device) for k, sample in data.items()}
    if _is_namedtuple(data):
        return type(data)(*(pin_memory(sample, device) for sample in data))
    if isinstance(data, tuple):
        return [pin_memory(sample, device) for sample in data]
    if isinstance(data, collections.abc.Sequence):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, item in enumerate(data):
                    clone[i] = pin_memory(item, device)
                return clone
            return type(data)([pin_memory(sample, device) for sample in data])
        except TypeError:
            return [pin_memory(sample, device) for sample in data]
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    return data
