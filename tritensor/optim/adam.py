"""tt.optim.Adam (torch.optim.Adam), with AdamW's decoupled weight decay as an option."""
from __future__ import annotations

from .. import dtypes
from ..ops.creation import tensor as _tensor
from ..ops.creation import zeros as _zeros
from ..ops.creation import zeros_like
from ..tensor import Tensor
from . import _functional as F
from .optimizer import Optimizer

__all__ = ["Adam"]


def _scalar_dtype():
    """torch's _get_scalar_dtype: the step counter's dtype follows the default dtype."""
    return dtypes.float64 if dtypes.get_default_dtype() is dtypes.float64 else dtypes.float32


def new_step_counter(value=0.0):
    """A step counter as torch keeps it by default: a 0-d float tensor on the cpu."""
    return _tensor(float(value), dtype=_scalar_dtype())


class Adam(Optimizer):
    """torch.optim.Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False,
    *, foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
    decoupled_weight_decay=False).

    State per parameter: ``step`` (a 0-d float32 cpu tensor, torch's default layout; on the
    parameter's device when capturable), ``exp_avg``, ``exp_avg_sq`` and, with amsgrad,
    ``max_exp_avg_sq``. On cuda every group is updated by one fused launch per dtype; the bias
    corrections are computed on the host from each parameter's step, as torch's non-capturable
    path does. capturable/differentiable run torch's branch for them in tritensor ops (the
    counters stay tensors; autograd records a differentiable step)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        for i, beta in enumerate(betas):
            if isinstance(beta, Tensor):
                if not capturable and foreach:
                    raise ValueError(f"betas[{i}] as a Tensor is not supported for capturable=False and foreach=True")
                if beta.numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(b.squeeze() if isinstance(b, Tensor) and b.dim() != 0 else b for b in betas)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state):
        super().__setstate__(state)
        self._restore_group_defaults(amsgrad=False, maximize=False, foreach=None, capturable=False,
                                     differentiable=False, decoupled_weight_decay=False, fused=None)

    def _init_group(self, group, params):
        exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps = [], [], [], []
        for p in params:
            state = self.state[p]
            if len(state) == 0:
                # on the device when capturable (the step reads it there); on the host otherwise,
                # fused too: the fused launch takes the bias corrections computed on the host from
                # it (torch's fused kernel reads a device counter; here that would cost a launch
                # and a sync per tensor and step)
                state["step"] = (_zeros((), dtype=_scalar_dtype(), device=p.device)
                                 if group["capturable"] else new_step_counter())
                state["exp_avg"] = zeros_like(p)
                state["exp_avg_sq"] = zeros_like(p)
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = zeros_like(p)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            if group["amsgrad"]:
                max_exp_avg_sqs.append(state["max_exp_avg_sq"])
            steps.append(state["step"])
        return exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps

    def step(self, closure=None):
        """One optimization step; ``closure`` (re-evaluates the model, returns the loss) runs
        with gradients enabled and its loss is returned."""
        def update(group, params):
            exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps = self._init_group(group, params)
            beta1, beta2 = group["betas"]
            options = dict(amsgrad=group["amsgrad"], beta1=beta1, beta2=beta2, lr=group["lr"],
                           weight_decay=group["weight_decay"], eps=group["eps"], maximize=group["maximize"],
                           decoupled_weight_decay=group["decoupled_weight_decay"])
            grads = [p.grad for p in params]
            if group["capturable"] or group["differentiable"]:
                # torch's capturable/differentiable branch, op by op: counters read as tensors
                from . import _rules as R
                if group["capturable"]:
                    R.check_capturable(params, steps)
                R.adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
                       R.increment_step_tensors(steps, True), capturable=group["capturable"],
                       differentiable=group["differentiable"], **options)
            else:
                F.adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, **options)
        return self._step_groups(closure, update)
