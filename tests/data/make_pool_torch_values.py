"""Writes tests/data/pool_torch_values.npz: torch's pooling functions (values, indices, the
gradient of sum(output * g), the output's strides and grad_fn name) for a set of configurations,
its modules' reprs and its error texts (run once with torch; tritensor's tests read the file and
never import torch).

    /work/torchenv/bin/python tests/data/make_pool_torch_values.py
"""
import json
import pathlib

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

rng = np.random.default_rng(20241125)

# name, function, input shape, channels_last, kwargs
CASES = [
    ("max_pool2d_resnet", "max_pool2d", (2, 3, 9, 8), False, {"kernel_size": 3, "stride": 2, "padding": 1,
                                                              "return_indices": True}),
    ("max_pool2d_channels_last", "max_pool2d", (2, 3, 7, 6), True, {"kernel_size": 3, "stride": 2, "padding": 1,
                                                                    "return_indices": True}),
    ("max_pool2d_dilated_ceil", "max_pool2d", (1, 2, 7, 6), False,
     {"kernel_size": (2, 3), "stride": (2, 1), "padding": (1, 1), "dilation": (2, 1), "ceil_mode": True,
      "return_indices": True}),
    ("max_pool2d_unbatched", "max_pool2d", (3, 5, 5), False, {"kernel_size": 2, "return_indices": True}),
    ("max_pool1d_padded", "max_pool1d", (2, 3, 9), False, {"kernel_size": 3, "stride": 2, "padding": 1,
                                                          "return_indices": True}),
    ("max_pool1d_ceil_dilated", "max_pool1d", (2, 8), False, {"kernel_size": 2, "stride": 3, "dilation": 2,
                                                             "ceil_mode": True, "return_indices": True}),
    ("max_pool3d_ceil", "max_pool3d", (1, 2, 5, 4, 5), False, {"kernel_size": 2, "stride": 2, "ceil_mode": True,
                                                              "return_indices": True}),
    ("max_pool3d_channels_last", "max_pool3d", (2, 3, 4, 5, 4), True,
     {"kernel_size": (2, 3, 2), "stride": 1, "padding": (1, 1, 0), "return_indices": True}),
    ("avg_pool2d_include_pad", "avg_pool2d", (2, 3, 7, 6), False, {"kernel_size": 3, "stride": 2, "padding": 1}),
    ("avg_pool2d_exclude_ceil_cl", "avg_pool2d", (2, 3, 7, 6), True,
     {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False, "ceil_mode": True}),
    ("avg_pool2d_divisor", "avg_pool2d", (1, 2, 6, 5), False,
     {"kernel_size": (3, 2), "stride": (1, 2), "padding": (1, 0), "divisor_override": 5}),
    ("avg_pool2d_ceil_include", "avg_pool2d", (1, 2, 5, 5), False, {"kernel_size": 2, "ceil_mode": True}),
    ("avg_pool1d_padded", "avg_pool1d", (2, 3, 9), False, {"kernel_size": 3, "stride": 2, "padding": 1,
                                                          "count_include_pad": False}),
    ("avg_pool3d_ceil_exclude", "avg_pool3d", (1, 2, 5, 4, 5), False,
     {"kernel_size": 2, "stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False}),
    ("avg_pool3d_divisor_cl", "avg_pool3d", (2, 2, 4, 4, 3), True, {"kernel_size": 2, "stride": 1,
                                                                  "divisor_override": 3}),
    ("adaptive_avg_pool2d_odd", "adaptive_avg_pool2d", (2, 3, 7, 6), False, {"output_size": (3, 4)}),
    ("adaptive_avg_pool2d_cl", "adaptive_avg_pool2d", (2, 3, 7, 6), True, {"output_size": (5, 4)}),
    ("adaptive_avg_pool2d_one", "adaptive_avg_pool2d", (2, 3, 7, 6), False, {"output_size": (1, 1)}),
    ("adaptive_avg_pool2d_one_cl", "adaptive_avg_pool2d", (2, 3, 7, 6), True, {"output_size": 1}),
    ("adaptive_avg_pool2d_none", "adaptive_avg_pool2d", (1, 2, 5, 6), False, {"output_size": (None, 4)}),
    ("adaptive_avg_pool1d_up", "adaptive_avg_pool1d", (2, 3, 5), False, {"output_size": 7}),
    ("adaptive_avg_pool3d_mixed", "adaptive_avg_pool3d", (1, 2, 5, 4, 5), False, {"output_size": (2, 3, 2)}),
    ("adaptive_max_pool2d_odd", "adaptive_max_pool2d", (2, 3, 7, 6), False, {"output_size": (3, 4),
                                                                         "return_indices": True}),
    ("adaptive_max_pool2d_cl", "adaptive_max_pool2d", (2, 3, 7, 6), True, {"output_size": (4, 4),
                                                                       "return_indices": True}),
    ("adaptive_max_pool1d", "adaptive_max_pool1d", (2, 3, 7), False, {"output_size": 3, "return_indices": True}),
    ("adaptive_max_pool3d", "adaptive_max_pool3d", (1, 2, 5, 4, 5), False, {"output_size": (2, 3, 2),
                                                                        "return_indices": True}),
    ("lp_pool2d", "lp_pool2d", (1, 2, 6, 5), False, {"norm_type": 2.0, "kernel_size": (3, 2), "stride": 2,
                                                     "ceil_mode": True}),
    ("lp_pool1d", "lp_pool1d", (2, 3, 9), False, {"norm_type": 3.0, "kernel_size": 2}),
    ("lp_pool3d", "lp_pool3d", (1, 2, 4, 4, 4), False, {"norm_type": 1.5, "kernel_size": 2}),
]
UNPOOL_CASES = [   # name, pool kwargs, unpool kwargs, input shape
    ("max_unpool2d", 2, {"kernel_size": 3, "stride": 2, "padding": 1}, {"output_size": (7, 6)}, (2, 3, 7, 6)),
    ("max_unpool1d", 1, {"kernel_size": 2}, {}, (2, 3, 9)),
    ("max_unpool3d", 3, {"kernel_size": 2, "stride": 2}, {"output_size": (1, 2, 5, 4, 5)}, (1, 2, 5, 4, 5)),
]


def z(shape, dtype="float32"):
    return {"shape": list(shape), "dtype": dtype}


ERRORS = [   # function, input, kwargs
    ("max_pool2d", z((2, 3)), {"kernel_size": 2}),
    ("max_pool2d", z((1, 2, 3, 4, 5)), {"kernel_size": 2}),
    ("max_pool2d", z((1, 2, 4, 4)), {"kernel_size": (2, 2, 2)}),
    ("max_pool2d", z((1, 2, 4, 4)), {"kernel_size": 2, "stride": (1, 1, 1)}),
    ("max_pool2d", z((1, 2, 4, 4)), {"kernel_size": 2, "padding": (1, 1, 1)}),
    ("max_pool2d", z((1, 2, 4, 4)), {"kernel_size": 2, "dilation": (1, 1, 1)}),
    ("max_pool2d", z((1, 2, 4, 4)), {"kernel_size": 0}),
    ("max_pool2d", z((1, 2, 4, 4)), {"kernel_size": 0, "stride": 1}),
    ("max_pool2d", z((1, 2, 4, 4)), {"kernel_size": 2, "stride": -1}),
    ("max_pool2d", z((1, 2, 4, 4)), {"kernel_size": 2, "dilation": 0}),
    ("max_pool2d", z((1, 2, 4, 4)), {"kernel_size": 2, "padding": 2}),
    ("max_pool2d", z((1, 2, 9, 9)), {"kernel_size": 3, "dilation": 2, "padding": 2}),
    ("max_pool2d", z((1, 2, 4, 4)), {"kernel_size": 2, "padding": -1}),
    ("max_pool2d", z((1, 2, 1, 1)), {"kernel_size": 2}),
    ("max_pool2d", z((1, 2, 4, 4)), {"kernel_size": 3, "dilation": 2}),
    ("max_pool2d", z((1, 0, 4, 4)), {"kernel_size": 2}),
    ("max_pool2d", z((1, 2, 0, 4)), {"kernel_size": 2}),
    ("max_pool2d", z((1, 2, 4, 4), "bool"), {"kernel_size": 2}),
    ("max_pool1d", z((1, 2, 3, 4)), {"kernel_size": 2}),
    ("max_pool1d", z((2,)), {"kernel_size": 2}),
    ("max_pool1d", z((1, 2, 4)), {"kernel_size": (2, 2)}),
    ("max_pool1d", z((1, 2, 4)), {"kernel_size": 2, "padding": 2}),
    ("max_pool1d", z((1, 2, 4)), {"kernel_size": 0}),
    ("max_pool1d", z((1, 2, 1)), {"kernel_size": 2}),
    ("max_pool1d", z((1, 2, 4)), {"kernel_size": 2, "stride": 0}),
    ("max_pool1d", z((1, 2, 4)), {"kernel_size": 2, "dilation": 0}),
    ("max_pool1d", z((1, 2, 4)), {"kernel_size": 2, "return_indices": True, "padding": 2}),
    ("max_pool1d", z((1, 2, 1)), {"kernel_size": 2, "return_indices": True}),
    ("max_pool1d", z((1, 2, 4)), {"kernel_size": (2, 2), "return_indices": True}),
    ("max_pool1d", z((1, 2, 3, 4)), {"kernel_size": 2, "return_indices": True}),
    ("max_pool3d", z((2, 3)), {"kernel_size": 2}),
    ("max_pool3d", z((1, 2, 4, 4, 4)), {"kernel_size": (2, 2)}),
    ("max_pool3d", z((1, 2, 4, 4, 4)), {"kernel_size": 2, "stride": (1, 2)}),
    ("max_pool3d", z((1, 2, 4, 4, 4)), {"kernel_size": 2, "padding": 2}),
    ("max_pool3d", z((1, 2, 1, 4, 4)), {"kernel_size": 2}),
    ("max_pool3d", z((1, 2, 4, 4, 4)), {"kernel_size": 0}),
    ("max_pool3d", z((1, 2, 4, 4, 4)), {"kernel_size": 2, "dilation": 0}),
    ("max_pool3d", z((1, 2, 4, 4, 4)), {"kernel_size": 2, "stride": -1}),
    ("max_pool3d", z((1, 0, 4, 4, 4)), {"kernel_size": 2}),
    ("avg_pool2d", z((2, 3)), {"kernel_size": 2}),
    ("avg_pool2d", z((1, 2, 4, 4)), {"kernel_size": (2, 2, 2)}),
    ("avg_pool2d", z((1, 2, 4, 4)), {"kernel_size": 2, "stride": (1, 1, 1)}),
    ("avg_pool2d", z((1, 2, 4, 4)), {"kernel_size": 2, "padding": (1, 1, 1)}),
    ("avg_pool2d", z((1, 2, 4, 4)), {"kernel_size": 0}),
    ("avg_pool2d", z((1, 2, 4, 4)), {"kernel_size": 2, "stride": 0}),
    ("avg_pool2d", z((1, 2, 4, 4)), {"kernel_size": 2, "padding": 2}),
    ("avg_pool2d", z((1, 2, 1, 1)), {"kernel_size": 2}),
    ("avg_pool2d", z((1, 2, 4, 4)), {"kernel_size": 2, "divisor_override": 0}),
    ("avg_pool2d", z((1, 2, 4, 4), "bool"), {"kernel_size": 2}),
    ("avg_pool2d", z((1, 2, 4, 4), "int32"), {"kernel_size": 2}),
    ("avg_pool1d", z((2,)), {"kernel_size": 2}),
    ("avg_pool1d", z((1, 2, 4)), {"kernel_size": (2, 2)}),
    ("avg_pool1d", z((1, 2, 4)), {"kernel_size": 2, "padding": 2}),
    ("avg_pool1d", z((1, 2, 4)), {"kernel_size": 0}),
    ("avg_pool1d", z((1, 2, 1)), {"kernel_size": 2}),
    ("avg_pool3d", z((1, 2, 4)), {"kernel_size": 2}),
    ("avg_pool3d", z((1, 2, 4, 4, 4)), {"kernel_size": (2, 2)}),
    ("avg_pool3d", z((1, 2, 4, 4, 4)), {"kernel_size": 2, "stride": (2, 2)}),
    ("avg_pool3d", z((1, 2, 4, 4, 4)), {"kernel_size": 2, "padding": (1, 1)}),
    ("avg_pool3d", z((1, 2, 4, 4, 4)), {"kernel_size": 2, "padding": 2}),
    ("avg_pool3d", z((1, 2, 1, 4, 4)), {"kernel_size": 2}),
    ("avg_pool3d", z((1, 2, 4, 4, 4)), {"kernel_size": 2, "divisor_override": 0}),
    ("adaptive_avg_pool2d", z((2, 3)), {"output_size": 2}),
    ("adaptive_avg_pool2d", z((1, 2, 4, 4)), {"output_size": (2, 2, 2)}),
    ("adaptive_avg_pool2d", z((1, 2, 4, 4)), {"output_size": -1}),
    ("adaptive_avg_pool2d", z((1, 2, 0, 4)), {"output_size": 2}),
    ("adaptive_avg_pool2d", z((1, 2, 4, 4), "int64"), {"output_size": 2}),
    ("adaptive_avg_pool1d", z((2,)), {"output_size": 2}),
    ("adaptive_avg_pool1d", z((1, 2, 4)), {"output_size": (2, 2)}),
    ("adaptive_avg_pool1d", z((1, 2, 4)), {"output_size": -1}),
    ("adaptive_avg_pool3d", z((2, 3, 4)), {"output_size": 2}),
    ("adaptive_avg_pool3d", z((1, 2, 4, 4, 4)), {"output_size": (2, 2)}),
    ("adaptive_avg_pool3d", z((1, 2, 4, 4, 4)), {"output_size": -1}),
    ("adaptive_avg_pool3d", z((1, 2, 4, 0, 4)), {"output_size": 2}),
    ("adaptive_max_pool2d", z((2, 3)), {"output_size": 2}),
    ("adaptive_max_pool2d", z((1, 2, 4, 4)), {"output_size": (2, 2, 2)}),
    ("adaptive_max_pool2d", z((1, 2, 4, 4)), {"output_size": -1}),
    ("adaptive_max_pool2d", z((1, 2, 0, 4)), {"output_size": 2}),
    ("adaptive_max_pool2d", z((1, 2, 4, 4), "int64"), {"output_size": 2}),
    ("adaptive_max_pool1d", z((2,)), {"output_size": 2}),
    ("adaptive_max_pool1d", z((1, 2, 4)), {"output_size": (2, 2)}),
    ("adaptive_max_pool3d", z((2, 3, 4)), {"output_size": 2}),
    ("adaptive_max_pool3d", z((1, 2, 4, 4, 4)), {"output_size": (2, 2)}),
    ("lp_pool2d", z((1, 2, 4, 4)), {"norm_type": 2, "kernel_size": 5}),
    ("lp_pool1d", z((1, 2, 4)), {"norm_type": 2, "kernel_size": 5}),
]
UNPOOL_ERRORS = [   # function, input, indices, kwargs
    ("max_unpool2d", z((1, 2, 2, 2)), {"shape": [1, 2, 2, 2], "dtype": "int64", "value": 99}, {"kernel_size": 2}),
    ("max_unpool2d", z((1, 2, 2, 2)), {"shape": [1, 2, 2, 2], "dtype": "int32", "value": 0}, {"kernel_size": 2}),
    ("max_unpool2d", z((1, 2, 2, 2)), {"shape": [1, 2, 2, 1], "dtype": "int64", "value": 0}, {"kernel_size": 2}),
    ("max_unpool2d", z((1, 2, 2, 2)), {"shape": [1, 2, 2, 2], "dtype": "int64", "value": 0},
     {"kernel_size": 2, "output_size": (3,)}),
    ("max_unpool2d", z((1, 2, 2, 2)), {"shape": [1, 2, 2, 2], "dtype": "int64", "value": 0},
     {"kernel_size": 2, "output_size": (9, 9)}),
    ("max_unpool2d", z((2, 2)), {"shape": [2, 2], "dtype": "int64", "value": 0}, {"kernel_size": 2}),
    ("max_unpool1d", z((1, 2, 2)), {"shape": [1, 2, 2], "dtype": "int64", "value": 7}, {"kernel_size": 2}),
    ("max_unpool3d", z((1, 2, 2, 2, 1)), {"shape": [1, 2, 2, 2, 1], "dtype": "int64", "value": 90},
     {"kernel_size": (2, 2, 1)}),
    ("max_unpool3d", z((2, 2, 1)), {"shape": [2, 2, 1], "dtype": "int64", "value": 0}, {"kernel_size": 2}),
]
FRACTIONAL_CASES = [   # name, function, input shape, kwargs (the samples drawn here, recorded)
    ("fractional_max_pool2d", "fractional_max_pool2d", (2, 3, 9, 8), {"kernel_size": 3, "output_size": (4, 3)}),
    ("fractional_max_pool2d_ratio_unbatched", "fractional_max_pool2d", (3, 9, 8),
     {"kernel_size": (2, 3), "output_ratio": (0.5, 0.5)}),
    ("fractional_max_pool3d", "fractional_max_pool3d", (1, 2, 5, 6, 7), {"kernel_size": 2, "output_size": (3, 3, 4)}),
]
S2 = {"shape": [2, 3, 2], "dtype": "float32", "value": 0.25}
ERRORS += [
    ("fractional_max_pool2d", z((2, 3, 9, 8)), {"kernel_size": 2}),
    ("fractional_max_pool2d", z((2, 3, 9, 8)), {"kernel_size": 2, "output_ratio": (0.5, 0.5, 0.5)}),
    ("fractional_max_pool2d", z((2, 3, 9, 8)), {"kernel_size": (2, 2, 2), "output_size": 3, "_random_samples": S2}),
    ("fractional_max_pool2d", z((2, 3, 9, 8)), {"kernel_size": 2, "output_size": (3, 3, 3), "_random_samples": S2}),
    ("fractional_max_pool2d", z((9, 8)), {"kernel_size": 2, "output_size": 3}),
    ("fractional_max_pool2d", z((2, 3, 9, 8)), {"kernel_size": 5, "output_size": (6, 3), "_random_samples": S2}),
    ("fractional_max_pool2d", z((2, 3, 9, 8)), {"kernel_size": 5, "output_size": (3, 6), "_random_samples": S2}),
    ("fractional_max_pool2d", z((2, 3, 9, 8)), {"kernel_size": 2, "output_size": 3,
                                                "_random_samples": {"shape": [2, 3, 3], "dtype": "float32"}}),
    ("fractional_max_pool2d", z((2, 3, 9, 8)), {"kernel_size": 2, "output_size": 3,
                                                "_random_samples": {"shape": [1, 3, 2], "dtype": "float32"}}),
    ("fractional_max_pool2d", z((2, 3, 9, 8)), {"kernel_size": 2, "output_size": 3,
                                                "_random_samples": {"shape": [2, 3, 2], "dtype": "float64"}}),
    ("fractional_max_pool2d", z((2, 0, 4, 4)), {"kernel_size": 2, "output_size": 3,
                                                "_random_samples": {"shape": [2, 0, 2], "dtype": "float32"}}),
    ("fractional_max_pool2d", z((2, 3, 9, 8)), {"kernel_size": 2, "output_size": -1, "_random_samples": S2}),
    ("fractional_max_pool3d", z((2, 3, 9, 8)), {"kernel_size": 2, "output_size": 3}),
    ("fractional_max_pool3d", z((1, 2, 5, 6, 7)), {"kernel_size": 2, "output_size": (2, 2)}),
    ("fractional_max_pool3d", z((1, 2, 5, 6, 7)), {"kernel_size": 2, "output_size": 2,
                                                   "_random_samples": {"shape": [1, 2, 2], "dtype": "float32"}}),
]
MODULES = [
    ("MaxPool1d", (3,), {}), ("MaxPool2d", (3, 2, 1), {}), ("MaxPool2d", ((2, 3),), {}),
    ("MaxPool3d", (2,), {"return_indices": True, "ceil_mode": True}), ("AvgPool1d", (3,), {}),
    ("AvgPool2d", (3, 2, 1), {}), ("AvgPool2d", (3,), {"divisor_override": 2}), ("AvgPool3d", ((2, 2, 1),), {}),
    ("AdaptiveAvgPool1d", (3,), {}), ("AdaptiveAvgPool2d", ((1, 1),), {}), ("AdaptiveAvgPool2d", ((None, 3),), {}),
    ("AdaptiveAvgPool3d", (2,), {}), ("AdaptiveMaxPool2d", (2, True), {}), ("AdaptiveMaxPool1d", (2,), {}),
    ("AdaptiveMaxPool3d", ((1, 2, 3),), {}), ("LPPool2d", (2, 3), {}), ("LPPool1d", (1.5, 3, 2), {}),
    ("LPPool3d", (2, 2), {"ceil_mode": True}), ("MaxUnpool1d", (2,), {}), ("MaxUnpool2d", (2,), {}),
    ("MaxUnpool3d", (2, 1), {}), ("FractionalMaxPool2d", (3,), {"output_ratio": 0.5}),
    ("FractionalMaxPool3d", (2,), {"output_size": (3, 3, 3), "return_indices": True}),
]


def tensor(spec):
    t = torch.zeros(spec["shape"], dtype=getattr(torch, spec["dtype"]))
    return t.fill_(spec["value"]) if "value" in spec else t


def kwargs_of(kwargs):
    return {k: tensor(v) if isinstance(v, dict) else v for k, v in kwargs.items()}


def error_of(call):
    try:
        call()
    except Exception as e:   # noqa: BLE001 (recording whatever torch raises)
        return [type(e).__name__, str(e)]
    raise AssertionError("no error")


def main():
    arrays, meta = {}, {"cases": [], "unpool": [], "fractional": [], "errors": [], "modules": []}
    for name, fn, shape, channels_last, kwargs in CASES:
        x_np = rng.standard_normal(shape)
        x = torch.tensor(x_np)
        if channels_last:
            x = x.contiguous(memory_format=torch.channels_last if x.dim() == 4 else torch.channels_last_3d)
        x.requires_grad_()
        kw = dict(kwargs)
        args = (kw.pop("norm_type"),) if fn.startswith("lp_pool") else ()
        out = getattr(F, fn)(x, *args, **kw)
        y = out[0] if isinstance(out, tuple) else out
        g = rng.standard_normal(tuple(y.shape))
        (gx,) = torch.autograd.grad(y, x, torch.tensor(g))
        arrays.update({f"{name}.x": x_np, f"{name}.y": y.detach().numpy(), f"{name}.g": g, f"{name}.gx": gx.numpy()})
        if isinstance(out, tuple):
            arrays[f"{name}.i"] = out[1].numpy()
        meta["cases"].append({"name": name, "fn": fn, "channels_last": channels_last, "kwargs": kwargs,
                              "node": y.grad_fn.name(), "stride": list(y.stride())})
    for name, k, pool_kw, unpool_kw, shape in UNPOOL_CASES:
        x_np = rng.standard_normal(shape)
        y, i = getattr(F, f"max_pool{k}d")(torch.tensor(x_np), return_indices=True, **pool_kw)
        y = y.detach().requires_grad_()
        u = getattr(F, name)(y, i, **pool_kw, **unpool_kw)
        g = rng.standard_normal(tuple(u.shape))
        (gy,) = torch.autograd.grad(u, y, torch.tensor(g))
        arrays.update({f"{name}.y": y.detach().numpy(), f"{name}.i": i.numpy(), f"{name}.u": u.detach().numpy(),
                       f"{name}.g": g, f"{name}.gy": gy.numpy()})
        meta["unpool"].append({"name": name, "pool_kwargs": pool_kw, "kwargs": unpool_kw, "node": u.grad_fn.name()})
    for name, fn, shape, kwargs in FRACTIONAL_CASES:
        x_np = rng.standard_normal(shape)
        k = int(fn[-2])
        u = rng.random((shape[0] if len(shape) == k + 2 else 1, shape[-k - 1], k))
        x = torch.tensor(x_np, requires_grad=True)
        y, i = getattr(F, fn)(x, **kwargs, return_indices=True, _random_samples=torch.tensor(u))
        g = rng.standard_normal(tuple(y.shape))
        (gx,) = torch.autograd.grad(y, x, torch.tensor(g))
        arrays.update({f"{name}.x": x_np, f"{name}.u": u, f"{name}.y": y.detach().numpy(), f"{name}.i": i.numpy(),
                       f"{name}.g": g, f"{name}.gx": gx.numpy()})
        meta["fractional"].append({"name": name, "fn": fn, "kwargs": kwargs, "node": y.grad_fn.name()})
    for fn, x, kwargs in ERRORS:
        kw = dict(kwargs)
        args = (kw.pop("norm_type"),) if fn.startswith("lp_pool") else ()
        meta["errors"].append({"fn": fn, "x": x, "kwargs": kwargs,
                               "error": error_of(lambda: getattr(F, fn)(tensor(x), *args, **kwargs_of(kw)))})
    for fn, x, idx, kwargs in UNPOOL_ERRORS:
        meta["errors"].append({"fn": fn, "x": x, "indices": idx, "kwargs": kwargs,
                               "error": error_of(lambda: getattr(F, fn)(tensor(x), tensor(idx), **kwargs))})
    for cls, args, kwargs in MODULES:
        meta["modules"].append({"cls": cls, "args": args, "kwargs": kwargs,
                                "repr": repr(getattr(nn, cls)(*args, **kwargs))})
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez_compressed(pathlib.Path(__file__).parent / "pool_torch_values.npz", **arrays)


if __name__ == "__main__":
    main()
