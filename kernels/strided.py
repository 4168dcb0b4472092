"""Shared machinery of the strided kernels: row-major index -> element offset, and the cast a
value takes on its way into memory.

A launcher describes every operand by (shape, strides) after coalescing dims across all operands
(size-1 dims dropped, mergeable neighbours merged), so a contiguous tensor arrives as rank 1 with
stride 1, which Triton specialises to a constant and vectorizes. Shapes and strides travel as tuple
kernel arguments of length ``RANK`` (at most ``MAX_RANK``; launchers split larger ranks).
"""
import triton
import triton.language as tl

MAX_RANK = 6   # dims per launch; launchers loop over leading dims beyond this


@triton.jit
def block_indices(BLOCK: tl.constexpr, WIDE: tl.constexpr):
    """The BLOCK row-major indices of this program: int64 when WIDE, else int32. The launcher
    asks for int32 only when every index and every element offset of every operand fits in
    31 bits; then strided_offset's div/mod and address arithmetic run in 32 bits. (A 64-bit
    division is a long emulated sequence on NVIDIA GPUs; LLVM guards it with a run-time test
    that takes a 32-bit division when the values fit, so int64 costs that test and branch plus
    64-bit multiply-adds per dim per element: seen in the sm_90 PTX, not yet timed.)"""
    if WIDE:
        idx = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    else:
        idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    return idx


@triton.jit
def strided_offset(idx, shape, strides, RANK: tl.constexpr):
    """Element offsets of the row-major linear indices ``idx`` (int32 or int64, see
    block_indices) in a tensor of ``shape`` and ``strides`` (tuples of RANK ints). The outermost
    dim needs no modulo."""
    off = tl.zeros_like(idx)
    rem = idx
    for d in tl.static_range(RANK - 1, 0, -1):   # innermost dim first
        off += (rem % shape[d]) * strides[d]
        rem = rem // shape[d]
    off += rem * strides[0]
    return off


@triton.jit
def _f64_to_f32_round_odd(x):
    """float64 -> float32 rounding to odd (truncate, then set the last bit if inexact), so that
    a following float32 -> bfloat16 round-to-nearest-even rounds as a direct conversion would."""
    f = x.to(tl.float32)
    back = f.to(tl.float64)
    bits = f.to(tl.int32, bitcast=True)
    inexact = (back != x) & (x == x)
    bits = tl.where(inexact & (tl.abs(back) > tl.abs(x)), bits - 1, bits)   # toward zero
    bits = tl.where(inexact, bits | 1, bits)
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def _f32_to_bf16(f):
    """float32 -> bfloat16, round to nearest even, with integer ops: the same bits compiled or
    interpreted (Triton's interpreter truncates this conversion)."""
    bits = f.to(tl.uint32, bitcast=True)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    quiet_nan = 0x7FC0 | ((bits >> 16) & 0x8000)
    return tl.where(f != f, quiet_nan, rounded).to(tl.uint16).to(tl.bfloat16, bitcast=True)


@triton.jit
def convert(v, DTYPE: tl.constexpr):
    """``v`` converted to ``DTYPE``, the one cast every kernel uses (loads to the compute dtype,
    stores to memory): bool means != 0; float -> integer truncates toward zero (through int64, so
    narrow and unsigned targets wrap like a C cast of the truncated value); bfloat16 goes through
    float32 both ways, rounding to nearest even (the interpreter only converts bfloat16 <-> float32
    and truncates; compiled and interpreted kernels give the same bits this way)."""
    if DTYPE == tl.int1:
        r = v != 0
    elif v.dtype == DTYPE:
        r = v
    elif DTYPE == tl.bfloat16:
        if v.dtype == tl.float32:
            r = _f32_to_bf16(v)
        elif v.dtype.is_floating() and v.dtype.primitive_bitwidth < 32:
            r = _f32_to_bf16(v.to(tl.float32))          # float16: exact in float32
        else:
            r = _f32_to_bf16(_f64_to_f32_round_odd(v.to(tl.float64)))   # float64, integers, bool
    else:
        w = v
        if v.dtype == tl.bfloat16:
            # exact, by the bits: bfloat16 is float32's upper half (the interpreter's own
            # conversion flushes bfloat16 subnormals to 0)
            w = (v.to(tl.int16, bitcast=True).to(tl.int32) << 16).to(tl.float32, bitcast=True)
        if DTYPE.is_int() and w.dtype.is_floating():
            if w.dtype.primitive_bitwidth < 32:
                w = w.to(tl.float32)                     # float16 -> integers through float32
            r = w.to(tl.int64).to(DTYPE)
        else:
            r = w.to(DTYPE)
    return r


@triton.jit
def store_cast(ptr, v, mask):
    """tl.store(ptr, v) with ``v`` converted to the pointer's element type (see convert)."""
    tl.store(ptr, convert(v, ptr.dtype.element_ty), mask=mask)


@triton.jit
def scalar_value(val, KIND: tl.constexpr, COMPUTE: tl.constexpr):
    """A scalar kernel argument in the compute dtype. KIND 1: an integer (or bool) passed as is;
    KIND 2: a float passed as the int64 bit pattern of a float64 (Triton types a Python float
    argument as float32, which would round float64 operands)."""
    if KIND == 1:
        r = convert(val, COMPUTE)
    else:
        r = convert(val.to(tl.int64).to(tl.float64, bitcast=True), COMPUTE)
    return r
