"""The Tensor object itself: Size, layout metadata, host access, repr, dtypes and casts.

Every property is checked against NumPy or a hand-computed value, on cpu and on cuda.
"""
import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy

ALL_DTYPES = [tt.bool, tt.int32, tt.int64, tt.float16, tt.bfloat16, tt.float32, tt.float64]
ITEMSIZE = {tt.bool: 1, tt.int32: 4, tt.int64: 8, tt.float16: 2, tt.bfloat16: 2, tt.float32: 4,
            tt.float64: 8}
# values every dtype holds exactly
VALUES = {tt.bool: [[True, False, True], [False, False, True]],
          tt.int32: [[1, -2, 3], [2 ** 30, 0, -7]],
          tt.int64: [[1, -2, 3], [2 ** 40, 0, -7]],
          tt.float16: [[0.5, -1.25, 3.0], [1024.0, 0.0, -0.125]],
          tt.bfloat16: [[0.5, -1.25, 3.0], [1024.0, 0.0, -0.125]],
          tt.float32: [[0.5, -1.25, 3.1], [1e20, 0.0, -1e-7]],
          tt.float64: [[0.5, -1.25, 3.1], [1e200, 0.0, -1e-300]]}


def _np_dtype(dtype):
    return {tt.bool: np.bool_, tt.int32: np.int32, tt.int64: np.int64, tt.float16: np.float32,
            tt.bfloat16: np.float32, tt.float32: np.float32, tt.float64: np.float64}[dtype]


def _as_device(device):
    return tt.device("cuda", 0) if device == "cuda" else tt.device("cpu")


# ----------------------------------------------------------------------------- Size
def test_size_is_a_tuple_with_torch_repr():
    s = tt.Size([2, 3])
    assert isinstance(s, tuple)
    assert s == (2, 3)
    assert tuple(s) == (2, 3)
    assert repr(s) == "tritensor.Size([2, 3])"
    assert repr(tt.Size([])) == "tritensor.Size([])"
    assert s.numel() == 6
    assert tt.Size([]).numel() == 1
    assert tt.Size([4, 0, 2]).numel() == 0
    assert isinstance(s[0:1], tt.Size) and s[0:1] == (2,)
    assert s[-1] == 3 and isinstance(s[-1], int)


def test_tensor_shape_is_a_size(device):
    x = tt.zeros(2, 3, device=device)
    assert isinstance(x.shape, tt.Size)
    assert x.shape == (2, 3)
    assert x.size() == tt.Size([2, 3])
    assert repr(x.shape) == "tritensor.Size([2, 3])"


# ----------------------------------------------------------------------------- layout metadata
def _layouts(device):
    base = tt.zeros(2, 3, 4, device=device)
    col = tt.zeros(3, 1, device=device)
    return {
        # name: (tensor, shape, strides, offset, contiguous)
        "contiguous": (base, (2, 3, 4), (12, 4, 1), 0, True),
        "transposed": (base.transpose(0, 2), (4, 3, 2), (1, 4, 12), 0, False),
        "sliced": (base[1, :, 1:3], (3, 2), (4, 1), 13, False),
        "step-sliced": (base[:, ::2, 1::2], (2, 2, 2), (12, 8, 2), 1, False),
        "row": (base[1, 2], (4,), (1,), 20, True),
        "expanded": (col.expand(3, 4), (3, 4), (1, 0), 0, False),
        "0-d": (base[1, 2, 3], (), (), 23, True),
        "size-1 dims": (tt.zeros(1, 4, 1, device=device), (1, 4, 1), (4, 1, 1), 0, True),
    }


LAYOUT_NAMES = ["contiguous", "transposed", "sliced", "step-sliced", "row", "expanded", "0-d",
                "size-1 dims"]


@pytest.mark.parametrize("layout", LAYOUT_NAMES)
def test_layout_metadata(device, layout):
    t, shape, strides, offset, contiguous = _layouts(device)[layout]
    assert t.shape == shape
    assert t.size() == shape
    for d in range(len(shape)):
        assert t.size(d) == shape[d]
        assert t.size(d - len(shape)) == shape[d]
        assert t.stride(d) == strides[d]
        assert t.stride(d - len(shape)) == strides[d]
    assert t.stride() == strides
    assert t.storage_offset() == offset
    assert t.dim() == t.ndim == len(shape)
    assert t.numel() == int(np.prod(shape))
    assert t.element_size() == 4
    assert t.dtype is tt.float32
    assert t.device == _as_device(device)
    assert t.is_contiguous() is contiguous
    # data_ptr is the address of the first element
    assert t.data_ptr() == t.untyped_storage().data_ptr() + 4 * offset


def test_size_and_stride_dim_out_of_range(device):
    x = tt.zeros(2, 3, device=device)
    for bad in (2, -3):
        with pytest.raises(IndexError, match="Dimension out of range"):
            x.size(bad)
        with pytest.raises(IndexError, match="Dimension out of range"):
            x.stride(bad)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_element_size(device, dtype):
    x = tt.zeros(3, dtype=dtype, device=device)
    assert x.element_size() == ITEMSIZE[dtype]
    assert x.dtype.itemsize == ITEMSIZE[dtype]


def test_data_ptr_of_views_points_into_base(device):
    x = tt.zeros(4, 5, dtype=tt.float64, device=device)
    assert x[1].data_ptr() == x.data_ptr() + 5 * 8
    assert x[2, 3:].data_ptr() == x.data_ptr() + 13 * 8
    assert x.t().data_ptr() == x.data_ptr()


# ----------------------------------------------------------------------------- contiguous / clone
def test_contiguous_returns_self_when_already_contiguous(device):
    x = tt.arange(6, device=device).view(2, 3)
    y = x.contiguous()
    assert y is x
    assert y.data_ptr() == x.data_ptr()
    row = x[1]
    assert row.contiguous().data_ptr() == row.data_ptr()


@pytest.mark.parametrize("make,ref", [
    (lambda x: x.t(), lambda a: a.T),
    (lambda x: x[:, ::2], lambda a: a[:, ::2]),
    (lambda x: x[:1].expand(4, 6), lambda a: np.broadcast_to(a[:1], (4, 6))),
], ids=["transposed", "step-sliced", "expanded"])
def test_contiguous_copies_when_needed(device, make, ref):
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = tt.tensor(a, device=device)
    v = make(x)
    assert not v.is_contiguous()
    c = v.contiguous()
    assert c.is_contiguous()
    assert c.data_ptr() != v.data_ptr()
    assert c.stride() == tuple(s // 4 for s in np.ascontiguousarray(ref(a)).strides)
    np.testing.assert_array_equal(to_numpy(c), ref(a))
    # a real copy: writing to it leaves the source alone
    c.fill_(-1.0)
    np.testing.assert_array_equal(to_numpy(x), a)


def test_clone_is_new_storage_with_equal_values(device):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = tt.tensor(a, device=device)
    for src in (x, x.t(), x[1:, ::2]):
        c = src.clone()
        assert c.data_ptr() != src.data_ptr()
        assert c.untyped_storage() is not src.untyped_storage()
        assert c.shape == src.shape and c.dtype is src.dtype and c.device == src.device
        np.testing.assert_array_equal(to_numpy(c), to_numpy(src))
        c.fill_(100.0)
    np.testing.assert_array_equal(to_numpy(x), a)


# ----------------------------------------------------------------------------- item / tolist
@pytest.mark.parametrize("dtype,value,pytype", [
    (tt.float32, 2.5, float), (tt.float64, -0.125, float), (tt.float16, 1.5, float),
    (tt.bfloat16, -3.0, float), (tt.int32, -7, int), (tt.int64, 2 ** 40, int), (tt.bool, True, bool),
], ids=lambda v: str(v))
def test_item(device, dtype, value, pytype):
    for t in (tt.tensor(value, dtype=dtype, device=device),
              tt.tensor([value], dtype=dtype, device=device),
              tt.tensor([[value]], dtype=dtype, device=device)):
        v = t.item()
        assert type(v) is pytype
        assert v == value


def test_item_of_a_view_reads_the_right_element(device):
    x = tt.tensor(np.arange(12.0).reshape(3, 4), device=device)
    assert x[2, 1].item() == 9.0
    assert x.t()[3, 1].item() == 7.0
    assert x[1:, ::2][1, 1].item() == 10.0


def test_item_of_many_elements_raises(device):
    with pytest.raises(RuntimeError, match="a Tensor with 3 elements cannot be converted to Scalar"):
        tt.zeros(3, device=device).item()


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_tolist(device, dtype):
    values = VALUES[dtype]
    x = tt.tensor(values, dtype=dtype, device=device)
    expected = np.array(values, dtype=_np_dtype(dtype))
    got = x.tolist()
    assert got == expected.tolist()
    assert type(got[0][0]) is type(expected.tolist()[0][0])
    assert x.t().tolist() == expected.T.tolist()
    assert x[1, 2].tolist() == expected[1, 2].item()     # a 0-d tensor gives a scalar
    assert x[:, 5:].tolist() == [[], []]


# ----------------------------------------------------------------------------- numpy interop
def test_numpy_is_zero_copy_on_cpu():
    x = tt.zeros(2, 3)
    a = x.numpy()
    assert isinstance(a, np.ndarray)
    assert a.dtype == np.float32 and a.shape == (2, 3)
    assert a.ctypes.data == x.data_ptr()
    a[1, 2] = 5.0                       # a write through the array shows in the tensor
    assert x[1, 2].item() == 5.0
    x[0].fill_(7.0)                     # and a write to the tensor shows in the array
    np.testing.assert_array_equal(a, [[7, 7, 7], [0, 0, 5]])


def test_numpy_of_a_view_has_its_strides():
    x = tt.tensor(np.arange(12, dtype=np.int64).reshape(3, 4))
    a = x.t().numpy()
    assert a.strides == (8, 32)
    np.testing.assert_array_equal(a, np.arange(12).reshape(3, 4).T)
    a2 = x[1:, ::2].numpy()
    a2[...] = -1
    np.testing.assert_array_equal(x.numpy()[1:, ::2], -1)


def test_numpy_on_cuda_raises_type_error():
    x = tt.zeros(2, device="cuda")
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        x.numpy()
    np.testing.assert_array_equal(x.cpu().numpy(), [0, 0])


def test_numpy_of_a_tensor_requiring_grad_raises():
    x = tt.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        x.numpy()
    np.testing.assert_array_equal(x.detach().numpy(), [0, 0])


@pytest.mark.parametrize("np_dtype,dtype", [
    (np.float32, tt.float32), (np.float64, tt.float64), (np.float16, tt.float16),
    (np.int32, tt.int32), (np.int64, tt.int64), (np.bool_, tt.bool),
])
def test_from_numpy_shares_memory_both_ways(np_dtype, dtype):
    a = np.arange(6).reshape(2, 3).astype(np_dtype)
    x = tt.from_numpy(a)
    assert x.dtype is dtype
    assert x.device == tt.device("cpu")
    assert x.shape == (2, 3) and x.stride() == (3, 1)
    assert x.data_ptr() == a.ctypes.data
    a[0, 1] = 1 if np_dtype is not np.bool_ else False
    assert x[0, 1].item() == a[0, 1]
    x[1, 2].fill_(0)
    assert a[1, 2] == 0
    np.testing.assert_array_equal(x.numpy(), a)


def test_from_numpy_non_contiguous():
    base = np.arange(30, dtype=np.float64).reshape(5, 6)
    a = base[1::2, ::3]                 # strides (96, 24) bytes
    x = tt.from_numpy(a)
    assert x.shape == (2, 2)
    assert x.stride() == (12, 3)
    assert not x.is_contiguous()
    np.testing.assert_array_equal(x.numpy(), a)
    assert x.tolist() == a.tolist()
    x.fill_(-1.0)                        # writes land in the original array
    np.testing.assert_array_equal(base[1::2, ::3], -1.0)
    assert base[0, 0] == 0.0 and base[1, 1] == 7.0
    t = tt.from_numpy(base.T)
    assert t.stride() == (1, 6)
    np.testing.assert_array_equal(t.numpy(), base.T)


def test_from_numpy_negative_strides_raise():
    a = np.arange(6.0)
    with pytest.raises(ValueError, match="negative"):
        tt.from_numpy(a[::-1])
    with pytest.raises(ValueError, match="negative"):
        tt.from_numpy(np.arange(6.0).reshape(2, 3)[:, ::-1])


def test_from_numpy_then_to_cuda_copies_values():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = tt.from_numpy(a).cuda()
    assert x.device == tt.device("cuda", 0)
    a[0, 0] = 100.0                    # the cuda tensor is a copy
    np.testing.assert_array_equal(to_numpy(x), np.arange(6).reshape(2, 3))


# ----------------------------------------------------------------------------- repr
@pytest.mark.parametrize("make,text", [
    (lambda: tt.tensor([1., 2., 3.]), "tensor([1., 2., 3.])"),
    (lambda: tt.tensor([1, 2]), "tensor([1, 2])"),
    # torch pads booleans to a common width too: True gets a leading space next to False
    (lambda: tt.tensor([True, False]), "tensor([ True, False])"),
    (lambda: tt.tensor([True, True]), "tensor([True, True])"),
    (lambda: tt.tensor(3.), "tensor(3.)"),
    (lambda: tt.tensor(5), "tensor(5)"),
    (lambda: tt.tensor([0.5, 1.25]), "tensor([0.5000, 1.2500])"),
    (lambda: tt.tensor([[1., 2.], [3., 4.]]), "tensor([[1., 2.],\n        [3., 4.]])"),
    (lambda: tt.tensor([1., 2.], dtype=tt.float64), "tensor([1., 2.], dtype=tritensor.float64)"),
    (lambda: tt.tensor([1., 2.], dtype=tt.float16), "tensor([1., 2.], dtype=tritensor.float16)"),
    (lambda: tt.tensor([1, 2], dtype=tt.int32), "tensor([1, 2], dtype=tritensor.int32)"),
    (lambda: tt.tensor([1., 2.], requires_grad=True), "tensor([1., 2.], requires_grad=True)"),
    (lambda: tt.tensor([1., 2.], requires_grad=True) + 1, "tensor([2., 3.], grad_fn=<AddBackward0>)"),
    (lambda: tt.tensor([1., 2., 3.], device="cuda"), "tensor([1., 2., 3.], device='cuda:0')"),
    (lambda: tt.tensor([1, 2], device="cuda"), "tensor([1, 2], device='cuda:0')"),
    (lambda: tt.tensor([1., 2.], dtype=tt.float64, device="cuda", requires_grad=True),
     "tensor([1., 2.], device='cuda:0', dtype=tritensor.float64, requires_grad=True)"),
    (lambda: tt.tensor([1., 2.], device="cuda", requires_grad=True) * 2,
     "tensor([2., 4.], device='cuda:0', grad_fn=<MulBackward0>)"),
    (lambda: tt.tensor([]), "tensor([])"),
    (lambda: tt.zeros(0, 3), "tensor([], size=(0, 3))"),
    # torch right-aligns the elements to a common width
    (lambda: tt.tensor([-1., 2.]), "tensor([-1.,  2.])"),
    (lambda: tt.tensor([1.5, 10.25]), "tensor([ 1.5000, 10.2500])"),
    (lambda: tt.tensor([1, 10]), "tensor([ 1, 10])"),
    (lambda: tt.tensor(-0.5), "tensor(-0.5000)"),
    (lambda: tt.tensor([1.5, float("nan")]), "tensor([1.5000,    nan])"),
    # scientific notation once the magnitudes span more than 1e3 (or leave [1e-4, 1e8))
    (lambda: tt.tensor([0.1, 100.5]), "tensor([1.0000e-01, 1.0050e+02])"),
    (lambda: tt.tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
    (lambda: tt.zeros(0, dtype=tt.int32), "tensor([], dtype=tritensor.int32)"),
    # an empty tensor names every non-default dtype, int64 and bool too; device, then size, then dtype
    (lambda: tt.zeros(0, dtype=tt.int64), "tensor([], dtype=tritensor.int64)"),
    (lambda: tt.zeros(2, 0, dtype=tt.bool, device="cuda"), "tensor([], device='cuda:0', size=(2, 0), dtype=tritensor.bool)"),
    # line wrapping: floor((80 - indent) / (width + 2)) elements per line
    (lambda: tt.arange(30.), "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
                             "        14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27.,\n"
                             "        28., 29.])"),
    # summarization past 1000 elements: torch's elision entry is " ..." (note the two spaces)
    (lambda: tt.arange(2000), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"),
    (lambda: tt.arange(1001.) / 1000, "tensor([0.0000, 0.0010, 0.0020,  ..., 0.9980, 0.9990, 1.0000])"),
    (lambda: tt.arange(2000).view(1000, 2), "tensor([[   0,    1],\n        [   2,    3],\n        [   4,    5],\n"
                                            "        ...,\n        [1994, 1995],\n        [1996, 1997],\n"
                                            "        [1998, 1999]])"),
], ids=lambda v: v.replace("\n", "").replace(" ", "") if isinstance(v, str) else "")
def test_repr_matches_torch(make, text):
    t = make()
    assert repr(t) == text
    assert str(t) == text


# ----------------------------------------------------------------------------- dtypes
def test_torch_dtype_aliases():
    assert tt.float is tt.float32
    assert tt.double is tt.float64
    assert tt.half is tt.float16
    assert tt.long is tt.int64
    assert tt.int is tt.int32
    assert tt.short is tt.int16
    assert str(tt.float32) == "tritensor.float32"
    assert tt.float32.is_floating_point and not tt.int64.is_floating_point
    assert tt.bfloat16.is_floating_point and not tt.bool.is_floating_point


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_dtype_round_trips(device, dtype):
    values = VALUES[dtype]
    expected = np.array(values, dtype=_np_dtype(dtype))
    x = tt.tensor(values, dtype=dtype, device=device)
    assert x.dtype is dtype and x.device == _as_device(device)
    np.testing.assert_array_equal(to_numpy(x), expected)
    # device round trips keep dtype and bits
    other = "cpu" if device == "cuda" else "cuda"
    y = x.to(other)
    assert y.dtype is dtype and y.device == _as_device(other)
    np.testing.assert_array_equal(to_numpy(y), expected)
    back = y.cpu() if device == "cpu" else y.cuda()
    assert back.dtype is dtype and back.device == _as_device(device)
    np.testing.assert_array_equal(to_numpy(back), expected)
    # the same device: .to/.cpu/.cuda return the tensor itself
    assert x.to(device) is x
    assert (x.cpu() if device == "cpu" else x.cuda()) is x
    assert x.to(dtype) is x
    # a dtype round trip through float64 keeps the values (all exact in float64)
    if dtype is not tt.int64:
        z = x.to(tt.float64).to(dtype)
        assert z.dtype is dtype
        np.testing.assert_array_equal(to_numpy(z), expected)
    # device and dtype at once
    w = x.to(other, tt.float64)
    assert w.dtype is tt.float64 and w.device == _as_device(other)
    np.testing.assert_array_equal(to_numpy(w), expected.astype(np.float64))


@pytest.mark.parametrize("data,dtype", [
    ([1, 2, 3], tt.int64),
    ([1.0, 2.0], tt.float32),
    ([True, False], tt.bool),
    ([1, 2.5], tt.float32),
    ([[1, 2], [3, 4.0]], tt.float32),
    ([True, 2], tt.int64),
    (3, tt.int64),
    (3.5, tt.float32),
    (False, tt.bool),
    (np.array([1.0, 2.0]), tt.float64),
    (np.array([1.0, 2.0], dtype=np.float32), tt.float32),
    (np.array([1, 2], dtype=np.int32), tt.int32),
    (np.array([1, 2], dtype=np.int64), tt.int64),
    (np.array([True]), tt.bool),
    # NumPy scalars keep their dtype, as NumPy arrays do
    (np.float64(1.5), tt.float64),
    (np.int32(3), tt.int32),
    ([np.float64(0.5), np.float64(2.0)], tt.float64),
], ids=lambda v: repr(v).replace(" ", ""))
def test_tensor_dtype_inference(device, data, dtype):
    x = tt.tensor(data, device=device)
    assert x.dtype is dtype
    np.testing.assert_array_equal(to_numpy(x), np.asarray(data).astype(dtype.numpy_dtype))
    assert x.shape == np.asarray(data).shape


def test_tensor_copies_its_numpy_input():
    a = np.zeros(3)
    x = tt.tensor(a)
    a[0] = 1.0
    assert x[0].item() == 0.0


def test_float_to_integer_casts_truncate_toward_zero(device):
    src = [-2.7, -1.5, -0.5, 0.0, 0.5, 1.5, 2.9]
    x = tt.tensor(src, device=device)
    for method, dtype in (("long", tt.int64), ("int", tt.int32)):
        y = getattr(x, method)()
        assert y.dtype is dtype and y.device == x.device
        assert y.tolist() == [-2, -1, 0, 0, 0, 1, 2]


@pytest.mark.parametrize("src_dtype", [tt.float32, tt.int64, tt.float16])
def test_bool_cast_is_nonzero(device, src_dtype):
    x = tt.tensor([0, 3, -1, 0, 2], dtype=src_dtype, device=device)
    y = x.bool()
    assert y.dtype is tt.bool
    assert y.tolist() == [False, True, True, False, True]
    f = tt.tensor([0.0, 0.25, -1e-30, float("nan")], device=device).bool()
    assert f.tolist() == [False, True, True, True]


@pytest.mark.parametrize("method,dtype", [
    ("float", tt.float32), ("double", tt.float64), ("half", tt.float16), ("bfloat16", tt.bfloat16),
    ("long", tt.int64), ("int", tt.int32), ("bool", tt.bool),
])
def test_cast_methods(device, method, dtype):
    x = tt.tensor([[1, 0], [-3, 8]], dtype=tt.int64, device=device)
    y = getattr(x, method)()
    assert y.dtype is dtype
    assert y.device == x.device
    np.testing.assert_array_equal(to_numpy(y), np.array([[1, 0], [-3, 8]]).astype(_np_dtype(dtype)))
    b = tt.tensor([True, False], device=device)
    assert getattr(b, method)().tolist() == ([True, False] if dtype is tt.bool else [1, 0])


def test_cast_to_float16_rounds(device):
    x = tt.tensor([1.0 + 2 ** -12, 65504.0, 1e-8], dtype=tt.float64, device=device)
    np.testing.assert_array_equal(to_numpy(x.half()), np.array([1.0, 65504.0, 0.0], dtype=np.float16))


# ----------------------------------------------------------------------------- Python scalars
def test_python_scalar_conversions(device):
    assert bool(tt.tensor([0.0], device=device)) is False
    assert bool(tt.tensor(2, device=device)) is True
    assert bool(tt.tensor([[True]], device=device)) is True
    assert float(tt.tensor([[2.5]], device=device)) == 2.5
    assert float(tt.tensor(3, device=device)) == 3.0
    assert int(tt.tensor(3.9, device=device)) == 3
    assert int(tt.tensor([-3.9], device=device)) == -3
    assert int(tt.tensor([7], dtype=tt.int32, device=device)) == 7


def test_bool_of_many_elements_raises(device):
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(tt.tensor([1.0, 2.0], device=device))


@pytest.mark.parametrize("convert", [float, int], ids=["float", "int"])
def test_scalar_conversion_of_many_elements_raises_value_error(device, convert):
    # torch: TORCH_CHECK_VALUE -> ValueError (python_variable_methods.cpp, dispatch_to)
    with pytest.raises(ValueError, match="only one element tensors can be converted to Python scalars"):
        convert(tt.tensor([1.0, 2.0], device=device))


def test_len_and_iteration(device):
    x = tt.tensor([[1, 2], [3, 4], [5, 6]], device=device)
    assert len(x) == 3
    rows = list(x)
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4], [5, 6]]
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(tt.tensor(1, device=device))


def test_narrowing_float_casts_round_to_nearest_even(device):
    import ml_dtypes
    rng = np.random.default_rng(3)
    a64 = np.concatenate([rng.standard_normal(200) * 10.0 ** rng.integers(-6, 6, 200),
                          [0.0, -0.0, 1.0 + 2.0 ** -24, 1.0 + 3 * 2.0 ** -24, 65519.0, 65520.0, 1e-8, 3e-8,
                           np.inf, -np.inf, np.nan]])
    a32 = a64.astype(np.float32)
    with np.errstate(over="ignore"):
        want16 = a32.astype(np.float16)
    wantbf = a32.astype(ml_dtypes.bfloat16).astype(np.float32)
    x64 = tt.tensor(a64, dtype=tt.float64, device=device)
    np.testing.assert_array_equal(to_numpy(x64.float()), a32)
    x32 = tt.tensor(a32, device=device)
    np.testing.assert_array_equal(x32.half().cpu().numpy(), want16)
    np.testing.assert_array_equal(x32.bfloat16().cpu().numpy().astype(np.float32), wantbf)
    # widening back is exact
    np.testing.assert_array_equal(x32.half().double().cpu().numpy(), want16.astype(np.float64))


def test_overflowing_casts_are_silent(device):
    # torch turns out-of-range values into inf without a warning; NumPy's cast warnings must
    # not leak out of the library
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = tt.tensor([1e6, -1e6, 1.0], device=device).half()
        b = tt.tensor([1e6, 1.0], dtype=tt.float16, device=device)
        c = tt.tensor([1e300], dtype=tt.float64, device=device).float()
    assert a.tolist() == [float("inf"), float("-inf"), 1.0]
    assert b.tolist() == [float("inf"), 1.0]
    assert c.tolist() == [float("inf")]


@pytest.mark.parametrize("src", [tt.int32, tt.int64, tt.bool])
def test_integer_to_float_casts(device, src):
    vals = [0, 1, -1, 7, 2 ** 24 + 1, -(2 ** 24) - 1] if src is not tt.bool else [True, False]
    x = tt.tensor(vals, dtype=src, device=device)
    ref = np.array(vals, dtype=src.numpy_dtype)
    np.testing.assert_array_equal(to_numpy(x.float()), ref.astype(np.float32))
    np.testing.assert_array_equal(to_numpy(x.double()), ref.astype(np.float64))
    if src is not tt.bool:
        np.testing.assert_array_equal(to_numpy(x.long()), ref.astype(np.int64))
        np.testing.assert_array_equal(to_numpy(x.int()), ref.astype(np.int32))
