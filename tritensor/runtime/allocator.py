"""The caching allocator: one per CUDA device, PyTorch's design (c10/cuda/CUDACachingAllocator.cpp).

- Requests are rounded up to 512 bytes (``round_size``). Requests of at most 1 MiB come from the
  *small* pool, whose segments are 2 MiB; larger ones from the *large* pool, whose segments are
  20 MiB for requests under 10 MiB and the request rounded up to 2 MiB otherwise
  (``allocation_size``). A segment is one raw allocation (cudaMalloc, or host memory on the
  emulated device).
- A request takes the smallest cached block that fits (best fit) among the free blocks of its
  pool *and of the stream it is allocated on*; a block is only ever reused on its own stream, so
  work queued on that stream is ordered before the new owner's. A block much larger than the
  request is split, the rest stays cached; when a block is freed it merges with free neighbours
  of its segment, so the segment can become whole again.
- ``record_stream``: a block also used on other streams goes back to the cache only after the
  work those streams had queued when it was freed has completed (an event per stream, polled at
  the next allocation).
- Out of memory: every cached segment that is wholly free is given back and the raw allocation
  retried (``num_alloc_retries``); if that fails too, ``OutOfMemoryError`` (``num_ooms``), after
  which the allocator is as before and allocation works again.
- Statistics as torch keeps them (``memory_stats``' key names: ``allocated_bytes.all.current``...),
  for allocations, active blocks, requested bytes, segments and reserved bytes: current, peak and
  the sums of increases and decreases; of the inactive split blocks only the current count and
  bytes (computed when asked, so that the hot path stays cheap).

The raw memory comes from CuPy's runtime bindings on a real GPU and from NumPy on the emulated
device, whose "device memory" is host memory (the interpreter reads it) with a capacity of its
own (``TRITENSOR_EMULATED_MEMORY``, bytes or e.g. ``8GiB``; default the host's memory, reserved
lazily), so the out-of-memory path runs in CI.

``TRITENSOR_CUDA_ALLOC_CONF`` (torch's ``PYTORCH_CUDA_ALLOC_CONF``): comma-separated
``key:value`` options ``max_split_size_mb`` (blocks this large are never split),
``roundup_power2_divisions`` (round requests to 1/N steps between powers of two),
``backend:native`` and, for debugging, ``caching:False`` (also ``TRITENSOR_NO_CUDA_MEMORY_CACHING=1``,
torch's ``PYTORCH_NO_CUDA_MEMORY_CACHING``): every block is its own raw allocation and is given
back when freed, so out-of-bounds accesses and use-after-free are not hidden by the cache.
"""
from __future__ import annotations

import os
import re
import threading
from bisect import bisect_left, bisect_right, insort

import numpy as np

from . import graphs as _graphs

KiB, MiB, GiB = 1024, 1024 * 1024, 1024 * 1024 * 1024
MIN_BLOCK_SIZE = 512           # kMinBlockSize: every size is rounded up to a multiple of this
SMALL_SIZE = 1 * MiB           # kSmallSize: largest request served by the small pool
SMALL_BUFFER = 2 * MiB         # kSmallBuffer: segment size of the small pool
LARGE_BUFFER = 20 * MiB        # kLargeBuffer: segment size for requests between 1 and 10 MiB
MIN_LARGE_ALLOC = 10 * MiB     # kMinLargeAlloc: from here on, one segment per request
ROUND_LARGE = 2 * MiB          # kRoundLarge: such segments are rounded up to 2 MiB
SEGMENT_ALIGN = 512            # alignment of an emulated segment (cudaMalloc gives at least 256)

LARGE, SMALL = 0, 1
_POOL_NAMES = ("large_pool", "small_pool")


class OutOfMemoryError(RuntimeError):
    """Raised when the device has no memory left for a request (torch.cuda.OutOfMemoryError)."""


class _RawOutOfMemory(Exception):
    """The raw allocator (cudaMalloc or the emulated device's capacity) refused a segment."""


# ----------------------------------------------------------------------------- configuration
def _parse_bytes(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?i?B?)?\s*", text, re.IGNORECASE)
    if not m:
        raise ValueError(f"TRITENSOR_EMULATED_MEMORY: expected a number of bytes such as 8GiB, got {text!r}")
    unit = (m.group(2) or "").upper().rstrip("B").rstrip("I")
    return int(float(m.group(1)) * {"": 1, "K": KiB, "M": MiB, "G": GiB, "T": 1024 * GiB}[unit])


class AllocatorConfig:
    """Options of the caching allocator (parsed from ``TRITENSOR_CUDA_ALLOC_CONF``)."""
    __slots__ = ("max_split_size", "roundup_power2_divisions", "caching")

    def __init__(self, max_split_size=None, roundup_power2_divisions=0, caching=True):
        self.max_split_size = max_split_size      # None: any block may be split (torch: SIZE_MAX)
        self.roundup_power2_divisions = roundup_power2_divisions
        self.caching = caching

    @classmethod
    def parse(cls, text: str | None, no_caching: bool = False) -> "AllocatorConfig":
        cfg = cls(caching=not no_caching)
        for item in (text or "").split(","):
            if not item.strip():
                continue
            key, sep, value = (p.strip() for p in item.partition(":"))
            if not sep:
                raise ValueError(f"TRITENSOR_CUDA_ALLOC_CONF: expected key:value, got {item!r}")
            if key == "max_split_size_mb":
                mb = int(value)
                if mb <= LARGE_BUFFER // MiB:
                    raise ValueError(f"CachingAllocator option max_split_size_mb too small, must be > {LARGE_BUFFER // MiB}")
                cfg.max_split_size = mb * MiB
            elif key == "roundup_power2_divisions":
                n = int(value)
                if n != 0 and n & (n - 1):
                    raise ValueError("For roundups, the divisions has to be power of 2 or 0 to disable roundup ")
                cfg.roundup_power2_divisions = n
            elif key == "caching":
                if value.lower() not in ("true", "false", "1", "0"):
                    raise ValueError(f"TRITENSOR_CUDA_ALLOC_CONF: caching takes True or False, got {value!r}")
                cfg.caching = cfg.caching and value.lower() in ("true", "1")
            elif key == "backend":
                if value != "native":
                    raise ValueError(f"TRITENSOR_CUDA_ALLOC_CONF: unknown backend {value!r} (only native)")
            else:
                raise ValueError(f"Unrecognized CachingAllocator option: {key}")
        return cfg

    @classmethod
    def from_env(cls) -> "AllocatorConfig":
        no_caching = os.environ.get("TRITENSOR_NO_CUDA_MEMORY_CACHING", "").strip() not in ("", "0")
        return cls.parse(os.environ.get("TRITENSOR_CUDA_ALLOC_CONF"), no_caching)


def round_size(size: int, divisions: int = 0) -> int:
    """The size a request of ``size`` bytes occupies (torch's round_size)."""
    if size < MIN_BLOCK_SIZE:
        return MIN_BLOCK_SIZE
    if divisions > 1 and size > MIN_BLOCK_SIZE * divisions:
        if size & (size - 1) == 0:
            return size
        floor = 1 << (size.bit_length() - 1)
        step = floor >> (divisions.bit_length() - 1)
        if step == 0:
            return floor << 1
        low = size & ~(step - 1)
        return size if low == size else low + step
    return -(-size // MIN_BLOCK_SIZE) * MIN_BLOCK_SIZE


def allocation_size(size: int) -> int:
    """The segment size the raw allocator is asked for when no cached block fits."""
    if size <= SMALL_SIZE:
        return SMALL_BUFFER
    if size < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return -(-size // ROUND_LARGE) * ROUND_LARGE


def format_size(n: int) -> str:
    """torch's format_size: bytes, KiB, MiB or GiB with two decimals."""
    if n <= 1024:
        return f"{n} bytes"
    if n <= MiB:
        return f"{n / KiB:.2f} KiB"
    if n <= GiB:
        return f"{n / MiB:.2f} MiB"
    return f"{n / GiB:.2f} GiB"


# ----------------------------------------------------------------------------- raw memory
class HostMemory:
    """Segments of host memory standing in for device memory (the emulated device), counted
    against a capacity. NumPy's ``empty`` maps pages only when they are touched, so a large
    capacity costs nothing until it is used."""

    def __init__(self, capacity: int):
        self.capacity = int(capacity)
        self.in_use = 0

    def alloc(self, nbytes):
        if self.in_use + nbytes > self.capacity:
            raise _RawOutOfMemory
        try:
            raw = np.empty(nbytes + SEGMENT_ALIGN, dtype=np.uint8)
        except MemoryError:
            raise _RawOutOfMemory from None
        start = (-raw.ctypes.data) % SEGMENT_ALIGN
        buf = raw[start:start + nbytes]
        self.in_use += nbytes
        return buf.ctypes.data, buf

    def free(self, ptr, nbytes, host):
        self.in_use -= nbytes      # NumPy frees the buffer with its last reference

    def mem_info(self):
        return self.capacity - self.in_use, self.capacity


class CudaMemory:
    """Device memory through CuPy's runtime bindings (cudaMalloc / cudaFree).

    While a CUDA graph captures (runtime/graphs.py), these calls run in the relaxed capture
    mode: CUDA refuses cudaMalloc in a thread whose capture mode is global or thread-local (the
    capture is then invalidated), and a capture's new segments are what its private pool grows
    by. torch's allocator does the same (CUDAStreamCaptureModeGuard while captures are underway)."""

    def __init__(self, index):
        self.index = index

    def alloc(self, nbytes):
        import cupy
        with cupy.cuda.Device(self.index), _graphs.relaxed_capture_mode():
            try:
                return cupy.cuda.runtime.malloc(nbytes), None
            except cupy.cuda.runtime.CUDARuntimeError as e:
                if e.status == 2:          # cudaErrorMemoryAllocation
                    raise _RawOutOfMemory from None
                raise

    def free(self, ptr, nbytes, host):
        import cupy
        with cupy.cuda.Device(self.index), _graphs.relaxed_capture_mode():
            cupy.cuda.runtime.free(ptr)

    def mem_info(self):
        import cupy
        with cupy.cuda.Device(self.index), _graphs.relaxed_capture_mode():
            free, total = cupy.cuda.runtime.memGetInfo()
        return int(free), int(total)


# ----------------------------------------------------------------------------- blocks and stats
class Block:
    """A piece of a segment: [ptr, ptr + size). ``prev``/``next`` are its neighbours in the
    segment; ``host`` is the segment's host buffer on the emulated device (None on a GPU)."""
    __slots__ = ("ptr", "size", "requested", "stream", "pool", "allocated", "prev", "next",
                 "stream_uses", "event_count", "seg_ptr", "host", "allocator", "__weakref__")

    def __init__(self, ptr, size, stream, pool, seg_ptr, host, allocator):
        self.ptr, self.size, self.stream, self.pool = ptr, size, stream, pool
        self.seg_ptr, self.host, self.allocator = seg_ptr, host, allocator
        self.requested = 0
        self.allocated = False
        self.prev = self.next = None
        self.stream_uses = None      # set of other streams that used the block (record_stream)
        self.event_count = 0         # events still to complete before the block may be reused

    def is_split(self):
        return self.prev is not None or self.next is not None

    def host_view(self, nbytes):
        """The block's first ``nbytes`` as a NumPy uint8 array (emulated device only)."""
        start = self.ptr - self.seg_ptr
        return self.host[start:start + nbytes]

    def __repr__(self):
        state = "allocated" if self.allocated else "free"
        return f"<Block {self.ptr:#x} size={self.size} {_POOL_NAMES[self.pool]} {state}>"


# memory_stats' per-pool statistics, in torch's order. Each has a current value, a peak, and
# sums of its increases ("allocated") and decreases ("freed").
STATS = ("allocation", "segment", "active", "allocated_bytes", "reserved_bytes", "active_bytes",
         "requested_bytes")
# Free blocks that are part of a split segment (torch's "non-releasable" memory): only their
# current count and bytes are kept, computed when asked, so that splitting and merging on the
# hot path update no statistics.
INACTIVE_SPLIT = ("inactive_split", "inactive_split_bytes")


class _Stat:
    """A statistic changed off the hot path (segments, reserved bytes, oversize blocks)."""
    __slots__ = ("current", "peak", "allocated", "freed")

    def __init__(self):
        self.current = self.peak = self.allocated = self.freed = 0

    def add(self, n):
        self.current += n
        if n >= 0:
            self.allocated += n
            if self.current > self.peak:
                self.peak = self.current
        else:
            self.freed -= n

    def values(self):
        return self.current, self.peak, self.allocated, self.freed


class _Scope:
    """The statistics of one pool, or of both ("all").

    The counters every malloc/free changes are plain ints, kept cheap: allocations (count and
    bytes), requested bytes, and blocks freed by their user but waiting for other streams'
    events (``pend_*``: active but not allocated, so active = allocated + pending). Their sums of
    increases are derived (current + lifetime freed, minus what they were at the last
    ``reset_accumulated``), their active peaks tracked only while blocks are pending.
    """
    __slots__ = ("n", "n_peak", "n_freed", "b", "b_peak", "b_freed", "req", "req_peak", "req_freed",
                 "pend_n", "pend_b", "act_n_peak", "act_b_peak", "offsets",
                 "segment", "reserved_bytes")

    def __init__(self):
        self.n = self.n_peak = self.n_freed = 0
        self.b = self.b_peak = self.b_freed = 0
        self.req = self.req_peak = self.req_freed = 0
        self.pend_n = self.pend_b = self.act_n_peak = self.act_b_peak = 0
        self.offsets = {}            # stat name -> (allocated, freed) at the last reset
        for name in ("segment", "reserved_bytes"):
            setattr(self, name, _Stat())

    def _lifetime(self, name):
        """(current, peak, freed since the start) of a hot statistic."""
        if name == "allocation":
            return self.n, self.n_peak, self.n_freed
        if name == "allocated_bytes":
            return self.b, self.b_peak, self.b_freed
        if name == "requested_bytes":
            return self.req, self.req_peak, self.req_freed
        if name == "active":
            return self.n + self.pend_n, max(self.n_peak, self.act_n_peak), self.n_freed - self.pend_n
        return self.b + self.pend_b, max(self.b_peak, self.act_b_peak), self.b_freed - self.pend_b

    def values(self, name):
        """(current, peak, allocated, freed) of one statistic, as memory_stats reports them."""
        if name in ("segment", "reserved_bytes"):
            return getattr(self, name).values()
        current, peak, freed = self._lifetime(name)
        off_alloc, off_freed = self.offsets.get(name, (0, 0))
        return current, peak, current + freed - off_alloc, freed - off_freed

    def reset_peaks(self):
        self.n_peak, self.b_peak, self.req_peak = self.n, self.b, self.req
        self.act_n_peak, self.act_b_peak = self.n + self.pend_n, self.b + self.pend_b
        for name in ("segment", "reserved_bytes"):
            stat = getattr(self, name)
            stat.peak = stat.current

    def reset_accumulated(self):
        for name in ("allocation", "allocated_bytes", "requested_bytes", "active", "active_bytes"):
            current, _, freed = self._lifetime(name)
            self.offsets[name] = (current + freed, freed)
        for name in ("segment", "reserved_bytes"):
            stat = getattr(self, name)
            stat.allocated = stat.freed = 0


# ----------------------------------------------------------------------------- the allocator
class _Critical:
    __slots__ = ("alloc",)

    def __init__(self, alloc):
        self.alloc = alloc

    def __enter__(self):
        self.alloc._lock.acquire()
        self.alloc._busy = True

    def __exit__(self, *exc):
        alloc = self.alloc
        alloc._busy = False
        alloc._lock.release()
        if alloc._deferred:
            alloc._free_deferred()
        return False


class CachingAllocator:
    """The caching allocator of one device. ``malloc(nbytes, stream)`` returns a Block owned by
    ``stream`` (its ``cuda_stream`` handle), ``free(block)`` gives it back; see the module
    docstring. ``event_factory`` makes the events of ``record_stream`` (default: runtime.streams.Event)."""

    def __init__(self, raw, device_index=0, config: AllocatorConfig | None = None, event_factory=None):
        self._raw = raw
        self.device_index = device_index
        self.config = config if config is not None else AllocatorConfig.from_env()
        self._event_factory = event_factory
        self._free = {}                  # stream -> [large, small]: sorted lists of (size, ptr, block)
        self._lock = threading.Lock()
        self._busy = False                   # inside malloc/free/...: frees are deferred
        self._deferred = []
        self._all = _Scope()
        self._pools = (_Scope(), _Scope())           # large, small
        self._scopes = ((self._pools[LARGE], self._all), (self._pools[SMALL], self._all))
        self._segments = {}                  # segment ptr -> its first block
        self._pending = []                   # (event, block) awaiting completion, oldest first
        self._events_deferred = []           # record_stream'ed blocks freed during a capture
        self._spare = []                     # Block objects merges let go of, reused by splits
        self.num_alloc_retries = 0
        self.num_ooms = 0
        self.num_sync_all_streams = 0
        self.num_device_alloc = 0
        self.num_device_free = 0
        self.oversize_allocations = _Stat()
        self.oversize_segments = _Stat()
        self.fraction = 1.0
        self.allowed_max = None               # bytes a process may reserve (set_memory_fraction)
        # CUDA graphs (runtime/graphs.py): capturing stream handle -> its graph's private pool id.
        # A capture's blocks are keyed by the pool id instead of a stream, so only captures into
        # the same pool reuse them. Empty (one truthiness test in malloc) when nothing captures.
        self.capture_pools = {}
        self.live_pools = set()               # pool ids graphs still use: empty_cache keeps them

    def _stat(self, pool, name, n):
        for scope in self._scopes[pool]:
            getattr(scope, name).add(n)

    @property
    def allocated(self) -> int:
        return self._all.b

    @property
    def reserved(self) -> int:
        return self._all.reserved_bytes.current

    @property
    def peak_allocated(self) -> int:
        return self._all.b_peak

    @property
    def peak_reserved(self) -> int:
        return self._all.reserved_bytes.peak

    # ------------------------------------------------------------------ allocation
    def malloc(self, nbytes: int, stream=0) -> Block:
        """A block of at least ``nbytes`` bytes owned by ``stream``."""
        cfg = self.config
        if cfg.roundup_power2_divisions:
            size = round_size(nbytes, cfg.roundup_power2_divisions)
        else:
            size = MIN_BLOCK_SIZE if nbytes < MIN_BLOCK_SIZE else -(-nbytes // MIN_BLOCK_SIZE) * MIN_BLOCK_SIZE
        pool = SMALL if size <= SMALL_SIZE else LARGE
        if self.capture_pools:
            stream = self.capture_pools.get(stream, stream)
        with self._lock:
            self._busy = True
            try:
                if self._pending and not self.capture_pools:
                    # torch: no event query while a capture runs (cudaEventQuery is illegal then)
                    self._process_events()
                block = None
                if cfg.caching:
                    # best fit among the stream's cached blocks of this pool (_take_free, inline)
                    lists = self._free.get(stream)
                    if lists is not None:
                        free = lists[pool]
                        i = bisect_left(free, (size,))
                        if i < len(free):
                            block = free[i][2]
                            if cfg.max_split_size is None:
                                del free[i]
                            else:
                                block = self._take_free(size, stream, pool)
                if block is None:
                    block = self._new_segment(size, stream, pool)
                remaining = block.size - size
                if remaining >= MIN_BLOCK_SIZE and cfg.caching and (
                        pool == SMALL or (remaining > SMALL_SIZE and (cfg.max_split_size is None or
                                                                      size < cfg.max_split_size))):
                    # Split: the rest stays cached (torch's should_split). Its Block object is
                    # one a merge let go of, when there is one (cheaper than a new one).
                    spare = self._spare
                    if spare:
                        rest = spare.pop()
                        rest.ptr, rest.size, rest.stream, rest.pool = block.ptr + size, remaining, stream, pool
                        rest.seg_ptr, rest.host = block.seg_ptr, block.host
                    else:
                        rest = Block(block.ptr + size, remaining, stream, pool, block.seg_ptr, block.host, self)
                    nxt = rest.next = block.next
                    rest.prev = block
                    if nxt is not None:
                        nxt.prev = rest
                    block.next = rest
                    block.size = size
                    insort(self._free[stream][pool], (remaining, rest.ptr, rest))
                block.allocated = True
                block.requested = nbytes
                bsize = block.size
                # the statistics of the pool and of both pools, unrolled (this is the hot path)
                sc = self._pools[pool]
                sc.n += 1
                if sc.n > sc.n_peak:
                    sc.n_peak = sc.n
                sc.b += bsize
                if sc.b > sc.b_peak:
                    sc.b_peak = sc.b
                sc.req += nbytes
                if sc.req > sc.req_peak:
                    sc.req_peak = sc.req
                sc = self._all
                sc.n += 1
                if sc.n > sc.n_peak:
                    sc.n_peak = sc.n
                sc.b += bsize
                if sc.b > sc.b_peak:
                    sc.b_peak = sc.b
                sc.req += nbytes
                if sc.req > sc.req_peak:
                    sc.req_peak = sc.req
                if sc.pend_n:
                    self._active_peaks()
                if cfg.max_split_size is not None and bsize >= cfg.max_split_size:
                    self.oversize_allocations.add(1)
            finally:
                self._busy = False
        if self._deferred:
            self._free_deferred()
        return block

    def _take_free(self, size, stream, pool):
        """The smallest cached block of ``stream``'s pool that fits ``size``, out of the pool."""
        lists = self._free.get(stream)
        if lists is None:
            return None
        free = lists[pool]
        i = bisect_left(free, (size,))
        if i == len(free):
            return None
        block = free[i][2]
        limit = self.config.max_split_size
        # torch: never split an oversize block for a smaller request, and hand one out only
        # when it wastes less than 20 MiB.
        if limit is not None and (size < limit <= block.size or (size >= limit and block.size >= size + LARGE_BUFFER)):
            return None
        del free[i]
        return block

    def _active_peaks(self):
        """Blocks are pending (freed, waiting for events): active exceeds allocated."""
        for sc in (self._all, *self._pools):
            sc.act_n_peak = max(sc.act_n_peak, sc.n + sc.pend_n)
            sc.act_b_peak = max(sc.act_b_peak, sc.b + sc.pend_b)

    def _new_segment(self, size, stream, pool):
        seg_size = allocation_size(size) if self.config.caching else size
        block = self._raw_segment(seg_size, stream, pool)
        if block is None:
            # Out of memory: wait for the blocks record_stream holds back, give back every cached
            # segment that is wholly free, then retry (a returned block may fit by now).
            self._release_cached_blocks()
            self.num_alloc_retries += 1
            block = self._take_free(size, stream, pool) if self.config.caching else None
            if block is None:
                block = self._raw_segment(seg_size, stream, pool)
        if block is None:
            self.num_ooms += 1
            raise OutOfMemoryError(self._oom_message(seg_size))
        return block

    def _raw_segment(self, seg_size, stream, pool):
        if self.allowed_max is not None and self.reserved + seg_size > self.allowed_max:
            return None
        try:
            ptr, host = self._raw.alloc(seg_size)
        except _RawOutOfMemory:
            return None
        self.num_device_alloc += 1
        block = Block(ptr, seg_size, stream, pool, ptr, host, self)
        self._segments[ptr] = block
        if stream not in self._free:
            self._free[stream] = [[], []]
        self._stat(pool, "segment", 1)
        self._stat(pool, "reserved_bytes", seg_size)
        limit = self.config.max_split_size
        if limit is not None and seg_size >= limit:
            self.oversize_segments.add(1)
        return block

    def _insert_free(self, block):
        lists = self._free.get(block.stream)
        if lists is None:
            lists = self._free[block.stream] = [[], []]
        insort(lists[block.pool], (block.size, block.ptr, block))

    def _remove_free(self, block):
        free = self._free[block.stream][block.pool]
        i = bisect_left(free, (block.size, block.ptr))
        assert free[i][2] is block, "caching allocator: free list out of order"
        del free[i]

    # ------------------------------------------------------------------ freeing
    def free(self, block: Block):
        """The block's last user is gone: it returns to the cache, at once or, when other
        streams used it (record_stream), once their work queued so far has completed."""
        if self._busy:
            # Called while this allocator is at work: from a storage's __del__ that the garbage
            # collector ran in the middle of it (the lock is held by this very thread), or from
            # another thread. The block is freed when the current operation ends. The check
            # after the append closes the race with an operation that ended in between (it
            # looked at the deferred list before the block was on it).
            self._deferred.append(block)
            if not self._busy:
                self._free_deferred()
            return
        with self._lock:
            self._busy = True
            try:
                block.allocated = False
                bsize = block.size
                sc = self._pools[block.pool]
                sc.n -= 1
                sc.n_freed += 1
                sc.b -= bsize
                sc.b_freed += bsize
                sc = self._all
                sc.n -= 1
                sc.n_freed += 1
                sc.b -= bsize
                sc.b_freed += bsize
                limit = self.config.max_split_size
                if limit is not None and bsize >= limit:
                    self.oversize_allocations.add(-1)
                if block.stream_uses:
                    if self.capture_pools:
                        # torch: a capture forbids recording (then querying) end-of-life events;
                        # they are recorded when the last capture ends (insert_deferred_events)
                        self._count_pending(block)
                        self._events_deferred.append(block)
                    else:
                        self._insert_events(block)
                else:
                    self._free_block(block)
            finally:
                self._busy = False
        if self._deferred:
            self._free_deferred()

    def _free_deferred(self):
        deferred = self._deferred
        while deferred:
            try:
                block = deferred.pop()      # atomic: two threads draining never take one block twice
            except IndexError:              # another thread took the last one
                return
            self.free(block)

    def _critical(self):
        """``with self._critical():`` for the slow paths (frees that arrive meanwhile wait)."""
        return _Critical(self)

    release = free   # the first allocator's name for it

    def _free_block(self, block):
        """Return a block to its pool, merged with its free neighbours (torch's free_block)."""
        pool, requested = block.pool, block.requested
        sc = self._pools[pool]
        sc.req -= requested
        sc.req_freed += requested
        sc = self._all
        sc.req -= requested
        sc.req_freed += requested
        if not self.config.caching:
            self._release_segment(block)
            return
        prev, nxt = block.prev, block.next
        if prev is None and nxt is None:
            lists = self._free.get(block.stream)
            if lists is None:
                lists = self._free[block.stream] = [[], []]
            insort(lists[pool], (block.size, block.ptr, block))
            return
        # Merge with the free neighbours (not those waiting for events).
        lists = self._free.get(block.stream)
        if lists is None:
            lists = self._free[block.stream] = [[], []]
        free = lists[pool]
        if prev is not None and not prev.allocated and not prev.event_count:
            del free[bisect_left(free, (prev.size, prev.ptr))]
            block.ptr = prev.ptr
            block.size += prev.size
            prev = block.prev = prev.prev
            if prev is not None:
                prev.next = block
            else:
                self._segments[block.seg_ptr] = block
        if nxt is not None and not nxt.allocated and not nxt.event_count:
            del free[bisect_left(free, (nxt.size, nxt.ptr))]
            block.size += nxt.size
            absorbed, nxt = nxt, nxt.next
            block.next = nxt
            if nxt is not None:
                nxt.prev = block
            if len(self._spare) < 64:      # a free, unreferenced Block for the next split
                absorbed.prev = absorbed.next = absorbed.host = None
                self._spare.append(absorbed)
        insort(free, (block.size, block.ptr, block))

    def record_stream(self, block: Block, stream):
        """Mark ``block`` as used by work queued on ``stream`` (a Stream; Tensor.record_stream)."""
        with self._critical():
            if stream.cuda_stream == block.stream:
                return
            if block.stream_uses is None:
                block.stream_uses = set()
            block.stream_uses.add(stream)

    def _insert_events(self, block, counted=False):
        factory = self._event_factory
        if factory is None:
            from .streams import Event as factory
        for s in block.stream_uses:
            event = factory()
            event.record(s)
            block.event_count += 1
            self._pending.append((event, block))
        block.stream_uses = None
        if not counted:
            self._count_pending(block)

    def _count_pending(self, block):
        for sc in self._scopes[block.pool]:
            sc.pend_n += 1
            sc.pend_b += block.size

    def insert_deferred_events(self):
        """The last capture ended: record the events of the blocks freed during it that other
        streams used (torch's insert_events_deferred_until_no_capture)."""
        with self._critical():
            if self.capture_pools:
                return
            deferred, self._events_deferred = self._events_deferred, []
            for block in deferred:
                self._insert_events(block, counted=True)

    def _event_done(self, block):
        block.event_count -= 1
        if block.event_count == 0:
            for sc in self._scopes[block.pool]:
                sc.pend_n -= 1
                sc.pend_b -= block.size
            self._free_block(block)

    def _process_events(self):
        """Return blocks whose recorded streams have finished the work queued before the free."""
        still = []
        for event, block in self._pending:
            if event.query():
                self._event_done(block)
            else:
                still.append((event, block))
        self._pending = still

    def _synchronize_and_free_events(self):
        if not self._pending:
            return
        self.num_sync_all_streams += 1
        pending, self._pending = self._pending, []
        for event, block in pending:
            event.synchronize()
            self._event_done(block)

    # ------------------------------------------------------------------ giving memory back
    def _release_segment(self, block):
        self._raw.free(block.ptr, block.size, block.host)
        self.num_device_free += 1
        self._segments.pop(block.seg_ptr, None)
        self._stat(block.pool, "segment", -1)
        self._stat(block.pool, "reserved_bytes", -block.size)
        limit = self.config.max_split_size
        if limit is not None and block.size >= limit:
            self.oversize_segments.add(-1)

    def _release_cached_blocks(self):
        """Give back every cached segment that is wholly free (torch's release_cached_blocks)."""
        self._synchronize_and_free_events()
        live = self.live_pools
        for key, lists in self._free.items():
            if live and key in live:        # a graph's replays still use these blocks
                continue
            for pool in (LARGE, SMALL):
                kept = []
                for entry in lists[pool]:
                    block = entry[2]
                    if block.prev is None and block.next is None:
                        self._release_segment(block)
                    else:
                        kept.append(entry)
                lists[pool] = kept
        self._free = {s: lists for s, lists in self._free.items() if lists[0] or lists[1]}

    def segment_host_buffer(self, ptr):
        """The host buffer of the emulated segment holding address ``ptr`` (None on a real GPU
        or when no segment of this allocator holds it). CUDA graphs keep these alive so that a
        replay never reads memory given back to the system (runtime/graphs.py)."""
        with self._critical():
            starts = sorted(self._segments)
            i = bisect_right(starts, ptr) - 1
            if i < 0:
                return None
            host = self._segments[starts[i]].host
            if host is None or ptr >= starts[i] + host.size:
                return None
            return host

    def release_pool(self, pool_id):
        """A graph pool no graph uses any more: give back its cached segments that are wholly
        free (blocks still held by tensors return to the pool's cache when freed, and go back
        to the device at the next empty_cache)."""
        with self._critical():
            self.live_pools.discard(pool_id)
            lists = self._free.get(pool_id)
            if lists is None:
                return
            for kind in (LARGE, SMALL):
                kept = []
                for entry in lists[kind]:
                    block = entry[2]
                    if block.prev is None and block.next is None and not block.event_count:
                        self._release_segment(block)
                    else:
                        kept.append(entry)
                lists[kind] = kept
            if not (lists[0] or lists[1]):
                del self._free[pool_id]

    def empty_cache(self):
        with self._critical():
            self._release_cached_blocks()

    def synchronize_pending(self):
        """Wait for the events of record_stream'ed blocks and return those blocks to the cache."""
        with self._critical():
            self._synchronize_and_free_events()

    # ------------------------------------------------------------------ limits and reports
    def mem_info(self):
        return self._raw.mem_info()

    def set_memory_fraction(self, fraction: float):
        self.fraction = fraction
        self.allowed_max = int(fraction * self._raw.mem_info()[1])

    def _oom_message(self, seg_size):
        free, total = self._raw.mem_info()
        allocated, reserved = self.allocated, self.reserved
        allowed = f"{format_size(self.allowed_max)} allowed; " if self.allowed_max is not None else ""
        in_use = "" if isinstance(self._raw, HostMemory) else \
            f"Including non-tritensor memory, this process has {format_size(total - free)} memory in use. "
        return (f"CUDA out of memory. Tried to allocate {format_size(seg_size)}. GPU {self.device_index} has a "
                f"total capacity of {format_size(total)} of which {format_size(free)} is free. {in_use}{allowed}"
                f"Of the allocated memory {format_size(allocated)} is allocated by tritensor, and "
                f"{format_size(reserved - allocated)} is reserved by tritensor but unallocated. If reserved but "
                "unallocated memory is large try setting TRITENSOR_CUDA_ALLOC_CONF=max_split_size_mb:<MB> to "
                "avoid fragmentation (see the memory management section of PyTorch's CUDA semantics notes).")

    def memory_stats(self) -> dict:
        """torch.cuda.memory_stats' flat dict, sorted by key."""
        with self._critical():
            out = {}
            for name in STATS:
                for scope_name, scope in (("all", self._all), ("large_pool", self._pools[LARGE]),
                                          ("small_pool", self._pools[SMALL])):
                    values = scope.values(name)
                    for field, v in zip(("current", "peak", "allocated", "freed"), values):
                        out[f"{name}.{scope_name}.{field}"] = v
            counts, sizes = [0, 0], [0, 0]
            for lists in self._free.values():
                for pool in (LARGE, SMALL):
                    for size, _, block in lists[pool]:
                        if block.prev is not None or block.next is not None:
                            counts[pool] += 1
                            sizes[pool] += size
            for name, values in zip(INACTIVE_SPLIT, (counts, sizes)):
                out[f"{name}.all.current"] = values[0] + values[1]
                out[f"{name}.large_pool.current"] = values[LARGE]
                out[f"{name}.small_pool.current"] = values[SMALL]
            for name in ("oversize_allocations", "oversize_segments"):
                for field, v in zip(("current", "peak", "allocated", "freed"), getattr(self, name).values()):
                    out[f"{name}.{field}"] = v
            out["num_alloc_retries"] = self.num_alloc_retries
            out["num_ooms"] = self.num_ooms
            out["num_sync_all_streams"] = self.num_sync_all_streams
            out["num_device_alloc"] = self.num_device_alloc
            out["num_device_free"] = self.num_device_free
            limit = self.config.max_split_size
            out["max_split_size"] = -1 if limit is None else limit
            return dict(sorted(out.items()))

    def reset_peak_stats(self):
        with self._critical():
            for scope in (self._all, *self._pools):
                scope.reset_peaks()
            for s in (self.oversize_allocations, self.oversize_segments):
                s.peak = s.current

    def reset_accumulated_stats(self):
        with self._critical():
            for scope in (self._all, *self._pools):
                scope.reset_accumulated()
            for s in (self.oversize_allocations, self.oversize_segments):
                s.allocated = s.freed = 0
            self.num_alloc_retries = self.num_ooms = self.num_sync_all_streams = 0
            self.num_device_alloc = self.num_device_free = 0

    def snapshot(self) -> list:
        """One dict per segment with its blocks (torch.cuda.memory_snapshot's main fields)."""
        with self._critical():
            out = []
            for seg_ptr, first in sorted(self._segments.items()):
                blocks, b = [], first
                while b is not None:
                    state = "active_allocated" if b.allocated else \
                        ("active_pending_free" if b.event_count else "inactive")
                    blocks.append({"address": b.ptr, "size": b.size,
                                   "requested_size": b.requested if state != "inactive" else 0, "state": state})
                    b = b.next
                out.append({"device": self.device_index, "address": seg_ptr,
                            "total_size": sum(x["size"] for x in blocks),
                            "allocated_size": sum(x["size"] for x in blocks if x["state"] == "active_allocated"),
                            "active_size": sum(x["size"] for x in blocks if x["state"] != "inactive"),
                            "requested_size": sum(x["requested_size"] for x in blocks),
                            "stream": first.stream, "segment_type": _POOL_NAMES[first.pool].split("_")[0],
                            "blocks": blocks})
            return out


# ----------------------------------------------------------------------------- one per device
_allocators: dict = {}


def emulated_capacity() -> int:
    """Bytes of "device memory" of each emulated device: TRITENSOR_EMULATED_MEMORY, or the host's."""
    text = os.environ.get("TRITENSOR_EMULATED_MEMORY", "").strip()
    if text:
        return _parse_bytes(text)
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


_allocators_lock = threading.Lock()


def allocator_for(dev) -> CachingAllocator:
    key = (dev.type, dev.index)
    alloc = _allocators.get(key)
    if alloc is None:
        with _allocators_lock:       # one allocator per device, whichever thread asks first
            alloc = _allocators.get(key)
            if alloc is None:
                from .device import cuda_mode
                raw = HostMemory(emulated_capacity()) if cuda_mode() == "emulated" else CudaMemory(dev.index)
                alloc = _allocators[key] = CachingAllocator(raw, dev.index)
    return alloc


def existing_allocators():
    return list(_allocators.values())
