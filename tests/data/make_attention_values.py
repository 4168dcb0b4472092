"""Writes tests/data/attention_values.npz: torch 2.13's scaled_dot_product_attention on the cases
of attention_cases.py (float64, cpu, torch's default backend choice), the gradients of
sum(out * g) for query, key, value and a float mask (run once with torch; tritensor's tests read
the file and never import torch).

    /work/torchenv/bin/python tests/data/make_attention_values.py
"""
import pathlib
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))
import attention_cases  # noqa: E402


def main():
    out = {}
    for name in attention_cases.CASES:
        q, k, v, m, g, kwargs = attention_cases.arrays(name)
        tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
        tm = None if m is None else torch.tensor(m, requires_grad=m.dtype != np.bool_)
        o = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm, **kwargs)
        inputs = [tq, tk, tv] + ([tm] if tm is not None and tm.requires_grad else [])
        grads = torch.autograd.grad(o, inputs, torch.tensor(g), allow_unused=True)
        out[f"{name}/out"] = o.detach().numpy()
        for key, t, gr in zip(("dq", "dk", "dv", "dmask"), inputs, grads):
            out[f"{name}/{key}"] = np.zeros(t.shape) if gr is None else gr.numpy()
    np.savez_compressed(HERE / "attention_values.npz", **out)
    print(f"{len(out)} arrays, torch {torch.__version__}")


if __name__ == "__main__":
    main()
