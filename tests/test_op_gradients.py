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
}


def test_every_differentiable_op_has_a_gradient_case():
    differentiable = {name for name, entry in TABLE.items() if entry.backward is not None}
    assert differentiable <= set(CASES), f"no gradient case for {sorted(differentiable - set(CASES))}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(name, device):
    fn, inputs, kwargs = CASES[name](device)
    assert gradcheck(fn, inputs, **kwargs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradgradcheck(name, device):
    fn, inputs, kwargs = CASES[name](device)
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
