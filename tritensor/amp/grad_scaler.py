"""tt.amp.GradScaler: dynamic loss scaling for mixed-precision training (torch.amp.GradScaler).

float16 gradients underflow where float32 ones do not. GradScaler multiplies the loss by a scale
(``scale(loss)``), so the backward pass runs on larger numbers; before the optimizer step it
divides the gradients by the scale again (``unscale_``) and checks them for inf/NaN, in ONE fused
launch per device and dtype (``_amp_foreach_non_finite_check_and_unscale_``). A step whose
gradients overflowed is skipped, and ``update()`` shrinks the scale (``backoff_factor``); after
``growth_interval`` clean steps it grows (``growth_factor``). The scale and the growth tracker
live on the device, so nothing is read back to the host except ``found_inf``, once per step, to
decide whether to step (as torch does).

torch's algorithm and error texts, stage by stage (READY -> UNSCALED -> STEPPED per optimizer,
reset by ``update``). torch lets an optimizer whose fused step takes ``grad_scale``/``found_inf``
(``_step_supports_amp_scaling``) skip the separate unscale; tritensor's optimizers do not take
them, so every optimizer goes the unscale-then-step way (the same results).
"""
from __future__ import annotations

import warnings
from collections import abc, defaultdict
from enum import Enum

from ..tensor import Tensor
from ._scaling import _amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_

__all__ = ["OptState", "GradScaler"]


class _MultiDeviceReplicator:
    """A tensor's copy per device, made on first use."""

    def __init__(self, master):
        self.master = master
        self._per_device_tensors = {}

    def get(self, device):
        copy = self._per_device_tensors.get(device)
        if copy is None:
            copy = self._per_device_tensors[device] = self.master.to(device=device, copy=True)
        return copy


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """torch.amp.GradScaler(device="cuda", init_scale=2.0**16, growth_factor=2.0,
    backoff_factor=0.5, growth_interval=2000, enabled=True)."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        from .. import cuda
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled and not cuda.is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev):
        from ..ops.creation import full
        from .. import dtypes
        self._scale = full((), self._init_scale, dtype=dtypes.float32, device=dev)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=dtypes.int32, device=dev)

    # ------------------------------------------------------------------ the steps of an iteration
    def scale(self, outputs):
        """outputs * scale: a Tensor, or an iterable (list, tuple, nested) of Tensors."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device)
        stash = []

        def apply_scale(val):
            if isinstance(val, Tensor):
                if not stash:
                    if self._scale is None:
                        self._lazy_init_scale_growth_tracker(val.device)
                    stash.append(_MultiDeviceReplicator(self._scale))
                return val * stash[0].get(val.device)
            if isinstance(val, abc.Iterable):
                scaled = map(apply_scale, val)
                if isinstance(val, (list, tuple)):
                    return type(val)(scaled)
                return scaled
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        per_device_inv_scale = _MultiDeviceReplicator(inv_scale)
        per_device_found_inf = _MultiDeviceReplicator(found_inf)
        grads_by_device_and_dtype = defaultdict(lambda: defaultdict(list))
        from ..autograd.grad_mode import no_grad
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, Tensor):
                        raise AssertionError(f"expected param to be torch.Tensor, got {type(param).__name__}")
                    if param.grad is None:
                        continue
                    if not allow_fp16 and param.grad.dtype.name == "float16":
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    grad = param.grad
                    if grad.is_sparse:
                        if grad.dtype.name == "float16":
                            param.grad = grad = grad.coalesce()
                        grad = grad._values()
                    grads_by_device_and_dtype[grad.device][grad.dtype].append(grad)
            for device, per_dtype in grads_by_device_and_dtype.items():
                for grads in per_dtype.values():
                    _amp_foreach_non_finite_check_and_unscale_(
                        grads, per_device_found_inf.get(device), per_device_inv_scale.get(device))
        return per_device_found_inf._per_device_tensors

    def unscale_(self, optimizer):
        """Divide the optimizer's gradients by the scale, in place (e.g. before clipping them);
        at most once per optimizer between updates."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        from .. import dtypes
        from ..ops.creation import full
        # 1 / scale in float64, rounded once to float32 (torch's scale.double().reciprocal().float())
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = full((), 0.0, dtype=dtypes.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, state, *args, **kwargs):
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            return optimizer.step(*args, **kwargs)
        return None

    def step(self, optimizer, *args, **kwargs):
        """unscale_ (if not done yet), then ``optimizer.step()`` unless a gradient is inf/NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        result = self._maybe_opt_step(optimizer, state, *args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale=None):
        """Back off after an overflow, grow after ``growth_interval`` clean steps; or set
        ``new_scale`` (a float or a one-element float32 tensor) directly."""
        if not self._enabled:
            return
        scale, growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if not isinstance(new_scale, Tensor) or new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1 or new_scale.requires_grad is True:
                    raise AssertionError(reason)
                scale.copy_(new_scale)
        else:
            found_infs = [found_inf.to(device=scale.device)
                          for state in self._per_optimizer_states.values()
                          for found_inf in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            combined = found_infs[0]
            for other in found_infs[1:]:
                combined += other
            _amp_update_scale_(scale, growth_tracker, combined, self._growth_factor, self._backoff_factor,
                               self._growth_interval)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    # ------------------------------------------------------------------ accessors and state
    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        if self._enabled:
            return self._init_scale if self._scale is None else self._scale.item()
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if self._enabled:
            return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker.item()
        return 0

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning "
                                     "of an iteration, or at the end after scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _check_inf_per_device(self, optimizer):
        from .. import dtypes
        from ..ops.creation import full
        scale, _ = self._check_scale_growth_tracker("_check_inf_per_device")
        dummy_inv_scale = full((), 1.0, dtype=dtypes.float32, device=scale.device)
        found_inf = full((), 0.0, dtype=dtypes.float32, device=scale.device)
        self._per_optimizer_states[id(optimizer)]["found_inf_per_device"] = self._unscale_grads_(
            optimizer, dummy_inv_scale, found_inf, True)
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer):
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]
