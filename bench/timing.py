"""Timing that means something on a GPU: CUDA events around the region, median of many runs.

On the emulated device there are no events; host time is reported and means nothing but ratios
between tritensor's own kernels under the interpreter."""
from __future__ import annotations

import statistics
import time


def _cupy_real():
    import tritensor as tt
    return tt.cuda.is_available() and not tt.cuda.is_emulated()


def median_ms(fn, warmup=5, rep=50, sync=None):
    """Median milliseconds of ``fn()``; ``sync`` waits for the device before reading a host clock."""
    for _ in range(warmup):
        fn()
    if _cupy_real():
        from tritensor.runtime.timing import event_median_ms
        return event_median_ms(fn, warmup=0, rep=rep)
    times = []
    for _ in range(rep):
        t0 = time.perf_counter()
        fn()
        if sync:
            sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def min_seconds(fn, reps=30, warmup=0):
    """The best of ``reps`` host-clock timings of ``fn()``, in seconds, after ``warmup`` untimed
    calls. The minimum, not the median: on a shared machine the load only ever adds time, so the
    fastest run is the one closest to the code's own cost (the cpu comparisons, and the host's
    share of a GPU step)."""
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def library(name):
    """The library a benchmark row times, by name: tritensor, or torch on one thread (the cpu
    comparisons' rule), the test skipped where torch is not importable."""
    import tritensor as tt
    if name == "tritensor":
        return tt
    import pytest
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    return torch
