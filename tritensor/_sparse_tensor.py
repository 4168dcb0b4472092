"""The sparse tensors: COO (layout tt.sparse_coo) and CSR (tt.sparse_csr), Tensor subclasses
holding their nonzeros.

A SparseTensor of size ``(*sparse, *dense)`` holds

    _indices_t   int64 [sparse_dim, nnz]: the coordinates of each stored entry
    _values_t    [nnz, *dense]: the entries (a dense tensor; hybrid tensors keep dense dims)
    _coalesced   whether the entries are sorted by their row-major position, with no duplicate

and the autograd fields every tensor has (requires_grad, grad_fn, grad): a gradient reaching a
sparse tensor is itself sparse (ops/sparse.py builds them), and a sparse leaf's ``.grad`` is one.

It has no dense memory. Its ``_storage`` is a stand-in whose every attribute raises
``SparseOperand``, so a dense op that reaches its memory (a reference reading its host array, a
launcher taking its pointer, a view) stops before reading anything; ops/dispatch.py turns that
into the op's sparse implementation where one is registered (ops/_sparse.py), and otherwise into
torch's "Could not run 'aten::<op>' with arguments from the 'SparseCPU' backend" error.

A SparseCsrTensor of size ``(rows, cols)`` holds

    _crow_t      int32/int64 [rows + 1]: row r's entries are ``crow[r] .. crow[r + 1]``
    _col_t       the same dtype, [nnz]: each entry's column, sorted within a row
    _values_t    [nnz]: the entries

(batched and hybrid CSR tensors are not built here); its ops are tritensor/ops/sparse_csr.py,
found by dispatch under the 'SparseCsrCPU' / 'SparseCsrCUDA' backend names.
"""
from __future__ import annotations

from .layouts import sparse_coo, sparse_csr
from .ops._sparse import SparseOperand
from .tensor import Size, Tensor, _Version, read_only


class _NoDenseStorage:
    """The ``_storage`` of a sparse tensor: any use of it is a dense op reaching sparse memory."""
    __slots__ = ("_backend_name",)

    def __init__(self, device, kind="Sparse"):
        object.__setattr__(self, "_backend_name", f"{kind}{device.type.upper()}")

    def __getattr__(self, name):
        raise SparseOperand(self._backend_name)


class _Storageless(Tensor):
    """What the sparse layouts share: the device of their values, and no dense memory to hand out
    (numpy(), tolist(), data_ptr() raise torch's errors; a dense op reaching ``_storage`` raises
    SparseOperand)."""

    _layout_text = "Sparse"        # torch's name of the layout in its messages

    @property
    def device(self):
        return self._values_t.device

    @property
    def is_cuda(self):
        return self._values_t.device.type == "cuda"

    @property
    def is_cpu(self):
        return self._values_t.device.type == "cpu"

    def _nnz(self):
        return self._values_t.shape[0]

    def data_ptr(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def numpy(self, *, force=False):
        raise TypeError(f"can't convert {self._layout_text} layout tensor to numpy. Use Tensor.to_dense() first.")

    def __array__(self, dtype=None, copy=None):
        return self.numpy()

    def _host_view(self):
        raise SparseOperand(self._storage._backend_name)

    _to_host_array = _host_view

    def tolist(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def __str__(self):
        return self.__repr__()

    # autograd identity: an alias of the same stored parts (each layout's _alias_detached)
    def _attached_to(self, node, output_nr):
        t = self._alias_detached()
        t._grad_fn = node
        t._output_nr = output_nr
        return t

    @property
    def data(self):
        t = self._alias_detached()
        t._version_counter = _Version()
        return t

    def __format__(self, format_spec):
        return object.__format__(self, format_spec)


class SparseTensor(_Storageless):
    """A sparse COO tensor (see the module docstring). Made by tt.sparse_coo_tensor,
    Tensor.to_sparse() and the sparse ops; ``type(t)`` is this subclass, ``t.layout`` is
    tt.sparse_coo and ``t.is_sparse`` is True."""

    _is_sparse_coo = True

    @classmethod
    def _from_parts(cls, indices, values, size, coalesced, version=None):
        """A sparse tensor over ``indices`` and ``values`` (no checks: callers have made them)."""
        t = cls._make(_NoDenseStorage(values.device), Size(size), (0,) * len(size), 0, values.dtype, version)
        t._offset = None                 # never a dense tensor's offset: view layouts are never reused for it
        t._indices_t = indices
        t._values_t = values
        t._coalesced = bool(coalesced)
        return t

    # ---------------------------------------------------------------- metadata
    layout = read_only(lambda self: sparse_coo, "layout")
    is_sparse = read_only(lambda self: True, "is_sparse")

    def stride(self, dim=None):
        return self._stride if dim is None else self._stride[self._wrap_dim(dim)]   # zeros, as torch's

    def is_contiguous(self, memory_format=None):
        return False

    def sparse_dim(self):
        return self._indices_t.shape[0]

    def dense_dim(self):
        return self._values_t.dim() - 1

    def _indices(self):
        """The stored coordinates as they are (no coalescing, no gradient: torch's _indices)."""
        return self._indices_t

    def _values(self):
        """The stored entries as they are (torch's _values: no gradient flows through it)."""
        return self._values_t.detach()

    # ---------------------------------------------------------------- no dense memory
    def storage_offset(self):
        raise SparseOperand(self._storage._backend_name)

    def untyped_storage(self):
        raise RuntimeError("Cannot access storage of SparseTensorImpl")

    def storage(self):
        raise RuntimeError("Cannot access storage of SparseTensorImpl")

    def item(self):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        return self._dense().item()

    def _dense(self):
        from .ops import sparse as _sparse_ops
        return _sparse_ops.to_dense(self.detach())

    def record_stream(self, stream):
        self._values_t.record_stream(stream)
        self._indices_t.record_stream(stream)

    def __dlpack__(self, *args, **kwargs):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def __repr__(self):
        from ._format import format_sparse
        return format_sparse(self)

    def __reduce_ex__(self, proto):
        return (_rebuild_sparse, (self._indices_t.detach().cpu(), self._values_t.detach().cpu(), tuple(self._shape),
                                  self._coalesced, str(self.device), self.requires_grad))

    def _moved(self, device, dtype, non_blocking, copy):
        """Tensor.to(...) of a sparse tensor (ops/copy.py hands it here)."""
        from .ops import sparse as _sparse_ops
        return _sparse_ops.to_device_dtype(self, device, dtype, non_blocking, copy)

    # ---------------------------------------------------------------- autograd identity
    def _alias_detached(self):
        return SparseTensor._from_parts(self._indices_t, self._values_t.detach(), self._shape, self._coalesced,
                                        self._version_counter)

    @_Storageless.data.setter
    def data(self, other):
        if not isinstance(other, SparseTensor):
            raise RuntimeError("data set to a tensor that has a different layout: sparse_coo expected")
        self._indices_t, self._values_t, self._shape, self._coalesced, self._dtype = (
            other._indices_t, other._values_t, other._shape, other._coalesced, other._dtype)
        self._stride = (0,) * len(other._shape)


def _rebuild_sparse(indices, values, size, coalesced, device, requires_grad):
    from .ops import sparse as _sparse_ops
    t = _sparse_ops.sparse_coo_tensor(indices, values, size, device=device, is_coalesced=coalesced)
    return t.requires_grad_(requires_grad) if requires_grad else t


class SparseCsrTensor(_Storageless):
    """A sparse CSR matrix (see the module docstring). Made by tt.sparse_csr_tensor,
    Tensor.to_sparse_csr() and the CSR ops (tritensor/ops/sparse_csr.py); ``t.layout`` is
    tt.sparse_csr and ``t.is_sparse_csr`` is True (``t.is_sparse``, as torch's, is False)."""

    _is_sparse_csr = True
    _layout_text = "SparseCsr"

    @classmethod
    def _from_parts(cls, crow, col, values, size, version=None):
        """A CSR tensor over ``crow``, ``col`` and ``values`` (no checks: callers have made them)."""
        t = cls._make(_NoDenseStorage(values.device, "SparseCsr"), Size(size), (0,) * len(size), 0, values.dtype,
                      version)
        t._offset = None
        t._crow_t, t._col_t, t._values_t = crow, col, values
        t._index64 = None              # (int64 rows, crow, col for the kernels: made on first use)
        return t

    layout = read_only(lambda self: sparse_csr, "layout")
    is_sparse_csr = read_only(lambda self: True, "is_sparse_csr")

    def stride(self, dim=None):
        raise RuntimeError("Sparse CSR tensors do not have strides")

    def is_contiguous(self, memory_format=None):
        raise RuntimeError("Sparse CSR tensors do not have is_contiguous")

    def storage_offset(self):
        return 0

    def untyped_storage(self):
        raise NotImplementedError("Cannot access storage of SparseCsrTensorImpl")

    storage = untyped_storage

    def __dlpack__(self, *args, **kwargs):
        raise BufferError("Can't export tensors with layout other than torch.strided")

    def sparse_dim(self):
        return 2

    def dense_dim(self):
        return 0

    def crow_indices(self):
        return self._crow_t

    def t(self):
        raise NotImplementedError("tritensor: the transpose of a sparse CSR tensor is a sparse CSC tensor (torch's "
                                  "sparse_csc layout), which tritensor does not have; use to_dense() or to_sparse()")

    def transpose(self, dim0, dim1):
        return self.t()

    def col_indices(self):
        return self._col_t

    def item(self):
        raise NotImplementedError("Could not run 'aten::_local_scalar_dense' with arguments from the "
                                  f"'{self._storage._backend_name}' backend.")

    def record_stream(self, stream):
        for t in (self._crow_t, self._col_t, self._values_t):
            t.record_stream(stream)

    def __repr__(self):
        from ._format import format_sparse
        return format_sparse(self)

    def __reduce_ex__(self, proto):
        return (_rebuild_csr, (self._crow_t.cpu(), self._col_t.cpu(), self._values_t.detach().cpu(),
                               tuple(self._shape), str(self.device), self.requires_grad))

    # the conversions and accessors of the CSR layout (the dense Tensor's methods are COO's)
    def values(self):
        from .ops import sparse_csr
        return sparse_csr.values_of(self)

    def to_dense(self, dtype=None, *, masked_grad=None):
        from .ops import sparse_csr
        out = sparse_csr.to_dense(self)
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, *args, layout=None, blocksize=None, dense_dim=None):
        from .ops import sparse_csr
        return sparse_csr.csr_to_sparse(self, *args, layout=layout, blocksize=blocksize, dense_dim=dense_dim)

    def _moved(self, device, dtype, non_blocking, copy):
        """Tensor.to(...) of a CSR tensor (ops/copy.py hands it here)."""
        from .ops import sparse_csr
        return sparse_csr.to_device_dtype(self, device, dtype, non_blocking, copy)

    # ---------------------------------------------------------------- autograd identity
    def _alias_detached(self):
        return SparseCsrTensor._from_parts(self._crow_t, self._col_t, self._values_t.detach(), self._shape,
                                           self._version_counter)



def _rebuild_csr(crow, col, values, size, device, requires_grad):
    from .ops import sparse_csr
    t = sparse_csr.sparse_csr_tensor(crow, col, values, size, device=device)
    return t.requires_grad_(requires_grad) if requires_grad else t
