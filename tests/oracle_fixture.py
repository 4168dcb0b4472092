"""The torch oracle's fixture, read without torch: tests/data/torch_oracle.bin.gz, written by
tests/data/make_torch_fixtures.py (its docstring says how to regenerate it after new ops land).

Shared by tests/test_torch_oracle.py (op_db's samples) and tests/test_edge_values.py (edge-value
grids): decoding the recorded values into tritensor arguments, and comparing tritensor's answer
with torch's (values, dtype, shape; the exception type when torch raised).
"""
from __future__ import annotations

import functools
import gzip
import json
import math
import pathlib

import numpy as np

import tritensor as tt

PATH = pathlib.Path(__file__).parent / "data" / "torch_oracle.bin.gz"
MAGIC = b"tritensor-torch-oracle-1\n"

# the output's dtype -> (rtol, atol): torch.testing.assert_close's defaults
TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
              "float64": (1e-7, 1e-7)}
FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")


@functools.lru_cache(maxsize=None)
def load():
    """(header, arrays): the JSON header and the recorded arrays (read-only NumPy views)."""
    raw = gzip.decompress(PATH.read_bytes())
    assert raw.startswith(MAGIC), f"{PATH} is not a torch-oracle fixture"
    start = len(MAGIC) + 8
    size = int.from_bytes(raw[len(MAGIC):start], "little")
    header = json.loads(raw[start:start + size])
    blob = memoryview(raw)[start + size:]
    arrays = []
    for dtype, offset, count in header["arrays"]:
        arr = np.frombuffer(blob, np.dtype(dtype), count, offset)
        arrays.append(arr)
    return header, arrays


def numpy_values(index, dtype_name):
    """Recorded array ``index`` as NumPy values of ``dtype_name`` (bfloat16 from its bit patterns)."""
    arr = load()[1][index]
    if dtype_name == "bfloat16":
        import ml_dtypes
        return arr.view(ml_dtypes.bfloat16)
    return arr


def tt_dtype(name):
    return getattr(tt, name)


class Unsupported(Exception):
    """A recorded argument tritensor has no counterpart for (a memory format it lacks ...)."""


def decode(value, device):
    """A recorded argument as tritensor's: tensors with torch's shape, strides and (small) storage
    offset on ``device``."""
    if isinstance(value, list):
        return [decode(v, device) for v in value]
    if not isinstance(value, dict):
        return value
    if "T" in value:
        flat = tt.tensor(numpy_values(value["T"], value["dtype"]).copy(), dtype=tt_dtype(value["dtype"]),
                         device=device)
        return flat.as_strided(value["shape"], value["stride"], value["offset"])
    if "tuple" in value:
        return tuple(decode(v, device) for v in value["tuple"])
    if "float" in value:
        return float(value["float"])
    if "size" in value:
        return tt.Size(value["size"])
    if "dtype" in value:
        return tt_dtype(value["dtype"])
    if "device" in value:
        return device if value["device"] == "cpu" else value["device"]
    if "memory_format" in value:
        fmt = getattr(tt, value["memory_format"], None)
        if fmt is None:
            raise Unsupported(f"tritensor has no tt.{value['memory_format']}")
        return fmt
    if "slice" in value:
        return slice(*(decode(v, device) for v in value["slice"]))
    if "ellipsis" in value:
        return Ellipsis
    if "dict" in value:
        return {k: decode(v, device) for k, v in value["dict"].items()}
    raise Unsupported(f"unknown recorded value {sorted(value)}")


def expected_array(enc):
    """A recorded output tensor: its values, row-major, in its shape."""
    return numpy_values(enc["V"], enc["dtype"]).reshape(enc["shape"])


def host(t):
    arr = np.asarray(t.detach().cpu().numpy())
    return arr


def compare_tensor(got, enc, values=True, signed_zeros=False, tolerances=TOLERANCES):
    """None when tritensor tensor ``got`` matches recorded output ``enc``, else what differs."""
    if not isinstance(got, tt.Tensor):
        return f"a {type(got).__name__}, torch gives a tensor"
    name = str(got.dtype).rsplit(".", 1)[-1]
    if name != enc["dtype"]:
        return f"dtype {name}, torch {enc['dtype']}"
    if list(got.shape) != enc["shape"]:
        return f"shape {list(got.shape)}, torch {enc['shape']}"
    if not values:
        return None
    want, have = expected_array(enc), host(got)
    if name in FLOAT_NAMES:
        want64, have64 = want.astype(np.float64), have.astype(np.float64)
        nan_w, nan_h = np.isnan(want64), np.isnan(have64)
        if (nan_w != nan_h).any():
            i = np.argwhere(nan_w != nan_h)[0]
            return f"NaN where torch has none or the reverse: at {tuple(i)} {have64[tuple(i)]} vs {want64[tuple(i)]}"
        ok = ~nan_w
        inf_w, inf_h = np.isinf(want64), np.isinf(have64)
        inf_differ = ok & ((inf_w != inf_h) | (inf_w & (want64 != have64)))
        if inf_differ.any():
            return f"infinities differ: {_first_diff(have64, want64, inf_differ)}"
        rtol, atol = tolerances[name]
        with np.errstate(invalid="ignore"):
            close = np.abs(have64 - want64) <= atol + rtol * np.abs(want64)
        close |= np.isinf(want64) & (want64 == have64)
        bad = ok & ~close
        if bad.any():
            return f"values differ (rtol={rtol}, atol={atol}): {_first_diff(have64, want64, bad)}"
        if signed_zeros is not False:       # True, or a mask of the elements where it is defined
            zeros = ok & (want64 == 0) & (have64 == 0) & (True if signed_zeros is True else signed_zeros)
            flipped = zeros & (np.signbit(want64) != np.signbit(have64))
            if flipped.any():
                return f"sign of zero differs: {_first_diff(have64, want64, flipped)}"
        return None
    if name == "bool":
        same = have.astype(bool) == want.astype(bool)
    else:
        same = have == want
    if not np.all(same):
        return f"values differ: {_first_diff(have, want, ~same)}"
    return None


def _first_diff(have, want, mask):
    idx = tuple(np.argwhere(mask)[0]) if np.ndim(mask) else ()
    return f"{int(np.count_nonzero(mask))} element(s), first at {idx}: {have[idx]!r}, torch {want[idx]!r}"


def compare(got, enc, values=True):
    """None when tritensor's result ``got`` matches torch's recorded result ``enc``."""
    if isinstance(enc, dict) and "V" in enc:
        return compare_tensor(got, enc, values)
    if isinstance(enc, dict) and "tuple" in enc or isinstance(enc, list):
        items = enc["tuple"] if isinstance(enc, dict) else enc
        if not isinstance(got, (tuple, list)):
            return f"a {type(got).__name__}, torch gives a sequence of {len(items)}"
        if len(got) != len(items):
            return f"{len(got)} results, torch {len(items)}"
        for i, (g, e) in enumerate(zip(got, items)):
            why = compare(g, e, values)
            if why:
                return f"[{i}]: {why}"
        for i, field in enumerate(enc.get("names", ()) if isinstance(enc, dict) else ()):
            if getattr(got, field, None) is not got[i]:
                return f"result has no field {field!r} (torch's named tuple)"
        return None
    if isinstance(enc, dict) and "size" in enc:
        return None if tuple(got) == tuple(enc["size"]) and isinstance(got, tuple) else f"{got!r}, torch {enc['size']}"
    if isinstance(enc, dict) and "dtype" in enc:
        return None if got is tt_dtype(enc["dtype"]) else f"{got!r}, torch {enc['dtype']}"
    expected = decode(enc, "cpu")
    if isinstance(expected, (bool, int, float)) or expected is None:
        if type(got) is not type(expected):
            return f"a {type(got).__name__} ({got!r}), torch a {type(expected).__name__} ({expected!r})"
        if not values or got == expected or (isinstance(got, float) and math.isnan(got) and math.isnan(expected)):
            return None
        if isinstance(got, float) and math.isclose(got, expected, rel_tol=1e-6, abs_tol=1e-6):
            return None
        return f"{got!r}, torch {expected!r}"
    return None if got == expected else f"{got!r}, torch {expected!r}"
