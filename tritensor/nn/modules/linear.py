"""Identity and Linear, as torch.nn.modules.linear."""
from __future__ import annotations

import math

from ...ops.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Identity", "Linear", "NonDynamicallyQuantizableLinear"]


class Identity(Module):
    """Returns its input; takes (and ignores) any constructor arguments, as torch's."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x A^T + b, with weight (out_features, in_features) and bias (out_features).

    torch's initialisation: weight ~ kaiming_uniform_(a=sqrt(5)), i.e. U(-1/sqrt(fan_in),
    1/sqrt(fan_in)); bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""

    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in_features), **factory_kwargs))
        if bias:
            self.bias = Parameter(empty(out_features, **factory_kwargs))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under its own name (torch.nn.modules.linear): MultiheadAttention's out_proj, so
    its repr and type match torch's."""


class Bilinear(Module):
    """y = x1^T A x2 + b, with weight (out_features, in1_features, in2_features) and bias
    (out_features), both ~ U(-1/sqrt(in1_features), 1/sqrt(in1_features)) as torch's."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        factory_kwargs = {"device": device, "dtype": dtype}
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = Parameter(empty((out_features, in1_features, in2_features), **factory_kwargs))
        if bias:
            self.bias = Parameter(empty(out_features, **factory_kwargs))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.in1_features <= 0:
            raise ValueError(f"in1_features must be > 0, but got (in1_features={self.in1_features})")
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


__all__ += ["Bilinear"]
