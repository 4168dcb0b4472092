"""Indexing kernels: gather (advanced __getitem__, index_select, gather, take), deterministic
scatter (index_put_, scatter, scatter_add) and stream compaction (nonzero, masked_select).

Every operand is described by (shape, strides) over the *output's* dims, as in strided.py: the
launcher arranges the source's strides and the index's strides on the output dims (stride 0
where an operand does not vary), so non-contiguous sources and indices are read in place.

The scatter kernel never has two programs write one element: the launcher groups the writes by
target on the host (a stable sort), so each target is owned by one lane, which applies "last
write wins" or sums its segment in index order. No atomics: runs are bit-identical.
"""
import triton
import triton.language as tl

from .reduce import combine_sum
from .strided import convert, scalar_value, store_cast, strided_offset


@triton.jit
def _wrapped(i, dim_size, WRAP: tl.constexpr):
    """An index read from memory as int64; negative ones count from the end when WRAP."""
    i = i.to(tl.int64)
    if WRAP:
        i = tl.where(i < 0, i + dim_size, i)
    return i


@triton.jit
def gather_kernel(out_ptr, src_ptr, idx_ptr, n, shape, out_strides, src_strides, idx_strides,
                  dim_size, dim_stride, RANK: tl.constexpr, WRAP: tl.constexpr, BLOCK: tl.constexpr):
    """out[p] = src[base(p) + index[p] * dim_stride] for every row-major output position p;
    base(p) walks the source with ``src_strides`` (0 on the gathered dims). The launcher has
    checked the indices: they are in range (on cuda the check's clamped copy: runtime/device_errors.py)."""
    p = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = p < n
    i = tl.load(idx_ptr + strided_offset(p, shape, idx_strides, RANK), mask=mask, other=0)
    src_off = strided_offset(p, shape, src_strides, RANK) + _wrapped(i, dim_size, WRAP) * dim_stride
    v = tl.load(src_ptr + src_off, mask=mask, other=0)
    store_cast(out_ptr + strided_offset(p, shape, out_strides, RANK), v, mask)


@triton.jit
def index_offsets_kernel(acc_ptr, idx_ptr, n, shape, idx_strides, dim_size, dim_stride,
                         FIRST: tl.constexpr, RANK: tl.constexpr, BLOCK: tl.constexpr):
    """acc[p] (+)= wrap(index[p]) * dim_stride over a contiguous int64 ``acc``: several index
    tensors become one element offset per position, which gather_kernel then reads."""
    p = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = p < n
    i = tl.load(idx_ptr + strided_offset(p, shape, idx_strides, RANK), mask=mask, other=0)
    off = _wrapped(i, dim_size, True) * dim_stride
    if not FIRST:
        off += tl.load(acc_ptr + p, mask=mask, other=0)
    tl.store(acc_ptr + p, off, mask=mask)


@triton.jit
def scatter_kernel(out_ptr, val_ptr, targets_ptr, pairs_ptr, starts_ptr, n_seg, max_len,
                   vshape, vstrides, RANK: tl.constexpr, ACCUMULATE: tl.constexpr,
                   COMPUTE: tl.constexpr, BLOCK: tl.constexpr):
    """One lane per distinct target element (``targets``: element offsets into out).

    ACCUMULATE: out[t] = out[t] + values[pairs[s]] + values[pairs[s + 1]] + ... over the segment
    s in [starts[u], starts[u + 1]) of pairs (in increasing pair order), computed in COMPUTE.
    Otherwise: out[t] = values[pairs[u]], the last pair writing t. ``values`` is read at the
    row-major position of a pair in the pair space ``vshape`` (broadcast: stride 0)."""
    u = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = u < n_seg
    t = tl.load(targets_ptr + u, mask=mask, other=0)
    if ACCUMULATE:
        start = tl.load(starts_ptr + u, mask=mask, other=0)
        end = tl.load(starts_ptr + u + 1, mask=mask, other=0)
        acc = convert(tl.load(out_ptr + t, mask=mask, other=0), COMPUTE)
        for j_ in range(0, max_len):
            j = tl.cast(j_, tl.int64)     # int64 loop index (kernels/__init__.py)
            m = mask & (start + j < end)
            p = tl.load(pairs_ptr + start + j, mask=m, other=0)
            v = convert(tl.load(val_ptr + strided_offset(p, vshape, vstrides, RANK), mask=m, other=0), COMPUTE)
            acc = tl.where(m, acc + v, acc).to(COMPUTE)
        store_cast(out_ptr + t, acc, mask)
    else:
        p = tl.load(pairs_ptr + u, mask=mask, other=0)
        v = tl.load(val_ptr + strided_offset(p, vshape, vstrides, RANK), mask=mask, other=0)
        store_cast(out_ptr + t, v, mask)


@triton.jit
def count_kernel(x_ptr, counts_ptr, n, shape, strides, RANK: tl.constexpr, BLOCK: tl.constexpr):
    """counts[b] = how many of the BLOCK elements of block b are nonzero (NaN counts)."""
    p = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = p < n
    v = tl.load(x_ptr + strided_offset(p, shape, strides, RANK), mask=mask, other=0)
    nz = convert(v, tl.int1) & mask
    tl.store(counts_ptr + tl.program_id(0), tl.sum(nz.to(tl.int64), 0))


@triton.jit
def compact_kernel(x_ptr, val_ptr, out_ptr, incl_ptr, n, shape, x_strides, val_strides, coord_shape,
                   COORDS: tl.constexpr, NDIM: tl.constexpr, RANK: tl.constexpr, BLOCK: tl.constexpr):
    """Stream compaction of the nonzero positions of x, in row-major order. Block b starts at
    incl[b] - (its own count) (``incl``: inclusive prefix sums of count_kernel's counts); each
    selected element goes to that start plus its rank among the block's selected ones.
    COORDS (nonzero): out[k, :] = the NDIM coordinates of the k-th selected position in
    ``coord_shape``. Otherwise (masked_select): out[k] = val at that position."""
    b = tl.program_id(0)
    p = b.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = p < n
    v = tl.load(x_ptr + strided_offset(p, shape, x_strides, RANK), mask=mask, other=0)
    nz = convert(v, tl.int1) & mask
    c = nz.to(tl.int64)
    rank = tl.associative_scan(c, 0, combine_sum) - 1
    pos = tl.load(incl_ptr + b) - tl.sum(c, 0) + rank
    if COORDS:
        rem = p
        for d in tl.static_range(NDIM - 1, -1, -1):
            tl.store(out_ptr + pos * NDIM + d, rem % coord_shape[d], mask=nz)
            rem = rem // coord_shape[d]
    else:
        w = tl.load(val_ptr + strided_offset(p, shape, val_strides, RANK), mask=nz, other=0)
        tl.store(out_ptr + pos, w, mask=nz)


@triton.jit
def bounds_kernel(idx_ptr, bad_ptr, n, shape, strides, low, high, RANK: tl.constexpr, BLOCK: tl.constexpr):
    """bad[b] = how many indices of block b lie outside [low, high): the bounds check of an index
    tensor in one pass, with a few counts to read back instead of two reductions."""
    p = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = p < n
    i = tl.load(idx_ptr + strided_offset(p, shape, strides, RANK), mask=mask, other=0).to(tl.int64)
    bad = ((i < low) | (i >= high)) & mask
    tl.store(bad_ptr + tl.program_id(0), tl.sum(bad.to(tl.int64), 0))


@triton.jit
def deferred_bounds_kernel(idx_ptr, safe_ptr, record_ptr, n, shape, strides, low, high, ignore, check_id,
                           HAS_IGNORE: tl.constexpr, SAFE: tl.constexpr, RANK: tl.constexpr,
                           BLOCK: tl.constexpr):
    """torch's device-side assert on an index tensor, with nothing read back: a value outside
    [low, high) (``ignore`` aside when HAS_IGNORE) claims the device's error record (two int64
    words) with a compare-and-swap of ``check_id`` into word 0, the first failing check winning,
    and the winner stores the block's first bad value in word 1 (the host reads it at its next
    sync: runtime/device_errors.py). SAFE: safe[p] = index[p] clamped into [low, high), a
    contiguous copy in the index's dtype that the op indexes with instead, so no lane of its
    kernels reads or writes outside a storage."""
    p = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = p < n
    raw = tl.load(idx_ptr + strided_offset(p, shape, strides, RANK), mask=mask, other=0)
    i = raw.to(tl.int64)
    bad = ((i < low) | (i >= high)) & mask
    if HAS_IGNORE:
        bad = bad & (i != ignore)
    if SAFE:
        store_cast(safe_ptr + p, tl.minimum(tl.maximum(i, low), high - 1), mask)
    first = tl.min(tl.where(bad, p, n), 0)
    if first < n:
        value = tl.sum(tl.where(p == first, i, 0), 0)
        claim = tl.cast(check_id, tl.int64)
        previous = tl.atomic_cas(record_ptr, claim * 0, claim)
        if previous == 0:
            tl.store(record_ptr + 1, value)


@triton.jit
def scatter_reduce_kernel(out_ptr, val_ptr, targets_ptr, pairs_ptr, starts_ptr, n_seg, max_len,
                          vshape, vstrides, RANK: tl.constexpr, REDUCE: tl.constexpr,
                          INCLUDE_SELF: tl.constexpr, FLOOR: tl.constexpr, COMPUTE: tl.constexpr,
                          BLOCK: tl.constexpr):
    """torch.scatter_reduce, one lane per distinct target element t (as scatter_kernel): the
    segment's values (in pair order, so the result is deterministic) folded into out[t] with
    REDUCE 1 sum, 2 prod, 3 amax, 4 amin (NaN propagates), 5 mean (the sum over the count; floor
    division for integers when FLOOR). INCLUDE_SELF: out[t]'s own value is the first operand."""
    u = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = u < n_seg
    t = tl.load(targets_ptr + u, mask=mask, other=0)
    start = tl.load(starts_ptr + u, mask=mask, other=0)
    end = tl.load(starts_ptr + u + 1, mask=mask, other=0)
    acc = convert(tl.load(out_ptr + t, mask=mask, other=0), COMPUTE)
    have = tl.full(acc.shape, INCLUDE_SELF, tl.int1)     # acc holds a value already
    for j_ in range(0, max_len):
        j = tl.cast(j_, tl.int64)     # int64 loop index (kernels/__init__.py)
        m = mask & (start + j < end)
        p = tl.load(pairs_ptr + start + j, mask=m, other=0)
        v = convert(tl.load(val_ptr + strided_offset(p, vshape, vstrides, RANK), mask=m, other=0), COMPUTE)
        if REDUCE == 2:
            r = acc * v
        elif REDUCE == 3:
            r = tl.where((v > acc) | (v != v), v, acc)
        elif REDUCE == 4:
            r = tl.where((v < acc) | (v != v), v, acc)
        else:
            r = acc + v
        acc = tl.where(m, tl.where(have, r, v), acc).to(COMPUTE)
        have = have | m
    if REDUCE == 5:
        count = (end - start + INCLUDE_SELF).to(COMPUTE)
        if FLOOR:
            q = acc // count
            acc = tl.where((acc % count != 0) & ((acc < 0) != (count < 0)), q - 1, q)
        else:
            acc = acc / count
    store_cast(out_ptr + t, acc, mask)


# --------------------------------------------------------------------------- index_add / index_copy / index_fill / index_reduce
@triton.jit
def _lower_bound(keys_ptr, L, value, n_search):
    """The first position s in the sorted int64 ``keys`` (L of them) with keys[s] >= value, as a
    [1]-shaped tensor (masked loads want tensors): torch's binary search, n_search >= log2(L) + 1
    halvings."""
    lo = tl.zeros([1], tl.int64)
    hi = tl.zeros([1], tl.int64) + L
    for _ in range(n_search):
        go = lo < hi
        mid = (lo + hi) // 2
        k = tl.load(keys_ptr + mid, mask=go, other=0).to(tl.int64)
        below = k < value
        lo = tl.where(go & below, mid + 1, lo)
        hi = tl.where(go & (below == 0), mid, hi)
    return lo


# alpha is a runtime scalar: Triton would make an int argument equal to 1 (index_add's default) a
# constexpr, which scalar_value cannot convert (the sm_90 compile check launches alpha=1)
@triton.jit(do_not_specialize=["alpha"])
def index_segment_kernel(out_ptr, x_ptr, src_ptr, value_ptr, perm_ptr, keys_ptr, L, D, K, n_kblocks, n_search, alpha,
                         kshape, o_kstrides, x_kstrides, s_kstrides, o_dstride, x_dstride, s_dstride,
                         MODE: tl.constexpr, INCLUDE_SELF: tl.constexpr, FLOOR: tl.constexpr,
                         ALPHA_KIND: tl.constexpr, COMPUTE: tl.constexpr, KRANK: tl.constexpr,
                         BLOCK_K: tl.constexpr):
    """torch's index_add / index_copy / index_fill / index_reduce along one dim, deterministically:
    one program per destination index d (of D along the dim) and BLOCK_K positions k of the other
    dims (K of them). The launcher has sorted the index stably (``keys``: the sorted indices,
    ``perm``: their positions in the index, kernels/sort.py), so the index positions that name d
    are the segment [lower_bound(d), lower_bound(d + 1)) of the sorted keys, in index order;
    the program folds source[perm[s]] over that segment into out[d] = x[d] in that order. No
    atomics and no two programs on one output element: bit-identical results run after run.

    MODE 0 add (x + alpha * src, ALPHA_KIND 1 int / 2 float64 bits as scalar_value reads it),
    1 copy (the last of repeated indices wins), 2 fill (the 0-d value at value_ptr), 3 prod,
    4 mean (floor division for integers when FLOOR), 5 amax, 6 amin (NaN propagates); for 3-6
    INCLUDE_SELF makes x[d]'s own value the first operand. A destination no index names keeps x."""
    pid = tl.program_id(0).to(tl.int64)
    d = pid // n_kblocks
    k = (pid % n_kblocks) * BLOCK_K + tl.arange(0, BLOCK_K)
    kmask = k < K
    o_off = strided_offset(k, kshape, o_kstrides, KRANK) + d * o_dstride
    x_off = strided_offset(k, kshape, x_kstrides, KRANK) + d * x_dstride
    s_off = strided_offset(k, kshape, s_kstrides, KRANK)
    lo = tl.sum(_lower_bound(keys_ptr, L, d, n_search), 0)
    hi = tl.sum(_lower_bound(keys_ptr, L, d + 1, n_search), 0)
    acc = convert(tl.load(x_ptr + x_off, mask=kmask, other=0), COMPUTE)
    if MODE == 1:
        if hi > lo:
            p = tl.load(perm_ptr + (hi - 1)).to(tl.int64)
            acc = convert(tl.load(src_ptr + (s_off + p * s_dstride), mask=kmask, other=0), COMPUTE)
    elif MODE == 2:
        if hi > lo:
            acc = convert(tl.load(value_ptr + tl.zeros([BLOCK_K], tl.int64)), COMPUTE)
    else:
        have = tl.full([BLOCK_K], INCLUDE_SELF, tl.int1)      # (add: the launcher sets it)
        if MODE == 0:
            a = scalar_value(alpha, ALPHA_KIND, COMPUTE)
        for s_ in range(lo, hi):
            s = tl.cast(s_, tl.int64)       # int64 loop index (kernels/__init__.py)
            p = tl.load(perm_ptr + s).to(tl.int64)
            v = convert(tl.load(src_ptr + (s_off + p * s_dstride), mask=kmask, other=0), COMPUTE)
            if MODE == 0:
                r = acc + a * v
            elif MODE == 3:
                r = acc * v
            elif MODE == 5:
                r = tl.where((v > acc) | (v != v), v, acc)
            elif MODE == 6:
                r = tl.where((v < acc) | (v != v), v, acc)
            else:
                r = acc + v
            acc = tl.where(have, r, v).to(COMPUTE)
            have = have | kmask
        if MODE == 4:
            if hi > lo:
                count = (hi - lo + INCLUDE_SELF).to(COMPUTE)
                if FLOOR:
                    q = acc // count
                    acc = tl.where((acc % count != 0) & ((acc < 0) != (count < 0)), q - 1, q)
                else:
                    acc = acc / count
    store_cast(out_ptr + o_off, acc, kmask)
