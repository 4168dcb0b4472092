"""tt.nn.Parameter and tt.nn.Buffer, as torch.nn.parameter.

UninitializedParameter / UninitializedBuffer are the placeholders of the Lazy* modules: an empty
tensor of the right device and dtype, whose ``materialize(shape)`` gives it memory and turns it
into a Parameter / plain Tensor (``cls_to_become``), as torch.

A Parameter is a Tensor subclass that shares its data's storage (torch's ``_make_subclass``):
``Parameter(t)`` and ``t`` see the same memory, and ops on a Parameter return plain Tensors
(every op builds its output with ``Tensor._make``). Assigning a Parameter to a Module
attribute registers it (Module.__setattr__).
"""
from __future__ import annotations

import copy
from collections import OrderedDict

from ..tensor import Tensor

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


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


class UninitializedTensorMixin:
    """A parameter or buffer whose shape is not known yet (torch.nn.parameter's mixin).

    torch refuses every op on one through ``__torch_function__``; tritensor has no such hook:
    reading ``shape`` raises torch's RuntimeError (what load_state_dict meets), and a Lazy
    module materializes its placeholders before its forward uses them."""

    def materialize(self, shape, device=None, dtype=None):
        """Give the tensor memory of ``shape`` (uninitialized values, as torch.empty) on its
        device and dtype unless given, and make it a ``cls_to_become``."""
        from ..ops.creation import empty
        if device is None:
            device = self.device
        if dtype is None:
            dtype = self.dtype
        self.data = empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
            "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
            "`forward` to initialize the parameters before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
                           "initialize the parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


def is_lazy(param):
    """Whether ``param`` is an UninitializedParameter or UninitializedBuffer."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """``UninitializedParameter(requires_grad=True, device=None, dtype=None)``: a Parameter
    placeholder of a Lazy module, materialized at its first forward."""
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        from ..ops.creation import empty
        p = _alias(empty(0, device=device, dtype=dtype), cls)
        p._requires_grad = bool(requires_grad)
        return p

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.device, self.dtype)
        memo[id(self)] = result
        return result


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """``UninitializedBuffer(requires_grad=False, device=None, dtype=None, persistent=True)``:
    a buffer placeholder of a Lazy module (running statistics of LazyBatchNorm ...)."""
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        from ..ops.creation import empty
        t = _alias(empty(0, device=device, dtype=dtype), cls)
        t._requires_grad = bool(requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t
