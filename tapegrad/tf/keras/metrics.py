"""``keras.metrics`` (also ``tf.metrics``): Keras 3's streaming metrics, the common ones.

A metric keeps running totals in non-trainable variables; ``update_state``
adds a batch, ``result()`` reads the value, ``reset_state()`` starts again,
and calling the metric does both of the first two.  Never recorded by tapes.

>>> import tapegrad.tf as tf
>>> m = tf.keras.metrics.Mean()
>>> m.update_state([1.0, 2.0, 3.0])
>>> m.update_state(5.0, sample_weight=2.0)
>>> round(float(m.result()), 6)
3.2
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ..._core.errors import with_hint
from ..._core.tensor import Tensor
from .._tensor import VariableBase, convert, read, tft
from .losses import mean_absolute_error, mean_squared_error

__all__ = ["Metric", "Mean", "Sum", "MeanMetricWrapper", "MeanSquaredError",
           "MeanAbsoluteError", "RootMeanSquaredError", "Accuracy", "BinaryAccuracy",
           "CategoricalAccuracy", "SparseCategoricalAccuracy", "binary_accuracy",
           "categorical_accuracy", "sparse_categorical_accuracy", "mse", "MSE", "mae", "MAE",
           "get"]


def _snake(name: str) -> str:
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


def _array(x: Any, dtype: Any = None) -> np.ndarray:
    if isinstance(x, VariableBase):
        x = read(x)
    t = x if isinstance(x, Tensor) else convert(x)
    arr = np.asarray(t._data)
    return arr if dtype is None else arr.astype(dtype)


class Metric:
    """Base class: subclasses define ``update_state`` and ``result``."""

    def __init__(self, name: str | None = None, dtype: Any = None) -> None:
        from ..variables import Variable

        self.name = name or _snake(type(self).__name__)
        self.dtype = np.dtype(np.float32) if dtype is None else np.dtype(str(dtype).replace(
            "tf.", ""))
        self._variables: list[Any] = []
        self._Variable = Variable

    def add_variable(self, shape: Any = (), initializer: str = "zeros", dtype: Any = None,
                     name: str | None = None) -> Any:
        v = self._Variable(np.zeros(shape, dtype=self.dtype if dtype is None else dtype),
                           trainable=False, name=f"{self.name}/{name}")
        self._variables.append(v)
        return v

    @property
    def variables(self) -> list[Any]:
        return list(self._variables)

    def reset_state(self) -> None:
        for v in self._variables:
            v.assign(np.zeros_like(v._data))

    def update_state(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError

    def result(self) -> Tensor:
        raise NotImplementedError

    def __call__(self, *args: Any, **kwargs: Any) -> Tensor:
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, "dtype": self.dtype.name}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name}>"


class _Reduce(Metric):
    """Weighted total and count (``Sum`` keeps only the total)."""

    _mean = True

    def __init__(self, name: str | None = None, dtype: Any = None) -> None:
        super().__init__(name, dtype)
        self.total = self.add_variable(name="total")
        if self._mean:
            self.count = self.add_variable(name="count")

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        v = _array(values, self.dtype)
        if sample_weight is None:
            w = np.ones_like(v)
        else:
            w = _array(sample_weight, self.dtype)
            while w.ndim > v.ndim and w.shape[-1] == 1:
                w = w[..., 0]
            while v.ndim > w.ndim and w.ndim and v.shape[: w.ndim] == w.shape:
                w = w[..., None]
            w = np.broadcast_to(w, v.shape)
        self.total.assign(self.total._data + np.sum(v * w, dtype=self.dtype))
        if self._mean:
            self.count.assign(self.count._data + np.sum(w, dtype=self.dtype))

    def result(self) -> Tensor:
        if not self._mean:
            return tft(np.array(self.total._data, dtype=self.dtype))
        c = self.count._data
        return tft(np.array(self.total._data / c if c != 0 else 0.0, dtype=self.dtype))


class Mean(_Reduce):
    """The weighted mean of everything seen."""


class Sum(_Reduce):
    """The weighted sum of everything seen.

    >>> import tapegrad.tf as tf
    >>> m = tf.keras.metrics.Sum()
    >>> m.update_state([1, 3, 5, 7])
    >>> float(m.result())
    16.0
    """

    _mean = False


class MeanMetricWrapper(Mean):
    """The mean of ``fn(y_true, y_pred)`` over every element seen."""

    def __init__(self, fn: Callable[..., Any], name: str | None = None, dtype: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(name, dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true: Any, y_pred: Any,  # type: ignore[override]
                     sample_weight: Any = None) -> None:
        super().update_state(self._fn(y_true, y_pred, **self._fn_kwargs), sample_weight)


def _pair(y_true: Any, y_pred: Any) -> tuple[np.ndarray, np.ndarray]:
    p = _array(y_pred)
    if p.dtype.kind not in "fc":
        p = p.astype(np.float32)
    t = _array(y_true, p.dtype)
    if t.ndim == p.ndim + 1 and t.shape[-1] == 1:
        t = t[..., 0]
    elif p.ndim == t.ndim + 1 and p.shape[-1] == 1:
        p = p[..., 0]
    return t, p


def _accuracy(y_true: Any, y_pred: Any) -> Tensor:
    """1.0 where ``y_true == y_pred``, elementwise."""
    t, p = _pair(y_true, y_pred)
    return tft((t == p).astype(np.float32))


def binary_accuracy(y_true: Any, y_pred: Any, threshold: float = 0.5) -> Tensor:
    """1.0 where ``y_pred > threshold`` equals ``y_true``, elementwise (Keras 3 keeps the shape)."""
    t, p = _pair(y_true, y_pred)
    return tft((t == (p > p.dtype.type(threshold)).astype(t.dtype)).astype(np.float32))


def categorical_accuracy(y_true: Any, y_pred: Any) -> Tensor:
    """1.0 where the argmax of ``y_pred`` is the argmax of one-hot ``y_true``."""
    t, p = _array(y_true), _array(y_pred)
    return tft((np.argmax(t, -1) == np.argmax(p, -1)).astype(np.float32))


def sparse_categorical_accuracy(y_true: Any, y_pred: Any) -> Tensor:
    """1.0 where the argmax of ``y_pred`` is the integer label ``y_true``.

    >>> import tapegrad.tf as tf
    >>> tf.keras.metrics.sparse_categorical_accuracy([2, 1], [[0.1, 0.6, 0.3], [0.0, 1.0, 0.0]])
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([0., 1.], dtype=float32)>
    """
    p = _array(y_pred)
    t = _array(y_true, p.dtype if p.dtype.kind in "fc" else np.float32)
    shape = t.shape
    squeeze = t.ndim == p.ndim and t.shape[-1] == 1
    if squeeze:
        t = t[..., 0]
    m = (t == np.argmax(p, -1).astype(t.dtype)).astype(np.float32)
    return tft(m.reshape(shape) if squeeze else m)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error


class MeanSquaredError(MeanMetricWrapper):
    def __init__(self, name: str = "mean_squared_error", dtype: Any = None) -> None:
        super().__init__(mean_squared_error, name, dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    def __init__(self, name: str = "mean_absolute_error", dtype: Any = None) -> None:
        super().__init__(mean_absolute_error, name, dtype)


class Accuracy(MeanMetricWrapper):
    def __init__(self, name: str = "accuracy", dtype: Any = None) -> None:
        super().__init__(_accuracy, name, dtype)


class BinaryAccuracy(MeanMetricWrapper):
    def __init__(self, name: str = "binary_accuracy", dtype: Any = None,
                 threshold: float = 0.5) -> None:
        super().__init__(binary_accuracy, name, dtype, threshold=threshold)


class CategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, name: str = "categorical_accuracy", dtype: Any = None) -> None:
        super().__init__(categorical_accuracy, name, dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """The fraction of samples whose argmax prediction is the label.

    >>> import tapegrad.tf as tf
    >>> m = tf.keras.metrics.SparseCategoricalAccuracy()
    >>> m.update_state([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0.0]])
    >>> float(m.result()), m.name
    (0.5, 'sparse_categorical_accuracy')
    """

    def __init__(self, name: str = "sparse_categorical_accuracy", dtype: Any = None) -> None:
        super().__init__(sparse_categorical_accuracy, name, dtype)


class RootMeanSquaredError(Mean):
    """The square root of the mean squared error over every element seen."""

    def __init__(self, name: str = "root_mean_squared_error", dtype: Any = None) -> None:
        super().__init__(name, dtype)

    def update_state(self, y_true: Any, y_pred: Any,  # type: ignore[override]
                     sample_weight: Any = None) -> None:
        t, p = _pair(y_true, y_pred)
        super().update_state(np.square(p - t), sample_weight)

    def result(self) -> Tensor:
        return tft(np.sqrt(super().result()._data).astype(self.dtype))


_BY_NAME: dict[str, Any] = {
    "accuracy": _accuracy, "binary_accuracy": binary_accuracy,
    "categorical_accuracy": categorical_accuracy,
    "sparse_categorical_accuracy": sparse_categorical_accuracy, "mse": mse, "MSE": MSE,
    "mae": mae, "MAE": MAE, "mean_squared_error": mean_squared_error,
    "mean_absolute_error": mean_absolute_error,
}


def get(identifier: Any) -> Any:
    """A metric (or metric function) from a name, an instance or a callable."""
    if isinstance(identifier, str):
        for cls in (Mean, Sum, MeanSquaredError, MeanAbsoluteError, RootMeanSquaredError,
                    Accuracy, BinaryAccuracy, CategoricalAccuracy, SparseCategoricalAccuracy):
            if identifier == cls.__name__:
                return cls()
        if identifier in _BY_NAME:
            return _BY_NAME[identifier]
        raise ValueError(with_hint(f"Could not interpret metric identifier: {identifier}",
                                   f"known names: {', '.join(sorted(_BY_NAME))}"))
    if callable(identifier):
        return identifier
    raise ValueError(with_hint(f"Could not interpret metric identifier: {identifier}",
                               "pass a name such as 'accuracy' or a metric"))
