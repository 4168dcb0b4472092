"""tt.optim.Adadelta (torch.optim.Adadelta): an update in tritensor ops (torch does not fuse it)."""
from __future__ import annotations

from . import _rules as R
from ._state import check_lr, dense_grad, init_group
from .optimizer import Optimizer

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """torch.optim.Adadelta(params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
    capturable=False, maximize=False, differentiable=False).

    State per parameter: ``step``, ``square_avg``, ``acc_delta``."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "capturable": capturable, "foreach": foreach, "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._restore_group_defaults(foreach=None, maximize=False, differentiable=False, capturable=False)

    def step(self, closure=None):
        """One optimization step; ``closure`` (re-evaluates the model, returns the loss) runs
        with gradients enabled and its loss is returned."""
        def update(group, params):
            grads = [dense_grad(p, "Adadelta") for p in params]
            steps, (square_avg, acc_delta) = init_group(self, params, group["capturable"], ('square_avg', 'acc_delta'))
            R.increment_step_tensors(steps, group["capturable"])
            R.adadelta(params, grads, square_avg, acc_delta, lr=group["lr"], rho=group["rho"],
                       eps=group["eps"], weight_decay=group["weight_decay"], maximize=group["maximize"],
                       differentiable=group["differentiable"])
        return self._step_groups(closure, update)
