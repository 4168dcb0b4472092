"""Strided copy with a dtype cast, and fill.

copy_kernel serves contiguous(), .to(dtype), clone and copy_: ``src`` (any strides, stride 0 on
broadcast dims) is read in place and written to ``out`` (any strides) in its element type:
float -> int truncates toward zero, anything -> bool is != 0, bool -> number is 0/1.
"""
import triton
import triton.language as tl

from .strided import block_indices, store_cast, strided_offset


@triton.jit
def copy_kernel(out_ptr, src_ptr, n, shape, out_strides, src_strides,
                RANK: tl.constexpr, BLOCK: tl.constexpr, WIDE: tl.constexpr):
    idx = block_indices(BLOCK, WIDE)
    mask = idx < n
    v = tl.load(src_ptr + strided_offset(idx, shape, src_strides, RANK), mask=mask, other=0)
    store_cast(out_ptr + strided_offset(idx, shape, out_strides, RANK), v, mask)


@triton.jit(do_not_specialize=["value"])
def fill_kernel(out_ptr, value, n, shape, strides, KIND: tl.constexpr,
                RANK: tl.constexpr, BLOCK: tl.constexpr, WIDE: tl.constexpr):
    """out[...] = value. KIND 1: ``value`` is an integer already in the output's range;
    KIND 2: the int64 bit pattern of a float64 (see strided.scalar_value)."""
    idx = block_indices(BLOCK, WIDE)
    mask = idx < n
    if KIND == 1:
        v = value.to(tl.int64)
    else:
        v = value.to(tl.int64).to(tl.float64, bitcast=True)
    v = tl.broadcast_to(v, [BLOCK])
    store_cast(out_ptr + strided_offset(idx, shape, strides, RANK), v, mask)
