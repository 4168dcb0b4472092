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
def test_launch_latency(benchmark):
    """Event-timed cost of a kernel launch: ``LAUNCHES`` in-place adds on one float queued back
    to back (host-bound: each one's Python and launch cost), and one alone (its device time)."""
    x = tt.zeros(1, device="cuda")
    x.add_(1.0)

    def many():
        for _ in range(LAUNCHES):
            x.add_(1.0)

    per_launch_us = event_median_ms(many, warmup=1, rep=3) * 1e3 / LAUNCHES
    one_us = event_median_ms(lambda: x.add_(1.0), warmup=2, rep=REP) * 1e3
    tt.cuda.synchronize()
    assert x.item() == 1.0 + 4 * LAUNCHES + 2 + REP         # every launch ran, in order
    benchmark.extra_info.update({"us per launch (back to back)": per_launch_us, "us one launch": one_us})
    if REAL:
        print(f"\nlaunch: {per_launch_us:.2f} us per launch back to back, {one_us:.2f} us for one "
              f"between events ({tt.cuda.get_device_name()})")
    benchmark.pedantic(lambda: (x.add_(1.0), tt.cuda.current_stream().synchronize()), rounds=REP, iterations=1)


@pytest.mark.skipif(os.environ.get("TRITENSOR_BENCH_STREAMS") is None and not REAL,
                    reason="real GPU (or TRITENSOR_BENCH_STREAMS=1)")
def test_launch_latency_on_a_side_stream(benchmark):
    """The same launches on a non-default stream: the driver hook hands Triton the stream, which
    must cost nothing measurable."""
    x = tt.zeros(1, device="cuda")
    s = tt.cuda.Stream()
    with tt.cuda.stream(s):
        x.add_(1.0)

        def many():
            for _ in range(LAUNCHES):
                x.add_(1.0)

        per_launch_us = event_median_ms(many, warmup=1, rep=3) * 1e3 / LAUNCHES
    s.synchronize()
    benchmark.extra_info["us per launch (side stream)"] = per_launch_us
    print(f"\nlaunch on a side stream: {per_launch_us:.2f} us per launch back to back")
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
