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
    if device != "cpu" and name in ("batch_broadcast", "odd_lengths", "three_d"):
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
