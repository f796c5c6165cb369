"""``torch.optim.Adam`` and ``AdamW`` over the shared rule :func:`tapegrad.optim.adam_update`."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._core.errors import hinted, with_hint
from ...optim import adam_update
from .optimizer import Optimizer, check_lr_tensor


def _check(lr: float, betas: Any, eps: float, weight_decay: float) -> None:
    check_lr_tensor(lr)
    if not 0.0 <= lr:
        raise hinted(ValueError(with_hint(f"Invalid learning rate: {lr}", "use lr >= 0")))
    if not 0.0 <= eps:
        raise hinted(ValueError(with_hint(f"Invalid epsilon value: {eps}", "use eps >= 0")))
    if not 0.0 <= betas[0] < 1.0:
        raise hinted(ValueError(with_hint(f"Invalid beta parameter at index 0: {betas[0]}",
                                   "betas are in [0, 1)")))
    if not 0.0 <= betas[1] < 1.0:
        raise hinted(ValueError(with_hint(f"Invalid beta parameter at index 1: {betas[1]}",
                                   "betas are in [0, 1)")))
    if not 0.0 <= weight_decay:
        raise hinted(ValueError(with_hint(f"Invalid weight_decay value: {weight_decay}",
                                   "use weight_decay >= 0")))


class Adam(Optimizer):
    """Adam (Kingma & Ba) exactly as PyTorch computes it; ``decoupled_weight_decay=True``
    is AdamW.

    >>> import tapegrad.torch as torch
    >>> w = torch.tensor([1.0], requires_grad=True)
    >>> opt = torch.optim.Adam([w], lr=0.1)
    >>> (w * 3).sum().backward(); opt.step(); w
    tensor([0.9000], requires_grad=True)
    """

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: Any = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: Any = None,
                 decoupled_weight_decay: bool = False) -> None:
        _check(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        _check(group["lr"], group["betas"], group["eps"], group["weight_decay"])

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        b1, b2 = group["betas"]
        adam_update(param, grad, state, lr=group["lr"], beta1=b1, beta2=b2, eps=group["eps"],
                    weight_decay=group["weight_decay"],
                    decoupled_weight_decay=group["decoupled_weight_decay"],
                    amsgrad=group["amsgrad"], maximize=group["maximize"], style="torch")


class AdamW(Adam):
    """Adam with decoupled weight decay (``p *= 1 - lr*weight_decay`` before each step)."""

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: Any = None, capturable: bool = False,
                 differentiable: bool = False, fused: Any = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
