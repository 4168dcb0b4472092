"""Runtime benchmarks: host <-> device bandwidth from pinned and pageable memory, against the
figure of the GPU's host link, and event-timed kernel launch latency.

    pytest bench/test_bench_runtime.py --benchmark-enable -s -n 0

On a real GPU each case prints its event-timed result (GB/s, or microseconds per launch); the
transfers are 256 MiB. The host link's figure is what its PCIe link is trained to (read from
sysfs for the GPU's PCI address: GT/s per lane x lanes, less the line coding), per direction; a
link sysfs does not describe (NVLink-C2C) prints as unknown. On the emulated device the same cases
run small as a smoke test (the copies are NumPy copies, the numbers mean nothing).
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import tritensor as tt
from tritensor.runtime.timing import event_median_ms

REAL = tt.cuda.is_available() and not tt.cuda.is_emulated()
NBYTES = 256 << 20 if REAL else 1 << 20
REP = 20 if REAL else 3
LAUNCHES = 1000 if REAL else 20


# ----------------------------------------------------------------------------- the host link
def _pci_address(index):
    """The GPU's PCI address (domain:bus:device.function), from CUDA's device properties."""
    import cupy
    p = cupy.cuda.runtime.getDeviceProperties(index)
    return f"{p['pciDomainID']:04x}:{p['pciBusID']:02x}:{p['pciDeviceID']:02x}.0"


def pcie_gbps(speed: str, width: int) -> float:
    """Bytes per second (in GB/s) one direction of a PCIe link carries: GT/s per lane times
    lanes, less the line coding (8b/10b up to 5 GT/s, 128b/130b from 8 GT/s)."""
    gts = float(speed.split()[0])
    coding = 0.8 if gts <= 5.0 else 128 / 130
    return gts * coding * width / 8


def host_link(index=0):
    """(GB/s per direction, description) of the GPU's host link, or (None, why)."""
    try:
        base = f"/sys/bus/pci/devices/{_pci_address(index)}"
        # an idle GPU trains its link down: "current" is read after the transfers ran, the
        # maximum shown beside it
        speed = open(f"{base}/current_link_speed").read().strip()
        width = int(open(f"{base}/current_link_width").read().strip())
        max_speed = open(f"{base}/max_link_speed").read().strip()
        max_width = int(open(f"{base}/max_link_width").read().strip())
    except Exception as e:   # no sysfs entry (containers, NVLink-C2C): no figure
        return None, f"unknown ({type(e).__name__})"
    return pcie_gbps(speed, width), f"PCIe {speed} x{width} (max {max_speed} x{max_width})"


def test_pcie_figure():
    assert pcie_gbps("32.0 GT/s PCIe", 16) == pytest.approx(63.015, rel=1e-3)     # Gen5 x16
    assert pcie_gbps("16.0 GT/s PCIe", 16) == pytest.approx(31.508, rel=1e-3)     # Gen4 x16
    assert pcie_gbps("2.5 GT/s PCIe", 1) == pytest.approx(0.25)                   # Gen1 x1


# ----------------------------------------------------------------------------- transfers
def _buffers(pinned):
    host = tt.empty(NBYTES, dtype=tt.uint8, pin_memory=pinned)
    host.numpy()[:] = np.arange(NBYTES, dtype=np.uint64).astype(np.uint8)
    dev = tt.empty(NBYTES, dtype=tt.uint8, device="cuda")
    return host, dev


@pytest.mark.parametrize("memory", ["pinned", "pageable"])
@pytest.mark.parametrize("direction", ["host_to_device", "device_to_host"])
def test_transfer_bandwidth(benchmark, direction, memory):
    pinned = memory == "pinned"
    host, dev = _buffers(pinned)
    expected = host.numpy().copy()
    if direction == "host_to_device":
        def copy():
            dev.copy_(host, non_blocking=pinned)
    else:
        dev.copy_(host)
        host.numpy()[:] = 0

        def copy():
            host.copy_(dev, non_blocking=pinned)

    ms = event_median_ms(copy, warmup=2, rep=REP)
    tt.cuda.synchronize()
    got = dev.cpu().numpy() if direction == "host_to_device" else host.numpy()
    np.testing.assert_array_equal(got, expected)
    gbps = NBYTES / ms / 1e6
    benchmark.extra_info.update({"GB/s": gbps, "MiB": NBYTES >> 20})
    if REAL:
        link, what = host_link(tt.cuda.current_device())
        benchmark.extra_info["host link"] = what
        ratio = f"{gbps / link:.0%} of {link:.1f} GB/s" if link else "link figure unknown"
        print(f"\n{direction} from {memory} memory: {gbps:.1f} GB/s ({ratio}; {what}; "
              f"{tt.cuda.get_device_name()})")
    benchmark.pedantic(lambda: (copy(), tt.cuda.current_stream().synchronize()), rounds=REP, iterations=1)


# ----------------------------------------------------------------------------- launches
def _peer_launch_us():
    """Microseconds per back-to-back in-place add on one float with a peer (CuPy, else torch),
    where one with a GPU is importable: the ratio's denominator. None on the emulated device."""
    if not REAL:
        return None, None
    try:
        import cupy
        y = cupy.zeros(1, dtype=cupy.float32)

        def many():
            for _ in range(LAUNCHES):
                cupy.add(y, 1.0, out=y)
        return event_median_ms(many, warmup=1, rep=3) * 1e3 / LAUNCHES, "cupy"
    except ImportError:
        pass
    try:
        import torch
        if torch.cuda.is_available():
            z = torch.zeros(1, device="cuda")

            def many_torch():
                for _ in range(LAUNCHES):
                    z.add_(1.0)
                torch.cuda.synchronize()
            import time
            many_torch()
            t0 = time.perf_counter()
            many_torch()
            return (time.perf_counter() - t0) * 1e6 / LAUNCHES, "torch"
    except ImportError:
        pass
    return None, None


def _launches(x):
    def many():
        for _ in range(LAUNCHES):
            x.add_(1.0)
    return many


def test_launch_latency(benchmark):
    """Event-timed cost of a kernel launch: ``LAUNCHES`` in-place adds on one float queued back
    to back (host-bound: each one's Python and launch cost), and one alone (its device time);
    the ratio against a peer's same loop where one is importable."""
    x = tt.zeros(1, device="cuda")
    x.add_(1.0)
    per_launch_us = event_median_ms(_launches(x), warmup=1, rep=3) * 1e3 / LAUNCHES
    one_us = event_median_ms(lambda: x.add_(1.0), warmup=2, rep=REP) * 1e3
    tt.cuda.synchronize()
    assert x.item() == 1.0 + 4 * LAUNCHES + 2 + REP         # every launch ran, in order
    assert per_launch_us > 0 and one_us > 0
    benchmark.extra_info.update({"us per launch (back to back)": per_launch_us, "us one launch": one_us})
    peer_us, peer = _peer_launch_us()
    if peer_us:
        benchmark.extra_info[f"ratio to {peer}"] = per_launch_us / peer_us
    if REAL:
        ratio = f"; {per_launch_us / peer_us:.2f}x {peer}'s {peer_us:.2f} us" if peer_us else ""
        print(f"\nlaunch: {per_launch_us:.2f} us per launch back to back, {one_us:.2f} us for one "
              f"between events{ratio} ({tt.cuda.get_device_name()})")
    benchmark.pedantic(lambda: (x.add_(1.0), tt.cuda.current_stream().synchronize()), rounds=REP, iterations=1)


def test_launch_latency_on_a_side_stream(benchmark):
    """The same launches on a non-default stream: the driver hook hands Triton the stream, which
    must cost nothing measurable. Timed on the side stream against the default stream measured
    in the same run (the ratio); the benchmark rows time a side-stream launch plus its sync."""
    x = tt.zeros(1, device="cuda")
    default_us = event_median_ms(_launches(x), warmup=1, rep=3) * 1e3 / LAUNCHES
    s = tt.cuda.Stream()
    with tt.cuda.stream(s):
        side_us = event_median_ms(_launches(x), warmup=1, rep=3) * 1e3 / LAUNCHES
    s.synchronize()
    assert x.item() == 8.0 * LAUNCHES                      # both loops ran every launch, in order
    assert side_us > 0 and default_us > 0
    benchmark.extra_info.update({"us per launch (side stream)": side_us, "us per launch (default stream)": default_us,
                                 "ratio side / default": side_us / default_us})
    print(f"\nlaunch on a side stream: {side_us:.2f} us per launch back to back, {side_us / default_us:.2f}x "
          f"the default stream's {default_us:.2f} us")

    calls = [0]

    def launch_and_sync():
        with tt.cuda.stream(s):
            x.add_(1.0)
        s.synchronize()
        calls[0] += 1
    benchmark.pedantic(launch_and_sync, rounds=REP, iterations=1)
    assert calls[0] >= 1 and x.item() == 8.0 * LAUNCHES + calls[0]


def test_stream_synchronize_and_event_query(benchmark):
    """The host cost of waiting on an idle stream and of polling an event (what every
    synchronize, .item() and allocator release pays), against CuPy's where it is importable."""
    import time
    s = tt.cuda.current_stream()
    e = tt.cuda.Event()
    e.record(s)
    s.synchronize()
    assert e.query() and s.query()

    def per_call_us(fn, n=2000 if REAL else 200):
        fn()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        return (time.perf_counter() - t0) * 1e6 / n
    sync_us, query_us = per_call_us(s.synchronize), per_call_us(e.query)
    benchmark.extra_info.update({"us stream.synchronize (idle)": sync_us, "us event.query": query_us})
    line = f"\nidle stream.synchronize {sync_us:.2f} us, event.query {query_us:.2f} us"
    if REAL:
        try:
            import cupy
            peer = per_call_us(cupy.cuda.get_current_stream().synchronize)
            benchmark.extra_info["ratio to cupy (synchronize)"] = sync_us / peer
            line += f"; {sync_us / peer:.2f}x cupy's {peer:.2f} us"
        except ImportError:
            pass
    print(line)
    benchmark(s.synchronize)
