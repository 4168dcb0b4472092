"""The caching allocator (runtime/allocator.py): PyTorch's rounding, pools, best-fit reuse with
splitting and merging, per-stream pools, record_stream, out-of-memory and recovery, and statistics
that add up after every operation. Logic tests run on private allocators over a small emulated
capacity; the rest go through tensors and tt.cuda on the cuda device (emulated in CI)."""
import gc
import random
import warnings

import numpy as np
import pytest

import tritensor as tt
from tritensor.runtime.allocator import (LARGE_BUFFER, SMALL_BUFFER, AllocatorConfig, CachingAllocator,
                                         HostMemory, OutOfMemoryError, allocation_size, format_size,
                                         round_size)

MiB = 1024 * 1024


class FakeEvent:
    """An event whose work completes only when the test says so."""
    done_all = False

    def __init__(self):
        self.done = False
        self.stream = None
        FakeEvent.made.append(self)

    def record(self, stream):
        self.stream = stream

    def query(self):
        return self.done or FakeEvent.done_all

    def synchronize(self):
        self.done = True


FakeEvent.made = []


class FakeStream:
    def __init__(self, handle):
        self.cuda_stream = handle

    def __hash__(self):
        return hash(self.cuda_stream)

    def __eq__(self, other):
        return isinstance(other, FakeStream) and other.cuda_stream == self.cuda_stream


def make(capacity=64 * MiB, **cfg):
    FakeEvent.made = []
    return CachingAllocator(HostMemory(capacity), 0, AllocatorConfig(**cfg), event_factory=FakeEvent)


def check_invariants(a, at_reset=None):
    """Walk every segment: blocks tile it, free neighbours are merged, the free lists hold exactly
    the free blocks, and every statistic equals what the blocks say. ``at_reset``: memory_stats()
    at the last reset_accumulated_stats (whose sums of increases and decreases start from 0)."""
    stats = a.memory_stats()
    free_entries = {id(e[2]) for lists in a._free.values() for pool in lists for e in pool}
    totals = {"allocated": [0, 0], "reserved": [0, 0], "segments": [0, 0], "isn": [0, 0], "isb": [0, 0],
              "pending": [0, 0], "allocations": [0, 0]}
    n_free = 0
    for seg_ptr, first in a._segments.items():
        assert first.prev is None and first.ptr == seg_ptr
        b, end = first, seg_ptr
        pool = first.pool
        totals["segments"][pool] += 1
        while b is not None:
            assert b.ptr == end and b.pool == pool and b.seg_ptr == seg_ptr
            end += b.size
            if b.allocated:
                totals["allocated"][pool] += b.size
                totals["allocations"][pool] += 1
                assert id(b) not in free_entries
            elif b.event_count:
                totals["pending"][pool] += b.size
                assert id(b) not in free_entries
            else:
                n_free += 1
                assert id(b) in free_entries
                if b.next is not None:
                    assert b.next.allocated or b.next.event_count, "two free neighbours not merged"
                if b.is_split():
                    totals["isn"][pool] += 1
                    totals["isb"][pool] += b.size
            if b.next is not None:
                assert b.next.prev is b
            b = b.next
        totals["reserved"][pool] += end - seg_ptr
    assert n_free == len(free_entries)
    for pool, name in ((0, "large_pool"), (1, "small_pool")):
        assert stats[f"allocated_bytes.{name}.current"] == totals["allocated"][pool]
        assert stats[f"allocation.{name}.current"] == totals["allocations"][pool]
        assert stats[f"reserved_bytes.{name}.current"] == totals["reserved"][pool]
        assert stats[f"segment.{name}.current"] == totals["segments"][pool]
        assert stats[f"inactive_split.{name}.current"] == totals["isn"][pool]
        assert stats[f"inactive_split_bytes.{name}.current"] == totals["isb"][pool]
        assert stats[f"active_bytes.{name}.current"] == totals["allocated"][pool] + totals["pending"][pool]
    for key in ("inactive_split", "inactive_split_bytes"):
        assert stats[f"{key}.all.current"] == stats[f"{key}.large_pool.current"] + stats[f"{key}.small_pool.current"]
    for key in ("allocation", "segment", "active", "allocated_bytes", "reserved_bytes", "active_bytes",
                "requested_bytes"):
        for field in ("current", "allocated", "freed"):
            assert stats[f"{key}.all.{field}"] == \
                stats[f"{key}.large_pool.{field}"] + stats[f"{key}.small_pool.{field}"], (key, field)
        for scope in ("all", "large_pool", "small_pool"):
            s = {f: stats[f"{key}.{scope}.{f}"] for f in ("current", "peak", "allocated", "freed")}
            start = at_reset[f"{key}.{scope}.current"] if at_reset else 0
            assert s["allocated"] - s["freed"] == s["current"] - start, (key, scope, s)
            assert s["peak"] >= s["current"] >= 0, (key, scope, s)
    assert a.reserved == a._raw.in_use
    assert a.allocated <= a.reserved


# ----------------------------------------------------------------------------- sizes
def test_round_size_and_allocation_size_follow_torch():
    assert round_size(1) == 512 and round_size(0) == 512
    assert round_size(512) == 512 and round_size(513) == 1024
    assert round_size(3 * MiB + 4) == 3 * MiB + 512
    # roundup_power2_divisions=4: 1/4 steps between powers of two
    assert round_size(1200 * MiB, 4) == 1280 * MiB
    assert round_size(1024 * MiB, 4) == 1024 * MiB
    assert round_size(1025, 4) == 1536          # below 512 * divisions: plain 512-byte rounding
    assert round_size(5000, 4) == 5120
    assert allocation_size(512) == SMALL_BUFFER
    assert allocation_size(MiB) == SMALL_BUFFER
    assert allocation_size(MiB + 512) == LARGE_BUFFER
    assert allocation_size(10 * MiB - 512) == LARGE_BUFFER
    assert allocation_size(10 * MiB) == 10 * MiB
    assert allocation_size(11 * MiB) == 12 * MiB
    assert format_size(1000) == "1000 bytes" and format_size(1536) == "1.50 KiB"
    assert format_size(2 * MiB) == "2.00 MiB" and format_size(3 << 30) == "3.00 GiB"


def test_alloc_conf_parsing():
    cfg = AllocatorConfig.parse("max_split_size_mb:64, roundup_power2_divisions:4,caching:False")
    assert (cfg.max_split_size, cfg.roundup_power2_divisions, cfg.caching) == (64 * MiB, 4, False)
    assert AllocatorConfig.parse("", no_caching=True).caching is False
    with pytest.raises(ValueError, match="Unrecognized CachingAllocator option: bogus"):
        AllocatorConfig.parse("bogus:1")
    with pytest.raises(ValueError, match="max_split_size_mb too small"):
        AllocatorConfig.parse("max_split_size_mb:20")
    with pytest.raises(ValueError, match="power of 2"):
        AllocatorConfig.parse("roundup_power2_divisions:3")


def test_emulated_capacity_setting(monkeypatch):
    from tritensor.runtime.allocator import emulated_capacity
    for text, n in (("8GiB", 8 << 30), ("512 MiB", 512 * MiB), ("1.5G", 3 << 29), ("4096", 4096)):
        monkeypatch.setenv("TRITENSOR_EMULATED_MEMORY", text)
        assert emulated_capacity() == n
    monkeypatch.setenv("TRITENSOR_EMULATED_MEMORY", "lots")
    with pytest.raises(ValueError, match="TRITENSOR_EMULATED_MEMORY"):
        emulated_capacity()


# ----------------------------------------------------------------------------- reuse, split, merge
def test_small_requests_share_one_2mib_segment_and_merge_back():
    a = make()
    x, y, z = a.malloc(100), a.malloc(1000), a.malloc(5000)
    assert (x.size, y.size, z.size) == (512, 1024, 5120)
    assert y.ptr == x.ptr + 512 and z.ptr == y.ptr + 1024          # carved from one segment in order
    assert a.reserved == SMALL_BUFFER and a.allocated == 512 + 1024 + 5120
    st = a.memory_stats()
    assert st["segment.all.current"] == 1 and st["inactive_split.all.current"] == 1
    assert st["requested_bytes.all.current"] == 100 + 1000 + 5000
    check_invariants(a)
    a.free(y)                       # a hole between two allocated blocks
    check_invariants(a)
    assert a.memory_stats()["inactive_split.all.current"] == 2
    w = a.malloc(600)               # best fit: the 1024-byte hole, not the big rest of the segment
    assert w.ptr == y.ptr and w.size == 1024
    check_invariants(a)
    for b in (w, x, z):
        a.free(b)
        check_invariants(a)
    st = a.memory_stats()
    assert st["inactive_split.all.current"] == 0 and st["allocated_bytes.all.current"] == 0
    assert a.reserved == SMALL_BUFFER              # cached, whole again
    whole = a.malloc(SMALL_BUFFER // 2 + 512)      # > 1 MiB: large pool, a new 20 MiB segment
    assert whole.pool == 0 and a.reserved == SMALL_BUFFER + LARGE_BUFFER
    a.free(whole)
    a.empty_cache()
    assert a.reserved == 0
    check_invariants(a)


def test_large_pool_split_rules():
    a = make()
    x = a.malloc(3 * MiB)           # 1..10 MiB: a 20 MiB segment, split (rest 17 MiB > 1 MiB)
    assert a.reserved == LARGE_BUFFER and x.size == 3 * MiB and x.next is not None
    y = a.malloc(16 * MiB + 512)    # the 17 MiB rest: its remainder is < 1 MiB, so not split
    assert y.ptr == x.ptr + 3 * MiB and y.size == 17 * MiB and a.reserved == LARGE_BUFFER
    check_invariants(a)
    a.free(x)
    a.free(y)
    check_invariants(a)
    z = a.malloc(12 * MiB)          # >= 10 MiB: best fit is the cached 20 MiB segment, split
    assert z.ptr == x.ptr and a.reserved == LARGE_BUFFER
    big = a.malloc(11 * MiB)        # no cached block fits: a segment of its own, 12 MiB
    assert a.reserved == LARGE_BUFFER + 12 * MiB and big.size == 12 * MiB
    check_invariants(a)
    a.free(z)
    a.free(big)
    check_invariants(a)


def test_max_split_size_keeps_oversize_blocks_whole():
    a = make(capacity=256 * MiB, max_split_size=40 * MiB)
    x = a.malloc(50 * MiB)
    a.free(x)
    y = a.malloc(5 * MiB)            # smaller than max_split_size: may not split the 50 MiB block
    assert y.ptr != x.ptr and a.reserved == 50 * MiB + LARGE_BUFFER
    z = a.malloc(45 * MiB)           # oversize request: takes the oversize block (< 20 MiB wasted), unsplit
    assert z.ptr == x.ptr and z.size == 50 * MiB
    st = a.memory_stats()
    assert st["oversize_allocations.current"] == 1 and st["oversize_segments.current"] == 1
    assert st["max_split_size"] == 40 * MiB
    check_invariants(a)


def test_blocks_are_reused_only_on_their_stream():
    a = make()
    x = a.malloc(4096, stream=0)
    a.free(x)
    y = a.malloc(4096, stream=0x1000)     # another stream: a new segment, not x's block
    assert a.reserved == 2 * SMALL_BUFFER and y.ptr != x.ptr
    z = a.malloc(4096, stream=0)
    assert z.ptr == x.ptr
    check_invariants(a)


def test_record_stream_delays_reuse_until_the_streams_work_is_done():
    a = make()
    side = FakeStream(0x2000)
    x = a.malloc(4096, stream=0)
    a.record_stream(x, FakeStream(0))      # its own stream: nothing to wait for
    a.record_stream(x, side)
    ptr = x.ptr
    a.free(x)
    assert len(FakeEvent.made) == 1 and FakeEvent.made[0].stream is side
    st = a.memory_stats()
    assert st["allocated_bytes.all.current"] == 0 and st["active_bytes.all.current"] == 4096
    check_invariants(a)
    y = a.malloc(4096, stream=0)           # the side stream is still busy: not x's memory
    assert y.ptr != ptr
    FakeEvent.made[0].done = True
    a.free(y)                              # y merges back into the rest of the segment
    z = a.malloc(4096, stream=0)           # the event completed: x's block is reused (best fit)
    assert z.ptr == ptr
    check_invariants(a)
    a.free(z)
    assert a.memory_stats()["active_bytes.all.peak"] == 8192
    check_invariants(a)


def test_blocks_held_by_record_stream_are_waited_for_before_memory_runs_out():
    a = make(capacity=2 * MiB)                 # room for one small segment
    x = a.malloc(MiB)
    a.record_stream(x, FakeStream(0x3000))
    a.free(x)
    y = a.malloc(MiB)                          # the segment's other half
    assert a.memory_stats()["active_bytes.all.current"] == 2 * MiB
    z = a.malloc(MiB)                          # no room: the pending event is waited for, x reused
    assert z.ptr == x.ptr
    st = a.memory_stats()
    assert st["num_sync_all_streams"] == 1 and st["num_alloc_retries"] == 1 and st["num_ooms"] == 0
    check_invariants(a)
    a.free(y)
    a.free(z)
    check_invariants(a)


def test_out_of_memory_frees_the_cache_retries_then_raises_and_recovers():
    a = make(capacity=24 * MiB)
    small = [a.malloc(1000) for _ in range(3)]     # one 2 MiB segment
    for b in small:
        a.free(b)
    x = a.malloc(12 * MiB)                          # its own 12 MiB segment
    assert a.reserved == 14 * MiB
    y = a.malloc(10 * MiB)                          # 12+2+10 = 24 MiB: fits
    a.free(y)
    # 12 MiB request: the cache (2 MiB + 10 MiB segments) is released, then it fits
    z = a.malloc(12 * MiB)
    st = a.memory_stats()
    assert st["num_alloc_retries"] == 1 and st["num_ooms"] == 0 and a.reserved == 24 * MiB
    check_invariants(a)
    with pytest.raises(OutOfMemoryError) as info:
        a.malloc(1)
    msg = str(info.value)
    assert isinstance(info.value, RuntimeError)
    assert "out of memory" in msg and "Tried to allocate 2.00 MiB" in msg
    assert "total capacity of 24.00 MiB of which 0 bytes is free" in msg
    assert "24.00 MiB is allocated by tritensor" in msg and "0 bytes is reserved by tritensor but unallocated" in msg
    st = a.memory_stats()
    assert st["num_ooms"] == 1 and st["num_alloc_retries"] == 2
    check_invariants(a)
    a.free(z)                                        # and allocation works again
    w = a.malloc(1)
    assert w.size == 512
    a.free(w)
    a.free(x)
    check_invariants(a)


def test_memory_fraction_limits_what_is_reserved():
    a = make(capacity=100 * MiB)
    a.set_memory_fraction(0.25)                     # 25 MiB allowed
    x = a.malloc(20 * MiB)
    with pytest.raises(OutOfMemoryError, match="25.00 MiB allowed"):
        a.malloc(10 * MiB)
    a.free(x)
    y = a.malloc(10 * MiB)                           # the cached 20 MiB segment serves it
    a.free(y)
    check_invariants(a)


def test_disabled_caching_gives_every_block_back():
    a = make(caching=False)
    x = a.malloc(1000)
    assert x.size == 1024 and a.reserved == 1024
    a.free(x)
    assert a.reserved == 0 and a._raw.in_use == 0
    st = a.memory_stats()
    assert st["num_device_alloc"] == 1 and st["num_device_free"] == 1
    check_invariants(a)


def _random_workload(a, steps=400):
    """Mallocs (on two streams), frees (some with a pending record_stream), completed events,
    empty_cache and resets, the invariants checked after each. A request may be refused only when
    the device could not hold another segment of its size even after the cache was released
    (the allocator's own retry). Returns the number of requests served."""
    rng = random.Random(0)
    streams = [0, 0x1000]
    live = []
    at_reset = None
    served = 0
    for step in range(steps):
        op = rng.random()
        if op < 0.55 or not live:
            size = rng.choice([rng.randint(1, 4096), rng.randint(4096, 2 * MiB), rng.randint(2 * MiB, 24 * MiB)])
            try:
                live.append(a.malloc(size, rng.choice(streams)))
                served += 1
            except OutOfMemoryError:
                assert a._raw.in_use + allocation_size(round_size(size)) > a._raw.capacity, \
                    f"refused {size} bytes with {a._raw.capacity - a._raw.in_use} bytes of the device free"
        elif op < 0.95:
            b = live.pop(rng.randrange(len(live)))
            if rng.random() < 0.2:
                a.record_stream(b, FakeStream(0x5000))
            a.free(b)
        elif op < 0.97:
            for e in FakeEvent.made:
                e.done = True
        elif op < 0.98:
            a.empty_cache()
        elif op < 0.99:
            a.reset_peak_stats()
        else:
            a.reset_accumulated_stats()
            at_reset = a.memory_stats()
        check_invariants(a, at_reset)
    for b in live:
        a.free(b)
    a.empty_cache()
    check_invariants(a, at_reset)
    assert a.reserved == 0 and a.allocated == 0
    return served


def test_statistics_add_up_after_every_operation_of_a_random_workload():
    a = make(capacity=160 * MiB)
    assert _random_workload(a) >= 180          # of ~210 requests; the rest truly did not fit


def test_the_random_workload_sees_an_allocator_that_refuses():
    """The workload above is not passed by an allocator that refuses everything (its statistics
    would add up trivially)."""
    a = make(capacity=160 * MiB)

    def refuse(size, stream=0):
        raise OutOfMemoryError("CUDA out of memory.")
    a.malloc = refuse
    with pytest.raises(AssertionError, match="refused"):
        _random_workload(a)


def test_threads_allocating_and_freeing_at_once():
    import threading
    a = make(capacity=256 * MiB)
    errors = []

    def work(seed):
        rng = random.Random(seed)
        live = []
        try:
            for _ in range(300):
                if live and rng.random() < 0.5:
                    a.free(live.pop(rng.randrange(len(live))))
                else:
                    live.append(a.malloc(rng.choice([100, 5000, 3 * MiB]), stream=seed % 2))
            for b in live:
                a.free(b)
        except Exception as e:          # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    a.free(a.malloc(1))                 # frees deferred by a thread that found the allocator busy
    check_invariants(a)
    assert a.allocated == 0


def test_peaks_and_resets():
    a = make()
    x = a.malloc(4096)
    y = a.malloc(4096)
    a.free(x)
    st = a.memory_stats()
    assert st["allocated_bytes.all.peak"] == 8192 and st["allocated_bytes.all.current"] == 4096
    a.reset_peak_stats()
    assert a.memory_stats()["allocated_bytes.all.peak"] == 4096
    a.reset_accumulated_stats()
    st = a.memory_stats()
    assert st["allocated_bytes.all.allocated"] == 0 and st["allocated_bytes.all.freed"] == 0
    at_reset = a.memory_stats()
    a.free(y)
    st = a.memory_stats()
    assert st["allocated_bytes.all.freed"] == 4096 and st["allocation.all.freed"] == 1
    check_invariants(a, at_reset)


# ----------------------------------------------------------------------------- through tensors
def test_tensor_memory_is_counted_and_reused():
    before = tt.cuda.memory_allocated()
    with tt.cuda.Stream():          # a stream of its own: its pool holds only this test's blocks
        x = tt.empty(1000, device="cuda")                 # 4000 bytes -> a 4096-byte block
        assert tt.cuda.memory_allocated() == before + 4096
        ptr = x.data_ptr()
        del x
        assert tt.cuda.memory_allocated() == before
        y = tt.empty(1000, device="cuda")
        assert y.data_ptr() == ptr
    stats = tt.cuda.memory_stats()
    assert stats["allocated_bytes.all.current"] == tt.cuda.memory_allocated()
    assert stats["reserved_bytes.all.current"] == tt.cuda.memory_reserved()
    assert tt.cuda.max_memory_reserved() >= tt.cuda.memory_reserved()
    nested = tt.cuda.memory_stats_as_nested_dict()
    assert nested["allocated_bytes"]["all"]["current"] == stats["allocated_bytes.all.current"]
    with pytest.warns(FutureWarning, match="renamed to `torch.cuda.memory_reserved`"):
        assert tt.cuda.memory_cached() == tt.cuda.memory_reserved()
    with pytest.warns(FutureWarning):
        assert tt.cuda.max_memory_cached() == tt.cuda.max_memory_reserved()
    tt.cuda.reset_peak_memory_stats()
    assert tt.cuda.max_memory_allocated() == tt.cuda.memory_allocated()
    summary = tt.cuda.memory_summary()
    assert "Allocated memory" in summary and "GPU reserved segments" in summary
    del y


def test_blocks_belong_to_the_stream_they_were_allocated_on():
    s, mine = tt.cuda.Stream(), tt.cuda.Stream()
    with tt.cuda.stream(mine):
        x = tt.empty(1000, device="cuda")
    ptr = x.data_ptr()
    del x
    with tt.cuda.stream(s):
        y = tt.empty(1000, device="cuda")
    assert y.data_ptr() != ptr                    # the other stream's cached block is not taken
    del y
    with tt.cuda.stream(mine):
        z = tt.empty(1000, device="cuda")
    assert z.data_ptr() == ptr


def test_record_stream_on_a_tensor():
    s, mine = tt.cuda.Stream(), tt.cuda.Stream()
    with tt.cuda.stream(mine):      # a stream of its own: its pool holds only this test's blocks
        x = tt.ones(1000, device="cuda")
        with tt.cuda.stream(s):
            y = x * 2                   # x is used on s
        x.record_stream(s)
        ptr = x.data_ptr()
        active = tt.cuda.memory_stats()["active_bytes.all.current"]
        del x
        # the emulated device finishes work at launch, so the event is complete at the next
        # malloc; a real GPU returns the block once s has run
        tt.cuda.synchronize()
        z = tt.empty(1000, device="cuda")
        assert tt.cuda.memory_stats()["active_bytes.all.current"] <= active + 4096
        if tt.cuda.is_emulated():
            assert z.data_ptr() == ptr
    with pytest.raises(NotImplementedError, match="'CPU' backend"):
        tt.ones(2).record_stream(s)
    del y, z


def test_out_of_memory_on_the_device_then_recovery():
    tt.cuda.empty_cache()
    from tritensor.runtime.allocator import allocator_for
    alloc = allocator_for(tt.device("cuda", 0))
    limit = alloc.reserved + 64 * MiB
    tt.cuda.set_per_process_memory_fraction(limit / alloc.mem_info()[1])
    try:
        keep = tt.empty(16 * MiB // 4, device="cuda")
        with pytest.raises(tt.cuda.OutOfMemoryError) as info:
            tt.empty(100 * MiB // 4, device="cuda")
        msg = str(info.value)
        assert msg.startswith("CUDA out of memory. Tried to allocate 100.00 MiB. GPU 0 has a total capacity of")
        assert "allowed; Of the allocated memory" in msg
        assert isinstance(info.value, RuntimeError)
        assert tt.cuda.memory_stats()["num_ooms"] >= 1
        ok = tt.empty(32 * MiB // 4, device="cuda")            # allocation still works
        assert ok.numel() == 8 * MiB
        del keep, ok
    finally:
        tt.cuda.set_per_process_memory_fraction(1.0)
    with pytest.raises(ValueError, match="Allowed range: 0~1"):
        tt.cuda.set_per_process_memory_fraction(1.5)
    with pytest.raises(TypeError, match="must be `float`"):
        tt.cuda.set_per_process_memory_fraction(1)


def test_caching_allocator_alloc_and_delete():
    before = tt.cuda.memory_allocated()
    ptr = tt.cuda.caching_allocator_alloc(3000)
    assert tt.cuda.memory_allocated() == before + 3072
    tt.cuda.caching_allocator_delete(ptr)
    assert tt.cuda.memory_allocated() == before


def test_no_growth_over_training_like_steps():
    """A training loop's allocations (activations, gradients, temporaries of every size, views,
    autograd graphs) reach a steady state: memory_allocated returns to the same value after
    every step and nothing new is reserved. A few steps run real kernels; the 1000 steps replay
    the same pattern of tensor lifetimes without kernels (the interpreter would take minutes)."""
    w = tt.randn(8, 4, device="cuda", requires_grad=True)
    x = tt.randn(16, 8, device="cuda")

    def step():
        loss = (x @ w).relu().sum()
        loss.backward()
        with tt.no_grad():
            w.sub_(0.01 * w.grad)
        w.grad = None

    sizes = [(64, 128), (64, 32), (32,), (1000,), (300, 300), (3, 1 << 18), (1,)]

    def replay(i):
        acts = [tt.empty(*s, device="cuda") for s in sizes]          # forward activations
        views = [a.view(-1)[: 1 + i % 7] for a in acts[::2]]          # views keep blocks alive
        grads = [tt.empty_like(a) for a in reversed(acts)]            # backward, reverse order
        del acts
        tmp = tt.empty(1 + (i * 7919) % 5000, device="cuda")          # a size that varies per step
        del grads, views, tmp

    enabled = gc.isenabled()
    gc.disable()
    try:
        step()
        replay(0)
        base = tt.cuda.memory_allocated()
        reserved = tt.cuda.memory_reserved()
        for _ in range(3):
            step()
            assert tt.cuda.memory_allocated() == base
        for i in range(1000):
            replay(i)
            assert tt.cuda.memory_allocated() == base
        assert tt.cuda.memory_reserved() == reserved       # steady state: nothing new reserved
    finally:
        if enabled:
            gc.enable()


def test_empty_cache_keeps_memory_in_use():
    x = tt.empty(3 * MiB // 4, device="cuda")
    y = tt.empty(5 * MiB // 4, device="cuda")
    del y
    tt.cuda.empty_cache()
    assert tt.cuda.memory_reserved() >= tt.cuda.memory_allocated() >= 3 * MiB
    x[-3:].fill_(2.0)                                  # the memory is still usable
    assert float(x[-1]) == 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tt.cuda.reset_accumulated_memory_stats()
    assert tt.cuda.memory_stats()["allocation.all.allocated"] == 0
    snap = tt.cuda.memory_snapshot()
    assert any(b["state"] == "active_allocated" and b["address"] == x.data_ptr()
               for seg in snap for b in seg["blocks"])
    np.testing.assert_array_equal(x[-3:].cpu().numpy(), [2.0, 2.0, 2.0])
