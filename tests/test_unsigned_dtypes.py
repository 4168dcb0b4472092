"""uint16 / uint32 / uint64 as torch 2.13 has them: the support matrix of tests/data/unsigned_cases.py
recorded from torch (tests/data/record_unsigned.py -> unsigned_values.json: values, or torch's
error type and message) replayed on cpu and, for the cases with kernels, on the emulated cuda
device; torch's promotion table and result_type; NumPy, DLPack, tt.save/load and safetensors
round trips; the unsigned order and conversions of values past 2**63 in the kernels."""
import io
import json
import math
import os
import pickletools
import sys
import zipfile

import numpy as np
import pytest

import tritensor as tt
from tritensor.ops import _unsigned

DATA = os.path.join(os.path.dirname(__file__), "data")
sys.path.insert(0, DATA)
from unsigned_cases import CASES, CUDA_CASES, DTYPES, SETUP, outcome  # noqa: E402

with open(os.path.join(DATA, "unsigned_values.json")) as _f:
    FIX = json.load(_f)


def _namespace(name, device):
    """unsigned_cases.SETUP's inputs of dtype ``name`` on ``device``; DEV names the device."""
    ns = {"L": tt, "d": getattr(tt, name), "DEV": device}
    exec(_on_device(SETUP), ns)
    return ns


def _on_device(source):
    return (source.replace("dtype=d)", "dtype=d, device=DEV)").replace("False])", "False], device=DEV)")
            .replace("L.tensor([1, 0])", "L.tensor([1, 0], device=DEV)"))


@pytest.fixture(scope="module")
def namespaces():
    return {name: _namespace(name, "cpu") for name in DTYPES}


def _same(got, want):
    """Equal outcomes; floats to float32's rounding (exp/sqrt of small ints), everything else exact."""
    if isinstance(want, float) and isinstance(got, float):
        return math.isclose(got, want, rel_tol=2e-7) or (math.isnan(got) and math.isnan(want))
    if isinstance(want, dict) and isinstance(got, dict):
        return want.keys() == got.keys() and all(_same(got[k], want[k]) for k in want)
    if isinstance(want, list) and isinstance(got, list):
        return len(got) == len(want) and all(_same(g, w) for g, w in zip(got, want))
    return type(got) is type(want) and got == want


@pytest.mark.parametrize("case", sorted(CASES))
def test_case_matches_torch_on_cpu(case, namespaces):
    for name in DTYPES:
        want = FIX["cases"][case][name]
        got = outcome(CASES[case], namespaces[name])
        assert _same(got, want), f"{case} {name}: {CASES[case]}\n  torch:     {want}\n  tritensor: {got}"


def test_cases_on_the_emulated_device():
    """The kernels: the cases with unsigned kernels (and a few errors) on cuda, values as torch's cpu."""
    if not tt.cuda.is_available():
        pytest.skip("no cuda device")
    bad = []
    for name in DTYPES:
        ns = _namespace(name, "cuda")
        assert ns["X"].device.type == "cuda" and ns["B"].device.type == "cuda" and ns["I"].device.type == "cuda"
        for case in CUDA_CASES:
            want = FIX["cases"][case][name]
            got = outcome(_on_device(CASES[case]), ns)
            if "error" in want:            # torch names the cuda kernel <op>_cuda
                ok = got.get("error") == want["error"] and \
                    got.get("message", "").replace("_cuda\"", "_cpu\"") == want["message"]
            else:
                ok = _same(got, want)
            if not ok:
                bad.append(f"{case} {name}:\n  torch:     {want}\n  tritensor: {got}")
    assert not bad, "\n".join(bad)


# ------------------------------------------------------------------------- promotion
NAMES = ("bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "float16", "bfloat16",
         "float32", "float64")


def _dtype(name):
    return tt.bool if name == "bool" else getattr(tt, name)


def test_promote_types_is_torchs_table():
    """Every pair, torch's answer: uint16/32/64 promote with themselves and with floating dtypes
    only (uint32 with int32 is an error in torch, not int64: the Array API's table is
    tritensor.array_api's)."""
    bad = []
    for key, want in FIX["promote_types"].items():
        a, b = key.split(",")
        try:
            got = tt.promote_types(_dtype(a), _dtype(b)).name
        except RuntimeError as e:
            got = {"error": str(e)}
        if got != want:
            bad.append(f"{key}: torch {want}, tritensor {got}")
    assert len(FIX["promote_types"]) == len(NAMES) ** 2 and not bad, "\n".join(bad)


def test_result_type_with_scalars_and_zero_dim_tensors():
    bad = []
    for key, want in FIX["result_type"].items():
        a, other = key.split(",")
        if a.startswith("dim_"):
            t = tt.tensor([1, 0], dtype=_dtype(a[4:]))
        else:
            t = tt.tensor([1, 2], dtype=_dtype(a))
        o = {"int": 1, "negative_int": -1, "bool": True, "float": 1.5}.get(other)
        if o is None:
            o = tt.tensor(1, dtype=_dtype(other[len("zero_dim_"):]))
        try:
            got = tt.result_type(t, o).name
        except RuntimeError as e:
            got = {"error": str(e)}
        if got != want:
            bad.append(f"{key}: torch {want}, tritensor {got}")
    assert not bad, "\n".join(bad)


def test_dtype_objects():
    for name, bits in (("uint16", 16), ("uint32", 32), ("uint64", 64)):
        d = getattr(tt, name)
        assert repr(d) == f"tritensor.{name}" and d.itemsize == bits // 8 and not d.is_signed
        assert not d.is_floating_point and not d.is_complex
        assert tt.iinfo(d).max == 2 ** bits - 1 and tt.iinfo(d).min == 0
        assert tt.can_cast(d, tt.int8) and tt.can_cast(tt.int32, d) and not tt.can_cast(d, tt.bool)
        assert not tt.can_cast(tt.float32, d)
    assert not tt.uint8.is_signed and tt.int8.is_signed and not tt.bool.is_signed   # (torch's answers)
    assert not hasattr(tt, "UInt16Tensor")          # torch has the type string, not the class


# ------------------------------------------------------------------------- interchange
@pytest.mark.parametrize("name", DTYPES)
def test_numpy_and_dlpack_round_trips(name):
    hi = 2 ** (8 * np.dtype(name).itemsize) - 1
    a = np.array([hi, 0, hi // 2 + 1, 5], dtype=name)
    t = tt.from_numpy(a)
    assert t.dtype is getattr(tt, name) and t.tolist() == a.tolist()
    a[1] = 9                                           # from_numpy shares memory
    assert t[1].item() == 9
    assert tt.as_tensor(a).dtype is t.dtype and tt.tensor(a).tolist() == a.tolist()
    assert t.numpy().dtype == np.dtype(name)
    back = np.from_dlpack(t)                           # kDLUInt with the dtype's bits
    assert back.dtype == np.dtype(name) and back.tolist() == a.tolist()
    assert tt.from_dlpack(a).dtype is t.dtype


def test_from_numpy_error_lists_the_unsigned_dtypes():
    with pytest.raises(TypeError, match="can't convert np.ndarray of type <U1. The only supported types are: "
                                        "float64, float32, float16, bfloat16, int64, int32, int16, int8, uint64, uint32, "
                                        "uint16, uint8, and bool."):
        tt.from_numpy(np.array(["a"]))


def test_save_load_uses_torchs_untyped_storage_format():
    """torch writes uint16/32/64 with _rebuild_tensor_v3 over an UntypedStorage (its typed storages
    have no such dtype): the same records, so torch reads tritensor's file and the other way round."""
    x = tt.tensor([2 ** 64 - 1, 3, 2 ** 63], dtype=tt.uint64)
    state = {"u64": x, "u16_view": tt.tensor([[1, 65535], [7, 8]], dtype=tt.uint16).t(),
             "u32": tt.tensor([4294967295], dtype=tt.uint32), "f": tt.tensor([1.5])}
    buf = io.BytesIO()
    tt.save(state, buf)
    zf = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    text = io.StringIO()
    pickletools.dis(zf.read("archive/data.pkl"), out=text)
    ops = text.getvalue()
    assert ops.count("'torch._utils _rebuild_tensor_v3'") == 1 and "'torch.storage UntypedStorage'" in ops
    assert "'torch uint64'" in ops and "'torch FloatStorage'" in ops
    loaded = tt.load(io.BytesIO(buf.getvalue()))
    for k, v in state.items():
        assert loaded[k].dtype is v.dtype and loaded[k].tolist() == v.tolist() and loaded[k].stride() == v.stride()


def test_load_checks_a_v3_tensor_against_its_storage():
    """_rebuild_tensor_v3's storage holds bytes: a tensor larger than them is refused."""
    import tritensor.serialization.unpickler as wo
    st = wo.LoadedStorage(tt.zeros(4, dtype=tt.uint8)._storage, tt.uint8)
    assert wo._rebuild_tensor_v3(st, 0, (2,), (1,), False, {}, tt.uint16).dtype is tt.uint16
    with pytest.raises(RuntimeError, match="out of bounds for storage of size 4"):
        wo._rebuild_tensor_v3(st, 0, (3,), (1,), False, {}, tt.uint16)
    with pytest.raises(Exception, match="dtype must be a torch dtype"):
        wo._rebuild_tensor_v3(st, 0, (2,), (1,), False, {}, "uint16")


def test_safetensors_codes(tmp_path):
    from tritensor.serialization import safetensors_io
    tensors = {"a": tt.tensor([65535, 1], dtype=tt.uint16), "b": tt.tensor([4294967295], dtype=tt.uint32),
               "c": tt.tensor([2 ** 64 - 1], dtype=tt.uint64)}
    path = str(tmp_path / "u.safetensors")
    safetensors_io.save_file(tensors, path)
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
    assert {k: header[k]["dtype"] for k in tensors} == {"a": "U16", "b": "U32", "c": "U64"}
    back = safetensors_io.load_file(path)
    assert {k: (v.dtype, v.tolist()) for k, v in back.items()} == {k: (v.dtype, v.tolist()) for k, v in tensors.items()}


# ------------------------------------------------------------------------- kernels
def test_sort_keys_are_unsigned_across_tiles(device):
    """Values past 2**31 / 2**63 sort after small ones (the kernel's keys, the reference's packed
    keys), in rows longer than one sort tile so that the merge passes run too."""
    rng = np.random.default_rng(0)
    for name in DTYPES:
        hi = 2 ** (8 * np.dtype(name).itemsize) - 1
        vals = rng.integers(0, hi, size=70, dtype=np.uint64, endpoint=True).astype(name)
        vals[:4] = (hi, 0, hi // 2 + 1, hi // 2)
        x = tt.tensor(vals, device=device)
        s = x.sort(stable=True)
        assert s.values.tolist() == sorted(vals.tolist())
        assert s.indices.tolist() == np.argsort(vals, kind="stable").tolist()
        d = x.sort(descending=True, stable=True)
        assert d.values.tolist() == sorted(vals.tolist(), reverse=True)


def test_unsupported_ops_raise_before_computing():
    """The gate (ops/_unsigned.py) is torch's set: integer kernels only where torch has them, any
    op computing in a floating dtype is fine, and the accumulating ops refuse an unsigned
    accumulator."""
    x = tt.tensor([1, 2], dtype=tt.uint32)
    with pytest.raises(NotImplementedError, match="\"sub_cpu\"|\"add_stub\""):
        x.sub_(1)
    assert x.tolist() == [1, 2]                     # nothing was written
    with pytest.raises(NotImplementedError, match="\"cumsum_cpu\" not implemented for 'UInt64'"):
        tt.tensor([1, 2]).cumsum(0, dtype=tt.uint64)
    assert tt.exp(x).dtype is tt.float32 and (x < 1.5).tolist() == [True, False]
    assert _unsigned.kernel_name("lt", "cuda") == "lt_cuda" and _unsigned.kernel_name("pow", "cuda") == "pow"


_MOD = {"uint16": 2 ** 16, "uint32": 2 ** 32, "uint64": 2 ** 64}
# op -> (tritensor, Python's integers modulo 2**bits)
_UNRESTRICTED_BINARY = {
    "lt": (lambda x, y: x < y, lambda p, q, m: p < q),
    "ge": (lambda x, y: x >= y, lambda p, q, m: p >= q),
    "maximum": (tt.maximum, lambda p, q, m: max(p, q)),
    "add": (lambda x, y: x + y, lambda p, q, m: (p + q) % m),
    "sub": (lambda x, y: x - y, lambda p, q, m: (p - q) % m),
    "floor_divide": (lambda x, y: x // y, lambda p, q, m: p // q),
    "remainder": (lambda x, y: x % y, lambda p, q, m: p % q),
    "div_trunc": (lambda x, y: tt.div(x, y, rounding_mode="trunc"), lambda p, q, m: p // q),
    "rshift": (lambda x, y: x >> (y & 7), lambda p, q, m: p >> (q & 7)),
    "lshift": (lambda x, y: x << (y & 7), lambda p, q, m: (p << (q & 7)) % m),
}


def test_kernels_are_unsigned_under_unrestricted(device):
    """The kernels handle these dtypes whole, past torch's set (ops/_unsigned.unrestricted, for the
    Array API namespace): values past 2**15 / 2**31 / 2**63 compare, divide and shift as unsigned,
    add/sub/neg/~ wrap, max/argmax/cummax order them as unsigned; Python's integers are the
    oracle. Leaving the block, the same signatures raise torch's error again (nothing cached)."""
    bad = []
    for name, m in _MOD.items():
        a = [m - 1, 1, m // 2 + 1, 0, 7, m // 2, 12345]
        b = [3, m - 1, 2, 5, 7, m // 2 + 3, 2]
        x = tt.tensor(a, dtype=getattr(tt, name), device=device)
        y = tt.tensor(b, dtype=getattr(tt, name), device=device)
        with _unsigned.unrestricted():
            for op, (f, ref) in _UNRESTRICTED_BINARY.items():
                if f(x, y).tolist() != [ref(p, q, m) for p, q in zip(a, b)]:
                    bad.append(f"{name} {op}: {f(x, y).tolist()}")
            unary = {"neg": ((-x).tolist(), [(-p) % m for p in a]), "not": ((~x).tolist(), [m - 1 - p for p in a]),
                     "max": (x.max().item(), max(a)), "argmax": (x.argmax().item(), a.index(max(a))),
                     "amin": (x.amin().item(), 0), "cummax": (x.cummax(0).values.tolist(),
                                                             [max(a[:i + 1]) for i in range(len(a))]),
                     "clamp": (x.clamp(5, m // 2).tolist(), [min(max(p, 5), m // 2) for p in a])}
            bad += [f"{name} {op}: {got} != {want}" for op, (got, want) in unary.items() if got != want]
        with pytest.raises(NotImplementedError, match="not implemented for 'UInt"):
            x < y
        with pytest.raises(NotImplementedError, match="max_all"):
            x.max()
    assert not bad, "\n".join(bad)
