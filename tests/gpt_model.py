"""A minGPT-style model written once for any torch-like library (``lib`` is tritensor or torch):
token and position embeddings, pre-norm blocks of causal self-attention
(F.scaled_dot_product_attention(is_causal=True)) and a GELU MLP, a final LayerNorm and an lm_head
tied to the token embedding. Used by tests/test_gpt.py, bench/test_bench_gpt.py and
tests/data/make_transformer_fixtures.py (which records torch's losses from the same init).

The init is drawn with NumPy from a seed (N(0, 0.02) matrices and embeddings, zero biases, unit
LayerNorm weights), so both libraries start from the same values without a weights file.
"""
from __future__ import annotations

import numpy as np

CONFIG = {"vocab": 32, "block": 16, "n_layer": 2, "n_head": 2, "d": 32}


def build(lib, vocab=32, block=16, n_layer=2, n_head=2, d=32):
    nn, F = lib.nn, lib.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(d, 3 * d)
            self.c_proj = nn.Linear(d, d)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.c_attn(x).split(d, dim=2)
            q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(d)
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(vocab, d)
            self.wpe = nn.Embedding(block, d)
            self.h = nn.ModuleList([Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(d)
            self.lm_head = nn.Linear(d, vocab, bias=False)
            self.lm_head.weight = self.wte.weight       # weight tying

        def forward(self, idx, targets=None):
            T = idx.shape[1]
            pos = lib.arange(T, device=idx.device)
            x = self.wte(idx) + self.wpe(pos)
            for blk in self.h:
                x = blk(x)
            logits = self.lm_head(self.ln_f(x))
            if targets is None:
                return logits
            return logits, F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))

    return GPT()


def init_values(model, seed=0):
    """name -> NumPy array for each parameter (named_parameters order; a tied parameter once)."""
    rng = np.random.default_rng(seed)
    values = {}
    for name, p in model.named_parameters():
        shape = tuple(p.shape)
        if name.endswith("bias"):
            values[name] = np.zeros(shape, np.float32)
        elif len(shape) == 1:       # LayerNorm weights
            values[name] = np.ones(shape, np.float32)
        else:
            values[name] = (rng.standard_normal(shape) * 0.02).astype(np.float32)
    return values


def load_init(lib, model, seed=0):
    values = init_values(model, seed)
    with lib.no_grad():
        for name, p in model.named_parameters():
            p.copy_(lib.tensor(values[name]).to(p.device))
    return model


def batches(steps, batch=4, block=16, vocab=32, seed=1):
    """(inputs, targets) int64 arrays per step: runs of tokens counting up by 3 (mod vocab) from
    random starts, targets shifted by one (a pattern the model learns in a few steps)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(steps):
        seq = (rng.integers(0, vocab, (batch, 1)) + 3 * np.arange(block + 1)) % vocab
        out.append((seq[:, :-1].astype(np.int64), seq[:, 1:].astype(np.int64)))
    return out


def train(lib, model, steps, device="cpu", lr=1e-2):
    """The losses of ``steps`` AdamW steps (weight_decay 0.1) on ``batches(steps)``."""
    opt = lib.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.1)
    losses = []
    for x, y in batches(steps):
        _, loss = model(lib.tensor(x, device=device), lib.tensor(y, device=device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    return losses
