"""Convolutions: torch.conv1d/2d/3d, conv_transpose1d/2d/3d, torch.convolution (and the
nn.functional forms, declared in ops/declarations.py).

Two table entries:

``convolution(x, weight, bias)``  torch's aten::convolution on zero padding: the convolution, or
    with ``transposed`` the transposed convolution (its weight [C_in, C_out / groups, *K]), whose
    output has (i - 1) * stride - 2 * padding + dilation * (k - 1) + 1 + output_padding pixels
    per dim. The kernels: kernels/conv.py's forward, and its input-gradient kernel for the
    transposed form (the transposed convolution IS the input gradient of the convolution).
    Node: ConvolutionBackward0 (both forms, as torch).
``convolution_weight_grad(grad, x)``  the weight's gradient of conv(x, w) given the output's
    gradient (kernels/conv.py's deterministic split-K weight-gradient kernel). Node (under
    create_graph): ConvolutionBackwardBackward0.

Every backward is written in these two entries (and a sum for the bias), so differentiating a
gradient again works to any order:
  conv:        dx = convolution(g, w, transposed=True, output_padding = whatever makes x's size)
               dw = convolution_weight_grad(g, x)
  transposed:  dx = convolution(g, w) (cut to x's size: an output padding past the stride gives
               a longer result), dw = convolution_weight_grad(x, g) (the roles of input and
               output swap)
  weight_grad(g, x) is bilinear: d/dg = convolution(x, gg) (cut to g's size), d/dx =
               convolution(g, gg, transposed=True, ...)

The public functions follow torch's argument handling and errors (at::convolution's
check_shape_forward, batchify, _convolution_mode for padding='same'/'valid'); unbatched input
is unsqueezed and squeezed back as torch does. The output (and the input gradient) is
channels_last (channels_last_3d) when the input or the weight suggests it, as torch.
Non-zero padding modes are the modules' (nn/modules/conv.py): they pad with ops/padding.py first.
"""
from __future__ import annotations

import warnings

from .. import dtypes as _dt
from ..backends import numpy_conv
from ..backends.base import backend_for
from ..backends.triton import conv as triton_conv
from ..tensor import Tensor
from . import _layout
from . import padding as _padding
from . import reduce as _reduce
from . import views as _views
from .dispatch import dispatch
from .table import FROM_BACKWARD, Meta, op, signature_rule


# --------------------------------------------------------------------------- sizes
def _conv_sizes(spatial, kshape, stride, padding, dilation):
    return tuple(numpy_conv.output_size(i, k, s, p, d)
                 for i, k, s, p, d in zip(spatial, kshape, stride, padding, dilation))


def _transposed_sizes(spatial, kshape, stride, padding, dilation, output_padding):
    return tuple((i - 1) * s - 2 * p + d * (k - 1) + 1 + op
                 for i, k, s, p, d, op in zip(spatial, kshape, stride, padding, dilation, output_padding))


def _spatial(t):
    return _spatial_shape(t.shape)


def _spatial_shape(shape):
    return tuple(int(s) for s in shape[2:])


# --------------------------------------------------------------------------- the entries
@signature_rule
def _convolution_rule(x, weight, bias, *, stride, padding, dilation, transposed, output_padding, groups, **_):
    kshape = _spatial(weight)
    if transposed:
        channels = int(weight.shape[1]) * groups
        sizes = _transposed_sizes(_spatial(x), kshape, stride, padding, dilation, output_padding)
    else:
        channels = int(weight.shape[0])
        sizes = _conv_sizes(_spatial(x), kshape, stride, padding, dilation)
    return Meta((int(x.shape[0]), channels) + sizes, x.dtype, _dt.compute_dtype(x.dtype))


def _convolution_launch(out, x, weight, bias, *, compute, stride, padding, dilation, transposed, groups, **_):
    if transposed:
        triton_conv.input_grad(out, x, weight, bias, stride, padding, dilation, groups, compute)
    else:
        triton_conv.forward(out, x, weight, bias, stride, padding, dilation, groups, compute)


def _cut(t, sizes):
    """t with its spatial dims cut to ``sizes`` (each at most t's own)."""
    for d, n in enumerate(sizes):
        if int(t.shape[2 + d]) != n:
            t = _views.narrow(t, 2 + d, 0, n)
    return t


def _conv(x, w, stride, padding, dilation, groups, memory_format, size=None):
    """conv(x, w) with no bias, cut to spatial ``size`` when given."""
    y = dispatch(CONVOLUTION, x, w, None, stride=stride, padding=padding, dilation=dilation, transposed=False,
                 output_padding=(0,) * len(stride), groups=groups, memory_format=memory_format)
    return y if size is None else _cut(y, size)


def _conv_input_grad(g, w, size, stride, padding, dilation, groups, memory_format):
    """The gradient of conv(x, w) for x of spatial ``size``: the transposed convolution of g,
    its output padding being what makes ``size`` (any value >= 0 internally)."""
    base = _transposed_sizes(_spatial(g), _spatial(w), stride, padding, dilation, (0,) * len(stride))
    extra = tuple(s - b for s, b in zip(size, base))
    return dispatch(CONVOLUTION, g, w, None, stride=stride, padding=padding, dilation=dilation, transposed=True,
                    output_padding=extra, groups=groups, memory_format=memory_format)


def _convolution_backward(ctx, g):
    # x is saved only for the weight's gradient and w only for the input's (saves_for below): a
    # frozen convolution keeps no activation; shapes come from the inputs' metadata
    needs = ctx.needs_input_grad
    size, w_shape = _spatial_shape(ctx.input_meta[0][0]), tuple(ctx.input_meta[1][0])
    s, p, d, groups, fmt = ctx.stride, ctx.padding, ctx.dilation, ctx.groups, ctx.memory_format
    gx = gw = gb = None
    if not ctx.transposed:
        if needs[0]:
            gx = _conv_input_grad(g, ctx.weight, size, s, p, d, groups, fmt)
        if needs[1]:
            gw = convolution_weight_grad(g, ctx.x, w_shape, s, p, d, groups)
    else:
        if needs[0]:
            gx = _conv(g, ctx.weight, s, p, d, groups, fmt, size)
        if needs[1]:
            gw = convolution_weight_grad(ctx.x, g, w_shape, s, p, d, groups)
    if needs[2]:
        gb = _reduce.sum(g, (0,) + tuple(range(2, g.dim())))
    return gx, gw, gb


CONVOLUTION = op("convolution", ("x", "weight", "bias"), jvp=FROM_BACKWARD, rule=_convolution_rule, reference=numpy_conv.convolution,
                 kernel=_convolution_launch, backward=_convolution_backward, saves=("x", "weight"),
                 saves_for={"x": (1,), "weight": (0,)}, grad_name="ConvolutionBackward0", layout="memory_format")


@signature_rule
def _weight_grad_rule(grad, x, *, weight_shape, **_):
    return Meta(tuple(weight_shape), x.dtype, _dt.compute_dtype(x.dtype))


def _weight_grad_launch(out, grad, x, *, compute, stride, padding, dilation, groups, **_):
    triton_conv.weight_grad(out, grad, x, stride, padding, dilation, groups, compute)


def _weight_grad_backward(ctx, gg):
    grad, x = ctx.grad, ctx.x
    needs = ctx.needs_input_grad
    s, p, d, groups = ctx.stride, ctx.padding, ctx.dilation, ctx.groups
    fmt = _memory_format(x, gg)
    d_grad = _conv(x, gg, s, p, d, groups, fmt, _spatial(grad)) if needs[0] else None
    d_x = _conv_input_grad(grad, gg, _spatial(x), s, p, d, groups, fmt) if needs[1] else None
    return d_grad, d_x


CONVOLUTION_WEIGHT_GRAD = op("convolution_weight_grad", ("grad", "x"), jvp=FROM_BACKWARD, rule=_weight_grad_rule,
                             reference=numpy_conv.convolution_weight_grad, kernel=_weight_grad_launch,
                             backward=_weight_grad_backward, saves=("grad", "x"),
                             grad_name="ConvolutionBackwardBackward0")


def convolution_weight_grad(grad, x, weight_shape, stride, padding, dilation, groups):
    """The gradient for the weight (of ``weight_shape``) of conv(x, w), given the output's
    gradient ``grad`` (fewer output pixels than x gives are allowed: those present count)."""
    return dispatch(CONVOLUTION_WEIGHT_GRAD, grad, x, weight_shape=tuple(int(s) for s in weight_shape),
                    stride=tuple(stride), padding=tuple(padding), dilation=tuple(dilation), groups=int(groups))


# --------------------------------------------------------------------------- argument handling
_SIGNATURES = {
    False: ("(Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, tuple of ints padding = 0, "
            "tuple of ints dilation = 1, int groups = 1)",
            "(Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, str padding = \"valid\", "
            "tuple of ints dilation = 1, int groups = 1)"),
    True: ("(Tensor input, Tensor weight, Tensor bias = None, tuple of ints stride = 1, tuple of ints padding = 0, "
           "tuple of ints output_padding = 0, int groups = 1, tuple of ints dilation = 1)",),
}


def _type_label(v):
    if isinstance(v, Tensor):
        return "Tensor"
    if isinstance(v, (tuple, list)):
        return f"{type(v).__name__} of [{', '.join(_type_label(e) for e in v)}]"
    return type(v).__name__


def _invalid_arguments(fn, transposed, positional, keywords):
    got = [_type_label(v) for v in positional] + [f"{k}={_type_label(v)}" for k, v in keywords.items()]
    lines = "".join(f" * {s}\n" for s in _SIGNATURES[transposed])
    return TypeError(f"{fn}() received an invalid combination of arguments - got ({', '.join(got)}), "
                     f"but expected one of:\n{lines}")


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool) or (
        isinstance(v, Tensor) and v.dim() == 0 and not v.dtype.is_floating_point and v.dtype is not _dt.bool_)


def _int_list(fn, name, v, bad, dims=1):
    """An int or a sequence of ints as a list of Python ints: torch's argument parser's 'tuple of
    ints' (of size ``dims``: one int is repeated, a sequence kept as it is)."""
    if _is_int(v):
        return [int(v)] * dims
    if isinstance(v, (tuple, list)):
        for pos, e in enumerate(v):
            if not _is_int(e):
                raise TypeError(f"{fn}(): argument '{name}' failed to unpack the object at pos {pos + 1} with error "
                                f"\"type must be tuple of ints,but got {type(e).__name__}\"")
        return [int(e) for e in v]
    raise bad()


def _expand(name, values, dims):
    """torch's expand_param_if_needed: one value for every dim, or one per dim."""
    if len(values) == 1:
        return tuple(values) * dims
    if len(values) != dims:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {dims} values to match the "
                           f"convolution dimensions, but got {name}={list(values)}")
    return tuple(values)


def _size_str(shape):
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def _batchify(input, dims, fn):
    """torch's batchify: a (dims + 1)-D input is one unbatched sample."""
    if input.dim() == dims + 2:
        return input, True
    if input.dim() == dims + 1:
        return _views.unsqueeze(input, 0), False
    raise RuntimeError(f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to {fn}, but got input "
                       f"of size: {_size_str(input.shape)}")


def _memory_format(x, w):
    """torch's choice of the output layout: channels_last (channels_last_3d) when the input or
    the weight suggests it (Tensor.suggest_memory_format), else contiguous."""
    rank = x.dim()
    name = {4: _layout.CHANNELS_LAST, 5: _layout.CHANNELS_LAST_3D}.get(rank)
    if name is not None and w.dim() == rank and (
            _layout.suggest_memory_format(x._shape, x._stride) == name
            or _layout.suggest_memory_format(w._shape, w._stride) == name):
        return name
    return _layout.CONTIGUOUS


def _tensor_type(t):
    return backend_for(t.device).torch_name("torch.", "torch.cuda.") + _dt.type_name(t.dtype) + "Tensor"


_CPP_NAMES = _dt.CPP_NAMES


def _check_shapes(x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    """torch's check_shape_forward (after its parameter checks), for batched x."""
    ws = tuple(int(s) for s in w.shape)
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if w.dim() != x.dim():
        raise RuntimeError(f"Expected {w.dim()}-dimensional input for {w.dim()}-dimensional weight {_size_str(ws)}, "
                           f"but got {x.dim()}-dimensional input of size {_size_str(x.shape)} instead")
    if ws[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {_size_str(ws)} instead")
    if ws[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{_size_str(ws)}] instead")
    if not transposed:
        if int(x.shape[1]) != ws[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {_size_str(ws)}, expected input"
                               f"{_size_str(x.shape)} to have {ws[1] * groups} channels, but got {int(x.shape[1])} "
                               "channels instead")
        if bias is not None and (bias.dim() != 1 or int(bias.shape[0]) != ws[0]):
            raise RuntimeError(f"Given weight of size {_size_str(ws)}, expected bias to be 1-dimensional with {ws[0]} "
                               f"elements, but got bias of size {_size_str(bias.shape)} instead")
        padded = [i + 2 * p for i, p in zip(_spatial(x), padding)]
        kernel = [d * (k - 1) + 1 for k, d in zip(ws[2:], dilation)]
        if any(i < k for i, k in zip(padded, kernel)):
            raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                               f"size: ({' x '.join(map(str, kernel))}). Kernel size can't be greater than actual "
                               "input size")
    else:
        if int(x.shape[1]) != ws[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {_size_str(ws)}, expected input"
                               f"{_size_str(x.shape)} to have {ws[0]} channels, but got {int(x.shape[1])} channels "
                               "instead")
        if bias is not None and (bias.dim() != 1 or int(bias.shape[0]) != ws[1] * groups):
            raise RuntimeError(f"Given transposed=1, weight of size {_size_str(ws)}, expected bias to be "
                               f"1-dimensional with {ws[1] * groups} elements, but got bias of size "
                               f"{_size_str(bias.shape)} instead")
        out = _transposed_sizes(_spatial(x), ws[2:], stride, padding, dilation, output_padding)
        if any(o < 0 for o in out):
            raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, _spatial(x)))}). Calculated "
                               f"output size per channel: ({' x '.join(map(str, out))}). Output size is too small")


def _check_dtypes(x, w, bias, transposed, dims):
    if w.dtype is not x.dtype:
        tail = backend_for(x.device).torch_name(" or input should be a MKLDNN tensor and weight is a dense tensor", "")
        raise RuntimeError(f"Input type ({_tensor_type(x)}) and weight type ({_tensor_type(w)}) should be the "
                           f"same{tail}")
    if bias is not None and bias.dtype is not x.dtype:
        raise RuntimeError(f"Input type ({_CPP_NAMES[x.dtype.name]}) and bias type ({_CPP_NAMES[bias.dtype.name]}) "
                           "should be the same")
    if x.dtype.is_floating_point:
        return
    # integer convolutions: torch's cpu runs the forward (slow_conv2d; transposed: int64 only, as
    # torch 2.13), nothing else does
    if transposed:
        name = backend_for(x.device).torch_name(
            None if x.dtype is _dt.int64 else f"slow_conv_transpose{max(dims, 2)}d_out_cpu",
            f"slow_conv_transpose{max(dims, 2)}d_out_cuda")
    elif x.dtype is _dt.bool_:
        name = backend_for(x.device).torch_name("slow_conv2d_cpu" if dims < 3 else "compute_columns3d",
                                                "slow_conv2d_cuda" if dims < 3 else "slow_conv_dilated<>")
    else:
        name = backend_for(x.device).torch_name(None, "slow_conv2d_cuda" if dims < 3 else "slow_conv_dilated<>")
    if name is not None:
        raise NotImplementedError(f'"{name}" not implemented for \'{_dt.type_name(x.dtype)}\'')


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """torch.convolution (aten::convolution): the rank comes from the weight; no batchify."""
    fn = "convolution"
    for name, v in (("input", input), ("weight", weight)):
        if not isinstance(v, Tensor):
            raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(v).__name__}")
    lists = [_int_list(fn, n, v, lambda n=n, v=v: TypeError(f"{fn}(): argument '{n}' must be tuple of ints, not "
                                                            f"{type(v).__name__}"))
             for n, v in (("stride", stride), ("padding", padding), ("dilation", dilation),
                          ("output_padding", output_padding))]
    if not _is_int(groups):
        raise TypeError(f"{fn}(): argument 'groups' must be int, not {type(groups).__name__}")
    return _run(input, weight, bias, *lists[:3], bool(transposed), lists[3], int(groups))


def _check_output_padding(output_padding, stride, dilation):
    """The transposed convolution's output padding must be below the stride or the dilation
    (torch's slow_conv_transpose shape check: 1-d problems are reported as 2-d ones)."""
    if all(o < s or o < d for o, s, d in zip(output_padding, stride, dilation)):
        return
    if len(stride) == 1:
        output_padding, stride, dilation = (0,) + output_padding, (1,) + stride, (1,) + dilation
    names = ("depth", "height", "width")[3 - len(stride):]
    detail = " ".join([f"output_padding_{n}: {o}" for n, o in zip(names, output_padding)]
                      + [f"stride_{n}: {s}" for n, s in zip(names, stride)]
                      + [f"dilation_{n}: {d}" for n, d in zip(names, dilation)])
    raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got {detail}")


def _run(x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    """at::_convolution's checks (the parameters expanded to the weight's rank, torch's order),
    then the table entry."""
    if w.dim() < 3:
        raise RuntimeError("weight should have at least three dimensions")
    dims = w.dim() - 2
    stride, padding, dilation, output_padding = (_expand(n, v, dims) for n, v in zip(
        ("stride", "padding", "dilation", "output_padding"), (stride, padding, dilation, output_padding)))
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    _check_shapes(x, w, bias, stride, padding, dilation, transposed, output_padding, groups)
    if transposed:
        _check_output_padding(output_padding, stride, dilation)
    _check_dtypes(x, w, bias, transposed, dims)
    return dispatch(CONVOLUTION, x, w, bias, stride=stride, padding=padding, dilation=dilation,
                    transposed=transposed, output_padding=output_padding, groups=groups,
                    memory_format=_memory_format(x, w))


def _same_padding(x, w, stride, dilation, dims):
    """torch's _convolution_mode for padding='same': the symmetric padding, the input padded
    by one more on the right where the total padding is odd (with torch's warning)."""
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    if w.dim() != dims + 2:
        return x, [0]       # the rank error comes from the convolution's checks
    stride, dilation = _expand("stride", stride, dims), _expand("dilation", dilation, dims)
    left, right = [], []
    for i in range(dims):
        total = dilation[i] * (int(w.shape[i + 2]) - 1)
        left.append(total // 2)
        right.append(total - total // 2)
    if left == right:
        return x, left
    warnings.warn("Using padding='same' with even kernel lengths and odd dilation may require a zero-padded copy of "
                  "the input be created", UserWarning, stacklevel=4)
    pad = [0] * (2 * dims)
    for i in range(dims):       # pad's pairs go from the last dim to the first
        pad[2 * (dims - 1 - i) + 1] = right[i] - left[i]
    return _padding.constant_pad_nd(x, pad, 0), left


def _conv_nd(dims, fn, input, weight, bias, stride, padding, dilation, groups):
    positional = [input, weight] + ([bias] if bias is not None else [])
    keywords = {k: v for k, v, default in (("stride", stride, 1), ("padding", padding, 0),
                                           ("dilation", dilation, 1), ("groups", groups, 1)) if v is not default}

    def bad():
        return _invalid_arguments(fn, False, positional, keywords)

    if not isinstance(input, Tensor) or not isinstance(weight, Tensor) or not (bias is None or isinstance(bias, Tensor)):
        raise bad()
    stride = _int_list(fn, "stride", stride, bad, dims)
    dilation = _int_list(fn, "dilation", dilation, bad, dims)
    if not _is_int(groups):
        raise bad()
    groups = int(groups)
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type ({_CPP_NAMES[input.dtype.name]}) and bias type "
                           f"({_CPP_NAMES[bias.dtype.name]}) should be the same")
    x, batched = _batchify(input, dims, fn)
    if isinstance(padding, str):
        if padding == "same":
            x, pads = _same_padding(x, weight, stride, dilation, dims)
        elif padding == "valid":
            pads = [0]
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        pads = _int_list(fn, "padding", padding, bad, dims)
    y = _run(x, weight, bias, stride, pads, dilation, False, [0], groups)
    return y if batched else _views.squeeze(y, 0)


def _conv_transpose_nd(dims, fn, input, weight, bias, stride, padding, output_padding, groups, dilation):
    for name, v in (("input", input), ("weight", weight)):
        if not isinstance(v, Tensor):
            raise TypeError(f"{fn}(): argument '{name}' (position {1 if name == 'input' else 2}) must be Tensor, "
                            f"not {type(v).__name__}")
    if not (bias is None or isinstance(bias, Tensor)):
        raise TypeError(f"{fn}(): argument 'bias' (position 3) must be Tensor, not {type(bias).__name__}")
    lists = []
    for name, v in (("stride", stride), ("padding", padding), ("output_padding", output_padding),
                    ("dilation", dilation)):
        lists.append(_int_list(fn, name, v, lambda name=name, v=v: TypeError(
            f"{fn}(): argument '{name}' must be tuple of ints, not {type(v).__name__}"), dims))
    if not _is_int(groups):
        raise TypeError(f"{fn}(): argument 'groups' must be int, not {type(groups).__name__}")
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type ({_CPP_NAMES[input.dtype.name]}) and bias type "
                           f"({_CPP_NAMES[bias.dtype.name]}) should be the same")
    x, batched = _batchify(input, dims, fn)
    stride, padding, output_padding, dilation = lists
    y = _run(x, weight, bias, stride, padding, dilation, True, output_padding, int(groups))
    return y if batched else _views.squeeze(y, 0)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """torch.conv1d / F.conv1d: padding an int, a tuple, 'same' or 'valid'."""
    return _conv_nd(1, "conv1d", input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """torch.conv2d / F.conv2d: padding an int, a tuple, 'same' or 'valid'."""
    return _conv_nd(2, "conv2d", input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """torch.conv3d / F.conv3d: padding an int, a tuple, 'same' or 'valid'."""
    return _conv_nd(3, "conv3d", input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """torch.conv_transpose1d / F.conv_transpose1d (weight [C_in, C_out / groups, k])."""
    return _conv_transpose_nd(1, "conv_transpose1d", input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """torch.conv_transpose2d / F.conv_transpose2d (weight [C_in, C_out / groups, kh, kw])."""
    return _conv_transpose_nd(2, "conv_transpose2d", input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """torch.conv_transpose3d / F.conv_transpose3d (weight [C_in, C_out / groups, kd, kh, kw])."""
    return _conv_transpose_nd(3, "conv_transpose3d", input, weight, bias, stride, padding, output_padding, groups,
                              dilation)
