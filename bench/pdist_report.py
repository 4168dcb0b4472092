"""pdist benchmarks (issue 15): tritensor's pdist against torch.pdist, torch.cdist and the matmul
formulation in torch, measured in the same run.

    python -m bench.pdist_report            # the GPU table (N = 1024, 4096, 16384; D = 128)
    python -m bench.pdist_report --cpu      # the cpu check: uniformity loss at N = 4096, D = 128

Workloads, for each N (float32 rows of unit norm, as the uniformity loss of Wang & Isola uses):
  - "pdist": the distances alone, forward and forward+backward (backward of their sum);
  - "uniformity": log(mean(exp(-t * pdist(x) ** 2))), forward and forward+backward.
torch.cdist computes the full N x N matrix (its natural output), then, for the uniformity loss, its
upper triangle through precomputed indices; the matmul formulation is |x_i|^2 + |x_j|^2 - 2 <x_i, x_j>
with one x @ x.T, its upper triangle, and (for "pdist" only) the square root.

Peers are used only where importable; tritensor never needs them. On the emulated device the
sizes shrink to a smoke check and the figures mean nothing.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

T = 2.0   # the uniformity loss's temperature


def unit_rows(n, d, seed=0):
    x = np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


# --------------------------------------------------------------------------- the workloads
def tritensor_fns(host, device):
    """{(workload, pass): thunk} for tritensor on ``device``."""
    import tritensor as tt
    x = tt.tensor(host, device=device)
    xg = tt.tensor(host, device=device, requires_grad=True)

    def uniformity(v):
        return tt.pdist(v).pow(2).mul(-T).exp().mean().log()

    def backward(loss_fn):
        def run():
            xg.grad = None
            loss = loss_fn(xg)
            loss.backward()
            return loss
        return run

    return {
        ("pdist", "forward"): lambda: tt.pdist(x),
        ("pdist", "forward+backward"): backward(lambda v: tt.pdist(v).sum()),
        ("uniformity", "forward"): lambda: uniformity(x),
        ("uniformity", "forward+backward"): backward(uniformity),
    }


def torch_fns(torch, host, device, formulation):
    """{(workload, pass): thunk} for torch: formulation is "torch.pdist", "torch.cdist" or
    "matmul" (|x|^2 + |y|^2 - 2 x @ x.T)."""
    x = torch.from_numpy(host).to(device)
    xg = x.clone().requires_grad_()
    n = host.shape[0]
    iu = torch.triu_indices(n, n, 1, device=device)

    def distances(v):
        if formulation == "torch.pdist":
            return torch.pdist(v)
        if formulation == "torch.cdist":
            return torch.cdist(v, v)[iu[0], iu[1]]
        return squared(v)[iu[0], iu[1]].clamp_min(0).sqrt()

    def squared(v):
        sq = (v * v).sum(1)
        return sq[:, None] + sq[None, :] - 2 * (v @ v.T)

    def pdist_fwd(v):
        if formulation == "torch.cdist":      # cdist's natural output: the full matrix
            return torch.cdist(v, v)
        return distances(v)                   # matmul: the packed triangle, as pdist's

    def uniformity(v):
        if formulation == "matmul":            # the rewrite: no square root at all
            return squared(v)[iu[0], iu[1]].mul(-T).exp().mean().log()
        return distances(v).pow(2).mul(-T).exp().mean().log()

    def backward(loss_fn):
        def run():
            xg.grad = None
            loss = loss_fn(xg)
            loss.backward()
            return loss
        return run

    return {
        ("pdist", "forward"): lambda: pdist_fwd(x),
        ("pdist", "forward+backward"): backward(lambda v: pdist_fwd(v).sum()),
        ("uniformity", "forward"): lambda: uniformity(x),
        ("uniformity", "forward+backward"): backward(uniformity),
    }


PEERS = ("torch.pdist", "torch.cdist", "matmul")


def _torch_cuda():
    try:
        import torch
        return torch if torch.cuda.is_available() else None
    except Exception:
        return None


# --------------------------------------------------------------------------- the GPU table
def pdist_report(rep=20, sizes=(1024, 4096, 16384), d=128, emulated=False):
    """Print and return the table: tritensor's milliseconds and each peer's, per case."""
    import tritensor as tt

    from .timing import median_ms
    if emulated:
        sizes, d, rep = (16, 40), 8, 2
    torch = None if emulated else _torch_cuda()
    sync = tt.cuda.synchronize
    rows = []
    for n in sizes:
        host = unit_rows(n, d)
        ours = tritensor_fns(host, "cuda")
        theirs = {name: torch_fns(torch, host, "cuda", name) for name in PEERS} if torch else {}
        for key, fn in ours.items():
            row = {"case": f"{key[0]} {key[1]} N={n} D={d}", "tritensor ms": median_ms(fn, rep=rep, sync=sync)}
            for name, fns in theirs.items():
                try:
                    ms = median_ms(fns[key], rep=rep, sync=torch.cuda.synchronize)
                except RuntimeError as e:      # a peer that cannot run this size (torch.pdist's
                    torch.cuda.empty_cache()   # backward at N = 16384 asks for 128 GiB) is reported,
                    row[f"{name} ms"] = f"failed: {type(e).__name__}"     # and the table goes on
                    continue
                row[f"{name} ms"] = ms
                row[f"vs {name}"] = ms / row["tritensor ms"]
            rows.append(row)
        del ours, theirs
    cols = []
    for r in rows:
        cols += [c for c in r if c not in cols]
    print("\n" + " | ".join(cols))
    for r in rows:
        print(" | ".join(f"{r[c]:.3g}" if isinstance(r.get(c), float) else str(r.get(c, "")) for c in cols))
    return rows


# --------------------------------------------------------------------------- the cpu check
def _best_seconds(fns, rep):
    """Best-of-``rep`` seconds of each thunk, the thunks taking turns (round after round), so
    that a shared machine's changing load falls on all of them alike."""
    for fn in fns.values():
        fn()
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rep):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


def cpu_ratio(n=4096, d=128, rep=5):
    """Uniformity loss forward+backward on the cpu device (the blocked NumPy reference) against
    torch's CPU pdist (and the other peers) for the same thing, in one run, interleaved."""
    host = unit_rows(n, d)
    key = ("uniformity", "forward+backward")
    fns = {"tritensor (cpu)": tritensor_fns(host, "cpu")[key]}
    try:
        import torch
    except Exception:
        torch = None
    if torch is not None:
        for name in PEERS:
            fns[f"{name} (cpu)"] = torch_fns(torch, host, "cpu", name)[key]
    result = {f"{k} s": v for k, v in _best_seconds(fns, rep).items()}
    if torch is not None:
        result["tritensor / torch.pdist"] = result["tritensor (cpu) s"] / result["torch.pdist (cpu) s"]
    print(f"uniformity loss forward+backward, N={n}, D={d}, float32, best of {rep} (interleaved):")
    for k, v in result.items():
        print(f"  {k}: {v:.4g}")
    return result


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cpu", action="store_true", help="the cpu check (item 7) instead of the GPU table")
    p.add_argument("--rep", type=int, default=20)
    p.add_argument("-n", type=int, default=4096, help="rows for --cpu")
    args = p.parse_args(argv)
    if args.cpu:
        cpu_ratio(n=args.n, rep=min(args.rep, 5))
        return 0
    from tritensor.selfcheck import _pick_device
    _pick_device()
    import tritensor as tt
    emulated = tt.cuda.is_emulated()
    if emulated:
        print("NOTE: emulated device (Triton interpreter): absolute figures mean nothing.")
    print(f"device: {tt.cuda.get_device_name()}")
    pdist_report(rep=args.rep, emulated=emulated)
    return 0


if __name__ == "__main__":
    sys.exit(main())
