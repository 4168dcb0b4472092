"""tritensor.profiler: torch's profiling namespace. Here: the traffic counter of the emulated
device (``traffic()``; _traffic.py says what it measures). Opt-in and off by default; while off
nothing of it is installed. ``TRITENSOR_TRAFFIC=1`` counts a whole process (runtime/launch.py
enables it at the first launch) and prints the table at exit."""
from __future__ import annotations

from ._traffic import (LaunchRecord, OpCall, Summary, TrafficCounter, access_stats, matmul_minimum,
                       minimum_bytes)


def traffic(unique=True) -> TrafficCounter:
    """A counter to use as ``with tt.profiler.traffic() as c: ...``; then ``c.table()``,
    ``c.by_op()``, ``c.by_kernel()``, ``c.launches``."""
    return TrafficCounter(unique=unique)


_process_counter = []


def enable_from_environment():
    """TRITENSOR_TRAFFIC=1: count every launch of the process, print the table at exit
    (to stderr). Called once by the launch path when the variable is set."""
    if _process_counter:
        return _process_counter[0]
    import atexit
    import sys
    counter = TrafficCounter().enable()
    _process_counter.append(counter)

    def report():
        counter.disable()
        print(counter.table(), file=sys.stderr)
    atexit.register(report)
    return counter


__all__ = ["traffic", "TrafficCounter", "LaunchRecord", "OpCall", "Summary", "access_stats",
           "matmul_minimum", "minimum_bytes", "enable_from_environment"]
