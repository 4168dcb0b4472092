"""Pinned host memory and the copies between host and device: pin_memory/is_pinned, round trips
through pinned and pageable memory, non_blocking copies on the current stream (torch's rules:
asynchronous only with pinned memory, the source kept alive until the copy is done, a
device -> host non_blocking copy lands in pinned memory)."""
import gc

import numpy as np
import pytest

import tritensor as tt
from tritensor.runtime import pinned, transfer

from conftest import to_numpy


def test_pin_memory_and_is_pinned():
    x = tt.arange(12, dtype=tt.float32).reshape(3, 4)
    assert x.is_pinned() is False
    p = x.pin_memory()
    assert p.is_pinned() is True and p.device == tt.device("cpu")
    assert p.dtype is tt.float32 and p.shape == (3, 4) and p.is_contiguous()
    np.testing.assert_array_equal(p.numpy(), x.numpy())
    assert p.data_ptr() != x.data_ptr()
    assert p.pin_memory() is p                     # already pinned: itself, as torch
    assert p[1].is_pinned() and p.t().is_pinned()  # views share the pinned storage
    q = x.t().pin_memory()                         # non-contiguous source
    np.testing.assert_array_equal(q.numpy(), x.numpy().T)
    assert tt.zeros(3, device="cuda").is_pinned() is False


def test_pinned_factories():
    e = tt.empty(5, 2, dtype=tt.int64, pin_memory=True)
    assert e.is_pinned() and e.shape == (5, 2) and e.dtype is tt.int64
    t = tt.tensor([[1, 2], [3, 4]], pin_memory=True)
    assert t.is_pinned()
    np.testing.assert_array_equal(t.numpy(), [[1, 2], [3, 4]])
    for dtype in (tt.bool, tt.uint8, tt.float16, tt.bfloat16, tt.float64):
        z = tt.zeros(0, dtype=dtype).pin_memory()
        assert z.is_pinned() and z.shape == (0,) and z.dtype is dtype


def test_pinning_a_cuda_tensor_is_refused():
    with pytest.raises(RuntimeError, match="cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors can be pinned"):
        tt.zeros(2, device="cuda").pin_memory()


def test_pin_memory_is_differentiable():
    x = tt.tensor([1.0, 2.0], requires_grad=True)
    p = x.pin_memory()
    assert p.requires_grad and p.is_pinned()
    (p * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


def test_pinned_memory_is_accounted_and_freed():
    gc.collect()
    before = pinned.host_memory_stats()["allocated_bytes.current"]
    p = tt.empty(1000, dtype=tt.float64, pin_memory=True)
    assert pinned.host_memory_stats()["allocated_bytes.current"] == before + 8000
    del p
    gc.collect()
    assert pinned.host_memory_stats()["allocated_bytes.current"] == before


@pytest.mark.parametrize("dtype", [tt.float32, tt.float16, tt.bfloat16, tt.int64, tt.bool, tt.uint8])
@pytest.mark.parametrize("pin", [False, True])
@pytest.mark.parametrize("non_blocking", [False, True])
def test_round_trips(dtype, pin, non_blocking):
    rng = np.random.default_rng(0)
    host = tt.tensor(rng.standard_normal((5, 7)) * 4).to(dtype)
    src = host.pin_memory() if pin else host
    d = src.to("cuda", non_blocking=non_blocking)
    assert d.device == tt.device("cuda:0") and d.dtype is dtype
    back = d.to("cpu", non_blocking=non_blocking)
    if non_blocking:
        # torch: a non_blocking device -> host copy lands in pinned memory; wait for the stream
        assert back.is_pinned()
        tt.cuda.current_stream().synchronize()
    else:
        assert not back.is_pinned()
    np.testing.assert_array_equal(to_numpy(back), to_numpy(host))
    c = src.cuda(non_blocking=non_blocking)
    tt.cuda.synchronize()
    np.testing.assert_array_equal(to_numpy(c), to_numpy(host))


def test_non_blocking_copy_runs_on_the_current_stream_and_keeps_its_source():
    """The copy is recorded on the current stream; until that stream has passed it, the pinned
    source storage stays alive even when the user drops it."""
    s = tt.cuda.Stream()
    with tt.cuda.stream(s):
        src = tt.arange(1000, dtype=tt.float32).pin_memory()
        storage = src._storage
        dst = src.to("cuda", non_blocking=True)
        del src
        # the copy's event is the last one recorded: it is on s
        event, kept = transfer._in_flight[-1]
        assert event.device == tt.device("cuda:0") and any(k is storage for k in kept)
    s.synchronize()
    assert event.query()
    assert transfer.pending_copies() == 0          # finished copies let go of their storages
    np.testing.assert_array_equal(to_numpy(dst), np.arange(1000, dtype=np.float32))


def test_blocking_copies_and_pageable_memory_keep_nothing():
    transfer.pending_copies()
    n = len(transfer._in_flight)
    x = tt.arange(10.0)
    y = x.to("cuda", non_blocking=True)    # pageable source: CUDA stages it before returning
    z = x.pin_memory().to("cuda")          # blocking: the host waited
    assert len(transfer._in_flight) == n
    np.testing.assert_array_equal(to_numpy(y), to_numpy(z))


def test_copy_into_pinned_and_from_pinned_in_place():
    d = tt.arange(24, dtype=tt.int32, device="cuda").reshape(4, 6)
    out = tt.empty(4, 6, dtype=tt.int32, pin_memory=True)
    out.copy_(d, non_blocking=True)         # one transfer straight into the pinned tensor
    tt.cuda.synchronize()
    np.testing.assert_array_equal(out.numpy(), np.arange(24).reshape(4, 6))
    dst = tt.zeros(4, 6, dtype=tt.int32, device="cuda")
    dst.copy_(out, non_blocking=True)
    tt.cuda.synchronize()
    np.testing.assert_array_equal(to_numpy(dst), np.arange(24).reshape(4, 6))
    # a cast or a non-contiguous destination goes through a temporary, same values
    f = tt.empty(6, 4, dtype=tt.float64, pin_memory=True).t()
    f.copy_(d, non_blocking=True)
    tt.cuda.synchronize()
    np.testing.assert_array_equal(f.numpy(), np.arange(24.0).reshape(4, 6))


def test_to_with_positional_non_blocking_and_copy():
    x = tt.arange(4.0)
    y = x.to("cuda", tt.float64, True)          # to(device, dtype, non_blocking)
    assert y.device.type == "cuda" and y.dtype is tt.float64
    z = x.to(tt.float32, False, True)           # to(dtype, non_blocking, copy)
    assert z is not x and z.data_ptr() != x.data_ptr()
    back = y.to("cpu", tt.float32, True)        # cast on the device, then an asynchronous copy
    tt.cuda.synchronize()
    assert back.is_pinned() and back.dtype is tt.float32
    np.testing.assert_array_equal(back.numpy(), [0.0, 1.0, 2.0, 3.0])


@pytest.mark.gpu
def test_non_blocking_copy_overlaps_with_compute():
    """A pinned host -> device copy on one stream runs while a long kernel runs on another: the
    two together take clearly less than their sum."""
    n = 1 << 26                                     # 256 MB of float32: ~10 ms over PCIe/NVLink
    host = tt.empty(n, pin_memory=True)
    work = tt.randn(1 << 22, device="cuda")
    work.cumsum(0)
    tt.cuda.synchronize()
    start, end = tt.cuda.Event(enable_timing=True), tt.cuda.Event(enable_timing=True)

    def timed(fn):
        tt.cuda.synchronize()
        start.record()
        fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end)

    copy_ms = timed(lambda: host.to("cuda", non_blocking=True))
    compute_ms = timed(lambda: work.cumsum(0))
    side = tt.cuda.Stream()

    def both():
        side.wait_stream(tt.cuda.current_stream())
        with tt.cuda.stream(side):
            host.to("cuda", non_blocking=True)
        work.cumsum(0)
        tt.cuda.current_stream().wait_stream(side)

    both_ms = timed(both)
    assert both_ms < 0.85 * (copy_ms + compute_ms), (both_ms, copy_ms, compute_ms)


@pytest.mark.skipif(not tt.cuda.is_emulated(), reason="a real GPU is present")
def test_pinning_needs_a_cuda_device():
    """Without any cuda device (real or emulated) pinning fails with torch's message; is_pinned
    still answers."""
    import os
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "TRITENSOR_EMULATE_CUDA")}
    code = ("import tritensor as tt\nx = tt.arange(3.0)\nprint(x.is_pinned())\n"
            "try:\n    x.pin_memory()\nexcept RuntimeError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.stdout.split("\n")[:2] == ["False", "Cannot access accelerator device when none is available."], \
        out.stderr[-2000:]
