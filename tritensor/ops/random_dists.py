"""The samplers and gradients torch.distributions stands on: ``tt._standard_gamma`` (Gamma(alpha, 1)
draws: Marsaglia and Tsang's rejection method, alpha < 1 boosted), ``tt._sample_dirichlet``
(normalised gamma draws), ``tt.poisson``, ``tt.binomial``, and the implicit reparameterisation
gradients ``tt._standard_gamma_grad`` (d sample / d alpha, Jankowiak & Obermeyer's approximation)
and ``tt._dirichlet_grad``, with torch's names, dtypes, errors and autograd nodes.

The draws come from the input's device's generator through the backend's ``sample`` (the cpu
device: NumPy's Generator, whose standard_gamma is Marsaglia-Tsang too; cuda: the Philox
rejection kernels of kernels/random_sample.py); each is reproducible with its seed. A sample's
gradient is torch's: StandardGammaBackward0 is grad * _standard_gamma_grad(alpha, sample) (the
reparameterised gradient of the CDF inversion), PoissonBackward0 zero, binomial and
_sample_dirichlet torch's NotImplemented node. The two gradient functions are elementwise table
entries (FNs in kernels/special.py, references in backends/numpy_special.py); their own
derivative is not implemented, as torch's.
"""
from __future__ import annotations

from .. import _dual
from ..autograd import forward_ad as _forward_ad
from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..autograd.graph import Node, gradient_edge, node_class
from ..backends.base import backend_for
from ..tensor import Tensor
from . import elementwise as _ew
from .shape_ops import broadcast_tensors
from ._checks import check_tensor
from ._linalg import needs_grad
from .dispatch import dispatch
from .dispatch import empty as _empty
from .elementwise import _device_of, _elementwise, _not_implemented, mul
from .factorizations import not_implemented_node
from .generators import generator_of
from .surface import declare

_FLOATS = (_dt.float32, _dt.float64)


def _no_derivative(name):
    def backward(ctx, g):
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
    return backward


def _supports(dtype, device, halves=True):
    """Whether torch's kernel of the device has a case for ``dtype``: float32/float64, and the
    16-bit floats where the device's backend draws them (cuda; ``halves``: the op has them there)."""
    if dtype in _FLOATS:
        return True
    return halves and dtype.name in backend_for(device).sampler_dtypes


def _same_dtype_rule(kernel, halves=True):
    """torch's TensorIterator with a common dtype check: every operand in the first one's dtype
    ("Found dtype Double but expected Float"), the dtypes of torch's kernel, shapes broadcast."""
    def rule(first, *others, **_):
        for t in others:
            if t.dtype is not first.dtype:
                raise RuntimeError(f"Found dtype {_dt.type_name(t.dtype)} but expected {_dt.type_name(first.dtype)}")
        if not _supports(first.dtype, first.device, halves):
            raise _not_implemented(kernel, first.dtype, _device_of(first))
        return _ew.same_type_rule(first, *others)
    return rule


STANDARD_GAMMA_GRAD = _elementwise("_standard_gamma_grad", ("alpha", "x"), _same_dtype_rule("_standard_gamma_grad"),
                                   _no_derivative("_standard_gamma_grad"), fn="standard_gamma_grad",
                                   grad_name="StandardGammaGradBackward0")
DIRICHLET_GRAD = _elementwise("_dirichlet_grad", ("x", "alpha", "total"), _same_dtype_rule("_dirichlet_grad", False),
                              _no_derivative("_dirichlet_grad"), fn="dirichlet_grad",
                              grad_name="DirichletGradBackward0")


def _standard_gamma_grad(input, output):
    """torch._standard_gamma_grad(alpha, x): d x / d alpha for a sample x of Gamma(alpha, 1),
    -(d/d alpha CDF(x; alpha)) / pdf(x; alpha), by torch's approximations (a Taylor series for
    x < 0.8, Rice's saddle point expansion for alpha > 8, a rational fit otherwise)."""
    check_tensor("_standard_gamma_grad", input)
    check_tensor("_standard_gamma_grad", output, "output", 2)
    return dispatch(STANDARD_GAMMA_GRAD, input, output)


def _dirichlet_grad(x, alpha, total):
    """torch._dirichlet_grad(x, alpha, total): d x / d alpha of x ~ Beta(alpha, total - alpha)
    over (1 - x), from which Dirichlet.rsample's gradient is assembled."""
    check_tensor("_dirichlet_grad", x, "x", 1)
    check_tensor("_dirichlet_grad", alpha, "alpha", 2)
    check_tensor("_dirichlet_grad", total, "total", 3)
    return dispatch(DIRICHLET_GRAD, x, alpha, total)


# --------------------------------------------------------------------------- the samplers
def _draw(kind, params, generator, torch_kernel):
    """A tensor of params[0]'s shape and dtype drawn by the backend from the device's generator."""
    first = params[0]
    if not _supports(first.dtype, first.device):
        raise _not_implemented(torch_kernel, first.dtype, first.device)
    out = _empty(tuple(first.shape), first.dtype, first.device)
    if out.numel():
        gen = generator_of(first.device, generator)
        with no_grad():
            backend_for(first.device).sample(out, kind, [p.detach().contiguous() for p in params], gen)
    return out


class _SampleNode(Node):
    """The node of a sample: ``rule(grad)`` gives the parameter's gradient."""

    def __init__(self, rule, edge):
        super().__init__()
        self._rule = rule
        self.next_functions = (edge,)

    def apply(self, grads):
        return (self._rule(grads[0]),)


def _attach(name, rule, input, out):
    if _dual.ACTIVE[0]:        # forward AD: the rule is elementwise (a diagonal Jacobian), so fed the
        _forward_ad.elementwise_tangent(rule, input, out)      # tangent it gives the output's
    if needs_grad(input):
        node = _SampleNode(rule, gradient_edge(input))
        node.__class__ = node_class(name, _SampleNode)
        out._grad_fn, out._output_nr = node, 0
    return out


def _standard_gamma(input, generator=None):
    """torch._standard_gamma(alpha): Gamma(alpha, 1) draws (float32/float64), differentiable in
    alpha through the implicit reparameterisation gradient. As torch's, a draw is at least the
    dtype's smallest normal number (alpha <= 0 and NaN give that too); alpha = inf gives inf."""
    check_tensor("_standard_gamma", input)
    if _dual.ACTIVE[0] and _forward_ad.tangent_of(input) is not None:     # as torch 2.13: no rule
        raise NotImplementedError(_forward_ad.NOT_IMPLEMENTED.format("_standard_gamma"))
    out = _draw("gamma", [input], generator, "gamma")
    sample = out.detach()      # (the node keeps the draw, not its own output: no reference cycle)
    return _attach("StandardGammaBackward0", lambda g: mul(g, _standard_gamma_grad(input, sample)), input, out)


def _sample_dirichlet(input, generator=None):
    """torch._sample_dirichlet(alpha): gamma draws normalised along the last dimension. As torch's
    cpu kernel: the gammas drawn and normalised in float64 (small concentrations would underflow
    float32), the result clamped to [the dtype's smallest normal, the float below 1]."""
    check_tensor("_sample_dirichlet", input)
    if not _supports(input.dtype, input.device):
        raise NotImplementedError(f"\"dirichlet\" not implemented for '{_dt.type_name(input.dtype)}'")
    with no_grad():
        gammas = _draw("gamma", [input.detach().to(_dt.float64)], generator, "gamma")
        total = gammas.sum(-1, keepdim=True) if gammas.dim() else gammas
        out = _ew.div(gammas, total).to(input.dtype)
        info = _dt.finfo(input.dtype)
        out = out.clamp(min=float(info.tiny), max=1.0 - float(info.eps) / 2)
    not_implemented_node("aten::_sample_dirichlet", (input,), (out,))
    return out


def poisson(input, generator=None):
    """torch.poisson(rates): Poisson draws in the rates' dtype; the gradient is zero
    (PoissonBackward0). A negative or NaN rate is torch's RuntimeError."""
    check_tensor("poisson", input)
    if input.dtype not in _FLOATS + (_dt.float16, _dt.bfloat16):
        raise _not_implemented("poisson", input.dtype, input.device)
    work = input.detach() if input.dtype in _FLOATS else input.detach().float()
    if work.numel() and not bool(_ew.ge(work, 0).all()):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    out = _draw("poisson", [work], generator, "poisson")
    if out.dtype is not input.dtype:
        out = out.to(input.dtype)
    return _attach("PoissonBackward0", lambda g: _ew.mul(g, 0.0), input, out)


def binomial(count, prob, generator=None):
    """torch.binomial(count, prob): Binomial(count, prob) draws (float counts; count <= 0 or
    prob <= 0 gives 0, prob >= 1 gives count, NaN prob NaN); no derivative, as torch."""
    check_tensor("binomial", count, "count", 1)
    check_tensor("binomial", prob, "prob", 2)
    if not count.dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: {_dt.type_name(count.dtype)}")
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {_dt.type_name(prob.dtype)} but expected {_dt.type_name(count.dtype)}")
    c, p = broadcast_tensors(count.detach(), prob.detach())
    out = _draw("binomial", [c, p], generator, "binomial")
    not_implemented_node("aten::binomial", (count, prob), (out,))
    return out


declare("_standard_gamma", _standard_gamma, method=False)
declare("_standard_gamma_grad", _standard_gamma_grad, method=False)
declare("_sample_dirichlet", _sample_dirichlet, method=False)
declare("_dirichlet_grad", _dirichlet_grad, method=False)
declare("poisson", poisson, method=False)
declare("binomial", binomial, method=False)
