"""Data parallelism on 2 and 4 local MPI ranks (the scripts in ``scripts/`` run under
``mpiexec``): collectives against NumPy, N-rank training against one process on the
concatenated batches (both styles, SGD and Adam), a failing rank, the launcher.

Skipped, with the reason, where mpi4py or an MPI launcher is missing (install the
``distributed`` extra).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mpi4py", reason="needs mpi4py: pip install 'tapegrad[distributed]'")

from tapegrad.launch import find_mpiexec, mpiexec_command  # noqa: E402

MPIEXEC = find_mpiexec()
if MPIEXEC is None:
    pytest.skip("needs an MPI launcher (mpiexec): pip install 'tapegrad[distributed]'",
                allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = Path(__file__).resolve().parent / "scripts"
TIMEOUT = 240  # seconds for one job: generous on a loaded machine, never forever


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "TF_CONFIG"):
        env.pop(k, None)
    env.setdefault("OMP_NUM_THREADS", "1")
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    return env


def ranks(n: int, script: str, *args: str, cwd: Path | None = None,
          check: bool = True) -> subprocess.CompletedProcess[str]:
    cmd = mpiexec_command(n, MPIEXEC) + [sys.executable, str(SCRIPTS / script), *args]
    p = subprocess.run(cmd, env=_env(), cwd=cwd, capture_output=True, text=True,
                       timeout=TIMEOUT)
    if check:
        assert p.returncode == 0, f"{cmd} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}"
    return p


def alone(script: str, *args: str, cwd: Path | None = None) -> None:
    p = subprocess.run([sys.executable, str(SCRIPTS / script), *args], env=_env(), cwd=cwd,
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 0, f"{script} {args} failed:\n{p.stdout}\n{p.stderr}"


def same(a: Path, b: Path, tol: float = 1e-5) -> float:
    x, y = np.load(a), np.load(b)
    assert sorted(x.files) == sorted(y.files)
    worst = max(float(np.max(np.abs(x[k] - y[k]))) for k in x.files)
    assert worst < tol, f"{a.name} vs {b.name}: max difference {worst}"
    return worst


@pytest.mark.parametrize("n", [2, 4])
def test_collectives_equal_numpy(n: int) -> None:
    p = ranks(n, "collectives.py")
    assert sorted(re.findall(r"OK collectives rank \d of \d", p.stdout)) == \
        [f"OK collectives rank {r} of {n}" for r in range(n)]


@pytest.mark.parametrize("n", [2, 4])
def test_ddp_equals_one_process_on_the_concatenated_batch(tmp_path: Path, n: int) -> None:
    ranks(n, "torch_train.py", "sgd,adam", "ddp.npz", cwd=tmp_path)
    alone("torch_train.py", "sgd,adam", "ref.npz", "--reference", str(n), cwd=tmp_path)
    for opt in ("sgd", "adam"):
        same(tmp_path / f"ddp_{opt}.npz", tmp_path / f"ref_{opt}.npz")
    # the check can fail: one process on one rank's batches alone lands elsewhere
    alone("torch_train.py", "sgd", "one.npz", "--reference", "1", cwd=tmp_path)
    with pytest.raises(AssertionError):
        same(tmp_path / "ddp_sgd.npz", tmp_path / "one_sgd.npz")


@pytest.mark.parametrize("n", [2, 4])
def test_strategy_equals_one_process_on_the_global_batch(tmp_path: Path, n: int) -> None:
    ranks(n, "tf_train.py", "loop,fit", "sgd,adam", "mw.npz", cwd=tmp_path)
    alone("tf_train.py", "loop,fit", "sgd,adam", "ref.npz", "--reference", cwd=tmp_path)
    for mode in ("loop", "fit"):
        for opt in ("sgd", "adam"):
            same(tmp_path / f"mw_{mode}_{opt}.npz", tmp_path / f"ref_{mode}_{opt}.npz")


def test_a_rank_that_raises_stops_the_job() -> None:
    p = ranks(2, "crash.py", "raise", check=False)
    assert p.returncode != 0
    assert "boom on rank 1" in p.stderr
    assert "rank 1 failed with RuntimeError; aborting every rank" in p.stderr
    assert "unreachable" not in p.stdout


def test_a_rank_that_hangs_times_out_the_others() -> None:
    p = ranks(2, "crash.py", "hang", check=False)
    assert p.returncode != 0
    assert "DistBackendError" in p.stderr
    # the all_reduce rank 1 never joins (on a loaded machine the start-up barrier can be the
    # collective that times out first: the same error, naming it)
    assert re.search(r"Timed out waiting 3000ms for \w+ to complete on rank 0 of 2", p.stderr)


@pytest.mark.parametrize("flag", ["-n", "--nproc-per-node"])
def test_launcher_sets_torchrun_variables(flag: str) -> None:
    cmd = [sys.executable, "-m", "tapegrad.launch", flag, "2",
           str(SCRIPTS / "env_check.py"), "a", "--b"]
    p = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    # the ranks' lines may interleave in the launcher's output
    lines = sorted(re.findall(r"rank \d/\d sum \d args \['a', '--b'\]", p.stdout))
    assert lines == [f"rank {r}/2 sum 1 args ['a', '--b']" for r in range(2)]


def test_launcher_timeout_bounds_every_wait() -> None:
    cmd = [sys.executable, "-m", "tapegrad.launch", "-n", "2", "--timeout", "2",
           str(SCRIPTS / "crash.py"), "hang-default"]
    p = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode != 0
    assert "Timed out waiting 2000ms for all_reduce to complete on rank 0 of 2" in p.stderr


def test_launcher_reports_a_failed_rank() -> None:
    cmd = [sys.executable, "-m", "tapegrad.launch", "-n", "2", str(SCRIPTS / "crash.py"),
           "raise"]
    p = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode != 0
    assert "tapegrad.launch: the job failed" in p.stderr


def test_ctrl_c_stops_every_rank() -> None:
    cmd = [sys.executable, "-m", "tapegrad.launch", "-n", "2", str(SCRIPTS / "sleeper.py")]
    p = subprocess.Popen(cmd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    assert p.stdout is not None
    out = ""
    deadline = time.monotonic() + TIMEOUT
    while out.count("ready") < 2 and time.monotonic() < deadline and p.poll() is None:
        out += p.stdout.readline()
    pids = [int(x) for x in re.findall(r"pid (\d+)", out)]
    assert len(pids) == 2, out
    p.send_signal(signal.SIGINT)  # what Ctrl-C sends the launcher
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130
    assert "tapegrad.launch: interrupted; every rank was stopped" in err
    gone = time.monotonic() + 30
    while time.monotonic() < gone and any(_alive(pid) for pid in pids):
        time.sleep(0.2)
    assert not any(_alive(pid) for pid in pids), "a rank outlived Ctrl-C"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][:1] != "Z"  # a zombie has stopped
    except FileNotFoundError:
        return False
