"""tt.profiler.traffic(): the emulated device's traffic counter (issue 23, item 1).

Every expectation is computed by hand from the kernel's addresses: bytes = active lanes x element
size; sectors = distinct 32-byte sectors per group of 32 consecutive lanes (row-major);
coalescing = distinct bytes asked for / bytes of the touched sectors; dot FLOPs = 2*M*N*K."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tritensor as tt

# first: asking for the device sets TRITON_INTERPRET=1 (TRITENSOR_EMULATE_CUDA=1) before Triton loads;
# a Triton imported earlier has compiled-mode helpers (tl.zeros_like ...) that the interpreter cannot call
_EMULATED = tt.cuda.is_available() and tt.cuda.is_emulated()
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from tritensor.profiler import access_stats, matmul_minimum  # noqa: E402
from tritensor.runtime import launch  # noqa: E402

pytestmark = pytest.mark.skipif(not _EMULATED, reason="the traffic counter observes Triton's interpreter (emulated device)")


@triton.jit
def _copy(x, y, n, STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y + offs, tl.load(x + offs * STRIDE, mask=m), mask=m)


@triton.jit
def _tile(x, y, N: tl.constexpr, MODE: tl.constexpr):
    r = tl.arange(0, N)
    if MODE == 0:           # lane (i, j) reads x[i, j]
        v = tl.load(x + r[:, None] * N + r[None, :])
    elif MODE == 1:         # lane (i, j) reads x[j, i]: contiguous along axis 0
        v = tl.load(x + r[None, :] * N + r[:, None])
    else:                   # lane (i, j) reads x[2j, 2i] of a [2N, 2N] matrix: no contiguous axis
        v = tl.load(x + r[None, :] * (4 * N) + r[:, None] * 2)
    tl.store(y + r[:, None] * N + r[None, :], v)


@triton.jit
def _dot(a, b, c, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    x = tl.load(a + rm[:, None] * K + rk[None, :])
    w = tl.load(b + rk[:, None] * N + rn[None, :])
    tl.store(c + rm[:, None] * N + rn[None, :], tl.dot(x, w, input_precision="ieee"))


@triton.jit
def _atomic(x, y, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.atomic_add(y + (offs & 3), tl.load(x + offs, mask=m, other=0.0), mask=m)


@triton.jit
def _fma_like(x, y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + offs)
    tl.store(y + offs, v * 3.0 + v)


def _cuda(a):
    return tt.tensor(np.asarray(a), device="cuda")


def _one_launch(counter):
    assert len(counter.launches) == 1
    return counter.launches[0]


def test_contiguous_copy_is_exact_and_fully_coalesced():
    x = _cuda(np.arange(300, dtype=np.float32))
    y = tt.empty(300, device="cuda")
    with tt.profiler.traffic() as c:
        launch.launch_kernel(_copy, (3,), launch.pointer(x), launch.pointer(y), 300, STRIDE=1, BLOCK=128)
    r = _one_launch(c)
    assert r.kernel == "_copy" and r.grid == (3, 1, 1) and r.meta == {"STRIDE": 1, "BLOCK": 128}
    assert r.op is None and c.calls[0].minimum is None      # launched outside dispatch: no op, no minimum
    assert (r.load_bytes, r.store_bytes, r.load_lanes) == (1200, 1200, 300)
    # 300 lanes = 9 full groups of 32 float32 (4 sectors each) + 12 lanes (48 bytes: 2 sectors)
    assert r.load_sectors == r.store_sectors == 9 * 4 + 2
    assert r.load_used == r.store_used == 1200
    assert r.coalescing == pytest.approx(1200 / (38 * 32))
    assert r.unique_load_bytes == r.unique_store_bytes == 1200
    np.testing.assert_array_equal(y.cpu().numpy(), np.arange(300))       # the kernel still ran


def test_stride_two_load_is_half_coalesced():
    x = _cuda(np.arange(512, dtype=np.float32))
    y = tt.empty(256, device="cuda")
    with tt.profiler.traffic() as c:
        launch.launch_kernel(_copy, (2,), launch.pointer(x), launch.pointer(y), 256, STRIDE=2, BLOCK=128)
    r = _one_launch(c)
    assert r.load_bytes == 1024 and r.load_sectors == 8 * 8     # 8 groups x 256 bytes
    assert r.load_used / (32 * r.load_sectors) == 0.5
    assert r.store_used / (32 * r.store_sectors) == 1.0
    np.testing.assert_array_equal(y.cpu().numpy(), np.arange(0, 512, 2))


@pytest.mark.parametrize("mode, efficiency", [(0, 1.0), (1, 1.0), (2, 4 / 32)])
def test_a_tile_is_grouped_along_its_contiguous_axis(mode, efficiency):
    # Triton's coalescing pass orders a block's threads along the axis its pointers are contiguous
    # on: a tile of a transposed matrix (mode 1) is read along axis 0, fully coalesced; a tile
    # strided on both axes (mode 2) touches a sector per lane
    x = _cuda(np.arange(128 * 128, dtype=np.float32).reshape(128, 128))
    y = tt.empty(64, 64, device="cuda")
    with tt.profiler.traffic() as c:
        launch.launch_kernel(_tile, (1,), launch.pointer(x), launch.pointer(y), N=64, MODE=mode)
    r = _one_launch(c)
    assert r.load_bytes == 64 * 64 * 4
    assert r.load_used / (32 * r.load_sectors) == efficiency
    full = np.arange(128 * 128).reshape(128, 128)
    first = np.arange(64 * 64).reshape(64, 64)          # modes 0 and 1 address x as a [64, 64] matrix
    expect = [first, first.T, full[::2, ::2].T][mode]
    np.testing.assert_array_equal(y.cpu().numpy(), expect)


def test_a_column_read_touches_a_sector_per_lane():
    x = _cuda(np.arange(128 * 64, dtype=np.float32))
    y = tt.empty(128, device="cuda")
    with tt.profiler.traffic() as c:
        launch.launch_kernel(_copy, (1,), launch.pointer(x), launch.pointer(y), 128, STRIDE=64, BLOCK=128)
    r = _one_launch(c)
    assert (r.load_bytes, r.load_sectors, r.load_used) == (512, 128, 512)
    np.testing.assert_array_equal(y.cpu().numpy(), np.arange(0, 128 * 64, 64))


def test_access_stats_by_hand():
    base = 1 << 20
    # 32 lanes, 8 bytes apart, 4-byte elements: 256 bytes = 8 sectors, 128 bytes used
    assert access_stats(base + 8 * np.arange(32, dtype=np.uint64), None, 4) == (32, 8, 128)
    # a masked group: 3 active lanes in one sector
    mask = np.zeros(32, bool)
    mask[:3] = True
    assert access_stats(base + 4 * np.arange(32, dtype=np.uint64), mask, 4) == (3, 1, 12)
    # a broadcast (every lane one address) is served by one sector, fully used
    assert access_stats(np.full(32, base, dtype=np.uint64), None, 4) == (32, 1, 32)
    assert access_stats(np.full(4, base, dtype=np.uint64), np.zeros(4, bool), 4) == (0, 0, 0)


def test_dot_flops_are_2mnk():
    a = _cuda(np.ones((32, 16), np.float32))
    b = _cuda(np.ones((16, 64), np.float32))
    out = tt.empty(32, 64, device="cuda")
    with tt.profiler.traffic() as c:
        launch.launch_kernel(_dot, (1,), launch.pointer(a), launch.pointer(b), launch.pointer(out), M=32, N=64, K=16)
    r = _one_launch(c)
    assert r.dot_flops == {"fp32": 2 * 32 * 64 * 16}
    assert (r.load_bytes, r.store_bytes) == ((32 * 16 + 16 * 64) * 4, 32 * 64 * 4)
    assert float(out.cpu().numpy()[0, 0]) == 16.0


def test_pointwise_flops_count_each_element():
    x = _cuda(np.ones(64, np.float32))
    y = tt.empty(64, device="cuda")
    with tt.profiler.traffic() as c:
        launch.launch_kernel(_fma_like, (1,), launch.pointer(x), launch.pointer(y), BLOCK=64)
    assert _one_launch(c).flops == 2 * 64          # a multiply and an add per element


def test_atomics_count_active_lanes():
    x = _cuda(np.ones(32, np.float32))
    y = tt.zeros(4, device="cuda")
    with tt.profiler.traffic() as c:
        launch.launch_kernel(_atomic, (1,), launch.pointer(x), launch.pointer(y), 10, BLOCK=32)
    r = _one_launch(c)
    assert (r.atomics, r.atomic_bytes, r.load_bytes) == (10, 40, 40)
    np.testing.assert_array_equal(y.cpu().numpy(), [3, 3, 2, 2])


# --------------------------------------------------------------------------- real ops
def test_add_contiguous_is_exactly_three_n_elements_and_coalesced():
    n = 384
    a, b = tt.randn(n, device="cuda"), tt.randn(n, device="cuda")
    with tt.profiler.traffic() as c:
        for _ in range(2):
            a + b
    assert [call.op for call in c.calls] == ["add", "add"]
    add = c.by_op()["add"]
    assert add.calls == 2 and add.launches == 2
    assert add.bytes == add.minimum == 2 * 3 * n * 4
    assert add.ratio == 1.0 and add.coalescing == 1.0
    assert add.flops == 2 * n


def test_a_strided_view_reads_at_the_computed_lower_efficiency():
    x = tt.randn(512, device="cuda")
    with tt.profiler.traffic() as c:
        x[::2].exp()
    s = c.by_op()["exp"]
    assert s.bytes == s.minimum == 2 * 256 * 4
    # loads: 256 lanes 8 bytes apart (64 sectors for 1024 bytes); stores contiguous (32 sectors)
    assert s.coalescing == pytest.approx(2048 / (96 * 32))


def test_broadcast_minimum_counts_the_row_once():
    a, row = tt.randn(16, 64, device="cuda"), tt.randn(64, device="cuda")
    with tt.profiler.traffic() as c:
        a + row
    assert c.by_op()["add"].minimum == (2 * 16 * 64 + 64) * 4


def test_mm_flops_are_2mnk_and_traffic_within_its_tiling():
    m, k, n = 64, 48, 64
    a, b = tt.randn(m, k, device="cuda"), tt.randn(k, n, device="cuda")
    with tt.profiler.traffic() as c:
        a @ b
    s = c.by_op()["mm"]
    assert s.dot_flops == {"fp32": 2 * m * n * k} or s.dot_flops == {"tf32": 2 * m * n * k}
    assert s.minimum == matmul_minimum(m, n, k, 4, 4, 4) == (m * k + k * n + m * n) * 4
    r = c.launches[-1]
    bound = matmul_minimum(m, n, k, 4, 4, 4, tile=(r.meta["BLOCK_M"], r.meta["BLOCK_N"]))
    assert s.bytes == bound


def test_matmul_minimum_formula():
    # A (M x K) read once per column of tiles, B (K x N) once per row of tiles, C written once
    assert matmul_minimum(256, 384, 100, 2, 2, 4, tile=(128, 128)) == \
        256 * 100 * 2 * 3 + 100 * 384 * 2 * 2 + 256 * 384 * 4
    assert matmul_minimum(8, 8, 8, 4, 4, 4, batch=3) == 3 * 3 * 64 * 4


# --------------------------------------------------------------------------- on / off
def _installed():
    from triton.runtime import interpreter as ti
    return "create_masked_load" in vars(ti.interpreter_builder) or "create_fadd" in vars(ti.interpreter_builder)


def test_off_installs_nothing_and_restores_everything():
    from triton.runtime import interpreter as ti
    tt.ones(3, device="cuda") + 1       # the launch path's own interpreter hooks are in place
    grid_call, apply = ti.GridExecutor.__call__, ti.ReduceOps.apply
    assert not _installed()
    with tt.profiler.traffic():
        assert _installed() and ti.GridExecutor.__call__ is not grid_call
    assert not _installed()
    assert ti.GridExecutor.__call__ is grid_call and ti.ReduceOps.apply is apply


def test_one_counter_at_a_time_and_only_on_the_emulated_device(monkeypatch):
    with tt.profiler.traffic():
        with pytest.raises(RuntimeError, match="already counting"):
            tt.profiler.traffic().enable()
    assert not _installed()
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    with pytest.raises(RuntimeError, match="emulated device"):
        tt.profiler.traffic().enable()


def test_environment_switch_counts_the_process():
    code = "import tritensor as tt; a, b = tt.ones(256, device='cuda'), tt.ones(256, device='cuda'); (a + b).cpu()"
    env = dict(os.environ, TRITENSOR_TRAFFIC="1", TRITENSOR_EMULATE_CUDA="1")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    line = next(s for s in done.stderr.splitlines() if s.startswith("op add"))
    assert line.split()[2:5] == ["1", str(3 * 256 * 4), str(3 * 256 * 4)]


def test_the_table_gives_traffic_over_minimum_per_op_kernel_and_launch():
    x = tt.randn(256, device="cuda")
    with tt.profiler.traffic() as c:
        x[::2].exp()
        x.exp()
    lines = c.table(per_launch=True).splitlines()
    op = next(line for line in lines if line.startswith("op exp"))
    both = 2 * 128 * 4 + 2 * 256 * 4             # a strided read of 128 + a write of 128, then 256 + 256
    assert op.split()[2:6] == ["2", str(both), str(both), "1.00"]
    kernel = next(line for line in lines if line.startswith("kernel unary_kernel"))
    assert kernel.split()[2:4] == ["2", str(both)]
    first, second = (line for line in lines if line.startswith("launch "))
    # ... bytes, minimum, ratio, coalescing, flops
    assert "(exp)" in first and first.split()[-5:-2] == [str(2 * 128 * 4), str(2 * 128 * 4), "1.00"]
    assert second.split()[-5:-2] == [str(2 * 256 * 4), str(2 * 256 * 4), "1.00"]


def test_an_unknown_interpreter_is_refused_not_miscounted(monkeypatch):
    from triton.runtime import interpreter as ti
    monkeypatch.delattr(ti, "ScanOps")
    with pytest.raises(RuntimeError, match="does not know this Triton's interpreter .no ScanOps"):
        tt.profiler.traffic().enable()
    assert not _installed()
