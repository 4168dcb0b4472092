"""nn.RNN / LSTM / GRU and the cells against torch: outputs and gradients recorded once with
torch from the same weights (tests/data/make_rnn_fixtures.py -> rnn_fixtures.npz, cases in
tests/data/rnn_cases.py), on cpu and on the emulated cuda device; packed sequences with unsorted
lengths; torch's parameter names, init, checks and error texts; launches per time step."""
import math
import os
import sys
import warnings

import numpy as np
import pytest

import tritensor as tt
from tritensor import nn
from tritensor.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

DATA = os.path.join(os.path.dirname(__file__), "data")
sys.path.insert(0, DATA)
from rnn_cases import CASES, CELLS  # noqa: E402

FIX = np.load(os.path.join(DATA, "rnn_fixtures.npz"))


def _t(a, device, grad=False):
    return tt.tensor(np.ascontiguousarray(a), dtype=tt.float64, device=device, requires_grad=grad)


def _np(t):
    return t.detach().cpu().numpy()


def _build(cls, kwargs, name, device):
    m = getattr(nn, cls)(**kwargs).double().to(device)
    state = {k: _t(FIX[f"{name}/{k}"], device) for k, _ in m.named_parameters()}
    m.load_state_dict(state)
    return m


def _check_case(name, device):
    cls, kwargs, shape, with_h, lengths = CASES[name]
    m = _build(cls, kwargs, name, device)
    x = _t(FIX[f"{name}/x"], device, True)
    inputs = {"x": x}
    hx = None
    if with_h:
        inputs["h0"] = _t(FIX[f"{name}/h0"], device, True)
        if cls == "LSTM":
            inputs["c0"] = _t(FIX[f"{name}/c0"], device, True)
            hx = (inputs["h0"], inputs["c0"])
        else:
            hx = inputs["h0"]
    feed = x
    bf = kwargs.get("batch_first", False)
    if lengths is not None:
        feed = pack_padded_sequence(x, tt.tensor(lengths), batch_first=bf, enforce_sorted=False)
    o, hidden = m(feed, hx)
    if lengths is not None:
        assert isinstance(o, nn.utils.rnn.PackedSequence)
        np.testing.assert_allclose(_np(o.data), FIX[f"{name}/packed_data"], rtol=1e-10, atol=1e-12)
        o, _ = pad_packed_sequence(o, batch_first=bf)
    outs = {"out": o, "h_n": hidden[0] if cls == "LSTM" else hidden}
    if cls == "LSTM":
        outs["c_n"] = hidden[1]
    loss = 0
    for k, v in outs.items():
        np.testing.assert_allclose(_np(v), FIX[f"{name}/{k}"], rtol=1e-10, atol=1e-12, err_msg=k)
        loss = loss + (v * _t(FIX[f"{name}/w_{k}"], device)).sum()
    params = dict(m.named_parameters())
    grads = tt.autograd.grad(loss, list(inputs.values()) + list(params.values()))
    for k, g in zip(list(inputs) + list(params), grads):
        np.testing.assert_allclose(_np(g), FIX[f"{name}/grad_{k}"], rtol=1e-9, atol=1e-11, err_msg=k)


@pytest.mark.parametrize("name", list(CASES))
def test_layers_match_torch_cpu(name):
    _check_case(name, "cpu")


@pytest.mark.parametrize("name", ["lstm_proj_bi_bf", "gru_packed"])
def test_layers_match_torch_emulated_cuda(name):
    _check_case(name, "cuda")


@pytest.mark.parametrize("name", list(CELLS))
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_cells_match_torch(name, device):
    cls, kwargs, shape = CELLS[name]
    m = _build(cls, kwargs, name, device)
    inputs = {"x": _t(FIX[f"{name}/x"], device, True), "h0": _t(FIX[f"{name}/h0"], device, True)}
    if cls == "LSTMCell":
        inputs["c0"] = _t(FIX[f"{name}/c0"], device, True)
        hy, cy = m(inputs["x"], (inputs["h0"], inputs["c0"]))
        outs = {"h_n": hy, "c_n": cy}
        assert hy.grad_fn.name() == "ThnnFusedLstmCellBackward0"
    else:
        outs = {"h_n": m(inputs["x"], inputs["h0"])}
    loss = 0
    for k, v in outs.items():
        np.testing.assert_allclose(_np(v), FIX[f"{name}/{k}"], rtol=1e-10, atol=1e-12)
        loss = loss + (v * _t(FIX[f"{name}/w_{k}"], device)).sum()
    params = dict(m.named_parameters())
    grads = tt.autograd.grad(loss, list(inputs.values()) + list(params.values()))
    for k, g in zip(list(inputs) + list(params), grads):
        np.testing.assert_allclose(_np(g), FIX[f"{name}/grad_{k}"], rtol=1e-9, atol=1e-11, err_msg=k)


# ------------------------------------------------------------------ parameters and init
def test_parameter_names_order_and_shapes():
    m = nn.LSTM(4, 5, 2, bidirectional=True, proj_size=2)
    assert m._flat_weights_names == [
        'weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0', 'weight_hr_l0', 'weight_ih_l0_reverse',
        'weight_hh_l0_reverse', 'bias_ih_l0_reverse', 'bias_hh_l0_reverse', 'weight_hr_l0_reverse', 'weight_ih_l1',
        'weight_hh_l1', 'bias_ih_l1', 'bias_hh_l1', 'weight_hr_l1', 'weight_ih_l1_reverse', 'weight_hh_l1_reverse',
        'bias_ih_l1_reverse', 'bias_hh_l1_reverse', 'weight_hr_l1_reverse']
    assert [n for n, _ in m.named_parameters()] == m._flat_weights_names
    shapes = {n: tuple(p.shape) for n, p in m.named_parameters()}
    assert shapes["weight_ih_l0"] == (20, 4) and shapes["weight_hh_l0"] == (20, 2)
    assert shapes["weight_ih_l1_reverse"] == (20, 4) and shapes["weight_hr_l1"] == (2, 5)
    assert [len(w) for w in m.all_weights] == [5] * 4 and m.all_weights[1][0] is m.weight_ih_l0_reverse
    g = nn.GRU(3, 6, bias=False)
    assert [(n, tuple(p.shape)) for n, p in g.named_parameters()] == [("weight_ih_l0", (18, 3)),
                                                                      ("weight_hh_l0", (18, 6))]
    c = nn.RNNCell(3, 4, bias=False)
    assert c.bias_ih is None and [n for n, _ in c.named_parameters()] == ["weight_ih", "weight_hh"]
    assert tuple(nn.LSTMCell(3, 4).weight_hh.shape) == (16, 4)
    assert m.flatten_parameters() is None


def test_init_is_uniform_in_one_over_sqrt_hidden():
    tt.manual_seed(0)
    m = nn.GRU(10, 16, 2)
    bound = 1 / math.sqrt(16)
    vals = np.concatenate([_np(p).ravel() for p in m.parameters()])
    assert vals.min() >= -bound and vals.max() <= bound
    assert vals.min() < -0.9 * bound and vals.max() > 0.9 * bound      # spread over the interval
    assert abs(vals.mean()) < 0.02 and abs(vals.std() - bound / math.sqrt(3)) < 0.01


def test_reprs():
    assert repr(nn.LSTM(4, 5, 2, proj_size=3, bidirectional=True, batch_first=True, dropout=0.2, bias=False)) == \
        "LSTM(4, 5, proj_size=3, num_layers=2, bias=False, batch_first=True, dropout=0.2, bidirectional=True)"
    assert repr(nn.RNNCell(4, 5, nonlinearity="relu", bias=False)) == "RNNCell(4, 5, bias=False, nonlinearity=relu)"
    assert repr(nn.GRUCell(2, 3)) == "GRUCell(2, 3)"


# ------------------------------------------------------------------ errors (torch's texts)
def _raises(exc, text, fn):
    with pytest.raises(exc) as e:
        fn()
    assert str(e.value) == text, str(e.value)


def test_constructor_errors():
    _raises(ValueError, "Unknown nonlinearity 'sigmoid'. Select from 'tanh' or 'relu'.",
            lambda: nn.RNN(4, 5, nonlinearity="sigmoid"))
    _raises(ValueError, "proj_size argument is only supported for LSTM, not RNN or GRU", lambda: nn.GRU(4, 5, proj_size=2))
    _raises(ValueError, "proj_size has to be smaller than hidden_size", lambda: nn.LSTM(4, 5, proj_size=5))
    _raises(ValueError, "proj_size should be a positive integer or zero to disable projections",
            lambda: nn.LSTM(4, 5, proj_size=-1))
    _raises(ValueError, "dropout should be a number in range [0, 1] representing the probability of an element being "
            "zeroed", lambda: nn.LSTM(4, 5, dropout=1.5))
    _raises(ValueError, "hidden_size must be greater than zero", lambda: nn.LSTM(4, 0))
    _raises(ValueError, "num_layers must be greater than zero", lambda: nn.LSTM(4, 5, num_layers=0))
    _raises(TypeError, "input_size should be of type int, got: float", lambda: nn.LSTM(4.0, 5))
    _raises(TypeError, "bias should be of type bool, got: int", lambda: nn.LSTM(4, 5, bias=1))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        nn.LSTM(4, 5, dropout=0.5)
    assert str(w[0].message) == ("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                                 "expects num_layers greater than 1, but got dropout=0.5 and num_layers=1")


def test_forward_errors():
    lstm = nn.LSTM(4, 5, 2)
    _raises(RuntimeError, "input.size(-1) must be equal to input_size. Expected 4, got 3",
            lambda: lstm(tt.randn(3, 2, 3)))
    _raises(ValueError, "RNN input dtype (tritensor.float64) does not match weight dtype (tritensor.float32). Convert "
            "input: input.to(tritensor.float32), or convert model: model.to(tritensor.float64)",
            lambda: lstm(tt.randn(3, 2, 4, dtype=tt.float64)))
    _raises(RuntimeError, "Expected hidden[0] size (2, 2, 5), got [2, 3, 5]",
            lambda: lstm(tt.randn(3, 2, 4), (tt.randn(2, 3, 5), tt.randn(2, 2, 5))))
    _raises(RuntimeError, "Expected hidden[1] size (2, 2, 5), got [2, 3, 5]",
            lambda: lstm(tt.randn(3, 2, 4), (tt.randn(2, 2, 5), tt.randn(2, 3, 5))))
    _raises(RuntimeError, "For batched 3-D input, hx and cx should also be 3-D but got (3-D, 2-D) tensors",
            lambda: lstm(tt.randn(3, 2, 4), (tt.randn(2, 2, 5), tt.randn(2, 5))))
    _raises(RuntimeError, "For unbatched 2-D input, hx and cx should also be 2-D but got (3-D, 2-D) tensors",
            lambda: lstm(tt.randn(3, 4), (tt.randn(2, 2, 5), tt.randn(2, 5))))
    _raises(ValueError, "LSTM: Expected input to be 2D or 3D, got 4D instead", lambda: lstm(tt.randn(1, 3, 2, 4)))
    _raises(RuntimeError, "input must have 2 dimensions, got 3",
            lambda: nn.GRU(3, 4)(pack_padded_sequence(tt.randn(3, 2, 3, 3), [3, 2])))
    _raises(RuntimeError, "Expected sequence length to be larger than 0 in RNN", lambda: lstm(tt.randn(0, 2, 4)))
    gru = nn.GRU(4, 5)
    _raises(RuntimeError, "For batched 3-D input, hx should also be 3-D but got 2-D tensor",
            lambda: gru(tt.randn(3, 2, 4), tt.randn(2, 5)))
    _raises(RuntimeError, "Expected hidden size (1, 2, 5), got [1, 3, 5]",
            lambda: gru(tt.randn(3, 2, 4), tt.randn(1, 3, 5)))
    _raises(RuntimeError, "For unbatched 2-D input, hx should also be 2-D but got 3-D tensor",
            lambda: gru(tt.randn(3, 4), tt.randn(1, 2, 5)))
    _raises(ValueError, "RNN: Expected input to be 2D or 3D, got 1D tensor instead", lambda: nn.RNN(4, 5)(tt.randn(4)))


def test_cell_errors():
    c = nn.LSTMCell(4, 5)
    _raises(RuntimeError, "input has inconsistent input_size: got 3 expected 4", lambda: c(tt.randn(3, 3)))
    _raises(RuntimeError, "Input batch size 3 doesn't match hidden0 batch size 2",
            lambda: c(tt.randn(3, 4), (tt.randn(2, 5), tt.randn(3, 5))))
    _raises(RuntimeError, "hidden0 has inconsistent hidden_size: got 4, expected 5",
            lambda: c(tt.randn(3, 4), (tt.randn(3, 4), tt.randn(3, 5))))
    _raises(RuntimeError, "hidden1 has inconsistent hidden_size: got 4, expected 5",
            lambda: c(tt.randn(3, 4), (tt.randn(3, 5), tt.randn(3, 4))))
    g = nn.GRUCell(4, 5)
    _raises(RuntimeError, "Input batch size 3 doesn't match hidden0 batch size 2",
            lambda: g(tt.randn(3, 4), tt.randn(2, 5)))
    _raises(ValueError, "GRUCell: Expected input to be 1D or 2D, got 3D instead", lambda: g(tt.randn(3, 4, 1)))
    r = nn.RNNCell(4, 5)
    r.nonlinearity = "foo"
    _raises(RuntimeError, "Unknown nonlinearity: foo", lambda: r(tt.randn(3, 4)))


# ------------------------------------------------------------------ behaviour
def test_unbatched_and_batch_first_agree_with_time_first():
    tt.manual_seed(1)
    m = nn.LSTM(3, 4, 2, bidirectional=True).double()
    x = tt.randn(5, 2, 3, dtype=tt.float64)
    out, (h, c) = m(x)
    m.batch_first = True
    out_bf, (h_bf, c_bf) = m(x.transpose(0, 1))
    np.testing.assert_allclose(_np(out_bf.transpose(0, 1)), _np(out), rtol=1e-12)
    np.testing.assert_allclose(_np(h_bf), _np(h), rtol=1e-12)
    m.batch_first = False
    out1, (h1, c1) = m(x[:, 1])
    assert tuple(out1.shape) == (5, 8) and tuple(h1.shape) == (4, 4)
    np.testing.assert_allclose(_np(out1), _np(out[:, 1]), rtol=1e-12)
    np.testing.assert_allclose(_np(c1), _np(c[:, 1]), rtol=1e-12)
    assert tuple(m(tt.randn(3, 0, 3, dtype=tt.float64))[0].shape) == (3, 0, 8)   # an empty batch


def test_dropout_between_layers_only_in_training():
    tt.manual_seed(0)
    m = nn.GRU(3, 4, 2, dropout=0.5).double()
    x = tt.randn(4, 2, 3, dtype=tt.float64)
    m.eval()
    a, b = m(x)[0], m(x)[0]
    np.testing.assert_array_equal(_np(a), _np(b))
    m.train()
    tt.manual_seed(1)
    c = m(x)[0]
    tt.manual_seed(1)
    d = m(x)[0]
    np.testing.assert_array_equal(_np(c), _np(d))          # reproducible from the seed
    assert not np.allclose(_np(c), _np(a))                   # and not the eval output
    m.dropout = 0.0
    np.testing.assert_allclose(_np(m(x)[0]), _np(a), rtol=1e-12)


def test_packed_matches_separate_sequences():
    """Each sequence of a packed batch gives what it gives alone (h_n at its own last step)."""
    tt.manual_seed(2)
    m = nn.LSTM(3, 4, bidirectional=True).double()
    seqs = [tt.randn(n, 3, dtype=tt.float64) for n in (2, 5, 3)]
    packed = nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)
    out, (h, c) = m(packed)
    padded, lengths = pad_packed_sequence(out)
    assert lengths.tolist() == [2, 5, 3]
    for b, s in enumerate(seqs):
        o1, (h1, c1) = m(s)
        np.testing.assert_allclose(_np(padded[:len(s), b]), _np(o1), rtol=1e-11, atol=1e-13)
        np.testing.assert_allclose(_np(h[:, b]), _np(h1), rtol=1e-11, atol=1e-13)
        np.testing.assert_allclose(_np(c[:, b]), _np(c1), rtol=1e-11, atol=1e-13)
        assert not padded[len(s):, b].abs().sum().item()


def test_double_backward_through_a_layer():
    tt.manual_seed(3)
    for m in (nn.LSTM(2, 3).double(), nn.GRU(2, 3).double(), nn.RNN(2, 3, nonlinearity="relu").double()):
        x = tt.randn(3, 2, 2, dtype=tt.float64, requires_grad=True)
        assert tt.autograd.gradgradcheck(lambda x: m(x)[0], (x,))


def test_grad_fn_names():
    x = tt.randn(2, 1, 3)
    assert nn.LSTM(3, 4)(x)[0].grad_fn is not None
    assert nn.GRUCell(3, 4)(x[0]).grad_fn.name() == "ThnnFusedGruCellBackward0"
    assert nn.RNNCell(3, 4)(x[0]).grad_fn.name() == "RnnTanhCellBackward0"
    assert nn.RNNCell(3, 4, nonlinearity="relu")(x[0]).grad_fn.name() == "RnnReluCellBackward0"


def test_launches_per_time_step_on_cuda(monkeypatch):
    """A step of a layer: one matmul (with its bias) and ONE fused kernel forward; the input
    projection of all steps is one matmul: the launch count grows by a constant per step."""
    from tritensor.backends import triton as tb
    launches = []
    real = tb._run

    def counting(kernel, grid, *args, **meta):
        launches.append(getattr(kernel, "__name__", str(kernel)))
        return real(kernel, grid, *args, **meta)
    monkeypatch.setattr(tb, "_run", counting)
    tt.manual_seed(0)
    m = nn.LSTM(3, 4).to("cuda")

    def count(T):
        x = tt.randn(T, 2, 3, device="cuda", requires_grad=True)
        n0 = len(launches)
        out, (h, c) = m(x)
        n1 = len(launches)
        out.sum().backward()
        return n1 - n0, len(launches) - n1
    count(2)                                    # (first calls: plans and caches)
    # On a GPU the matmul autotuner times every candidate configuration of a shape class it has
    # not seen, with launches of its own: the input projection of 4 steps (8 rows) is a new class
    # after 2 steps (4 rows), and on the H200 its 3 candidates x 12 timed launches made count(4)
    # 36 launches longer. These launches are not the layer's: time nothing here (as
    # cudnn.benchmark=False does; the emulated device never times).
    benchmark = tt.backends.cudnn.benchmark
    tt.backends.cudnn.benchmark = False
    try:
        f2, b2 = count(2)
        f4, b4 = count(4)
    finally:
        tt.backends.cudnn.benchmark = benchmark
    assert launches.count("lstm_cell_kernel") and launches.count("lstm_cell_bwd_kernel")
    assert (f4 - f2) / 2 <= 3, (f2, f4)        # per step: the hidden matmul, the fused cell, its copy into the output
    assert (b4 - b2) / 2 <= 6, (b2, b4)        # per step: the fused backward, two matmuls, the h gradient sum


def test_fused_cell_ops_check_their_operands():
    """Wrong sizes and dtypes are refused before any kernel reads an operand."""
    from tritensor.ops import rnn as R
    cx = tt.randn(3, 2)
    hy, cy, ws = R.fused_lstm_cell(tt.randn(3, 8), tt.randn(3, 8), cx)
    with pytest.raises(RuntimeError, match=r"Expected input_gates to have size \[3, 8\], but got \[3, 7\]"):
        R.fused_lstm_cell(tt.randn(3, 7), tt.randn(3, 8), cx)
    with pytest.raises(RuntimeError, match=r"Expected hidden_gates to have size \[3, 6\]"):
        R.fused_gru_cell(tt.randn(3, 6), tt.randn(2, 6), cx)
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        R.fused_lstm_cell(tt.zeros(3, 8, dtype=tt.int64), tt.randn(3, 8), cx)
    with pytest.raises(RuntimeError, match="must have the same size and dtype"):
        R.fused_rnn_cell(tt.randn(3, 2), tt.randn(2, 2))
    with pytest.raises(RuntimeError, match="Unknown nonlinearity: gelu"):
        R.fused_rnn_cell(tt.randn(3, 2), tt.randn(3, 2), "gelu")
    with pytest.raises(RuntimeError, match=r"expected an operand of size \[3, 2\], got \[3, 3\]"):
        R.fused_lstm_cell_backward(tt.randn(3, 3), None, cx, cy, ws)
    with pytest.raises(RuntimeError, match=r"expected an operand of size \[3, 8\], got \[3, 5\]"):
        R.fused_gru_cell_backward(tt.randn(3, 2), cx, ws[:, :5])
    assert tt.ops.aten._thnn_fused_lstm_cell(tt.randn(3, 8), tt.randn(3, 8), cx)[1].shape == (3, 2)
