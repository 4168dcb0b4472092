"""Launchers of kernels/conv.py: the convolution forward, its input gradient (also the
transposed convolution's forward) and its weight gradient, for 1, 2 and 3 spatial dims.

Every operand is read in place with its own strides (NCHW, channels_last, sliced views); a
1-d or 2-d problem is handed to the kernels as a 3-d one whose leading spatial dims have size 1
(stride 0, kernel 1, stride 1, padding 0). Groups (and the residue classes of the input
gradient, the split-K slices of the weight gradient) run on grid axis 1, in chunks of at most
65535 programs.

A 1x1 convolution with stride 1 and no padding is a matrix product over the channels: it runs on
the matmul kernel (kernels/matmul.py, autotuned there) when the pixels of each operand merge into
one stride: ``y[n] = w @ x[n]`` over [C, pixels] views (NCHW), or one ``[N*P, C] @ w^T`` when the
batch merges with the pixels too (channels_last); likewise its input gradient, and its weight
gradient when the batch merges (one GEMM over N*P) or N == 1.

The weight gradient's split-K (the pixel range cut into SPLIT slices so that enough programs
run) writes partial sums into a [SPLIT, *weight] buffer in the accumulator's dtype, reduced over
the slices by the deterministic reduction kernel (backends/triton/_reduce.py): the same input
gives the same bits on every run. SPLIT depends only on the problem's shape.

Block configuration: one fixed small configuration under the interpreter (blocks of 32 x 32 x 16:
tl.dot's >= 16 on every dim, so the emulated path runs what a GPU accepts); on a GPU the
candidates of the dtype's family are timed once per (GPU, dtype, precision, kernel, shape class)
with matmul.py's tuner and cache (the same JSON file, keys prefixed ``conv_``).
"""
from __future__ import annotations

from math import gcd

from ...runtime.launch import pointer
from .. import triton as tb
from . import matmul as tmm
from ._memory import _dtype, _View
from ._plan import _cdiv, _next_pow2, _prod

MAX_GRID_Y = 65535
INTERPRETER_CONFIG = tmm.Config(32, 32, 16, 4, 4, 1)
INTERPRETER_FAST_CONFIG = tmm.INTERPRETER_FAST_CONFIG     # the emulated device's default profile (_plan.py)

_C = tmm.Config
CONFIGS = {   # by what the tiles become inside tl.dot (matmul.family)
    "16bit": [_C(128, 128, 32, 8, 8, 3), _C(128, 64, 32, 8, 4, 4), _C(64, 128, 32, 8, 4, 4),
              _C(64, 64, 32, 8, 4, 4), _C(128, 128, 64, 8, 8, 3), _C(256, 64, 32, 8, 8, 3)],
    "tf32": [_C(128, 128, 32, 8, 8, 3), _C(128, 64, 32, 8, 4, 3), _C(64, 128, 32, 8, 4, 3),
             _C(64, 64, 32, 8, 4, 4), _C(128, 32, 32, 8, 4, 4)],
    "ieee32": [_C(64, 64, 32, 8, 4, 3), _C(128, 64, 16, 8, 4, 3), _C(64, 128, 16, 8, 4, 3),
               _C(32, 64, 32, 8, 4, 3)],
    "float64": [_C(64, 64, 16, 8, 4, 3), _C(32, 64, 16, 8, 4, 3), _C(64, 32, 16, 8, 4, 3)],
}
GPU_PROGRAMS = 264          # the weight gradient splits K until about this many programs run (2 per H100 SM)
GPU_MIN_K_STEPS = 8         # ... but each split keeps at least this many BLOCK_K steps
INTERPRETER_MIN_K_STEPS = 2     # (the emulated device: split as soon as there are 2 + 2 steps)

_K = None


def _kernels():
    global _K
    if _K is None:
        tb._kernels()
        from tritensor.kernels import conv as conv_k
        _K = conv_k
    return _K


# --------------------------------------------------------------------------- operands as 3-d problems
def _lift(t):
    """(sizes, strides) of an [N, C, *spatial] tensor as [N, C, D, H, W] (leading 1s, stride 0)."""
    shape, strides = tuple(int(s) for s in t.shape), tuple(int(s) for s in t.stride())
    extra = 5 - len(shape)
    return shape[:2] + (1,) * extra + shape[2:], strides[:2] + (0,) * extra + strides[2:]


def _params(stride, padding, dilation):
    extra = 3 - len(stride)
    return ((1,) * extra + tuple(stride), (0,) * extra + tuple(padding), (1,) * extra + tuple(dilation))


def _acc(compute):
    return tb._kernels().compute["float64" if compute == "float64" else "float32"]


def _meta(dtype_name, compute, config):
    return dict(ACC=_acc(compute), PRECISION=tmm.input_precision(dtype_name),
                WIDEN=tb.interpreting() and dtype_name == "bfloat16", **config.meta())


def _configured(kind, dtype_name, out, M, N, K, layout, launch_all, config=None):
    """Run ``launch_all(config)`` with the configuration for this problem: ``config`` when given
    (tools, the compile check), the fixed one under the interpreter, else the tuned one."""
    if config is None:
        interpreted = tb.interpreting()
        config = tb.pick(None, INTERPRETER_FAST_CONFIG, INTERPRETER_CONFIG) if interpreted else None
        if config is None:
            precision = tmm.input_precision(dtype_name)
            fam = tmm.family(dtype_name, precision)
            cands = [c for c in CONFIGS[fam] if c.BLOCK_N <= max(32, _next_pow2(N))] or CONFIGS[fam][-1:]
        if config is None and interpreted:    # gpu_launch_configs(): the GPU's untimed first choice
            config = cands[0]
        elif config is INTERPRETER_FAST_CONFIG:
            config = tmm.fitted(config, M, N, K)
        elif config is None:
            key = tmm.cache_key(tmm._gpu_name(out._storage.device), dtype_name, precision,
                                f"conv_{kind}_{tmm.shape_class(M, N, K, False, layout)}")
            config = tmm.tuned_config(key, cands, launch_all)
    launch_all(config)


def _chunks(total):
    for start in range(0, total, MAX_GRID_Y):
        yield start, min(MAX_GRID_Y, total - start)


def _layout_tag(*operands):
    return "".join("c" if t.stride()[1] == 1 else "n" for t in operands)


# --------------------------------------------------------------------------- 1x1 as a matmul
def _pixel_stride(shape, strides):
    """The one stride of the spatial dims of an [N, C, *spatial] operand when they merge into a
    single dim (None otherwise)."""
    dims = [(s, st) for s, st in zip(shape[2:], strides[2:]) if s != 1]
    if not dims:
        return 1
    for (s0, st0), (s1, st1) in zip(dims, dims[1:]):
        if st0 != st1 * s1:
            return None
    return dims[-1][1]


def _matmul_views(t, c0, c):
    """Views of channels [c0, c0 + c) of an [N, C, *spatial] operand for the matmul kernel:
    (rows, cols): ``rows`` is [N*P, c] when the batch merges with the pixels (else None),
    ``cols`` is [N, c, P] (None when the pixels do not merge)."""
    shape, strides = tuple(int(s) for s in t.shape), tuple(int(s) for s in t.stride())
    ps = _pixel_stride(shape, strides)
    if ps is None:
        return None, None
    N, P = shape[0], _prod(shape[2:])
    off = t._offset + c0 * strides[1]
    cols = _View((N, c, P), (strides[0], strides[1], ps), off, t._storage, t.dtype)
    rows = None
    if N == 1 or strides[0] == P * ps:
        rows = _View((N * P, c), (ps, strides[1]), off, t._storage, t.dtype)
    return rows, cols


def _matrix(w, o0, co):
    """Rows [o0, o0 + co) of a [C_out, C_in, 1, ...] weight as a [co, C_in] matrix view."""
    s = w.stride()
    return _View((co, int(w.shape[1])), (s[0], s[1]), w._offset + o0 * s[0], w._storage, w.dtype)


def _t(v):
    """The transpose of a 2-d _View."""
    return _View(v.shape[::-1], v.stride()[::-1], v._offset, v._storage, v.dtype)


def _bias_view(bias, o0, co, as_column):
    if bias is None:
        return None
    s = int(bias.stride()[0])
    if as_column:
        return _View((co, 1), (s, 0), bias._offset + o0 * s, bias._storage, bias.dtype)
    return _View((co,), (s,), bias._offset + o0 * s, bias._storage, bias.dtype)


def _pointwise(stride, padding, kshape):
    return all(k == 1 for k in kshape) and all(s == 1 for s in stride) and not any(padding)


def _matmul_forward(y, x, w, bias, groups):
    """y = conv(x, w) (+ bias) of a 1x1 / stride-1 / unpadded problem on the matmul kernel,
    per group; False when the operands' pixels do not merge (nothing launched)."""
    CI, CO = int(w.shape[1]), int(w.shape[0]) // groups
    plans = []
    for g in range(groups):
        (xr, xc), (yr, yc) = _matmul_views(x, g * CI, CI), _matmul_views(y, g * CO, CO)
        if xc is None or yc is None:
            return False
        plans.append((g, xr, xc, yr, yc))
    for g, xr, xc, yr, yc in plans:
        wm = _matrix(w, g * CO, CO)
        if xr is not None and yr is not None:     # [N*P, CI] @ [CI, CO]: one GEMM
            tmm.matmul(yr, xr, _t(wm), _bias_view(bias, g * CO, CO, False), beta=1.0)
        else:                                     # per image: [CO, CI] @ [CI, P]
            tmm.matmul(yc, wm, xc, _bias_view(bias, g * CO, CO, True), beta=1.0)
    return True


def _matmul_input_grad(gx, gy, w, bias, groups):
    """gx = the input gradient of a 1x1 / stride-1 / unpadded convolution (w^T @ gy) on the
    matmul kernel; False when the pixels do not merge."""
    CI, CO = int(w.shape[1]), int(w.shape[0]) // groups
    plans = []
    for g in range(groups):
        (gr, gc), (xr, xc) = _matmul_views(gy, g * CO, CO), _matmul_views(gx, g * CI, CI)
        if gc is None or xc is None:
            return False
        plans.append((g, gr, gc, xr, xc))
    for g, gr, gc, xr, xc in plans:
        wm = _matrix(w, g * CO, CO)
        if gr is not None and xr is not None:
            tmm.matmul(xr, gr, wm, _bias_view(bias, g * CI, CI, False), beta=1.0)
        else:
            tmm.matmul(xc, _t(wm), gc, _bias_view(bias, g * CI, CI, True), beta=1.0)
    return True


def _matmul_weight_grad(gw, gy, x, groups):
    """gw = gy^T @ x summed over every pixel of every image (one GEMM with K = N*P), when the
    batch merges with the pixels in both operands (channels_last, or N == 1)."""
    CI, CO = int(gw.shape[1]), int(gw.shape[0]) // groups
    plans = []
    for g in range(groups):
        gr, _ = _matmul_views(gy, g * CO, CO)
        xr, _ = _matmul_views(x, g * CI, CI)
        if gr is None or xr is None:
            return False
        plans.append((g, gr, xr))
    for g, gr, xr in plans:
        tmm.matmul(_matrix(gw, g * CO, CO), _t(gr), xr)
    return True


# --------------------------------------------------------------------------- the launchers
def forward(y, x, w, bias, stride, padding, dilation, groups, compute, config=None):
    """y = conv(x, w) (+ bias): x [N, G*CI, *I], w [G*CO, CI, *K], y [N, G*CO, *O], bias [G*CO]
    or None; zero padding (other padding modes pad x first)."""
    if y.numel() == 0:
        return
    kshape = tuple(int(k) for k in w.shape[2:])
    if (config is None and groups <= 8 and _pointwise(stride, padding, kshape)
            and int(x.shape[1]) > 0 and _matmul_forward(y, x, w, bias, groups)):
        return
    k = _kernels()
    (N, C, ID, IH, IW), sx = _lift(x)
    (CO_all, CI, KD, KH, KW), swt = _lift(w)
    (_, _, OD, OH, OW), sy = _lift(y)
    (sd, sh, sw), (pd, ph, pw), (dd, dh, dw) = _params(stride, padding, dilation)
    CO = CO_all // groups
    M = N * OD * OH * OW
    name = x.dtype.name

    def launch_all(config):
        grid_x = _cdiv(M, config.BLOCK_M) * _cdiv(CO, config.BLOCK_N)
        for start, count in _chunks(groups):
            tb._run(k.conv_forward_kernel, (grid_x, count),
                    pointer(x), pointer(w), pointer(bias if bias is not None else y), pointer(y), start,
                    M, CI, CO, ID, IH, IW, OD, OH, OW, KD, KH, KW,
                    sd, sh, sw, pd, ph, pw, dd, dh, dw, *sx, *swt, *sy,
                    HAS_BIAS=bias is not None, **_meta(name, compute, config))

    _configured("fwd", name, y, M, CO, CI * KD * KH * KW,
                _layout_tag(x, y), launch_all, config)


def input_grad(gx, gy, w, bias, stride, padding, dilation, groups, compute, config=None):
    """gx = the gradient of conv(x, w) for x given gy (= the transposed convolution of gy by
    w, whose output padding is whatever extra size gx has), plus bias[channel] when given:
    gy [N, G*CO, *O], w [G*CO, CI, *K], gx [N, G*CI, *I]."""
    if gx.numel() == 0:
        return
    kshape = tuple(int(k) for k in w.shape[2:])
    if (config is None and groups <= 8 and _pointwise(stride, padding, kshape)
            and tuple(gx.shape[2:]) == tuple(gy.shape[2:]) and int(gy.shape[1]) > 0
            and _matmul_input_grad(gx, gy, w, bias, groups)):
        return
    k = _kernels()
    (N, _, OD, OH, OW), sg = _lift(gy)
    (CO_all, CI, KD, KH, KW), swt = _lift(w)
    (_, _, ID, IH, IW), sx = _lift(gx)
    (sd, sh, sw), (pd, ph, pw), (dd, dh, dw) = _params(stride, padding, dilation)
    CO = CO_all // groups
    steps = tuple(s // gcd(s, d) for s, d in ((sd, dd), (sh, dh), (sw, dw)))
    JD, JH, JW = _cdiv(ID, sd), _cdiv(IH, sh), _cdiv(IW, sw)
    classes = sd * sh * sw
    M = N * JD * JH * JW
    name = gy.dtype.name

    def launch_all(config):
        grid_x = _cdiv(M, config.BLOCK_M) * _cdiv(CI, config.BLOCK_N)
        for start, count in _chunks(groups * classes):
            tb._run(k.conv_input_grad_kernel, (grid_x, count),
                    pointer(gy), pointer(w), pointer(bias if bias is not None else gx), pointer(gx),
                    start, classes,
                    N, CI, CO, ID, IH, IW, OD, OH, OW, KD, KH, KW,
                    sd, sh, sw, pd, ph, pw, dd, dh, dw, *steps, JD, JH, JW, *sg, *swt, *sx,
                    HAS_BIAS=bias is not None, **_meta(name, compute, config))

    taps = _cdiv(KD, steps[0]) * _cdiv(KH, steps[1]) * _cdiv(KW, steps[2])
    _configured("dgrad", name, gx, M, CI, CO * taps,
                _layout_tag(gy, gx), launch_all, config)


def splits_for(tiles, pixels, block_k):
    """How many slices the weight gradient cuts its K = ``pixels`` range into, for ``tiles``
    output tiles (a function of the shape only: the summation order never changes)."""
    min_steps = tb.pick(GPU_MIN_K_STEPS, 1, INTERPRETER_MIN_K_STEPS)
    steps = _cdiv(max(pixels, 1), block_k)
    want = tb.pick(_cdiv(GPU_PROGRAMS, max(tiles, 1)), 1, 2)
    return max(1, min(want, steps // min_steps))


def weight_grad(gw, gy, x, stride, padding, dilation, groups, compute, config=None):
    """gw = the gradient of conv(x, w) for w given gy: gy [N, G*CO, *O], x [N, G*CI, *I],
    gw [G*CO, CI, *K] (contiguous). The output pixels (K) may be fewer than x's size gives
    (a transposed convolution's output padding): the ones present are summed."""
    if gw.numel() == 0:
        return
    kshape = tuple(int(k) for k in gw.shape[2:])
    if (config is None and groups <= 8 and _pointwise(stride, padding, kshape)
            and tuple(x.shape[2:]) == tuple(gy.shape[2:]) and _prod(gy.shape) > 0
            and _matmul_weight_grad(gw, gy, x, groups)):
        return
    k = _kernels()
    (N, _, OD, OH, OW), sg = _lift(gy)
    (_, _, ID, IH, IW), sx = _lift(x)
    (CO_all, CI, KD, KH, KW), _ = _lift(gw)
    (sd, sh, sw), (pd, ph, pw), (dd, dh, dw) = _params(stride, padding, dilation)
    CO = CO_all // groups
    M = N * OD * OH * OW
    NCOL = KD * KH * KW * CI
    name = x.dtype.name
    acc_name = "float64" if compute == "float64" else "float32"

    def launch_all(config):
        tiles_m, tiles_n = _cdiv(CO, config.BLOCK_M), _cdiv(NCOL, config.BLOCK_N)
        splits = splits_for(tiles_m * tiles_n * groups, M, config.BLOCK_K)
        per_split = _cdiv(_cdiv(max(M, 1), splits), config.BLOCK_K) * config.BLOCK_K
        splits = _cdiv(max(M, 1), per_split)
        if splits > 1:
            part = tb._scratch(gw, (splits,) + tuple(int(s) for s in gw.shape), _dtype(acc_name))
            target, sos = part, _prod(gw.shape)
        else:
            target, sos = gw, 0
        wst = tuple(int(v) for v in target.stride()[-len(gw.shape):])
        st = wst[:2] + (0,) * (5 - len(gw.shape)) + wst[2:]
        for start, count in _chunks(groups * splits):
            tb._run(k.conv_weight_grad_kernel, (tiles_m * tiles_n, count),
                    pointer(gy), pointer(x), pointer(target), start, splits, per_split,
                    M, CI, CO, ID, IH, IW, OD, OH, OW, KD, KH, KW,
                    sd, sh, sw, pd, ph, pw, dd, dh, dw, *sg, *sx, sos, *st,
                    **_meta(name, compute, config))
        if splits > 1:
            tb.reduce("sum", gw, part, (0,), acc_name)

    _configured("wgrad", name, gw, CO, NCOL, M,
                _layout_tag(gy, x), launch_all, config)
