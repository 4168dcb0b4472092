"""tt.nn.init: torch.nn.init's in-place initialisers.

Each fills its tensor under no_grad through the tensor's own random methods (uniform_,
normal_ with ``generator=``), so it works on every device the random ops serve, and returns
the tensor. Formulas and error texts are torch's.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..autograd import no_grad

__all__ = [
    "calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_",
    "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_",
]


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (torch's table: linear/conv*/sigmoid 1,
    tanh 5/3, relu sqrt(2), leaky_relu sqrt(2 / (1 + slope**2)), selu 3/4)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, int) or isinstance(param, float):
            negative_slope = param   # bool is an int: excluded above, as torch
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _log_pdf_excess(x, mean, std, log_peak):
    """-0.5 * ((x - mean) / std)**2 - log_peak: the log of the normal density relative to its
    peak over [a, b], the acceptance threshold of torch's rejection sampler."""
    return x.sub(mean).div(std).pow(2).mul(-0.5).sub(log_peak)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Normal(mean, std) values redrawn until they lie in [a, b], with torch 2.13's sampler:
    plain rejection of normal draws when [a, b] holds more than 30% of the mass, otherwise
    uniform proposals on [a, b] accepted with probability pdf / peak pdf."""
    from ..ops.creation import empty_like, tensor as make_tensor
    from ..ops.elementwise import where

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values "
                      "may be incorrect.", stacklevel=2)
    with no_grad():
        p = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)
        if p > 0.3:
            # the bounds as the tensor's dtype holds them, so the rejection test is exact
            lo = make_tensor(a, dtype=tensor.dtype).item()
            hi = make_tensor(b, dtype=tensor.dtype).item()
            result = tensor.normal_(mean, std, generator=generator)
            while True:
                mask = (result < lo) | (result > hi)
                if not bool(mask.any()):
                    break
                result = where(mask, empty_like(result).normal_(mean, std, generator=generator), result)
            if result is not tensor:
                tensor.copy_(result)
        else:
            mode = max(a, min(mean, b))
            log_peak = -0.5 * ((mode - mean) / std) ** 2
            accept_buf = empty_like(tensor)
            tensor.uniform_(a, b, generator=generator)
            pending = accept_buf.uniform_(generator=generator).log().gt(
                _log_pdf_excess(tensor, mean, std, log_peak))
            if bool(pending.any()):
                result = tensor
                candidates = empty_like(tensor)
                while True:
                    candidates.uniform_(a, b, generator=generator)
                    result = where(pending, candidates, result)
                    rejected = accept_buf.uniform_(generator=generator).log().gt(
                        _log_pdf_excess(candidates, mean, std, log_peak))
                    pending = pending & rejected
                    if not bool(pending.any()):
                        break
                tensor.copy_(result)
        return tensor


def constant_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    with no_grad():
        return tensor.fill_(1.0)


def zeros_(tensor):
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    """The identity matrix in a 2-D tensor (ones on the main diagonal)."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from ..ops.creation import eye
    with no_grad():
        tensor.copy_(eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))
    return tensor


def dirac_(tensor, groups=1):
    """The Dirac delta in a {3, 4, 5}-d convolution weight: each group's first channels pass
    their input channel through unchanged."""
    dimensions = tensor.ndimension()
    if dimensions not in [3, 4, 5]:
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_chans_per_grp = sizes[0] // groups
    min_dim = min(out_chans_per_grp, sizes[1])
    values = np.zeros(tuple(sizes), dtype=np.float64)
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min_dim):
            values[(g * out_chans_per_grp + d, d) + centre] = 1
    from ..ops.creation import tensor as make_tensor
    with no_grad():
        tensor.copy_(make_tensor(values, dtype=tensor.dtype, device=tensor.device))
    return tensor


def _calculate_fan_in_and_fan_out(tensor):
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    num_input_fmaps = tensor.size(1)
    num_output_fmaps = tensor.size(0)
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return num_input_fmaps * receptive_field_size, num_output_fmaps * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al.)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    with no_grad():
        return tensor.uniform_(-bound, bound, generator=generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std^2) with std = gain / sqrt(fan)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    with no_grad():
        return tensor.normal_(0, std, generator=generator)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix (trailing dims flattened) times ``gain`` (Saxe et al.): the Q
    of a QR factorisation of a normal sample, signs fixed by diag(R). The factorisation runs in
    NumPy on the host (tritensor has no QR kernel); the sample comes from the tensor's device
    and generator."""
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    from ..ops.creation import empty, tensor as make_tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    sample = empty((rows, cols), dtype=tensor.dtype, device=tensor.device).normal_(0, 1, generator=generator)
    flat = np.asarray(sample.cpu().float()._host_view(), dtype=np.float64)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q *= np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with no_grad():
        tensor.copy_(make_tensor(q * gain, dtype=tensor.dtype, device=tensor.device).reshape(tensor.shape))
    return tensor


def _make_deprecated(meth):
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
                      FutureWarning, stacklevel=2)
        return meth(*args, **kwargs)
    deprecated_init.__name__ = old_name
    deprecated_init.__doc__ = f"Deprecated alias of {new_name}."
    return deprecated_init


uniform = _make_deprecated(uniform_)
normal = _make_deprecated(normal_)
constant = _make_deprecated(constant_)
eye = _make_deprecated(eye_)
dirac = _make_deprecated(dirac_)
xavier_uniform = _make_deprecated(xavier_uniform_)
xavier_normal = _make_deprecated(xavier_normal_)
kaiming_uniform = _make_deprecated(kaiming_uniform_)
kaiming_normal = _make_deprecated(kaiming_normal_)
orthogonal = _make_deprecated(orthogonal_)
