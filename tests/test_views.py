"""View ops and basic indexing: values against NumPy's identical operation, shared storage,
torch's error texts, and gradients flowing back through every view."""
import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy

SHAPE = (2, 3, 4)


def _base(device, dtype=tt.float32):
    a = np.arange(24, dtype=np.float64).reshape(SHAPE)
    return a, tt.tensor(a, dtype=dtype, device=device)


# (id, tritensor view, the same view in NumPy) on a (2, 3, 4) input
VIEWS = [
    ("view", lambda x: x.view(6, 4), lambda a: a.reshape(6, 4)),
    ("view-infer", lambda x: x.view(-1, 2), lambda a: a.reshape(-1, 2)),
    ("view-flat", lambda x: x.view(-1), lambda a: a.reshape(-1)),
    ("view-tuple", lambda x: x.view((4, 6)), lambda a: a.reshape(4, 6)),
    ("view-size1", lambda x: x.view(2, 1, 12, 1), lambda a: a.reshape(2, 1, 12, 1)),
    ("view_as", lambda x: x.view_as(tt.zeros(3, 8)), lambda a: a.reshape(3, 8)),
    ("reshape", lambda x: x.reshape(4, -1), lambda a: a.reshape(4, -1)),
    ("reshape_as", lambda x: x.reshape_as(tt.zeros(24)), lambda a: a.reshape(24)),
    ("transpose", lambda x: x.transpose(0, 2), lambda a: a.transpose(2, 1, 0)),
    ("transpose-neg", lambda x: x.transpose(-1, -2), lambda a: np.swapaxes(a, -1, -2)),
    ("swapaxes", lambda x: x.swapaxes(0, 1), lambda a: np.swapaxes(a, 0, 1)),
    ("t", lambda x: x[1].t(), lambda a: a[1].T),
    ("T", lambda x: x[0].T, lambda a: a[0].T),
    ("mT", lambda x: x.mT, lambda a: np.swapaxes(a, -1, -2)),
    ("permute", lambda x: x.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1)),
    ("permute-tuple", lambda x: x.permute((1, -1, 0)), lambda a: a.transpose(1, 2, 0)),
    ("tt.permute", lambda x: tt.permute(x, (0, 2, 1)), lambda a: a.transpose(0, 2, 1)),
    ("expand", lambda x: x[:, :1].expand(2, 5, 4), lambda a: np.broadcast_to(a[:, :1], (2, 5, 4))),
    ("expand-new-dims", lambda x: x.expand(3, 2, 3, 4), lambda a: np.broadcast_to(a, (3, 2, 3, 4))),
    ("expand-minus1", lambda x: x[:, :, 2:3].expand(-1, -1, 6),
     lambda a: np.broadcast_to(a[:, :, 2:3], (2, 3, 6))),
    ("expand_as", lambda x: x[0, :, :1].expand_as(tt.zeros(2, 3, 5)),
     lambda a: np.broadcast_to(a[0, :, :1], (2, 3, 5))),
    ("unsqueeze0", lambda x: x.unsqueeze(0), lambda a: a[None]),
    ("unsqueeze-last", lambda x: x.unsqueeze(-1), lambda a: a[..., None]),
    ("unsqueeze-mid", lambda x: x.unsqueeze(2), lambda a: np.expand_dims(a, 2)),
    ("unsqueeze-neg", lambda x: x.unsqueeze(-3), lambda a: np.expand_dims(a, -3)),
    ("squeeze-all", lambda x: x.view(1, 2, 1, 12, 1).squeeze(), lambda a: a.reshape(2, 12)),
    ("squeeze-dim", lambda x: x.view(1, 2, 1, 12).squeeze(2), lambda a: a.reshape(1, 2, 12)),
    ("squeeze-neg", lambda x: x.view(2, 12, 1).squeeze(-1), lambda a: a.reshape(2, 12)),
    ("squeeze-noop", lambda x: x.squeeze(1), lambda a: a),
    ("squeeze-tuple", lambda x: x.view(1, 2, 1, 12, 1).squeeze((0, -1)), lambda a: a.reshape(2, 1, 12)),
    ("tt.squeeze", lambda x: tt.squeeze(x.unsqueeze(1), 1), lambda a: a),
    ("flatten", lambda x: x.flatten(), lambda a: a.reshape(-1)),
    ("flatten-1", lambda x: x.flatten(1), lambda a: a.reshape(2, 12)),
    ("flatten-0-1", lambda x: x.flatten(0, 1), lambda a: a.reshape(6, 4)),
    ("flatten-neg", lambda x: tt.flatten(x, -2, -1), lambda a: a.reshape(2, 12)),
    ("unflatten", lambda x: x.unflatten(2, (2, 2)), lambda a: a.reshape(2, 3, 2, 2)),
    ("unflatten-infer", lambda x: x.unflatten(-1, (-1, 2)), lambda a: a.reshape(2, 3, 2, 2)),
    ("narrow", lambda x: x.narrow(2, 1, 2), lambda a: a[:, :, 1:3]),
    ("narrow-negstart", lambda x: x.narrow(1, -2, 2), lambda a: a[:, 1:3]),
    ("select", lambda x: x.select(1, 2), lambda a: a[:, 2]),
    ("select-neg", lambda x: x.select(-1, -1), lambda a: a[..., -1]),
    ("unbind", lambda x: x.unbind(1)[1], lambda a: a[:, 1]),
    ("tt.unbind", lambda x: tt.unbind(x)[1], lambda a: a[1]),
    ("chain", lambda x: x.transpose(0, 1)[1:, :, ::2].unsqueeze(0).expand(2, 2, 2, 2),
     lambda a: np.broadcast_to(a.transpose(1, 0, 2)[1:, :, ::2][None], (2, 2, 2, 2))),
]


def _ids(params):
    return [p[0] for p in params]


def _shares_storage(v, x):
    return v.untyped_storage() is x.untyped_storage()


@pytest.mark.parametrize("name,fn,ref", VIEWS, ids=_ids(VIEWS))
def test_view_values_and_storage(device, name, fn, ref):
    a, x = _base(device)
    v = fn(x)
    expected = ref(a)
    assert v.shape == expected.shape
    assert v.device == x.device and v.dtype is x.dtype
    np.testing.assert_array_equal(to_numpy(v), expected)
    assert _shares_storage(v, x)
    # the strides are NumPy's (in elements), for every view: no hidden copy
    exp_strides = tuple(s // 8 for s in expected.strides)
    for d, (size, st) in enumerate(zip(v.shape, v.stride())):
        if size > 1:
            assert st == exp_strides[d], (v.stride(), exp_strides)


# views that can be written (not expanded: many elements alias one memory location)
WRITABLE = [p for p in VIEWS if "expand" not in p[0] and p[0] != "chain"]


@pytest.mark.parametrize("name,fn,ref", WRITABLE, ids=_ids(WRITABLE))
def test_writing_through_a_view_changes_the_base(device, name, fn, ref):
    a, x = _base(device)
    v = fn(x)
    v.fill_(-1.0)
    expected = a.copy()
    ref(expected)[...] = -1.0
    np.testing.assert_array_equal(to_numpy(x), expected)
    # copy_ through the view, with values that identify each position
    vals = np.arange(v.numel(), dtype=np.float64).reshape(tuple(v.shape)) + 100
    v.copy_(tt.tensor(vals, dtype=x.dtype, device=device))
    ref(expected)[...] = vals
    np.testing.assert_array_equal(to_numpy(x), expected)
    np.testing.assert_array_equal(to_numpy(v), vals)


def test_base_writes_show_in_views(device):
    _, x = _base(device)
    v = x.transpose(0, 2)[1]
    x.fill_(3.0)
    np.testing.assert_array_equal(to_numpy(v), np.full((3, 2), 3.0))
    x.zero_()
    assert to_numpy(v).sum() == 0


# ----------------------------------------------------------------------------- view errors
def test_view_incompatible_strides_error(device):
    _, x = _base(device)
    with pytest.raises(RuntimeError, match="view size is not compatible with input tensor's size and stride"):
        x.transpose(0, 1).view(-1)
    with pytest.raises(RuntimeError, match="view size is not compatible with input tensor's size and stride"):
        x[:, :, :2].view(12)
    # a uniformly strided selection *is* viewable: x[:, :, ::2] is 12 elements 2 apart
    v = x[:, :, ::2].view(12)
    assert v.stride() == (2,)


def test_view_wrong_numel_error(device):
    _, x = _base(device)
    with pytest.raises(RuntimeError, match=r"shape '\[5, 5\]' is invalid for input of size 24"):
        x.view(5, 5)
    with pytest.raises(RuntimeError, match=r"shape '\[-1, 5\]' is invalid for input of size 24"):
        x.view(-1, 5)
    with pytest.raises(RuntimeError, match=r"shape '\[7\]' is invalid for input of size 24"):
        x.reshape(7)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        x.view(-1, -1)


def test_view_of_non_contiguous_but_compatible(device):
    a = np.arange(48.0).reshape(4, 12)
    x = tt.tensor(a, device=device)
    v = x[::2].view(2, 3, 4)     # rows stay contiguous: splitting the last dim is a view
    assert v.stride() == (24, 4, 1)
    np.testing.assert_array_equal(to_numpy(v), a[::2].reshape(2, 3, 4))
    assert _shares_storage(v, x)


# ----------------------------------------------------------------------------- reshape copies only if needed
def test_reshape_is_a_view_when_possible(device):
    a, x = _base(device)
    r = x.reshape(6, 4)
    assert r.data_ptr() == x.data_ptr() and _shares_storage(r, x)
    s = x[:, 1].reshape(8)      # rows of 4 contiguous elements 12 apart: not viewable as 8
    assert s.data_ptr() != x.data_ptr()
    np.testing.assert_array_equal(to_numpy(s), a[:, 1].reshape(8))
    u = x[1].reshape(3, 2, 2)
    assert _shares_storage(u, x) and u.storage_offset() == 12


def test_reshape_of_transpose_copies(device):
    a, x = _base(device)
    t = x.transpose(1, 2)
    r = t.reshape(2, 12)
    assert not _shares_storage(r, x)
    assert r.is_contiguous()
    np.testing.assert_array_equal(to_numpy(r), a.transpose(0, 2, 1).reshape(2, 12))
    r.fill_(0.0)                         # a copy: the source is untouched
    np.testing.assert_array_equal(to_numpy(x), a)
    f = t.flatten()
    np.testing.assert_array_equal(to_numpy(f), a.transpose(0, 2, 1).reshape(-1))


# ----------------------------------------------------------------------------- other view errors
def test_expand_errors(device):
    x = tt.zeros(2, 3, device=device)
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(4\) must match the existing size "
                                           r"\(2\) at non-singleton dimension 0.  Target sizes: \[4, 3\].  "
                                           r"Tensor sizes: \[2, 3\]"):
        x.expand(4, 3)
    with pytest.raises(RuntimeError, match=r"the number of sizes provided \(1\) must be greater or equal to the "
                                           r"number of dimensions in the tensor \(2\)"):
        x.expand(3)


def test_expand_has_stride_zero(device):
    x = tt.tensor([[1.0], [2.0], [3.0]], device=device)
    e = x.expand(3, 4)
    assert e.stride() == (1, 0)
    assert e.data_ptr() == x.data_ptr()
    e2 = tt.tensor([1.0, 2.0], device=device).expand(3, 2)
    assert e2.stride() == (0, 1)
    np.testing.assert_array_equal(to_numpy(e2), [[1, 2]] * 3)
    x[1].fill_(9.0)
    np.testing.assert_array_equal(to_numpy(e)[1], [9.0] * 4)


def test_permute_and_transpose_errors(device):
    _, x = _base(device)
    with pytest.raises(RuntimeError, match="number of dimensions in the tensor input does not match"):
        x.permute(0, 1)
    with pytest.raises(RuntimeError, match="duplicate dims"):
        x.permute(0, 1, 1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.transpose(0, 3)
    with pytest.raises(RuntimeError, match=r"t\(\) expects a tensor with <= 2 dimensions, but self is 3D"):
        x.t()
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.unsqueeze(4)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.squeeze(3)


def test_t_of_low_dim(device):
    v = tt.tensor([1.0, 2.0], device=device)
    assert v.t().shape == (2,)
    s = tt.tensor(3.0, device=device)
    assert s.t().shape == ()


def test_flatten_and_unbind_edge_cases(device):
    s = tt.tensor(5.0, device=device)
    assert s.flatten().shape == (1,)
    assert s.flatten().tolist() == [5.0]
    a, x = _base(device)
    parts = x.unbind(2)
    assert isinstance(parts, tuple) and len(parts) == 4
    for i, p in enumerate(parts):
        np.testing.assert_array_equal(to_numpy(p), a[:, :, i])
        assert _shares_storage(p, x)
    with pytest.raises(RuntimeError, match="start_dim cannot come after end_dim"):
        x.flatten(2, 1)
    with pytest.raises(RuntimeError, match=r"start \(2\) \+ length \(3\) exceeds dimension size \(3\)"):
        x.narrow(1, 2, 3)


# ----------------------------------------------------------------------------- basic indexing
INDICES = [
    1, -1, (0, 2), (1, -1, -4), (slice(None), 1), (slice(1, None, 2),), (slice(None, None, 3),),
    (slice(None), slice(None, None, 2), slice(1, None, 2)), (Ellipsis, 1), (1, Ellipsis),
    (Ellipsis,), (None,), (None, 1), (1, None, slice(None, None, 2)), (Ellipsis, None),
    (0, Ellipsis, slice(1, 3)), (slice(None, None, 2), slice(1, None, 2), -2), (slice(-2, None),),
    (slice(-10, 10),), (slice(2, 1),), (slice(5, 9),), (slice(None), slice(-1, None), None, 0),
    (None, Ellipsis, None), (), (1, slice(None), slice(None, None, 5)),
]


def _key_id(k):
    return repr(k).replace("slice(None, None, None)", ":").replace(" ", "")


@pytest.mark.parametrize("key", INDICES, ids=[_key_id(k) for k in INDICES])
def test_getitem_matches_numpy(device, key):
    a, x = _base(device)
    v = x[key]
    expected = a[key]
    assert v.shape == expected.shape
    np.testing.assert_array_equal(to_numpy(v), expected)
    assert _shares_storage(v, x)
    # the view aliases the base: write through it and compare with NumPy doing the same
    if v.numel():
        v.fill_(-5.0)
        b = a.copy()
        b[key] = -5.0
        np.testing.assert_array_equal(to_numpy(x), b)


def test_getitem_accepts_numpy_integers(device):
    a, x = _base(device)
    np.testing.assert_array_equal(to_numpy(x[np.int32(-1)]), a[-1])
    np.testing.assert_array_equal(to_numpy(x[np.int64(1), 2]), a[1, 2])


def test_getitem_copy_(device):
    a, x = _base(device)
    x[1, ::2].copy_(tt.tensor([[1.0, 2.0, 3.0, 4.0]], device=device))   # broadcast source
    a[1, ::2] = [1.0, 2.0, 3.0, 4.0]
    np.testing.assert_array_equal(to_numpy(x), a)


@pytest.mark.parametrize("key", [2, -3, (0, 3), (0, 0, 4), (1, -4), (Ellipsis, 4), (None, 2)],
                         ids=_key_id)
def test_getitem_out_of_range(device, key):
    _, x = _base(device)
    with pytest.raises(IndexError, match="out of bounds"):
        x[key]


def test_getitem_errors(device):
    _, x = _base(device)
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 3"):
        x[0, 0, 0, 0]
    with pytest.raises(IndexError, match="an index can only have a single ellipsis"):
        x[..., 0, ...]
    with pytest.raises(IndexError):
        x["a"]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1]
    with pytest.raises(IndexError, match="out of bounds"):
        tt.zeros(3, device=device)[3]


@pytest.mark.parametrize("shape,key,expected_shape", [
    ((2, 0), (slice(1, None),), (1, 0)),
    ((1, 0), (slice(1, None), None), (0, 1, 0)),
    ((1, 2), (slice(1, None), 1), (0,)),
    ((3, 2), (slice(5, None), 1), (0,)),
], ids=["zeros(2,0)[1:]", "zeros(1,0)[1:,None]", "zeros(1,2)[1:,1]", "zeros(3,2)[5:,1]"])
def test_empty_view_past_the_end(device, shape, key, expected_shape):
    # an empty view may start past the end of its storage; torch reads it as an empty tensor
    x = tt.zeros(*shape, device=device)
    v = x[key]
    assert v.shape == expected_shape
    assert v.numel() == 0
    assert to_numpy(v).shape == expected_shape
    assert v.tolist() == np.zeros(expected_shape).tolist()
    assert repr(v).startswith("tensor([")
    assert v.clone().shape == expected_shape
    assert (v + 1).shape == expected_shape


def test_index_of_0d_tensor(device):
    s = tt.tensor(4.0, device=device)
    assert s[None].shape == (1,)
    assert s[...].shape == ()
    assert s[()].item() == 4.0
    with pytest.raises(IndexError):
        s[0]


# ----------------------------------------------------------------------------- gradients
def _expected_view_grad(ref, weights):
    """The gradient of sum(view(x) * weights) w.r.t. x: each weight lands on the element of x
    its position reads (summed where a view repeats an element, as expand does)."""
    idx = np.arange(24).reshape(SHAPE)
    positions = np.asarray(ref(idx))
    grad = np.zeros(24)
    np.add.at(grad, positions.reshape(-1), np.asarray(weights).reshape(-1))
    return grad.reshape(SHAPE)


GRAD_VIEWS = VIEWS + [
    ("reshape-of-transpose", lambda x: x.transpose(1, 2).reshape(2, 12),
     lambda a: a.transpose(0, 2, 1).reshape(2, 12)),
    ("flatten-of-slice", lambda x: x[:, ::2].flatten(), lambda a: a[:, ::2].reshape(-1)),
] + [(f"getitem{_key_id(k)}", (lambda k: lambda x: x[k])(k), (lambda k: lambda a: a[k])(k))
     for k in INDICES]


@pytest.mark.parametrize("name,fn,ref", GRAD_VIEWS, ids=_ids(GRAD_VIEWS))
def test_gradient_flows_through_view(device, name, fn, ref):
    a, x0 = _base(device, tt.float64)
    x = x0.clone().requires_grad_()
    v = fn(x)
    assert v.requires_grad and v.grad_fn is not None
    rng = np.random.default_rng(0)
    w = np.asarray(rng.integers(1, 5, size=tuple(v.shape)), dtype=np.float64)
    (v * tt.tensor(w, dtype=tt.float64, device=device)).sum().backward()
    assert x.grad is not None and x.grad.shape == x.shape and x.grad.device == x.device
    np.testing.assert_array_equal(to_numpy(x.grad), _expected_view_grad(ref, w))


def test_slice_sum_backward_puts_ones(device):
    x = tt.zeros(3, 4, device=device, requires_grad=True)
    x[1, ::2].sum().backward()
    expected = np.zeros((3, 4))
    expected[1, ::2] = 1.0
    np.testing.assert_array_equal(to_numpy(x.grad), expected)


def test_expand_backward_sums(device):
    x = tt.tensor([[1.0], [2.0]], device=device, requires_grad=True)
    x.expand(2, 5).sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [[5.0], [5.0]])


def test_unbind_backward_each_piece(device):
    x = tt.zeros(3, 2, device=device, requires_grad=True)
    a, b, c = x.unbind(0)
    (a * 1 + b * 2 + c * 3).sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [[1, 1], [2, 2], [3, 3]])


def test_view_second_derivative(device):
    # views are differentiable again: d2/dx2 sum(x[::2]**3) = 6x on the selected elements
    x = tt.tensor([1.0, 2.0, 3.0, 4.0], dtype=tt.float64, device=device, requires_grad=True)
    (g,) = tt.autograd.grad((x[::2] ** 3).sum(), x, create_graph=True)
    np.testing.assert_allclose(to_numpy(g), [3.0, 0.0, 27.0, 0.0])
    (gg,) = tt.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(to_numpy(gg), [6.0, 0.0, 18.0, 0.0])


# ----------------------------------------------------------------------------- property-based
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@st.composite
def _shape_and_key(draw):
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=0, max_size=4)))
    key, ellipsis_used = [], False
    dims = list(shape)
    n_real = draw(st.integers(0, len(dims)))
    for size in dims[:n_real]:
        while draw(st.integers(0, 4)) == 0:
            key.append(None)
        if not ellipsis_used and draw(st.integers(0, 6)) == 0:
            key.append(Ellipsis)
            ellipsis_used = True
        if size > 0 and draw(st.booleans()):
            key.append(draw(st.integers(-size, size - 1)))
        else:
            bound = st.none() | st.integers(-7, 7)
            key.append(slice(draw(bound), draw(bound), draw(st.none() | st.integers(1, 3))))
    if draw(st.integers(0, 3)) == 0:
        key.append(None)
    return shape, tuple(key)


def _check_index(device, shape, key):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    x = tt.tensor(a, device=device)
    try:
        expected = a[key]
    except IndexError:
        with pytest.raises(IndexError):
            x[key]
        return
    v = x[key]
    assert v.shape == expected.shape
    assert v.untyped_storage() is x.untyped_storage()
    if expected.size == 0:
        return      # empty views whose offset lies past the storage: test_empty_view_past_the_end
    np.testing.assert_array_equal(to_numpy(v), expected)


@settings(max_examples=150, **_SETTINGS)
@given(_shape_and_key())
def test_getitem_property_cpu(case):
    _check_index("cpu", *case)


@settings(max_examples=25, **_SETTINGS)
@given(_shape_and_key())
def test_getitem_property_cuda(case):
    _check_index("cuda", *case)


@st.composite
def _layout_and_target(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    perm = draw(st.permutations(range(len(shape))))
    steps = [draw(st.integers(1, 2)) for _ in shape]
    numel = int(np.prod([-(-shape[p] // steps[i]) for i, p in enumerate(perm)]))
    target, rest = [], numel
    while rest > 1:
        # a divisor > 1 each step: the loop ends after at most log2(numel) draws (drawing 1 could
        # go on until hypothesis gives up with "data too large"); size-1 dims come from below
        divisors = [d for d in range(2, rest + 1) if rest % d == 0]
        d = draw(st.sampled_from(divisors))
        target.append(d)
        rest //= d
        if draw(st.integers(0, 3)) == 0:
            target.append(1)
    target += [1] * draw(st.integers(0, 1))
    if not target:
        target = [1]
    return shape, tuple(perm), tuple(steps), tuple(target)


def _check_reshape(device, shape, perm, steps, target):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    x = tt.tensor(a, device=device)
    idx = tuple(slice(None, None, s) for s in steps)
    src_np = a.transpose(perm)[idx]
    src = x.permute(perm)[idx]
    expected = src_np.reshape(target)
    r = src.reshape(target)
    np.testing.assert_array_equal(to_numpy(r), expected)
    try:
        np.reshape(src_np, target, copy=False)
        viewable = True
    except ValueError:
        viewable = False
    if viewable:
        v = src.view(target)                  # NumPy needs no copy: neither does torch's rule
        np.testing.assert_array_equal(to_numpy(v), expected)
        assert v.untyped_storage() is x.untyped_storage()
        assert r.untyped_storage() is x.untyped_storage()
    else:
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            src.view(target)
        assert r.untyped_storage() is not x.untyped_storage()


@settings(max_examples=200, **_SETTINGS)
@given(_layout_and_target())
def test_view_and_reshape_property_cpu(case):
    _check_reshape("cpu", *case)


@settings(max_examples=25, **_SETTINGS)
@given(_layout_and_target())
def test_view_and_reshape_property_cuda(case):
    _check_reshape("cuda", *case)
