"""The main job's MLP trained on the emulated GPU (issue 23 item 8: the time the fast launch
profile saves, spent on emulated coverage): its own train_epoch / evaluate loops run a few Adam
steps on cuda and on cpu from the same weights, checked against the network and Adam written out
in NumPy (float64, tritensor/__main__.py's numpy_reference for the gradients; Adam as torch
documents it). Model-level: the "fast" profile of few large programs (tests/conftest.py)."""
import copy

import numpy as np
import pytest

import tritensor as tt
from tritensor import __main__ as job
from tritensor.utils.data import DataLoader, TensorDataset

pytestmark = pytest.mark.emulated_blocks("fast")

LR, BETAS, EPS = 1e-3, (0.9, 0.999), 1e-8


def numpy_adam(model, batches, epochs):
    """The parameters after ``epochs`` passes of Adam over ``batches`` ((x, y) NumPy pairs),
    and each step's loss: float64, gradients from the hand-written network."""
    params = {n: p.detach().cpu().numpy().astype(np.float64) for n, p in model.named_parameters()}
    m = {n: np.zeros_like(p) for n, p in params.items()}
    v = {n: np.zeros_like(p) for n, p in params.items()}
    shadow = copy.deepcopy(model)
    losses, t = [], 0
    for _ in range(epochs):
        for x, y in batches:
            with tt.no_grad():
                for n, p in shadow.named_parameters():
                    p.copy_(tt.from_numpy(params[n].astype(np.float32)))
            _, loss, grads = job.numpy_reference(shadow, x, y)
            losses.append(loss)
            t += 1
            for n, g in grads.items():
                m[n] = BETAS[0] * m[n] + (1 - BETAS[0]) * g
                v[n] = BETAS[1] * v[n] + (1 - BETAS[1]) * g * g
                m_hat, v_hat = m[n] / (1 - BETAS[0] ** t), v[n] / (1 - BETAS[1] ** t)
                params[n] = params[n] - LR * m_hat / (np.sqrt(v_hat) + EPS)
    return params, losses


def test_the_mlp_trains_on_the_emulated_gpu_as_in_numpy():
    rng = np.random.default_rng(0)      # digits-like: 8x8 images in [0, 1], 10 classes
    images, labels = rng.random((160, 8, 8), dtype=np.float32), rng.integers(0, 10, 160)
    tt.manual_seed(0)
    model = job.build_model(tt, 64)
    loader = DataLoader(TensorDataset(tt.from_numpy(images), tt.from_numpy(labels)), batch_size=64)  # 64, 64, 32
    batches = [(x.numpy(), y.numpy()) for x, y in loader]
    expected, expected_losses = numpy_adam(model, batches, epochs=2)
    results = {}
    for device in ("cuda", "cpu"):
        trained = copy.deepcopy(model).to(device)
        optimizer = tt.optim.Adam(trained.parameters(), lr=LR, betas=BETAS, eps=EPS)
        loss_fn = tt.nn.CrossEntropyLoss()
        mean_losses = [job.train_epoch(tt, trained, loader, loss_fn, optimizer, device, "train") for _ in range(2)]
        accuracy, test_loss = job.evaluate(tt, trained, loader, loss_fn, device)
        results[device] = ({n: p.detach().cpu().numpy() for n, p in trained.named_parameters()},
                           mean_losses, accuracy, test_loss)
        assert next(trained.parameters()).device.type == device
    sizes = np.array([len(y) for _, y in batches])
    for device, (params, mean_losses, accuracy, test_loss) in results.items():
        for n, p in params.items():
            np.testing.assert_allclose(p, expected[n], rtol=2e-4, atol=2e-5, err_msg=f"{device} {n}")
        per_epoch = np.array(expected_losses).reshape(2, -1) @ sizes / sizes.sum()
        np.testing.assert_allclose(mean_losses, per_epoch, rtol=1e-4, err_msg=device)
        # evaluate(): the trained network's accuracy and mean loss, recomputed in NumPy
        shadow = copy.deepcopy(model)
        with tt.no_grad():
            for n, p in shadow.named_parameters():
                p.copy_(tt.from_numpy(params[n]))
        logits, loss, _ = job.numpy_reference(shadow, images, labels)
        assert accuracy == np.mean(logits.argmax(1) == labels)
        np.testing.assert_allclose(test_loss, loss, rtol=1e-4, err_msg=device)
    assert mean_losses[1] < mean_losses[0]          # it learns
