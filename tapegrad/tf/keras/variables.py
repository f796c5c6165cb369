"""Keras variables: ``tf.Variable`` with Keras 3's name, path and printing."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..variables import Variable

__all__ = ["KerasVariable", "epsilon"]


class KerasVariable(Variable):
    """A layer or optimizer weight: ``name`` is ``"kernel"``, ``path`` ``"dense/kernel"``.

    Examples
    --------
    >>> import tapegrad.tf as tf
    >>> d = tf.keras.layers.Dense(2, kernel_initializer="ones", name="d")
    >>> d.build((None, 1))
    >>> d.kernel
    <Variable path=d/kernel, shape=(1, 2), dtype=float32, value=[[1. 1.]]>
    """

    __slots__ = ()
    # Keras creates its variables under tf.init_scope: one made while tf.function traces
    # is lifted out of the function, so it does not count as created by the trace
    _lifted = True

    def __init__(self, initializer: Any, shape: Any = None, dtype: Any = None,
                 trainable: bool = True, autocast: bool = True, aggregation: str = "none",
                 synchronization: str = "auto", name: str | None = None,
                 path: str | None = None, **kwargs: Any) -> None:
        if name is None:   # Keras's auto_name("variable"): variable, variable_1, ...
            n = _AUTO_NAMES.get("variable", 0)
            _AUTO_NAMES["variable"] = n + 1
            name = "variable" if n == 0 else f"variable_{n}"
        if path is None:
            path = name
        initial_value = initializer
        if callable(initializer) and not hasattr(initializer, "_data"):
            initial_value = initializer(tuple(shape), dtype=dtype)
        super().__init__(initial_value, trainable=trainable, name=name, dtype=dtype)
        self.__dict__["_name"] = name
        self.__dict__["_path"] = path

    @property
    def path(self) -> str:
        return self.__dict__["_path"]

    @property
    def dtype(self) -> str:
        """The dtype name (Keras 3 variables report a string, e.g. ``"float32"``)."""
        return str(self._data.dtype.name)

    @property
    def regularizer(self) -> Any:
        """The weight's regularizer (Keras 3's ``variable.regularizer``), or ``None``."""
        return self.__dict__.get("_regularizer")

    @regularizer.setter
    def regularizer(self, value: Any) -> None:
        from . import layers, regularizers

        value = regularizers.get(value)
        if (value is None) != (self.__dict__.get("_regularizer") is None):
            layers._REGULARIZED[0] += 1 if value is not None else -1
        self.__dict__["_regularizer"] = value

    @property
    def constraint(self) -> Any:
        """The weight's constraint, applied by the optimizer after each step (Keras 3:
        ``assign`` does not apply it), or ``None``."""
        return self.__dict__.get("_keras_constraint")

    @constraint.setter
    def constraint(self, value: Any) -> None:
        from . import constraints

        self.__dict__["_keras_constraint"] = constraints.get(value)

    @property
    def value(self) -> Any:
        """The current value as a tensor (Keras 3's ``variable.value``)."""
        return Variable.value(self)

    def __repr__(self) -> str:
        from ...autodiff import tracing as _tracing

        # inside tf.function the value is symbolic and Keras leaves it out
        value = "" if _tracing.current() is not None else f", value={np.asarray(self._data)}"
        return (f"<Variable path={self.path}, shape={tuple(self._data.shape)}, "
                f"dtype={self._data.dtype.name}{value}>")

    __str__ = __repr__


_AUTO_NAMES: dict[str, int] = {}
_EPSILON = [1e-7]


def epsilon() -> float:
    """Keras's fuzz factor (1e-7)."""
    return _EPSILON[0]
