"""pytest-benchmark suite of conv2d on the ResNet-18 layer shapes (issue 22, item 8):
`OPENBLAS_NUM_THREADS=1 pytest bench/test_bench_conv.py -k cpu --benchmark-enable -n 0`.

Every distinct convolution of ResNet-18 at 224 x 224 (the 7x7 stem, the 3x3 convolutions of the
four stages with their stride-2 entries, the 1x1 stride-2 downsampling shortcuts), float32, no
bias (ResNet follows each with batch norm), NCHW. Two passes: the forward alone, and forward +
backward (the input's and the weight's gradient for an output gradient of ones).

cpu: tritensor's cpu device (backends/numpy_conv.py) against torch's CPU in the same run, both on
one thread (torch.set_num_threads(1); OPENBLAS_NUM_THREADS=1 for NumPy); target: forward +
backward at most 2x torch's time. On a real GPU the same shapes (batch 32) run on cuda
(kernels/conv.py) next to torch.cuda (cuDNN), float16 and float32 (TF32 as torch's default for
convolutions: torch.backends.cudnn.allow_tf32 is True, so tritensor runs at 'high' precision
there); targets: forward at least 0.8x cuDNN's speed, backward at least 0.7x. On the emulated
device the cuda cases shrink to a smoke check of the same launches. Each case reports TFLOP/s
(``extra_info``): 2 * N * C_out * OH * OW * C_in * kh * kw per pass (x3 for forward + backward).
"""
import numpy as np
import pytest

import tritensor as tt

REAL = tt.cuda.is_available() and not tt.cuda.is_emulated()

# (C_in, C_out, H (= W) of the input, kernel, stride, padding): ResNet-18's distinct convolutions
RESNET18 = [
    (3, 64, 224, 7, 2, 3),                                   # stem
    (64, 64, 56, 3, 1, 1),                                   # layer1 (x4)
    (64, 128, 56, 3, 2, 1), (128, 128, 28, 3, 1, 1), (64, 128, 56, 1, 2, 0),       # layer2
    (128, 256, 28, 3, 2, 1), (256, 256, 14, 3, 1, 1), (128, 256, 28, 1, 2, 0),     # layer3
    (256, 512, 14, 3, 2, 1), (512, 512, 7, 3, 1, 1), (256, 512, 14, 1, 2, 0),      # layer4
]
IDS = [f"{ci}-{co}-{h}-k{k}s{s}" for ci, co, h, k, s, _ in RESNET18]
CPU_BATCH, GPU_BATCH = 2, 32


def _flops(batch, ci, co, h, k, s, p):
    o = (h + 2 * p - k) // s + 1
    return 2 * batch * co * o * o * ci * k * k


def _data(batch, ci, co, h, k):
    rng = np.random.default_rng(ci * 1000 + co + h + k)
    return (rng.standard_normal((batch, ci, h, h)).astype(np.float32),
            (rng.standard_normal((co, ci, k, k)) / np.sqrt(ci * k * k)).astype(np.float32))


def _tritensor(x, w, s, p, device, dtype, backward):
    xt = tt.tensor(x, device=device, dtype=dtype, requires_grad=backward)
    wt = tt.tensor(w, device=device, dtype=dtype, requires_grad=backward)

    def run():
        y = tt.nn.functional.conv2d(xt, wt, stride=s, padding=p)
        if backward:
            return tt.autograd.grad(y, (xt, wt), tt.ones_like(y))
        return y
    return run


def _torch(x, w, s, p, device, dtype, backward):
    torch = pytest.importorskip("torch")
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    torch.set_num_threads(1)
    tdtype = getattr(torch, dtype.name)
    xt = torch.tensor(x, device=device, dtype=tdtype, requires_grad=backward)
    wt = torch.tensor(w, device=device, dtype=tdtype, requires_grad=backward)

    def run():
        y = torch.nn.functional.conv2d(xt, wt, stride=s, padding=p)
        if backward:
            return torch.autograd.grad(y, (xt, wt), torch.ones_like(y))
        return y
    return run


def _run(benchmark, shape, impl, device, dtype, backward, batch, sync=None, rounds=5):
    ci, co, h, k, s, p = shape
    x, w = _data(batch, ci, co, h, k)
    fn = (_tritensor if impl == "tritensor" else _torch)(x, w, s, p, device, dtype, backward)

    def call():
        out = fn()
        if sync is not None:
            sync()
        return out
    benchmark.group = f"conv2d {'fwd+bwd' if backward else 'fwd'} {device} {dtype.name} {batch}x{ci}x{h}x{h} -> {co}, k{k} s{s}"
    benchmark.pedantic(call, rounds=rounds, warmup_rounds=1 if rounds > 1 else 0)
    if benchmark.stats is not None:       # (--benchmark-disable: one plain call, no timing)
        flops = _flops(batch, ci, co, h, k, s, p) * (3 if backward else 1)
        benchmark.extra_info["TFLOP/s"] = round(flops / benchmark.stats.stats.min / 1e12, 4)


@pytest.mark.parametrize("impl", ("tritensor", "torch"))
@pytest.mark.parametrize("backward", (False, True), ids=("fwd", "fwd+bwd"))
@pytest.mark.parametrize("shape", RESNET18, ids=IDS)
def test_conv2d_cpu(benchmark, shape, backward, impl):
    _run(benchmark, shape, impl, "cpu", tt.float32, backward, CPU_BATCH)


@pytest.mark.parametrize("impl", ("tritensor", "torch"))
@pytest.mark.parametrize("dtype", (tt.float16, tt.float32), ids=str)
@pytest.mark.parametrize("backward", (False, True), ids=("fwd", "fwd+bwd"))
@pytest.mark.parametrize("shape", RESNET18, ids=IDS)
def test_conv2d_gpu(benchmark, shape, backward, dtype, impl):
    if not REAL:
        if impl != "tritensor" or shape is not RESNET18[2] or dtype is not tt.float32:
            pytest.skip("peers and the full set are timed on a real GPU only")
        ci, co, h, k, s, p = shape
        shape = (2, 3, 9, k, s, p)     # the emulated device: a smoke check of the same launches
    torch = __import__("torch") if impl == "torch" else None
    if torch is not None:
        torch.backends.cudnn.allow_tf32 = True      # torch's default for convolutions
    previous = tt.get_float32_matmul_precision()
    tt.set_float32_matmul_precision("high")         # TF32, as cuDNN under torch's default
    try:
        sync = tt.cuda.synchronize if impl == "tritensor" else torch.cuda.synchronize
        _run(benchmark, shape, impl, "cuda", dtype, backward, GPU_BATCH if REAL else 1, sync,
             rounds=20 if REAL else 1)
    finally:
        tt.set_float32_matmul_precision(previous)
