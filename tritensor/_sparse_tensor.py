"""The sparse COO tensor (layout tt.sparse_coo): a Tensor subclass holding its nonzeros.

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
"""
from __future__ import annotations

from .layouts import sparse_coo
from .ops._sparse import SparseOperand
from .tensor import Size, Tensor, _Version, read_only


class _NoDenseStorage:
    """The ``_storage`` of a sparse tensor: any use of it is a dense op reaching sparse memory."""
    __slots__ = ("_backend_name",)

    def __init__(self, device):
        object.__setattr__(self, "_backend_name", f"Sparse{device.type.upper()}")

    def __getattr__(self, name):
        raise SparseOperand(self._backend_name)


class SparseTensor(Tensor):
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

    @property
    def device(self):
        return self._values_t.device

    @property
    def is_cuda(self):
        return self._values_t.device.type == "cuda"

    @property
    def is_cpu(self):
        return self._values_t.device.type == "cpu"

    def stride(self, dim=None):
        return self._stride if dim is None else self._stride[self._wrap_dim(dim)]   # zeros, as torch's

    def is_contiguous(self, memory_format=None):
        return False

    def _nnz(self):
        return self._indices_t.shape[1]

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

    def data_ptr(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def untyped_storage(self):
        raise RuntimeError("Cannot access storage of SparseTensorImpl")

    def storage(self):
        raise RuntimeError("Cannot access storage of SparseTensorImpl")

    def numpy(self, *, force=False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")

    def __array__(self, dtype=None, copy=None):
        return self.numpy()

    def _host_view(self):
        raise SparseOperand(self._storage._backend_name)

    _to_host_array = _host_view

    def tolist(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

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

    __str__ = __repr__

    def __format__(self, format_spec):
        return object.__format__(self, format_spec)

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

    def _attached_to(self, node, output_nr):
        t = SparseTensor._from_parts(self._indices_t, self._values_t.detach(), self._shape, self._coalesced,
                                     self._version_counter)
        t._grad_fn = node
        t._output_nr = output_nr
        return t

    @property
    def data(self):
        t = self._alias_detached()
        t._version_counter = _Version()
        return t

    @data.setter
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
