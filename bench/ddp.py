"""DistributedDataParallel step time against one process on cpu (MPI), issue 27 item 7.

    python -m bench.ddp [--nproc 2] [--batch 256] [--width 1024] [--reps 10]

One training step (forward, mse loss, backward, SGD step) of an MLP (256 -> width -> width -> 10,
float32, 1.3 M parameters at width 1024: the 1 MiB first bucket and one more) on the global batch:
- one process on the whole batch (this process, before the launch);
- DDP on ``--nproc`` ranks, each on batch/nproc rows (started through tritensor.distributed.run);
- the same DDP step inside ``no_sync()`` (no all-reduce: the compute alone), so that
  ddp - no_sync is what the gradient reduction costs beyond the overlap;
- the step inside ``no_sync()`` followed by one blocking all-reduce of all the gradients after
  backward (no overlap): sequential - ddp is what the buckets' overlap with backward saves.
Min over reps (the machine is shared); one BLAS thread per process. NCCL/GPUs are not measured.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _setup(width, rows):
    import tritensor as tt
    tt.manual_seed(0)
    model = tt.nn.Sequential(tt.nn.Linear(256, width), tt.nn.ReLU(), tt.nn.Linear(width, width), tt.nn.ReLU(),
                             tt.nn.Linear(width, 10))
    x, y = tt.randn(rows, 256), tt.randn(rows, 10)
    return tt, model, x, y


def _step_time(tt, model, params, x, y, reps, before=lambda: None, ctx=None, after=None):
    opt = tt.optim.SGD(params, lr=1e-3)
    best = float("inf")
    for _ in range(reps):
        before()
        t0 = time.perf_counter()
        opt.zero_grad()
        if ctx is None:
            tt.nn.functional.mse_loss(model(x), y).backward()
        else:
            with ctx():
                tt.nn.functional.mse_loss(model(x), y).backward()
        if after is not None:
            after()
        opt.step()
        best = min(best, time.perf_counter() - t0)
    return best


def rank_main(batch, width, reps, single):
    import tritensor.distributed as dist
    from tritensor.nn.parallel import DistributedDataParallel as DDP
    dist.init_process_group("mpi")
    n, me = dist.get_world_size(), dist.get_rank()
    tt, model, x, y = _setup(width, batch // n)
    ddp = DDP(model)
    synced = _step_time(tt, ddp, ddp.parameters(), x, y, reps, before=dist.barrier)
    local = _step_time(tt, ddp, ddp.parameters(), x, y, reps, before=dist.barrier, ctx=ddp.no_sync)

    def after_backward():
        flat = tt.cat([p.grad.reshape(-1) for p in model.parameters()]).div_(n)
        dist.all_reduce(flat)
        offset = 0
        for p in model.parameters():
            p.grad.copy_(flat[offset: offset + p.numel()].view(p.shape))
            offset += p.numel()

    sequential = _step_time(tt, ddp, ddp.parameters(), x, y, reps, before=dist.barrier, ctx=ddp.no_sync,
                            after=after_backward)
    if me == 0:
        nparams = sum(p.numel() for p in model.parameters())
        print(f"DDP step on cpu, MLP 256-{width}-{width}-10 ({nparams / 1e6:.2f} M float32 parameters, "
              f"{len(ddp._buckets)} buckets), global batch {batch}; min of {reps}")
        print(f"  one process, batch {batch}:            {single * 1e3:8.2f} ms")
        print(f"  DDP {n} ranks, batch {batch // n} each:       {synced * 1e3:8.2f} ms  "
              f"(speed-up {single / synced:.2f}x, ideal {n}x)")
        print(f"  DDP inside no_sync (no all-reduce): {local * 1e3:8.2f} ms  "
              f"(reduction costs {(synced - local) * 1e3:.2f} ms a step)")
        print(f"  no_sync + one all-reduce after:     {sequential * 1e3:8.2f} ms  "
              f"(the buckets' overlap saves {(sequential - synced) * 1e3:.2f} ms)")
    dist.destroy_process_group()


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m bench.ddp")
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--rank", type=float, default=None, help=argparse.SUPPRESS)   # the single-process time
    a = p.parse_args(argv)
    if a.rank is not None:
        rank_main(a.batch, a.width, a.reps, a.rank)
        return 0
    tt, model, x, y = _setup(a.width, a.batch)
    single = _step_time(tt, model, model.parameters(), x, y, a.reps)
    cmd = [sys.executable, "-m", "tritensor.distributed.run", "--nproc-per-node", str(a.nproc), "--timeout", "600",
           os.path.abspath(__file__), "--rank", repr(single), "--batch", str(a.batch), "--width", str(a.width),
           "--reps", str(a.reps)]
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
