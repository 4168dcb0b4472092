"""The spectral half of tt.linalg (ops/spectral.py, ops/norms.py, ops/matrix_functions.py): the
decompositions checked by the properties that define them (A V = V diag(w), U diag(S) Vh = A,
orthonormal factors, sorted values), gradients against torch 2.13's recorded by
tests/data/make_linalg_spectral_values.py, torch's errors, return types, strides and node names,
out=, empty inputs, and the Jacobi kernels on the emulated device (n = 5 and 17, a batch of 2,
non-contiguous input, NaN and inf). Parity with SciPy over dtypes is tests/opinfo_linalg_spectral.py's.
"""
import json
import math
import pathlib
import re
import warnings

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy
from tritensor.backends import triton as tb
from tritensor.backends.triton import linalg_spectral as tls

RNG = np.random.default_rng(11)
DATA = json.loads((pathlib.Path(__file__).parent / "data" / "linalg_spectral_values.json").read_text())


def T(a, device="cpu", dtype=tt.float64, **kw):
    return tt.tensor(np.asarray(a), dtype=dtype, device=device, **kw)


def raises(exc, message):
    return pytest.raises(exc, match="^" + re.escape(message) + "$")


def sym(n, batch=()):
    a = RNG.standard_normal(batch + (n, n))
    return a + np.swapaxes(a, -1, -2)


def mT(a):
    return np.swapaxes(a, -1, -2)


def check_eigh(A, w, V, tol):
    A, w, V = to_numpy(A).astype(np.float64), to_numpy(w).astype(np.float64), to_numpy(V).astype(np.float64)
    scale = max(1.0, np.abs(A).max())
    assert np.abs(A @ V - V * w[..., None, :]).max() <= tol * scale
    assert np.abs(mT(V) @ V - np.eye(V.shape[-1])).max() <= tol
    assert np.all(np.diff(w, axis=-1) >= 0)


def check_svd(A, U, S, Vh, tol):
    A, U, S, Vh = (to_numpy(x).astype(np.float64) for x in (A, U, S, Vh))
    k = S.shape[-1]
    scale = max(1.0, np.abs(A).max())
    assert np.abs((U[..., :k] * S[..., None, :]) @ Vh[..., :k, :] - A).max() <= tol * scale
    assert np.abs(mT(U) @ U - np.eye(U.shape[-1])).max() <= tol
    assert np.abs(Vh @ mT(Vh) - np.eye(Vh.shape[-2])).max() <= tol
    assert np.all(np.diff(S, axis=-1) <= 0) and np.all(S >= 0)


# --------------------------------------------------------------------------- the Jacobi kernels
@pytest.mark.parametrize("dtype,tol", [(tt.float32, 2e-5), (tt.float64, 1e-13)], ids=["float32", "float64"])
def test_eigh_batches_views_and_triangles(dtype, tol, device):
    a = sym(5, (2,))
    A = T(a, device, dtype)
    check_eigh(A, *tt.linalg.eigh(A), tol)
    # a transposed view, read from its upper triangle: the matrix mirrored from there
    g = RNG.standard_normal((5, 5))
    At = T(g, device, dtype).mT
    w, V = tt.linalg.eigh(At, UPLO="U")
    upper = np.triu(g.T) + np.triu(g.T, 1).T
    check_eigh(T(upper, dtype=dtype), w, V, tol)
    np.testing.assert_allclose(to_numpy(tt.linalg.eigvalsh(At, UPLO="u")), to_numpy(w), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype,tol", [(tt.float32, 5e-5), (tt.float64, 1e-13)], ids=["float32", "float64"])
def test_svd_tall_wide_full_and_rank_deficient(dtype, tol, device):
    for a in (RNG.standard_normal((2, 6, 4)), RNG.standard_normal((3, 7))):
        for full in (True, False):
            A = T(a, device, dtype)
            check_svd(A, *tt.linalg.svd(A, full_matrices=full), tol)
    # rank 2: U is still orthonormal (the null space completed), full or not
    r2 = RNG.standard_normal((6, 2)) @ RNG.standard_normal((2, 5))
    U, S, Vh = tt.linalg.svd(T(r2, device, dtype))
    check_svd(T(r2, dtype=dtype), U, S, Vh, tol)
    assert np.all(to_numpy(S)[2:] <= tol * 10)
    Z = tt.linalg.svd(tt.zeros(3, 2, dtype=dtype, device=device))
    check_svd(tt.zeros(3, 2), *Z, tol)


def test_jacobi_kernels_at_17_and_scaled_extremes(device):
    a = sym(17)
    check_eigh(T(a, device), *tt.linalg.eigh(T(a, device)), 1e-13)
    b = RNG.standard_normal((17, 17)) * 1e150       # squares would overflow without the scaling
    S = to_numpy(tt.linalg.svdvals(T(b, device)))
    np.testing.assert_allclose(S, np.linalg.svd(b, compute_uv=False), rtol=1e-12)


def test_non_finite_input_on_every_device(device):
    nan = np.full((3, 3), np.nan)
    with raises(tt.linalg.LinAlgError, "linalg.eigh: The algorithm failed to converge because the input matrix is "
                "ill-conditioned or has too many repeated eigenvalues (error code: 2)."):
        tt.linalg.eigh(T(nan, device))
    with raises(tt.linalg.LinAlgError, "linalg.eigh: (Batch element 1): The algorithm failed to converge because the "
                "input matrix is ill-conditioned or has too many repeated eigenvalues (error code: 1)."):
        tt.linalg.eigvalsh(T(np.stack([np.eye(3), nan]), device))
    with raises(tt.linalg.LinAlgError, "linalg.svd: (Batch element 1): The algorithm failed to converge because the "
                "input matrix contained non-finite values."):
        tt.linalg.svdvals(T(np.stack([np.eye(3), nan]), device))
    # torch: an inf gives NaN results, no error; a 2 x 2 of NaN too for eigh
    inf = np.eye(3)
    inf[1, 0] = inf[0, 1] = np.inf
    assert np.isnan(to_numpy(tt.linalg.eigh(T(inf, device))[0])).all()
    assert np.isnan(to_numpy(tt.linalg.svd(T(inf, device))[1])).all()
    assert np.isnan(to_numpy(tt.linalg.eigvalsh(T(np.full((2, 2), np.nan), device)))).all()


def test_first_derivatives_on_the_device_agree_with_cpu(device):
    a = RNG.standard_normal((4, 3))
    s = sym(3)
    results = []
    for dev in ("cpu", device):
        A, B = T(a, dev, requires_grad=True), T(s, dev, requires_grad=True)
        U, S, Vh = tt.linalg.svd(A, full_matrices=False)
        w, V = tt.linalg.eigh(B)
        loss = (U.abs() * T(a, dev)).sum() + S.sum() + (V.abs()).sum() + (w * w).sum() + \
            tt.linalg.matrix_exp(B / 3).sum()
        results.append([to_numpy(g) for g in tt.autograd.grad(loss, (A, B))])
    for g_cpu, g_dev in zip(*results):
        np.testing.assert_allclose(g_dev, g_cpu, rtol=1e-10, atol=1e-12)


def test_nuclear_norm_runs_the_kernel_on_cuda(monkeypatch):
    launched = []
    run = tb._run

    def spy(kernel, grid, *args, **meta):
        launched.append(getattr(kernel, "__name__", str(kernel)))
        return run(kernel, grid, *args, **meta)
    monkeypatch.setattr(tb, "_run", spy)
    x = T([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "cuda")
    np.testing.assert_allclose(tt.norm(x, "nuc").item(), 10.280901636369205, rtol=1e-12)
    assert "jacobi_kernel" in launched


@pytest.fixture
def block_jacobi(monkeypatch):
    """The block Jacobi paths with a 16-row register limit (subproblems of 16: tl.dot's minimum)."""
    monkeypatch.setitem(tls.INTERPRETER, "small_n", 16)
    monkeypatch.setitem(tls.GPU, "small_n", 16)


def test_block_jacobi_past_the_registers(block_jacobi):
    a = sym(20)                                  # 3 blocks of 8, padded to 4: 3 rounds a sweep
    w, V = tt.linalg.eigh(T(a, "cuda"))
    check_eigh(T(a), w, V, 1e-12)
    np.testing.assert_allclose(to_numpy(w), np.linalg.eigvalsh(a), rtol=1e-12, atol=1e-12)
    for shape in ((20, 7), (7, 18)):             # tall (U completed to 20 columns) and wide
        x = RNG.standard_normal(shape)
        U, S, Vh = tt.linalg.svd(T(x, "cuda"))
        check_svd(T(x), U, S, Vh, 1e-12)
        np.testing.assert_allclose(to_numpy(S), np.linalg.svd(x, compute_uv=False), rtol=1e-12)
    bad = np.stack([sym(17), np.full((17, 17), np.nan)])
    with raises(tt.linalg.LinAlgError, "linalg.eigh: (Batch element 1): The algorithm failed to converge because the "
                "input matrix is ill-conditioned or has too many repeated eigenvalues (error code: 16)."):
        tt.linalg.eigh(T(bad, "cuda"))
    inf = sym(17)
    inf[3, 5] = inf[5, 3] = np.inf
    assert np.isnan(to_numpy(tt.linalg.svdvals(T(inf, "cuda")))).all()


# --------------------------------------------------------------------------- gradients: torch's values
def _expressions():
    W = {k: tt.tensor(v, dtype=tt.float64) for k, v in DATA["weights"].items()}
    W3, W33, W43 = W["W3"], W["W33"], W["W43"]
    ex = {
        "eigh": lambda a: (tt.linalg.eigh(a + a.mT)[0] * W3).sum() + (tt.linalg.eigh(a + a.mT)[1].abs() * W33).sum(),
        "eigh_upper": lambda a: (tt.linalg.eigh(a, UPLO="U")[1].abs() * W33).sum(),
        "eigvalsh": lambda a: (tt.linalg.eigvalsh(a) * W3).sum(),
        "svd_tall": lambda a: (lambda u, s, vh: (u.abs() * W43).sum() + (s * W3).sum() + (vh.abs() * W33).sum())(
            *tt.linalg.svd(a, full_matrices=False)),
        "svd_wide": lambda a: (lambda u, s, vh: (u.abs() * W33).sum() + (s * W3).sum() + (vh.abs() * W43.mT).sum())(
            *tt.linalg.svd(a, full_matrices=False)),
        "svd_full": lambda a: (lambda u, s, vh: u[:, :3].abs().sum() + (s * W3).sum())(*tt.linalg.svd(a)),
        "svdvals": lambda a: (tt.linalg.svdvals(a) * W3).sum(),
        "svd_legacy_V": lambda a: (tt.svd(a).V.abs() * W33).sum(),
        "pinv": lambda a: (tt.linalg.pinv(a) * W43.mT).sum(),
        "pinv_hermitian": lambda a: (tt.linalg.pinv(a, hermitian=True) * W33).sum(),
        "matrix_exp": lambda a: (tt.linalg.matrix_exp(a) * W33).sum(),
        "matrix_exp_large": lambda a: (tt.linalg.matrix_exp(a) * W33).sum(),
        "cond_2": lambda a: tt.linalg.cond(a),
        "cond_m2": lambda a: tt.linalg.cond(a, -2),
        "cond_nuc": lambda a: tt.linalg.cond(a, "nuc"),
        "matrix_norm_nuc": lambda a: tt.linalg.matrix_norm(a, "nuc"),
        "matrix_norm_2": lambda a: tt.linalg.matrix_norm(a, 2),
        "matrix_norm_m2": lambda a: tt.linalg.matrix_norm(a, -2),
        "matrix_norm_1": lambda a: tt.linalg.matrix_norm(a, 1),
        "matrix_norm_inf": lambda a: tt.linalg.matrix_norm(a, math.inf),
        "norm_nuc_legacy": lambda a: tt.norm(a, "nuc"),
        "cross": lambda a, b: (tt.linalg.cross(a, b) * W43[:2]).sum(),
        "vecdot": lambda a, b: (tt.linalg.vecdot(a, b) * W3[:2]).sum(),
        "vander": lambda a: (tt.linalg.vander(a, N=4) * W43[:3, :1]).sum(),
        "matrix_power_m2": lambda a: (tt.linalg.matrix_power(a, -2) * W33).sum(),
        "matrix_power_5": lambda a: (tt.linalg.matrix_power(a, 5) * W33).sum(),
        "multi_dot": lambda a, b, c, d: tt.linalg.multi_dot([a, b, c, d]),
    }
    for ord_ in (2, 1, math.inf, -math.inf, 0, 0.5, 3, -1):
        ex[f"vector_norm_{ord_}"] = lambda a, o=ord_: (tt.linalg.vector_norm(a, o, dim=1) * W3).sum()
    return ex


def test_gradients_are_torchs():
    ex = _expressions()
    for case in DATA["cases"]:
        inputs = [T(x, requires_grad=True) for x in case["inputs"]]
        grads = tt.autograd.grad(ex[case["name"]](*inputs), inputs, allow_unused=True)
        for g, expected in zip(grads, case["grads"]):
            got = np.zeros(np.shape(expected)) if g is None else to_numpy(g)
            np.testing.assert_allclose(got, expected, rtol=1e-8, atol=1e-10, err_msg=case["name"])


def test_node_names():
    a = T(RNG.standard_normal((3, 3)), requires_grad=True)
    s = a + a.mT
    names = {
        "LinalgEighBackward0": [*tt.linalg.eigh(s), tt.linalg.eigvalsh(s)],
        "LinalgSvdBackward0": [*tt.linalg.svd(a), tt.linalg.svdvals(a), tt.svd(a).U, tt.svd(a).S],
        "TransposeBackward0": [tt.svd(a).V],
        "LinalgPinvBackward0": [tt.linalg.pinv(a), tt.pinverse(a), tt.linalg.pinv(s, hermitian=True)],
        "LinalgMatrixExpBackward0": [tt.linalg.matrix_exp(a), tt.matrix_exp(a), a.matrix_exp()],
        "LinalgVectorNormBackward0": [tt.linalg.vector_norm(a, 3.0), tt.linalg.matrix_norm(a), tt.linalg.norm(a),
                                      tt.norm(a)],
        "SumBackward1": [tt.linalg.matrix_norm(a, "nuc"), tt.linalg.vecdot(a, a)],
        "AmaxBackward0": [tt.linalg.matrix_norm(a, 2), tt.linalg.matrix_norm(a, 1), tt.linalg.norm(a, math.inf)],
        "AminBackward0": [tt.linalg.matrix_norm(a, -2), tt.linalg.matrix_norm(a, -math.inf)],
        "LinalgCrossBackward0": [tt.linalg.cross(a, a), tt.cross(a, a, dim=0), a.cross(a, dim=1)],
        "VdotBackward0": [tt.linalg.vecdot(a[0], a[1])],
        "CatBackward0": [tt.linalg.vander(a[0])],
        "DiagonalBackward0": [tt.linalg.diagonal(a)],
        "ViewBackward0": [tt.linalg.multi_dot([a, a, a])],
        "MmBackward0": [tt.linalg.matrix_power(a, 3), a.matrix_power(2)],
        "CopyBackwards": [tt.linalg.matrix_power(a, 0)],
        "CloneBackward0": [tt.linalg.matrix_power(a, 1)],
        "SqueezeBackward1": [tt.linalg.cond(a)],
        "NanToNumBackward0": [tt.linalg.cond(a, 1)],
        "MulBackward0": [tt.linalg.cond(a, "nuc")],
    }
    for name, outs in names.items():
        for o in outs:
            assert o.grad_fn.name() == name, (name, o.grad_fn.name())


# --------------------------------------------------------------------------- return types, layouts, empty
def test_return_types_layouts_and_empty_inputs():
    s = T(sym(3))
    r = tt.linalg.eigh(s)
    assert type(r).__name__ == "linalg_eigh" and r._fields == ("eigenvalues", "eigenvectors")
    assert repr(r).startswith("tritensor.return_types.linalg_eigh(\neigenvalues=tensor(")
    assert r.eigenvectors.stride() == (1, 3)                 # column-major, as LAPACK's (torch's)
    a = T(RNG.standard_normal((2, 4, 3)))
    for full, shapes, strides in ((True, [(2, 4, 4), (2, 3), (2, 3, 3)], [(16, 1, 4), (3, 1), (9, 1, 3)]),
                                  (False, [(2, 4, 3), (2, 3), (2, 3, 3)], [(12, 1, 4), (3, 1), (9, 1, 3)])):
        out = tt.linalg.svd(a, full_matrices=full)
        assert type(out).__name__ == "linalg_svd" and out._fields == ("U", "S", "Vh")
        assert [tuple(t.shape) for t in out] == shapes and [t.stride() for t in out] == strides
    legacy = tt.svd(a)
    assert type(legacy).__name__ == "svd" and legacy._fields == ("U", "S", "V")
    assert legacy.V.stride() == (9, 3, 1) and legacy.U.shape == (2, 4, 3)
    zero_uv = tt.svd(a, compute_uv=False)
    assert zero_uv.U.shape == (2, 4, 4) and zero_uv.V.shape == (2, 3, 3) and not to_numpy(zero_uv.U).any()
    # torch's empty results: a 0-row matrix has the identity as its full Vh
    U, S, Vh = tt.linalg.svd(tt.zeros(2, 0, 3))
    assert U.shape == (2, 0, 0) and S.shape == (2, 0) and np.array_equal(to_numpy(Vh), np.broadcast_to(np.eye(3),
                                                                                                 (2, 3, 3)))
    U, S, Vh = tt.linalg.svd(tt.zeros(3, 0), full_matrices=False)
    assert (U.shape, S.shape, Vh.shape) == ((3, 0), (0,), (0, 0))
    w, V = tt.linalg.eigh(tt.zeros(2, 0, 0))
    assert w.shape == (2, 0) and V.shape == (2, 0, 0)
    assert tt.linalg.matrix_rank(tt.zeros(2, 0, 3)).tolist() == [0, 0]
    assert tt.linalg.pinv(tt.zeros(2, 0, 3)).shape == (2, 3, 0)
    assert tt.linalg.cond(tt.zeros(2, 0, 0), 1).tolist() == [0.0, 0.0]
    assert tt.linalg.matrix_exp(tt.zeros(0, 0)).shape == (0, 0)


def test_out_arguments():
    a = T(RNG.standard_normal((3, 3)))
    w, V = tt.empty(3, dtype=tt.float64), tt.empty(0, dtype=tt.float64)
    r = tt.linalg.eigh(a + a.mT, out=(w, V))
    assert r.eigenvalues is w and r.eigenvectors is V and V.shape == (3, 3)
    with raises(RuntimeError, "Expected out tensor to have dtype double, but got float instead"):
        tt.linalg.svdvals(a, out=tt.empty(3))
    rank = tt.empty((), dtype=tt.int32)
    assert tt.linalg.matrix_rank(a, out=rank) is rank and rank.item() == 3
    with raises(RuntimeError, "linalg.matrix_norm expected out tensor dtype Double but got: Float"):
        tt.linalg.matrix_norm(a, out=tt.empty(()))
    with raises(RuntimeError, "linalg.norm expected out tensor dtype Double but got: Float"):
        tt.linalg.norm(a, out=tt.empty(()))
    with raises(RuntimeError, "linalg.vecdot: Expected out of dtypeDouble but found Float"):
        tt.linalg.vecdot(a, a, out=tt.empty(3))
    with raises(RuntimeError, "multi_dot(): expected out tensor to have dtype double but got float"):
        tt.linalg.multi_dot([a, a], out=tt.empty(3, 3))
    U, S, Vt = tt.empty(0, dtype=tt.float64), tt.empty(0, dtype=tt.float64), tt.empty(0, dtype=tt.float64)
    assert tt.svd(a, out=(U, S, Vt)).V is Vt
    np.testing.assert_allclose(to_numpy(U * S) @ to_numpy(Vt).T, to_numpy(a), atol=1e-12)
    for name in ("matrix_exp", "vander", "diagonal"):
        with pytest.raises(TypeError):
            getattr(tt.linalg, name)(a, out=a)


def test_driver_is_cusolvers_choice():
    with raises(RuntimeError, "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                "cuSOLVER backend."):
        tt.linalg.svd(tt.eye(3), driver="gesvd")
    a = tt.eye(3, device="cuda")
    np.testing.assert_allclose(to_numpy(tt.linalg.svdvals(a, driver="gesvdj")), [1, 1, 1])
    with raises(RuntimeError, "torch.linalg.svd: unknown svd driver gesdd in svd_cusolver computation. Check doc at "
                "https://pytorch.org/docs/stable/generated/torch.linalg.svd.html"):
        tt.linalg.svd(a, driver="gesdd")


# --------------------------------------------------------------------------- errors (torch 2.13's texts)
ERRORS = [
    (lambda: tt.linalg.eigh(tt.ones(2, 3)), RuntimeError,
     "linalg.eigh: A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda: tt.linalg.eigvalsh(tt.ones(3)), RuntimeError, "linalg.eigh: The input tensor A must have at least 2 dimensions."),
    (lambda: tt.linalg.eigh(tt.ones(3, 3, dtype=tt.int64)), NotImplementedError,
     "\"linalg_eigh_cpu\" not implemented for 'Long'"),
    (lambda: tt.linalg.eigh(tt.ones(3, 3), UPLO="X"), RuntimeError, "Expected UPLO argument to be 'L' or 'U', but got X"),
    (lambda: tt.linalg.eigh(tt.ones(3, 3), 1), TypeError, "linalg_eigh(): argument 'UPLO' (position 2) must be str, not int"),
    (lambda: tt.linalg.eigh([1]), TypeError, "linalg_eigh(): argument 'input' (position 1) must be Tensor, not list"),
    (lambda: tt.linalg.svd(tt.ones(3)), RuntimeError, "linalg.svd: The input tensor A must have at least 2 dimensions."),
    (lambda: tt.linalg.svd(tt.ones(3, 3, dtype=tt.int64)), RuntimeError,
     "linalg.svd: Expected a floating point or complex tensor as input. Got Long"),
    (lambda: tt.linalg.svdvals(tt.ones(3, 3, dtype=tt.float16)), NotImplementedError,
     "\"linalg_svd_cpu\" not implemented for 'Half'"),
    (lambda: tt.svd(tt.ones(3)), RuntimeError,
     "linalg.svd: input should have at least 2 dimensions, but has 1 dimensions instead"),
    (lambda: tt.linalg.vector_norm(tt.ones(3, dtype=tt.int64)), RuntimeError,
     "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"),
    (lambda: tt.linalg.vector_norm(tt.ones(3), "fro"), TypeError,
     "linalg_vector_norm(): argument 'ord' (position 2) must be Number, not str"),
    (lambda: tt.linalg.vector_norm(tt.ones(3, 3), dtype=tt.float16), RuntimeError,
     "linalg.vector_norm: the dtype of the input (Float) should be convertible without narrowing to the specified "
     "dtype (Half)"),
    (lambda: tt.linalg.vector_norm(tt.ones(0, 3), math.inf), RuntimeError,
     "linalg.vector_norm cannot compute the inf norm on an empty tensor because the operation does not have an "
     "identity"),
    (lambda: tt.linalg.matrix_norm(tt.ones(3, 3), 3), RuntimeError, "linalg.matrix_norm: Order 3 not supported."),
    (lambda: tt.linalg.matrix_norm(tt.ones(3, 3), "abc"), RuntimeError, "linalg.matrix_norm: Order abc not supported."),
    (lambda: tt.linalg.matrix_norm(tt.ones(3, 3), dim=(0, 0)), RuntimeError,
     "linalg.matrix_norm: dims must be different. Got (0, 0)"),
    (lambda: tt.linalg.matrix_norm(tt.ones(3, 3, dtype=tt.float16), "nuc"), RuntimeError,
     "linalg.matrix_norm: Low precision dtypes not supported. Got Half"),
    (lambda: tt.linalg.matrix_norm(tt.ones(0, 3), -2), IndexError,
     "amin(): Expected reduction dim -1 to have non-zero size."),
    (lambda: tt.linalg.norm(tt.ones(3, 3, 3), 2), RuntimeError,
     "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got 3D."),
    (lambda: tt.linalg.norm(tt.ones(3, 3), dim=(0, 1, 1)), RuntimeError,
     "linalg.norm: If dim is specified, it must be of length 1 or 2. Got [0, 1, 1]"),
    (lambda: tt.norm(tt.ones(3, 3, 3), "nuc"), RuntimeError, "linalg.matrix_norm: dim must be a 2-tuple. Got 0 1 2"),
    (lambda: tt.linalg.cond(tt.ones(3)), RuntimeError, "linalg.cond: The input tensor must have at least 2 dimensions."),
    (lambda: tt.linalg.cond(tt.ones(2, 3), 1), RuntimeError,
     "linalg.cond(ord=1): A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda: tt.linalg.cond(tt.ones(2, 3), 1.0), RuntimeError,
     "linalg.cond(ord=1.000000): A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda: tt.linalg.cond(tt.ones(2, 3), -math.inf), RuntimeError,
     "linalg.cond(ord=-inf): A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda: tt.linalg.cond(tt.ones(3, 3), 3), RuntimeError, "linalg.cond got an invalid norm type: 3"),
    (lambda: tt.linalg.pinv(tt.ones(3, 3, dtype=tt.float16)), RuntimeError,
     "linalg.pinv(Half{[3, 3]}): expected a tensor with 2 or more dimensions of float, double, cfloat or cdouble types"),
    (lambda: tt.linalg.matrix_rank(tt.ones(3)), RuntimeError,
     "torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions."),
    (lambda: tt.linalg.matrix_rank(tt.ones(3, 3, dtype=tt.float16)), RuntimeError,
     "This function doesn't handle types other than float and double"),
    (lambda: tt.linalg.cross(tt.ones(2), tt.ones(2)), RuntimeError,
     "linalg.cross: inputs dimension -1 must have length 3. Got 2 and 2"),
    (lambda: tt.linalg.cross(tt.ones(2, 3), tt.ones(3)), RuntimeError,
     "linalg.cross: inputs must have the same number of dimensions."),
    (lambda: tt.linalg.cross(tt.ones(3), tt.ones(3, dtype=tt.float64)), RuntimeError,
     "expected scalar type Float but found Double"),
    (lambda: tt.cross(tt.ones(2, 2), tt.ones(2, 2), dim=None), RuntimeError, "no dimension of size 3 in input"),
    (lambda: tt.linalg.vecdot(tt.ones(3), tt.ones(4)), RuntimeError,
     "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, but got 3 and 4 "
     "elements respectively"),
    (lambda: tt.linalg.vecdot(tt.ones(3), tt.ones(3, dtype=tt.float64)), RuntimeError,
     "linalg.vecdot: Expected x and y to have the same dtype, but found x of type Float and y of type Double instead"),
    (lambda: tt.linalg.matrix_power(tt.ones(2, 3), 2), RuntimeError,
     "linalg.matrix_power: A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda: tt.linalg.matrix_power(tt.ones(3, 3), 2.0), TypeError,
     "linalg_matrix_power(): argument 'n' (position 2) must be int, not float"),
    (lambda: tt.linalg.matrix_power(tt.ones(3, 3, dtype=tt.int64), -1), RuntimeError,
     "linalg.inv: Expected a floating point or complex tensor as input. Got Long"),
    (lambda: tt.linalg.matrix_power(tt.ones(3, 3), -1), tt.linalg.LinAlgError,
     "linalg.inv: The diagonal element 2 is zero, the inversion could not be completed because the input matrix is "
     "singular."),
    (lambda: tt.matrix_exp(tt.ones(3, 3, dtype=tt.int64)), RuntimeError,
     "linalg.matrix_exp: Expected a floating point or complex tensor as input. Got Long"),
    (lambda: tt.linalg.multi_dot([tt.ones(3, 3)]), RuntimeError, "multi_dot(): expected at least 2 tensors but got 1"),
    (lambda: tt.linalg.multi_dot([tt.ones(3, 3), tt.ones(2, 3)]), RuntimeError,
     "multi_dot(): tensors 0 and 1 with shapes [3, 3] and [2, 3] cannot be multiplied"),
    (lambda: tt.linalg.multi_dot([tt.ones(3, 3), tt.ones(3, 3, dtype=tt.float64)]), RuntimeError,
     "multi_dot(): all tensors must have be the same dtype but tensor 0 is float and tensor 1 double"),
    (lambda: tt.linalg.vander(tt.ones(())), RuntimeError, "N must be greater than 1."),
    (lambda: tt.linalg.vander(tt.tensor([True])), RuntimeError,
     "linalg.vander supports floating point, complex, and integer tensors, but got Bool"),
    (lambda: tt.pca_lowrank(tt.ones(4, 3), q=5), ValueError,
     "q(=5) must be non-negative integer and not greater than min(m, n)=3"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_are_torchs(case):
    fn, exc, message = ERRORS[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # (torch.cross's deprecation of dim=None)
        with raises(exc, message):
            fn()


# --------------------------------------------------------------------------- the composites' own rules
def test_matrix_exp_properties_and_dtypes():
    a = RNG.standard_normal((3, 4, 4)) * np.array([1e-5, 1.0, 3.0])[:, None, None]
    E, Einv = tt.linalg.matrix_exp(T(a)), tt.linalg.matrix_exp(T(-a))
    np.testing.assert_allclose(to_numpy(E @ Einv), np.broadcast_to(np.eye(4), (3, 4, 4)), atol=1e-8)
    d = tt.linalg.matrix_exp(T(np.diag([1.0, -2.0, 0.5])))
    np.testing.assert_allclose(to_numpy(d), np.diag(np.exp([1.0, -2.0, 0.5])), rtol=1e-14)
    half = tt.linalg.matrix_exp(T([[0.0, 1.0], [-1.0, 0.0]], dtype=tt.float16))
    assert half.dtype is tt.float16          # computed in float32: a rotation by one radian
    np.testing.assert_allclose(to_numpy(half), [[math.cos(1), math.sin(1)], [-math.sin(1), math.cos(1)]], atol=1e-3)
    assert np.isnan(to_numpy(tt.linalg.matrix_exp(T([[np.nan, 0.0], [0.0, 1.0]])))).all()


def test_cond_of_singular_matrices_and_norms_of_special_orders():
    singular = T([[1.0, 2.0], [2.0, 4.0]])
    for p in ("fro", 1, -1, math.inf, -math.inf):
        assert tt.linalg.cond(singular, p).item() == math.inf
    assert math.isnan(tt.linalg.cond(tt.zeros(3, 3), "nuc").item())    # 0 * inf, as torch
    x = T([[0.0, 1.5, -2.0, 0.0]])
    assert tt.linalg.vector_norm(x, 0).item() == 2.0
    assert tt.linalg.vector_norm(x, -math.inf).item() == 0.0
    assert tt.linalg.vector_norm(x, -1).item() == 0.0
    assert tt.linalg.vector_norm(x, 2, dtype=tt.float64).dtype is tt.float64
    m = T(RNG.standard_normal((2, 3, 4)))
    assert tt.linalg.matrix_norm(m, 1, dim=(2, 0), keepdim=True).shape == (1, 3, 1)
    assert tt.linalg.matrix_norm(m, "nuc", dim=(0, 2)).shape == (3,)
    np.testing.assert_allclose(tt.linalg.norm(m).item(), np.linalg.norm(to_numpy(m).ravel()))


def test_rank_pinv_tolerances():
    a = np.diag([10.0, 1.0, 1e-3, 0.0])
    A = T(a)
    assert tt.linalg.matrix_rank(A).item() == 3
    assert tt.linalg.matrix_rank(A, atol=0.01).item() == 2          # rtol then 0, as torch
    assert tt.linalg.matrix_rank(A, rtol=0.05).item() == 2
    assert tt.linalg.matrix_rank(A, 0.5).item() == 2                # the deprecated tol: atol
    assert tt.linalg.matrix_rank(T(np.stack([a, -a])), hermitian=True, atol=tt.tensor([0.5, 5.0])).tolist() == [2, 1]
    np.testing.assert_allclose(to_numpy(tt.linalg.pinv(A, atol=0.01)), np.diag([0.1, 1.0, 0.0, 0.0]))
    np.testing.assert_allclose(to_numpy(tt.linalg.pinv(A, 0.2)), np.diag([0.1, 0.0, 0.0, 0.0]))   # rcond: rtol
    np.testing.assert_allclose(to_numpy(tt.pinverse(A)), np.diag([0.1, 1.0, 1e3, 0.0]))


def test_products():
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((4, 1, 3))
    np.testing.assert_allclose(to_numpy(tt.linalg.cross(T(a)[None], T(b))), np.cross(a[None], b))
    np.testing.assert_allclose(to_numpy(tt.linalg.vecdot(T(a), T(b))), (a * b).sum(-1))
    assert tt.linalg.cross(T([1, 0, 0], dtype=tt.int64), T([0, 1, 0], dtype=tt.int64)).tolist() == [0, 0, 1]
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        np.testing.assert_allclose(to_numpy(tt.cross(T(a.T), T(a.T[:, ::-1].copy()))),
                                   np.cross(a.T, a.T[:, ::-1], axis=0))
    v = tt.linalg.vander(T([2, 3], dtype=tt.int64), N=4)
    assert v.tolist() == [[1, 2, 4, 8], [1, 3, 9, 27]] and v.dtype is tt.int64
    mats = [RNG.standard_normal(s) for s in ((5,), (5, 2), (2, 6), (6, 3), (3,))]
    np.testing.assert_allclose(to_numpy(tt.linalg.multi_dot([T(m) for m in mats])), np.linalg.multi_dot(mats))
    p = RNG.standard_normal((2, 3, 3))
    assert tt.linalg.matrix_power(T(p), 0).tolist() == np.broadcast_to(np.eye(3), (2, 3, 3)).tolist()
    np.testing.assert_allclose(to_numpy(tt.matrix_power(T(p), 7)), np.linalg.matrix_power(p, 7), rtol=1e-10)
    assert tt.linalg.matrix_power(T([[1, 1], [1, 0]], dtype=tt.int64), 10).tolist() == [[89, 55], [55, 34]]
    assert tt.linalg.diagonal(T(p), offset=1).shape == (2, 2)


def test_lowrank_approximations():
    tt.manual_seed(3)
    base = RNG.standard_normal((30, 3)) @ RNG.standard_normal((3, 20))
    noisy = base + 1e-6 * RNG.standard_normal((30, 20))
    U, S, V = tt.svd_lowrank(T(noisy), q=5)
    assert (U.shape, S.shape, V.shape) == ((30, 5), (5,), (20, 5))
    approx = to_numpy(U[:, :3] * S[:3]) @ to_numpy(V[:, :3]).T
    assert np.abs(approx - noisy).max() < 1e-4
    np.testing.assert_allclose(to_numpy(S[:3]), np.linalg.svd(noisy, compute_uv=False)[:3], rtol=1e-8)
    # the default generator decides the draw: the same seed, the same result
    tt.manual_seed(9)
    first = to_numpy(tt.svd_lowrank(T(noisy.T), q=4)[0])
    tt.manual_seed(9)
    assert np.array_equal(first, to_numpy(tt.svd_lowrank(T(noisy.T), q=4)[0]))
    U, S, V = tt.pca_lowrank(T(noisy + 5.0), q=3)           # the column means are removed first
    centered = noisy + 5.0 - (noisy + 5.0).mean(0)
    np.testing.assert_allclose(to_numpy(S), np.linalg.svd(centered, compute_uv=False)[:3], rtol=1e-6)
