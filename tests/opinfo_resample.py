"""OpInfo records of the resampling family (tritensor/ops/resample.py, the dropouts of
nn/functional.py), checked by tests/test_ops_table.py (cpu, emulated cuda) and
tests/test_op_gradients.py.

The references are independent of the composites they check: loops over the definitions
(each sliding block copied out tap by tap for unfold and added back for fold, each output pixel of
pixel_shuffle read from its source channel one index at a time, channel_shuffle's permutation
written out). The dropouts are random: their samples are the deterministic cases (eval, p = 0,
p = 1) and the defining property in training (whole channels kept or zeroed, kept ones scaled by
1 / (1 - p), a kept share near 1 - p). Values recorded from torch: tests/test_resample.py.

Emulated launches cost ~0.1 s each: the cuda samples are one or two small ones per op.
"""
from __future__ import annotations

import numpy as np
import pytest

import tritensor as tt
import tritensor.nn.functional as F
from opinfo import CPU_ONLY_GRADGRAD, FLOATS, GRAD_CASES, SampleInput, _randn, record, rng_for, values


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _make(dtype, device, rng):
    def make(shape, sliced=False, channels_last=False):
        full = tuple(shape[:-1]) + (2 * shape[-1],) if sliced else tuple(shape)
        t = tt.tensor(values(full, dtype, "any", rng), dtype=dtype, device=device)
        if channels_last:
            t = t.contiguous(memory_format=tt.channels_last)
        return t[..., ::2] if sliced else t
    return make


# --------------------------------------------------------------------------- unfold / fold
def unfold_definition(x, kernel_size, dilation=1, padding=0, stride=1):
    """cols[n, (c*kh + i)*kw + j, bh*BW + bw] = xpad[n, c, bh*sh + i*dh, bw*sw + j*dw], tap by tap."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = map(_pair, (kernel_size, dilation, padding, stride))
    unbatched = x.ndim == 3
    x = np.asarray(x, dtype=np.float64)[None] if unbatched else np.asarray(x, dtype=np.float64)
    n, c, h, w = x.shape
    xp = np.pad(x, [(0, 0), (0, 0), (ph, ph), (pw, pw)])
    bh, bw = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    cols = np.zeros((n, c, kh, kw, bh, bw))
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xp[:, :, i * dh:i * dh + sh * (bh - 1) + 1:sh, j * dw:j * dw + sw * (bw - 1) + 1:sw]
    cols = cols.reshape(n, c * kh * kw, bh * bw)
    return cols[0] if unbatched else cols


def fold_definition(cols, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """out[n, c, bh*sh + i*dh - ph, bw*sw + j*dw - pw] += cols[n, (c*kh + i)*kw + j, bh*BW + bw]."""
    (oh, ow), (kh, kw), (dh, dw), (ph, pw), (sh, sw) = map(_pair, (output_size, kernel_size, dilation, padding,
                                                                    stride))
    unbatched = cols.ndim == 2
    cols = np.asarray(cols, dtype=np.float64)[None] if unbatched else np.asarray(cols, dtype=np.float64)
    n = cols.shape[0]
    c = cols.shape[1] // (kh * kw)
    bh, bw = (oh + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (ow + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, c, oh + 2 * ph, ow + 2 * pw))
    blocks = cols.reshape(n, c, kh, kw, bh, bw)
    for i in range(kh):
        for j in range(kw):
            out[:, :, i * dh:i * dh + sh * (bh - 1) + 1:sh, j * dw:j * dw + sw * (bw - 1) + 1:sw] += blocks[:, :, i, j]
    out = out[:, :, ph:ph + oh, pw:pw + ow]
    return out[0] if unbatched else out


def _unfold_samples(device, dtype):
    make = _make(dtype, device, rng_for("unfold", dtype, device))
    yield SampleInput((make((2, 3, 5, 6)), (2, 3)), {"padding": 1, "stride": (2, 1)}, desc="padded-strided")
    if device == "cpu":
        yield SampleInput((make((1, 2, 6, 5), sliced=True), 2), {"dilation": (2, 1)}, desc="sliced-dilated")
        yield SampleInput((make((3, 4, 4)), 3), {"padding": (0, 1)}, desc="unbatched")
        yield SampleInput((make((1, 3, 4, 5), channels_last=True), 2), {"stride": 2}, desc="channels-last")
        yield SampleInput((make((0, 2, 3, 3)), 2), {}, desc="empty-batch")


def _fold_samples(device, dtype):
    make = _make(dtype, device, rng_for("fold", dtype, device))
    yield SampleInput((make((2, 12, 12)), (4, 5), 2), {}, desc="overlapping")
    if device == "cpu":
        yield SampleInput((make((1, 6, 4)), (3, 4), (2, 3)), {"dilation": (1, 2), "padding": 1, "stride": (2, 1)},
                          desc="all-args")
        yield SampleInput((make((8, 4), sliced=True), (4, 4), 2), {"stride": 2}, desc="unbatched-sliced")


record("nn.functional.unfold", F.unfold, FLOATS, _unfold_samples, unfold_definition)
record("nn.functional.fold", F.fold, FLOATS, _fold_samples, fold_definition)


# --------------------------------------------------------------------------- pixel / channel shuffle
def pixel_shuffle_definition(x, r):
    *batch, c, h, w = x.shape
    out = np.zeros((*batch, c // (r * r), h * r, w * r), dtype=x.dtype)
    for oc in range(c // (r * r)):
        for i in range(r):
            for j in range(r):
                out[..., oc, i::r, j::r] = x[..., oc * r * r + i * r + j, :, :]
    return out


def pixel_unshuffle_definition(x, r):
    *batch, c, h, w = x.shape
    out = np.zeros((*batch, c * r * r, h // r, w // r), dtype=x.dtype)
    for ic in range(c):
        for i in range(r):
            for j in range(r):
                out[..., ic * r * r + i * r + j, :, :] = x[..., ic, i::r, j::r]
    return out


def channel_shuffle_definition(x, groups):
    c = x.shape[1]
    k = c // groups
    out = np.empty_like(x)
    for i in range(groups):
        for j in range(k):
            out[:, j * groups + i] = x[:, i * k + j]
    return out


def _shuffle_samples(name, specs):
    def samples(device, dtype):
        make = _make(dtype, device, rng_for(name, dtype, device))
        for k, (desc, build, args) in enumerate(specs):
            if device != "cpu" and k:
                continue
            yield SampleInput((build(make),) + args, desc=desc)
    return samples


SHUFFLE_DTYPES = FLOATS + (tt.int64, tt.bool)
record("nn.functional.pixel_shuffle", F.pixel_shuffle, SHUFFLE_DTYPES, _shuffle_samples("pixel_shuffle", [
    ("4d", lambda m: m((2, 18, 2, 3)), (3,)),
    ("5d-sliced", lambda m: m((2, 1, 8, 2, 2), sliced=True), (2,)),
    ("unbatched-channels-last", lambda m: m((1, 4, 3, 2), channels_last=True)[0], (2,)),
    ("empty", lambda m: m((0, 4, 2, 2)), (2,)),
]), pixel_shuffle_definition)
record("nn.functional.pixel_unshuffle", F.pixel_unshuffle, SHUFFLE_DTYPES, _shuffle_samples("pixel_unshuffle", [
    ("4d", lambda m: m((1, 2, 4, 6)), (2,)),
    ("3d-sliced", lambda m: m((3, 6, 3), sliced=True), (3,)),
]), pixel_unshuffle_definition)
record("nn.functional.channel_shuffle", F.channel_shuffle, SHUFFLE_DTYPES, _shuffle_samples("channel_shuffle", [
    ("4d", lambda m: m((2, 6, 3, 2)), (3,)),
    ("3d-sliced", lambda m: m((1, 8, 3), sliced=True), (4,)),
    ("channels-last", lambda m: m((1, 6, 2, 2), channels_last=True), (2,)),
]), channel_shuffle_definition)


# --------------------------------------------------------------------------- channel dropouts
def _feature_dropout_record(name, fn, shape):
    """eval, p = 0 and p = 1 against their definitions; in training, on an input of ones: the share
    of kept channels (near 1 - p = 0.6), whether every channel is uniform (all kept or all zero),
    and whether the kept values are exactly 1 / (1 - p)."""
    def op(x, p, training, stats=False):
        if not stats:
            return fn(x, p, training)
        tt.manual_seed(5)
        y = fn(x, p, training).detach().cpu().double().numpy()     # the statistics on the host: few launches
        per_channel = y.reshape(y.shape[0], y.shape[1], -1)
        kept = (per_channel[..., 0] != 0).mean()
        uniform = float((per_channel == per_channel[..., :1]).all())
        scaled = float(((per_channel == 0) | (np.abs(per_channel - 1 / (1 - p)) < 1e-6)).all())
        return tt.tensor([kept, uniform, scaled], dtype=tt.float64, device=x.device)

    def samples(device, dtype):
        rng = rng_for(name, dtype)
        x = tt.tensor(rng.standard_normal(shape), dtype=dtype, device=device)
        if device == "cpu":
            yield SampleInput((x, 0.5, False), desc="eval")
            yield SampleInput((x, 0.0, True), desc="p0")
        yield SampleInput((x, 1.0, True), desc="p1")
        if device == "cpu" or (dtype is tt.float32 and name.endswith("2d")):   # (one emulated run: ~2 s)
            big = tt.ones((40, 25) + tuple(shape[2:]), dtype=dtype, device=device)
            yield SampleInput((big, 0.4, True), {"stats": True}, desc="channels", result_dtype=tt.float64)

    def reference(x, p, training, stats=False):
        if stats:
            return np.array([0.6, 1.0, 1.0])
        return x * 0 if training and p == 1 else x

    record(name, op, (tt.float32, tt.float64), samples, reference,
           tolerances={tt.float32: (0, 0), tt.float64: (0, 0.03)}, gradgradcheck=False)   # (linear in x)

    def grad_case(d):
        def f(x):
            tt.manual_seed(3)          # the same mask on every call of the check
            return fn(x, 0.4, True)
        return f, (_randn((2, 3) + (1,) * (len(shape) - 2), d),), {}
    GRAD_CASES[name] = grad_case


_feature_dropout_record("nn.functional.dropout1d", F.dropout1d, (4, 3, 5))
_feature_dropout_record("nn.functional.dropout2d", F.dropout2d, (4, 3, 2, 3))
_feature_dropout_record("nn.functional.dropout3d", F.dropout3d, (2, 3, 2, 2, 2))


# --------------------------------------------------------------------------- gradients (float64)
def _on_cpu_or_gpu(case):
    """A gradient case of a composite whose backward runs index_add's sorting kernels (fold, and
    unfold's double backward): the same tritensor ops on every device, checked on cpu and real
    GPUs; under the emulated device its many small launches take tens of seconds. The emulated
    device runs the forward composites in the parity samples above."""
    def make(device):
        if device != "cpu" and tt.cuda.is_emulated():
            pytest.skip("a composite's gradients: cpu and real GPUs (see opinfo_resample._on_cpu_or_gpu)")
        return case(device)
    return make


GRAD_CASES.update({
    "nn.functional.unfold": _on_cpu_or_gpu(lambda d: (lambda x: F.unfold(x, 2, padding=1, stride=(1, 2)),
                                                      (_randn((1, 2, 3, 3), d),), {})),
    "nn.functional.fold": _on_cpu_or_gpu(lambda d: (lambda c: F.fold(c, (3, 3), 2), (_randn((1, 8, 4), d),), {})),
    "nn.functional.pixel_shuffle": lambda d: (lambda x: F.pixel_shuffle(x, 2), (_randn((1, 4, 2, 1), d),), {}),
    "nn.functional.pixel_unshuffle": lambda d: (lambda x: F.pixel_unshuffle(x, 2), (_randn((1, 1, 2, 4), d),), {}),
    "nn.functional.channel_shuffle": lambda d: (lambda x: F.channel_shuffle(x, 2), (_randn((1, 4, 3), d),), {}),
})


# --------------------------------------------------------------------------- interpolate
def _axis_weights(n_in, n_out, mode, align_corners, scale, single, antialias=False):
    """The (n_out, n_in) resampling matrix of one axis, built position by position from the rules
    in torch's documentation and UpSample.h: coordinates in float32 (``single``) or float64, the
    half-pixel source x = s (i + 0.5) - 0.5 (clamped at 0 but for cubic) or s i with align_corners,
    s = 1 / scale_factor when one is given, else n_in / n_out ((n_in - 1) / (n_out - 1) aligned)."""
    f = np.float32 if single else np.float64
    if align_corners and mode not in ("nearest", "nearest-exact"):
        s = f(n_in - 1) / f(n_out - 1) if n_out > 1 else f(0)
    else:
        s = f(1.0 / scale) if scale else f(n_in) / f(n_out)
    w = np.zeros((n_out, n_in))
    for i in range(n_out):
        if antialias:
            s64 = float(s)
            support = (1.0 if mode == "bilinear" else 2.0) * max(s64, 1.0)
            center = s64 * (i + 0.5)
            lo, hi = max(int(center - support + 0.5), 0), min(int(center + support + 0.5), n_in)
            for j in range(lo, hi):
                x = abs((j - center + 0.5) / max(s64, 1.0))
                if mode == "bilinear":
                    w[i, j] = max(0.0, 1 - x)
                else:       # Keys' cubic with a = -0.5 (PIL's)
                    a = -0.5
                    w[i, j] = ((a + 2) * x - (a + 3)) * x * x + 1 if x < 1 else \
                        (((a * x - 5 * a) * x + 8 * a) * x - 4 * a if x < 2 else 0.0)
            w[i] /= w[i].sum()
            continue
        if mode == "nearest":
            w[i, min(int(np.floor(np.float32(s * f(i)))), n_in - 1)] = 1
            continue
        if mode == "nearest-exact":
            x = max(s * (f(i) + f(0.5)) - f(0.5), f(0))
            w[i, min(int(np.floor(np.float32(x + f(0.5)))), n_in - 1)] = 1
            continue
        x = s * f(i) if align_corners else s * (f(i) + f(0.5)) - f(0.5)
        if mode == "linear":
            if n_in == n_out:
                w[i, i] = 1
                continue
            x = max(x, f(0))
            j = min(int(np.floor(np.float32(x))), n_in - 1)
            t = min(max(float(x) - j, 0.0), 1.0)
            w[i, j] += 1 - t
            w[i, min(j + 1, n_in - 1)] += t
        else:               # cubic convolution, a = -0.75, taps clamped to the edge
            j = min(int(np.floor(np.float32(x))), n_in - 1)
            t = min(max(float(x) - j, 0.0), 1.0)
            a = -0.75
            for k, d in enumerate((t + 1, t, 1 - t, 2 - t)):
                d = abs(d)
                c = ((a + 2) * d - (a + 3)) * d * d + 1 if d <= 1 else ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
                w[i, min(max(j - 1 + k, 0), n_in - 1)] += c
    return w


def interpolate_definition(x, size=None, scale_factor=None, mode="nearest", align_corners=None,
                           recompute_scale_factor=None, antialias=False):
    single = x.dtype != np.float64
    y = np.asarray(x, dtype=np.float64)
    k = y.ndim - 2
    scales = [scale_factor] * k if scale_factor is not None and not isinstance(scale_factor, (tuple, list)) \
        else scale_factor
    sizes = [size] * k if isinstance(size, int) else size
    if sizes is None:
        sizes = [int(n * s) for n, s in zip(y.shape[2:], scales)]
        if recompute_scale_factor:
            scales = None
    kind = {"bilinear": "linear", "trilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    if antialias:
        kind = mode
    for d in range(k):
        w = _axis_weights(y.shape[2 + d], sizes[d], kind, bool(align_corners), scales[d] if scales else None, single,
                          antialias)
        y = np.moveaxis(np.tensordot(w, np.moveaxis(y, 2 + d, 0), axes=1), 0, 2 + d)
    return y


_INTERP_SPECS = [
    # desc, shape, kwargs, on cuda too
    ("bilinear-down-odd", (2, 3, 7, 5), {"size": (4, 3), "mode": "bilinear"}, True),
    ("nearest-3d-scale", (1, 2, 3, 4, 2), {"scale_factor": (1.5, 0.75, 2), "mode": "nearest"}, True),
    ("nearest-exact-1d", (2, 3, 7), {"size": 4, "mode": "nearest-exact"}, False),
    ("linear-align", (1, 2, 5), {"size": 8, "mode": "linear", "align_corners": True}, False),
    ("bicubic-channels-last", (1, 3, 4, 5), {"scale_factor": 1.6, "mode": "bicubic", "cl": True}, False),
    ("trilinear-sliced", (1, 2, 3, 2, 4), {"size": (4, 3, 3), "mode": "trilinear", "sliced": True}, False),
    ("bilinear-recompute", (1, 1, 5, 4), {"scale_factor": 1.3, "mode": "bilinear", "recompute_scale_factor": True},
     False),
    ("bilinear-antialias", (1, 2, 9, 8), {"size": (4, 5), "mode": "bilinear", "antialias": True}, False),
    ("bicubic-antialias", (1, 1, 8, 9), {"scale_factor": 0.5, "mode": "bicubic", "antialias": True}, False),
    ("nearest-empty-batch", (0, 2, 3, 3), {"size": 5, "mode": "nearest"}, False),
]


def _interp_samples(device, dtype):
    make = _make(dtype, device, rng_for("interpolate", dtype, device))
    for desc, shape, kwargs, on_cuda in _INTERP_SPECS:
        if device != "cpu" and not on_cuda:
            continue
        kwargs = dict(kwargs)
        x = make(shape, sliced=kwargs.pop("sliced", False), channels_last=kwargs.pop("cl", False))
        yield SampleInput((x,), kwargs, desc=desc)


INTERP_TOLERANCES = {tt.float16: (2e-3, 2e-3), tt.bfloat16: (1.6e-2, 2e-2), tt.float32: (2e-5, 2e-5),
                     tt.float64: (1e-10, 1e-10)}
record("nn.functional.interpolate", F.interpolate, FLOATS, _interp_samples, interpolate_definition,
       tolerances=INTERP_TOLERANCES)


def _quiet(fn):
    def call(*args, **kwargs):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # the deprecation warning torch gives too
            return fn(*args, **kwargs)
    return call


def _upsample_samples(name, kwargs_list):
    def samples(device, dtype):
        make = _make(dtype, device, rng_for(name, dtype, device))
        for k, kwargs in enumerate(kwargs_list):
            if device == "cpu" or k == 0:
                yield SampleInput((make((1, 2, 3, 4)),), kwargs, desc=str(kwargs))
    return samples


record("nn.functional.upsample_nearest", _quiet(F.upsample_nearest), (tt.float32, tt.float64),
       _upsample_samples("upsample_nearest", [{"scale_factor": 2}, {"size": (5, 3)}]),
       lambda x, **k: interpolate_definition(x, mode="nearest", **k), tolerances=INTERP_TOLERANCES)
record("nn.functional.upsample_bilinear", _quiet(F.upsample_bilinear), (tt.float32, tt.float64),
       _upsample_samples("upsample_bilinear", [{"size": (5, 3)}, {"scale_factor": 1.5}]),
       lambda x, **k: interpolate_definition(x, mode="bilinear", align_corners=True, **k),
       tolerances=INTERP_TOLERANCES)


def _interp_grad(d):
    def f(x):      # every mode's backward in one case: nearest, bilinear, bicubic, antialiased
        return (F.interpolate(x, size=(3, 2), mode="nearest").sum()
                + F.interpolate(x, scale_factor=1.5, mode="bilinear").sum() * 0.5
                + (F.interpolate(x, size=(3, 4), mode="bicubic", align_corners=True) ** 2).sum()
                + (F.interpolate(x, size=(2, 2), mode="bilinear", antialias=True) ** 2).sum())
    return f, (_randn((1, 1, 2, 3), d),), {}


GRAD_CASES.update({
    "nn.functional.interpolate": _on_cpu_or_gpu(_interp_grad),
    "nn.functional.upsample_nearest": _on_cpu_or_gpu(lambda d: (_quiet(lambda x: F.upsample_nearest(x, (3, 2))),
                                                                (_randn((1, 1, 2, 2), d),), {})),
    "nn.functional.upsample_bilinear": _on_cpu_or_gpu(lambda d: (_quiet(lambda x: F.upsample_bilinear(x, (3, 3))),
                                                                 (_randn((1, 1, 2, 2), d),), {})),
})


# --------------------------------------------------------------------------- grid_sample, affine_grid
def _grid_coordinate(c, size, padding_mode, align_corners):
    """One coordinate, point by point, as torch's GridSampler.h: unnormalise, then pad."""
    c = (c + 1) / 2 * (size - 1) if align_corners else ((c + 1) * size - 1) / 2
    return _pad_coordinate(c, size, padding_mode, align_corners)


def _pad_coordinate(c, size, padding_mode, align_corners):
    if padding_mode == "reflection":
        low, high = (0.0, 2.0 * (size - 1)) if align_corners else (-1.0, 2.0 * size - 1)
        if low == high:
            c = 0.0
        else:
            lo, span = low / 2, (high - low) / 2
            a = abs(c - lo)
            flips, extra = divmod(a, span)
            c = extra + lo if int(flips) % 2 == 0 else span - extra + lo
    if padding_mode in ("border", "reflection"):
        c = min(max(c, 0.0), size - 1.0)
    return c


def grid_sample_definition(x, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    x = np.asarray(x, dtype=np.float64)
    grid = np.asarray(grid, dtype=np.float64)
    k = x.ndim - 2
    sizes = x.shape[2:][::-1]                      # W, H[, D]
    out = np.zeros(x.shape[:2] + grid.shape[1:-1])

    def at(n, point):                              # point: integer W, H[, D]; 0 outside
        if all(0 <= p < s for p, s in zip(point, sizes)):
            return x[(n, slice(None)) + tuple(int(p) for p in point[::-1])]
        return 0.0

    def cubic(t):
        a = -0.75
        f = [t + 1, t, 1 - t, 2 - t]
        return [((a + 2) * d - (a + 3)) * d * d + 1 if d <= 1 else ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
                for d in (abs(v) for v in f)]

    for n in range(x.shape[0]):
        for pos in np.ndindex(*grid.shape[1:-1]):
            g = grid[(n,) + pos]
            if mode == "bicubic":
                ix, iy = (((c + 1) / 2 * (s - 1) if align_corners else ((c + 1) * s - 1) / 2) for c, s in zip(g, sizes))
                x0, y0 = np.floor(ix), np.floor(iy)
                wx, wy = cubic(ix - x0), cubic(iy - y0)
                value = 0.0
                for i in range(4):
                    for j in range(4):
                        px = _pad_coordinate(x0 - 1 + j, sizes[0], padding_mode, align_corners)
                        py = _pad_coordinate(y0 - 1 + i, sizes[1], padding_mode, align_corners)
                        value = value + wy[i] * wx[j] * at(n, (np.trunc(px), np.trunc(py)))
            else:
                src = [_grid_coordinate(c, s, padding_mode, align_corners) for c, s in zip(g, sizes)]
                if mode == "nearest":
                    value = at(n, [np.round(p) for p in src])      # round half to even (nearbyint)
                else:
                    value = 0.0
                    low = [np.floor(p) for p in src]
                    for bits in np.ndindex(*(2,) * k):
                        w = np.prod([(p - lo) if b else (1 - (p - lo)) for p, lo, b in zip(src, low, bits)])
                        value = value + w * at(n, [lo + b for lo, b in zip(low, bits)])
            out[(n, slice(None)) + pos] = value
    return out


def _grid_samples(device, dtype):
    rng = rng_for("grid_sample", dtype, device)

    def make(shape, lo=None, hi=None, sliced=False, channels_last=False):
        full = tuple(shape[:-1]) + (2 * shape[-1],) if sliced else tuple(shape)
        v = values(full, dtype, "any", rng) if lo is None else rng.uniform(lo, hi, full)
        t = tt.tensor(v, dtype=dtype, device=device)
        if channels_last:
            t = t.contiguous(memory_format=tt.channels_last)
        return t[..., ::2] if sliced else t

    specs = [
        ("bilinear-zeros", (2, 3, 4, 5), (2, 3, 4, 2), {"align_corners": False}, True),
        ("nearest-border-3d", (1, 2, 3, 4, 2), (1, 2, 2, 3, 3), {"mode": "nearest", "padding_mode": "border",
                                                                 "align_corners": True}, True),
        ("bicubic-reflection", (1, 2, 3, 4), (1, 2, 5, 2), {"mode": "bicubic", "padding_mode": "reflection",
                                                            "align_corners": False}, False),
        ("bilinear-reflection-aligned-channels-last", (1, 3, 4, 3), (1, 3, 2, 2),
         {"padding_mode": "reflection", "align_corners": True, "cl": True}, False),
        ("trilinear-zeros-sliced", (1, 1, 2, 3, 4), (1, 2, 2, 2, 3), {"align_corners": False, "sliced": True}, False),
        ("bicubic-border-aligned", (2, 1, 4, 4), (2, 2, 3, 2), {"mode": "bicubic", "padding_mode": "border",
                                                                "align_corners": True}, False),
    ]
    for desc, xs, gs, kwargs, on_cuda in specs:
        if device != "cpu" and not on_cuda:
            continue
        kwargs = dict(kwargs)
        x = make(xs, channels_last=kwargs.pop("cl", False))
        grid = make(gs, -1.3, 1.3, sliced=kwargs.pop("sliced", False))
        yield SampleInput((x, grid), kwargs, desc=desc)


def _affine_grid_definition(theta, size, align_corners=False):
    n, spatial = size[0], size[2:]
    axes = []
    for s in spatial[::-1]:      # x over W, y over H[, z over D]
        r = np.linspace(-1, 1, s) if s > 1 else np.zeros(1)
        axes.append(r if align_corners else r * (s - 1) / s)
    out = np.zeros((n,) + tuple(spatial) + (len(spatial),))
    for idx in np.ndindex(*spatial):
        base = np.array([axes[d][idx[len(spatial) - 1 - d]] for d in range(len(spatial))] + [1.0])
        out[(slice(None),) + idx] = np.asarray(theta, dtype=np.float64) @ base
    return out


def _affine_samples(device, dtype):
    rng = rng_for("affine_grid", dtype, device)
    yield SampleInput((tt.tensor(rng.standard_normal((2, 2, 3)), dtype=dtype, device=device), (2, 1, 3, 5)),
                      {"align_corners": False}, desc="2d")
    if device == "cpu":
        yield SampleInput((tt.tensor(rng.standard_normal((1, 3, 4)), dtype=dtype, device=device), (1, 2, 2, 3, 4)),
                          {"align_corners": True}, desc="3d-aligned")
        yield SampleInput((tt.tensor(rng.standard_normal((1, 2, 3)), dtype=dtype, device=device).transpose(1, 2)
                           .contiguous().transpose(1, 2), (1, 1, 1, 4)), {"align_corners": False},
                          desc="transposed-theta-unit-height")


GRID_TOLERANCES = {tt.float16: (2e-3, 3e-3), tt.bfloat16: (1.6e-2, 3e-2), tt.float32: (1e-5, 1e-5),
                   tt.float64: (1e-10, 1e-10)}
record("nn.functional.grid_sample", F.grid_sample, FLOATS, _grid_samples, grid_sample_definition,
       tolerances=GRID_TOLERANCES, op_db=("grid_sampler_3d",))


def _grid_sampler_2d_samples(device, dtype):
    """The table entry (its kernel on cuda): every mode x padding once, on a grid reaching past the
    edges, in one sample per mode on cuda (a launch each)."""
    rng = rng_for("grid_sampler_2d", dtype, device)
    x = tt.tensor(values((2, 3, 4, 5), dtype, "any", rng), dtype=dtype, device=device)
    grid = tt.tensor(rng.uniform(-1.4, 1.4, (2, 3, 7, 2)), dtype=dtype, device=device)
    for mode in range(3):
        for padding in range(3):
            if device != "cpu" and padding != mode:
                continue
            yield SampleInput((x, grid, mode, padding, bool((mode + padding) % 2)), desc=f"mode{mode}-pad{padding}")
    if device == "cpu":
        xt = tt.tensor(values((1, 2, 3, 4), dtype, "any", rng), dtype=dtype, device=device).transpose(2, 3)
        gs = tt.tensor(rng.uniform(-1.2, 1.2, (1, 2, 6, 2)), dtype=dtype, device=device)[:, :, ::2]
        yield SampleInput((xt, gs, 0, 2, False), desc="transposed-input-sliced-grid")


def _grid_sampler_2d_definition(x, grid, mode, padding, align_corners):
    return grid_sample_definition(x, grid, _GRID_MODE_NAMES[mode], _GRID_PADDING_NAMES[padding], align_corners)


_GRID_MODE_NAMES = ("bilinear", "nearest", "bicubic")
_GRID_PADDING_NAMES = ("zeros", "border", "reflection")
record("grid_sampler_2d", tt.grid_sampler_2d, FLOATS, _grid_sampler_2d_samples, _grid_sampler_2d_definition,
       tolerances=GRID_TOLERANCES)
record("nn.functional.affine_grid", F.affine_grid, FLOATS, _affine_samples, _affine_grid_definition,
       tolerances=GRID_TOLERANCES)


def _grid_grad(d):
    def f(x, grid):     # (3D and the other padding modes: first derivatives against torch, test_resample.py)
        return (F.grid_sample(x, grid, align_corners=False).sum()
                + (F.grid_sample(x, grid, mode="bicubic", padding_mode="reflection", align_corners=True) ** 2).sum())
    return f, (_randn((1, 1, 2, 3), d), GRAD_RNG_UNIFORM(d)((1, 1, 1, 2))), {}


def GRAD_RNG_UNIFORM(device):
    rng = rng_for("grid_sample_grad")

    def make(shape):     # away from the integer pixel positions where the derivative jumps
        v = rng.uniform(-1.2, 1.2, shape)
        return tt.tensor(v, dtype=tt.float64, device=device, requires_grad=True)
    return make


# the shuffles' second derivatives are their first (reshapes and permutes): ~3 s each emulated
CPU_ONLY_GRADGRAD.update({"nn.functional.pixel_shuffle", "nn.functional.pixel_unshuffle",
                          "nn.functional.channel_shuffle"})
GRAD_CASES.update({
    "grid_sampler_2d": _on_cpu_or_gpu(_grid_grad),
    "nn.functional.affine_grid": _on_cpu_or_gpu(lambda d: (    # (linspace, cat and a bmm: ~3 s emulated)
        lambda th: F.affine_grid(th, (1, 1, 2, 3), align_corners=False), (_randn((1, 2, 3), d),), {})),
})


# the nearest modes' table entry (its gather kernel on cuda), through F.interpolate
def _upsample_nearest_samples(device, dtype):
    make = _make(dtype, device, rng_for("upsample_nearest", dtype, device))
    yield SampleInput((make((2, 3, 5, 7), channels_last=True),), {"size": (3, 11), "mode": "nearest"},
                      desc="2d-channels-last")
    yield SampleInput((make((1, 2, 3, 4, 2), sliced=True),), {"scale_factor": (1.5, 0.75, 2), "mode": "nearest-exact"},
                      desc="3d-sliced-exact")
    if device == "cpu":
        yield SampleInput((make((2, 3, 7)),), {"size": 4, "mode": "nearest"}, desc="1d-down")
        yield SampleInput((make((0, 2, 3, 3)),), {"size": 5, "mode": "nearest"}, desc="empty-batch")


record("upsample_nearest", F.interpolate, FLOATS + (tt.uint8,), _upsample_nearest_samples, interpolate_definition)
GRAD_CASES["upsample_nearest"] = _on_cpu_or_gpu(lambda d: (    # (index_add's sorting kernels: ~50 s emulated)
    lambda x: F.interpolate(x, size=(3, 5), mode="nearest-exact"), (_randn((1, 2, 2, 3), d),), {}))


def _grid_sampler_3d_samples(device, dtype):
    """The 3-d entry (its kernel on cuda): trilinear and nearest, each padding mode on the cpu."""
    rng = rng_for("grid_sampler_3d", dtype, device)
    x = tt.tensor(values((2, 2, 3, 4, 3), dtype, "any", rng), dtype=dtype, device=device)
    grid = tt.tensor(rng.uniform(-1.4, 1.4, (2, 2, 3, 2, 3)), dtype=dtype, device=device)
    for mode in range(2):
        for padding in range(3):
            if device != "cpu" and padding != 2 * mode:
                continue
            yield SampleInput((x, grid, mode, padding, bool(padding % 2)), desc=f"mode{mode}-pad{padding}")


record("grid_sampler_3d", tt.grid_sampler_3d, FLOATS, _grid_sampler_3d_samples, _grid_sampler_2d_definition,
       tolerances=GRID_TOLERANCES)
GRAD_CASES["grid_sampler_3d"] = _on_cpu_or_gpu(lambda d: (
    lambda x, grid: tt.grid_sampler_3d(x, grid, 0, 2, False), (_randn((1, 1, 2, 2, 2), d),
                                                               GRAD_RNG_UNIFORM(d)((1, 1, 1, 1, 3))), {}))


# the linear / cubic / antialiased entry (its one-pass kernel on cuda), through F.interpolate
def _upsample_taps_samples(device, dtype):
    make = _make(dtype, device, rng_for("upsample_taps", dtype, device))
    yield SampleInput((make((1, 2, 5, 6), channels_last=True),), {"size": (7, 4), "mode": "bicubic"},
                      desc="bicubic-channels-last")
    yield SampleInput((make((1, 2, 3, 2, 4), sliced=True),), {"scale_factor": 1.5, "mode": "trilinear",
                                                              "align_corners": True}, desc="trilinear-sliced")
    yield SampleInput((make((1, 1, 9, 8)),), {"size": (4, 5), "mode": "bilinear", "antialias": True},
                      desc="antialias")
    if device == "cpu":
        yield SampleInput((make((2, 3, 7)),), {"size": 4, "mode": "linear"}, desc="linear-down")


record("upsample_taps", F.interpolate, FLOATS, _upsample_taps_samples, interpolate_definition,
       tolerances=INTERP_TOLERANCES)
GRAD_CASES["upsample_taps"] = _on_cpu_or_gpu(lambda d: (    # (index_add's sorting kernels: slow emulated)
    lambda x: F.interpolate(x, size=(3, 4), mode="bicubic", align_corners=True), (_randn((1, 1, 2, 3), d),), {}))
