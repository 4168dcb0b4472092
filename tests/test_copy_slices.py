"""In-place ops on views of tensors in a graph (torch's CopySlices), regenerated view histories
(AsStridedBackward0) and as_strided. Expected gradients are worked out by hand (what torch gives)."""
import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy
from tritensor.autograd import gradcheck, gradgradcheck


def leaf(values, device):
    return tt.tensor(np.asarray(values, dtype=np.float64), device=device, requires_grad=True)


def const(values, device):
    return tt.tensor(np.asarray(values, dtype=np.float64), device=device)


def grads(out, inputs, weight=None):
    """d sum(out * weight) / d inputs, as NumPy arrays."""
    w = weight if weight is not None else tt.ones_like(out.detach())
    return [to_numpy(g) for g in tt.autograd.grad((out * w).sum(), inputs, retain_graph=True)]


# ============================================================================ the example
@pytest.mark.parametrize("form", ["setitem", "copy_"])
def test_writing_a_tensor_into_a_slice_of_zeros(device, form):
    a = leaf([1.0, 2.0, 3.0, 4.0, 5.0], device)
    c = tt.zeros(4, 7, dtype=tt.float64, device=device)
    if form == "setitem":
        c[1, 1:-1] = a
    else:
        c[1, 1:-1].copy_(a)
    assert c.requires_grad and not c.is_leaf
    assert c.grad_fn.name() == "CopySlices"
    nodes = c.grad_fn.next_functions
    assert nodes[0] == (None, 0) and nodes[1][0].name() == "AccumulateGrad" and len(nodes) == 2
    expected = np.zeros((4, 7))
    expected[1, 1:6] = [1, 2, 3, 4, 5]
    np.testing.assert_array_equal(to_numpy(c), expected)
    w = np.arange(28.0).reshape(4, 7)
    (c * const(w, device)).sum().backward()
    np.testing.assert_array_equal(to_numpy(a.grad), w[1, 1:6])


def test_the_overwritten_region_gets_no_gradient_from_the_earlier_history(device):
    x = leaf(np.arange(12.0).reshape(3, 4), device)
    a = leaf([10.0, 20.0], device)
    c = x * 2
    c[1, 1:3] = a
    w = np.arange(1.0, 13.0).reshape(3, 4)
    gx, ga = grads(c, [x, a], const(w, device))
    expected = 2 * w
    expected[1, 1:3] = 0
    np.testing.assert_array_equal(gx, expected)
    np.testing.assert_array_equal(ga, w[1, 1:3])


# ============================================================================ base and view histories
def test_mul_on_a_view_of_a_non_leaf(device):
    x = leaf([1.0, 2.0, 3.0, 4.0], device)
    base = x.clone()
    v = base[1:3]
    assert base._version_counter.value == 0
    v.mul_(2)
    assert base._version_counter.value == v._version_counter.value == 1
    assert base.grad_fn.name() == "CopySlices"
    assert base.grad_fn.next_functions[0][0].name() == "CloneBackward0"
    assert v.grad_fn.name() == "AsStridedBackward0"
    assert v.grad_fn.next_functions[0][0] is base.grad_fn
    np.testing.assert_array_equal(to_numpy(base), [1.0, 4.0, 6.0, 4.0])
    np.testing.assert_array_equal(grads(base, [x])[0], [1.0, 2.0, 2.0, 1.0])
    np.testing.assert_array_equal(grads(v, [x])[0], [0.0, 2.0, 2.0, 0.0])
    base.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [1.0, 2.0, 2.0, 1.0])


def test_inplace_on_the_base_regenerates_its_views(device):
    x = leaf([1.0, 2.0, 3.0, 4.0], device)
    base = x.clone()
    v = base[1:3]
    assert v.grad_fn.name() == "SliceBackward0"
    base.mul_(3)
    assert base.grad_fn.name() == "MulBackward0"
    assert v.grad_fn.name() == "AsStridedBackward0"      # the view now reads the new base
    np.testing.assert_array_equal(grads(v, [x], const([1.0, 10.0], device))[0], [0.0, 3.0, 30.0, 0.0])


def test_chained_inplace_ops_on_overlapping_views(device):
    x = leaf([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], device)
    b = x.clone()
    v1, v2 = b[:3], b[2:]
    v1.mul_(2)
    v2.mul_(3)                                   # element 2 is in both views: times 6
    v1.add_(1)
    np.testing.assert_array_equal(to_numpy(b), [3.0, 5.0, 19.0, 12.0, 15.0, 18.0])
    assert b._version_counter.value == 3
    np.testing.assert_array_equal(grads(b, [x])[0], [2.0, 2.0, 6.0, 3.0, 3.0, 3.0])
    np.testing.assert_array_equal(grads(v1, [x])[0], [2.0, 2.0, 6.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(grads(v2, [x])[0], [0.0, 0.0, 6.0, 3.0, 3.0, 3.0])


def test_views_of_views_and_transposed_views(device):
    xv = np.arange(1.0, 13.0).reshape(3, 4)
    yv = np.array([[2.0, 3.0], [5.0, 7.0]])
    x, y = leaf(xv, device), leaf(yv, device)
    b = x.clone()
    v = b.t()[1:3]                  # (2, 3): columns 1, 2 of b
    w = v[:, ::2]                   # (2, 2): b[0, 1], b[2, 1]; b[0, 2], b[2, 2]
    w.mul_(y)
    expected = xv.copy()
    for j in (1, 2):
        for i in (0, 2):
            expected[i, j] *= yv[j - 1, i // 2]
    np.testing.assert_array_equal(to_numpy(b), expected)
    weight = np.arange(12.0).reshape(3, 4) + 1
    gx, gy = grads(b, [x, y], const(weight, device))
    ex = weight.copy()
    ey = np.zeros((2, 2))
    for j in (1, 2):
        for i in (0, 2):
            ex[i, j] *= yv[j - 1, i // 2]
            ey[j - 1, i // 2] = weight[i, j] * xv[i, j]
    np.testing.assert_array_equal(gx, ex)
    np.testing.assert_array_equal(gy, ey)
    # the view of the view reads its new history too
    np.testing.assert_array_equal(grads(w, [y])[0], [[xv[0, 1], xv[2, 1]], [xv[0, 2], xv[2, 2]]])


def test_fill_zero_copy_and_add_with_broadcast_on_views(device):
    x = leaf(np.arange(1.0, 13.0).reshape(3, 4), device)
    y = leaf([10.0, 20.0, 30.0], device)
    s = leaf([0.5], device)
    b = x * 1
    b[1].fill_(7.0)
    b[:, 0].zero_()
    b[2, 1:].copy_(y)
    b[0, 1:].sub_(s, alpha=2)                     # broadcast (1,) over (3,)
    expected = np.arange(1.0, 13.0).reshape(3, 4)
    expected[1] = 7
    expected[:, 0] = 0
    expected[2, 1:] = [10, 20, 30]
    expected[0, 1:] -= 1
    np.testing.assert_array_equal(to_numpy(b), expected)
    weight = np.arange(12.0).reshape(3, 4)
    gx, gy, gs = grads(b, [x, y, s], const(weight, device))
    ex = weight.copy()
    ex[1] = 0
    ex[:, 0] = 0
    ex[2, 1:] = 0
    np.testing.assert_array_equal(gx, ex)
    np.testing.assert_array_equal(gy, weight[2, 1:])
    np.testing.assert_array_equal(gs, [-2 * weight[0, 1:].sum()])


def test_a_saved_old_value_of_the_view_is_a_snapshot(device):
    x = leaf([1.0, 2.0, 3.0, 4.0], device)
    y = leaf([5.0, 6.0], device)
    b = x.clone()
    v = b[::2]
    v.mul_(y)            # MulBackward0 needs v's old value for y's gradient
    v.add_(1)            # ... which this changes in place
    weight = const([1.0, 10.0, 100.0, 1000.0], device)
    gx, gy = grads(b, [x, y], weight)
    np.testing.assert_array_equal(gx, [5.0, 10.0, 600.0, 1000.0])
    np.testing.assert_array_equal(gy, [1.0, 300.0])


def test_retain_grad_on_the_base_follows_it(device):
    x = leaf([1.0, 2.0, 3.0], device)
    b = x * 1
    b.retain_grad()
    b[1:].mul_(2)
    (b * 3).sum().backward()
    np.testing.assert_array_equal(to_numpy(b.grad), [3.0, 3.0, 3.0])
    np.testing.assert_array_equal(to_numpy(x.grad), [3.0, 6.0, 6.0])


def test_a_base_without_grad_becomes_part_of_the_graph_and_its_old_views_follow(device):
    a = leaf([1.0, 2.0], device)
    c = tt.zeros(2, 3, dtype=tt.float64, device=device)
    row = c[1]                                     # created before c required grad
    assert not row.requires_grad
    c[1, :2].copy_(a * 3)
    assert row.requires_grad and row.grad_fn.name() == "AsStridedBackward0"
    np.testing.assert_array_equal(grads(row, [a], const([1.0, 10.0, 100.0], device))[0], [3.0, 30.0])


# ============================================================================ errors
def test_view_of_a_leaf_requiring_grad_still_raises(device):
    x = leaf([1.0, 2.0], device)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an "
                                           "in-place operation."):
        x[1:].mul_(2)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x[0] = 5.0
    np.testing.assert_array_equal(to_numpy(x), [1.0, 2.0])


def test_view_made_in_no_grad_mode_modified_with_grad_raises(device):
    x = leaf([1.0, 2.0, 3.0], device)
    b = x * 1
    y = leaf([2.0, 2.0], device)
    with tt.no_grad():
        v = b[1:]
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being modified inplace with "
                                           "grad mode enabled."):
        v.mul_(y)                                  # recorded (y requires grad): ambiguous
    with tt.no_grad():
        v.mul_(y)                                  # both in no_grad: allowed, not recorded
    np.testing.assert_array_equal(to_numpy(b), [1.0, 4.0, 6.0])


def test_inplace_on_an_overlapping_view_raises(device):
    b = leaf([1.0, 2.0], device) * 1
    with pytest.raises(RuntimeError, match="unsupported operation: more than one element of the written-to tensor "
                                           "refers to a single memory location"):
        b[:1].expand(3).mul_(2)


def test_modified_saved_base_is_detected(device):
    x = leaf([1.0, 2.0], device)
    b = x * 1
    e = b.exp()                                    # ExpBackward0 saves its output; b itself is saved by nothing
    y = b * b                                      # MulBackward0 saves b
    b[0].mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    e.sum().backward()                             # e does not depend on b's new value
    np.testing.assert_allclose(to_numpy(x.grad), np.exp([1.0, 2.0]))


# ============================================================================ gradcheck through CopySlices
def _writes_through_views(x, y):
    b = x.clone()
    b[1:, ::2].mul_(y)                             # saves the view's old value and y
    b.t()[0].add_(y[0, :1] * b[0, 1].clone())      # a transposed view; reads b itself
    v = b[:2]
    v[:, 2:] = y.exp()                             # copy_ (setitem)
    return b * b


def _regenerated_view(x):
    b = x * 2
    v = b[1:, 1:]
    b.mul_(x)                                      # the base changes: v reads it again
    v.add_(1)
    return v * v + b.sum()


def test_gradcheck_through_copy_slices_cpu():
    # the richer graphs on cpu only: under Triton's interpreter their (grad)gradchecks take minutes
    x = leaf(np.random.default_rng(0).standard_normal((3, 4)), "cpu")
    y = leaf(np.random.default_rng(1).standard_normal((2, 2)), "cpu")
    assert gradcheck(_writes_through_views, (x, y))
    assert gradgradcheck(_writes_through_views, (x, y))
    assert gradcheck(_regenerated_view, (x,))
    assert gradgradcheck(_regenerated_view, (x,))


def _mul_into_a_column(x, y):
    b = x.clone()
    b[:, 1].mul_(y)                                # CopySlices(MulBackward0), saving x's column and y
    return b


def test_gradcheck_through_copy_slices(device):
    x = leaf([[0.5, -1.5], [1.0, 3.0]], device)
    y = leaf([1.5, -2.0], device)
    assert gradcheck(_mul_into_a_column, (x, y))
    assert gradgradcheck(_mul_into_a_column, (x, y))


# ============================================================================ as_strided
def test_as_strided_values_and_gradient(device):
    x = leaf(np.arange(6.0), device)
    y = x.as_strided((2, 2), (1, 2), 1)            # positions [[1, 3], [2, 4]]
    assert y._base is x and y.grad_fn.name() == "AsStridedBackward0"
    np.testing.assert_array_equal(to_numpy(y), [[1.0, 3.0], [2.0, 4.0]])
    b = tt.as_strided(x, (3,), (0,))               # position 0 three times
    g = grads(y, [x], const([[1.0, 10.0], [100.0, 1000.0]], device))[0]
    np.testing.assert_array_equal(g, [0.0, 1.0, 100.0, 10.0, 1000.0, 0.0])
    np.testing.assert_array_equal(grads(b, [x])[0], [3.0, 0, 0, 0, 0, 0])
    t = const(np.arange(6.0).reshape(2, 3), device).t()        # storage positions, not t's order
    np.testing.assert_array_equal(to_numpy(t.as_strided((2,), (2,), 1)), [1.0, 3.0])
    z = x[1:]
    np.testing.assert_array_equal(to_numpy(z.as_strided((2,), (1,))), [1.0, 2.0])   # default offset: z's


def test_as_strided_errors(device):
    x = tt.zeros(4, device=device)
    with pytest.raises(RuntimeError, match=r"setStorage: sizes \[3, 3\], strides \[1, 1\], storage offset 0, and "
                                           r"itemsize 4 requiring a storage size of 20 are out of bounds for storage "
                                           r"of size 16"):
        x.as_strided((3, 3), (1, 1))
    with pytest.raises(RuntimeError, match="as_strided: Negative strides are not supported at the moment"):
        x.as_strided((2,), (-1,), 3)
    x = leaf(np.arange(4.0), device)
    x.as_strided((2, 2), (1, 1)).sum().backward()     # windows overlap in memory: torch sums them
    np.testing.assert_array_equal(to_numpy(x.grad), [1.0, 2.0, 1.0, 0.0])


def test_restride_and_scatter_on_geometries_that_are_not_compact(device):
    # the gradient ops of as_strided/CopySlices through their general path (a scratch buffer
    # standing for the storage), against positions worked out by hand
    from tritensor.ops import views
    base = ((2, 3), (1, 2), 1)          # a transposed (3, 2) at offset 1: positions [[1, 3, 5], [2, 4, 6]]
    view = ((2,), (2,), 3)              # positions 3, 5: base[0, 1], base[0, 2]
    x = const([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device)
    src = const([10.0, 20.0], device)
    out = views.as_strided_scatter(x, src, base, view)
    np.testing.assert_array_equal(to_numpy(out), [[1.0, 10.0, 20.0], [4.0, 5.0, 6.0]])
    np.testing.assert_array_equal(to_numpy(views.restride(x, base, view)), [2.0, 3.0])
    g = const([1.0, 2.0, 3.0], device)
    # src broadcast (stride 0) and a dst that is not covered everywhere: sums, then zeros
    got = views.restride(g.expand(2, 3), ((2, 3), (0, 1), 2), ((3, 2), (2, 1), 1))
    np.testing.assert_array_equal(to_numpy(got), [[0.0, 2.0], [4.0, 6.0], [0.0, 0.0]])
    tg = const(np.arange(6.0).reshape(3, 2), device).t()     # a gradient that is not contiguous
    np.testing.assert_array_equal(to_numpy(views.restride(tg, ((2, 3), (3, 1), 0), ((2,), (1,), 2))), [4.0, 1.0])
