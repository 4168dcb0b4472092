"""tt.cuda's memory functions (torch.cuda.memory): statistics, limits and reports of the caching
allocator (runtime/allocator.py). ``device`` is None (the current device), an index, a string or a
tt.device, as in torch."""
from __future__ import annotations

import collections
import warnings

from .allocator import OutOfMemoryError, allocator_for, existing_allocators  # noqa: F401
from .device import as_device, current_device, device


def _alloc(dev=None):
    if dev is None:
        dev = current_device()
    if isinstance(dev, int) and not isinstance(dev, bool):
        dev = device("cuda", dev)
    d = as_device(dev)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return allocator_for(d)


def memory_allocated(device=None) -> int:
    """Bytes of device memory occupied by tensors (rounded block sizes, as torch counts them)."""
    return _alloc(device).allocated


def max_memory_allocated(device=None) -> int:
    """Peak of memory_allocated since the start or the last reset_peak_memory_stats."""
    return _alloc(device).peak_allocated


def memory_reserved(device=None) -> int:
    """Bytes of device memory held by the caching allocator (allocated plus cached)."""
    return _alloc(device).reserved


def max_memory_reserved(device=None) -> int:
    return _alloc(device).peak_reserved


def memory_cached(device=None) -> int:
    """Deprecated; see memory_reserved."""
    warnings.warn("`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`",
                  FutureWarning, stacklevel=2)
    return memory_reserved(device)


def max_memory_cached(device=None) -> int:
    """Deprecated; see max_memory_reserved."""
    warnings.warn("`torch.cuda.max_memory_cached` has been renamed to `torch.cuda.max_memory_reserved`",
                  FutureWarning, stacklevel=2)
    return max_memory_reserved(device)


def reset_peak_memory_stats(device=None) -> None:
    """Make every peak statistic its current value."""
    _alloc(device).reset_peak_stats()


def reset_accumulated_memory_stats(device=None) -> None:
    """Zero the sums of increases and decreases ("allocated"/"freed"), retries and OOM counts."""
    _alloc(device).reset_accumulated_stats()


def reset_max_memory_allocated(device=None) -> None:
    warnings.warn("torch.cuda.reset_max_memory_allocated now calls torch.cuda.reset_peak_memory_stats, "
                  "which resets /all/ peak memory stats.", FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device=None) -> None:
    warnings.warn("torch.cuda.reset_max_memory_cached now calls torch.cuda.reset_peak_memory_stats, "
                  "which resets /all/ peak memory stats.", FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def memory_stats(device=None) -> "collections.OrderedDict":
    """The allocator's statistics with torch's key names ("allocated_bytes.all.current", ...),
    sorted by key."""
    return collections.OrderedDict(_alloc(device).memory_stats())


def memory_stats_as_nested_dict(device=None) -> dict:
    nested: dict = {}
    for key, value in _alloc(device).memory_stats().items():
        *path, last = key.split(".")
        d = nested
        for p in path:
            d = d.setdefault(p, {})
        d[last] = value
    return nested


def empty_cache() -> None:
    """Give the cached, wholly free segments of every device back to the driver (or the
    emulated device); memory in use by tensors is not touched."""
    for alloc in existing_allocators():
        alloc.empty_cache()


def set_per_process_memory_fraction(fraction, device=None) -> None:
    """Limit the caching allocator to ``fraction`` of the device's total memory: a request that
    would reserve more raises OutOfMemoryError (after freeing the cache and retrying)."""
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _alloc(device).set_memory_fraction(fraction)


def get_per_process_memory_fraction(device=None) -> float:
    return _alloc(device).fraction


def caching_allocator_alloc(size, device=None, stream=None) -> int:
    """Allocate ``size`` bytes from the caching allocator on ``stream`` (default: current);
    returns the device pointer, to be given back with caching_allocator_delete."""
    from .streams import Stream, current_stream
    alloc = _alloc(device)
    if stream is None:
        stream = current_stream(alloc.device_index)
    if isinstance(stream, Stream):
        stream = stream.cuda_stream
    if not isinstance(stream, int):
        raise TypeError("Invalid type for stream argument, must be `torch.cuda.Stream` or `int` "
                        "representing a pointer to an existing stream")
    block = alloc.malloc(int(size), stream)
    _raw_blocks[block.ptr] = block
    return block.ptr


def caching_allocator_delete(mem_ptr) -> None:
    block = _raw_blocks.pop(mem_ptr, None)
    if block is None:
        raise RuntimeError(f"invalid device pointer: {mem_ptr:#x}")
    block.allocator.free(block)


_raw_blocks: dict = {}   # blocks handed out by caching_allocator_alloc, by pointer


def memory_snapshot() -> list:
    """The segments of every device's allocator, each with its blocks (torch.cuda.memory_snapshot's
    segment fields, without allocation traces)."""
    return [seg for alloc in existing_allocators() for seg in alloc.snapshot()]


def memory_summary(device=None, abbreviated=False) -> str:
    """A table of the allocator's statistics, laid out as torch.cuda.memory_summary."""
    alloc = _alloc(device)
    stats = alloc.memory_stats()

    def fmt_size_torch(n, pref):
        units = ["B ", "KiB", "MiB", "GiB", "TiB", "PiB"]
        unit = 0
        while unit < len(units) - 1 and pref >= 768 * 1024:
            pref //= 1024
            n //= 1024
            unit += 1
        return f"{n:6d} {units[unit]}"

    def fmt_count(n, pref):
        prefixes = [" ", "K", "M"]
        p = 0
        while p < len(prefixes) - 1 and pref >= 750 * 1000:
            pref //= 1000
            n //= 1000
            p += 1
        return f"{n:7d} {prefixes[p]} "

    metrics = [("allocated_bytes", "Allocated memory", fmt_size_torch),
               ("active_bytes", "Active memory", fmt_size_torch),
               ("requested_bytes", "Requested memory", fmt_size_torch),
               ("reserved_bytes", "GPU reserved memory", fmt_size_torch),
               ("inactive_split_bytes", "Non-releasable memory", fmt_size_torch),
               ("allocation", "Allocations", fmt_count),
               ("active", "Active allocs", fmt_count),
               ("segment", "GPU reserved segments", fmt_count),
               ("inactive_split", "Non-releasable allocs", fmt_count)]
    lines = ["=" * 75,
             f" {'':16} tritensor CUDA memory summary, device ID {alloc.device_index:<15d} ",
             "-" * 75,
             f"  {'':9} CUDA OOMs: {stats['num_ooms']:<12d} | {'':6} cudaMalloc retries: "
             f"{stats['num_alloc_retries']:<8d}  ",
             "=" * 75,
             "        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  "]
    for key, name, f in metrics:
        lines.append("-" * 75)
        rows = [("all", name)]
        if not abbreviated:
            rows += [("large_pool", "      from large pool"), ("small_pool", "      from small pool")]
        pref = None
        for sub, label in rows:
            # only the current value is kept of some statistics (inactive_split): "-" for the rest
            vals = [stats.get(f"{key}.{sub}.{field}") for field in ("current", "peak", "allocated", "freed")]
            if pref is None:
                pref = vals
            lines.append(f" {label:<21} | " + " | ".join(
                f(v, p) if v is not None else f"{'-':>10}" for v, p in zip(vals, pref)) + " ")
    for key, name in (("oversize_allocations", "Oversize allocations"), ("oversize_segments", "Oversize GPU segments")):
        lines.append("-" * 75)
        vals = [stats[f"{key}.{field}"] for field in ("current", "peak", "allocated", "freed")]
        lines.append(f" {name:<21} | " + " | ".join(fmt_count(v, v) for v in vals) + " ")
    lines.append("=" * 75)
    return "\n".join(lines) + "\n"

