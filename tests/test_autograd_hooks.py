"""Autograd hooks (issue 16 item 2), with torch's rules: Node.register_hook/register_prehook,
Tensor.register_post_accumulate_grad_hook, tt.autograd.graph.saved_tensors_hooks / save_on_cpu.
Expected orders, values and error texts are those PyTorch 2.13 gives for the same code."""
import numpy as np
import pytest

import tritensor as tt
from tritensor.autograd import graph as G


def _leaf(values=(1.0, 2.0, 3.0)):
    return tt.tensor(list(values), requires_grad=True)


def _np(t):
    return t.detach().cpu().numpy()


# --------------------------------------------------------------------- node hooks
def test_hook_order_and_replacements():
    a = _leaf()
    y = a * 2
    calls = []
    y.register_hook(lambda g: calls.append(("tensor", _np(g).tolist())))

    def pre(grad_outputs):
        calls.append(("pre", [_np(g).tolist() for g in grad_outputs]))
        return (grad_outputs[0] * 2,)

    def post(grad_inputs, grad_outputs):
        calls.append(("post", len(grad_inputs), _np(grad_outputs[0]).tolist()))
        assert grad_inputs[1] is None           # the scalar operand has no gradient
        return (grad_inputs[0] * 10, None)

    y.grad_fn.register_prehook(pre)
    y.grad_fn.register_hook(post)
    y.sum().backward()
    assert calls == [("tensor", [1.0, 1.0, 1.0]), ("pre", [[1.0, 1.0, 1.0]]), ("post", 2, [2.0, 2.0, 2.0])]
    np.testing.assert_array_equal(_np(a.grad), [40.0, 40.0, 40.0])


def test_hooks_returning_none_keep_the_gradients_and_handles_remove():
    a = _leaf()
    y = a * 3
    seen = []
    h1 = y.grad_fn.register_prehook(lambda go: seen.append("pre1"))
    y.grad_fn.register_prehook(lambda go: seen.append("pre2"))
    h3 = y.grad_fn.register_hook(lambda gi, go: seen.append("post"))
    assert isinstance(h1.id, int) and h1.id != h3.id
    h1.remove()
    h1.remove()                                  # removing twice is harmless, as torch's
    y.sum().backward(retain_graph=True)
    assert seen == ["pre2", "post"]
    h3.remove()
    y.sum().backward()
    assert seen == ["pre2", "post", "pre2"]
    np.testing.assert_array_equal(_np(a.grad), [6.0, 6.0, 6.0])


def test_handle_as_context_manager():
    a = _leaf()
    y = a.exp()
    seen = []
    with y.grad_fn.register_prehook(lambda go: seen.append(1)):
        pass
    y.sum().backward()
    assert seen == []


@pytest.mark.parametrize("kind, result, error, message", [
    ("post", (1, 2), TypeError, "expected Variable, but hook returned 'int'"),
    ("post", 1, TypeError, "expected tuple, but hook returned 'int'"),
    ("pre", (1, 2), RuntimeError, r"hook '<lambda>' has returned an incorrect number of values \(got 2, but expected 1\)"),
    ("pre", "ones5", RuntimeError, "hook '<lambda>' has changed the size of value"),
    ("post", "ones5", RuntimeError, "hook '<lambda>' has changed the size of value"),
])
def test_invalid_replacements_raise_torchs_errors(kind, result, error, message):
    a = _leaf()
    y = a * 2
    if result == "ones5":
        result = (tt.ones(5),) if kind == "pre" else (tt.ones(5), None)
    if kind == "pre":
        y.grad_fn.register_prehook(lambda go: result)
    else:
        y.grad_fn.register_hook(lambda gi, go: result)
    with pytest.raises(error, match=message):
        y.sum().backward()


def test_post_hook_can_drop_a_gradient():
    a = _leaf()
    y = a * 2
    y.grad_fn.register_hook(lambda gi, go: (None, None))
    y.sum().backward()
    assert a.grad is None


def test_hooks_on_a_custom_function_node():
    class Twice(tt.autograd.Function):
        @staticmethod
        def forward(ctx, x, z):
            return x * 2, z * 3

        @staticmethod
        def backward(ctx, gx, gz):
            return gx * 2, gz * 3

    x, z = _leaf(), _leaf()
    u, v = Twice.apply(x, z)
    got = []
    u.grad_fn.register_prehook(lambda go: got.append(len(go)))
    u.sum().backward()
    assert got == [2]                     # one entry per output, None for the one not used
    np.testing.assert_array_equal(_np(x.grad), [2.0, 2.0, 2.0])


# --------------------------------------------------------------------- AccumulateGrad hooks
def test_accumulate_grad_node_hooks():
    a = _leaf()
    acc = (a * 1).grad_fn.next_functions[0][0]
    seen = []
    hp = acc.register_prehook(lambda go: seen.append(("pre", _np(go[0]).tolist())) or (go[0] * 0,))
    hh = acc.register_hook(lambda gi, go: seen.append(("post", gi, _np(go[0]).tolist())))
    (a * 1).sum().backward()
    assert seen == [("pre", [1.0, 1.0, 1.0]), ("post", (), [0.0, 0.0, 0.0])]
    np.testing.assert_array_equal(_np(a.grad), [0.0, 0.0, 0.0])
    # autograd.grad does not run the accumulator, so none of its hooks run
    seen.clear()
    (g,) = tt.autograd.grad((a * 1).sum(), a)
    assert seen == [] and _np(g).tolist() == [1.0, 1.0, 1.0]
    hp.remove()
    hh.remove()


def test_post_accumulate_grad_hook():
    a = _leaf()
    seen = []

    def hook(t):
        assert t is a
        seen.append(_np(t.grad).tolist())
    h = a.register_post_accumulate_grad_hook(hook)
    (a * 3).sum().backward()
    (a * 1).sum().backward()
    assert seen == [[3.0, 3.0, 3.0], [4.0, 4.0, 4.0]]     # after accumulation
    tt.autograd.grad((a * 3).sum(), a)                    # nothing accumulated: not called
    (a * 2).sum().backward(inputs=[a])
    assert len(seen) == 3
    h.remove()
    (a * 2).sum().backward()
    assert len(seen) == 3


def test_post_accumulate_grad_hook_errors():
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
        (_leaf() * 2).register_post_accumulate_grad_hook(lambda t: None)
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        tt.ones(3).register_post_accumulate_grad_hook(lambda t: None)
    a = _leaf()
    a.register_post_accumulate_grad_hook(lambda t: 5)
    with pytest.raises(TypeError, match="expected Variable, but hook returned 'int'"):
        (a * 2).sum().backward()


# --------------------------------------------------------------------- saved tensors hooks
def test_saved_tensors_hooks_pack_and_unpack():
    a = _leaf()
    packed, unpacked = [], []

    def pack(t):
        packed.append((t.requires_grad, type(t.grad_fn).__name__ if t.grad_fn else None, tt.is_grad_enabled()))
        return ("box", t)

    def unpack(box):
        unpacked.append(box[0])
        return box[1]

    with G.saved_tensors_hooks(pack, unpack):
        y = a.exp()            # saves its result
        z = y * a              # saves y and a
    assert (True, "ExpBackward0", False) in packed and (True, None, False) in packed
    n = len(packed)
    z.sum().backward()
    assert len(unpacked) == n and set(unpacked) == {"box"}
    e = np.exp([1.0, 2.0, 3.0])
    np.testing.assert_allclose(_np(a.grad), e * [1.0, 2.0, 3.0] + e)


def test_saved_tensors_hooks_innermost_wins_and_scale_is_seen():
    a = _leaf()
    with G.saved_tensors_hooks(lambda t: t * 100, lambda t: t):
        with G.saved_tensors_hooks(lambda t: t * 2, lambda t: t):
            y = a * a            # the backward sees 2a for each saved a: 2a + 2a
    y.sum().backward()
    np.testing.assert_array_equal(_np(a.grad), [4.0, 8.0, 12.0])


def test_custom_function_saves_go_through_the_hooks():
    class Square(tt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    a = _leaf()
    count = []
    with G.saved_tensors_hooks(lambda t: count.append(1) or t, lambda t: t):
        y = Square.apply(a)
    assert count == [1]
    y.sum().backward()
    np.testing.assert_array_equal(_np(a.grad), [2.0, 4.0, 6.0])


def test_unpack_must_return_a_tensor_and_no_version_check():
    a = _leaf()
    with G.saved_tensors_hooks(lambda t: t, lambda t: 1):
        w = a.exp()
    with pytest.raises(TypeError, match="Output of saved tensor unpack_hook expected to be a Tensor but got result of type int"):
        w.sum().backward()
    with G.saved_tensors_hooks(lambda t: t, lambda t: t):
        c = a * 1
        w = c.exp()
        c.add_(1)
    w.sum().backward(retain_graph=True)      # torch cannot track versions through hooks
    w.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        w.sum().backward()


def test_pack_hook_must_not_modify_its_input():
    a = _leaf()
    b = a * 1
    with G.saved_tensors_hooks(lambda t: t.add_(1), lambda t: t):
        with pytest.raises(RuntimeError, match="A saved tensor pack hook is modifying its input in place"):
            b.exp()


def test_disable_saved_tensors_hooks():
    with G.disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with G.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with G.saved_tensors_hooks(lambda t: t, lambda t: t):
        pass


def test_save_on_cpu_double_backward_reaches_the_leaf():
    x = tt.tensor([1.0, -2.0, 0.5], dtype=tt.float64, requires_grad=True)
    with G.save_on_cpu():
        z = (x * x * x).sum()
    (g,) = tt.autograd.grad(z, x, create_graph=True)
    np.testing.assert_allclose(_np(g), 3 * _np(x) ** 2)
    (gg,) = tt.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(_np(gg), 6 * _np(x))


def test_save_on_cpu_moves_saved_tensors_to_host_and_back():
    x = tt.tensor([1.0, 2.0, 3.0], device="cuda", requires_grad=True)
    devices = []

    class Probe(tt.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * t

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            devices.append(t.device.type)
            return 2 * t * g

    with G.save_on_cpu():
        y = Probe.apply(x)
    node_saved = y.grad_fn.ctx._saved[0]._packed[0]
    assert node_saved[0].type == "cuda" and node_saved[1].device.type == "cpu"
    y.sum().backward()
    assert devices == ["cuda"]
    np.testing.assert_array_equal(_np(x.grad), [2.0, 4.0, 6.0])


# --------------------------------------------------------------------- graph helpers
def test_gradient_edge_and_increment_version():
    a = _leaf()
    y = a * 2
    edge = G.get_gradient_edge(y)
    assert edge.node is y.grad_fn and edge.output_nr == 0 and edge.ownership_token is None
    assert type(G.get_gradient_edge(a).node).__name__ == "AccumulateGrad"
    with pytest.raises(RuntimeError, match="It is not possible to get the gradient edge for a Tensor"):
        G.get_gradient_edge(tt.ones(2))
    v = a._version
    G.increment_version(a)
    assert a._version == v + 1
    z = a * a
    G.increment_version(a)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
