"""Record torch 2.13's output dtypes under cpu autocast (bfloat16 and float16) for the calls of
autocast_cases.py, into autocast_cpu_dtypes.json. Run with the torch oracle venv:

    /work/torchenv/bin/python tests/data/make_autocast_fixture.py
"""
import json
import os

import torch
import torch.nn.functional as F

from autocast_cases import CASES

HERE = os.path.dirname(os.path.abspath(__file__))


def record():
    out = {}
    for low in (torch.bfloat16, torch.float16):
        table = {}
        for name, expr in CASES.items():
            row = []
            for d in (torch.float32, low, torch.float64):
                def t(*shape, d=d):
                    return torch.rand(*shape, dtype=d) + 0.5
                try:
                    with torch.autocast("cpu", dtype=low):
                        row.append(str(eval(expr, {"lib": torch, "F": F, "t": t}).dtype).replace("torch.", ""))
                except Exception as e:           # an unsupported dtype: torch raises
                    row.append("error: " + type(e).__name__)
            table[name] = row
        out[str(low).replace("torch.", "")] = table
    return out


if __name__ == "__main__":
    with open(os.path.join(HERE, "autocast_cpu_dtypes.json"), "w") as f:
        json.dump(record(), f, indent=1, sort_keys=True)
