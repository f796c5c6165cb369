"""Training programs written for PyTorch (DataLoader, optimizers, schedulers, clipping,
checkpoints), run with only their import lines changed to tapegrad, print what PyTorch
printed (``*.expected``, recorded under real PyTorch 2.13;
``tests/conformance/test_torch_conf_training_scripts.py`` re-checks them live)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent / "training_scripts"
SCRIPTS = sorted(HERE.glob("*.py"))


def to_tapegrad(src: str) -> str:
    """The script with ``import torch`` / ``from torch... import`` pointed at tapegrad."""
    src = re.sub(r"^import torch$", "import tapegrad.torch as torch", src, flags=re.M)
    return re.sub(r"^from torch((?:\.\w+)*) import", r"from tapegrad.torch\1 import", src,
                  flags=re.M)


def test_rewrite_touches_only_imports() -> None:
    src = "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader\nx = 1\n"
    assert to_tapegrad(src) == ("import tapegrad.torch as torch\nfrom tapegrad.torch import nn\n"
                                "from tapegrad.torch.utils.data import DataLoader\nx = 1\n")
    assert len(SCRIPTS) >= 2


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_training_script_output(script: Path) -> None:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(to_tapegrad(script.read_text()), str(script), "exec"),
             {"__name__": "__main__"})
    assert buf.getvalue() == script.with_suffix(".expected").read_text()
