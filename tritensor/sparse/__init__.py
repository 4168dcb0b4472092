"""tt.sparse: torch.sparse's functions for sparse COO tensors (mm, sum; sampled_addmm takes a sparse CSR
input in torch: tritensor has the COO layout only).

The sparse tensor itself is tritensor/_sparse_tensor.py (made by tt.sparse_coo_tensor and
Tensor.to_sparse); its ops are tritensor/ops/sparse.py. Generated from the declarations named
``sparse.<name>`` there (ops/surface.py), as tt.special is.
"""
from ..ops import surface as _surface

globals().update(_surface.namespace("sparse"))
