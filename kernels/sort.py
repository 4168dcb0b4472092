"""Sorting along one dim: a bitonic sort of (key, index) pairs within a tile, then merge-path
merges of sorted runs across tiles (sort, argsort, topk, and the selections built on them); and
the binary search of searchsorted / bucketize and the histogram counts (the end of this file).

Keys. Every value is mapped to an integer whose signed order is torch's order of the values
(``order_key``): integers as themselves (bool and the 8/16-bit types and int32 in int32, int64
and uint32 in int64), uint64 with its top bit flipped (so that its unsigned order is int64's
signed order: 2**63 sorts after 1); floats through their bit pattern (negative ones with the magnitude bits flipped), -0.0
made +0.0 (torch's sort keeps them equal, in their original order) and every NaN the largest key
(NaN sorts last ascending, first descending, as torch's). float16/bfloat16 widen exactly to
float32 first; float64 keys are int64. A descending sort inverts the key (``~key``), so one
ascending network serves both orders.

Pairs. Each key travels with its position in the row (``idx``), and pairs compare by key, then
by position: no two pairs are equal, so the result is the stable order, the same on every run
(torch's stable sort, ascending or descending). Lanes past a row's end hold the pair
(KEY_MAX, IDX_MAX), larger than every real pair.

The network (``bitonic_pairs``) is Triton's own tl.sort construction (the tile
viewed as a hypercube of 2s, compare-and-swap across one axis at a time), done
on two tensors at once because tl.sort sorts one tensor without its indices.

Tiles and merges. sort_tile_kernel sorts BLOCK_N-element tiles of BLOCK_M rows. A row longer
than one tile leaves sorted runs in a scratch buffer; merge_kernel merges runs pairwise (run
width W, 2W, 4W ...). Each program makes BLOCK outputs of one merged run: a binary search along
the merge path finds where they start in either run, the next BLOCK of run A and of run B
(reversed) form a bitonic sequence, and one bitonic merge puts the smallest BLOCK first.
topk keeps only K elements of each run (a run's first K are all a later merge can take), so
small K shrinks the work pass by pass. The last pass (or the tile pass when one tile holds a
row) writes the outputs: each value read back from the input at its index (exact: -0.0, NaN
payloads), the index as int64.

Offsets are int64; the input and the outputs are read and written in place with their strides.
"""
import triton
import triton.language as tl

from .strided import convert, store_cast, strided_offset


SIGN64: tl.constexpr = tl.constexpr(-(2 ** 63))


@triton.jit
def order_key(v, DESCENDING: tl.constexpr, KEY64: tl.constexpr):
    """The integer sort key of loaded values ``v`` (see the module docstring): int64 when KEY64
    (int64 and float64 inputs), else int32."""
    if v.dtype.is_floating():
        if v.dtype.primitive_bitwidth == 64:
            bits = v.to(tl.int64, bitcast=True)
            key = tl.where(bits < 0, bits ^ 0x7FFFFFFFFFFFFFFF, bits)
            key = tl.where(v == 0, 0, key)
            key = tl.where(v != v, 0x7FFFFFFFFFFFFFFF, key)
        else:
            f = v.to(tl.float32)
            bits = f.to(tl.int32, bitcast=True)
            key = tl.where(bits < 0, bits ^ 0x7FFFFFFF, bits)
            key = tl.where(f == 0, 0, key)
            key = tl.where(f != f, 0x7FFFFFFF, key)
    elif KEY64:
        if v.dtype.is_int_unsigned() and v.dtype.primitive_bitwidth == 64:
            key = v.to(tl.int64, bitcast=True) ^ SIGN64      # unsigned order as signed order
        else:
            key = v.to(tl.int64)          # (uint32 zero-extends)
    else:
        key = v.to(tl.int32)
    if DESCENDING:
        key = ~key
    return key


@triton.jit
def bitonic_pairs(key, idx, FIRST: tl.constexpr, LOG_N: tl.constexpr, N_DIMS: tl.constexpr):
    """Stages FIRST..LOG_N of a bitonic sort of (key, idx) hypercubes of 2**N_DIMS lanes, ascending
    along their LOG_N innermost axes (one row each). FIRST = 1 sorts; FIRST = LOG_N is one bitonic
    merge (rows that are bitonic already: ascending, then descending).

    Stage s sorts runs of 2**s lanes, up and down in turn (bit s of the position, ``flip``) until
    the last, all up. Its steps compare-and-swap the lanes that differ in bit j of their position
    (j = s-1 .. 0): the lower lane keeps the smaller pair (the larger where flip is 1). A lane's
    partner is (x + partner) - x, a sum over the hypercube axis of length 2 in wrapping integer
    arithmetic, exact for any values. (tl.sort takes an xor_sum: a sum costs the same compiled
    and is native NumPy under the interpreter, where a custom reduction runs in Python element
    by element. The step is written inline, not as a jitted helper: the interpreter charges
    ~0.2 ms per call of one.)"""
    for stage in tl.static_range(FIRST, LOG_N + 1):
        if stage < LOG_N:
            flip = tl.reshape(tl.arange(0, 2), [1] * (N_DIMS - stage - 1) + [2] + [1] * stage)
        else:
            flip = 0
        for i in tl.static_range(stage):     # bit j = stage - 1 - i: axis N_DIMS - 1 - j
            key_p = tl.sum(key, N_DIMS - stage + i, True) - key
            idx_p = tl.sum(idx, N_DIMS - stage + i, True) - idx
            greater = (key > key_p) | ((key == key_p) & (idx > idx_p))
            upper = tl.reshape(tl.arange(0, 2), [1] * (N_DIMS - stage + i) + [2] + [1] * (stage - 1 - i))
            swap = greater != (flip ^ upper).to(tl.int1)
            key = tl.where(swap, key_p, key)
            idx = tl.where(swap, idx_p, idx)
    return key, idx


@triton.jit
def _write_outputs(x_ptr, val_ptr, ind_ptr, x_row, v_row, i_row, pos, idx, mask,
                   x_nstride, v_nstride, i_nstride, WRITE_VALUES: tl.constexpr):
    """values[row, pos] = x[row, idx] (read back at the index: exact), indices[row, pos] = idx."""
    idx = idx.to(tl.int64)
    if WRITE_VALUES:
        v = tl.load(x_ptr + (x_row + idx * x_nstride), mask=mask, other=0)
        store_cast(val_ptr + (v_row + pos * v_nstride), v, mask)
    tl.store(ind_ptr + (i_row + pos * i_nstride), idx, mask=mask)


@triton.jit
def sort_tile_kernel(x_ptr, key_ptr, idx_ptr, val_ptr, ind_ptr, M, N, K, n_tiles,
                     kshape, x_kstrides, v_kstrides, i_kstrides, x_nstride, v_nstride, i_nstride,
                     DESCENDING: tl.constexpr, FINAL: tl.constexpr, WRITE_VALUES: tl.constexpr,
                     KEY64: tl.constexpr, IDX64: tl.constexpr, KRANK: tl.constexpr,
                     LOG_M: tl.constexpr, LOG_N: tl.constexpr):
    """Sort one BLOCK_N-element tile of BLOCK_M rows. FINAL (one tile holds a row): the first K
    pairs of each row go to the outputs; otherwise the first K of each tile go to the scratch
    runs (key_ptr, idx_ptr: contiguous [M, N])."""
    BLOCK_M: tl.constexpr = 1 << LOG_M
    BLOCK_N: tl.constexpr = 1 << LOG_N
    N_DIMS: tl.constexpr = LOG_M + LOG_N
    KEY: tl.constexpr = tl.int64 if KEY64 else tl.int32
    IDX: tl.constexpr = tl.int64 if IDX64 else tl.int32
    KEY_MAX: tl.constexpr = 0x7FFFFFFFFFFFFFFF if KEY64 else 0x7FFFFFFF
    IDX_MAX: tl.constexpr = 0x7FFFFFFFFFFFFFFF if IDX64 else 0x7FFFFFFF
    pid = tl.program_id(0).to(tl.int64)
    tile = pid % n_tiles
    rows = (pid // n_tiles) * BLOCK_M + tl.arange(0, BLOCK_M).to(tl.int64)
    j = tl.arange(0, BLOCK_N).to(tl.int64)
    cols = tile * BLOCK_N + j
    mask = (rows < M)[:, None] & (cols < N)[None, :]
    x_row = strided_offset(rows, kshape, x_kstrides, KRANK)[:, None]
    v = tl.load(x_ptr + (x_row + cols[None, :] * x_nstride), mask=mask, other=0)
    key = tl.where(mask, order_key(v, DESCENDING, KEY64), KEY_MAX).to(KEY)
    idx = tl.where(mask, cols[None, :], IDX_MAX).to(IDX)
    key, idx = bitonic_pairs(tl.reshape(key, [2] * N_DIMS), tl.reshape(idx, [2] * N_DIMS), 1, LOG_N, N_DIMS)
    key = tl.reshape(key, [BLOCK_M, BLOCK_N])
    idx = tl.reshape(idx, [BLOCK_M, BLOCK_N])
    keep = mask & (j < K)[None, :]
    if FINAL:
        v_row = strided_offset(rows, kshape, v_kstrides, KRANK)[:, None]
        i_row = strided_offset(rows, kshape, i_kstrides, KRANK)[:, None]
        _write_outputs(x_ptr, val_ptr, ind_ptr, x_row, v_row, i_row, j[None, :], idx, keep,
                       x_nstride, v_nstride, i_nstride, WRITE_VALUES)
    else:
        at = rows[:, None] * N + cols[None, :]
        tl.store(key_ptr + at, key, mask=keep)
        tl.store(idx_ptr + at, idx, mask=keep)


@triton.jit
def merge_kernel(key_in, idx_in, key_out, idx_out, x_ptr, val_ptr, ind_ptr, N, W, K, n_pairs, n_chunks,
                 n_search, kshape, x_kstrides, v_kstrides, i_kstrides, x_nstride, v_nstride, i_nstride,
                 FINAL: tl.constexpr, WRITE_VALUES: tl.constexpr, KEY64: tl.constexpr, IDX64: tl.constexpr,
                 KRANK: tl.constexpr, LOG_BLOCK: tl.constexpr):
    """Merge runs 2t and 2t+1 (width W, each holding its first min(W, K) pairs) of one row of the
    scratch buffers into the first min(2W, K) pairs of run t of the next width: this program
    makes the BLOCK of them starting at chunk * BLOCK. FINAL: the merged run is the whole row,
    written to the outputs."""
    BLOCK: tl.constexpr = 1 << LOG_BLOCK
    KEY_MAX: tl.constexpr = 0x7FFFFFFFFFFFFFFF if KEY64 else 0x7FFFFFFF
    IDX_MAX: tl.constexpr = 0x7FFFFFFFFFFFFFFF if IDX64 else 0x7FFFFFFF
    pid = tl.program_id(0).to(tl.int64)
    chunk = pid % n_chunks
    pair = (pid // n_chunks) % n_pairs
    row = pid // (n_chunks * n_pairs)
    a0 = pair * 2 * W
    b0 = a0 + W
    a_len = tl.minimum(tl.minimum(W, N - a0), K)
    b_len = tl.minimum(tl.minimum(W, tl.maximum(N - b0, 0)), K)
    total = tl.minimum(a_len + b_len, K)
    d = chunk * BLOCK
    base = row * N
    # the merge path: the first d outputs take i pairs of A and d - i of B, i the first index
    # where A[i] > B[d - 1 - i] (pairs are distinct, so there is exactly one such split)
    lo = tl.zeros([1], tl.int64) + tl.maximum(d - b_len, 0)      # [1]-shaped: masked loads want tensors
    hi = tl.zeros([1], tl.int64) + tl.minimum(d, a_len)
    for _ in range(n_search):
        go = lo < hi
        mid = (lo + hi) // 2
        ka = tl.load(key_in + base + a0 + mid, mask=go, other=0)
        ia = tl.load(idx_in + base + a0 + mid, mask=go, other=0)
        kb = tl.load(key_in + base + b0 + (d - 1 - mid), mask=go, other=0)
        ib = tl.load(idx_in + base + b0 + (d - 1 - mid), mask=go, other=0)
        a_first = (ka < kb) | ((ka == kb) & (ia < ib))
        lo = tl.where(go & a_first, mid + 1, lo)
        hi = tl.where(go & (a_first == 0), mid, hi)
    i = lo
    jb = d - i
    # BLOCK pairs of A from i, then BLOCK of B from jb in reverse: a bitonic sequence
    s = tl.arange(0, 2 * BLOCK).to(tl.int64)
    from_a = s < BLOCK
    pa = i + s
    pb = jb + (2 * BLOCK - 1 - s)
    live = (d + 0 * s) < total        # (broadcast first: the interpreter's int1 & 0-d int1 is int64)
    valid = ((from_a & (pa < a_len)) | ((s >= BLOCK) & (pb < b_len))) & live
    at = base + tl.where(from_a, a0 + pa, b0 + pb)
    key = tl.load(key_in + at, mask=valid, other=KEY_MAX)
    idx = tl.load(idx_in + at, mask=valid, other=IDX_MAX)
    key, idx = bitonic_pairs(tl.reshape(key, [2] * (LOG_BLOCK + 1)), tl.reshape(idx, [2] * (LOG_BLOCK + 1)),
                             LOG_BLOCK + 1, LOG_BLOCK + 1, LOG_BLOCK + 1)
    key = tl.reshape(key, [2 * BLOCK])
    idx = tl.reshape(idx, [2 * BLOCK])
    pos = d + s
    keep = from_a & (pos < total)
    if FINAL:
        rows = row + tl.zeros([1], tl.int64)
        x_row = strided_offset(rows, kshape, x_kstrides, KRANK)
        v_row = strided_offset(rows, kshape, v_kstrides, KRANK)
        i_row = strided_offset(rows, kshape, i_kstrides, KRANK)
        _write_outputs(x_ptr, val_ptr, ind_ptr, x_row, v_row, i_row, pos, idx, keep,
                       x_nstride, v_nstride, i_nstride, WRITE_VALUES)
    else:
        tl.store(key_out + base + a0 + pos, key, mask=keep)
        tl.store(idx_out + base + a0 + pos, idx, mask=keep)


@triton.jit
def searchsorted_kernel(seq_ptr, sorter_ptr, val_ptr, out_ptr, n, base, N, inner, vshape, v_strides, o_strides,
                        b_row_stride, b_stride, s_row_stride, s_stride, n_search,
                        RIGHT: tl.constexpr, SORTER: tl.constexpr, PER_ROW: tl.constexpr,
                        COMPUTE: tl.constexpr, VRANK: tl.constexpr, BLOCK: tl.constexpr):
    """out[p] = the insertion point of values[p] in its row of the sorted boundaries (one row for
    every value, or row p // inner): torch's binary search exactly, lower bound (the first
    boundary b with b >= v) or, RIGHT, upper bound (b > v); a value never >= a NaN boundary and
    a NaN value goes past every boundary, as in torch. SORTER: the row is read in the order of
    sorter's row (boundaries[row, sorter[row, j]]). ``base`` is the linear index of this launch's
    first value (launches past MAX_RANK dims come in pieces)."""
    p = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = p < n
    v = convert(tl.load(val_ptr + strided_offset(p, vshape, v_strides, VRANK), mask=mask, other=0), COMPUTE)
    if PER_ROW:
        row = (base + p) // inner
    else:
        row = p * 0
    lo = tl.zeros([BLOCK], tl.int64)
    hi = tl.zeros([BLOCK], tl.int64) + N
    for _ in range(n_search):
        active = mask & (lo < hi)
        mid = (lo + hi) // 2
        if SORTER:
            at = tl.load(sorter_ptr + (row * s_row_stride + mid * s_stride), mask=active, other=0)
        else:
            at = mid
        b = convert(tl.load(seq_ptr + (row * b_row_stride + at * b_stride), mask=active, other=0), COMPUTE)
        if RIGHT:
            right_of = (b > v) == 0
        else:
            right_of = (b >= v) == 0
        lo = tl.where(active & right_of, mid + 1, lo)
        hi = tl.where(active & (right_of == 0), mid, hi)
    store_cast(out_ptr + strided_offset(p, vshape, o_strides, VRANK), lo, mask)


@triton.jit
def count_kernel(pos_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out[pos[i]] += 1 for every i with pos[i] >= 0 (histogram counts): int64 atomics, whose
    sums are the same in any order (deterministic, unlike float atomics)."""
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    p = tl.load(pos_ptr + i, mask=mask, other=-1)
    tl.atomic_add(out_ptr + p, tl.full([BLOCK], 1, tl.int64), mask=mask & (p >= 0))
