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
