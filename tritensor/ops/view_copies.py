"""The view ops' copies and in-place forms, and the transposing attributes.

* ``*_copy`` (torch.diagonal_copy, permute_copy, view_copy ...): the view op's result copied
  into a new contiguous tensor, never a view; one node named as torch names it
  (``DiagonalBackward0_copy``, ``NarrowCopyBackward0``), whose gradient is the view's.
* in-place views (``t_``, ``transpose_``/``swapaxes_``/``swapdims_``, ``squeeze_``,
  ``unsqueeze_``, ``as_strided_``): the tensor itself takes the view's geometry; its history
  gets the view's node under torch's in-place name (TBackward1, SqueezeBackward3/4/5 ...) and its
  version moves, as torch's.
* ``Tensor.H``/``mH`` (real tensors: the transposes) and ``mT``/``T`` with torch's checks and
  deprecation warnings; ``resize_as_``; ``slice_tensor`` (aten.slice.Tensor: tt.ops.aten.slice).
"""
from __future__ import annotations

import warnings

from ..autograd import forward_ad as _forward_ad
from ..autograd.composite import named_composite
from ..memory_formats import contiguous_format, format_name
from ..tensor import Tensor, read_only
from . import _layout
from . import copy as _copy
from . import joining as _join
from . import views as _views
from ._checks import check_tensor
from ._shapes import wrap_dim
from .dispatch import check_inplace, dispatch
from .surface import declare, resize_
from .table import op


def _fresh(t):
    """A new contiguous tensor holding ``t``'s values (always a copy, even of a contiguous t)."""
    return _copy.clone(t, memory_format=contiguous_format)


def _copy_op(name, node, view):
    """torch's ``<view>_copy``: ``view(input, ...)`` copied, recorded as one node ``node``."""
    def run(input, *args, **kwargs):
        check_tensor(name, input)
        return named_composite(node, lambda x: _fresh(view(x, *args, **kwargs)), input)
    run.__name__ = run.__qualname__ = name
    run.__doc__ = f"torch.{name}: the result of the view op copied into a new tensor ({node})."
    return run


def _copies_op(name, node, views_of):
    """A ``*_copy`` of a view op with several results (split, unbind): each piece copied, each
    with its own ``node``."""
    def run(input, *args, **kwargs):
        check_tensor(name, input)
        count = len(views_of(input, *args, **kwargs))       # torch's checks, and the pieces' number
        return tuple(named_composite(node, lambda x, i=i: _fresh(views_of(x, *args, **kwargs)[i]), input)
                     for i in range(count))
    run.__name__ = run.__qualname__ = name
    return run


# --------------------------------------------------------------------------- slice, select, narrow
def slice_tensor(input, dim=0, start=None, end=None, step=1):
    """aten.slice.Tensor: input[..., start:end:step] along ``dim`` (a view, SliceBackward0);
    start/end wrap and clamp as Python's slices do; the step must be positive."""
    if input.dim() == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(int(dim), input.dim())
    if int(step) <= 0:
        raise RuntimeError("slice step must be positive")
    return _views.basic_index(input, (slice(None),) * d + (slice(start, end, int(step)),))


def _view_as_copy_arg(input, *shape):
    """view_copy(input, size) or view_copy(input, dtype): torch copies, so any layout may be
    reshaped (the shape must still hold the elements)."""
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int)):
        return _views.view(input, shape[0])           # the dtype overload
    return _views.reshape(input, *shape)


def _as_strided(input, size, stride, storage_offset=None):
    return _views.as_strided(input, size, stride, storage_offset)


def _squeeze_node(input, dim=None):
    if dim is None:
        return "SqueezeBackward0_copy"
    return "SqueezeBackward2_copy" if isinstance(dim, (tuple, list)) else "SqueezeBackward1_copy"


def squeeze_copy(input, dim=None):
    check_tensor("squeeze_copy", input)
    return named_composite(_squeeze_node(input, dim), lambda x: _fresh(_views.squeeze(x, dim)), input)


def view_copy(input, size):
    check_tensor("view_copy", input)
    if not isinstance(size, (tuple, list, int)):          # the dtype overload: no node, as torch's
        return _fresh(_views.view(input, size))
    return named_composite("ViewBackward0_copy", lambda x: _fresh(_view_as_copy_arg(x, size)), input)


def detach_copy(input):
    """torch.detach_copy: a new tensor with input's values, out of the graph (torch records an
    unimplemented node on it; tritensor's result simply does not require grad)."""
    check_tensor("detach_copy", input)
    return _fresh(input.detach())


alias_copy = _copy_op("alias_copy", "AliasBackward0_copy", lambda x: _views.basic_index(x, ()))
as_strided_copy = _copy_op("as_strided_copy", "AsStridedBackward0_copy", _as_strided)
diagonal_copy = _copy_op("diagonal_copy", "DiagonalBackward0_copy", _views.diagonal)
expand_copy = _copy_op("expand_copy", "ExpandBackward0_copy",
                       lambda x, size, *, implicit=False: _views.expand(x, tuple(size)))
def _narrow_for_copy(input, dim, start, length):
    # torch's narrow_copy checks a non-negative dim against the rank before wrapping it (a
    # negative one out of range is wrap's IndexError), with aten's raw check text
    if input.dim() and int(dim) >= input.dim():
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an enhancement request "
                           "to PyTorch.)")
    return _views.narrow(input, dim, start, length)


narrow_copy = _copy_op("narrow_copy", "NarrowCopyBackward0", _narrow_for_copy)
permute_copy = _copy_op("permute_copy", "PermuteBackward0_copy", lambda x, dims: _views.permute(x, tuple(dims)))
select_copy = _copy_op("select_copy", "SelectBackward0_copy", _views.select)
slice_copy = _copy_op("slice_copy", "SliceBackward0_copy", slice_tensor)
t_copy = _copy_op("t_copy", "TBackward0_copy", _views.t)
transpose_copy = _copy_op("transpose_copy", "TransposeBackward0_copy", _views.transpose)
unfold_copy = _copy_op("unfold_copy", "UnfoldBackward0_copy", _views.unfold)
unsqueeze_copy = _copy_op("unsqueeze_copy", "UnsqueezeBackward0_copy", _views.unsqueeze)
split_copy = _copies_op("split_copy", "SplitBackward0_copy",
                        lambda x, split_size, dim=0: _join.split(x, _int_split_size(split_size), dim))
split_with_sizes_copy = _copies_op("split_with_sizes_copy", "SplitWithSizesBackward0_copy",
                                   lambda x, split_sizes, dim=0: _join.split(x, list(split_sizes), dim))
unbind_copy = _copies_op("unbind_copy", "UnbindBackward0_copy", _views.unbind)


def _int_split_size(split_size):
    if not isinstance(split_size, int):
        raise TypeError(f"split_copy(): argument 'split_size' (position 2) must be int, not "
                        f"{type(split_size).__name__}")
    return split_size


# --------------------------------------------------------------------------- in-place views
def _inplace_entry(entry, grad_name, view=None):
    """The in-place form of a view entry: the same layout and backward, torch's node name."""
    return op(entry.name + "_", entry.args, view=view or entry.view, backward=entry.backward, grad_name=grad_name)


T_ = _inplace_entry(_views.T, "TBackward1")
TRANSPOSE_ = _inplace_entry(_views.TRANSPOSE, "TransposeBackward1")
UNSQUEEZE_ = _inplace_entry(_views.UNSQUEEZE, "UnsqueezeBackward1")
AS_STRIDED_ = _inplace_entry(_views.AS_STRIDED, "AsStridedBackward1")
# squeeze_'s three overloads are three nodes in torch (SqueezeBackward3/4/5): the name is an attribute
SQUEEZE_ = _inplace_entry(_views.SQUEEZE, lambda args, attrs: attrs["node"],
                          view=lambda x, dims, node: _views.SQUEEZE.view(x, dims))


def _restride_self(self, entry, **attrs):
    """self takes the geometry of view ``entry`` of itself; when recorded, its history is the
    view's node (whose edge is self's old history); its version moves, as torch's in-place
    view ops do."""
    check_inplace(self)
    view = dispatch(entry, self, **attrs)
    self._shape, self._stride, self._offset = view._shape, view._stride, view._offset
    self._host_array = None        # the cpu backend's cached view described the old geometry
    if view._grad_fn is not None:
        self._grad_fn, self._output_nr = view._grad_fn, 0
    if view._fw_tangent is not None:         # forward AD: the same view of the tangent
        _forward_ad.carry(view, self)
    self._version_counter.value += 1
    if self._view_version is not None:       # a view keeps the history just given to it
        self._view_version = self._version_counter.value
    return self


def t_(self):
    if self.dim() > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
    return _restride_self(self, T_)


def transpose_(self, dim0, dim1):
    return _restride_self(self, TRANSPOSE_, dim0=dim0, dim1=dim1)


def squeeze_(self, dim=None):
    if dim is None:
        return _restride_self(self, SQUEEZE_, dims=None, node="SqueezeBackward3")
    if isinstance(dim, (tuple, list)):
        return _restride_self(self, SQUEEZE_, dims=tuple(dim), node="SqueezeBackward5")
    return _restride_self(self, SQUEEZE_, dims=(dim,), node="SqueezeBackward4")


def unsqueeze_(self, dim):
    return _restride_self(self, UNSQUEEZE_, dim=dim)


def as_strided_(self, size, stride, storage_offset=None):
    offset = self.storage_offset() if storage_offset is None else int(storage_offset)
    return _restride_self(self, AS_STRIDED_, size=tuple(size), stride=tuple(stride), storage_offset=offset,
                          input_geometry=_views.geometry(self))


# --------------------------------------------------------------------------- T, mT, H, mH
_T_DEPRECATED = ("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and "
                 "it will throw an error in a future release. Consider `x.mT` to transpose batches of matrices "
                 "or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.")
_warned = set()


def _warn_once(key, message):
    """torch's TORCH_WARN_ONCE: the first time in the process only."""
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, UserWarning, stacklevel=3)


def T(self):
    """Tensor.T: the dims reversed (a permute view); torch's deprecation warnings (once) for a
    tensor that is not 2-D."""
    n = self.dim()
    if n == 0:
        _warn_once("T0", "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.")
    elif n != 2:
        _warn_once("T", _T_DEPRECATED)
    return _views.permute(self, tuple(reversed(range(n))))


def mT(self):
    if self.dim() < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {self.dim()}-D "
                           "tensor.")
    return _views.transpose(self, -2, -1)


def mH(self):
    """Tensor.mH: the conjugate transpose of the last two dims; for real tensors, mT."""
    if self.dim() < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. Got {self.dim()}-D "
                           "tensor.")
    return _views.transpose(self, -2, -1)


def H(self):
    """Tensor.H: the conjugate transpose of a matrix (real tensors: the transpose); a 0-d
    tensor is itself, with torch's deprecation warning."""
    n = self.dim()
    if n == 0:
        _warn_once("H0", "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().")
        return self
    if n != 2:
        hint = " For batches of matrices, consider using tensor.mH" if n > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor.{hint}")
    return _views.transpose(self, 0, 1)


# --------------------------------------------------------------------------- resize_as_
def resize_as_(self, the_template, memory_format=None):
    """Tensor.resize_as_: resize_ to the template's shape (self keeps its dtype); with a
    memory_format, restrided to it (preserve_format: the template's suggested format)."""
    if not isinstance(the_template, Tensor):
        raise TypeError(f"resize_as_(): argument 'the_template' (position 1) must be Tensor, not "
                        f"{type(the_template).__name__}")
    shape = tuple(the_template.shape)
    name = None
    if memory_format is not None:
        name = format_name(memory_format, "resize_as_")
        if name == _layout.PRESERVE:
            name = _layout.suggest_memory_format(the_template._shape, the_template._stride)
        _layout.check_rank(name, len(shape))
    resize_(self, shape)
    if name is not None:
        self._stride = tuple(_layout.format_strides(name, shape))
        self._host_array = None
    return self


# --------------------------------------------------------------------------- declarations
for _name in ("alias_copy", "as_strided_copy", "detach_copy", "diagonal_copy", "expand_copy", "permute_copy",
              "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy", "squeeze_copy", "t_copy",
              "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy", "view_copy"):
    declare(_name, globals()[_name], method=False, out="exact")


def _narrow_copy_out(name, result, out):
    if out.dtype is not result.dtype:
        raise RuntimeError("Expected self.dtype() == output.dtype() to be true, but got false.  (Could this error "
                           "message be improved?  If so, please report an enhancement request to PyTorch.)")


declare("narrow_copy", narrow_copy, out=_narrow_copy_out)
declare("resize_as", method=False, inplace=resize_as_, inplace_function=True)
declare("H", method=read_only(H, "H"))
declare("mH", method=read_only(mH, "mH"))
declare("mT", method=read_only(mT, "mT"))
declare("T", method=read_only(T, "T"))
