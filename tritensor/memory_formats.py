"""torch.memory_format: the four memory formats a new tensor can be asked for.

``preserve_format``   keep the source's layout (the default of clone, the *_like factories,
                      Tensor.to): a dense source's strides exactly, otherwise a dense layout
                      with its dims in the source's order
``contiguous_format`` row-major (the default of Tensor.contiguous and of empty/zeros ...)
``channels_last``     4-D NCHW sizes stored as NHWC (channels innermost)
``channels_last_3d``  5-D NCDHW sizes stored as NDHWC

Each is a singleton (compared by identity, pickled by name), printed as ``tritensor.<name>``
the way dtypes are. The stride arithmetic lives in ops/_layout.py. (The module is named
memory_formats, plural as dtypes, so that the exported class never hides a module.)
"""
from __future__ import annotations

from ._named_singleton import NamedSingleton


class memory_format(NamedSingleton):
    __slots__ = ()


preserve_format = memory_format._create("preserve_format")
contiguous_format = memory_format._create("contiguous_format")
channels_last = memory_format._create("channels_last")
channels_last_3d = memory_format._create("channels_last_3d")


def format_name(value, function, default=preserve_format):
    """The name of memory format ``value`` passed to ``function`` (None: ``default``'s, where
    ``function`` takes None), with torch's TypeError for anything that is not a memory format."""
    if value is None and default is not None:
        return default._name
    if type(value) is not memory_format:
        raise TypeError(f"{function}(): argument 'memory_format' must be torch.memory_format, "
                        f"not {type(value).__name__}")
    return value._name


__all__ = ["memory_format", "preserve_format", "contiguous_format", "channels_last", "channels_last_3d"]
