"""What the multi-rank tests share (tests/test_distributed.py, tests/test_ddp.py): a worker
script started on 2 ranks through the launcher, and the world of one (no launcher)."""
import datetime
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

import tritensor.distributed as dist


def launch(worker, *args, job_timeout=90, **env_vars):
    """Run ``tests/<worker>`` on 2 ranks (``python -m tritensor.distributed.run``, on the emulated
    device) with ``args`` and a marker argument; returns (the CompletedProcess, seconds taken).
    The job has a timeout and so has the subprocess; afterwards no process carrying the marker
    may be left running."""
    pytest.importorskip("mpi4py")
    marker = f"marker-{uuid.uuid4().hex}"          # finds any process of this job left behind
    env = dict(os.environ, TRITENSOR_EMULATE_CUDA="1", **env_vars)
    start = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "tritensor.distributed.run", "--nproc-per-node", "2",
                        "--timeout", str(job_timeout), str(Path(__file__).with_name(worker)), *args, marker],
                       capture_output=True, text=True, env=env, timeout=job_timeout + 30)
    elapsed = time.monotonic() - start
    left = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert marker not in left, "a process of the job is still running"
    return p, elapsed


@pytest.fixture
def world_of_one(monkeypatch):
    """An MPI process group of one rank, initialised without a launcher (none of the launchers'
    variables set), destroyed afterwards."""
    pytest.importorskip("mpi4py")
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "PMI_RANK", "PMI_SIZE"):
        monkeypatch.delenv(k, raising=False)
    dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=10))
    yield
    if dist.is_initialized():
        dist.destroy_process_group()
