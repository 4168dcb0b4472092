"""The fused recurrent cell steps: torch's _thnn_fused_lstm_cell / _thnn_fused_gru_cell (and a
fused tanh/relu step for nn.RNN), each one table entry with a Triton kernel (kernels/rnn.py) and
a NumPy reference (backends/numpy_rnn.py), whose first-order backward is one table entry too:

  _thnn_fused_lstm_cell(ig, hg, cx) -> (hy, cy, workspace)   ig, hg (B, 4H) gate pre-activations
                                                             (i, f, g, o) from the input and the
                                                             hidden projection; workspace (B, 4H)
                                                             the activated gates
  _thnn_fused_gru_cell(ig, hg, hx)  -> (hy, workspace)       ig, hg (B, 3H) (r, z, n); workspace
                                                             (B, 4H): r, z, n, hn
  _fused_rnn_cell(ig, hg, relu)     -> hy                    tanh or relu of ig + hg

So a recurrent layer runs per time step one matmul (the hidden projection) and one fused
pointwise kernel, forward and backward (nn/modules/rnn.py). Without create_graph the backward is
the fused backward kernel; under create_graph (grad mode on during the backward) the same
derivative is written with table ops from the saved inputs, so that every order differentiates.
The workspace is an output as torch's: a gradient reaching it goes back through the gates'
activation derivatives.
"""
from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.grad_mode import is_grad_enabled
from ..backends import numpy_rnn
from ..backends.triton import rnn as trnn
from .dispatch import dispatch
from .elementwise import sigmoid, tanh
from .joining import cat
from .table import FROM_BACKWARD, Meta, op


def _shape_list(t):
    return "[" + ", ".join(str(int(s)) for s in t.shape) + "]"


def _check(name, gates, hidden, k, ig_name="input_gates", hg_name="hidden_gates", h_name="cx"):
    """The checks of torch's fused cells (aten/src/ATen/native/cuda/RNN.cu checkSizes)."""
    for t, n in ((gates[0], ig_name), (gates[1], hg_name), (hidden, h_name)):
        if not t.dtype.is_floating_point:
            raise RuntimeError(f'"{name}" not implemented for \'{_dt.type_name(t.dtype)}\'')
        if t.dim() != 2:
            raise RuntimeError(f"Expected {n} to have 2 dimensions, but got {t.dim()}")
    ig, hg = gates
    B, H = int(hidden.shape[0]), int(hidden.shape[1])
    for t, n in ((ig, ig_name), (hg, hg_name)):
        if tuple(t.shape) != (B, k * H):
            raise RuntimeError(f"Expected {n} to have size [{B}, {k * H}], but got {_shape_list(t)} "
                               f"(argument of {name})")
    for t in (hg, hidden):
        if t.dtype is not ig.dtype:
            raise RuntimeError(f"Expected all gate and state tensors of {name} to have dtype {ig.dtype}, "
                               f"got {t.dtype}")
        if t.device != ig.device:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                               f"{ig.device} and {t.device}!")


def _check_shapes(name, pairs):
    """The backward entries' operands (internal callers; checked so that no call reads past an
    operand): each (tensor, expected shape) pair, None tensors skipped."""
    for t, shape in pairs:
        if t is not None and tuple(int(s) for s in t.shape) != shape:
            raise RuntimeError(f"{name}: expected an operand of size {list(shape)}, got {_shape_list(t)}")


def _unit_cols(t):
    """The kernels read rows of unit column stride (each with its own row stride)."""
    return t if t is None or t.stride(-1) == 1 or t.shape[-1] <= 1 else t.contiguous()


# ------------------------------------------------------------------ LSTM
def _lstm_rule(ig, hg, cx, **_):
    B, H = (int(s) for s in cx.shape)
    c = _dt.compute_dtype(ig.dtype)
    return Meta((B, H), ig.dtype, c), Meta((B, H), ig.dtype, c), Meta((B, 4 * H), ig.dtype, c)


def _lstm_launch(outs, ig, hg, cx, *, compute, **_):
    trnn.lstm_cell(outs, ig, hg, cx, compute)


def _activation_grads(ws, k_sigmoid, k_tanh, g_ws):
    """g_ws times the derivative of the activated gates in ``ws`` w.r.t. their pre-activations."""
    parts = []
    for idx, w in enumerate(ws.chunk(len(k_sigmoid) + len(k_tanh), 1)):
        parts.append(w * (1 - w) if idx in k_sigmoid else 1 - w * w)
    return g_ws * cat(parts, 1)


def _lstm_grads_composite(g_hy, g_cy, ig, hg, cx):
    """(d gates, d cx) in table ops from the inputs (create_graph: every order differentiates)."""
    gi, gf, gg, go = (ig + hg).chunk(4, 1)
    i, f, g, o = sigmoid(gi), sigmoid(gf), tanh(gg), sigmoid(go)
    tc = tanh(f * cx + i * g)
    dc = g_cy if g_cy is not None else None
    do = None
    if g_hy is not None:
        do = g_hy * tc
        t = g_hy * o * (1 - tc * tc)
        dc = t if dc is None else dc + t
    if dc is None:
        dc = cx * 0
    if do is None:
        do = cx * 0
    gates = cat([dc * g * i * (1 - i), dc * cx * f * (1 - f), dc * i * (1 - g * g), do * o * (1 - o)], 1)
    return gates, dc * f


def _lstm_backward(ctx, g_hy=None, g_cy=None, g_ws=None):
    needs = ctx.needs_input_grad
    gates = gcx = None
    if g_hy is not None or g_cy is not None:
        if is_grad_enabled():
            gates, gcx = _lstm_grads_composite(g_hy, g_cy, ctx.ig, ctx.hg, ctx.cx)
        else:
            gates, gcx = fused_lstm_cell_backward(g_hy, g_cy, ctx.cx, ctx.cy, ctx.workspace)
    if g_ws is not None:
        extra = _activation_grads(ctx.workspace, (0, 1, 3), (2,), g_ws)
        gates = extra if gates is None else gates + extra
    return (gates if needs[0] else None, gates if needs[1] else None, gcx if needs[2] else None)


FUSED_LSTM_CELL = op("_thnn_fused_lstm_cell", ("ig", "hg", "cx"), jvp=FROM_BACKWARD, outputs=("hy", "cy", "workspace"),
                     rule=_lstm_rule, reference=numpy_rnn.fused_lstm_cell, kernel=_lstm_launch,
                     backward=_lstm_backward, saves=("ig", "hg", "cx", "cy", "workspace"),
                     grad_name="ThnnFusedLstmCellBackward0")


def _lstm_bwd_rule(g_hy, g_cy, cx, cy, ws, **_):
    if cx.dim() != 2:
        raise RuntimeError(f"_thnn_fused_lstm_cell_backward: expected a 2-D cx, got {cx.dim()}-D")
    B, H = (int(s) for s in cx.shape)
    _check_shapes("_thnn_fused_lstm_cell_backward", ((g_hy, (B, H)), (g_cy, (B, H)), (cy, (B, H)), (ws, (B, 4 * H))))
    c = _dt.compute_dtype(cx.dtype)
    return Meta((B, 4 * H), cx.dtype, c), Meta((B, H), cx.dtype, c)


def _lstm_bwd_launch(outs, g_hy, g_cy, cx, cy, ws, *, compute, **_):
    trnn.lstm_cell_backward(outs, g_hy, g_cy, cx, cy, ws, compute)


FUSED_LSTM_CELL_BACKWARD = op("_thnn_fused_lstm_cell_backward", ("g_hy", "g_cy", "cx", "cy", "workspace"),
                              outputs=("grad_gates", "grad_cx"), rule=_lstm_bwd_rule,
                              reference=numpy_rnn.fused_lstm_cell_backward, kernel=_lstm_bwd_launch,
                              differentiable=False)


def fused_lstm_cell(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    """torch._thnn_fused_lstm_cell -> (hy, cy, workspace): one LSTM step from the gate
    pre-activations of the input and hidden projections (B, 4H, gates i, f, g, o), optional
    biases (4H,) added to them, and the cell state cx (B, H)."""
    _check("_thnn_fused_lstm_cell", (input_gates, hidden_gates), cx, 4)
    if input_bias is not None:
        input_gates = input_gates + input_bias
    if hidden_bias is not None:
        hidden_gates = hidden_gates + hidden_bias
    return dispatch(FUSED_LSTM_CELL, _unit_cols(input_gates), _unit_cols(hidden_gates), _unit_cols(cx))


def fused_lstm_cell_backward(grad_hy, grad_cy, cx, cy, workspace):
    """(grad of the gates (B, 4H), grad of cx) of one LSTM step (either incoming gradient may
    be None: it is zero), as torch's _thnn_fused_lstm_cell_backward_impl without the bias sum."""
    return dispatch(FUSED_LSTM_CELL_BACKWARD, _unit_cols(grad_hy), _unit_cols(grad_cy), _unit_cols(cx),
                    _unit_cols(cy), _unit_cols(workspace))


# ------------------------------------------------------------------ GRU
def _gru_rule(ig, hg, hx, **_):
    B, H = (int(s) for s in hx.shape)
    c = _dt.compute_dtype(ig.dtype)
    return Meta((B, H), ig.dtype, c), Meta((B, 4 * H), ig.dtype, c)


def _gru_launch(outs, ig, hg, hx, *, compute, **_):
    trnn.gru_cell(outs, ig, hg, hx, compute)


def _gru_grads_composite(g_hy, ig, hg, hx):
    xr, xz, xn = ig.chunk(3, 1)
    hr, hz, hn = hg.chunk(3, 1)
    r, z = sigmoid(xr + hr), sigmoid(xz + hz)
    n = tanh(xn + r * hn)
    dn = g_hy * (1 - z) * (1 - n * n)
    dz = g_hy * (hx - n) * z * (1 - z)
    dr = dn * hn * r * (1 - r)
    return cat([dr, dz, dn], 1), cat([dr, dz, dn * r], 1), g_hy * z


def _gru_backward(ctx, g_hy=None, g_ws=None):
    needs = ctx.needs_input_grad
    gi = gh = ghx = None
    if g_hy is not None:
        if is_grad_enabled():
            gi, gh, ghx = _gru_grads_composite(g_hy, ctx.ig, ctx.hg, ctx.hx)
        else:
            gi, gh, ghx = fused_gru_cell_backward(g_hy, ctx.hx, ctx.workspace)
    if g_ws is not None:     # r, z, n, hn: hn is hg's n part itself; n = tanh(xn + r hn)
        gr, gz, gn, ghn = g_ws.chunk(4, 1)
        r, z, n, hn = ctx.workspace.chunk(4, 1)
        dn = gn * (1 - n * n)
        dr = (gr + dn * hn) * r * (1 - r)
        dz = gz * z * (1 - z)
        ei, eh = cat([dr, dz, dn], 1), cat([dr, dz, dn * r + ghn], 1)
        gi = ei if gi is None else gi + ei
        gh = eh if gh is None else gh + eh
    return (gi if needs[0] else None, gh if needs[1] else None, ghx if needs[2] else None)


FUSED_GRU_CELL = op("_thnn_fused_gru_cell", ("ig", "hg", "hx"), jvp=FROM_BACKWARD, outputs=("hy", "workspace"), rule=_gru_rule,
                    reference=numpy_rnn.fused_gru_cell, kernel=_gru_launch, backward=_gru_backward,
                    saves=("ig", "hg", "hx", "workspace"), grad_name="ThnnFusedGruCellBackward0")


def _gru_bwd_rule(g_hy, hx, ws, **_):
    if hx.dim() != 2:
        raise RuntimeError(f"_thnn_fused_gru_cell_backward: expected a 2-D hx, got {hx.dim()}-D")
    B, H = (int(s) for s in hx.shape)
    _check_shapes("_thnn_fused_gru_cell_backward", ((g_hy, (B, H)), (ws, (B, 4 * H))))
    c = _dt.compute_dtype(hx.dtype)
    return Meta((B, 3 * H), hx.dtype, c), Meta((B, 3 * H), hx.dtype, c), Meta((B, H), hx.dtype, c)


def _gru_bwd_launch(outs, g_hy, hx, ws, *, compute, **_):
    trnn.gru_cell_backward(outs, g_hy, hx, ws, compute)


FUSED_GRU_CELL_BACKWARD = op("_thnn_fused_gru_cell_backward", ("g_hy", "hx", "workspace"),
                             outputs=("grad_input_gates", "grad_hidden_gates", "grad_hx"), rule=_gru_bwd_rule,
                             reference=numpy_rnn.fused_gru_cell_backward, kernel=_gru_bwd_launch,
                             differentiable=False)


def fused_gru_cell(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    """torch._thnn_fused_gru_cell -> (hy, workspace): one GRU step from the input and hidden
    projections (B, 3H, gates r, z, n; the hidden one includes its bias, which n's reset gate
    multiplies) and the hidden state hx (B, H)."""
    _check("_thnn_fused_gru_cell", (input_gates, hidden_gates), hx, 3, h_name="hx")
    if input_bias is not None:
        input_gates = input_gates + input_bias
    if hidden_bias is not None:
        hidden_gates = hidden_gates + hidden_bias
    return dispatch(FUSED_GRU_CELL, _unit_cols(input_gates), _unit_cols(hidden_gates), _unit_cols(hx))


def fused_gru_cell_backward(grad_hy, hx, workspace):
    """(grad of the input gates (B, 3H), of the hidden gates (B, 3H), of hx) of one GRU step."""
    return dispatch(FUSED_GRU_CELL_BACKWARD, _unit_cols(grad_hy), _unit_cols(hx), _unit_cols(workspace))


# ------------------------------------------------------------------ Elman RNN (tanh / relu)
def _rnn_rule(ig, hg, *, relu, **_):
    return Meta(tuple(int(s) for s in ig.shape), ig.dtype, _dt.compute_dtype(ig.dtype))


def _rnn_launch(out, ig, hg, *, compute, relu, **_):
    trnn.rnn_cell(out, ig, hg, relu, compute)


def _rnn_backward(ctx, g):
    needs = ctx.needs_input_grad
    if is_grad_enabled():
        x = ctx.ig + ctx.hg
        d = g * (x > 0).to(g.dtype) if ctx.relu else g * (1 - tanh(x) ** 2)
    else:
        d = dispatch(FUSED_RNN_CELL_BACKWARD, _unit_cols(g), ctx.out, relu=ctx.relu)
    return d if needs[0] else None, d if needs[1] else None


FUSED_RNN_CELL = op("_fused_rnn_cell", ("ig", "hg"), jvp=FROM_BACKWARD, rule=_rnn_rule, reference=numpy_rnn.fused_rnn_cell,
                    kernel=_rnn_launch, backward=_rnn_backward, saves=("ig", "hg", "out"),
                    grad_name=lambda args, attrs: "RnnReluCellBackward0" if attrs["relu"] else "RnnTanhCellBackward0")


def _rnn_bwd_rule(g, hy, *, relu, **_):
    if hy.dim() != 2:
        raise RuntimeError(f"_fused_rnn_cell_backward: expected a 2-D hy, got {hy.dim()}-D")
    _check_shapes("_fused_rnn_cell_backward", ((g, tuple(int(s) for s in hy.shape)),))
    return Meta(tuple(int(s) for s in hy.shape), hy.dtype, _dt.compute_dtype(hy.dtype))


def _rnn_bwd_launch(out, g, hy, *, compute, relu, **_):
    trnn.rnn_cell_backward(out, g, hy, relu, compute)


FUSED_RNN_CELL_BACKWARD = op("_fused_rnn_cell_backward", ("g", "hy"), rule=_rnn_bwd_rule,
                             reference=numpy_rnn.fused_rnn_cell_backward, kernel=_rnn_bwd_launch,
                             differentiable=False)


def fused_rnn_cell(input_gates, hidden_gates, nonlinearity="tanh"):
    """One Elman RNN step: tanh (or relu) of input_gates + hidden_gates (B, H), in one kernel."""
    if nonlinearity not in ("tanh", "relu"):
        raise RuntimeError(f"Unknown nonlinearity: {nonlinearity}")
    name = "rnn_tanh_cell" if nonlinearity == "tanh" else "rnn_relu_cell"
    for t in (input_gates, hidden_gates):
        if not t.dtype.is_floating_point:
            raise RuntimeError(f'"{name}" not implemented for \'{_dt.type_name(t.dtype)}\'')
        if t.dim() != 2:
            raise RuntimeError(f"Expected input_gates and hidden_gates to have 2 dimensions, but got {t.dim()}")
    if tuple(input_gates.shape) != tuple(hidden_gates.shape) or input_gates.dtype is not hidden_gates.dtype:
        raise RuntimeError(f"{name}: input_gates {_shape_list(input_gates)} ({input_gates.dtype}) and hidden_gates "
                           f"{_shape_list(hidden_gates)} ({hidden_gates.dtype}) must have the same size and dtype")
    return dispatch(FUSED_RNN_CELL, _unit_cols(input_gates), _unit_cols(hidden_gates), relu=nonlinearity == "relu")
