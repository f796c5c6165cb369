"""The seed examples, run with ``import tapegrad.torch as torch``, print what PyTorch printed.

The expected outputs (``*.expected``) were recorded by running each script
unchanged under real PyTorch 2.13; ``tests/conformance/test_torch_conf_seeds.py``
re-checks them against an installed PyTorch.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent / "seed_scripts"
SCRIPTS = sorted(HERE.glob("seed*.py"))


def run_with_tapegrad(path: Path) -> str:
    src = "\n" + path.read_text()
    assert "\nimport torch\n" in src, "a seed script imports torch on a line of its own"
    src = src.replace("\nimport torch\n", "\nimport tapegrad.torch as torch\n", 1)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(src, str(path), "exec"), {"__name__": "__main__"})
    return buf.getvalue()


def test_scripts_present() -> None:
    assert len(SCRIPTS) >= 6
    for s in SCRIPTS:
        assert s.with_suffix(".expected").exists(), s


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_seed_script_output(script: Path) -> None:
    assert run_with_tapegrad(script) == script.with_suffix(".expected").read_text()
