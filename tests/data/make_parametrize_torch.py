"""Records tests/data/parametrize_torch.pt with torch 2.13 (CPU): the state_dicts, outputs and
gradients of modules under torch.nn.utils.parametrizations (weight_norm, spectral_norm,
orthogonal) and the older hook-based weight_norm / spectral_norm, for tests/test_parametrize.py.

    /work/torchenv/bin/python tests/data/make_parametrize_torch.py
"""
import pathlib

import torch
from torch import nn
from torch.nn.utils import parametrizations as P

torch.manual_seed(0)
OUT = {}


def plain(sd):
    return {k: v.detach().clone() for k, v in sd.items()}


def record(name, make, register, x, train_steps=0):
    m = make()
    OUT[name + ".init"] = plain(m.state_dict())          # the plain module's tensors
    register(m)
    case = {"registered": plain(m.state_dict())}
    m.train()
    for i in range(train_steps):                          # training-mode forwards (power iteration)
        case[f"train{i}"] = m(x).detach().clone()
    case["after_train"] = plain(m.state_dict())
    m.eval()
    y = m(x)
    case["eval"] = y.detach().clone()
    y.square().sum().backward()
    case["grads"] = {n: p.grad.clone() for n, p in m.named_parameters()}
    OUT[name] = case


x2 = torch.randn(5, 3)
x5 = torch.randn(5, 5)
x4 = torch.randn(2, 3, 6, 6)
record("weight_norm", lambda: nn.Linear(3, 4), lambda m: P.weight_norm(m), x2)
record("weight_norm_dim1", lambda: nn.Linear(3, 4), lambda m: P.weight_norm(m, dim=1), x2)
record("weight_norm_dimNone", lambda: nn.Linear(3, 4), lambda m: P.weight_norm(m, dim=None), x2)
record("old_weight_norm", lambda: nn.Linear(3, 4), lambda m: nn.utils.weight_norm(m), x2)
record("spectral_norm", lambda: nn.Linear(3, 4), lambda m: P.spectral_norm(m), x2, train_steps=2)
record("spectral_norm_conv", lambda: nn.Conv2d(3, 4, 3), lambda m: P.spectral_norm(m), x4, train_steps=1)
record("spectral_norm_convT", lambda: nn.ConvTranspose2d(3, 4, 3), lambda m: P.spectral_norm(m), x4,
       train_steps=1)
record("old_spectral_norm", lambda: nn.Linear(3, 4), lambda m: nn.utils.spectral_norm(m), x2, train_steps=2)
for orth_map in ("matrix_exp", "cayley", "householder"):
    record(f"orthogonal_{orth_map}", lambda: nn.Linear(5, 5), lambda m: P.orthogonal(m, orthogonal_map=orth_map), x5)
    record(f"orthogonal_{orth_map}_tall", lambda: nn.Linear(3, 5), lambda m: P.orthogonal(m, orthogonal_map=orth_map),
           x2)
record("orthogonal_householder_notriv", lambda: nn.Linear(3, 5),
       lambda m: P.orthogonal(m, orthogonal_map="householder", use_trivialization=False), x2)
OUT["x2"], OUT["x5"], OUT["x4"] = x2, x5, x4

# the metadata torch's old spectral_norm writes into state_dict._metadata
m = nn.utils.spectral_norm(nn.Linear(3, 4))
OUT["old_spectral_norm_metadata"] = dict(m.state_dict()._metadata[""])

torch.save(OUT, pathlib.Path(__file__).parent / "parametrize_torch.pt")
