"""Backends: the NumPy reference (cpu) and the Triton launchers (cuda).

The package is also torch.backends' namespace (tt.backends.cuda.matmul.allow_tf32,
tt.backends.cudnn.benchmark / deterministic, tt.backends.mps.is_available()): the settings
modules cuda.py, cudnn.py and mps.py.
"""
from . import cudnn, mps  # noqa: F401  (tt.backends.cudnn, tt.backends.mps)
