"""tt.nn.utils.skip_init, as torch.nn.utils.init: build a module without initializing its
parameters and buffers."""
from __future__ import annotations

import inspect

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with its parameters left uninitialized (the memory of
    ``tt.empty``; no random numbers drawn), on ``kwargs["device"]`` (default cpu).

    torch builds the module on the meta device and then allocates (``to_empty``); tritensor has
    no meta device, so the module is built with its ``reset_parameters`` skipped, which is where
    every tritensor layer (and torch's) initializes. A custom module that initializes elsewhere in
    its ``__init__`` is initialized there as usual."""
    from ..modules.module import Module
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs["device"] = kwargs.pop("device", "cpu")
    # a throwaway subclass whose reset_parameters does nothing; the instance gets its own class back
    skipping = type(module_cls.__name__, (module_cls,), {"reset_parameters": lambda self, *a, **k: None,
                                                         "__module__": module_cls.__module__})
    module = skipping(*args, **kwargs)
    module.__class__ = module_cls
    return module
