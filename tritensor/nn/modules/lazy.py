"""Lazy modules, as torch.nn.modules.lazy: a layer whose input size is inferred at its first call.

``LazyModuleMixin`` registers a forward pre-hook that calls ``initialize_parameters(*args)`` at
the first forward: the ``UninitializedParameter``/``UninitializedBuffer`` placeholders are
materialized with the inferred shape and initialized as the non-lazy layer does, the hooks are
removed and the module's class becomes ``cls_to_become`` (LazyLinear -> Linear). Loading a
state_dict materializes the placeholders with the saved shapes (without the class change, as
torch). The Lazy layers: LazyLinear, LazyConv1d/2d/3d, LazyConvTranspose1d/2d/3d,
LazyBatchNorm1d/2d/3d, LazyInstanceNorm1d/2d/3d.
"""
from __future__ import annotations

import itertools

from ...autograd.grad_mode import no_grad
from ... import dtypes as _dt
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, _InstanceNorm
from .linear import Linear

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyModuleMixin:
    """Mixed in before a layer class: its parameters start uninitialized and are shaped from
    the first input (torch.nn.modules.lazy.LazyModuleMixin)."""
    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self.register_load_state_dict_pre_hook(LazyModuleMixin._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(LazyModuleMixin._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # the placeholders are saved as they are (a detach would lose what they are)
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                        error_msgs):
        """Materialize each placeholder that the state_dict has a real tensor for, with its shape."""
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None:
                input_param = state_dict[key]
                if is_lazy(param) and not is_lazy(input_param):
                    with no_grad():
                        param.materialize(input_param.shape)

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self):
        """Whether a parameter or buffer is still a placeholder."""
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values()))

    def _infer_parameters(self, args, kwargs=None):
        # the forward pre-hook (hook(module, args, kwargs)): runs once
        self.initialize_parameters(*args, **(kwargs or {}))
        if self.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        self._initialize_hook.remove()
        self._load_hook.remove()
        delattr(self, "_initialize_hook")
        delattr(self, "_load_hook")
        if self.cls_to_become is not None:
            self.__class__ = self.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")


# ------------------------------------------------------------------ Linear
class LazyLinear(LazyModuleMixin, Linear):
    """``LazyLinear(out_features, bias=True)``: a Linear whose ``in_features`` is ``input.shape[-1]``."""
    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        factory_kwargs = {"device": device, "dtype": dtype}
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(**factory_kwargs)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(**factory_kwargs)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:      # materialized by load_state_dict: take in_features from it
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                                     f"in_features from self.weight: {self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


# ------------------------------------------------------------------ convolutions
class _LazyConvXdMixin(LazyModuleMixin):
    _spatial_dims = 0

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            with no_grad():
                if self.transposed:
                    self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
                else:
                    self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()

    def _get_in_channels(self, input):
        num_dims_no_batch = self._spatial_dims + 1
        num_dims_batch = num_dims_no_batch + 1
        if input.dim() not in (num_dims_no_batch, num_dims_batch):
            raise RuntimeError(f"Expected {num_dims_no_batch}D (unbatched) or {num_dims_batch}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == num_dims_batch else input.shape[0]

    def _lazy_placeholders(self, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)


class LazyConv1d(_LazyConvXdMixin, Conv1d):
    """A Conv1d whose ``in_channels`` is inferred from ``input.size(1)`` at the first call."""
    cls_to_become = Conv1d
    _spatial_dims = 1

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        # (LazyModuleMixin.__init__ by name: the Conv2d/3d classes share this __init__, so no
        # zero-argument super())
        LazyModuleMixin.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode,
                                 device=device, dtype=dtype)
        self.out_channels = out_channels
        self._lazy_placeholders(bias, device, dtype)


class LazyConv2d(_LazyConvXdMixin, Conv2d):
    """A Conv2d whose ``in_channels`` is inferred from ``input.size(1)`` at the first call."""
    cls_to_become = Conv2d
    _spatial_dims = 2
    __init__ = LazyConv1d.__init__


class LazyConv3d(_LazyConvXdMixin, Conv3d):
    """A Conv3d whose ``in_channels`` is inferred from ``input.size(1)`` at the first call."""
    cls_to_become = Conv3d
    _spatial_dims = 3
    __init__ = LazyConv1d.__init__


class LazyConvTranspose1d(_LazyConvXdMixin, ConvTranspose1d):
    """A ConvTranspose1d whose ``in_channels`` is inferred from ``input.size(1)`` at the first call."""
    cls_to_become = ConvTranspose1d
    _spatial_dims = 1

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None):
        LazyModuleMixin.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                                 padding_mode, device=device, dtype=dtype)
        self.out_channels = out_channels
        self._lazy_placeholders(bias, device, dtype)


class LazyConvTranspose2d(_LazyConvXdMixin, ConvTranspose2d):
    """A ConvTranspose2d whose ``in_channels`` is inferred from ``input.size(1)`` at the first call."""
    cls_to_become = ConvTranspose2d
    _spatial_dims = 2
    __init__ = LazyConvTranspose1d.__init__


class LazyConvTranspose3d(_LazyConvXdMixin, ConvTranspose3d):
    """A ConvTranspose3d whose ``in_channels`` is inferred from ``input.size(1)`` at the first call."""
    cls_to_become = ConvTranspose3d
    _spatial_dims = 3
    __init__ = LazyConvTranspose1d.__init__


# ------------------------------------------------------------------ normalization
class _LazyNormBase(LazyModuleMixin):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None,
                 bias=True):
        super().__init__(0, eps, momentum, False, False, device=device, dtype=dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if self.track_running_stats:
            from ...ops.creation import tensor
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=_dt.int64, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            with no_grad():
                if self.affine:
                    self.weight.materialize((self.num_features,))
                    if self.bias is not None:
                        self.bias.materialize((self.num_features,))
                if self.track_running_stats:
                    self.running_mean.materialize((self.num_features,))
                    self.running_var.materialize((self.num_features,))
                self.reset_parameters()


def _lazy_norm(name, base, become, doc):
    # as torch: a subclass of the family base (_BatchNorm, _InstanceNorm), not of the layer it
    # becomes, taking that layer's input checks
    body = {"cls_to_become": become, "__doc__": doc, "__module__": __name__, "__qualname__": name,
            "_check_input_dim": become._check_input_dim}
    if hasattr(become, "_get_no_batch_dim"):
        body["_get_no_batch_dim"] = become._get_no_batch_dim
    return type(name, (_LazyNormBase, base), body)


LazyBatchNorm1d = _lazy_norm("LazyBatchNorm1d", _BatchNorm, BatchNorm1d,
                             "A BatchNorm1d whose ``num_features`` is inferred from ``input.size(1)``.")
LazyBatchNorm2d = _lazy_norm("LazyBatchNorm2d", _BatchNorm, BatchNorm2d,
                             "A BatchNorm2d whose ``num_features`` is inferred from ``input.size(1)``.")
LazyBatchNorm3d = _lazy_norm("LazyBatchNorm3d", _BatchNorm, BatchNorm3d,
                             "A BatchNorm3d whose ``num_features`` is inferred from ``input.size(1)``.")
LazyInstanceNorm1d = _lazy_norm("LazyInstanceNorm1d", _InstanceNorm, InstanceNorm1d,
                                "An InstanceNorm1d whose ``num_features`` is inferred from ``input.size(1)``.")
LazyInstanceNorm2d = _lazy_norm("LazyInstanceNorm2d", _InstanceNorm, InstanceNorm2d,
                                "An InstanceNorm2d whose ``num_features`` is inferred from ``input.size(1)``.")
LazyInstanceNorm3d = _lazy_norm("LazyInstanceNorm3d", _InstanceNorm, InstanceNorm3d,
                                "An InstanceNorm3d whose ``num_features`` is inferred from ``input.size(1)``.")
