"""python -m bench.model: a roofline projection of each benchmark case on an H100 SXM, from
traffic counted on the emulated device (issue 23, items 2, 4 and 5). No GPU needed.

For every case of ``python -m bench.report`` (same names, same benchmark shapes) the op runs at a
small shape on the emulated device with the real GPU's launch configurations
(``_plan.gpu_launch_configs()``) under ``tt.profiler.traffic()``, which gives its launches, its
DRAM traffic, its coalescing and its FLOPs (tritensor/profiler/_traffic.py says how each is
counted). Those are extrapolated to the benchmark shape by the kernel's tiling:

- memory-bound families (elementwise, tiled, copy, reduce, softmax): bytes scale with the
  elements, so traffic / minimum and coalescing measured at the small shape hold at the large
  one: bytes = (DRAM bytes / minimum)_small x minimum_bench; pointwise FLOPs scale the same way;
- matmul: FLOPs are exactly 2*M*N*K (per batch); bytes are the tiling bound (A read once per
  column of tiles, B once per row of tiles, C written once: ``matmul_minimum``) at the benchmark
  shape for the GPU's first-choice tile (matmul.py's candidates) with the L2 reuse of one wave of
  132 programs in GROUP_M order (``matmul_dram``), times the (lane bytes / tiling bound) ratio
  measured at the small shape (1.0 when the kernel reads each tile once);
- launches: as counted at the small shape (a reduction that splits into more passes at the large
  shape is under-counted by those passes; their bytes are small).

The projected time is max(bytes / (HBM bandwidth x coalescing), Σ FLOPs / peak of their kind) +
launches x launch latency. Peaks (dense, no sparsity): H100 SXM 3.35 TB/s HBM3, 989 TFLOP/s
fp16/bf16 tensor cores, 495 TF32, 67 fp32 (FMA, CUDA cores: also used for every pointwise FLOP),
67 fp64 tensor; launch latency 4 us (a launch on an idle stream: 3-5 us). The roofline time is
max(minimum bytes / bandwidth, FLOPs / peak) with no launch cost; "of roofline" = roofline time
/ projected time. ``--device H200`` uses 4.8 TB/s HBM3e and the same peaks.

``--compare REPORT`` reads the text ``python -m bench.report`` printed on a GPU (GB/s and TFLOP/s
tables, at its default shapes) and puts the measured time next to the projected one, with the
model's error (projected / measured - 1); ``python -m bench.report --model`` does the same at the
end of its own run. ``--save JSON`` keeps the counts and ``--load JSON`` projects them again (on
any ``--device``, with ``--compare``) without counting: gpu_first_run.sh counts while the GPU runs
the tests. ``--write-results`` appends the dated table to bench/RESULTS.md in a
section of its own (projected figures are never mixed with measured ones); ``--plot PATH``
draws the roofline (needs matplotlib: ``pip install tritensor[plot]``).
"""
from __future__ import annotations

import argparse
import datetime
import os
import sys

DEVICES = {
    "H100 SXM": {"hbm": 3.35e12, "peaks": {"fp16": 989e12, "fp8": 1979e12, "int8": 1979e12, "tf32": 495e12,
                                           "fp32": 67e12, "fp64": 67e12, "pointwise": 67e12}, "sms": 132},
    "H200": {"hbm": 4.8e12, "peaks": {"fp16": 989e12, "fp8": 1979e12, "int8": 1979e12, "tf32": 495e12,
                                      "fp32": 67e12, "fp64": 67e12, "pointwise": 67e12}, "sms": 132},
}
LAUNCH_LATENCY_S = 4e-6
F32 = 4

# the shapes of bench.report (its defaults) and the small shapes counted on the emulated device
BENCH = {"numel": 1 << 26, "side": 8192, "reduce_numel": 1 << 28, "reduce_side": 16384,
         "softmax_rows": 4096, "softmax_cols": (1024, 4096, 16384),
         "matmul_sizes": (1024, 2048, 4096, 8192), "skinny": (16, 8192, 8192), "batched": (64, 512, 512, 512)}
SMALL = {"numel": 1 << 15, "side": 128, "reduce_numel": 1 << 15, "row_sums": (8, 2048), "column_sums": (256, 64),
         "softmax_rows": 2, "matmul": 256, "skinny": (16, 256, 256), "batched": (2, 128, 128, 128)}
QUICK = {"numel": 1 << 12, "side": 64, "reduce_numel": 1 << 12, "row_sums": (4, 256), "column_sums": (64, 32),
         "softmax_rows": 1, "matmul": 64, "skinny": (16, 64, 64), "batched": (2, 32, 32, 32)}


class Case:
    """One benchmark case: its name in bench.report, its family, its minimum bytes and dot FLOPs
    (kind -> FLOPs) at the benchmark shape, and how to build it at the small shape
    (``small()`` -> (thunk, minimum bytes at the small shape, matmul dims or None))."""

    def __init__(self, name, family, minimum, small, dot_flops=None, matmul=None):
        self.name, self.family, self.minimum, self.small = name, family, minimum, small
        self.dot_flops = dot_flops or {}
        self.matmul = matmul            # (batch, M, N, K, itemsize) at the benchmark shape


def cases(small=SMALL, bench=BENCH, only=None):
    import tritensor as tt
    n, m = bench["numel"], bench["side"]
    sn, sm = small["numel"], small["side"]

    def vec(*shape):
        return tt.randn(*shape, device="cuda")

    def one_d(fn, n_inputs, n_arrays):
        """fn of n_inputs vectors; the minimum moves n_arrays vectors (inputs and output)."""
        def make():
            xs = [vec(sn) for _ in range(n_inputs)]
            return (lambda: fn(*xs)), n_arrays * sn * F32
        return make

    def two_d(fn, bytes_of):
        def make():
            a, row, col, at = vec(sm, sm), vec(sm), vec(sm, 1), vec(sm, sm).t()
            return (lambda: fn(a, row, col, at)), bytes_of(sm)
        return make

    out = [
        Case("copy (contiguous)", "copy", 2 * n * F32, one_d(lambda x: x.clone(), 1, 2)),
        Case("add contiguous", "elementwise", 3 * n * F32, one_d(lambda x, y: x + y, 2, 3)),
        Case("add matrix + row", "elementwise", (2 * m * m + m) * F32,
             two_d(lambda a, row, col, at: a + row, lambda s: (2 * s * s + s) * F32)),
        Case("add matrix + column", "elementwise", (2 * m * m + m) * F32,
             two_d(lambda a, row, col, at: a + col, lambda s: (2 * s * s + s) * F32)),
        Case("add transposed", "tiled", 3 * m * m * F32, two_d(lambda a, row, col, at: a + at, lambda s: 3 * s * s * F32)),
        Case("contiguous() of a transpose", "tiled", 2 * m * m * F32,
             two_d(lambda a, row, col, at: at.contiguous(), lambda s: 2 * s * s * F32)),
        Case("exp contiguous", "elementwise", 2 * n * F32, one_d(lambda x: x.exp(), 1, 2)),
        Case("clamp contiguous", "elementwise", 2 * n * F32, one_d(lambda x: x.clamp(-1.0, 1.0), 1, 2)),
        Case("sum (all)", "reduce", n * F32, one_d(lambda x: x.sum(), 1, 1)),
    ]
    rn, rs = bench["reduce_numel"], bench["reduce_side"]

    out += [
        Case(f"sum of {rn} values", "reduce", rn * F32, _sum_all(vec, small["reduce_numel"])),
        Case(f"row sums {rs}x{rs}", "reduce", (rs * rs + rs) * F32, _sums(vec, small["row_sums"], 1)),
        Case(f"column sums {rs}x{rs}", "reduce", (rs * rs + rs) * F32, _sums(vec, small["column_sums"], 0)),
    ]
    rows = bench["softmax_rows"]
    for c in bench["softmax_cols"]:
        out.append(Case(f"softmax {rows}x{c}", "softmax", 2 * rows * c * F32, _softmax(vec, small["softmax_rows"], c)))
    for size in bench["matmul_sizes"]:
        for dtype in ("float16", "bfloat16", "float32 ieee", "float32 tf32"):
            out.append(_matmul_case(f"matmul {size}^3 {dtype}", dtype, 1, size, size, size,
                                    (1, small["matmul"], small["matmul"], small["matmul"])))
    sm_, sk, sn_ = bench["skinny"]
    out.append(_matmul_case(f"matmul skinny {sm_}x{sk}x{sn_} float16", "float16", 1, sm_, sn_, sk,
                            (1, small["skinny"][0], small["skinny"][2], small["skinny"][1])))
    bs, bm, bk, bn = bench["batched"]
    sb = small["batched"]
    out.append(_matmul_case(f"bmm {bs}x{bm}x{bk}x{bn} bfloat16", "bfloat16", bs, bm, bn, bk, (sb[0], sb[1], sb[3], sb[2])))
    if only:
        out = [c for c in out if any(o in c.name for o in only)]
    return out


def _sum_all(vec, n):
    def make():
        x = vec(n)
        return (lambda: x.sum()), n * F32          # bench.report counts the input only
    return make


def _sums(vec, shape, dim):
    def make():
        x = vec(*shape)
        kept = shape[1 - dim]
        return (lambda: x.sum(dim)), (shape[0] * shape[1] + kept) * F32
    return make


def _softmax(vec, rows, cols):
    def make():
        x = vec(rows, cols)
        return (lambda: x.softmax(-1)), 2 * rows * cols * F32
    return make


_DOT_KIND = {"float16": "fp16", "bfloat16": "fp16", "float32 ieee": "fp32", "float32 tf32": "tf32"}


def _matmul_case(name, dtype, batch, m, n, k, small_dims):
    import tritensor as tt
    from tritensor.profiler import matmul_minimum
    tdtype = getattr(tt, dtype.split()[0])
    size = tdtype.itemsize
    kind = _DOT_KIND[dtype]
    flops = 2 * batch * m * n * k

    def make():
        b_, m_, n_, k_ = small_dims
        lead = (b_,) if b_ > 1 else ()
        a = tt.randn(*lead, m_, k_, device="cuda").to(tdtype)
        b = tt.randn(*lead, k_, n_, device="cuda").to(tdtype)
        tf32 = dtype.endswith("tf32")

        def thunk():
            saved = tt.backends.cuda.matmul.allow_tf32
            tt.backends.cuda.matmul.allow_tf32 = tf32
            try:
                return a @ b
            finally:
                tt.backends.cuda.matmul.allow_tf32 = saved
        return thunk, matmul_minimum(m_, n_, k_, size, size, size, batch=b_, tile=(m_, n_))
    # the minimum is the compulsory traffic (each operand once); the tiling's re-reads are the kernel's
    case = Case(name, "matmul", matmul_minimum(m, n, k, size, size, size, batch=batch, tile=(m, n)), make,
                {kind: flops}, (batch, m, n, k, size, small_dims))
    return case


# --------------------------------------------------------------------------- counting + projection
class Projection:
    __slots__ = ("case", "kernels", "launches", "bytes", "minimum", "coalescing", "flops", "time_s",
                 "roofline_s", "reread", "bound", "memory_s", "compute_s", "main")

    @property
    def of_roofline(self):
        return self.roofline_s / self.time_s if self.time_s else 0.0


def project(case, device="H100 SXM"):
    """Count ``case`` at its small shape and project it to its benchmark shape on ``device``."""
    import tritensor as tt
    from tritensor.backends.triton._plan import gpu_launch_configs
    from tritensor.profiler import matmul_minimum
    spec = DEVICES[device]
    with gpu_launch_configs():
        thunk, small_minimum = case.small()
        thunk()                                 # warm: plans and lazy state outside the count
        with tt.profiler.traffic() as counter:
            thunk()
    total = counter.total()
    p = Projection()
    p.case = case
    p.kernels = sorted({r.kernel for r in counter.launches})
    p.main = max(counter.launches, key=lambda r: r.bytes)      # the launch the static columns describe
    p.launches = total.launches
    p.minimum = case.minimum
    p.coalescing = total.coalescing
    p.reread = total.bytes / small_minimum            # lane (L1/L2 request) bytes / minimum, small shape
    flops = {}
    if case.matmul is not None:
        batch, m, n, k, size, small_dims = case.matmul
        big = max(counter.launches, key=lambda r: r.bytes)
        sb, sm, sn, sk = small_dims
        small_tile = (big.meta.get("BLOCK_M", 128), big.meta.get("BLOCK_N", 128))
        small_bound = matmul_minimum(sm, sn, sk, size, size, size, batch=sb, tile=small_tile)
        tile, group = _gpu_tile(case, m, n, k)
        p.bytes = total.bytes / small_bound * matmul_dram(m, n, k, size, batch, tile, group, spec["sms"])
        flops.update(case.dot_flops)
        p.bound = f"tile {tile[0]}x{tile[1]}, GROUP_M {group}"
    else:
        scale = case.minimum / small_minimum
        p.bytes = total.unique_bytes / small_minimum * case.minimum
        for kind, v in total.dot_flops.items():
            flops[kind] = v * scale
        p.bound = ""
    pointwise = total.flops * (case.minimum / small_minimum)
    flops["pointwise"] = pointwise
    p.flops = flops
    return timed(p, spec)


def timed(p, spec):
    """Fill ``p``'s projected and roofline times on the device ``spec`` from its counts."""
    compute_s = sum(v / spec["peaks"][kind] for kind, v in p.flops.items())
    memory_s = p.bytes / (spec["hbm"] * max(p.coalescing, 1e-3))
    p.memory_s, p.compute_s = memory_s, compute_s
    p.time_s = max(memory_s, compute_s) + p.launches * LAUNCH_LATENCY_S
    ideal_compute = sum(v / spec["peaks"][kind] for kind, v in p.case.dot_flops.items())
    p.roofline_s = max(p.case.minimum / spec["hbm"], ideal_compute)
    return p


_SAVED = ("kernels", "launches", "bytes", "minimum", "coalescing", "flops", "reread", "bound")


def save(projections, path):
    """The counts behind ``projections`` as JSON (``--load`` projects them again without counting)."""
    import json
    data = [{"name": p.case.name, "case_minimum": p.case.minimum, "dot_flops": p.case.dot_flops,
             "main": {"kernel": p.main.kernel, "meta": p.main.meta}, **{k: getattr(p, k) for k in _SAVED}}
            for p in projections]
    with open(path, "w") as f:
        json.dump({"version": 1, "projections": data}, f, indent=1)


def load(path, device):
    """Projections on ``device`` from the counts ``save`` wrote."""
    import json
    from types import SimpleNamespace
    with open(path) as f:
        data = json.load(f)
    out = []
    for d in data["projections"]:
        p = Projection()
        p.case = SimpleNamespace(name=d["name"], minimum=d["case_minimum"], dot_flops=d["dot_flops"])
        p.main = SimpleNamespace(**d["main"])
        for k in _SAVED:
            setattr(p, k, d[k])
        out.append(timed(p, DEVICES[device]))
    return out


def _gpu_tile(case, m, n, k):
    """The GPU's first-choice tile for the benchmark shape (backends/triton/matmul.py's candidates:
    what gpu_launch_configs() launches, and the autotuner's first candidate)."""
    from tritensor.backends.triton import matmul as mm
    dtype = case.name.split()[-2] if case.name.endswith(("ieee", "tf32")) else case.name.split()[-1]
    precision = "tf32" if case.name.endswith("tf32") else "ieee"
    config = mm.candidates(m, n, k, mm.family(dtype, precision))[0]
    return (config.BLOCK_M, config.BLOCK_N), config.GROUP_M


def matmul_dram(m, n, k, size, batch, tile, group, sms):
    """DRAM bytes of a tiled matmul whose programs run GROUP_M-ordered, one wave of ``sms``
    programs at a time: the tiles of a wave share their A and B panels in L2, so the wave's
    super-tile (BLOCK_M x GROUP_M rows, BLOCK_N x ceil(sms / GROUP_M) columns, at most the
    matrix) is the blocking that DRAM sees (an H100's 50 MB L2 holds a wave's panels for K up to
    ~8k in 16-bit)."""
    from tritensor.profiler import matmul_minimum
    rows = min(m, tile[0] * group)
    cols = min(n, tile[1] * -(-sms // group))
    return matmul_minimum(m, n, k, size, size, size, batch=batch, tile=(rows, cols))


# --------------------------------------------------------------------------- static facts (cubin)
def static_facts():
    """bench/static.py's facts of the compiled sm_90 kernels ({variant: fact}, a variant being
    ``kernel[CONSTEXPR=value, ..., pointer:dtype, ...]``), or {} when that module is absent or
    has not computed them (the columns then show "-")."""
    try:
        from .static import load_static_facts
    except ImportError:
        return {}
    try:
        return load_static_facts() or {}
    except Exception:           # facts not computed (no compiler here): the columns stay empty
        return {}


def _variant_pairs(variant):
    inner = variant[variant.find("[") + 1:variant.rfind("]")] if "[" in variant else ""
    return dict(part.strip().split("=", 1) for part in inner.split(",") if "=" in part)


def static_fact(facts, launch):
    """The compiled facts of ``launch``'s variant: a fact of the same kernel whose constexprs
    agree with the launch's (the first such; None when there is none)."""
    if launch is None:
        return None
    for variant, fact in facts.items():
        if not isinstance(fact, dict) or fact.get("kernel", variant.split("[")[0]) != launch.kernel:
            continue
        pairs = _variant_pairs(variant)
        if all(str(launch.meta[k]) == v for k, v in pairs.items() if k in launch.meta):
            return fact
    return None


def _fact(fact, key):
    if not fact:
        return "-"
    if key == "registers":
        value = fact.get("regs", fact.get("registers"))
        return "-" if value is None else str(value)
    value = fact.get("occupancy")
    return "-" if value is None else f"{100 * value:.0f} %" if value <= 1 else str(value)


# --------------------------------------------------------------------------- measured times
def parse_report(text, minimum_of, flops_of):
    """{case name: measured ms} from ``python -m bench.report``'s printed tables: a GB/s row gives
    ms = minimum bytes / (GB/s x 1e6), a TFLOP/s row ms = FLOPs / (TFLOP/s x 1e9)."""
    measured = {}
    unit = None
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) < 2:
            continue
        if cells[0] == "case":
            unit = "GB/s" if cells[1].endswith("GB/s") else "TFLOP/s" if cells[1].endswith("TFLOP/s") else None
            continue
        try:
            rate = float(cells[1])
        except ValueError:
            continue
        name = cells[0]
        if unit == "GB/s" and name in minimum_of and rate > 0:
            measured[name] = minimum_of[name] / (rate * 1e6)
        elif unit == "TFLOP/s" and name in flops_of and rate > 0:
            measured[name] = flops_of[name] / (rate * 1e9)
    return measured


# --------------------------------------------------------------------------- the report
def copy_bandwidth_fraction(projections, measured):
    """Measured copy bandwidth / the spec's, from the contiguous copy (None without it): the
    achievable fraction of HBM bandwidth on the measured GPU."""
    for p in projections:
        if p.case.name == "copy (contiguous)" and measured.get(p.case.name):
            return p.memory_s / (measured[p.case.name] * 1e-3 - p.launches * LAUNCH_LATENCY_S)
    return None



def _percent(error):
    """A signed error in whole per cent; one that rounds to zero is "+0 %" (the copy measured
    against itself gives a rounding residue like -1e-16, which printed "-0 %")."""
    return f"{round(100 * error):+d} %"

def table(projections, device, facts, measured=None):
    cols = ["case", "kernels", "launches", "DRAM / min", "re-reads", "coalescing", "registers", "occupancy",
            f"projected us ({device})", "of roofline"]
    fraction = None
    if measured is not None:
        cols += ["measured us", "model error"]
        fraction = copy_bandwidth_fraction(projections, measured)
        if fraction is not None:
            cols += ["error at copy BW"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    errors, calibrated = [], []
    for p in projections:
        row = [p.case.name, ", ".join(p.kernels) + (f" ({p.bound})" if p.bound else ""), str(p.launches),
               f"{p.bytes / p.minimum:.2f}", f"{p.reread:.2f}", f"{100 * p.coalescing:.0f} %",
               _fact(static_fact(facts, p.main), "registers"), _fact(static_fact(facts, p.main), "occupancy"),
               f"{p.time_s * 1e6:.4g}", f"{100 * p.of_roofline:.0f} %"]
        if measured is not None:
            ms = measured.get(p.case.name)
            if ms is None:
                row += ["-", "-"] + (["-"] if fraction is not None else [])
            else:
                err = p.time_s / (ms * 1e-3) - 1
                errors.append(abs(err))
                row += [f"{ms * 1e3:.4g}", _percent(err)]
                if fraction is not None:
                    t = max(p.memory_s / fraction, p.compute_s) + p.launches * LAUNCH_LATENCY_S
                    cerr = t / (ms * 1e-3) - 1
                    calibrated.append(abs(cerr))
                    row.append(_percent(cerr))
        lines.append("| " + " | ".join(row) + " |")
    for name, errs in (("", errors), (f" at the measured copy bandwidth ({100 * (fraction or 0):.0f} % of spec)",
                                      calibrated)):
        if errs:
            errs.sort()
            lines.append("")
            lines.append(f"model error{name} over {len(errs)} measured cases: median |projected / measured - 1| = "
                         f"{100 * errs[len(errs) // 2]:.0f} %, max {100 * errs[-1]:.0f} %")
    return "\n".join(lines)


def plot(projections, device, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"(no plot: matplotlib is not installed; pip install tritensor[plot])")
        return False
    spec = DEVICES[device]
    fig, ax = plt.subplots(figsize=(8, 5))
    xs = [1e-2, 1e4]
    for kind in ("fp16", "tf32", "fp32"):
        peak = spec["peaks"][kind]
        ax.plot(xs, [min(peak, x * spec["hbm"]) for x in xs], lw=1, label=f"roofline {kind}")
    for p in projections:
        flops = sum(p.flops.values())
        ai = flops / p.bytes if p.bytes else 0
        ax.scatter([max(ai, 1e-2)], [max(flops / p.time_s, 1e6)], s=12)
        ax.annotate(p.case.name, (max(ai, 1e-2), max(flops / p.time_s, 1e6)), fontsize=5)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("FLOPs / DRAM byte")
    ax.set_ylabel("projected FLOP/s")
    ax.set_title(f"tritensor projected on {device} (from emulated traffic counts)")
    ax.legend(fontsize=6)
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return True


def write_results(text, device, path=None, title=None):
    path = path or os.path.join(os.path.dirname(__file__), "RESULTS.md")
    today = datetime.date.today().isoformat()
    head = title or f"## Projected, not measured: {device} roofline model from emulated traffic counts ({today})"
    with open(path, "a") as f:
        f.write(f"\n{head}\n\n`python -m bench.model` (tritensor.profiler traffic counts at small shapes under the GPU "
                f"launch configurations, extrapolated to bench.report's shapes; see bench/model.py).\n\n{text}\n")
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="H100 SXM", choices=sorted(DEVICES))
    ap.add_argument("--compare", metavar="REPORT", help="text printed by python -m bench.report on a GPU")
    ap.add_argument("--write-results", action="store_true", help="append the table to bench/RESULTS.md")
    ap.add_argument("--results-path", help=argparse.SUPPRESS)
    ap.add_argument("--plot", metavar="PNG", help="write the roofline plot (needs matplotlib)")
    ap.add_argument("--only", nargs="*", help="cases whose name contains one of these")
    ap.add_argument("--quick", action="store_true", help="tiny counted shapes (a smoke test of the pipeline)")
    ap.add_argument("--save", metavar="JSON", help="also write the counts (for --load)")
    ap.add_argument("--load", metavar="JSON", help="project counts saved by --save instead of counting")
    args = ap.parse_args(argv)
    if args.load:
        projections = load(args.load, args.device)
        return _report(args, projections, {p.case.name: p.case for p in projections})
    os.environ["TRITENSOR_EMULATE_CUDA"] = "1"      # the counter observes Triton's interpreter
    import tritensor as tt
    if not (tt.cuda.is_available() and tt.cuda.is_emulated()):
        print("bench.model needs the emulated device (start it with TRITENSOR_EMULATE_CUDA=1 before tritensor loads)")
        return 2
    all_cases = cases(QUICK if args.quick else SMALL, only=args.only)
    projections = []
    for case in all_cases:
        projections.append(project(case, args.device))
        print(f"counted {case.name}", file=sys.stderr)
    if args.save:
        save(projections, args.save)
    return _report(args, projections, {c.name: c for c in all_cases})


def _report(args, projections, case_of):
    measured = None
    if args.compare:
        with open(args.compare) as f:
            measured = parse_report(f.read(), {n: c.minimum for n, c in case_of.items()},
                                    {n: sum(c.dot_flops.values()) for n, c in case_of.items() if c.dot_flops})
    text = table(projections, args.device, static_facts(), measured)
    print(text)
    if args.write_results:
        title = None
        if measured is not None:
            title = (f"## Model vs measurement: {args.device} projection against {os.path.basename(args.compare)} "
                     f"({datetime.date.today().isoformat()})")
        print("appended to", write_results(text, args.device, args.results_path, title))
    if args.plot:
        if plot(projections, args.device, args.plot):
            print("roofline plot:", args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
