"""pytest-benchmark: the tutorial MLP's training step eager vs captured as one CUDA graph
(bench/graphs.py; issue 26 item 6). Compare the two rows of the group; ``python -m bench.graphs``
prints the ratio (GPU goal: graphed >= 2x eager throughput, not yet measured on a GPU).

Small sizes on the emulated device (a smoke check); the graphed step's losses and weights are
checked against the eager step's first."""
import numpy as np
import pytest

import tritensor as tt

from .graphs import make_graphed
from .training import _sync, make_step

REAL = tt.cuda.is_available() and not tt.cuda.is_emulated()
pytestmark = pytest.mark.skipif(not tt.cuda.is_available(), reason="CUDA graphs need a cuda device")


def test_graphed_step_equals_eager_step():
    small = not REAL
    eager, graphed = make_step(tt, "mlp", "cuda", small), make_graphed(make_step(tt, "mlp", "cuda", small), warmup=1)
    eager()            # the graphed model's warm-up step (its momentum buffers exist before the capture)
    for _ in range(2):
        a, b = eager().item(), graphed().item()
        assert a == pytest.approx(b, rel=1e-6) and np.isfinite(a)


@pytest.mark.parametrize("mode", ["eager", "graphed"])
def test_mlp_training_step_graphs(benchmark, mode):
    benchmark.group = "MLP training step batch 64: eager vs CUDA graph"
    step = make_step(tt, "mlp", "cuda", small=not REAL)
    if mode == "graphed":
        step = make_graphed(step)
    sync = _sync(tt, "cuda")

    def run():
        loss = step()
        sync()
        return loss
    loss = benchmark(run)
    assert loss.item() == loss.item()
