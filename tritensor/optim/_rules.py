"""Update rules written in tritensor ops: the "foreach" path of the optimizers torch does not fuse
(Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop) and the differentiable path of every optimizer.

Each function is torch's ``_single_tensor_<name>`` step, op for op and in the same order, so it
runs on any device (NumPy on cpu, one Triton kernel per op on cuda) and, under
``differentiable=True`` (grad mode enabled by the step), autograd records it like any other
computation. The ``capturable`` branches keep the step count on the parameter's device and read
it only through tensor ops (no host round trip), as torch's capturable branches do.

Step counters are incremented by the caller (``increment_step_tensors``) before the rule runs.
"""
from __future__ import annotations

from ..ops.creation import ones_like
from ..ops.joining import stack
from ..ops.elementwise import maximum, where
from ..tensor import Tensor
from ._functional import scalar

CAPTURABLE_DEVICES = ["cuda"]


def check_capturable(params, *scalars_lists, names="params and state_steps"):
    """torch's AssertionError when capturable=True meets a parameter or counter off the device."""
    for i, p in enumerate(params):
        if p.device.type not in CAPTURABLE_DEVICES or any(s[i].device.type != p.device.type
                                                           for s in scalars_lists):
            raise AssertionError(f"If capturable=True, {names} must be on supported devices: "
                                 f"{CAPTURABLE_DEVICES}.")


def increment_step_tensors(steps, capturable):
    """``step += 1`` for every counter; returns their new values as Python floats, or the
    counters themselves when capturable (their values stay on the device)."""
    if capturable:
        for s in steps:
            s.add_(1)
        return list(steps)
    from ._functional import increment_steps
    return increment_steps(steps)


def _check_real(params, grads):
    for p, g in zip(params, grads):
        if not p.is_floating_point():
            raise RuntimeError(f"tritensor's optimizers update floating-point parameters only, got {p.dtype}")
        if tuple(g.shape) != tuple(p.shape):
            raise RuntimeError(f"a parameter's gradient must have its shape: param {tuple(p.shape)}, "
                               f"grad {tuple(g.shape)}")


def adagrad(params, grads, state_sums, steps, *, lr, weight_decay, lr_decay, eps, maximize, differentiable):
    """torch's _single_tensor_adagrad (dense gradients); ``steps`` are the new step values."""
    _check_real(params, grads)
    lr = scalar(lr)
    for param, grad, state_sum, step in zip(params, grads, state_sums, steps):
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            if grad.is_sparse:
                raise RuntimeError("weight_decay option is not compatible with sparse gradients")
            grad = grad.add(param, alpha=weight_decay)
        clr = lr / (1 + (step - 1) * lr_decay)
        if grad.is_sparse:
            # only the gradient's rows: sum += g**2 there, then param -= clr * g / (sqrt(sum) + eps)
            grad = grad.coalesce()      # the update is non-linear: each row once
            indices, values = grad._indices(), grad._values()
            rows = tuple(indices[d] for d in range(indices.shape[0]))
            state_sum.index_put_(rows, values.pow(2), accumulate=True)
            std_values = state_sum[rows].sqrt_().add_(eps)
            param.index_put_(rows, (values / std_values).mul_(-clr), accumulate=True)
            continue
        state_sum.addcmul_(grad, grad, value=1)
        if differentiable:
            std = state_sum.sqrt() + eps
        else:
            std = state_sum.sqrt().add_(eps)
        param.addcdiv_(grad, std, value=-clr)


def adadelta(params, grads, square_avgs, acc_deltas, *, lr, rho, eps, weight_decay, maximize, differentiable):
    """torch's _single_tensor_adadelta (the step count is not read)."""
    _check_real(params, grads)
    lr = scalar(lr)
    for param, grad, square_avg, acc_delta in zip(params, grads, square_avgs, acc_deltas):
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        if differentiable:
            delta = delta.clone()
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        param.add_(delta, alpha=-lr)


def adamax(params, grads, exp_avgs, exp_infs, steps, *, eps, beta1, beta2, lr, weight_decay, maximize,
           differentiable, capturable):
    """torch's _single_tensor_adamax; with capturable, ``steps`` are the device counters."""
    _check_real(params, grads)
    if not capturable:
        lr = scalar(lr)
    for param, grad, exp_avg, exp_inf, step in zip(params, grads, exp_avgs, exp_infs, steps):
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        if not differentiable:
            exp_inf.mul_(beta2)
            exp_inf.copy_(maximum(exp_inf, grad.abs().add_(eps)))
        else:
            norm_buf = stack([exp_inf.mul_(beta2), grad.abs().add_(eps)], 0)
            exp_inf.copy_(norm_buf.amax(0, keepdim=False))
        if capturable:
            neg_bias_correction = beta1 ** step - 1
            neg_bias_correction.div_(lr)
            denom = exp_inf * neg_bias_correction
            param.addcdiv_(exp_avg, denom)
        else:
            bias_correction = 1 - beta1 ** step
            clr = lr / bias_correction
            param.addcdiv_(exp_avg, exp_inf, value=-clr)


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, steps, *, beta1, beta2, lr, weight_decay,
          momentum_decay, eps, decoupled_weight_decay, maximize, capturable, differentiable):
    """torch's _single_tensor_nadam (NAdamW with ``decoupled_weight_decay``)."""
    _check_real(params, grads)
    if not capturable:
        lr = scalar(lr)
    for param, grad, exp_avg, exp_avg_sq, mu_product, step in zip(params, grads, exp_avgs, exp_avg_sqs,
                                                                    mu_products, steps):
        grad = grad if not maximize else -grad
        bias_correction2 = 1 - beta2 ** step
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product.mul_(mu)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt()
        if differentiable or capturable:
            denom = denom.add(eps)
            mu_product_next = mu_product * mu_next
            grad = grad * (-lr * (1.0 - mu) / (1.0 - mu_product))
            exp_avg = exp_avg * (-lr * mu_next / (1.0 - mu_product_next))
            param.addcdiv_(grad, denom)
            param.addcdiv_(exp_avg, denom)
        else:
            mu_product_value = mu_product.item()
            mu_product_next = mu_product_value * mu_next
            denom.add_(eps)
            param.addcdiv_(grad, denom, value=(-lr * (1.0 - mu) / (1.0 - mu_product_value)))
            param.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))


def radam(params, grads, exp_avgs, exp_avg_sqs, steps, *, beta1, beta2, lr, weight_decay, eps,
          decoupled_weight_decay, differentiable, maximize, capturable):
    """torch's _single_tensor_radam (with the rectification switched on once rho_t > 5)."""
    _check_real(params, grads)
    if not capturable:
        lr = scalar(lr)
    for param, grad, exp_avg, exp_avg_sq, step in zip(params, grads, exp_avgs, exp_avg_sqs, steps):
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2

        def rect():
            return ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5

        def adaptive_lr():
            exp_avg_sq_sqrt = exp_avg_sq.sqrt()
            exp_avg_sq_sqrt = exp_avg_sq_sqrt.add(eps) if differentiable else exp_avg_sq_sqrt.add_(eps)
            return (bias_correction2 ** 0.5) / exp_avg_sq_sqrt

        if capturable:
            update = where(rho_t > 5.0, rect() * adaptive_lr(), 1.0)
            param.add_(bias_corrected_exp_avg * lr * update, alpha=-1.0)
        elif rho_t > 5.0:
            param.add_(bias_corrected_exp_avg * lr * adaptive_lr() * rect(), alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)


def asgd(params, grads, axs, mus, etas, steps, *, lambd, lr, t0, alpha, weight_decay, maximize, differentiable,
         capturable):
    """torch's _single_tensor_asgd: eta and mu are 0-d tensors of the state, rewritten each step."""
    _check_real(params, grads)
    if not capturable:
        lr = scalar(lr)
    for param, grad, ax, mu, eta, step in zip(params, grads, axs, mus, etas, steps):
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        if capturable:
            param.mul_(1 - lambd * eta)
            param.addcmul_(grad, eta, value=-1)
        else:
            eta_value = eta.item()
            param.mul_(1 - lambd * eta_value)
            param.add_(grad, alpha=-eta_value)
        if capturable or mu.item() != 1:
            ax.add_(param.sub(ax).mul_(mu))
        else:
            ax.copy_(param)
        if capturable:
            eta.copy_(lr / ((1 + lambd * lr * step) ** alpha))
            mu.copy_(1 / maximum(step - t0, ones_like(step)))
        else:
            eta.fill_(lr / ((1 + lambd * lr * step) ** alpha))
            mu.fill_(1 / max(1, step - t0))


def rprop(params, grads, prevs, step_sizes, *, step_size_min, step_size_max, etaminus, etaplus, maximize,
          capturable, differentiable):
    """torch's _single_tensor_rprop: per-element step sizes grown by etaplus while the gradient
    keeps its sign, shrunk by etaminus (and the step skipped) when it flips."""
    _check_real(params, grads)
    for param, grad, prev, step_size in zip(params, grads, prevs, step_sizes):
        grad = grad if not maximize else -grad
        sign = grad.mul(prev.clone() if differentiable else prev).sign()
        # torch's non-capturable branch writes through masks, its capturable one with where: the same
        # values (the masks are taken one after another on the updated tensor in both)
        sign = where(sign.gt(0), etaplus, sign)
        sign = where(sign.lt(0), etaminus, sign)
        sign = where(sign.eq(0), 1, sign)
        step_size.mul_(sign).clamp_(step_size_min, step_size_max)
        grad = where(sign.eq(etaminus), 0, grad)
        param.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)


def sgd(params, grads, momentum_buffers, *, lr, weight_decay, momentum, dampening, nesterov, maximize):
    """torch's _single_tensor_sgd (the differentiable path of SGD); new buffers are stored into
    ``momentum_buffers`` (None entries: none yet)."""
    _check_real(params, grads)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        if momentum != 0:
            buf = momentum_buffers[i]
            if buf is None:
                buf = grad.detach().clone()
                momentum_buffers[i] = buf
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = grad.add(buf, alpha=momentum) if nesterov else buf
        if isinstance(lr, Tensor) and lr.requires_grad:
            param.addcmul_(grad, lr, value=-1)
        else:
            param.add_(grad, alpha=-scalar(lr))


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, *, amsgrad, beta1, beta2, lr, weight_decay,
         eps, maximize, capturable, differentiable, decoupled_weight_decay):
    """torch's _single_tensor_adam, its capturable/differentiable branch: the bias corrections
    are computed from the step counters as tensors (on the device when capturable), so nothing
    is read back to the host. ``steps`` are the counters, already incremented."""
    _check_real(params, grads)
    lr, beta1, beta2 = scalar(lr), scalar(beta1), scalar(beta2)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq, step = exp_avgs[i], exp_avg_sqs[i], steps[i]
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        step_size_neg = step_size.neg()
        bias_correction2_sqrt = bias_correction2.sqrt()
        if amsgrad:
            max_exp_avg_sq = max_exp_avg_sqs[i].clone() if differentiable else max_exp_avg_sqs[i]
            max_exp_avg_sqs[i].copy_(maximum(max_exp_avg_sq, exp_avg_sq))
            second = max_exp_avg_sqs[i]
        else:
            second = exp_avg_sq
        denom = (second.sqrt() / (bias_correction2_sqrt * step_size_neg)).add_(eps / step_size_neg)
        param.addcdiv_(exp_avg.clone() if differentiable else exp_avg, denom)


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffers, *, lr, alpha, eps, weight_decay, momentum,
            centered, maximize, differentiable):
    """torch's _single_tensor_rmsprop (the step count is not read)."""
    _check_real(params, grads)
    lr = scalar(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        square_avg = square_avgs[i]
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if centered:
            grad_avg = grad_avgs[i]
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add(eps) if differentiable else avg.add_(eps)
        if momentum > 0:
            buf = momentum_buffers[i]
            buf.mul_(momentum).addcdiv_(grad, avg)
            param.add_(buf, alpha=-lr)
        else:
            param.addcdiv_(grad, avg, value=-lr)
