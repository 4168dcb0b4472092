"""A leaf's first gradient, as torch's AccumulateGrad takes it (issue 14).

torch uses the incoming gradient itself as ``.grad`` when no one else holds it, no graph is
being built and it has the leaf's layout ("stealing" the buffer: no copy); otherwise it copies
it into a tensor laid out as the leaf (clone_obey_contract). What a user can observe is that
``.grad`` never shares memory with anything the user (or a hook) can still reach, is never a
broadcast view, and has the leaf's strides; these tests pin that, and that the steal happens
where torch's does (the gradient a backward produced is the one stored).
"""
from __future__ import annotations

import numpy as np

import tritensor as tt


def leaf(values):
    return tt.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


def _record_outputs(node, ptrs):
    """A post hook that notes where the node's gradients live, without keeping them."""
    node.register_hook(lambda grad_inputs, grad_outputs: ptrs.extend(
        g.data_ptr() if g is not None else None for g in grad_inputs) and None)


def test_an_unshared_gradient_becomes_grad_without_a_copy():
    x = leaf([1.0, 2.0, 3.0])
    y = x * tt.tensor([2.0, 3.0, 4.0], dtype=tt.float64)
    ptrs = []
    _record_outputs(y.grad_fn, ptrs)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 3.0, 4.0])
    assert x.grad.data_ptr() == ptrs[0]            # MulBackward0's own result, taken as is
    assert x.grad.grad_fn is None and not x.grad.requires_grad and x.grad._base is None


def test_a_gradient_someone_holds_is_copied():
    x = leaf([1.0, 2.0, 3.0])
    kept = []
    x.register_hook(lambda g: kept.append(g))       # the hook keeps the gradient it saw
    (x * 2).sum().backward()
    assert x.grad.data_ptr() != kept[0].data_ptr()
    x.grad.zero_()
    np.testing.assert_array_equal(kept[0].numpy(), [2.0, 2.0, 2.0])

    z = leaf([0.0, 0.0])
    g = tt.tensor([1.0, 2.0], dtype=tt.float64)
    (z + 0).backward(g)                             # AddBackward0 passes the user's seed on
    assert z.grad.data_ptr() != g.data_ptr()
    g.fill_(7.0)
    np.testing.assert_array_equal(z.grad.numpy(), [1.0, 2.0])


def test_one_gradient_sent_to_two_leaves_is_stored_once_each():
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    ((a + b) * 3).sum().backward()      # AddBackward0 sends one fresh tensor to both leaves
    assert a.grad.data_ptr() != b.grad.data_ptr()
    a.grad.add_(1.0)
    np.testing.assert_array_equal(a.grad.numpy(), [4.0, 4.0])
    np.testing.assert_array_equal(b.grad.numpy(), [3.0, 3.0])


def test_a_broadcast_or_transposed_gradient_is_copied_in_the_leafs_layout():
    x = leaf(np.zeros((2, 3)))
    x.sum().backward()                              # ones expanded: stride 0
    assert x.grad.stride() == (3, 1) and x.grad._base is None
    x.grad[0, 0] = 5.0
    np.testing.assert_array_equal(x.grad.numpy(), [[5.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    y = leaf(np.zeros((3, 2)))
    w = tt.tensor(np.arange(6.0).reshape(2, 3))
    (y.t() * w).sum().backward()                    # arrives transposed
    assert y.grad.stride() == (2, 1)
    np.testing.assert_array_equal(y.grad.numpy(), np.arange(6.0).reshape(2, 3).T)
    t = tt.tensor(np.zeros((3, 2)), dtype=tt.float64).t().requires_grad_()   # a transposed leaf
    (t * w).sum().backward()
    assert t.grad.stride() == t.stride() == (1, 2)  # the leaf's own strides, as torch's contract
    np.testing.assert_array_equal(t.grad.numpy(), np.arange(6.0).reshape(2, 3))


def test_later_gradients_accumulate_into_the_stolen_one():
    x = leaf([1.0, 2.0])
    (x * 3).sum().backward()
    first = x.grad
    (x * 4).sum().backward()
    assert x.grad is first                          # added in place, as torch does
    np.testing.assert_array_equal(first.numpy(), [7.0, 7.0])


def test_create_graph_copies_and_keeps_the_graph():
    x = leaf([1.0, 2.0])
    (x ** 2).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    np.testing.assert_array_equal(x.grad.detach().numpy(), [2.0, 4.0])
    x.grad = None


def test_retained_grad_and_leaf_grad_are_separate():
    x = leaf([1.0, 2.0])
    y = x * 2
    y.retain_grad()
    (y * 3).sum().backward()
    assert y.grad.data_ptr() != x.grad.data_ptr()
    np.testing.assert_array_equal(y.grad.numpy(), [3.0, 3.0])
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0])
