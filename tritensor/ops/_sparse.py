"""Where a dense op meets a sparse tensor (a leaf module: it imports no op module).

A sparse COO tensor (tritensor/_sparse_tensor.py) has no dense memory: its storage stand-in
raises ``SparseOperand`` the moment a dense op reaches for it, before anything is read.
dispatch() catches it and calls ``sparse_fallback``: the op's sparse implementation, if
ops/sparse.py registered one in ``SPARSE_OPS`` (by table entry name: "add", "mm", "neg" ...),
or else torch's error for an operator with no kernel for the sparse backend. A sparse CSR
tensor's stand-in names the 'SparseCsrCPU' / 'SparseCsrCUDA' backend: its implementations are
ops/sparse_csr.py's, in ``SPARSE_CSR_OPS``.
"""
from __future__ import annotations


class SparseOperand(NotImplementedError):
    """A dense op reached the memory of a sparse tensor; ``args[0]`` is its backend's name
    ("SparseCPU", "SparseCUDA")."""

    def __init__(self, backend="SparseCPU"):
        self.backend = backend
        super().__init__(f"a sparse tensor ({backend}) has no dense memory: this needs a dense tensor "
                         "(Tensor.to_dense())")


def _message(name, backend):
    kind, ops = ("CSR", SPARSE_CSR_OPS) if backend.startswith("SparseCsr") else ("COO", SPARSE_OPS)
    return (f"Could not run 'aten::{name}' with arguments from the '{backend}' backend. This could be because "
            f"the operator doesn't exist for this backend. tritensor's sparse {kind} tensors have these operators: "
            + ", ".join(sorted(ops)) + ".")


# table entry name -> sparse implementation, called as the entry's dispatch was:
# impl(*args, **attrs) (registered by ops/sparse.py)
SPARSE_OPS: dict = {}
SPARSE_CSR_OPS: dict = {}     # the same for sparse CSR operands (registered by ops/sparse_csr.py)
# functions of ops/sparse.py that take a CSR operand too (tt.sparse.mm, to_sparse(layout=...)):
# name -> ops/sparse_csr.py's implementation (ops/sparse.py cannot import it: it imports ops/sparse.py)
CSR_FORMS: dict = {}


def not_supported(name, t):
    """torch's error for operator ``name`` (ATen's overload name: "mean.dim") on sparse ``t``."""
    return NotImplementedError(_message(name, t._storage._backend_name))


def sparse_fallback(op, args, attrs, error):
    """The sparse implementation of table entry ``op`` for these operands, or torch's error."""
    impl = (SPARSE_CSR_OPS if error.backend.startswith("SparseCsr") else SPARSE_OPS).get(op.name)
    if impl is None:
        raise NotImplementedError(_message(op.name, error.backend)) from None
    return impl(*args, **attrs)
