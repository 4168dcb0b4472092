"""pytest-benchmark: the seed tutorial's IoU loss (20 pointwise ops), per box and as its mean
(the reduction and its division inside the group), eager vs fused (tt.jit.trace's one generated
kernel; on cpu one pass of NumPy calls into preallocated buffers), and torch eager vs
torch.compile when torch is importable (issue 26 item 6). GPU goal: the fused loss within 1.2x
of one pass over its inputs; measured by a GPU session with
``pytest bench/test_bench_fusion.py -k cuda --benchmark-enable -n 0`` (on the emulated device the
same command is a smoke run over a small N).

``python -m bench.test_bench_fusion`` prints the min times and the ratios in one run.
torch rows: PYTHONPATH=/work/torchenv/lib/python3.11/site-packages OPENBLAS_NUM_THREADS=1."""
from __future__ import annotations


import numpy as np
import pytest

import tritensor as tt

from .timing import min_seconds

N = 1 << 16
REAL = tt.cuda.is_available() and not tt.cuda.is_emulated()
DEVICES = ["cpu"] + (["cuda"] if tt.cuda.is_available() else [])
SIZES = {"cpu": N, "cuda": 1 << 20 if REAL else 1024}     # the emulated device: a smoke run


def _iou(lib, px1, py1, px2, py2, tx1, ty1, tx2, ty2):
    """1 - IoU of boxes (x1, y1, x2, y2), written once for tritensor and torch (same names)."""
    iw = (lib.minimum(px2, tx2) - lib.maximum(px1, tx1)).clamp(min=0)
    ih = (lib.minimum(py2, ty2) - lib.maximum(py1, ty1)).clamp(min=0)
    inter = iw * ih
    union = (px2 - px1) * (py2 - py1) + (tx2 - tx1) * (ty2 - ty1) - inter
    return 1 - inter / (union + 1e-6)


def iou_loss(*boxes):
    return _iou(tt, *boxes)


def iou_mean(*boxes):
    return iou_loss(*boxes).mean()


def torch_iou_loss(*boxes):
    import torch
    return _iou(torch, *boxes)


def torch_iou_mean(*boxes):
    return torch_iou_loss(*boxes).mean()


def columns(n=N):
    rng = np.random.default_rng(0)
    cols = []
    for _ in range(2):
        lo = rng.random((n, 2)).astype(np.float32)
        hi = lo + rng.random((n, 2)).astype(np.float32)
        cols += [lo[:, 0].copy(), lo[:, 1].copy(), hi[:, 0].copy(), hi[:, 1].copy()]
    return cols


def make(mode, device="cpu", n=N, loss="per box"):
    """A zero-argument callable running the loss (``loss``: "per box" or "mean") one way, and
    its result's reader."""
    cols = columns(n)
    if mode.startswith("torch"):
        import torch
        torch.set_num_threads(1)
        args = [torch.from_numpy(c).to(device) for c in cols]
        fn = torch_iou_loss if loss == "per box" else torch_iou_mean
        if mode == "torch.compile":
            fn = torch.compile(fn)
        sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
        return (lambda: (fn(*args), sync())[0]), (lambda t: t.cpu().numpy())
    args = [tt.tensor(c, device=device) for c in cols]
    fn = iou_loss if loss == "per box" else iou_mean
    fn = fn if mode == "eager" else tt.jit.trace(fn, tuple(args))
    sync = tt.cuda.synchronize if device == "cuda" else (lambda: None)
    return (lambda: (fn(*args), sync())[0]), (lambda t: t.cpu().numpy())


MODES = ["eager", "fused", "torch eager", "torch.compile"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("loss", ["per box", "mean"])
def test_iou_loss(benchmark, loss, mode, device):
    n = SIZES[device]
    benchmark.group = f"IoU loss ({loss}), {n} boxes, {device}"
    if mode.startswith("torch"):
        torch = pytest.importorskip("torch")
        if device == "cuda" and not torch.cuda.is_available():
            pytest.skip("torch has no CUDA device here")
    try:
        run, read = make(mode, device, n, loss)
        out = run()
    except Exception as e:          # torch.compile needs a C compiler and its inductor toolchain
        if mode == "torch.compile":
            pytest.skip(f"torch.compile failed here: {type(e).__name__}: {str(e)[:200]}")
        raise
    want, _ = make("eager", "cpu", n, loss)
    np.testing.assert_allclose(read(out), want().numpy(), rtol=1e-5, atol=1e-6)
    benchmark(run)


def min_time(run):
    return min_seconds(run, reps=30, warmup=1)


def test_fused_host_time_below_eager_on_cpu():
    """Issue 26 item 5: one fused call's host time on cpu is below the eager chain's (min of
    30 runs each, measured in one run; small tensors, so host overhead dominates)."""
    eager, _ = make("eager", "cpu", n=64)
    fused, _ = make("fused", "cpu", n=64)
    assert min_time(fused) < min_time(eager)


def main():
    rows = {}
    for device in DEVICES:
        for loss in ("per box", "mean"):
            for n in (64, SIZES[device]):
                for mode in MODES:
                    try:
                        run, _ = make(mode, device, n, loss)
                        rows[(device, loss, n, mode)] = min_time(run)
                    except Exception as e:
                        print(f"{device} {loss} n={n} {mode}: skipped ({type(e).__name__}: {str(e)[:120]})")
                base = rows.get((device, loss, n, "eager"))
                for mode in MODES:
                    t = rows.get((device, loss, n, mode))
                    if t is not None:
                        print(f"{device:4} {loss:7} n={n:7} {mode:14} {t * 1e6:10.1f} us  "
                              f"x{base / t:5.2f} vs tritensor eager")


if __name__ == "__main__":
    main()
