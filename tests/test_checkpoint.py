"""tt.utils.checkpoint (issue 25 item 3): activation checkpointing, reentrant and not, against
the plain (non-checkpointed) autograd of the same function as the oracle; RNG replay; the
activations not kept; torch's warnings and errors word for word."""
from __future__ import annotations

import gc
import warnings
import weakref

import numpy as np
import pytest

import tritensor as tt
import tritensor.nn.functional as F
from tritensor.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential

BOTH = pytest.mark.parametrize("reentrant", [True, False], ids=["reentrant", "non_reentrant"])


def _leaves(device="cpu"):
    tt.manual_seed(0)
    x = tt.randn(4, 3, device=device).requires_grad_()
    w = tt.randn(3, 3, device=device).requires_grad_()
    return x, w


def _grads(*ts):
    out = [t.grad.clone() for t in ts]
    for t in ts:
        t.grad = None
    return out


@BOTH
def test_gradients_equal_the_plain_ones_and_the_function_runs_twice(reentrant):
    x, w = _leaves()
    calls = []

    def f(x):
        calls.append(1)
        return (x @ w).tanh().sin()

    out = checkpoint(f, x, use_reentrant=reentrant)
    assert len(calls) == 1
    out.backward(tt.ones(4, 3))
    assert len(calls) == 2                       # one recomputation in backward
    gx, gw = _grads(x, w)
    f(x).backward(tt.ones(4, 3))
    tt.testing.assert_close(gx, x.grad, rtol=0, atol=0)
    tt.testing.assert_close(gw, w.grad, rtol=0, atol=0)


@BOTH
def test_dropout_inside_draws_the_same_mask_and_the_callers_rng_is_untouched(reentrant):
    x, w = _leaves()

    def f(x):
        return F.dropout(x @ w, 0.5, training=True)

    tt.manual_seed(7)
    out = checkpoint(f, x, use_reentrant=reentrant)
    state = tt.get_rng_state()
    out.sum().backward()
    assert tt.equal(tt.get_rng_state(), state)   # recomputation replays on a forked state
    gx, gw = _grads(x, w)
    tt.manual_seed(7)
    plain = f(x)
    tt.testing.assert_close(out, plain, rtol=0, atol=0)
    plain.sum().backward()
    tt.testing.assert_close(gx, x.grad, rtol=0, atol=0)
    tt.testing.assert_close(gw, w.grad, rtol=0, atol=0)
    # the gradient of x is w's rows summed over the kept columns only: the mask matters
    mask = (plain != 0).to(tt.float32)
    tt.testing.assert_close(gx, (mask * 2.0) @ w.detach().T, rtol=1e-6, atol=1e-6)


def test_without_preserve_rng_state_the_recomputation_draws_a_new_mask():
    x, w = _leaves()
    x2 = tt.randn(64, 3).requires_grad_()

    def f(x):
        return F.dropout(x @ w, 0.5, training=True)

    tt.manual_seed(3)
    out = checkpoint(f, x2, use_reentrant=False, preserve_rng_state=False)
    out.sum().backward()
    tt.manual_seed(3)
    f(x2).sum().backward()
    g_plain = x2.grad.clone()
    x2.grad = None
    tt.manual_seed(3)
    checkpoint(f, x2, use_reentrant=False, preserve_rng_state=False).sum().backward()
    assert not tt.equal(x2.grad, g_plain)


@BOTH
def test_intermediate_activations_are_not_kept(reentrant):
    x, w = _leaves()
    seen = []

    def f(x):
        y = (x @ w).exp()
        seen.append(weakref.ref(y))
        return y.sin()          # sin saves its input y for backward

    out = f(x)
    gc.collect()
    assert seen[0]() is not None                 # the plain graph keeps y alive
    del out
    seen.clear()
    out = checkpoint(f, x, use_reentrant=reentrant)
    gc.collect()
    assert seen[0]() is None                     # the checkpointed graph does not
    out.sum().backward()
    assert x.grad is not None


def test_non_reentrant_saves_placeholders_only_and_counts_them():
    x, w = _leaves()
    packed = []
    from tritensor.utils import checkpoint as ck
    real = ck._checkpoint_hook.__init__

    def spying_init(self, frame):
        real(self, frame)
        packed.append(frame)

    ck._checkpoint_hook.__init__ = spying_init
    try:
        out = checkpoint(lambda x: (x @ w).tanh().sin(), x, use_reentrant=False)
    finally:
        ck._checkpoint_hook.__init__ = real
    frame = packed[0]
    # matmul saves x and w, tanh its output, sin its input: four placeholders, no tensors
    assert len(frame.holders) == 4
    assert all(h.value is None for h in frame.holders)
    out.sum().backward()
    assert all(h.value is None for h in frame.holders)   # each freed at its unpack


def test_non_reentrant_with_kwargs_autograd_grad_and_retain_graph():
    x, w = _leaves()
    calls = []

    def f(x, *, scale):
        calls.append(1)
        return (x @ w).tanh() * scale

    out = checkpoint(f, x, use_reentrant=False, scale=3.0).sum()
    (gx,) = tt.autograd.grad(out, (x,), retain_graph=True)
    (gx2,) = tt.autograd.grad(out, (x,))               # second backward recomputes again
    assert len(calls) == 3
    ref = tt.autograd.grad(f(x, scale=3.0).sum(), (x,))[0]
    tt.testing.assert_close(gx, ref, rtol=0, atol=0)
    tt.testing.assert_close(gx2, ref, rtol=0, atol=0)


def test_non_reentrant_under_no_grad_runs_the_function_once():
    x, w = _leaves()
    with tt.no_grad():
        out = checkpoint(lambda x: x @ w, x, use_reentrant=False)
    assert out.grad_fn is None


def test_recomputation_that_saves_other_tensors_raises_checkpoint_error():
    x, w = _leaves()
    calls = []

    def f(x):
        calls.append(1)
        y = x @ w
        return y.sin() if len(calls) == 1 else y.sin().cos()

    out = checkpoint(f, x, use_reentrant=False, early_stop=False).sum()
    with pytest.raises(CheckpointError, match="trying to save more tensors during recomputation than during "
                                              "the original forward pass"):
        out.backward()

    calls.clear()

    def g(x):
        calls.append(1)
        return (x if len(calls) == 1 else x[:2]).exp().sum()

    out = checkpoint(g, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match=r"Recomputed values for the following tensors have different "
                                              r"metadata than during the forward pass.\ntensor at position 0:"):
        out.backward()
    assert issubclass(CheckpointError, RuntimeError)


def test_reentrant_warns_when_no_input_requires_grad_and_errors():
    x = tt.randn(2, 2)
    with pytest.warns(UserWarning, match="^None of the inputs have requires_grad=True. Gradients will be None$"):
        checkpoint(lambda t: t * 2, x, use_reentrant=True)
    with pytest.raises(ValueError, match="^Unexpected keyword arguments: a,b$"):
        checkpoint(lambda t: t, x, use_reentrant=True, a=1, b=2)
    with pytest.raises(ValueError, match=r"^Passing `context_fn` or `debug` is only supported when "
                                         r"use_reentrant=False.$"):
        checkpoint(lambda t: t, x, use_reentrant=True, debug=True)
    with pytest.raises(ValueError, match=r"^determinism_check should be one of \['default', 'none'\], but got "
                                         r"bad$"):
        checkpoint(lambda t: t, x, use_reentrant=False, determinism_check="bad")


def test_use_reentrant_not_passed_warns_and_defaults_to_reentrant():
    x, _ = _leaves()
    with pytest.warns(UserWarning) as record:
        out = checkpoint(lambda t: t * 2, x)
    assert str(record[0].message).startswith(
        "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in "
        "PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception.")
    assert type(out.grad_fn).__name__ == "CheckpointFunctionBackward"
    with pytest.warns(UserWarning, match="checkpoint_sequential: the use_reentrant parameter should be passed"):
        checkpoint_sequential([lambda t: t * 2, lambda t: t + 1], 2, x)


def test_context_fn_runs_forward_and_recomputation_under_its_two_contexts():
    import contextlib
    x, w = _leaves()
    log = []

    @contextlib.contextmanager
    def mark(name):
        log.append(name + ">")
        try:
            yield
        finally:            # early stop leaves the recomputation by an exception
            log.append("<" + name)

    out = checkpoint(lambda t: (t @ w).exp(), x, use_reentrant=False,
                     context_fn=lambda: (mark("fwd"), mark("re")))
    out.sum().backward()
    assert log == ["fwd>", "<fwd", "re>", "<re"]


@BOTH
def test_checkpoint_sequential_matches_the_sequential(reentrant):
    tt.manual_seed(0)
    model = tt.nn.Sequential(tt.nn.Linear(3, 5), tt.nn.Tanh(), tt.nn.Linear(5, 4), tt.nn.Sigmoid(),
                             tt.nn.Linear(4, 2))
    x = tt.randn(6, 3).requires_grad_()
    out = checkpoint_sequential(model, 2, x, use_reentrant=reentrant)
    out.sum().backward()
    got = [p.grad.clone() for p in model.parameters()] + [x.grad.clone()]
    model.zero_grad()
    x.grad = None
    ref_out = model(x)
    tt.testing.assert_close(out, ref_out, rtol=0, atol=0)
    ref_out.sum().backward()
    for g, p in zip(got, list(model.parameters()) + [x]):
        tt.testing.assert_close(g, p.grad, rtol=0, atol=0)
    with pytest.raises(ValueError, match="^Unexpected keyword arguments: foo$"):
        checkpoint_sequential(model, 2, x, use_reentrant=reentrant, foo=1)


@BOTH
def test_cuda_dropout_mask_is_replayed_from_the_cuda_generator(reentrant):
    x, w = _leaves("cuda")

    def f(x):
        return F.dropout(x @ w, 0.5, training=True)

    tt.manual_seed(11)
    out = checkpoint(f, x, use_reentrant=reentrant)
    state = tt.cuda.get_rng_state()
    out.sum().backward()
    assert tt.equal(tt.cuda.get_rng_state(), state)
    gx = x.grad.clone()
    x.grad = None
    tt.manual_seed(11)
    f(x).sum().backward()
    tt.testing.assert_close(gx, x.grad, rtol=0, atol=0)


def test_reentrant_refuses_autograd_grad_and_backward_inputs_as_torch():
    x, w = _leaves()
    msg = ("^When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad\\(\\) or passing an `inputs` "
           "parameter to .backward\\(\\).")
    out = checkpoint(lambda t: (t @ w).tanh(), x, use_reentrant=True).sum()
    with pytest.raises(RuntimeError, match=msg):
        tt.autograd.grad(out, (x,), retain_graph=True)
    with pytest.raises(RuntimeError, match=msg):
        out.backward(inputs=[x], retain_graph=True)
    assert w.grad is None                    # nothing leaked into the other leaf's .grad
    out.backward()
    assert x.grad is not None and w.grad is not None


def test_non_reentrant_input_modified_in_place_is_caught_by_the_version_check():
    x, w = _leaves()
    x2 = x * 1.0
    out = checkpoint(lambda t: (t @ w).exp(), x2, use_reentrant=False).sum()
    with tt.no_grad():
        x2.add_(1.0)
    with pytest.raises(RuntimeError, match=r"^one of the variables needed for gradient computation has been "
                                           r"modified by an inplace operation: \[.*\], which is output 0 of \w+, "
                                           r"is at version 1; expected version 0 instead."):
        out.backward()


@pytest.mark.parametrize("reentrant", [True, False])
def test_the_recomputation_replays_the_forwards_autocast_state(reentrant):
    """torch records autocast's state in the forward and recomputes under it: the recomputed
    matmul is bfloat16 again, so the gradients equal the uncheckpointed autocast ones."""
    w = tt.randn(4, 4, requires_grad=True)
    x = tt.randn(3, 4, requires_grad=True)

    def block(v):
        return (v @ w).tanh()

    with tt.autocast("cpu"):
        plain = block(x)
    plain.float().sum().backward()
    expected = (x.grad.clone(), w.grad.clone())
    x.grad = w.grad = None
    with tt.autocast("cpu"):
        out = checkpoint(block, x, use_reentrant=reentrant)
    assert out.dtype is tt.bfloat16
    out.float().sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), expected[0].numpy())
    np.testing.assert_array_equal(w.grad.numpy(), expected[1].numpy())
