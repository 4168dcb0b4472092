"""OpInfo records of the pointwise math of issue 21.2 (tritensor/ops/pointwise_math.py): inverse
and hyperbolic trigonometry, atan2, hypot, sinc, logit, logaddexp, xlogy, copysign, fmax/fmin,
frac, heaviside, ldexp, frexp, nan_to_num, float_power, sgn, signbit, isposinf/isneginf/isreal,
nextafter, gcd/lcm, the shifts, lerp, addcmul/addcdiv, positive, rsub and fill.

The elementwise records compare with the table's reference, NumPy's own ufunc for the
transcendental functions (np.arcsin ...), so the emulated cuda kernels (Cephes-style
approximations) are checked against an independent implementation; the ops whose reference is
torch's formula written in NumPy get hand-written references here, and
tests/test_pointwise_math.py pins values recorded from torch, math and mpmath.

Every dtype torch's cpu kernels take is listed; the layouts (0-d, size-0, transposed, sliced,
broadcast, odd sizes past a block) run in float32, the other dtypes one odd-sized sample each,
so the emulated device runs few, small programs.
"""
from __future__ import annotations

import numpy as np

import tritensor as tt
from opinfo import (GRAD_CASES, LAYOUTS, OpInfo, PARITY_ESCAPES, RECORDS, SampleInput, TOLERANCES, _t, record,
                    rng_for)
from opinfo import values as _opinfo_values

ALL = (tt.bool, tt.uint8, tt.int8, tt.int16, tt.int32, tt.int64, tt.float16, tt.bfloat16, tt.float32, tt.float64)
NO_BOOL = ALL[1:]
FLOATS = (tt.float16, tt.bfloat16, tt.float32, tt.float64)
INTEGERS = (tt.uint8, tt.int8, tt.int16, tt.int32, tt.int64)
# NaN, infinities, signed zeros, a subnormal, huge and tiny values, both signs
SPECIALS = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 1e-40, 3e38, -1e-3, 20.0, 90.0]


def _specials(dtype):
    """SPECIALS in ``dtype``; bfloat16 without its subnormal: Triton's interpreter converts
    bfloat16 subnormals to float32 as 0 (a real GPU shifts the bits, exactly)."""
    return [v for v in SPECIALS if dtype is not tt.bfloat16 or v != 1e-40]


def _values(shape, dtype, domain, rng):
    """opinfo.values plus the domains of these ops: "unit" (asin, acos, atanh: [-1, 1]), "ge1"
    (acosh), "prob" (logit: (0, 1)), "shift" (shift amounts, some out of range), "wide" integers
    (gcd, lcm: across the type's range, some zeros)."""
    if dtype is tt.bool:
        return rng.integers(0, 2, size=shape).astype(bool)
    if domain == "unit":
        return rng.integers(-1, 2, size=shape) if not dtype.is_floating_point else rng.uniform(-1, 1, size=shape)
    if domain == "ge1":
        return rng.integers(1, 20, size=shape) if not dtype.is_floating_point else 1 + np.abs(rng.standard_normal(shape)) * 3
    if domain == "prob":
        return rng.integers(0, 2, size=shape) if not dtype.is_floating_point else rng.uniform(0, 1, size=shape)
    if domain == "shift":
        return rng.integers(0 if dtype is tt.uint8 else -3, 70, size=shape)
    if domain == "wide" and not dtype.is_floating_point:
        info = np.iinfo(dtype.numpy_dtype)
        v = rng.integers(info.min, info.max, size=shape, endpoint=True)
        return np.where(rng.uniform(size=shape) < 0.1, 0, v)
    v = _opinfo_values(shape, dtype, domain, rng)
    return np.abs(v) if dtype is tt.uint8 else v


def _factory(dtype, domain, device, rng):
    def make(shape):
        return tt.tensor(_values(shape, dtype, domain, rng), dtype=dtype, device=device)
    return make


UNARY_LAYOUTS = tuple(LAYOUTS)
BINARY_LAYOUTS = ("0d", "empty", "odd", "transposed", "sliced", "broadcast")
# the emulated device interprets every FN op by op (~1 ms per helper call per program): there the
# layouts are float32's "odd" and "transposed" only (cpu runs them all; the launcher's layouts are
# checked by tests/opinfo.py's records), the other dtypes one "odd" sample each
CUDA_LAYOUTS = ("odd", "transposed")


def _with_specials(arg, position, arity, dtype):
    """The "odd" sample with NaN, infinities, signed zeros and extremes written in: every pair of
    SPECIALS for a binary float32 op, SPECIALS in front elsewhere."""
    if not dtype.is_floating_point:
        return arg
    host = arg.cpu().numpy().astype(np.float64).reshape(-1)
    specials = np.asarray(_specials(dtype))
    if arity == 2 and dtype is tt.float32:
        n = len(specials)
        grid = np.repeat(specials, n) if position == 0 else np.tile(specials, n)
        host[:grid.size] = grid
    else:
        host[:specials.size] = specials if position == 0 else specials[::-1]
    return tt.tensor(host.reshape(tuple(arg.shape)), dtype=dtype, device=arg.device)


def _elementwise_samples(name, arity, domains, scalars=(), scalar_left=True):
    """The layouts (all on cpu, CUDA_LAYOUTS on cuda) in float32, one odd-sized sample in the
    other dtypes (with SPECIALS written in), a broadcast of mixed layouts, and Python scalars on
    either side (``scalars``)."""
    def samples(device, dtype):
        layouts = (UNARY_LAYOUTS if arity == 1 else BINARY_LAYOUTS) if device == "cpu" else CUDA_LAYOUTS
        for lay in (layouts if dtype is tt.float32 else ("odd",)):
            args = tuple(LAYOUTS[lay](_factory(dtype, domains[i], device, rng_for(name, dtype, lay, i)))
                         for i in range(arity))
            if lay == "odd":
                args = tuple(_with_specials(a, i, arity, dtype) for i, a in enumerate(args))
            yield SampleInput(args, desc=lay)
        if dtype is tt.float32 and arity == 2 and device == "cpu":
            a = _factory(dtype, domains[0], device, rng_for(name, "mixed", 0))((7, 1, 5)).permute(2, 1, 0)
            b = _factory(dtype, domains[1], device, rng_for(name, "mixed", 1))((6, 1))[::2]
            yield SampleInput((a, b), desc="mixed-broadcast")
        for s in scalars if device == "cpu" or dtype in (tt.float32, tt.int64) else ():
            x = _factory(dtype, domains[0], device, rng_for(name, dtype, "scalar", s))((4, 33))
            for args in ((x, s), (s, x)) if scalar_left else ((x, s),):
                yield SampleInput(args, desc=f"scalar-{s!r}-{'right' if args[1] is s else 'left'}")
    return samples


def _elementwise(name, arity, dtypes, domains, fn=None, op=None, scalars=(), scalar_left=True, tolerances=None):
    rec = OpInfo(name, op=op or getattr(tt, name), dtypes=tuple(dtypes),
                 sample_inputs=_elementwise_samples(name, arity, domains, scalars, scalar_left), reference="table",
                 kernel_fn=fn or name)
    if tolerances:
        rec.tolerances = {**TOLERANCES, **tolerances}
    RECORDS.append(rec)
    return rec


# --------------------------------------------------------------------------- unary
# sinh/cosh of float16: the result rounds to float16 from the float32 kernel (as torch's)
for _name, _domain in (("acos", "unit"), ("asin", "unit"), ("atan", "any"), ("asinh", "any"), ("acosh", "ge1"),
                       ("atanh", "unit"), ("sinh", "any"), ("cosh", "any"), ("sinc", "any"), ("deg2rad", "wide"),
                       ("rad2deg", "any")):
    _elementwise(_name, 1, ALL, (_domain,))
_elementwise("frac", 1, FLOATS, ("wide",))
_elementwise("sgn", 1, ALL, ("any",), fn="sign")
for _name in ("signbit", "isposinf", "isneginf"):
    _elementwise(_name, 1, ALL, ("any",))

# --------------------------------------------------------------------------- binary
_elementwise("atan2", 2, ALL, ("any", "any"))
_elementwise("hypot", 2, FLOATS, ("any", "any"))
_elementwise("copysign", 2, ALL, ("any", "any"), scalars=(-1, 2.5, -0.0), scalar_left=False)   # no (Number, Tensor)
_elementwise("fmax", 2, ALL, ("any", "any"))
_elementwise("fmin", 2, ALL, ("any", "any"))
_LDEXP = _elementwise("ldexp", 2, ALL, ("any", "small"))


def _ldexp_samples(device, dtype):
    """A floating input takes an integer exponent here: the table entry (the exact scaling) runs
    only for that pair (a floating exponent is x * 2**e, a composite: tests/test_edge_values.py)."""
    for sample in _elementwise_samples("ldexp", 2, ("any", "small"))(device, dtype):
        x, e = sample.args
        if dtype.is_floating_point and isinstance(e, tt.Tensor):
            e = tt.where(tt.isfinite(e), e, 0.0).round().to(tt.int64)
        yield SampleInput((x, e), desc=sample.desc)


_LDEXP.sample_inputs = _ldexp_samples
_elementwise("logaddexp", 2, FLOATS, ("any", "any"))
_elementwise("logaddexp2", 2, FLOATS, ("any", "any"))
_elementwise("xlogy", 2, ALL, ("any", "positive"), scalars=(3, 0.5))
_elementwise("heaviside", 2, ALL, ("small", "any"))
for _name in ("gcd", "lcm"):
    _elementwise(_name, 2, INTEGERS, ("wide", "wide"))
_elementwise("bitwise_left_shift", 2, INTEGERS, ("wide", "shift"), scalars=(3,))
_elementwise("bitwise_right_shift", 2, INTEGERS, ("wide", "shift"), scalars=(3,))


# --------------------------------------------------------------------------- hand-written references
def _first_on_cuda(samples, main=tt.float32):
    """All samples on cpu and in ``main``; the first one only in the other dtypes on cuda."""
    def trimmed(device, dtype):
        found = samples(device, dtype)
        if device == "cpu" or dtype is main:
            yield from found
        else:
            yield next(found)
    return trimmed


def _nextafter_samples(device, dtype):
    """The op ignores ``storage``: the reference needs the dtype (16-bit values arrive widened)."""
    make = _factory(dtype, "any", device, rng_for("nextafter", dtype))
    a = _with_specials(make((3, 67)), 0, 2, dtype)
    yield SampleInput((a, _with_specials(make((3, 67)), 1, 2, dtype)), {"storage": dtype.name}, desc="odd-nan-inf")
    yield SampleInput((a, a), {"storage": dtype.name}, desc="equal")
    yield SampleInput((make((9, 13)).t(), make((9,))), {"storage": dtype.name}, desc="transposed-broadcast")


def _nextafter_reference(a, b, storage):
    dtype = np.dtype(getattr(tt, storage).numpy_dtype)
    a, b = a.astype(dtype), b.astype(dtype)
    return np.where(a == b, b, np.nextafter(a, b))      # C's nextafter returns b itself when equal


record("nextafter", lambda a, b, storage: tt.nextafter(a, b), FLOATS, _first_on_cuda(_nextafter_samples), _nextafter_reference,
       tolerances={d: (0, 0) for d in FLOATS})


def _logit_samples(device, dtype):
    make = _factory(dtype, "prob", device, rng_for("logit", dtype))
    yield SampleInput((make((3, 67)),), desc="no-eps")
    yield SampleInput((make((9, 13)).t(),), {"eps": 0.2}, desc="eps-transposed")
    yield SampleInput((tt.tensor([0.0, 0.1, 0.5, 1.0, 1.5, -0.5, float("nan")], dtype=dtype, device=device),),
                      {"eps": 0.8}, desc="eps-above-half")
    yield SampleInput((make((5,)),), {"eps": -1.0}, desc="negative-eps")


def _logit_reference(x, eps=None):
    if eps is not None and eps >= 0:
        x = np.where(x < eps, eps, np.where(x > 1 - eps, 1 - eps, x))
    return np.log(x / (1 - x))


record("logit", tt.logit, ALL, _first_on_cuda(_logit_samples), _logit_reference)


def _nan_to_num_samples(device, dtype):
    x = tt.tensor(SPECIALS * 5, dtype=dtype, device=device)
    yield SampleInput((x.view(5, 14).t(),), {"nan": 1.5, "posinf": 100.0, "neginf": -7.0}, desc="explicit-transposed")
    if dtype in (tt.float32, tt.float64) or not dtype.is_floating_point:
        yield SampleInput((x,), desc="defaults")
        yield SampleInput((x,), {"neginf": -1.0}, desc="one-given")


def _nan_to_num_reference(x, nan=0.0, posinf=None, neginf=None):
    return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf) if x.dtype.kind == "f" else x


record("nan_to_num", tt.nan_to_num, ALL, _first_on_cuda(_nan_to_num_samples), _nan_to_num_reference)


def _frexp_samples(device, dtype):
    make = _factory(dtype, "wide", device, rng_for("frexp", dtype))
    yield SampleInput((_with_specials(make((3, 67)), 0, 1, dtype),), desc="odd-nan-inf-subnormal")
    yield SampleInput((make((9, 13)).t(),), desc="transposed")


record("frexp", tt.frexp, FLOATS, _first_on_cuda(_frexp_samples), lambda x: np.frexp(x),
       tolerances={d: (0, 0) for d in FLOATS})
# frexp's two table entries run through tt.frexp's record (the mantissa's gradient case is below)
PARITY_ESCAPES["frexp_mantissa"] = "through tt.frexp's record (tests/opinfo_pointwise.py)"
PARITY_ESCAPES["frexp_exponent"] = "through tt.frexp's record (tests/opinfo_pointwise.py)"


def _lerp_samples(device, dtype):
    make = _factory(dtype, "any", device, rng_for("lerp", dtype))
    weights = _factory(dtype, "unit", device, rng_for("lerp-weights", dtype))
    yield SampleInput((make((3, 67)), make((3, 67)), 0.3), desc="scalar-weight")
    yield SampleInput((make((3, 67)), make((67,)), 0.75), desc="scalar-weight-above-half")
    yield SampleInput((make((9, 13)).t(), make((13, 1)), weights((9,)) * 2), desc="tensor-weight-broadcast")
    yield SampleInput((make(()), make((4,)), tt.tensor(0.25, device=device)), desc="0d-weight-other-dtype")


def _lerp_reference(x, end, weight):
    d = end - x
    return np.where(np.abs(weight) < 0.5, x + weight * d, end - d * (1 - weight))


record("lerp", tt.lerp, FLOATS, _first_on_cuda(_lerp_samples), _lerp_reference)


def _addc_samples(name):
    def samples(device, dtype):
        make = _factory(dtype, "nonzero", device, rng_for(name, dtype))
        other = tt.float32 if name == "addcdiv" and not dtype.is_floating_point else dtype
        make_other = _factory(other, "nonzero", device, rng_for(name, dtype, "other"))
        yield SampleInput((make((3, 67)), make_other((3, 67)), make((67,))), desc="default-value")
        yield SampleInput((make((9, 13)).t(), make_other((13, 1)), make((9,))), {"value": 2.5}, desc="value-transposed")
        yield SampleInput((make(()), make_other((5,)), make((5,))), {"value": -3}, desc="0d-input")
    return samples


def _addc_reference(combine):
    def reference(x, t1, t2, value=1):
        dtype = np.result_type(x, t1, t2)
        v = np.asarray(value).astype(dtype) if dtype.kind != "f" else value   # torch: the value in the dtype
        return x + combine(v * t1, t2)
    return reference


record("addcmul", tt.addcmul, NO_BOOL, _first_on_cuda(_addc_samples("addcmul")), _addc_reference(np.multiply))
record("addcdiv", tt.addcdiv, NO_BOOL, _first_on_cuda(_addc_samples("addcdiv")), _addc_reference(np.true_divide))


def _float_power_samples(device, dtype):
    make = _factory(dtype, "pow", device, rng_for("float_power", dtype))
    yield SampleInput((make((3, 67)), make((67,))), desc="tensors", result_dtype=tt.float64)
    yield SampleInput((make((9, 13)).t(), -1.5), desc="scalar-exponent", result_dtype=tt.float64)
    yield SampleInput((2, make((5,))), desc="scalar-base", result_dtype=tt.float64)


record("float_power", tt.float_power, ALL, _first_on_cuda(_float_power_samples),
       lambda x, y: np.power(np.asarray(x, np.float64), np.asarray(y, np.float64)))


def _rsub_samples(device, dtype):
    make = _factory(dtype, "any", device, rng_for("rsub", dtype))
    yield SampleInput((make((3, 67)), make((67,))), desc="tensors")
    yield SampleInput((make((9, 13)).t(), 4), {"alpha": 2}, desc="scalar-alpha")


record("rsub", tt.rsub, NO_BOOL, _first_on_cuda(_rsub_samples), lambda x, y, alpha=1: y - alpha * x)


def _one_tensor(name, domain="any"):
    def samples(device, dtype):
        make = _factory(dtype, domain, device, rng_for(name, dtype))
        yield SampleInput((make((9, 13)).t(),), desc="transposed")
        yield SampleInput((make(()),), desc="0d")
    return samples


record("positive", tt.positive, NO_BOOL, _first_on_cuda(_one_tensor("positive")), lambda x: x)
record("isreal", tt.isreal, ALL, _first_on_cuda(_one_tensor("isreal")), lambda x: np.ones(x.shape, bool))


def _fill_samples(device, dtype):
    make = _factory(dtype, "any", device, rng_for("fill", dtype))
    yield SampleInput((make((9, 13)).t(), 3), desc="number-transposed")
    yield SampleInput((make((3, 67)), tt.tensor(1.75, dtype=tt.float64, device=device)), desc="0d-tensor-value")
    yield SampleInput((make((0, 3)), True), desc="empty")


record("fill", tt.fill, ALL, _first_on_cuda(_fill_samples),
       lambda x, value: np.broadcast_to(np.asarray(value), x.shape).astype(x.dtype))


# --------------------------------------------------------------------------- gradient cases (float64)
# Away from the functions' edges (asin at +-1, logit at 0 and 1, the ties of fmax, nextafter's
# equal operands). The emulated device runs one point per input (every second derivative is
# dozens of interpreted launches); the cpu several, with a broadcast operand. The other overloads
# (scalar operands, logit's eps) are differentiated in tests/test_pointwise_math.py.
def _pts(d, *values):
    return _t(list(values if d == "cpu" else values[:1]), d)


def _one(d, value):
    return _t([value], d)


def _unary_case(fn, *values):
    return lambda d: (fn, (_pts(d, *values),), {})


def _binary_case(fn, xs, y):
    return lambda d: (fn, (_pts(d, *xs), _one(d, y)), {})


GRAD_CASES.update({
    "acos": _unary_case(tt.acos, 0.45, -0.6),
    "asin": _unary_case(tt.asin, 0.45, -0.6),
    "atan": _unary_case(tt.atan, -1.7, 0.3),
    "asinh": _unary_case(tt.asinh, -1.7, 0.3),
    "acosh": _unary_case(tt.acosh, 1.3, 7.5),
    "atanh": _unary_case(tt.atanh, -0.6, 0.45),
    "sinh": _unary_case(tt.sinh, -1.7, 0.3),
    "cosh": _unary_case(tt.cosh, -1.7, 0.3),
    "sinc": _unary_case(tt.sinc, -0.7, 1.6),
    "deg2rad": _unary_case(tt.deg2rad, -1.7, 30.0),
    "rad2deg": _unary_case(tt.rad2deg, -1.7, 0.3),
    "frac": _unary_case(tt.frac, -1.3, 2.7),
    "logit": _unary_case(tt.logit, 0.1, 0.75),
    "sgn": _unary_case(lambda x: x.sgn() * x, -1.7, 0.3),
    # an infinite input gets no gradient (torch: grad * isfinite(x))
    "nan_to_num": _unary_case(tt.nan_to_num, 0.5, float("inf"), -1.5),
    "frexp_mantissa": _unary_case(lambda x: tt.frexp(x).mantissa, -5.0, 0.3),
    "atan2": _binary_case(tt.atan2, (-0.8, 1.5), 0.6),
    "hypot": _binary_case(tt.hypot, (-0.8, 1.5), 0.6),
    "copysign": _binary_case(tt.copysign, (0.5, -1.5), -1.0),    # the sign source gets zeros
    "fmax": _binary_case(tt.fmax, (0.5, -1.5), -1.0),
    "fmin": _binary_case(tt.fmin, (0.5, -1.5), -1.0),
    "ldexp": _binary_case(tt.ldexp, (-0.8, 1.5), -1.0),
    "logaddexp": _binary_case(tt.logaddexp, (-0.8, 1.5), 0.6),
    "logaddexp2": _binary_case(tt.logaddexp2, (-0.8, 1.5), 0.6),
    "xlogy": _binary_case(tt.xlogy, (-0.8, 1.5), 0.6),
    "nextafter": _binary_case(tt.nextafter, (0.5, 1.0), 0.75),
    "lerp": lambda d: (tt.lerp, (_pts(d, -0.8, 1.5), _one(d, 0.6), _pts(d, 0.3, 0.9)), {}),
    "addcmul": lambda d: (lambda x, a, b: tt.addcmul(x, a, b, value=-1.5), (_one(d, 0.2), _pts(d, -0.8, 1.5),
                                                                          _one(d, 0.6)), {}),
    "addcdiv": lambda d: (lambda x, a, b: tt.addcdiv(x, a, b, value=0.5), (_one(d, 0.2), _pts(d, -0.8, 1.5),
                                                                         _one(d, 0.6)), {}),
    "fill": lambda d: (lambda x, v: tt.fill(x, v) * x, (_pts(d, -0.8, 1.5), _t(1.5, d)), {}),
    # heaviside's own derivative raises torch's error (tests/test_pointwise_math.py): its values
    # enter here through the product's gradient, heaviside(x) = d/dx [heaviside(x) x] away from 0
    "heaviside": lambda d: (lambda x: tt.heaviside(x.detach(), tt.tensor([0.5], dtype=tt.float64, device=d)) * x,
                            (_pts(d, -0.8, 1.5),), {}),
})
