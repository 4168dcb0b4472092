"""Test metadata in one place: one ``OpInfo`` record per op of the table (tritensor.ops.table.TABLE).

Like PyTorch's OpInfo (torch/testing/_internal/common_methods_invocations.py) or JAX's
op_record, a record says everything the generic tests need to know about one op:

  name            the table entry it specifies (``TABLE[name]``)
  op              the public callable the parity test calls: ``op(*sample.args, **sample.kwargs)``
                  (``tt.xxx``, a method through a lambda, or ``table_op(name, ...)`` for the
                  backward helpers torch does not export either)
  dtypes          the dtypes the parity test runs the op in (each on ``cpu`` and ``cuda``)
  sample_inputs   ``sample_inputs(device, dtype)`` -> iterator of ``SampleInput``: small inputs
                  whose sizes cross the emulated kernels' block boundaries and hit the masks,
                  in awkward layouts (0-d, size-0, size-1, transposed, step-sliced, broadcast)
  reference       ``"table"``: the table's own NumPy reference, run in the op's compute dtype
                  (the elementwise ops); or a hand-written NumPy expression
                  ``reference(*numpy_args, **sample.kwargs)``
  tolerances      ``{dtype: (rtol, atol)}`` for the output dtype (integers and bool are exact)
  grad_case       ``grad_case(device)`` -> ``(fn, float64 inputs, gradcheck kwargs)``: the
                  gradcheck / gradgradcheck case (first and second derivative)
  gradgradcheck   False where only the first derivative is checked
  no_derivative / no_second_derivative
                  torch's op name where torch has no (second) derivative either: the check must
                  raise torch's ``NotImplementedError`` instead
  kernel_fn       elementwise ops: the kernel FN (kernels/elementwise.py) the sm_90 compile check
                  launches for the op, in the flavours its dtypes reach
  emulated_gradgradcheck
                  False where the second derivative's launches make gradgradcheck minutes long
                  under the interpreter: it runs on cpu (and a real GPU) only; the backward rules
                  are the same tritensor ops on every device, and gradcheck still runs everywhere
  op_db           the names of PyTorch's OpInfo database this record specifies besides its own
                  (``special_ndtr`` -> ``("special.ndtr",)``; tests/test_op_db_coverage.py wants a
                  record for every op_db name built since that list was taken)

A table op whose record has no samples has a line in ``PARITY_ESCAPES`` (at the end) saying where
it is tested instead. ``RECORDS`` lists the records, ``OPS`` maps names to them.

Driven by: tests/test_ops_table.py (parity: cpu vs emulated cuda vs NumPy, and the table's
completeness gate), tests/test_op_gradients.py (gradcheck / gradgradcheck in float64 and the
gradient gate), tests/test_kernels_standalone.py (the sm_90 compile check's elementwise launches,
``elementwise_signatures``).

Sizes are small: the emulated device costs ~0.6 ms per launch plus ~0.35 ms per program.
No torch here (tests/test_no_torch.py): expectations are NumPy or hand-computed.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

import tritensor as tt
from tritensor.ops.dispatch import dispatch
from tritensor.ops.table import TABLE

ALL_DTYPES = (tt.bool, tt.int32, tt.int64, tt.float16, tt.bfloat16, tt.float32, tt.float64)
FLOATS = (tt.float16, tt.bfloat16, tt.float32, tt.float64)
NUMERIC = (tt.int32, tt.int64) + FLOATS
INTS = (tt.int32, tt.int64)
# torch's limited unsigned dtypes (tritensor/dtypes.py): in the records of the ops torch has kernels
# for (tests/test_unsigned_dtypes.py has torch's whole support matrix); negative sample values wrap
UNSIGNED = (tt.uint16, tt.uint32, tt.uint64)

# the output's dtype -> (rtol, atol); integers and bool compare exactly
TOLERANCES = {tt.float16: (2e-3, 1e-3), tt.bfloat16: (1.6e-2, 1e-2), tt.float32: (2e-5, 1e-6),
              tt.float64: (1e-10, 1e-12)}


def table_op(name, *args, **attrs):
    """Run table entry ``name`` directly (the backward helpers have no public function)."""
    return dispatch(TABLE[name], *args, **attrs)


def rng_for(*key):
    """A generator seeded by the case it makes values for: the same values on every run."""
    return np.random.default_rng(zlib.crc32("/".join(map(str, key)).encode()))


# --------------------------------------------------------------------------- records
@dataclass
class SampleInput:
    args: tuple
    kwargs: dict = field(default_factory=dict)
    desc: str = ""
    result_dtype: object = None     # the dtype the output must have (checked when given)


@dataclass(eq=False)
class OpInfo:
    name: str
    op: Optional[Callable] = None
    dtypes: tuple = ()
    sample_inputs: Optional[Callable] = None
    reference: object = None
    tolerances: dict = field(default_factory=lambda: dict(TOLERANCES))
    grad_case: Optional[Callable] = None
    gradgradcheck: bool = True
    no_derivative: Optional[str] = None
    no_second_derivative: Optional[str] = None
    kernel_fn: Optional[str] = None     # elementwise ops: the kernels/elementwise.py FN its launches run
    op_db: tuple = ()                   # further op_db names this record specifies (see above)
    emulated_gradgradcheck: bool = True  # False: second derivative on cpu (and real GPUs) only

    @property
    def has_parity(self):
        return self.sample_inputs is not None

    def tolerance(self, dtype):
        return self.tolerances.get(dtype, (0, 0))


# --------------------------------------------------------------------------- values and layouts
LAYOUTS = {
    "0d": lambda make: make(()),
    "empty": lambda make: make((0, 3)),
    "size1": lambda make: make((1, 5, 1)),
    "odd": lambda make: make((3, 67)),          # 201 elements: crosses the 128-element block
    "transposed": lambda make: make((9, 13)).t(),
    "sliced": lambda make: make((10, 31))[1::3, ::2],
    "broadcast": lambda make: make((17, 1)).expand(17, 11),
}
UNARY_LAYOUTS = tuple(LAYOUTS)
BINARY_LAYOUTS = ("0d", "empty", "odd", "transposed", "sliced", "broadcast")


def values(shape, dtype, domain, rng):
    """Random values of ``dtype`` in ``domain``: "any", "positive" (log, sqrt ...), "small" (exp),
    "nonzero" (divisors), "pow" (bases), "log1p" (> -1, some near 0), "tan" (away from the poles)."""
    if dtype is tt.bool:
        return rng.integers(0, 2, size=shape).astype(bool)
    if not dtype.is_floating_point:
        lo, hi = {"positive": (1, 20), "nonzero": (1, 9), "small": (-3, 4), "log1p": (0, 20),
                  "tan": (-3, 4)}.get(domain, (-20, 20))
        v = rng.integers(lo, hi, size=shape)
        if domain == "nonzero":
            v = v * rng.choice([-1, 1], size=shape)
        return v
    v = rng.standard_normal(shape) * 3
    if domain == "positive":
        v = np.abs(v) + 0.1
    elif domain == "small":
        v = v / 3
    elif domain == "nonzero":
        v = np.where(np.abs(v) < 0.1, 0.5, v)
    elif domain == "pow":
        v = np.abs(v) + 0.5
    elif domain == "log1p":     # (-1, inf), with values near 0 where log(1 + x) would lose digits
        v = np.where(np.abs(v) < 1.5, v * 1e-3, np.abs(v) - 0.9)
    elif domain == "tan":       # away from the poles at +-pi/2
        v = np.clip(v / 3, -1.4, 1.4)
    elif domain == "wide":      # tens to hundreds (round(decimals=-1))
        v = v * 40
    elif domain == "near1":     # magnitudes near 1: long products neither overflow nor vanish
        v = rng.uniform(0.6, 1.6, size=shape) * rng.choice([-1, 1], size=shape)
    return v


def factory(dtype, domain, device, rng):
    def make(shape):
        return tt.tensor(values(shape, dtype, domain, rng), dtype=dtype, device=device)
    return make


# --------------------------------------------------------------------------- elementwise samples
# the ops checked with a non-contiguous operand broadcast against a strided one and a 0-d tensor
MIXED_BROADCAST = {"add", "sub", "mul", "div", "maximum", "lt", "eq"}
# the ops checked with a Python scalar on either side, in these dtypes
SCALAR_OPS, SCALAR_DTYPES, SCALARS = {"add", "sub", "mul", "div", "pow"}, (tt.int32, tt.int64, tt.float16, tt.float32), (2, -3, 2.5, True)
# the ops checked on NaN, +-inf and signed zeros (float32)
NAN_INF_UNARY = {"exp", "log", "tanh", "relu", "sqrt", "sigmoid", "neg", "abs", "sin"}
NAN_INF_BINARY = {"add", "mul", "div", "maximum", "minimum", "pow", "eq", "lt"}
_SPECIAL = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.0, -2.0]


def _elementwise_samples(name, arity, layout_dtypes, domain):
    def samples(device, dtype):
        if dtype in layout_dtypes:
            for lay in (UNARY_LAYOUTS if arity == 1 else BINARY_LAYOUTS):
                make = factory(dtype, domain, device, rng_for(name, dtype, lay))
                yield SampleInput(tuple(LAYOUTS[lay](make) for _ in range(arity)), desc=lay)
        if arity == 2 and name in MIXED_BROADCAST and dtype in NUMERIC:
            make = factory(dtype, "nonzero", device, rng_for(name, dtype, "mixed"))
            a = make((7, 1, 5)).permute(2, 1, 0)          # (5, 1, 7), non-contiguous
            b = make((6, 1))[::2]                         # (3, 1), stride 2
            yield SampleInput((a, b), desc="mixed-broadcast")
            yield SampleInput((a, make(())), desc="0d-broadcast")
        if arity == 2 and name in SCALAR_OPS and dtype in SCALAR_DTYPES:
            x = factory(dtype, "pow" if name == "pow" else "nonzero", device, rng_for(name, dtype, "scalar"))((4, 33))
            for s in SCALARS:
                if name == "sub" and s is True:
                    continue    # bool scalar subtraction is rejected (tests/test_elementwise.py)
                if name == "pow" and not dtype.is_floating_point and (isinstance(s, float) or s < 0):
                    continue    # integer power rules: tests/test_elementwise.py, test_kernels_standalone.py
                for args in ((x, s), (s, x)):
                    if name == "pow" and not isinstance(args[0], tt.Tensor) and not dtype.is_floating_point:
                        continue
                    expect = None if name == "div" else tt.result_type(*args)
                    yield SampleInput(args, desc=f"scalar-{s!r}-{'right' if args[1] is s else 'left'}",
                                      result_dtype=expect)
        if dtype is tt.float32 and name in (NAN_INF_UNARY if arity == 1 else NAN_INF_BINARY):
            x = tt.tensor(_SPECIAL, device=device)
            yield SampleInput((x,) if arity == 1 else (x, tt.tensor(_SPECIAL[::-1], device=device)), desc="nan-inf")
    return samples


# the ops whose launches run another FN than their name: floor_divide is div_floor; clamp_min and
# clamp_max are maximum and minimum (tests/test_kernels_standalone.py reads the FN from the entry)
KERNEL_FNS = {"floor_divide": "div_floor", "clamp_min": "maximum", "clamp_max": "minimum"}


def elementwise(name, arity, dtypes, domain="any", op=None, extra_dtypes=()):
    """A record for a unary/binary elementwise op checked against the table's own reference.
    ``extra_dtypes``: dtypes only the scalar samples run in (integer pow)."""
    return OpInfo(name, op=op or getattr(tt, name), dtypes=tuple(dtypes) + tuple(extra_dtypes),
                  sample_inputs=_elementwise_samples(name, arity, tuple(dtypes), domain), reference="table",
                  kernel_fn=KERNEL_FNS.get(name, name))


def _backward_op(name, **attrs):
    def run(*args, **kwargs):
        return table_op(name, *args, **attrs, **kwargs)
    run.__name__ = name
    return run


# the elementwise records: op name -> (dtypes, value domain); the reference is the table's own
UNARY = {
    "neg": (NUMERIC, "any"), "exp": (NUMERIC, "small"), "log": (NUMERIC, "positive"),
    "sin": (NUMERIC, "any"), "cos": (NUMERIC, "any"), "tanh": (NUMERIC, "any"),
    "relu": (NUMERIC, "any"), "sqrt": (NUMERIC + (tt.uint32,), "positive"), "sigmoid": (NUMERIC, "any"),
    "abs": (NUMERIC, "any"),
    "sign": (NUMERIC, "any"), "exp2": (NUMERIC, "small"), "expm1": (NUMERIC, "small"),
    "log2": (NUMERIC, "positive"), "log10": (NUMERIC, "positive"), "log1p": (NUMERIC, "log1p"),
    "rsqrt": (NUMERIC, "positive"), "tan": (NUMERIC, "tan"), "erf": (NUMERIC, "any"),
    "reciprocal": (NUMERIC, "nonzero"),
    "silu": (FLOATS, "any"), "gelu": (FLOATS, "any"), "floor": (NUMERIC, "any"),
    "ceil": (NUMERIC, "any"), "round": (NUMERIC + (tt.uint64,), "any"), "trunc": (NUMERIC, "any"),
    "logical_not": (NUMERIC, "any"), "bitwise_not": (INTS, "any"),
    "isnan": (NUMERIC, "any"), "isinf": (NUMERIC, "any"), "isfinite": (NUMERIC + (tt.uint32,), "any"),
}
BINARY = {
    "add": (ALL_DTYPES, "any"), "sub": (NUMERIC, "any"), "mul": (ALL_DTYPES + UNSIGNED, "any"),
    "div": (NUMERIC, "nonzero"), "pow": (FLOATS, "pow"), "maximum": (NUMERIC, "any"),
    "minimum": (NUMERIC, "any"), "eq": (ALL_DTYPES + UNSIGNED, "any"), "ne": (ALL_DTYPES + (tt.uint64,), "any"),
    "lt": (NUMERIC, "any"), "le": (NUMERIC, "any"), "gt": (NUMERIC, "any"), "ge": (NUMERIC, "any"),
    "tanh_backward": (FLOATS, "any"), "relu_backward": (FLOATS, "any"),
    "div_trunc": (NUMERIC, "nonzero"), "div_floor": (NUMERIC, "nonzero"),
    "floor_divide": (NUMERIC, "nonzero"), "remainder": (NUMERIC, "nonzero"), "fmod": (NUMERIC, "nonzero"),
    "clamp_min": (NUMERIC, "any"), "clamp_max": (NUMERIC, "any"),
    "logical_and": (ALL_DTYPES, "any"), "logical_or": (ALL_DTYPES, "any"), "logical_xor": (ALL_DTYPES, "any"),
    "bitwise_and": ((tt.bool,) + INTS + UNSIGNED, "any"), "bitwise_or": ((tt.bool,) + INTS + (tt.uint32,), "any"),
    "bitwise_xor": ((tt.bool,) + INTS + (tt.uint64,), "any"),
    "sigmoid_backward": (FLOATS, "any"), "silu_backward": (FLOATS, "any"),
    "gelu_backward": (FLOATS, "any"), "erf_backward": (FLOATS, "any"),
}
# binary ops without a public function of their own: div(rounding_mode=) and the backward helpers
BINARY_OPS = {
    "div_trunc": lambda x, y: tt.div(x, y, rounding_mode="trunc"),
    "div_floor": lambda x, y: tt.div(x, y, rounding_mode="floor"),
    "tanh_backward": _backward_op("tanh_backward"), "relu_backward": _backward_op("relu_backward"),
    "sigmoid_backward": _backward_op("sigmoid_backward"), "silu_backward": _backward_op("silu_backward"),
    "gelu_backward": _backward_op("gelu_backward", approximate="none"),
    "erf_backward": _backward_op("erf_backward"),
}


RECORDS: list[OpInfo] = []
RECORDS += [elementwise(n, 1, d, dom) for n, (d, dom) in UNARY.items()]
RECORDS += [elementwise(n, 2, d, dom, op=BINARY_OPS.get(n), extra_dtypes=INTS if n == "pow" else ())
            for n, (d, dom) in BINARY.items()]


# --------------------------------------------------------------------------- other ops (hand-written NumPy)
def record(name, op, dtypes, samples, reference, **fields):
    rec = OpInfo(name, op=op, dtypes=tuple(dtypes), sample_inputs=samples, reference=reference, **fields)
    RECORDS.append(rec)
    return rec


def _samples_where(device, dtype):
    rng = rng_for("where", dtype)
    cond = tt.tensor(rng.integers(0, 2, (4, 1)).astype(bool), device=device)
    a = tt.tensor(values((4, 37), dtype, "any", rng), dtype=dtype, device=device)
    b = tt.tensor(values((37,), tt.float64, "any", rng), dtype=tt.float64, device=device)
    yield SampleInput((cond, a, b), desc="broadcast-cond-mixed-dtypes", result_dtype=tt.float64)
    yield SampleInput((cond, a, 0.0), desc="scalar-other")
    c = tt.tensor(rng.integers(0, 2, (13, 9)).astype(bool), device=device).t()              # (9, 13)
    yield SampleInput((c, factory(dtype, "any", device, rng)((13, 9)).t(), a[:1, :13].expand(9, 13)), desc="transposed")


record("where", tt.where, (tt.float32, tt.int64, tt.uint64), _samples_where,
       lambda c, x, y: np.where(c, x, y))


def _samples_clamp(device, dtype):
    make = factory(dtype, "any", device, rng_for("clamp", dtype))
    x = make((3, 67))
    yield SampleInput((x,), {"min": -2, "max": 3}, desc="scalar-bounds")
    # a transposed x, a lower bound broadcast along rows, an upper one along columns (some lo > hi)
    yield SampleInput((make((9, 13)).t(), make((9,)), make((13, 1))), desc="tensor-bounds")
    yield SampleInput((make((0, 3)),), {"min": 1}, desc="empty")


def _clamp_reference(x, min=None, max=None):
    if min is not None:
        x = np.maximum(x, min)
    return x if max is None else np.minimum(x, max)


record("clamp", tt.clamp, (tt.float32, tt.int32, tt.bfloat16), _samples_clamp, _clamp_reference)


def _samples_masked_fill(device, dtype):
    rng = rng_for("masked_fill", dtype)
    make = factory(dtype, "any", device, rng)
    mask = tt.tensor(rng.integers(0, 2, (13,)).astype(bool), device=device)
    yield SampleInput((make((9, 13))[::2], mask, 5), desc="broadcast-mask")
    yield SampleInput((make((13, 9)).t(), mask, tt.tensor(7, dtype=dtype, device=device)), desc="0d-value")


record("masked_fill", tt.masked_fill, (tt.float32, tt.int64), _samples_masked_fill,
       lambda x, m, v: np.where(m, v, x))


def _samples_round_decimals(device, dtype):
    make = factory(dtype, "any", device, rng_for("round_decimals", dtype))
    yield SampleInput((make((3, 67)),), {"decimals": 1}, desc="odd")
    wide = factory(dtype, "wide", device, rng_for("round_decimals", dtype, "wide"))
    yield SampleInput((wide((9, 13)).t(),), {"decimals": -1}, desc="transposed-negative")


record("round_decimals", lambda x, decimals: x.round(decimals=decimals), (tt.float32, tt.float64),
       _samples_round_decimals, lambda x, decimals: np.round(x, decimals),
       tolerances={tt.float32: (1e-6, 1e-6), tt.float64: (1e-12, 1e-12)})


# sum over dims (non-contiguous input), with and without keepdim (was tests/test_ops_table.py test_sum)
SUM_DIMS = (None, 0, 1, -1, (0, 2), (1, 2))


def _samples_sum(device, dtype):
    for dims in SUM_DIMS:
        for keepdim in (False, True):
            x = factory(dtype, "any", device, rng_for("sum", dtype, dims, keepdim))((5, 3, 70)).transpose(0, 2)
            yield SampleInput((x,), {"dim": dims, "keepdim": keepdim}, desc=f"dim={dims}-keepdim={keepdim}",
                              result_dtype=tt.int64 if not dtype.is_floating_point else dtype)


def _sum_reference(x, dim=None, keepdim=False):
    return x.astype(np.float64).sum(axis=dim, keepdims=keepdim and dim is not None)


record("sum", lambda x, dim=None, keepdim=False: x.sum() if dim is None else x.sum(dim, keepdim=keepdim),
       (tt.bool, tt.int32, tt.float16, tt.bfloat16, tt.float32, tt.float64, tt.uint16, tt.uint32), _samples_sum,
       _sum_reference,
       tolerances={tt.float16: (2e-3, 2e-3), tt.bfloat16: (1e-2, 1e-2), tt.float32: (1e-5, 1e-5),
                   tt.float64: (1e-5, 1e-5)})


# casts between every pair of dtypes from a strided source (was tests/test_ops_table.py test_casts)
def _samples_to_copy(device, dtype):
    vals = np.array([0, 1, -2.7, 3.9, 100.5, -0.0, 7])
    if dtype is tt.bool:
        vals = vals != 0
    elif not dtype.is_floating_point:
        vals = np.trunc(vals) if dtype not in UNSIGNED else np.abs(np.trunc(vals))
    x = tt.tensor(vals, dtype=dtype, device=device)[::2]      # strided source
    for dst in ALL_DTYPES:
        yield SampleInput((x,), {"dtype": dst}, desc=f"to-{dst}", result_dtype=dst)


def _to_copy_reference(x, dtype):
    base = x.astype(np.float64) if x.dtype != bool else x
    if dtype is tt.bool:
        return base != 0
    return np.trunc(base) if not dtype.is_floating_point else base.astype(dtype.numpy_dtype).astype(np.float64)


record("to_copy", lambda x, dtype: x.to(dtype), ALL_DTYPES + UNSIGNED, _samples_to_copy, _to_copy_reference,
       tolerances={tt.float16: (1e-2, 0), tt.bfloat16: (1e-2, 0), tt.float32: (0, 0), tt.float64: (0, 0)})


# --------------------------------------------------------------------------- views and copies
def cases(name, domain, *specs):
    """Samples from ``(desc, build, kwargs)`` specs: ``build(make)`` returns the tensor argument(s),
    ``make(shape)`` a tensor of random values of the dtype under test."""
    def samples(device, dtype):
        for desc, build, kwargs in specs:
            args = build(factory(dtype, domain, device, rng_for(name, dtype, desc)))
            yield SampleInput(args if isinstance(args, tuple) else (args,), dict(kwargs), desc=desc)
    return samples


VIEW_DTYPES = (tt.float32, tt.bool)
record("view", lambda x, shape: x.view(shape), VIEW_DTYPES, cases(
    "view", "any",
    ("split-dim", lambda m: m((3, 4, 5)), {"shape": (5, -1, 2)}),
    ("0d", lambda m: m(()), {"shape": (1, 1)}),
    ("empty", lambda m: m((0, 3)), {"shape": (3, 0)}),
    ("sliced", lambda m: m((4, 6))[:, ::2], {"shape": (2, 2, 3)})), lambda x, shape: x.reshape(shape))
record("permute", lambda x, dims: x.permute(*dims), VIEW_DTYPES, cases(
    "permute", "any",
    ("3d", lambda m: m((2, 3, 4)), {"dims": (2, 0, 1)}),
    ("sliced", lambda m: m((4, 6, 5))[::2, 1:], {"dims": (-1, 1, 0)})), lambda x, dims: np.transpose(x, dims))
record("transpose", lambda x, d0, d1: x.transpose(d0, d1), VIEW_DTYPES, cases(
    "transpose", "any",
    ("3d", lambda m: m((2, 3, 4)), {"d0": 0, "d1": 2}),
    ("same-dim", lambda m: m((3, 4)), {"d0": -1, "d1": 1})), lambda x, d0, d1: np.swapaxes(x, d0, d1))
record("t", lambda x: x.t(), VIEW_DTYPES, cases(
    "t", "any", ("2d", lambda m: m((3, 5)), {}), ("1d", lambda m: m((4,)), {}), ("0d", lambda m: m(()), {})),
    lambda x: x.T)
record("expand", lambda x, size: x.expand(*size), VIEW_DTYPES, cases(
    "expand", "any",
    ("new-dims", lambda m: m((3, 1)), {"size": (2, 3, 4)}),
    ("keep", lambda m: m((3, 1)), {"size": (-1, 5)}),
    ("0d", lambda m: m(()), {"size": (2,)})),
    lambda x, size: np.broadcast_to(x, tuple(s if s != -1 else x.shape[i - len(size) + x.ndim]
                                             for i, s in enumerate(size))))
record("squeeze", lambda x, dim=None: x.squeeze() if dim is None else x.squeeze(dim), VIEW_DTYPES, cases(
    "squeeze", "any",
    ("all", lambda m: m((3, 1, 2, 1)), {}),
    ("one", lambda m: m((3, 1, 2, 1)), {"dim": -1}),
    ("not-size-1", lambda m: m((3, 1)), {"dim": 0})),
    lambda x, dim=None: np.squeeze(x, dim) if dim is None or x.shape[dim] == 1 else x)
record("unsqueeze", lambda x, dim: x.unsqueeze(dim), VIEW_DTYPES, cases(
    "unsqueeze", "any", ("last", lambda m: m((3, 2)), {"dim": -1}), ("0d", lambda m: m(()), {"dim": 0})),
    lambda x, dim: np.expand_dims(x, dim))
record("basic_index", lambda x, index: x[index], VIEW_DTYPES, cases(
    "basic_index", "any",
    ("slices-none", lambda m: m((3, 5)), {"index": (slice(1, None), None, slice(None, None, 2))}),
    ("int-ellipsis", lambda m: m((3, 4, 5)), {"index": (-1, Ellipsis, 2)}),
    ("empty-slice", lambda m: m((3, 5)), {"index": (slice(2, 1),)})),
    lambda x, index: x[index])
record("clone", lambda x: x.clone(), (tt.float32, tt.bool, tt.uint64), cases(
    "clone", "any",
    ("transposed", lambda m: m((9, 13)).t(), {}), ("sliced", lambda m: m((10, 31))[1::3, ::2], {}),
    ("broadcast", lambda m: m((17, 1)).expand(17, 11), {}), ("0d", lambda m: m(()), {})),
    lambda x: x)


# --------------------------------------------------------------------------- reductions, scans, softmax
# a (33, 7) transposed input: crosses the reduce tile (64 over both dims), the scan chunk (16)
def _reduction(name, method, dtypes, reference, dims=(None, 0, 1), domain="any", zero_d=True, **fields):
    def op(x, dim=None, keepdim=False):
        fn = getattr(x, method)
        return fn() if dim is None else fn(dim, keepdim=keepdim)

    def samples(device, dtype):
        # keepdim only changes the output's view: each op gets it once each way (the first dim
        # without, the others with), not once per dim (the emulated launches cost)
        first = next(d for d in dims if d is not None)
        for dim in dims:
            keepdim = dim is not None and dim != first
            x = factory(dtype, domain, device, rng_for(name, dtype, dim, keepdim))((7, 33)).t()
            yield SampleInput((x,), {"dim": dim, "keepdim": keepdim}, desc=f"dim={dim}-keepdim={keepdim}")
        if zero_d:
            yield SampleInput((factory(dtype, domain, device, rng_for(name, dtype, "0d"))(()),),
                              {"dim": 0, "keepdim": False}, desc="0d")
    return record(name, op, dtypes, samples, lambda x, dim=None, keepdim=False: reference(
        x.reshape(1) if x.ndim == 0 else x, axis=dim, keepdims=keepdim and dim is not None), **fields)


_reduction("prod", "prod", (tt.float64,), np.prod, domain="near1")
_reduction("amax", "amax", (tt.float32, tt.int64), np.max, dims=((0, 1), 0, 1))
_reduction("amin", "amin", (tt.float32, tt.int64), np.min, dims=((0, 1), 0, 1))
_reduction("argmax", "argmax", (tt.float32, tt.int64), np.argmax)
_reduction("argmin", "argmin", (tt.float64,), np.argmin)
_reduction("var", "var", (tt.float32,), lambda x, axis, keepdims: np.var(x, axis, ddof=1, keepdims=keepdims),
           dims=(0, 1), zero_d=False)     # a 0-d variance is nan with a warning: tests/test_reductions.py


def _scan(name, method, dtypes, reference, domain="any"):
    def samples(device, dtype):
        for dim in (0, 1, -1):
            x = factory(dtype, domain, device, rng_for(name, dtype, dim))((7, 33)).t()
            yield SampleInput((x,), {"dim": dim}, desc=f"dim={dim}")
        yield SampleInput((factory(dtype, domain, device, rng_for(name, dtype, "0d"))(()),), {"dim": 0}, desc="0d")
    return record(name, lambda x, dim: getattr(x, method)(dim), dtypes, samples,
                  lambda x, dim: reference(x.reshape(1), axis=0).reshape(()) if x.ndim == 0 else reference(x, axis=dim))


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _log_softmax(x, axis):
    s = x - x.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


_scan("cumsum", "cumsum", (tt.float32, tt.int64), np.cumsum)
_scan("cumprod", "cumprod", (tt.float64,), np.cumprod, domain="near1")
_scan("softmax", "softmax", (tt.float32, tt.float64), _softmax)
_scan("log_softmax", "log_softmax", (tt.float32,), _log_softmax)
record("count_nonzero", lambda x, dim=None: tt.count_nonzero(x, dim), (tt.int64, tt.bool), cases(
    "count_nonzero", "small",
    ("all", lambda m: m((7, 33)).t(), {}), ("dim0", lambda m: m((7, 33)).t(), {"dim": 0}),
    ("dims", lambda m: m((3, 7, 33))[:, ::2], {"dim": (0, 2)})),
    lambda x, dim=None: np.asarray(np.count_nonzero(x, axis=dim)))


def _softmax_backward_samples(name):
    return cases(name, "any",
                 ("dim1", lambda m: (m((7, 33)).t(), m((33, 7))), {"dim": 1}),
                 ("dim0", lambda m: (m((33, 7)), m((7, 33)).t()), {"dim": 0}))


# y is random here, not a softmax: the row sums cancel, so float32 gets a wider absolute tolerance
SOFTMAX_BACKWARD_TOLERANCES = {tt.float32: (1e-4, 1e-4), tt.float64: (1e-10, 1e-12)}
record("softmax_backward", _backward_op("softmax_backward"), (tt.float32,),
       _softmax_backward_samples("softmax_backward"),
       lambda g, y, dim: y * (g - (g * y).sum(axis=dim, keepdims=True)), tolerances=SOFTMAX_BACKWARD_TOLERANCES)
record("log_softmax_backward", _backward_op("log_softmax_backward"), (tt.float64,),
       _softmax_backward_samples("log_softmax_backward"),
       lambda g, y, dim: g - np.exp(y) * g.sum(axis=dim, keepdims=True), tolerances=SOFTMAX_BACKWARD_TOLERANCES)


# --------------------------------------------------------------------------- joining, flip, triangles
record("cat", lambda *xs, dim: tt.cat(list(xs), dim), (tt.float32, tt.int64, tt.uint32), cases(
    "cat", "any",
    ("dim1-transposed", lambda m: (m((5, 3)).t(), m((3, 67)), m((3, 0))), {"dim": 1}),
    ("dim0-sliced", lambda m: (m((2, 40)), m((6, 40))[::2]), {"dim": 0})),
    lambda *xs, dim: np.concatenate(xs, axis=dim))
record("stack", lambda *xs, dim: tt.stack(list(xs), dim), (tt.float32, tt.bool, tt.uint16), cases(
    "stack", "any", ("dim1", lambda m: (m((5, 3)).t(), m((3, 5))), {"dim": 1}),
    ("last", lambda m: (m((4,)), m((8,))[::2]), {"dim": -1})),
    lambda *xs, dim: np.stack(xs, axis=dim))
record("split", lambda x, sizes, dim: x.split(sizes, dim), (tt.float32,), cases(
    "split", "any", ("dim1", lambda m: m((3, 67)), {"sizes": [10, 0, 57], "dim": 1}),
    ("transposed", lambda m: m((5, 9)).t(), {"sizes": [4, 5], "dim": 0})),
    lambda x, sizes, dim: tuple(np.split(x, np.cumsum(sizes)[:-1], axis=dim)))
record("flip", lambda x, dims: x.flip(dims), (tt.float32, tt.int64, tt.bool), cases(
    "flip", "any", ("two-dims", lambda m: m((3, 4, 67)), {"dims": (0, 2)}),
    ("transposed", lambda m: m((9, 13)).t(), {"dims": (1,)})),
    lambda x, dims: np.flip(x, dims))
_TRI = (("batched", lambda m: m((2, 5, 67)), {"diagonal": 1}),
        ("transposed", lambda m: m((9, 13)).t(), {"diagonal": -2}))
record("tril", lambda x, diagonal: x.tril(diagonal), (tt.float32, tt.int64), cases("tril", "any", *_TRI),
       lambda x, diagonal: np.tril(x, diagonal))
record("triu", lambda x, diagonal: x.triu(diagonal), (tt.float32, tt.bool), cases("triu", "any", *_TRI),
       lambda x, diagonal: np.triu(x, diagonal))


# --------------------------------------------------------------------------- matrix products
# (one dtype per op where tests/test_matmul.py checks every dtype: the emulated launches cost)
MATMUL_TOLERANCES = {tt.float32: (1e-5, 1e-5), tt.float64: (1e-12, 1e-12)}
record("mm", tt.mm, (tt.float32, tt.float64), cases(
    "mm", "any", ("transposed", lambda m: (m((9, 13)).t(), m((9, 7))), {}),
    ("sliced", lambda m: (m((5, 34))[:, ::2], m((17, 3))), {})),
    np.matmul, tolerances=MATMUL_TOLERANCES)
record("spmm", tt.spmm, (tt.float32,), cases(
    "spmm", "any", ("transposed", lambda m: (m((9, 13)).t(), m((9, 7))), {})),
    np.matmul, tolerances=MATMUL_TOLERANCES)
record("bmm", tt.bmm, (tt.float64,), cases(
    "bmm", "any", ("transposed", lambda m: (m((2, 5, 6)), m((2, 3, 6)).transpose(1, 2)), {})),
    np.matmul, tolerances=MATMUL_TOLERANCES)
record("matmul", tt.matmul, (tt.float32, tt.float64), cases(
    "matmul", "any", ("broadcast-batch", lambda m: (m((2, 1, 5, 6)), m((3, 6, 4))), {}),
    ("vector-matrix", lambda m: (m((6,)), m((6, 4))), {}), ("matrix-vector", lambda m: (m((5, 6)), m((6,))), {})),
    np.matmul, tolerances=MATMUL_TOLERANCES)
record("addmm", tt.addmm, (tt.float64,), cases(
    "addmm", "any", ("bias", lambda m: (m((7,)), m((5, 6)), m((7, 6)).t()), {"beta": 0.5, "alpha": 2.0}),
    ("default", lambda m: (m((5, 7)), m((5, 6)), m((6, 7))), {})),
    lambda i, a, b, beta=1, alpha=1: beta * i + alpha * (a @ b), tolerances=MATMUL_TOLERANCES)
record("baddbmm", tt.baddbmm, (tt.float32,), cases(
    "baddbmm", "any", ("broadcast", lambda m: (m((2, 1, 4)), m((2, 3, 5)), m((2, 4, 5)).transpose(1, 2)),
                       {"beta": -1.5, "alpha": 0.5})),
    lambda i, a, b, beta=1, alpha=1: beta * i + alpha * (a @ b), tolerances=MATMUL_TOLERANCES)


# --------------------------------------------------------------------------- indexing
def _index_samples(device, dtype):
    make = factory(dtype, "any", device, rng_for("index", dtype))
    yield SampleInput((make((9, 13)).t(), (tt.tensor([2, 0, 2, -1], device=device), tt.tensor([1, 0, 8, 3], device=device))),
                      desc="two-index-tensors")
    yield SampleInput((make((5, 67)), (slice(None), tt.tensor([[66, 0], [-3, 1]], device=device))), desc="slice-then-tensor")


def _index_reference(x, index):
    return x[tuple(np.asarray(i.cpu().numpy()) if isinstance(i, tt.Tensor) else i for i in index)]


record("index", lambda x, index: x[index], (tt.float32, tt.int64), _index_samples, _index_reference)


def _index_select_samples(device, dtype):
    make = factory(dtype, "any", device, rng_for("index_select", dtype))
    yield SampleInput((make((9, 13)).t(), 1, tt.tensor([8, 0, 8, 3], device=device)), desc="transposed")
    yield SampleInput((make((70,)), 0, tt.tensor([69, 1], dtype=tt.int32, device=device)), desc="1d-int32")


record("index_select", tt.index_select, (tt.float32, tt.int64, tt.bool), _index_select_samples,
       lambda x, dim, index: np.take(x, index, axis=dim))


def _gather_samples(device, dtype):
    rng = rng_for("gather", dtype)
    make = factory(dtype, "any", device, rng)
    yield SampleInput((make((9, 13)).t(), 1, tt.tensor(rng.integers(0, 9, (13, 5)), device=device)), desc="transposed")
    yield SampleInput((make((40, 3)), 0, tt.tensor(rng.integers(0, 40, (70, 2)), device=device)), desc="dim0")


def _gather_reference(x, dim, index):
    """torch's gather reads only index.shape of x along the other dims (they may be smaller)."""
    x = x[tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(index.shape))]
    return np.take_along_axis(x, index, axis=dim)


record("gather", tt.gather, (tt.float32, tt.int64), _gather_samples, _gather_reference)


def _masked_select_samples(device, dtype):
    rng = rng_for("masked_select", dtype)
    make = factory(dtype, "any", device, rng)
    yield SampleInput((make((9, 13)).t(), tt.tensor(rng.integers(0, 2, (9,)).astype(bool), device=device)),
                      desc="broadcast-mask")
    yield SampleInput((make((3, 67)), tt.tensor(rng.integers(0, 2, (3, 67)).astype(bool), device=device)), desc="odd")


record("masked_select", tt.masked_select, (tt.float32, tt.int64), _masked_select_samples,
       lambda x, mask: np.broadcast_to(x, np.broadcast_shapes(x.shape, mask.shape))[
           np.broadcast_to(mask, np.broadcast_shapes(x.shape, mask.shape))])


# --------------------------------------------------------------------------- unfold, diagonals
def _unfold_reference(x, dimension, size, step):
    windows = np.lib.stride_tricks.sliding_window_view(x, size, axis=dimension)
    return windows[(slice(None),) * (dimension % x.ndim) + (slice(None, None, step),)]


record("unfold", lambda x, dimension, size, step: x.unfold(dimension, size, step), (tt.float32, tt.int64), cases(
    "unfold", "any", ("overlapping", lambda m: m((3, 67)), {"dimension": 1, "size": 5, "step": 3}),
    ("transposed", lambda m: m((9, 13)).t(), {"dimension": 0, "size": 4, "step": 4})),
    _unfold_reference)
record("diagonal", lambda x, offset=0, dim1=0, dim2=1: x.diagonal(offset, dim1, dim2), (tt.float32, tt.bool), cases(
    "diagonal", "any", ("3d", lambda m: m((3, 2, 4)), {"offset": -1, "dim1": 2, "dim2": 0}),
    ("transposed", lambda m: m((9, 13)).t(), {"offset": 2})),
    lambda x, offset=0, dim1=0, dim2=1: np.diagonal(x, offset, dim1, dim2))


def _diag_embed_reference(x, offset=0):
    n = x.shape[-1] + abs(offset)
    out = np.zeros(x.shape[:-1] + (n, n), x.dtype)
    i = np.arange(x.shape[-1])
    out[..., i + max(-offset, 0), i + max(offset, 0)] = x
    return out


record("diag_embed", lambda x, offset=0: x.diag_embed(offset), (tt.float32, tt.int64), cases(
    "diag_embed", "any", ("batched", lambda m: m((2, 3)), {"offset": 1}),
    ("transposed", lambda m: m((9, 3)).t(), {"offset": -2})),
    _diag_embed_reference)


# --------------------------------------------------------------------------- distances, layer_norm
def _pnorm(d, p, axis=-1):
    d = np.abs(d)
    if p == 0:
        return (d != 0).sum(axis).astype(d.dtype)
    if p == np.inf:
        return d.max(axis)
    return (d ** p).sum(axis) ** (1 / p)


def _pdist_reference(x, p=2.0):
    i, j = np.triu_indices(x.shape[0], 1)
    return _pnorm(x[i] - x[j], p)


record("pdist", tt.pdist, (tt.float32, tt.float64), cases(
    "pdist", "any", ("p2", lambda m: m((35, 3)), {}), ("p1.5-transposed", lambda m: m((3, 9)).t(), {"p": 1.5}),
    ("inf", lambda m: m((6, 4)), {"p": float("inf")})),
    _pdist_reference, tolerances={tt.float32: (1e-5, 1e-5), tt.float64: (1e-12, 1e-12)})
record("cdist", tt.cdist, (tt.float32,), cases(
    "cdist", "any", ("p2-batched", lambda m: (m((2, 5, 3)), m((1, 33, 3))), {}),
    ("p1-transposed", lambda m: (m((3, 9)).t(), m((4, 3))), {"p": 1.0})),
    lambda a, b, p=2.0: _pnorm(a[..., :, None, :] - b[..., None, :, :], p),
    tolerances={tt.float32: (1e-4, 1e-5), tt.float64: (1e-12, 1e-12)})


def _layer_norm_reference(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    mean = x.mean(axes, keepdims=True)
    y = (x - mean) / np.sqrt(((x - mean) ** 2).mean(axes, keepdims=True) + eps)
    return y * (1 if weight is None else weight) + (0 if bias is None else bias)


record("layer_norm", lambda x, weight=None, bias=None, *, normalized_shape: tt.nn.functional.layer_norm(
    x, normalized_shape, weight, bias), (tt.float32, tt.float64), cases(
    "layer_norm", "any", ("affine", lambda m: (m((5, 67)), m((67,)), m((67,))), {"normalized_shape": (67,)}),
    ("plain-transposed", lambda m: m((9, 13)).t(), {"normalized_shape": (9,)})),
    lambda x, weight=None, bias=None, *, normalized_shape: _layer_norm_reference(x, normalized_shape, weight, bias),
    tolerances={tt.float32: (1e-4, 1e-5), tt.float64: (1e-10, 1e-12)})


# --------------------------------------------------------------------------- gradient cases (float64)
GRAD_RNG = np.random.default_rng(1234)


def _t(values, device):
    return tt.tensor(np.asarray(values, dtype=np.float64), device=device, requires_grad=True)


def _randn(shape, device, away_from=None, positive=False):
    v = GRAD_RNG.standard_normal(shape)
    if positive:
        v = np.abs(v) + 0.5
    if away_from is not None:
        v = np.where(np.abs(v - away_from) < 0.2, v + 0.5, v)
    return _t(v, device)


def _other(device):
    return "cpu" if device == "cuda" else "cuda"


# name -> function(device) returning (fn, float64 inputs, gradcheck kwargs): first and second
# derivatives are part of an op's specification
GRAD_CASES = {
    "add": lambda d: (lambda x, y: x + y, (_randn((2, 3), d), _randn((3,), d)), {}),
    "sub": lambda d: (lambda x, y: x - y * 2, (_randn((2, 3), d), _randn((2, 1), d)), {}),
    "mul": lambda d: (lambda x, y: x * y, (_randn((2, 3), d), _randn((3,), d)), {}),
    "div": lambda d: (lambda x, y: x / y, (_randn((2, 3), d), _randn((3,), d, away_from=0)), {}),
    "pow": lambda d: (lambda x, y: x ** y, (_randn((2, 3), d, positive=True), _randn((3,), d)), {}),
    "neg": lambda d: (lambda x: -x, (_randn((4,), d),), {}),
    "exp": lambda d: (lambda x: x.exp(), (_randn((2, 3), d),), {}),
    "log": lambda d: (lambda x: x.log(), (_randn((2, 3), d, positive=True),), {}),
    "sin": lambda d: (lambda x: x.sin(), (_randn((5,), d),), {}),
    "cos": lambda d: (lambda x: x.cos(), (_randn((5,), d),), {}),
    "tanh": lambda d: (lambda x: x.tanh(), (_randn((2, 3), d),), {}),
    "relu": lambda d: (lambda x: x.relu(), (_randn((2, 3), d, away_from=0),), {}),
    "sqrt": lambda d: (lambda x: x.sqrt(), (_randn((4,), d, positive=True),), {}),
    "sigmoid": lambda d: (lambda x: x.sigmoid(), (_randn((4,), d),), {}),
    "abs": lambda d: (lambda x: x.abs(), (_randn((4,), d, away_from=0),), {}),
    "maximum": lambda d: (tt.maximum, (_randn((2, 3), d), _randn((3,), d)), {}),
    "minimum": lambda d: (tt.minimum, (_randn((2, 3), d), _randn((3,), d)), {}),
    "tanh_backward": lambda d: (_backward_op("tanh_backward"), (_randn((2, 3), d), _randn((2, 3), d)), {}),
    "relu_backward": lambda d: (_backward_op("relu_backward"), (_randn((2, 3), d), _randn((3,), d, away_from=0)), {}),
    "where": lambda d: (lambda x, y: tt.where(tt.tensor([True, False, True], device=d), x, y),
                        (_randn((2, 3), d), _randn((3,), d)), {}),
    "view": lambda d: (lambda x: x.view(3, 2) * 1, (_randn((2, 3), d),), {}),
    "permute": lambda d: (lambda x: x.permute(2, 0, 1), (_randn((2, 3, 2), d),), {}),
    "transpose": lambda d: (lambda x: x.transpose(0, 1), (_randn((2, 3), d),), {}),
    "t": lambda d: (lambda x: x.t(), (_randn((2, 3), d),), {}),
    "expand": lambda d: (lambda x: x.expand(2, 3, 2), (_randn((3, 1), d),), {}),
    "squeeze": lambda d: (lambda x: x.squeeze(1), (_randn((3, 1, 2), d),), {}),
    "unsqueeze": lambda d: (lambda x: x.unsqueeze(-1), (_randn((3, 2), d),), {}),
    "basic_index": lambda d: (lambda x: x[1:, None, ::2], (_randn((3, 5), d),), {}),
    "slice_backward": lambda d: (lambda g: table_op("slice_backward", g, input_shape=(3, 5),
                                                          index=(slice(1, None), slice(None, None, 2))),
                                 (_randn((2, 3), d),), {}),
    "clone": lambda d: (lambda x: x.clone(), (_randn((2, 3), d),), {}),
    # float64 -> float32 -> float64 is exact for these values and this eps
    "to_copy": lambda d: (lambda x: x.to(tt.float32).to(tt.float64),
                          (_t(GRAD_RNG.integers(-8, 8, (2, 3)) / 16, d),), {"eps": 2 ** -10, "atol": 1e-7}),
    "device_copy": lambda d: (lambda x: x.to(_other(d)), (_randn((2, 3), d),), {}),
    "sum": lambda d: (lambda x: x.sum(1) + x.sum(0, keepdim=True).sum() + x.sum(), (_randn((3, 4), d),), {}),
    # the recorded copy_/fill_ (ops/copy.py OVERWRITE): src broadcast into self, self's old value gets 0
    "overwrite": lambda d: (lambda x, y, v: (x * 1).copy_(y) * x + (x * 1).fill_(v) * x,
                            (_randn((3, 4), d), _randn((4,), d), _randn((), d)), {}),
    "prod": lambda d: (lambda x: x.prod(1) + x.prod(), (_randn((3, 4), d, away_from=0),), {}),
    "amax": lambda d: (lambda x: x.amax(1) + x.amax((0, 1), keepdim=True), (_randn((3, 4), d),), {}),
    "amin": lambda d: (lambda x: x.amin(0), (_randn((3, 4), d),), {}),
    "cumsum": lambda d: (lambda x: x.cumsum(1) + x.cumsum(0), (_randn((3, 4), d),), {}),
    "cumprod": lambda d: (lambda x: x.cumprod(-1), (_randn((3, 4), d, away_from=0),), {}),
    "softmax": lambda d: (lambda x: x.softmax(1) + x.softmax(0), (_randn((3, 4), d),), {}),
    "log_softmax": lambda d: (lambda x: x.log_softmax(-1), (_randn((3, 4), d),), {}),
    "softmax_backward": lambda d: (lambda g, x: table_op("softmax_backward", g, x.softmax(1), dim=1),
                                   (_randn((3, 4), d), _randn((3, 4), d)), {}),
    "log_softmax_backward": lambda d: (lambda g, x: table_op("log_softmax_backward", g, x.log_softmax(0), dim=0),
                                       (_randn((3, 4), d), _randn((3, 4), d)), {}),
    # joining, splitting, flip, triangular parts (ops/joining.py); as_strided and the two ops the
    # CopySlices node is made of (ops/views.py)
    "cat": lambda d: (lambda x, y: tt.cat([x, tt.zeros(0, dtype=tt.float64, device=d), y], -1),
                      (_randn((2, 3), d), _randn((2, 2), d)), {}),
    "stack": lambda d: (lambda x, y: tt.stack([x, y.t()], 1), (_randn((2, 2), d), _randn((2, 2), d)), {}),
    "split": lambda d: (lambda x: x.split([1, 2], 1)[1] + x.chunk(2, 1)[0], (_randn((2, 3), d),), {}),
    "flip": lambda d: (lambda x: x.flip(0, 2), (_randn((2, 2, 2), d),), {}),
    "tril": lambda d: (lambda x: x.tril(1), (_randn((3, 3), d),), {}),
    "triu": lambda d: (lambda x: x.t().triu(-1), (_randn((2, 3), d),), {}),
    "as_strided": lambda d: (lambda x: x.as_strided((2, 2), (1, 2), 1) + x.as_strided((2, 2), (0, 1)),
                             (_randn((5,), d),), {}),
    "as_strided_backward": lambda d: (lambda g: table_op("as_strided_backward", g, src=((2, 2), (1, 2), 1), dst=((2, 4), (4, 1), 0)),
                                      (_randn((2, 2), d),), {}),
    "as_strided_scatter": lambda d: (lambda x, s: table_op("as_strided_scatter", x, s, base=((2, 4), (4, 1), 0),
                                                                           view=((2,), (4,), 1)),
                                     (_randn((2, 4), d), _randn((2,), d)), {}),
    # matrix multiplication: transposed operands, broadcast batches, broadcast addmm input
    "mm": lambda d: (lambda x, y: x.mm(y.t()), (_randn((2, 3), d), _randn((2, 3), d)), {}),
    "bmm": lambda d: (tt.bmm, (_randn((2, 2, 2), d), _randn((2, 2, 1), d)), {}),
    "matmul": lambda d: (lambda x, y: x @ y, (_randn((2, 1, 1, 2), d), _randn((2, 2, 1), d)), {}),
    "addmm": lambda d: (lambda i, x, y: tt.addmm(i, x, y, beta=0.5, alpha=2.0),
                        (_randn((2,), d), _randn((2, 2), d), _randn((2, 2), d)), {}),
    "baddbmm": lambda d: (lambda i, x, y: tt.baddbmm(i, x, y.transpose(1, 2), beta=-1.5, alpha=0.5),
                          (_randn((2, 1), d), _randn((2, 2, 2), d), _randn((2, 1, 2), d)), {}),
    # indexing: repeated and negative indices, a basic part, broadcast values, a src bigger than the index
    "index": lambda d: (lambda x: x[tt.tensor([2, 0, 2, -1], device=d), None, [1, 0, 1, 1]], (_randn((3, 2), d),), {}),
    "index_select": lambda d: (lambda x: x.index_select(1, tt.tensor([1, 1, 0], device=d)), (_randn((2, 3), d),), {}),
    "index_put": lambda d: (lambda x, v: tt.index_put(x, (tt.tensor([2, 0], device=d),), v)
                            + tt.index_put(x, (tt.tensor([1, 1], device=d),), v[:, :1], accumulate=True),
                            (_randn((3, 1), d), _randn((2, 1), d)), {}),
    "gather": lambda d: (lambda x: x.gather(1, tt.tensor([[0, 2, 2], [1, 0, 1]], device=d)), (_randn((2, 3), d),), {}),
    "scatter": lambda d: (lambda x, s: x.scatter(1, tt.tensor([[2, 0], [1, 2]], device=d), s),
                          (_randn((2, 3), d), _randn((2, 3), d)), {}),
    "scatter_add": lambda d: (lambda x, s: x.scatter_add(0, tt.tensor([[1, 0, 1], [1, 1, 0]], device=d), s),
                              (_randn((2, 3), d), _randn((3, 3), d)), {}),
    "masked_select": lambda d: (lambda x: x.masked_select(tt.tensor([[True, False, True], [True, True, False]],
                                                                    device=d)), (_randn((3,), d),), {}),
    # pointwise math (ops/pointwise.py): small inputs, each launch is ~1 ms emulated; step
    # functions are checked away from their jumps (the numerical derivative is 0 there too)
    "sign": lambda d: (lambda x: x.sign() * x, (_randn((3,), d, away_from=0),), {}),
    "floor": lambda d: (lambda x: x.floor() * x, (_randn((3,), d),), {}),
    "ceil": lambda d: (lambda x: x.ceil() * x, (_randn((3,), d),), {}),
    "trunc": lambda d: (lambda x: x.trunc() * x, (_randn((3,), d),), {}),
    "round": lambda d: (lambda x: x.round() * x, (_randn((3,), d),), {}),
    "round_decimals": lambda d: (lambda x: x.round(decimals=1) * x, (_randn((3,), d),), {}),
    "exp2": lambda d: (tt.exp2, (_randn((3,), d),), {}),
    "expm1": lambda d: (tt.expm1, (_t([-2.0, -1e-3, 1e-4, 0.4], d),), {}),
    "log2": lambda d: (tt.log2, (_randn((3,), d, positive=True),), {}),
    "log10": lambda d: (tt.log10, (_randn((3,), d, positive=True),), {}),
    "log1p": lambda d: (tt.log1p, (_t([-0.5, -1e-3, 1e-4, 3.0], d),), {}),
    "rsqrt": lambda d: (tt.rsqrt, (_randn((3,), d, positive=True),), {}),
    "tan": lambda d: (tt.tan, (_t([-1.2, 0.1, 1.3], d),), {}),
    "erf": lambda d: (tt.erf, (_randn((3,), d),), {}),
    "erf_backward": lambda d: (_backward_op("erf_backward"), (_randn((2, 2), d), _randn((2,), d)), {}),
    "sigmoid_backward": lambda d: (_backward_op("sigmoid_backward"), (_randn((3,), d), _randn((3,), d)), {}),
    "silu": lambda d: (tt.silu, (_randn((3,), d),), {}),
    "silu_backward": lambda d: (_backward_op("silu_backward"), (_randn((2, 2), d), _randn((2, 1), d)), {}),
    # gelu's second derivative is gelu_backward's backward: both forms are checked here ...
    "gelu": lambda d: (lambda x: tt.gelu(x) + tt.gelu(x, approximate="tanh"), (_randn((2,), d),), {}),
    # ... and the third derivative (composite ops) once
    "gelu_backward": lambda d: (_backward_op("gelu_backward", approximate="none"), (_randn((2,), d), _randn((2,), d)), {}),
    "div_trunc": lambda d: (lambda x, y: tt.div(x, y, rounding_mode="trunc") * x,
                            (_randn((2, 2), d), _randn((2,), d, away_from=0)), {}),
    "div_floor": lambda d: (lambda x, y: tt.div(x, y, rounding_mode="floor") * y,
                            (_randn((2, 2), d), _randn((2,), d, away_from=0)), {}),
    "floor_divide": lambda d: (lambda x, y: (x // y) * x, (_randn((2, 2), d), _randn((2,), d, away_from=0)), {}),
    "remainder": lambda d: (lambda x, y: x % y, (_randn((2, 2), d), _randn((2,), d, away_from=0)), {}),
    "fmod": lambda d: (lambda x, y: tt.fmod(x, y), (_randn((2, 2), d), _randn((2,), d, away_from=0)), {}),
    # x below, inside and above [lo, hi], and one column with lo > hi
    "clamp": lambda d: (tt.clamp, (_t([[-1.0, 0.9], [0.1, 2.0]], d), _t([-0.3, 1.0], d), _t([[0.5], [0.3]], d)), {}),
    "clamp_min": lambda d: (lambda x, lo: tt.clamp(x, min=lo), (_randn((2, 2), d), _randn((2,), d)), {}),
    "clamp_max": lambda d: (lambda x, hi: x.clip(max=hi), (_randn((2, 2), d), _randn((2,), d)), {}),
    "masked_fill": lambda d: (lambda x, v: x.masked_fill(tt.tensor([True, False, True], device=d), v),
                              (_randn((3,), d), _t(1.5, d)), {}),
    # issue 16: overlapping windows (unfold's backward adds them up), diagonals off the main one
    "unfold": lambda d: (lambda x: x.unfold(1, 3, 2), (_randn((2, 7), d),), {}),
    "diagonal": lambda d: (lambda x: x.diagonal(-1, 2, 0), (_randn((3, 2, 4), d),), {}),
    "diag_embed": lambda d: (lambda x: x.diag_embed(1, 0, 2), (_randn((2, 3), d),), {}),
    "diagonal_scatter": lambda d: (lambda x, s: x.diagonal_scatter(s, 1), (_randn((3, 4), d), _randn((3,), d)), {}),
    "var": lambda d: (lambda x: x.var(1, correction=0), (_randn((2, 3), d),), {}),
    # two values into one target (the smallest case with a product of others; each emulated launch costs)
    "scatter_reduce": lambda d: (lambda x, s: x.scatter_reduce(0, tt.tensor([[0], [0]], device=d), s, "prod"),
                                 (_randn((1, 1), d), _randn((2, 1), d)), {}),
    # the fused nn ops (ops/nn.py), on the smallest shapes (each emulated launch costs ~1 ms and the
    # double-backward composites are many); tests/test_nn_functional.py checks larger ones on cpu
    "layer_norm": lambda d: (lambda x, w: tt.nn.functional.layer_norm(x, (3,), w),
                             (_randn((1, 3), d), _randn((3,), d)), {}),
    # the fused backward as create_graph records it (NativeLayerNormBackwardBackward0): second
    # and third derivatives of layer_norm
    "layer_norm_backward": lambda d: (lambda g, x: tt.autograd.grad(tt.nn.functional.layer_norm(x, (3,)), (x,), g,
                                                                    create_graph=True)[0],
                                      (_randn((1, 3), d), _randn((1, 3), d)), {}),
    "cross_entropy": lambda d: (lambda x: table_op("cross_entropy", x, tt.tensor([1, -100], device=d), None, cdim=1, ignore_index=-100),
                                (_randn((2, 2), d),), {}),
    "cross_entropy_backward": lambda d: (lambda g, x: table_op(
        "cross_entropy_backward", g, x, tt.tensor([1], device=d), tt.tensor([0.5, 2.0], dtype=tt.float64, device=d),
        cdim=1, ignore_index=-100),
        (_randn((2, 1), d), _randn((1, 2), d)), {}),
}


# pairwise distances (ops/pdist.py). torch has no derivative of _pdist_backward / _cdist_backward:
# their gradcheck, and pdist's gradgradcheck, must raise torch's NotImplementedError instead.
# cdist's mm path (p = 2) is a composite in torch and here: differentiable twice.
GRAD_CASES.update({
    "pdist": lambda d: (lambda x: tt.pdist(x, 1.5) + tt.pdist(x), (_randn((3, 2), d),), {}),
    "pdist_backward": lambda d: (lambda g, x: table_op("pdist_backward", g, x, tt.pdist(x.detach()), p=2.0),
                                 (_randn((3,), d), _randn((3, 2), d)), {}),
    "cdist": lambda d: (lambda x, y: tt.cdist(x, y, compute_mode="use_mm_for_euclid_dist"),
                        (_randn((2, 1), d), _randn((1, 1), d)), {}),
    "cdist_backward": lambda d: (lambda g, x, y: table_op("cdist_backward", g, x, y, tt.cdist(x, y, 1.5).detach(), p=1.5),
                                 (_randn((2, 1), d), _randn((2, 1), d), _randn((1, 1), d)), {}),
})
NO_DERIVATIVE = {"pdist_backward": "_pdist_backward", "cdist_backward": "_cdist_backward"}
NO_SECOND_DERIVATIVE = {"pdist": "_pdist_backward", **NO_DERIVATIVE}


# --------------------------------------------------------------------------- views added with torch's node names
record("unbind", lambda x, dim=0: tt.unbind(x, dim), (tt.float32, tt.bool), cases(
    "unbind", "any", ("dim1-transposed", lambda m: m((5, 3)).t(), {"dim": 1}), ("dim0", lambda m: m((2, 4)), {})),
    lambda x, dim=0: tuple(np.moveaxis(x, dim, 0)))
record("_unsafe_view", lambda x, shape: table_op("_unsafe_view", x, shape=shape, node="UnsafeViewBackward0"),
       (tt.float32, tt.int64), cases("_unsafe_view", "any", ("split-dim", lambda m: m((3, 4, 5)), {"shape": (5, 12)}),
                                     ("0d", lambda m: m(()), {"shape": (1,)})),
       lambda x, shape: x.reshape(shape))
GRAD_CASES.update({
    "unbind": lambda d: (lambda x: x.unbind(1)[2] + 2 * x.unbind(1)[0], (_randn((2, 3), d),), {}),
    # reshape of a non-viewable tensor is clone + _unsafe_view (UnsafeViewBackward0)
    "_unsafe_view": lambda d: (lambda x: x.t().reshape(6) * 1, (_randn((2, 3), d),), {}),
})


GRAD_CASES["reciprocal"] = lambda d: (tt.reciprocal, (_randn((3,), d, away_from=0),), {})


# Table ops the parity test here does not run, each with where it is tested instead. The gate in
# tests/test_ops_table.py fails on a table op with neither samples nor a line here, and on a line
# here for an op that has samples (so the list only shrinks).
PARITY_ESCAPES = {
    "device_copy": "cross-device copies: tests/test_devices.py, test_cuda_devices.py",
    "overwrite": "the recorded copy_/fill_/zero_: tests/test_elementwise.py (test_copy_fill_zero_record_torch_nodes)",
    "slice_backward": "CopySlices' parts: tests/test_copy_slices.py (and its gradient case here)",
    "as_strided": "tests/test_copy_slices.py, test_views.py (a view of the storage: layout-dependent by design)",
    "as_strided_backward": "tests/test_copy_slices.py",
    "diagonal_scatter": "tests/test_parity_issue16.py",
    "scatter": "tests/test_indexing.py (duplicate indices: last write wins, checked there)",
    "scatter_add": "tests/test_indexing.py",
    "scatter_reduce": "tests/test_indexing.py, test_parity_issue16.py",
    "index_put": "tests/test_indexing.py (accumulate and duplicate indices)",
    "pdist_backward": "tests/test_pdist.py",
    "cdist_backward": "tests/test_pdist.py",
    "cross_entropy": "the fused per-row terms: tests/test_nn_functional.py (through F.cross_entropy)",
    "cross_entropy_backward": "tests/test_nn_functional.py",
    "layer_norm_backward": "tests/test_nn_functional.py",
}


# Family record modules: tests/opinfo_<family>.py (sorting, special, linalg ...) add their
# records with ``record()``, their gradient cases to ``GRAD_CASES`` (and NO_DERIVATIVE /
# NO_SECOND_DERIVATIVE) and their escape lines to ``PARITY_ESCAPES``, importing them from here;
# a new family is a new file, so work on different families never edits this one. A record may
# also name a public op that is no table entry (a composite such as ``tile`` or ``linalg.solve``):
# its ``op`` is the public callable.
# gradient cases whose emulated-cuda gradgradcheck is left out (see OpInfo.emulated_gradgradcheck)
CPU_ONLY_GRADGRAD: set = set()

import importlib as _importlib  # noqa: E402
import pathlib as _pathlib  # noqa: E402

for _path in sorted(_pathlib.Path(__file__).parent.glob("opinfo_*.py")):
    _importlib.import_module(_path.stem)


# attach each gradient case to its op's record (a record of its own where the op has no parity samples)
_BY_NAME = {r.name: r for r in RECORDS}
for _name, _case in GRAD_CASES.items():
    if _name not in _BY_NAME:
        RECORDS.append(OpInfo(_name))
        _BY_NAME[_name] = RECORDS[-1]
    _BY_NAME[_name].grad_case = _case
    _BY_NAME[_name].no_derivative = NO_DERIVATIVE.get(_name)
    _BY_NAME[_name].no_second_derivative = NO_SECOND_DERIVATIVE.get(_name)
    if _name in CPU_ONLY_GRADGRAD:
        _BY_NAME[_name].emulated_gradgradcheck = False

OPS = {r.name: r for r in RECORDS}

def elementwise_signatures(computes=("float32", "int64", "bool")):
    """The kernel launches the elementwise records ask for, for the sm_90 compile check
    (tests/test_kernels_standalone.py): per kernel FN of an op and per compute dtype
    in ``computes`` that one of its dtypes reaches, one ``(fn, compute, out, input dtypes)``,
    the one whose inputs are of the compute dtype where there is one. Read from the table's own
    shape/dtype rule, so a record's new dtype is a new launch."""
    def short(dtype):
        return str(dtype).rsplit(".", 1)[-1]

    found = {}
    for rec in RECORDS:
        if rec.kernel_fn is None:
            continue
        for dtype in rec.dtypes:
            sample = next((s for s in rec.sample_inputs("cpu", dtype)
                           if all(isinstance(a, tt.Tensor) for a in s.args)), None)
            if sample is None:
                continue
            meta = TABLE[rec.name].rule(*sample.args)
            compute = short(meta.compute or meta.dtype)
            if compute not in computes:
                continue
            sig = (rec.kernel_fn, compute, short(meta.dtype), tuple(short(a.dtype) for a in sample.args))
            native = all(i == compute for i in sig[3])
            if sig[:2] not in found or (native and not found[sig[:2]][1]):
                found[sig[:2]] = (sig, native)
    return sorted(sig for sig, _ in found.values())
