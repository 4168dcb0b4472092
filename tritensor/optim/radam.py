"""tt.optim.RAdam (torch.optim.RAdam): an update in tritensor ops (torch does not fuse it)."""
from __future__ import annotations

from . import _rules as R
from ._state import check_betas, check_lr, dense_grad, init_group
from .optimizer import Optimizer

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """torch.optim.RAdam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False, differentiable=False).

    State per parameter: ``step``, ``exp_avg``, ``exp_avg_sq``."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable, "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._restore_group_defaults(foreach=None, maximize=False, differentiable=False,
                                     decoupled_weight_decay=False, capturable=False)

    def step(self, closure=None):
        """One optimization step; ``closure`` (re-evaluates the model, returns the loss) runs
        with gradients enabled and its loss is returned."""
        def update(group, params):
            grads = [dense_grad(p, "RAdam") for p in params]
            steps, (exp_avg, exp_avg_sq) = init_group(self, params, group["capturable"], ('exp_avg', 'exp_avg_sq'))
            beta1, beta2 = group["betas"]
            R.radam(params, grads, exp_avg, exp_avg_sq,
                    R.increment_step_tensors(steps, group["capturable"]), beta1=beta1, beta2=beta2,
                    lr=group["lr"], weight_decay=group["weight_decay"], eps=group["eps"],
                    decoupled_weight_decay=group["decoupled_weight_decay"], differentiable=group["differentiable"],
                    maximize=group["maximize"], capturable=group["capturable"])
        return self._step_groups(closure, update)
