"""Frozen layers save nothing for backward (issue 22 item 5): a layer whose parameters are frozen and
whose input needs no gradient records no node at all (tests/test_resnet.py's fine-tuning test walks
such a graph); inside a graph, a frozen convolution keeps its weight (for the input's gradient)
and not its input activation (only the weight's gradient reads it: the table entry's saves_for)."""
import numpy as np
import pytest

import tritensor as tt

nn = tt.nn


def test_a_frozen_convolution_keeps_no_activation():
    """Inside a graph (its input requires grad) a frozen convolution saves its weight for the input's
    gradient and not its input, which only the weight's gradient reads; a trainable convolution of
    an input that needs no gradient saves the input and not the weight."""
    conv = nn.Conv2d(3, 4, 3, bias=False)
    conv.requires_grad_(False)
    rng = np.random.default_rng(7)
    x = tt.tensor(rng.standard_normal((2, 3, 5, 5)), dtype=tt.float32, requires_grad=True)
    y = conv(x)
    assert y.grad_fn._saved_weight is conv.weight
    with pytest.raises(AttributeError):
        y.grad_fn._saved_x
    g = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    (dx,) = tt.autograd.grad(y, x, tt.from_numpy(g))
    w = conv.weight.numpy()         # dx[n, c, i + a, j + b] += g[n, o, i, j] * w[o, c, a, b], by hand
    want = np.zeros((2, 3, 5, 5), np.float32)
    for a in range(3):
        for b in range(3):
            want[:, :, a:a + 3, b:b + 3] += np.einsum("noij,oc->ncij", g, w[:, :, a, b])
    np.testing.assert_allclose(dx.numpy(), want, rtol=1e-5, atol=1e-5)
    conv.requires_grad_(True)
    z = conv(x.detach())
    assert z.grad_fn._saved_x is not None
    with pytest.raises(AttributeError):
        z.grad_fn._saved_weight
