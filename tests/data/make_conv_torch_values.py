"""Writes tests/data/conv_torch_values.npz: torch's convolutions, their gradients, F.pad and
torch's error texts for a set of configurations (run once with torch; tritensor's tests read the
file and never import torch).

    /work/torchenv/bin/python tests/data/make_conv_torch_values.py

Each case: float64 inputs from a seeded NumPy generator, torch's output and the gradients of
sum(output * g) for every input (torch computes in float64 on the cpu).
"""
import json
import pathlib

import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.default_rng(20240522)

# name, function, input shape, weight shape, bias?, kwargs
CASES = [
    ("conv2d_basic", "conv2d", (2, 3, 5, 6), (4, 3, 3, 3), True, {"padding": 1}),
    ("conv2d_strided_dilated_groups", "conv2d", (2, 4, 7, 6), (6, 2, 3, 2), True,
     {"stride": [2, 1], "padding": [1, 0], "dilation": [1, 2], "groups": 2}),
    ("conv2d_depthwise", "conv2d", (1, 3, 6, 5), (6, 1, 3, 3), False, {"stride": 2, "padding": 1, "groups": 3}),
    ("conv2d_same_even", "conv2d", (2, 2, 5, 4), (3, 2, 4, 2), True, {"padding": "same"}),
    ("conv2d_same_dilated", "conv2d", (1, 2, 5, 6), (3, 2, 3, 3), False, {"padding": "same", "dilation": [2, 1]}),
    ("conv2d_unbatched", "conv2d", (3, 5, 5), (2, 3, 2, 2), True, {"stride": [1, 2]}),
    ("conv2d_pointwise", "conv2d", (2, 5, 4, 3), (7, 5, 1, 1), True, {}),
    ("conv2d_pointwise_strided", "conv2d", (2, 5, 4, 3), (7, 5, 1, 1), False, {"stride": 2}),
    ("conv1d_strided_dilated", "conv1d", (2, 3, 11), (5, 3, 3), True, {"stride": 3, "padding": 2, "dilation": 2}),
    ("conv1d_valid_groups", "conv1d", (1, 4, 9), (4, 2, 4), True, {"padding": "valid", "groups": 2}),
    ("conv3d_mixed", "conv3d", (1, 2, 4, 5, 3), (3, 2, 2, 3, 2), True,
     {"stride": [1, 2, 1], "padding": [1, 1, 0], "dilation": [1, 1, 2]}),
    ("conv3d_same", "conv3d", (1, 2, 3, 4, 3), (2, 1, 3, 2, 3), False, {"padding": "same", "groups": 2}),
    ("conv_transpose2d_full", "conv_transpose2d", (2, 4, 3, 4), (4, 3, 3, 2), True,
     {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}),
    ("conv_transpose2d_dilated", "conv_transpose2d", (1, 2, 4, 3), (2, 3, 2, 3), False,
     {"stride": [1, 2], "dilation": [2, 1], "output_padding": [1, 0]}),
    ("conv_transpose1d_strided", "conv_transpose1d", (2, 3, 5), (3, 2, 3), True,
     {"stride": 3, "padding": 1, "dilation": 2, "output_padding": 2}),
    ("conv_transpose3d_mixed", "conv_transpose3d", (1, 2, 2, 3, 2), (2, 2, 2, 2, 3), True,
     {"stride": [1, 2, 2], "padding": [0, 1, 1], "output_padding": [0, 1, 0]}),
]

PAD_CASES = [
    ("pad_constant", (2, 3, 4), {"pad": [1, 2, -1, 1], "mode": "constant", "value": 1.5}),
    ("pad_reflect_1d", (2, 3, 5), {"pad": [2, -1], "mode": "reflect"}),
    ("pad_reflect_2d", (1, 2, 3, 4), {"pad": [1, 3, 2, 1], "mode": "reflect"}),
    ("pad_reflect_3d", (1, 2, 3, 3, 4), {"pad": [1, 2, 1, 0, 2, 1], "mode": "reflect"}),
    ("pad_replicate_1d", (3, 4), {"pad": [5, 1], "mode": "replicate"}),
    ("pad_replicate_2d", (1, 2, 3, 4), {"pad": [2, 0, -1, 3], "mode": "replicate"}),
    ("pad_replicate_3d", (1, 1, 2, 3, 2), {"pad": [1, 1, 2, 1, 1, 2], "mode": "replicate"}),
    ("pad_circular_1d", (2, 2, 5), {"pad": [2, 1], "mode": "circular"}),
    ("pad_circular_2d", (1, 2, 3, 4), {"pad": [1, -2, 3, 1], "mode": "circular"}),
    ("pad_circular_3d", (1, 1, 2, 3, 4), {"pad": [1, 1, 2, 0, 1, 2], "mode": "circular"}),
]


# torch's errors: (function, input shape/dtype, weight shape/dtype, bias shape/dtype or None, kwargs)
F32, F64 = "float32", "float64"
ERRORS = [
    ("conv2d", ((3, 4), F32), ((8, 4, 3, 3), F32), None, {}),                       # input rank
    ("conv2d", ((3, 4, 5, 5, 5), F32), ((8, 4, 3, 3), F32), None, {}),
    ("conv1d", ((3, 4, 5, 5), F32), ((8, 4, 3), F32), None, {}),
    ("conv3d", ((4, 5, 5), F32), ((8, 4, 3, 3, 3), F32), None, {}),
    ("conv_transpose2d", ((3, 4), F32), ((4, 3, 3, 3), F32), None, {}),
    ("conv2d", ((2, 4, 5, 5), F32), ((8, 3, 3, 3), F32), None, {}),                 # channel mismatch
    ("conv2d", ((2, 4, 5, 5), F32), ((8, 1, 3, 3), F32), None, {"groups": 2}),
    ("conv_transpose2d", ((2, 4, 5, 5), F32), ((3, 3, 3, 3), F32), None, {}),
    ("conv2d", ((2, 4, 5, 5), F32), ((9, 2, 3, 3), F32), None, {"groups": 2}),      # groups do not divide
    ("conv2d", ((2, 4, 5, 5), F32), ((8, 4, 3, 3), F32), None, {"groups": 3}),
    ("conv_transpose2d", ((2, 4, 5, 5), F32), ((4, 3, 3, 3), F32), None, {"groups": 3}),
    ("conv2d", ((2, 4, 5, 5), F32), ((2, 1, 3, 3), F32), None, {"groups": 4}),      # fewer filters than groups
    ("conv2d", ((2, 4, 5, 5), F32), ((8, 4, 6, 6), F32), None, {}),                 # kernel past the padded input
    ("conv2d", ((2, 4, 5, 5), F32), ((8, 4, 8, 8), F32), None, {"padding": 1}),
    ("conv2d", ((2, 4, 5, 5), F32), ((8, 4, 3, 3), F32), None, {"dilation": 3}),
    ("conv1d", ((2, 4, 2), F32), ((8, 4, 3), F32), None, {}),
    ("conv3d", ((2, 4, 2, 5, 5), F32), ((8, 4, 3, 3, 3), F32), None, {}),
    ("conv2d", ((2, 4, 5, 5), F32), ((8, 4, 3, 3), F32), None, {"stride": 0}),      # parameters
    ("conv2d", ((2, 4, 5, 5), F32), ((8, 4, 3, 3), F32), None, {"padding": -1}),
    ("conv2d", ((2, 4, 5, 5), F32), ((8, 4, 3, 3), F32), None, {"dilation": 0}),
    ("conv2d", ((2, 4, 5, 5), F32), ((8, 4, 3, 3), F32), None, {"groups": 0}),
    ("conv2d", ((2, 4, 5, 5), F32), ((8, 4, 3, 3), F32), None, {"padding": "same", "stride": 2}),
    ("conv2d", ((2, 4, 5, 5), F32), ((8, 4, 3, 3), F32), None, {"padding": "foo"}),
    ("conv2d", ((2, 4, 5, 5), F32), ((8, 4, 3, 3), F32), None, {"stride": [1, 1, 1]}),
    ("conv2d", ((2, 4, 5, 5), F32), ((8, 4, 3, 3), F32), None, {"padding": []}),
    ("conv2d", ((2, 4, 5, 5), F32), ((8, 4, 3), F32), None, {}),                    # weight rank
    ("conv2d", ((2, 4, 5, 5), F32), ((8, 4), F32), None, {}),
    ("conv2d", ((2, 4, 5, 5), F32), ((8, 4, 3, 3), F32), ((4,), F32), {}),          # bias
    ("conv2d", ((2, 4, 5, 5), F32), ((8, 4, 3, 3), F32), ((8, 1), F32), {}),
    ("conv_transpose2d", ((2, 4, 5, 5), F32), ((4, 3, 3, 3), F32), ((4,), F32), {}),
    ("conv2d", ((2, 4, 5, 5), F32), ((8, 4, 3, 3), F64), None, {}),                 # dtypes
    ("conv2d", ((2, 4, 5, 5), F32), ((8, 4, 3, 3), F32), ((8,), F64), {}),
    ("conv2d", ((2, 4, 5, 5), "bool"), ((8, 4, 3, 3), "bool"), None, {}),
    ("conv_transpose2d", ((2, 4, 5, 5), "int32"), ((4, 3, 3, 3), "int32"), None, {}),
    ("conv_transpose2d", ((2, 4, 5, 5), F32), ((4, 3, 3, 3), F32), None, {"output_padding": 1}),
    ("conv_transpose2d", ((2, 4, 5, 5), F32), ((4, 3, 3, 3), F32), None, {"stride": 2, "output_padding": 2}),
    ("conv_transpose1d", ((2, 4, 5), F32), ((4, 3, 3), F32), None, {"output_padding": 1}),
    ("conv_transpose3d", ((2, 4, 3, 3, 3), F32), ((4, 3, 3, 3, 3), F32), None, {"output_padding": 1}),
    ("conv_transpose2d", ((2, 4, 5, 5), F32), ((4, 3, 3, 3), F32), None, {"output_padding": -1}),
    ("conv_transpose2d", ((2, 4, 5, 5), F32), ((4, 3, 3, 3), F32), None, {"stride": 1.5}),
    ("conv2d", ((2, 4, 5, 5), F32), ((8, 4, 3, 3), F32), None, {"stride": (1, 1.5)}),
    ("conv2d", ((2, 4, 5, 5), F32), ((8, 4, 3, 3), F32), None, {"groups": 1.0}),
]
# the modules' constructor errors: (class, args, kwargs)
MODULE_ERRORS = [
    ("Conv2d", (4, 8, 3), {"groups": 3}), ("Conv2d", (4, 9, 3), {"groups": 2}), ("Conv2d", (4, 8, 3), {"groups": 0}),
    ("Conv2d", (4, 8, 3), {"padding": "foo"}), ("Conv2d", (4, 8, 3), {"padding": "same", "stride": 2}),
    ("Conv1d", (4, 8, 3), {"padding_mode": "foo"}), ("ConvTranspose2d", (4, 8, 3), {"padding_mode": "reflect"}),
]


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return [type(e).__name__, str(e)]
    raise AssertionError("no error")


def _t(a):
    return torch.tensor(a, dtype=torch.float64, requires_grad=True)


def main():
    arrays, meta = {}, []
    for name, fn, xs, ws, bias, kwargs in CASES:
        x, w = rng.standard_normal(xs), rng.standard_normal(ws)
        b = rng.standard_normal(ws[1] * kwargs.get("groups", 1) if "transpose" in fn else ws[0]) if bias else None
        tx, tw = _t(x), _t(w)
        tb = _t(b) if bias else None
        y = getattr(F, fn)(tx, tw, tb, **kwargs)
        g = rng.standard_normal(tuple(y.shape))
        grads = torch.autograd.grad(y, [t for t in (tx, tw, tb) if t is not None], torch.tensor(g))
        arrays.update({f"{name}.x": x, f"{name}.w": w, f"{name}.g": g, f"{name}.y": y.detach().numpy(),
                       f"{name}.gx": grads[0].numpy(), f"{name}.gw": grads[1].numpy()})
        if bias:
            arrays[f"{name}.b"] = b
            arrays[f"{name}.gb"] = grads[2].numpy()
        meta.append({"name": name, "fn": fn, "bias": bias, "kwargs": kwargs})
    pad_meta = []
    for name, xs, kwargs in PAD_CASES:
        x = rng.standard_normal(xs)
        tx = _t(x)
        y = F.pad(tx, **kwargs)
        g = rng.standard_normal(tuple(y.shape))
        (gx,) = torch.autograd.grad(y, [tx], torch.tensor(g))
        arrays.update({f"{name}.x": x, f"{name}.g": g, f"{name}.y": y.detach().numpy(), f"{name}.gx": gx.numpy(),
                       })
        pad_meta.append({"name": name, "kwargs": kwargs, "node": type(y.grad_fn).__name__})
    # nn modules: torch's initialisation statistics are not reproducible across generators, so
    # record the module forward for given parameters instead (padding modes on the module path)
    modules = []
    for name, cls, args, kwargs, xs in [
            ("module_reflect", "Conv2d", (2, 3, 3), {"padding": 1, "padding_mode": "reflect"}, (1, 2, 4, 5)),
            ("module_circular", "Conv1d", (2, 2, 3), {"padding": 2, "padding_mode": "circular", "dilation": 2}, (2, 2, 6)),
            ("module_replicate", "Conv3d", (1, 2, 2), {"padding": (1, 0, 1), "padding_mode": "replicate"}, (1, 1, 3, 3, 2)),
            ("module_same_reflect", "Conv2d", (1, 1, (2, 3)), {"padding": "same", "padding_mode": "reflect"}, (1, 1, 4, 4)),
    ]:
        m = getattr(torch.nn, cls)(*args, **kwargs).double()
        x = rng.standard_normal(xs)
        with torch.no_grad():
            for p in m.parameters():
                p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape))))
        arrays[f"{name}.x"] = x
        arrays[f"{name}.w"] = m.weight.detach().numpy()
        arrays[f"{name}.b"] = m.bias.detach().numpy()
        arrays[f"{name}.y"] = m(torch.tensor(x)).detach().numpy()
        modules.append({"name": name, "cls": cls, "args": args, "kwargs": kwargs, "repr": repr(m)})
    errors = []
    for fn, (xs, xd), (ws, wd), bias, kwargs in ERRORS:
        x = torch.zeros(xs, dtype=getattr(torch, xd))
        w = torch.zeros(ws, dtype=getattr(torch, wd))
        b = None if bias is None else torch.zeros(bias[0], dtype=getattr(torch, bias[1]))
        errors.append({"fn": fn, "x": [xs, xd], "w": [ws, wd], "b": bias, "kwargs": kwargs,
                       "error": _error(lambda: getattr(F, fn)(x, w, b, **kwargs))})
    module_errors = [{"cls": cls, "args": args, "kwargs": kwargs,
                      "error": _error(lambda: getattr(torch.nn, cls)(*args, **kwargs))}
                     for cls, args, kwargs in MODULE_ERRORS]
    arrays["meta"] = np.array(json.dumps({"conv": meta, "pad": pad_meta, "modules": modules, "errors": errors,
                                          "module_errors": module_errors}))
    path = pathlib.Path(__file__).parent / "conv_torch_values.npz"
    np.savez_compressed(path, **arrays)
    print("wrote", path, len(arrays), "arrays")


if __name__ == "__main__":
    main()
