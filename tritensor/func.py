"""tt.func: torch.func's functional_call (a module called with parameters and buffers given for
one call). torch.func's transforms (grad, vmap, jacrev ...) are not provided."""
from __future__ import annotations

from collections.abc import Sequence

__all__ = ["functional_call"]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True,
                    strict=False):
    """``module(*args, **kwargs)`` with the named parameters and buffers replaced for this call
    (torch.func.functional_call). ``parameter_and_buffer_dicts`` is a dict or a sequence of
    dicts with disjoint keys; ``tie_weights`` gives a value to every name of a tied tensor;
    ``strict`` requires exactly the module's names."""
    from .nn.utils.stateless import _functional_call
    if isinstance(parameter_and_buffer_dicts, dict):
        parameters_and_buffers = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated_keys = [k for k, n in counts.items() if n > 1]
        if repeated_keys:
            raise ValueError(f"{repeated_keys} appeared in multiple dictionaries; behavior of functional "
                             "call is ambiguous")
        parameters_and_buffers = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, "
                         f"but got {type(parameter_and_buffer_dicts)}")
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights,
                            strict=strict)
