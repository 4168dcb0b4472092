"""tt.jit.trace (issue 26 items 1, 4, 7): what one run records, torch's TracerWarning, the
graph's listing and code, autograd through a traced graph, and the IR's API for the fuser.
Expected texts are torch 2.13's (torch.jit.trace on the same functions), sources stripped."""
from __future__ import annotations

import io
import math
import re
import warnings

import numpy as np
import pytest

import tritensor as tt
from tritensor.jit import Graph, TracerWarning
from tritensor.jit._interp import run_graph

WARN_BOOL = ("Converting a tensor to a Python boolean might cause the trace to be incorrect. We can't record "
             "the data flow of Python values, so this value will be treated as a constant in the future. This "
             "means that the trace might not generalize to other inputs!")


def _strip(graph):
    """The listing without its source comments (they name this file's lines)."""
    return re.sub(r" # \S+:\d+:\d+", "", str(graph))


def data_dependent(x, y):          # the seed's example: the branch depends on x's values
    if x.sum() > 0:
        return x * y
    return x - y


def iou_loss(pred, target):         # the seed's IoU loss (about 20 elementwise ops)
    pred_left, pred_top, pred_right, pred_bottom = pred[:, 0], pred[:, 1], pred[:, 2], pred[:, 3]
    target_left, target_top, target_right, target_bottom = target[:, 0], target[:, 1], target[:, 2], target[:, 3]
    target_area = (target_left + target_right) * (target_top + target_bottom)
    pred_area = (pred_left + pred_right) * (pred_top + pred_bottom)
    w_intersect = tt.min(pred_left, target_left) + tt.min(pred_right, target_right)
    h_intersect = tt.min(pred_bottom, target_bottom) + tt.min(pred_top, target_top)
    area_intersect = w_intersect * h_intersect
    area_union = target_area + pred_area - area_intersect
    ious = (area_intersect + 1.0) / (area_union + 1.0)
    return -tt.log(ious)


def _iou_numpy(p, t):
    inter = (np.minimum(p[:, 0], t[:, 0]) + np.minimum(p[:, 2], t[:, 2])) * \
        (np.minimum(p[:, 3], t[:, 3]) + np.minimum(p[:, 1], t[:, 1]))
    union = (t[:, 0] + t[:, 2]) * (t[:, 1] + t[:, 3]) + (p[:, 0] + p[:, 2]) * (p[:, 1] + p[:, 3]) - inter
    return -np.log((inter + 1.0) / (union + 1.0))


def test_data_dependent_branch_is_baked_in_with_torchs_warning():
    x, y = tt.ones(3, 4), tt.full((3, 4), 2.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        traced = tt.jit.trace(data_dependent, (x, y))
    tracer_warnings = [w for w in caught if w.category is TracerWarning]
    assert [str(w.message) for w in tracer_warnings] == [WARN_BOOL]
    assert tracer_warnings[0].filename == __file__          # points at the user's line, as torch's
    assert issubclass(TracerWarning, Warning)
    assert _strip(traced.graph) == (
        "graph(%x : Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu),\n"
        "      %y : Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu)):\n"
        "  %3 : Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu) = aten::mul(%x, %y)\n"
        "  return (%3)\n")
    assert f"{__file__}:" in str(traced.graph)
    assert traced.code == "def data_dependent(x: Tensor,\n    y: Tensor) -> Tensor:\n  _3 = ops.mul(x, y)\n  return _3\n"
    neg = -tt.ones(3, 4)
    # eager takes the other branch; the trace does not (the seed's lesson)
    assert data_dependent(neg, y).tolist() == [[-3.0] * 4] * 3
    assert traced(neg, y).tolist() == [[-2.0] * 4] * 3


def test_python_number_conversions_warn_and_become_constants():
    def f(x):
        return x * float(x.sum()) + x.sum().item()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        traced = tt.jit.trace(f, (tt.ones(3, 4),))
    words = [re.match(r"Converting a tensor to a Python (\w+)", str(w.message)).group(1)
             for w in caught if w.category is TracerWarning]
    assert words == ["float", "number"]
    assert [n.kind for n in traced.graph.nodes] == ["prim::Constant", "aten::mul", "prim::Constant", "aten::add"]
    # the constants are the example's values (12), not the new input's
    assert traced(tt.zeros(2)).tolist() == [12.0, 12.0]


def test_no_warning_outside_a_trace():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert bool(tt.ones(1)) and tt.ones(1).item() == 1.0 and int(tt.ones(())) == 1


def test_iou_loss_trace_matches_the_formula_and_eager_gradients():
    rng = np.random.default_rng(0)
    p = rng.uniform(0.1, 2.0, (6, 4)).astype(np.float32)
    t = rng.uniform(0.1, 2.0, (6, 4)).astype(np.float32)
    traced = tt.jit.trace(iou_loss, (tt.tensor(p), tt.tensor(t)))
    kinds = [n.kind for n in traced.graph.nodes]
    assert kinds.count("aten::minimum") == 4 and "aten::log" in kinds and "aten::div" in kinds
    p2 = rng.uniform(0.1, 2.0, (5, 4)).astype(np.float32)       # another batch size: the same ops
    t2 = rng.uniform(0.1, 2.0, (5, 4)).astype(np.float32)
    np.testing.assert_allclose(traced(tt.tensor(p2), tt.tensor(t2)).numpy(), _iou_numpy(p2, t2), rtol=1e-6)
    # autograd through the interpreter: the same gradient as eager's
    a = tt.tensor(p2, requires_grad=True)
    b = tt.tensor(p2, requires_grad=True)
    traced(a, tt.tensor(t2)).sum().backward()
    iou_loss(b, tt.tensor(t2)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-6)


def test_gradient_through_a_trace_is_the_hand_derivative():
    traced = tt.jit.trace(lambda x, y: (x * y + x.exp()).sum(), (tt.ones(3), tt.ones(3)))
    x = tt.tensor([0.0, 1.0, 2.0], requires_grad=True)
    y = tt.tensor([3.0, 4.0, 5.0])
    traced(x, y).backward()
    assert np.allclose(x.grad.numpy(), [3 + 1, 4 + math.e, 5 + math.e ** 2])


def test_traced_sequential_shares_the_modules_parameters():
    tt.manual_seed(0)
    m = tt.nn.Sequential(tt.nn.Linear(4, 3), tt.nn.ReLU())
    traced = tt.jit.trace(m, tt.ones(2, 4))
    assert isinstance(traced, tt.jit.ScriptModule) and isinstance(traced, tt.nn.Module)
    assert _strip(traced.graph).splitlines()[0] == "graph(%input : Float(2, 4, strides=[4, 1], requires_grad=0, device=cpu)):"
    assert [n.kind for n in traced.graph.nodes] == ["prim::GetAttr", "prim::GetAttr", "aten::t", "aten::addmm",
                                                   "aten::relu"]
    assert [n for n, _ in traced.named_parameters()] == ["0.weight", "0.bias"]
    x = tt.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
    w, bias = m[0].weight.detach().numpy(), m[0].bias.detach().numpy()
    np.testing.assert_allclose(traced(x).detach().numpy(), np.maximum(x.numpy() @ w.T + bias, 0), rtol=1e-6)
    with tt.no_grad():
        m[0].bias.fill_(5.0)              # the traced module reads the module's own tensors
    assert np.all(traced(x).detach().numpy() > 0)
    traced(x).sum().backward()
    assert m[0].bias.grad is not None and m[0].bias.grad.tolist() == [3.0, 3.0, 3.0]
    assert "def forward(self,\n    input: Tensor) -> Tensor:" in traced.code
    assert 'getattr(self, \'0\').weight' in traced.code


def test_closure_tensors_are_constants_and_inplace_ops_are_recorded():
    c = tt.tensor([1.0, 2.0])

    def f(x):
        y = x.clone()
        y.add_(c)
        return y * 2

    traced = tt.jit.trace(f, (tt.zeros(2),))
    kinds = [n.kind for n in traced.graph.nodes]
    assert kinds == ["aten::clone", "prim::Constant", "aten::add_", "prim::Constant", "aten::mul"]
    x = tt.tensor([10.0, 20.0])
    assert traced(x).tolist() == [22.0, 44.0] and x.tolist() == [10.0, 20.0]


def test_tuple_outputs_and_multi_output_ops():
    traced = tt.jit.trace(lambda x: (x.max(dim=0), x + 1), (tt.ones(2, 3),))
    (vals, idx), plus = traced(tt.tensor([[1.0, 5.0, 0.0], [4.0, 2.0, 3.0]]))
    assert vals.tolist() == [4.0, 5.0, 3.0] and idx.tolist() == [1, 0, 1]
    assert plus.tolist() == [[2.0, 6.0, 1.0], [5.0, 3.0, 4.0]]


def test_trace_errors_are_torchs():
    with pytest.raises(RuntimeError, match="Only tensors, lists, tuples of tensors, or dictionary of tensors"):
        tt.jit.trace(lambda x: 3, (tt.ones(2),))
    with pytest.raises(RuntimeError, match="Type 'int' cannot be traced"):
        tt.jit.trace(lambda x: x, (3,))
    traced = tt.jit.trace(lambda x: x + 1, (tt.ones(2),))
    with pytest.raises(RuntimeError, match="expected at most 1 argument"):
        traced(tt.ones(2), tt.ones(2))


def test_is_tracing_and_the_fast_path_after_a_trace():
    seen = []
    traced = tt.jit.trace(lambda x: seen.append(tt.jit.is_tracing()) or x * 2, (tt.ones(2),))
    assert seen == [True] and not tt.jit.is_tracing() and not tt.jit.is_scripting()
    a = tt.ones(2)
    assert (a * 3).tolist() == [3.0, 3.0] and traced(a).tolist() == [2.0, 2.0]


def test_replace_nodes_makes_one_group_that_runs_the_same():
    """The fuser's entry point (tritensor/jit/_ir.py): a run of nodes becomes one node whose
    subgraph is the run; the inputs are what the run reads from outside, the outputs what is
    read later."""
    traced = tt.jit.trace(lambda x, y: ((x + y) * y).exp() - x, (tt.ones(3), tt.ones(3)))
    g = traced.graph.copy()
    ops = [n for n in g.nodes if n.kind in ("aten::add", "aten::mul", "aten::exp")]
    group = g.replace_nodes(ops, "prim::FusionGroup")
    assert [n.kind for n in g.nodes if n.kind != "prim::Constant"] == ["prim::FusionGroup", "aten::sub"]
    assert [v.name for v in group.inputs if v.node is None] == ["x", "y"]
    assert len(group.outputs) == 1 and group.outputs[0].uses() == [g.nodes[-1]]
    assert isinstance(group.attrs["subgraph"], Graph)
    assert "prim::FusionGroup" in str(g)
    x, y = tt.tensor([0.0, 1.0, 2.0]), tt.tensor([1.0, 0.5, -1.0])
    assert np.allclose(run_graph(g, (x, y))[0].numpy(), np.exp((x.numpy() + y.numpy()) * y.numpy()) - x.numpy())
    assert traced.graph_for(x, y) is traced.graph or str(traced.graph_for(x, y))


def test_trace_on_the_emulated_cuda_device():
    rng = np.random.default_rng(5)
    p = rng.uniform(0.1, 2.0, (3, 4)).astype(np.float32)
    t = rng.uniform(0.1, 2.0, (3, 4)).astype(np.float32)
    traced = tt.jit.trace(iou_loss, (tt.tensor(p, device="cuda"), tt.tensor(t, device="cuda")))
    assert "device=cuda:0" in str(traced.graph)
    out = traced(tt.tensor(p, device="cuda"), tt.tensor(t, device="cuda"))
    assert out.device.type == "cuda"
    np.testing.assert_allclose(out.cpu().numpy(), _iou_numpy(p, t), rtol=1e-6)


def test_an_unrecorded_in_place_change_warns():
    def f(x):
        y = x.clone()
        y.copy_(x * 3)
        return y + 1
    with pytest.warns(TracerWarning, match="modified in place by an operation the trace could not record"):
        tt.jit.trace(f, (tt.ones(2),))


def test_len_and_iteration_warn_as_torchs():
    with pytest.warns(TracerWarning) as caught:
        traced = tt.jit.trace(lambda x: sum(r for r in x) * len(x), (tt.ones(2, 3),))
    messages = [str(w.message) for w in caught if w.category is TracerWarning]
    assert messages == [
        "Iterating over a tensor might cause the trace to be incorrect. Passing a tensor of different shape won't "
        "change the number of iterations executed (and might lead to errors or silently give incorrect results).",
        "Using len to get tensor shape might cause the trace to be incorrect. Recommended usage would be "
        "tensor.shape[0]. Passing a tensor of different shape might lead to errors or silently give incorrect results."]
    assert traced(tt.ones(3, 3)).tolist() == [4.0, 4.0, 4.0]      # two rows and len 2 baked in


def test_tracing_an_unrecorded_random_op_warns_that_its_values_become_constants():
    """(dropout, rand ... are recorded: tests/test_jit_random.py; an in-place fill is not)"""
    with pytest.warns(tt.jit.TracerWarning, match="A random op ran while tracing"):
        tt.jit.trace(lambda x: x * tt.empty(2, 4).bernoulli_(0.5), (tt.ones(2, 4),))


WARN_INT = WARN_BOOL.replace("boolean", "integer")


def test_sizes_read_in_a_trace_are_recorded_as_torchs_are(tmp_path):
    """torch 2.13's trace records x.size(0), x.shape[...] and numel() (aten::size, aten::numel), so
    the traced graph follows the batch size with no warning; int()/float() of a size warn and
    bake it in; range() over a size is unrolled silently (torch's table, read with the oracle)."""
    def flat(x):
        return x.reshape(*x.shape[:1], -1) * x.numel() + tt.zeros(x.size(0), 1)

    x3, x5 = tt.ones(3, 2, 2), tt.full((5, 2, 2), 2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TracerWarning)
        traced = tt.jit.trace(flat, (x3,))
        unrolled = tt.jit.trace(lambda x: sum(x[i] for i in range(x.size(0))), (x3,))
    listing = _strip(traced.graph)
    assert "aten::size(%x, %" in listing and "aten::numel(%x)" in listing
    np.testing.assert_array_equal(traced(x5).numpy(), np.full((5, 4), 40.0))
    assert unrolled(x5).tolist() == [[6.0, 6.0], [6.0, 6.0]]          # three rows, as traced
    traced.save(tmp_path / "flat.pt")
    np.testing.assert_array_equal(tt.jit.load(tmp_path / "flat.pt")(x5).numpy(), np.full((5, 4), 40.0))
    with pytest.warns(TracerWarning) as caught:
        baked = tt.jit.trace(lambda x: x.view(int(x.size(0)), -1) * float(x.size(1)), (x3,))
    assert [str(w.message) for w in caught] == [WARN_INT, WARN_BOOL.replace("boolean", "float")]
    assert caught[0].filename == __file__
    with pytest.raises(RuntimeError, match=r"shape '\[3, -1\]' is invalid for input of size 20"):
        baked(x5)


def test_a_slice_bounded_by_a_size_follows_it():
    """q[:q.size(0) - 1] and q[1:, :q.shape[1] // 2]: torch's trace records the bounds (aten::slice of
    a computed end); so does tt's (a slice built at run time), also in a saved file."""
    def h(q):
        return q[: q.size(0) - 1] * 2 + q[1:, : q.shape[1] // 2].sum()
    with warnings.catch_warnings():
        warnings.simplefilter("error", TracerWarning)
        traced = tt.jit.trace(h, (tt.ones(3, 4),))
    y = tt.tensor(np.arange(48, dtype=np.float32).reshape(6, 8))
    expected = np.arange(48).reshape(6, 8)[:5] * 2 + np.arange(48).reshape(6, 8)[1:, :4].sum()
    np.testing.assert_array_equal(traced(y).numpy(), expected)
    buf = io.BytesIO()
    traced.save(buf)
    buf.seek(0)
    np.testing.assert_array_equal(tt.jit.load(buf)(y).numpy(), expected)
