"""Autograd semantics beyond the basics of test_autograd.py: the full backward()/grad() API and
its errors, version counters and torch's in-place message, hooks/retain_grad/.grad/.data,
custom Functions (ctx, mark_dirty, mark_non_differentiable, once_differentiable), what happens
when a backward has no double backward, gradcheck/gradgradcheck, anomaly mode, memory, and the
worked examples of PyTorch's autograd notes. Values are hand-derived or computed with NumPy."""
import gc
import inspect
import warnings
import weakref

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy
from tritensor.autograd.function import once_differentiable
from tritensor.ops.dispatch import dispatch
from tritensor.ops.table import Meta, OpDef


def leaf(values, device, dtype=tt.float64):
    return tt.tensor(values, dtype=dtype, device=device, requires_grad=True)


def const(values, device, dtype=tt.float64):
    return tt.tensor(values, dtype=dtype, device=device)


def version(t):
    return t._version_counter.value


def _freed_without_gc(make_ref):
    """Run ``make_ref()`` (which returns a weakref) with the cyclic GC off; True if the object
    died by reference counting alone."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        ref = make_ref()
        return ref() is None
    finally:
        if enabled:
            gc.enable()


# ============================================================================ backward() / grad()
def test_error_names_the_element_that_does_not_require_grad(device):
    x = leaf([1.0, 2.0], device)
    y = (x * x).sum()
    c = const([3.0], device).sum()
    with pytest.raises(RuntimeError) as err:
        tt.autograd.backward([y, c])
    assert str(err.value) == "element 1 of tensors does not require grad and does not have a grad_fn"
    assert x.grad is None                       # nothing ran
    with pytest.raises(RuntimeError, match="^element 1 of tensors does not require grad"):
        tt.autograd.grad([y, c], x)


def test_backward_of_several_roots_with_mixed_gradients(device):
    x = leaf([1.0, 2.0, 3.0], device)
    y1 = x * x                                  # non-scalar: needs its gradient
    y2 = (x * 10).sum()                         # scalar: None means ones
    g1 = const([1.0, 0.0, -1.0], device)
    tt.autograd.backward([y1, y2], [g1, None])
    np.testing.assert_allclose(to_numpy(x.grad), 2 * np.array([1.0, 2.0, 3.0]) * [1, 0, -1] + 10)
    with pytest.raises(RuntimeError, match="grad_tensors and tensors must have the same length"):
        tt.autograd.backward([x * 1, x * 2], [g1])


def test_implicit_gradient_error_is_raised_for_the_non_scalar_of_several(device):
    x = leaf([1.0, 2.0], device)
    with pytest.raises(RuntimeError, match="^grad can be implicitly created only for scalar outputs$"):
        tt.autograd.backward([(x * 2).sum(), x * 3])
    with pytest.raises(RuntimeError, match="^grad can be implicitly created only for scalar outputs$"):
        tt.autograd.grad(x * 3, x)


def test_seed_of_another_dtype_is_cast_to_the_output_dtype(device):
    x = leaf([1.0, 2.0], device)
    (x * x).backward(const([1.0, 0.5], device, dtype=tt.float32))
    assert x.grad.dtype is tt.float64
    np.testing.assert_allclose(to_numpy(x.grad), [2.0, 2.0])


def test_backward_inputs_may_be_a_non_leaf(device):
    # torch accumulates into the .grad of a non-leaf named in inputs=, and nothing else
    x = leaf([1.0, -2.0], device)
    h = x * 3
    (h * h).sum().backward(inputs=[h])
    np.testing.assert_allclose(to_numpy(h.grad), 2 * to_numpy(h))
    assert x.grad is None
    (h * h).sum().backward(inputs=[h])          # and accumulates
    np.testing.assert_allclose(to_numpy(h.grad), 4 * to_numpy(h))


def test_empty_inputs_are_rejected(device):
    x = leaf([1.0], device)
    with pytest.raises(RuntimeError, match="^'inputs' argument to backward\\(\\) cannot be empty.$"):
        (x * 2).sum().backward(inputs=[])
    with pytest.raises(RuntimeError, match="^grad requires non-empty inputs.$"):
        tt.autograd.grad((x * 2).sum(), [])


def test_grad_with_several_outputs_inputs_and_grad_outputs(device):
    x = leaf([1.0, 2.0], device)
    w = leaf([3.0, -1.0], device)
    a = (x * w).sum()                           # d/dx = w, d/dw = x
    b = x * x * w                               # with grad_output v: d/dx = 2xwv, d/dw = x^2 v
    v = const([1.0, 10.0], device)
    gx, gw = tt.autograd.grad([a, b], [x, w], grad_outputs=[None, v])
    np.testing.assert_allclose(to_numpy(gx), [3.0 + 2 * 1 * 3 * 1, -1.0 + 2 * 2 * -1 * 10])
    np.testing.assert_allclose(to_numpy(gw), [1.0 + 1 * 1, 2.0 + 4 * 10])
    assert x.grad is None and w.grad is None


def test_grad_frees_the_graph_unless_retained(device):
    x = leaf([0.5, 1.5], device)
    y = x.exp().sum()
    (g1,) = tt.autograd.grad(y, x, retain_graph=True)
    (g2,) = tt.autograd.grad(y, x)
    np.testing.assert_allclose(to_numpy(g1), np.exp([0.5, 1.5]))
    np.testing.assert_allclose(to_numpy(g2), to_numpy(g1))
    with pytest.raises(RuntimeError) as err:
        tt.autograd.grad(y, x)
    assert str(err.value) == (
        "Trying to backward through the graph a second time (or directly access saved tensors "
        "after they have already been freed). Saved intermediate values of the graph are freed "
        "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
        "backward through the graph a second time or if you need to access saved tensors after "
        "calling backward.")


class _Counted(tt.autograd.Function):
    """Identity that counts how often its backward runs."""
    calls = 0

    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, g):
        _Counted.calls += 1
        return g


def test_grad_wrt_an_intermediate_does_not_run_the_graph_behind_it(device):
    x = leaf([1.0, 2.0], device)
    h = _Counted.apply(x * 2)                   # h's own node is _CountedBackward
    out = (h * h).sum()
    _Counted.calls = 0
    (gh,) = tt.autograd.grad(out, h, retain_graph=True)
    np.testing.assert_allclose(to_numpy(gh), 2 * to_numpy(h))
    assert _Counted.calls == 0 and x.grad is None   # captured at h: nothing behind it runs
    # with a leaf behind it also requested, the path to the leaf runs once
    gh2, gx = tt.autograd.grad(out, [h, x])
    np.testing.assert_allclose(to_numpy(gh2), to_numpy(gh))
    np.testing.assert_allclose(to_numpy(gx), 8 * np.array([1.0, 2.0]))
    assert _Counted.calls == 1


def test_grad_accumulates_in_place_into_an_existing_grad(device):
    # torch's AccumulateGrad: without create_graph, later gradients are added into the very
    # tensor already in .grad (an optimizer holding it sees the sum)
    x = leaf([1.0, 2.0], device)
    (x * 3).sum().backward()
    g = x.grad
    v = version(g)
    (x * x).sum().backward()
    assert x.grad is g and version(g) > v
    np.testing.assert_allclose(to_numpy(g), [5.0, 7.0])
    mine = const([100.0, 200.0], device)
    x.grad = mine                               # an assigned grad is accumulated into too
    (x * 1).sum().backward()
    assert x.grad is mine
    np.testing.assert_allclose(to_numpy(mine), [101.0, 201.0])
    # under create_graph the sum is a new tensor with history
    with pytest.warns(UserWarning, match="create_graph=True will create a reference cycle"):
        (x * x).sum().backward(create_graph=True)
    assert x.grad is not mine and x.grad.requires_grad
    np.testing.assert_allclose(to_numpy(x.grad), [103.0, 205.0])
    np.testing.assert_allclose(to_numpy(mine), [101.0, 201.0])


# ============================================================================ version counters
def _inplace_cases():
    return [
        ("add_", lambda t: t.add_(1)),
        ("sub_", lambda t: t.sub_(tt.ones_like(t), alpha=2)),
        ("mul_", lambda t: t.mul_(2)),
        ("div_", lambda t: t.div_(2)),
        ("pow_", lambda t: t.pow_(2)),
        ("iadd", lambda t: t.__iadd__(1)),
        ("isub", lambda t: t.__isub__(1)),
        ("imul", lambda t: t.__imul__(3)),
        ("itruediv", lambda t: t.__itruediv__(4)),
        ("ipow", lambda t: t.__ipow__(1)),
        ("copy_", lambda t: t.copy_(tt.ones_like(t))),
        ("fill_", lambda t: t.fill_(5.0)),
        ("zero_", lambda t: t.zero_()),
        ("normal_", lambda t: t.normal_()),
        ("uniform_", lambda t: t.uniform_()),
    ]


@pytest.mark.parametrize("name,write", _inplace_cases(), ids=[c[0] for c in _inplace_cases()])
def test_every_inplace_write_bumps_the_version_once(device, name, write):
    base = const([[1.0, 2.0], [3.0, 4.0]], device)
    view = base[1]
    alias = base.detach()
    assert version(base) == version(view) == version(alias) == 0
    assert write(view) is view
    # the counter is shared by a tensor, its views and its detach() aliases
    assert version(base) == version(view) == version(alias) == 1
    write(base)
    assert version(view) == 2
    assert version(base.data) == 0              # .data has a counter of its own
    # recorded in-place ops on a non-leaf bump it by one too
    x = leaf([[0.5, 1.0], [1.5, 2.0]], device)
    y = x * 1
    with tt.no_grad() if name in ("normal_", "uniform_") else _nullcontext():
        write(y)
    assert version(y) == 1


def test_inplace_add_sub_with_alpha_and_a_number(device):
    # torch: t.sub_(1, alpha=2) subtracts 2 (and t.add(1, alpha=3) adds 3); found while
    # testing version counters: ops/elementwise.py computes mul(other, alpha) on two numbers
    t = const([5.0, 6.0], device)
    t.sub_(1, alpha=2)
    np.testing.assert_allclose(to_numpy(t), [3.0, 4.0])
    assert version(t) == 1
    np.testing.assert_allclose(to_numpy(t.add(1, alpha=3)), [6.0, 7.0])


class _nullcontext:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def test_copy_into_a_non_leaf_keeps_it_in_the_graph(device):
    # torch: y.copy_(src) records CopyBackwards even when src is a constant; y still requires
    # grad and its old history receives a zero gradient
    x = leaf([1.0, 2.0], device)
    y = x * 1
    y.copy_(const([5.0, 6.0], device))
    assert y.requires_grad and y.grad_fn is not None
    (y * 2).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [0.0, 0.0])


def test_version_error_message_matches_torch(device):
    x = leaf([0.0, 1.0, 2.0], device, dtype=tt.float32)
    y = x.exp()
    y.add_(1)
    kind = "torch.cuda.FloatTensor" if device == "cuda" else "torch.FloatTensor"
    with pytest.raises(RuntimeError) as err:
        y.sum().backward()
    assert str(err.value) == (
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{kind} [3]], which is output 0 of ExpBackward0, is at version 1; expected "
        "version 0 instead. Hint: enable anomaly detection to find the operation that failed to "
        "compute its gradient, with torch.autograd.set_detect_anomaly(True).")


def test_version_error_for_a_saved_leaf_and_a_saved_constant(device):
    x = leaf([[1.0, 2.0], [3.0, 4.0]], device)
    c = const([[5.0, 6.0], [7.0, 8.0]], device)
    y = (x * c).sum()                            # MulBackward0 saves both
    with tt.no_grad():
        x.mul_(2)
        x.add_(1)
    c.add_(1)
    with pytest.raises(RuntimeError) as err:
        y.backward()
    kind = "torch.cuda.DoubleTensor" if device == "cuda" else "torch.DoubleTensor"
    # a leaf has no grad_fn: torch leaves out the "which is output ..." part
    assert f"inplace operation: [{kind} [2, 2]] is at version " in str(err.value)
    assert ("is at version 2; expected version 0 instead." in str(err.value)
            or "is at version 1; expected version 0 instead." in str(err.value))


def test_version_error_in_anomaly_mode_gives_the_other_hint(device):
    x = leaf([1.0, 2.0], device)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        anomaly = tt.autograd.detect_anomaly()
    with anomaly:
        a = x * 1
        b = a.sin()                              # SinBackward0 saves a: output 0 of MulBackward0
        a.mul_(2)                                # now a's history is the in-place MulBackward0
        with pytest.warns(UserWarning, match="Error detected in SinBackward0"):
            with pytest.raises(RuntimeError) as err:
                b.sum().backward()
    msg = str(err.value)
    assert "which is output 0 of MulBackward0, is at version 1; expected version 0 instead." in msg
    assert msg.endswith(
        "Hint: the backtrace further above shows the operation that failed to compute its "
        "gradient. The variable in question was changed in there or anywhere later. Good luck!")


def test_saved_tensor_detached_in_place_is_an_error(device):
    x = leaf([1.0, 2.0], device)
    a = x * 1
    b = a * a
    a.detach_()
    with pytest.raises(RuntimeError, match="Trying to use a saved tensor that has been detached in-place"):
        b.sum().backward()


def test_inplace_error_on_leaf_keeps_values_and_version(device):
    x = leaf([1.0, 2.0], device)
    with pytest.raises(RuntimeError) as err:
        x.div_(2)
    assert str(err.value) == "a leaf Variable that requires grad is being used in an in-place operation."
    assert version(x) == 0
    np.testing.assert_allclose(to_numpy(x), [1.0, 2.0])


# ============================================================================ hooks, retain_grad
def test_hooks_chain_in_order_and_retain_grad_sees_the_result(device):
    x = leaf([1.0, 2.0], device)
    y = x * 3
    y.retain_grad()                             # registered first, still runs after the hooks
    seen = []
    y.register_hook(lambda g: g * 2)
    y.register_hook(lambda g: seen.append(to_numpy(g)))
    y.register_hook(lambda g: g + 1)
    (y * y).sum().backward()
    dy = 2 * 3 * np.array([1.0, 2.0])           # d(y*y)/dy
    np.testing.assert_allclose(seen[0], 2 * dy)
    np.testing.assert_allclose(to_numpy(y.grad), 2 * dy + 1)
    np.testing.assert_allclose(to_numpy(x.grad), 3 * (2 * dy + 1))


def test_leaf_hook_changes_what_grad_returns(device):
    x = leaf([1.0, 2.0], device)
    x.register_hook(lambda g: g * 10)
    (gx,) = tt.autograd.grad((x * x).sum(), x)
    np.testing.assert_allclose(to_numpy(gx), [20.0, 40.0])
    assert x.grad is None


def test_hook_handle_as_context_manager_and_double_remove(device):
    x = leaf([1.0], device)
    with x.register_hook(lambda g: g * 0) as handle:
        (x * 5).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [0.0])
    handle.remove()                              # removing again is harmless
    (x * 5).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [5.0])


def test_a_hook_may_not_change_the_size_or_kind_of_the_gradient(device):
    x = leaf([1.0, 2.0], device)
    y = x * 2

    def shrink(g):
        return g.sum()

    y.register_hook(shrink)
    with pytest.raises(RuntimeError, match="^hook 'shrink' has changed the size of value$"):
        y.sum().backward()
    h = x.register_hook(lambda g: [1.0, 2.0])
    with pytest.raises(TypeError, match="expected Variable or None \\(got list\\)"):
        (x * 2).sum().backward()
    h.remove()
    x.register_hook(lambda g: g.to(tt.float32))
    with pytest.raises(RuntimeError, match="hook '<lambda>' has changed the type of value"):
        (x * 2).sum().backward()


def test_retain_grad_accumulates_and_follows_create_graph(device):
    x = leaf([1.0, -1.0], device)
    y = x * x
    y.retain_grad()
    z = (y * 2).sum()
    z.backward(retain_graph=True)
    z.backward()
    np.testing.assert_allclose(to_numpy(y.grad), [4.0, 4.0])
    assert not y.grad.requires_grad
    y2 = x * x
    y2.retain_grad()
    with pytest.warns(UserWarning):
        (y2 * y2).sum().backward(create_graph=True)
    assert y2.grad.requires_grad                # 2*y2, differentiable
    (g,) = tt.autograd.grad(y2.grad.sum(), x)
    np.testing.assert_allclose(to_numpy(g), 4 * np.array([1.0, -1.0]))
    # on a leaf it is a no-op; on a tensor that does not require grad, torch's error
    x.retain_grad()
    assert not x.retains_grad
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        const([1.0], device).retain_grad()


def test_retain_grad_follows_an_inplace_change_but_hooks_stay(device):
    # torch: hooks registered before an in-place op see the gradient of the old value;
    # retain_grad() moves to the new history
    x = leaf([1.0, 2.0], device)
    y = x * 1
    y.retain_grad()
    seen = []
    y.register_hook(lambda g: seen.append(to_numpy(g)))
    y = _AddOneInPlace.apply(y)                 # a Function that marks y dirty
    (y * 3).sum().backward()
    np.testing.assert_allclose(to_numpy(y.grad), [3.0, 3.0])
    np.testing.assert_allclose(seen[0], [3.0, 3.0])   # AddOne's backward is g * 1


def test_retain_grad_follows_a_recorded_inplace_op(device):
    # the same through an in-place op of the table: y.grad is d/dy of the new y (3, not 6)
    x = leaf([1.0, 2.0], device)
    y = x * 1
    y.retain_grad()
    seen = []
    y.register_hook(lambda g: seen.append(to_numpy(g)))
    y.mul_(2)
    (y * 3).sum().backward()
    np.testing.assert_allclose(to_numpy(y.grad), [3.0, 3.0])
    np.testing.assert_allclose(seen[0], [6.0, 6.0])   # the hook saw the old value's gradient


def test_grad_setter_type_and_none(device):
    x = leaf([1.0, 2.0], device)
    with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None but got grad of type list"):
        x.grad = [1.0, 2.0]
    x.grad = const([1.0, 1.0], device)
    x.grad = None
    assert x.grad is None
    (x * 2).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [2.0, 2.0])


def test_data_setter_replaces_the_values_of_a_parameter(device):
    w = leaf([1.0, 2.0], device)
    w.data = const([3.0, 4.0, 5.0], device)      # even another shape, as in torch
    assert w.requires_grad and w.is_leaf and w.shape == (3,)
    (w * w).sum().backward()
    np.testing.assert_allclose(to_numpy(w.grad), [6.0, 8.0, 10.0])
    d = w.data
    assert not d.requires_grad and d.grad_fn is None and d.data_ptr() == w.data_ptr()
    with pytest.raises(TypeError):
        w.data = [1.0]


def test_detach_inplace_of_a_view_of_a_tensor_requiring_grad(device):
    x = leaf([1.0, 2.0], device)
    with pytest.raises(RuntimeError, match="^Can't detach views in-place. Use detach\\(\\) instead."):
        (x * 1)[0].detach_()


# ============================================================================ custom Function
class LinearFunction(tt.autograd.Function):
    """PyTorch's documentation example, elementwise: out = input * weight (+ bias)."""

    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input * weight
        if bias is not None:
            output = output + bias
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output * weight
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output * input
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output
        return grad_input, grad_weight, grad_bias


def test_linear_function_example(device):
    x = leaf([[1.0, 2.0], [3.0, 4.0]], device)
    w = leaf([0.5, -1.0], device)
    b = const([10.0, 20.0], device)
    out = LinearFunction.apply(x, w, b)
    assert out.grad_fn.name() == "LinearFunctionBackward"
    assert [n.name() if n is not None else None for n, _ in out.grad_fn.next_functions] == \
        ["AccumulateGrad", "AccumulateGrad", None]
    np.testing.assert_allclose(to_numpy(out), [[10.5, 18.0], [11.5, 16.0]])
    out.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [[0.5, -1.0], [0.5, -1.0]])
    np.testing.assert_allclose(to_numpy(w.grad), [4.0, 6.0])   # summed over the broadcast rows
    assert b.grad is None
    # bias omitted: a non-tensor default argument
    out = LinearFunction.apply(x, w)
    np.testing.assert_allclose(to_numpy(out), [[0.5, -2.0], [1.5, -4.0]])
    bb = leaf([1.0, 1.0], device)
    assert tt.autograd.gradcheck(LinearFunction.apply, (x, w, bb))


class _Scale(tt.autograd.Function):
    @staticmethod
    def forward(ctx, x, factor, mode):
        ctx.factor, ctx.mode = factor, mode      # non-tensor arguments live on ctx
        ctx.log = []
        return x * factor

    @staticmethod
    def backward(ctx, g):
        ctx.log.append((ctx.mode, ctx.needs_input_grad))
        return g * ctx.factor, None, None


def test_function_keeps_non_tensor_arguments_and_attributes(device):
    x = leaf([1.0, 2.0], device)
    y = _Scale.apply(x, 2.5, "fast")
    assert y.grad_fn.ctx.factor == 2.5
    y.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [2.5, 2.5])
    assert y.grad_fn.ctx.log == [("fast", (True, False, False))]
    with tt.no_grad():
        z = _Scale.apply(x, 2.0, "slow")
    assert z.grad_fn is None and not z.requires_grad
    c = const([1.0], device)
    assert _Scale.apply(c, 2.0, "x").grad_fn is None


class _AddOneInPlace(tt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 1


def test_mark_dirty(device):
    x = leaf([1.0, 2.0], device)
    a = x * 2
    v = version(a)
    b = _AddOneInPlace.apply(a)
    assert b is a                               # the modified input is the output, rebased
    assert version(a) == v + 1 and a.grad_fn.name() == "_AddOneInPlaceBackward"
    np.testing.assert_allclose(to_numpy(a), [3.0, 5.0])
    (a * a).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), 2 * 2 * np.array([3.0, 5.0]))
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad has been used in an in-place operation.$"):
        _AddOneInPlace.apply(leaf([1.0], device))

    class DirtyNotReturned(tt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="Some elements marked as dirty during the forward method were not returned as output"):
        DirtyNotReturned.apply(x * 1)


class _SortLike(tt.autograd.Function):
    """Returns (2x, a float 0/1 mask) and marks the mask non-differentiable."""
    received = []

    @staticmethod
    def forward(ctx, x):
        mask = (x > 0).to(x.dtype)
        ctx.mark_non_differentiable(mask)
        return x * 2, mask

    @staticmethod
    def backward(ctx, g, g_mask):
        _SortLike.received.append(to_numpy(g_mask))
        return g * 2


def test_mark_non_differentiable(device):
    x = leaf([-1.0, 3.0], device)
    y, mask = _SortLike.apply(x)
    assert y.requires_grad and not mask.requires_grad and mask.grad_fn is None
    _SortLike.received.clear()
    (y * mask).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [0.0, 2.0])
    np.testing.assert_allclose(_SortLike.received[0], [0.0, 0.0])   # materialized zeros


class _PassThroughMarked(tt.autograd.Function):
    """Returns its input unchanged and marks it non-differentiable (torch: a detached alias)."""

    @staticmethod
    def forward(ctx, x):
        ctx.mark_non_differentiable(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g


def test_mark_non_differentiable_on_a_returned_input(device):
    x = leaf([1.0, 2.0], device)
    y = _PassThroughMarked.apply(x)
    assert y is not x and not y.requires_grad and y.grad_fn is None


class _TwoOutputs(tt.autograd.Function):
    received = []
    materialize = True

    @staticmethod
    def forward(ctx, x, y):
        ctx.set_materialize_grads(_TwoOutputs.materialize)
        ctx.save_for_backward(x, y)
        return x * y, x + y

    @staticmethod
    def backward(ctx, g_prod, g_sum):
        _TwoOutputs.received.append((g_prod is None, g_sum is None))
        x, y = ctx.saved_tensors
        gp = g_prod if g_prod is not None else tt.zeros_like(x)
        gs = g_sum if g_sum is not None else tt.zeros_like(x)
        return gp * y + gs, gp * x + gs


def test_several_outputs_and_materialize_grads(device):
    x = leaf([1.0, 2.0], device)
    y = leaf([3.0, 4.0], device)
    p, s = _TwoOutputs.apply(x, y)
    assert p.grad_fn is s.grad_fn and (p._output_nr, s._output_nr) == (0, 1)
    (p * 2 + s * 10).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), 2 * np.array([3.0, 4.0]) + 10)
    np.testing.assert_allclose(to_numpy(y.grad), 2 * np.array([1.0, 2.0]) + 10)
    _TwoOutputs.received.clear()
    for materialize in (True, False):
        _TwoOutputs.materialize = materialize
        p, s = _TwoOutputs.apply(x, y)
        (gx,) = tt.autograd.grad(p.sum(), x)        # s is unused
        np.testing.assert_allclose(to_numpy(gx), [3.0, 4.0])
    _TwoOutputs.materialize = True
    assert _TwoOutputs.received == [(False, False), (False, True)]


class _SaveBoth(tt.autograd.Function):
    @staticmethod
    def forward(ctx, x, c):
        y = x.exp() * c
        ctx.save_for_backward(c, y)
        return y

    @staticmethod
    def backward(ctx, g):
        c, y = ctx.saved_tensors
        return g * y, None


def test_function_saved_tensors_are_version_checked(device):
    x = leaf([0.0, 1.0], device)
    c = const([2.0, 3.0], device)
    y = _SaveBoth.apply(x, c)
    c.mul_(2)                                   # a saved input
    kind = "torch.cuda.DoubleTensor" if device == "cuda" else "torch.DoubleTensor"
    with pytest.raises(RuntimeError, match=f"inplace operation: \\[{kind} \\[2\\]\\] is at version 1; expected version 0"):
        y.sum().backward()
    c = const([2.0, 3.0], device)
    y = _SaveBoth.apply(x, c)
    y.add_(1)                                   # a saved output
    with pytest.raises(RuntimeError, match="which is output 0 of _SaveBothBackward, is at version 1; expected version 0"):
        y.sum().backward()


def test_function_argument_checks(device):
    class SavesAnInt(tt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

    x = leaf([1.0, 2.0], device)
    with pytest.raises(TypeError, match="save_for_backward can only save variables, but argument 1 is of type int"):
        SavesAnInt.apply(x)

    class BadShape(tt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return tt.ones(3, dtype=tt.float64, device=x.device)

    with pytest.raises(RuntimeError) as err:
        BadShape.apply(x).backward()
    assert str(err.value) == ("Function BadShapeBackward returned an invalid gradient at index 0 - "
                              "got [3] but expected shape compatible with [2]")


def test_input_returned_unchanged_becomes_a_new_output(device):
    class Identity(tt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = leaf([1.0, 2.0], device)
    y = Identity.apply(x)
    assert y is not x and x.is_leaf and y.grad_fn.name() == "IdentityBackward"
    assert y.data_ptr() == x.data_ptr()
    y.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [3.0, 3.0])


class _CubeOnce(tt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x * x


def test_once_differentiable(device):
    x = leaf([1.0, 2.0], device)
    (g,) = tt.autograd.grad(_CubeOnce.apply(x).sum(), x)
    np.testing.assert_allclose(to_numpy(g), [3.0, 12.0])
    assert not g.requires_grad
    (g,) = tt.autograd.grad((_CubeOnce.apply(x) + x * x).sum(), x, create_graph=True)
    np.testing.assert_allclose(to_numpy(g), [5.0, 16.0])      # values are unaffected
    assert g.requires_grad
    with pytest.raises(NotImplementedError, match="trying to differentiate twice a function that was marked with @once_differentiable"):
        tt.autograd.grad(g.sum(), x)
    # an error, not a second derivative silently missing the cube's 6x
    assert issubclass(NotImplementedError, RuntimeError)


# ============================================================================ no double backward
def _same_rule(x):
    return Meta(tuple(x.shape), x.dtype)


def _raw_cube_backward(ctx, g):
    # computed outside the graph: it has no double backward
    x = to_numpy(ctx.x)
    return tt.tensor(3 * x * x * to_numpy(g), dtype=g.dtype, device=g.device)


RAW_CUBE = OpDef(name="raw_cube", args=("x",), rule=_same_rule, reference=lambda x: x ** 3,
                 backward=_raw_cube_backward, saves=("x",))
MARKED_CUBE = OpDef(name="marked_cube", args=("x",), rule=_same_rule, reference=lambda x: x ** 3,
                    backward=once_differentiable(lambda ctx, g: g * 3 * ctx.x * ctx.x), saves=("x",))
# a step function: its derivative is zero everywhere (torch's round/floor/sign)
STEP = OpDef(name="step", args=("x",), rule=_same_rule, reference=np.floor,
             backward=lambda ctx, g: tt.zeros_like(g))


def test_a_backward_without_double_backward_raises_instead_of_a_wrong_answer():
    # (test-only op entries, not registered in the table; cpu: they have no kernel)
    a = np.array([0.5, -1.5])
    x = leaf(a, "cpu")
    out = (dispatch(RAW_CUBE, x) * x).sum()        # d/dx = 4x^3
    (g,) = tt.autograd.grad(out, x, create_graph=True)
    np.testing.assert_allclose(to_numpy(g), 4 * a ** 3)
    with pytest.raises(NotImplementedError, match="derivative for raw_cube_backward is not implemented"):
        tt.autograd.grad(g.sum(), x)
    # a rule marked once_differentiable raises even when only its saved input carries the graph
    (g,) = tt.autograd.grad((dispatch(MARKED_CUBE, x) + x * x).sum(), x, create_graph=True)
    np.testing.assert_allclose(to_numpy(g), 3 * a ** 2 + 2 * a)
    with pytest.raises(NotImplementedError, match="once_differentiable"):
        tt.autograd.grad(g.sum(), x)
    # first-order use is unaffected
    (g,) = tt.autograd.grad((dispatch(RAW_CUBE, x) * x).sum(), x)
    np.testing.assert_allclose(to_numpy(g), 4 * a ** 3)


def test_a_zero_derivative_is_not_mistaken_for_a_missing_rule():
    a = np.array([0.5, -1.5])
    x = leaf(a, "cpu")
    out = (dispatch(STEP, x * x) * x + x * x * x).sum()   # d/dx = floor(x^2) + 3x^2 (a.e.)
    (g,) = tt.autograd.grad(out, x, create_graph=True)
    np.testing.assert_allclose(to_numpy(g), np.floor(a * a) + 3 * a * a)
    (gg,) = tt.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(to_numpy(gg), 6 * a)


# ============================================================================ higher order
def test_hessian_vector_product(device):
    # f(x) = sum(x^3) + (x0 * x1)^2 ; H = diag(6x) + d2/dx2 of (x0 x1)^2
    a = np.array([1.0, 2.0])
    x = leaf(a, device)
    v = const([1.0, -1.0], device)
    f = (x ** 3).sum() + (x[0] * x[1]) ** 2
    (g,) = tt.autograd.grad(f, x, create_graph=True)
    np.testing.assert_allclose(to_numpy(g), 3 * a ** 2 + 2 * a[0] * a[1] * a[::-1])
    (hv,) = tt.autograd.grad(g, x, grad_outputs=v)
    x0, x1 = a
    H = np.array([[6 * x0 + 2 * x1 ** 2, 4 * x0 * x1],
                  [4 * x0 * x1, 6 * x1 + 2 * x0 ** 2]])
    np.testing.assert_allclose(to_numpy(hv), H @ [1.0, -1.0])
    # the same via the dot product g . v (a scalar) and backward
    x2 = leaf(a, device)
    f2 = (x2 ** 3).sum() + (x2[0] * x2[1]) ** 2
    (g2,) = tt.autograd.grad(f2, x2, create_graph=True)
    (g2 * v).sum().backward()
    np.testing.assert_allclose(to_numpy(x2.grad), H @ [1.0, -1.0])


def test_full_hessian_of_a_two_input_function(device):
    # f(x, y) = sum(x^2 y + sin(x) y^3); second derivatives by hand
    xa, ya = np.array([0.3, -0.7]), np.array([1.1, 0.4])
    x, y = leaf(xa, device), leaf(ya, device)
    f = (x * x * y + x.sin() * y ** 3).sum()
    gx, gy = tt.autograd.grad(f, [x, y], create_graph=True)
    rows = {}
    for name, g in (("x", gx), ("y", gy)):
        for i in range(2):
            rows[name, i] = [to_numpy(t) for t in tt.autograd.grad(g[i], [x, y], retain_graph=True)]
    for i in range(2):
        np.testing.assert_allclose(rows["x", i][0], np.eye(2)[i] * (2 * ya - np.sin(xa) * ya ** 3), atol=1e-12)
        np.testing.assert_allclose(rows["x", i][1], np.eye(2)[i] * (2 * xa + 3 * np.cos(xa) * ya ** 2), atol=1e-12)
        np.testing.assert_allclose(rows["y", i][1], np.eye(2)[i] * (6 * np.sin(xa) * ya), atol=1e-12)


# ============================================================================ gradcheck
def test_gradcheck_defaults_are_torchs():
    gc_sig = inspect.signature(tt.autograd.gradcheck).parameters
    ggc_sig = inspect.signature(tt.autograd.gradgradcheck).parameters
    for sig in (gc_sig, ggc_sig):
        assert (sig["eps"].default, sig["atol"].default, sig["rtol"].default) == (1e-6, 1e-5, 1e-3)
        assert sig["raise_exception"].default is True
    assert gc_sig["nondet_tol"].default == 0.0


def test_gradcheck_input_checks():
    c = const([1.0, 2.0], "cpu")
    with pytest.raises(ValueError, match="gradcheck expects at least one input tensor to require gradient"):
        tt.autograd.gradcheck(lambda t: t * 2, (c,))
    x32 = leaf([0.5, 1.0], "cpu", dtype=tt.float32)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double precision floating point"):
        tt.autograd.gradcheck(lambda t: t * 2, (x32,), eps=1e-3, atol=1e-2, raise_exception=False)


class _WrongSecondOutput(tt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2, x * x

    @staticmethod
    def backward(ctx, g1, g2):
        (x,) = ctx.saved_tensors
        return g1 * 2 + g2 * x                   # the second output's should be 2x


def test_gradcheck_reports_the_output_and_input(device):
    x = leaf([0.5, -1.0], device)
    with pytest.raises(RuntimeError, match="^Jacobian mismatch for output 1 with respect to input 0,"):
        tt.autograd.gradcheck(_WrongSecondOutput.apply, (x,))
    np.testing.assert_allclose(to_numpy(x), [0.5, -1.0])        # perturbations undone


def test_gradcheck_detects_a_non_reentrant_backward():
    class Drifting(tt.autograd.Function):
        calls = 0

        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            Drifting.calls += 1
            return g * (1 + 1e-9 * Drifting.calls)   # within tolerance, never the same twice

    x = leaf([0.5], "cpu")
    with pytest.raises(RuntimeError, match="^Backward is not reentrant"):
        tt.autograd.gradcheck(Drifting.apply, (x,))
    assert tt.autograd.gradcheck(Drifting.apply, (x,), nondet_tol=1e-6)


class _SquareDetachedBackward(tt.autograd.Function):
    """First derivative right; its backward detaches x, so the second derivative is wrong."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2 * x.detach()


def test_gradgradcheck_catches_a_wrong_double_backward(device):
    x = leaf([0.5, -1.5], device)
    assert tt.autograd.gradcheck(_SquareDetachedBackward.apply, (x,))
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        tt.autograd.gradgradcheck(_SquareDetachedBackward.apply, (x,))
    assert tt.autograd.gradgradcheck(lambda t: t * t, (x,))


# ============================================================================ anomaly mode
class _NanGrad(tt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, g):
        return g * float("nan")


class _Fails(tt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, g):
        raise ValueError("broken backward")


def test_anomaly_mode_records_where_each_node_was_made(device):
    x = leaf([1.0], device)
    assert "traceback_" not in (x * 2).grad_fn.metadata
    assert not tt.autograd.is_anomaly_enabled()
    with pytest.warns(UserWarning, match="^Anomaly Detection has been enabled. This mode will increase the runtime"):
        with tt.autograd.detect_anomaly():
            assert tt.autograd.is_anomaly_enabled()
            y = x.exp()  # the line anomaly mode must point at
            z = _Fails.apply(x)
    assert not tt.autograd.is_anomaly_enabled()
    trace = "".join(y.grad_fn.metadata["traceback_"])
    assert "y = x.exp()  # the line anomaly mode must point at" in trace
    assert "tritensor/ops" not in trace          # it ends at the user's frame
    assert "z = _Fails.apply(x)" in "".join(z.grad_fn.metadata["traceback_"])


def test_anomaly_mode_shows_the_forward_traceback_when_backward_fails(device):
    x = leaf([1.0], device)
    with pytest.warns(UserWarning):
        with tt.autograd.detect_anomaly():
            z = _Fails.apply(x * 2)  # forward of the failing node
            with pytest.warns(UserWarning) as record:
                with pytest.raises(ValueError, match="broken backward"):
                    z.sum().backward()
    messages = [str(w.message) for w in record]
    failure = [m for m in messages if m.startswith("Error detected in _FailsBackward.")]
    assert failure and "Traceback of forward call that caused the error" in failure[0]
    assert "z = _Fails.apply(x * 2)  # forward of the failing node" in failure[0]
    # a node made outside anomaly mode has nothing to show
    z = _Fails.apply(x * 2)
    with tt.autograd.set_detect_anomaly(True):
        with pytest.warns(UserWarning, match="No forward pass information available"):
            with pytest.raises(ValueError):
                z.sum().backward()
    assert not tt.autograd.is_anomaly_enabled()


def test_anomaly_mode_check_nan(device):
    x = leaf([1.0, 2.0], device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tt.autograd.detect_anomaly():
            y = _NanGrad.apply(x).sum()
            with pytest.raises(RuntimeError) as err:
                y.backward(retain_graph=True)
        assert str(err.value) == "Function '_NanGradBackward' returned nan values in its 0th output."
        with tt.autograd.detect_anomaly(check_nan=False):
            y.backward(retain_graph=True)
        assert np.isnan(to_numpy(x.grad)).all()
        # the check follows the mode at backward time
        x.grad = None
        with tt.autograd.set_detect_anomaly(True):
            with pytest.raises(RuntimeError, match="returned nan values in its 0th output"):
                y.backward(retain_graph=True)
    y.backward()                                 # off again: NaN is just a value
    assert x.grad is not None and np.isnan(to_numpy(x.grad)).all()


# ============================================================================ memory
def test_saved_tensors_are_released_after_backward(device):
    x = leaf([0.5, 1.0], device)

    def make(retain):
        h = x * 2
        ref = weakref.ref(h)
        y = h.sin().sum()                        # SinBackward0 keeps h alive ...
        del h
        assert ref() is not None
        y.backward(retain_graph=retain)          # ... until a backward without retain_graph
        return ref, y

    enabled = gc.isenabled()
    gc.disable()
    try:
        ref, y = make(retain=False)
        assert ref() is None and y.grad_fn is not None
        ref, y = make(retain=True)
        assert ref() is not None
        y.backward()
        assert ref() is None
        # a custom Function's saved tensors too
        h = x * 3
        ref = weakref.ref(h)
        y = LinearFunction.apply(h, h).sum()
        del h
        assert ref() is not None
        y.backward()
        assert ref() is None
    finally:
        if enabled:
            gc.enable()


def test_graphs_with_hooks_retain_grad_anomaly_and_double_backward_are_freed(device):
    x = leaf([0.5, 1.5], device)

    def hooked():
        y = x.exp()
        y.retain_grad()
        y.register_hook(lambda g: g * 2)
        (y * y).sum().backward()
        return weakref.ref(y.grad_fn)

    def anomaly():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with tt.autograd.detect_anomaly():
                y = _Scale.apply(x.sin(), 2.0, "m")
                y.sum().backward()
        return weakref.ref(y.grad_fn)

    def second_order():
        (g,) = tt.autograd.grad((x ** 3).sum(), x, create_graph=True)
        (gg,) = tt.autograd.grad(g.sum(), x, create_graph=True)
        return weakref.ref(gg.grad_fn)

    def once():
        (g,) = tt.autograd.grad((_CubeOnce.apply(x) * x).sum(), x, create_graph=True)
        return weakref.ref(g.grad_fn)

    for make in (hooked, anomaly, second_order, once):
        assert _freed_without_gc(make), make.__name__


def test_a_graph_of_100k_nodes_runs_and_is_freed():
    # cpu: the point is the depth (no recursion), not the kernels
    x = leaf([1.0, 2.0], "cpu")

    def build():
        y = x
        for i in range(100_000):
            y = (y * 1.0) if i % 2 else y.view(2)   # 100k nodes: MulBackward0 / ViewBackward0
        return y

    def run():
        y = build()
        first = weakref.ref(y.grad_fn)
        (g,) = tt.autograd.grad(y.sum(), x, retain_graph=True)
        np.testing.assert_allclose(to_numpy(g), [1.0, 1.0])
        depth, node = 0, y.grad_fn
        while node is not None and depth < 200_000:
            depth += 1
            nxt = [n for n, _ in node.next_functions if n is not None]
            node = nxt[0] if nxt and nxt[0].name() != "AccumulateGrad" else None
        assert depth == 100_000
        del y, node, nxt                            # freeing a never-released deep graph
        return first

    enabled = gc.isenabled()
    gc.disable()
    try:
        assert run()() is None
    finally:
        if enabled:
            gc.enable()


# ============================================================================ worked examples
def test_freezing_part_of_a_model(device):
    # a two-layer elementwise "model": h = relu(x * w1 + b1); out = h * w2 + b2
    rng = np.random.default_rng(7)
    xa, w1a, b1a, w2a, b2a = (rng.standard_normal(4) for _ in range(5))
    x = const(xa, device)
    w1, b1 = const(w1a, device), const(b1a, device)            # frozen
    w2, b2 = leaf(w2a, device), leaf(b2a, device)             # trained
    h = (x * w1 + b1).relu()
    assert not h.requires_grad and h.grad_fn is None           # no graph before the first trained layer
    out = h * w2 + b2
    assert out.requires_grad
    loss = (out * out).sum()
    loss.backward()
    ha = np.maximum(xa * w1a + b1a, 0)
    dout = 2 * (ha * w2a + b2a)
    np.testing.assert_allclose(to_numpy(w2.grad), dout * ha)
    np.testing.assert_allclose(to_numpy(b2.grad), dout)
    assert w1.grad is None and b1.grad is None
    # unfreezing the first layer: gradients reach it
    w1.requires_grad_()
    b1.requires_grad_()
    h = (x * w1 + b1).relu()
    assert h.requires_grad
    ((h * w2 + b2) ** 2).sum().backward()
    active = (xa * w1a + b1a > 0).astype(float)
    np.testing.assert_allclose(to_numpy(b1.grad), dout * w2a * active)
    np.testing.assert_allclose(to_numpy(w1.grad), dout * w2a * active * xa)


def test_straight_through_estimator(device):
    # quantize to multiples of 1/4 (truncating via an integer cast: not differentiable) and let
    # the gradient pass straight through: a + (q(a) - a).detach()
    a_np = np.array([0.3, 1.7, -0.6])
    a = leaf(a_np, device)

    def quantize(t):
        return (t * 4).to(tt.int64).to(t.dtype) / 4

    q = quantize(a)
    assert not q.requires_grad                  # the cast cut the graph
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        (q * q).sum().backward()
    ste = a + (quantize(a) - a).detach()
    np.testing.assert_allclose(to_numpy(ste), np.trunc(a_np * 4) / 4)
    c = const([1.0, 2.0, 3.0], device)
    (ste * c).sum().backward()
    np.testing.assert_allclose(to_numpy(a.grad), [1.0, 2.0, 3.0])   # identity gradient
    a.grad = None
    (ste * ste).sum().backward()                # d/da = 2 * q(a)
    np.testing.assert_allclose(to_numpy(a.grad), 2 * np.trunc(a_np * 4) / 4)


def test_gradients_with_respect_to_intermediates(device):
    xa = np.array([0.5, -1.0, 2.0])
    x = leaf(xa, device)
    h1 = x * x                                  # non-leaf
    h2 = h1.sin()
    out = (h2 * x).sum()
    h1.retain_grad()
    seen = {}
    h2.register_hook(lambda g: seen.update(h2=to_numpy(g)))      # returns None: g unchanged
    gh1, gh2 = tt.autograd.grad(out, [h1, h2], retain_graph=True)
    np.testing.assert_allclose(to_numpy(gh2), xa)
    np.testing.assert_allclose(to_numpy(gh1), xa * np.cos(xa * xa))
    assert x.grad is None                       # grad() accumulates into no leaf ...
    # ... but retain_grad() is a tensor hook, and torch 2.x runs those for grad() too
    np.testing.assert_allclose(to_numpy(h1.grad), to_numpy(gh1))
    out.backward()
    np.testing.assert_allclose(to_numpy(h1.grad), 2 * to_numpy(gh1))
    np.testing.assert_allclose(seen["h2"], xa)
    np.testing.assert_allclose(to_numpy(x.grad), np.sin(xa * xa) + 2 * xa * xa * np.cos(xa * xa))


def test_version_is_an_int_shared_by_views_and_detach(device):
    """torch's Tensor._version: an int counting in-place writes, shared by views and detach()."""
    x = tt.zeros(4, device=device)
    v, d = x[1:], x.detach()
    assert isinstance(x._version, int) and x._version == 0
    x.add_(1)
    v.mul_(2)
    d.zero_()
    assert x._version == v._version == d._version == 3
    assert x.data._version == 0          # .data hides changes from autograd: its own counter
