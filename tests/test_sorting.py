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


# --------------------------------------------------------------------------- searchsorted, bucketize, isin
def test_searchsorted_matches_torch_including_nan():
    s = tt.tensor([[1, 3, 5, 7, 9], [2, 4, 6, 8, 10]])
    v = tt.tensor([[3, 6, 9], [3, 6, 9]])
    assert to_numpy(tt.searchsorted(s, v)).tolist() == [[1, 3, 4], [1, 2, 4]]
    assert to_numpy(tt.searchsorted(s, v, side="right")).tolist() == [[2, 3, 5], [1, 3, 4]]
    assert tt.searchsorted(s, v, out_int32=True).dtype is tt.int32
    assert tt.searchsorted(tt.tensor([1, 3, 5, 7, 9]), 6).item() == 3 and tt.bucketize(4, tt.tensor([1, 3, 5])).item() == 2
    r = tt.searchsorted(tt.tensor([1.0, 3.0, NAN]), tt.tensor([NAN, 2.0, math.inf]))
    assert to_numpy(r).tolist() == [3, 1, 3]                 # torch's binary search, NaN included
    sorter = tt.tensor([1, 3, 0, 4, 2])
    assert to_numpy(tt.searchsorted(tt.tensor([5, 1, 9, 3, 7]), tt.tensor([3, 6, 9]), sorter=sorter)).tolist() == [1, 3, 4]
    assert to_numpy(tt.bucketize(tt.tensor([[3, 6, 9], [1, 10, 5]]), tt.tensor([1, 3, 5, 7, 9]), right=True)).tolist() == \
        [[2, 3, 5], [1, 5, 3]]


def test_searchsorted_errors_are_torchs():
    s = tt.tensor([[1, 3, 5, 7, 9], [2, 4, 6, 8, 10]])
    api = r"^torch\.searchsorted\(\): "
    cases = [((s, tt.tensor([1])), {"side": "foo"}, RuntimeError, api + "side can only be 'left' or 'right' but got foo$"),
             ((s, s), {"right": True, "side": "left"}, RuntimeError,
              api + "side and right can't be set to opposites, got side of left while right was True$"),
             ((s, 6), {}, RuntimeError, api + r"input value can be a scalar only when boundaries tensor dimension is 1, "
              r"but we got boundaries tensor dim\(2\) and input value's dim\(0\) numel\(1\)$"),
             ((s, tt.tensor([[3], [6], [9]])), {}, RuntimeError, api + r"boundaries tensor should be 1 dimension or the "
              r"first N-1 dimensions of boundaries tensor and input value tensor must match, but we got boundaries "
              r"tensor \[2, 5\] and input value tensor \[3, 1\]$"),
             ((tt.tensor(3), tt.tensor([1])), {}, RuntimeError,
              api + "boundaries tensor should have positive dimension, but got 0 dimension$"),
             ((tt.tensor([5, 1, 9]), tt.tensor([3])), {"sorter": tt.tensor([1, 0], dtype=tt.int64)}, RuntimeError,
              api + r"boundary and sorter must have the same size, but got boundary tensor \[3\]and got sorter tensor \[2\]$"),
             ((tt.tensor([5, 1, 9]), tt.tensor([3])), {"sorter": tt.tensor([1, 0, 2], dtype=tt.int32)}, RuntimeError,
              api + "sorter must be a tensor of long dtype but got dtype Int$"),
             ((tt.tensor([5, 1, 9]), tt.tensor([3])), {"sorter": tt.tensor([1, 0, 3])}, RuntimeError,
              api + "sorter index out of range$"),
             ((tt.tensor([False, True]), tt.tensor([True])), {}, NotImplementedError,
              r"^\"searchsorted_out_cpu\" not implemented for 'Bool'$"),
             ((tt.tensor([1.0, 2.0]), tt.tensor([1.5])), {"out": tt.empty(0, dtype=tt.int32)}, RuntimeError,
              api + r"output tensor's dtype is wrong, it can only be Int\(int32\) or Long\(int64\) depending on whether "
              r"out_int32 flag is True, but we got output tensor's dtype Int and out_int32 flag is False$")]
    for args, kwargs, error, message in cases:
        with pytest.raises(error, match=message):
            tt.searchsorted(*args, **kwargs)
    with pytest.raises(RuntimeError, match=r"^boundaries tensor must be 1 dimension, but got dim\(2\)$"):
        tt.bucketize(tt.tensor([3]), tt.tensor([[1, 3]]))


def test_isin_argwhere_match_torch():
    assert to_numpy(tt.isin(tt.tensor([NAN, 1.0, -0.0]), tt.tensor([NAN, 1.0, 0.0]))).tolist() == [False, True, True]
    assert to_numpy(tt.isin(tt.tensor([1, 2]), tt.tensor([1.5, 2.0]))).tolist() == [False, True]
    assert tt.isin(2, tt.tensor([2, 3])).item() and to_numpy(tt.isin(tt.tensor([2, 3]), 2)).tolist() == [True, False]
    assert to_numpy(tt.isin(tt.tensor([[1, 2], [3, 4]]), tt.tensor([2, 3]), invert=True)).tolist() == [[True, False], [False, True]]
    with pytest.raises(RuntimeError, match=r"^Unsupported input type encountered for isin\(\): Bool$"):
        tt.isin(tt.tensor([True]), tt.tensor([True]))
    with pytest.raises(TypeError, match=r"^isin\(\) received an invalid combination of arguments - got \(int, int\)"):
        tt.isin(2, 3)
    assert tt.argwhere(tt.tensor(5)).shape == (1, 0) and tt.argwhere(tt.tensor(0)).shape == (0, 0)
    assert to_numpy(tt.tensor([[1, 0], [0, 3]]).argwhere()).tolist() == [[0, 0], [1, 1]]


# --------------------------------------------------------------------------- unique, counting
def test_unique_matches_torch():
    x = tt.tensor([NAN, 1.0, NAN, -0.0, 0.0])
    out, inverse, counts = tt.unique(x, return_inverse=True, return_counts=True)
    assert np.signbit(to_numpy(out)[0]) and np.isnan(to_numpy(out)[2:]).all()      # -0.0 first; NaNs apart
    assert to_numpy(inverse).tolist() == [2, 1, 3, 0, 0] and to_numpy(counts).tolist() == [2, 1, 1, 1]
    u, i, c = tt.unique(tt.tensor([[1, 2], [0, 5], [1, 2]]), dim=0, return_inverse=True, return_counts=True)
    assert to_numpy(u).tolist() == [[0, 5], [1, 2]] and to_numpy(i).tolist() == [1, 0, 1] and to_numpy(c).tolist() == [1, 2]
    assert to_numpy(tt.unique(tt.tensor([[NAN, 1.0], [NAN, 1.0]]), dim=0)).shape == (2, 2)      # NaN rows differ
    u, i, c = tt.unique(tt.tensor(3), return_inverse=True, return_counts=True)
    assert u.shape == (1,) and i.shape == () and to_numpy(c).tolist() == [1]
    with pytest.raises(RuntimeError, match="^There are 0 sized dimensions, and they aren't selected, so unique cannot be applied$"):
        tt.unique(tt.empty(2, 0), dim=0)
    with pytest.raises(IndexError, match="^Dimension specified as 0 but tensor has no dimensions$"):
        tt.unique(tt.tensor(3), dim=0)
    u, i, c = tt.unique_consecutive(tt.tensor([1, 1, 2, 2, 3, 1, 1, 2]), return_inverse=True, return_counts=True)
    assert to_numpy(u).tolist() == [1, 2, 3, 1, 2] and to_numpy(i).tolist() == [0, 0, 1, 1, 2, 3, 3, 4]
    assert to_numpy(tt.unique_consecutive(tt.tensor([NAN, NAN, 1.0]), return_counts=True)[1]).tolist() == [1, 1, 1]
    r = tt.unique(tt.tensor([1.0, 2.0, 2.0], requires_grad=True))
    assert r.requires_grad and type(r.grad_fn).__name__ == "Unique2Backward0"
    with pytest.raises(NotImplementedError, match=r"^the derivative for '_unique2' is not implemented\.$"):
        r.sum().backward()
    assert type(tt.unique_consecutive(tt.tensor([1.0], requires_grad=True)).grad_fn).__name__ == "UniqueConsecutiveBackward0"


def test_counting_matches_torch():
    assert to_numpy(tt.bincount(tt.tensor([1, 1, 3, 0]), minlength=6)).tolist() == [1, 2, 0, 1, 0, 0]
    w = tt.bincount(tt.tensor([1, 1, 3]), tt.tensor([0.5, 0.25, 2.0]))
    assert w.dtype is tt.float32 and to_numpy(w).tolist() == [0.0, 0.75, 0.0, 2.0]
    assert tt.bincount(tt.tensor([1, 1, 3]), tt.tensor([1, 2, 3])).dtype is tt.float64
    assert to_numpy(tt.bincount(tt.tensor([], dtype=tt.int64), minlength=3)).tolist() == [0, 0, 0]
    # histc's bin is int((x - min) / (max - min) * bins) in float32; histogram's the edges' (torch's linspace)
    assert to_numpy(tt.histc(tt.tensor([0.3, 0.6, 0.9, 0.1]), bins=3, min=0, max=0.9)).tolist() == [1.0, 1.0, 2.0]
    assert to_numpy(tt.histc(tt.tensor([2.0, 2.0]), bins=4)).tolist() == [0.0, 0.0, 2.0, 0.0]
    assert tt.histc(tt.tensor([1.0, 2.0], dtype=tt.float16), bins=3).dtype is tt.float16
    h, e = tt.histogram(tt.tensor([0.3, 0.6, 0.9, 0.1, 0.7]), bins=3, range=(0.0, 0.9))
    assert to_numpy(h).tolist() == [1.0, 1.0, 3.0]
    assert to_numpy(e).tolist() == [0.0, 0.29999998211860657, 0.6000000238418579, 0.8999999761581421]
    h, e = tt.histogram(tt.tensor([2.0, 2.0]), bins=2)
    assert to_numpy(e).tolist() == [1.5, 2.0, 2.5] and to_numpy(tt.histogram(tt.tensor([]), bins=2)[1]).tolist() == [0.0, 0.5, 1.0]
    assert to_numpy(tt.histogram(tt.tensor([1.0]), bins=tt.tensor([3.0, 1.0])).hist).tolist() == [0.0]
    r = tt.histogramdd(tt.tensor([[0.0, 1.0], [1.0, 0.0], [2.0, 0.0], [2.0, 2.0]]), bins=[2, 2],
                       weight=tt.tensor([1.0, 2.0, 4.0, 8.0]), density=True)
    np.testing.assert_allclose(to_numpy(r.hist), [[0.0, 0.06666667], [0.4, 0.53333336]], rtol=1e-6)
    assert type(r) is tt.return_types.histogramdd and len(r.bin_edges) == 2
    x = tt.tensor([1.0, 2.0], requires_grad=True)
    assert not tt.histc(x, 2).requires_grad
    h = tt.histogram(x, 2)[0]
    assert h.requires_grad and type(h.grad_fn).__name__ == "torch::autograd::NotImplemented"
    with pytest.raises(RuntimeError, match=r"^derivative for aten::histogram is not implemented$"):
        h.sum().backward()


def test_counting_errors_are_torchs():
    cases = [(tt.bincount, (tt.tensor([1, -1]),), {}, RuntimeError, r"^bincount only supports 1-d non-negative integral inputs\.$"),
             (tt.bincount, (tt.tensor([[1]]),), {}, RuntimeError, r"^bincount only supports 1-d non-negative integral inputs\.$"),
             (tt.bincount, (tt.tensor([1.0]),), {}, NotImplementedError, r"^\"bincount_cpu\" not implemented for 'Float'$"),
             (tt.bincount, (tt.tensor([1]),), {"minlength": -1}, RuntimeError, r"^minlength should be >= 0$"),
             (tt.bincount, (tt.tensor([1, 2]), tt.tensor([1.0])), {}, RuntimeError,
              r"^weights should be 1-d and have the same length as input$"),
             (tt.histc, (tt.tensor([1, 2]),), {}, NotImplementedError, r"^\"histogram_cpu\" not implemented for 'Long'$"),
             (tt.histc, (tt.tensor([1.0, NAN]),), {}, RuntimeError, r"^torch\.histc: range of \[-nan, -nan\] is not finite$"),
             (tt.histc, (tt.tensor([1.0, math.inf]),), {}, RuntimeError, r"^torch\.histc: range of \[1, inf\] is not finite$"),
             (tt.histc, (tt.tensor([1.0]),), {"min": 3, "max": 1}, RuntimeError, r"^torch\.histc: max must be larger than min$"),
             (tt.histc, (tt.tensor([1.0]),), {"bins": 0}, RuntimeError,
              r"^torch\.histogram\(\): bins must be > 0, but got 0 for dimension 0$"),
             (tt.histogram, (tt.tensor([1, 2]), 2), {}, NotImplementedError, r"^\"histogramdd\" not implemented for 'Long'$"),
             (tt.histogram, (tt.tensor([1.0, NAN]), 2), {}, RuntimeError,
              r"^torch\.histogramdd: dimension 0's range \[nan, nan\] is not finite$"),
             (tt.histogram, (tt.tensor([1.0]), 2), {"range": (3.0, 1.0)}, RuntimeError,
              r"^torch\.histogramdd: min should not exceed max, but got min 3 max 1 for dimension 0$"),
             (tt.histogram, (tt.tensor([1.0]), 2), {"weight": tt.tensor([1.0], dtype=tt.float64)}, RuntimeError,
              r"^torch\.histogramdd: if weight tensor is provided, input tensor and weight tensor should have the same "
              r"dtype, but got input\(float\), and weight\(double\)$"),
             (tt.histogram, (tt.tensor([1.0]), tt.tensor([1, 2])), {}, RuntimeError,
              r"input tensor and bins tensors should have the same dtype, but got input with dtype float and bins for "
              r"dimension 0 with dtype long int$"),
             (tt.histogramdd, (tt.tensor([0.0, 1.0]), 2), {}, RuntimeError,
              r"^torch\.histogramdd: input tensor should have at least 2 dimensions$"),
             (tt.histogramdd, (tt.tensor([[1.0, 2.0]]), [2]), {}, RuntimeError,
              r"^histogramdd: The size of bins must be equal to the innermost dimension of the input\.$"),
             (tt.histogramdd, (tt.tensor([[1.0, 2.0]]), 2), {"range": [0.0, 1.0]}, RuntimeError,
              r"^torch\.histogramdd: for a 2-dimensional histogram range should have 4 elements, but got 2$")]
    for fn, args, kwargs, error, message in cases:
        with pytest.raises(error, match=message):
            fn(*args, **kwargs)
    with pytest.raises(RuntimeError, match=r"^torch\.histogram: input tensor and hist tensor should have the same "
                                           r"dtype, but got input float and hist double$"):
        tt.histc(tt.tensor([1.0, 2.0]), bins=3, out=tt.empty(0, dtype=tt.float64))
