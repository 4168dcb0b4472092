"""tt.optim.Adamax (torch.optim.Adamax): an update in tritensor ops (torch does not fuse it)."""
from __future__ import annotations

from . import _rules as R
from ._state import check_betas, check_lr, dense_grad, init_group
from .optimizer import Optimizer

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """torch.optim.Adamax(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
    maximize=False, differentiable=False, capturable=False).

    State per parameter: ``step``, ``exp_avg``, ``exp_inf``."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._restore_group_defaults(foreach=None, maximize=False, differentiable=False, capturable=False)

    def step(self, closure=None):
        """One optimization step; ``closure`` (re-evaluates the model, returns the loss) runs
        with gradients enabled and its loss is returned."""
        def update(group, params):
            grads = [dense_grad(p, "Adamax") for p in params]
            steps, (exp_avg, exp_inf) = init_group(self, params, group["capturable"], ('exp_avg', 'exp_inf'))
            beta1, beta2 = group["betas"]
            R.adamax(params, grads, exp_avg, exp_inf,
                     R.increment_step_tensors(steps, group["capturable"]), eps=group["eps"], beta1=beta1,
                     beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"], maximize=group["maximize"],
                     differentiable=group["differentiable"], capturable=group["capturable"])
        return self._step_groups(closure, update)
