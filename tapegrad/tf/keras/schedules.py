"""``keras.optimizers.schedules``: learning rates as functions of the step.

Each schedule computes in the dtype of its initial learning rate (float32
for a Python float), with Keras 3's formulas, and returns a scalar tensor.
Pass one as an optimizer's ``learning_rate``: the optimizer calls it with
its ``iterations`` counter before every update.

>>> import tapegrad.tf as tf
>>> s = tf.keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
>>> [round(float(s(step)), 6) for step in (0, 10, 20)]
[0.1, 0.05, 0.025]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor
from .._tensor import constant_array, tft

__all__ = ["LearningRateSchedule", "ExponentialDecay", "PiecewiseConstantDecay",
           "PolynomialDecay", "InverseTimeDecay", "CosineDecay", "CosineDecayRestarts"]


def _value(x: Any) -> np.ndarray:
    if isinstance(x, Tensor):
        return np.asarray(x._data)
    return constant_array(x)


def _step(step: Any, dtype: np.dtype) -> Any:
    return _value(step).astype(dtype)[()]


class LearningRateSchedule:
    """Base class: subclass it and define ``__call__(self, step)``."""

    def __call__(self, step: Any) -> Any:
        raise hinted(NotImplementedError(with_hint(
            f"Learning rate schedule '{type(self).__name__}' must override "
            "`__call__(self, step)`.", "define __call__ returning the rate for a step")))

    def get_config(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Any:
        return cls(**config)


class ExponentialDecay(LearningRateSchedule):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)`` (floored with
    ``staircase=True``)."""

    def __init__(self, initial_learning_rate: float, decay_steps: int, decay_rate: float,
                 staircase: bool = False, name: str = "ExponentialDecay") -> None:
        if decay_steps <= 0:
            raise hinted(ValueError(with_hint(
                "Argument `decay_steps` must be > 0. Received: "
                f"decay_steps={decay_steps}", "use a positive number of steps")))
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name

    def __call__(self, step: Any) -> Tensor:
        lr = _value(self.initial_learning_rate)
        dt = lr.dtype.type
        p = _step(step, lr.dtype) / dt(self.decay_steps)
        if self.staircase:
            p = np.floor(p)
        return tft(np.asarray(lr * np.power(dt(self.decay_rate), dt(p)), dtype=lr.dtype))

    def get_config(self) -> dict[str, Any]:
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "decay_rate": self.decay_rate,
                "staircase": self.staircase, "name": self.name}


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[0]`` up to ``boundaries[0]`` (inclusive), ``values[1]`` up to
    ``boundaries[1]``, ..., ``values[-1]`` after the last boundary."""

    def __init__(self, boundaries: list[Any], values: list[Any],
                 name: str = "PiecewiseConstant") -> None:
        if len(boundaries) != len(values) - 1:
            raise hinted(ValueError(with_hint(
                "The length of boundaries should be 1 less than the length of values. "
                f"Received: boundaries={boundaries} of length {len(boundaries)}, and "
                f"values={values} of length {len(values)}.",
                "give one more value than boundaries")))
        self.boundaries = boundaries
        self.values = values
        self.name = name

    def __call__(self, step: Any) -> Tensor:
        s = _value(step)[()]
        vals = [_value(v) for v in self.values]
        dtype = vals[0].dtype
        bs = self.boundaries
        if s <= bs[0]:
            out = vals[0]
        elif s > bs[-1]:
            out = vals[-1]
        else:
            out = next(v for lo, hi, v in zip(bs[:-1], bs[1:], vals[1:-1]) if lo < s <= hi)
        return tft(np.asarray(out, dtype=dtype))

    def get_config(self) -> dict[str, Any]:
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class PolynomialDecay(LearningRateSchedule):
    """``(lr0 - end) * (1 - step/decay_steps) ** power + end`` (``cycle`` restarts)."""

    def __init__(self, initial_learning_rate: float, decay_steps: int,
                 end_learning_rate: float = 0.0001, power: float = 1.0, cycle: bool = False,
                 name: str = "PolynomialDecay") -> None:
        if decay_steps <= 0:
            raise hinted(ValueError(with_hint(
                "Argument `decay_steps` must be > 0. Received: "
                f"decay_steps={decay_steps}", "use a positive number of steps")))
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.end_learning_rate = end_learning_rate
        self.power = power
        self.cycle = cycle
        self.name = name

    def __call__(self, step: Any) -> Tensor:
        lr = _value(self.initial_learning_rate)
        dt = lr.dtype.type
        end = dt(self.end_learning_rate)
        power = dt(self.power)
        s = dt(_step(step, lr.dtype))
        ds = dt(self.decay_steps)
        if self.cycle:
            mult = dt(1.0) if s == 0 else dt(np.ceil(s / dt(self.decay_steps)))
            ds = ds * mult
        else:
            s = min(s, ds)
        p = s / ds
        return tft(np.asarray((lr - end) * np.power(dt(1) - p, power) + end, dtype=lr.dtype))

    def get_config(self) -> dict[str, Any]:
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "end_learning_rate": self.end_learning_rate,
                "power": self.power, "cycle": self.cycle, "name": self.name}


class InverseTimeDecay(LearningRateSchedule):
    """``lr0 / (1 + decay_rate * step / decay_steps)`` (floored with ``staircase``)."""

    def __init__(self, initial_learning_rate: float, decay_steps: int, decay_rate: float,
                 staircase: bool = False, name: str = "InverseTimeDecay") -> None:
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = name

    def __call__(self, step: Any) -> Tensor:
        lr = _value(self.initial_learning_rate)
        dt = lr.dtype.type
        p = dt(_step(step, lr.dtype)) / dt(self.decay_steps)
        if self.staircase:
            p = np.floor(p)
        return tft(np.asarray(lr / (dt(1) + dt(self.decay_rate) * p), dtype=lr.dtype))

    def get_config(self) -> dict[str, Any]:
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "decay_rate": self.decay_rate,
                "staircase": self.staircase, "name": self.name}


class CosineDecay(LearningRateSchedule):
    """Cosine decay from ``initial_learning_rate`` (or, after a linear warmup of
    ``warmup_steps``, from ``warmup_target``) down to ``alpha`` times it."""

    def __init__(self, initial_learning_rate: float, decay_steps: int, alpha: float = 0.0,
                 name: str = "CosineDecay", warmup_target: float | None = None,
                 warmup_steps: int = 0) -> None:
        if decay_steps <= 0:
            raise hinted(ValueError(with_hint(
                "Argument `decay_steps` must be > 0. Received: "
                f"decay_steps={decay_steps}", "use a positive number of steps")))
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.alpha = alpha
        self.name = name
        self.warmup_target = warmup_target
        self.warmup_steps = warmup_steps

    def _decay(self, step: Any, decay_steps: Any, lr_from: Any, dt: Any) -> Any:
        frac = step / decay_steps
        pi = dt(math.pi)
        cosine = dt(0.5) * (dt(1.0) + np.cos(pi * frac))
        decayed = dt(1 - self.alpha) * cosine + dt(self.alpha)
        return lr_from * decayed

    def __call__(self, step: Any) -> Tensor:
        lr = _value(self.initial_learning_rate)
        dt = lr.dtype.type
        ds = dt(self.decay_steps)
        s = dt(_step(step, lr.dtype))
        if self.warmup_target is None:
            out = self._decay(min(s, ds), ds, lr, dt)
        else:
            target, ws = dt(self.warmup_target), dt(self.warmup_steps)
            s = min(s, ds + ws)
            if s < ws:
                out = (target - lr) * (s / ws) + lr
            else:
                out = self._decay(s - ws, ds, target, dt)
        return tft(np.asarray(out, dtype=lr.dtype))

    def get_config(self) -> dict[str, Any]:
        return {"initial_learning_rate": self.initial_learning_rate,
                "decay_steps": self.decay_steps, "alpha": self.alpha, "name": self.name,
                "warmup_target": self.warmup_target, "warmup_steps": self.warmup_steps}


class CosineDecayRestarts(LearningRateSchedule):
    """Cosine decay with warm restarts (periods growing by ``t_mul``, peaks by ``m_mul``)."""

    def __init__(self, initial_learning_rate: float, first_decay_steps: int, t_mul: float = 2.0,
                 m_mul: float = 1.0, alpha: float = 0.0, name: str = "SGDRDecay") -> None:
        self.initial_learning_rate = initial_learning_rate
        self.first_decay_steps = first_decay_steps
        self._t_mul = t_mul
        self._m_mul = m_mul
        self.alpha = alpha
        self.name = name

    def __call__(self, step: Any) -> Tensor:
        lr = _value(self.initial_learning_rate)
        dt = lr.dtype.type
        t_mul, m_mul, alpha = dt(self._t_mul), dt(self._m_mul), dt(self.alpha)
        frac = dt(_step(step, lr.dtype)) / dt(self.first_decay_steps)
        if t_mul == 1.0:
            i = np.floor(frac)
            frac = frac - i
        else:
            i = np.floor(np.log(dt(1.0) - frac * (dt(1.0) - t_mul)) / np.log(t_mul))
            sum_r = (dt(1.0) - np.power(t_mul, i)) / (dt(1.0) - t_mul)
            frac = (frac - sum_r) / np.power(t_mul, i)
        m_fac = np.power(m_mul, i)
        cosine = dt(0.5) * m_fac * (dt(1.0) + np.cos(dt(math.pi) * frac))
        decayed = (dt(1) - alpha) * cosine + alpha
        return tft(np.asarray(lr * decayed, dtype=lr.dtype))

    def get_config(self) -> dict[str, Any]:
        return {"initial_learning_rate": self.initial_learning_rate,
                "first_decay_steps": self.first_decay_steps, "t_mul": self._t_mul,
                "m_mul": self._m_mul, "alpha": self.alpha, "name": self.name}
