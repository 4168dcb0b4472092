"""F.scaled_dot_product_attention: values and gradients against torch 2.13's (recorded in
tests/data/attention_values.npz by tests/data/make_attention_values.py, cases in
tests/data/attention_cases.py), torch's errors, every dtype against a float64 math oracle written
here in NumPy (the whole L x S matrix, independently of the blockwise reference), dropout's
statistics and reproducibility."""
import math
import pathlib
import sys

import numpy as np
import pytest

import tritensor as tt

F = tt.nn.functional
DATA = pathlib.Path(__file__).parent / "data"
sys.path.insert(0, str(DATA))
import attention_cases  # noqa: E402

VALUES = np.load(DATA / "attention_values.npz")


def _t(a, device, dtype=tt.float64, grad=False):
    if a is None:
        return None
    if a.dtype == np.bool_:
        return tt.tensor(a, device=device)
    return tt.tensor(a, dtype=dtype, device=device, requires_grad=grad)


def _np(t):
    return t.detach().cpu().float().numpy() if t.dtype in (tt.float16, tt.bfloat16) else t.detach().cpu().numpy()


def oracle(q, k, v, mask=None, is_causal=False, scale=None, enable_gqa=False):
    """The math definition in float64 NumPy: softmax over the full L x S scores, fully masked rows 0."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    if enable_gqa:
        k = np.repeat(k, q.shape[-3] // k.shape[-3], axis=-3)
        v = np.repeat(v, q.shape[-3] // v.shape[-3], axis=-3)
    s = (1 / math.sqrt(q.shape[-1])) if scale is None else scale
    scores = (q @ np.swapaxes(k, -1, -2)) * s
    L, S = q.shape[-2], k.shape[-2]
    if is_causal:
        mask = np.tril(np.ones((L, S), bool))
    if mask is not None:
        scores = scores + (np.where(mask, 0.0, -np.inf) if mask.dtype == np.bool_ else mask)
    m = scores.max(-1, keepdims=True, initial=-np.inf)
    e = np.exp(scores - np.where(np.isneginf(m), 0, m))
    z = e.sum(-1, keepdims=True)
    w = np.where(z > 0, e / np.where(z > 0, z, 1), 0.0)
    return w @ v


# --------------------------------------------------------------------------- torch's values
@pytest.mark.parametrize("name", sorted(attention_cases.CASES))
def test_matches_torch_values_and_gradients(name, device):
    if device != "cpu" and name in ("batch_broadcast", "three_d"):
        pytest.skip("cpu covers the layout; the emulated device runs the smaller cases")
    q, k, v, m, g, kwargs = attention_cases.arrays(name)
    float_mask = m is not None and m.dtype != np.bool_
    tq, tk, tv = (_t(a, device, grad=True) for a in (q, k, v))
    tm = _t(m, device, grad=float_mask)
    out = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm, **kwargs)
    np.testing.assert_allclose(_np(out), VALUES[f"{name}/out"], rtol=1e-10, atol=1e-12)
    inputs = [tq, tk, tv] + ([tm] if float_mask else [])
    grads = tt.autograd.grad(out, inputs, tt.tensor(g, device=device), allow_unused=True)
    for key, t, gr in zip(("dq", "dk", "dv", "dmask"), inputs, grads):
        got = np.zeros(t.shape) if gr is None else _np(gr)
        np.testing.assert_allclose(got, VALUES[f"{name}/{key}"], rtol=1e-9, atol=1e-11, err_msg=key)


def test_fully_masked_rows_give_zeros_and_zero_gradients(device):
    """torch 2.13 on cpu (math and the fused flash kernel alike): a row no key takes part in
    gives 0, and no gradient flows through it (not NaN)."""
    rng = np.random.default_rng(3)
    q, k, v = (_t(rng.standard_normal(s), device, grad=True) for s in ((1, 1, 3, 4), (1, 1, 5, 4), (1, 1, 5, 4)))
    mask = np.ones((3, 5), bool)
    mask[1] = False
    for m in (_t(mask, device), _t(np.where(mask, 0.0, -np.inf), device)):
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
        assert np.all(_np(out)[0, 0, 1] == 0)
        gq, = tt.autograd.grad(out.sum(), [q])
        assert np.all(_np(gq)[0, 0, 1] == 0) and np.isfinite(_np(gq)).all()


# --------------------------------------------------------------------------- every dtype
@pytest.mark.parametrize("dtype", [tt.float16, tt.bfloat16, tt.float32])
def test_low_precision_against_the_float64_oracle(dtype):
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal(s) for s in ((2, 2, 9, 16), (2, 1, 13, 16), (2, 1, 13, 16)))
    mask = rng.random((9, 13)) < 0.8
    args = [tt.tensor(a, dtype=dtype) for a in (q, k, v)]
    # a float mask in float32 (always accepted) and a bool one
    for m, kwargs in ((mask, {}), (np.where(mask, 0.0, -np.inf).astype(np.float32), {}), (None, {"is_causal": True})):
        tm = None if m is None else tt.tensor(m)
        out = F.scaled_dot_product_attention(*args, attn_mask=tm, enable_gqa=True, **kwargs)
        assert out.dtype is dtype and out.shape == (2, 2, 9, 16)
        qr, kr, vr = (_np(a).astype(np.float64) for a in args)
        expect = oracle(qr, kr, vr, None if m is None else m, enable_gqa=True, **kwargs)
        tol = {tt.float16: 4e-3, tt.bfloat16: 3e-2, tt.float32: 1e-5}[dtype]
        np.testing.assert_allclose(_np(out), expect, rtol=tol, atol=tol)


def test_a_mask_in_the_query_dtype_and_in_float32():
    rng = np.random.default_rng(6)
    q, k, v = (tt.tensor(rng.standard_normal(s), dtype=tt.float16) for s in ((1, 4, 8), (1, 6, 8), (1, 6, 8)))
    m = rng.standard_normal((4, 6))
    a = F.scaled_dot_product_attention(q, k, v, attn_mask=tt.tensor(m, dtype=tt.float16))
    b = F.scaled_dot_product_attention(q, k, v, attn_mask=tt.tensor(m, dtype=tt.float32))
    expect = oracle(_np(q), _np(k), _np(v), m.astype(np.float16).astype(np.float64))
    np.testing.assert_allclose(_np(a), expect, rtol=4e-3, atol=4e-3)
    np.testing.assert_allclose(_np(b), expect, rtol=4e-3, atol=4e-3)


# --------------------------------------------------------------------------- torch's errors
def _r(*shape, dtype=tt.float32):
    return tt.zeros(*shape, dtype=dtype)


Q, K, V = (2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 6)
ERRORS = [   # (args, kwargs, error type, torch 2.13's message)
    ((_r(8), _r(8), _r(8)), {}, RuntimeError,
     "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: 1 key.dim: 1 and "
     "value.dim: 1 instead."),
    ((_r(*Q), _r(2, 3, 7, 4), _r(*V)), {}, RuntimeError,
     "Expected size for first two dimensions of batch2 tensor to be: [6, 8] but got: [6, 4]."),
    ((_r(*Q), _r(*K), _r(2, 3, 6, 6)), {}, RuntimeError,
     "Expected size for first two dimensions of batch2 tensor to be: [6, 7] but got: [6, 6]."),
    ((_r(5, 8), _r(7, 4), _r(7, 6)), {}, RuntimeError, "mat1 and mat2 shapes cannot be multiplied (5x8 and 4x7)"),
    ((_r(*Q), _r(*K, dtype=tt.float64), _r(*V)), {}, RuntimeError,
     "Expected query, key, and value to have the same dtype, but got query.dtype: float key.dtype: double and "
     "value.dtype: float instead."),
    ((_r(1, 2, 3, dtype=tt.int64),) * 3, {}, RuntimeError, "expected scalar type Float but found Long"),
    ((_r(*Q), _r(*K), _r(*V)), {"attn_mask": _r(5, 7, dtype=tt.int64)}, RuntimeError,
     "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: long int and"
     "  query.dtype: float instead."),
    ((_r(*Q), _r(*K), _r(*V)), {"attn_mask": _r(5, 7, dtype=tt.float16)}, RuntimeError,
     "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: c10::Half "
     "and  query.dtype: float instead."),
    ((_r(*Q), _r(*K), _r(*V)), {"attn_mask": _r(5, 6, dtype=tt.bool)}, RuntimeError,
     "The size of tensor a (7) must match the size of tensor b (6) at non-singleton dimension 3"),
    ((_r(*Q), _r(*K), _r(*V)), {"attn_mask": _r(1, 1, 1, 5, 7, dtype=tt.bool)}, RuntimeError,
     "output with shape [2, 3, 5, 7] doesn't match the broadcast shape [1, 2, 3, 5, 7]"),
    ((_r(*Q), _r(*K), _r(*V)), {"attn_mask": _r(5, 7, dtype=tt.bool), "is_causal": True}, RuntimeError,
     "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True"),
    ((_r(2, 6, 5, 8), _r(2, 3, 7, 8), _r(2, 3, 7, 6)), {}, RuntimeError,
     "The size of tensor a (6) must match the size of tensor b (3) at non-singleton dimension 1"),
    ((_r(2, 6, 5, 8), _r(2, 4, 7, 8), _r(2, 4, 7, 6)), {"enable_gqa": True}, RuntimeError,
     "Number of heads in key and value must divide the number of heads in "),
    ((_r(*Q), _r(*K), _r(*V)), {"dropout_p": 1.5}, RuntimeError,
     "dropout probability has to be between 0 and 1, but got 1.5"),
    (([1.0], _r(*K), _r(*V)), {}, TypeError,
     "scaled_dot_product_attention(): argument 'query' (position 1) must be Tensor, not list"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_torch_errors(case):
    args, kwargs, error, message = ERRORS[case]
    with pytest.raises(error) as info:
        F.scaled_dot_product_attention(*args, **kwargs)
    assert str(info.value) == message


def test_gqa_needs_a_heads_dim():
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got -3\)"):
        F.scaled_dot_product_attention(_r(2, 3), _r(2, 3), _r(2, 3), enable_gqa=True)


# --------------------------------------------------------------------------- dropout
def test_dropout_one_and_negative():
    rng = np.random.default_rng(8)
    q, k, v = (tt.tensor(rng.standard_normal(s)) for s in ((1, 2, 4, 4), (1, 2, 6, 4), (1, 2, 6, 4)))
    assert np.all(_np(F.scaled_dot_product_attention(q, k, v, dropout_p=1.0)) == 0)
    # torch drops nothing for dropout_p <= 0
    np.testing.assert_allclose(_np(F.scaled_dot_product_attention(q, k, v, dropout_p=-0.5)),
                               oracle(_np(q), _np(k), _np(v)), rtol=1e-5, atol=1e-6)


def test_dropout_keeps_the_expectation_and_is_reproducible(device):
    """With v = identity the output is the dropped, rescaled weight matrix itself: about a
    fraction p of zeros, the kept ones w / (1 - p); a seeded run repeats exactly."""
    rng = np.random.default_rng(9)
    L, S, p = 16, 32, 0.25
    q = tt.tensor(rng.standard_normal((2, 2, L, 8)), dtype=tt.float32, device=device)
    k = tt.tensor(rng.standard_normal((2, 2, S, 8)), dtype=tt.float32, device=device)
    v = tt.eye(S, device=device).expand(2, 2, S, S)
    tt.manual_seed(7)
    a = _np(F.scaled_dot_product_attention(q, k, v, dropout_p=p))
    tt.manual_seed(7)
    b = _np(F.scaled_dot_product_attention(q, k, v, dropout_p=p))
    np.testing.assert_array_equal(a, b)
    c = _np(F.scaled_dot_product_attention(q, k, v, dropout_p=p))
    assert not np.array_equal(a, c)          # the generator moved on
    w = oracle(_np(q), _np(k), _np(v))
    dropped = a == 0
    assert abs(dropped.mean() - p) < 0.05
    np.testing.assert_allclose(a[~dropped], (w / (1 - p))[~dropped], rtol=1e-5, atol=1e-6)


def _dropped_weights(q, k, p, seed):
    """The dropped, rescaled attention weights of a seeded run (value = identity)."""
    S = k.shape[-2]
    v = tt.eye(S, dtype=q.dtype, device=q.device).expand(*q.shape[:-2], S, S)
    tt.manual_seed(seed)
    return _np(F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True))


def test_dropout_backward_regenerates_the_forward_mask(device):
    """The gradients of a seeded dropout run equal the math formula for the mask that run drew
    (read back from the same seed with value = identity), over odd L, S crossing the blocks."""
    rng = np.random.default_rng(11)
    L, S, E, p = 17, 20, 16, 0.3
    qa, ka, va, g = (rng.standard_normal(s) for s in ((1, 2, L, E), (1, 2, S, E), (1, 2, S, 8), (1, 2, L, 8)))
    q, k, v = (_t(a, device, grad=True) for a in (qa, ka, va))
    A = _dropped_weights(q.detach(), k.detach(), p, 21)
    tt.manual_seed(21)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
    np.testing.assert_allclose(_np(out), A @ va, rtol=1e-10, atol=1e-12)
    dq, dk, dv = tt.autograd.grad(out, [q, k, v], tt.tensor(g, device=device))
    scale = 1 / math.sqrt(E)
    scores = np.where(np.tril(np.ones((L, S), bool)), qa @ np.swapaxes(ka, -1, -2) * scale, -np.inf)
    P = np.exp(scores - scores.max(-1, keepdims=True))
    P /= P.sum(-1, keepdims=True)
    Z = (A != 0) / (1 - p)
    dP = (g @ np.swapaxes(va, -1, -2)) * Z
    dS = P * (dP - (P * dP).sum(-1, keepdims=True))
    np.testing.assert_allclose(_np(dv), np.swapaxes(A, -1, -2) @ g, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(_np(dq), dS @ ka * scale, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(_np(dk), np.swapaxes(dS, -1, -2) @ qa * scale, rtol=1e-9, atol=1e-11)


def test_dropout_draws_the_same_mask_on_cpu_and_cuda():
    """One Philox stream keyed by (seed, offset, element): the cpu reference and the kernels drop
    the same weights."""
    rng = np.random.default_rng(12)
    qa, ka = rng.standard_normal((2, 1, 9, 16)), rng.standard_normal((2, 1, 33, 16))
    a = _dropped_weights(tt.tensor(qa, dtype=tt.float32), tt.tensor(ka, dtype=tt.float32), 0.4, 5)
    b = _dropped_weights(tt.tensor(qa, dtype=tt.float32, device="cuda"), tt.tensor(ka, dtype=tt.float32, device="cuda"),
                         0.4, 5)
    np.testing.assert_array_equal(a == 0, b == 0)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_the_generator_advances_past_every_score():
    g = tt.default_generator
    rng = np.random.default_rng(13)
    q, k, v = (tt.tensor(rng.standard_normal(s)) for s in ((2, 3, 5, 4), (2, 3, 7, 4), (2, 3, 7, 4)))
    tt.manual_seed(0)
    before = g.get_offset()
    F.scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    assert g.get_offset() - before == 4 * 2 * 3 * 5 * 7      # one Philox counter per score
    F.scaled_dot_product_attention(q, k, v)
    assert g.get_offset() - before == 4 * 2 * 3 * 5 * 7      # no dropout, no draw


# --------------------------------------------------------------------------- the paths
def _small(device, grad=True, seed=14):
    rng = np.random.default_rng(seed)
    return [_t(rng.standard_normal(s), device, grad=grad) for s in ((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 3))]


def test_a_mask_that_requires_grad_takes_the_math_path_twice_differentiable():
    q, k, v = _small("cpu")
    mask = _t(np.random.default_rng(15).standard_normal((3, 5)), "cpu", grad=True)

    def fn(q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert tt.autograd.gradcheck(fn, (q, k, v, mask))
    assert tt.autograd.gradgradcheck(fn, (q, k, v, mask))


def test_the_fused_backward_has_no_derivative(device):
    q, k, v = _small(device)
    out = F.scaled_dot_product_attention(q, k, v)
    assert type(out.grad_fn).__name__ == "ScaledDotProductFlashAttentionBackward0"
    gq, = tt.autograd.grad(out.sum(), [q], create_graph=True)
    with pytest.raises(NotImplementedError, match="^the derivative for '_scaled_dot_product_flash_attention_backward' "
                                                  "is not implemented.$"):
        gq.sum().backward()


def test_sdpa_kernel_selects_the_path():
    from tritensor.nn.attention import SDPBackend, sdpa_kernel
    q, k, v = _small("cpu")
    with sdpa_kernel(SDPBackend.MATH):
        math_out = F.scaled_dot_product_attention(q, k, v)
        gq, = tt.autograd.grad(math_out.sum(), [q], create_graph=True)
        gq.sum().backward()                 # the math path is twice differentiable
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
        fused = F.scaled_dot_product_attention(q, k, v)
        assert type(fused.grad_fn).__name__ == "ScaledDotProductFlashAttentionBackward0"
        mask = _t(np.zeros((3, 5)), "cpu", grad=True)
        with pytest.raises(RuntimeError, match=r"^No available kernel\.  Aborting execution\.$"):
            F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    np.testing.assert_allclose(_np(math_out), _np(fused), rtol=1e-12, atol=1e-12)
    with sdpa_kernel([]):
        with pytest.raises(RuntimeError, match="^No viable backend for scaled_dot_product_attention was found. This "
                                               "is likely due to turning off both the math kernel and the fused "
                                               "kernels.$"):
            F.scaled_dot_product_attention(q, k, v)
    assert type(F.scaled_dot_product_attention(q, k, v).grad_fn).__name__ == "ScaledDotProductFlashAttentionBackward0"
    with pytest.raises(AssertionError, match="^Backend must be an instance of SDPBackend or a list of SDPBackend "
                                             "instances, got str$"):
        with sdpa_kernel("math"):
            pass
    assert repr(SDPBackend.MATH) == "<SDPBackend.MATH: 0>" and int(SDPBackend.CUDNN_ATTENTION) == 3


def test_aten_operators_layout_and_unsupported_arguments():
    rng = np.random.default_rng(16)
    q, k, v = (tt.tensor(rng.standard_normal(s), dtype=tt.float32) for s in ((2, 5, 4, 8), (2, 7, 2, 8), (2, 7, 2, 8)))
    out, lse, rng_state, unused, debug = tt.ops.aten._flash_attention_forward(q, k, v, None, None, 5, 7, 0.0, True,
                                                                                False)
    expect = oracle(_np(q).swapaxes(1, 2), _np(k).swapaxes(1, 2), _np(v).swapaxes(1, 2), is_causal=True,
                    enable_gqa=True).swapaxes(1, 2)
    np.testing.assert_allclose(_np(out), expect, rtol=1e-5, atol=1e-6)
    assert out.is_contiguous() and lse.shape == (2, 4, 5) and lse.dtype is tt.float32
    assert rng_state.numel() == 0 and unused.numel() == 0 and debug.numel() == 0
    tt.manual_seed(3)
    _, _, state, _, _ = tt.ops.aten._flash_attention_forward(q, k, v, None, None, 5, 7, 0.5, False, False)
    assert state.tolist() == [tt.default_generator._kernel_seed(), 0]
    with pytest.raises(NotImplementedError, match="cum_seq_q"):
        tt.ops.aten._flash_attention_forward(q, k, v, tt.tensor([0, 5]), None, 5, 7, 0.0, False, False)
    with pytest.raises(NotImplementedError, match="return_debug_mask"):
        tt.ops.aten._flash_attention_forward(q, k, v, None, None, 5, 7, 0.0, False, True)
    res = tt.ops.aten._efficient_attention_forward(q, k, v, None, None, None, None, None, 0.0, 0)
    assert res[1].numel() == 0 and res[2].numel() == 0 and res[4:] == (5, 7)
    with pytest.raises(RuntimeError, match="custom_mask_type"):
        tt.ops.aten._efficient_attention_forward(q, k, v, None, None, None, None, None, 0.0, 3)


@pytest.mark.parametrize("name", ["odd_lengths", "causal_wide", "causal_tall", "gqa", "float_mask_heads"])
def test_the_cpu_reference_across_its_key_blocks(name, monkeypatch):
    """The blockwise reference with blocks of 4 keys (its default, 256, is wider than the cases):
    the online softmax's rescaling, the causal rows and blocks it skips, torch's values again."""
    from tritensor.backends import numpy_attention
    monkeypatch.setattr(numpy_attention, "BLOCK", 4)
    q, k, v, m, g, kwargs = attention_cases.arrays(name)
    tq, tk, tv = (_t(a, "cpu", grad=True) for a in (q, k, v))
    tm = _t(m, "cpu")                              # a float mask without grad: the blockwise path
    out = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm, **kwargs)
    np.testing.assert_allclose(_np(out), VALUES[f"{name}/out"], rtol=1e-10, atol=1e-12)
    for key, gr in zip(("dq", "dk", "dv"), tt.autograd.grad(out, [tq, tk, tv], tt.tensor(g))):
        np.testing.assert_allclose(_np(gr), VALUES[f"{name}/{key}"], rtol=1e-9, atol=1e-11, err_msg=key)


def test_the_cpu_reference_keeps_dropout_across_key_blocks(monkeypatch):
    """The same seeded dropout run with one key block and with blocks of 4 (the Philox draw is
    keyed by the element, not by the block)."""
    from tritensor.backends import numpy_attention
    q, k, v = _small("cpu", grad=False, seed=17)
    tt.manual_seed(4)
    a = _np(F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, is_causal=True))
    monkeypatch.setattr(numpy_attention, "BLOCK", 2)
    tt.manual_seed(4)
    b = _np(F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, is_causal=True))
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_a_broadcast_bool_mask_over_no_keys_reads_nothing(device):
    """float64 turns a bool mask into an additive one over the mask's own elements (its broadcast
    dims stay broadcast); with no keys there are none: zeros out, zero gradients, as torch."""
    q = _t(np.ones((1, 2, 3, 4)), device, grad=True)
    k, v = _t(np.ones((1, 2, 0, 4)), device), _t(np.ones((1, 2, 0, 2)), device)
    mask = tt.ones(1, 0, dtype=tt.bool, device=device).expand(3, 0)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    gq, = tt.autograd.grad(out.sum(), [q])
    assert out.shape == (1, 2, 3, 2) and np.all(_np(out) == 0) and np.all(_np(gq) == 0)
