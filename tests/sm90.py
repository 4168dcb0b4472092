"""Static facts of the sm_90 compile: what an engineer tuning Triton kernels reads off the cubin.

The compile checks (tests/test_kernels_standalone.py, tests/test_optim.py, tests/test_fusion.py)
compile every kernel variant the suite asks for to an sm_90 cubin in subprocesses, with no GPU (a
target-only driver: tests/sm90_compile.py, the subprocess's side). Each compiled kernel is handed
to ``collect``; ``finish`` then reads, with the tools Triton ships (triton/backends/nvidia/bin):

- ``cuobjdump --dump-resource-usage``: registers per thread (REG), the call stack (STACK) and
  local memory (LOCAL, bytes per thread: spills or local arrays), static shared memory;
- ``nvdisasm`` of the SASS: the widest global load and store (LDG.E.128 is 16 bytes a thread),
  local loads/stores (LDL/STL: spills), the tensor-core instructions (HGMMA: Hopper's warpgroup
  MMA, HMMA: the Ampere-style warp MMA, DMMA: float64, IMMA: integers), async copies (LDGSTS,
  the cp.async of pipelined loops; UTMALDG: TMA);
- Triton's own metadata: dynamic shared memory (``shared``), num_warps, num_stages;

and computes the theoretical occupancy on an H100 (``occupancy``). The facts of a part go to a
JSON file (the path in TRITENSOR_COMPILE_FACTS); the parent checks them (``problems``) and
bench/static.py tabulates them. Disassembling is one nvdisasm call per part: the kernels' code
sections are concatenated into one raw instruction stream (nvdisasm's fixed start-up, ~0.4 s,
would otherwise cost minutes over ~1000 kernels).

Nothing here is measured: these are facts of the compiled code, not timings.
"""
import json
import os
import re
import struct
import subprocess
import tempfile

# --------------------------------------------------------------------------- H100 occupancy
# sm_90's per-SM limits (CUDA C Programming Guide, "Technical Specifications per Compute
# Capability"; the CUDA occupancy calculator's table for 9.0)
H100 = dict(
    regs_per_sm=65536, max_regs_per_thread=255, reg_alloc_unit=256,   # registers, allocated per warp
    warp_alloc_granularity=4,                                        # warps get registers in fours
    smem_per_sm=233472, max_smem_per_block=232448,                   # 228 KB per SM, 227 KB a block
    smem_reserved_per_block=1024, smem_alloc_unit=128,               # the runtime's 1 KB per block
    max_threads_per_sm=2048, max_warps_per_sm=64, max_blocks_per_sm=32, warp_size=32,
)


def _ceil_to(x, unit):
    return -(-x // unit) * unit


def occupancy(regs, num_warps, shared=0, limits=H100):
    """The theoretical occupancy of a kernel on one SM, as the CUDA occupancy calculator computes it.

    ``regs``: registers per thread; ``num_warps``: warps per block (Triton's num_warps times
    num_ctas); ``shared``: shared memory per block in bytes (static + dynamic). Each limit gives a
    number of resident blocks per SM:
      warps:     max_warps_per_sm // num_warps (and at most max_blocks_per_sm blocks);
      registers: a warp takes ceil(regs * 32, 256) registers, and warps are given registers in
                 groups of 4: floor(floor(65536 / per_warp) / 4) * 4 warps, divided by num_warps;
      shared:    a block takes ceil(shared + 1 KB reserved, 128) bytes of the SM's 228 KB.
    Returns {"blocks", "warps" (resident per SM), "occupancy" (warps / 64), "limiter"}; a kernel
    that cannot launch at all (more than 255 registers, more than 227 KB of shared memory) has
    0 blocks and the limiter that stops it."""
    if num_warps <= 0:
        raise ValueError("num_warps must be positive")
    by = {"warps": min(limits["max_warps_per_sm"] // num_warps, limits["max_blocks_per_sm"])}
    if regs > limits["max_regs_per_thread"]:
        by["registers"] = 0
    elif regs > 0:
        per_warp = _ceil_to(regs * limits["warp_size"], limits["reg_alloc_unit"])
        warps = limits["regs_per_sm"] // per_warp
        warps -= warps % limits["warp_alloc_granularity"]
        by["registers"] = warps // num_warps
    if shared > limits["max_smem_per_block"]:
        by["shared"] = 0
    elif shared > 0:
        by["shared"] = limits["smem_per_sm"] // _ceil_to(shared + limits["smem_reserved_per_block"],
                                                          limits["smem_alloc_unit"])
    limiter = min(by, key=lambda k: (by[k], k != "warps"))   # ties: the warps, then alphabetical
    blocks = by[limiter]
    return {"blocks": blocks, "warps": blocks * num_warps,
            "occupancy": blocks * num_warps / limits["max_warps_per_sm"], "limiter": limiter}


# --------------------------------------------------------------------------- the cubin (ELF)
def text_sections(cubin):
    """{function name: its machine code} from a cubin's ``.text.<function>`` sections (ELF64)."""
    if cubin[:4] != b"\x7fELF" or cubin[4] != 2:
        raise ValueError("not an ELF64 cubin")
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)

    def header(i):   # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size
        return struct.unpack_from("<IIQQQQ", cubin, shoff + i * shentsize)

    names = header(shstrndx)[4]
    code = {}
    for i in range(shnum):
        name, _, _, _, offset, size = header(i)
        name = cubin[names + name:cubin.index(b"\0", names + name)].decode()
        if name.startswith(".text."):
            code[name[len(".text."):]] = cubin[offset:offset + size]
    return code


_RESOURCE = re.compile(r"(\w+)(?:\[\d+\])?:(\d+)")


def parse_resource_usage(text):
    """``cuobjdump --dump-resource-usage`` output -> {function: {"REG": n, "STACK": n, ...}}."""
    usage, function = {}, None
    for line in text.splitlines():
        m = re.match(r"\s*Function (\S+):", line)
        if m:
            function = m.group(1)
            usage[function] = {}
        elif function is not None and "REG:" in line:
            usage[function].update((k, int(v)) for k, v in _RESOURCE.findall(line))
    return usage


# --------------------------------------------------------------------------- the SASS
_INSTR = re.compile(r"/\*([0-9a-f]+)\*/\s+(?:@!?U?P[T\d]+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)")
_WIDTH = {"128": 128, "64": 64, "U8": 8, "S8": 8, "U16": 16, "S16": 16}
TENSOR_CORE = ("HGMMA", "HMMA", "DMMA", "IMMA", "QGMMA", "IGMMA", "BGMMA")


def access_bits(opcode):
    """The bits a thread moves in one LDG/STG (``LDG.E.128`` 128, ``LDG.E.64`` 64, ``LDG.E.U8`` 8;
    a plain ``LDG.E`` 32)."""
    for part in opcode.split(".")[1:]:
        if part in _WIDTH:
            return _WIDTH[part]
    return 32


def sass_facts(lines):
    """Facts of one function's SASS (nvdisasm's lines): instruction count, the widest global load
    and store in bits (0: none), local loads/stores (spills), tensor-core and async-copy counts."""
    facts = {"instructions": 0, "ldg_bits": 0, "stg_bits": 0, "ldg": {}, "stg": {}, "LDL": 0, "STL": 0,
             "tensor_core": {}, "LDGSTS": 0, "UTMALDG": 0, "BAR": 0, "CALL": 0}
    for line in lines:
        m = _INSTR.search(line)
        if not m:
            continue
        opcode = m.group(2)
        base = opcode.split(".")[0]
        facts["instructions"] += 1
        if base in ("LDG", "STG"):
            bits = access_bits(opcode)
            key = base.lower()
            facts[key + "_bits"] = max(facts[key + "_bits"], bits)
            facts[key][str(bits)] = facts[key].get(str(bits), 0) + 1
        elif base in ("LDL", "STL", "LDGSTS", "UTMALDG", "BAR", "CALL"):
            facts[base] += 1
        elif base in TENSOR_CORE:
            facts["tensor_core"][base] = facts["tensor_core"].get(base, 0) + 1
    return facts


def split_disassembly(text, spans):
    """nvdisasm's raw-mode listing of concatenated code, cut back into the functions' lines by
    address: ``spans`` is [(key, start, end)] in bytes."""
    out = {key: [] for key, _, _ in spans}
    bounds = sorted((start, end, key) for key, start, end in spans)
    i = 0
    for line in text.splitlines():
        m = re.search(r"/\*([0-9a-f]{4,})\*/", line)
        if not m:
            continue
        address = int(m.group(1), 16)
        while i < len(bounds) and address >= bounds[i][1]:
            i += 1
        if i < len(bounds) and bounds[i][0] <= address:
            out[bounds[i][2]].append(line)
    return out


# --------------------------------------------------------------------------- the variant's name
def _render(value):
    name = getattr(value, "__name__", None)      # a jitted FN
    if name is not None and not isinstance(value, type):
        return name
    if isinstance(value, tuple):
        return "(" + ",".join(_render(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return str(value)


def variant_of(compiled):
    """(constexprs, pointer dtypes) of a compiled kernel, both {parameter: text}: what tells its
    variants apart (the runtime scalars and sizes do not change the code, except through Triton's
    divisibility specialization, shown in the facts as ``divisible16``)."""
    src = compiled.src
    constants = {}
    for path, value in src.constants.items():
        constants.setdefault(path[0], []).append((path[1:], value))
    constexprs, dtypes = {}, {}
    for i, (name, kind) in enumerate(src.signature.items()):
        if isinstance(kind, str) and kind.startswith("*"):
            dtypes[name] = kind[1:]
        elif i in constants and kind == "constexpr":
            constexprs[name] = _render(dict(constants[i]).get(()))
        elif i in constants and isinstance(kind, tuple):   # a tuple argument: its constant elements
            known = {path[0]: value for path, value in constants[i] if len(path) == 1}
            constexprs[name] = "(" + ",".join(_render(known[j]) if j in known else "_" for j in range(len(kind))) + \
                ("," if len(kind) == 1 else "") + ")"
    return constexprs, dtypes


def variant_key(kernel, constexprs, dtypes, num_warps=None, num_stages=None):
    """``kernel[CONSTEXPR=value, ..., pointer:dtype, ..., warps=w, stages=s]``."""
    launch = [] if num_warps is None else [f"warps={num_warps}", f"stages={num_stages}"]
    return kernel + "[" + ", ".join([f"{k}={v}" for k, v in constexprs.items()] +
                                    [f"{k}:{v}" for k, v in dtypes.items()] + launch) + "]"


def _divisible16(compiled):
    """How many arguments Triton specialised as divisible by 16 (pointers: 16-byte aligned; sizes
    and strides: multiples of 16), the facts its vectorisation rests on."""
    attrs = getattr(compiled.src, "attrs", None) or {}
    return sum(1 for v in attrs.values() if any(a and a[0] == "tt.divisibility" and a[1] == 16 for a in v))


# --------------------------------------------------------------------------- in the compile subprocess
_COLLECTED = {}     # metadata hash -> entry (a variant compiled twice is one entry)
_ORDER = []
_SINCE_MARK = []    # the entries compiled since the last mark() / expect()


def launch_site():
    """Where the compile script launched the kernel being compiled: "<script>:<line>"."""
    import sys
    frame, line = sys._getframe(1), None
    while frame is not None:       # the outermost frame of the script: its module level
        if frame.f_code.co_filename == "<string>":
            line = frame.f_lineno
        frame = frame.f_back
    return None if line is None else f"script:{line}"


def collect(compiled, launch=None):
    """Keep a compiled kernel for ``finish`` (once per variant)."""
    key = compiled.metadata.hash
    if key not in _COLLECTED:
        _COLLECTED[key] = {"compiled": compiled, "launch": launch, "expect": []}
        _ORDER.append(key)
    _SINCE_MARK.append(_COLLECTED[key])
    return _COLLECTED[key]


def mark():
    """Start a new group of launches for ``expect``."""
    _SINCE_MARK.clear()


def expect(*what):
    """Every kernel compiled (in this part) since the last mark()/expect() must show ``what``
    (keys of _EXPECT: "ldg128", "stg128", "mma", "hgmma", "dmma"); the parent checks it."""
    unknown = set(what) - set(_EXPECT)
    if unknown:
        raise ValueError(f"unknown expectations {sorted(unknown)}")
    for entry in _SINCE_MARK:
        entry["expect"].extend(w for w in what if w not in entry["expect"])
    mark()


def tools_dir():
    import triton.backends.nvidia as nvidia
    return os.path.join(os.path.dirname(nvidia.__file__), "bin")


def analyse(entries, tools=None):
    """The facts of compiled kernels: [{"kernel", "variant", ... }] (see the module docstring)."""
    tools = tools or tools_dir()
    facts, spans, code, offset = [], [], [], 0
    with tempfile.TemporaryDirectory(prefix="sm90_") as scratch:
        for n, entry in enumerate(entries):
            compiled = entry["compiled"]
            cubin = compiled.asm["cubin"]
            path = os.path.join(scratch, f"{n}.cubin")
            with open(path, "wb") as f:
                f.write(cubin)
            usage = parse_resource_usage(subprocess.run(
                [os.path.join(tools, "cuobjdump"), "--dump-resource-usage", path],
                capture_output=True, text=True, check=True).stdout)
            md = compiled.metadata
            name = md.name
            constexprs, dtypes = variant_of(compiled)
            res = usage.get(name, {})
            shared = int(getattr(md, "shared", 0) or 0) + res.get("SHARED", 0)
            warps = md.num_warps * getattr(md, "num_ctas", 1)
            fact = {"kernel": name, "module": getattr(compiled.src.fn, "__module__", ""),
                    "variant": variant_key(name, constexprs, dtypes, md.num_warps, md.num_stages),
                    "constexprs": constexprs, "dtypes": dtypes, "divisible16": _divisible16(compiled),
                    "num_warps": md.num_warps, "num_stages": md.num_stages,
                    "regs": res.get("REG", 0), "stack": res.get("STACK", 0), "local": res.get("LOCAL", 0),
                    "shared": shared, "launch": entry["launch"], "expect": entry["expect"],
                    "fp64_dot_kwidth": fp64_dot_kwidth(compiled.asm.get("ttgir", ""))}
            fact.update(occupancy(fact["regs"], warps, shared))
            fact.update(sass_facts([]))     # (replaced below by the function's own)
            facts.append(fact)
            for function, text in text_sections(cubin).items():
                if function == name:
                    spans.append((n, offset, offset + len(text)))
                    code.append(text)
                    offset += len(text)
        raw = os.path.join(scratch, "code.bin")
        with open(raw, "wb") as f:
            f.write(b"".join(code))
        listing = subprocess.run([os.path.join(tools, "nvdisasm"), "-b", "SM90a", "-ndf", raw],
                                 capture_output=True, text=True, check=True).stdout if code else ""
    for n, lines in split_disassembly(listing, spans).items():
        facts[n].update(sass_facts(lines))
    return facts


def finish(path=None):
    """Analyse every collected kernel and write the facts to ``path`` (default: the file named by
    TRITENSOR_COMPILE_FACTS; nothing when neither is set)."""
    path = path or os.environ.get("TRITENSOR_COMPILE_FACTS")
    if not path:
        return []
    facts = analyse([_COLLECTED[k] for k in _ORDER])
    with open(path, "w") as f:
        json.dump(facts, f, indent=1)
    return facts


# --------------------------------------------------------------------------- the compile subprocess
def has_compiler():
    """None when this Triton can compile for sm_90 here, else why not (a pytest skip reason)."""
    try:
        import triton.backends.nvidia  # noqa: F401
    except ImportError:
        return "this Triton build has no NVIDIA backend"
    if not os.path.exists(os.path.join(tools_dir(), "ptxas")):
        return "this Triton build has no bundled ptxas"
    return None


def run_compile(script, facts_path, cache_dir, env_extra=(), timeout=600, input=None):
    """Run a compile script (its launches compiled, not run, with a target-only driver: see
    tests/sm90_compile.py) in a fresh process, ``input`` on its stdin; the facts of its kernels go
    to ``facts_path``. TRITENSOR_COMPILE_PYTHON names another interpreter (with tritensor
    installed) whose Triton compiles instead, e.g. a venv with triton==3.6.0, the lowest the
    package accepts (the GPU machines' version)."""
    import sys
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "TRITENSOR_EMULATE_CUDA")}
    env["TRITON_CACHE_DIR"] = str(cache_dir)
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    env["TRITENSOR_SM90_TESTS"] = os.path.dirname(os.path.abspath(__file__))
    env["TRITENSOR_COMPILE_FACTS"] = str(facts_path)
    env.update(env_extra)
    python = os.environ.get("TRITENSOR_COMPILE_PYTHON", sys.executable)
    return subprocess.run([python, "-c", script], env=env, capture_output=True, text=True, timeout=timeout,
                          input=input)


_COUNTS = re.compile(r"compiled (\d+) of (\d+) variants in (\d+) launches, part (\d+) of (\d+)")


def compiled_counts(stdout):
    """The counts line of a compile script (sm90_compile.finish): {"compiled", "variants",
    "launches", "part", "parts"}, or None when it never printed it."""
    found = _COUNTS.findall(stdout)
    if not found:
        return None
    return dict(zip(("compiled", "variants", "launches", "part", "parts"), map(int, found[-1])))


def check_compile(script, where, env_extra=(), input=None):
    """Run a compile script (``run_compile``, its facts in the directory ``where``) and assert
    what every compile check asserts: it ran to its end, compiled something, and the static facts
    of its variants show none of ``problems``. Returns (the counts, the facts). Triton's cache of
    the compile (IRs, PTX and cubins: ~0.3 MB a variant, ~50 MB a part) is removed afterwards."""
    import shutil
    os.makedirs(where, exist_ok=True)
    facts_path = os.path.join(str(where), "facts.json")
    cache = os.path.join(str(where), "triton_cache")
    try:
        done = run_compile(script, facts_path, cache, env_extra, input=input)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-4000:]
    counts = compiled_counts(done.stdout)
    assert counts is not None and counts["compiled"] > 0, done.stdout[-4000:]
    with open(facts_path) as f:
        facts = json.load(f)
    assert len(facts) > 0
    found = problems(facts)
    assert not found, "\n".join(found)
    return counts, facts


# --------------------------------------------------------------------------- what the suite checks
# Variants allowed to use local memory: (kernel, a text every such variant's name contains, the
# reason); everything else that spills fails the compile check.
_NOT_FIXED = " Not fixed here (the kernel's family owns its tiles); listed for tuning."
SPILL_EXCEPTIONS = [
    ("conv_input_grad_kernel", "", "every K step rebuilds the gathered gy tile's int64 coordinates (o_d, o_h, "
     "o_w: three [BLOCK_M, BLOCK_K] int64 tiles), its mask and addresses, with 64-bit divisions, next to the "
     "accumulator tile: 1.7-3.6 KB of stack at 255 registers, the worst in the suite. A fix: int32 "
     "coordinates within a tile, the tap decomposition hoisted out of the K loop, smaller tiles." + _NOT_FIXED),
    ("conv_forward_kernel", "", "the forward's gathered x tile: int64 coordinates, mask and addresses of a "
     "[BLOCK_M, BLOCK_K] tile rebuilt each K step beside the accumulator (2.2 KB of stack for TF32 "
     "128x128, 0.9 KB for float64)." + _NOT_FIXED),
    ("conv_weight_grad_kernel", "", "the same gathered-tile index arithmetic (the x tile's coordinates per "
     "K step, in int64) next to a 128x128 (16-bit) / 64x64 (float32 IEEE) accumulator." + _NOT_FIXED),
    ("matmul_kernel", "BLOCK_M=128, BLOCK_N=256", "the 128x256 tile (128 float32 accumulators a thread) on "
     "the suite's odd problem (K = 70 halves: 140-byte rows, not 16-byte aligned) loads 2 bytes at a time "
     "through registers instead of cp.async/TMA; the autotuner times it against smaller tiles."),
    ("dist_forward_kernel", "PRECISION=ieee", "IEEE float32 / float64 Gram tiles of 64x64 outputs (FMA on "
     "CUDA cores: every output a register) plus the norms." + _NOT_FIXED),
    ("dist_backward_kernel", "", "the [BLOCK_I, BLOCK_J, BLOCK_D] differences of the direct p-norm path and "
     "the IEEE Gram tiles hold more values a thread than the registers." + _NOT_FIXED),
    ("jacobi_kernel", "", "one program holds a whole 32x32 block of the matrix, its rotations and V in "
     "registers (the in-register Jacobi eigh/svd of small matrices)." + _NOT_FIXED),
    ("householder_kernel", "", "one program holds a whole 64x64 float64 matrix in registers (the small-"
     "matrix path of Q's product)." + _NOT_FIXED),
    ("lu_kernel", "A:fp64", "one program holds a whole 64x64 float64 matrix in registers (the small-"
     "matrix LU)." + _NOT_FIXED),
    ("layer_norm_bwd_kernel", "COMPUTE=fp64", "the one-tile path keeps a [4, 1024] float64 row tile of x, "
     "grad and x-hat live (16 doubles each a thread) for the two row sums." + _NOT_FIXED),
    ("binary_kernel", "FN=igamma", "igamma/igammac's series and continued fraction (float32, in a "
     "1024-element block: 8 values a thread) keep many terms live." + _NOT_FIXED),
    ("binary_kernel", "FN=standard_gamma_grad", "the implicit gradient of gamma samples (torch's "
     "_standard_gamma_grad: its small-x series, large-alpha asymptotic and rational-fit branches, in a "
     "1024-element block: 8 values a thread) keeps many terms live." + _NOT_FIXED),
    ("binary_kernel", "FN=chebyshev_polynomial_", "the Chebyshev recurrences' data-dependent loop over the "
     "degree in float64 (8 values a thread of a 1024-element block)." + _NOT_FIXED),
    ("tiled_kernel", "FN=dirichlet_grad", "the Dirichlet reparameterisation gradient's series and "
     "asymptotic branches on an [8, 64] tile of transposed operands." + _NOT_FIXED),
    ("tiled_kernel", "FN=pow", "pow on a [64, 64] tile of transposed operands (32 values a thread): the "
     "integer-exponent loop keeps base, result and exponent tiles live." + _NOT_FIXED),
    ("attention_backward_dkdv", "", "two fp32 accumulators (dK, dV: [BLOCK_N, BLOCK_D] each) next to the "
     "recomputed P and dS tiles ([BLOCK_M, BLOCK_N]) and the loaded Q/dO tiles: past 255 registers at 4 "
     "warps (64 B of stack for 16-bit, head dim 64), worst in IEEE float32 (no tensor cores: 2.3 KB); "
     "8 warps or BLOCK_M = 32 would halve the per-thread tiles." + _NOT_FIXED),
    ("attention_backward_dq", "", "the dQ accumulator next to the recomputed P and dS tiles and the K/V "
     "tiles, in float64 or at head dim 256 (BLOCK_D = 256: 32x256 tiles)." + _NOT_FIXED),
    ("attention_forward_kernel", "ACC=fp32, PRECISION=ieee, WIDEN=False, Q:fp32", "IEEE float32 tiles (no "
     "tensor cores: the 64x64 score tile and the 64x64 output accumulator are CUDA-core FMA registers, "
     "1.5 KB of stack at 4 warps)." + _NOT_FIXED),
    ("attention_forward_kernel", "DROPOUT=True, BLOCK_M=128, BLOCK_N=64, BLOCK_D=128", "head dim 128 with "
     "dropout: the Philox state and keep mask of the [128, 64] score tile beside the [128, 128] output "
     "accumulator (512 B of stack at 8 warps)." + _NOT_FIXED),
    ("attention_forward_kernel", "BLOCK_M=128, BLOCK_N=64, BLOCK_D=16,", "16-bit operands with a mask at head dim "
     "16 (the tests' head dims): the [128, 64] float32 score tile and the mask tile at 4 warps, 3 stages (1.3-1.7 KB "
     "of stack with a float16 or bool mask, 0.2 KB with a float32 one; head dim 64 with a float16 mask: 0.2 KB). "
     "Found when these launches joined the check; the GPU ran them correctly. 8 warps for masked launches, or "
     "fewer stages, would be the fix to time." + _NOT_FIXED),
    ("random_f64_kernel", "KIND=4", "two Philox words a float64 and the float64 transform (log) of a "
     "1024-element block: 8 values a thread." + _NOT_FIXED),
]


def spill_excused(fact):
    return any(fact["kernel"] == kernel and part in fact["variant"] for kernel, part, _ in SPILL_EXCEPTIONS)


# Contiguous launches that do not move 16 bytes a thread everywhere, and why (the compile check
# expects LDG.E.128 / STG.E.128 of the others: see expect(...) in its script).
VECTOR_EXCEPTIONS = {
    "1-byte dtypes (bool, int8, uint8)":
        "a 1024-element block over 128 threads gives a thread 8 elements: LDG.E.64; the warp's "
        "accesses are still whole 32-byte sectors (coalesced), only the instruction count doubles",
    "bool outputs of comparisons (and where's bool condition)": "the same 8 elements a thread: STG.E.64",
    "reduce_kernel, kept dim contiguous (reducing dim 0), its store":
        "the reduction's result has tl.sum's slice layout, 2 outputs a thread (STG.E.64 for 4-byte "
        "dtypes, 32 bits for 2-byte ones); still coalesced, and the store is 1/R of the traffic (R: "
        "the reduced length); a layout conversion for 16-byte stores costs a shared-memory trip",
    "reduce_kernel / softmax / norms, reducing the contiguous dim, their per-row outputs":
        "one value per row (mean, rstd, the reduced value): nothing to vectorise",
}


def register_cap(num_warps, limits=H100):
    """The registers a thread may have: ptxas fits num_warps * 32 threads into the register file
    (Triton passes the block size as .maxntid), in allocation units, and at most 255."""
    per_thread = limits["regs_per_sm"] // (num_warps * limits["warp_size"])
    return min(limits["max_regs_per_thread"], per_thread - per_thread % 8)


def uses_local_memory(fact):
    """A stack frame, local memory, or local loads/stores (off-chip, through L1)."""
    return bool(fact["local"] or fact["stack"] or fact.get("LDL") or fact.get("STL"))


# A float64 MMA operand whose layout packs more than one element along K (kWidth > 1). Triton
# gives an MMAv2 operand kWidth = 32 / (the narrowest load its values derive from, through
# elementwise ops: AccelerateMatmul's computeOrigBitWidth), so a float64 operand computed from a
# 1-byte mask load gets kWidth 4. Triton 3.9 lowers that; Triton 3.6 (the GPU machines' version,
# the lowest the package accepts) aborts the compile ("Currently fp64 don't support largeK MMA",
# MMAv2.cpp): the first real-GPU run failed on float64 attention with a bool mask that way, while
# this check, run with 3.9, compiled it. Read off the TTGIR, so any Triton shows it.
_FP64_DOT_OPERAND = re.compile(r"xf64, #ttg\.dot_op<\{opIdx = \d+, parent = #mma\w*, kWidth = (\d+)\}>")


def fp64_dot_kwidth(ttgir):
    """The widest kWidth of a float64 MMA operand in a kernel's TTGIR (0: none)."""
    return max((int(k) for k in _FP64_DOT_OPERAND.findall(ttgir)), default=0)


def spills(fact):
    """Register spills: local memory in use by a variant whose registers reached the cap (ptxas
    ran out). Below the cap, a stack frame is a called subroutine's (CALL: 64-bit integer
    division, libdevice's sin/cos Payne-Hanek reduction keeps a small array there, float64
    division's slow path), shown as "frame" in bench/static.py's table, not a spill."""
    return uses_local_memory(fact) and fact["regs"] >= register_cap(fact["num_warps"]) - 8


_EXPECT = {
    "ldg128": lambda f: f["ldg_bits"] >= 128, "stg128": lambda f: f["stg_bits"] >= 128,
    "mma": lambda f: bool(set(f["tensor_core"]) & {"HGMMA", "HMMA"}),
    "hgmma": lambda f: "HGMMA" in f["tensor_core"], "dmma": lambda f: "DMMA" in f["tensor_core"],
}


def problems(facts):
    """What the suite fails on: a variant that spills (unless SPILL_EXCEPTIONS lists it),
    a variant that misses what its launch expected (``expect``: 16-byte loads/stores, HGMMA ...),
    a float64 MMA operand Triton 3.6 cannot lower (``fp64_dot_kwidth``)."""
    found = []
    for f in facts:
        if f.get("fp64_dot_kwidth", 0) > 1:
            found.append(f"{f['variant']} ({f['launch']}): a float64 MMA operand with kWidth {f['fp64_dot_kwidth']} "
                         "(derived from a load narrower than 4 bytes): Triton 3.6 fails to compile it "
                         "(\"Currently fp64 don't support largeK MMA\")")
        if spills(f) and not spill_excused(f):
            found.append(f"{f['variant']} spills: LOCAL {f['local']} B, STACK {f['stack']} B, "
                         f"{f.get('LDL', 0)} LDL / {f.get('STL', 0)} STL")
        for e in f.get("expect", []):
            if not _EXPECT[e](f):
                found.append(f"{f['variant']} ({f['launch']}): expected {e}; widest LDG {f['ldg_bits']} bits, "
                             f"STG {f['stg_bits']} bits, tensor cores {f['tensor_core'] or 'none'}")
    return found
