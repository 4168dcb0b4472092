"""bench.model (issue 23, items 4 and 5): the roofline projection from emulated traffic counts,
and the comparison with a GPU's measured report. Expectations are hand-computed from the
model's stated rule (bench/model.py's docstring)."""
import os
import sys

import pytest

import tritensor as tt

_EMULATED = tt.cuda.is_available() and tt.cuda.is_emulated()
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
from bench import model  # noqa: E402

needs_counter = pytest.mark.skipif(not _EMULATED, reason="the traffic counter observes Triton's interpreter")

REPORT = """device: NVIDIA H200
case | tritensor GB/s | torch GB/s | vs torch | of copy BW
add contiguous | 3.2e+03 | 4.17e+03 | 0.851 | 2.19
softmax 4096x1024 | 392 | 1.93e+03 | 0.203 | 0.242

case | tritensor TFLOP/s | torch TFLOP/s | vs torch | of peak
matmul 1024^3 float16 | 2.0 | 66.9 | 0.0323 | 0.00219
matmul 8192^3 float32 tf32 | 125 | 358 | 0.35 | 0.254
"""


def test_measured_times_are_read_from_the_report_text():
    minimum = {"add contiguous": 3 * (1 << 26) * 4, "softmax 4096x1024": 2 * 4096 * 1024 * 4}
    flops = {"matmul 1024^3 float16": 2 * 1024 ** 3}
    got = model.parse_report(REPORT, minimum, flops)
    assert set(got) == {"add contiguous", "softmax 4096x1024", "matmul 1024^3 float16"}
    assert got["add contiguous"] == pytest.approx(3 * (1 << 26) * 4 / 3.2e9)          # ms
    assert got["softmax 4096x1024"] == pytest.approx(2 * 4096 * 1024 * 4 / 392e6)
    assert got["matmul 1024^3 float16"] == pytest.approx(2 * 1024 ** 3 / 2.0e9)


def test_matmul_dram_is_the_tiling_bound_of_one_l2_wave():
    # 132 programs in GROUP_M = 8 order: a wave covers 8 x 17 tiles of 128 x 256 = 1024 x 4352
    # outputs, so A is read ceil(8192 / 4352) = 2 times, B ceil(8192 / 1024) = 8 times
    n = 8192
    assert model.matmul_dram(n, n, n, 2, 1, (128, 256), 8, 132) == n * n * 2 * (2 + 8) + n * n * 2
    # a problem smaller than a wave: every operand once
    assert model.matmul_dram(512, 512, 64, 4, 3, (128, 128), 8, 132) == 3 * (512 * 64 * 2 + 512 * 512) * 4


@needs_counter
@pytest.mark.emulated_blocks("gpu")
def test_projection_of_a_contiguous_add_is_its_bandwidth_time_plus_one_launch():
    (case,) = model.cases(model.QUICK, only=["add contiguous"])
    p = model.project(case, "H100 SXM")
    n = model.BENCH["numel"]
    assert p.launches == 1 and p.kernels == ["binary_kernel"] and p.coalescing == 1.0
    assert p.bytes == case.minimum == 3 * n * 4
    assert p.flops["pointwise"] == n                 # one add per output element, scaled to n
    assert p.time_s == pytest.approx(3 * n * 4 / 3.35e12 + 4e-6)
    assert p.of_roofline == pytest.approx((3 * n * 4 / 3.35e12) / p.time_s)


@needs_counter
@pytest.mark.emulated_blocks("gpu")
def test_projection_of_a_matmul_is_compute_bound_at_the_tensor_core_peak():
    (case,) = model.cases(model.QUICK, only=["matmul 8192^3 float16"])
    p = model.project(case, "H100 SXM")
    n = 8192
    assert p.flops["fp16"] == 2 * n ** 3
    # 2.2 GB of DRAM traffic take 0.66 ms; 1.1 TFLOP at 989 TFLOP/s take 1.11 ms
    assert p.bytes == pytest.approx(model.matmul_dram(n, n, n, 2, 1, (128, 256), 8, 132))
    assert p.bytes / 3.35e12 < 2 * n ** 3 / 989e12
    assert p.time_s == pytest.approx(2 * n ** 3 / 989e12 + p.flops["pointwise"] / 67e12 + 4e-6)
    assert p.time_s < 1.2e-3


@needs_counter
@pytest.mark.emulated_blocks("gpu")
def test_the_command_compares_and_writes_a_dated_section(tmp_path, capsys):
    report = tmp_path / "report.txt"
    report.write_text(REPORT)
    results = tmp_path / "RESULTS.md"
    results.write_text("# Benchmark results\n")
    assert model.main(["--quick", "--only", "add contiguous", "--compare", str(report), "--write-results",
                       "--results-path", str(results)]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| add contiguous"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    projected, measured, error = float(cells[8]), float(cells[10]), cells[11]
    assert measured == pytest.approx(3 * (1 << 26) * 4 / 3.2e9 * 1e3, rel=1e-3)      # us
    assert error == f"{100 * (projected / measured - 1):+.0f} %"
    text = results.read_text()
    assert text.startswith("# Benchmark results\n\n## Model vs measurement: H100 SXM projection against report.txt (")
    assert row in text


def test_static_columns_come_from_the_launch_variants_facts():
    from tritensor.profiler import LaunchRecord
    launch = LaunchRecord("binary_kernel", "elementwise", (8, 1, 1), {"BLOCK": 1024, "RANK": 1}, "add", 0)
    facts = {"binary_kernel[BLOCK=128, RANK=1, x:fp32]": {"kernel": "binary_kernel", "regs": 40, "occupancy": 1.0},
             "binary_kernel[BLOCK=1024, RANK=1, x:fp32]": {"kernel": "binary_kernel", "regs": 32, "occupancy": 0.75},
             "unary_kernel[BLOCK=1024, RANK=1]": {"kernel": "unary_kernel", "regs": 16, "occupancy": 1.0}}
    fact = model.static_fact(facts, launch)
    assert (model._fact(fact, "registers"), model._fact(fact, "occupancy")) == ("32", "75 %")
    assert model.static_fact({}, launch) is None and model._fact(None, "registers") == "-"


@needs_counter
def test_gpu_first_run_dry_run_appends_a_dated_section(tmp_path):
    """bench/gpu_first_run.sh --dry-run, shortened: every step runs on the emulated device
    (a test without kernels, a small report, the model on one case) and the section lands in a
    copy of RESULTS.md; the real bench/RESULTS.md is left alone."""
    import subprocess
    results = tmp_path / "RESULTS.md"
    results.write_text("# Benchmark results\n")
    before = open(os.path.join(ROOT, "bench", "RESULTS.md")).read()
    env = dict(os.environ, OUT=str(tmp_path / "out"), RESULTS=str(results), PYTHON=sys.executable,
               TESTS="tests/test_traffic.py -k access_stats",
               REPORT_ARGS="--skip-matmul --skip-pdist --rep 1 --numel 256 --side 16",
               MODEL_ARGS="--quick --only copy")
    done = subprocess.run(["bash", os.path.join(ROOT, "bench", "gpu_first_run.sh"), "--dry-run"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    text = results.read_text()
    assert "## gpu_first_run.sh --dry-run (" in text and "emulated device" in text
    assert "**Tests** (`pytest tests/test_traffic.py -k access_stats`): 1 passed" in text
    assert "copy (contiguous) |" in text                                    # bench.report's table
    row = next(line for line in text.splitlines() if line.startswith("| copy (contiguous) | copy_kernel"))
    # projected, measured, error, and the error at the measured copy bandwidth (0 for the copy itself)
    assert row.count("|") == 14 and row.endswith("| +0 % |")
    for name in ("device.txt", "tests.txt", "report.txt", "counts.json", "model.txt"):
        assert (tmp_path / "out" / name).exists()
    assert open(os.path.join(ROOT, "bench", "RESULTS.md")).read() == before


@needs_counter
def test_bench_report_puts_the_projection_next_to_its_measurements(capsys):
    from bench import report
    rows = [{"case": "copy (contiguous)", "tritensor GB/s": 3000.0}]
    assert report.compare_with_model(rows, [], "NVIDIA H100 80GB HBM3", ("--quick", "--only", "copy"))
    out = capsys.readouterr().out
    assert "model (H100 SXM) vs measured:" in out
    row = next(line for line in out.splitlines() if line.startswith("| copy (contiguous)"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert float(cells[10]) == pytest.approx(2 * (1 << 26) * 4 / 3000e3, rel=1e-3)     # us


@needs_counter
@pytest.mark.emulated_blocks("gpu")
def test_saved_counts_project_again_on_another_device(tmp_path, capsys):
    counts = tmp_path / "counts.json"
    assert model.main(["--quick", "--only", "add contiguous", "--save", str(counts)]) == 0
    (p,) = model.load(counts, "H200")
    n = model.BENCH["numel"]
    assert (p.case.name, p.bytes, p.launches, p.main.kernel) == ("add contiguous", 3 * n * 4, 1, "binary_kernel")
    assert p.time_s == pytest.approx(3 * n * 4 / 4.8e12 + 4e-6)
    capsys.readouterr()
    assert model.main(["--load", str(counts), "--device", "H200"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("| add contiguous"))
    assert f"| {p.time_s * 1e6:.4g} |" in row
