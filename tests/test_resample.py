"""The resampling family beyond its op records (tests/opinfo_resample.py): values, gradients, node
names and error texts recorded from torch (tests/data/resample_torch_values.npz, written by
tests/data/make_resample_torch_values.py), hand-computed cases, and the modules (padding,
PixelShuffle, ChannelShuffle, Fold/Unfold, the channel dropouts) with torch's reprs.

The emulated cuda device runs a few small cases (each op is a handful of launches).
"""
import json
import pathlib
import warnings

import numpy as np
import pytest

import tritensor as tt
import tritensor.nn as nn
import tritensor.nn.functional as F
from conftest import to_numpy
import opinfo  # noqa: F401,I001  (first: it imports every opinfo_<family> module, this one's included)

DATA = np.load(pathlib.Path(__file__).parent / "data" / "resample_torch_values.npz")
META = json.loads(str(DATA["meta"]))
CASES = {c["name"]: c for c in META["cases"]}
CUDA_CASES = ("unfold_all_args", "pixel_shuffle", "channel_shuffle_4d")
_TT = {"F": F, "tt": tt, "nn": nn}


def _run(case, device):
    n = case["name"]
    dtype = getattr(tt, case.get("dtype", "float64"))
    xs = [tt.tensor(DATA[f"{n}.x{i}"], dtype=dtype, device=device, requires_grad=True) for i in range(case["n"])]
    extra = [tuple(a) if isinstance(a, list) else a for a in case["extra"]]
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in case["kwargs"].items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = eval(case["fn"], _TT)(*xs, *extra, **kwargs)
    grads = tt.autograd.grad(y, xs, tt.tensor(DATA[f"{n}.g"], dtype=dtype, device=device)) if f"{n}.g" in DATA \
        else ()
    return y, grads


def _check_case(name, device, grads_too=True):
    case = CASES[name]
    y, grads = _run(case, device)
    grads = grads if grads_too else ()
    assert (y.grad_fn.name() if y.grad_fn is not None else None) == case["node"]
    tol = 1e-12 if case.get("dtype", "float64") == "float64" else 2e-6
    np.testing.assert_allclose(to_numpy(y), DATA[f"{name}.y"], rtol=tol, atol=tol)
    for i, g in enumerate(grads):
        np.testing.assert_allclose(to_numpy(g), DATA[f"{name}.gx{i}"], rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(n for n in CASES if n.split("_")[0] in ("unfold", "fold", "pixel", "channel")))
def test_fold_and_shuffle_values_gradients_and_nodes_match_torch(name):
    _check_case(name, "cpu")


@pytest.mark.parametrize("name", CUDA_CASES)
def test_fold_and_shuffle_match_torch_on_cuda(name):
    _check_case(name, "cuda")


_ERRORS = {"RuntimeError": RuntimeError, "TypeError": TypeError, "ValueError": ValueError, "IndexError": IndexError,
           "NotImplementedError": NotImplementedError}


@pytest.mark.parametrize("i", range(len(META["errors"])))
def test_errors_match_torch(i):
    e = META["errors"][i]
    x = tt.zeros(*e["shape"], dtype=getattr(tt, e["dtype"]))
    args = [tuple(a) if isinstance(a, list) else a for a in e["args"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(_ERRORS[e["type"]]) as info:
            eval(e["fn"], _TT)(x, *args, **{k: tuple(v) if isinstance(v, list) else v for k, v in e["kwargs"].items()})
    assert str(info.value).strip("'\"") == e["message"].strip("'\""), e


@pytest.mark.parametrize("name", sorted(n for n in CASES if n.startswith("interp_")))
def test_interpolate_values_gradients_and_nodes_match_torch(name):
    _check_case(name, "cpu")


# --------------------------------------------------------------------------- hand-computed
def test_unfold_and_fold_by_hand():
    x = tt.arange(9.0).reshape(1, 1, 3, 3)
    cols = F.unfold(x, 2)
    # four 2x2 blocks at (0,0), (0,1), (1,0), (1,1); row k of a column is tap k (row-major)
    assert to_numpy(cols)[0].tolist() == [[0, 1, 3, 4], [1, 2, 4, 5], [3, 4, 6, 7], [4, 5, 7, 8]]
    # fold adds every copy back: the centre pixel is in all four blocks, the corners in one
    assert to_numpy(F.fold(cols, (3, 3), 2))[0, 0].tolist() == [[0, 2, 2], [6, 16, 10], [6, 14, 8]]
    # fold(unfold(ones)) counts each pixel's blocks (torch's divisor for overlap-averaging)
    assert to_numpy(F.fold(F.unfold(tt.ones(1, 1, 3, 3), 2), (3, 3), 2))[0, 0].tolist() == \
        [[1, 2, 1], [2, 4, 2], [1, 2, 1]]


def test_unfold_keeps_non_finite_values_where_they_are():
    x = tt.tensor([[[[1.0, float("inf")], [float("nan"), 2.0]]]])
    cols = to_numpy(F.unfold(x, 1, padding=1))[0, 0]
    assert np.isinf(cols[6]) and np.isnan(cols[9]) and cols[5] == 1 and cols[10] == 2
    assert np.isfinite(np.delete(cols, [6, 9])).all()     # the padding stays 0 (no 0 * inf products)


def test_shuffles_by_hand(device):
    x = tt.arange(8.0, device=device).reshape(1, 8, 1, 1)
    assert to_numpy(F.channel_shuffle(x, 2)).reshape(-1).tolist() == [0, 4, 1, 5, 2, 6, 3, 7]
    assert to_numpy(tt.pixel_shuffle(x[:, :4], 2))[0, 0].tolist() == [[0, 1], [2, 3]]
    y = tt.arange(16, device=device).reshape(1, 1, 4, 4)
    assert to_numpy(F.pixel_unshuffle(y, 2))[0, :, 0, 0].tolist() == [0, 1, 4, 5]
    assert to_numpy(F.pixel_shuffle(F.pixel_unshuffle(y, 2), 2)).tolist() == to_numpy(y).tolist()


# --------------------------------------------------------------------------- modules
@pytest.mark.parametrize("name", sorted(n for n in META["reprs"] if not n.startswith("upsample:")))
def test_padding_modules_match_torch(name):
    k = int(name[-2])
    parts = META["reprs"][name][len(name) + 1:-1]
    if parts.startswith("padding="):       # ConstantPadNd(padding=(...), value=v)
        padding, value = parts[len("padding="):].rsplit(", value=", 1)
        mod = getattr(nn, name)(eval(padding), float(value))
    else:
        mod = getattr(nn, name)(eval(parts))
    assert repr(mod) == META["reprs"][name]
    x = tt.tensor(DATA[f"{name}.x"], dtype=tt.float64)
    np.testing.assert_array_equal(to_numpy(mod(x)), DATA[f"{name}.y"])
    np.testing.assert_array_equal(to_numpy(mod(x[0])), DATA[f"{name}.y"][0])      # unbatched (C, ...)
    if name.startswith("Circular"):
        with pytest.raises(ValueError, match=f"expected {k + 1}D or {k + 2}D input \\(got {k + 3}D input\\)"):
            mod(x.unsqueeze(0))


def test_padding_module_int_padding_and_gradient_on_cuda():
    mod = nn.ReflectionPad2d(1)
    assert mod.padding == (1, 1, 1, 1)
    x = tt.arange(6.0, device="cuda").reshape(1, 1, 2, 3).requires_grad_()
    y = mod(x)
    assert to_numpy(y)[0, 0].tolist() == [[4, 3, 4, 5, 4], [1, 0, 1, 2, 1], [4, 3, 4, 5, 4], [1, 0, 1, 2, 1]]
    y.sum().backward()      # the copies of each input pixel: the middle column 3 times a row, each row twice
    assert to_numpy(x.grad)[0, 0].tolist() == [[2, 6, 2], [2, 6, 2]]


def test_module_reprs_and_forward_match_torch():
    assert repr(nn.PixelShuffle(3)) == "PixelShuffle(upscale_factor=3)"
    assert repr(nn.PixelUnshuffle(2)) == "PixelUnshuffle(downscale_factor=2)"
    assert repr(nn.ChannelShuffle(4)) == "ChannelShuffle(groups=4)"
    assert repr(nn.Unfold((2, 3), stride=2)) == "Unfold(kernel_size=(2, 3), dilation=1, padding=0, stride=2)"
    assert repr(nn.Fold((4, 5), 2, padding=1)) == "Fold(output_size=(4, 5), kernel_size=2, dilation=1, padding=1, " \
                                                  "stride=1)"
    assert repr(nn.Dropout2d(0.3, inplace=True)) == "Dropout2d(p=0.3, inplace=True)"
    x = tt.randn(1, 8, 4, 4)
    assert tt.equal(nn.PixelUnshuffle(2)(nn.PixelShuffle(2)(x)), x)
    assert tt.equal(nn.ChannelShuffle(2)(x), F.channel_shuffle(x, 2))
    assert tt.allclose(nn.Fold((4, 4), 2, stride=2)(nn.Unfold(2, stride=2)(x)), x)   # disjoint blocks: inverse


def test_channel_dropout_modules():
    x = tt.ones(30, 20, 3, 2)
    m = nn.Dropout2d(0.25)
    y = to_numpy(m(x))
    assert set(np.unique(y)) == {0.0, np.float32(1 / 0.75)}
    assert (y == y[:, :, :1, :1]).all()                 # whole channels
    assert abs((y[:, :, 0, 0] != 0).mean() - 0.75) < 0.05
    m.eval()
    assert m(x) is x
    tt.manual_seed(7)
    a = F.dropout1d(tt.ones(6, 5), 0.5)                 # unbatched (C, L): per channel, squeezed back
    tt.manual_seed(7)
    b = F.dropout1d(tt.ones(1, 6, 5), 0.5)[0]
    assert tt.equal(a, b) and a.shape == (6, 5)
    x3 = tt.ones(2, 4, 2, 2, 2)
    z = x3.clone()
    assert nn.Dropout3d(0.5, inplace=True)(z) is z
    assert ((to_numpy(z) == 0) | (to_numpy(z) == 2)).all()
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
        F.dropout2d(tt.ones(2, 3, 4))
    y = F.dropout3d(tt.ones(2, 4, 2, 2, requires_grad=True), 0.5)     # unbatched (C, D, H, W)
    assert y.grad_fn.name() == "SqueezeBackward1"


# --------------------------------------------------------------------------- interpolate
@pytest.mark.parametrize("name", ["interp_bilinear_down", "interp_nearest_f32_third", "interp_bicubic_f32"])
def test_interpolate_matches_torch_on_cuda(name):
    _check_case(name, "cuda")


def test_interpolate_by_hand():
    x = tt.tensor([[[[0.0, 2.0], [4.0, 6.0]]]])
    # align_corners: the corners stay, the centre is the mean of the four
    y = to_numpy(F.interpolate(x, size=3, mode="bilinear", align_corners=True))[0, 0]
    assert y.tolist() == [[0, 1, 2], [2, 3, 4], [4, 5, 6]]
    # half-pixel centres: output pixel 0 of 4 sits at source -0.25, clamped to 0
    assert to_numpy(F.interpolate(x[..., 0, :], size=4, mode="linear"))[0, 0].tolist() == [0, 0.5, 1.5, 2]
    # nearest floors i * in / out; nearest-exact rounds the half-pixel centre (i + 0.5) * in / out
    r = tt.arange(5.0).reshape(1, 1, 5)
    assert to_numpy(F.interpolate(r, size=3, mode="nearest"))[0, 0].tolist() == [0, 1, 3]
    assert to_numpy(F.interpolate(r, size=3, mode="nearest-exact"))[0, 0].tolist() == [0, 2, 4]
    # bicubic reproduces a linear ramp inside (the cubic convolution's weights sum to 1 and are exact for lines)
    ramp = tt.arange(8.0, dtype=tt.float64).reshape(1, 1, 1, 8).expand(1, 1, 4, 8)
    inner = to_numpy(F.interpolate(ramp, size=(4, 15), mode="bicubic", align_corners=True))[0, 0, :, 2:-2]
    np.testing.assert_allclose(inner, np.broadcast_to(np.arange(2, 13) * 0.5, (4, 11)), atol=1e-12)


def test_interpolate_layouts_dtypes_and_modules():
    x = tt.randn(2, 3, 4, 5).contiguous(memory_format=tt.channels_last)
    for mode in ("nearest", "bilinear", "bicubic"):
        y = F.interpolate(x, scale_factor=2, mode=mode)
        assert y.is_contiguous(memory_format=tt.channels_last) and y.shape == (2, 3, 8, 10)   # as torch's
    h = tt.randn(1, 2, 3, 5).to(tt.float16)
    got = F.interpolate(h, size=(4, 7), mode="bicubic")
    assert got.dtype is tt.float16      # computed in float32, rounded once
    assert tt.equal(got, F.interpolate(h.float(), size=(4, 7), mode="bicubic").half())
    u = tt.tensor([[[[1, 2], [3, 4]]]], dtype=tt.uint8)
    assert to_numpy(F.interpolate(u, scale_factor=2))[0, 0].tolist() == [[1, 1, 2, 2]] * 2 + [[3, 3, 4, 4]] * 2
    with pytest.raises(NotImplementedError, match="uint8"):
        F.interpolate(u.float().to(tt.uint8), scale_factor=2, mode="bilinear")
    mods = [nn.Upsample(scale_factor=2), nn.Upsample(size=(3, 4), mode="bilinear", align_corners=True),
            nn.Upsample(scale_factor=(1.5, 2), mode="bicubic"), nn.UpsamplingNearest2d(size=5),
            nn.UpsamplingBilinear2d(scale_factor=3)]       # as in make_resample_torch_values.py
    assert sorted(repr(m) for m in mods) == sorted(k[len("upsample:"):] for k in META["reprs"] if
                                                   k.startswith("upsample:"))
    up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
    assert tt.equal(up(x), F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False))
    with pytest.warns(UserWarning, match="upsample_bilinear` is deprecated"):
        F.upsample_bilinear(x, scale_factor=2)
    if not hasattr(F, "adaptive_avg_pool2d"):       # mode='area' is adaptive average pooling (issue 22's pooling)
        with pytest.raises(NotImplementedError, match="area"):
            F.interpolate(x, size=2, mode="area")


# --------------------------------------------------------------------------- grid_sample, affine_grid
@pytest.mark.parametrize("name", sorted(n for n in CASES if n.startswith(("grid", "affine"))))
def test_grid_sample_and_affine_grid_match_torch(name):
    _check_case(name, "cpu")


@pytest.mark.parametrize("name", ["grid_bilinear_reflection_0", "grid3d_nearest_reflection", "affine_grid_2d"])
def test_grid_sample_and_affine_grid_match_torch_on_cuda(name):
    # the kernels' values; the gradients are the ops composite's, checked on the cpu (~4 s emulated)
    _check_case(name, "cuda", grads_too=False)


@pytest.mark.parametrize("i", range(len(META["grid_errors"])))
def test_grid_sample_errors_match_torch(i):
    e = META["grid_errors"][i]
    x = tt.zeros(*e["input"], dtype=getattr(tt, e["input_dtype"]))
    grid = tt.zeros(*e["grid"], dtype=getattr(tt, e["grid_dtype"]))
    with pytest.raises(_ERRORS[e["type"]]) as info:
        F.grid_sample(x, grid, **e["kwargs"])
    assert str(info.value) == e["message"]


def test_grid_sample_by_hand():
    x = tt.arange(6.0, dtype=tt.float64).reshape(1, 1, 2, 3)
    # align_corners: -1 and 1 are the corner pixels' centres; (0, 0) the image's centre
    grid = tt.tensor([[[[-1.0, -1.0], [1.0, 1.0], [0.0, 0.0], [1.0, -1.0]]]], dtype=tt.float64)
    y = F.grid_sample(x, grid, align_corners=True)
    assert to_numpy(y)[0, 0, 0].tolist() == [0.0, 5.0, 2.5, 2.0]
    # the identity affine map samples every pixel at its centre (both conventions)
    for align in (False, True):
        ident = F.affine_grid(tt.tensor([[[1.0, 0, 0], [0, 1.0, 0]]], dtype=tt.float64), (1, 1, 2, 3),
                              align_corners=align)
        np.testing.assert_allclose(to_numpy(F.grid_sample(x, ident, align_corners=align)), to_numpy(x), atol=1e-12)
    # far outside: zeros gives 0, border the nearest edge pixel
    far = tt.tensor([[[[5.0, 0.0]]]], dtype=tt.float64)
    assert F.grid_sample(x, far, align_corners=True).item() == 0
    assert F.grid_sample(x, far, padding_mode="border", align_corners=True).item() == 3.5   # row 0.5 of column 2
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior has changed"):
        F.grid_sample(x, far)
