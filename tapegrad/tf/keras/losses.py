"""``keras.losses``: Keras 3's losses and their ``sum_over_batch_size`` reduction."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import ops
from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor
from ...ops.shape import _has_tracer
from .. import nn
from .._ops import clip_by_value, log
from .._tensor import VariableBase, check_broadcast, convert, read
from .variables import epsilon

__all__ = ["Loss", "MeanSquaredError", "MeanAbsoluteError", "SparseCategoricalCrossentropy",
           "CategoricalCrossentropy", "BinaryCrossentropy", "mean_squared_error",
           "mean_absolute_error", "sparse_categorical_crossentropy",
           "categorical_crossentropy", "binary_crossentropy", "mse", "MSE", "mae", "MAE"]


def _mean(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """``tf.reduce_mean`` (TensorFlow's float32 summation order)."""
    return ops.mean(x, axis=axis, keepdims=keepdims, kernel="tf")


def _sum(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    """``tf.reduce_sum`` (TensorFlow's float32 summation order)."""
    return ops.sum(x, axis=axis, keepdims=keepdims, kernel="tf")


def _log(x: Any) -> Tensor:
    """``tf.math.log`` (TensorFlow's float32 kernel)."""
    return ops.log(x, kernel="tf")


def _pred(y: Any) -> Tensor:
    if isinstance(y, VariableBase):
        return read(y)
    t = convert(y)
    if t._data.dtype.kind not in "fc":
        t = ops.cast(t, dtype=np.float32)
    return t


def _true_like(y: Any, pred: Tensor) -> Tensor:
    t = read(y) if isinstance(y, VariableBase) else convert(y)
    if t._data.dtype != pred._data.dtype:
        t = ops.cast(t, dtype=pred._data.dtype)
    return t


def _same_rank(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """Keras's squeeze_or_expand_to_same_rank (a trailing axis of size 1).

    A rank-1 side gains the axis instead of the other losing it, so that
    ``(n,)`` labels against ``(n, 1)`` predictions stay ``n`` per-sample values
    (which sample weights then weight one by one).
    """
    ra, rb = a._data.ndim, b._data.ndim
    if ra == rb + 1 and a._data.shape[-1] == 1:
        if rb == 1:
            b = ops.expand_dims(b, -1)
        else:
            a = ops.squeeze(a, -1)
    elif rb == ra + 1 and b._data.shape[-1] == 1:
        if ra == 1:
            a = ops.expand_dims(a, -1)
        else:
            b = ops.squeeze(b, -1)
    return a, b


def mean_squared_error(y_true: Any, y_pred: Any) -> Tensor:
    """Per-sample mean of squared errors over the last axis."""
    p = _pred(y_pred)
    t = _true_like(y_true, p)
    t, p = _same_rank(t, p)
    check_broadcast(t, p, "Sub")   # TensorFlow's Sub error, as Keras's y_true - y_pred raises
    return _mean(ops.square(ops.subtract(t, p)), axis=-1)


def mean_absolute_error(y_true: Any, y_pred: Any) -> Tensor:
    """Per-sample mean of absolute errors over the last axis.

    >>> import tapegrad.tf as tf
    >>> tf.keras.losses.mean_absolute_error([[1.0, 2.0]], [[0.0, 0.0]])
    <tf.Tensor: shape=(1,), dtype=float32, numpy=array([1.5], dtype=float32)>
    """
    p = _pred(y_pred)
    t = _true_like(y_true, p)
    t, p = _same_rank(t, p)
    check_broadcast(t, p, "Sub")
    return _mean(ops.abs(ops.subtract(t, p)), axis=-1)


def sparse_categorical_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False,
                                    ignore_class: Any = None, axis: int = -1) -> Tensor:
    """Cross-entropy with integer labels (Keras's TensorFlow-backend formula)."""
    p = _pred(y_pred)
    lab = y_true._data if isinstance(y_true, Tensor) else np.asarray(y_true)
    lab = np.asarray(lab).astype(np.int64)
    squeeze = lab.ndim == p._data.ndim and lab.shape[-1] == 1
    if squeeze:
        lab = lab[..., 0]
    if lab.shape != p._data.shape[:-1]:
        raise hinted(ValueError(with_hint(
            "Arguments `target` and `output` must have the same shape up until the last "
            f"dimension: target.shape={tuple(lab.shape)}, output.shape={tuple(p._data.shape)}",
            "one integer label per row of predictions")))
    labels: Any = lab
    if _has_tracer(y_true):
        # labels that differ between calls (tf.function, vmap): ops on the tensor
        labels = ops.cast(y_true, dtype=np.int64)
        if squeeze:
            labels = ops.getitem(labels, (Ellipsis, 0))
    logits = p
    if not from_logits:
        logits = log(clip_by_value(p, epsilon(), 1 - epsilon()))
    return nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)


def categorical_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False,
                             label_smoothing: float = 0.0, axis: int = -1) -> Tensor:
    """Cross-entropy with one-hot (or probability) labels."""
    p = _pred(y_pred)
    t = _true_like(y_true, p)
    if label_smoothing:
        n = p._data.shape[-1]
        t = ops.add(ops.multiply(t, 1.0 - label_smoothing), label_smoothing / n)
    if from_logits:
        return nn.softmax_cross_entropy_with_logits(labels=t, logits=p, axis=axis)
    p = ops.divide(p, _sum(p, axis=axis, keepdims=True))
    p = clip_by_value(p, epsilon(), 1.0 - epsilon())
    return ops.negative(_sum(ops.multiply(t, _log(p)), axis=axis))


def binary_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False,
                        label_smoothing: float = 0.0, axis: int = -1) -> Tensor:
    """Per-sample mean binary cross-entropy over the last axis."""
    p = _pred(y_pred)
    t = _true_like(y_true, p)
    t, p = _same_rank(t, p)
    if label_smoothing:
        t = ops.add(ops.multiply(t, 1.0 - label_smoothing), 0.5 * label_smoothing)
    if from_logits:
        el = nn.sigmoid_cross_entropy_with_logits(labels=t, logits=p)
    else:
        # Keras 3's TensorFlow backend: t log(q) + (1 - t) log(1 - q), q clipped to
        # [eps, 1 - eps]
        q = clip_by_value(p, epsilon(), 1.0 - epsilon())
        el = ops.negative(ops.add(ops.multiply(t, _log(q)),
                                  ops.multiply(ops.subtract(1.0, t), _log(ops.subtract(1.0, q)))))
    return _mean(el, axis=axis)


_REDUCTIONS = ("sum_over_batch_size", "sum", "mean", "mean_with_sample_weight", None, "none")


# Keras's short spellings of the functions
mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error


class Loss:
    """Base class: ``loss(y_true, y_pred, sample_weight=None)`` reduces per-sample values.

    ``reduction``: ``"sum_over_batch_size"`` (default: the sum divided by the
    number of per-sample values), ``"sum"``, or ``None`` (per-sample values).

    >>> import tapegrad.tf as tf
    >>> class Abs(tf.keras.losses.Loss):
    ...     def call(self, y_true, y_pred):
    ...         return tf.reduce_mean(tf.abs(y_true - y_pred), axis=-1)
    >>> float(Abs()(tf.constant([[1.0], [3.0]]), tf.constant([[0.0], [0.0]])))
    2.0
    """

    def __init__(self, name: str | None = None, reduction: Any = "sum_over_batch_size",
                 dtype: Any = None) -> None:
        if reduction not in _REDUCTIONS:
            raise hinted(ValueError(with_hint(
                f"Invalid value for argument `reduction`. Expected one of {_REDUCTIONS}. "
                f"Received: reduction={reduction}", "use 'sum_over_batch_size' (the default)")))
        self.name = name or type(self).__name__
        self.reduction = reduction

    def call(self, y_true: Any, y_pred: Any) -> Tensor:
        raise NotImplementedError

    def __call__(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Tensor:
        values = self.call(y_true, y_pred)
        if sample_weight is not None:
            sw = convert(sample_weight)
            if sw._data.dtype != values._data.dtype:
                sw = ops.cast(sw, dtype=values._data.dtype)
            while sw._data.ndim > values._data.ndim and sw._data.shape[-1] == 1:
                sw = ops.squeeze(sw, -1)
            values = ops.multiply(values, sw)
        r = self.reduction
        if r in (None, "none"):
            return values
        total = _sum(values)
        if r == "sum":
            return total
        n = max(int(values._data.size), 1)
        return ops.divide(total, np.asarray(n, dtype=values._data.dtype))

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, "reduction": self.reduction}


class MeanSquaredError(Loss):
    """Mean of squared errors (``sum_over_batch_size`` of the per-sample means).

    >>> import tapegrad.tf as tf
    >>> tf.keras.losses.MeanSquaredError()(tf.constant([[1.0, 2.0]]), tf.constant([[0.0, 0.0]]))
    <tf.Tensor: shape=(), dtype=float32, numpy=2.5>
    """

    def __init__(self, reduction: Any = "sum_over_batch_size", name: str = "mean_squared_error",
                 dtype: Any = None) -> None:
        super().__init__(name, reduction, dtype)

    def call(self, y_true: Any, y_pred: Any) -> Tensor:
        return mean_squared_error(y_true, y_pred)


class MeanAbsoluteError(Loss):
    def __init__(self, reduction: Any = "sum_over_batch_size", name: str = "mean_absolute_error",
                 dtype: Any = None) -> None:
        super().__init__(name, reduction, dtype)

    def call(self, y_true: Any, y_pred: Any) -> Tensor:
        return mean_absolute_error(y_true, y_pred)


class SparseCategoricalCrossentropy(Loss):
    """Cross-entropy with integer class labels; ``from_logits=True`` for raw scores.

    >>> import tapegrad.tf as tf
    >>> loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    >>> round(float(loss([0, 2], [[1.0, 2.0, 3.0], [1.0, 0.0, -1.0]])), 5)
    2.40761
    """

    def __init__(self, from_logits: bool = False, ignore_class: Any = None,
                 reduction: Any = "sum_over_batch_size",
                 name: str = "sparse_categorical_crossentropy", dtype: Any = None) -> None:
        super().__init__(name, reduction, dtype)
        self.from_logits = bool(from_logits)
        self.ignore_class = ignore_class

    def call(self, y_true: Any, y_pred: Any) -> Tensor:
        return sparse_categorical_crossentropy(y_true, y_pred, self.from_logits)


class CategoricalCrossentropy(Loss):
    def __init__(self, from_logits: bool = False, label_smoothing: float = 0.0, axis: int = -1,
                 reduction: Any = "sum_over_batch_size", name: str = "categorical_crossentropy",
                 dtype: Any = None) -> None:
        super().__init__(name, reduction, dtype)
        self.from_logits = bool(from_logits)
        self.label_smoothing = float(label_smoothing)
        self.axis = axis

    def call(self, y_true: Any, y_pred: Any) -> Tensor:
        return categorical_crossentropy(y_true, y_pred, self.from_logits, self.label_smoothing,
                                        self.axis)


class BinaryCrossentropy(Loss):
    def __init__(self, from_logits: bool = False, label_smoothing: float = 0.0, axis: int = -1,
                 reduction: Any = "sum_over_batch_size", name: str = "binary_crossentropy",
                 dtype: Any = None) -> None:
        super().__init__(name, reduction, dtype)
        self.from_logits = bool(from_logits)
        self.label_smoothing = float(label_smoothing)
        self.axis = axis

    def call(self, y_true: Any, y_pred: Any) -> Tensor:
        return binary_crossentropy(y_true, y_pred, self.from_logits, self.label_smoothing,
                                   self.axis)


def get(identifier: Any) -> Any:
    """A loss from a name or a callable."""
    table = {"mse": MeanSquaredError, "mean_squared_error": MeanSquaredError,
             "mae": MeanAbsoluteError, "mean_absolute_error": MeanAbsoluteError,
             "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
             "categorical_crossentropy": CategoricalCrossentropy,
             "binary_crossentropy": BinaryCrossentropy}
    if callable(identifier):
        return identifier
    cls = table.get(str(identifier))
    if cls is None:
        raise hinted(ValueError(with_hint(f"Could not interpret loss identifier: {identifier}",
                                   f"known names: {', '.join(sorted(table))}")))
    return cls()
