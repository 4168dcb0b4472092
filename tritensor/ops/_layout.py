"""Output layouts as torch chooses them: the strides of a new tensor that keeps its inputs'
memory layout (TensorIterator's output strides, ``preserve_format``) or follows a named memory
format (``contiguous_format``, ``channels_last``, ``channels_last_3d``).

A leaf module of plain integer arithmetic on (shape, strides) tuples: it imports nothing from
the op layer (only the one row-major stride rule, which lives with Tensor), so dispatch, the
factories and the copies can all use it.

The rules are those of PyTorch's c10/core/TensorImpl.h (contiguity flags),
c10/core/MemoryFormat.h (channels-last strides), ATen/TensorUtils.cpp (infer_dense_strides) and
ATen/TensorIterator.cpp (fast_set_up, compute_strides, reorder_dimensions,
allocate_or_resize_outputs).
"""
from __future__ import annotations

from ..tensor import contiguous_strides  # noqa: F401  (row-major, size-0/1 dims as 1; re-exported)


def is_contiguous(shape, strides) -> bool:
    """torch's compute_contiguous: size-1 dims are ignored; a tensor with no elements is contiguous."""
    if 0 in shape:
        return True
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True


_CHANNELS_LAST_ORDER = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}   # innermost dim first


def is_channels_last_contiguous(shape, strides, rank) -> bool:
    """torch's compute_channels_last_contiguous_2d (rank 4) / _3d (rank 5): False for any other
    rank; size-1 dims are ignored; unlike is_contiguous there is no shortcut for empty tensors."""
    if len(shape) != rank:
        return False
    expected = 1
    for d in _CHANNELS_LAST_ORDER[rank]:
        size = shape[d]
        if size != 1:
            if strides[d] != expected:
                return False
            expected *= size
    return True


def is_non_overlapping_and_dense(shape, strides) -> bool:
    """torch's is_non_overlapping_and_dense: the elements fill a block of memory exactly once,
    in some order of the dims (a permutation of a contiguous tensor, size-1 dims anywhere)."""
    if is_contiguous(shape, strides):
        return True
    if len(shape) == 1:
        return shape[0] < 2 or strides[0] == 1
    dims = sorted((d for d in range(len(shape)) if shape[d] >= 2), key=lambda d: strides[d])
    expected = 1
    for d in dims:
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def channels_last_strides(shape):
    """torch's get_channels_last_strides_2d (rank 4) / _3d (rank 5): channels innermost, then
    width, height (, depth), batch. Sizes multiply as they are (a size-0 dim gives stride 0)."""
    rank = len(shape)
    strides = [0] * rank
    strides[1] = 1
    acc = shape[1]
    for d in range(rank - 1, 1, -1):
        strides[d] = acc
        acc *= shape[d]
    strides[0] = acc
    return tuple(strides)


def _insertion_sorted(ndim, should_swap):
    """The dims, innermost first, sorted as ATen sorts them (reorder_dimensions,
    infer_dense_strides): an insertion sort from the outermost-last order that stops at the first
    pair ``should_swap`` says is in order (< 0) and leaves undecided pairs (0) as they are."""
    perm = list(range(ndim - 1, -1, -1))
    for i in range(1, ndim):
        dim1 = i
        for dim0 in range(i - 1, -1, -1):
            comparison = should_swap(perm[dim0], perm[dim1])
            if comparison > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif comparison < 0:
                break
    return perm


def _sort_dims(shape, operand_strides):
    """TensorIterator's reorder_dimensions: a permutation of the dims, innermost first, by an
    insertion sort whose comparison asks each operand in turn (the first one that decides wins):
    the smaller stride goes inward, a stride of 0 (broadcast) lets the next operand decide, equal
    strides put the smaller size inward. Undecided pairs keep their order (outermost dim last)."""
    ndim = len(shape)

    def should_swap(dim0, dim1):
        for strides in operand_strides:
            s0, s1 = strides[dim0], strides[dim1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[dim0] > shape[dim1]:
                return 1
        return 0

    return _insertion_sorted(ndim, should_swap)


def _dense_in_order(shape, perm):
    """Strides of a dense tensor whose dims, innermost first, are ``perm`` (TensorIterator's
    compatible_stride: sizes multiply as they are, so a size-0 dim zeroes the outer strides)."""
    if perm == list(range(len(shape) - 1, -1, -1)):
        return contiguous_strides(shape)       # the inverted order: a plain contiguous output
    strides = [0] * len(shape)
    acc = 1
    for d in perm:
        strides[d] = acc
        acc *= shape[d]
    return tuple(strides)


def broadcast_operand_strides(shape, op_shape, op_strides):
    """An operand's strides as TensorIterator's compute_strides sees them: right-aligned to the
    output's ``shape``, 0 on new dims and on size-1 dims that broadcast (a size-1 dim that does
    not broadcast keeps its own stride)."""
    lead = len(shape) - len(op_shape)
    result = [0] * lead
    for i, size in enumerate(op_shape):
        result.append(0 if size == 1 and shape[lead + i] != 1 else op_strides[i])
    return result


def iterator_strides(shape, operands, has_scalars=False):
    """The strides torch's TensorIterator gives the output of an elementwise op.

    ``shape``: the output's (broadcast) shape; ``operands``: (shape, strides) of each tensor
    input, in the iterator's order (the first operand's layout has priority); ``has_scalars``:
    a 0-d operand joins tensors with dims (a Python number wrapped as a tensor, as torch does for
    ``x + 2``). When every operand has the output's shape (fast_set_up): all contiguous gives a
    contiguous output, all channels-last (4-D) a channels-last one, all with one non-overlapping
    dense layout that layout. Otherwise the dims are sorted by the operands' strides
    (reorder_dimensions) and the output is dense in that order."""
    shape = tuple(shape)
    if not operands:
        return contiguous_strides(shape)
    same_shape = not has_scalars or all(len(s) == 0 for s, _ in operands)
    if same_shape:
        for op_shape, _ in operands:
            if tuple(op_shape) != shape:
                same_shape = False
                break
    if same_shape:
        if all(is_contiguous(s, st) for s, st in operands):
            return contiguous_strides(shape)
        if len(shape) == 4 and all(is_channels_last_contiguous(s, st, 4) for s, st in operands):
            return channels_last_strides(shape)
        if all(is_non_overlapping_and_dense(s, st) for s, st in operands):
            first = tuple(operands[-1][1])
            if all(tuple(st) == first for _, st in operands):
                return first
    if len(shape) <= 1:
        return contiguous_strides(shape)
    strides = [broadcast_operand_strides(shape, s, st) for s, st in operands]
    return _dense_in_order(shape, _sort_dims(shape, strides))


def infer_dense_strides(shape, strides):
    """torch's infer_dense_strides (empty_like's preserve_format for a tensor that is not
    dense): a dense layout whose dims keep the order of ``strides`` (stride-0 dims stay where they
    are; size-1 and size-0 dims count as 1)."""
    ndim = len(shape)
    if ndim == 0:
        return ()
    if ndim == 1:
        return (1,)

    def should_swap(dim0, dim1):
        s0, s1 = strides[dim0], strides[dim1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 < s1:
            return -1
        if s0 > s1:
            return 1
        return 1 if shape[dim0] > shape[dim1] else 0

    perm = _insertion_sorted(ndim, should_swap)
    out = [0] * ndim
    acc = 1
    for d in perm:
        out[d] = acc
        if shape[d] > 1:
            acc *= shape[d]
    return tuple(out)


def preserve_strides(shape, strides):
    """empty_like / clone with preserve_format: a non-overlapping dense layout is kept exactly,
    any other gets infer_dense_strides."""
    shape, strides = tuple(shape), tuple(strides)
    if is_non_overlapping_and_dense(shape, strides):
        return strides
    return infer_dense_strides(shape, strides)


def _strides_like_channels_last(shape, strides, order) -> bool:
    """torch's is_channels_last_strides_2d_s4 / _3d_s5: do the strides order the dims as
    channels-last (channels innermost)? Ambiguous cases (a trivial channel stride, size-0 dims,
    N111-like tensors) answer False: the default layout stays row-major."""
    if strides[1] == 0:
        return False
    smallest = 0
    for d in order:
        if shape[d] == 0 or strides[d] < smallest:
            return False
        if d == 0 and smallest == strides[1]:
            return False
        smallest = strides[d] * shape[d] if shape[d] > 1 else strides[d]
    return True


def suggest_memory_format(shape, strides):
    """torch's Tensor.suggest_memory_format(): the format a tensor's strides look like."""
    rank = len(shape)
    if rank in _CHANNELS_LAST_ORDER and _strides_like_channels_last(shape, strides, _CHANNELS_LAST_ORDER[rank]):
        return CHANNELS_LAST if rank == 4 else CHANNELS_LAST_3D
    return CONTIGUOUS


# The memory formats by name (tritensor.memory_format objects carry these names).
PRESERVE, CONTIGUOUS, CHANNELS_LAST, CHANNELS_LAST_3D = (
    "preserve_format", "contiguous_format", "channels_last", "channels_last_3d")


def check_rank(name, rank):
    """torch's empty_tensor_restride checks: channels_last needs 4 dims, channels_last_3d 5."""
    if name == CHANNELS_LAST and rank != 4:
        raise RuntimeError("required rank 4 tensor to use channels_last format")
    if name == CHANNELS_LAST_3D and rank != 5:
        raise RuntimeError("required rank 5 tensor to use channels_last_3d format")


def format_strides(name, shape):
    """The strides of a new tensor of ``shape`` in memory format ``name`` (not preserve)."""
    check_rank(name, len(shape))
    if name == CONTIGUOUS:
        return contiguous_strides(shape)
    return channels_last_strides(shape)


def like_strides(name, shape, strides):
    """empty_like's strides for memory format ``name`` (preserve keeps ``strides``' layout)."""
    if name == PRESERVE:
        return preserve_strides(shape, strides)
    return format_strides(name, tuple(shape))


def is_contiguous_as(name, shape, strides) -> bool:
    """Tensor.is_contiguous(memory_format=name); preserve_format asks the row-major question
    (as torch's is_contiguous_default)."""
    if name == CONTIGUOUS or name == PRESERVE:
        return is_contiguous(shape, strides)
    if name == CHANNELS_LAST:
        return is_channels_last_contiguous(shape, strides, 4)
    if name == CHANNELS_LAST_3D:
        return is_channels_last_contiguous(shape, strides, 5)
    raise ValueError(f"unknown memory format {name!r}")
