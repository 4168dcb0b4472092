"""Normalisation over channels: batch norm, group norm, instance norm, local response norm.

batch norm and group norm are table ops with several outputs (table.py), each with fused Triton
kernels both ways (kernels/norm.py: moments in fp32 parallel over samples x spatial positions,
then one affine pass) and NumPy references (backends/numpy_nn.py):

  native_batch_norm   (x, weight, bias, running_mean, running_var) -> (out, save_mean, save_invstd);
                      training updates the running statistics in place (torch's momentum rule,
                      unbiased variance), eval normalises with them
  native_group_norm   (x, weight, bias) -> (out, mean, rstd), mean/rstd of shape (N, groups)

Their first-order backwards are table ops too (native_batch_norm_backward,
native_group_norm_backward: one pass of per-statistic sums and one elementwise pass), whose own
backward (the double backward) is written here with table ops, so every order differentiates.
instance norm is batch norm of the (1, N * C, *) view, as torch builds it; local response norm
is a composite of table ops, as torch's.
"""
from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..backends import numpy_nn
from ..backends import triton as tb  # coalesce: a pure function of shapes and strides
from ..backends.triton import nn as tnn
from . import _layout
from .creation import zeros
from .dispatch import dispatch
from .joining import cat
from .surface import declare
from .table import FROM_BACKWARD, Meta, op


def _shape_list(shape):
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


# ------------------------------------------------------------------ shared checks
def _check_floating(input, kernel_name):
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel_name}" not implemented for \'{_dt.type_name(input.dtype)}\'')


def _check_mixed(input, *params):
    """torch's CPU mixed-dtype rule (ATen/native/mixed_data_type.h): parameters of another dtype
    than the input must all be float32, and the input then float16 or bfloat16."""
    params = [p for p in params if p is not None]
    if not any(p.dtype is not input.dtype for p in params):
        return False
    for p in params:
        if p.dtype is not _dt.float32:
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if input.dtype not in (_dt.float16, _dt.bfloat16):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    return True


def _spatial_mergeable(t):
    """Do t's dims 2.. merge into one stride (the kernels read (N, C, L) views)?"""
    shape, strides = t._shape, t._stride
    merged, _ = tb.coalesce(shape[2:], [strides[2:]])
    return len(merged) <= 1


def _as_ncl(t):
    return t if _spatial_mergeable(t) else t.contiguous()


def _format(t):
    """The memory format torch allocates a normalisation's output in (suggest_memory_format)."""
    return _layout.suggest_memory_format(t._shape, t._stride)


def _stat_operand(t, compute):
    """A running statistic as the kernels and references read and write it: contiguous, in the
    compute dtype (a temporary copied back after the op otherwise)."""
    if t is None or (t.dtype is compute and t.is_contiguous()):
        return t
    return t.detach().to(compute).contiguous()


def _param(t):
    return t.contiguous() if t is not None else None


def _channel_shape(x, t):
    """t (C,) as a tensor broadcasting against x (N, C, *)."""
    return t.reshape((1, -1) + (1,) * (x.dim() - 2))


# ------------------------------------------------------------------ batch norm
def _native_batch_norm_rule(x, weight, bias, running_mean, running_var, *, training, **_):
    compute = _dt.compute_dtype(x.dtype)
    mixed = any(p is not None and p.dtype is not x.dtype for p in (weight, bias, running_mean, running_var))
    stat_dtype = _dt.float32 if mixed else x.dtype
    n_stat = (int(x.shape[1]),) if training else (0,)
    return (Meta(tuple(x.shape), x.dtype, compute), Meta(n_stat, stat_dtype, compute),
            Meta(n_stat, stat_dtype, compute))


def _native_batch_norm_launch(outs, x, weight, bias, running_mean, running_var, *, compute, training, momentum,
                              eps, **_):
    out, save_mean, save_invstd = outs
    tnn.batch_norm(out, x, weight, bias, running_mean, running_var, save_mean, save_invstd, training, momentum, eps,
                   compute)


def _native_batch_norm_backward(ctx, g, g_mean=None, g_invstd=None):
    """NativeBatchNormBackward0: the gradients of out (save_mean and save_invstd are not
    differentiable outputs, as in torch)."""
    needs = ctx.needs_input_grad
    if g is None or not (needs[0] or needs[1] or needs[2]):
        return None, None, None, None, None
    x, weight, training, eps = ctx.x, ctx.weight, ctx.training, ctx.eps
    if training:
        mean, invstd = ctx.save_mean.detach(), ctx.save_invstd.detach()
    else:       # eval: the running statistics are constants of the forward
        mean = ctx.running_mean
        invstd = (ctx.running_var + eps).rsqrt()
    dx, dw, db = native_batch_norm_backward(g, x, weight, mean, invstd, training, eps,
                                            (needs[0], needs[1], needs[2]))
    if dw is not None and dw.dtype is not ctx.input_meta[1][1]:
        dw = dw.to(ctx.input_meta[1][1])
    if db is not None and db.dtype is not ctx.input_meta[2][1]:
        db = db.to(ctx.input_meta[2][1])
    return dx, dw, db, None, None


NATIVE_BATCH_NORM = op("native_batch_norm", ("x", "weight", "bias", "running_mean", "running_var"), jvp=FROM_BACKWARD,
                       outputs=("out", "save_mean", "save_invstd"), rule=_native_batch_norm_rule,
                       reference=numpy_nn.native_batch_norm, kernel=_native_batch_norm_launch,
                       backward=_native_batch_norm_backward, layout="preserve",
                       saves=("x", "weight", "running_mean", "running_var", "save_mean", "save_invstd"),
                       grad_name="NativeBatchNormBackward0")


def _native_batch_norm_backward_rule(grad, x, weight, mean, invstd, *, output_mask, **_):
    compute = _dt.compute_dtype(x.dtype)
    C = int(x.shape[1])
    pdtype = weight.dtype if weight is not None else x.dtype
    return (Meta(tuple(x.shape) if output_mask[0] else (0,), x.dtype, compute),
            Meta((C,) if output_mask[1] else (0,), pdtype, compute),
            Meta((C,) if output_mask[2] else (0,), pdtype, compute))


def _native_batch_norm_backward_launch(outs, grad, x, weight, mean, invstd, *, compute, training, output_mask, **_):
    dx, dw, db = (o if m else None for o, m in zip(outs, output_mask))
    tnn.batch_norm_backward((dx, dw, db), grad, x, weight, mean, invstd, training, compute)


def _reduce_dims(x):
    return (0,) + tuple(range(2, x.dim()))


class _Groups:
    """The normalisation sets of batch norm (a channel over samples and positions) or group norm
    (a sample's group of channels over positions) as a keepdim reduction over ``dims`` of a
    tensor reshaped by ``view``; ``back`` undoes the reshape, ``channel`` broadcasts a per-channel
    (C,) tensor to x's shape and ``per_channel`` sums an x-shaped tensor down to (C,)."""

    def __init__(self, x, groups=None):
        self.x_shape, self.dim = tuple(x.shape), x.dim()
        if groups is None:
            self.shape, self.dims = self.x_shape, _reduce_dims(x)
        else:
            self.shape, self.dims = (x.shape[0], groups, -1), (2,)
        self.count = 1
        for d in _reduce_dims(x) if groups is None else (1,) + tuple(range(2, x.dim())):
            self.count *= int(x.shape[d])
        if groups is not None:
            self.count //= groups

    def view(self, t):
        return t.reshape(self.shape)

    def back(self, t):
        return t.reshape(self.x_shape)

    def mean(self, t):
        return t.mean(self.dims, keepdim=True)

    def channel(self, t):
        return t.reshape((1, -1) + (1,) * (self.dim - 2)).expand(self.x_shape)

    def per_channel(self, t):
        return t.sum(_reduce_dims_of(self.dim))


def _reduce_dims_of(dim):
    return (0,) + tuple(range(2, dim))


def _normalized_sets(sets, x, eps):
    """xhat and rstd of x over the sets, written with table ops (differentiable)."""
    xv = sets.view(x)
    xc = xv - sets.mean(xv)
    r = (sets.mean(xc * xc) + eps).rsqrt()
    return xc * r, r


def _norm_double_backward(sets, grad, x, weight, eps, a, alpha, beta, needs):
    """Derivatives of the normalisation backward
        dx = r (gh - mean(gh) - xhat mean(gh xhat)),  gh = g w,   dw = sum g xhat,   db = sum g
    (means and r = rstd over each normalisation set, sums over samples and positions per
    channel), given a = d/d dx, alpha = d/d dw, beta = d/d db, with respect to (g, x, w), in
    table ops. With P(t) = t - mean(t) - xhat mean(t xhat) (symmetric, idempotent):
        d g = w r P(a) + alpha xhat + beta          d w = sum g r P(a)
        d x = -r^2 (xhat mean(a u) + v - mean(v) - xhat mean(v xhat)) + r P(alpha g)
    where u = gh - mean(gh) - xhat mean(gh xhat) and v = mean(gh xhat) a + mean(a xhat) gh (the
    layer_norm derivation, ops/nn.py, over these sets)."""
    xhat, r = _normalized_sets(sets, x, eps)
    gv = sets.view(grad)
    wv = sets.view(sets.channel(weight)) if weight is not None else None

    def P(t):
        return t - sets.mean(t) - xhat * sets.mean(t * xhat)

    d_g = d_x = d_w = None
    av = sets.view(a) if a is not None else None
    if needs[0]:
        parts = []
        if av is not None:
            pa = r * P(av)
            parts.append(pa * wv if wv is not None else pa)
        if alpha is not None:
            parts.append(xhat * sets.view(sets.channel(alpha)))
        if beta is not None:
            parts.append(sets.view(sets.channel(beta)))
        if parts:
            d_g = parts[0]
            for p in parts[1:]:
                d_g = d_g + p
            d_g = sets.back(d_g)
    if needs[2] and weight is not None and av is not None:
        d_w = sets.per_channel(sets.back(gv * r * P(av)))
    if needs[1] and (av is not None or alpha is not None):
        terms = []
        if av is not None:
            gh = gv * wv if wv is not None else gv
            m2 = sets.mean(gh * xhat)
            u = gh - sets.mean(gh) - xhat * m2
            v = m2 * av + gh * sets.mean(av * xhat)
            terms.append(-(r * r) * (xhat * sets.mean(av * u) + v - sets.mean(v) - xhat * sets.mean(v * xhat)))
        if alpha is not None:
            terms.append(r * P(sets.view(sets.channel(alpha)) * gv))
        d_x = terms[0] if len(terms) == 1 else terms[0] + terms[1]
        d_x = sets.back(d_x)
    return d_g, d_x, d_w


def _native_batch_norm_backward_backward(ctx, a=None, alpha=None, beta=None):
    """NativeBatchNormBackwardBackward0. Training: the statistics are functions of x, recomputed
    here with table ops (the mean/invstd inputs get no gradient of their own); eval: dx = r w g,
    dw = sum g (x - mean) r, db = sum g with mean and r constants of the forward."""
    grad, x, weight, mean, invstd, eps = ctx.grad, ctx.x, ctx.weight, ctx.mean, ctx.invstd, ctx.eps
    needs = ctx.needs_input_grad
    if ctx.training:
        d_g, d_x, d_w = _norm_double_backward(_Groups(x), grad, x, weight, eps, a, alpha, beta, needs)
        return d_g, d_x, d_w, None, None
    r = _channel_shape(x, invstd)
    xc = x - _channel_shape(x, mean)
    w = _channel_shape(x, weight) if weight is not None else None
    d_g = d_x = d_w = d_mean = d_invstd = None
    if needs[0]:
        parts = []
        if a is not None:
            parts.append(a * r * w if w is not None else a * r)
        if alpha is not None:
            parts.append(_channel_shape(x, alpha) * xc * r)
        if beta is not None:
            parts.append(_channel_shape(x, beta).expand(x.shape))
        if parts:
            d_g = parts[0]
            for p in parts[1:]:
                d_g = d_g + p
    if needs[1] and alpha is not None:
        d_x = _channel_shape(x, alpha) * grad * r
    if needs[2] and weight is not None and a is not None:
        d_w = (a * grad * r).sum(_reduce_dims(x))
    if needs[3] and alpha is not None:
        d_mean = -(_channel_shape(x, alpha) * grad * r).sum(_reduce_dims(x))
    if needs[4] and (a is not None or alpha is not None):
        t = None
        if a is not None:
            t = a * grad * w if w is not None else a * grad
        if alpha is not None:
            s = _channel_shape(x, alpha) * grad * xc
            t = s if t is None else t + s
        d_invstd = t.sum(_reduce_dims(x))
    return d_g, d_x, d_w, d_mean, d_invstd


NATIVE_BATCH_NORM_BACKWARD = op("native_batch_norm_backward", ("grad", "x", "weight", "mean", "invstd"), jvp=FROM_BACKWARD,
                                outputs=("grad_input", "grad_weight", "grad_bias"),
                                rule=_native_batch_norm_backward_rule,
                                reference=numpy_nn.native_batch_norm_backward,
                                kernel=_native_batch_norm_backward_launch,
                                backward=_native_batch_norm_backward_backward, layout="preserve",
                                saves=("grad", "x", "weight", "mean", "invstd"),
                                grad_name="NativeBatchNormBackwardBackward0")


def native_batch_norm_backward(grad, x, weight, mean, invstd, training, eps, output_mask=(True, True, True)):
    """(grad_input, grad_weight, grad_bias) of batch norm (None where output_mask is False):
    torch's native_batch_norm_backward with the statistics given as (mean, invstd): the batch's
    in training, the running mean and 1 / sqrt(running_var + eps) in eval."""
    output_mask = tuple(bool(m) for m in output_mask)
    if output_mask[1] and weight is None:
        output_mask = (output_mask[0], False, output_mask[2])
    grad = _as_ncl(grad)
    outs = dispatch(NATIVE_BATCH_NORM_BACKWARD, grad, x, _param(weight), mean.contiguous(), invstd.contiguous(),
                    training=bool(training), eps=float(eps), output_mask=output_mask, memory_format=_format(x))
    return tuple(o if m else None for o, m in zip(outs, output_mask))


def _check_batch_norm_args(input, weight, bias, running_mean, running_var, training):
    """_batch_norm_impl_index's checks, then batch_norm_cpu's (torch's texts)."""
    if input.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(input.dim(), 1)}, "
                         f"{max(input.dim(), 1) - 1}], but got 1)")
    C = int(input.shape[1])
    for name, t, need in (("running_mean", running_mean, True), ("running_var", running_var, True),
                          ("weight", weight, False), ("bias", bias, False)):
        if t is not None:
            if t.numel() != C:
                raise RuntimeError(f"{name} should contain {C} elements not {t.numel()}")
            if t.dim() != 1:
                raise RuntimeError(f"TensorAccessor expected 1 dims but tensor has {t.dim()}")
        elif need and not training:
            raise RuntimeError(f"{name} must be defined in evaluation mode")
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be None")
    _check_floating(input, "batch_norm")
    _check_mixed(input, weight, bias, running_mean, running_var)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """torch.native_batch_norm -> (output, save_mean, save_invstd): batch norm over every dim of
    input (N, C, *) but the channel dim 1. training: the batch's mean and biased variance
    normalise (save_invstd = 1 / sqrt(var + eps)) and, when given, running_mean / running_var
    move in place toward the mean and the unbiased variance by ``momentum``; eval: the running
    statistics normalise and save_mean / save_invstd are empty. save_mean and save_invstd never
    require grad."""
    _check_batch_norm_args(input, weight, bias, running_mean, running_var, training)
    if training and input.numel() == 0:
        raise RuntimeError(f"input tensor must have at least one element, but got input_sizes = "
                           f"{_shape_list(input.shape)}")
    compute = _dt.compute_dtype(input.dtype)
    rm, rv = _stat_operand(running_mean, compute), _stat_operand(running_var, compute)
    out, save_mean, save_invstd = dispatch(
        NATIVE_BATCH_NORM, _as_ncl(input), _param(weight), _param(bias), rm, rv, training=bool(training),
        momentum=float(momentum), eps=float(eps), memory_format=_format(input))
    if training and rm is not running_mean:
        with no_grad():
            running_mean.copy_(rm)
            running_var.copy_(rv)
    return out, save_mean.detach(), save_invstd.detach()


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled=True):
    """torch.batch_norm (what F.batch_norm calls): native_batch_norm's output; an input without
    elements gives a copy of it (times weight[0] plus bias[0], keeping the graph), as torch."""
    if not isinstance(momentum, (int, float)) or isinstance(momentum, bool):
        raise TypeError(f"batch_norm(): argument 'momentum' (position 7) must be float, not "
                        f"{type(momentum).__name__}")
    if input.numel() == 0:     # _batch_norm_impl_index's first branch (before any shape check)
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    return native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)[0]


declare("native_batch_norm", native_batch_norm, method=False)
declare("batch_norm", batch_norm, method=False, functional="own")


# ------------------------------------------------------------------ group norm
def _native_group_norm_rule(x, weight, bias, *, N, group, **_):
    compute = _dt.compute_dtype(x.dtype)
    mixed = any(p is not None and p.dtype is not x.dtype for p in (weight, bias))
    stat_dtype = _dt.float32 if mixed else x.dtype
    return (Meta(tuple(x.shape), x.dtype, compute), Meta((N, group), stat_dtype, compute),
            Meta((N, group), stat_dtype, compute))


def _native_group_norm_launch(outs, x, weight, bias, *, compute, group, eps, **_):
    tnn.group_norm(outs, x, weight, bias, group, eps, compute)


def _native_group_norm_backward(ctx, g, g_mean=None, g_rstd=None):
    """NativeGroupNormBackward0: out's gradient through the fused backward; gradients of the
    mean and rstd outputs (differentiable in torch) add their terms,
    d mean / d x = 1 / M and d rstd / d x = -rstd^2 xhat / M over each group of M values."""
    needs = ctx.needs_input_grad
    x, weight, group, eps = ctx.x, ctx.weight, ctx.group, ctx.eps
    mean, rstd = ctx.mean.detach(), ctx.rstd.detach()
    dx = dw = db = None
    if g is not None and (needs[0] or needs[1] or needs[2]):
        dx, dw, db = native_group_norm_backward(g, x, mean, rstd, weight, ctx.N, ctx.C, ctx.HxW, group,
                                                (needs[0], needs[1], needs[2]), eps)
    if needs[0] and (g_mean is not None or g_rstd is not None):
        sets = _Groups(x, group)
        extra = None
        if g_mean is not None:
            extra = g_mean.reshape(x.shape[0], group, 1) / sets.count
        if g_rstd is not None:
            xhat, r = _normalized_sets(sets, x, eps)
            t = -(r * r) * xhat * (g_rstd.reshape(x.shape[0], group, 1) / sets.count)
            extra = t if extra is None else extra + t
        extra = sets.back(extra.expand(sets.view(x).shape))
        dx = extra if dx is None else dx + extra
    if dw is not None and dw.dtype is not ctx.input_meta[1][1]:
        dw = dw.to(ctx.input_meta[1][1])
    if db is not None and db.dtype is not ctx.input_meta[2][1]:
        db = db.to(ctx.input_meta[2][1])
    return dx, dw, db


NATIVE_GROUP_NORM = op("native_group_norm", ("x", "weight", "bias"), jvp=FROM_BACKWARD, outputs=("out", "mean", "rstd"),
                       rule=_native_group_norm_rule, reference=numpy_nn.native_group_norm,
                       kernel=_native_group_norm_launch, backward=_native_group_norm_backward, layout="preserve",
                       saves=("x", "weight", "mean", "rstd"), grad_name="NativeGroupNormBackward0")


def _native_group_norm_backward_rule(grad, x, mean, rstd, weight, *, output_mask, C, **_):
    compute = _dt.compute_dtype(x.dtype)
    pdtype = weight.dtype if weight is not None else x.dtype
    return (Meta(tuple(x.shape) if output_mask[0] else (0,), x.dtype, compute),
            Meta((C,) if output_mask[1] else (0,), pdtype, compute),
            Meta((C,) if output_mask[2] else (0,), pdtype, compute))


def _native_group_norm_backward_launch(outs, grad, x, mean, rstd, weight, *, compute, group, output_mask, **_):
    dx, dw, db = (o if m else None for o, m in zip(outs, output_mask))
    tnn.group_norm_backward((dx, dw, db), grad, x, mean, rstd, weight, group, compute)


def _native_group_norm_backward_backward(ctx, a=None, alpha=None, beta=None):
    """NativeGroupNormBackwardBackward0: _norm_double_backward over each sample's groups (the
    statistics recomputed from x with table ops; mean/rstd get no gradient of their own)."""
    needs = ctx.needs_input_grad
    d_g, d_x, d_w = _norm_double_backward(_Groups(ctx.x, ctx.group), ctx.grad, ctx.x, ctx.weight, ctx.eps, a,
                                          alpha, beta, (needs[0], needs[1], needs[4]))
    return d_g, d_x, None, None, d_w


NATIVE_GROUP_NORM_BACKWARD = op("native_group_norm_backward", ("grad", "x", "mean", "rstd", "weight"), jvp=FROM_BACKWARD,
                                outputs=("grad_input", "grad_weight", "grad_bias"),
                                rule=_native_group_norm_backward_rule,
                                reference=numpy_nn.native_group_norm_backward,
                                kernel=_native_group_norm_backward_launch,
                                backward=_native_group_norm_backward_backward, layout="preserve",
                                saves=("grad", "x", "weight"), grad_name="NativeGroupNormBackwardBackward0")


def native_group_norm_backward(grad, x, mean, rstd, weight, N, C, HxW, group, output_mask=(True, True, True),
                               eps=1e-5):
    """(grad_input, grad_weight, grad_bias) of group norm (None where output_mask is False), as
    torch's native_group_norm_backward; ``eps`` (the forward's) is what the double backward
    recomputes the statistics with."""
    output_mask = tuple(bool(m) for m in output_mask)
    if output_mask[1] and weight is None:
        output_mask = (output_mask[0], False, output_mask[2])
    outs = dispatch(NATIVE_GROUP_NORM_BACKWARD, _as_ncl(grad), x, mean.contiguous(), rstd.contiguous(),
                    _param(weight), N=int(N), C=int(C), HxW=int(HxW), group=int(group), eps=float(eps),
                    output_mask=output_mask, memory_format=_format(x))
    return tuple(o if m else None for o, m in zip(outs, output_mask))


def _check_group_norm(input, num_groups, weight, bias):
    C = int(input.shape[1])
    if num_groups <= 0 or C % num_groups != 0:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, but got input "
                           f"of shape {_shape_list(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != C):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {_shape_list(t.shape)} and input of shape "
                               f"{_shape_list(input.shape)}")
    _check_floating(input, "GroupNormKernelImpl")
    _check_mixed(input, weight, bias)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """torch.native_group_norm -> (output, mean, rstd): input (N, C, *) normalised over each
    sample's ``group`` groups of C / group channels (biased variance), then scaled by weight and
    shifted by bias per channel; mean and rstd (N, group)."""
    N, C, HxW, group = int(N), int(C), int(HxW), int(group)
    if input.numel() != N * C * HxW:
        raise RuntimeError("Expected X.numel() == N * C * HxW to be true, but got false.  (Could this error "
                           "message be improved?  If so, please report an enhancement request to PyTorch.)")
    if input.dim() < 2 or tuple(input.shape[:2]) != (N, C):     # torch reads X as (N, C, HxW)
        out, mean, rstd = native_group_norm(input.reshape(N, C, HxW), weight, bias, N, C, HxW, group, eps)
        return out.reshape(input.shape), mean, rstd
    _check_group_norm(input, group, weight, bias)
    return dispatch(NATIVE_GROUP_NORM, _as_ncl(input), _param(weight), _param(bias), N=N, C=C, HxW=HxW, group=group,
                    eps=float(eps), memory_format=_format(input))


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    """torch.group_norm: native_group_norm's output."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    N, C = int(input.shape[0]), int(input.shape[1])
    HxW = 1
    for s in input.shape[2:]:
        HxW *= int(s)
    _check_group_norm(input, num_groups, weight, bias)
    return native_group_norm(input, weight, bias, N, C, HxW, num_groups, eps)[0]


declare("native_group_norm", native_group_norm, method=False)
declare("group_norm", group_norm, method=False, functional="own")


# ------------------------------------------------------------------ instance norm
def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                  cudnn_enabled=True):
    """torch.instance_norm: batch norm of input (N, C, *) viewed as (1, N * C, *), weight, bias
    and the running statistics repeated per sample; the running statistics then take the mean
    of the N updated copies (torch's _instance_norm)."""
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    if input.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(input.dim(), 1)}, "
                         f"{max(input.dim(), 1) - 1}], but got 1)")
    N, C = int(input.shape[0]), int(input.shape[1])
    shape = (1, N * C) + tuple(input.shape[2:])
    rm = running_mean.repeat(N) if running_mean is not None else None
    rv = running_var.repeat(N) if running_var is not None else None
    w = weight.repeat(N) if weight is not None else None
    b = bias.repeat(N) if bias is not None else None
    out = batch_norm(input.contiguous().view(shape), w, b, rm, rv, use_input_stats, momentum, eps, cudnn_enabled)
    with no_grad():
        if running_mean is not None:
            running_mean.copy_(rm.view(N, C).mean(0))
        if running_var is not None:
            running_var.copy_(rv.view(N, C).mean(0))
    return out.view(input.shape)


declare("instance_norm", instance_norm, method=False, functional="own")


# ------------------------------------------------------------------ local response norm
def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """F.local_response_norm: input / (k + alpha * mean of x^2 over a window of ``size``
    channels)^beta, the window centred as torch's (size // 2 before, (size - 1) // 2 after,
    zeros past the ends), composed of table ops."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {dim} "
                         "dimensions)")
    if input.numel() == 0:
        return input
    sq = input * input
    C = int(input.shape[1])
    before, after = size // 2, (size - 1) // 2
    zeros_shape = list(input.shape)
    parts = []
    if before:
        zeros_shape[1] = before
        parts.append(zeros(tuple(zeros_shape), dtype=input.dtype, device=input.device))
    parts.append(sq)
    if after:
        zeros_shape[1] = after
        parts.append(zeros(tuple(zeros_shape), dtype=input.dtype, device=input.device))
    padded = cat(parts, 1) if len(parts) > 1 else sq
    window = padded.narrow(1, 0, C)
    for i in range(1, size):
        window = window + padded.narrow(1, i, C)
    div = (window * (alpha / size) + k).pow(beta)
    return input / div


declare("local_response_norm", method=False, functional="own")   # F.local_response_norm only
