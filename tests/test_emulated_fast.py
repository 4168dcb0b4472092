"""The emulated device's default launch profile ("fast": 16k-element blocks, 64k-element
reduction tiles, whole rows, 128x256 matmul tiles; backends/triton/_plan.py) crosses its own
block edges correctly: shapes a little past each block, so that the last program runs masked,
checked against NumPy in float64. And what its speed now affords: statistics of the random
kernels on cuda from tens of thousands of draws (the op tests, in the small profile, check
little more than bounds there)."""
import math

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy
from tritensor.backends import triton as tb

pytestmark = [pytest.mark.skipif(not tt.cuda.is_emulated(), reason="the emulated device's profile"),
              pytest.mark.emulated_blocks("fast")]

RNG = np.random.default_rng(23)


def _cuda(a):
    return tt.tensor(a, device="cuda")


def test_elementwise_and_copies_past_one_block():
    block = tb.settings()["elementwise_block"]
    n = 2 * block + 37                                       # three programs, the last one masked
    a, b = RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    np.testing.assert_array_equal(to_numpy(_cuda(a) * _cuda(b) + 1.5), a * b + np.float32(1.5))
    m = RNG.standard_normal((181, 203)).astype(np.float32)   # transposed operand: 2 x 2 tiles of 128
    np.testing.assert_array_equal(to_numpy(_cuda(m).t() + _cuda(m.T.copy())), m.T + m.T)
    np.testing.assert_array_equal(to_numpy(_cuda(m).t().contiguous()), m.T)
    np.testing.assert_array_equal(to_numpy(_cuda(m)[:, 1::2].to(tt.float64)), m[:, 1::2].astype(np.float64))


@pytest.mark.parametrize("dims", [None, 0, 1])
def test_reductions_past_one_tile(dims):
    x = RNG.standard_normal((257, 300)).astype(np.float32)   # 77 100 elements: past a 65 536 tile
    x[200, 299] = 40.0
    t = _cuda(x)
    total = x.astype(np.float64).sum(dims)
    np.testing.assert_allclose(to_numpy(t.sum(dims) if dims is not None else t.sum()), total, rtol=1e-5, atol=1e-3)
    if dims is None:
        assert float(to_numpy(t.amax())) == 40.0 and int(to_numpy(t.argmax())) == 200 * 300 + 299
    else:
        np.testing.assert_array_equal(to_numpy(t.amax(dims)), x.max(dims))
        np.testing.assert_array_equal(to_numpy(t.argmin(dims)), x.argmin(dims))
    p = (1 + x / 1024).astype(np.float32)
    np.testing.assert_allclose(to_numpy(_cuda(p).prod(dims) if dims is not None else _cuda(p).prod()),
                               p.astype(np.float64).prod(dims), rtol=1e-4)


def test_rows_past_the_resident_row_and_the_scan_block():
    x = RNG.standard_normal((3, 20000)).astype(np.float32)   # longer than a 16k resident row: streamed
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(to_numpy(tt.softmax(_cuda(x), 1)), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-10)
    np.testing.assert_allclose(to_numpy(tt.log_softmax(_cuda(x), 1)),
                               (x - x.max(1, keepdims=True)) - np.log(e.sum(1, keepdims=True)), rtol=1e-5, atol=1e-5)
    y = RNG.standard_normal((2, 9000)).astype(np.float32)   # scan chunks of 4096 carried across
    np.testing.assert_allclose(to_numpy(_cuda(y).cumsum(1)), np.cumsum(y.astype(np.float64), 1), rtol=1e-4, atol=1e-3)
    z = RNG.standard_normal(4200).astype(np.float32)        # cummax: one carry across a chunk edge
    values, indices = _cuda(z).cummax(0)                     # (its scan costs a Python call per element)
    np.testing.assert_array_equal(to_numpy(values), np.maximum.accumulate(z))
    np.testing.assert_array_equal(z[to_numpy(indices)], to_numpy(values))


def test_matmul_past_one_tile():
    a = RNG.standard_normal((300, 70)).astype(np.float64)   # 3 x 2 tiles of 128 x 256, K in 2 steps of 64
    b = RNG.standard_normal((70, 260)).astype(np.float64)
    np.testing.assert_allclose(to_numpy(_cuda(a) @ _cuda(b)), a @ b, rtol=1e-12, atol=1e-12)
    ai, bi = RNG.integers(-50, 50, (70, 90)), RNG.integers(-50, 50, (90, 65))   # the integer kernel's tiles
    np.testing.assert_array_equal(to_numpy(_cuda(ai) @ _cuda(bi)), ai @ bi)


def test_random_statistics_on_cuda():
    """Tens of thousands of draws in a few programs: moments within 5 standard errors."""
    tt.manual_seed(1234)
    n = 40000
    u = to_numpy(tt.rand(n, device="cuda")).astype(np.float64)
    assert 0 <= u.min() and u.max() < 1
    assert abs(u.mean() - 0.5) < 5 * math.sqrt(1 / 12 / n) and abs(u.var() - 1 / 12) < 0.003
    z = to_numpy(tt.randn(n, device="cuda")).astype(np.float64)
    assert abs(z.mean()) < 5 / math.sqrt(n) and abs(z.std() - 1) < 5 / math.sqrt(2 * n)
    w = tt.empty(256, 160, device="cuda")
    tt.nn.init.kaiming_normal_(w, mode="fan_in", nonlinearity="relu")
    assert abs(to_numpy(w).std() - math.sqrt(2 / 160)) < 5 * math.sqrt(2 / 160) / math.sqrt(2 * w.numel())
    tt.nn.init.xavier_uniform_(w)
    bound = math.sqrt(6 / (256 + 160))
    v = to_numpy(w)
    assert np.abs(v).max() <= bound and abs(v.std() - bound / math.sqrt(3)) < 0.01 * bound
    drop = tt.nn.Dropout(0.3)
    kept = to_numpy(drop(tt.ones(n, device="cuda")))
    assert set(np.unique(kept).tolist()) <= {0.0, np.float32(1 / 0.7)}
    assert abs((kept == 0).mean() - 0.3) < 5 * math.sqrt(0.21 / n)
