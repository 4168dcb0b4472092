"""OpInfo records of the convolution family (tritensor/ops/conv.py, ops/padding.py), checked by
tests/test_ops_table.py (cpu, emulated cuda) and tests/test_op_gradients.py.

The references here are independent of backends/numpy_conv.py (im2col + one matmul per group,
col2im for the transposed form): they follow the definitions directly, a loop over the kernel
taps accumulating each tap's shifted input slab times that tap's weights (the transposed
convolution scatters each input pixel's contribution, tap by tap), on tiny sizes. F.pad's
reference is np.pad (reflect, edge, wrap, constant) after cutting negative pads.

Emulated launches cost ~0.1 s each here: the cuda samples are few and small, but each crosses a
32-row tile (M = N * output pixels > 32) and a 16-wide K step; 16-bit dtypes get one sample there.
The full dtype matrix and every layout run on the cpu.
"""
from __future__ import annotations

import numpy as np

import tritensor as tt
from opinfo import GRAD_CASES, SampleInput, _randn, record, rng_for, table_op, values

CONV_DTYPES = (tt.float16, tt.bfloat16, tt.float32, tt.float64)
CONV_TOLERANCES = {tt.float16: (2e-3, 1e-2), tt.bfloat16: (1.6e-2, 6e-2), tt.float32: (1e-5, 1e-5),
                   tt.float64: (1e-10, 1e-10)}


def _tuple(v, d):
    """One value per spatial dim (torch expands an int or a one-element list)."""
    v = tuple(v) if isinstance(v, (tuple, list)) else (v,)
    return v * d if len(v) == 1 else v


# --------------------------------------------------------------------------- the oracles
def conv_definition(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """y[n, g*CO + o, p] = sum_{c, k} x[n, g*CI + c, p * stride - padding + k * dilation] w[g*CO + o, c, k]
    (+ b), from the definition (a loop over the taps and groups); padding an int, a tuple,
    'valid' or 'same' (torch's split: the odd one extra on the right). Unbatched x too."""
    unbatched = x.ndim == w.ndim - 1
    if unbatched:
        x = x[None]
    d = x.ndim - 2
    stride, dilation = _tuple(stride, d), _tuple(dilation, d)
    if padding == "valid":
        lo = hi = (0,) * d
    elif padding == "same":
        total = [dl * (k - 1) for dl, k in zip(dilation, w.shape[2:])]
        lo, hi = tuple(t // 2 for t in total), tuple(t - t // 2 for t in total)
    else:
        lo = hi = _tuple(padding, d)
    xp = np.pad(x, [(0, 0), (0, 0)] + list(zip(lo, hi)))
    out = tuple((s - dl * (k - 1) - 1) // st + 1 for s, k, st, dl in zip(xp.shape[2:], w.shape[2:], stride, dilation))
    N, G = x.shape[0], groups
    CI, CO = x.shape[1] // G, w.shape[0] // G
    y = np.zeros((N, w.shape[0]) + out)
    for tap in np.ndindex(*w.shape[2:]):
        window = tuple(slice(t * dl, t * dl + st * (o - 1) + 1, st) for t, dl, st, o in zip(tap, dilation, stride, out))
        slab = xp[(slice(None), slice(None)) + window]
        for g in range(G):
            y[:, g * CO:(g + 1) * CO] += np.einsum("nc...,oc->no...", slab[:, g * CI:(g + 1) * CI],
                                                   w[(slice(g * CO, (g + 1) * CO), slice(None)) + tap])
    if b is not None:
        y += b.reshape((-1,) + (1,) * d)
    return y[0] if unbatched else y


def conv_transpose_definition(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """y[n, g*CO + o, i * stride - padding + k * dilation] += x[n, g*CI + c, i] w[g*CI + c, o, k]:
    each input pixel scattered through each tap (the definition), cut to torch's output size."""
    unbatched = x.ndim == w.ndim - 1
    if unbatched:
        x = x[None]
    d = x.ndim - 2
    stride, padding, dilation, output_padding = (_tuple(v, d) for v in (stride, padding, dilation, output_padding))
    N, G = x.shape[0], groups
    CI, CO = x.shape[1] // G, w.shape[1]
    size = tuple((i - 1) * s - 2 * p + dl * (k - 1) + 1 + op for i, s, p, dl, k, op in
                 zip(x.shape[2:], stride, padding, dilation, w.shape[2:], output_padding))
    full = np.zeros((N, G * CO) + tuple(max((i - 1) * s + dl * (k - 1) + 1, p + n) for i, s, dl, k, p, n in
                                         zip(x.shape[2:], stride, dilation, w.shape[2:], padding, size)))
    for tap in np.ndindex(*w.shape[2:]):
        window = tuple(slice(t * dl, t * dl + s * (i - 1) + 1, s) for t, dl, s, i in
                       zip(tap, dilation, stride, x.shape[2:]))
        for g in range(G):
            full[(slice(None), slice(g * CO, (g + 1) * CO)) + window] += np.einsum(
                "nc...,co->no...", x[:, g * CI:(g + 1) * CI], w[(slice(g * CI, (g + 1) * CI), slice(None)) + tap])
    y = full[(Ellipsis,) + tuple(slice(p, p + n) for p, n in zip(padding, size))]
    if b is not None:
        y = y + b.reshape((-1,) + (1,) * d)
    return y[0] if unbatched else y


def weight_grad_definition(g, x, weight_shape, stride, padding, dilation, groups):
    """dw[g*CO + o, c, k] = sum_{n, p} g[n, g*CO + o, p] x[n, g*CI + c, p * stride - padding + k * dilation]."""
    d = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    out = g.shape[2:]
    G = groups
    CI, CO = x.shape[1] // G, weight_shape[0] // G
    dw = np.zeros(weight_shape)
    for tap in np.ndindex(*weight_shape[2:]):
        window = tuple(slice(t * dl, t * dl + st * (o - 1) + 1, st) for t, dl, st, o in zip(tap, dilation, stride, out))
        slab = xp[(slice(None), slice(None)) + window]
        for gi in range(G):
            summed = [0] + list(range(2, 2 + d))     # the batch and the output pixels
            dw[(slice(gi * CO, (gi + 1) * CO), slice(None)) + tap] = np.tensordot(
                g[:, gi * CO:(gi + 1) * CO], slab[:, gi * CI:(gi + 1) * CI], axes=(summed, summed))
    assert d == len(out)
    return dw


# --------------------------------------------------------------------------- samples
def _make(dtype, device, rng):
    def make(shape, channels_last=False, sliced=False):
        if sliced:    # every other element of the last dim: a non-contiguous operand
            shape = tuple(shape[:-1]) + (2 * shape[-1],)
        t = tt.tensor(values(shape, dtype, "small", rng), dtype=dtype, device=device)
        if channels_last:
            t = t.contiguous(memory_format=tt.channels_last if t.dim() == 4 else tt.channels_last_3d)
        return t[..., ::2] if sliced else t
    return make


def _conv_samples(name, specs):
    """specs: (desc, shapes(make) -> args, kwargs, where): where "all" runs on both devices in
    every dtype, "cuda32" on the cuda device only in float32 (and on the cpu in every dtype),
    "cpu" on the cpu only."""
    def samples(device, dtype):
        make = _make(dtype, device, rng_for(name, dtype, device))
        for desc, build, kwargs, where in specs:
            if device != "cpu" and (where == "cpu" or (where == "cuda32" and dtype is not tt.float32)):
                continue
            yield SampleInput(tuple(build(make)), dict(kwargs), desc=desc)
    return samples


def _bias(make, n):
    return make((n,))


CONV2D = [
    ("basic-bias", lambda m: (m((2, 3, 5, 6)), m((4, 3, 3, 3)), _bias(m, 4)), {"padding": 1}, "all"),
    ("channels-last-strided-dilated-groups", lambda m: (m((2, 4, 7, 6), channels_last=True), m((6, 2, 3, 2)), None),
     {"stride": (2, 1), "padding": (1, 0), "dilation": (1, 2), "groups": 2}, "cuda32"),
    ("sliced-depthwise", lambda m: (m((1, 3, 6, 5), sliced=True), m((6, 1, 3, 3)), _bias(m, 6)),
     {"stride": 2, "padding": 1, "groups": 3}, "cuda32"),
    ("same-even-kernel", lambda m: (m((1, 2, 5, 4)), m((3, 2, 4, 2)), None), {"padding": "same"}, "cpu"),
    ("unbatched-valid", lambda m: (m((3, 5, 5)), m((2, 3, 2, 2)), _bias(m, 2)), {"padding": "valid"}, "cpu"),
    ("pointwise-matmul", lambda m: (m((2, 5, 4, 3)), m((7, 5, 1, 1)), _bias(m, 7)), {}, "cuda32"),
    ("pointwise-channels-last", lambda m: (m((2, 5, 4, 3), channels_last=True), m((7, 5, 1, 1)), None), {}, "cpu"),
    ("weight-channels-last", lambda m: (m((1, 2, 4, 4)), m((3, 2, 2, 2), channels_last=True), None), {}, "cpu"),
    ("empty-batch", lambda m: (m((0, 2, 4, 4)), m((3, 2, 2, 2)), None), {}, "cpu"),
]
CONV1D = [
    ("strided-dilated-bias", lambda m: (m((2, 3, 19)), m((5, 3, 3)), _bias(m, 5)),
     {"stride": 3, "padding": 2, "dilation": 2}, "all"),
    ("groups-same", lambda m: (m((1, 4, 9)), m((4, 2, 4)), None), {"padding": "same", "groups": 2}, "cpu"),
    ("unbatched", lambda m: (m((2, 7)), m((3, 2, 2)), None), {}, "cpu"),
]
CONV3D = [
    ("mixed", lambda m: (m((1, 2, 4, 5, 3)), m((3, 2, 2, 3, 2)), _bias(m, 3)),
     {"stride": (1, 2, 1), "padding": (1, 1, 0), "dilation": (1, 1, 2)}, "all"),
    ("channels-last-3d-groups", lambda m: (m((2, 2, 3, 4, 3), channels_last=True), m((2, 1, 3, 2, 3)), None),
     {"padding": "same", "groups": 2}, "cpu"),
]
CONV_TRANSPOSE2D = [
    ("strided-groups-bias", lambda m: (m((2, 4, 3, 4)), m((4, 3, 3, 2)), _bias(m, 6)),
     {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}, "all"),
    ("dilated-channels-last", lambda m: (m((1, 2, 4, 3), channels_last=True), m((2, 3, 2, 3)), None),
     {"stride": (1, 2), "dilation": (2, 1), "output_padding": (1, 0)}, "cuda32"),
    ("pointwise-unbatched", lambda m: (m((3, 4, 5)), m((3, 2, 1, 1)), None), {}, "cpu"),
]
CONV_TRANSPOSE1D = [
    ("strided-dilated", lambda m: (m((2, 3, 5)), m((3, 2, 3)), _bias(m, 2)),
     {"stride": 3, "padding": 1, "dilation": 2, "output_padding": 2}, "all"),
]
CONV_TRANSPOSE3D = [
    ("mixed", lambda m: (m((1, 2, 2, 3, 2)), m((2, 2, 2, 2, 3)), _bias(m, 2)),
     {"stride": (1, 2, 2), "padding": (0, 1, 1), "output_padding": (0, 1, 0)}, "all"),
]

for _name, _specs, _oracle in [("conv1d", CONV1D, conv_definition), ("conv2d", CONV2D, conv_definition),
                               ("conv3d", CONV3D, conv_definition),
                               ("conv_transpose1d", CONV_TRANSPOSE1D, conv_transpose_definition),
                               ("conv_transpose2d", CONV_TRANSPOSE2D, conv_transpose_definition),
                               ("conv_transpose3d", CONV_TRANSPOSE3D, conv_transpose_definition)]:
    record(_name, getattr(tt.nn.functional, _name), CONV_DTYPES, _conv_samples(_name, _specs), _oracle,
           tolerances=CONV_TOLERANCES, op_db=(f"nn.functional.{_name}",))


def _convolution_reference(x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    if transposed:
        return conv_transpose_definition(x, w, b, stride, padding, output_padding, groups, dilation)
    return conv_definition(x, w, b, stride, padding, dilation, groups)


record("convolution", tt.convolution, (tt.float32, tt.float64), _conv_samples("convolution", [
    ("forward", lambda m: (m((2, 2, 5, 5)), m((3, 2, 2, 3)), _bias(m, 3), [1, 2], [1], [2, 1], False, [0], 1), {},
     "all"),
    ("transposed", lambda m: (m((1, 4, 3)), m((4, 1, 3)), None, [2], [1], [1], True, [1], 2), {}, "cpu"),
]), _convolution_reference, tolerances=CONV_TOLERANCES)


def _weight_grad(g, x, **attrs):
    return table_op("convolution_weight_grad", g, x, **attrs)


_WG = {"weight_shape": (4, 1, 3, 2), "stride": (2, 1), "padding": (1, 0), "dilation": (1, 2), "groups": 2}
record("convolution_weight_grad", _weight_grad, (tt.float32, tt.float64), _conv_samples("convolution_weight_grad", [
    # x [2, 2, 7, 6] -> output [2, 4, 4, 4]: K = 32 pixels (two 16-pixel steps, two split slices)
    ("strided-grouped", lambda m: (m((2, 4, 4, 4)), m((2, 2, 7, 6))), _WG, "all"),
    ("channels-last", lambda m: (m((2, 4, 4, 4), channels_last=True), m((2, 2, 7, 6), channels_last=True)), _WG,
     "cpu"),
]), lambda g, x, **a: weight_grad_definition(g, x, a["weight_shape"], a["stride"], a["padding"], a["dilation"],
                                             a["groups"]), tolerances=CONV_TOLERANCES)


# --------------------------------------------------------------------------- padding
def pad_definition(x, pad, mode="constant", value=None):
    """np.pad with the positive pads (pairs from the last dim backwards) and a cut for the negative
    ones: constant and circular cut the input first (torch wraps the cut tensor), reflect and
    replicate pad about the input's own edges and cut the result."""
    k = len(pad) // 2
    widths = [(0, 0)] * x.ndim
    for i in range(k):
        widths[x.ndim - 1 - i] = (max(pad[2 * i], 0), max(pad[2 * i + 1], 0))

    def cut(a):
        index = [slice(None)] * a.ndim
        for i in range(k):
            d = a.ndim - 1 - i
            index[d] = slice(max(-pad[2 * i], 0), a.shape[d] - max(-pad[2 * i + 1], 0))
        return a[tuple(index)]

    if mode == "constant":
        return np.pad(cut(x), widths, constant_values=0 if value is None else value)
    if mode == "circular":
        return np.pad(cut(x), widths, mode="wrap")
    return cut(np.pad(x, widths, mode={"reflect": "reflect", "replicate": "edge"}[mode]))


def _pad_samples(device, dtype):
    make = _make(dtype, device, rng_for("pad", dtype, device))
    yield SampleInput((make((2, 3, 4)), [1, 2, -1, 1]), {"value": 1.5}, desc="constant-negative")
    yield SampleInput((make((1, 2, 3, 5)), [2, 1, 1, 2]), {"mode": "reflect"}, desc="reflect-2d")
    yield SampleInput((make((3, 4)), [5, 1]), {"mode": "replicate"}, desc="replicate-1d-past-size")
    if device == "cpu":
        yield SampleInput((make((1, 1, 2, 3, 4)), [1, 1, 2, 0, 1, 2]), {"mode": "circular"}, desc="circular-3d")
        yield SampleInput((make((2, 3, 5)), [2, -1]), {"mode": "reflect"}, desc="reflect-negative")
        yield SampleInput((make((1, 2, 3, 3, 4), sliced=True), [1, 2, 1, 0, 2, 1]), {"mode": "replicate"},
                          desc="replicate-3d-sliced")
        yield SampleInput((make((4, 3)).t(), [1, 2, 0, 1]), {}, desc="constant-transposed-all-dims")


record("pad", tt.nn.functional.pad, (tt.float32, tt.float64), _pad_samples, pad_definition,
       op_db=("nn.functional.pad",))
record("constant_pad_nd", tt.constant_pad_nd, (tt.float32, tt.int64), lambda device, dtype: iter([
    SampleInput((tt.tensor(values((2, 3), dtype, "any", rng_for("cpnd", dtype)), dtype=dtype, device=device),
                 [1, -1, 0, 2], 3), desc="cut-and-pad")]),
       lambda x, pad, value: pad_definition(x, pad, "constant", value))


# --------------------------------------------------------------------------- gradients (float64)
# the two table entries, tiny (each emulated launch is ~0.1 s, and gradgradcheck runs dozens):
# a strided transposed convolution with bias (its backward runs the forward and the weight-
# gradient kernels; its double backward the input-gradient kernel), and the weight gradient.
# tests/test_conv.py checks every public op and layout on the cpu.
GRAD_CASES.update({
    "convolution": lambda d: (
        lambda x, w, b: tt.nn.functional.conv_transpose1d(x, w, b, stride=2, output_padding=1),
        (_randn((1, 1, 2), d), _randn((1, 1, 2), d), _randn((1,), d)), {}),
    "convolution_weight_grad": lambda d: (
        lambda g, x: table_op("convolution_weight_grad", g, x, weight_shape=(1, 1, 2), stride=(2,), padding=(1,),
                              dilation=(1,), groups=1),
        (_randn((1, 1, 2), d), _randn((1, 1, 3), d)), {}),
})
