"""One rank of tests/test_distributed.py's multi-rank runs (started by tritensor.distributed.run).

``collectives``: every collective, on every dtype and ReduceOp, checked against NumPy on values
each rank can compute for every other rank (rank r contributes ``_values(dtype, r)``), plus the
mismatch errors, which every rank must raise and survive. Prints ``CHECKS <n>`` at the end.
``dead``: rank 1 exits in the middle; rank 0's next collective must fail naming rank 1.
``stall``: rank 1 sleeps past the timeout; rank 0 must abort with the watchdog message.
"""
import datetime
import os
import sys
import time

import numpy as np

import tritensor as tt
import tritensor.distributed as dist

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
CHECKS = [0]


def _values(dtype, rank, n=6):
    """Rank ``rank``'s input: small values (exact in every dtype, products without overflow)."""
    if dtype == "bool":
        return np.array([(i + rank) % 3 == 0 for i in range(n)])
    base = (np.arange(n) % 4) + 1 + rank          # 1..4 (+rank): positive, so uint8 fits
    if dtype not in ("bool", "uint8") and n > 2:
        base = base * np.where(np.arange(n) % 3 == 0, -1, 1)
    return base.astype(np.float64)


def _tt(values, dtype, device="cpu"):
    return tt.tensor(values.tolist(), dtype=getattr(tt, dtype), device=device)


def _np(t):
    return np.asarray(t.detach().cpu().float().tolist() if t.dtype in (tt.bfloat16, tt.float16) else t.detach().cpu().tolist())


def check(cond, what):
    if not cond:
        raise AssertionError(f"rank {dist.get_rank()}: {what}")
    CHECKS[0] += 1


def expected(op, dtype, ranks):
    rows = np.stack([_values(dtype, r) for r in ranks])
    n = len(ranks)
    if dtype == "bool":
        rows = rows.astype(bool)
        return {"SUM": rows.any(0), "PRODUCT": rows.all(0), "MIN": rows.all(0), "MAX": rows.any(0),
                "BAND": rows.all(0), "BOR": rows.any(0), "BXOR": np.logical_xor.reduce(rows, 0)}[op]
    ints = rows.astype(np.int64)
    return {"SUM": rows.sum(0), "PRODUCT": rows.prod(0), "MIN": rows.min(0), "MAX": rows.max(0),
            "AVG": rows.sum(0) / n if dtype.startswith(("float", "bfloat")) else np.trunc(rows.sum(0) / n),
            "BAND": np.bitwise_and.reduce(ints, 0), "BOR": np.bitwise_or.reduce(ints, 0),
            "BXOR": np.bitwise_xor.reduce(ints, 0), "PREMUL_SUM": rows.sum(0) * 0.5}[op]


def ops_for(dtype):
    if dtype == "bool":
        return ["SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]
    if dtype.startswith(("float", "bfloat")):
        return ["SUM", "PRODUCT", "MIN", "MAX", "AVG", "PREMUL_SUM"]
    return ["SUM", "PRODUCT", "MIN", "MAX", "AVG", "BAND", "BOR", "BXOR"]


def _op(name):
    return dist._make_nccl_premul_sum(0.5) if name == "PREMUL_SUM" else getattr(dist.ReduceOp, name)


def _same(t, want, what):
    got = _np(t)
    check(got.shape == np.asarray(want).shape and np.array_equal(got, np.asarray(want, dtype=got.dtype)),
          f"{what}: got {got.tolist()}, want {np.asarray(want).tolist()}")


def collectives():
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))   # a loaded machine imports slowly
    r, n = dist.get_rank(), dist.get_world_size()
    ranks = range(n)
    check(os.environ["RANK"] == str(r) and os.environ["WORLD_SIZE"] == str(n) and os.environ["LOCAL_RANK"] == str(r)
          and os.environ["MASTER_ADDR"] and os.environ["MASTER_PORT"], "torchrun's variables")
    for dtype in DTYPES:
        for op in ops_for(dtype):
            t = _tt(_values(dtype, r), dtype)
            dist.all_reduce(t, op=_op(op))
            _same(t, expected(op, dtype, ranks), f"all_reduce {dtype} {op}")
            t = _tt(_values(dtype, r), dtype)
            dist.reduce(t, dst=1, op=_op(op))
            _same(t, expected(op, dtype, ranks) if r == 1 else _values(dtype, r), f"reduce {dtype} {op}")
        # reduce_scatter_tensor: rank q's chunk q of the reduced (n*3) vector
        inp = np.concatenate([_values(dtype, r, 3) + 0 * k for k in range(n)])
        out = tt.zeros(3, dtype=getattr(tt, dtype))
        dist.reduce_scatter_tensor(out, _tt(inp, dtype), op=dist.ReduceOp.MAX)
        rows = np.stack([_values(dtype, q, 3) for q in ranks])
        _same(out, rows.max(0) if dtype != "bool" else rows.astype(bool).any(0), f"reduce_scatter_tensor {dtype}")
        # broadcast / all_gather / all_gather_into_tensor / gather / scatter / all_to_all move bytes
        t = _tt(_values(dtype, r), dtype)
        dist.broadcast(t, src=1)
        _same(t, _values(dtype, 1), f"broadcast {dtype}")
        outs = [tt.zeros(6, dtype=getattr(tt, dtype)) for _ in ranks]
        dist.all_gather(outs, _tt(_values(dtype, r), dtype))
        for q in ranks:
            _same(outs[q], _values(dtype, q), f"all_gather {dtype}")
        big = tt.zeros(n, 6, dtype=getattr(tt, dtype))
        dist.all_gather_into_tensor(big, _tt(_values(dtype, r), dtype))
        _same(big, np.stack([_values(dtype, q) for q in ranks]), f"all_gather_into_tensor {dtype}")
        gl = [tt.zeros(6, dtype=getattr(tt, dtype)) for _ in ranks] if r == 0 else None
        dist.gather(_tt(_values(dtype, r), dtype), gl, dst=0)
        if r == 0:
            for q in ranks:
                _same(gl[q], _values(dtype, q), f"gather {dtype}")
        t = tt.zeros(6, dtype=getattr(tt, dtype))
        dist.scatter(t, [_tt(_values(dtype, 10 + q), dtype) for q in ranks] if r == 1 else None, src=1)
        _same(t, _values(dtype, 10 + r), f"scatter {dtype}")
    # all_to_all with unequal sizes: rank r sends r+q+1 elements to rank q
    ins = [tt.full((r + q + 1,), float(10 * r + q)) for q in ranks]
    outs = [tt.zeros(q + r + 1) for q in ranks]
    dist.all_to_all(outs, ins)
    for q in ranks:
        _same(outs[q], np.full(q + r + 1, 10.0 * q + r), "all_to_all")
    # reduce_scatter (a list per rank), all_to_all_single (equal dim-0 slices)
    out = tt.zeros(2, dtype=tt.int32)
    dist.reduce_scatter(out, [tt.tensor([10 * r + q, -q], dtype=tt.int32) for q in ranks])
    _same(out, [sum(10 * p + r for p in ranks), -r * n], "reduce_scatter")
    o = tt.zeros(n, 2)
    dist.all_to_all_single(o, tt.tensor([[10.0 * r + q, 1.0] for q in ranks]))
    _same(o, [[10.0 * q + r, 1.0] for q in ranks], "all_to_all_single")
    # point to point, blocking and not, tags, any source
    if r == 0:
        dist.send(tt.tensor([1.5, 2.5]), dst=1, tag=3)
        w = dist.isend(tt.arange(4, dtype=tt.int16), dst=1)
        w.wait()
        check(w.is_completed(), "isend completed")
    else:
        t = tt.zeros(2)
        src = dist.recv(t, src=0, tag=3)
        _same(t, [1.5, 2.5], "recv")
        check(src == 0, "recv returns the sender")
        t = tt.zeros(4, dtype=tt.int16)
        w = dist.irecv(t)             # any source
        w.wait()
        _same(t, [0, 1, 2, 3], "irecv from any source")
    # async_op: a Work per collective, results only after wait()
    t = tt.full((1000,), float(r + 1))
    w = dist.all_reduce(t, async_op=True)
    check(isinstance(w, dist.Work), "async_op returns Work")
    w.wait()
    check(w.is_completed() and w.is_success(), "Work done after wait")
    _same(t, np.full(1000, float(sum(q + 1 for q in ranks))), "async all_reduce")
    check(dist.all_reduce(tt.ones(1)) is None, "sync returns None")
    # non-contiguous tensors and the emulated cuda device
    base = tt.zeros(3, 4)
    view = base[:, ::2]
    view.copy_(tt.full((3, 2), float(r + 1)))
    dist.all_reduce(view)
    _same(base, np.tile([3.0, 0.0], (3, 2)) if n == 2 else None, "all_reduce on a strided view")
    c = tt.full((5,), float(r + 1), device="cuda")
    dist.all_reduce(c, op=dist.ReduceOp.PRODUCT)
    check(c.device.type == "cuda", "stays on cuda")
    _same(c, np.full(5, float(np.prod([q + 1 for q in ranks]))), "all_reduce on the emulated cuda device")
    # objects, through the allowlisted unpickler
    objs = [None] * n
    dist.all_gather_object(objs, {"rank": r, "name": f"r{r}", "t": tt.tensor([r])})
    check([o["rank"] for o in objs] == list(ranks) and objs[1]["t"].tolist() == [1], "all_gather_object")
    lst = [{"lr": 0.1}, "x", 3] if r == 0 else [None, None, None]
    dist.broadcast_object_list(lst, src=0)
    check(lst == [{"lr": 0.1}, "x", 3], "broadcast_object_list")
    gl = [None] * n if r == 1 else None
    dist.gather_object((r, "g"), gl, dst=1)
    check(r != 1 or gl == [(q, "g") for q in ranks], "gather_object")
    outl = [None]
    dist.scatter_object_list(outl, [f"s{q}" for q in ranks] if r == 0 else None, src=0)
    check(outl == [f"s{r}"], "scatter_object_list")
    # a peer cannot make this process run code: a class outside the allowlist is refused
    try:
        dist.broadcast_object_list([Evil()] if r == 0 else [None], src=0)
        check(r == 0, "an object outside the allowlist is refused")
    except Exception as e:
        check(r == 1 and "Weights only load failed" in str(e) and not EVIL_RAN, f"refused: {e}")
    # groups
    g = dist.new_group([1])
    if r == 1:
        check(dist.get_rank(g) == 0 and dist.get_world_size(g) == 1, "group rank")
        t = tt.ones(2)
        dist.all_reduce(t, group=g)
        _same(t, [1.0, 1.0], "all_reduce in a one-rank group")
    else:
        check(g is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(g) == -1, "non-member")
    g2 = dist.new_group([0, 1])
    t = tt.tensor([float(r)])
    dist.broadcast(t, src=1, group=g2)
    _same(t, [1.0], "broadcast in a new group (global src)")
    # mismatched collectives: an error on every rank, before any data moves; the group survives
    for bad, text in ((lambda: dist.all_reduce(tt.ones(3 + r)), "TensorShape=[3]"),
                      (lambda: dist.all_reduce(tt.ones(3, dtype=tt.float32 if r == 0 else tt.float64)), "TensorDtypes=Float"),
                      (lambda: dist.broadcast(tt.ones(2), src=0) if r == 0 else dist.all_reduce(tt.ones(2)), "OpType=BROADCAST")):
        try:
            bad()
            check(False, "a mismatch must raise")
        except RuntimeError as e:
            msg = str(e)
            check(msg.startswith("Detected mismatch between collectives on ranks. Rank ") and text in msg
                  and "CollectiveFingerPrint(SequenceNumber=" in msg, f"mismatch text: {msg}")
    t = tt.ones(2)
    dist.all_reduce(t)
    _same(t, [2.0, 2.0], "collectives after a mismatch")
    # torch's argument errors
    for call, etype, text in (
            (lambda: dist.broadcast(tt.ones(1), src=n), RuntimeError, f"ProcessGroupMPI::broadcast: invalid root rank: {n}"),
            (lambda: dist.all_gather([tt.ones(1)], tt.ones(1)), RuntimeError, "All gather: number of output tensors should equal to the world size"),
            (lambda: dist.all_gather_into_tensor(tt.ones(3), tt.ones(1)), ValueError, "output tensor size must be equal to world_size times input tensor size"),
            (lambda: dist.send(tt.ones(1), dst=r), ValueError, "Invalid destination rank: destination rank should not be the same as the rank of the current process."),
            (lambda: dist.gather(tt.ones(1), [tt.ones(1)] * n, dst=1 - r), ValueError, "Argument ``gather_list`` must NOT be specified on non-destination ranks.")):
        try:
            call()
            check(False, f"{text} expected")
        except etype as e:
            check(str(e) == text, f"error text {e!r}")
    dist.barrier()
    check(dist.barrier(async_op=True).wait(), "async barrier")
    dist.monitored_barrier(timeout=datetime.timedelta(seconds=30))
    dist.destroy_process_group()
    check(not dist.is_initialized(), "destroyed")
    print(f"CHECKS {CHECKS[0]} rank {r}", flush=True)


EVIL_RAN = False


def _evil():
    global EVIL_RAN
    EVIL_RAN = True


class Evil:
    def __reduce__(self):
        return (_evil, ())


def dead():
    """Also with the fingerprints off (TORCH_DISTRIBUTED_DEBUG=OFF): the data operation itself
    watches its peers' processes."""
    dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=30))
    t = tt.ones(4)
    dist.all_reduce(t)
    if dist.get_rank() == 1:
        os._exit(3)               # a crash: no exception, no goodbye
    dist.all_reduce(t)
    print("rank 0 passed a collective its peer never joined", flush=True)


def stall():
    dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=1.5))
    dist.barrier()
    if dist.get_rank() == 1:
        time.sleep(60)            # far past the timeout: the job must be aborted, not waited for
    t = tt.ones(4)
    dist.broadcast(t, src=0)
    print("rank 0 passed a collective its peer never joined", flush=True)


if __name__ == "__main__":
    {"collectives": collectives, "dead": dead, "stall": stall}[sys.argv[1]]()
