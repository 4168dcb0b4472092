"""OpInfo records of the sparse ops: the COO ones (issue 21 item 8): Tensor.to_sparse and the sparse @
dense table entry ``sparse_mm`` (tt.sparse.mm); the CSR ones: sparse.sampled_addmm (its table entry
``sparse_sampled_addmm``) and tt.sparse.mm(csr, dense, reduce) (op_db's ``sparse.mm`` variant).
Checked by tests/test_ops_table.py (cpu and the emulated cuda) and tests/test_op_gradients.py;
tests/test_sparse.py and tests/test_sparse_csr.py have the rest.

The records' ops take and return dense tensors (a sparse tensor has no host array for the
harness to read): to_sparse returns its indices and values, sparse_mm builds its sparse operand
from coordinates and values. Oracles: NumPy written out here (np.argwhere for the nonzero
coordinates in row-major order; the dense matrix the coordinates stand for, duplicates summed
by np.add.at, times the dense operand).
"""
from __future__ import annotations

import numpy as np

import tritensor as tt
from opinfo import CPU_ONLY_GRADGRAD, GRAD_CASES, SampleInput, _randn, record, rng_for, values


# --------------------------------------------------------------------------- to_sparse
def _to_sparse_parts(x, *sparse_dim):
    s = x.to_sparse(*sparse_dim)
    return s.indices(), s.values()


def _to_sparse_reference(x, sparse_dim=None):
    """The coordinates (row-major, sparse_dim x nnz) of the nonzero slices over the first
    ``sparse_dim`` dims (NaN counts as nonzero), and those slices."""
    sd = x.ndim if sparse_dim is None else sparse_dim
    nonzero = x != 0
    if sd < x.ndim:
        nonzero = nonzero.any(axis=tuple(range(sd, x.ndim)))
    idx = np.argwhere(nonzero).T.astype(np.int64)
    return idx, x[tuple(idx)] if sd else x.reshape((1,) + x.shape)[: idx.shape[1]]


def _samples_to_sparse(device, dtype):
    rng = rng_for("to_sparse", dtype)

    def make(shape, density=0.4):
        v = values(shape, dtype, "nonzero", rng)
        keep = rng.random(shape) < density
        return tt.tensor(np.where(keep, v, 0).astype(v.dtype), dtype=dtype, device=device)

    yield SampleInput((make((5, 7)),), desc="all-dims")
    yield SampleInput((make((3, 4, 5), 0.15), 2), desc="hybrid-3d")
    if device != "cpu" and dtype is not tt.float32:
        return       # (the layouts in every dtype on cpu; on the emulated device in float32)
    yield SampleInput((make((5, 7)), 1), desc="hybrid-rows")
    yield SampleInput((make((9, 6)).t(), 2), desc="transposed")
    yield SampleInput((make((10, 8))[1::3, ::2],), desc="sliced")
    yield SampleInput((make((0, 3)),), desc="empty")
    yield SampleInput((make(()), 0), desc="0d-sparse_dim0")
    yield SampleInput((make((4, 3), 0.0), 1), desc="all-zero")
    if dtype.is_floating_point:
        x = np.array([[0.0, np.nan, 0.0], [-0.0, np.inf, 1.5]])
        yield SampleInput((tt.tensor(x, dtype=dtype, device=device),), desc="nan-inf-signed-zero")


record("Tensor.to_sparse", _to_sparse_parts, (tt.bool, tt.int32, tt.int64, tt.float16, tt.float32, tt.float64),
       _samples_to_sparse, _to_sparse_reference, op_db=("to_sparse",))
# d(to_sparse(x))/dx is the identity read at the entries (torch's ToSparseBackward: the gradient
# made dense); inputs with no zero, so every position is an entry
GRAD_CASES["Tensor.to_sparse"] = lambda d: (lambda x: (x.to_sparse(1) * 3).to_dense(), (_randn((1, 2), d),), {})


# --------------------------------------------------------------------------- sparse @ dense
def _sparse_mm(indices, vals, dense, size):
    return tt.sparse.mm(tt.sparse_coo_tensor(indices, vals, size), dense)


def _sparse_mm_reference(indices, vals, dense, size):
    s = np.zeros(size, dtype=np.float64)
    np.add.at(s, tuple(indices), vals.astype(np.float64))
    return s @ dense.astype(np.float64)


def _samples_sparse_mm(device, dtype):
    rng = rng_for("sparse_mm", dtype)

    def coo(m, k, nnz):     # random coordinates: duplicates, unsorted, empty rows
        idx = np.stack([rng.integers(0, m, nnz), rng.integers(0, k, nnz)]) if nnz else np.zeros((2, 0), np.int64)
        return tt.tensor(idx, device=device), tt.tensor(values((nnz,), dtype, "any", rng), dtype=dtype, device=device)

    def dense(shape):
        return tt.tensor(values(shape, dtype, "any", rng), dtype=dtype, device=device)

    # 19 rows (3 row blocks of the interpreter's 8), 37 columns (3 column blocks of 16)
    yield SampleInput(coo(19, 7, 40) + (dense((7, 37)), (19, 7)), desc="duplicates")
    if device != "cpu" and dtype is not tt.float32:
        return       # (the layouts in every dtype on cpu; on the emulated device in float32)
    yield SampleInput(coo(9, 13, 20) + (dense((6, 13)).t(), (9, 13)), desc="transposed-dense")
    yield SampleInput(coo(5, 8, 12) + (dense((16, 9))[::2, 1::2], (5, 8)), desc="sliced-dense")
    yield SampleInput(coo(4, 3, 0) + (dense((3, 5)), (4, 3)), desc="no-entries")
    yield SampleInput(coo(4, 3, 5) + (dense((3, 0)), (4, 3)), desc="no-columns")


record("sparse_mm", _sparse_mm, (tt.int64, tt.float16, tt.bfloat16, tt.float32, tt.float64), _samples_sparse_mm,
       _sparse_mm_reference, op_db=("sparse.mm",),
       tolerances={tt.float16: (2e-3, 2e-2), tt.bfloat16: (1.6e-2, 1.5e-1), tt.float32: (1e-5, 1e-5),
                   tt.float64: (1e-12, 1e-12)})

# (16-bit floats: duplicates are summed in the values dtype by coalesce, as torch does, before the
# float32 accumulation: an absolute error of a few of its ulps where a row cancels)

# gradients to the values (through the constructor) and to the dense operand, small: each
# evaluation is ~20 launches on the emulated device (duplicates' gradients: tests/test_sparse.py);
# the second derivative on cpu (CPU_ONLY_GRADGRAD)
def _sparse_mm_grad_case(d):
    idx = tt.tensor([[0, 1, 2], [1, 0, 1]], device=d)
    return (lambda v, dense: tt.sparse.mm(tt.sparse_coo_tensor(idx, v, (3, 2), is_coalesced=True), dense),
            (_randn((3,), d), _randn((2, 1), d)), {})


GRAD_CASES["sparse_mm"] = _sparse_mm_grad_case
CPU_ONLY_GRADGRAD.update({"sparse_mm", "Tensor.to_sparse"})


# --------------------------------------------------------------------------- sampled_addmm (CSR)
def _sampled_addmm(crow, col, vals, mat1, mat2, size, **kw):
    return tt.sparse.sampled_addmm(tt.sparse_csr_tensor(crow, col, vals, size), mat1, mat2, **kw).values()


def _sampled_addmm_reference(crow, col, vals, mat1, mat2, size, beta=1.0, alpha=1.0):
    """beta * input + alpha * mat1 @ mat2 read at input's entries (rows from the row pointers)."""
    rows = np.repeat(np.arange(size[0]), np.diff(crow))
    prod = mat1.astype(np.float64) @ mat2.astype(np.float64)
    return beta * vals.astype(np.float64) + alpha * prod[rows, col.astype(np.int64)]


def _samples_sampled_addmm(device, dtype):
    rng = rng_for("sampled_addmm", dtype)

    def pattern(m, n, density, index_dtype=tt.int64):
        keep = rng.random((m, n)) < density
        crow = np.concatenate([[0], np.cumsum(keep.sum(1))])
        col = np.nonzero(keep)[1]
        v = values((len(col),), dtype, "any", rng)
        return (tt.tensor(crow, dtype=index_dtype, device=device), tt.tensor(col, dtype=index_dtype, device=device),
                tt.tensor(v, dtype=dtype, device=device))

    def dense(shape):
        return tt.tensor(values(shape, dtype, "any", rng), dtype=dtype, device=device)

    # 5 x 6 at ~60%: ~18 entries (three blocks of the interpreter's 8), K = 9 (three slices of 4)
    yield SampleInput(pattern(5, 6, 0.6) + (dense((5, 9)), dense((9, 6)), (5, 6)), {"beta": 0.5, "alpha": -2.0},
                      desc="beta-alpha")
    yield SampleInput(pattern(4, 7, 0.5, tt.int32) + (dense((9, 4)).t(), dense((7, 9)).t(), (4, 7)),
                      desc="transposed-int32-indices")
    if device != "cpu" and dtype is not tt.float32:
        return
    yield SampleInput(pattern(3, 5, 0.7) + (dense((6, 8))[::2, 1::3], dense((3, 5)), (3, 5)), desc="sliced-mat1")
    yield SampleInput(pattern(3, 4, 0.0) + (dense((3, 2)), dense((2, 4)), (3, 4)), desc="no-entries")
    yield SampleInput(pattern(3, 4, 0.5) + (dense((3, 0)), dense((0, 4)), (3, 4)), {"beta": 2.0}, desc="k0")


record("sparse_sampled_addmm", _sampled_addmm, (tt.float32, tt.float64), _samples_sampled_addmm,
       _sampled_addmm_reference, op_db=("sparse.sampled_addmm",),
       tolerances={tt.float32: (1e-5, 1e-5), tt.float64: (1e-12, 1e-12)})


# gradients to the input's values (through the constructor), mat1 and mat2; small: each evaluation
# is a few launches on the emulated device (the second derivative on cpu)
def _sampled_addmm_grad_case(d):
    crow, col = tt.tensor([0, 2, 2, 3], device=d), tt.tensor([0, 2, 1], device=d)
    return (lambda v, a, b: tt.sparse.sampled_addmm(tt.sparse_csr_tensor(crow, col, v, (3, 3)), a, b, beta=0.5,
                                                    alpha=1.5).values(),
            (_randn((3,), d), _randn((3, 2), d), _randn((2, 3), d)), {})


GRAD_CASES["sparse_sampled_addmm"] = _sampled_addmm_grad_case
CPU_ONLY_GRADGRAD.add("sparse_sampled_addmm")


# --------------------------------------------------------------------------- sparse.mm(csr, dense, reduce)
def _sparse_mm_reduce(crow, col, vals, dense, size, reduce):
    return tt.sparse.mm(tt.sparse_csr_tensor(crow, col, vals, size), dense, reduce)


def _sparse_mm_reduce_reference(crow, col, vals, dense, size, reduce):
    """Each row's products values[e] * dense[col[e]] combined by ``reduce``; zeros for an empty row."""
    out = np.zeros((size[0], dense.shape[1]))
    for r in range(size[0]):
        e = slice(crow[r], crow[r + 1])
        if crow[r + 1] > crow[r]:
            p = vals[e, None].astype(np.float64) * dense[col[e]].astype(np.float64)
            out[r] = {"sum": np.sum, "mean": np.mean, "amax": np.max, "amin": np.min}[reduce](p, axis=0)
    return out


def _samples_sparse_mm_reduce(device, dtype):
    rng = rng_for("sparse_mm_reduce", dtype)
    keep = rng.random((9, 11)) < 0.4
    keep[4] = False                                   # an empty row
    crow = tt.tensor(np.concatenate([[0], np.cumsum(keep.sum(1))]), device=device)
    col = tt.tensor(np.nonzero(keep)[1], device=device)
    vals = tt.tensor(values((int(keep.sum()),), dtype, "any", rng), dtype=dtype, device=device)
    dense = tt.tensor(values((11, 37), dtype, "any", rng), dtype=dtype, device=device)   # 3 column blocks of 16
    for reduce in ("sum", "mean", "amax", "amin"):
        if device == "cpu" or dtype is tt.float32 or reduce == "mean":     # (one sample per dtype on cuda)
            yield SampleInput((crow, col, vals, dense, (9, 11), reduce), desc=reduce)


record("sparse_mm_reduce", _sparse_mm_reduce, (tt.float16, tt.bfloat16, tt.float32, tt.float64),
       _samples_sparse_mm_reduce, _sparse_mm_reduce_reference, op_db=("sparse.mm",),     # (op_db's is this variant)
       tolerances={tt.float16: (2e-3, 2e-2), tt.bfloat16: (1.6e-2, 1.5e-1), tt.float32: (1e-5, 1e-5),
                   tt.float64: (1e-12, 1e-12)})


# the extremes' gradient (each row's first extreme entry takes it; the sum's and the mean's:
# tests/test_sparse_csr.py's torch-recorded gradients)
def _sparse_mm_reduce_grad_case(d):
    crow, col = tt.tensor([0, 2, 2, 3], device=d), tt.tensor([0, 2, 1], device=d)
    return (lambda v, dense: tt.sparse.mm(tt.sparse_csr_tensor(crow, col, v, (3, 3)), dense, "amax"),
            (_randn((3,), d), _randn((3, 1), d)), {})


GRAD_CASES["sparse_mm_reduce"] = _sparse_mm_reduce_grad_case
CPU_ONLY_GRADGRAD.add("sparse_mm_reduce")
