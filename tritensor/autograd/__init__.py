"""tt.autograd: backward, grad, grad mode, Function, gradcheck, anomaly detection."""
from __future__ import annotations

from .anomaly import detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly
from .engine import ones_seed, run_backward
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled
from .graph import DelayedError, Node
from ..tensor import Tensor

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
           "detect_anomaly", "set_detect_anomaly", "Node", "gradcheck", "gradgradcheck", "Function",
           "once_differentiable", "DelayedError", "inference_mode", "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs, grad_outputs):
    grads = []
    for i, out in enumerate(outputs):
        g = grad_outputs[i] if grad_outputs is not None else None
        if g is None:
            if out.requires_grad:
                if out.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not out.dtype.is_floating_point:
                    raise RuntimeError(
                        f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")
                g = ones_seed(out)
        elif isinstance(g, Tensor):
            if g.shape != out.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                    f"has a shape of {out.shape}.")
            if out.requires_grad and g.dtype is not out.dtype and out.dtype.is_floating_point:
                g = g.to(out.dtype)      # the engine casts a seed to its output's dtype, as torch's
        else:
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
        grads.append(g)
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    if grad_tensors is None and inputs is None and not create_graph and type(tensors) is Tensor:
        # y.backward() of a one-element floating output that requires grad: the common call,
        # seeded directly (every other case, errors included, takes the general road below)
        t = tensors
        if ((t._requires_grad or (t._grad_fn if t._view_version is None else t.grad_fn) is not None)
                and t._shape.count(1) == len(t._shape) and t.dtype.is_floating_point):
            run_backward((t,), (ones_seed(t),), retain_graph, False, accumulate=True)
            return
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors)
    if grad_tensors is not None and len(grad_tensors) != len(tensors):
        raise RuntimeError(f"grad_tensors and tensors must have the same length. Got {len(grad_tensors)} and {len(tensors)}")
    inputs = _as_tuple(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:
        import warnings
        warnings.warn(
            "Using backward() with create_graph=True will create a reference cycle between the "
            "parameter and its gradient which can cause a memory leak. We recommend using "
            "autograd.grad when creating the graph to avoid this. If you have to use this function, "
            "make sure to reset the .grad fields of your parameters to None after use to break the "
            "cycle and avoid the leak.", UserWarning, stacklevel=3)
    grads = _make_grads(tensors, grad_tensors)
    run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    if is_grads_batched:
        raise NotImplementedError("tt.autograd.grad: is_grads_batched=True (vmap over grad_outputs) is not supported")
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    grad_outputs = _as_tuple(grad_outputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: allow_unused=False.")
    if grad_outputs is not None and len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad_outputs and outputs must have the same length. Got {len(grad_outputs)} and {len(outputs)}")
    if not inputs:
        raise RuntimeError("grad requires non-empty inputs.")
    if retain_graph is None:
        retain_graph = create_graph
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _make_grads(outputs, grad_outputs)
    results = run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs,
                           allow_unused=allow_unused, accumulate=False)
    if materialize_grads:
        from ..ops import creation
        results = [creation.zeros_like(t) if r is None else r for t, r in zip(inputs, results)]
    return tuple(results)


from . import function  # noqa: E402
from .function import Function, once_differentiable  # noqa: E402  (Function needs backward/grad defined above)
from .gradcheck import gradcheck, gradgradcheck  # noqa: E402
from . import functional  # noqa: E402  (tt.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp)
from . import forward_ad  # noqa: E402  (tt.autograd.forward_ad: dual tensors)
