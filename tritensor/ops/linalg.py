"""Matrix multiplication: mm, bmm, matmul, addmm, baddbmm (table entries), and on top of them
dot, mv, outer, linear, the in-place addmm_/baddbmm_ and the ``@`` operator.

Five table entries share one rule family, one NumPy reference, one Triton launcher
(backends/triton/matmul.py) and one backward family:

    mm       [M, K] @ [K, N]                                    MmBackward0
    bmm      [B, M, K] @ [B, K, N]                              BmmBackward0
    matmul   [*a, M, K] @ [*b, K, N], batch dims broadcast      MatmulBackward0
    addmm    beta * input + alpha * mm(x, y), input broadcast   AddmmBackward0
    baddbmm  beta * input + alpha * bmm(x, y)                   BaddbmmBackward0

The kernel reads every operand through its strides, so a transposed or sliced operand, and a
batch broadcast with stride 0, cost no copy. torch's ``matmul`` handles 1-D operands by
unsqueezing them (views) and squeezing the result; so does ``tt.matmul``. Which of mm, mv, dot or
bmm torch would call for a bad call decides its error message; _check_matmul mirrors that choice
(the computation does not depend on it).

Backward: dA = dC @ B^T and dB = A^T @ dC, written with these same ops on transposed views (no
copies) so that create_graph differentiates them again; gradients of broadcast batch dims (and of
addmm's broadcast input) are summed back to each input's shape.

Dtypes: float16, bfloat16, float32 (accumulating in float32) and float64, and the integers
uint8/int8/int16/int32/int64 as torch 2.13's CPU computes them (exact, wrapping: the integer
kernel accumulates in int64; alpha and beta are truncated to integers, as torch converts them);
both operands must have the same dtype (torch does not promote in matmul); bool is rejected with
torch's message.
The float32 precision on cuda is ``tt.backends.cuda.matmul.allow_tf32`` /
``tt.set_float32_matmul_precision`` (default IEEE float32).
"""
from __future__ import annotations

from .._autocast import autocast_policy as _autocast_policy

import numpy as np

from .. import dtypes as _dt
from ..autograd.composite import named_composite
from ..backends import numpy_ref
from ..backends.base import backend_for
from ..backends.triton import matmul as tmm
from ..tensor import Tensor
from . import _unsigned
from ._checks import check_tensor as _check_tensor
from ..autograd.grad_mode import is_grad_enabled
from .copy import copy_into, to_device
from .dispatch import _rebase_inplace, check_inplace, dispatch, dispatch_inplace
from .elementwise import _needed, add, broadcast_shapes, mul
from .reduce import sum_to_size
from .table import BILINEAR, Meta, op, signature_rule
from .views import TRANSPOSE, _expand_layout, unsafe_view, view_strides

# torch's C++ type names (caffe2 TypeMeta), as its dtype-mismatch messages print them
_CPP_NAMES = _dt.CPP_NAMES


# --------------------------------------------------------------------------- checks
def _check_floating(x, cpu_name, cuda_name):
    """Matmul is implemented for the floating and integer types (torch 2.13's CPU kernels): bool
    gets torch's dispatch error, a NotImplementedError (a RuntimeError) as in torch."""
    if x.dtype is _dt.bool_:
        name = backend_for(x.device).torch_name(cpu_name, cuda_name)
        raise NotImplementedError(f'"{name}" not implemented for \'{_dt.type_name(x.dtype)}\'')


def _check_same_dtype_mm(x, y):
    if x.dtype is not y.dtype:
        which = backend_for(x.device).torch_name("m1 and m2", "mat1 and mat2")
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


def _check_bmm(x, y, cpu_name="bmm"):
    if x.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if y.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if y.shape[0] != x.shape[0] or y.shape[1] != x.shape[2]:
        raise _bmm_shapes_error(x.shape[0], x.shape[2], y.shape[0], y.shape[1])
    # torch dispatches on batch1's dtype first, then finds batch2's to differ
    _check_floating(x, cpu_name, "bmm_cuda")
    _check_same_dtype_bmm(x, y)


def _broadcast_batch(a, b):
    return broadcast_shapes(tuple(a), tuple(b))


# --------------------------------------------------------------------------- rules
@signature_rule
def _mm_rule(x, y, **_):
    _check_mm(x, y)
    return Meta((x.shape[0], y.shape[1]), x.dtype, _dt.compute_dtype(x.dtype))


@signature_rule
def _bmm_rule(x, y, **_):
    _check_bmm(x, y)
    return Meta((x.shape[0], x.shape[1], y.shape[2]), x.dtype, _dt.compute_dtype(x.dtype))


@signature_rule
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
    """addmm/baddbmm's input must expand to the result's shape: torch expands it, and its
    errors are expand's."""
    _expand_layout(input, tuple(shape))


@signature_rule
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
    _check_bmm(x, y, "baddbmm")
    return Meta(shape, x.dtype, _dt.compute_dtype(x.dtype))


# --------------------------------------------------------------------------- reference and kernel
def _launch(out, *args, compute, beta=1, alpha=1):
    x, y = args[-2:]
    d = args[0] if len(args) == 3 else None
    tmm.matmul(out, x, y, d, alpha=alpha, beta=beta if d is not None else 0)


# --------------------------------------------------------------------------- backward
def _mT(t):
    return dispatch(TRANSPOSE, t, dim0=-2, dim1=-1)     # t.transpose(-2, -1), without its front end


def _scaled(t, s):
    return t if s == 1 else mul(t, s)


def _column_major(t):
    """torch's test in mm_mat1/mat2_backward: a 2-D operand laid out as a transposed contiguous
    matrix (nn.Linear's weight.t()), whose gradient is then computed in that layout too."""
    size, stride = t.shape, t.stride()
    return stride[0] == 1 and stride[1] == size[0]


def _mm_grad_x(g, x, y):
    """dL/dx of x @ y: g @ y^T, or (y @ g^T)^T when x is column-major (torch's layout rule: the
    gradient gets x's layout, so accumulating it into a leaf copies nothing)."""
    # (mm's own dispatch: its operands are tensors; issue 14)
    return _mT(dispatch(MM, y, _mT(g))) if _column_major(x) else dispatch(MM, g, _mT(y))


def _mm_grad_y(g, x, y):
    """dL/dy of x @ y: x^T @ g, or (g^T @ x)^T when y is column-major (nn.Linear's weight.t())."""
    return _mT(dispatch(MM, _mT(g), x)) if _column_major(y) else dispatch(MM, _mT(x), g)


def _mm_backward(ctx, g):
    x, y = ctx.x, ctx.y
    return _needed(ctx, lambda: _mm_grad_x(g, x, y), lambda: _mm_grad_y(g, x, y))


def _bmm_backward(ctx, g):
    return _needed(ctx, lambda: bmm(g, _mT(ctx.y)), lambda: bmm(_mT(ctx.x), g))


def _matmul_grad_x(g, x, y):
    """dL/dx of x @ y (batched, broadcast): g @ y^T summed back to x's shape."""
    return sum_to_size(_matmul_nd(g, _mT(y)), tuple(x.shape))


def _matmul_grad_y(g, x, y):
    if y.dim() == 2 and x.dim() > 2:
        # y is shared by the whole batch: dL/dy = sum_b x_b^T g_b, one mm over the folded rows
        # (a view when x's batch is contiguous with its rows, as it is for linear on N-D input)
        # (rows counted explicitly: reshape(-1, 0) is ambiguous when the contracted dim is empty)
        rows = int(np.prod(x.shape[:-1]))
        return mm(_mT(x.reshape(rows, x.shape[-1])), g.reshape(rows, g.shape[-1]))
    return sum_to_size(_matmul_nd(_mT(x), g), tuple(y.shape))


def _matmul_backward(ctx, g):
    x, y = ctx.x, ctx.y
    return _needed(ctx, lambda: _matmul_grad_x(g, x, y), lambda: _matmul_grad_y(g, x, y))


def _addmm_backward(ctx, g):
    shape = ctx.input_meta[0][0]
    return _needed(ctx, lambda: sum_to_size(_scaled(g, ctx.beta), tuple(shape)),
                   lambda: _scaled(_mm_grad_x(g, ctx.x, ctx.y), ctx.alpha),
                   lambda: _scaled(_mm_grad_y(g, ctx.x, ctx.y), ctx.alpha))


def _baddbmm_backward(ctx, g):
    shape = ctx.input_meta[0][0]
    return _needed(ctx, lambda: sum_to_size(_scaled(g, ctx.beta), tuple(shape)),
                   lambda: _scaled(bmm(g, _mT(ctx.y)), ctx.alpha),
                   lambda: _scaled(bmm(_mT(ctx.x), g), ctx.alpha))


def _addmm_jvp(product):
    """Forward rule of beta * input + alpha * (x @ y): beta * t_input + alpha * (tx @ y + x @ ty)
    (beta == 0 ignores input and its tangent, as the forward does)."""
    def jvp(ctx, t_input, tx, ty):
        out = None
        if tx is not None:
            out = product(tx, ctx.y)
        if ty is not None:
            term = product(ctx.x, ty)
            out = term if out is None else add(out, term)
        if out is not None:
            out = _scaled(out, ctx.alpha)
        if t_input is not None and ctx.beta != 0:
            term = _scaled(t_input, ctx.beta).expand(ctx.out.shape)
            out = term if out is None else add(out, term)
        return out          # (None: a zero tangent)
    return jvp


# --------------------------------------------------------------------------- entries
MM = op("mm", ("x", "y"), rule=_mm_rule, reference=numpy_ref.matmul, kernel=_launch,
        backward=_mm_backward, saves=("x", "y"), jvp=BILINEAR)
BMM = op("bmm", ("x", "y"), rule=_bmm_rule, reference=numpy_ref.matmul, kernel=_launch,
         backward=_bmm_backward, saves=("x", "y"), jvp=BILINEAR)
MATMUL = op("matmul", ("x", "y"), rule=_matmul_rule, reference=numpy_ref.matmul, kernel=_launch,
            backward=_matmul_backward, saves=("x", "y"), jvp=BILINEAR)
ADDMM = op("addmm", ("input", "x", "y"), rule=_addmm_rule, reference=numpy_ref.matmul, kernel=_launch,
           backward=_addmm_backward, saves=("x", "y"), jvp=_addmm_jvp(lambda a, b: dispatch(MM, a, b)))
BADDBMM = op("baddbmm", ("input", "x", "y"), rule=_baddbmm_rule, reference=numpy_ref.matmul, kernel=_launch,
             backward=_baddbmm_backward, saves=("x", "y"), jvp=_addmm_jvp(lambda a, b: bmm(a, b)))


# --------------------------------------------------------------------------- functions
def mm(input, mat2):
    _check_tensor("mm", input)
    _check_tensor("mm", mat2, "mat2", 2)
    return dispatch(MM, input, mat2)


def bmm(input, mat2):
    _check_tensor("bmm", input)
    _check_tensor("bmm", mat2, "mat2", 2)
    return dispatch(BMM, input, mat2)


def _scalar(name, v, dtype=None):
    """alpha/beta as a Python number; for an integer ``dtype``, the integer torch converts it to
    (C's truncation: 2.5 -> 2)."""
    if isinstance(v, Tensor):
        v = v.item()
    if not isinstance(v, (int, float)):
        raise TypeError(f"{name} must be a number, not {type(v).__name__}")
    if dtype is not None and not dtype.is_floating_point and dtype is not _dt.bool_:
        return int(v)
    return v


def _as_input(input, like):
    """addmm's input may be a 0-d cpu tensor next to cuda matrices (a scalar, as in torch):
    move it, so the kernel reads it as a broadcast operand."""
    if isinstance(input, Tensor) and input.device != like.device and input.dim() == 0 \
            and backend_for(input.device).host_memory:
        return to_device(input, like.device)
    return input


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    for i, (t, n) in enumerate(((input, "input"), (mat1, "mat1"), (mat2, "mat2"))):
        _check_tensor("addmm", t, n, i + 1)
    return dispatch(ADDMM, _as_input(input, mat1), mat1, mat2, beta=_scalar("beta", beta, mat1.dtype),
                    alpha=_scalar("alpha", alpha, mat1.dtype))


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    for i, (t, n) in enumerate(((input, "input"), (batch1, "batch1"), (batch2, "batch2"))):
        _check_tensor("baddbmm", t, n, i + 1)
    return dispatch(BADDBMM, _as_input(input, batch1), batch1, batch2, beta=_scalar("beta", beta, batch1.dtype),
                    alpha=_scalar("alpha", alpha, batch1.dtype))


def _matmul_nd(x, y):
    """x @ y for operands of 2 or more dims: mm, bmm, or the broadcasting primitive."""
    if x.dim() == 2 and y.dim() == 2:
        return dispatch(MM, x, y)
    if x.dim() == 3 and y.dim() == 3 and x.shape[0] == y.shape[0]:
        return dispatch(BMM, x, y)
    return dispatch(MATMUL, x, y)


@_autocast_policy("dot")
def dot(input, tensor):
    _check_tensor("dot", input)
    _check_tensor("dot", tensor, "tensor", 2)
    if input.dim() != 1 or tensor.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {tensor.dim()}D tensors")
    _unsigned.refuse("dot", input.dtype)
    return _dot(input, tensor)


def _dot(x, y, node="DotBackward0"):
    if x.dtype is not y.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_dt.type_name(x.dtype)} and {_dt.type_name(y.dtype)}")
    if x.shape[0] != y.shape[0]:
        n, m = x.shape[0], y.shape[0]
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the "
                           f"same number of elements, but got {n} and {m} elements respectively")
    _check_floating(x, "dot", "dot")
    # one DotBackward0 (VdotBackward0) node, as torch's
    return named_composite(node, lambda a, b: mm(a.unsqueeze(0), b.unsqueeze(1)).reshape(()), x, y)


@_autocast_policy("mv")
def mv(input, vec):
    _check_tensor("mv", input)
    _check_tensor("mv", vec, "vec", 2)
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.dim()}, {vec.dim()}")
    return _mv(input, vec)


def _mv(x, v):
    _check_mv(tuple(x.shape), x.dtype, v.dtype, x, v.shape[0])
    # one MvBackward0 node, as torch's
    return named_composite("MvBackward0", lambda a, b: mm(a, b.unsqueeze(1)).squeeze(-1), x, v)


def _check_mv(mat_shape, mat_dtype, vec_dtype, like, n):
    """torch's mv (addmv) checks: sizes, then dtypes, then that the dtype is implemented.
    ``mat_shape`` is the (possibly folded) matrix's, ``n`` the vector's length; ``like`` gives
    the device."""
    rows, k = mat_shape
    if k != n:
        raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{k}), vec ({n})")
    if mat_dtype is not vec_dtype:
        v, m = _dt.type_name(vec_dtype), _dt.type_name(mat_dtype)
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {v}, {m}, and {v}")
    if mat_dtype is _dt.bool_:
        name = backend_for(like.device).torch_name("addmv_impl_cpu", "addmv_impl_cuda")
        raise NotImplementedError(f'"{name}" not implemented for \'{_dt.type_name(mat_dtype)}\'')


def _should_fold(x, y):
    """ATen's should_fold: whether torch.matmul folds the batch of the operand with more dims
    into matrix rows (one mm, or mv against a vector) instead of expanding both to a bmm.

    tritensor computes every case in place whichever path torch takes; the path only decides
    which of mm's, mv's or bmm's checks (so which error message) a bad call meets."""
    larger = x.dim() >= y.dim()
    if larger:
        shape, strides = tuple(x.shape), tuple(x.stride())
    else:   # y.mT
        shape = tuple(y.shape[:-2]) + (y.shape[-1], y.shape[-2])
        st = tuple(y.stride())
        strides = st[:-2] + (st[-1], st[-2])
    other = y if larger else x
    if not (len(shape) >= 3 and other.dim() <= 2):
        return False
    if other.requires_grad:        # torch folds (copying if it must) to keep the backward small
        return True
    if x.dim() == 2:
        return False
    if int(np.prod(shape)) == 0:
        return True
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 2))


def _check_matmul(x, y):
    """torch.matmul's checks for operands of which one has 3 or more dims, as the path torch
    takes meets them (see _should_fold)."""
    d1, d2 = x.dim(), y.dim()
    if _should_fold(x, y):
        if d2 > d1:        # torch folds y.mT and multiplies it by x (transposed if a matrix)
            s = tuple(y.shape)
            t1_shape, t1_dtype = s[:-2] + (s[-1], s[-2]), y.dtype
            t2_shape, t2_dtype = tuple(reversed(x.shape)), x.dtype
        else:
            t1_shape, t1_dtype = tuple(x.shape), x.dtype
            t2_shape, t2_dtype = tuple(y.shape), y.dtype
        folded = (int(np.prod(t1_shape[:-1])), t1_shape[-1])
        if len(t2_shape) == 1:
            _check_mv(folded, t1_dtype, t2_dtype, x, t2_shape[0])
            return
        if folded[1] != t2_shape[0]:
            raise _mm_shapes_error(folded, t2_shape)
        _check_same_dtype_mm(_DtypeOf(t1_dtype, x), _DtypeOf(t2_dtype, x))
        _check_floating(_DtypeOf(t1_dtype, x), "addmm_impl_cpu_", "addmm_cuda")
        return
    # expand both to [batch, n, m1] and [batch, m2, p] and call bmm
    batch = _broadcast_batch(x.shape[:-2] if d1 > 2 else (), y.shape[:-2] if d2 > 2 else ())
    bs = int(np.prod(batch)) if batch else 1
    m1, m2 = x.shape[-1], (y.shape[-2] if d2 > 1 else y.shape[0])
    if m1 != m2:
        raise _bmm_shapes_error(bs, m1, bs, m2)
    _check_floating(x, "bmm", "bmm_cuda")
    _check_same_dtype_bmm(x, y)


class _DtypeOf:
    """What the dtype checks read of a tensor (its dtype and device), for folded operands."""
    __slots__ = ("dtype", "device")

    def __init__(self, dtype, like):
        self.dtype, self.device = dtype, like.device


def matmul(input, other):
    """torch.matmul: 1-D operands are unsqueezed to matrices (and the added dim removed from the
    result); batch dims broadcast. Errors are those of the mm, mv, dot or bmm torch calls."""
    if isinstance(input, Tensor) and isinstance(other, Tensor) and len(input._shape) == 2 == len(other._shape):
        return dispatch(MM, input, other)     # mm, less the checks two tensors pass (issue 14)
    _check_tensor("matmul", input)
    _check_tensor("matmul", other, "other", 2)
    d1, d2 = input.dim(), other.dim()
    if d1 == 0 or d2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {d1}D and {d2}D")
    if d1 == 1 and d2 == 1:
        return _dot(input, other)
    if d1 == 2 and d2 == 1:
        return _mv(input, other)
    if d1 == 2 and d2 == 2:
        return mm(input, other)
    if d1 == 1 and d2 == 2:     # torch: unsqueeze_(0), mm, squeeze_(0): SqueezeBackward4 on top
        return unsafe_view(mm(input.unsqueeze(0), other), (other.shape[1],), "SqueezeBackward4")
    _check_matmul(input, other)
    if _should_fold(input, other):
        return _folded_matmul(input, other)
    return _batched_matmul(input, other)


def _folded_matmul(x, y):
    """torch's folding path: the batch dims of the operand with more dims become matrix rows of
    one mm (or mv against a vector), then _unsafe_view restores them (UnsafeViewBackward0). When
    the right operand is the larger one, torch folds y.mT against x.mT and transposes back."""
    transpose = y.dim() > x.dim()
    t1 = y.transpose(-2, -1) if transpose else x
    t2 = (x.t() if x.dim() == 2 else x) if transpose else y
    rows = tuple(t1.shape[:-1])
    folded = t1.reshape(int(np.prod(rows)), t1.shape[-1])     # explicit sizes: valid when empty too
    if t2.dim() == 1:
        return unsafe_view(_mv(folded, t2), rows)
    out = unsafe_view(mm(folded, t2), rows + (t2.shape[1],))
    return out.transpose(-2, -1).contiguous() if transpose else out


def _batched_matmul(x, y):
    """torch's batched path: both operands expanded to the broadcast batch, reshaped to 3-D, one
    bmm, then _unsafe_view to the result's shape. When a reshape would copy an expanded operand
    (the batches broadcast), the broadcasting primitive reads it in place instead; the result and
    its UnsafeViewBackward0 node are the same."""
    d1, d2 = x.dim(), y.dim()
    n, m1 = (x.shape[-2] if d1 > 1 else 1), x.shape[-1]
    m2, p = (y.shape[-2] if d2 > 1 else y.shape[0]), (y.shape[-1] if d2 > 1 else 1)
    batch = _broadcast_batch(x.shape[:-2] if d1 > 2 else (), y.shape[:-2] if d2 > 2 else ())
    out_shape = batch + ((n,) if d1 > 1 else ()) + ((p,) if d2 > 1 else ())
    b = int(np.prod(batch))
    xe = x.expand(batch + (n, m1))
    ye = y.expand(batch + (m2,)) if d2 == 1 else y.expand(batch + (m2, p))
    x3_shape, y3_shape = (b, n, m1), ((b, m2) if d2 == 1 else (b, m2, p))
    if _viewable(xe, x3_shape) and _viewable(ye, y3_shape):
        y3 = ye.reshape(y3_shape)
        out = dispatch(BMM, xe.reshape(x3_shape), y3.unsqueeze(-1) if d2 == 1 else y3)
        return unsafe_view(out.squeeze(-1) if d2 == 1 else out, out_shape)
    out = _matmul_nd(x.unsqueeze(0) if d1 == 1 else x, y.unsqueeze(1) if d2 == 1 else y)
    return unsafe_view(out, out_shape)


def _viewable(t, shape):
    return view_strides(tuple(t.shape), tuple(t.stride()), tuple(shape)) is not None


def matmul_operator(self, other):
    """``Tensor.__matmul__``: NotImplemented for a non-tensor (Python then raises its
    "unsupported operand type(s) for @" TypeError, as with torch)."""
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(self, other)


def rmatmul(self, other):
    """``other @ self`` where ``other`` is not a tensor (Python's __rmatmul__)."""
    if not isinstance(other, Tensor):
        return NotImplemented
    return matmul(other, self)


def _check_inplace_shape(self, shape):
    if tuple(self.shape) != tuple(shape):
        raise RuntimeError(f"Bad in-place call: input tensor size {list(self.shape)} and output tensor size "
                           f"{list(shape)} should match")


def _unaliased(self, *operands):
    """Operands that share self's memory are copied first: the kernel writes self tile by tile
    while other programs may still be reading them."""
    return tuple(o.clone() if o._storage is self._storage else o for o in operands)


def _inplace(entry, self, operands, beta, alpha):
    """Tensor.addmm_ / baddbmm_: self = beta * self + alpha * a @ b, in self's memory, with
    torch's in-place shape error (self, a method's receiver, is not counted in the positions)."""
    for i, (t, n) in enumerate(operands):
        _check_tensor(f"{entry.name}_", t, n, i + 1)
    a, b = (t for t, _ in operands)
    beta, alpha = _scalar("beta", beta, a.dtype), _scalar("alpha", alpha, a.dtype)
    _check_inplace_shape(self, entry.rule(self, a, b, beta=beta, alpha=alpha).shape)
    return dispatch_inplace(entry, self, *_unaliased(self, a, b), beta=beta, alpha=alpha)


def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    return _inplace(ADDMM, self, ((mat1, "mat1"), (mat2, "mat2")), beta, alpha)


def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    return _inplace(BADDBMM, self, ((batch1, "batch1"), (batch2, "batch2")), beta, alpha)


def outer(input, vec2):
    """torch.outer (and its old name ger): input[:, None] * vec2, a broadcast multiply as in
    torch (any dtype, promoted like mul; MulBackward0)."""
    _check_tensor("outer", input)
    _check_tensor("outer", vec2, "vec2", 2)
    for t, n in ((input, "self"), (vec2, "vec2")):
        if t.dim() != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {n}, but got {t.dim()}-D")
    return mul(input.reshape(-1, 1), vec2)


ger = outer


def linear(input, weight, bias=None):
    """tt.nn.functional.linear: input [*, in] @ weight[out, in]^T (+ bias [out]), the paths of
    torch's at::linear: a 2-D input with a bias is one fused addmm; so is a contiguous input of
    any other rank with a 1-D bias (its leading dims fold into rows: a view); otherwise matmul,
    then the bias is added as torch's in-place ``add_`` does (the product keeps its dtype and
    shape). weight^T is a transposed view, read in place."""
    _check_tensor("linear", input)
    _check_tensor("linear", weight, "weight", 2)
    if bias is not None:
        _check_tensor("linear", bias, "bias", 3)
    di, dw = input.dim(), weight.dim()
    if di == 0 or dw == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {di}D and {dw}D")
    wt = weight.t()                              # torch's t() error for a weight of 3 or more dims
    if bias is not None and di == 2:
        return addmm(bias, input, wt)
    if bias is not None and bias.dim() == 1:
        k = input.shape[-1]
        rows = int(np.prod(input.shape[:-1]))
        # torch fuses for contiguous inputs; any input whose rows fold into a view gives the same
        # values, so it is fused too when that changes nothing else (the dtypes agree)
        if input.is_contiguous() or (bias.dtype is input.dtype and dw == 2 and
                                     view_strides(input.shape, input.stride(), (rows, k)) is not None):
            out = addmm(bias, input.reshape(rows, k), wt)
            return out.reshape(tuple(input.shape[:-1]) + (out.shape[1],))
    out = matmul(input, wt)
    if bias is None:
        return out
    # torch: output.add_(bias): bias broadcasts to the output's shape (never beyond it) and the
    # output keeps its dtype
    shape = broadcast_shapes(tuple(out.shape), tuple(bias.shape))
    if shape != tuple(out.shape):
        raise RuntimeError(f"output with shape {list(out.shape)} doesn't match the broadcast shape {list(shape)}")
    result = add(out, bias)             # in the promoted dtype, as add_ computes
    return result if result.dtype is out.dtype else result.to(out.dtype)


# --------------------------------------------------------------------------- addmv, addr, addbmm, vdot
@_autocast_policy("vdot")
def vdot(input, other):
    """torch.vdot: the dot product, the first vector conjugated (real tensors: dot); one
    VdotBackward0 node."""
    _check_tensor("vdot", input)
    _check_tensor("vdot", other, "other", 2)
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {other.dim()}D tensors")
    return _dot(input, other, "VdotBackward0")


@_autocast_policy("addmv")
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """torch.addmv: beta * input + alpha * (mat @ vec), input broadcast to (rows,) (beta == 0
    ignores it, NaN included); one AddmvBackward0 node over addmm's kernel."""
    for i, (t, n) in enumerate(((input, "input"), (mat, "mat"), (vec, "vec"))):
        _check_tensor("addmv", t, n, i + 1)
    _check_addmv(input, mat, vec)
    beta, alpha = _scalar("beta", beta, vec.dtype), _scalar("alpha", alpha, vec.dtype)
    return named_composite("AddmvBackward0", _addmv, _as_input(input, mat), mat, vec, beta=beta, alpha=alpha)


def _check_addmv(input, mat, vec):
    if not (mat.dim() == 2 and vec.dim() == 1 and input.dim() <= 1):
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.dim()}, {mat.dim()}, {vec.dim()}")
    rows, k = mat.shape
    if k != vec.shape[0] or not (input.numel() == rows or input.numel() == 1):
        raise RuntimeError(f"size mismatch, got input ({input.shape[0] if input.dim() else 1}), mat ({rows}x{k}), "
                           f"vec ({vec.shape[0]})")
    if not (input.dtype is mat.dtype is vec.dtype):
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_dt.type_name(input.dtype)}, "
                           f"{_dt.type_name(mat.dtype)}, and {_dt.type_name(vec.dtype)}")
    if mat.dtype is _dt.bool_:
        name = backend_for(mat.device).torch_name("addmv_impl_cpu", "addmv_impl_cuda")
        raise NotImplementedError(f'"{name}" not implemented for \'Bool\'')


def _addmv(input, mat, vec, beta, alpha):
    column = dispatch(ADDMM, input.reshape(-1, 1), mat, vec.unsqueeze(1), beta=beta, alpha=alpha)
    return column.squeeze(1)


def _addr_scalar(dtype, value, name):
    """torch's check_addr_scalar, then the value as the result's dtype reads it."""
    if isinstance(value, Tensor):
        value = value.item()
    if isinstance(value, bool) and dtype is not _dt.bool_:
        raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
    if not dtype.is_floating_point and isinstance(value, float):
        raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point number.")
    return bool(value) if dtype is _dt.bool_ else value


@_autocast_policy("addr")
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """torch.addr: beta * input + alpha * outer(vec1, vec2), computed as torch's TensorIterator
    kernel does (the three operands promoted to one dtype; ``alpha * vec1 * vec2``; beta == 0
    ignores input; bool: ``beta and input or alpha and vec1 and vec2``); one AddrBackward0 node."""
    for i, (t, n) in enumerate(((input, "input"), (vec1, "vec1"), (vec2, "vec2"))):
        _check_tensor("addr", t, n, i + 1)
    for t, n in ((vec1, "vec1"), (vec2, "vec2")):
        if t.dim() != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {n}, but got {t.dim()}-D")
    _expand_layout(input, (vec1.shape[0], vec2.shape[0]))       # torch's expand errors
    dtype = _dt.result_type(input, vec1, vec2)
    beta, alpha = _addr_scalar(dtype, beta, "beta"), _addr_scalar(dtype, alpha, "alpha")
    return named_composite("AddrBackward0", _addr, input, vec1, vec2, beta=beta, alpha=alpha, dtype=dtype)


def _addr(input, vec1, vec2, beta, alpha, dtype):
    v1, v2 = vec1.to(dtype).unsqueeze(1), vec2.to(dtype)
    prod = mul(mul(v1, alpha), v2)
    if beta == 0:
        return prod
    return add(mul(input.to(dtype), beta), prod)


@_autocast_policy("addbmm")
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """torch.addbmm: beta * input + alpha * sum_b batch1[b] @ batch2[b]. The batch is folded into
    the contracted dim (batch1 as [n, B*k], batch2 as [B*k, m]): one addmm launch; an empty batch
    gives beta * input. One AddbmmBackward0 node."""
    for i, (t, n) in enumerate(((input, "input"), (batch1, "batch1"), (batch2, "batch2"))):
        _check_tensor("addbmm", t, n, i + 1)
    shape = (batch1.size(1), batch2.size(2))          # torch reads these first (IndexError on too few dims)
    _expand_layout(input, shape)
    if batch1.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if batch2.dim() != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {batch1.shape[0]} and "
                           f"{batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x{batch1.shape[2]} and "
                           f"{batch2.shape[1]}x{batch2.shape[2]})")
    if batch1.dtype is not batch2.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_dt.type_name(batch1.dtype)} and "
                           f"{_dt.type_name(batch2.dtype)}")
    if input.dtype is not batch2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_dt.type_name(input.dtype)} and "
                           f"{_dt.type_name(batch2.dtype)}")
    _check_floating(batch1, "addmm_impl_cpu_", "addmm_cuda")
    beta, alpha = _scalar("beta", beta, batch1.dtype), _scalar("alpha", alpha, batch1.dtype)
    return named_composite("AddbmmBackward0", _addbmm, _as_input(input, batch1), batch1, batch2, beta=beta,
                           alpha=alpha)


def _addbmm(input, batch1, batch2, beta, alpha):
    b, n, k = batch1.shape
    m = batch2.shape[2]
    rows = batch1.transpose(0, 1).reshape(n, b * k)     # row i: batch1[0, i], batch1[1, i] ...
    return dispatch(ADDMM, input, rows, batch2.reshape(b * k, m), beta=beta, alpha=alpha)


def _composite_inplace(self, compute, *operands):
    """self = compute(self) in self's memory, as torch's in-place addmv_/addr_/addbmm_: the
    result must have self's shape (torch's "Bad in-place call" otherwise) and cast to self's
    dtype; when recorded, self's history is the composite's node (AddmvBackward0 ...), through
    dispatch's in-place rebase (a snapshot of self's old value feeds the backward)."""
    check_inplace(self)

    def checked(src):
        result = compute(src)
        _check_inplace_shape(self, result.shape)
        if not _dt.can_cast(result.dtype, self.dtype):
            raise RuntimeError(f"result type {_dt.type_name(result.dtype)} can't be cast to the desired output "
                               f"type {_dt.type_name(self.dtype)}")
        return result

    if is_grad_enabled() and any(isinstance(t, Tensor) and t.requires_grad for t in (self,) + operands):
        _rebase_inplace(self, checked, needs_old_self=True)
        return self
    copy_into(self, checked(self))
    self._version_counter.value += 1
    return self


def addmv_(self, mat, vec, *, beta=1, alpha=1):
    return _composite_inplace(self, lambda s: addmv(s, mat, vec, beta=beta, alpha=alpha), mat, vec)


def addr_(self, vec1, vec2, *, beta=1, alpha=1):
    if self.dim() != 2 or tuple(self.shape) != (vec1.shape[0] if vec1.dim() else -1,
                                                vec2.shape[0] if vec2.dim() else -1):
        for t, n in ((vec1, "vec1"), (vec2, "vec2")):
            if t.dim() != 1:
                raise RuntimeError(f"addr: Expected 1-D argument {n}, but got {t.dim()}-D")
        raise RuntimeError(f"size mismatch, input: {list(self.shape)}, v1: {list(vec1.shape)}, v2: {list(vec2.shape)}")
    return _composite_inplace(self, lambda s: addr(s, vec1, vec2, beta=beta, alpha=alpha), vec1, vec2)


def addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    return _composite_inplace(self, lambda s: addbmm(s, batch1, batch2, beta=beta, alpha=alpha), batch1, batch2)
