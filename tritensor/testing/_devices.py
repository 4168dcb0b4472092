"""Run one test body on cpu and on cuda and compare what it returns.

The cpu device is tritensor's NumPy reference; cuda runs the Triton kernels (compiled on a real
GPU, interpreted on the emulated device). A body written once, taking its device as an
argument, checks the kernels against the reference, in the spirit of CuPy's
``numpy_cupy_allclose`` (which runs a body with ``xp=numpy`` and ``xp=cupy``).
"""
from __future__ import annotations

import functools
import inspect
import unittest

from ._comparison import assert_close


def available_devices():
    """The device types this machine can run: cpu, and cuda where it is real or emulated."""
    import tritensor as tt
    return ["cpu", "cuda"] if tt.cuda.is_available() else ["cpu"]


def _to_cpu(value):
    """The returned structure with every tensor detached and copied to the cpu."""
    from ..tensor import Tensor
    if isinstance(value, Tensor):
        return value.detach().cpu()
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(_to_cpu(v) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(_to_cpu(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_cpu(v) for k, v in value.items()}
    return value


def run_on_devices(fn, *args, devices=None, seed=0, name="device", rtol=None, atol=None,
                   equal_nan=False, check_dtype=True, check_stride=False, accept_error=(), **kwargs):
    """Call ``fn(*args, **{name: device}, **kwargs)`` on each device (the first is the reference,
    cpu by default), seeding tritensor's generators with ``seed`` before each call, and assert
    that every device returns what the reference returns (tritensor.testing.assert_close, devices
    not compared). Returns the reference's result.

    When the reference raises an exception of a type in ``accept_error``, every device must raise
    the same type (and the check passes); any other exception propagates, naming the device.
    """
    import tritensor as tt
    devices = list(devices) if devices is not None else available_devices()
    if len(devices) < 2:
        raise unittest.SkipTest(f"a cross-device check needs two devices; this machine has {devices}")
    results, errors = {}, {}
    for dev in devices:
        tt.manual_seed(seed)
        try:
            results[dev] = _to_cpu(fn(*args, **{name: dev}, **kwargs))
        except Exception as e:   # compared below: the same error on every device is a result too
            if not (accept_error and isinstance(e, accept_error)):
                raise AssertionError(f"{fn.__name__} raised on {dev}: {type(e).__name__}: {e}") from e
            errors[dev] = e
    reference = devices[0]
    if errors:
        kinds = {dev: type(errors.get(dev)).__name__ if dev in errors else "no error" for dev in devices}
        if len(errors) != len(devices) or len({type(e) for e in errors.values()}) != 1:
            raise AssertionError(f"{fn.__name__}: the devices disagree about raising: {kinds}")
        return None
    for dev in devices[1:]:
        assert_close(results[dev], results[reference], rtol=rtol, atol=atol, equal_nan=equal_nan,
                     check_device=False, check_dtype=check_dtype, check_stride=check_stride,
                     msg=lambda m, dev=dev: f"{dev} differs from the {reference} reference: {m}")
    return results[reference]


def compare_devices(fn=None, *, devices=None, seed=0, name="device", rtol=None, atol=None,
                    equal_nan=False, check_dtype=True, check_stride=False, accept_error=()):
    """Decorator: the test body takes a ``device`` argument and returns tensors (or numbers, or
    containers of them); the decorated test runs it on cpu and on cuda and compares the results.

        @tt.testing.compare_devices(rtol=1e-5, atol=1e-6)
        def test_gelu(device):
            x = tt.testing.make_tensor(37, 5, dtype=tt.float32, device=device, requires_grad=True)
            y = tt.nn.functional.gelu(x)
            y.sum().backward()
            return y, x.grad

    The wrapper drops ``name`` from the signature, so pytest does not look for a fixture of
    that name; any other arguments (fixtures, parametrize) are passed through.
    """
    options = dict(devices=devices, seed=seed, name=name, rtol=rtol, atol=atol, equal_nan=equal_nan,
                   check_dtype=check_dtype, check_stride=check_stride, accept_error=accept_error)

    def decorate(body):
        @functools.wraps(body)
        def wrapper(*args, **kwargs):
            run_on_devices(body, *args, **options, **kwargs)

        sig = inspect.signature(body)
        wrapper.__signature__ = sig.replace(parameters=[p for p in sig.parameters.values() if p.name != name])
        return wrapper
    return decorate(fn) if fn is not None else decorate
