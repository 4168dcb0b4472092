"""gradcheck / gradgradcheck: autograd's Jacobian against central finite differences."""
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


def _flat_outputs(func, inputs):
    outs = _as_tuple(func(*inputs))   # grad mode stays on: gradgradcheck's func calls grad()
    return np.concatenate([o.detach().double()._to_host_array().reshape(-1) for o in outs]) \
        if outs else np.zeros(0)


def _set_values(t, values):
    from ..ops import copy as _copy
    from ..ops import creation
    _copy.copy_into(t, creation.tensor(values.reshape(t.shape), dtype=t.dtype, device=t.device))


def numerical_jacobian(func, inputs, eps=1e-6):
    """One matrix per input that requires grad, of shape (input numel, output numel)."""
    jacobians = []
    for t in _tensors(inputs):
        if not t.requires_grad:
            continue
        base = t.detach().double()._to_host_array().reshape(-1).copy()
        cols = []
        for j in range(base.size):
            plus, minus = base.copy(), base.copy()
            plus[j] += eps
            minus[j] -= eps
            _set_values(t, plus)
            f_plus = _flat_outputs(func, inputs)
            _set_values(t, minus)
            f_minus = _flat_outputs(func, inputs)
            cols.append((f_plus - f_minus) / (2 * eps))
        _set_values(t, base)
        jacobians.append(np.array(cols).reshape(base.size, -1))
    return jacobians


def analytical_jacobian(func, inputs):
    from . import grad
    from ..ops import creation
    diff_inputs = [t for t in _tensors(inputs) if t.requires_grad]
    outs = [o for o in _as_tuple(func(*inputs))]
    sizes = [o.numel() for o in outs]
    total = sum(sizes)
    jac = [np.zeros((t.numel(), total)) for t in diff_inputs]
    col = 0
    for k, o in enumerate(outs):
        for j in range(o.numel()):
            if not o.requires_grad:
                col += 1
                continue
            onehot = np.zeros(o.numel())
            onehot[j] = 1
            go = creation.tensor(onehot.reshape(o.shape), dtype=o.dtype, device=o.device)
            grads = grad([o], diff_inputs, grad_outputs=[go], retain_graph=True, allow_unused=True)
            for i, g in enumerate(grads):
                if g is not None:
                    jac[i][:, col] = g.detach().double()._to_host_array().reshape(-1)
            col += 1
    return jac


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, fast_mode=False, **_):
    inputs = _as_tuple(inputs)
    from .. import dtypes as _dt
    for i, t in enumerate(_tensors(inputs)):
        if t.requires_grad and t.dtype is not _dt.float64:
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point. "
                "This check will likely fail if all the inputs are not of double precision floating point. ")
    numerical = numerical_jacobian(func, inputs, eps)
    analytical = analytical_jacobian(func, inputs)
    for i, (a, n) in enumerate(zip(analytical, numerical)):
        if a.shape != n.shape or not np.allclose(a, n, rtol=rtol, atol=atol):
            if raise_exception:
                raise GradcheckError(
                    f"Jacobian mismatch for output 0 with respect to input {i},\n"
                    f"numerical:{n}\nanalytical:{a}\n")
            return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, **_):
    """gradcheck of the first derivative (computed with create_graph=True) as a function of the
    inputs and of the output gradients."""
    from . import grad
    from ..ops import creation
    inputs = _as_tuple(inputs)
    outs = _as_tuple(func(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(creation.tensor(rng.standard_normal(o.shape), dtype=o.dtype, device=o.device,
                                             requires_grad=True) for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)
    diff_idx = [i for i, t in enumerate(inputs) if hasattr(t, "requires_grad") and t.requires_grad]

    def first_derivative(*args):
        xs, gos = args[:n_in], args[n_in:]
        ys = _as_tuple(func(*xs))
        gs = grad(ys, [xs[i] for i in diff_idx], grad_outputs=gos, create_graph=True, allow_unused=True)
        return tuple(g if g is not None else creation.zeros_like(xs[i]) for g, i in zip(gs, diff_idx))

    return gradcheck(first_derivative, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
