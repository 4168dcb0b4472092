"""Threads (issue 20.4): several host threads using tritensor at once get the results each would
get alone, on cpu and on the (emulated) cuda device.

What "the same seeds" means here. Each thread trains its own model, and everything random in it
(the initial weights, the data, the labels) is drawn from a ``tt.Generator`` of the thread's own,
seeded with the thread's seed; the training draws nothing from the shared default generator (no
dropout). So a thread's result depends on its seed only, never on how the threads interleave,
and it must equal bit for bit the result of the same seed trained alone. The shared default
generator is torch's too: locked, so threads drawing from it at once get disjoint draws, but
which thread gets which draw depends on the interleaving (checked as a set, below).

The threads start together (a barrier) and the interpreter switches threads every 20 us instead
of every 5 ms, so their launches, allocations and frees really interleave.
"""
from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import tritensor as tt
from tritensor import nn
from tritensor.nn import functional as F
from tritensor.runtime import launch as _launch
from tritensor.runtime.allocator import CachingAllocator, HostMemory

SEEDS = (11, 12, 13, 14)


def run_threads(target, n, timeout=120):
    """target(i) in n threads started together; their results (an exception is re-raised)."""
    results = [None] * n
    barrier = threading.Barrier(n)

    def worker(i):
        try:
            barrier.wait()
            results[i] = target(i)
        except BaseException as e:         # noqa: BLE001 (handed back to the test)
            results[i] = e

    interval = sys.getswitchinterval()
    sys.setswitchinterval(2e-5)
    try:
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout)
        assert not any(t.is_alive() for t in threads), "a thread hung"
    finally:
        sys.setswitchinterval(interval)
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return results


def train(seed, device):
    """Two Adam steps of a tiny classifier (linear, layer norm, GELU, linear, cross entropy):
    matmuls, reductions, a norm, softmax/log-softmax inside cross entropy, elementwise kernels
    and the optimizer's fused step. Returns every parameter and the last loss, on the host."""
    g = tt.Generator(device=device).manual_seed(seed)
    model = nn.Sequential(nn.Linear(5, 8), nn.LayerNorm(8), nn.GELU(), nn.Linear(8, 3)).to(device)
    for p in model.parameters():
        nn.init.normal_(p, 0.0, 0.5, generator=g)
    x = tt.randn(12, 5, generator=g, device=device)
    y = tt.randint(0, 3, (12,), generator=g, device=device)
    opt = tt.optim.Adam(model.parameters(), lr=0.05)
    for _ in range(2):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return [p.detach().cpu().numpy() for p in model.parameters()] + [loss.detach().cpu().numpy()]


@pytest.mark.parametrize("kind", ["cpu", "cuda"])
def test_four_threads_train_bit_identically_to_one(kind):
    if kind == "cpu":
        def job(i):
            return train(SEEDS[i], "cpu")
    else:
        def job(i):
            # per thread: its own current device (cuda:0 or cuda:1) and, for two of them, a side
            # stream as the current stream (both are thread-local, as in torch)
            index = i % tt.cuda.device_count()
            tt.cuda.set_device(index)
            if i >= 2:
                with tt.cuda.stream(tt.cuda.Stream()):
                    return train(SEEDS[i], "cuda")
            return train(SEEDS[i], "cuda")
    together = run_threads(job, len(SEEDS))
    for i, seed in enumerate(SEEDS):
        device = "cpu" if kind == "cpu" else f"cuda:{i % tt.cuda.device_count()}"
        alone = train(seed, device)
        assert len(alone) == len(together[i])
        for a, b in zip(alone, together[i]):
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), f"thread {i} (seed {seed}) differs"
    # not vacuous: different seeds trained different models
    assert together[0][0].tobytes() != together[1][0].tobytes()


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_threads_drawing_from_the_default_generator_get_disjoint_draws(device):
    """torch's default generator is shared and locked: four threads drawing at once get, between
    them, exactly the numbers one thread drawing as much in a row gets (in some order)."""
    n, draws = 64, 6
    tt.manual_seed(1234)
    together = run_threads(lambda i: [tt.rand(n, device=device).cpu().numpy() for _ in range(draws)], 4)
    tt.manual_seed(1234)
    alone = np.concatenate([tt.rand(n, device=device).cpu().numpy() for _ in range(4 * draws)])
    got = np.concatenate([d for thread in together for d in thread])
    np.testing.assert_array_equal(np.sort(got), np.sort(alone))
    assert np.unique(alone).size == alone.size       # the draws themselves are all different


def test_one_allocator_shared_by_threads_keeps_exact_books():
    """The caching allocator is shared by every thread of a device (as torch's, with its mutex):
    four threads allocating and freeing blocks of mixed sizes on their own streams, with frees
    arriving while another thread is inside the allocator, leave it as a single thread would:
    nothing allocated, every block merged back, everything given back by empty_cache."""
    alloc = CachingAllocator(HostMemory(1 << 40), 0)
    sizes = [100, 512, 3000, 70_000, 1 << 20, (1 << 20) + 1, 5 << 20, 12 << 20]

    def job(i):
        rng = np.random.default_rng(i)
        live = []
        for step in range(600):
            if live and rng.random() < 0.45:
                alloc.free(live.pop(rng.integers(len(live))))
            else:
                live.append(alloc.malloc(int(rng.choice(sizes)), stream=0x1000 * (1 + i % 2)))
        for b in live:
            alloc.free(b)
        return step

    run_threads(job, 4)
    stats = alloc.memory_stats()
    assert alloc.allocated == 0 and stats["active_bytes.all.current"] == 0
    assert stats["allocation.all.current"] == 0 and stats["requested_bytes.all.current"] == 0
    assert stats["allocation.all.allocated"] == stats["allocation.all.freed"] > 0
    assert stats["inactive_split.all.current"] == 0        # every split block merged back
    alloc.empty_cache()
    assert alloc.reserved == 0 and alloc._raw.in_use == 0


def test_compiled_launches_take_no_lock(monkeypatch):
    """Only interpreted launches are serialised: a compiled launch goes on while another thread
    holds the interpreter's lock."""
    launched = []
    monkeypatch.setitem(_launch._state, "mode", "compiled")
    monkeypatch.setitem(_launch._state, "blocking", False)
    monkeypatch.setattr(_launch, "launch_compiled", lambda kernel, grid, args, meta, index: launched.append(grid))
    held, release = threading.Event(), threading.Event()

    def hold():
        with _launch._INTERPRETER_LOCK:
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(30)
        done = threading.Event()
        runner = threading.Thread(target=lambda: (_launch.launch_kernel(object(), (3,)), done.set()))
        runner.start()
        assert done.wait(10), "a compiled launch waited for the interpreter's lock"
        runner.join()
    finally:
        release.set()
        holder.join()
    assert launched == [(3,)]


def test_a_free_arriving_as_another_thread_leaves_the_allocator_is_not_lost():
    """A free that finds the allocator busy (another thread inside it) is deferred to the end of
    that thread's operation. When that operation ends just between the check and the deferral
    (the other thread has already looked at the deferred list), the freeing thread returns the
    block itself: it is not left hanging until some later allocation."""
    alloc = CachingAllocator(HostMemory(1 << 30), 0)
    block = alloc.malloc(4096)

    class EndsMeanwhile(list):
        def append(self, item):
            alloc._busy = False          # the other thread's operation ends right now
            super().append(item)

    alloc._deferred = EndsMeanwhile()
    alloc._busy = True                   # another thread is inside the allocator
    alloc.free(block)
    assert not alloc._deferred and alloc.allocated == 0
    assert alloc.memory_stats()["allocation.all.current"] == 0
