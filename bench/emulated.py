"""python -m bench.emulated: the emulated device's speed (issue 23 item 8), per launch profile.

The emulated cuda device runs the Triton kernels under Triton's interpreter, where a program
costs ~0.3 ms of Python whatever its block and a block's NumPy arithmetic little more for 16k
elements than for 128: the launch configuration, not the work, sets the time. Each case runs
under the "small" profile (the small blocks the op tests use to cross block edges: what every
emulated launch used before the profiles) and the "fast" one (the emulated default), in the same
run; each figure is the best of ``--repeat`` rounds, as wall time and as this process's CPU time
(on a shared machine the wall time also counts other processes' turns).

- ``a + 1.0 64x256``, ``a + b 16k``: elementwise, 16 384 float32 elements;
- ``sum 65k``, ``sum(0) 256x256``: a whole and a column reduction of a 256x256 float32 tensor;
- ``softmax 64x10``, ``matmul 64x256x256``: the main job's loss and product shapes;
- ``MLP step``: one training step of the main job's network (64-256-256-10, batch 64,
  CrossEntropyLoss, Adam): forward, backward, optimizer step;
- ``--epoch``: ``python -m tritensor --device cuda --epochs 1`` in a fresh process per profile
  (TRITENSOR_EMULATED_BLOCKS), its reported epoch time.

Goals: ``a + b 16k`` and ``sum 65k`` under 20 ms, the main job's epoch at most 10 s (fast).
OPENBLAS_NUM_THREADS=1 is set before NumPy loads: the interpreter's tl.dot is np.matmul on small
blocks, where BLAS threads only contend.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("TRITENSOR_EMULATE_CUDA", "1")

import argparse  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

GOALS_MS = {"a + b 16k": 20.0, "sum 65k": 20.0}
EPOCH_GOAL_S = 10.0


def _best(fn, repeat):
    fn()                                    # first call: compile the plan, warm the caches
    wall = cpu = float("inf")
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall, cpu = min(wall, time.perf_counter() - w0), min(cpu, time.process_time() - c0)
    return wall * 1e3, cpu * 1e3


def cases(tt):
    """name -> a function of no arguments (inputs made under the profile in force)."""
    from tritensor import __main__ as main_job

    def elementwise_scalar():
        a = tt.randn(64, 256, device="cuda")
        return lambda: a + 1.0

    def elementwise_pair():
        b, c = tt.randn(16384, device="cuda"), tt.randn(16384, device="cuda")
        return lambda: b + c

    def whole_sum():
        w = tt.randn(256, 256, device="cuda")
        return lambda: w.sum()

    def column_sum():
        w = tt.randn(256, 256, device="cuda")
        return lambda: w.sum(0)

    def softmax():
        x = tt.randn(64, 10, device="cuda")
        return lambda: tt.softmax(x, 1)

    def matmul():
        x, w = tt.randn(64, 256, device="cuda"), tt.randn(256, 256, device="cuda")
        return lambda: x @ w

    def mlp_step():
        tt.manual_seed(0)
        model = main_job.build_model(tt, 256).to("cuda")
        optimizer = tt.optim.Adam(model.parameters(), lr=1e-3)
        loss_fn = tt.nn.CrossEntropyLoss()
        x, y = tt.rand(64, 8, 8, device="cuda"), tt.randint(0, 10, (64,), device="cuda")

        def step():
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            return loss.item()
        return step

    return {"a + 1.0 64x256": elementwise_scalar, "a + b 16k": elementwise_pair, "sum 65k": whole_sum,
            "sum(0) 256x256": column_sum, "softmax 64x10": softmax, "matmul 64x256x256": matmul,
            "MLP step": mlp_step}


def epoch_seconds(profile):
    """The main job's first-epoch time on the emulated device under ``profile`` (a fresh process)."""
    env = dict(os.environ, TRITENSOR_EMULATE_CUDA="1", TRITENSOR_EMULATED_BLOCKS=profile)
    done = subprocess.run([sys.executable, "-m", "tritensor", "--device", "cuda", "--epochs", "1"], env=env,
                          capture_output=True, text=True, timeout=3600)
    found = re.search(r"epoch\s+1:.*\(([\d.]+) s\)", done.stdout)
    if done.returncode != 0 or not found:
        raise RuntimeError(f"python -m tritensor failed under {profile}: {done.stdout[-2000:]}{done.stderr[-2000:]}")
    return float(found.group(1))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.emulated", description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--profiles", default="small,fast", help="comma-separated: small, fast, gpu")
    parser.add_argument("--epoch", action="store_true", help="also time the main job's epoch per profile")
    args = parser.parse_args(argv)
    import tritensor as tt
    from tritensor.backends import triton as tb
    if not tt.cuda.is_emulated():
        raise SystemExit("bench.emulated measures the emulated device: run it where no GPU is used")
    profiles = [p.strip() for p in args.profiles.split(",") if p.strip()]
    table = {}
    for name, make in cases(tt).items():
        for profile in profiles:
            with tb.emulated_blocks(profile):
                table[name, profile] = _best(make(), args.repeat)
    print("emulated device (Triton's interpreter), best of %d; wall ms (cpu ms)" % args.repeat)
    print(f"{'case':22s}" + "".join(f"{p:>22s}" for p in profiles) + "   goal")
    for name in cases(tt):
        row = "".join(f"{table[name, p][0]:12.1f} ({table[name, p][1]:6.1f})" for p in profiles)
        goal = GOALS_MS.get(name)
        print(f"{name:22s}{row}   {'< %g ms' % goal if goal else ''}")
    if args.epoch:
        for profile in profiles:
            print(f"main job epoch ({profile}): {epoch_seconds(profile):.2f} s   goal (fast): <= {EPOCH_GOAL_S:g} s")


if __name__ == "__main__":
    main()
