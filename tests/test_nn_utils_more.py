"""tt.nn.utils beyond clipping (issue 25 item 3): stateless calls (tt.func.functional_call),
fusion, memory-format conversion, skip_init, pruning. Oracles: torch-recorded texts and values,
hand-computed values, identities."""
from __future__ import annotations

import warnings

import pytest

import tritensor as tt
from tritensor.func import functional_call


# ------------------------------------------------------------------ functional_call
class _Tied(tt.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = tt.nn.Parameter(tt.ones(2))
        self.b = self.a
        self.register_buffer("cnt", tt.zeros(()))

    def forward(self, x):
        self.cnt = self.cnt + 1
        return x * self.a + self.b


def test_functional_call_replaces_for_one_call_and_gradients_reach_the_given_tensors():
    tt.manual_seed(0)
    lin = tt.nn.Linear(3, 2)
    w = tt.randn(2, 3).requires_grad_()
    b = tt.tensor([1.0, -1.0])
    x = tt.randn(4, 3)
    out = functional_call(lin, {"weight": w, "bias": b}, (x,))
    tt.testing.assert_close(out, x @ w.detach().T + b)
    assert lin.weight is not w and isinstance(lin.weight, tt.nn.Parameter)   # restored
    out.sum().backward()
    tt.testing.assert_close(w.grad, x.sum(0).expand(2, 3))
    assert lin.weight.grad is None
    # a bare argument is one positional argument; kwargs are passed on
    tt.testing.assert_close(functional_call(lin, {"bias": b}, x), lin(x) - lin.bias.detach() + b)
    # a sequence of dicts is merged
    tt.testing.assert_close(functional_call(lin, ({"weight": w}, {"bias": b}), (x,), {}), out)


def test_functional_call_tied_weights_and_in_place_state_as_torch():
    t = _Tied()
    one = tt.ones(2)
    # recorded from torch 2.13: tied a/b both take the given value unless tie_weights=False
    assert functional_call(t, {"a": tt.zeros(2)}, one).tolist() == [0.0, 0.0]
    assert functional_call(t, {"a": tt.zeros(2)}, one, tie_weights=False).tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match=r"^functional_call got multiple values for keys \['a', 'b'\], which "
                                         r"are tied. Consider using tie_weights=False$"):
        functional_call(t, {"a": tt.zeros(2), "b": tt.ones(2)}, one)
    before = t.cnt.item()
    d = {"cnt": tt.zeros(())}
    functional_call(t, d, one)
    assert d["cnt"].item() == 1.0 and t.cnt.item() == before     # the update lands in the dict


def test_functional_call_errors_word_for_word():
    lin = tt.nn.Linear(2, 2)
    x = tt.ones(1, 2)
    with pytest.raises(RuntimeError) as e:
        functional_call(lin, {"weight": tt.ones(2, 2), "foo": tt.ones(1)}, (x,), strict=True)
    assert str(e.value) == "Error(s) in reparametrizing for Linear:\n\tUnexpected key(s): 'foo'.\n\tMissing key(s): 'bias'."
    with pytest.raises(ValueError, match=r"^\['weight'\] appeared in multiple dictionaries; behavior of "
                                         r"functional call is ambiguous$"):
        functional_call(lin, ({"weight": tt.ones(2, 2)}, {"weight": tt.ones(2, 2)}), (x,))
    with pytest.raises(ValueError, match=r"^Expected parameter_and_buffer_dicts to be a dict, or a list/tuple "
                                         r"of dicts, but got <class 'int'>$"):
        functional_call(lin, 3, (x,))
    assert lin.weight.shape == (2, 2) and "foo" not in lin.__dict__


def test_stateless_functional_call_is_deprecated_as_torch():
    lin = tt.nn.Linear(2, 2)
    with pytest.warns(FutureWarning, match=r"^`torch.nn.utils.stateless.functional_call` is deprecated as of "
                                           r"PyTorch 2.0 and will be removed in a future version of PyTorch. "
                                           r"Please use `torch.func.functional_call` instead which is a drop-in "
                                           r"replacement.$"):
        out = tt.nn.utils.stateless.functional_call(lin, {"bias": tt.zeros(2)}, tt.ones(1, 2))
    tt.testing.assert_close(out, lin.weight.detach().sum(1).reshape(1, 2))


# ------------------------------------------------------------------ fusion
def _eval_bn(bn, c):
    with tt.no_grad():
        bn.running_mean.copy_(tt.linspace(-1.0, 1.0, c))
        bn.running_var.copy_(tt.linspace(0.5, 2.0, c))
        if bn.weight is not None:
            bn.weight.copy_(tt.linspace(0.5, 1.5, c))
            bn.bias.copy_(tt.linspace(-0.3, 0.3, c))
    return bn.eval()


@pytest.mark.parametrize("make,bn,shape,transpose", [
    (lambda: tt.nn.Conv2d(3, 4, 3), lambda: tt.nn.BatchNorm2d(4), (2, 3, 5, 5), False),
    (lambda: tt.nn.Conv1d(3, 4, 2, bias=False), lambda: tt.nn.BatchNorm1d(4, affine=False), (2, 3, 6), False),
    (lambda: tt.nn.ConvTranspose2d(3, 4, 2), lambda: tt.nn.BatchNorm2d(4), (1, 3, 3, 3), True),
    (lambda: tt.nn.Conv3d(2, 4, 2), lambda: tt.nn.BatchNorm3d(4), (1, 2, 3, 3, 3), False),
])
def test_fuse_conv_bn_eval_computes_bn_of_conv(make, bn, shape, transpose):
    tt.manual_seed(0)
    conv = make().eval()
    norm = _eval_bn(bn(), 4)
    x = tt.randn(*shape)
    fused = tt.nn.utils.fuse_conv_bn_eval(conv, norm, transpose=transpose)
    tt.testing.assert_close(fused(x), norm(conv(x)), rtol=1e-5, atol=1e-5)
    assert isinstance(fused.weight, tt.nn.Parameter) and fused.weight.requires_grad and fused is not conv
    assert conv.bias is None or fused.bias is not conv.bias


def test_fuse_linear_bn_eval_and_the_weight_functions():
    tt.manual_seed(0)
    lin = tt.nn.Linear(3, 4).eval()
    norm = _eval_bn(tt.nn.BatchNorm1d(4), 4)
    x = tt.randn(5, 3)
    fused = tt.nn.utils.fuse_linear_bn_eval(lin, norm)
    tt.testing.assert_close(fused(x), norm(lin(x)), rtol=1e-5, atol=1e-5)
    # hand-computed: w' = w * g / sqrt(v + eps), b' = (b - m) * g / sqrt(v + eps) + beta
    w, b = tt.nn.utils.fuse_linear_bn_weights(tt.ones(1, 1), None, tt.tensor([1.0]), tt.tensor([3.0]), 1.0,
                                              tt.tensor([4.0]), tt.tensor([0.5]))
    assert w.tolist() == [[2.0]] and b.tolist() == [-1.5] and not b.requires_grad
    w, b = tt.nn.utils.fuse_conv_bn_weights(tt.ones(1, 1, 1), tt.tensor([3.0]), tt.tensor([1.0]), tt.tensor([3.0]),
                                            1.0, None, None)
    assert w.tolist() == [[[0.5]]] and b.tolist() == [1.0]
    with pytest.raises(AssertionError, match="^Fusion only for eval!$"):
        tt.nn.utils.fuse_linear_bn_eval(tt.nn.Linear(3, 4), norm)
    with pytest.raises(AssertionError, match=r"^To fuse, linear.out_features == bn.num_features or bn.num_features "
                                             r"== 1, got linear.out_features=4 and bn.num_features=3$"):
        tt.nn.utils.fuse_linear_bn_eval(lin, tt.nn.BatchNorm1d(3).eval())
    with pytest.raises(AssertionError, match="^bn.running_mean and bn.running_var must not be None$"):
        tt.nn.utils.fuse_conv_bn_eval(tt.nn.Conv1d(1, 1, 1).eval(),
                                      tt.nn.BatchNorm1d(1, track_running_stats=False).eval())


# ------------------------------------------------------------------ memory format, skip_init
def test_convert_conv_weight_memory_format_recurses_and_keeps_values():
    tt.manual_seed(0)
    model = tt.nn.Sequential(tt.nn.Conv2d(3, 4, 2), tt.nn.Sequential(tt.nn.ConvTranspose2d(4, 2, 1)),
                             tt.nn.Conv3d(1, 2, 1), tt.nn.Linear(2, 2))
    before = [p.detach().clone() for p in model.parameters()]
    w0 = model[0].weight
    out = tt.nn.utils.convert_conv2d_weight_memory_format(model, tt.channels_last)
    assert out is model and model[0].weight is w0                    # the same Parameter, relaid out
    assert model[0].weight.stride() == (12, 1, 6, 3)                  # torch's channels_last strides
    assert model[1][0].weight.stride() == (2, 1, 2, 2)
    assert model[2].weight.is_contiguous()                            # a Conv3d: untouched here
    tt.nn.utils.convert_conv3d_weight_memory_format(model, tt.channels_last_3d)
    assert model[2].weight.is_contiguous(memory_format=tt.channels_last_3d)
    for p, b in zip(model.parameters(), before):
        assert tt.equal(p.detach(), b)


def test_skip_init_draws_no_random_numbers_and_keeps_the_class():
    tt.manual_seed(3)
    state = tt.get_rng_state()
    m = tt.nn.utils.skip_init(tt.nn.Linear, 4, 3, bias=True)
    assert tt.equal(tt.get_rng_state(), state)
    assert type(m) is tt.nn.Linear and m.weight.shape == (3, 4) and m.in_features == 4
    c = tt.nn.utils.skip_init(tt.nn.Conv2d, 2, 2, 3, device="cuda")
    assert c.weight.device.type == "cuda" and type(c) is tt.nn.Conv2d
    with pytest.raises(RuntimeError, match="^Expected a Module; got <class 'int'>$"):
        tt.nn.utils.skip_init(int)
    with pytest.raises(RuntimeError, match="^Module must support a 'device' arg to skip initialization$"):
        tt.nn.utils.skip_init(tt.nn.ReLU)


# ------------------------------------------------------------------ prune
prune = tt.nn.utils.prune


def _lin(values):
    t = tt.tensor(values)
    m = tt.nn.Linear(t.shape[1], t.shape[0])
    with tt.no_grad():
        m.weight.copy_(t)
    return m


def test_l1_then_ln_structured_pruning_as_torch():
    m = _lin([[0.5, -2.0, 0.1], [3.0, -0.2, 1.0]])
    prune.l1_unstructured(m, "weight", amount=0.5)
    # recorded from torch 2.13 (the three smallest magnitudes go)
    assert m.weight_mask.tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 1.0]]
    assert list(m.state_dict()) == ["bias", "weight_orig", "weight_mask"]
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight_orig"]
    assert m.weight.tolist() == [[0.0, -2.0, 0.0], [3.0, -0.0, 1.0]]
    prune.ln_structured(m, "weight", amount=1, n=2, dim=0)    # row 0 has the smaller L2 norm left
    assert m.weight_mask.tolist() == [[0.0, 0.0, 0.0], [1.0, 0.0, 1.0]]
    hooks = list(m._forward_pre_hooks.values())
    assert len(hooks) == 1 and type(hooks[0]).__name__ == "PruningContainer" and len(hooks[0]) == 2
    with tt.no_grad():
        m.weight_orig.fill_(2.0)
    x = tt.ones(1, 3)
    tt.testing.assert_close(m(x), x @ (m.weight_mask * 2.0).T + m.bias.detach())   # the hook reapplies the mask
    m(x).sum().backward()
    assert m.weight_orig.grad.tolist() == [[0.0, 0.0, 0.0], [1.0, 0.0, 1.0]]
    prune.remove(m, "weight")
    assert list(m.state_dict()) == ["bias", "weight"] and isinstance(m.weight, tt.nn.Parameter)
    assert m.weight.tolist() == [[0.0, 0.0, 0.0], [2.0, 0.0, 2.0]] and not prune.is_pruned(m)


def test_global_random_custom_and_identity_pruning():
    a, b = _lin([[1.0, -5.0], [0.3, 2.0]]), _lin([[-0.1, 4.0]])
    prune.global_unstructured([(a, "weight"), (b, "weight")], pruning_method=prune.L1Unstructured, amount=3)
    assert a.weight_mask.tolist() == [[0.0, 1.0], [0.0, 1.0]] and b.weight_mask.tolist() == [[0.0, 1.0]]
    assert prune.is_pruned(a) and prune.is_pruned(tt.nn.Sequential(b))
    tt.manual_seed(0)
    r = tt.nn.Linear(10, 8)
    prune.random_unstructured(r, "weight", amount=0.3)
    assert int(r.weight_mask.sum().item()) == 80 - 24
    prune.random_unstructured(r, "weight", amount=10)      # 10 more among the remaining ones
    assert int(r.weight_mask.sum().item()) == 80 - 34
    s = tt.nn.Conv2d(2, 6, 1)
    prune.random_structured(s, "weight", amount=2, dim=0)
    kept = s.weight_mask.sum(dim=(1, 2, 3))
    assert sorted(kept.tolist()) == [0.0, 0.0, 2.0, 2.0, 2.0, 2.0]
    c = tt.nn.Linear(2, 2)
    prune.custom_from_mask(c, "bias", mask=tt.tensor([0.0, 1.0]))
    assert c.bias.tolist()[0] == 0.0 and c.bias_mask.tolist() == [0.0, 1.0]
    i = prune.identity(tt.nn.Linear(2, 2), "weight")
    assert i.weight_mask.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    # importance_scores rank the entries instead of the weight
    m = _lin([[1.0, 2.0, 3.0]])
    prune.l1_unstructured(m, "weight", amount=1, importance_scores=tt.tensor([[5.0, 1.0, 9.0]]))
    assert m.weight_mask.tolist() == [[1.0, 0.0, 1.0]]
    assert prune.L1Unstructured(amount=2).prune(tt.tensor([3.0, -1.0, 0.5, 4.0])).tolist() == [3.0, -0.0, 0.0, 4.0]


def test_prune_errors_word_for_word():
    cases = [
        (lambda: prune.l1_unstructured(tt.nn.Linear(2, 2), "weight", amount=1.5), ValueError,
         "amount=1.5 should either be a float in the range [0, 1] or a non-negative integer"),
        (lambda: prune.l1_unstructured(tt.nn.Linear(2, 2), "weight", amount=5), ValueError,
         "amount=5 should be smaller than the number of parameters to prune=4"),
        (lambda: prune.l1_unstructured(tt.nn.Linear(2, 2), "weight", amount="a"), TypeError,
         "Invalid type for amount: a. Must be int or float."),
        (lambda: prune.ln_structured(tt.nn.Linear(2, 2), "bias", amount=1, n=2, dim=0), ValueError,
         "Structured pruning can only be applied to multidimensional tensors. Found tensor of shape "
         "tritensor.Size([2]) with 1 dims"),
        (lambda: prune.remove(tt.nn.Linear(2, 2), "weight"), ValueError,
         "Parameter 'weight' of module Linear(in_features=2, out_features=2, bias=True) has to be pruned before "
         "pruning can be removed"),
        (lambda: prune.global_unstructured([(tt.nn.Linear(2, 2), "weight")], prune.LnStructured, amount=1, n=1,
                                           dim=0), TypeError,
         "Only \"unstructured\" PRUNING_TYPE supported for the `pruning_method`. Found method "
         "<class 'tritensor.nn.utils.prune.LnStructured'> of type structured"),
        (lambda: prune.ln_structured(tt.nn.Linear(2, 2), "weight", amount=1, n=2, dim=3), IndexError,
         "Invalid index 3 for tensor of size tritensor.Size([2, 2])"),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc) as e:
            fn()
        assert str(e.value) == msg
    m = tt.nn.Linear(2, 2)
    with pytest.raises(ValueError):
        prune.l1_unstructured(m, "weight", amount=9)
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "weight"]     # restored after the failure
    assert "weight_orig" not in m._parameters and "weight_mask" not in m._buffers
    assert not m._forward_pre_hooks


def test_functional_call_through_a_parametrization():
    # torch's note: the key parametrizations.<name>.original feeds the parametrization
    m = tt.nn.utils.parametrizations.weight_norm(tt.nn.Linear(2, 2, bias=False))
    v = tt.tensor([[3.0, 4.0], [0.0, 2.0]])
    g = tt.tensor([[10.0], [1.0]])
    out = functional_call(m, {"parametrizations.weight.original0": g, "parametrizations.weight.original1": v},
                          (tt.tensor([[1.0, 1.0]]),))
    assert out.tolist() == [[14.0, 1.0]]          # rows v / |v| * g: [6, 8] and [0, 1]
    # the plain name replaces the parametrized tensor altogether
    assert functional_call(m, {"weight": tt.eye(2)}, (tt.tensor([[1.0, 2.0]]),)).tolist() == [[1.0, 2.0]]
    assert tt.nn.utils.parametrize.is_parametrized(m, "weight")
