"""tt.optim.SGD: stochastic gradient descent, optionally with momentum (torch.optim.SGD)."""
from __future__ import annotations

from ..tensor import Tensor
from . import _functional as F
from .optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    """torch.optim.SGD(params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
    *, maximize=False, foreach=None, differentiable=False, fused=None).

    State per parameter: ``momentum_buffer`` (when momentum != 0), the first one a copy of the
    (weight-decayed) gradient. On cuda every group is updated by one fused launch per dtype,
    whatever ``foreach``/``fused`` say (they are recorded for torch-compatible state_dicts)."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize, "foreach": foreach,
                    "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state):
        super().__setstate__(state)
        self._restore_group_defaults(nesterov=False, maximize=False, foreach=None, differentiable=False,
                                     fused=False)

    def step(self, closure=None):
        """One optimization step; ``closure`` (re-evaluates the model, returns the loss) runs
        with gradients enabled and its loss is returned."""
        def update(group, params):
            momentum = group["momentum"]
            buffers = [self.state[p].get("momentum_buffer") for p in params] if momentum != 0 else []
            rule = F.sgd
            if group["differentiable"]:      # op by op, recorded by autograd
                from . import _rules as R
                rule = R.sgd
            rule(params, [p.grad for p in params], buffers, lr=group["lr"],
                 weight_decay=group["weight_decay"], momentum=momentum, dampening=group["dampening"],
                 nesterov=group["nesterov"], maximize=group["maximize"])
            if momentum != 0:
                for p, buf in zip(params, buffers):
                    self.state[p]["momentum_buffer"] = buf
        return self._step_groups(closure, update)
