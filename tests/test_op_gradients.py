"""Every differentiable op in the table: gradcheck and gradgradcheck in float64, cpu and cuda.

Adding an op with a backward rule to the table without a case here fails
``test_every_differentiable_op_has_a_gradient_case``: first and second derivatives are part of
an op's specification.
"""
import numpy as np
import pytest

import tritensor as tt
from tritensor.autograd import gradcheck, gradgradcheck
from tritensor.ops import TABLE
from tritensor.ops import elementwise as ew
from tritensor.ops import pdist as pdist_ops
from tritensor.ops import nn as nn_ops
from tritensor.ops import reduce as reduce_ops
from tritensor.ops import views

RNG = np.random.default_rng(1234)


def _t(values, device):
    return tt.tensor(np.asarray(values, dtype=np.float64), device=device, requires_grad=True)


def _randn(shape, device, away_from=None, positive=False):
    v = RNG.standard_normal(shape)
    if positive:
        v = np.abs(v) + 0.5
    if away_from is not None:
        v = np.where(np.abs(v - away_from) < 0.2, v + 0.5, v)
    return _t(v, device)


def _other(device):
    return "cpu" if device == "cuda" else "cuda"


# name -> function(device) returning (fn, inputs, gradcheck kwargs)
CASES = {
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
    "tanh_backward": lambda d: (ew.tanh_backward, (_randn((2, 3), d), _randn((2, 3), d)), {}),
    "relu_backward": lambda d: (ew.relu_backward, (_randn((2, 3), d), _randn((3,), d, away_from=0)), {}),
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
    "slice_backward": lambda d: (lambda g: views.dispatch(views.SLICE_BACKWARD, g, input_shape=(3, 5),
                                                          index=(slice(1, None), slice(None, None, 2))),
                                 (_randn((2, 3), d),), {}),
    "clone": lambda d: (lambda x: x.clone(), (_randn((2, 3), d),), {}),
    # float64 -> float32 -> float64 is exact for these values and this eps
    "to_copy": lambda d: (lambda x: x.to(tt.float32).to(tt.float64),
                          (_t(RNG.integers(-8, 8, (2, 3)) / 16, d),), {"eps": 2 ** -10, "atol": 1e-7}),
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
    "softmax_backward": lambda d: (lambda g, x: reduce_ops.softmax_backward(g, x.softmax(1), 1),
                                   (_randn((3, 4), d), _randn((3, 4), d)), {}),
    "log_softmax_backward": lambda d: (lambda g, x: reduce_ops.log_softmax_backward(g, x.log_softmax(0), 0),
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
    "as_strided_backward": lambda d: (lambda g: views.restride(g, ((2, 2), (1, 2), 1), ((2, 4), (4, 1), 0)),
                                      (_randn((2, 2), d),), {}),
    "as_strided_scatter": lambda d: (lambda x, s: views.as_strided_scatter(x, s, ((2, 4), (4, 1), 0),
                                                                           ((2,), (4,), 1)),
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
    "erf_backward": lambda d: (ew.erf_backward, (_randn((2, 2), d), _randn((2,), d)), {}),
    "sigmoid_backward": lambda d: (ew.sigmoid_backward, (_randn((3,), d), _randn((3,), d)), {}),
    "silu": lambda d: (tt.silu, (_randn((3,), d),), {}),
    "silu_backward": lambda d: (ew.silu_backward, (_randn((2, 2), d), _randn((2, 1), d)), {}),
    # gelu's second derivative is gelu_backward's backward: both forms are checked here ...
    "gelu": lambda d: (lambda x: tt.gelu(x) + tt.gelu(x, approximate="tanh"), (_randn((2,), d),), {}),
    # ... and the third derivative (composite ops) once
    "gelu_backward": lambda d: (ew.gelu_backward, (_randn((2,), d), _randn((2,), d)), {}),
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
    "cross_entropy": lambda d: (lambda x: nn_ops.cross_entropy_parts(x, tt.tensor([1, -100], device=d), None, -100),
                                (_randn((2, 2), d),), {}),
    "cross_entropy_backward": lambda d: (lambda g, x: nn_ops.cross_entropy_backward(
        g, x, tt.tensor([1], device=d), tt.tensor([0.5, 2.0], dtype=tt.float64, device=d), 1, -100),
        (_randn((2, 1), d), _randn((1, 2), d)), {}),
}


# pairwise distances (ops/pdist.py). torch has no derivative of _pdist_backward / _cdist_backward:
# their gradcheck, and pdist's gradgradcheck, must raise torch's NotImplementedError instead.
# cdist's mm path (p = 2) is a composite in torch and here: differentiable twice.
CASES.update({
    "pdist": lambda d: (lambda x: tt.pdist(x, 1.5) + tt.pdist(x), (_randn((3, 2), d),), {}),
    "pdist_backward": lambda d: (lambda g, x: pdist_ops.pdist_backward(g, x, tt.pdist(x.detach()), 2),
                                 (_randn((3,), d), _randn((3, 2), d)), {}),
    "cdist": lambda d: (lambda x, y: tt.cdist(x, y, compute_mode="use_mm_for_euclid_dist"),
                        (_randn((2, 1), d), _randn((1, 1), d)), {}),
    "cdist_backward": lambda d: (lambda g, x, y: pdist_ops.cdist_backward(g, x, y, tt.cdist(x, y, 1.5).detach(), 1.5),
                                 (_randn((2, 1), d), _randn((2, 1), d), _randn((1, 1), d)), {}),
})
# norm(p='nuc'): its gradient U V^T comes from NumPy's SVD, which tritensor does not differentiate
# again (torch does): the second derivative raises instead of being wrong
CASES.update({
    "nuclear_norm": lambda d: (lambda x: x.norm("nuc", dim=(2, 0)), (_randn((2, 2, 3), d),), {}),
    "nuclear_norm_backward": lambda d: (lambda x: reduce_ops.dispatch(reduce_ops.POLAR, x, dims=(0, 1)),
                                        (_randn((2, 3), d),), {}),
})
NO_DERIVATIVE = {"pdist_backward": "_pdist_backward", "cdist_backward": "_cdist_backward",
                 "nuclear_norm_backward": "nuclear_norm_backward"}
NO_SECOND_DERIVATIVE = {"pdist": "_pdist_backward", "nuclear_norm": "nuclear_norm_backward", **NO_DERIVATIVE}


def _raises_torch_not_implemented(torch_name):
    return pytest.raises(NotImplementedError, match=f"^the derivative for '{torch_name}' is not implemented.$")


def test_every_differentiable_op_has_a_gradient_case():
    differentiable = {name for name, entry in TABLE.items() if entry.backward is not None}
    assert differentiable <= set(CASES), f"no gradient case for {sorted(differentiable - set(CASES))}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(name, device):
    fn, inputs, kwargs = CASES[name](device)
    if name in NO_DERIVATIVE:
        with _raises_torch_not_implemented(NO_DERIVATIVE[name]):
            gradcheck(fn, inputs, **kwargs)
        return
    assert gradcheck(fn, inputs, **kwargs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradgradcheck(name, device):
    fn, inputs, kwargs = CASES[name](device)
    if name in NO_SECOND_DERIVATIVE:
        with _raises_torch_not_implemented(NO_SECOND_DERIVATIVE[name]):
            gradgradcheck(fn, inputs, **kwargs)
        return
    assert gradgradcheck(fn, inputs, **kwargs)


def test_gradcheck_catches_a_wrong_rule():
    class Wrong(tt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x          # should be 2 * g * x

    x = _randn((3,), "cpu")
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        gradcheck(Wrong.apply, (x,))
