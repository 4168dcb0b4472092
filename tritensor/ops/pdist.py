"""pdist and cdist: pairwise p-norm distances (torch.pdist, torch.cdist, F.pdist).

Four table entries: ``pdist`` (packed upper triangle, row by row, as torch) and ``cdist``, and
their dedicated backward ops ``pdist_backward`` / ``cdist_backward`` (torch's _pdist_backward and
_cdist_backward), each with its own kernels (kernels/pdist.py) and blocked NumPy reference
(backends/numpy_pdist.py); none builds an N x N x D temporary. p is any value >= 0, inf included.

Double backward follows torch: _pdist_backward and _cdist_backward have no derivative, so a
second backward through them raises NotImplementedError ("the derivative for '_pdist_backward'
is not implemented."). cdist's mm path (p = 2 when torch's compute_mode picks it: always for
'use_mm_for_euclid_dist', for more than 25 rows on either side for the default
'use_mm_for_euclid_dist_if_necessary', never for 'donot_use_mm_for_euclid_dist') is torch's
_euclidean_dist, a composite whose gradient torch differentiates again: here its forward is the
Gram-tile kernel and its backward is written in tritensor ops (twice differentiable, as torch).
Unlike torch's mm path (which clamps the squared distance at 1e-30), identical rows give exactly 0
on every path: the Gram tiles recompute entries that cancellation could have spoilt.
"""
from __future__ import annotations

from .._autocast import autocast_policy as _autocast_policy

from .. import dtypes as _dt
from ..backends import numpy_pdist
from ..backends.triton import pdist as triton_pdist
from ..tensor import Tensor
from . import elementwise as _ew
from . import reduce as _reduce
from .dispatch import dispatch
from .table import Meta, op

_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
          "donot_use_mm_for_euclid_dist": 2}
_CXX_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}


def _no_derivative(torch_name):
    def backward(ctx, g):
        raise NotImplementedError(f"the derivative for '{torch_name}' is not implemented.")
    return backward


def _check_p(p, fn):
    if isinstance(p, Tensor) or isinstance(p, bool) or not isinstance(p, (int, float)):
        raise TypeError(f"{fn}(): argument 'p' must be float, not {type(p).__name__}")
    if p < 0:
        raise RuntimeError(f"{fn} only supports non-negative p values")
    return float(p)


def _check_kernel_dtype(dtype, fn):
    if dtype in (_dt.float16, _dt.bfloat16):
        raise NotImplementedError(f"\"{fn}\" not implemented for '{_dt.type_name(dtype)}'")


# --------------------------------------------------------------------------- pdist
def _pdist_rule(x, p):
    n = int(x.shape[0])
    return Meta((n * (n - 1) // 2,), x.dtype)


def _pdist_launch(out, x, *, compute, p):
    triton_pdist.pdist(out, x, p, compute)


def _pdist_backward(ctx, g):
    return (pdist_backward(g, ctx.x, ctx.out, ctx.p),)


def _pdist_backward_rule(g, x, dist, p):
    return Meta(tuple(x.shape), x.dtype)


def _pdist_backward_launch(res, g, x, dist, *, compute, p):
    triton_pdist.pdist_backward(res, g, x, dist, p, compute)


PDIST = op("pdist", ("x",), rule=_pdist_rule, reference=numpy_pdist.pdist, kernel=_pdist_launch,
           backward=_pdist_backward, saves=("x", "out"), grad_name="PdistBackward0")
PDIST_BACKWARD = op("pdist_backward", ("grad", "x", "dist"), rule=_pdist_backward_rule,
                    reference=numpy_pdist.pdist_backward, kernel=_pdist_backward_launch,
                    backward=_no_derivative("_pdist_backward"), grad_name="PdistBackwardBackward0")


def pdist(input, p=2):
    """torch.pdist: the p-norm distance between every pair of rows of a 2-D input, i < j, in
    the order of the upper triangle row by row (n * (n - 1) / 2 values)."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    p = _check_p(p, "pdist")
    _check_kernel_dtype(input.dtype, "pdist")
    return dispatch(PDIST, input, p=p)


def pdist_backward(grad, x, dist, p):
    """torch's _pdist_backward: the gradient of pdist(x, p) for the packed output gradient."""
    return dispatch(PDIST_BACKWARD, grad, x, dist, p=float(p))


# --------------------------------------------------------------------------- cdist
def _cdist_rule(x1, x2, p, use_mm):
    batch = _ew.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    return Meta(tuple(batch) + (int(x1.shape[-2]), int(x2.shape[-2])), x1.dtype)


def _cdist_launch(out, x1, x2, *, compute, p, use_mm):
    triton_pdist.cdist(out, x1, x2, p, use_mm, compute)


def _cdist_backward(ctx, g):
    x1, x2, d = ctx.x1, ctx.x2, ctx.out
    batch = tuple(d.shape[:-2])
    a = x1.expand(*(batch + tuple(x1.shape[-2:])))
    b = x2.expand(*(batch + tuple(x2.shape[-2:])))
    need1, need2 = ctx.needs_input_grad[:2]
    if ctx.use_mm:
        # torch's _euclidean_dist backward, in ops: W = g / d (0 where d is 0);
        # d/da_i = sum_j W_ij (a_i - b_j), d/db_j = sum_i W_ij (b_j - a_i)
        zero = _ew.eq(d, 0)
        w = _ew.where(zero, 0.0, g / _ew.where(zero, 1.0, d))
        ga = w.sum(-1, keepdim=True) * a - w @ b if need1 else None
        gb = w.sum(-2).unsqueeze(-1) * b - w.transpose(-1, -2) @ a if need2 else None
    else:
        ga = cdist_backward(g, a, b, d, ctx.p) if need1 else None
        gb = cdist_backward(g.transpose(-1, -2), b, a, d.transpose(-1, -2), ctx.p) if need2 else None
    return (None if ga is None else _reduce.sum_to_size(ga, tuple(x1.shape)),
            None if gb is None else _reduce.sum_to_size(gb, tuple(x2.shape)))


def _cdist_backward_rule(g, a, b, dist, p):
    return Meta(tuple(a.shape), a.dtype)


def _cdist_backward_launch(res, g, a, b, dist, *, compute, p):
    triton_pdist.cdist_backward(res, g, a, b, dist, p, compute)


CDIST = op("cdist", ("x1", "x2"), rule=_cdist_rule, reference=numpy_pdist.cdist, kernel=_cdist_launch,
           backward=_cdist_backward, saves=("x1", "x2", "out"),
           grad_name=lambda args, attrs: "EuclideanDistBackward0" if attrs["use_mm"] else "CdistBackward0")
CDIST_BACKWARD = op("cdist_backward", ("grad", "x1", "x2", "dist"), rule=_cdist_backward_rule,
                    reference=numpy_pdist.cdist_backward, kernel=_cdist_backward_launch,
                    backward=_no_derivative("_cdist_backward"), grad_name="CdistBackwardBackward0")


@_autocast_policy("cdist")
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """torch.cdist: out[..., i, j] = ||x1[..., i, :] - x2[..., j, :]||_p, batch dims broadcast.
    compute_mode as torch: p = 2 uses the matrix-multiply (Gram) formulation when
    'use_mm_for_euclid_dist', or by default when either side has more than 25 rows."""
    if not isinstance(compute_mode, str) or compute_mode not in _MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} "
                           f"X2: {x2.shape[-1]}")
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {_dt.type_name(x.dtype)}")
    p = _check_p(p, "cdist")
    mode = _MODES[compute_mode]
    r1, r2 = int(x1.shape[-2]), int(x2.shape[-2])
    use_mm = (p == 2 and x1.numel() > 0 and x2.numel() > 0
              and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25))))
    if x1.dtype is not x2.dtype:
        if use_mm:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                               f"{_CXX_NAMES[x1.dtype.name]} != {_CXX_NAMES[x2.dtype.name]}")
        _check_kernel_dtype(x1.dtype, "cdist")
        raise RuntimeError(f"expected scalar type {_dt.type_name(x1.dtype)} but found {_dt.type_name(x2.dtype)}")
    _check_kernel_dtype(x1.dtype, "cdist")
    return dispatch(CDIST, x1, x2, p=p, use_mm=use_mm)


def cdist_backward(grad, x1, x2, dist, p):
    """torch's _cdist_backward: the gradient for x1 of cdist(x1, x2, p) (the caller broadcasts
    every operand to the output's batch shape; x2's gradient is this with both sides swapped)."""
    return dispatch(CDIST_BACKWARD, grad, x1, x2, dist, p=float(p))
