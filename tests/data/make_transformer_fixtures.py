"""Records tests/data/transformer_fixtures.npz with PyTorch (run once: /work/torchenv/bin/python
tests/data/make_transformer_fixtures.py from the repository root).

Per case: the module's state_dict under torch's names ("<case>/sd/<name>"), the inputs
("<case>/in/<name>": tensors and masks), the outputs ("<case>/out/<name>") and a few gradients of
sum(output * grad_out) ("<case>/grad/<name>"). The modules have dropout 0 and torch's MHA fast
path is off (torch.backends.mha.set_fastpath_enabled(False)), so the normal path is recorded, the
one tritensor runs. And the losses of the small GPT of tests/gpt_model.py trained from its NumPy
init ("gpt/losses"). float32 throughout.
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import gpt_model  # noqa: E402

torch.backends.mha.set_fastpath_enabled(False)
torch.manual_seed(0)
rng = np.random.default_rng(24)
OUT = {}


def t(shape):
    return torch.tensor(rng.standard_normal(shape).astype(np.float32))


def causal(n):
    return torch.ones(n, n, dtype=torch.bool).triu(1)


def padding(batch, length, pad_last):
    m = torch.zeros(batch, length, dtype=torch.bool)
    for i, k in enumerate(pad_last):
        if k:
            m[i, -k:] = True
    return m


def record(case, module, inputs, call, grads=()):
    """Run call(module, **inputs); store the state_dict, inputs, outputs and gradients."""
    for name, v in module.state_dict().items():
        OUT[f"{case}/sd/{name}"] = v.detach().numpy()
    leaves = {}
    for name, v in inputs.items():
        if isinstance(v, torch.Tensor):
            OUT[f"{case}/in/{name}"] = v.numpy()
            if v.dtype.is_floating_point and name in grads:
                v = v.clone().requires_grad_()
                leaves[name] = v
        inputs = {**inputs, name: v}
    outs = call(module, **inputs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    loss = 0
    for i, o in enumerate(outs):
        if o is None:
            continue
        OUT[f"{case}/out/{i}"] = o.detach().numpy()
        g = torch.tensor(np.cos(np.arange(o.numel(), dtype=np.float32)).reshape(o.shape))
        OUT[f"{case}/gout/{i}"] = g.numpy()
        loss = loss + (o * g).sum()
    if grads:
        loss.backward()
        params = dict(module.named_parameters())
        for name in grads:
            got = leaves[name].grad if name in leaves else params[name].grad
            OUT[f"{case}/grad/{name}"] = got.numpy()


# ---------------------------------------------------------------- MultiheadAttention
nn = torch.nn
m = nn.MultiheadAttention(8, 2)
x = t((5, 2, 8))
record("mha_basic", m, {"x": x, "attn_mask": causal(5), "key_padding_mask": padding(2, 5, [0, 2])},
       lambda m, x, attn_mask, key_padding_mask: m(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask),
       grads=("x", "in_proj_weight", "out_proj.bias"))

m = nn.MultiheadAttention(8, 2, kdim=6, vdim=4, add_bias_kv=True, add_zero_attn=True, batch_first=True)
record("mha_kv", m, {"q": t((2, 5, 8)), "k": t((2, 6, 6)), "v": t((2, 6, 4)), "attn_mask": t((4, 5, 6))},
       lambda m, q, k, v, attn_mask: m(q, k, v, attn_mask=attn_mask, average_attn_weights=False),
       grads=("q", "v", "q_proj_weight", "k_proj_weight", "bias_k", "bias_v"))

m = nn.MultiheadAttention(8, 2, bias=False)
record("mha_sdpa", m, {"q": t((5, 2, 8)), "kv": t((6, 2, 8)), "key_padding_mask": padding(2, 6, [1, 3])},
       lambda m, q, kv, key_padding_mask: m(q, kv, kv, key_padding_mask=key_padding_mask, need_weights=False),
       grads=("q", "kv", "in_proj_weight"))

m = nn.MultiheadAttention(8, 4)
record("mha_unbatched", m, {"q": t((5, 8)), "kv": t((6, 8)), "attn_mask": t((5, 6))},
       lambda m, q, kv, attn_mask: m(q, kv, kv, attn_mask=attn_mask))

m = nn.MultiheadAttention(8, 2, batch_first=True)
record("mha_causal", m, {"x": t((2, 5, 8)), "attn_mask": causal(5)},
       lambda m, x, attn_mask: m(x, x, x, attn_mask=attn_mask, need_weights=False, is_causal=True),
       grads=("x", "in_proj_weight"))

# ---------------------------------------------------------------- encoder / decoder layers
m = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
record("enc_post_relu", m, {"src": t((5, 2, 8)), "src_mask": nn.Transformer.generate_square_subsequent_mask(5),
                            "src_key_padding_mask": padding(2, 5, [0, 1]).float() * -1e9},
       lambda m, src, src_mask, src_key_padding_mask: m(src, src_mask, src_key_padding_mask),
       grads=("src", "linear1.weight", "norm2.bias", "self_attn.in_proj_weight"))

m = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu", norm_first=True, batch_first=True)
record("enc_pre_gelu", m, {"src": t((2, 5, 8)), "src_key_padding_mask": padding(2, 5, [2, 0])},
       lambda m, src, src_key_padding_mask: m(src, src_key_padding_mask=src_key_padding_mask),
       grads=("src", "norm1.weight", "linear2.weight"))

m = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0)
record("dec_post_relu", m, {"tgt": t((4, 2, 8)), "memory": t((5, 2, 8)), "tgt_mask": causal(4),
                            "memory_key_padding_mask": padding(2, 5, [1, 0])},
       lambda m, tgt, memory, tgt_mask, memory_key_padding_mask: m(
           tgt, memory, tgt_mask=tgt_mask, memory_key_padding_mask=memory_key_padding_mask),
       grads=("tgt", "memory", "multihead_attn.in_proj_weight", "norm3.weight"))

m = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, activation=F.gelu, norm_first=True, batch_first=True,
                               bias=False)
record("dec_pre_gelu_nobias", m, {"tgt": t((2, 4, 8)), "memory": t((2, 5, 8))},
       lambda m, tgt, memory: m(tgt, memory, tgt_is_causal=False), grads=("tgt", "linear1.weight"))

# ---------------------------------------------------------------- a 2-layer nn.Transformer with masks
m = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=16, dropout=0.0,
                   batch_first=True)
record("transformer", m, {"src": t((2, 6, 8)), "tgt": t((2, 5, 8)),
                          "tgt_mask": nn.Transformer.generate_square_subsequent_mask(5),
                          "src_key_padding_mask": padding(2, 6, [0, 2]),
                          "memory_key_padding_mask": padding(2, 6, [0, 2])},
       lambda m, src, tgt, tgt_mask, src_key_padding_mask, memory_key_padding_mask: m(
           src, tgt, tgt_mask=tgt_mask, src_key_padding_mask=src_key_padding_mask,
           memory_key_padding_mask=memory_key_padding_mask),
       grads=("src", "tgt", "encoder.layers.0.self_attn.in_proj_weight", "decoder.layers.1.linear1.weight",
              "decoder.norm.weight"))

# ---------------------------------------------------------------- the small GPT's training losses
torch.manual_seed(0)
gpt = gpt_model.load_init(torch, gpt_model.build(torch))
OUT["gpt/losses"] = np.array(gpt_model.train(torch, gpt, 6), np.float64)

path = os.path.join(HERE, "transformer_fixtures.npz")
np.savez_compressed(path, **OUT)
print(path, os.path.getsize(path), "bytes,", len(OUT), "arrays; gpt losses", OUT["gpt/losses"])
