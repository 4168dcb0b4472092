"""Device timing without torch: two timing events around the region, median of many runs.

Used by the matmul autotuner and by bench/. The events are tritensor's (runtime/streams.py),
recorded on the current stream, where tritensor's launches run; on the emulated device they
measure host time."""
from __future__ import annotations

import statistics


def event_median_ms(fn, warmup=2, rep=10):
    """Median milliseconds of ``fn()`` between two events, after ``warmup`` untimed calls."""
    from . import graphs
    from .streams import Event, current_stream
    if graphs.CAPTURES:         # autotuning times on the host: never during a CUDA graph capture
        graphs.check_not_capturing()
    for _ in range(warmup):
        fn()
    stream = current_stream()
    times = []
    for _ in range(rep):
        start, end = Event(enable_timing=True), Event(enable_timing=True)
        start.record(stream)
        fn()
        end.record(stream)
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)
