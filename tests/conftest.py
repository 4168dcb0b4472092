"""Shared fixtures: every device test runs on cpu and on cuda (a real GPU when one is there,
otherwise the emulated device: the same Triton kernels under Triton's interpreter)."""
import os

# Before NumPy loads OpenBLAS: the emulated device's tl.dot is np.matmul on blocks of at most a
# few hundred rows, where more BLAS threads only contend (measured on a loaded 2-core machine,
# 128x64 @ 64x128 float32: 0.06 ms with one thread, 45 ms with two), the more so under xdist.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402


def _real_gpu():
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


if not _real_gpu():
    os.environ.setdefault("TRITENSOR_EMULATE_CUDA", "1")
    # the emulated device stands for two GPUs, so cuda:1 and the cross-device rules are tested
    os.environ.setdefault("TRITENSOR_EMULATED_DEVICES", "2")
# The emulated device's launch profile (backends/triton/_plan.py): the suite's tests of single ops
# run the "small" blocks, so that their shapes cross block edges and hit the masks; model-level
# tests (training loops, the main job, whole networks) ask for the user's default, the "fast"
# profile of few large programs, with @pytest.mark.emulated_blocks("fast") (see below).
# TRITENSOR_EMULATED_BLOCKS=fast runs the whole suite under it.
os.environ.setdefault("TRITENSOR_EMULATED_BLOCKS", "small")

import tritensor as tt  # noqa: E402

# tt_device / cross_device fixtures, as a user enables them (tests/test_testing.py checks them)
pytest_plugins = ["tritensor.testing.pytest_plugin"]


@pytest.fixture(params=["cpu", "cuda"])
def device(request):
    return request.param


def pytest_collection_modifyitems(config, items):
    if tt.cuda.is_available() and not tt.cuda.is_emulated():
        return
    skip = pytest.mark.skip(reason="needs a real NVIDIA GPU")
    for item in items:
        if item.get_closest_marker("gpu"):
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _emulated_blocks(request):
    """@pytest.mark.emulated_blocks(name): the test runs with the emulated device's launch profile
    ``name`` ("fast", "small" or "gpu"); a real GPU is unaffected."""
    marker = request.node.get_closest_marker("emulated_blocks")
    if marker is None:
        yield
        return
    from tritensor.backends import triton as tb
    with tb.emulated_blocks(*marker.args):
        yield


@pytest.fixture(autouse=True)
def _device_asserts(request):
    """@pytest.mark.launch_blocking: the test runs as under CUDA_LAUNCH_BLOCKING=1, so a cuda
    bounds check raises the cpu's error at the call instead of a deferred device-side assert
    (runtime/device_errors.py). After every test a device-side assert left unread is dropped,
    so it cannot surface in the next test."""
    from tritensor.runtime import device_errors, launch
    if request.node.get_closest_marker("launch_blocking") is not None:
        device_errors.deferred()                  # the launch mode is decided (read once) first
        request.getfixturevalue("monkeypatch").setitem(launch._state, "blocking", True)
    yield
    if device_errors.DIRTY:
        try:
            device_errors.sync_point()
        except RuntimeError:
            pass


def to_numpy(t):
    """Host values of a tensor from any device; 16-bit floats widened to float32."""
    arr = np.asarray(t.detach().cpu().numpy())
    return arr.astype(np.float32) if arr.dtype.name in ("bfloat16", "float16") else arr
