"""Device timing without torch: CUDA events (through CuPy) around the region, median of many runs.

Used by the matmul autotuner and by bench/. Events are recorded on the legacy default stream,
where tritensor's Triton launches run."""
from __future__ import annotations

import statistics


def event_median_ms(fn, warmup=2, rep=10):
    """Median milliseconds of ``fn()`` between two CUDA events, after ``warmup`` untimed calls."""
    import cupy
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(rep):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end))
    return statistics.median(times)
