"""Several CUDA devices: the current device, placement, the device context managers, ops that
run on their tensors' device, torch's cross-device error, and copies between devices.

The suite's emulated device stands for two GPUs (tests/conftest.py sets
TRITENSOR_EMULATED_DEVICES=2); on a machine with one real GPU the two-device tests skip.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import tritensor as tt

from conftest import to_numpy

two_devices = pytest.mark.skipif(tt.cuda.device_count() < 2, reason="needs two CUDA devices")


@pytest.fixture(autouse=True)
def _back_to_device_0():
    yield
    tt.cuda.set_device(0)


# ----------------------------------------------------------------------------- device queries
def test_device_properties():
    p = tt.cuda.get_device_properties(0)
    assert isinstance(p.name, str) and p.name == tt.cuda.get_device_name(0) == tt.cuda.get_device_name()
    assert p.total_memory > 0 and p.multi_processor_count > 0
    assert (p.major, p.minor) == tt.cuda.get_device_capability() and p.major >= 7
    assert tt.cuda.get_device_properties("cuda:0") is p
    assert tt.cuda.get_device_properties(tt.device("cuda", 0)) is p
    assert repr(p).startswith("_CudaDeviceProperties(name=")
    free, total = tt.cuda.mem_get_info()
    assert 0 < free <= total == p.total_memory
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        tt.cuda.get_device_properties(tt.cuda.device_count())
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        tt.cuda.get_device_properties("cpu")


def test_set_device_and_context_on_one_device():
    assert tt.cuda.current_device() == 0
    tt.cuda.set_device(-1)             # torch: a negative index changes nothing
    assert tt.cuda.current_device() == 0
    with tt.cuda.device(None):
        assert tt.cuda.current_device() == 0
    with tt.cuda.device(0):
        assert tt.cuda.current_device() == 0
    n = tt.cuda.device_count()
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        tt.cuda.set_device(n)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        with tt.cuda.device(n):
            pass
    assert tt.cuda.current_device() == 0
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        tt.cuda.set_device("cpu")


# ----------------------------------------------------------------------------- several devices
@two_devices
def test_current_device_and_contexts():
    tt.cuda.set_device(1)
    assert tt.cuda.current_device() == 1
    assert tt.zeros(2, device="cuda").device == tt.device("cuda:1")
    tt.cuda.set_device(tt.device("cuda:0"))
    assert tt.cuda.current_device() == 0
    with tt.cuda.device(1):
        assert tt.cuda.current_device() == 1
        assert tt.ones(2, device="cuda").device == tt.device("cuda", 1)
        assert tt.tensor([1.0], device=tt.device("cuda")).device == tt.device("cuda:1")
        with tt.cuda.device("cuda:0"):
            assert tt.cuda.current_device() == 0
        assert tt.cuda.current_device() == 1
    assert tt.cuda.current_device() == 0
    with tt.cuda.device(tt.device("cuda", 1)):
        assert tt.cuda.current_device() == 1
    x = tt.arange(3.0, device="cuda:1")
    with tt.cuda.device_of(x):
        assert tt.cuda.current_device() == 1
    with tt.cuda.device_of(tt.zeros(1)):      # a cpu tensor changes nothing
        assert tt.cuda.current_device() == 0


@two_devices
def test_current_device_is_per_thread():
    import threading
    seen = []
    with tt.cuda.device(1):
        th = threading.Thread(target=lambda: seen.append(tt.cuda.current_device()))
        th.start()
        th.join()
    assert seen == [0]


@two_devices
def test_ops_run_on_their_tensors_device_whatever_the_current_one():
    a = tt.arange(200, dtype=tt.float32, device="cuda:1")
    b = tt.full((200,), 2.0, device="cuda:1")
    assert tt.cuda.current_device() == 0
    c = a * b + 1
    s = c.sum()
    m = tt.matmul(a.reshape(10, 20), b.reshape(20, 10))
    assert c.device == s.device == m.device == tt.device("cuda:1")
    assert tt.cuda.current_device() == 0
    np.testing.assert_allclose(to_numpy(c), np.arange(200) * 2.0 + 1)
    assert s.item() == float((np.arange(200) * 2.0 + 1).sum())
    np.testing.assert_allclose(to_numpy(m), np.arange(200.0).reshape(10, 20) @ np.full((20, 10), 2.0), rtol=1e-6)
    with tt.cuda.device(0):
        assert (a + 1).device == tt.device("cuda:1")


@two_devices
def test_each_device_has_its_own_memory():
    before0, before1 = tt.cuda.memory_allocated(0), tt.cuda.memory_allocated(1)
    free0 = tt.cuda.mem_get_info(0)[0]
    free1 = tt.cuda.mem_get_info(1)[0]
    x = tt.empty(41 << 20, dtype=tt.uint8, device="cuda:1")     # a segment of its own
    assert tt.cuda.memory_allocated(1) >= before1 + (41 << 20)
    assert tt.cuda.memory_allocated(0) == before0
    if tt.cuda.is_emulated():       # a real GPU's free memory moves with other processes too
        assert tt.cuda.mem_get_info(1)[0] <= free1 - (41 << 20)
        assert tt.cuda.mem_get_info(0)[0] == free0
    del x


@two_devices
def test_mixing_devices_raises_torchs_error():
    a = tt.ones(3, device="cuda:0")
    b = tt.ones(3, device="cuda:1")
    msg = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cuda:1!"
    with pytest.raises(RuntimeError, match=msg):
        a + b
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        tt.matmul(a.reshape(3, 1), b.reshape(1, 3))
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        a.add_(b)
    # a 0-d cpu tensor joins any cuda op as a scalar (torch's rule), on either device
    assert (b + tt.tensor(2.0)).device == tt.device("cuda:1")


@two_devices
def test_copies_between_devices():
    host = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = tt.tensor(host, device="cuda:0")
    y = x.to("cuda:1")
    assert y.device == tt.device("cuda:1") and x.device == tt.device("cuda:0")
    np.testing.assert_array_equal(to_numpy(y), host)
    assert x.to("cuda:0") is x
    np.testing.assert_array_equal(to_numpy(x.cuda(1)), host)
    np.testing.assert_array_equal(to_numpy(y.cuda(tt.device("cuda:0"))), host)
    np.testing.assert_array_equal(to_numpy(x.t().to("cuda:1")), host.T)         # non-contiguous
    z = x.to("cuda:1", tt.float64)
    assert z.dtype is tt.float64 and z.device == tt.device("cuda:1")
    # copy_ across devices: broadcast and cast into the destination, in place
    dst = tt.zeros(4, 6, dtype=tt.float64, device="cuda:1")
    dst.copy_(x)
    np.testing.assert_array_equal(to_numpy(dst), host)
    dst2 = tt.zeros(4, 6, device="cuda:1")
    dst2.copy_(x[0])
    np.testing.assert_array_equal(to_numpy(dst2), np.broadcast_to(host[0], (4, 6)))
    dst3 = tt.zeros(6, 4, device="cuda:0").t()
    dst3.copy_(y)
    np.testing.assert_array_equal(to_numpy(dst3), host)
    empty = tt.zeros(0, 3, device="cuda:0").to("cuda:1")
    assert empty.shape == (0, 3) and empty.device == tt.device("cuda:1")


@two_devices
def test_cross_device_copy_is_differentiable():
    x = tt.tensor([1.0, 2.0, 3.0], device="cuda:1", requires_grad=True)
    y = x.to("cuda:0")
    assert y.grad_fn.name() == "ToCopyBackward0"
    (y * y).sum().backward()
    assert x.grad.device == tt.device("cuda:1")
    np.testing.assert_array_equal(to_numpy(x.grad), [2.0, 4.0, 6.0])


@two_devices
def test_cross_device_copy_on_streams():
    """A copy between devices waits for the destination's current stream and makes it wait for
    the copy, so work queued on either side before or after sees the right bytes."""
    s0, s1 = tt.cuda.Stream(0), tt.cuda.Stream(1)
    with tt.cuda.stream(s0):
        a = tt.arange(100.0, device="cuda:0") * 3
    with tt.cuda.stream(s1):
        b = a.to("cuda:1")
        c = b + 1
    tt.cuda.synchronize(0)
    tt.cuda.synchronize(1)
    np.testing.assert_array_equal(to_numpy(c), np.arange(100.0) * 3 + 1)


def _interpreter_cannot_run():
    """runtime/device.py's check: this Triton's interpreter fails with this NumPy (a GPU machine
    may pair them; the emulated device then refuses to start with a RuntimeError saying why)."""
    import inspect

    from triton.runtime import interpreter

    from tritensor.runtime.device import interpreter_breaks_on
    return interpreter_breaks_on(inspect.getsource(interpreter._patch_lang_tensor), np.__version__)


def test_emulated_device_count_comes_from_the_environment():
    """TRITENSOR_EMULATED_DEVICES is read once, at the first question about devices; bad values
    are refused."""
    if _interpreter_cannot_run():
        pytest.skip(f"Triton's interpreter cannot run with NumPy {np.__version__} (triton-lang/triton#9171): "
                    "no emulated device in this environment")
    code = ("import tritensor as tt; print(tt.cuda.device_count()); "
            "x = tt.ones(2, device='cuda:2'); print(x.device, tt.cuda.get_device_name(2))")
    env = dict(os.environ, TRITENSOR_EMULATE_CUDA="1", TRITENSOR_EMULATED_DEVICES="3")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.split("\n")
    assert lines[0] == "3" and lines[1].startswith("cuda:2 ")
    env["TRITENSOR_EMULATED_DEVICES"] = "zero"
    out = subprocess.run([sys.executable, "-c", "import tritensor as tt; tt.cuda.device_count()"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "TRITENSOR_EMULATED_DEVICES must be a positive integer" in out.stderr
