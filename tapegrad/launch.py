"""Start a training script on N ranks: ``python -m tapegrad.launch -n 4 train.py [args]``.

``--nproc-per-node 4`` (``torchrun``'s spelling, also ``--nproc_per_node``) is the same.
The ranks are started by the MPI launcher (``mpiexec``/``mpirun``, from MPICH's wheel in
the ``distributed`` extra or the system's Open MPI), and each sees the variables
``torchrun`` sets: ``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``,
``MASTER_ADDR``, ``MASTER_PORT``.  Plain ``mpirun -n 4 python train.py`` works too.

A rank that raises makes the whole job stop (its traceback is printed, the launcher exits
with its code); a rank that hangs makes the others fail when ``--timeout`` (seconds,
default PyTorch's 30 minutes) runs out; Ctrl-C stops every rank.
"""

from __future__ import annotations

import argparse
import os
import runpy
import shutil
import signal
import subprocess
import sys
from typing import Any

from ._core.errors import hinted, with_hint

__all__ = ["find_mpiexec", "main", "mpiexec_command"]


def find_mpiexec() -> str | None:
    """The MPI launcher: next to this Python first (a venv with the extra), then PATH."""
    here = os.path.dirname(sys.executable)
    for name in ("mpiexec", "mpirun"):
        cand = os.path.join(here, name)
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    for name in ("mpiexec", "mpirun"):
        found = shutil.which(name)
        if found:
            return found
    return None


def mpiexec_command(n: int, mpiexec: str | None = None) -> list[str]:
    """``[mpiexec, "-n", n, ...]``: with Open MPI's launcher also ``--oversubscribe`` (it
    refuses more ranks than cores otherwise) and, as root, ``--allow-run-as-root``."""
    exe = mpiexec or find_mpiexec()
    if exe is None:
        raise hinted(FileNotFoundError(with_hint(
            "mpiexec not found: cannot start the ranks",
            "pip install 'tapegrad[distributed]' (mpi4py and MPICH, whose wheel brings "
            "mpiexec) or install Open MPI")))
    cmd = [exe, "-n", str(n)]
    try:
        version = subprocess.run([exe, "--version"], capture_output=True, text=True,
                                 timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        version = ""
    if "Open MPI" in version or "OpenRTE" in version:
        cmd.append("--oversubscribe")
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
    return cmd


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m tapegrad.launch",
        description="Run a script on N ranks over MPI (torchrun-style environment).")
    p.add_argument("-n", "--np", "--nproc-per-node", "--nproc_per_node", dest="n", type=int,
                   default=None, help="number of ranks (processes) to start")
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", type=int, default=29500)
    p.add_argument("--timeout", type=float, default=None,
                   help="seconds a collective may wait for the other ranks (default 1800)")
    p.add_argument("-m", dest="module", action="store_true",
                   help="run the target as a module (python -m)")
    p.add_argument("--_rank", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("target", help="the script (or module with -m)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    return p


def _run_target(module: bool, target: str, args: list[str]) -> None:
    if module:
        sys.argv = [target, *args]
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    else:
        sys.argv = [target, *args]
        sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
        runpy.run_path(target, run_name="__main__")


def _rank_main(ns: argparse.Namespace) -> None:
    """Inside one rank: torchrun's variables from the MPI launcher's, then the script."""
    from .comm import world_rank_size

    rank, size = world_rank_size()
    env = os.environ
    env["RANK"] = str(rank)
    env["LOCAL_RANK"] = str(rank)
    env["GROUP_RANK"] = "0"
    env["WORLD_SIZE"] = str(size)
    env["LOCAL_WORLD_SIZE"] = str(size)
    _run_target(ns.module, ns.target, list(ns.args))


def main(argv: list[str] | None = None) -> int:
    ns = _parser().parse_args(argv)
    if ns._rank:
        _rank_main(ns)
        return 0
    n = 1 if ns.n is None else ns.n
    if n < 1:
        raise hinted(ValueError(with_hint(f"-n must be at least 1, got {n}",
                                          "give the number of ranks, e.g. -n 4")))
    env = dict(os.environ)
    env.update(MASTER_ADDR=str(ns.master_addr), MASTER_PORT=str(ns.master_port),
               WORLD_SIZE=str(n), LOCAL_WORLD_SIZE=str(n))
    env.pop("RANK", None)
    env.pop("LOCAL_RANK", None)
    if ns.timeout is not None:
        env["TAPEGRAD_DIST_TIMEOUT"] = str(ns.timeout)
    cmd = mpiexec_command(n) + [sys.executable, "-m", "tapegrad.launch", "--_rank"]
    if ns.module:
        cmd.append("-m")
    cmd += [ns.target, *ns.args]
    proc = subprocess.Popen(cmd, env=env)
    try:
        code = proc.wait()
    except KeyboardInterrupt:
        code = _stop(proc)
        sys.stderr.write("tapegrad.launch: interrupted; every rank was stopped\n")
        return 130
    if code != 0:
        sys.stderr.write(
            f"tapegrad.launch: the job failed (exit code {code}): a rank raised, died or "
            "timed out, and every rank was stopped; the failing rank's output is above\n")
    return code


def _stop(proc: Any) -> int:
    """Ctrl-C: the MPI launcher forwards SIGINT to the ranks; kill what is left."""
    for sig, wait in ((signal.SIGINT, 10.0), (signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            break
        try:
            proc.send_signal(sig)
            return int(proc.wait(timeout=wait))
        except subprocess.TimeoutExpired:
            continue
        except KeyboardInterrupt:
            continue
    return int(proc.poll() or 1)


if __name__ == "__main__":
    sys.exit(main())
