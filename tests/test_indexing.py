"""Advanced indexing (integer tensors, lists, boolean masks) and the index ops: values against
NumPy on cpu and cuda, every data dtype, int32/int64 indices, negative and repeated indices,
non-contiguous sources and indices, size-0 and 0-d cases, torch's error texts, and autograd."""
import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy

ALL_DTYPES = [tt.bool, tt.uint8, tt.int8, tt.int16, tt.int32, tt.int64, tt.float16, tt.bfloat16, tt.float32,
              tt.float64]
RNG = np.random.default_rng(7)


def _data(shape, dtype, rng=RNG):
    if dtype is tt.bool:
        return rng.integers(0, 2, size=shape).astype(bool)
    if not dtype.is_floating_point:
        return rng.integers(0, 100, size=shape)
    return rng.standard_normal(shape)


def _pair(shape, device, dtype=tt.float32, layout="contiguous"):
    """(numpy values, tensor with those values) in the given memory layout."""
    if layout == "transposed":       # memory in reversed dim order
        a = _data(shape[::-1], dtype)
        return to_numpy(tt.tensor(a, dtype=dtype)).transpose(), tt.tensor(a, dtype=dtype, device=device).permute(
            *reversed(range(len(shape))))
    if layout == "sliced":           # every other element of a bigger buffer, at an offset
        big = _data(shape[:-1] + (2 * shape[-1] + 1,), dtype)
        t = tt.tensor(big, dtype=dtype, device=device)[..., 1::2]
        return to_numpy(tt.tensor(big, dtype=dtype))[..., 1::2], t
    a = _data(shape, dtype)
    return to_numpy(tt.tensor(a, dtype=dtype)), tt.tensor(a, dtype=dtype, device=device)


def _idx(values, device, dtype=tt.int64):
    return tt.tensor(np.asarray(values), dtype=dtype, device=device)


def _wide(dtype):
    """The NumPy dtype sums are checked in: the kernels' compute dtype (16-bit floats in float32)."""
    if dtype is tt.bool:
        return bool
    if dtype.is_floating_point:
        return np.float64 if dtype is tt.float64 else np.float32
    return np.int64


def _same(t, expected):
    got = to_numpy(t)
    assert got.shape == np.asarray(expected).shape, (got.shape, np.asarray(expected).shape)
    np.testing.assert_array_equal(got, expected)


# --------------------------------------------------------------------------- __getitem__
# (id, key builder (device -> key), NumPy key) on a (4, 5, 6) tensor; NumPy's rules agree with
# torch's for all of these (ints are never mixed with separated index tensors here)
I = np.array([3, 0, -1, 2, 0])
J = np.array([[1, -4], [3, 0]])
M0 = np.array([True, False, True, True])
M12 = RNG.integers(0, 2, size=(5, 6)).astype(bool)
KEYS = [
    ("idx", lambda d: _idx(I, d), (I,)),
    ("idx-int32", lambda d: _idx(I, d, tt.int32), (I,)),
    ("idx-2d", lambda d: _idx(J, d), (J,)),
    ("list", lambda d: [3, 0, -1], ([3, 0, -1],)),
    ("slice-idx", lambda d: (slice(None), _idx(J, d)), (slice(None), J)),
    ("ellipsis-idx", lambda d: (Ellipsis, _idx([5, -6, 2], d)), (Ellipsis, np.array([5, -6, 2]))),
    ("adjacent", lambda d: (slice(1, None), _idx(J, d), _idx([[0], [5]], d)),
     (slice(1, None), J, np.array([[0], [5]]))),
    ("separated", lambda d: (_idx(I, d), slice(None, None, 2), _idx([1, 2, 3, 4, 5], d)),
     (I, slice(None, None, 2), np.array([1, 2, 3, 4, 5]))),
    ("three", lambda d: (_idx([0, 1], d), _idx([[4], [3]], d), _idx([5, -1], d)),
     (np.array([0, 1]), np.array([[4], [3]]), np.array([5, -1]))),
    ("none-between", lambda d: (_idx([1, 2], d), None, _idx([0, 4], d)), (np.array([1, 2]), None, np.array([0, 4]))),
    ("none-first", lambda d: (None, _idx(I, d), slice(1, 4)),
     (None, I, slice(1, 4))),
    ("int-then-idx", lambda d: (2, _idx(J, d)), (2, J)),
    ("mask", lambda d: _idx(M0, d, tt.bool), (M0,)),
    ("mask-2d", lambda d: (slice(None), _idx(M12, d, tt.bool)), (slice(None), M12)),
    ("mask-and-idx", lambda d: (_idx(M0, d, tt.bool), slice(None), _idx([1, 2, 5], d)),
     (M0, slice(None), np.array([1, 2, 5]))),
    ("mask-list", lambda d: [True, False, False, True], (np.array([True, False, False, True]),)),
    ("true", lambda d: (True, _idx([1, 0], d)), (True, np.array([1, 0]))),
    ("false", lambda d: (False,), (False,)),
    ("0d-bool-tensor", lambda d: (tt.tensor(True, device=d), 1), (True, 1)),
    ("0d-index-with-idx", lambda d: (_idx([1, 3], d), _idx(2, d)), (np.array([1, 3]), 2)),
    ("empty", lambda d: _idx(np.zeros(0, np.int64), d), (np.zeros(0, np.int64),)),
    ("empty-list", lambda d: (slice(None), []), (slice(None), np.zeros(0, np.int64))),
    ("empty-mask", lambda d: _idx(np.zeros(4, bool), d, tt.bool), (np.zeros(4, bool),)),
]


@pytest.mark.parametrize("case", KEYS, ids=[k[0] for k in KEYS])
def test_getitem_matches_numpy(case, device):
    _, key, np_key = case
    a, x = _pair((4, 5, 6), device, layout="sliced")
    _same(x[key(device)], a[np_key])


@pytest.mark.parametrize("layout", ["transposed", "sliced"])
def test_getitem_non_contiguous_source_and_index(layout, device):
    a, x = _pair((5, 7), device, layout=layout)
    raw = np.array([[4, 0, 2], [-1, 3, 3]])
    idx = _idx(raw.T.copy(), device).t()             # a transposed index tensor, read in place
    assert not idx.is_contiguous()
    _same(x[idx], a[raw])
    _same(x[:, idx], a[:, raw])
    step = _idx(np.arange(10) % 5, device)[::2]      # a strided index tensor
    _same(x[step, 1:], a[np.arange(10)[::2] % 5, 1:])


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_getitem_every_dtype(dtype, device):
    a, x = _pair((70, 3), device, dtype)                 # 150+ gathered elements: several blocks
    idx = RNG.integers(-70, 70, size=(50, 3))
    _same(x[_idx(idx, device, tt.int32)], a[idx])
    _same(x[_idx(idx, device), 1:], a[idx, 1:])
    mask = a[:, 0] != a[0, 0]
    _same(x[tt.tensor(mask, device=device)], a[mask])


def test_getitem_int_and_separated_index_follow_torch(device):
    # torch applies ints first (as a view): x[0, :, [0, 1]] is x[0][:, [0, 1]], shape (5, 2);
    # NumPy would count the int as an index and put the broadcast dim first, shape (2, 5)
    a, x = _pair((4, 5, 6), device)
    out = x[0, :, [0, 1]]
    assert out.shape == (5, 2)
    _same(out, a[0][:, [0, 1]])


def test_getitem_0d(device):
    x = tt.tensor(3.5, device=device)
    _same(x[True], np.array([3.5], np.float32))
    _same(x[False], np.zeros(0, np.float32))
    _same(x[None, tt.tensor(True, device=device)], np.array([[3.5]], np.float32))
    y = tt.arange(5, device=device)
    i = _idx(-2, device)                            # a 0-d integer tensor indexes like an int
    _same(y[i], np.array(3))
    _same(y[_idx([[-2]], device)[0, 0], None], np.array([3]))


def test_getitem_result_is_a_copy(device):
    x = tt.arange(6, device=device)
    y = x[[1, 2]]
    y[0] = 100
    _same(x, np.arange(6))


def test_getitem_cpu_index_for_cuda_tensor():
    x = tt.arange(6, device="cuda")
    _same(x[tt.tensor([5, 0])], np.array([5, 0]))
    _same(x[tt.tensor([True, False] * 3)], np.array([0, 2, 4]))


@pytest.mark.launch_blocking     # the bounds errors at the call (the deferred form: tests/test_device_asserts.py)
def test_getitem_errors(device):
    x = tt.zeros(4, 3, device=device)
    with pytest.raises(IndexError, match=r"^shape mismatch: indexing tensors could not be broadcast together "
                                         r"with shapes \[4\], \[3\]$"):
        x[_idx([0, 1, 2, 3], device), _idx([0, 1, 2], device)]
    with pytest.raises(IndexError, match=r"^index 5 is out of bounds for dimension 0 with size 4$"):
        x[_idx([1, 5, 7], device)]
    # torch names the position of the index tensor among the index tensors, not the dim
    with pytest.raises(IndexError, match=r"^index -4 is out of bounds for dimension 0 with size 3$"):
        x[:, _idx([0, -4], device)]
    with pytest.raises(IndexError, match=r"^index 3 is out of bounds for dimension 1 with size 3$"):
        x[_idx([0], device), _idx([3], device)]
    with pytest.raises(IndexError, match=r"^index is out of bounds for dimension with size 0$"):
        x[:, :0][:, _idx([0], device)]
    with pytest.raises(IndexError, match=r"^The shape of the mask \[3\] at index 0 does not match the shape of "
                                         r"the indexed tensor \[4, 3\] at index 0$"):
        x[_idx([True, False, True], device, tt.bool)]
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool tensors"):
        x[tt.tensor([0.0, 1.0], device=device)]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        x[_idx([0], device), 0, 0]
    with pytest.raises(IndexError, match=r"index 9 is out of bounds for dimension 0 with size 4"):
        x[9, _idx([0], device)]


# --------------------------------------------------------------------------- __setitem__
SET_KEYS = [
    ("basic-int", lambda d: 1, (1,)),
    ("basic-slices", lambda d: (slice(1, None, 2), None, Ellipsis, 2), (slice(1, None, 2), None, Ellipsis, 2)),
    ("idx", lambda d: _idx([3, -1, 0], d), (np.array([3, -1, 0]),)),
    ("idx-int32-cols", lambda d: (slice(None), _idx([0, 2], d, tt.int32)), (slice(None), np.array([0, 2]))),
    ("mixed", lambda d: (slice(1, 3), 1, _idx([[4], [0]], d)), (slice(1, 3), 1, np.array([[4], [0]]))),
    ("mask", lambda d: _idx(M0, d, tt.bool), (M0,)),
    ("mask-2d", lambda d: (slice(None), _idx(M12, d, tt.bool)), (slice(None), M12)),
    ("separated", lambda d: (_idx([0, 2], d), slice(None), _idx([1, 5], d)),
     (np.array([0, 2]), slice(None), np.array([1, 5]))),
    ("empty", lambda d: _idx(np.zeros(0, np.int64), d), (np.zeros(0, np.int64),)),
]


@pytest.mark.parametrize("value_kind", ["scalar", "tensor", "broadcast"])
@pytest.mark.parametrize("case", SET_KEYS, ids=[k[0] for k in SET_KEYS])
def test_setitem_matches_numpy(case, value_kind, device):
    _, key, np_key = case
    a, x = _pair((4, 5, 6), device, layout="transposed")
    a = a.copy()
    shape = a[np_key].shape
    if value_kind == "scalar":
        value, np_value = 2.5, 2.5
    else:
        vshape = shape if value_kind == "tensor" else shape[-1:]
        np_value = RNG.standard_normal(vshape)
        np_value = np_value.astype(np.float32)
        value = tt.tensor(np_value, device=device)   # index_put needs x's dtype (a cast raises, as torch)
    x[key(device)] = value
    a[np_key] = np_value
    _same(x, a)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_setitem_every_dtype(dtype, device):
    a, x = _pair((70, 2), device, dtype)
    a = a.copy()
    idx = RNG.permutation(70)[:40] - 35                 # distinct, some negative
    v = _data((40, 2), dtype)
    vt = tt.tensor(v, dtype=dtype)
    x[_idx(idx, device, tt.int32)] = vt.to(device)
    a[idx] = to_numpy(vt)
    _same(x, a)
    x[tt.tensor(a[:, 0] != a[0, 0], device=device)] = True if dtype is tt.bool else 7
    a[a[:, 0] != a[0, 0]] = True if dtype is tt.bool else 7
    _same(x, a)


def test_setitem_repeated_index_last_write_wins(device):
    x = tt.zeros(5, device=device)
    x[_idx([1, 1, 3, 1, 3], device)] = tt.tensor([1.0, 2.0, 3.0, 4.0, 5.0], device=device)
    _same(x, np.array([0, 4, 0, 5, 0], np.float32))
    x = tt.zeros(6, dtype=tt.int64, device=device)
    x[_idx([1, 1, 3, 1], device)] += 1                 # gather, add, put: once per position
    _same(x, np.array([0, 1, 0, 1, 0, 0]))
    # many repeats across scatter blocks: the last occurrence of each target wins, every run
    idx = RNG.integers(0, 7, size=300)
    vals = np.arange(300, dtype=np.float64)
    expect = np.zeros(7)
    for i, v in zip(idx, vals):
        expect[i] = v
    y = tt.zeros(7, dtype=tt.float64, device=device)
    y[_idx(idx, device)] = tt.tensor(vals, device=device)
    _same(y, expect)


def test_setitem_value_with_leading_ones_and_other_device(device):
    x = tt.zeros(3, 4, device=device)
    x[1] = tt.ones(1, 4)                  # torch drops leading size-1 dims of the value
    x[[0, 2]] = tt.full((1, 1, 4), 2.0)   # and accepts a value from the cpu
    _same(x, np.array([[2] * 4, [1] * 4, [2] * 4], np.float32))


@pytest.mark.launch_blocking     # the bounds errors at the call (the deferred form: tests/test_device_asserts.py)
def test_setitem_errors(device):
    x = tt.zeros(4, 3, device=device)
    with pytest.raises(RuntimeError, match=r"shape mismatch: value tensor of shape \[2\] cannot be broadcast to "
                                           r"indexing result of shape \[3, 3\]"):
        x[_idx([0, 1, 2], device)] = tt.ones(2, device=device)
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 0 with size 4"):
        x[_idx([4], device)] = 1.0
    leaf = tt.zeros(3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        leaf[_idx([0], device)] = 1.0


def test_setitem_self_overlap(device):
    x = tt.arange(6, device=device)
    with pytest.raises(RuntimeError, match=r"^unsupported operation: some elements of the input tensor and the "
                                           r"written-to tensor refer to a single memory location"):
        x[_idx([1, 2, 3], device)] = x[:3]             # values alias x: torch refuses
    x[_idx([1, 2, 3], device)] = x[:3].clone()
    _same(x, np.array([0, 0, 1, 2, 4, 5]))
    y = tt.arange(12, device=device).reshape(3, 4)
    y[_idx([1, 2], device)] = y[::2]                   # a strided alias is too hard to judge: allowed
    _same(y, np.array([[0, 1, 2, 3], [0, 1, 2, 3], [8, 9, 10, 11]]))


# --------------------------------------------------------------------------- index_put_
def test_index_put_accumulate_sums_every_occurrence(device):
    x = tt.zeros(5, device=device)
    x.index_put_((_idx([1, 1, 3, 1], device),), tt.ones(4, device=device), accumulate=True)
    _same(x, np.array([0, 3, 0, 1, 0], np.float32))
    x.index_put_((_idx([0, 4], device),), tt.tensor(2.0, device=device))
    _same(x, np.array([2, 3, 0, 1, 2], np.float32))


@pytest.mark.parametrize("dtype", [tt.bool, tt.int32, tt.float16, tt.bfloat16, tt.float32], ids=str)
def test_index_put_accumulate_matches_sequential_adds(dtype, device):
    a, x = _pair((6, 5), device, dtype)
    idx = RNG.integers(-6, 6, size=200)
    v = tt.tensor(_data((200, 5), dtype), dtype=dtype)
    out = tt.index_put(x, (_idx(idx, device),), v.to(device), accumulate=True)
    wide = _wide(dtype)
    expect = a.astype(wide)
    np.add.at(expect, idx, to_numpy(v).astype(wide))      # in index order, as the kernel adds
    # sums in float32 for 16-bit floats, rounded once: the same bits as NumPy's float32 sum rounded
    _same(out, to_numpy(tt.tensor(expect).to(dtype)))
    _same(x, a)                                           # index_put is out of place


@pytest.mark.parametrize("case", ["rows", "middle_dim", "two_indices", "transposed", "many_repeats", "broadcast"])
def test_index_put_accumulate_of_whole_rows_adds_in_index_order(case):
    """The cpu reference adds whole rows a target at a time (backends/numpy_ref._accumulate_rows):
    each element must still get its values in index order, rounded after every add, as a loop
    over the indices does (float32 values of mixed magnitudes: any other order changes bits)."""
    rng = np.random.default_rng(7)
    shape, n = {"rows": ((9, 4, 3), 300), "middle_dim": ((3, 9, 5), 200), "two_indices": ((6, 5, 4), 150),
                "transposed": ((9, 6), 120), "many_repeats": ((3, 4), 400), "broadcast": ((9, 4), 100)}[case]
    base = (rng.standard_normal(shape) * 1e3).astype(np.float32)
    x = tt.tensor(base.T.copy()).t() if case == "transposed" else tt.tensor(base)
    if case == "middle_dim":        # x[:, idx]'s backward: a key with a basic dim before the index
        idx = rng.integers(-9, 9, size=n)
        vals = (rng.standard_normal((3, n, 5)) * 10.0 ** rng.integers(-3, 4, size=(3, n, 5))).astype(np.float32)
        leaf = tt.tensor(base, requires_grad=True)
        (leaf[:, tt.tensor(idx)] * tt.tensor(vals)).sum().backward()
        expect = np.zeros_like(base)
        for j, i in enumerate(idx):
            expect[:, i] = (expect[:, i] + vals[:, j]).astype(np.float32)
        np.testing.assert_array_equal(leaf.grad.numpy(), expect)
        return
    elif case == "two_indices":
        i0, i1 = rng.integers(0, 6, size=n), rng.integers(0, 5, size=n)
        key, loop = (tt.tensor(i0), tt.tensor(i1)), [(int(a), int(b)) for a, b in zip(i0, i1)]
        vals = (rng.standard_normal((n, 4)) * 10.0 ** rng.integers(-3, 4, size=(n, 4))).astype(np.float32)
        per = list(vals)
    else:
        idx = rng.integers(0, shape[0], size=n)
        key, loop = (tt.tensor(idx),), [int(i) for i in idx]
        row = shape[1:]
        vals = (rng.standard_normal((1,) + row if case == "broadcast" else (n,) + row)
                * 10.0 ** rng.integers(-3, 4, size=(1 if case == "broadcast" else n,) + row)).astype(np.float32)
        per = [vals[0]] * n if case == "broadcast" else list(vals)
    expect = base.copy()
    for k, v in zip(loop, per):
        expect[k] = (expect[k] + v).astype(np.float32)      # one rounded add per index, in order
    out = x.index_put_(key, tt.tensor(vals), accumulate=True)
    np.testing.assert_array_equal(out.numpy(), expect)


def test_index_put_accumulate_is_deterministic(device):
    vals = tt.tensor(RNG.standard_normal(160) * 1e4, dtype=tt.float32, device=device)
    idx = _idx(RNG.integers(0, 3, size=160), device)
    runs = [to_numpy(tt.zeros(3, device=device).index_put_((idx,), vals, accumulate=True)) for _ in range(3)]
    assert all(r.tobytes() == runs[0].tobytes() for r in runs)
    expect = np.zeros(3, np.float32)
    for i, v in zip(to_numpy(idx), to_numpy(vals)):
        expect[i] = np.float32(expect[i] + v)          # the sequential float32 sum, bit for bit
    np.testing.assert_array_equal(runs[0], expect)


def test_index_put_errors_and_none(device):
    x = tt.zeros(2, 3, device=device)
    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match, got "
                                           "Float for the destination and Double for the source."):
        x.index_put_((_idx([0], device),), tt.ones(1, dtype=tt.float64, device=device))
    x.index_put_((None, _idx([2, 0], device)), tt.tensor([1.0, 2.0], device=device))
    _same(x, np.array([[2, 0, 1], [2, 0, 1]], np.float32))


# --------------------------------------------------------------------------- index_select / take
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_index_select(dtype, device):
    a, x = _pair((9, 20), device, dtype, layout="transposed")
    idx = RNG.integers(0, 20, size=13)
    _same(x.index_select(1, _idx(idx, device, tt.int32)), a[:, idx])
    _same(tt.index_select(x, -2, _idx(idx[:5] % 9, device)), a[idx[:5] % 9])
    _same(x.index_select(0, _idx(np.zeros(0, np.int64), device)), a[:0])
    _same(x.index_select(0, _idx(4, device)), a[[4]])


@pytest.mark.launch_blocking     # the bounds errors at the call (the deferred form: tests/test_device_asserts.py)
def test_index_select_errors(device):
    x = tt.zeros(3, 4, device=device)
    with pytest.raises(RuntimeError, match=r"index_select\(\): Expected dtype int32 or int64 for index"):
        x.index_select(0, tt.tensor([0.0], device=device))
    with pytest.raises(IndexError, match=r"index_select\(\): Index is supposed to be a vector"):
        x.index_select(0, _idx([[0]], device))
    with pytest.raises(IndexError, match="index out of range in self"):
        x.index_select(1, _idx([4], device))
    with pytest.raises(IndexError, match="index out of range in self"):
        x.index_select(1, _idx([-1], device))


@pytest.mark.launch_blocking     # the bounds errors at the call (the deferred form: tests/test_device_asserts.py)
def test_take(device):
    a, x = _pair((4, 5), device, layout="transposed")
    idx = np.array([[0, -1], [7, 19]])
    _same(tt.take(x, _idx(idx, device)), a.reshape(-1)[idx])
    with pytest.raises(IndexError, match="out of range: tried to access index 20 on a tensor of 20 elements."):
        x.take(_idx([20], device))


# --------------------------------------------------------------------------- gather / scatter
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_gather(dtype, device):
    a, x = _pair((6, 40), device, dtype, layout="sliced")
    idx = RNG.integers(0, 40, size=(5, 30))
    _same(x.gather(1, _idx(idx, device)), np.take_along_axis(a[:5], idx, 1))
    idx0 = RNG.integers(0, 6, size=(3, 40))
    t = _idx(idx0.T.copy(), device).t()                 # a non-contiguous index
    _same(tt.gather(x, 0, t), np.take_along_axis(a, idx0, 0))
    _same(x.gather(0, _idx(np.zeros((0, 4), np.int64), device)), np.zeros((0, 4), a.dtype))


def test_gather_0d(device):
    x = tt.tensor(2.5, device=device)
    _same(x.gather(0, _idx(0, device)), np.array(2.5, np.float32))


@pytest.mark.launch_blocking     # the bounds errors at the call (the deferred form: tests/test_device_asserts.py)
def test_gather_errors(device):
    x = tt.zeros(3, 4, device=device)
    with pytest.raises(RuntimeError, match="Index tensor must have the same number of dimensions as input tensor"):
        x.gather(0, _idx([0], device))
    with pytest.raises(RuntimeError, match=r"gather\(\): Expected dtype int32/int64 for index"):
        x.gather(0, _idx([[0]], device, tt.int16))
    with pytest.raises(RuntimeError, match=r"Size does not match at dimension 1 expected index \[1, 5\] to be "
                                           r"no larger than self \[3, 4\] apart from dimension 0"):
        x.gather(0, _idx([[0] * 5], device))
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 0 with size 3"):
        x.gather(0, _idx([[3]], device))
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 1 with size 4"):
        x.gather(1, _idx([[-1]], device))


def _np_scatter(a, dim, idx, src, add):
    out = a.copy()
    for pos in np.ndindex(*idx.shape):
        target = list(pos)
        target[dim] = idx[pos]
        v = src if np.ndim(src) == 0 else src[pos]
        out[tuple(target)] = out[tuple(target)] + v if add else v
    return out


@pytest.mark.parametrize("dtype", [tt.bool, tt.int8, tt.int64, tt.float16, tt.bfloat16, tt.float32, tt.float64],
                         ids=str)
def test_scatter_and_scatter_add(dtype, device):
    a, x = _pair((5, 8), device, dtype, layout="transposed")
    idx = np.stack([RNG.permutation(8)[:6] for _ in range(4)])   # distinct per row: torch's scatter contract
    src_a, src = _pair((4, 7), device, dtype)
    _same(x.scatter(1, _idx(idx, device), src), _np_scatter(a, 1, idx, src_a, False))
    _same(tt.scatter(x, 1, _idx(idx, device), 3), _np_scatter(a, 1, idx, np.array(3).astype(a.dtype), False))
    idx_dup = RNG.integers(0, 5, size=(30, 8))                   # many repeats, summed in order
    src2_a, src2 = _pair((30, 8), device, dtype)
    got = x.scatter_add(0, _idx(idx_dup, device), src2)
    wide = _wide(dtype)
    expect = _np_scatter(a.astype(wide), 0, idx_dup, src2_a.astype(wide), True)
    _same(got, to_numpy(tt.tensor(expect).to(dtype)))
    _same(x, a)


def test_scatter_inplace_and_repeats(device):
    x = tt.zeros(2, 4, device=device)
    src = tt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=device)
    out = x.scatter_(1, _idx([[1, 1, 1], [0, 3, 0]], device), src)
    assert out is x
    _same(x, np.array([[0, 3, 0, 0], [6, 0, 0, 5]], np.float32))       # last write wins
    x.scatter_add_(0, _idx([[1, 1, 1, 1]], device), tt.ones(1, 4, device=device))
    _same(x, np.array([[0, 3, 0, 0], [7, 1, 1, 6]], np.float32))
    y = tt.zeros((), device=device)
    _same(y.scatter(0, _idx(0, device), 4.0), np.array(4.0, np.float32))


def test_scatter_errors(device):
    x = tt.zeros(3, 4, device=device)
    with pytest.raises(RuntimeError, match=r"scatter\(\): Expected dtype int32/int64 for index"):
        x.scatter(0, _idx([[0]], device, tt.int16), 1.0)
    with pytest.raises(RuntimeError, match=r"scatter_add\(\): Expected dtype int32/int64 for index"):
        x.scatter_add(0, _idx([[0]], device, tt.int16), tt.ones(1, 1, device=device))
    with pytest.raises(RuntimeError, match="Index tensor must have the same number of dimensions as self tensor"):
        x.scatter(0, _idx([0], device), 1.0)
    with pytest.raises(RuntimeError, match=r"Expected index \[1, 5\] to be no larger than self \[3, 4\] apart from "
                                           r"dimension 0 and to be no larger size than src \[1, 5\]"):
        x.scatter(0, _idx([[0] * 5], device), tt.ones(1, 5, device=device))
    with pytest.raises(RuntimeError, match=r"scatter\(\): Expected self.dtype to be equal to src.dtype"):
        x.scatter(0, _idx([[0]], device), tt.ones(1, 1, dtype=tt.float64, device=device))
    with pytest.raises(RuntimeError, match="index 4 is out of bounds for dimension 1 with size 4"):
        x.scatter_add(1, _idx([[4]], device), tt.ones(1, 1, device=device))
    with pytest.raises(RuntimeError, match="^reduce argument must be either add or multiply.$"):
        x.scatter(0, _idx([[0]], device), 1.0, reduce="mean")    # add/multiply: test_parity_issue16.py


# --------------------------------------------------------------------------- nonzero / masked_select
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_nonzero(dtype, device):
    vals = _data((7, 23), dtype)
    vals[RNG.random((7, 23)) < 0.4] = 0
    t = tt.tensor(vals, dtype=dtype, device=device).t()       # non-contiguous: row-major order of the view
    a = to_numpy(tt.tensor(vals, dtype=dtype)).T
    _same(t.nonzero(), np.argwhere(a != 0))
    for got, want in zip(tt.nonzero(t, as_tuple=True), np.nonzero(a)):
        _same(got, want)
    for got, want in zip(tt.where(t), np.nonzero(a)):
        _same(got, want)


def test_nonzero_edge_cases(device):
    _same(tt.zeros(3, 0, device=device).nonzero(), np.zeros((0, 2), np.int64))
    _same(tt.zeros(4, device=device).nonzero(), np.zeros((0, 1), np.int64))
    _same(tt.tensor(5.0, device=device).nonzero(), np.zeros((1, 0), np.int64))
    _same(tt.tensor(0.0, device=device).nonzero(), np.zeros((0, 0), np.int64))
    (only,) = tt.tensor(5.0, device=device).nonzero(as_tuple=True)
    _same(only, np.array([0]))
    x = tt.tensor([0.0, float("nan"), -0.0, 2.0], device=device)    # NaN is nonzero, -0.0 is zero
    _same(x.nonzero(), np.array([[1], [3]]))
    big = np.zeros((2, 3, 2, 3, 2, 3, 2), bool)                      # 7 dims: one more than a launch takes
    big[1, 2, 0, 1, 1, 0, 1] = big[0, 0, 1, 2, 0, 2, 0] = True
    _same(tt.tensor(big, device=device).nonzero(), np.argwhere(big))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_masked_select(dtype, device):
    a, x = _pair((6, 30), device, dtype, layout="sliced")
    m = RNG.random((6, 30)) < 0.5
    _same(x.masked_select(tt.tensor(m, device=device)), a[m])
    mrow = RNG.random(30) < 0.5                                  # broadcast mask
    _same(tt.masked_select(x, tt.tensor(mrow, device=device)), a[np.broadcast_to(mrow, (6, 30))])
    _same(tt.masked_select(x[:1, :1].squeeze(), tt.tensor(m, device=device)),
          np.broadcast_to(a[0, 0], m.shape)[m])
    with pytest.raises(RuntimeError, match="masked_select: expected BoolTensor for mask"):
        x.masked_select(tt.zeros(6, 30, dtype=tt.uint8, device=device))


# --------------------------------------------------------------------------- autograd
def test_getitem_gradient_sums_repeated_indices(device):
    x = tt.zeros(5, dtype=tt.float64, device=device, requires_grad=True)
    y = x[_idx([1, 1, 3, 1], device)]
    assert y.grad_fn.name() == "IndexBackward0"
    (y * tt.tensor([1.0, 2.0, 3.0, 4.0], dtype=tt.float64, device=device)).sum().backward()
    _same(x.grad, np.array([0, 7, 0, 3, 0], np.float64))


def test_grad_fn_names(device):
    x = tt.ones(3, 4, device=device, requires_grad=True)
    i = _idx([[0, 1]], device)
    assert x.index_select(0, _idx([0], device)).grad_fn.name() == "IndexSelectBackward0"
    assert x.gather(1, i).grad_fn.name() == "GatherBackward0"
    assert x.scatter(1, i, 1.0).grad_fn.name() == "ScatterBackward1"
    assert x.scatter(1, i, tt.ones(1, 2, device=device)).grad_fn.name() == "ScatterBackward0"
    assert x.scatter_add(1, i, tt.ones(1, 2, device=device)).grad_fn.name() == "ScatterAddBackward0"
    assert x.masked_select(x > 0).grad_fn.name() == "MaskedSelectBackward0"
    y = x * 1
    y[_idx([0], device)] = tt.zeros(4, device=device, requires_grad=True)
    assert y.grad_fn.name() == "IndexPutBackward0"


def test_setitem_advanced_gradients(device):
    x = tt.tensor(np.arange(5.0), dtype=tt.float32, device=device, requires_grad=True)
    v = tt.tensor([10.0, 20.0], device=device, requires_grad=True)
    y = x * 1
    y[_idx([1, -1], device)] = v
    (y * tt.tensor([1.0, 2.0, 3.0, 4.0, 5.0], device=device)).sum().backward()
    _same(x.grad, np.array([1, 0, 3, 4, 0], np.float32))        # overwritten positions get none
    _same(v.grad, np.array([2, 5], np.float32))


def test_setitem_basic_key_gradients(device):
    """A basic-key setitem on a tensor that needs grad goes through a view (torch: CopySlices)."""
    x = tt.tensor(np.arange(6.0), device=device, requires_grad=True)
    v = tt.tensor(7.0, device=device, requires_grad=True)
    y = x * 2
    y[1:3] = v
    assert y.grad_fn.name() == "CopySlices"
    y.sum().backward()
    _same(x.grad, np.array([2, 0, 0, 2, 2, 2], np.float32))
    _same(v.grad, np.array(2, np.float32))


def test_masked_select_gradient_broadcast(device):
    x = tt.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    m = tt.tensor([[True, False, True], [True, True, False]], device=device)
    x.masked_select(m).sum().backward()
    _same(x.grad, np.array([2, 1, 1], np.float32))


def test_setitem_advanced_through_a_view_of_a_non_leaf(device):
    x = tt.tensor(np.arange(6.0), dtype=tt.float32, device=device, requires_grad=True)
    v = tt.tensor([10.0, 20.0], device=device, requires_grad=True)
    y = x * 1
    z = y[1:]
    z[[0, 3]] = v                          # index_put_ on a view: the base y records CopySlices
    (y * tt.tensor(np.arange(6.0), dtype=tt.float32, device=device)).sum().backward()
    _same(y.detach(), np.array([0, 10, 2, 3, 20, 5], np.float32))
    _same(x.grad, np.array([0, 0, 2, 3, 0, 5], np.float32))
    _same(v.grad, np.array([1, 4], np.float32))


def test_getitem_double_backward(device):
    x = tt.tensor([1.0, 2.0, 3.0], dtype=tt.float64, device=device, requires_grad=True)
    y = (x[[0, 0, 2]] ** 2).sum()
    (g,) = tt.autograd.grad(y, x, create_graph=True)
    _same(g, np.array([4.0, 0.0, 6.0]))
    (gg,) = tt.autograd.grad(g.sum(), x)
    _same(gg, np.array([4.0, 0.0, 2.0]))


def test_index_modified_in_place_after_forward_is_an_error(device):
    x = tt.ones(4, 3, device=device, requires_grad=True)
    idx = _idx([0, 2], device)
    y = x[idx]
    idx[0] = 1                              # the backward would scatter to the wrong rows
    with pytest.raises(RuntimeError, match="one of the variables needed for gradient computation has been "
                                           "modified by an inplace operation"):
        y.sum().backward()
    g_idx = _idx([[0], [2]], device)
    z = x.gather(1, g_idx)
    g_idx.zero_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


# --------------------------------------------------------------------------- torch-audit regressions
def test_setitem_value_dtype_rules(device):
    x = tt.zeros(2, 3, device=device)
    mismatch = r"^Index put requires the source and destination dtypes match, got Float for the destination and {} for the source.$"
    with pytest.raises(RuntimeError, match=mismatch.format("Double")):
        x[_idx([0], device)] = tt.ones(3, dtype=tt.float64, device=device)
    with pytest.raises(RuntimeError, match=mismatch.format("Long")):
        x[_idx([0], device), _idx([1], device)] = tt.tensor([3], device=device)
    with pytest.raises(RuntimeError, match=mismatch.format("Double")):       # a mask with a many-valued value
        x[_idx([True, False], device, tt.bool)] = tt.ones(3, dtype=tt.float64, device=device)
    # one bool mask and a one-element host value is masked_fill_: the value is converted
    x[_idx([True, False], device, tt.bool)] = tt.tensor(2.5, dtype=tt.float64)
    x[_idx([0], device)] = 7                                                 # Python numbers convert too
    x[:, 1] = tt.tensor([4, 5], device=device)                               # basic keys copy_ with a cast
    _same(x, np.array([[7, 4, 7], [0, 5, 0]], np.float32))
    with pytest.raises(RuntimeError, match="^masked_fill_ only supports boolean masks, but got mask with dtype "
                                           "unsigned char$"):
        x[_idx([1, 0], device, tt.uint8)] = 1.0
    with pytest.raises(RuntimeError, match="^value cannot be converted to type int8_t without overflow$"):
        tt.zeros(3, dtype=tt.int8, device=device)[_idx([0], device)] = 300
    with pytest.raises(RuntimeError, match=r"^The expanded size of the tensor \(3\) must match the existing size "
                                           r"\(2\) at non-singleton dimension 0.  Target sizes: \[3\].  Tensor "
                                           r"sizes: \[2\]$"):
        x[0] = tt.ones(2, device=device)
    with pytest.raises(ValueError, match="^slice step cannot be zero$"):
        x[::0]


def test_setitem_through_basic_part_records_copy_slices(device):
    x = tt.arange(6.0, device=device).view(2, 3).requires_grad_()
    v = tt.tensor([10.0], device=device, requires_grad=True)
    y = x * 1
    y[1, _idx([2], device)] = v              # torch: y[1] is a view, index_put_ into it
    assert y.grad_fn.name() == "CopySlices"
    y2 = x * 1
    y2[:, _idx([2], device)] = 5.0           # full slices make no view
    assert y2.grad_fn.name() == "IndexPutBackward0"
    (y * tt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=device)).sum().backward()
    _same(x.grad, np.array([[1, 2, 3], [4, 5, 0]], np.float32))
    _same(v.grad, np.array([6], np.float32))
    _same(y.detach(), np.array([[0, 1, 2], [3, 4, 10]], np.float32))


def test_index_select_gather_scatter_audit(device):
    x = tt.tensor(np.arange(12.0).reshape(3, 4), dtype=tt.float32, device=device)
    with pytest.raises(RuntimeError, match=r"^index_select\(\): Index to scalar can have only 1 value, got 2 value\(s\)$"):
        tt.tensor(3.0, device=device).index_select(0, _idx([0, 0], device))
    idx32 = _idx([[3, 0], [1, 1], [0, 2]], device, tt.int32)                 # gather/scatter take int32 too
    _same(x.gather(1, idx32), np.take_along_axis(np.arange(12.0).reshape(3, 4), np.array([[3, 0], [1, 1], [0, 2]]), 1))
    s = x.scatter(1, _idx([[0], [3], [2]], device, tt.int32), -1.0)
    _same(s, np.array([[-1, 1, 2, 3], [4, 5, 6, -1], [8, 9, -1, 11]], np.float32))
    internal = r"^unsupported operation: more than one element of the written-to tensor refers to a single"
    with pytest.raises(RuntimeError, match=internal):
        tt.zeros(3, device=device).expand(2, 3).scatter_(0, _idx([[0, 1, 0]], device), 5.0)
    with pytest.raises(RuntimeError, match=r"^unsupported operation: some elements of the input tensor and the written-to"):
        x.scatter_(1, _idx([[0]], device), x)
    e = tt.zeros(0, 3, device=device)
    with pytest.raises(IndexError, match="^index is out of bounds for dimension with size 0$"):
        e[_idx([0], device)]
    assert e[:, _idx([1, 2], device)].shape == (0, 2)
