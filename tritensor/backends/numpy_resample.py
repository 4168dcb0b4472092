"""NumPy reference of grid_sampler_2d (the cpu device runs it; tests check the kernel against it),
vectorised over the output points: torch's GridSampler.h formulas, in the compute dtype."""
from __future__ import annotations

import numpy as np


def _source(coord, size, align):
    return (coord + 1) / 2 * (size - 1) if align else ((coord + 1) * size - 1) / 2


def _pad(c, size, padding, align):
    if padding == 2:       # reflection about the edges (align: the corner centres, else their edges)
        low, span = (0.0, size - 1.0) if align else (-0.5, float(size))
        if span > 0:
            a = np.abs(c - low)
            flips = np.floor(a / span)
            extra = a - flips * span
            c = np.where(np.mod(flips, 2) == 0, extra + low, span - extra + low)
        else:
            c = np.zeros_like(c)
    if padding != 0:
        c = np.clip(c, 0, size - 1)
    return c.astype(c.dtype)


def _taps(x, px, py):
    """x[n, :, py, px] for integer-valued float positions (n, points): (n, c, points); 0 outside."""
    n, c, h, w = x.shape
    with np.errstate(invalid="ignore"):
        inside = (px >= 0) & (px <= w - 1) & (py >= 0) & (py <= h - 1)
    xi = np.where(inside, px, 0).astype(np.int64)
    yi = np.where(inside, py, 0).astype(np.int64)
    flat = x.reshape(n, c, h * w)
    picked = np.take_along_axis(flat, (yi * w + xi)[:, None, :].repeat(c, 1), axis=2)
    return np.where(inside[:, None, :], picked, 0)


def _cubic(t):
    a = -0.75

    def near(v):
        return ((a + 2) * v - (a + 3)) * v * v + 1

    def far(v):
        return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def grid_sampler_2d(x, grid, *, mode, padding_mode, align_corners):
    n, c, h, w = x.shape
    oh, ow = grid.shape[1:3]
    t = x.dtype.type
    gx = grid[..., 0].reshape(n, -1)
    gy = grid[..., 1].reshape(n, -1)
    ix, iy = _source(gx, t(w), align_corners), _source(gy, t(h), align_corners)
    if mode != 2:
        ix, iy = _pad(ix, w, padding_mode, align_corners), _pad(iy, h, padding_mode, align_corners)
    with np.errstate(invalid="ignore"):
        x0, y0 = np.floor(ix), np.floor(iy)
    if mode == 0:
        out = (_taps(x, x0, y0) * ((x0 + 1 - ix) * (y0 + 1 - iy))[:, None]
               + _taps(x, x0 + 1, y0) * ((ix - x0) * (y0 + 1 - iy))[:, None]
               + _taps(x, x0, y0 + 1) * ((x0 + 1 - ix) * (iy - y0))[:, None]
               + _taps(x, x0 + 1, y0 + 1) * ((ix - x0) * (iy - y0))[:, None])
    elif mode == 1:
        out = _taps(x, np.round(ix), np.round(iy))       # round half to even, as nearbyint
    else:
        cx, cy = _cubic(ix - x0), _cubic(iy - y0)
        out = 0
        for i in range(4):
            py = _pad(y0 - 1 + i, h, padding_mode, align_corners)
            row = sum(_taps(x, _pad(x0 - 1 + j, w, padding_mode, align_corners), py) * cx[j][:, None]
                      for j in range(4))
            out = out + row * cy[i][:, None]
    return np.asarray(out, dtype=x.dtype).reshape(n, c, oh, ow)


def upsample_nearest(x, idx_d, idx_h, idx_w, *, output_size, input_size, exact, memory_format):
    """x gathered at the source index of every output position, dim by dim."""
    k = x.ndim - 2
    for d, idx in zip(range(2, 2 + k), (idx_d, idx_h, idx_w)[3 - k:]):
        x = np.take(x, np.asarray(idx, dtype=np.int64), axis=d)
    return x


def grid_sampler_3d(x, grid, *, mode, padding_mode, align_corners):
    """Trilinear (eight corners, torch's product weights) or nearest sampling of (N, C, D, H, W)."""
    n, c, d, h, w = x.shape
    t = x.dtype.type
    sizes = (w, h, d)
    src = [_pad(_source(grid[..., i].reshape(n, -1), t(s), align_corners), s, padding_mode, align_corners)
           for i, s in enumerate(sizes)]
    flat = x.reshape(n, c, d * h * w)

    def taps(px, py, pz):
        with np.errstate(invalid="ignore"):
            inside = ((px >= 0) & (px <= w - 1) & (py >= 0) & (py <= h - 1) & (pz >= 0) & (pz <= d - 1))
        index = (np.where(inside, pz, 0).astype(np.int64) * h + np.where(inside, py, 0).astype(np.int64)) * w \
            + np.where(inside, px, 0).astype(np.int64)
        picked = np.take_along_axis(flat, index[:, None, :].repeat(c, 1), axis=2)
        return np.where(inside[:, None, :], picked, 0)

    if mode == 1:
        out = taps(*(np.round(s) for s in src))
    else:
        with np.errstate(invalid="ignore"):
            low = [np.floor(s) for s in src]
        frac = [s - lo for s, lo in zip(src, low)]
        out = 0
        for k in range(8):
            bits = (k & 1, (k >> 1) & 1, k >> 2)
            weight = np.prod([f if b else 1 - f for f, b in zip(frac, bits)], axis=0)
            out = out + taps(*(lo + b for lo, b in zip(low, bits))) * weight[:, None]
    return np.asarray(out, dtype=x.dtype).reshape((n, c) + grid.shape[1:4])


def upsample_taps(x, idx_d, w_d, idx_h, w_h, idx_w, w_w, *, output_size, input_size, node, memory_format):
    """Separable resampling by per-dim (taps, out) index / weight tables, dim by dim."""
    k = x.ndim - 2
    tables = ((idx_d, w_d), (idx_h, w_h), (idx_w, w_w))[3 - k:]
    for d, (idx, w) in zip(range(2, 2 + k), tables):
        idx = np.asarray(idx, dtype=np.int64)
        shape = [1] * x.ndim
        shape[d] = idx.shape[1]
        x = sum(np.take(x, idx[t], axis=d) * np.asarray(w[t], dtype=x.dtype).reshape(shape)
                for t in range(idx.shape[0]))
    return x
