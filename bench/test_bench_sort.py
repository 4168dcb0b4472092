"""pytest-benchmark suite of sort and topk (issue 21, item 13):
`pytest bench/test_bench_sort.py --benchmark-enable -n 0`.

float32 values along the last dim: one long row (2**20) and many short rows (4096 x 256), sorted
(values and int64 indices) and their top 16. tritensor's cpu device (backends/numpy_sort.py)
against torch's CPU where torch is importable, in the same run, both on one thread (torch pinned
with set_num_threads(1); NumPy sorts on one core). Target: at most 2x torch's time. On a real GPU
the same cases run on cuda (kernels/sort.py: tile sorts and merge passes) next to torch.cuda
(target: at least torch's throughput); on the emulated device the cuda cases shrink to a smoke
check. Each case reports GB/s over the bytes the op must move: the values read once, values and
indices written once (``extra_info["GB/s"]``). The groups put the implementations side by side.
"""
import numpy as np
import pytest

import tritensor as tt

REAL = tt.cuda.is_available() and not tt.cuda.is_emulated()
CASES = ((1, 1 << 20), (4096, 256))
K = 16


def _data(rows, n):
    return np.random.default_rng(rows + n).standard_normal((rows, n)).astype(np.float32)


def _bytes(op, rows, n):
    written = n if op == "sort" else K
    return rows * (n * 4 + written * (4 + 8))


def _tritensor(op, x, device):
    t = tt.tensor(x, device=device)
    return (lambda: tt.sort(t, -1)) if op == "sort" else (lambda: tt.topk(t, K, -1))


def _torch(op, x, device):
    torch = pytest.importorskip("torch")
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    torch.set_num_threads(1)
    t = torch.tensor(x, device=device)
    return (lambda: torch.sort(t, -1)) if op == "sort" else (lambda: torch.topk(t, K, -1))


def _run(benchmark, op, rows, n, impl, device, sync=None, rounds=10):
    x = _data(rows, n)
    fn = (_tritensor if impl == "tritensor" else _torch)(op, x, device)

    def call():
        out = fn()
        if sync is not None:
            sync()
        return out
    benchmark.group = f"{op} {device} {rows} x {n} float32"
    values, indices = benchmark.pedantic(call, rounds=rounds, warmup_rounds=1 if rounds > 1 else 0)
    assert tuple(indices.shape) == (rows, n if op == "sort" else K)
    if benchmark.stats is not None:       # (--benchmark-disable: one plain call, no timing)
        benchmark.extra_info["GB/s"] = round(_bytes(op, rows, n) / benchmark.stats.stats.median / 1e9, 3)


@pytest.mark.parametrize("impl", ("tritensor", "torch"))
@pytest.mark.parametrize("op", ("sort", "topk"))
@pytest.mark.parametrize("rows,n", CASES)
def test_sort_cpu(benchmark, rows, n, op, impl):
    _run(benchmark, op, rows, n, impl, "cpu")


@pytest.mark.parametrize("impl", ("tritensor", "torch"))
@pytest.mark.parametrize("op", ("sort", "topk"))
@pytest.mark.parametrize("rows,n", CASES)
def test_sort_gpu(benchmark, rows, n, op, impl):
    if not REAL:
        if impl != "tritensor":
            pytest.skip("peers are timed on a real GPU only")
        rows, n = 2, 300          # the emulated device: a smoke check of the same launches
    sync = tt.cuda.synchronize if impl == "tritensor" else __import__("torch").cuda.synchronize
    _run(benchmark, op, rows, n, impl, "cuda", sync, rounds=20 if REAL else 1)
