"""``torch.optim.swa_utils``: stochastic weight averaging (``AveragedModel``, ``SWALR``,
``update_bn``) and exponential moving averages of a model's weights.

>>> import tapegrad.torch as torch
>>> from tapegrad.torch.optim.swa_utils import AveragedModel
>>> lin = torch.nn.Linear(1, 1, bias=False)
>>> swa = AveragedModel(lin)
>>> for w in [1.0, 2.0, 6.0]:
...     with torch.no_grad():
...         _ = lin.weight.fill_(w)
...     swa.update_parameters(lin)
>>> swa.module.weight, swa.n_averaged
(Parameter containing:
tensor([[3.]], requires_grad=True), tensor(3))
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any

import numpy as np

from ..._core import mode
from ..._core.errors import hinted, with_hint
from ..._core.tensor import TORCH, Tensor, make
from ..nn.modules import Module
from .lr_scheduler import LRScheduler, _format_param
from .optimizer import Optimizer

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise hinted(ValueError(with_hint(f"Invalid decay value {decay} provided. Please provide a "
                                   "value in [0,1] range.", "e.g. decay=0.999")))


def _lerp_into(avg: Tensor, cur: Tensor, weight: float) -> None:
    from ...optim.adaptive import lerp_

    if avg._data.dtype.kind in "fc":
        lerp_(avg._data, cur._data.astype(avg._data.dtype, copy=False), weight)
    else:
        avg._data[...] = avg._data * (1 - weight) + cur._data * weight
    avg._vc[0] += 1


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[..., None]:
    """An in-place EMA over lists of tensors: ``ema = lerp(ema, current, 1 - decay)``."""
    _check_decay(decay)

    def ema_update(ema_param_list: Any, current_param_list: Any, _: Any) -> None:
        for e, c in zip(ema_param_list, current_param_list):
            if e._data.dtype.kind in "fc":
                _lerp_into(e, c, 1 - decay)
            else:
                e._data[...] = e._data * decay + c._data * (1 - decay)
                e._vc[0] += 1

    return ema_update


def get_swa_multi_avg_fn() -> Callable[..., None]:
    """An in-place running mean over lists of tensors."""

    def swa_update(averaged_param_list: Any, current_param_list: Any, num_averaged: Any
                   ) -> None:
        n = float(num_averaged._data) if isinstance(num_averaged, Tensor) else num_averaged
        for a, c in zip(averaged_param_list, current_param_list):
            _lerp_into(a, c, 1 / (n + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[..., Tensor]:
    """``(ema, current, n) -> decay*ema + (1-decay)*current``."""
    _check_decay(decay)

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable[..., Tensor]:
    """``(avg, current, n) -> avg + (current - avg) / (n + 1)``."""

    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters are the running average (or, with an
    ``avg_fn``/``multi_avg_fn``, e.g. an EMA) of ``model``'s over ``update_parameters``
    calls; buffers are copied (or averaged too with ``use_buffers=True``)."""

    def __init__(self, model: Module, device: Any = None,
                 avg_fn: Callable[..., Tensor] | None = None,
                 multi_avg_fn: Callable[..., None] | None = None,
                 use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", make(np.asarray(0, dtype=np.int64), None, False,
                                                TORCH))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters into the average."""
        if self.use_buffers:
            mine = list(itertools.chain(self.module.parameters(), self.module.buffers()))
            theirs = list(itertools.chain(model.parameters(), model.buffers()))
        else:
            mine, theirs = list(self.parameters()), list(model.parameters())
        mine_d = [p.detach() for p in mine]
        theirs_d = [p.detach() for p in theirs]
        n = int(self.n_averaged._data)
        with mode.no_grad():
            if n == 0:
                for a, c in zip(mine_d, theirs_d):
                    a._data[...] = c._data
                    a._vc[0] += 1
            elif self.multi_avg_fn is not None:
                self.multi_avg_fn(mine_d, theirs_d, self.n_averaged)
            elif self.avg_fn is None:
                # PyTorch's CPU path: avg + (current - avg) / (n + 1), in the tensors' dtype
                for a, c in zip(mine_d, theirs_d):
                    diff = c._data - a._data
                    a._data[...] = a._data + diff / diff.dtype.type(n + 1)
                    a._vc[0] += 1
            else:
                for a, c in zip(mine_d, theirs_d):
                    a._data[...] = self.avg_fn(a, c, self.n_averaged)._data
                    a._vc[0] += 1
            if not self.use_buffers:
                for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                    b_swa._data[...] = b_model._data
                    b_swa._vc[0] += 1
        self.n_averaged._data = np.asarray(n + 1, dtype=np.int64)
        self.n_averaged._vc[0] += 1


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute batch-norm running statistics with one pass over ``loader`` (for the
    averaged weights); does nothing when ``model`` has no batch-norm layer."""
    momenta = {}
    for module in model.modules():
        if hasattr(module, "reset_running_stats") and hasattr(module, "momentum"):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with mode.no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, m in momenta.items():
        module.momentum = m
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to ``swa_lr`` over ``anneal_epochs`` epochs
    (cosine or linear), then hold it."""

    def __init__(self, optimizer: Optimizer, swa_lr: float | list[float],
                 anneal_epochs: int = 10, anneal_strategy: str = "cos",
                 last_epoch: int = -1) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" \
            else self._linear_anneal

    def get_lr(self) -> list[Any]:
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use "
                          "`get_last_lr()`.", UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha)
                    for g in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [g["swa_lr"] * alpha + lr * (1 - alpha)
                for g, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
