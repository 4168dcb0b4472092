"""The public variants of the ops whose modules do not declare their own (ops/surface.py).

The pointwise ops declare theirs next to their table entries (ops/elementwise.py,
ops/pointwise.py); the reduction, view, copy, random, matmul, joining, indexing and factory
functions are declared here, by module, until their modules carry the declarations themselves.
tritensor/__init__.py and tritensor/_methods.py generate tt.* and Tensor's methods from these.
"""
from __future__ import annotations

from .. import dtypes as _dt
from ..tensor import Size, Tensor
from . import copy as _copy
from . import conv as _conv
from . import creation as _creation
from . import elementwise as _ew  # noqa: F401  (declares the arithmetic core)
from . import generators as _generators
from . import indexing as _indexing
from . import joining as _join
from . import linalg as _linalg
from . import nn as _nn
from . import padding as _padding
from . import pdist as _pdist
from . import pointwise as _pw  # noqa: F401  (declares the rest of the pointwise ops)
from . import pointwise_math as _pm
from . import random as _random
from . import reduce as _reduce
from . import scan as _scan
from . import softmax as _softmax
from . import views as _views
from . import view_copies as _view_copies
from ._overlap import assert_no_overlap, assert_no_partial_overlap
from .surface import declare, resize_, write_out

# --------------------------------------------------------------------------- reductions
declare("sum", _reduce.sum, out="dtype")
declare("mean", _reduce.mean, out="cast")
declare("prod", _reduce.prod, out="dtype")
declare("amax", _reduce.amax, out="amax")
declare("amin", _reduce.amin, out="amax")
declare("max", _reduce.max, out="cast")      # (values, indices) with dim: exact dtypes (surface.write_out)
declare("min", _reduce.min, out="cast")
declare("argmax", _reduce.argmax, out="exact")
declare("argmin", _reduce.argmin, out="exact")
declare("var", _reduce.var, out="cast")
declare("std", _reduce.std, out="cast")
declare("logsumexp", _reduce.logsumexp, out="floating")
declare("all", _reduce.all, out="bool")
declare("any", _reduce.any, out="bool")
declare("cumsum", _scan.cumsum, out="dtype")
declare("cumprod", _scan.cumprod, out="dtype")
declare("count_nonzero", _reduce.count_nonzero)
declare("softmax", _softmax.softmax, functional="own")
declare("log_softmax", _softmax.log_softmax, functional="own")
declare("sum_to_size", method=_reduce.sum_to_size)

# --------------------------------------------------------------------------- views
for _name in ("reshape", "permute", "flatten", "unflatten", "narrow", "select", "unbind", "diagonal",
              "diag_embed", "diagonal_scatter"):
    declare(_name, getattr(_views, _name))
# the in-place view ops (ops/view_copies.py): the tensor itself takes the view's geometry
for _name in ("t", "squeeze", "unsqueeze"):
    declare(_name, getattr(_views, _name), inplace=getattr(_view_copies, _name + "_"))
declare("as_strided", _views.as_strided, inplace=_view_copies.as_strided_, inplace_function=True)
declare("transpose", _views.transpose, aliases=("swapaxes", "swapdims"), inplace=_view_copies.transpose_)
declare("movedim", _views.movedim, aliases=("moveaxis",))
declare("view", method=_views.view)
declare("expand", method=_views.expand)
declare("unfold", method=_views.unfold, functional="own")   # F.unfold is im2col (nn/functional.py)
declare("view_as", method=lambda self, other: _views.view(self, other.shape))
declare("reshape_as", method=lambda self, other: _views.reshape(self, other.shape))
declare("expand_as", method=lambda self, other: _views.expand(self, other.shape))

# --------------------------------------------------------------------------- copies, devices, dtypes
declare("clone", _copy.clone)
declare("to", method=_copy.to)
declare("copy", method=False, inplace=_copy.copy_)
declare("fill", _pm.fill, method=False, inplace=_copy.fill_, inplace_function=True)   # tt.fill: ops/pointwise_math.py
declare("zero", method=False, inplace=_copy.zero_)
declare("resize", method=False, inplace=resize_)
declare("contiguous", method=_copy.contiguous)     # memory_format= (ops/copy.py)
declare("cpu", method=lambda self, memory_format=None: _copy.to(self, device="cpu", memory_format=memory_format))
declare("cuda", method=lambda self, device=None, non_blocking=False, memory_format=None: _copy.to(
    self, device="cuda" if device is None else (f"cuda:{device}" if isinstance(device, int) else device),
    non_blocking=non_blocking, memory_format=memory_format))
declare("pin_memory", method=_copy.pin_memory)
declare("is_pinned", method=_copy.is_pinned)
for _name, _dtype in {"float": _dt.float32, "double": _dt.float64, "half": _dt.float16,
                      "bfloat16": _dt.bfloat16, "int": _dt.int32, "long": _dt.int64,
                      "short": _dt.int16, "char": _dt.int8, "byte": _dt.uint8, "bool": _dt.bool_}.items():
    declare(_name, method=(lambda d: lambda self, memory_format=None: _copy.to(
        self, dtype=d, memory_format=memory_format))(_dtype))
declare("type_as", method=lambda self, other: _copy.to(self, dtype=other.dtype))

# --------------------------------------------------------------------------- random
declare("normal", _random.normal, method=False, inplace=_random.normal_)
declare("uniform", method=False, inplace=_random.uniform_)
for _name in ("exponential", "cauchy", "log_normal", "geometric"):      # Tensor.exponential_ ... only
    declare(_name, method=False, inplace=getattr(_generators, _name + "_"))
declare("random", method=False, inplace=_random.random_)
declare("bernoulli", _random.bernoulli, inplace=_random.bernoulli_)
declare("multinomial", _random.multinomial)
declare("randperm", _random.randperm, method=False)

# --------------------------------------------------------------------------- matrix multiplication
declare("matmul", _linalg.matmul, out="exact",
        operators=(("__matmul__", _linalg.matmul_operator), ("__rmatmul__", _linalg.rmatmul)))
declare("mm", _linalg.mm, out="exact")
# torch.spmm: mm under another name (a sparse or dense mat1, MmBackward0), a function only: no Tensor.spmm
declare("spmm", _linalg.mm, method=False, out="exact")
declare("bmm", _linalg.bmm, out="exact")
declare("addmm", _linalg.addmm, inplace=_linalg.addmm_, out="exact")
declare("baddbmm", _linalg.baddbmm, inplace=_linalg.baddbmm_, out="exact")
declare("dot", _linalg.dot, out="dot")
declare("mv", _linalg.mv, out="mv")
declare("outer", _linalg.outer, aliases=("ger",), out="cast")
declare("linear", method=False, functional="own")   # F.linear only (no torch.linear)
declare("native_layer_norm", _nn.native_layer_norm, method=False)
declare("vdot", _linalg.vdot, out="dot")
declare("addmv", _linalg.addmv, inplace=_linalg.addmv_, inplace_function=True, out="exact")
declare("addr", _linalg.addr, inplace=_linalg.addr_, out="cast")


def _addbmm_out(name, result, out):
    if out.dtype is not result.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_dt.type_name(out.dtype)} and "
                           f"{_dt.type_name(result.dtype)}")


declare("addbmm", _linalg.addbmm, inplace=_linalg.addbmm_, out=_addbmm_out)

# --------------------------------------------------------------------------- out= with overlap checks
# torch refuses an out= that shares memory with an input of gather, index_select, masked_select
# and cat (and stack, hstack, vstack, which are cat): these write out through write_out with the
# check, after out is resized, as torch's kernels assert it.
def _out_apart_from(*inputs, partial=()):
    def check(o):
        for t in inputs:
            if isinstance(t, Tensor):
                assert_no_overlap(o, t)
        for t in partial:
            assert_no_partial_overlap(o, t)
    return check


def gather(input, dim, index, *, sparse_grad=False, out=None):
    result = _indexing.gather(input, dim, index, sparse_grad=sparse_grad)
    if out is None:
        return result
    return write_out("gather", result, out, "exact", _out_apart_from(input, partial=(index,)))


def index_select(input, dim, index, *, out=None):
    result = _indexing.index_select(input, dim, index)
    if out is None:
        return result
    return write_out("index_select", result, out, "same_scalar_type", _out_apart_from(input, index))


def masked_select(input, mask, *, out=None):
    result = _indexing.masked_select(input, mask)
    if out is None:
        return result
    return write_out("masked_select", result, out, "same_scalar_type", _out_apart_from(input, mask))


def _joined(name, join):
    def fn(tensors, dim=0, *, out=None):
        result = join(tensors, dim)
        if out is None:
            return result
        inputs = tensors if isinstance(tensors, (list, tuple)) else ()
        return write_out(name, result, out, "cat", _out_apart_from(*inputs))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = join.__doc__
    return fn


def _stacked(name, join):
    def fn(tensors, *, out=None):
        result = join(tensors)
        if out is None:
            return result
        inputs = tensors if isinstance(tensors, (list, tuple)) else ()
        return write_out(name, result, out, "cat", _out_apart_from(*inputs))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = join.__doc__
    return fn


# --------------------------------------------------------------------------- joining, splitting
declare("cat", _joined("cat", _join.cat), method=False, aliases=("concat", "concatenate"))
declare("stack", _joined("stack", _join.stack), method=False)
for _name in ("hstack", "vstack", "row_stack"):
    declare(_name, _stacked(_name, getattr(_join, _name)), method=False)
for _name in ("split", "chunk", "tensor_split", "flip", "fliplr", "flipud"):
    declare(_name, getattr(_join, _name))
declare("split_with_sizes", method=_join.split_with_sizes)
declare("repeat", method=_join.repeat)          # torch has Tensor.repeat only
declare("roll", _join.roll)
declare("tril", _join.tril, inplace=_join.tril_, out="exact")
declare("triu", _join.triu, inplace=_join.triu_, out="exact")

# --------------------------------------------------------------------------- indexing
declare("index_select", index_select, method=_indexing.index_select)
declare("gather", gather, method=_indexing.gather)
declare("masked_select", masked_select, method=_indexing.masked_select)
def _nonzero_out_dtype(name, result, out):
    if out.dtype is not _dt.int64:
        raise RuntimeError(f"nonzero: Expected out tensor to have scalar type Long but got scalar type"
                           f"{_dt.type_name(out.dtype)}")      # (torch's text has no space there)


def nonzero(input, *, out=None, as_tuple=False):
    """torch.nonzero; ``out=`` (int64) only without as_tuple, as torch's."""
    if out is None:
        return _indexing.nonzero(input, as_tuple=as_tuple)
    if as_tuple:
        raise RuntimeError("nonzero does not support the out kwarg when as_tuple is True")
    return write_out("nonzero", _indexing.nonzero(input), out, _nonzero_out_dtype)


declare("nonzero", nonzero, method=_indexing.nonzero)
declare("take", _indexing.take)
declare("scatter", _indexing.scatter, inplace=_indexing.scatter_)
declare("scatter_add", _indexing.scatter_add, inplace=_indexing.scatter_add_)
declare("scatter_reduce", _indexing.scatter_reduce, inplace=_indexing.scatter_reduce_)
declare("index_put", _indexing.index_put, inplace=_indexing.index_put_)
declare("getitem", method=False, operators=(("__getitem__", lambda self, item: _indexing.getitem(self, item)),
                                            ("__setitem__", lambda self, item, value: _indexing.setitem(self, item, value))))
declare("pos", method=False, operators=(("__pos__", lambda self: self),))

# --------------------------------------------------------------------------- factories
for _name in ("as_tensor", "asarray", "empty_like", "from_dlpack", "from_numpy", "full_like", "ones_like",
              "rand_like", "randint_like", "randn_like", "tensor", "zeros_like"):
    declare(_name, getattr(_creation, _name), method=False)
# the factories torch gives out= (written in out's dtype, on out's device)
for _name in ("arange", "empty", "eye", "full", "linspace", "ones", "rand", "randint", "randn", "zeros"):
    declare(_name, getattr(_creation, _name), method=False, out="factory")
for _name in ("new_empty", "new_zeros", "new_ones", "new_full", "new_tensor"):
    declare(_name, method=getattr(_creation, _name))

# --------------------------------------------------------------------------- distances
declare("cdist", _pdist.cdist, method=False)
declare("pdist", _pdist.pdist, method=False, functional=True)

# --------------------------------------------------------------------------- convolutions, padding
for _name in ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"):
    declare(_name, getattr(_conv, _name), method=False, functional=True)
declare("convolution", _conv.convolution, method=False)
declare("constant_pad_nd", _padding.constant_pad_nd, method=False)
declare("pad", method=False, functional="own")     # F.pad only (torch has no torch.pad)


# --------------------------------------------------------------------------- small tt functions
def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(input) -> int:
    return input.numel()


def broadcast_shapes(*shapes):
    """torch.broadcast_shapes (torch._refs._broadcast_shapes): each shape a sequence of ints or
    one int (``(5, 1), 5``), None skipped; torch's errors, which name the mismatching argument."""
    shapes = [(s,) if isinstance(s, int) else s for s in shapes if s is not None]
    for shape in shapes:
        if not isinstance(shape, (tuple, list, Size)):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {shape}")
    common = [1] * max((len(s) for s in shapes), default=0)
    for arg_idx, shape in enumerate(shapes):
        for idx in range(-1, -1 - len(shape), -1):
            if shape[idx] == common[idx]:
                continue
            if common[idx] == 1:
                if shape[idx] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[idx] = shape[idx]
            if shape[idx] != 1 and common[idx] != shape[idx]:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {shape[idx]} at {idx}! Mismatching "
                                   f"argument at index {arg_idx} had {shape}; but expected shape should be "
                                   f"broadcastable to {common}")
    return Size(common)


declare("is_tensor", is_tensor, method=False)
declare("numel", numel, method=False)
declare("broadcast_shapes", broadcast_shapes, method=False)

# --------------------------------------------------------------------------- nn.functional's own
# Functions only nn/functional.py defines (losses, normalisation, dropout ...): declared here so the
# surface test knows every public name of tt.nn.functional.
for _name in ("leaky_relu", "layer_norm", "normalize", "mse_loss", "l1_loss", "smooth_l1_loss",
              "huber_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "nll_loss",
              "cross_entropy", "embedding", "embedding_bag", "dropout", "one_hot", "alpha_dropout", "feature_alpha_dropout",
              "dropout1d", "dropout2d", "dropout3d", "fold", "interpolate", "upsample", "upsample_nearest",
              "upsample_bilinear", "grid_sample", "affine_grid"):
    declare(_name, method=False, functional="own")
declare("leaky_relu_", method=False, functional="own")
declare("multi_head_attention_forward", method=False, functional="own")   # nn/_multi_head_attention.py
for _name in ("kl_div", "margin_ranking_loss", "hinge_embedding_loss", "multilabel_margin_loss", "soft_margin_loss",
              "multilabel_soft_margin_loss", "cosine_embedding_loss", "multi_margin_loss", "triplet_margin_loss",
              "triplet_margin_with_distance_loss", "poisson_nll_loss", "gaussian_nll_loss", "linear_cross_entropy",
              "ctc_loss"):
    declare(_name, method=False, functional="own")
for _name in ("hardtanh", "hardtanh_", "relu6"):
    declare(_name, method=False, functional="own")
