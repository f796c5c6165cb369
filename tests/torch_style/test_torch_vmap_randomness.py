"""Random ops under ``vmap(randomness=...)``: ``'different'`` draws the whole batch at once
(example ``b`` gets the ``b``-th block of one draw, as PyTorch's CPU generator gives it),
``'same'`` one draw shared by every example, ``'error'`` PyTorch's error."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tapegrad.torch as torch

Z = torch.zeros(3, 2)


def _run(fn: Callable[[Any], Any], mode: str) -> np.ndarray:
    torch.manual_seed(0)
    return torch.vmap(fn, randomness=mode)(Z).numpy()


def test_different_is_one_draw_of_the_batch() -> None:
    torch.manual_seed(0)
    want = torch.randn(3, 2).numpy()
    for fn in (lambda a: torch.normal(a, 1.0), lambda a: torch.normal(a, a.abs() + 1),
               lambda a: a.clone().normal_(), lambda a: torch.randn(2) + a):
        np.testing.assert_allclose(_run(fn, "different"), want, rtol=1e-6)
    torch.manual_seed(0)
    ints = torch.randint(5, (3, 2)).numpy()
    np.testing.assert_array_equal(_run(lambda a: torch.randint(5, (2,)) + a, "different"), ints)
    torch.manual_seed(0)
    uni = torch.rand(3, 2).numpy()
    np.testing.assert_allclose(_run(lambda a: a.clone().uniform_(), "different"), uni)


def test_different_randperm_is_one_permutation_per_example() -> None:
    torch.manual_seed(0)
    want = np.stack([torch.randperm(4).numpy() for _ in range(3)])
    torch.manual_seed(0)
    got = torch.vmap(lambda a: torch.randperm(4) + a, randomness="different")(
        torch.zeros(3, 4, dtype=torch.long))
    np.testing.assert_array_equal(got.numpy(), want)


def test_same_shares_one_draw() -> None:
    for fn in (lambda a: a.clone().normal_(), lambda a: a.clone().uniform_(),
               lambda a: a.clone().bernoulli_(0.5), lambda a: torch.zeros(2).normal_() + a):
        r = _run(fn, "same")
        assert (r == r[0]).all()


@pytest.mark.parametrize("fn,mode,msg", [
    (lambda a: torch.normal(a, 1.0), "same",
     "Vmap does not currently support same randomness with a batched tensor input"),
    (lambda a: torch.zeros(2).normal_() + a, "different",
     "vmap: Cannot ask for different inplace randomness on an unbatched tensor"),
    (lambda a: a.clone().bernoulli_(0.5), "error",
     "vmap: called random operation while in randomness error mode"),
    (lambda a: a.clone().uniform_(), "error",
     "vmap: called random operation while in randomness error mode"),
])
def test_randomness_errors(fn: Callable[[Any], Any], mode: str, msg: str) -> None:
    with pytest.raises(RuntimeError, match=msg):
        torch.vmap(fn, randomness=mode)(Z)


def test_normal_sends_no_gradient_to_its_mean() -> None:
    torch.manual_seed(0)
    g = torch.vmap(torch.func.grad(lambda a: (a * torch.normal(a, 2.0)).sum()),
                   randomness="different")(torch.ones(3, 2))
    torch.manual_seed(0)
    np.testing.assert_allclose(g.numpy(), (torch.randn(3, 2) * 2 + 1).numpy(), rtol=1e-6)
