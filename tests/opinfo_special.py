"""OpInfo records of the special functions (tritensor/ops/special.py): lgamma, digamma, polygamma,
mvlgamma, erfc, erfinv, i0, igamma/igammac and torch.special's own.

Parity (tests/test_ops_table.py) checks the cpu device and the emulated cuda kernels against the
table's NumPy reference; the independent oracles (SciPy over wide ranges, values recorded from
torch 2.13, identities) are in tests/test_special_functions.py. The kernels are long (series,
recurrences, four paths for igamma), so on cuda every dtype runs one launch: a (3, 67)
transposed operand (two programs of the interpreter's 128-element blocks, the tail masked) in
float32 and float64 and a 0-d one in the other dtypes; the cpu runs every layout.
"""
from __future__ import annotations

import numpy as np

import tritensor as tt
from opinfo import GRAD_CASES, LAYOUTS, RECORDS, SampleInput, _t, record, rng_for

FLOAT_PAIR = (tt.float32, tt.float64)
# the kernels against the reference (computed in float64 and rounded): float32 elementwise
# results differ by a few ulp, more where the function cancels (digamma, lgamma near their roots):
# hence the absolute part
TOLERANCES = {tt.float16: (2e-3, 1e-3), tt.bfloat16: (1.6e-2, 1e-2), tt.float32: (1e-5, 1e-5),
              tt.float64: (1e-12, 1e-13)}

# value domains: numbers from a standard normal, mapped
DOMAINS = {
    "any": lambda v: v * 3,
    "wide": lambda v: v * 12,
    "positive": lambda v: np.abs(v) * 3 + 0.05,
    "unit": lambda v: np.tanh(v),                 # (-1, 1)
    "prob": lambda v: 1 / (1 + np.exp(-2 * v)),    # (0, 1)
    "log1p": lambda v: np.abs(v) * 2 - 0.9,        # > -1
    "zeta_x": lambda v: np.abs(v) * 2 + 1.05,      # > 1
    "shape": lambda v: np.abs(v) * 4 + 0.1,        # igamma's a and x
    "cheb": lambda v: np.clip(v * 0.7, -1.2, 1.2),
    "degree": lambda v: np.floor(np.abs(v) * 4),   # 0, 1, 2 ... 12 or so
}
# special values added to the float samples (a subset each op's domain makes sense of)
EDGES = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 8.0]


def _values(domain, shape, dtype, rng):
    v = DOMAINS[domain](rng.standard_normal(shape))
    if dtype is tt.bool:
        return v > 0.5
    if not dtype.is_floating_point:
        return np.round(v).astype(np.int64)
    return v


def _make(domain, dtype, device, rng):
    def make(shape):
        return tt.tensor(_values(domain, shape, dtype, rng), dtype=dtype, device=device)
    return make


def _with_edges(t, dtype, device):
    """t with EDGES written over its first elements (floats of at least 2-D)."""
    if dtype.is_floating_point and t.dim() == 2 and t.numel() >= len(EDGES):
        t = t.clone()
        t.view(-1)[: len(EDGES)] = tt.tensor(EDGES, dtype=dtype, device=device)
    return t


# The FNs whose float32 code differs from their float64 code beyond the shared helpers (their own
# dtype branches, constants or precision-sensitive steps): their float32 kernels run on cuda too.
# Every FN runs in float64 on cuda; the shared float32 helpers (_exp, _exp_square, _sqrt) run
# through these.
FLOAT32_ON_CUDA = {"lgamma", "digamma", "erfc", "erfinv", "i0", "special_erfcx", "special_log_ndtr",
                   "special_ndtri", "special_airy_ai", "special_zeta", "polygamma2", "igamma", "igammac",
                   "special_hermite_polynomial_h", "special_chebyshev_polynomial_t", "special_modified_bessel_k0"}


def samples(name, domains, extra=()):
    """Samples for an elementwise op of len(domains) tensor operands: on cpu every layout (plus
    the edge values); on cuda one launch, (3, 67) transposed with the edge values, in float64
    (and in float32 for FLOAT32_ON_CUDA), and a size-0 operand in the other dtypes (their
    results' dtype and shape; the values are the reference's, checked on cpu, since the
    kernels compute those dtypes in float32). ``extra``: (desc, args builder), cpu only."""
    def gen(device, dtype):
        heavy = device != "cpu"
        if heavy and (dtype is tt.float64 or (dtype is tt.float32 and name in FLOAT32_ON_CUDA)):
            layouts = ("odd-transposed",)
        elif heavy:
            layouts = ("empty",)
        else:
            layouts = tuple(LAYOUTS) + ("odd-transposed",)
        for lay in layouts:
            args = []
            for i, domain in enumerate(domains):
                make = _make(domain, dtype, device, rng_for(name, dtype, lay, i))
                if lay == "odd-transposed":       # (3, 67) with strides (1, 3); edge values first
                    t = make((3, 67))
                    t = (_with_edges(t, dtype, device) if i == 0 else t).t().contiguous().t()
                else:
                    t = LAYOUTS[lay](make)
                args.append(t)
            yield SampleInput(tuple(args), desc=lay)
        if not heavy:
            for desc, build in extra:
                yield SampleInput(build(dtype, device), desc=desc)
    return gen


def _unary(name, dtypes, domain="any", op=None, op_db=(), **fields):
    public = op or getattr(tt.special, name.replace("special_", ""), None) or getattr(tt, name)
    return record(name, public, dtypes, samples(name, (domain,)), "table", kernel_fn=fields.pop("kernel_fn", None),
                  tolerances=dict(TOLERANCES), op_db=op_db, **fields)


def _scalar_cases(*scalars, left=True, right=True, domain="any"):
    """Binary samples with a Python number on either side (cpu only)."""
    cases = []
    for s in scalars:
        if right:
            cases.append((f"scalar-right-{s}", lambda dtype, device, s=s: (
                tt.tensor(_values(domain, (5, 7), dtype, rng_for("scalar", dtype, s)), dtype=dtype, device=device), s)))
        if left:
            cases.append((f"scalar-left-{s}", lambda dtype, device, s=s: (
                s, tt.tensor(_values(domain, (5, 7), dtype, rng_for("scalar-l", dtype, s)), dtype=dtype, device=device))))
    return cases


# --------------------------------------------------------------------------- unary ops
HALF_OK = (tt.float32, tt.float64, tt.float16, tt.int64)
_unary("lgamma", FLOAT_PAIR + (tt.float16, tt.bfloat16, tt.int64, tt.bool), "wide", kernel_fn="lgamma")
_unary("digamma", HALF_OK, "wide", kernel_fn="digamma")
_unary("erfc", HALF_OK, "any", kernel_fn="erfc")
_unary("erfinv", FLOAT_PAIR + (tt.bfloat16, tt.bool), "unit", kernel_fn="erfinv")
_unary("i0", HALF_OK, "wide", kernel_fn="i0")
_unary("special_i0e", HALF_OK, "wide", kernel_fn="i0e", op_db=("special.i0e",))
_unary("special_i1", FLOAT_PAIR + (tt.int32,), "wide", kernel_fn="i1", op_db=("special.i1",))
_unary("special_i1e", FLOAT_PAIR + (tt.float16,), "wide", kernel_fn="i1e", op_db=("special.i1e",))
_unary("special_entr", FLOAT_PAIR + (tt.float16,), "any", kernel_fn="entr", op_db=("special.entr",))
_unary("special_erfcx", FLOAT_PAIR + (tt.int64,), "wide", kernel_fn="erfcx", op_db=("special.erfcx",))
_unary("special_ndtri", FLOAT_PAIR, "prob", kernel_fn="ndtri", op_db=("special.ndtri",))
_unary("special_log_ndtr", FLOAT_PAIR + (tt.bool,), "wide", kernel_fn="log_ndtr", op_db=("special.log_ndtr",))
for _name, _domain in (("airy_ai", "wide"), ("bessel_j0", "wide"), ("bessel_j1", "wide"), ("bessel_y0", "positive"),
                       ("bessel_y1", "positive"), ("spherical_bessel_j0", "wide"), ("modified_bessel_i0", "wide"),
                       ("modified_bessel_i1", "wide"), ("modified_bessel_k0", "positive"),
                       ("modified_bessel_k1", "positive"), ("scaled_modified_bessel_k0", "positive"),
                       ("scaled_modified_bessel_k1", "positive")):
    _unary(f"special_{_name}", FLOAT_PAIR + ((tt.int64,) if _name == "bessel_j0" else ()), _domain,
           kernel_fn={"modified_bessel_i0": "i0", "modified_bessel_i1": "i1"}.get(_name, _name),
           op_db=(f"special.{_name}",))


# --------------------------------------------------------------------------- polygamma, mvlgamma, ndtr
def _polygamma_samples(device, dtype):
    for n in (0, 1, 2, 3) if device == "cpu" else (2,):
        for s in samples(f"polygamma{n}", ("wide" if n < 2 else "positive",))(device, dtype):
            yield SampleInput((n,) + s.args, desc=f"n={n}-{s.desc}")


record("polygamma", tt.polygamma, FLOAT_PAIR + (tt.int64,), _polygamma_samples,
       lambda n, x: _polygamma_reference(n, x), tolerances=dict(TOLERANCES),
       op_db=("special.polygamma",))     # (n a Python int: the compile check launches the FN on its own)


def _polygamma_reference(n, x):
    from tritensor.backends import numpy_special
    compute = np.float64 if x.dtype == np.float64 else np.float32
    return numpy_special.polygamma(np.asarray(x, compute), n=n)


def _mvlgamma_samples(device, dtype):
    for p in (1, 3) if device == "cpu" else (3,):
        make = _make("positive", dtype, device, rng_for("mvlgamma", dtype, p))
        x = make((5, 9)).t() if device == "cpu" else make((3, 67) if dtype is tt.float64 else (0, 3))
        yield SampleInput((add_half(x, p), p), desc=f"p={p}")


def add_half(x, p):
    return x + (p - 1) / 2 if x.dtype.is_floating_point else x + p


def _mvlgamma_reference(x, p):
    from tritensor.backends import numpy_special
    x = np.asarray(x, np.float64 if x.dtype == np.float64 else np.float32)
    js = np.arange(p) * 0.5
    return numpy_special.lgamma(x[..., None] - js).sum(-1) + p * (p - 1) / 4 * np.log(np.pi)


record("mvlgamma", tt.mvlgamma, FLOAT_PAIR + (tt.int64,), _mvlgamma_samples, _mvlgamma_reference,
       tolerances=dict(TOLERANCES), op_db=("special.multigammaln",))


def _ndtr_reference(x):
    from tritensor.backends._special import erf
    x = np.asarray(x, np.float64 if x.dtype == np.float64 else np.float32)
    return (1 + erf(x * np.sqrt(0.5).astype(x.dtype))) * 0.5


record("special_ndtr", tt.special.ndtr, FLOAT_PAIR + (tt.int64, tt.float16),
       samples("special_ndtr", ("any",)), _ndtr_reference, tolerances=dict(TOLERANCES),
       op_db=("special.ndtr",))


# --------------------------------------------------------------------------- binary ops
def _binary(name, dtypes, domains, extra=(), op=None, op_db=(), kernel_fn=None):
    public = op or getattr(tt.special, name.replace("special_", ""), None) or getattr(tt, name)
    return record(name, public, dtypes, samples(name, domains, extra), "table", tolerances=dict(TOLERANCES),
                  op_db=op_db, kernel_fn=kernel_fn)


_binary("igamma", FLOAT_PAIR + (tt.float16,), ("shape", "shape"), kernel_fn="igamma", op_db=("special.gammainc",))
_binary("igammac", FLOAT_PAIR, ("shape", "shape"), kernel_fn="igammac", op_db=("special.gammaincc",))
_binary("special_xlog1py", FLOAT_PAIR + (tt.int64, tt.bfloat16), ("any", "log1p"),
        _scalar_cases(2, -0.5, 0), kernel_fn="xlog1py", op_db=("special.xlog1py",))
_binary("special_zeta", FLOAT_PAIR + (tt.int64,), ("zeta_x", "positive"), _scalar_cases(3.0, domain="positive", left=False)
        + _scalar_cases(2.5, domain="positive", right=False), kernel_fn="zeta", op_db=("special.zeta",))
for _name in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
              "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
              "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
              "laguerre_polynomial_l", "legendre_polynomial_p"):
    _binary(f"special_{_name}", FLOAT_PAIR + ((tt.int64,) if _name.startswith("legendre") else ()), ("cheb", "degree"),
            _scalar_cases(3, 9, right=True, left=False, domain="cheb") + _scalar_cases(0.5, left=True, right=False,
                                                                                        domain="degree"),
            kernel_fn=_name, op_db=(f"special.{_name}",))


# --------------------------------------------------------------------------- gradient cases (float64)
def _v(values, device):
    """Gradient inputs: every value on cpu, the first one on cuda (finite differences and double
    backward cost a launch per evaluation under the interpreter; the rules are the same)."""
    return _t(values if device == "cpu" else values[:1], device)


def _fixed(values, device):
    return tt.tensor(values if device == "cpu" else values[:1], dtype=tt.float64, device=device)


GRAD_CASES.update({
    "lgamma": lambda d: (tt.lgamma, (_v([0.7, 1.3, 2.5, -0.5, -2.3, 14.0], d),), {}),
    "digamma": lambda d: (tt.digamma, (_v([0.7, 1.3, 2.5, -0.5, 11.0], d),), {}),
    "polygamma": lambda d: ((lambda x: tt.polygamma(1, x) + tt.polygamma(2, x * 0.5)) if d == "cpu" else
                            (lambda x: tt.polygamma(2, x)), (_v([1.3, 0.7, 2.5, -0.5], d),), {}),
    "mvlgamma": lambda d: (lambda x: tt.mvlgamma(x, 3), (_v([1.7, 2.3, 4.5], d),), {}),
    "erfc": lambda d: (tt.erfc, (_v([0.3, -1.2, 2.0], d),), {}),
    "erfinv": lambda d: (tt.erfinv, (_v([0.3, -0.8, 0.05], d),), {}),
    "i0": lambda d: (tt.i0, (_v([0.3, -1.2, 9.0], d),), {}),
    "special_i0e": lambda d: (tt.special.i0e, (_v([0.3, -1.2, 9.0], d),), {}),
    "special_i1": lambda d: (tt.special.i1, (_v([0.3, -1.2, 9.0, 0.0], d),), {}),     # 0: the limit 1/2
    "special_i1e": lambda d: (tt.special.i1e, (_v([0.3, -1.2, 9.0, 0.0], d),), {}),
    "special_entr": lambda d: (tt.special.entr, (_v([0.3, 1.2, 3.0], d),), {}),
    "special_erfcx": lambda d: (tt.special.erfcx, (_v([0.3, -1.2, 3.0], d),), {}),
    "special_ndtri": lambda d: (tt.special.ndtri, (_v([0.3, 0.9, 0.02], d),), {}),
    "special_log_ndtr": lambda d: (tt.special.log_ndtr, (_v([0.3, -3.0, 2.0], d),), {}),
    "special_ndtr": lambda d: (tt.special.ndtr, (_v([0.3, -1.5, 2.0], d),), {}),
    "special_xlog1py": lambda d: (tt.special.xlog1py, (_v([0.3, -1.5, 2.0], d), _v([0.5, 2.0, -0.5], d)), {}),
    # zeta and igamma are differentiable in their second argument only (the first: tests/test_special_functions.py)
    "special_zeta": lambda d: (lambda q: tt.special.zeta(_fixed([2.5, 3.0], d), q), (_v([0.7, 2.0], d),), {}),
    "igamma": lambda d: (lambda x: tt.igamma(_fixed([0.5, 3.0], d), x), (_v([0.4, 2.5], d),), {}),
    "igammac": lambda d: (lambda x: tt.igammac(_fixed([0.5, 3.0], d), x), (_v([0.4, 2.5], d),), {}),
})

# Second derivatives whose emulated-cuda gradgradcheck costs 3-5 s (dozens of launches of long
# kernels): checked in float64 on cpu only (tests/test_op_gradients.py); their backward rules are
# the same tritensor ops on both devices.
CPU_GRADGRAD = ("polygamma", "special_i1", "special_i1e", "special_zeta", "igamma", "igammac",
                "special_xlog1py", "special_log_ndtr")
for _rec in RECORDS:
    if _rec.name in CPU_GRADGRAD:
        _rec.emulated_gradgradcheck = False
