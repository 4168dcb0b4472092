"""Launchers of the nn kernels: layer_norm (kernels/norm.py) and cross entropy (kernels/loss.py).

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
GPU_SETTINGS = {"row_tile": 4096, "max_row_bytes": 32768, "stream_block_n": 2048, "warps": 8,
                "backward_programs": 528}
INTERPRETER_SETTINGS = {"row_tile": 64, "max_row_bytes": 128, "stream_block_n": 16, "warps": 4,
                        "backward_programs": 4}


def settings():
    return INTERPRETER_SETTINGS if tb.interpreting() else GPU_SETTINGS


def _kernels():
    global _K
    if _K is None:
        from tritensor.kernels import loss as loss_k
        from tritensor.kernels import norm as norm_k
        k = tb._Kernels()
        k.norm, k.loss = norm_k, loss_k
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
