"""The standard's ``fft`` extension. tritensor has no complex dtypes yet, so the transforms
themselves (whose inputs or results are complex) raise NotImplementedError; the real-valued
helpers (the sample frequencies and the shifts) are here, over tritensor's ops."""
from __future__ import annotations

import tritensor as tt

from ._helpers import dims, ensure_array

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]


def _needs_complex(name):
    def f(x, /, *args, **kwargs):
        raise NotImplementedError(f"tritensor.array_api.fft.{name}: the discrete Fourier transforms need complex "
                                  f"dtypes, which tritensor does not have yet")
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"The standard's ``fft.{name}``: not available until tritensor has complex dtypes."
    return f


fft, ifft, fftn, ifftn = (_needs_complex(n) for n in ("fft", "ifft", "fftn", "ifftn"))
rfft, irfft, rfftn, irfftn = (_needs_complex(n) for n in ("rfft", "irfft", "rfftn", "irfftn"))
hfft, ihfft = _needs_complex("hfft"), _needs_complex("ihfft")


def _check_n(n):
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        raise ValueError(f"n must be a positive integer, got {n!r}")


def fftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The sample frequencies of an n-point transform: [0, 1, ..., -(n//2), ..., -1] / (d * n)."""
    _check_n(n)
    k = tt.arange(n, device=device)
    k = tt.where(k < (n + 1) // 2, k, k - n)
    return (k / (d * n)).to(dtype if dtype is not None else tt.get_default_dtype())


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None):
    """The sample frequencies of an n-point real transform: [0, 1, ..., n//2] / (d * n)."""
    _check_n(n)
    return (tt.arange(n // 2 + 1, device=device) / (d * n)).to(dtype if dtype is not None else tt.get_default_dtype())


def _shift(x, axes, sign):
    x = ensure_array(x)
    axes = dims(axes, x.ndim)
    if not axes:
        return x.clone()
    return tt.roll(x, tuple(sign * (x.shape[a] // 2) for a in axes), axes)


def fftshift(x, /, *, axes=None):
    """x rolled so that the zero frequency is in the middle of ``axes`` (every axis when None)."""
    return _shift(x, axes, 1)


def ifftshift(x, /, *, axes=None):
    """The inverse of fftshift (they differ for odd lengths)."""
    return _shift(x, axes, -1)
