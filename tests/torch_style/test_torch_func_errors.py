"""PyTorch's exceptions and messages from ``torch.autograd.functional`` and ``torch.func``
on bad input (texts as PyTorch 2.13 raises them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import tapegrad.torch as torch

AF = torch.autograd.functional
X = torch.tensor([1.0, 2.0, 3.0])

CASES: list[tuple[Callable[[], Any], type[Exception], str]] = [
    (lambda: AF.jvp(lambda v: v * 2, X, torch.ones(2)), RuntimeError,
     "v has invalid size: should be torch.Size([3]) but got torch.Size([2])."),
    (lambda: AF.vjp(lambda v: v.sum(), X, torch.ones(2)), RuntimeError,
     "v has invalid size: should be torch.Size([]) but got torch.Size([2])."),
    (lambda: AF.vjp(lambda a, b: (a, b), (X, X), (X,)), RuntimeError,
     "v is a tuple of invalid length: should be 2 but got 1."),
    (lambda: AF.jvp(lambda a, b: a * b, (X, X), (X, torch.ones(2))), RuntimeError,
     "Entry 1 in v has invalid size: should be torch.Size([3]) but got torch.Size([2])."),
    (lambda: AF.hessian(lambda v: v * 2, X), RuntimeError,
     "The Tensor returned by the function given to hessian should contain a single element"),
    (lambda: AF.hvp(lambda v: v, X, X), RuntimeError,
     "The Tensor returned by the function given to hvp should contain a single element"),
    (lambda: AF.vhp(lambda v: (v.sum(), v.sum()), X, X), RuntimeError,
     "The function given to vhp should return a single Tensor"),
    (lambda: AF.jacobian(lambda v: 3.0, X), TypeError,
     "The outputs of the user-provided function given to jacobian must be either a Tensor or "
     "a tuple of Tensors but the given outputs of the user-provided function has type "
     "<class 'float'>."),
    (lambda: AF.jacobian(lambda v: v, [X]), TypeError,
     "The inputs given to jacobian must be either a Tensor or a tuple of Tensors but the "
     "given inputs has type <class 'list'>."),
    (lambda: AF.jacobian(lambda v: (v, 1), X), TypeError,
     "The outputs of the user-provided function given to jacobian must be either a Tensor or "
     "a tuple of Tensors but the value at index 1 has type <class 'int'>."),
    (lambda: AF.jacobian(lambda v: torch.ones(2), X, strict=True, vectorize=True),
     RuntimeError, "Output 0 of the user-provided function does not require gradients."),
]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_functional_errors(i: int) -> None:
    fn, exc, msg = CASES[i]
    with pytest.raises(exc) as e:
        fn()
    assert str(e.value).startswith(msg), str(e.value)
