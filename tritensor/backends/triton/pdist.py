"""Launchers of kernels/pdist.py: pdist, cdist and their backward.

Every operand is read in place with its own strides (transposed, sliced, broadcast batch dims
with stride 0). cdist's batch dims are broadcast to the output's and coalesced; the innermost one
runs on a grid axis (in chunks of at most 65535), any further ones are looped over here.

p selects a kernel flavour (P_KIND): 0, 1, 2, inf, or any other p at run time. p = 2 takes the
Gram path (the matrix units) for pdist and for cdist when torch would use its mm formulation
(``use_mm``); its float32 inputs go to ``tl.dot`` as TF32 or IEEE per the matmul precision
setting (tt.backends.cuda.matmul.allow_tf32 / set_float32_matmul_precision), and the threshold
under which a Gram entry is recomputed directly (cancellation) follows that precision.

The kernel module is imported on first use (see the package docstring).
"""
from __future__ import annotations

import itertools
import math

from ...runtime.launch import pointer
from .. import triton as tb
from .matmul import input_precision

MAX_GRID = 65535

# Gram path: an entry whose |a|^2 + |b|^2 - 2 a.b is below TOL * (|a|^2 + |b|^2) is recomputed
# from the differences; what is kept has lost at most ~eps / TOL of its relative precision.
GRAM_TOL = {"ieee": 2.0 ** -6, "tf32": 2.0 ** -2}

GPU = {"direct_block": 32, "direct_k": 8, "gram_block": 64, "gram_k": 32, "warps": 4,
       "bwd_block_i": 32, "bwd_block_j": 16, "bwd_block_d": 16,
       "bwd_gram_block_i": 64, "bwd_gram_block_j": 32, "bwd_gram_block_d": 64}
# under the interpreter: few programs (each costs ~0.35 ms), tl.dot tiles still of 16
INTERPRETER = {"direct_block": 8, "direct_k": 4, "gram_block": 16, "gram_k": 16, "warps": 4,
               "bwd_block_i": 8, "bwd_block_j": 8, "bwd_block_d": 8,
               "bwd_gram_block_i": 16, "bwd_gram_block_j": 16, "bwd_gram_block_d": 16}
INTERPRETER_FAST = dict(GPU)   # the emulated device's default profile (_plan.py): the GPU's larger tiles

_K = None


def _kernels():
    global _K
    if _K is None:
        tb._kernels()
        from tritensor.kernels import pdist as pdist_k
        _K = pdist_k
    return _K


def _settings():
    return tb.pick(GPU, INTERPRETER_FAST, INTERPRETER)


def p_kind(p):
    k = _kernels()
    if p == 0:
        return k.P_ZERO
    if p == 1:
        return k.P_ONE
    if p == 2:
        return k.P_TWO
    if math.isinf(p):
        return k.P_INF
    return k.P_GENERAL


def _acc(compute):
    return tb._kernels().compute[compute]


def _precision(compute):
    return input_precision(compute)


def _tol(compute):
    return GRAM_TOL["tf32" if _precision(compute) == "tf32" else "ieee"]


def _p_bits(p):
    return tb._float_bits(p if not math.isinf(p) else 0.0)


# --------------------------------------------------------------------------- pdist
def pdist(out, x, p, compute):
    """out = the packed upper triangle of ||x_i - x_j||_p (torch's order)."""
    n, D = int(x.shape[0]), int(x.shape[1])
    if out.numel() == 0:
        return
    if D == 0:
        tb.fill(out, 0.0)
        return
    k = _kernels()
    cfg = _settings()
    kind = p_kind(p)
    gram = kind == k.P_TWO
    block = cfg["gram_block"] if gram else cfg["direct_block"]
    tiles = tb._cdiv(n, block)
    sx = x.stride()
    tb._run(k.dist_forward_kernel, (tiles * (tiles + 1) // 2, 1),
            pointer(x), pointer(x), pointer(out), n, n, D,
            0, sx[0], sx[1], 0, sx[0], sx[1], 0, out.stride()[0], 0,
            _p_bits(p), _tol(compute),
            PACKED=True, P_KIND=kind, GRAM=gram, ACC=_acc(compute), PRECISION=_precision(compute),
            BLOCK_I=block, BLOCK_J=block, BLOCK_K=cfg["gram_k"], BLOCK_KD=_slab_k(cfg, block),
            num_warps=cfg["warps"])


def _slab_k(cfg, block):
    """Features per [block, block, K] difference slab: as many elements as a direct tile's slab
    (the Gram path's recomputation runs on its bigger tiles; more would spill registers)."""
    elements = cfg["direct_block"] ** 2 * cfg["direct_k"]
    return max(1, elements // (block * block))


def pdist_backward(res, g, x, dist, p, compute):
    """res = d(sum g * pdist(x, p)) / dx, from the packed g and the forward's distances."""
    n, D = int(x.shape[0]), int(x.shape[1])
    if res.numel() == 0:
        return
    k = _kernels()
    kind = p_kind(p)
    if kind == k.P_ZERO or n < 2:
        tb.fill(res, 0.0)      # the count of differing features has zero derivative
        return
    cfg = _settings()
    gram = kind == k.P_TWO
    bi, bj, bd = _bwd_blocks(cfg, gram)
    sx, sr = x.stride(), res.stride()
    tb._run(k.dist_backward_kernel, (tb._cdiv(n, bi), tb._cdiv(D, bd), 1),
            pointer(g), pointer(dist), pointer(x), pointer(x), pointer(res), n, n, D,
            0, g.stride()[0], 0, 0, dist.stride()[0], 0,
            0, sx[0], sx[1], 0, sx[0], sx[1], 0, sr[0], sr[1],
            _p_bits(p),
            PACKED=True, P_KIND=kind, GRAM=gram, ACC=_acc(compute), PRECISION=_precision(compute),
            BLOCK_I=bi, BLOCK_J=bj, BLOCK_D=bd, num_warps=cfg["warps"])


def _bwd_blocks(cfg, gram):
    if gram:
        return cfg["bwd_gram_block_i"], cfg["bwd_gram_block_j"], cfg["bwd_gram_block_d"]
    return cfg["bwd_block_i"], cfg["bwd_block_j"], cfg["bwd_block_d"]


# --------------------------------------------------------------------------- cdist
def _batches(batch_shape, operands):
    """Coalesce the batch dims of every operand (strides already broadcast to ``batch_shape``);
    yields (count of the innermost batch dim, its stride per operand, element offset per operand)
    for each position of the leading batch dims and each chunk of at most MAX_GRID entries."""
    shape, strides = tb.coalesce(batch_shape, operands)
    if not shape:
        shape, strides = [1], [[0] for _ in operands]
    inner = shape[-1]
    for coords in itertools.product(*(range(s) for s in shape[:-1])):
        base = [sum(c * st for c, st in zip(coords, s[:-1])) for s in strides]
        for start in range(0, inner, MAX_GRID):
            yield (min(MAX_GRID, inner - start), [s[-1] for s in strides],
                   [b + start * s[-1] for b, s in zip(base, strides)])


def _batch_strides(t, batch_shape):
    """t's strides over ``batch_shape`` (broadcast: 0), then its last two."""
    lead = tb.broadcast_strides(tb._View(t.shape[:-2], t.stride()[:-2], 0, None, t.dtype), batch_shape)
    return lead, tuple(int(s) for s in t.stride()[-2:])


def cdist(out, x1, x2, p, use_mm, compute):
    """out[..., i, j] = ||x1[..., i, :] - x2[..., j, :]||_p, batch dims broadcast."""
    if out.numel() == 0:
        return
    D = int(x1.shape[-1])
    if D == 0:
        tb.fill(out, 0.0)
        return
    k = _kernels()
    cfg = _settings()
    kind = p_kind(p)
    gram = kind == k.P_TWO and use_mm
    block = cfg["gram_block"] if gram else cfg["direct_block"]
    batch_shape = tuple(out.shape[:-2])
    P, R = int(out.shape[-2]), int(out.shape[-1])
    (b1, m1), (b2, m2), (bo, mo) = (_batch_strides(t, batch_shape) for t in (x1, x2, out))
    tiles = tb._cdiv(P, block) * tb._cdiv(R, block)
    for count, (s1, s2, so), (o1, o2, oo) in _batches(batch_shape, [b1, b2, bo]):
        tb._run(k.dist_forward_kernel, (tiles, count),
                pointer(x1, o1), pointer(x2, o2), pointer(out, oo), P, R, D,
                s1, m1[0], m1[1], s2, m2[0], m2[1], so, mo[0], mo[1],
                _p_bits(p), _tol(compute),
                PACKED=False, P_KIND=kind, GRAM=gram, ACC=_acc(compute), PRECISION=_precision(compute),
                BLOCK_I=block, BLOCK_J=block, BLOCK_K=cfg["gram_k"], BLOCK_KD=_slab_k(cfg, block),
                num_warps=cfg["warps"])


def cdist_backward(res, g, a, b, dist, p, compute):
    """res[..., i, :] = sum_j g[..., i, j] * d dist[..., i, j] / d a[..., i, :] (torch's
    _cdist_backward): a, b, g and dist share res's batch shape (broadcast by the caller)."""
    if res.numel() == 0:
        return
    k = _kernels()
    kind = p_kind(p)
    R = int(b.shape[-2])
    if kind == k.P_ZERO or R == 0:
        tb.fill(res, 0.0)
        return
    cfg = _settings()
    bi, bj, bd = _bwd_blocks(cfg, False)
    batch_shape = tuple(res.shape[:-2])
    P, D = int(res.shape[-2]), int(res.shape[-1])
    strides = [_batch_strides(t, batch_shape) for t in (g, dist, a, b, res)]
    lead = [s[0] for s in strides]
    (mg, md, ma, mb, mr) = (s[1] for s in strides)
    for count, bs, offs in _batches(batch_shape, lead):
        tb._run(k.dist_backward_kernel, (tb._cdiv(P, bi), tb._cdiv(D, bd), count),
                pointer(g, offs[0]), pointer(dist, offs[1]), pointer(a, offs[2]), pointer(b, offs[3]),
                pointer(res, offs[4]), P, R, D,
                bs[0], mg[0], mg[1], bs[1], md[0], md[1],
                bs[2], ma[0], ma[1], bs[3], mb[0], mb[1], bs[4], mr[0], mr[1],
                _p_bits(p),
                PACKED=False, P_KIND=kind, GRAM=False, ACC=_acc(compute), PRECISION=_precision(compute),
                BLOCK_I=bi, BLOCK_J=bj, BLOCK_D=bd, num_warps=cfg["warps"])


# --------------------------------------------------------------------------- probe
def pair_index_probe(i_out, j_out, start_out, ks, n):
    """i_out, j_out, start_out = (i, j, row start of i) of each packed index in the int64 vector
    ``ks`` for an n-row pdist, by the kernels' own mapping: tests it at any n (past 2**31 pairs)
    without an output of n * (n - 1) / 2 elements."""
    count = int(ks.numel())
    if count == 0:
        return
    block = 16
    tb._run(_kernels().pair_index_probe_kernel, (tb._cdiv(count, block),), pointer(ks), pointer(i_out),
            pointer(j_out), pointer(start_out), int(n), count, BLOCK=block)
