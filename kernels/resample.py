"""grid_sampler_2d's forward, nearest upsampling's gather (upsample_nearest_kernel) and grid_sampler_3d's
forward (grid_sample_3d_kernel: the same scheme over eight corners or the nearest voxel).

grid_sampler_2d: input (N, C, H, W) sampled at a grid (N, Ho, Wo, 2) of normalised
(x, y) coordinates, as torch's GridSampler.h (grid_sampler_compute_source_index, the padding
modes, bilinear / nearest / bicubic).

One program per BLOCK output points of one sample (program id -> (n, block)): the points'
coordinates, taps and weights are computed once, then a loop over the channels reads the taps of
each channel plane (every operand in place with its own strides) and writes the output. A tap
outside the input contributes 0 (a masked load, never a 0 * value product). Offsets are int64;
the arithmetic is in ACC (float32, or float64 for float64 inputs).

MODE: 0 bilinear, 1 nearest (round half to even, as nearbyint), 2 bicubic (A = -0.75, 4x4 taps,
each tap's position padded as get_value_bounded). PADDING: 0 zeros, 1 border, 2 reflection.
"""
import triton
import triton.language as tl

BILINEAR, NEAREST, BICUBIC = 0, 1, 2
ZEROS, BORDER, REFLECTION = 0, 1, 2


@triton.jit
def _source(coord, size, ALIGN: tl.constexpr):
    """grid_sampler_unnormalize: [-1, 1] to pixel positions."""
    if ALIGN:
        return (coord + 1) / 2 * (size - 1)
    else:
        return ((coord + 1) * size - 1) / 2


@triton.jit
def _pad(c, size, PADDING: tl.constexpr, ALIGN: tl.constexpr):
    """compute_coordinates: border clips, reflection reflects about the edges then clips."""
    if PADDING == 2:
        if ALIGN:
            low = c * 0
            span = size - 1
        else:
            low = c * 0 - 0.5
            span = c * 0 + size
        a = tl.abs(c - low)
        flips = tl.floor(a / span)
        extra = a - flips * span
        even = (flips - 2 * tl.floor(flips / 2)) == 0
        c = tl.where(span > 0, tl.where(even, extra + low, span - extra + low), c * 0)
    if PADDING != 0:
        c = tl.minimum(tl.maximum(c, c * 0), c * 0 + (size - 1))
    return c


@triton.jit
def _tap(plane, px, py, W, H, sh, sw, ok):
    """The value at integer-valued float position (px, py) of a channel plane; 0 outside."""
    inside = ok & (px >= 0) & (px <= W - 1) & (py >= 0) & (py <= H - 1)
    xi = tl.where(inside, px, 0).to(tl.int64)
    yi = tl.where(inside, py, 0).to(tl.int64)
    return tl.load(plane + yi * sh + xi * sw, mask=inside, other=0)


@triton.jit
def _cubic_weights(t):
    a = -0.75
    x0 = t + 1
    x3 = 2 - t
    w0 = ((a * x0 - 5 * a) * x0 + 8 * a) * x0 - 4 * a
    w1 = ((a + 2) * t - (a + 3)) * t * t + 1
    w2 = ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1
    w3 = ((a * x3 - 5 * a) * x3 + 8 * a) * x3 - 4 * a
    return w0, w1, w2, w3


@triton.jit
def grid_sample_2d_kernel(x_ptr, grid_ptr, out_ptr, C, H, W, OW, P, blocks,
                          sxn, sxc, sxh, sxw, sgn, sgh, sgw, sgc, son, soc, soh, sow,
                          MODE: tl.constexpr, PADDING: tl.constexpr, ALIGN: tl.constexpr,
                          ACC: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    n = pid // blocks
    p = (pid % blocks) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    ok = p < P
    oh = p // OW
    ow = p % OW
    g = grid_ptr + n * sgn + oh * sgh + ow * sgw
    gx = tl.load(g, mask=ok, other=0).to(ACC)
    gy = tl.load(g + sgc, mask=ok, other=0).to(ACC)
    wf = W.to(ACC)
    hf = H.to(ACC)
    ix = _source(gx, wf, ALIGN)
    iy = _source(gy, hf, ALIGN)
    if MODE != 2:
        ix = _pad(ix, wf, PADDING, ALIGN)
        iy = _pad(iy, hf, PADDING, ALIGN)
    x0 = tl.floor(ix)
    y0 = tl.floor(iy)
    tx = ix - x0
    ty = iy - y0
    if MODE == 1:      # nearest: round half to even
        rx = tl.floor(ix + 0.5)
        rx = tl.where((rx - ix == 0.5) & (rx - 2 * tl.floor(rx / 2) != 0), rx - 1, rx)
        ry = tl.floor(iy + 0.5)
        ry = tl.where((ry - iy == 0.5) & (ry - 2 * tl.floor(ry / 2) != 0), ry - 1, ry)
    out = out_ptr + n * son + oh * soh + ow * sow
    for c_ in range(C):
        c = tl.cast(c_, tl.int64)
        plane = x_ptr + n * sxn + c * sxc
        if MODE == 0:
            v = (_tap(plane, x0, y0, wf, hf, sxh, sxw, ok).to(ACC) * ((x0 + 1 - ix) * (y0 + 1 - iy))
                 + _tap(plane, x0 + 1, y0, wf, hf, sxh, sxw, ok).to(ACC) * ((ix - x0) * (y0 + 1 - iy))
                 + _tap(plane, x0, y0 + 1, wf, hf, sxh, sxw, ok).to(ACC) * ((x0 + 1 - ix) * (iy - y0))
                 + _tap(plane, x0 + 1, y0 + 1, wf, hf, sxh, sxw, ok).to(ACC) * ((ix - x0) * (iy - y0)))
        elif MODE == 1:
            v = _tap(plane, rx, ry, wf, hf, sxh, sxw, ok).to(ACC)
        else:
            cx0, cx1, cx2, cx3 = _cubic_weights(tx)
            cy0, cy1, cy2, cy3 = _cubic_weights(ty)
            v = tl.zeros([BLOCK], ACC)
            for i_ in range(4):
                i = tl.cast(i_, tl.int64)
                py = _pad(y0 - 1 + i.to(ACC), hf, PADDING, ALIGN)
                row = (_tap(plane, _pad(x0 - 1, wf, PADDING, ALIGN), py, wf, hf, sxh, sxw, ok).to(ACC) * cx0
                       + _tap(plane, _pad(x0, wf, PADDING, ALIGN), py, wf, hf, sxh, sxw, ok).to(ACC) * cx1
                       + _tap(plane, _pad(x0 + 1, wf, PADDING, ALIGN), py, wf, hf, sxh, sxw, ok).to(ACC) * cx2
                       + _tap(plane, _pad(x0 + 2, wf, PADDING, ALIGN), py, wf, hf, sxh, sxw, ok).to(ACC) * cx3)
                cy = tl.where(i == 0, cy0, tl.where(i == 1, cy1, tl.where(i == 2, cy2, cy3)))
                v += row * cy
        tl.store(out + c * soc, v.to(out_ptr.dtype.element_ty), mask=ok)


@triton.jit
def upsample_nearest_kernel(x_ptr, out_ptr, idx_d_ptr, idx_h_ptr, idx_w_ptr, C, OH, OW, P, blocks,
                            sxn, sxc, sxd, sxh, sxw, son, soc, sod, soh, sow, BLOCK: tl.constexpr):
    """out[n, c, d, h, w] = x[n, c, idx_d[d], idx_h[h], idx_w[w]]: nearest(-exact) upsampling of
    1 to 3 spatial dims (the missing ones of size 1, index [0]); one program per BLOCK output
    points of one (n, c) plane, the source positions read from the three index vectors."""
    pid = tl.program_id(0).to(tl.int64)
    row = pid // blocks
    n = row // C
    c = row % C
    p = (pid % blocks) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    ok = p < P
    od = p // (OH * OW)
    oh = (p // OW) % OH
    ow = p % OW
    sd = tl.load(idx_d_ptr + od, mask=ok, other=0)
    sh = tl.load(idx_h_ptr + oh, mask=ok, other=0)
    sw = tl.load(idx_w_ptr + ow, mask=ok, other=0)
    v = tl.load(x_ptr + n * sxn + c * sxc + sd * sxd + sh * sxh + sw * sxw, mask=ok)
    tl.store(out_ptr + n * son + c * soc + od * sod + oh * soh + ow * sow, v, mask=ok)


@triton.jit
def _tap3(plane, px, py, pz, W, H, D, sd, sh, sw, ok):
    """The value at integer-valued float position (px, py, pz) of a channel volume; 0 outside."""
    inside = ok & (px >= 0) & (px <= W - 1) & (py >= 0) & (py <= H - 1) & (pz >= 0) & (pz <= D - 1)
    xi = tl.where(inside, px, 0).to(tl.int64)
    yi = tl.where(inside, py, 0).to(tl.int64)
    zi = tl.where(inside, pz, 0).to(tl.int64)
    return tl.load(plane + zi * sd + yi * sh + xi * sw, mask=inside, other=0)


@triton.jit
def _round_half_even(v):
    r = tl.floor(v + 0.5)
    return tl.where((r - v == 0.5) & (r - 2 * tl.floor(r / 2) != 0), r - 1, r)


@triton.jit
def grid_sample_3d_kernel(x_ptr, grid_ptr, out_ptr, C, D, H, W, OH, OW, P, blocks,
                          sxn, sxc, sxd, sxh, sxw, sgn, sgd, sgh, sgw, sgc, son, soc, sod, soh, sow,
                          MODE: tl.constexpr, PADDING: tl.constexpr, ALIGN: tl.constexpr,
                          ACC: tl.constexpr, BLOCK: tl.constexpr):
    """grid_sampler_3d's forward: input (N, C, D, H, W) at grid (N, Do, Ho, Wo, 3) of (x, y, z);
    MODE 0 trilinear (eight corners), 1 nearest; the padding modes as the 2-d kernel's."""
    pid = tl.program_id(0).to(tl.int64)
    n = pid // blocks
    p = (pid % blocks) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    ok = p < P
    od = p // (OH * OW)
    oh = (p // OW) % OH
    ow = p % OW
    g = grid_ptr + n * sgn + od * sgd + oh * sgh + ow * sgw
    wf = W.to(ACC)
    hf = H.to(ACC)
    df = D.to(ACC)
    ix = _pad(_source(tl.load(g, mask=ok, other=0).to(ACC), wf, ALIGN), wf, PADDING, ALIGN)
    iy = _pad(_source(tl.load(g + sgc, mask=ok, other=0).to(ACC), hf, ALIGN), hf, PADDING, ALIGN)
    iz = _pad(_source(tl.load(g + 2 * sgc, mask=ok, other=0).to(ACC), df, ALIGN), df, PADDING, ALIGN)
    x0 = tl.floor(ix)
    y0 = tl.floor(iy)
    z0 = tl.floor(iz)
    tx = ix - x0
    ty = iy - y0
    tz = iz - z0
    rx = _round_half_even(ix)
    ry = _round_half_even(iy)
    rz = _round_half_even(iz)
    out = out_ptr + n * son + od * sod + oh * soh + ow * sow
    for c_ in range(C):
        c = tl.cast(c_, tl.int64)
        plane = x_ptr + n * sxn + c * sxc
        if MODE == 0:
            v = tl.zeros([BLOCK], ACC)
            for k_ in range(8):
                k = tl.cast(k_, tl.int64)
                bx = (k % 2).to(ACC)
                by = ((k // 2) % 2).to(ACC)
                bz = (k // 4).to(ACC)
                w = ((bx * tx + (1 - bx) * (1 - tx)) * (by * ty + (1 - by) * (1 - ty))
                     * (bz * tz + (1 - bz) * (1 - tz)))
                v += _tap3(plane, x0 + bx, y0 + by, z0 + bz, wf, hf, df, sxd, sxh, sxw, ok).to(ACC) * w
        else:
            v = _tap3(plane, rx, ry, rz, wf, hf, df, sxd, sxh, sxw, ok).to(ACC)
        tl.store(out + c * soc, v.to(out_ptr.dtype.element_ty), mask=ok)


@triton.jit
def upsample_taps_kernel(x_ptr, out_ptr, id_ptr, wd_ptr, ih_ptr, wh_ptr, iw_ptr, ww_ptr, C, OD, OH, OW, P, blocks,
                         sxn, sxc, sxd, sxh, sxw, son, soc, sod, soh, sow,
                         TD: tl.constexpr, TH: tl.constexpr, TW: tl.constexpr, ACC: tl.constexpr,
                         BLOCK: tl.constexpr):
    """Separable resampling of 1 to 3 spatial dims in one pass (linear, cubic, antialiased):
    out[n, c, d, h, w] = sum over the taps a, b, e of wd[a, d] wh[b, h] ww[e, w]
    x[n, c, id[a, d], ih[b, h], iw[e, w]], with per-dim (taps, out) index and weight tables (a
    missing dim: one tap, index 0, weight 1). One program per BLOCK output points of an (n, c)
    plane; the sum in ACC, rounded once."""
    pid = tl.program_id(0).to(tl.int64)
    row = pid // blocks
    n = row // C
    c = row % C
    p = (pid % blocks) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    ok = p < P
    od = p // (OH * OW)
    oh = (p // OW) % OH
    ow = p % OW
    plane = x_ptr + n * sxn + c * sxc
    acc = tl.zeros([BLOCK], ACC)
    for a_ in range(TD):
        a = tl.cast(a_, tl.int64)
        sd = tl.load(id_ptr + a * OD + od, mask=ok, other=0)
        wd = tl.load(wd_ptr + a * OD + od, mask=ok, other=0).to(ACC)
        for b_ in range(TH):
            b = tl.cast(b_, tl.int64)
            sh = tl.load(ih_ptr + b * OH + oh, mask=ok, other=0)
            wh = tl.load(wh_ptr + b * OH + oh, mask=ok, other=0).to(ACC)
            for e_ in range(TW):
                e = tl.cast(e_, tl.int64)
                sw = tl.load(iw_ptr + e * OW + ow, mask=ok, other=0)
                w = tl.load(ww_ptr + e * OW + ow, mask=ok, other=0).to(ACC)
                v = tl.load(plane + sd * sxd + sh * sxh + sw * sxw, mask=ok, other=0).to(ACC)
                acc += v * (wd * wh * w)
    tl.store(out_ptr + n * son + c * soc + od * sod + oh * soh + ow * sow, acc.to(out_ptr.dtype.element_ty), mask=ok)
