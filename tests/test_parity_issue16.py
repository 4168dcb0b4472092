"""Issue 16 (PyTorch parity), items 6 and 8: each difference the random-program comparison with
torch found, pinned with torch 2.13's values and messages (read from torch, written here by hand).
"""
import math

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy
from tritensor.autograd import gradcheck
from tritensor.ops.views import diag_embed, diagonal, diagonal_scatter

OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
           "location. Please clone() the tensor before performing the operation.")
inf, nan = math.inf, math.nan


# --------------------------------------------------------------------------- strides and contiguity
def test_expand_new_leading_dims_take_torch_strides():
    assert tt.zeros(2).expand(2, 1, 2).stride() == (0, 2, 1)
    assert tt.zeros(2).expand(3, 1, 1, 2).stride() == (0, 2, 2, 1)
    assert tt.zeros(3, 1).expand(2, 3, 0).stride() == (0, 1, 0)
    assert tt.zeros(2).expand(0, 2).stride() == (0, 1)


def test_every_empty_tensor_is_contiguous():
    assert tt.zeros(4, 3)[:, 0:0].t().is_contiguous()
    assert tt.zeros(0, 1).expand(0, 3).is_contiguous()


def test_noop_flatten_and_same_shape_view_keep_strides():
    x = tt.zeros(5, 1)[5:5:3]
    assert x.flatten(1, 1).stride() == (3, 1)
    assert x.view(0, 1).stride() == (3, 1) and x.reshape(0, 1).stride() == (3, 1)
    assert x.view(0, 1, 1).stride() == (1, 1, 1)        # another shape: contiguous strides
    y = tt.zeros(2, 3)
    assert y.flatten(1, 1) is y                          # torch returns the input itself
    with pytest.raises(RuntimeError, match=r"^cannot reshape tensor of 0 elements into shape \[-1, 0\] because "
                                           r"the unspecified dimension size -1 can be any value and is ambiguous$"):
        tt.zeros(0).reshape(-1, 0)


# --------------------------------------------------------------------------- overlap checks
def test_scalar_setitem_into_expanded_view_raises(device):
    b = tt.zeros(2, 1, device=device)
    with pytest.raises(RuntimeError, match=f"^{OVERLAP}$".replace("(", r"\(").replace(")", r"\)")):
        b.expand(2, 3)[...] = 1.5
    with pytest.raises(RuntimeError, match="more than one element"):
        b.expand(2, 3)[0] = 1.5
    b.expand(2, 3)[:, 1] = 1.5                           # no shared element: written
    np.testing.assert_array_equal(to_numpy(b), [[1.5], [1.5]])
    b.expand(2, 3).fill_(2.0)                            # fill_ checks nothing, as torch
    np.testing.assert_array_equal(to_numpy(b), [[2.0], [2.0]])


def test_inplace_on_empty_expanded_view_does_nothing(device):
    e = tt.zeros(0, 1, device=device).expand(0, 3)
    for fn in (lambda t: t.mul_(2.0), lambda t: t.add_(2.0), lambda t: t.copy_(tt.ones(3, device=device)),
               lambda t: t.clamp_(0, 1), lambda t: t.masked_fill_(tt.zeros(0, 3, dtype=tt.bool, device=device), 1)):
        assert fn(e).shape == (0, 3)
    e[...] = 1


# --------------------------------------------------------------------------- matmul, pow, setitem dtype
def test_matmul_backward_with_empty_contracted_dim(device):
    a = tt.zeros(2, 3, 0, dtype=tt.float64, requires_grad=True, device=device)
    b = tt.zeros(0, 3, dtype=tt.float64, requires_grad=True, device=device)
    ga, gb = tt.autograd.grad(a @ b, [a, b], tt.ones(2, 3, 3, dtype=tt.float64, device=device))
    assert ga.shape == (2, 3, 0) and gb.shape == (0, 3)


def test_integer_tensor_to_negative_integer_tensor_power(device):
    x = tt.tensor([0, 2, 1, -1], dtype=tt.int8, device=device)
    y = tt.tensor([-3, -1, -2, -3], dtype=tt.int8, device=device)
    np.testing.assert_array_equal(to_numpy(x ** y), [0, 0, 1, -1])
    base = tt.tensor([[0], [2], [1], [-1], [5]], device=device)
    exp = tt.tensor([-3, -1, -2, -3, 0, 2], device=device)
    np.testing.assert_array_equal(to_numpy(base ** exp), [[0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 1, 4],
                                                          [1, 1, 1, 1, 1, 1], [-1, -1, 1, -1, 1, 1],
                                                          [0, 0, 0, 0, 1, 25]])


def test_mask_setitem_with_one_element_value_of_another_dtype(device):
    a = tt.zeros(4, device=device)
    a[tt.tensor([True, False, True, False], device=device)] = tt.tensor([2], device=device)
    np.testing.assert_array_equal(to_numpy(a), [2, 0, 2, 0])


def test_requires_grad_error_texts():
    i = tt.zeros(2, dtype=tt.int64)
    with pytest.raises(RuntimeError, match="^only Tensors of floating point dtype can require gradients$"):
        i.requires_grad_()
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype can require gradients$"):
        i.requires_grad = True
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype can require gradients$"):
        tt.ones(2, dtype=tt.int32, requires_grad=True)


# --------------------------------------------------------------------------- unfold / diagonal
def _layout(t):
    return tuple(t.shape), t.stride(), t.storage_offset(), t._base is not None


def test_unfold_is_a_view_with_torch_layout():
    x = tt.arange(24.0).reshape(2, 3, 4)
    assert _layout(x.unfold(2, 2, 1)) == ((2, 3, 3, 2), (12, 4, 1, 1), 0, True)
    assert _layout(x.unfold(1, 0, 1)) == ((2, 4, 4, 0), (12, 4, 1, 4), 0, True)
    assert _layout(tt.tensor(3.0).unfold(0, 1, 1)) == ((1,), (1,), 0, True)
    np.testing.assert_array_equal(to_numpy(tt.arange(7.0).unfold(0, 3, 2)), [[0, 1, 2], [2, 3, 4], [4, 5, 6]])
    for args, msg in [((-1, 5, 1), "maximum size for tensor at dimension 2 is 4 but size is 5"),
                      ((1, 2, 0), "step is 0 but must be > 0"), ((1, -1, 1), "size is -1 but must be >= 0")]:
        with pytest.raises(RuntimeError, match=f"^{msg}$"):
            x.unfold(*args)
    with pytest.raises(IndexError, match=r"expected to be in range of \[-3, 2\], but got 3"):
        x.unfold(3, 2, 1)


def test_unfold_values_and_gradient(device):
    x = tt.tensor(np.arange(14.0).reshape(2, 7), device=device)
    np.testing.assert_array_equal(to_numpy(x.unfold(1, 3, 2))[1], [[7, 8, 9], [9, 10, 11], [11, 12, 13]])
    w = tt.tensor(np.arange(14.0).reshape(2, 7), dtype=tt.float64, device=device, requires_grad=True)
    w.unfold(1, 3, 2).sum().backward()       # overlapping windows: positions 2 and 4 are read twice
    np.testing.assert_array_equal(to_numpy(w.grad), [[1, 1, 2, 1, 2, 1, 1]] * 2)
    assert w.unfold(1, 3, 2).grad_fn.name() == "UnfoldBackward0"


def test_diagonal_is_a_view_with_torch_layout():
    x = tt.arange(24.0).reshape(2, 3, 4)
    assert _layout(diagonal(x)) == ((4, 2), (1, 16), 0, True)
    assert _layout(x.diagonal(1, 0, 2)) == ((3, 2), (4, 13), 1, True)
    assert _layout(x.diagonal(-1, -1, 0)) == ((3, 2), (4, 13), 1, True)
    assert _layout(x.diagonal(5, 1, 2)) == ((2, 0), (12, 5), 0, True)
    with pytest.raises(RuntimeError, match="^diagonal dimensions cannot be identical 1, 1$"):
        x.diagonal(0, 1, 1)
    with pytest.raises(IndexError, match=r"expected to be in range of \[-1, 0\], but got 1"):
        tt.ones(3).diagonal()


def test_diag_embed_and_diagonal_scatter(device):
    v = tt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=device)
    e = diag_embed(v, 1, 0, 2)
    assert e.shape == (4, 2, 4) and e.stride() == (8, 4, 1)
    ref = np.zeros((4, 2, 4))
    for b in range(2):
        for i in range(3):
            ref[i, b, i + 1] = to_numpy(v)[b, i]
    np.testing.assert_array_equal(to_numpy(e), ref)
    np.testing.assert_array_equal(to_numpy(v.diag_embed()), np.stack([np.diag(r) for r in to_numpy(v)]))
    assert diag_embed(tt.ones(3, dtype=tt.int64, device=device)).dtype == tt.int64
    s = diagonal_scatter(tt.zeros(3, 4, device=device), tt.tensor([1, 2], device=device), -1)   # int src: cast
    np.testing.assert_array_equal(to_numpy(s), [[0, 0, 0, 0], [1, 0, 0, 0], [0, 2, 0, 0]])
    with pytest.raises(RuntimeError, match=r"^expected src to have a size equal to the slice of self. src size = "
                                           r"\[2\], slice size = \[3\]$"):
        diagonal_scatter(tt.zeros(3, 3, device=device), tt.ones(2, device=device))
    with pytest.raises(RuntimeError, match="^diagonal dimensions cannot be identical 0, 0$"):
        diag_embed(v, -1, 0, 0)


def test_diagonal_family_gradients(device):
    x = tt.tensor(np.random.default_rng(0).standard_normal((3, 4)), device=device, requires_grad=True)
    s = tt.tensor([0.5, -1.0, 2.0], dtype=tt.float64, device=device, requires_grad=True)
    assert gradcheck(lambda x, s: diagonal_scatter(x, s, 1).diagonal(-1) * 1, (x, s))
    names = {diagonal(x).grad_fn.name(), diag_embed(s).grad_fn.name(), diagonal_scatter(x, s).grad_fn.name()}
    assert names == {"DiagonalBackward0", "DiagEmbedBackward0", "DiagonalScatterBackward0"}


# --------------------------------------------------------------------------- inf * 0 corners of backward
def _grad(fn, values, device, g=None):
    x = tt.tensor(values, dtype=tt.float64, device=device, requires_grad=True)
    y = fn(x)
    go = tt.ones_like(y) if g is None else tt.tensor(g, dtype=tt.float64, device=device)
    return to_numpy(tt.autograd.grad(y, x, go)[0])


@pytest.mark.parametrize("fn, values, g, expected", [
    # prod: torch's exclusive products (never the NaN of out / x = inf * 0 / 0)
    (lambda x: x.prod(), [inf, 0.0], None, [0.0, inf]),
    (lambda x: x.prod(0), [inf, 0.0, 2.0], None, [0.0, inf, nan]),
    (lambda x: x.prod(), [0.0, 0.0, inf], None, [0.0, 0.0, 0.0]),        # several zeros: zeros
    (lambda x: x.prod(0), [0.0, 0.0, inf], None, [nan, nan, 0.0]),
    (lambda x: x.prod(), [inf, 0.0], 0.0, [0.0, nan]),
    (lambda x: x.prod(1), [[inf, 2.0], [0.0, 0.0], [3.0, inf]], None, [[2.0, inf], [0.0, 0.0], [inf, 3.0]]),
    # cumprod: torch's first-order rule with zeros
    (lambda x: x.cumprod(0), [0.0, 0.0, inf], None, [1.0, 0.0, 0.0]),
    (lambda x: x.cumprod(0), [0.0, 1e308, 1e308], None, [inf, 0.0, 0.0]),
    (lambda x: x.cumprod(0), [inf, 0.0, 2.0], None, [nan, inf, 0.0]),
    (lambda x: x.cumprod(0), [0.0, 0.0, inf], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]),
    # var: 2 / (n - correction) * g * (x - mean)
    (lambda x: x.var(), [inf, 2.0], None, [nan, -inf]),
    (lambda x: x.var(), [1e308, 1e308], None, [-inf, -inf]),
    (lambda x: x.var(1), [[inf, 2.0], [1.0, 1.0], [3.0, 4.0]], None, [[nan, -inf], [0.0, 0.0], [-1.0, 1.0]]),
    (lambda x: x.std(), [-inf, 3.0], None, [nan, nan]),
])
def test_backward_inf_corners_match_torch(device, fn, values, g, expected):
    np.testing.assert_array_equal(_grad(fn, values, device, g), np.array(expected))


# --------------------------------------------------------------------------- scatter_reduce / scatter(reduce=)
X = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
IDX = [[0, 1, 0], [1, 1, 0]]
SRC = [[10.0, 20.0, 30.0], [40.0, 50.0, 60.0]]
# torch 2.13's results, (reduce, include_self) -> value
SCATTER_REDUCE = {
    ("sum", True): [[11, 2, 93], [44, 75, 6]], ("sum", False): [[10, 2, 90], [40, 70, 6]],
    ("prod", True): [[10, 2, 5400], [160, 5000, 6]], ("prod", False): [[10, 2, 1800], [40, 1000, 6]],
    ("mean", True): [[5.5, 2, 31], [22, 25, 6]], ("mean", False): [[10, 2, 45], [40, 35, 6]],
    ("amax", True): [[10, 2, 60], [40, 50, 6]], ("amax", False): [[10, 2, 60], [40, 50, 6]],
    ("amin", True): [[1, 2, 3], [4, 5, 6]], ("amin", False): [[10, 2, 30], [40, 20, 6]],
}
# gradients of (out * arange(6).reshape(2, 3)).sum(): (grad self, grad src)
SCATTER_REDUCE_GRADS = {
    ("sum", True): ([[0, 1, 2], [3, 4, 5]], [[0, 4, 2], [3, 4, 2]]),
    ("prod", False): ([[0, 1, 0], [0, 0, 5]], [[0, 200, 120], [3, 80, 60]]),
    ("mean", True): ([[0, 1, 2 / 3], [1.5, 4 / 3, 5]], [[0, 4 / 3, 2 / 3], [1.5, 4 / 3, 2 / 3]]),
    ("amax", True): ([[0, 1, 0], [0, 0, 5]], [[0, 0, 0], [3, 4, 2]]),
    ("amin", False): ([[0, 1, 0], [0, 0, 5]], [[0, 4, 2], [3, 0, 0]]),
}


@pytest.mark.parametrize("reduce, include_self", sorted(SCATTER_REDUCE))
def test_scatter_reduce_values(device, reduce, include_self):
    x, src = tt.tensor(X, device=device), tt.tensor(SRC, device=device)
    out = x.scatter_reduce(0, tt.tensor(IDX, device=device), src, reduce, include_self=include_self)
    np.testing.assert_array_equal(to_numpy(out), SCATTER_REDUCE[reduce, include_self])


def test_scatter_reduce_integers_floor_the_mean(device):
    x = tt.tensor([[1, 2, 3], [4, 5, 6]], device=device)
    src = tt.tensor([[10, 20, 30], [40, 50, 61]], device=device)
    idx = tt.tensor(IDX, device=device)
    np.testing.assert_array_equal(to_numpy(x.scatter_reduce(0, idx, src, "mean")), [[5, 2, 31], [22, 25, 6]])
    np.testing.assert_array_equal(to_numpy(x.scatter_reduce(0, idx, src, "mean", include_self=False)),
                                  [[10, 2, 45], [40, 35, 6]])
    y = x.clone()
    assert y.scatter_reduce_(0, idx, src, "amax") is y
    np.testing.assert_array_equal(to_numpy(y), [[10, 2, 61], [40, 50, 6]])


@pytest.mark.parametrize("reduce, include_self", sorted(SCATTER_REDUCE_GRADS))
def test_scatter_reduce_gradients(device, reduce, include_self):
    x = tt.tensor(X, dtype=tt.float64, device=device, requires_grad=True)
    src = tt.tensor(SRC, dtype=tt.float64, device=device, requires_grad=True)
    out = x.scatter_reduce(0, tt.tensor(IDX, device=device), src, reduce, include_self=include_self)
    assert out.grad_fn.name() == "ScatterReduceBackward0"
    weights = tt.arange(6.0, dtype=tt.float64, device=device).reshape(2, 3)
    gx, gs = tt.autograd.grad((out * weights).sum(), [x, src])
    want_x, want_src = SCATTER_REDUCE_GRADS[reduce, include_self]
    np.testing.assert_allclose(to_numpy(gx), want_x, rtol=1e-12)
    np.testing.assert_allclose(to_numpy(gs), want_src, rtol=1e-12)


def test_scatter_with_reduce_and_errors(device):
    x, idx = tt.tensor(X, device=device), tt.tensor(IDX, device=device)
    with pytest.warns(UserWarning, match="The reduce argument of torch.scatter with Tensor src is deprecated"):
        out = x.scatter(0, idx, tt.tensor(SRC, device=device), reduce="add")
    np.testing.assert_array_equal(to_numpy(out), [[11, 2, 93], [44, 75, 6]])
    np.testing.assert_array_equal(to_numpy(x.scatter(0, idx, 2.0, reduce="multiply")), [[2, 2, 12], [8, 20, 6]])
    with pytest.raises(RuntimeError, match="^reduce argument must be either add or multiply.$"):
        x.scatter(0, idx, 2.0, reduce="mean")
    with pytest.raises(RuntimeError, match="^reduce argument must be either sum, prod, mean, amax or amin, got add$"):
        x.scatter_reduce(0, idx, x, "add")
    with pytest.raises(RuntimeError, match=r"^scatter\(\): Expected self.dtype to be equal to src.dtype$"):
        x.scatter_reduce(0, idx, x.double(), "sum")
    w = tt.tensor(X, device=device, requires_grad=True)
    y = w.scatter(0, idx, 2.0, reduce="multiply")
    with pytest.raises(RuntimeError, match="^derivative for aten::scatter is not implemented$"):
        y.sum().backward()


# --------------------------------------------------------------------------- norm(p='nuc')
def test_nuclear_norm_values_gradient_and_errors(device):
    x = tt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=tt.float64, device=device, requires_grad=True)
    n = tt.norm(x, "nuc")
    assert n.grad_fn.name() == "SumBackward1"
    np.testing.assert_allclose(n.item(), 10.280901636369205, rtol=1e-12)
    (g,) = tt.autograd.grad(n, x)        # U V^T
    np.testing.assert_allclose(to_numpy(g), [[-0.577791826824978, 0.11511669510440277, 0.8080252170337845],
                                             [0.7067460209916908, 0.565757439051024, 0.4247688571103566]], rtol=1e-10)
    assert tt.norm(tt.tensor([[3.0, 0.0], [0.0, -4.0]], device=device), "nuc").item() == 7.0
    batched = tt.arange(24.0, device=device).reshape(2, 3, 4).norm("nuc", dim=(2, 0))
    np.testing.assert_allclose(to_numpy(batched), [29.246047973632812, 38.253517150878906, 48.242427825927734],
                               rtol=1e-6)
    assert tt.ones(2, 3, 4, device=device).norm("nuc", dim=(2, 0), keepdim=True).shape == (1, 3, 1)
    assert tt.norm(tt.ones(0, 3, device=device), "nuc").item() == 0.0
    for args, msg in [((tt.ones(2, 3, 4), "nuc"), "linalg.matrix_norm: dim must be a 2-tuple. Got 0 1 2"),
                      ((tt.ones(3), "nuc"), "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."),
                      ((tt.ones(3, 3, dtype=tt.int64), "nuc"),
                       "linalg.matrix_norm: Expected a floating point or complex tensor as input. Got Long")]:
        with pytest.raises(RuntimeError, match=f"^{msg}$"):
            tt.norm(args[0].to(device), args[1])
