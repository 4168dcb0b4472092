"""Matrix multiplication (issue 5): mm, bmm, matmul, addmm, baddbmm, dot, mv, linear and ``@``.

Parity on cpu (NumPy reference) and cuda (the Triton kernel; emulated here) against NumPy in
float64, with tolerances that follow the precision in use; transposed/strided/broadcast operands
(read in place, no copy), sizes that cross the block boundaries (the interpreter's blocks are
32 x 32 x 16), size-0 dims, every rank case of torch.matmul; gradients; torch's error messages;
the float32-precision setting; the autotuner's choice and its cache (with a fake timer: no GPU).
"""
import json
import os
import subprocess
import sys
import types

import numpy as np
import pytest

import tritensor as tt
from tritensor.autograd import gradcheck
from tritensor.backends import triton as tb
from tritensor.backends.triton import matmul as tmm

FLOATS = [tt.float16, tt.bfloat16, tt.float32, tt.float64]
# relative to the size of the result: sum_k |a_ik b_kj| (products of K terms of rounded inputs)
TOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 1e-5, "float64": 1e-12, "tf32": 2e-3}


def _host(t):
    arr = np.asarray(t.detach().cpu().numpy())
    return arr.astype(np.float64) if arr.dtype != np.float64 else arr


def _make(shape, dtype, device, rng, layout="contiguous"):
    """A tensor of ``shape`` whose memory layout is ``layout``: contiguous, transposed (last
    two dims swapped in memory) or strided (every other column of a wider buffer)."""
    if layout == "transposed":
        base = tt.tensor(rng.standard_normal(shape[:-2] + (shape[-1], shape[-2])), dtype=dtype, device=device)
        return base.transpose(-2, -1)
    if layout == "strided":
        base = tt.tensor(rng.standard_normal(shape[:-1] + (2 * shape[-1] + 1,)), dtype=dtype, device=device)
        return base[..., 1::2]
    return tt.tensor(rng.standard_normal(shape), dtype=dtype, device=device)


def _check(out, expected_fn, inputs, kind, scale_fn=None):
    """out against the float64 product of the (rounded) inputs; error bound relative to
    sum |a| |b|, the magnitude a K-term dot product carries (``scale_fn`` of the absolute
    inputs, default ``expected_fn``: give one when the expression has negative coefficients)."""
    hosts = [_host(t) for t in inputs]
    expected = expected_fn(*hosts)
    scale = (scale_fn or expected_fn)(*[np.abs(h) for h in hosts])
    got = _host(out)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    tol = TOL[kind]
    err = np.abs(got - expected)
    assert np.all(err <= tol * scale + 1e-30), f"max error {err.max()} (tolerance {tol} of {scale.max()})"


def _kind(dtype, device):
    if dtype is tt.float32 and device == "cuda" and tt.backends.cuda.matmul.allow_tf32:
        return "tf32"
    return dtype.name


@pytest.fixture
def rng():
    return np.random.default_rng(5)


@pytest.fixture(autouse=True)
def _highest_precision():
    """Every test starts and ends at torch's default (IEEE float32, fp32_precision "none")."""
    tt.backends.cuda.matmul.fp32_precision = "none"
    yield
    tt.backends.cuda.matmul.fp32_precision = "none"


# --------------------------------------------------------------------------- parity
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
def test_mm_dtypes_and_layouts(dtype, layout, device, rng):
    # 17 x 19 @ 19 x 33: crosses the 32-wide N block and the 16-deep K block, not a multiple of either
    a = _make((17, 19), dtype, device, rng, layout)
    b = _make((19, 33), dtype, device, rng, "transposed" if layout == "contiguous" else layout)
    out = tt.mm(a, b)
    assert out.dtype is dtype and out.device == a.device and out.shape == (17, 33)
    _check(out, np.matmul, (a, b), _kind(dtype, device))


@pytest.mark.parametrize("dtype", [tt.float16, tt.bfloat16, tt.float32, tt.float64], ids=str)
def test_bmm_and_baddbmm(dtype, device, rng):
    a = _make((3, 17, 20), dtype, device, rng, "transposed")
    b = _make((3, 20, 9), dtype, device, rng)
    _check(tt.bmm(a, b), np.matmul, (a, b), _kind(dtype, device))
    inp = _make((17, 1), dtype, device, rng)          # broadcast over batch and columns
    out = tt.baddbmm(inp, a, b, beta=0.5, alpha=-2)
    _check(out, lambda i, x, y: 0.5 * i - 2 * np.matmul(x, y), (inp, a, b), _kind(dtype, device),
           scale_fn=lambda i, x, y: 0.5 * i + 2 * np.matmul(x, y))


@pytest.mark.parametrize("shapes", [
    ((5,), (5,)),                  # dot -> 0-d
    ((3, 5), (5,)),                # mv
    ((5,), (5, 4)),                # vector @ matrix
    ((2, 3, 5), (5,)),             # N-D @ vector
    ((5,), (2, 5, 4)),             # vector @ N-D
    ((2, 3, 5), (5, 4)),           # batch @ matrix (folded into rows)
    ((3, 5), (2, 5, 4)),           # matrix @ batch
    ((2, 3, 5), (2, 5, 4)),        # bmm
    ((2, 1, 3, 5), (4, 5, 6)),     # broadcast batch dims on both sides
    ((1, 3, 5), (2, 5, 4)),        # size-1 batch broadcast
], ids=lambda s: f"{s[0]}@{s[1]}")
def test_matmul_ranks(shapes, device, rng):
    sa, sb = shapes
    a = _make(sa, tt.float64, device, rng)
    b = _make(sb, tt.float64, device, rng)
    out = tt.matmul(a, b)
    expected = np.matmul(_host(a), _host(b))
    assert out.shape == expected.shape
    np.testing.assert_allclose(_host(out), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_host(a @ b), expected, rtol=1e-12, atol=1e-12)


def test_broadcast_batch_strided_operands(device, rng):
    # a batch broadcast with stride 0 (expand), b a transposed slice of a bigger batch
    a = _make((1, 17, 6), tt.float32, device, rng).expand(3, 17, 6)
    b = _make((3, 40, 6), tt.float32, device, rng)[:, ::2].transpose(1, 2)   # [3, 6, 20], strides (240, 1, 12)
    _check(a @ b, np.matmul, (a, b), "float32")
    # a 4-D problem whose batch dims cannot be coalesced (looped over here, one launch each)
    x = _make((2, 1, 5, 3), tt.float32, device, rng)
    y = _make((1, 3, 3, 4), tt.float32, device, rng, "transposed")
    _check(x @ y, np.matmul, (x, y), "float32")


def test_size_zero(device, rng):
    a = tt.zeros(4, 0, device=device)
    b = tt.zeros(0, 3, device=device)
    out = a @ b                                    # K = 0: a sum of nothing is zero
    assert out.shape == (4, 3) and np.all(_host(out) == 0)
    inp = tt.full((4, 3), 2.0, device=device)
    assert np.all(_host(tt.addmm(inp, a, b, beta=1.5)) == 3.0)    # beta * input only
    assert tt.mm(tt.zeros(0, 5, device=device), tt.zeros(5, 3, device=device)).shape == (0, 3)
    assert tt.bmm(tt.zeros(0, 2, 5, device=device), tt.zeros(0, 5, 3, device=device)).shape == (0, 2, 3)
    assert tt.matmul(tt.zeros(2, 0, 3, device=device), tt.zeros(3, 4, device=device)).shape == (2, 0, 4)
    d = tt.dot(tt.zeros(0, device=device), tt.zeros(0, device=device))
    assert d.shape == () and d.item() == 0


def test_addmm_beta_alpha(device, rng):
    a = _make((18, 7), tt.float32, device, rng)
    b = _make((7, 33), tt.float32, device, rng, "transposed")
    bias = _make((33,), tt.float32, device, rng)
    out = tt.addmm(bias, a, b, beta=0.25, alpha=3)
    _check(out, lambda i, x, y: 0.25 * i + 3 * np.matmul(x, y), (bias, a, b), "float32")
    _check(tt.addmm(bias, a, b), lambda i, x, y: i + np.matmul(x, y), (bias, a, b), "float32")
    # beta = 0: input is ignored entirely, NaN included (torch)
    nan_input = tt.full((18, 33), float("nan"), device=device)
    out = tt.addmm(nan_input, a, b, beta=0)
    assert not np.isnan(_host(out)).any()
    np.testing.assert_allclose(_host(out), _host(a) @ _host(b), rtol=1e-5, atol=1e-5)


def test_linear(device, rng):
    F = tt.nn.functional
    w = _make((6, 5), tt.float32, device, rng)
    bias = _make((6,), tt.float32, device, rng)
    for x in (_make((4, 5), tt.float32, device, rng),                    # 2-D: addmm
              _make((2, 3, 5), tt.float32, device, rng),                 # 3-D, rows fold: addmm on a view
              _make((3, 2, 5), tt.float32, device, rng).transpose(0, 1)):  # rows do not fold: matmul + add
        expected = _host(x) @ _host(w).T + _host(bias)
        np.testing.assert_allclose(_host(F.linear(x, w, bias)), expected, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(_host(F.linear(x, w)), expected - _host(bias), rtol=1e-5, atol=1e-5)
    v = _make((5,), tt.float32, device, rng)
    assert F.linear(v, w, bias).shape == (6,)
    assert F.linear(_make((4, 5), tt.float32, device, rng), v).shape == (4,)


def test_methods_and_operators(device, rng):
    a = _make((3, 4), tt.float64, device, rng)
    b = _make((4, 2), tt.float64, device, rng)
    expected = _host(a) @ _host(b)
    for got in (a @ b, a.mm(b), a.matmul(b), tt.Tensor.__rmatmul__(b, a),
                tt.zeros(3, 2, device=device, dtype=tt.float64).addmm(a, b)):
        np.testing.assert_allclose(_host(got), expected, rtol=1e-12)
    a3, b3 = a.unsqueeze(0), b.unsqueeze(0)
    np.testing.assert_allclose(_host(a3.bmm(b3))[0], expected, rtol=1e-12)
    np.testing.assert_allclose(_host(tt.zeros(1, 3, 2, device=device, dtype=tt.float64).baddbmm(a3, b3))[0],
                               expected, rtol=1e-12)
    v = _make((4,), tt.float64, device, rng)
    np.testing.assert_allclose(_host(a.mv(v)), _host(a) @ _host(v), rtol=1e-12)
    np.testing.assert_allclose(_host(v.dot(v)), _host(v) @ _host(v), rtol=1e-12)
    with pytest.raises(TypeError):
        a @ 2.0


def test_cuda_matches_cpu_in_float64(rng):
    a = _make((20, 37), tt.float64, "cpu", rng)
    b = _make((37, 9), tt.float64, "cpu", rng)
    np.testing.assert_allclose(_host((a.cuda() @ b.cuda())), _host(a @ b), rtol=1e-13)


# --------------------------------------------------------------------------- no copies, config
def test_operands_are_read_in_place(monkeypatch, rng):
    """Transposed, sliced and broadcast operands reach the kernel as strides: no copy kernel runs,
    and the batch stride of a broadcast operand is 0."""
    def no_copy(*args, **kwargs):
        raise AssertionError("an operand was copied")
    monkeypatch.setattr(tb, "copy", no_copy)
    launches = []
    real_run = tb._run
    monkeypatch.setattr(tb, "_run", lambda kernel, grid, *args, **meta: (launches.append((grid, args, meta)),
                                                                       real_run(kernel, grid, *args, **meta)))
    a = _make((3, 40), tt.float32, "cuda", rng).t()                  # [40, 3], strides (1, 40)
    b = _make((3, 17), tt.float32, "cuda", rng)[:, ::2].unsqueeze(0).expand(2, 3, 9)
    out = a.unsqueeze(0).expand(2, 40, 3) @ b
    monkeypatch.undo()        # reading the operands back for the check may copy them
    (grid, args, meta), = launches
    # args: a, b, c, d, M, N, K, then (batch, row, col) strides of a, b, c, d
    assert args[4:7] == (40, 9, 3)
    assert args[7:10] == (0, 1, 40) and args[10:13] == (0, 17, 2)
    assert meta["PRECISION"] == "ieee" and grid[1] == 2
    _check(out, np.matmul, (a.unsqueeze(0).expand(2, 40, 3), b), "float32")


def test_batch_folded_into_rows(monkeypatch, rng):
    launches = []
    real_run = tb._run
    monkeypatch.setattr(tb, "_run", lambda kernel, grid, *args, **meta: (launches.append(args[4:7]),
                                                                       real_run(kernel, grid, *args, **meta)))
    x = _make((2, 20, 5), tt.float32, "cuda", rng)
    w = _make((5, 7), tt.float32, "cuda", rng)
    _check(x @ w, np.matmul, (x, w), "float32")
    assert launches == [(40, 7, 5)]        # one launch over 2 * 20 rows


def test_batches_past_the_grid_limit_are_chunked(monkeypatch, rng):
    """Grid axis 1 holds at most 65535 batch entries on a GPU: bigger batches go in chunks
    (shrunk to 2 here, so a batch of 5 takes 3 launches with offset pointers)."""
    monkeypatch.setattr(tmm, "MAX_GRID_Y", 2)
    grids = []
    real_run = tb._run
    monkeypatch.setattr(tb, "_run", lambda kernel, grid, *args, **meta: (
        grids.append(grid[1]) if "PRECISION" in meta else None, real_run(kernel, grid, *args, **meta)))
    a = _make((5, 3, 4), tt.float32, "cuda", rng, "transposed")
    b = _make((5, 4, 2), tt.float32, "cuda", rng)
    out = tt.bmm(a, b)
    assert grids == [2, 2, 1]
    _check(out, np.matmul, (a, b), "float32")


def test_interpreter_uses_the_fixed_config_and_never_tunes(monkeypatch, rng):
    def tune(*args, **kwargs):
        raise AssertionError("autotuning under the interpreter")
    monkeypatch.setattr(tmm, "tuned_config", tune)
    metas = []
    real_run = tb._run
    monkeypatch.setattr(tb, "_run", lambda kernel, grid, *args, **meta: (metas.append(meta),
                                                                       real_run(kernel, grid, *args, **meta)))
    a = _make((17, 19), tt.float32, "cuda", rng)
    tt.mm(a, a.t())
    # the profile in force (the fast one's tiles cut down to the 17 x 17 x 19 problem)
    cfg = tb.pick(None, tmm.fitted(tmm.INTERPRETER_FAST_CONFIG, 17, 17, 19), tmm.INTERPRETER_CONFIG)
    assert min(cfg.BLOCK_M, cfg.BLOCK_N, cfg.BLOCK_K) >= 16
    assert all(metas[0][k] == v for k, v in cfg.meta().items())


# --------------------------------------------------------------------------- precision setting
def test_precision_settings_round_trip():
    m = tt.backends.cuda.matmul
    assert m.allow_tf32 is False and tt.get_float32_matmul_precision() == "highest"
    m.allow_tf32 = True
    assert tt.get_float32_matmul_precision() == "high"
    assert tmm.input_precision("float32") == "tf32"
    assert tmm.input_precision("float16") == tmm.input_precision("float64") == "ieee"
    tt.set_float32_matmul_precision("medium")
    assert m.allow_tf32 is True and tmm.input_precision("float32") == "tf32"
    m.allow_tf32 = False
    assert tt.get_float32_matmul_precision() == "highest" and tmm.input_precision("float32") == "ieee"
    tt.set_float32_matmul_precision("high")
    assert m.allow_tf32 is True
    # torch: an unknown name warns and changes nothing; a non-string is an error
    with pytest.warns(UserWarning, match="fast is not one of 'highest', 'high', or 'medium'"):
        tt.set_float32_matmul_precision("fast")
    assert tt.get_float32_matmul_precision() == "high"
    _raises("set_float32_matmul_precision expects a str, but got int", lambda: tt.set_float32_matmul_precision(1))
    _raises("set_allow_tf32_cublas expects a bool, but got int", lambda: setattr(m, "allow_tf32", 1))
    assert m.allow_tf32 is True
    with pytest.raises(AttributeError, match="Unknown attribute allow_tf33"):
        m.allow_tf33 = True
    with pytest.raises(AttributeError, match="Unknown attribute allow_tf33"):
        m.allow_tf33


def test_fp32_precision_and_reduction_flags():
    """torch's newer name for the same setting, and its cuBLAS reduction switches (read back
    only: tritensor always accumulates 16-bit inputs in float32)."""
    m = tt.backends.cuda.matmul
    assert m.fp32_precision == "none"                 # torch's default: nothing set yet
    m.fp32_precision = "tf32"
    assert m.allow_tf32 is True and tmm.input_precision("float32") == "tf32"
    m.fp32_precision = "ieee"
    assert tt.get_float32_matmul_precision() == "highest" and tmm.input_precision("float32") == "ieee"
    tt.set_float32_matmul_precision("medium")
    assert m.fp32_precision == "tf32"
    _raises("Unknown precision: TF32", lambda: setattr(m, "fp32_precision", "TF32"))
    _raises("backend 'cuda' does not support precision 'bf16'", lambda: setattr(m, "fp32_precision", "bf16"))
    m.fp32_precision = "none"
    assert m.fp32_precision == "none" and m.allow_tf32 is False
    assert m.allow_fp16_reduced_precision_reduction is True and m.allow_bf16_reduced_precision_reduction is True
    assert m.allow_fp16_accumulation is False
    try:
        m.allow_fp16_reduced_precision_reduction = False
        assert m.allow_fp16_reduced_precision_reduction is False
        with pytest.raises(TypeError, match="expects a bool"):
            m.allow_bf16_reduced_precision_reduction = 1
    finally:
        m.allow_fp16_reduced_precision_reduction = True


def test_tf32_reaches_the_kernel(monkeypatch, rng):
    metas = []
    real_run = tb._run
    monkeypatch.setattr(tb, "_run", lambda kernel, grid, *args, **meta: (metas.append(meta.get("PRECISION")),
                                                                       real_run(kernel, grid, *args, **meta)))
    a = _make((17, 19), tt.float32, "cuda", rng)
    b = _make((19, 5), tt.float32, "cuda", rng)
    tt.backends.cuda.matmul.allow_tf32 = True
    out = a @ b
    _check(out, np.matmul, (a, b), _kind(tt.float32, "cuda"))     # TF32 tolerance
    tt.backends.cuda.matmul.allow_tf32 = False
    a @ b
    a.double() @ b.double()
    assert [m for m in metas if m is not None] == ["tf32", "ieee", "ieee"]


# --------------------------------------------------------------------------- gradients
def _r(shape, device, rng):
    return tt.tensor(rng.standard_normal(shape), dtype=tt.float64, device=device, requires_grad=True)


def test_gradcheck_rank_cases(device, rng):
    assert gradcheck(lambda x, y: x @ y, (_r((3,), device, rng), _r((3,), device, rng)))
    assert gradcheck(lambda x, y: x @ y, (_r((2, 3), device, rng), _r((3,), device, rng)))
    assert gradcheck(lambda x, y: x @ y, (_r((3,), device, rng), _r((2, 3, 2), device, rng)))
    assert gradcheck(lambda x, w, b: tt.nn.functional.linear(x, w, b),
                     (_r((2, 2, 3), device, rng), _r((2, 3), device, rng), _r((2,), device, rng)))


def test_broadcast_gradients_are_summed(device, rng):
    x = _r((1, 4, 3), device, rng)
    y = _r((2, 3, 5), device, rng)
    g = rng.standard_normal((2, 4, 5))
    (x @ y).backward(tt.tensor(g, device=device))
    xh, yh = _host(x), _host(y)
    np.testing.assert_allclose(_host(x.grad), (g @ yh.transpose(0, 2, 1)).sum(0, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(_host(y.grad), xh.transpose(0, 2, 1) @ g, rtol=1e-12)
    w = _r((3, 5), device, rng)
    (x @ w).sum().backward()                   # 2-D weight shared by the batch: one folded mm
    np.testing.assert_allclose(_host(w.grad), xh[0].T @ np.ones((4, 5)), rtol=1e-12)
    assert (x @ w).grad_fn.name() == "UnsafeViewBackward0"     # torch: _unsafe_view(mm(folded x, w))


def test_grad_fn_names(device, rng):
    a, b = _r((2, 3), device, rng), _r((3, 2), device, rng)
    assert (a @ b).grad_fn.name() == "MmBackward0"
    assert tt.addmm(a[:, :2], a, b).grad_fn.name() == "AddmmBackward0"
    a3, b3 = a.unsqueeze(0), b.unsqueeze(0)
    assert (a3 @ b3).grad_fn.name() == "UnsafeViewBackward0"       # torch: _unsafe_view(bmm(...))
    assert tt.bmm(a3, b3).grad_fn.name() == "BmmBackward0"
    assert tt.baddbmm(a3[..., :2], a3, b3).grad_fn.name() == "BaddbmmBackward0"


# --------------------------------------------------------------------------- errors
def _raises(match, fn):
    with pytest.raises(RuntimeError) as info:
        fn()
    assert str(info.value) == match, str(info.value)


def test_shape_errors(device):
    z = lambda *s: tt.zeros(*s, device=device)   # noqa: E731
    _raises("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)", lambda: tt.mm(z(2, 3), z(4, 5)))
    _raises("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)", lambda: z(2, 3) @ z(4, 5))
    _raises("mat1 and mat2 shapes cannot be multiplied (2x3 and 5x4)",
            lambda: tt.nn.functional.linear(z(2, 3), z(4, 5)))
    _raises("mat1 and mat2 shapes cannot be multiplied (6x3 and 4x5)", lambda: z(2, 3, 3) @ z(4, 5))
    _raises("self must be a matrix", lambda: tt.mm(z(3), z(3, 2)))
    _raises("mat2 must be a matrix", lambda: tt.mm(z(2, 3), z(2, 3, 2)))
    _raises("batch1 must be a 3D tensor", lambda: tt.bmm(z(2, 3), z(2, 3, 2)))
    _raises("batch2 must be a 3D tensor", lambda: tt.bmm(z(2, 2, 3), z(3, 2)))
    _raises("Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4].",
            lambda: tt.bmm(z(2, 2, 3), z(2, 4, 2)))
    _raises("Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [3, 3].",
            lambda: tt.bmm(z(2, 2, 3), z(3, 3, 2)))
    _raises("both arguments to matmul need to be at least 1D, but they are 0D and 2D",
            lambda: tt.matmul(z(), z(2, 2)))
    _raises("inconsistent tensor size, expected tensor [3] and src [4] to have the same number of "
            "elements, but got 3 and 4 elements respectively", lambda: z(3) @ z(4))
    _raises("size mismatch, got input (2), mat (2x3), vec (4)", lambda: z(2, 3) @ z(4))
    _raises("mat1 must be a matrix, got 1-D tensor", lambda: tt.addmm(z(2), z(2), z(2, 2)))


def test_dtype_errors(device):
    f32 = tt.zeros(2, 2, device=device)
    f64 = tt.zeros(2, 2, device=device, dtype=tt.float64)
    which = "m1 and m2" if device == "cpu" else "mat1 and mat2"
    _raises(f"expected {which} to have the same dtype, but got: float != double", lambda: f32 @ f64)
    _raises(f"expected {which} to have the same dtype, but got: float != double", lambda: tt.mm(f32, f64))
    _raises("expected scalar type Float but found Double", lambda: tt.bmm(f32[None], f64[None]))
    _raises("self and mat2 must have the same dtype, but got Double and Float", lambda: tt.addmm(f64, f32, f32))
    _raises("dot : expected both vectors to have same dtype, but found Float and Double", lambda: f32[0] @ f64[0])
    # torch's C++ type names: c10::Half, c10::BFloat16
    f16, bf16 = f32.half(), f32.bfloat16()
    _raises(f"expected {which} to have the same dtype, but got: c10::Half != float", lambda: f16 @ f32)
    _raises(f"expected {which} to have the same dtype, but got: c10::BFloat16 != c10::Half", lambda: tt.mm(bf16, f16))
    _raises("Input dtypes must be the same, got: input float, batch1: c10::Half, batch2: c10::Half",
            lambda: tt.baddbmm(f32[None], f16[None], f16[None]))
    # mv (and matmul's matrix @ vector) is torch's addmv: result (vec's dtype), mat, vec
    _raises("addmv input tensors must have the same dtype, but got Float, Double, and Float",
            lambda: tt.mv(f64, f32[0]))
    _raises("addmv input tensors must have the same dtype, but got Double, Float, and Double", lambda: f32 @ f64[0])
    # integers are computed (torch 2.13's CPU kernels); bool is refused by each op's dispatch name
    i64 = tt.zeros(2, 2, device=device, dtype=tt.int64)
    b = i64 > 0
    name = '"addmm_impl_cpu_"' if device == "cpu" else '"addmm_cuda"'
    _raises(f"{name} not implemented for 'Bool'", lambda: b @ b)
    _raises(f"{name} not implemented for 'Bool'", lambda: tt.mm(b, b))
    bname = '"bmm"' if device == "cpu" else '"bmm_cuda"'
    _raises(f"{bname} not implemented for 'Bool'", lambda: tt.bmm(b[None], b[None]))
    vname = '"addmv_impl_cpu"' if device == "cpu" else '"addmv_impl_cuda"'
    _raises(f"{vname} not implemented for 'Bool'", lambda: tt.mv(b, b[0]))
    badd = '"baddbmm"' if device == "cpu" else '"bmm_cuda"'
    _raises(f"{badd} not implemented for 'Bool'", lambda: tt.baddbmm(b[None], b[None], b[None]))
    _raises('"dot" not implemented for \'Bool\'', lambda: tt.dot(b[0], b[0]))
    # bmm dispatches on batch1's dtype before comparing batch2's
    _raises(f"{bname} not implemented for 'Bool'", lambda: tt.bmm(b[None], f32[None]))
    # torch raises these as NotImplementedError (a RuntimeError)
    with pytest.raises(NotImplementedError):
        tt.mm(b, b)


def test_device_mismatch():
    a = tt.zeros(2, 2, device="cuda")
    b = tt.zeros(2, 2)
    _raises("Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
            lambda: a @ b)
    _raises("Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
            lambda: tt.bmm(a[None], b[None]))


def test_matmul_errors_follow_torchs_path(device):
    """torch.matmul folds an N-D operand into matrix rows (mm, or mv against a vector) when that
    needs no copy, or when the other operand requires grad; otherwise it expands both to a bmm.
    The path decides which check a bad call meets, so which message it gets."""
    z = lambda *s, dtype=tt.float32: tt.zeros(*s, device=device, dtype=dtype)   # noqa: E731
    f64 = tt.float64
    # contiguous batch: folded into an mm / mv
    _raises("mat1 and mat2 shapes cannot be multiplied (4x3 and 4x5)", lambda: z(2, 2, 3) @ z(4, 5))
    _raises("size mismatch, got input (4), mat (4x3), vec (4)", lambda: z(2, 2, 3) @ z(4))
    _raises("addmv input tensors must have the same dtype, but got Double, Float, and Double",
            lambda: z(2, 2, 3) @ z(3, dtype=f64))
    # a batch that does not fold without a copy: bmm
    _raises("Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4].",
            lambda: z(2, 2, 3).transpose(0, 1) @ z(4, 5))
    _raises("expected scalar type Float but found Double", lambda: z(2, 2, 3).transpose(0, 1) @ z(3, 5, dtype=f64))
    _raises("expected scalar type Float but found Double", lambda: z(2, 1, 2, 3) @ z(2, 3, 4, dtype=f64))
    _raises("expected scalar type Float but found Double", lambda: z(3) @ z(2, 3, 5, dtype=f64))
    _raises("expected scalar type Float but found Double", lambda: z(2, 3) @ z(2, 3, 5, dtype=f64))
    # ... unless the other operand requires grad: torch folds then too
    _raises("mat1 and mat2 shapes cannot be multiplied (4x3 and 4x5)",
            lambda: z(2, 2, 3).transpose(0, 1) @ z(4, 5).requires_grad_())
    _raises("mat1 and mat2 shapes cannot be multiplied (10x4 and 3x2)",
            lambda: z(2, 3).requires_grad_() @ z(2, 4, 5))
    # vector @ N-D: y.mT folds when its batch is contiguous with its rows (here K == 1)
    _raises("size mismatch, got input (10), mat (10x1), vec (3)", lambda: z(3) @ z(2, 1, 5))
    _raises("size mismatch, got input (10), mat (10x4), vec (3)", lambda: z(3) @ z(2, 5, 4).mT)
    # the values do not depend on the path
    rng = np.random.default_rng(0)
    a = _make((3, 2, 5), tt.float64, device, rng).transpose(0, 1)
    b = _make((5, 4), tt.float64, device, rng)
    expected = np.matmul(_host(a), _host(b))
    np.testing.assert_allclose(_host(a @ b), expected, rtol=1e-12)
    np.testing.assert_allclose(_host(a @ b.detach().requires_grad_()), expected, rtol=1e-12)


def test_input_broadcast_errors(device):
    """addmm/baddbmm expand their input to the result's shape: expand's messages."""
    z = lambda *s: tt.zeros(*s, device=device)   # noqa: E731
    _raises("The expanded size of the tensor (2) must match the existing size (3) at non-singleton dimension 0.  "
            "Target sizes: [2, 4].  Tensor sizes: [3, 4]", lambda: tt.addmm(z(3, 4), z(2, 3), z(3, 4)))
    kind = "torch.FloatTensor" if device == "cpu" else "torch.cuda.FloatTensor"
    _raises(f"expand({kind}{{[1, 2, 4]}}, size=[2, 4]): the number of sizes provided (2) must be greater or "
            "equal to the number of dimensions in the tensor (3)", lambda: tt.addmm(z(1, 2, 4), z(2, 3), z(3, 4)))
    _raises("The expanded size of the tensor (2) must match the existing size (3) at non-singleton dimension 0.  "
            "Target sizes: [2, 2, 4].  Tensor sizes: [3, 2, 4]", lambda: tt.baddbmm(z(3, 2, 4), z(2, 2, 3), z(2, 3, 4)))
    # and a 0-d, a row or a column input broadcasts
    out = tt.addmm(tt.full((2, 1), 2.0, device=device), tt.ones(2, 3, device=device), tt.ones(3, 4, device=device))
    assert np.all(_host(out) == 5.0)


def test_argument_type_errors():
    z = tt.zeros(2, 2)
    with pytest.raises(TypeError, match=r"^mm\(\): argument 'mat2' \(position 2\) must be Tensor, not float$"):
        tt.mm(z, 2.0)
    with pytest.raises(TypeError, match=r"^addmm\(\): argument 'mat2' \(position 3\) must be Tensor, not list$"):
        tt.addmm(z, z, [1.0])
    with pytest.raises(TypeError, match=r"^linear\(\): argument 'bias' \(position 3\) must be Tensor, not int$"):
        tt.nn.functional.linear(z, z, 2)
    # the operator returns NotImplemented for a non-tensor: Python's own TypeError, as with torch
    assert z.__matmul__(2) is NotImplemented and z.__rmatmul__(2) is NotImplemented
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for @: 'Tensor' and 'float'"):
        z @ 2.0
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for @: 'float' and 'Tensor'"):
        2.0 @ z


def test_linear_follows_torchs_paths(device, rng):
    """at::linear: a 2-D input with a bias is one addmm; a contiguous input with a 1-D bias folds
    into one addmm too (a view of its result); otherwise matmul, then the bias is added as
    torch's in-place add_ does: the product keeps its dtype and shape."""
    F = tt.nn.functional
    r = lambda *s, dtype=tt.float64: tt.tensor(rng.standard_normal(s), dtype=dtype, device=device,   # noqa: E731
                                               requires_grad=True)
    w, b = r(4, 3), r(4)
    assert F.linear(r(2, 3), w, b).grad_fn.name() == "AddmmBackward0"
    assert F.linear(r(2, 2, 3), w, b).grad_fn.name() == "ViewBackward0"
    out = F.linear(r(3), w, b)
    assert out.shape == (4,) and out.grad_fn.name() == "ViewBackward0"     # [1, 3] @ w^T + b, viewed
    bias2 = r(2, 4)
    x = r(3, 2, 3)
    out = F.linear(x, w, bias2)                                          # 2-D bias: matmul, then add
    np.testing.assert_allclose(_host(out), _host(x) @ _host(w).T + _host(bias2), rtol=1e-12)
    assert out.grad_fn.name() == "AddBackward0"
    # a bias of another dtype on the unfused path: the result keeps the product's dtype
    x32, w32 = r(2, 2, 3, dtype=tt.float32).transpose(0, 1), r(4, 3, dtype=tt.float32)
    out = F.linear(x32, w32, b)
    assert out.dtype is tt.float32
    np.testing.assert_allclose(_host(out), _host(x32) @ _host(w32).T + _host(b), rtol=1e-5, atol=1e-5)
    out.sum().backward()
    assert b.grad.dtype is tt.float64
    np.testing.assert_allclose(_host(b.grad), np.full(4, 4.0))
    # on a fused path the dtypes must agree (addmm's message)
    msg = "self and mat2 must have the same dtype, but got Double and Float"
    _raises(msg, lambda: F.linear(r(3, dtype=tt.float32), w32, b))
    _raises(msg, lambda: F.linear(r(2, 2, 3, dtype=tt.float32), w32, b))
    # the bias broadcasts to the product's shape, never beyond it
    _raises("output with shape [2, 2, 4] doesn't match the broadcast shape [3, 2, 2, 4]",
            lambda: F.linear(x32, w32, r(3, 1, 1, 4, dtype=tt.float32)))
    _raises("The expanded size of the tensor (4) must match the existing size (5) at non-singleton dimension 1.  "
            "Target sizes: [1, 4].  Tensor sizes: [5]", lambda: F.linear(r(3), w, r(5)))
    # ranks
    _raises("both arguments to linear need to be at least 1D, but they are 0D and 2D", lambda: F.linear(r(), w))
    _raises("both arguments to linear need to be at least 1D, but they are 2D and 0D", lambda: F.linear(w, r()))
    _raises("t() expects a tensor with <= 2 dimensions, but self is 3D", lambda: F.linear(r(2, 3), r(2, 4, 3)))
    _raises("mat2 must be a matrix, got 1-D tensor", lambda: F.linear(r(2, 3), r(3), r(1)))
    v = r(3)
    out = F.linear(r(2, 2, 3), v, r())                                   # 1-D weight, 0-d bias
    assert out.shape == (2, 2)


def test_addmm_baddbmm_in_place(device, rng):
    a = _make((17, 20), tt.float64, device, rng)
    b = _make((20, 33), tt.float64, device, rng, "transposed")
    s0 = rng.standard_normal((17, 33))
    s = tt.tensor(s0, device=device)
    view = s[:, :5]
    assert s.addmm_(a, b, beta=0.5, alpha=-2) is s
    expected = 0.5 * s0 - 2 * (_host(a) @ _host(b))
    np.testing.assert_allclose(_host(s), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_host(view), expected[:, :5], rtol=1e-12, atol=1e-12)   # in s's memory
    x3 = _make((2, 17, 20), tt.float64, device, rng)
    y3 = _make((2, 20, 9), tt.float64, device, rng)
    s3 = tt.ones(2, 17, 9, dtype=tt.float64, device=device)
    s3.baddbmm_(x3, y3, beta=2)
    np.testing.assert_allclose(_host(s3), 2 + _host(x3) @ _host(y3), rtol=1e-12, atol=1e-12)
    # self is the output: it must have the result's shape
    _raises("Bad in-place call: input tensor size [33] and output tensor size [17, 33] should match",
            lambda: tt.zeros(33, dtype=tt.float64, device=device).addmm_(a, b))
    _raises("Bad in-place call: input tensor size [9] and output tensor size [2, 17, 9] should match",
            lambda: tt.zeros(9, dtype=tt.float64, device=device).baddbmm_(x3, y3))
    _raises("a leaf Variable that requires grad is being used in an in-place operation.",
            lambda: tt.zeros(17, 33, dtype=tt.float64, device=device, requires_grad=True).addmm_(a, b))
    # an operand that is self (or shares its memory) is read before it is overwritten
    m0 = np.eye(40) + np.arange(40.0)[:, None] / 40
    m = tt.tensor(m0, device=device)
    m.addmm_(m, m)
    np.testing.assert_allclose(_host(m), m0 + m0 @ m0, rtol=1e-12)
    # gradients flow through the in-place op to self's old value and both operands
    leaf = _r((3, 4), device, rng)
    p, q = _r((3, 2), device, rng), _r((2, 4), device, rng)
    y = leaf * 1
    y.addmm_(p, q, beta=0.5, alpha=3)
    assert y.grad_fn.name() == "AddmmBackward0"
    g = rng.standard_normal((3, 4))
    y.backward(tt.tensor(g, device=device))
    np.testing.assert_allclose(_host(leaf.grad), 0.5 * g, rtol=1e-12)
    np.testing.assert_allclose(_host(p.grad), 3 * g @ _host(q).T, rtol=1e-12)
    np.testing.assert_allclose(_host(q.grad), 3 * _host(p).T @ g, rtol=1e-12)


def test_outer(device, rng):
    a = _make((17,), tt.float32, device, rng)
    b = _make((33,), tt.float64, device, rng)
    out = tt.outer(a, b)                             # torch: a[:, None] * b, promoted like mul
    assert out.dtype is tt.float64 and out.shape == (17, 33)
    np.testing.assert_allclose(_host(out), np.outer(_host(a), _host(b)), rtol=1e-7)
    np.testing.assert_allclose(_host(a.outer(a)), np.outer(_host(a), _host(a)), rtol=1e-6)
    i = tt.arange(3, device=device)
    assert tt.ger(i, i).dtype is tt.int64 and _host(tt.ger(i, i)).tolist() == [[0, 0, 0], [0, 1, 2], [0, 2, 4]]
    _raises("outer: Expected 1-D argument self, but got 2-D", lambda: tt.outer(tt.zeros(2, 2, device=device), i))
    _raises("outer: Expected 1-D argument vec2, but got 0-D", lambda: tt.outer(i, tt.tensor(1, device=device)))
    assert gradcheck(tt.outer, (_r((3,), device, rng), _r((4,), device, rng)))


# --------------------------------------------------------------------------- autotuning
C1, C2, C3 = tmm.Config(64, 64, 32, 8, 4, 4), tmm.Config(128, 128, 32, 8, 8, 3), tmm.Config(128, 64, 32, 8, 4, 4)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITENSOR_CACHE_DIR", str(tmp_path))
    tmm.clear_memory_cache()
    yield tmp_path
    tmm.clear_memory_cache()


def _fake_timer(ms_by_config, calls):
    """A timer that runs the thunk once (as the real one does) and reports a made-up duration
    for the configuration that thunk ran (the last one ``run`` recorded in ``calls``)."""
    def timer(fn):
        fn()
        return ms_by_config[calls[-1]]
    return timer


def test_in_place_results_survive_autotuning(cache_dir, monkeypatch, rng):
    """Tuning times every candidate by running it into the output; for addmm_ / baddbmm_ the
    output is also the d input, so out must start each real launch from its own values (the
    first H200 run: baddbmm_(beta=2) came out ~1e19). The emulated device plays a GPU here:
    tuning allowed, two small candidates, a timer that runs each one three times."""
    monkeypatch.setattr(tmm._tb, "interpreting", lambda: False)
    monkeypatch.setattr(tmm, "_gpu_name", lambda device: "Fake GPU")
    monkeypatch.setattr(tmm, "candidates", lambda *args: [tmm.Config(16, 16, 16, 1, 4, 1), tmm.Config(32, 16, 16, 1, 4, 1)])
    monkeypatch.setattr(tmm._cudnn, "autotune_allowed", lambda: True)
    timed = []
    previous = tmm.set_timer(lambda fn: (fn(), fn(), fn(), timed.append(1), 1.0)[-1])
    try:
        x3 = _make((2, 17, 20), tt.float64, "cuda", rng)
        y3 = _make((2, 20, 9), tt.float64, "cuda", rng)
        s3 = tt.ones(2, 17, 9, dtype=tt.float64, device="cuda")
        s3.baddbmm_(x3, y3, beta=2)
        assert len(timed) == 2
        np.testing.assert_allclose(_host(s3), 2 + _host(x3) @ _host(y3), rtol=1e-12, atol=1e-12)
    finally:
        tmm.set_timer(previous)


def test_the_gpu_name_is_asked_of_the_driver_once(cache_dir, monkeypatch, rng):
    """The tuning key holds the GPU's name; cudaGetDeviceProperties costs ~1 ms, and the first H200
    run asked it on every matmul (89 of the 127 ms of host time of 10 MLP steps). The emulated
    device plays a GPU whose CuPy counts the questions: the second matmul asks nothing."""
    asked = []

    def get_device_properties(index):
        asked.append(index)
        return {"name": b"Fake GPU"}
    fake_cupy = types.SimpleNamespace(cuda=types.SimpleNamespace(
        runtime=types.SimpleNamespace(getDeviceProperties=get_device_properties)))
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy)
    monkeypatch.setattr(tmm, "_gpu_names", {})
    monkeypatch.setattr(tmm._tb, "interpreting", lambda: False)
    monkeypatch.setattr(tmm, "candidates", lambda *args: [tmm.Config(16, 16, 16, 1, 4, 1)])
    monkeypatch.setattr(tmm._cudnn, "autotune_allowed", lambda: False)
    x = _make((17, 20), tt.float32, "cuda", rng)
    y = _make((20, 9), tt.float32, "cuda", rng)
    first, second = x @ y, y.t() @ x.t()
    assert asked == [0]
    np.testing.assert_allclose(_host(second), _host(first).T, rtol=1e-5, atol=1e-5)


def test_autotune_picks_the_fastest_and_caches_it(cache_dir):
    calls = []
    ms = {C1: 3.0, C2: 1.0, C3: 2.0}

    def run(config):
        calls.append(config)
    key = tmm.cache_key("Fake GPU", "float16", "ieee", tmm.shape_class(1000, 1000, 1000, False, "cc"))
    assert tmm.tuned_config(key, [C1, C2, C3], run, _fake_timer(ms, calls)) == C2
    assert calls == [C1, C2, C3]
    data = json.loads((cache_dir / tmm.CACHE_FILE).read_text())
    assert data["entries"][key] == C2.meta()
    # in memory: no timing at all
    assert tmm.tuned_config(key, [C1, C2, C3], run, _fake_timer(ms, calls)) == C2 and len(calls) == 3
    # a fresh process (memory cleared) reads the file and does not tune again
    tmm.clear_memory_cache()
    assert tmm.tuned_config(key, [C1, C2, C3], run, _fake_timer(ms, calls)) == C2 and len(calls) == 3
    # other keys (dtype, precision, GPU) are tuned separately
    key2 = tmm.cache_key("Fake GPU", "float32", "tf32", tmm.shape_class(1000, 1000, 1000, False, "cc"))
    assert tmm.tuned_config(key2, [C1, C3], run, _fake_timer(ms, calls)) == C3
    entries = json.loads((cache_dir / tmm.CACHE_FILE).read_text())["entries"]
    assert set(entries) == {key, key2}


def test_autotune_skips_failing_configs(cache_dir):
    def run(config):
        if config == C2:
            raise RuntimeError("out of resources: shared memory")
    timer = lambda fn: (fn(), 1.0)[1]     # noqa: E731
    assert tmm.tuned_config("k|a", [C2, C1], run, timer) == C1
    with pytest.raises(RuntimeError, match="no configuration ran"):
        tmm.tuned_config("k|b", [C2], run, timer)


def test_autotune_cache_is_shared_across_processes(cache_dir):
    key = "Fake GPU|bfloat16|ieee|64x64x64_cc"
    tmm.tuned_config(key, [C1, C3], lambda c: None, lambda fn: 1.0)
    script = (
        "from tritensor.backends.triton import matmul as tmm\n"
        "def timer(fn):\n    raise SystemExit('tuned again')\n"
        f"print(tmm.tuned_config({key!r}, [tmm.{C3!r}], lambda c: None, timer))\n")
    env = dict(os.environ, TRITENSOR_CACHE_DIR=str(cache_dir))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert repr(C1) in done.stdout


def test_damaged_cache_file_is_retuned(cache_dir):
    (cache_dir / tmm.CACHE_FILE).write_text("{not json")
    assert tmm.tuned_config("k|c", [C1], lambda c: None, lambda fn: 1.0) == C1
    assert json.loads((cache_dir / tmm.CACHE_FILE).read_text())["entries"]["k|c"] == C1.meta()


def test_candidates_fit_hopper():
    assert [tmm.family(d, p) for d, p in [("float16", "ieee"), ("bfloat16", "ieee"), ("float32", "tf32"),
                                          ("float32", "ieee"), ("float64", "ieee")]] == \
        ["16bit", "16bit", "tf32", "ieee32", "float64"]
    for fam, itemsize in [("16bit", 2), ("tf32", 4), ("ieee32", 4), ("float64", 8)]:
        for M, N, K in [(8192, 8192, 8192), (16, 4096, 4096), (100, 37, 5000)]:
            cands = tmm.candidates(M, N, K, fam)
            assert cands
            for c in cands:
                assert min(c.BLOCK_M, c.BLOCK_N, c.BLOCK_K) >= 16       # tl.dot's minimum on a GPU
                assert c.num_stages * (c.BLOCK_M + c.BLOCK_N) * c.BLOCK_K * itemsize <= tmm.SMEM_BYTES
                assert c.BLOCK_M >= 64 or M <= 32
    big = tmm.candidates(8192, 8192, 8192, "16bit")
    assert {c.BLOCK_M for c in big} >= {64, 128, 256} and {c.num_warps for c in big} == {4, 8}
    assert any(c.BLOCK_M < 64 for c in tmm.candidates(16, 4096, 4096, "16bit"))
    # IEEE float32 runs on FMA units: at most 64 accumulators per thread
    assert all(c.BLOCK_M * c.BLOCK_N // (32 * c.num_warps) <= 64 for c in tmm.CONFIGS["ieee32"])
    assert tmm.shape_class(1000, 17, 64, True, "cr") == "1024x32x64b_cr"


@pytest.mark.gpu
def test_real_gpu_autotune_and_tf32(cache_dir, rng):
    """On a GPU: tuning runs once per shape class and lands in the file; TF32 is really used
    (its error is visibly larger than IEEE's on a long K)."""
    a = _make((256, 4096), tt.float32, "cuda", rng)
    b = _make((4096, 256), tt.float32, "cuda", rng)
    exact = _host(a) @ _host(b)
    ieee = np.abs(_host(a @ b) - exact).max()
    tt.backends.cuda.matmul.allow_tf32 = True
    tf32 = np.abs(_host(a @ b) - exact).max()
    assert tf32 > 4 * ieee
    entries = json.loads((cache_dir / tmm.CACHE_FILE).read_text())["entries"]
    assert any("|float32|ieee|" in k for k in entries) and any("|float32|tf32|" in k for k in entries)


def test_spmm_is_mm_for_a_sparse_or_dense_first_operand():
    """torch.spmm is mm under another name (the GCN example's sparse adjacency @ dense features):
    hand-computed values, MmBackward0's gradients, mm's errors; a function only, as torch's."""
    a = tt.tensor([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]])
    b = tt.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    expected = [[11.0, 14.0], [9.0, 12.0]]
    assert tt.spmm(a, b).tolist() == expected
    sparse = a.to_sparse().requires_grad_()
    dense = b.clone().requires_grad_()
    out = tt.spmm(sparse, dense)
    assert out.layout == tt.strided and out.tolist() == expected
    out.sum().backward()
    assert dense.grad.tolist() == [[1.0, 1.0], [3.0, 3.0], [2.0, 2.0]]        # a^T @ ones
    assert not hasattr(tt.Tensor, "spmm")
    with pytest.raises(RuntimeError, match=r"^mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x2\)$"):
        tt.spmm(a, tt.ones(2, 2))
    with pytest.raises(RuntimeError, match="^self must be a matrix$"):
        tt.spmm(tt.ones(3), b)
