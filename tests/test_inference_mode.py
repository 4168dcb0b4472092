"""tt.inference_mode against torch 2.13's documented semantics and error texts (torch's
"Inference Mode" note: inference tensors, views of normal tensors, the errors outside)."""
import threading

import numpy as np
import pytest

import tritensor as tt

INPLACE = ("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone "
           "to get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 "
           "for more details.")
SAVED = ("Inference tensors cannot be saved for backward. Please do not use Tensors created in inference "
         "mode in computation tracked by autograd. To work around this, you can make a clone to get a "
         "normal tensor and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")


def made_inside(device="cpu"):
    with tt.inference_mode():
        return tt.ones(3, device=device)


def test_inside_grad_is_off_and_new_tensors_are_inference_tensors(device):
    w = tt.ones(3, requires_grad=True, device=device)
    assert not tt.is_inference_mode_enabled()
    with tt.inference_mode():
        assert tt.is_inference_mode_enabled() and not tt.is_grad_enabled()
        y = w * 2
        fresh = tt.zeros(2, device=device)
        view = w.view(3)
        assert y.is_inference() and fresh.is_inference() and not y.requires_grad
        assert not view.is_inference()           # a view of a normal tensor stays normal
        assert y.view(3).is_inference()          # a view of an inference tensor is one
        y.add_(1)                                # in-place inside is allowed
        assert y.tolist() == [3.0, 3.0, 3.0]
    assert tt.is_grad_enabled() and not tt.is_inference_mode_enabled()
    assert not w.is_inference() and not (w * 1).is_inference()


@pytest.mark.parametrize("write", [
    lambda x: x.add_(1), lambda x: x.zero_(), lambda x: x.copy_(tt.zeros(3)), lambda x: x.fill_(5),
    lambda x: x.mul_(tt.ones(3)), lambda x: x.uniform_(), lambda x: x.clamp_(0, 0.5),
], ids=["add_", "zero_", "copy_", "fill_", "mul_", "uniform_", "clamp_"])
def test_in_place_outside_is_refused_before_anything_is_written(write):
    x = made_inside()
    with pytest.raises(RuntimeError, match="^" + INPLACE.replace(".", r"\.").replace("/", "/") + "$"):
        write(x)
    assert x.tolist() == [1.0, 1.0, 1.0]
    with tt.no_grad():                           # no_grad does not lift the rule
        with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
            x.add_(1)


def test_inference_tensors_cannot_be_saved_for_backward(device):
    x = made_inside(device)
    w = tt.ones(3, requires_grad=True, device=device)
    with pytest.raises(RuntimeError) as err:
        w * x                                    # mul saves both operands
    assert str(err.value) == SAVED
    out = w + x                                  # add saves nothing: allowed, as torch
    out.sum().backward()
    assert w.grad.tolist() == [1.0, 1.0, 1.0]
    # the documented workaround: a clone is a normal tensor
    c = x.clone()
    assert not c.is_inference()
    (w * c).sum().backward()
    assert w.grad.tolist() == [2.0, 2.0, 2.0]


def test_outside_functional_ops_on_inference_tensors_give_normal_tensors():
    x = made_inside()
    y = x * 2 + 1
    assert not y.is_inference() and y.tolist() == [3.0, 3.0, 3.0]
    y.add_(1)                                    # a normal tensor: in-place fine
    assert y._version == 1


def test_version_and_requires_grad_errors():
    x = made_inside()
    with pytest.raises(RuntimeError, match="^Inference tensors do not track version counter.$"):
        x._version
    with pytest.raises(RuntimeError, match="^Setting requires_grad=True on inference tensor outside "
                       "InferenceMode is not allowed.$"):
        x.requires_grad_()
    x.requires_grad_(False)                      # False is always fine


def test_mode_false_enables_grad_and_leaves_inference_mode():
    with tt.no_grad():
        with tt.inference_mode(False):
            assert tt.is_grad_enabled() and not tt.is_inference_mode_enabled()
            assert not tt.ones(1).is_inference()
    with tt.inference_mode():
        with tt.inference_mode(False):
            assert tt.is_grad_enabled() and not tt.is_inference_mode_enabled()
        assert not tt.is_grad_enabled() and tt.is_inference_mode_enabled()


def test_decorator_with_and_without_parentheses():
    w = tt.ones(2, requires_grad=True)

    @tt.inference_mode
    def bare(a):
        return a * 2

    @tt.inference_mode()
    def called(a):
        return a * 2

    @tt.inference_mode(False)
    def off(a):
        return a * 2

    assert bare(w).is_inference() and called(w).is_inference()
    assert not bare(w).requires_grad
    out = off(w)
    assert out.requires_grad and not out.is_inference()
    assert tt.autograd.inference_mode is tt.inference_mode


def test_inference_mode_is_per_thread():
    seen = {}
    inside, release = threading.Event(), threading.Event()

    def worker():
        with tt.inference_mode():
            inside.set()
            release.wait(5)

    t = threading.Thread(target=worker)
    t.start()
    inside.wait(5)
    seen["main"] = (tt.is_inference_mode_enabled(), tt.ones(1).is_inference(), tt.is_grad_enabled())
    release.set()
    t.join()
    assert seen["main"] == (False, False, True)


def test_a_model_evaluated_under_inference_mode_gives_the_no_grad_values():
    tt.manual_seed(0)
    model = tt.nn.Sequential(tt.nn.Linear(4, 8), tt.nn.ReLU(), tt.nn.Linear(8, 2))
    x = tt.randn(5, 4)
    with tt.no_grad():
        expected = model(x)
    with tt.inference_mode():
        got = model(x)
    assert got.is_inference() and not got.requires_grad
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
    # the parameters stay normal tensors and train afterwards
    model(x).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
