"""``torch.optim`` Adagrad, Adadelta, Adamax, NAdam, RAdam, RMSprop, ASGD and Rprop over
the shared rules in :mod:`tapegrad.optim.adaptive`.

Defaults, argument checks and messages are PyTorch's; ``foreach``,
``fused``, ``capturable`` and ``differentiable`` are accepted (tapegrad has
one CPU implementation, PyTorch's single-tensor one).

>>> import tapegrad.torch as torch
>>> w = torch.tensor([1.0], requires_grad=True)
>>> opt = torch.optim.RMSprop([w], lr=0.01)
>>> (w * 2).sum().backward(); opt.step(); w
tensor([0.9000], requires_grad=True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._core.errors import hinted, with_hint
from ...optim import adaptive as rules
from ...optim import muon as muon_rules
from .optimizer import Optimizer, check_lr_tensor

__all__ = ["Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "RMSprop", "ASGD", "Rprop",
           "Adafactor", "Muon", "SparseAdam"]


def _nonneg(name: str, value: Any, what: str | None = None) -> None:
    if not 0.0 <= value:
        raise hinted(ValueError(with_hint(f"Invalid {what or name}: {value}", f"use {name} >= 0")))


def _lr(lr: Any) -> None:
    check_lr_tensor(lr)
    _nonneg("lr", lr, "learning rate")


def _betas(betas: Any) -> None:
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise hinted(ValueError(with_hint(f"Invalid beta parameter at index {i}: {betas[i]}",
                                       "betas are in [0, 1)")))


class Adagrad(Optimizer):
    """Adagrad: per-element steps scaled by the root of the summed squared gradients.

    >>> import tapegrad.torch as torch
    >>> w = torch.tensor([1.0], requires_grad=True)
    >>> opt = torch.optim.Adagrad([w], lr=0.1)
    >>> (w * 3).sum().backward(); opt.step(); w
    tensor([0.9000], requires_grad=True)
    """

    def __init__(self, params: Any, lr: float = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        _lr(lr)
        _nonneg("lr_decay", lr_decay, "lr_decay value")
        _nonneg("weight_decay", weight_decay, "weight_decay value")
        _nonneg("initial_accumulator_value", initial_accumulator_value,
                "initial_accumulator_value value")
        _nonneg("eps", eps, "epsilon value")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        # PyTorch creates Adagrad's state eagerly (``step`` 0 and ``sum``)
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p] = {"step": 0, "sum": np.full_like(
                    p._data, group["initial_accumulator_value"])}

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        rules.adagrad_update(param, grad, state, lr=group["lr"], lr_decay=group["lr_decay"],
                             weight_decay=group["weight_decay"],
                             initial_accumulator_value=group["initial_accumulator_value"],
                             eps=group["eps"], maximize=group["maximize"])


class Adadelta(Optimizer):
    """Adadelta (Zeiler): steps scaled by the ratio of running RMS of updates and
    gradients."""

    def __init__(self, params: Any, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise hinted(ValueError(with_hint(f"Invalid rho value: {rho}", "rho is in [0, 1]")))
        _nonneg("eps", eps, "epsilon value")
        _nonneg("weight_decay", weight_decay, "weight_decay value")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        rules.adadelta_update(param, grad, state, lr=group["lr"], rho=group["rho"],
                              eps=group["eps"], weight_decay=group["weight_decay"],
                              maximize=group["maximize"])


class Adamax(Optimizer):
    """Adamax: Adam with the infinity norm in place of the second moment."""

    def __init__(self, params: Any, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _lr(lr)
        _nonneg("eps", eps, "epsilon value")
        _betas(betas)
        _nonneg("weight_decay", weight_decay, "weight_decay value")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        b1, b2 = group["betas"]
        rules.adamax_update(param, grad, state, lr=group["lr"], beta1=b1, beta2=b2,
                            eps=group["eps"], weight_decay=group["weight_decay"],
                            maximize=group["maximize"])


class NAdam(Optimizer):
    """NAdam: Adam with Nesterov momentum (PyTorch's momentum-decay schedule)."""

    def __init__(self, params: Any, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _lr(lr)
        _nonneg("eps", eps, "epsilon value")
        _betas(betas)
        _nonneg("weight_decay", weight_decay, "weight_decay value")
        _nonneg("momentum_decay", momentum_decay, "momentum_decay value")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        b1, b2 = group["betas"]
        rules.nadam_update(param, grad, state, lr=group["lr"], beta1=b1, beta2=b2,
                           eps=group["eps"], weight_decay=group["weight_decay"],
                           momentum_decay=group["momentum_decay"],
                           decoupled_weight_decay=group["decoupled_weight_decay"],
                           maximize=group["maximize"])


class RAdam(Optimizer):
    """RAdam: Adam with a rectified adaptive learning rate."""

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _lr(lr)
        _nonneg("eps", eps, "epsilon value")
        _betas(betas)
        _nonneg("weight_decay", weight_decay, "weight_decay value")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        b1, b2 = group["betas"]
        rules.radam_update(param, grad, state, lr=group["lr"], beta1=b1, beta2=b2,
                           eps=group["eps"], weight_decay=group["weight_decay"],
                           decoupled_weight_decay=group["decoupled_weight_decay"],
                           maximize=group["maximize"])


class RMSprop(Optimizer):
    """RMSprop, optionally centered and with momentum."""

    def __init__(self, params: Any, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _lr(lr)
        _nonneg("eps", eps, "epsilon value")
        _nonneg("momentum", momentum, "momentum value")
        _nonneg("weight_decay", weight_decay, "weight_decay value")
        _nonneg("alpha", alpha, "alpha value")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        rules.rmsprop_update(param, grad, state, lr=group["lr"], alpha=group["alpha"],
                             eps=group["eps"], weight_decay=group["weight_decay"],
                             momentum=group["momentum"], centered=group["centered"],
                             maximize=group["maximize"])


class ASGD(Optimizer):
    """Averaged SGD (Polyak-Juditsky); the running average is ``state[p]["ax"]``."""

    def __init__(self, params: Any, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _lr(lr)
        _nonneg("weight_decay", weight_decay, "weight_decay value")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        rules.asgd_update(param, grad, state, lr=group["lr"], lambd=group["lambd"],
                          alpha=group["alpha"], t0=group["t0"],
                          weight_decay=group["weight_decay"], maximize=group["maximize"])


class Rprop(Optimizer):
    """Resilient backpropagation: per-element step sizes adapted from gradient signs."""

    def __init__(self, params: Any, lr: float = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise hinted(ValueError(with_hint(f"Invalid eta values: {etas[0]}, {etas[1]}",
                                       "use 0 < etaminus < 1 < etaplus")))
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        em, ep = group["etas"]
        lo, hi = group["step_sizes"]
        rules.rprop_update(param, grad, state, lr=group["lr"], etaminus=em, etaplus=ep,
                           step_size_min=lo, step_size_max=hi, maximize=group["maximize"])


class Adafactor(Optimizer):
    """Adafactor with factored second moments for matrices (PyTorch's variant)."""

    def __init__(self, params: Any, lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0,
                 weight_decay: float = 0.0, *, foreach: bool | None = None,
                 maximize: bool = False) -> None:
        check_lr_tensor(lr)
        checks = [(0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}"),
                  (0.0 >= beta2_decay, f"beta2_decay should be <= 0 but is: {beta2_decay}"),
                  (eps[0] is None or 0.0 <= eps[0], f"epsilon1 should be >= 0 but is: {eps[0]}"),
                  (0.0 <= eps[1], f"epsilon2 should be >= 0 but is: {eps[1]}"),
                  (1.0 <= d, f"Clipping threshold d should be >= 1 but is: {d}"),
                  (0.0 <= weight_decay, f"weight_decay should be >= 0 but is: {weight_decay}")]
        for ok, msg in checks:
            if not ok:
                raise hinted(ValueError(with_hint(msg, "see torch.optim.Adafactor's argument ranges")))
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        eps1, eps2 = group["eps"]
        rules.adafactor_update(param, grad, state, lr=group["lr"],
                               beta2_decay=group["beta2_decay"], eps1=eps1, eps2=eps2,
                               d=group["d"], weight_decay=group["weight_decay"],
                               maximize=group["maximize"])


class Muon(Optimizer):
    """Muon for 2-D parameters: SGD momentum orthogonalised by a bfloat16 Newton-Schulz
    iteration (bit for bit as PyTorch computes it)."""

    def __init__(self, params: Any, lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = (3.4445, -4.7750, 2.0315),
                 eps: float = 1e-7, ns_steps: int = 5, adjust_lr_fn: str | None = None) -> None:
        check_lr_tensor(lr)
        for ok, msg in [(0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}"),
                        (0.0 <= momentum, f"momentum should be >= 0 but is: {momentum}"),
                        (0.0 <= weight_decay,
                         f"weight decay should be >= 0 but is: {weight_decay}"),
                        (adjust_lr_fn in (None, "original", "match_rms_adamw"),
                         f"Adjust learning rate function {adjust_lr_fn} is not supported")]:
            if not ok:
                raise hinted(ValueError(with_hint(msg, "see torch.optim.Muon's argument ranges")))
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
                        nesterov=nesterov, ns_coefficients=ns_coefficients, eps=eps,
                        ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p._data.ndim != 2:
                    raise hinted(ValueError(with_hint(
                        "Muon only supports 2D parameters whereas we found a parameter with "
                        f"size: {p.size()}",
                        "optimise weight matrices with Muon and biases/norms with AdamW")))

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        muon_rules.muon_update(param, grad, state, lr=group["lr"],
                               weight_decay=group["weight_decay"], momentum=group["momentum"],
                               nesterov=group["nesterov"],
                               ns_coefficients=group["ns_coefficients"], eps=group["eps"],
                               ns_steps=group["ns_steps"], adjust_lr_fn=group["adjust_lr_fn"])


class SparseAdam(Optimizer):
    """``torch.optim.SparseAdam``: Adam for sparse gradients.

    tapegrad's gradients are always dense, so ``step`` raises PyTorch's error for
    dense gradients, as PyTorch does for them.
    """

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        _lr(lr)
        _nonneg("eps", eps, "epsilon value")
        _betas(betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any],
                group: dict[str, Any]) -> None:
        raise hinted(RuntimeError(with_hint(
            "SparseAdam does not support dense gradients, please consider Adam instead",
            "tapegrad's gradients are dense: use torch.optim.Adam (or AdamW)")))
