"""The examples in tapegrad.tf's docstrings run and print what they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import tapegrad.tf

MODULES = sorted(
    ["tapegrad.tf"] + [m.name for m in pkgutil.walk_packages(tapegrad.tf.__path__, "tapegrad.tf.")]
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    mod = importlib.import_module(name)
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
