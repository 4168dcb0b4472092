"""Real clients of the Array API namespace (issue 28 item 4): scikit-learn with
``array_api_dispatch=True`` fits PCA, LinearDiscriminantAnalysis and Ridge (and, on cpu, the rest
of its array-API-aware estimators) and runs its array-API-aware metrics on tritensor tensors, on
cpu and on the (emulated) cuda device, and array-api-compat finds tritensor's namespace.

The oracle is scikit-learn itself on NumPy arrays: its NumPy path runs NumPy/SciPy (LAPACK), an
implementation independent of tritensor's. On top of the values, every result and every fitted
array must be a tritensor tensor on the input's device, and on cuda no array is read back to the
host while scikit-learn works (``_host_reads``): only scalars, which scikit-learn turns into
Python numbers for its control flow (``float(xp.sum(...))``) as it does on CuPy and PyTorch.

Not covered: ``roc_curve``/``roc_auc_score``. scikit-learn 1.9 calls ``xp.diff(fps, 2)`` there,
with ``n`` positional, which the standard (and array-api-strict, and array-api-compat's torch
namespace) make keyword-only; scikit-learn fails the same way on those namespaces."""
from __future__ import annotations

import contextlib
import os
import traceback
import warnings

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn", minversion="1.9")   # the version whose array API paths these are
array_api_compat = pytest.importorskip("array_api_compat")

import tritensor as tt  # noqa: E402
import tritensor.array_api as xp  # noqa: E402
from tritensor.runtime import transfer  # noqa: E402
from sklearn import metrics  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402
from sklearn.metrics import pairwise  # noqa: E402

TOL = {"float32": dict(rtol=2e-4, atol=2e-5), "float64": dict(rtol=1e-9, atol=1e-11)}


@contextlib.contextmanager
def _dispatch():
    """scikit-learn's array API mode. It refuses to start unless SCIPY_ARRAY_API=1 (SciPy reads
    it at import; the functions scikit-learn calls here behave the same either way), so the
    variable is set for the duration only: the rest of the suite keeps SciPy's default."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SCIPY_ARRAY_API", "1")
        with sklearn.config_context(array_api_dispatch=True), warnings.catch_warnings():
            # PCA's randomized solver: the standard has no LU, scikit-learn says it falls back to QR
            warnings.filterwarnings("ignore", "Array API does not support LU", UserWarning)
            yield


@contextlib.contextmanager
def _host_reads():
    """Records every read of a cuda tensor's values by the host: ``Tensor._to_host_array`` (item,
    tolist, float(), the index kernels' bounds checks) and every device -> host byte copy
    (``.cpu()``, ``numpy()``, linalg's error-flag checks). Yields the list of offences: reads of
    more than one element, except the integer index arrays tritensor's own index kernels read
    (ops/indexing.py checks their bounds on the host before launching)."""
    offences = []
    to_host_array, to_host = tt.Tensor._to_host_array, transfer._to_host

    def traced_to_host_array(self):
        if self.device.type != "cpu" and self.numel() > 1:
            where = traceback.extract_stack(limit=4)[:-1]
            by_index_kernel = any(f.filename.endswith(os.path.join("ops", "indexing.py")) for f in where)
            if not (by_index_kernel and not self.dtype.is_floating_point):
                offences.append(f"{self.numel()} x {self.dtype} read by {where[-1].filename}:{where[-1].lineno}")
        return to_host_array(self)

    def traced_to_host(dst, dst_offset, src, src_offset, nbytes, non_blocking):
        if nbytes > 8:
            where = traceback.extract_stack(limit=9)[:-1]
            offences.append(f"a {nbytes}-byte copy to the host by " +
                            " < ".join(f"{os.path.basename(f.filename)}:{f.lineno}" for f in where[::-1]))
        return to_host(dst, dst_offset, src, src_offset, nbytes, non_blocking)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tt.Tensor, "_to_host_array", traced_to_host_array)
        mp.setattr(transfer, "_to_host", traced_to_host)
        yield offences


def _on(device, *arrays):
    return [xp.asarray(a, device=device) for a in arrays]


def _check(got, want, device, dtype=None, tol=TOL["float64"], column_signs=False):
    """``got`` (a result of scikit-learn on tritensor) is a tensor on ``device`` holding ``want``
    (scikit-learn's result on NumPy) within ``tol``. ``column_signs``: each column is defined up to
    its sign (singular vectors that scikit-learn does not flip to a convention)."""
    assert isinstance(got, tt.Tensor), type(got)
    assert got.device.type == tt.device(device).type, got.device
    want = np.asarray(want)
    assert tuple(got.shape) == want.shape
    if dtype is not None:
        assert got.dtype == getattr(tt, dtype), (got.dtype, dtype)
    values = got.cpu().numpy()
    if column_signs:
        values = values * np.where(np.sum(values * want, axis=0) < 0, -1, 1)
    np.testing.assert_allclose(values, want, **tol)


# --------------------------------------------------------------------------- array-api-compat
def test_array_api_compat_finds_tritensor_namespace(device):
    t = xp.asarray([[1.0, 2.0], [3.0, 4.0]], device=device)
    assert array_api_compat.array_namespace(t) is xp
    assert array_api_compat.array_namespace(t, t[0]) is t.__array_namespace__() is xp
    assert array_api_compat.is_array_api_obj(t) and not array_api_compat.is_numpy_array(t)
    assert array_api_compat.device(t) == t.device == tt.device(device if device == "cpu" else "cuda:0")
    assert array_api_compat.size(t) == 4
    moved = array_api_compat.to_device(t, "cpu")
    assert moved.device == tt.device("cpu") and moved.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    # a mix of namespaces is refused, as array-api-compat refuses it for any two libraries
    with pytest.raises(TypeError, match="Multiple namespaces"):
        array_api_compat.array_namespace(t, np.ones(2))
    # scikit-learn's own namespace lookup lands on the same module
    from sklearn.utils._array_api import get_namespace
    with _dispatch():
        assert get_namespace(t)[0] is xp


# --------------------------------------------------------------------------- estimators
def _data(dtype, n=40, p=6, seed=0):
    rng = np.random.default_rng(seed)
    # correlated features with distinct variances: a well-separated spectrum, so the components
    # (and their signs, fixed by svd_flip) are defined to within rounding
    X = rng.standard_normal((n, p)) @ np.diag(np.linspace(3.0, 0.5, p)) + rng.standard_normal(p)
    y_class = rng.integers(0, 3, n)
    X[y_class == 1, 0] += 2.5        # three classes LDA can tell apart
    X[y_class == 2, 1] -= 2.5
    y_reg = X @ np.linspace(-1.0, 2.0, p) + 0.1 * rng.standard_normal(n)
    return X.astype(dtype), y_class, y_reg.astype(dtype)


def _estimator_cases():
    return [
        ("pca_full", lambda: PCA(n_components=3, svd_solver="full"), "fit_transform",
         ("components_", "explained_variance_", "explained_variance_ratio_", "singular_values_", "mean_",
          "noise_variance_")),
        ("pca_covariance_eigh", lambda: PCA(n_components=3, svd_solver="covariance_eigh"), "fit_transform",
         ("components_", "explained_variance_", "mean_")),
        ("pca_randomized", lambda: PCA(n_components=2, svd_solver="randomized", random_state=0,
                                       power_iteration_normalizer="QR"), "fit_transform",
         ("components_", "explained_variance_")),
        ("lda", lambda: LinearDiscriminantAnalysis(solver="svd"), "predict",
         ("coef_", "intercept_", "scalings_", "means_", "priors_", "xbar_", "explained_variance_ratio_")),
        ("ridge", lambda: Ridge(alpha=0.5, solver="svd"), "predict", ("coef_", "intercept_")),
    ]


# LDA's discriminant directions are singular vectors scikit-learn leaves unsigned (PCA's are signed
# by svd_flip): LAPACK and tritensor's cuda SVD may pick either sign
SIGNLESS = ("transform", "scalings_")


def _run(make, method, X, y_class, y_reg):
    est = make()
    y = y_class if isinstance(est, LinearDiscriminantAnalysis) else y_reg
    if method == "fit_transform":
        return est, est.fit_transform(X), {}
    est.fit(X, y)
    extra = {"decision_function": est.decision_function(X), "predict_proba": est.predict_proba(X),
             "transform": est.transform(X)} if isinstance(est, LinearDiscriminantAnalysis) else {}
    return est, est.predict(X), extra


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,make,method,fitted", _estimator_cases(), ids=[c[0] for c in _estimator_cases()])
def test_estimator_on_cpu_matches_numpy(name, make, method, fitted, dtype):
    X, y_class, y_reg = _data(dtype)
    ref, ref_out, ref_extra = _run(make, method, X, y_class, y_reg)
    with _dispatch():
        est, out, extra = _run(make, method, *_on("cpu", X, y_class, y_reg))
    tol = TOL[dtype]
    _check(out, ref_out, "cpu", None if name == "lda" else dtype, tol)
    for key, want in ref_extra.items():
        _check(extra[key], want, "cpu", dtype, tol, column_signs=key in SIGNLESS)
    for attr in fitted:
        _check(getattr(est, attr), getattr(ref, attr), "cpu", dtype, tol, column_signs=attr in SIGNLESS)
    if name == "lda":
        _check(est.classes_, ref.classes_, "cpu", "int64")
    if name.startswith("pca"):      # identities: orthonormal components, a fraction of the variance
        c = est.components_.cpu().numpy().astype(np.float64)
        np.testing.assert_allclose(c @ c.T, np.eye(c.shape[0]), atol=1e-5 if dtype == "float32" else 1e-12)
    if name == "pca_full":
        assert 0 < float(xp.sum(est.explained_variance_ratio_)) <= 1 + 1e-6


@pytest.fixture(scope="module")
def cuda_float32_data():
    return _data("float32", n=24, p=4, seed=1)


@pytest.mark.parametrize("name,make,method,fitted", _estimator_cases(), ids=[c[0] for c in _estimator_cases()])
def test_estimator_on_cuda_stays_on_the_device(name, make, method, fitted, cuda_float32_data):
    """float32 (a GPU's dtype) on the cuda device: NumPy's values, every result and fitted array on
    the device, and nothing but scalars read back by the host while scikit-learn works."""
    X, y_class, y_reg = cuda_float32_data
    ref, ref_out, ref_extra = _run(make, method, X, y_class, y_reg)
    inputs = _on("cuda", X, y_class, y_reg)
    with _dispatch(), _host_reads() as offences:
        est, out, extra = _run(make, method, *inputs)
    assert offences == []
    tol = TOL["float32"]
    _check(out, ref_out, "cuda", None if name == "lda" else "float32", tol)
    for key, want in ref_extra.items():
        _check(extra[key], want, "cuda", "float32", tol, column_signs=key in SIGNLESS)
    for attr in fitted:
        _check(getattr(est, attr), getattr(ref, attr), "cuda", "float32", tol, column_signs=attr in SIGNLESS)
    assert est.components_.device == inputs[0].device if name.startswith("pca") else True


def _more_estimators():
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import LogisticRegression, PoissonRegressor, RidgeClassifierCV, RidgeCV
    from sklearn.mixture import GaussianMixture
    from sklearn.naive_bayes import GaussianNB
    from sklearn.preprocessing import (KernelCenterer, LabelBinarizer, LabelEncoder, MaxAbsScaler, MinMaxScaler,
                                       Normalizer, PolynomialFeatures, StandardScaler)
    return [  # (estimator, what it learns from: "X", "Xy" with class labels, "Xr" with positive targets ...)
        (StandardScaler(), "X", "transform"), (MinMaxScaler(), "X", "transform"), (MaxAbsScaler(), "X", "transform"),
        (Normalizer(), "X", "transform"), (PolynomialFeatures(2), "X", "transform"),
        (KernelCenterer(), "K", "transform"), (Nystroem(n_components=5, random_state=0), "X", "transform"),
        (GaussianNB(), "Xy", "predict_proba"), (LogisticRegression(), "Xy", "predict_proba"),
        (RidgeCV(alphas=(0.1, 1.0, 10.0)), "Xr", "predict"), (RidgeClassifierCV(), "Xy", "decision_function"),
        (PoissonRegressor(alpha=0.1), "Xpos", "predict"),
        (GaussianMixture(2, init_params="random_from_data", random_state=0), "X", "predict_proba"),
        (LabelEncoder(), "y", "transform"), (LabelBinarizer(), "y", "transform"),
    ]


@pytest.mark.parametrize("est,learns,method", _more_estimators(), ids=[type(c[0]).__name__ for c in _more_estimators()])
def test_more_array_api_estimators_on_cpu(est, learns, method):
    """The rest of scikit-learn 1.9's array-API-aware estimators, float64 on cpu, against NumPy."""
    X, y_class, y_reg = _data("float64", n=30, p=4, seed=2)
    arrays = {"X": (X,), "K": (X @ X.T,), "Xy": (X, y_class), "Xr": (X, y_reg), "Xpos": (X, np.exp(y_reg / 4)),
              "y": (y_class,)}[learns]
    ref = sklearn.base.clone(est).fit(*arrays)
    want = getattr(ref, method)(arrays[0])
    with _dispatch():
        fitted = sklearn.base.clone(est).fit(*_on("cpu", *arrays))
        got = getattr(fitted, method)(xp.asarray(arrays[0]))
    _check(got, want, "cpu", None, dict(rtol=1e-6, atol=1e-9))


# --------------------------------------------------------------------------- metrics
def _metric_inputs():
    rng = np.random.default_rng(3)
    n = 16
    labels_true, labels_pred = rng.integers(0, 3, n), rng.integers(0, 3, n)
    labels_pred[:6] = labels_true[:6]       # better than chance, so every score is away from 0
    binary = rng.integers(0, 2, n)
    binary[:2] = (0, 1)
    score = rng.random(n)
    proba = rng.random((n, 3))
    proba /= proba.sum(axis=1, keepdims=True)
    y_true, y_pred = rng.random(n) + 0.2, rng.random(n) + 0.2
    X, Y = rng.standard_normal((7, 5)), rng.standard_normal((6, 5))
    return dict(labels=(labels_true, labels_pred), binary=(binary, score), proba=(labels_true, proba),
                reg=(y_true, y_pred), pair=(X, Y), paired=(X, X[::-1].copy()), positive=(np.abs(X), np.abs(Y)))


METRICS = [  # (function, inputs, keyword arguments)
    (metrics.accuracy_score, "labels", {}), (metrics.balanced_accuracy_score, "labels", {}),
    (metrics.cohen_kappa_score, "labels", {}), (metrics.confusion_matrix, "labels", {}),
    (metrics.f1_score, "labels", dict(average="macro")), (metrics.fbeta_score, "labels", dict(beta=0.5, average="weighted")),
    (metrics.jaccard_score, "labels", dict(average="micro")), (metrics.multilabel_confusion_matrix, "labels", {}),
    (metrics.precision_score, "labels", dict(average="macro")), (metrics.recall_score, "labels", dict(average=None)),
    (metrics.zero_one_loss, "labels", {}), (metrics.hamming_loss, "labels", {}),
    (metrics.average_precision_score, "binary", {}), (metrics.det_curve, "binary", {}),
    (metrics.precision_recall_curve, "binary", {}), (metrics.brier_score_loss, "binary", {}),
    (metrics.log_loss, "proba", {}),
    (metrics.r2_score, "reg", {}), (metrics.explained_variance_score, "reg", {}),
    (metrics.mean_squared_error, "reg", {}), (metrics.root_mean_squared_error, "reg", {}),
    (metrics.mean_absolute_error, "reg", {}), (metrics.mean_absolute_percentage_error, "reg", {}),
    (metrics.mean_squared_log_error, "reg", {}), (metrics.root_mean_squared_log_error, "reg", {}),
    (metrics.median_absolute_error, "reg", {}), (metrics.max_error, "reg", {}),
    (metrics.mean_pinball_loss, "reg", dict(alpha=0.3)), (metrics.mean_poisson_deviance, "reg", {}),
    (metrics.mean_gamma_deviance, "reg", {}), (metrics.mean_tweedie_deviance, "reg", dict(power=1.5)),
    (metrics.d2_tweedie_score, "reg", dict(power=1.5)),
    (pairwise.euclidean_distances, "pair", {}), (pairwise.manhattan_distances, "pair", {}),
    (pairwise.cosine_similarity, "pair", {}), (pairwise.cosine_distances, "pair", {}),
    (pairwise.linear_kernel, "pair", {}), (pairwise.polynomial_kernel, "pair", dict(degree=2)),
    (pairwise.rbf_kernel, "pair", dict(gamma=0.2)), (pairwise.laplacian_kernel, "pair", {}),
    (pairwise.sigmoid_kernel, "pair", {}), (pairwise.chi2_kernel, "positive", {}),
    (pairwise.additive_chi2_kernel, "positive", {}), (pairwise.pairwise_distances, "pair", dict(metric="cosine")),
    (pairwise.pairwise_kernels, "pair", dict(metric="rbf")), (pairwise.pairwise_distances_argmin, "pair", {}),
    (pairwise.paired_euclidean_distances, "paired", {}), (pairwise.paired_manhattan_distances, "paired", {}),
    (pairwise.paired_cosine_distances, "paired", {}),
]


def _compare_metric(got, want, device, float_dtype):
    """``float_dtype``: the dtype scikit-learn computes in. From integer labels it is the
    namespace's default floating dtype (``xp.asarray(0.0).dtype``): NumPy's float64, tritensor's
    float32 (torch's default, which the standard leaves to the library)."""
    tol = TOL[float_dtype]
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _compare_metric(g, w, device, float_dtype)
    elif isinstance(want, np.ndarray):
        _check(got, want, device, float_dtype if want.dtype.kind == "f" else None, tol)
    else:      # a scalar score: scikit-learn hands back a Python float, as on NumPy
        assert isinstance(got, float) and not isinstance(got, tt.Tensor), type(got)
        assert got == pytest.approx(float(want), rel=tol["rtol"], abs=tol["atol"])


def _float_dtype(a, b):
    floats = [x.dtype.name for x in (a, b) if x.dtype.kind == "f"]
    if floats:
        return max(floats)
    assert xp.asarray(0.0).dtype == tt.float32
    return "float32"


@pytest.mark.parametrize("fn,inputs,kwargs", METRICS, ids=[m[0].__name__ for m in METRICS])
def test_metric_on_cpu_matches_numpy(fn, inputs, kwargs):
    a, b = _metric_inputs()[inputs]
    want = fn(a, b, **kwargs)
    with _dispatch():
        got = fn(*_on("cpu", a, b), **kwargs)
    _compare_metric(got, want, "cpu", _float_dtype(a, b))


# not confusion_matrix nor log_loss: scikit-learn 1.9 moves their labels to NumPy (counted with
# SciPy, one-hot encoded by LabelBinarizer) and the result back, on every namespace
# (metrics/_classification.py)
CUDA_METRICS = ("accuracy_score", "hamming_loss", "zero_one_loss", "r2_score", "mean_squared_error",
                "mean_absolute_error", "cosine_similarity", "euclidean_distances", "rbf_kernel")


def test_metrics_on_cuda_stay_on_the_device():
    cases = [m for m in METRICS if m[0].__name__ in CUDA_METRICS]
    assert len(cases) == len(CUDA_METRICS)
    data = _metric_inputs()
    for fn, inputs, kwargs in cases:
        a, b = data[inputs]
        want = fn(a, b, **kwargs)
        args = _on("cuda", a, b)
        with _dispatch(), _host_reads() as offences:
            got = fn(*args, **kwargs)
        assert offences == [], fn.__name__
        _compare_metric(got, want, "cuda", _float_dtype(a, b))


# --------------------------------------------------------------------------- NumPy arrays moving in
def test_negative_strided_numpy_arrays_are_copied_in(device):
    """The standard's asarray/from_dlpack copy whatever they cannot view, unless copy=False:
    a NumPy array with negative strides (torch.asarray refuses it even with copy=True)."""
    base = np.arange(12.0).reshape(4, 3)
    flipped = base[::-1, ::-2]
    want = flipped.tolist()
    for convert in (lambda a: xp.asarray(a, device=device), lambda a: xp.asarray(a, copy=True, device=device),
                    lambda a: xp.asarray(a, dtype=xp.float32, device=device),
                    lambda a: xp.from_dlpack(a, device=device)):
        got = convert(flipped)
        assert got.device.type == device and tuple(got.shape) == (4, 2) and got.tolist() == want
        base[0, 0] = -1.0            # a copy: the source changing later leaves it alone
        assert got.tolist() == want
        base[0, 0] = 0.0
    with pytest.raises(ValueError, match="negative"):
        xp.asarray(flipped, copy=False)
    with pytest.raises(BufferError, match="negative strides"):
        xp.from_dlpack(flipped, copy=False)


def test_sklearn_moves_a_reversed_numpy_array_onto_the_device(device):
    """scikit-learn's move_to tries from_dlpack, then asarray, to bring NumPy data (a reversed
    view here) into the namespace of the tensors it works on."""
    from sklearn.utils._array_api import move_to
    weights = np.linspace(0.5, 2.0, 6)[::-1]
    on_device = xp.asarray([1.0], device=device)
    with _dispatch():
        moved = move_to(weights, xp=xp, device=on_device.device)
    assert isinstance(moved, tt.Tensor) and moved.device == on_device.device
    assert moved.tolist() == weights.tolist()
