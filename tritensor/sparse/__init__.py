"""tt.sparse: torch.sparse's functions for sparse tensors (mm, sum, sampled_addmm).

The sparse tensors themselves are tritensor/_sparse_tensor.py (made by tt.sparse_coo_tensor,
tt.sparse_csr_tensor, Tensor.to_sparse and Tensor.to_sparse_csr); their ops are
tritensor/ops/sparse.py (COO) and tritensor/ops/sparse_csr.py (CSR). Generated from the declarations named
``sparse.<name>`` there (ops/surface.py), as tt.special is.
"""
from ..ops import surface as _surface

globals().update(_surface.namespace("sparse"))
