"""tt.distributed: torch.distributed's API on the MPI engine (mpi4py), and NCCL (CuPy) on real GPUs.

    import tritensor.distributed as dist
    dist.init_process_group("mpi")          # "gloo" is accepted and served by MPI; "nccl" on GPUs
    dist.all_reduce(t)                      # every rank gets the sum

Start the ranks with ``python -m tritensor.distributed.run --nproc-per-node N script.py`` (or a
cluster's ``mpiexec``); a script run alone is a world of one. mpi4py and an MPI library are an
optional extra: ``pip install tritensor[distributed]``. Importing this package needs neither.
"""
from ._backend import DistBackendError, Work  # noqa: F401
from .distributed_c10d import (  # noqa: F401
    Backend, GroupMember, ProcessGroup, ReduceOp, _make_nccl_premul_sum, all_gather, all_gather_into_tensor,
    all_gather_object, all_reduce, all_to_all, all_to_all_single, barrier, broadcast, broadcast_object_list,
    default_pg_timeout, destroy_process_group, gather, gather_object, get_backend, get_default_backend_for_device,
    get_global_rank, get_group_rank,
    get_process_group_ranks, get_rank, get_world_size, group, init_process_group, irecv, is_available,
    is_gloo_available, is_initialized, is_mpi_available, is_nccl_available, isend, monitored_barrier, new_group,
    recv, reduce, reduce_scatter, reduce_scatter_tensor, scatter, scatter_object_list, send,
)
