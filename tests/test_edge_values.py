"""Every pointwise op of the table at its edges, forward and backward, against torch's values.

The points: 0 and -0, +-1, halves (rounding), +-inf, NaN, the smallest subnormal, the smallest
normal (tiny) and the largest finite value of each float dtype; for integers 0, small values and
the limits (overflow wraps as torch's); False/True for bool. Binary ops take every pair of points.
Each elementwise record of tests/opinfo.py (reference == "table", so new pointwise ops join by
themselves) runs in every dtype on cpu, and in float32 on cuda (one launch). Checked: values
(NaN and infinities exactly, the sign of a zero result, finite values within torch's default
tolerance), dtype, shape, torch's exception where torch raises (integer division by zero), and for
the float dtypes the gradient at the same points (relu'(0) = 0, abs'(0) = 0, sqrt'(0) = inf,
maximum's tie split ...). Besides the table's entries, EDGE_EXPRESSIONS of
tests/data/make_torch_fixtures.py (clamp and hardtanh at their bounds, max/min ties, pow with
fixed exponents ...) run the same way.

The values are torch's, recorded by tests/data/make_torch_fixtures.py (no torch here). HOW TO
REGENERATE after new pointwise ops land: see that file's docstring (two commands), then run this
file with -s. A record implemented when the fixture was recorded is strict; one built since is
checked and reported (its op_db name was recorded while pending), and fails only once the fixture
is regenerated or with TRITENSOR_ORACLE_STRICT=1; a record with no edge values at all is listed
(and fails under TRITENSOR_ORACLE_STRICT=1).
"""
from __future__ import annotations

import functools
import os
import warnings

import numpy as np
import pytest

import tritensor as tt
from opinfo import RECORDS
from oracle_fixture import compare_tensor, load, numpy_values

STRICT_ALL = os.environ.get("TRITENSOR_ORACLE_STRICT") == "1"
FLOATS = ("float16", "bfloat16", "float32", "float64")

# "op", "op/dtype", "op/dtype/forward" or "op/dtype/grad" -> why tritensor differs from torch
# there. Only shrinks: a listed key whose cases all agree fails.
_HELPER_DTYPES = ("an internal backward helper (no public function; autograd calls it with floating "
                  "gradients only): tritensor computes integer inputs in the default float dtype, torch's aten "
                  "kernel has no integer case")
_VECTOR_NAN = ("torch's CPU kernel answers a NaN input differently in its vectorised body (here 0) and its "
               "scalar tail (1, its formula `x <= min || x >= max ? 0 : grad`); tritensor follows the formula")
_UNINITIALISED = ("torch returns uninitialised memory for a NaN x (its recurrence never sets the result on that "
                  "path: 6.9e-310, 0, 1e-43 ... varying run to run); tritensor gives NaN")
_FLOAT32_ARG = ("torch computes this dtype in float32 (its phase / argument reduction loses the value at "
                "|x| >= 2**15); tritensor computes the float32-rounded argument in float64: at x = -32768, "
                "airy_ai is -0.0345307 in tritensor and mpmath, -0.0349936 in torch")
_SUBNORMAL_K = ("at the smallest float32 subnormal torch computes log(0.5f * x) in float32: the halved "
                "subnormal rounds to 0, log gives -inf, times i1(x) = 0 is NaN (k1, scaled k1) or inf (scaled "
                "k0); tritensor computes in float64: the function's value (inf for k1, 103.39 for scaled k0)")
_IGAMMA_FLOAT32 = ("torch's float32 kernel overflows at a = the largest float (a log x past float32's range: "
                   "NaN) and underflows at a = x = the smallest subnormal (0 where P = 1 - 1e-43); tritensor "
                   "computes in float64 and rounds: the mathematical values (igamma 0 at (max, 3), 1 at the subnormals; "
                   "igammac the complements)")
KNOWN_DIFFERENCES: dict[str, str] = {
    **{f"special_{p}/{dtype}/forward": _UNINITIALISED
       for p in ("chebyshev_polynomial_u", "chebyshev_polynomial_w", "legendre_polynomial_p",
                 "laguerre_polynomial_l", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_w")
       for dtype in ("float32", "float64")},
    "special_laguerre_polynomial_l/int8/forward": ("int8 computes in float32 in torch: its recurrence to degree "
                                                   "127 rounds at every step; tritensor's is the closer to "
                                                   "the exact value (L_126(-1): mpmath 303683856.6, tritensor "
                                                   "303683488, torch 303684736)"),
    **{f"special_{fn}/{dtype}/forward": _FLOAT32_ARG
       for fn, dtypes in (("airy_ai", ("int16", "int32")), ("bessel_j0", ("int32",)), ("bessel_j1", ("int32",)),
                          ("bessel_y1", ("int32",)))
       for dtype in dtypes},
    "special_airy_ai/float32/forward": ("at x = -3.4e38 torch's float32 kernel overflows (zeta = 2/3 |x|^1.5 "
                                        "is inf: NaN); tritensor's float64 computation gives a finite value of "
                                        "the envelope's size (1.2e-10)"),
    **{f"special_{fn}/float32/forward": _SUBNORMAL_K
       for fn in ("modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1")},
    **{f"{fn}/{dtype}/forward": _IGAMMA_FLOAT32 for fn in ("igamma", "igammac") for dtype in ("float32", "bfloat16")},
    **{f"digamma/{dtype}/grad": ("digamma's derivative is trigamma: torch's reflection evaluates sin(pi x) in "
                                 "floating point, so at the pole x = -1 it gives 6.6e32 (float64) instead of "
                                 "inf, and NaN at -max where pi x overflows; tritensor reads sin(pi x) from x's "
                                 "distance to the nearest integer (exact): inf at every pole")
       for dtype in ("float32", "float64", "bfloat16")},
    "logaddexp2/float16/forward": ("logaddexp2(-1, -1) is exactly 0: torch's float16 kernel computes in float32, "
                                   "where log1p(1) / ln 2 rounds below 1, and -6e-8 rounds to -0.0 in float16; "
                                   "tritensor gives +0.0"),
    **{f"special_i0e/{dtype}/grad": ("the derivative i1e(x) - sgn(x) i0e(x) cancels in 16 bits, so i0e's last "
                                     "bit decides it: tritensor's i0e(-1.5) is the correctly rounded 0.36743 "
                                     "(exact 0.367546), torch's 16-bit kernel gives 0.36768, one ulp up; the "
                                     "gradients end 2-4 ulps apart")
       for dtype in ("float16", "bfloat16")},
    "floor_divide": ("torch has no derivative for floor_divide (\"derivative for aten::floor_divide is not "
                     "implemented\"); tritensor's is zero, as div(rounding_mode='floor')'s, and "
                     "tests/opinfo.py's gradient case specifies that"),
    **{f"erf_backward/{dtype}/grad": ("the derivative of erf_backward at a huge grad: torch's chain rule "
                                      "overflows an intermediate product to inf, tritensor's order stays finite")
       for dtype in ("float16", "bfloat16", "float32", "float64")},
    "silu_backward": ("torch's aten silu_backward has no derivative (its silu double backward takes another "
                      "formula); tritensor's helper is differentiable"),
    **{f"{op}/{dtype}": _HELPER_DTYPES for op in ("tanh_backward", "sigmoid_backward")
       for dtype in ("bool", "uint8", "int8", "int16", "int32", "int64")},
    "relu_backward/bool": _HELPER_DTYPES,
    **{f"erf_backward/{dtype}": ("an internal backward helper with no aten op: the recorded torch formula "
                                 "runs in integer arithmetic for integer inputs (x ** 2 wraps), tritensor's in "
                                 "float (autograd calls it with floating gradients only)")
       for dtype in ("uint8", "int8", "int16", "int32", "int64")},
    **{f"{op}/{dtype}/forward": ("torch's CPU fmod/remainder compute x - trunc(x / y) * y: NaN when x / y "
                                 "overflows (a subnormal divisor); tritensor gives C's exact fmod")
       for op in ("fmod", "remainder") for dtype in ("float32", "float64", "bfloat16")},
    **{f"gelu/{dtype}/forward": "torch's vectorised float32 gelu gives NaN at +inf (its float64 path: inf, "
                                "as tritensor)" for dtype in ("float32", "bfloat16")},
    **{f"gelu_backward/{dtype}/grad": ("the derivative of gelu_backward in 16 bits: tritensor's is a composite "
                                       "of 16-bit ops (each rounds), torch's one kernel; 3-4 ulps apart")
       for dtype in ("float16", "bfloat16")},
    **{f"torch.nn.functional.{fn}(x)/{dtype}/grad": _VECTOR_NAN
       for fn in ("hardtanh", "relu6") for dtype in ("float32", "float64")},
    **{f"torch.pow(x, 0.5)/{dtype}/grad": ("torch computes x ** -0.5 as rsqrt (NaN at -inf), so its "
                                           "gradient of x ** 0.5 is NaN there; tritensor's pow gives 0")
       for dtype in ("float32", "float64", "bfloat16")},
    "torch.pow(x, 0.5)/float16/forward": ("torch's float16 kernel computes x ** 0.5 with pow (inf at -inf), "
                                          "its float32 one with sqrt (NaN); tritensor's computes in float32 (NaN)"),
}

# Cases not run at all, with why: the (op, dtype) would not finish in a test's time.
NOT_RUN: dict[str, str] = {
    **{f"special_{p}_polynomial_{q}/{dtype}": (
        "the degree n = the dtype's maximum (2**31 - 1) runs the recurrence n times in a Python loop "
        "(torch's C loop takes seconds): hangs")
       for p, q in (("laguerre", "l"), ("legendre", "p")) for dtype in ("int16", "int32")},
}

# Where the sign of a zero result is not defined by torch: max/min of equal zeros (-0.0 vs +0.0)
# give the first or the second operand depending on whether the element falls in torch's
# vectorised loop or its scalar tail (IEEE 754 leaves it open too). Not checked there.
ZERO_SIGN_UNDEFINED = ("maximum", "minimum", "clamp", "fmax", "fmin")


def _records():
    return {r.name: r for r in RECORDS if r.reference == "table"}


def edge_entry(record):
    """The recorded edge grid of an elementwise record (by its name, else its op_db names)."""
    edges = load()[0]["edges"]
    for name in (record.name, *record.op_db):
        if name in edges:
            return edges[name]
    return None


def strict_names():
    implemented_then = set(load()[0]["elementwise_implemented"])
    return sorted(n for n, r in _records().items()
                  if edge_entry(r) is not None and (n in implemented_then or STRICT_ALL))


def provisional_names():
    return sorted(n for n, r in _records().items() if edge_entry(r) is not None and n not in strict_names())


def _tensor(index, dtype, device, grad):
    values = numpy_values(index, dtype).copy()
    return tt.tensor(values, dtype=getattr(tt, dtype), device=device, requires_grad=grad)


def check_case(fn, case, dtype, device="cpu", grads=True, signed_zeros=True):
    """[(part, what differs)] for one recorded edge case (forward, then gradient)."""
    floating = dtype in FLOATS
    want_grad = grads and floating and ("grads" in case or "grads_raise" in case)
    xs = [_tensor(i, dtype, device, want_grad) for i in case["inputs"]]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(*xs)
    except Exception as e:
        if "raises" in case and type(e).__name__ == case["raises"]:
            return check_case(fn, case["nonzero_divisor"], dtype, device, grads, signed_zeros) \
                if "nonzero_divisor" in case else []
        return [("forward", f"raised {type(e).__name__}: {str(e)[:150]}"
                 + (f" (torch {case['raises']})" if "raises" in case else ""))]
    if "raises" in case:
        return [("forward", f"returned, torch raised {case['raises']}: {case['message'][:120]}")]
    problems = []
    if signed_zeros:
        signed_zeros = _normal_inputs(case["inputs"], dtype)
    why = compare_tensor(out, case["result"], signed_zeros=signed_zeros)
    if why:
        problems.append(("forward", why))
    if not want_grad:
        return problems
    if "grads_raise" in case:
        try:
            tt.autograd.grad(out, xs, tt.ones_like(out), allow_unused=True)
            problems.append(("grad", f"no error, torch's backward raised {case['grads_raise']}"))
        except Exception:
            pass
        return problems
    if not out.requires_grad:
        return problems + [("grad", "the result does not require grad; torch's does")]
    try:
        got = tt.autograd.grad(out, xs, tt.ones_like(out), allow_unused=True)
    except Exception as e:
        return problems + [("grad", f"backward raised {type(e).__name__}: {str(e)[:150]}")]
    for i, (g, want) in enumerate(zip(got, case["grads"])):
        if want is None:
            if g is not None and bool((g != 0).any()):
                problems.append(("grad", f"d/dx{i}: torch has no gradient, tritensor a nonzero one"))
            continue
        why = compare_tensor(g if g is not None else tt.zeros_like(xs[i]), want, signed_zeros=False)
        if why:
            problems.append(("grad", f"d/dx{i}: {why}"))
    return problems


def _normal_inputs(inputs, dtype):
    """Where no input is subnormal: elsewhere a zero's sign follows whether the hardware flushes
    subnormals (FTZ/DAZ, usual on GPUs), so it is not checked there."""
    if dtype not in FLOATS:
        return True
    mask = True
    for index in inputs:
        x = numpy_values(index, dtype).astype(np.float64)
        tiny = float(getattr(tt.finfo(getattr(tt, dtype)), "tiny"))
        mask = mask & ~((x != 0) & (np.abs(x) < tiny))
    return mask


def known(name, dtype, part):
    for key in (f"{name}/{dtype}/{part}", f"{name}/{dtype}", name):
        if key in KNOWN_DIFFERENCES:
            return key
    return None


@functools.lru_cache(maxsize=None)
def outcomes(name):
    """dtype -> [(part, what differs)] for elementwise record ``name`` on cpu."""
    record = _records()[name]
    entry = edge_entry(record)
    return {dtype: check_case(record.op, case, dtype, signed_zeros=_zero_sign_defined(name))
            for dtype, case in entry["dtypes"].items() if f"{name}/{dtype}" not in NOT_RUN}


def _zero_sign_defined(name):
    return not any(part in name for part in ZERO_SIGN_UNDEFINED)


def _assert_agrees(name, results):
    differ = [f"{name}/{dtype}/{part}: {why}" for dtype, problems in results.items()
              for part, why in problems if not known(name, dtype, part)]
    keys = {k for k in KNOWN_DIFFERENCES if k == name or k.startswith(name + "/")}
    stale = [k for k in keys if not any(known(name, dtype, part) == k
                                        for dtype, problems in results.items() for part, _ in problems)]
    assert not differ, "differs from torch at the edges (fix it, or list it in KNOWN_DIFFERENCES " \
                       "with the reason):\n  " + "\n  ".join(differ)
    assert not stale, f"agrees with torch now: remove from KNOWN_DIFFERENCES: {stale}"


@pytest.mark.parametrize("name", strict_names())
def test_pointwise_op_at_the_edges_cpu(name):
    _assert_agrees(name, outcomes(name))


@functools.lru_cache(maxsize=None)
def expression_outcomes(text):
    fn = eval("lambda x: " + text, {"torch": tt})
    return {dtype: check_case(fn, case, dtype, signed_zeros=_zero_sign_defined(text))
            for dtype, case in load()[0]["edge_expressions"][text].items()}


@pytest.mark.parametrize("text", sorted(load()[0]["edge_expressions"]))
def test_bounds_ties_and_exponents_at_the_edges_cpu(text):
    _assert_agrees(text, expression_outcomes(text))


@pytest.mark.parametrize("name", strict_names())
def test_pointwise_op_at_the_edges_cuda_float32(name):
    """The kernels at the same points: one float32 launch per op (forward only: the backward is
    built from the same table ops)."""
    record = _records()[name]
    case = edge_entry(record)["dtypes"]["float32"]
    problems = [(part, why) for part, why in check_case(record.op, case, "float32", "cuda", grads=False,
                                                        signed_zeros=_zero_sign_defined(name))
                if not known(name, "float32", part) and not known(name, "float32/cuda", part)]
    assert not problems, problems


def test_every_pointwise_record_has_edge_values():
    """The coverage report: records checked strictly, records built since the recording
    (checked, reported here), records without edge values (regenerate the fixture)."""
    missing = sorted(n for n, r in _records().items() if edge_entry(r) is None)
    report = []
    for name in provisional_names():
        results = outcomes(name)
        bad = [f"{dtype}/{part}: {why}" for dtype, problems in results.items() for part, why in problems]
        report.append(f"  built since the recording: {name}: " + ("agrees" if not bad else
                      f"{len(bad)} difference(s)" + "".join(f"\n    {b}" for b in bad[:6])))
    print(f"\nedge values: {len(strict_names())} pointwise records checked, {len(provisional_names())} "
          f"built since the recording, {len(missing)} without edge values {missing}")
    print("\n".join(report))
    if STRICT_ALL:
        assert not missing, f"no edge values recorded for {missing}: regenerate the fixture"
    assert len(strict_names()) >= 60
