"""F.rms_norm / nn.RMSNorm (issue 24 item 2): values and gradients recorded from PyTorch 2.13,
torch's defaults (eps of the compute dtype), errors and module surface. Parity with the NumPy
definition in every dtype, gradcheck and gradgradcheck run from tests/opinfo_transformer.py."""
import numpy as np
import pytest

import opinfo  # noqa: F401  (the records, before any family module)
import tritensor as tt
import tritensor.nn.functional as F

DEVICES = ["cpu", "cuda"]
X = [[0.5, -1.0, 2.0], [3.0, 0.25, -0.75]]
W = [1.5, -0.5, 2.0]
G = [[1.0, 2.0, 3.0], [-1.0, 0.5, 0.25]]
# torch.nn.functional.rms_norm(x, (3,), w) and the gradients of sum(y * G), PyTorch 2.13
Y_TORCH = [[0.56694663, 0.37796444, 3.02371550], [2.51230717, -0.06978631, -0.83743572]]
DX_TORCH = [[0.14398664, 1.22388434, 0.57594657], [0.02175152, -0.06797368, 0.06434843]]
DW_TORCH = [-1.29690695, -1.44207144, 4.43089342]


@pytest.mark.parametrize("device", DEVICES)
def test_values_and_gradients_match_torch(device):
    x = tt.tensor(X, device=device, requires_grad=True)
    w = tt.tensor(W, device=device, requires_grad=True)
    y = F.rms_norm(x, (3,), w)
    assert type(y.grad_fn).__name__ == "FusedRmsNormBackward0"
    np.testing.assert_allclose(y.detach().cpu().numpy(), Y_TORCH, rtol=1e-6)
    (y * tt.tensor(G, device=device)).sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), DX_TORCH, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(w.grad.cpu().numpy(), DW_TORCH, rtol=1e-5)


@pytest.mark.parametrize("dtype", [tt.float16, tt.bfloat16, tt.float32])
def test_default_eps_is_the_compute_dtypes(dtype):
    # torch: x = [1e-3, 2e-3, -3e-3] in float16 gives [0.4573, 0.9146, -1.3711] (float32's eps,
    # not float16's 9.8e-4, which would give ~[0.03, 0.06, -0.09])
    y = F.rms_norm(tt.tensor([[1e-3, 2e-3, -3e-3]], dtype=dtype), (3,))
    assert y.dtype is dtype
    np.testing.assert_allclose(y.float().numpy(), [[0.4571, 0.9142, -1.3713]], rtol=1e-2)
    y = F.rms_norm(tt.tensor([[1e-9, 2e-9, -3e-9]], dtype=tt.float64), (3,))
    np.testing.assert_allclose(y.numpy(), [[0.06641458, 0.13282916, -0.19924375]], rtol=1e-6)   # torch, eps 2.2e-16


def test_result_keeps_the_input_dtype_with_another_weight_dtype():
    x = tt.tensor(X, dtype=tt.float16)
    y = F.rms_norm(x, (3,), tt.tensor(W, dtype=tt.float64))
    assert y.dtype is tt.float16
    np.testing.assert_allclose(y.float().numpy(), Y_TORCH, rtol=2e-3)
    assert F.rms_norm(tt.tensor(X, dtype=tt.float64), (3,), tt.tensor(W)).dtype is tt.float64


def test_module():
    m = tt.nn.RMSNorm(3, eps=0.1)
    assert repr(m) == "RMSNorm((3,), eps=0.1, elementwise_affine=True)"
    assert list(m.state_dict()) == ["weight"] and m.weight.tolist() == [1.0, 1.0, 1.0]
    np.testing.assert_allclose(m(tt.tensor([1e-3, 2e-3, -3e-3])).detach().numpy(),
                               [0.00316220, 0.00632441, -0.00948661], rtol=1e-5)
    m = tt.nn.RMSNorm([2, 3], elementwise_affine=False)
    assert repr(m) == "RMSNorm((2, 3), eps=None, elementwise_affine=False)"
    assert m.weight is None and list(m.state_dict()) == []
    x = tt.randn(4, 2, 3)
    np.testing.assert_allclose(m(x).numpy(), F.rms_norm(x, (2, 3)).numpy())


def test_errors_as_torch():
    x = tt.randn(3, 4)
    with pytest.raises(RuntimeError, match=r"^Given normalized_shape=\[3\], expected input with shape \[\*3\], but "
                                           r"got input of size\[3, 4\]$"):
        F.rms_norm(x, (3,))
    with pytest.raises(RuntimeError, match=r"expected input with shape \[\*2, 3\], but got input of size\[2, 6\]"):
        F.rms_norm(tt.randn(2, 6), (2, 3))
    with pytest.raises(RuntimeError, match=r"^Expected weight to be of same shape as normalized_shape, but got "
                                           r"weight of shape \[3, 2\] and normalized_shape = \[4\]$"):
        F.rms_norm(x, (4,), tt.randn(3, 2))
    with pytest.raises(RuntimeError, match="Expected normalized_shape to be at least 1-dimensional"):
        F.rms_norm(x, [])
    with pytest.raises(TypeError, match=r"rms_norm\(\): argument 'normalized_shape' \(position 2\) must be tuple "
                                        "of ints, not int"):
        F.rms_norm(x, 4)
    with pytest.raises(TypeError, match=r"argument 'eps' \(position 4\) must be float, not str"):
        F.rms_norm(x, (4,), None, "a")
    with pytest.raises(NotImplementedError, match="\"rms_norm\" not implemented for 'Long'"):
        F.rms_norm(tt.ones(3, 4, dtype=tt.int64), (4,))


@pytest.mark.parametrize("device", DEVICES)
def test_weight_gradient_is_deterministic_and_empty_batch(device):
    rng = np.random.default_rng(0)
    x = tt.tensor(rng.standard_normal((37, 19)), device=device, requires_grad=True)
    w = tt.tensor(rng.standard_normal(19), device=device, requires_grad=True)
    grads = []
    for _ in range(2):
        w.grad = None
        F.rms_norm(x, (19,), w).sum().backward()
        grads.append(w.grad.cpu().numpy().copy())
    assert np.array_equal(grads[0], grads[1])
    e = tt.zeros(0, 5, device=device, requires_grad=True)
    ew = tt.ones(5, device=device, requires_grad=True)
    y = F.rms_norm(e, (5,), ew)
    assert tuple(y.shape) == (0, 5)
    y.sum().backward()
    assert ew.grad.tolist() == [0.0] * 5
