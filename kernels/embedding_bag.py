"""embedding_bag's forward: each bag's rows of the weight reduced (sum, mean or max) in one
program per (bag, column block), walking the bag's indices in order (deterministic).

    embedding_bag_kernel   bag b covers input positions [starts[b], ends[b]); each position's
                           row weight[input[p]] (times per_sample_weights[p] in sum mode) is
                           accumulated in COMPUTE; positions whose index is padding_idx (PAD,
                           -1 for none) are skipped; mean divides by the count of the others;
                           max keeps the first maximum and its row index (max_indices, -1 for a
                           bag with no row); an empty bag gives zeros

The backward needs no kernel of its own: its scatter into the weight gradient is index_add
(deterministic), written in table ops by the op layer.
"""
import triton
import triton.language as tl

from .elementwise import _div
from .strided import convert

MODE_SUM = 0
MODE_MEAN = 1
MODE_MAX = 2


@triton.jit
def embedding_bag_kernel(W, IDX, STARTS, ENDS, PSW, OUT, MAXI, D, s_w0, s_w1, s_idx, s_psw, s_out0, s_out1, s_max0,
                         s_max1, PAD, MODE: tl.constexpr, HAS_PSW: tl.constexpr, COMPUTE: tl.constexpr,
                         BLOCK_D: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1).to(tl.int64) * BLOCK_D + tl.arange(0, BLOCK_D).to(tl.int64)
    cmask = cols < D
    start = tl.load(STARTS + b).to(tl.int64)
    end = tl.load(ENDS + b).to(tl.int64)
    acc = tl.zeros([BLOCK_D], COMPUTE)
    arg = tl.full([BLOCK_D], -1, tl.int64)
    count = start * 0
    for p_ in range(start, end):
        p = tl.cast(p_, tl.int64)
        row = tl.load(IDX + p * s_idx).to(tl.int64)
        if row != PAD:
            v = tl.load(W + row * s_w0 + cols * s_w1, mask=cmask, other=0).to(COMPUTE)
            if MODE == 2:     # the first maximum; a NaN replaces a number and then stays
                take = (arg < 0) | (v > acc) | ((v != v) & (acc == acc))
                acc = tl.where(take, v, acc)
                arg = tl.where(take, row, arg)
            else:
                if HAS_PSW:
                    v = v * tl.load(PSW + p * s_psw).to(COMPUTE)
                acc += v
            count += 1
    if MODE == 1:
        acc = _div(acc, tl.zeros_like(acc) + tl.maximum(count, 1).to(COMPUTE))
    tl.store(OUT + b * s_out0 + cols * s_out1, convert(acc, OUT.dtype.element_ty), mask=cmask)
    if MODE == 2:
        tl.store(MAXI + b * s_max0 + cols * s_max1, arg, mask=cmask)
