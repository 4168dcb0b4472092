"""Writes tests/data/resample_torch_values.npz: torch's values, gradients, node names and error
texts for the resampling family (F.unfold/fold, pixel_(un)shuffle, channel_shuffle, the padding
modules, F.interpolate in every mode, grid_sample, affine_grid). Run once with torch; tritensor's
tests (tests/test_resample.py) read the file and never import torch.

    /work/torchenv/bin/python tests/data/make_resample_torch_values.py

Each value case: float64 inputs from a seeded NumPy generator, torch's output, and the gradient
of sum(output * g) for each differentiable input, g a seeded random cotangent.
"""
import json
import pathlib
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

rng = np.random.default_rng(20261125)
ARRAYS, META = {}, {"cases": [], "errors": [], "reprs": {}}


def _call(fn_name, args, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return eval(fn_name, {"F": F, "torch": torch, "nn": nn})(*args, **kwargs)


def value_case(name, fn_name, shapes, kwargs=None, extra=(), grad=True, dtype="float64"):
    """shapes: the shapes of the tensor arguments (normal values, float64 unless ``dtype``);
    extra: the further positional arguments after them."""
    kwargs = kwargs or {}
    xs = [torch.tensor(rng.standard_normal(s), dtype=getattr(torch, dtype), requires_grad=grad) for s in shapes]
    y = _call(fn_name, list(xs) + list(extra), kwargs)
    entry = {"name": name, "fn": fn_name, "n": len(xs), "extra": list(extra), "kwargs": kwargs, "dtype": dtype,
             "node": type(y.grad_fn).__name__ if y.grad_fn is not None else None}
    for i, x in enumerate(xs):
        ARRAYS[f"{name}.x{i}"] = x.detach().numpy()
    ARRAYS[f"{name}.y"] = y.detach().numpy()
    if grad:
        g = torch.tensor(rng.standard_normal(tuple(y.shape)), dtype=y.dtype)
        ARRAYS[f"{name}.g"] = g.numpy()
        grads = torch.autograd.grad(y, xs, g)
        for i, gx in enumerate(grads):
            ARRAYS[f"{name}.gx{i}"] = gx.numpy()
    META["cases"].append(entry)


def error_case(fn_name, shape, args, kwargs=None, dtype="float32"):
    kwargs = kwargs or {}
    x = torch.zeros(shape, dtype=getattr(torch, dtype))
    try:
        _call(fn_name, [x] + list(args), kwargs)
    except Exception as e:   # noqa: BLE001  (recording which exception torch raises)
        META["errors"].append({"fn": fn_name, "shape": list(shape), "dtype": dtype, "args": list(args),
                               "kwargs": kwargs, "type": type(e).__name__, "message": str(e)})
        return
    raise AssertionError(f"no error: {fn_name} {shape} {args} {kwargs}")


# --------------------------------------------------------------------------- folding, shuffling
value_case("unfold_basic", "F.unfold", [(2, 3, 4, 5)], extra=[(2, 3)])
value_case("unfold_all_args", "F.unfold", [(1, 2, 5, 6)], {"dilation": (2, 1), "padding": (1, 2), "stride": (2, 3)},
           extra=[3])
value_case("unfold_unbatched", "F.unfold", [(3, 4, 4)], {"stride": 2}, extra=[2])
value_case("fold_overlapping", "F.fold", [(2, 12, 12)], extra=[(4, 5), 2])
value_case("fold_all_args", "F.fold", [(1, 6, 4)], {"dilation": (1, 2), "padding": 1, "stride": (2, 1)},
           extra=[(3, 4), (2, 3)])
value_case("fold_unbatched", "F.fold", [(8, 4)], {"stride": 2}, extra=[(4, 4), 2])
value_case("pixel_shuffle", "F.pixel_shuffle", [(2, 18, 2, 3)], extra=[3])
value_case("pixel_shuffle_5d", "F.pixel_shuffle", [(2, 1, 8, 2, 1)], extra=[2])
value_case("pixel_unshuffle", "F.pixel_unshuffle", [(1, 2, 4, 6)], extra=[2])
value_case("channel_shuffle", "F.channel_shuffle", [(2, 6, 3)], extra=[3])
value_case("channel_shuffle_4d", "F.channel_shuffle", [(1, 8, 2, 2)], extra=[2])

for fn, shape, args, kwargs, dtype in [
    ("F.unfold", (2, 3, 3, 3), [4], {}, "float32"),
    ("F.unfold", (2, 3, 3, 3), [0], {}, "float32"),
    ("F.unfold", (2, 3, 3, 3), [2], {"dilation": 0}, "float32"),
    ("F.unfold", (2, 3, 3, 3), [2], {"padding": -1}, "float32"),
    ("F.unfold", (2, 3, 3, 3), [2], {"stride": 0}, "float32"),
    ("F.unfold", (2, 3, 3, 3), [(2, 2, 2)], {}, "float32"),
    ("F.unfold", (2, 0, 3, 3), [2], {}, "float32"),
    ("F.unfold", (2, 3, 4, 4, 4), [2], {}, "float32"),
    ("F.unfold", (3, 3), [2], {}, "float32"),
    ("F.unfold", (2, 3, 3, 3), [2], {}, "int64"),
    ("F.fold", (2, 12, 4), [(3, 4), 2], {}, "float32"),
    ("F.fold", (2, 12, 4), [(3, 3), 5], {}, "float32"),
    ("F.fold", (2, 10, 4), [(3, 3), 2], {}, "float32"),
    ("F.fold", (12,), [(3, 3), 2], {}, "float32"),
    ("F.fold", (2, 12, 4), [(3, 3), 0], {}, "float32"),
    ("F.fold", (2, 12, 4), [(3, 3), 2], {"stride": 0}, "float32"),
    ("F.fold", (2, 12, 4), [(3, 3), 2], {"padding": -1}, "float32"),
    ("F.fold", (2, 12, 4), [(3, 3), 2], {"dilation": 0}, "float32"),
    ("F.fold", (2, 12, 4), [(0, 3), 2], {}, "float32"),
    ("F.fold", (2, 12, 4), [(3, 3, 3), 2], {}, "float32"),
    ("F.fold", (2, 12, 4), [(3, 3), 2], {}, "int64"),
    ("F.pixel_shuffle", (2, 8, 3, 3), [3], {}, "float32"),
    ("F.pixel_shuffle", (8, 3), [2], {}, "float32"),
    ("F.pixel_shuffle", (2, 8, 3, 3), [0], {}, "float32"),
    ("F.pixel_shuffle", (2, 8, 3, 3), [2.0], {}, "float32"),
    ("F.pixel_unshuffle", (2, 8, 3, 4), [2], {}, "float32"),
    ("F.pixel_unshuffle", (2, 8, 4, 3), [2], {}, "float32"),
    ("F.pixel_unshuffle", (2, 8, 4, 4), [-1], {}, "float32"),
    ("F.pixel_unshuffle", (4,), [2], {}, "float32"),
    ("F.channel_shuffle", (2, 8, 3), [3], {}, "float32"),
    ("F.channel_shuffle", (2, 8, 3), [0], {}, "float32"),
    ("F.channel_shuffle", (2, 8), [2], {}, "float32"),
    ("F.channel_shuffle", (8,), [0], {}, "float32"),
    ("F.dropout1d", (2, 3, 4, 5), [], {}, "float32"),
    ("F.dropout1d", (2, 3), [], {"p": 1.5}, "float32"),
    ("F.dropout2d", (2, 3, 4, 5), [], {}, "int64"),
]:
    error_case(fn, shape, args, kwargs, dtype)

# --------------------------------------------------------------------------- padding modules
x = torch.tensor(rng.standard_normal((2, 3, 4, 5, 6)))
for mod in [nn.ZeroPad1d(2), nn.ZeroPad2d((1, 0, 2, 1)), nn.ZeroPad3d(1), nn.ConstantPad1d((1, 3), 2.5),
            nn.ConstantPad2d(1, -1.0), nn.ConstantPad3d((1, 0, 0, 2, 1, 1), 0.5), nn.ReflectionPad1d((2, 3)),
            nn.ReflectionPad2d(2), nn.ReflectionPad3d((1, 2, 0, 1, 2, 1)), nn.ReplicationPad1d(4),
            nn.ReplicationPad2d((0, 2, 3, 1)), nn.ReplicationPad3d(2), nn.CircularPad1d((2, 1)),
            nn.CircularPad2d(1), nn.CircularPad3d((1, 2, 0, 1, 2, 0))]:
    k = int(type(mod).__name__[-2])
    inp = x[0, 0, 0, 0] if k == 1 else x[0, 0, 0] if k == 2 else x[0, 0]   # unbatched (C, ...) inputs too
    inp = inp.reshape((1,) * (k + 1 - inp.dim()) + tuple(inp.shape)) if inp.dim() < k + 1 else inp
    batched = x.reshape(-1)[: 2 * 3 * int(np.prod(inp.shape[1:]))].reshape((2, 3) + tuple(inp.shape[1:]))
    name = type(mod).__name__
    META["reprs"][name] = repr(mod)
    ARRAYS[f"{name}.x"] = batched.numpy()
    ARRAYS[f"{name}.y"] = mod(batched).numpy()

# --------------------------------------------------------------------------- interpolate
INTERP = [
    # name, input shape, kwargs
    ("nearest_1d_up", (2, 3, 5), {"scale_factor": 2.5, "mode": "nearest"}),
    ("nearest_2d_size", (1, 2, 5, 7), {"size": (3, 11), "mode": "nearest"}),
    ("nearest_2d_scale", (1, 2, 5, 4), {"scale_factor": (1.7, 0.6), "mode": "nearest"}),
    ("nearest_2d_recompute", (1, 2, 5, 4), {"scale_factor": (1.7, 0.6), "mode": "nearest",
                                            "recompute_scale_factor": True}),
    ("nearest_3d", (1, 1, 3, 4, 2), {"size": (5, 3, 4), "mode": "nearest"}),
    ("nearest_exact_1d", (1, 2, 7), {"size": 4, "mode": "nearest-exact"}),
    ("nearest_exact_2d", (2, 1, 5, 3), {"scale_factor": 1.5, "mode": "nearest-exact"}),
    ("nearest_exact_3d", (1, 2, 2, 3, 3), {"size": (3, 5, 2), "mode": "nearest-exact"}),
    ("linear_up", (2, 2, 5), {"size": 9, "mode": "linear"}),
    ("linear_down_scale", (1, 3, 9), {"scale_factor": 0.45, "mode": "linear"}),
    ("linear_align", (1, 2, 4), {"size": 7, "mode": "linear", "align_corners": True}),
    ("linear_same_size_scale", (1, 2, 3), {"scale_factor": 1.2, "mode": "linear"}),
    ("linear_to_one", (1, 2, 4), {"size": 1, "mode": "linear", "align_corners": True}),
    ("bilinear_up", (1, 2, 3, 4), {"size": (5, 7), "mode": "bilinear"}),
    ("bilinear_down", (2, 1, 7, 6), {"size": (3, 4), "mode": "bilinear"}),
    ("bilinear_align", (1, 2, 3, 4), {"scale_factor": 2, "mode": "bilinear", "align_corners": True}),
    ("bilinear_scale", (1, 1, 4, 5), {"scale_factor": (1.3, 2.7), "mode": "bilinear"}),
    ("bilinear_recompute", (1, 1, 4, 5), {"scale_factor": (1.3, 2.7), "mode": "bilinear",
                                          "recompute_scale_factor": True}),
    ("bicubic_up", (1, 2, 4, 5), {"size": (7, 9), "mode": "bicubic"}),
    ("bicubic_down", (1, 1, 8, 7), {"size": (3, 5), "mode": "bicubic"}),
    ("bicubic_align", (1, 2, 3, 4), {"scale_factor": 1.5, "mode": "bicubic", "align_corners": True}),
    ("bicubic_scale", (1, 1, 5, 4), {"scale_factor": (2.2, 0.8), "mode": "bicubic"}),
    ("trilinear_up", (1, 2, 2, 3, 4), {"size": (3, 5, 6), "mode": "trilinear"}),
    ("trilinear_align_down", (1, 1, 4, 5, 3), {"scale_factor": 0.7, "mode": "trilinear", "align_corners": True}),
    ("bilinear_aa_down", (1, 2, 9, 8), {"size": (4, 3), "mode": "bilinear", "antialias": True}),
    ("bilinear_aa_up", (1, 1, 3, 4), {"size": (5, 7), "mode": "bilinear", "antialias": True}),
    ("bilinear_aa_align", (1, 1, 9, 8), {"size": (4, 5), "mode": "bilinear", "antialias": True,
                                         "align_corners": True}),
    ("bicubic_aa_down", (1, 2, 10, 9), {"scale_factor": 0.4, "mode": "bicubic", "antialias": True}),
    ("bicubic_aa_mixed", (1, 1, 4, 9), {"size": (7, 4), "mode": "bicubic", "antialias": True}),
]
for name, shape, kwargs in INTERP:
    value_case("interp_" + name, "F.interpolate", [shape], kwargs)
# float32: torch's single-precision coordinate arithmetic decides the nearest taps
for name, shape, kwargs in [("nearest_f32_third", (1, 1, 5, 7), {"size": (3, 3), "mode": "nearest"}),
                            ("nearest_f32_scale", (1, 1, 10), {"scale_factor": 0.3, "mode": "nearest"}),
                            ("nearest_exact_f32", (1, 1, 7, 9), {"size": (3, 6), "mode": "nearest-exact"}),
                            ("bilinear_f32", (1, 2, 5, 3), {"scale_factor": 1.9, "mode": "bilinear"}),
                            ("bicubic_f32", (1, 1, 6, 5), {"size": (4, 8), "mode": "bicubic"})]:
    value_case("interp_" + name, "F.interpolate", [shape], kwargs, dtype="float32")
value_case("interp_upsample_nearest", "F.upsample_nearest", [(1, 2, 3, 3)], {"scale_factor": 2})
value_case("interp_upsample_bilinear", "F.upsample_bilinear", [(1, 2, 3, 3)], {"size": (4, 5)})

for fn, shape, args, kwargs, dtype in [
    ("F.interpolate", (2, 3, 4, 5), [], {"size": (0, 3), "mode": "bilinear"}, "float32"),
    ("F.interpolate", (2, 3, 4), [], {"scale_factor": 0.1, "mode": "linear"}, "float32"),
    ("F.interpolate", (2, 3, 4, 4, 4), [], {"scale_factor": 0.1, "mode": "nearest"}, "float32"),
    ("F.interpolate", (2, 0, 4, 4), [], {"scale_factor": 2, "mode": "bilinear"}, "float32"),
    ("F.interpolate", (2, 3, 4, 5), [], {"scale_factor": -2, "mode": "nearest"}, "float32"),
    ("F.interpolate", (2, 3, 4, 5), [], {"scale_factor": float("inf"), "mode": "nearest"}, "float32"),
    ("F.interpolate", (2, 3, 4, 5), [], {"size": (2.0, 2), "mode": "nearest"}, "float32"),
    ("F.interpolate", (2, 3, 4, 5), [], {"mode": "nearest"}, "float32"),
    ("F.interpolate", (2, 3, 4, 5), [], {"size": 2, "scale_factor": 2}, "float32"),
    ("F.interpolate", (2, 3, 4, 5), [], {"size": 2, "align_corners": True}, "float32"),
    ("F.interpolate", (2, 3, 4, 5), [], {"size": 2, "mode": "foo"}, "float32"),
    ("F.interpolate", (2, 3, 4, 5), [], {"size": (2, 2, 2)}, "float32"),
    ("F.interpolate", (2, 3, 4, 5), [], {"scale_factor": (2, 2, 2)}, "float32"),
    ("F.interpolate", (2, 3, 4, 5), [], {"size": 2, "recompute_scale_factor": True}, "float32"),
    ("F.interpolate", (3, 4), [], {"size": 2}, "float32"),
    ("F.interpolate", (2, 3, 4, 5), [], {"size": 2, "mode": "linear"}, "float32"),
    ("F.interpolate", (2, 3, 4), [], {"size": 2, "mode": "bilinear"}, "float32"),
    ("F.interpolate", (2, 3, 4, 5, 6), [], {"size": 2, "mode": "bicubic"}, "float32"),
    ("F.interpolate", (2, 3, 4, 5), [], {"size": 2, "mode": "nearest", "antialias": True}, "float32"),
    ("F.interpolate", (2, 3, 4, 5), [], {"size": 2, "mode": "lanczos", "align_corners": True}, "float32"),
    ("F.interpolate", (2, 3, 4, 5), [], {"size": 2, "mode": "lanczos"}, "float32"),
    ("F.interpolate", (1, 3, 4, 5), [], {"size": 2, "mode": "bilinear"}, "int64"),
    ("F.interpolate", (1, 3, 4, 5), [], {"size": 2, "mode": "nearest"}, "int32"),
    ("F.interpolate", (1, 3, 4), [], {"size": 2, "mode": "linear"}, "bool"),
    ("F.interpolate", (1, 3, 4, 5), [], {"size": 2, "mode": "bicubic"}, "int64"),
]:
    error_case(fn, shape, args, kwargs, dtype)
for mod in [nn.Upsample(scale_factor=2), nn.Upsample(size=(3, 4), mode="bilinear", align_corners=True),
            nn.Upsample(scale_factor=(1.5, 2), mode="bicubic"), nn.UpsamplingNearest2d(size=5),
            nn.UpsamplingBilinear2d(scale_factor=3)]:
    META["reprs"]["upsample:" + repr(mod)] = repr(mod)

# --------------------------------------------------------------------------- grid_sample, affine_grid
def grid_case(name, input_shape, grid_shape, kwargs, spread=1.3):
    """grid values uniform in [-spread, spread]: some taps fall outside (the padding modes)."""
    x = torch.tensor(rng.standard_normal(input_shape), requires_grad=True)
    grid = torch.tensor(rng.uniform(-spread, spread, grid_shape), requires_grad=True)
    y = F.grid_sample(x, grid, **kwargs)
    g = torch.tensor(rng.standard_normal(tuple(y.shape)))
    gx, gg = torch.autograd.grad(y, (x, grid), g)
    for key, v in (("x0", x), ("x1", grid), ("y", y), ("g", g), ("gx0", gx), ("gx1", gg)):
        ARRAYS[f"{name}.{key}"] = v.detach().numpy()
    META["cases"].append({"name": name, "fn": "F.grid_sample", "n": 2, "extra": [], "kwargs": kwargs,
                          "dtype": "float64", "node": type(y.grad_fn).__name__})


for mode in ("bilinear", "nearest", "bicubic"):
    for padding in ("zeros", "border", "reflection"):
        for align in (False, True):
            grid_case(f"grid_{mode}_{padding}_{int(align)}", (2, 2, 4, 5), (2, 3, 4, 2),
                      {"mode": mode, "padding_mode": padding, "align_corners": align})
for mode in ("bilinear", "nearest"):
    for padding in ("zeros", "reflection"):
        grid_case(f"grid3d_{mode}_{padding}", (1, 2, 3, 4, 3), (1, 2, 3, 2, 3),
                  {"mode": mode, "padding_mode": padding, "align_corners": mode == "nearest"})
grid_case("grid_reflection_far", (1, 1, 3, 4), (1, 2, 5, 2), {"padding_mode": "reflection", "align_corners": False},
          spread=4.0)
grid_case("grid_bicubic_reflection_far", (1, 1, 4, 3), (1, 3, 2, 2),
          {"mode": "bicubic", "padding_mode": "reflection", "align_corners": True}, spread=3.5)
value_case("affine_grid_2d", "F.affine_grid", [(2, 2, 3)], {"align_corners": False}, extra=[(2, 3, 4, 5)])
value_case("affine_grid_2d_aligned", "F.affine_grid", [(1, 2, 3)], {"align_corners": True}, extra=[(1, 1, 3, 2)])
value_case("affine_grid_3d", "F.affine_grid", [(1, 3, 4)], {"align_corners": False}, extra=[(1, 2, 2, 3, 4)])


def grid_error(input_shape, grid_shape, kwargs, input_dtype="float32", grid_dtype="float32"):
    x = torch.zeros(input_shape, dtype=getattr(torch, input_dtype))
    grid = torch.zeros(grid_shape, dtype=getattr(torch, grid_dtype))
    try:
        F.grid_sample(x, grid, **kwargs)
    except Exception as e:   # noqa: BLE001
        META.setdefault("grid_errors", []).append({"input": list(input_shape), "grid": list(grid_shape),
                                                   "input_dtype": input_dtype, "grid_dtype": grid_dtype,
                                                   "kwargs": kwargs, "type": type(e).__name__, "message": str(e)})
        return
    raise AssertionError(f"no error: grid_sample {input_shape} {grid_shape} {kwargs}")


for args in [((2, 3, 4, 5), (3, 2, 2, 2), {"align_corners": False}),
             ((2, 3, 4, 5), (2, 2, 2, 3), {"align_corners": False}),
             ((2, 3, 4, 5), (2, 2, 2, 2, 2), {"align_corners": False}),
             ((2, 3, 4), (2, 2, 2), {"align_corners": False}),
             ((2, 3, 0, 5), (2, 2, 2, 2), {"align_corners": False}),
             ((2, 3, 4, 5, 2), (2, 2, 2, 2, 3), {"mode": "bicubic", "align_corners": False}),
             ((2, 3, 4, 5), (2, 2, 2, 2), {"mode": "area", "align_corners": False}),
             ((2, 3, 4, 5), (2, 2, 2, 2), {"padding_mode": "wrap", "align_corners": False})]:
    grid_error(*args)
grid_error((2, 3, 4, 5), (2, 2, 2, 2), {"align_corners": False}, "float32", "float64")

# --------------------------------------------------------------------------- writing
META_JSON = json.dumps(META)
np.savez_compressed(pathlib.Path(__file__).with_name("resample_torch_values.npz"), meta=np.array(META_JSON), **ARRAYS)
print(len(META["cases"]), "value cases,", len(META["errors"]), "errors")
