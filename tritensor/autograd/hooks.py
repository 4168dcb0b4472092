"""Autograd hooks: removable handles, node pre/post hooks, saved-tensor pack/unpack hooks.

torch's rules, followed here:

* ``Node.register_prehook(fn)``: ``fn(grad_outputs) -> None | grad_outputs`` runs before the node's
  backward, after the tensor hooks of its outputs; a returned tuple replaces the gradients.
* ``Node.register_hook(fn)``: ``fn(grad_inputs, grad_outputs) -> None | grad_inputs`` runs after
  the backward; a returned tuple replaces what goes on to the node's inputs.
* Replacements must be tuples (or lists) of the same length whose entries are Tensors or None,
  with the dtype, device and size of the value they replace (torch's check_variable_result).
* ``saved_tensors_hooks(pack, unpack)``: every tensor saved for backward while the context is
  active is stored as ``pack(tensor)`` and read back as ``unpack(packed)`` (torch.autograd.graph).
"""
from __future__ import annotations

import itertools
from collections import OrderedDict


class RemovableHandle:
    """torch.utils.hooks.RemovableHandle: ``remove()`` takes the hook out of its dict (any number
    of times); usable as a context manager."""
    _ids = itertools.count()

    __slots__ = ("_hooks", "id")

    def __init__(self, hooks: dict):
        self._hooks = hooks
        self.id = next(RemovableHandle._ids)

    def remove(self):
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def add_hook(hooks: dict, fn) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


class NodeHooks:
    """The hooks of one node, created on the first registration (most nodes never get one)."""
    __slots__ = ("pre", "post")

    def __init__(self):
        self.pre = OrderedDict()
        self.post = OrderedDict()


def _hook_name(fn):
    return getattr(fn, "__name__", type(fn).__name__)


def check_replacement(fn, old, new):
    """A hook's tuple of replacement gradients, validated entry by entry as torch does."""
    from ..tensor import Tensor
    if not isinstance(new, (tuple, list)):
        raise TypeError(f"expected tuple, but hook returned '{type(new).__name__}'")
    if len(new) != len(old):
        raise RuntimeError(f"hook '{_hook_name(fn)}' has returned an incorrect number of values "
                           f"(got {len(new)}, but expected {len(old)})")
    for o, n in zip(old, new):
        if n is None:
            continue
        if not isinstance(n, Tensor):
            raise TypeError(f"expected Variable, but hook returned '{type(n).__name__}'")
        if o is None:
            raise RuntimeError("can't replace a None gradient with a non-None value")
        check_same_meta(fn, o, n)
    return tuple(new)


def check_same_meta(fn, old, new):
    """torch's check_variable_result: a replacement keeps its value's dtype, device and size."""
    name = _hook_name(fn)
    if new.dtype is not old.dtype or new.device.type != old.device.type:
        raise RuntimeError(
            f"hook '{name}' has changed the type of value (was {old._type_description().split()[0]} "
            f"got {new._type_description().split()[0]})")
    if new.device != old.device:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {old.device} got {new.device})")
    if tuple(new.shape) != tuple(old.shape):
        raise RuntimeError(f"hook '{name}' has changed the size of value")


def run_prehooks(hooks, grad_outputs):
    for fn in list(hooks.values()):
        new = fn(grad_outputs)
        if new is not None:
            grad_outputs = check_replacement(fn, grad_outputs, new)
    return grad_outputs


def run_posthooks(hooks, grad_inputs, grad_outputs):
    for fn in list(hooks.values()):
        new = fn(grad_inputs, grad_outputs)
        if new is not None:
            grad_inputs = check_replacement(fn, grad_inputs, new)
    return grad_inputs


# ------------------------------------------------------------------ saved tensors hooks
# The active (pack, unpack) pairs, innermost last; SavedTensor reads the last one. A plain list
# so that the check on every saved tensor is one truth test.
_saved_hooks_stack: list = []
_disabled_message: list = []     # the message of disable_saved_tensors_hooks, innermost last


def current_saved_hooks():
    return _saved_hooks_stack[-1] if _saved_hooks_stack else None


class saved_tensors_hooks:
    """Context manager: tensors saved for backward inside it are stored as ``pack_hook(t)`` and
    given back to the backward as ``unpack_hook(packed)`` (torch.autograd.graph.saved_tensors_hooks).

    As in torch: pack hooks run with grad mode off and receive the saved tensor itself;
    the version counter is not checked for a tensor saved through hooks (the hooks may copy it);
    unpack must return a Tensor, which takes the saved tensor's place in the graph."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _disabled_message:
            raise RuntimeError(_disabled_message[-1])
        _saved_hooks_stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _saved_hooks_stack.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors live in host memory until backward needs them, then go back to their device
    (torch.autograd.graph.save_on_cpu). ``pin_memory=True`` stages them in pinned memory."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            if not pin_memory or tensor.device.type == "cpu":
                return tensor.device, tensor.cpu()
            from ..ops import creation
            packed = creation.empty(tuple(tensor.shape), dtype=tensor.dtype, pin_memory=True)
            packed.copy_(tensor)
            return tensor.device, packed

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


class disable_saved_tensors_hooks:
    """Inside it, entering saved_tensors_hooks raises RuntimeError(error_message) (torch's)."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        _disabled_message.append(self.error_message)
        return self

    def __exit__(self, *exc):
        _disabled_message.pop()


# ------------------------------------------------------------------ post accumulate grad hooks
def register_post_accumulate_grad_hook(tensor, hook):
    """Tensor.register_post_accumulate_grad_hook: leaves only; the hooks live on the tensor and
    run, in registration order, after its AccumulateGrad has updated ``.grad``."""
    if not tensor.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if tensor.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    hooks = tensor.__dict__.get("_post_accumulate_grad_hooks")
    if hooks is None:
        hooks = tensor.__dict__["_post_accumulate_grad_hooks"] = OrderedDict()
    return add_hook(hooks, hook)
