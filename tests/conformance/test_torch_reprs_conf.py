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


def _more_modules(torch: Any) -> list[str]:
    nn = torch.nn
    return [repr(nn.LayerNorm(4)), repr(nn.LayerNorm(4, bias=False)),
            repr(nn.LayerNorm([2, 3], elementwise_affine=False)), repr(nn.BatchNorm1d(4)),
            repr(nn.Conv2d(3, 8, 3, stride=2, padding=1)), repr(nn.LSTM(3, 5, batch_first=True)),
            repr(nn.Embedding(10, 3)), repr(nn.ModuleDict({"a": nn.Linear(1, 1)})),
            repr(nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.2), nn.Softmax(dim=1))),
            str(torch.optim.AdamW(nn.Linear(2, 1).parameters())),
            str(torch.optim.RMSprop(nn.Linear(2, 1).parameters())),
            repr(torch.tensor([float("nan"), float("inf"), -0.0, 1.5])),
            repr(torch.arange(12.0).reshape(3, 4) / 7), repr(torch.tensor([0.1, 0.2],
                                                                          dtype=torch.float16))]


def test_more_module_and_tensor_reprs_are_pytorchs(rtorch: Any) -> None:
    assert _more_modules(tg_torch) == _more_modules(rtorch)
