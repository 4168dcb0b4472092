"""OpInfo records of the fused recurrent cell steps (tritensor/ops/rnn.py, kernels/rnn.py):
torch's _thnn_fused_lstm_cell / _thnn_fused_gru_cell, the tanh/relu step, and their fused
backwards; and of embedding_bag (ops/embedding_bag.py: op_db's nn.functional.embedding_bag). References are written here in float64 from the textbook formulas (sigmoid through
tanh: s(x) = (1 + tanh(x / 2)) / 2), not the table's NumPy reference. Samples cross the
emulated kernels' 64-element block, read row-sliced and transposed operands, and include an
empty batch; gradient cases check every order (the create_graph path is table ops)."""
from __future__ import annotations

import numpy as np

import tritensor as tt
from opinfo import CPU_ONLY_GRADGRAD, GRAD_CASES, TOLERANCES, SampleInput, _randn, record, rng_for, table_op  # noqa: F401
from tritensor.ops import rnn as R

FLOATS = (tt.float16, tt.bfloat16, tt.float32, tt.float64)


def _s(x):
    return (1 + np.tanh(x / 2)) / 2


def _f64(*arrays):
    return [None if a is None else np.asarray(a, np.float64) for a in arrays]


def _maker(device, dtype, key):
    rng = rng_for(*key)

    def make(shape, scale=1.5):
        return tt.tensor(rng.standard_normal(shape) * scale, dtype=dtype, device=device)
    return make


# ------------------------------------------------------------------ LSTM
def _lstm_ref(ig, hg, cx, input_bias=None, hidden_bias=None):
    ig, hg, cx, bi, bh = _f64(ig, hg, cx, input_bias, hidden_bias)
    g = ig + hg + (0 if bi is None else bi) + (0 if bh is None else bh)
    H = cx.shape[1]
    i, f, c, o = _s(g[:, :H]), _s(g[:, H:2 * H]), np.tanh(g[:, 2 * H:3 * H]), _s(g[:, 3 * H:])
    cy = f * cx + i * c
    return o * np.tanh(cy), cy, np.concatenate([i, f, c, o], 1)


def _lstm_samples(device, dtype):
    make = _maker(device, dtype, ("lstm_cell", dtype))
    yield SampleInput((make((3, 92)), make((3, 92)), make((3, 23))), desc="crosses-a-block")
    wide = make((3, 120))
    yield SampleInput((wide[:, 4:96], make((3, 92)), make((23, 3)).t()), desc="row-sliced-transposed-cx")
    yield SampleInput((make((2, 8)), make((2, 8)), make((2, 2)), make((8,)), make((8,))), desc="biases")
    yield SampleInput((make((0, 8)), make((0, 8)), make((0, 2))), desc="empty-batch")


record("_thnn_fused_lstm_cell", R.fused_lstm_cell, FLOATS, _lstm_samples, _lstm_ref)


def _lstm_bwd_ref(ghy, gcy, cx, cy, ws):
    ghy, gcy, cx, cy, ws = _f64(ghy, gcy, cx, cy, ws)
    H = cx.shape[1]
    i, f, g, o = ws[:, :H], ws[:, H:2 * H], ws[:, 2 * H:3 * H], ws[:, 3 * H:]
    tc = np.tanh(cy)
    ghy = np.zeros_like(cx) if ghy is None else ghy
    dc = (0 if gcy is None else gcy) + ghy * o * (1 - tc ** 2)
    return np.concatenate([dc * g * i * (1 - i), dc * cx * f * (1 - f), dc * i * (1 - g ** 2),
                           ghy * tc * o * (1 - o)], 1), dc * f


def _lstm_bwd_samples(device, dtype):
    make = _maker(device, dtype, ("lstm_cell_bwd", dtype))
    ig, hg, cx = make((3, 92)), make((3, 92)), make((3, 23))
    hy, cy, ws = R.fused_lstm_cell(ig, hg, cx)
    yield SampleInput((make((3, 23)), make((3, 23)), cx, cy, ws), desc="both-grads")
    yield SampleInput((make((23, 3)).t(), None, cx, cy, ws), desc="grad-hy-only-transposed")
    yield SampleInput((None, make((3, 23)), cx, cy, ws), desc="grad-cy-only")


record("_thnn_fused_lstm_cell_backward", R.fused_lstm_cell_backward, (tt.float32, tt.float64), _lstm_bwd_samples,
       _lstm_bwd_ref)


# ------------------------------------------------------------------ GRU
def _gru_ref(ig, hg, hx, input_bias=None, hidden_bias=None):
    ig, hg, hx, bi, bh = _f64(ig, hg, hx, input_bias, hidden_bias)
    ig = ig + (0 if bi is None else bi)
    hg = hg + (0 if bh is None else bh)
    H = hx.shape[1]
    r, z = _s(ig[:, :H] + hg[:, :H]), _s(ig[:, H:2 * H] + hg[:, H:2 * H])
    n = np.tanh(ig[:, 2 * H:] + r * hg[:, 2 * H:])
    return (1 - z) * n + z * hx, np.concatenate([r, z, n, hg[:, 2 * H:]], 1)


def _gru_samples(device, dtype):
    make = _maker(device, dtype, ("gru_cell", dtype))
    yield SampleInput((make((3, 69)), make((3, 69)), make((3, 23))), desc="crosses-a-block")
    yield SampleInput((make((3, 80))[:, 5:74], make((69, 3)).t(), make((3, 23))), desc="sliced-transposed")
    yield SampleInput((make((2, 6)), make((2, 6)), make((2, 2)), make((6,)), make((6,))), desc="biases")
    yield SampleInput((make((0, 6)), make((0, 6)), make((0, 2))), desc="empty-batch")


record("_thnn_fused_gru_cell", R.fused_gru_cell, FLOATS, _gru_samples, _gru_ref)


def _gru_bwd_ref(ghy, hx, ws):
    ghy, hx, ws = _f64(ghy, hx, ws)
    H = hx.shape[1]
    r, z, n, hn = ws[:, :H], ws[:, H:2 * H], ws[:, 2 * H:3 * H], ws[:, 3 * H:]
    dn = ghy * (1 - z) * (1 - n ** 2)
    dz = ghy * (hx - n) * z * (1 - z)
    dr = dn * hn * r * (1 - r)
    return np.concatenate([dr, dz, dn], 1), np.concatenate([dr, dz, dn * r], 1), ghy * z


def _gru_bwd_samples(device, dtype):
    make = _maker(device, dtype, ("gru_cell_bwd", dtype))
    hx = make((3, 23))
    hy, ws = R.fused_gru_cell(make((3, 69)), make((3, 69)), hx)
    yield SampleInput((make((3, 23)), hx, ws), desc="crosses-a-block")
    yield SampleInput((make((23, 3)).t(), make((23, 3)).t(), ws), desc="transposed")


record("_thnn_fused_gru_cell_backward", R.fused_gru_cell_backward, (tt.float32, tt.float64), _gru_bwd_samples,
       _gru_bwd_ref)


# ------------------------------------------------------------------ tanh / relu step
def _rnn_ref(ig, hg, nonlinearity="tanh"):
    x = np.asarray(ig, np.float64) + np.asarray(hg, np.float64)
    return np.tanh(x) if nonlinearity == "tanh" else np.maximum(x, 0)


def _rnn_samples(device, dtype):
    make = _maker(device, dtype, ("rnn_cell", dtype))
    for nl in ("tanh", "relu"):
        yield SampleInput((make((3, 29)), make((3, 29)), nl), desc=f"{nl}-crosses-a-block")
        yield SampleInput((make((29, 3)).t(), make((3, 40))[:, 3:32], nl), desc=f"{nl}-transposed-sliced")
    yield SampleInput((make((0, 4)), make((0, 4))), desc="empty-batch")


record("_fused_rnn_cell", R.fused_rnn_cell, FLOATS, _rnn_samples, _rnn_ref)


def _rnn_bwd_op(g, hy, relu):
    return table_op("_fused_rnn_cell_backward", g, hy, relu=relu)


def _rnn_bwd_ref(g, hy, relu):
    g, hy = _f64(g, hy)
    return np.where(hy > 0, g, 0.0) if relu else g * (1 - hy ** 2)


def _rnn_bwd_samples(device, dtype):
    make = _maker(device, dtype, ("rnn_cell_bwd", dtype))
    for relu in (False, True):
        hy = R.fused_rnn_cell(make((3, 29)), make((3, 29)), "relu" if relu else "tanh")
        yield SampleInput((make((3, 29)), hy, relu), desc=f"relu={relu}")


record("_fused_rnn_cell_backward", _rnn_bwd_op, (tt.float32, tt.float64), _rnn_bwd_samples, _rnn_bwd_ref)


GRAD_CASES.update({
    # every output (the workspace too: its gradient goes back through the gate activations)
    "_thnn_fused_lstm_cell": lambda d: (R.fused_lstm_cell, (_randn((2, 8), d), _randn((2, 8), d), _randn((2, 2), d)),
                                        {}),
    "_thnn_fused_gru_cell": lambda d: (R.fused_gru_cell, (_randn((2, 6), d), _randn((2, 6), d), _randn((2, 2), d)),
                                       {}),
    "_fused_rnn_cell": lambda d: (lambda a, b: R.fused_rnn_cell(a, b, "tanh") + R.fused_rnn_cell(b, a, "relu"),
                                  (_randn((2, 3), d), _randn((2, 3), d, away_from=0)), {}),
})
# the second derivative is the same table-op composite on every device: 20-30 s interpreted
CPU_ONLY_GRADGRAD.update({"_thnn_fused_lstm_cell", "_thnn_fused_gru_cell"})


# ------------------------------------------------------------------ embedding_bag
def _bag_ref(input, weight, offsets=None, per_sample_weights=None, mode="mean", padding_idx=None,
             include_last_offset=False):
    weight = np.asarray(weight, np.float64)
    input = np.asarray(input)
    if input.ndim == 2:
        offsets = np.arange(0, input.size, input.shape[1])
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = np.asarray(per_sample_weights).reshape(-1)
    starts = list(offsets[:-1] if include_last_offset else offsets)
    bounds = starts + [input.size]
    out = np.zeros((len(starts), weight.shape[1]))
    for b in range(len(starts)):
        pos = [p for p in range(bounds[b], bounds[b + 1])
               if padding_idx is None or input[p] != padding_idx % weight.shape[0]]
        if not pos:
            continue
        rows = weight[input[pos]]
        if per_sample_weights is not None:
            rows = rows * np.asarray(per_sample_weights, np.float64)[pos][:, None]
        out[b] = {"sum": rows.sum(0), "mean": rows.mean(0), "max": rows.max(0)}[mode]
    return out


def _bag_op(input, weight, offsets=None, per_sample_weights=None, **kwargs):
    """(per_sample_weights positional: the parity harness hands tensor arguments to the reference
    as arrays, keyword arguments as they are)"""
    return tt.nn.functional.embedding_bag(input, weight, offsets, per_sample_weights=per_sample_weights, **kwargs)


def _bag_samples(device, dtype):
    make = _maker(device, dtype, ("embedding_bag", dtype))
    rng = rng_for("embedding_bag-idx", dtype)
    idx = tt.tensor(rng.integers(0, 13, 23), device=device)
    offsets = tt.tensor([0, 4, 4, 11, 20], device=device)
    w = make((13, 21))
    yield SampleInput((idx, w, offsets, make((23,))), {"mode": "sum"}, desc="sum-psw")
    yield SampleInput((idx.to(tt.int32), make((21, 13)).t(), offsets.to(tt.int32)), {"mode": "mean", "padding_idx": 3},
                      desc="mean-padding-transposed-int32")
    yield SampleInput((idx, w, offsets), {"mode": "max", "include_last_offset": True}, desc="max-last-offset")
    yield SampleInput((idx[:20].reshape(4, 5), w), {"mode": "max", "padding_idx": -2}, desc="2d-max-padding")


record("_embedding_bag", _bag_op, FLOATS, _bag_samples, _bag_ref, op_db=("nn.functional.embedding_bag",))


def _bag_grad_case(d):
    """sum with per-sample weights and a padding index, and max, over an empty bag too (mean's
    gradients: the recorded torch fixtures, tests/test_embedding_bag.py). Small: each backward
    is a few interpreted index_add launches on the emulated device."""
    idx = tt.tensor([1, 2, 4, 4, 3, 0], device=d)
    offsets = tt.tensor([0, 3, 3], device=d)
    return (lambda w, p: (tt.nn.functional.embedding_bag(idx, w, offsets, mode="sum", per_sample_weights=p,
                                                         padding_idx=4)
                          + tt.nn.functional.embedding_bag(idx, w, offsets, mode="max")),
            (_randn((5, 2), d), _randn((6,), d)), {})


GRAD_CASES["_embedding_bag"] = _bag_grad_case
CPU_ONLY_GRADGRAD.add("_embedding_bag")     # (its second derivative: index_add / index_select, table ops)
