"""tt.nn.utils.parametrize / parametrizations and the older hook-based weight_norm /
spectral_norm (issue 25 item 3). Oracles: torch 2.13's state_dicts, outputs and gradients
recorded by tests/data/make_parametrize_torch.py (loaded into our modules: the state_dicts
interchange), mathematical identities (orthogonality, unit spectral norm), torch's messages."""
from __future__ import annotations

import copy
import pathlib
import pickle

import pytest

import tritensor as tt
from tritensor import nn
from tritensor.nn.utils import parametrizations as P
from tritensor.nn.utils import parametrize

DATA = tt.load(pathlib.Path(__file__).parent / "data" / "parametrize_torch.pt")

MAKERS = {
    "weight_norm": (lambda: nn.Linear(3, 4), lambda m: P.weight_norm(m), "x2"),
    "weight_norm_dim1": (lambda: nn.Linear(3, 4), lambda m: P.weight_norm(m, dim=1), "x2"),
    "weight_norm_dimNone": (lambda: nn.Linear(3, 4), lambda m: P.weight_norm(m, dim=None), "x2"),
    "old_weight_norm": (lambda: nn.Linear(3, 4), lambda m: nn.utils.weight_norm(m), "x2"),
    "spectral_norm": (lambda: nn.Linear(3, 4), lambda m: P.spectral_norm(m), "x2"),
    "spectral_norm_conv": (lambda: nn.Conv2d(3, 4, 3), lambda m: P.spectral_norm(m), "x4"),
    "spectral_norm_convT": (lambda: nn.ConvTranspose2d(3, 4, 3), lambda m: P.spectral_norm(m), "x4"),
    "old_spectral_norm": (lambda: nn.Linear(3, 4), lambda m: nn.utils.spectral_norm(m), "x2"),
    "orthogonal_householder_notriv": (
        lambda: nn.Linear(3, 5), lambda m: P.orthogonal(m, orthogonal_map="householder", use_trivialization=False),
        "x2"),
}
for _map in ("matrix_exp", "cayley", "householder"):
    MAKERS[f"orthogonal_{_map}"] = (lambda: nn.Linear(5, 5), lambda m, o=_map: P.orthogonal(m, orthogonal_map=o), "x5")
    MAKERS[f"orthogonal_{_map}_tall"] = (lambda: nn.Linear(3, 5), lambda m, o=_map: P.orthogonal(m, orthogonal_map=o),
                                         "x2")


def _close(a, b, tol=1e-5):
    tt.testing.assert_close(a, b, rtol=tol, atol=tol)


def _registered(name):
    make, register, xname = MAKERS[name]
    m = make()
    m.load_state_dict(DATA[name + ".init"])
    with pytest.warns(FutureWarning) if name == "old_weight_norm" else _nothing():
        register(m)
    return m, DATA[xname]


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_torch_state_dict_loads_and_gives_torchs_outputs_and_gradients(name):
    case = DATA[name]
    m, x = _registered(name)
    assert sorted(m.state_dict()) == sorted(case["registered"])          # the same keys as torch
    m.load_state_dict(case["registered"])
    for i in range(3):                                # training-mode forwards iterate the power method
        if f"train{i}" in case:
            _close(m(x), case[f"train{i}"])
    for k, v in m.state_dict().items():
        _close(v, case["after_train"][k])
    m.eval()
    y = m(x)
    _close(y, case["eval"])
    y.square().sum().backward()
    for n, p in m.named_parameters():
        _close(p.grad, case["grads"][n], 1e-4)


@pytest.mark.parametrize("name", ["weight_norm", "weight_norm_dim1", "weight_norm_dimNone", "old_weight_norm",
                                  "orthogonal_matrix_exp", "orthogonal_householder_notriv"])
def test_registration_computes_torchs_originals(name):
    # right_inverse is deterministic for these: the registered originals equal torch's
    m, _ = _registered(name)
    for k, v in m.state_dict().items():
        _close(v, DATA[name]["registered"][k])


@pytest.mark.parametrize("orth_map", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal_weights_are_orthogonal_and_assignable(orth_map, shape):
    tt.manual_seed(1)
    m = P.orthogonal(nn.Linear(shape[1], shape[0]), orthogonal_map=orth_map)
    W = m.weight
    gram = W.T @ W if shape[0] >= shape[1] else W @ W.T
    _close(gram, tt.eye(min(shape)))
    # assigning an orthogonal matrix: the parametrized weight becomes exactly that one
    q = tt.linalg.qr(tt.randn(max(shape), max(shape)))[0][: shape[0], : shape[1]]
    m.weight = q
    _close(m.weight, q)
    assert type(m).__name__ == "ParametrizedLinear"


def test_spectral_norm_has_unit_spectral_norm_and_iterates_only_in_training():
    tt.manual_seed(0)
    m = P.spectral_norm(nn.Linear(6, 4))
    _close(tt.linalg.matrix_norm(m.weight.detach(), 2), tt.tensor(1.0), 1e-4)
    u = m.parametrizations.weight[0]._u.clone()
    m.eval()
    m(tt.randn(2, 6))
    assert tt.equal(m.parametrizations.weight[0]._u, u)
    m.train()
    m(tt.randn(2, 6))
    assert m.parametrizations.weight[0]._u is not None


def test_parametrize_chain_cache_and_remove():
    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).T

        def right_inverse(self, A):
            return A.triu()

    class Scale(nn.Module):
        calls = 0

        def forward(self, X):
            Scale.calls += 1
            return 2 * X

        def right_inverse(self, A):
            return A / 2

    m = nn.Linear(3, 3)
    w0 = m.weight.detach().clone()
    parametrize.register_parametrization(m, "weight", Symmetric())
    assert parametrize.is_parametrized(m) and parametrize.is_parametrized(m, "weight")
    assert not parametrize.is_parametrized(m, "bias")
    assert parametrize.type_before_parametrizations(m) is nn.Linear
    _close(m.weight, w0.triu() + w0.triu(1).T)
    parametrize.register_parametrization(m, "weight", Scale())          # the chain grows
    _close(m.weight, 2 * (w0.triu() + w0.triu(1).T))
    Scale.calls = 0
    with parametrize.cached():
        a, b = m.weight, m.weight
    assert a is b and Scale.calls == 1
    # assignment goes through right_inverse of the chain, last first
    s = tt.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 5.0], [3.0, 5.0, 6.0]])
    m.weight = s
    _close(m.weight, s)
    _close(m.parametrizations.weight.original, (s / 2).triu())
    # gradients flow to the original
    m.weight.sum().backward()
    assert m.parametrizations.weight.original.grad is not None
    parametrize.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear and not hasattr(m, "parametrizations")
    assert isinstance(m.weight, nn.Parameter)
    _close(m.weight, s)


def test_remove_parametrizations_leave_unparametrized_and_weight_norm_originals():
    m = P.weight_norm(nn.Linear(3, 2))
    w = m.weight.detach().clone()
    with pytest.raises(ValueError, match=r"^Cannot leave unparametrized \(`leave_parametrized=False`\) a tensor that "
                                         r"is parametrized in terms of a sequence of tensors.$"):
        parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
    parametrize.remove_parametrizations(m, "weight")
    _close(m.weight, w)
    assert isinstance(m.weight, nn.Parameter) and m.weight.grad_fn is None
    m = P.orthogonal(nn.Linear(3, 3))
    orig = m.parametrizations.weight.original
    parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
    assert m.weight is orig


def test_old_weight_norm_state_dict_loads_into_the_parametrization():
    # a state_dict of the hook-based weight_norm (weight_g, weight_v) loads into the new one
    sd = DATA["old_weight_norm"]["registered"]
    m = P.weight_norm(nn.Linear(3, 4))
    m.load_state_dict(sd)
    _close(m(DATA["x2"]), DATA["old_weight_norm"]["eval"])


def test_old_spectral_norm_metadata_and_remove():
    m = nn.utils.spectral_norm(nn.Linear(3, 4))
    sd = m.state_dict()
    assert sd._metadata[""] == DATA["old_spectral_norm_metadata"]
    assert sorted(sd) == ["bias", "weight_orig", "weight_u", "weight_v"]
    m.eval()
    y = m(DATA["x2"])
    nn.utils.remove_spectral_norm(m)
    assert sorted(m.state_dict()) == ["bias", "weight"] and not m._forward_pre_hooks
    _close(m(DATA["x2"]), y)
    with pytest.raises(ValueError, match="^spectral_norm of 'weight' not found in Linear"):
        nn.utils.remove_spectral_norm(m)


def test_old_weight_norm_remove_and_errors():
    m = nn.Linear(3, 4)
    with pytest.warns(FutureWarning, match=r"^`torch.nn.utils.weight_norm` is deprecated in favor of "
                                           r"`torch.nn.utils.parametrizations.weight_norm`.$"):
        nn.utils.weight_norm(m)
    with pytest.raises(RuntimeError, match="^Cannot register two weight_norm hooks on the same parameter weight$"), \
            pytest.warns(FutureWarning):
        nn.utils.weight_norm(m)
    y = m(DATA["x2"])
    nn.utils.remove_weight_norm(m)
    assert sorted(m.state_dict()) == ["bias", "weight"]
    _close(m(DATA["x2"]), y)
    with pytest.raises(ValueError, match="^weight_norm of 'weight' not found in Linear"):
        nn.utils.remove_weight_norm(m)
    s = nn.utils.spectral_norm(nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="^Cannot register two spectral_norm hooks on the same parameter weight$"):
        nn.utils.spectral_norm(s)
    with pytest.raises(ValueError, match="^Expected n_power_iterations to be positive, but got n_power_iterations=0$"):
        nn.utils.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)


def test_parametrize_errors_word_for_word():
    class Twice(nn.Module):
        def forward(self, X):
            return tt.cat([X, X])

    m = nn.Linear(2, 2)
    with pytest.raises(ValueError) as e:
        parametrize.register_parametrization(m, "weight", Twice())
    assert str(e.value) == ("Registering a parametrization may not change the shape of the tensor, unless `unsafe` "
                            "flag is enabled.\nunparametrized shape: tritensor.Size([2, 2])\n"
                            "parametrized shape: tritensor.Size([4, 2])")
    assert type(m) is nn.Linear
    with pytest.raises(ValueError, match="^Module 'Linear.*' does not have a parameter, a buffer, or a parametrized "
                                         "element with name 'foo'$"):
        parametrize.register_parametrization(m, "foo", nn.Identity())
    with pytest.raises(ValueError, match="^Module Linear.* does not have a parametrization on weight$"):
        parametrize.remove_parametrizations(m, "weight")
    parametrize.register_parametrization(m, "weight", nn.Identity())
    with pytest.raises(RuntimeError, match="^parametrization Identity does not implement right_inverse.$"):
        m.weight = tt.zeros(2, 2)
    with pytest.raises(RuntimeError, match="^Serialization of parametrized modules is only supported through "
                                           "state_dict()"):
        pickle.dumps(m)
    clone = copy.deepcopy(m)
    assert type(clone).__name__ == "ParametrizedLinear" and clone.weight is not m.weight
    with pytest.raises(ValueError, match='^orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                                         'Got: bad$'):
        P.orthogonal(nn.Linear(2, 2), orthogonal_map="bad")
    with pytest.raises(ValueError, match="^Expected a matrix or batch of matrices. Got a tensor of 1 dimensions.$"):
        P.orthogonal(nn.Linear(2, 2), "bias")
    with pytest.raises(IndexError, match=r"^Dimension out of range \(expected to be in range of \[-2, 1\] but got 2\)$"):
        P.spectral_norm(nn.Linear(2, 2), dim=2)


def test_transfer_parametrizations_and_params():
    a = P.weight_norm(nn.Linear(3, 2))
    b = nn.Linear(3, 2)
    parametrize.transfer_parametrizations_and_params(a, b)
    assert parametrize.is_parametrized(b, "weight")
    assert b.parametrizations.weight.original0 is a.parametrizations.weight.original0
    _close(b.weight, a.weight)


def test_old_spectral_norm_loads_a_version_0_state_dict_by_solving_for_v():
    # before version 1, torch saved the normalized `weight` and no `weight_v`: loading solves
    # for a v that reproduces that weight's sigma (SpectralNormLoadStateDictPreHook)
    src = DATA["old_spectral_norm"]
    orig, u = src["registered"]["weight_orig"], src["registered"]["weight_u"]
    weight = orig / 2.5
    from collections import OrderedDict
    sd = OrderedDict(bias=src["registered"]["bias"], weight_orig=orig, weight_u=u, weight=weight)
    sd._metadata = OrderedDict({"": {"version": 1, "spectral_norm": {"weight.version": 0}}})
    m = nn.utils.spectral_norm(nn.Linear(3, 4)).eval()
    m.load_state_dict(sd)
    assert sorted(m.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    x = DATA["x2"]
    _close(m(x), x @ weight.T + sd["bias"])
    # without metadata and without weight_v: both the old and the new layout miss a key (torch's text)
    sd1 = OrderedDict(bias=sd["bias"], weight_orig=orig, weight_u=u)
    with pytest.raises(RuntimeError) as e:
        nn.utils.spectral_norm(nn.Linear(3, 4)).load_state_dict(sd1)
    assert str(e.value) == ('Error(s) in loading state_dict for Linear:\n\tMissing key(s) in state_dict: "weight", '
                            '"weight_v". ')


@pytest.mark.parametrize("name", ["weight_norm", "orthogonal_householder"])
def test_parametrized_module_on_the_emulated_device_matches_cpu(name):
    case = DATA[name]
    m, x = _registered(name)
    m.load_state_dict(case["registered"])
    m.eval().cuda()
    y = m(x.cuda())
    assert y.device.type == "cuda"
    _close(y.cpu(), case["eval"])
    y.square().sum().backward()
    for n, p in m.named_parameters():
        _close(p.grad.cpu(), case["grads"][n], 1e-4)
