"""Compiled launches call the cached compiled kernel's launcher directly for a signature seen
before (runtime/launch.py, ``launch_compiled``); ``kernel[grid]`` does every first launch and
every launch the direct path cannot key.

No GPU is needed: the unit tests drive ``launch_compiled`` with a fake Triton kernel whose
``kernel[grid]`` records and hands back a fake compiled kernel; the last test compiles a real
kernel for sm_90 in a subprocess, with Triton's binary loader and C launcher replaced by
recorders, and checks that the direct path hands the launcher exactly what Triton's own
``JITFunction.run`` does.
"""
from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import textwrap

import pytest

import tritensor as tt
from test_dispatch_budget import BUDGET
from tritensor.runtime import launch
from tritensor.runtime.launch import KernelArg


class FakeCompiled:
    """What JITFunction.run returns: a launcher (``run``) plus the handles it is passed."""

    def __init__(self):
        self.function, self.packed_metadata = "function", "packed"
        self.calls = []
        self.metadata_calls = []

    def run(self, *args):
        self.calls.append(args)

    def launch_metadata(self, grid, stream, *args):
        self.metadata_calls.append((grid, stream, args))
        return "launch-metadata"


def _toy(x_ptr, y_ptr, n, shape, scale, flag, BLOCK, WIDE=False):
    """The parameter list of a Triton kernel (only its signature is read; BLOCK and WIDE are its
    constexprs, FakeKernel.constexprs)."""


class FakeKernel:
    """A JITFunction as launch_compiled sees it: signature, constexpr positions, kernel[grid]."""

    def __init__(self, compiled_factory=FakeCompiled):
        self.signature = inspect.signature(_toy)
        self.constexprs = [6, 7]
        self.pre_run_hooks = []
        self.slow_launches = []
        self.compiled = []
        self._factory = compiled_factory

    def __getitem__(self, grid):
        def run(*args, **meta):
            self.slow_launches.append((grid, args, meta))
            if not self.compiled:
                self.compiled.append(self._factory())
            return self.compiled[0]
        return run


F32 = tt.float32


def ptr(address, dtype=F32):
    return KernelArg(address, dtype, 0)


def args_of(x=4096, y=8192, n=1000, shape=(1000,), scale=0.5, flag=True, dtype=F32):
    return (ptr(x, dtype), ptr(y, dtype), n, shape, scale, flag)


META = {"BLOCK": 128, "num_warps": 4}


@pytest.fixture
def direct(monkeypatch):
    monkeypatch.setitem(launch._state, "direct", True)
    launch.clear_direct_launches()
    yield
    launch.clear_direct_launches()


def go(kernel, args, meta=META, device=0, grid=(8,), hooks=(None, None)):
    launch.launch_compiled(kernel, grid, args, dict(meta), device, stream=77, hooks=lambda: hooks)


def test_first_launch_is_tritons_then_the_cached_kernel_is_called_directly(direct):
    k = FakeKernel()
    go(k, args_of())
    assert len(k.slow_launches) == 1 and not k.compiled[0].calls
    a = args_of(x=4096 + 64, y=16, n=1002, scale=3.0, flag=False)     # same signature, new values
    go(k, a, grid=(8, 2))
    assert len(k.slow_launches) == 1
    (call,) = k.compiled[0].calls
    # JITFunction.run's launcher call: grid x/y/z, stream, function, packed metadata, launch
    # metadata, enter/exit hooks, then every parameter (constexprs and defaults included)
    assert call == (8, 2, 1, 77, "function", "packed", None, None, None) + a + (128, False)


def test_launch_metadata_is_asked_for_when_an_enter_hook_is_set(direct):
    k = FakeKernel()
    go(k, args_of())
    enter, leave = object(), object()
    a = args_of()
    go(k, a, hooks=(enter, leave), meta=META)
    (call,) = k.compiled[0].calls
    assert call[6:9] == ("launch-metadata", enter, leave)
    assert k.compiled[0].metadata_calls == [((8,), 77, a + (128, False))]


@pytest.mark.parametrize("change", [
    dict(x=4100),                        # a pointer not 16-byte aligned: Triton's alignment specialization
    dict(n=1),                           # an int equal to 1 becomes a constant
    dict(n=1008),                        # an int divisible by 16
    dict(n=2 ** 31),                     # an int past int32: i64
    dict(n=2 ** 63),                     # past int64: u64
    dict(dtype=tt.float16),              # another pointer type
    dict(scale=2),                       # an int where a float was
    dict(flag=1),                        # an int where a bool was
    dict(shape=(10, 100)),               # tuples count by value
])
def test_a_change_of_specialization_misses_the_cache(direct, change):
    k = FakeKernel()
    go(k, args_of())
    go(k, args_of(**change))
    assert len(k.slow_launches) == 2 and not k.compiled[0].calls
    go(k, args_of(**change))             # remembered under its own signature
    assert len(k.slow_launches) == 2 and len(k.compiled[0].calls) == 1


@pytest.mark.parametrize("meta, device", [({"BLOCK": 256, "num_warps": 4}, 0),    # a constexpr
                                          ({"BLOCK": 128, "num_warps": 8}, 0),    # an option
                                          ({"BLOCK": 128, "num_warps": 4, "WIDE": True}, 0),
                                          (META, 1)])                             # another device
def test_meta_parameters_and_the_device_are_in_the_signature(direct, meta, device):
    k = FakeKernel()
    go(k, args_of())
    go(k, args_of(), meta=meta, device=device)
    assert len(k.slow_launches) == 2
    go(k, args_of(), meta=meta, device=device)
    assert len(k.slow_launches) == 2
    assert k.compiled[0].calls[0][-1] == meta.get("WIDE", False)


def test_values_triton_does_not_specialize_on_hit_the_cache(direct):
    k = FakeKernel()
    go(k, args_of())
    for change in (dict(n=1002), dict(n=-3), dict(scale=-1e30), dict(flag=False), dict(x=4096 * 7, y=32)):
        go(k, args_of(**change))
    assert len(k.slow_launches) == 1 and len(k.compiled[0].calls) == 5


def test_unkeyable_arguments_always_take_kernel_grid(direct):
    import numpy as np
    k = FakeKernel()
    for _ in range(2):
        go(k, args_of(n=np.int64(1000)))           # not a Python int: never keyed
        go(k, args_of(shape=([1000],)))            # a tuple holding a list: unhashable
    assert len(k.slow_launches) == 4 and not k.compiled[0].calls


def test_fallback_when_off_or_when_triton_does_not_expose_the_launcher(monkeypatch, direct):
    class Opaque:                                   # a compiled kernel without run/function/...
        pass
    k = FakeKernel(Opaque)
    for _ in range(2):
        go(k, args_of())
    assert len(k.slow_launches) == 2
    k = FakeKernel()
    k.pre_run_hooks = [lambda *a, **kw: None]       # Triton runs these on every launch
    for _ in range(2):
        go(k, args_of())
    assert len(k.slow_launches) == 2 and not k.compiled[0].calls
    monkeypatch.setitem(launch._state, "direct", False)   # TRITENSOR_DIRECT_LAUNCH=0, or interpreted
    k = FakeKernel()
    for _ in range(2):
        go(k, args_of())
    assert len(k.slow_launches) == 2 and not k.compiled[0].calls


def test_a_missing_parameter_is_an_error_not_a_launch():
    spec = launch._launches_of(FakeKernel()).spec
    with pytest.raises(TypeError, match="BLOCK"):
        launch.DirectLaunch(FakeCompiled(), spec, args_of(), {"num_warps": 4})


def test_int_codes_follow_tritons_specialization():
    """The codes separate what native_specialize_impl separates (checked against it here)."""
    from triton._C.libtriton import native_specialize_impl
    from triton.backends.nvidia.compiler import CUDABackend
    values = [0, 1, 2, 15, 16, -16, -17, 2 ** 31 - 16, 2 ** 31, 2 ** 31 + 1, -2 ** 31, -2 ** 31 - 1,
              2 ** 63 - 1, 2 ** 63, 2 ** 63 + 16]
    for a in values:
        for b in values:
            same_code = launch._int_code(a) == launch._int_code(b)
            same_triton = (native_specialize_impl(CUDABackend, a, False, True, True)
                           == native_specialize_impl(CUDABackend, b, False, True, True))
            assert same_code == same_triton, (a, b)


_REAL_SCRIPT = textwrap.dedent(r'''
    import json, sys
    import triton
    import triton.language as tl
    from triton.backends.nvidia.driver import CudaDriver, CudaLauncher

    import tritensor as tt
    from tritensor.runtime import device as rd, launch

    rd.cuda_mode = lambda: "emulated"       # device/stream bookkeeping without a GPU

    @triton.jit
    def scale(x_ptr, y_ptr, n, shape, s, BLOCK: tl.constexpr, WIDE: tl.constexpr = False):
        offs = tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * s + shape[0], mask=mask)

    class Utils:
        def get_device_properties(self, device):
            return {"max_shared_mem": 232448, "multiprocessor_count": 132}
        def load_binary(self, name, kernel, shared, device):
            return 1, 2, 0, 0, 1024
        def unload_module(self, module):
            pass

    calls = []

    def record(*args):
        calls.append(args)

    def flat(args):
        if isinstance(args[-1], tuple):     # Triton 3.9's C launcher takes the kernel's arguments as one tuple
            args = args[:-1] + args[-1]
        return args

    def plain(args):
        return [a if isinstance(a, (int, float, str, type(None))) else
                a.data_ptr() if hasattr(a, "data_ptr") else repr(a) for a in flat(args)]

    class RecordingLauncher(CudaLauncher):
        """Triton's CudaLauncher (its __call__ runs) with the C launcher recording; what its
        __init__ builds with the C extension (3.9's argument annotations) is left out."""
        def __init__(self, src, metadata):
            self.launch = record
            self.gsan_enabled = False
            self.arg_annotations = self.kernel_signature = None
            self.num_ctas = 1
            for name in ("global_scratch_size", "global_scratch_align", "profile_scratch_size",
                         "profile_scratch_align", "launch_cooperative_grid", "launch_pdl"):
                setattr(self, name, getattr(metadata, name))

    launch.install_triton_driver(CudaDriver, Utils(), RecordingLauncher)
    slow = []
    tritons_run = scale.run
    scale.run = lambda *a, **kw: (slow.append(1), tritons_run(*a, **kw))[1]

    def go(x, n, s, **meta):
        launch.launch_kernel(scale, (2, 1), launch.KernelArg(x, tt.float32, 0),
                             launch.KernelArg(8192, tt.float32, 0), n, (10, 3), s, BLOCK=16, **meta)

    go(4096, 10, 2.0)                        # compiles; Triton's own launch
    go(4096 + 32, 12, 3.0)                   # the same signature: direct
    launch._state["direct"] = False
    go(4096 + 32, 12, 3.0)                   # Triton's own launch of the same call, for comparison
    launch._state["direct"] = True
    go(4100, 12, 3.0)                        # misaligned: a new signature (Triton compiles again)
    go(4100, 12, 3.0)                        # ... then direct
    go(4096, 1, 3.0)                         # n == 1: a new signature
    args = (launch.KernelArg(4096, tt.float32, 0), launch.KernelArg(8192, tt.float32, 0), 1, (10, 3), 3.0)
    n_python = []                            # Python calls of one direct launch, the recorder's included
    sys.setprofile(lambda frame, event, arg: n_python.append(1) if event == "call" else None)
    launch.launch_kernel(scale, (2, 1), *args, BLOCK=16)
    sys.setprofile(None)
    print(json.dumps({"calls": [plain(c) for c in calls],
                      "pointer_objects": [sum(type(a) is launch.KernelArg for a in flat(c)) for c in calls], "slow": len(slow), "triton": triton.__version__,
                      "torch": "torch" in sys.modules, "python_calls": len(n_python) - 1}))
''')


def test_direct_launch_hands_the_launcher_what_triton_does(tmp_path):
    """A real kernel compiled for sm_90 (no GPU: Triton's binary loader and C launcher record):
    the direct launch passes the launcher the very arguments JITFunction.run passes."""
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "TRITENSOR_EMULATE_CUDA")}
    env["TRITENSOR_EMULATED_DEVICES"] = "1"
    script = tmp_path / "direct.py"         # @triton.jit wants its source in a file
    script.write_text(_REAL_SCRIPT)
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    r = json.loads(out.stdout.strip().splitlines()[-1])
    calls = r["calls"]
    assert not r["torch"]
    assert r["slow"] == 4                    # launches 1, 3 (direct off), 4 and 6 went through kernel[grid]
    # the direct launch 2 and Triton's launch 3 of the same call hand the C launcher the same grid,
    # stream, function, launch flags, scratch, packed metadata and arguments; Triton passes its
    # empty launch hook chains and their launch metadata, the direct launch None for each (the
    # same: an empty chain does nothing)
    hooks = [i for i, a in enumerate(calls[2]) if isinstance(a, str) and ("HookChain" in a or "LazyDict" in a)]
    assert len(hooks) == 3
    assert calls[1] == [None if i in hooks else a for i, a in enumerate(calls[2])]
    assert calls[1][:3] == [2, 1, 1] and calls[1][-7:] == [4096 + 32, 8192, 12, "(10, 3)", 3.0, 16, False]
    assert calls[4][-7] == 4100 and calls[5][-5] == 1
    # Triton's own launches hand the C launcher pointer objects (it calls data_ptr() and asks the
    # driver about each address); the direct ones, the addresses as ints
    assert r["pointer_objects"] == [2, 0, 2, 2, 0, 2, 0]
    assert len(calls) == 7 and r["python_calls"] <= BUDGET["cuda compiled launch"], r["python_calls"]
