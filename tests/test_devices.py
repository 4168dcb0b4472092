"""Device objects, what `cuda` means here, device placement and mixing rules, and the caching
allocator's accounting."""
import os

import numpy as np
import pytest

import tritensor as tt
from conftest import _real_gpu, to_numpy


# ----------------------------------------------------------------------------- tt.device
@pytest.mark.parametrize("args,type_,index,text,rep", [
    (("cuda:0",), "cuda", 0, "cuda:0", "device(type='cuda', index=0)"),
    (("cuda", 0), "cuda", 0, "cuda:0", "device(type='cuda', index=0)"),
    (("cuda:1",), "cuda", 1, "cuda:1", "device(type='cuda', index=1)"),
    (("cuda",), "cuda", None, "cuda", "device(type='cuda')"),
    (("cpu",), "cpu", None, "cpu", "device(type='cpu')"),
    ((0,), "cuda", 0, "cuda:0", "device(type='cuda', index=0)"),
], ids=lambda v: repr(v))
def test_device_objects(args, type_, index, text, rep):
    d = tt.device(*args)
    assert d.type == type_
    assert d.index == index
    assert str(d) == text
    assert repr(d) == rep
    assert d == tt.device(*args)
    assert hash(d) == hash(tt.device(*args))
    assert tt.device(d) == d


def test_device_equality():
    assert tt.device("cuda:0") == tt.device("cuda", 0)
    assert tt.device("cuda") != tt.device("cuda:0")
    assert tt.device("cpu") != tt.device("cuda:0")
    assert tt.device("cuda:0") != tt.device("cuda:1")
    assert len({tt.device("cuda:0"), tt.device("cuda", 0), tt.device("cpu")}) == 2


BAD_DEVICES = ["gpu", "cuda:x", "cuda:", "cuda:-1", "", "cuda:0:1", "CUDA ", "tpu:0"]


# ids are repr()s: a bare id "gpu" would be taken for the conftest's gpu marker keyword
@pytest.mark.parametrize("bad", BAD_DEVICES, ids=[repr(b) for b in BAD_DEVICES])
def test_invalid_device_strings_raise(bad):
    with pytest.raises(RuntimeError):
        tt.device(bad)


def test_invalid_device_arguments():
    with pytest.raises(RuntimeError):
        tt.device("cuda:0", 1)          # index twice
    with pytest.raises(RuntimeError):
        tt.device("cuda", -1)


# ----------------------------------------------------------------------------- tt.cuda
def test_cuda_is_available_here():
    assert tt.cuda.is_available() is True
    assert tt.cuda.device_count() >= 1
    assert tt.cuda.current_device() == 0
    assert isinstance(tt.cuda.get_device_name(), str) and tt.cuda.get_device_name()
    tt.cuda.synchronize()


@pytest.mark.skipif(_real_gpu(), reason="a real GPU is present: cuda is not emulated")
def test_cuda_is_emulated_without_a_gpu():
    assert tt.cuda.is_emulated() is True
    assert tt.cuda.device_count() == int(os.environ.get("TRITENSOR_EMULATED_DEVICES", "1"))


def test_invalid_cuda_ordinal():
    n = tt.cuda.device_count()
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        tt.zeros(2, device=f"cuda:{n}")


# ----------------------------------------------------------------------------- placement
@pytest.mark.parametrize("make", [
    lambda: tt.zeros(2, device="cuda"),
    lambda: tt.ones(2, device="cuda:0"),
    lambda: tt.tensor([1.0, 2.0], device=tt.device("cuda")),
    lambda: tt.arange(3, device=tt.device("cuda", 0)),
    lambda: tt.randn(2, device="cuda"),
    lambda: tt.tensor([1.0]).cuda(),
    lambda: tt.tensor([1.0]).cuda(0),
    lambda: tt.tensor([1.0]).to("cuda"),
    lambda: tt.tensor([1.0]).to(tt.device("cuda:0")),
    lambda: tt.zeros(2, device="cuda") + 1,
    lambda: tt.zeros(2, 3, device="cuda").t(),
])
def test_cuda_tensors_report_cuda_0(make):
    t = make()
    assert t.device == tt.device("cuda", 0)
    assert str(t.device) == "cuda:0"
    assert t.device.index == 0
    assert t.is_cuda and not t.is_cpu
    assert t.get_device() == 0


def test_cpu_tensors_report_cpu():
    t = tt.zeros(2)
    assert t.device == tt.device("cpu") and str(t.device) == "cpu"
    assert t.device.index is None
    assert t.is_cpu and not t.is_cuda
    assert t.get_device() == -1
    assert tt.zeros(2, device="cuda").cpu().device == tt.device("cpu")


def test_device_transfer_keeps_values_and_layout():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = tt.tensor(a)
    y = x.t().cuda()                   # non-contiguous source
    assert y.shape == (4, 3)
    np.testing.assert_array_equal(to_numpy(y), a.T)
    z = y.cpu()
    np.testing.assert_array_equal(z.numpy(), a.T)
    assert z.data_ptr() != x.data_ptr()


# ----------------------------------------------------------------------------- mixing devices
BINARY = [
    ("add", lambda a, b: a + b, np.add),
    ("mul", lambda a, b: a * b, np.multiply),
    ("sub", lambda a, b: tt.sub(a, b), np.subtract),
    ("div", lambda a, b: a / b, np.divide),
    ("eq", lambda a, b: a == b, np.equal),
    ("maximum", lambda a, b: tt.maximum(a, b), np.maximum),
]


@pytest.mark.parametrize("name,op,ref", BINARY, ids=[p[0] for p in BINARY])
def test_mixing_devices_raises(name, op, ref):
    g = tt.ones(3, device="cuda")
    c = tt.ones(3)
    with pytest.raises(RuntimeError) as err:
        op(g, c)
    assert str(err.value) == ("Expected all tensors to be on the same device, but found at least two "
                              "devices, cuda:0 and cpu!")
    with pytest.raises(RuntimeError) as err:
        op(c, g)
    assert str(err.value) == ("Expected all tensors to be on the same device, but found at least two "
                              "devices, cpu and cuda:0!")


def test_mixing_devices_with_a_one_element_1d_cpu_tensor_raises():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        tt.ones(3, device="cuda") + tt.ones(1)


def test_mixing_devices_in_place_raises():
    g = tt.ones(3, device="cuda")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        g.add_(tt.ones(3))


def test_mixing_devices_in_where():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        tt.where(tt.ones(3, device="cuda") > 0, tt.ones(3), tt.ones(3, device="cuda"))


@pytest.mark.parametrize("name,op,ref", BINARY, ids=[p[0] for p in BINARY])
def test_0d_cpu_tensor_combines_with_cuda(name, op, ref):
    a = np.array([1.0, 2.0, 4.0], dtype=np.float32)
    g = tt.tensor(a, device="cuda")
    s = tt.tensor(2.0)
    for out, expected in ((op(g, s), ref(a, np.float32(2.0))), (op(s, g), ref(np.float32(2.0), a))):
        assert out.device == tt.device("cuda", 0)
        np.testing.assert_allclose(to_numpy(out), expected)


def test_0d_cpu_tensor_with_cuda_in_autograd():
    g = tt.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    s = tt.tensor(3.0, requires_grad=True)
    (g * s).sum().backward()
    np.testing.assert_allclose(to_numpy(g.grad), [3.0, 3.0])
    assert g.grad.device == tt.device("cuda", 0)
    assert s.grad.device == tt.device("cpu")
    assert s.grad.item() == pytest.approx(3.0)


# ----------------------------------------------------------------------------- caching allocator
def test_caching_allocator_reuses_freed_blocks():
    nbytes = 3 * 1024 * 1024 + 4          # an unusual size, rounded up by the allocator
    x = tt.empty(nbytes // 4, device="cuda")
    allocated = tt.cuda.memory_allocated()
    reserved = tt.cuda.memory_reserved()
    assert allocated >= nbytes and reserved >= allocated
    ptr = x.data_ptr()
    del x
    assert tt.cuda.memory_allocated() <= allocated - nbytes     # freed at once
    assert tt.cuda.memory_reserved() == reserved                # but kept in the cache
    y = tt.empty(nbytes // 4, device="cuda")
    assert tt.cuda.memory_reserved() == reserved                # reused: nothing new reserved
    assert tt.cuda.memory_allocated() == allocated
    assert y.data_ptr() == ptr
    assert tt.cuda.max_memory_allocated() >= allocated
    del y


def test_views_keep_the_block_alive():
    nbytes = 5 * 1024 * 1024
    x = tt.empty(nbytes // 4, device="cuda")          # empty: no kernel over 1.3M elements
    allocated = tt.cuda.memory_allocated()
    v = x[10:20]
    del x
    assert tt.cuda.memory_allocated() == allocated             # the view still uses it
    v.fill_(1.0)
    assert to_numpy(v).sum() == 10.0
    del v
    assert tt.cuda.memory_allocated() <= allocated - nbytes


def test_empty_cache_returns_cached_blocks():
    nbytes = 7 * 1024 * 1024
    x = tt.empty(nbytes // 4, device="cuda")
    del x
    reserved = tt.cuda.memory_reserved()
    tt.cuda.empty_cache()
    assert tt.cuda.memory_reserved() <= reserved - nbytes
    assert tt.cuda.memory_reserved() >= tt.cuda.memory_allocated()


def test_cpu_tensors_do_not_count():
    before = tt.cuda.memory_allocated()
    x = tt.empty(1 << 20)
    assert tt.cuda.memory_allocated() == before
    del x


class _Exp(tt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


def test_autograd_graphs_give_their_memory_back_at_once():
    import gc
    x = tt.randn(1024, device="cuda", requires_grad=True)
    x.grad = tt.zeros_like(x)
    enabled = gc.isenabled()
    gc.disable()             # memory must come back by reference counting, not at some later GC
    try:
        base = tt.cuda.memory_allocated()

        def ops():
            y = (x * 2 + 1).exp().sin().sum()
            y.backward()

        def custom():
            _Exp.apply(x).sum().backward()

        ops()
        assert tt.cuda.memory_allocated() == base
        custom()
        assert tt.cuda.memory_allocated() == base
    finally:
        if enabled:
            gc.enable()


def test_emulated_device_refuses_a_triton_interpreter_that_numpy_breaks():
    from tritensor.runtime.device import interpreter_breaks_on
    buggy = 'scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data))'
    fixed = 'scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.squeeze()))'
    assert interpreter_breaks_on(buggy, "2.4.0") and interpreter_breaks_on(buggy, "2.10.1")
    assert not interpreter_breaks_on(buggy, "2.3.5") and not interpreter_breaks_on(fixed, "2.4.6")


def test_emulated_device_works_when_triton_was_imported_first():
    """Triton decorates its own helpers (tl.sum, tl.max ...) when it is imported: before
    TRITENSOR_EMULATE_CUDA turned the interpreter on they are compiled-mode functions, which the
    interpreted kernels could not call. tritensor re-decorates them when it turns it on."""
    import subprocess
    import sys
    if tt.cuda.is_available() and not tt.cuda.is_emulated():
        pytest.skip("a real GPU: nothing is emulated")
    code = ("import triton\nimport tritensor as tt\n"
            "w = tt.arange(64.0, device='cuda').reshape(8, 8)\n"
            "print(w.sum().item(), w.max().item(), tt.softmax(w, 1).sum().item())\n")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITENSOR_EMULATE_CUDA"] = "1"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    total, largest, rows = map(float, done.stdout.split())
    assert (total, largest) == (2016.0, 63.0) and rows == pytest.approx(8.0, rel=1e-6)
