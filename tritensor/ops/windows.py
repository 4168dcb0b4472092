"""The window functions: torch's factories hann_window, hamming_window, blackman_window,
bartlett_window, kaiser_window, and the torch.signal.windows family (tt.signal.windows).

Each is composed of tritensor ops in the requested dtype on the requested device, in the order
torch composes it (TensorFactories.cpp for the factories, torch/signal/windows/windows.py for
the signal windows), so the arithmetic (cos in float32 for a float32 window ...) and the
roundings are torch's. The factories' result is a leaf (requires_grad set at the end, as
torch's); the signal windows record their graph when asked to require grad, as torch's
composites do. A periodic window of length L is the first L points of the symmetric window of
length L + 1, computed directly (torch narrows it).
"""
from __future__ import annotations

import math

from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..runtime.device import as_device
from ..tensor import Tensor
from . import views as _views
from .creation import _dtype_or_default, _finish, arange, empty, linspace, ones, tensor
from .elementwise import abs, add, cos, exp, minimum, mul, neg, pow, sin, sqrt, sub
from .reduce import sum as _sum
from .special import i0
from .surface import _CPP_NAMES, declare


# --------------------------------------------------------------------------- torch's factories
def _factory_checks(name, length, dtype, device, requires_grad):
    if not dtype.is_floating_point:
        grad = "true" if requires_grad else "false (default)"
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype={_CPP_NAMES[dtype.name]}, "
                           f"device={device}, layout=Strided (default), requires_grad={grad}, pinned_memory=false, "
                           "memory_format=(nullopt))")
    if length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={length}")


def _factory(name, window_length, periodic, dtype, device, requires_grad, body):
    """torch's window factory frame: checks, the 0- and 1-point windows, then ``body(n, L)``: the
    first L points of the symmetric window of n points (n = L + 1 when periodic)."""
    dtype, device = _dtype_or_default(dtype), as_device(device)
    length = int(window_length)
    _factory_checks(name, length, dtype, device, requires_grad)
    if length == 0:
        return _finish(empty(0, dtype=dtype, device=device), requires_grad)
    if length == 1:
        return _finish(ones(1, dtype=dtype, device=device), requires_grad)
    n = length + 1 if periodic else length
    with no_grad():
        window = body(n, length, dtype, device)
    return _finish(window, requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """torch.hamming_window: alpha - beta * cos(2 pi k / (n - 1))."""
    return _factory("hamming_window", window_length, periodic, dtype, device, requires_grad,
                    lambda n, L, dt, dev: _hamming(n, L, dt, dev, alpha, beta))


def _hamming(n, length, dtype, device, alpha, beta):
    k = arange(length, dtype=dtype, device=device)
    return add(mul(cos(mul(k, math.pi * 2.0 / (n - 1))), -beta), alpha)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False,
                pin_memory=False):
    """torch.hann_window: hamming_window with alpha = beta = 0.5."""
    return _factory("hann_window", window_length, periodic, dtype, device, requires_grad,
                    lambda n, L, dt, dev: _hamming(n, L, dt, dev, 0.5, 0.5))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False,
                    pin_memory=False):
    """torch.bartlett_window: 2k / (n - 1) rising to the middle, 2 - 2k / (n - 1) after it."""
    def body(n, length, dtype, device):
        window = mul(arange(length, dtype=dtype, device=device), 2.0 / (n - 1))
        first_half = ((n - 1) >> 1) + 1
        if length > first_half:
            tail = _views.narrow(window, 0, first_half, length - first_half)
            tail.mul_(-1).add_(2)
        return window
    return _factory("bartlett_window", window_length, periodic, dtype, device, requires_grad, body)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False,
                    pin_memory=False):
    """torch.blackman_window: 0.08 cos(4 pi k / (n - 1)) - 0.5 cos(2 pi k / (n - 1)) + 0.42."""
    def body(n, length, dtype, device):
        k = mul(arange(length, dtype=dtype, device=device), math.pi / (n - 1))
        return add(sub(mul(cos(mul(k, 4)), 0.08), mul(cos(mul(k, 2)), 0.5)), 0.42)
    return _factory("blackman_window", window_length, periodic, dtype, device, requires_grad, body)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False, pin_memory=False):
    """torch.kaiser_window: I0(beta sqrt(|1 - ((k - a) / a)^2|)) / I0(beta), a = (n - 1) / 2,
    computed in float32 for the 16-bit dtypes (torch's kernel computes in its opmath type)."""
    def body(n, length, dtype, device):
        compute = _dt.compute_dtype(dtype)
        alpha = (n - 1) / 2.0
        k = arange(length, dtype=dtype, device=device).to(compute)
        ratio = pow(sub(k, alpha).div(alpha), 2.0)
        window = i0(mul(sqrt(abs(neg(sub(ratio, 1.0)))), float(beta))).div(
            i0(tensor(float(beta), dtype=compute, device=device)))
        return window.to(dtype)
    return _factory("kaiser_window", window_length, periodic, dtype, device, requires_grad, body)


# --------------------------------------------------------------------------- torch.signal.windows
def _window_checks(name, M, dtype, layout):
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (_dt.float32, _dt.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")


def _empty_window(M, dtype, device, requires_grad):
    return empty(0, dtype=dtype, device=device, requires_grad=requires_grad) if M == 0 else \
        ones(1, dtype=dtype, device=device, requires_grad=requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """torch.signal.windows.exponential: exp(-|n - center| / tau)."""
    dtype = _dtype_or_default(dtype)
    _window_checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _empty_window(M, dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / tau
    k = linspace(-center * constant, (-center + (M - 1)) * constant, M, dtype=dtype, device=device,
                 requires_grad=requires_grad)
    return exp(neg(abs(k)))


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """torch.signal.windows.cosine: sin(pi (n + 0.5) / M) (SciPy's)."""
    dtype = _dtype_or_default(dtype)
    _window_checks("cosine", M, dtype, layout)
    if M == 0:
        return _empty_window(M, dtype, device, requires_grad)
    start = 0.5
    constant = math.pi / (M + 1 if not sym and M > 1 else M)
    k = linspace(start * constant, (start + (M - 1)) * constant, M, dtype=dtype, device=device,
                 requires_grad=requires_grad)
    return sin(k)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """torch.signal.windows.gaussian: exp(-(n / (2 std))^2) around the middle."""
    dtype = _dtype_or_default(dtype)
    _window_checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _empty_window(M, dtype, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * math.sqrt(2))
    k = linspace(start * constant, (start + (M - 1)) * constant, M, dtype=dtype, device=device,
                 requires_grad=requires_grad)
    return exp(neg(pow(k, 2)))


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """torch.signal.windows.kaiser: I0(beta sqrt(1 - ((n - N/2) / (N/2))^2)) / I0(beta)."""
    dtype = _dtype_or_default(dtype)
    _window_checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return _empty_window(M, dtype, device, requires_grad)
    beta = tensor(beta, dtype=dtype, device=device)      # (torch: avoids NaNs at the ends)
    start = neg(beta)
    constant = mul(beta, 2.0 / (M if not sym else M - 1))
    end = minimum(beta, add(start, mul(constant, M - 1)))
    k = linspace(start, end, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return i0(sqrt(sub(mul(beta, beta), pow(k, 2)))).div(i0(beta))


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """torch.signal.windows.general_cosine: sum_i (-1)^i a_i cos(2 pi i n / (M - 1))."""
    dtype = _dtype_or_default(dtype)
    _window_checks("general_cosine", M, dtype, layout)
    if M <= 1:
        return _empty_window(M, dtype, device, requires_grad)
    if not isinstance(a, (list, tuple)) and not hasattr(a, "__iter__"):
        raise TypeError("Coefficients must be a list/tuple")
    a = list(a)
    if not a:
        raise ValueError("Coefficients cannot be empty")
    constant = 2 * math.pi / (M if not sym else M - 1)
    k = linspace(0, (M - 1) * constant, M, dtype=dtype, device=device, requires_grad=requires_grad)
    a_i = tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype, device=device, requires_grad=requires_grad)
    i = arange(a_i.shape[0], dtype=a_i.dtype, device=a_i.device, requires_grad=a_i.requires_grad)
    return _sum(mul(a_i.unsqueeze(-1), cos(mul(i.unsqueeze(-1), k))), 0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """torch.signal.windows.general_hamming: alpha - (1 - alpha) cos(2 pi n / (M - 1))."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    dtype = _dtype_or_default(dtype)
    _window_checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """torch.signal.windows.bartlett: 1 - |2n / (M - 1) - 1|."""
    dtype = _dtype_or_default(dtype)
    _window_checks("bartlett", M, dtype, layout)
    if M <= 1:
        return _empty_window(M, dtype, device, requires_grad)
    start = -1
    constant = 2 / (M if not sym else M - 1)
    k = linspace(start, start + (M - 1) * constant, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return 1 - abs(k)


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """torch.signal.windows.nuttall: Nuttall's minimum 4-term Blackman-Harris window."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


SIGNAL_WINDOWS = ("bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
                  "hamming", "hann", "kaiser", "nuttall")

for _name in ("hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"):
    declare(_name, globals()[_name], method=False)
