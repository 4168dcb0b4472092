"""Contractions (einsum, tensordot, inner, vdot, addmv, addr, addbmm, chain_matmul) and the
integer matmul path, against torch 2.13's recorded behaviour: errors word for word, grad_fn
names, dtype rules; values against NumPy (np.einsum, np.tensordot ...) and exact integer
products (NumPy's integer matmul wraps as torch's CPU kernels do).
"""
import numpy as np
import pytest

import tritensor as tt

RNG = np.random.default_rng(7)


def _t(*shape, dtype=tt.float64, requires_grad=False, device="cpu"):
    return tt.tensor(RNG.standard_normal(shape), dtype=dtype, requires_grad=requires_grad, device=device)


def _np(t):
    return t.detach().cpu().numpy()


# --------------------------------------------------------------------------- einsum
EQUATIONS = [   # (equation, operand shapes); NumPy's einsum is the oracle
    ("ij,jk", [(2, 3), (3, 4)]), ("ij,jk->ki", [(2, 3), (3, 4)]), ("ii", [(3, 3)]), ("ii->i", [(3, 3)]),
    ("ij->", [(2, 3)]), ("ji", [(2, 3)]), ("i,i", [(4,), (4,)]), ("i,j", [(3,), (4,)]),
    ("...ij,...jk", [(2, 1, 2, 3), (4, 3, 2)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ijk,j", [(2, 3, 4), (3,)]), ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("...,...", [(2, 3), (3,)]), ("ij,ij", [(2, 3), (1, 3)]), ("iij->j", [(3, 3, 2)]),
    ("ijk,kji->", [(2, 3, 4), (4, 3, 2)]), ("ij,kl->", [(2, 3), (2, 3)]), ("aab,bc,ca->", [(3, 3, 2), (2, 4), (4, 3)]),
    ("i", [(0,)]), ("ij,jk", [(2, 0), (0, 3)]), ("Ab,bC", [(2, 3), (3, 2)]), ("i j , j", [(2, 3), (3,)]),
    ("...i,...i->...", [(2, 1, 3), (4, 3)]), ("a...,b...->ab...", [(2, 3), (4, 1)]), ("ijk->kji", [(2, 3, 4)]),
    ("bii->bi", [(2, 3, 3)]), ("iji,ij->j", [(2, 3, 2), (2, 3)]),
]


@pytest.mark.parametrize("equation,shapes", EQUATIONS, ids=[e for e, _ in EQUATIONS])
def test_einsum_matches_numpy(equation, shapes):
    ops = [_t(*s) for s in shapes]
    got = tt.einsum(equation, *ops)
    want = np.einsum(equation.replace(" ", ""), *[_np(o) for o in ops])
    assert got.shape == want.shape
    np.testing.assert_allclose(_np(got), want, rtol=1e-12, atol=1e-12)


def test_einsum_ellipsis_only_and_implicit_outputs():
    x = _t(2, 3)
    np.testing.assert_allclose(_np(tt.einsum("...->", x)), _np(x).sum())
    np.testing.assert_allclose(_np(tt.einsum("i...->...", x)), _np(x).sum(0))
    s = _t()
    assert tt.einsum("", s).shape == () and tt.einsum("->", s).shape == () and tt.einsum("...", s).shape == ()
    # implicit output: the ellipsis, then the letters used once in alphabetical order, upper case first
    assert tt.einsum("ba,B", _t(2, 3), _t(4)).shape == (4, 3, 2)


def test_einsum_sublist_and_list_forms():
    a, b = _t(2, 3), _t(3, 4)
    want = _np(a) @ _np(b)
    np.testing.assert_allclose(_np(tt.einsum(a, [0, 1], b, [1, 2])), want)
    np.testing.assert_allclose(_np(tt.einsum(a, [0, 1], b, [1, 2], [2, 0])), want.T)
    np.testing.assert_allclose(_np(tt.einsum(a, [Ellipsis, 1], b, [1, 30])), want)
    np.testing.assert_allclose(_np(tt.einsum("ij,jk", [a, b])), want)
    with pytest.raises(ValueError, match=r"^einsum\(\): subscript in subscript list is not within the valid range "
                                         r"\[0, 52\)$"):
        tt.einsum(a, [0, 52])
    with pytest.raises(ValueError, match=r"^einsum\(\): must specify the equation string and at least one operand, "
                                         "or at least one operand and its subscripts list$"):
        tt.einsum("ij")


X = _t(2, 3)
EINSUM_ERRORS = [
    (lambda: tt.einsum("ij,jk", X), "einsum(): fewer operands were provided than specified in the equation"),
    (lambda: tt.einsum("ijk", X), "einsum(): the number of subscripts in the equation (3) does not match the number "
     "of dimensions (2) for operand 0 and no ellipsis was given"),
    (lambda: tt.einsum("ijk...", X), "einsum(): the number of subscripts in the equation (3) is more than the number "
     "of dimensions (2) for operand 0"),
    (lambda: tt.einsum("i->", _t()), "einsum(): the number of subscripts in the equation (1) does not match the "
     "number of dimensions (0) for operand 0 and no ellipsis was given"),
    (lambda: tt.einsum("ij,jk->ik", X, X), "einsum(): subscript j has size 2 for operand 1 which does not broadcast "
     "with previously seen size 3"),
    (lambda: tt.einsum("ij->ij", X, X), "einsum(): more operands were provided than specified in the equation"),
    (lambda: tt.einsum("ij->ik", X), "einsum(): output subscript k does not appear in the equation for any input "
     "operand"),
    (lambda: tt.einsum("ij->ii", X), "einsum(): output subscript i appears more than once in the output"),
    (lambda: tt.einsum("ij->j->i", X), "einsum(): invalid subscript given at index 5 in the equation string, "
     "subscripts must be in [a-zA-Z]"),
    (lambda: tt.einsum("ij1", X), "einsum(): invalid subscript given at index 2 in the equation string, subscripts "
     "must be in [a-zA-Z]"),
    (lambda: tt.einsum("...i...", X), "einsum(): found '.' for operand 0 for which an ellipsis was already found"),
    (lambda: tt.einsum("i.j", X), "einsum(): found '.' for operand 0 that is not part of any ellipsis"),
    (lambda: tt.einsum("ij->j..", X), "einsum(): found '.' for output that is not part of any ellipsis (...)"),
    (lambda: tt.einsum("...->......", X), "einsum(): found '.' for output but an ellipsis (...) was already found"),
    (lambda: tt.einsum("ii", X), "einsum(): subscript i is repeated for operand 0 but the sizes don't match, 3 != 2"),
    (lambda: tt.einsum("...,...", _t(2, 3), _t(4, 3)), "einsum(): dimension 0 covered by ellipsis in operand 1has "
     "size 4 which does not broadcast with previously seen ellipsis with size 2 for the respective dimension"),
    (lambda: tt.einsum("ij,jk", X, _t(3, 2, dtype=tt.float32)), "expected scalar type Double but found Float"),
    (lambda: tt.einsum("ij,jk", X > 0, X.t() > 0), "\"bmm\" not implemented for 'Bool'"),
]


@pytest.mark.parametrize("case", range(len(EINSUM_ERRORS)))
def test_einsum_errors_are_torchs(case):
    fn, message = EINSUM_ERRORS[case]
    with pytest.raises(RuntimeError) as info:
        fn()
    assert str(info.value) == message


def test_einsum_dtypes_and_nodes_are_torchs():
    a, b = _t(2, 3, requires_grad=True), _t(3, 4, requires_grad=True)
    assert type(tt.einsum("ij,jk", a, b).grad_fn).__name__ == "ViewBackward0"
    assert type(tt.einsum("i,j", a[0], b[0]).grad_fn).__name__ == "MulBackward0"     # nothing summed: a mul
    assert type(tt.einsum("ij->", a).grad_fn).__name__ == "SumBackward1"
    assert type(tt.einsum("ij->ji", a).grad_fn).__name__ == "PermuteBackward0"
    assert type(tt.einsum("ii->i", _t(3, 3, requires_grad=True)).grad_fn).__name__ == "PermuteBackward0"
    # a product with nothing summed promotes (mul); a contraction needs one dtype (bmm)
    assert tt.einsum("ij,ij->ij", _t(2, 3, dtype=tt.float32), tt.ones(2, 3, dtype=tt.int32)).dtype is tt.float32
    i = tt.tensor([[1, 2], [3, 4]], dtype=tt.int32)
    got = tt.einsum("ij,jk->ik", i, i)
    assert got.dtype is tt.int32 and got.tolist() == [[7, 10], [15, 22]]


def test_einsum_gradients_flow_through_diagonals_and_broadcasts():
    a = _t(3, 3, 2, requires_grad=True)
    b = _t(2, requires_grad=True)
    (tt.einsum("iij,j->i", a, b) * tt.tensor([1.0, 2.0, 3.0], dtype=tt.float64)).sum().backward()
    expected = np.zeros((3, 3, 2))
    for i in range(3):
        expected[i, i] = (i + 1) * _np(b)
    np.testing.assert_allclose(_np(a.grad), expected)
    np.testing.assert_allclose(_np(b.grad), sum((i + 1) * _np(a)[i, i] for i in range(3)))


# --------------------------------------------------------------------------- tensordot, inner, vdot
def test_tensordot_forms():
    a, b = _t(2, 3, 4), _t(4, 3, 5)
    want = np.tensordot(_np(a), _np(b), ([1, 2], [1, 0]))
    for dims in (([1, 2], [1, 0]), [[1, 2], [1, 0]], tt.tensor([[1, 2], [1, 0]])):
        np.testing.assert_allclose(_np(tt.tensordot(a, b, dims)), want)
    np.testing.assert_allclose(_np(tt.tensordot(a, b.permute(1, 0, 2), 0)), np.tensordot(_np(a), _np(b).transpose(1, 0, 2), 0))
    c, d = _t(2, 3), _t(3, 5)
    np.testing.assert_allclose(_np(tt.tensordot(c, d, tt.tensor(1))), _np(c) @ _np(d))
    # a size-1 contracted dim broadcasts: it is summed first
    x, y = _t(2, 3), _t(1, 3)
    np.testing.assert_allclose(_np(tt.tensordot(x, y, ([0], [0]))), _np(x).sum(0)[:, None] * _np(y)[0][None, :])
    assert type(tt.tensordot(_t(2, 3, requires_grad=True), _t(3, 2), 1).grad_fn).__name__ == "ViewBackward0"


TENSORDOT_ERRORS = [
    (lambda: tt.tensordot(X, X, ([1], [0])), RuntimeError, "contracted dimensions need to match, but first has size "
     "3 in dim 1 and second has size 2 in dim 0"),
    (lambda: tt.tensordot(X, X, 3), RuntimeError, "tensordot expects dims < ndim_a or ndim_b, but got dims=3"),
    (lambda: tt.tensordot(X, X, -1), RuntimeError, "tensordot expects dims >= 0, but got dims=-1"),
    (lambda: tt.tensordot(X, X.float(), 1), RuntimeError, "both inputs should have same dtype"),
    (lambda: tt.tensordot(X, X, ([1, 0], [1])), RuntimeError, "both dimension lists should have same length"),
    (lambda: tt.tensordot(X, X, 1.5), RuntimeError, "tensordot expects dims to be int or tuple[list[int], list[int]] or "
     "list[list[int]] containing two lists, but got dims=1.5"),
    (lambda: tt.tensordot(X, X, (1, 1)), TypeError, "tensordot(): argument 'dims_self' (position 3) must be tuple of "
     "ints, not int"),
    (lambda: tt.inner(X, _t(4)), RuntimeError, "inner() the last dimension must match on both input tensors but got "
     "shapes [2, 3] and [4]"),
    (lambda: tt.inner(X, X.float()), RuntimeError, "both inputs should have same dtype"),
    (lambda: tt.vdot(_t(4), _t(2)), RuntimeError, "inconsistent tensor size, expected tensor [4] and src [2] to have "
     "the same number of elements, but got 4 and 2 elements respectively"),
    (lambda: tt.vdot(X, X), RuntimeError, "1D tensors expected, but got 2D and 2D tensors"),
    (lambda: tt.vdot(_t(3), _t(3, dtype=tt.float32)), RuntimeError, "dot : expected both vectors to have same dtype, "
     "but found Double and Float"),
    (lambda: tt.vdot(_t(3) > 0, _t(3) > 0), NotImplementedError, "\"dot\" not implemented for 'Bool'"),
]


@pytest.mark.parametrize("case", range(len(TENSORDOT_ERRORS)))
def test_tensordot_inner_vdot_errors(case):
    fn, kind, message = TENSORDOT_ERRORS[case]
    with pytest.raises(kind) as info:
        fn()
    assert str(info.value) == message


def test_inner_and_vdot():
    a, b = _t(2, 3), _t(4, 2, 3)
    np.testing.assert_allclose(_np(tt.inner(a, b)), np.inner(_np(a), _np(b)))
    s = _t()
    assert type(tt.inner(s, _t(2, 3, requires_grad=True)).grad_fn).__name__ == "MulBackward0"
    v = _t(3, requires_grad=True)
    out = tt.vdot(v, v)
    assert type(out.grad_fn).__name__ == "VdotBackward0" and out.item() == pytest.approx(float((_np(v) ** 2).sum()))
    assert tt.vdot(tt.tensor([1, 2, 3], dtype=tt.int32), tt.tensor([4, 5, 6], dtype=tt.int32)).tolist() == 32


# --------------------------------------------------------------------------- addmv, addr, addbmm, chain_matmul
ADD_ERRORS = [
    (lambda: tt.addmv(_t(3), _t(2, 3), _t(3)), RuntimeError, "size mismatch, got input (3), mat (2x3), vec (3)"),
    (lambda: tt.addmv(_t(2), _t(2, 3), _t(4)), RuntimeError, "size mismatch, got input (2), mat (2x3), vec (4)"),
    (lambda: tt.addmv(_t(2), _t(0, 3), _t(3)), RuntimeError, "size mismatch, got input (2), mat (0x3), vec (3)"),
    (lambda: tt.addmv(_t(2, dtype=tt.float32), _t(2, 3), _t(3)), RuntimeError, "addmv input tensors must have the same "
     "dtype, but got Float, Double, and Double"),
    (lambda: tt.addmv(_t(2), _t(2, 3), _t(2, 3)), RuntimeError, "vector + matrix @ vector expected, got 1, 2, 2"),
    (lambda: tt.addmv(_t(1, 2), _t(2, 3), _t(3)), RuntimeError, "vector + matrix @ vector expected, got 2, 2, 1"),
    (lambda: tt.addmv(_t(2) > 0, _t(2, 3) > 0, _t(3) > 0), NotImplementedError,
     "\"addmv_impl_cpu\" not implemented for 'Bool'"),
    (lambda: _t(1).addmv_(_t(2, 3), _t(3)), RuntimeError, "Bad in-place call: input tensor size [1] and output tensor "
     "size [2] should match"),
    (lambda: tt.addr(X, _t(2), X), RuntimeError, "addr: Expected 1-D argument vec2, but got 2-D"),
    (lambda: tt.addr(X, _t(3), _t(3)), RuntimeError, "The expanded size of the tensor (3) must match the existing size "
     "(2) at non-singleton dimension 0.  Target sizes: [3, 3].  Tensor sizes: [2, 3]"),
    (lambda: tt.addr(X.int(), _t(2).int(), _t(3).int(), alpha=2.5), RuntimeError, "For integral input tensors, "
     "argument alpha must not be a floating point number."),
    (lambda: tt.addr(X.int(), _t(2).int(), _t(3).int(), beta=True), RuntimeError,
     "Boolean beta only supported for Boolean results."),
    (lambda: _t(1, 3).addr_(_t(2), _t(3)), RuntimeError, "size mismatch, input: [1, 3], v1: [2], v2: [3]"),
    (lambda: X.int().addr_(_t(2), _t(3)), RuntimeError, "result type Double can't be cast to the desired output type "
     "Int"),
    (lambda: tt.addbmm(X, _t(4, 2, 5), _t(3, 5, 3)), RuntimeError, "batch1 and batch2 must have same number of "
     "batches, got 4 and 3"),
    (lambda: tt.addbmm(X, _t(4, 2, 5), _t(4, 4, 3)), RuntimeError, "Incompatible matrix sizes for bmm (2x5 and 4x3)"),
    (lambda: tt.addbmm(X, _t(2, 5), _t(5, 3)), IndexError, "Dimension out of range (expected to be in range of "
     "[-2, 1], but got 2)"),
    (lambda: tt.addbmm(X, _t(4, 3, 5), _t(4, 5, 3)), RuntimeError, "The expanded size of the tensor (3) must match "
     "the existing size (2) at non-singleton dimension 0.  Target sizes: [3, 3].  Tensor sizes: [2, 3]"),
    (lambda: tt.addbmm(X, _t(4, 2, 5, dtype=tt.float32), _t(4, 5, 3)), RuntimeError, "mat1 and mat2 must have the "
     "same dtype, but got Float and Double"),
    (lambda: tt.chain_matmul(), RuntimeError, "chain_matmul(): Expected one or more matrices"),
    (lambda: tt.chain_matmul(X, _t(3)), RuntimeError, "Tensor dimension is 1, expected 2 instead."),
    (lambda: tt.chain_matmul(X, X), RuntimeError, "multi_dot(): tensors 0 and 1 with shapes [2, 3] and [2, 3] cannot "
     "be multiplied"),
]


@pytest.mark.parametrize("case", range(len(ADD_ERRORS)))
@pytest.mark.filterwarnings("ignore:torch.chain_matmul is deprecated")
def test_addmv_addr_addbmm_chain_matmul_errors(case):
    fn, kind, message = ADD_ERRORS[case]
    with pytest.raises(kind) as info:
        fn()
    assert str(info.value) == message


def test_addmv_addr_addbmm_values_and_nodes():
    i, m, v = _t(2, requires_grad=True), _t(2, 3, requires_grad=True), _t(3, requires_grad=True)
    out = tt.addmv(i, m, v, beta=0.5, alpha=2)
    assert type(out.grad_fn).__name__ == "AddmvBackward0"
    np.testing.assert_allclose(_np(out), 0.5 * _np(i) + 2 * _np(m) @ _np(v))
    nan = tt.tensor([float("nan"), 1.0], dtype=tt.float64)
    assert not np.isnan(_np(tt.addmv(nan, m, v, beta=0))).any()          # beta == 0 ignores input, NaN too
    a, b = _t(2, requires_grad=True), _t(3)
    out = tt.addr(_t(2, 1), a, b, beta=2, alpha=-1)
    assert type(out.grad_fn).__name__ == "AddrBackward0" and out.shape == (2, 3)
    assert tt.addr(tt.ones(2, 3, dtype=tt.int32), tt.tensor([1, 2], dtype=tt.int32), tt.tensor([1.5, 0, 1])).dtype \
        is tt.float32                                                       # promoted as torch's TensorIterator
    t, f = tt.tensor([True, False]), tt.tensor([False, True, True])
    assert tt.addr(tt.zeros(2, 3, dtype=tt.bool), t, f).tolist() == [[False, True, True], [False, False, False]]
    assert tt.addr(tt.ones(2, 3, dtype=tt.bool), t, f, beta=0, alpha=0).tolist() == [[False] * 3] * 2
    b1, b2 = _t(4, 2, 5, requires_grad=True), _t(4, 5, 3)
    out = tt.addbmm(_t(3), b1, b2, beta=-1, alpha=0.5)
    assert type(out.grad_fn).__name__ == "AddbmmBackward0"
    assert tt.addbmm(tt.ones(2, 3), tt.zeros(0, 2, 5), tt.zeros(0, 5, 3), beta=3).tolist() == [[3.0] * 3] * 2
    # the in-place forms record the composite's node on self
    y = _t(2, requires_grad=True) * 1
    y.addmv_(m, v)
    assert type(y.grad_fn).__name__ == "AddmvBackward0"
    z = _t(2, 3, requires_grad=True) * 1
    z.addbmm_(_t(4, 2, 5), _t(4, 5, 3))
    assert type(z.grad_fn).__name__ == "AddbmmBackward0"
    w = tt.zeros(2, 3)
    assert tt.addmv_(tt.zeros(2), tt.ones(2, 3), tt.ones(3)).tolist() == [3.0, 3.0]
    assert w.addr_(tt.ones(2), tt.ones(3), alpha=2).tolist() == [[2.0] * 3] * 2 and w._version == 1


@pytest.mark.filterwarnings("ignore:torch.chain_matmul is deprecated")
def test_chain_matmul():
    ms = [_t(2, 5), _t(5, 1), _t(1, 4), _t(4, 3), _t(3, 2)]
    np.testing.assert_allclose(_np(tt.chain_matmul(*ms)), np.linalg.multi_dot([_np(m) for m in ms]))
    one = _t(2, 3, requires_grad=True)
    assert type(tt.chain_matmul(one).grad_fn).__name__ == "CloneBackward0"
    assert type(tt.chain_matmul(one, _t(3, 2), _t(2, 2)).grad_fn).__name__ == "ViewBackward0"


def test_chain_matmul_warns_once_as_torch():
    import tritensor.ops.einsum as e
    e._chain_warned.clear()
    with pytest.warns(UserWarning, match="^torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                                         "release. Use torch.linalg.multi_dot instead"):
        tt.chain_matmul(_t(2, 2))


def test_out_dtype_rules():
    out = tt.empty(0)
    with pytest.raises(RuntimeError, match="^tensordot: Expected the output tensor to have dtype Double, but got an "
                                           "output tensor with dtype Float$"):
        tt.tensordot(X, X, ([1], [1]), out=out)
    with pytest.raises(RuntimeError, match="^tensordot: Expected the output tensor to have dtype Double"):
        tt.inner(X, X, out=out)
    with pytest.raises(RuntimeError, match="^result dtype Float does not match input dtype Double$"):
        tt.vdot(_t(3), _t(3), out=out)
    with pytest.raises(RuntimeError, match="^Expected out tensor to have dtype double, but got float instead$"):
        tt.addmv(_t(2), X, _t(3), out=out)
    with pytest.raises(RuntimeError, match="^self and mat2 must have the same dtype, but got Float and Double$"):
        tt.addbmm(X, _t(1, 2, 2), _t(1, 2, 3), out=out)
    with pytest.raises(RuntimeError, match="^multi_dot\\(\\): expected out tensor to have dtype double but got float$"):
        tt.chain_matmul(X, X.t(), out=out)
    out64 = tt.empty(0, dtype=tt.float64)
    assert tt.addr(X, _t(2), _t(3), out=out64) is out64 and out64.shape == (2, 3)


# --------------------------------------------------------------------------- integer matmul (issue 21 item 10)
INTS = (tt.uint8, tt.int8, tt.int16, tt.int32, tt.int64)


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_integer_matmul_family_is_exact_and_wraps(dtype):
    """Products past the dtype's range wrap as torch's CPU kernels (and NumPy's integer matmul)."""
    info = np.iinfo(dtype.numpy_dtype)
    a = RNG.integers(info.min // 2, info.max // 2, (5, 37)).astype(dtype.numpy_dtype)
    b = RNG.integers(info.min // 2, info.max // 2, (37, 6)).astype(dtype.numpy_dtype)
    d = RNG.integers(info.min // 2, info.max // 2, (6,)).astype(dtype.numpy_dtype)
    A, B, D = (tt.tensor(v, dtype=dtype) for v in (a, b, d))
    with np.errstate(over="ignore"):
        ab = a @ b
        checks = [(tt.mm(A, B), ab), (A @ B, ab), (tt.bmm(A[None], B[None]), ab[None]),
                  (tt.matmul(A[None].expand(2, 5, 37), B), np.stack([ab, ab])),
                  (tt.mv(A, B[:, 0]), ab[:, 0]), (tt.dot(A[0], B[:, 0]), ab[0, 0]),
                  (tt.addmm(D, A, B, beta=3, alpha=2), (d * dtype.numpy_dtype.type(3) + ab * dtype.numpy_dtype.type(2))),
                  (tt.nn.functional.linear(A, B.t(), D), ab + d)]
    for got, want in checks:
        assert got.dtype is dtype
        np.testing.assert_array_equal(_np(got), np.asarray(want).astype(dtype.numpy_dtype))


def test_int64_matmul_wraps_modulo_2_64():
    a = RNG.integers(-2 ** 62, 2 ** 62, (4, 9))
    b = RNG.integers(-2 ** 62, 2 ** 62, (9, 3))
    np.testing.assert_array_equal(_np(tt.tensor(a) @ tt.tensor(b)), a @ b)


def test_integer_alpha_and_beta_are_truncated_as_torch():
    x = tt.ones(2, 2, dtype=tt.int32)
    assert tt.addmm(x, x, x, alpha=2.5).tolist() == [[5, 5], [5, 5]]        # alpha 2: 2 * 2 + 1
    assert tt.addmm(x, x, x, beta=1.5).tolist() == [[3, 3], [3, 3]]
    assert tt.baddbmm(x[None], x[None], x[None], alpha=True).tolist() == [[[3, 3], [3, 3]]]
    assert tt.addmv(x[0], x, x[0], beta=0.5, alpha=True).tolist() == [2, 2]   # beta 0: input left out


def test_integer_matmul_on_cuda():
    """One pass of the integer kernel on the emulated device: int64 wrapping, int8 truncation,
    a transposed operand, a broadcast bias and alpha/beta."""
    a = RNG.integers(-2 ** 62, 2 ** 62, (33, 20))
    b = RNG.integers(-2 ** 62, 2 ** 62, (40, 20))
    got = tt.tensor(a, device="cuda") @ tt.tensor(b, device="cuda").t()
    np.testing.assert_array_equal(_np(got), a @ b.T)
    a8 = RNG.integers(-100, 100, (3, 5, 40)).astype(np.int8)
    b8 = RNG.integers(-100, 100, (3, 40, 7)).astype(np.int8)
    d8 = RNG.integers(-100, 100, (7,)).astype(np.int8)
    got = tt.baddbmm(tt.tensor(d8, device="cuda"), tt.tensor(a8, device="cuda"), tt.tensor(b8, device="cuda"),
                     beta=-2, alpha=3)
    with np.errstate(over="ignore"):
        want = (a8.astype(np.int64) @ b8.astype(np.int64) * 3 - 2 * d8.astype(np.int64)).astype(np.int8)
    assert got.dtype is tt.int8
    np.testing.assert_array_equal(_np(got), want)


def test_tensordot_of_integers_over_a_length_one_axis_keeps_the_dtype():
    """torch sums a contracted axis of length one right away and keeps the dtype (torch 2.13:
    tensordot(ones((2, 3, 1), uint8), ones((1, 1), uint8), 2) is tensor([3, 3], dtype=torch.uint8), and
    tensordot(ones((2, 1, 3), int16), ones((3, 1), int16), 2) is tensor([9, 9], dtype=torch.int16))."""
    out = tt.tensordot(tt.ones((2, 3, 1), dtype=tt.uint8), tt.ones((1, 1), dtype=tt.uint8), 2)
    assert out.dtype is tt.uint8 and out.tolist() == [3, 3]
    out = tt.tensordot(tt.ones((2, 1, 3), dtype=tt.int16), tt.ones((3, 1), dtype=tt.int16), 2)
    assert out.dtype is tt.int16 and out.tolist() == [9, 9]
