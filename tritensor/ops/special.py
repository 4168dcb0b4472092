"""The special functions: lgamma, digamma, polygamma, mvlgamma, erfc, erfinv, i0, igamma/igammac
(tt.* and Tensor methods) and torch.special's own (tt.special: Bessel functions, orthogonal
polynomials, ndtr/ndtri/log_ndtr, zeta, entr, erfcx, xlog1py ...), with torch.special's aliases of
the ops above and of existing ones (expit, gammaln, psi, exp2, round, softmax ...).

Each primitive is one elementwise entry: its FN in kernels/special.py, its NumPy reference in
backends/numpy_special.py (the algorithms are torch's, aten/src/ATen/native/Math.h), its
backward written in tritensor ops (double backward works) with torch's node names
(derivatives.yaml): lgamma' = digamma, digamma' = polygamma(1), polygamma(n)' = polygamma(n + 1),
erfinv' = sqrt(pi)/2 exp(erfinv^2), i0' = i1 ... igamma, igammac and zeta have no derivative in
their first argument (torch's NotImplementedError when it is asked for); the Bessel functions and
orthogonal polynomials have none at all (torch marks their output non-differentiable: it never
requires grad). ndtr and mvlgamma are composites, as in torch.

dtypes as torch's: integers and bool compute in the default float type (igamma/igammac refuse
them); the functions torch has no 16-bit kernel for (erfcx, log_ndtr, ndtri, zeta, the Bessel
functions, the polynomials) raise its NotImplementedError for float16/bfloat16.
"""
from __future__ import annotations

import math

from .. import dtypes as _dt
from ..autograd.composite import named_composite
from ..autograd.graph import rename_node
from ..backends import numpy_ref
from ..backends import triton as tb
from ..backends.base import backend_for
from ..tensor import Tensor
from . import pointwise as _pw
from . import pointwise_math as _pm
from . import reduce as _reduce
from . import softmax as _softmax
from ._checks import check_tensor
from ._scalars import as_number
from .creation import arange
from ..autograd.grad_mode import is_grad_enabled
from .dispatch import _rebase_inplace, check_inplace, dispatch
from .elementwise import (
    _device_of, _elementwise, _needed, _not_implemented, abs, add, dispatch_inplace, div, eq,
    exp, float_rule, gt, le, log, mul, neg, reciprocal, same_type_rule, sigmoid, sub, where,
)
from .surface import declare, unary, write_out
from .table import DIAGONAL, op

_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_HALF_FLOATS = (_dt.float16, _dt.bfloat16)


# --------------------------------------------------------------------------- rules
def _float_kernels_only(name):
    """float_rule for the ops torch has only float32/float64 kernels for: its dispatch error
    ("bessel_j0_cpu" not implemented for 'Half') for 16-bit floats."""
    def rule(*args, **_):
        meta = float_rule(*args)
        if meta.dtype in _HALF_FLOATS:
            raise _not_implemented(name, meta.dtype, _device_of(*args))
        return meta
    return rule


def _floating_inputs_rule(name):
    """igamma / igammac: the promoted type must be floating (no int -> float promotion)."""
    def rule(a, x, **_):
        meta = same_type_rule(a, x)
        if not meta.dtype.is_floating_point:
            raise _not_implemented(name, meta.dtype, _device_of(a, x))
        return meta
    return rule


def _no_derivative(name):
    raise NotImplementedError(f"the derivative for '{name}' is not implemented.")


def _by_scalar_position(base):
    """torch's overload numbering: Tensor-Tensor 0, Scalar-Tensor 1, Tensor-Scalar 2."""
    def name(args, attrs):
        x, y = args
        return f"{base}{0 if isinstance(x, Tensor) and isinstance(y, Tensor) else (1 if isinstance(y, Tensor) else 2)}"
    return name


# --------------------------------------------------------------------------- gamma family
def _polygamma_launch(out, x, compute, n):
    if n == 0:
        tb.elementwise("digamma", out, [x], compute)
    elif n == 1:
        tb.elementwise("trigamma", out, [x], compute)
    else:                    # (-1)^(n+1) n! zeta(n + 1, x): n as a scalar operand
        tb.elementwise("polygamma", out, [x, float(n)], compute)


LGAMMA = _elementwise("lgamma", ("x",), float_rule, lambda ctx, g: mul(g, digamma(ctx.x)), saves=("x",))
DIGAMMA = _elementwise("digamma", ("x",), float_rule, lambda ctx, g: mul(g, _polygamma(1, ctx.x)),
                       saves=("x",))
POLYGAMMA = op("polygamma", ("x",), jvp=DIAGONAL, rule=float_rule, reference=numpy_ref.elementwise("polygamma"),
               kernel=_polygamma_launch, layout="iterator",
               backward=lambda ctx, g: mul(g, _polygamma(ctx.n + 1, ctx.x)), saves=("x",))


def _polygamma(n, x):
    return dispatch(POLYGAMMA, x, n=n)


def _check_polygamma_n(n):
    if isinstance(n, Tensor):          # torch's parser reads a 0-d integer tensor as an int
        n = n.item() if n.dim() == 0 and not n.dtype.is_floating_point and n.dtype is not _dt.bool_ else n
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return n


def polygamma(n, input):
    """torch.polygamma(n, input): the n-th derivative of digamma (n = 0: digamma itself)."""
    n = _check_polygamma_n(n)
    check_tensor("polygamma", input, "input", 2)
    return dispatch(POLYGAMMA, input, n=n)


def _polygamma_method(self, n):
    return polygamma(n, self)


def polygamma_(self, n):
    n = _check_polygamma_n(n)
    return dispatch_inplace(POLYGAMMA, self, n=n)


lgamma, lgamma_ = unary(LGAMMA)
digamma, digamma_ = unary(DIGAMMA)
declare("polygamma", polygamma, method=_polygamma_method, inplace=polygamma_, out="cast")


def _mvlgamma_check(input, p):
    if input.dtype is _dt.bool_:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if not isinstance(p, int) or isinstance(p, bool):
        raise TypeError(f"mvlgamma(): argument 'p' (position 2) must be int, not {type(p).__name__}")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")


def _mvlgamma_value(input, p):
    """torch's mvlgamma: sum_j lgamma(x - j/2), j = 0 .. p-1, plus p(p-1)/4 log(pi)."""
    dtype = input.dtype if input.dtype.is_floating_point else _dt.get_default_dtype()
    offsets = arange(-p * 0.5 + 0.5, 0.5, 0.5, dtype=dtype, device=input.device)
    args = add(input.unsqueeze(-1), offsets)
    return add(_reduce.sum(lgamma(args), -1), p * (p - 1) * math.log(math.pi) * 0.25)


def mvlgamma(input, p, *, out=None):
    """torch.mvlgamma(input, p): the multivariate log-gamma function (MvlgammaBackward0; its
    gradient sum_j digamma(x - j/2) is the composite's own)."""
    check_tensor("mvlgamma", input)
    _mvlgamma_check(input, p)
    result = named_composite("MvlgammaBackward0", _mvlgamma_value, input, p)
    if out is None:
        return result
    return write_out("mvlgamma", result, out, _mvlgamma_out_rule(input))


def _mvlgamma_out_rule(input):
    """torch's mvlgamma_out check (its message names self's dtype as the result type)."""
    def check(name, result, out):
        if not _dt.can_cast(result.dtype, out.dtype):
            raise RuntimeError(f"mvlgamma: result type {_dt.type_name(input.dtype)} can't be cast to the "
                               f"desired output type {_dt.type_name(result.dtype)}")
    return check


def _mvlgamma_method(self, p):
    return mvlgamma(self, p)


def mvlgamma_(self, p):
    """In place, as torch's mvlgamma_out(self, p, self): a recorded call gives self the
    composite's node (MvlgammaBackward0), computed from a snapshot of self's old value."""
    check_tensor("mvlgamma_", self)
    _mvlgamma_check(self, p)
    dtype = self.dtype if self.dtype.is_floating_point else _dt.get_default_dtype()
    if not _dt.can_cast(dtype, self.dtype):
        raise RuntimeError(f"mvlgamma: result type {_dt.type_name(self.dtype)} can't be cast to the "
                           f"desired output type {_dt.type_name(dtype)}")
    if is_grad_enabled() and self.requires_grad:
        check_inplace(self)
        _rebase_inplace(self, lambda old: mvlgamma(old, p), needs_old_self=True)
        return self
    return self.copy_(mvlgamma(self, p))


mvlgamma._out_builtin = True
declare("mvlgamma", mvlgamma, method=_mvlgamma_method, inplace=mvlgamma_, out="cast")


# --------------------------------------------------------------------------- error functions
ERFC = _elementwise("erfc", ("x",), float_rule,
                    lambda ctx, g: mul(g, mul(exp(neg(mul(ctx.x, ctx.x))), -2.0 / _SQRT_PI)), saves=("x",))
ERFINV = _elementwise("erfinv", ("x",), float_rule,
                      lambda ctx, g: mul(g, mul(exp(mul(ctx.out, ctx.out)), 0.5 * _SQRT_PI)), saves=("out",))
erfc, erfc_ = unary(ERFC, inplace_function=True)
erfinv, erfinv_ = unary(ERFINV)

SPECIAL_ERFCX = _elementwise(
    "special_erfcx", ("x",), _float_kernels_only("erfcx"),
    # torch's order, (2 x) out - 2 / sqrt(pi): 2 x overflows at the largest x (the gradient is inf there)
    lambda ctx, g: mul(sub(mul(mul(ctx.x, 2.0), ctx.out), 2.0 / _SQRT_PI), g), saves=("x", "out"), fn="erfcx")
SPECIAL_NDTRI = _elementwise(
    "special_ndtri", ("x",), _float_kernels_only("ndtri"),
    lambda ctx, g: mul(g, mul(exp(mul(mul(ctx.out, ctx.out), 0.5)), _SQRT_2PI)), saves=("out",), fn="ndtri")
SPECIAL_LOG_NDTR = _elementwise(
    "special_log_ndtr", ("x",), _float_kernels_only("log_ndtr"),
    lambda ctx, g: mul(mul(g, 1.0 / _SQRT_2PI), exp(neg(add(ctx.out, mul(mul(ctx.x, ctx.x), 0.5))))),
    saves=("x", "out"), fn="log_ndtr")


def ndtr(input):
    """torch.special.ndtr: the standard normal CDF, computed as torch does,
    (1 + erf(x / sqrt(2))) / 2 (a composite: its node is MulBackward1)."""
    check_tensor("special_ndtr", input)
    return rename_node(mul(add(_pw.erf(mul(input, math.sqrt(0.5))), 1), 0.5), "MulBackward1")


# --------------------------------------------------------------------------- modified Bessel i0 ... i1e
def _i1_gradient(x, result, scaled):
    """torch's i1_backward / i1e_backward: i0(x) - i1(x)/x (i0e(x) - i1e(x) (sgn x + 1/x)), 1/2
    where |x| <= eps (the limit; the formula would be 0/0). torch's kernel has no 16-bit case."""
    if x.dtype in (_dt.float16, _dt.bfloat16):
        raise NotImplementedError(f'"{"i1e" if scaled else "i1"}_backward" not implemented for '
                                  f"'{_dt.type_name(x.dtype)}'")
    eps = _dt.finfo(x.dtype).eps
    not_tiny = gt(abs(x), eps)
    safe = where(not_tiny, x, eps)
    inv = reciprocal(safe)
    if scaled:
        gradx = sub(special_i0e(safe), mul(result, add(_pw.sign(safe), inv)))
    else:
        gradx = sub(i0(safe), mul(result, inv))
    return where(not_tiny, gradx, 0.5)


I0 = _elementwise("i0", ("x",), float_rule, lambda ctx, g: mul(g, special_i1(ctx.x)), saves=("x",))
SPECIAL_I0E = _elementwise(
    "special_i0e", ("x",), float_rule,
    lambda ctx, g: mul(g, sub(special_i1e(ctx.x), mul(_pw.sign(ctx.x), ctx.out))), saves=("x", "out"), fn="i0e",
    grad_name="SpecialI0EBackward0")
SPECIAL_I1 = _elementwise(
    "special_i1", ("x",), float_rule, lambda ctx, g: mul(g, _i1_gradient(ctx.x, ctx.out, False)),
    saves=("x", "out"), fn="i1")
SPECIAL_I1E = _elementwise(
    "special_i1e", ("x",), float_rule, lambda ctx, g: mul(g, _i1_gradient(ctx.x, ctx.out, True)),
    saves=("x", "out"), fn="i1e", grad_name="SpecialI1EBackward0")
i0, i0_ = unary(I0, inplace_function=True)


def special_i0e(x):
    return dispatch(SPECIAL_I0E, x)


def special_i1(x):
    return dispatch(SPECIAL_I1, x)


def special_i1e(x):
    return dispatch(SPECIAL_I1E, x)


# --------------------------------------------------------------------------- entr, xlog1py, zeta, igamma
SPECIAL_ENTR = _elementwise("special_entr", ("x",), float_rule,
                            lambda ctx, g: mul(g, neg(add(log(ctx.x), 1))), saves=("x",), fn="entr")


def _xlog1py_backward(ctx, g):
    x, y = ctx.x, ctx.y
    def dx():      # torch: xlog1py(grad, other), 0 where self == 0 and other <= -1
        gx = dispatch(SPECIAL_XLOG1PY, g, y)
        return where(_pw.logical_and(eq(x, 0), le(y, -1)), 0.0, gx)
    return _needed(ctx, dx, lambda: div(mul(g, x), add(y, 1)))


SPECIAL_XLOG1PY = _elementwise("special_xlog1py", ("x", "y"), float_rule, _xlog1py_backward, saves=("x", "y"),
                               fn="xlog1py", grad_name=_by_scalar_position("SpecialXlog1PyBackward"))


def _zeta_backward(ctx, g):
    x, q = ctx.x, ctx.q
    return _needed(ctx, lambda: _no_derivative("zeta"),     # torch: grad * -self * zeta(self + 1, other)
                   lambda: mul(mul(g, mul(x, -1) if isinstance(x, Tensor) else -x),
                               special_zeta(add(x, 1) if isinstance(x, Tensor) else x + 1, q)))


SPECIAL_ZETA = _elementwise("special_zeta", ("x", "q"), _float_kernels_only("zeta"), _zeta_backward,
                            saves=("x", "q"), fn="zeta", grad_name=_by_scalar_position("SpecialZetaBackward"))


def _igamma_backward(name, sign):
    def backward(ctx, g):
        a, x = ctx.a, ctx.x
        # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a)
        return _needed(ctx, lambda: _no_derivative(f"{name}: input"),
                       lambda: mul(mul(g, sign), exp(sub(sub(mul(sub(a, 1), log(x)), x), lgamma(a)))))
    return backward


IGAMMA = _elementwise("igamma", ("a", "x"), _floating_inputs_rule("igamma"), _igamma_backward("igamma", 1.0),
                      saves=("a", "x"))
IGAMMAC = _elementwise("igammac", ("a", "x"), _floating_inputs_rule("igammac"),
                       _igamma_backward("igammac", -1.0), saves=("a", "x"))


def _tensor_pair(name, input, other):
    check_tensor(name, input)
    check_tensor(name, other, "other", 2)


def igamma(input, other):
    _tensor_pair("igamma", input, other)
    return dispatch(IGAMMA, input, other)


def igammac(input, other):
    _tensor_pair("igammac", input, other)
    return dispatch(IGAMMAC, input, other)


def igamma_(self, other):
    _tensor_pair("igamma_", self, other)
    return dispatch_inplace(IGAMMA, self, other)


def igammac_(self, other):
    _tensor_pair("igammac_", self, other)
    return dispatch_inplace(IGAMMAC, self, other)


declare("igamma", igamma, inplace=igamma_, out="cast")
declare("igammac", igammac, inplace=igammac_, out="cast")


def special_zeta(input, other):
    return _scalar_or_tensor("special_zeta", SPECIAL_ZETA, input, other)


def special_xlog1py(input, other):
    return _scalar_or_tensor("special_xlog1py", SPECIAL_XLOG1PY, input, other)


def _scalar_or_tensor(name, entry, input, other, names=("input", "other", "self")):
    """torch's (Tensor, Tensor), (Number, Tensor) and (Tensor, Number) overloads, with its
    parser's TypeError for anything else."""
    input, other = as_number(input), as_number(other)
    numbers = (bool, int, float)
    if not (isinstance(input, Tensor) and isinstance(other, (Tensor,) + numbers)
            or isinstance(input, numbers) and isinstance(other, Tensor)):
        a, b, s = names
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got ({type(input).__name__}, "
            f"{type(other).__name__}), but expected one of:\n * (Tensor {a}, Tensor {b}, *, Tensor out = None)\n"
            f" * (Number {s}, Tensor {b}, *, Tensor out = None)\n * (Tensor {a}, Number {b}, *, Tensor out = None)\n")
    return dispatch(entry, input, other)


# --------------------------------------------------------------------------- no derivative
def _plain(name, fn=None):
    """A torch.special function with no derivative: its output never requires grad."""
    return _elementwise(f"special_{name}", ("x",), _float_kernels_only(fn or name), fn=fn or name)


SPECIAL_AIRY_AI = _plain("airy_ai")
SPECIAL_BESSEL_J0 = _plain("bessel_j0")
SPECIAL_BESSEL_J1 = _plain("bessel_j1")
SPECIAL_BESSEL_Y0 = _plain("bessel_y0")
SPECIAL_BESSEL_Y1 = _plain("bessel_y1")
SPECIAL_SPHERICAL_BESSEL_J0 = _plain("spherical_bessel_j0")
SPECIAL_MODIFIED_BESSEL_K0 = _plain("modified_bessel_k0")
SPECIAL_MODIFIED_BESSEL_K1 = _plain("modified_bessel_k1")
SPECIAL_SCALED_MODIFIED_BESSEL_K0 = _plain("scaled_modified_bessel_k0")
SPECIAL_SCALED_MODIFIED_BESSEL_K1 = _plain("scaled_modified_bessel_k1")
# the same Chebyshev series as i0 / i1 (torch's modified_bessel_i0/i1 kernels are copies of them)
SPECIAL_MODIFIED_BESSEL_I0 = _elementwise("special_modified_bessel_i0", ("x",),
                                          _float_kernels_only("modified_bessel_i0"), fn="i0")
SPECIAL_MODIFIED_BESSEL_I1 = _elementwise("special_modified_bessel_i1", ("x",),
                                          _float_kernels_only("modified_bessel_i1"), fn="i1")

POLYNOMIALS = ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
               "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
               "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p")
# P_n(x): the degree n is read as torch reads it (truncated to an integer; n < 0 gives 0)
POLYNOMIAL_ENTRIES = {name: _elementwise(f"special_{name}", ("x", "n"), _float_kernels_only(name), fn=name)
                      for name in POLYNOMIALS}


# --------------------------------------------------------------------------- tt.special
def _special_unary(entry, name):
    """torch.special.<name>(input, *, out=None) for a unary entry, with torch's own TypeError text."""
    torch_name = f"special_{name}"

    def fn(input, *, out=None):
        check_tensor(torch_name, input)
        if out is None:
            return dispatch(entry, input)
        return write_out(torch_name, dispatch(entry, input), out, "cast")
    fn.__name__ = fn.__qualname__ = name
    fn._out_builtin = True
    declare(f"special.{name}", fn, method=False, out="cast")
    return fn


special_erfcx = _special_unary(SPECIAL_ERFCX, "erfcx")
special_ndtri = _special_unary(SPECIAL_NDTRI, "ndtri")
special_log_ndtr = _special_unary(SPECIAL_LOG_NDTR, "log_ndtr")
_special_unary(SPECIAL_I0E, "i0e")
_special_unary(SPECIAL_I1, "i1")
_special_unary(SPECIAL_I1E, "i1e")
special_entr = _special_unary(SPECIAL_ENTR, "entr")
for _name in ("airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "spherical_bessel_j0",
              "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
              "scaled_modified_bessel_k0", "scaled_modified_bessel_k1"):
    _special_unary(globals()[f"SPECIAL_{_name.upper()}"], _name)


def _polynomial(name):
    entry = POLYNOMIAL_ENTRIES[name]

    def fn(input, n):
        return _scalar_or_tensor(f"special_{name}", entry, input, n, ("x", "n", "x"))
    fn.__name__ = fn.__qualname__ = name
    declare(f"special.{name}", fn, method=False, out="cast")
    return fn


for _name in POLYNOMIALS:
    _polynomial(_name)
declare("special.ndtr", ndtr, method=False, out="cast")
declare("special.zeta", special_zeta, method=False, out="cast")
declare("special.xlog1py", special_xlog1py, method=False, out="cast")


def _special_pair(name, entry):
    def fn(input, other):
        _tensor_pair(f"special_{name}", input, other)
        return dispatch(entry, input, other)
    fn.__name__ = fn.__qualname__ = name
    declare(f"special.{name}", fn, method=False, out="cast")
    return fn


_special_pair("gammainc", IGAMMA)
_special_pair("gammaincc", IGAMMAC)


def special_polygamma(n, input):
    return polygamma(n, input)


def special_multigammaln(input, p, *, out=None):
    return mvlgamma(input, p, out=out)


special_multigammaln._out_builtin = True


def special_round(input, *, decimals=0):
    """torch.special.round: torch.round(input, decimals=...) through its decimals overload, so
    the node is RoundBackward1 even for decimals=0 and integer inputs have no kernel."""
    check_tensor("special_round", input)
    if not input.dtype.is_floating_point:
        kernel = backend_for(input.device).torch_name("round_vml_cpu", "round_cuda")
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_dt.type_name(input.dtype)}\'')
    scale = _pw._round_decimals_scale(input, decimals)
    return dispatch(_pw.ROUND_DECIMALS, input, scale)


def special_softmax(input, dim, *, dtype=None):
    return _softmax.softmax(input, dim, dtype=dtype)


def special_log_softmax(input, dim, *, dtype=None):
    return _softmax.log_softmax(input, dim, dtype=dtype)


def special_logsumexp(input, dim, keepdim=False):
    return _reduce.logsumexp(input, dim, keepdim)


declare("special.polygamma", special_polygamma, method=False, out="cast")
declare("special.multigammaln", special_multigammaln, method=False, out="cast")
declare("special.round", special_round, method=False, out="cast")
declare("special.softmax", special_softmax, method=False)
declare("special.log_softmax", special_log_softmax, method=False)
declare("special.logsumexp", special_logsumexp, method=False, out="floating")
# torch.special's aliases of tt ops (the same functions)
for _alias, _fn in (("gammaln", lgamma), ("psi", digamma), ("digamma", digamma), ("erf", _pw.erf),
                    ("erfc", erfc), ("erfinv", erfinv), ("i0", i0), ("expit", sigmoid), ("exp2", _pw.exp2),
                    ("expm1", _pw.expm1), ("log1p", _pw.log1p), ("sinc", _pm.sinc)):
    declare(f"special.{_alias}", _fn, method=False, out="cast")
# logit and xlogy: hand-written functions (logit's eps, xlogy's Scalar overloads)
declare("special.logit", _pm.logit, method=False, out="cast")
declare("special.xlogy", _pm.xlogy, method=False, out="cast")
