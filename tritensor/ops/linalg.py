"""Matrix multiplication: mm, bmm, matmul, addmm, baddbmm (table entries), and on top of them
dot, mv, linear and the ``@`` operator.

Five table entries share one rule family, one NumPy reference, one Triton launcher
(backends/triton_matmul.py) and one backward family:

    mm       [M, K] @ [K, N]                                    MmBackward0
    bmm      [B, M, K] @ [B, K, N]                              BmmBackward0
    matmul   [*a, M, K] @ [*b, K, N], batch dims broadcast      MatmulBackward0
    addmm    beta * input + alpha * mm(x, y), input broadcast   AddmmBackward0
    baddbmm  beta * input + alpha * bmm(x, y)                   BaddbmmBackward0

The kernel reads every operand through its strides, so a transposed or sliced operand, and a
batch broadcast with stride 0, cost no copy. torch's ``matmul`` handles 1-D operands by
unsqueezing them (views) and squeezing the result; so does ``tt.matmul``.

Backward: dA = dC @ B^T and dB = A^T @ dC, written with these same ops on transposed views (no
copies) so that create_graph differentiates them again; gradients of broadcast batch dims (and of
addmm's broadcast input) are summed back to each input's shape.

Dtypes: float16, bfloat16, float32 (accumulating in float32) and float64; both operands must have
the same dtype (torch does not promote in matmul); integers are rejected with torch's message.
The float32 precision on cuda is ``tt.backends.cuda.matmul.allow_tf32`` /
``tt.set_float32_matmul_precision`` (default IEEE float32).
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..backends import triton_matmul as tmm
from ..tensor import Tensor
from .dispatch import dispatch
from .elementwise import _needed, add, mul
from .reduce import sum_to_size
from .table import Meta, op
from .views import view_strides

# torch's C++ type names (caffe2 TypeMeta), as its dtype-mismatch messages print them
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "Half", "bfloat16": "BFloat16",
              "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool"}


# --------------------------------------------------------------------------- checks
def _check_tensor(name, x, arg="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(x).__name__}")


def _check_floating(x, cpu_name, cuda_name):
    """torch implements matmul for floating types only (here): its dispatch error otherwise."""
    if not x.dtype.is_floating_point:
        name = cpu_name if x.device.type == "cpu" else cuda_name
        raise RuntimeError(f'"{name}" not implemented for \'{_dt.type_name(x.dtype)}\'')


def _check_same_dtype_mm(x, y):
    if x.dtype is not y.dtype:
        which = "m1 and m2" if x.device.type == "cpu" else "mat1 and mat2"
        raise RuntimeError(f"expected {which} to have the same dtype, but got: "
                           f"{_CPP_NAMES[x.dtype.name]} != {_CPP_NAMES[y.dtype.name]}")


def _check_same_dtype_bmm(x, y):
    if x.dtype is not y.dtype:
        raise RuntimeError(f"expected scalar type {_dt.type_name(x.dtype)} but found {_dt.type_name(y.dtype)}")


def _mm_shapes_error(a_shape, b_shape):
    return RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a_shape[0]}x{a_shape[1]} and "
                        f"{b_shape[0]}x{b_shape[1]})")


def _bmm_shapes_error(bs, k, b0, b1):
    return RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{bs}, {k}] "
                        f"but got: [{b0}, {b1}].")


def _check_mm(x, y):
    if x.dim() != 2:
        raise RuntimeError("self must be a matrix")
    if y.dim() != 2:
        raise RuntimeError("mat2 must be a matrix")
    if x.shape[1] != y.shape[0]:
        raise _mm_shapes_error(x.shape, y.shape)
    _check_same_dtype_mm(x, y)
    _check_floating(x, "addmm_impl_cpu_", "addmm_cuda")


def _check_bmm(x, y):
    if x.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if y.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if y.shape[0] != x.shape[0] or y.shape[1] != x.shape[2]:
        raise _bmm_shapes_error(x.shape[0], x.shape[2], y.shape[0], y.shape[1])
    _check_same_dtype_bmm(x, y)
    _check_floating(x, "bmm", "bmm_cuda")


def _broadcast_batch(a, b):
    from .elementwise import broadcast_shapes
    return broadcast_shapes(tuple(a), tuple(b))


# --------------------------------------------------------------------------- rules
def _mm_rule(x, y, **_):
    _check_mm(x, y)
    return Meta((x.shape[0], y.shape[1]), x.dtype, _dt.compute_dtype(x.dtype))


def _bmm_rule(x, y, **_):
    _check_bmm(x, y)
    return Meta((x.shape[0], x.shape[1], y.shape[2]), x.dtype, _dt.compute_dtype(x.dtype))


def _matmul_rule(x, y, **_):
    """Both operands at least 2-D; batch dims broadcast (the front end has handled 1-D)."""
    if x.dim() < 2 or y.dim() < 2:
        raise RuntimeError(f"matmul: the batched primitive needs 2-D or more operands, got "
                           f"{x.dim()}D and {y.dim()}D")
    batch = _broadcast_batch(x.shape[:-2], y.shape[:-2])
    if x.shape[-1] != y.shape[-2]:
        bs = int(np.prod(batch)) if batch else 1
        raise _bmm_shapes_error(bs, x.shape[-1], bs, y.shape[-2])
    _check_same_dtype_mm(x, y)
    _check_floating(x, "addmm_impl_cpu_", "addmm_cuda")
    return Meta(batch + (x.shape[-2], y.shape[-1]), x.dtype, _dt.compute_dtype(x.dtype))


def _check_input_broadcast(name, input, shape):
    """addmm/baddbmm's input must expand to the result's shape (torch's expand_size)."""
    try:
        ok = input.dim() <= len(shape) and _broadcast_batch(input.shape, shape) == tuple(shape)
    except RuntimeError:
        ok = False
    if not ok:
        raise RuntimeError(f"The expanded size of the tensor ({shape[-1]}) must match the existing size "
                           f"({input.shape[-1] if input.dim() else 1}) at non-singleton dimension "
                           f"{len(shape) - 1}.  Target sizes: {list(shape)}.  Tensor sizes: {list(input.shape)}")


def _addmm_rule(input, x, y, beta=1, alpha=1):
    if x.dim() != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {x.dim()}-D tensor")
    if y.dim() != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {y.dim()}-D tensor")
    if input.dtype is not y.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_dt.type_name(input.dtype)} "
                           f"and {_dt.type_name(y.dtype)}")
    if x.dtype is not y.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_dt.type_name(x.dtype)} "
                           f"and {_dt.type_name(y.dtype)}")
    if x.shape[1] != y.shape[0]:
        raise _mm_shapes_error(x.shape, y.shape)
    shape = (x.shape[0], y.shape[1])
    _check_input_broadcast("addmm", input, shape)
    _check_floating(x, "addmm_impl_cpu_", "addmm_cuda")
    return Meta(shape, x.dtype, _dt.compute_dtype(x.dtype))


def _baddbmm_rule(input, x, y, beta=1, alpha=1):
    if x.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if y.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    shape = (x.shape[0], x.shape[1], y.shape[2])
    _check_input_broadcast("baddbmm", input, shape)
    if input.dtype is not x.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {_CPP_NAMES[input.dtype.name]}, "
                           f"batch1: {_CPP_NAMES[x.dtype.name]}, batch2: {_CPP_NAMES[y.dtype.name]}")
    _check_bmm(x, y)
    return Meta(shape, x.dtype, _dt.compute_dtype(x.dtype))


# --------------------------------------------------------------------------- reference and kernel
def _reference(*arrays, beta=1, alpha=1):
    """NumPy: [input,] x, y already in the compute dtype (16-bit floats widened to float32)."""
    x, y = arrays[-2:]
    prod = np.matmul(x, y)
    if alpha != 1:
        prod = prod * alpha
    if len(arrays) == 3 and beta != 0:   # beta == 0 ignores input entirely (NaN too), as torch
        input = arrays[0]
        prod = prod + (input if beta == 1 else input * beta)
    return prod


def _launch(out, *args, compute, beta=1, alpha=1):
    x, y = args[-2:]
    d = args[0] if len(args) == 3 else None
    tmm.matmul(out, x, y, d, alpha=alpha, beta=beta if d is not None else 0)


# --------------------------------------------------------------------------- backward
def _mT(t):
    return t.transpose(-2, -1)


def _scaled(t, s):
    return t if s == 1 else mul(t, s)


def _mm_backward(ctx, g):
    return _needed(ctx, lambda: mm(g, _mT(ctx.y)), lambda: mm(_mT(ctx.x), g))


def _bmm_backward(ctx, g):
    return _needed(ctx, lambda: bmm(g, _mT(ctx.y)), lambda: bmm(_mT(ctx.x), g))


def _matmul_grad_x(g, x, y):
    """dL/dx of x @ y (batched, broadcast): g @ y^T summed back to x's shape."""
    return sum_to_size(_matmul_nd(g, _mT(y)), tuple(x.shape))


def _matmul_grad_y(g, x, y):
    if y.dim() == 2 and x.dim() > 2:
        # y is shared by the whole batch: dL/dy = sum_b x_b^T g_b, one mm over the folded rows
        # (a view when x's batch is contiguous with its rows, as it is for linear on N-D input)
        k = x.shape[-1]
        return mm(_mT(x.reshape(-1, k)), g.reshape(-1, g.shape[-1]))
    return sum_to_size(_matmul_nd(_mT(x), g), tuple(y.shape))


def _matmul_backward(ctx, g):
    x, y = ctx.x, ctx.y
    return _needed(ctx, lambda: _matmul_grad_x(g, x, y), lambda: _matmul_grad_y(g, x, y))


def _addmm_backward(ctx, g):
    shape = ctx.input_meta[0][0]
    return _needed(ctx, lambda: sum_to_size(_scaled(g, ctx.beta), tuple(shape)),
                   lambda: _scaled(mm(g, _mT(ctx.y)), ctx.alpha),
                   lambda: _scaled(mm(_mT(ctx.x), g), ctx.alpha))


def _baddbmm_backward(ctx, g):
    shape = ctx.input_meta[0][0]
    return _needed(ctx, lambda: sum_to_size(_scaled(g, ctx.beta), tuple(shape)),
                   lambda: _scaled(bmm(g, _mT(ctx.y)), ctx.alpha),
                   lambda: _scaled(bmm(_mT(ctx.x), g), ctx.alpha))


# --------------------------------------------------------------------------- entries
MM = op("mm", ("x", "y"), rule=_mm_rule, reference=_reference, kernel=_launch,
        backward=_mm_backward, saves=("x", "y"))
BMM = op("bmm", ("x", "y"), rule=_bmm_rule, reference=_reference, kernel=_launch,
         backward=_bmm_backward, saves=("x", "y"))
MATMUL = op("matmul", ("x", "y"), rule=_matmul_rule, reference=_reference, kernel=_launch,
            backward=_matmul_backward, saves=("x", "y"))
ADDMM = op("addmm", ("input", "x", "y"), rule=_addmm_rule, reference=_reference, kernel=_launch,
           backward=_addmm_backward, saves=("x", "y"))
BADDBMM = op("baddbmm", ("input", "x", "y"), rule=_baddbmm_rule, reference=_reference, kernel=_launch,
             backward=_baddbmm_backward, saves=("x", "y"))


# --------------------------------------------------------------------------- functions
def mm(input, mat2):
    _check_tensor("mm", input)
    _check_tensor("mm", mat2, "mat2")
    return dispatch(MM, input, mat2)


def bmm(input, mat2):
    _check_tensor("bmm", input)
    _check_tensor("bmm", mat2, "mat2")
    return dispatch(BMM, input, mat2)


def _scalar(name, v):
    if isinstance(v, Tensor):
        v = v.item()
    if not isinstance(v, (int, float)):
        raise TypeError(f"{name} must be a number, not {type(v).__name__}")
    return v


def _as_input(input, like):
    """addmm's input may be a 0-d cpu tensor next to cuda matrices (a scalar, as in torch):
    move it, so the kernel reads it as a broadcast operand."""
    if isinstance(input, Tensor) and input.device != like.device and input.dim() == 0 and input.device.type == "cpu":
        from .copy import to_device
        return to_device(input, like.device)
    return input


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    for t, n in ((input, "input"), (mat1, "mat1"), (mat2, "mat2")):
        _check_tensor("addmm", t, n)
    return dispatch(ADDMM, _as_input(input, mat1), mat1, mat2, beta=_scalar("beta", beta),
                    alpha=_scalar("alpha", alpha))


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    for t, n in ((input, "input"), (batch1, "batch1"), (batch2, "batch2")):
        _check_tensor("baddbmm", t, n)
    return dispatch(BADDBMM, _as_input(input, batch1), batch1, batch2, beta=_scalar("beta", beta),
                    alpha=_scalar("alpha", alpha))


def _matmul_nd(x, y):
    """x @ y for operands of 2 or more dims: mm, bmm, or the broadcasting primitive."""
    if x.dim() == 2 and y.dim() == 2:
        return dispatch(MM, x, y)
    if x.dim() == 3 and y.dim() == 3 and x.shape[0] == y.shape[0]:
        return dispatch(BMM, x, y)
    return dispatch(MATMUL, x, y)


def dot(input, tensor):
    _check_tensor("dot", input)
    _check_tensor("dot", tensor, "tensor")
    if input.dim() != 1 or tensor.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {tensor.dim()}D tensors")
    return _dot(input, tensor)


def _dot(x, y):
    if x.dtype is not y.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_dt.type_name(x.dtype)} and {_dt.type_name(y.dtype)}")
    if x.shape[0] != y.shape[0]:
        n, m = x.shape[0], y.shape[0]
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the "
                           f"same number of elements, but got {n} and {m} elements respectively")
    _check_floating(x, "dot", "dot")
    return mm(x.unsqueeze(0), y.unsqueeze(1)).reshape(())


def mv(input, vec):
    _check_tensor("mv", input)
    _check_tensor("mv", vec, "vec")
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.dim()}, {vec.dim()}")
    return _mv(input, vec)


def _mv(x, v):
    if x.shape[1] != v.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({x.shape[0]}), mat ({x.shape[0]}x{x.shape[1]}), "
                           f"vec ({v.shape[0]})")
    return mm(x, v.unsqueeze(1)).squeeze(-1)


def matmul(input, other):
    """torch.matmul: 1-D operands are unsqueezed to matrices (and the added dim removed from the
    result); batch dims broadcast."""
    _check_tensor("matmul", input)
    _check_tensor("matmul", other, "other")
    d1, d2 = input.dim(), other.dim()
    if d1 == 0 or d2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {d1}D and {d2}D")
    if d1 == 1 and d2 == 1:
        return _dot(input, other)
    if d1 == 2 and d2 == 1:
        return _mv(input, other)
    if d1 == 1:
        return _matmul_checked(input.unsqueeze(0), other, vec_x=True).squeeze(-2)
    if d2 == 1:
        if input.shape[-1] != other.shape[0]:
            rows = int(np.prod(input.shape[:-1]))
            raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{input.shape[-1]}), "
                               f"vec ({other.shape[0]})")
        return _matmul_checked(input, other.unsqueeze(1)).squeeze(-1)
    return _matmul_checked(input, other)


def _matmul_checked(x, y, vec_x=False):
    """torch's matmul folds/reshapes before calling mm or bmm; its shape error is theirs."""
    if x.shape[-1] != y.shape[-2]:
        if y.dim() == 2 and (x.dim() == 2 or not vec_x):
            rows = int(np.prod(x.shape[:-1]))
            raise _mm_shapes_error((rows, x.shape[-1]), y.shape)
        batch = _broadcast_batch(x.shape[:-2], y.shape[:-2])
        bs = int(np.prod(batch)) if batch else 1
        raise _bmm_shapes_error(bs, x.shape[-1], bs, y.shape[-2])
    return _matmul_nd(x, y)


def rmatmul(self, other):
    """``other @ self`` where ``other`` is not a tensor (Python's __rmatmul__)."""
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(other, self)


def linear(input, weight, bias=None):
    """tt.nn.functional.linear: input [*, in] @ weight[out, in]^T (+ bias [out]); weight^T is a
    transposed view, read in place. A 2-D input (or one whose leading dims fold into rows
    without a copy) with a bias is one fused addmm."""
    _check_tensor("linear", input)
    _check_tensor("linear", weight, "weight")
    if bias is not None:
        _check_tensor("linear", bias, "bias")
    if weight.dim() == 2 and bias is not None and input.dim() >= 2:
        if input.dim() == 2:
            return addmm(bias, input, weight.t())
        k = input.shape[-1]
        rows = int(np.prod(input.shape[:-1]))
        if view_strides(input.shape, input.stride(), (rows, k)) is not None:
            out = addmm(bias, input.reshape(rows, k), weight.t())
            return out.reshape(tuple(input.shape[:-1]) + (weight.shape[0],))
    if weight.dim() == 2 and input.dim() >= 2:
        out = _matmul_checked(input, weight.t())
    else:
        out = matmul(input, weight.t() if weight.dim() == 2 else weight)
    return out if bias is None else add(out, bias)
