"""movedim/moveaxis, Tensor.repeat, roll, reciprocal, square, hardtanh/relu6 (+ nn.Hardtanh,
nn.ReLU6): values against NumPy, torch's node names, errors and gradients (texts and values read
from PyTorch 2.13)."""
import numpy as np
import pytest

import tritensor as tt
import tritensor.nn.functional as F
from tritensor.autograd import gradcheck, gradgradcheck


def _host(t):
    return t.detach().cpu().numpy()


def _leaf(a, device):
    return tt.tensor(np.asarray(a, dtype=np.float64), device=device, requires_grad=True)


def test_movedim_is_a_permute_view(device):
    a = np.arange(24.0).reshape(2, 3, 4)
    x = tt.tensor(a, device=device)
    for src, dst in ((0, 2), (-1, 0), ((0, 1), (2, 0)), ([2, 0], [0, 1]), ((), ())):
        got = x.movedim(src, dst)
        assert np.array_equal(_host(got), np.moveaxis(a, src, dst))
        assert got._base is x
    assert np.array_equal(_host(tt.moveaxis(x, 0, -1)), np.moveaxis(a, 0, -1))
    assert type(_leaf(a, device).movedim(0, 2).grad_fn).__name__ == "PermuteBackward0"
    with pytest.raises(RuntimeError, match=r"movedim: repeated dim in `source` \(\[0, 0\]\)"):
        x.movedim((0, 0), (1, 2))
    with pytest.raises(RuntimeError, match=r"source \(\[0, 1\] dims\) should contain the same number of dims as "
                                           r"destination \(\[1\] dims\)"):
        x.movedim((0, 1), (1,))
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.movedim(3, 0)


def test_repeat_tiles_and_sums_its_gradient(device):
    a = np.arange(6.0).reshape(2, 3)
    x = tt.tensor(a, device=device)
    for sizes in ((2, 1), (1, 3), (2, 2, 2), (0, 1), (3, 1, 1)):
        assert np.array_equal(_host(x.repeat(*sizes)), np.tile(a, sizes))
    assert np.array_equal(_host(x.repeat((2, 2))), np.tile(a, (2, 2)))
    assert _host(tt.tensor(3.0, device=device).repeat(2, 2)).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    leaf = _leaf(a, device)
    out = leaf.repeat(2, 1, 3)
    assert type(out.grad_fn).__name__ == "RepeatBackward0"
    out.sum().backward()
    assert np.array_equal(_host(leaf.grad), np.full((2, 3), 6.0))
    with pytest.raises(RuntimeError, match="Number of dimensions of repeat dims can not be smaller"):
        x.repeat(2)
    with pytest.raises(RuntimeError, match=r"Trying to create tensor with negative dimension -2: \[-2, 3\]"):
        x.repeat(-1, 1)
    assert not hasattr(tt, "repeat")        # torch has Tensor.repeat only


def test_repeat_returns_a_new_contiguous_tensor(device):
    # strides recorded from torch 2.13: repeat always allocates (pytorch/examples' fast_neural_style
    # divides its repeated style batch in place: a stride-0 view over the tiles refused that)
    x = tt.tensor(np.arange(12.0).reshape(3, 2, 2), device=device)
    for sizes, strides in (((2, 1, 1, 1), (12, 4, 2, 1)), ((1, 1, 1), (4, 2, 1)), ((1, 2, 1, 1), (24, 4, 2, 1))):
        out = x.repeat(*sizes)
        assert out.stride() == strides and out.data_ptr() != x.data_ptr()
    assert tt.tensor(np.arange(6.0).reshape(2, 3), device=device).t().repeat(1, 1).stride() == (2, 1)
    tiled = x.repeat(2, 1, 1, 1)
    tiled.div_(2)                           # no overlap: each tile is its own memory
    tiled[0].zero_()
    assert _host(tiled[1]).tolist() == (np.arange(12.0).reshape(3, 2, 2) / 2).tolist()
    assert _host(x).tolist() == np.arange(12.0).reshape(3, 2, 2).tolist()


def test_roll_matches_numpy(device):
    a = np.arange(24).reshape(2, 3, 4)
    x = tt.tensor(a, device=device)
    cases = ((2, None), (-7, None), (1, 0), (-1, 2), ((1, 2), (0, 2)), ((5, -1), (1, 1)), ((1,), ()))
    for shifts, dims in cases:
        want = np.roll(a, shifts, None if dims == () else dims)
        got = x.roll(shifts, dims) if dims is not None else x.roll(shifts)
        assert np.array_equal(_host(got), want), (shifts, dims)
    assert tuple(tt.zeros(0, 2, device=device).roll(1, 0).shape) == (0, 2)
    assert tt.tensor(3.0, device=device).roll(1).item() == 3.0
    t = x.transpose(0, 2)       # a strided input
    assert np.array_equal(_host(tt.roll(t, 1, 0)), np.roll(a.transpose(2, 1, 0), 1, 0))
    with pytest.raises(RuntimeError, match="shifts and dimensions must align. shifts: 1, dims:2"):
        x.roll(1, (0, 1))
    with pytest.raises(RuntimeError, match="`shifts` required"):
        x.roll([])


def test_roll_and_repeat_gradients(device):
    x = _leaf(np.random.default_rng(0).standard_normal((2, 3)), device)
    assert type(x.roll(1, 0).grad_fn).__name__ == "RollBackward0"
    assert gradcheck(lambda t: t.roll((1, -2), (0, 1)), (x,))
    assert gradcheck(lambda t: t.roll(4), (x,))
    assert gradgradcheck(lambda t: (t.repeat(2, 1) ** 2), (x,))


def test_reciprocal_and_square(device):
    x = tt.tensor([2.0, -4.0, 0.0], device=device)
    assert _host(x.reciprocal()).tolist() == [0.5, -0.25, float("inf")]
    assert _host(tt.reciprocal(tt.tensor([2, 0], device=device))).tolist() == [0.5, float("inf")]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        tt.tensor([1, 2], device=device).reciprocal_()
    assert _host(tt.square(x)).tolist() == [4.0, 16.0, 0.0]
    assert tt.square(tt.tensor([True, False])).tolist() == [1, 0]
    assert tt.square(tt.tensor([3], dtype=tt.int8)).dtype is tt.int8
    leaf = _leaf([2.0, -4.0], device)
    assert gradcheck(tt.reciprocal, (leaf,)) and gradgradcheck(tt.reciprocal, (leaf,))
    y = 2 / leaf                       # torch's __rtruediv__: reciprocal() * 2
    assert type(y.grad_fn).__name__ == "MulBackward0"
    assert type(y.grad_fn.next_functions[0][0]).__name__ == "ReciprocalBackward0"
    with pytest.raises(TypeError, match="unsupported operand type"):
        "a" / leaf


def test_hardtanh_gradient_only_strictly_inside(device):
    x = _leaf([-1.0, 0.0, 1.0, 2.0, -3.0], device)
    y = F.hardtanh(x)
    assert _host(y).tolist() == [-1.0, 0.0, 1.0, 1.0, -1.0]
    assert type(y.grad_fn).__name__ == "HardtanhBackward0"
    y.sum().backward()
    assert _host(x.grad).tolist() == [0.0, 1.0, 0.0, 0.0, 0.0]        # torch: 0 at the bounds
    assert _host(F.relu6(tt.tensor([-1.0, 7.0, 3.0], device=device))).tolist() == [0.0, 6.0, 3.0]
    z = tt.tensor([-5.0, 0.5], device=device)
    F.hardtanh_(z, -2.0, 2.0)
    assert _host(z).tolist() == [-2.0, 0.5]
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(z, 1.0, 0.0)


def test_hardtanh_modules():
    assert repr(tt.nn.Hardtanh()) == "Hardtanh(min_val=-1.0, max_val=1.0)"
    assert repr(tt.nn.Hardtanh(-2, 3, True)) == "Hardtanh(min_val=-2, max_val=3, inplace=True)"
    assert repr(tt.nn.ReLU6()) == "ReLU6()" and repr(tt.nn.ReLU6(True)) == "ReLU6(inplace=True)"
    with pytest.raises(AssertionError, match=r"max_val \(0\) must be greater than min_val \(1\)"):
        tt.nn.Hardtanh(1, 0)
    assert tt.nn.ReLU6()(tt.tensor([-1.0, 9.0])).tolist() == [0.0, 6.0]
