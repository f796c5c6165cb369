"""Conformance: PyTorch-style printing — ``torch.Size``, modules, optimizers, tensors — is
PyTorch's.  Skipped without PyTorch."""

from __future__ import annotations

from typing import Any

import pytest

import tapegrad.torch as tg_torch


@pytest.fixture(scope="module")
def rtorch() -> Any:
    return pytest.importorskip("torch")


def _printed(torch: Any) -> list[str]:
    m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(),
                            torch.nn.Linear(4, 1, bias=False))
    return [repr(torch.Size([2, 3])), str(torch.ones(2, 3).shape), repr(torch.ones(2, 3).size()),
            str(m), repr(torch.nn.MSELoss()), repr(torch.nn.CrossEntropyLoss()),
            str(torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)),
            str(torch.optim.Adam(m.parameters(), lr=1e-3)),
            str(torch.tensor([0.24472847, 1 / 3])), str(torch.tensor([1e-8, 1.0, 1e8])),
            str(torch.tensor([[1.5, 2.25], [3.0, 4.0]], dtype=torch.float64)),
            str(torch.nn.Parameter(torch.ones(2)))]


def test_printed_text_is_pytorchs(rtorch: Any) -> None:
    assert _printed(tg_torch) == _printed(rtorch)
