"""Records torch 2.13's losses and distances (tests/test_losses.py): per case, the inputs, the
call (an expression over ``F`` and the inputs a, b, c ... ; names starting with ``k`` are
constants: targets, class weights), the output, the gradients of its sum in the differentiable
inputs and the output's node name.

Run with the torch oracle: /work/torchenv/bin/python tests/data/make_loss_values.py
Writes tests/data/loss_values.json.
"""
import json
import pathlib

import numpy as np
import torch

F = torch.nn.functional
rng = np.random.default_rng(2025)


def n(*shape):
    return rng.standard_normal(shape).round(4)


def pos(*shape):
    return (np.abs(rng.standard_normal(shape)) + 0.2).round(4)


def sign(*shape):
    return np.where(rng.standard_normal(shape) > 0, 1.0, -1.0)


CASES = [
    ("F.kl_div(a, kt, reduction='batchmean')", {"a": n(3, 4), "kt": np.where(pos(3, 4) > 0.6, pos(3, 4), 0.0)}),
    ("F.kl_div(a, b, reduction='sum', log_target=True)", {"a": n(3, 4), "b": n(3, 4)}),
    ("F.margin_ranking_loss(a, b, ky, margin=0.3)", {"a": n(6), "b": n(6), "ky": sign(6)}),
    ("F.hinge_embedding_loss(a, ky, margin=0.5, reduction='none')", {"a": n(3, 4), "ky": sign(3, 4)}),
    ("F.soft_margin_loss(a, ky)", {"a": n(3, 4), "ky": sign(3, 4)}),
    ("F.cosine_embedding_loss(a, b, ky, margin=0.1)", {"a": n(4, 5), "b": n(4, 5), "ky": sign(4)}),
    ("F.triplet_margin_loss(a, b, c, margin=2.0, p=1, swap=True, reduction='none')",
     {"a": n(4, 3), "b": n(4, 3), "c": n(4, 3)}),
    ("F.triplet_margin_with_distance_loss(a, b, c, distance_function=lambda u, v: 1 - F.cosine_similarity(u, v), "
     "margin=0.5)", {"a": n(4, 3), "b": n(4, 3), "c": n(4, 3)}),
    ("F.multilabel_margin_loss(a, kt, reduction='none')",
     {"a": n(3, 4), "kt": np.array([[1, 2, -1, 0], [0, -1, 3, 3], [3, 2, 1, 0]])}),
    ("F.multilabel_soft_margin_loss(a, kt, weight=kw)", {"a": n(3, 4), "kt": (n(3, 4) > 0) * 1.0, "kw": pos(4)}),
    ("F.multi_margin_loss(a, kt, p=2, margin=0.8, weight=kw)", {"a": n(4, 5), "kt": np.array([0, 4, 2, 2]),
                                                                "kw": pos(5)}),
    ("F.multi_margin_loss(a, kt, reduction='none')", {"a": n(5), "kt": np.array(3)}),
    ("F.poisson_nll_loss(a, b)", {"a": n(3, 4), "b": pos(3, 4) * 3}),
    ("F.poisson_nll_loss(a, b, log_input=False, full=True, reduction='sum')", {"a": pos(3, 4), "b": pos(3, 4) * 3}),
    ("F.gaussian_nll_loss(a, b, c, full=True)", {"a": n(3, 4), "b": n(3, 4), "c": pos(3)}),
    ("F.gaussian_nll_loss(a, b, c, reduction='none')", {"a": n(3, 4), "b": n(3, 4), "c": pos(3, 1) * 1e-7}),
    ("F.cosine_similarity(a, b, dim=0)", {"a": n(3, 4), "b": n(1, 4)}),
    ("F.pairwise_distance(a, b, p=3.0, keepdim=True)", {"a": n(3, 4), "b": n(3, 4)}),
    ("F.bilinear(a, b, c, d)", {"a": n(3, 4), "b": n(3, 2), "c": n(5, 4, 2), "d": n(5)}),
    ("F.linear_cross_entropy(a, b, kt, linear_bias=c, label_smoothing=0.2)",
     {"a": n(4, 3), "b": n(5, 3), "kt": np.array([0, 4, 1, 3]), "c": n(5)}),
    # N-d class-index targets: segmentation shapes (N, C, d1, d2 ...)
    ("F.cross_entropy(a, kt)", {"a": n(2, 3, 4, 5), "kt": rng.integers(0, 3, (2, 4, 5))}),
    ("F.cross_entropy(a, kt, weight=kw, ignore_index=1, label_smoothing=0.2)",
     {"a": n(2, 3, 4), "kt": rng.integers(0, 3, (2, 4)), "kw": pos(3)}),
    ("F.cross_entropy(a, kt, reduction='none')", {"a": n(2, 3, 2, 2, 2), "kt": rng.integers(0, 3, (2, 2, 2, 2))}),
    ("F.nll_loss(a, kt, weight=kw, ignore_index=2)", {"a": n(2, 3, 4, 5), "kt": rng.integers(0, 3, (2, 4, 5)),
                                                      "kw": pos(3)}),
    ("F.nll_loss(a, kt, reduction='sum')", {"a": n(2, 4, 3), "kt": rng.integers(0, 4, (2, 3))}),
    ("F.nll_loss(a, kt, reduction='none')", {"a": n(2, 4, 3), "kt": rng.integers(0, 4, (2, 3))}),
]
# CTC: log_probs normalised over the classes (torch's gradient formula assumes log_softmax outputs)
_lp = n(6, 3, 5)
_lp = _lp - np.log(np.exp(_lp).sum(-1, keepdims=True))
CASES += [
    ("F.ctc_loss(a, kt, kil, ktl, reduction='none')",
     {"a": _lp, "kt": np.array([[1, 2, 2, 3], [4, 4, 0, 0], [1, 3, 1, 0]]), "kil": np.array([6, 5, 4]),
      "ktl": np.array([4, 2, 3])}),
    ("F.ctc_loss(a, kt, kil, ktl, blank=4)",
     {"a": _lp, "kt": np.array([1, 2, 2, 3, 0, 3, 1]), "kil": np.array([6, 6, 5]), "ktl": np.array([4, 0, 3])}),
    ("F.ctc_loss(a, kt, kil, ktl, reduction='sum', zero_infinity=True)",
     {"a": _lp, "kt": np.array([[1, 1, 1], [2, 3, 0], [3, 0, 0]]), "kil": np.array([3, 6, 2]),
      "ktl": np.array([3, 2, 1])}),
]


def main():
    out = []
    for expr, inputs in CASES:
        tensors = {}
        for name, v in inputs.items():
            v = np.asarray(v)
            if v.dtype.kind in "iu":
                tensors[name] = torch.tensor(v, dtype=torch.int64)
            else:
                tensors[name] = torch.tensor(v, dtype=torch.float64, requires_grad=not name.startswith("k"))
        r = eval(expr, {"F": F, **tensors})
        diff = [k for k in inputs if not k.startswith("k")]
        grads = torch.autograd.grad(r.sum(), [tensors[k] for k in diff])
        out.append({"call": expr, "inputs": {k: np.asarray(v).tolist() for k, v in inputs.items()},
                    "int_inputs": [k for k, v in inputs.items() if np.asarray(v).dtype.kind in "iu"],
                    "output": r.detach().numpy().tolist(), "grads": {k: g.numpy().tolist() for k, g in zip(diff, grads)},
                    "node": r.grad_fn.name()})
    path = pathlib.Path(__file__).with_name("loss_values.json")
    path.write_text(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
