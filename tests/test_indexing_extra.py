"""Issue 21.4's torch edge cases beyond the OpInfo records of tests/opinfo_reductions_indexing.py:
index_add/index_copy/index_fill/index_reduce and their in-place forms, masked_scatter, put,
take_along_dim, select/slice/as_strided_scatter, fill_diagonal_, tril/triu_indices,
unravel_index, nonzero_static (tritensor/ops/scatter.py). Expected values are literals recorded
from torch 2.13 (no torch import here); errors are torch's texts.
"""
import warnings

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy
from tritensor.autograd import gradcheck

NAN = float("nan")


def _node(t):
    return type(t.grad_fn).__name__


def _x(device="cpu"):
    return tt.arange(12.0, device=device).view(3, 4)


def _i(values, device="cpu", dtype=tt.int64):
    return tt.tensor(values, dtype=dtype, device=device)


@pytest.fixture(autouse=True)
def _quiet_beta_warning():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="index_reduce\\(\\) is in beta")
        yield


# --------------------------------------------------------------------------- index_add
def test_index_add_values_alpha_and_dtypes(device):
    x = _x(device)
    got = x.index_add(0, _i([0, 2, 0], device), tt.ones(3, 4, device=device), alpha=2)
    assert to_numpy(got).tolist() == [[4, 5, 6, 7], [4, 5, 6, 7], [10, 11, 12, 13]]
    got = x.index_add(1, _i([1, 1], device, tt.int32), tt.ones(3, 2, device=device))
    assert to_numpy(got).tolist() == [[0, 3, 2, 3], [4, 7, 6, 7], [8, 11, 10, 11]]
    ints = tt.tensor([1, 2, 3], device=device)
    assert to_numpy(ints.index_add(0, _i([0, 0], device), tt.tensor([5, 6], device=device), alpha=2.5)).tolist() \
        == [23, 2, 3]                                      # alpha converted to the integer type
    b = tt.tensor([True, False], device=device).index_add(0, _i([1], device), tt.tensor([True], device=device))
    assert to_numpy(b).tolist() == [True, True]
    assert tt.tensor(5.0, device=device).index_add(0, _i(0, device), tt.tensor(2.0, device=device)).item() == 7.0
    assert tt.zeros(2, 0, device=device).index_add(1, _i([], device), tt.zeros(2, 0, device=device)).shape == (2, 0)


def test_index_add_is_deterministic_with_many_repeated_indices(device):
    """float32 sums of 300 rows into 3 (past the interpreter's 64-element sort tile): the same
    bits every run, and the cpu loop's order of summation."""
    rng = np.random.default_rng(11)
    src = (rng.standard_normal((300, 2)) * 1e3).astype(np.float32)
    idx = rng.integers(0, 3, 300)
    expected = np.zeros((3, 2), np.float32)
    for i, t in enumerate(idx):                  # one add at a time, in index order, in float32
        expected[t] = expected[t] + src[i]
    runs = [to_numpy(tt.zeros(3, 2, device=device).index_add(0, _i(idx, device), tt.tensor(src, device=device)))
            for _ in range(2)]
    assert runs[0].tobytes() == runs[1].tobytes()
    np.testing.assert_allclose(runs[0], expected, rtol=2e-6, atol=1e-3)


def test_index_add_in_place_records_and_errors():
    x = _x().requires_grad_()
    y = x * 1
    version = y._version
    s = tt.ones(2, 4, requires_grad=True)
    assert y.index_add_(0, _i([2, 2]), s, alpha=3) is y and y._version == version + 1
    assert _node(y) == "IndexAddBackward0"
    y.sum().backward()
    assert to_numpy(s.grad).tolist() == [[3.0] * 4] * 2 and to_numpy(x.grad).tolist() == [[1.0] * 4] * 3
    x = _x()
    cases = [
        (lambda: x.index_add(0, tt.tensor([0.0, 1.0]), tt.ones(2, 4)), RuntimeError,
         "index_add_(): Expected dtype int32/int64 for index but got: Float"),
        (lambda: x.index_add(0, _i([0, 3]), tt.ones(2, 4)), RuntimeError,
         "index 3 is out of bounds for dimension 0 with size 3"),
        (lambda: x.index_add(0, _i([0, -1]), tt.ones(2, 4)), RuntimeError,
         "index -1 is out of bounds for dimension 0 with size 3"),
        (lambda: x.index_add(0, _i([0, 1]), tt.ones(3, 4)), RuntimeError,
         "index_add_(): Number of indices (2) should be equal to source.size(dim): (3), for dim: 0"),
        (lambda: x.index_add(0, _i([0, 1]), tt.ones(2, 3)), RuntimeError,
         "source tensor shape must match self tensor shape, excluding the specified dimension. "
         "Got self.shape = [3, 4] source.shape = [2, 3]"),
        (lambda: x.index_add(0, _i([[0, 1]]), tt.ones(2, 4)), IndexError,
         "index_add_(): Index is supposed to be a vector, but got dim: 2 with type: Long and size: [1, 2]"),
        (lambda: x.index_add(0, _i([0, 1]), tt.ones(2, 4, dtype=tt.float64)), RuntimeError,
         "index_add_(): self (Float) and source (Double) must have the same scalar type"),
        (lambda: x.index_add(2, _i([0, 1]), tt.ones(2, 4)), IndexError,
         "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
        (lambda: tt.tensor(5.0).index_add(0, _i([0, 0]), tt.tensor([2.0, 3.0])), RuntimeError,
         "source tensor shape must match self tensor shape, excluding the specified dimension. "
         "Got self.shape = [] source.shape = [2]"),
        (lambda: tt.index_add(x, 0, _i([0]), tt.ones(1, 4), out=tt.empty(0, dtype=tt.float64)), RuntimeError,
         "Expected out tensor to have dtype float, but got double instead"),
    ]
    for fn, kind, message in cases:
        with pytest.raises(kind) as info:
            fn()
        assert str(info.value) == message


# --------------------------------------------------------------------------- index_copy / index_fill
def test_index_copy_last_write_wins_and_errors(device):
    x = _x(device)
    two = tt.stack([tt.ones(4, device=device), 2 * tt.ones(4, device=device)])
    assert to_numpy(x.index_copy(0, _i([1, 1], device), two)).tolist() == \
        [[0, 1, 2, 3], [2, 2, 2, 2], [8, 9, 10, 11]]          # torch: unspecified; the last write here
    assert to_numpy(x.index_copy(0, _i([2, 0], device), two * 7)).tolist() == \
        [[14, 14, 14, 14], [4, 5, 6, 7], [7, 7, 7, 7]]
    assert tt.tensor(3.0, device=device).index_copy(0, _i([0], device), tt.tensor(5.0, device=device)).item() == 5.0
    cases = [
        (lambda: x.index_copy(0, tt.tensor([0.0]), tt.ones(1, 4)), RuntimeError,
         "index_copy_(): Expected a long tensor for index, but got Float"),
        (lambda: x.index_copy(0, _i([0], dtype=tt.int32), tt.ones(1, 4)), RuntimeError,
         "index_copy_(): Expected a long tensor for index, but got Int"),
        (lambda: x.index_copy(0, _i([5]), tt.ones(1, 4)), IndexError,
         "index_copy_(): index 5 is out of bounds for dimension 0 with size 3"),
        (lambda: x.index_copy(0, _i([-1]), tt.ones(1, 4)), IndexError,
         "index_copy_(): index -1 is out of bounds for dimension 0 with size 3"),
        (lambda: x.index_copy(0, _i([1]), tt.ones(2, 4)), IndexError,
         "index_copy_(): Number of indices (1) should be equal to source.size(dim) (2)"),
        (lambda: tt.zeros(2, 3, 4).index_copy(1, _i([0]), tt.ones(2, 1, 5)), RuntimeError,
         "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice shape: 2 4 at "
         "dimension 1 and source slice shape: 2 5 at dimension 0."),
        (lambda: x.index_copy(0, _i([[0]]), tt.ones(1, 4)), IndexError,
         "index_copy_(): Index should have dimension 1 or 0 (got 2)"),
        (lambda: x.index_copy(0, _i([0, 1]), tt.tensor(1.0)), IndexError,
         "index_copy_(): When source is scalar, index should have one element (got 2)"),
        (lambda: x.index_copy(0, _i([1]), tt.ones(4)), IndexError,
         "index_copy_(): When source and destination are not scalars, their dimensionality must match. Source "
         "dimensionality (1), destination dimensionality (2)"),
        (lambda: x.index_copy(0, _i([1]), tt.ones(1, 4, dtype=tt.float64)), RuntimeError,
         "index_copy_(): self and source expected to have the same dtype, but got (self) Float and (source) Double"),
    ]
    for fn, kind, message in cases:
        with pytest.raises(kind) as info:
            fn()
        assert str(info.value) == message


def test_index_fill_wraps_negative_indices_and_errors(device):
    x = _x(device)
    assert to_numpy(x.index_fill(1, _i([0, 3, 0], device), -1.0)).tolist() == \
        [[-1, 1, 2, -1], [-1, 5, 6, -1], [-1, 9, 10, -1]]
    assert to_numpy(x.index_fill(0, _i([-1], device), 1.0)).tolist()[2] == [1.0] * 4
    assert to_numpy(x.index_fill(0, _i([1], device), tt.tensor(9.0))).tolist()[1] == [9.0] * 4   # a cpu 0-d value
    assert to_numpy(tt.tensor([1, 2], device=device).index_fill(0, _i([1], device), 2.5)).tolist() == [1, 2]
    cases = [
        (lambda: x.index_fill(0, _i([1]), tt.tensor([9.0])), RuntimeError,
         "index_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension(s)."),
        (lambda: x.index_fill(0, _i([7]), 1.0), IndexError, "index 7 is out of bounds for dimension 0 with size 3"),
        (lambda: x.index_fill(0, tt.tensor([1.0]), 1.0), IndexError, "index_fill_(): Expected dtype int64 for index."),
        (lambda: x.index_fill(0, _i([0], dtype=tt.int32), 1.0), IndexError,
         "index_fill_(): Expected dtype int64 for index."),
        (lambda: tt.tensor([1, 2]).index_fill(0, _i([[1]]), 2), RuntimeError, "Index has to be a vector/scalar"),
    ]
    for fn, kind, message in cases:
        with pytest.raises(kind) as info:
            fn()
        assert str(info.value) == message


def test_index_copy_and_fill_gradients_match_torch():
    a = tt.tensor([[1.0, 0.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 0.0, 11.0]], requires_grad=True)
    s = tt.tensor([[2.0] * 4, [3.0, 0.0, 3.0, 3.0], [-1.0, 5.0, 0.5, 3.0]], requires_grad=True)
    out = a.index_copy(0, _i([2, 0, 2]), s)
    assert _node(out) == "IndexCopyBackward0"
    out.backward(tt.arange(12.0).view(3, 4) + 1)
    assert to_numpy(a.grad).tolist() == [[0.0] * 4, [5.0, 6.0, 7.0, 8.0], [0.0] * 4]
    assert to_numpy(s.grad).tolist() == [[9.0, 10.0, 11.0, 12.0], [1.0, 2.0, 3.0, 4.0], [9.0, 10.0, 11.0, 12.0]]
    b = tt.tensor([[1.0, 0.0], [4.0, 5.0]], requires_grad=True)
    out = b.index_fill(1, _i([0]), 7.0)
    assert _node(out) == "IndexFillBackward0"
    v = tt.tensor(7.0, requires_grad=True)
    out = b.index_fill(1, _i([0, 0]), v)
    assert _node(out) == "IndexFillBackward1"
    (out * tt.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert to_numpy(b.grad).tolist() == [[0.0, 2.0], [0.0, 4.0]] and v.grad.item() == 4.0    # each position once


# --------------------------------------------------------------------------- index_reduce
REDUCED = {   # torch: x = arange(12).view(3, 4), index [0, 2, 0], source rows 2s, 3s, [-1, 5, 0.5, nan]
    ("prod", True): [[-0.0, 10.0, 2.0, NAN], [4, 5, 6, 7], [24, 27, 30, 33]],
    ("prod", False): [[-2.0, 10.0, 1.0, NAN], [4, 5, 6, 7], [3, 3, 3, 3]],
    ("mean", True): [[1 / 3, 8 / 3, 1.5, NAN], [4, 5, 6, 7], [5.5, 6.0, 6.5, 7.0]],
    ("mean", False): [[0.5, 3.5, 1.25, NAN], [4, 5, 6, 7], [3, 3, 3, 3]],
    ("amax", True): [[2.0, 5.0, 2.0, NAN], [4, 5, 6, 7], [8, 9, 10, 11]],
    ("amax", False): [[2.0, 5.0, 2.0, NAN], [4, 5, 6, 7], [3, 3, 3, 3]],
    ("amin", True): [[-1.0, 1.0, 0.5, NAN], [4, 5, 6, 7], [3, 3, 3, 3]],
    ("amin", False): [[-1.0, 2.0, 0.5, NAN], [4, 5, 6, 7], [3, 3, 3, 3]],
}


def test_index_reduce_every_reduction_as_torch(device):
    x = _x(device)
    src = tt.tensor([[2.0] * 4, [3.0] * 4, [-1.0, 5.0, 0.5, NAN]], device=device)
    for (reduce, include_self), expected in REDUCED.items():
        got = x.index_reduce(0, _i([0, 2, 0], device), src, reduce, include_self=include_self)
        np.testing.assert_allclose(to_numpy(got), expected, rtol=1e-6, equal_nan=True)
    ints = tt.tensor([5, 7, 9], device=device)
    assert to_numpy(ints.index_reduce(0, _i([0, 0, 1], device), tt.tensor([2, 3, 4], device=device), "mean")).tolist() \
        == [3, 5, 9]
    assert to_numpy(ints.index_reduce(0, _i([0, 0, 1], device), tt.tensor([-9, 2, 4], device=device), "mean",
                                      include_self=False)).tolist() == [-4, 4, 9]          # floor division


def test_index_reduce_warning_errors_and_gradients():
    x = _x()
    with pytest.raises(RuntimeError, match=r"^index_reduce\(\): Expected reduce to be one of prod, mean, amax or "
                                           r"amin but got sum\.$"):
        x.index_reduce(0, _i([0]), tt.ones(1, 4), "sum")
    with pytest.raises(IndexError, match="^index out of range in self$"):
        x.index_reduce(0, _i([3]), tt.ones(1, 4), "prod")
    with pytest.raises(NotImplementedError, match="^\"index_func_\" not implemented for 'Bool'$"):
        tt.tensor([True]).index_reduce(0, _i([0]), tt.tensor([True]), "prod")
    with pytest.raises(RuntimeError, match=r"^index_reduce_\(\): Expected dtype int32/int64 for index but got: "
                                           r"Float$"):
        x.index_reduce(0, tt.tensor([0.0]), tt.ones(1, 4), "prod")
    expected = {   # torch's gradients for out.backward(arange(12).view(3, 4) + 1)
        "prod": ([[-2.0, 20.0, 3.0, 24.0], [5, 6, 7, 8], [27.0, 0.0, 33.0, 36.0]],
                 [[-1.0, 0.0, 3.0, 36.0], [72.0, 90.0, 0.0, 132.0], [2.0, 0.0, 12.0, 24.0]], True),
        "amax": ([[0.0] * 4, [5, 6, 7, 8], [0.0] * 4], [[1.0, 0.0, 1.5, 0.0], [9, 10, 11, 12], [0.0, 2.0, 0.0, 2.0]],
                 False),
        "mean": ([[1 / 3, 2 / 3, 1.0, 4 / 3], [5, 6, 7, 8], [4.5, 5.0, 5.5, 6.0]],
                 [[1 / 3, 2 / 3, 1.0, 4 / 3], [4.5, 5.0, 5.5, 6.0], [1 / 3, 2 / 3, 1.0, 4 / 3]], True),
    }
    for reduce, (grad_a, grad_s, include_self) in expected.items():
        a = tt.tensor([[1.0, 0.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 0.0, 11.0]], requires_grad=True)
        s = tt.tensor([[2.0] * 4, [3.0, 0.0, 3.0, 3.0], [-1.0, 5.0, 0.5, 3.0]], requires_grad=True)
        out = a.index_reduce(0, _i([0, 2, 0]), s, reduce, include_self=include_self)
        assert _node(out) == "IndexReduceBackward0"
        out.backward(tt.arange(12.0).view(3, 4) + 1)
        np.testing.assert_allclose(to_numpy(a.grad), grad_a, rtol=1e-6)
        np.testing.assert_allclose(to_numpy(s.grad), grad_s, rtol=1e-6)


def test_index_reduce_first_derivative_on_the_emulated_device():
    rng = np.random.default_rng(2)
    a = tt.tensor(rng.standard_normal((2, 1)), dtype=tt.float64, device="cuda", requires_grad=True)
    s = tt.tensor(rng.standard_normal((3, 1)), dtype=tt.float64, device="cuda", requires_grad=True)
    assert gradcheck(lambda a, s: a.index_reduce(0, _i([0, 1, 0], "cuda"), s, "prod"), (a, s))


def test_index_reduce_beta_warning():
    import tritensor.ops.scatter as scatter
    scatter._warned_beta[0] = False
    with pytest.warns(UserWarning, match=r"^index_reduce\(\) is in beta and the API may change at any time\.$"):
        _x().index_reduce(0, _i([0]), tt.ones(1, 4), "amax")


# --------------------------------------------------------------------------- masked_scatter / put / take_along_dim
def test_masked_scatter_values_gradient_and_errors(device):
    x = _x(device)
    m = tt.tensor([[True, False, True, False], [False] * 4, [True] * 4], device=device)
    assert to_numpy(x.masked_scatter(m, tt.arange(100.0, 110.0, device=device))).tolist() == \
        [[100, 1, 101, 3], [4, 5, 6, 7], [102, 103, 104, 105]]
    row = tt.tensor([True, False, False, True], device=device)
    assert to_numpy(x.masked_scatter(row, tt.arange(100.0, 112.0, device=device).view(2, 6))).tolist() == \
        [[100, 1, 2, 101], [102, 5, 6, 103], [104, 9, 10, 105]]
    grown = x.masked_scatter(tt.ones(2, 3, 4, dtype=tt.bool, device=device), tt.arange(30.0, device=device))
    assert grown.shape == (2, 3, 4) and to_numpy(grown).ravel().tolist() == list(range(24))
    with pytest.raises(RuntimeError, match="^Number of elements of source < number of ones in mask$"):
        x.masked_scatter(m, tt.arange(3.0, device=device))
    with pytest.raises(RuntimeError, match="^masked_scatter_ only supports boolean masks, but got mask with dtype "
                                           "Int$"):
        x.masked_scatter(m.int(), tt.arange(30.0, device=device))
    with pytest.raises(RuntimeError, match="^masked_scatter: expected self and source to have same dtypes but "
                                           "gotFloat and Long$"):
        x.masked_scatter(m, tt.arange(30, device=device))


def test_masked_scatter_gradient_and_in_place():
    x = tt.arange(12.0).view(3, 4).requires_grad_()
    s = tt.arange(100.0, 110.0).requires_grad_()
    m = tt.tensor([[True, False, True, False], [False] * 4, [True] * 4])
    o = x.masked_scatter(m, s)
    assert _node(o) == "MaskedScatterBackward0"
    o.backward(tt.arange(12.0).view(3, 4))
    assert to_numpy(x.grad).tolist() == [[0, 1, 0, 3], [4, 5, 6, 7], [0, 0, 0, 0]]
    assert to_numpy(s.grad).tolist() == [0, 2, 8, 9, 10, 11, 0, 0, 0, 0]
    y = tt.zeros(2, 2)
    assert y.masked_scatter_(tt.tensor([True, False]), tt.tensor([5.0, 6.0])) is y
    assert y.tolist() == [[5.0, 0.0], [6.0, 0.0]] and y._version == 1


@pytest.mark.launch_blocking     # the bounds errors at the call (the deferred form: tests/test_device_asserts.py)
def test_put_values_and_errors(device):
    x = _x(device)
    assert to_numpy(x.put(_i([1, -1, 1], device), tt.tensor([7.0, 8.0, 9.0], device=device))).ravel().tolist() == \
        [0, 9, 2, 3, 4, 5, 6, 7, 8, 9, 10, 8]             # the last write of index 1 wins
    assert to_numpy(x.put(_i([[1, 1]], device), tt.tensor([7.0, 8.0], device=device), accumulate=True))[0, 1] == 16
    t = x.t().clone()                                   # row-major positions of the logical layout
    assert t.put_(_i([1], device), tt.tensor([-5.0], device=device)) is t and t.stride() == (1, 4)
    assert to_numpy(t)[0].tolist() == [0, -5, 8]
    cases = [
        (lambda: x.put(_i([12], device), tt.tensor([7.0], device=device)), IndexError,
         "out of range: tried to access index 12 on a tensor of 12 elements."),
        (lambda: x.put(_i([1], device, tt.int32), tt.tensor([7.0], device=device)), RuntimeError,
         "put_(): Expected a long tensor for index, but got Int"),
        (lambda: x.put(_i([1, 2], device), tt.tensor([7.0], device=device)), IndexError,
         "put_(): Expected source and index to have the same number of elements, but got source.numel() = 1, "
         "index.numel() = 2"),
        (lambda: x.put(_i([1], device), tt.tensor([7], device=device)), RuntimeError,
         "put_(): self and source expected to have the same dtype, but got self.dtype = Float and source.dtype = "
         "Long"),
    ]
    for fn, kind, message in cases:
        with pytest.raises(kind) as info:
            fn()
        assert str(info.value) == message
    y = tt.zeros(3, requires_grad=True)
    assert _node(y.put(_i([0]), tt.tensor([1.0]))) == "PutBackward0"


def test_take_along_dim_values_and_errors():
    x = _x()
    assert to_numpy(tt.take_along_dim(x, _i([[0], [3], [1]]), 1)).ravel().tolist() == [0, 7, 9]
    assert to_numpy(x.take_along_dim(_i([11, 0]))).tolist() == [11, 0]
    assert to_numpy(tt.take_along_dim(x, _i([[2, 0, 1, 0]]), 0)).tolist() == [[8, 1, 6, 3]]
    assert tt.take_along_dim(x, _i([[0, 1]]), 1).shape == (3, 2)
    # along a dim, torch 2.13 wraps every index modulo the size (-1 the last, 5 of 4 is 1)
    assert to_numpy(tt.take_along_dim(x, _i([[-1], [5], [-6]]), 1)).ravel().tolist() == [3, 5, 10]
    with pytest.raises(RuntimeError, match=r"^torch.take_along_dim\(\): input and indices should have the same number "
                                           r"of dimensions, but got 2 dimensions for input, and 1 dimensions for "
                                           r"indices$"):
        tt.take_along_dim(x, _i([1]), 1)
    with pytest.raises(RuntimeError, match=r"^torch.take_along_dim\(\): dtype of indices should be Long but got Int$"):
        tt.take_along_dim(x, _i([[1]], dtype=tt.int32), 1)
    with pytest.raises(RuntimeError, match="^view size is not compatible with input tensor's size and stride"):
        tt.take_along_dim(x.t(), _i([1]))
    out = tt.empty(0)
    assert tt.take_along_dim(x, _i([[1]]), 1, out=out) is out and out.tolist() == [[1.0], [5.0], [9.0]]


# --------------------------------------------------------------------------- select/slice/as_strided scatter
def test_view_scatters_as_torch():
    x = _x()
    assert to_numpy(tt.select_scatter(x, tt.tensor([-1.0, -2, -3]), 1, -1))[:, 3].tolist() == [-1, -2, -3]
    assert to_numpy(tt.slice_scatter(x, tt.zeros(3, 2), 1, 1, 4, 2)).tolist() == \
        [[0, 0, 2, 0], [4, 0, 6, 0], [8, 0, 10, 0]]
    assert to_numpy(tt.slice_scatter(x, tt.zeros(1, 4), start=2))[2].tolist() == [0] * 4
    assert to_numpy(tt.slice_scatter(x, tt.zeros(3, 4), 1, -100, 100)).sum() == 0
    assert to_numpy(x.select_scatter(tt.ones(4, dtype=tt.int64), 0, 1))[1].tolist() == [1.0] * 4   # cast as copy_
    xs = x[1:]
    assert to_numpy(tt.as_strided_scatter(xs, tt.tensor([-1.0, -2.0]), (2,), (1,)))[0, :2].tolist() == [-1, -2]
    assert to_numpy(tt.as_strided_scatter(xs, tt.tensor([-1.0, -2.0]), (2,), (1,), 0)).tolist() == to_numpy(xs).tolist()
    assert to_numpy(tt.as_strided_scatter(x.t(), tt.tensor([-1.0, -2.0]), (2,), (1,)))[:2, 0].tolist() == [-1, -2]
    s = tt.zeros(3, requires_grad=True)
    assert _node(tt.select_scatter(x, s, 1, 0)) == "SelectScatterBackward0"
    assert _node(tt.slice_scatter(x, s.view(3, 1), 1, 0, 1)) == "SliceScatterBackward0"
    assert _node(tt.as_strided_scatter(x, s[:2], (2,), (5,))) == "AsStridedScatterBackward0"
    cases = [
        (lambda: tt.select_scatter(x, tt.ones(4), 1, 0), RuntimeError,
         "expected src to have a size equal to the slice of self. src size = [4], slice size = [3]"),
        (lambda: tt.select_scatter(tt.tensor(1.0), tt.tensor(5.0), 0, 0), IndexError,
         "select() cannot be applied to a 0-dim tensor."),
        (lambda: tt.slice_scatter(x, tt.zeros(2, 4), 0, 0, 1), RuntimeError,
         "expected src to have a size equal to the slice of self. src size = [2, 4], slice size = [1, 4]"),
        (lambda: tt.slice_scatter(x, tt.zeros(3, 2), 1, 0, 4, 0), RuntimeError, "slice step must be positive"),
        (lambda: tt.as_strided_scatter(x, tt.ones(3), (2,), (5,)), RuntimeError,
         "expected src to have a size equal to the slice of self. src size = [3], slice size = [2]"),
    ]
    for fn, kind, message in cases:
        with pytest.raises(kind) as info:
            fn()
        assert str(info.value) == message


# --------------------------------------------------------------------------- fill_diagonal_
def test_fill_diagonal_as_torch(device):
    y = tt.zeros(5, 3, device=device)
    assert y.fill_diagonal_(1.0, wrap=True) is y
    assert to_numpy(y).tolist() == [[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0], [1, 0, 0]]
    z = tt.zeros(7, 3, dtype=tt.int64, device=device).fill_diagonal_(2.7, wrap=True)
    assert to_numpy(z)[:, 0].tolist() == [2, 0, 0, 0, 2, 0, 0] and to_numpy(z)[6, 2] == 2
    assert to_numpy(tt.zeros(2, 5, device=device).fill_diagonal_(7, wrap=True)).tolist() == \
        [[7, 0, 0, 0, 0], [0, 7, 0, 0, 0]]
    c = tt.zeros(3, 3, 3, device=device).fill_diagonal_(2)
    assert to_numpy(c).sum() == 6 and c[1, 1, 1].item() == 2
    with pytest.raises(RuntimeError, match="^dimensions must larger than 1$"):
        tt.zeros(3).fill_diagonal_(1)
    with pytest.raises(RuntimeError, match="^all dimensions of input must be of equal length$"):
        tt.zeros(2, 3, 2).fill_diagonal_(1)
    w = tt.zeros(2, 2, requires_grad=True) * 1
    w.fill_diagonal_(3.0)
    assert _node(w) == "CopySlices"          # as torch: a fill of a strided view


# --------------------------------------------------------------------------- tril/triu_indices, unravel, nonzero_static
def test_tri_indices_as_torch():
    assert tt.tril_indices(3, 4).tolist() == [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]
    assert tt.tril_indices(3, 4, 1).tolist() == [[0, 0, 1, 1, 1, 2, 2, 2, 2], [0, 1, 0, 1, 2, 0, 1, 2, 3]]
    assert tt.triu_indices(4, 3, -1).tolist() == [[0, 0, 0, 1, 1, 1, 2, 2, 3], [0, 1, 2, 0, 1, 2, 1, 2, 2]]
    assert tt.tril_indices(0, 0).shape == (2, 0) and tt.triu_indices(3, 3, 5).shape == (2, 0)
    assert tt.tril_indices(3, 3, dtype=tt.int32).dtype is tt.int32
    with pytest.raises(RuntimeError, match="^row must be non-negative, got-1$"):
        tt.tril_indices(-1, 3)
    with pytest.raises(RuntimeError, match="^col must be non-negative, got-2$"):
        tt.triu_indices(3, -2)
    with pytest.raises(NotImplementedError, match="^\"tril_indices\" not implemented for 'Float'$"):
        tt.tril_indices(3, 3, dtype=tt.float32)


def test_unravel_index_as_torch():
    rows, cols = tt.unravel_index(_i([4, 1, 11, 12, -1]), (3, 4))
    assert rows.tolist() == [1, 0, 2, 0, 2] and cols.tolist() == [0, 1, 3, 0, 3]     # no range check: wraps
    assert [t.item() for t in tt.unravel_index(_i(5), (3, 4))] == [1, 1]
    assert all(t.tolist() == [[0, 1]] for t in tt.unravel_index(_i([[0, 7]]), tt.Size([2, 2, 2])))
    assert tt.unravel_index(_i([1], dtype=tt.int32), (3, 4))[0].dtype is tt.int64
    assert tt.unravel_index(_i([1]), 5)[0].tolist() == [1] and tt.unravel_index(_i([1]), ()) == ()
    with pytest.raises(TypeError, match="^expected 'indices' to be integer dtype, but got tritensor.float32$"):
        tt.unravel_index(tt.tensor([1.0]), (3, 4))
    with pytest.raises(ValueError, match=r"^'shape' cannot have negative values, but got \(3, -4\)$"):
        tt.unravel_index(_i([1]), (3, -4))


def test_nonzero_static_as_torch(device):
    x = _x(device)
    assert to_numpy(tt.nonzero_static(x, size=4)).tolist() == [[0, 1], [0, 2], [0, 3], [1, 0]]
    assert to_numpy(x.nonzero_static(size=14, fill_value=-5))[-4:].tolist() == [[2, 3], [-5, -5], [-5, -5], [-5, -5]]
    assert tt.nonzero_static(tt.tensor(3.0, device=device), size=2).shape == (2, 0)
    assert to_numpy(tt.nonzero_static(tt.zeros(0, 3, device=device), size=2)).tolist() == [[-1, -1], [-1, -1]]
    with pytest.raises(RuntimeError, match="^nonzero_static: 'size' must be an non-negative integer$"):
        tt.nonzero_static(x, size=-1)
    with pytest.raises(RuntimeError, match="^nonzero_static: Expected out tensor to have scalar type Long but got "
                                           "scalar typeFloat$"):
        tt.nonzero_static(x, size=2, out=tt.empty(0, device=device))
