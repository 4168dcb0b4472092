"""Launchers of the nn kernels: layer_norm, batch norm and group norm (kernels/norm.py) and cross
entropy (kernels/loss.py).

As everywhere in this package, a launcher reads only shape, stride(), _offset, _storage and dtype of
its tensors, returns at once for an empty output, and imports the kernel module on first use
(Triton decides compiled-or-interpreted when the kernels are decorated).

Block sizes are launch parameters (``settings()``; tests may patch them): under the interpreter
every program costs ~0.35 ms, so small blocks keep test shapes crossing block boundaries with
few programs.
"""
from __future__ import annotations

from ...runtime.launch import pointer
from .. import triton as tb

_K = None

# GPU: rows of up to 32 KB in the compute dtype (8192 float32 or 4096 float64 values) are held in
# registers (one read in the forward); longer rows stream in [BLOCK_M, 2048] chunks. The limit
# comes from the sm_90 build (ptxas, 8 warps): the layer_norm backward on one-tile rows of 8192
# float32 values takes 134 registers a thread, of 4096 float64 values 162, of 8192 float64
# values 255 plus a 64-byte stack (spills), hence bytes, not a count. The layer_norm backward
# runs on about 4 programs per SM of an H100 (132 SMs), each summing its rows' dw/db columns.
#
# Batch/group norm ("stat_*"): [BLOCK_S, BLOCK_Q] tiles of 4096 elements, at most 64 statistics
# wide when the statistics are the contiguous dim (channels_last), otherwise a few statistics
# by a long contiguous run; the moments and backward sums split each statistic's elements over
# enough programs to give about 4 programs per SM (528 on an H100), each with at least 4 tiles.
GPU_SETTINGS = {"row_tile": 4096, "max_row_bytes": 32768, "stream_block_n": 2048, "warps": 8,
                "backward_programs": 528, "stat_tile": 4096, "stat_wide": 64, "stat_programs": 528,
                "stat_min_units": 4, "stat_warps": 8}
INTERPRETER_SETTINGS = {"row_tile": 64, "max_row_bytes": 128, "stream_block_n": 16, "warps": 4,
                        "backward_programs": 4, "stat_tile": 64, "stat_wide": 8, "stat_programs": 4,
                        "stat_min_units": 2, "stat_warps": 4}
# The emulated device's default profile (_plan.py): whole rows of up to 16k float32 values in one
# tile, few programs.
INTERPRETER_FAST_SETTINGS = {"row_tile": 65536, "max_row_bytes": 65536, "stream_block_n": 8192, "warps": 4,
                             "backward_programs": 2, "stat_tile": 65536, "stat_wide": 256, "stat_programs": 1,
                             "stat_min_units": 1, "stat_warps": 4}


def settings():
    return tb.pick(GPU_SETTINGS, INTERPRETER_FAST_SETTINGS, INTERPRETER_SETTINGS)


def _kernels():
    global _K
    if _K is None:
        from tritensor.kernels import loss as loss_k
        from tritensor.kernels import norm as norm_k
        from tritensor.kernels import rms_norm as rms_norm_k
        k = tb._Kernels()
        k.norm, k.loss, k.rms_norm = norm_k, loss_k, rms_norm_k
        _K = k
    return _K


def _blocks(M, N, cfg, compute):
    """(BLOCK_M, BLOCK_N, ONE_TILE): whole rows in one tile when they fit, chunks otherwise."""
    one_tile = N * tb._dtype(compute).itemsize <= cfg["max_row_bytes"]
    block_n = tb._next_pow2(N) if one_tile else cfg["stream_block_n"]
    block_m = min(tb._next_pow2(M), max(1, cfg["row_tile"] // block_n))
    return block_m, block_n, one_tile


def rows_view(t, k):
    """``t`` (shape (*, normalized): k trailing dims) as an (M, N) view with one row stride and
    one column stride; the leading and the trailing dims must each merge into one (the op layer
    makes ``t`` contiguous first when they do not)."""
    shape = tuple(int(s) for s in t.shape)
    lead = len(shape) - k
    strides = []
    for dims in (range(lead), range(lead, len(shape))):
        merged, (st,) = tb.coalesce([shape[d] for d in dims], [[t.stride()[d] for d in dims]])
        strides.append(st[0] if merged else 0)
    return tb._View((tb._prod(shape[:lead]), tb._prod(shape[lead:])), strides, t._offset, t._storage, t.dtype)


# --------------------------------------------------------------------------- layer_norm
def layer_norm(out, x, weight, bias, mean, rstd, eps, compute):
    """out, x: (M, N) with any strides for x and a unit column stride for out (contiguous);
    weight/bias: contiguous (N,) or None; mean/rstd: contiguous (M,) in ``compute``, written."""
    M, N = (int(s) for s in out.shape)
    if M == 0 or N == 0:
        return
    k, cfg = tb._kernels(), settings()
    block_m, block_n, one_tile = _blocks(M, N, cfg, compute)
    xs = x.stride()
    tb._run(_kernels().norm.layer_norm_fwd_kernel, (tb._cdiv(M, block_m),), pointer(x),
            pointer(weight) if weight is not None else pointer(x), pointer(bias) if bias is not None else pointer(x),
            pointer(out), pointer(mean), pointer(rstd), M, N, xs[0], xs[1], out.stride()[0], tb._float_bits(eps),
            HAS_W=weight is not None, HAS_B=bias is not None, COMPUTE=k.compute[compute], BLOCK_M=block_m,
            BLOCK_N=block_n, ONE_TILE=one_tile, num_warps=cfg["warps"])


def layer_norm_backward(dx, grad, x, weight, mean, rstd, grad_weight, grad_bias, compute):
    """dx (M, N) contiguous; grad, x (M, N) any strides; grad_weight / grad_bias: (N,) outputs or
    None. The column sums run in two deterministic stages: per-program partial sums in a
    (programs, N) scratch buffer, then the reduce kernel over the programs."""
    M, N = (int(s) for s in dx.shape)
    if N == 0:
        return
    k, cfg = tb._kernels(), settings()
    if M == 0:
        for t in (grad_weight, grad_bias):
            if t is not None:
                tb.fill(t, 0)
        return
    block_m, block_n, one_tile = _blocks(M, N, cfg, compute)
    programs = max(1, min(cfg["backward_programs"], tb._cdiv(M, block_m)))
    rows = tb._cdiv(tb._cdiv(M, programs), block_m) * block_m     # whole blocks per program
    programs = tb._cdiv(M, rows)
    parts = {}
    for name, t in (("dw", grad_weight), ("db", grad_bias)):
        if t is not None:
            parts[name] = tb._scratch(dx, (programs, N), tb._dtype(compute))
            if not one_tile:       # the streaming path adds into its row of partial sums
                tb.fill(parts[name], 0)
    gs, xs = grad.stride(), x.stride()
    dw = parts.get("dw")
    db = parts.get("db")
    tb._run(_kernels().norm.layer_norm_bwd_kernel, (programs,), pointer(grad), pointer(x),
            pointer(weight) if weight is not None else pointer(x), pointer(mean), pointer(rstd), pointer(dx),
            pointer(dw) if dw is not None else pointer(mean), pointer(db) if db is not None else pointer(mean),
            M, N, rows, gs[0], gs[1], xs[0], xs[1], dx.stride()[0],
            HAS_W=weight is not None, NEED_DW=dw is not None, NEED_DB=db is not None, COMPUTE=k.compute[compute],
            BLOCK_M=block_m, BLOCK_N=block_n, ONE_TILE=one_tile, num_warps=cfg["warps"])
    for part, t in ((dw, grad_weight), (db, grad_bias)):
        if part is not None:      # t is contiguous: seen flat as the N column sums
            tb.reduce("sum", tb._View((N,), (1,), t._offset, t._storage, t.dtype), part, (0,), compute)


# --------------------------------------------------------------------------- rms_norm
def rms_norm(out, x, weight, rstd, eps, compute):
    """out, x: (M, N) with any strides for x and a unit column stride for out (contiguous);
    weight: contiguous (N,) or None; rstd: contiguous (M,) in ``compute``, written."""
    M, N = (int(s) for s in out.shape)
    if M == 0 or N == 0:
        return
    k, cfg = tb._kernels(), settings()
    block_m, block_n, one_tile = _blocks(M, N, cfg, compute)
    xs = x.stride()
    tb._run(_kernels().rms_norm.rms_norm_fwd_kernel, (tb._cdiv(M, block_m),), pointer(x),
            pointer(weight) if weight is not None else pointer(x), pointer(out), pointer(rstd), M, N, xs[0], xs[1],
            out.stride()[0], tb._float_bits(eps), HAS_W=weight is not None, COMPUTE=k.compute[compute],
            BLOCK_M=block_m, BLOCK_N=block_n, ONE_TILE=one_tile, num_warps=cfg["warps"])


def rms_norm_backward(dx, grad, x, weight, rstd, grad_weight, compute):
    """dx (M, N) contiguous; grad, x (M, N) any strides; grad_weight: an (N,) output or None,
    summed in two deterministic stages (per-program partial sums, then the reduce kernel)."""
    M, N = (int(s) for s in dx.shape)
    if N == 0:
        return
    k, cfg = tb._kernels(), settings()
    if M == 0:
        if grad_weight is not None:
            tb.fill(grad_weight, 0)
        return
    block_m, block_n, one_tile = _blocks(M, N, cfg, compute)
    programs = max(1, min(cfg["backward_programs"], tb._cdiv(M, block_m)))
    rows = tb._cdiv(tb._cdiv(M, programs), block_m) * block_m     # whole blocks per program
    programs = tb._cdiv(M, rows)
    dw = None
    if grad_weight is not None:
        dw = tb._scratch(dx, (programs, N), tb._dtype(compute))
        if not one_tile:       # the streaming path adds into its row of partial sums
            tb.fill(dw, 0)
    gs, xs = grad.stride(), x.stride()
    tb._run(_kernels().rms_norm.rms_norm_bwd_kernel, (programs,), pointer(grad), pointer(x),
            pointer(weight) if weight is not None else pointer(x), pointer(rstd), pointer(dx),
            pointer(dw) if dw is not None else pointer(rstd), M, N, rows, gs[0], gs[1], xs[0], xs[1],
            dx.stride()[0], HAS_W=weight is not None, NEED_DW=dw is not None, COMPUTE=k.compute[compute],
            BLOCK_M=block_m, BLOCK_N=block_n, ONE_TILE=one_tile, num_warps=cfg["warps"])
    if dw is not None:      # grad_weight is contiguous: seen flat as the N column sums
        tb.reduce("sum", tb._View((N,), (1,), grad_weight._offset, grad_weight._storage, grad_weight.dtype), dw,
                  (0,), compute)


# --------------------------------------------------------------------------- cross entropy
def _with_class_dim(t, shape, cdim, part_offset=0):
    """``t`` (the rows' shape) seen with a stride-0 class dim inserted at ``cdim``."""
    strides = list(t.stride())
    strides.insert(cdim, 0)
    return tb._View(shape, strides, t._offset + part_offset, t._storage, t.dtype)


def _row_launch(x, cdim, operands):
    """Rows of x's shape along class dim ``cdim``: (pieces, N, [class stride per operand])."""
    kshape, kstrides, N, nstrides = tb._row_problem(tuple(x.shape), cdim, operands)
    return list(tb.pieces(kshape, kstrides)), N, nstrides


def cross_entropy(out, x, target, weight, cdim, ignore_index, compute):
    """out: (2,) + target's shape, contiguous: out[0] = per-row nll, out[1] = per-row smoothing
    term (see kernels/loss.py); x: the scores, class dim ``cdim``; target: int64/uint8 of the
    rows' shape; weight: contiguous (C,) or None."""
    if out.numel() == 0:
        return
    k, cfg = tb._kernels(), settings()
    shape = tuple(int(s) for s in x.shape)
    part = out.stride()[0]
    rows_out = tb._View(out.shape[1:], out.stride()[1:], out._offset, out._storage, out.dtype)
    operands = [x, _with_class_dim(target, shape, cdim), _with_class_dim(rows_out, shape, cdim)]
    pieces, N, nstrides = _row_launch(x, cdim, operands)
    for p_shape, p_strides, p_offsets, _ in pieces:
        M = tb._prod(p_shape)
        block_m, block_n, one_tile = _blocks(M, N, cfg, compute)
        tb._run(_kernels().loss.cross_entropy_fwd_kernel, (tb._cdiv(M, block_m),), pointer(x, p_offsets[0]),
                pointer(target, p_offsets[1]), pointer(weight) if weight is not None else pointer(x),
                pointer(out, p_offsets[2]), M, N, p_shape, p_strides[0], p_strides[1], p_strides[2], nstrides[0],
                part, int(ignore_index), HAS_W=weight is not None, COMPUTE=k.compute[compute],
                KRANK=len(p_shape), BLOCK_M=block_m, BLOCK_N=block_n, ONE_TILE=one_tile, num_warps=cfg["warps"])


def cross_entropy_backward(dx, grad, x, target, weight, cdim, ignore_index, compute):
    """dx: x's shape; grad: (2,) + target's shape, any strides (grad[0] for the nll rows,
    grad[1] for the smoothing rows, often broadcast with stride 0)."""
    if dx.numel() == 0:
        return
    k, cfg = tb._kernels(), settings()
    shape = tuple(int(s) for s in x.shape)
    g_part = grad.stride()[0]
    g_rows = tb._View(grad.shape[1:], grad.stride()[1:], grad._offset, grad._storage, grad.dtype)
    operands = [_with_class_dim(g_rows, shape, cdim), x, _with_class_dim(target, shape, cdim), dx]
    pieces, N, nstrides = _row_launch(x, cdim, operands)
    for p_shape, p_strides, p_offsets, _ in pieces:
        M = tb._prod(p_shape)
        block_m, block_n, one_tile = _blocks(M, N, cfg, compute)
        tb._run(_kernels().loss.cross_entropy_bwd_kernel, (tb._cdiv(M, block_m),), pointer(grad, p_offsets[0]),
                pointer(x, p_offsets[1]), pointer(target, p_offsets[2]),
                pointer(weight) if weight is not None else pointer(x), pointer(dx, p_offsets[3]), M, N, p_shape,
                p_strides[0], p_strides[1], p_strides[2], p_strides[3], nstrides[1], nstrides[3], g_part,
                int(ignore_index), HAS_W=weight is not None, COMPUTE=k.compute[compute], KRANK=len(p_shape),
                BLOCK_M=block_m, BLOCK_N=block_n, ONE_TILE=one_tile, num_warps=cfg["warps"])


# --------------------------------------------------------------------------- batch norm / group norm
# Inputs arrive as (N, C, *spatial) tensors whose spatial dims merge into one (the op layer makes
# them so): _ncl reads them as (N, C, L) with one stride each. See kernels/norm.py for the
# statistics' element sets and the (A, C, B) views of the apply passes.
MAX_GRID_Y = 65535


def _ncl(t):
    """(N, C, L) and t's three strides (L: the merged spatial dims; 1 without any)."""
    shape, strides = tuple(int(s) for s in t.shape), tuple(int(s) for s in t.stride())
    rest, (rest_strides,) = tb.coalesce(shape[2:], [strides[2:]])
    if len(rest) > 1:
        raise ValueError("norm launchers: the spatial dims must merge into one")
    L = rest[0] if rest else (0 if 0 in shape[2:] else 1)
    return (shape[0], shape[1], L), (strides[0], strides[1], rest_strides[0] if rest else 1)


def _reduction_axes(dims):
    """dims: [(extent, [stride per operand])] of a statistic's elements. Returns
    (P, [p stride per operand], Q, [q stride per operand]) with Q the dim the first operand walks
    fastest (size-1 dims dropped, neighbours merged where every operand allows)."""
    n_ops = len(dims[0][1])
    dims = sorted((d for d in dims if d[0] != 1), key=lambda d: -abs(d[1][0]))
    shape, strides = tb.coalesce([d[0] for d in dims], [[d[1][i] for d in dims] for i in range(n_ops)])
    if not shape:
        return 1, [0] * n_ops, 1, [0] * n_ops
    if len(shape) == 1:
        return 1, [0] * n_ops, shape[0], [st[0] for st in strides]
    assert len(shape) == 2, shape
    return shape[0], [st[0] for st in strides], shape[1], [st[1] for st in strides]


def _stat_blocks(S, Q, s_contiguous, cfg):
    tile = cfg["stat_tile"]
    if s_contiguous:
        block_s = min(tb._next_pow2(S), cfg["stat_wide"])
        block_q = min(tb._next_pow2(Q), max(1, tile // block_s))
    else:
        block_q = min(tb._next_pow2(Q), tile)
        block_s = min(tb._next_pow2(S), max(1, tile // block_q))
    return block_s, block_q


def _splits(S, block_s, P, Q, block_q, cfg):
    """(units, units per split, splits): each statistic's P * cdiv(Q, BLOCK_Q) tiles spread over
    enough splits to fill the GPU, each split with at least stat_min_units tiles."""
    units = P * tb._cdiv(Q, block_q)
    s_blocks = tb._cdiv(S, block_s)
    splits = max(1, min(cfg["stat_programs"] // s_blocks, tb._cdiv(units, cfg["stat_min_units"]), MAX_GRID_Y))
    per = tb._cdiv(units, splits)
    return units, per, tb._cdiv(units, per)


def _moments(x, S, S_inner, s_outer, s_inner, red, mean, rstd, running_mean, running_var, eps, momentum, compute):
    """mean/rstd (contiguous, S values) of statistics s over the elements ``red`` (see
    _reduction_axes), the running statistics updated when given."""
    k, cfg = tb._kernels(), settings()
    P, (sp,), Q, (sq,) = _reduction_axes(red)
    block_s, block_q = _stat_blocks(S, Q, s_inner == 1, cfg)
    units, per, splits = _splits(S, block_s, P, Q, block_q, cfg)
    part = tb._scratch(mean, (3, splits, S), tb._dtype(compute))
    s_blocks = tb._cdiv(S, block_s)
    tb._run(_kernels().norm.moments_partial_kernel, (s_blocks, splits), pointer(x), pointer(part), S, S_inner,
            s_outer, s_inner, sp, Q, sq, units, per, COMPUTE=k.compute[compute], BLOCK_S=block_s, BLOCK_Q=block_q,
            num_warps=cfg["stat_warps"])
    update = running_mean is not None
    block_f = min(tb._next_pow2(S), tb.pick(1024, 1024, 16))
    tb._run(_kernels().norm.moments_finalize_kernel, (tb._cdiv(S, block_f),), pointer(part), pointer(mean),
            pointer(rstd), pointer(running_mean) if update else pointer(mean),
            pointer(running_var) if update else pointer(rstd), S, splits, tb._float_bits(eps),
            tb._float_bits(momentum), UPDATE_RUNNING=update, COMPUTE=k.compute[compute], BLOCK_S=block_f,
            num_warps=4)


def _apply_blocks(C, B, c_contiguous, cfg):
    tile = cfg["stat_tile"]
    if c_contiguous:
        block_c = min(tb._next_pow2(C), cfg["stat_wide"])
        block_b = min(tb._next_pow2(B), max(1, tile // block_c))
    else:
        block_b = min(tb._next_pow2(B), tile)
        block_c = min(tb._next_pow2(C), max(1, tile // block_b))
    block_c = max(block_c, tb._next_pow2(tb._cdiv(C, MAX_GRID_Y)))      # the grid's y limit
    return block_c, block_b


def _views_acb(tensors, batch_stats):
    """Several tensors of one shape as (A, C, B) views walked in the same order (the first
    tensor's fastest dim as B)."""
    (N, C, L), _ = _ncl(tensors[0])
    strides = [_ncl(t)[1] for t in tensors]
    if batch_stats:
        P, ps, Q, qs = _reduction_axes([(N, [s[0] for s in strides]), (L, [s[2] for s in strides])])
        return (P, C, Q), [(p, s[1], q) for p, s, q in zip(ps, strides, qs)]
    return (N, C, L), strides


def _apply(y, x, mean, rstd, weight, bias, batch_stats, groups, eps, var_input, compute):
    k, cfg = tb._kernels(), settings()
    (A, C, B), (xs, ys) = _views_acb([x, y], batch_stats)
    cpg = 1 if batch_stats else C // groups
    block_c, block_b = _apply_blocks(C, B, xs[1] == 1, cfg)
    b_blocks = tb._cdiv(B, block_b)
    tb._run(_kernels().norm.norm_apply_kernel, (A * b_blocks, tb._cdiv(C, block_c)), pointer(x), pointer(y),
            pointer(mean), pointer(rstd), pointer(weight) if weight is not None else pointer(x),
            pointer(bias) if bias is not None else pointer(x), C, B, b_blocks, xs[0], xs[1], xs[2], ys[0], ys[1],
            ys[2], 0 if batch_stats else groups, cpg, tb._float_bits(eps), HAS_W=weight is not None,
            HAS_B=bias is not None, VAR_INPUT=var_input, COMPUTE=k.compute[compute], BLOCK_C=block_c,
            BLOCK_B=block_b, num_warps=cfg["stat_warps"])


def _compute_stats(x, mean, rstd, compute):
    """The statistics the apply pass reads stay in the compute dtype: scratch buffers when the
    outputs are narrower (torch's save_mean of a float16 input without float32 parameters is
    float16; rounding it first would shift every output by the mean's rounding)."""
    if mean.dtype.name == compute:
        return mean, rstd
    return (tb._scratch(x, tuple(mean.shape), tb._dtype(compute)),
            tb._scratch(x, tuple(rstd.shape), tb._dtype(compute)))


def _store_stats(mean, rstd, computed_mean, computed_rstd):
    if computed_mean is not mean:
        tb.copy(mean, computed_mean)
        tb.copy(rstd, computed_rstd)


def batch_norm(out, x, weight, bias, running_mean, running_var, save_mean, save_invstd, training, momentum, eps,
               compute):
    """out = batch norm of x (N, C, *); training: the batch's statistics into save_mean /
    save_invstd (C,) and, when given, the running statistics updated in place; otherwise the
    running statistics normalise. weight/bias/running stats: contiguous (C,) or None."""
    if out.numel() == 0:
        return
    (N, C, L), (sn, sc, sl) = _ncl(x)
    if training:
        mean, invstd = _compute_stats(x, save_mean, save_invstd, compute)
        _moments(x, C, C, 0, sc, [(N, [sn]), (L, [sl])], mean, invstd, running_mean, running_var, eps, momentum,
                 compute)
        _apply(out, x, mean, invstd, weight, bias, True, 1, eps, False, compute)
        _store_stats(save_mean, save_invstd, mean, invstd)
    else:
        _apply(out, x, running_mean, running_var, weight, bias, True, 1, eps, True, compute)


def batch_norm_backward(outs, grad, x, weight, mean, invstd, training, compute):
    """(dx, dw, db) of batch norm (each may be None); mean/invstd: the batch's statistics
    (training) or the running mean and 1 / sqrt(running_var + eps) (eval)."""
    dx, dw, db = outs
    (N, C, L), _ = _ncl(x)
    if C == 0:
        return
    k, cfg = tb._kernels(), settings()
    if N * L == 0:
        for t in (dw, db):
            if t is not None:
                tb.fill(t, 0)
        return
    coef = None
    if training or dw is not None or db is not None:
        (_, gs), (_, xs) = _ncl(grad), _ncl(x)
        P, (xp, gp), Q, (xq, gq) = _reduction_axes([(N, [xs[0], gs[0]]), (L, [xs[2], gs[2]])])
        sums = _grad_sums(grad, x, mean, C, C, (0, gs[1]), (0, xs[1]), P, (xp, gp), Q, (xq, gq), 0, 1, compute)
        splits = sums.shape[1]
        coef = tb._scratch(x, (2, C), tb._dtype(compute)) if training else None
        block_f = min(tb._next_pow2(C), tb.pick(1024, 1024, 16))
        tb._run(_kernels().norm.batch_norm_bwd_finalize_kernel, (tb._cdiv(C, block_f),), pointer(sums),
                pointer(invstd), pointer(weight) if weight is not None else pointer(invstd),
                pointer(dw) if dw is not None else pointer(invstd), pointer(db) if db is not None else pointer(invstd),
                pointer(coef) if coef is not None else pointer(invstd), C, splits, N * L, HAS_W=weight is not None,
                NEED_DW=dw is not None, NEED_DB=db is not None, TRAINING=training, COMPUTE=k.compute[compute],
                BLOCK_S=block_f, num_warps=4)
    if dx is not None:
        _backward_apply(dx, grad, x, mean, invstd, weight, coef, C, True, 1, training, compute)


def _grad_sums(grad, x, mean, S, S_inner, g_s, x_s, P, ps, Q, qs, mean_outer, mean_cpg, compute):
    """(2, splits, S) partial sums of g and g (x - mean) per statistic (see grad_sums_partial_kernel);
    g_s / x_s: (outer, inner) statistic strides; ps / qs: (x, g) strides of the reduced axes."""
    k, cfg = tb._kernels(), settings()
    block_s, block_q = _stat_blocks(S, Q, x_s[1] == 1, cfg)
    units, per, splits = _splits(S, block_s, P, Q, block_q, cfg)
    part = tb._scratch(x, (2, splits, S), tb._dtype(compute))
    tb._run(_kernels().norm.grad_sums_partial_kernel, (tb._cdiv(S, block_s), splits), pointer(grad), pointer(x),
            pointer(mean), pointer(part), S, S_inner, g_s[0], g_s[1], ps[1], qs[1], x_s[0], x_s[1], ps[0], qs[0], Q,
            mean_outer, mean_cpg, units, per, COMPUTE=k.compute[compute], BLOCK_S=block_s, BLOCK_Q=block_q,
            num_warps=cfg["stat_warps"])
    return part


def _backward_apply(dx, grad, x, mean, rstd, weight, coef, n_stat, batch_stats, groups, training, compute):
    k, cfg = tb._kernels(), settings()
    (A, C, B), (xs, gs, ds) = _views_acb([x, grad, dx], batch_stats)
    cpg = 1 if batch_stats else C // groups
    block_c, block_b = _apply_blocks(C, B, xs[1] == 1, cfg)
    b_blocks = tb._cdiv(B, block_b)
    tb._run(_kernels().norm.norm_backward_apply_kernel, (A * b_blocks, tb._cdiv(C, block_c)), pointer(grad),
            pointer(x), pointer(dx), pointer(mean), pointer(rstd), pointer(weight) if weight is not None else pointer(x),
            pointer(coef) if coef is not None else pointer(rstd), C, B, b_blocks, n_stat, gs[0], gs[1], gs[2], xs[0],
            xs[1], xs[2], ds[0], ds[1], ds[2], 0 if batch_stats else groups, cpg, HAS_W=weight is not None,
            TRAINING=training, COMPUTE=k.compute[compute], BLOCK_C=block_c, BLOCK_B=block_b,
            num_warps=cfg["stat_warps"])


def group_norm(outs, x, weight, bias, groups, eps, compute):
    """(out, mean, rstd): group norm of x (N, C, *) in ``groups`` groups; mean/rstd (N, groups)."""
    out, mean, rstd = outs
    (N, C, L), (sn, sc, sl) = _ncl(x)
    if N * groups == 0:
        return
    cpg = C // groups
    if cpg * L == 0:       # empty groups: torch's mean 0 and rstd nan (0 / 0)
        tb.fill(mean, 0.0)
        tb.fill(rstd, float("nan"))
        return
    m, r = _compute_stats(x, mean, rstd, compute)
    _moments(x, N * groups, groups, sn, cpg * sc, [(cpg, [sc]), (L, [sl])], m, r, None, None, eps, 0.0, compute)
    _apply(out, x, m, r, weight, bias, False, groups, eps, False, compute)
    _store_stats(mean, rstd, m, r)


def group_norm_backward(outs, grad, x, mean, rstd, weight, groups, compute):
    """(dx, dw, db) of group norm (each may be None)."""
    dx, dw, db = outs
    (N, C, L), _ = _ncl(x)
    if C == 0:
        return
    k, cfg = tb._kernels(), settings()
    if N * L == 0:
        for t in (dw, db):
            if t is not None:
                tb.fill(t, 0)
        if dx is not None and dx.numel():
            tb.fill(dx, 0)
        return
    cpg = C // groups
    (_, gs), (_, xs) = _ncl(grad), _ncl(x)
    part = _grad_sums(grad, x, mean, N * C, C, (gs[0], gs[1]), (xs[0], xs[1]), 1, (0, 0), L, (xs[2], gs[2]), groups,
                      cpg, compute)
    splits = part.shape[1]
    sums = part if splits == 1 else tb._scratch(x, (2, 1, N * C), tb._dtype(compute))
    if splits > 1:
        tb.reduce("sum", tb._View((2, N * C), (N * C, 1), 0, sums._storage, sums.dtype), part, (1,), compute)
    if dw is not None or db is not None:
        block_c = min(tb._next_pow2(C), tb.pick(64, 64, 8))
        block_n = min(tb._next_pow2(N), tb.pick(64, 64, 4))
        tb._run(_kernels().norm.group_norm_param_grad_kernel, (tb._cdiv(C, block_c),), pointer(sums), pointer(rstd),
                pointer(dw) if dw is not None else pointer(rstd), pointer(db) if db is not None else pointer(rstd),
                N, C, groups, cpg, NEED_DW=dw is not None, NEED_DB=db is not None, COMPUTE=k.compute[compute],
                BLOCK_N=block_n, BLOCK_C=block_c, num_warps=4)
    if dx is not None:
        NG = N * groups
        coef = tb._scratch(x, (2, NG), tb._dtype(compute))
        block_j = min(tb._next_pow2(cpg), tb.pick(64, 64, 4))
        block_r = min(tb._next_pow2(NG), max(1, (tb.pick(1024, 1024, 16)) // block_j))
        tb._run(_kernels().norm.group_norm_bwd_coef_kernel, (tb._cdiv(NG, block_r),), pointer(sums), pointer(rstd),
                pointer(weight) if weight is not None else pointer(rstd), pointer(coef), NG, C, groups, cpg, cpg * L,
                HAS_W=weight is not None, COMPUTE=k.compute[compute], BLOCK_R=block_r, BLOCK_J=block_j, num_warps=4)
        _backward_apply(dx, grad, x, mean, rstd, weight, coef, NG, False, groups, True, compute)


# --------------------------------------------------------------------------- CTC
def _ctc_blocks(L, C):
    block_s = tb._next_pow2(max(L, 2))
    block_c = max(1, min(tb._next_pow2(C), tb.pick(8192, 8192, 64) // block_s))
    return block_s, block_c


def ctc_loss(outs, log_probs, targets, input_lengths, target_lengths, target_offsets, blank, compute):
    """outs = (nll (N,), log_alpha (N, T, L)); see kernels/loss.py's CTC block (contiguous inputs)."""
    nll, log_alpha = outs
    T, N, C = (int(v) for v in log_probs.shape)
    L = int(log_alpha.shape[2])
    if N == 0:
        return
    block_s, _ = _ctc_blocks(L, C)
    tb._run(_kernels().loss.ctc_alpha_kernel, (N,), pointer(log_probs), pointer(targets), pointer(target_offsets),
            pointer(target_lengths), pointer(input_lengths), pointer(log_alpha), pointer(nll), T, N, C, L, int(blank),
            COMPUTE=tb._kernels().compute[compute], BLOCK_S=block_s, num_warps=4)


def ctc_loss_backward(out, grad, log_probs, targets, input_lengths, target_lengths, target_offsets, nll, log_alpha,
                      beta, blank, zero_infinity, compute):
    """out: d loss / d log_probs (T, N, C) contiguous, torch's formula; beta: (N, T, L) scratch."""
    T, N, C = (int(v) for v in log_probs.shape)
    L = int(log_alpha.shape[2])
    if out.numel() == 0:
        return
    block_s, block_c = _ctc_blocks(L, C)
    tb._run(_kernels().loss.ctc_grad_kernel, (N,), pointer(log_probs), pointer(targets), pointer(target_offsets),
            pointer(target_lengths), pointer(input_lengths), pointer(log_alpha), pointer(beta), pointer(nll),
            pointer(grad), int(grad.stride()[0]) if len(grad.shape) else 0, pointer(out), T, N, C, L, int(blank),
            ZERO_INFINITY=bool(zero_infinity), COMPUTE=tb._kernels().compute[compute], BLOCK_S=block_s,
            BLOCK_C=block_c, num_warps=4)
