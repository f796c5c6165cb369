"""The TensorFlow code of the seed documents runs on tapegrad.tf with only the import
line changed, and prints what real TensorFlow prints (recorded here; the conformance
suite re-checks it against TensorFlow itself)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SEEDS = Path(__file__).parent / "seed_scripts"
ROOT = Path(__file__).resolve().parents[2]

# stdout of real TensorFlow 2.21 for each script
EXPECTED = {
    "seed001_dict_gradients.py": "TensorFlow y: 5.0\nTensorFlow d(y)/d(w): 4.0\n"
                                 "TensorFlow d(y)/d(b): 1.0\n",
    "seed001_higher_order.py": "TensorFlow dy/dx: 12.0, d2y/dx2: 12.0\n",
    "seed000_manual_update.py": "w = 2.097960, b = 0.572011, loss = 0.053173\n"
                                "True (1, 1) (1,)\n",
    "seed000_optimizer.py": "w = 2.097960, b = 0.572011, loss = 0.053173\n20\n",
}


def tapegrad_source(path: Path) -> str:
    """The script with its one import line changed (and nothing else)."""
    src = path.read_text()
    assert src.count("\nimport tensorflow as tf\n") == 1
    return src.replace("\nimport tensorflow as tf\n", "\nimport tapegrad.tf as tf\n")


def run_script(source: str, tmp: Path, name: str) -> subprocess.Popen[str]:
    script = tmp / name
    script.write_text(source)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=str(tmp))


def test_every_seed_script_is_listed() -> None:
    assert sorted(p.name for p in SEEDS.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_seed_script_on_tapegrad(name: str, tmp_path: Path) -> None:
    proc = run_script(tapegrad_source(SEEDS / name), tmp_path, name)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert out == EXPECTED[name]
