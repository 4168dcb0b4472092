"""The Triton backend: launchers that turn tensors into pointers, shapes and strides and call
the kernels of ``tritensor.kernels``, one module per kernel family.

Layout (the private modules are re-exported here; the op layer uses only the public names)::

    _plan.py         settings, lazy kernel import, broadcast/coalesce/pieces, tile plans,
                     needs_int64, kernel scalars, row problems (pure functions, no launch)
    _memory.py       scratch buffers, host buffers, _View, dtype stand-ins, upload/download
    _tiled.py        the 2-D tiled launch (transposed operands)     kernels/tiled.py
    _elementwise.py  elementwise (cached launch plans)              kernels/elementwise.py
    _copy.py         copy, fill                                     kernels/copy.py
    _reduce.py       reduce, arg_reduce                             kernels/reduce.py
    _softmax.py      softmax family                                 kernels/softmax.py
    _scan.py         cumsum / cumprod / logcumsumexp, cummax/cummin kernels/scan.py
    _random.py       Philox fills, rejection samplers               kernels/random.py, random_sample.py
    index.py         gather/scatter/compaction + the indexing ops' launches   kernels/index.py
    join.py          cat, stack, flip, tril/triu                    kernels/join.py
    matmul.py        matmul (configs, autotuning cache)             kernels/matmul.py
    nn.py            layer_norm, cross entropy                      kernels/norm.py, loss.py
    optim.py         fused optimizer steps                          kernels/optim.py
    pdist.py         pdist / cdist                                  kernels/pdist.py
    resample.py      grid samplers' forward, nearest upsampling     kernels/resample.py

The families whose launchers share their module's name (elementwise, copy, reduce, softmax,
scan, random) live in private modules so that ``backends.triton.copy`` is always the function;
the other families are used as namespaces (``from ..backends.triton import matmul as tmm``).

From a tensor a launcher uses only ``shape``, ``stride()``, ``_offset``, ``_storage.data_ptr()``,
``dtype`` (``name``, ``itemsize``, ``is_floating_point``) and ``numel()``; kernel pointers come
from ``runtime.launch.pointer``. Every launcher

- returns at once for a zero-size output (no kernel is launched);
- broadcasts each input's strides to the output's shape (stride 0 on broadcast dims) and reads
  every operand in place, whatever its strides;
- coalesces dims across all operands (size-1 dims dropped, neighbours merged where every operand
  is contiguous across them), so contiguous tensors become rank 1 with stride 1, a value Triton
  specialises to a constant and vectorizes;
- passes at most ``MAX_RANK`` dims per launch, looping in Python over leading dims beyond that
  (each piece gets pointers offset to its first element).

Compute dtypes arrive as tritensor dtype names. Two of them compute in a wider type (the result
is the same as computing in the named type and rounding once): ``bool`` computes in int32 with
0/1 values (Triton's int1 arithmetic wraps: True + True would be False), and ``float16`` /
``bfloat16`` compute in float32 (Triton's math functions take only float32/float64).

Reductions with few outputs and a long reduced range run in two deterministic passes through a
scratch buffer (``_scratch``: the caching allocator on a GPU, host memory under the interpreter).

Dtype objects handed to Triton (``tensor.dtype``) must be long-lived singletons: Triton caches a
pointer argument's type by ``id(arg.dtype)``, so a dtype object created per call can be mistaken
for a dead one of another type that had the same id.

The kernel modules are imported on first use, not with this package: Triton decides between
compiled and interpreted kernels when they are decorated, and the runtime sets
``TRITON_INTERPRET`` (emulated device) before the first launch.
"""
from __future__ import annotations

from ...runtime.launch import KernelArg, launch_kernel, pointer  # noqa: F401

# The package-level hooks, read by every launcher at call time (tests and tools rebind them here):
# every launch goes through _run (runtime/launch.py runs it on the current stream of the
# arguments' device, under the interpreter with NumPy's float warnings silenced) ...
_run = launch_kernel
# ... and kernels index in int32 while every index and offset stays below INDEX32_LIMIT. Scratch
# buffers too come from the package's _scratch (compile checks without a GPU rebind it to host memory).
INDEX32_LIMIT = 2 ** 31 - 1

from ._plan import (  # noqa: E402,F401
    FLOAT_SCALAR, GPU_SETTINGS, INT_SCALAR, INTERPRETER_FAST_SETTINGS, INTERPRETER_SETTINGS, MAX_RANK,
    PROFILES, _cdiv, _contiguous_strides, _float_bits, _is_tensor, _Kernels, _kernels, _next_pow2, _prod,
    _row_blocks, _row_problem, _scalar_arg, broadcast_strides, coalesce, current_profile, emulated_blocks,
    fast_dim, gpu_launch_configs, interpreting, launch_profile, needs_int64, pick, pieces,
    set_emulated_profile, settings, tile_plan)
from ._memory import _dtype, _DType, _HostBuffer, _scratch, _View, download, upload  # noqa: E402,F401
from ._elementwise import _EW_PLANS, elementwise  # noqa: E402,F401
from ._copy import copy, fill  # noqa: E402,F401
from ._reduce import arg_reduce, reduce  # noqa: E402,F401
from ._softmax import softmax  # noqa: E402,F401
from ._scan import scan, scan_index  # noqa: E402,F401
from ._random import random, sample  # noqa: E402,F401
