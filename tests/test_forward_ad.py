"""tt.autograd.forward_ad: forward-mode AD (dual tensors), torch 2.13's API and semantics.

Every op with a gradient case (tests/opinfo.py's records) is run with dual inputs, and its
tangent (the Jacobian-vector product J t) is checked against two independent oracles:
central finite differences of the op itself, and the reverse-mode vector-Jacobian product
through the adjoint identity <u, J t> = <J^T u, t>. The API's errors are torch's, word for word
(recorded from torch 2.13).
"""
import numpy as np
import pytest

import opinfo  # noqa: F401  (first: the family record modules register into it)
import tritensor as tt
import tritensor.autograd.forward_ad as fwAD
from opinfo import OPS, RECORDS
from tritensor.ops import dispatch as dispatch_mod
from tritensor.ops import elementwise as ew

# torch 2.13 has no forward derivative for these either: its NotImplementedError, by the name
# its message gives
NO_FORWARD = {"pdist": "_pdist_forward", "cdist": "_cdist_forward", "ctc_loss": "_ctc_loss",
              "sparse_mm": "_sparse_addmm", "grid_sampler_2d": "grid_sampler_2d",
              "grid_sampler_3d": "grid_sampler_3d", "Tensor.to_sparse": "_to_sparse",
              "sparse_sampled_addmm": "sparse_compressed_tensor", "sparse_mm_reduce": "sparse_compressed_tensor",
              "_embedding_bag": "_embedding_bag",
              "flash_attention_forward": "_scaled_dot_product_flash_attention_for_cpu",
              "nn.functional.scaled_dot_product_attention": "_scaled_dot_product_flash_attention_for_cpu"}
# cases finite differences cannot check to 1e-5: a float32 round trip (checked by the adjoint
# identity, and by hand below)
NOT_BY_FINITE_DIFFERENCES = {"to_copy"}
# needs a second device
CUDA_ONLY = {"device_copy"}

CASES = sorted(r.name for r in RECORDS if r.grad_case is not None and not r.no_derivative
               and r.name not in CUDA_ONLY)
EMULATED = ("add", "mul", "sin", "mm", "addmm", "matmul", "sum", "softmax", "log_softmax", "cat", "amax",
            "var", "index", "where")


def _message(name):
    return ("Trying to use forward AD with " + name + " that does not support it because it has not been "
            "implemented yet.\nPlease file an issue to PyTorch at https://github.com/pytorch/pytorch/issues/"
            "new?template=feature-request.yml so that we can prioritize its implementation or submit a PR "
            "adding the implementation to derivatives.yaml")


def _as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _numpy(t):
    return t.detach().cpu().numpy()


def _tangents(inputs, device, seed):
    rng = np.random.default_rng(seed)
    return [tt.tensor(rng.standard_normal(tuple(x.shape)), dtype=x.dtype, device=device)
            if x.dtype.is_floating_point and x.requires_grad else None for x in inputs]


def _forward(fn, inputs, tangents):
    with fwAD.dual_level():
        duals = [fwAD.make_dual(x, t) if t is not None else x for x, t in zip(inputs, tangents)]
        outs = _as_tuple(fn(*duals))
        return [fwAD.unpack_dual(o).tangent if isinstance(o, tt.Tensor) else None for o in outs]


def _finite_differences(fn, inputs, tangents, eps=1e-6):
    def at(s):
        moved = [(x.detach() + s * t).requires_grad_(True) if t is not None else x
                 for x, t in zip(inputs, tangents)]
        return _as_tuple(fn(*moved))
    plus, minus = at(eps), at(-eps)
    return [(_numpy(a) - _numpy(b)) / (2 * eps) if isinstance(a, tt.Tensor) and a.dtype.is_floating_point
            else None for a, b in zip(plus, minus)]


def _check_case(name, device):
    fn, inputs, _ = OPS[name].grad_case(device)
    inputs = _as_tuple(inputs)
    tangents = _tangents(inputs, device, 0)
    if name in NO_FORWARD:
        with pytest.raises(NotImplementedError) as info:
            _forward(fn, inputs, tangents)
        assert str(info.value) == _message(NO_FORWARD[name])
        return
    got = _forward(fn, inputs, tangents)
    # oracle 1: finite differences of the op
    if name not in NOT_BY_FINITE_DIFFERENCES:
        for g, want in zip(got, _finite_differences(fn, inputs, tangents)):
            if want is None:
                continue
            assert g is not None, f"{name}: a floating output without a tangent"
            np.testing.assert_allclose(_numpy(g), want, rtol=1e-5, atol=1e-6, err_msg=name)
    # oracle 2: reverse mode, <u, J t> = <J^T u, t> for a random cotangent u
    fresh = [x.detach().requires_grad_(True) if t is not None else x for x, t in zip(inputs, tangents)]
    outs = [o for o in _as_tuple(fn(*fresh)) if isinstance(o, tt.Tensor)]
    pairs = [(o, g) for o, g in zip(outs, got) if o.dtype.is_floating_point and o.requires_grad]
    if not pairs:
        return
    rng = np.random.default_rng(1)
    us = [tt.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype, device=device) for o, _ in pairs]
    wrt = [x for x, t in zip(fresh, tangents) if t is not None]
    vjps = tt.autograd.grad([o for o, _ in pairs], wrt, us, allow_unused=True)
    lhs = sum(float((_numpy(u) * _numpy(g)).sum()) for u, (_, g) in zip(us, pairs))
    rhs = sum(float((_numpy(v) * _numpy(t)).sum()) for v, t in zip(vjps, [t for t in tangents if t is not None])
              if v is not None)
    assert abs(lhs - rhs) <= 1e-7 * (1 + abs(lhs)), f"{name}: <u, Jt> = {lhs} but <J^T u, t> = {rhs}"


@pytest.mark.parametrize("name", CASES)
def test_jvp_of_every_op(name):
    _check_case(name, "cpu")


@pytest.mark.parametrize("name", EMULATED + tuple(CUDA_ONLY))
def test_jvp_on_emulated_cuda(name):
    _check_case(name, "cuda")


def test_cast_round_trip_tangent_by_hand():
    x = tt.tensor([1.0, 2.0], dtype=tt.float64)
    t = tt.tensor([0.1, 1 / 3], dtype=tt.float64)
    with fwAD.dual_level():
        y = fwAD.make_dual(x, t).to(tt.float32).to(tt.float64)
        got = fwAD.unpack_dual(y).tangent
    assert got.dtype is tt.float64
    np.testing.assert_array_equal(_numpy(got), np.array([0.1, 1 / 3], np.float32).astype(np.float64))


# --------------------------------------------------------------------------- the API, as torch's
def _x(device="cpu"):
    return tt.tensor([0.5, -1.0, 2.0], dtype=tt.float64, device=device)


def _t(device="cpu"):
    return tt.tensor([1.0, 2.0, 3.0], dtype=tt.float64, device=device)


def test_levels_and_their_errors():
    with pytest.raises(RuntimeError) as info:
        fwAD.make_dual(_x(), _t())
    assert str(info.value) == ("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                               "enter_dual_level() first.")
    with pytest.raises(RuntimeError, match="^Dual level must be a positive number.$"):
        fwAD.exit_dual_level()
    with fwAD.dual_level() as level:
        assert level == 0
        with pytest.raises(RuntimeError, match="^Nested forward mode AD is not supported at the moment$"):
            fwAD.enter_dual_level()
        with pytest.raises(RuntimeError) as info:
            fwAD.exit_dual_level(level=1)
        assert str(info.value) == ("Trying to exit a forward AD level that was not the last one that was "
                                   "created. This is not supported.")
    assert fwAD.enter_dual_level() == 0        # a level again, numbered 0 again
    fwAD.exit_dual_level(level=0)


def test_make_dual_and_unpack_dual_errors():
    x, t = _x(), _t()
    with fwAD.dual_level():
        with pytest.raises(RuntimeError) as info:
            fwAD.make_dual(x, t[:2])
        assert str(info.value) == (
            "Trying to set a forward gradient that has a different size than that of the original Tensor, this "
            "is not supported. Tensor is of size [3] while the given forward gradient is of size [2].")
        with pytest.raises(ValueError, match="^Expected primal to be floating point or complex, but got: "):
            fwAD.make_dual(x.long(), t)
        with pytest.raises(ValueError, match="^Expected tangent to be floating point or complex, but got: "):
            fwAD.make_dual(x, t.long())
        with pytest.raises(RuntimeError, match="^Invalid level given to _make_dual$"):
            fwAD.make_dual(x, t, level=5)
        with pytest.raises(AttributeError):
            fwAD.make_dual(x, 3)
        d = fwAD.make_dual(x, t)
        with pytest.raises(RuntimeError) as info:
            fwAD.make_dual(d, t)
        assert str(info.value) == ("Making a dual Tensor based on a Tensor that already has a forward gradient "
                                   "at the same level 0 is not supported.")
        with pytest.raises(RuntimeError, match="^Invalid level given to _fw_primal$"):
            fwAD.unpack_dual(d, level=3)
        with pytest.raises(TypeError, match=r"^_unpack_dual\(\): argument 'dual' \(position 1\) must be Tensor, "
                                            "not int$"):
            fwAD.unpack_dual(3)


def test_make_dual_is_a_view_and_keeps_the_tangent():
    x, t = _x(), _t()
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        assert d is not x and d._base is x
        primal, tangent = fwAD.unpack_dual(d)
        assert tangent is t                               # as it is: same layout
        assert primal._base is x and fwAD.unpack_dual(primal).tangent is None
        assert fwAD.unpack_dual(x).tangent is None        # the primal itself stays plain
        assert type(fwAD.unpack_dual(d)) is fwAD.UnpackedDualTensor
        assert fwAD.unpack_dual(d)._fields == ("primal", "tangent")
        # a tangent of another layout is copied into the primal's
        m = tt.randn(3, 4, dtype=tt.float64)
        tm = tt.randn(4, 3, dtype=tt.float64).t()
        dm = fwAD.make_dual(m, tm)
        got = fwAD.unpack_dual(dm).tangent
        assert got is not tm and got.stride() == m.stride()
        np.testing.assert_array_equal(_numpy(got), _numpy(tm))
    # outside a level: the tensor itself, no tangent
    u = fwAD.unpack_dual(d)
    assert u.primal is d and u.tangent is None


def test_exit_drops_every_tangent():
    x, t = _x(), _t()
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        y = d * 2
    assert fwAD.unpack_dual(y).tangent is None
    with fwAD.dual_level():
        assert fwAD.unpack_dual(d).tangent is None and fwAD.unpack_dual(y).tangent is None


def test_decorator_form():
    @fwAD.dual_level()
    def f(x, t):
        return fwAD.unpack_dual(fwAD.make_dual(x, t).exp()).tangent
    np.testing.assert_allclose(_numpy(f(_x(), _t())), np.exp([0.5, -1.0, 2.0]) * [1, 2, 3])
    assert fwAD._current_level == -1


def test_chain_rule_by_hand():
    x, t = _x(), _t()
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        y = (d * d).sin() + 2.0 * d
        got = fwAD.unpack_dual(y).tangent
    xn, tn = _numpy(x), _numpy(t)
    np.testing.assert_allclose(_numpy(got), 2 * xn * tn * np.cos(xn * xn) + 2 * tn, rtol=1e-14)


def test_detach_integers_and_no_derivative():
    x, t = _x(), _t()
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        assert fwAD.unpack_dual(d.detach()).tangent is None
        assert fwAD.unpack_dual((d * 2).long()).tangent is None
        assert fwAD.unpack_dual(d.argmax()).tangent is None
        np.testing.assert_array_equal(_numpy(fwAD.unpack_dual(d.floor()).tangent), [0.0, 0.0, 0.0])
        assert fwAD.unpack_dual(tt.arange(3) + d).tangent.dtype is tt.float64


def test_views_share_the_tangent(device):
    x, t = _x(device), _t(device)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        v = d[1:]
        tv = fwAD.unpack_dual(v).tangent
        np.testing.assert_array_equal(_numpy(tv), [2.0, 3.0])
        assert tv._base is t                       # the same view of the tangent
        m = fwAD.make_dual(tt.randn(2, 3, dtype=tt.float64, device=device),
                           tt.arange(6.0, dtype=tt.float64, device=device).view(2, 3))
        np.testing.assert_array_equal(_numpy(fwAD.unpack_dual(m.t()).tangent), [[0, 3], [1, 4], [2, 5]])
        np.testing.assert_array_equal(_numpy(fwAD.unpack_dual(m.unsqueeze(0).expand(2, 2, 3)).tangent)[1],
                                      [[0, 1, 2], [3, 4, 5]])
        m2 = m.clone()
        m2.t_()                                     # an in-place view op takes the tangent along
        np.testing.assert_array_equal(_numpy(fwAD.unpack_dual(m2).tangent), [[0, 3], [1, 4], [2, 5]])


def test_in_place_ops_update_the_tangent(device):
    x, t = _x(device), _t(device)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        y = tt.ones(3, dtype=tt.float64, device=device)
        y.mul_(d)                                   # a plain tensor becomes dual
        np.testing.assert_array_equal(_numpy(fwAD.unpack_dual(y).tangent), [1.0, 2.0, 3.0])
        y.mul_(d)                                   # d(y * x) = ty x + y tx, with y's old value
        np.testing.assert_allclose(_numpy(fwAD.unpack_dual(y).tangent), 2 * _numpy(x) * _numpy(t))
        z = tt.zeros(3, dtype=tt.float64, device=device)
        z[1:] = d[1:]                               # into a view: the base gets a tangent, zero elsewhere
        np.testing.assert_array_equal(_numpy(fwAD.unpack_dual(z).tangent), [0.0, 2.0, 3.0])
        w = tt.zeros(3, dtype=tt.float64, device=device)
        early = w[:2]                               # a view made before its base became dual
        w.add_(d)
        np.testing.assert_array_equal(_numpy(fwAD.unpack_dual(early).tangent), [1.0, 2.0])
        e = fwAD.make_dual(tt.ones(3, dtype=tt.float64, device=device), tt.ones(3, dtype=tt.float64, device=device))
        e.mul_(3.0)
        np.testing.assert_array_equal(_numpy(fwAD.unpack_dual(e).tangent), [3.0, 3.0, 3.0])
        e.fill_(1.0)                                # a constant: zero tangent
        np.testing.assert_array_equal(_numpy(fwAD.unpack_dual(e).tangent), [0.0, 0.0, 0.0])
        e.copy_(d)
        np.testing.assert_array_equal(_numpy(fwAD.unpack_dual(e).tangent), [1.0, 2.0, 3.0])


def test_reverse_mode_through_the_tangent():
    """The tangent is differentiable in reverse mode (reverse over forward)."""
    x = tt.tensor([0.3, 1.2], dtype=tt.float64)
    t = tt.tensor([1.0, -2.0], dtype=tt.float64, requires_grad=True)
    with fwAD.dual_level():
        jvp = fwAD.unpack_dual(fwAD.make_dual(x, t).sin()).tangent       # cos(x) t
        (g,) = tt.autograd.grad(jvp.sum(), t)
    np.testing.assert_allclose(_numpy(g), np.cos([0.3, 1.2]), rtol=1e-14)


def test_forward_over_reverse():
    """A gradient computed inside a level carries its tangent: H t."""
    x = tt.tensor([0.3, -1.2, 0.7], dtype=tt.float64)
    t = tt.tensor([1.0, 0.5, -2.0], dtype=tt.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t).requires_grad_(True)
        (g,) = tt.autograd.grad((d.sin() * d.exp()).sum(), d, create_graph=True)
        ht = fwAD.unpack_dual(g).tangent
    xn = _numpy(x)
    np.testing.assert_allclose(_numpy(ht), 2 * np.cos(xn) * np.exp(xn) * _numpy(t), rtol=1e-12)


def test_not_implemented_is_torchs_error():
    with fwAD.dual_level():
        d = fwAD.make_dual(tt.randn(3, 2, dtype=tt.float64), tt.randn(3, 2, dtype=tt.float64))
        with pytest.raises(NotImplementedError) as info:
            tt.cdist(d, d)
        assert str(info.value) == _message("_cdist_forward")


def test_the_fast_path_is_untouched_without_a_level():
    a, b = tt.randn(4), tt.randn(4)
    a + b
    assert dispatch_mod.signature(ew.ADD, (a, b), {}) is not None
    with fwAD.dual_level():
        assert dispatch_mod.signature(ew.ADD, (a, b), {}) is None      # ops take the first-time path
    a + b
    assert dispatch_mod.signature(ew.ADD, (a, b), {}) is not None


# --------------------------------------------------------------------------- functional
def test_forward_mode_jacobian_and_hessian():
    from tritensor.autograd.functional import hessian, jacobian
    x = tt.tensor([0.2, -0.7, 1.1], dtype=tt.float64)
    y = tt.tensor([[1.0, 2.0, -1.0], [0.5, 0.0, 3.0]], dtype=tt.float64)

    def f(a, b):
        return a.sin() * b, (a * a).sum()
    rev = jacobian(f, (x, y))
    fwd = jacobian(f, (x, y), vectorize=True, strategy="forward-mode")
    for r_row, f_row in zip(rev, fwd):
        for r, g in zip(r_row, f_row):
            assert tuple(r.shape) == tuple(g.shape)
            np.testing.assert_allclose(_numpy(g), _numpy(r), rtol=1e-14)
    single = jacobian(lambda a: a.exp(), x, vectorize=True, strategy="forward-mode")
    np.testing.assert_allclose(_numpy(single), np.diag(np.exp(_numpy(x))), rtol=1e-14)
    h = hessian(lambda a: (a.sin() * a.exp()).sum(), x, vectorize=True, outer_jacobian_strategy="forward-mode")
    np.testing.assert_allclose(_numpy(h), np.diag(2 * np.cos(_numpy(x)) * np.exp(_numpy(x))), rtol=1e-12,
                               atol=1e-15)
    message = ("Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly implemented for "
               "`vectorize=True`.")
    with pytest.raises(NotImplementedError) as info:
        jacobian(lambda a: a.exp(), x, strategy="forward-mode")
    assert str(info.value) == message
    with pytest.raises(NotImplementedError) as info:
        hessian(lambda a: a.exp().sum(), x, outer_jacobian_strategy="forward-mode")
    assert str(info.value) == message
    with pytest.raises(RuntimeError, match="^torch.autograd.functional.jacobian: `strict=True` and "):
        jacobian(lambda a: a.exp(), x, strict=True, vectorize=True, strategy="forward-mode")


# --------------------------------------------------------------------------- custom Functions
class _Square(tt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g


class _SquareWithJvp(_Square):
    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return 3 * x * t          # deliberately not 2 x t: the tangent must be the jvp's, not derived


class _SquareForwardOnly(tt.autograd.Function):
    @staticmethod
    def forward(x):
        return x * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        return g

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return 2 * x * t


def test_custom_function_jvp():
    x, t = _x(), _t()
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        with pytest.raises(NotImplementedError) as info:
            _Square.apply(d)
        assert str(info.value) == ("You must implement the jvp function for custom autograd.Function to use it "
                                   "with forward mode AD.")
        np.testing.assert_allclose(_numpy(fwAD.unpack_dual(_SquareWithJvp.apply(d)).tangent),
                                   3 * _numpy(x) * _numpy(t))
        np.testing.assert_allclose(_numpy(fwAD.unpack_dual(_SquareForwardOnly.apply(d)).tangent),
                                   2 * _numpy(x) * _numpy(t))
        assert fwAD.unpack_dual(_Square.apply(x)).tangent is None      # no dual input: no jvp needed


def test_repr_shows_the_tangent():
    """As torch 2.13 prints it (recorded): the tangent after the dtype, a 0-d one as a number."""
    x = tt.tensor([0.3533, -0.5415, 0.5475], dtype=tt.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, tt.tensor([-0.5683, 1.0217, -1.7365], dtype=tt.float64))
        assert repr(d) == ("tensor([ 0.3533, -0.5415,  0.5475], dtype=tritensor.float64,\n"
                           "       tangent=tensor([-0.5683,  1.0217, -1.7365], dtype=tritensor.float64))")
        assert repr(d.sum()) == "tensor(0.3593, dtype=tritensor.float64, tangent=-1.2831)"
    assert repr(d) == "tensor([ 0.3533, -0.5415,  0.5475], dtype=tritensor.float64)"


def test_out_functions_have_no_forward_rule():
    """torch 2.13's error (recorded) for an out= call with a dual argument; a plain one works."""
    x, t = _x(), _t()
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        with pytest.raises(NotImplementedError) as info:
            tt.mul(d, x, out=tt.empty(3, dtype=tt.float64))
        assert str(info.value) == ("Trying to use forward AD with mul_out that does not support it because it is "
                                   "an out= function")
        with pytest.raises(NotImplementedError, match="^Trying to use forward AD with sum_out that"):
            tt.sum(d.view(1, 3), 1, out=tt.empty(1, dtype=tt.float64))
        o = tt.empty(3, dtype=tt.float64)
        tt.mul(x, x, out=o)
        assert fwAD.unpack_dual(o).tangent is None


def test_gradcheck_forward_ad():
    from tritensor.autograd import gradcheck, gradgradcheck
    from tritensor.autograd.gradcheck import GradcheckError
    x = tt.tensor([0.3, -0.8, 1.1], dtype=tt.float64, requires_grad=True)
    w = tt.tensor([[0.5, -1.0], [2.0, 0.1], [-0.3, 0.7]], dtype=tt.float64, requires_grad=True)

    def f(a, b):
        return (a.sin() @ b).softmax(-1)
    assert gradcheck(f, (x, w), check_forward_ad=True)
    assert gradcheck(f, (x, w), check_forward_ad=True, check_backward_ad=False)
    assert gradgradcheck(f, (x, w), check_fwd_over_rev=True, check_rev_over_rev=False)
    with pytest.raises(AssertionError, match="^Expected at least one of check_forward_ad or check_backward_ad "
                                             "to be True$"):
        gradcheck(f, (x, w), check_backward_ad=False)

    class WrongJvp(tt.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, t):
            return t * 3
    with pytest.raises(GradcheckError, match="^Jacobian computed with forward mode mismatch for output 0 with "
                                             "respect to input 0,\nnumerical:"):
        gradcheck(WrongJvp.apply, (x,), check_forward_ad=True)
    assert gradcheck(WrongJvp.apply, (x,))      # the backward alone is right


def test_samplers_and_ops_torch_refuses():
    """As torch 2.13 (recorded): poisson's tangent is zero, _standard_gamma has no forward rule,
    and the ops with torch's not-implemented derivative refuse a dual input in its words."""
    a = tt.tensor([1.5, 2.0], dtype=tt.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(a, tt.ones(2, dtype=tt.float64))
        np.testing.assert_array_equal(_numpy(fwAD.unpack_dual(tt.poisson(d)).tangent), [0.0, 0.0])
        with pytest.raises(NotImplementedError) as info:
            tt._standard_gamma(d)
        assert str(info.value) == _message("_standard_gamma")
        with pytest.raises(NotImplementedError, match=r"^Trying to use forward AD with aten::_sample_dirichlet that "
                                                      r"does not support it\.$"):
            tt._sample_dirichlet(d)
        with pytest.raises(NotImplementedError, match=r"^Trying to use forward AD with aten::binomial that does not "
                                                      r"support it\.$"):
            tt.binomial(d, tt.tensor([0.5, 0.5], dtype=tt.float64))
