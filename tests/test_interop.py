"""Zero-copy interchange (runtime/dlpack.py): DLPack both ways with NumPy (legacy and versioned
capsules, strides, 0-d, size-0, bfloat16, copies, the stream handshake), __cuda_array_interface__
v3 both ways, as_tensor/asarray sharing memory, Tensor.numpy() sharing cpu memory. CuPy and JAX
are peers only where importable; torch is never imported."""
import ctypes
import gc
import sys
import weakref

import ml_dtypes
import numpy as np
import pytest

import tritensor as tt
from tritensor.ops.creation import as_tensor, asarray, from_dlpack
from tritensor.runtime import dlpack
from tritensor.runtime.dlpack import DLDeviceType

DTYPES = [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16, np.float32, np.float64]


def capsule_struct(capsule):
    """The DLManagedTensor[Versioned] a capsule holds (to read what a producer wrote; valid while
    the capsule lives)."""
    name = dlpack._api.PyCapsule_GetName(capsule)
    address = dlpack._api.PyCapsule_GetPointer(ctypes.c_void_p(id(capsule)), name)
    cls = dlpack.DLManagedTensorVersioned if name.endswith(b"versioned") else dlpack.DLManagedTensor
    return name, cls.from_address(address)


# ----------------------------------------------------------------------------- tritensor -> NumPy
@pytest.mark.parametrize("np_dtype", DTYPES)
def test_numpy_reads_cpu_tensors_without_a_copy(np_dtype):
    src = (np.arange(12) % 3).astype(np_dtype).reshape(3, 4)
    t = tt.tensor(src)
    a = np.from_dlpack(t)
    assert a.dtype == np_dtype and a.shape == (3, 4)
    assert a.ctypes.data == t.data_ptr()
    np.testing.assert_array_equal(a, src)
    a[1, 2] = 1                                     # writes are visible both ways
    assert t[1, 2].item() == 1
    t[0, 0] = 2 if np_dtype is not np.bool_ else True
    assert a[0, 0] == t[0, 0].item()


def test_numpy_reads_strided_offset_0d_and_empty_tensors():
    t = tt.arange(24.0).reshape(4, 6)
    v = t[1:, ::2].t()                              # offset, step, transposed
    a = np.from_dlpack(v)
    assert a.strides == (8, 24) and a.ctypes.data == v.data_ptr()
    np.testing.assert_array_equal(a, np.arange(24.0).reshape(4, 6)[1:, ::2].T)
    s = np.from_dlpack(tt.tensor(7, dtype=tt.int32))
    assert s.shape == () and s == 7
    e = np.from_dlpack(tt.empty(0, 3))
    assert e.shape == (0, 3)


def test_the_exported_tensor_lives_as_long_as_the_consumer_needs_it():
    t = tt.arange(1000, dtype=tt.int64)
    ref = weakref.ref(t._storage)
    a = np.from_dlpack(t)
    del t
    gc.collect()
    assert ref() is not None                        # the array still uses it
    assert a[999] == 999
    del a
    gc.collect()
    assert ref() is None


def test_an_unconsumed_capsule_releases_the_tensor():
    t = tt.ones(10)
    ref = weakref.ref(t._storage)
    cap = t.__dlpack__()
    del t
    gc.collect()
    assert ref() is not None
    del cap
    gc.collect()
    assert ref() is None


def test_capsule_kinds_follow_max_version():
    t = tt.arange(6.0).reshape(2, 3)
    cap = t.__dlpack__()
    name, legacy = capsule_struct(cap)
    assert name == b"dltensor" and legacy.dl_tensor.ndim == 2
    cap = t.__dlpack__(max_version=(1, 2))
    name, v = capsule_struct(cap)
    assert name == b"dltensor_versioned"
    assert (v.version.major, v.version.minor) == (1, 0) and v.flags == 0
    assert (v.dl_tensor.device.device_type, v.dl_tensor.device.device_id) == (1, 0)
    assert list(v.dl_tensor.shape[:2]) == [2, 3] and list(v.dl_tensor.strides[:2]) == [3, 1]
    assert (v.dl_tensor.dtype.code, v.dl_tensor.dtype.bits, v.dl_tensor.dtype.lanes) == (2, 32, 1)
    assert v.dl_tensor.data + v.dl_tensor.byte_offset == t.data_ptr()
    cap = t.__dlpack__(max_version=(0, 8))
    assert capsule_struct(cap)[0] == b"dltensor"
    cap = t.__dlpack__(max_version=(1, 0), copy=True)
    name, c = capsule_struct(cap)
    assert c.flags == dlpack.FLAG_IS_COPIED and c.dl_tensor.data != t.data_ptr()
    assert t.__dlpack_device__() == (DLDeviceType.kDLCPU, 0)


def test_pinned_tensors_export_as_cuda_host_memory():
    p = tt.arange(4.0).pin_memory()
    assert p.__dlpack_device__() == (DLDeviceType.kDLCUDAHost, 0)
    a = np.from_dlpack(p)                     # NumPy reads pinned host memory in place
    assert a.ctypes.data == p.data_ptr()
    back = from_dlpack(p)
    assert back.device == tt.device("cpu") and back.data_ptr() == p.data_ptr()


def test_copy_true_gives_numpy_its_own_memory():
    t = tt.arange(4.0)
    a = np.from_dlpack(t, copy=True)
    a[0] = 9
    assert t[0].item() == 0


def test_export_errors_follow_torch():
    with pytest.raises(BufferError, match="Can't export tensors that require gradient, use tensor.detach()"):
        tt.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(AssertionError, match="stream should be None on cpu."):
        tt.ones(2).__dlpack__(stream=3)
    with pytest.raises(TypeError, match="stream must be ``int`` or ``none``"):
        tt.ones(2).__dlpack__(stream="3")
    with pytest.raises(BufferError):
        tt.ones(2).__dlpack__(dl_device=(DLDeviceType.kDLCUDA, 0))


# ----------------------------------------------------------------------------- NumPy -> tritensor
@pytest.mark.parametrize("np_dtype", DTYPES)
def test_from_dlpack_shares_numpy_memory(np_dtype):
    a = (np.arange(20) % 5).astype(np_dtype).reshape(4, 5)
    t = from_dlpack(a)
    assert t.device == tt.device("cpu") and t.dtype.numpy_dtype == np.dtype(np_dtype)
    assert t.data_ptr() == a.ctypes.data and tuple(t.shape) == (4, 5) and t.stride() == (5, 1)
    np.testing.assert_array_equal(t.numpy(), a)
    a[2, 3] = 1
    assert t[2, 3].item() == 1
    t[3, 4] = 0
    assert a[3, 4] == 0


def test_from_dlpack_strides_0d_empty_and_lifetime():
    base = np.arange(30.0).reshape(5, 6)
    view = base[1::2, ::3]
    t = from_dlpack(view)
    assert t.stride() == (12, 3) and t.data_ptr() == view.ctypes.data
    np.testing.assert_array_equal(t.numpy(), view)
    assert t.numpy().ctypes.data == view.ctypes.data          # numpy() shares the cpu memory too
    z = from_dlpack(np.array(3.5))
    assert z.shape == () and z.item() == 3.5
    assert from_dlpack(np.empty((3, 0))).shape == (3, 0)
    owner = np.arange(100, dtype=np.int32)
    t = from_dlpack(owner)
    del owner, base, view
    gc.collect()
    assert t.sum().item() == 4950                               # the producer's memory is kept
    with pytest.raises(BufferError):
        from_dlpack(np.arange(4)[::-1])                         # negative strides


def test_capsules_are_consumed_once():
    t = tt.arange(3.0)
    cap = t.__dlpack__()
    u = from_dlpack(cap)
    assert u.data_ptr() == t.data_ptr()
    assert "used_dltensor" in repr(cap)
    with pytest.raises(RuntimeError, match="DLTensor capsules can be consumed only once"):
        from_dlpack(cap)
    vcap = t.__dlpack__(max_version=(1, 0))
    v = from_dlpack(vcap)
    assert "used_dltensor_versioned" in repr(vcap) and v.data_ptr() == t.data_ptr()
    with pytest.raises(RuntimeError, match="invalid capsule"):
        from_dlpack(12)


def test_utils_dlpack_module():
    from tritensor.utils import dlpack as udl
    t = tt.arange(4.0)
    cap = udl.to_dlpack(t)
    assert "dltensor" in repr(cap)
    u = udl.from_dlpack(cap)
    assert u.data_ptr() == t.data_ptr()
    assert udl.DLDeviceType.kDLCUDA == 2


def test_bfloat16():
    t = tt.tensor([1.5, -2.0, 3.25], dtype=tt.bfloat16)
    cap = t.__dlpack__(max_version=(1, 0))
    name, m = capsule_struct(cap)
    assert (m.dl_tensor.dtype.code, m.dl_tensor.dtype.bits) == (4, 16)     # kDLBfloat
    u = from_dlpack(t)
    assert u.dtype == tt.bfloat16 and u.data_ptr() == t.data_ptr()
    with pytest.raises(RuntimeError, match="Unsupported dtype"):
        np.from_dlpack(t)                                  # NumPy has no bfloat16 in DLPack
    a = np.array([1.0, 2.0, 0.5], dtype=ml_dtypes.bfloat16)
    b = as_tensor(a)                                       # ml_dtypes arrays are shared as NumPy arrays
    assert b.dtype == tt.bfloat16 and b.data_ptr() == a.ctypes.data
    b[0] = 4.0
    assert float(a[0]) == 4.0


# ----------------------------------------------------------------------------- cuda tensors
def test_cuda_tensors_export_as_cuda_memory():
    g = tt.arange(6.0, device="cuda")
    assert g.__dlpack_device__() == (DLDeviceType.kDLCUDA, 0)
    # NumPy reads host memory only; it refuses a cuda DLTensor as it refuses torch's, with
    # BufferError since NumPy 2.5 (numpy#31000), RuntimeError before
    refusal = BufferError if tuple(int(p) for p in np.__version__.split(".")[:2]) >= (2, 5) else RuntimeError
    with pytest.raises(refusal, match="Unsupported device in DLTensor"):
        np.from_dlpack(g)
    np.testing.assert_array_equal(np.from_dlpack(g, device="cpu"), np.arange(6.0))   # dl_device: a copy
    h = from_dlpack(g)
    assert h.device == g.device and h.data_ptr() == g.data_ptr()
    h[0] = 5.0
    assert g[0].item() == 5.0


def _record_waits(monkeypatch):
    from tritensor.runtime import streams
    waits = []
    original = streams.Event.wait

    def wait(self, stream=None):
        waits.append(stream.cuda_stream)
        return original(self, stream)

    monkeypatch.setattr(streams.Event, "wait", wait)
    return waits


def test_dlpack_stream_handshake(monkeypatch):
    waits = _record_waits(monkeypatch)
    g = tt.ones(4, device="cuda")
    consumer = tt.cuda.Stream()
    g.__dlpack__(stream=consumer.cuda_stream)            # the consumer's stream waits for ours
    assert waits == [consumer.cuda_stream]
    g.__dlpack__(stream=-1)                               # -1: no synchronisation
    g.__dlpack__(stream=1)                                # the legacy default stream: ours already
    assert waits == [consumer.cuda_stream]
    producer = tt.cuda.Stream()
    with tt.cuda.stream(producer):
        g.__dlpack__(stream=None)                         # None: the legacy default stream waits
    assert waits[-1] == 0
    with pytest.raises(BufferError, match="per-thread default stream is not supported."):
        g.__dlpack__(stream=2)
    with pytest.raises(AssertionError, match="unsupported stream on CUDA: 0."):
        g.__dlpack__(stream=0)
    del waits[:]
    with tt.cuda.stream(consumer):
        from_dlpack(g)                                    # we pass our stream; it is g's too here
    assert waits == []


# ----------------------------------------------------------------------------- __cuda_array_interface__
class CudaArray:
    """A foreign CUDA array: only its __cuda_array_interface__ (copied from a tensor)."""

    def __init__(self, cai, owner):
        self.__cuda_array_interface__ = cai
        self.owner = owner


def test_cuda_array_interface_fields():
    g = tt.arange(12.0, device="cuda").reshape(3, 4)
    cai = g.__cuda_array_interface__
    assert cai == {"shape": (3, 4), "typestr": "<f4", "data": (g.data_ptr(), False), "strides": None,
                   "version": 3, "stream": 1}
    v = g[:, 1::2]
    cai = v.__cuda_array_interface__
    assert cai["strides"] == (16, 8) and cai["data"][0] == v.data_ptr() and cai["shape"] == (3, 2)
    assert tt.empty(0, device="cuda").__cuda_array_interface__["data"] == (0, False)
    assert tt.zeros(2, dtype=tt.bool, device="cuda").__cuda_array_interface__["typestr"] == "|b1"
    s = tt.cuda.Stream()
    with tt.cuda.stream(s):
        assert g.__cuda_array_interface__["stream"] == s.cuda_stream
    assert not hasattr(tt.ones(2), "__cuda_array_interface__")
    with pytest.raises(AttributeError, match="non-CUDA tensor type: torch.FloatTensor"):
        tt.ones(2).__cuda_array_interface__
    with pytest.raises(RuntimeError, match="requires grad"):
        tt.ones(2, device="cuda", requires_grad=True).__cuda_array_interface__


def test_as_tensor_takes_cuda_arrays_without_a_copy(monkeypatch):
    g = tt.arange(12.0, device="cuda").reshape(3, 4)
    view = g[:, ::2]
    foreign = CudaArray(view.__cuda_array_interface__, g)
    t = as_tensor(foreign, device="cuda")
    assert t.device == g.device and t.data_ptr() == view.data_ptr() and t.stride() == (4, 2)
    t[0, 1] = 100.0
    assert g[0, 2].item() == 100.0
    waits = _record_waits(monkeypatch)
    s = tt.cuda.Stream()
    cai = dict(g.__cuda_array_interface__, stream=s.cuda_stream)
    u = asarray(CudaArray(cai, g))                      # we wait for the producer's stream
    assert u.data_ptr() == g.data_ptr() and waits == [0]
    assert as_tensor(CudaArray(cai, g), dtype=tt.float64).dtype == tt.float64     # converted: a copy
    with pytest.raises(ValueError, match="stream 0 is disallowed"):
        as_tensor(CudaArray(dict(cai, stream=0), g))


# ----------------------------------------------------------------------------- as_tensor / asarray
def test_as_tensor_and_asarray_share_numpy_memory():
    a = np.arange(6.0)
    for t in (as_tensor(a), as_tensor(a, dtype=tt.float64), asarray(a), asarray(a, dtype=tt.float64)):
        assert t.data_ptr() == a.ctypes.data
    assert as_tensor(a, dtype=tt.float32).data_ptr() != a.ctypes.data
    assert asarray(a, copy=True).data_ptr() != a.ctypes.data
    g = as_tensor(a, device="cuda")
    assert g.device.type == "cuda" and g.data_ptr() != a.ctypes.data
    with pytest.raises(ValueError, match="can't alias tensor with dtype 'Double' into dtype 'Float'."):
        asarray(a, dtype=tt.float32, copy=False)
    with pytest.raises(ValueError, match="can't alias tensor from device 'cpu' to 'cuda:0'."):
        asarray(a, device="cuda", copy=False)
    with pytest.raises(ValueError, match="can't alias arbitrary sequence into a tensor."):
        asarray([1, 2], copy=False)
    assert asarray([1, 2]).dtype == tt.int64


def test_asarray_of_tensors():
    t = tt.arange(3.0)
    assert asarray(t) is t
    w = tt.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="unspecified requires_grad now defaults to obj.requires_grad"):
        assert asarray(w) is w
    d = asarray(w, requires_grad=False)
    assert not d.requires_grad and d.data_ptr() == w.data_ptr()
    r = asarray(t, requires_grad=True)
    assert r is t and t.requires_grad
    dl = asarray(np.arange(4.0)[::2])
    assert dl.stride() == (2,)


def test_numpy_of_a_cpu_tensor_shares_memory():
    t = tt.zeros(4)
    a = t.numpy()
    a[1] = 3.0
    assert t[1].item() == 3.0
    t.add_(1.0)
    np.testing.assert_array_equal(a, [1.0, 4.0, 1.0, 1.0])


# ----------------------------------------------------------------------------- peers
def test_cupy_round_trips():
    cp = pytest.importorskip("cupy")
    if tt.cuda.is_emulated() or not tt.cuda.is_available():
        pytest.skip("needs a real GPU")
    c = cp.arange(10, dtype=cp.float32)
    t = from_dlpack(c)
    assert t.device.type == "cuda" and t.data_ptr() == c.data.ptr
    t2 = as_tensor(c, device="cuda")
    assert t2.data_ptr() == c.data.ptr
    back = cp.from_dlpack(t)
    assert back.data.ptr == t.data_ptr()
    c2 = cp.asarray(t)                                   # through __cuda_array_interface__
    assert c2.data.ptr == t.data_ptr()
    t[0] = 42.0
    tt.cuda.synchronize()
    assert float(c[0]) == 42.0


def test_jax_round_trips():
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.arange(5.0)
    t = from_dlpack(x)
    np.testing.assert_array_equal(t.cpu().numpy(), np.arange(5.0))
    y = jnp.from_dlpack(tt.arange(4.0))
    np.testing.assert_array_equal(np.asarray(y), np.arange(4.0))


_NO_TORCH_SCRIPT = """
import sys, numpy as np, tritensor as tt
from tritensor.ops.creation import as_tensor, asarray, from_dlpack
a = np.arange(6.0).reshape(2, 3)
t = from_dlpack(a)                                   # NumPy -> tritensor (DLPack)
assert np.from_dlpack(t).ctypes.data == a.ctypes.data and t.numpy().base is not None
assert as_tensor(a).data_ptr() == a.ctypes.data and asarray(a[:, ::2]).shape == (2, 2)
c = tt.arange(4.0, device="cuda")                    # the emulated device's array interface
assert from_dlpack(c).data_ptr() == c.data_ptr() and c.__cuda_array_interface__["shape"] == (4,)
print(sorted(m for m in sys.modules if m == "torch" or m.startswith("torch.")))
import types; sys.modules["torch"] = types.ModuleType("torch")     # the check's own check:
print(sorted(m for m in sys.modules if m == "torch" or m.startswith("torch.")))   # it sees one
"""


def test_torch_is_never_imported():
    """In a fresh interpreter (this one may have imported torch for an optional peer, or not yet
    run a single interop call): DLPack and the array interfaces both ways, then no torch module.
    The same listing, after a stand-in torch module is loaded, is seen to fail the check."""
    import os
    import subprocess
    env = dict(os.environ, TRITENSOR_EMULATE_CUDA="1")
    proc = subprocess.run([sys.executable, "-c", _NO_TORCH_SCRIPT], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[-3:] == ["[]", "['torch']", ""]
