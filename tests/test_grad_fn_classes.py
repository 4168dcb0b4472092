"""grad_fn objects are instances of a class per node, named as torch's (issue 16 item 1).

Expected names were read from PyTorch 2.13 (``type(out.grad_fn).__name__``); tritensor must
record the same node class for the same call, including composite ops (mean, std, logsumexp,
norm, max over a dim) that torch records as one node."""
import numpy as np
import pytest

import tritensor as tt
import tritensor.nn.functional as F
from tritensor.autograd.graph import Node

# expression -> torch's node class. L is the library, F nn.functional; x, y: (3, 4) leaves,
# v, w: (4,), m: (4, 5), s: 0-d, b: (2, 3, 4), bb: (2, 4, 5); all float64 and requiring grad.
TORCH_NODE_NAMES = [
    ('L.abs(x)', 'AbsBackward0'),
    ('L.absolute(x)', 'AbsBackward0'),
    ('L.neg(x)', 'NegBackward0'),
    ('L.negative(x)', 'NegBackward0'),
    ('L.add(x, y)', 'AddBackward0'),
    ('L.add(x, 2.0)', 'AddBackward0'),
    ('L.add(x, y, alpha=2)', 'AddBackward0'),
    ('2.0 + x', 'AddBackward0'),
    ('L.sub(x, y)', 'SubBackward0'),
    ('x - 2.0', 'SubBackward0'),
    ('2.0 - x', 'RsubBackward1'),
    ('L.subtract(x, y)', 'SubBackward0'),
    ('L.mul(x, y)', 'MulBackward0'),
    ('x * 2.0', 'MulBackward0'),
    ('L.multiply(x, y)', 'MulBackward0'),
    ('L.div(x, y)', 'DivBackward0'),
    ('x / 2.0', 'DivBackward0'),
    ('L.divide(x, y)', 'DivBackward0'),
    ('L.true_divide(x, y)', 'DivBackward0'),
    ("L.div(x, y, rounding_mode='floor')", 'DivBackward2'),
    ("L.div(x, y, rounding_mode='trunc')", 'DivBackward2'),
    ('L.pow(x, y)', 'PowBackward1'),
    ('L.pow(x, 2.0)', 'PowBackward0'),
    ('L.pow(2.0, x)', 'PowBackward2'),
    ('2.0 ** x', 'PowBackward2'),
    ('L.remainder(x, y)', 'RemainderBackward1'),
    ('L.remainder(x, 2.0)', 'RemainderBackward0'),
    ('L.fmod(x, y)', 'FmodBackward1'),
    ('L.fmod(x, 2.0)', 'FmodBackward0'),
    ('L.maximum(x, y)', 'MaximumBackward0'),
    ('L.minimum(x, y)', 'MinimumBackward0'),
    ('L.exp(x)', 'ExpBackward0'),
    ('L.exp2(x)', 'Exp2Backward0'),
    ('L.expm1(x)', 'Expm1Backward0'),
    ('L.log(x.abs())', 'LogBackward0'),
    ('L.log2(x)', 'Log2Backward0'),
    ('L.log10(x)', 'Log10Backward0'),
    ('L.log1p(x)', 'Log1PBackward0'),
    ('L.sqrt(x)', 'SqrtBackward0'),
    ('L.rsqrt(x)', 'RsqrtBackward0'),
    ('L.sin(x)', 'SinBackward0'),
    ('L.cos(x)', 'CosBackward0'),
    ('L.tan(x)', 'TanBackward0'),
    ('L.tanh(x)', 'TanhBackward0'),
    ('L.sigmoid(x)', 'SigmoidBackward0'),
    ('L.erf(x)', 'ErfBackward0'),
    ('L.relu(x)', 'ReluBackward0'),
    ("F.gelu(x, approximate='tanh')", 'GeluBackward0'),
    ('L.sign(x)', 'SignBackward0'),
    ('L.round(x)', 'RoundBackward0'),
    ('L.round(x, decimals=1)', 'RoundBackward1'),
    ('L.floor(x)', 'FloorBackward0'),
    ('L.ceil(x)', 'CeilBackward0'),
    ('L.trunc(x)', 'TruncBackward0'),
    ('L.fix(x)', 'TruncBackward0'),
    ('L.clamp(x, -0.5, 0.5)', 'ClampBackward1'),
    ('L.clamp(x, min=-0.5)', 'ClampBackward1'),
    ('L.clamp(x, max=0.5)', 'ClampBackward1'),
    ('L.clamp(x, y, y + 1)', 'ClampBackward0'),
    ('L.clamp_min(x, 0.1)', 'ClampMinBackward0'),
    ('L.clamp_max(x, 0.1)', 'ClampMaxBackward0'),
    ('L.clamp_min(x, y)', 'ClampMinBackward1'),
    ('L.clip(x, -0.5, 0.5)', 'ClampBackward1'),
    ('L.where(x > 0, x, y)', 'WhereBackward0'),
    ('L.where(x > 0, x, 0.0)', 'WhereBackward0'),
    ('L.masked_fill(x, x > 0, 1.0)', 'MaskedFillBackward0'),
    ('L.masked_fill(x, x > 0, s)', 'MaskedFillBackward1'),
    ('L.sum(x)', 'SumBackward0'),
    ('L.sum(x, 1)', 'SumBackward1'),
    ('L.mean(x)', 'MeanBackward0'),
    ('L.mean(x, 1)', 'MeanBackward1'),
    ('x.mean(dim=0, keepdim=True)', 'MeanBackward1'),
    ('L.prod(x)', 'ProdBackward0'),
    ('L.prod(x, 1)', 'ProdBackward1'),
    ('L.std(x)', 'StdBackward0'),
    ('L.std(x, 1)', 'StdBackward0'),
    ('L.var(x)', 'VarBackward0'),
    ('L.var(x, 1)', 'VarBackward0'),
    ('L.var(x, 1, correction=0)', 'VarBackward0'),
    ('L.norm(x)', 'LinalgVectorNormBackward0'),
    ('L.norm(x, p=1)', 'LinalgVectorNormBackward0'),
    ('L.norm(x, dim=1)', 'LinalgVectorNormBackward0'),
    ('x.norm()', 'LinalgVectorNormBackward0'),
    ("x.norm(p=float('inf'))", 'LinalgVectorNormBackward0'),
    ('L.logsumexp(x, 1)', 'LogsumexpBackward0'),
    ('L.amax(x, 1)', 'AmaxBackward0'),
    ('L.amin(x, 1)', 'AminBackward0'),
    ('L.amax(x)', 'AmaxBackward0'),
    ('L.max(x)', 'MaxBackward1'),
    ('L.max(x, 1)[0]', 'MaxBackward0'),
    ('L.min(x)', 'MinBackward1'),
    ('L.min(x, 1)[0]', 'MinBackward0'),
    ('L.max(x, y)', 'MaximumBackward0'),
    ('L.min(x, y)', 'MinimumBackward0'),
    ('L.cumsum(x, 1)', 'CumsumBackward0'),
    ('L.cumprod(x, 1)', 'CumprodBackward0'),
    ('L.softmax(x, 1)', 'SoftmaxBackward0'),
    ('L.log_softmax(x, 1)', 'LogSoftmaxBackward0'),
    ('F.softmax(x, dim=1)', 'SoftmaxBackward0'),
    ('F.log_softmax(x, dim=1)', 'LogSoftmaxBackward0'),
    ('L.mm(x, m)', 'MmBackward0'),
    ('L.matmul(x, m)', 'MmBackward0'),
    ('L.matmul(x, v)', 'MvBackward0'),
    ('L.matmul(v, w)', 'DotBackward0'),
    ('x @ m', 'MmBackward0'),
    ('L.mv(x, v)', 'MvBackward0'),
    ('L.dot(v, w)', 'DotBackward0'),
    ('L.bmm(b, bb)', 'BmmBackward0'),
    ('L.outer(v, w)', 'MulBackward0'),
    ('L.ger(v, w)', 'MulBackward0'),
    ('L.addmm(v, x, m[:, :4])', 'AddmmBackward0'),
    ('L.baddbmm(bb[:, :3, :], b, bb)', 'BaddbmmBackward0'),
    ('L.t(x)', 'TBackward0'),
    ('x.T', 'PermuteBackward0'),
    ('x.mT', 'TransposeBackward0'),
    ('L.transpose(x, 0, 1)', 'TransposeBackward0'),
    ('L.permute(b, (2, 0, 1))', 'PermuteBackward0'),
    ('L.reshape(x, (4, 3))', 'ViewBackward0'),
    ('x.view(12)', 'ViewBackward0'),
    ('x.view_as(y)', 'ViewBackward0'),
    ('L.flatten(b)', 'ViewBackward0'),
    ('L.flatten(x)', 'ViewBackward0'),
    ('L.unflatten(x, 1, (2, 2))', 'ViewBackward0'),
    ('L.squeeze(x[None])', 'SqueezeBackward0'),
    ('L.squeeze(x[None], 0)', 'SqueezeBackward1'),
    ('L.unsqueeze(x, 0)', 'UnsqueezeBackward0'),
    ('v.expand(3, 4)', 'ExpandBackward0'),
    ('v.expand_as(x)', 'ExpandBackward0'),
    ('L.narrow(x, 1, 1, 2)', 'SliceBackward0'),
    ('L.select(x, 0, 1)', 'SelectBackward0'),
    ('x[1]', 'SelectBackward0'),
    ('x[:, 1:3]', 'SliceBackward0'),
    ('x[::2]', 'SliceBackward0'),
    ('x[None]', 'UnsqueezeBackward0'),
    ('x[...]', 'AliasBackward0'),
    ('x[[0, 2]]', 'IndexBackward0'),
    ('x[x > 0]', 'IndexBackward0'),
    ('x.diagonal()', 'DiagonalBackward0'),
    ('x.unfold(1, 2, 1)', 'UnfoldBackward0'),
    ('L.as_strided(x, (2, 2), (1, 2))', 'AsStridedBackward0'),
    ('L.flip(x, [0])', 'FlipBackward0'),
    ('L.fliplr(x)', 'FlipBackward0'),
    ('L.flipud(x)', 'FlipBackward0'),
    ('L.tril(x)', 'TrilBackward0'),
    ('L.triu(x)', 'TriuBackward0'),
    ('L.cat([x, y])', 'CatBackward0'),
    ('L.concat([x, y])', 'CatBackward0'),
    ('L.concatenate([x, y])', 'CatBackward0'),
    ('L.stack([x, y])', 'StackBackward0'),
    ('L.hstack([x, y])', 'CatBackward0'),
    ('L.vstack([x, y])', 'CatBackward0'),
    ('L.row_stack([x, y])', 'CatBackward0'),
    ('L.split(x, 2)[0]', 'SplitBackward0'),
    ('L.split(x, [1, 2])[0]', 'SplitWithSizesBackward0'),
    ('L.chunk(x, 2)[0]', 'SplitBackward0'),
    ('L.tensor_split(x, 2)[0]', 'SliceBackward0'),
    ('L.gather(x, 1, L.tensor([[0, 1], [1, 2], [2, 3]]))', 'GatherBackward0'),
    ('L.index_select(x, 1, L.tensor([0, 2]))', 'IndexSelectBackward0'),
    ('L.take(x, L.tensor([0, 5]))', 'TakeBackward0'),
    ('L.masked_select(x, x > 0)', 'MaskedSelectBackward0'),
    ('L.scatter(x, 1, L.tensor([[0], [1], [2]]), y)', 'ScatterBackward0'),
    ('L.scatter(x, 1, L.tensor([[0], [1], [2]]), 1.5)', 'ScatterBackward1'),
    ('L.scatter_add(x, 1, L.tensor([[0], [1], [2]]), y)', 'ScatterAddBackward0'),
    ('L.index_put(x, (L.tensor([0, 2]),), v)', 'IndexPutBackward0'),
    ('L.clone(x)', 'CloneBackward0'),
    ('x.t().contiguous()', 'CloneBackward0'),
    ('x.to(L.float32)', 'ToCopyBackward0'),
    ('x.float()', 'ToCopyBackward0'),
    ('x.type_as(v.float())', 'ToCopyBackward0'),
    ('L.cdist(x, y)', 'CdistBackward0'),
    ('L.pdist(x)', 'PdistBackward0'),
    ('F.linear(x, m.t())', 'MmBackward0'),
    ('F.linear(x, m.t(), w[:4].repeat(2)[:5] if False else L.zeros(5, dtype=L.float64, requires_grad=True))', 'AddmmBackward0'),
    ('F.relu(x)', 'ReluBackward0'),
    ('F.leaky_relu(x)', 'LeakyReluBackward0'),
    ('F.gelu(x)', 'GeluBackward0'),
    ('F.silu(x)', 'SiluBackward0'),
    ('F.sigmoid(x)', 'SigmoidBackward0'),
    ('F.tanh(x)', 'TanhBackward0'),
    ('F.mse_loss(x, y)', 'MseLossBackward0'),
    ('F.l1_loss(x, y)', 'MeanBackward0'),
    ('F.huber_loss(x, y)', 'HuberLossBackward0'),
    ('F.smooth_l1_loss(x, y)', 'SmoothL1LossBackward0'),
    ('F.binary_cross_entropy(L.sigmoid(x), L.sigmoid(y).detach())', 'BinaryCrossEntropyBackward0'),
    ('F.binary_cross_entropy_with_logits(x, L.sigmoid(y).detach())', 'BinaryCrossEntropyWithLogitsBackward0'),
    ('F.layer_norm(x, (4,))', 'NativeLayerNormBackward0'),
    ('F.layer_norm(x, (4,), v, w)', 'NativeLayerNormBackward0'),
    ('F.normalize(x)', 'DivBackward0'),
    ('F.embedding(L.tensor([0, 2]), x)', 'EmbeddingBackward0'),
    ('F.dropout(x, p=0.5)', 'MulBackward0'),
    ('v.expand(3,4).contiguous()', 'CloneBackward0'),
    ('x.sum_to_size(1, 4)', 'SumBackward1'),
    ("L.diag_embed(v) if hasattr(L, 'diag_embed') else x.diag_embed()", 'DiagEmbedBackward0'),
    ('x.abs()', 'AbsBackward0'),
    ('x.sum(dim=(0, 1))', 'SumBackward1'),
    ('x.mean((0, 1))', 'MeanBackward1'),
    ('x.std(unbiased=False)', 'StdBackward0'),
    ('x.var(0, keepdim=True)', 'VarBackward0'),
    ('x.clone().add_(1.0)', 'AddBackward0'),
    ('x.clone().mul_(y)', 'MulBackward0'),
    ('x.clone().fill_(1.0)', 'FillBackward2'),
    ('x.clone().zero_()', 'ZeroBackward0'),
    ('x.clone().copy_(y)', 'CopyBackwards'),
    ('x.clone().clamp_(0, 1)', 'ClampBackward1'),
    ('x.clone().exp_()', 'ExpBackward0'),
    ('x.clone().relu_()', 'ReluBackward0'),
    ('(lambda z: (z.__setitem__(0, 1.0), z)[1])(x.clone())', 'CopySlices'),
    ('(lambda z: (z.__setitem__((slice(None), 1), v[:3]), z)[1])(x.clone())', 'CopySlices'),
    ('(lambda z: (z[0].fill_(2.0), z)[1])(x.clone())', 'CopySlices'),
    ('x.clone().masked_fill_(x > 0, 0.0)', 'MaskedFillBackward0'),
    ('x.clone().scatter_(1, L.tensor([[0], [1], [2]]), 1.0)', 'ScatterBackward1'),
    ('x.clone().index_put_((L.tensor([0]),), v)', 'IndexPutBackward0'),
    ('x.where(x > 0, y)', 'WhereBackward0'),
    ('L.std(x, dim=0, correction=2)', 'StdBackward0'),
    ('x.sum() / 3', 'DivBackward0'),
    ('x.cumsum(0)', 'CumsumBackward0'),
    ('F.cross_entropy(x, L.tensor([0, 1, 2]))', 'NllLossBackward0'),
    ("F.cross_entropy(x, L.tensor([0, 1, 2]), reduction='none')", 'NllLossBackward0'),
    ('F.cross_entropy(x, L.tensor([0, 1, 2]), label_smoothing=0.1)', 'AddBackward0'),
    ('F.nll_loss(F.log_softmax(x, 1), L.tensor([0, 1, 2]))', 'NllLossBackward0'),
    ('F.cross_entropy(x[0], L.tensor(1))', 'NllLossBackward0'),
    ('b @ bb', 'UnsafeViewBackward0'),
    ('L.matmul(b, m)', 'UnsafeViewBackward0'),
    ('L.matmul(v, m)', 'SqueezeBackward4'),
    ('L.matmul(b, v)', 'UnsafeViewBackward0'),
    ('L.matmul(m.t(), b.transpose(1, 2))', 'CloneBackward0'),
    ('x.unbind(0)[0]', 'UnbindBackward0'),
    ('L.unbind(x, 1)[2]', 'UnbindBackward0'),
    ('x.t().reshape(12)', 'UnsafeViewBackward0'),
    ('x.reshape(12)', 'ViewBackward0'),
    ('2.0 / x', 'MulBackward0'),             # torch's __rtruediv__: reciprocal() * other
    ('x.reciprocal()', 'ReciprocalBackward0'),
    ('L.square(x)', 'PowBackward0'),
]


def _leaves():
    g = np.random.default_rng(0)

    def leaf(*shape):
        return tt.tensor(g.standard_normal(shape), dtype=tt.float64, requires_grad=True)
    return dict(x=leaf(3, 4), y=leaf(3, 4), v=leaf(4), w=leaf(4), m=leaf(4, 5), s=leaf(), b=leaf(2, 3, 4),
                bb=leaf(2, 4, 5))


def test_node_class_names_match_torch():
    mismatches = []
    for expr, expected in TORCH_NODE_NAMES:
        out = eval(expr, dict(L=tt, F=F, **_leaves()))
        node = out.grad_fn
        got = type(node).__name__
        if got != expected or node.name() != expected or not isinstance(node, Node):
            mismatches.append((expr, expected, got))
    assert mismatches == []


def test_node_classes_are_cached_and_printed_as_torch():
    x = tt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    a, b = tt.mm(x, x), x @ x.t()
    assert type(a.grad_fn) is type(b.grad_fn)
    assert type(a.grad_fn).__name__ == "MmBackward0" and a.grad_fn.name() == "MmBackward0"
    assert isinstance(a.grad_fn, tt.autograd.graph.Node) and isinstance(a.grad_fn, tt.autograd.Node)
    assert repr(a).endswith("grad_fn=<MmBackward0>)")
    assert repr(a.grad_fn).startswith("<MmBackward0 object at 0x")
    assert type((x * 2).grad_fn) is not type(a.grad_fn)


def test_accumulate_grad_and_next_functions():
    x = tt.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    (acc, nr), scalar_edge = y.grad_fn.next_functions
    assert type(acc).__name__ == "AccumulateGrad" and acc.variable is x and nr == 0
    assert scalar_edge == (None, 0)
    assert acc.next_functions == ()
    assert (x + 1).grad_fn.next_functions[0][0] is acc     # one accumulator per leaf


def test_metadata_is_a_dict_kept_on_the_node():
    y = tt.tensor([1.0], requires_grad=True).exp()
    node = y.grad_fn
    assert node.metadata == {}
    node.metadata["tag"] = 3
    assert y.grad_fn.metadata == {"tag": 3}


def test_saved_tensors_read_from_the_node():
    x = tt.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    np.testing.assert_allclose(y.grad_fn._saved_result.detach().numpy(), np.exp([1.0, 2.0]))
    z = x * y
    assert z.grad_fn._saved_self is x
    with pytest.raises(AttributeError):
        z.grad_fn._saved_nothing_like_this


class MyFn(tt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_custom_function_node_class():
    x = tt.tensor([1.0, 2.0], requires_grad=True)
    y = MyFn.apply(x)
    assert type(y.grad_fn).__name__ == "MyFnBackward" == y.grad_fn.name()
    assert type(MyFn.apply(x).grad_fn) is type(y.grad_fn) is MyFn._backward_cls
    assert repr(y).endswith("grad_fn=<MyFnBackward>)")

    class Sub(MyFn):
        pass
    assert type(Sub.apply(x).grad_fn).__name__ == "SubBackward"


# --------------------------------------------------------------------- composites as one node
def _x():
    return tt.tensor([[0.5, -1.0, 2.0, 0.25], [1.5, 3.0, -0.5, -2.0], [0.0, 1.0, 4.0, -3.0]],
                     dtype=tt.float64, requires_grad=True)


def test_mean_is_one_node_with_the_inputs_edge():
    x = _x()
    m = x.mean()
    assert type(m.grad_fn).__name__ == "MeanBackward0"
    (edge,) = m.grad_fn.next_functions
    assert type(edge[0]).__name__ == "AccumulateGrad" and edge[0].variable is x
    m.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((3, 4), 1 / 12))
    assert type(x.mean(1).grad_fn).__name__ == "MeanBackward1"
    assert type(x.mean(()).grad_fn).__name__ == "MeanBackward1"


def test_composite_gradients_match_numpy():
    a = _x().detach().numpy()
    x = _x()
    (g,) = tt.autograd.grad(x.std(1).sum(), x)
    c = a - a.mean(1, keepdims=True)
    np.testing.assert_allclose(g.numpy(), c / (3 * a.std(1, ddof=1)[:, None]), rtol=1e-12)
    (g,) = tt.autograd.grad(x.logsumexp(1).sum(), x)
    e = np.exp(a)
    np.testing.assert_allclose(g.numpy(), e / e.sum(1, keepdims=True), rtol=1e-12)
    (g,) = tt.autograd.grad(x.norm(), x)
    np.testing.assert_allclose(g.numpy(), a / np.sqrt((a * a).sum()), rtol=1e-12)
    (g,) = tt.autograd.grad(x.max(1).values.sum(), x)
    np.testing.assert_array_equal(g.numpy(), (a == a.max(1, keepdims=True)).astype(float))


@pytest.mark.parametrize("fn", [lambda t: t.mean(0), lambda t: t.std(), lambda t: t.logsumexp(0),
                                lambda t: t.norm(p=3, dim=1), lambda t: t.min(1)[0]])
def test_composite_nodes_differentiate_twice(fn):
    x = _x().detach().requires_grad_()
    assert tt.autograd.gradcheck(fn, (x,))
    assert tt.autograd.gradgradcheck(fn, (x,))


def test_composite_node_sees_inplace_changes_of_its_input():
    x = _x()
    h = x * 1
    y = h.std()
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_composite_node_frees_its_graph_after_backward():
    y = _x().std()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_composite_backward_does_not_walk_the_graph_behind_it():
    # a chain of composites: each node's backward stops at its stand-in, so the gradient of a
    # deep chain is the product of the links (and the run is linear in the depth)
    x = tt.tensor([2.0], dtype=tt.float64, requires_grad=True)
    h = x
    for _ in range(50):
        h = h.mean(0, keepdim=True) * 1.0
    h.backward()
    assert x.grad.item() == 1.0


def test_no_node_without_grad():
    x = _x()
    with tt.no_grad():
        assert x.mean().grad_fn is None and x.std().grad_fn is None
    assert _x().detach().logsumexp(0).grad_fn is None


def test_inplace_nodes_named_as_torch():
    x = _x()
    assert type(x.clone().fill_(1.0).grad_fn).__name__ == "FillBackward2"
    assert type(x.clone().fill_(tt.tensor(1.0, dtype=tt.float64)).grad_fn).__name__ == "FillBackward3"
    assert type(x.clone().fill_(x[0, 0]).grad_fn).__name__ == "FillBackward3"
    assert type(x.clone().zero_().grad_fn).__name__ == "ZeroBackward0"
    assert type(x.clone().copy_(x).grad_fn).__name__ == "CopyBackwards"
    o = x.clone()
    o[0].fill_(2.0)
    assert type(o.grad_fn).__name__ == "CopySlices" and type(o[0].grad_fn).__name__ == "SelectBackward0"


def test_matmul_records_torch_folding_and_batching_graphs():
    """torch.matmul folds batch dims into one mm/mv or expands both operands to one bmm, then
    _unsafe_view: the whole node chain is torch's, read from PyTorch 2.13."""
    lv = _leaves()

    def chain(node, depth=0, out=None):
        out = [] if out is None else out
        if node is None or type(node).__name__ == "AccumulateGrad":
            return out
        out.append("  " * depth + type(node).__name__)
        for child, _ in node.next_functions:
            chain(child, depth + 1, out)
        return out
    b, bb, m, x = lv["b"], lv["bb"], lv["m"], lv["x"]
    assert chain((b @ bb).grad_fn) == ["UnsafeViewBackward0", "  BmmBackward0", "    ViewBackward0",
                                       "      ExpandBackward0", "    ViewBackward0", "      ExpandBackward0"]
    assert chain((b.transpose(0, 1).transpose(0, 1).transpose(1, 2) @ x).grad_fn)[:4] == [
        "UnsafeViewBackward0", "  MmBackward0", "    UnsafeViewBackward0", "      CloneBackward0"]
    assert chain(tt.matmul(m.t(), b.transpose(1, 2)).grad_fn)[:4] == [
        "CloneBackward0", "  TransposeBackward0", "    UnsafeViewBackward0", "      MmBackward0"]
    out = b @ m            # an _unsafe_view result is no view: in-place ops on it are plain ones
    assert out._base is None and type(out.add_(1.0).grad_fn).__name__ == "AddBackward0"


def test_nll_loss_refuses_class_weights_that_require_grad():
    x = tt.randn(3, 4, requires_grad=True)
    w = tt.rand(4, requires_grad=True)
    msg = "The function 'nll_loss_forward' is not differentiable with respect to argument 'weight'"
    for call in (lambda: F.nll_loss(x, tt.tensor([0, 1, 2]), weight=w),
                 lambda: F.cross_entropy(x, tt.tensor([0, 1, 2]), weight=w, label_smoothing=0.1)):
        with pytest.raises(RuntimeError, match=msg):
            call()
    with tt.no_grad():
        assert F.nll_loss(x, tt.tensor([0, 1, 2]), weight=w).dim() == 0
