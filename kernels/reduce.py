"""Reductions (sum, prod, amax, amin, xor) over any set of dims, read in place.

The launcher splits x's dims into kept dims (those of the output, coalesced) and reduced dims
(coalesced; innermost = smallest stride). A program owns BLOCK_OUT output elements and loops over
one chunk of the reduced index range in a fixed order, combining [BLOCK_OUT, BLOCK_RED] tiles
elementwise into an accumulator of the compute dtype, then reduces the accumulator's rows. No
atomics: when there are few outputs and much to reduce, the launcher runs a first pass over
chunks into a [n_out, n_chunks] buffer and a second pass over that, so results are bit-identical
run after run.
"""
import triton
import triton.language as tl

from .elementwise import maximum as combine_max   # NaN wins, as in NumPy and torch
from .elementwise import minimum as combine_min
from .strided import convert, store_cast, strided_offset


# Triton's own a + b and a * b: compiled they are what any combine function would be, but the
# interpreter recognises them and runs a tl.reduce / tl.associative_scan with them as one NumPy
# call (np.sum, np.cumsum, np.cumprod) instead of one Python call per element of the block.
combine_sum = tl.standard._sum_combine
combine_prod = tl.standard._prod_combine
combine_xor = tl.standard._xor_combine   # hash_tensor: integers only (the bits, as int64)


@triton.jit
def combine(a, b, OP: tl.constexpr):
    """a OP b elementwise; OP is "sum", "prod", "xor", "amax" or "amin"."""
    if OP == "sum":
        r = combine_sum(a, b)
    elif OP == "prod":
        r = combine_prod(a, b)
    elif OP == "xor":
        r = combine_xor(a, b)
    elif OP == "amax":
        r = combine_max(a, b)
    else:
        r = combine_min(a, b)
    return r


@triton.jit
def reduce_rows(acc, OP: tl.constexpr):
    """OP over axis 1 of the 2-D block ``acc`` (a tree in a fixed order: deterministic).
    tl.reduce needs the combine function itself, not a constexpr holding it, hence the branches.
    amax/amin: tl.max / tl.min (which the interpreter runs as one NumPy call) over the row with
    its NaNs set aside, then NaN wherever the row holds one (tl.max alone would drop it)."""
    if OP == "sum":
        r = tl.reduce(acc, 1, combine_sum)
    elif OP == "xor":
        r = tl.reduce(acc, 1, combine_xor)
    elif OP == "prod":
        # the running product's last column (a tl.reduce with a product would cost the
        # interpreter a Python call per lane; its cumprod is one NumPy call), picked out by a sum
        # of zeros and it; a product of -0.0 keeps its sign (the sum alone may give +0.0)
        s = tl.associative_scan(acc, 1, combine_prod)
        last = (tl.arange(0, acc.shape[1]) == acc.shape[1] - 1)[None, :]
        r = tl.sum(tl.where(last, s, 0), 1)
        if acc.dtype.is_floating():
            negative_zero = tl.sum(tl.where(last & (s == 0) & (1.0 / s < 0), 1, 0), 1) > 0
            r = tl.where(negative_zero, -0.0, r)
    else:
        nan = acc != acc
        clean = tl.where(nan, 0, acc)
        if OP == "amax":
            r = tl.max(clean, 1)
        else:
            r = tl.min(clean, 1)
        if acc.dtype.is_floating():
            has_nan = tl.max(nan.to(tl.int32), 1) > 0
            r = tl.where(has_nan, tl.reduce(tl.where(nan, acc, 0), 1, combine_sum), r)   # a sum of NaNs
    return r


@triton.jit
def reduce_kernel(x_ptr, out_ptr, n_out, R, CHUNK, kshape, kstrides, rshape, rstrides,
                  out_kstride, out_cstride,
                  OP: tl.constexpr, IDENTITY: tl.constexpr, COMPUTE: tl.constexpr,
                  KRANK: tl.constexpr, RRANK: tl.constexpr,
                  BLOCK_OUT: tl.constexpr, BLOCK_RED: tl.constexpr, NONZERO: tl.constexpr = False,
                  NAN_AS_ZERO: tl.constexpr = False):
    """out[k * out_kstride + c * out_cstride] = OP over r in chunk c of x[k, r], where
    k = 0..n_out-1 indexes the kept dims (kshape/kstrides) and r = 0..R-1 the reduced dims
    (rshape/rstrides); chunk c (program_id 1) covers r in [c * CHUNK, (c + 1) * CHUNK).
    NONZERO reads each element as (x != 0) before combining (count_nonzero/any/all), so those
    need no temporary bool tensor: the test happens on the loaded value, before any cast.
    NAN_AS_ZERO reads a NaN as 0 (nansum: one pass, no where(isnan(x), 0, x) written first)."""
    kidx = tl.program_id(0).to(tl.int64) * BLOCK_OUT + tl.arange(0, BLOCK_OUT)
    chunk = tl.program_id(1).to(tl.int64)
    kmask = kidx < n_out
    koff = strided_offset(kidx, kshape, kstrides, KRANK)
    r_start = chunk * CHUNK
    r_end = tl.minimum(r_start + CHUNK, R)
    acc = tl.full([BLOCK_OUT, BLOCK_RED], IDENTITY, COMPUTE)
    for r0_ in range(r_start, r_end, BLOCK_RED):
        r0 = tl.cast(r0_, tl.int64)     # int64 loop index (kernels/__init__.py)
        ridx = r0 + tl.arange(0, BLOCK_RED)
        rmask = ridx < r_end
        roff = strided_offset(ridx, rshape, rstrides, RRANK)
        mask = kmask[:, None] & rmask[None, :]
        raw = tl.load(x_ptr + (koff[:, None] + roff[None, :]), mask=mask, other=0)
        if NONZERO:
            v = convert(raw != 0, COMPUTE)
        elif NAN_AS_ZERO:
            v = convert(raw, COMPUTE)
            v = tl.where(v != v, 0, v)
        else:
            v = convert(raw, COMPUTE)
        acc = combine(acc, tl.where(mask, v, IDENTITY), OP)   # masked lanes add the identity
    result = reduce_rows(acc, OP)
    store_cast(out_ptr + (kidx * out_kstride + chunk * out_cstride), result, kmask)


# --------------------------------------------------------------------------- argmax / argmin
@triton.jit
def _better_max(v1, i1, v2, i2):
    """(value, index) of the winner between candidates 1 and 2 for argmax: the larger value,
    NaN beating any number, the smaller index on ties (so the first occurrence wins)."""
    nan1 = v1 != v1
    nan2 = v2 != v2
    better = (v2 > v1) | (nan2 & (v1 == v1))
    tie = (v2 == v1) | (nan1 & nan2)
    take = better | (tie & (i2 < i1))
    return tl.where(take, v2, v1), tl.where(take, i2, i1)


@triton.jit
def _better_min(v1, i1, v2, i2):
    nan1 = v1 != v1
    nan2 = v2 != v2
    better = (v2 < v1) | (nan2 & (v1 == v1))
    tie = (v2 == v1) | (nan1 & nan2)
    take = better | (tie & (i2 < i1))
    return tl.where(take, v2, v1), tl.where(take, i2, i1)


@triton.jit
def arg_reduce_kernel(x_ptr, idx_ptr, out_val_ptr, out_idx_ptr, n_out, R, CHUNK,
                      kshape, kstrides, rshape, rstrides, out_kstride, out_cstride,
                      IS_MAX: tl.constexpr, IDENTITY: tl.constexpr, COMPUTE: tl.constexpr,
                      KRANK: tl.constexpr, RRANK: tl.constexpr,
                      BLOCK_OUT: tl.constexpr, BLOCK_RED: tl.constexpr,
                      HAS_IDX: tl.constexpr, STORE_VAL: tl.constexpr):
    """For chunk c (program_id 1) of the reduced range, r in [c * CHUNK, (c + 1) * CHUNK): the
    winning (value, index) of x[k, r], stored at k * out_kstride + c * out_cstride (the value
    only when STORE_VAL, for a second pass). The candidate index of x[k, r] is r itself, the
    row-major position, or, when HAS_IDX, the int64 read from idx_ptr at x's offset (a second
    pass over first-pass winners). NaN wins, the first index wins ties. The winner is unique
    under a total order (value, then index), so the result does not depend on the order of
    combination or on how the range was split: deterministic."""
    kidx = tl.program_id(0).to(tl.int64) * BLOCK_OUT + tl.arange(0, BLOCK_OUT)
    chunk = tl.program_id(1).to(tl.int64)
    kmask = kidx < n_out
    koff = strided_offset(kidx, kshape, kstrides, KRANK)
    r_start = chunk * CHUNK
    r_end = tl.minimum(r_start + CHUNK, R)
    NONE: tl.constexpr = 0x3FFFFFFFFFFFFFFF     # index of a lane that has seen nothing: loses ties
    best_v = tl.full([BLOCK_OUT, BLOCK_RED], IDENTITY, COMPUTE)
    best_i = tl.full([BLOCK_OUT, BLOCK_RED], NONE, tl.int64)
    for r0_ in range(r_start, r_end, BLOCK_RED):
        r0 = tl.cast(r0_, tl.int64)     # int64 loop index (kernels/__init__.py)
        ridx = r0 + tl.arange(0, BLOCK_RED).to(tl.int64)
        rmask = ridx < r_end
        roff = strided_offset(ridx, rshape, rstrides, RRANK)
        mask = kmask[:, None] & rmask[None, :]
        offs = koff[:, None] + roff[None, :]
        v = convert(tl.load(x_ptr + offs, mask=mask, other=0), COMPUTE)
        v = tl.where(mask, v, IDENTITY)
        if HAS_IDX:
            i = tl.load(idx_ptr + offs, mask=mask, other=NONE)
        else:
            i = tl.where(mask, ridx[None, :], NONE)
        if IS_MAX:
            best_v, best_i = _better_max(best_v, best_i, v, i)
        else:
            best_v, best_i = _better_min(best_v, best_i, v, i)
    # The winner of each row among its lanes, in fast reductions (a tl.reduce with _better_max
    # would cost the interpreter a Python call per lane): a NaN if any (the first NaN's index),
    # else the best value, the smallest index among the lanes holding it.
    nan = best_v != best_v
    clean = tl.where(nan, IDENTITY, best_v)
    if IS_MAX:
        val = tl.max(clean, 1)
    else:
        val = tl.min(clean, 1)
    has_nan = tl.max(nan.to(tl.int32), 1) > 0
    hit = tl.where(has_nan[:, None], nan, clean == val[:, None])
    idx = tl.min(tl.where(hit, best_i, NONE), 1)
    val = tl.where(has_nan, tl.reduce(tl.where(nan, best_v, 0), 1, combine_sum), val)
    dest = kidx * out_kstride + chunk * out_cstride
    tl.store(out_idx_ptr + dest, idx, mask=kmask)
    if STORE_VAL:
        tl.store(out_val_ptr + dest, val, mask=kmask)
