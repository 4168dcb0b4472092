"""pytest-benchmark: a mixed-precision training step (autocast; GradScaler on cuda) against the
float32 step, tritensor and torch eager in the same run (issue 25 item 10).

Workloads of bench/training.py (the tutorial MLP, a transformer-style block); on cpu the autocast
dtype is bfloat16 (torch's cpu default, no scaler), on cuda float16 with tt.amp.GradScaler.
Groups compare the four rows (tritensor/torch x float32/mixed). Small sizes on the emulated
device (a smoke check of autocast + the fused unscale kernel through a whole step)."""
import pytest

import tritensor as tt

from .test_bench_training import DEVICES, REAL, _lib
from .training import _sync, make_step


@pytest.mark.parametrize("precision", ["float32", "mixed"])
@pytest.mark.parametrize("lib", ["tritensor", "torch"])
@pytest.mark.parametrize("workload", ["mlp", "transformer"])
@pytest.mark.parametrize("device", DEVICES)
def test_amp_training_step(benchmark, lib, workload, device, precision):
    lib = _lib(lib)
    if device == "cuda" and lib is not tt and not lib.cuda.is_available():
        pytest.skip("torch has no GPU here")
    small = device == "cuda" and not REAL
    benchmark.group = f"amp training step {workload} {device}"
    step = make_step(lib, workload, device, small=small, mixed=precision == "mixed")
    sync = _sync(lib, device)
    first = step().item()

    def run():
        loss = step()
        sync()
        return loss
    loss = benchmark(run)
    assert loss.item() == loss.item() and abs(loss.item()) < 10 * abs(first) + 10   # finite, not diverging
