"""Record torch.hash_tensor's values and errors into tests/data/hash_tensor_values.json
(read by tests/test_hash_tensor.py; torch is not needed to run the tests).

    /work/torchenv/bin/python tests/data/make_hash_tensor_values.py

Inputs are stored as float64 / int lists (exact for every dtype recorded here: the float16 and
bfloat16 values are drawn in those dtypes first); NaN, inf and -0.0 travel as JSON's NaN /
Infinity / -0.0. Results are uint64 lists of Python ints.
"""
import json
import pathlib

import torch

OUT = pathlib.Path(__file__).with_name("hash_tensor_values.json")
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


def values(dtype, shape, g):
    dt = getattr(torch, dtype)
    if dtype == "bool":
        return torch.randint(0, 2, shape, generator=g).bool()
    if not dt.is_floating_point:
        info = torch.iinfo(dt)
        x = torch.randint(max(info.min, -2**40), min(info.max, 2**40) + 1, shape, generator=g, dtype=torch.int64).to(dt)
        flat = x.reshape(-1)
        if flat.numel() >= 2:       # the extremes: sign extension of the most negative value
            flat[0], flat[1] = info.min, info.max
        return x
    x = (torch.randn(shape, generator=g, dtype=torch.float64) * 100).to(dt)
    flat = x.reshape(-1)
    for i, v in enumerate([float("nan"), float("inf"), -0.0, float("-inf"), torch.finfo(dt).tiny / 4]):
        if i < flat.numel():
            flat[i * 3 % flat.numel()] = v
    return x


def main():
    g = torch.Generator().manual_seed(0)
    cases = []
    specs = [((), {}), ((5,), {}), ((3, 70), {"dim": 1}), ((3, 70), {"dim": 0, "keepdim": True}),
             ((2, 3, 4), {"dim": (0, 2)}), ((2, 3, 4), {"dim": [-1], "keepdim": True}), ((4, 3), {"dim": ()}),
             ((0, 3), {"dim": 1}), ((2, 1, 3), {"dim": 1}), ((2, 3), {"keepdim": True})]
    for dtype in DTYPES:
        for shape, kwargs in specs:
            x = values(dtype, shape, g)
            r = torch.hash_tensor(x, **kwargs)
            assert r.dtype is torch.uint64 and not r.requires_grad
            data = x.to(torch.float64 if x.dtype.is_floating_point else torch.int64).tolist()
            cases.append({"dtype": dtype, "shape": list(shape), "input": data, "kwargs": kwargs,
                          "shape_out": list(r.shape), "result": [int(v) for v in r.reshape(-1).tolist()]})
    errors = []
    for desc, make, kwargs in [
            ("empty-all", lambda: torch.empty(0, 3), {}),
            ("empty-all-tuple", lambda: torch.empty(0, 3), {"dim": ()}),
            ("empty-dim", lambda: torch.empty(0, 3), {"dim": 0}),
            ("empty-dim-negative", lambda: torch.empty(2, 0), {"dim": -1}),
            ("mode", lambda: torch.ones(2, 2), {"mode": 1}),
            ("mode-float", lambda: torch.ones(2, 2), {"mode": 1.0}),
            ("dim-range", lambda: torch.ones(2, 2), {"dim": 2}),
            ("dim-repeat", lambda: torch.ones(2, 2), {"dim": (1, -1)}),
            ("dim-float", lambda: torch.ones(2, 2), {"dim": 1.0}),           # a keyword: no position
            ("dim-float-positional", lambda: torch.ones(2, 2), {"args": [1.0]}),
            ("uint16", lambda: torch.ones(2, dtype=torch.uint16), {}),
            ("uint32", lambda: torch.ones(2, dtype=torch.uint32), {}),
            ("uint64", lambda: torch.ones(2, dtype=torch.uint64), {"dim": 0}),
            ("out-dtype", lambda: torch.ones(3, 2), {"dim": 1, "out": ("int64", [3])})]:
        kw = dict(kwargs)
        args = kw.pop("args", [])
        if "out" in kw:
            dt, shape = kw["out"]
            kw["out"] = torch.empty(shape, dtype=getattr(torch, dt))
        try:
            torch.hash_tensor(make(), *args, **kw)
        except Exception as e:      # noqa: BLE001 - recording whatever torch raises
            x = make()
            errors.append({"desc": desc, "dtype": str(x.dtype).removeprefix("torch."), "shape": list(x.shape),
                           "kwargs": kwargs, "type": type(e).__name__, "message": str(e)})
        else:
            raise AssertionError(f"{desc}: torch raised nothing")
    OUT.write_text(json.dumps({"torch": torch.__version__, "cases": cases, "errors": errors}, indent=None) + "\n")
    print(f"{OUT}: {len(cases)} cases, {len(errors)} errors")


if __name__ == "__main__":
    main()
