"""Where an optimizer step's time goes on a GPU (run by hand: python -m bench.optim_probe): the
host's share (step() returns before the kernel ends) against the synchronised step, at two model
sizes (a kernel-bound step scales with the size, a host-bound one does not)."""

import numpy as np

import tritensor as tt

from .timing import min_seconds


def _params(blocks):
    rng = np.random.default_rng(0)
    params = []
    for _ in range(blocks):
        for shape in [(1024, 1024), (1024,)]:
            p = tt.tensor(rng.standard_normal(shape).astype(np.float32), device="cuda", requires_grad=True)
            p.grad = tt.tensor(rng.standard_normal(shape).astype(np.float32), device="cuda")
            params.append(p)
    return params


def _min_time(fn, reps=30):
    """Microseconds."""
    return min_seconds(fn, reps) * 1e6


def main():
    for name, make in [("Adam", lambda ps: tt.optim.Adam(ps, lr=1e-3)),
                       ("SGD", lambda ps: tt.optim.SGD(ps, lr=1e-3, momentum=0.9)),
                       ("Adagrad", lambda ps: tt.optim.Adagrad(ps, lr=1e-3))]:
        for blocks in (24, 96):
            params = _params(blocks)
            opt = make(params)
            for _ in range(3):
                opt.step()
            tt.cuda.synchronize()
            synced = _min_time(lambda: (opt.step(), tt.cuda.synchronize()))
            host = _min_time(opt.step)
            tt.cuda.synchronize()
            # the host's own work: step() timed from an idle GPU (nothing to wait for)
            idle = _min_time(lambda: (tt.cuda.synchronize(), opt.step()))
            tt.cuda.synchronize()
            numel = sum(p.numel() for p in params)
            print(f"{name:8s} {len(params):4d} params {numel / 1e6:6.1f}M: step+sync {synced:8.1f} us, "
                  f"host only {host:7.1f} us, from an idle GPU {idle:7.1f} us")


def sweep():
    """The fused kernels' launch settings (backends/triton/optim.py GPU_SETTINGS) on a 100.8M
    parameter model: synchronised step time and the bandwidth it implies."""
    from tritensor.backends.triton import optim as to
    params = _params(96)
    numel = sum(p.numel() for p in params)
    for name, make, values in [("Adam", lambda ps: tt.optim.Adam(ps, lr=1e-3), 7),
                               ("SGD", lambda ps: tt.optim.SGD(ps, lr=1e-3, momentum=0.9), 5)]:
        opt = make(params)
        for block, iters, warps in [(1024, 4, 4), (1024, 1, 4), (2048, 1, 8), (4096, 1, 8), (2048, 2, 4),
                                    (512, 8, 4), (1024, 8, 8), (8192, 1, 16)]:
            to.GPU_SETTINGS = {"block": block, "iters": iters, "warps": warps}
            for _ in range(2):
                opt.step()
            tt.cuda.synchronize()
            synced = _min_time(lambda: (opt.step(), tt.cuda.synchronize()), reps=15)
            print(f"{name:5s} block {block:5d} iters {iters} warps {warps:2d}: {synced:8.1f} us "
                  f"{values * 4 * numel / synced / 1e6:5.2f} TB/s")


if __name__ == "__main__":
    import sys
    sweep() if "--sweep" in sys.argv else main()
