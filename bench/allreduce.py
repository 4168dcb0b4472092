"""All-reduce bus bandwidth against message size on cpu (MPI), issue 27 item 7.

    python -m bench.allreduce [--nproc 2] [--max-mib 64] [--reps 20]

Starts ``--nproc`` ranks through ``python -m tritensor.distributed.run`` and, on each size (float32,
8 B to --max-mib, x4 steps), times ``tt.distributed.all_reduce`` (min over reps, after a barrier)
three ways: with the per-collective fingerprint exchange (the default: it names a missing rank and
refuses mismatched collectives), without it (TORCH_DISTRIBUTED_DEBUG=OFF), and the peer: mpi4py's
own ``Allreduce`` on NumPy arrays, the floor this engine stands on. Bus bandwidth is NCCL-tests'
definition: bytes / time * 2 (n - 1) / n. NCCL (real GPUs) is not measured here: no GPU.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np


def _time(fn, reps, barrier):
    best = float("inf")
    for _ in range(reps):
        barrier()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def rank_main(max_mib, reps):
    import tritensor as tt
    import tritensor.distributed as dist
    from mpi4py import MPI
    dist.init_process_group("mpi")
    comm = MPI.COMM_WORLD
    n, me = dist.get_world_size(), dist.get_rank()
    engine = dist.group.WORLD._engine
    sizes = []
    s = 8
    while s <= max_mib * 2 ** 20:
        sizes.append(s)
        s *= 4
    rows = []
    for nbytes in sizes:
        numel = nbytes // 4
        t = tt.ones(numel)
        a, b = np.ones(numel, np.float32), np.empty(numel, np.float32)
        k = reps if nbytes <= 2 ** 20 else max(3, reps // 4)
        engine.checks = True
        checked = _time(lambda: dist.all_reduce(t), k, comm.Barrier)
        engine.checks = False
        plain = _time(lambda: dist.all_reduce(t), k, comm.Barrier)
        raw = _time(lambda: comm.Allreduce(a, b), k, comm.Barrier)
        rows.append((nbytes, checked, plain, raw))
    if me == 0:
        factor = 2 * (n - 1) / n
        print(f"all_reduce float32 on cpu, {n} ranks (MPI: {MPI.Get_library_version().splitlines()[0].strip()}); "
              "min of reps; busbw = bytes/t * 2(n-1)/n")
        print(f"{'bytes':>10} {'tt us':>10} {'tt GB/s':>8} {'no-check us':>12} {'mpi4py us':>10} {'mpi4py GB/s':>11} "
              f"{'tt/mpi4py':>9}")
        for nbytes, checked, plain, raw in rows:
            print(f"{nbytes:>10} {checked * 1e6:>10.1f} {nbytes / checked * factor / 1e9:>8.3f} {plain * 1e6:>12.1f} "
                  f"{raw * 1e6:>10.1f} {nbytes / raw * factor / 1e9:>11.3f} {checked / raw:>9.2f}")
    dist.destroy_process_group()


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m bench.allreduce")
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--max-mib", type=int, default=64)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--rank", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.rank:
        rank_main(a.max_mib, a.reps)
        return 0
    cmd = [sys.executable, "-m", "tritensor.distributed.run", "--nproc-per-node", str(a.nproc), "--timeout", "600",
           os.path.abspath(__file__), "--rank", "--max-mib", str(a.max_mib), "--reps", str(a.reps)]
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
