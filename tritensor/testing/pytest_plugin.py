"""A pytest plugin for tests that cross-check tritensor's devices. Enable it in a conftest.py:

    pytest_plugins = ["tritensor.testing.pytest_plugin"]

Fixtures:
  tt_device     parametrized over the devices this machine runs ("cpu", and "cuda" when a GPU
                or the emulated device is there): a test taking it runs once per device.
  cross_device  a function ``cross_device(body, *args, rtol=None, atol=None, **options)`` that
                runs ``body(*args, device=...)`` on cpu and on cuda and asserts the results are
                close (tritensor.testing.run_on_devices); skips where only cpu is available.
"""
from __future__ import annotations

import pytest

from ._devices import available_devices, run_on_devices


def pytest_generate_tests(metafunc):
    if "tt_device" in metafunc.fixturenames:
        metafunc.parametrize("tt_device", available_devices())


@pytest.fixture
def cross_device():
    return run_on_devices
