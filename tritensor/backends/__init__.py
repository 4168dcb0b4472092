"""Backends: the NumPy reference (cpu) and the Triton launchers (cuda).

The package is also torch.backends' namespace (tt.backends.cuda.matmul.allow_tf32,
tt.backends.cudnn.benchmark / deterministic, tt.backends.mps.is_available(),
tt.backends.mha.set_fastpath_enabled()): the settings modules cuda.py, cudnn.py, mps.py and mha.py.
"""
from . import cudnn, mha, mps  # noqa: F401  (tt.backends.cudnn, tt.backends.mha, tt.backends.mps)
