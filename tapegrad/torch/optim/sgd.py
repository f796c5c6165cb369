"""``torch.optim.SGD`` over the shared rule :func:`tapegrad.optim.sgd_update`."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._core.errors import hinted, with_hint
from ...optim import sgd_update
from .optimizer import Optimizer, check_lr_tensor


class SGD(Optimizer):
    """Stochastic gradient descent with momentum, dampening, Nesterov and weight decay.

    Same rule as PyTorch: ``buf = momentum*buf + (1-dampening)*g`` (``buf = g``
    on the first step), ``p -= lr * (g + momentum*buf if nesterov else buf)``.

    >>> import tapegrad.torch as torch
    >>> w = torch.tensor([1.0], requires_grad=True)
    >>> opt = torch.optim.SGD([w], lr=0.1)
    >>> (w * 3).sum().backward(); opt.step(); w
    tensor([0.7000], requires_grad=True)
    """

    def __init__(self, params: Any, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: Any = None, differentiable: bool = False, fused: Any = None) -> None:
        check_lr_tensor(lr)
        if lr < 0.0:
            raise hinted(ValueError(with_hint(f"Invalid learning rate: {lr}", "use lr >= 0")))
        if momentum < 0.0:
            raise hinted(ValueError(with_hint(f"Invalid momentum value: {momentum}",
                                       "use momentum >= 0")))
        if weight_decay < 0.0:
            raise hinted(ValueError(with_hint(f"Invalid weight_decay value: {weight_decay}",
                                       "use weight_decay >= 0")))
        if nesterov and (momentum <= 0 or dampening != 0):
            raise hinted(ValueError(with_hint("Nesterov momentum requires a momentum and zero dampening",
                                       "pass momentum > 0 and dampening=0 with nesterov=True")))
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        if group["lr"] < 0.0:
            raise hinted(ValueError(with_hint(f"Invalid learning rate: {group['lr']}", "use lr >= 0")))

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        sgd_update(param, grad, state, lr=group["lr"], momentum=group["momentum"],
                   dampening=group["dampening"], nesterov=group["nesterov"],
                   weight_decay=group["weight_decay"], maximize=group["maximize"],
                   style="torch")
