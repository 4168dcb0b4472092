"""Issue 16 item 3: output layouts as torch's.

Elementwise ops keep their inputs' memory layout (TensorIterator's output strides), clone and
the *_like factories keep it by preserve_format, and memory_format= names contiguous_format,
channels_last or channels_last_3d. Every expected stride below was read from PyTorch 2.13
(the side-venv oracle) for the same shapes and strides; the values are checked against NumPy,
on cpu and on the (emulated) cuda device, so both backends write permuted outputs correctly.
"""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy

# (op, operands as (shape, strides), torch's output strides); operands are views of one buffer.
# "where" takes (condition, input, other); "add_scalar" is x + 2.
TORCH_CASES = [
    ('exp', [((2, 3, 3), (3, 6, 1))], (3, 6, 1)),
    ('clone', [((0, 4, 3), (12, 3, 1))], (12, 3, 1)),
    ('add_scalar', [((1, 1, 1), (1, 1, 1))], (1, 1, 1)),
    ('add', [((3, 3, 2), (1, 3, 9)), ((3, 3, 2), (3, 1, 9))], (1, 3, 9)),
    ('where', [((), ()), ((2, 5, 2), (2, 0, 1)), ((2,), (1,))], (10, 2, 1)),
    ('add_scalar', [((0, 1, 0), (1, 1, 1))], (0, 0, 1)),
    ('empty_like', [((2, 2), (1, 2))], (1, 2)),
    ('exp', [((4, 0, 3), (2, 8, 8))], (3, 3, 1)),
    ('where', [((), ()), ((4, 3, 1, 5), (5, 20, 5, 1)), ((), ())], (5, 20, 5, 1)),
    ('add', [((2, 4), (2, 8)), ((2, 4), (4, 1))], (1, 2)),
    ('empty_like', [((3, 1, 4, 4), (16, 7, 4, 1))], (16, 7, 4, 1)),
    ('clone', [((2, 1, 1), (1, 1, 2))], (1, 1, 2)),
    ('add_scalar', [((1, 3, 4, 1), (12, 1, 3, 3))], (12, 1, 3, 3)),
    ('clone', [((3, 3), (1, 6))], (1, 3)),
    ('add_scalar', [((1, 4, 4), (1, 1, 8))], (1, 1, 4)),
    ('add_scalar', [((4, 2), (0, 1))], (2, 1)),
    ('add', [((2, 1, 1, 3), (3, 3, 3, 1)), ((2, 1, 1, 3), (3, 3, 3, 1))], (3, 3, 3, 1)),
    ('exp', [((1, 2, 5), (2, 1, 0))], (10, 5, 1)),
    ('empty_like', [((0, 0, 4), (1, 1, 2))], (1, 1, 2)),
    ('clone', [((2, 1, 2), (1, 4, 2))], (1, 4, 2)),
    ('clone', [((1, 2, 3), (1, 1, 2))], (1, 1, 2)),
    ('where', [((), ()), ((3, 4), (1, 3)), ((), ())], (1, 3)),
    ('add', [((3, 1, 4, 3), (3, 1, 9, 1)), ((3, 1, 4, 3), (12, 12, 3, 1))], (3, 1, 9, 1)),
    ('clone', [((2, 3, 1), (6, 2, 2))], (3, 1, 1)),
    ('where', [((5, 1, 2, 1), (2, 2, 1, 1)), ((5, 1, 2, 4), (1, 10, 5, 10)), ((2, 4), (4, 1))], (2, 10, 1, 10)),
    ('clone', [((3, 5, 2), (10, 2, 1))], (10, 2, 1)),
    ('where', [((), ()), ((2, 3), (1, 2)), ((1,), (1,))], (1, 2)),
    ('exp', [((4, 2), (2, 16))], (1, 4)),
    ('add', [((1, 4, 2), (8, 2, 1)), ((1, 4, 2), (8, 1, 4))], (8, 2, 1)),
    ('add', [((3, 2, 2, 2), (8, 2, 1, 4)), ((3, 2, 2, 2), (4, 0, 2, 1))], (8, 2, 1, 4)),
    ('empty_like', [((1, 3, 4), (1, 4, 1))], (1, 4, 1)),
    ('add', [((), ()), ((2, 2), (1, 2))], (1, 2)),
    ('exp', [((2, 4, 1), (1, 2, 8))], (1, 2, 8)),
    ('exp', [((2, 3, 4), (1, 8, 2))], (1, 8, 2)),
    ('exp', [((1, 1), (1, 2))], (1, 1)),
    ('add', [((2, 2), (1, 2)), ((), ())], (1, 2)),
    ('clone', [((1, 1, 4), (1, 2, 2))], (1, 1, 1)),
    ('where', [((4,), (1,)), ((2, 4), (1, 2)), ((4,), (2,))], (1, 2)),
    ('where', [((1,), (1,)), ((4, 1), (1, 7)), ((4, 1), (1, 1))], (1, 4)),
    ('where', [((4,), (1,)), ((1, 4), (1, 1)), ((), ())], (1, 1)),
    ('where', [((), ()), ((2, 2), (1, 2)), ((), ())], (1, 2)),
    ('add', [((1, 1, 4, 1), (4, 4, 1, 1)), ((1, 1, 4, 1), (4, 4, 1, 1))], (4, 4, 1, 1)),
    ('clone', [((4, 3, 1, 2), (6, 1, 6, 3))], (6, 1, 6, 3)),
    ('exp', [((2, 3), (3, 1))], (3, 1)),
    ('add', [((4, 5), (1, 4)), ((4, 5), (5, 1))], (1, 4)),
    ('exp', [((2, 1, 1), (2, 1, 1))], (1, 1, 1)),
    ('add_scalar', [((4, 2, 1), (1, 0, 1))], (2, 1, 1)),
    ('add', [((2, 3), (1, 2)), ((2, 3), (1, 2))], (1, 2)),
]


def _operand(shape, strides, device, dtype=tt.float32, seed=0):
    """A view with ``shape``/``strides`` of a buffer of distinct values (any strides, stride 0 too)."""
    span = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if 0 not in shape else 1
    rng = np.random.default_rng(seed)
    base = tt.tensor(rng.standard_normal(max(span, 1)).astype(np.float32), dtype=dtype, device=device)
    return tt.as_strided(base, shape, strides)


def _host(t):
    """NumPy values of a view, read through its own strides (no copy through tritensor)."""
    return to_numpy(t)


# every case on cpu; every fourth also on the emulated cuda device (its launches are slow)
_CASE_PARAMS = [pytest.param(c, "cpu", id=f"cpu-{c[0]}-{c[1]}") for c in TORCH_CASES] + [
    pytest.param(c, "cuda", id=f"cuda-{c[0]}-{c[1]}") for c in TORCH_CASES[::4]]


@pytest.mark.parametrize("case, device", _CASE_PARAMS)
def test_output_strides_as_torch(case, device):
    op, operands, expected = case
    ts = [_operand(s, st, device, seed=i) for i, (s, st) in enumerate(operands)]
    if op == "exp":
        out, want = ts[0].exp(), np.exp(_host(ts[0]))
    elif op == "add":
        out, want = ts[0] + ts[1], _host(ts[0]) + _host(ts[1])
    elif op == "add_scalar":
        out, want = ts[0] + 2, _host(ts[0]) + 2
    elif op == "where":
        cond = ts[0] > 0
        out, want = tt.where(cond, ts[1], ts[2]), np.where(_host(ts[0]) > 0, _host(ts[1]), _host(ts[2]))
    elif op == "clone":
        out, want = ts[0].clone(), _host(ts[0])
    else:
        out, want = tt.empty_like(ts[0]), None
    assert out.stride() == expected
    assert out.device.type == device
    if want is not None:
        np.testing.assert_allclose(_host(out), want, rtol=1e-6)
    # the fast path (the signature cached by dispatch) allocates the same layout
    again = {"exp": lambda: ts[0].exp(), "add": lambda: ts[0] + ts[1], "add_scalar": lambda: ts[0] + 2,
             "where": lambda: tt.where(ts[0] > 0, ts[1], ts[2]), "clone": lambda: ts[0].clone(),
             "empty_like": lambda: tt.empty_like(ts[0])}[op]()
    assert again.stride() == expected


def test_transposed_inputs(device):
    x = tt.arange(12, dtype=tt.float32, device=device).reshape(3, 4)
    t = x.t()
    ref = np.arange(12, dtype=np.float32).reshape(3, 4).T
    for out, want in [(t.exp(), np.exp(ref)), (t + t, ref + ref), (t * 2, ref * 2), (t.sigmoid(), None),
                      (t.clamp(1, 5), np.clip(ref, 1, 5)), (t < 5, ref < 5), (t.sign(), np.sign(ref)),
                      (t ** 2, ref ** 2), (tt.where(t > 3, t, 0.0), np.where(ref > 3, ref, 0)),
                      (t.double(), ref), (t.clone(), ref), (t.abs(), ref), (t.relu(), ref)]:
        assert out.stride() == (1, 4) and not out.is_contiguous()
        if want is not None:
            np.testing.assert_allclose(to_numpy(out), want, rtol=1e-6)
    # mixed layouts: the first operand decides, broadcast dims aside
    c = t.contiguous()
    assert c.stride() == (3, 1)
    assert (t * c).stride() == (1, 4) and (c * t).stride() == (3, 1)
    np.testing.assert_allclose(to_numpy(c * t), ref * ref)
    assert (t + tt.ones(3, device=device)).stride() == (1, 4)
    assert (tt.ones(4, 1, device=device) + t).stride() == (1, 4)      # the broadcast operand is ignored
    # torch: a cond tensor comes first in where; pow(number, t) and masked_fill allocate contiguous
    assert tt.where(c > 3, t, t).stride() == (3, 1)
    assert (2 ** t).stride() == (3, 1)
    assert t.masked_fill(t > 3, 1.0).stride() == (3, 1)
    np.testing.assert_allclose(to_numpy(t.masked_fill(t > 3, 1.0)), np.where(ref > 3, 1, ref))
    # non-dense inputs: dense outputs with the dims in the input's order
    assert x[:, ::2].exp().stride() == (2, 1)
    assert t[:, ::2].exp().stride() == (1, 4)
    np.testing.assert_allclose(to_numpy(t[:, ::2].exp()), np.exp(ref[:, ::2]), rtol=1e-6)


def test_views_of_results_follow_torch():
    t = tt.zeros(3, 4).t()
    with pytest.raises(RuntimeError, match="view size is not compatible with input tensor's size and stride"):
        t.exp().view(-1)
    assert t.exp().t().view(-1).shape == (12,)
    assert t.exp().reshape(-1).shape == (12,)


def test_permuted_and_channels_last_inputs(device):
    base = tt.arange(120, dtype=tt.float32, device=device).reshape(2, 3, 4, 5)
    p = base.permute(0, 2, 3, 1)
    assert p.stride() == (60, 5, 1, 20)
    assert p.exp().stride() == (60, 5, 1, 20)
    assert (p + p).stride() == (60, 5, 1, 20)
    cl = base.contiguous(memory_format=tt.channels_last)
    assert cl.stride() == (60, 1, 15, 3) and cl.is_contiguous(memory_format=tt.channels_last)
    np.testing.assert_array_equal(to_numpy(cl), to_numpy(base))
    assert (cl + cl).stride() == (60, 1, 15, 3)
    assert (cl + 1).stride() == (60, 1, 15, 3)
    assert (cl + tt.zeros(3, 1, 1, device=device)).stride() == (60, 1, 15, 3)
    assert (cl + base).stride() == (60, 1, 15, 3)
    assert (base + cl).stride() == (60, 20, 5, 1)
    np.testing.assert_array_equal(to_numpy(cl * 2 + base), to_numpy(base) * 3)


def test_size_one_and_size_zero_dims():
    # contiguous with an odd stride on its size-1 dim: unary ops copy it, x + 2 re-sorts (torch)
    x = tt.as_strided(tt.zeros(12), (3, 1, 4), (4, 1, 1))
    assert x.is_contiguous()
    assert x.exp().stride() == (4, 4, 1)
    assert (x + 2).stride() == (4, 1, 1)
    assert (x ** 2).stride() == (4, 4, 1)
    assert x.clone().stride() == (4, 1, 1)
    assert tt.zeros(0, 3).t().exp().stride() == (1, 1)
    assert (tt.zeros(0, 3).t() + tt.zeros(3, 1)).stride() == (1, 3)
    assert (tt.zeros(2, 0, 3).permute(2, 0, 1) + 1).stride() == (1, 0, 3)
    assert (tt.tensor(1.0) + tt.zeros(3, 4).t()).stride() == (1, 4)
    assert (tt.tensor(1.0) + 2).stride() == ()


def test_reductions_softmax_scans_stay_contiguous():
    p = tt.zeros(2, 3, 4, 5).permute(0, 2, 3, 1)
    assert p.sum(1, keepdim=True).stride() == (15, 15, 3, 1)
    assert p.sum((1, 2), keepdim=True).stride() == (3, 3, 3, 1)
    assert p.amax(1, keepdim=True).stride() == (15, 15, 3, 1)
    assert p.softmax(1).stride() == (60, 15, 3, 1)
    assert tt.zeros(3, 4).t().cumsum(0).stride() == (3, 1)


# --------------------------------------------------------------------------- clone and *_like
def test_clone_memory_formats(device):
    x = tt.arange(12, dtype=tt.float32, device=device).reshape(3, 4)
    t = x.t()
    assert t.clone().stride() == (1, 4)
    assert t.clone(memory_format=tt.preserve_format).stride() == (1, 4)
    assert t.clone(memory_format=tt.contiguous_format).stride() == (3, 1)
    assert x[:, ::2].clone().stride() == (2, 1)
    assert t[::2].clone().stride() == (1, 2)
    np.testing.assert_array_equal(to_numpy(t[::2].clone()), to_numpy(x).T[::2])
    with pytest.raises(RuntimeError, match="^required rank 4 tensor to use channels_last format$"):
        x.clone(memory_format=tt.channels_last)
    with pytest.raises(TypeError, match=r"^clone\(\): argument 'memory_format' must be torch.memory_format, not int$"):
        x.clone(memory_format=3)
    y = tt.arange(720, dtype=tt.float32, device=device).reshape(2, 3, 4, 5, 6)
    c3 = y.clone(memory_format=tt.channels_last_3d)
    assert c3.stride() == (360, 1, 90, 18, 3) and c3.is_contiguous(memory_format=tt.channels_last_3d)
    np.testing.assert_array_equal(to_numpy(c3), to_numpy(y))
    assert t.double().stride() == (1, 4) and t[:, ::2].double().stride() == (1, 4)


def test_contiguous_memory_formats():
    x = tt.zeros(2, 3, 4, 5)
    assert x.contiguous() is x
    cl = x.contiguous(memory_format=tt.channels_last)
    assert cl.stride() == (60, 1, 15, 3)
    assert cl.contiguous(memory_format=tt.channels_last) is cl
    assert cl.contiguous().stride() == (60, 20, 5, 1)
    assert not cl.is_contiguous() and cl.is_contiguous(memory_format=tt.channels_last)
    assert x.is_contiguous(memory_format=tt.preserve_format)       # torch: the row-major question
    assert not x.permute(0, 2, 3, 1).is_contiguous(memory_format=tt.preserve_format)
    assert x.contiguous(memory_format=tt.preserve_format) is x
    with pytest.raises(RuntimeError, match="^preserve memory format is unsupported by the contiguous operator$"):
        x.permute(0, 2, 3, 1).contiguous(memory_format=tt.preserve_format)
    with pytest.raises(RuntimeError, match="^required rank 5 tensor to use channels_last_3d format$"):
        x.contiguous(memory_format=tt.channels_last_3d)
    with pytest.raises(TypeError, match=r"^contiguous\(\): argument 'memory_format' must be torch.memory_format, not int$"):
        x.contiguous(memory_format=3)
    with pytest.raises(TypeError, match=r"^is_contiguous\(\): argument 'memory_format' must be torch.memory_format, not NoneType$"):
        x.is_contiguous(memory_format=None)
    # torch's flags: size-1 dims ignored; an empty tensor is contiguous but not channels-last
    assert tt.zeros(2, 3, 1, 1).is_contiguous(memory_format=tt.channels_last)
    assert tt.zeros(2, 3, 1, 1, 1).is_contiguous(memory_format=tt.channels_last_3d)
    assert not tt.zeros(2, 0, 3, 3).is_contiguous(memory_format=tt.channels_last)
    assert not tt.zeros(3, 4).is_contiguous(memory_format=tt.channels_last)
    assert tt.zeros(2, 0, 1, 3).contiguous(memory_format=tt.channels_last).stride() == (0, 1, 0, 0)
    assert tt.zeros(0, 3, 0, 2).contiguous(memory_format=tt.channels_last).stride() == (0, 1, 6, 3)


@pytest.mark.parametrize("factory", ["empty_like", "zeros_like", "ones_like", "full_like", "rand_like",
                                     "randn_like", "randint_like"])
def test_like_factories_keep_the_layout(factory, device):
    make = {"full_like": lambda x, **kw: tt.full_like(x, 7, **kw),
            "randint_like": lambda x, **kw: tt.randint_like(x, 3, **kw)}.get(
        factory, getattr(tt, factory))
    x = tt.zeros(3, 4, device=device)
    assert make(x.t()).stride() == (1, 4)
    assert make(x.t()[::2]).stride() == (1, 2)
    assert make(x.t(), memory_format=tt.contiguous_format).stride() == (3, 1)
    assert make(x.t(), dtype=tt.float64).stride() == (1, 4)
    y = tt.zeros(2, 3, 4, 5, device=device)
    assert make(y, memory_format=tt.channels_last).stride() == (60, 1, 15, 3)
    with pytest.raises(RuntimeError, match="^required rank 4 tensor to use channels_last format$"):
        make(x, memory_format=tt.channels_last)
    with pytest.raises(RuntimeError, match="^required rank 5 tensor to use channels_last_3d format$"):
        make(y, memory_format=tt.channels_last_3d)
    with pytest.raises(TypeError, match=rf"^{factory}\(\): argument 'memory_format' must be torch.memory_format, not str$"):
        make(x, memory_format="channels_last")
    out = make(x.t())
    values = to_numpy(out)
    if factory == "zeros_like":
        assert (values == 0).all()
    elif factory == "ones_like":
        assert (values == 1).all()
    elif factory == "full_like":
        assert (values == 7).all()
    elif factory == "rand_like":
        assert ((values >= 0) & (values < 1)).all()
    elif factory == "randint_like":
        assert set(np.unique(values)) <= {0, 1, 2}


def test_empty_memory_format():
    assert tt.empty(2, 3, 4, 5, memory_format=tt.channels_last).stride() == (60, 1, 15, 3)
    assert tt.empty(2, 3, 4, 5, 6, memory_format=tt.channels_last_3d).stride() == (360, 1, 90, 18, 3)
    assert tt.empty(2, 3, memory_format=tt.contiguous_format).stride() == (3, 1)
    with pytest.raises(RuntimeError, match="^unsupported memory format Preserve$"):
        tt.empty(2, 3, memory_format=tt.preserve_format)
    with pytest.raises(RuntimeError, match="^required rank 4 tensor to use channels_last format$"):
        tt.empty(2, 3, memory_format=tt.channels_last)


def test_memory_format_objects():
    assert repr(tt.channels_last) == "tritensor.channels_last" and str(tt.preserve_format) == "tritensor.preserve_format"
    assert repr(tt.contiguous_format) == "tritensor.contiguous_format"
    assert repr(tt.channels_last_3d) == "tritensor.channels_last_3d"
    assert isinstance(tt.channels_last, tt.memory_format)
    assert pickle.loads(pickle.dumps(tt.channels_last)) is tt.channels_last
    with pytest.raises(TypeError, match="^cannot create 'tritensor.memory_format' instances$"):
        tt.memory_format()


# --------------------------------------------------------------------------- autograd
def test_gradients_through_transposed_layouts(device):
    rng = np.random.default_rng(0)
    a_np, b_np = rng.standard_normal((3, 4)), rng.standard_normal((4, 3))
    a = tt.tensor(a_np, dtype=tt.float64, device=device, requires_grad=True)
    b = tt.tensor(b_np, dtype=tt.float64, device=device, requires_grad=True)
    y = a.t().exp() * b + a.t().clone() * 2
    assert y.stride() == (1, 4)
    (y * tt.tensor(np.arange(12.0).reshape(4, 3), device=device)).sum().backward()
    w = np.arange(12.0).reshape(4, 3)
    np.testing.assert_allclose(to_numpy(a.grad), (np.exp(a_np.T) * b_np * w + 2 * w).T, rtol=1e-12)
    np.testing.assert_allclose(to_numpy(b.grad), np.exp(a_np.T) * w, rtol=1e-12)
    assert tuple(a.grad.shape) == (3, 4) and tuple(b.grad.shape) == (4, 3)
    leaf = tt.tensor(a_np.T.copy(), dtype=tt.float64, device=device).t().requires_grad_()
    leaf.exp().sum().backward()
    assert leaf.grad.stride() == (1, 3)            # torch's: the gradient keeps the leaf's layout
    np.testing.assert_allclose(to_numpy(leaf.grad), np.exp(a_np), rtol=1e-12)


def test_to_memory_format():
    x = tt.zeros(2, 3, 4, 5)
    cl = x.contiguous(memory_format=tt.channels_last)
    assert x.to(memory_format=tt.channels_last).stride() == (60, 1, 15, 3)
    assert cl.to(memory_format=tt.channels_last) is cl
    assert x.to(memory_format=tt.contiguous_format) is x
    assert cl.to(memory_format=tt.contiguous_format).stride() == (60, 20, 5, 1)
    assert cl.double().stride() == (60, 1, 15, 3)                   # a cast preserves the layout
    t = tt.zeros(3, 4).t()
    assert t.to(memory_format=tt.contiguous_format) is t           # its strides suggest row-major (torch)
    assert t.to(tt.float64, memory_format=tt.contiguous_format).stride() == (3, 1)
    assert t.to(tt.float64).stride() == (1, 4)
    assert t.to("cpu", copy=True).stride() == (1, 4)
    assert t.to(copy=True, memory_format=tt.contiguous_format).stride() == (3, 1)
    assert cl.double(memory_format=tt.contiguous_format).stride() == (60, 20, 5, 1)   # the shorthands too
    assert cl.cpu(memory_format=tt.contiguous_format).stride() == (60, 20, 5, 1)
    assert t.float(memory_format=tt.contiguous_format) is t
    n = tt.zeros(2, 1, 1, 1)                                        # ambiguous strides: row-major
    assert n.to(memory_format=tt.channels_last) is not n
    with pytest.raises(RuntimeError, match="^required rank 4 tensor to use channels_last format$"):
        tt.zeros(3, 4).to(memory_format=tt.channels_last)
    with pytest.raises(TypeError, match=r"^to\(\) received an invalid combination of arguments"):
        x.to(memory_format=3)


def test_flip_and_index_put_allocate_like_self(device):
    # torch's flip and index_put allocate their output as empty_like(self) (preserve_format)
    b = tt.arange(12.0, device=device).reshape(3, 4)
    t = b.t()
    ref = np.arange(12.0).reshape(3, 4).T
    idx = (tt.tensor([0], device=device),)
    for out, want in [(t.flip(0), ref[::-1]), (t[:, ::2].flip(0), ref[:, ::2][::-1]),
                      (t.index_put(idx, tt.tensor(-1.0, device=device)), np.where(np.arange(4)[:, None] == 0, -1, ref))]:
        assert out.stride() == (1, 4)
        np.testing.assert_array_equal(to_numpy(out), want)
    cl = tt.zeros(2, 3, 4, 5, device=device).contiguous(memory_format=tt.channels_last)
    assert cl.flip(1).stride() == (60, 1, 15, 3)


def test_an_inplace_call_first_does_not_fix_the_out_of_place_layout():
    """dispatch caches a signature's rule result for in-place and out-of-place calls alike: an
    in-place op seen first must not leave a contiguous layout for the out-of-place one."""
    from tritensor.ops import dispatch as _dispatch
    _dispatch.clear_cache()
    x = tt.zeros(3, 4).t()
    x.sin_()
    assert x.sin().stride() == (1, 4)
    assert (x.cos_() * 1).stride() == (1, 4)


def test_device_copies_keep_a_dense_layout():
    """torch's _to_copy allocates with preserve_format: a dense input's strides survive .cuda(),
    .cpu() and pin_memory(); a non-dense one arrives dense in its dims' order."""
    x = tt.arange(12.0).reshape(3, 4)
    y = x.t().cuda()
    assert y.stride() == (1, 4) and y.cpu().stride() == (1, 4) and y.cpu().tolist() == x.t().tolist()
    z = tt.arange(120.0).reshape(2, 3, 4, 5).contiguous(memory_format=tt.channels_last)
    assert z.cuda().cpu().is_contiguous(memory_format=tt.channels_last)
    w = x[:, ::2]
    assert w.cuda().stride() == (2, 1) and w.cuda().tolist() == w.tolist()
    assert x[1:].cuda().tolist() == x[1:].tolist()
    p = x.t().pin_memory()
    assert p.is_pinned() and p.stride() == (1, 4) and p.tolist() == x.t().tolist()


def test_output_layout_is_a_declared_field_of_the_entry():
    """Issue 21.11: dispatch reads OpDef.layout; it does not infer it from the rule's name."""
    import inspect
    from tritensor.ops import dispatch as _dispatch
    from tritensor.ops.table import LAYOUTS, TABLE, OpDef
    assert all(op.layout in LAYOUTS for op in TABLE.values())
    assert TABLE["add"].layout == TABLE["exp"].layout == TABLE["where"].layout == "iterator"
    assert TABLE["clone"].layout == TABLE["flip"].layout == "preserve"
    assert TABLE["sum"].layout == TABLE["mm"].layout == TABLE["masked_fill"].layout == "contiguous"
    assert "__qualname__" not in inspect.getsource(_dispatch.output_strides)
    with pytest.raises(ValueError, match="layout must be one of"):
        OpDef(name="bogus", args=("x",), layout="transposed")
