"""Recurrent layers, as torch.nn.modules.rnn: RNN (tanh, relu), LSTM (with proj_size), GRU, and
the single-step cells RNNCell, LSTMCell, GRUCell.

torch's constructor arguments, parameter names and order (``weight_ih_l{k}{_reverse}``,
``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}``, ``weight_hr_l{k}``; ``_flat_weights_names``,
``all_weights``), initialisation (every parameter ~ U(-1/sqrt(hidden), 1/sqrt(hidden))), checks
and error texts, and returns ((output, h_n); LSTM: (output, (h_n, c_n))). Gate orders are
torch's: LSTM i, f, g, o; GRU r, z, n with n = tanh(W_in x + b_in + r (W_hn h + b_hn)).

How a layer runs (one direction): the input projection of every time step is ONE matmul
(T*B, I) x (I, G) (with b_ih, and for LSTM and RNN b_hh too: GRU's b_hn sits inside the reset
gate's product, so GRU adds b_hh per step); then per step one matmul for the hidden projection
and one fused pointwise kernel for the gate arithmetic (ops/rnn.py: _thnn_fused_lstm_cell,
_thnn_fused_gru_cell, the tanh/relu step), forward and backward. On cuda a step launches 3
kernels forward (the matmul, the cell, its copy into the stacked output) and 6 backward (the
fused backward, two matmuls, the h-gradient sum, the W_hh-gradient accumulation, its share of
the one cat that gathers the input projection's gradient: _Steps). A PackedSequence runs each step
on the sequences still running (its batch_sizes), as torch: the hidden state of a sequence that
ended is kept as its h_n; the reverse direction starts each sequence at its own last step.
Dropout (training only) is applied to the outputs of every layer but the last.
"""
from __future__ import annotations

import math
import numbers
import warnings

from ...autograd.function import Function
from ...ops import rnn as _rnn
from ...ops.creation import empty, zeros
from ...ops.joining import cat, stack
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _apply_permutation(tensor, permutation, dim=1):
    return tensor.index_select(dim, permutation)


# ------------------------------------------------------------------ one step, one layer
class _Steps(Function):
    """The time steps of an input projection (N, G) as row blocks of the given sizes, whose
    backward is ONE cat of the step gradients (zeros where a step got none): per-step views
    would each scatter into a zero tensor of the whole projection."""

    @staticmethod
    def forward(ctx, gx, sizes):
        ctx.sizes, ctx.shape, ctx.dtype, ctx.device = sizes, tuple(gx.shape), gx.dtype, gx.device
        return tuple(gx.split(sizes))

    @staticmethod
    def backward(ctx, *grads):
        parts = [g if g is not None else zeros((n,) + ctx.shape[1:], dtype=ctx.dtype, device=ctx.device)
                 for g, n in zip(grads, ctx.sizes)]
        return cat(parts), None


def _step(mode, gx, state, w_hh, b_hh, w_hr):
    """One time step: (output, new state) from the input projection gx (B, G) and the state
    (h, or (h, c) for LSTM)."""
    if mode == "LSTM":
        h, c = state
        hy, cy, _ = _rnn.fused_lstm_cell(gx, F.linear(h, w_hh, b_hh), c)
        if w_hr is not None:
            hy = F.linear(hy, w_hr)
        return hy, (hy, cy)
    gh = F.linear(state, w_hh, b_hh)
    if mode == "GRU":
        hy = _rnn.fused_gru_cell(gx, gh, state)[0]
    else:
        hy = _rnn.fused_rnn_cell(gx, gh, "tanh" if mode == "RNN_TANH" else "relu")
    return hy, hy


def _narrow_state(state, lo, hi):
    return (state[0][lo:hi], state[1][lo:hi]) if isinstance(state, tuple) else state[lo:hi]


def _cat_states(parts):
    if isinstance(parts[0], tuple):
        return cat([p[0] for p in parts]), cat([p[1] for p in parts])
    return cat(parts)


def _run_direction(mode, gx, batch_sizes, state, w_hh, b_hh, w_hr, reverse):
    """One layer, one direction. gx: (T, B, G) padded, or (N, G) packed with the host list
    batch_sizes. Returns (output (T, B, H_out) or (N, H_out), final state)."""
    if batch_sizes is None:
        T, B = gx.shape[0], gx.shape[1]
        steps = _Steps.apply(gx.reshape(T * B, gx.shape[2]), [B] * T) if T > 1 else (gx[0],)
        order = range(T - 1, -1, -1) if reverse else range(T)
        outs = [None] * T
        for t in order:
            outs[t], state = _step(mode, steps[t], state, w_hh, b_hh, w_hr)
        return stack(outs), state
    steps = _Steps.apply(gx, batch_sizes) if len(batch_sizes) > 1 else (gx,)
    outs = [None] * len(batch_sizes)
    if not reverse:       # sequences end as t grows: a finished one keeps its last state
        finished, cur = [], batch_sizes[0]
        for t, b in enumerate(batch_sizes):
            if b < cur:
                finished.append(_narrow_state(state, b, cur))
                state = _narrow_state(state, 0, b)
                cur = b
            outs[t], state = _step(mode, steps[t], state, w_hh, b_hh, w_hr)
        state = _cat_states([state] + finished[::-1]) if finished else state
    else:                 # sequences start at their own last step: their initial state joins then
        initial, cur = state, batch_sizes[-1]
        state = _narrow_state(initial, 0, cur)
        for t in range(len(batch_sizes) - 1, -1, -1):
            b = batch_sizes[t]
            if b > cur:
                state = _cat_states([state, _narrow_state(initial, cur, b)])
                cur = b
            outs[t], state = _step(mode, steps[t], state, w_hh, b_hh, w_hr)
    return cat(outs), state


def _run_layers(mode, input, batch_sizes, hx, weights, has_bias, num_layers, dropout, training, bidirectional):
    """torch's _VF.lstm / gru / rnn_tanh / rnn_relu on a time-first (T, B, I) input or packed
    data (N, I): (output, h_n) or (output, (h_n, c_n)); hx is h0 or (h0, c0)."""
    dirs = 2 if bidirectional else 1
    per = len(weights) // (num_layers * dirs)
    x = input
    h_n, c_n = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            w = weights[(layer * dirs + d) * per:(layer * dirs + d + 1) * per]
            w_ih, w_hh = w[0], w[1]
            b_ih, b_hh = (w[2], w[3]) if has_bias else (None, None)
            w_hr = w[-1] if mode == "LSTM" and per in (3, 5) else None
            k = layer * dirs + d
            state = (hx[0][k], hx[1][k]) if mode == "LSTM" else hx[k]
            if mode != "GRU" and b_ih is not None:      # both biases in the one projection (GRU's
                b_ih, b_hh = b_ih + b_hh, None          # b_hn is inside the reset gate's product)
            gx = F.linear(x, w_ih, b_ih)          # every time step's input projection at once
            out, state = _run_direction(mode, gx, batch_sizes, state, w_hh, b_hh, w_hr, d == 1)
            outs.append(out)
            if mode == "LSTM":
                h_n.append(state[0])
                c_n.append(state[1])
            else:
                h_n.append(state)
        x = outs[0] if dirs == 1 else cat(outs, -1)
        if dropout > 0 and training and layer < num_layers - 1:
            x = F.dropout(x, dropout, True)
    if mode == "LSTM":
        return x, (stack(h_n), stack(c_n))
    return x, stack(h_n)


# ------------------------------------------------------------------ modules
class RNNBase(Module):
    """Base class of RNN, LSTM and GRU: the parameters (torch's names, order and init), the
    input and hidden checks; flatten_parameters is a no-op (there is no cuDNN weight buffer)."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                real_hidden_size = proj_size if proj_size > 0 else hidden_size
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                params = [Parameter(empty((gate_size, layer_input_size), **factory_kwargs)),
                          Parameter(empty((gate_size, real_hidden_size), **factory_kwargs))]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    params += [Parameter(empty(gate_size, **factory_kwargs)),
                               Parameter(empty(gate_size, **factory_kwargs))]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    params.append(Parameter(empty((proj_size, hidden_size), **factory_kwargs)))
                    names.append("weight_hr_l{}{}")
                suffix = "_reverse" if direction == 1 else ""
                names = [n.format(layer, suffix) for n in names]
                for name, param in zip(names, params):
                    setattr(self, name, param)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n) if hasattr(self, n) else None for n in self._flat_weights_names]

    def flatten_parameters(self):
        """A no-op: tritensor keeps no cuDNN-style flat weight buffer."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def all_weights(self):
        return [[getattr(self, w) for w in weights] for weights in self._all_weights]

    def check_input(self, input, batch_sizes):
        w0 = self._flat_weights[0]
        if input.dtype is not w0.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({w0.dtype}). Convert "
                             f"input: input.to({w0.dtype}), or convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch,
                self.proj_size if self.proj_size > 0 else self.hidden_size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(tuple(expected_hidden_size), list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # -------------------------------------------------------------- the shared forward
    def _zeros_state(self, input, batch, size):
        return zeros(self.num_layers * (2 if self.bidirectional else 1), batch, size, dtype=input.dtype,
                     device=input.device)

    def _unpack(self, input):
        """(input, batch_sizes host list or None, sorted, unsorted, is_batched, batch_dim)."""
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            return data, [int(b) for b in batch_sizes.tolist()], sorted_indices, unsorted_indices, True, None
        if input.dim() not in (2, 3):
            name = "RNN" if self.mode.startswith("RNN") else self.mode
            tail = " tensor instead" if name == "RNN" else " instead"
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{tail}")
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        return input, None, None, None, is_batched, batch_dim

    def _run(self, input, batch_sizes, hx):
        if batch_sizes is None:
            x = input.transpose(0, 1) if self.batch_first else input
            if x.shape[0] == 0:
                raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        else:
            x = input
        output, hidden = _run_layers(self.mode, x, batch_sizes, hx, self._flat_weights, self.bias, self.num_layers,
                                     self.dropout, self.training, self.bidirectional)
        if batch_sizes is None and self.batch_first:
            output = output.transpose(0, 1)
        return output, hidden

    def _single_state_forward(self, input, hx):
        """RNN and GRU: one hidden state tensor."""
        orig_input = input
        input, batch_sizes, sorted_indices, unsorted_indices, is_batched, batch_dim = self._unpack(input)
        if batch_sizes is None and hx is not None:
            if not is_batched:
                if hx.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
                hx = hx.unsqueeze(1)
            elif hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
        if hx is None:
            batch = batch_sizes[0] if batch_sizes is not None else input.size(0 if self.batch_first else 1)
            hx = self._zeros_state(input, batch, self.hidden_size)
        else:
            hx = self.permute_hidden(hx, sorted_indices)
        self.check_forward_args(input, hx, batch_sizes)
        output, hidden = self._run(input, batch_sizes, hx)
        if isinstance(orig_input, PackedSequence):
            return (PackedSequence(output, orig_input.batch_sizes, sorted_indices, unsorted_indices),
                    self.permute_hidden(hidden, unsorted_indices))
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = hidden.squeeze(1)
        return output, self.permute_hidden(hidden, unsorted_indices)


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return self._single_state_forward(input, hx)


class GRU(RNNBase):
    """Gated recurrent unit: r, z = sigmoid(...), n = tanh(W_in x + b_in + r (W_hn h + b_hn)),
    h' = (1 - z) n + z h."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._single_state_forward(input, hx)


class LSTM(RNNBase):
    """Long short-term memory; proj_size > 0 projects each h_t by weight_hr (h_n then has
    proj_size features, c_n hidden_size)."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        return (self.num_layers * (2 if self.bidirectional else 1), mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation)

    def forward(self, input, hx=None):
        orig_input = input
        input, batch_sizes, sorted_indices, unsorted_indices, is_batched, batch_dim = self._unpack(input)
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is None:
            batch = batch_sizes[0] if batch_sizes is not None else input.size(0 if self.batch_first else 1)
            hx = (self._zeros_state(input, batch, real_hidden_size), self._zeros_state(input, batch, self.hidden_size))
            self.check_forward_args(input, hx, batch_sizes)
        elif batch_sizes is not None:
            hx = self.permute_hidden(hx, sorted_indices)
            self.check_forward_args(input, hx, batch_sizes)
        else:
            if is_batched:
                if hx[0].dim() != 3 or hx[1].dim() != 3:
                    raise RuntimeError("For batched 3-D input, hx and cx should also be 3-D but got "
                                       f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            else:
                if hx[0].dim() != 2 or hx[1].dim() != 2:
                    raise RuntimeError("For unbatched 2-D input, hx and cx should also be 2-D but got "
                                       f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
            self.check_forward_args(input, hx, batch_sizes)
        output, hidden = self._run(input, batch_sizes, hx)
        if isinstance(orig_input, PackedSequence):
            return (PackedSequence(output, orig_input.batch_sizes, sorted_indices, unsorted_indices),
                    self.permute_hidden(hidden, unsorted_indices))
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = (hidden[0].squeeze(1), hidden[1].squeeze(1))
        return output, self.permute_hidden(hidden, unsorted_indices)


# ------------------------------------------------------------------ cells
def _check_cell(input, hx, input_size, hidden_size, name="hidden0"):
    """torch's check_rnn_cell_forward_input / _hidden texts."""
    if input.size(1) != input_size:
        raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {input_size}")
    if input.size(0) != hx.size(0):
        raise RuntimeError(f"Input batch size {input.size(0)} doesn't match {name} batch size {hx.size(0)}")
    if hx.size(1) != hidden_size:
        raise RuntimeError(f"{name} has inconsistent hidden_size: got {hx.size(1)}, expected {hidden_size}")


class RNNCellBase(Module):
    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), **factory_kwargs))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), **factory_kwargs))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, **factory_kwargs))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, **factory_kwargs))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, kind, input, hx, n_states):
        if input.dim() not in (1, 2):
            raise ValueError(f"{kind}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            z = zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
            hx = (z, z) if n_states == 2 else z
        elif n_states == 2:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0)) if not is_batched else hx
        else:
            hx = hx.unsqueeze(0) if not is_batched else hx
        return input, hx, is_batched


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if hx is not None and hx.dim() not in (1, 2):
            if input.dim() in (1, 2):
                raise ValueError(f"RNNCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        input, hx, is_batched = self._prepare("RNNCell", input, hx, 1)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        _check_cell(input, hx, self.input_size, self.hidden_size)
        ret = _rnn.fused_rnn_cell(F.linear(input, self.weight_ih, self.bias_ih),
                                  F.linear(hx, self.weight_hh, self.bias_hh), self.nonlinearity)
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: (h', c') from x and (h, c)."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if input.dim() in (1, 2) and hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got {value.dim()}D instead")
        input, hx, is_batched = self._prepare("LSTMCell", input, hx, 2)
        _check_cell(input, hx[0], self.input_size, self.hidden_size, "hidden0")
        _check_cell(input, hx[1], self.input_size, self.hidden_size, "hidden1")
        hy, cy, _ = _rnn.fused_lstm_cell(F.linear(input, self.weight_ih, self.bias_ih),
                                         F.linear(hx[0], self.weight_hh, self.bias_hh), hx[1])
        return (hy, cy) if is_batched else (hy.squeeze(0), cy.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: h' from x and h."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if hx is not None and hx.dim() not in (1, 2) and input.dim() in (1, 2):
            raise ValueError(f"GRUCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        input, hx, is_batched = self._prepare("GRUCell", input, hx, 1)
        _check_cell(input, hx, self.input_size, self.hidden_size)
        hy = _rnn.fused_gru_cell(F.linear(input, self.weight_ih, self.bias_ih),
                                 F.linear(hx, self.weight_hh, self.bias_hh), hx)[0]
        return hy if is_batched else hy.squeeze(0)

