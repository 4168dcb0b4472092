"""gradcheck / gradgradcheck: autograd's Jacobian against central finite differences.

As torch's slow mode: every input element is perturbed by +-eps and every output element is
back-propagated with a one-hot gradient; the two Jacobians must agree within
``atol + rtol * |numerical|`` elementwise. Defaults are torch's (eps=1e-6, atol=1e-5, rtol=1e-3),
meant for float64 inputs.
"""
from __future__ import annotations

import warnings

import numpy as np


class GradcheckError(RuntimeError):
    pass


def _tensors(xs):
    from ..tensor import Tensor
    return [x for x in xs if isinstance(x, Tensor)]


def _as_tuple(x):
    from ..tensor import Tensor
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _host(t):
    return t.detach().double()._to_host_array().reshape(-1)


def _flat_outputs(func, inputs):
    """One flat array per output."""
    outs = _as_tuple(func(*inputs))   # grad mode stays on: gradgradcheck's func calls grad()
    return [_host(o).copy() for o in outs]


def _set_values(t, values):
    # a raw write, like torch's perturbation of ``x.data``: no version bump, no graph
    from ..ops import copy as _copy
    from ..ops import creation
    _copy.copy_into(t, creation.tensor(values.reshape(t.shape), dtype=t.dtype, device=t.device))


def numerical_jacobian(func, inputs, eps=1e-6):
    """Per input that requires grad, per output: a matrix of shape (input numel, output numel)."""
    jacobians = []
    for t in _tensors(inputs):
        if not t.requires_grad:
            continue
        base = _host(t).copy()
        cols = []
        try:
            for j in range(base.size):
                plus, minus = base.copy(), base.copy()
                plus[j] += eps
                minus[j] -= eps
                _set_values(t, plus)
                f_plus = _flat_outputs(func, inputs)
                _set_values(t, minus)
                f_minus = _flat_outputs(func, inputs)
                cols.append([(p - m) / (2 * eps) for p, m in zip(f_plus, f_minus)])
        finally:
            _set_values(t, base)
        n_out = len(cols[0]) if cols else len(_flat_outputs(func, inputs))
        sizes = [c.size for c in cols[0]] if cols else [o.size for o in _flat_outputs(func, inputs)]
        jacobians.append([np.array([c[k] for c in cols]).reshape(base.size, sizes[k])
                          for k in range(n_out)])
    return jacobians


def analytical_jacobian(func, inputs, outs=None):
    """Per input that requires grad, per output: the Jacobian from one backward per output
    element. Gradients must have their input's shape and dtype."""
    from . import grad
    from ..ops import creation
    diff_inputs = [t for t in _tensors(inputs) if t.requires_grad]
    outs = list(_as_tuple(func(*inputs))) if outs is None else outs
    jac = [[np.zeros((t.numel(), o.numel())) for o in outs] for t in diff_inputs]
    for k, o in enumerate(outs):
        if not o.requires_grad:
            continue
        for j in range(o.numel()):
            onehot = np.zeros(o.numel())
            onehot[j] = 1
            go = creation.tensor(onehot.reshape(o.shape), dtype=o.dtype, device=o.device)
            grads = grad([o], diff_inputs, grad_outputs=[go], retain_graph=True, allow_unused=True)
            for i, (g, t) in enumerate(zip(grads, diff_inputs)):
                if g is None:
                    continue
                if g.dtype is not t.dtype:
                    raise GradcheckError("Gradient has dtype mismatch")
                if tuple(g.shape) != tuple(t.shape):
                    raise GradcheckError("Analytical gradient has incorrect size")
                jac[i][k][:, j] = _host(g)
    return jac


def forward_jacobian(func, inputs):
    """Per input that requires grad, per output: the Jacobian from forward-mode AD
    (tt.autograd.forward_ad), one forward pass per input element with a one-hot tangent."""
    from ..ops import creation
    from . import forward_ad as fwAD
    diff = [i for i, t in enumerate(inputs) if hasattr(t, "requires_grad") and t.requires_grad]
    jac = []
    for i in diff:
        t = inputs[i]
        cols = []
        for j in range(t.numel()):
            onehot = np.zeros(t.numel())
            onehot[j] = 1
            tangent = creation.tensor(onehot.reshape(tuple(t.shape)), dtype=t.dtype, device=t.device)
            with fwAD.dual_level():
                args = list(inputs)
                args[i] = fwAD.make_dual(t, tangent)
                outs = _as_tuple(func(*args))
                cols.append([_host(g) if g is not None else np.zeros(o.numel())
                             for o, g in ((o, fwAD.unpack_dual(o).tangent) for o in outs)])
        sizes = [o.numel() for o in _as_tuple(func(*inputs))]
        jac.append([np.array([c[k] for c in cols]).reshape(t.numel(), sizes[k]) for k in range(len(sizes))])
    return jac


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False, check_forward_ad=False,
              check_backward_ad=True, fast_mode=False, masked=None):
    """Check ``func``'s gradients against finite differences; True, or GradcheckError (a
    RuntimeError) / False. (fast_mode is accepted and runs the full check.)"""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad or check_batched_forward_grad:
        raise NotImplementedError("tt.autograd.gradcheck: batched gradients (vmap) are not supported")
    inputs = _as_tuple(inputs)
    from .. import dtypes as _dt
    diff = [t for t in _tensors(inputs) if t.requires_grad]
    if not diff:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of the "
            "them have requires_grad=True.")
    for i, t in enumerate(_tensors(inputs)):
        if t.requires_grad and t.dtype is not _dt.float64:
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point. "
                "This check will likely fail if all the inputs are not of double precision floating point. ")

    def fail(msg):
        if raise_exception:
            raise GradcheckError(msg)
        return False

    outs = list(_as_tuple(func(*inputs)))
    numerical = numerical_jacobian(func, inputs, eps)
    if check_forward_ad:       # forward-mode AD's Jacobian against the same finite differences
        forward = forward_jacobian(func, inputs)
        for i, (a_in, n_in) in enumerate(zip(forward, numerical)):
            for k, (a, n) in enumerate(zip(a_in, n_in)):
                if not outs[k].dtype.is_floating_point:
                    continue
                if a.shape != n.shape or not np.allclose(a, n, rtol=rtol, atol=atol):
                    return fail(f"Jacobian computed with forward mode mismatch for output {k} with respect to "
                                f"input {i},\nnumerical:{n}\nanalytical:{a}\n")
    if not check_backward_ad:
        return True
    try:
        analytical = analytical_jacobian(func, inputs, outs)
    except GradcheckError as e:
        return fail(str(e))
    for i, (a_in, n_in) in enumerate(zip(analytical, numerical)):
        for k, (a, n) in enumerate(zip(a_in, n_in)):
            if not outs[k].requires_grad:
                if np.any(np.abs(n) > atol):
                    return fail(f"Numerical gradient for function expected to be zero for output {k}")
                continue
            if a.shape != n.shape or not np.allclose(a, n, rtol=rtol, atol=atol):
                return fail(f"Jacobian mismatch for output {k} with respect to input {i},\n"
                            f"numerical:{n}\nanalytical:{a}\n")
    # the backward must give the same answer when run again on the same graph
    again = analytical_jacobian(func, inputs, outs)
    for a_in, b_in in zip(analytical, again):
        for a, b in zip(a_in, b_in):
            if not np.all(np.abs(a - b) <= nondet_tol):
                return fail(
                    "Backward is not reentrant, i.e., running backward with same input and "
                    "grad_output multiple times gives different values, although analytical "
                    "gradient matches numerical gradient.The tolerance for nondeterminism was "
                    f"{nondet_tol}.")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """gradcheck of the first derivative (computed with create_graph=True) as a function of the
    inputs and of the output gradients (random, requiring grad, when not given)."""
    from . import grad
    from ..ops import creation
    if check_batched_grad:
        raise NotImplementedError("tt.autograd.gradgradcheck: batched gradients (vmap) are not supported")
    inputs = _as_tuple(inputs)
    outs = _as_tuple(func(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(creation.tensor(rng.uniform(-1, 1, o.shape), dtype=o.dtype, device=o.device,
                                             requires_grad=True)
                             for o in outs if o.requires_grad)
    grad_outputs = _as_tuple(grad_outputs)
    diff_outs = [k for k, o in enumerate(outs) if o.requires_grad]
    n_in = len(inputs)
    diff_idx = [i for i, t in enumerate(inputs) if hasattr(t, "requires_grad") and t.requires_grad]

    def first_derivative(*args):
        xs, gos = args[:n_in], args[n_in:]
        ys = _as_tuple(func(*xs))
        ys = [ys[k] for k in diff_outs]
        gs = grad(ys, [xs[i] for i in diff_idx], grad_outputs=gos, create_graph=True, allow_unused=True)
        return tuple(g if g is not None else creation.zeros_like(xs[i]) for g, i in zip(gs, diff_idx))

    return gradcheck(first_derivative, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev)
