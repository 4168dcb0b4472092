"""tt.optim.NAdam (torch.optim.NAdam, with NAdamW's decoupled weight decay as an option): an
update in tritensor ops (torch does not fuse it)."""
from __future__ import annotations

from ..ops.creation import ones, zeros_like
from ..tensor import Tensor
from . import _rules as R
from ._state import check_betas, check_lr, dense_grad, step_counter
from .adam import _scalar_dtype, new_step_counter
from .optimizer import Optimizer

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """torch.optim.NAdam(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
    decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False, differentiable=False).

    State per parameter: ``step``, ``mu_product`` (0-d, on the cpu unless capturable), ``exp_avg``,
    ``exp_avg_sq``."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._restore_group_defaults(maximize=False, foreach=None, capturable=False, differentiable=False,
                                     decoupled_weight_decay=False)
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p, {})
                if "mu_product" in p_state and not isinstance(p_state["mu_product"], Tensor):
                    p_state["mu_product"] = new_step_counter(float(p_state["mu_product"]))

    def step(self, closure=None):
        """One optimization step; ``closure`` (re-evaluates the model, returns the loss) runs
        with gradients enabled and its loss is returned."""
        def update(group, params):
            grads = [dense_grad(p, "NAdam") for p in params]
            capturable = group["capturable"]
            for p in params:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = step_counter(p, capturable)
                    state["mu_product"] = (ones((), dtype=_scalar_dtype(), device=p.device) if capturable
                                           else new_step_counter(1.0))
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
            steps = [self.state[p]["step"] for p in params]
            mu_products = [self.state[p]["mu_product"] for p in params]
            if capturable:
                R.check_capturable(params, mu_products, steps, names="params, mu_products and state_steps")
            beta1, beta2 = group["betas"]
            R.nadam(params, grads, [self.state[p]["exp_avg"] for p in params],
                    [self.state[p]["exp_avg_sq"] for p in params], mu_products,
                    R.increment_step_tensors(steps, capturable), beta1=beta1, beta2=beta2, lr=group["lr"],
                    weight_decay=group["weight_decay"], momentum_decay=group["momentum_decay"], eps=group["eps"],
                    decoupled_weight_decay=group["decoupled_weight_decay"], maximize=group["maximize"],
                    capturable=capturable, differentiable=group["differentiable"])
        return self._step_groups(closure, update)
