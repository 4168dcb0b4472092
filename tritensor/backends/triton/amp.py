"""Launchers of the loss-scaling kernels (kernels/amp.py).

``unscale`` takes the gradients of one device and one dtype, all contiguous (the amp layer
stages anything else), and unscales them with ONE launch through the fused optimizers' table
machinery (backends/triton/optim.py). ``update_scale`` is one single-program launch; its
float64 factors travel as bit patterns in a 3-word table.
"""
from __future__ import annotations

import numpy as np

from .. import triton as tb
from ._memory import upload
from .optim import _launch, _numels

_K = None


def _kernels():
    global _K
    if _K is None:
        from tritensor.kernels import amp as amp_k
        _K = amp_k
    return _K


def unscale(grads, found_inf, inv_scale):
    """grads *= inv_scale in place; found_inf (float32, one element) = 1 if any is inf/NaN."""
    return _launch(_kernels().amp_unscale_kernel, [], _numels(grads), [grads], [], grads[0],
                   extra=(tb.pointer(found_inf), tb.pointer(inv_scale)))


def update_scale(scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval):
    words = np.array([np.float64(growth_factor).view(np.int64), np.float64(backoff_factor).view(np.int64),
                      int(growth_interval)], dtype=np.int64)
    table = upload(scale, words)
    tb._run(_kernels().amp_update_scale_kernel, (1,), tb.pointer(scale), tb.pointer(growth_tracker),
            tb.pointer(found_inf), tb.pointer(table), num_warps=1)
    return 1
