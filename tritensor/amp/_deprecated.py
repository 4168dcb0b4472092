"""``tt.cuda.amp`` and ``tt.cpu.amp``: torch's older spellings, with torch's FutureWarnings."""
from __future__ import annotations

import types
import warnings

from . import autocast_mode as _mode
from .grad_scaler import GradScaler as _GradScaler


def _namespace(device_type):
    module = types.ModuleType(f"tritensor.{device_type}.amp", f"torch.{device_type}.amp's deprecated names")
    prefix = f"torch.{device_type}.amp"

    def warn(what, replacement):
        warnings.warn(f"`{prefix}.{what}(args...)` is deprecated. Please use `{replacement}` instead.",
                      FutureWarning, stacklevel=3)

    class autocast(_mode.autocast):
        def __init__(self, enabled=True, dtype=None, cache_enabled=True):
            warn("autocast", f"torch.amp.autocast('{device_type}', args...)")
            default = _mode.get_autocast_dtype(device_type)
            super().__init__(device_type, dtype=default if dtype is None else dtype, enabled=enabled,
                             cache_enabled=cache_enabled)

    class GradScaler(_GradScaler):
        def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                     enabled=True):
            warn("GradScaler", f"torch.amp.GradScaler('{device_type}', args...)")
            super().__init__(device_type, init_scale=init_scale, growth_factor=growth_factor,
                             backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)

    def custom_fwd(fwd=None, *, cast_inputs=None):
        warn("custom_fwd", f"torch.amp.custom_fwd(args..., device_type='{device_type}')")
        return _mode.custom_fwd(fwd, device_type=device_type, cast_inputs=cast_inputs)

    def custom_bwd(bwd):
        warn("custom_bwd", f"torch.amp.custom_bwd(args..., device_type='{device_type}')")
        return _mode.custom_bwd(bwd, device_type=device_type)

    autocast.__module__ = GradScaler.__module__ = module.__name__
    module.autocast, module.GradScaler = autocast, GradScaler
    if device_type == "cuda":
        module.custom_fwd, module.custom_bwd = custom_fwd, custom_bwd
    return module


cuda_amp = _namespace("cuda")
cpu_amp = _namespace("cpu")
