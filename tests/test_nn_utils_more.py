"""tt.nn.utils beyond clipping (issue 25 item 3): stateless calls (tt.func.functional_call),
fusion, memory-format conversion, skip_init, pruning. Oracles: torch-recorded texts and values,
hand-computed values, identities."""
from __future__ import annotations

import warnings

import pytest

import tritensor as tt
from tritensor.func import functional_call


# ------------------------------------------------------------------ functional_call
class _Tied(tt.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = tt.nn.Parameter(tt.ones(2))
        self.b = self.a
        self.register_buffer("cnt", tt.zeros(()))

    def forward(self, x):
        self.cnt = self.cnt + 1
        return x * self.a + self.b


def test_functional_call_replaces_for_one_call_and_gradients_reach_the_given_tensors():
    tt.manual_seed(0)
    lin = tt.nn.Linear(3, 2)
    w = tt.randn(2, 3).requires_grad_()
    b = tt.tensor([1.0, -1.0])
    x = tt.randn(4, 3)
    out = functional_call(lin, {"weight": w, "bias": b}, (x,))
    tt.testing.assert_close(out, x @ w.detach().T + b)
    assert lin.weight is not w and isinstance(lin.weight, tt.nn.Parameter)   # restored
    out.sum().backward()
    tt.testing.assert_close(w.grad, x.sum(0).expand(2, 3))
    assert lin.weight.grad is None
    # a bare argument is one positional argument; kwargs are passed on
    tt.testing.assert_close(functional_call(lin, {"bias": b}, x), lin(x) - lin.bias.detach() + b)
    # a sequence of dicts is merged
    tt.testing.assert_close(functional_call(lin, ({"weight": w}, {"bias": b}), (x,), {}), out)


def test_functional_call_tied_weights_and_in_place_state_as_torch():
    t = _Tied()
    one = tt.ones(2)
    # recorded from torch 2.13: tied a/b both take the given value unless tie_weights=False
    assert functional_call(t, {"a": tt.zeros(2)}, one).tolist() == [0.0, 0.0]
    assert functional_call(t, {"a": tt.zeros(2)}, one, tie_weights=False).tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match=r"^functional_call got multiple values for keys \['a', 'b'\], which "
                                         r"are tied. Consider using tie_weights=False$"):
        functional_call(t, {"a": tt.zeros(2), "b": tt.ones(2)}, one)
    before = t.cnt.item()
    d = {"cnt": tt.zeros(())}
    functional_call(t, d, one)
    assert d["cnt"].item() == 1.0 and t.cnt.item() == before     # the update lands in the dict


def test_functional_call_errors_word_for_word():
    lin = tt.nn.Linear(2, 2)
    x = tt.ones(1, 2)
    with pytest.raises(RuntimeError) as e:
        functional_call(lin, {"weight": tt.ones(2, 2), "foo": tt.ones(1)}, (x,), strict=True)
    assert str(e.value) == "Error(s) in reparametrizing for Linear:\n\tUnexpected key(s): 'foo'.\n\tMissing key(s): 'bias'."
    with pytest.raises(ValueError, match=r"^\['weight'\] appeared in multiple dictionaries; behavior of "
                                         r"functional call is ambiguous$"):
        functional_call(lin, ({"weight": tt.ones(2, 2)}, {"weight": tt.ones(2, 2)}), (x,))
    with pytest.raises(ValueError, match=r"^Expected parameter_and_buffer_dicts to be a dict, or a list/tuple "
                                         r"of dicts, but got <class 'int'>$"):
        functional_call(lin, 3, (x,))
    assert lin.weight.shape == (2, 2) and "foo" not in lin.__dict__


def test_stateless_functional_call_is_deprecated_as_torch():
    lin = tt.nn.Linear(2, 2)
    with pytest.warns(FutureWarning, match=r"^`torch.nn.utils.stateless.functional_call` is deprecated as of "
                                           r"PyTorch 2.0 and will be removed in a future version of PyTorch. "
                                           r"Please use `torch.func.functional_call` instead which is a drop-in "
                                           r"replacement.$"):
        out = tt.nn.utils.stateless.functional_call(lin, {"bias": tt.zeros(2)}, tt.ones(1, 2))
    tt.testing.assert_close(out, lin.weight.detach().sum(1).reshape(1, 2))
