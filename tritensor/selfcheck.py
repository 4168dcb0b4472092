"""python -m tritensor.selfcheck: the demo and self-check on the best device available.

Runs a small forward/backward on ``cuda`` (a real GPU when CuPy sees one, else the emulated
device running the same Triton kernels under Triton's interpreter) and checks every value and
gradient against the NumPy reference on ``cpu``. Exit status 0 means they agree.
"""
from __future__ import annotations

import os
import sys
import time


def _pick_device():
    """Before tritensor decides what cuda is: emulate it where no GPU is seen."""
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0:
            return "real GPU"
    except Exception:
        pass
    os.environ.setdefault("TRITENSOR_EMULATE_CUDA", "1")
    return "emulated (Triton interpreter)"


def main() -> int:
    kind = _pick_device()
    import numpy as np

    import tritensor as tt
    print(f"tritensor {tt.__version__}; cuda: {tt.cuda.get_device_name()} ({kind})")
    tt.manual_seed(0)
    x_cpu = tt.randn(64, 33, requires_grad=True)
    w_cpu = tt.randn(33, requires_grad=True)
    m_cpu = (tt.randn(66, 10) * 0.1).requires_grad_()
    target = tt.randint(0, 10, (64,))                    # class labels
    checks = []

    def run(x, w, m, target):
        # elementwise, broadcasting, cat, matmul, log_softmax, gather (indexing), reductions
        y = ((x * w + 1).tanh() * 2 - x.exp() / (w.relu() + 1)) ** 2
        logits = tt.cat([y, x.clamp(-1, 1)], dim=1) @ m
        nll = -logits.log_softmax(1).gather(1, target[:, None]).mean()
        loss = y.mean(dim=1).sin().sum() + nll
        loss.backward()
        return y, loss

    t0 = time.perf_counter()
    y_ref, loss_ref = run(x_cpu, w_cpu, m_cpu, target)
    x_gpu, w_gpu, m_gpu = (t.detach().cuda().requires_grad_() for t in (x_cpu, w_cpu, m_cpu))
    y_gpu, loss_gpu = run(x_gpu, w_gpu, m_gpu, target.cuda())
    elapsed = time.perf_counter() - t0
    for name, a, b in [("forward", y_gpu, y_ref), ("loss", loss_gpu, loss_ref),
                       ("x.grad", x_gpu.grad, x_cpu.grad), ("w.grad", w_gpu.grad, w_cpu.grad),
                       ("m.grad", m_gpu.grad, m_cpu.grad)]:
        ok = np.allclose(a.detach().cpu().numpy(), b.detach().numpy(), rtol=1e-4, atol=1e-5)
        checks.append(ok)
        print(f"  {name:8s} {'ok' if ok else 'MISMATCH'}  (cuda {tuple(a.shape)} vs cpu reference)")
    print(f"loss = {loss_gpu.item():.6f} on {y_gpu.device}; {elapsed:.2f} s")
    return 0 if all(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
