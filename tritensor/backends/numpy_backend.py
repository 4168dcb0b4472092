"""The cpu device's backend: the NumPy reference (backends/numpy_ref.py) on host memory.

Everything here works on NumPy views of the tensors' host memory; the values written are the
reference's (numpy_ref._cast: bool as != 0, floats to integers truncated, NaN/inf to 0).
"""
from __future__ import annotations

import numpy as np

from . import numpy_ref
from .base import Backend, empty, first_out_of_range


class NumpyBackend(Backend):
    kind = "cpu"
    host_memory = True
    torch_kind = "cpu"
    # NumPy's Philox: counter (4 words), buffer (4), buffer_pos, has_uint32, uinteger
    rng_state_words = 11

    def __init__(self):
        self._launchers = {}          # OpDef -> numpy_ref.run_op bound to it

    # ---------------------------------------------------------------- computing ops
    def run(self, op, out, args, attrs, compute):
        numpy_ref.run_op(op, out, *args, compute=compute, **attrs)

    def launcher(self, op):
        fn = self._launchers.get(op)
        if fn is None:
            fn = self._launchers[op] = numpy_ref.launcher(op)
        return fn

    # ---------------------------------------------------------------- memory
    def copy(self, dst, src):
        np.copyto(dst._host_view(), numpy_ref._cast(src._host_view(), dst.dtype), casting="unsafe")

    def fill(self, out, value):
        view = out._host_array      # the reference's kept view (numpy_ref._view): no new array
        if view is None:
            view = numpy_ref._view(out) if 0 not in out._shape else out._host_view()
        view[...] = numpy_ref._cast(np.asarray(value), out.dtype)

    def copy_target(self, shape, dtype, device, non_blocking):
        if non_blocking:
            # a device -> host copy that does not wait lands in pinned memory (torch's _to_copy)
            from ..runtime.pinned import empty_pinned
            return empty_pinned(shape, dtype)
        return empty(shape, dtype, device)

    def compact(self, mask, shape, dtype, values=None):
        m = np.broadcast_to(np.asarray(mask._host_view()), shape)
        if values is None:
            result = np.argwhere(m != 0).astype(np.int64)
        else:
            result = np.broadcast_to(values._host_view(), shape)[m.astype(bool, copy=False)]
        out = empty(result.shape, dtype, mask.device)
        if result.size:
            out._host_view()[...] = result
        return out

    def check_index(self, index, low, high, check, ignore=None, safe=True):
        if index.numel():
            bad = first_out_of_range(index._host_view(), low, high, ignore)
            if bad is not None:
                raise check.exception(bad)
        return index

    def scratch(self, like, shape, dtype):
        return empty(shape, dtype, like.device)

    # ---------------------------------------------------------------- random numbers
    def random(self, out, kind, generator, a, b):
        engine = generator._np
        if kind == "integers":
            vals = engine.integers(a, b, size=out.shape, dtype=np.int64)
        else:
            dt = np.float64 if out.dtype.name == "float64" else np.float32
            with np.errstate(over="ignore", invalid="ignore"):
                if kind == "uniform":
                    vals = engine.random(out.shape, dtype=dt) * (b - a) + a
                elif kind == "normal":
                    vals = engine.standard_normal(out.shape, dtype=dt) * b + a
                elif kind == "log_normal":
                    vals = np.exp(engine.standard_normal(out.shape, dtype=dt) * b + a)
                elif kind == "exponential":      # a = 1 / lambda
                    vals = engine.standard_exponential(out.shape, dtype=dt) * a
                elif kind == "cauchy":
                    vals = a + b * np.tan(np.pi * (engine.random(out.shape, dtype=dt) - 0.5))
                elif kind == "geometric":        # b = 1 / log(1 - p): trials up to the first success
                    vals = np.maximum(np.ceil(np.log1p(-engine.random(out.shape)) * b), 1.0)
                else:
                    raise ValueError(f"random: unknown kind {kind!r}")
            if not out.dtype.is_floating_point:      # geometric counts: wrap into the dtype as C casts do
                vals = np.nan_to_num(vals, posinf=2.0 ** 62).astype(np.int64)
        with np.errstate(over="ignore", invalid="ignore"):
            out._host_view()[...] = vals.astype(out.dtype.numpy_dtype)

    def permutation(self, n, generator, device):
        return generator._np.permutation(n)

    def sample(self, out, kind, params, generator):
        out._host_view()[...] = numpy_ref.sample(kind, [p._host_view() for p in params], generator._np)

    def rng_extra_state(self, generator):
        st = generator._np.bit_generator.state
        return ([int(v) for v in st["state"]["counter"]] + [int(v) for v in st["buffer"]]
                + [int(st["buffer_pos"]), int(st["has_uint32"]), int(st["uinteger"])])

    def check_rng_state(self, nbytes, words=None):
        size = (2 + self.rng_state_words) * 8
        if words is None and nbytes != size:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {size} but found "
                               f"the input RNG state size to be {nbytes}")

    def set_rng_state(self, generator, words):
        super().set_rng_state(generator, words)
        st = generator._np.bit_generator.state
        st["state"]["counter"] = np.array(words[2:6], dtype=np.uint64)
        st["buffer"] = np.array(words[6:10], dtype=np.uint64)
        st["buffer_pos"], st["has_uint32"], st["uinteger"] = words[10], words[11], words[12]
        generator._np.bit_generator.state = st
