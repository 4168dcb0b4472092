"""Lazy modules (issue 25 item 3): shapes inferred at the first call, the class swap, state_dict
loading into placeholders, torch's errors word for word. Oracles: the non-lazy layer built with
the same sizes from the same seed (a Lazy layer draws its initial values exactly as it would),
torch's recorded texts and behaviour."""
from __future__ import annotations

import copy
import warnings

import pytest

import tritensor as tt
from tritensor import nn
from tritensor.nn.modules.lazy import LazyModuleMixin
from tritensor.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy

SHAPE_MSG = ("Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
             "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
             "`forward` to initialize the parameters before accessing their attributes.")

CASES = [   # lazy layer, the layer it becomes (same sizes), input shape
    (lambda: nn.LazyLinear(3), lambda: nn.Linear(5, 3), (2, 5)),
    (lambda: nn.LazyLinear(3, bias=False), lambda: nn.Linear(5, 3, bias=False), (2, 4, 5)),
    (lambda: nn.LazyConv1d(4, 3, padding=1), lambda: nn.Conv1d(3, 4, 3, padding=1), (2, 3, 7)),
    (lambda: nn.LazyConv2d(4, 3, groups=2), lambda: nn.Conv2d(2, 4, 3, groups=2), (2, 5, 5)),     # unbatched
    (lambda: nn.LazyConv3d(2, 2), lambda: nn.Conv3d(3, 2, 2), (1, 3, 3, 3, 3)),
    (lambda: nn.LazyConvTranspose1d(2, 3, stride=2), lambda: nn.ConvTranspose1d(3, 2, 3, stride=2), (2, 3, 4)),
    (lambda: nn.LazyConvTranspose2d(4, 2, groups=2), lambda: nn.ConvTranspose2d(2, 4, 2, groups=2), (1, 2, 3, 3)),
    (lambda: nn.LazyConvTranspose3d(2, 2), lambda: nn.ConvTranspose3d(3, 2, 2), (1, 3, 2, 2, 2)),
    (lambda: nn.LazyBatchNorm1d(), lambda: nn.BatchNorm1d(3), (4, 3)),
    (lambda: nn.LazyBatchNorm2d(momentum=0.5), lambda: nn.BatchNorm2d(3, momentum=0.5), (2, 3, 2, 2)),
    (lambda: nn.LazyBatchNorm3d(affine=False), lambda: nn.BatchNorm3d(3, affine=False), (2, 3, 2, 2, 2)),
    (lambda: nn.LazyInstanceNorm1d(), lambda: nn.InstanceNorm1d(3, affine=True, track_running_stats=True), (2, 3, 5)),
    (lambda: nn.LazyInstanceNorm2d(track_running_stats=False), lambda: nn.InstanceNorm2d(3, affine=True),
     (2, 3, 3, 3)),
    (lambda: nn.LazyInstanceNorm3d(affine=False), lambda: nn.InstanceNorm3d(3, track_running_stats=True),
     (2, 3, 2, 2, 2)),
]


@pytest.mark.parametrize("make_lazy,make_plain,shape", CASES)
def test_first_call_infers_the_shape_and_becomes_the_plain_layer(make_lazy, make_plain, shape):
    x = tt.randn(*shape)
    tt.manual_seed(5)
    lazy = make_lazy()
    assert lazy.has_uninitialized_params()
    assert all(is_lazy(p) for p in lazy.parameters())
    y = lazy(x)
    tt.manual_seed(5)
    plain = make_plain()
    assert type(lazy) is type(plain)                       # the class swap (cls_to_become)
    assert repr(lazy) == repr(plain)
    assert not hasattr(lazy, "_initialize_hook") and not lazy._forward_pre_hooks
    sd, ref = lazy.state_dict(), plain.state_dict()
    assert list(sd) == list(ref)
    ref_y = plain(x)
    for k in ref:                       # same seed, same draws: the very values of the plain layer,
        if k != "num_batches_tracked":  # running stats after one training step included
            tt.testing.assert_close(sd[k], ref[k], rtol=0, atol=0)
    tt.testing.assert_close(y, ref_y, rtol=0, atol=0)
    assert all(type(p) is nn.Parameter for p in lazy.parameters())


def test_placeholders_state_dict_and_loading():
    lazy = nn.LazyLinear(3)
    assert repr(lazy) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    assert repr(lazy.weight) == "<UninitializedParameter>"
    with pytest.raises(RuntimeError) as e:
        lazy.weight.shape
    assert str(e.value) == SHAPE_MSG
    sd = lazy.state_dict()
    assert isinstance(sd["weight"], UninitializedParameter)     # saved as placeholders, as torch
    bn = nn.LazyBatchNorm1d().state_dict()
    assert isinstance(bn["running_mean"], UninitializedBuffer) and bn["num_batches_tracked"].item() == 0
    # loading a real state_dict materializes the placeholders (the class stays Lazy, as torch)
    src = nn.Linear(5, 3)
    lazy.load_state_dict(src.state_dict())
    assert type(lazy) is nn.LazyLinear and lazy.in_features == 0 and not lazy.has_uninitialized_params()
    tt.testing.assert_close(lazy.weight, src.weight.detach(), rtol=0, atol=0)
    with pytest.raises(AssertionError, match="^The in_features inferred from input: 4 is not equal to in_features "
                                             "from self.weight: 5$"):
        lazy(tt.randn(2, 4))
    x = tt.randn(2, 5)
    tt.testing.assert_close(lazy(x), src(x))
    assert type(lazy) is nn.Linear and lazy.in_features == 5
    # loading placeholders into an initialized layer: torch's RuntimeError
    with pytest.raises(RuntimeError) as e:
        src.load_state_dict(nn.LazyLinear(3).state_dict())
    assert str(e.value) == SHAPE_MSG


def test_lazy_errors_word_for_word():
    with pytest.raises(RuntimeError, match=r"^Expected 3D \(unbatched\) or 4D \(batched\) input to LazyConv2d, but "
                                           r"got input of size: tritensor.Size\(\[3, 4\]\)$"):
        nn.LazyConv2d(4, 3)(tt.randn(3, 4))
    with pytest.raises(ValueError, match="^in_channels must be divisible by groups$"):
        nn.LazyConv2d(4, 3, groups=2)(tt.randn(1, 3, 5, 5))

    class M(LazyModuleMixin, nn.Module):
        def __init__(self):
            super().__init__()
            self.w = UninitializedParameter()

    with pytest.raises(NotImplementedError, match="^initialize_parameters is not implemented for M$"):
        M()(tt.ones(1))

    class M2(M):
        def initialize_parameters(self, x):
            pass

    with pytest.raises(RuntimeError, match="^module M2 has not been fully initialized$"):
        M2()(tt.ones(1))
    with pytest.raises(RuntimeError) as e:
        nn.utils.parametrizations.weight_norm(nn.LazyLinear(2))
    assert str(e.value) == SHAPE_MSG
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(ValueError, match="^The module passed to `WeightNorm` can't have uninitialized parameters. "
                                             "Make sure to run the dummy forward before applying weight "
                                             "normalization$"):
            nn.utils.weight_norm(nn.LazyLinear(2))
    with pytest.raises(ValueError, match="^The module passed to `SpectralNorm` can't have uninitialized parameters"):
        nn.utils.spectral_norm(nn.LazyLinear(2))


def test_custom_lazy_module_deepcopy_dtype_and_device():
    lazy = nn.LazyLinear(3, dtype=tt.float64)
    clone = copy.deepcopy(lazy)
    clone(tt.randn(1, 2, dtype=tt.float64))
    assert type(lazy) is nn.LazyLinear and type(clone) is nn.Linear and clone.weight.dtype == tt.float64
    # moved before the first call: the parameters are materialized on the new device
    m = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(2)).to("cuda")
    y = m(tt.randn(3, 5, device="cuda"))
    assert y.device.type == "cuda" and m[0].weight.device.type == "cuda" and m[2].weight.shape == (2, 4)
    y.sum().backward()
    assert m[0].weight.grad.shape == (4, 5)

    class LazyScale(LazyModuleMixin, nn.Module):          # a user-defined lazy module
        def __init__(self):
            super().__init__()
            self.scale = UninitializedParameter()
            self.register_buffer("shift", UninitializedBuffer())

        def initialize_parameters(self, x):
            with tt.no_grad():
                self.scale.materialize(x.shape[-1:])
                self.scale.fill_(2.0)
                self.shift.materialize(x.shape[-1:])
                self.shift.fill_(1.0)

        def forward(self, x):
            return x * self.scale + self.shift

    s = LazyScale()
    assert s(tt.ones(2, 3)).tolist() == [[3.0] * 3] * 2
    assert type(s).__name__ == "LazyScale" and type(s.shift) is tt.Tensor and list(s.state_dict()) == ["scale", "shift"]
