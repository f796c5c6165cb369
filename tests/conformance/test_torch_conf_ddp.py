"""The same DDP training script on real PyTorch (its gloo backend) and on tapegrad (MPI),
both started by ``python -m tapegrad.launch``: equal parameters after training.  Skipped
without torch, mpi4py or an MPI launcher."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mpi4py", reason="needs mpi4py: pip install 'tapegrad[distributed]'")

from tapegrad.launch import find_mpiexec  # noqa: E402

if find_mpiexec() is None:
    pytest.skip("needs an MPI launcher (mpiexec): pip install 'tapegrad[distributed]'",
                allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "distributed" / "scripts" / "torch_train.py"


def _launch(tmp: Path, out: str, real: bool, port: int) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMP_NUM_THREADS="1")
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(k, None)
    env.pop("TRAIN_WITH_REAL_TORCH", None)
    if real:
        env["TRAIN_WITH_REAL_TORCH"] = "1"
    cmd = [sys.executable, "-m", "tapegrad.launch", "-n", "2", "--master-port", str(port),
           "--timeout", "120", str(SCRIPT), "sgd,adam", out]
    p = subprocess.run(cmd, env=env, cwd=tmp, capture_output=True, text=True, timeout=300)
    if p.returncode != 0 and "EXIT CODE: 9\n" in p.stdout:
        # A rank SIGKILLed from outside (CI once lost a rank of the real PyTorch run this
        # way, with no traceback from either rank): run the job once more.  A rank that
        # raises or computes other numbers still fails the test.
        p = subprocess.run(cmd, env=env, cwd=tmp, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"{cmd}:\n{p.stdout}\n{p.stderr[-3000:]}"


def test_ddp_training_equals_real_pytorch_ddp(tmp_path: Path) -> None:
    _launch(tmp_path, "ours.npz", real=False, port=29641)
    _launch(tmp_path, "real.npz", real=True, port=29642 + os.getpid() % 1000)
    for opt in ("sgd", "adam"):
        ours, real = np.load(tmp_path / f"ours_{opt}.npz"), np.load(tmp_path / f"real_{opt}.npz")
        assert sorted(ours.files) == sorted(real.files)
        for k in ours.files:
            np.testing.assert_allclose(ours[k], real[k], rtol=1e-5, atol=1e-6, err_msg=k)
