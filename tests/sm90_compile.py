"""The compile side of the sm_90 check: what every compile script (tests/test_kernels_standalone.py,
tests/test_optim.py, tests/test_fusion.py) starts with, in its fresh subprocess (tests/sm90.py's
``run_compile`` starts it; importing this module makes Triton's active driver a target-only one:
sm_90, nothing launched, no GPU needed).

- ``install()``: the launchers (tritensor.backends.triton) compile each launch instead of running
  it (``compile_launch``), and take zeroed host memory for their scratch buffers;
- ``compile_launch(kernel, grid, *args, **meta)``: one launch compiled with the options every real
  launch compiles with (runtime.launch.compile_meta), kept for tests/sm90.py's static facts;
  ``LAST[0]`` is the launch's compiled kernel (None where another part compiles it);
- ``finish()``: the facts written (sm90.finish), and the counts line the parent reads
  (sm90.compiled_counts).

A script can run in parts (TRITENSOR_COMPILE_PART of TRITENSOR_COMPILE_PARTS processes, which
pytest-xdist spreads over its workers). Each part runs every launch on the host, and compiles the
variants whose Triton cache key (kernel, argument types and their divisibility specialization,
constexprs, num_warps, num_stages, options) hashes to it: a variant launched in several places, or
in several parts' share of the launches, is compiled once in all. A part skips another part's
variants before Triton compiles them, through Triton's ``jit_cache_hook``.
"""
import os
import sys
import zlib

from triton import knobs
from triton.backends.compiler import GPUTarget
from triton.runtime.driver import driver

import sm90


class TargetOnlyDriver:   # no GPU needed: compile for sm_90, launch nothing
    def get_current_target(self):
        return GPUTarget("cuda", 90, 32)

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0


driver.set_active(TargetOnlyDriver())

PART = int(os.environ.get("TRITENSOR_COMPILE_PART", "0"))
PARTS = int(os.environ.get("TRITENSOR_COMPILE_PARTS", "1"))
LAST = [None]              # the last launch's compiled kernel; None: another part compiles it
_VARIANTS = set()          # the cache keys of every variant launched (all parts' shares)
_MINE = set()              # those this part compiles
_LAUNCHES = [0]


def _part_of(key):
    """A cache key's part: the same in every process (crc32, not Python's salted hash)."""
    return zlib.crc32(key.encode()) % PARTS


def _compile_only_mine(key, **_):
    """Triton's jit_cache_hook: called with a variant's cache key before Triton compiles it
    (after its in-memory cache missed); returning True skips the compile (warmup returns None)."""
    _VARIANTS.add(key)
    if _part_of(key) != PART:
        return True
    _MINE.add(key)
    return False


knobs.runtime.jit_cache_hook = _compile_only_mine


def compile_launch(kernel, grid, *args, **meta):
    """Compile one launch (this part's variants only) and keep it for the facts; returns the
    compiled kernel or None."""
    from tritensor.runtime.launch import compile_meta
    _LAUNCHES[0] += 1
    compiled = kernel.warmup(*args, grid=grid, **compile_meta(meta))   # the options every launch compiles with
    LAST[0] = compiled
    if compiled is not None:
        assert "cubin" in compiled.asm
        sm90.collect(compiled, sm90.launch_site())
    return compiled


def host_scratch(like, shape, dtype):
    """A launcher's scratch buffer in host memory, zeroed: nothing runs here, and a launcher that
    reads a scratch buffer back to decide its next launches (eigh/svd's convergence measure) must
    decide the same way in every part's process, or the parts would see different variants."""
    from tritensor.backends import triton as tb
    buffer = tb._HostBuffer(max(tb._prod(shape) * dtype.itemsize, 1))
    buffer.host[:] = 0
    return tb._View(shape, tb._contiguous_strides(shape), 0, buffer, dtype)


def install():
    """Route the launchers' kernel launches to ``compile_launch`` and their scratch buffers to
    ``host_scratch``."""
    from tritensor.backends import triton as tb
    tb._run, tb._scratch = compile_launch, host_scratch
    # the launcher modules of the backends/triton package import _scratch by name: rebind it in each
    for name, module in list(sys.modules.items()):
        if name.startswith("tritensor.backends.triton") and hasattr(module, "_scratch"):
            module._scratch = host_scratch


def finish():
    """Write the facts of this part's variants and print the counts line (the script's last)."""
    sm90.finish()
    print(f"compiled {len(_MINE)} of {len(_VARIANTS)} variants in {_LAUNCHES[0]} launches, "
          f"part {PART} of {PARTS}")
