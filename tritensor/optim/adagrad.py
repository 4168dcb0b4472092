"""tt.optim.Adagrad (torch.optim.Adagrad): one of torch's fused optimizers, and here too: on cuda
every group is updated by one fused Triton launch per dtype (kernels/optim.py adagrad_kernel)."""
from __future__ import annotations

from ..ops.creation import full_like
from . import _functional as F
from . import _rules as R
from ._state import check_lr, step_counter
from .optimizer import Optimizer

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """torch.optim.Adagrad(params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
    eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None).

    State per parameter (created at construction, as torch's): ``step`` (a 0-d float32 cpu
    tensor, also when fused, where torch keeps it on the device) and ``sum``. ``differentiable=True`` runs the update in
    tritensor ops with autograd recording it; otherwise cpu updates with NumPy and cuda with one
    fused launch per dtype."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        for group in self.param_groups:
            for p in group["params"]:
                self._new_state(group, p)

    def _new_state(self, group, p):
        state = self.state[p]
        # on the host even when fused (torch keeps it on the device there): the fused launch takes
        # the decayed lr computed on the host from it, without a launch and a sync per tensor
        state["step"] = step_counter(p, False)
        state["sum"] = full_like(p, self.defaults["initial_accumulator_value"])

    def __setstate__(self, state):
        super().__setstate__(state)
        self._restore_group_defaults(foreach=None, maximize=False, differentiable=False, fused=None)

    def step(self, closure=None):
        """One optimization step; ``closure`` (re-evaluates the model, returns the loss) runs
        with gradients enabled and its loss is returned."""
        def update(group, params):
            grads = [p.grad for p in params]
            for p in params:
                if len(self.state[p]) == 0:
                    self._new_state(group, p)
            sums = [self.state[p]["sum"] for p in params]
            steps = [self.state[p]["step"] for p in params]
            options = dict(lr=group["lr"], weight_decay=group["weight_decay"], lr_decay=group["lr_decay"],
                           eps=group["eps"], maximize=group["maximize"])
            if group["differentiable"] or any(g.is_sparse for g in grads):
                # sparse gradients (torch's Adagrad takes them) and autograd-recorded steps: op by op
                R.adagrad(params, grads, sums, R.increment_step_tensors(steps, False),
                          differentiable=group["differentiable"], **options)
            else:
                F.adagrad(params, grads, sums, steps, **options)
        return self._step_groups(closure, update)
