"""Issue 20 items 6-8: what bad arguments and careless assignments do. Each answer is torch's
(exception type and text word for word, recorded from torch 2.13), and none may crash the
interpreter, read outside a tensor's storage, or write into memory the caller made immutable."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy


def _exact(text):
    return "^" + re.escape(text) + "$"


# ============================================================================ item 6: read-only attributes
# torch: x.<name> = v and del x.<name> raise AttributeError for each of these
READ_ONLY = ["dtype", "device", "shape", "ndim", "is_leaf", "grad_fn", "is_cuda", "is_cpu", "itemsize",
             "nbytes", "T", "mT", "retains_grad", "_version", "is_sparse", "is_quantized", "is_meta"]


@pytest.mark.parametrize("name", READ_ONLY)
def test_torch_read_only_attributes_refuse_assignment_and_deletion(name):
    x = tt.ones(2, 3, requires_grad=True) * 1.0      # a non-leaf: grad_fn is set
    before = getattr(x, name)
    message = _exact(f"attribute '{name}' of 'torch._C.TensorBase' objects is not writable")
    with pytest.raises(AttributeError, match=message):
        setattr(x, name, before)
    with pytest.raises(AttributeError, match=message):
        delattr(x, name)
    assert name not in vars(x)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_a_refused_dtype_assignment_leaves_the_tensor_whole(device):
    """Before issue 20, ``x.dtype = float64`` relabelled 8 bytes of float32 as one float64 each:
    sum() read a stale view and the DLPack/cuda paths read past the end of the storage."""
    x = tt.arange(4, dtype=tt.float32, device=device)
    x.sum()                                          # the cpu backend caches its view of x
    with pytest.raises(AttributeError):
        x.dtype = tt.float64
    with pytest.raises(AttributeError):
        x.shape = (8,)
    assert x.dtype is tt.float32 and x.shape == (4,) and x.nbytes == 16 and x.itemsize == 4
    assert x.sum().item() == 6.0
    assert to_numpy(tt.from_dlpack(x)).tolist() == [0.0, 1.0, 2.0, 3.0]


def test_new_read_only_attributes_have_torchs_values():
    x = tt.zeros(2, 3, dtype=tt.float64)
    assert (x.itemsize, x.nbytes) == (8, 48)
    assert x[:, ::2].nbytes == 32 and x[0].expand(4, 3).nbytes == 96   # what the view shows
    assert not (x.is_sparse or x.is_quantized or x.is_meta)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_data_assignment_swaps_memory_and_geometry_together(device):
    """torch's set_data: the tensor takes the other's storage, shape, strides, offset and dtype
    at once (any dtype, any device), and keeps its autograd identity."""
    w = tt.zeros(2, requires_grad=True, device=device)
    w.sum()
    src = tt.arange(6, dtype=tt.float64, device=device).reshape(2, 3)
    w.data = src.t()
    assert w.dtype is tt.float64 and w.shape == (3, 2) and w.stride() == (1, 3)
    assert w.data_ptr() == src.data_ptr() and w.requires_grad and w.is_leaf
    assert w.sum().item() == 15.0 and w.nbytes == 48
    assert to_numpy(w.detach()).tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    (w * w).sum().backward()
    assert w.grad.dtype is tt.float64 and to_numpy(w.grad).tolist() == [[0.0, 6.0], [2.0, 8.0], [4.0, 10.0]]


def test_data_assignment_checks_as_torch():
    w = tt.zeros(2, requires_grad=True)
    with pytest.raises(TypeError, match=_exact("Variable data has to be a tensor, but got int")):
        w.data = 5
    with pytest.raises(RuntimeError, match=_exact(
            "data set to a tensor that requires gradients must be floating point or complex dtype")):
        w.data = tt.zeros(2, dtype=tt.int64)
    with pytest.raises(RuntimeError, match=_exact("Deleting tensor data is not allowed. Delete tensor instead!")):
        del w.data
    assert w.dtype is tt.float32 and w.shape == (2,)
    plain = tt.zeros(2)
    plain.data = tt.tensor([7, 8])          # no gradient wanted: an integer dtype is fine
    assert plain.dtype is tt.int64 and plain.tolist() == [7, 8]


def test_requires_grad_and_grad_attributes_as_torch():
    x = tt.zeros(2)
    for bad in (1, None, "yes"):
        with pytest.raises(RuntimeError, match=_exact("requires_grad must be a bool")):
            x.requires_grad = bad
    with pytest.raises(RuntimeError, match=_exact("requires_grad must be a bool")):
        del x.requires_grad
    with pytest.raises(TypeError, match=_exact(
            "requires_grad_(): argument 'requires_grad' (position 1) must be bool, not int")):
        x.requires_grad_(1)
    assert not x.requires_grad
    x.grad = tt.ones(2)
    del x.grad                              # torch: deleting .grad clears it
    assert x.grad is None


# ============================================================================ item 8: bad inputs
def test_linspace_bounds_must_fit_the_dtype():
    msg = _exact("value cannot be converted to type int8_t without overflow")
    with pytest.raises(RuntimeError, match=msg):
        tt.linspace(0, 1000, 3, dtype=tt.int8)          # wrapped silently before issue 20
    with pytest.raises(RuntimeError, match=msg):
        tt.linspace(-1000, 0, 3, dtype=tt.int8)
    with pytest.raises(RuntimeError, match=_exact("value cannot be converted to type uint8_t without overflow")):
        tt.linspace(-10.0, 10, 3, dtype=tt.uint8)       # a float bound must lie in the range itself
    with pytest.raises(RuntimeError, match=_exact("value cannot be converted to type c10::Half without overflow")):
        tt.linspace(0, 1e6, 3, dtype=tt.float16)
    with pytest.raises(NotImplementedError, match=_exact("\"linspace_cpu\" not implemented for 'Bool'")):
        tt.linspace(0, 1, 3, dtype=tt.bool)
    # torch 2.13's values: an integer bound of an unsigned dtype wraps as in C, then the first
    # half counts from start and the second back from end, truncated
    assert tt.linspace(-10, 10, 3, dtype=tt.uint8).tolist() == [246, 128, 10]
    assert tt.linspace(-7, 7, 5, dtype=tt.int64).tolist() == [-7, -3, 0, 3, 7]
    assert tt.linspace(0, 1.5, 4, dtype=tt.int64).tolist() == [0, 0, 0, 1]
    assert tt.linspace(0, 1000, 1, dtype=tt.int8).tolist() == [0]       # one step: start alone
    assert tt.linspace(1000, 0, 0, dtype=tt.int8).shape == (0,)


def test_full_refuses_a_value_its_dtype_cannot_hold():
    with pytest.raises(RuntimeError, match=_exact("value cannot be converted to type uint8_t without overflow")):
        tt.full((2,), 255.5, dtype=tt.uint8)
    with pytest.raises(RuntimeError, match=_exact("value cannot be converted to type float without overflow")):
        tt.full((0,), 1e39, dtype=tt.float32)
    assert tt.full((2,), -1, dtype=tt.uint8).tolist() == [255, 255]


def test_uniform_bounds_as_torch():
    x = tt.empty(3)
    with pytest.raises(RuntimeError, match=_exact("uniform_ expects to return a [from, to) range, but found from=1 > to=0")):
        x.uniform_(1, 0)
    with pytest.raises(RuntimeError, match=_exact(
            "uniform_ expects to return a [from, to) range, but found from=0.1 > to=0.05")):
        tt.empty(0).uniform_(0.1, 0.05)                   # checked before the empty early return
    with pytest.raises(RuntimeError, match=_exact("to is out of bounds for float")):
        x.uniform_(0, float("inf"))
    with pytest.raises(RuntimeError, match=_exact("from is out of bounds for float")):
        x.uniform_(float("nan"), 1)
    with pytest.raises(RuntimeError, match=_exact("from is out of bounds for c10::Half")):
        tt.empty(3, dtype=tt.float16).uniform_(-1e5, 1e5)
    with pytest.raises(RuntimeError, match=_exact(
            "uniform_ expects to-from <= std::numeric_limits<Float>::max(), but found to=3e+38 and from=-3e+38 "
            "which result in to-from to exceed the limit")):
        x.uniform_(-3e38, 3e38)
    with pytest.raises(NotImplementedError, match=_exact("\"check_uniform_bounds\" not implemented for 'Long'")):
        tt.zeros(2, dtype=tt.int64).uniform_()
    assert x.uniform_(2, 2).tolist() == [2.0, 2.0, 2.0]


def test_randint_bounds_as_torch():
    with pytest.raises(RuntimeError, match=_exact("to - 1 is out of bounds for c10::Half")):
        tt.randint(0, 2 ** 25, (3,), dtype=tt.float16)      # gave inf before issue 20
    with pytest.raises(RuntimeError, match=_exact("from is out of bounds for c10::Half")):
        tt.empty(3, dtype=tt.float16).random_(-65536, 0)
    with pytest.raises(RuntimeError, match=_exact("to - 1 is out of bounds for bool")):
        tt.randint(0, 3, (3,), dtype=tt.bool)
    with pytest.raises(RuntimeError, match=_exact("to - 1 is out of bounds for short int")):
        tt.randint(0, 2 ** 15 + 1, (3,), dtype=tt.int16)
    with pytest.raises(ValueError, match=_exact("Overflow when unpacking long long")):
        tt.randint(0, 2 ** 63, (3,))
    # a bound its dtype rounds past the range moves back inside it (torch's update_to) ...
    with pytest.raises(RuntimeError, match=_exact(
            "random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but got "
            "from=33554431 >= to=33554430")):
        tt.randint(2 ** 25 - 1, 2 ** 25, (2,), dtype=tt.float32)
    # ... and beyond the integers the dtype holds exactly, torch warns
    with pytest.warns(UserWarning, match=re.escape(
            "to - 1 is out of bounds [-(2^8), 2^8]. Due to precision limitations c10::BFloat16 can support "
            "discrete uniform distribution only within this range. This warning will become an error in "
            "version 1.7 release, please fix the code in advance")):
        v = tt.randint(255, 258, (64,), dtype=tt.bfloat16)
    assert set(v.tolist()) <= {255.0, 256.0}       # 257 is no bfloat16: it rounds to 256


def test_from_numpy_of_read_only_memory_warns_and_never_writes_it(monkeypatch):
    """torch warns (once per program) and then lets writes through into the read-only memory:
    ``add_`` really changes an immutable ``bytes`` object (undefined behaviour, in its words).
    tritensor gives the same warning and shares the memory for reading, as torch, but never
    writes into it: every write is refused by NumPy's read-only check (ValueError), also
    through views, ``out=``, DLPack consumers (a versioned capsule says READ_ONLY, a legacy
    one is refused) and index_put's accumulation."""
    from tritensor.ops import creation
    monkeypatch.setattr(creation, "_warned_not_writable", False)
    raw = bytes(16)
    arr = np.frombuffer(raw, dtype=np.float32)
    with pytest.warns(UserWarning, match=re.escape(
            "The given NumPy array is not writable, and PyTorch does not support non-writable tensors. This "
            "means writing to this tensor will result in undefined behavior. You may want to copy the array to "
            "protect its data or make it writable before converting it to a tensor. This type of warning will "
            "be suppressed for the rest of this program.")):
        x = tt.from_numpy(arr)
    assert x.data_ptr() == arr.ctypes.data and x.sum().item() == 0.0
    writes = [lambda: x.add_(1), lambda: x[1:].mul_(2), lambda: tt.add(x, 1, out=x), lambda: x.fill_(1),
              lambda: x.copy_(tt.ones(4)), lambda: x.__setitem__(0, 1.0),
              lambda: x.index_put_((tt.tensor([0, 0]),), tt.tensor(1.0), accumulate=True),
              lambda: x.view(tt.int32).add_(1), lambda: tt.as_tensor(arr).add_(1),
              lambda: tt.from_dlpack(x).add_(1), lambda: x.__dlpack__()]
    for write in writes:
        with pytest.raises((ValueError, BufferError)):
            write()
    assert raw == bytes(16)
    assert not np.from_dlpack(x).flags.writeable
    assert (x + 1).tolist() == [1.0] * 4 and x.clone().add_(1).tolist() == [1.0] * 4


def test_numpy_conversion_of_a_tensor_requiring_grad_is_refused():
    x = tt.zeros(2, requires_grad=True)
    msg = _exact("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
    for convert in (np.asarray, np.array, lambda t: np.asarray(t, dtype=np.float64), lambda t: t.numpy()):
        with pytest.raises(RuntimeError, match=msg):
            convert(x)
    assert np.asarray(x.detach()).tolist() == [0.0, 0.0]
    with pytest.raises(TypeError, match=_exact("can't convert cuda:0 device type tensor to numpy. Use "
                                               "Tensor.cpu() to copy the tensor to host memory first.")):
        np.asarray(tt.zeros(2, device="cuda"))


def test_sizes_past_int64_and_storage_overflow_are_runtime_errors():
    with pytest.raises(RuntimeError, match=_exact(
            "Storage size calculation overflowed with sizes=[4611686018427387904]")):
        tt.empty(2 ** 62)
    with pytest.raises(RuntimeError, match=_exact(
            "Storage size calculation overflowed with sizes=[1099511627776, 1099511627776]")):
        tt.ones(2 ** 40, 2 ** 40)
    with pytest.raises(RuntimeError, match=_exact(
            "Storage size calculation overflowed with sizes=[1099511627776, 1099511627776, 0]")):
        tt.empty(2 ** 40, 2 ** 40, 0)                    # torch multiplies in order: the 0 comes late
    with pytest.raises(RuntimeError, match=_exact("Stride calculation overflowed")):
        tt.empty(0, 2 ** 40, 2 ** 40)
    with pytest.raises(TypeError, match=_exact(
            "zeros(): argument 'size' failed to unpack the object at pos 2 with error "
            "\"Overflow when unpacking long long\"")):
        tt.zeros(2, 2 ** 63)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_a_tensor_with_no_elements_and_a_huge_dim(device):
    """torch.empty(0, 2**62) exists (0 bytes); reductions over it give their empty values. NumPy
    cannot hold that shape, so numpy() refuses it with NumPy's error, as torch's numpy()."""
    x = tt.empty(0, 2 ** 62, device=device)
    assert x.sum().item() == 0.0 and x.prod().item() == 1.0 and np.isnan(x.mean().item())
    assert x.sum(1).shape == (0,) and (x + 1).shape == (0, 2 ** 62)
    with pytest.raises(RuntimeError, match=_exact("Storage size calculation overflowed with sizes=[4611686018427387904]")):
        x.sum(0)
    assert repr(x) == ("tensor([], size=(0, 4611686018427387904))" if device == "cpu" else
                       "tensor([], device='cuda:0', size=(0, 4611686018427387904))")
    with pytest.raises(ValueError, match="array is too big"):
        x.cpu().numpy()


def test_arange_bounds_as_torch():
    nan, inf = float("nan"), float("inf")
    for args, text in [((0, nan), "unsupported range: 0 -> nan"), ((nan,), "unsupported range: 0 -> nan"),
                       ((1.5, -inf, -1), "unsupported range: 1.5 -> -inf"),
                       ((1234567.0, nan), "unsupported range: 1.23457e+06 -> nan"),
                       ((0, 1, nan), "step must be nonzero"), ((0, nan, 0), "step must be nonzero"),
                       ((0, 5, -1), "upper bound and lower bound inconsistent with step sign"),
                       ((0, 1e20), "invalid size, possible overflow?"),
                       ((0, 10, 1e-18), "invalid size, possible overflow?"),
                       ((0, 2 ** 62), "Storage size calculation overflowed with sizes=[4611686018427387904]")]:
        with pytest.raises(RuntimeError, match=_exact(text)):
            tt.arange(*args)
    with pytest.raises(RuntimeError, match=_exact("value cannot be converted to type int64_t without overflow")):
        tt.arange(0, 1e20, dtype=tt.int64)
    with pytest.raises(ValueError, match=_exact("step must be nonzero")):
        tt.arange(1, 2, 0.3, dtype=tt.int64)         # the step truncates to 0 in int64
    with pytest.raises(NotImplementedError, match=_exact("\"arange_cpu\" not implemented for 'Bool'")):
        tt.arange(3, dtype=tt.bool)
    # int64 ranges are sized from the truncated bounds; other integer dtypes wrap (torch 2.13)
    assert tt.arange(0, 5.5, dtype=tt.int64).tolist() == [0, 1, 2, 3, 4]
    assert tt.arange(-0.5, 3, dtype=tt.int64).tolist() == [0, 1, 2]
    assert tt.arange(0, -5.5, -1, dtype=tt.int64).tolist() == [0, -1, -2, -3, -4]
    assert tt.arange(0, 5.5, dtype=tt.int32).tolist() == [0, 1, 2, 3, 4, 5]
    assert tt.arange(250, 260, dtype=tt.uint8).tolist() == [250, 251, 252, 253, 254, 255, 0, 1, 2, 3]
    assert tt.arange(0, 5, 0.5, dtype=tt.int32).tolist() == [0] * 10
    assert tt.arange(0, 1, inf).shape == (0,)


def test_view_as_another_dtype():
    x = tt.tensor([1.0, -2.0])
    assert x.view(tt.int32).tolist() == [1065353216, -1073741824]
    assert tt.tensor([0, 16256, 0, -16384], dtype=tt.int16).view(tt.float32).tolist() == [1.0, -2.0]
    assert x.view(dtype=tt.bfloat16).tolist() == [0.0, 1.0, 0.0, -2.0]
    y = tt.zeros(2, 3).view(tt.int16)
    assert (y.shape, y.stride()) == ((2, 6), (6, 1))
    e = tt.zeros(1, 4).expand(3, 4).view(tt.float64)
    assert (e.shape, e.stride()) == ((3, 2), (0, 1))
    s = tt.zeros(5)[1:].view(tt.int16)
    assert (s.shape, s.storage_offset()) == ((8,), 2)
    w = tt.zeros(4, requires_grad=True)
    v = w.view(tt.int32)                   # torch: not differentiable, shares the version counter
    assert not v.requires_grad and v.grad_fn is None and v.data_ptr() == w.data_ptr()
    z = tt.zeros(4)
    z.view(tt.int32).add_(1)
    assert z._version == 1 and z.view(tt.int32).tolist() == [1] * 4
    what = "to view Float as Double (different element sizes)"
    for make, text in [(lambda: tt.zeros(()).view(tt.float64), f"self.dim() cannot be 0 {what}"),
                       (lambda: tt.zeros(4, 4)[:, ::2].view(tt.float64), f"self.stride(-1) must be 1 {what}, but got 2"),
                       (lambda: tt.zeros(3).view(tt.float64), f"self.size(-1) must be divisible by 2 {what}, but got 3"),
                       (lambda: tt.zeros(5)[1:].view(tt.float64),
                        f"self.storage_offset() must be divisible by 2 {what}, but got 1"),
                       (lambda: tt.zeros(3, 5)[:, :4].view(tt.float64),
                        f"self.stride(0) must be divisible by 2 {what}, but got 5"),
                       (lambda: tt.zeros(2, 3).t().view(tt.int16),
                        "self.stride(-1) must be 1 to view Float as Short (different element sizes), but got 3")]:
        with pytest.raises(RuntimeError, match=_exact(text)):
            make()


@pytest.mark.parametrize("obj", [object(), 5, "capsule"])
def test_from_dlpack_of_a_non_producer(obj):
    """torch's text for anything that is neither a DLPack producer nor a live capsule."""
    with pytest.raises(RuntimeError, match=_exact(
            "from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only "
            "once, so you might have already constructed a tensor from it once.")):
        tt.from_dlpack(obj)


def test_from_dlpack_of_a_consumed_capsule():
    capsule = np.zeros(2).__dlpack__()
    tt.from_dlpack(capsule)
    with pytest.raises(RuntimeError, match="^from_dlpack received an invalid capsule"):
        tt.from_dlpack(capsule)


# ============================================================================ item 7: cost of repr
_TEN_MILLION_TEXT = ("tensor([0.0000e+00, 1.0000e-07, 2.0000e-07,  ..., 1.0000e+00, 1.0000e+00,\n"
                     "        1.0000e+00]")       # torch 2.13's repr of arange(10**7) / 10**7


@pytest.fixture(scope="module")
def ten_million():
    return tt.arange(10 ** 7, dtype=tt.float32) / 10 ** 7


def test_repr_of_a_large_cpu_tensor_reads_only_what_it_prints(ten_million):
    """13.6 s before issue 20 (every element formatted); now the shown elements only: the
    peak of new memory during repr is a few KiB against the tensor's 40 MB."""
    import tracemalloc
    tracemalloc.start()
    try:
        text = repr(ten_million)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert text == _TEN_MILLION_TEXT + ")"
    assert peak < 256 * 1024, f"repr allocated {peak} bytes"


def test_repr_of_a_large_cuda_tensor_copies_only_what_it_prints(ten_million, monkeypatch):
    """On a device the shown elements are gathered there and only they come to the host:
    counted at the one door every device-to-host read of the formatter goes through."""
    x = ten_million.cuda()
    copied = []
    original = tt.Tensor._to_host_array

    def counting(self):
        copied.append(self.numel())
        return original(self)

    monkeypatch.setattr(tt.Tensor, "_to_host_array", counting)
    assert repr(x) == _TEN_MILLION_TEXT + ", device='cuda:0')"
    assert sum(copied) <= 6, copied
    copied.clear()
    y = tt.arange(3 * 1001, device="cuda").reshape(3, 1001).t()     # non-contiguous, 2-D
    assert repr(y) == ("tensor([[   0, 1001, 2002],\n        [   1, 1002, 2003],\n        [   2, 1003, 2004],\n"
                       "        ...,\n        [ 998, 1999, 3000],\n        [ 999, 2000, 3001],\n"
                       "        [1000, 2001, 3002]], device='cuda:0')")
    assert sum(copied) <= 18, copied


def test_set_printoptions_as_torch():
    """Texts recorded from torch 2.13 with the same options."""
    try:
        tt.set_printoptions(precision=2, threshold=5, edgeitems=2)
        assert repr(tt.arange(10.) / 3) == "tensor([0.00, 0.33,  ..., 2.67, 3.00])"
        # summarized, but no dim is longer than 2 * edgeitems: every element shown
        assert repr(tt.arange(24).reshape(2, 3, 4)) == (
            "tensor([[[ 0,  1,  2,  3],\n         [ 4,  5,  6,  7],\n         [ 8,  9, 10, 11]],\n\n"
            "        [[12, 13, 14, 15],\n         [16, 17, 18, 19],\n         [20, 21, 22, 23]]])")
        tt.set_printoptions(profile="default")
        tt.set_printoptions(linewidth=30, sci_mode=True)
        assert repr(tt.tensor([1.5, 2.0, 3.0, 4.0, 5.0], dtype=tt.float64)) == (
            "tensor([1.5000e+00,\n        2.0000e+00,\n        3.0000e+00,\n        4.0000e+00,\n"
            "        5.0000e+00],\n       dtype=tritensor.float64)")
    finally:
        tt.set_printoptions(profile="default")
        tt.set_printoptions()
    assert repr(tt.tensor([1.5, 2.0, 3.0])) == "tensor([1.5000, 2.0000, 3.0000])"


# ============================================================================ item 7: cost of x[idx] = v
def _peak_bytes(fn):
    import tracemalloc
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_index_put_on_cpu_costs_the_elements_written():
    """x[idx] = v on a 64 MiB cpu tensor allocated 3x the tensor before issue 20 (a copy of x
    and a position for every element); now it writes through NumPy advanced indexing into x's
    memory: extra memory of the order of the indices, whatever x's size."""
    x = tt.zeros(16 * 2 ** 20)                 # 64 MiB of float32
    one, three = tt.tensor([5]), tt.tensor([7, 7, -1])
    x[one] = 1.0                               # the signature's first call (caches) not measured
    x.index_put_((three,), tt.tensor(1.5), accumulate=True)
    writes = {
        "x[i] = v": lambda: x.__setitem__(one, 2.0),
        "x[idx] = values": lambda: x.__setitem__(three, tt.tensor([1.0, 3.0, 4.0])),
        "index_put_ accumulate": lambda: x.index_put_((three,), tt.tensor(1.5), accumulate=True),
    }
    for name, write in writes.items():
        peak = _peak_bytes(write)
        assert peak < 2 ** 20, f"{name}: {peak} bytes"
    # torch's values: the last of repeated writes wins; accumulate adds every one, in order
    assert (x[5].item(), x[-1].item(), x[7].item()) == (2.0, 5.5, 6.0)


def test_index_put_in_place_semantics_on_cpu():
    """The in-place writer against values recorded from torch 2.13: broadcast values, two
    index tensors (adjacent and not), a slice before the indices, a mask, a transposed target,
    repeated indices accumulated."""
    x = tt.zeros(3, 4, 2)
    x[tt.tensor([0, 2]), :, tt.tensor([1, 1])] = tt.tensor([1.0, 2.0, 3.0, 4.0])
    x[tt.tensor([[1], [2]]), tt.tensor([0, 3])] = tt.tensor([5.0, 6.0])
    x[1:, tt.tensor([1, 1])] += 0.5                           # a copy of x[...] + 0.5 written back
    assert x.tolist() == [[[0.0, 1.0], [0.0, 2.0], [0.0, 3.0], [0.0, 4.0]],
                          [[5.0, 6.0], [0.5, 0.5], [0.0, 0.0], [5.0, 6.0]],
                          [[5.0, 6.0], [0.5, 2.5], [0.0, 3.0], [5.0, 6.0]]]
    t = tt.zeros(3, 2).t()
    t[t == 0] = 2.0
    t.index_put_((tt.tensor([1, 1, 0]), tt.tensor([2, 2, 2])), tt.tensor([1.0, 2.0, 3.0]), accumulate=True)
    assert t.tolist() == [[2.0, 2.0, 5.0], [2.0, 2.0, 5.0]]


# --------------------------------------------------------------------------- found while adding ops
@pytest.mark.parametrize("dtype, value, error, message", [
    (None, 2 ** 63, ValueError, "Overflow when unpacking long long"),
    (tt.int64, -2 ** 63 - 1, ValueError, "Overflow when unpacking long long"),
    (tt.int8, 2 ** 70, ValueError, "Overflow when unpacking long long"),
    (tt.int8, -129, RuntimeError, "value cannot be converted to type int8 without overflow"),
    (tt.uint8, 300, RuntimeError, "value cannot be converted to type uint8 without overflow"),
])
def test_tensor_refuses_python_ints_its_dtype_cannot_hold(dtype, value, error, message):
    """torch.tensor unpacks Python ints as int64 and checks them against the dtype (NumPy would
    wrap them silently)."""
    with pytest.raises(error, match=f"^{message}$"):
        tt.tensor([[1, 2], [3, value]], dtype=dtype)
    assert tt.tensor([2 ** 63], dtype=tt.float32).item() == 2.0 ** 63      # floats take any int
    assert tt.tensor([-129, 2 ** 70], dtype=tt.bool).tolist() == [True, True]


def test_pow_gradient_at_zero_to_the_zero_is_zero(device):
    """torch's pow_backward_self masks the exponent-0 positions: d/dx x**0 is 0 even at x = 0
    (0 * 0**-1 would be 0 * inf = nan)."""
    x = tt.tensor([0.0, 0.0, 2.0], device=device, requires_grad=True)
    y = tt.tensor([0.0, 1.0, 3.0], device=device, requires_grad=True)
    (x ** y).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 12.0]
    assert y.grad.tolist()[:2] == [0.0, 0.0]


def test_right_shift_is_not_bound_as_a_reflected_operator():
    """__rshift__ starts with '__r' but is x >> y, not y >> x (operators are listed, not guessed)."""
    x = tt.tensor([8, 16])
    assert (x >> 1).tolist() == [4, 8] and (64 >> tt.tensor([1, 2])).tolist() == [32, 16]
    assert (x << 1).tolist() == [16, 32] and (1 << tt.tensor([3])).tolist() == [8]


def test_bfloat16_subnormals_survive_the_emulated_device():
    """bfloat16 -> float32 by the bits: Triton's interpreter flushes bfloat16 subnormals to 0."""
    x = tt.tensor([1e-39, -3e-40, 1.0, float("inf"), -0.0], dtype=tt.bfloat16)
    assert x.cuda().float().cpu().tolist() == x.float().tolist()
    assert (x.cuda() * 1).float().cpu().tolist()[:2] == x.float().tolist()[:2]
