"""python -m bench.overhead: host-side cost of tritensor's cpu device against torch eager and NumPy.

Issue 14's figures, measured in one run, single-threaded (OMP/OPENBLAS/MKL_NUM_THREADS=1 are set
before NumPy is imported; torch.set_num_threads(1)); each figure is the best of ``--repeat``
rounds of the per-call mean over enough calls to fill ``--round-ms``, the rounds of tritensor,
torch and NumPy taken in turn so that a busy spell of a shared machine hits all of them:

- ``add 1e3``: ``a + b`` on 1 000 float32 elements (the per-op host cost);
- ``mul-sum-backward 1e3``: ``(a * b).sum().backward()`` on 1 000 elements;
- ``add 2**20``: ``a + b`` on 2**20 float32 elements (NumPy's own ``a + b`` is the peer);
- ``matmul 512``: a 512x512 float32 matmul (``np.matmul`` is the peer);
- ``tiny step``: 8x8 matmul, tanh, pow, mean, backward, in-place update;
- ``MLP step``: 784-512-512-10 at batch 64, raw ops (matmul, relu, log_softmax, gather),
  backward and an in-place SGD update;
- ``cuda host add``: the emulated cuda device's host side of one forward ``a + b`` (1 000
  float32), with the Triton launch replaced by a recorder: what every real launch would pay
  before the GPU starts;
- ``cuda host fused IoU``: the same for one call of bench/test_bench_fusion.py's IoU loss (20
  pointwise ops over 8 columns of 1 000 boxes) traced by ``tt.jit.trace`` into one fusion group
  (one generated kernel), per box and as its mean; ``cuda host eager IoU`` is the eager chain's
  20 ops measured the same way (issue 26: a fused call should cost about one eager op).

torch is a peer only when importable (run it with /opt/torchenv/bin/python, where tritensor is
installed editable); tritensor never needs it. Absolute times on a loaded machine mean little;
the ratios, taken in the same run, are the figures.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

TARGETS = {   # issue 14's ceilings: (peer, ratio)
    "add 1e3": ("torch", 5.0),
    "mul-sum-backward 1e3": ("torch", 2.0),
    "add 2**20": ("numpy", 1.1),
    "matmul 512": ("numpy", 1.1),
    "tiny step": ("torch", 2.0),
    "MLP step": ("torch", 1.3),
    "cuda host add": (None, 10.0),   # microseconds, absolute
    "cuda host fused IoU": (None, 30.0),
    "cuda host fused mean": (None, 30.0),
}


def _calls_per_round(fn, round_ms):
    for _ in range(3):
        fn()
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-7)
    return max(1, int(round_ms / 1e3 / one))


def _round_us(fn, n):
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e6


def best_us(fn, repeat=5, round_ms=40.0):
    """Best of ``repeat`` rounds of the mean microseconds per call of ``fn``."""
    return interleaved_best_us({"fn": fn}, repeat, round_ms)["fn"]


def interleaved_best_us(fns, repeat=5, round_ms=40.0):
    """{name: best-of-``repeat`` mean microseconds per call}, the rounds of the different
    functions taken in turn, so that a busy spell of a shared machine hits them all alike."""
    counts = {name: _calls_per_round(fn, round_ms) for name, fn in fns.items()}
    best = {name: float("inf") for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            best[name] = min(best[name], _round_us(fn, counts[name]))
    return best


# --------------------------------------------------------------------------- cases
def _tiny_step(lib, no_grad, w, x):
    def step():
        y = (x @ w).tanh().pow(2).mean()
        y.backward()
        with no_grad():
            w.sub_(w.grad * 0.1)
        w.grad = None
    return step


def _mlp_step(lib, no_grad, params, x, target, log_softmax):
    w1, b1, w2, b2, w3, b3 = params

    def step():
        h = (x @ w1 + b1).relu()
        h = (h @ w2 + b2).relu()
        logits = h @ w3 + b3
        loss = -log_softmax(logits, 1).gather(1, target).mean()
        loss.backward()
        with no_grad():
            for p in params:
                p.sub_(p.grad * 0.01)
                p.grad = None
    return step


def _lib_cases(lib, name):
    """name -> thunk for tritensor (``name == 'tritensor'``) or torch."""
    rng = np.random.default_rng(0)
    f32 = lib.float32

    def t(arr, requires_grad=False):
        return lib.tensor(np.ascontiguousarray(arr, dtype=np.float32), requires_grad=requires_grad)

    a, b = t(rng.standard_normal(1000)), t(rng.standard_normal(1000))
    ag, bg = t(rng.standard_normal(1000), True), t(rng.standard_normal(1000), True)
    A, B = t(rng.standard_normal(2 ** 20)), t(rng.standard_normal(2 ** 20))
    M1, M2 = t(rng.standard_normal((512, 512))), t(rng.standard_normal((512, 512)))
    w8, x8 = t(rng.standard_normal((8, 8)), True), t(rng.standard_normal((8, 8)))
    params = [t(rng.standard_normal((784, 512)) * 0.03, True), t(np.zeros(512), True),
              t(rng.standard_normal((512, 512)) * 0.04, True), t(np.zeros(512), True),
              t(rng.standard_normal((512, 10)) * 0.04, True), t(np.zeros(10), True)]
    x = t(rng.standard_normal((64, 784)))
    target = lib.tensor(rng.integers(0, 10, (64, 1)), dtype=lib.int64)
    F = lib.nn.functional

    def backward_case():
        (ag * bg).sum().backward()
        ag.grad = None
        bg.grad = None

    del f32
    return {
        "add 1e3": lambda: a + b,
        "mul-sum-backward 1e3": backward_case,
        "add 2**20": lambda: A + B,
        "matmul 512": lambda: M1 @ M2,
        "tiny step": _tiny_step(lib, lib.no_grad, w8, x8),
        "MLP step": _mlp_step(lib, lib.no_grad, params, x, target, F.log_softmax),
    }


def _numpy_cases():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(1000, dtype=np.float32), rng.standard_normal(1000, dtype=np.float32)
    A, B = rng.standard_normal(2 ** 20, dtype=np.float32), rng.standard_normal(2 ** 20, dtype=np.float32)
    M1 = rng.standard_normal((512, 512), dtype=np.float32)
    M2 = rng.standard_normal((512, 512), dtype=np.float32)
    return {"add 1e3": lambda: a + b, "add 2**20": lambda: A + B, "matmul 512": lambda: M1 @ M2}


class LaunchRecorder:
    """Stands in for runtime.launch.launch_kernel: records the call and launches nothing."""

    def __init__(self):
        self.calls = 0
        self.last = None

    def __call__(self, kernel, grid, *args, **meta):
        self.calls += 1
        self.last = (kernel, grid, args, meta)


def cuda_host_us(repeat, round_ms):
    """Host microseconds of one emulated-cuda ``a + b`` (1 000 float32) with the launch recorded."""
    os.environ.setdefault("TRITENSOR_EMULATE_CUDA", "1")
    import tritensor as tt
    from tritensor.backends import triton as tb
    if not tt.cuda.is_available():
        return None
    a = tt.randn(1000, device="cuda")
    b = tt.randn(1000, device="cuda")
    a + b                                    # the first call: kernels imported, rules cached
    saved = tb._run
    recorder = LaunchRecorder()
    tb._run = recorder
    try:
        us = best_us(lambda: a + b, repeat, round_ms)
    finally:
        tb._run = saved
    assert recorder.calls > 0, "the recorder saw no launch"
    return us


def cuda_host_fused_us(repeat, round_ms):
    """{case: host microseconds} of the traced IoU loss (per box, mean) and of its eager chain
    on the emulated cuda device, 1 000 boxes, every launch recorded instead of run."""
    os.environ.setdefault("TRITENSOR_EMULATE_CUDA", "1")
    import tritensor as tt
    from tritensor.backends import triton as tb
    from bench.test_bench_fusion import columns, iou_loss, iou_mean
    if not tt.cuda.is_available():
        return {}
    boxes = [tt.tensor(c, device="cuda") for c in columns(1000)]
    fns = {"cuda host fused IoU": tt.jit.trace(iou_loss, tuple(boxes)),
           "cuda host fused mean": tt.jit.trace(iou_mean, tuple(boxes)),
           "cuda host eager IoU": iou_loss}
    for fn in fns.values():
        fn(*boxes)                      # kernels generated and imported, plans made
    saved = tb._run
    recorder = LaunchRecorder()
    tb._run = recorder
    try:
        us = interleaved_best_us({name: (lambda fn=fn: fn(*boxes)) for name, fn in fns.items()}, repeat, round_ms)
    finally:
        tb._run = saved
    assert recorder.calls > 0, "the recorder saw no launch"
    return us


def measure(repeat=5, round_ms=40.0):
    """{case: {library: microseconds}} for every case and every importable library."""
    import tritensor as tt
    results: dict = {}
    libs = {"tritensor": tt}
    try:
        import torch
        torch.set_num_threads(1)
        libs["torch"] = torch
    except ImportError:
        pass
    thunks: dict = {}
    for lib_name, lib in libs.items():
        for case, fn in _lib_cases(lib, lib_name).items():
            thunks.setdefault(case, {})[lib_name] = fn
    for case, fn in _numpy_cases().items():
        thunks.setdefault(case, {})["numpy"] = fn
    for case, fns in thunks.items():
        results[case] = interleaved_best_us(fns, repeat, round_ms)
    host = cuda_host_us(repeat, round_ms)
    if host is not None:
        results["cuda host add"] = {"tritensor": host}
    for case, us in cuda_host_fused_us(repeat, round_ms).items():
        results[case] = {"tritensor": us}
    return results


def format_table(results):
    lines = [f"{'case':<22}{'tritensor us':>14}{'torch us':>11}{'numpy us':>11}{'ratio':>8}{'target':>9}",
             "-" * 75]
    for case, row in results.items():
        peer, target = TARGETS.get(case, (None, None))
        tt_us = row.get("tritensor")
        peer_us = row.get(peer) if peer else None
        ratio = f"{tt_us / peer_us:.2f}x" if peer_us else "-"
        tgt = f"<={target:g}x" if peer else f"<={target:g}us" if target else "-"
        if peer and peer not in row:
            tgt += "?"
        cells = [f"{row[k]:.1f}" if k in row else "-" for k in ("tritensor", "torch", "numpy")]
        lines.append(f"{case:<22}{cells[0]:>14}{cells[1]:>11}{cells[2]:>11}{ratio:>8}{tgt:>9}"
                     + (f"  (vs {peer})" if peer else ""))
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--round-ms", type=float, default=40.0)
    args = p.parse_args(argv)
    import platform
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}  {platform.machine()} "
          f"{os.cpu_count()} cores  numpy {np.__version__}")
    print(format_table(measure(args.repeat, args.round_ms)))


if __name__ == "__main__":
    main()
