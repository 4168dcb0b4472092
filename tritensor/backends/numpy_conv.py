"""NumPy references of the convolutions (the cpu device; the oracle of kernels/conv.py). Arrays
only, for 1, 2 and 3 spatial dims alike.

The forward is a strided window view of the zero-padded input (``as_strided``: [N, C, *K, *O],
no copy) gathered once into columns and multiplied by the weight, one matmul per group for the
whole batch: y[n, g] = w[g] @ cols[n, g] with w[g] [CO, CI*K] and cols[n, g] [CI*K, O]. The
weight gradient is the same columns against the output gradient (sum over the batch of
gy[n, g] @ cols[n, g]^T), and the input gradient (also the transposed convolution) is the
matmul the other way, w[g]^T @ gy[n, g], folded back onto the input: each kernel tap adds its
[N, C, *O] slab to a strided window of the padded input gradient (a loop over the taps, each one
vectorised slab; no loop over output positions anywhere).

Notation: x [N, G*CI, *I], w [G*CO, CI, *K], y [N, G*CO, *O]; stride, padding, dilation are
tuples of one int per spatial dim (zero padding: the other padding modes pad x beforehand).
"""
from __future__ import annotations

import itertools

import numpy as np
from numpy.lib.stride_tricks import as_strided


def output_size(i, k, s, p, d):
    """torch's conv output length: floor((i + 2p - d(k - 1) - 1) / s) + 1."""
    return (i + 2 * p - d * (k - 1) - 1) // s + 1


def _padded(x, padding):
    if not any(padding):
        return x
    spatial = x.shape[2:]
    xp = np.zeros(x.shape[:2] + tuple(s + 2 * p for s, p in zip(spatial, padding)), x.dtype)
    xp[(Ellipsis,) + tuple(slice(p, p + s) for s, p in zip(spatial, padding))] = x
    return xp


def columns(x, kshape, out, stride, padding, dilation):
    """The [N, C, *K, *O] windows of x (cols[n, c, k, o] = x[n, c, o * stride - padding +
    k * dilation], 0 outside x), as one contiguous array."""
    xp = _padded(x, padding)
    st = xp.strides
    view = as_strided(xp, xp.shape[:2] + tuple(kshape) + tuple(out),
                      st[:2] + tuple(a * d for a, d in zip(st[2:], dilation))
                      + tuple(a * s for a, s in zip(st[2:], stride)), writeable=False)
    return np.ascontiguousarray(view)


def _matmul(a, b):
    # integer convolutions (the cpu device runs them as torch's cpu does) multiply in int64
    return np.matmul(a, b) if a.dtype.kind == "f" else np.matmul(a.astype(np.int64), b.astype(np.int64))


def conv_forward(x, w, bias, stride, padding, dilation, groups):
    """y = conv(x, w) (+ bias): [N, G*CO, *O]."""
    N, G = x.shape[0], groups
    kshape = w.shape[2:]
    out = tuple(output_size(i, k, s, p, d) for i, k, s, p, d in zip(x.shape[2:], kshape, stride, padding, dilation))
    P, CIK = int(np.prod(out)), w.shape[1] * int(np.prod(kshape))
    cols = columns(x, kshape, out, stride, padding, dilation).reshape(N, G, CIK, P)
    y = _matmul(w.reshape(G, w.shape[0] // G, CIK), cols).reshape((N, w.shape[0]) + out)
    if bias is not None:
        y += bias.reshape((-1,) + (1,) * len(out))
    return y


def conv_input_grad(gy, w, bias, input_size, stride, padding, dilation, groups):
    """gx = the gradient of conv(x, w) for x of spatial size ``input_size``, given gy (the
    transposed convolution of gy by w), plus bias per channel of gx when given."""
    N, G = gy.shape[0], groups
    kshape, out = w.shape[2:], gy.shape[2:]
    CO, CI = w.shape[0] // G, w.shape[1]
    P, CIK = int(np.prod(out)), CI * int(np.prod(kshape))
    wt = w.reshape(G, CO, CIK).transpose(0, 2, 1)                      # [G, CI*K, CO]
    cols = _matmul(wt, gy.reshape(N, G, CO, P)).reshape((N, G * CI) + tuple(kshape) + tuple(out))
    # the padded input gradient; large enough for every window even where gx is shorter
    extent = tuple(max(i + 2 * p, (o - 1) * s + (k - 1) * d + 1)
                   for i, p, o, s, k, d in zip(input_size, padding, out, stride, kshape, dilation))
    gxp = np.zeros((N, G * CI) + extent, cols.dtype)
    for tap in itertools.product(*(range(k) for k in kshape)):
        window = tuple(slice(t * d, t * d + s * (o - 1) + 1, s) for t, d, s, o in zip(tap, dilation, stride, out))
        gxp[(Ellipsis,) + window] += cols[(slice(None), slice(None)) + tap]
    gx = gxp[(Ellipsis,) + tuple(slice(p, p + i) for p, i in zip(padding, input_size))]
    if bias is not None:
        gx = gx + bias.reshape((-1,) + (1,) * len(out))
    return gx


def conv_weight_grad(gy, x, weight_shape, stride, padding, dilation, groups):
    """gw = the gradient of conv(x, w) for w (of ``weight_shape``), given gy: the sum over the
    batch of gy[n, g] @ cols[n, g]^T. gy may have fewer output pixels than x gives (a
    transposed convolution's output padding): those present are summed."""
    N, G = gy.shape[0], groups
    kshape, out = tuple(weight_shape[2:]), tuple(gy.shape[2:])
    CO = weight_shape[0] // G
    P, CIK = int(np.prod(out)), weight_shape[1] * int(np.prod(kshape))
    cols = columns(x, kshape, out, stride, padding, dilation).reshape(N, G, CIK, P)
    gym = gy.reshape(N, G, CO, P)
    if N == 1:
        gw = _matmul(gym[0], cols[0].transpose(0, 2, 1))
    else:
        gw = _matmul(gym, cols.transpose(0, 1, 3, 2)).sum(0)
    return gw.reshape(weight_shape)


# --------------------------------------------------------------------------- the table's references
def convolution(x, w, bias, *, stride, padding, dilation, transposed, output_padding, groups, **_):
    """torch's aten::convolution on zero padding: conv(x, w) + bias, or the transposed
    convolution (w [G*CI, CO, *K]: the input gradient of conv with that weight) whose output is
    (i - 1) * stride - 2 * padding + dilation * (k - 1) + 1 + output_padding long."""
    if not transposed:
        return conv_forward(x, w, bias, stride, padding, dilation, groups)
    size = tuple((i - 1) * s - 2 * p + d * (k - 1) + 1 + op for i, s, p, d, k, op in
                 zip(x.shape[2:], stride, padding, dilation, w.shape[2:], output_padding))
    return conv_input_grad(x, w, bias, size, stride, padding, dilation, groups)


def convolution_weight_grad(gy, x, *, weight_shape, stride, padding, dilation, groups, **_):
    return conv_weight_grad(gy, x, tuple(weight_shape), stride, padding, dilation, groups)
