"""Records torch 2.13's (cpu) answers to tests/data/sparse_csr_cases.py into sparse_csr_values.json:
for each case its result (tensors as layout, dtype, shape, dense values and their sparse parts;
names, layouts and reprs as text with torch's module name replaced by tritensor's) or its error
(type and first line). tests/test_sparse_csr.py replays the cases on tritensor.

    /work/torchenv/bin/python tests/data/make_sparse_csr_values.py
"""
import json
import pathlib
import sys
import warnings

import torch

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from sparse_csr_cases import CASES  # noqa: E402

OUT = pathlib.Path(__file__).parent / "sparse_csr_values.json"


def text(s):
    return s.replace("torch.", "tritensor.")


def encode(x):
    if isinstance(x, torch.Tensor):
        enc = {"layout": text(str(x.layout)), "dtype": str(x.dtype).replace("torch.", ""), "shape": list(x.shape),
               "grad_fn": None if x.grad_fn is None else x.grad_fn.name()}
        d = x.detach()
        enc["dense"] = (d.to_dense() if d.layout != torch.strided else d).tolist()
        if x.layout == torch.sparse_csr:
            enc["parts"] = [d.crow_indices().tolist(), d.col_indices().tolist(), d.values().tolist(),
                            str(d.crow_indices().dtype).replace("torch.", "")]
        elif x.layout == torch.sparse_coo:
            enc["parts"] = [d._indices().tolist(), d._values().tolist()]
        return {"tensor": enc}
    if isinstance(x, (tuple, list)):
        return {"tuple": [encode(v) for v in x]}
    if isinstance(x, torch.layout):
        return {"text": text(str(x))}
    if isinstance(x, str):
        return {"text": text(x)}
    return {"value": x}


def main():
    warnings.simplefilter("ignore")
    torch.manual_seed(0)
    out = {}
    for name, fn in CASES.items():
        try:
            out[name] = encode(fn(torch, "cpu"))
        except Exception as e:      # noqa: BLE001  (the error is the record)
            out[name] = {"error": type(e).__name__, "message": text(str(e).splitlines()[0])}
    OUT.write_text(json.dumps(out, indent=0, sort_keys=True) + "\n")
    print(f"{len(out)} cases -> {OUT}")


if __name__ == "__main__":
    main()
