"""torch.layout: how a tensor's elements are stored.

``strided``     dense memory with a stride per dim (every Tensor but a sparse one)
``sparse_coo``  COO sparse: an int64 indices tensor (sparse_dim x nnz) and a values tensor
                (tritensor/sparse/)
``sparse_csr``  compressed sparse rows: crow_indices (rows + 1), col_indices and values (nnz each)
                (tritensor/_sparse_tensor.py's SparseCsrTensor)

Each is a singleton (compared by identity, pickled by name), printed as ``tritensor.<name>`` the
way dtypes and memory formats are. (Named layouts, plural, so the exported class never hides a
module.)
"""
from __future__ import annotations

from ._named_singleton import NamedSingleton


class layout(NamedSingleton):
    __slots__ = ()


strided = layout._create("strided")
sparse_coo = layout._create("sparse_coo")
sparse_csr = layout._create("sparse_csr")
