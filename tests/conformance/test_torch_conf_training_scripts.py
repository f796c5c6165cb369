"""The training scripts run twice as programs, under real PyTorch and with their imports
changed to tapegrad: the printed output must be identical."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((ROOT / "tests" / "torch_style" / "training_scripts").glob("*.py"))


def to_tapegrad(src: str) -> str:
    """Only the import lines changed (as tests/torch_style/test_torch_training_scripts.py)."""
    src = re.sub(r"^import torch$", "import tapegrad.torch as torch", src, flags=re.M)
    return re.sub(r"^from torch((?:\.\w+)*) import", r"from tapegrad.torch\1 import", src,
                  flags=re.M)


def _run(source: str, tmp_path: Path, name: str) -> str:
    path = tmp_path / name
    path.write_text(source)
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONHASHSEED="0")
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_training_script_prints_the_same(script: Path, tmp_path: Path) -> None:
    src = script.read_text()
    real_out = _run(src, tmp_path, "real_" + script.name)
    ours_out = _run(to_tapegrad(src), tmp_path, "ours_" + script.name)
    assert real_out and ours_out == real_out
    assert real_out == script.with_suffix(".expected").read_text()
