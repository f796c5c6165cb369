"""The docstring examples of the data-parallel modules run (they need no MPI)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "tapegrad.comm", "tapegrad.launch", "tapegrad.torch.distributed",
    "tapegrad.torch.distributed.distributed_c10d", "tapegrad.torch.nn.parallel",
    "tapegrad.torch.nn.parallel.distributed", "tapegrad.torch.utils.data.distributed",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    mod = importlib.import_module(name)
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
