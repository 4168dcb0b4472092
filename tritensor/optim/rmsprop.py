"""tt.optim.RMSprop (torch.optim.RMSprop)."""
from __future__ import annotations

from ..ops.creation import zeros_like
from ..tensor import Tensor
from . import _functional as F
from ._state import step_counter
from .optimizer import Optimizer

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """torch.optim.RMSprop(params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
    centered=False, capturable=False, foreach=None, maximize=False, differentiable=False).

    State per parameter: ``step``, ``square_avg``, ``momentum_buffer`` (momentum > 0) and
    ``grad_avg`` (centered). On cuda every group is updated by one fused launch per dtype."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                    "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._restore_group_defaults(momentum=0, centered=False, foreach=None, maximize=False,
                                     differentiable=False, capturable=False)

    def _init_group(self, group, params):
        square_avgs, momentum_buffers, grad_avgs, steps = [], [], [], []
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                state["step"] = step_counter(p, group["capturable"])
                state["square_avg"] = zeros_like(p)
                if group["momentum"] > 0:
                    state["momentum_buffer"] = zeros_like(p)
                if group["centered"]:
                    state["grad_avg"] = zeros_like(p)
            square_avgs.append(state["square_avg"])
            steps.append(state["step"])
            if group["momentum"] > 0:
                momentum_buffers.append(state["momentum_buffer"])
            if group["centered"]:
                grad_avgs.append(state["grad_avg"])
        return square_avgs, grad_avgs, momentum_buffers, steps

    def step(self, closure=None):
        """One optimization step; ``closure`` (re-evaluates the model, returns the loss) runs
        with gradients enabled and its loss is returned."""
        def update(group, params):
            square_avgs, grad_avgs, momentum_buffers, steps = self._init_group(group, params)
            options = dict(lr=group["lr"], alpha=group["alpha"], eps=group["eps"],
                           weight_decay=group["weight_decay"], momentum=group["momentum"],
                           centered=group["centered"], maximize=group["maximize"])
            grads = [p.grad for p in params]
            if group["capturable"] or group["differentiable"]:
                from . import _rules as R
                if group["capturable"]:
                    R.check_capturable(params, steps)
                R.increment_step_tensors(steps, group["capturable"])
                R.rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffers,
                          differentiable=group["differentiable"], **options)
            else:
                F.rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffers, steps, **options)
        return self._step_groups(closure, update)
