"""Pooling: F.max_pool1d/2d/3d, avg_pool1d/2d/3d, adaptive_avg_pool1d/2d/3d,
adaptive_max_pool1d/2d/3d (torch.max_pool1d/2d/3d, avg_pool1d, adaptive_avg_pool1d,
adaptive_max_pool1d too), max_unpool1d/2d/3d and lp_pool1d/2d/3d.

Every pooling reads, along each spatial dim on its own, a few input positions per output
position; backends/numpy_pool.py names that rule per dim (a *spec*: a window of kernel, stride,
padding, dilation and divisor, or an adaptive window) and spells it out as tables. Three table
entries run them:

``window_max(x)``  (values, indices): the max over each output's box of taps and its flat
    position in the input plane (torch's NaN and tie rules). Nodes: MaxPool2DWithIndicesBackward0,
    AdaptiveMaxPool3DBackward0 ... (the ``nodes`` attribute).
``window_max_backward(grad)``  the input's gradient: per input element, the gradients of the
    outputs whose max it is, gathered through the transposed tables (no atomics). Its own
    gradient (double backward) gathers the incoming gradient at the indices: tritensor ops.
``separable(x)``  average and adaptive average pooling: the sum over the box divided by the
    product of the dims' divisors; ``transposed`` is the gradient map (per input element the
    outputs that read it, each weighted 1 / divisor), and the backward of either form is the
    other, so every order of derivative works.

The 1-d forms are the 2-d ones on x.unsqueeze(-2), squeezed back (as torch, so its errors and
nodes are the 2-d ones); adaptive average pooling to size 1 is a mean, as torch. The output
keeps channels_last (channels_last_3d) when the input suggests it, as torch.
"""
from __future__ import annotations

from .._autocast import autocast_policy as _autocast_policy

from .. import dtypes as _dt
from .. import memory_formats as _memory_formats
from ..autograd.composite import named_composite as _named_composite
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.grad_mode import no_grad as _no_grad
from ..backends import numpy_pool
from ..backends.base import backend_for
from ..backends.triton import pool as triton_pool
from ..tensor import Tensor
from . import _layout
from . import copy as _copy
from . import creation as _creation
from . import elementwise as _ew
from . import indexing as _indexing
from . import joining as _joining
from . import pointwise as _pw
from . import reduce as _reduce
from . import views as _views
from ._checks import check_tensor
from .dispatch import dispatch
from .surface import declare
from .table import FROM_BACKWARD, Meta, op, signature_rule


def _node(args, attrs):
    return attrs["nodes"][1 if attrs.get("transposed") else 0]


def _lead(t, dims):
    return tuple(int(s) for s in t.shape[:t.dim() - len(dims)])


# --------------------------------------------------------------------------- max pooling
@signature_rule
def _window_max_rule(x, *, dims, **_):
    shape = _lead(x, dims) + tuple(numpy_pool.spec_output(s) for s in dims)
    compute = _dt.compute_dtype(x.dtype)
    return Meta(shape, x.dtype, compute), Meta(shape, _dt.int64, compute)


def _window_max_launch(outs, x, *, compute, dims, **_):
    triton_pool.window_max(outs[0], outs[1], x, dims, compute)


def _window_max_backward(ctx, g, *_):
    if g is None:
        return None
    return dispatch(WINDOW_MAX_BACKWARD, g, indices=ctx.indices, dims=ctx.dims, nodes=ctx.nodes,
                    memory_format=ctx.memory_format)


WINDOW_MAX = op("window_max", ("x",), jvp=FROM_BACKWARD, outputs=("values", "indices"), rule=_window_max_rule,
                reference=numpy_pool.window_max, kernel=_window_max_launch, backward=_window_max_backward,
                saves=("indices",), grad_name=_node, layout="memory_format")


@signature_rule
def _window_max_backward_rule(grad, *, dims, **_):
    shape = _lead(grad, dims) + tuple(numpy_pool.spec_input(s) for s in dims)
    return Meta(shape, grad.dtype, _dt.compute_dtype(grad.dtype))


def _window_max_backward_launch(out, grad, *, compute, indices, dims, **_):
    triton_pool.window_max_backward(out, grad, indices, dims, compute)


def _gather_at(t, indices, k):
    """t's plane (its last k dims flattened) read at ``indices`` (shaped as indices)."""
    flat = _views.flatten(t, t.dim() - k) if k > 1 else t
    index = _views.flatten(indices, indices.dim() - k) if k > 1 else indices
    return _views.reshape(_indexing.gather(flat, -1, index), tuple(indices.shape))


def _window_max_backward_backward(ctx, gg):
    """d/dgrad of the scatter-by-indices is the gather at the indices (0 where the index is -1:
    a window with no tap inside the input)."""
    indices = ctx.indices
    safe = _ew.where(_ew.lt(indices, 0), 0, indices)
    gathered = _gather_at(gg, safe, len(ctx.dims))
    return (_ew.where(_ew.lt(indices, 0), 0.0, gathered),)


WINDOW_MAX_BACKWARD = op("window_max_backward", ("grad",), jvp=FROM_BACKWARD, rule=_window_max_backward_rule,
                         reference=numpy_pool.window_max_backward, kernel=_window_max_backward_launch,
                         backward=_window_max_backward_backward, grad_name=lambda args, attrs: attrs["nodes"][1],
                         layout="memory_format")


# --------------------------------------------------------------------------- average pooling
@signature_rule
def _separable_rule(x, *, dims, transposed, **_):
    size = numpy_pool.spec_input if transposed else numpy_pool.spec_output
    shape = _lead(x, dims) + tuple(size(s) for s in dims)
    return Meta(shape, x.dtype, _dt.compute_dtype(x.dtype))


def _separable_launch(out, x, *, compute, dims, transposed, **_):
    triton_pool.separable(out, x, dims, transposed, compute)


def _separable_backward(ctx, g):
    return (dispatch(SEPARABLE, g, dims=ctx.dims, transposed=not ctx.transposed, nodes=ctx.nodes,
                     memory_format=ctx.memory_format),)


SEPARABLE = op("separable", ("x",), jvp=FROM_BACKWARD, rule=_separable_rule, reference=numpy_pool.separable, kernel=_separable_launch,
               backward=_separable_backward, grad_name=_node, layout="memory_format")


# --------------------------------------------------------------------------- argument handling
_WORDS = {1: "one", 2: "two", 3: "three"}


def _size_str(shape):
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def _ints(v, n, message, allow_empty=False):
    """An int or a sequence of 1 or n ints as n Python ints (torch's pooling parameters);
    () when allowed and empty (stride omitted)."""
    if isinstance(v, Tensor) and v.dim() == 0:
        v = int(v.item())
    if isinstance(v, bool) or not isinstance(v, (int, tuple, list)):
        raise TypeError(message)
    if isinstance(v, int):
        return (v,) * n
    values = tuple(int(e) for e in v)
    if allow_empty and not values:
        return ()
    if len(values) == 1:
        return values * n
    if len(values) != n:
        raise RuntimeError(message)
    return values


def _memory_format(x):
    return _layout.suggest_memory_format(x._shape, x._stride) if x.dim() in (4, 5) else _layout.CONTIGUOUS


def _not_implemented(name, x):
    raise NotImplementedError(f'"{name}" not implemented for \'{_dt.type_name(x.dtype)}\'')


def _output_size(size, kernel, pad, stride, dilation, ceil_mode):
    """torch's pooling_output_shape with its checks."""
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > ((kernel - 1) * dilation + 1) // 2:
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pad}, "
                           f"kernel_size={kernel} and dilation={dilation}")
    return numpy_pool.pool_output_size(size, kernel, stride, pad, dilation, ceil_mode)


def _sizes_str(values):
    return "x".join(str(int(v)) for v in values)


def _window_params(fn, k, kernel_size, stride, padding, dilation, avg3d=False):
    words = _WORDS[k]
    if avg3d:
        kernel = _ints(kernel_size, k, f"{fn}: kernel_size must be a single int, or a tuple of {words} ints")
        stride = _ints(stride if stride is not None else (), k,
                       f"{fn}: stride must be omitted, a single int, or a tuple of {words} ints", True)
        padding = _ints(padding, k, f"{fn}: padding must be a single int, or a tuple of {words} ints")
    else:
        kernel = _ints(kernel_size, k, f"{fn}: kernel_size must either be a single int, or a tuple of {words} ints")
        stride = _ints(stride if stride is not None else (), k,
                       f"{fn}: stride must either be omitted, a single int, or a tuple of {words} ints", True)
        padding = _ints(padding, k, f"{fn}: padding must either be a single int, or a tuple of {words} ints")
    dilation = _ints(dilation, k, f"{fn}: dilation must be either a single int, or a tuple of {words} ints")
    return kernel, stride or kernel, padding, dilation


def _shape_check(x, k, kernel, stride, padding, dilation, outs, check_input_size=False, fn=None):
    """torch's pool2d_shape_check / pool3d_shape_check."""
    names = ("kT", "kH", "kW")[3 - k:] if k == 3 else ("kH", "kW")
    if any(v <= 0 for v in kernel):
        raise RuntimeError("kernel size should be greater than zero, but got "
                           + " ".join(f"{n}: {v}" for n, v in zip(names, kernel)))
    snames = ("dT", "dH", "dW") if k == 3 else ("dH", "dW")
    if any(v <= 0 for v in stride):
        raise RuntimeError("stride should be greater than zero, but got "
                           + " ".join(f"{n}: {v}" for n, v in zip(snames, stride)))
    dnames = ("dilationT", "dilationH", "dilationW") if k == 3 else ("dilationH", "dilationW")
    if any(v <= 0 for v in dilation):
        raise RuntimeError("dilation should be greater than zero, but got "
                           + " ".join(f"{n}: {v}" for n, v in zip(dnames, dilation)))
    shape = tuple(int(s) for s in x.shape)
    spatial = shape[-k:]
    if k == 2:
        valid = shape[-3] != 0 and shape[-2] != 0 and shape[-1] != 0
        if not (valid and (x.dim() == 4 or shape[0] != 0)):
            raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
                               f"but got:{_size_str(shape)}")
    else:
        for i in range(1 if x.dim() == 5 else 0, x.dim()):
            if shape[i] <= 0:
                raise RuntimeError(f"{fn}: Expected input's non-batch dimensions to have positive length, but input "
                                   f"has a shape of {_size_str(shape)} and non-batch dimension {shape[i]} has length "
                                   "zero!")
        if check_input_size and any(i < kk for i, kk in zip(spatial, kernel)):
            raise RuntimeError(f"input image (T: {spatial[0]} H: {spatial[1]} W: {spatial[2]}) smaller than kernel "
                               f"size (kT: {kernel[0]} kH: {kernel[1]} kW: {kernel[2]})")
    if any(kk // 2 < p for kk, p in zip(kernel, padding)):
        if k == 2:
            raise RuntimeError("pad should be smaller than or equal to half of kernel size, but got padW = "
                               f"{padding[1]}, padH = {padding[0]}, kW = {kernel[1]}, kH = {kernel[0]}")
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got kT: {kernel[0]} kW: "
                           f"{kernel[2]} kH: {kernel[1]} padT: {padding[0]} padW: {padding[2]} padH: {padding[1]}")
    if any(o < 1 for o in outs):
        planes = shape[-k - 1]
        raise RuntimeError(f"Given input size: ({_sizes_str((planes,) + spatial)}). Calculated output size: "
                           f"({_sizes_str((planes,) + tuple(outs))}). Output size is too small")


def _window_specs(x, k, kernel, stride, padding, dilation, ceil_mode, divisors):
    spatial = tuple(int(s) for s in x.shape[-k:])
    outs = tuple(_output_size(i, kk, p, s, d, ceil_mode)
                 for i, kk, p, s, d in zip(spatial, kernel, padding, stride, dilation))
    specs = tuple(("window", i, o, kk, s, p, d, q)
                  for i, o, kk, s, p, d, q in zip(spatial, outs, kernel, stride, padding, dilation, divisors))
    return outs, specs


# --------------------------------------------------------------------------- max_pool
_MAX_NODES = {2: ("MaxPool2DWithIndicesBackward0", "MaxPool2DWithIndicesBackwardBackward0"),
              3: ("MaxPool3DWithIndicesBackward0", "MaxPool3DWithIndicesBackwardBackward0")}


def _max_pool(k, x, kernel_size, stride, padding, dilation, ceil_mode):
    """torch's max_pool2d_with_indices / max_pool3d_with_indices: (values, indices)."""
    fn = f"max_pool{k}d"
    kernel, stride, padding, dilation = _window_params(fn, k, kernel_size, stride, padding, dilation)
    if x.dim() not in (k + 1, k + 2):
        raise RuntimeError(f"non-empty {k + 1}D or {k + 2}D (batch mode) tensor expected for input")
    outs, specs = _window_specs(x, k, kernel, stride, padding, dilation, bool(ceil_mode), ("none",) * k)
    where = backend_for(x.device).torch_name("cpu", "cuda")
    _shape_check(x, k, kernel, stride, padding, dilation, outs,
                 fn=f"max_pool{k}d_with_indices_out_{where}_template()")
    if x.dtype is _dt.bool_:
        _not_implemented(fn, x)
    return dispatch(WINDOW_MAX, x, dims=specs, nodes=_MAX_NODES[k], memory_format=_memory_format(x))


def _result(pair, return_indices):
    return tuple(pair) if return_indices else pair[0]


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """torch.nn.functional.max_pool2d: the max over each (dilated) window; with return_indices
    also its flat position in the input plane (the indices max_unpool2d takes)."""
    check_tensor("max_pool2d", input)
    return _result(_max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode), return_indices)


@_autocast_policy("max_pool3d")
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """torch.nn.functional.max_pool3d (see max_pool2d)."""
    check_tensor("max_pool3d", input)
    return _result(_max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode), return_indices)


def _check_max_pool1d(x, kernel_size, stride, padding, dilation, ceil_mode):
    """torch's check_max_pool1d (the cpu path without gradient or indices has its own texts)."""
    if x.dim() not in (2, 3) or any(int(s) == 0 for s in x.shape[1:]) and x.dim() == 3 or (
            x.dim() == 2 and any(int(s) == 0 for s in x.shape)):
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{_size_str(x.shape)}")
    msg = "max_pool1d() {} must be an int, list of ints or tuple of ints of size 1 but got size {}"
    params = []
    for name, v, default in (("kernel_size", kernel_size, None), ("stride", stride, "kernel"),
                             ("padding", padding, None), ("dilation", dilation, None)):
        if isinstance(v, Tensor) and v.dim() == 0:
            v = int(v.item())
        if v is None or (isinstance(v, (tuple, list)) and len(v) == 0 and default == "kernel"):
            params.append(None)
            continue
        values = (v,) if isinstance(v, int) else tuple(v)
        if len(values) != 1:
            raise RuntimeError(msg.format(name, len(values)))
        params.append(int(values[0]))
    kernel, stride, padding, dilation = params
    stride = kernel if stride is None else stride
    if kernel <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {kernel}")
    if stride <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {stride}")
    if padding < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {padding}")
    if padding > kernel // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={padding} "
                           f"and kernel_size={kernel}")
    if dilation <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {dilation}")
    out = numpy_pool.pool_output_size(int(x.shape[-1]), kernel, stride, padding, dilation, bool(ceil_mode))
    if out < 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
    if out == 0 and int(x.shape[-1]) + 2 * padding - dilation * (kernel - 1) - 1 < 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")


def _one(v):
    """A 1-d parameter as the 2-d one torch's max_pool1d_with_indices builds ([1] + v)."""
    if isinstance(v, Tensor) and v.dim() == 0:
        v = int(v.item())
    if isinstance(v, (tuple, list)):
        return (1,) + tuple(v) if len(v) else ()
    return v if v is None else (1, v)


def _one_pad(v):
    if isinstance(v, (tuple, list)):
        return (0,) + tuple(v)
    return (0, v)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """torch.nn.functional.max_pool1d: max_pool2d of input.unsqueeze(-2), squeezed back (as
    torch); on the cpu without indices or gradient, torch's own max_pool1d checks first."""
    check_tensor("max_pool1d", input)
    cpu_path = backend_for(input.device).torch_name(True, False)     # torch's cpu kernel without indices
    if not return_indices and cpu_path and not (input.requires_grad and is_grad_enabled()):
        _check_max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)
    _check_dim_range("max_pool1d", input, 2, 4)
    kernel_size, padding, dilation = (_single("max_pool1d", n, v) for n, v in (
        ("kernel_size", kernel_size), ("padding", padding), ("dilation", dilation)))
    if stride is not None and not (isinstance(stride, (tuple, list)) and len(stride) == 0):
        stride = _single("max_pool1d", "stride", stride)
    x = _views.unsqueeze(input, -2)
    dil = _one(dilation)
    values, indices = _max_pool(2, x, _one(kernel_size), _one(stride) if stride is not None else None,
                                _one_pad(padding), dil, ceil_mode)
    values = _views.squeeze(values, -2)
    return (values, _views.squeeze(indices, -2)) if return_indices else values



def max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    """torch.ops.aten.max_pool2d_with_indices_backward: the input's gradient of max_pool2d given
    the output's gradient and the indices the forward chose (each gradient added at its max;
    gathered per input element, as the autograd node does)."""
    for name, v, pos in (("grad_output", grad_output, 1), ("self", self, 2), ("indices", indices, 8)):
        check_tensor("max_pool2d_with_indices_backward", v, name, pos)
    kernel, stride, padding, dilation = _window_params("max_pool2d", 2, kernel_size, stride, padding, dilation)
    if self.dim() not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    outs, specs = _window_specs(self, 2, kernel, stride, padding, dilation, bool(ceil_mode), ("none",) * 2)
    _shape_check(self, 2, kernel, stride, padding, dilation, outs)
    ndim = self.dim()
    for t in (grad_output, indices):
        for dim, size in ((ndim - 3, int(self.shape[ndim - 3])), (ndim - 2, outs[0]), (ndim - 1, outs[1])):
            if t.dim() != ndim or int(t.shape[dim]) != size:
                got = int(t.shape[dim]) if -t.dim() <= dim < t.dim() else 0
                raise RuntimeError(f"Expected a tensor of dimension {ndim} and tensor.size[{dim}] == {size} but got: "
                                   f"dimension {t.dim()} and tensor.size[{dim}] = {got}")
    return dispatch(WINDOW_MAX_BACKWARD, grad_output, indices=indices, dims=specs, nodes=_MAX_NODES[2],
                    memory_format=_memory_format(self))

# --------------------------------------------------------------------------- avg_pool
_AVG_NODES = {2: ("AvgPool2DBackward0", "AvgPool2DBackwardBackward0"),
              3: ("AvgPool3DBackward0", "AvgPool3DBackwardBackward0")}


def _avg_pool(k, x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    fn = f"avg_pool{k}d"
    kernel, stride, padding, _ = _window_params(fn, k, kernel_size, stride, padding, 1, avg3d=k == 3)
    if k == 3 and x.dim() not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if divisor_override is not None and int(divisor_override) == 0:
        raise RuntimeError("divisor must be not zero")
    if k == 2 and x.dim() < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-x.dim()}, {x.dim() - 1}], but got -3)")
    if k == 2 and x.dim() > 4:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
                           f"but got:{_size_str(x.shape)}")
    if divisor_override is not None:
        divisors = (int(divisor_override),) + ("none",) * (k - 1)
    else:
        divisors = ("include" if count_include_pad else "exclude",) * k
    outs, specs = _window_specs(x, k, kernel, stride, padding, (1,) * k, bool(ceil_mode), divisors)
    _shape_check(x, k, kernel, stride, padding, (1,) * k, outs, check_input_size=k == 3, fn="avg_pool3d()")
    if not (x.dtype.is_floating_point or x.dtype is _dt.int64):
        _not_implemented(fn, x)
    # (torch's avg_pool3d writes a contiguous output whatever the input's layout)
    fmt = _memory_format(x) if k == 2 else _layout.CONTIGUOUS
    return dispatch(SEPARABLE, x, dims=specs, transposed=False, nodes=_AVG_NODES[k], memory_format=fmt)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """torch.nn.functional.avg_pool2d: the mean over each window (divided by the window's size
    with its padding, or without it, or by divisor_override)."""
    check_tensor("avg_pool2d", input)
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


@_autocast_policy("avg_pool3d")
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """torch.nn.functional.avg_pool3d (see avg_pool2d)."""
    check_tensor("avg_pool3d", input)
    return _avg_pool(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def _check_dim_range(fn, x, low, high):
    if not low <= x.dim() < high:
        raise RuntimeError(f"Expected {low} to {high - 1} dimensions, but got {x.dim()}-dimensional tensor for "
                           f"argument #1 'self' (while checking arguments for {fn})")


def _single(fn, name, v):
    if isinstance(v, Tensor) and v.dim() == 0:
        v = int(v.item())
    if isinstance(v, (tuple, list)):
        if len(v) != 1:
            raise RuntimeError(f"{fn}() argument '{name}' should contain one int (got {len(v)})")
        return int(v[0])
    return v


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """torch.nn.functional.avg_pool1d: avg_pool2d of input.unsqueeze(-2), squeezed back."""
    check_tensor("avg_pool1d", input)
    _check_dim_range("avg_pool1d", input, 2, 4)
    kernel = _single("avg_pool1d", "kernel_size", kernel_size)
    stride = kernel if stride is None or stride == () or stride == [] else _single("avg_pool1d", "stride", stride)
    padding = _single("avg_pool1d", "padding", padding)
    y = _avg_pool(2, _views.unsqueeze(input, -2), (1, kernel), (1, stride), (0, padding), ceil_mode,
                  count_include_pad, None)
    return _views.squeeze(y, -2)


# --------------------------------------------------------------------------- adaptive pooling
def _adaptive_specs(x, sizes):
    return tuple(("adaptive", int(i), int(o)) for i, o in zip(x.shape[-len(sizes):], sizes))


def _adaptive_sizes(fn, x, output_size, k):
    """output_size as k ints; None entries take the input's size (torch's _list_with_default)."""
    if isinstance(output_size, Tensor) and output_size.dim() == 0:
        output_size = int(output_size.item())
    if isinstance(output_size, int):
        return (output_size,) * k
    sizes = tuple(output_size)
    if k > 1 and x.dim() <= len(sizes):     # torch.nn.functional's _list_with_default (2-d and 3-d)
        raise ValueError(f"Input dimension should be at least {len(sizes) + 1}")
    if len(sizes) == 1 and k > 1:
        sizes = sizes * k
    return tuple(int(x.shape[x.dim() - len(sizes) + d]) if s is None else int(s) for d, s in enumerate(sizes))


_ADAPTIVE_AVG_NODES = {2: ("AdaptiveAvgPool2DBackward0", "AdaptiveAvgPool2DBackwardBackward0"),
                       3: ("AdaptiveAvgPool3DBackward0", "AdaptiveAvgPool3DBackwardBackward0")}


def _adaptive_avg(k, x, sizes):
    fn = f"adaptive_avg_pool{k}d"
    if len(sizes) != k:
        raise RuntimeError(f"{fn}: output_size must be {k}")
    if any(s < 0 for s in sizes):
        inner = ", ".join(str(s) for s in sizes) if k == 2 else f"{sizes[0]}, {sizes[1]},{sizes[2]}"
        raise RuntimeError(f"{fn}: elements of output_size must be greater than or equal to 0 but received {{{inner}}}")
    if all(s == 1 for s in sizes):
        # torch: adaptive pooling to one element per plane is the mean over the plane
        out = _reduce.mean(x, tuple(range(-1, -k - 1, -1)), True)
        if x.dim() == k + 2 and _memory_format(x) != _layout.CONTIGUOUS:
            n, c = int(x.shape[0]), int(x.shape[1])
            out = out.as_strided_((n, c) + (1,) * k, (c, 1) + (c,) * k)     # torch's restride
        return out
    if x.dim() not in (k + 1, k + 2):
        raise RuntimeError(f"{fn}(): Expected {k + 1}D or {k + 2}D tensor, but got {_size_str(x.shape)}")
    for d in range(x.dim() - k, x.dim()):
        if int(x.shape[d]) == 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but input has "
                               f"sizes {_size_str(x.shape)} with dimension {d} being empty")
    if not x.dtype.is_floating_point:
        _not_implemented(fn, x)
    return dispatch(SEPARABLE, x, dims=_adaptive_specs(x, sizes), transposed=False, nodes=_ADAPTIVE_AVG_NODES[k],
                    memory_format=_memory_format(x))


def adaptive_avg_pool2d(input, output_size):
    """torch.nn.functional.adaptive_avg_pool2d: output_size windows per dim, the o-th
    [floor(o I / O), ceil((o + 1) I / O)) (None keeps the input's size)."""
    check_tensor("adaptive_avg_pool2d", input)
    return _adaptive_avg(2, input, _adaptive_sizes("adaptive_avg_pool2d", input, output_size, 2))


@_autocast_policy("adaptive_avg_pool3d")
def adaptive_avg_pool3d(input, output_size):
    """torch.nn.functional.adaptive_avg_pool3d (see adaptive_avg_pool2d)."""
    check_tensor("adaptive_avg_pool3d", input)
    return _adaptive_avg(3, input, _adaptive_sizes("adaptive_avg_pool3d", input, output_size, 3))


def adaptive_avg_pool1d(input, output_size):
    """torch.nn.functional.adaptive_avg_pool1d: adaptive_avg_pool2d of input.unsqueeze(-2)."""
    check_tensor("adaptive_avg_pool1d", input)
    _check_dim_range("adaptive_avg_pool1d", input, 2, 4)
    size = _single("adaptive_avg_pool1d", "output_size", output_size)
    return _views.squeeze(_adaptive_avg(2, _views.unsqueeze(input, -2), (1, int(size))), -2)


_ADAPTIVE_MAX_NODES = {2: ("AdaptiveMaxPool2DBackward0", "AdaptiveMaxPool2DBackwardBackward0"),
                       3: ("AdaptiveMaxPool3DBackward0", "AdaptiveMaxPool3DBackwardBackward0")}


def _adaptive_max(k, x, sizes):
    fn = f"adaptive_max_pool{k}d"
    if x.dim() not in (k + 1, k + 2):
        raise RuntimeError(f"{fn}(): Expected {k + 1}D or {k + 2}D tensor, but got: {_size_str(x.shape)}")
    for d in range(1, x.dim()):
        if int(x.shape[d]) == 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but input has "
                               f"sizes {_size_str(x.shape)} with dimension {d} being empty")
    if len(sizes) != k:
        raise RuntimeError(f"{fn}(): internal error: output_size.size() must be {k}")
    if any(s < 0 for s in sizes):
        shape = _lead(x, sizes) + tuple(sizes)
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: {_size_str(shape)}")
    if not x.dtype.is_floating_point:
        _not_implemented(fn, x)
    return dispatch(WINDOW_MAX, x, dims=_adaptive_specs(x, sizes), nodes=_ADAPTIVE_MAX_NODES[k],
                    memory_format=_memory_format(x))


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """torch.nn.functional.adaptive_max_pool2d: the max over adaptive_avg_pool2d's windows;
    with return_indices also its flat position in the input plane."""
    check_tensor("adaptive_max_pool2d", input)
    return _result(_adaptive_max(2, input, _adaptive_sizes("adaptive_max_pool2d", input, output_size, 2)),
                   return_indices)


@_autocast_policy("adaptive_max_pool3d")
def adaptive_max_pool3d(input, output_size, return_indices=False):
    """torch.nn.functional.adaptive_max_pool3d (see adaptive_max_pool2d)."""
    check_tensor("adaptive_max_pool3d", input)
    return _result(_adaptive_max(3, input, _adaptive_sizes("adaptive_max_pool3d", input, output_size, 3)),
                   return_indices)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """torch.nn.functional.adaptive_max_pool1d: adaptive_max_pool2d of input.unsqueeze(-2)."""
    check_tensor("adaptive_max_pool1d", input)
    _check_dim_range("adaptive_max_pool1d", input, 2, 4)
    size = _single("adaptive_max_pool1d", "output_size", output_size)
    values, indices = _adaptive_max(2, _views.unsqueeze(input, -2), (1, int(size)))
    values = _views.squeeze(values, -2)
    return (values, _views.squeeze(indices, -2)) if return_indices else values


# --------------------------------------------------------------------------- max_unpool
def _params(v, k):
    if isinstance(v, Tensor) and v.dim() == 0:
        v = int(v.item())
    return (int(v),) * k if isinstance(v, int) else tuple(int(e) for e in v)


def _unpool_output_size(x, kernel, stride, padding, output_size):
    """torch.nn.functional._unpool_output_size: the default sizes, or output_size checked to
    lie strictly within one stride of them."""
    k = len(kernel)
    default = [(int(x.shape[x.dim() - k + d]) - 1) * stride[d] + kernel[d] - 2 * padding[d] for d in range(k)]
    if output_size is None:
        return default
    given = output_size
    if len(output_size) == k + 2:
        output_size = output_size[2:]
    if len(output_size) != k:
        raise ValueError(f"output_size should be a sequence containing {k} or {k + 2} elements, but it has a length of "
                         f"'{len(output_size)}'")
    for d in range(k):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(f'invalid output_size "{given if len(given) == k else output_size}" (dim {d} must be '
                             f"between {low} and {high})")
    return [int(s) for s in output_size]


def _unpool(x, indices, sizes, memory_format):
    """zeros of x's leading dims + ``sizes``, x's values written at their flat plane positions."""
    k = len(sizes)
    lead = _lead(x, sizes)
    plane = 1
    for s in sizes:
        plane *= s
    src = _views.flatten(x, x.dim() - k) if k > 1 else x
    index = _views.flatten(indices, indices.dim() - k) if k > 1 else indices
    out = _indexing.scatter(_creation.zeros(lead + (plane,), dtype=x.dtype, device=x.device), -1, index, src)
    out = _views.reshape(out, lead + tuple(sizes))
    return _copy.contiguous(out, memory_format=getattr(_memory_formats, memory_format)) \
        if memory_format != _layout.CONTIGUOUS else out


def _max_unpool(k, input, indices, kernel_size, stride, padding, output_size):
    fn = f"max_unpool{k}d"
    check_tensor(fn, input)
    check_tensor(fn, indices, "indices", 2)
    kernel = _params(kernel_size, k)
    stride = kernel if stride is None else _params(stride, k)
    padding = _params(padding, k)
    sizes = _unpool_output_size(input, kernel, stride, padding, output_size)
    x, idx = input, indices
    if k == 1:      # torch: max_unpool2d of the (..., L, 1) views
        x, idx, sizes = _views.unsqueeze(input, -1), _views.unsqueeze(indices, -1), sizes + [1]
    k2 = max(k, 2)
    if idx.dtype is not _dt.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {_dt.type_name(idx.dtype)}")
    if k2 == 2 and x.dim() not in (3, 4):
        raise RuntimeError(f"Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with {x.dim()} "
                           "dimensions.")
    if k2 == 3 and x.dim() not in (4, 5):
        raise RuntimeError(f"Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with {x.dim()} "
                           "dimensions.")
    if tuple(x.shape) != tuple(idx.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({_size_str(x.shape)}) "
                           f"but got indices tensor with shape: {_size_str(idx.shape)}")
    for d in range(1, x.dim()):
        if int(x.shape[d]) == 0:
            raise RuntimeError(f"max_unpooling{k2}d_forward_out_cpu(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but got {_size_str(x.shape)} with dimension {d} being empty.")
    if not x.dtype.is_floating_point:
        _not_implemented(f"max_unpool{k2}d", x)
    plane = 1
    for s in sizes:
        plane *= s
    if idx.numel():
        flat = _views.reshape(idx, (-1,))
        bad = _indexing.nonzero(_pw.logical_or(_ew.lt(flat, 0), _ew.ge(flat, plane)))
        if bad.numel():       # (a value check: torch's kernels raise it too)
            first = int(flat[int(bad[0, 0].item())].item())
            raise RuntimeError(f"Found an invalid max index: {first} (output volumes are of size "
                               f"{'x'.join(str(s) for s in sizes)})")
    node = f"MaxUnpool{k2}DBackward0"
    out = _named_composite(node, _unpool, x, idx, tuple(sizes), _memory_format(x))
    return _views.squeeze(out, -1) if k == 1 else out


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """torch.nn.functional.max_unpool1d: max_pool1d's inverse, zeros but at the indices."""
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """torch.nn.functional.max_unpool2d: a zero plane of output_size (default: the size
    max_pool2d pooled from) with each input value at its index."""
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """torch.nn.functional.max_unpool3d (see max_unpool2d)."""
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)


# --------------------------------------------------------------------------- lp_pool
def _lp_pool(k, avg, input, norm_type, kernel_size, stride, ceil_mode):
    """torch's lp_pool: (sum over the window of x ** p) ** (1 / p), as its average times the
    window's size, written as torch writes it (so its gradient and NaN behaviour are torch's)."""
    kernel = _params(kernel_size, k)
    x = _ew.pow(input, norm_type)
    out = avg(x, kernel_size, stride, 0, ceil_mode) if stride is not None else avg(x, kernel_size, padding=0,
                                                                                  ceil_mode=ceil_mode)
    size = 1
    for v in kernel:
        size *= v
    return _ew.pow(_ew.mul(_ew.mul(_pw.sign(out), _ew.relu(_ew.abs(out))), size), 1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """torch.nn.functional.lp_pool1d: the p-norm of each window (avg_pool1d of x ** p)."""
    return _lp_pool(1, avg_pool1d, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """torch.nn.functional.lp_pool2d: the p-norm of each window (avg_pool2d of x ** p)."""
    return _lp_pool(2, avg_pool2d, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """torch.nn.functional.lp_pool3d: the p-norm of each window (avg_pool3d of x ** p)."""
    return _lp_pool(3, avg_pool3d, input, norm_type, kernel_size, stride, ceil_mode)


# --------------------------------------------------------------------------- fractional max pooling
def _intervals(u, size, out, kernel):
    """torch's generate_intervals for every plane at once: u [N, C] samples in the input's dtype;
    the window starts [N, C, out] (int64), trunc((i + u) alpha) - trunc(u alpha) with
    alpha = (size - kernel) / (out - 1) in the samples' dtype, the last one size - kernel."""
    n, c = int(u.shape[0]), int(u.shape[1])
    last = _creation.full((n, c, 1), size - kernel, dtype=_dt.int64, device=u.device)
    if out <= 1:
        return last[..., :out]
    dtype = u.dtype
    alpha = _creation.full((), size - kernel, dtype=dtype, device=u.device) / (out - 1)
    i = _creation.arange(out - 1, dtype=dtype, device=u.device)
    u = _views.unsqueeze(u, -1)
    starts = _pw.trunc(_ew.mul(_ew.add(i, u), alpha)).to(_dt.int64) - _pw.trunc(_ew.mul(u, alpha)).to(_dt.int64)
    return _joining.cat([starts, last], -1)


def _fractional_indices(x, kernel, sizes, samples):
    """The flat plane index of each output's max: per plane the windows of _intervals, the
    max by torch's rule (NaN wins, the last NaN; otherwise the greatest, the first of ties)."""
    k = len(kernel)
    spatial = tuple(int(s) for s in x.shape[-k:])
    n, c = int(x.shape[0]), int(x.shape[1])
    order = (1, 0) if k == 2 else (0, 1, 2)           # torch: sample 0 is W in 2-d, T in 3-d
    starts = [_intervals(samples[:n, :, order[d]], spatial[d], sizes[d], kernel[d]) for d in range(k)]
    strides = [1] * k
    for d in range(k - 2, -1, -1):
        strides[d] = strides[d + 1] * spatial[d + 1]
    index = None          # [N, C, O_0 .. O_k-1, K_0 .. K_k-1]
    for d in range(k):
        shape = [n, c] + [1] * (2 * k)
        shape[2 + d] = sizes[d]
        pos = _views.reshape(starts[d], tuple(shape))
        tap_shape = [1] * (2 + 2 * k)
        tap_shape[2 + k + d] = kernel[d]
        taps = _views.reshape(_creation.arange(kernel[d], dtype=_dt.int64, device=x.device), tuple(tap_shape))
        term = _ew.mul(_ew.add(pos, taps), strides[d])
        index = term if index is None else _ew.add(index, term)
    taps_total = 1
    for v in kernel:
        taps_total *= v
    index = _views.reshape(index, (n, c) + tuple(sizes) + (taps_total,))
    flat = _views.flatten(x, 2)
    vals = _views.reshape(_indexing.gather(flat, -1, _views.reshape(index, (n, c, -1))), tuple(index.shape))
    best = _reduce.amax(vals, -1, True)
    t = _creation.arange(taps_total, dtype=_dt.int64, device=x.device)
    key = _ew.where(_pw.isnan(vals), t + 2 * taps_total, _ew.where(_ew.eq(vals, best), taps_total - t, -1))
    tap = _reduce.argmax(key, -1, True)
    return _views.squeeze(_indexing.gather(index, -1, tap), -1)


def _fractional_max_pool(k, input, kernel_size, output_size, output_ratio, return_indices, _random_samples):
    fn = f"fractional_max_pool{k}d"
    check_tensor(fn, input)
    if output_size is None and output_ratio is None:
        raise ValueError(f"{fn} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if len(output_ratio) > k:
            raise ValueError(f"{fn} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = tuple(output_ratio) * (k if len(output_ratio) == 1 else 1)
        output_size = [int(int(input.shape[input.dim() - k + d]) * ratio[d]) for d in range(k)]
    if _random_samples is None:
        if input.dim() < k + 1:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-input.dim()}, "
                             f"{input.dim() - 1}], but got {-k - 1})")
        batch = 1 if input.dim() == k + 1 else int(input.shape[0])
        _random_samples = _creation.rand(batch, int(input.shape[-k - 1]), k, dtype=input.dtype, device=input.device)
    words = "Ints" if k == 2 else "three Ints"
    kernel = _params(kernel_size, k) if not isinstance(kernel_size, (tuple, list)) or len(kernel_size) != 1 else \
        _params(kernel_size[0], k)
    if len(kernel) != k:
        raise RuntimeError(f"{fn}: kernel_size must either be a single Int or tuple of {words}")
    sizes = _params(output_size, k) if not isinstance(output_size, (tuple, list)) or len(output_size) != 1 else \
        _params(output_size[0], k)
    if len(sizes) != k:
        raise RuntimeError(f"{fn}: output_size must either be a single Int or tuple of {words}")
    where = fn + "()" if k == 2 else fn + "_out()"
    if input.dim() not in (k + 1, k + 2):
        raise RuntimeError(f"{where}: Expected {k + 1}D or {k + 2}D tensor, but got: {_size_str(input.shape)}")
    for d in range(1, input.dim()):
        if int(input.shape[d]) == 0:
            raise RuntimeError(f"{where}: Expected input to have non-zero size for non-batch dimensions, but got"
                               f"{_size_str(input.shape)} with dimension {d} being empty.")
    names = ("height", "width") if k == 2 else ("time", "height", "width")
    spatial = tuple(int(v) for v in input.shape[-k:])
    for d in range(k):
        if sizes[d] + kernel[d] - 1 > spatial[d]:
            raise RuntimeError(f"{where}: pool {names[d]} {kernel[d]} too large relative to input {names[d]} "
                               f"{spatial[d]}")
    if any(v < 0 for v in sizes):
        shape = tuple(int(v) for v in input.shape[:-k]) + tuple(sizes)
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: {_size_str(shape)}")
    x = input if input.dim() == k + 2 else _views.unsqueeze(input, 0)
    samples = _random_samples
    if samples.dtype is not input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to be 3D tensor, got: {samples.dim()}")
    if int(samples.shape[0]) < int(x.shape[0]):
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if int(samples.shape[1]) != int(x.shape[1]):
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if int(samples.shape[2]) != k:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {k}; got {int(samples.shape[2])}.")
    if not input.dtype.is_floating_point:
        _not_implemented(fn, input)
    with _no_grad():
        indices = _fractional_indices(x.detach(), kernel, sizes, samples)
    if input.dim() == k + 1:
        indices = _views.squeeze(indices, 0)
    values = _named_composite(f"FractionalMaxPool{k}DBackward0", _gather_at, input, indices, k)
    return (values, indices) if return_indices else values


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """torch.nn.functional.fractional_max_pool2d (Graham's fractional max pooling): per plane,
    windows of kernel_size starting at pseudo-random increasing positions drawn from
    _random_samples (uniform in [0, 1), one per plane and dim; torch.rand's when not given)."""
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """torch.nn.functional.fractional_max_pool3d (see fractional_max_pool2d)."""
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)

# --------------------------------------------------------------------------- the *_with_indices forms
def _with_indices(fn):
    def with_indices(input, *args, **kwargs):
        kwargs.pop("return_indices", None)      # (torch's take it and ignore it: the pair always)
        return fn(input, *args, return_indices=True, **kwargs)
    with_indices.__name__ = with_indices.__qualname__ = fn.__name__ + "_with_indices"
    with_indices.__doc__ = f"torch.nn.functional.{fn.__name__}_with_indices: {fn.__name__}'s (values, indices)."
    return with_indices


max_pool1d_with_indices = _with_indices(max_pool1d)
max_pool2d_with_indices = _with_indices(max_pool2d)
max_pool3d_with_indices = _with_indices(max_pool3d)
adaptive_max_pool1d_with_indices = _with_indices(adaptive_max_pool1d)
adaptive_max_pool2d_with_indices = _with_indices(adaptive_max_pool2d)
adaptive_max_pool3d_with_indices = _with_indices(adaptive_max_pool3d)
fractional_max_pool2d_with_indices = _with_indices(fractional_max_pool2d)
fractional_max_pool3d_with_indices = _with_indices(fractional_max_pool3d)


# --------------------------------------------------------------------------- public forms
# torch.max_pool1d/2d/3d, avg_pool1d, adaptive_avg_pool1d, adaptive_max_pool1d are torch functions
# too; the rest are nn.functional's only
for _name in ("max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d",
              "max_pool1d_with_indices"):
    declare(_name, globals()[_name], method=False, functional=True)
for _name in ("avg_pool2d", "avg_pool3d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool2d",
              "adaptive_max_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d", "lp_pool2d",
              "lp_pool3d", "fractional_max_pool2d", "fractional_max_pool3d", "max_pool2d_with_indices",
              "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
              "adaptive_max_pool3d_with_indices", "fractional_max_pool2d_with_indices",
              "fractional_max_pool3d_with_indices"):
    declare(_name, method=False, functional="own")
