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
from opinfo import FLOATS, GRAD_CASES, SampleInput, _randn, record, rng_for, values


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
        y = fn(x, p, training).double()
        per_channel = y.flatten(2) if y.dim() == len(shape) else y.flatten(1)
        kept = (per_channel[..., 0] != 0).double()
        uniform = (per_channel == per_channel[..., :1]).all().double()
        scaled = ((per_channel == 0) | ((per_channel - 1 / (1 - p)).abs() < 1e-6)).all().double()
        return tt.stack([kept.mean(), uniform, scaled])

    def samples(device, dtype):
        rng = rng_for(name, dtype)
        x = tt.tensor(rng.standard_normal(shape), dtype=dtype, device=device)
        if device == "cpu":
            yield SampleInput((x, 0.5, False), desc="eval")
            yield SampleInput((x, 0.0, True), desc="p0")
        yield SampleInput((x, 1.0, True), desc="p1")
        if device == "cpu" or dtype is tt.float32:
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
