"""50-step training runs of an MLP on PyTorch and tapegrad.torch with each optimizer.

Both start from the same weights (``torch.manual_seed``: tapegrad reproduces
PyTorch's generator, checked exactly first) and must end with parameters equal
to 1e-5 relative.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

real = pytest.importorskip("torch")
import tapegrad.torch as tt  # noqa: E402

OPTIMIZERS = {
    "sgd": lambda torch, p: torch.optim.SGD(p, lr=0.1),
    "sgd_momentum": lambda torch, p: torch.optim.SGD(p, lr=0.05, momentum=0.9),
    "sgd_nesterov": lambda torch, p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True),
    "sgd_dampening_wd": lambda torch, p: torch.optim.SGD(p, lr=0.05, momentum=0.5,
                                                         dampening=0.3, weight_decay=1e-2),
    "adam": lambda torch, p: torch.optim.Adam(p, lr=1e-2),
    "adam_amsgrad_wd": lambda torch, p: torch.optim.Adam(p, lr=1e-2, amsgrad=True,
                                                         weight_decay=1e-3),
    "adamw": lambda torch, p: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.05),
}


def _model(torch: Any) -> Any:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 8),
                               torch.nn.ReLU(), torch.nn.Linear(8, 3))


def _train(torch: Any, opt_name: str, loss_kind: str, steps: int = 50) -> tuple[list[Any], ...]:
    model = _model(torch)
    init = [p.detach().numpy().copy() for p in model.parameters()]
    rng = np.random.default_rng(1)
    x = torch.tensor(rng.standard_normal((32, 4)).astype(np.float32))
    if loss_kind == "ce":
        y = torch.tensor(rng.integers(0, 3, 32))
        loss_fn = torch.nn.CrossEntropyLoss()
    else:
        y = torch.tensor(rng.standard_normal((32, 3)).astype(np.float32))
        loss_fn = torch.nn.MSELoss()
    opt = OPTIMIZERS[opt_name](torch, model.parameters())
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    final = [p.detach().numpy().copy() for p in model.parameters()]
    return init, final, losses


def test_initial_weights_identical() -> None:
    a = [p.detach().numpy() for p in _model(real).parameters()]
    b = [p.detach().numpy() for p in _model(tt).parameters()]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("loss_kind", ["ce", "mse"])
@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
def test_training_matches(opt_name: str, loss_kind: str) -> None:
    init_r, final_r, losses_r = _train(real, opt_name, loss_kind)
    init_t, final_t, losses_t = _train(tt, opt_name, loss_kind)
    for a, b in zip(init_r, init_t):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(final_r, final_t):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(losses_t, losses_r, rtol=1e-5)
    assert losses_t[-1] < losses_t[0]
