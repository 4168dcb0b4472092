"""pytest-benchmark suite of the sparse CSR products: `pytest bench/test_bench_sparse.py
--benchmark-enable -n 0`.

Two ops on a random float32 CSR matrix S (M x K at a given density): CSR @ dense (``S @ D``, D of
K x N; kernels/sparse.py's spmm_kernel on cuda) and torch.sparse.sampled_addmm (``A @ B`` read at
S's entries, A of M x R and B of R x K; sampled_dot_kernel). Each is timed four ways in the same
run: tritensor's CSR op; tritensor's dense counterpart (``S.to_dense() @ D``; ``(A @ B) * mask``),
which the sparse op must beat at low density; torch's CSR op and torch's dense counterpart where
torch is importable (on cpu pinned to one thread, as NumPy's BLAS: run with OPENBLAS_NUM_THREADS=1).
Each case reports GFLOP/s over the products the sparse op needs (2 * nnz * N, 2 * nnz * R) in
``extra_info``; the groups put the four side by side.

On a real GPU the cuda cases run at GPU sizes next to torch.cuda (cuSPARSE); on the emulated device
the cuda cases shrink to a smoke check of the same launches (tritensor only, one round).
"""
import numpy as np
import pytest

import tritensor as tt

REAL = tt.cuda.is_available() and not tt.cuda.is_emulated()
CPU_CASES = ((2048, 2048, 64, 0.01),)                        # M, K, N (or R), density
GPU_CASES = ((16384, 16384, 256, 0.001), (8192, 8192, 128, 0.02))
SMOKE = ((40, 36, 20, 0.2),)                                 # the emulated device
IMPLS = ("tritensor-csr", "tritensor-dense", "torch-csr", "torch-dense")


def _arrays(M, K, N, density):
    rng = np.random.default_rng(M + K + N)
    s = np.where(rng.random((M, K)) < density, rng.standard_normal((M, K)), 0).astype(np.float32)
    return s, rng.standard_normal((K, N)).astype(np.float32), rng.standard_normal((M, N)).astype(np.float32), \
        rng.standard_normal((N, K)).astype(np.float32)


def _calls(m, op, impl, arrays, device):
    """The timed call of ``impl`` (module ``m``: tritensor or torch)."""
    s, d, a, b = (m.tensor(x, device=device) for x in arrays)
    csr = s.to_sparse_csr()
    mask = (s != 0).to(s.dtype)
    if op == "spmm":
        return (lambda: csr @ d) if impl.endswith("csr") else (lambda: s @ d)
    return (lambda: m.sparse.sampled_addmm(csr, a, b)) if impl.endswith("csr") else (lambda: (a @ b) * mask)


def _run(benchmark, op, case, impl, device, sync=None, rounds=10):
    M, K, N, density = case
    arrays = _arrays(M, K, N, density)
    if impl.startswith("torch"):
        torch = pytest.importorskip("torch")
        if device == "cuda" and not torch.cuda.is_available():
            pytest.skip("torch has no CUDA here")
        torch.set_num_threads(1)
        fn = _calls(torch, op, impl, arrays, device)
        sync = torch.cuda.synchronize if device == "cuda" else None
    else:
        fn = _calls(tt, op, impl, arrays, device)

    def call():
        out = fn()
        if sync is not None:
            sync()
        return out
    benchmark.group = f"{op} {device} {M} x {K} density {density}, {N} columns, float32"
    out = benchmark.pedantic(call, rounds=rounds, warmup_rounds=1 if rounds > 1 else 0)
    assert tuple(out.shape) == ((M, N) if op == "spmm" else (M, K))
    if benchmark.stats is not None:       # (--benchmark-disable: one plain call, no timing)
        nnz = int((arrays[0] != 0).sum())
        benchmark.extra_info["GFLOP/s"] = round(2 * nnz * N / benchmark.stats.stats.min / 1e9, 3)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("op", ("spmm", "sampled"))
@pytest.mark.parametrize("case", CPU_CASES)
def test_sparse_cpu(benchmark, case, op, impl):
    _run(benchmark, op, case, impl, "cpu", rounds=5)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("op", ("spmm", "sampled"))
@pytest.mark.parametrize("case", GPU_CASES if REAL else SMOKE)
def test_sparse_gpu(benchmark, case, op, impl):
    if not REAL and impl.startswith("torch"):
        pytest.skip("peers are timed on a real GPU only")
    _run(benchmark, op, case, impl, "cuda", tt.cuda.synchronize, rounds=20 if REAL else 1)
