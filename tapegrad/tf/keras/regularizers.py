"""``keras.regularizers``: weight and activity penalties (Keras 3's classes and numbers).

A regularizer is a callable ``penalty(x) -> scalar``. Layers take them as
``kernel_regularizer=`` / ``bias_regularizer=`` / ``activity_regularizer=`` ...;
the penalties appear in ``layer.losses`` / ``model.losses`` and ``fit`` adds them to
the loss, as Keras 3 does (an activity penalty is divided by the batch size).

>>> import tapegrad.tf as tf
>>> tf.keras.regularizers.L2(2.0)(tf.ones((5, 5))).numpy()
np.float32(50.0)
"""

from __future__ import annotations

import inspect
import math
from typing import Any

import numpy as np

from ..._core.errors import hinted, with_hint
from .. import _ops as tfo
from .._tensor import VariableBase, convert, read

__all__ = ["Regularizer", "L1", "L2", "L1L2", "OrthogonalRegularizer", "l1", "l2",
           "orthogonal_regularizer", "get", "serialize", "deserialize"]


def _tensor(x: Any) -> Any:
    return read(x) if isinstance(x, VariableBase) else convert(x)


def validate_float_arg(value: Any, name: str) -> float:
    """Keras's check of a penalty factor: a finite, non-negative number."""
    if not isinstance(value, (float, int)) or math.isinf(value) or math.isnan(value) \
            or value < 0:
        raise hinted(ValueError(with_hint(
            f"Invalid value for argument {name}: expected a non-negative float."
            f"Received: {name}={value}", f"{name} is a penalty factor, e.g. 0.01")))
    return float(value)


def _f32(v: float) -> float:
    # Keras keeps L1's and OrthogonalRegularizer's factor as a float32 tensor
    return float(np.float32(v))


class Regularizer:
    """Base class: subclasses define ``__call__(x)`` (and ``get_config`` to be saved)."""

    def __call__(self, x: Any) -> Any:
        return 0.0

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Regularizer:
        return cls(**config)

    def get_config(self) -> dict[str, Any]:
        raise hinted(NotImplementedError(with_hint(
            f"{self} does not implement get_config()",
            "define get_config() returning the constructor arguments")))


class L1L2(Regularizer):
    """``l1 * sum(|x|) + l2 * sum(x**2)``."""

    def __init__(self, l1: float = 0.0, l2: float = 0.0) -> None:
        self.l1 = validate_float_arg(0.0 if l1 is None else l1, name="l1")
        self.l2 = validate_float_arg(0.0 if l2 is None else l2, name="l2")

    def __call__(self, x: Any) -> Any:
        t = _tensor(x)
        dt = t._data.dtype
        reg = convert(np.zeros((), dtype=dt))
        if self.l1 != 0.0:
            reg = tfo.add(reg, tfo.multiply(convert(np.asarray(self.l1, dt)),
                                            tfo.reduce_sum(tfo.abs(t))))
        if self.l2 != 0.0:
            reg = tfo.add(reg, tfo.multiply(convert(np.asarray(self.l2, dt)),
                                            tfo.reduce_sum(tfo.square(t))))
        return reg

    def get_config(self) -> dict[str, Any]:
        return {"l1": self.l1, "l2": self.l2}


class L1(Regularizer):
    """``l1 * sum(|x|)`` (default ``l1=0.01``)."""

    def __init__(self, l1: float = 0.01) -> None:
        self.l1 = _f32(validate_float_arg(0.01 if l1 is None else l1, name="l1"))

    def __call__(self, x: Any) -> Any:
        t = _tensor(x)
        return tfo.multiply(convert(np.asarray(self.l1, t._data.dtype)),
                            tfo.reduce_sum(tfo.abs(t)))

    def get_config(self) -> dict[str, Any]:
        return {"l1": self.l1}


class L2(Regularizer):
    """``l2 * sum(x**2)`` (default ``l2=0.01``)."""

    def __init__(self, l2: float = 0.01) -> None:
        self.l2 = validate_float_arg(0.01 if l2 is None else l2, name="l2")

    def __call__(self, x: Any) -> Any:
        t = _tensor(x)
        return tfo.multiply(convert(np.asarray(self.l2, t._data.dtype)),
                            tfo.reduce_sum(tfo.square(t)))

    def get_config(self) -> dict[str, Any]:
        return {"l2": self.l2}


class OrthogonalRegularizer(Regularizer):
    """``factor * 0.5 * sum(|offdiag(n n^T)|) / num_pairs`` over L2-normalized rows/columns."""

    def __init__(self, factor: float = 0.01, mode: str = "rows") -> None:
        validate_float_arg(factor, name="factor")
        self.factor = _f32(factor)
        if mode not in {"rows", "columns"}:
            raise hinted(ValueError(with_hint(
                "Invalid value for argument `mode`. Expected one of "
                f'{{"rows", "columns"}}. Received: mode={mode}', "use 'rows' or 'columns'")))
        self.mode = mode

    def __call__(self, inputs: Any) -> Any:
        t = _tensor(inputs)
        if t._data.ndim != 2:
            from .._tensor import TensorShape

            raise hinted(ValueError(with_hint(
                "Inputs to OrthogonalRegularizer must have rank 2. Received: "
                f"inputs.shape={TensorShape(t._data.shape)}", "regularize a matrix")))
        dt = t._data.dtype
        axis = 1 if self.mode == "rows" else 0
        # keras.ops.normalize(x, axis, order=2): x * min(rsqrt(sum(x**2)), 1/epsilon)
        sq = tfo.reduce_sum(tfo.square(t), axis=axis, keepdims=True)
        inv = tfo.minimum(tfo.rsqrt(sq), convert(np.asarray(1.0 / 1e-7, dt)))
        n = tfo.multiply(t, inv)
        if self.mode == "rows":
            product = tfo.matmul(n, tfo.transpose(n))
            size = t._data.shape[0]
        else:
            product = tfo.matmul(tfo.transpose(n), n)
            size = t._data.shape[1]
        off = tfo.multiply(product, convert(1.0 - np.eye(size, dtype=dt)))
        num_pairs = size * (size - 1.0) / 2.0
        s = tfo.reduce_sum(tfo.abs(off))
        # Keras: a float32 factor times 0.5, promoted to the input's dtype (keras.ops)
        half = np.float32(self.factor) * np.float32(0.5)
        out = tfo.multiply(convert(np.asarray(half, dt)), s)
        return tfo.divide(out, convert(np.asarray(num_pairs, dt)))

    def get_config(self) -> dict[str, Any]:
        return {"factor": self.factor, "mode": self.mode}


l1 = L1
l2 = L2
orthogonal_regularizer = OrthogonalRegularizer

_ALL: dict[str, type] = {}
for _c in (Regularizer, L1, L2, L1L2, OrthogonalRegularizer):
    _ALL[_c.__name__] = _c
for _name, _c in (("regularizer", Regularizer), ("l1", L1), ("l2", L2), ("l1l2", L1L2),
                  ("orthogonal_regularizer", OrthogonalRegularizer)):
    _ALL[_name] = _c


def serialize(obj: Any) -> Any:
    """Keras's ``{"module": "keras.regularizers", "class_name": ..., "config": ...}``."""
    return serialize_object(obj, "keras.regularizers", _ALL)


def deserialize(config: Any, custom_objects: dict[str, Any] | None = None) -> Any:
    return deserialize_object(config, _ALL, custom_objects, "regularizer")


def get(identifier: Any) -> Any:
    """A regularizer from ``None``, a name (``"l1"``, ``"l2"``, ``"L1L2"``...), a config or a
    callable (returned as is)."""
    return get_object(identifier, _ALL, "regularizer")


# ---------------------------------------------------------------- shared with constraints
def serialize_object(obj: Any, module: str, table: dict[str, type]) -> Any:
    if obj is None:
        return None
    cls = type(obj)
    if table.get(cls.__name__) is cls:
        return {"module": module, "class_name": cls.__name__, "config": obj.get_config(),
                "registered_name": None}
    from .saving import serialize_keras_object

    return serialize_keras_object(obj)


def deserialize_object(config: Any, table: dict[str, type],
                       custom_objects: dict[str, Any] | None, what: str) -> Any:
    if isinstance(config, str):
        cls = table.get(config) or (custom_objects or {}).get(config)
        if cls is None:
            raise hinted(ValueError(with_hint(
                f"Could not interpret {what} identifier: {config}",
                f"use a built-in {what} name")))
        return cls() if inspect.isclass(cls) else cls
    if not isinstance(config, dict):
        raise hinted(TypeError(with_hint(
            f"Could not parse config: {config}", f"pass a {what} config dict")))
    name = config.get("class_name")
    cls = table.get(str(name))
    if cls is None:
        from .saving import get_registered_object

        cls = get_registered_object(str(config.get("registered_name") or name),
                                    custom_objects)
    if cls is None:
        raise hinted(TypeError(with_hint(
            f"Could not locate class '{name}'. Make sure custom classes are decorated with "
            "`@keras.saving.register_keras_serializable()`.",
            f"register your {what} class or pass custom_objects")))
    cfg = config.get("config") or {}
    return cls.from_config(cfg) if hasattr(cls, "from_config") else cls(**cfg)


def get_object(identifier: Any, table: dict[str, type], what: str) -> Any:
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        obj = deserialize_object(identifier, table, None, what)
    elif isinstance(identifier, str):
        obj = table.get(identifier)
    else:
        obj = identifier
    if callable(obj):
        if inspect.isclass(obj):
            obj = obj()
        return obj
    raise hinted(ValueError(with_hint(
        f"Could not interpret {what} identifier: {identifier}",
        f"use a built-in {what} name, a {what} object or a callable")))
