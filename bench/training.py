"""python -m bench.training: one training step of small models, tritensor against torch eager.

Two workloads, each a whole step (forward, loss, backward, optimizer step), built identically
in both libraries from the same initial weights and batch:

  mlp          the tutorial MLP 784-512-512-10 at batch 64, CrossEntropyLoss, SGD(momentum)
  transformer  a transformer-style MLP block: x + Linear(GELU(Linear(LayerNorm(x)))), d=256,
               hidden 1024, 8 x 64 tokens, a mean-square loss, AdamW

On the cpu device both libraries run single-threaded (the BLAS thread pools are pinned to one
thread before NumPy or torch load: run this as ``python -m bench.training``, not after an import
of NumPy). On a real GPU both run on cuda and time with a device synchronisation per step.
The figure is the median step time and the ratio tritensor / torch; torch is a peer only, where
importable. On the emulated device the figures mean nothing (the interpreter runs the kernels):
``--device cuda`` there is a smoke check.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

WORKLOADS = {
    # name: (batch, dims), full size; the smoke sizes divide every dim
    "mlp": (64, (784, 512, 512, 10)),
    "transformer": (8 * 64, (256, 1024)),
}


def _weights(dims, seed=0):
    """Linear layers' (weight, bias) as float32 NumPy arrays, torch's default init bounds."""
    rng = np.random.default_rng(seed)
    out = []
    for fan_in, fan_out in zip(dims[:-1], dims[1:]):
        bound = 1 / np.sqrt(fan_in)
        out.append((rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32),
                    rng.uniform(-bound, bound, fan_out).astype(np.float32)))
    return out


def _load(lib, model, weights):
    linears = [m for m in model.modules() if type(m).__name__ == "Linear"]
    with lib.no_grad():
        for m, (w, b) in zip(linears, weights):
            m.weight.copy_(lib.from_numpy(w))
            m.bias.copy_(lib.from_numpy(b))


def make_step(lib, workload, device, small=False, mixed=False):
    """A thunk running one training step of ``workload`` with library ``lib`` (tritensor or
    torch) on ``device``; both libraries get the same weights and batch. ``mixed``: the forward
    under autocast (bfloat16 on cpu; float16 on cuda, with a GradScaler), as torch's AMP recipe."""
    nn = lib.nn
    batch, dims = WORKLOADS[workload]
    if small:
        batch, dims = max(batch // 16, 2), tuple(max(d // 16, 2) for d in dims)
    rng = np.random.default_rng(1)
    if workload == "mlp":
        layers = []
        for i, (fan_in, fan_out) in enumerate(zip(dims[:-1], dims[1:])):
            layers += [nn.Linear(fan_in, fan_out)] + ([nn.ReLU()] if i < len(dims) - 2 else [])
        model = nn.Sequential(nn.Flatten(), *layers)
        _load(lib, model, _weights(dims))
        x = lib.from_numpy(rng.standard_normal((batch, dims[0])).astype(np.float32))
        y = lib.from_numpy(rng.integers(0, dims[-1], batch).astype(np.int64))
        loss_fn = nn.CrossEntropyLoss()
        opt_cls, opt_kw = lib.optim.SGD, dict(lr=0.01, momentum=0.9)
    else:
        d, hidden = dims
        model = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, d))
        _load(lib, model, _weights((d, hidden, d)))
        x = lib.from_numpy(rng.standard_normal((batch, d)).astype(np.float32))
        y = None
        opt_cls, opt_kw = lib.optim.AdamW, dict(lr=1e-3)
    model = model.to(device)
    x = x.to(device)
    y = y.to(device) if y is not None else None
    optimizer = opt_cls(model.parameters(), **opt_kw)

    if mixed:
        device_type = "cuda" if str(device).startswith("cuda") else "cpu"
        low = lib.float16 if device_type == "cuda" else lib.bfloat16
        scaler = lib.amp.GradScaler(device_type, enabled=device_type == "cuda")

        def step():
            with lib.autocast(device_type, dtype=low):
                if y is not None:
                    loss = loss_fn(model(x), y)
                else:
                    loss = (x + model(x)).float().pow(2).mean()
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            return loss
        return step

    def step():
        if y is not None:
            loss = loss_fn(model(x), y)
        else:
            loss = (x + model(x)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss
    return step


def _sync(lib, device):
    if device.startswith("cuda") and lib.cuda.is_available():
        return lib.cuda.synchronize
    return lambda: None


def median_ms(step, sync, warmup=3, rep=20):
    for _ in range(warmup):
        step()
    sync()
    times = []
    for _ in range(rep):
        t0 = time.perf_counter()
        step()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def _torch():
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    return torch


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.training", description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--small", action="store_true", help="tiny sizes: a smoke check")
    parser.add_argument("--rep", type=int, default=20)
    args = parser.parse_args(argv)
    if args.device.startswith("cuda"):
        try:
            import cupy
            real = cupy.cuda.runtime.getDeviceCount() > 0
        except Exception:
            real = False
        if not real:
            os.environ.setdefault("TRITENSOR_EMULATE_CUDA", "1")
    import tritensor as tt
    torch = _torch()
    if torch is not None and args.device.startswith("cuda") and not torch.cuda.is_available():
        torch = None
    print(f"device {args.device}{' (emulated: figures mean nothing)' if tt.cuda.is_emulated() and args.device != 'cpu' else ''}; "
          f"one thread; median of {args.rep} steps")
    print(f"{'workload':14s} {'tritensor ms':>13s} {'torch ms':>10s} {'ratio':>7s}")
    for name in WORKLOADS:
        ours = median_ms(make_step(tt, name, args.device, args.small), _sync(tt, args.device), rep=args.rep)
        theirs = (median_ms(make_step(torch, name, args.device, args.small), _sync(torch, args.device), rep=args.rep)
                  if torch is not None else float("nan"))
        print(f"{name:14s} {ours:13.3f} {theirs:10.3f} {ours / theirs:7.2f}x")


if __name__ == "__main__":
    main()
