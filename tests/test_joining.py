"""cat/stack, split/chunk/tensor_split, flip, tril/triu: values against NumPy on cpu and cuda
(awkward layouts, dtypes, sizes that cross the 128-element interpreter block), torch's errors,
torch's node names, views vs copies, and hand-computed gradients."""
import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy

RNG = np.random.default_rng(7)


def _vals(shape, dtype):
    if dtype is tt.bool:
        return RNG.integers(0, 2, shape).astype(bool)
    if not dtype.is_floating_point:
        return RNG.integers(-50, 50, shape)
    return RNG.standard_normal(shape).round(2)


def make(shape, dtype, device):
    return tt.tensor(_vals(shape, dtype), dtype=dtype, device=device)


def np_of(t):
    return to_numpy(t)


def check(out, expected, dtype=None):
    if dtype is not None:
        assert out.dtype is dtype
    got = np_of(out)
    assert got.shape == np.asarray(expected).shape
    np.testing.assert_array_equal(got, np.asarray(expected).astype(got.dtype))


# ============================================================================ cat
@pytest.mark.parametrize("dtype", [tt.bool, tt.int32, tt.bfloat16, tt.float64], ids=str)
def test_cat_values_layouts_and_dims(device, dtype):
    a = make((9, 13), dtype, device).t()                 # transposed: (13, 9)
    b = make((13, 31), dtype, device)[:, 1::3]           # step-sliced: (13, 10)
    c = make((13, 1), dtype, device).expand(13, 20)      # broadcast, stride 0
    out = tt.cat([a, b, c], dim=1)                       # 13 * 39 = 507 elements
    check(out, np.concatenate([np_of(a), np_of(b), np_of(c)], 1), dtype)
    out = tt.cat((a.t(), b.t()), -2)                     # negative dim, a tuple
    check(out, np.concatenate([np_of(a).T, np_of(b).T], 0), dtype)
    assert tt.concat is tt.cat and tt.concatenate is tt.cat


def test_cat_promotes_dtypes_and_skips_empty_1d(device):
    i = make((2, 3), tt.int32, device)
    h = make((2, 2), tt.float16, device)
    e = tt.zeros(0, dtype=tt.float64, device=device)      # skipped, but joins the promotion
    out = tt.cat([i, e, h], 1)
    assert out.dtype is tt.float64
    check(out, np.concatenate([np_of(i), np_of(h)], 1).astype(np.float64))
    out = tt.cat([i, h], 1)
    assert out.dtype is tt.float16                       # int32 with float16: float16, as torch
    check(out, np.concatenate([np_of(i), np_of(h)], 1).astype(np.float16))
    assert tt.cat([e, e]).shape == (0,)
    z = tt.cat([make((0, 3), tt.float32, device), make((2, 3), tt.float32, device)])
    assert z.shape == (2, 3)


def test_cat_errors(device):
    a = tt.ones(2, 3, device=device)
    with pytest.raises(ValueError, match=r"^torch.cat\(\): expected a non-empty list of Tensors$"):
        tt.cat([])
    with pytest.raises(RuntimeError, match=r"^Sizes of tensors must match except in dimension 1. Expected size 3 "
                                           r"but got size 4 for tensor number 1 in the list.$"):
        tt.cat([a.t(), tt.ones(4, 2, device=device)], 1)
    with pytest.raises(RuntimeError, match=r"^Tensors must have same number of dimensions: got 2 and 1$"):
        tt.cat([a, tt.ones(3, device=device)])
    with pytest.raises(RuntimeError, match=r"zero-dimensional tensor \(at position 1\) cannot be concatenated"):
        tt.cat([a, tt.tensor(1.0, device=device)])
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        tt.cat([a, a], 2)
    with pytest.raises(TypeError, match="expected Tensor as element 1 in argument 0, but got int"):
        tt.cat([a, 1])
    other = "cpu" if device == "cuda" else "cuda"
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        tt.cat([a, tt.ones(2, 3, device=other)])


def test_cat_gradient(device):
    x = tt.tensor([[1.0, 2.0]], device=device, requires_grad=True)
    y = tt.tensor([[3.0], [4.0]], device=device, requires_grad=True)
    k = tt.tensor([[5.0]], device=device)                                      # no grad
    out = tt.cat([x, k, y.t()], 1)                                             # y transposed: (1, 2)
    assert out.grad_fn.name() == "CatBackward0"
    (out * tt.tensor([[10.0, 20.0, 30.0, 40.0, 50.0]], device=device)).sum().backward()
    np.testing.assert_array_equal(np_of(x.grad), [[10.0, 20.0]])
    np.testing.assert_array_equal(np_of(y.grad), [[40.0], [50.0]])


# ============================================================================ stack / hstack / vstack
def test_stack_values_and_dims(device):
    a = make((9, 15), tt.float32, device)
    b = make((15, 9), tt.float32, device).t()
    for dim in (0, 1, 2, -1, -3):
        check(tt.stack([a, b], dim), np.stack([np_of(a), np_of(b)], dim), tt.float32)
    out = tt.stack([make((3,), tt.int64, device), make((3,), tt.float16, device)])
    assert out.dtype is tt.float16


def test_stack_errors_and_gradient(device):
    with pytest.raises(RuntimeError, match=r"^stack expects each tensor to be equal size, but got \[2, 3\] at entry 0 "
                                           r"and \[2, 4\] at entry 1$"):
        tt.stack([tt.ones(2, 3, device=device), tt.ones(2, 4, device=device)])
    with pytest.raises(RuntimeError, match="stack expects a non-empty TensorList"):
        tt.stack([])
    with pytest.raises(IndexError, match="Dimension out of range"):
        tt.stack([tt.ones(2, device=device)], 2)
    x = tt.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = tt.tensor([3.0, 4.0], device=device, requires_grad=True)
    out = tt.stack([x, y], 1)
    assert out.grad_fn.name() == "StackBackward0"
    (out * tt.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)).sum().backward()
    np.testing.assert_array_equal(np_of(x.grad), [1.0, 3.0])
    np.testing.assert_array_equal(np_of(y.grad), [2.0, 4.0])


def test_hstack_vstack(device):
    a, b = make((3,), tt.float32, device), make((2,), tt.float32, device)
    check(tt.hstack([a, b]), np.hstack([np_of(a), np_of(b)]))
    m, n = make((2, 3), tt.float32, device), make((2, 1), tt.float32, device)
    check(tt.hstack([m, n]), np.hstack([np_of(m), np_of(n)]))
    check(tt.vstack([a, a, m]), np.vstack([np_of(a), np_of(a), np_of(m)]))


# ============================================================================ split / chunk / tensor_split
def _sizes(pieces, dim):
    return [p.shape[dim] for p in pieces]


def test_split_and_chunk_are_views_with_torch_sizes(device):
    x = make((7, 5), tt.float32, device)
    pieces = x.split(3)
    assert _sizes(pieces, 0) == [3, 3, 1]
    assert all(p._base is x for p in pieces)
    assert pieces[1].data_ptr() == x.data_ptr() + 3 * 5 * 4
    np.testing.assert_array_equal(np_of(pieces[2]), np_of(x)[6:])
    assert _sizes(tt.split(x, [1, 0, 4], dim=-1), 1) == [1, 0, 4]
    assert _sizes(x.chunk(3, 1), 1) == [2, 2, 1]
    assert _sizes(tt.ones(6, device=device).chunk(4), 0) == [2, 2, 2]      # torch: 3 chunks, not 4
    assert _sizes(tt.ones(0, device=device).chunk(3), 0) == [0, 0, 0]
    assert _sizes(tt.ones(0, device=device).split(2), 0) == [0]
    assert _sizes(tt.tensor_split(x, 3), 0) == [3, 2, 2]
    # x[0:1], x[1:4], x[4:-1], x[-1:9], x[9:]
    assert _sizes(x.tensor_split([1, 4, -1, 9], 0), 0) == [1, 3, 2, 1, 0]
    assert _sizes(x.tensor_split([1, 3], dim=1), 1) == [1, 2, 2]


def test_split_errors(device):
    x = tt.ones(5, device=device)
    with pytest.raises(RuntimeError, match=r"split_with_sizes expects split_sizes to sum exactly to 5 \(input tensor's "
                                           r"size at dimension 0\), but got split_sizes=\[2, 2\]"):
        x.split([2, 2])
    with pytest.raises(RuntimeError, match="split expects split_size be non-negative, but got split_size=-1"):
        x.split(-1)
    with pytest.raises(RuntimeError, match="split_size can only be 0 if dimension size is 0, but got dimension "
                                           "size of 5"):
        x.split(0)
    with pytest.raises(RuntimeError, match="chunk expects `chunks` to be greater than 0, got: 0"):
        x.chunk(0)
    with pytest.raises(RuntimeError, match="number of sections must be larger than 0, got 0"):
        x.tensor_split(0)


def test_split_gradient_and_node_names(device):
    x = tt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=device, requires_grad=True)
    a, b = x.split(2, 1)
    c, d = x.split([1, 1], 0)
    assert a.grad_fn.name() == b.grad_fn.name() == "SplitBackward0"
    assert c.grad_fn.name() == "SplitWithSizesBackward0"
    assert x.chunk(2)[0].grad_fn.name() == "SplitBackward0"
    (a * 2).sum().backward(retain_graph=True)
    ((b * 3).sum() + (d * 10).sum()).backward()
    np.testing.assert_array_equal(np_of(x.grad), [[2.0, 2.0, 3.0], [12.0, 12.0, 13.0]])


# ============================================================================ flip
@pytest.mark.parametrize("dtype", [tt.bool, tt.int64, tt.bfloat16, tt.float32], ids=str)
def test_flip_values(device, dtype):
    x = make((5, 9, 7), dtype, device)                   # 315 elements
    for dims in [(0,), (1,), (2,), (0, 2), (-1, -2), (0, 1, 2), ()]:
        check(x.flip(dims), np.flip(np_of(x), dims) if dims else np_of(x), dtype)
    t = x.transpose(0, 2)[1:, ::2]                       # non-contiguous source, read in place
    check(tt.flip(t, [0, 2]), np.flip(np_of(t), (0, 2)), dtype)


def test_flip_is_a_copy_and_edge_shapes(device):
    x = tt.arange(6.0, device=device).reshape(2, 3)
    y = x.flip(1)
    assert y._base is None and y.data_ptr() != x.data_ptr()
    x.add_(100)
    np.testing.assert_array_equal(np_of(y), [[2.0, 1.0, 0.0], [5.0, 4.0, 3.0]])
    check(tt.tensor(3.0, device=device).flip(()), 3.0)
    assert tt.ones(0, 3, device=device).flip(0).shape == (0, 3)
    # more dims than one launch takes (MAX_RANK 6): the leading ones loop in Python
    big = make((2, 1, 2, 3, 2, 2, 3, 2), tt.float32, device).permute(0, 2, 1, 4, 3, 6, 5, 7)
    check(big.flip(0, 1, 4, 7), np.flip(np_of(big), (0, 1, 4, 7)))
    check(big.flip(3), np.flip(np_of(big), 3))


def test_flip_errors_and_gradient(device):
    x = tt.tensor([[1.0, 2.0, 3.0]], device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="^dim 1 appears multiple times in the list of dims$"):
        x.flip(1, -1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.flip(2)
    y = x.flip(1)
    assert y.grad_fn.name() == "FlipBackward0"
    (y * tt.tensor([[1.0, 10.0, 100.0]], device=device)).sum().backward()
    np.testing.assert_array_equal(np_of(x.grad), [[100.0, 10.0, 1.0]])
    check(tt.fliplr(tt.eye(2, device=device)), [[0.0, 1.0], [1.0, 0.0]])
    check(tt.flipud(tt.arange(3, device=device)), [2, 1, 0])


# ============================================================================ tril / triu
@pytest.mark.parametrize("dtype", [tt.bool, tt.int32, tt.float16, tt.float64], ids=str)
def test_tril_triu_values(device, dtype):
    x = make((3, 7, 11), dtype, device)                  # batched, 231 elements
    t = make((11, 9), dtype, device).t()                 # transposed (9, 11)
    for k in (-8, -1, 0, 2, 20):
        check(x.tril(k), np.tril(np_of(x), k), dtype)
        check(tt.triu(t, k), np.triu(np_of(t), k), dtype)
    check(tt.triu(x), np.triu(np_of(x)), dtype)


def test_tril_triu_layouts_inplace_and_errors(device):
    x = make((2, 3, 2, 2, 3, 2, 4, 5), tt.float32, device).permute(1, 0, 3, 2, 5, 4, 6, 7)   # 8 dims
    check(x.triu(1), np.triu(np_of(x), 1))
    check(x.tril(-1), np.tril(np_of(x), -1))
    assert tt.ones(0, 4, 3, device=device).tril().shape == (0, 4, 3)
    y = make((6, 5), tt.float32, device)
    expect = np.tril(np_of(y), 1)
    view = y[1:, ::2]                                    # in place, through a strided view
    expect_view = np.tril(np_of(view), 0)
    view.tril_()
    expect[1:, ::2] = expect_view
    np.testing.assert_array_equal(np_of(y)[1:, ::2], expect_view)
    assert y.triu_(-1) is y
    with pytest.raises(RuntimeError, match="tril: input tensor must have at least 2 dimensions"):
        tt.tril(tt.ones(3, device=device))
    with pytest.raises(RuntimeError, match="triu: input tensor must have at least 2 dimensions"):
        tt.ones(3, device=device).triu()


def test_tril_triu_gradient(device):
    x = tt.ones(2, 3, device=device, requires_grad=True)
    y = x.tril(0) * 2 + x.triu(1) * 3
    assert x.tril().grad_fn.name() == "TrilBackward0"
    y.sum().backward()
    np.testing.assert_array_equal(np_of(x.grad), [[2.0, 3.0, 3.0], [2.0, 2.0, 3.0]])
