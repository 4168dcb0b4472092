"""tt.jit.script (issue 26 items 1, 4, 7): the compiled subset, control flow that stays control
flow (unlike a trace), modules, calls, and torch's errors for what is outside the subset.
Graph listings are hand-checked against torch 2.13's for the same functions (value numbering
and the aten::Bool spelling differ; the structure is TorchScript's)."""
from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest

import tritensor as tt
from tritensor.jit import TracerWarning
from tritensor.jit._script import NotSupportedError, UnsupportedNodeError

from test_jit_trace import _iou_numpy, _strip, data_dependent, iou_loss


def loops(x, n: int):
    for i in range(n):
        x = x * 2
    while n > 0:
        n = n - 1
    return x, n


def test_script_keeps_the_data_dependent_branch_that_trace_bakes_in():
    scripted = tt.jit.script(data_dependent)
    assert _strip(scripted.graph) == (
        "graph(%x : Tensor,\n"
        "      %y : Tensor):\n"
        "  %0 : Tensor = aten::sum(%x)\n"
        "  %1 : int = prim::Constant[value=0]()\n"
        "  %2 : Tensor = aten::gt(%0, %1)\n"
        "  %3 : bool = aten::bool(%2)\n"
        "  %6 : Tensor = prim::If(%3)\n"
        "    block0():\n"
        "      %4 : Tensor = aten::mul(%x, %y)\n"
        "      -> (%4)\n"
        "    block1():\n"
        "      %5 : Tensor = aten::sub(%x, %y)\n"
        "      -> (%5)\n"
        "  return (%6)\n")
    assert f"{__file__}" not in str(scripted.graph) and "test_jit_trace.py:" in str(scripted.graph)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TracerWarning)        # script never warns
        y = tt.full((2,), 3.0)
        assert scripted(tt.ones(2), y).tolist() == [3.0, 3.0]
        assert scripted(-tt.ones(2), y).tolist() == [-4.0, -4.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TracerWarning)
        traced = tt.jit.trace(data_dependent, (tt.ones(2), y))
    assert traced(-tt.ones(2), y).tolist() == [-3.0, -3.0]        # the trace took the first branch
    assert "if " in scripted.code and "else:" in scripted.code


def test_loops_and_their_code():
    scripted = tt.jit.script(loops)
    x, n = scripted(tt.ones(2), 3)
    assert x.tolist() == [8.0, 8.0] and n == 0
    x, n = scripted(tt.ones(2), 0)
    assert x.tolist() == [1.0, 1.0] and n == 0
    kinds = [node.kind for node in scripted.graph.nodes]
    assert kinds.count("prim::Loop") == 2
    assert scripted.code == (
        "def loops(x: Tensor,\n    n: int) -> Tuple[Tensor, int]:\n"
        "  x_1 = x\n  for i in range(n):\n    _2 = x_1 * 2\n    x_1 = _2\n  x_2 = x_1\n"
        "  _4 = n > 0\n  n_1 = n\n  _cond__6 = _4\n  while _cond__6:\n    _8 = n_1 - 1\n    _10 = _8 > 0\n"
        "    _cond__6 = _10\n    n_1 = _8\n  n_2 = n_1\n  _11 = (x_2, n_2)\n  return _11\n")


def test_iou_loss_scripted_matches_the_formula_and_eager_gradients():
    scripted = tt.jit.script(iou_loss)
    rng = np.random.default_rng(3)
    p = rng.uniform(0.1, 2.0, (7, 4)).astype(np.float32)
    t = rng.uniform(0.1, 2.0, (7, 4)).astype(np.float32)
    np.testing.assert_allclose(scripted(tt.tensor(p), tt.tensor(t)).numpy(), _iou_numpy(p, t), rtol=1e-6)
    a, b = tt.tensor(p, requires_grad=True), tt.tensor(p, requires_grad=True)
    scripted(a, tt.tensor(t)).mean().backward()
    iou_loss(b, tt.tensor(t)).mean().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-6)
    assert sum(n.kind == "aten::min" for n in scripted.graph.nodes) == 4


def helper(x, k: float):
    return x * k + 1.0


def test_calls_tuples_subscripts_and_expressions():
    def f(x, y):
        a, b = y.shape[0], x[:, 1:]
        z = helper(b, 2.0) if a > 1 and not tt.jit.is_scripting() else tt.relu(b) - 1
        z += x.sum(dim=1, keepdim=True)
        s = 0
        for i in range(1, a):
            s = s + i * i
        return z, s, math.sqrt(float(a))

    scripted = tt.jit.script(f)
    x = tt.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])
    z, s, r = scripted(x, tt.zeros(4))
    # is_scripting() is True when compiled: relu(b) - 1, plus the row sums (2, 3)
    assert z.tolist() == [[-1.0 + 2, 2.0 + 2], [4.0 + 3, -1.0 + 3]]
    assert s == 1 + 4 + 9 and r == 2.0
    z_eager, s_eager, _ = f(x, tt.zeros(4))                     # eager: is_scripting() is False
    assert z_eager.tolist() == [[-3.0 + 2, 7.0 + 2], [11.0 + 3, -11.0 + 3]] and s_eager == 14
    assert "prim::CallFunction" in str(scripted.graph)           # (both branches are compiled)

    def g(x):
        return helper(x, 3.0).neg()
    sg = tt.jit.script(g)
    assert "prim::CallFunction" in str(sg.graph)
    assert sg(tt.tensor([1.0, 2.0])).tolist() == [-4.0, -7.0]


class Gate(tt.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = tt.nn.Linear(3, 2)
        self.scale = 2.0
        self.register_buffer("shift", tt.tensor([1.0, -1.0]))

    def forward(self, x):
        h = self.lin(x)
        if self.training:
            h = h * self.scale
        if h.sum() > 0:
            return h + self.shift
        return h - self.shift


def test_scripted_modules_inline_submodules_and_keep_parameters():
    tt.manual_seed(0)
    gate = Gate().eval()
    scripted = tt.jit.script(gate)
    assert isinstance(scripted, tt.jit.ScriptModule)
    names = [n.attrs["name"] for n in scripted.graph.all_nodes() if n.kind == "prim::GetAttr"]
    assert sorted(set(names)) == ["lin.bias", "lin.weight", "shift"]
    for x in (tt.ones(2, 3), -tt.ones(2, 3) * 5):
        np.testing.assert_allclose(scripted(x).detach().numpy(), gate(x).detach().numpy(), rtol=1e-6)
    seq = tt.nn.Sequential(tt.nn.Linear(3, 4), tt.nn.ReLU(), tt.nn.Linear(4, 1))
    sseq = tt.jit.script(seq)
    x = tt.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_allclose(sseq(x).detach().numpy(), seq(x).detach().numpy(), rtol=1e-6)
    sseq(x).sum().backward()
    assert seq[2].bias.grad.tolist() == [2.0]


def test_argument_types_are_checked_as_torchs():
    scripted = tt.jit.script(loops)
    with pytest.raises(RuntimeError, match=re.escape(
            "loops() Expected a value of type 'int' for argument 'n' but instead found type 'Tensor'.")):
        scripted(tt.ones(2), tt.ones(2))
    with pytest.raises(RuntimeError, match=re.escape("Declaration: loops(Tensor x, int n)")):
        scripted(tt.ones(2), 2.5)


def _lambda(x):
    y = lambda z: z  # noqa: E731
    return x


def _undefined(x):
    return foo(x)  # noqa: F821


def _comprehension(x):
    return [x for _ in range(3)]


def _breaks(x, n: int):
    for i in range(n):
        break
    return x


def test_constructs_outside_the_subset_name_their_line():
    line = _lambda.__code__.co_firstlineno
    with pytest.raises(UnsupportedNodeError) as e:
        tt.jit.script(_lambda)
    assert str(e.value) == (f"Lambda aren't supported:\n  File \"{__file__}\", line {line + 1}\n"
                            "def _lambda(x):\n    y = lambda z: z  # noqa: E731\n        ~~~~~~~~~~~ <--- HERE\n"
                            "    return x\n")
    assert issubclass(UnsupportedNodeError, NotSupportedError)
    with pytest.raises(RuntimeError, match=r"undefined value foo:\n  File .*, line \d+\n"
                       r"def _undefined\(x\):\n    return foo\(x\)  # noqa: F821\n           ~~~ <--- HERE"):
        tt.jit.script(_undefined)
    with pytest.raises(UnsupportedNodeError, match="List comprehensions aren't supported"):
        tt.jit.script(_comprehension)
    with pytest.raises(UnsupportedNodeError, match=r"break aren't supported:(.|\n)*        break\n        ~~~~~ <--- HERE"):
        tt.jit.script(_breaks)


@tt.jit.ignore
def _python_side(x) -> float:
    return float(len(str(x.shape)))


@tt.jit.unused
def _old(x):
    return x


def _checked(x, n: int):
    assert n >= 0, "n must be non-negative"
    if n > 5:
        raise ValueError("too big")
    if n == 3:
        return _old(x)
    return x * _python_side(x)


def test_raise_assert_ignore_and_unused():
    scripted = tt.jit.script(_checked)
    assert scripted(tt.ones(2), 1).tolist() == [len("tritensor.Size([2])")] * 2      # ignored: run by Python
    with pytest.raises(AssertionError, match="^n must be non-negative$"):
        scripted(tt.ones(2), -1)
    with pytest.raises(ValueError, match="^too big$"):
        scripted(tt.ones(2), 6)
    with pytest.raises(RuntimeError, match="_old was marked @tt.jit.unused"):
        scripted(tt.ones(2), 3)
    assert "raise ValueError('too big')" in scripted.code and "_python_side(x)" in scripted.code
    with pytest.raises(RuntimeError, match="Could not export Python function call '_python_side'"):
        import io
        scripted.save(io.BytesIO())


@pytest.mark.parametrize("make, shape", [
    (lambda: tt.nn.Softmax(dim=-1), (2, 3)),                   # type(self)._function: resolved at compile time
    (lambda: tt.nn.BatchNorm2d(2), (2, 2, 3, 3)),              # raise with an f-string; Optional buffers
    (lambda: tt.nn.BatchNorm2d(2).eval(), (2, 2, 3, 3)),
    (lambda: tt.nn.LayerNorm(4), (2, 4)),
    (lambda: tt.nn.MaxPool2d(2), (1, 1, 4, 4)),
    (lambda: tt.nn.Conv2d(2, 3, 3, padding=1), (1, 2, 5, 5)),  # constant tests fold: one branch compiled
])
def test_library_modules_script_and_match_eager(make, shape):
    tt.manual_seed(0)
    m = make()
    x = tt.tensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    scripted = tt.jit.script(m)
    np.testing.assert_allclose(scripted(x).detach().numpy(), make_eager(make, x), rtol=1e-6, atol=1e-7)


def make_eager(make, x):
    tt.manual_seed(0)
    return make()(x).detach().numpy()


def test_fstring_messages_and_optional_values():
    def f(x, n: int):
        if n < 0:
            raise ValueError(f"expected n >= 0 (got {n})")
        y = x if n > 0 else None
        return y is None
    scripted = tt.jit.script(f)
    with pytest.raises(ValueError, match=re.escape("expected n >= 0 (got -2)")):
        scripted(tt.ones(1), -2)
    assert scripted(tt.ones(1), 0) is True and scripted(tt.ones(1), 1) is False
    with pytest.raises(ValueError, match=re.escape("expected 4D input (got 2D input)")):   # eager's message
        tt.jit.script(tt.nn.BatchNorm2d(2))(tt.ones(2, 2))


class _Configured(tt.nn.Module):
    def __init__(self, mode):
        super().__init__()
        self.mode = mode

    def forward(self, x):
        if self.mode == "double" and x.dim() > 0:
            return x * 2
        if self.mode != "double":
            y = [v for v in x]      # outside the subset, but under a constant test that is False
            return y[0]
        return x


def test_module_configuration_folds_as_constants():
    scripted = tt.jit.script(_Configured("double"))
    assert scripted(tt.ones(2)).tolist() == [2.0, 2.0]
    assert not any(n.kind == "aten::ne" for n in scripted.graph.all_nodes())     # folded away
    with pytest.raises(UnsupportedNodeError, match="List comprehensions aren't supported"):
        tt.jit.script(_Configured("other"))


def test_grad_mode_blocks():
    def f(x):
        y = x * 2
        with tt.no_grad():
            z = x * 3
            w = z + 1
        return y + w, w.requires_grad
    scripted = tt.jit.script(f)
    assert "prim::With" in str(scripted.graph) and "with tt.no_grad():" in scripted.code
    x = tt.ones(2, requires_grad=True)
    out, w_requires_grad = scripted(x)
    assert out.tolist() == [6.0, 6.0] and w_requires_grad is False
    out.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]            # only y's path is differentiated
    import io
    buf = io.BytesIO()
    scripted.save(buf)
    buf.seek(0)
    assert tt.jit.load(buf)(tt.ones(2))[0].tolist() == [6.0, 6.0]


def test_script_and_trace_compose():
    traced = tt.jit.trace(lambda x: x.exp() + 1, (tt.ones(2),))

    def uses_trace(x):
        return traced(x) * 2
    scripted = tt.jit.script(uses_trace)
    assert "prim::CallFunction" in str(scripted.graph)
    assert np.allclose(scripted(tt.zeros(2)).numpy(), [4.0, 4.0])
    scripted_loops = tt.jit.script(loops)
    retraced = tt.jit.trace(lambda x: scripted_loops(x, 2)[0] + 1, (tt.ones(2),))   # the loop unrolled
    assert [n.kind for n in retraced.graph.nodes].count("aten::mul") == 2
    assert retraced(tt.full((2,), 3.0)).tolist() == [13.0, 13.0]
