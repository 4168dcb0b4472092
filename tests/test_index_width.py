"""Kernels index in int32 when everything fits and in int64 otherwise (backends/triton/_plan.py
needs_int64): both paths give the same results."""
import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy
from tritensor.backends import triton as tb


def test_needs_int64_boundaries():
    limit = tb.INDEX32_LIMIT
    assert not tb.needs_int64(1000, 128, (10, 100), [(100, 1), (1, 10)])
    assert tb.needs_int64(limit - 100, 128, (limit - 100,), [(1,)])            # the last block's indices
    assert tb.needs_int64(6, 128, (2, 3), [(3, 1), (2 ** 31, 1)])               # a far element offset
    assert not tb.needs_int64(6, 128, (2, 3), [(3, 1), (0, 1)])                 # broadcast: stride 0


@pytest.fixture
def launches(monkeypatch):
    """The WIDE flag of every elementwise/copy/fill launch."""
    seen = []
    run = tb._run

    def spy(kernel, grid, *args, **meta):
        if "WIDE" in meta:
            seen.append(meta["WIDE"])
        return run(kernel, grid, *args, **meta)
    monkeypatch.setattr(tb, "_run", spy)
    return seen


def _ops(device):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((9, 31)).astype(np.float32)
    b = rng.standard_normal((31,)).astype(np.float32)
    x, y = tt.tensor(a, device=device), tt.tensor(b, device=device)
    out = tt.empty(9, 31, device=device)
    out.fill_(2.5)
    return [(x.t() + y[:9, None].t()).exp(), tt.where(x > 0, x, y), x.t().contiguous(), out.t()], \
        [np.exp(a.T + b[:9, None].T), np.where(a > 0, a, b), a.T, np.full((31, 9), 2.5, np.float32)]


@pytest.mark.parametrize("limit", ["int32", "int64"])
def test_both_index_widths_agree(limit, launches, monkeypatch):
    if limit == "int64":
        monkeypatch.setattr(tb, "INDEX32_LIMIT", 100)   # force the wide path on small tensors
    got, expected = _ops("cuda")
    for g, e in zip(got, expected):
        np.testing.assert_allclose(to_numpy(g), e, rtol=1e-6)
    assert launches and all(w is (limit == "int64") for w in launches)
