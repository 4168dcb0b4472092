"""The two loss-scaling ops GradScaler is built on, with torch's names and semantics:
``_amp_foreach_non_finite_check_and_unscale_`` and ``_amp_update_scale_``.

Like the optimizers' update rules (optim/_functional.py) they update lists of tensors in place,
per device: on cpu NumPy on the tensors' memory; on cuda ONE fused Triton launch per dtype for
the whole gradient list (kernels/amp.py), and one single-program launch for the scale update,
so neither reads anything back to the host (the step is skipped by GradScaler, which reads
``found_inf`` once per optimizer, as torch's does).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..tensor import Tensor

_FLOATS = ("float16", "bfloat16", "float32", "float64")


def _check_one_element_float(t, name):
    if t.numel() != 1:
        raise RuntimeError(f"{name} must be a 1-element tensor.")
    if t.dtype.name != "float32":
        raise RuntimeError(f"{name} must be a float tensor.")


def _compute(dtype):
    return np.float64 if dtype.name == "float64" else np.float32


def _amp_foreach_non_finite_check_and_unscale_(self, found_inf, inv_scale):
    """torch._amp_foreach_non_finite_check_and_unscale_(scaled_grads, found_inf, inv_scale):
    multiplies every tensor of ``scaled_grads`` in place by ``inv_scale`` (in float32, float64
    for float64 tensors) and sets ``found_inf`` to 1.0 if any value is inf or NaN (it is never
    reset to 0 here). ``found_inf`` and ``inv_scale`` are one-element float32 tensors on the
    tensors' device."""
    grads = list(self)
    _check_one_element_float(found_inf, "found_inf")
    _check_one_element_float(inv_scale, "inv_scale")
    device = found_inf.device
    if inv_scale.device != device:
        raise RuntimeError("found_inf and inv_scale must be on the same device.")
    groups = {}
    for g in grads:
        if not isinstance(g, Tensor):
            raise TypeError(f"_amp_foreach_non_finite_check_and_unscale_(): expected a list of Tensors, "
                            f"got {type(g).__name__}")
        if g.device != device:
            raise RuntimeError(f"scaled_grads must be on the same device as found_inf ({device}), "
                               f"got a tensor on {g.device}.")
        if g.dtype.name not in _FLOATS:
            where = "cpu" if device.type == "cpu" else "cuda"
            raise NotImplementedError(f'"_amp_foreach_non_finite_check_and_unscale_{where}" not implemented '
                                      f"for '{_dt.type_name(g.dtype)}'")
        if g.numel():
            groups.setdefault(g.dtype, []).append(g)
    if not groups:
        return
    if device.type == "cpu":
        inv = float(inv_scale._host_view().reshape(-1)[0])
        found = False
        for dtype, tensors in groups.items():
            compute = _compute(dtype)
            factor = compute(inv)
            for g in tensors:
                host = g._host_view()
                values = host.astype(compute)
                found = found or not np.isfinite(values).all()
                if factor != 1:
                    host[...] = values * factor          # rounded to the tensor's dtype once
                g._version_counter.value += 1
        if found:
            found_inf._host_view().reshape(-1)[0] = 1.0
            found_inf._version_counter.value += 1
        return
    from ..backends.triton import amp as triton_amp
    from ..optim._functional import _Staging
    for tensors in groups.values():
        staging = _Staging()
        staged = [staging.written(g) for g in tensors]
        triton_amp.unscale(staged, found_inf, inv_scale)
        staging.finish()
        for g in tensors:
            g._version_counter.value += 1
    found_inf._version_counter.value += 1


def _amp_update_scale_(self, growth_tracker, found_inf, scale_growth_factor, scale_backoff_factor,
                       growth_interval):
    """torch._amp_update_scale_(current_scale, growth_tracker, found_inf, scale_growth_factor,
    scale_backoff_factor, growth_interval): after an overflow (found_inf != 0) the scale is
    multiplied by the backoff factor and the tracker reset; otherwise the tracker counts the
    step, and at ``growth_interval`` successful steps the scale is multiplied by the growth
    factor (kept only if finite) and the tracker reset. Returns ``current_scale``."""
    scale = self
    if scale.numel() != 1:
        raise RuntimeError("current_scale must be a 1-element tensor.")
    if growth_tracker.numel() != 1:
        raise RuntimeError("growth_tracker must be a 1-element tensor.")
    if found_inf.numel() != 1:
        raise RuntimeError("found_inf must be a 1-element tensor.")
    if scale.dtype.name != "float32":
        raise RuntimeError("current_scale must be a float tensor.")
    if growth_tracker.dtype.name != "int32":
        raise RuntimeError("growth_tracker must be an int tensor.")
    if found_inf.dtype.name != "float32":
        raise RuntimeError("found_inf must be a float tensor.")
    if not (scale.device == growth_tracker.device == found_inf.device):
        raise RuntimeError("current_scale, growth_tracker and found_inf must be on the same device.")
    if scale.device.type == "cpu":
        s = scale._host_view().reshape(-1)
        t = growth_tracker._host_view().reshape(-1)
        if float(found_inf._host_view().reshape(-1)[0]):
            s[0] = np.float32(np.float64(s[0]) * scale_backoff_factor)
            t[0] = 0
        else:
            successful = int(t[0]) + 1
            if successful == growth_interval:
                with np.errstate(over="ignore"):       # an overflow to inf is the case tested next
                    grown = np.float32(np.float64(s[0]) * scale_growth_factor)
                if np.isfinite(grown):
                    s[0] = grown
                t[0] = 0
            else:
                t[0] = successful
    else:
        from ..backends.triton import amp as triton_amp
        triton_amp.update_scale(scale, growth_tracker, found_inf, scale_growth_factor, scale_backoff_factor,
                                growth_interval)
    scale._version_counter.value += 1
    growth_tracker._version_counter.value += 1
    return scale
