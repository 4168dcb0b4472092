"""tt.masked: torch.masked's masked reductions and normalizations (torch/masked/_ops.py), on
strided tensors.

Each function takes ``mask=`` (a tensor broadcastable to ``input``, read as bool; None: every
element is valid), replaces the masked-out elements by the operation's identity (sum 0, prod 1,
amax -inf or the integer dtype's minimum, amin +inf or its maximum, median NaN ...) and runs the
plain tritensor op: torch's own strided definition, so values, dtypes, the NaN of a fully
masked-out mean/var/median/softmax row and the error texts are torch 2.13's, and autograd (first
and second derivatives, every device) comes from the ops it is built on. No kernel, no backward
of its own.

Not taken up: sparse COO/CSR *inputs* (NotImplementedError; a sparse COO *mask* is densified, as
torch does for a strided input) and torch.masked.MaskedTensor (tt.masked.MaskedTensor,
masked_tensor and as_masked_tensor raise NotImplementedError).
"""
from __future__ import annotations

import math

from .. import dtypes as _dt
from .. import layouts as _layouts
from ..tensor import Tensor
from . import elementwise as _ew
from . import pointwise as _pw
from .activations import softmin as _softmin
from .creation import full, ones
from .norms import vector_norm
from .pointwise_math import logaddexp as _logaddexp
from .shape_ops import broadcast_to
from .softmax import log_softmax as _log_softmax
from .softmax import softmax as _softmax
from .sorting import nanmedian
from .surface import declare

# dtypes a masked sum/prod promotes to int64 when no dtype= is given (torch's list)
_PROMOTED = (_dt.uint8, _dt.bool_, _dt.int8, _dt.int16, _dt.int32)


def _check_input(name, input):
    # torch reads input.layout first: a non-tensor fails there with this AttributeError
    if not isinstance(input, Tensor):
        raise AttributeError(f"'{type(input).__name__}' object has no attribute 'layout'")
    if input.layout is not _layouts.strided:
        raise NotImplementedError(f"tt.masked.{name}: {input.layout} input is not supported (tritensor's masked "
                                  "operations take strided tensors; a sparse mask is accepted)")


def _identity(name, input, *args):
    """torch.masked._ops._reduction_identity: the fill value of masked-out elements, a 0-d
    tensor of input's dtype (None where torch defines none)."""
    dtype, device = input.dtype, input.device
    integer_ok = dtype.is_signed and not dtype.is_floating_point or dtype is _dt.uint8
    value = None
    if name in ("sum", "cumsum"):
        value = 0
    elif name in ("prod", "cumprod"):
        value = 1
    elif name in ("amax", "argmax", "logaddexp", "logsumexp"):
        if dtype.is_floating_point:
            value = -math.inf
        elif integer_ok:
            value = _dt.iinfo(dtype).min
    elif name in ("amin", "argmin"):
        if dtype.is_floating_point:
            value = math.inf
        elif integer_ok:
            value = _dt.iinfo(dtype).max
    elif name == "norm":
        ord = args[0] if args else 2
        if ord == -math.inf:
            if not dtype.is_floating_point:
                raise AssertionError(f"input must be floating point, got {dtype}")
            value = math.inf
        else:
            value = 0
    elif name == "median":
        return full((), math.nan, dtype=dtype if dtype.is_floating_point else _dt.float32, device=device)
    if value is None:
        raise NotImplementedError(f"identity of {name} on {dtype} input")
    return full((), value, dtype=dtype, device=device)


def _canonical_dim(dim, ndim):
    """The dims to reduce, sorted (torch.masked._ops._canonical_dim: () and None are all of them)."""
    if dim == () or dim is None:
        return tuple(range(ndim))
    ndim = max(ndim, 1)
    dims = []
    for d in (dim,) if isinstance(dim, int) else dim:
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})")
        dims.append(d % ndim)
    return tuple(sorted(dims))


def _input_mask(input, mask):
    """The mask as a bool tensor of input's shape (torch's _input_mask, strided input)."""
    if tuple(mask.shape) != tuple(input.shape):
        if mask.ndim > input.ndim:
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality higher than of the input)")
        if mask.layout is _layouts.strided:
            mask = broadcast_to(mask.clone(), input.shape)
    if mask.layout is not _layouts.strided:        # a sparse COO mask on a strided input
        mask = mask.to_dense()
        if tuple(mask.shape) != tuple(input.shape):
            mask = broadcast_to(mask, input.shape)
    return mask.to(dtype=_dt.bool_)


def _masked_input(name, input, mask, *args):
    """input with its masked-out elements replaced by the identity of ``name``."""
    if mask is None:
        return input
    return _ew.where(_input_mask(input, mask), input, _identity(name, input, *args))


def _sum_dtype(input, dtype):
    if dtype is None:
        dtype = _dt.int64 if input.dtype in _PROMOTED else input.dtype
    return dtype


# --------------------------------------------------------------------------- reductions
def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """torch.masked.sum: the sum of the valid elements (0 where none is); integer and bool
    inputs sum in int64 unless dtype= says otherwise."""
    _check_input("sum", input)
    dtype = _sum_dtype(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    return _masked_input("sum", input, mask).sum(dims, bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """torch.masked.prod: the product of the valid elements (1 where none is), one dim at a
    time from the last, as torch's strided path does."""
    _check_input("prod", input)
    dtype = _sum_dtype(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    result = _masked_input("prod", input, mask).to(dtype=dtype)
    for d in reversed(dims):
        result = result.prod(dim=d, keepdim=bool(keepdim))
    return result


def cumsum(input, dim, *, dtype=None, mask=None):
    """torch.masked.cumsum: masked-out elements count as 0 (the result keeps input's dtype)."""
    _check_input("cumsum", input)
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _masked_input("sum", input, mask).cumsum(d, dtype=dtype).to(dtype=dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    """torch.masked.cumprod: masked-out elements count as 1."""
    _check_input("cumprod", input)
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _masked_input("prod", input, mask).cumprod(d, dtype=dtype).to(dtype=dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """torch.masked.amax: -inf (an integer dtype's minimum) where every element is masked out."""
    _check_input("amax", input)
    dtype = input.dtype if dtype is None else dtype
    x = _masked_input("amax", input, mask)
    return x.amax(_canonical_dim(dim, x.ndim), bool(keepdim)).to(dtype=dtype)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """torch.masked.amin: +inf (an integer dtype's maximum) where every element is masked out."""
    _check_input("amin", input)
    dtype = input.dtype if dtype is None else dtype
    x = _masked_input("amin", input, mask)
    return x.amin(_canonical_dim(dim, x.ndim), bool(keepdim)).to(dtype=dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """torch.masked.argmax: the index among the valid elements, in input's dtype unless dtype=
    says otherwise (torch casts the indices so)."""
    _check_input("argmax", input)
    dtype = input.dtype if dtype is None else dtype
    return _masked_input("argmax", input, mask).argmax(dim, bool(keepdim)).to(dtype=dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """torch.masked.argmin: as argmax, over +inf fills."""
    _check_input("argmin", input)
    dtype = input.dtype if dtype is None else dtype
    return _masked_input("argmin", input, mask).argmin(dim, bool(keepdim)).to(dtype=dtype)


def _count(input, dim, keepdim, mask):
    """The number of valid elements per output element (int64), and the bool mask (or None)."""
    if mask is None:
        return sum(ones(input.shape, dtype=_dt.int64, device=input.device), dim, keepdim=keepdim), None
    inmask = _input_mask(input, mask)
    return inmask.sum(dim=dim, keepdim=bool(keepdim)), inmask


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """torch.masked.mean: sum / count of the valid elements (NaN where none is); the result
    dtype (input's, or dtype=) must be floating point."""
    _check_input("mean", input)
    source = "Optional"
    if dtype is None:
        dtype, source = input.dtype, "Input"
    if not dtype.is_floating_point:
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either "
                         f"a floating point or complex dtype. Got: {dtype}")
    count, inmask = _count(input, dim, keepdim, mask)
    total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask)
    return _ew.div(total, count)


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    """torch.masked.median: nanmedian over NaN fills (NaN where every element is masked out; an
    integer input then raises torch's ValueError). A floating input keeps its dtype whatever
    dtype= says, as in torch."""
    _check_input("median", input)
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    is_float = input.dtype.is_floating_point
    if not is_float:
        input = input.to(dtype=_dt.float32)
    output = nanmedian(_masked_input("median", input, mask), d, keepdim).values
    if is_float:
        return output
    if not bool(_pw.isnan(output).any()):
        return output.to(dtype=dtype)
    raise ValueError("masked median expects no fully masked out rows if dtype is not floating point")


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """torch.masked.logsumexp: over -inf fills (-inf where every element is masked out)."""
    _check_input("logsumexp", input)
    dtype = input.dtype if dtype is None else dtype
    dims = _canonical_dim(dim, input.ndim)
    return _masked_input("logsumexp", input, mask).logsumexp(dims, keepdim=keepdim).to(dtype=dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    """torch.masked.logaddexp: log(exp(input) + exp(other)), each operand's masked-out
    elements read as -inf."""
    _check_input("logaddexp", input)
    _check_input("logaddexp", other)
    dtype = input.dtype if dtype is None else dtype
    return _logaddexp(_masked_input("logaddexp", input, input_mask),
                      _masked_input("logaddexp", other, other_mask)).to(dtype=dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    """torch.masked.norm: linalg.vector_norm of the valid elements (masked-out ones read as 0;
    as +inf for ord=-inf)."""
    _check_input("norm", input)
    dtype = input.dtype if dtype is None else dtype
    x = _masked_input("norm", input, mask, ord)
    return vector_norm(x, ord, _canonical_dim(dim, input.ndim), bool(keepdim), dtype=dtype)


def _std_var(input, dim, unbiased, correction_opt, keepdim, dtype, mask, take_sqrt):
    """torch.masked._ops._std_var: the masked mean, the masked sum of squared deviations, over
    max(count - correction, 0)."""
    if unbiased is not None and correction_opt is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    correction = 1.0
    if unbiased is not None:
        correction = 1.0 if unbiased else 0.0
    if correction_opt is not None:
        correction = float(correction_opt)
    if dtype is None:
        dtype = input.dtype if input.dtype.is_floating_point else _dt.float32
    compute_dtype = dtype if dtype.is_floating_point else _dt.float32
    count, inmask = _count(input, dim, True, mask)
    sample_mean = _ew.div(sum(input, dim, keepdim=True, dtype=dtype, mask=inmask), count)
    x = _ew.sub(input, sample_mean)
    total = sum(_ew.mul(x, x), dim, keepdim=keepdim, dtype=compute_dtype, mask=inmask)
    if not keepdim:
        count = count.reshape(total.shape)
    if correction != 0:
        count = _ew.sub(count.to(compute_dtype), correction)
        count = _ew.maximum(count, count.new_zeros([]))
    output = _ew.div(total, count).to(dtype=dtype)
    return _ew.sqrt(output) if take_sqrt else output


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    """torch.masked.var: the sample variance of the valid elements (Bessel's correction unless
    unbiased=False or correction= says otherwise; NaN where no element is valid)."""
    _check_input("var", input)
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt=False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    """torch.masked.std: the square root of torch.masked.var."""
    _check_input("std", input)
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt=True)


# --------------------------------------------------------------------------- normalizations
def softmax(input, dim, *, dtype=None, mask=None):
    """torch.masked.softmax: masked-out elements read as -inf (0 in the result; a row with no
    valid element is NaN)."""
    _check_input("softmax", input)
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _softmax(_masked_input("amax", input, mask), d, dtype=dtype)


def log_softmax(input, dim, *, dtype=None, mask=None):
    """torch.masked.log_softmax: masked-out elements read as -inf (-inf in the result)."""
    _check_input("log_softmax", input)
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _log_softmax(_masked_input("amax", input, mask), d, dtype=dtype)


def softmin(input, dim, *, dtype=None, mask=None):
    """torch.masked.softmin: masked-out elements read as +inf (0 in the result)."""
    _check_input("softmin", input)
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return _softmin(_masked_input("amin", input, mask), d, dtype=dtype)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    """torch.masked.normalize: input / max(masked norm, eps) along dim, masked-out elements 0."""
    _check_input("normalize", input)
    dtype = input.dtype if dtype is None else dtype
    x = _masked_input("sum", input, mask)
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return _ew.div(x, _ew.maximum(nrm, nrm.new_full([], eps)))


# --------------------------------------------------------------------------- MaskedTensor
def _no_masked_tensor(*args, **kwargs):
    raise NotImplementedError("torch.masked.MaskedTensor is not implemented in tritensor: pass the mask to "
                              "the tt.masked functions (mask=) instead")


def masked_tensor(data, mask, requires_grad=False):
    """torch.masked.masked_tensor: not implemented (tritensor has no MaskedTensor)."""
    _no_masked_tensor()


def as_masked_tensor(data, mask):
    """torch.masked.as_masked_tensor: not implemented (tritensor has no MaskedTensor)."""
    _no_masked_tensor()


class MaskedTensor:
    """torch.masked.MaskedTensor: not implemented; constructing one raises NotImplementedError."""

    def __new__(cls, *args, **kwargs):
        _no_masked_tensor()


for _fn in (sum, prod, cumsum, cumprod, amax, amin, argmax, argmin, mean, median, logsumexp, logaddexp,
            norm, var, std, softmax, log_softmax, softmin, normalize, masked_tensor, as_masked_tensor):
    declare("masked." + _fn.__name__, _fn, method=False)
