"""NumPy references of the activations (ops/activations.py) and their fused backwards: the
FNs of kernels/elementwise.py's activation block, by the same names, plus the entries whose
reference takes other arguments than their FN (glu along a dim, softplus' backward with beta).

Each follows torch's formula and comparisons (aten/src/ATen/native/cpu/Activation.cpp), so the
kinks, -0.0 and NaN agree with torch's kernels. Found by numpy_ref.elementwise.
"""
from __future__ import annotations

import numpy as np

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
# torch's hardsigmoid_backward multiplies by the float constant 1.0f / 6.0f in every dtype
_ONE_SIXTH_F = float(np.float32(1.0) / np.float32(6.0))


def _like(v, x):
    """Scalar ``v`` in x's dtype (so float32 arrays stay float32)."""
    return np.asarray(v, dtype=x.dtype)


def elu(x, alpha=1.0):
    return np.where(x <= 0, _like(alpha, x) * np.expm1(x), x)


def elu_backward(grad, x, alpha=1.0):
    return np.where(x <= 0, grad * _like(alpha, x) * np.exp(x), grad)


def celu(x, alpha=1.0):
    inv = _like(1.0, x) / _like(alpha, x)
    return np.where(x <= 0, _like(alpha, x) * np.expm1(x * inv), x)


def celu_backward(grad, x, alpha=1.0):
    inv = _like(1.0, x) / _like(alpha, x)
    return np.where(x <= 0, grad * inv * _like(alpha, x) * np.exp(x * inv), grad)


def selu(x):
    return np.where(x <= 0, _like(_SELU_ALPHA * _SELU_SCALE, x) * np.expm1(x), _like(_SELU_SCALE, x) * x)


def selu_backward(grad, x):
    return np.where(x <= 0, grad * _like(_SELU_ALPHA * _SELU_SCALE, x) * np.exp(x), grad * _like(_SELU_SCALE, x))


def _inside(x, lambd):
    return (x >= -lambd) & (x <= lambd)


def hardshrink(x, lambd=0.5):
    return np.where(_inside(x, lambd), _like(0, x), x)


def hardshrink_backward(grad, x, lambd=0.5):
    return np.where(_inside(x, lambd), _like(0, grad), grad)


def softshrink(x, lambd=0.5):
    lam = _like(lambd, x)
    return np.where(x > lam, x - lam, np.where(x < -lam, x + lam, x * _like(0, x)))


softshrink_backward = hardshrink_backward


def _relu6_of_x_plus_3(x):
    r = x + _like(3, x)
    r = np.where(r < 0, _like(0, x), r)
    return np.where(r > 6, _like(6, x), r)


def hardsigmoid(x):
    return _relu6_of_x_plus_3(x) / _like(6, x)


def hardsigmoid_backward(grad, x):
    return np.where((x > -3) & (x < 3), grad * _like(_ONE_SIXTH_F, grad), _like(0, grad))


def hardswish(x):
    return x * _relu6_of_x_plus_3(x) / _like(6, x)


def hardswish_backward(grad, x):
    mid = grad * (x / _like(3, x) + _like(0.5, x))
    return np.where(x <= -3, _like(0, grad), np.where(x < 3, mid, grad))


def log_sigmoid(x):
    return np.where(x > 0, _like(0, x), x) - np.log1p(np.exp(-np.abs(x)))


def log_sigmoid_backward(grad, x):
    z = np.exp(-np.abs(x))
    q = z / (1 + z)
    return grad * np.where(x < 0, 1 - q, q)


def _tanh_softplus(x):
    return np.tanh(np.log1p(np.exp(x)))


def mish(x):
    return x * _tanh_softplus(x)


def mish_backward(grad, x):
    s = 1 / (1 + np.exp(-x))
    t = _tanh_softplus(x)
    return grad * (t + x * s * (1 - t * t))


def softplus(x, beta=1.0, threshold=20.0):
    xb = x * _like(beta, x)
    return np.where(xb > threshold, x, np.log1p(np.exp(xb)) / _like(beta, x))


def softplus_backward_scaled(grad, xb, threshold=20.0):
    z = np.exp(xb)
    return np.where(xb > threshold, grad, grad * z / (z + 1))


def softplus_backward(grad, x, beta=1.0, threshold=20.0):
    return softplus_backward_scaled(grad, x * _like(beta, x), threshold)


def threshold(x, threshold, value):
    return np.where(x <= threshold, _like(value, x), x)


def threshold_backward(grad, x, threshold):
    return np.where(x <= threshold, _like(0, grad), grad)


def glu_halves(a, b):
    return a / (1 + np.exp(-b))


def glu_grad_first(grad, b):
    return grad / (1 + np.exp(-b))


def glu_grad_second(grad, a, b):
    s = 1 / (1 + np.exp(-b))
    return (1 - s) * s * a * grad


def glu(x, dim):
    a, b = np.split(x, 2, axis=dim)
    return glu_halves(a, b)


def glu_backward(grad, x, dim):
    a, b = np.split(x, 2, axis=dim)
    return np.concatenate([glu_grad_first(grad, b), glu_grad_second(grad, a, b)], axis=dim)


def leaky_relu(x, negative_slope=0.01):
    return np.where(x > 0, x, x * _like(negative_slope, x))


def leaky_relu_backward(grad, x, negative_slope=0.01):
    return np.where(x > 0, grad, grad * _like(negative_slope, grad))


def prelu(x, w):
    return np.where(x > 0, x, w * x)


def prelu_input_backward(grad, x, w):
    return np.where(x > 0, grad, w * grad)


def prelu_weight_backward(grad, x):
    return np.where(x > 0, _like(0, grad), x * grad)


def rrelu_with_noise(x, noise):
    return np.where(x <= 0, x * noise, x)


def rrelu_with_noise_backward(grad, x, noise):
    return np.where(x <= 0, grad * noise, grad)
