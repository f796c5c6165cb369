"""``torch.cond`` against real PyTorch 2.13: values, gradients and the result's structure."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tapegrad.torch as tt


def _program(torch: Any) -> list[Any]:
    out = []
    for sign in (1.0, -1.0):
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = torch.cond((x * sign).sum() > 0, lambda a: (a.sin() * a).sum(),
                       lambda a: (a * a * a).sum(), (x,))
        y.backward()
        out += [y.detach().numpy(), x.grad.numpy()]
    two = torch.cond(torch.tensor(False), lambda a: (a * 1, a * 2), lambda a: (a + 1, a * 3),
                     (torch.ones(2),))
    out += [len(two), two[0].numpy(), two[1].numpy()]
    return out


def test_cond_matches_pytorch() -> None:
    real = pytest.importorskip("torch")
    for a, b in zip(_program(tt), _program(real)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
