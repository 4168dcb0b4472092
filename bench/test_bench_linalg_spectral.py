"""pytest-benchmark suite of batched eigh and svd (issue 21, item 6):
`OPENBLAS_NUM_THREADS=1 pytest bench/test_bench_linalg_spectral.py --benchmark-enable`.

Batches of float32 matrices, 4096 x 8x8 and 256 x 32x32 (symmetric for eigh), and one 256 x 256
(the block Jacobi path on cuda): tritensor against torch (where torch is importable, in the same
run; torch pinned to one thread on the CPU as NumPy's BLAS is by the command). On the cpu device
both are LAPACK (syevd / gesdd); on a real GPU tritensor's Jacobi kernels (one Triton program
per matrix; block Jacobi through tl.dot past 32 rows) run next to torch.cuda's cuSOLVER (syevj
batched / gesvdj); on the emulated device the cuda cases shrink to a smoke check.
"""
import numpy as np
import pytest

import tritensor as tt

REAL = tt.cuda.is_available() and not tt.cuda.is_emulated()
CASES = ((4096, 8), (256, 32), (1, 256))
OPS = ("eigh", "svd")


def _data(batch, n):
    rng = np.random.default_rng(batch * 1000 + n)
    a = rng.standard_normal((batch, n, n)).astype(np.float32)
    return (a + np.swapaxes(a, -1, -2)) / 2


def _call(module, op, A):
    if op == "eigh":
        return lambda: module.linalg.eigh(A)
    return lambda: module.linalg.svd(A, full_matrices=False)


def _make(impl, op, A, device):
    if impl == "tritensor":
        return _call(tt, op, tt.tensor(A, device=device)), tt.cuda.synchronize
    torch = pytest.importorskip("torch")
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    torch.set_num_threads(1)
    return _call(torch, op, torch.tensor(A, device=device)), torch.cuda.synchronize


def _check(out, A, op):
    w = out[0] if op == "eigh" else out[1]
    assert tuple(w.shape) == A.shape[:-1]


@pytest.mark.parametrize("impl", ("tritensor", "torch"))
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("batch,n", CASES)
def test_spectral_cpu(benchmark, batch, n, op, impl):
    A = _data(batch, n)
    fn, _ = _make(impl, op, A, "cpu")
    benchmark.group = f"{op} cpu {batch} x {n}x{n} float32"
    _check(benchmark.pedantic(fn, rounds=10, warmup_rounds=1), A, op)


@pytest.mark.parametrize("impl", ("tritensor", "torch"))
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("batch,n", CASES)
def test_spectral_gpu(benchmark, batch, n, op, impl):
    if not REAL:
        if impl != "tritensor" or n > 32:
            pytest.skip("peers and large matrices are timed on a real GPU only")
        batch = 2                 # the emulated device: a smoke check of the same launches
    A = _data(batch, n)
    fn, sync = _make(impl, op, A, "cuda")

    def run():
        out = fn()
        sync()
        return out
    benchmark.group = f"{op} cuda {batch} x {n}x{n} float32"
    _check(benchmark.pedantic(run, rounds=10 if REAL else 1, warmup_rounds=1 if REAL else 0), A, op)
