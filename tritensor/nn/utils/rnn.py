"""tt.nn.utils.rnn: packed and padded sequences, as torch.nn.utils.rnn.

A PackedSequence holds the steps of a batch of sequences sorted by decreasing length, time step
after time step: ``data`` (sum of lengths, *) and ``batch_sizes`` (a cpu int64 tensor: how many
sequences are still running at each step), plus the permutation that sorted the batch
(``sorted_indices``) and its inverse (``unsorted_indices``). The recurrent modules
(nn/modules/rnn.py) accept it and run each step on the sequences still running.

Packing and padding are index_select gathers (differentiable: the gradient scatters back), the
index built on the host from the lengths (which torch requires on the cpu).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple, Optional

import numpy as np

from ... import dtypes as _dt
from ...ops.creation import arange, empty_like, full, tensor as _tensor
from ...ops.joining import cat, stack
from ...tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Optional[Tensor]
    unsorted_indices: Optional[Tensor]


def _bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    """Holds the data and the batch_sizes of a packed sequence (made by pack_padded_sequence /
    pack_sequence, not by hand). batch_sizes is always a cpu int64 tensor; sorted_indices and
    unsorted_indices are int64 tensors on data's device."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        return super().__new__(cls, *_packed_sequence_init_args(data, batch_sizes, sorted_indices, unsorted_indices))

    def pin_memory(self):
        return type(self)(self.data.pin_memory(), self.batch_sizes, _bind(self.sorted_indices, lambda t: t.pin_memory()),
                          _bind(self.unsorted_indices, lambda t: t.pin_memory()))

    def to(self, *args, **kwargs):
        """data converted as Tensor.to; the indices follow data's device. Returns self when
        data is unchanged."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        non_blocking = kwargs.get("non_blocking", False)

        def call_to(t):
            return t.to(data.device, non_blocking=non_blocking)
        return type(self)(data, self.batch_sizes, _bind(self.sorted_indices, call_to),
                          _bind(self.unsorted_indices, call_to))

    def cuda(self, *args, **kwargs):
        if not args and "device" not in kwargs:
            kwargs["device"] = "cuda"
        return self.to(*args, **kwargs)

    def cpu(self, *args, **kwargs):
        kwargs["device"] = "cpu"
        return self.to(*args, **kwargs)

    def double(self):
        return self.to(dtype=_dt.float64)

    def float(self):
        return self.to(dtype=_dt.float32)

    def half(self):
        return self.to(dtype=_dt.float16)

    def long(self):
        return self.to(dtype=_dt.int64)

    def int(self):
        return self.to(dtype=_dt.int32)

    def short(self):
        return self.to(dtype=_dt.int16)

    def char(self):
        return self.to(dtype=_dt.int8)

    def byte(self):
        return self.to(dtype=_dt.uint8)

    @property
    def is_cuda(self):
        """True if data is stored on a GPU."""
        return self.data.is_cuda

    def is_pinned(self):
        return self.data.is_pinned()


def _packed_sequence_init_args(data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is not None:
        if batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never be created manually. "
                "They should be instantiated by functions like pack_sequence and pack_padded_sequences in "
                "nn.utils.rnn. https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return data, batch_sizes, sorted_indices, unsorted_indices
    if not (isinstance(data, (list, tuple)) and len(data) == 2):
        raise AssertionError("Expected data to be a list or tuple of length 2")
    return data[0], data[1], sorted_indices, unsorted_indices


def invert_permutation(permutation):
    """The inverse of a 1-D permutation tensor (None for None)."""
    if permutation is None:
        return None
    output = empty_like(permutation)
    output.scatter_(0, permutation, arange(0, permutation.numel(), device=permutation.device))
    return output


def _host_lengths(lengths):
    """lengths as a NumPy int64 vector; a tensor must be a 1-D cpu tensor, as torch requires."""
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1 or lengths.device.type != "cpu":
            raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got "
                               f"{lengths.dim()}D {lengths.device} {_dt.type_name(lengths.dtype)} tensor")
        return lengths.to(_dt.int64).numpy().astype(np.int64)
    return np.asarray([int(v) for v in lengths], dtype=np.int64)


def _batch_sizes_of(lengths):
    """batch_sizes[t] = how many sequences (sorted by decreasing length) are longer than t."""
    steps = int(lengths[0]) if len(lengths) else 0
    return (lengths[None, :] > np.arange(steps)[:, None]).sum(axis=1).astype(np.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch (T, B, *) (or (B, T, *) with batch_first) of sequences of the given
    lengths; with enforce_sorted=False the batch is sorted by decreasing length first (and the
    PackedSequence remembers the permutation)."""
    host = _host_lengths(lengths)
    sorted_indices = None
    if not enforce_sorted:
        order = np.argsort(-host, kind="stable")
        host = host[order]
        sorted_indices = _tensor(order.astype(np.int64), device=input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    T, B = int(input.shape[0]), int(input.shape[1])
    if len(host) != B:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(host)} (batch_size={B})")
    if host[B - 1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if np.any(host[1:] > host[:-1]):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
            "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if "
            "you do not need ONNX exportability.")
    if host[0] > T:      # (torch reads past the input here; tritensor refuses)
        raise RuntimeError(f"Expected every length to be at most the sequence length {T}, but got {int(host[0])}")
    batch_sizes = _batch_sizes_of(host)
    rows = np.concatenate([t * B + np.arange(b) for t, b in enumerate(batch_sizes)]).astype(np.int64)
    flat = input.reshape((T * B,) + tuple(input.shape[2:]))
    data = flat.index_select(0, _tensor(rows, device=input.device))
    return PackedSequence(data, _tensor(batch_sizes), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """(padded (T, B, *) or (B, T, *), lengths): the inverse of pack_padded_sequence, the batch
    back in its original order; total_length pads to that many steps."""
    batch_sizes = sequence.batch_sizes.numpy().astype(np.int64)
    max_seq_length = len(batch_sizes)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {max_seq_length}")
        max_seq_length = total_length
    data = sequence.data
    B = int(batch_sizes[0]) if len(batch_sizes) else 0
    N = int(data.shape[0])
    index = np.full((max_seq_length, B), N, dtype=np.int64)      # row N: the padding row
    offset = 0
    for t, b in enumerate(batch_sizes):
        index[t, :b] = np.arange(offset, offset + b)
        offset += int(b)
    pad = full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    rows = cat([data, pad]).index_select(0, _tensor(index.reshape(-1), device=data.device))
    padded = rows.reshape((max_seq_length, B) + tuple(data.shape[1:]))
    lengths = (np.arange(B)[None, :] < batch_sizes[:, None]).sum(axis=0).astype(np.int64)
    if batch_first:
        padded = padded.transpose(0, 1)
    unsorted = sequence.unsorted_indices
    if unsorted is not None:
        padded = padded.index_select(0 if batch_first else 1, unsorted)
        lengths = lengths[unsorted.cpu().numpy()]
    return padded, _tensor(lengths)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks sequences (L_i, *) along a new batch dim, each padded to the longest with
    padding_value on padding_side: (T, B, *), or (B, T, *) with batch_first."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    first = sequences[0]
    if any(s.dim() == 0 for s in sequences):
        raise RuntimeError("pad_sequence: every sequence must have at least one dimension (its length)")
    trailing = tuple(first.shape[1:])
    T = max(int(s.shape[0]) for s in sequences)
    padded = []
    for s in sequences:
        if tuple(s.shape[1:]) != trailing:
            for d, (a, b) in enumerate(zip(reversed(trailing), reversed(tuple(s.shape[1:])))):
                if a != b:
                    raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                                       f"non-singleton dimension {len(trailing) - d}")
            raise RuntimeError(f"pad_sequence: sequences have trailing dims {list(trailing)} and "
                               f"{list(s.shape[1:])}")
        if s.dtype is not first.dtype:
            s = s.to(first.dtype)
        n = T - int(s.shape[0])
        if n:
            fill = full((n,) + trailing, padding_value, dtype=first.dtype, device=s.device)
            s = cat([s, fill] if padding_side == "right" else [fill, s])
        padded.append(s)
    return stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences (L_i, *) of a padded batch; as torch, transposes a time-first
    padded_sequences in place."""
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    host = _host_lengths(lengths) if isinstance(lengths, Tensor) and lengths.device.type == "cpu" \
        else np.asarray([int(v) for v in lengths.tolist()], dtype=np.int64)
    if len(host) != int(padded_sequences.shape[0]):
        raise ValueError(f"zip() argument 2 is {'shorter' if len(host) < int(padded_sequences.shape[0]) else 'longer'}"
                         " than argument 1")
    return [seq[:int(n)] for seq, n in zip(padded_sequences, host)]


def pack_sequence(sequences, enforce_sorted=True):
    """pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=...)."""
    lengths = _tensor([int(v.size(0)) for v in sequences], dtype=_dt.int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences a PackedSequence holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
