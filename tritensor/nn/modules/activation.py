"""Activation layers, as torch.nn.modules.activation: each calls its F.<name>."""
from __future__ import annotations

from ...ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["ReLU", "LeakyReLU", "Tanh", "Sigmoid", "GELU", "SiLU", "Softmax", "LogSoftmax"]


class ReLU(Module):
    """max(0, x); ``inplace=True`` overwrites the input."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """max(0, x) + negative_slope * min(0, x)."""

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{inplace_str}"


class Hardtanh(Module):
    """x clamped to [min_val, max_val] (gradient strictly inside), as torch.nn.Hardtanh."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({max_val}) must be greater than min_val ({min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"min_val={self.min_val}, max_val={self.max_val}{inplace_str}"


class ReLU6(Hardtanh):
    """hardtanh(x, 0, 6), as torch.nn.ReLU6."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    def forward(self, input):
        return F.tanh(input)


class Sigmoid(Module):
    def forward(self, input):
        return F.sigmoid(input)


class GELU(Module):
    """x * Phi(x); ``approximate='tanh'`` uses the tanh formula."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={repr(self.approximate)}"


class SiLU(Module):
    """x * sigmoid(x)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class _AlongDim(Module):
    """A normalisation along ``dim`` (None: torch's deprecated implicit choice, with its warning)."""
    _function = None     # F.softmax or F.log_softmax

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input):
        return type(self)._function(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_AlongDim):
    """softmax along ``dim``."""
    _function = staticmethod(F.softmax)


class LogSoftmax(_AlongDim):
    """log(softmax(x)) along ``dim``, computed stably."""
    _function = staticmethod(F.log_softmax)


# --------------------------------------------------------------------------- issue 25's activations
class _Inplace(Module):
    """An activation with only ``inplace``: F.<_function>(input, inplace)."""
    _function = None

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._function(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class _NoReprInplace(_Inplace):
    """torch's Hardsigmoid and Hardswish show no ``inplace`` in their repr."""

    def extra_repr(self):
        return ""


class _Plain(Module):
    """An activation without parameters: F.<_function>(input)."""
    _function = None

    def forward(self, input):
        return type(self)._function(input)


class ELU(Module):
    """alpha (e^x - 1) for x <= 0, x above."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(ELU):
    """max(0, x) + min(0, alpha (e^(x / alpha) - 1))."""

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class SELU(_Inplace):
    """scale * elu(x, alpha) with SELU's constants."""
    _function = staticmethod(F.selu)


class Hardsigmoid(_NoReprInplace):
    """relu6(x + 3) / 6."""
    _function = staticmethod(F.hardsigmoid)


class Hardswish(_NoReprInplace):
    """x relu6(x + 3) / 6."""
    _function = staticmethod(F.hardswish)


class Mish(_Inplace):
    """x tanh(softplus(x))."""
    _function = staticmethod(F.mish)


class LogSigmoid(_Plain):
    _function = staticmethod(F.logsigmoid)


class Softsign(_Plain):
    _function = staticmethod(F.softsign)


class Tanhshrink(_Plain):
    _function = staticmethod(F.tanhshrink)


class GLU(Module):
    """a * sigmoid(b), a and b the halves of the input along ``dim``."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Hardshrink(Module):
    """0 for -lambd <= x <= lambd, x elsewhere."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """x -+ lambd outside [-lambd, lambd], 0 inside."""

    def forward(self, input):
        return F.softshrink(input, self.lambd)


class Softplus(Module):
    """log(1 + e^(beta x)) / beta, x itself where beta x > threshold."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Threshold(Module):
    """value where x <= threshold, x elsewhere."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class RReLU(Module):
    """Randomized leaky ReLU: slopes drawn in [lower, upper] while training, their mean in eval."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class PReLU(Module):
    """x for x > 0, a * x otherwise, with a learnable ``a`` (one, or one per channel: dim 1)."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class Softmin(_AlongDim):
    """softmax(-x) along ``dim``."""
    _function = staticmethod(F.softmin)


class Softmax2d(Module):
    """softmax over the channels (dim -3) of a (C, H, W) or (N, C, H, W) input."""

    def forward(self, input):
        from ...ops.activations import softmax2d_dim
        return F.softmax(input, softmax2d_dim(input))


__all__ += ["ELU", "SELU", "CELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "LogSigmoid", "Mish", "PReLU",
            "RReLU", "Softmin", "Softplus", "Softshrink", "Softsign", "Tanhshrink", "Threshold", "Softmax2d"]


# torch defines MultiheadAttention in torch.nn.modules.activation: importable from here too
from .multihead_attention import MultiheadAttention  # noqa: E402,F401

__all__ += ["MultiheadAttention"]
