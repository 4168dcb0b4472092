"""The launcher: ``python -m tritensor.distributed.run --nproc-per-node N script.py args`` (torchrun's
command line), starting the ranks through the MPI wheel's ``mpiexec``.

Every rank runs this module again as a worker shim (``--_worker``): it sets torchrun's variables
(RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT) from the MPI
launcher's (PMI_RANK, MPI_LOCALRANKID, OMPI_COMM_WORLD_* ...), then runs the script as
``__main__``. A rank whose script raises aborts the whole MPI job (as torchrun stops the other
workers), after printing its traceback. The launcher runs mpiexec in its own process group and
kills that group when the job ends, times out (``--timeout``) or is interrupted: nothing is left
running. With MPICH's hydra the job is started with ``-disable-auto-cleanup``, so that ranks
outliving a crashed one report which rank died in which collective before the job is aborted.

Several nodes: ``--nnodes M --node-rank R`` pass through to one multi-node MPI launch started on
node rank 0 (``-ppn N`` and ``--hostfile``); the other node ranks' launchers have nothing to start
(MPI starts their ranks) and say so.
"""
from __future__ import annotations

import argparse
import os
import runpy
import shutil
import signal
import subprocess
import sys
import time
import traceback

_RANK_VARS = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "MV2_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID")
_SIZE_VARS = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE", "SLURM_NTASKS")
_LOCAL_RANK_VARS = ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID")
_LOCAL_SIZE_VARS = ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "MV2_COMM_WORLD_LOCAL_SIZE")


def _first(env, names, default=None):
    for n in names:
        if env.get(n) not in (None, ""):
            return env[n]
    return default


def find_mpiexec():
    """The mpiexec of the MPI wheel installed beside this Python (the venv's bin), else PATH's."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.exists(here):
        return here
    found = shutil.which("mpiexec") or shutil.which("mpirun")
    if found is None:
        raise SystemExit("tritensor.distributed.run: no mpiexec found; pip install tritensor[distributed] "
                         "(the mpich wheel brings one) or load your cluster's MPI")
    return found


def _is_hydra(mpiexec):
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "HYDRA" in out.upper()


def parse(argv):
    p = argparse.ArgumentParser(prog="python -m tritensor.distributed.run",
                                description="Start N ranks of a script through MPI with torchrun's variables.")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1)
    p.add_argument("--nnodes", type=int, default=1)
    p.add_argument("--node-rank", "--node_rank", type=int, default=0)
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", type=int, default=29500)
    p.add_argument("--hostfile", default=None, help="the MPI hostfile of a multi-node launch")
    p.add_argument("--timeout", type=float, default=None, help="kill the whole job after this many seconds")
    p.add_argument("-m", dest="module", action="store_true", help="run the target as a module (python -m)")
    p.add_argument("--no-python", action="store_true", help="run the target as a program, not a Python script")
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    return p.parse_args(argv)


def launch(argv=None) -> int:
    a = parse(sys.argv[1:] if argv is None else argv)
    if a.nproc_per_node < 1 or a.nnodes < 1:
        raise SystemExit("--nproc-per-node and --nnodes must be positive")
    if a.node_rank != 0:
        print(f"tritensor.distributed.run: node rank {a.node_rank}: the MPI launch on node rank 0 starts "
              "this node's ranks; nothing to start here", file=sys.stderr)
        return 0
    mpiexec = find_mpiexec()
    cmd = [mpiexec]
    if _is_hydra(mpiexec):
        cmd.append("-disable-auto-cleanup")
    cmd += ["-n", str(a.nproc_per_node * a.nnodes)]
    if a.nnodes > 1:
        cmd += ["-ppn", str(a.nproc_per_node)]
        if a.hostfile:
            cmd += ["-f", a.hostfile]
    env = dict(os.environ, MASTER_ADDR=a.master_addr, MASTER_PORT=str(a.master_port),
               TRITENSOR_NPROC_PER_NODE=str(a.nproc_per_node))
    if a.no_python:
        cmd += [a.script] + a.args
    else:
        cmd += [sys.executable, "-m", "tritensor.distributed.run", "--_worker"] + (["-m"] if a.module else []) \
            + [a.script] + a.args
    proc = subprocess.Popen(cmd, env=env, start_new_session=True)

    def kill(*_):
        _kill_group(proc)
    old = {s: signal.signal(s, lambda sig, frame: (kill(), sys.exit(128 + sig))) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        rc = proc.wait(timeout=a.timeout)
    except subprocess.TimeoutExpired:
        print(f"tritensor.distributed.run: the job ran past --timeout {a.timeout:g} s; killing every rank",
              file=sys.stderr, flush=True)
        rc = 124
    finally:
        kill()
        for s, h in old.items():
            signal.signal(s, h)
    return rc


def _kill_group(proc):
    """SIGTERM, then SIGKILL, the job's process group (mpiexec, its proxies and every rank)."""
    for sig, grace in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=grace or None)
        except subprocess.TimeoutExpired:
            continue
        if sig == signal.SIGTERM:
            try:                 # mpiexec is gone; stragglers of its group get the same end
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            return


def torchrun_env(env):
    """torchrun's variables from the MPI launcher's."""
    out = {}
    rank = _first(env, _RANK_VARS)
    size = _first(env, _SIZE_VARS)
    if rank is not None:
        out["RANK"] = rank
    if size is not None:
        out["WORLD_SIZE"] = size
    nper = env.get("TRITENSOR_NPROC_PER_NODE")
    local = _first(env, _LOCAL_RANK_VARS)
    if local is None and rank is not None and nper:
        local = str(int(rank) % int(nper))
    if local is not None:
        out["LOCAL_RANK"] = local
    lsize = _first(env, _LOCAL_SIZE_VARS, nper)
    if lsize is not None:
        out["LOCAL_WORLD_SIZE"] = lsize
    if rank is not None and nper:
        out["GROUP_RANK"] = str(int(rank) // int(nper))
    out.setdefault("MASTER_ADDR", env.get("MASTER_ADDR", "127.0.0.1"))
    out.setdefault("MASTER_PORT", env.get("MASTER_PORT", "29500"))
    # the MPI launch decides RANK and WORLD_SIZE; a variable the user set otherwise is kept
    return {k: v if k in ("RANK", "WORLD_SIZE") or env.get(k) in (None, "") else env[k] for k, v in out.items()}


def _abort_job(code):
    """Abort every rank when this one failed (torchrun stops the others); alone, just exit."""
    mpi = sys.modules.get("mpi4py.MPI")
    sys.stdout.flush()
    sys.stderr.flush()
    if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized() and mpi.COMM_WORLD.Get_size() > 1:
        time.sleep(0.3)      # mpiexec forwards this rank's last lines before the abort kills it
        mpi.COMM_WORLD.Abort(code)
    os._exit(code)


def worker(argv) -> None:
    module = argv[:1] == ["-m"]
    if module:
        argv = argv[1:]
    os.environ.update(torchrun_env(os.environ))
    sys.argv = list(argv)
    try:
        if module:
            runpy.run_module(argv[0], run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if code:
            if not isinstance(e.code, int):
                print(e.code, file=sys.stderr)
            _abort_job(code)
        raise
    except BaseException:
        rank = os.environ.get("RANK", "?")
        sys.stderr.write(f"[rank {rank}] the script raised; aborting the job:\n" + traceback.format_exc())
        _abort_job(1)


def main():
    if sys.argv[1:2] == ["--_worker"]:
        worker(sys.argv[2:])
    else:
        sys.exit(launch())


if __name__ == "__main__":
    main()
