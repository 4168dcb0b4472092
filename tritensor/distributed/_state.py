"""tt.distributed's process-wide state: the default group, and whether a failure left MPI broken
(then the process aborts the MPI job at exit instead of finalizing: MPI_Finalize would wait for
peers that are gone)."""
DEFAULT = [None]        # the default ProcessGroup
BROKEN = [False]
