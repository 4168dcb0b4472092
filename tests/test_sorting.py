"""The sorting family's torch edge cases (tritensor/ops/sorting.py) beyond the OpInfo parity and
gradient records of tests/opinfo_sorting.py: torch's order of NaN and signed zeros, the return
types, output layouts, argument errors, out=, node names and saved tensors. Expected values are
literals recorded from torch 2.13 (no torch import here).
"""
import math

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy

NAN = math.nan
MIXED = [3.0, NAN, -0.0, 0.0, 1.0, NAN, 3.0, -1.0]


# --------------------------------------------------------------------------- sort, argsort, msort, topk
def test_sort_orders_nan_and_signed_zeros_as_torch(device):
    x = tt.tensor(MIXED, device=device)
    v, i = tt.sort(x)
    assert to_numpy(i).tolist() == [7, 2, 3, 4, 0, 6, 1, 5]
    assert np.signbit(to_numpy(v)[1]) and not np.signbit(to_numpy(v)[2])     # -0.0 then 0.0: stable
    assert to_numpy(tt.sort(x, descending=True).indices).tolist() == [1, 5, 0, 6, 4, 2, 3, 7]
    assert to_numpy(x.argsort(descending=True, stable=True)).tolist() == [1, 5, 0, 6, 4, 2, 3, 7]
    top = x.topk(3)
    assert to_numpy(top.indices).tolist() == [1, 5, 0] and np.isnan(to_numpy(top.values)[:2]).all()
    # torch's cpu topk returns [7, 3, 2] here (its partial sort); tritensor's ties come in index order
    assert to_numpy(x.topk(3, largest=False).indices).tolist() == [7, 2, 3]


def test_sort_of_bool_and_unsigned(device):
    b = tt.tensor([True, False, True], device=device)
    assert to_numpy(tt.sort(b).indices).tolist() == [1, 0, 2]
    u = tt.tensor([3, 1, 2, 255], dtype=tt.uint8, device=device)
    v, i = tt.sort(u, descending=True)
    assert to_numpy(v).tolist() == [255, 3, 2, 1] and to_numpy(i).tolist() == [3, 0, 2, 1]


def test_return_types_are_torchs_named_tuples():
    v, i = tt.tensor([3.0, 1.0]).sort()
    r = tt.sort(tt.tensor([3.0, 1.0]))
    assert isinstance(r, tuple) and type(r) is tt.return_types.sort and r._fields == ("values", "indices")
    assert repr(tt.topk(tt.tensor([1.0, 3.0]), 1)) == (
        "tritensor.return_types.topk(\nvalues=tensor([3.]),\nindices=tensor([1]))")
    assert tt.return_types.histogram._fields == ("hist", "bin_edges")
    assert type(tt.max(tt.tensor([1.0, 2.0]), 0)).__name__ == "max"


def test_outputs_follow_torchs_layouts(device):
    x = tt.randn(3, 4, device=device)
    v, i = x.t().sort(0)                       # torch: the input's layout
    assert v.stride() == (1, 4) and i.stride() == (1, 4)
    p = tt.randn(2, 3, 4, device=device).permute(2, 0, 1)
    assert p.sort(1).values.stride() == (1, 12, 4) and tt.msort(p).stride() == (1, 12, 4)
    assert p.argsort(1).stride() == (1, 12, 4)
    assert p.topk(2, 1).values.stride() == (6, 3, 1)      # topk: contiguous


def test_zero_d_and_empty(device):
    s = tt.tensor(2.5, device=device)
    assert tt.sort(s).values.item() == 2.5 and tt.sort(s, -1).indices.item() == 0
    assert tt.topk(s, 0).values.item() == 2.5 and tt.topk(s, 1).indices.shape == ()
    assert tt.msort(s).item() == 2.5
    e = tt.empty(0, 3, device=device)
    assert tt.sort(e, 0).values.shape == (0, 3) and tt.topk(e, 0, 0).indices.shape == (0, 3)
    assert tt.topk(e, 1, 1).values.shape == (0, 1)


def test_errors_are_torchs():
    x = tt.randn(3, 4)
    for k in (5, -1):
        with pytest.raises(RuntimeError, match=r"^selected index k out of range$"):
            tt.topk(x, k)
    with pytest.raises(RuntimeError, match=r"^selected index k out of range$"):
        tt.topk(tt.tensor(3.0), 2)
    with pytest.raises(RuntimeError, match=r"^topk does not support bool dtypes on CPU$"):
        tt.topk(tt.tensor([True]), 1)
    with pytest.raises(IndexError, match=r"^Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)$"):
        tt.sort(x, 2)
    with pytest.raises(IndexError, match=r"expected to be in range of \[-1, 0\], but got 1"):
        tt.sort(tt.tensor(3.0), dim=1)
    with pytest.raises(TypeError, match=r"^topk\(\): argument 'k' \(position 2\) must be int, not float$"):
        tt.topk(x, 2.5)
    with pytest.raises(TypeError, match=r"^sort\(\): argument 'input' \(position 1\) must be Tensor, not list$"):
        tt.sort([1, 2])


def test_out_wants_exact_dtypes():
    x = tt.tensor([2.0, 1.0])
    v, i = tt.empty(0), tt.empty(0, dtype=tt.int64)
    r = tt.sort(x, out=(v, i))
    assert r.values is v and r.indices is i and to_numpy(i).tolist() == [1, 0]
    with pytest.raises(RuntimeError, match=r"^Expected out tensor to have dtype float, but got double instead$"):
        tt.sort(x, out=(tt.empty(0, dtype=tt.float64), tt.empty(0, dtype=tt.int64)))
    with pytest.raises(RuntimeError, match=r"^Expected out tensor to have dtype long int, but got int instead$"):
        tt.sort(x, out=(tt.empty(0), tt.empty(0, dtype=tt.int32)))
    with pytest.raises(RuntimeError, match=r"dtype float, but got double"):
        tt.msort(x, out=tt.empty(0, dtype=tt.float64))
    o = tt.empty(0)
    assert tt.msort(x, out=o) is o and to_numpy(o).tolist() == [1.0, 2.0]
    assert to_numpy(tt.topk(x, 1, out=(tt.empty(0), tt.empty(0, dtype=tt.int64))).values).tolist() == [2.0]


def test_node_names_and_saved_indices(device):
    x = tt.randn(3, 4, dtype=tt.float64, device=device, requires_grad=True)
    v, i = x.sort(1)
    assert type(v.grad_fn).__name__ == "SortBackward0" and not i.requires_grad and i.grad_fn is None
    assert to_numpy(v.grad_fn._saved_indices).tolist() == to_numpy(i).tolist() and v.grad_fn._saved_dim == 1
    assert type(tt.msort(x).grad_fn).__name__ == "SortBackward0"
    assert type(x.topk(2)[0].grad_fn).__name__ == "TopkBackward0"
    assert x.argsort().grad_fn is None and not x.argsort().requires_grad
    (v * tt.arange(4, device=device)).sum().backward()
    expect = np.zeros((3, 4))
    np.put_along_axis(expect, to_numpy(i), np.arange(4.0)[None, :].repeat(3, 0), 1)
    np.testing.assert_array_equal(to_numpy(x.grad), expect)


def test_indices_changed_in_place_are_caught():
    x = tt.tensor([3.0, 1.0, 2.0], requires_grad=True)
    v, i = x.sort()
    i.add_(0)
    with pytest.raises(RuntimeError, match=r"inplace operation: \[torch.LongTensor \[3\]\] is at version 1; expected version 0"):
        v.sum().backward()


def test_long_rows_of_8_bit_keys_on_cuda():
    """Rows past the emulated tile (64), descending, of int8 (negative keys in int32, inverted):
    the emulated kernels against the cpu device (the NumPy reference)."""
    x = tt.tensor(np.random.default_rng(7).integers(-128, 128, (2, 130)), dtype=tt.int8)
    got, want = tt.sort(x.cuda().t(), 0, descending=True), tt.sort(x.t(), 0, descending=True)
    np.testing.assert_array_equal(to_numpy(got.indices), to_numpy(want.indices))
    np.testing.assert_array_equal(to_numpy(got.values), to_numpy(want.values))


# --------------------------------------------------------------------------- kthvalue, median, mode
def test_selections_match_torchs_values_and_indices(device="cpu"):
    """(cpu: the emulated kernels meet the same oracle in tests/opinfo_sorting.py's records)"""
    y = tt.tensor([1, 2, 2, 1, 2, 1, 3, 3], device=device)
    x = tt.tensor(MIXED, device=device)
    # torch's kthvalue(y, 3) index is 0 (its quickselect); tritensor's is the stable order's
    assert (tt.kthvalue(y, 3).values.item(), tt.kthvalue(y, 3).indices.item()) == (1, 5)
    assert tt.kthvalue(x, 8).indices.item() == 5 and math.isnan(tt.kthvalue(x, 8).values.item())
    assert tt.median(y).item() == 2 and tuple(int(t.item()) for t in tt.median(y, 0)) == (2, 1)
    m = tt.median(x, 0)
    assert math.isnan(m.values.item()) and m.indices.item() == 1          # the first NaN
    nm = tt.nanmedian(x, 0)
    assert (nm.values.item(), nm.indices.item()) == (0.0, 3)
    assert math.isnan(tt.median(x).item()) and tt.nanmedian(x).item() == 0.0
    r = tt.nanmedian(tt.tensor([[NAN, NAN], [1.0, NAN]], device=device), 1)
    assert math.isnan(r.values[0].item()) and to_numpy(r.indices).tolist() == [0, 0]
    assert tuple(int(t.item()) for t in tt.mode(y)) == (1, 5)
    mo = tt.mode(tt.tensor([[2, 2, 1, 1, 3], [5, 4, 4, 5, 5]], device=device), 1)
    assert to_numpy(mo.values).tolist() == [1, 5] and to_numpy(mo.indices).tolist() == [3, 4]
    assert tuple(int(t.item()) for t in tt.mode(tt.tensor([True, False, False], device=device))) == (0, 2)
    k = tt.kthvalue(tt.arange(6.0, device=device).view(2, 3), 2, 1, True)
    assert to_numpy(k.values).tolist() == [[1.0], [4.0]] and to_numpy(k.indices).tolist() == [[1], [1]]


def test_selection_edge_cases_and_errors():
    x = tt.arange(6.0).view(2, 3)
    for k in (0, 4, -1):
        with pytest.raises(RuntimeError, match=r"^kthvalue\(\): selected number k out of range for dimension 1$"):
            tt.kthvalue(x, k)
    with pytest.raises(RuntimeError, match=r"out of range for dimension 0$"):
        tt.kthvalue(tt.tensor(2.0), 2)
    with pytest.raises(IndexError, match=r"^kthvalue\(\): Expected reduction dim 0 to have non-zero size\.$"):
        tt.kthvalue(tt.empty(0), 1)
    with pytest.raises(IndexError, match=r"^median\(\): Expected reduction dim 0 to have non-zero size\.$"):
        tt.median(tt.empty(0, 2), 0)
    with pytest.raises(IndexError, match=r"^mode\(\): Expected reduction dim 1 to have non-zero size\.$"):
        tt.mode(tt.empty(2, 0), 1)
    assert tt.kthvalue(tt.empty(0, 2), 1).values.shape == (0,) and tt.mode(tt.empty(0, 2), 1).indices.shape == (0,)
    assert math.isnan(tt.median(tt.empty(0)).item()) and math.isnan(tt.nanmedian(tt.empty(0)).item())
    with pytest.raises(NotImplementedError, match=r"^\"kthvalue_cpu\" not implemented for 'Bool'$"):
        tt.kthvalue(tt.tensor([True]), 1)
    with pytest.raises(NotImplementedError, match=r"^\"median_cpu\" not implemented for 'Bool'$"):
        tt.median(tt.tensor([True]))
    with pytest.raises(NotImplementedError, match=r"^\"median_out\" not implemented for 'Bool'$"):
        tt.nanmedian(tt.tensor([True]), 0)
    with pytest.raises(TypeError, match=r"^median\(\): argument 'dim' must be int, not NoneType$"):
        tt.median(x, dim=None)
    with pytest.raises(TypeError, match=r"^kthvalue\(\): argument 'k' \(position 2\) must be int, not float$"):
        tt.kthvalue(x, 1.5)
    with pytest.raises(TypeError, match=r'^median\(\) missing 1 required positional arguments: "dim"$'):
        tt.median(x, out=tt.empty(0))
    v, i = tt.empty(0), tt.empty(0, dtype=tt.int64)
    assert tt.median(x, 1, out=(v, i)).values is v and to_numpy(i).tolist() == [1, 1]
    assert to_numpy(tt.mode(x, 1, out=(tt.empty(0), tt.empty(0, dtype=tt.int64))).values).tolist() == [0.0, 3.0]


def test_selection_node_names_and_gradients():
    x = tt.tensor([[1.0, 2.0, 2.0], [3.0, 3.0, 3.0]], requires_grad=True)
    tt.median(x).backward()          # torch: split evenly among the elements equal to the median
    assert to_numpy(x.grad).tolist() == [[0.0, 0.5, 0.5], [0.0, 0.0, 0.0]]
    y = tt.tensor([1.0, NAN, 1.0], requires_grad=True)
    tt.median(y).backward()
    assert to_numpy(y.grad).tolist() == [0.0, 1.0, 0.0]
    y.grad = None
    tt.nanmedian(y).backward()
    assert to_numpy(y.grad).tolist() == [0.5, 0.0, 0.5]
    names = {"MedianBackward0": tt.median(x), "NanmedianBackward0": tt.nanmedian(x),
             "MedianBackward1": tt.median(x, 1)[0], "NanmedianBackward1": tt.nanmedian(x, 1)[0],
             "KthvalueBackward0": tt.kthvalue(x, 2)[0], "ModeBackward0": tt.mode(x, 1)[0]}
    for name, out in names.items():
        assert type(out.grad_fn).__name__ == name
    assert tt.mode(x, 1)[0].grad_fn._saved_keepdim is False and tt.median(x).grad_fn._saved_self is not None


def test_second_derivatives_on_cpu():
    """The emulated device checks these first derivatives (tests/opinfo_sorting.py); the second
    ones of the selections, median() and the quantiles are checked here, on cpu."""
    x = tt.tensor(np.random.default_rng(3).standard_normal((2, 4)), dtype=tt.float64, requires_grad=True)
    q = tt.tensor([0.2, 0.5, 1.0], dtype=tt.float64)
    for fn in (lambda t: tt.median(t), lambda t: tt.nanmedian(t.t()), lambda t: t.kthvalue(3, 1)[0],
               lambda t: t.mode(0)[0], lambda t: t.topk(2, 1)[0], lambda t: t.nanmedian(1)[0],
               lambda t: tt.quantile(t, q, dim=1), lambda t: tt.nanquantile(t, 0.4, interpolation="midpoint"),
               lambda t: tt.quantile(t, 0.75, dim=0, interpolation="nearest")):
        assert tt.autograd.gradcheck(fn, (x,)) and tt.autograd.gradgradcheck(fn, (x,))


# --------------------------------------------------------------------------- quantile / nanquantile
def test_quantile_values_recorded_from_torch(device="cpu"):
    """(cpu: the composite is the same on every device; its records run the emulated device)"""
    z = tt.tensor([[3.0, 1.0, 4.0, 1.0], [5.0, 9.0, 2.0, 6.0]], device=device)
    qs = tt.tensor([0.0, 0.25, 0.5, 0.7, 1.0], device=device)
    expect = {"linear": [[1.0, 2.0], [1.0, 4.25], [2.0, 5.5], [3.1, 6.3], [4.0, 9.0]],
              "lower": [[1.0, 2.0], [1.0, 2.0], [1.0, 5.0], [3.0, 6.0], [4.0, 9.0]],
              "higher": [[1.0, 2.0], [1.0, 5.0], [3.0, 6.0], [4.0, 9.0], [4.0, 9.0]],
              "midpoint": [[1.0, 2.0], [1.0, 3.5], [2.0, 5.5], [3.5, 7.5], [4.0, 9.0]],
              "nearest": [[1.0, 2.0], [1.0, 5.0], [3.0, 6.0], [3.0, 6.0], [4.0, 9.0]]}
    for how, values in expect.items():
        np.testing.assert_allclose(to_numpy(tt.quantile(z, qs, dim=1, interpolation=how)), values, rtol=1e-6)
    half = tt.quantile(tt.arange(6.0, device=device), tt.tensor([0.1, 0.3, 0.5, 0.7, 0.9], device=device),
                       interpolation="nearest")
    assert to_numpy(half).tolist() == [0.0, 2.0, 2.0, 4.0, 4.0]          # ranks round half to even
    assert tt.quantile(z, 0.5).item() == 3.5 and tt.quantile(z, 0.5, keepdim=True).shape == (1, 1)
    assert tt.quantile(z, tt.tensor([0.5, 0.1], device=device), dim=0, keepdim=True).shape == (2, 1, 4)
    w = tt.tensor([[1.0, NAN, 3.0, 2.0], [NAN] * 4], device=device)
    assert np.isnan(to_numpy(tt.quantile(w, 0.5, dim=1))).all()
    np.testing.assert_array_equal(to_numpy(tt.nanquantile(w, tt.tensor([0.25, 0.5], device=device), dim=1)),
                                  [[1.5, NAN], [2.0, NAN]])
    inf = math.inf    # torch takes a whole rank itself (NumPy's lerp towards the next one gives NaN)
    assert tt.quantile(tt.tensor([1.0, 3.0, inf], device=device), 0.5).item() == 3.0
    assert math.isnan(tt.quantile(tt.tensor([1.0, inf, inf], device=device), 0.75).item())
    assert to_numpy(tt.quantile(tt.tensor(2.0, device=device), tt.tensor([0.3, 0.5], device=device), dim=0)).tolist() == [2.0, 2.0]


def test_quantile_errors_are_torchs():
    z = tt.tensor([[3.0, 1.0], [5.0, 9.0]])
    cases = [((z, 1.5), {}, RuntimeError, r"^quantile\(\) q must be in the range \[0, 1\] but got 1.5$"),
             ((z, tt.tensor([1.5])), {}, RuntimeError, r"^quantile\(\) q values must be in the range \[0, 1\]$"),
             ((z, tt.tensor([[0.5]])), {}, RuntimeError, r"^quantile\(\) q must be a scalar or 1D tensor$"),
             ((tt.tensor([1, 2]), 0.5), {}, RuntimeError, r"^quantile\(\) input tensor must be either float or double dtype$"),
             ((z.half(), 0.5), {}, RuntimeError, r"either float or double dtype$"),
             ((z, tt.tensor([0.5], dtype=tt.float64)), {}, RuntimeError,
              r"^quantile\(\) q tensor must be same dtype as the input tensor$"),
             ((tt.empty(0), 0.5), {}, RuntimeError, r"^quantile\(\) input tensor must be non-empty$"),
             ((z, 0.5), {"interpolation": "foo"}, RuntimeError,
              r"^quantile\(\) interpolation must be one of linear, lower, higher, midpoint or nearest, but got foo$"),
             ((z, 0.5), {"out": tt.empty(0, dtype=tt.float64)}, RuntimeError,
              r"^quantile\(\) out tensor must be same dtype as the input tensor$")]
    for args, kwargs, error, message in cases:
        with pytest.raises(error, match=message):
            tt.quantile(*args, **kwargs)
    o = tt.empty(0)
    assert tt.nanquantile(z, 0.5, out=o) is o and o.item() == 4.0
