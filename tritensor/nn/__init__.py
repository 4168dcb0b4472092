"""tt.nn: modules, parameters, the functional interface, init and utils, as torch.nn."""
from . import attention, functional, init, parallel, utils  # noqa: F401
from .parallel import DataParallel  # noqa: F401  (torch.nn.DataParallel)
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "DataParallel", "attention", "functional", "init", "parallel", "utils", *_modules_all]
