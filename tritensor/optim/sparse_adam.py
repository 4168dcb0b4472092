"""tt.optim.SparseAdam (torch.optim.SparseAdam): Adam for sparse (COO) gradients, as an embedding
table gets them. Only the rows present in a step's gradient are touched: their moments and
parameters are updated ("lazy" Adam); the others keep their values, moments included."""
from __future__ import annotations

import math

from ..autograd.grad_mode import enable_grad, no_grad
from ..ops.creation import zeros_like
from ..tensor import Tensor
from ._functional import scalar
from .optimizer import Optimizer

__all__ = ["SparseAdam"]


def sparse_adam(params, grads, exp_avgs, exp_avg_sqs, state_steps, *, eps, beta1, beta2, lr, maximize):
    """torch.optim._functional.sparse_adam: the coalesced gradient's rows are gathered from the
    moments, updated, scattered back (index_put_ with accumulate: the rows are unique), and the
    parameter rows move by -step_size * m / (sqrt(v) + eps)."""
    for param, grad, exp_avg, exp_avg_sq, step in zip(params, grads, exp_avgs, exp_avg_sqs, state_steps):
        grad = grad if not maximize else -grad
        grad = grad.coalesce()          # the update is non-linear: each row once
        indices, values = grad._indices(), grad._values()
        if values.numel() == 0:
            continue
        rows = tuple(indices[d] for d in range(indices.shape[0]))
        old_exp_avg_values = exp_avg[rows]
        exp_avg_update_values = values.sub(old_exp_avg_values).mul_(1 - beta1)
        exp_avg.index_put_(rows, exp_avg_update_values, accumulate=True)
        old_exp_avg_sq_values = exp_avg_sq[rows]
        exp_avg_sq_update_values = values.pow(2).sub_(old_exp_avg_sq_values).mul_(1 - beta2)
        exp_avg_sq.index_put_(rows, exp_avg_sq_update_values, accumulate=True)
        numer = exp_avg_update_values.add_(old_exp_avg_values)
        exp_avg_sq_update_values.add_(old_exp_avg_sq_values)
        denom = exp_avg_sq_update_values.sqrt_().add_(eps)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr * math.sqrt(bias_correction2) / bias_correction1
        param.index_put_(rows, -step_size * numer.div_(denom), accumulate=True)


class SparseAdam(Optimizer):
    """torch.optim.SparseAdam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False).

    Dense parameters, sparse gradients (a dense one is torch's RuntimeError). State per
    parameter: ``step`` (a Python int, as torch keeps it here), ``exp_avg``, ``exp_avg_sq``."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)
        sparse_params = [[index, d_index] for index, group in enumerate(self.param_groups)
                         for d_index, d_param in enumerate(group["params"]) if d_param.is_sparse]
        if sparse_params:
            raise ValueError(f"Sparse params at indices {sparse_params}: SparseAdam requires dense parameter tensors")

    def step(self, closure=None):
        """One optimization step; ``closure`` (re-evaluates the model, returns the loss) runs
        with gradients enabled and its loss is returned."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                params, grads, exp_avgs, exp_avg_sqs, steps = [], [], [], [], []
                beta1, beta2 = group["betas"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    params.append(p)
                    if not p.grad.is_sparse:
                        raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
                    grads.append(p.grad)
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = 0
                        state["exp_avg"] = zeros_like(p)
                        state["exp_avg_sq"] = zeros_like(p)
                    exp_avgs.append(state["exp_avg"])
                    exp_avg_sqs.append(state["exp_avg_sq"])
                    state["step"] += 1
                    steps.append(state["step"])
                sparse_adam(params, grads, exp_avgs, exp_avg_sqs, steps, eps=group["eps"], beta1=beta1,
                            beta2=beta2, lr=scalar(group["lr"]), maximize=group.get("maximize", False))
        return loss
