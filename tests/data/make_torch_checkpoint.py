"""Writes tests/data/torch_checkpoint.pt with PyTorch and the values it holds to
tests/data/torch_checkpoint_expected.npz, for tests/test_serialization.py (which loads the .pt
without torch). Run once with a Python that has torch:

    /opt/torchenv/bin/python tests/data/make_torch_checkpoint.py
"""
import collections
import os

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    torch.manual_seed(0)
    linear = torch.nn.Linear(3, 2)
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    obj = {
        "linear": linear.state_dict(),                          # OrderedDict of weight, bias
        "param": torch.nn.Parameter(torch.tensor([1.5, -2.0])),
        "half": torch.tensor([0.5, -1.25, 65504.0], dtype=torch.float16),
        "bf16": torch.tensor([1.0, -3.5, 1e30], dtype=torch.bfloat16),
        "long": torch.tensor([[1, -2], [2 ** 40, 7]], dtype=torch.int64),
        "base": base,
        "col": base[:, 1],                                       # a view sharing base's storage
        "tail": base[1:, 2:],
        "grad": torch.tensor([2.0, 3.0], requires_grad=True),
        "flags": torch.tensor([True, False, True]),
        "nested": {"list": [1, 2.5, "x", None, (True, torch.tensor(7))], "dtype": torch.float16,
                   "size": torch.Size([2, 3])},
        "empty": torch.zeros(0, 3),
        "scalar": torch.tensor(3.25, dtype=torch.float64),
    }
    torch.save(obj, os.path.join(HERE, "torch_checkpoint.pt"))
    expected = {
        "linear.weight": linear.weight.detach().numpy(), "linear.bias": linear.bias.detach().numpy(),
        "half": obj["half"].numpy(), "bf16": obj["bf16"].float().numpy(), "long": obj["long"].numpy(),
        "base": base.numpy(),
    }
    np.savez(os.path.join(HERE, "torch_checkpoint_expected.npz"), **expected)
    assert isinstance(obj["linear"], collections.OrderedDict)


if __name__ == "__main__":
    main()
