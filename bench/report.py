"""python -m bench.report: achieved GB/s for each kernel, with torch and CuPy measured in the same run.

Each case counts the fewest bytes the op must move (inputs read once, output written once) and
divides by the median event-timed duration. The floor is the device-to-device copy bandwidth
measured first in the same run (CuPy's copy where present, else tritensor's own copy kernel).
Peers (torch eager, CuPy) run the same op on the same shapes when importable; tritensor never
needs them. ``--model`` then puts bench.model's projected time (from traffic counted on the
emulated device) next to each measured one, with the model's error.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

from .timing import median_ms


def _peers():
    peers = {}
    try:
        import torch
        if torch.cuda.is_available():
            peers["torch"] = torch
    except Exception:
        pass
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0:
            peers["cupy"] = cupy
    except Exception:
        pass
    return peers


def cases(n, m):
    """(name, bytes moved, tritensor thunk factory, peer thunk factory) for each benchmark."""
    import tritensor as tt
    f32 = 4
    x = tt.randn(n, device="cuda")
    y = tt.randn(n, device="cuda")
    a = tt.randn(m, m, device="cuda")
    row = tt.randn(m, device="cuda")
    col = tt.randn(m, 1, device="cuda")
    at = tt.randn(m, m, device="cuda").t()
    host = {k: v.cpu().numpy() for k, v in dict(x=x, y=y, a=a, row=row, col=col, at=at.contiguous()).items()}

    def peer(lib, fn):
        def make():
            if lib.__name__ == "torch":
                t = {k: lib.from_numpy(np.ascontiguousarray(v)).cuda() for k, v in host.items()}
                t["at"] = t["at"].t().contiguous().t()   # same transposed layout
            else:
                t = {k: lib.asarray(v) for k, v in host.items()}
                t["at"] = lib.ascontiguousarray(t["at"].T).T
            return lambda: fn(t)
        return make

    return [
        ("copy (contiguous)", 2 * n * f32, lambda: x.clone(), lambda lib: peer(lib, lambda t: t["x"].copy() if lib.__name__ == "cupy" else t["x"].clone())()),
        ("add contiguous", 3 * n * f32, lambda: x + y, lambda lib: peer(lib, lambda t: t["x"] + t["y"])()),
        ("add matrix + row", (2 * m * m + m) * f32, lambda: a + row, lambda lib: peer(lib, lambda t: t["a"] + t["row"])()),
        ("add matrix + column", (2 * m * m + m) * f32, lambda: a + col, lambda lib: peer(lib, lambda t: t["a"] + t["col"])()),
        ("add transposed", 3 * m * m * f32, lambda: a + at, lambda lib: peer(lib, lambda t: t["a"] + t["at"])()),
        ("contiguous() of a transpose", 2 * m * m * f32, lambda: at.contiguous(),
         lambda lib: peer(lib, lambda t: lib.ascontiguousarray(t["at"]) if lib.__name__ == "cupy" else t["at"].contiguous())()),
        ("exp contiguous", 2 * n * f32, lambda: x.exp(), lambda lib: peer(lib, lambda t: lib.exp(t["x"]))()),
        ("clamp contiguous", 2 * n * f32, lambda: x.clamp(-1.0, 1.0), lambda lib: peer(lib, lambda t: lib.clip(t["x"], -1.0, 1.0))()),
        ("sum (all)", n * f32, lambda: x.sum(), lambda lib: peer(lib, lambda t: t["x"].sum())()),
    ]


def reduction_cases(n, m, softmax_rows=4096, softmax_cols=(1024, 4096, 16384)):
    """Issue 4: the sum of n float32 values (the report's default --reduce-numel is 2**28), row and
    column sums of an m x m matrix (16384 in the report), softmax of rows x N."""
    import tritensor as tt
    f32 = 4
    big = tt.randn(n, device="cuda")
    a = tt.randn(m, m, device="cuda")
    sms = [(c, tt.randn(softmax_rows, c, device="cuda")) for c in softmax_cols]
    host = {"big": big.cpu().numpy(), "a": a.cpu().numpy()}
    host.update({f"sm{c}": s.cpu().numpy() for c, s in sms})

    def peer(lib, fn):
        if lib.__name__ == "torch":
            t = {k: lib.from_numpy(v).cuda() for k, v in host.items()}
        else:
            t = {k: lib.asarray(v) for k, v in host.items()}
        return lambda: fn(t)

    def softmax_peer(lib, c):
        if lib.__name__ == "torch":
            return peer(lib, lambda t: lib.softmax(t[f"sm{c}"], -1))
        return peer(lib, lambda t: (lambda e: e / e.sum(-1, keepdims=True))(
            lib.exp(t[f"sm{c}"] - t[f"sm{c}"].max(-1, keepdims=True))))

    out = [
        (f"sum of {n} values", n * f32, lambda: big.sum(), lambda lib: peer(lib, lambda t: t["big"].sum())),
        (f"row sums {m}x{m}", (m * m + m) * f32, lambda: a.sum(1), lambda lib: peer(lib, lambda t: t["a"].sum(1))),
        (f"column sums {m}x{m}", (m * m + m) * f32, lambda: a.sum(0), lambda lib: peer(lib, lambda t: t["a"].sum(0))),
    ]
    for c, s in sms:
        out.append((f"softmax {softmax_rows}x{c}", 2 * softmax_rows * c * f32, (lambda s=s: s.softmax(-1)),
                    (lambda lib, c=c: softmax_peer(lib, c))))
    return out


# Dense tensor-core peaks (TFLOP/s, no sparsity) of the GPUs the report is usually run on, for the
# "of peak" column; by dtype/precision key. Unknown GPUs print no such column.
MATMUL_PEAKS = {
    "H100 80GB HBM3": {"float16": 989, "bfloat16": 989, "tf32": 494, "float32": 67, "float64": 67},
    "H200": {"float16": 989, "bfloat16": 989, "tf32": 494, "float32": 67, "float64": 67},
}


def matmul_cases(sizes=(1024, 2048, 4096, 8192), skinny=(16, 8192, 8192), batched=(64, 512, 512, 512)):
    """Issue 5: (name, flops, precision key, tritensor thunk, peer thunk factory) for square
    matmuls in float16, bfloat16 and float32 with TF32 off and on, a skinny M = 16 problem and a
    batched one. Each thunk sets the float32 precision it measures (tritensor's and torch's
    allow_tf32); CuPy has no runtime TF32 switch (CUPY_TF32 is read at import), so it is a peer
    only where its default (IEEE float32) applies, and it has no bfloat16."""
    import tritensor as tt
    out = []

    def case(name, shape_a, shape_b, dtype, tf32=False):
        a = tt.randn(*shape_a, device="cuda").to(dtype)
        b = tt.randn(*shape_b, device="cuda").to(dtype)
        host = [np.asarray(t.float().cpu().numpy()) for t in (a, b)]
        flops = 2 * int(np.prod(shape_a)) * shape_b[-1]
        key = "tf32" if tf32 else dtype.name

        def ours():
            tt.backends.cuda.matmul.allow_tf32 = tf32
            return lambda: a @ b

        def peer(lib):
            if lib.__name__ == "torch":
                lib.backends.cuda.matmul.allow_tf32 = tf32
                ta, tb_ = (lib.from_numpy(h).cuda().to(getattr(lib, dtype.name)) for h in host)
                return lambda: lib.matmul(ta, tb_)
            if dtype.name == "bfloat16" or tf32:
                return None
            ca, cb = (lib.asarray(h).astype(dtype.name) for h in host)
            return lambda: lib.matmul(ca, cb)
        out.append((name, flops, key, ours, peer))

    for n in sizes:
        for dtype in (tt.float16, tt.bfloat16):
            case(f"matmul {n}^3 {dtype.name}", (n, n), (n, n), dtype)
        case(f"matmul {n}^3 float32 ieee", (n, n), (n, n), tt.float32)
        case(f"matmul {n}^3 float32 tf32", (n, n), (n, n), tt.float32, tf32=True)
    m, k, n = skinny
    case(f"matmul skinny {m}x{k}x{n} float16", (m, k), (k, n), tt.float16)
    bs, m, k, n = batched
    case(f"bmm {bs}x{m}x{k}x{n} bfloat16", (bs, m, k), (bs, k, n), tt.bfloat16)
    return out


def matmul_report(peers, rep, sync, emulated):
    """Print the TFLOP/s table of ``matmul_cases`` (first call of each case tunes: warm-up runs
    happen before timing). Restores tritensor's and torch's float32 precision afterwards."""
    import tritensor as tt
    sizes = (64,) if emulated else (1024, 2048, 4096, 8192)
    skinny = (16, 64, 64) if emulated else (16, 8192, 8192)
    batched = (2, 32, 32, 32) if emulated else (64, 512, 512, 512)
    peaks = next((v for k, v in MATMUL_PEAKS.items() if k in tt.cuda.get_device_name()), None)
    saved = tt.get_float32_matmul_precision()
    rows = []
    try:
        for name, flops, key, ours, peer in matmul_cases(sizes, skinny, batched):
            ms = median_ms(ours(), rep=rep, sync=sync)
            row = {"case": name, "tritensor TFLOP/s": flops / ms / 1e9}
            for pname, lib in peers.items():
                fn = peer(lib)
                if fn is None:
                    continue
                pms = median_ms(fn, rep=rep, sync=sync)
                row[f"{pname} TFLOP/s"] = flops / pms / 1e9
                row[f"vs {pname}"] = pms / ms
            if peaks:
                row["of peak"] = row["tritensor TFLOP/s"] / peaks[key]
            rows.append(row)
    finally:
        tt.set_float32_matmul_precision(saved)
        if "torch" in peers:
            peers["torch"].backends.cuda.matmul.allow_tf32 = False
    cols = []
    for r in rows:
        cols += [c for c in r if c not in cols]
    print("\n" + " | ".join(cols))
    for r in rows:
        print(" | ".join(f"{r[c]:.3g}" if isinstance(r.get(c), float) else str(r.get(c, "")) for c in cols))
    return rows


def compare_with_model(rows, matmul_rows, device_name, model_args=()):
    """Measured next to projected: the GB/s and TFLOP/s rows go to ``python -m bench.model
    --compare`` (run in a process of its own: the model counts traffic on the emulated device)."""
    import os
    import subprocess
    import tempfile
    lines = ["case | tritensor GB/s"] + [f"{r['case']} | {r['tritensor GB/s']}" for r in rows]
    lines += ["", "case | tritensor TFLOP/s"] + [f"{r['case']} | {r['tritensor TFLOP/s']}" for r in matmul_rows]
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(f"device: {device_name}\n" + "\n".join(lines) + "\n")
    model_device = "H200" if "H200" in device_name else "H100 SXM"
    try:
        env = dict(os.environ, TRITENSOR_EMULATE_CUDA="1")
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        done = subprocess.run([sys.executable, "-m", "bench.model", "--device", model_device, "--compare", f.name,
                               *model_args], env=env, capture_output=True, text=True, cwd=root)
        print(f"\nmodel ({model_device}) vs measured:")
        print(done.stdout if done.returncode == 0 else done.stderr[-2000:])
        return done.returncode == 0
    finally:
        os.unlink(f.name)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--numel", type=int, default=1 << 26, help="elements of the 1-D cases")
    p.add_argument("--side", type=int, default=8192, help="side of the 2-D cases")
    p.add_argument("--rep", type=int, default=50)
    p.add_argument("--reduce-numel", type=int, default=1 << 28, help="elements of the big sum")
    p.add_argument("--reduce-side", type=int, default=16384, help="side of the row/column sums")
    p.add_argument("--skip-matmul", action="store_true", help="leave out the matmul TFLOP/s section")
    p.add_argument("--skip-pdist", action="store_true", help="leave out the pdist section (bench/pdist_report.py)")
    p.add_argument("--model", action="store_true",
                   help="then put bench.model's projected times next to the measured ones, with the model's error")
    args = p.parse_args(argv)
    from tritensor.selfcheck import _pick_device
    _pick_device()            # a real GPU if CuPy sees one, else the emulated device
    import tritensor as tt
    emulated = tt.cuda.is_emulated()
    if emulated:
        args.numel, args.side, args.rep = min(args.numel, 1 << 12), min(args.side, 64), min(args.rep, 3)
        print("NOTE: emulated device (Triton interpreter): absolute figures mean nothing.\n")
    print(f"device: {tt.cuda.get_device_name()}")
    peers = {} if emulated else _peers()
    sync = tt.cuda.synchronize
    rows = []
    all_cases = cases(args.numel, args.side)
    if emulated:
        all_cases += reduction_cases(args.numel, args.side, softmax_rows=8, softmax_cols=(16, 64, 256))
    else:              # the sizes (2**28 values, 16384^2, 4096 x N)
        all_cases += reduction_cases(args.reduce_numel, args.reduce_side)
    for name, nbytes, ours, theirs in all_cases:
        ms = median_ms(ours, rep=args.rep, sync=sync)
        row = {"case": name, "tritensor GB/s": nbytes / ms / 1e6}
        for pname, lib in peers.items():
            pms = median_ms(theirs(lib), rep=args.rep, sync=sync)
            row[f"{pname} GB/s"] = nbytes / pms / 1e6
            row[f"vs {pname}"] = pms / ms
        rows.append(row)
    # the copy floor: the fastest contiguous copy measured (tritensor's or a peer's: CuPy's copy
    # kernel is not at the roofline on an H200, 1.6 of torch's 3.9 TB/s)
    floor = max(v for k, v in rows[0].items() if k.endswith("GB/s"))
    cols = ["case", "tritensor GB/s"] + [c for c in rows[0] if c not in ("case", "tritensor GB/s")] + ["of copy BW"]
    print(" | ".join(cols))
    for r in rows:
        r["of copy BW"] = r["tritensor GB/s"] / floor
        print(" | ".join(f"{r[c]:.3g}" if isinstance(r.get(c), float) else str(r.get(c, "")) for c in cols))
    matmul_rows = []
    if not args.skip_matmul:
        matmul_rows = matmul_report(peers, args.rep, sync, emulated)
    if args.model:
        compare_with_model(rows, matmul_rows, tt.cuda.get_device_name())
    if not args.skip_pdist:
        from .pdist_report import pdist_report
        pdist_report(rep=args.rep, emulated=emulated)
    return 0


if __name__ == "__main__":
    sys.exit(main())
