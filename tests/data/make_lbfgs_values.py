"""Records torch's LBFGS trajectories for lbfgs_cases.py into lbfgs_values.json
(python tests/data/make_lbfgs_values.py with torch 2.13)."""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lbfgs_cases import CASES, run  # noqa: E402

out = {"torch": torch.__version__}
out.update({key: run(torch, key) for key in CASES})
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "lbfgs_values.json"), "w") as f:
    json.dump(out, f)
