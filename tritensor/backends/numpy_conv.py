"""NumPy references of the convolutions (the cpu device; the oracle of kernels/conv.py). Arrays
only, for 1, 2 and 3 spatial dims alike.

The forward is a strided window view of the zero-padded input (``as_strided``: no copy)
gathered once into columns [G, CI*K, N*O] and multiplied by the weight, one matmul per group for
the whole batch: y[g] = w[g] @ cols[g] with w[g] [CO, CI*K]. The weight gradient is the same
columns against the output gradient, gy[g] [CO, N*O] @ cols[g]^T (the batch summed inside the
matmul), and the input gradient (also the transposed convolution) is the matmul the other way,
w[g]^T @ gy[g], folded back onto the input: each kernel tap adds its [G, CI, N, *O] slab to a
strided window of the padded input gradient (a loop over the taps, each one vectorised slab; no
loop over output positions anywhere). Each matmul is one 2-d product per group with contiguous
(or plainly transposed) operands, the form OpenBLAS runs at full speed (a broadcast or permuted
stacked operand makes NumPy take a slower path, ~2x here).

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


def columns(x, kshape, out, stride, padding, dilation, groups):
    """The windows of x gathered once, laid out for one matmul per group over the whole batch:
    [G, CI * K, N * O] with cols[g, (c, k), (n, o)] = x[n, g*CI + c, o * stride - padding +
    k * dilation] (0 outside x). The copy walks the output pixels innermost (contiguous rows of
    x for stride 1)."""
    xp = _padded(x, padding)
    st = xp.strides
    N, C = xp.shape[:2]
    G = groups
    view = as_strided(xp, (N, G, C // G) + tuple(kshape) + tuple(out),
                      (st[0], st[1] * (C // G), st[1]) + tuple(a * d for a, d in zip(st[2:], dilation))
                      + tuple(a * s for a, s in zip(st[2:], stride)), writeable=False)
    d = len(out)
    order = (1, 2) + tuple(range(3, 3 + d)) + (0,) + tuple(range(3 + d, 3 + 2 * d))   # G, CI, K, N, O
    cols = np.ascontiguousarray(view.transpose(order))
    return cols.reshape(G, (C // G) * int(np.prod(kshape)), N * int(np.prod(out)))


def _matmul(a, b):
    # integer convolutions (the cpu device runs them as torch's cpu does) multiply in int64
    return np.matmul(a, b) if a.dtype.kind == "f" else np.matmul(a.astype(np.int64), b.astype(np.int64))


def _by_group(t, G):
    """[N, G*C, *S] -> [G, C, N * S] (a copy: one matmul per group over the whole batch)."""
    N, C = t.shape[0], t.shape[1] // G
    P = int(np.prod(t.shape[2:]))
    return np.ascontiguousarray(t.reshape(N, G, C, P).transpose(1, 2, 0, 3)).reshape(G, C, N * P)


def conv_forward(x, w, bias, stride, padding, dilation, groups):
    """y = conv(x, w) (+ bias): [N, G*CO, *O]."""
    N, G = x.shape[0], groups
    kshape = w.shape[2:]
    out = tuple(output_size(i, k, s, p, d) for i, k, s, p, d in zip(x.shape[2:], kshape, stride, padding, dilation))
    CO, CIK = w.shape[0] // G, w.shape[1] * int(np.prod(kshape))
    cols = columns(x, kshape, out, stride, padding, dilation, G)
    y = _matmul(w.reshape(G, CO, CIK), cols)                                    # [G, CO, N * O]
    y = y.reshape((G * CO, N) + out).swapaxes(0, 1)
    if bias is not None:
        y = y + bias.reshape((-1,) + (1,) * len(out))
    return y


def conv_input_grad(gy, w, bias, input_size, stride, padding, dilation, groups):
    """gx = the gradient of conv(x, w) for x of spatial size ``input_size``, given gy (the
    transposed convolution of gy by w), plus bias per channel of gx when given."""
    N, G = gy.shape[0], groups
    kshape, out = w.shape[2:], gy.shape[2:]
    CO, CI = w.shape[0] // G, w.shape[1]
    CIK = CI * int(np.prod(kshape))
    wt = np.ascontiguousarray(w.reshape(G, CO, CIK).transpose(0, 2, 1))      # [G, CI*K, CO]
    cols = _matmul(wt, _by_group(gy, G)).reshape((G, CI) + tuple(kshape) + (N,) + tuple(out))
    # the padded input gradient; large enough for every window even where gx is shorter
    extent = tuple(max(i + 2 * p, (o - 1) * s + (k - 1) * d + 1)
                   for i, p, o, s, k, d in zip(input_size, padding, out, stride, kshape, dilation))
    gxp = np.zeros((N, G, CI) + extent, cols.dtype)
    target = gxp.transpose((1, 2, 0) + tuple(range(3, 3 + len(out))))         # [G, CI, N, *extent]
    for tap in itertools.product(*(range(k) for k in kshape)):
        window = tuple(slice(t * d, t * d + s * (o - 1) + 1, s) for t, d, s, o in zip(tap, dilation, stride, out))
        target[(Ellipsis,) + window] += cols[(slice(None), slice(None)) + tap]
    gx = gxp.reshape((N, G * CI) + extent)[(Ellipsis,) + tuple(slice(p, p + i) for p, i in zip(padding, input_size))]
    if bias is not None:
        gx = gx + bias.reshape((-1,) + (1,) * len(out))
    return gx


def conv_weight_grad(gy, x, weight_shape, stride, padding, dilation, groups):
    """gw = the gradient of conv(x, w) for w (of ``weight_shape``), given gy: per group one
    matmul over every pixel of every image, gy[g] [CO, N*O] @ cols[g]^T. gy may have fewer
    output pixels than x gives (a transposed convolution's output padding): those present are
    summed."""
    G = groups
    kshape, out = tuple(weight_shape[2:]), tuple(gy.shape[2:])
    cols = columns(x, kshape, out, stride, padding, dilation, G)               # [G, CI*K, N*O]
    gw = _matmul(_by_group(gy, G), cols.transpose(0, 2, 1))                   # [G, CO, CI*K]
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
