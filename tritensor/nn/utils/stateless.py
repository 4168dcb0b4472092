"""tt.nn.utils.stateless.functional_call, as torch.nn.utils.stateless: call a module with some
of its parameters and buffers replaced for that one call (the module is restored afterwards).
Deprecated in torch 2.0 in favour of torch.func.functional_call (tt.func.functional_call)."""
from __future__ import annotations

import contextlib
import warnings

from ._named_member_accessor import NamedMemberAccessor

__all__ = ["functional_call"]


def _untie_named_tensors_map(module, parameters_and_buffers):
    """A copy of ``parameters_and_buffers`` where a value given for one of several tied names
    (the same tensor registered twice) is given for all of them; two different values for one
    tied tensor raise torch's ValueError."""
    all_named = dict(module.named_parameters(remove_duplicate=False))
    all_named.update(module.named_buffers(remove_duplicate=False))
    names_of = {}
    for name, tensor in all_named.items():
        names_of.setdefault(id(tensor), set()).add(name)
    tied_names_map = {n: names for names in names_of.values() if len(names) > 1 for n in names}
    given = set(parameters_and_buffers)
    given_tied = {n for n in given if n in tied_names_map}
    for name in given_tied:
        tied = tied_names_map[name]
        if (len(tied & given_tied) > 1
                and len({id(parameters_and_buffers[t]) for t in tied if t in parameters_and_buffers}) != 1):
            raise ValueError(f"functional_call got multiple values for keys {sorted(tied)}, "
                             "which are tied. Consider using tie_weights=False")
    untied = parameters_and_buffers.copy()
    for name in given_tied:
        for tied_name in tied_names_map[name]:
            untied[tied_name] = parameters_and_buffers[name]
    return untied


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False):
    untied = _untie_named_tensors_map(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    accessor = NamedMemberAccessor(module)
    if strict:
        missing_keys, unexpected_keys = accessor.check_keys(untied)
        error_msgs = []
        if unexpected_keys:
            error_msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected_keys))}.")
        if missing_keys:
            error_msgs.append(f"Missing key(s): {', '.join(map(repr, missing_keys))}.")
        if error_msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                module._get_name(), "\n\t".join(error_msgs)))
    orig = {}
    try:
        orig, _ = accessor.swap_tensors_dict(untied, allow_missing=True)
        yield
    finally:
        new, _ = accessor.swap_tensors_dict(orig, allow_missing=True)
        # an in-place update of a given tensor by forward (self.foo = self.foo + 1 rebinds) is
        # reported back in the caller's dict, as torch
        parameters_and_buffers.update({k: new[k] for k in parameters_and_buffers if k in new})


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True,
                     strict=False):
    from ..parallel import DataParallel
    if isinstance(module, DataParallel):
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True,
                    strict=False):
    """Call ``module(*args, **kwargs)`` with the parameters and buffers named in
    ``parameters_and_buffers`` replaced for this call (torch.nn.utils.stateless.functional_call).
    Deprecated, as in torch: use tt.func.functional_call."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be "
                  "removed in a future version of PyTorch. Please use `torch.func.functional_call` instead "
                  "which is a drop-in replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights,
                            strict=strict)
