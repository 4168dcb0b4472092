"""Shape and construction ops (issue 21 item 5) against torch 2.13's recorded behaviour: error
texts word for word, grad_fn names, which results are views (and of what), version counters,
the in-place view ops, warnings, the dtype matrix on cpu, and the composites' gradients
(gradcheck and gradgradcheck on cpu: tests/opinfo_shape.py's COMPOSITE_GRAD_CASES).

Values are checked against NumPy's own functions and hand-computed results; the expectations
(messages, names, strides) were read from torch 2.13 and are written here as literals.
"""
import warnings

import numpy as np
import pytest

import tritensor as tt
from opinfo_shape import COMPOSITE_GRAD_CASES
from tritensor.autograd import gradcheck, gradgradcheck

ALL = (tt.bool, tt.uint8, tt.int8, tt.int16, tt.int32, tt.int64, tt.float16, tt.bfloat16, tt.float32, tt.float64)


def _x(shape=(2, 3), requires_grad=True, dtype=tt.float32):
    v = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) - 2
    return tt.tensor(v, dtype=dtype, requires_grad=requires_grad)


def _np(t):
    return t.detach().cpu().float().numpy() if t.dtype is tt.bfloat16 else t.detach().cpu().numpy()


# --------------------------------------------------------------------------- gradients (cpu)
@pytest.mark.parametrize("name", sorted(COMPOSITE_GRAD_CASES))
def test_composite_gradients(name):
    fn, inputs, kwargs = COMPOSITE_GRAD_CASES[name]("cpu")
    assert gradcheck(fn, inputs, **kwargs)
    assert gradgradcheck(fn, inputs, **kwargs)


# --------------------------------------------------------------------------- errors, word for word
X, V, S = _x(), _x((4,)), _x(())
ERRORS = [
    (lambda: tt.broadcast_to(X, (3, 3)), RuntimeError, "The expanded size of the tensor (3) must match the existing "
     "size (2) at non-singleton dimension 0.  Target sizes: [3, 3].  Tensor sizes: [2, 3]"),
    (lambda: tt.broadcast_to(X, 5), TypeError, "broadcast_to(): argument 'size' (position 2) must be tuple of ints, "
     "not int"),
    (lambda: tt.broadcast_tensors(X, V), RuntimeError, "The size of tensor a (3) must match the size of tensor b (4) "
     "at non-singleton dimension 1"),
    (lambda: tt.broadcast_tensors([X, V]), TypeError, "expected Tensor as element 0 in argument 0, but got list"),
    (lambda: tt.atleast_1d(5), TypeError, "atleast_1d() received an invalid combination of arguments - got (int), "
     "but expected one of:\n * (Tensor input)\n * (tuple of Tensors tensors)\n"),
    (lambda: tt.hsplit(X, 2), RuntimeError, "torch.hsplit attempted to split along dimension 1, but the size of the "
     "dimension 3 is not divisible by the split_size 2!"),
    (lambda: tt.hsplit(S, 2), RuntimeError, "torch.hsplit requires a tensor with at least 1 dimension, but got a "
     "tensor with 0 dimensions!"),
    (lambda: tt.hsplit(X, 0), RuntimeError, "torch.hsplit attempted to split along dimension 1, but the size of the "
     "dimension 3 is not divisible by the split_size 0!"),
    (lambda: tt.hsplit(X, -1), RuntimeError, "number of sections must be larger than 0, got -1"),
    (lambda: tt.vsplit(V, 2), RuntimeError, "torch.vsplit requires a tensor with at least 2 dimension, but got a "
     "tensor with 1 dimensions!"),
    (lambda: tt.vsplit(X, 3), RuntimeError, "torch.vsplit attempted to split along dimension 0, but the size of the "
     "dimension 2 is not divisible by the split_size 3!"),
    (lambda: tt.dsplit(X, 1), RuntimeError, "torch.dsplit requires a tensor with at least 3 dimension, but got a "
     "tensor with 2 dimensions!"),
    (lambda: tt.column_stack([]), RuntimeError, "column_stack expects a non-empty TensorList"),
    (lambda: tt.dstack([]), RuntimeError, "dstack expects a non-empty TensorList"),
    (lambda: tt.tile(X, (-1,)), RuntimeError, "Trying to create tensor with negative dimension -3: [2, -3]"),
    (lambda: tt.tile(X, 2), TypeError, "tile(): argument 'dims' (position 2) must be tuple of ints, not int"),
    (lambda: tt.rot90(X, 1, [0, 0]), RuntimeError, "expected rotation dims to be different, but got dim0 = 0 and "
     "dim1 = 0"),
    (lambda: tt.rot90(X, 1, [0, -2]), RuntimeError, "expected rotation dims to be different, but got dim0 = 0 and "
     "dim1 = -2"),
    (lambda: tt.rot90(X, 1, [0]), RuntimeError, "expected total rotation dims == 2, but got dims = 1"),
    (lambda: tt.rot90(V, 1), RuntimeError, "expected total dims >= 2, but got total dims = 1"),
    (lambda: tt.rot90(X, 1, [0, 2]), IndexError, "Dimension out of range (expected to be in range of [-2, 1], but "
     "got 2)"),
    (lambda: tt.kron(X, 5), TypeError, "kron(): argument 'other' (position 2) must be Tensor, not int"),
    (lambda: tt.block_diag(_x((2, 2, 2))), RuntimeError, "torch.block_diag: Input tensors must have 2 or fewer "
     "dimensions. Input 0 has 3 dimensions"),
    (lambda: tt.block_diag(X, 5), TypeError, "expected Tensor as element 1 in argument 0, but got int"),
    (lambda: tt.cartesian_prod(X), RuntimeError, "Expect a 1D vector, but got shape [2, 3]"),
    (lambda: tt.cartesian_prod(V, V.int()), RuntimeError, "meshgrid expects all tensors to have the same dtype"),
    (lambda: tt.cartesian_prod(), RuntimeError, "meshgrid expects a non-empty TensorList"),
    (lambda: tt.combinations(X), RuntimeError, "Expect a 1D vector, but got shape [2, 3]"),
    (lambda: tt.combinations(S), RuntimeError, "Expect a 1D vector, but got shape []"),
    (lambda: tt.combinations(V, -1), RuntimeError, "Expect a non-negative number, but got -1"),
    (lambda: tt.combinations(V, r=2.0), TypeError, "combinations(): argument 'r' must be int, not float"),
    (lambda: tt.meshgrid(indexing="ij"), RuntimeError, "meshgrid expects a non-empty TensorList"),
    (lambda: tt.meshgrid(V, indexing="foo"), RuntimeError, 'torch.meshgrid: indexing must be one of "xy" or "ij", '
     "but received: foo"),
    (lambda: tt.meshgrid(V, X, indexing="ij"), RuntimeError, "torch.meshgrid: Expected 0D or 1D tensor in the tensor "
     "list but got: [ CPUFloatType{2,3} ]"),
    (lambda: tt.diag(S), RuntimeError, "diag(): Supports 1D or 2D tensors. Got 0D"),
    (lambda: tt.diag(_x((2, 2, 2))), RuntimeError, "diag(): Supports 1D or 2D tensors. Got 3D"),
    (lambda: tt.repeat_interleave(X, tt.tensor([1, 2])), RuntimeError, "repeats must have the same size as input "
     "along dim, but got repeats.size(0) = 2 and input.size(0) = 6"),
    (lambda: tt.repeat_interleave(tt.tensor([1, 2, 3]), output_size=5), RuntimeError,
     "allocated size does not match required size"),
    (lambda: tt.repeat_interleave(tt.tensor([1, -2, 3])), RuntimeError, "repeats can not be negative"),
    (lambda: tt.repeat_interleave(tt.tensor([[1, 2, 3]])), RuntimeError,
     "repeat_interleave only accept 1D vector as repeat"),
    (lambda: tt.repeat_interleave(tt.tensor([1.0, 2.0])), NotImplementedError,
     "\"repeat_interleave_cpu\" not implemented for 'Float'"),
    (lambda: tt.repeat_interleave(X, -1), RuntimeError, "Repeats must be non-negative"),
    (lambda: tt.repeat_interleave(X, tt.tensor([1, -2]), dim=0), RuntimeError, "repeats can not be negative"),
    (lambda: tt.repeat_interleave(X, tt.tensor([[1, 2]]), dim=0), RuntimeError,
     "repeats must be 0-dim or 1-dim tensor"),
    (lambda: tt.repeat_interleave(X, 2, dim=0, output_size=5), RuntimeError,
     "repeat_interleave: Invalid output_size, expected 4 but got 5"),
    (lambda: tt.repeat_interleave(S, 3, dim=0), IndexError, "Dimension out of range (expected to be in range of "
     "[-1, 0], but got 1)"),
    (lambda: tt.narrow_copy(X, 1, 2, 2), RuntimeError, "start (2) + length (2) exceeds dimension size (3)."),
    (lambda: tt.narrow(X, 1, 4, 0), IndexError, "start out of range (expected to be in range of [-3, 3], but got 4)"),
    (lambda: tt.narrow(S, 0, 0, 1), RuntimeError, "narrow() cannot be applied to a 0-dim tensor."),
    (lambda: tt.select_copy(X, 1, 5), IndexError, "select(): index 5 out of range for tensor of size [2, 3] at "
     "dimension 1"),
    (lambda: tt.select(S, 0, 0), IndexError, "select() cannot be applied to a 0-dim tensor."),
    (lambda: tt.slice_copy(X, 1, 0, 3, 0), RuntimeError, "slice step must be positive"),
    (lambda: tt.ops.aten.slice(S), IndexError, "slice() cannot be applied to a 0-dim tensor."),
    (lambda: tt.t_copy(_x((2, 2, 2))), RuntimeError, "t() expects a tensor with <= 2 dimensions, but self is 3D"),
    (lambda: tt.as_strided_copy(X, (2, 2), (1, 2), 100), RuntimeError, "setStorage: sizes [2, 2], strides [1, 2], "
     "storage offset 100, and itemsize 4 requiring a storage size of 416 are out of bounds for storage of size 24"),
    (lambda: tt.unfold_copy(V, 0, 5, 1), RuntimeError, "maximum size for tensor at dimension 0 is 4 but size is 5"),
    (lambda: tt.diagonal_copy(X, 0, 0, 0), RuntimeError, "diagonal dimensions cannot be identical 0, 0"),
    (lambda: tt.split_copy(X, [1, 2], 1), TypeError, "split_copy(): argument 'split_size' (position 2) must be int, "
     "not list"),
    (lambda: _x().t_(), RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation."),
    (lambda: _x((2, 2, 2), False).t_(), RuntimeError, "t_() expects a tensor with <= 2 dimensions, but self is 3D"),
    (lambda: V.H, RuntimeError, "tensor.H is only supported on matrices (2-D tensors). Got 1-D tensor."),
    (lambda: _x((2, 3, 4)).H, RuntimeError, "tensor.H is only supported on matrices (2-D tensors). Got 3-D tensor. "
     "For batches of matrices, consider using tensor.mH"),
    (lambda: V.mH, RuntimeError, "tensor.mH is only supported on matrices or batches of matrices. Got 1-D tensor."),
    (lambda: V.mT, RuntimeError, "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor."),
    (lambda: (X * 1).resize_as_(_x((4, 4))), RuntimeError, "cannot resize variables that require grad"),
    (lambda: _x(requires_grad=False).resize_as_(5), TypeError, "resize_as_(): argument 'the_template' (position 1) "
     "must be Tensor, not int"),
    (lambda: _x(requires_grad=False).resize_as_(_x((4, 4)), memory_format=tt.channels_last), RuntimeError,
     "required rank 4 tensor to use channels_last format"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_are_torchs(case):
    fn, kind, message = ERRORS[case]
    with pytest.raises(kind) as info:
        fn()
    assert str(info.value) == message


def test_attributes_are_read_only():
    for name in ("H", "mH", "mT", "T"):
        with pytest.raises(AttributeError, match=f"^attribute '{name}' of 'torch._C.TensorBase' objects is not writable$"):
            setattr(X, name, X)


# --------------------------------------------------------------------------- grad_fn names, views
NODES = [   # (expression, torch 2.13's grad_fn name, result is a view of the input; None: it shares the
            # input's memory without being tracked as a view, as torch's unsafe_split)
    (lambda x, v, s: tt.broadcast_to(x, (4, 2, 3)), "ExpandBackward0", True),
    (lambda x, v, s: tt.atleast_1d(s), "ViewBackward0", True),
    (lambda x, v, s: tt.atleast_2d(v), "UnsqueezeBackward0", True),
    (lambda x, v, s: tt.atleast_3d(x), "UnsqueezeBackward0", True),
    (lambda x, v, s: tt.hsplit(x, 3)[1], "SliceBackward0", True),
    (lambda x, v, s: tt.column_stack([v, v]), "CatBackward0", False),
    (lambda x, v, s: tt.dstack([x, x]), "CatBackward0", False),
    (lambda x, v, s: tt.ravel(x.t()), "ViewBackward0", True),
    (lambda x, v, s: tt.swapdims(x, 0, 1), "TransposeBackward0", True),
    (lambda x, v, s: x.tile(2, 1), "RepeatBackward0", False),
    (lambda x, v, s: tt.rot90(x), "Rot90Backward0", False),
    (lambda x, v, s: tt.kron(x, v), "UnsafeViewBackward0", False),
    (lambda x, v, s: tt.block_diag(x, v, s), "BlockDiagBackward0", False),
    (lambda x, v, s: tt.cartesian_prod(v, v[:2]), "StackBackward0", False),
    (lambda x, v, s: tt.combinations(v), "StackBackward0", False),
    (lambda x, v, s: tt.meshgrid(v, v[:2], indexing="xy")[0], "ExpandBackward0", True),
    (lambda x, v, s: tt.diag(v, 1), "DiagEmbedBackward0", False),
    (lambda x, v, s: tt.diag(x), "DiagonalBackward0_copy", False),
    (lambda x, v, s: tt.diagflat(x, -2), "DiagEmbedBackward0", False),
    (lambda x, v, s: tt.repeat_interleave(x, 2), "ViewBackward0", True),
    (lambda x, v, s: tt.repeat_interleave(x, tt.tensor([1, 2]), dim=0), "IndexSelectBackward0", False),
    (lambda x, v, s: tt.unsafe_split(x, 2, 1)[0], "UnsafeSplitBackward0", None),
    (lambda x, v, s: tt.unsafe_chunk(x, 2, 1)[1], "UnsafeSplitBackward0", None),
    (lambda x, v, s: tt.unsafe_split_with_sizes(x, [1, 2], 1)[1], "UnsafeSplitWithSizesBackward0", None),
    (lambda x, v, s: tt.alias_copy(x), "AliasBackward0_copy", False),
    (lambda x, v, s: tt.as_strided_copy(x, (2, 2), (1, 2)), "AsStridedBackward0_copy", False),
    (lambda x, v, s: tt.diagonal_copy(x, 1, 1, 0), "DiagonalBackward0_copy", False),
    (lambda x, v, s: tt.expand_copy(v, (2, 4)), "ExpandBackward0_copy", False),
    (lambda x, v, s: x.narrow_copy(1, -1, 1), "NarrowCopyBackward0", False),
    (lambda x, v, s: tt.permute_copy(x, (1, 0)), "PermuteBackward0_copy", False),
    (lambda x, v, s: tt.select_copy(x, 0, 1), "SelectBackward0_copy", False),
    (lambda x, v, s: tt.slice_copy(x, 1, 0, 3, 2), "SliceBackward0_copy", False),
    (lambda x, v, s: tt.split_copy(x, 2, 1)[1], "SplitBackward0_copy", False),
    (lambda x, v, s: tt.split_with_sizes_copy(x, [1, 2], 1)[0], "SplitWithSizesBackward0_copy", False),
    (lambda x, v, s: tt.squeeze_copy(x[None]), "SqueezeBackward0_copy", False),
    (lambda x, v, s: tt.squeeze_copy(x[None], 0), "SqueezeBackward1_copy", False),
    (lambda x, v, s: tt.squeeze_copy(x[None], (0, 2)), "SqueezeBackward2_copy", False),
    (lambda x, v, s: tt.t_copy(v), "TBackward0_copy", False),
    (lambda x, v, s: tt.transpose_copy(x, 0, 1), "TransposeBackward0_copy", False),
    (lambda x, v, s: tt.unbind_copy(x, 1)[2], "UnbindBackward0_copy", False),
    (lambda x, v, s: tt.unfold_copy(v, 0, 2, 1), "UnfoldBackward0_copy", False),
    (lambda x, v, s: tt.unsqueeze_copy(x, 1), "UnsqueezeBackward0_copy", False),
    (lambda x, v, s: tt.view_copy(x.t(), (6,)), "ViewBackward0_copy", False),
    (lambda x, v, s: tt.ops.aten.slice.Tensor(x, 1, 0, 3, 2), "SliceBackward0", True),
    (lambda x, v, s: x.H, "TransposeBackward0", True),
    (lambda x, v, s: x.mH, "TransposeBackward0", True),
]


@pytest.mark.parametrize("case", range(len(NODES)))
def test_nodes_and_views_are_torchs(case):
    fn, node, is_view = NODES[case]
    x, v, s = _x(), _x((4,)), _x(())
    out = fn(x, v, s)
    assert type(out.grad_fn).__name__ == node
    assert (out._base is not None) == bool(is_view)
    if is_view is False:        # copies never share the input's memory
        assert all(out._storage is not t._storage for t in (x, v, s))


def test_strides_are_torchs():
    x = _x(requires_grad=False)
    assert tt.broadcast_to(x, (4, 2, 3)).stride() == (0, 3, 1)
    assert tt.rot90(x).stride() == (1, 3) and tt.rot90(x, 2).stride() == (3, 1)
    assert tt.permute_copy(x, (1, 0)).stride() == (2, 1)          # a copy is contiguous
    assert tt.unsqueeze_copy(x, 1).stride() == (3, 3, 1)
    grids = tt.meshgrid(_x((4,), False), _x((2,), False), _x((3,), False), indexing="xy")
    assert [g.stride() for g in grids] == [(0, 1, 0), (1, 0, 0), (0, 0, 1)]
    assert tt.broadcast_tensors(x, _x((3,), False))[0] is x     # already the shape: the tensor itself
    assert tt.atleast_2d(x) is x and tt.cartesian_prod(_x((3,), False)).shape == (3,)


def test_unsafe_split_pieces_are_not_views():
    x = _x() * 1
    pieces = tt.unsafe_split(x, 2, 1)
    assert all(p._base is None for p in pieces) and pieces[0]._storage is x._storage
    pieces[0].mul_(2)          # an ordinary in-place op: x sees it (same memory), no CopySlices
    assert type(pieces[0].grad_fn).__name__ == "MulBackward0"
    assert x[0, 0].item() == -4.0


# --------------------------------------------------------------------------- in-place views
def test_inplace_view_ops_restride_self_and_record_torchs_nodes():
    x = _x()
    y = x * 1
    assert y.t_() is y and y.shape == (3, 2) and y.stride() == (1, 3) and y._version == 1
    assert type(y.grad_fn).__name__ == "TBackward1"
    assert type(y.grad_fn.next_functions[0][0]).__name__ == "MulBackward0"
    y.unsqueeze_(0)
    assert y.shape == (1, 3, 2) and type(y.grad_fn).__name__ == "UnsqueezeBackward1"
    for arg, node in ((None, "SqueezeBackward3"), (0, "SqueezeBackward4"), ((0,), "SqueezeBackward5")):
        z = (x * 1).unsqueeze(0)
        z.squeeze_() if arg is None else z.squeeze_(arg)
        assert z.shape == (2, 3) and type(z.grad_fn).__name__ == node
    for method in ("transpose_", "swapaxes_", "swapdims_"):
        z = x * 1
        getattr(z, method)(0, 1)
        assert z.shape == (3, 2) and type(z.grad_fn).__name__ == "TransposeBackward1"
    z = x * 1
    tt.as_strided_(z, (2, 2), (1, 2))
    assert z.tolist() == [[-2.0, 0.0], [-1.0, 1.0]] and type(z.grad_fn).__name__ == "AsStridedBackward1"
    (z * tt.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    # z reads storage elements 0, 2, 1, 3 (row by row): their gradients are the weights there
    np.testing.assert_array_equal(_np(x.grad), [[1.0, 3.0, 2.0], [4.0, 0.0, 0.0]])


def test_inplace_view_of_a_view_stays_a_view():
    base = _x() * 1
    v = base[0:2]
    v.t_()
    assert v._base is base and type(v.grad_fn).__name__ == "TBackward1"
    weights = tt.arange(6.0).view(3, 2)
    x = base.grad_fn.next_functions[0][0]     # (the leaf's accumulator)
    (v * weights).sum().backward()
    leaf = x.variable
    np.testing.assert_array_equal(_np(leaf.grad), [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]])
    base.mul_(2)       # the base changes in place: the view's history is regenerated from it
    assert type(v.grad_fn).__name__ == "AsStridedBackward0"


def test_inplace_view_ops_without_grad():
    x = _x(requires_grad=False)
    x.t_()
    assert x.shape == (3, 2) and x.grad_fn is None and x.tolist() == [[-2.0, 1.0], [-1.0, 2.0], [0.0, 3.0]]


def test_T_and_H_warn_as_torch_once():
    import tritensor.ops.view_copies as vc
    vc._warned.clear()
    with pytest.warns(UserWarning, match=r"^The use of `x.T` on tensors of dimension other than 2"):
        assert _x((2, 3, 4)).T.shape == (4, 3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _x((4,)).T.shape == (4,)          # TORCH_WARN_ONCE: not again
        assert _x().T.shape == (3, 2)
    with pytest.warns(UserWarning, match=r"^Tensor.T is deprecated on 0-D tensors. This function is the identity"):
        assert type(S.T.grad_fn).__name__ == "PermuteBackward0"
    with pytest.warns(UserWarning, match=r"^Tensor.H is deprecated on 0-D tensors. Consider using x.conj\(\).$"):
        assert S.H is S


def test_resize_as_():
    x = _x(requires_grad=False)
    assert x.resize_as_(_x((4, 4), False, dtype=tt.int32)) is x and x.shape == (4, 4) and x.dtype is tt.float32
    assert x.stride() == (4, 1) and x.reshape(-1)[:6].tolist() == [-2.0, -1.0, 0.0, 1.0, 2.0, 3.0]
    y = _x((2, 3), False)
    tt.resize_as_(y, _x((3,), False))
    assert y.tolist() == [-2.0, -1.0, 0.0]
    z = _x((2, 3), False)
    z.resize_as_(tt.zeros(4, 4, 2, 2), memory_format=tt.channels_last)
    assert z.stride() == (16, 1, 8, 4)
    w = _x((2, 3), False)
    w.resize_as_(tt.zeros(4, 4, 2, 2).permute(0, 2, 3, 1), memory_format=tt.preserve_format)
    assert w.shape == (4, 2, 2, 4) and w.stride() == (16, 8, 4, 1)


# --------------------------------------------------------------------------- values (hand-computed)
def test_values():
    a = tt.tensor([[1, 2], [3, 4]])
    assert tt.kron(a, tt.tensor([1, 10])).tolist() == [[1, 10, 2, 20], [3, 30, 4, 40]]
    assert tt.kron(a.int(), tt.tensor([True, False])).dtype is tt.int32
    assert tt.kron(a, tt.tensor([0.5])).dtype is tt.float32
    assert tt.rot90(a).tolist() == [[2, 4], [1, 3]] and tt.rot90(a, -1).tolist() == [[3, 1], [4, 2]]
    assert tt.rot90(a, 4).tolist() == [[1, 2], [3, 4]] and tt.rot90(a, 4)._storage is not a._storage
    assert tt.block_diag(tt.tensor([[1, 2]]), tt.tensor(3), tt.tensor([4.5, 5])).tolist() == [
        [1, 2, 0, 0, 0], [0, 0, 3, 0, 0], [0, 0, 0, 4.5, 5]]
    empty = tt.block_diag()
    assert empty.shape == (1, 0) and empty.dtype is tt.float32
    assert tt.block_diag(_x((2, 3), False), tt.zeros(0)).shape == (3, 3)
    assert tt.combinations(tt.tensor([1, 2, 3]), 2, with_replacement=True).tolist() == [
        [1, 1], [1, 2], [1, 3], [2, 2], [2, 3], [3, 3]]
    assert tt.combinations(tt.tensor([1, 2]), 0).shape == (0,)
    assert tt.combinations(tt.tensor([1, 2]), 3).shape == (0, 3)
    assert tt.cartesian_prod(tt.tensor([1, 2]), tt.tensor([3, 4])).tolist() == [[1, 3], [1, 4], [2, 3], [2, 4]]
    assert tt.repeat_interleave(tt.tensor([2, 0, 3], dtype=tt.int32)).tolist() == [0, 0, 2, 2, 2]
    assert tt.repeat_interleave(tt.tensor([2, 0, 3], dtype=tt.int32)).dtype is tt.int32
    assert tt.repeat_interleave(tt.tensor([0, 0])).shape == (0,)
    assert tt.repeat_interleave(tt.tensor([], dtype=tt.int64)).shape == (0,)
    assert tt.repeat_interleave(tt.tensor([1, 2, 3]), output_size=6).tolist() == [0, 1, 1, 2, 2, 2]
    assert tt.repeat_interleave(a, tt.tensor(2), dim=1).tolist() == [[1, 1, 2, 2], [3, 3, 4, 4]]
    assert tt.repeat_interleave(S, 3).shape == (3,) and tt.repeat_interleave(a, 0, dim=1).shape == (2, 0)
    assert tt.diag(tt.tensor([1, 2]), -1).tolist() == [[0, 0, 0], [1, 0, 0], [0, 2, 0]]
    assert tt.diag(a, 5).shape == (0,)
    assert tt.diagflat(tt.tensor(7)).tolist() == [[7]]
    assert tt.column_stack([tt.tensor(1), tt.tensor(2)]).tolist() == [[1, 2]]
    assert tt.dstack([tt.tensor(1), tt.tensor(2)]).shape == (1, 1, 2)
    assert [t.tolist() for t in tt.hsplit(tt.arange(6).view(2, 3), (1, 2))] == [[[0], [3]], [[1], [4]], [[2], [5]]]
    assert [t.shape for t in tt.unsafe_chunk(tt.zeros(0, 2), 3)] == [(0, 2)] * 3
    assert tt.tile(tt.tensor([1, 2]), ()).tolist() == [1, 2] and tt.tile(S, (3,)).shape == (3,)
    assert tt.ops.aten.slice(tt.arange(5), 0, -10, 100).tolist() == [0, 1, 2, 3, 4]
    assert tt.ops.aten.slice(tt.arange(5), 0, 3, 1).shape == (0,)
    assert tt.detach_copy(_x()).requires_grad is False
    assert tt.view_copy(_x(), tt.int32).dtype is tt.int32 and tt.view_copy(_x(), tt.int32).grad_fn is None


def test_meshgrid_default_indexing_warns_as_torch():
    with pytest.warns(UserWarning, match="^torch.meshgrid: in an upcoming release, it will be required to pass the "
                                         "indexing argument.$"):
        g = tt.meshgrid(tt.arange(3), tt.arange(2))
    assert g[0].shape == (3, 2)
    assert tt.meshgrid([tt.arange(3), tt.arange(2)], indexing="xy")[0].shape == (2, 3)


# --------------------------------------------------------------------------- the dtype matrix on cpu
def _values(dtype, shape):
    v = np.arange(int(np.prod(shape))).reshape(shape) % 5 - 2
    return tt.tensor(v.astype(bool) if dtype is tt.bool else v, dtype=dtype)


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_every_dtype_on_cpu(dtype):
    x, y = _values(dtype, (2, 3)), _values(dtype, (3,))
    nx, ny = _np(x), _np(y)
    checks = [
        (tt.tile(x, (2, 1, 2)), np.tile(nx, (2, 1, 2))),
        (tt.rot90(x, 3), np.rot90(nx, 3)),
        (tt.block_diag(x, y), _block(nx, ny[None])),
        (tt.cartesian_prod(y, y), np.array([[a, b] for a in ny for b in ny])),
        (tt.combinations(y), np.array([[ny[0], ny[1]], [ny[0], ny[2]], [ny[1], ny[2]]])),
        (tt.diag(y), np.diag(ny)), (tt.diag(x, 1), np.diag(nx, 1)),
        (tt.repeat_interleave(x, 2, dim=1), np.repeat(nx, 2, axis=1)),
        (tt.column_stack([y, y]), np.column_stack([ny, ny])), (tt.dstack([x, x]), np.dstack([nx, nx])),
        (tt.permute_copy(x, (1, 0)), nx.T), (tt.broadcast_to(y, (2, 3)), np.broadcast_to(ny, (2, 3))),
        (tt.ravel(x.t()), nx.T.ravel()),
    ]
    if dtype is not tt.bool:
        checks.append((tt.kron(x, y), np.kron(nx, ny)))
    for got, want in checks:
        assert got.dtype is dtype
        np.testing.assert_array_equal(_np(got), want)


def _block(*blocks):
    out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), dtype=blocks[0].dtype)
    r = c = 0
    for b in blocks:
        out[r:r + b.shape[0], c:c + b.shape[1]] = b
        r, c = r + b.shape[0], c + b.shape[1]
    return out


# --------------------------------------------------------------------------- out=
def test_out_variants():
    x = _x(requires_grad=False)
    out = tt.empty(0, dtype=tt.float64)
    assert tt.kron(x, x, out=out) is out and out.shape == (4, 9) and out.dtype is tt.float64
    with pytest.raises(RuntimeError, match="^result type Float can't be cast to the desired output type Long$"):
        tt.kron(x, x, out=tt.empty(0, dtype=tt.int64))
    with pytest.raises(RuntimeError, match="^Expected out tensor to have dtype float, but got double instead$"):
        tt.permute_copy(x, (1, 0), out=tt.empty(0, dtype=tt.float64))
    with pytest.raises(RuntimeError, match="^Expected out tensor to have dtype float, but got double instead$"):
        tt.diag(x, out=tt.empty(0, dtype=tt.float64))
    with pytest.raises(RuntimeError, match="^diag: result type Float can't be cast to the desired out= type Long$"):
        tt.diag(x, out=tt.empty(0, dtype=tt.int64))
    with pytest.raises(RuntimeError, match=r"^Expected self.dtype\(\) == output.dtype\(\) to be true, but got false."):
        tt.narrow_copy(x, 0, 0, 1, out=tt.empty(0, dtype=tt.float64))
    with pytest.raises(TypeError, match="^torch.cat\\(\\): input types can't be cast to the desired output type Long$"):
        tt.column_stack([x, x], out=tt.empty(0, dtype=tt.int64))
    out = tt.empty(0)
    tt.transpose_copy(x, 0, 1, out=out)
    assert out.tolist() == [[-2.0, 1.0], [-1.0, 2.0], [0.0, 3.0]]


# --------------------------------------------------------------------------- cuda (emulated): one pass
def test_composites_on_cuda():
    x = tt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device="cuda")
    assert tt.repeat_interleave(tt.tensor([2, 0, 1], device="cuda")).tolist() == [0, 0, 2]
    assert tt.repeat_interleave(x, tt.tensor([0, 2], device="cuda"), dim=0).tolist() == [[4, 5, 6], [4, 5, 6]]
    assert tt.block_diag(x, tt.tensor(7.0, device="cuda")).tolist() == [[1, 2, 3, 0], [4, 5, 6, 0], [0, 0, 0, 7]]
    y = x * 1
    y.t_()
    assert y.device.type == "cuda" and y.tolist() == [[1, 4], [2, 5], [3, 6]]


def test_broadcast_to_method_takes_sizes_as_ints_the_function_does_not():
    # torch 2.13: x.broadcast_to(2, 3), x.broadcast_to([2, 3]) and x.broadcast_to(size=(2, 3)) are
    # one view; torch.broadcast_to(x, 2, 3) is a TypeError, as are a float among the ints and no size
    x = tt.tensor([[1.0, 2.0, 3.0]])
    for y in (x.broadcast_to(2, 3), x.broadcast_to([2, 3]), x.broadcast_to(size=(2, 3)), x.broadcast_to(tt.Size([2, 3]))):
        assert tuple(y.shape) == (2, 3) and y.stride() == (0, 1)
        np.testing.assert_array_equal(y.numpy(), [[1, 2, 3], [1, 2, 3]])
    with pytest.raises(TypeError, match="takes 2 positional arguments but 3 were given"):
        tt.broadcast_to(x, 2, 3)
    with pytest.raises(TypeError, match="takes 1 positional argument but 2 were given"):
        x.broadcast_to(2.0, 3)
    with pytest.raises(TypeError, match='missing 1 required positional arguments: "size"'):
        x.broadcast_to()
