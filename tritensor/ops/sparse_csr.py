"""Sparse CSR tensors (layout tt.sparse_csr): construction with torch's invariant checks,
conversions (strided <-> CSR <-> COO), CSR @ dense and torch.sparse.sampled_addmm, as torch's.

A SparseCsrTensor (tritensor/_sparse_tensor.py) stores its row pointers, column indices (int32 or
int64, as given) and entries as plain dense tensors with no history. As the COO tensors of
ops/sparse.py, its autograd identity is its own: each op computes its result from the stored data
and records one node named as torch's (SparseCompressedTensorBackward0, ToSparseCsrBackward0,
MmBackward0, SparseSampledAddmmBackward0 ...), whose backward is written in tritensor ops on the
incoming gradient (CSR or dense), so double backward works.

Products run two table entries: ops/sparse.py's SPARSE_MM (row-per-program SpMM over the row
pointers, kernels/sparse.py) and SAMPLED_ADDMM here (one dot product per stored entry). The
kernels read int64 row pointers, columns and the entries' rows, made once per tensor
(``_index64``).

Dense ops reach these implementations through dispatch (ops/_sparse.py): ``tt.mm(csr, d)``,
``csr @ d``, ``tt.addmm(t, csr, d)``, ``-csr``, ``csr * 2``, ``tt.sin(csr)`` ... find them in
``SPARSE_CSR_OPS``; any other op raises torch's "Could not run 'aten::<op>' with arguments from
the 'SparseCsrCPU' backend" NotImplementedError (never a value computed from a missing memory).
Batched and hybrid CSR tensors are not built here (NotImplementedError).
"""
from __future__ import annotations

import numpy as np

from .. import _dual
from .. import dtypes as _dt
from .._sparse_tensor import SparseCsrTensor, SparseTensor
from ..autograd import forward_ad as _forward_ad
from ..autograd.grad_mode import _state as _grad_state, no_grad
from ..backends import numpy_sparse
from ..backends.triton import sparse as _tsparse
from ..layouts import sparse_coo, sparse_csr
from ..tensor import Tensor
from . import copy as _copy
from . import creation as _creation
from . import elementwise as _ew
from . import indexing as _indexing
from . import sorting as _sorting
from . import sparse as _coo
from ._sparse import CSR_FORMS, SPARSE_CSR_OPS
from .dispatch import dispatch
from .table import TABLE, Meta, op

_record = _coo._record
_LAYOUT_NAMES = {"strided": "Strided", "sparse_coo": "Sparse", "sparse_csr": "SparseCsr"}


def _layout_name(t):
    return _LAYOUT_NAMES[t.layout._name] if isinstance(t, Tensor) else type(t).__name__


# =========================================================================== the pieces
def _no_forward_ad(name, *tensors):
    """torch 2.13 has no forward-mode rule for the CSR ops: a tangent reaching one raises its
    "Trying to use forward AD with <name> ..." (never a result silently without its tangent)."""
    if _dual.ACTIVE[0] and any(isinstance(t, Tensor) and _forward_ad.tangent_of(t) is not None for t in tensors):
        raise NotImplementedError(_forward_ad.NOT_IMPLEMENTED.format(name))


def _index64(s):
    """(rows, crow, col) of CSR ``s`` as contiguous int64 tensors (the row of each entry found by a
    binary search in the row pointers), made once and kept on the tensor for the kernels."""
    if s._index64 is None:
        with no_grad():
            crow = s._crow_t.to(_dt.int64).contiguous()
            col = s._col_t.to(_dt.int64).contiguous()
            nnz = col.shape[0]
            entries = _creation.arange(nnz, dtype=_dt.int64, device=crow.device)
            rows = _sorting.searchsorted(crow[1:], entries, right=True) if nnz else entries
        s._index64 = (rows, crow, col)
    return s._index64


def _csr(crow, col, values, size, name="SparseCompressedTensorBackward0", index64=None):
    """A CSR tensor over the given pieces; when ``values`` carries a gradient, the result gets the
    node (torch's constructor node, or ``name``) that sends a gradient back to it."""
    out = SparseCsrTensor._from_parts(crow, col, values.detach() if values.requires_grad else values, size)
    out._index64 = index64
    if values.requires_grad and _grad_state.enabled:
        _record(out, name, lambda g: (_grad_values(g, out),), [values])
    return out


def _like(s, values, name="SparseCompressedTensorBackward0"):
    """A CSR tensor with ``s``'s pattern and these entries."""
    return _csr(s._crow_t, s._col_t, values, s._shape, name, s._index64)


def values_of(s):
    """Tensor.values() of CSR ``s``: its entries, carrying a gradient back to ``s`` (ValuesBackward0:
    a CSR gradient with s's pattern)."""
    v = s._values_t
    if not (_grad_state.enabled and s.requires_grad):
        return v
    return _record(v.detach(), "ValuesBackward0", lambda g: (_like(s, g),), [s])


def _grad_values(g, s):
    """The gradient of ``s``'s entries given the gradient ``g`` of ``s`` (CSR, COO or dense): g read at
    s's positions; g's own entries when g has s's very pattern (the gradients CSR ops give)."""
    if g._is_sparse_csr:
        if g._crow_t is s._crow_t and g._col_t is s._col_t:
            return values_of(g)
        g = to_dense(g)
    elif isinstance(g, SparseTensor):
        g = _coo.to_dense(g)
    rows, _, col = _index64(s)
    return g[rows, col]


# =========================================================================== construction
def _index_tensor(t, device):
    t = t.detach() if isinstance(t, Tensor) else _creation.tensor(t, dtype=_dt.int64)
    return (t if device is None else _copy.to(t, device=device)).contiguous()


def _check_indices(crow, col):
    """torch's _validate_sparse_compressed_tensor_args on the index tensors' dtypes and dims."""
    if crow.dtype is not col.dtype:
        raise RuntimeError(f"crow_indices and col_indices must have the same dtype, bot got "
                           f"{_dt.type_name(crow.dtype)} and {_dt.type_name(col.dtype)}, respectively")
    if crow.dtype not in (_dt.int32, _dt.int64):
        raise RuntimeError(f"crow_indices and col_indices dtype must be Int or Long, but got "
                           f"{_dt.type_name(crow.dtype)}")
    if crow.dim() != col.dim():
        raise RuntimeError(f"crow_indices and col_indices dimensionalities must be equal but got {crow.dim()} and "
                           f"{col.dim()}, respectively")
    if crow.dim() == 0:
        raise RuntimeError("crow_indices must have dimensionality >= 1 but got 0")
    if crow.dim() > 1:
        raise NotImplementedError("tritensor: batched sparse CSR tensors (crow_indices of more than one dim) are not "
                                  "supported; build one CSR matrix per batch element")


def _check_invariants(crow, col, ncols, nnz, check_order):
    """torch's _validate_compressed_sparse_indices on host copies, in torch's order. The bounds are
    always checked (torch checks them with check_invariants=True only: an index out of bounds
    would make a kernel read outside memory); the order within a row when ``check_order``.
    Returns whether each row's columns are sorted and distinct (a canonical tensor)."""
    c, k = crow.cpu().numpy().astype(np.int64), col.cpu().numpy().astype(np.int64)
    if c[0] != 0:
        raise RuntimeError("`crow_indices[..., 0] == 0` is not satisfied.")
    if c[-1] != nnz:
        raise RuntimeError("`crow_indices[..., -1] == nnz` is not satisfied.")
    d = np.diff(c)
    if d.size and (d.min() < 0 or d.max() > ncols):
        raise RuntimeError("`0 <= crow_indices[..., 1:] - crow_indices[..., :-1] <= ncols` is not satisfied.")
    if k.size and (k.min() < 0 or k.max() >= ncols):
        raise RuntimeError("`0 <= col_indices < ncols` is not satisfied.")
    row_starts = np.zeros(k.size, bool)
    row_starts[c[:-1][d > 0]] = True
    canonical = bool(np.all((np.diff(k) > 0) | row_starts[1:])) if k.size > 1 else True
    if check_order and not canonical:
        raise RuntimeError("`col_indices[..., crow_indices[..., i - 1]:crow_indices[..., i]] for all i = 1, ..., "
                           "nrows are sorted and distinct along the last dimension values` is not satisfied.")
    return canonical


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None):
    """torch.sparse_csr_tensor: the matrix whose row r holds ``values[crow[r]:crow[r+1]]`` at columns
    ``col_indices[crow[r]:crow[r+1]]``; ``size`` inferred as (len(crow) - 1, largest column + 1).
    The indices keep their dtype (int32 or int64; lists become int64). torch's invariants are
    checked with its messages: the bounds always (see _check_invariants), the column order within
    each row with ``check_invariants=True``. A gradient of the result reaches ``values``."""
    values = _coo.values_tensor(values, dtype, device)
    _no_forward_ad("sparse_compressed_tensor", values)
    crow, col = _index_tensor(crow_indices, values.device), _index_tensor(col_indices, values.device)
    _check_indices(crow, col)
    if values.dim() == 0:
        raise RuntimeError("values must have dimensionality > sum of batch and block dimensionalities (=0 + 0) but "
                           "got 0")
    if values.dim() > 1:
        raise NotImplementedError("tritensor: hybrid sparse CSR tensors (values of more than one dim) are not "
                                  "supported")
    nnz = values.shape[0]
    if size is None:
        ncols = int(col.max().item()) + 1 if col.shape[0] else 0
        size = (crow.shape[0] - 1, ncols)
    size = tuple(int(n) for n in size)
    if len(size) != 2:
        raise RuntimeError(f"tensor dimensionality must be sum of batch, base, and dense dimensionalities "
                           f"(=0 + 2 + 0) but got {len(size)}")
    if crow.shape[0] != size[0] + 1:
        raise RuntimeError(f"crow_indices.shape[-1] must be equal to the number of rows + 1 (={size[0] + 1}), but got "
                           f"{crow.shape[0]}")
    if col.shape[0] != nnz:
        raise RuntimeError(f"col_indices.shape[-1] must be equal to nnz (={nnz}) as defined by values.shape[0], but "
                           f"got {col.shape[0]}")
    _check_invariants(crow, col, size[1], nnz, bool(check_invariants))
    out = _csr(crow, col, values.contiguous(), size)
    if requires_grad and not values.dtype.is_floating_point:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    if requires_grad:
        out.requires_grad_(True)
    return out


# =========================================================================== conversions
def to_dense(s):
    """Tensor.to_dense() of CSR ``s`` (entries at one position summed); its gradient to ``s`` is CSR
    with s's pattern (ToDenseBackward0)."""
    rows, _, col = _index64(s)
    M, N = s._shape
    vals = s._values_t
    with no_grad():
        flat = _creation.zeros(M * N, dtype=vals.dtype, device=vals.device)
        if vals.shape[0]:
            flat = flat.index_put((rows * N + col,), vals, accumulate=True)
        out = flat.reshape(M, N)
    return _record(out, "ToDenseBackward0", lambda g: (_like(s, _grad_values(g, s)),), [s])


def _compressed_from_rows(rows, cols, values, shape):
    """A CSR tensor from the row-sorted positions (rows, cols) of ``values`` (no history)."""
    crow = _sorting.searchsorted(rows, _creation.arange(shape[0] + 1, dtype=_dt.int64, device=rows.device))
    cols = cols.contiguous()
    out = SparseCsrTensor._from_parts(crow, cols, values.contiguous(), shape)
    out._index64 = (rows.contiguous(), crow, cols)
    return out


def to_sparse_csr(x, dense_dim=None):
    """Tensor.to_sparse_csr(): a strided matrix's nonzero entries (NaN counts as nonzero) row by
    row; a COO matrix's entries (coalesced); a CSR tensor itself. ToSparseCsrBackward0."""
    _no_forward_ad("_to_sparse_csr", x)
    if x._is_sparse_csr:
        if dense_dim is not None:
            raise RuntimeError("to_sparse_csr: conversion from SparseCsr to SparseCsr with dense_dim argument given "
                               "is not supported")
        return x
    if isinstance(x, SparseTensor):
        if x.sparse_dim() != 2:
            raise RuntimeError("coo_to_sparse_csr: conversion from Sparse to SparseCsr for input tensors with "
                               "sparse_dim()!=2 is not supported")
        if x.dense_dim() or dense_dim:
            raise NotImplementedError("tritensor: hybrid sparse CSR tensors (dense dims) are not supported")
        with no_grad():
            c = _coo.coalesce(x.detach())
            out = _compressed_from_rows(c._indices_t[0], c._indices_t[1], c._values_t, tuple(x.shape))
        return _record(out, "ToSparseCsrBackward0", lambda g: (_to_coo(g) if g._is_sparse_csr else g,), [x])
    if x.dim() < 2:                   # (torch's own error, from the nonzero coordinates' select)
        n = int(_ew.ne(x.detach(), 0).sum().item())
        raise IndexError(f"select(): index 1 out of range for tensor of size [{n}, {x.dim()}] at dimension 1")
    if x.dim() > 2:
        raise NotImplementedError("tritensor: batched sparse CSR tensors (to_sparse_csr of more than 2 dims) are not "
                                  "supported")
    if dense_dim:
        raise RuntimeError(f"dense_to_sparse_csr: dense_dim argument must be in [0,0] range, but {dense_dim} is given")
    with no_grad():
        idx = _indexing.nonzero(_ew.ne(x.detach(), 0))
        rows, cols = idx[:, 0], idx[:, 1]
        out = _compressed_from_rows(rows, cols, x.detach()[rows, cols], tuple(x.shape))
    return _record(out, "ToSparseCsrBackward0", lambda g: (to_dense(g) if g._is_sparse_csr else g,), [x])


def _to_coo(s, name="ToSparseBackward1"):
    """CSR ``s`` as a COO tensor (coalesced when each row's columns are sorted and distinct)."""
    rows, _, col = _index64(s)
    with no_grad():
        idx = _creation.zeros((2, rows.shape[0]), dtype=_dt.int64, device=rows.device)
        idx[0], idx[1] = rows, col
        host = idx.cpu().numpy()
        out = SparseTensor._from_parts(idx, s._values_t, s._shape, _coo._strictly_sorted(host, s._shape))
    return _record(out, name, lambda g: (_like(s, _grad_values(g, s)),), [s])


def csr_to_sparse(s, *args, layout=None, blocksize=None, dense_dim=None):
    """Tensor.to_sparse() of CSR ``s``: the COO tensor (sparse_dim 2 only); layout=tt.sparse_csr:
    ``s`` itself."""
    sparse_dim = args[0] if args else None
    if layout is sparse_csr and blocksize is None and dense_dim is None:
        return s
    if layout not in (None, sparse_coo) or blocksize is not None or dense_dim is not None:
        raise NotImplementedError(f"tritensor: to_sparse(layout={layout}, blocksize={blocksize}, "
                                  f"dense_dim={dense_dim}) of a sparse CSR tensor")
    if sparse_dim is not None and sparse_dim != 2:
        raise RuntimeError("sparse_compressed_to_sparse: conversion from SparseCsr to Sparse with sparse_dim argument "
                           "!=2 is not supported")
    return _to_coo(s)


def to_device_dtype(s, device=None, dtype=None, non_blocking=False, copy=False):
    """Tensor.to of a CSR tensor: its indices and entries moved and cast (ToCopyBackward0)."""
    src_device, src_dtype = s.device, s.dtype
    if (device is None or device == src_device) and (dtype is None or dtype is src_dtype) and not copy:
        return s
    with no_grad():
        moved = [t if device is None else _copy.to(t, device=device, non_blocking=non_blocking)
                 for t in (s._crow_t, s._col_t)]
        vals = _copy.to(s._values_t, device=device, dtype=dtype, non_blocking=non_blocking, copy=copy)
    out = SparseCsrTensor._from_parts(moved[0], moved[1], vals, s._shape)
    if device is None or device == src_device:
        out._index64 = s._index64
    return _record(out, "ToCopyBackward0", lambda g: (g.to(device=src_device, dtype=src_dtype),), [s])


def crow_indices(x):
    """Tensor.crow_indices(): torch's error for a tensor of another layout (CSR: the class's own)."""
    raise RuntimeError(f"crow_indices expected sparse row compressed tensor layout but got {_layout_name(x)}")


def col_indices(x):
    raise RuntimeError(f"col_indices expected sparse row compressed tensor layout but got {_layout_name(x)}")


# =========================================================================== CSR @ dense
def _check_mm(s, d, what="mat2"):
    """torch's checks of CSR ``s`` times dense ``d`` (``what`` names d), in torch's order."""
    if d.dim() == 1:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    if d.dim() != 2:
        raise RuntimeError(f"{what} must be a matrix, got {d.dim()}-D tensor")
    if d.device != s.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{s.device} and {d.device}!")
    if d.dtype is not s.dtype:
        raise RuntimeError(f"expected scalar type {_dt.type_name(s.dtype)} but found {_dt.type_name(d.dtype)}")
    if not s.dtype.is_floating_point:
        raise NotImplementedError(f'"addmm_out_sparse_csr_impl_mkl" not implemented for \'{_dt.type_name(s.dtype)}\'')


def _shapes_error(a, b):
    return RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a[0]}x{a[1]} and {b[0]}x{b[1]})")


def _spmm(s, values, d):
    """S @ d for CSR ``s`` with entries ``values`` (differentiable in values and d: SPARSE_MM)."""
    rows, crow, col = _index64(s)
    return dispatch(_coo.SPARSE_MM, values, d, rows=rows, cols=col, crow=crow, nrows=s._shape[0])


def _spmm_t(s, values, d):
    """S^T @ d for CSR ``s`` with entries ``values``: the entries sorted by column, then SPARSE_MM."""
    rows, _, col = _index64(s)
    return _coo._spmm_sorted(values, d, col, rows, s._shape[1])


def csr_times_dense(s, d):
    """torch.sparse.mm(csr, dense): a dense result whose gradient to ``s`` is CSR with s's pattern
    (SparseAddmmBackward0, as torch's)."""
    if not isinstance(d, Tensor) or d._is_sparse_csr or isinstance(d, SparseTensor):
        raise NotImplementedError("tritensor: sparse CSR @ sparse is not supported; use to_dense() on one operand")
    _check_mm(s, d)
    if s._shape[1] != d.shape[0]:
        raise _shapes_error(s._shape, d.shape)
    _no_forward_ad("_sparse_addmm", d)
    return _spmm(s, values_of(s), d)


_REDUCTIONS = ("sum", "mean", "amax", "amin")


def csr_mm_reduce(s, d, reduce):
    """torch.sparse.mm(csr, dense, reduce): row r of the result combines the products
    ``values[e] * d[col[e]]`` of row r's entries by ``reduce`` (sum, mean, amax, amin; a row without
    entries gives zeros); one SparseMmReduceImplBackward0 node whose gradient to ``s`` is CSR with
    its pattern (amax/amin: through the first entry reaching the extreme, as torch's arg_out)."""
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"sparse_mm_reduce: reduce type of {reduce} has not been enabled.")
    if not isinstance(d, Tensor) or d._is_sparse_csr or isinstance(d, SparseTensor) or d.dim() != 2:
        raise RuntimeError("sparse_mm_reduce: expected a strided matrix as the dense operand")
    if d.dtype is not s.dtype:
        raise RuntimeError(f"Expected tensor for argument #1 'other' to have scalar type {_dt.type_name(s.dtype)}; "
                           f"but got {d.type()} instead (while checking arguments for sparse_mm_reduce)")
    if not s.dtype.is_floating_point:
        raise NotImplementedError(f'"spmm_reduce_kernel" not implemented for \'{_dt.type_name(s.dtype)}\'')
    if s._shape[1] != d.shape[0]:
        raise _shapes_error(s._shape, d.shape)
    _no_forward_ad("_sparse_mm_reduce_impl", d)
    rows, crow, col = _index64(s)
    M, N = s._shape[0], d.shape[1]
    counts = chosen = None
    with no_grad():
        if reduce in ("sum", "mean"):
            out = _spmm(s, s._values_t, d)
            if reduce == "mean":       # (each row's number of entries, at least 1: an empty row stays 0)
                counts = (crow[1:] - crow[:-1]).clamp(min=1).to(d.dtype)[:, None]
                out = out / counts
        else:
            products = s._values_t[:, None] * d.index_select(0, col)                   # [nnz, N]
            where = rows[:, None].expand(products.shape)
            out = _creation.zeros((M, N), dtype=d.dtype, device=d.device).scatter_reduce(
                0, where, products, reduce, include_self=False)
            # the first entry of each row (and column) reaching the extreme takes the gradient
            entry = _creation.arange(rows.shape[0], device=d.device)[:, None].expand(products.shape)
            hit = _ew.eq(products, out.index_select(0, rows))
            first = _creation.full((M, N), rows.shape[0], dtype=_dt.int64, device=d.device).scatter_reduce(
                0, where, _ew.where(hit, entry, rows.shape[0]), "amin")
            chosen = _ew.eq(entry, first.index_select(0, rows)).to(d.dtype)

    def backward(g):
        if counts is not None:
            g = g / counts
        gp = g.index_select(0, rows) if chosen is None else g.index_select(0, rows) * chosen    # dL/dproducts
        gs = _like(s, (gp * d.index_select(0, col)).sum(1)) if s.requires_grad else None
        gd = None
        if d.requires_grad:             # (sum, mean: S^T G by the SpMM kernel; the extremes: their entries')
            gd = _spmm_t(s, values_of(s), g) if chosen is None else _creation.zeros(
                tuple(d.shape), dtype=d.dtype, device=d.device).index_add(0, col, gp * values_of(s)[:, None])
        return gs, gd
    return _record(out, "SparseMmReduceImplBackward0", backward, [s, d])


def _mm(x, y, **attrs):
    """tt.mm / matmul / ``@`` with a CSR operand, as torch's: a dense result, one MmBackward0 node
    whose gradient to the CSR operand is dense (torch's mm does not mask it to the pattern)."""
    if x._is_sparse_csr and (y._is_sparse_csr or isinstance(y, SparseTensor)) or \
            y._is_sparse_csr and isinstance(x, SparseTensor):
        raise NotImplementedError("tritensor: sparse @ sparse with a CSR operand is not supported; use to_dense() on "
                                  "one operand")
    _no_forward_ad("mm", x, y)
    if x._is_sparse_csr:
        _check_mm(x, y)
        if x._shape[1] != y.shape[0]:
            raise _shapes_error(x._shape, y.shape)
        with no_grad():
            out = _spmm(x, x._values_t, y)

        def backward(g):
            gx = g.mm(y.t()) if x.requires_grad else None                                   # G D^T
            gy = _spmm_t(x, values_of(x), g) if isinstance(y, Tensor) and y.requires_grad else None   # S^T G
            return gx, gy
        return _record(out, "MmBackward0", backward, [x, y])
    if x.dim() != 2:
        raise RuntimeError("self must be a matrix")
    _check_mm(y, x, "self")
    if x.shape[1] != y._shape[0]:
        raise _shapes_error(x.shape, y._shape)
    with no_grad():                     # X S = (S^T X^T)^T
        out = _spmm_t(y, y._values_t, x.t()).t().contiguous()

    def backward(g):
        gx = _spmm(y, values_of(y), g.t()).t() if x.requires_grad else None      # G S^T = (S G^T)^T
        gy = x.t().mm(g) if y.requires_grad else None                              # X^T G (dense)
        return gx, gy
    return _record(out, "MmBackward0", backward, [x, y])


def _addmm(input, x, y, beta=1, alpha=1, **attrs):
    """tt.addmm(input, csr, dense): beta * input + alpha * (csr @ dense), dense, one AddmmBackward0
    node. Other layouts' combinations raise torch's error."""
    if not (x._is_sparse_csr and not input._is_sparse_csr and not isinstance(input, SparseTensor)
            and not y._is_sparse_csr and not isinstance(y, SparseTensor)):
        raise RuntimeError(f"addmm: computation on {x.device.type.upper()} is not implemented for {_layout_name(input)} + "
                           f"{_layout_name(x)} @ {_layout_name(y)}")
    _check_mm(x, y)
    _no_forward_ad("addmm", input, y)
    if input.dtype is not x.dtype:
        raise RuntimeError(f"expected scalar type {_dt.type_name(input.dtype)} but found {_dt.type_name(x.dtype)}")
    if x._shape[1] != y.shape[0]:
        raise _shapes_error(x._shape, y.shape)
    shape = (x._shape[0], y.shape[1])
    with no_grad():
        prod = _spmm(x, x._values_t, y)
        out = prod * alpha if alpha != 1 else prod
        if beta != 0:            # (beta == 0: input ignored, NaN included, as torch's addmm)
            out = out + (input.expand(shape) * beta if beta != 1 else input.expand(shape))

    def backward(g):
        gi = (g * beta).sum_to_size(tuple(input.shape)) if input.requires_grad else None
        ga = g * alpha if alpha != 1 else g
        gx = ga.mm(y.t()) if x.requires_grad else None
        gy = _spmm_t(x, values_of(x), ga) if y.requires_grad else None
        return gi, gx, gy
    return _record(out, "AddmmBackward0", backward, [input, x, y])


# =========================================================================== sampled_addmm
def _sampled_rule(values, mat1, mat2, *, rows, cols, beta, alpha):
    return Meta((values.shape[0],), values.dtype, values.dtype)


def _sampled_launch(out, values, mat1, mat2, *, compute, rows, cols, beta, alpha):
    _tsparse.sampled_dot(out, values, mat1, mat2, rows, cols, beta, alpha)


# out[k] = beta * values[k] + alpha * (mat1[rows[k], :] . mat2[:, cols[k]]), one entry per program lane;
# differentiated by sampled_addmm's own node (below), which calls it without grad
SAMPLED_ADDMM = op("sparse_sampled_addmm", ("values", "mat1", "mat2"), rule=_sampled_rule,
                   reference=numpy_sparse.sampled_addmm, kernel=_sampled_launch, differentiable=False)


def _check_sampled(input, mat1, mat2):
    """torch's sparse_sampled_addmm checks, in torch's order."""
    if not input._is_sparse_csr:
        backend = ("Sparse" if isinstance(input, SparseTensor) else "") + input.device.type.upper()
        raise NotImplementedError(f"Could not run 'aten::sparse_sampled_addmm' with arguments from the '{backend}' "
                                  "backend. This could be because the operator doesn't exist for this backend.")
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if not isinstance(m, Tensor):
            raise TypeError(f"sampled_addmm(): argument '{name}' must be Tensor, not {type(m).__name__}")
        if m._is_sparse_csr or isinstance(m, SparseTensor):
            raise RuntimeError(f"sampled_addmm: Expected {name} to have strided layout, but got {_layout_name(m)}")
    if not input.dtype.is_floating_point or input.dtype in (_dt.float16, _dt.bfloat16):
        raise RuntimeError(f"sparse_sampled_addmm: Expected self to be a floating-point or complex tensor, but got "
                           f"{_dt.type_name(input.dtype)}")
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m.dim() < 2:
            raise RuntimeError(f"sampled_addmm: Expected {name} to be a matrix, got {m.dim()}-D tensor")
    if mat1.dim() > 2 or mat2.dim() > 2:
        if mat1.shape[:-2] != mat2.shape[:-2]:
            raise RuntimeError(f"sampled_addmm: Expected mat1 and mat2 to have the same batch size, but got "
                               f"{list(mat1.shape[:-2])} and {list(mat2.shape[:-2])}")
        raise NotImplementedError("tritensor: batched sampled_addmm (mat1/mat2 of more than 2 dims) is not supported")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(f"sampled_addmm: Expected mat1 and mat2 to have the same dtype, but got "
                           f"{_dt.type_name(mat1.dtype)} and {_dt.type_name(mat2.dtype)}")
    if mat1.dtype is not input.dtype:
        raise RuntimeError(f"sampled_addmm: Expected mat1 and self to have the same dtype, but got "
                           f"{_dt.type_name(mat1.dtype)} and {_dt.type_name(input.dtype)}")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"sampled_addmm: mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} "
                           f"and {mat2.shape[0]}x{mat2.shape[1]})")
    if input._shape[0] != mat1.shape[0]:
        raise RuntimeError("sampled_addmm: self.shape[-2] must match mat1.shape[-2]")
    if input._shape[1] != mat2.shape[1]:
        raise RuntimeError("sampled_addmm: self.shape[-1] must match mat2.shape[-1]")
    if mat1.device != input.device or mat2.device != input.device:
        other = mat1.device if mat1.device != input.device else mat2.device
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{input.device} and {other}!")


def sampled_addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0):
    """torch.sparse.sampled_addmm: ``beta * input + alpha * (mat1 @ mat2)`` computed only where the
    CSR ``input`` has entries; a CSR result with input's pattern (float32/float64, as torch's CPU
    kernel). Gradients (SparseSampledAddmmBackward0): to input, beta * G (CSR, its pattern); to
    mat1, alpha * G @ mat2^T; to mat2, alpha * mat1^T @ G, with G the gradient's entries at the
    pattern (two SpMMs)."""
    _check_sampled(input, mat1, mat2)
    _no_forward_ad("sparse_sampled_addmm", mat1, mat2)
    beta, alpha = float(beta), float(alpha)
    rows, _, col = _index64(input)
    with no_grad():
        vals = dispatch(SAMPLED_ADDMM, input._values_t, mat1, mat2, rows=rows, cols=col, beta=beta, alpha=alpha)
    out = SparseCsrTensor._from_parts(input._crow_t, input._col_t, vals, input._shape)
    out._index64 = input._index64

    def backward(g):
        gv = _grad_values(g, out)
        gi = _like(input, gv * beta) if input.requires_grad else None
        ga = gv * alpha if alpha != 1 else gv
        g1 = _spmm(out, ga, mat2.t()) if mat1.requires_grad else None         # G mat2^T
        g2 = _spmm_t(out, ga, mat1).t() if mat2.requires_grad else None        # (G^T mat1)^T
        return gi, g1, g2
    return _record(out, "SparseSampledAddmmBackward0", backward, [input, mat1, mat2])


# =========================================================================== elementwise forms
def _values_map(s, fn, name):
    """A CSR tensor with s's pattern and ``fn`` of its entries (fn(0) == 0: the zeros stay zeros),
    differentiated through fn's own node on the entries."""
    return _like(s, fn(values_of(s)), name)


def _unary(name, node):
    def impl(x, **attrs):
        if node is None:            # (a bool test: no derivative, as torch)
            with no_grad():
                return _like(x, dispatch(TABLE[name], x._values_t, **attrs))
        return _values_map(x, lambda v: dispatch(TABLE[name], v, **attrs), node)
    return impl


def _scalar_op(name, fn, node):
    """``csr <op> number`` (and, for mul, ``number * csr``); other operands: torch's layout error."""
    def impl(x, y, **attrs):
        if isinstance(x, Tensor) and x._is_sparse_csr and not isinstance(y, Tensor):
            return _values_map(x, lambda v: fn(v, y), node)
        if name == "mul" and not isinstance(x, Tensor) and y._is_sparse_csr:
            return _values_map(y, lambda v: fn(v, x), node)
        raise NotImplementedError(f"tritensor: {name} of a sparse CSR tensor takes a number as its other operand; "
                                  "use to_dense() (or to_sparse()) for the rest")
    return impl


def _add(x, y, alpha=1, name="AddBackward0", **attrs):
    """csr + csr (CSR, through the COO sum where the patterns differ); csr + dense and dense + csr
    (dense, as torch's)."""
    if isinstance(x, SparseTensor) or isinstance(y, SparseTensor) or not isinstance(y, Tensor):
        raise NotImplementedError("tritensor: add of a sparse CSR tensor takes a CSR or a dense tensor (convert a "
                                  "COO one with to_sparse_csr())")
    if x._is_sparse_csr and y._is_sparse_csr:
        if tuple(x.shape) != tuple(y.shape):
            raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has size "
                               f"{list(x.shape)} while other has size {list(y.shape)}")
        if x._crow_t is y._crow_t and x._col_t is y._col_t and x.dtype is y.dtype:
            vx, vy = values_of(x), values_of(y)
            return _like(x, vx + vy * alpha if alpha != 1 else vx + vy, name)
        return to_sparse_csr(_coo._sparse_add(_to_coo(x), _to_coo(y), alpha, name))
    x, y = (to_dense(x) if x._is_sparse_csr else x), (to_dense(y) if y._is_sparse_csr else y)
    return x + y * alpha if alpha != 1 else x + y


def _sum(x, dims=None, keepdim=False, dtype=None, dim_given=False, **attrs):
    """tt.sum / Tensor.sum of a CSR tensor: the sum of its entries (dense, 0-d: SumBackward0); over a
    dim, torch's keepdim=False error (keepdim=True, a CSR result in torch: not built here)."""
    if dim_given:
        if not keepdim:
            raise RuntimeError("reduction operations on CSR tensors with keepdim=False is unsupported")
        raise NotImplementedError("tritensor: sum(dim, keepdim=True) of a sparse CSR tensor is not supported; use "
                                  "to_dense() or to_sparse() first")
    with no_grad():
        out = x._values_t.sum(dtype=dtype)
    # (torch's gradient is dense: the incoming one at every position, not only the entries)
    return _record(out, "SumBackward0", lambda g: (g.expand(tuple(x._shape)),), [x])


def _unsupported_layout(*args, **attrs):
    raise RuntimeError("unsupported tensor layout: SparseCsr")     # (torch's div of a CSR tensor)


def _clone(x, **attrs):
    with no_grad():
        out = SparseCsrTensor._from_parts(x._crow_t.clone(), x._col_t.clone(), x._values_t.clone(), x._shape)
    return _record(out, "CloneBackward0", lambda g: (g,), [x])


for _name, _node in _coo._UNARY.items():
    SPARSE_CSR_OPS[_name] = _unary(_name, _node)
SPARSE_CSR_OPS.update({
    "mm": _mm, "addmm": _addmm, "add": _add, "clone": _clone, "sum": _sum,
    "sub": lambda x, y, alpha=1, **a: _add(x, y, -alpha, "SubBackward0"),
    "neg": lambda x, **a: _values_map(x, lambda v: -v, "NegBackward0"),
    "mul": _scalar_op("mul", lambda v, c: v * c, "MulBackward0"),
    "div": _unsupported_layout,
})
CSR_FORMS.update({"sparse.mm": csr_times_dense, "sparse.mm.reduce": csr_mm_reduce, "to_sparse_csr": to_sparse_csr})


# =========================================================================== declarations
from .surface import declare  # noqa: E402  (the declarations sit under the entries, as in every op module)

declare("sparse_csr_tensor", sparse_csr_tensor, method=False)
declare("to_sparse_csr", method=to_sparse_csr)
declare("crow_indices", method=crow_indices)
declare("col_indices", method=col_indices)
declare("sparse.sampled_addmm", sampled_addmm, method=False)
