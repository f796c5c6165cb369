"""``torch.cond``: values, gradients through the taken branch, structure, compile, vmap."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad.torch as torch


def test_cond_runs_the_taken_branch_and_differentiates_through_it() -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.cond(x.sum() > 0, lambda a: (a * a).sum(), lambda a: a.sum(), (x,))
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
    z = torch.cond(torch.tensor(False), lambda a: (a, a * 2), lambda a: (a + 1, a), (x,))
    assert isinstance(z, tuple) and len(z) == 2
    np.testing.assert_allclose(z[0].detach().numpy(), [2.0, 3.0])


def test_cond_under_compile_and_vmap() -> None:
    f = torch.compile(lambda x: torch.cond(x.sum() > 0, lambda a: a * 3, lambda a: a - 1, (x,)))
    np.testing.assert_allclose(f(torch.ones(2)).numpy(), [3.0, 3.0])
    np.testing.assert_allclose(f(-torch.ones(2)).numpy(), [-2.0, -2.0])  # the other branch
    g = torch.vmap(lambda x: torch.cond(x > 0, lambda a: a * 2, lambda a: -a, (x,)))
    np.testing.assert_allclose(g(torch.tensor([1.0, -3.0])).numpy(), [2.0, 3.0])


def test_cond_operands_must_be_a_tuple() -> None:
    with pytest.raises(RuntimeError, match="Expect operands to be a tuple"):
        torch.cond(True, lambda a: a, lambda a: a, torch.ones(1))
