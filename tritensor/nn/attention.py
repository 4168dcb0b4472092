"""tt.nn.attention: torch.nn.attention's backend selection for scaled_dot_product_attention.

tritensor has two implementations on every device: the fused flash path (the Triton kernels on
cuda, the blockwise NumPy reference on cpu) and the math formulation (tritensor ops holding the
L x S scores: twice differentiable, the only one giving a float mask a gradient). FLASH_ATTENTION,
EFFICIENT_ATTENTION, CUDNN_ATTENTION and OVERRIDEABLE all select the fused path; MATH the math one.
``sdpa_kernel`` restricts the choice inside its block, as torch's: a case no allowed backend can
run raises torch's error. ``set_priority`` is accepted (the fused path is always preferred).
"""
from __future__ import annotations

import contextlib
import enum

from ..ops import attention as _attention

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """torch.nn.attention.SDPBackend: the backends of scaled_dot_product_attention."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __repr__(self):
        return f"<SDPBackend.{self.name}: {self.value}>"

    def __str__(self):
        return f"SDPBackend.{self.name}"


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """torch.nn.attention.sdpa_kernel: only ``backends`` (one SDPBackend or a list) may run
    scaled_dot_product_attention inside the block; the previous choice comes back after it."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                             f"{type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(dict.fromkeys(backends))
    previous = _attention.set_enabled_backends(int(b) for b in backends)
    try:
        yield {}
    finally:
        _attention.set_enabled_backends(previous)
