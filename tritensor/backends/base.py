"""One backend object per device kind: the seam between the op layer and the memory it computes on.

ops/ never asks which device it is on. Whatever differs between devices (how an op is computed,
how memory is copied, filled, compacted, filled with random numbers, where scratch memory comes
from, and which of torch's device-specific names its errors use) is a method or attribute of the
device's backend, found with ``backend_for(device)``:

    cpu   NumpyBackend  (backends/numpy_backend.py)  the NumPy reference on host memory
    cuda  TritonBackend (backends/gpu_backend.py)    the Triton launchers, compiled on a GPU or
                                                     run by Triton's interpreter (emulated cuda)

A new device kind is one new Backend subclass registered in ``_BACKEND_CLASSES``, not edits
across ops/.

The interface (every method takes and returns tritensor Tensors, on this backend's device):

run(op, out, args, attrs, compute)
    compute primitive ``op`` (an OpDef) of ``args`` and ``attrs`` into ``out`` (already
    allocated, non-empty), computing in dtype ``compute``.
launcher(op) / compute_arg(dtype)
    the same computation as one callable ``launcher(op)(out, *args, compute=compute_arg(c),
    **attrs)``: dispatch() keeps it in its per-signature cache, so a repeated call reaches the
    NumPy reference or the Triton launcher with no call in between (the seam costs nothing).
copy(dst, src) / fill(out, value)
    dst[...] = src (broadcast, cast to dst's dtype; src on this device) / out[...] = value.
copy_target(shape, dtype, device, non_blocking)
    the empty contiguous tensor a copy from another device lands in (the cpu backend pins it
    for a non_blocking copy, as torch's _to_copy does).
compact(mask, shape, dtype, values=None)
    stream compaction over the elements of ``shape`` where ``mask`` (broadcast) is nonzero:
    their coordinates, an int64 (count, ndim) tensor (nonzero), or, with ``values``, the
    selected values as a 1-D tensor of ``dtype`` (masked_select).
check_index(index, low, high, check, ignore=None, safe=True)
    torch's bounds check of integer tensor ``index`` against [low, high) (values equal to
    ``ignore`` pass; ``check``: a runtime.device_errors.Check, the message): returns the index
    the op goes on with. The cpu raises the check's exception with the first offending value at
    once; cuda defers it to the next sync point (torch's device-side assert) and returns a
    clamped copy when ``safe`` (runtime/device_errors.py), or checks as the cpu under
    CUDA_LAUNCH_BLOCKING=1.
random(out, kind, generator, a, b)
    fill ``out`` from ``generator``'s stream: "uniform" U[a, b), "normal" (mean a, std b),
    "integers" in [a, b). permutation(n, generator, device): a random permutation of range(n)
    for ``device``, as a NumPy integer array.
rng_extra_state(generator) / check_rng_state(nbytes, words) / set_rng_state(generator, words)
    get_state/set_state's device part: the state words the device keeps besides (seed, offset)
    (``rng_state_words`` of them), torch's errors for a bad state, and restoring one.
scratch(like, shape, dtype)
    a contiguous temporary buffer on ``like``'s device (launchers' and kernels' workspace).

Attributes: ``kind`` (the device type served), ``host_memory`` (tensors are host memory the
host computes on synchronously: pinning applies to them, to() casts on the other side of a
transfer, a 0-d tensor joins another device's op as a scalar), ``torch_kind`` ("cpu" or
"cuda": which of torch's device-specific kernel names and error texts this backend's errors
quote) with ``torch_name(cpu, cuda)`` picking one of them, and ``fused_kernels`` (multi-output
kernels an op may use directly, such as Triton's "mul_backward").

Why the error wording is a backend attribute and not a table in ops/: torch's texts differ by
the device kind it ran on ("abs_cpu" / "abs_cuda", "m1 and m2" / "mat1 and mat2"); a new
backend says which of torch's devices it stands in for, and every message follows.
"""
from __future__ import annotations

import numpy as np

from ..runtime.storage import Storage
from ..tensor import Tensor, contiguous_strides


class Backend:
    """The interface every device kind implements (see the module docstring)."""

    kind = None            # the device type served: "cpu", "cuda"
    host_memory = False    # tensors are NumPy-addressable host memory computed on by the host
    torch_kind = None      # "cpu" or "cuda": the device whose torch error texts are quoted
    rng_state_words = 0    # 64-bit words of generator state besides (seed, offset)
    fused_kernels = frozenset()    # multi-output kernels ops may call directly ("mul_backward")
    # the dtypes of sample()'s draws and of the implicit-gradient ops, as torch's kernels of the
    # device dispatch them (its cpu kernels: float32 and float64; cuda: the 16-bit floats too)
    sampler_dtypes = frozenset({"float32", "float64"})

    # ---------------------------------------------------------------- computing ops
    def run(self, op, out, args, attrs, compute):
        raise NotImplementedError(f"tritensor: the {self.kind} backend cannot run '{op.name}'")

    def launcher(self, op):
        raise NotImplementedError(f"tritensor: the {self.kind} backend cannot run '{op.name}'")

    def compute_arg(self, dtype):
        return dtype

    # ---------------------------------------------------------------- memory
    def copy(self, dst, src):
        raise NotImplementedError

    def fill(self, out, value):
        raise NotImplementedError

    def copy_target(self, shape, dtype, device, non_blocking):
        return empty(shape, dtype, device)

    def compact(self, mask, shape, dtype, values=None):
        raise NotImplementedError

    def check_index(self, index, low, high, check, ignore=None, safe=True):
        raise NotImplementedError

    def scratch(self, like, shape, dtype):
        raise NotImplementedError

    # ---------------------------------------------------------------- random numbers
    def random(self, out, kind, generator, a, b):
        raise NotImplementedError

    def permutation(self, n, generator, device):
        raise NotImplementedError

    def sample(self, out, kind, params, generator):
        """Fill ``out`` (float32/float64) with draws of torch's parameterised samplers, one per
        element from the contiguous ``params`` of out's shape and dtype: kind "gamma" (alpha:
        Gamma(alpha, 1), at least the dtype's smallest normal), "poisson" (rate) or "binomial"
        (count, prob)."""
        raise NotImplementedError

    def rng_extra_state(self, generator):
        """The generator state words besides (seed, offset), as ints (get_state)."""
        return []

    def set_rng_state(self, generator, words):
        """Put ``generator`` back at the state in ``words`` (checked by check_rng_state)."""
        generator.manual_seed(words[0])
        generator._offset = words[1]

    def check_rng_state(self, nbytes, words=None):
        """torch's errors for a state of the wrong size (``words`` None) or content."""

    # ---------------------------------------------------------------- error wording
    def torch_name(self, cpu, cuda):
        """The one of torch's two device-specific names (kernel names, argument wording) that
        this backend's errors quote."""
        return cpu if self.torch_kind == "cpu" else cuda

    def __repr__(self):
        return f"<tritensor {type(self).__name__} for '{self.kind}'>"


def empty(shape, dtype, device) -> Tensor:
    """A new contiguous tensor (what dispatch.empty makes; backends sit below ops/)."""
    shape = tuple(int(s) for s in shape)
    n = 1
    for s in shape:
        n *= s
    return Tensor._make(Storage(n * dtype.itemsize, device), shape, contiguous_strides(shape), 0, dtype)


# device type -> "module:Class"; imported on first use (the Triton backend imports triton)
_BACKEND_CLASSES = {"cpu": ("numpy_backend", "NumpyBackend"), "cuda": ("gpu_backend", "TritonBackend")}
_backends: dict = {}


def backend_for(device) -> Backend:
    """The backend of ``device``'s kind (one object per kind, made on first use)."""
    b = _backends.get(device.type)
    if b is None:
        import importlib
        module, cls = _BACKEND_CLASSES[device.type]
        # setdefault: threads racing here all get the first object (backends are compared by identity)
        b = _backends.setdefault(device.type, getattr(importlib.import_module(f"{__package__}.{module}"), cls)())
    return b


__all__ = ["Backend", "backend_for", "empty"]


def first_out_of_range(values, low, high, ignore=None):
    """The first value of NumPy array ``values`` outside [low, high) (``ignore`` passes), or None."""
    a = values.reshape(-1)
    bad = (a < low) | (a >= high)
    if ignore is not None:
        bad &= a != ignore
    hits = np.flatnonzero(bad)
    return int(a[hits[0]]) if hits.size else None
