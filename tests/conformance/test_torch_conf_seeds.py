"""The seed examples run as scripts: once with ``import torch`` (real PyTorch), once with
the import replaced by ``import tapegrad.torch as torch``; stdout must be identical."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((ROOT / "tests" / "torch_style" / "seed_scripts").glob("seed*.py"))


def _run(source: str, tmp_path: Path, name: str) -> str:
    path = tmp_path / name
    path.write_text(source)
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONHASHSEED="0")
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_all_seed_scripts_found() -> None:
    assert len(SCRIPTS) >= 6


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_seed_script_prints_the_same(script: Path, tmp_path: Path) -> None:
    src = script.read_text()
    assert "\nimport torch\n" in "\n" + src
    ours_src = ("\n" + src).replace("\nimport torch\n", "\nimport tapegrad.torch as torch\n", 1)
    real_out = _run(src, tmp_path, "real_" + script.name)
    ours_out = _run(ours_src[1:], tmp_path, "ours_" + script.name)
    assert real_out
    assert ours_out == real_out
