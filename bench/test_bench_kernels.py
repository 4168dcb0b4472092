"""pytest-benchmark suites: `pytest bench --benchmark-enable` (meaningful on a real GPU only).

Each benchmark synchronises the device inside the timed call so host timers see the whole
kernel; `python -m bench.report` gives event-timed GB/s against peers instead."""
import pytest

import tritensor as tt

N = 1 << 24 if tt.cuda.is_available() and not tt.cuda.is_emulated() else 1 << 10
SIDE = 4096 if N > 1 << 10 else 32
REAL = N > 1 << 10
# issue 4 sizes: the sum of 2**28 values, row/column sums of 16384^2, softmax of 4096 x N
BIG_N, BIG_SIDE = (1 << 28, 16384) if REAL else (1 << 10, 32)
SOFTMAX_ROWS, SOFTMAX_COLS = (4096, (1024, 4096, 16384)) if REAL else (4, (16, 64, 128))


def _timed(fn):
    def run():
        out = fn()
        tt.cuda.synchronize()
        return out
    return run


@pytest.fixture(scope="module")
def data():
    tt.manual_seed(0)
    return {
        "x": tt.randn(N, device="cuda"), "y": tt.randn(N, device="cuda"),
        "a": tt.randn(SIDE, SIDE, device="cuda"), "row": tt.randn(SIDE, device="cuda"),
        "col": tt.randn(SIDE, 1, device="cuda"), "at": tt.randn(SIDE, SIDE, device="cuda").t(),
    }


@pytest.mark.parametrize("case", ["copy", "add", "add_row", "add_col", "add_transposed", "exp", "sum"])
def test_kernel(benchmark, data, case):
    d = data
    fn = {
        "copy": lambda: d["x"].clone(), "add": lambda: d["x"] + d["y"],
        "add_row": lambda: d["a"] + d["row"], "add_col": lambda: d["a"] + d["col"],
        "add_transposed": lambda: d["a"] + d["at"], "exp": lambda: d["x"].exp(),
        "sum": lambda: d["x"].sum(),
    }[case]
    out = benchmark(_timed(fn))
    assert out.device.type == "cuda"


@pytest.fixture(scope="module")
def big():
    tt.manual_seed(0)
    return {"x": tt.randn(BIG_N, device="cuda"), "a": tt.randn(BIG_SIDE, BIG_SIDE, device="cuda")}


@pytest.mark.parametrize("case", ["sum_all", "row_sums", "column_sums"])
def test_reduction(benchmark, big, case):
    fn = {"sum_all": lambda: big["x"].sum(), "row_sums": lambda: big["a"].sum(1),
          "column_sums": lambda: big["a"].sum(0)}[case]
    out = benchmark(_timed(fn))
    assert out.device.type == "cuda"


@pytest.mark.parametrize("cols", SOFTMAX_COLS)
def test_softmax(benchmark, cols):
    x = tt.randn(SOFTMAX_ROWS, cols, device="cuda")
    out = benchmark(_timed(lambda: x.softmax(-1)))
    assert out.shape == (SOFTMAX_ROWS, cols)


# issue 5: matmul. Square 4096^3 on a GPU (the first call tunes; warm-up rounds absorb it),
# tiny under the interpreter. python -m bench.report prints TFLOP/s against cuBLAS/CuPy.
MM_N = 4096 if REAL else 32


@pytest.mark.parametrize("case", ["float16", "bfloat16", "float32", "float32_tf32", "bmm_bfloat16"])
def test_matmul(benchmark, case):
    tt.manual_seed(0)
    dtype = {"float16": tt.float16, "bfloat16": tt.bfloat16}.get(case.split("_")[-1], tt.float32)
    shape = (8, MM_N // 8, MM_N // 8) if case.startswith("bmm") else (MM_N, MM_N)
    a = tt.randn(*shape, device="cuda").to(dtype)
    b = tt.randn(*shape, device="cuda").to(dtype)
    saved = tt.get_float32_matmul_precision()
    tt.backends.cuda.matmul.allow_tf32 = case.endswith("tf32")
    try:
        out = benchmark.pedantic(_timed(lambda: a @ b), rounds=10 if REAL else 2, warmup_rounds=2 if REAL else 0)
    finally:
        tt.set_float32_matmul_precision(saved)
    assert out.shape == shape and out.dtype is dtype
