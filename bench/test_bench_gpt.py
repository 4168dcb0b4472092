"""pytest-benchmark: one training step (forward, cross entropy, backward, AdamW) of the small GPT
of tests/gpt_model.py (vocab 32, 2 layers, 2 heads, d 32, T 16, batch 4; issue 24 item 6),
tritensor against torch eager in the same run on cpu, one thread each (torch.set_num_threads(1);
OPENBLAS_NUM_THREADS=1 for NumPy). `python -m bench.test_bench_gpt` prints the ratio of the min
times. The GPU is not measured here (the emulated device only smoke-checks one step)."""

import pytest

import gpt_model
import tritensor as tt

from .timing import library, min_seconds

DEVICES = ["cpu", "cuda"] if tt.cuda.is_available() else ["cpu"]


def make_step(lib, device="cpu"):
    """A closure running one training step on a fixed batch; returns the loss tensor."""
    model = gpt_model.load_init(lib, gpt_model.build(lib).to(device))
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    x, y = gpt_model.batches(1)[0]
    x, y = lib.tensor(x, device=device), lib.tensor(y, device=device)

    def step():
        _, loss = model(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    return step


@pytest.mark.parametrize("lib", ["tritensor", "torch"])
@pytest.mark.parametrize("device", DEVICES)
def test_gpt_training_step(benchmark, lib, device):
    lib = library(lib)
    if device == "cuda" and (lib is not tt or tt.cuda.is_emulated()):
        pytest.skip("the GPU step is not measured here (emulated: a smoke check in tests/test_gpt.py)")
    benchmark.group = f"gpt training step {device}"
    step = make_step(lib, device)
    loss = benchmark(step)
    assert loss.item() == loss.item()


def ratio(repeats=30):
    """min time of a tritensor cpu step / min time of a torch cpu step (same process)."""
    import torch
    torch.set_num_threads(1)
    times = {}
    for name, lib in (("tritensor", tt), ("torch", torch)):
        times[name] = min_seconds(make_step(lib), reps=repeats, warmup=3)
    return times, times["tritensor"] / times["torch"]


if __name__ == "__main__":
    times, r = ratio()
    print(f"gpt step cpu: tritensor {times['tritensor'] * 1e3:.2f} ms, torch {times['torch'] * 1e3:.2f} ms, "
          f"ratio {r:.2f}")
