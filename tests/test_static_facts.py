"""tests/sm90.py, the static facts read off the sm_90 cubins: the H100 occupancy formula against
hand-computed cases, the cubin (ELF) and tool-output parsers against hand-built inputs and a
committed SASS listing (tests/data/sm90_sass_sample.txt), the suite's checks (spills, expected
16-byte accesses and tensor-core instructions). The compile itself runs in
tests/test_kernels_standalone.py::test_kernels_compile_for_sm90."""
import os
import struct
from types import SimpleNamespace

import pytest

import sm90

DATA = os.path.join(os.path.dirname(__file__), "data")


# --------------------------------------------------------------------------- occupancy
@pytest.mark.parametrize("regs,warps,shared,blocks,limiter", [
    # 26 regs: 832 -> 1024 a warp, 64 warps fit; the 64-warp limit ties: 16 blocks of 4 warps
    (26, 4, 0, 16, "warps"),
    # 255 regs: 8160 -> 8192 a warp, 8 warps: one 8-warp block (smem would allow 4: 51200 B each)
    (255, 8, 50176, 1, "registers"),
    # 168 regs: 5376 a warp, 65536 // 5376 = 12 warps (a multiple of 4): three 4-warp blocks
    (168, 4, 0, 3, "registers"),
    # 72 regs: 2304 a warp, 28 warps, three 8-warp blocks
    (72, 8, 0, 3, "registers"),
    # 33 regs: 1056 -> 1280 a warp, 51 warps -> 48 (groups of 4): twelve 4-warp blocks
    (33, 4, 0, 12, "registers"),
    # 100 KB of shared memory + the 1 KB reserve = 103424 B: 2 blocks in 233472 B
    (40, 4, 102400, 2, "shared"),
    # 48 KB + 1 KB: 4 blocks
    (32, 4, 49152, 4, "shared"),
    # one-warp blocks: the 32-blocks-per-SM limit, half the warps
    (32, 1, 0, 32, "warps"),
    # 16 warps: 4 blocks
    (16, 16, 0, 4, "warps"),
    # unlaunchable: past 255 registers, past 227 KB of shared memory
    (256, 4, 0, 0, "registers"),
    (32, 4, 232449, 0, "shared"),
])
def test_occupancy_hand_computed(regs, warps, shared, blocks, limiter):
    got = sm90.occupancy(regs, warps, shared)
    assert got == {"blocks": blocks, "warps": blocks * warps, "occupancy": blocks * warps / 64, "limiter": limiter}


def test_occupancy_rejects_no_warps():
    with pytest.raises(ValueError):
        sm90.occupancy(32, 0)


# --------------------------------------------------------------------------- the cubin and the tools' output
def _elf(sections):
    """A minimal ELF64: a null section, .shstrtab, then ``sections`` ({name: bytes})."""
    names = b"\0.shstrtab\0" + b"".join(n.encode() + b"\0" for n in sections)
    blobs = [names] + list(sections.values())
    data, offsets = b"", []
    for b in blobs:
        offsets.append(64 + len(data))
        data += b
    shoff = 64 + len(data)
    header = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    header += struct.pack("<HHIQQQIHHHHHH", 2, 190, 1, 0, 0, shoff, 0, 64, 0, 0, 64, len(blobs) + 1, 1)
    shdrs = bytes(64)                                            # SHN_UNDEF
    name_at = [1] + [names.index(n.encode() + b"\0") for n in sections]
    for i, blob in enumerate(blobs):
        shdrs += struct.pack("<IIQQQQIIQQ", name_at[i], 3 if i == 0 else 1, 0, 0, offsets[i], len(blob), 0, 0, 1, 0)
    return header + data + shdrs


def test_text_sections_of_a_hand_built_elf():
    code = bytes(range(32))
    elf = _elf({".nv.info.k": b"\x04\x2f\x08\x00", ".text.k": code, ".text.helper": b"\xff" * 16})
    assert sm90.text_sections(elf) == {"k": code, "helper": b"\xff" * 16}
    with pytest.raises(ValueError):
        sm90.text_sections(b"\x7fELF\x01" + bytes(60))               # ELF32


def test_parse_resource_usage():
    text = """
Resource usage:
 Common:
  GLOBAL:0
 Function matmul_kernel:
  REG:255 STACK:432 SHARED:1024 LOCAL:0 CONSTANT[0]:640 TEXTURE:0 SURFACE:0 SAMPLER:0
 Function binary_kernel:
  REG:26 STACK:0 SHARED:0 LOCAL:8 CONSTANT[0]:592 TEXTURE:0 SURFACE:0 SAMPLER:0
"""
    usage = sm90.parse_resource_usage(text)
    assert usage["matmul_kernel"]["REG"] == 255 and usage["matmul_kernel"]["STACK"] == 432
    assert usage["matmul_kernel"]["SHARED"] == 1024 and usage["matmul_kernel"]["CONSTANT"] == 640
    assert usage["binary_kernel"] == {"REG": 26, "STACK": 0, "SHARED": 0, "LOCAL": 8, "CONSTANT": 592,
                                      "TEXTURE": 0, "SURFACE": 0, "SAMPLER": 0}


@pytest.mark.parametrize("opcode,bits", [("LDG.E.128", 128), ("LDG.E.64.CONSTANT", 64), ("LDG.E", 32),
                                         ("LDG.E.U16", 16), ("STG.E.U8", 8), ("LDG.E.S8.CONSTANT", 8),
                                         ("STG.E.128", 128), ("LDG.E.EL", 32)])
def test_access_bits(opcode, bits):
    assert sm90.access_bits(opcode) == bits


def _sample(part):
    with open(os.path.join(DATA, "sm90_sass_sample.txt")) as f:
        text = f.read()
    first, second = text.split("# Part 2")
    return (first if part == 1 else second).splitlines()


def test_sass_facts_of_a_vectorised_pointwise_kernel():
    """binary_kernel (float32 add, contiguous): counted by hand in the listing: 56 instructions,
    4 LDG.E.128 (two operands, two 16-byte vectors a thread each), 2 STG.E.128, nothing else."""
    facts = sm90.sass_facts(_sample(1))
    assert facts["instructions"] == 56
    assert (facts["ldg_bits"], facts["stg_bits"]) == (128, 128)
    assert facts["ldg"] == {"128": 4} and facts["stg"] == {"128": 2}
    assert facts["LDL"] == facts["STL"] == 0 and facts["tensor_core"] == {}


def test_sass_facts_of_a_spilling_matmul_excerpt():
    """The matmul excerpt: 13 LDG.E.U16 and 14 STG.E.U16 (16-bit: the rows are not 16-byte
    aligned), 10 LDL (two of them LDL.LU) and 16 STL (spills), one HGMMA, two BAR.SYNC."""
    facts = sm90.sass_facts(_sample(2))
    assert facts["ldg"] == {"16": 13} and facts["stg"] == {"16": 14}
    assert (facts["ldg_bits"], facts["stg_bits"]) == (16, 16)
    assert (facts["LDL"], facts["STL"], facts["BAR"]) == (10, 16, 2)
    assert facts["tensor_core"] == {"HGMMA": 1}


def test_split_disassembly_by_address():
    listing = "\n".join(f"        /*{a:04x}*/                   {op} ;" for a, op in
                        [(0x00, "LDG.E.128 R4, desc[UR4][R2.64]"), (0x10, "EXIT"),
                         (0x20, "@!P0 STG.E.64 desc[UR4][R2.64], R4"), (0x30, "HMMA.16816.F32.BF16 R4, R8, R12, R4"),
                         (0x40, "BRA 0x40")])
    parts = sm90.split_disassembly(listing, [("a", 0, 0x20), ("b", 0x20, 0x50)])
    a, b = sm90.sass_facts(parts["a"]), sm90.sass_facts(parts["b"])
    assert (a["instructions"], a["ldg_bits"], a["stg_bits"]) == (2, 128, 0)
    assert (b["instructions"], b["ldg_bits"], b["stg_bits"], b["tensor_core"]) == (3, 0, 64, {"HMMA": 1})


def test_variant_of_a_compiled_kernel():
    """The constexprs and pointer dtypes of binary_kernel's src (Triton 3.6 and 3.9 both key
    constants by argument path; tuple constexprs by (argument, element))."""
    add = SimpleNamespace(__name__="add")
    src = SimpleNamespace(
        signature={"out_ptr": "*fp32", "a_ptr": "*bf16", "n": "i32", "shape": ("i32",),
                   "out_strides": ("constexpr",), "FN": "constexpr", "BLOCK": "constexpr", "WIDE": "constexpr"},
        constants={(4, 0): 1, (5,): add, (6,): 1024, (7,): False})
    constexprs, dtypes = sm90.variant_of(SimpleNamespace(src=src))
    assert constexprs == {"out_strides": "(1,)", "FN": "add", "BLOCK": "1024", "WIDE": "False"}
    assert dtypes == {"out_ptr": "fp32", "a_ptr": "bf16"}
    assert sm90.variant_key("binary_kernel", constexprs, dtypes) == \
        "binary_kernel[out_strides=(1,), FN=add, BLOCK=1024, WIDE=False, out_ptr:fp32, a_ptr:bf16]"
    # a tuple argument with one element specialised (a unit stride) and one not
    src = SimpleNamespace(signature={"x_ptr": "*fp16", "strides": ("i32", "constexpr"), "RANK": "constexpr"},
                          constants={(1, 1): 1, (2,): 2})
    assert sm90.variant_of(SimpleNamespace(src=src)) == ({"strides": "(_,1)", "RANK": "2"}, {"x_ptr": "fp16"})
    assert sm90.variant_key("k", {"RANK": "2"}, {"x_ptr": "fp16"}, 8, 3) == "k[RANK=2, x_ptr:fp16, warps=8, stages=3]"


# --------------------------------------------------------------------------- the suite's checks
def test_register_cap():
    """65536 registers over the block's threads, in units of 8, at most 255."""
    assert [sm90.register_cap(w) for w in (1, 2, 4, 8, 16, 32)] == [255, 255, 255, 255, 128, 64]


def _fact(**kw):
    base = {"kernel": "k", "variant": "k[X=1]", "launch": "script:1", "local": 0, "stack": 0, "LDL": 0, "STL": 0,
            "regs": 255, "num_warps": 4,
            "ldg_bits": 128, "stg_bits": 128, "tensor_core": {}, "expect": []}
    base.update(kw)
    return base


def test_problems_flag_spills_and_missed_expectations(monkeypatch):
    assert sm90.problems([_fact(expect=["ldg128", "stg128"])]) == []
    for spilled in (dict(stack=432), dict(local=8), dict(STL=1)):
        assert len(sm90.problems([_fact(**spilled)])) == 1 and "spills" in sm90.problems([_fact(**spilled)])[0]
    # below the register cap, a stack frame is a subroutine's (a CALL's), not a spill
    assert sm90.problems([_fact(stack=32, LDL=4, STL=4, regs=96)]) == []
    assert len(sm90.problems([_fact(stack=32, regs=126, num_warps=16)])) == 1     # 16 warps: 128 at most
    monkeypatch.setattr(sm90, "SPILL_EXCEPTIONS", [("k", "X=1", "a listed reason")])
    assert sm90.problems([_fact(stack=432)]) == []
    assert len(sm90.problems([_fact(stack=432, variant="k[X=2]")])) == 1     # another variant of k
    assert len(sm90.problems([_fact(stack=432, kernel="j", variant="j[X=1]")])) == 1
    found = sm90.problems([_fact(ldg_bits=64, expect=["ldg128", "stg128"])])
    assert len(found) == 1 and "expected ldg128" in found[0]
    assert len(sm90.problems([_fact(expect=["hgmma"]), _fact(tensor_core={"HMMA": 4}, expect=["mma", "hgmma"])])) == 2
    assert sm90.problems([_fact(tensor_core={"DMMA": 2}, expect=["dmma"])]) == []


def test_expect_marks_the_kernels_compiled_since_the_last_mark():
    compiled = [SimpleNamespace(metadata=SimpleNamespace(hash=h)) for h in ("h1", "h2", "h3")]
    saved = dict(sm90._COLLECTED), list(sm90._ORDER)
    try:
        sm90.collect(compiled[0])
        sm90.mark()
        sm90.collect(compiled[1])
        sm90.collect(compiled[2])
        sm90.expect("ldg128")
        assert [sm90._COLLECTED[h]["expect"] for h in ("h1", "h2", "h3")] == [[], ["ldg128"], ["ldg128"]]
        with pytest.raises(ValueError):
            sm90.expect("ldg256")
    finally:
        sm90._COLLECTED.clear()
        sm90._COLLECTED.update(saved[0])
        sm90._ORDER[:] = saved[1]
        sm90.mark()


# --------------------------------------------------------------------------- bench/static.py's file and table
def test_bench_static_file_and_table(tmp_path):
    import json
    import sys
    sys.path.insert(0, os.path.dirname(os.path.dirname(DATA)))   # the repository root (bench/)
    from bench import static
    assert static.load_static_facts(str(tmp_path / "absent.json")) == {}
    facts = [_fact(kernel="k", variant="k[X=1]", regs=40, num_warps=4, shared=0, occupancy=1.0, ldg_bits=128,
                   stg_bits=64, divisible16=3),
             _fact(kernel="k", variant="k[X=2]", regs=255, num_warps=8, shared=2048, occupancy=0.125, stack=64,
                   ldg_bits=32, stg_bits=32, tensor_core={"HGMMA": 4}, divisible16=3),
             _fact(kernel="j", variant="j[Y=1]", regs=96, num_warps=4, shared=0, occupancy=0.5, stack=32,
                   divisible16=0)]
    # a variant compiled twice with different facts (Triton's alignment specialization) is kept twice
    facts.append(dict(facts[0], divisible16=1, ldg_bits=32))
    facts = static.dedupe(facts)
    assert [f["variant"] for f in facts] == ["k[X=1]", "k[X=1]#2", "k[X=2]", "j[Y=1]"]
    with open(tmp_path / "f.json", "w") as f:
        json.dump({"triton": "x", "target": "y", "facts": facts}, f)
    loaded = static.load_static_facts(str(tmp_path / "f.json"))
    assert loaded["k[X=2]"]["regs"] == 255 and loaded["k[X=1]#2"]["ldg_bits"] == 32
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in static.table(facts).splitlines()[2:]}
    # variants, regs max, spills (k[X=2]: 255 registers and a stack), frame (j: 96 registers and a
    # stack), smem max, occupancy range, LDG bits, STG bits, tensor cores
    assert rows["k"] == ["3", "255", "1", "0", "2.0 KB", "12%-100%", "32/128", "32/64", "HGMMA"]
    assert rows["j"] == ["1", "96", "0", "1", "0.0 KB", "50%", "128", "128", "-"]


def test_fp64_mma_operands_packed_along_k_are_flagged():
    """TTGIR lines of Triton 3.9's float64 attention forward with a bool mask (the probabilities
    derive from the 1-byte mask load: kWidth 4, which Triton 3.6 cannot lower) and without one."""
    masked = ("%p = ttg.convert_layout %a : tensor<32x32xf64, #mma> -> tensor<32x32xf64, #ttg.dot_op<{opIdx = 0, "
              "parent = #mma, kWidth = 4}>>\n%v = ttg.local_load %b : !ttg.memdesc<32x16xf64, #shared, #smem> -> "
              "tensor<32x16xf64, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 4}>>")
    plain = "tensor<32x16xf64, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 1}>>"
    half = "tensor<64x16xf16, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>"     # 16-bit: kWidth 2 is normal
    assert sm90.fp64_dot_kwidth(masked) == 4
    assert sm90.fp64_dot_kwidth(plain + "\n" + half) == 1
    assert sm90.fp64_dot_kwidth(half) == 0 and sm90.fp64_dot_kwidth("") == 0
    assert sm90.problems([_fact(fp64_dot_kwidth=1)]) == []
    found = sm90.problems([_fact(fp64_dot_kwidth=4)])
    assert len(found) == 1 and "largeK" in found[0]
