"""tt.optim.ASGD (torch.optim.ASGD, averaged SGD): an update in tritensor ops (torch does not fuse it)."""
from __future__ import annotations

from ..ops.creation import ones, tensor, zeros, zeros_like
from ..tensor import Tensor
from . import _rules as R
from ._functional import scalar
from ._state import check_lr, dense_grad
from .adam import _scalar_dtype
from .optimizer import Optimizer

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """torch.optim.ASGD(params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
    maximize=False, differentiable=False, capturable=False).

    State per parameter, all on the parameter's device as torch keeps them: ``step``, ``eta``
    (the current step size), ``mu`` (the averaging coefficient), ``ax`` (the average)."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._restore_group_defaults(foreach=None, maximize=False, differentiable=False, capturable=False)
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p, {})
                for key in ("step", "eta", "mu"):
                    if key in p_state and not isinstance(p_state[key], Tensor):
                        p_state[key] = tensor(float(p_state[key]), dtype=_scalar_dtype(), device=p.device)

    def step(self, closure=None):
        """One optimization step; ``closure`` (re-evaluates the model, returns the loss) runs
        with gradients enabled and its loss is returned."""
        def update(group, params):
            grads = [dense_grad(p, "ASGD") for p in params]
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = zeros((), dtype=_scalar_dtype(), device=p.device)
                    state["eta"] = tensor(scalar(group["lr"]), dtype=_scalar_dtype(), device=p.device)
                    state["mu"] = ones((), dtype=_scalar_dtype(), device=p.device)
                    state["ax"] = zeros_like(p)
            steps = [self.state[p]["step"] for p in params]
            mus = [self.state[p]["mu"] for p in params]
            etas = [self.state[p]["eta"] for p in params]
            if group["capturable"]:
                R.check_capturable(params, mus, etas, steps, names="params, mus, etas, and state_steps")
            R.asgd(params, grads, [self.state[p]["ax"] for p in params], mus, etas,
                   R.increment_step_tensors(steps, group["capturable"]), lambd=group["lambd"], lr=group["lr"],
                   t0=group["t0"], alpha=group["alpha"], weight_decay=group["weight_decay"],
                   maximize=group["maximize"], differentiable=group["differentiable"],
                   capturable=group["capturable"])
        return self._step_groups(closure, update)
