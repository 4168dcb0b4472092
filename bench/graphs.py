"""python -m bench.graphs: the tutorial MLP's training step (bench/training.py: 784-512-512-10 at
batch 64, CrossEntropyLoss, SGD with momentum) eager against the same step captured as one CUDA
graph and replayed (issue 26 item 6). GPU goal: the graphed step at least 2x the eager step's
throughput (a step is ~20 small launches, so eager is host-bound); not measured until a GPU runs
it. On the emulated device (``--small``) it is a smoke check: replay re-runs the recorded
launches under the interpreter, whose cost dominates both columns.
"""
from __future__ import annotations

import argparse

import tritensor as tt

from .training import _sync, make_step, median_ms


def make_graphed(step, warmup=3):
    """``step`` (a thunk returning the loss) captured whole: warm-up steps on a side stream (every
    kernel specialisation launched once, the optimizer's state made), then one capture. Returns a
    thunk that replays the graph and returns the static loss tensor (and keeps ``step`` alive)."""
    side = tt.cuda.Stream()
    side.wait_stream(tt.cuda.current_stream())
    with tt.cuda.stream(side):
        for _ in range(warmup):
            step()
    tt.cuda.current_stream().wait_stream(side)
    graph = tt.cuda.CUDAGraph()
    with tt.cuda.graph(graph):
        static_loss = step()

    def replay():
        graph.replay()
        return static_loss
    # a graph keeps no tensor alive (torch's rule): the step's closure holds the model, the
    # static batch and the optimizer's state, whose memory the replays read and write
    replay.graph, replay.step = graph, step
    return replay


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="tiny sizes: a smoke check")
    parser.add_argument("--rep", type=int, default=50)
    args = parser.parse_args(argv)
    sync = _sync(tt, "cuda")
    eager = median_ms(make_step(tt, "mlp", "cuda", args.small), sync, rep=args.rep)
    graphed = median_ms(make_graphed(make_step(tt, "mlp", "cuda", args.small)), sync, rep=args.rep)
    device = "emulated" if tt.cuda.is_emulated() else tt.cuda.get_device_name()
    batch = max(64 // 16, 2) if args.small else 64        # make_step's smoke sizes divide by 16
    print(f"MLP training step, batch {batch}{' (small)' if args.small else ''}, {device}: eager {eager:.3f} ms, "
          f"graphed {graphed:.3f} ms, graphed/eager throughput {eager / graphed:.2f}x (GPU goal >= 2x)")


if __name__ == "__main__":
    main()
