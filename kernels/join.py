"""flip and tril/triu: copies that move or mask elements by their coordinates.

(cat and stack need no kernel of their own: each input is one strided copy, copy.copy_kernel,
into a narrow or select view of the output.)

Both kernels walk the output in row-major order; every operand is described by (shape, strides)
tuples of length RANK (see strided.py), read and written in place whatever its strides.
"""
import triton
import triton.language as tl

from .strided import store_cast, strided_offset


@triton.jit
def flip_kernel(out_ptr, src_ptr, n, shape, out_strides, src_strides, flips,
                RANK: tl.constexpr, BLOCK: tl.constexpr):
    """out[c] = src[c'], c' = c with every dim d where flips[d] == 1 reversed (size-1-c_d).
    Reading reversed coordinates keeps every stride non-negative: tritensor has no negative
    strides, so flip returns a copy."""
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    src_off = tl.zeros_like(idx)
    rem = idx
    for d in tl.static_range(RANK - 1, -1, -1):   # innermost dim first
        if d > 0:
            c = rem % shape[d]
            rem = rem // shape[d]
        else:
            c = rem
        c = tl.where(flips[d] != 0, shape[d] - 1 - c, c)
        src_off += c * src_strides[d]
    v = tl.load(src_ptr + src_off, mask=mask, other=0)
    store_cast(out_ptr + strided_offset(idx, shape, out_strides, RANK), v, mask)


@triton.jit
def tri_kernel(out_ptr, src_ptr, n, diagonal, shape, out_strides, src_strides,
               UPPER: tl.constexpr, RANK: tl.constexpr, BLOCK: tl.constexpr):
    """tril (UPPER False): out[..., i, j] = src[..., i, j] where j - i <= diagonal, else 0;
    triu (UPPER True): where j - i >= diagonal. The last two of the RANK dims are the matrix
    (rows, cols); the leading ones are batch dims. ``out`` may be ``src`` (tril_/triu_): each
    element reads only its own position."""
    idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    col = idx % shape[RANK - 1]
    row = (idx // shape[RANK - 1]) % shape[RANK - 2]
    if UPPER:
        keep = col - row >= diagonal
    else:
        keep = col - row <= diagonal
    # masked-off elements are not even read: a zero is stored there
    v = tl.load(src_ptr + strided_offset(idx, shape, src_strides, RANK), mask=mask & keep, other=0)
    store_cast(out_ptr + strided_offset(idx, shape, out_strides, RANK), v, mask)
