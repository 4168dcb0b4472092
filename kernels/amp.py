"""Mixed-precision loss-scaling kernels: torch's ``_amp_foreach_non_finite_check_and_unscale_``
and ``_amp_update_scale_``.

The unscale is a multi-tensor launch over the gradients of one device and dtype, with the table
layout of the fused optimizers (kernels/optim.py): row r holds [numel, grad address, ...], and
program pid handles one chunk (BLOCK * ITERS elements) of one gradient. Each gradient is
multiplied in place by ``inv_scale`` in the compute dtype (float32 for 16-bit and float32
gradients, float64 for float64 ones, as torch's opmath) and rounded back once; a program that
sees a non-finite value writes 1.0 into ``found_inf``. Several programs may write it: they all
write the same value, as torch's kernel does, so the result is deterministic.

The scale update runs in one program: on overflow the scale is multiplied by the backoff factor
and the growth tracker reset; otherwise the tracker counts the successful step, and after
``growth_interval`` of them the scale grows (if the grown scale is finite) and the tracker
restarts. The factors arrive as float64 bit patterns (Triton types a Python float argument
float32), so the product is formed in float64 and rounded to the float32 scale as torch's
``current_scale * growth_factor`` (float times double) is.
"""
import triton
import triton.language as tl

from .optim import _chunk
from .strided import convert


@triton.jit
def _unscale_block(g_ptr, offs, mask, inv, found_ptr, DTYPE: tl.constexpr, COMPUTE: tl.constexpr):
    g = tl.load(g_ptr + offs, mask=mask).to(COMPUTE)
    # finite: not NaN (g == g) and not +-inf; masked-off lanes (undefined values) never count
    bad = (g != g) | (tl.abs(g) == float("inf"))
    if mask is not None:
        bad = bad & mask
    any_bad = tl.max(bad.to(tl.int32), axis=0) > 0
    tl.store(found_ptr, tl.full((), 1.0, tl.float32), mask=any_bad)
    tl.store(g_ptr + offs, convert(g * inv, DTYPE), mask=mask)


@triton.jit
def amp_unscale_kernel(table, chunk_base, found_ptr, inv_ptr, DTYPE: tl.constexpr, COMPUTE: tl.constexpr,
                       ALIGNED: tl.constexpr, BLOCK: tl.constexpr, ITERS: tl.constexpr):
    """g *= inv_scale for one chunk of one gradient; found_inf = 1 where a value is inf or NaN.
    Row: [numel, grad address]. ``found_ptr``/``inv_ptr``: float32 one-element tensors."""
    base, start, n = _chunk(table, chunk_base, BLOCK, ITERS)
    g_ptr = tl.load(table + base + 1).to(tl.pointer_type(DTYPE))
    if ALIGNED:
        g_ptr = tl.multiple_of(g_ptr, 16)
    inv = tl.load(inv_ptr).to(COMPUTE)
    if start + BLOCK * ITERS <= n:      # a whole chunk: no mask, so loads can be 16-byte vectors
        for it in tl.static_range(ITERS):
            _unscale_block(g_ptr, start + it * BLOCK + tl.arange(0, BLOCK), None, inv, found_ptr, DTYPE, COMPUTE)
    else:
        for it in tl.static_range(ITERS):
            offs = start + it * BLOCK + tl.arange(0, BLOCK)
            _unscale_block(g_ptr, offs, offs < n, inv, found_ptr, DTYPE, COMPUTE)


@triton.jit
def amp_update_scale_kernel(scale_ptr, tracker_ptr, found_ptr, factors):
    """torch's amp_update_scale_cuda_kernel. ``factors``: int64 words [growth_factor bits,
    backoff_factor bits, growth_interval]."""
    growth = tl.load(factors + 0).to(tl.float64, bitcast=True)
    backoff = tl.load(factors + 1).to(tl.float64, bitcast=True)
    interval = tl.load(factors + 2).to(tl.int32)
    scale = tl.load(scale_ptr)
    tracker = tl.load(tracker_ptr)
    found = tl.load(found_ptr)
    successful = tracker + 1
    grown = (scale.to(tl.float64) * growth).to(tl.float32)
    grown_ok = (grown == grown) & (tl.abs(grown) != float("inf"))
    at_interval = successful == interval
    backed_off = (scale.to(tl.float64) * backoff).to(tl.float32)
    overflow = found != 0.0
    new_scale = tl.where(overflow, backed_off, tl.where(at_interval & grown_ok, grown, scale))
    new_tracker = tl.where(overflow | at_interval, 0, successful)
    tl.store(scale_ptr, new_scale)
    tl.store(tracker_ptr, new_tracker)
