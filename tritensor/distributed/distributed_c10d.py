"""torch.distributed's process groups and collectives (torch/distributed/distributed_c10d.py),
served by the engines of _backend.py. This layer checks arguments with torch's messages, turns
global ranks into a group's ranks, and waits (or hands back the Work of ``async_op=True``)."""
from __future__ import annotations

import atexit
import datetime
import importlib.util
import io
import logging
import os
import warnings


from . import _state
from ._backend import DistBackendError, MPIEngine, RedOpType, _PremulSum, op_type

logger = logging.getLogger("tritensor.distributed")

default_pg_timeout = datetime.timedelta(minutes=30)

_NOT_INIT = "Default process group has not been initialized, please make sure to call init_process_group."


# --------------------------------------------------------------------------- names
class ReduceOp:
    """torch.distributed.ReduceOp: ReduceOp.SUM ... are ReduceOp.RedOpType values."""
    RedOpType = RedOpType
    SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR, PREMUL_SUM = (RedOpType(i) for i in range(9))


def _make_nccl_premul_sum(factor):
    """torch.distributed._make_nccl_premul_sum: SUM of the inputs each multiplied by ``factor``."""
    return _PremulSum(factor)


class Backend(str):
    """torch.distributed.Backend: a backend's name (a str). "gloo" is served by the MPI engine."""
    UNDEFINED, GLOO, NCCL, UCC, MPI, XCCL = "undefined", "gloo", "nccl", "ucc", "mpi", "xccl"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: {type(name)}")
        return super().__new__(cls, name.lower() if name.upper() in ("GLOO", "NCCL", "UCC", "MPI", "XCCL", "UNDEFINED") else name)

    # torch's map: the backend a device's tensors are communicated with by default
    default_device_backend_map = {"cpu": GLOO, "cuda": NCCL, "xpu": XCCL, "mps": GLOO}


def get_default_backend_for_device(device):
    """torch.distributed.get_default_backend_for_device: the default backend's name for ``device``
    (a str or device): "gloo" for cpu, "nccl" for cuda (served here as init_process_group
    serves them: gloo by the MPI engine, nccl on a real GPU)."""
    from ..runtime.device import device as _device
    device_type = device.type if isinstance(device, _device) else _device(device).type
    backend = Backend.default_device_backend_map.get(device_type)
    if backend is None:
        raise ValueError(f"Default backend not registered for device : {device}")
    return backend


class ProcessGroup:
    """A process group: global ranks ``ranks`` over one engine."""

    def __init__(self, engine, ranks, backend, timeout):
        self._engine = engine
        self._ranks = list(ranks)
        self._backend = backend
        self._timeout = timeout

    def rank(self):
        return self._engine.rank()

    def size(self):
        return self._engine.size()

    def name(self):
        return self._backend

    def __repr__(self):
        return f"<tritensor.distributed.ProcessGroup ranks={self._ranks} backend={self._backend}>"


class GroupMember:
    """torch.distributed.GroupMember: WORLD (the default group once initialized) and the marker
    new_group returns on ranks outside the new group."""
    WORLD = None
    NON_GROUP_MEMBER = -100


group = GroupMember        # torch.distributed.group.WORLD


# --------------------------------------------------------------------------- setup
def is_available() -> bool:
    """True when the MPI engine (mpi4py) can be imported: ``pip install tritensor[distributed]``."""
    return importlib.util.find_spec("mpi4py") is not None


def is_mpi_available() -> bool:
    return is_available()


def is_gloo_available() -> bool:
    return is_available()       # served by the MPI engine


def is_nccl_available() -> bool:
    return is_available() and importlib.util.find_spec("cupy") is not None


def is_initialized() -> bool:
    return _state.DEFAULT[0] is not None


def _env_int(*names):
    for n in names:
        v = os.environ.get(n)
        if v not in (None, ""):
            return int(v)
    return None


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError:
        raise RuntimeError("tt.distributed needs mpi4py and an MPI library: pip install tritensor[distributed] "
                           "(mpi4py and the mpich wheel)") from None
    return MPI


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """torch.distributed.init_process_group on the MPI engine. Ranks come from the MPI launch
    (``python -m tritensor.distributed.run``, ``mpiexec``, or none: a world of one); ``rank`` /
    ``world_size`` and torchrun's RANK / WORLD_SIZE (or the MPI launcher's PMI_RANK,
    OMPI_COMM_WORLD_RANK ...) are checked against it. ``init_method`` and ``store`` are not needed
    (MPI bootstraps the ranks) and are accepted as torch's MPI backend accepts them."""
    if is_initialized():
        raise ValueError("trying to initialize the default process group twice!")
    name = _backend_name(backend)
    seconds = (default_pg_timeout if timeout is None else timeout)
    seconds = seconds.total_seconds() if hasattr(seconds, "total_seconds") else float(seconds)
    MPI = _mpi()
    world = MPI.COMM_WORLD
    mpi_rank, mpi_size = world.Get_rank(), world.Get_size()
    want_rank = rank if rank is not None and rank >= 0 else _env_int(
        "RANK", "PMI_RANK", "OMPI_COMM_WORLD_RANK", "MV2_COMM_WORLD_RANK", "PMIX_RANK")
    want_size = world_size if world_size is not None and world_size > 0 else _env_int(
        "WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE")
    if (want_size is not None and want_size != mpi_size) or (want_rank is not None and want_rank != mpi_rank):
        raise RuntimeError(
            f"init_process_group: rank {want_rank} of world_size {want_size} disagrees with the MPI launch "
            f"(rank {mpi_rank} of {mpi_size}): start the ranks with `python -m tritensor.distributed.run "
            f"--nproc-per-node N script.py` (or mpiexec), which sets both")
    checks = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "").upper() != "OFF"
    engine = MPIEngine(world, seconds, checks, range(mpi_size))
    ids = engine.exchange_bytes(f"{os.uname().nodename}|{os.getpid()}".encode(), "SeqNum=0, OpType=INIT")
    engine.pids = [(b.decode().rsplit("|", 1)[0], int(b.decode().rsplit("|", 1)[1])) for b in ids]
    if name == "gloo" or name.startswith("cpu:gloo") and "nccl" not in name:
        _log_once("gloo", "tt.distributed: backend 'gloo' is served by the MPI engine (mpi4py); "
                          "collectives and results are the same")
    if "nccl" in name:
        if not _real_gpu():
            raise RuntimeError("ProcessGroupNCCL is only supported with GPUs, no GPUs found!")
        from ._backend import NCCLEngine
        engine = NCCLEngine(engine)
    pg = ProcessGroup(engine, range(mpi_size), Backend(name), seconds)
    _state.DEFAULT[0] = pg
    GroupMember.WORLD = pg
    _install_exit_guard()


def _real_gpu():
    from ..runtime import device as _dev
    return _dev.cuda_mode() == "real"


def _backend_name(backend):
    if backend is None:
        return "mpi"
    name = str(backend).lower()
    parts = [p.split(":")[-1] for p in name.split(",")]
    for p in parts:
        if p not in ("mpi", "gloo", "nccl"):
            raise AssertionError(f"Unknown backend type {backend}" if p not in ("ucc", "xccl") else
                                 f"tt.distributed serves 'mpi', 'gloo' (on MPI) and 'nccl'; not {p!r}")
    return name


_LOGGED = set()


def _log_once(key, message):
    if key not in _LOGGED:
        _LOGGED.add(key)
        logger.warning(message)


_GUARD = [False]


def _install_exit_guard():
    """After a communication failure MPI_Finalize could wait forever on a dead peer: abort the job
    instead (mpiexec then ends every rank: nothing is left running)."""
    if _GUARD[0]:
        return
    _GUARD[0] = True

    def guard():
        if _state.BROKEN[0]:
            from mpi4py import MPI
            import sys
            sys.stderr.flush()
            import time
            time.sleep(0.3)     # mpiexec forwards this rank's last lines before the abort kills it
            MPI.COMM_WORLD.Abort(1)
    atexit.register(guard)


def destroy_process_group(group=None):
    pg = _state.DEFAULT[0]
    if pg is None:
        raise AssertionError("Process group cannot be None")
    if group is None or group is pg:
        if not _state.BROKEN[0]:
            pg._engine.shutdown()
        _state.DEFAULT[0] = None
        GroupMember.WORLD = None
    elif isinstance(group, ProcessGroup) and not _state.BROKEN[0]:
        group._engine.shutdown()


def _default():
    pg = _state.DEFAULT[0]
    if pg is None:
        raise ValueError(_NOT_INIT)
    if _state.BROKEN[0]:
        raise DistBackendError("the process group was aborted by an earlier communication failure")
    return pg


def _group(group):
    pg = _default()
    return pg if group is None else group


def _not_member(group, op):
    if group is GroupMember.NON_GROUP_MEMBER:
        rank = _default()._engine.rank()
        warnings.warn(f"Running {op} on global rank {rank} which does not belong to the given group.")
        return True
    return False


def get_rank(group=None) -> int:
    pg = _default()
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return (pg if group is None else group).rank()


def get_world_size(group=None) -> int:
    pg = _default()
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return (pg if group is None else group).size()


def get_backend(group=None):
    pg = _default()
    return (pg if group is None else group)._backend


def get_process_group_ranks(group):
    return list(_group(group)._ranks)


def get_global_rank(group, group_rank):
    return _group(group)._ranks[group_rank]


def get_group_rank(group, global_rank):
    g = _group(group)
    if global_rank not in g._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {g}")
    return g._ranks.index(global_rank)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None):
    """A group over some global ranks: an MPI communicator split. Every rank of the world calls it;
    ranks outside get GroupMember.NON_GROUP_MEMBER."""
    pg = _default()
    if use_local_synchronization:
        raise ValueError("MPI backend doesn't support use_local_synchronization=True")
    n = pg.size()
    ranks = list(range(n)) if ranks is None else sorted(int(r) for r in ranks)
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"ranks list must not contain duplicate entries, got {ranks}")
    if len(ranks) > n:
        raise ValueError("the new group's world size should be less or equal to the world size set by init_process_group")
    for r in ranks:
        if not 0 <= r < n:
            raise ValueError(f"Rank {r} is out of range. Valid ranks are 0 to {n - 1} (world_size={n})")
    engine = pg._engine
    mpi = engine.mpi if hasattr(engine, "mpi") else engine
    sub = mpi.split([pg._ranks.index(r) for r in ranks])
    if sub is None:
        return GroupMember.NON_GROUP_MEMBER
    if hasattr(engine, "mpi"):
        from ._backend import NCCLEngine
        sub = NCCLEngine(sub)
    if timeout is not None:
        sub.timeout_s = timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout)
    return ProcessGroup(sub, ranks, Backend(backend) if backend else pg._backend, sub.timeout_s if hasattr(sub, "timeout_s") else pg._timeout)


# --------------------------------------------------------------------------- checks
def _tensor_type():
    from ..tensor import Tensor
    return Tensor


def _check_tensor(t, param):
    if not isinstance(t, _tensor_type()):
        raise TypeError(f"Invalid function argument. Expected parameter `{param}` of type torch.Tensor\n"
                        f"             but got {type(t)} instead.")


def _check_list(ts, param):
    if not isinstance(ts, (list, tuple)) or not all(isinstance(t, _tensor_type()) for t in ts):
        raise TypeError(f"Invalid function argument. Expected parameter `{param}` of type List[torch.Tensor]\n"
                        f"             but got {type(ts)} instead.")


def _check_op(op, dtype, name):
    if not isinstance(op, (RedOpType, _PremulSum)):
        raise TypeError(f"{name}(): argument 'op' must be ReduceOp, not {type(op).__name__}")
    t = op_type(op)
    is_float = dtype.is_floating_point
    if t in (5, 6, 7) and is_float:
        raise RuntimeError(f"Cannot use ReduceOp.{RedOpType(t).name} with non-integral dtype")
    if t == 1 and dtype.numpy_dtype.kind == "b":
        raise RuntimeError("Cannot use ReduceOp.AVG with boolean inputs")


_SCALAR_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
                 "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _enter(op, group, *params):
    """The prologue every collective shares, in torch's order: its tensor arguments' types
    (``params``: (parameter name, value) pairs; a name ending in ``_list`` takes a list of
    tensors), then the group: None on a rank outside it (torch warns and does nothing there),
    else the process group (the default one for ``group=None``)."""
    for name, value in params:
        (_check_list if name.endswith("_list") else _check_tensor)(value, name)
    if _not_member(group, op):
        return None
    return _group(group)


def _check_blocks(ts, like, n, what):
    """One tensor a rank, each of ``like``'s dtype and size (the lists of all_gather, gather,
    scatter, reduce_scatter)."""
    if len(ts) != n:
        raise RuntimeError(f"{what} tensors should equal to the world size")
    for t in ts:
        if t.dtype != like.dtype or t.numel() != like.numel():
            raise RuntimeError("Tensors are not equal in size or data type")


_ROOT_LISTS = {"gather": ("gather_list", "destination", "Gather: number of output"),
               "scatter": ("scatter_list", "source", "Scatter: number of input")}


def _check_root_list(op, ts, like, pg, root):
    """gather's / scatter's list: given on the root rank only, there one tensor a rank."""
    name, side, what = _ROOT_LISTS[op]
    if pg.rank() == root:
        if not ts:
            raise ValueError(f"Argument ``{name}`` must be specified on {side} rank.")
        _check_blocks(ts, like, pg.size(), what)
    elif ts:
        raise ValueError(f"Argument ``{name}`` must NOT be specified on non-{side} ranks.")


def _meta(t, root=None, n_out=None):
    dt = _SCALAR_NAMES.get(t.dtype.numpy_dtype.name, str(t.dtype))
    shape = ", ".join(str(d) for d in t.shape)
    fp = f"TensorShape=[{shape}], TensorDtypes={dt}" + ("" if root is None else f", Root={root}")
    return fp, f", NumelIn={t.numel()}, NumelOut={t.numel() if n_out is None else n_out}"


def _root(pg, rank, op):
    """A global rank -> the group's rank, with torch's errors."""
    if rank not in pg._ranks:
        if pg is _state.DEFAULT[0]:
            raise RuntimeError(f"ProcessGroupMPI::{op}: invalid root rank: {rank}")
        raise ValueError(f"Global rank {rank} is not part of group {pg}")
    return pg._ranks.index(rank)


def _pick(rank, group_rank, pg, name):
    if rank is not None and group_rank is not None:
        raise ValueError(f"Can not specify both {name} and group_{name}")
    if group_rank is not None:
        return pg._ranks[group_rank]
    return 0 if rank is None else rank


def _finish(work, async_op):
    if async_op:
        return work
    work.wait()
    return None


# --------------------------------------------------------------------------- collectives
def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` over the group in place, every rank getting the result."""
    pg = _enter("all_reduce", group, ("tensor", tensor))
    if pg is None:
        return None
    _check_op(op, tensor.dtype, "all_reduce")
    fp, numel = _meta(tensor)
    what = pg._engine.check("ALLREDUCE", (fp, numel + f", Op={RedOpType(op_type(op)).name}"))
    return _finish(pg._engine.allreduce(tensor, op, what), async_op)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    pg = _enter("broadcast", group, ("tensor", tensor))
    if pg is None:
        return None
    root = _root(pg, _pick(src, group_src, pg, "src"), "broadcast")
    what = pg._engine.check("BROADCAST", _meta(tensor, root))
    return _finish(pg._engine.broadcast(tensor, root, what), async_op)


def barrier(group=None, async_op=False, device_ids=None):
    pg = _enter("barrier", group)
    if pg is None:
        return None
    what = pg._engine.check("BARRIER", ("", ""))
    return _finish(pg._engine.barrier(what), async_op)


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier whose timeout names the ranks that did not arrive (every barrier here does)."""
    pg = _group(group)
    what = pg._engine.check("BARRIER", ("", ""))
    secs = None if timeout is None else timeout.total_seconds()
    pg._engine.barrier(what).wait(secs)


def _flat_out(t, n):
    """A flat tensor for ``n`` blocks like ``t``, on t's device (the engine writes it)."""
    from .. import empty
    return empty(n * t.numel(), dtype=t.dtype, device=t.device)


def _flat_in(tensors):
    """The blocks of ``tensors``, one after the other, in one flat tensor on their device."""
    from .. import cat, no_grad
    with no_grad():
        return cat([t.detach().reshape(-1) for t in tensors])


def _unpack(flat, tensors):
    """Copy block i of ``flat`` into ``tensors[i]`` (any device, strides)."""
    from .. import no_grad
    with no_grad():
        for i, t in enumerate(tensors):
            k = t.numel()
            t.copy_(flat[i * k:(i + 1) * k].view(tuple(t.shape)))


def all_gather(tensor_list, tensor, group=None, async_op=False):
    pg = _enter("all_gather", group, ("tensor_list", tensor_list), ("tensor", tensor))
    if pg is None:
        return None
    n = pg.size()
    _check_blocks(tensor_list, tensor, n, "All gather: number of output")
    what = pg._engine.check("ALLGATHER", _meta(tensor, n_out=n * tensor.numel()))
    out = _flat_out(tensor, n)
    work = pg._engine.allgather(out, tensor, what)
    return _finish(_then(work, lambda: _unpack(out, tensor_list)), async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    pg = _enter("all_gather_into_tensor", group, ("output_tensor", output_tensor), ("input_tensor", input_tensor))
    if pg is None:
        return None
    n = pg.size()
    if output_tensor.dtype != input_tensor.dtype:
        raise TypeError("output tensor must have the same type as input tensor")
    if output_tensor.numel() != n * input_tensor.numel():
        raise ValueError("output tensor size must be equal to world_size times input tensor size")
    what = pg._engine.check("_ALLGATHER_BASE", _meta(input_tensor, n_out=output_tensor.numel()))
    return _finish(pg._engine.allgather(output_tensor, input_tensor, what), async_op)


def _then(work, after):
    """Run ``after`` when ``work`` completes (its results copied into the caller's tensors)."""
    inner = work._finish

    def finish():
        if inner is not None:
            inner()
        after()
    if work._done:
        after()
    else:
        work._finish = finish
    return work


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    pg = _enter("reduce", group, ("tensor", tensor))
    if pg is None:
        return None
    root = _root(pg, _pick(dst, group_dst, pg, "dst"), "reduce")
    _check_op(op, tensor.dtype, "reduce")
    what = pg._engine.check("REDUCE", _meta(tensor, root))
    return _finish(pg._engine.reduce(tensor, root, op, what), async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    pg = _enter("reduce_scatter_tensor", group, ("output", output), ("input", input))
    if pg is None:
        return None
    n = pg.size()
    if output.dtype != input.dtype:
        raise TypeError("input tensor must be the same type as the output tensor.")
    if input.numel() != n * output.numel():
        raise ValueError("input tensor must be the same size as output size times world size")
    _check_op(op, output.dtype, "reduce_scatter_tensor")
    what = pg._engine.check("_REDUCE_SCATTER_BASE", _meta(input, n_out=output.numel()))
    return _finish(pg._engine.reduce_scatter(output, input, op, what), async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    pg = _enter("reduce_scatter", group, ("output", output), ("input_list", input_list))
    if pg is None:
        return None
    _check_blocks(input_list, output, pg.size(), "Reduce scatter: number of input")
    _check_op(op, output.dtype, "reduce_scatter")
    what = pg._engine.check("REDUCE_SCATTER", _meta(output, n_out=output.numel()))
    return _finish(pg._engine.reduce_scatter(output, _flat_in(input_list), op, what), async_op)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    pg = _enter("gather", group, ("tensor", tensor), ("gather_list", gather_list or []))
    if pg is None:
        return None
    root = _root(pg, _pick(dst, group_dst, pg, "dst"), "gather")
    _check_root_list("gather", gather_list, tensor, pg, root)
    me = pg.rank()
    what = pg._engine.check("GATHER", _meta(tensor, root))
    out = _flat_out(tensor, pg.size()) if me == root else None
    work = pg._engine.gather(out, tensor, root, what)
    if me == root:
        work = _then(work, lambda: _unpack(out, gather_list))
    return _finish(work, async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    pg = _enter("scatter", group, ("tensor", tensor), ("scatter_list", scatter_list or []))
    if pg is None:
        return None
    root = _root(pg, _pick(src, group_src, pg, "src"), "scatter")
    _check_root_list("scatter", scatter_list, tensor, pg, root)
    me = pg.rank()
    what = pg._engine.check("SCATTER", _meta(tensor, root))
    flat = _flat_in(scatter_list) if me == root else None
    return _finish(pg._engine.scatter(tensor, flat, root, what), async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    pg = _enter("all_to_all", group, ("output_tensor_list", output_tensor_list),
                ("input_tensor_list", input_tensor_list))
    if pg is None:
        return None
    n = pg.size()
    if len(output_tensor_list) != n or len(input_tensor_list) != n:
        raise RuntimeError("All to all: number of input and output tensors should equal to the world size")
    dts = {t.dtype for t in list(output_tensor_list) + list(input_tensor_list)}
    if len(dts) > 1:
        raise ValueError(f"Invalid usage of tensors with different dtypesFound {output_tensor_list[0].dtype} "
                         f"and  {next(t.dtype for t in list(output_tensor_list) + list(input_tensor_list) if t.dtype != output_tensor_list[0].dtype)}")
    dt = _SCALAR_NAMES.get(input_tensor_list[0].dtype.numpy_dtype.name)
    what = pg._engine.check("ALLTOALL", (f"TensorDtypes={dt}", f", Inputs={n}"))
    return _finish(pg._engine.alltoall(output_tensor_list, input_tensor_list, what), async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None, async_op=False):
    """all_to_all over dim-0 slices of one tensor (equal slices unless split sizes are given)."""
    pg = _enter("all_to_all_single", group, ("output", output), ("input", input))
    if pg is None:
        return None
    n = pg.size()
    ins = list(input.split(input_split_sizes if input_split_sizes else input.shape[0] // n)) if input.dim() else [input]
    outs = list(output.split(output_split_sizes if output_split_sizes else output.shape[0] // n)) if output.dim() else [output]
    return all_to_all(outs, ins, group, async_op)


# --------------------------------------------------------------------------- point to point
def _peer(pg, rank, group_rank, name, op):
    if rank is not None and group_rank is not None:
        raise ValueError(f"Can not specify both {name} and group_{name}")
    if group_rank is not None:
        rank = pg._ranks[group_rank]
    if rank is None:
        raise ValueError(f"Must specify either {name} or group_{name}")
    if rank not in pg._ranks:
        if pg is _state.DEFAULT[0]:
            raise RuntimeError(f"ProcessGroupMPI::{op}: invalid {name} rank: {rank}")
        raise ValueError(f"Global rank {rank} is not part of group {pg}")
    return pg._ranks.index(rank)


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    pg = _enter("isend", group, ("tensor", tensor))
    if pg is None:
        return None
    peer = _peer(pg, dst, group_dst, "dst", "send")
    if peer == pg.rank():
        raise ValueError("Invalid destination rank: destination rank should not be the same as the rank of the current process.")
    return pg._engine.send(tensor, peer, tag)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    pg = _enter("irecv", group, ("tensor", tensor))
    if pg is None:
        return None
    peer = None if src is None and group_src is None else _peer(pg, src, group_src, "src", "recv")
    if peer is not None and peer == pg.rank():
        raise ValueError("Invalid source rank: source rank should not be the same as the rank of the current process.")
    return pg._engine.recv(tensor, peer, tag)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor``; returns the sender's rank (any sender when ``src`` is None)."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return work.result()


# --------------------------------------------------------------------------- objects
def _dumps(obj):
    """tritensor's own serialization (tt.save): objects travel as torch.save's format does."""
    from .. import save
    buf = io.BytesIO()
    save(obj, buf)
    return buf.getvalue()


def _loads(data):
    """The allowlisted unpickler (tt.load(weights_only=True)): a peer cannot make this process
    run code. Classes of one's own go through tt.serialization.add_safe_globals."""
    from .. import load
    return load(io.BytesIO(data), weights_only=True)


def all_gather_object(object_list, obj, group=None):
    pg = _enter("all_gather_object", group)
    if pg is None:
        return None
    what = pg._engine.check("ALLGATHER", ("Objects", ""))
    for i, data in enumerate(pg._engine.exchange_bytes(_dumps(obj), what)):
        object_list[i] = _loads(data)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    pg = _enter("gather_object", group)
    if pg is None:
        return None
    root = _root(pg, _pick(dst, group_dst, pg, "dst"), "gather")
    if pg.rank() == root and object_gather_list is None:
        raise AssertionError("Must provide object_gather_list on dst rank")
    what = pg._engine.check("GATHER", ("Objects", f", Root={root}"))
    parts = pg._engine.exchange_bytes(_dumps(obj), what)      # all-gathered: object sizes are small
    if pg.rank() == root:
        for i, data in enumerate(parts):
            object_gather_list[i] = _loads(data)


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    pg = _enter("broadcast_object_list", group)
    if pg is None:
        return None
    root = _root(pg, _pick(src, group_src, pg, "src"), "broadcast")
    what = pg._engine.check("BROADCAST", (f"Objects={len(object_list)}, Root={root}", ""))
    data = pg._engine.exchange_bytes(_dumps(list(object_list)) if pg.rank() == root else None, what, root=root)
    if pg.rank() != root:
        object_list[:] = _loads(data)


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    pg = _enter("scatter_object_list", group)
    if pg is None:
        return None
    root = _root(pg, _pick(src, group_src, pg, "src"), "scatter")
    me = pg.rank()
    if me == root and scatter_object_input_list is None:
        raise ValueError("source rank must provide non-None scatter_object_input_list")
    what = pg._engine.check("SCATTER", ("Objects", f", Root={root}"))
    data = pg._engine.exchange_bytes(_dumps(list(scatter_object_input_list)) if me == root else None, what, root=root)
    scatter_object_output_list[0] = _loads(data)[me]
