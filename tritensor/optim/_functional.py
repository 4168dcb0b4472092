"""The optimizers' update rules, per device.

Each function updates a list of parameters (those of one group that have a gradient) and their
state in place, with the formulas of torch's ``_single_tensor_*`` steps, evaluated in the same
order:

- cpu: NumPy on the tensors' memory, one vectorised update per parameter;
- cuda: one fused Triton launch per dtype (backends/triton/optim.py) for the whole list.

Math runs in float32 for float16/bfloat16/float32 parameters and float64 for float64 ones (the
16-bit state is read, updated in float32 and rounded once, as torch's fused kernels do).
Hyper-parameters given as Python floats are rounded once to the compute dtype, as torch rounds a
scalar operand to the tensor's math type.
"""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor


def scalar(x):
    """A hyper-parameter as a Python number (a 1-element tensor lr/beta is read on the host)."""
    return x.item() if isinstance(x, Tensor) else x


def _bump_version(*tensors):
    """In-place updates made outside dispatch() still advance the version counters (autograd's
    saved-tensor checks see them, as torch's in-place optimizer ops would)."""
    for t in tensors:
        if t is not None:
            t._version_counter.value += 1


def increment_steps(steps):
    """``step += 1`` for each step counter (0-d tensors, normally float32 on the cpu: torch's
    layout); returns the new values as Python floats."""
    values = []
    for s in steps:
        host = s._storage.host
        if host is not None:        # a cpu counter
            # float(step) + 1 is exact in float64, so rounding it to the counter's dtype gives the
            # bits of torch's float32 `step += 1`; written through the storage's bytes (a 0-d
            # NumPy view per counter and step would cost more than the whole update's host work)
            dtype = s._dtype
            itemsize = dtype.itemsize
            cell = host[s._offset * itemsize: (s._offset + 1) * itemsize].view(dtype.numpy_dtype)
            cell[0] = float(cell[0]) + 1
            s._version_counter.value += 1
            values.append(float(cell[0]))
        else:
            s.add_(1)
            values.append(float(s.item()))
    return values


def _check(params, grads):
    # the attributes directly: this runs once per tensor and step
    for p, g in zip(params, grads):
        dtype = p._dtype
        if not dtype.is_floating_point:
            raise RuntimeError(f"tritensor's optimizers update floating-point parameters only, got {p.dtype}")
        if g._dtype is not dtype or g._storage.device != p._storage.device:
            raise RuntimeError(f"a parameter's gradient must have its dtype and device: param {p.dtype} on "
                               f"{p.device}, grad {g.dtype} on {g.device}")
        if g._shape != p._shape:
            raise RuntimeError(f"a parameter's gradient must have its shape: param {tuple(p.shape)}, "
                               f"grad {tuple(g.shape)}")


# --------------------------------------------------------------------------- cpu (NumPy)
class _HostMath:
    """A parameter's values in the compute dtype; ``store`` writes them back.

    ``load`` returns the tensor's own memory when it already is in the compute dtype (no copy:
    the update rules never write into what they load, only through ``store``), else a widened
    copy of a 16-bit tensor."""

    def __init__(self, param):
        self.compute = np.float64 if param.dtype.name == "float64" else np.float32

    def load(self, t):
        return t._host_view().astype(self.compute, copy=False)

    def s(self, value):
        return self.compute(value)

    def store(self, t, values):
        t._host_view()[...] = values         # rounds to a 16-bit dtype (nearest-even) once
        _bump_version(t)


def _lerp(start, end, weight, h):
    """torch's lerp for a scalar weight."""
    w = h.s(weight)
    if abs(w) < 0.5:
        return start + w * (end - start)
    return end - (end - start) * (h.s(1) - w)


def _sgd_cpu(p, g, buf, first, lr, weight_decay, momentum, dampening, nesterov, maximize):
    h = _HostMath(p)
    pv, gv = h.load(p), h.load(g)
    if maximize:
        gv = gv * h.s(-1)
    if weight_decay != 0:
        gv = gv + h.s(weight_decay) * pv
    if momentum != 0:
        if first:
            bv = gv
        else:
            bv = h.load(buf)
            bv = bv * h.s(momentum) + h.s(1 - dampening) * gv
        h.store(buf, bv)
        gv = gv + h.s(momentum) * bv if nesterov else bv
    h.store(p, pv + h.s(-lr) * gv)


def _adam_cpu(p, g, m, v, vmax, step, lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled):
    h = _HostMath(p)
    pv, gv, mv, vv = h.load(p), h.load(g), h.load(m), h.load(v)
    if maximize:
        gv = gv * h.s(-1)
    if weight_decay != 0:
        if decoupled:
            pv = pv * h.s(1 - lr * weight_decay)
        else:
            gv = gv + h.s(weight_decay) * pv
    mv = _lerp(mv, gv, 1 - beta1, h)
    vv = vv * h.s(beta2) + h.s(1 - beta2) * gv * gv
    h.store(m, mv)
    h.store(v, vv)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    step_size = lr / bias_correction1
    bias_correction2_sqrt = bias_correction2 ** 0.5
    if amsgrad:
        mx = np.maximum(h.load(vmax), vv)
        h.store(vmax, mx)
        denom = np.sqrt(mx) / h.s(bias_correction2_sqrt) + h.s(eps)
    else:
        denom = np.sqrt(vv) / h.s(bias_correction2_sqrt) + h.s(eps)
    h.store(p, pv + h.s(-step_size) * (mv / denom))


def _rmsprop_cpu(p, g, sq, buf, ga, lr, alpha, eps, weight_decay, momentum, centered, maximize):
    h = _HostMath(p)
    pv, gv, sv = h.load(p), h.load(g), h.load(sq)
    if maximize:
        gv = gv * h.s(-1)
    if weight_decay != 0:
        gv = gv + h.s(weight_decay) * pv
    sv = sv * h.s(alpha) + h.s(1 - alpha) * gv * gv
    h.store(sq, sv)
    if centered:
        gav = _lerp(h.load(ga), gv, 1 - alpha, h)
        h.store(ga, gav)
        avg = np.sqrt(sv + (gav * h.s(-1)) * gav)
    else:
        avg = np.sqrt(sv)
    avg = avg + h.s(eps)
    if momentum > 0:
        bv = h.load(buf) * h.s(momentum) + gv / avg
        h.store(buf, bv)
        h.store(p, pv + h.s(-lr) * bv)
    else:
        h.store(p, pv + h.s(-lr) * (gv / avg))


# --------------------------------------------------------------------------- cuda (fused launches)
def _buckets(params):
    """Indices of ``params`` grouped by (device, dtype), in first-seen order."""
    buckets = {}
    for i, p in enumerate(params):
        buckets.setdefault((p._storage.device, p._dtype), []).append(i)
    return buckets.values()


_DENSE = {}     # (shape, stride) -> is_contiguous(): the answer for every tensor of that layout


def _dense(t):
    """t.is_contiguous(), remembered per (shape, stride) (a parameter's layout recurs every step)."""
    key = (t._shape, t._stride)
    dense = _DENSE.get(key)
    if dense is None:
        if len(_DENSE) > 4096:
            _DENSE.clear()
        dense = _DENSE[key] = t.is_contiguous()
    return dense


class _Staging:
    """Contiguous stand-ins for non-contiguous operands (the kernels walk flat memory): written
    tensors are copied back after the launch. Parameters are almost always contiguous, so this
    costs nothing in the common case."""

    def __init__(self):
        self.write_back = []

    def read(self, t):
        return t if t is None or _dense(t) else t.contiguous()

    def written(self, t):
        if t is None or _dense(t):
            return t
        staged = t.contiguous()
        self.write_back.append((t, staged))
        return staged

    def finish(self):
        for original, staged in self.write_back:
            original.copy_(staged)


def _launch_fused(kind, indices, params, grads, states, **options):
    """One fused launch over params[indices]: ``states`` is a list of per-parameter state lists
    (each entry may be None where the rule does not use it)."""
    from ..backends.triton import optim as triton_optim
    staging = _Staging()
    ps = [staging.written(params[i]) for i in indices]
    gs = [staging.read(grads[i]) for i in indices]
    ss = [[staging.written(column[i]) if column is not None else None for i in indices] for column in states]
    getattr(triton_optim, kind)(ps, gs, *ss, **options)
    staging.finish()
    _bump_version(*(params[i] for i in indices))
    for column in states:
        if column is not None:
            _bump_version(*(column[i] for i in indices))


# --------------------------------------------------------------------------- the update rules
def sgd(params, grads, momentum_buffers, *, lr, weight_decay, momentum, dampening, nesterov, maximize):
    """torch.optim.sgd's update. ``momentum_buffers`` (None entries: no buffer yet) is updated
    in place with the new buffers, as torch's functional sgd does."""
    _check(params, grads)
    lr = scalar(lr)
    weight_decay = scalar(weight_decay)
    first = [False] * len(params)
    if momentum != 0:
        from ..ops.creation import empty_like
        for i, p in enumerate(params):
            if momentum_buffers[i] is None:     # the update writes the first buffer (the gradient)
                momentum_buffers[i] = empty_like(p)
                first[i] = True
    for indices in _buckets(params):
        if params[indices[0]].device.type == "cpu":
            for i in indices:
                _sgd_cpu(params[i], grads[i], momentum_buffers[i] if momentum != 0 else None, first[i],
                         lr, weight_decay, momentum, dampening, nesterov, maximize)
        else:
            from ..backends.triton import optim as triton_optim
            staging = _Staging()
            ps = [staging.written(params[i]) for i in indices]
            gs = [staging.read(grads[i]) for i in indices]
            bufs = [staging.written(momentum_buffers[i]) if momentum != 0 else None for i in indices]
            triton_optim.sgd(ps, gs, bufs, [first[i] for i in indices], lr=lr, weight_decay=weight_decay,
                             momentum=momentum, dampening=dampening, nesterov=nesterov, maximize=maximize)
            staging.finish()
            _bump_version(*(params[i] for i in indices))
            if momentum != 0:
                _bump_version(*(momentum_buffers[i] for i in indices))


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, amsgrad, beta1, beta2,
         lr, weight_decay, eps, maximize, decoupled_weight_decay=False):
    """torch.optim.adam's update (AdamW with ``decoupled_weight_decay``). ``state_steps`` are
    incremented here, before the update, as torch does."""
    _check(params, grads)
    lr, beta1, beta2 = scalar(lr), scalar(beta1), scalar(beta2)
    weight_decay = scalar(weight_decay)
    steps = increment_steps(state_steps)
    for indices in _buckets(params):
        if params[indices[0]].device.type == "cpu":
            for i in indices:
                _adam_cpu(params[i], grads[i], exp_avgs[i], exp_avg_sqs[i],
                          max_exp_avg_sqs[i] if amsgrad else None, steps[i], lr, beta1, beta2, eps,
                          weight_decay, amsgrad, maximize, decoupled_weight_decay)
        else:
            _launch_fused("adam", indices, params, grads,
                          [exp_avgs, exp_avg_sqs, max_exp_avg_sqs if amsgrad else None],
                          steps=[steps[i] for i in indices], lr=lr, beta1=beta1, beta2=beta2, eps=eps,
                          weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                          decoupled_weight_decay=decoupled_weight_decay)


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, *, lr, alpha, eps,
            weight_decay, momentum, centered, maximize):
    """torch.optim.rmsprop's update; ``state_steps`` are incremented (the rule does not read them)."""
    _check(params, grads)
    lr = scalar(lr)
    increment_steps(state_steps)
    for indices in _buckets(params):
        if params[indices[0]].device.type == "cpu":
            for i in indices:
                _rmsprop_cpu(params[i], grads[i], square_avgs[i],
                             momentum_buffer_list[i] if momentum > 0 else None,
                             grad_avgs[i] if centered else None, lr, alpha, eps, weight_decay, momentum,
                             centered, maximize)
        else:
            _launch_fused("rmsprop", indices, params, grads,
                          [square_avgs, momentum_buffer_list if momentum > 0 else None,
                           grad_avgs if centered else None],
                          lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                          centered=centered, maximize=maximize)


def _adagrad_cpu(p, g, state_sum, step, lr, weight_decay, lr_decay, eps, maximize):
    h = _HostMath(p)
    pv, gv = h.load(p), h.load(g)
    if maximize:
        gv = gv * h.s(-1)
    if weight_decay != 0:
        gv = gv + h.s(weight_decay) * pv
    clr = lr / (1 + (step - 1) * lr_decay)
    # one scratch array updated in place: fresh temporaries for every expression cost more than
    # the arithmetic on parameter-sized arrays (new pages each time)
    buf = np.multiply(gv, gv, out=np.empty(np.shape(gv), dtype=h.compute))
    np.add(h.load(state_sum), buf, out=buf)            # sum + g * g
    h.store(state_sum, buf)
    np.sqrt(buf, out=buf)
    buf += h.s(eps)                                     # std
    np.divide(gv, buf, out=buf)
    buf *= h.s(-clr)
    np.add(pv, buf, out=buf)
    h.store(p, buf)


def adagrad(params, grads, state_sums, state_steps, *, lr, weight_decay, lr_decay, eps, maximize):
    """torch.optim.adagrad's update (dense gradients); ``state_steps`` are incremented first."""
    _check(params, grads)
    lr = scalar(lr)
    steps = increment_steps(state_steps)
    for indices in _buckets(params):
        if params[indices[0]].device.type == "cpu":
            for i in indices:
                _adagrad_cpu(params[i], grads[i], state_sums[i], steps[i], lr, weight_decay, lr_decay, eps,
                             maximize)
        else:
            _launch_fused("adagrad", indices, params, grads, [state_sums], steps=[steps[i] for i in indices],
                          lr=lr, weight_decay=weight_decay, lr_decay=lr_decay, eps=eps, maximize=maximize)
