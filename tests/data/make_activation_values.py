"""Records torch 2.13's activations at their kinks and special values (tests/test_activations.py).

Run with the torch oracle: /work/torchenv/bin/python tests/data/make_activation_values.py
Writes tests/data/activation_values.json: per case (the F function, its keyword arguments), per
dtype, the output and the gradient of its sum (NaN, inf and -0.0 spelled out so JSON keeps them).
"""
import json
import math
import pathlib

import torch

F = torch.nn.functional
POINTS = [-20.0, -3.0, -2.5, -1.5, -0.5, -0.0, 0.0, 0.5, 1.5, 2.5, 3.0, 20.0, 30.0,
          float("nan"), float("inf"), -float("inf")]
# scalar paths (one element at a time) so that torch's vectorised tails do not differ in NaN's handling
CASES = [
    ("elu", {}), ("elu", {"alpha": 0.7}), ("selu", {}), ("celu", {"alpha": 2.0}),
    ("hardshrink", {}), ("hardshrink", {"lambd": 1.5}), ("softshrink", {}), ("softshrink", {"lambd": 1.5}),
    ("hardsigmoid", {}), ("hardswish", {}), ("logsigmoid", {}), ("mish", {}),
    ("softplus", {}), ("softplus", {"beta": 2.0, "threshold": 3.0}), ("softplus", {"beta": 0.5, "threshold": 1.0}),
    ("threshold", {"threshold": 0.5, "value": -7.0}), ("leaky_relu", {"negative_slope": 0.2}),
    ("rrelu", {"lower": 0.1, "upper": 0.3}), ("softsign", {}), ("tanhshrink", {}),
]


def spell(v):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == 0 and math.copysign(1, v) < 0:
        return "-0.0"
    return v


def main():
    out = {"points": [spell(p) for p in POINTS], "cases": []}
    for name, kwargs in CASES:
        entry = {"name": name, "kwargs": kwargs}
        for dtype in (torch.float32, torch.float64):
            ys, gs = [], []
            for p in POINTS:
                x = torch.tensor([p], dtype=dtype, requires_grad=True)
                y = getattr(F, name)(x, **kwargs)
                (g,) = torch.autograd.grad(y.sum(), x)
                ys.append(spell(y.item()))
                gs.append(spell(g.item()))
            entry[str(dtype).split(".")[1]] = {"value": ys, "grad": gs}
        out["cases"].append(entry)
    path = pathlib.Path(__file__).with_name("activation_values.json")
    path.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
