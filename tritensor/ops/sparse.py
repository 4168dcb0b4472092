"""Sparse COO tensors (layout tt.sparse_coo): construction, coalescing, conversion, arithmetic
and sparse @ dense, as torch's.

A SparseTensor (tritensor/_sparse_tensor.py) stores its coordinates (int64, sparse_dim x nnz)
and its entries (nnz x dense dims) as plain dense tensors with no history. Its autograd identity
is its own: each op here computes its result from the inputs' stored data and records one node
named as torch's (CoalesceBackward0, ToDenseBackward0, AddBackward0 ...) whose backward is
written in tritensor ops on the incoming gradient, which may itself be sparse, so gradients
reach sparse leaves as sparse tensors (with the leaf's own coordinates where torch gives them)
and reach the values a sparse tensor was built from as dense tensors, differentiable again.

Dense ops reach these implementations through dispatch (ops/_sparse.py): ``s + t``, ``tt.mm``,
``-s``, ``s * 2``, ``tt.sum(s)`` ... find them in ``SPARSE_OPS`` by their table entry's name.

Sparse @ dense is one table entry (SPARSE_MM, grad_name SparseAddmmBackward0): a Triton kernel
over row-sorted nonzeros (kernels/sparse.py), its NumPy reference (backends/numpy_sparse.py),
its backward the sampled product G D^T at the nonzeros (for the values) and S^T G (for D,
another SPARSE_MM over the nonzeros sorted by column).
"""
from __future__ import annotations

import numpy as np

from .. import _dual
from .. import dtypes as _dt
from .._sparse_tensor import SparseTensor
from ..autograd import forward_ad as _forward_ad
from ..autograd.grad_mode import _state as _grad_state, no_grad
from ..autograd.graph import Node, gradient_edge, node_class, rename_node
from ..backends import numpy_sparse
from ..backends.triton import sparse as _tsparse
from ..layouts import sparse_coo, sparse_csr, strided
from ..runtime.device import as_device
from ..tensor import Size, Tensor
from . import copy as _copy
from . import creation as _creation
from . import elementwise as _ew
from . import indexing as _indexing
from . import joining as _joining
from . import reduce as _reduce
from . import scan as _scan
from . import sorting as _sorting
from . import views as _views
from ._sparse import CSR_FORMS, SPARSE_OPS
from .dispatch import dispatch
from .table import TABLE, Meta, op


# =========================================================================== autograd nodes
class SparseNode(Node):
    """A node whose backward is a function of the incoming gradient (tritensor ops), returning
    one gradient per input edge."""

    def apply(self, grads):
        g = grads[0] if grads else None
        if g is None:
            return (None,) * len(self.next_functions)
        return tuple(self._backward(g))


def _record(out, name, backward, inputs):
    """Give ``out`` a node called ``name`` over ``inputs`` (their edges, in order) when grad mode
    is on and one of them requires grad."""
    if not _grad_state.enabled or not any(isinstance(t, Tensor) and t.requires_grad for t in inputs):
        return out
    node = node_class(name, SparseNode)()
    node._backward = backward
    node.next_functions = tuple(gradient_edge(t) if isinstance(t, Tensor) and t.requires_grad else (None, 0)
                                for t in inputs)
    out._grad_fn = node
    out._output_nr = 0
    return out


def _sparse(indices, values, size, coalesced, name="SparseCooTensorWithDimsAndTensorsBackward0"):
    """A SparseTensor over ``indices`` and ``values``; when ``values`` carries a gradient, the
    result gets the node that sends a gradient back to it (torch's constructor node, or ``name``)."""
    values_d = values.detach() if values.requires_grad else values
    out = SparseTensor._from_parts(indices, values_d, size, coalesced or indices.shape[1] <= 1)
    if values.requires_grad and _grad_state.enabled:
        _record(out, name, lambda g: (_grad_at(g, out),), [values])
    return out


def _values_of(s):
    """``s``'s values as a dense tensor that carries a gradient back to ``s`` (ValuesBackward0:
    a sparse gradient over s's own coordinates)."""
    v = s._values_t
    if not (_grad_state.enabled and s.requires_grad):
        return v
    return _record(v.detach(), "ValuesBackward0", lambda g: (_sparse(s._indices_t, g, s._shape, s._coalesced),), [s])


def _grad_at(g, s):
    """The gradient of ``s``'s values given the gradient ``g`` of ``s`` (a sparse gradient means
    the dense tensor it sums to): g read at each of s's coordinates; g's own entries when g is
    sparse over the very coordinates of a coalesced s (the gradients sparse ops give)."""
    if isinstance(g, SparseTensor):
        if g._indices_t is s._indices_t and s._coalesced and g._coalesced:
            return _values_of(g)
        g = to_dense(g)
    return g[tuple(s._indices_t[d] for d in range(s._indices_t.shape[0]))]


def _sparse_grad(g, s):
    """The gradient of sparse ``s`` from ``g`` (dense or sparse), sparse over s's coordinates
    (coalesced first where s is not: duplicates would count a position twice)."""
    pattern = s if s._coalesced else coalesce(s.detach())
    return _sparse(pattern._indices_t, _grad_at(g, pattern), s._shape, True)


def _like_grad(g, s):
    """A gradient for sparse ``s`` from ``g`` as it came (sparse or dense), on s's dtype."""
    if g.dtype is not s.dtype:
        g = g.to(s.dtype)
    return g


# =========================================================================== construction
def _check_layout(t, name, what="sparse coordinate tensor"):
    if not isinstance(t, SparseTensor):
        raise RuntimeError(f"{name} expected {what} layout but got {'SparseCsr' if t._is_sparse_csr else 'Strided'}")


def _as_index_tensor(indices, device):
    if isinstance(indices, Tensor):
        t = indices.detach()
        if t.dtype is not _dt.int64:
            t = t.to(_dt.int64)
    else:
        t = _creation.tensor(indices, dtype=_dt.int64)
    t = t if device is None else _copy.to(t, device=device)
    return t.contiguous()        # (rows of it are read with unit stride: kernels/sparse.py)


def _linear(indices, sizes):
    """Row-major position of each coordinate column in the sparse dims ``sizes`` (int64)."""
    lin = None
    for d, s in enumerate(sizes):
        row = indices[d]
        lin = row if lin is None else lin * int(s) + row
    return lin if lin is not None else _creation.zeros(indices.shape[1], dtype=_dt.int64, device=indices.device)


def _bounds_check(host, size):
    """torch's _validate_sparse_coo_tensor_args on the coordinates ``host`` (a NumPy copy). Always
    on (torch's only with check_invariants): an index past the size would make every later op read
    outside the tensor. (One copy of the coordinates to the host: torch's checks wait for the
    device too.)"""
    if host.shape[1] == 0:
        return
    lo, hi = host.min(1), host.max(1)
    for d in range(host.shape[0]):
        if lo[d] < 0:
            raise RuntimeError(f"found negative index {lo[d]} for dim {d}")
        if hi[d] >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {size[d]} but found index "
                               f"{hi[d]}")


def _strictly_sorted(host, size):
    """Whether the coordinates ``host`` (NumPy) are in strictly increasing row-major order."""
    if host.shape[1] <= 1:
        return True
    lin = np.zeros(host.shape[1], np.int64)
    for d in range(host.shape[0]):
        lin = lin * int(size[d]) + host[d]
    return bool((lin[1:] > lin[:-1]).all())


def values_tensor(values, dtype, device):
    """A sparse constructor's ``values`` as a tensor of ``dtype`` on ``device`` (None: as given)."""
    device = None if device is None else as_device(device)
    if isinstance(values, Tensor):
        if dtype is not None and values.dtype is not _dt.as_dtype(dtype):
            values = values.to(_dt.as_dtype(dtype))
        if device is not None and values.device != device:
            values = values.to(device)
        return values
    return _creation.tensor(values, dtype=dtype, device=device)


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False, requires_grad=False,
                      check_invariants=None, is_coalesced=None):
    """torch.sparse_coo_tensor: a sparse tensor with entries ``values`` at coordinates ``indices``
    (sparse_dim x nnz; converted to int64), of ``size`` (inferred: one past the largest index of
    each sparse dim, then values' dense dims). The coordinates are always checked against the size
    (torch checks them when invariant checks are on; a bad one here would read outside memory), and
    ``is_coalesced=True`` against the coordinates. A gradient of the result reaches ``values``."""
    values = values_tensor(values, dtype, device)
    if values.dim() == 0:
        values = values.reshape(1)
    indices = _as_index_tensor(indices, values.device)
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: [{', '.join(map(str, indices.shape))}]")
    sparse_dim, nnz = indices.shape
    if values.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {nnz}, nnz from values: "
                           f"{values.shape[0]}")
    dense_shape = tuple(values.shape[1:])
    host = indices.cpu().numpy()
    if size is None:
        hi = host.max(1).tolist() if nnz else [-1] * sparse_dim
        if nnz and host.min() < 0:
            d = int(np.nonzero(host.min(1) < 0)[0][0])
            raise RuntimeError(f"found negative index {host[d].min()} for dim {d}")
        size = tuple(h + 1 for h in hi) + dense_shape
    else:
        size = tuple(int(s) for s in size)
        if any(s < 0 for s in size):
            raise RuntimeError("numel: integer multiplication overflow")
        if len(size) != sparse_dim + len(dense_shape):
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                               f"sparse_dim = {sparse_dim}, dense_dim = {len(dense_shape)}")
        if tuple(size[sparse_dim:]) != dense_shape:
            raise RuntimeError(f"values has incorrect size, expected [{', '.join(map(str, (nnz,) + size[sparse_dim:]))}], "
                               f"got [{', '.join(map(str, values.shape))}]")
        _bounds_check(host, size)
    if is_coalesced and not _strictly_sorted(host, size):
        raise RuntimeError("cannot set is_coalesced to true if indices correspond to uncoalesced COO tensor")
    out = _sparse(indices, values, size, bool(is_coalesced))
    if requires_grad:
        out.requires_grad_(True)
    return out


# =========================================================================== structure
def coalesce(s):
    """torch's Tensor.coalesce: the entries sorted by position, duplicates summed (the tensor
    itself when it is coalesced already). The sum is a deterministic segment sum (a stable sort,
    then scatter_add in sorted order)."""
    _check_layout(s, "coalesce")
    if s._coalesced:
        return s
    idx, vals = s._indices_t, s._values_t
    sparse_sizes = s._shape[:idx.shape[0]]
    with no_grad():
        lin = _linear(idx, sparse_sizes)
        perm = _sorting.argsort(lin, stable=True)
        lin_sorted = lin.index_select(0, perm)
        first = _ew.ne(lin_sorted[1:], lin_sorted[:-1])
        starts = _joining.cat([_creation.ones(min(1, lin.shape[0]), dtype=_dt.bool_, device=lin.device), first])
        seg = _scan.cumsum(starts.to(_dt.int64), 0) - 1
        keep = _indexing.nonzero(starts).reshape(-1)
        n = keep.shape[0]
        out_idx = idx.index_select(1, perm.index_select(0, keep))
        v_sorted = vals.index_select(0, perm)
        target = seg.view((-1,) + (1,) * (vals.dim() - 1)).expand(v_sorted.shape) if vals.dim() > 1 else seg
        out_vals = _creation.zeros((n,) + tuple(vals.shape[1:]), dtype=vals.dtype, device=vals.device)
        out_vals = out_vals.scatter_add(0, target, v_sorted) if n else out_vals
    out = SparseTensor._from_parts(out_idx, out_vals, s._shape, True)
    return _record(out, "CoalesceBackward0", lambda g: (g,), [s])


def to_dense(x, dtype=None, *, masked_grad=None):
    """torch's Tensor.to_dense: the dense tensor a sparse one stands for (duplicates summed);
    a dense tensor itself. Its gradient to a sparse input is sparse over the input's coordinates."""
    if not isinstance(x, SparseTensor):
        return x if dtype is None else x.to(dtype)
    idx, vals = x._indices_t, x._values_t
    sparse_dim = idx.shape[0]
    sparse_sizes = tuple(x._shape[:sparse_dim])
    n_pos = 1
    for s in sparse_sizes:
        n_pos *= s
    with no_grad():
        flat = _creation.zeros((n_pos,) + tuple(vals.shape[1:]), dtype=vals.dtype, device=vals.device)
        if idx.shape[1]:
            flat = flat.index_put((_linear(idx, sparse_sizes),), vals, accumulate=True)
        out = flat.reshape(tuple(x._shape))
    out = _record(out, "ToDenseBackward0", lambda g: (_sparse_grad(g, x),), [x])
    return out if dtype is None else out.to(dtype)


def to_sparse(x, *args, layout=None, blocksize=None, dense_dim=None):
    """torch's Tensor.to_sparse(sparse_dim) / to_sparse(layout=tt.sparse_coo): the nonzero
    entries (NaN counts as nonzero) of a dense tensor over its first ``sparse_dim`` dims
    (default: all), coalesced; a sparse tensor itself."""
    sparse_dim = args[0] if args else None
    if layout is sparse_csr:            # (torch's to_sparse(*, layout, blocksize, dense_dim) overload)
        if sparse_dim is not None:
            raise TypeError("to_sparse() takes 0 positional arguments but 1 was given")
        if blocksize is not None:
            where, source = ("sparse_coo", "Sparse") if isinstance(x, SparseTensor) else ("dense", "Strided")
            raise RuntimeError(f"{where}_to_sparse: conversion from {source} to SparseCsr with blocksize argument "
                               "given is not supported")
        return CSR_FORMS["to_sparse_csr"](x, dense_dim=dense_dim)
    if layout is not None and layout is not sparse_coo:
        raise NotImplementedError(f"tritensor: to_sparse(layout={layout}) (the sparse COO and CSR layouts exist "
                                  "here)")
    if blocksize is not None or dense_dim is not None:
        raise NotImplementedError("tritensor: to_sparse's blocksize/dense_dim belong to the compressed layouts")
    if isinstance(x, SparseTensor):
        if sparse_dim is not None and sparse_dim != x.sparse_dim():
            raise RuntimeError("to_sparse: conversion from Sparse to Sparse with sparse_dim argument !=self.sparse_dim() "
                               "is not supported")
        return x
    if _dual.ACTIVE[0] and _forward_ad.tangent_of(x) is not None:     # as torch 2.13: no rule
        raise NotImplementedError(_forward_ad.NOT_IMPLEMENTED.format("_to_sparse"))
    nd = x.dim()
    sd = nd if sparse_dim is None else int(sparse_dim)
    if not 0 <= sd <= nd:
        raise RuntimeError(f"dense_to_sparse: sparse_dim argument must be in [0,{nd}] range, but {sd} is given")
    with no_grad():
        nonzero = _ew.ne(x.detach(), 0)
        if sd < nd:
            nonzero = nonzero.any(tuple(range(sd, nd))) if nd else nonzero
        if sd == 0:
            idx = _creation.zeros((0, 1 if bool(nonzero.item()) else 0), dtype=_dt.int64, device=x.device)
            vals = x.detach().reshape((1,) + tuple(x.shape)) if idx.shape[1] else \
                _creation.zeros((0,) + tuple(x.shape), dtype=x.dtype, device=x.device)
        else:
            idx = _indexing.nonzero(nonzero).t().contiguous()
            vals = x.detach()[tuple(idx[d] for d in range(sd))]
    out = SparseTensor._from_parts(idx, vals, x.shape, True)
    name = "ToSparseBackward0" if sparse_dim is not None else "ToSparseBackward1"
    return _record(out, name, lambda g: (to_dense(g) if isinstance(g, SparseTensor) else g,), [x])


def values(x):
    """torch's Tensor.values(): the entries of a coalesced sparse tensor (ValuesBackward0)."""
    _check_layout(x, "values", "sparse tensor")
    if not x._coalesced:
        raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
    return _values_of(x)


def indices(x):
    _check_layout(x, "indices")
    if not x._coalesced:
        raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
    return x._indices_t


def is_coalesced(x):
    _check_layout(x, "is_coalesced")
    return x._coalesced


def sparse_dim(x):
    return x._indices_t.shape[0] if isinstance(x, SparseTensor) else 0


def dense_dim(x):
    return x._values_t.dim() - 1 if isinstance(x, SparseTensor) else x.dim()


def _transpose(s, dim0=0, dim1=1, name="TransposeBackward0"):
    n = s.dim()
    d0, d1 = dim0 % max(n, 1), dim1 % max(n, 1)
    sd = s.sparse_dim()
    if (d0 < sd) != (d1 < sd):
        raise RuntimeError("transpose(): can't transpose a sparse dim with a dense dim")
    size = list(s._shape)
    size[d0], size[d1] = size[d1], size[d0]
    if d0 < sd:
        order = list(range(sd))
        order[d0], order[d1] = order[d1], order[d0]
        idx = s._indices_t.index_select(0, _creation.tensor(order, device=s.device))
        vals = s._values_t
    else:
        idx = s._indices_t
        vals = s._values_t.transpose(d0 - sd + 1, d1 - sd + 1)
    out = SparseTensor._from_parts(idx, vals, size, s._coalesced and d0 == d1)
    return _record(out, name, lambda g: (_transpose_grad(g, d0, d1),), [s])


def _transpose_grad(g, d0, d1):
    return _transpose(g, d0, d1) if isinstance(g, SparseTensor) else g.transpose(d0, d1)


# =========================================================================== arithmetic
def _values_map(s, fn, name, backward):
    """A sparse tensor with ``fn`` applied to each entry (fn(0) == 0: the zeros stay zeros)."""
    with no_grad():
        vals = fn(s._values_t)
    out = SparseTensor._from_parts(s._indices_t, vals, s._shape, s._coalesced)
    return _record(out, name, lambda g: (backward(g),), [s])


def _scale(g, c):
    if isinstance(g, SparseTensor):
        return _values_map(g, lambda v: v * c, "MulBackward0", lambda gg: _scale(gg, c)) \
            if not g.requires_grad else _sparse(g._indices_t, _values_of(g) * c, g._shape, g._coalesced, "MulBackward0")
    return g * c


def _neg(x):
    if not isinstance(x, SparseTensor):
        raise NotImplementedError(f"tritensor: neg of a {type(x).__name__}")
    return _values_map(x, lambda v: -v, "NegBackward0", lambda g: -g)


def _check_same_size(a, b, name="add"):
    if tuple(a.shape) != tuple(b.shape):
        raise RuntimeError(f"{name}: expected 'self' and 'other' to have same size, but self has size "
                           f"[{', '.join(map(str, a.shape))}] while other has size [{', '.join(map(str, b.shape))}] "
                           "(FYI: dense-sparse addition does not currently support broadcasting)")


def _merge_order(lin_t, lin_s):
    """torch's CPU sparse add: a merge walk of t's and s's entries as if each were sorted (equal
    positions meet in one entry). Returns (positions of t's entries, of s's entries, count)."""
    pt, ps = np.empty(len(lin_t), np.int64), np.empty(len(lin_s), np.int64)
    i = j = r = 0
    nt, ns = len(lin_t), len(lin_s)
    while i < nt or j < ns:
        if i >= nt:
            cmp = -1
        elif j >= ns:
            cmp = 1
        else:
            cmp = 1 if lin_t[i] < lin_s[j] else (-1 if lin_t[i] > lin_s[j] else 0)
        if cmp >= 0:
            pt[i] = r
            i += 1
        if cmp <= 0:
            ps[j] = r
            j += 1
        r += 1
    return pt, ps, r


def _sparse_add(a, b, alpha=1, name="AddBackward0"):
    """sparse + alpha * sparse, as torch: both coalesced, the sorted union with equal positions
    summed (coalesced); otherwise torch's merge walk of the two entry lists (not coalesced)."""
    if tuple(a.shape) != tuple(b.shape):
        raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, but [{', '.join(map(str, a.shape))}] "
                           f"!= [{', '.join(map(str, b.shape))}]")
    if a.sparse_dim() != b.sparse_dim():
        raise RuntimeError(f"add: expected 'self' and 'other' to have same density, but 'self' has {a.sparse_dim()} "
                           f"sparse dimensions while 'other' has {b.sparse_dim()} sparse dimensions")
    dtype = _dt.promote_types(a.dtype, b.dtype)
    sizes = a._shape[:a.sparse_dim()]
    with no_grad():
        va, vb = a._values_t.to(dtype), b._values_t.to(dtype)
        if alpha != 1:
            vb = vb * alpha
        if a._coalesced and b._coalesced:
            both = SparseTensor._from_parts(_joining.cat([a._indices_t, b._indices_t], 1), _joining.cat([va, vb]),
                                            a._shape, False)
            merged = coalesce(both.detach())
            idx, vals, coalesced = merged._indices_t, merged._values_t, True
        else:
            lt = _linear(a._indices_t, sizes).cpu().numpy()
            ls = _linear(b._indices_t, sizes).cpu().numpy()
            pt, ps, n = _merge_order(lt, ls)
            pos_t, pos_s = (_creation.tensor(p, dtype=_dt.int64, device=a.device) for p in (pt, ps))
            idx_t = _creation.zeros((n, a.sparse_dim()), dtype=_dt.int64, device=a.device)
            vals = _creation.zeros((n,) + tuple(va.shape[1:]), dtype=dtype, device=a.device)
            for pos, src_idx, src_vals in ((pos_t, a._indices_t, va), (pos_s, b._indices_t, vb)):
                if pos.shape[0]:
                    idx_t = idx_t.index_put((pos,), src_idx.t())
                    vals = vals.index_put((pos,), src_vals, accumulate=True)
            idx = idx_t.t().contiguous()
            coalesced = False
    out = SparseTensor._from_parts(idx, vals, a._shape, coalesced)
    return _record(out, name, lambda g: (_like_grad(g, a), _like_grad(_scale(g, alpha) if alpha != 1 else g, b)),
                   [a, b])


def _add(x, y, **attrs):
    """The ADD table entry's sparse forms: sparse + sparse, dense + sparse (dense result)."""
    if isinstance(x, SparseTensor) and isinstance(y, SparseTensor):
        return _sparse_add(x, y)
    if isinstance(y, SparseTensor) and isinstance(x, Tensor):
        _check_same_size(x, y)
        return x + to_dense(y)
    raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")


def _sub(x, y, **attrs):
    if isinstance(x, SparseTensor) and isinstance(y, SparseTensor):
        return _sparse_add(x, y, -1, "SubBackward0")
    if isinstance(y, SparseTensor) and isinstance(x, Tensor):
        _check_same_size(x, y, "sub")
        return x - to_dense(y)
    raise RuntimeError("sub(sparse, dense) is not supported. Use sub(dense, sparse) instead.")


def _mul(x, y, **attrs):
    """sparse * number (either side) and sparse * sparse (the product where both have entries)."""
    if isinstance(x, SparseTensor) and not isinstance(y, Tensor):
        return _values_map(x, lambda v: v * y, "MulBackward0", lambda g: _scale(g, y))
    if isinstance(y, SparseTensor) and not isinstance(x, Tensor):
        return _mul(y, x)
    if isinstance(x, SparseTensor) and isinstance(y, SparseTensor):
        return _sparse_mul(x, y)
    if isinstance(y, SparseTensor) and y.dim() == 0 or isinstance(x, SparseTensor) and x.dim() == 0:
        raise NotImplementedError("tritensor: a 0-d sparse operand of mul")
    sp, dense = (x, y) if isinstance(x, SparseTensor) else (y, x)
    if tuple(dense.shape) != tuple(sp.shape):
        raise NotImplementedError("tritensor: sparse * dense broadcasts no dense operand: it must have the sparse "
                                  f"tensor's size {list(sp.shape)}, got {list(dense.shape)}")
    return _sparse_times_dense(sp, dense)


def _sparse_times_dense(sp, dense):
    """sparse * dense of one size, as torch's: sparse over sp's coordinates (coalesced first),
    each entry times the dense value there (MulBackward0)."""
    c = coalesce(sp.detach())
    dtype = _dt.promote_types(sp.dtype, dense.dtype)
    with no_grad():
        vals = c._values_t.to(dtype) * _grad_at(dense.detach(), c).to(dtype)
    out = SparseTensor._from_parts(c._indices_t, vals, c._shape, True)
    return _record(out, "MulBackward0", lambda g: (_mask_times(g, out, dense), _mask_times(g, out, sp)), [sp, dense])


def _sparse_mul(x, y):
    _check_same_size(x, y, "mul")
    a, b = coalesce(x.detach()), coalesce(y.detach())
    sizes = a._shape[:a.sparse_dim()]
    with no_grad():
        la, lb = _linear(a._indices_t, sizes), _linear(b._indices_t, sizes)
        pos = _sorting.searchsorted(lb, la)
        hit = _ew.lt(pos, lb.shape[0])
        if lb.shape[0]:
            hit = hit & _ew.eq(lb.index_select(0, pos.clamp(max=lb.shape[0] - 1)), la)
        ia = _indexing.nonzero(hit).reshape(-1)
        ib = pos.index_select(0, ia)
        idx = a._indices_t.index_select(1, ia)
        vals = a._values_t.index_select(0, ia) * b._values_t.index_select(0, ib)
    out = SparseTensor._from_parts(idx, vals, a._shape, True)
    # d(x*y)/dx = y (masked to the product's entries): gradients sparse over the product's coordinates
    return _record(out, "MulBackward0", lambda g: (_mask_times(g, out, y), _mask_times(g, out, x)), [x, y])


def _mask_times(g, pattern, other):
    """g * other at ``pattern``'s coordinates, as a sparse gradient (torch's sparse gradient even
    for a dense input of sparse * dense: the product is zero off the pattern)."""
    gv = _grad_at(g, pattern)
    ov = _grad_at(other if not isinstance(other, SparseTensor) else to_dense(other), pattern)
    return _sparse(pattern._indices_t, gv * ov, pattern._shape, True)


def _div(x, y, rounding_mode=None, **attrs):
    if isinstance(x, SparseTensor) and not isinstance(y, Tensor) and rounding_mode is None:
        return _values_map(x, lambda v: v / y, "DivBackward0", lambda g: _scale(g, 1.0 / y))
    raise NotImplementedError("tritensor: a sparse tensor divides only by a number")


def _sum(x, dims=None, keepdim=False, dtype=None, dim_given=False, **attrs):
    """tt.sum / Tensor.sum of a sparse tensor, as torch's: the whole sum is dense and 0-d
    (SumBackward0); over dims, what torch.sparse.sum gives (SumBackward1)."""
    if not dim_given:
        return sparse_sum(x) if dtype is None else sparse_sum(x.to(dtype))
    if keepdim and any(d >= x.sparse_dim() for d in dims) and any(d not in dims for d in range(x.sparse_dim())):
        # (torch turns a kept dense dim into a sparse one: a layout change not taken up here)
        raise NotImplementedError("tritensor: sum(dim, keepdim=True) of a sparse tensor over a dense dim")
    out = _sparse_sum_dims(x if dtype is None else x.to(dtype), sorted(dims), "SumBackward1")
    return _keep_dims(out, sorted(dims), x.sparse_dim()) if keepdim else out


def _keep_dims(out, dims, sd):
    """sum(keepdim=True) of a sparse tensor, as torch's: the summed dims back with size 1 (a zero
    coordinate row for each sparse one, a unit dim of the values for each dense one)."""
    if not isinstance(out, SparseTensor):         # no sparse dim left: a dense result
        with no_grad():
            kept = out.detach()
            for d in dims:
                kept = kept.unsqueeze(d)
        return _record(kept, "SumBackward1", lambda g: (_drop_dims(g, dims, sd),), [out])
    with no_grad():
        idx, vals = out._indices_t, out._values_t
        zero = _creation.zeros((1, idx.shape[1]), dtype=_dt.int64, device=idx.device)
        for d in dims:                            # (sparse dims only: sum() refuses the rest)
            idx = _joining.cat([idx[:d], zero, idx[d:]])
        size = list(out._shape)
        for d in dims:
            size.insert(d, 1)
        kept = SparseTensor._from_parts(idx.contiguous(), vals, size, out._coalesced)
    return _record(kept, "SumBackward1", lambda g: (_drop_dims(g, dims, sd),), [out])


def _drop_dims(g, dims, sd):
    """The gradient through _keep_dims: g with the kept unit dims taken out again."""
    if not isinstance(g, SparseTensor):
        for d in reversed(dims):
            g = g.squeeze(d)
        return g
    keep = [d for d in range(sd) if d not in dims]
    idx = g._indices_t.index_select(0, _creation.tensor(keep, dtype=_dt.int64, device=g.device))
    size = [n for i, n in enumerate(g._shape) if i not in dims]
    return _sparse(idx, _values_of(g), size, g._coalesced)


def sparse_sum(input, dim=None, dtype=None):
    """torch.sparse.sum: the sum of all entries (dense, 0-d: SumBackward0), or over ``dim``:
    sparse dims summed away leave a sparse tensor over the rest (SparseSumBackward0), dense
    dims only a dense one when no sparse dim is left."""
    _check_layout(input, "coalesce")
    s = input if dtype is None else input.to(dtype)
    if dim is None:
        with no_grad():
            total = s._values_t.sum()
        return _record(total, "SumBackward0", lambda g: (_sparse_grad(g.expand(tuple(s._shape)), s),), [s])
    n = s.dim()
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    for d in dims:
        if not -max(n, 1) <= d < max(n, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(n, 1)}, {max(n, 1) - 1}], "
                             f"but got {d})")
    return _sparse_sum_dims(s, sorted({d % max(n, 1) for d in dims}), "SparseSumBackward0")


def _sparse_sum_dims(s, dims, name):
    """The sum of sparse ``s`` over the (wrapped) ``dims``: sparse over the sparse dims left, dense
    when none is left; its node is ``name``."""
    sd = s.sparse_dim()
    keep_sparse = [d for d in range(sd) if d not in dims]
    dense_summed = [d - sd + 1 for d in dims if d >= sd]
    with no_grad():
        vals = s._values_t.sum(tuple(dense_summed)) if dense_summed else s._values_t
        if not keep_sparse:
            out = vals.sum(0)
        else:
            idx = s._indices_t.index_select(0, _creation.tensor(keep_sparse, device=s.device))
            size = [s._shape[d] for d in keep_sparse] + [s._shape[d] for d in range(sd, s.dim()) if d not in dims]
            out = coalesce(SparseTensor._from_parts(idx, vals, size, False))
            out = SparseTensor._from_parts(out._indices_t, out._values_t, size, True)
    return _record(out, name, lambda g: (_sum_grad(g, s, dims),), [s])


def _sum_grad(g, s, dims):
    """The gradient of a sum over ``dims`` of sparse ``s``: g broadcast back, at s's entries."""
    dense_g = to_dense(g) if isinstance(g, SparseTensor) else g
    for d in dims:
        dense_g = dense_g.unsqueeze(d)
    return _sparse_grad(dense_g.expand(tuple(s._shape)), s)


def _clone(x, **attrs):
    with no_grad():
        out = SparseTensor._from_parts(x._indices_t.clone(), x._values_t.clone(), x._shape, x._coalesced)
    return _record(out, "CloneBackward0", lambda g: (g,), [x])


def to_device_dtype(x, device=None, dtype=None, non_blocking=False, copy=False):
    """Tensor.to of a sparse tensor: its coordinates and entries moved and cast (ToCopyBackward0)."""
    src_device, src_dtype = x.device, x.dtype
    if (device is None or device == src_device) and (dtype is None or dtype is src_dtype) and not copy:
        return x
    with no_grad():
        idx = x._indices_t if device is None else _copy.to(x._indices_t, device=device, non_blocking=non_blocking)
        vals = _copy.to(x._values_t, device=device, dtype=dtype, non_blocking=non_blocking, copy=copy)
    out = SparseTensor._from_parts(idx, vals, x._shape, x._coalesced)

    def backward(g):
        if isinstance(g, SparseTensor):
            return (to_device_dtype(g, src_device, src_dtype),)
        return (g.to(device=src_device, dtype=src_dtype),)
    return _record(out, "ToCopyBackward0", backward, [x])


# =========================================================================== sparse @ dense
def _sparse_mm_rule(values, dense, *, rows, cols, crow, nrows):
    dtype = _dt.promote_types(values.dtype, dense.dtype)
    return Meta((nrows, dense.shape[1]), dtype, _dt.compute_dtype(dtype))


def _sparse_mm_launch(out, values, dense, *, compute, rows, cols, crow, nrows):
    acc = "float64" if out.dtype is _dt.float64 else ("float32" if out.dtype.is_floating_point else "int64")
    _tsparse.spmm(out, crow, cols, values, dense, acc)


def _sparse_mm_backward(ctx, g):
    need_values, need_dense = ctx.needs_input_grad
    rows, cols = ctx.rows, ctx.cols
    grad_values = grad_dense = None
    if need_values:       # (G D^T) at the nonzeros: the sampled product
        grad_values = (g.index_select(0, rows) * ctx.dense.index_select(0, cols)).sum(1)
    if need_dense:        # S^T G: the nonzeros sorted by column, one more SpMM
        grad_dense = _spmm_sorted(ctx.values, g, cols, rows, ctx.dense.shape[0])
    return grad_values, grad_dense


SPARSE_MM = op("sparse_mm", ("values", "dense"), rule=_sparse_mm_rule, reference=numpy_sparse.sparse_mm,
               kernel=_sparse_mm_launch, backward=_sparse_mm_backward, saves=("values", "dense"),
               grad_name="SparseAddmmBackward0")


def _row_pointers(rows, nrows):
    """CSR row pointers of row-sorted coordinates: crow[r] = number of entries in rows < r (one
    binary search per row boundary)."""
    return _sorting.searchsorted(rows, _creation.arange(nrows + 1, dtype=_dt.int64, device=rows.device))


def _spmm_sorted(values, dense, rows, cols, nrows, presorted=False):
    """S @ dense for S with entries ``values`` at (rows, cols), any order: sorted by row first
    (stable; not when ``presorted``), then the kernel. Differentiable in values and dense."""
    with no_grad():
        if not presorted:
            perm = _sorting.argsort(rows, stable=True)
            rows, cols = rows.index_select(0, perm), cols.index_select(0, perm)
        crow = _row_pointers(rows, nrows)
    if not presorted:
        values = values.index_select(0, perm)
    return dispatch(SPARSE_MM, values, dense, rows=rows, cols=cols, crow=crow, nrows=nrows)


def sparse_mm(sparse, dense, reduce=None):
    """torch.sparse.mm(sparse, dense) = sparse @ dense: a dense [M, N] result, gradients to the
    sparse input (sparse, over its own coordinates) and to the dense one. ``reduce`` ("sum",
    "mean", "amax", "amin": how each row's products combine) takes a CSR input, as torch's."""
    if reduce is not None:
        if not sparse._is_sparse_csr:
            backend = sparse._storage._backend_name if isinstance(sparse, SparseTensor) else \
                sparse.device.type.upper()
            raise NotImplementedError(f"Could not run 'aten::_sparse_mm_reduce_impl' with arguments from the "
                                      f"'{backend}' backend. This could be because the operator doesn't exist for "
                                      "this backend.")
        return CSR_FORMS["sparse.mm.reduce"](sparse, dense, reduce)
    if sparse._is_sparse_csr:
        return CSR_FORMS["sparse.mm"](sparse, dense)
    if not isinstance(sparse, SparseTensor):
        return sparse.mm(dense)          # (torch's too: two dense matrices, or dense @ sparse)
    if isinstance(dense, SparseTensor):
        raise NotImplementedError("tritensor: sparse @ sparse (tt.sparse.mm of two sparse tensors) is not supported; "
                                  "use to_dense() on one of them")
    if sparse.sparse_dim() != 2:
        raise RuntimeError(f"addmm: matrices expected, got {sparse.sparse_dim()}D tensor")
    if sparse.dense_dim() != 0:
        raise RuntimeError(f"addmm: scalar values expected, got {sparse.dense_dim()}D values")
    if dense.dim() == 1:      # (torch reads the dense operand's size(1) first)
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    if dense.dim() != 2:
        raise RuntimeError(f"addmm: matrices expected, got {dense.dim()}D tensor")
    M, K = sparse.shape
    if dense.shape[0] != K:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {K}, got {dense.shape[0]}")
    if sparse.dtype is _dt.bool_:
        raise NotImplementedError('"addmm_sparse_dense" not implemented for \'Bool\'')
    if dense.device != sparse.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{sparse.device} and {dense.device}!")
    if dense.dtype is not sparse.dtype:
        raise RuntimeError(f"expected scalar type {_dt.type_name(sparse.dtype)} but found {_dt.type_name(dense.dtype)}")
    c = coalesce(sparse)        # sorted by row, one entry per position (its gradient: dense-exact)
    return _spmm_sorted(_values_of(c), dense, c._indices_t[0], c._indices_t[1], M, presorted=True)


def _mm(x, y, **attrs):
    """tt.mm / ``@`` with a sparse operand, as torch's: one MmBackward0 node whose gradient to the
    sparse operand is DENSE (G D^T or X^T G: torch.sparse.mm masks it to the pattern, mm does not)."""
    if isinstance(x, SparseTensor):
        with no_grad():
            out = sparse_mm(x, y)

        def backward(g):
            gx = g.mm(y.t()) if x.requires_grad else None                        # G D^T (dense)
            gy = sparse_mm(_transpose(x, 0, 1), g) if _requires_grad(y) else None  # S^T G
            return gx, gy
        return _record(out, "MmBackward0", backward, [x, y])
    if x.dim() != 2:
        raise RuntimeError("self must be a matrix")
    # dense @ sparse = (sparse^T @ dense^T)^T: the same kernel over the transposed coordinates
    with no_grad():
        out = sparse_mm(_transpose(y, 0, 1), x.t()).t().contiguous()

    def backward(g):
        gx = sparse_mm(y, g.t()).t() if _requires_grad(x) else None       # G S^T
        gy = x.t().mm(g) if y.requires_grad else None                      # X^T G (dense)
        return gx, gy
    return _record(out, "MmBackward0", backward, [x, y])


def _requires_grad(t):
    return isinstance(t, Tensor) and t.requires_grad


# =========================================================================== zero-preserving unary ops
# torch's unary ops with a sparse COO kernel (f(0) == 0, or a bool test false at 0): table entry ->
# torch's node name (None: no derivative)
_UNARY = {
    "abs": "AbsBackward0", "sqrt": "SqrtBackward0", "sin": "SinBackward0", "sinh": "SinhBackward0",
    "tan": "TanBackward0", "tanh": "TanhBackward0", "asin": "AsinBackward0", "asinh": "AsinhBackward0",
    "atan": "AtanBackward0", "atanh": "AtanhBackward0", "ceil": "CeilBackward0", "floor": "FloorBackward0",
    "round": "RoundBackward0", "trunc": "TruncBackward0", "sign": "SignBackward0", "sgn": "SgnBackward0",
    "expm1": "Expm1Backward0", "log1p": "Log1PBackward0", "erf": "ErfBackward0", "erfinv": "ErfinvBackward0",
    "deg2rad": "Deg2RadBackward0", "rad2deg": "Rad2DegBackward0", "frac": "FracBackward0", "relu": "ReluBackward0",
    "nan_to_num": "NanToNumBackward0",
    "signbit": None, "isnan": None, "isinf": None, "isposinf": None, "isneginf": None,
}


def _unary(name, node):
    """The sparse form of table entry ``name``: coalesced first (as torch's: each position read
    once), the entry applied to the values. The values' own node (SinBackward0 ...) carries the
    derivative, so gradients (sparse, over the coalesced pattern) and double backward follow."""
    def impl(x, **attrs):
        c = coalesce(x)
        vals = dispatch(TABLE[name], _values_of(c), **attrs)
        if node is None:                     # (a bool test: no derivative, as torch)
            return SparseTensor._from_parts(c._indices_t, vals.detach(), c._shape, True)
        return _sparse(c._indices_t, vals, c._shape, True, node)
    return impl


for _name, _node in _UNARY.items():
    SPARSE_OPS[_name] = _unary(_name, _node)


# =========================================================================== registration
SPARSE_OPS.update({
    "add": _add, "sub": _sub, "mul": _mul, "div": _div, "neg": lambda x, **a: _neg(x),
    "mm": _mm, "sum": _sum, "clone": _clone,
    "t": lambda x, **a: _transpose(x, 0, 1, "TBackward0") if x.dim() == 2 else x,
    "transpose": lambda x, dim0=0, dim1=1, **a: _transpose(x, dim0, dim1),
})


# =========================================================================== declarations
from .surface import declare  # noqa: E402  (the declarations sit under the entries, as in every op module)

declare("sparse_coo_tensor", sparse_coo_tensor, method=False)
for _name, _fn in (("to_sparse", to_sparse), ("to_dense", to_dense), ("coalesce", coalesce),
                   ("is_coalesced", is_coalesced), ("indices", indices), ("values", values),
                   ("sparse_dim", sparse_dim), ("dense_dim", dense_dim)):
    declare(_name, method=_fn)
for _name, _fn in (("mm", sparse_mm), ("sum", sparse_sum)):
    declare(f"sparse.{_name}", _fn, method=False)
