"""torch.nn's losses and distances (issue 25.2, 25.3) beyond the OpInfo records
(tests/opinfo_losses.py): values, gradients and node names recorded from torch 2.13
(tests/data/make_loss_values.py; N-d cross_entropy/nll_loss among them), torch's errors and
warnings word for word, the modules (reprs, buffers, Bilinear's parameters).
"""
import json
import math
import pathlib
import warnings

import numpy as np
import pytest

import opinfo  # noqa: F401,I001  (first: it imports every opinfo_<family> module)
import tritensor as tt
from conftest import to_numpy

F = tt.nn.functional
nn = tt.nn
CASES = json.loads((pathlib.Path(__file__).parent / "data" / "loss_values.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{c['call'].split('(')[0]}" for i, c in enumerate(CASES)])
def test_values_gradients_and_nodes_as_torch(case):
    tensors = {}
    for name, v in case["inputs"].items():
        if name in case["int_inputs"]:
            tensors[name] = tt.tensor(v, dtype=tt.int64)
        else:
            tensors[name] = tt.tensor(v, dtype=tt.float64, requires_grad=not name.startswith("k"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")        # none of these calls warns in torch
        out = eval(case["call"], {"F": F, **tensors})
    np.testing.assert_allclose(to_numpy(out), np.array(case["output"]), rtol=1e-10, atol=1e-12)
    assert out.grad_fn.name() == case["node"]
    names = list(case["grads"])
    grads = tt.autograd.grad(out.sum(), [tensors[k] for k in names])
    for k, g in zip(names, grads):
        np.testing.assert_allclose(to_numpy(g), np.array(case["grads"][k]), rtol=1e-9, atol=1e-12, err_msg=k)


def test_nd_cross_entropy_on_the_emulated_device():
    """A segmentation-shaped batch through the fused kernel on cuda: the torch-recorded case."""
    case = next(c for c in CASES if c["call"].startswith("F.cross_entropy(a, kt, weight=kw"))
    a = tt.tensor(case["inputs"]["a"], dtype=tt.float64, device="cuda", requires_grad=True)
    kt = tt.tensor(case["inputs"]["kt"], dtype=tt.int64, device="cuda")
    kw = tt.tensor(case["inputs"]["kw"], dtype=tt.float64, device="cuda")
    out = F.cross_entropy(a, kt, weight=kw, ignore_index=1, label_smoothing=0.2)
    np.testing.assert_allclose(to_numpy(out), case["output"], rtol=1e-10)
    (g,) = tt.autograd.grad(out, a)
    np.testing.assert_allclose(to_numpy(g), np.array(case["grads"]["a"]), rtol=1e-9, atol=1e-12)


def _raises(exc, message, fn):
    with pytest.raises(exc) as info:
        fn()
    assert str(info.value) == message


def test_errors_word_for_word_as_torch():
    x, y = tt.randn(3, 4), tt.randn(3, 4)
    s = tt.tensor([1.0, -1.0, 1.0])
    _raises(ValueError, "bad is not a valid value for reduction", lambda: F.kl_div(x, y, reduction="bad"))
    _raises(RuntimeError, "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            "input1: tritensor.Size([3]), input2: tritensor.Size([3, 4]), target: tritensor.Size([3]) ",
            lambda: F.margin_ranking_loss(x[:, 0], x, s))
    _raises(RuntimeError, "0D or 1D target tensor expected, multi-target not supported",
            lambda: F.cosine_embedding_loss(x, y, tt.ones(3, 1)))
    _raises(RuntimeError, "1D target tensor expects 2D input tensors, but found inputs with sizes [4] and [4].",
            lambda: F.cosine_embedding_loss(x[0], y[0], s))
    triplet_dims = ("The anchor, positive, and negative tensors are expected to have the same number of dimensions, "
                    "but got: anchor 2D, positive 1D, and negative 2D inputs")
    _raises(RuntimeError, triplet_dims, lambda: F.triplet_margin_loss(x, y[0], y))
    _raises(RuntimeError, triplet_dims, lambda: F.triplet_margin_with_distance_loss(x, y[0], y))
    _raises(ValueError, "margin must be greater than 0, got 0", lambda: F.triplet_margin_with_distance_loss(x, y, y, margin=0))
    _raises(RuntimeError, "inconsistent target size: [3, 3] for input of size: [3, 4]",
            lambda: F.multilabel_margin_loss(x, tt.zeros(3, 3, dtype=tt.int64)))
    _raises(RuntimeError, "expected scalar type Long but found Float", lambda: F.multilabel_margin_loss(x, tt.zeros(3, 4)))
    _raises(RuntimeError, "Expected non-empty vector or matrix with optional 0-dim batch size, but got: [2, 3, 4]",
            lambda: F.multilabel_margin_loss(tt.randn(2, 3, 4), tt.zeros(2, 3, 4, dtype=tt.int64)))
    _raises(RuntimeError, "argument #2 'target' is out of range",
            lambda: F.multilabel_margin_loss(x, tt.full((3, 4), 5, dtype=tt.int64)))
    _raises(ValueError, "only p == 1 and p == 2 supported", lambda: F.multi_margin_loss(x, tt.tensor([0, 1, 2]), p=3))
    _raises(RuntimeError, "multi_margin_loss: target tensor should be 1-D with size equal to the number of input samples "
            "(batch size). Expected target size [3], but got [2]. Input has shape [3, 4].",
            lambda: F.multi_margin_loss(x, tt.tensor([0, 1])))
    _raises(RuntimeError, "target out of range", lambda: F.multi_margin_loss(x, tt.tensor([0, 1, 7])))
    _raises(RuntimeError, "inconsistent weight size, expected 4 but got [3]",
            lambda: F.multi_margin_loss(x, tt.tensor([0, 1, 2]), weight=tt.ones(3)))
    _raises(RuntimeError, "The function 'multi_margin_loss' is not differentiable with respect to argument 'weight'. "
            "This input cannot have requires_grad True.",
            lambda: F.multi_margin_loss(x, tt.tensor([0, 1, 2]), weight=tt.ones(4, requires_grad=True)))
    _raises(RuntimeError, "The function 'soft_margin_loss' is not differentiable with respect to argument 'target'. "
            "This input cannot have requires_grad True.", lambda: F.soft_margin_loss(x, tt.ones(3, 4, requires_grad=True)))
    _raises(ValueError, "var is of incorrect size", lambda: F.gaussian_nll_loss(x, y, tt.ones(3, 2)))
    _raises(ValueError, "var has negative entry/entries", lambda: F.gaussian_nll_loss(x, y, -tt.ones(3, 4)))
    _raises(ValueError, "x is not valid", lambda: F.gaussian_nll_loss(x, y, tt.ones(3, 4), reduction="x"))
    _raises(ValueError, "x is not a valid value for reduction", lambda: F.poisson_nll_loss(x, y, reduction="x"))
    _raises(RuntimeError, "bilinear(): input2 size does not match weight size: got 4 but expected 3",
            lambda: F.bilinear(x, y, tt.randn(5, 4, 3)))
    _raises(RuntimeError, "bilinear(): bias size does not match weight size: got 4 but expected 5",
            lambda: F.bilinear(x, y, tt.randn(5, 4, 4), tt.randn(4)))
    _raises(RuntimeError, "bilinear(): input batch dimensions do not match at dim 0: got 3 and 2",
            lambda: F.bilinear(x, y[:2], tt.randn(5, 4, 4)))
    _raises(RuntimeError, "expected common dtype to be floating point, yet common dtype is Long",
            lambda: F.cosine_similarity(tt.ones(2, 3, dtype=tt.int64), tt.ones(2, 3, dtype=tt.int64)))
    _raises(RuntimeError, "expected input with dimensionality 1 or 2, got 3",
            lambda: F.linear_cross_entropy(tt.randn(2, 3, 4), tt.randn(5, 4), tt.tensor([0, 1])))
    _raises(RuntimeError, "expected equal input and linear_weight last dimensions (in_features), got 4 and 3, "
            "respectively", lambda: F.linear_cross_entropy(x, tt.randn(5, 3), tt.tensor([0, 1, 2])))


def test_ctc_errors_word_for_word_as_torch():
    lp = tt.randn(6, 3, 5).log_softmax(2)
    tg = tt.tensor([[1, 2, 2, 3], [4, 4, 0, 0], [1, 3, 1, 0]])
    il, tl_ = tt.tensor([6, 5, 4]), tt.tensor([4, 2, 0])
    checking = " (while checking arguments for ctc_loss_allocate_outputs)"
    _raises(RuntimeError, "blank must be in label range", lambda: F.ctc_loss(lp, tg, il, tl_, blank=5))
    _raises(RuntimeError, "input_lengths must be of size batch_size", lambda: F.ctc_loss(lp, tg, il[:2], tl_))
    _raises(RuntimeError, "target_lengths must be of size batch_size", lambda: F.ctc_loss(lp, tg, il, tl_[:2]))
    _raises(RuntimeError, "Expected tensor to have size at least 4 at dimension 1, but got size 2 for argument #2 "
            "'targets'" + checking, lambda: F.ctc_loss(lp, tg[:, :2], il, tl_))
    _raises(RuntimeError, "Expected input_lengths to have value at most 6, but got value 7" + checking,
            lambda: F.ctc_loss(lp, tg, tt.tensor([7, 5, 4]), tl_))
    _raises(RuntimeError, "Expected input_lengths to have value at least 0, but got value -4" + checking,
            lambda: F.ctc_loss(lp, tg, il - 10, tl_))
    _raises(RuntimeError, "Expected tensor to have size 6 at dimension 0, but got size 5 for argument #2 'targets'"
            + checking, lambda: F.ctc_loss(lp, tg.flatten()[:5], il, tl_))
    _raises(RuntimeError, "input_lengths must be integral", lambda: F.ctc_loss(lp, tg, il.float(), tl_))
    _raises(NotImplementedError, "\"ctc_loss_cpu\" not implemented for 'Int'", lambda: F.ctc_loss(lp.int(), tg, il, tl_))
    _raises(ValueError, "bad is not a valid value for reduction", lambda: F.ctc_loss(lp, tg, il, tl_, reduction="bad"))


def test_ctc_unbatched_tuples_and_the_module():
    rng = np.random.default_rng(6)
    lp = tt.tensor(rng.standard_normal((6, 2, 4)), dtype=tt.float64).log_softmax(2)
    tg = tt.tensor([[1, 2, 2], [3, 1, 0]])
    batched = F.ctc_loss(lp, tg, (6, 5), (3, 2), reduction="none")
    one = F.ctc_loss(lp[:, 0], tg[0], 6, 3, reduction="none")
    assert one.shape == () and one.grad_fn is None
    assert one.item() == pytest.approx(batched[0].item(), rel=1e-12)
    module = nn.CTCLoss(blank=0, reduction="sum")
    assert repr(module) == "CTCLoss()"
    assert module(lp, tg, tt.tensor([6, 5]), tt.tensor([3, 2])).item() == pytest.approx(batched.sum().item(), rel=1e-12)
    # an impossible alignment (3 repeated labels need 5 frames): inf, or 0 with zero_infinity
    short = F.ctc_loss(lp, tt.tensor([[1, 1, 1], [2, 0, 0]]), (4, 5), (3, 1), reduction="none")
    assert math.isinf(short[0].item())
    assert F.ctc_loss(lp, tt.tensor([[1, 1, 1], [2, 0, 0]]), (4, 5), (3, 1), reduction="none",
                      zero_infinity=True)[0].item() == 0.0


def test_kl_div_mean_warns_as_torch_and_legacy_arguments():
    x, t = tt.randn(3, 4), tt.rand(3, 4)
    with pytest.warns(UserWarning, match="^reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size"):
        mean = F.kl_div(x, t)
    total = F.kl_div(x, t, reduction="sum")
    assert mean.item() == pytest.approx(total.item() / 12)
    assert F.kl_div(x, t, reduction="batchmean").item() == pytest.approx(total.item() / 3)
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        assert F.kl_div(x, t, size_average=False).item() == pytest.approx(total.item())


def test_linear_cross_entropy_options_and_k_dimensional_weight():
    x, w = tt.randn(3, 4, dtype=tt.float64), tt.randn(5, 2, 4, dtype=tt.float64)      # C = 5, out_features (2,)
    t = tt.tensor([[0, 4], [1, 1], [3, 2]])
    logits = tt.einsum("ni,cki->nck", x, w)
    assert F.linear_cross_entropy(x, w, t).item() == pytest.approx(F.cross_entropy(logits, t).item(), rel=1e-12)
    with pytest.raises(NotImplementedError, match="chunked path"):
        F.linear_cross_entropy(x, w[:, 0], t[:, 0], options=object())


# --------------------------------------------------------------------------- modules
def test_module_reprs_buffers_and_checks_as_torch():
    mods = [nn.KLDivLoss(), nn.MarginRankingLoss(), nn.HingeEmbeddingLoss(), nn.MultiLabelMarginLoss(),
            nn.SoftMarginLoss(), nn.MultiLabelSoftMarginLoss(), nn.CosineEmbeddingLoss(), nn.MultiMarginLoss(p=2),
            nn.TripletMarginLoss(), nn.TripletMarginWithDistanceLoss(), nn.PoissonNLLLoss(), nn.GaussianNLLLoss(),
            nn.CosineSimilarity(), nn.PairwiseDistance()]
    assert [repr(m) for m in mods] == [type(m).__name__ + "()" for m in mods]
    assert list(nn.MultiMarginLoss(weight=tt.ones(3)).state_dict()) == ["weight"]
    assert list(nn.MultiLabelSoftMarginLoss(weight=tt.ones(3)).state_dict()) == ["weight"]
    _raises(ValueError, "only p == 1 and p == 2 supported", lambda: nn.MultiMarginLoss(p=3))
    _raises(ValueError, "MultiMarginLoss: expected weight to be None or 1D tensor, got 2D instead",
            lambda: nn.MultiMarginLoss(weight=tt.ones(2, 2)))
    _raises(ValueError, "TripletMarginLoss: expected margin to be greater than 0, got 0 instead",
            lambda: nn.TripletMarginLoss(margin=0))
    _raises(ValueError, "TripletMarginWithDistanceLoss: expected margin to be greater than 0, got -1 instead",
            lambda: nn.TripletMarginWithDistanceLoss(margin=-1))


def test_modules_call_their_functions():
    rng = np.random.default_rng(3)
    a, b, c = (tt.tensor(rng.standard_normal((4, 3))) for _ in range(3))
    y = tt.tensor([1.0, -1.0, -1.0, 1.0])
    cls = tt.tensor([0, 2, 1, 2])
    pairs = [
        (nn.KLDivLoss(reduction="batchmean", log_target=True)(a, b), F.kl_div(a, b, reduction="batchmean", log_target=True)),
        (nn.MarginRankingLoss(0.2)(a[:, 0], b[:, 0], y), F.margin_ranking_loss(a[:, 0], b[:, 0], y, 0.2)),
        (nn.HingeEmbeddingLoss(0.3)(a, y[:3].reshape(1, 3).expand(4, 3)), F.hinge_embedding_loss(a, y[:3].expand(4, 3), 0.3)),
        (nn.SoftMarginLoss(reduction="sum")(a, b.sign()), F.soft_margin_loss(a, b.sign(), reduction="sum")),
        (nn.CosineEmbeddingLoss(0.1)(a, b, y), F.cosine_embedding_loss(a, b, y, 0.1)),
        (nn.MultiMarginLoss(p=2, margin=0.5)(a, cls), F.multi_margin_loss(a, cls, p=2, margin=0.5)),
        (nn.TripletMarginLoss(p=1, swap=True)(a, b, c), F.triplet_margin_loss(a, b, c, p=1, swap=True)),
        (nn.TripletMarginWithDistanceLoss(margin=0.5)(a, b, c), F.triplet_margin_with_distance_loss(a, b, c, margin=0.5)),
        (nn.PoissonNLLLoss(full=True)(a, b.abs() * 3), F.poisson_nll_loss(a, b.abs() * 3, full=True)),
        (nn.GaussianNLLLoss(full=True)(a, b, c.abs()), F.gaussian_nll_loss(a, b, c.abs(), full=True)),
        (nn.CosineSimilarity(0)(a, b), F.cosine_similarity(a, b, 0)),
        (nn.PairwiseDistance(1.0, keepdim=True)(a, b), F.pairwise_distance(a, b, 1.0, keepdim=True)),
    ]
    for got, want in pairs:
        np.testing.assert_array_equal(to_numpy(got), to_numpy(want))


def test_bilinear_module_parameters_and_gradients():
    m = nn.Bilinear(4, 3, 2, dtype=tt.float64)
    assert repr(m) == "Bilinear(in1_features=4, in2_features=3, out_features=2, bias=True)"
    assert tuple(m.weight.shape) == (2, 4, 3) and tuple(m.bias.shape) == (2,)
    bound = 1 / math.sqrt(4)
    assert float(m.weight.abs().max()) <= bound and float(m.bias.abs().max()) <= bound
    assert nn.Bilinear(4, 3, 2, bias=False).bias is None
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((5, 4)), rng.standard_normal((5, 3))
    y = m(tt.tensor(a), tt.tensor(b))
    w, bias = to_numpy(m.weight.detach()), to_numpy(m.bias.detach())
    np.testing.assert_allclose(to_numpy(y), np.einsum("ni,oij,nj->no", a, w, b) + bias, rtol=1e-12)
    y.sum().backward()
    np.testing.assert_allclose(to_numpy(m.weight.grad), np.einsum("ni,nj->ij", a, b)[None].repeat(2, 0), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(m.bias.grad), [5.0, 5.0])
    _raises(ValueError, "in1_features must be > 0, but got (in1_features=0)", lambda: nn.Bilinear(0, 3, 2))
