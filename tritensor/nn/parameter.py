"""tt.nn.Parameter and tt.nn.Buffer, as torch.nn.parameter.

A Parameter is a Tensor subclass that shares its data's storage (torch's ``_make_subclass``):
``Parameter(t)`` and ``t`` see the same memory, and ops on a Parameter return plain Tensors
(every op builds its output with ``Tensor._make``). Assigning a Parameter to a Module
attribute registers it (Module.__setattr__).
"""
from __future__ import annotations

import copy
from collections import OrderedDict

from ..tensor import Tensor

__all__ = ["Parameter", "Buffer"]


def _alias(data, cls):
    """A new object of class ``cls`` over ``data``'s memory, with fresh autograd fields (torch:
    the data is detached) but sharing its version counter."""
    return cls._make(data._storage, data._shape, data._stride, data._offset, data.dtype,
                     data._version_counter)


class Parameter(Tensor):
    """``tt.nn.Parameter(data=None, requires_grad=True)``: a leaf tensor that a Module registers
    as a parameter. ``data=None`` gives an empty float tensor, as torch."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not {type(data).__name__}")
        p = _alias(data, cls)
        if requires_grad and not data.dtype.is_floating_point:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        p._requires_grad = bool(requires_grad)
        return p

    def __init__(self, data=None, requires_grad=True):
        pass   # all the work is in __new__ (Tensor has no __init__ of its own)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        from ..ops.copy import clone
        result = type(self)(clone(self.detach()), self.requires_grad)
        if self._grad is not None:
            result._grad = copy.deepcopy(self._grad, memo)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        # torch pickles a Parameter as torch._utils._rebuild_parameter(data, requires_grad, hooks)
        return (_rebuild_parameter, (self.detach(), self.requires_grad, OrderedDict()))


def _rebuild_parameter(data, requires_grad, backward_hooks):
    """Unpickling counterpart of Parameter.__reduce_ex__ (torch._utils._rebuild_parameter)."""
    return Parameter(data, requires_grad)


class _BufferMeta(type):
    # isinstance(t, Buffer) is true for tensors made by Buffer(...), as torch's _BufferMeta
    def __instancecheck__(cls, instance):
        if cls is Buffer:
            return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """``tt.nn.Buffer(data, *, persistent=True)``: marks a tensor to be registered as a buffer
    when assigned to a Module attribute. As in torch, the result is a plain Tensor (detached
    from data's history) carrying the flags ``persistent`` and ``_is_buffer``."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t
