"""pytest-benchmark suite of scaled dot-product attention (issue 24 item 6):
`pytest bench/test_bench_attention.py --benchmark-enable -n 0`.

- GPU (a real one only): forward and forward+backward of F.scaled_dot_product_attention at
  L = S = 512 .. 8192, head dims 64 and 128, causal and not, float16, against torch's SDPA with
  the flash backend in the same run (benchmark groups put them side by side; extra_info holds
  the TFLOP/s: 4 B H L S E flops forward, 2.5x that for the backward, halved when causal). On the
  emulated device the sizes shrink to a smoke run of tritensor's kernels.
- cpu: the blockwise NumPy reference against torch's cpu SDPA (one thread each) in the same run.
- peak memory (emulated cuda, the caching allocator's max_memory_allocated): the flash path
  against the math formulation (sdpa_kernel(MATH), the L x S scores in memory), to show the O(L)
  memory of the flash kernels.
"""
import numpy as np
import pytest

import tritensor as tt

F = tt.nn.functional
REAL = tt.cuda.is_available() and not tt.cuda.is_emulated()
LENGTHS = (512, 1024, 2048, 4096, 8192) if REAL else (32,)
HEADS = (64, 128) if REAL else (16,)
BATCH_HEADS = (4, 16) if REAL else (1, 2)     # (batch, heads): 64 programs per query block at least


def _flops(L, S, E, causal, backward):
    B, H = BATCH_HEADS
    f = 4.0 * B * H * L * S * E * (3.5 if backward else 1.0)
    return f / 2 if causal else f


def _inputs(lib, device, L, E, dtype, grad):
    rng = np.random.default_rng(0)
    B, H = BATCH_HEADS
    arrays = [rng.standard_normal((B, H, L, E)).astype(np.float32) for _ in range(3)]
    if lib is tt:
        return [tt.tensor(a, dtype=dtype, device=device, requires_grad=grad) for a in arrays]
    return [lib.tensor(a, dtype=dtype, device=device, requires_grad=grad) for a in arrays]


@pytest.mark.parametrize("impl", ("tritensor", "torch-flash"))
@pytest.mark.parametrize("backward", (False, True), ids=("forward", "forward+backward"))
@pytest.mark.parametrize("causal", (False, True), ids=("full", "causal"))
@pytest.mark.parametrize("E", HEADS)
@pytest.mark.parametrize("L", LENGTHS)
def test_attention_gpu(benchmark, L, E, causal, backward, impl):
    if impl == "tritensor":
        lib, sync = tt, tt.cuda.synchronize
        q, k, v = _inputs(tt, "cuda", L, E, tt.float16, backward)
        sdpa = F.scaled_dot_product_attention
        ctx = None
    else:
        if not REAL:
            pytest.skip("torch's flash backend is timed on a real GPU only")
        torch = pytest.importorskip("torch")
        if not torch.cuda.is_available():
            pytest.skip("torch has no CUDA here")
        from torch.nn.attention import SDPBackend, sdpa_kernel
        lib, sync = torch, torch.cuda.synchronize
        q, k, v = _inputs(torch, "cuda", L, E, torch.float16, backward)
        sdpa = torch.nn.functional.scaled_dot_product_attention
        ctx = lambda: sdpa_kernel(SDPBackend.FLASH_ATTENTION)  # noqa: E731

    def step():
        out = sdpa(q, k, v, is_causal=causal)
        if backward:
            out.backward(lib.ones_like(out))
        return out

    def run():
        if ctx is None:
            out = step()
        else:
            with ctx():
                out = step()
        sync()
        return out

    benchmark.group = f"attention L={L} E={E} {'causal' if causal else 'full'} {'fwd+bwd' if backward else 'fwd'}"
    out = benchmark.pedantic(run, rounds=10 if REAL else 1, warmup_rounds=2 if REAL else 0)
    assert tuple(out.shape) == (*BATCH_HEADS, L, E)
    if REAL:
        benchmark.extra_info["tflops"] = _flops(L, L, E, causal, backward) / benchmark.stats["min"] / 1e12


CPU_CASES = [(1024, 64, False), (1024, 64, True), (1024, 128, False)]


@pytest.mark.parametrize("impl", ("tritensor", "torch"))
@pytest.mark.parametrize("backward", (False, True), ids=("forward", "forward+backward"))
@pytest.mark.parametrize("case", CPU_CASES, ids=lambda c: f"L{c[0]}-E{c[1]}-{'causal' if c[2] else 'full'}")
def test_attention_cpu(benchmark, case, backward, impl):
    """The cpu device's blockwise NumPy reference against torch's cpu SDPA, one thread each
    (run with OPENBLAS_NUM_THREADS=1; torch.set_num_threads(1) here)."""
    L, E, causal = case
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((1, 4, L, E)).astype(np.float32) for _ in range(3)]
    if impl == "tritensor":
        q, k, v = (tt.tensor(a, requires_grad=backward) for a in arrays)
        sdpa = F.scaled_dot_product_attention
    else:
        torch = pytest.importorskip("torch")
        torch.set_num_threads(1)
        q, k, v = (torch.tensor(a, requires_grad=backward) for a in arrays)
        sdpa = torch.nn.functional.scaled_dot_product_attention

    def run():
        out = sdpa(q, k, v, is_causal=causal)
        if backward:
            out.sum().backward()
        return out

    benchmark.group = f"attention cpu L={L} E={E} {'causal' if causal else 'full'} {'fwd+bwd' if backward else 'fwd'}"
    out = benchmark.pedantic(run, rounds=5, warmup_rounds=1)
    assert tuple(out.shape) == (1, 4, L, E)


@pytest.mark.emulated_blocks("fast")
@pytest.mark.parametrize("path", ("flash", "math"))
def test_attention_peak_memory(benchmark, path):
    """Peak allocator bytes of one forward+backward at L = S = 256, E = 16 (float32; small, since
    the emulated device interprets every program): the flash path holds O(L) beyond its inputs
    (out, lse, delta, the inputs' gradients), the math formulation the L x S scores and weights."""
    if not tt.cuda.is_available():
        pytest.skip("needs the cuda device (real or emulated) for allocator statistics")
    from tritensor.nn.attention import SDPBackend, sdpa_kernel
    L, E = 256, 16
    rng = np.random.default_rng(2)
    q, k, v = (tt.tensor(rng.standard_normal((1, 1, L, E)), dtype=tt.float32, device="cuda", requires_grad=True)
               for _ in range(3))
    backend = SDPBackend.FLASH_ATTENTION if path == "flash" else SDPBackend.MATH

    def run():
        tt.cuda.synchronize()
        tt.cuda.reset_peak_memory_stats()
        base = tt.cuda.memory_allocated()
        with sdpa_kernel(backend):
            out = F.scaled_dot_product_attention(q, k, v)
            out.sum().backward()
        tt.cuda.synchronize()
        return tt.cuda.max_memory_allocated() - base

    benchmark.group = "attention peak memory L=S=256 E=16 fwd+bwd"
    peak = benchmark.pedantic(run, rounds=1, warmup_rounds=0)
    benchmark.extra_info["peak_bytes"] = peak
    print(f"\nattention peak memory, {path}: {peak} bytes (one L x S float32 matrix: {L * L * 4})")
    scores = L * L * 4
    if path == "flash":
        assert peak < scores / 2, peak          # O(L E): the inputs' gradients, out, lse, delta
    else:
        assert peak >= scores, peak             # at least one L x S float32 matrix
