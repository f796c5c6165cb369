"""``keras.constraints``: projections applied to a weight after each optimizer step.

Layers take them as ``kernel_constraint=`` / ``bias_constraint=`` ...; as in Keras 3 the
optimizer assigns ``constraint(variable)`` to each updated variable after applying the
gradients (a plain ``variable.assign`` is not constrained).

>>> import tapegrad.tf as tf
>>> tf.keras.constraints.NonNeg()(tf.constant([-1.0, 2.0])).numpy()
array([0., 2.], dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _ops as tfo
from .._tensor import VariableBase, convert, read
from .regularizers import deserialize_object, get_object, serialize_object

__all__ = ["Constraint", "MaxNorm", "MinMaxNorm", "NonNeg", "UnitNorm", "max_norm",
           "min_max_norm", "non_neg", "unit_norm", "get", "serialize", "deserialize"]

_EPS = 1e-7


def _tensor(x: Any) -> Any:
    return read(x) if isinstance(x, VariableBase) else convert(x)


def _norms(w: Any, axis: Any) -> Any:
    ax = list(axis) if isinstance(axis, (list, tuple)) else axis
    return tfo.sqrt(tfo.reduce_sum(tfo.square(w), axis=ax, keepdims=True))


def _c(v: Any, dt: np.dtype) -> Any:
    return convert(np.asarray(v, dtype=dt))


class Constraint:
    """Base class: ``__call__(w)`` returns the projected weight (the identity here)."""

    def __call__(self, w: Any) -> Any:
        return w

    def get_config(self) -> dict[str, Any]:
        return {}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Constraint:
        return cls(**config)


class MaxNorm(Constraint):
    """Rescale each slice along ``axis`` to a norm of at most ``max_value``."""

    def __init__(self, max_value: float = 2, axis: Any = 0) -> None:
        self.max_value = max_value
        self.axis = axis

    def __call__(self, w: Any) -> Any:
        w = _tensor(w)
        dt = w._data.dtype
        norms = _norms(w, self.axis)
        desired = tfo.clip_by_value(norms, _c(0, dt), _c(self.max_value, dt))
        return tfo.multiply(w, tfo.divide(desired, tfo.add(_c(_EPS, dt), norms)))

    def get_config(self) -> dict[str, Any]:
        return {"max_value": self.max_value, "axis": self.axis}


class NonNeg(Constraint):
    """``max(w, 0)``."""

    def __call__(self, w: Any) -> Any:
        w = _tensor(w)
        return tfo.maximum(w, _c(0, w._data.dtype))


class UnitNorm(Constraint):
    """Rescale each slice along ``axis`` to unit norm."""

    def __init__(self, axis: Any = 0) -> None:
        self.axis = axis

    def __call__(self, w: Any) -> Any:
        w = _tensor(w)
        norms = _norms(w, self.axis)
        return tfo.divide(w, tfo.add(_c(_EPS, w._data.dtype), norms))

    def get_config(self) -> dict[str, Any]:
        return {"axis": self.axis}


class MinMaxNorm(Constraint):
    """Move each slice's norm towards ``[min_value, max_value]`` at ``rate``."""

    def __init__(self, min_value: float = 0.0, max_value: float = 1.0, rate: float = 1.0,
                 axis: Any = 0) -> None:
        self.min_value = min_value
        self.max_value = max_value
        self.rate = rate
        self.axis = axis

    def __call__(self, w: Any) -> Any:
        w = _tensor(w)
        dt = w._data.dtype
        norms = _norms(w, self.axis)
        clipped = tfo.clip_by_value(norms, _c(self.min_value, dt), _c(self.max_value, dt))
        desired = tfo.add(tfo.multiply(_c(self.rate, dt), clipped),
                          tfo.multiply(_c(1 - self.rate, dt), norms))
        return tfo.multiply(w, tfo.divide(desired, tfo.add(_c(_EPS, dt), norms)))

    def get_config(self) -> dict[str, Any]:
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate,
                "axis": self.axis}


max_norm = MaxNorm
min_max_norm = MinMaxNorm
non_neg = NonNeg
unit_norm = UnitNorm

_ALL: dict[str, type] = {}
for _cls in (Constraint, MaxNorm, MinMaxNorm, NonNeg, UnitNorm):
    _ALL[_cls.__name__] = _cls
for _name, _cls in (("constraint", Constraint), ("max_norm", MaxNorm),
                    ("min_max_norm", MinMaxNorm), ("non_neg", NonNeg),
                    ("unit_norm", UnitNorm)):
    _ALL[_name] = _cls


def serialize(obj: Any) -> Any:
    return serialize_object(obj, "keras.constraints", _ALL)


def deserialize(config: Any, custom_objects: dict[str, Any] | None = None) -> Any:
    return deserialize_object(config, _ALL, custom_objects, "constraint")


def get(identifier: Any) -> Any:
    """A constraint from ``None``, a name (``"non_neg"``, ``"MaxNorm"``...), a config or a
    callable (returned as is)."""
    return get_object(identifier, _ALL, "constraint")
