"""Static facts of every kernel variant, from its sm_90 cubin (no GPU): ``python -m bench.static``.

Compiles the variants the suite's compile checks ask for (tests/test_kernels_standalone.py's
launches in its parts, tests/test_optim.py's optimizer kernels), reads each cubin's facts
(tests/sm90.py: registers, spills, shared memory, H100 occupancy, widest LDG/STG, tensor-core
instructions), writes them to build/static_facts.json and prints a table, one row per kernel:

    python -m bench.static [--jobs 2] [--out build/static_facts.json] [--variants]

``load_static_facts()`` returns the file's facts keyed by variant (kernel name + constexprs +
pointer dtypes), or {} when it has not been computed. These are facts of the compiled code, not
measurements; TRITENSOR_COMPILE_PYTHON selects another interpreter's Triton (see tests/sm90.py).
"""
import argparse
import concurrent.futures
import json
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(ROOT, "tests")
DEFAULT_OUT = os.path.join(ROOT, "build", "static_facts.json")
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)     # tests/sm90.py and the test modules' compile scripts


def load_static_facts(path=DEFAULT_OUT):
    """{variant: facts} from ``python -m bench.static``'s file; {} when there is none. A variant is
    ``kernel[CONSTEXPR=value, ..., pointer:dtype, ...]``; each fact has "kernel", "regs",
    "stack", "local", "shared", "occupancy" (0..1 of an H100 SM's 64 warps), "limiter",
    "ldg_bits", "stg_bits", "tensor_core" ({"HGMMA": n, ...}), "num_warps" ..."""
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        data = json.load(f)
    return {fact["variant"]: fact for fact in data["facts"]}


def _compile_scripts():
    """[(label, script, extra env)] of the suite's compile checks, in their parts."""
    os.environ.setdefault("TRITENSOR_EMULATE_CUDA", "1")    # the test modules import under the interpreter
    os.environ["TRITON_INTERPRET"] = "1"
    import test_kernels_standalone as ks
    import test_optim
    records = json.dumps(ks.elementwise_signatures())
    jobs = [(f"kernels part {p}", ks._COMPILE_SCRIPT, {"TRITENSOR_COMPILE_PART": str(p),
                                                        "TRITENSOR_COMPILE_PARTS": str(ks.COMPILE_PARTS),
                                                        "TRITENSOR_COMPILE_RECORDS": records})
            for p in range(ks.COMPILE_PARTS)]
    jobs.append(("optimizers", test_optim._COMPILE_SCRIPT, {}))
    return jobs


def compute(jobs=1, log=print, partial=None):
    """Compile every part (``jobs`` at a time) and return (facts, triton version); ``partial`` is
    called with the facts so far after each part."""
    import sm90
    import triton
    reason = sm90.has_compiler()
    if reason:
        raise RuntimeError(reason)
    scripts = _compile_scripts()
    with tempfile.TemporaryDirectory(prefix="static_") as scratch:
        def one(i):
            label, script, env = scripts[i]
            where = os.path.join(scratch, str(i))
            os.makedirs(where)
            done = sm90.run_compile(script, os.path.join(where, "facts.json"), where, env)
            if done.returncode != 0:
                raise RuntimeError(f"{label} failed:\n{done.stderr[-4000:]}")
            with open(os.path.join(where, "facts.json")) as f:
                return label, json.load(f)
        facts = []
        with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
            for label, part in pool.map(one, range(len(scripts))):
                log(f"{label}: {len(part)} variants")
                facts += part
                if partial:
                    partial(facts)
    version = triton.__version__
    if os.environ.get("TRITENSOR_COMPILE_PYTHON"):
        version = "(TRITENSOR_COMPILE_PYTHON's)"
    return dedupe(facts), version


def dedupe(facts):
    """One fact per variant name; two compiles of one name that differ (Triton's divisibility
    specialization: aligned or not) get the name suffixed "#aligned"/"#unaligned"-style counts."""
    by = {}
    for f in facts:
        by.setdefault(f["variant"], []).append(f)
    out = []
    for name, group in by.items():
        distinct = {json.dumps({k: v for k, v in f.items() if k not in ("launch", "expect")}, sort_keys=True): f
                    for f in group}
        for n, f in enumerate(sorted(distinct.values(), key=lambda f: -f["divisible16"])):
            f = dict(f)
            if n:
                f["variant"] = f"{name}#{n + 1}"
            out.append(f)
    return out


def _tc(f):
    return "+".join(f"{k}" for k in sorted(f["tensor_core"])) or "-"


def table(facts, per_variant=False):
    """Rows: kernel (or variant), variants, max regs, spilling variants (registers at the cap and
    local memory), variants with a subroutine's stack frame (below the cap), max smem, min and max
    occupancy on an H100, the widest LDG/STG of each variant (distinct values), tensor-core
    instructions."""
    groups = {}
    for f in facts:
        groups.setdefault(f["variant"] if per_variant else f["kernel"], []).append(f)
    import sm90
    head = ["kernel", "variants", "regs max", "spills", "frame", "smem max", "occupancy", "LDG bits", "STG bits",
            "tensor cores"]
    rows = []
    for name in sorted(groups):
        g = groups[name]
        occ = sorted(f["occupancy"] for f in g)
        ldg = sorted({f["ldg_bits"] for f in g})
        stg = sorted({f["stg_bits"] for f in g})
        spilling = sum(1 for f in g if sm90.spills(f))
        frame = sum(1 for f in g if sm90.uses_local_memory(f) and not sm90.spills(f))
        rows.append([name, str(len(g)), str(max(f["regs"] for f in g)), str(spilling), str(frame),
                     f"{max(f['shared'] for f in g) / 1024:.1f} KB",
                     f"{occ[0]:.0%}" if occ[0] == occ[-1] else f"{occ[0]:.0%}-{occ[-1]:.0%}",
                     "/".join(map(str, ldg)), "/".join(map(str, stg)),
                     "+".join(sorted({k for f in g for k in f["tensor_core"]})) or "-"])
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"
    return "\n".join([line(head), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] + [line(r) for r in rows])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=1, help="compile parts at once (default 1)")
    parser.add_argument("--out", default=DEFAULT_OUT)
    parser.add_argument("--variants", action="store_true", help="a row per variant, not per kernel")
    parser.add_argument("--from-file", action="store_true", help="tabulate --out without compiling")
    args = parser.parse_args(argv)
    if args.from_file:
        with open(args.out) as f:
            data = json.load(f)
    else:
        def write(facts, version="?", complete=False):
            data = {"triton": version, "target": "sm_90 (H100), static, from the cubin, not measured",
                    "complete": complete, "facts": facts}
            os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
            with open(args.out, "w") as f:
                json.dump(data, f, indent=1)
            return data
        # the file is rewritten after each part: a long run keeps what it did
        facts, version = compute(args.jobs, log=lambda s: print(s, file=sys.stderr),
                                 partial=lambda facts: write(dedupe(facts)))
        data = write(facts, version, complete=True)
    print(f"Triton {data['triton']}, {data['target']}: {len(data['facts'])} variants")
    print(table(data["facts"], args.variants))


if __name__ == "__main__":
    main()
