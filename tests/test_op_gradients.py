"""Every differentiable op in the table: gradcheck and gradgradcheck in float64, cpu and cuda.

The cases are the ``grad_case`` of the op records in tests/opinfo.py. Adding an op with a
backward rule to the table without a case there fails
``test_every_differentiable_op_has_a_gradient_case``: first and second derivatives are part of
an op's specification.
"""
import numpy as np
import pytest

import tritensor as tt
from opinfo import OPS, RECORDS
from tritensor.autograd import gradcheck, gradgradcheck
from tritensor.ops.table import TABLE

GRAD = sorted(r.name for r in RECORDS if r.grad_case is not None)
GRADGRAD = sorted(r.name for r in RECORDS if r.grad_case is not None and r.gradgradcheck)


def _raises_torch_not_implemented(torch_name):
    return pytest.raises(NotImplementedError, match=f"^the derivative for '{torch_name}' is not implemented.$")


def test_every_differentiable_op_has_a_gradient_case():
    differentiable = {name for name, entry in TABLE.items() if entry.backward is not None}
    assert differentiable <= set(GRAD), f"no gradient case for {sorted(differentiable - set(GRAD))}"


@pytest.mark.parametrize("name", GRAD)
def test_gradcheck(name, device):
    info = OPS[name]
    fn, inputs, kwargs = info.grad_case(device)
    if info.no_derivative:
        with _raises_torch_not_implemented(info.no_derivative):
            gradcheck(fn, inputs, **kwargs)
        return
    assert gradcheck(fn, inputs, **kwargs)


@pytest.mark.parametrize("name", GRADGRAD)
def test_gradgradcheck(name, device):
    info = OPS[name]
    if not info.emulated_gradgradcheck and device != "cpu" and tt.cuda.is_emulated():
        pytest.skip("second derivative checked on cpu: minutes of interpreted launches (opinfo's "
                    "emulated_gradgradcheck)")
    fn, inputs, kwargs = info.grad_case(device)
    if info.no_second_derivative:
        with _raises_torch_not_implemented(info.no_second_derivative):
            gradgradcheck(fn, inputs, **kwargs)
        return
    assert gradgradcheck(fn, inputs, **kwargs)


def _randn(shape):
    return tt.tensor(np.random.default_rng(1234).standard_normal(shape), dtype=tt.float64, requires_grad=True)


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

    x = _randn((3,))
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        gradcheck(Wrong.apply, (x,))
