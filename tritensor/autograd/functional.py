"""tt.autograd.functional: Jacobians, Hessians and their products of a Python function.

torch.autograd.functional's API and semantics (torch 2.13): ``vjp``, ``jvp``, ``jacobian``,
``hessian``, ``vhp`` and ``hvp`` take ``func`` and its ``inputs`` (a Tensor or a tuple of
Tensors) and return results shaped like torch's: a Tensor where torch gives a Tensor, a tuple
(of tuples) where the inputs or outputs were tuples. ``create_graph`` keeps the result
differentiable, ``strict`` raises where an output does not depend on an input (instead of a
zero block), with torch's error texts.

Everything here is built on ``tt.autograd.grad``; forward-mode products (``jvp``, ``hvp``) use the
double-backward trick, as torch does: the vector-Jacobian product is linear in its cotangent
``u``, so differentiating ``J^T u`` with respect to ``u`` in the direction ``v`` gives ``J v``.

``vectorize=True`` asks torch to batch the rows of the Jacobian with vmap; tritensor computes the
same rows one backward pass at a time (the results are identical, only torch's speed-up is
absent). ``strategy="forward-mode"`` (torch asks for ``vectorize=True`` with it) runs one forward
pass with dual tensors (``tt.autograd.forward_ad``) per input element, the column's tangents.
"""
from __future__ import annotations

from ..tensor import Tensor
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


# --------------------------------------------------------------------------- argument plumbing
def _as_tuple(value, arg_name, fn_name):
    """(was it a tuple, the value as a tuple of Tensors), with torch's TypeError otherwise."""
    is_tuple = isinstance(value, tuple)
    values = value if is_tuple else (value,)
    for i, v in enumerate(values):
        if not isinstance(v, Tensor):
            where = f"the value at index {i}" if is_tuple else f"the given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                            f"Tensors but {where} has type {type(v)}.")
    return is_tuple, values


def _unpack(result, was_tuple):
    """Undo _as_tuple: ``was_tuple`` is one flag, or (outer, inner) for a tuple of tuples."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            result = tuple(row[0] for row in result)
        return result if outer else result[0]
    return result if was_tuple else result[0]


def _fresh_inputs(inputs, create_graph, need_graph):
    """New Tensor objects for the inputs, so that the function's use of the inputs given as
    arguments is told apart from the same tensors captured from outside (torch issue 32576):
    a differentiable view when the caller wants gradients to flow back into them, else a
    detached leaf."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t) if not t.is_sparse else t.clone())
        else:
            out.append(t.detach().requires_grad_(need_graph))
    return tuple(out)


def _finish(tensors, create_graph):
    """Results handed back carry no history unless create_graph asked for it."""
    if tensors and isinstance(tensors[0], Tensor):
        return tensors if create_graph else tuple(t.detach() for t in tensors)
    return tuple(_finish(t, create_graph) for t in tensors)


def _check_v(v, like, like_is_tuple):
    if len(v) != len(like):
        if like_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(like)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, like)):
        if a.size() != b.size():
            prefix = f"Entry {i} in " if like_is_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {b.size()} but got {a.size()}.")


_STRICT_MESSAGES = {
    "outputs": ("Output {i} of the user-provided function does not require gradients. The outputs "
                "must be computed in a differentiable manner from the input when running in strict mode."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of the "
                    "user-provided function. This is not allowed in strict mode."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided function "
                 "with respect to input {i} is independent of the input. This is not allowed in strict "
                 "mode. You should ensure that your function is twice differentiable and that the "
                 "jacobian depends on the inputs (this would be violated by a linear function for example)."),
    "hessian": ("The hessian of the user-provided function with respect to input {i} is independent of "
                "the input. This is not allowed in strict mode. You should ensure that your function is "
                "thrice differentiable and that the hessian depends on the inputs."),
}


def _check_requires_grad(tensors, kind, strict):
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. "
                               "This is not allowed in strict mode.")
        if not t.requires_grad:
            raise RuntimeError(_STRICT_MESSAGES[kind].format(i=i))


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """tt.autograd.grad over the outputs that require grad (None for an input nothing reaches)."""
    from . import grad
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    outs, gouts = zip(*pairs)
    return grad(outs, inputs, gouts, allow_unused=True, create_graph=create_graph, retain_graph=retain_graph)


_MISSING_MESSAGES = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict mode.",
    "back_trick": ("The gradient with respect to the input is independent of entry {i} in the grad_outputs "
                   "when using the double backward trick to compute forward mode gradients. This is not "
                   "allowed in strict mode."),
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in strict mode.",
    "double_back_trick": ("The hessian of the user-provided function is independent of entry {i} in the "
                          "grad_jacobian. This is not allowed in strict mode as it prevents from using the "
                          "double backward trick to replace forward mode AD."),
}


def _zeros_for_missing(grads, refs, strict, create_graph, stage):
    """Replace the None of an input nothing reached by zeros shaped like it (strict: raise)."""
    from ..ops.creation import zeros_like
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_MISSING_MESSAGES[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. "
                               "This is not allowed in strict mode when create_graph=True.")
        res.append(g)
    return tuple(res)


def _prepare_v(v, like, like_is_tuple, fn_name, create_graph, none_message):
    if v is None:
        if len(like) != 1 or like[0].numel() != 1:
            raise RuntimeError(none_message)
        return None
    _, v = _as_tuple(v, "v", fn_name)
    v = _fresh_inputs(v, create_graph=create_graph, need_graph=False)
    _check_v(v, like, like_is_tuple)
    return v


_V_NONE_OUTPUT = ("The vector v can only be None if the user-provided function returns a single "
                  "Tensor with a single element.")
_V_NONE_INPUT = ("The vector v can only be None if the input to the user-provided function is a "
                 "single Tensor with a single element.")


# --------------------------------------------------------------------------- products
def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product (torch.autograd.functional.vjp)."""
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _fresh_inputs(inputs, create_graph=create_graph, need_graph=True)
        outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        v = _prepare_v(v, outputs, outputs_tuple, "vjp", create_graph, _V_NONE_OUTPUT)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _grad(outputs, inputs, v, create_graph=create_graph)
        result = _zeros_for_missing(grads, inputs, strict, create_graph, "back")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(result, create_graph), inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product by the double-backward trick
    (torch.autograd.functional.jvp)."""
    from ..ops.creation import zeros_like
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _fresh_inputs(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, inputs_tuple, "jvp", create_graph, _V_NONE_INPUT)
        outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        # J^T u is linear in u, so u's value never enters the second backward: zeros do (no inf/NaN)
        cotangents = tuple(zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _grad(outputs, inputs, cotangents, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _grad(grad_inputs, cotangents, v, create_graph=create_graph)
        result = _zeros_for_missing(grads, outputs, strict, create_graph, "back_trick")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(result, create_graph), outputs_tuple))


# --------------------------------------------------------------------------- Jacobian, Hessian
def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs`` (torch.autograd.functional.jacobian): for output i and
    input j a Tensor of shape ``outputs[i].shape + inputs[j].shape``, one backward pass per output
    element."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function has '
            'more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, prefer to '
            'use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and `strategy=\"forward-mode\"` "
                "are not supported together (yet). Please either set `create_graph=False` or "
                "`strategy=\"reverse-mode\"`.")
        return _jacfwd(func, inputs, strict, vectorize)
    from ..ops.creation import zeros_like
    from ..ops.joining import stack
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _fresh_inputs(inputs, create_graph=create_graph, need_graph=True)
        outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                "supported together. Please either set `strict=False` or `vectorize=False`.")
        jacobian_rows = []
        for i, out in enumerate(outputs):
            per_input = [[] for _ in inputs]
            flat = out.reshape(-1)
            for k in range(out.numel()):
                grads = _grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
                for j, (g, inp) in enumerate(zip(grads, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of "
                                               f"input {j}. This is not allowed in strict mode.")
                        g = zeros_like(inp)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is independent of "
                                           f"input {i}. This is not allowed in strict mode when create_graph=True.")
                    per_input[j].append(g)
            jacobian_rows.append(tuple(
                _stack_rows(rows, out, inp, stack, zeros_like) for rows, inp in zip(per_input, inputs)))
        jacobian_rows = _finish(tuple(jacobian_rows), create_graph)
        return _unpack(jacobian_rows, (outputs_tuple, inputs_tuple))


def _jacfwd(func, inputs, strict, vectorize):
    """jacobian(strategy="forward-mode"): one forward pass with dual inputs per input element
    (tt.autograd.forward_ad), the tangents of the outputs being the Jacobian's columns. torch
    batches the passes with vmap (so asks for vectorize=True, as here); tritensor runs them one
    after another, with the same results."""
    from ..ops.creation import zeros, zeros_like
    from ..ops.joining import stack
    from . import forward_ad as fwAD
    if strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and `strategy=\"forward-mode\"` are not "
            "supported together (yet). Please either set `strict=False` or `strategy=\"reverse-mode\"`.")
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
            "only implemented for `vectorize=True`.")
    columns = None            # per output: per input: its columns (one per input element)
    outputs = outputs_tuple = None
    for j, inp in enumerate(inputs):
        for k in range(inp.numel()):
            with fwAD.dual_level():
                duals = []
                for i, x in enumerate(inputs):
                    t = zeros(x.shape, dtype=x.dtype, device=x.device)
                    if i == j:
                        t.view(-1)[k] = 1
                    duals.append(fwAD.make_dual(x, t))
                outputs_tuple, outs = _as_tuple(func(*duals), "outputs", "jacobian")
                outputs, tangents = [], []
                for o in outs:
                    primal, tangent = fwAD.unpack_dual(o)
                    outputs.append(primal)
                    tangents.append(tangent if tangent is not None else zeros_like(primal))
            if columns is None:
                columns = [[[] for _ in inputs] for _ in outputs]
            for i, t in enumerate(tangents):
                columns[i][j].append(t.reshape(-1))
    if columns is None:              # every input is empty: one pass for the outputs' shapes
        with fwAD.dual_level():
            outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs", "jacobian")
        columns = [[[] for _ in inputs] for _ in outputs]
    result = []
    for i, out in enumerate(outputs):
        row = []
        for j, inp in enumerate(inputs):
            shape = tuple(out.shape) + tuple(inp.shape)
            cols = columns[i][j]
            row.append(stack(cols, dim=-1).reshape(shape) if cols else
                       zeros(shape, dtype=out.dtype, device=out.device))
        result.append(tuple(row))
    return _unpack(tuple(result), (outputs_tuple, inputs_tuple))


def _stack_rows(rows, out, inp, stack, zeros_like):
    shape = tuple(out.shape) + tuple(inp.shape)
    if not rows:                        # a size-0 output: an empty Jacobian block
        return zeros_like(inp).new_zeros(shape)
    return stack(rows, dim=0).view(shape)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function (torch.autograd.functional.hessian): the Jacobian of its
    gradient; for inputs (a, b) a tuple of tuples ((H_aa, H_ab), (H_ba, H_bb))."""
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*inp):
        out = func(*inp)
        out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def gradient(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(scalar_func, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _unpack(res, (inputs_tuple, inputs_tuple))


def _scalar_output(func, inputs, fn_name, strict):
    outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    if outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    return outputs_tuple, outputs


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) of a scalar function (torch.autograd.functional.vhp)."""
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _fresh_inputs(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, inputs_tuple, "vhp", create_graph, _V_NONE_INPUT)
        outputs_tuple, outputs = _scalar_output(func, inputs, "vhp", strict)
        jac = _grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _grad(jac, inputs, v, create_graph=create_graph)
        result = _zeros_for_missing(grads, inputs, strict, create_graph, "double_back")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(result, create_graph), inputs_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) of a scalar function by the double-backward trick
    (torch.autograd.functional.hvp); equal to vhp for a twice continuously differentiable function."""
    from ..ops.creation import zeros_like
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _fresh_inputs(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, inputs_tuple, "hvp", create_graph, _V_NONE_INPUT)
        outputs_tuple, outputs = _scalar_output(func, inputs, "hvp", strict)
        jac = _grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        grad_jac = tuple(zeros_like(t, requires_grad=True) for t in inputs)
        double_back = _grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _grad(double_back, grad_jac, v, create_graph=create_graph)
        result = _zeros_for_missing(grads, inputs, strict, create_graph, "double_back_trick")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(result, create_graph), inputs_tuple))
