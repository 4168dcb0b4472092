"""pytest-benchmark suite of batched small-matrix solve and cholesky (issue 21, item 13):
`OPENBLAS_NUM_THREADS=1 pytest bench/test_bench_linalg.py --benchmark-enable`.

Batches of SPD float32 matrices, 4096 x 8x8 and 256 x 32x32 (one right-hand side for solve):
tritensor's cpu device against torch's CPU (where torch is importable, in the same run; torch
pinned to one thread as NumPy's BLAS is by the command, so both use one core). On a real GPU
the same cases run on cuda (one Triton program per matrix) next to torch.cuda where it has
CUDA; on the emulated device the cuda cases shrink to a smoke check (each program is
interpreted Python). The benchmark groups put the implementations of a case side by side.
"""
import numpy as np
import pytest

import tritensor as tt

REAL = tt.cuda.is_available() and not tt.cuda.is_emulated()
CASES = ((4096, 8), (256, 32))
OPS = ("cholesky", "solve")


def _data(batch, n):
    rng = np.random.default_rng(batch * 1000 + n)
    a = rng.standard_normal((batch, n, n)).astype(np.float32)
    spd = a @ np.swapaxes(a, -1, -2) + n * np.eye(n, dtype=np.float32)
    return spd, rng.standard_normal((batch, n, 1)).astype(np.float32)


def _tritensor(op, A, B, device):
    A, B = tt.tensor(A, device=device), tt.tensor(B, device=device)
    if op == "cholesky":
        return lambda: tt.linalg.cholesky(A)
    return lambda: tt.linalg.solve(A, B)


def _torch(op, A, B, device):
    torch = pytest.importorskip("torch")
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    torch.set_num_threads(1)
    A, B = torch.tensor(A, device=device), torch.tensor(B, device=device)
    if op == "cholesky":
        return lambda: torch.linalg.cholesky(A)
    return lambda: torch.linalg.solve(A, B)


@pytest.mark.parametrize("impl", ("tritensor", "torch"))
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("batch,n", CASES)
def test_linalg_cpu(benchmark, batch, n, op, impl):
    A, B = _data(batch, n)
    fn = (_tritensor if impl == "tritensor" else _torch)(op, A, B, "cpu")
    benchmark.group = f"{op} cpu {batch} x {n}x{n} float32"
    out = benchmark.pedantic(fn, rounds=20, warmup_rounds=2)
    assert tuple(out.shape) == ((batch, n, n) if op == "cholesky" else (batch, n, 1))


@pytest.mark.parametrize("impl", ("tritensor", "torch"))
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("batch,n", CASES)
def test_linalg_gpu(benchmark, batch, n, op, impl):
    if not REAL:
        if impl != "tritensor":
            pytest.skip("peers are timed on a real GPU only")
        batch = 4                 # the emulated device: a smoke check of the same launches
    A, B = _data(batch, n)
    fn = (_tritensor if impl == "tritensor" else _torch)(op, A, B, "cuda")
    sync = tt.cuda.synchronize if impl == "tritensor" else __import__("torch").cuda.synchronize

    def run():
        out = fn()
        sync()
        return out
    benchmark.group = f"{op} cuda {batch} x {n}x{n} float32"
    out = benchmark.pedantic(run, rounds=20 if REAL else 1, warmup_rounds=2 if REAL else 0)
    assert tuple(out.shape) == ((batch, n, n) if op == "cholesky" else (batch, n, 1))
