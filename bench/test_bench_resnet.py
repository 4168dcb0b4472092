"""pytest-benchmark of a ResNet-18 training step (issue 22, item 8):
`OPENBLAS_NUM_THREADS=1 pytest bench/test_bench_resnet.py -k cpu --benchmark-enable -n 0`.

One whole step of tritensor.vision.models.resnet18 in training mode: forward (batch statistics,
running statistics updated), CrossEntropyLoss, backward, SGD with momentum; torch runs the same
step on torchvision's ResNet-18 (written out with torch.nn in tests/data/make_resnet_values.py,
as the test environment has no torchvision) from the same weights and batch. Images 224 x 224,
1000 classes, float32 NCHW.

cpu: batch 2, one thread each (torch.set_num_threads(1); OPENBLAS_NUM_THREADS=1 for NumPy), in
the same run. On a real GPU: batch 32 on cuda next to torch.cuda (cuDNN under torch's default
TF32 convolutions, so tritensor runs at 'high' float32 matmul precision). On the emulated device
the cuda case is a smoke check of the launches a step makes: one training step of a single
downsampling BasicBlock (16 -> 32 channels, stride 2) with the pooling and classifier head, on
2 x 16 x 8 x 8 (a whole ResNet-18, 64-512 channels, takes many minutes under Triton's interpreter).
"""
import importlib.util
import os

import numpy as np
import pytest

import tritensor as tt
from tritensor.vision import models

REAL = tt.cuda.is_available() and not tt.cuda.is_emulated()
CPU_BATCH, GPU_BATCH, SIZE = 2, 32, 224


def _torch_resnet_module():
    path = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "make_resnet_values.py")
    spec = importlib.util.spec_from_file_location("make_resnet_values", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _weights(model):
    """One seeded state_dict for both libraries (He-scaled, as make_resnet_values.py's)."""
    rng = np.random.default_rng(18)
    out = {}
    for k, v in model.state_dict().items():
        shape = tuple(v.shape)
        if k.endswith("num_batches_tracked"):
            out[k] = np.array(0, dtype=np.int64)
        elif k.endswith("running_var") or (k.endswith("weight") and len(shape) == 1):
            out[k] = np.ones(shape, np.float32)
        elif k.endswith("bias") or k.endswith("running_mean"):
            out[k] = np.zeros(shape, np.float32)
        else:
            out[k] = (rng.standard_normal(shape) * np.sqrt(2.0 / np.prod(shape[1:]))).astype(np.float32)
    return out


def _batch(n, size, classes, channels=3):
    rng = np.random.default_rng(1)
    return rng.standard_normal((n, channels, size, size)).astype(np.float32), rng.integers(0, classes, n)


def _tritensor(device, batch, size):
    model = models.resnet18()
    model.load_state_dict({k: tt.from_numpy(v) for k, v in _weights(model).items()})
    return _step(model, device, batch, size, 3, 1000)


def _step(model, device, batch, size, channels, classes):
    model.to(device).train()
    opt = tt.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = _batch(batch, size, classes, channels)
    x, y = tt.tensor(x, device=device), tt.tensor(y, device=device)
    loss_fn = tt.nn.CrossEntropyLoss()

    def step():
        loss = loss_fn(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    return step


def _smoke_model():
    nn = tt.nn
    block = models.BasicBlock(16, 32, stride=2, downsample=nn.Sequential(
        nn.Conv2d(16, 32, 1, stride=2, bias=False), nn.BatchNorm2d(32)))
    return nn.Sequential(block, nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(32, 10))


def _torch(device, batch, size):
    torch = pytest.importorskip("torch")
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    torch.set_num_threads(1)
    torch.backends.cudnn.allow_tf32 = True
    ref = _torch_resnet_module()
    model = ref.ResNet(ref.BasicBlock, [2, 2, 2, 2])
    model.load_state_dict({k: torch.from_numpy(v) for k, v in _weights(model).items()})
    model.to(device).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = _batch(batch, size, 1000)
    x, y = torch.tensor(x, device=device), torch.tensor(y, device=device)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        loss = loss_fn(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    return step


def _run(benchmark, step, group, batch, sync=None, rounds=3):
    def call():
        out = step()
        if sync is not None:
            sync()
        return out
    benchmark.group = group
    benchmark.pedantic(call, rounds=rounds, warmup_rounds=1 if rounds > 1 else 0)
    if benchmark.stats is not None:
        benchmark.extra_info["images/s"] = round(batch / benchmark.stats.stats.min, 2)


@pytest.mark.parametrize("impl", ("tritensor", "torch"))
def test_resnet18_training_step_cpu(benchmark, impl):
    step = (_tritensor if impl == "tritensor" else _torch)("cpu", CPU_BATCH, SIZE)
    _run(benchmark, step, f"resnet18 step cpu {CPU_BATCH}x3x{SIZE}x{SIZE}", CPU_BATCH)


@pytest.mark.parametrize("impl", ("tritensor", "torch"))
def test_resnet18_training_step_gpu(benchmark, impl):
    if not REAL:
        if impl != "tritensor":
            pytest.skip("torch is timed on a real GPU only")
        step = _step(_smoke_model(), "cuda", 2, 8, 16, 10)       # a smoke check of the launches
        _run(benchmark, step, "resnet smoke (emulated cuda)", 2, rounds=1)
        return
    torch = __import__("torch") if impl == "torch" else None
    previous = tt.get_float32_matmul_precision()
    tt.set_float32_matmul_precision("high")         # TF32, as cuDNN under torch's default
    try:
        step = (_tritensor if impl == "tritensor" else _torch)("cuda", GPU_BATCH, SIZE)
        sync = tt.cuda.synchronize if impl == "tritensor" else torch.cuda.synchronize
        _run(benchmark, step, f"resnet18 step cuda {GPU_BATCH}x3x{SIZE}x{SIZE}", GPU_BATCH, sync, rounds=10)
    finally:
        tt.set_float32_matmul_precision(previous)
