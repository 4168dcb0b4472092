"""Writes tests/data/shape_fixtures.json: the values torch 2.13 (CPU) gives for the window
functions (torch.*_window and torch.signal.windows.*) and for logspace, read by
tests/test_windows.py. Run with a Python that has torch:

    python tests/data/make_shape_fixtures.py
"""
import json
import pathlib

import torch

out = {"windows": {}, "logspace": []}


def rec(key, t):
    out["windows"][key] = t.double().tolist()


for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
    n = str(dt).split(".")[-1]
    for L in (0, 1, 2, 5, 8):
        for periodic in (True, False):
            rec(f"hann_window/{n}/{L}/{periodic}", torch.hann_window(L, periodic, dtype=dt))
            rec(f"hamming_window/{n}/{L}/{periodic}", torch.hamming_window(L, periodic, alpha=0.6, beta=0.3, dtype=dt))
            rec(f"blackman_window/{n}/{L}/{periodic}", torch.blackman_window(L, periodic, dtype=dt))
            rec(f"bartlett_window/{n}/{L}/{periodic}", torch.bartlett_window(L, periodic, dtype=dt))
            rec(f"kaiser_window/{n}/{L}/{periodic}", torch.kaiser_window(L, periodic, beta=5.5, dtype=dt))
W = torch.signal.windows
for dt in (torch.float32, torch.float64):
    n = str(dt).split(".")[-1]
    for M in (0, 1, 2, 5, 8):
        for sym in (True, False):
            rec(f"bartlett/{n}/{M}/{sym}", W.bartlett(M, sym=sym, dtype=dt))
            rec(f"blackman/{n}/{M}/{sym}", W.blackman(M, sym=sym, dtype=dt))
            rec(f"cosine/{n}/{M}/{sym}", W.cosine(M, sym=sym, dtype=dt))
            rec(f"exponential/{n}/{M}/{sym}", W.exponential(M, sym=sym, tau=0.7, dtype=dt))
            rec(f"gaussian/{n}/{M}/{sym}", W.gaussian(M, sym=sym, std=1.3, dtype=dt))
            rec(f"general_cosine/{n}/{M}/{sym}", W.general_cosine(M, a=[0.46, 0.23, 0.31], sym=sym, dtype=dt))
            rec(f"general_hamming/{n}/{M}/{sym}", W.general_hamming(M, alpha=0.6, sym=sym, dtype=dt))
            rec(f"hamming/{n}/{M}/{sym}", W.hamming(M, sym=sym, dtype=dt))
            rec(f"hann/{n}/{M}/{sym}", W.hann(M, sym=sym, dtype=dt))
            rec(f"kaiser/{n}/{M}/{sym}", W.kaiser(M, beta=7.0, sym=sym, dtype=dt))
            rec(f"nuttall/{n}/{M}/{sym}", W.nuttall(M, sym=sym, dtype=dt))
        if M > 1:
            rec(f"exponential_center/{n}/{M}/False", W.exponential(M, sym=False, center=1.5, dtype=dt))

# logspace: torch's CPU kernel in every dtype (integer results only where they fit the dtype:
# converting an out-of-range double to an integer is undefined in C++)
for name in ("float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8", "int8", "int16"):
    dt = getattr(torch, name)
    for args in [(0, 2, 5), (0, 10, 7), (-1, 1, 3), (0.3, 2.7, 9), (0, 1, 5, 2), (2, -1, 6, 1.1), (0, 3, 4, 3),
                 (0, 10, 11, -2), (1, 1, 1), (5, 0, 4, 0.5), (0.1, 0.7, 8, 3.3), (-3, 3, 7, 2)]:
        if not dt.is_floating_point and any(isinstance(a, float) for a in args[:2]):
            continue
        if not dt.is_floating_point and (torch.logspace(*args, dtype=torch.float64).abs().max() > torch.iinfo(dt).max
                                         or (not dt.is_signed and min(args[:2]) < 0)):
            continue
        values = torch.logspace(*args, dtype=dt)
        out["logspace"].append([name, list(args), values.double().tolist()])

path = pathlib.Path(__file__).parent / "shape_fixtures.json"
path.write_text(json.dumps(out, indent=None, separators=(",", ":")))
print(f"wrote {path}: {len(out['windows'])} windows, {len(out['logspace'])} logspace cases")
