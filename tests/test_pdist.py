"""pdist / cdist (tritensor/ops/pdist.py): values against NumPy brute force, torch's order, errors,
gradients (torch's zero subgradient where a distance is 0), double backward as torch, the
pair-index mapping past 2**31 pairs, and the uniformity loss against its matmul formulation.

Sizes cross the emulated kernels' blocks (8 rows for direct tiles, 16 for Gram tiles, 4 features
per slab) while keeping the number of interpreted programs small.
"""
import math

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy
from tritensor.autograd import gradcheck, gradgradcheck
from tritensor.backends import numpy_pdist

INF = math.inf


def brute(x, y, p):
    """||x_i - y_j||_p from the full [n, m, D] difference array (fine at test sizes)."""
    diff = np.abs(x[..., :, None, :] - y[..., None, :, :])
    if p == 0:
        return (diff != 0).sum(-1).astype(x.dtype)
    if math.isinf(p):
        return diff.max(-1, initial=0)
    return (diff ** p).sum(-1) ** (1 / p)


def packed(full):
    n = full.shape[0]
    return full[np.triu_indices(n, 1)]      # the upper triangle, row by row: torch's order


def _rows(n, D, seed, duplicates=((3, 7), (3, 12))):
    x = np.random.default_rng(seed).standard_normal((n, D))
    for src, dst in duplicates:
        if max(src, dst) < n:
            x[dst] = x[src]
    return x


# --------------------------------------------------------------------------- values
def test_pdist_matches_numpy_for_every_p(device):
    x = _rows(19, 5, 0)
    for p in (0, 0.5, 1, 1.5, 2, 3, INF):
        out = tt.pdist(tt.tensor(x, device=device), p)
        assert out.shape == (19 * 18 // 2,) and out.dtype is tt.float64
        np.testing.assert_allclose(to_numpy(out), packed(brute(x, x, p)), rtol=1e-12, atol=1e-12, err_msg=str(p))
    x32 = tt.tensor(x, dtype=tt.float32, device=device)
    for p in (1.5, 2):
        out = tt.pdist(x32, p)
        assert out.dtype is tt.float32
        np.testing.assert_allclose(to_numpy(out), packed(brute(x, x, p)), rtol=2e-5, atol=2e-5)


def test_pdist_layouts_and_sizes(device):
    x = _rows(18, 11, 1)
    t = tt.tensor(x.T.copy(), device=device).t()                      # transposed: strides (1, 18)
    np.testing.assert_allclose(to_numpy(tt.pdist(t, 2)), packed(brute(x, x, 2)), rtol=1e-12)
    both = np.concatenate([x, x], 1)
    wide = tt.tensor(both, device=device)[:, ::2]                         # column stride 2
    np.testing.assert_allclose(to_numpy(tt.pdist(wide, 1)), packed(brute(both[:, ::2], both[:, ::2], 1)), rtol=1e-12)
    assert tt.pdist(tt.zeros(0, 3, device=device)).shape == (0,)
    assert tt.pdist(tt.zeros(1, 3, device=device)).shape == (0,)
    assert to_numpy(tt.pdist(tt.zeros(2, 3, device=device))).tolist() == [0.0]
    assert to_numpy(tt.pdist(tt.ones(4, 0, device=device))).tolist() == [0.0] * 6      # no features: 0


def test_identical_rows_give_exactly_zero_against_cancellation(device):
    """Rows far from the origin make |a|^2 + |b|^2 - 2 a.b cancel: the Gram path recomputes
    those entries from the differences, so duplicates give 0 and near-duplicates keep their
    digits."""
    rng = np.random.default_rng(2)
    x = 1e3 + rng.standard_normal((20, 6))
    x[5] = x[2]
    x[9] = x[2] + 1e-4 * rng.standard_normal(6)
    for dtype, rtol in ((tt.float64, 1e-9), (tt.float32, 1e-3)):
        xs = x.astype(dtype.numpy_dtype)
        out = to_numpy(tt.pdist(tt.tensor(xs, device=device), 2))
        ref = packed(brute(xs.astype(np.float64), xs.astype(np.float64), 2))
        k = numpy_pdist.pair_row_start(2, 20)
        assert out[k + 5 - 2 - 1] == 0.0
        np.testing.assert_allclose(out[k + 9 - 2 - 1], ref[k + 9 - 2 - 1], rtol=rtol)
        np.testing.assert_allclose(out, ref, rtol=rtol, atol=1e-6)
        if device == "cuda":
            d = to_numpy(tt.cdist(tt.tensor(xs, device=device), tt.tensor(xs, device=device),
                                  compute_mode="use_mm_for_euclid_dist"))
            assert d[5, 2] == 0.0 and (np.diag(d) == 0).all()


def test_pdist_errors():
    with pytest.raises(RuntimeError, match=r"^pdist only supports 2D tensors, got: 3D$"):
        tt.pdist(tt.zeros(2, 3, 4))
    with pytest.raises(RuntimeError, match=r"^pdist only supports 2D tensors, got: 1D$"):
        tt.pdist(tt.zeros(3))
    with pytest.raises(RuntimeError, match=r"^pdist only supports floating-point dtypes$"):
        tt.pdist(tt.ones(3, 2, dtype=tt.int64))
    with pytest.raises(RuntimeError, match=r"^pdist only supports non-negative p values$"):
        tt.pdist(tt.zeros(3, 2), p=-1)
    with pytest.raises(NotImplementedError, match=r"^\"pdist\" not implemented for 'Half'$"):
        tt.pdist(tt.zeros(3, 2, dtype=tt.float16))
    with pytest.raises(NotImplementedError, match=r"'BFloat16'"):
        tt.pdist(tt.zeros(3, 2, dtype=tt.bfloat16))
    assert tt.nn.functional.pdist is tt.pdist


def test_cdist_matches_numpy(device):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 1, 9, 5))
    b = rng.standard_normal((3, 10, 5))
    b[1, 4] = a[0, 0, 2]
    for p in (0, 1, 1.5, 2, INF):
        out = tt.cdist(tt.tensor(a, device=device), tt.tensor(b, device=device), p)
        assert out.shape == (2, 3, 9, 10)
        np.testing.assert_allclose(to_numpy(out), brute(a, b, p), rtol=1e-12, atol=1e-12, err_msg=str(p))
    # p = 0 counts the features that differ (Hamming-like)
    h = tt.cdist(tt.tensor([[0.0, 1, 2], [0, 1, 5]], device=device), tt.tensor([[0.0, 1, 2]], device=device), 0)
    assert to_numpy(h).tolist() == [[0.0], [1.0]]


def test_cdist_compute_modes_follow_torch_thresholds(device):
    rng = np.random.default_rng(4)
    small = tt.tensor(rng.standard_normal((25, 3)), device=device)
    big = tt.tensor(rng.standard_normal((26, 3)), device=device, requires_grad=True)
    names = {
        ("use_mm_for_euclid_dist_if_necessary", small, small): "CdistBackward0",
        ("use_mm_for_euclid_dist_if_necessary", big, small): "EuclideanDistBackward0",
        ("use_mm_for_euclid_dist", small, small): "EuclideanDistBackward0",
        ("donot_use_mm_for_euclid_dist", big, big): "CdistBackward0",
    }
    for (mode, x1, x2), node in names.items():
        x1 = x1.detach().requires_grad_()
        out = tt.cdist(x1, x2, compute_mode=mode)
        assert out.grad_fn.name() == node, mode
        np.testing.assert_allclose(to_numpy(out), brute(to_numpy(x1), to_numpy(x2), 2), rtol=1e-10, atol=1e-10)
    assert tt.cdist(big, big, p=1).grad_fn.name() == "CdistBackward0"   # mm is for p = 2 only
    with pytest.raises(ValueError, match=r"^foo is not a valid value for compute_mode$"):
        tt.cdist(small, small, compute_mode="foo")
    with pytest.raises(ValueError, match=r"^None is not a valid value for compute_mode$"):
        tt.cdist(small, small, compute_mode=None)


def test_cdist_errors():
    with pytest.raises(RuntimeError, match=r"^cdist only supports at least 2D tensors, X1 got: 1D$"):
        tt.cdist(tt.zeros(3), tt.zeros(2, 3))
    with pytest.raises(RuntimeError, match=r"^cdist only supports at least 2D tensors, X2 got: 1D$"):
        tt.cdist(tt.zeros(2, 3), tt.zeros(3))
    with pytest.raises(RuntimeError, match=r"^X1 and X2 must have the same number of columns. X1: 3 X2: 4$"):
        tt.cdist(tt.zeros(2, 3), tt.zeros(2, 4))
    with pytest.raises(RuntimeError, match=r"^cdist only supports floating-point dtypes, X1 got: Long$"):
        tt.cdist(tt.ones(2, 3, dtype=tt.int64), tt.zeros(2, 3))
    with pytest.raises(RuntimeError, match=r"^cdist only supports floating-point dtypes, X2 got: Long$"):
        tt.cdist(tt.zeros(2, 3), tt.ones(2, 3, dtype=tt.int64))
    with pytest.raises(RuntimeError, match=r"^cdist only supports non-negative p values$"):
        tt.cdist(tt.zeros(2, 3), tt.zeros(2, 3), p=-1)
    with pytest.raises(RuntimeError, match=r"^expected scalar type Double but found Float$"):
        tt.cdist(tt.zeros(3, 3, dtype=tt.float64), tt.zeros(3, 3))
    with pytest.raises(RuntimeError, match=r"^expected m1 and m2 to have the same dtype, but got: float != double$"):
        tt.cdist(tt.zeros(30, 3), tt.zeros(30, 3, dtype=tt.float64))
    with pytest.raises(NotImplementedError, match=r"^\"cdist\" not implemented for 'Half'$"):
        tt.cdist(tt.zeros(3, 3, dtype=tt.float16), tt.zeros(3, 3, dtype=tt.float16))
    with pytest.raises(RuntimeError, match=r"must match the size of tensor b \(3\) at non-singleton dimension 0"):
        tt.cdist(tt.zeros(2, 2, 3), tt.zeros(3, 2, 3))
    assert tt.cdist(tt.zeros(0, 3), tt.zeros(2, 3)).shape == (0, 2)
    assert to_numpy(tt.cdist(tt.zeros(2, 0), tt.zeros(2, 0))).tolist() == [[0.0, 0.0], [0.0, 0.0]]


# --------------------------------------------------------------------------- gradients
@pytest.mark.parametrize("p", [1, 1.5, 2, 3, INF])
def test_pdist_gradcheck(p, device):
    x = tt.tensor(np.random.default_rng(5).standard_normal((4, 2)), device=device, requires_grad=True)
    assert gradcheck(lambda x: tt.pdist(x, p), (x,))


def test_pdist_zero_distance_gradients_follow_torch(device):
    """Values from torch 2.13: duplicate rows get torch's zero subgradient for every p; p = inf
    gives every feature that reaches the max the whole gradient; p = 0 has zero derivative."""
    expected = {0: [[0, 0], [0, 0], [0, 0]]}
    for p in (0.5, 1, 1.5, 2, 3, INF):
        expected[p] = [[-1, 0], [-1, 0], [2, 0]]
    for p, grad in expected.items():
        x = tt.tensor([[0.0, 1], [0, 1], [3, 1]], device=device, requires_grad=True)
        tt.pdist(x, p).sum().backward()
        np.testing.assert_allclose(to_numpy(x.grad), grad, atol=1e-6, err_msg=str(p))
    x = tt.tensor([[0.0, 1], [2, 3]], device=device, requires_grad=True)
    tt.pdist(x, INF).sum().backward()
    assert to_numpy(x.grad).tolist() == [[-1, -1], [1, 1]]
    x = tt.tensor([[0.0, 1], [2, 1], [3, 5]], device=device, requires_grad=True)
    tt.pdist(x, 0.5).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [[-3.154700517654419, -1.866025447845459], [-2.0, -1.5],
                                                  [5.15470027923584, 3.366025447845459]], rtol=1e-6)


def test_backward_kernels_match_the_reference():
    """The cuda backward kernels against the blocked NumPy reference, across several blocks of
    rows, features and pairs (duplicates included)."""
    x = _rows(19, 9, 6)
    g = np.random.default_rng(7).standard_normal(19 * 18 // 2)
    for p in (0, 0.5, 2, 3, INF):
        grads = []
        for device in ("cpu", "cuda"):
            t = tt.tensor(x, device=device, requires_grad=True)
            tt.pdist(t, p).backward(tt.tensor(g, device=device))
            grads.append(to_numpy(t.grad))
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-10, atol=1e-12, err_msg=str(p))
    a, b = _rows(9, 5, 8), _rows(10, 5, 9)
    gc = np.random.default_rng(10).standard_normal((9, 10))
    for p, mode in ((1.5, "donot_use_mm_for_euclid_dist"), (2, "use_mm_for_euclid_dist"), (INF, "donot_use_mm_for_euclid_dist")):
        grads = []
        for device in ("cpu", "cuda"):
            ta = tt.tensor(a, device=device, requires_grad=True)
            tb = tt.tensor(b, device=device, requires_grad=True)
            tt.cdist(ta, tb, p, compute_mode=mode).backward(tt.tensor(gc, device=device))
            grads.append((to_numpy(ta.grad), to_numpy(tb.grad)))
        for got, ref in zip(grads[1], grads[0]):
            np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12, err_msg=str(p))


def test_cdist_gradients_with_broadcast_batches(device):
    a = tt.tensor(np.random.default_rng(11).standard_normal((2, 1, 2, 2)), device=device, requires_grad=True)
    b = tt.tensor(np.random.default_rng(12).standard_normal((2, 2)), device=device, requires_grad=True)
    assert gradcheck(lambda a, b: tt.cdist(a, b, 1.5), (a, b))
    if device == "cpu":   # the mm path's backward is tritensor ops (checked on cuda by test_op_gradients)
        assert gradcheck(lambda a, b: tt.cdist(a, b, compute_mode="use_mm_for_euclid_dist"), (a, b))


def test_double_backward_follows_torch(device):
    """torch has no derivative for _pdist_backward / _cdist_backward; its mm path for cdist is a
    composite that differentiates twice."""
    x = tt.tensor(np.random.default_rng(13).standard_normal((4, 3)), device=device, requires_grad=True)
    (g,) = tt.autograd.grad(tt.pdist(x).sum(), x, create_graph=True)
    assert g.grad_fn.name() == "PdistBackwardBackward0"
    with pytest.raises(NotImplementedError, match=r"^the derivative for '_pdist_backward' is not implemented\.$"):
        g.sum().backward()
    (g,) = tt.autograd.grad(tt.cdist(x, x * 2, p=1).sum(), x, create_graph=True)
    with pytest.raises(NotImplementedError, match=r"^the derivative for '_cdist_backward' is not implemented\.$"):
        g.sum().backward()
    if device == "cpu":   # (on cuda: test_op_gradients' cdist case)
        assert gradgradcheck(lambda x: tt.cdist(x, x * 2, compute_mode="use_mm_for_euclid_dist"), (x,))


# --------------------------------------------------------------------------- the pair index
def _exact_pair(k, n):
    """(i, j) of packed index k in exact integer arithmetic (isqrt), counted from the end."""
    total = n * (n - 1) // 2
    m = total - 1 - k
    r = (math.isqrt(8 * m + 1) - 1) // 2 + 1       # smallest r with r (r + 1) / 2 > m
    i = n - 1 - r
    return i, k - (total - r * (r + 1) // 2) + i + 1


def _probe_indices(n):
    total = n * (n - 1) // 2
    ks = {0, 1, n - 2, n - 1, n, total - 1, total - 2, total - 3}
    for c in (2 ** 31, 2 ** 32, 2 ** 62):
        ks |= {c - 2, c - 1, c, c + 1}
    ks |= {total // 2, total // 3, total - n, total - 2 * n + 7}
    return np.array(sorted(k for k in ks if 0 <= k < total), dtype=np.int64)


@pytest.mark.parametrize("n", [2, 3, 17, 46341, 46342, 65537, 3_037_000_500, 2 ** 32])
def test_pair_index_mapping_past_2_31_pairs(n, device):
    """The kernels' k -> (i, j) mapping (and its NumPy twin on cpu) at chosen indices, near both
    ends and near 2**31, 2**32, 2**62, without an output of n (n - 1) / 2 elements. n = 46342 is
    the first n with more than 2**31 pairs."""
    ks = _probe_indices(n)
    if device == "cpu":
        i, j = numpy_pdist.pair_from_index(ks, n)
        start = numpy_pdist.pair_row_start(i, n)
    else:
        from tritensor.backends.triton import pdist as triton_pdist
        out = [tt.empty(len(ks), dtype=tt.int64, device=device) for _ in range(3)]
        triton_pdist.pair_index_probe(*out, tt.tensor(ks, device=device), n)
        i, j, start = (to_numpy(t) for t in out)
    exact = [_exact_pair(int(k), n) for k in ks]
    assert [(int(a), int(b)) for a, b in zip(i, j)] == exact
    assert all(0 <= a < b < n for a, b in exact)
    assert [int(s) for s in start] == [int(k) - (b - a - 1) for k, (a, b) in zip(ks, exact)]


# --------------------------------------------------------------------------- the uniformity loss
def test_uniformity_loss_matches_its_matmul_formulation(device):
    """Wang & Isola's loss with pdist and with |x|^2 + |y|^2 - 2 x.y: same value and gradient
    to 1e-9 in float64."""
    rng = np.random.default_rng(14)
    x = rng.standard_normal((24, 8))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    t = 2.0
    iu = np.triu_indices(24, 1)
    rows, cols = tt.tensor(iu[0], device=device), tt.tensor(iu[1], device=device)

    def with_pdist(x):
        return tt.pdist(x).pow(2).mul(-t).exp().mean().log()

    def with_matmul(x):
        sq = (x * x).sum(1)
        d2 = sq[:, None] + sq[None, :] - 2 * (x @ x.t())
        return d2[rows, cols].mul(-t).exp().mean().log()

    results = []
    for fn in (with_pdist, with_matmul):
        xt = tt.tensor(x, device=device, requires_grad=True)
        loss = fn(xt)
        loss.backward()
        results.append((loss.item(), to_numpy(xt.grad)))
    assert abs(results[0][0] - results[1][0]) <= 1e-9
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=0, atol=1e-9)
