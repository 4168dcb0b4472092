"""Padding: torch.nn.functional.pad and torch.constant_pad_nd, composites of existing ops.

``pad`` pairs go from the last dim backwards, (left, right) each; negative values cut instead.

constant   constant_pad_nd: a new tensor filled with the value (laid out as the input suggests)
           and the input, cut where a pad is negative, copied into its middle. One node,
           ConstantPadNdBackward0 (its gradient is the middle of the output's gradient).
reflect    each padded dim is an index gather (index_select) of positions reflected about the
replicate  edges (reflect: -1 -> 1; replicate: clamped to the edge); the gradient adds the
           copies back (index_select's backward, a deterministic scatter-add). One node per call,
           torch's Reflection/ReplicationPad{1,2,3}DBackward0.
circular   torch's _pad_circular: the input copied into a new tensor, then the wrapped borders
           copied from the tensor's own opposite edges (its node is CopySlices, as torch's).

The non-constant modes pad the last 1, 2 or 3 dims of a tensor with one or two leading dims
(torch's supported combinations), with torch's errors word for word. They serve the
convolution modules' padding_mode (nn/modules/conv.py) as well as F.pad.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from .. import memory_formats as _memory_formats
from ..autograd.composite import named_composite
from ..tensor import Tensor
from . import _layout
from . import creation as _creation
from . import indexing as _indexing
from . import views as _views

MODES = ("constant", "reflect", "replicate", "circular")


def _size_str(shape):
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def _check_pad_list(pad, fn="pad", position=2):
    if isinstance(pad, Tensor) or not isinstance(pad, (tuple, list)):
        raise TypeError(f"{fn}(): argument 'pad' (position {position}) must be tuple of ints, not "
                        f"{type(pad).__name__}")
    for i, p in enumerate(pad):
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
            raise TypeError(f"{fn}(): argument 'pad' (position {position}) must be tuple of ints, but found element "
                            f"of type {type(p).__name__} at pos {i}")
    return [int(p) for p in pad]


# --------------------------------------------------------------------------- constant
def _constant_pad(x, pad, value):
    cut = x
    for i in range(len(pad) // 2):
        d = x.dim() - 1 - i
        lo, hi = max(-pad[2 * i], 0), max(-pad[2 * i + 1], 0)
        if lo or hi:
            length = int(cut.shape[d]) - lo - hi
            if length < 0:
                raise RuntimeError("narrow(): length must be non-negative.")
            cut = _views.narrow(cut, d, lo, length)
    shape = list(x.shape)
    for i in range(len(pad) // 2):
        shape[x.dim() - 1 - i] += pad[2 * i] + pad[2 * i + 1]
    fmt = _layout.suggest_memory_format(x._shape, x._stride)
    out = _creation.empty(*shape, dtype=x.dtype, device=x.device,
                          memory_format=None if fmt == _layout.CONTIGUOUS else _memory_format_object(fmt))
    out.fill_(value)
    middle = out
    for i in range(len(pad) // 2):
        d = x.dim() - 1 - i
        middle = _views.narrow(middle, d, max(pad[2 * i], 0), int(cut.shape[d]))
    if cut.numel():
        middle.copy_(cut)
    return out


def _memory_format_object(name):
    return getattr(_memory_formats, name)


def constant_pad_nd(input, pad, value=0):
    """torch.constant_pad_nd: pad with ``value`` (negative pads cut)."""
    pad = _check_pad_list(pad, "constant_pad_nd")
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) > 2 * input.dim():
        raise RuntimeError("Length of pad should be no more than twice the number of dimensions of the input. Pad "
                           f"length is {len(pad)}while the input has {input.dim()}dimensions.")
    if isinstance(value, bool) or not input.dtype.is_floating_point:
        value = bool(value) if input.dtype is _dt.bool_ else int(value)
    return named_composite("ConstantPadNdBackward0", _constant_pad, input, tuple(pad), value)


# --------------------------------------------------------------------------- reflect / replicate
def _source_positions(n, lo, hi, mode):
    """The input position each output position of a dim of size n padded by (lo, hi) reads."""
    i = np.arange(-lo, n + hi, dtype=np.int64)
    if mode == "reflect":
        i = np.abs(i)
        return np.where(i >= n, 2 * (n - 1) - i, i)
    return np.clip(i, 0, n - 1)


def _gather_pad(x, pad, mode):
    out = x
    for i in range(len(pad) // 2):
        d = x.dim() - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo or hi:
            idx = _creation.tensor(_source_positions(int(x.shape[d]), lo, hi, mode), device=x.device)
            out = _indexing.index_select(out, d, idx)
    return out


_AXES = ("W", "H", "D")


def _check_gather_pad(x, pad, mode, k):
    """torch's reflection_pad / replication_pad checks for k padded dims."""
    lead = x.dim() - k     # 1 (unbatched) or 2
    if any(int(s) == 0 for s in x.shape[1:]) or (lead == 1 and int(x.shape[0]) == 0):
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and other "
                           f"non-zero dimensions for input, but got: {_size_str(x.shape)}")
    kernel = {"reflect": "reflection_pad", "replicate": "replication_pad"}[mode] + f"{k}d"
    if x.dtype is _dt.bool_:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    sizes = [int(x.shape[x.dim() - 1 - i]) for i in range(k)]     # W, H, D
    if mode == "reflect":
        for i in range(k):
            lo, hi = pad[2 * i], pad[2 * i + 1]
            if lo >= sizes[i] or hi >= sizes[i]:
                raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding input "
                                   f"dimension, but got: padding ({lo}, {hi}) at dimension {x.dim() - 1 - i} of "
                                   f"input {_size_str(x.shape)}")
    outs = [sizes[i] + pad[2 * i] + pad[2 * i + 1] for i in range(k)]
    too_small = any(o < 1 for o in outs) if (mode == "reflect" or k < 3) else any(o < 0 for o in outs)
    if too_small:
        axes = list(reversed(_AXES[:k]))
        ins = ", ".join(f"{a}: {s}" for a, s in zip(axes, reversed(sizes)))
        got = " ".join(f"{a}: {o}" for a, o in zip(axes, reversed(outs)))
        space = " " if mode == "replicate" and k == 2 else ""
        raise RuntimeError(f"input ({ins}{space}) is too small. Calculated output {got}")


def _gather_mode_pad(x, pad, mode):
    k = len(pad) // 2
    _check_gather_pad(x, pad, mode, k)
    name = {"reflect": "ReflectionPad", "replicate": "ReplicationPad"}[mode] + f"{k}DBackward0"
    return named_composite(name, _gather_pad, x, tuple(pad), mode)


# --------------------------------------------------------------------------- circular
def _circular_pad(x, pad):
    """torch's _pad_circular_symint, step by step (the wrapped borders are copied from the
    padded tensor itself; corners are written once per dim)."""
    k = len(pad) // 2
    lead = x.dim() - k
    if lead not in (1, 2):
        raise RuntimeError(f"Invalid padding size, expected 1 or 2 non-padded dimensions, which would be equivalent "
                           f"to padding of length {(x.dim() - 1) * 2} or {(x.dim() - 2) * 2} respectively but got "
                           f"{len(pad)}")
    shape = list(x.shape)
    for i in range(k):
        lo, hi = pad[2 * (k - i - 1)], pad[2 * (k - i - 1) + 1]
        size = int(x.shape[lead + i])
        shape[lead + i] = size + lo + hi
        if lo > size or hi > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if shape[lead + i] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    out = _creation.zeros(*shape, dtype=x.dtype, device=x.device)
    out_slice, in_slice = out, x
    for i in range(k):
        d = k - i + lead - 1
        lo, hi = pad[2 * i], pad[2 * i + 1]
        out_slice = _views.narrow(out_slice, d, max(lo, 0), shape[d] - max(lo, 0) - max(hi, 0))
        in_slice = _views.narrow(in_slice, d, max(-lo, 0), int(x.shape[d]) - max(-lo, 0) - max(-hi, 0))
    if in_slice.numel():
        out_slice.copy_(in_slice)
    for i in range(k):
        d = k - i + lead - 1
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo > 0:
            src = _views.narrow(out, d, shape[d] - lo - max(hi, 0), lo)
            _views.narrow(out, d, 0, lo).copy_(src)
        if hi > 0:
            src = _views.narrow(out, d, max(lo, 0), hi)
            _views.narrow(out, d, shape[d] - hi, hi).copy_(src)
    return out


# --------------------------------------------------------------------------- F.pad
_UNSUPPORTED = ("Supported combinations for non-constant padding:\n"
                "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def pad(input, pad, mode="constant", value=None):
    """torch.nn.functional.pad: constant (any number of dims, negative pads cut), reflect,
    replicate and circular (the last 1-3 dims of a tensor with one or two leading dims)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"pad(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    pad = _check_pad_list(pad)
    if not isinstance(mode, str):
        raise TypeError(f"pad(): argument 'mode' (position 3) must be str, not {type(mode).__name__}")
    if value is not None and (isinstance(value, (str, Tensor)) or not isinstance(value, (int, float, np.number))):
        raise TypeError(f"pad(): argument 'value' (position 4) must be float, not {type(value).__name__}")
    if mode not in MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * input.dim():
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.dim()}")
    if mode == "constant":
        return constant_pad_nd(input, pad, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    k = len(pad) // 2
    if not (1 <= k <= 3 and input.dim() in (k + 1, k + 2)):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\n"
                                  + _UNSUPPORTED)
    if mode == "circular":
        return _circular_pad(input, pad)
    return _gather_mode_pad(input, pad, mode)
