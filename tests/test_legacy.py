"""Issue 21 item 7: the legacy tensor types, Tensor.type(), the storages, layouts and
tt.utils.backcompat, as the seed tutorials use them. Expectations read from torch 2.13."""
import warnings

import numpy as np
import pytest

import tritensor as tt

LEGACY = {"FloatTensor": tt.float32, "DoubleTensor": tt.float64, "HalfTensor": tt.float16,
          "BFloat16Tensor": tt.bfloat16, "LongTensor": tt.int64, "IntTensor": tt.int32, "ShortTensor": tt.int16,
          "CharTensor": tt.int8, "ByteTensor": tt.uint8, "BoolTensor": tt.bool}


# --------------------------------------------------------------------------- the legacy types
@pytest.mark.parametrize("name", sorted(LEGACY))
def test_each_legacy_type_is_a_constructor_and_an_isinstance_test(name):
    cls, cuda_cls, dtype = getattr(tt, name), getattr(tt.cuda, name), LEGACY[name]
    assert cls.dtype is dtype and cls.is_cuda is False and cuda_cls.is_cuda is True and cls.layout is tt.strided
    assert repr(cls) == f"<class 'tritensor.{name}'>" and repr(cuda_cls) == f"<class 'tritensor.cuda.{name}'>"
    t = cls([1, 0])
    assert t.dtype is dtype and t.device == tt.device("cpu") and t.type() == f"torch.{name}"
    assert isinstance(t, cls) and isinstance(t, tt.Tensor) and not isinstance(t, cuda_cls)
    assert not issubclass(cls, tt.Tensor)
    c = cuda_cls(3)
    assert c.shape == (3,) and c.dtype is dtype and isinstance(c, cuda_cls) and not isinstance(c, cls)
    assert c.type() == f"torch.cuda.{name}"
    others = [n for n in LEGACY if n != name]
    assert not any(isinstance(t, getattr(tt, n)) for n in others)


def test_legacy_constructor_forms():
    F = tt.FloatTensor
    assert F().shape == (0,) and F(2, 3).shape == (2, 3) and F(tt.Size([2])).shape == (2,)
    assert F([1, 2]).tolist() == [1.0, 2.0] and F((2, 3)).tolist() == [2.0, 3.0]    # a tuple is data
    assert tt.LongTensor([1.7, 2]).tolist() == [1, 2] and F(np.array([1, 2])).tolist() == [1.0, 2.0]
    assert F([]).shape == (0,) and tt.LongTensor([[1, 2]]).shape == (1, 2)
    x = tt.ones(2, requires_grad=True)
    y = F(x)                                   # an alias of a tensor of the type's dtype
    assert y is not x and y._base is x and y.grad_fn.name() == "AliasBackward0"
    assert y.data_ptr() == x.data_ptr() and F(2, device="cpu").shape == (2,)
    with pytest.raises(TypeError, match=r"expected TensorOptions\(dtype=float, device=cpu, layout=Strided, "
                                        r".*\(got TensorOptions\(dtype=long int, device=cpu"):
        F(tt.tensor([1, 2]))
    with pytest.raises(TypeError, match="new\\(\\): invalid data type 'str'"):
        F("a")
    with pytest.raises(TypeError, match="new\\(\\): data must be a sequence \\(got float\\)"):
        F(2.5)
    with pytest.raises(TypeError, match="failed to unpack the object at pos 2 with error \"type must be tuple of "
                                        "ints,but got float\""):
        F(2, 3.0)
    with pytest.raises(RuntimeError, match="legacy constructor expects device type: cpu but device type: cuda was "
                                           "passed"):
        F(2, device="cuda")
    with pytest.raises(TypeError, match="new\\(\\) received an invalid combination of arguments"):
        F([1, 2], dtype=tt.float64)
    assert tt.cuda.FloatTensor([1, 2]).device == tt.device("cuda:0")


def test_tensor_type_names_and_converts():
    t = tt.ones(2)
    assert t.type() == "torch.FloatTensor" and tt.ones(1, dtype=tt.bool).type() == "torch.BoolTensor"
    assert tt.ones(1, dtype=tt.bfloat16).type() == "torch.BFloat16Tensor"
    assert t.type(tt.float32) is t and t.type("torch.FloatTensor") is t and t.type(tt.FloatTensor) is t
    assert t.type(tt.DoubleTensor).dtype is tt.float64 and t.type("torch.LongTensor").dtype is tt.int64
    assert t.type(tt.int32).dtype is tt.int32 and t.type(dtype=tt.float64).dtype is tt.float64
    assert tt.tensor([1, 2]).type("torch.FloatTensor").tolist() == [1.0, 2.0]
    c = t.type("torch.cuda.DoubleTensor")
    assert c.device == tt.device("cuda:0") and c.dtype is tt.float64
    assert t.cuda(1).type(tt.cuda.LongTensor).device == tt.device("cuda:1")    # kept on its own device
    assert c.type(tt.FloatTensor).device == tt.device("cpu")
    for bad in ("torch.Foo", "FloatTensor", "torch.float32"):
        with pytest.raises(ValueError, match=f"invalid type: '{bad}'"):
            t.type(bad)
    with pytest.raises(TypeError, match="dtype must be a type, str, or dtype object"):
        t.type(3)


# --------------------------------------------------------------------------- storages and layouts
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_untyped_storage_is_shared_by_views(device):
    t = tt.arange(6.0, device=device).view(2, 3)
    u = t.untyped_storage()
    assert u is t[1:].untyped_storage() is t.t().untyped_storage()
    assert u.size() == u.nbytes() == len(u) == 24 and u.element_size() == 1
    assert u.data_ptr() == t.data_ptr() and t[1:].data_ptr() == u.data_ptr() + 12
    assert u.device == t.device and u.is_cuda == (device == "cuda")
    # 1.0 as float32 little-endian: 00 00 80 3f
    assert u.tolist()[4:8] == [0, 0, 128, 63] and u[7] == 63 and u[-1] == 64
    assert u[4:8].tolist() == [0, 0, 128, 63] and u[4:8].data_ptr() == u.data_ptr() + 4
    assert t.clone().untyped_storage() is not u
    with pytest.raises(IndexError):
        u[24]


def test_typed_storage_reads_the_dtype_and_warns_once():
    t = tt.arange(6.0).view(2, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from tritensor.runtime import storage
        storage._warned_typed = False
        s = t[1:].storage()
        t.storage()
    assert [str(w.message)[:27] for w in caught] == ["TypedStorage is deprecated."]
    assert s.dtype is tt.float32 and s.size() == len(s) == 6 and s.nbytes() == 24 and s.element_size() == 4
    assert s.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0] and s[1] == 1.0 and s[-1] == 5.0
    assert s.data_ptr() == t.data_ptr() and s.untyped() is t.untyped_storage()
    assert tt.tensor([True]).storage().tolist() == [True] and tt.ones(2, dtype=tt.bfloat16).storage().tolist() == [1.0, 1.0]
    assert repr(tt.arange(2).storage()) == \
        " 0\n 1\n[tritensor.storage.TypedStorage(dtype=tritensor.int64, device=cpu) of size 2]"
    with pytest.raises(RuntimeError, match="slices are only supported in UntypedStorage.__getitem__"):
        s[0:2]


def test_layout_is_strided_and_read_only():
    t = tt.ones(2)
    assert t.layout is tt.strided and repr(tt.strided) == "tritensor.strided" and isinstance(tt.strided, tt.layout)
    assert repr(tt.sparse_coo) == "tritensor.sparse_coo"
    with pytest.raises(AttributeError, match="attribute 'layout' of 'torch._C.TensorBase' objects is not writable"):
        t.layout = tt.strided
    with pytest.raises(TypeError, match="cannot create 'tritensor.layout' instances"):
        tt.layout()
    import pickle
    assert pickle.loads(pickle.dumps(tt.strided)) is tt.strided


def test_backcompat_switches():
    bw = tt.utils.backcompat.broadcast_warning
    assert bw.enabled is False and tt.utils.backcompat.keepdim_warning.enabled is False
    try:
        bw.enabled = True
        assert bw.enabled is True
        with pytest.raises(RuntimeError, match="set_backcompat_broadcast_warn expects a bool, but got int"):
            bw.enabled = 1
    finally:
        bw.enabled = False
