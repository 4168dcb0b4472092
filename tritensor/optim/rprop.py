"""tt.optim.Rprop (torch.optim.Rprop, resilient backpropagation): an update in tritensor ops
(torch does not fuse it)."""
from __future__ import annotations

from ..ops.creation import full_like, zeros_like
from . import _rules as R
from ._functional import scalar
from ._state import check_lr, dense_grad, step_counter
from .optimizer import Optimizer

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """torch.optim.Rprop(params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False,
    foreach=None, maximize=False, differentiable=False).

    State per parameter: ``step``, ``prev`` (the last gradient used), ``step_size`` (per element,
    starting at lr)."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._restore_group_defaults(foreach=None, maximize=False, differentiable=False, capturable=False)

    def step(self, closure=None):
        """One optimization step; ``closure`` (re-evaluates the model, returns the loss) runs
        with gradients enabled and its loss is returned."""
        def update(group, params):
            grads = [dense_grad(p, "Rprop") for p in params]
            for p, g in zip(params, grads):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = step_counter(p, group["capturable"])
                    state["prev"] = zeros_like(p)
                    state["step_size"] = full_like(g, scalar(group["lr"]))
            steps = [self.state[p]["step"] for p in params]
            if group["capturable"]:
                R.check_capturable(params, steps)
            R.increment_step_tensors(steps, group["capturable"])
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            R.rprop(params, grads, [self.state[p]["prev"] for p in params],
                    [self.state[p]["step_size"] for p in params], step_size_min=step_size_min,
                    step_size_max=step_size_max, etaminus=etaminus, etaplus=etaplus, maximize=group["maximize"],
                    capturable=group["capturable"], differentiable=group["differentiable"])
        return self._step_groups(closure, update)
