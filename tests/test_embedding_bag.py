"""F.embedding_bag / nn.EmbeddingBag against torch: outputs and gradients recorded once with torch
(tests/data/make_embedding_bag_fixtures.py -> embedding_bag_fixtures.npz, cases in
tests/data/embedding_bag_cases.py) on cpu and the emulated cuda device; torch's argument checks
and error texts (literals read from torch 2.13); Embedding(max_norm=...) and F.one_hot."""
import os
import sys
import warnings

import numpy as np
import pytest

import tritensor as tt
from tritensor import nn
from tritensor.nn import functional as F

DATA = os.path.join(os.path.dirname(__file__), "data")
sys.path.insert(0, DATA)
from embedding_bag_cases import CASES  # noqa: E402

FIX = np.load(os.path.join(DATA, "embedding_bag_fixtures.npz"))


def _t(a, device, grad=False):
    return tt.tensor(np.ascontiguousarray(a), dtype=tt.float64, device=device, requires_grad=grad)


def _check(name, device):
    case = CASES[name]
    w = _t(FIX[f"{name}/weight"], device, True)
    idx = tt.tensor(case["input"], device=device)
    offsets = tt.tensor(case["offsets"], device=device) if case.get("offsets") is not None else None
    psw = _t(FIX[f"{name}/psw"], device, True) if case.get("psw") else None
    y = F.embedding_bag(idx, w, offsets, per_sample_weights=psw, **case["kwargs"])
    assert y.grad_fn.name() == "EmbeddingBagBackward0"
    np.testing.assert_allclose(y.detach().cpu().numpy(), FIX[f"{name}/out"], rtol=1e-12, atol=1e-14)
    inputs = [w] + ([psw] if psw is not None else [])
    grads = tt.autograd.grad((y * _t(FIX[f"{name}/w_out"], device)).sum(), inputs)
    np.testing.assert_allclose(grads[0].cpu().numpy(), FIX[f"{name}/grad_weight"], rtol=1e-12, atol=1e-14)
    if psw is not None:
        np.testing.assert_allclose(grads[1].cpu().numpy(), FIX[f"{name}/grad_psw"], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch_cpu(name):
    _check(name, "cpu")


@pytest.mark.parametrize("name", ["sum_psw_padding", "mean_2d", "max_padding"])
def test_matches_torch_emulated_cuda(name):
    _check(name, "cuda")


@pytest.mark.parametrize("dtype", [tt.float32, tt.bfloat16, tt.float16])
def test_low_precision_and_strided_weight_on_cuda(dtype):
    """16-bit and float32 weights, a transposed (non-contiguous) weight, int32 indices: the kernel
    against float64 sums of the same rows."""
    rng = np.random.default_rng(0)
    base = rng.standard_normal((20, 12))
    w = tt.tensor(base.T.copy(), dtype=dtype, device="cuda").t()          # (12, 20) storage, read transposed
    wv = w.float().cpu().numpy().astype(np.float64)
    idx = np.array([3, 7, 7, 0, 11, 5, 2], np.int32)
    offsets = np.array([0, 2, 2, 5], np.int32)
    tol = {tt.float32: 1e-6, tt.bfloat16: 1e-2, tt.float16: 2e-3}[dtype]
    for mode in ("sum", "mean", "max"):
        got = F.embedding_bag(tt.tensor(idx, device="cuda"), w, tt.tensor(offsets, device="cuda"), mode=mode)
        bounds = list(offsets) + [len(idx)]
        expected = np.zeros((4, 12))
        for b in range(4):
            rows = wv[idx[bounds[b]:bounds[b + 1]]]
            if len(rows):
                expected[b] = {"sum": rows.sum(0), "mean": rows.mean(0), "max": rows.max(0)}[mode]
        np.testing.assert_allclose(got.float().cpu().numpy(), expected, rtol=tol, atol=tol, err_msg=mode)


def test_module_and_from_pretrained():
    tt.manual_seed(0)
    bag = nn.EmbeddingBag(10, 3)
    assert repr(bag) == "EmbeddingBag(10, 3, mode='mean')"
    assert repr(nn.EmbeddingBag(10, 3, max_norm=1.0, padding_idx=2, mode="max", include_last_offset=True)) == \
        "EmbeddingBag(10, 3, max_norm=1.0, mode='max', padding_idx=2)"
    w = tt.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    frozen = nn.EmbeddingBag.from_pretrained(w, mode="sum")
    assert not frozen.weight.requires_grad
    assert frozen(tt.tensor([[0, 2], [1, 1]])).tolist() == [[6.0, 8.0], [6.0, 8.0]]
    assert nn.EmbeddingBag.from_pretrained(w, freeze=False).weight.requires_grad
    padded = nn.EmbeddingBag(5, 2, padding_idx=-1)
    assert padded.padding_idx == 4 and padded.weight[4].tolist() == [0.0, 0.0]
    with pytest.raises(AssertionError, match="^padding_idx must be within num_embeddings$"):
        nn.EmbeddingBag(10, 3, padding_idx=10)
    with pytest.raises(AssertionError, match="^Embeddings parameter is expected to be 2-dimensional$"):
        nn.EmbeddingBag.from_pretrained(tt.randn(3))


def _raises(exc, text, fn):
    with pytest.raises(exc) as e:
        fn()
    assert str(e.value) == text, str(e.value)


def test_errors():
    w = tt.randn(10, 3)
    i, o = tt.tensor([1, 2, 4, 5, 4, 3, 2, 9]), tt.tensor([0, 4])
    _raises(ValueError, "offsets has to be a 1D Tensor but got None", lambda: F.embedding_bag(i, w))
    _raises(ValueError, "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed "
            "length sequences. However, found offsets of type <class 'tritensor.tensor.Tensor'>",
            lambda: F.embedding_bag(i.reshape(2, 4), w, o))
    _raises(ValueError, "mode has to be one of sum, mean or max", lambda: F.embedding_bag(i, w, o, mode="foo"))
    _raises(NotImplementedError, "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            "supported for mode='max' (got mode='max'). Please open a feature request on GitHub."
            .replace("mode='max' (", "mode='sum' ("),
            lambda: F.embedding_bag(i, w, o, mode="max", per_sample_weights=tt.ones(8)))
    _raises(ValueError, "embedding_bag: If per_sample_weights (tritensor.Size([7])) is not None, then it must have the "
            "same shape as the input (tritensor.Size([8]))",
            lambda: F.embedding_bag(i, w, o, per_sample_weights=tt.ones(7)))
    _raises(RuntimeError, "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
            "position 0. However, got 1", lambda: F.embedding_bag(i, w, tt.tensor([1, 4])))
    _raises(RuntimeError, "offsets[-1] can not be greater than input's length 8 but got offsets[-1] of 9",
            lambda: F.embedding_bag(i, w, tt.tensor([0, 9])))
    _raises(RuntimeError, "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, "
            "Int; but got torch.FloatTensor instead (while checking arguments for embedding_bag)",
            lambda: F.embedding_bag(i.float(), w, o))
    _raises(RuntimeError, "Index 1 of input takes value 20 which is not in the valid range [0, 10)",
            lambda: F.embedding_bag(tt.tensor([1, 20]), w, tt.tensor([0])))
    _raises(RuntimeError, "Index 1 of input takes value -1 which is not in the valid range [0, 10)",
            lambda: F.embedding_bag(tt.tensor([1, -1]), w, tt.tensor([0])))
    _raises(ValueError, "offsets has to be a 1D Tensor", lambda: F.embedding_bag(i, w, o.reshape(2, 1)))
    _raises(ValueError, "input has to be 1D or 2D Tensor, but got Tensor of dimension 3",
            lambda: F.embedding_bag(i.reshape(1, 2, 4), w))
    _raises(RuntimeError, "padding_idx must be within the number of embeddings, -10 through 9, but got 10",
            lambda: F.embedding_bag(i, w, o, padding_idx=10))
    _raises(ValueError, "max mode does not support scaling the gradient by the frequency",
            lambda: F.embedding_bag(i, w, o, scale_grad_by_freq=True, mode="max"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        swapped = F.embedding_bag(w, i, o)
    assert "Argument order of nn.functional.embedding_bag was changed" in str(caught[0].message)
    np.testing.assert_allclose(swapped.numpy(), F.embedding_bag(i, w, o).numpy())
    assert F.embedding_bag(tt.tensor([], dtype=tt.int64), w, tt.tensor([0, 0]), mode="max").tolist() == [[0.0] * 3] * 2


def test_max_norm_renormalises_referenced_rows_in_place():
    """torch's embedding_renorm_: the rows the input refers to whose 2-norm exceeds max_norm
    are scaled to max_norm / (norm + 1e-7) before the lookup; other rows are untouched."""
    w = tt.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    e = nn.Embedding.from_pretrained(w.clone(), max_norm=1.0)
    out = e(tt.tensor([0, 1]))
    np.testing.assert_allclose(out.numpy(), [[3 / (5 + 1e-7), 4 / (5 + 1e-7)], [0.3, 0.4]], rtol=1e-6)
    np.testing.assert_allclose(e.weight.numpy()[2], [6.0, 8.0])          # not referenced: kept
    bag = nn.EmbeddingBag.from_pretrained(w.clone(), max_norm=2.0, mode="sum")
    np.testing.assert_allclose(bag(tt.tensor([[2, 1]])).numpy(), [[1.2 + 0.3, 1.6 + 0.4]], rtol=1e-6)


def test_one_hot_matches_torch():
    assert F.one_hot(tt.tensor([0, 2, 1])).tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    r = F.one_hot(tt.tensor([[1], [3]]), 5)
    assert r.dtype is tt.int64 and tuple(r.shape) == (2, 1, 5)
    assert tuple(F.one_hot(tt.tensor([], dtype=tt.int64), 4).shape) == (0, 4)
    _raises(RuntimeError, "Class values must be smaller than num_classes.", lambda: F.one_hot(tt.tensor([3]), 2))
    _raises(RuntimeError, "Class values must be non-negative.", lambda: F.one_hot(tt.tensor([-1])))
    for n in (-1, 0, -2):
        _raises(RuntimeError, "Can not infer total number of classes from empty tensor.",
                lambda: F.one_hot(tt.tensor([], dtype=tt.int64), n))
    _raises(RuntimeError, "Class values must be smaller than num_classes.", lambda: F.one_hot(tt.tensor([0]), 0))
    _raises(RuntimeError, "one_hot is only applicable to index tensor of type LongTensor.",
            lambda: F.one_hot(tt.tensor([1], dtype=tt.int32)))
