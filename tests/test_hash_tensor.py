"""torch.hash_tensor (ops/reductions_extra.py; the reduce kernel's xor combine): values and errors
recorded from torch 2.13 by tests/data/make_hash_tensor_values.py (no torch import here), every
dtype on cpu and a few cases on the emulated cuda (the 3 x 70 rows cross the reduce tile of 64).
The OpInfo record (tests/opinfo_reductions_indexing.py) checks cpu, cuda and a Python-int
reference over its samples."""
import builtins
import json
import pathlib
import re

import numpy as np
import pytest

import tritensor as tt
from conftest import to_numpy

DATA = json.loads((pathlib.Path(__file__).parent / "data" / "hash_tensor_values.json").read_text())
CASES = DATA["cases"]
# on the emulated device: one float and one integer dtype, the cases that cross tiles and keep dims
CUDA_CASES = [c for c in CASES if c["dtype"] in ("float16", "int8") and c["shape"] in ([3, 70], [2, 3, 4])]


def _input(case, device):
    dtype = getattr(tt, case["dtype"])
    if not case["input"] and case["shape"]:
        return tt.empty(case["shape"], dtype=dtype, device=device)
    src = tt.float64 if dtype.is_floating_point else tt.int64
    return tt.tensor(case["input"], dtype=src, device=device).to(dtype).reshape(case["shape"])


def _check(case, device):
    x = _input(case, device)
    r = tt.hash_tensor(x, **case["kwargs"])
    assert r.dtype is tt.uint64 and r.device == x.device and not r.requires_grad
    assert list(r.shape) == case["shape_out"]
    assert to_numpy(r).reshape(-1).tolist() == case["result"], case


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['dtype']}-{c['shape']}-{c['kwargs']}")
def test_values_match_torch_on_cpu(case):
    _check(case, "cpu")


@pytest.mark.parametrize("case", CUDA_CASES, ids=lambda c: f"{c['dtype']}-{c['shape']}-{c['kwargs']}")
def test_values_match_torch_on_cuda(case):
    _check(case, "cuda")


def test_method_out_and_no_gradient(device):
    x = tt.tensor([[1.5, -2.0], [0.25, 3.0]], device=device, requires_grad=True)
    whole = x.hash_tensor()
    assert whole.dtype is tt.uint64 and whole.grad_fn is None and not whole.requires_grad
    # the same as xor-ing the float64 bit patterns by hand
    bits = np.array([1.5, -2.0, 0.25, 3.0]).view(np.uint64)
    assert int(to_numpy(whole)) == int(bits[0] ^ bits[1] ^ bits[2] ^ bits[3])
    out = tt.empty(2, dtype=tt.uint64, device=device)
    assert tt.hash_tensor(x, 1, out=out) is out
    assert to_numpy(out).tolist() == [int(bits[0] ^ bits[1]), int(bits[2] ^ bits[3])]
    t = tt.tensor([[1, 2, 3], [4, 5, 6]], dtype=tt.int32, device=device).t()   # strided: read in place
    assert to_numpy(tt.hash_tensor(t, 1)).tolist() == [1 ^ 4, 2 ^ 5, 3 ^ 6]
    assert to_numpy(tt.hash_tensor(t, 0)).tolist() == [1 ^ 2 ^ 3, 4 ^ 5 ^ 6]


@pytest.mark.parametrize("err", DATA["errors"], ids=lambda e: e["desc"])
def test_errors_match_torch(err):
    x = tt.ones(err["shape"], dtype=getattr(tt, err["dtype"]))
    kwargs = dict(err["kwargs"])
    args = kwargs.pop("args", [])
    if "out" in kwargs:
        dtype, shape = kwargs["out"]
        kwargs["out"] = tt.empty(shape, dtype=getattr(tt, dtype))
    message = re.escape(err["message"])
    if err["desc"] == "dim-float":      # torch names the position only when dim came positionally
        message = message.replace("'dim'", "'dim'( \\(position 2\\))?")
    with pytest.raises(getattr(builtins, err["type"]), match=f"^{message}$"):
        tt.hash_tensor(x, *args, **kwargs)
