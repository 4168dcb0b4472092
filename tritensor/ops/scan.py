"""Scans along one dim: cumsum and cumprod (kernels/scan.py), with torch's gradients
(cumprod's written with ops, so that it is differentiable again, at zeros too)."""
from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.grad_mode import is_grad_enabled as _grad_enabled
from ..backends import numpy_ref
from ..backends import triton as tb
from . import elementwise as _ew
from . import pointwise as _pw
from ._checks import check_int_dim, check_tensor
from ._shapes import wrap_dim
from .creation import ones
from .dispatch import dispatch
from .joining import cat, flip
from .reduce import sum as _sum
from .table import FROM_BACKWARD, LINEAR, Meta, op, signature_rule


@signature_rule
def _scan_rule(x, dim, reverse, dtype, **_):
    out = dtype or (_dt.int64 if not x.dtype.is_floating_point else x.dtype)
    return Meta(tuple(x.shape), out, _dt.compute_dtype(out))


def _scan_launcher(name):
    def launch(out, x, *, compute, dim, reverse, **_):
        tb.scan(name, out, x, dim, compute, reverse)
    return launch


def _cumsum_backward(ctx, g):
    return dispatch(CUMSUM, g, dim=ctx.dim, reverse=not ctx.reverse, dtype=None)


def _cumprod_backward(ctx, g):
    x = ctx.x if ctx.x.dtype is g.dtype else ctx.x.to(g.dtype)
    if not _grad_enabled() and x.numel() > 1 and x.shape[ctx.dim] > 1 and _ew.eq(x, 0).any().item():
        # torch's O(n) rule for a first derivative with zeros: its values at inf and at zeros
        # (the recursive rule below is the one that is differentiable again)
        return _cumprod_grad_first_order(g, x, ctx.out, ctx.dim, ctx.reverse)
    return _cumprod_grad(g, x, ctx.out, ctx.dim, ctx.reverse)


def _cumprod_grad_first_order(g, x, out, dim, reverse):
    """torch's cumprod_backward outside grad mode: before the first zero z1 of a line, the
    reverse cumsum of g * out over x; at z1, sum_{k in [z1, z2)} g_k * prod(x(z1, k]) times
    out[z1 - 1]; 0 after (z2 the second zero)."""
    if reverse:
        return flip(_cumprod_grad_first_order(flip(g, [dim]), flip(x, [dim]), flip(out, [dim]), dim, False), [dim])
    n = x.shape[dim]
    zero = _ew.eq(x, 0)
    zeros_so_far = dispatch(CUMSUM, zero, dim=dim, reverse=False, dtype=None)
    before = _ew.eq(zeros_so_far, 0)
    w = _ew.mul(out, g)
    grad_before = _ew.div(dispatch(CUMSUM, _ew.where(before, w, 0.0), dim=dim, reverse=True, dtype=None), x)
    segment = _ew.eq(zeros_so_far, 1)
    first = _pw.logical_and(zero, segment)
    between = _pw.logical_and(segment, _pw.logical_not(zero))
    partial = dispatch(CUMPROD, _ew.where(between, x, 1.0), dim=dim, reverse=False, dtype=None)
    at_first = _sum(_ew.mul(partial, _ew.where(segment, g, 0.0)), (dim,), keepdim=True)
    ones_shape = tuple(1 if i == dim else s for i, s in enumerate(x.shape))
    out_before = cat([ones(ones_shape, dtype=out.dtype, device=out.device), out.narrow(dim, 0, n - 1)], dim)
    prefix = _sum(_ew.where(first, out_before, 0.0), (dim,), keepdim=True)     # out[z1 - 1], or 1
    return _ew.where(before, grad_before, _ew.where(first, _ew.mul(at_first, prefix), 0.0))


def _cumprod_grad(g, x, out, dim, reverse):
    """The gradient of cumprod: d out_j / d x_i = prod_{k <= j, k != i} x_k for j >= i (in scan
    order). Written with ops, so that it is differentiable again (create_graph), at zeros too."""
    def scan(entry, t, backwards):
        return dispatch(entry, t, dim=dim, reverse=backwards, dtype=None)
    back = not reverse    # a sum over the positions j at or after i, in scan order
    zero = _ew.eq(x, 0)
    if not zero.any().item():   # torch takes the same host decision
        # without zeros the product is out_j / x_i: a reverse cumsum of g * out, over x
        return _ew.div(scan(CUMSUM, _ew.mul(g, out), back), x)
    # With zeros, let z be the first zero of a line in scan order and x' = x with x_z set to 1.
    #   i < z: x_i != 0 near this point, so out_j / x_i is still the product (out_j = 0, j >= z).
    #   i = z: the products skip x_z: the reverse cumsum of g * cumprod(x').
    #   i > z: every product holds x_z, a factor written out (x_z * the gradient of cumprod at
    #          x'), so that the second derivative in x_z is right; x' has one zero fewer per
    #          line, so the recursion ends.
    zeros_so_far = scan(CUMSUM, zero, reverse)
    before = _ew.eq(zeros_so_far, 0)
    first = _ew.where(zero, _ew.eq(zeros_so_far, 1), False)
    grad_before = _ew.div(scan(CUMSUM, _ew.mul(g, out), back), _ew.where(before, x, 1.0))
    x_skip = _ew.where(first, 1.0, x)
    out_skip = scan(CUMPROD, x_skip, reverse)
    grad_first = scan(CUMSUM, _ew.mul(g, out_skip), back)
    x_z = _sum(_ew.where(first, x, 0.0), (dim,), keepdim=True)     # 0, carrying x_z's gradient
    grad_after = _ew.mul(x_z, _cumprod_grad(g, x_skip, out_skip, dim, reverse))
    return _ew.where(before, grad_before, _ew.where(first, grad_first, grad_after))


CUMSUM = op("cumsum", ("x",), jvp=LINEAR, rule=_scan_rule, reference=numpy_ref.scan("sum"), kernel=_scan_launcher("sum"),
            backward=_cumsum_backward)
CUMPROD = op("cumprod", ("x",), jvp=FROM_BACKWARD, rule=_scan_rule, reference=numpy_ref.scan("prod"),
             kernel=_scan_launcher("prod"), backward=_cumprod_backward, saves=("x", "out"))


def _scan(entry, name, input, dim, dtype):
    check_tensor(name, input)
    check_int_dim(name, dim)
    dim = wrap_dim(dim, input.dim())
    if dtype is not None:
        dtype = _dt.as_dtype(dtype)
        if dtype is _dt.bool_:
            raise NotImplementedError(f'"{name}_out_cpu" not implemented for \'Bool\'')
        if input.dtype is not dtype:
            input = input.to(dtype)
    return dispatch(entry, input, dim=dim, reverse=False, dtype=dtype)


def cumsum(input, dim, *, dtype=None):
    return _scan(CUMSUM, "cumsum", input, dim, dtype)


def cumprod(input, dim, *, dtype=None):
    return _scan(CUMPROD, "cumprod", input, dim, dtype)
