"""Pooling through separable tables: average / adaptive average pooling and their gradients
(separable_kernel), max / adaptive max pooling (window_max_kernel) and its gradient
(window_max_backward_kernel), each for 1, 2 and 3 spatial dims.

The launcher (backends/triton/pool.py) hands every kernel an [N, C, S0, S1, S2] problem (a 1-d
or 2-d one with leading spatial dims of size 1) and, per spatial dim d, a table computed on the
host (backends/numpy_pool.py): for output position o of the dim, the T_d input positions its
taps read (-1: none) and, for the weighted forms (the gradients' transposed tables), their
weights; average pooling adds a divisor per output position of each dim. The tables of the
three dims are packed one after the other in one buffer each: dim 0's [O0, T0] entries, then
dim 1's [O1, T1], then dim 2's.

One lane computes one output element, in the order of the output's memory (NCDHW, or
N D H W C when the output is channels_last), looping over the product of its dims' taps; so a
gradient, which is the same map on the TRANSPOSED tables (per input element the outputs that
read it), is also a gather: no atomics, the same bits on every run.

Offsets are int64 (program ids and loop indices cast first: kernels/__init__.py). Loads widen to
ACC (float32 for 16-bit floats, float64, int64) through strided.convert, stores round through
store_cast (bfloat16 to nearest even, the same bits compiled or interpreted).
"""
import triton
import triton.language as tl

from .strided import convert, store_cast


@triton.jit
def _position(p, C, S0, S1, S2, CHANNELS_LAST: tl.constexpr):
    """(n, c, i0, i1, i2) of the p-th element in memory order of an [N, C, S0, S1, S2] tensor
    (channels innermost when CHANNELS_LAST)."""
    if CHANNELS_LAST:
        c = p % C
        t = p // C
        i2 = t % S2
        t = t // S2
        i1 = t % S1
        t = t // S1
        i0 = t % S0
        n = t // S0
    else:
        i2 = p % S2
        t = p // S2
        i1 = t % S1
        t = t // S1
        i0 = t % S0
        t = t // S0
        c = t % C
        n = t // C
    return n, c, i0, i1, i2


@triton.jit
def separable_kernel(x_ptr, y_ptr, idx_ptr, w_ptr, q_ptr, total, C, O0, O1, O2, T0, T1, T2,
                     sxn, sxc, sx0, sx1, sx2, syn, syc, sy0, sy1, sy2,
                     HAS_W: tl.constexpr, HAS_Q: tl.constexpr, CHANNELS_LAST: tl.constexpr,
                     ACC: tl.constexpr, BLOCK: tl.constexpr):
    """y[n, c, o] = sum over the taps t of o's box of w0[o0, t0] w1[o1, t1] w2[o2, t2]
    x[n, c, idx0[o0, t0], idx1[o1, t1], idx2[o2, t2]] (taps with an index -1 skipped), divided
    by q0[o0] q1[o1] q2[o2] when HAS_Q (integers: truncated toward zero, as C)."""
    p = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = p < total
    n, c, o0, o1, o2 = _position(p, C, O0, O1, O2, CHANNELS_LAST)
    base = n * sxn + c * sxc
    row0 = o0 * T0                          # this lane's rows of the packed tables
    row1 = O0 * T0 + o1 * T1
    row2 = O0 * T0 + O1 * T1 + o2 * T2
    acc = tl.zeros((BLOCK,), dtype=ACC)
    for a_ in range(0, T0):
        a = tl.cast(a_, tl.int64)           # int64 loop index (kernels/__init__.py)
        j0 = tl.load(idx_ptr + row0 + a, mask=mask, other=-1)
        if HAS_W:
            w0 = tl.load(w_ptr + row0 + a, mask=mask, other=0)
        for b_ in range(0, T1):
            b = tl.cast(b_, tl.int64)
            j1 = tl.load(idx_ptr + row1 + b, mask=mask, other=-1)
            if HAS_W:
                w1 = w0 * tl.load(w_ptr + row1 + b, mask=mask, other=0)
            for e_ in range(0, T2):
                e = tl.cast(e_, tl.int64)
                j2 = tl.load(idx_ptr + row2 + e, mask=mask, other=-1)
                ok = mask & (j0 >= 0) & (j1 >= 0) & (j2 >= 0)
                v = convert(tl.load(x_ptr + base + j0 * sx0 + j1 * sx1 + j2 * sx2, mask=ok, other=0), ACC)
                if HAS_W:
                    v = v * (w1 * tl.load(w_ptr + row2 + e, mask=mask, other=0)).to(ACC)
                acc += tl.where(ok, v, 0)
    if HAS_Q:
        q = (tl.load(q_ptr + o0, mask=mask, other=1) * tl.load(q_ptr + O0 + o1, mask=mask, other=1)
             * tl.load(q_ptr + O0 + O1 + o2, mask=mask, other=1))
        if ACC == tl.int64:
            acc = tl.where(acc >= 0, acc // q, -((-acc) // q))     # C's truncating division
        else:
            acc = acc / q.to(ACC)
    store_cast(y_ptr + n * syn + c * syc + o0 * sy0 + o1 * sy1 + o2 * sy2, acc, mask)


@triton.jit
def window_max_kernel(x_ptr, y_ptr, i_ptr, idx_ptr, total, C, O0, O1, O2, T0, T1, T2, I1, I2,
                      sxn, sxc, sx0, sx1, sx2, syn, syc, sy0, sy1, sy2, sin, sic, si0, si1, si2,
                      CHANNELS_LAST: tl.constexpr, ACC: tl.constexpr, BLOCK: tl.constexpr):
    """y[n, c, o] = the max over o's box of taps, i[n, c, o] its flat position (j0 * I1 + j1)
    * I2 + j2 in the input plane. torch's rule: a tap replaces the max when it is greater or
    NaN (so NaN propagates, the last NaN's position wins) or when it is the first tap inside the
    input; ties keep the first. A window with no tap inside the input (possible with dilation
    and padding) gives the lowest value and index -1 (torch: a position outside the plane)."""
    p = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = p < total
    n, c, o0, o1, o2 = _position(p, C, O0, O1, O2, CHANNELS_LAST)
    base = n * sxn + c * sxc
    row0 = o0 * T0
    row1 = O0 * T0 + o1 * T1
    row2 = O0 * T0 + O1 * T1 + o2 * T2
    if ACC == tl.int64:        # the lowest value: a window with no tap inside the input keeps it, as torch's
        best = tl.full((BLOCK,), -9223372036854775807 - 1, tl.int64)
    else:
        best = tl.full((BLOCK,), float("-inf"), ACC)
    arg = tl.full((BLOCK,), -1, tl.int64)
    for a_ in range(0, T0):
        a = tl.cast(a_, tl.int64)           # int64 loop index (kernels/__init__.py)
        j0 = tl.load(idx_ptr + row0 + a, mask=mask, other=-1)
        for b_ in range(0, T1):
            b = tl.cast(b_, tl.int64)
            j1 = tl.load(idx_ptr + row1 + b, mask=mask, other=-1)
            for e_ in range(0, T2):
                e = tl.cast(e_, tl.int64)
                j2 = tl.load(idx_ptr + row2 + e, mask=mask, other=-1)
                ok = mask & (j0 >= 0) & (j1 >= 0) & (j2 >= 0)
                v = convert(tl.load(x_ptr + base + j0 * sx0 + j1 * sx1 + j2 * sx2, mask=ok, other=0), ACC)
                take = ok & ((arg < 0) | (v > best) | (v != v))
                best = tl.where(take, v, best)
                arg = tl.where(take, (j0 * I1 + j1) * I2 + j2, arg)
    store_cast(y_ptr + n * syn + c * syc + o0 * sy0 + o1 * sy1 + o2 * sy2, best, mask)
    tl.store(i_ptr + n * sin + c * sic + o0 * si0 + o1 * si1 + o2 * si2, arg, mask=mask)


@triton.jit
def window_max_backward_kernel(g_ptr, i_ptr, gx_ptr, idx_ptr, total, C, I0, I1, I2, U0, U1, U2,
                               sgn, sgc, sg0, sg1, sg2, sin, sic, si0, si1, si2,
                               sxn, sxc, sx0, sx1, sx2,
                               CHANNELS_LAST: tl.constexpr, ACC: tl.constexpr, BLOCK: tl.constexpr):
    """gx[n, c, j] = the sum of g[n, c, o] over the outputs o whose box holds j (the transposed
    tables: per input position of each dim, the U_d outputs that read it, -1 padded) and whose
    max sits at j (i[n, c, o] == j's flat position)."""
    p = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = p < total
    n, c, j0, j1, j2 = _position(p, C, I0, I1, I2, CHANNELS_LAST)
    flat = (j0 * I1 + j1) * I2 + j2
    gbase = n * sgn + c * sgc
    ibase = n * sin + c * sic
    row0 = j0 * U0
    row1 = I0 * U0 + j1 * U1
    row2 = I0 * U0 + I1 * U1 + j2 * U2
    acc = tl.zeros((BLOCK,), dtype=ACC)
    for a_ in range(0, U0):
        a = tl.cast(a_, tl.int64)           # int64 loop index (kernels/__init__.py)
        o0 = tl.load(idx_ptr + row0 + a, mask=mask, other=-1)
        for b_ in range(0, U1):
            b = tl.cast(b_, tl.int64)
            o1 = tl.load(idx_ptr + row1 + b, mask=mask, other=-1)
            for e_ in range(0, U2):
                e = tl.cast(e_, tl.int64)
                o2 = tl.load(idx_ptr + row2 + e, mask=mask, other=-1)
                ok = mask & (o0 >= 0) & (o1 >= 0) & (o2 >= 0)
                hit = tl.load(i_ptr + ibase + o0 * si0 + o1 * si1 + o2 * si2, mask=ok, other=-1) == flat
                v = convert(tl.load(g_ptr + gbase + o0 * sg0 + o1 * sg1 + o2 * sg2, mask=ok & hit, other=0), ACC)
                acc += tl.where(ok & hit, v, 0)
    store_cast(gx_ptr + n * sxn + c * sxc + j0 * sx0 + j1 * sx1 + j2 * sx2, acc, mask)
