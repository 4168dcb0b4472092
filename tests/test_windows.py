"""Window functions and the layout/range factories (issue 21 item 5): torch.*_window,
tt.signal.windows.*, empty_strided, new_empty_strided, empty_permuted, logspace, scalar_tensor.

Oracles: values recorded from torch 2.13 (tests/data/shape_fixtures.json, written by
tests/data/make_shape_fixtures.py), SciPy's scipy.signal.windows in float64, and the textbook
formulas; torch's errors word for word.
"""
import json
import math
import pathlib

import numpy as np
import pytest

import tritensor as tt

FIXTURES = json.loads((pathlib.Path(__file__).parent / "data" / "shape_fixtures.json").read_text())
W = tt.signal.windows
# a few units in the last place of the value's magnitude (the composites round as torch's do, but
# cos/exp/i0 may differ from torch's vectorised ones by an ulp or two)
ATOL = {"float64": 1e-14, "float32": 4e-7, "float16": 2e-3, "bfloat16": 1.6e-2}
EXTRA = {"hamming_window": dict(alpha=0.6, beta=0.3), "kaiser_window": dict(beta=5.5), "exponential": dict(tau=0.7),
         "exponential_center": dict(center=1.5), "gaussian": dict(std=1.3), "general_cosine": dict(a=[0.46, 0.23, 0.31]),
         "general_hamming": dict(alpha=0.6), "kaiser": dict(beta=7.0)}


def _window(key):
    name, dtype, length, flag = key.split("/")
    kw = dict(EXTRA.get(name, {}), dtype=getattr(tt, dtype))
    if name.endswith("_window"):
        return getattr(tt, name)(int(length), flag == "True", **kw), dtype
    return getattr(W, name.replace("_center", ""))(int(length), sym=flag == "True", **kw), dtype


@pytest.mark.parametrize("key", sorted(FIXTURES["windows"]))
def test_windows_match_torch(key):
    got, dtype = _window(key)
    want = FIXTURES["windows"][key]
    assert got.dtype is getattr(tt, dtype) and got.shape == (len(want),)
    np.testing.assert_allclose(got.double().numpy(), want, rtol=0, atol=ATOL[dtype])


@pytest.mark.parametrize("name", ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
                                  "general_hamming", "hamming", "hann", "kaiser", "nuttall"])
def test_signal_windows_match_scipy(name):
    windows = pytest.importorskip("scipy.signal.windows")
    args = {"exponential": dict(tau=2.5), "gaussian": dict(std=1.7), "general_cosine": dict(a=[0.4, 0.3, 0.2, 0.1]),
            "general_hamming": dict(alpha=0.7), "kaiser": dict(beta=8.6)}.get(name, {})
    scipy_args = {"exponential": (None, 2.5), "gaussian": (1.7,), "general_cosine": ([0.4, 0.3, 0.2, 0.1],),
                  "general_hamming": (0.7,), "kaiser": (8.6,)}.get(name, ())
    for M in (1, 6, 11):
        for sym in (True, False):
            got = getattr(W, name)(M, sym=sym, dtype=tt.float64, **args).numpy()
            want = getattr(windows, name)(M, *scipy_args, sym=sym)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_factory_windows_match_the_formulas():
    """The textbook formulas in float64 (a periodic window of L points is the first L of L + 1)."""
    for L in (3, 8):
        for periodic in (True, False):
            n = L + 1 if periodic else L
            k = np.arange(L)
            hann = 0.5 - 0.5 * np.cos(2 * np.pi * k / (n - 1))
            blackman = 0.42 - 0.5 * np.cos(2 * np.pi * k / (n - 1)) + 0.08 * np.cos(4 * np.pi * k / (n - 1))
            bartlett = 1 - np.abs(2 * k / (n - 1) - 1)
            kaiser = np.i0(6.0 * np.sqrt(1 - ((k - (n - 1) / 2) / ((n - 1) / 2)) ** 2)) / np.i0(6.0)
            for fn, want, kw in ((tt.hann_window, hann, {}), (tt.blackman_window, blackman, {}),
                                 (tt.bartlett_window, bartlett, {}), (tt.kaiser_window, kaiser, {"beta": 6.0}),
                                 (tt.hamming_window, 0.54 - 0.46 * np.cos(2 * np.pi * k / (n - 1)), {})):
                np.testing.assert_allclose(fn(L, periodic, dtype=tt.float64, **kw).numpy(), want, atol=1e-14)


def test_windows_grad_and_defaults():
    assert tt.hann_window(4).dtype is tt.float32 and tt.hann_window(4)._base is None
    leaf = tt.hann_window(4, requires_grad=True)
    assert leaf.requires_grad and leaf.grad_fn is None            # torch's factories give a leaf
    w = W.hann(4, requires_grad=True)
    assert w.requires_grad and type(w.grad_fn).__name__ == "SumBackward1"     # a composite's graph
    assert W.hann(1).tolist() == [1.0] and W.kaiser(0).shape == (0,) and tt.kaiser_window(0).shape == (0,)
    assert tt.hann_window(5, dtype=tt.float16).dtype is tt.float16
    tt.set_default_dtype(tt.float64)
    try:
        assert W.gaussian(3).dtype is tt.float64 and tt.bartlett_window(3).dtype is tt.float64
    finally:
        tt.set_default_dtype(tt.float32)


WINDOW_ERRORS = [
    (lambda: tt.hann_window(5, dtype=tt.int64), RuntimeError, "hann_window expects floating point dtypes, got: "
     "TensorOptions(dtype=long int, device=cpu, layout=Strided (default), requires_grad=false (default), "
     "pinned_memory=false, memory_format=(nullopt))"),
    (lambda: tt.hann_window(-1), RuntimeError, "hann_window requires non-negative window_length, got window_length=-1"),
    (lambda: tt.kaiser_window(-2), RuntimeError, "kaiser_window requires non-negative window_length, got "
     "window_length=-2"),
    (lambda: W.hann(4, dtype=tt.float16), ValueError, "general_cosine expects float32 or float64 dtypes, got: "
     f"{tt.float16}"),
    (lambda: W.hann(-1), ValueError, "general_cosine requires non-negative window length, got M=-1"),
    (lambda: W.blackman(-1), ValueError, "blackman requires non-negative window length, got M=-1"),
    (lambda: W.exponential(4, center=1.0), ValueError, "Center must be None for symmetric windows"),
    (lambda: W.exponential(4, tau=0), ValueError, "Tau must be positive, got: 0 instead."),
    (lambda: W.gaussian(4, std=0), ValueError, "Standard deviation must be positive, got: 0 instead."),
    (lambda: W.kaiser(4, beta=-1), ValueError, "beta must be non-negative, got: -1 instead."),
    (lambda: W.general_cosine(4, a=5), TypeError, "Coefficients must be a list/tuple"),
    (lambda: W.general_cosine(4, a=[]), ValueError, "Coefficients cannot be empty"),
    (lambda: W.cosine(3, layout="sparse"), ValueError, "cosine is implemented for strided tensors only, got: sparse"),
]


@pytest.mark.parametrize("case", range(len(WINDOW_ERRORS)))
def test_window_errors_are_torchs(case):
    fn, kind, message = WINDOW_ERRORS[case]
    with pytest.raises(kind) as info:
        fn()
    assert str(info.value) == message


def test_windows_on_cuda():
    w = tt.hann_window(7, device="cuda")
    assert w.device.type == "cuda"
    np.testing.assert_allclose(w.cpu().numpy(), tt.hann_window(7).numpy(), atol=4e-7)
    k = W.kaiser(6, beta=3.0, dtype=tt.float64, device="cuda")
    np.testing.assert_allclose(k.cpu().numpy(), W.kaiser(6, beta=3.0, dtype=tt.float64).numpy(), atol=1e-14)


# --------------------------------------------------------------------------- logspace
@pytest.mark.parametrize("case", range(len(FIXTURES["logspace"])))
def test_logspace_matches_torch(case):
    name, args, want = FIXTURES["logspace"][case]
    got = tt.logspace(*args, dtype=getattr(tt, name))
    assert got.dtype is getattr(tt, name)
    assert got.double().tolist() == want          # torch's CPU kernel, step by step: bit for bit


def test_logspace_arguments():
    assert tt.logspace(0, 2, 3).tolist() == [1.0, 10.0, 100.0] and tt.logspace(0, 2, 3).dtype is tt.float32
    assert tt.logspace(tt.tensor(0.0), tt.tensor(2.0), 3).tolist() == [1.0, 10.0, 100.0]
    assert tt.logspace(0, 2, 0).shape == (0,) and tt.logspace(0, 2, 1).tolist() == [1.0]
    assert tt.logspace(0, 2, 3, requires_grad=True).requires_grad
    out = tt.empty(0, dtype=tt.int64)
    assert tt.logspace(0, 2, 3, out=out) is out and out.tolist() == [1, 10, 100]
    assert tt.logspace(0, 1, 3, device="cuda").device.type == "cuda"
    with pytest.raises(RuntimeError, match=r"^number of steps must be non-negative$"):
        tt.logspace(0, 2, -1)
    with pytest.raises(NotImplementedError, match="^\"logspace_cpu\" not implemented for 'Bool'$"):
        tt.logspace(0, 1, 3, dtype=tt.bool)
    with pytest.raises(RuntimeError, match=r"^logspace only supports 0-dimensional start and end tensors, but got "
                                           r"start with 1 dimension\(s\).$"):
        tt.logspace(tt.tensor([0.0, 1.0]), 2, 3)
    with pytest.raises(TypeError):
        tt.logspace(0, 2, 2.5)


# --------------------------------------------------------------------------- empty_strided & co
def test_empty_strided():
    t = tt.empty_strided((2, 3), (1, 2))
    assert t.shape == (2, 3) and t.stride() == (1, 2) and t._storage.nbytes == 24 and t.dtype is tt.float32
    assert tt.empty_strided((2, 3), (10, 2))._storage.nbytes == 60
    assert tt.empty_strided((2, 0), (10, 2))._storage.nbytes == 0
    assert tt.empty_strided((2, 3), (0, 0))._storage.nbytes == 4 and tt.empty_strided((), ()).shape == ()
    assert tt.empty_strided((2,), (1,), dtype=tt.int32, requires_grad=False).dtype is tt.int32
    assert tt.empty_strided((2,), (1,), requires_grad=True).requires_grad
    assert tt.empty_strided((3,), (2,), device="cuda").device.type == "cuda"
    x = tt.zeros(2, dtype=tt.int16)
    y = x.new_empty_strided((2, 3), (1, 2))
    assert y.dtype is tt.int16 and y.stride() == (1, 2)
    assert x.new_empty_strided((2,), (1,), dtype=tt.float64).dtype is tt.float64
    for fn, message in (
            (lambda: tt.empty_strided((2, 3), (1,)), "dimensionality of sizes (2) must match dimensionality of "
                                                      "strides (1)"),
            (lambda: tt.empty_strided((2, -3), (1, 2)), "Trying to create tensor with negative dimension -3: [2, -3]"),
            (lambda: tt.empty_strided((2, 3), (-1, 2)), "Storage size calculation overflowed with sizes=[2, 3] and "
                                                         "strides=[-1, 2]")):
        with pytest.raises(RuntimeError) as info:
            fn()
        assert str(info.value) == message


def test_empty_permuted():
    t = tt.empty_permuted((2, 3, 4), (2, 0, 1))
    assert t.shape == (2, 3, 4) and t.stride() == (3, 1, 6) and t._storage.nbytes == 24 * 4
    assert tt.empty_permuted((), ()).shape == ()
    assert tt.empty_permuted((2, 0, 3), (1, 0, 2)).numel() == 0
    for order, message in (
            ((2, 0), "Number of dimensions in size does not match the length of the physical_layout; i.e. len(size) = 3 "
                     "is not equal to len(physical_layout) = 2"),
            ((2, 0, 0), "Duplicate dim not allowed"),
            ((2, 0, 3), "Dimension out of range (expected to be between 0 and 2, but got 3 at index 2).  NB: negative "
                        "dims not currently supported; file an issue if you want it."),
            ((2, 0, -1), "Dimension out of range (expected to be between 0 and 2, but got -1 at index 2).  NB: "
                         "negative dims not currently supported; file an issue if you want it.")):
        with pytest.raises(RuntimeError) as info:
            tt.empty_permuted((2, 3, 4), order)
        assert str(info.value) == message


def test_scalar_tensor():
    for value, want in ((3, 3.0), (3.5, 3.5), (True, 1.0), (tt.tensor(3), 3.0), (np.int64(4), 4.0)):
        t = tt.scalar_tensor(value)
        assert t.shape == () and t.dtype is tt.float32 and t.item() == want
    assert tt.scalar_tensor(3, dtype=tt.int64).dtype is tt.int64
    assert tt.scalar_tensor(3, requires_grad=True).requires_grad
    assert tt.scalar_tensor(2.0, device="cuda").device.type == "cuda"
    for bad, kind in ((tt.tensor([3]), "Tensor"), ("a", "str")):
        with pytest.raises(TypeError, match=f"^scalar_tensor\\(\\): argument 's' \\(position 1\\) must be Number, not "
                                            f"{kind}$"):
            tt.scalar_tensor(bad)
    assert math.isnan(tt.scalar_tensor(float("nan")).item())
