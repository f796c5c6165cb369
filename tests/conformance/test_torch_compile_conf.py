"""``torch.compile`` programs on tapegrad give real PyTorch's eager numbers.

PyTorch promises that a compiled function returns what the eager one does;
each program of tests/torch_style/torch_compile_programs.py is run compiled on
tapegrad and eagerly on real PyTorch 2.13 (real ``torch.compile`` itself needs
a C++ toolchain and minutes per program here, so its eager result stands in).
"""

from __future__ import annotations

import pytest

import tapegrad.torch as tg
from tests.torch_style import torch_compile_programs as progs

real = pytest.importorskip("torch")


@pytest.mark.parametrize("name", list(progs.PROGRAMS))
def test_compiled_tapegrad_equals_eager_pytorch(name: str) -> None:
    progs.same(progs.run(tg, name, True), progs.run(real, name, False), rtol=2e-5, atol=1e-6)
