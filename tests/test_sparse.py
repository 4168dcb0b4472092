"""Sparse COO tensors (issue 21 item 8): construction, coalesce, conversions, sparse.mm / ``@``
(the SpMM kernel on the emulated device), sparse.sum, arithmetic, gradients, repr and errors.

Oracles: the dense matrix a set of coordinates stands for, built by NumPy's np.add.at (and
SciPy's coo_matrix where SciPy is present); hand-computed gradients; torch's reprs, node names,
gradients and error texts recorded literally by tests/data/make_sparse_values.py (torch 2.13).
The OpInfo records (tests/opinfo_sparse.py) check to_sparse and sparse.mm in every dtype and
their gradcheck / gradgradcheck.
"""
import pickle

import numpy as np
import pytest

import opinfo  # noqa: F401  (the records first: xdist workers build OPS with every family)
import tritensor as tt
from conftest import to_numpy

I = [[0, 1, 0, 2], [1, 0, 1, 2]]        # (0, 1) twice: an uncoalesced tensor
V = [1.0, 2.0, 3.0, 4.0]
D = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]


def _dense_of(indices, values, shape):
    out = np.zeros(shape, dtype=np.float64)
    np.add.at(out, tuple(np.asarray(indices)), np.asarray(values, dtype=np.float64))
    return out


def _random_coo(rng, m, k, nnz):
    return np.stack([rng.integers(0, m, nnz), rng.integers(0, k, nnz)]), rng.standard_normal(nnz)


# --------------------------------------------------------------------------- construction
def test_construction_and_metadata():
    s = tt.sparse_coo_tensor(I, V, (3, 3))
    assert s.layout is tt.sparse_coo and s.is_sparse and not tt.ones(1).is_sparse
    assert tuple(s.shape) == (3, 3) and s.dim() == 2 and s.numel() == 9
    assert (s.sparse_dim(), s.dense_dim(), s._nnz(), s.dtype) == (2, 0, 4, tt.float32)
    assert not s.is_coalesced() and s.stride() == (0, 0) and not s.is_contiguous()
    assert s._indices().dtype is tt.int64 and s._indices().tolist() == I and s._values().tolist() == V
    # the size inferred: one past the largest index, then the values' dense dims (a hybrid tensor)
    h = tt.sparse_coo_tensor([[0, 2]], [[1.0, 2.0], [3.0, 4.0]])
    assert tuple(h.shape) == (3, 2) and (h.sparse_dim(), h.dense_dim()) == (1, 1)
    e = tt.sparse_coo_tensor(tt.zeros(2, 0, dtype=tt.int64), tt.zeros(0), (2, 3))
    assert e._nnz() == 0 and e.is_coalesced() and to_numpy(e.to_dense()).tolist() == [[0.0] * 3] * 2
    assert tt.sparse_coo_tensor([[0]], [1.0]).is_coalesced()          # (one entry: coalesced, as torch)
    d = tt.sparse_coo_tensor(I, V, (3, 3), dtype=tt.float64, requires_grad=True)
    assert d.dtype is tt.float64 and d.requires_grad and d.grad_fn is None


@pytest.mark.parametrize("call,error,message", [
    (lambda: tt.sparse_coo_tensor([[0, 1]], [1.0, 2.0, 3.0]), RuntimeError,
     "indices and values must have same nnz, but got nnz from indices: 2, nnz from values: 3"),
    (lambda: tt.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (2, 2)), RuntimeError,
     "'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = 2, sparse_dim = 1, dense_dim = 0"),
    (lambda: tt.sparse_coo_tensor([[0, -1]], [1.0, 2.0]), RuntimeError, "found negative index -1 for dim 0"),
    (lambda: tt.sparse_coo_tensor([[0, 1]], [[1.0], [2.0]], (2, 3)), RuntimeError,
     r"values has incorrect size, expected [2, 3], got [2, 1]"),
    # torch checks these with check_invariants=True; tritensor always (a bad index reads outside memory)
    (lambda: tt.sparse_coo_tensor([[0, 5]], [1.0, 2.0], (3,)), RuntimeError,
     "size is inconsistent with indices: for dim 0, size is 3 but found index 5"),
    (lambda: tt.sparse_coo_tensor([[1, 0]], [1.0, 2.0], (2,), is_coalesced=True), RuntimeError,
     "cannot set is_coalesced to true if indices correspond to uncoalesced COO tensor"),
    (lambda: tt.sparse_coo_tensor(I, V, (3, 3)).values(), RuntimeError,
     "Cannot get values on an uncoalesced tensor, please call .coalesce() first"),
    (lambda: tt.ones(2, 2).to_sparse(3), RuntimeError,
     "dense_to_sparse: sparse_dim argument must be in [0,2] range, but 3 is given"),
    (lambda: tt.ones(2, 2).to_sparse().to_sparse(1), RuntimeError,
     "to_sparse: conversion from Sparse to Sparse with sparse_dim argument !=self.sparse_dim() is not supported"),
    (lambda: tt.sparse.sum(tt.ones(2, 2)), RuntimeError,
     "coalesce expected sparse coordinate tensor layout but got Strided"),
])
def test_errors_as_torch(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message


def test_repr_as_torch():
    s = tt.sparse_coo_tensor(I, V, (3, 3))
    assert repr(s) == ("tensor(indices=tensor([[0, 1, 0, 2],\n"
                       "                       [1, 0, 1, 2]]),\n"
                       "       values=tensor([1., 2., 3., 4.]),\n"
                       "       size=(3, 3), nnz=4, layout=tritensor.sparse_coo)")
    e = tt.sparse_coo_tensor(tt.zeros(1, 0, dtype=tt.int64), tt.zeros(0, dtype=tt.float64), (4,))
    assert repr(e) == ("tensor(indices=tensor([], size=(1, 0)),\n"
                       "       values=tensor([], size=(0,)),\n"
                       "       size=(4,), nnz=0, dtype=tritensor.float64, layout=tritensor.sparse_coo)")
    g = tt.sparse_coo_tensor([[1]], [2.0], (2,)).requires_grad_()
    assert repr(g * 2).endswith("size=(2,), nnz=1, layout=tritensor.sparse_coo, grad_fn=<MulBackward0>)")


# --------------------------------------------------------------------------- coalesce, conversions
def test_coalesce_against_numpy_and_scipy(device):
    rng = np.random.default_rng(0)
    idx, vals = _random_coo(rng, 9, 37, 60)
    s = tt.sparse_coo_tensor(tt.tensor(idx, device=device), tt.tensor(vals, device=device), (9, 37))
    c = s.coalesce()
    lin = idx[0] * 37 + idx[1]
    keys = np.unique(lin)
    assert c.is_coalesced() and c.coalesce() is c and c._nnz() == len(keys)
    np.testing.assert_array_equal(to_numpy(c.indices()), np.stack([keys // 37, keys % 37]))
    np.testing.assert_allclose(to_numpy(c.values()), [vals[lin == k].sum() for k in keys], rtol=1e-12)
    np.testing.assert_allclose(to_numpy(s.to_dense()), _dense_of(idx, vals, (9, 37)), rtol=1e-12)
    sp = pytest.importorskip("scipy.sparse")
    np.testing.assert_allclose(to_numpy(s.to_dense()), sp.coo_matrix((vals, idx), shape=(9, 37)).toarray(),
                               rtol=1e-12)


def test_hybrid_coalesce_and_to_dense():
    s = tt.sparse_coo_tensor([[0, 1, 0]], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    c = s.coalesce()
    assert c.indices().tolist() == [[0, 1]] and c.values().tolist() == [[6.0, 8.0], [3.0, 4.0]]
    assert s.to_dense().tolist() == [[6.0, 8.0], [3.0, 4.0]]


def test_to_sparse_round_trip(device):
    x = tt.tensor([[0.0, 1.5, 0.0], [float("nan"), 0.0, -2.0]], device=device)
    s = x.to_sparse()
    assert s.is_coalesced() and s.indices().tolist() == [[0, 1, 1], [1, 0, 2]]     # NaN is an entry
    np.testing.assert_array_equal(to_numpy(s.to_dense()), to_numpy(x))
    r = x.to_sparse(1)                                # rows with an entry, whole
    assert r.indices().tolist() == [[0, 1]] and tuple(r.values().shape) == (2, 3)
    assert tt.zeros(2, 2, device=device).to_sparse()._nnz() == 0
    assert s.to_sparse() is s and x.to_dense() is x


# --------------------------------------------------------------------------- sparse @ dense
def test_sparse_mm_against_numpy(device):
    """19 x 7 @ 7 x 37 on the emulated device: three row blocks of 8, three column blocks of 16,
    duplicates and empty rows; sparse @ dense and dense @ sparse; a transposed dense operand."""
    rng = np.random.default_rng(1)
    idx, vals = _random_coo(rng, 19, 7, 30)
    dense = rng.standard_normal((7, 37))
    s = tt.sparse_coo_tensor(tt.tensor(idx, device=device), tt.tensor(vals, device=device), (19, 7))
    expected = _dense_of(idx, vals, (19, 7)) @ dense
    np.testing.assert_allclose(to_numpy(tt.sparse.mm(s, tt.tensor(dense, device=device))), expected, rtol=1e-12,
                               atol=1e-12)
    dense_t = tt.tensor(dense.T.copy(), device=device).t()
    np.testing.assert_allclose(to_numpy(s @ dense_t), expected, rtol=1e-12, atol=1e-12)
    left = tt.tensor(dense.T[:5].copy(), device=device)            # (5, 7) @ (7, 19)^T's transpose
    st = tt.sparse_coo_tensor(tt.tensor(idx[::-1].copy(), device=device), tt.tensor(vals, device=device), (7, 19))
    out = left @ st
    assert out.is_contiguous() and out.grad_fn is None
    np.testing.assert_allclose(to_numpy(out), dense.T[:5] @ _dense_of(idx[::-1], vals, (7, 19)), rtol=1e-12,
                               atol=1e-12)


def test_sparse_mm_integers_and_dense_operands():
    s = tt.tensor([[1, 0], [0, 2]]).to_sparse()
    assert tt.sparse.mm(s, tt.ones(2, 3, dtype=tt.int64)).tolist() == [[1, 1, 1], [2, 2, 2]]
    assert tt.sparse.mm(tt.ones(2, 2), tt.ones(2, 2)).tolist() == [[2.0, 2.0], [2.0, 2.0]]   # torch's too


@pytest.mark.parametrize("call,error,message", [
    (lambda s: tt.sparse.mm(s, tt.ones(3, 3)), RuntimeError, "addmm: Argument #3 (dense): Expected dim 0 size 2, got 3"),
    (lambda s: s @ tt.ones(2, 3, dtype=tt.float64), RuntimeError, "expected scalar type Float but found Double"),
    (lambda s: tt.sparse.mm(tt.ones(2, 2, 2).to_sparse(), tt.ones(2, 2)), RuntimeError,
     "addmm: matrices expected, got 3D tensor"),
    (lambda s: tt.sparse.mm(tt.ones(2, 2, 1).to_sparse(2), tt.ones(2, 2)), RuntimeError,
     "addmm: scalar values expected, got 1D values"),
    (lambda s: tt.sparse.mm(tt.tensor([[True]]).to_sparse(), tt.ones(1, 1, dtype=tt.bool)), NotImplementedError,
     "\"addmm_sparse_dense\" not implemented for 'Bool'"),
])
def test_sparse_mm_errors_as_torch(call, error, message):
    with pytest.raises(error) as info:
        call(tt.tensor([[1.0, 0.0], [0.0, 2.0]]).to_sparse())
    assert str(info.value) == message


# --------------------------------------------------------------------------- gradients (torch's, recorded)
def test_sparse_mm_gradients(device):
    """torch.sparse.mm: the sparse leaf's gradient is sparse over its coalesced pattern; the values
    a tensor was built from get G D^T read at each coordinate (duplicates each get theirs)."""
    dense = tt.tensor(D, device=device)
    s = tt.sparse_coo_tensor(I, V, (3, 3), device=device).requires_grad_()
    y = tt.sparse.mm(s, dense)
    assert y.grad_fn.name() == "SparseAddmmBackward0"
    y.sum().backward()
    assert s.grad.layout is tt.sparse_coo and s.grad.indices().tolist() == [[0, 1, 2], [1, 0, 2]]
    assert s.grad.values().tolist() == [7.0, 3.0, 11.0]        # row sums of D at columns 1, 0, 2
    v = tt.tensor(V, device=device, requires_grad=True)
    dg = tt.tensor(D, device=device, requires_grad=True)
    y = tt.sparse.mm(tt.sparse_coo_tensor(tt.tensor(I, device=device), v, (3, 3)), dg)
    (y * y).sum().backward()
    assert v.grad.tolist() == [200.0, 20.0, 200.0, 488.0]
    assert dg.grad.tolist() == [[8.0, 16.0], [96.0, 128.0], [160.0, 192.0]]


def test_mm_gradient_to_the_sparse_operand_is_dense():
    """torch's mm / @ (MmBackward0), unlike torch.sparse.mm, gives the sparse operand G D^T whole."""
    s = tt.sparse_coo_tensor(I, V, (3, 3)).requires_grad_()
    y = s @ tt.tensor(D)
    assert y.grad_fn.name() == "MmBackward0"
    (y * y).sum().backward()
    assert s.grad.layout is tt.strided
    assert s.grad.tolist() == [[88.0, 200.0, 312.0], [20.0, 44.0, 68.0], [136.0, 312.0, 488.0]]
    s = tt.sparse_coo_tensor(I, V, (3, 3)).requires_grad_()
    x = tt.arange(6.0).reshape(2, 3).requires_grad_()
    y = x @ s
    assert y.tolist() == [[2.0, 0.0, 8.0], [8.0, 12.0, 20.0]] and y.grad_fn.name() == "MmBackward0"
    (y * y).sum().backward()
    assert x.grad.tolist() == [[0.0, 8.0, 64.0], [96.0, 32.0, 160.0]]
    assert s.grad.tolist() == [[48.0, 72.0, 120.0], [68.0, 96.0, 176.0], [88.0, 120.0, 232.0]]


def test_gradients_of_the_structural_ops():
    s = tt.sparse_coo_tensor(I, V, (3, 3)).requires_grad_()
    w = s.to_dense()
    assert w.grad_fn.name() == "ToDenseBackward0"
    (w * tt.arange(9.0).reshape(3, 3)).sum().backward()
    assert s.grad.indices().tolist() == [[0, 1, 2], [1, 0, 2]] and s.grad.values().tolist() == [1.0, 3.0, 8.0]
    s = tt.sparse_coo_tensor(I, V, (3, 3)).requires_grad_()
    c = s.coalesce()
    assert c.grad_fn.name() == "CoalesceBackward0" and c.values().grad_fn.name() == "ValuesBackward0"
    (c.values() * tt.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert s.grad.values().tolist() == [1.0, 2.0, 3.0]
    x = tt.tensor([[0.0, 1.0], [2.0, 0.0]], requires_grad=True)
    sx = x.to_sparse()
    assert sx.grad_fn.name() == "ToSparseBackward1"
    tt.sparse.sum(sx).backward()
    assert x.grad.layout is tt.strided and x.grad.tolist() == [[0.0, 1.0], [1.0, 0.0]]
    # gradients accumulate on a sparse leaf, sparse + sparse
    s = tt.sparse_coo_tensor(I, V, (3, 3)).requires_grad_()
    for _ in range(2):
        tt.sparse.mm(s, tt.tensor(D)).sum().backward()
    assert s.grad.to_dense().tolist() == [[0.0, 14.0, 0.0], [6.0, 0.0, 0.0], [0.0, 0.0, 22.0]]
    # sparse * dense gives the dense leaf a sparse gradient; a dense one then adds to it (dense + sparse)
    s = tt.tensor([[1.0, 0.0], [0.0, 2.0]]).to_sparse().requires_grad_()
    d = tt.ones(2, 2, requires_grad=True)
    tt.sparse.sum(s * d).backward()
    assert d.grad.layout is tt.sparse_coo and d.grad.values().tolist() == [1.0, 2.0]
    assert s.grad.values().tolist() == [1.0, 1.0]
    (d * 3).sum().backward()
    assert d.grad.layout is tt.strided and d.grad.tolist() == [[4.0, 3.0], [3.0, 5.0]]
    d2 = tt.ones(2, 2, requires_grad=True)
    (d2 * 3).sum().backward()
    tt.sparse.sum(s * d2).backward()
    assert d2.grad.tolist() == [[4.0, 3.0], [3.0, 5.0]]


# --------------------------------------------------------------------------- sum and arithmetic
def test_sparse_sum(device):
    s = tt.sparse_coo_tensor(I, V, (3, 3), device=device)
    total = tt.sparse.sum(s)
    assert total.layout is tt.strided and total.dim() == 0 and total.item() == 10.0 and s.sum().item() == 10.0
    rows = tt.sparse.sum(s, 1)          # a sparse dim summed away: sparse over the rest
    assert rows.layout is tt.sparse_coo and rows.indices().tolist() == [[0, 1, 2]]
    assert rows.values().tolist() == [4.0, 2.0, 4.0] and tt.sparse.sum(s, (0, 1)).item() == 10.0
    assert s.sum(0).to_dense().tolist() == [2.0, 4.0, 4.0]
    h = tt.sparse_coo_tensor([[0, 1, 0]], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], device=device)
    assert tt.sparse.sum(h, 1).to_dense().tolist() == [14.0, 7.0]
    assert tt.sparse.sum(h, 0).tolist() == [9.0, 12.0]        # no sparse dim left: dense
    c = tt.sparse_coo_tensor(I, V, (3, 3), device=device).requires_grad_()
    w = tt.sparse.sum(c, 1)
    assert w.grad_fn.name() == "SparseSumBackward0" and c.sum(1).grad_fn.name() == "SumBackward1"
    w.to_dense().sum().backward()
    assert c.grad.values().tolist() == [1.0, 1.0, 1.0]



def test_sum_keepdim_as_torch():
    s = tt.sparse_coo_tensor(I, V, (3, 3)).requires_grad_()
    k = s.sum(0, keepdim=True)              # the summed sparse dim kept: a zero coordinate row
    assert k.layout is tt.sparse_coo and tuple(k.shape) == (1, 3) and k.grad_fn.name() == "SumBackward1"
    assert k.indices().tolist() == [[0, 0, 0], [0, 1, 2]] and k.values().tolist() == [2.0, 4.0, 4.0]
    assert s.sum(1, keepdim=True).indices().tolist() == [[0, 1, 2], [0, 0, 0]]
    whole = s.sum((0, 1), keepdim=True)
    assert whole.layout is tt.strided and whole.tolist() == [[10.0]] and whole.grad_fn.name() == "SumBackward1"
    k.to_dense().pow(2).sum().backward()    # d/ds of sum_j (column sum j)^2 = 2 * column sum, at the entries
    assert s.grad.to_dense().tolist() == [[0.0, 8.0, 0.0], [4.0, 0.0, 0.0], [0.0, 0.0, 8.0]]
    h = tt.sparse_coo_tensor([[0, 1, 0]], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    assert h.sum((0, 1), keepdim=True).tolist() == [[21.0]]
    with pytest.raises(NotImplementedError, match=r"keepdim=True\) of a sparse tensor over a dense dim"):
        h.sum(1, keepdim=True)              # (torch turns the kept dense dim into a sparse one)
    with pytest.raises(RuntimeError, match="^reshape is not implemented for sparse tensors$"):
        s.reshape(9)


def test_addition_as_torch():
    a = tt.sparse_coo_tensor(I, V, (3, 3)).requires_grad_()
    b = tt.sparse_coo_tensor([[2, 0], [0, 0]], [5.0, 6.0], (3, 3)).requires_grad_()
    z = a + b                      # an uncoalesced operand: torch's merge, not coalesced
    assert z.grad_fn.name() == "AddBackward0" and not z.is_coalesced()
    np.testing.assert_array_equal(to_numpy(z.to_dense()), _dense_of(I, V, (3, 3)) + _dense_of([[2, 0], [0, 0]],
                                                                                             [5, 6], (3, 3)))
    tt.sparse.sum(z * 2).backward()
    assert a.grad.indices().tolist() == [[0, 0, 1, 2, 2], [0, 1, 0, 0, 2]] and a.grad.values().tolist() == [2.0] * 5
    c = tt.sparse_coo_tensor(I, V, (3, 3)).coalesce()
    cc = c + c                     # both coalesced: the sorted union, coalesced
    assert cc.is_coalesced() and cc.values().tolist() == [8.0, 4.0, 8.0]
    assert (c - c).to_dense().abs().sum().item() == 0.0
    dense = tt.ones(3, 3, requires_grad=True)
    out = dense + c
    assert out.layout is tt.strided and out.tolist() == [[1.0, 5.0, 1.0], [3.0, 1.0, 1.0], [1.0, 1.0, 5.0]]
    out.sum().backward()
    assert dense.grad.tolist() == [[1.0] * 3] * 3
    assert (c * 2).values().tolist() == [8.0, 4.0, 8.0] and (2 * c).values().tolist() == [8.0, 4.0, 8.0]
    assert (-c).values().tolist() == [-4.0, -2.0, -4.0] and (c / 2).values().tolist() == [2.0, 1.0, 2.0]
    assert (c * c).values().tolist() == [16.0, 4.0, 16.0]
    p = c * tt.arange(9.0).reshape(3, 3)          # sparse * dense: sparse over c's pattern
    assert p.layout is tt.sparse_coo and p.values().tolist() == [4.0, 6.0, 32.0]


@pytest.mark.parametrize("call,message", [
    (lambda s: s + tt.ones(2, 2), "add(sparse, dense) is not supported. Use add(dense, sparse) instead."),
    (lambda s: s + tt.ones(2, 2).to_sparse(1), "add: expected 'self' and 'other' to have same density, but 'self' has "
                                               "2 sparse dimensions while 'other' has 1 sparse dimensions"),
    (lambda s: s + tt.ones(3, 2).to_sparse(), "add: expected sizes of 'self' and 'other' to match, but [2, 2] != [3, 2]"),
])
def test_addition_errors_as_torch(call, message):
    with pytest.raises(RuntimeError) as info:
        call(tt.tensor([[1.0, 0.0], [0.0, 2.0]]).to_sparse())
    assert str(info.value) == message


# --------------------------------------------------------------------------- what sparse tensors do not do
def test_unsupported_ops_raise_torch_not_implemented(device):
    s = tt.tensor([[1.0, 0.0], [0.0, 2.0]], device=device).to_sparse()
    backend = "SparseCPU" if device == "cpu" else "SparseCUDA"
    for call, name in [(tt.exp, "exp"), (lambda t: t.exp(), "exp"), (lambda t: t.mean(), "mean.dim"),
                       (lambda t: t.view(4), "view")]:
        with pytest.raises(NotImplementedError, match=rf"^Could not run 'aten::{name}' with arguments from the "
                                                      rf"'{backend}' backend\."):
            call(s)
    with pytest.raises(TypeError, match="can't convert Sparse layout tensor to numpy"):
        s.numpy()
    with pytest.raises(RuntimeError, match="Cannot access data pointer of Tensor that doesn't have storage"):
        s.data_ptr()


def test_moves_casts_clones_and_pickles(device):
    s = tt.sparse_coo_tensor(I, V, (3, 3))
    m = s.to(device)
    assert m.device.type == device and m.layout is tt.sparse_coo and m._indices().device.type == device
    d = m.double()
    assert d.dtype is tt.float64 and d._indices() is m._indices() and s.to(tt.float32) is s
    c = s.clone()
    assert c._values() is not s._values() and c._values().tolist() == V
    back = pickle.loads(pickle.dumps(s))
    assert back.layout is tt.sparse_coo and back._indices().tolist() == I and back._values().tolist() == V
    assert s.t().to_dense().tolist() == s.to_dense().t().tolist()


# torch's unary ops with a sparse kernel (f(0) == 0): coalesced first, the op on the values, torch's
# node names (recorded by tests/data/make_sparse_values.py); bool tests have no node
UNARY = {"abs": (np.abs, "AbsBackward0"), "sqrt": (np.sqrt, "SqrtBackward0"), "sin": (np.sin, "SinBackward0"),
         "tanh": (np.tanh, "TanhBackward0"), "atanh": (np.arctanh, "AtanhBackward0"),
         "floor": (np.floor, "FloorBackward0"), "sign": (np.sign, "SignBackward0"),
         "expm1": (np.expm1, "Expm1Backward0"), "log1p": (np.log1p, "Log1PBackward0"),
         "deg2rad": (np.deg2rad, "Deg2RadBackward0"), "relu": (lambda v: np.maximum(v, 0), "ReluBackward0"),
         "isnan": (np.isnan, None), "signbit": (np.signbit, None)}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_zero_preserving_unary_ops(name):
    fn, node = UNARY[name]
    s = tt.sparse_coo_tensor([[0, 1, 0], [1, 0, 1]], [0.5, -0.75, 0.25], (2, 2)).requires_grad_()
    y = getattr(tt, name)(s)
    assert y.layout is tt.sparse_coo and y.is_coalesced() and y._indices().tolist() == [[0, 1], [1, 0]]
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(to_numpy(y._values()).astype(np.float64), fn(np.array([0.75, -0.75])),
                                   rtol=1e-6, equal_nan=True)
    assert (y.grad_fn.name() if y.grad_fn is not None else None) == node


def test_unary_gradients_reach_the_sparse_leaf(device):
    """Where torch's own backward stops (sin's needs cos, which has no sparse kernel), the values'
    derivative is taken: cos at each coalesced entry, a sparse gradient."""
    s = tt.sparse_coo_tensor([[0, 1, 0], [1, 0, 1]], [0.5, -0.75, 0.25], (2, 2), device=device).requires_grad_()
    tt.sparse.sum(tt.sin(s)).backward()
    assert s.grad.layout is tt.sparse_coo and s.grad.indices().tolist() == [[0, 1], [1, 0]]
    np.testing.assert_allclose(to_numpy(s.grad.values()), np.cos([0.75, -0.75]), rtol=1e-6)
