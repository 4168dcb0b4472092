"""pytest-benchmark suite of pdist (issue 15): `pytest bench/test_bench_pdist.py --benchmark-enable`.

On a GPU: N in {1024, 4096, 16384}, D = 128, forward and forward+backward of pdist and of the
uniformity loss, for tritensor and (where importable) torch.pdist, torch.cdist and the matmul
formulation in torch, in the same run (benchmark groups put them side by side). On the emulated
device the sizes shrink to a smoke check. The cpu case is issue 15's item 7: the uniformity loss
forward+backward at N = 4096, D = 128 on the cpu device against torch's CPU pdist.
`python -m bench.pdist_report` prints the same comparisons as a table of ratios.
"""
import pytest

import tritensor as tt

from .pdist_report import PEERS, torch_fns, tritensor_fns, unit_rows

REAL = tt.cuda.is_available() and not tt.cuda.is_emulated()
SIZES = (1024, 4096, 16384) if REAL else (16, 40)
D = 128 if REAL else 8
KEYS = [("pdist", "forward"), ("pdist", "forward+backward"), ("uniformity", "forward"),
        ("uniformity", "forward+backward")]
IMPLS = ("tritensor",) + PEERS


def _sync(impl):
    if impl == "tritensor":
        return tt.cuda.synchronize
    import torch
    return torch.cuda.synchronize


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("key", KEYS, ids=lambda k: f"{k[0]}-{k[1]}")
@pytest.mark.parametrize("n", SIZES)
def test_pdist_gpu(benchmark, n, key, impl):
    host = unit_rows(n, D)
    if impl == "tritensor":
        fn = tritensor_fns(host, "cuda")[key]
    else:
        if not REAL:
            pytest.skip("peers are timed on a real GPU only")
        torch = pytest.importorskip("torch")
        if not torch.cuda.is_available():
            pytest.skip("torch has no CUDA here")
        fn = torch_fns(torch, host, "cuda", impl)[key]
    sync = _sync(impl)
    benchmark.group = f"pdist N={n} D={D} {key[0]} {key[1]}"

    def run():
        out = fn()
        sync()
        return out

    out = benchmark.pedantic(run, rounds=10 if REAL else 1, warmup_rounds=2 if REAL else 0)
    assert out is not None


@pytest.mark.parametrize("impl", ("tritensor", "torch.pdist", "matmul"))
def test_uniformity_loss_cpu(benchmark, impl):
    """Item 7: the cpu device's blocked NumPy reference against torch's CPU pdist (same run)."""
    n = 4096 if impl != "tritensor" or _torch_importable() else 256
    host = unit_rows(n, 128)
    if impl == "tritensor":
        fn = tritensor_fns(host, "cpu")[("uniformity", "forward+backward")]
    else:
        torch = pytest.importorskip("torch")
        fn = torch_fns(torch, host, "cpu", impl)[("uniformity", "forward+backward")]
    benchmark.group = f"uniformity loss cpu N={n} D=128 forward+backward"
    loss = benchmark.pedantic(fn, rounds=3, warmup_rounds=1)
    assert loss.item() < 0


def _torch_importable():
    try:
        import torch  # noqa: F401
        return True
    except Exception:
        return False
