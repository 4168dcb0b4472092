"""Record torch's answers for tt.masked (tests/test_masked.py): tests/data/masked_values.json.gz.

    /work/torchenv/bin/python tests/data/make_masked_values.py

Two parts, both run through torch.masked with torch 2.13 on the CPU:

* ``samples``: op_db's own sample inputs of the 19 ``masked.*`` entries
  (``OpInfo.sample_inputs("cpu", dtype)``), in every dtype op_db lists for the op that tritensor
  has (no complex), a spread of at most SAMPLES_PER_DTYPE of them (op_db's generators make the
  masks: broadcast masks, all-false rows, keepdim, dim tuples, 0-d inputs ...). For float64 the
  gradient of ``(out * w).sum()`` with respect to the input (``w`` a fixed weight) is recorded
  too, where op_db says the op has a derivative.
* ``cases``: hand-written calls (EDGE_CASES below): torch's result, or its exception type and
  message (argument checks, fully masked-out rows, size-0 and 0-d inputs, dtype=).

Tensors are recorded as {"shape", "dtype", "values"} (contiguous, row-major; bfloat16 and float16
values are exact as JSON floats), dtypes as {"dtype": name}. gzip without a timestamp: the same
torch gives the same bytes.
"""
from __future__ import annotations

import gzip
import io
import json
import math
import pathlib
import warnings

import torch
from torch.testing._internal.common_methods_invocations import op_db

HERE = pathlib.Path(__file__).parent
OUT = HERE / "masked_values.json.gz"

DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64")
SAMPLES_PER_DTYPE = {"float32": 14, "float64": 14}   # the other dtypes: 5
MAX_ELEMENTS = 150


def enc(v):
    if isinstance(v, torch.Tensor):
        if v.layout != torch.strided:
            raise TypeError("sparse")
        d = v.detach()
        values = d.reshape(-1).tolist()
        return {"shape": list(d.shape), "dtype": str(d.dtype)[6:], "values": values}
    if isinstance(v, torch.dtype):
        return {"dtype": str(v)[6:]}
    if isinstance(v, (list, tuple)):
        return {"tuple": [enc(x) for x in v]}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise TypeError(type(v).__name__)


def _numel(v):
    return v.numel() if isinstance(v, torch.Tensor) else 0


def _spread(items, k):
    if len(items) <= k:
        return items
    step = len(items) / k
    return [items[int(i * step)] for i in range(k)]


def record_samples():
    out = []
    for info in op_db:
        if not info.name.startswith("masked."):
            continue
        supported = {str(d)[6:] for d in info.dtypes}
        for dname in DTYPES:
            if dname not in supported:
                continue
            dtype = getattr(torch, dname)
            torch.manual_seed(0)
            samples = [s for s in info.sample_inputs("cpu", dtype, requires_grad=False)
                       if _numel(s.input) <= MAX_ELEMENTS
                       and all(_numel(a) <= MAX_ELEMENTS for a in list(s.args) + list(s.kwargs.values()))]
            for s in _spread(samples, SAMPLES_PER_DTYPE.get(dname, 5)):
                try:
                    case = {"op": info.name, "input": enc(s.input), "args": [enc(a) for a in s.args],
                            "kwargs": {k: enc(v) for k, v in s.kwargs.items()}}
                except TypeError:
                    continue        # a sparse mask/input: tritensor's masked ops take strided tensors
                run(info, s.input, s.args, s.kwargs, case, grad=dname == "float64" and info.supports_autograd)
                out.append(case)
    return out


def run(info, input, args, kwargs, case, grad=False):
    try:
        if grad:
            x = input.detach().clone().requires_grad_(True)
            result = info.op(x, *args, **kwargs)
        else:
            result = info.op(input, *args, **kwargs)
    except Exception as e:      # noqa: BLE001  (torch's exception is the expectation)
        case["error"] = [type(e).__name__, str(e)]
        return
    case["out"] = enc(result)
    if grad and result.requires_grad and result.numel():
        w = torch.linspace(-1.5, 2.0, result.numel(), dtype=result.dtype).reshape(result.shape)
        (g,) = torch.autograd.grad((result * w).sum(), x, allow_unused=True)
        case["grad"] = enc(g if g is not None else torch.zeros_like(x))


def T(values, dtype="float32"):
    return torch.tensor(values, dtype=getattr(torch, dtype))


X = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
ROWMASK = [[True, False, True], [False, False, False]]        # the second row fully masked out


def edge_cases():
    m = T(ROWMASK, "bool")
    x = T(X)
    cases = [
        # argument checks
        ("sum", (x, (0, 0)), {}),
        ("sum", (x, 2), {}),
        ("sum", (x, -3), {}),
        ("mean", (x, (1, -1)), {}),
        ("sum", (x,), {"mask": T([[[True]]], "bool")}),
        ("sum", (x,), {"mask": T([True, False], "bool")}),
        ("amax", (x.bool(), 1), {"mask": m}),
        ("amin", (x.to(torch.int64).bool(), 0), {"mask": m}),
        ("mean", (x.long(), 1), {}),
        ("mean", (x.long(), 1), {"dtype": torch.int32}),
        ("mean", (x, 1), {"dtype": torch.int64}),
        ("median", (x.long(), 1), {"mask": m}),
        ("norm", (x.long(), 2.0, 1), {"mask": m}),
        ("norm", (x.long(), -math.inf, 1), {"mask": m}),
        ("var", (x, 1, True), {"correction": 1}),
        ("softmax", (x.long(), 1), {"mask": m}),
        ("cumsum", (x, 2), {}),
        # masks of other dtypes and shapes
        ("sum", (x,), {"mask": T([1, 0, 2], "int64")}),
        ("sum", (x,), {"mask": T([1.0, 0.0, 0.5])}),
        ("prod", (x, 0), {"mask": T([[True], [False]], "bool")}),
        ("sum", (x, 1), {"mask": T(True, "bool")}),
        # fully masked-out rows: each op's value there
        *[(op, (x, 1), {"mask": m}) for op in ("sum", "prod", "amax", "amin", "argmax", "argmin", "mean",
                                               "median", "logsumexp", "var", "std", "softmax",
                                               "log_softmax", "softmin", "cumsum", "cumprod")],
        ("norm", (x, 2.0, 1), {"mask": m}),
        ("norm", (x, -math.inf, 1), {"mask": m}),
        ("norm", (x, math.inf, 1), {"mask": m}),
        ("norm", (x, 0, 1), {"mask": m}),
        ("normalize", (x, 2.0, 1), {"mask": m}),
        ("normalize", (x, 1.0, 0), {"eps": 10.0}),
        ("normalize", (x.to(torch.float16), 2.0, 1), {"mask": m}),     # eps 1e-12 is 0 in float16: NaN
        ("normalize", (x.to(torch.bfloat16), 2.0, 1), {"mask": m}),
        ("logaddexp", (x, x * 2), {"input_mask": m, "other_mask": m[0]}),
        ("logaddexp", (x, x), {"dtype": torch.float64}),
        # integer inputs: the promoted dtypes and the integer identities
        ("sum", (x.bool(), 1), {"mask": m}),
        ("prod", (x.bool(), 1), {"mask": m}),
        ("prod", (x.to(torch.int8), None), {}),
        ("sum", (x.to(torch.int16), 0), {"dtype": torch.int16}),
        ("amax", (x.to(torch.uint8), 1), {"mask": m}),
        ("amin", (x.to(torch.uint8), 1), {"mask": m}),
        ("amax", (x.to(torch.int8), 1), {"mask": m}),
        ("amin", (x.to(torch.int16), 1), {"mask": m}),
        ("amin", (x.to(torch.int32), 1), {"mask": m}),
        ("argmax", (x.to(torch.int8), 1), {"mask": m}),
        ("median", (x.long(), 1), {}),
        ("var", (x.long(), 1), {"mask": m}),
        ("std", (x.to(torch.int8), 1), {"dtype": torch.float64}),
        ("cumsum", (x.to(torch.int8), 1), {}),
        ("cumprod", (x.to(torch.int16), 0), {"mask": m}),
        # dim forms, keepdim, dtype=
        ("sum", (x, [0, 1]), {}),
        ("sum", (x, ()), {"keepdim": True}),
        ("mean", (x, None), {"keepdim": True, "mask": m}),
        ("var", (x, None), {"keepdim": True}),
        ("var", (x, 1), {"correction": 2.5, "mask": m}),
        ("var", (x, 0, False), {"mask": m}),
        ("std", (x, 1, False), {"mask": m}),
        ("cumsum", (x, (0, 1)), {}),
        ("cumsum", (x, None), {}),
        ("sum", (x, 1), {"keepdim": True, "dtype": torch.float64}),
        ("amax", (x, 1), {"dtype": torch.float64, "mask": m}),
        ("argmax", (x, None), {"mask": m}),
        ("argmin", (x, 0), {"keepdim": True, "mask": m}),
        ("median", (x, 1), {"dtype": torch.int64}),
        ("median", (x, 0), {"keepdim": True, "mask": m}),
        ("logsumexp", (x, ()), {"mask": m}),
        ("logsumexp", (x, 1), {"dtype": torch.float64, "mask": m}),   # computed in float32, then cast
        ("softmax", (x, 0), {"dtype": torch.float64, "mask": m}),
        ("log_softmax", (x.to(torch.float16), -1), {"mask": m}),
        # 0-d and size-0 inputs
        ("sum", (T(2.0), 0), {"mask": T(False, "bool")}),
        ("amax", (T(2.0),), {"mask": T(False, "bool")}),
        ("mean", (T(2.0),), {"mask": T(False, "bool")}),
        ("logsumexp", (T(2.0), ()), {}),
        ("softmax", (T(2.0), 0), {}),
        ("cumprod", (T(3.0), 0), {"mask": T(False, "bool")}),
        ("amax", (torch.zeros(0, 3), 1), {}),
        ("amax", (torch.zeros(0, 3), 0), {}),
        ("amax", (torch.zeros(0, 3), 0), {"mask": torch.zeros(0, 3, dtype=torch.bool)}),
        ("sum", (torch.zeros(0, 3), 0), {}),
        ("prod", (torch.zeros(0, 3), 0), {"mask": torch.zeros(0, 3, dtype=torch.bool)}),
        ("mean", (torch.zeros(0, 3), 0), {}),
        ("var", (torch.zeros(0, 3), 1), {}),
        ("argmax", (torch.zeros(0, 3), 1), {}),
        ("argmax", (torch.zeros(0, 3), 0), {}),
        ("softmax", (torch.zeros(0, 3), 1), {"mask": torch.zeros(3, dtype=torch.bool)}),
    ]
    out = []
    for op, args, kwargs in cases:
        fn = getattr(torch.masked, op)
        case = {"op": "masked." + op, "input": enc(args[0]), "args": [enc(a) for a in args[1:]],
                "kwargs": {k: enc(v) for k, v in kwargs.items()}}

        class _Info:
            pass
        info = _Info()
        info.op = fn
        run(info, args[0], args[1:], kwargs, case)
        out.append(case)
    return out


# NaN, +-inf and both zeros in the input, with a mask that keeps some of them out: each
# differentiable op's value and float64 gradient there (op_db's samples are finite)
SPECIAL = [[math.nan, 1.0, -0.0, 2.0], [math.inf, -math.inf, 0.0, -1.0], [-0.0, 0.0, -0.0, 3.0]]
SPECIAL_MASK = [[True, True, True, False], [True, False, True, True], [True, True, True, True]]


def special_value_cases():
    x, m = T(SPECIAL, "float64"), T(SPECIAL_MASK, "bool")
    calls = [(op, (1,)) for op in ("sum", "prod", "amax", "amin", "argmax", "argmin", "mean", "median", "logsumexp",
                                   "var", "std", "softmax", "log_softmax", "softmin", "cumsum", "cumprod")]
    calls += [("norm", (2.0, 1)), ("norm", (math.inf, 1)), ("norm", (0, 1)), ("normalize", (2.0, 1))]
    out = []
    for op, args in calls:
        for dim_args in (args, args[:-1] + (0,)):                 # along rows and along columns
            class _Info:
                pass
            info = _Info()
            info.op = getattr(torch.masked, op)
            case = {"op": "masked." + op, "input": enc(x), "args": [enc(a) for a in dim_args],
                    "kwargs": {"mask": enc(m)}}
            run(info, x, dim_args, {"mask": m}, case, grad=op not in ("argmax", "argmin"))
            out.append(case)
    x2 = T([[math.nan, -math.inf, 1.0], [-0.0, math.inf, 2.0]], "float64")
    for op_kwargs in ({"input_mask": T([[True, True, False], [True, True, True]], "bool")}, {}):
        case = {"op": "masked.logaddexp", "input": enc(x2), "args": [enc(x2.flip(1))],
                "kwargs": {k: enc(v) for k, v in op_kwargs.items()}}

        class _Info:
            pass
        info = _Info()
        info.op = torch.masked.logaddexp
        run(info, x2, (x2.flip(1),), op_kwargs, case, grad=True)
        out.append(case)
    return out


def main():
    warnings.simplefilter("ignore")
    data = {"torch": torch.__version__, "samples": record_samples(), "cases": edge_cases(),
            "special": special_value_cases()}
    raw = json.dumps(data, separators=(",", ":")).encode()
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as f:
        f.write(raw)
    OUT.write_bytes(buf.getvalue())
    print(f"{OUT}: {len(data['samples'])} samples, {len(data['cases'])} cases, {len(data['special'])} special, "
          f"{len(buf.getvalue())} bytes")


if __name__ == "__main__":
    main()
