"""A small GPT (tests/gpt_model.py: token + position embeddings, causal self-attention through
F.scaled_dot_product_attention(is_causal=True), LayerNorm, a GELU MLP, lm_head tied to the token
embedding) trained with AdamW (issue 24 item 5): the losses of PyTorch 2.13 from the same init
(recorded by tests/data/make_transformer_fixtures.py) on cpu, and the same losses on cuda."""
import os

import numpy as np
import pytest

import gpt_model
import tritensor as tt

TORCH_LOSSES = np.load(os.path.join(os.path.dirname(__file__), "data", "transformer_fixtures.npz"))["gpt/losses"]
# Emulated: ~260 launches a step; the "gpu" launch profile (few large programs) makes a step ~9 s
# on the interpreter, the "small" one ~27 s (the Adam and reduction kernels' many programs)
CUDA_STEPS = 2


@pytest.fixture(scope="module")
def cpu_losses():
    model = gpt_model.load_init(tt, gpt_model.build(tt))
    return gpt_model.train(tt, model, len(TORCH_LOSSES))


def test_weight_tying_and_parameters():
    model = gpt_model.build(tt)
    assert model.lm_head.weight is model.wte.weight
    names = [n for n, _ in model.named_parameters()]
    assert "lm_head.weight" not in names and names[0] == "wte.weight"      # a tied parameter counts once
    assert sum(p.numel() for p in model.parameters()) == 27_008
    sd = model.state_dict()
    assert sd["lm_head.weight"].data_ptr() == sd["wte.weight"].data_ptr()


def test_cpu_losses_match_torch(cpu_losses):
    np.testing.assert_allclose(cpu_losses, TORCH_LOSSES, rtol=2e-5, atol=2e-5)
    assert cpu_losses[-1] < cpu_losses[0] - 0.5        # it learns the counting pattern


@pytest.mark.emulated_blocks("gpu")
def test_cuda_losses_match_cpu(cpu_losses):
    model = gpt_model.load_init(tt, gpt_model.build(tt).to("cuda"))
    losses = gpt_model.train(tt, model, CUDA_STEPS, device="cuda")
    np.testing.assert_allclose(losses, cpu_losses[:CUDA_STEPS], rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(losses, TORCH_LOSSES[:CUDA_STEPS], rtol=2e-5, atol=2e-5)
    assert model.lm_head.weight is model.wte.weight and model.wte.weight.device.type == "cuda"
