"""The cuda device's backend: the Triton launchers of backends/triton/, compiled on a GPU or run
by Triton's interpreter on host memory (the emulated device); both are this one object, Triton
decides between them when the kernels are first imported.

Only the triton package's public names are used. A cuda generator's stream is Philox at (seed,
offset): the kernels draw from stream position offset + i, and the generator's offset advances
past every 32-bit word drawn, in multiples of 4 (float64 numbers take two words each).
"""
from __future__ import annotations

import numpy as np

from . import triton as tb
from ..runtime import device_errors as _errors
from ..runtime import graphs as _graphs
from .base import Backend, empty, first_out_of_range
from .triton import index as ti


class TritonBackend(Backend):
    kind = "cuda"
    host_memory = False
    torch_kind = "cuda"
    rng_state_words = 0
    fused_kernels = frozenset({"mul_backward"})     # tb.elementwise("mul_backward", (gx, gy), ...)
    sampler_dtypes = frozenset({"float16", "bfloat16", "float32", "float64"})   # computed in float32

    # ---------------------------------------------------------------- computing ops
    def run(self, op, out, args, attrs, compute):
        op.kernel(out, *args, compute=compute.name, **attrs)

    def launcher(self, op):
        return op.kernel          # an op's Triton launcher already has the launcher convention

    def compute_arg(self, dtype):
        return dtype.name         # launchers take the compute dtype by name

    # ---------------------------------------------------------------- memory
    def copy(self, dst, src):
        tb.copy(dst, src)

    def fill(self, out, value):
        tb.fill(out, value)

    def compact(self, mask, shape, dtype, values=None):
        device = mask.device
        return ti.compacted(mask, tuple(shape), lambda s: empty(s, dtype, device), values=values)

    def check_index(self, index, low, high, check, ignore=None, safe=True):
        if index.numel() == 0:
            return index
        if high > low and (_errors.deferred() or _graphs.CAPTURES):
            # torch's device-side assert: nothing read back (runtime/device_errors.py); a capture
            # can read nothing back either, even under CUDA_LAUNCH_BLOCKING=1
            out = empty(tuple(index.shape), index.dtype, index.device) if safe else None
            ti.check_deferred(index, out, _errors.record_for(index.device), low, high, check.id, ignore)
            if out is None:
                return index
            # the copy stands for the index: an in-place change of the index after the forward
            # is still torch's error when a backward reads it (a shared version counter)
            out._version_counter = index._version_counter
            return out
        if ignore is None and ti.count_out_of_range(index, low, high) == 0:
            return index
        bad = first_out_of_range(index._to_host_array(), low, high, ignore)
        if bad is not None:
            raise check.exception(bad)
        return index

    def scratch(self, like, shape, dtype):
        return empty(shape, dtype, like.device)

    # ---------------------------------------------------------------- random numbers
    def random(self, out, kind, generator, a, b):
        n = out.numel()
        if kind == "integers":
            tb.random(out, "integers", generator._kernel_seed(), generator._take_offset(n), a, b - a)
            return
        words = n * (2 if out.dtype.name == "float64" else 1)      # float64: two words a number
        tb.random(out, kind, generator._kernel_seed(), generator._take_offset(words), float(a), float(b))

    def sample(self, out, kind, params, generator):
        """Rejection samplers (kernels/random_sample.py): each element owns one Philox counter
        of a range reserved here (its rounds are the counter's third word)."""
        n = out.numel()
        tb.sample(out, kind, params, generator._kernel_seed(), generator._take_offset(4 * n) // 4)

    def permutation(self, n, generator, device):
        """The order that sorts n random 32-bit keys from the stream (drawn by the Philox kernel,
        sorted on the host: tritensor has no sort kernel yet)."""
        from .. import dtypes as _dt
        keys = empty((n,), _dt.int64, device)
        if n:
            tb.random(keys, "integers", generator._kernel_seed(), generator._take_offset(n), 0, 2 ** 32)
        return np.argsort(keys._to_host_array(), kind="stable")

    def check_rng_state(self, nbytes, words=None):
        if words is None:
            if nbytes != 2 * 8:
                raise RuntimeError("RNG state is wrong size")
        elif words[1] % 4:
            raise RuntimeError("offset must be a multiple of 4")
