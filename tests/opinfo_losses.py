"""OpInfo records of the composite losses and distances (tritensor/ops/losses.py, issue 25.2 and
25.3): kl_div, margin_ranking, hinge_embedding, cosine_embedding, triplet_margin (and with a
distance function), multilabel_margin, multilabel_soft_margin, multi_margin, soft_margin,
poisson_nll, gaussian_nll, linear_cross_entropy, cosine_similarity, pairwise_distance, bilinear.

The references are NumPy written here from the definitions (loops over the classes where torch's
C++ loops), independent of the composites. They are composites of table ops, whose kernels
the table's own records check; on the emulated cuda each record runs its first sample (their
launches are many), on cpu all of them, in float32 and float64. Values, gradients and node
names against torch 2.13 are in tests/test_losses.py.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import expit, xlogy

import tritensor as tt
from opinfo import GRAD_CASES, SampleInput, _t, record, rng_for, table_op

F = tt.nn.functional
DTYPES = (tt.float32, tt.float64)
TOLERANCES = {tt.float32: (2e-5, 2e-6), tt.float64: (1e-10, 1e-12)}


def _reduce(loss, reduction):
    return {"mean": np.mean, "sum": np.sum}.get(reduction, lambda v: v)(loss)


def _samples(name, build):
    """``build(make, rng)`` yields (desc, args, kwargs); cuda runs the first only."""
    def samples(device, dtype):
        rng = rng_for(name, dtype)

        def make(shape, kind="any"):
            v = rng.standard_normal(shape)
            if kind == "positive":
                v = np.abs(v) + 0.2
            elif kind == "sign":
                v = np.where(v > 0, 1.0, -1.0)
            return tt.tensor(v, dtype=dtype, device=device)

        def ints(values):
            return tt.tensor(np.asarray(values), dtype=tt.int64, device=device)

        for i, (desc, args, kwargs) in enumerate(build(make, ints, rng)):
            if i and device != "cpu":
                return
            yield SampleInput(args, kwargs, desc=desc)
    return samples


def _rec(name, op, build, reference, **fields):
    def host_kwargs(*args, **kwargs):      # the parity test hands tensor keyword arguments over as they are
        kwargs = {k: v.detach().cpu().numpy().astype(np.float64) if isinstance(v, tt.Tensor) else v
                  for k, v in kwargs.items()}
        return reference(*args, **kwargs)
    record(name, op, DTYPES, _samples(name, build), host_kwargs, tolerances=TOLERANCES, **fields)


# --------------------------------------------------------------------------- kl_div
def _kl_ref(x, t, reduction="mean", log_target=False):
    loss = np.exp(t) * (t - x) if log_target else xlogy(t, t) - t * x
    if reduction == "batchmean":
        return loss.sum() / x.shape[0]
    return _reduce(loss, reduction)


def _kl_build(make, ints, rng):
    probs = make((4, 5), "positive")
    probs = probs * (probs > 0.5)                   # some zero targets: 0 log 0 = 0
    yield "batchmean", (make((4, 5)), probs), {"reduction": "batchmean"}
    yield "sum-log-target", (make((3, 6)), make((3, 6))), {"reduction": "sum", "log_target": True}
    yield "none-broadcast", (make((2, 3, 4)), make((3, 4), "positive")), {"reduction": "none"}


_rec("nn.functional.kl_div", F.kl_div, _kl_build, _kl_ref)


# --------------------------------------------------------------------------- margins
def _mr_build(make, ints, rng):
    yield "mean", (make((7,)), make((7,)), make((7,), "sign")), {"margin": 0.3}
    yield "none-2d", (make((3, 4)), make((3, 4)), make((3, 4), "sign")), {"reduction": "none"}


_rec("nn.functional.margin_ranking_loss", F.margin_ranking_loss, _mr_build,
     lambda a, b, y, margin=0.0, reduction="mean": _reduce(np.maximum(0, -y * (a - b) + margin), reduction))


def _hinge_ref(x, y, margin=1.0, reduction="mean"):
    loss = np.where(y == 1, x, 0) + np.where(y == -1, np.maximum(0, margin - x), 0)
    return _reduce(loss, reduction)


def _hinge_build(make, ints, rng):
    yield "mean", (make((4, 5)), make((4, 5), "sign")), {"margin": 0.5}
    yield "sum", (make((9,)), make((9,), "sign")), {"reduction": "sum"}


_rec("nn.functional.hinge_embedding_loss", F.hinge_embedding_loss, _hinge_build, _hinge_ref)


def _soft_margin_build(make, ints, rng):
    yield "mean", (make((4, 5)), make((4, 5), "sign")), {}
    yield "none", (make((7,)), make((7,), "sign")), {"reduction": "none"}


_rec("nn.functional.soft_margin_loss", F.soft_margin_loss, _soft_margin_build,
     lambda x, y, reduction="mean": _reduce(np.log1p(np.exp(-y * x)), reduction))


def _cos_emb_ref(a, b, y, margin=0.0, reduction="mean"):
    axis = a.ndim - 1
    cos = (a * b).sum(axis) / np.sqrt(((a * a).sum(axis) + 1e-12) * ((b * b).sum(axis) + 1e-12))
    loss = np.where(y == 1, 1 - cos, 0) + np.where(y == -1, np.maximum(0, cos - margin), 0)
    return _reduce(loss, reduction)


def _cos_emb_build(make, ints, rng):
    yield "mean", (make((5, 4)), make((5, 4)), make((5,), "sign")), {"margin": 0.1}
    yield "0d-target", (make((6,)), make((6,)), make((), "sign")), {"reduction": "none"}


_rec("nn.functional.cosine_embedding_loss", F.cosine_embedding_loss, _cos_emb_build, _cos_emb_ref)


def _pdist(a, b, p=2.0, eps=1e-6):
    return (np.abs(a - b + eps) ** p).sum(-1) ** (1 / p)


def _triplet_ref(a, p_, n, margin=1.0, p=2.0, eps=1e-6, swap=False, reduction="mean"):
    d_neg = _pdist(a, n, p, eps)
    if swap:
        d_neg = np.minimum(d_neg, _pdist(p_, n, p, eps))
    return _reduce(np.maximum(0, margin + _pdist(a, p_, p, eps) - d_neg), reduction)


def _triplet_build(make, ints, rng):
    yield "mean", (make((5, 4)), make((5, 4)), make((5, 4))), {"margin": 2.0}
    yield "p1-swap-none", (make((5, 4)), make((5, 4)), make((5, 4))), {"p": 1, "swap": True, "reduction": "none"}


_rec("nn.functional.triplet_margin_loss", F.triplet_margin_loss, _triplet_build, _triplet_ref)


def _l1_distance(a, b):
    return (a - b).abs().sum(-1)


def _triplet_distance_ref(a, p_, n, distance_function=None, margin=1.0, swap=False, reduction="mean"):
    dist = (lambda u, v: np.abs(u - v).sum(-1)) if distance_function is _l1_distance else _pdist
    d_neg = dist(a, n)
    if swap:
        d_neg = np.minimum(d_neg, dist(p_, n))
    return _reduce(np.maximum(0, margin + dist(a, p_) - d_neg), reduction)


def _triplet_distance_build(make, ints, rng):
    yield "default-distance", (make((5, 4)), make((5, 4)), make((5, 4))), {"margin": 2.0, "swap": True}
    yield "l1-distance", (make((5, 4)), make((5, 4)), make((5, 4))), {"distance_function": _l1_distance,
                                                                    "reduction": "sum"}


_rec("nn.functional.triplet_margin_with_distance_loss", F.triplet_margin_with_distance_loss, _triplet_distance_build,
     _triplet_distance_ref)


# --------------------------------------------------------------------------- multi-class margins (loops as torch's C++)
def _multi_margin_ref(x, t, p=1, margin=1.0, weight=None, reduction="mean"):
    x2 = x.reshape(-1, x.shape[-1] if x.ndim else 1)
    t1 = np.asarray(t).reshape(-1)
    out = []
    for row, y in zip(x2, t1):
        s = 0.0
        for i in range(len(row)):
            if i != y:
                z = margin - row[y] + row[i]
                if z > 0:
                    h = z if p == 1 else z * z
                    s += h * (weight[y] if weight is not None else 1.0)
        out.append(s / len(row))
    out = np.array(out)
    if reduction == "none":
        return out if np.ndim(t) > 0 else out.reshape(())
    return _reduce(out, reduction)


def _mm_build(make, ints, rng):
    yield "mean", (make((5, 4)), ints(rng.integers(0, 4, 5))), {}
    yield "p2-weight-none", (make((5, 4)), ints(rng.integers(0, 4, 5))), {
        "p": 2, "margin": 0.7, "weight": make((4,), "positive"), "reduction": "none"}
    yield "1d", (make((6,)), ints(2)), {"reduction": "none"}


_rec("nn.functional.multi_margin_loss", F.multi_margin_loss, _mm_build, _multi_margin_ref)


def _mlm_ref(x, t, reduction="mean"):
    x2 = x.reshape(-1, x.shape[-1] if x.ndim else 1)
    t2 = np.asarray(t).reshape(x2.shape)
    out = []
    for row, ys in zip(x2, t2):
        targets = []
        for y in ys:
            if y < 0:
                break
            targets.append(int(y))
        s = 0.0
        for y in targets:
            for i in range(len(row)):
                if i not in targets:
                    s += max(0.0, 1 - (row[y] - row[i]))
        out.append(s / len(row))
    out = np.array(out)
    if reduction == "none":
        return out if x.ndim == 2 else out.reshape(())
    return _reduce(out, reduction)


def _mlm_build(make, ints, rng):
    target = [[1, 2, -1, 0], [0, -1, 3, 3], [3, 2, 1, 0], [2, 2, -1, 1], [-1, 0, 1, 2]]
    yield "none", (make((5, 4)), ints(target)), {"reduction": "none"}
    yield "1d-sum", (make((4,)), ints([3, 0, -1, 1])), {"reduction": "sum"}


_rec("nn.functional.multilabel_margin_loss", F.multilabel_margin_loss, _mlm_build, _mlm_ref)


def _mlsm_ref(x, t, weight=None, reduction="mean"):
    loss = -(t * np.log(expit(x)) + (1 - t) * np.log(expit(-x)))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(-1) / x.shape[-1]
    return _reduce(loss, reduction)


def _mlsm_build(make, ints, rng):
    yield "weight", (make((5, 4)), tt.tensor(rng.integers(0, 2, (5, 4)) * 1.0, dtype=make(()).dtype,
                                             device=make(()).device)), {"weight": make((4,), "positive")}
    yield "none", (make((3, 6)), make((3, 6), "positive") / 3), {"reduction": "none"}


_rec("nn.functional.multilabel_soft_margin_loss", F.multilabel_soft_margin_loss, _mlsm_build, _mlsm_ref)


# --------------------------------------------------------------------------- likelihoods
def _poisson_ref(x, t, log_input=True, full=False, eps=1e-8, reduction="mean"):
    loss = np.exp(x) - t * x if log_input else x - t * np.log(x + eps)
    if full:
        with np.errstate(all="ignore"):
            stirling = t * np.log(t) - t + 0.5 * np.log(2 * math.pi * t)
        loss = loss + np.where(t > 1, stirling, 0)
    return _reduce(loss, reduction)


def _poisson_build(make, ints, rng):
    yield "log-input", (make((4, 5)), make((4, 5), "positive") * 3), {}
    yield "full-none", (make((4, 5), "positive"), make((4, 5), "positive") * 3), {
        "log_input": False, "full": True, "reduction": "none"}


_rec("nn.functional.poisson_nll_loss", F.poisson_nll_loss, _poisson_build, _poisson_ref)


def _gaussian_ref(x, t, var, full=False, eps=1e-6, reduction="mean"):
    if np.ndim(var) == x.ndim - 1 and np.shape(var) == x.shape[:-1]:
        var = var[..., None]
    var = np.maximum(var, eps)
    loss = 0.5 * (np.log(var) + (x - t) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def _gaussian_build(make, ints, rng):
    yield "hetero", (make((4, 5)), make((4, 5)), make((4, 5), "positive")), {}
    yield "homo-full-sum", (make((4, 5)), make((4, 5)), make((4,), "positive")), {"full": True, "reduction": "sum"}
    yield "broadcast-clamped", (make((4, 5)), make((4, 5)), make((4, 1), "positive") * 1e-8), {"reduction": "none"}


_rec("nn.functional.gaussian_nll_loss", F.gaussian_nll_loss, _gaussian_build, _gaussian_ref)


def _lce_ref(x, w, t, linear_bias=None, label_smoothing=0.0, reduction="mean"):
    logits = x @ w.T + (linear_bias if linear_bias is not None else 0)
    logp = logits - logits.max(-1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(-1, keepdims=True))
    C = logits.shape[-1]
    nll = -np.take_along_axis(logp, np.asarray(t)[:, None], 1)[:, 0]
    loss = (1 - label_smoothing) * nll + label_smoothing * (-logp.sum(-1)) / C
    return _reduce(loss, reduction)


def _lce_build(make, ints, rng):
    yield "bias-smoothing", (make((5, 4)), make((3, 4)), ints(rng.integers(0, 3, 5))), {
        "linear_bias": make((3,)), "label_smoothing": 0.1}
    yield "sum", (make((6, 4)), make((7, 4)), ints(rng.integers(0, 7, 6))), {"reduction": "sum"}


_rec("nn.functional.linear_cross_entropy", F.linear_cross_entropy, _lce_build, _lce_ref)


# --------------------------------------------------------------------------- distances and bilinear
def _cos_sim_ref(a, b, dim=1, eps=1e-8):
    a, b = np.broadcast_arrays(a, b)
    na = np.maximum(np.sqrt((a * a).sum(dim, keepdims=True)), eps)
    nb = np.maximum(np.sqrt((b * b).sum(dim, keepdims=True)), eps)
    return ((a / na) * (b / nb)).sum(dim)


def _cos_sim_build(make, ints, rng):
    yield "dim1", (make((5, 4)), make((5, 4))), {}
    yield "broadcast-dim0", (make((3, 4)), make((1, 4))), {"dim": 0}
    yield "zero-vector", (make((2, 3)) * 0, make((2, 3))), {"dim": -1}


_rec("nn.functional.cosine_similarity", F.cosine_similarity, _cos_sim_build, _cos_sim_ref)


def _pd_ref(a, b, p=2.0, eps=1e-6, keepdim=False):
    d = _pdist(a, b, p, eps) if p != math.inf else np.abs(a - b + eps).max(-1)
    return d[..., None] if keepdim else d


def _pd_build(make, ints, rng):
    yield "p2", (make((5, 4)), make((5, 4))), {}
    yield "p3-keepdim-broadcast", (make((5, 4)), make((4,))), {"p": 3.0, "keepdim": True}
    yield "1d-pinf", (make((6,)), make((6,))), {"p": math.inf}


_rec("nn.functional.pairwise_distance", F.pairwise_distance, _pd_build, _pd_ref)


def _bilinear_ref(a, b, w, bias=None):
    y = np.einsum("...i,oij,...j->...o", a, w, b)
    return y + bias if bias is not None else y


def _bilinear_build(make, ints, rng):
    yield "bias", (make((5, 4)), make((5, 3)), make((2, 4, 3)), make((2,))), {}
    yield "3d-no-bias", (make((2, 3, 4)), make((2, 3, 2)), make((5, 4, 2))), {}


_rec("nn.functional.bilinear", F.bilinear, _bilinear_build, _bilinear_ref)


# --------------------------------------------------------------------------- gradient cases (float64, off the kinks)
def _g(shape, seed, kind="any"):
    v = np.random.default_rng(seed).standard_normal(shape)
    if kind == "positive":
        v = np.abs(v) + 0.3
    return v


def _sign(shape, seed):
    return np.where(np.random.default_rng(seed).standard_normal(shape) > 0, 1.0, -1.0)


def _on_cpu_or_gpu(case):
    """Composites of table ops: the same code on every device, so their gradients are checked on
    cpu and real GPUs; under the emulated device each of their many small launches is interpreted
    (a minute a case), and the ops they are made of have their own emulated gradient cases."""
    def make(device):
        if device != "cpu" and tt.cuda.is_emulated():
            pytest.skip("a composite's gradients: cpu and real GPUs (see opinfo_losses._on_cpu_or_gpu)")
        return case(device)
    return make


def _const(v, d, dtype=tt.float64):
    return tt.tensor(np.asarray(v), dtype=dtype, device=d)


_LOSS_GRAD_CASES = {
    "nn.functional.kl_div": lambda d: (lambda x, t: F.kl_div(x, t, reduction="batchmean"),
                                       (_t(_g((3, 4), 1), d), _t(_g((3, 4), 2, "positive"), d)), {}),
    "nn.functional.margin_ranking_loss": lambda d: (
        lambda a, b: F.margin_ranking_loss(a, b, _const(_sign(5, 3), d), margin=0.2),
        (_t(_g(5, 4), d), _t(_g(5, 5), d)), {}),
    "nn.functional.hinge_embedding_loss": lambda d: (
        lambda x: F.hinge_embedding_loss(x, _const(_sign((2, 3), 6), d), margin=0.5, reduction="sum"),
        (_t(_g((2, 3), 7), d),), {}),
    "nn.functional.soft_margin_loss": lambda d: (
        lambda x: F.soft_margin_loss(x, _const(_sign((2, 3), 8), d)), (_t(_g((2, 3), 9), d),), {}),
    "nn.functional.cosine_embedding_loss": lambda d: (
        lambda a, b: F.cosine_embedding_loss(a, b, _const(_sign(3, 10), d), margin=-0.5),
        (_t(_g((3, 4), 11), d), _t(_g((3, 4), 12), d)), {}),
    "nn.functional.triplet_margin_loss": lambda d: (
        lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=3.0, swap=True),
        (_t(_g((3, 4), 13), d), _t(_g((3, 4), 14), d), _t(_g((3, 4), 15), d)), {}),
    "nn.functional.triplet_margin_with_distance_loss": lambda d: (
        lambda a, p, n: F.triplet_margin_with_distance_loss(a, p, n, margin=3.0),
        (_t(_g((3, 4), 16), d), _t(_g((3, 4), 17), d), _t(_g((3, 4), 18), d)), {}),
    "nn.functional.multi_margin_loss": lambda d: (
        lambda x: F.multi_margin_loss(x, _const([0, 3, 1], d, tt.int64), p=2, weight=_const([1.0, 2.0, 0.5, 1.5], d)),
        (_t(_g((3, 4), 19), d),), {}),
    "nn.functional.multilabel_margin_loss": lambda d: (
        lambda x: F.multilabel_margin_loss(x, _const([[1, 2, -1, 0], [3, 0, 1, -1]], d, tt.int64)),
        (_t(_g((2, 4), 20) * 0.3, d),), {}),
    "nn.functional.multilabel_soft_margin_loss": lambda d: (
        lambda x: F.multilabel_soft_margin_loss(x, _const([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]], d)),
        (_t(_g((2, 3), 21), d),), {}),
    "nn.functional.poisson_nll_loss": lambda d: (
        lambda x, t: F.poisson_nll_loss(x, t, log_input=False, full=True),
        (_t(_g((2, 3), 22, "positive"), d), _t(_g((2, 3), 23, "positive") * 3, d)), {}),
    "nn.functional.gaussian_nll_loss": lambda d: (
        lambda x, t, v: F.gaussian_nll_loss(x, t, v, full=True),
        (_t(_g((2, 3), 24), d), _t(_g((2, 3), 25), d), _t(_g((2,), 26, "positive"), d)), {}),
    "nn.functional.linear_cross_entropy": lambda d: (
        lambda x, w, b: F.linear_cross_entropy(x, w, _const([0, 2, 1], d, tt.int64), linear_bias=b,
                                               label_smoothing=0.1),
        (_t(_g((3, 2), 27), d), _t(_g((3, 2), 28), d), _t(_g((3,), 29), d)), {}),
    "nn.functional.cosine_similarity": lambda d: (
        lambda a, b: F.cosine_similarity(a, b), (_t(_g((2, 3), 30), d), _t(_g((2, 3), 31), d)), {}),
    "nn.functional.pairwise_distance": lambda d: (
        lambda a, b: F.pairwise_distance(a, b, p=3.0), (_t(_g((2, 3), 32), d), _t(_g((2, 3), 33), d)), {}),
    "nn.functional.bilinear": lambda d: (
        F.bilinear, (_t(_g((2, 3), 34), d), _t(_g((2, 2), 35), d), _t(_g((2, 3, 2), 36), d), _t(_g((2,), 37), d)), {}),
}
GRAD_CASES.update({name: _on_cpu_or_gpu(case) for name, case in _LOSS_GRAD_CASES.items()})


# --------------------------------------------------------------------------- CTC (table entries over Triton kernels)
def _ctc_dp(lp, targets, il, tl_, blank=0):
    """The alpha recursion written out with Python loops (per sample, per frame, per position)."""
    T, N, C = lp.shape
    out = []
    for n in range(N):
        lab = [blank]
        for c in targets[n][:tl_[n]]:
            lab += [int(c), blank]
        alpha = np.full(len(lab), -np.inf)
        for t in range(il[n]):
            new = np.full(len(lab), -np.inf)
            for s in range(len(lab)):
                if t == 0:
                    terms = [0.0] if s < 2 else []
                else:
                    terms = [alpha[s]] + ([alpha[s - 1]] if s >= 1 else [])
                    if s >= 2 and lab[s] != blank and lab[s] != lab[s - 2]:
                        terms.append(alpha[s - 2])
                new[s] = np.logaddexp.reduce(terms) + lp[t, n, lab[s]] if terms else -np.inf
            alpha = new
        tail = [alpha[-1]] + ([alpha[-2]] if len(lab) > 1 else [])
        out.append(-np.logaddexp.reduce(tail) if il[n] else (0.0 if tl_[n] == 0 else np.inf))
    return np.array(out)


_CTC_TARGETS = np.array([[1, 2, 2], [3, 3, 0], [2, 0, 0]])
_CTC_IL, _CTC_TL = np.array([7, 5, 3]), np.array([3, 2, 0])


def _ctc_samples(device, dtype):
    rng = rng_for("ctc_loss", dtype)
    lp = rng.standard_normal((7, 3, 4))
    lp = lp - np.log(np.exp(lp).sum(-1, keepdims=True))
    yield SampleInput((tt.tensor(lp, dtype=dtype, device=device),), desc="padded")


def _ctc_table(lp, backward=False):
    dev = lp.device
    args = (tt.tensor(_CTC_TARGETS.reshape(-1), device=dev), tt.tensor(_CTC_IL, device=dev),
            tt.tensor(_CTC_TL, device=dev), tt.tensor([0, 3, 6], device=dev))
    nll, alpha = table_op("ctc_loss", lp, *args, blank=0, max_target=3, zero_infinity=False)
    if not backward:
        return nll
    grad = tt.ones(3, dtype=lp.dtype, device=dev)
    return table_op("ctc_loss_backward", grad, lp, *args, nll, alpha, blank=0, zero_infinity=False)


def _ctc_grad_reference(lp):
    """torch's gradient formula from the loop DP: exp(lp) - d nll / d lp computed by central
    differences of the independent DP (the DP is smooth in lp where it is finite)."""
    h = 1e-6
    base = lp.astype(np.float64)
    g = np.zeros_like(base)
    for idx in np.ndindex(*base.shape):
        up, down = base.copy(), base.copy()
        up[idx] += h
        down[idx] -= h
        g[idx] = (_ctc_dp(up, _CTC_TARGETS, _CTC_IL, _CTC_TL).sum() - _ctc_dp(down, _CTC_TARGETS, _CTC_IL, _CTC_TL).sum()) / (2 * h)
    frames = np.arange(base.shape[0])[:, None] < _CTC_IL[None, :]
    return np.where(frames[:, :, None], np.exp(base) + g, 0.0)


record("ctc_loss", lambda lp: _ctc_table(lp), DTYPES, _ctc_samples,
       lambda lp: _ctc_dp(lp.astype(np.float64), _CTC_TARGETS, _CTC_IL, _CTC_TL), tolerances=TOLERANCES,
       op_db=("nn.functional.ctc_loss",), gradgradcheck=False)
record("ctc_loss_backward", lambda lp: _ctc_table(lp, backward=True), DTYPES, _ctc_samples, _ctc_grad_reference,
       tolerances={tt.float32: (1e-4, 1e-5), tt.float64: (1e-6, 1e-7)})
# gradcheck through log_softmax (torch's gradient is that of log_softmax outputs); torch's
# _ctc_loss_backward has no derivative, nor has this one: no gradgradcheck
GRAD_CASES["ctc_loss"] = lambda d: (
    lambda x: F.ctc_loss(x.log_softmax(2), tt.tensor([[1, 1], [2, 0]], device=d), tt.tensor([4, 3], device=d),
                         tt.tensor([2, 1], device=d), reduction="sum"),
    (_t(np.random.default_rng(40).standard_normal((4, 2, 3)), d),), {})
