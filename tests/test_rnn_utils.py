"""tt.nn.utils.rnn against values and error texts read from torch 2.13 (literals below):
pack_padded_sequence (enforce_sorted, batch_first), pad_packed_sequence (total_length,
padding_value), pad_sequence (padding_side), pack_sequence / unpack_sequence, PackedSequence."""
import numpy as np
import pytest

import tritensor as tt
from tritensor.nn.utils.rnn import (
    PackedSequence, invert_permutation, pack_padded_sequence, pack_sequence, pad_packed_sequence, pad_sequence,
    unpack_sequence, unpad_sequence,
)


def _raises(exc, text, fn):
    with pytest.raises(exc) as e:
        fn()
    assert str(e.value) == text, str(e.value)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_pack_unsorted_and_pad_back(device):
    x = tt.arange(24.0, device=device).reshape(4, 3, 2)
    p = pack_padded_sequence(x, [2, 4, 1], enforce_sorted=False)
    assert isinstance(p, PackedSequence) and p.is_cuda == (device == "cuda")
    assert p.data.tolist() == [[2.0, 3.0], [0.0, 1.0], [4.0, 5.0], [8.0, 9.0], [6.0, 7.0], [14.0, 15.0], [20.0, 21.0]]
    assert p.batch_sizes.tolist() == [3, 2, 1, 1] and p.batch_sizes.device.type == "cpu"
    assert p.batch_sizes.dtype is tt.int64
    assert p.sorted_indices.tolist() == [1, 0, 2] and p.unsorted_indices.tolist() == [1, 0, 2]
    pb = pack_padded_sequence(x.transpose(0, 1), tt.tensor([2, 4, 1]), batch_first=True, enforce_sorted=False)
    assert pb.data.tolist() == p.data.tolist()
    o, lengths = pad_packed_sequence(p, batch_first=True, padding_value=-1.0, total_length=5)
    assert o.tolist() == [[[0.0, 1.0], [6.0, 7.0], [-1.0, -1.0], [-1.0, -1.0], [-1.0, -1.0]],
                          [[2.0, 3.0], [8.0, 9.0], [14.0, 15.0], [20.0, 21.0], [-1.0, -1.0]],
                          [[4.0, 5.0], [-1.0, -1.0], [-1.0, -1.0], [-1.0, -1.0], [-1.0, -1.0]]]
    assert lengths.tolist() == [2, 4, 1] and lengths.device.type == "cpu"


def test_gradients_flow_through_pack_and_pad():
    x = tt.randn(4, 3, 2, dtype=tt.float64, requires_grad=True)
    p = pack_padded_sequence(x, [4, 2, 1])
    o, _ = pad_packed_sequence(p)
    (o * 3).sum().backward()
    mask = np.zeros((4, 3, 1))
    for b, n in enumerate([4, 2, 1]):
        mask[:n, b] = 1
    np.testing.assert_array_equal(x.grad.numpy(), 3 * np.broadcast_to(mask, (4, 3, 2)))


def test_pad_sequence():
    seqs = [tt.tensor([1.0, 2]), tt.tensor([3.0]), tt.tensor([4.0, 5, 6])]
    assert pad_sequence(seqs, padding_value=9, padding_side="left").tolist() == \
        [[9.0, 9.0, 4.0], [1.0, 9.0, 5.0], [2.0, 3.0, 6.0]]
    assert pad_sequence([tt.tensor([1, 2]), tt.tensor([3])], batch_first=True).tolist() == [[1, 2], [3, 0]]
    assert tuple(pad_sequence([tt.ones(25, 300), tt.ones(22, 300), tt.ones(15, 300)]).shape) == (25, 3, 300)
    assert pad_sequence([tt.ones(2, 3), tt.ones(3, 3, dtype=tt.float64)]).dtype is tt.float32
    assert tuple(pad_sequence(tt.ones(2, 3)).shape) == (3, 2)        # a tensor: its rows
    _raises(RuntimeError, "received an empty list of sequences", lambda: pad_sequence([]))
    _raises(RuntimeError, "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1",
            lambda: pad_sequence([tt.ones(2, 3), tt.ones(3, 4)]))
    _raises(RuntimeError, "Expected padding_side to be one of left or right, but got middle.",
            lambda: pad_sequence([tt.ones(2, 3), tt.ones(3, 3)], padding_side="middle"))
    _raises(RuntimeError, "pad_sequence: Expected iterable for input sequences, but got arg of type: <class 'int'>",
            lambda: pad_sequence(5))


def test_pack_sequence_and_unpack():
    ps = pack_sequence([tt.tensor([1, 2, 3]), tt.tensor([4, 5]), tt.tensor([6])])
    assert ps.data.tolist() == [1, 4, 6, 2, 5, 3] and ps.batch_sizes.tolist() == [3, 2, 1]
    assert ps.sorted_indices is None and ps.unsorted_indices is None
    seqs = unpack_sequence(pack_sequence([tt.tensor([1, 2]), tt.tensor([4, 5, 6])], enforce_sorted=False))
    assert [s.tolist() for s in seqs] == [[1, 2], [4, 5, 6]]
    padded = pad_sequence([tt.ones(3, 2), tt.ones(1, 2)])
    parts = unpad_sequence(padded, tt.tensor([3, 1]))
    assert [tuple(p.shape) for p in parts] == [(3, 2), (1, 2)]
    assert invert_permutation(tt.tensor([2, 0, 3, 1])).tolist() == [1, 3, 0, 2]
    assert invert_permutation(None) is None


def test_pack_errors():
    x = tt.randn(4, 3, 2)
    sort_text = ("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
                 "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if "
                 "you do not need ONNX exportability.")
    _raises(RuntimeError, sort_text, lambda: pack_padded_sequence(x, [2, 3, 1]))
    _raises(RuntimeError, sort_text, lambda: pack_sequence([tt.ones(2), tt.ones(3)]))
    _raises(RuntimeError, "Length of all samples has to be greater than 0, but found an element in 'lengths' that is "
            "<= 0", lambda: pack_padded_sequence(x, [4, 3, 0]))
    _raises(RuntimeError, "Expected `len(lengths)` to be equal to batch_size, but got 2 (batch_size=3)",
            lambda: pack_padded_sequence(x, [4, 3]))
    with pytest.raises(RuntimeError, match="at most the sequence length 4"):   # torch reads past the input here
        pack_padded_sequence(x, [5, 3, 1])
    p = pack_sequence([tt.ones(3), tt.ones(2) * 2])
    _raises(ValueError, "Expected total_length to be at least the length of the longest sequence in input, but got "
            "total_length=2 and max sequence length being 3", lambda: pad_packed_sequence(p, total_length=2))
    with pytest.raises(ValueError, match="batch_sizes should always be on CPU"):
        PackedSequence(tt.ones(3, device="cuda"), tt.tensor([2, 1], device="cuda"))


def test_packed_sequence_conversions():
    p = pack_sequence([tt.tensor([1.0, 2, 3]), tt.tensor([4.0])], enforce_sorted=False)
    assert p.to(tt.float32) is p
    d = p.double()
    assert d.data.dtype is tt.float64 and d.batch_sizes is p.batch_sizes
    c = p.cuda()
    assert c.is_cuda and c.sorted_indices.device.type == "cuda" and c.batch_sizes.device.type == "cpu"
    assert c.cpu().data.tolist() == p.data.tolist()
    assert p.long().data.dtype is tt.int64
    assert PackedSequence((p.data, p.batch_sizes)).batch_sizes.tolist() == [2, 1, 1]
