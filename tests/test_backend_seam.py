"""Issue 13 item 2: one backend seam. Op modules never branch on the device type nor reach into
a backend's private names; every op's NumPy reference lives in backends/; and the two backends
(NumPy for cpu, Triton for cuda, emulated here) agree through the seam's methods."""
from __future__ import annotations

import ast
import pathlib
import re

import numpy as np
import pytest

import tritensor as tt
from tritensor.backends.base import Backend, backend_for
from tritensor.ops import table

OPS_DIR = pathlib.Path(tt.__file__).parent / "ops"

# --------------------------------------------------------------------------- the grep tests
# A branch on a named device kind: x.device.type == "cpu", dev.type != 'cuda', .type in ("cpu", ...)
_KIND_BRANCH = re.compile(r"""\.type\s*(==|!=|\bin\b|\bnot in\b)\s*\(?\s*["']""")
# Lines allowed to compare device types, with the reason each must stay.
_KIND_BRANCH_ALLOWED: dict = {}


def _op_modules():
    return sorted(OPS_DIR.glob("*.py"))


def test_no_op_module_branches_on_a_device_kind():
    found = []
    for path in _op_modules():
        for no, line in enumerate(path.read_text().splitlines(), 1):
            if _KIND_BRANCH.search(line) and (path.name, line.strip()) not in _KIND_BRANCH_ALLOWED:
                found.append(f"{path.name}:{no}: {line.strip()}")
    assert not found, "device-kind branches in ops/ (ask backend_for(device) instead):\n" + "\n".join(found)


def test_the_kind_pattern_catches_the_forms_it_is_for():
    for line in ('if x.device.type == "cpu":', "if d.type != 'cuda':", 'if t.device.type in ("cpu", k):'):
        assert _KIND_BRANCH.search(line), line
    for line in ('raise RuntimeError(f"Expected a \'{device.type}\' device")', "d.type != dev.type"):
        assert not _KIND_BRANCH.search(line), line


def _backend_aliases(tree):
    """Names a module binds to backend modules (import ... as tb, from ..backends import x)."""
    aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and "backends" in node.module.split("."):
            aliases.update(a.asname or a.name for a in node.names)
    return aliases


def test_no_op_module_uses_a_backends_private_name():
    found = []
    for path in _op_modules():
        tree = ast.parse(path.read_text())
        aliases = _backend_aliases(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and "backends" in node.module.split("."):
                found += [f"{path.name}:{node.lineno}: imports {a.name}" for a in node.names
                          if a.name.startswith("_")]
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id in aliases and node.attr.startswith("_") and not node.attr.startswith("__"):
                found.append(f"{path.name}:{node.lineno}: {node.value.id}.{node.attr}")
    assert not found, "private backend names used in ops/:\n" + "\n".join(found)


# References defined outside backends/, each with the reason it stays.
_REFERENCE_ALLOWED = {
    ("as_strided_backward", "tritensor.ops.views"):
        "an adapter: it raises torch's error for an overlapping target (ops/views.py's check, shared "
        "with the Triton launcher), then calls numpy_ref.restride",
}


def test_every_reference_lives_in_backends():
    found = []
    for name, op in table.TABLE.items():
        ref = op.reference
        if ref is None or isinstance(ref, np.ufunc):
            continue
        module = getattr(ref, "__module__", "") or ""
        if not module.startswith("tritensor.backends") and (name, module) not in _REFERENCE_ALLOWED:
            found.append(f"{name}: {module}.{getattr(ref, '__qualname__', ref)}")
    assert not found, "references defined in ops/ (move them to backends/numpy_*.py):\n" + "\n".join(found)


# --------------------------------------------------------------------------- the seam itself
CPU, CUDA = tt.device("cpu"), tt.device("cuda", 0)


def test_backend_for_gives_one_object_per_kind():
    cpu, cuda = backend_for(CPU), backend_for(CUDA)
    assert isinstance(cpu, Backend) and isinstance(cuda, Backend) and cpu is not cuda
    assert backend_for(tt.device("cpu")) is cpu and backend_for(tt.device("cuda:0")) is cuda
    assert (cpu.kind, cpu.torch_kind, cpu.host_memory) == ("cpu", "cpu", True)
    assert (cuda.kind, cuda.torch_kind, cuda.host_memory) == ("cuda", "cuda", False)
    assert cpu.torch_name("abs_cpu", "abs_cuda") == "abs_cpu"
    assert cuda.torch_name("m1 and m2", "mat1 and mat2") == "mat1 and mat2"


def _pair(array):
    return tt.tensor(array), tt.tensor(array, device="cuda")


def _both(fn):
    """fn(backend, device) on each backend, as NumPy arrays."""
    return [np.asarray(fn(backend_for(d), d).cpu().numpy()) for d in (CPU, CUDA)]


def test_run_and_launcher_agree_across_backends():
    from tritensor.ops import elementwise as ew
    base = np.arange(-6, 6, dtype=np.float32).reshape(3, 4)
    results = []
    for dev in (CPU, CUDA):
        x, y = tt.tensor(base, device=dev), tt.tensor(base.T.copy(), device=dev).t()     # transposed operand
        b = backend_for(dev)
        out = tt.empty(3, 4, device=dev)
        b.run(ew.MUL, out, (x, y), {}, tt.float32)
        out2 = tt.empty(3, 4, device=dev)
        b.launcher(ew.ADD)(out2, x, 2.5, compute=b.compute_arg(tt.float32))
        results.append((out.cpu().numpy(), out2.cpu().numpy()))
    np.testing.assert_array_equal(results[0][0], base * base)
    np.testing.assert_array_equal(results[1][0], base * base)
    np.testing.assert_array_equal(results[0][1], base + 2.5)
    np.testing.assert_array_equal(results[1][1], base + 2.5)


def test_copy_casts_and_broadcasts_the_same_on_both():
    src = np.array([[1.7, -2.5, 3.0, np.nan, 300.0]], dtype=np.float32)

    def copy(b, d):
        dst = tt.zeros(4, 5, dtype=tt.int16, device=d)
        b.copy(dst, tt.tensor(src, device=d))
        return dst
    cpu, cuda = _both(copy)
    np.testing.assert_array_equal(cpu[:, [0, 1, 2, 4]], np.broadcast_to([[1, -2, 3, 300]], (4, 4)))
    np.testing.assert_array_equal(cuda[:, [0, 1, 2, 4]], cpu[:, [0, 1, 2, 4]])


def test_fill_the_same_on_both():
    def fill(b, d):
        out = tt.zeros(3, 7, device=d)[:, ::2]        # a strided destination
        b.fill(out, -1.25)
        return out._base if out._base is not None else out
    cpu, cuda = _both(fill)
    expect = np.zeros((3, 7), np.float32)
    expect[:, ::2] = -1.25
    np.testing.assert_array_equal(cpu, expect)
    np.testing.assert_array_equal(cuda, expect)


def test_compact_nonzero_and_masked_select_the_same_on_both():
    values = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7
    mask = (values.astype(np.int64) % 3) == 0
    for dev in (CPU, CUDA):
        b = backend_for(dev)
        x, m = tt.tensor(values, device=dev), tt.tensor(mask, device=dev)
        coords = b.compact(x, values.shape, tt.int64)
        np.testing.assert_array_equal(coords.cpu().numpy(), np.argwhere(values != 0))
        picked = b.compact(m[0:1], (2, 3, 4), tt.float32, values=x)   # the mask broadcast
        np.testing.assert_array_equal(picked.cpu().numpy(), values[np.broadcast_to(mask[0:1], values.shape)])
        empty = b.compact(tt.zeros(0, 3, device=dev), (0, 3), tt.int64)
        assert tuple(empty.shape) == (0, 2)


@pytest.mark.launch_blocking
def test_check_index_the_same_on_both():
    """The bounds check at the call (cuda as under CUDA_LAUNCH_BLOCKING=1): an index in range goes
    on as it is, the first value out of range (row-major, a transposed view too) is the error's."""
    from tritensor.runtime import device_errors
    check = device_errors.check("index {index} is out of bounds", IndexError)
    for dev in (CPU, CUDA):
        b = backend_for(dev)
        idx = tt.tensor([[0, 4], [-5, 3]], device=dev)
        assert b.check_index(idx, -5, 5, check) is idx
        with pytest.raises(IndexError, match="^index -5 is out of bounds$"):
            b.check_index(idx, -4, 5, check)
        with pytest.raises(IndexError, match="^index -5 is out of bounds$"):
            b.check_index(idx.t(), 0, 5, check)


def test_random_through_the_seam():
    """Each backend fills from its own stream: the values differ between devices (as torch's
    cpu and cuda generators do) but each repeats under the same seed and keeps its ranges."""
    for dev in (CPU, CUDA):
        b = backend_for(dev)
        draws = []
        for _ in range(2):
            gen = tt.Generator(dev).manual_seed(123)
            u = tt.empty(300, device=dev)
            b.random(u, "uniform", gen, 2.0, 3.0)
            n = tt.empty(300, dtype=tt.float64, device=dev)
            b.random(n, "normal", gen, 1.0, 0.5)
            k = tt.empty(300, dtype=tt.int32, device=dev)
            b.random(k, "integers", gen, -3, 4)
            draws.append([t.cpu().numpy() for t in (u, n, k)])
        u, n, k = draws[0]
        for a, c in zip(draws[0], draws[1]):
            np.testing.assert_array_equal(a, c)
        assert 2.0 <= u.min() and u.max() < 3.0 and u.std() > 0.2
        assert abs(n.mean() - 1.0) < 0.15 and 0.35 < n.std() < 0.65
        assert k.min() == -3 and k.max() == 3
        perm = b.permutation(50, tt.Generator(dev).manual_seed(5), dev)
        assert sorted(perm.tolist()) == list(range(50))
        np.testing.assert_array_equal(perm, b.permutation(50, tt.Generator(dev).manual_seed(5), dev))


def test_generator_state_goes_through_the_backend():
    for dev, nbytes in ((CPU, 13 * 8), (CUDA, 2 * 8)):
        gen = tt.Generator(dev).manual_seed(7)
        backend_for(dev).random(tt.empty(10, device=dev), "uniform", gen, 0.0, 1.0)
        state = gen.get_state()
        assert tuple(state.shape) == (nbytes,)
        a = tt.empty(20, device=dev)
        backend_for(dev).random(a, "normal", gen, 0.0, 1.0)
        gen.set_state(state)
        b = tt.empty(20, device=dev)
        backend_for(dev).random(b, "normal", gen, 0.0, 1.0)
        np.testing.assert_array_equal(a.cpu().numpy(), b.cpu().numpy())
    with pytest.raises(RuntimeError, match="Expected a CPUGeneratorImplState of size 104 but found the "
                                           "input RNG state size to be 16"):
        tt.Generator("cpu").set_state(tt.zeros(16, dtype=tt.uint8))
    with pytest.raises(RuntimeError, match="RNG state is wrong size"):
        tt.Generator("cuda").set_state(tt.zeros(104, dtype=tt.uint8))


def test_scratch_and_copy_target():
    for dev in (CPU, CUDA):
        b = backend_for(dev)
        like = tt.zeros(2, device=dev)
        s = b.scratch(like, (3, 5), tt.int64)
        assert s.device == dev and tuple(s.shape) == (3, 5) and s.is_contiguous()
        b.fill(s, 9)
        assert s.cpu().numpy().tolist() == [[9] * 5] * 3
        t = b.copy_target((4,), tt.float32, dev, False)
        assert t.device == dev and tuple(t.shape) == (4,)
    assert tt.is_tensor(backend_for(CPU).copy_target((4,), tt.float32, CPU, True))
    assert backend_for(CPU).copy_target((4,), tt.float32, CPU, True).is_pinned()


def test_device_wording_of_errors_comes_from_the_backend():
    for dev, kernel in ((CPU, "abs_cpu"), (CUDA, "abs_cuda")):
        with pytest.raises(NotImplementedError, match=f'"{kernel}" not implemented for \'Bool\''):
            tt.tensor([True], device=dev).abs()
    for dev, which in ((CPU, "m1 and m2"), (CUDA, "mat1 and mat2")):
        a = tt.ones(2, 2, device=dev)
        with pytest.raises(RuntimeError, match=f"expected {which} to have the same dtype"):
            tt.mm(a, a.double())
