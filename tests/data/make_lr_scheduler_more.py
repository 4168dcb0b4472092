"""Records torch's learning rates for the cases of lr_scheduler_cases.py into
lr_scheduler_more.json (run with torch 2.13: python tests/data/make_lr_scheduler_more.py)."""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lr_scheduler_cases import CASES, build, run  # noqa: E402

out = {"torch": torch.__version__}
for key in CASES:
    opt, sched = build(torch, key)
    out[key] = {"initial": [float(g["lr"]) for g in opt.param_groups], "steps": run(key, opt, sched)}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "lr_scheduler_more.json"), "w") as f:
    json.dump(out, f)
