"""tt.testing: check your own GPU code against the cpu reference, as torch.testing does.

    assert_close(actual, expected)     torch's tolerances per dtype and its mismatch report
    make_tensor(*shape, dtype, device) torch's random test tensors (the same values on every device)
    compare_devices                    decorator: run a test body on cpu and cuda, compare results
    run_on_devices(fn, ...)            the same as a function
    pytest_plugin                      fixtures ``tt_device`` and ``cross_device``
"""
from ._comparison import DTYPE_PRECISIONS, assert_close, default_tolerances  # noqa: F401
from ._creation import make_tensor  # noqa: F401
from ._devices import available_devices, compare_devices, run_on_devices  # noqa: F401
