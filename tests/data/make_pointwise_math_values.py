"""Write tests/data/pointwise_math_values.json: torch's results (values, dtypes, errors) for the
pointwise math of issue 21.2 on the inputs where the definitions matter: NaN, infinities, signed
zeros, subnormals, the quadrants of atan2, C's nextafter, out-of-range shifts, gcd of the most
negative integer, logit's eps, nan_to_num's defaults per dtype, lerp's two-sided formula ...

Run once with torch installed, in a separate venv (tritensor never imports torch):

    /path/to/torchenv/bin/python tests/data/make_pointwise_math_values.py

tests/test_pointwise_math.py runs every case through tritensor on cpu and on cuda. A case is
(op, args, kwargs): an argument {"values", "dtype"} is a tensor, anything else a Python value;
an op "Tensor.name" is the method of the first argument. Floats are stored as float.hex (signed
zeros, NaN and every bit exact).
"""
import json
import math
import pathlib

import torch

NAN, INF = float("nan"), float("inf")
SPECIALS = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 1e-40, 3e38, -1e-3, 20.0, 90.0]
GRID_A = [a for a in SPECIALS for _ in SPECIALS]
GRID_B = [b for _ in SPECIALS for b in SPECIALS]
UNIT = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 0.999, -0.9999, 1.0001, 1e-30, -1e-8]
INTS = [0, 1, -1, 7, -12, 18, 127, -128]


def t(values, dtype):
    return {"values": values, "dtype": dtype}


CASES = []
for dtype in ("float32", "float64"):
    for op in ("acos", "asin", "atanh"):
        CASES.append((op, [t(UNIT, dtype)], {}))
    for op in ("atan", "asinh", "acosh", "sinh", "cosh", "sinc", "deg2rad", "rad2deg", "frac", "sgn", "signbit",
               "isposinf", "isneginf", "nan_to_num", "frexp", "logit"):
        CASES.append((op, [t(SPECIALS + UNIT, dtype)], {}))
    for op in ("atan2", "hypot", "copysign", "fmax", "fmin", "logaddexp", "logaddexp2", "xlogy", "nextafter",
               "heaviside"):
        CASES.append((op, [t(GRID_A, dtype), t(GRID_B, dtype)], {}))
# bfloat16 inputs without the subnormal: Triton's interpreter (the emulated cuda device) converts
# bfloat16 subnormals to float32 as 0, where a GPU shifts the bits exactly
NORMAL = [v for v in SPECIALS if v != 1e-40]
for dtype, specials in (("float16", SPECIALS), ("bfloat16", NORMAL)):
    grid_a = [a for a in specials for _ in specials]
    grid_b = [b for _ in specials for b in specials]
    CASES += [("nextafter", [t(grid_a, dtype), t(grid_b, dtype)], {}), ("frexp", [t(specials, dtype)], {}),
              ("nan_to_num", [t(specials, dtype)], {}), ("signbit", [t(specials, dtype)], {}),
              ("atan2", [t(grid_a, dtype), t(grid_b, dtype)], {}), ("sinh", [t(specials, dtype)], {})]
CASES += [
    # integer and bool inputs: float results (or the dtype kept), torch's formulas
    ("asin", [t(INTS, "int32")], {}), ("sinh", [t([True, False], "bool")], {}), ("sinc", [t(INTS, "int64")], {}),
    ("deg2rad", [t(INTS, "int16")], {}), ("sgn", [t(INTS, "int8")], {}), ("sgn", [t([True, False], "bool")], {}),
    ("signbit", [t(INTS, "int64")], {}), ("signbit", [t([0, 200], "uint8")], {}), ("isposinf", [t(INTS, "int32")], {}),
    ("nan_to_num", [t(INTS, "int64")], {"nan": 1.5}), ("logit", [t([0, 1, 2], "int64")], {}),
    ("atan2", [t(INTS, "int64"), t(INTS[::-1], "int32")], {}), ("copysign", [t(INTS, "int64"), -1], {}),
    ("copysign", [t(INTS, "int32"), t(-0.0, "float64")], {}), ("copysign", [t([1.0, -2.0], "float32"), -0.0], {}),
    ("fmax", [t(INTS, "int64"), t(INTS[::-1], "int64")], {}), ("fmin", [t([True, False], "bool"), t([False, False], "bool")], {}),
    ("heaviside", [t(INTS, "int64"), t(INTS[::-1], "int64")], {}), ("heaviside", [t([True, False], "bool"), t([True], "bool")], {}),
    ("ldexp", [t([1.0, 3.0, 1e-40, -0.75, 0.0, INF], "float32"), t([3, -140, 200, 1000, 5000, -5], "int64")], {}),
    ("ldexp", [t([1.0, 3.0, 1e-310, 5e-324, 1.5], "float64"), t([1024, -1074, 1100, 1074, -1075], "int32")], {}),
    ("ldexp", [t([1.0, 2.0], "float16"), t([2, -30], "int64")], {}), ("ldexp", [t(INTS, "int32"), t(INTS, "int32")], {}),
    ("ldexp", [t([0.5, 1.0, 2.0, 0.0], "float32"), t([0.5, -1.5, INF, INF], "float32")], {}),
    ("xlogy", [2, t([0.5, 0.0, INF, NAN, -1.0], "float32")], {}), ("xlogy", [t([0.0, 2.0, NAN, -0.0], "float64"), 3.0], {}),
    ("xlogy", [t(INTS, "int64"), t(INTS, "int64")], {}),
    ("logit", [t(UNIT, "float32")], {"eps": 0.2}), ("logit", [t(UNIT, "float64"), 0.8], {}),
    ("logit", [t(UNIT, "float32")], {"eps": -1.0}),
    ("nan_to_num", [t(SPECIALS, "float32"), 1.5, 1e10, -1e10], {}), ("nan_to_num", [t(SPECIALS, "float16")], {"posinf": 1e10}),
    ("nan_to_num", [t(NORMAL, "bfloat16")], {"posinf": 1e10, "neginf": -3.0}),
    ("nan_to_num", [t(SPECIALS, "float64")], {"nan": 2, "neginf": -5}),
    ("float_power", [t(INTS, "int64"), 2], {}), ("float_power", [t([-2, 0], "int64"), -1], {}),
    ("float_power", [2, t([0.5, -1.0, 3.0], "float32")], {}), ("float_power", [t([4.0, -8.0], "float16"), t([0.5], "bfloat16")], {}),
    ("float_power", [t([True, False], "bool"), True], {}),
    ("gcd", [t([0, -12, 12, -7, 0, 2 ** 62, 48], "int64"), t([0, 18, -18, 0, -5, 2 ** 61, -180], "int64")], {}),
    ("gcd", [t([-128, -128, 64, 0, -128, -128], "int8"), t([-49, 0, -128, 0, 3, 2], "int8")], {}),
    ("gcd", [t([-(2 ** 63), 12], "int64"), t([-49, -(2 ** 63)], "int64")], {}),
    ("gcd", [t([200, 0, 255], "uint8"), t([150, 0, 85], "uint8")], {}),
    ("lcm", [t([0, -12, 12, -7, 0, 4], "int64"), t([0, 18, -18, 0, -5, -6], "int64")], {}),
    ("lcm", [t([100, 7, -128, 20], "int8"), t([3, -6, 3, 30], "int8")], {}),
    ("lcm", [t([200, 15], "uint8"), t([3, 20], "uint8")], {}), ("lcm", [t([46341, -65536], "int32"), t([46340, 65537], "int32")], {}),
]
SHIFTS = {"int8": [0, 1, 7, 8, 9, -1, 3, 100], "uint8": [0, 1, 7, 8, 9, 255, 3, 100],
          "int16": [0, 1, 15, 16, 17, -1, 3, 100], "int32": [0, 1, 31, 32, 33, -1, 3, 100],
          "int64": [0, 1, 63, 64, 65, -1, 3, 100]}
for dtype, amounts in SHIFTS.items():
    values = [1, 3, 5, 100, 200 if dtype == "uint8" else -128, 7, 255 if dtype == "uint8" else -3, 6]
    CASES += [("bitwise_left_shift", [t(values, dtype), t(amounts, dtype)], {}),
              ("bitwise_right_shift", [t(values, dtype), t(amounts, dtype)], {})]
CASES += [
    ("bitwise_left_shift", [2, t([1, 2, 3], "int64")], {}), ("bitwise_right_shift", [t([-9, 9], "int32"), 2], {}),
    ("bitwise_left_shift", [t([1, 2], "int32"), True], {}), ("bitwise_left_shift", [t([True], "bool"), 1], {}),
    ("bitwise_left_shift", [t([1, 2], "uint8"), t([1, 2], "int32")], {}),
    ("lerp", [t([1.0, 2.0, NAN, INF, 0.0], "float32"), t([3.0, -4.0, 1.0, 1.0, -0.0], "float32"), 1.0], {}),
    ("lerp", [t([1.0, 2.0, 5.0], "float64"), t([3.0, 4.0, 7.0], "float64"), t([0.0, 0.49, 0.5], "float64")], {}),
    ("lerp", [t([1.0, 2.0], "float16"), t([3.0, 4.0], "float16"), 0.75], {}),
    ("lerp", [t([1.0, 2.0], "float64"), t([3.0, 4.0], "float64"), t(0.25, "float32")], {}),
    ("lerp", [t([1.0], "float32"), t([3.0, 4.0], "float32"), t([[0.5], [0.1], [2.0]], "float32")], {}),
    ("addcmul", [t([1, 2], "int64"), t([3, 4], "int64"), t([5, 6], "int64")], {"value": 2.5}),
    ("addcmul", [t([1, 2], "int8"), t([100, 4], "int8"), t([5, 6], "int8")], {"value": -3}),
    ("addcmul", [t([1.0, 2.0], "float16"), t([3, 4], "int64"), t([5.0, 6.0], "float32")], {"value": 0.5}),
    ("addcmul", [t([1.0], "float32"), t([3.0], "float32"), t([5.0], "float32")], {"value": t(2.0, "float32")}),
    ("addcdiv", [t([1.0, 2.0, 0.0], "float32"), t([3.0, 4.0, 1.0], "float32"), t([5.0, 0.0, 0.0], "float32")],
     {"value": 2}),
    ("addcdiv", [t([1, 2], "int64"), t([3.0, 4.0], "float32"), t([5, 6], "int64")], {}),
    ("rsub", [t([1.0, 2.0], "float32"), t([5.0, 7.0], "float32")], {"alpha": 2}),
    ("rsub", [t([1, 2], "int64"), 5, 2], {}), ("rsub", [t([1, 2], "uint8"), 1], {}),
    ("positive", [t([1.5, -2.0], "float32")], {}), ("isreal", [t([1.5, NAN], "float32")], {}),
    ("isreal", [t([3], "int64")], {}),
    ("fill", [t([1, 2], "int64"), 2.5], {}), ("fill", [t([1, 2], "int64"), t(2.7, "float64")], {}),
    ("fill", [t([True, False], "bool"), 2], {}), ("fill", [t([1], "uint8"), -1], {}),
    ("fill", [t([1.0, 2.0], "float16"), 1e-8], {}),
    # errors: torch's exception type and text
    ("frac", [t([1, 2], "int64")], {}), ("hypot", [t([1], "int64"), t([1], "int64")], {}),
    ("logaddexp", [t([1], "int32"), t([1], "int32")], {}), ("logaddexp2", [t([True], "bool"), t([True], "bool")], {}),
    ("nextafter", [t([1], "int64"), t([1], "int64")], {}), ("gcd", [t([1.0], "float32"), t([1.0], "float32")], {}),
    ("gcd", [t([1], "int32"), t([1.0], "float16")], {}), ("lcm", [t([True], "bool"), t([True], "bool")], {}),
    ("bitwise_left_shift", [t([1.0], "float32"), 1], {}), ("bitwise_right_shift", [t([1], "int64"), 2.5], {}),
    ("bitwise_right_shift", [t([True], "bool"), t([True], "bool")], {}),
    ("heaviside", [t([1.0], "float32"), t([0.5], "float64")], {}), ("heaviside", [t([1.0], "float32"), 0.5], {}),
    ("heaviside", [t([1.0], "float32"), t(0.5, "float64")], {}),
    ("atan2", [t([1.0], "float32"), 2], {}), ("atan2", [2, t([1.0], "float32")], {}),
    ("fmax", [t([1.0], "float32"), 1.0], {}), ("hypot", [t([1.0], "float32"), 1.0], {}),
    ("ldexp", [t([1.0], "float32"), 2], {}), ("nextafter", [t([1.0], "float32"), 2.0], {}),
    ("lerp", [t([1.0], "float32"), t([2.0], "float64"), 0.5], {}),
    ("lerp", [t([1.0, 2.0], "float64"), t(1.0, "float32"), 0.5], {}),
    ("lerp", [t([1, 2], "int64"), t([3, 4], "int64"), 0.5], {}),
    ("lerp", [t([1, 2], "int64"), t([3, 4], "int64"), t([0, 1], "int64")], {}),
    ("lerp", [t([1.0], "float32"), t([2.0], "float32"), t([0.5], "float64")], {}),
    ("lerp", [t([1.0], "float32"), 1.0, 0.5], {}),
    ("addcmul", [t([True], "bool"), t([True], "bool"), t([True], "bool")], {}),
    ("addcdiv", [t([1, 2], "int64"), t([3, 4], "int64"), t([5, 6], "int64")], {}),
    ("addcdiv", [t([1.0], "float32"), t([3], "int64"), t([5], "int32")], {}),
    ("addcdiv", [t([1.0], "float32"), t([3], "bool"), t([5], "uint8")], {}),
    ("frexp", [t([1, 2], "int64")], {}), ("float_power", [2, 3], {}),
    ("Tensor.float_power_", [t([1.0], "float32"), 2], {}), ("Tensor.float_power_", [t([1], "int64"), 2], {}),
    ("rsub", [2, t([1.0], "float32")], {}), ("positive", [t([True], "bool")], {}),
    ("fill", [t([1.0], "float32"), t([1.0, 2.0], "float32")], {}), ("fill", [t([1], "uint8"), 300], {}),
    ("fill", [t([1.0], "float32"), "a"], {}),
    ("copysign", [2.0, t([1.0], "float32")], {}), ("nan_to_num", [t([1.0], "float32")], {"nan": "x"}),
    ("Tensor.acos_", [t([1, 2], "int64")], {}), ("Tensor.lerp_", [t([1.0], "float32"), t([2.0, 3.0], "float32"), 0.5], {}),
    ("Tensor.atan2_", [t([1.0], "float32"), 2.0], {}),
]


def build(arg):
    if isinstance(arg, dict):
        return torch.tensor(arg["values"], dtype=getattr(torch, arg["dtype"]))
    return arg


def encode_value(v):
    if isinstance(v, float):
        return v.hex() if not math.isnan(v) else "nan"
    return v


def encode(result):
    if isinstance(result, tuple):
        return {"tuple": [encode(r) for r in result]}
    values = result.reshape(-1).tolist()
    return {"dtype": str(result.dtype).split(".")[-1], "shape": list(result.shape),
            "values": [encode_value(float(v)) if result.dtype.is_floating_point else v for v in values]}


def run(op, args, kwargs):
    built = [build(a) for a in args]
    kw = {k: build(v) for k, v in kwargs.items()}
    if op.startswith("Tensor."):
        return getattr(built[0], op[len("Tensor."):])(*built[1:], **kw)
    return getattr(torch, op)(*built, **kw)


records = []
for op, args, kwargs in CASES:
    try:
        result = {"result": encode(tuple(run(op, args, kwargs)) if op == "frexp" else run(op, args, kwargs))}
    except Exception as e:          # torch's exception type and message are part of the expectation
        result = {"error": [type(e).__name__, str(e)]}
    records.append({"op": op, "args": args, "kwargs": kwargs, **result})

out = pathlib.Path(__file__).with_name("pointwise_math_values.json")
out.write_text(json.dumps({"torch": torch.__version__, "cases": records}, indent=None, allow_nan=True) + "\n")
print(f"{len(records)} cases -> {out}")
