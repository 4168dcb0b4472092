"""Records tests/data/embedding_bag_fixtures.npz with torch (run once: /work/torchenv/bin/python
tests/data/make_embedding_bag_fixtures.py): for each case of embedding_bag_cases.CASES the
weight, indices, offsets and per-sample weights, torch's output and the gradients of a fixed
weighted sum of it with respect to the weight and the per-sample weights (float64)."""
import pathlib
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from embedding_bag_cases import CASES  # noqa: E402


def main():
    rng = np.random.default_rng(7)
    out = {}
    for name, case in CASES.items():
        w = torch.tensor(rng.standard_normal((case["num"], case["dim"])), requires_grad=True)
        idx = torch.tensor(case["input"])
        offsets = torch.tensor(case["offsets"]) if case.get("offsets") is not None else None
        psw = None
        if case.get("psw"):
            psw = torch.tensor(rng.standard_normal(tuple(idx.shape)), requires_grad=True)
        y = F.embedding_bag(idx, w, offsets, per_sample_weights=psw, **case["kwargs"])
        gw = torch.tensor(rng.standard_normal(tuple(y.shape)))
        grads = torch.autograd.grad((y * gw).sum(), [w] + ([psw] if psw is not None else []))
        out[f"{name}/weight"] = w.detach().numpy()
        out[f"{name}/out"] = y.detach().numpy()
        out[f"{name}/w_out"] = gw.numpy()
        out[f"{name}/grad_weight"] = grads[0].numpy()
        if psw is not None:
            out[f"{name}/psw"] = psw.detach().numpy()
            out[f"{name}/grad_psw"] = grads[1].numpy()
    path = pathlib.Path(__file__).with_name("embedding_bag_fixtures.npz")
    np.savez_compressed(path, **out)
    print(path, path.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
