"""Sparse CSR cases, runnable with torch or tritensor (``m`` is the module: torch or tritensor):
make_sparse_csr_values.py records torch 2.13's answers (cpu) into sparse_csr_values.json;
tests/test_sparse_csr.py replays them on tritensor, on cpu and on the emulated cuda device.

Each case is ``fn(m, device) -> result``: a tensor (strided or CSR), a tuple of them (gradients),
a string (a node's name) or any value; or an exception, recorded as its type and first line
(torch's module name replaced by tritensor's). Inputs are literals or come from a NumPy generator
seeded by the case's name, so both sides build the same ones.
"""
import zlib

import numpy as np

CROW, COL, VAL = [0, 2, 2, 3], [0, 2, 1], [1.0, 2.0, 3.0]         # a 3 x 4 matrix, an empty row
DENSE = [[1.0, 2.0, 0.5, -1.0, 0.0], [3.0, 4.0, 1.5, 0.0, 2.0], [5.0, 6.0, -2.0, 1.0, 1.0],
         [0.5, -0.5, 1.0, 2.0, 3.0]]                                  # 4 x 5


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def csr(m, device="cpu", dtype=None, requires_grad=False, size=(3, 4), **kw):
    return m.sparse_csr_tensor(m.tensor(CROW), m.tensor(COL), m.tensor(VAL, dtype=dtype), size, device=device,
                               **kw).requires_grad_(requires_grad)


def sparse_matrix(name, shape, density):
    """A float64 NumPy matrix with about ``density`` of its entries nonzero (rows left empty too)."""
    rng = rng_for(name)
    return np.where(rng.random(shape) < density, rng.standard_normal(shape), 0.0)


def dense(m, device, name, shape, dtype="float32", **kw):
    """A dense matrix of standard normal values (float32 unless ``dtype`` names another)."""
    return m.tensor(rng_for(name).standard_normal(shape), dtype=getattr(m, dtype), device=device, **kw)


def _bad(m, device, crow, col, val, size, **kw):
    return m.sparse_csr_tensor(m.tensor(crow), m.tensor(col), m.tensor(val), size, device=device, **kw)


def _grads_sampled(m, device):
    v = m.tensor(VAL, device=device, requires_grad=True)
    s = m.sparse_csr_tensor(m.tensor(CROW), m.tensor(COL), v, (3, 4), device=device)
    a = dense(m, device, "sa", (3, 2), requires_grad=True)
    b = dense(m, device, "sb", (2, 4), requires_grad=True)
    r = m.sparse.sampled_addmm(s, a, b, beta=0.5, alpha=2.0)
    vals = r.values()
    (vals * m.tensor([1.0, -2.0, 3.0], device=device)).sum().backward()
    return r.grad_fn.name(), vals.grad_fn.name(), s.grad_fn.name(), r, v.grad, a.grad, b.grad


def _grads_sampled_leaf(m, device):
    s = csr(m, device, requires_grad=True)
    a, b = dense(m, device, "la", (3, 3)), dense(m, device, "lb", (3, 4))
    r = m.sparse.sampled_addmm(s, a, b, beta=-1.5)
    (r.to_dense() * dense(m, device, "lg", (3, 4))).sum().backward()
    return r.to_dense().grad_fn.name(), s.grad


def _grads_mm(m, device):
    s = csr(m, device, requires_grad=True)
    d = m.tensor(DENSE, device=device, requires_grad=True)
    y = m.mm(s, d)
    (y * y).sum().backward()
    return y.grad_fn.name(), s.grad.layout, s.grad, d.grad


def _grads_sparse_mm(m, device):
    s = csr(m, device, requires_grad=True)
    d = m.tensor(DENSE, device=device, requires_grad=True)
    y = m.sparse.mm(s, d)
    (y * y).sum().backward()
    return y.grad_fn.name(), s.grad, d.grad


def _grads_dense_mm(m, device):
    s = csr(m, device, requires_grad=True)
    x = dense(m, device, "dx", (2, 3), requires_grad=True)
    y = x @ s
    (y * y).sum().backward()
    return y, x.grad, s.grad


def _grads_mm_reduce(m, device):
    out = []
    for reduce in ("sum", "mean", "amax", "amin"):
        s = m.sparse_csr_tensor(m.tensor(CROW), m.tensor(COL), m.tensor([1.0, -2.0, 3.0]), (3, 4), device=device,
                                requires_grad=True)
        d = m.tensor(DENSE, device=device, requires_grad=True)
        y = m.sparse.mm(s, d, reduce)
        (y * m.arange(15.0, device=device).reshape(3, 5)).sum().backward()
        out += [y.grad_fn.name(), y, s.grad, d.grad]
    return tuple(out)


def _grads_addmm(m, device):
    v = m.tensor(VAL, device=device, requires_grad=True)
    s = m.sparse_csr_tensor(m.tensor(CROW), m.tensor(COL), v, (3, 4), device=device)
    i = dense(m, device, "ai", (5,), requires_grad=True)
    d = m.tensor(DENSE, device=device, requires_grad=True)
    y = m.addmm(i, s, d, beta=0.5, alpha=-2.0)
    (y * y).sum().backward()
    return y.grad_fn.name(), y, v.grad, i.grad, d.grad


def _grads_conversions(m, device):
    x = m.tensor(sparse_matrix("conv", (4, 5), 0.5), device=device, requires_grad=True)
    s = x.to_sparse_csr()
    y = s.to_dense()
    (y * m.arange(20.0, device=device).reshape(4, 5)).sum().backward()
    return s.grad_fn.name(), y.grad_fn.name(), s.values().grad_fn.name(), x.grad


def _sum_grad(m, device):
    s = csr(m, device, requires_grad=True)
    y = s.sum() * 3
    y.backward()
    return s.sum().grad_fn.name(), s.grad


CASES = {
    # ------------------------------------------------------------------ construction and metadata
    "repr": lambda m, d: repr(csr(m)),
    "repr_inferred_size": lambda m, d: repr(m.sparse_csr_tensor(m.tensor(CROW), m.tensor(COL), m.tensor(VAL))),
    "repr_float64": lambda m, d: repr(csr(m, dtype=m.float64)),
    "repr_empty": lambda m, d: repr(m.zeros(2, 3).to_sparse_csr()),
    "repr_int": lambda m, d: repr(m.tensor([[1, 0], [0, 2]]).to_sparse_csr()),
    "repr_grad": lambda m, d: repr(m.tensor([[1.0, 0.0], [0.0, 2.0]], requires_grad=True).to_sparse_csr()),
    "repr_int32_indices": lambda m, d: repr(m.sparse_csr_tensor(m.tensor([0, 1], dtype=m.int32),
                                                                m.tensor([0], dtype=m.int32), [1.0])),
    "metadata": lambda m, d: (str(csr(m, d).layout), csr(m, d).is_sparse, csr(m, d).is_sparse_csr, csr(m, d)._nnz(),
                              csr(m, d).sparse_dim(), csr(m, d).dense_dim(), list(csr(m, d).shape), csr(m, d).dim(),
                              csr(m, d).numel()),
    "parts": lambda m, d: (csr(m, d).crow_indices(), csr(m, d).col_indices(), csr(m, d).values()),
    "int32_parts": lambda m, d: m.sparse_csr_tensor(m.tensor([0, 1, 1], dtype=m.int32),
                                                    m.tensor([2], dtype=m.int32), [4.0], device=d).crow_indices(),
    "to_dense": lambda m, d: csr(m, d).to_dense(),
    "to_sparse_coo": lambda m, d: csr(m, d).to_sparse(),
    "coo_is_coalesced": lambda m, d: csr(m, d).to_sparse().is_coalesced(),
    "from_dense": lambda m, d: m.tensor(sparse_matrix("fd", (5, 7), 0.4), device=d).to_sparse_csr(),
    "from_dense_nan": lambda m, d: m.tensor([[0.0, 1.0], [float("nan"), 0.0]], device=d).to_sparse_csr(),
    "from_coo": lambda m, d: m.sparse_coo_tensor([[1, 0, 1], [0, 1, 0]], [1.0, 2.0, 3.0], (2, 2),
                                                 device=d).to_sparse_csr(),
    "from_dense_bool": lambda m, d: m.tensor([[True, False], [False, True]], device=d).to_sparse_csr(),
    "to_sparse_layout": lambda m, d: m.tensor([[0.0, 2.0], [3.0, 0.0]], device=d).to_sparse(layout=m.sparse_csr),
    "no_rows": lambda m, d: m.zeros(0, 3, device=d).to_sparse_csr(),
    "no_cols": lambda m, d: m.zeros(3, 0, device=d).to_sparse_csr(),
    "to_float64": lambda m, d: csr(m, d).to(m.float64),
    "clone": lambda m, d: csr(m, d).clone(),
    "requires_grad_leaf": lambda m, d: (csr(m, d, requires_grad=True).requires_grad,
                                        csr(m, d, requires_grad=True).grad_fn),
    # ------------------------------------------------------------------ invariant and argument errors
    "err_last_crow": lambda m, d: _bad(m, d, [0, 2, 2, 4], COL, VAL, (3, 4), check_invariants=True),
    "err_first_crow": lambda m, d: _bad(m, d, [1, 2, 2, 3], COL, VAL, (3, 4), check_invariants=True),
    "err_crow_order": lambda m, d: _bad(m, d, [0, 2, 1, 3], COL, VAL, (3, 4), check_invariants=True),
    "err_col_bound": lambda m, d: _bad(m, d, CROW, [0, 4, 1], VAL, (3, 4), check_invariants=True),
    "err_col_negative": lambda m, d: _bad(m, d, CROW, [0, -1, 1], VAL, (3, 4), check_invariants=True),
    "err_col_unsorted": lambda m, d: _bad(m, d, CROW, [2, 0, 1], VAL, (3, 4), check_invariants=True),
    "err_col_repeated": lambda m, d: _bad(m, d, CROW, [0, 0, 1], VAL, (3, 4), check_invariants=True),
    "err_crow_length": lambda m, d: _bad(m, d, [0, 2, 2], COL, VAL, (3, 4), check_invariants=True),
    "err_col_length": lambda m, d: _bad(m, d, CROW, [0, 2], VAL, (3, 4), check_invariants=True),
    "err_index_dtypes": lambda m, d: m.sparse_csr_tensor(m.tensor(CROW), m.tensor(COL, dtype=m.int32), VAL, (3, 4),
                                                         device=d, check_invariants=True),
    "err_index_int16": lambda m, d: m.sparse_csr_tensor(m.tensor(CROW, dtype=m.int16), m.tensor(COL, dtype=m.int16),
                                                        VAL, (3, 4), device=d, check_invariants=True),
    "err_size_dims": lambda m, d: _bad(m, d, CROW, COL, VAL, (3,), check_invariants=True),
    "err_index_dims": lambda m, d: m.sparse_csr_tensor(m.tensor([CROW]), m.tensor(COL), m.tensor(VAL), (3, 4),
                                                       device=d, check_invariants=True),
    "err_values_0d": lambda m, d: m.sparse_csr_tensor(m.tensor([0, 1]), m.tensor([0]), m.tensor(1.0), (1, 1),
                                                      device=d, check_invariants=True),
    "err_int_requires_grad": lambda m, d: m.sparse_csr_tensor([0, 1], [0], [1], (1, 1), requires_grad=True),
    "err_strides": lambda m, d: csr(m, d).stride(),
    "err_is_contiguous": lambda m, d: csr(m, d).is_contiguous(),
    "err_numpy": lambda m, d: csr(m).numpy(),
    "err_data_ptr": lambda m, d: csr(m, d).data_ptr(),
    "err_storage": lambda m, d: csr(m, d).untyped_storage(),
    "err_indices": lambda m, d: csr(m, d).indices(),
    "err_crow_of_dense": lambda m, d: m.ones(2, 2, device=d).crow_indices(),
    "err_crow_of_coo": lambda m, d: m.ones(2, 2, device=d).to_sparse().crow_indices(),
    "err_col_of_dense": lambda m, d: m.ones(2, 2, device=d).col_indices(),
    "err_dense_dim_csr": lambda m, d: csr(m, d).to_sparse_csr(dense_dim=1),
    "err_dense_dim_dense": lambda m, d: m.ones(3, 3, device=d).to_sparse_csr(dense_dim=1),
    "err_coo_3d": lambda m, d: m.ones(2, 3, 4, device=d).to_sparse().to_sparse_csr(),
    "err_to_coo_sparse_dim": lambda m, d: csr(m, d).to_sparse(1),
    "err_to_sparse_csr_sparse_dim": lambda m, d: m.ones(2, 2, device=d).to_sparse(2, layout=m.sparse_csr),
    "err_to_sparse_csr_blocksize": lambda m, d: m.ones(2, 2, device=d).to_sparse(layout=m.sparse_csr,
                                                                                blocksize=(1, 1)),
    "err_coo_to_sparse_csr_blocksize": lambda m, d: m.ones(2, 2, device=d).to_sparse().to_sparse(
        layout=m.sparse_csr, blocksize=(1, 1)),
    "coo_to_sparse_layout": lambda m, d: m.sparse_coo_tensor([[1, 0], [0, 1]], [1.0, 2.0], (2, 2),
                                                             device=d).to_sparse(layout=m.sparse_csr),
    "err_1d_to_csr": lambda m, d: m.tensor([1.0, 0.0, 2.0], device=d).to_sparse_csr(),
    "err_view": lambda m, d: csr(m, d).view(12),
    "err_max": lambda m, d: csr(m, d).max(),
    "err_softmax": lambda m, d: csr(m, d).softmax(0),
    # ------------------------------------------------------------------ elementwise forms
    "neg": lambda m, d: -csr(m, d),
    "mul_number": lambda m, d: csr(m, d) * 2,
    "rmul_number": lambda m, d: 2.5 * csr(m, d),
    "err_div_number": lambda m, d: csr(m, d) / 4,
    "sin": lambda m, d: m.sin(csr(m, d)),
    "abs": lambda m, d: (-csr(m, d)).abs(),
    "sum": lambda m, d: csr(m, d).sum(),
    "sum_grad": lambda m, d: _sum_grad(m, d),
    "err_sum_dim": lambda m, d: csr(m, d).sum(0),
    "err_mean": lambda m, d: csr(m, d).mean(),
    "add_same": lambda m, d: csr(m, d) + csr(m, d),
    "dense_plus_csr": lambda m, d: m.ones(3, 4, device=d) + csr(m, d),
    "csr_plus_dense": lambda m, d: csr(m, d) + m.ones(3, 4, device=d),
    # ------------------------------------------------------------------ products
    "mm": lambda m, d: m.mm(csr(m, d), m.tensor(DENSE, device=d)),
    "matmul": lambda m, d: csr(m, d) @ m.tensor(DENSE, device=d),
    "matmul_vector": lambda m, d: m.matmul(csr(m, d), m.tensor([1.0, -1.0, 2.0, 0.5], device=d)),
    "dense_mm_csr": lambda m, d: m.mm(m.tensor(DENSE, device=d)[:2, :3], csr(m, d)),
    "sparse_mm": lambda m, d: m.sparse.mm(csr(m, d), m.tensor(DENSE, device=d)),
    "addmm": lambda m, d: m.addmm(m.ones(3, 5, device=d), csr(m, d), m.tensor(DENSE, device=d), beta=0.5, alpha=2),
    "addmm_broadcast": lambda m, d: m.addmm(m.arange(5.0, device=d), csr(m, d), m.tensor(DENSE, device=d)),
    "mm_float64_big": lambda m, d: m.mm(m.tensor(sparse_matrix("big", (19, 23), 0.3), device=d).to_sparse_csr(),
                                        dense(m, d, "bigd", (23, 37), "float64")),
    "mm_reduce_mean": lambda m, d: m.sparse.mm(csr(m, d), m.tensor(DENSE, device=d), "mean"),
    "mm_reduce_amax_big": lambda m, d: m.sparse.mm(m.tensor(sparse_matrix("rbig", (19, 23), 0.3), device=d)
                                                   .to_sparse_csr(), dense(m, d, "rbigd", (23, 37), "float64"),
                                                   "amax"),
    "mm_reduce_amin_keyword": lambda m, d: m.sparse.mm(csr(m, d), m.tensor(DENSE, device=d), reduce="amin"),
    "err_mm_reduce_prod": lambda m, d: m.sparse.mm(csr(m, d), m.tensor(DENSE, device=d), "prod"),
    "err_mm_reduce_coo": lambda m, d: m.sparse.mm(csr(m, d).to_sparse(), m.tensor(DENSE, device=d), "sum"),
    "err_mm_reduce_dtype": lambda m, d: m.sparse.mm(csr(m, d, dtype=m.float64), m.tensor(DENSE, device=d), "sum"),
    "err_mm_reduce_int": lambda m, d: m.sparse.mm(csr(m, d).int(), m.tensor(DENSE, device=d).int(), "sum"),
    "err_mm_shapes": lambda m, d: m.mm(csr(m, d), m.ones(3, 5, device=d)),
    "err_mm_dtypes": lambda m, d: m.mm(csr(m, d), m.ones(4, 5, dtype=m.float64, device=d)),
    "err_mm_vector": lambda m, d: m.mm(csr(m, d), m.ones(4, device=d)),
    "err_mm_int": lambda m, d: m.mm(csr(m, d).int(), m.ones(4, 2, dtype=m.int32, device=d)),
    "err_mm_bool": lambda m, d: m.mm(csr(m, d).bool(), m.ones(4, 2, dtype=m.bool, device=d)),
    "err_addmm_dtype": lambda m, d: m.addmm(m.zeros(3, 2, dtype=m.float64, device=d), csr(m, d), m.ones(4, 2, device=d)),
    "err_addmm_csr_input": lambda m, d: m.addmm(csr(m, d), m.ones(3, 4, device=d), m.ones(4, 4, device=d)),
    # ------------------------------------------------------------------ sampled_addmm
    "sampled": lambda m, d: m.sparse.sampled_addmm(csr(m, d), dense(m, d, "sa", (3, 5)), dense(m, d, "sb", (5, 4))),
    "sampled_beta_alpha": lambda m, d: m.sparse.sampled_addmm(csr(m, d, dtype=m.float64),
                                                              dense(m, d, "sa", (3, 5), "float64"),
                                                              dense(m, d, "sb", (5, 4), "float64"),
                                                              beta=0.5, alpha=-2),
    "sampled_beta_zero_nan": lambda m, d: m.sparse.sampled_addmm(
        m.sparse_csr_tensor(m.tensor(CROW), m.tensor(COL), m.tensor([float("nan"), 2.0, 3.0]), (3, 4), device=d),
        dense(m, d, "sa", (3, 5)), dense(m, d, "sb", (5, 4)), beta=0),
    "sampled_transposed_mat2": lambda m, d: m.sparse.sampled_addmm(csr(m, d, dtype=m.float64),
                                                                   dense(m, d, "sa", (3, 5), "float64"),
                                                                   dense(m, d, "st", (4, 5), "float64").t()),
    "sampled_k0": lambda m, d: m.sparse.sampled_addmm(csr(m, d), m.ones(3, 0, device=d), m.ones(0, 4, device=d)),
    "sampled_no_entries": lambda m, d: m.sparse.sampled_addmm(m.zeros(3, 4, device=d).to_sparse_csr(),
                                                              m.ones(3, 2, device=d), m.ones(2, 4, device=d)),
    "err_sampled_dense": lambda m, d: m.sparse.sampled_addmm(m.zeros(3, 4, device=d), m.ones(3, 2, device=d),
                                                             m.ones(2, 4, device=d)),
    "err_sampled_coo": lambda m, d: m.sparse.sampled_addmm(m.zeros(3, 4, device=d).to_sparse(),
                                                           m.ones(3, 2, device=d), m.ones(2, 4, device=d)),
    "err_sampled_mat1_csr": lambda m, d: m.sparse.sampled_addmm(csr(m, d), m.ones(3, 2, device=d).to_sparse_csr(),
                                                                m.ones(2, 4, device=d)),
    "err_sampled_mat2_coo": lambda m, d: m.sparse.sampled_addmm(csr(m, d), m.ones(3, 2, device=d),
                                                                m.ones(2, 4, device=d).to_sparse()),
    "err_sampled_shapes": lambda m, d: m.sparse.sampled_addmm(csr(m, d), m.ones(3, 5, device=d), m.ones(4, 4, device=d)),
    "err_sampled_rows": lambda m, d: m.sparse.sampled_addmm(csr(m, d), m.ones(2, 5, device=d), m.ones(5, 4, device=d)),
    "err_sampled_cols": lambda m, d: m.sparse.sampled_addmm(csr(m, d), m.ones(3, 5, device=d), m.ones(5, 3, device=d)),
    "err_sampled_mat_dtypes": lambda m, d: m.sparse.sampled_addmm(csr(m, d), m.ones(3, 2, dtype=m.float64, device=d),
                                                                  m.ones(2, 4, device=d)),
    "err_sampled_self_dtype": lambda m, d: m.sparse.sampled_addmm(csr(m, d, dtype=m.float64), m.ones(3, 2, device=d),
                                                                  m.ones(2, 4, device=d)),
    "err_sampled_mat1_1d": lambda m, d: m.sparse.sampled_addmm(csr(m, d), m.ones(3, device=d), m.ones(2, 4, device=d)),
    "err_sampled_mat2_1d": lambda m, d: m.sparse.sampled_addmm(csr(m, d), m.ones(3, 2, device=d), m.ones(2, device=d)),
    "err_sampled_batch": lambda m, d: m.sparse.sampled_addmm(csr(m, d), m.ones(1, 3, 2, device=d),
                                                             m.ones(2, 4, device=d)),
    "err_sampled_int": lambda m, d: m.sparse.sampled_addmm(csr(m, d).int(), m.ones(3, 2, dtype=m.int32, device=d),
                                                           m.ones(2, 4, dtype=m.int32, device=d)),
    "err_sampled_half": lambda m, d: m.sparse.sampled_addmm(csr(m, d).half(), m.ones(3, 2, dtype=m.float16, device=d),
                                                            m.ones(2, 4, dtype=m.float16, device=d)),
    # ------------------------------------------------------------------ gradients
    "grads_sampled": _grads_sampled,
    "grads_sampled_leaf": _grads_sampled_leaf,
    "grads_mm": _grads_mm,
    "grads_sparse_mm": _grads_sparse_mm,
    "grads_dense_mm": _grads_dense_mm,
    "grads_addmm": _grads_addmm,
    "grads_mm_reduce": _grads_mm_reduce,
    "grads_conversions": _grads_conversions,
}
