"""Factories: empty/zeros/ones/full, arange, linspace, eye, the *_like and new_* families,
random tensors and seeding, size-0 shapes and argument errors; on cpu and on cuda."""
import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy


def _dev(device):
    return tt.device("cuda", 0) if device == "cuda" else tt.device("cpu")


# ----------------------------------------------------------------------------- empty/zeros/ones/full
@pytest.mark.parametrize("size_args", [((2, 3),), (2, 3), ([2, 3],), (tt.Size([2, 3]),)],
                         ids=["tuple", "varargs", "list", "Size"])
@pytest.mark.parametrize("factory,fill", [(tt.zeros, 0.0), (tt.ones, 1.0), (tt.empty, None)],
                         ids=["zeros", "ones", "empty"])
def test_sized_factories(device, size_args, factory, fill):
    t = factory(*size_args, device=device)
    assert t.shape == (2, 3)
    assert t.dtype is tt.float32
    assert t.device == _dev(device)
    assert t.is_contiguous() and t.stride() == (3, 1)
    assert not t.requires_grad and t.is_leaf
    if fill is not None:
        np.testing.assert_array_equal(to_numpy(t), np.full((2, 3), fill, dtype=np.float32))


@pytest.mark.parametrize("dtype", [tt.bool, tt.int32, tt.int64, tt.float16, tt.bfloat16, tt.float64])
def test_zeros_ones_dtype(device, dtype):
    z = tt.zeros(3, 2, dtype=dtype, device=device)
    o = tt.ones(3, 2, dtype=dtype, device=device)
    assert z.dtype is dtype and o.dtype is dtype
    assert z.tolist() == [[0, 0]] * 3 and o.tolist() == [[1, 1]] * 3
    assert tt.empty(4, dtype=dtype, device=device).dtype is dtype


def test_zeros_0d(device):
    z = tt.zeros((), device=device)
    assert z.shape == () and z.dim() == 0 and z.item() == 0.0
    assert tt.ones([], device=device).item() == 1.0


@pytest.mark.parametrize("fill,dtype", [(7, tt.int64), (7.5, tt.float32), (True, tt.bool),
                                        (-2, tt.int64), (1e-3, tt.float32)])
def test_full_infers_dtype_from_the_fill_value(device, fill, dtype):
    t = tt.full((2, 3), fill, device=device)
    assert t.dtype is dtype
    assert t.device == _dev(device)
    np.testing.assert_array_equal(to_numpy(t), np.full((2, 3), fill, dtype=dtype.numpy_dtype))


def test_full_with_dtype(device):
    t = tt.full((4,), 2, dtype=tt.float64, device=device)
    assert t.dtype is tt.float64 and t.tolist() == [2.0] * 4
    u = tt.full([2, 2], 2.9, dtype=tt.int32, device=device)   # truncates like a cast
    assert u.dtype is tt.int32 and u.tolist() == [[2, 2], [2, 2]]
    assert tt.full((3,), float("inf"), device=device).tolist() == [float("inf")] * 3
    n = tt.full((2,), float("nan"), device=device)
    assert np.isnan(to_numpy(n)).all()


# ----------------------------------------------------------------------------- arange
@pytest.mark.parametrize("args,dtype", [
    ((5,), tt.int64), ((2, 9), tt.int64), ((1, 10, 3), tt.int64), ((5, 0, -1), tt.int64),
    ((10, -3, -4), tt.int64), ((0.0, 1.0, 0.25), tt.float32), ((2.5,), tt.float32),
    ((1, -2, -0.5), tt.float32), ((-1.5, 2), tt.float32), ((0, 1, 0.1), tt.float32),
    ((3, 3), tt.int64), ((0, 5, 10), tt.int64),
], ids=lambda v: str(v))
def test_arange_matches_numpy(device, args, dtype):
    t = tt.arange(*args, device=device)
    expected = np.arange(*args)
    assert t.dtype is dtype
    assert t.shape == expected.shape
    np.testing.assert_allclose(to_numpy(t), expected.astype(dtype.numpy_dtype), rtol=1e-6, atol=1e-7)


def test_arange_dtype_kwarg(device):
    t = tt.arange(4, dtype=tt.float64, device=device)
    assert t.dtype is tt.float64 and t.tolist() == [0.0, 1.0, 2.0, 3.0]
    u = tt.arange(0, 3, 0.5, dtype=tt.float16, device=device)
    assert u.dtype is tt.float16 and u.tolist() == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]


def test_arange_errors(device):
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        tt.arange(0, 5, 0, device=device)
    with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent with step sign"):
        tt.arange(0, 5, -1, device=device)
    with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent with step sign"):
        tt.arange(5, 0, device=device)


# ----------------------------------------------------------------------------- linspace
@pytest.mark.parametrize("start,end,steps", [(0, 1, 5), (-1, 1, 7), (3, -2, 4), (2.5, 2.5, 3), (0, 10, 1),
                                             (0, 1, 0), (-3.0, 7.0, 101)])
def test_linspace_matches_numpy(device, start, end, steps):
    t = tt.linspace(start, end, steps, device=device)
    assert t.dtype is tt.float32
    assert t.shape == (steps,)
    np.testing.assert_allclose(to_numpy(t), np.linspace(start, end, steps), rtol=1e-6, atol=1e-6)
    if steps > 1:
        assert t[0].item() == start and t[-1].item() == end


def test_linspace_dtype_and_errors(device):
    t = tt.linspace(0, 1, 5, dtype=tt.float64, device=device)
    assert t.dtype is tt.float64 and t.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        tt.linspace(0, 1, -1, device=device)


# ----------------------------------------------------------------------------- eye
@pytest.mark.parametrize("n,m", [(3, None), (2, 4), (4, 2), (1, None), (0, None), (0, 3)])
def test_eye(device, n, m):
    t = tt.eye(n, m, device=device) if m is not None else tt.eye(n, device=device)
    assert t.dtype is tt.float32 and t.device == _dev(device)
    np.testing.assert_array_equal(to_numpy(t), np.eye(n, m))


def test_eye_dtype(device):
    t = tt.eye(3, dtype=tt.int64, device=device)
    assert t.dtype is tt.int64 and t.tolist() == [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    b = tt.eye(2, dtype=tt.bool, device=device)
    assert b.tolist() == [[True, False], [False, True]]


# ----------------------------------------------------------------------------- *_like and new_*
LIKE = [
    ("zeros_like", lambda x, **kw: tt.zeros_like(x, **kw), 0),
    ("ones_like", lambda x, **kw: tt.ones_like(x, **kw), 1),
    ("full_like", lambda x, **kw: tt.full_like(x, 3, **kw), 3),
    ("empty_like", lambda x, **kw: tt.empty_like(x, **kw), None),
]


@pytest.mark.parametrize("name,fn,fill", LIKE, ids=[p[0] for p in LIKE])
def test_like_inherits_dtype_device_and_shape(device, name, fn, fill):
    x = tt.tensor([[1, 2, 3], [4, 5, 6]], dtype=tt.int32, device=device)
    t = fn(x)
    assert t.shape == x.shape and t.dtype is tt.int32 and t.device == x.device
    assert t.data_ptr() != x.data_ptr()
    if fill is not None:
        np.testing.assert_array_equal(to_numpy(t), np.full((2, 3), fill))
    # dtype and device can be overridden
    t2 = fn(x, dtype=tt.float64)
    assert t2.dtype is tt.float64 and t2.device == x.device
    other = "cpu" if device == "cuda" else "cuda"
    t3 = fn(x, device=other)
    assert t3.dtype is tt.int32 and t3.device == _dev(other)
    if fill is not None:
        np.testing.assert_array_equal(to_numpy(t3), np.full((2, 3), fill))


def test_like_does_not_inherit_requires_grad(device):
    x = tt.ones(2, device=device, requires_grad=True)
    assert not tt.zeros_like(x).requires_grad
    assert tt.zeros_like(x, requires_grad=True).requires_grad


def test_rand_like_and_randn_like(device):
    x = tt.zeros(40, 50, dtype=tt.float64, device=device)
    r = tt.rand_like(x)
    assert r.shape == x.shape and r.dtype is tt.float64 and r.device == x.device
    a = to_numpy(r)
    assert a.min() >= 0 and a.max() < 1 and abs(a.mean() - 0.5) < 0.05
    n = tt.randn_like(x, dtype=tt.float32)
    assert n.dtype is tt.float32
    b = to_numpy(n)
    assert abs(b.mean()) < 0.1 and 0.9 < b.std() < 1.1


@pytest.mark.parametrize("method,args,expected", [
    ("new_zeros", ((2, 3),), np.zeros((2, 3))),
    ("new_zeros", (2, 3), np.zeros((2, 3))),
    ("new_ones", ((4,),), np.ones(4)),
    ("new_ones", (2, 1), np.ones((2, 1))),
    ("new_full", ((2, 2), 5), np.full((2, 2), 5)),
    ("new_tensor", ([1, 2, 3],), np.array([1, 2, 3])),
    ("new_empty", ((3, 2),), None),
    ("new_empty", (0,), None),
], ids=lambda v: str(v) if isinstance(v, (str, tuple)) else "")
def test_new_methods_take_dtype_and_device_from_self(device, method, args, expected):
    x = tt.zeros(1, dtype=tt.float64, device=device)
    t = getattr(x, method)(*args)
    assert t.dtype is tt.float64               # even for int data / int fill, as torch
    assert t.device == x.device
    if expected is not None:
        assert t.shape == expected.shape
        np.testing.assert_array_equal(to_numpy(t), expected)
    else:
        assert t.shape == (args[0] if isinstance(args[0], tuple) else args)
    t2 = getattr(x, method)(*args, dtype=tt.int32)
    assert t2.dtype is tt.int32 and t2.device == x.device
    other = "cpu" if device == "cuda" else "cuda"
    t3 = getattr(x, method)(*args, device=other)
    assert t3.dtype is tt.float64 and t3.device == _dev(other)


def test_new_tensor_copies(device):
    x = tt.zeros(1, device=device)
    src = tt.tensor([1.0, 2.0], device=device)
    y = x.new_tensor(src)
    assert y.data_ptr() != src.data_ptr()
    np.testing.assert_array_equal(to_numpy(y), [1.0, 2.0])


# ----------------------------------------------------------------------------- random
@pytest.mark.parametrize("dtype", [tt.float32, tt.float64, tt.float16, tt.bfloat16])
def test_rand_is_in_unit_interval(device, dtype):
    t = tt.rand(3000, dtype=dtype, device=device)
    assert t.dtype is dtype and t.shape == (3000,) and t.device == _dev(device)
    a = to_numpy(t)
    assert a.min() >= 0.0
    assert a.max() <= 1.0 if dtype in (tt.float16, tt.bfloat16) else a.max() < 1.0
    assert abs(a.mean() - 0.5) < 0.03
    assert abs(a.var() - 1 / 12) < 0.01
    assert len(np.unique(a)) > (100 if dtype in (tt.float16, tt.bfloat16) else 2900)


def test_rand_default_dtype_and_shapes(device):
    t = tt.rand(2, 3, device=device)
    assert t.dtype is tt.float32 and t.shape == (2, 3)
    assert tt.rand((4, 1), device=device).shape == (4, 1)
    assert tt.randn([5], device=device).shape == (5,)


@pytest.mark.parametrize("dtype", [tt.float32, tt.float64])
def test_randn_moments(device, dtype):
    a = to_numpy(tt.randn(4000, dtype=dtype, device=device)).astype(np.float64)
    assert abs(a.mean()) < 0.08
    assert 0.93 < a.std() < 1.07
    assert ((a > 0).mean() - 0.5) < 0.05
    assert np.abs(a).max() < 6.5
    assert (np.abs(a) < 1).mean() == pytest.approx(0.6827, abs=0.04)   # one-sigma mass


def test_normal_and_uniform_with_parameters(device):
    t = tt.empty(4000, device=device)
    assert t.normal_(3.0, 0.5) is t
    a = to_numpy(t)
    assert abs(a.mean() - 3.0) < 0.04 and abs(a.std() - 0.5) < 0.04
    assert t.uniform_(-2.0, 5.0) is t
    b = to_numpy(t)
    assert b.min() >= -2.0 and b.max() < 5.0
    assert abs(b.mean() - 1.5) < 0.2
    assert b.min() < -1.9 and b.max() > 4.9
    t.normal_(mean=-1.0, std=0.0)
    np.testing.assert_array_equal(to_numpy(t), -1.0)
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0"):
        t.normal_(0.0, -1.0)


def test_random_fill_of_a_view_touches_only_the_view(device):
    x = tt.zeros(6, 8, device=device)
    x[1::2, 2:5].uniform_(1.0, 2.0)
    a = to_numpy(x)
    mask = np.zeros((6, 8), bool)
    mask[1::2, 2:5] = True
    assert (a[~mask] == 0).all()
    assert ((a[mask] >= 1.0) & (a[mask] < 2.0)).all()


def test_random_fill_refuses_leaves_requiring_grad(device):
    x = tt.zeros(3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x.normal_()
    with tt.no_grad():
        x.uniform_()
    assert ((to_numpy(x) >= 0) & (to_numpy(x) < 1)).all()


def test_manual_seed_reproducibility(device):
    tt.manual_seed(1234)
    a1 = to_numpy(tt.randn(64, device=device))
    a2 = to_numpy(tt.rand(3, 5, device=device))
    tt.manual_seed(1234)
    b1 = to_numpy(tt.randn(64, device=device))
    b2 = to_numpy(tt.rand(3, 5, device=device))
    np.testing.assert_array_equal(a1, b1)
    np.testing.assert_array_equal(a2, b2)
    tt.manual_seed(1235)
    c1 = to_numpy(tt.randn(64, device=device))
    assert not np.array_equal(a1, c1)
    # successive draws after one seed differ
    tt.manual_seed(7)
    d1 = to_numpy(tt.rand(32, device=device))
    d2 = to_numpy(tt.rand(32, device=device))
    assert not np.array_equal(d1, d2)
    assert tt.initial_seed() == 7


def test_manual_seed_covers_normal_and_uniform(device):
    tt.manual_seed(99)
    a = to_numpy(tt.empty(20, device=device).normal_(1.0, 2.0))
    tt.manual_seed(99)
    b = to_numpy(tt.empty(20, device=device).normal_(1.0, 2.0))
    np.testing.assert_array_equal(a, b)


def test_explicit_generator(device):
    g1 = tt.Generator(device).manual_seed(5)
    a = to_numpy(tt.rand(10, device=device, generator=g1))
    g2 = tt.Generator(device)
    g2.manual_seed(5)
    b = to_numpy(tt.rand(10, device=device, generator=g2))
    np.testing.assert_array_equal(a, b)
    assert g1.initial_seed() == 5


def test_random_rejects_integer_tensors(device):
    with pytest.raises((NotImplementedError, RuntimeError)):
        tt.zeros(3, dtype=tt.int64, device=device).uniform_()


# ----------------------------------------------------------------------------- size 0
@pytest.mark.parametrize("make,shape", [
    (lambda d: tt.zeros(0, device=d), (0,)),
    (lambda d: tt.ones(2, 0, 3, device=d), (2, 0, 3)),
    (lambda d: tt.empty(0, 4, device=d), (0, 4)),
    (lambda d: tt.full((0,), 2.0, device=d), (0,)),
    (lambda d: tt.arange(0, device=d), (0,)),
    (lambda d: tt.arange(4, 4, device=d), (0,)),
    (lambda d: tt.linspace(0, 1, 0, device=d), (0,)),
    (lambda d: tt.eye(0, device=d), (0, 0)),
    (lambda d: tt.rand(0, 3, device=d), (0, 3)),
    (lambda d: tt.randn(3, 0, device=d), (3, 0)),
    (lambda d: tt.tensor([], device=d), (0,)),
    (lambda d: tt.tensor([[], []], device=d), (2, 0)),
    (lambda d: tt.zeros_like(tt.zeros(0, 2, device=d)), (0, 2)),
], ids=lambda v: str(v) if isinstance(v, tuple) else "")
def test_size_zero(device, make, shape):
    t = make(device)
    assert t.shape == shape and t.numel() == 0
    assert t.device == _dev(device)
    assert to_numpy(t).shape == shape
    assert t.tolist() == np.zeros(shape).tolist()


def test_size_zero_ops(device):
    t = tt.ones(0, 3, device=device)
    assert (t * 2 + 1).shape == (0, 3)
    assert t.sum().item() == 0.0
    assert t.sum(0).tolist() == [0.0, 0.0, 0.0]
    assert t.t().shape == (3, 0)
    assert t.reshape(3, 0, 5).shape == (3, 0, 5)


# ----------------------------------------------------------------------------- requires_grad / errors
@pytest.mark.parametrize("make", [
    lambda d: tt.zeros(2, device=d, requires_grad=True),
    lambda d: tt.ones(2, 2, device=d, requires_grad=True),
    lambda d: tt.empty(3, device=d, requires_grad=True),
    lambda d: tt.full((2,), 1.5, device=d, requires_grad=True),
    lambda d: tt.rand(2, device=d, requires_grad=True),
    lambda d: tt.randn(2, device=d, requires_grad=True),
    lambda d: tt.arange(0.0, 3.0, device=d, requires_grad=True),
    lambda d: tt.linspace(0, 1, 3, device=d, requires_grad=True),
    lambda d: tt.eye(2, device=d, requires_grad=True),
    lambda d: tt.tensor([1.0, 2.0], device=d, requires_grad=True),
    lambda d: tt.ones_like(tt.zeros(2, device=d), requires_grad=True),
    lambda d: tt.zeros(2, device=d).new_zeros(3, requires_grad=True),
])
def test_requires_grad_factory_kwarg(device, make):
    t = make(device)
    assert t.requires_grad and t.is_leaf and t.grad_fn is None and t.grad is None
    (t * 2).sum().backward()
    np.testing.assert_array_equal(to_numpy(t.grad), np.full(tuple(t.shape), 2.0))


def test_requires_grad_on_integer_factory_raises(device):
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype can require gradients$"):
        tt.zeros(2, dtype=tt.int64, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype can require gradients$"):
        tt.arange(3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype can require gradients$"):
        tt.tensor([1, 2], device=device, requires_grad=True)


@pytest.mark.parametrize("factory", [tt.zeros, tt.ones, tt.empty, tt.rand, tt.randn])
def test_negative_dimension_raises(device, factory):
    with pytest.raises(RuntimeError, match=r"Trying to create tensor with negative dimension -3: \[2, -3\]"):
        factory(2, -3, device=device)
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        factory((-1,), device=device)


def test_full_negative_dimension_raises(device):
    with pytest.raises(RuntimeError, match="negative dimension -2"):
        tt.full((-2, 2), 1.0, device=device)


def test_non_integer_size_raises(device):
    with pytest.raises(TypeError):
        tt.zeros(2.5, device=device)


@pytest.mark.parametrize("dtype", [tt.int64, tt.int8, tt.uint8, tt.float32, tt.bfloat16], ids=str)
def test_randint_range_dtype_and_reproducibility(dtype, device):
    low = 0 if dtype is tt.uint8 else -3
    tt.manual_seed(7)
    a = tt.randint(low, 5, (7, 41), dtype=dtype, device=device)     # crosses a 128-element block
    assert a.dtype is dtype and tuple(a.shape) == (7, 41)
    v = to_numpy(a).astype(np.float64)
    assert set(np.unique(v)) == set(range(low, 5))                  # integers, every one hit
    tt.manual_seed(7)
    np.testing.assert_array_equal(to_numpy(tt.randint(low, 5, (7, 41), dtype=dtype, device=device)), to_numpy(a))


def test_randint_forms_random_and_errors(device):
    x = tt.randint(10, (1000,), device=device)
    assert x.dtype is tt.int64 and 0 <= to_numpy(x).min() and to_numpy(x).max() <= 9
    counts = np.bincount(to_numpy(x), minlength=10)
    assert counts.min() > 50                                        # roughly uniform over 0..9
    assert tt.randint_like(x, 3).dtype is tt.int64 and to_numpy(tt.randint_like(x, 3)).max() <= 2
    b = tt.empty(300, dtype=tt.bool, device=device).random_()
    assert set(np.unique(to_numpy(b))) == {False, True}
    y = tt.zeros(20, 10, device=device).t()                         # written through strides
    y.random_(2, 6)
    assert set(np.unique(to_numpy(y))) == {2.0, 3.0, 4.0, 5.0}
    z = tt.zeros(50, dtype=tt.int32, device=device).random_(4)
    assert to_numpy(z).max() <= 3 and to_numpy(z).min() >= 0
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to', but got from=5 >= to=5"):
        tt.randint(5, 5, (3,), device=device)
    with pytest.raises(RuntimeError, match="^from is out of bounds for unsigned char$"):
        tt.randint(-1, 3, (2,), dtype=tt.uint8, device=device)
    with pytest.raises(RuntimeError, match="^to - 1 is out of bounds for signed char$"):
        tt.zeros(2, dtype=tt.int8, device=device).random_(0, 200)
    with pytest.raises(NotImplementedError, match="wider than 2\\*\\*32"):
        tt.zeros(3, dtype=tt.int64, device=device).random_(0, 2 ** 40)
