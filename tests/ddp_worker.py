"""One rank of tests/test_ddp.py's 2-rank run (started by tritensor.distributed.run).

Every check compares DistributedDataParallel on this rank's half of a batch with one process's
plain model on the whole batch (float64, so the only difference is the order of the additions:
tolerance 1e-12). Prints ``DDP CHECKS <n>`` at the end.
"""
import sys

import tritensor as tt
import tritensor.distributed as dist
from tritensor.nn.parallel import DistributedDataParallel as DDP

CHECKS = [0]
TOL = 1e-12


def check(cond, what):
    if not cond:
        raise AssertionError(f"rank {dist.get_rank()}: {what}")
    CHECKS[0] += 1


def close(a, b):
    return a is not None and b is not None and (a - b).abs().max().item() <= TOL


def model(seed):
    tt.manual_seed(seed)
    return tt.nn.Sequential(tt.nn.Linear(4, 8), tt.nn.Tanh(), tt.nn.Linear(8, 2)).double()


def batch(step, n=8):
    g = tt.Generator()
    g.manual_seed(100 + step)
    return tt.randn(n, 4, generator=g).double(), tt.randn(n, 2, generator=g).double()


def half(t, rank):
    n = t.shape[0] // 2
    return t[rank * n:(rank + 1) * n]


def training(rank, **ddp_kwargs):
    """3 SGD steps: DDP (rank r starts from seed r; the broadcast makes it rank 0's) against the
    seed-0 model on the full batch; gradients and parameters compared after every step."""
    ref = model(0)
    ddp = DDP(model(rank), **ddp_kwargs)
    for p, q in zip(ddp.module.parameters(), ref.parameters()):
        check(close(p, q), "parameters broadcast from rank 0 at construction")
    opt, ref_opt = tt.optim.SGD(ddp.parameters(), lr=0.1), tt.optim.SGD(ref.parameters(), lr=0.1)
    for step in range(3):
        x, y = batch(step)
        opt.zero_grad()
        ref_opt.zero_grad()
        tt.nn.functional.mse_loss(ddp(half(x, rank)), half(y, rank)).backward()
        tt.nn.functional.mse_loss(ref(x), y).backward()
        for p, q in zip(ddp.module.parameters(), ref.parameters()):
            check(close(p.grad, q.grad), f"step {step}: DDP gradient equals the full-batch gradient ({ddp_kwargs})")
        opt.step()
        ref_opt.step()
    for p, q in zip(ddp.module.parameters(), ref.parameters()):
        check(close(p, q), "parameters equal after 3 steps")
    return ddp


def accumulation(rank):
    """Two micro-batches under no_sync(), the third outside: the reduced gradient is the sum of
    the three full micro-batch gradients; inside no_sync the gradient is this rank's own."""
    ref, ddp = model(0), DDP(model(rank))
    local = model(0)
    for step in range(3):
        x, y = batch(10 + step)
        if step < 2:
            with ddp.no_sync():
                tt.nn.functional.mse_loss(ddp(half(x, rank)), half(y, rank)).backward()
            tt.nn.functional.mse_loss(local(half(x, rank)), half(y, rank)).backward()
            for p, q in zip(ddp.module.parameters(), local.parameters()):
                check(close(p.grad, q.grad), "inside no_sync the gradient is the local one")
        else:
            tt.nn.functional.mse_loss(ddp(half(x, rank)), half(y, rank)).backward()
        tt.nn.functional.mse_loss(ref(x), y).backward()
    for p, q in zip(ddp.module.parameters(), ref.parameters()):
        check(close(p.grad, q.grad), "no_sync accumulation then one reduction equals the full-batch sum")


class Branches(tt.nn.Module):
    def __init__(self):
        super().__init__()
        tt.manual_seed(0)
        self.a = tt.nn.Linear(3, 2).double()
        self.b = tt.nn.Linear(3, 2).double()      # used on rank 0 only
        self.never = tt.nn.Linear(3, 2).double()  # used by no rank

    def forward(self, x, use_b):
        return self.a(x) + (self.b(x) if use_b else 0)


def unused(rank):
    x = tt.ones(2, 3, dtype=tt.float64) * (rank + 1)
    ddp = DDP(Branches(), find_unused_parameters=True)
    ddp(x, rank == 0).sum().backward()
    # a: mean of the ranks' gradients; b: rank 0's gradient over 2; never: untouched (None)
    ga = [[(1 + 2) / 2 * 2] * 3] * 2
    check(ddp.module.a.weight.grad.tolist() == ga, f"used parameter averaged: {ddp.module.a.weight.grad.tolist()}")
    check(ddp.module.b.weight.grad.tolist() == [[1.0] * 3] * 2, "a parameter one rank used: its gradient over 2")
    check(ddp.module.b.bias.grad.tolist() == [1.0, 1.0], "bias of the rank-0-only branch")
    check(ddp.module.never.weight.grad is None, "a parameter no rank used keeps .grad None")
    # without find_unused_parameters the next forward refuses, as torch
    plain = DDP(Branches())
    plain(x, False).sum().backward()
    try:
        plain(x, False)
    except RuntimeError as e:
        check(str(e).startswith("Expected to have finished reduction in the prior iteration before starting a new one.")
              and f"did not receive grad for rank {rank}: [" in str(e), str(e))
    else:
        check(False, "unfinished reduction not refused")


def buffers(rank):
    tt.manual_seed(0)
    net = tt.nn.Sequential(tt.nn.Linear(2, 2), tt.nn.BatchNorm1d(2)).double()
    with tt.no_grad():
        net[1].running_mean.fill_(float(rank + 5))
    ddp = DDP(net)
    check(net[1].running_mean.tolist() == [5.0, 5.0], "buffers broadcast from rank 0 at construction")
    net[1].running_mean.fill_(float(rank + 7))
    ddp.eval()
    ddp(tt.ones(2, 2, dtype=tt.float64))
    check(net[1].running_mean.tolist() == [7.0, 7.0], "buffers broadcast from rank 0 before each forward")


def syncbn(rank):
    """SyncBatchNorm on this rank's half (emulated cuda) against BatchNorm1d on the whole batch:
    outputs, the input's gradient, the summed weight/bias gradients, the running statistics."""
    g = tt.Generator()
    g.manual_seed(7)
    x_full = tt.randn(6, 3, 2, generator=g).double()
    c_full = tt.randn(6, 3, 2, generator=g).double()
    ref = tt.nn.BatchNorm1d(3).double()
    with tt.no_grad():
        ref.weight.copy_(tt.tensor([1.0, 2.0, -1.0]))
    sync = tt.nn.SyncBatchNorm.convert_sync_batchnorm(
        tt.nn.Sequential(tt.nn.BatchNorm1d(3).double())).to("cuda")[0]
    with tt.no_grad():
        sync.weight.copy_(tt.tensor([1.0, 2.0, -1.0]))
    check(type(sync).__name__ == "SyncBatchNorm", "converted")
    xr = x_full.detach().requires_grad_(True)
    yr = ref(xr)
    (yr * c_full).sum().backward()
    xl = half(x_full, rank).to("cuda").detach().requires_grad_(True)
    yl = sync(xl)
    (yl * half(c_full, rank).to("cuda")).sum().backward()
    check(close(yl.detach().cpu(), half(yr.detach(), rank)), "outputs normalised with the whole batch's statistics")
    check(close(xl.grad.cpu(), half(xr.grad, rank)), "input gradient through the all-reduced statistics")
    for name in ("weight", "bias"):
        gsum = getattr(sync, name).grad.detach().clone()
        dist.all_reduce(gsum)
        check(close(gsum.cpu(), getattr(ref, name).grad), f"{name} gradients sum to the full batch's")
    check(close(sync.running_mean.cpu(), ref.running_mean), "running mean of the whole batch")
    check(close(sync.running_var.cpu(), ref.running_var), "running var (unbiased) of the whole batch")
    sync.eval()
    check(close(sync(xl.detach()).cpu(), ref.eval()(half(x_full, rank))), "eval: plain batch norm, running stats")
    try:
        tt.nn.SyncBatchNorm(3).train()(tt.ones(2, 3))
    except ValueError as e:
        check(str(e).startswith("SyncBatchNorm expected input tensor to be on GPU"), str(e))
    else:
        check(False, "cpu input refused")


def main():
    dist.init_process_group("mpi")
    rank = dist.get_rank()
    training(rank)
    ddp = training(rank, bucket_cap_mb=64 / 2 ** 20)   # 64-byte buckets: several all-reduces
    check(len(ddp._buckets) > 2, f"several buckets ({len(ddp._buckets)})")
    check(ddp._buckets[0].indices[0] == len(ddp._params) - 1, "the first bucket holds the last parameters")
    g = training(rank, gradient_as_bucket_view=True)
    check(all(p.grad._base is not None for p in g.module.parameters()), "gradients are views of the buckets")
    accumulation(rank)
    unused(rank)
    buffers(rank)
    syncbn(rank)
    dist.destroy_process_group()
    print(f"DDP CHECKS {CHECKS[0]}", flush=True)


if __name__ == "__main__":
    sys.argv[1:] = sys.argv[2:]      # the marker argument only names the job
    main()
