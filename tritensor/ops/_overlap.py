"""torch's memory-overlap checks before an in-place write (aten/src/ATen/MemoryOverlap.cpp).

A written-to tensor whose elements share memory (an expanded one) and an input that partly
overlaps the output are errors; geometries too hard to judge (neither dense nor broadcast) pass,
as in torch. Also the geometry checks for writes through views (as_strided's backward, an
in-place op on a view of a base). A leaf module (it imports no op module): dispatch, copy,
views and the elementwise ops all check through it.
"""
from __future__ import annotations

from ..tensor import Tensor
from ._shapes import numel

_INTERNAL_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a "
                     "single memory location. Please clone() the tensor before performing the operation.")
_PARTIAL_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to tensor "
                    "refer to a single memory location. Please clone() the tensor before performing the "
                    "operation.")


def is_non_overlapping_and_dense(t):
    """torch's is_non_overlapping_and_dense: some permutation of the dims is contiguous (every
    tensor with no elements counts, as torch calls it contiguous)."""
    if numel(t.shape) == 0:
        return True
    dims = sorted((st, s) for s, st in zip(t.shape, t.stride()) if s != 1)
    expected = 1
    for st, s in dims:
        if st != expected:
            return False
        expected *= s
    return True


def has_internal_overlap(t):
    """True where torch says MemOverlap::Yes: a dim of size > 1 with stride 0."""
    if is_non_overlapping_and_dense(t):
        return False
    return any(st == 0 and s > 1 for s, st in zip(t.shape, t.stride()))


def assert_no_internal_overlap(t):
    if has_internal_overlap(t):
        raise RuntimeError(_INTERNAL_OVERLAP)


def _overlap_status(a, b):
    """torch's get_overlap_status: 'full', 'partial' or None (no overlap, or too hard to tell)."""
    if a is b:
        return "full"
    if a._storage is not b._storage or a.numel() == 0 or b.numel() == 0:
        return None
    if not (is_non_overlapping_and_dense(a) and is_non_overlapping_and_dense(b)):
        return None
    a0, b0 = a.storage_offset() * a.dtype.itemsize, b.storage_offset() * b.dtype.itemsize
    a1, b1 = a0 + a.numel() * a.dtype.itemsize, b0 + b.numel() * b.dtype.itemsize
    if a0 == b0 and a1 == b1:
        return "full" if tuple(a.stride()) == tuple(b.stride()) else "partial"
    return "partial" if a0 < b1 and b0 < a1 else None


def assert_no_partial_overlap(out, inp):
    if _overlap_status(out, inp) == "partial":
        raise RuntimeError(_PARTIAL_OVERLAP)


def assert_no_overlap(out, inp):
    if _overlap_status(out, inp) is not None:
        raise RuntimeError(_PARTIAL_OVERLAP)


def check_inplace_overlap(out, *inputs):
    """The checks torch's TensorIterator makes for an in-place op writing ``out``. Whether a
    layout is non-overlapping and dense is remembered per (shape, strides), and an input is
    compared with ``out`` only when it shares its storage (issue 14: a repeated in-place op
    pays one call here)."""
    layout = (out._shape, out._stride)
    dense = _dense_layouts.get(layout)
    if dense is None:
        if len(_dense_layouts) >= 4096:
            _dense_layouts.clear()
        dense = _dense_layouts[layout] = is_non_overlapping_and_dense(out)
    if not dense:
        assert_no_internal_overlap(out)
    for a in inputs:
        if isinstance(a, Tensor) and (a is out or a._storage is out._storage):
            assert_no_partial_overlap(out, a)


_dense_layouts: dict = {}     # (shape, strides) -> is_non_overlapping_and_dense


# --------------------------------------------------------------------------- view geometries
# A geometry is (shape, strides, storage offset); the checks below guard writes through views
# (as_strided's backward, in-place ops on a view of a base) before any memory is touched.
def geometry(t):
    """A tensor's (shape, strides, storage offset), as plain ints."""
    return tuple(int(s) for s in t.shape), tuple(int(s) for s in t.stride()), int(t.storage_offset())


def extent(shape, strides, offset):
    """(lowest, highest) storage position of a non-empty geometry (strides are non-negative)."""
    return offset, offset + sum((s - 1) * st for s, st in zip(shape, strides))


def squash_broadcast(shape, strides):
    """The dims of a geometry that are not broadcast (stride 0, size > 1): those are summed over
    when gradients are scattered into it, as torch's as_strided_backward does."""
    keep = [d for d in range(len(shape)) if not (strides[d] == 0 and shape[d] > 1)]
    return keep


def geometry_overlaps(shape, strides):
    """Whether two elements of the geometry (broadcast dims left out) can share a position."""
    dims = sorted((st, s) for s, st in zip(shape, strides) if s > 1)
    span = 0
    for st, s in dims:
        if st <= span:
            return True
        span += (s - 1) * st
    return False


def check_scatter_target(shape, strides, what):
    keep = squash_broadcast(shape, strides)
    if geometry_overlaps([shape[d] for d in keep], [strides[d] for d in keep]):
        raise NotImplementedError(
            f"tritensor: {what} into a geometry whose elements overlap in memory other than by "
            "broadcasting (stride 0) is not supported")


def check_view_geometry(base, view):
    if not numel(view[0]):
        return
    if any(st == 0 and s > 1 for s, st in zip(view[0], view[1])) or geometry_overlaps(view[0], view[1]):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a single "
            "memory location. Please clone() the tensor before performing the operation.")
    check_scatter_target(base[0], base[1], "an in-place operation on a view of a base")
