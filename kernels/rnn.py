"""Fused recurrent cell steps: one launch per time step for the gate arithmetic, forward and
backward (torch's _thnn_fused_lstm_cell / _thnn_fused_gru_cell and their backward on CUDA).

The input projection of every time step is one matmul done before the loop, and the hidden
projection of a step one matmul (both outside these kernels); what is left per step is pointwise
over the (batch, hidden) grid, and each kernel does all of it in one pass:

    lstm_cell_kernel       gates = ig + hg (B, 4H, torch's order i, f, g, o);
                           cy = sigmoid(f) cx + sigmoid(i) tanh(g), hy = sigmoid(o) tanh(cy);
                           the activated gates are kept in a workspace (B, 4H) for the backward
    lstm_cell_bwd_kernel   grad of the gates (B, 4H) and of cx from grad_hy, grad_cy (either may
                           be absent: HAS_GHY / HAS_GCY), cx, cy and the workspace
    gru_cell_kernel        r = sigmoid(ir + hr), z = sigmoid(iz + hz), n = tanh(in + r hn),
                           hy = n + z (hx - n); workspace (B, 4H) = r, z, n, hn
    gru_cell_bwd_kernel    grads of ig (B, 3H), hg (B, 3H) and hx from grad_hy, hx, workspace
    rnn_cell_kernel        hy = tanh(ig + hg) or relu(ig + hg) (ACT)
    rnn_cell_bwd_kernel    grad of the pre-activation from grad_hy and hy

Every operand is (B, k H) with unit column stride and its own row stride (``s_*``); each
program handles BLOCK consecutive (b, j) elements of the (B, H) grid. Math in COMPUTE (float32
for 16-bit storage, float64 for float64), stored with ``convert`` (round to nearest even).
"""
import triton
import triton.language as tl

from .elementwise import sigmoid as _sigmoid
from .elementwise import tanh as _tanh
from .strided import convert


@triton.jit
def _grid_index(B, H, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = offs < B * H
    b = offs // H
    j = offs - b * H
    return b, j, mask


@triton.jit
def lstm_cell_kernel(IG, HG, CX, HY, CY, WS, B, H, s_ig, s_hg, s_cx, s_hy, s_cy, s_ws,
                     COMPUTE: tl.constexpr, BLOCK: tl.constexpr):
    b, j, mask = _grid_index(B, H, BLOCK)
    pi = b * s_ig + j
    ph = b * s_hg + j
    gi = tl.load(IG + pi, mask=mask, other=0).to(COMPUTE) + tl.load(HG + ph, mask=mask, other=0).to(COMPUTE)
    gf = tl.load(IG + pi + H, mask=mask, other=0).to(COMPUTE) + tl.load(HG + ph + H, mask=mask, other=0).to(COMPUTE)
    gg = (tl.load(IG + pi + 2 * H, mask=mask, other=0).to(COMPUTE)
          + tl.load(HG + ph + 2 * H, mask=mask, other=0).to(COMPUTE))
    go = (tl.load(IG + pi + 3 * H, mask=mask, other=0).to(COMPUTE)
          + tl.load(HG + ph + 3 * H, mask=mask, other=0).to(COMPUTE))
    i = _sigmoid(gi)
    f = _sigmoid(gf)
    g = _tanh(gg)
    o = _sigmoid(go)
    c = tl.load(CX + b * s_cx + j, mask=mask, other=0).to(COMPUTE)
    cy = f * c + i * g
    hy = o * _tanh(cy)
    tl.store(CY + b * s_cy + j, convert(cy, CY.dtype.element_ty), mask=mask)
    tl.store(HY + b * s_hy + j, convert(hy, HY.dtype.element_ty), mask=mask)
    pw = b * s_ws + j
    tl.store(WS + pw, convert(i, WS.dtype.element_ty), mask=mask)
    tl.store(WS + pw + H, convert(f, WS.dtype.element_ty), mask=mask)
    tl.store(WS + pw + 2 * H, convert(g, WS.dtype.element_ty), mask=mask)
    tl.store(WS + pw + 3 * H, convert(o, WS.dtype.element_ty), mask=mask)


@triton.jit
def lstm_cell_bwd_kernel(GHY, GCY, CX, CY, WS, GG, GCX, B, H, s_ghy, s_gcy, s_cx, s_cy, s_ws, s_gg, s_gcx,
                         HAS_GHY: tl.constexpr, HAS_GCY: tl.constexpr, COMPUTE: tl.constexpr, BLOCK: tl.constexpr):
    b, j, mask = _grid_index(B, H, BLOCK)
    pw = b * s_ws + j
    i = tl.load(WS + pw, mask=mask, other=0).to(COMPUTE)
    f = tl.load(WS + pw + H, mask=mask, other=0).to(COMPUTE)
    g = tl.load(WS + pw + 2 * H, mask=mask, other=0).to(COMPUTE)
    o = tl.load(WS + pw + 3 * H, mask=mask, other=0).to(COMPUTE)
    c = tl.load(CX + b * s_cx + j, mask=mask, other=0).to(COMPUTE)
    tc = _tanh(tl.load(CY + b * s_cy + j, mask=mask, other=0).to(COMPUTE))
    dc = tl.zeros_like(c)
    do = tl.zeros_like(c)
    if HAS_GCY:
        dc += tl.load(GCY + b * s_gcy + j, mask=mask, other=0).to(COMPUTE)
    if HAS_GHY:
        ghy = tl.load(GHY + b * s_ghy + j, mask=mask, other=0).to(COMPUTE)
        do = ghy * tc
        dc += ghy * o * (1 - tc * tc)
    pg = b * s_gg + j
    tl.store(GG + pg, convert(dc * g * i * (1 - i), GG.dtype.element_ty), mask=mask)
    tl.store(GG + pg + H, convert(dc * c * f * (1 - f), GG.dtype.element_ty), mask=mask)
    tl.store(GG + pg + 2 * H, convert(dc * i * (1 - g * g), GG.dtype.element_ty), mask=mask)
    tl.store(GG + pg + 3 * H, convert(do * o * (1 - o), GG.dtype.element_ty), mask=mask)
    tl.store(GCX + b * s_gcx + j, convert(dc * f, GCX.dtype.element_ty), mask=mask)


@triton.jit
def gru_cell_kernel(IG, HG, HX, HY, WS, B, H, s_ig, s_hg, s_hx, s_hy, s_ws,
                    COMPUTE: tl.constexpr, BLOCK: tl.constexpr):
    b, j, mask = _grid_index(B, H, BLOCK)
    pi = b * s_ig + j
    ph = b * s_hg + j
    r = _sigmoid(tl.load(IG + pi, mask=mask, other=0).to(COMPUTE) + tl.load(HG + ph, mask=mask, other=0).to(COMPUTE))
    z = _sigmoid(tl.load(IG + pi + H, mask=mask, other=0).to(COMPUTE)
                 + tl.load(HG + ph + H, mask=mask, other=0).to(COMPUTE))
    hn = tl.load(HG + ph + 2 * H, mask=mask, other=0).to(COMPUTE)
    n = _tanh(tl.load(IG + pi + 2 * H, mask=mask, other=0).to(COMPUTE) + r * hn)
    h = tl.load(HX + b * s_hx + j, mask=mask, other=0).to(COMPUTE)
    hy = n + z * (h - n)
    tl.store(HY + b * s_hy + j, convert(hy, HY.dtype.element_ty), mask=mask)
    pw = b * s_ws + j
    tl.store(WS + pw, convert(r, WS.dtype.element_ty), mask=mask)
    tl.store(WS + pw + H, convert(z, WS.dtype.element_ty), mask=mask)
    tl.store(WS + pw + 2 * H, convert(n, WS.dtype.element_ty), mask=mask)
    tl.store(WS + pw + 3 * H, convert(hn, WS.dtype.element_ty), mask=mask)


@triton.jit
def gru_cell_bwd_kernel(GHY, HX, WS, GI, GH, GHX, B, H, s_ghy, s_hx, s_ws, s_gi, s_gh, s_ghx,
                        COMPUTE: tl.constexpr, BLOCK: tl.constexpr):
    b, j, mask = _grid_index(B, H, BLOCK)
    pw = b * s_ws + j
    r = tl.load(WS + pw, mask=mask, other=0).to(COMPUTE)
    z = tl.load(WS + pw + H, mask=mask, other=0).to(COMPUTE)
    n = tl.load(WS + pw + 2 * H, mask=mask, other=0).to(COMPUTE)
    hn = tl.load(WS + pw + 3 * H, mask=mask, other=0).to(COMPUTE)
    h = tl.load(HX + b * s_hx + j, mask=mask, other=0).to(COMPUTE)
    g = tl.load(GHY + b * s_ghy + j, mask=mask, other=0).to(COMPUTE)
    dn = g * (1 - z) * (1 - n * n)          # through n's tanh
    dz = g * (h - n) * z * (1 - z)
    dr = dn * hn * r * (1 - r)
    pi = b * s_gi + j
    ph = b * s_gh + j
    tl.store(GI + pi, convert(dr, GI.dtype.element_ty), mask=mask)
    tl.store(GI + pi + H, convert(dz, GI.dtype.element_ty), mask=mask)
    tl.store(GI + pi + 2 * H, convert(dn, GI.dtype.element_ty), mask=mask)
    tl.store(GH + ph, convert(dr, GH.dtype.element_ty), mask=mask)
    tl.store(GH + ph + H, convert(dz, GH.dtype.element_ty), mask=mask)
    tl.store(GH + ph + 2 * H, convert(dn * r, GH.dtype.element_ty), mask=mask)
    tl.store(GHX + b * s_ghx + j, convert(g * z, GHX.dtype.element_ty), mask=mask)


@triton.jit
def rnn_cell_kernel(IG, HG, HY, B, H, s_ig, s_hg, s_hy, RELU: tl.constexpr, COMPUTE: tl.constexpr,
                    BLOCK: tl.constexpr):
    b, j, mask = _grid_index(B, H, BLOCK)
    x = tl.load(IG + b * s_ig + j, mask=mask, other=0).to(COMPUTE) + tl.load(HG + b * s_hg + j, mask=mask,
                                                                                other=0).to(COMPUTE)
    if RELU:
        y = tl.where(x > 0, x, tl.where(x != x, x, tl.zeros_like(x)))     # relu keeps NaN
    else:
        y = _tanh(x)
    tl.store(HY + b * s_hy + j, convert(y, HY.dtype.element_ty), mask=mask)


@triton.jit
def rnn_cell_bwd_kernel(GHY, HY, GX, B, H, s_ghy, s_hy, s_gx, RELU: tl.constexpr, COMPUTE: tl.constexpr,
                        BLOCK: tl.constexpr):
    b, j, mask = _grid_index(B, H, BLOCK)
    g = tl.load(GHY + b * s_ghy + j, mask=mask, other=0).to(COMPUTE)
    y = tl.load(HY + b * s_hy + j, mask=mask, other=0).to(COMPUTE)
    if RELU:
        d = tl.where(y <= 0, tl.zeros_like(g), g)       # torch's threshold_backward on the output
    else:
        d = g * (1 - y * y)
    tl.store(GX + b * s_gx + j, convert(d, GX.dtype.element_ty), mask=mask)
