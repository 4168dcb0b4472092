"""nn.MultiheadAttention, F.multi_head_attention_forward, the Transformer encoder/decoder layers
and nn.Transformer (issue 24 item 2) against PyTorch 2.13: outputs and gradients recorded by
tests/data/make_transformer_fixtures.py from the same weights (state_dicts under torch's names,
loaded here), then torch's parameter layout, masks and error texts."""
import os
import warnings

import numpy as np
import pytest

import tritensor as tt
import tritensor.nn.functional as F

nn = tt.nn
DATA = np.load(os.path.join(os.path.dirname(__file__), "data", "transformer_fixtures.npz"))
DEVICES = ["cpu", "cuda"]


def _causal(n):
    return tt.ones(n, n, dtype=tt.bool).triu(1)


# case -> (the module as the fixture script builds it, the call, the gradients recorded)
CASES = {
    "mha_basic": (lambda: nn.MultiheadAttention(8, 2),
                  lambda m, x, attn_mask, key_padding_mask: m(x, x, x, attn_mask=attn_mask,
                                                              key_padding_mask=key_padding_mask)),
    "mha_kv": (lambda: nn.MultiheadAttention(8, 2, kdim=6, vdim=4, add_bias_kv=True, add_zero_attn=True,
                                             batch_first=True),
               lambda m, q, k, v, attn_mask: m(q, k, v, attn_mask=attn_mask, average_attn_weights=False)),
    "mha_sdpa": (lambda: nn.MultiheadAttention(8, 2, bias=False),
                 lambda m, q, kv, key_padding_mask: m(q, kv, kv, key_padding_mask=key_padding_mask,
                                                      need_weights=False)),
    "mha_unbatched": (lambda: nn.MultiheadAttention(8, 4),
                      lambda m, q, kv, attn_mask: m(q, kv, kv, attn_mask=attn_mask)),
    "mha_causal": (lambda: nn.MultiheadAttention(8, 2, batch_first=True),
                   lambda m, x, attn_mask: m(x, x, x, attn_mask=attn_mask, need_weights=False, is_causal=True)),
    "enc_post_relu": (lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0),
                      lambda m, src, src_mask, src_key_padding_mask: m(src, src_mask, src_key_padding_mask)),
    "enc_pre_gelu": (lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu", norm_first=True,
                                                        batch_first=True),
                     lambda m, src, src_key_padding_mask: m(src, src_key_padding_mask=src_key_padding_mask)),
    "dec_post_relu": (lambda: nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0),
                      lambda m, tgt, memory, tgt_mask, memory_key_padding_mask: m(
                          tgt, memory, tgt_mask=tgt_mask, memory_key_padding_mask=memory_key_padding_mask)),
    "dec_pre_gelu_nobias": (lambda: nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, activation=F.gelu,
                                                               norm_first=True, batch_first=True, bias=False),
                            lambda m, tgt, memory: m(tgt, memory, tgt_is_causal=False)),
    "transformer": (lambda: nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
                                           dim_feedforward=16, dropout=0.0, batch_first=True),
                    lambda m, src, tgt, tgt_mask, src_key_padding_mask, memory_key_padding_mask: m(
                        src, tgt, tgt_mask=tgt_mask, src_key_padding_mask=src_key_padding_mask,
                        memory_key_padding_mask=memory_key_padding_mask)),
}
# the emulated device runs the cases with the most paths (each launch is interpreted)
CUDA_CASES = ("mha_basic", "mha_kv", "mha_sdpa", "transformer")


def _fixture(case, kind):
    prefix = f"{case}/{kind}/"
    return {k[len(prefix):]: DATA[k] for k in DATA.files if k.startswith(prefix)}


def _close(got, want, what):
    np.testing.assert_allclose(got.detach().cpu().numpy(), want, rtol=2e-4, atol=2e-5, err_msg=what)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", list(CASES))
def test_matches_torch(case, device):
    if device == "cuda" and case not in CUDA_CASES:
        pytest.skip("cpu only: the emulated device runs " + ", ".join(CUDA_CASES))
    build, call = CASES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # enable_nested_tensor's notice
        m = build()
    m.load_state_dict({k: tt.tensor(v) for k, v in _fixture(case, "sd").items()})
    m.to(device)
    grads = _fixture(case, "grad")
    inputs = {}
    for name, v in _fixture(case, "in").items():
        inputs[name] = tt.tensor(v, device=device, requires_grad=name in grads)
    outs = call(m, **inputs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    want, gout = _fixture(case, "out"), _fixture(case, "gout")
    assert sorted(want) == sorted(str(i) for i, o in enumerate(outs) if o is not None)
    loss = 0
    for i, o in enumerate(outs):
        if o is not None:
            _close(o, want[str(i)], f"{case} output {i}")
            loss = loss + (o * tt.tensor(gout[str(i)], device=device)).sum()
    if grads:
        loss.backward()
        params = dict(m.named_parameters())
        for name, g in grads.items():
            _close(inputs[name].grad if name in inputs else params[name].grad, g, f"{case} grad {name}")


def test_parameters_as_torch():
    m = nn.MultiheadAttention(8, 2)
    assert [(n, tuple(p.shape)) for n, p in m.named_parameters()] == [
        ("in_proj_weight", (24, 8)), ("in_proj_bias", (24,)), ("out_proj.weight", (8, 8)), ("out_proj.bias", (8,))]
    assert m._qkv_same_embed_dim and m.q_proj_weight is None and m.bias_k is None
    assert m.in_proj_bias.abs().sum().item() == 0 and m.out_proj.bias.abs().sum().item() == 0
    bound = (6 / (24 + 8)) ** 0.5      # xavier_uniform_ on (3E, E)
    assert 0.5 * bound < m.in_proj_weight.abs().max().item() <= bound
    assert repr(m) == ("MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear(in_features=8, "
                       "out_features=8, bias=True)\n)")
    m = nn.MultiheadAttention(8, 2, kdim=6, vdim=4, add_bias_kv=True, bias=False)
    assert [(n, tuple(p.shape)) for n, p in m.named_parameters()] == [
        ("q_proj_weight", (8, 8)), ("k_proj_weight", (8, 6)), ("v_proj_weight", (8, 4)), ("bias_k", (1, 1, 8)),
        ("bias_v", (1, 1, 8)), ("out_proj.weight", (8, 8))]
    layer = nn.TransformerDecoderLayer(8, 2, 16)
    assert list(layer.state_dict()) == [
        "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight", "self_attn.out_proj.bias",
        "multihead_attn.in_proj_weight", "multihead_attn.in_proj_bias", "multihead_attn.out_proj.weight",
        "multihead_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
        "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias", "norm3.weight", "norm3.bias"]
    from tritensor.nn.modules import activation, linear
    assert activation.MultiheadAttention is nn.MultiheadAttention      # torch's module homes
    assert type(m.out_proj) is linear.NonDynamicallyQuantizableLinear and isinstance(m.out_proj, nn.Linear)
    assert set(_fixture("transformer", "sd")) == set(
        nn.Transformer(8, 2, 2, 2, 16, batch_first=True).state_dict())


def test_square_subsequent_mask_and_causal_detection():
    mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=tt.float64)
    assert mask.dtype is tt.float64
    assert mask.tolist() == [[0.0, -np.inf, -np.inf], [0.0, 0.0, -np.inf], [0.0, 0.0, 0.0]]
    from tritensor.nn.modules.transformer import _detect_is_causal_mask
    assert _detect_is_causal_mask(nn.Transformer.generate_square_subsequent_mask(4), None, 4)
    assert not _detect_is_causal_mask(tt.zeros(4, 4), None, 4)
    assert _detect_is_causal_mask(None, True) and not _detect_is_causal_mask(None, None)


def test_mask_forms_agree():
    """A bool mask is the float mask with -inf where True; need_weights=False (SDPA) gives the
    explicit path's output; batch_first is the transposed layout; a causal mask with is_causal
    as well."""
    tt.manual_seed(0)
    m = nn.MultiheadAttention(8, 2)
    x = tt.randn(5, 3, 8)
    kpm = tt.tensor([[False] * 5, [False, False, False, True, True], [False] * 4 + [True]])
    fm = tt.zeros(3, 5).masked_fill(kpm, float("-inf"))
    a, wa = m(x, x, x, key_padding_mask=kpm, attn_mask=_causal(5))
    b, wb = m(x, x, x, key_padding_mask=fm, attn_mask=nn.Transformer.generate_square_subsequent_mask(5))
    c, wc = m(x, x, x, key_padding_mask=kpm, attn_mask=_causal(5), need_weights=False)
    assert wc is None
    for t in (b, c):
        np.testing.assert_allclose(t.detach().numpy(), a.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(wb.detach().numpy(), wa.detach().numpy(), rtol=1e-6)
    assert np.all(wa.detach().numpy()[1, :, 3:] == 0)      # padded keys get no weight
    d, _ = m(x, x, x, attn_mask=_causal(5), need_weights=False, is_causal=True)
    e, _ = m(x, x, x, attn_mask=_causal(5))
    np.testing.assert_allclose(d.detach().numpy(), e.detach().numpy(), rtol=1e-5, atol=1e-6)
    mb = nn.MultiheadAttention(8, 2, batch_first=True)
    mb.load_state_dict(m.state_dict())
    f, wf = mb(x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1), attn_mask=_causal(5),
               average_attn_weights=False)
    np.testing.assert_allclose(f.transpose(0, 1).detach().numpy(), e.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert tuple(wf.shape) == (3, 2, 5, 5)
    np.testing.assert_allclose(wf.mean(1).detach().numpy(), m(x, x, x, attn_mask=_causal(5))[1].detach().numpy(),
                               rtol=1e-5, atol=1e-7)


def test_dropout_zeroes_weights_in_training_only():
    """Training: each weight is dropped (0) or kept and scaled by 1 / (1 - p); eval: no dropout."""
    tt.manual_seed(1)
    m = nn.MultiheadAttention(8, 2, dropout=0.5)
    x = tt.randn(4, 2, 8)
    _, w = m(x, x, x, average_attn_weights=False)
    m.eval()
    _, w0 = m(x, x, x, average_attn_weights=False)
    w, w0 = w.detach().numpy(), w0.detach().numpy()
    np.testing.assert_allclose(w0.sum(-1), 1.0, rtol=1e-6)
    dropped = w == 0
    assert dropped.any() and not dropped.all()
    np.testing.assert_allclose(w[~dropped], 2 * w0[~dropped], rtol=1e-6)


def test_errors_as_torch():
    with pytest.raises(AssertionError, match="^embed_dim must be divisible by num_heads$"):
        nn.MultiheadAttention(10, 3)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0, got embed_dim=0 and "
                                         "num_heads=2 instead"):
        nn.MultiheadAttention(0, 2)
    m = nn.MultiheadAttention(8, 2)
    x = tt.randn(5, 2, 8)
    with pytest.raises(RuntimeError, match=r"^The shape of the 2D attn_mask is torch.Size\(\[4, 5\]\), but should "
                                           r"be \(5, 5\).$"):
        m(x, x, x, attn_mask=tt.zeros(4, 5))
    with pytest.raises(RuntimeError, match=r"The shape of the 3D attn_mask is torch.Size\(\[2, 5, 5\]\), but should "
                                           r"be \(4, 5, 5\)."):
        m(x, x, x, attn_mask=tt.zeros(2, 5, 5))
    with pytest.raises(AssertionError, match="only bool and floating types of key_padding_mask are supported"):
        m(x, x, x, key_padding_mask=tt.zeros(2, 5, dtype=tt.int64))
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and attn_mask is deprecated. Use "
                                         "same type for both instead."):
        m(x, x, x, key_padding_mask=tt.zeros(2, 5, dtype=tt.bool), attn_mask=tt.zeros(5, 5))
    with pytest.raises(AssertionError, match="Expected key_padded_mask.shape\\[1\\] to be 5, but got 4"):
        m(x, x, x, key_padding_mask=tt.zeros(2, 4, dtype=tt.bool))
    with pytest.raises(AssertionError, match="For batched \\(3-D\\) `query`, expected `key` and `value` to be 3-D but "
                                             "found 2-D and 3-D tensors respectively"):
        m(x, x[0], x)
    with pytest.raises(AssertionError, match="query should be unbatched 2D or batched 3D tensor but received 4-D"):
        m(x[None], x[None], x[None])
    with pytest.raises(RuntimeError, match="^Need attn_mask if specifying the is_causal hint."):
        m(x, x, x, is_causal=True)
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 8, but got 6"):
        m(x[..., :6], x[..., :6], x[..., :6])
    with pytest.raises(RuntimeError, match="^activation should be relu/gelu, not tanh$"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")
    with pytest.warns(UserWarning, match="enable_nested_tensor is True"):
        t = nn.Transformer(8, 2, 1, 1, 16)
    with pytest.raises(RuntimeError, match="^the batch number of src and tgt must be equal$"):
        t(tt.randn(5, 2, 8), tt.randn(4, 3, 8))
    with pytest.raises(RuntimeError, match="^the feature number of src and tgt must be equal to d_model$"):
        t(tt.randn(5, 2, 8), tt.randn(4, 2, 6))


def test_enable_nested_tensor_warning_as_torch():
    layer = nn.TransformerEncoderLayer(8, 2, 16)
    with pytest.warns(UserWarning, match=r"^enable_nested_tensor is True, but self.use_nested_tensor is False because "
                                         r"encoder_layer.self_attn.batch_first was not True\(use batch_first for "
                                         r"better inference performance\)$"):
        enc = nn.TransformerEncoder(layer, 2)
    assert not enc.use_nested_tensor and enc.layers[0] is not enc.layers[1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2)
        nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
    assert enc.use_nested_tensor
    enc.eval()      # torch's nested path would run here: the normal path gives the same valid rows
    x = tt.randn(2, 5, 8)
    kpm = tt.tensor([[False] * 5, [False, False, False, True, True]])
    with tt.no_grad():
        full = enc(x, src_key_padding_mask=kpm)
        short = enc(x[1:, :3])
    np.testing.assert_allclose(full[1, :3].numpy(), short[0].numpy(), rtol=1e-5, atol=1e-6)


def test_backends_mha_fastpath_flag():
    """torch.backends.mha's switch is kept (tritensor has no fast path: outputs do not change)."""
    assert tt.backends.mha.get_fastpath_enabled() is True
    tt.manual_seed(2)
    m = nn.MultiheadAttention(8, 2, batch_first=True).eval()
    x = tt.randn(2, 3, 8)
    with tt.no_grad():
        a = m(x, x, x)[0]
        tt.backends.mha.set_fastpath_enabled(False)
        try:
            assert tt.backends.mha.get_fastpath_enabled() is False
            b = m(x, x, x)[0]
        finally:
            tt.backends.mha.set_fastpath_enabled(True)
    assert np.array_equal(a.numpy(), b.numpy())
