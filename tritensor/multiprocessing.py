"""tritensor.multiprocessing: torch.multiprocessing's place, not implemented.

torch.multiprocessing is Python's multiprocessing with tensors that travel between processes
through shared memory (Tensor.share_memory_, Module.share_memory, CUDA IPC handles): a child's
in-place update is seen by every process, which Hogwild training (pytorch/examples'
mnist_hogwild) and mp.spawn launches rely on. tritensor's storages are private to a process, and
pickling a tensor copies it, so a stand-in re-exporting multiprocessing would train copies in the
children and leave the parent's model untouched, silently. Importing this module raises instead.
For several processes, tt.distributed (MPI ranks: python -m tritensor.distributed.run) serves
data-parallel training.
"""
raise NotImplementedError(
    "tritensor.multiprocessing is not implemented: tensors shared between processes (torch.multiprocessing's "
    "shared-memory storages, Tensor.share_memory_, Module.share_memory, mp.spawn) are not available; for several "
    "processes use tt.distributed (python -m tritensor.distributed.run --nproc-per-node N script.py)")
