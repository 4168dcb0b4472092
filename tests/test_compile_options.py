"""Every compiled launch rounds as the NumPy reference and the emulated device do
(runtime/launch.py, "Rounding"): no a*b+c contracted into FMA, no float32 subnormals flushed in
libdevice. The first real-GPU run (an H200, Triton 3.6) showed both: floor(-1e-45) was -0.0 (torch:
-1.0), round(2.675f, decimals=2) was 2.67 (torch: 2.68) and a fused kernel differed from eager by an
ulp. No GPU is needed: the options are checked at the launch and in the PTX Triton compiles for
sm_90, where Triton's defaults give the instructions that caused those results.
"""
from __future__ import annotations

import json

import pytest

from tritensor.runtime import launch
from test_direct_launch import FakeKernel, args_of, META, direct, go  # noqa: F401  (fixture)


def test_every_compiled_launch_compiles_with_the_options(direct):  # noqa: F811
    k = FakeKernel()
    go(k, args_of())
    ((_, _, meta),) = k.slow_launches
    assert meta == {**META, "enable_fp_fusion": False, "enable_reflect_ftz": False}
    k = FakeKernel()
    go(k, args_of(), meta={**META, "enable_fp_fusion": True})     # a launch may still ask otherwise
    assert k.slow_launches[0][2]["enable_fp_fusion"] is True


_PTX_SCRIPT = r"""
import json, re
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from tritensor.kernels import elementwise as ew
from tritensor.runtime.launch import COMPILE_OPTIONS


@triton.jit
def floor_and_round(X, S, O, R):
    i = tl.arange(0, 128)
    x = tl.load(X + i)
    tl.store(O + i, ew.floor(x))
    tl.store(R + i, ew.round_decimals(x, tl.load(S + i)))


def instructions(options):
    src = ASTSource(fn=floor_and_round, signature={"X": "*fp32", "S": "*fp32", "O": "*fp32", "R": "*fp32"})
    ptx = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=options).asm["ptx"]
    return [line.split()[0] for line in ptx.splitlines()
            if re.match(r"\s+[a-z]", line) and not line.lstrip().startswith(("//", "."))]


# Triton 3.6's defaults, written out (3.9 warns that fusion's default will change)
DEFAULTS = {"enable_fp_fusion": True, "enable_reflect_ftz": True}
print(json.dumps({"default": instructions(DEFAULTS), "ours": instructions(COMPILE_OPTIONS)}))
"""


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """The PTX instructions of a kernel applying floor and round_decimals, compiled for sm_90 (no GPU:
    a fresh process without the interpreter) with Triton's default options and with tritensor's."""
    import sm90
    reason = sm90.has_compiler()
    if reason:
        pytest.skip(reason)
    d = tmp_path_factory.mktemp("ptx")
    (d / "ptx_check.py").write_text(_PTX_SCRIPT)     # a file: Triton reads the kernel's source
    done = sm90.run_compile(f"exec(compile(open({str(d / 'ptx_check.py')!r}).read(), "
                            f"{str(d / 'ptx_check.py')!r}, 'exec'))", d / "facts.json", d)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_compiled_code_neither_flushes_nor_contracts(compiled):
    # Triton's defaults: floor is libdevice's floorf with ftz (floor(-1e-45) was -0.0), and
    # round(x * scale)'s product, which feeds floor and a subtraction, is contracted into an FMA
    assert "cvt.rmi.ftz.f32.f32" in compiled["default"]
    assert [i for i in compiled["default"] if i.startswith("fma.")]
    # tritensor's: each operation rounded as written, subnormals kept
    assert "cvt.rmi.f32.f32" in compiled["ours"]
    assert not [i for i in compiled["ours"] if i.startswith("fma.") or ".ftz" in i]
