"""The sparse CSR layout against torch 2.13's recorded answers (tests/data/sparse_csr_cases.py, run
on torch by tests/data/make_sparse_csr_values.py into sparse_csr_values.json): reprs, metadata,
conversions, elementwise forms, CSR @ dense, sampled_addmm, node names, gradients and error texts.
Values are replayed on cpu and on the emulated cuda device; errors and reprs on cpu (torch's
texts are its CPU kernels'). The kernels' own checks (block edges, strides, dtypes) are
tests/opinfo_sparse.py's records and the CSR @ dense cases below, against NumPy."""
from __future__ import annotations

import json
import pathlib
import re
import sys

import numpy as np
import pytest

import tritensor as tt

DATA = pathlib.Path(__file__).parent / "data"
sys.path.insert(0, str(DATA))
from sparse_csr_cases import CASES, sparse_matrix  # noqa: E402

RECORDED = json.loads((DATA / "sparse_csr_values.json").read_text())
TOL = {"float32": (1e-5, 1e-5), "float64": (1e-10, 1e-12)}
ERRORS = sorted(n for n in CASES if n.startswith("err"))
# reprs (torch's cpu text), and the larger or many-launch reductions (their kernels' cuda checks:
# tests/opinfo_sparse.py's records)
CPU_ONLY = [n for n in CASES if n.startswith("repr") or n in ("mm_reduce_amax_big", "grads_mm_reduce")]
VALUES = sorted(n for n in CASES if n not in ERRORS and n not in CPU_ONLY)


def _words(s):
    return " ".join(s.split())      # (tritensor's longer module name moves a repr's line breaks)


def check(got, enc, where):
    """Assert tritensor's ``got`` matches torch's recorded ``enc``."""
    if "tuple" in enc:
        assert isinstance(got, (tuple, list)) and len(got) == len(enc["tuple"]), where
        for i, (g, e) in enumerate(zip(got, enc["tuple"])):
            check(g, e, f"{where}[{i}]")
    elif "text" in enc:
        assert _words(str(got)) == _words(enc["text"]), where
    elif "value" in enc:
        assert got == enc["value"], where
    else:
        want = enc["tensor"]
        assert isinstance(got, tt.Tensor), where
        assert (str(got.layout), str(got.dtype).replace("tritensor.", ""), list(got.shape)) == \
            (want["layout"], want["dtype"], want["shape"]), where
        assert (None if got.grad_fn is None else got.grad_fn.name()) == want["grad_fn"], where
        rtol, atol = TOL.get(want["dtype"], (0, 0))
        g = got.detach()
        dense = g.to_dense() if got.layout is not tt.strided else g
        np.testing.assert_allclose(dense.cpu().numpy().astype(np.float64),
                                   np.array(want["dense"], np.float64).reshape(want["shape"]), rtol=rtol, atol=atol,
                                   err_msg=where)
        if got.layout is tt.sparse_csr:
            crow, col, vals, index_dtype = want["parts"]
            assert g.crow_indices().tolist() == crow and g.col_indices().tolist() == col, where
            assert str(g.crow_indices().dtype) == f"tritensor.{index_dtype}", where
            np.testing.assert_allclose(g.values().cpu().numpy().astype(np.float64), np.array(vals, np.float64),
                                       rtol=rtol, atol=atol, err_msg=where)
        elif got.layout is tt.sparse_coo:
            assert g._indices().tolist() == want["parts"][0], where


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("name", VALUES)
def test_matches_torch(name, device):
    check(CASES[name](tt, device), RECORDED[name], name)


@pytest.mark.parametrize("name", CPU_ONLY)
def test_cpu_only_matches_torch(name):
    check(CASES[name](tt, "cpu"), RECORDED[name], name)


# where tritensor's error differs from torch's, and why
KNOWN = {
    # every view (view, unsqueeze, permute ...) reads the strides first: torch's unsqueeze error
    "err_view": ("RuntimeError", "Sparse CSR tensors do not have strides"),
    # the legacy type's name is torch's own, as Tensor.type() gives it
    "err_mm_reduce_dtype": ("RuntimeError", "Expected tensor for argument #1 'other' to have scalar type Double; "
                            "but got torch.FloatTensor instead (while checking arguments for sparse_mm_reduce)"),
}


def _expected(name):
    """(type, text) of torch's error; torch's "Could not run 'aten::x' with arguments from the 'B'
    backend." is matched up to the operator's name (tritensor's table entry names the ATen op
    torch reaches after its own decomposition: amax for max, softmax for _softmax.out); what
    follows it is torch's build advice (tritensor lists its CSR operators instead)."""
    if name in KNOWN:
        return KNOWN[name][0], re.escape(KNOWN[name][1])
    want = RECORDED[name]
    message = want["message"]
    if message.startswith("Could not run"):
        backend = re.search(r"from the '(\w+)' backend", message).group(1)
        return want["error"], rf"Could not run 'aten::[\w.]+' with arguments from the '{backend}' backend\."
    return want["error"], re.escape(message)


@pytest.mark.parametrize("name", ERRORS)
def test_error_matches_torch(name):
    kind, pattern = _expected(name)
    with pytest.raises(Exception) as info:
        CASES[name](tt, "cpu")
    assert type(info.value).__name__ == kind
    assert re.match(pattern, str(info.value).splitlines()[0]), str(info.value)


def test_invariants_always_checked_but_order_only_on_request():
    """torch checks nothing by default; tritensor always checks what keeps kernels in bounds (the row
    pointers, the columns' range) and the column order with check_invariants=True, as torch."""
    with pytest.raises(RuntimeError, match="0 <= col_indices < ncols"):
        tt.sparse_csr_tensor([0, 1], [5], [1.0], (1, 2))
    with pytest.raises(RuntimeError, match=r"crow_indices\[..., -1\] == nnz"):
        tt.sparse_csr_tensor([0, 3], [0], [1.0], (1, 2))
    s = tt.sparse_csr_tensor([0, 2], [1, 0], [1.0, 2.0], (1, 2))        # unsorted: accepted, summed right
    np.testing.assert_array_equal(s.to_dense().numpy(), [[2.0, 1.0]])
    assert not s.to_sparse().is_coalesced()


@pytest.fixture(scope="module")
def operands():
    """A 19 x 23 matrix (some rows empty) and its CSR form, a dense 23 x 37 (three column blocks
    of the small profile's 16, rows of up to 9 entries: three blocks of 4)."""
    a = sparse_matrix("kernel", (19, 23), 0.35)
    a[4] = 0.0
    b = np.random.default_rng(3).standard_normal((37, 23)).T      # a transposed (column-major) operand
    return a, b


# every float dtype on cpu (float16/bfloat16: as torch's CUDA kernels), the kernel in float32 and float64
@pytest.mark.parametrize("device,dtype", [("cpu", tt.float16), ("cpu", tt.bfloat16), ("cpu", tt.float32),
                                          ("cpu", tt.float64), ("cuda", tt.float32), ("cuda", tt.float64)])
def test_csr_times_dense_kernel(operands, device, dtype):
    """CSR @ dense (the SpMM kernel) against NumPy in float64: a transposed dense operand read in
    place, a sliced one, no columns."""
    a, b = operands
    s = tt.tensor(a, dtype=dtype, device=device).to_sparse_csr()
    d = tt.tensor(b, dtype=dtype, device=device)
    a_q = s.to_dense().double().cpu().numpy()
    b_q = d.double().cpu().numpy()
    tol = {tt.float32: 1e-5, tt.float64: 1e-12}.get(dtype, 3e-2)
    np.testing.assert_allclose((s @ d).double().cpu().numpy(), a_q @ b_q, rtol=tol, atol=tol * 4)
    assert tuple(tt.mm(s, tt.zeros(23, 0, dtype=dtype, device=device)).shape) == (19, 0)
    sliced = d[::2, 1::3]                                                    # (12, 12), strides (2 rows, 3)
    s12 = tt.tensor(a[:, :12], dtype=dtype, device=device).to_sparse_csr()
    np.testing.assert_allclose(tt.mm(s12, sliced).double().cpu().numpy(),
                               s12.to_dense().double().cpu().numpy() @ sliced.double().cpu().numpy(),
                               rtol=tol, atol=tol * 4)


def test_gradients_of_csr_products_on_the_emulated_device():
    """gradcheck (float64) of CSR @ dense and dense @ CSR through the values the CSR operand is
    built from, and of the dense operands (sampled_addmm's: its OpInfo record)."""
    crow, col = tt.tensor([0, 2, 2, 3], device="cuda"), tt.tensor([0, 2, 1], device="cuda")
    rng = np.random.default_rng(5)

    def leaf(*shape):
        return tt.tensor(rng.standard_normal(shape), device="cuda", requires_grad=True)

    v, d, x = leaf(3), leaf(4, 2), leaf(2, 3)
    mat = lambda v: tt.sparse_csr_tensor(crow, col, v, (3, 4))    # noqa: E731
    assert tt.autograd.gradcheck(lambda v, d: mat(v) @ d, (v, d))
    assert tt.autograd.gradcheck(lambda v, x: x @ mat(v), (v, x))
    assert tt.autograd.gradgradcheck(lambda v, d: mat(v) @ d, (v.detach().cpu().requires_grad_(),
                                                                d.detach().cpu().requires_grad_()))


def test_unsupported_ops_raise_never_compute():
    """An op without a CSR form raises torch's NotImplementedError naming the operator and the
    backend, and lists the CSR operators tritensor has."""
    s = tt.sparse_csr_tensor([0, 1], [0], [2.0], (1, 1))
    with pytest.raises(NotImplementedError, match=r"'aten::exp' with arguments from the 'SparseCsrCPU' backend.*mm"):
        tt.exp(s)
    with pytest.raises(NotImplementedError, match="Could not run 'aten::_local_scalar_dense'"):
        s.item()
    with pytest.raises(NotImplementedError, match="batched sparse CSR"):
        tt.ones(2, 2, 2).to_sparse_csr()
    with pytest.raises(NotImplementedError, match="sparse CSC tensor"):
        s.t()


def test_forward_ad_raises_as_torch():
    """torch 2.13 has no forward-mode rule for sampled_addmm or CSR @ dense: a tangent reaching
    them raises torch's NotImplementedError (never a result without its tangent)."""
    import tritensor.autograd.forward_ad as fwAD
    s = tt.sparse_csr_tensor([0, 1, 1], [1], [2.0], (2, 2), dtype=tt.float64)
    a, b = tt.ones(2, 3, dtype=tt.float64), tt.ones(3, 2, dtype=tt.float64)
    with fwAD.dual_level():
        with pytest.raises(NotImplementedError, match="forward AD with sparse_sampled_addmm that does not"):
            tt.sparse.sampled_addmm(s, fwAD.make_dual(a, tt.ones_like(a)), b)
        with pytest.raises(NotImplementedError, match="forward AD with mm that does not"):
            tt.mm(s, fwAD.make_dual(b[:2], tt.ones_like(b[:2])))
