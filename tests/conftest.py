"""Shared fixtures: every device test runs on cpu and on cuda (a real GPU when one is there,
otherwise the emulated device: the same Triton kernels under Triton's interpreter)."""
import os

import numpy as np
import pytest


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


def to_numpy(t):
    """Host values of a tensor from any device; 16-bit floats widened to float32."""
    arr = np.asarray(t.detach().cpu().numpy())
    return arr.astype(np.float32) if arr.dtype.name in ("bfloat16", "float16") else arr
