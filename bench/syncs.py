"""python -m bench.syncs: host synchronisations per training step of the bench's models on cuda.

A sync is any call where the host waits for the device: a read of device memory on the host
(``Tensor._to_host_array``, ``Storage.copy_to_host``, the launchers' ``download`` of counts),
``Stream.synchronize`` (every blocking copy ends with one), ``Event.synchronize`` and
``tt.cuda.synchronize``. The counter wraps those functions, so it counts the same way on any
tritensor commit (bench/RESULTS.md compares the commits before and after the deferred bounds
checks of runtime/device_errors.py). One warm-up step, then the syncs of one step; the step
itself never asks for the loss (a training loop's ``loss.item()`` adds one).

Without a GPU: ``TRITENSOR_EMULATE_CUDA=1 TRITENSOR_EMULATED_BLOCKS=fast python -m bench.syncs``; the
emulated device counts what a real GPU would wait for. The time each sync costs
is only measured on a GPU (``python -m bench.training --device cuda`` and
``pytest bench/test_bench_gpt.py bench/test_bench_lstm.py --benchmark-enable -n 0 -k cuda``).
"""
from __future__ import annotations

import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import tritensor as tt  # noqa: E402

COUNT = [0]


def _counting(fn, only_cuda=False):
    def wrapper(self, *args, **kwargs):
        if not only_cuda or self.device.type == "cuda":
            COUNT[0] += 1
        return fn(self, *args, **kwargs)
    return wrapper


def _counting_function(fn):
    def wrapper(*args, **kwargs):
        COUNT[0] += 1
        return fn(*args, **kwargs)
    return wrapper


def install():
    """Wrap every sync point (the functions, and each module's own name for them)."""
    from tritensor.backends.triton import _memory
    from tritensor.runtime import storage, streams
    streams.Stream.synchronize = _counting(streams.Stream.synchronize)
    streams.Event.synchronize = _counting(streams.Event.synchronize)
    tt.Tensor._to_host_array = _counting(tt.Tensor._to_host_array, only_cuda=True)
    storage.Storage.copy_to_host = _counting(storage.Storage.copy_to_host, only_cuda=True)
    for name, original in (("synchronize", streams.synchronize), ("download", _memory.download)):
        wrapped = _counting_function(original)
        for module in list(sys.modules.values()):
            if (getattr(module, "__name__", "") or "").startswith("tritensor") and \
                    getattr(module, name, None) is original:
                setattr(module, name, wrapped)


def _mlp():
    from bench.training import make_step
    return make_step(tt, "mlp", "cuda", small=True)


def _transformer_block():
    from bench.training import make_step
    return make_step(tt, "transformer", "cuda", small=True)


def _gpt():
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
    from bench.test_bench_gpt import make_step
    return make_step(tt, "cuda")


def _lstm_lm():
    import numpy as np
    from bench import test_bench_lstm as b
    model = b.TTModel().to("cuda")
    x, y = b._batch()
    x, y = tt.tensor(x[:5], device="cuda"), tt.tensor(y[:5], device="cuda")      # 5 of the 35 time steps

    def step():
        return b._tt_step(model, x, y)
    assert np.isfinite(float(step().detach().cpu().numpy()))
    return step


def _resnet_block():
    from bench import test_bench_resnet as b
    return b._step(b._smoke_model(), "cuda", 4, 8, 16, 10)     # batch 4, 16 channels of 8x8, 10 classes


MODELS = {"mlp (CrossEntropyLoss, SGD)": _mlp, "transformer block (AdamW)": _transformer_block,
          "GPT (embedding, cross entropy, AdamW)": _gpt, "LSTM LM (embedding, cross entropy, clip)": _lstm_lm,
          "ResNet block (conv, batchnorm, cross entropy)": _resnet_block}


def main():
    install()
    print(f"{'model':48s} syncs per step")
    for name, make in MODELS.items():
        step = make()
        step()
        before = COUNT[0]
        step()
        print(f"{name:48s} {COUNT[0] - before}")


if __name__ == "__main__":
    main()
