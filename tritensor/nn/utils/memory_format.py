"""tt.nn.utils.convert_conv2d_weight_memory_format / convert_conv3d_weight_memory_format, as
torch.nn.utils.memory_format: relayout the weights of every (transposed) convolution of a
module tree in place (channels_last makes the NHWC kernels read them without a copy)."""
from __future__ import annotations

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, classes):
    from ...ops.creation import empty
    if isinstance(module, classes):
        weight = module.weight.detach()
        # a fresh tensor with the format's canonical strides (torch: clone + resize_ to make
        # the strides of size-1 dimensions canonical too), filled with the weight
        data = empty(tuple(weight.shape), dtype=weight.dtype, device=weight.device, memory_format=memory_format)
        data.copy_(weight)
        module.weight.data = data
    for child in module.children():
        _convert(child, memory_format, classes)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Give the weight of every Conv2d / ConvTranspose2d in ``module`` (itself included)
    ``memory_format``; returns ``module``."""
    from ..modules.conv import Conv2d, ConvTranspose2d
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """Give the weight of every Conv3d / ConvTranspose3d in ``module`` (itself included)
    ``memory_format``; returns ``module``."""
    from ..modules.conv import Conv3d, ConvTranspose3d
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
