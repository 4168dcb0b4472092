"""Per-parameter state shared by the optimizers: step counters where torch keeps them, and the
checks every _init_group makes."""
from __future__ import annotations

from ..ops.creation import zeros, zeros_like
from . import _rules as R
from .adam import _scalar_dtype, new_step_counter


def step_counter(p, on_device):
    """A 0-d step counter: on the parameter's device when the step must not leave it
    (capturable, fused), else a cpu tensor (torch's layout, read on the host without a sync)."""
    if on_device:
        return zeros((), dtype=_scalar_dtype(), device=p.device)
    return new_step_counter()


def init_group(optimizer, params, capturable, buffers):
    """torch's _init_group for an optimizer whose state is a step counter and zero buffers: the
    state made at a parameter's first step, the capturable check; returns the step counters and,
    per name in ``buffers``, the list of that buffer over ``params``."""
    for p in params:
        state = optimizer.state[p]
        if len(state) == 0:
            state["step"] = step_counter(p, capturable)
            for name in buffers:
                state[name] = zeros_like(p)
    steps = [optimizer.state[p]["step"] for p in params]
    if capturable:
        R.check_capturable(params, steps)
    return steps, [[optimizer.state[p][name] for p in params] for name in buffers]


def dense_grad(p, name):
    """The gradient of ``p``; torch's error for a sparse one."""
    if p.grad.is_sparse:
        raise RuntimeError(f"{name} does not support sparse gradients")
    return p.grad


def check_lr(lr):
    """The learning-rate checks every optimizer makes first."""
    from ..tensor import Tensor
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def check_betas(betas):
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
