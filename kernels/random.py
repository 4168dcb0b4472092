"""Random fills with Triton's Philox: uniform U[a, b), normal (mean a, std b) and integers in
[a, a + b) (randint, random_: a 32-bit word modulo the range, as torch's kernels do), and torch's
distribution transforms of a uniform u in [0, 1) or a normal z (TransformationHelper.h):

    KIND 3 exponential   -log(1 - u) * a               (a = 1 / lambda)
    KIND 4 cauchy        a + b * tan(pi * (u - 1/2))   (median a, sigma b)
    KIND 5 log_normal    exp(a + b * z)                (mean a, std b of the log)
    KIND 6 geometric     max(ceil(log(1 - u) * b), 1)  (b = 1 / log(1 - p): trials to a success)

(1 - u lies in (0, 1], so every logarithm is finite; tan is sin / cos, since the interpreter has
no libdevice.)

Stream position p = offset + i (i the row-major linear index of the element) selects Philox4x32
counter p // 4 and lane p % 4: one Philox call gives four 32-bit words, which become four
uniforms, or four normals through two Box-Muller pairs. So the same (seed, offset) gives the same
numbers, element i depends only on (seed, offset + i), and a launch split in pieces (or an
offset advanced by numel) continues the same stream.
"""
import triton
import triton.language as tl

from .strided import scalar_value, store_cast, strided_offset


@triton.jit
def _interleave4(a, b, c, d):
    """[a0, b0, c0, d0, a1, b1, c1, d1, ...] from four blocks of equal size."""
    x = tl.join(tl.join(a, c), tl.join(b, d))   # x[j, k, l]: l picks (a|c) vs (b|d), k picks (a|b) vs (c|d)
    return tl.reshape(x, [a.shape[0] * 4])


@triton.jit
def _transform(u, a, b, KIND: tl.constexpr):
    """torch's transform of uniforms u in [0, 1) (the KINDs in the module docstring but normal)."""
    if KIND == 0:
        v = a + (b - a) * u
    elif KIND == 3:
        v = -tl.log(1.0 - u) * a
    elif KIND == 4:
        x = 3.141592653589793 * (u - 0.5)
        v = a + b * (tl.sin(x) / tl.cos(x))
    else:
        v = tl.maximum(tl.ceil(tl.log(1.0 - u) * b), 1.0)
    return v


@triton.jit(do_not_specialize=["seed", "counter0", "a_bits", "b_bits"])
def random_kernel(out_ptr, n, seed, counter0, a_bits, b_bits, shape, strides,
                  SHIFT: tl.constexpr, KIND: tl.constexpr, COMPUTE: tl.constexpr,
                  RANK: tl.constexpr, BLOCK: tl.constexpr):
    """Element i gets stream position p = 4 * counter0 + SHIFT + i (the launcher passes
    counter0 = offset // 4 and SHIFT = offset % 4; SHIFT is 0 whenever offsets advance in fours,
    which keeps the stores aligned and vectorized)."""
    pid = tl.program_id(0).to(tl.int64)
    counter = counter0.to(tl.int64) + pid * (BLOCK // 4) + tl.arange(0, BLOCK // 4)
    c0 = (counter & 0xFFFFFFFF).to(tl.uint32)
    c1 = (counter >> 32).to(tl.uint32)
    zero = tl.zeros_like(c0)
    r0, r1, r2, r3 = tl.philox(seed, c0, c1, zero, zero)
    if KIND == 2:   # integers: a_bits is the low end, b_bits the range (1 .. 2**32), as int64
        words = _interleave4(r0, r1, r2, r3).to(tl.int64)
        v = a_bits.to(tl.int64) + words % b_bits.to(tl.int64)
    else:
        u0 = tl.uint_to_uniform_float(r0)
        u1 = tl.uint_to_uniform_float(r1)
        u2 = tl.uint_to_uniform_float(r2)
        u3 = tl.uint_to_uniform_float(r3)
        a = scalar_value(a_bits, 2, COMPUTE)
        b = scalar_value(b_bits, 2, COMPUTE)
        if KIND == 1 or KIND == 5:
            n0, n1 = tl.pair_uniform_to_normal(u0, u1)
            n2, n3 = tl.pair_uniform_to_normal(u2, u3)
            v = a + b * _interleave4(n0, n1, n2, n3).to(COMPUTE)
            if KIND == 5:
                v = tl.exp(v)
        else:
            v = _transform(_interleave4(u0, u1, u2, u3).to(COMPUTE), a, b, KIND)
    i = pid * BLOCK + tl.arange(0, BLOCK) - SHIFT     # linear index of each stream position
    mask = (i >= 0) & (i < n)
    store_cast(out_ptr + strided_offset(i, shape, strides, RANK), v, mask)


@triton.jit
def _interleave2(a, b):
    """[a0, b0, a1, b1, ...] from two blocks of equal size."""
    return tl.reshape(tl.join(a, b), [a.shape[0] * 2])


@triton.jit
def _uniform53(hi, lo):
    """A float64 in [0, 1) from two 32-bit words: their top 53 bits, scaled by 2**-53."""
    bits = ((hi.to(tl.uint64) << 32) | lo.to(tl.uint64)) >> 11
    return bits.to(tl.float64) * 1.1102230246251565e-16


@triton.jit(do_not_specialize=["seed", "counter0", "a_bits", "b_bits"])
def random_f64_kernel(out_ptr, n, seed, counter0, a_bits, b_bits, shape, strides,
                      SHIFT: tl.constexpr, KIND: tl.constexpr, RANK: tl.constexpr, BLOCK: tl.constexpr):
    """float64 uniform (KIND 0), normal (KIND 1) and the transforms (KIND 3-6) with full float64
    precision: each number takes
    two 32-bit words of the stream, so element i uses stream positions 4 * counter0 + 2 * (SHIFT + i)
    and the next one (the launcher passes SHIFT = (offset % 4) // 2, in numbers). One Philox call
    gives two numbers: two 53-bit uniforms, or the two normals of one Box-Muller pair."""
    pid = tl.program_id(0).to(tl.int64)
    counter = counter0.to(tl.int64) + pid * (BLOCK // 2) + tl.arange(0, BLOCK // 2)
    c0 = (counter & 0xFFFFFFFF).to(tl.uint32)
    c1 = (counter >> 32).to(tl.uint32)
    zero = tl.zeros_like(c0)
    r0, r1, r2, r3 = tl.philox(seed, c0, c1, zero, zero)
    u0 = _uniform53(r0, r1)
    u1 = _uniform53(r2, r3)
    a = scalar_value(a_bits, 2, tl.float64)
    b = scalar_value(b_bits, 2, tl.float64)
    if KIND == 1 or KIND == 5:
        radius = tl.sqrt(-2.0 * tl.log(1.0 - u0))      # 1 - u0 in (0, 1]: log stays finite
        angle = 6.283185307179586 * u1
        v = a + b * _interleave2(radius * tl.cos(angle), radius * tl.sin(angle))
        if KIND == 5:
            v = tl.exp(v)
    else:
        v = _transform(_interleave2(u0, u1), a, b, KIND)
    i = pid * BLOCK + tl.arange(0, BLOCK) - SHIFT
    mask = (i >= 0) & (i < n)
    store_cast(out_ptr + strided_offset(i, shape, strides, RANK), v, mask)
