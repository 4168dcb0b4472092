"""Elementwise ops over 2-D tiles, for operands that disagree about which dim is contiguous: an
add of a transposed input, ``contiguous()`` of a transpose, a copy into a transposed view.

The 1-D kernels (elementwise.py, copy.py) walk the output in row-major order. An operand whose
stride-1 dim is another dim is then read with a large stride: each 32-byte sector it fetches
serves one element, and the read runs at a fraction of the memory bandwidth. Here a program owns
a [TILE_R, TILE_C] tile of two dims: C, the output's contiguous dim, and R, the dim along which
such an operand is contiguous. Every operand's offsets are ``base + rows * stride_r + cols *
stride_c``; Triton specialises a stride equal to 1 into a constant, so its coalescing pass knows
which axis each pointer is contiguous along, gives every load and store a layout that runs along
that operand's own fast dim (16-byte vectors on a GPU), and moves values between the layouts
through shared memory. The other dims (at least one, size 1 when there are none) are the outer
index: each program's tile sits at one outer position.

``FN`` is an elementwise function of kernels/elementwise.py taking N_IN operands, or ``identity``
for a copy (COMPUTE then is the source's own compute dtype, so the value reaches the store as a
direct cast would). Offsets are int64: a tile costs one multiply-add per dim per element, not the
1-D path's div/mod.
"""
import triton
import triton.language as tl

from .strided import convert, scalar_value, store_cast, strided_offset


@triton.jit
def _tile_offsets(outer, outer_shape, strides, rows, cols, ORANK: tl.constexpr):
    """Element offsets of the [rows, cols] tile at outer position ``outer``; ``strides`` holds
    ORANK outer strides, then the strides along R and C."""
    base = strided_offset(outer, outer_shape, strides, ORANK)
    return base + rows[:, None] * strides[ORANK] + cols[None, :] * strides[ORANK + 1]


@triton.jit
def _tile_operand(ptr, val, offsets, mask, KIND: tl.constexpr, COMPUTE: tl.constexpr):
    """A tensor operand's tile (KIND 0), or a scalar argument broadcast to the tile's shape."""
    if KIND == 0:
        r = convert(tl.load(ptr + offsets, mask=mask, other=0), COMPUTE)
    else:
        r = tl.broadcast_to(scalar_value(val, KIND, COMPUTE), offsets.shape)
    return r


@triton.jit(do_not_specialize=["a_val", "b_val", "c_val"])
def tiled_kernel(out_ptr, a_ptr, a_val, b_ptr, b_val, c_ptr, c_val, R, C, outer_shape,
                 out_strides, a_strides, b_strides, c_strides,
                 FN: tl.constexpr, N_IN: tl.constexpr, A_KIND: tl.constexpr, B_KIND: tl.constexpr,
                 C_KIND: tl.constexpr, COMPUTE: tl.constexpr, ORANK: tl.constexpr,
                 TILE_R: tl.constexpr, TILE_C: tl.constexpr):
    """out = FN(a[, b[, c]]) over a problem of shape outer_shape + (R, C). Each ``*_strides`` is
    a tuple of ORANK outer strides followed by the strides along R and C (stride 0: broadcast).
    Unused operands (N_IN < 3) and scalar operands (KIND 1: integer, 2: float64 bits) are never
    loaded. Programs: outer position slowest, then tile rows, then tile columns."""
    pid = tl.program_id(0).to(tl.int64)
    tiles_c = tl.cdiv(C, TILE_C)
    per_outer = tl.cdiv(R, TILE_R) * tiles_c
    outer = pid // per_outer
    tile = pid % per_outer
    rows = (tile // tiles_c) * TILE_R + tl.arange(0, TILE_R).to(tl.int64)
    cols = (tile % tiles_c) * TILE_C + tl.arange(0, TILE_C).to(tl.int64)
    mask = (rows < R)[:, None] & (cols < C)[None, :]
    a = _tile_operand(a_ptr, a_val, _tile_offsets(outer, outer_shape, a_strides, rows, cols, ORANK), mask,
                      A_KIND, COMPUTE)
    if N_IN == 1:
        r = FN(a)
    else:
        b = _tile_operand(b_ptr, b_val, _tile_offsets(outer, outer_shape, b_strides, rows, cols, ORANK), mask,
                          B_KIND, COMPUTE)
        if N_IN == 2:
            r = FN(a, b)
        else:
            c = _tile_operand(c_ptr, c_val, _tile_offsets(outer, outer_shape, c_strides, rows, cols, ORANK),
                              mask, C_KIND, COMPUTE)
            r = FN(a, b, c)
    store_cast(out_ptr + _tile_offsets(outer, outer_shape, out_strides, rows, cols, ORANK), r, mask)
