"""Records tests/data/rnn_fixtures.npz with torch (run once: /work/torchenv/bin/python
tests/data/make_rnn_fixtures.py): for each case the module's weights (by torch's state_dict
names), the inputs, the outputs and the gradients of a fixed weighted sum of the outputs with
respect to the inputs and every parameter, in float64. tests/test_rnn.py rebuilds each module
from the same CASES table, loads the weights and compares."""
import pathlib
import sys

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from rnn_cases import CASES, CELLS  # noqa: E402  (this directory: python tests/data/make_rnn_fixtures.py)


def _weights(shape, rng):
    return torch.tensor(rng.standard_normal(shape), dtype=torch.float64)


def record(out, rng):
    for name, (cls, kwargs, shape, with_h, lengths) in CASES.items():
        torch.manual_seed(0)
        m = getattr(nn, cls)(**kwargs).double()
        x = torch.tensor(rng.standard_normal(shape), dtype=torch.float64, requires_grad=True)
        dirs = 2 if kwargs.get("bidirectional") else 1
        L = kwargs.get("num_layers", 1) * dirs
        H = kwargs["hidden_size"]
        Hr = kwargs.get("proj_size", 0) or H
        batched = len(shape) == 3
        B = (shape[0] if kwargs.get("batch_first") else shape[1]) if batched else None
        hshape = lambda h: (L, B, h) if batched else (L, h)  # noqa: E731
        hx = None
        inputs = {"x": x}
        if with_h:
            h0 = torch.tensor(rng.standard_normal(hshape(Hr)), requires_grad=True)
            inputs["h0"] = h0
            if cls == "LSTM":
                c0 = torch.tensor(rng.standard_normal(hshape(H)), requires_grad=True)
                inputs["c0"] = c0
                hx = (h0, c0)
            else:
                hx = h0
        feed = x
        if lengths is not None:
            feed = pack_padded_sequence(x, torch.tensor(lengths), batch_first=kwargs.get("batch_first", False),
                                        enforce_sorted=False)
        o, hidden = m(feed, hx)
        if lengths is not None:
            out[f"{name}/packed_data"] = o.data.detach().numpy()
            o, _ = pad_packed_sequence(o, batch_first=kwargs.get("batch_first", False))
        states = list(hidden) if cls == "LSTM" else [hidden]
        outs = {"out": o, "h_n": states[0]}
        if cls == "LSTM":
            outs["c_n"] = states[1]
        loss = 0
        for k, v in outs.items():
            w = _weights(tuple(v.shape), rng)
            out[f"{name}/w_{k}"] = w.numpy()
            out[f"{name}/{k}"] = v.detach().numpy()
            loss = loss + (v * w).sum()
        params = dict(m.named_parameters())
        grads = torch.autograd.grad(loss, list(inputs.values()) + list(params.values()))
        for (k, v), g in zip(list(inputs.items()) + list(params.items()), grads):
            out[f"{name}/{k}"] = v.detach().numpy()
            out[f"{name}/grad_{k}"] = g.numpy()
    for name, (cls, kwargs, shape) in CELLS.items():
        torch.manual_seed(0)
        m = getattr(nn, cls)(**kwargs).double()
        x = torch.tensor(rng.standard_normal(shape), requires_grad=True)
        hshape = shape[:-1] + (kwargs["hidden_size"],)
        h = torch.tensor(rng.standard_normal(hshape), requires_grad=True)
        inputs = {"x": x, "h0": h}
        if cls == "LSTMCell":
            c = torch.tensor(rng.standard_normal(hshape), requires_grad=True)
            inputs["c0"] = c
            hy, cy = m(x, (h, c))
            outs = {"h_n": hy, "c_n": cy}
        else:
            outs = {"h_n": m(x, h)}
        loss = 0
        for k, v in outs.items():
            w = _weights(tuple(v.shape), rng)
            out[f"{name}/w_{k}"] = w.numpy()
            out[f"{name}/{k}"] = v.detach().numpy()
            loss = loss + (v * w).sum()
        params = dict(m.named_parameters())
        grads = torch.autograd.grad(loss, list(inputs.values()) + list(params.values()))
        for (k, v), g in zip(list(inputs.items()) + list(params.items()), grads):
            out[f"{name}/{k}"] = v.detach().numpy()
            out[f"{name}/grad_{k}"] = g.numpy()


if __name__ == "__main__":
    rng = np.random.default_rng(1234)
    out = {}
    record(out, rng)
    path = pathlib.Path(__file__).with_name("rnn_fixtures.npz")
    np.savez_compressed(path, **out)
    print(path, path.stat().st_size, "bytes,", len(out), "arrays")
