"""The examples in the conv-net modules' docstrings (core ops and the PyTorch-style
front-end) run and print what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "tapegrad.ops.conv", "tapegrad.ops.pool", "tapegrad.ops.norm", "tapegrad.ops.embedding",
    "tapegrad.ops.resize", "tapegrad.ops.dropout", "tapegrad.ops.padding", "tapegrad.torch.nn._functional_conv",
    "tapegrad.torch.nn.conv", "tapegrad.torch.nn.pooling", "tapegrad.torch.nn.normalization",
    "tapegrad.torch.nn.dropout", "tapegrad.torch.nn.sparse", "tapegrad.torch.nn.padding",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    mod = importlib.import_module(name)
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
