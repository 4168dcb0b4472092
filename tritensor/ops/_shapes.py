"""Shape arithmetic shared by every op module: broadcasting, dim wrapping, dim lists, reduced
shapes, element counts and contiguous strides.

A leaf module: it imports no op module (tests/test_ops_layering.py checks), so any op module
can use it without an import cycle. The error texts are torch's.
"""
from __future__ import annotations

from ..tensor import contiguous_strides  # noqa: F401  (re-exported: the one definition lives with Tensor)


def wrap_dim(dim, ndim):
    """torch's maybe_wrap_dim: a negative dim counts from the end; a 0-d tensor accepts 0 and -1."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def numel(shape):
    """The number of elements of a tensor of ``shape`` (1 for the 0-d shape ``()``)."""
    n = 1
    for d in shape:
        n *= d
    return n


def broadcast_shapes(*shapes):
    """torch's infer_size, pairwise from the first shape: dims align on the right and are
    compared from the last; a mismatch names the output dim, a the shape so far, b the next."""
    out = ()
    for s in shapes:
        ndim = max(len(out), len(s))
        a, b = (1,) * (ndim - len(out)) + tuple(out), (1,) * (ndim - len(s)) + tuple(s)
        merged = [0] * ndim
        for j in range(ndim - 1, -1, -1):
            if a[j] != b[j] and a[j] != 1 and b[j] != 1:
                raise RuntimeError(
                    f"The size of tensor a ({a[j]}) must match the size of tensor b ({b[j]}) at "
                    f"non-singleton dimension {j}")
            merged[j] = b[j] if a[j] == 1 else a[j]
        out = tuple(merged)
    return tuple(int(d) for d in out)


def normalize_dims(x, dim):
    """torch's dim argument: None (all), an int, or a tuple/list of ints; returns sorted dims."""
    if dim is None:
        return tuple(range(x.dim()))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) == 0:
        return tuple(range(x.dim()))
    ndim = x.dim()
    if ndim > 64:           # torch's reductions keep the reduced dims in a 64-bit mask
        raise RuntimeError("only tensors with up to 64 dims are supported")
    wrapped = [wrap_dim(d, ndim) for d in dims]
    for d in set(wrapped):
        if wrapped.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return tuple(sorted(set(wrapped))) if ndim else ()


def reduced_shape(shape, dims, keepdim):
    """``shape`` reduced over ``dims``: those dims become 1 (keepdim) or disappear."""
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)
