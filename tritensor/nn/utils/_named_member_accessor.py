"""Swap tensors in and out of a module tree by dotted name (torch.nn.utils._named_member_accessor):
the machinery under functional_call."""
from __future__ import annotations

from ...tensor import Tensor

_MISSING = object()   # the attribute did not exist before the swap


def _module_class():
    from ..modules.module import Module
    return Module


def swap_tensor(module, name, tensor, allow_missing=False):
    """Put ``tensor`` at ``module.<name>`` (a parameter or buffer slot is replaced without the
    Parameter check, as torch) and return what was there; ``_MISSING`` deletes it."""
    if not isinstance(module, _module_class()):
        raise TypeError(f"{module} is not an instance of torch.nn.Module")
    if tensor is not _MISSING and not isinstance(tensor, Tensor) and tensor is not None:
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    if "." in name:
        raise KeyError('tensor name can\'t contain "."')
    if name == "":
        raise KeyError('tensor name can\'t be empty string ""')
    for store in (module._parameters, module._buffers):
        if name in store:
            orig = store[name]
            if tensor is not _MISSING:
                store[name] = tensor
            else:
                del store[name]
            return orig
    if hasattr(module, name):
        orig = getattr(module, name)
    else:
        if not allow_missing:
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        orig = _MISSING
    if orig is not _MISSING and not isinstance(orig, Tensor) and orig is not None:
        raise TypeError(f"attribute `{name}`: {orig} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(module, name, tensor)
    elif hasattr(module, name):
        delattr(module, name)
    return orig


class NamedMemberAccessor:
    """Reads and swaps the tensors of ``module``'s tree by dotted name, caching the submodules."""

    def __init__(self, module):
        self.module = module
        self.memo = {}

    def get_submodule(self, name):
        if not name:
            return self.module
        if name in self.memo:
            return self.memo[name]
        prefix, dot, attr = name.rpartition(".")
        module = self.get_submodule(prefix) if dot else self.module
        try:
            submodule = getattr(module, attr)
        except AttributeError as ex:
            raise AttributeError(f"{module._get_name()} has no attribute `{attr}`") from ex
        if not isinstance(submodule, _module_class()):
            raise TypeError(f"submodule `{name}`: {submodule} is not an instance of torch.nn.Module")
        self.memo[name] = submodule
        return submodule

    def swap_tensor(self, name, value, allow_missing=False):
        prefix, _, attr = name.rpartition(".")
        return swap_tensor(self.get_submodule(prefix), attr, value, allow_missing=allow_missing)

    def swap_tensors_dict(self, named_tensors, allow_missing=False):
        """Swap every entry in; on failure put back what was swapped so far. Returns the
        originals and the names that did not exist before."""
        orig_named_tensors, missing_keys = {}, []
        try:
            for name, tensor in named_tensors.items():
                orig = self.swap_tensor(name, tensor, allow_missing=True)
                if orig is _MISSING:
                    missing_keys.append(name)
                orig_named_tensors[name] = orig
        except Exception:
            for name, orig in orig_named_tensors.items():
                self.swap_tensor(name, orig, allow_missing=True)
            raise
        if missing_keys and not allow_missing:
            for name, orig in orig_named_tensors.items():
                self.swap_tensor(name, orig, allow_missing=True)
            raise RuntimeError(f"Missing key(s): {', '.join(map(repr, missing_keys))}.")
        return orig_named_tensors, missing_keys

    def check_keys(self, keys):
        keys = set(keys)
        valid = {name for name, _ in self.module.named_parameters(remove_duplicate=False)}
        valid |= {name for name, _ in self.module.named_buffers(remove_duplicate=False)}
        return sorted(valid - keys), sorted(keys - valid)
