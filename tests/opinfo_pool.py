"""OpInfo records of the pooling family (tritensor/ops/pool.py), checked by tests/test_ops_table.py
(cpu, emulated cuda) and tests/test_op_gradients.py.

The oracle here is independent of backends/numpy_pool.py (per-dim index tables, a vectorised
gather): it follows torch's definitions output element by output element on tiny sizes, in
plain Python: each output's window (start o * stride - padding, taps every ``dilation``; the
adaptive window [floor(o I / O), ceil((o + 1) I / O))), the max with torch's rule (a tap wins
when greater or NaN; the first tap inside the input otherwise) and its flat plane index, the
average divided by the window's size with its padding (cut at the padded end), without it, or
by divisor_override; max_unpool places each value at its index.

Emulated launches are ~0.1 s; the cuda samples are one or two per op in float32 (and one 16-bit
sample for max_pool2d and avg_pool2d), each past one 64-lane block so the masks are hit. The
full dtype matrix and every layout (channels_last, sliced, unbatched, batch 1) run on the cpu.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

import tritensor as tt
from opinfo import CPU_ONLY_GRADGRAD, GRAD_CASES, SampleInput, _randn, record, rng_for, table_op, values

POOL_DTYPES = (tt.float16, tt.bfloat16, tt.float32, tt.float64)
AVG_TOLERANCES = {tt.float16: (2e-3, 2e-3), tt.bfloat16: (1.6e-2, 1.6e-2), tt.float32: (1e-5, 1e-6),
                  tt.float64: (1e-12, 1e-12)}
EXACT = {d: (0, 0) for d in POOL_DTYPES}


def _tuple(v, k):
    v = tuple(v) if isinstance(v, (tuple, list)) else (v,)
    return v * k if len(v) == 1 else v


# --------------------------------------------------------------------------- the oracle
def _window_taps(size, o, kernel, stride, pad, dilation):
    start = o * stride - pad
    return [start + t * dilation for t in range(kernel)], start


def _out_size(size, kernel, stride, pad, dilation, ceil_mode):
    span = size + 2 * pad - dilation * (kernel - 1) - 1
    out = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _dim_rules(x_shape, k, kind, kw):
    """Per spatial dim: (output size, taps(o) -> (positions, divisor))."""
    sizes = x_shape[-k:]
    rules = []
    if kind == "adaptive":
        outs = _tuple(kw["output_size"], k)
        for d, size in enumerate(sizes):
            out = size if outs[d] is None else outs[d]

            def taps(o, size=size, out=out):
                lo, hi = (o * size) // out, -((-(o + 1) * size) // out)
                return list(range(lo, hi)), hi - lo
            rules.append((out, taps))
        return rules
    kernel = _tuple(kw["kernel_size"], k)
    stride = _tuple(kw.get("stride") or kernel, k)
    pad = _tuple(kw.get("padding", 0), k)
    dil = _tuple(kw.get("dilation", 1), k)
    for d, size in enumerate(sizes):
        out = _out_size(size, kernel[d], stride[d], pad[d], dil[d], kw.get("ceil_mode", False))

        def taps(o, d=d, size=size):
            pos, start = _window_taps(size, o, kernel[d], stride[d], pad[d], dil[d])
            inside = [p for p in pos if 0 <= p < size]
            include = min(start + kernel[d], size + pad[d]) - start
            return inside, include if kw.get("count_include_pad", True) else len(inside)
        rules.append((out, taps))
    return rules


def pool_definition(x, k, kind, **kw):
    """max ("max": (values, indices)) or average ("avg", "adaptive_avg") pooling of the last k
    dims of x, output element by output element; "adaptive_max" is max over adaptive windows."""
    window = "adaptive" if kind.startswith("adaptive") else "window"
    reduce = "max" if kind.endswith("max") else "avg"
    rules = _dim_rules(x.shape, k, window, kw)
    lead = x.shape[:-k]
    outs = tuple(r[0] for r in rules)
    y = np.zeros(lead + outs, np.float64)
    index = np.zeros(lead + outs, np.int64)
    plane = x.shape[-k:]
    for o in itertools.product(*(range(n) for n in outs)):
        per_dim = [rule[1](oi) for rule, oi in zip(rules, o)]
        for lead_index in itertools.product(*(range(n) for n in lead)):
            if reduce == "max":
                best, arg = -math.inf, None
                for pos in itertools.product(*(p for p, _ in per_dim)):
                    v = float(x[lead_index + pos])
                    if arg is None or v > best or math.isnan(v):
                        best, arg = v, int(np.ravel_multi_index(pos, plane))
                y[lead_index + o], index[lead_index + o] = best, arg
            else:
                total = sum(float(x[lead_index + pos]) for pos in itertools.product(*(p for p, _ in per_dim)))
                if kw.get("divisor_override") is not None:
                    divisor = kw["divisor_override"]
                else:
                    divisor = math.prod(q for _, q in per_dim)
                y[lead_index + o] = total / divisor
    return (y, index) if reduce == "max" else y


def unpool_definition(x, indices, k, output_size):
    """Zeros of x's leading dims + output_size, each x value written at its flat index."""
    lead = x.shape[:-k]
    out = np.zeros(lead + tuple(output_size))
    for li in itertools.product(*(range(n) for n in lead)):
        flat = out[li].reshape(-1)
        for pos in itertools.product(*(range(n) for n in x.shape[-k:])):
            flat[indices[li + pos]] = x[li + pos]
        out[li] = flat.reshape(output_size)
    return out


# --------------------------------------------------------------------------- samples
def _make(dtype, device, rng):
    def make(shape, channels_last=False, sliced=False):
        if sliced:    # every other element of the last dim: a non-contiguous operand
            shape = tuple(shape[:-1]) + (2 * shape[-1],)
        t = tt.tensor(values(shape, dtype, "any", rng), dtype=dtype, device=device)
        if channels_last:
            t = t.contiguous(memory_format=tt.channels_last if t.dim() == 4 else tt.channels_last_3d)
        return t[..., ::2] if sliced else t
    return make


def _pool_samples(name, specs):
    """specs: (desc, build(make) -> input, kwargs, where): "all" runs on both devices in every
    dtype, "cuda32" on the cuda device in float32 only (the cpu in every dtype), "cpu" on the cpu."""
    def samples(device, dtype):
        make = _make(dtype, device, rng_for(name, dtype, device))
        for desc, build, kwargs, where in specs:
            if device != "cpu" and (where == "cpu" or (where == "cuda32" and dtype is not tt.float32)):
                continue
            yield SampleInput((build(make),), dict(kwargs), desc=desc)
    return samples


MAX_POOL2D = [
    ("resnet-stem", lambda m: m((2, 3, 9, 8)), {"kernel_size": 3, "stride": 2, "padding": 1}, "all"),
    ("channels-last-dilated-ceil", lambda m: m((1, 3, 7, 6), channels_last=True),
     {"kernel_size": (2, 3), "stride": (2, 1), "padding": (1, 1), "dilation": (2, 1), "ceil_mode": True}, "cuda32"),
    ("sliced-unbatched", lambda m: m((3, 5, 5), sliced=True), {"kernel_size": 2}, "cpu"),
    ("batch1-overlap", lambda m: m((1, 2, 5, 5)), {"kernel_size": 3, "stride": 1}, "cpu"),
    ("empty-batch", lambda m: m((0, 2, 4, 4)), {"kernel_size": 2}, "cpu"),
]
MAX_POOL1D = [
    ("padded", lambda m: m((2, 3, 19)), {"kernel_size": 3, "stride": 2, "padding": 1}, "all"),
    ("unbatched-ceil-dilated", lambda m: m((2, 8)), {"kernel_size": 2, "stride": 3, "dilation": 2, "ceil_mode": True},
     "cpu"),
]
MAX_POOL3D = [
    ("ceil", lambda m: m((1, 2, 5, 4, 5)), {"kernel_size": 2, "stride": 2, "ceil_mode": True}, "all"),
    ("channels-last-3d", lambda m: m((2, 2, 3, 4, 3), channels_last=True),
     {"kernel_size": (2, 3, 2), "stride": 1, "padding": (1, 1, 0)}, "cpu"),
]
AVG_POOL2D = [
    ("include-pad", lambda m: m((2, 3, 9, 8)), {"kernel_size": 3, "stride": 2, "padding": 1}, "all"),
    ("channels-last-exclude-ceil", lambda m: m((2, 3, 7, 6), channels_last=True),
     {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False, "ceil_mode": True}, "cuda32"),
    ("divisor-override", lambda m: m((1, 2, 6, 5)),
     {"kernel_size": (3, 2), "stride": (1, 2), "padding": (1, 0), "divisor_override": 5}, "cpu"),
    ("sliced-unbatched-ceil", lambda m: m((2, 5, 5), sliced=True), {"kernel_size": 2, "ceil_mode": True}, "cpu"),
]
AVG_POOL1D = [
    ("padded-exclude", lambda m: m((2, 3, 19)), {"kernel_size": 3, "stride": 2, "padding": 1,
                                                 "count_include_pad": False}, "all"),
    ("unbatched", lambda m: m((3, 7)), {"kernel_size": 2, "ceil_mode": True}, "cpu"),
]
AVG_POOL3D = [
    ("ceil-exclude", lambda m: m((1, 2, 5, 4, 5)),
     {"kernel_size": 2, "stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False}, "all"),
    ("channels-last-3d-divisor", lambda m: m((2, 2, 4, 4, 3), channels_last=True),
     {"kernel_size": 2, "stride": 1, "divisor_override": 3}, "cpu"),
]
ADAPTIVE2D = [
    ("odd-shrink", lambda m: m((2, 3, 7, 9)), {"output_size": (3, 4)}, "all"),
    ("channels-last-grow", lambda m: m((1, 3, 3, 4), channels_last=True), {"output_size": (5, 6)}, "cpu"),
    ("none-keeps-size", lambda m: m((1, 2, 5, 6), sliced=True), {"output_size": (None, 4)}, "cpu"),
    ("global", lambda m: m((2, 3, 4, 5)), {"output_size": 1}, "cpu"),
]
ADAPTIVE1D = [
    ("shrink", lambda m: m((2, 3, 23)), {"output_size": 5}, "all"),
    ("unbatched-grow", lambda m: m((2, 5)), {"output_size": 7}, "cpu"),
]
ADAPTIVE3D = [
    ("mixed", lambda m: m((1, 2, 5, 4, 5)), {"output_size": (2, 3, 2)}, "all"),
    ("unbatched-channels", lambda m: m((2, 3, 3, 4)), {"output_size": (3, 2, 3)}, "cpu"),
]


def _with_indices(fn):
    return lambda x, **kw: tuple(fn(x, return_indices=True, **kw))


F = tt.nn.functional
for _k, _specs in ((1, MAX_POOL1D), (2, MAX_POOL2D), (3, MAX_POOL3D)):
    _name = f"max_pool{_k}d"
    record(_name, _with_indices(getattr(F, _name)), POOL_DTYPES, _pool_samples(_name, _specs),
           lambda x, _k=_k, **kw: pool_definition(x, _k, "max", **kw), tolerances=EXACT,
           op_db=(f"nn.functional.{_name}",))
for _k, _specs in ((1, AVG_POOL1D), (2, AVG_POOL2D), (3, AVG_POOL3D)):
    _name = f"avg_pool{_k}d"
    record(f"nn.functional.{_name}" if _k > 1 else _name, getattr(F, _name), POOL_DTYPES,
           _pool_samples(_name, _specs), lambda x, _k=_k, **kw: pool_definition(x, _k, "avg", **kw),
           tolerances=AVG_TOLERANCES, op_db=(f"nn.functional.{_name}",))
for _k, _specs in ((1, ADAPTIVE1D), (2, ADAPTIVE2D), (3, ADAPTIVE3D)):
    _name = f"adaptive_avg_pool{_k}d"
    record(f"nn.functional.{_name}" if _k > 1 else _name, getattr(F, _name), POOL_DTYPES,
           _pool_samples(_name, _specs), lambda x, _k=_k, **kw: pool_definition(x, _k, "adaptive_avg", **kw),
           tolerances=AVG_TOLERANCES, op_db=(f"nn.functional.{_name}",))
    _name = f"adaptive_max_pool{_k}d"
    record(f"nn.functional.{_name}" if _k > 1 else _name, _with_indices(getattr(F, _name)), POOL_DTYPES,
           _pool_samples(_name, [s for s in _specs if s[0] != "global"]),
           lambda x, _k=_k, **kw: pool_definition(x, _k, "adaptive_max", **kw), tolerances=EXACT,
           op_db=(f"nn.functional.{_name}",))


# max_unpool: pooled values and their indices (taken from the oracle, so the inputs are valid)
def _unpool_samples(k, shape, pool_kw, unpool_kw, where):
    name = f"max_unpool{k}d"

    def samples(device, dtype):
        if device != "cpu" and where == "cpu":
            return
        x = values(shape, dtype, "any", rng_for(name, dtype, device))
        y, i = pool_definition(np.asarray(tt.tensor(x, dtype=dtype).float().numpy(), np.float64), k, "max",
                               **pool_kw)
        yield SampleInput((tt.tensor(y, dtype=dtype, device=device), tt.tensor(i, device=device)),
                          dict(pool_kw, **unpool_kw), desc=f"after-max_pool{k}d")
    return samples


def _unpool_reference(k):
    def reference(x, indices, kernel_size, stride=None, padding=0, output_size=None):
        kernel, pad = _tuple(kernel_size, k), _tuple(padding, k)
        stride = _tuple(stride or kernel_size, k)
        size = output_size[-k:] if output_size is not None else tuple(
            (x.shape[-k + d] - 1) * stride[d] + kernel[d] - 2 * pad[d] for d in range(k))
        return unpool_definition(x, indices, k, size)
    return reference


for _k, _shape, _pool_kw, _unpool_kw, _where in (
        (1, (2, 3, 9), {"kernel_size": 2}, {}, "all"),
        (2, (2, 3, 9, 8), {"kernel_size": 3, "stride": 2, "padding": 1}, {"output_size": (9, 8)}, "all"),
        (3, (1, 2, 5, 4, 5), {"kernel_size": 2, "stride": 2}, {"output_size": (1, 2, 5, 4, 5)}, "all")):
    _name = f"max_unpool{_k}d"
    record(f"nn.functional.{_name}", getattr(F, _name), POOL_DTYPES,
           _unpool_samples(_k, _shape, _pool_kw, _unpool_kw, _where), _unpool_reference(_k), tolerances=EXACT,
           op_db=(f"nn.functional.{_name}",))



# fractional max pooling: windows from per-plane samples (torch's generate_intervals, in the dtype)
def fractional_definition(x, samples, kernel, output_size):
    """(values, indices) of fractional max pooling, plane by plane: the window starts of each dim
    trunc((i + u) alpha) - trunc(u alpha) in the samples' dtype (alpha = (I - K) / (O - 1)), the
    last I - K; the max by the same rule as max pooling."""
    k = len(kernel)
    order = (1, 0) if k == 2 else (0, 1, 2)
    lead = x.shape[:-k]
    plane = x.shape[-k:]
    dtype = samples.dtype.type
    y = np.zeros(lead + tuple(output_size))
    index = np.zeros(lead + tuple(output_size), np.int64)
    for li in itertools.product(*(range(n) for n in lead)):
        u_row = samples[li[0] if len(lead) == 2 else 0, li[-1]]
        starts = []
        for d in range(k):
            size, out, kk, u = plane[d], output_size[d], kernel[d], u_row[order[d]]
            seq = [size - kk] * out
            if out > 1:
                alpha = dtype(size - kk) / dtype(out - 1)
                seq[:-1] = [int(dtype((dtype(i) + u) * alpha)) - int(dtype(u * alpha)) for i in range(out - 1)]
            starts.append(seq)
        for o in itertools.product(*(range(n) for n in output_size)):
            best, arg = -math.inf, None
            for pos in itertools.product(*(range(starts[d][o[d]], starts[d][o[d]] + kernel[d]) for d in range(k))):
                v = float(x[li + pos])
                if arg is None or v > best or math.isnan(v):
                    best, arg = v, int(np.ravel_multi_index(pos, plane))
            y[li + o], index[li + o] = best, arg
    return y, index


def _fractional_samples(k, specs):
    def samples(device, dtype):
        rng = rng_for(f"fractional_max_pool{k}d", dtype, device)
        make = _make(dtype, device, rng)
        for desc, shape, kernel, out, cl, where in specs:
            if device != "cpu" and where == "cpu":
                continue
            batch = shape[0] if len(shape) == k + 2 else 1
            u = tt.tensor(rng.random((batch, shape[-k - 1], k)), dtype=dtype, device=device)
            yield SampleInput((make(shape, channels_last=cl), u, kernel, out), {}, desc=desc)
    return samples


for _k, _specs in ((2, [("odd", (2, 3, 9, 8), 3, (4, 3), False, "all"),
                        ("channels-last-one-output", (1, 2, 7, 7), (2, 3), (1, 5), True, "cpu"),
                        ("unbatched", (3, 9, 8), (2, 3), (4, 4), False, "cpu")]),
                   (3, [("odd", (1, 2, 5, 6, 7), 2, (3, 3, 4), False, "all"),
                        ("channels-last-3d", (2, 2, 4, 4, 5), (2, 1, 2), (2, 4, 3), True, "cpu")])):
    _name = f"fractional_max_pool{_k}d"
    record(f"nn.functional.{_name}",
           lambda x, u, kernel, out, _f=getattr(F, _name): tuple(_f(x, kernel, out, return_indices=True,
                                                                   _random_samples=u)),
           (tt.float32, tt.float64), _fractional_samples(_k, _specs),
           lambda x, u, kernel, out, _k=_k: fractional_definition(x, u, _tuple(kernel, _k), _tuple(out, _k)),
           tolerances=EXACT, op_db=(f"nn.functional.{_name}",))

# --------------------------------------------------------------------------- the table entries
_SPECS_2D = (("window", 7, 4, 3, 2, 1, 1, "none"), ("adaptive", 9, 4))     # a window dim and an adaptive one
_MAX_NODES = ("MaxPool2DWithIndicesBackward0", "MaxPool2DWithIndicesBackwardBackward0")
_AVG_NODES = ("AvgPool2DBackward0", "AvgPool2DBackwardBackward0")
_AVG_SPECS = (("window", 7, 4, 3, 2, 1, 1, "include"), ("adaptive", 9, 4))
_CL = "channels_last"


def _window_max(x, **kw):
    return tuple(table_op("window_max", x, dims=_SPECS_2D, nodes=_MAX_NODES, memory_format=kw.get("fmt", _CL)))


def _mixed_definition(x, kind):
    """A window dim (7 -> 4: kernel 3, stride 2, padding 1) then an adaptive one (9 -> 4)."""
    rows = [_dim_rules(x.shape[:-1], 1, "window", {"kernel_size": 3, "stride": 2, "padding": 1})[0],
            _dim_rules(x.shape, 1, "adaptive", {"output_size": 4})[0]]
    out = np.zeros(x.shape[:-2] + (4, 4))
    index = np.zeros(x.shape[:-2] + (4, 4), np.int64)
    for o0, o1 in itertools.product(range(4), range(4)):
        (p0, q0), (p1, q1) = rows[0][1](o0), rows[1][1](o1)
        taps = [(a, b) for a in p0 for b in p1]
        block = np.stack([x[..., a, b] for a, b in taps], -1)
        if kind == "max":
            best = np.argmax(block, -1)      # (no NaN or ties in these samples: first max)
            out[..., o0, o1] = np.take_along_axis(block, best[..., None], -1)[..., 0]
            index[..., o0, o1] = np.array([a * x.shape[-1] + b for a, b in taps])[best]
        else:
            out[..., o0, o1] = block.sum(-1) / (q0 * q1)
    return (out, index) if kind == "max" else out


def _table_samples(name, shape):
    def samples(device, dtype):
        make = _make(dtype, device, rng_for(name, dtype, device))
        yield SampleInput((make(shape, channels_last=True),), {}, desc="mixed-window-adaptive-channels-last")
        if device == "cpu":
            yield SampleInput((make(shape[1:]),), {"fmt": "contiguous_format"}, desc="unbatched")
    return samples


record("window_max", _window_max, (tt.float32, tt.float64), _table_samples("window_max", (2, 3, 7, 9)),
       lambda x, **kw: _mixed_definition(x.astype(np.float64), "max"), tolerances=EXACT)
record("separable", lambda x, **kw: table_op("separable", x, dims=_AVG_SPECS, transposed=False, nodes=_AVG_NODES,
                                             memory_format=kw.get("fmt", _CL)),
       (tt.float32, tt.float64), _table_samples("separable", (2, 3, 7, 9)),
       lambda x, **kw: _mixed_definition(x.astype(np.float64), "avg"), tolerances=AVG_TOLERANCES)


def _max_backward_definition(g, indices, plane):
    """Each gradient added at its output's max position (overlapping windows add up)."""
    lead = g.shape[:-2]
    out = np.zeros(lead + plane)
    for li in itertools.product(*(range(n) for n in lead)):
        flat = out[li].reshape(-1)
        for pos in itertools.product(*(range(n) for n in g.shape[-2:])):
            flat[indices[li + pos]] += g[li + pos]
        out[li] = flat.reshape(plane)
    return out


def _backward_samples(device, dtype):
    rng = rng_for("window_max_backward", dtype, device)
    x = rng.standard_normal((2, 3, 7, 9))
    _, indices = _mixed_definition(x, "max")
    g = tt.tensor(values((2, 3, 4, 4), dtype, "any", rng), dtype=dtype, device=device)
    yield SampleInput((g, tt.tensor(indices, device=device)), {}, desc="overlapping-windows")


record("window_max_backward",
       lambda g, indices: table_op("window_max_backward", g, indices=indices, dims=_SPECS_2D, nodes=_MAX_NODES,
                                   memory_format="contiguous_format"),
       (tt.float32, tt.float64), _backward_samples,
       lambda g, indices: _max_backward_definition(g.astype(np.float64), indices, (7, 9)), tolerances=AVG_TOLERANCES)



def _aten_backward_samples(device, dtype):
    """op_db's case (kernel 3, stride 2, ceil_mode) and a dilated, padded, channels_last one."""
    make = _make(dtype, device, rng_for("max_pool2d_with_indices_backward", dtype, device))
    for desc, shape, params, cl in (
            ("ceil", (1, 2, 3, 6), ([3], [2], [0], [1], True), False),
            ("dilated-padded-channels-last", (2, 3, 7, 6), ([2, 3], [1, 2], [1, 1], [2, 1], False), True)):
        if device != "cpu" and cl and dtype is not tt.float32:
            continue
        x = make(shape, channels_last=cl)
        k, s, p, d, c = params
        _, indices = F.max_pool2d(x, k, s, p, d, c, return_indices=True)
        g = make(tuple(indices.shape))
        yield SampleInput((g, x, k, s, p, d, c, indices), {}, desc=desc)


record("ops.aten.max_pool2d_with_indices_backward", tt.ops.aten.max_pool2d_with_indices_backward.default, POOL_DTYPES,
       _aten_backward_samples,
       lambda g, x, k, s, p, d, c, indices: _max_backward_definition(g.astype(np.float64), indices, x.shape[-2:]),
       tolerances=AVG_TOLERANCES, op_db=("max_pool2d_with_indices_backward",))

# --------------------------------------------------------------------------- gradients (float64)
# the three table entries, tiny (gradgradcheck runs dozens of emulated launches); tests/test_pool.py
# checks every public form's first and second derivatives on the cpu.
GRAD_CASES.update({
    "window_max": lambda d: (lambda x: F.max_pool2d(x, 2, 1, padding=1), (_randn((1, 1, 3, 3), d),), {}),
    "window_max_backward": lambda d: (
        lambda g: table_op("window_max_backward", g, indices=tt.tensor([[[[0, 1, 2], [3, 1, 5], [6, 7, 8]]]],
                                                                        device=d),
                           dims=(("window", 3, 3, 2, 1, 1, 1, "none"),) * 2, nodes=_MAX_NODES,
                           memory_format="contiguous_format"),
        (_randn((1, 1, 3, 3), d),), {}),
    "separable": lambda d: (lambda x: F.avg_pool2d(x, 2, 1, padding=1, count_include_pad=False),
                            (_randn((1, 1, 2, 3), d),), {}),
    "nn.functional.max_unpool2d": lambda d: (
        lambda x: F.max_unpool2d(x, tt.tensor([[[[0, 3], [6, 8]]]], device=d), 2, output_size=(3, 3)),
        (_randn((1, 1, 2, 2), d),), {}),
})
# their second derivatives are gathers and scatters (tested in their own families); the emulated
# device runs window_max's and separable's, which launch every pooling kernel again
CPU_ONLY_GRADGRAD.update({"window_max_backward", "nn.functional.max_unpool2d"})
