"""pytest-benchmark: one training step of the tutorial MLP and of a transformer-style block
(bench/training.py builds both), tritensor against torch eager in the same run where torch is
importable. Compare the two rows of each group; `python -m bench.training` prints the ratio.

Small sizes on the emulated device (a smoke check of the whole step through the kernels)."""
import pytest

import tritensor as tt

from .timing import library
from .training import _sync, make_step

REAL = tt.cuda.is_available() and not tt.cuda.is_emulated()
DEVICES = ["cpu", "cuda"] if tt.cuda.is_available() else ["cpu"]


@pytest.mark.parametrize("lib", ["tritensor", "torch"])
@pytest.mark.parametrize("workload", ["mlp", "transformer"])
@pytest.mark.parametrize("device", DEVICES)
def test_training_step(benchmark, lib, workload, device):
    lib = library(lib)
    if device == "cuda" and lib is not tt and not lib.cuda.is_available():
        pytest.skip("torch has no GPU here")
    small = device == "cuda" and not REAL
    benchmark.group = f"training step {workload} {device}"
    step, sync = make_step(lib, workload, device, small=small), _sync(lib, device)

    def run():
        loss = step()
        sync()
        return loss
    loss = benchmark(run)
    assert loss.item() == loss.item()   # a finite number came out of the step
