"""tt.nn: modules, parameters, the functional interface, init and utils, as torch.nn."""
from . import functional, init, utils  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter  # noqa: F401

__all__ = ["Parameter", "Buffer", "functional", "init", "utils", *_modules_all]
