"""The one communication interface of tt.distributed, and its engines.

``Engine`` is the seam: distributed_c10d.py checks arguments as torch does and hands tensors to
an engine, which returns a ``Work``. Two engines implement it:

- ``MPIEngine`` (mpi4py): tensors in host memory (cpu, and the emulated cuda device, whose memory
  is host memory too); a tensor on a real GPU is staged through host memory. Every operation is
  an MPI nonblocking call (Iallreduce, Ibcast ...) polled against the group's deadline, so a dead
  or stalled peer becomes an error naming it instead of a hang. Before each collective the ranks
  exchange a small fingerprint (sequence number, op, shape, dtype, root) point-to-point on a
  private communicator: a rank that has not arrived is known by name, and a collective whose
  shape or dtype differs across ranks is refused on every rank before any data moves (torch's
  TORCH_DISTRIBUTED_DEBUG=DETAIL check; TORCH_DISTRIBUTED_DEBUG=OFF turns it off).
- ``NCCLEngine`` (cupy.cuda.nccl): tensors on a real GPU, enqueued on the current stream. Its
  unique id is broadcast over MPI. It has never run here (no GPU in this project's sessions).
"""
from __future__ import annotations

import os
import time

import numpy as np

from . import _state


class DistBackendError(RuntimeError):
    """torch.distributed.DistBackendError: a communication failure (a dead or stalled peer)."""


# --------------------------------------------------------------------------- reduce ops
class RedOpType(int):
    """ReduceOp.RedOpType's values (torch's enum: SUM=0, AVG=1, PRODUCT=2, MIN=3, MAX=4, BAND=5,
    BOR=6, BXOR=7, PREMUL_SUM=8)."""
    _names = ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM")

    @property
    def name(self):
        return self._names[int(self)]

    @property
    def value(self):
        return int(self)

    def __repr__(self):
        return f"<RedOpType.{self.name}: {int(self)}>"

    __str__ = __repr__


class _PremulSum:
    """ReduceOp.PREMUL_SUM with its factor (torch.distributed._make_nccl_premul_sum)."""

    def __init__(self, factor):
        self.factor = factor
        self.op = RedOpType(8)

    def __repr__(self):
        return f"<RedOpType.PREMUL_SUM: 8 (factor {self.factor})>"


def op_type(op) -> int:
    return 8 if isinstance(op, _PremulSum) else int(op)


# --------------------------------------------------------------------------- Work
class Work:
    """torch.distributed.Work: the handle of an operation in flight (``async_op=True``).

    ``wait()`` blocks until it is done (polling MPI against the group's timeout) and returns True;
    ``is_completed()`` asks without blocking. ``finish`` runs once when the requests complete
    (write-back of staged results, AVG's division, half precision's reduction)."""

    def __init__(self, engine=None, requests=(), finish=None, what="", keep=None, result=None, statuses=None):
        self._engine = engine
        self._statuses = statuses      # a receive's status names its sender (recv(src=None))
        self._requests = list(requests)
        self._finish = finish
        self._what = what
        self._keep = keep              # buffers MPI reads or writes until the requests complete
        self._done = not self._requests
        self._result = result
        self._exception = None
        if self._done:
            self._complete()

    def _complete(self):
        self._done = True
        self._keep = None
        if self._finish is not None:
            finish, self._finish = self._finish, None
            out = finish()
            if out is not None:
                self._result = out

    def is_completed(self) -> bool:
        if not self._done and self._engine.test(self._requests, self._statuses):
            self._complete()
        return self._done

    def is_success(self) -> bool:
        return self._done and self._exception is None

    def exception(self):
        return self._exception

    def wait(self, timeout=None) -> bool:
        if not self._done:
            seconds = None if timeout is None else (timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout))
            self._engine.wait(self._requests, self._what, seconds, statuses=self._statuses)
            self._complete()
        return True

    def result(self):
        return self._result

    def source_rank(self) -> int:
        return int(self._result) if self._result is not None else -1

    def synchronize(self):
        self.wait()


# --------------------------------------------------------------------------- the interface
class Engine:
    """What a process group needs from a transport. Tensors in, ``Work`` out; ranks are the
    group's own (0 .. size-1). Every method is called on every rank of the group in the same order
    (point-to-point ones excepted)."""

    name = "?"

    def rank(self) -> int: ...
    def size(self) -> int: ...
    def allreduce(self, tensor, op, what) -> Work: ...
    def broadcast(self, tensor, root, what) -> Work: ...
    def allgather(self, out_flat, tensor, what) -> Work: ...
    def reduce(self, tensor, root, op, what) -> Work: ...
    def reduce_scatter(self, out, inp_flat, op, what) -> Work: ...
    def gather(self, out_flat, tensor, root, what) -> Work: ...
    def scatter(self, tensor, in_flat, root, what) -> Work: ...
    def alltoall(self, outs, ins, what) -> Work: ...
    def send(self, tensor, dst, tag) -> Work: ...
    def recv(self, tensor, src, tag) -> Work: ...
    def barrier(self, what) -> Work: ...
    def exchange_bytes(self, data: bytes, what) -> list: ...
    def split(self, ranks): ...
    def shutdown(self): ...


# --------------------------------------------------------------------------- host buffers
class _Host:
    """A tensor's elements as a flat contiguous host array. Its own memory when the tensor is
    host-backed and contiguous (MPI reads and writes the tensor in place); otherwise a staging
    copy, written back by ``store()``."""

    __slots__ = ("tensor", "arr", "staged")

    def __init__(self, tensor, read=True):
        self.tensor = tensor
        if tensor._storage.host is not None and tensor.is_contiguous():
            self.arr = tensor._host_view().reshape(-1)
            self.staged = False
        else:
            if read:
                self.arr = np.ascontiguousarray(tensor.detach()._to_host_array()).reshape(-1).copy()
            else:
                self.arr = np.empty(tensor.numel(), tensor.dtype.numpy_dtype)
            self.staged = True

    def store(self):
        if self.staged:
            from .. import from_numpy, no_grad
            with no_grad():
                self.tensor.copy_(from_numpy(self.arr.reshape(self.tensor.shape)))


def _bytes(a):
    return a.reshape(-1).view(np.uint8)


# --------------------------------------------------------------------------- the MPI engine
_WIDE = {"float16": np.float32, "bfloat16": np.float32}      # reduced by the engine, not by MPI


def _mpi_types(MPI):
    return {
        "bool": MPI.C_BOOL, "uint8": MPI.UINT8_T, "int8": MPI.INT8_T, "int16": MPI.INT16_T,
        "int32": MPI.INT32_T, "int64": MPI.INT64_T, "float32": MPI.FLOAT, "float64": MPI.DOUBLE,
    }


def _mpi_op(MPI, op, is_bool):
    t = op_type(op)
    if is_bool:   # MPI's arithmetic ops are not defined on C_BOOL: the logical ones give torch's result
        return {0: MPI.LOR, 1: MPI.LOR, 2: MPI.LAND, 3: MPI.LAND, 4: MPI.LOR, 5: MPI.LAND, 6: MPI.LOR,
                7: MPI.LXOR, 8: MPI.LOR}[t]
    return {0: MPI.SUM, 1: MPI.SUM, 2: MPI.PROD, 3: MPI.MIN, 4: MPI.MAX, 5: MPI.BAND, 6: MPI.BOR,
            7: MPI.BXOR, 8: MPI.SUM}[t]


def _reduce_rows(rows, op, n_ranks):
    """Reduce (ranks, n) rows as torch's op does (the engine's own path: float16/bfloat16, which
    MPI has no type for, are reduced in float32 and rounded once)."""
    t = op_type(op)
    dt = rows.dtype
    wide = rows.astype(_WIDE[dt.name]) if dt.name in _WIDE else rows
    if t == 8:
        wide = wide * op.factor
    if t in (0, 1, 8):
        out = np.add.reduce(wide, axis=0)
    elif t == 2:
        out = np.multiply.reduce(wide, axis=0)
    elif t == 3:
        out = np.minimum.reduce(wide, axis=0)
    elif t == 4:
        out = np.maximum.reduce(wide, axis=0)
    else:
        raise AssertionError("bitwise ops are refused on floating dtypes before they get here")
    if t == 1:
        out = out / n_ranks
    return out.astype(dt)


def _average(arr, n):
    """AVG: the sum divided by the world size; integers truncate toward zero, as NCCL's ncclAvg."""
    if arr.dtype.kind == "f":
        np.divide(arr, n, out=arr, casting="unsafe")
    else:
        q = np.abs(arr) // n
        arr[...] = np.where(arr < 0, -q, q)


class MPIEngine(Engine):
    name = "mpi"

    def __init__(self, comm, timeout_s, checks, global_ranks, pids=None):
        from mpi4py import MPI
        self.MPI = MPI
        self.comm = comm
        self.meta = comm.Dup()        # fingerprints travel apart from user messages and data
        self.timeout_s = timeout_s
        self.checks = checks
        self.global_ranks = list(global_ranks)
        self.pids = pids              # (host, pid) of every rank: tells a dead peer from a slow one
        self.seq = 0
        self.types = _mpi_types(MPI)

    def rank(self):
        return self.comm.Get_rank()

    def size(self):
        return self.comm.Get_size()

    # ----------------------------------------------------------- polling against the deadline
    def test(self, requests, statuses=None):
        return self.MPI.Request.Testall(requests, statuses)

    def wait(self, requests, what, timeout_s=None, pending=None, statuses=None):
        """Poll ``requests`` until done; past the deadline (or as soon as a peer it waits for has
        exited) raise torch's watchdog-style error naming the ranks and the collective."""
        start = time.monotonic()
        try:
            self._poll(requests, what, timeout_s, pending, statuses, start)
        except self.MPI.Exception as e:
            # MPI itself saw a peer go (a closed connection) before this rank's own check did
            time.sleep(0.1)
            dead = self._dead_peers(None)
            if dead:
                self._fail(what, time.monotonic() - start, self.timeout_s if timeout_s is None else timeout_s, dead=dead)
            _state.BROKEN[0] = True
            raise DistBackendError(f"[Rank {self.global_ranks[self.comm.Get_rank()]}] MPI failed in {what}: {e}") from None

    def _poll(self, requests, what, timeout_s, pending, statuses, start):
        MPI = self.MPI
        if MPI.Request.Testall(requests, statuses):
            return
        timeout_s = self.timeout_s if timeout_s is None else timeout_s
        deadline = start + timeout_s
        next_check = start + 0.05
        while not MPI.Request.Testall(requests, statuses):
            now = time.monotonic()
            if now >= next_check:
                dead = self._dead_peers(pending(requests) if pending else None)
                if dead:
                    self._fail(what, now - start, timeout_s, dead=dead)
                next_check = now + 0.05
            if now >= deadline:
                self._fail(what, now - start, timeout_s, late=pending(requests) if pending else None)
            if now - start > 0.005:       # spin the first 5 ms (a peer a little behind), then back off
                time.sleep(min(0.001, (now - start) / 200))

    def _dead_peers(self, candidates):
        """Global ranks on this host whose process has exited (a zombie counts: it is gone)."""
        if self.pids is None:
            return []
        host = os.uname().nodename
        me = self.comm.Get_rank()
        ranks = range(self.size()) if candidates is None else candidates
        dead = []
        for r in ranks:
            g = self.global_ranks[r] if candidates is None else r
            if candidates is None and r == me:
                continue
            h, pid = self.pids[g]
            if h == host and not _alive(pid):
                dead.append(g)
        return dead

    def _fail(self, what, elapsed, timeout_s, dead=None, late=None):
        """A dead peer: an error naming it and the collective, at once. A stalled one: torch's
        watchdog message at the deadline. Either way the group is broken from now on and the
        process aborts the MPI job at exit (mpiexec then ends every rank)."""
        _state.BROKEN[0] = True
        me = self.global_ranks[self.comm.Get_rank()]
        work = f"WorkMPI({what}, Timeout(ms)={int(timeout_s * 1000)})"
        if dead:
            who = ", ".join(map(str, dead))
            message = (f"[Rank {me}] Rank {who} exited without joining the collective {work}: this rank waited "
                       f"{int(elapsed * 1000)} milliseconds for it. The job is aborted.")
        else:
            who = (f" Rank {', '.join(map(str, late))} did not join it." if late else "")
            message = (f"[Rank {me}] Watchdog caught collective operation timeout: {work} ran for "
                       f"{int(elapsed * 1000)} milliseconds before timing out.{who}")
        raise DistBackendError(message)

    # ----------------------------------------------------------- fingerprints
    def check(self, op_name, tensor_meta):
        """Exchange (SequenceNumber, OpType, shapes, dtype, root) with every peer before the data
        moves; returns the ``what`` naming the collective for errors."""
        self.seq += 1
        what = f"SeqNum={self.seq}, OpType={op_name}{tensor_meta[1]}"
        if not self.checks or self.size() == 1:
            return what
        mine = f"{self.seq}|{op_name}|{tensor_meta[0]}".encode()
        size, me = self.size(), self.rank()
        n = 256
        send = np.zeros(n, np.uint8)
        send[: min(len(mine), n)] = np.frombuffer(mine[:n], np.uint8)
        recvs = {p: np.zeros(n, np.uint8) for p in range(size) if p != me}
        reqs = [self.meta.Irecv([recvs[p], self.MPI.BYTE], source=p, tag=7) for p in recvs]
        reqs += [self.meta.Isend([send, self.MPI.BYTE], dest=p, tag=7) for p in recvs]
        peers = list(recvs)

        def pending(rs):
            return [self.global_ranks[p] for p, r in zip(peers, rs[: len(peers)]) if not r.Test()]
        self.wait(reqs, what, pending=pending)
        theirs = {p: bytes(b).rstrip(b"\0") for p, b in recvs.items()}
        theirs[me] = mine[:n]
        first_bad = next((p for p in sorted(theirs) if theirs[p] != mine[:n]), None)
        if first_bad is not None:
            def fp(b):
                seq, op, meta = b.decode(errors="replace").split("|", 2)
                return f"CollectiveFingerPrint(SequenceNumber={seq}, OpType={op}, {meta})"
            raise RuntimeError(
                f"Detected mismatch between collectives on ranks. Rank {self.global_ranks[me]} is running "
                f"collective: {fp(theirs[me])}, but Rank {self.global_ranks[first_bad]} is running "
                f"collective: {fp(theirs[first_bad])}.")
        return what

    # ----------------------------------------------------------- collectives
    def allreduce(self, tensor, op, what):
        h = _Host(tensor)
        dt = h.arr.dtype
        n = self.size()
        if dt.name in self.types:
            if op_type(op) == 8:
                h.arr[...] = h.arr * op.factor
            src = self.MPI.IN_PLACE          # no copy of the input: the sum lands in the tensor's memory
            req = self.comm.Iallreduce(src, [h.arr, self.types[dt.name]], _mpi_op(self.MPI, op, dt.kind == "b"))

            def finish():
                if op_type(op) == 1 and dt.kind != "b":
                    _average(h.arr, n)
                h.store()
            return Work(self, [req], finish, what, keep=(src, h))
        rows = np.empty((n, h.arr.size), dt)
        req = self.comm.Iallgather([_bytes(h.arr.copy()), self.MPI.BYTE], [_bytes(rows), self.MPI.BYTE])

        def finish_wide():
            h.arr[...] = _reduce_rows(rows, op, n)
            h.store()
        return Work(self, [req], finish_wide, what, keep=(rows, h))

    def broadcast(self, tensor, root, what):
        h = _Host(tensor)
        req = self.comm.Ibcast([_bytes(h.arr), self.MPI.BYTE], root=root)
        return Work(self, [req], h.store, what, keep=h)

    def allgather(self, out, tensor, what):
        """``out``: a tensor of size * numel elements, rank r's block r-th."""
        src = _Host(tensor).arr.copy()
        h = _Host(out, read=False)
        req = self.comm.Iallgather([_bytes(src), self.MPI.BYTE], [_bytes(h.arr), self.MPI.BYTE])
        return Work(self, [req], h.store, what, keep=(src, h))

    def reduce(self, tensor, root, op, what):
        h = _Host(tensor)
        dt = h.arr.dtype
        n, me = self.size(), self.rank()
        if dt.name in self.types:
            src = h.arr.copy() if op_type(op) != 8 else (h.arr * op.factor).astype(dt)
            out = np.empty_like(src)
            req = self.comm.Ireduce([src, self.types[dt.name]], [out, self.types[dt.name]],
                                    _mpi_op(self.MPI, op, dt.kind == "b"), root=root)

            def finish():
                if me == root:
                    if op_type(op) == 1 and dt.kind != "b":
                        _average(out, n)
                    h.arr[...] = out
                    h.store()
            return Work(self, [req], finish, what, keep=(src, out, h))
        rows = np.empty((n, h.arr.size), dt)
        req = self.comm.Igather([_bytes(h.arr.copy()), self.MPI.BYTE], [_bytes(rows), self.MPI.BYTE], root=root)

        def finish_wide():
            if me == root:
                h.arr[...] = _reduce_rows(rows, op, n)
                h.store()
        return Work(self, [req], finish_wide, what, keep=(rows, h))

    def reduce_scatter(self, out, inp, op, what):
        """``inp``: a tensor of size * out.numel() elements, rank r's chunk r-th."""
        h = _Host(out, read=False)
        inp_flat = _Host(inp).arr
        dt = inp_flat.dtype
        n = self.size()
        if dt.name in self.types:
            src = inp_flat if op_type(op) != 8 else (inp_flat * op.factor).astype(dt)
            req = self.comm.Ireduce_scatter_block([src, self.types[dt.name]], [h.arr, self.types[dt.name]],
                                                  _mpi_op(self.MPI, op, dt.kind == "b"))

            def finish():
                if op_type(op) == 1 and dt.kind != "b":
                    _average(h.arr, n)
                h.store()
            return Work(self, [req], finish, what, keep=(src, h))
        # float16/bfloat16: every rank's chunk r goes to rank r (all-to-all), reduced there
        rows = np.empty((n, h.arr.size), dt)
        req = self.comm.Ialltoall([_bytes(inp_flat), self.MPI.BYTE], [_bytes(rows), self.MPI.BYTE])

        def finish_wide():
            h.arr[...] = _reduce_rows(rows, op, n)
            h.store()
        return Work(self, [req], finish_wide, what, keep=(inp_flat, rows, h))

    def gather(self, out, tensor, root, what):
        """``out`` (the root's only): a tensor of size * numel elements."""
        src = _Host(tensor).arr.copy()
        h = _Host(out, read=False) if out is not None else None
        recv = [_bytes(h.arr), self.MPI.BYTE] if h is not None else None
        req = self.comm.Igather([_bytes(src), self.MPI.BYTE], recv, root=root)
        return Work(self, [req], h.store if h is not None else None, what, keep=(src, h))

    def scatter(self, tensor, inp, root, what):
        """``inp`` (the root's only): a tensor of size * numel elements, rank r's block r-th."""
        h = _Host(tensor, read=False)
        in_flat = _Host(inp).arr if inp is not None else None
        send = [_bytes(in_flat), self.MPI.BYTE] if in_flat is not None else None
        req = self.comm.Iscatter(send, [_bytes(h.arr), self.MPI.BYTE], root=root)
        return Work(self, [req], h.store, what, keep=(in_flat, h))

    def alltoall(self, outs, ins, what):
        """Lists of tensors (one per rank, sizes may differ): Ialltoallv on bytes."""
        send = [_bytes(_Host(t).arr.copy()) for t in ins]
        hosts = [_Host(t, read=False) for t in outs]
        sendbuf = np.concatenate(send) if send else np.empty(0, np.uint8)
        scounts = [s.size for s in send]
        rcounts = [h.arr.nbytes for h in hosts]
        recvbuf = np.empty(sum(rcounts), np.uint8)
        sd = np.concatenate([[0], np.cumsum(scounts)[:-1]]).astype(int).tolist()
        rd = np.concatenate([[0], np.cumsum(rcounts)[:-1]]).astype(int).tolist()
        req = self.comm.Ialltoallv([sendbuf, (scounts, sd), self.MPI.BYTE], [recvbuf, (rcounts, rd), self.MPI.BYTE])

        def finish():
            for h, off, c in zip(hosts, rd, rcounts):
                _bytes(h.arr)[...] = recvbuf[off: off + c]
                h.store()
        return Work(self, [req], finish, what, keep=(sendbuf, recvbuf, hosts))

    def send(self, tensor, dst, tag):
        src = _Host(tensor).arr.copy()
        req = self.comm.Isend([_bytes(src), self.MPI.BYTE], dest=dst, tag=tag)
        return Work(self, [req], None, f"OpType=SEND, dst={self.global_ranks[dst]}, tag={tag}", keep=src)

    def recv(self, tensor, src, tag):
        h = _Host(tensor, read=False)
        status = self.MPI.Status()
        source = self.MPI.ANY_SOURCE if src is None else src
        req = self.comm.Irecv([_bytes(h.arr), self.MPI.BYTE], source=source, tag=tag)

        def finish():
            h.store()
            return self.global_ranks[status.Get_source() if src is None else src]
        return Work(self, [req], finish, f"OpType=RECV, src={'ANY' if src is None else self.global_ranks[src]}, tag={tag}",
                    keep=h, statuses=[status])

    def barrier(self, what):
        return Work(self, [self.comm.Ibarrier()], None, what)

    def exchange_bytes(self, data: bytes, what, root=None):
        """All-gather (or, with ``root``, broadcast from root) of variable-length byte strings."""
        n = self.size()
        mine = np.frombuffer(data, np.uint8) if data is not None else np.empty(0, np.uint8)
        if root is not None:
            length = np.array([mine.size], np.int64)
            self.wait([self.comm.Ibcast([length, self.MPI.INT64_T], root=root)], what)
            buf = mine.copy() if self.rank() == root else np.empty(int(length[0]), np.uint8)
            self.wait([self.comm.Ibcast([buf, self.MPI.BYTE], root=root)], what)
            return buf.tobytes()
        lengths = np.empty(n, np.int64)
        self.wait([self.comm.Iallgather([np.array([mine.size], np.int64), self.MPI.INT64_T],
                                        [lengths, self.MPI.INT64_T])], what)
        buf = np.empty(int(lengths.sum()), np.uint8)
        displ = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(int).tolist()
        self.wait([self.comm.Iallgatherv([mine, self.MPI.BYTE], [buf, (lengths.astype(int).tolist(), displ), self.MPI.BYTE])], what)
        return [buf[o: o + int(c)].tobytes() for o, c in zip(displ, lengths)]

    def split(self, ranks):
        """A communicator over ``ranks`` (group-local); every rank of this group calls it."""
        member = self.rank() in ranks
        color = 0 if member else self.MPI.UNDEFINED
        key = ranks.index(self.rank()) if member else 0
        sub = self.comm.Split(color, key)
        if sub == self.MPI.COMM_NULL:
            return None
        return MPIEngine(sub, self.timeout_s, self.checks, [self.global_ranks[r] for r in ranks], self.pids)

    def shutdown(self):
        for c in (self.meta, self.comm):
            if c != self.MPI.COMM_WORLD and c != self.MPI.COMM_NULL:
                try:
                    c.Free()
                except Exception:    # a communicator that a failure left unusable
                    pass


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False
        except PermissionError:
            return True


# --------------------------------------------------------------------------- NCCL (real GPUs)
class NCCLEngine(Engine):
    """NCCL through cupy.cuda.nccl, on the current stream (written against CuPy's API; it has not
    run: no GPU in this project's sessions). Operations are enqueued on tritensor's current CUDA
    stream and ordered with it; ``Work.wait()`` waits on the host for an event recorded after the
    operation. Ranks bootstrap over MPI (the unique id is broadcast from rank 0)."""

    name = "nccl"

    def __init__(self, mpi_engine):
        from cupy.cuda import nccl
        self.nccl = nccl
        self.mpi = mpi_engine
        uid = nccl.get_unique_id() if mpi_engine.rank() == 0 else None
        uid = mpi_engine.comm.bcast(uid, root=0)
        self.comm = nccl.NcclCommunicator(mpi_engine.size(), uid, mpi_engine.rank())
        self.types = {"bool": nccl.NCCL_UINT8, "uint8": nccl.NCCL_UINT8, "int8": nccl.NCCL_INT8,
                      "int32": nccl.NCCL_INT32, "int64": nccl.NCCL_INT64, "float16": nccl.NCCL_FLOAT16,
                      "float32": nccl.NCCL_FLOAT32, "float64": nccl.NCCL_FLOAT64,
                      "bfloat16": getattr(nccl, "NCCL_BFLOAT16", None)}

    def rank(self):
        return self.mpi.rank()

    def size(self):
        return self.mpi.size()

    def check(self, op_name, meta):
        return self.mpi.check(op_name, meta)

    def _stream(self):
        from .. import cuda
        return cuda.current_stream().cuda_stream

    def _op(self, op, dt):
        nccl, t = self.nccl, op_type(op)
        if dt == "bool" and t in (0, 4, 6):
            return nccl.NCCL_MAX
        if dt == "bool" and t in (2, 3, 5):
            return nccl.NCCL_MIN
        if t in (5, 6, 7):
            raise RuntimeError(f"Cannot use ReduceOp.{RedOpType(t).name} with NCCL")
        return {0: nccl.NCCL_SUM, 1: nccl.NCCL_SUM, 2: nccl.NCCL_PROD,       # AVG: a SUM, then divided
                3: nccl.NCCL_MIN, 4: nccl.NCCL_MAX, 8: nccl.NCCL_SUM}[t]

    def _average(self, tensor, op):
        if op_type(op) == 1:
            if tensor.dtype.is_floating_point:
                tensor.div_(self.size())
            else:
                tensor.copy_(tensor.div(self.size(), rounding_mode="trunc"))

    def _type(self, tensor):
        code = self.types.get(tensor.dtype.numpy_dtype.name)
        if code is None:
            raise RuntimeError(f"NCCL has no type for {tensor.dtype}")
        return code

    def _work(self, what):
        import cupy
        event = cupy.cuda.Event(block=False, disable_timing=True)
        event.record(cupy.cuda.ExternalStream(self._stream()))
        return _EventWork(event, what)

    def allreduce(self, tensor, op, what):
        if op_type(op) == 8:
            tensor.mul_(op.factor)
        self.comm.allReduce(tensor.data_ptr(), tensor.data_ptr(), tensor.numel(), self._type(tensor),
                            self._op(op, tensor.dtype.numpy_dtype.name), self._stream())
        self._average(tensor, op)
        return self._work(what)

    def broadcast(self, tensor, root, what):
        self.comm.bcast(tensor.data_ptr(), tensor.numel(), self._type(tensor), root, self._stream())
        return self._work(what)

    def allgather(self, out, tensor, what):
        tensor = tensor.contiguous()
        self.comm.allGather(tensor.data_ptr(), out.data_ptr(), tensor.numel(), self._type(tensor), self._stream())
        return self._work(what)

    def reduce(self, tensor, root, op, what):
        if op_type(op) == 8:
            tensor.mul_(op.factor)
        self.comm.reduce(tensor.data_ptr(), tensor.data_ptr(), tensor.numel(), self._type(tensor),
                         self._op(op, tensor.dtype.numpy_dtype.name), root, self._stream())
        if self.rank() == root:
            self._average(tensor, op)
        return self._work(what)

    def reduce_scatter(self, out, inp, op, what):
        inp = inp * op.factor if op_type(op) == 8 else inp.contiguous()
        self.comm.reduceScatter(inp.data_ptr(), out.data_ptr(), out.numel(), self._type(out),
                                self._op(op, out.dtype.numpy_dtype.name), self._stream())
        self._average(out, op)
        return self._work(what)

    def barrier(self, what):
        from .. import ones
        return self.allreduce(ones(1, device="cuda"), RedOpType(0), what)

    def send(self, tensor, dst, tag):
        self.comm.send(tensor.data_ptr(), tensor.numel(), self._type(tensor), dst, self._stream())
        return self._work(f"OpType=SEND, dst={dst}")

    def recv(self, tensor, src, tag):
        if src is None:
            raise RuntimeError("NCCL does not support recv from any source: pass src")
        self.comm.recv(tensor.data_ptr(), tensor.numel(), self._type(tensor), src, self._stream())
        return self._work(f"OpType=RECV, src={src}")

    def gather(self, *a):
        raise NotImplementedError("gather on the nccl backend: use all_gather (NCCL has no gather)")

    scatter = alltoall = gather

    def exchange_bytes(self, data, what, root=None):
        return self.mpi.exchange_bytes(data, what, root)

    def split(self, ranks):
        sub = self.mpi.split(ranks)
        return None if sub is None else NCCLEngine(sub)

    def shutdown(self):
        self.comm.destroy()
        self.mpi.shutdown()


class _EventWork(Work):
    def __init__(self, event, what):
        super().__init__(None, [], None, what)
        self._event = event
        self._done = False

    def is_completed(self):
        return self._done or self._event.done

    def wait(self, timeout=None):
        self._event.synchronize()
        self._done = True
        return True
