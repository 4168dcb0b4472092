"""Records torch 2.13's support matrix of uint16/uint32/uint64 (tests/test_unsigned_dtypes.py):
the outcome of every case of unsigned_cases.py for each unsigned dtype on cpu (the value, or
the error's type and message), torch.promote_types over every pair of dtypes, and
torch.result_type of unsigned tensors with scalars and 0-d tensors.

Run with the torch oracle: /work/torchenv/bin/python tests/data/record_unsigned.py
Writes tests/data/unsigned_values.json.
"""
import json
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from unsigned_cases import CASES, DTYPES, SETUP, outcome  # noqa: E402

DTYPE_NAMES = ("bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "float16",
               "bfloat16", "float32", "float64")


def main():
    cases = {}
    for name in DTYPES:
        namespace = {"L": torch, "d": getattr(torch, name)}
        exec(SETUP, namespace)
        for case, expr in CASES.items():
            cases.setdefault(case, {})[name] = outcome(expr, namespace)
    promote = {}
    for a in DTYPE_NAMES:
        for b in DTYPE_NAMES:
            try:
                promote[f"{a},{b}"] = str(torch.promote_types(getattr(torch, a), getattr(torch, b))).replace("torch.", "")
            except RuntimeError as e:
                promote[f"{a},{b}"] = {"error": str(e)}
    result_type = {}
    for name in DTYPES:
        t = torch.tensor([1, 2], dtype=getattr(torch, name))
        others = {"int": 1, "negative_int": -1, "bool": True, "float": 1.5}
        others.update({f"zero_dim_{o}": torch.tensor(1, dtype=getattr(torch, o)) for o in DTYPE_NAMES})
        for oname, other in others.items():
            try:
                result_type[f"{name},{oname}"] = str(torch.result_type(t, other)).replace("torch.", "")
            except RuntimeError as e:
                result_type[f"{name},{oname}"] = {"error": str(e)}
        for dim_dtype in ("bool", "int8", "int64", "float16"):
            key = f"dim_{dim_dtype},zero_dim_{name}"
            try:
                result_type[key] = str(torch.result_type(torch.tensor([1, 0], dtype=getattr(torch, dim_dtype)),
                                                         torch.tensor(1, dtype=getattr(torch, name)))).replace("torch.", "")
            except RuntimeError as e:
                result_type[key] = {"error": str(e)}
    out = {"torch_version": torch.__version__, "cases": cases, "promote_types": promote, "result_type": result_type}
    path = pathlib.Path(__file__).with_name("unsigned_values.json")
    path.write_text(json.dumps(out, indent=0, sort_keys=True) + "\n")
    print(f"wrote {path}: {len(cases)} cases x {len(DTYPES)} dtypes, {len(promote)} promotions")


if __name__ == "__main__":
    main()
