"""Pooling as separable tables, and the NumPy references built on them.

Every pooling op reads, along each spatial dim on its own, a few input positions per output
position: a pooling window or an adaptive window. A *spec* names that rule for one dim (a tuple
of ints and strings, hashable: it travels as an op attribute and keys the caches), and its
*table* spells it out, computed once per spec on the host:

    idx [O, T]   int64: the input position tap t of output position o reads (-1: none, padding)
    w   [O, T]   the tap's weight, or None (every tap weighs 1; pooling has no weights)
    q   [O]      int64 divisor of output o (average pooling's window size), or None

A box of output positions reads the product of its dims' taps: a max pool takes the max over
the box (window_max), an average pool the sum divided by the product of the divisors
(separable). The backward of such a linear map is the TRANSPOSED map: along each dim, input
position i gathers the (o, t) pairs that read it, with weight w / q, so the gradient is the
same gather-and-sum (one lane per input element: no atomics, the same bits on every run) on the
transposed tables; transposing twice is the forward again, so every order of derivative is this
one op. The transposed table of a dim lists, per input position, the flat entries e = o * T + t
that read it (padded with -1), in increasing e.

Specs (``I`` input size, ``O`` output size of the dim):
    ("window", I, O, K, stride, padding, dilation, divisor)   max/avg pooling; divisor "none",
        "include" (count_include_pad), "exclude" (the taps inside the input) or an int
        (avg_pool's divisor_override, given on one dim of the box and "none" on the others)
    ("adaptive", I, O)    torch's adaptive windows [floor(o I / O), ceil((o + 1) I / O)), divisor
                          their length
    ("identity",)         a size-1 dim (the launchers lift every problem to three spatial dims)
"""
from __future__ import annotations

import functools
import itertools

import numpy as np


# --------------------------------------------------------------------------- sizes
def pool_output_size(size, kernel, stride, padding, dilation, ceil_mode):
    """torch's pooling_output_shape: floor (or ceil) of the window count, and with ceil_mode the
    last window must start inside the input or its left padding."""
    out = (size + 2 * padding - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out


def spec_input(spec):
    return 1 if spec[0] == "identity" else spec[1]


def spec_output(spec):
    return 1 if spec[0] == "identity" else spec[2]


# --------------------------------------------------------------------------- tables
def _readonly(*arrays):
    for a in arrays:
        if a is not None:
            a.setflags(write=False)
    return arrays


@functools.lru_cache(maxsize=512)
def forward_table(spec, dtype_name="float64"):
    """(idx [O, T] int64, w [O, T] or None, q [O] int64 or None) of ``spec`` (read-only)."""
    dtype = np.dtype(dtype_name if dtype_name.startswith("float") else "float64")
    kind = spec[0]
    w = q = None
    if kind == "identity":
        idx = np.zeros((1, 1), np.int64)
    elif kind == "window":
        _, size, out, kernel, stride, padding, dilation, divisor = spec
        start = np.arange(out, dtype=np.int64) * stride - padding
        pos = start[:, None] + np.arange(kernel, dtype=np.int64)[None, :] * dilation
        inside = (pos >= 0) & (pos < size)
        idx = np.where(inside, pos, -1)
        if divisor == "include":
            q = np.minimum(start + kernel, size + padding) - start
        elif divisor == "exclude":
            q = inside.sum(axis=1).astype(np.int64)
        elif divisor != "none":         # avg_pool's divisor_override (on one dim of the box)
            q = np.full(out, divisor, np.int64)
    elif kind == "adaptive":
        _, size, out = spec
        o = np.arange(out, dtype=np.int64)
        start = (o * size) // out
        length = ((o + 1) * size + out - 1) // out - start
        taps = np.arange(int(length.max()) if out else 1, dtype=np.int64)
        idx = np.where(taps[None, :] < length[:, None], start[:, None] + taps[None, :], -1)
        q = length
    else:
        raise ValueError(f"unknown pooling spec {spec!r}")
    return _readonly(np.ascontiguousarray(idx, np.int64), None if w is None else np.ascontiguousarray(w, dtype),
                     None if q is None else np.ascontiguousarray(q, np.int64))


@functools.lru_cache(maxsize=512)
def transposed_table(spec, dtype_name="float64"):
    """(entries [I, C] int64, w [I, C]) of ``spec``: per input position the flat entries
    e = o * T + t of the forward table that read it (increasing, -1 padded) and the weight
    w[o, t] / q[o] each carries (1 / q, or 1, where the forward has no weights)."""
    idx, w, q = forward_table(spec, dtype_name)
    dtype = np.dtype(dtype_name if dtype_name.startswith("float") else "float64")
    size = spec_input(spec)
    flat = idx.reshape(-1)
    e = np.flatnonzero(flat >= 0)                       # increasing
    dest = flat[e]
    order = np.argsort(dest, kind="stable")             # by input position, e increasing within
    e, dest = e[order], dest[order]
    counts = np.bincount(dest, minlength=size)
    width = max(int(counts.max()) if counts.size else 0, 1)
    first = np.cumsum(counts) - counts
    slot = np.arange(e.size) - first[dest]
    entries = np.full((size, width), -1, np.int64)
    entries[dest, slot] = e
    T = idx.shape[1]
    weight = np.ones(e.size, dtype) if w is None else w.reshape(-1)[e].astype(dtype)
    if q is not None:
        weight = weight / q[e // T].astype(dtype)
    wt = np.zeros((size, width), dtype)
    wt[dest, slot] = weight
    return _readonly(entries, wt)


def lifted(dims):
    """``dims`` (one spec per spatial dim, 1 to 3 of them) as three specs, leading identities."""
    return (("identity",),) * (3 - len(dims)) + tuple(dims)


def taps(spec, transposed):
    """T (forward) or C (transposed) of a spec: the taps along its dim per output element."""
    return transposed_table(spec)[0].shape[1] if transposed else forward_table(spec)[0].shape[1]


# --------------------------------------------------------------------------- references
def _spatial(x, dims):
    return x.ndim - len(dims)


def separable(x, *, dims, transposed=False, **_):
    """Along each spatial dim (the last len(dims)), gather the table's taps and sum them with
    their weights, then divide by the product of the dims' divisors (integer inputs: truncated,
    as torch's integer average pooling). ``transposed``: the transposed map (the gradient of the
    forward one; the divisors are in its weights)."""
    lead = _spatial(x, dims)
    dtype_name = x.dtype.name
    out = x
    divisors = []
    for d, spec in enumerate(dims):
        axis = lead + d
        if transposed:
            entries, w = transposed_table(spec, dtype_name)
            T = forward_table(spec, dtype_name)[0].shape[1]
            idx, q = np.where(entries >= 0, entries // T, -1), None
        else:
            idx, w, q = forward_table(spec, dtype_name)
            if spec[0] == "window":       # the window sums without a gather: strided slices
                out = _window_sum(out, axis, spec)
                divisors.append(np.ones(spec_output(spec), np.int64) if q is None else q)
                continue
        taken = np.take(out, np.maximum(idx, 0), axis=axis)          # ..., O, T, ...
        inside = (idx >= 0).reshape(idx.shape + (1,) * (out.ndim - axis - 1))
        weight = np.ones(idx.shape, x.dtype) if w is None else w.astype(x.dtype)
        weight = weight.reshape(inside.shape)
        # taps outside the input read nothing (a 0 weight would still make NaN of an inf or NaN)
        out = np.where(inside, taken * weight, 0).sum(axis=axis + 1, dtype=x.dtype)
        divisors.append(np.ones(spec_output(spec), np.int64) if q is None else q)
    if transposed or not any(forward_table(spec)[2] is not None for spec in dims):
        return out
    return _divide(out, functools.reduce(np.multiply.outer, divisors))


def _pads(spec):
    _, size, out, kernel, stride, padding, dilation, _ = spec
    return padding, max(0, (out - 1) * stride + (kernel - 1) * dilation - padding - (size - 1))


def _padded(x, axis, spec):
    """x zero-padded along ``axis`` so that every tap of a window spec is a position of it
    (padded position = o * stride + t * dilation)."""
    widths = [(0, 0)] * x.ndim
    widths[axis] = _pads(spec)
    return np.pad(x, widths) if any(widths[axis]) else x


def _tap(xp, axis, spec, t):
    """The strided view of tap t of every output position along ``axis`` (a basic slice)."""
    _, _, out, _, stride, _, dilation, _ = spec
    index = [slice(None)] * xp.ndim
    index[axis] = slice(t * dilation, t * dilation + (out - 1) * stride + 1, stride)
    return xp[tuple(index)]


def _window_sum(x, axis, spec):
    """The sum over each window along ``axis``: one strided slice of the zero-padded input per
    tap (the padding adds nothing)."""
    xp = _padded(x, axis, spec)
    acc = None
    for t in range(spec[3]):
        v = _tap(xp, axis, spec, t)
        acc = v.astype(x.dtype, copy=True) if acc is None else np.add(acc, v, out=acc)
    return acc


def _divide(acc, q):
    if acc.dtype.kind == "f":
        return (acc / q.astype(acc.dtype)).astype(acc.dtype)
    q = q.astype(acc.dtype)
    return np.where(acc >= 0, acc // q, -((-acc) // q))      # C's truncating division


def window_max(x, *, dims, **_):
    """(values, indices): the max of each output's box of taps, torch's rule (a later value
    wins when it is greater or NaN; the first tap inside the input otherwise), and its flat
    position within the input plane."""
    if all(spec[0] == "window" for spec in dims):
        return _window_max_strided(x, dims)
    lead = x.shape[:_spatial(x, dims)]
    tables = [forward_table(spec)[0] for spec in dims]
    sizes = x.shape[len(lead):]
    strides = [int(np.prod(sizes[d + 1:], dtype=np.int64)) for d in range(len(dims))]
    outs = tuple(t.shape[0] for t in tables)
    best = np.full(lead + outs, -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min, x.dtype)
    arg = np.full(lead + outs, -1, np.int64)
    for combo in itertools.product(*(range(t.shape[1]) for t in tables)):
        cols = [t[:, c] for t, c in zip(tables, combo)]
        grids = np.ix_(*cols)
        inside = np.ones(outs, bool)
        flat = np.zeros(outs, np.int64)
        for g, st in zip(grids, strides):
            inside = inside & (g >= 0)
            flat = flat + np.maximum(g, 0) * st
        v = x[(Ellipsis,) + tuple(np.maximum(g, 0) for g in grids)]
        take = inside & ((arg < 0) | (v > best) | (v != v))
        best = np.where(take, v, best)
        arg = np.where(take, flat, arg)
    return best, arg


def _window_max_strided(x, dims):
    """window_max of window specs, each tap of the box a strided view of the input padded with
    the lowest value (no gather): the max is np.maximum over the taps (NaN propagates); its index
    the first tap inside the input equal to it (taps walked backwards, each hit overwriting), or
    for a NaN max the last NaN tap (torch's rule). A window with no tap inside the input keeps
    the lowest value and index -1."""
    k = len(dims)
    lead = x.shape[:x.ndim - k]
    floating = x.dtype.kind == "f"
    lowest = -np.inf if floating else np.iinfo(x.dtype).min
    widths = [(0, 0)] * len(lead) + [_pads(spec) for spec in dims]
    xp = np.pad(x, widths, constant_values=lowest) if any(any(w) for w in widths) else x     # one copy
    sizes = x.shape[len(lead):]
    plane_strides = [int(np.prod(sizes[d + 1:], dtype=np.int64)) for d in range(k)]
    outs = tuple(spec[2] for spec in dims)
    starts = [np.arange(spec[2], dtype=np.int64) * spec[4] - spec[5] for spec in dims]     # o * stride - pad
    taps = []           # (strided view, inside the input, flat plane position) per tap, in torch's order
    for combo in itertools.product(*(range(spec[3]) for spec in dims)):
        v = xp
        for d, t in enumerate(combo):
            v = _tap(v, len(lead) + d, dims[d], t)
        inside = np.ones(outs, bool)
        flat = np.zeros(outs, np.int64)
        for g, size, st in zip(np.ix_(*[p + t * spec[6] for p, t, spec in zip(starts, combo, dims)]), sizes,
                                plane_strides):
            inside = inside & (g >= 0) & (g < size)
            flat = flat + g * st
        taps.append((v, None if inside.all() else inside, flat))
    best = taps[0][0].copy()
    for v, _, _ in taps[1:]:
        np.maximum(best, v, out=best)
    arg = np.full(lead + outs, -1, np.int64)
    hit = np.empty(best.shape, bool)
    for v, inside, flat in reversed(taps):
        np.equal(v, best, out=hit)
        if inside is not None:
            hit &= inside
        np.copyto(arg, flat, where=hit)
    if floating:
        nan = np.isnan(best)
        if nan.any():
            for v, inside, flat in taps:
                hit = np.isnan(v) & nan
                np.copyto(arg, flat, where=hit if inside is None else hit & inside)
    return best, arg


def window_max_backward(grad, *, indices, dims, **_):
    """The input's gradient: each output's gradient added at its max's position (np.bincount
    over row * plane + index: overlapping windows that pick the same element add up, in order)."""
    lead = grad.shape[:_spatial(grad, dims)]
    sizes = tuple(spec_input(spec) for spec in dims)
    rows = int(np.prod(lead, dtype=np.int64))
    plane = int(np.prod(sizes, dtype=np.int64))
    per_row = int(np.prod(grad.shape[len(lead):], dtype=np.int64))
    index = np.asarray(indices, np.int64).reshape(rows, per_row)
    valid = ((index >= 0) & (index < plane)).reshape(-1)      # (-1: a window with no tap inside the input)
    target = (np.arange(rows, dtype=np.int64)[:, None] * plane + index).reshape(-1)[valid]
    weights = grad.reshape(-1)[valid]
    if grad.dtype.kind != "f":
        out = np.zeros(rows * plane, grad.dtype)
        np.add.at(out, target, weights)      # (a fresh array; integer gradients do not occur in autograd)
    else:
        out = np.bincount(target, weights=weights.astype(np.float64), minlength=rows * plane)
    return out.astype(grad.dtype).reshape(lead + sizes)
