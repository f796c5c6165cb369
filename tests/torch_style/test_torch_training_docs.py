"""The examples in the docstrings of the training-loop modules (data, optimizers,
schedulers, utils, backends, profiler) run and print what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "tapegrad.optim", "tapegrad.optim.rules", "tapegrad.optim.adaptive", "tapegrad.optim.lbfgs",
    "tapegrad.torch.optim", "tapegrad.torch.optim.adaptive", "tapegrad.torch.optim.lbfgs",
    "tapegrad.torch.optim.lr_scheduler", "tapegrad.torch.optim.optimizer",
    "tapegrad.torch.optim.swa_utils", "tapegrad.optim.muon",
    "tapegrad.torch.utils", "tapegrad.torch.utils.data", "tapegrad.torch.utils.data.dataset",
    "tapegrad.torch.utils.data.sampler", "tapegrad.torch.utils.data._collate",
    "tapegrad.torch.utils.data.dataloader", "tapegrad.torch.utils.data._worker",
    "tapegrad.torch.utils.benchmark", "tapegrad.torch.nn.utils", "tapegrad.torch.backends",
    "tapegrad.torch.accelerator", "tapegrad.torch.autograd.profiler", "tapegrad.torch.profiler",
    "tapegrad.torch._random",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    mod = importlib.import_module(name)
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
