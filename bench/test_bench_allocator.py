"""Caching allocator benchmarks: the host cost of a cached allocation plus its free (target: at
most 2 us), for the common cases, and of a whole cuda Storage (what every op pays for its output).

    pytest bench/test_bench_allocator.py --benchmark-enable -n 0

The allocator is pure Python, so these are host timings on both kinds of cuda device; the
emulated device measures the same code (its raw memory is only touched on a cache miss).
- ``exact``: a large block that is reused whole (no split, no merge);
- ``split``: a small block carved from a cached 2 MiB segment and merged back when freed (the
  case of every small tensor);
- ``storage``: Storage(nbytes, device): the current stream, the allocator, the block and the
  release when the storage dies.
"""
from __future__ import annotations

import pytest

import tritensor as tt
from tritensor.runtime.allocator import allocator_for
from tritensor.runtime.storage import Storage

DEVICE = tt.device("cuda", 0)


@pytest.fixture
def allocator():
    if not tt.cuda.is_available():
        pytest.skip("no cuda device (real or emulated)")
    return allocator_for(DEVICE)


@pytest.mark.parametrize("case,nbytes", [("exact", 30 << 20), ("split", 4096)])
def test_cached_malloc_free(benchmark, allocator, case, nbytes):
    malloc, free = allocator.malloc, allocator.free
    free(malloc(nbytes))                 # warm: the segment is cached from here on
    reserved = allocator.reserved

    def cycle():
        free(malloc(nbytes))

    benchmark(cycle)
    assert allocator.reserved == reserved            # every cycle was served from the cache


def test_storage_create_and_release(benchmark, allocator):
    Storage(4096, DEVICE)
    reserved = allocator.reserved
    benchmark(lambda: Storage(4096, DEVICE))
    assert allocator.reserved == reserved
