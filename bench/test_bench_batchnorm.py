"""pytest-benchmark suite of batch norm in GB/s on ResNet-18's batch-norm shapes (issue 22, item 8):
`OPENBLAS_NUM_THREADS=1 pytest bench/test_bench_batchnorm.py -k cpu --benchmark-enable -n 0`.

BatchNorm2d in training mode (batch statistics, running statistics updated, affine) on the
activations of ResNet-18 at 224 x 224: 64 x 112 x 112 (after the stem), 64 x 56 x 56, 128 x 28 x 28,
256 x 14 x 14, 512 x 7 x 7, float32 NCHW. Two passes: the forward alone, and forward + backward
(the input's, the weight's and the bias's gradient for a given output gradient).

GB/s counts the least traffic each pass needs, as memory-bound kernels are measured: the forward
reads x and writes y (2 x numel x itemsize); forward + backward adds the backward's reads of x and
of the output gradient and its write of the input gradient (5 x numel x itemsize in all). A fused
implementation reads x twice in the forward (moments, then the affine pass): the figure is then at
most 2/3 of the bandwidth it actually uses, which is the honest way to compare.

cpu: tritensor's cpu device (backends/numpy_nn.py) against torch's CPU in the same run, one thread
each. On a real GPU the same shapes at batch 32 run on cuda (kernels/norm.py) next to torch.cuda
(cuDNN's batch norm), float32 and float16; target: at least 85 % of the GPU's memory bandwidth. On
the emulated device the cuda case shrinks to a smoke check of the same launches.
"""
import numpy as np
import pytest

import tritensor as tt

REAL = tt.cuda.is_available() and not tt.cuda.is_emulated()

# (C, H (= W)): the activations ResNet-18 normalises
RESNET18 = [(64, 112), (64, 56), (128, 28), (256, 14), (512, 7)]
IDS = [f"{c}x{h}x{h}" for c, h in RESNET18]
CPU_BATCH, GPU_BATCH = 8, 32


def _data(batch, c, h):
    rng = np.random.default_rng(c + h)
    return (rng.standard_normal((batch, c, h, h)).astype(np.float32),
            rng.standard_normal((batch, c, h, h)).astype(np.float32))


def _tritensor(x, g, device, dtype, backward):
    bn = tt.nn.BatchNorm2d(x.shape[1]).to(device)
    xt = tt.tensor(x, device=device, dtype=dtype, requires_grad=backward)
    gt = tt.tensor(g, device=device, dtype=dtype)
    params = (xt, bn.weight, bn.bias)

    def run():
        y = bn(xt)
        if backward:
            return tt.autograd.grad(y, params, gt)
        return y
    return run


def _torch(x, g, device, dtype, backward):
    torch = pytest.importorskip("torch")
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    torch.set_num_threads(1)
    tdtype = getattr(torch, dtype.name)
    bn = torch.nn.BatchNorm2d(x.shape[1]).to(device)
    xt = torch.tensor(x, device=device, dtype=tdtype, requires_grad=backward)
    gt = torch.tensor(g, device=device, dtype=tdtype)
    params = (xt, bn.weight, bn.bias)

    def run():
        y = bn(xt)
        if backward:
            return torch.autograd.grad(y, params, gt)
        return y
    return run


def _run(benchmark, shape, impl, device, dtype, backward, batch, sync=None, rounds=5):
    c, h = shape
    x, g = _data(batch, c, h)
    fn = (_tritensor if impl == "tritensor" else _torch)(x, g, device, dtype, backward)

    def call():
        out = fn()
        if sync is not None:
            sync()
        return out
    benchmark.group = f"batch_norm {'fwd+bwd' if backward else 'fwd'} {device} {dtype.name} {batch}x{c}x{h}x{h}"
    benchmark.pedantic(call, rounds=rounds, warmup_rounds=1 if rounds > 1 else 0)
    if benchmark.stats is not None:       # (--benchmark-disable: one plain call, no timing)
        moved = (5 if backward else 2) * x.size * dtype.itemsize
        benchmark.extra_info["GB/s"] = round(moved / benchmark.stats.stats.min / 1e9, 2)


@pytest.mark.parametrize("impl", ("tritensor", "torch"))
@pytest.mark.parametrize("backward", (False, True), ids=("fwd", "fwd+bwd"))
@pytest.mark.parametrize("shape", RESNET18, ids=IDS)
def test_batch_norm_cpu(benchmark, shape, backward, impl):
    _run(benchmark, shape, impl, "cpu", tt.float32, backward, CPU_BATCH)


@pytest.mark.parametrize("impl", ("tritensor", "torch"))
@pytest.mark.parametrize("dtype", (tt.float16, tt.float32), ids=str)
@pytest.mark.parametrize("backward", (False, True), ids=("fwd", "fwd+bwd"))
@pytest.mark.parametrize("shape", RESNET18, ids=IDS)
def test_batch_norm_gpu(benchmark, shape, backward, dtype, impl):
    if not REAL:
        if impl != "tritensor" or shape is not RESNET18[1] or dtype is not tt.float32:
            pytest.skip("peers and the full set are timed on a real GPU only")
        shape = (3, 9)                 # the emulated device: a smoke check of the same launches
    torch = __import__("torch") if impl == "torch" else None
    sync = tt.cuda.synchronize if impl == "tritensor" else torch.cuda.synchronize
    _run(benchmark, shape, impl, "cuda", dtype, backward, GPU_BATCH if REAL else 2, sync,
         rounds=20 if REAL else 1)
