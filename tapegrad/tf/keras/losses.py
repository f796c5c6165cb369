"""``keras.losses``: Keras 3's losses and their ``sum_over_batch_size`` reduction."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import ops
from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor
from ...ops.shape import _has_tracer
from .. import nn
from .._ops import clip_by_value, log, rsqrt
from .._tensor import VariableBase, check_broadcast, convert, read
from .variables import epsilon

__all__ = ["Loss", "MeanSquaredError", "MeanAbsoluteError", "SparseCategoricalCrossentropy",
           "CategoricalCrossentropy", "BinaryCrossentropy", "mean_squared_error",
           "mean_absolute_error", "sparse_categorical_crossentropy",
           "categorical_crossentropy", "binary_crossentropy", "mse", "MSE", "mae", "MAE",
           "Huber", "KLDivergence", "CosineSimilarity", "Hinge", "SquaredHinge",
           "CategoricalHinge", "LogCosh", "Poisson", "MeanSquaredLogarithmicError",
           "MeanAbsolutePercentageError", "BinaryFocalCrossentropy", "huber", "kl_divergence",
           "cosine_similarity", "hinge", "squared_hinge", "categorical_hinge", "log_cosh",
           "poisson", "mean_squared_logarithmic_error", "mean_absolute_percentage_error",
           "binary_focal_crossentropy", "KLD", "kld", "MSLE", "msle", "MAPE", "mape", "logcosh",
           "kullback_leibler_divergence"]


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


def _pair(y_true: Any, y_pred: Any, same_rank: bool = True) -> tuple[Tensor, Tensor]:
    """``y_pred`` as a float tensor, ``y_true`` in its dtype (Keras's conversions)."""
    p = _pred(y_pred)
    t = _true_like(y_true, p)
    if same_rank:
        t, p = _same_rank(t, p)
    return t, p


def _const(v: float, like: Tensor) -> np.ndarray:
    return np.asarray(v, dtype=like._data.dtype)


def huber(y_true: Any, y_pred: Any, delta: float = 1.0) -> Tensor:
    """Per-sample mean of the Huber loss: ``0.5 e**2`` for ``|e| <= delta``, else
    ``delta |e| - 0.5 delta**2``.

    >>> import tapegrad.tf as tf
    >>> tf.keras.losses.huber([[0.0, 1.0]], [[0.5, 3.0]]).numpy()
    array([0.8125], dtype=float32)
    """
    t, p = _pair(y_true, y_pred)
    d = _const(delta, p)
    half = _const(0.5, p)
    err = ops.subtract(p, t)
    a = ops.abs(err)
    return _mean(ops.where(ops.less_equal(a, d), ops.multiply(half, ops.square(err)),
                           ops.subtract(ops.multiply(d, a), half * d * d)), axis=-1)


def kl_divergence(y_true: Any, y_pred: Any) -> Tensor:
    """``sum(y_true * log(y_true / y_pred))`` over the last axis, both clipped to
    ``[epsilon, 1]``."""
    t, p = _pair(y_true, y_pred, same_rank=False)
    t = clip_by_value(t, epsilon(), 1.0)
    p = clip_by_value(p, epsilon(), 1.0)
    return _sum(ops.multiply(t, _log(ops.divide(t, p))), axis=-1)


def _l2_normalize(x: Tensor, axis: int) -> Tensor:
    """Keras's ``ops.normalize(order=2)``: ``x * min(rsqrt(sum(x**2)), 1 / epsilon)``."""
    inv = rsqrt(_sum(ops.square(x), axis=axis, keepdims=True))
    return ops.multiply(x, ops.minimum(inv, _const(1.0 / epsilon(), x)))


def cosine_similarity(y_true: Any, y_pred: Any, axis: int = -1) -> Tensor:
    """Minus the cosine similarity along ``axis`` (-1 for parallel vectors).

    >>> import tapegrad.tf as tf
    >>> tf.keras.losses.cosine_similarity([[0.0, 2.0]], [[0.0, 3.0]]).numpy()
    array([-1.], dtype=float32)
    """
    t, p = _pair(y_true, y_pred)
    return ops.negative(_sum(ops.multiply(_l2_normalize(t, axis), _l2_normalize(p, axis)),
                             axis=axis))


def _hinge_labels(t: Tensor) -> Tensor:
    """Keras's convert_binary_labels_to_hinge: 0/1 labels become -1/1 (others unchanged)."""
    binary = ops.all(ops.logical_or(ops.equal(t, _const(0.0, t)), ops.equal(t, _const(1.0, t))))
    return ops.where(binary, ops.subtract(ops.multiply(_const(2.0, t), t), _const(1.0, t)), t)


def hinge(y_true: Any, y_pred: Any) -> Tensor:
    """Per-sample mean of ``max(1 - y_true * y_pred, 0)`` (0/1 labels mapped to -1/1).

    >>> import tapegrad.tf as tf
    >>> tf.keras.losses.hinge([[0.0, 1.0]], [[0.5, 0.25]]).numpy()
    array([1.125], dtype=float32)
    """
    t, p = _pair(y_true, y_pred, same_rank=False)
    t = _hinge_labels(t)
    return _mean(ops.maximum(ops.subtract(_const(1.0, p), ops.multiply(t, p)), _const(0.0, p)),
                 axis=-1)


def squared_hinge(y_true: Any, y_pred: Any) -> Tensor:
    """Per-sample mean of ``max(1 - y_true * y_pred, 0) ** 2``."""
    t, p = _pair(y_true, y_pred, same_rank=False)
    t = _hinge_labels(t)
    m = ops.maximum(ops.subtract(_const(1.0, p), ops.multiply(t, p)), _const(0.0, p))
    return _mean(ops.square(m), axis=-1)


def categorical_hinge(y_true: Any, y_pred: Any) -> Tensor:
    """``max(max((1 - y_true) * y_pred) - sum(y_true * y_pred) + 1, 0)`` per sample."""
    t, p = _pair(y_true, y_pred, same_rank=False)
    pos = _sum(ops.multiply(t, p), axis=-1)
    neg = ops.max(ops.multiply(ops.subtract(_const(1.0, t), t), p), axis=-1)
    return ops.maximum(ops.add(ops.subtract(neg, pos), _const(1.0, p)), _const(0.0, p))


def log_cosh(y_true: Any, y_pred: Any) -> Tensor:
    """Per-sample mean of ``log(cosh(y_pred - y_true))`` (as
    ``x + softplus(-2x) - log(2)``)."""
    t, p = _pair(y_true, y_pred)
    x = ops.subtract(p, t)
    log2 = _const(float(np.log(np.float32(2.0))), p)
    return _mean(ops.subtract(ops.add(x, nn.softplus(ops.multiply(x, _const(-2.0, p)))), log2),
                 axis=-1)


def poisson(y_true: Any, y_pred: Any) -> Tensor:
    """Per-sample mean of ``y_pred - y_true * log(y_pred + epsilon)``."""
    t, p = _pair(y_true, y_pred, same_rank=False)
    return _mean(ops.subtract(p, ops.multiply(t, _log(ops.add(p, _const(epsilon(), p))))),
                 axis=-1)


def mean_squared_logarithmic_error(y_true: Any, y_pred: Any) -> Tensor:
    """Per-sample mean of ``(log(max(y_pred, eps) + 1) - log(max(y_true, eps) + 1))**2``."""
    t, p = _pair(y_true, y_pred)
    eps, one = _const(epsilon(), p), _const(1.0, p)
    first = _log(ops.add(ops.maximum(p, eps), one))
    second = _log(ops.add(ops.maximum(t, eps), one))
    return _mean(ops.square(ops.subtract(first, second)), axis=-1)


def mean_absolute_percentage_error(y_true: Any, y_pred: Any) -> Tensor:
    """Per-sample ``100 * mean(|y_true - y_pred| / max(|y_true|, eps))``."""
    t, p = _pair(y_true, y_pred)
    diff = ops.abs(ops.divide(ops.subtract(t, p), ops.maximum(ops.abs(t),
                                                               _const(epsilon(), p))))
    return ops.multiply(_const(100.0, p), _mean(diff, axis=-1))


def binary_focal_crossentropy(y_true: Any, y_pred: Any, apply_class_balancing: bool = False,
                              alpha: float = 0.25, gamma: float = 2.0,
                              from_logits: bool = False, label_smoothing: float = 0.0,
                              axis: int = -1) -> Tensor:
    """Binary cross-entropy weighted by ``(1 - p_t) ** gamma`` (and ``alpha`` with
    ``apply_class_balancing``), the per-sample mean over ``axis``."""
    p = _pred(y_pred)
    t = _true_like(y_true, p)
    one = _const(1.0, p)
    if label_smoothing:
        t = ops.add(ops.multiply(t, 1.0 - label_smoothing), 0.5 * label_smoothing)
    if from_logits:
        p = ops.sigmoid(p)
    ts, ps = tuple(t._data.shape), tuple(p._data.shape)
    if len(ts) != len(ps):  # Keras's TensorFlow binary_crossentropy checks
        raise hinted(ValueError(with_hint(
            "Arguments `target` and `output` must have the same rank (ndim). Received: "
            f"target.shape={ts}, output.shape={ps}", "labels shaped like the predictions")))
    if ts != ps:
        raise hinted(ValueError(with_hint(
            "Arguments `target` and `output` must have the same shape. Received: "
            f"target.shape={ts}, output.shape={ps}", "labels shaped like the predictions")))
    q = clip_by_value(p, epsilon(), 1.0 - epsilon())
    bce = ops.negative(ops.add(ops.multiply(t, _log(q)),
                               ops.multiply(ops.subtract(one, t), _log(ops.subtract(one, q)))))
    p_t = ops.add(ops.multiply(t, p), ops.multiply(ops.subtract(one, t), ops.subtract(one, p)))
    focal = ops.power(ops.subtract(one, p_t), _const(gamma, p))
    out = ops.multiply(focal, bce)
    if apply_class_balancing:
        w = ops.add(ops.multiply(t, _const(alpha, p)),
                    ops.multiply(ops.subtract(one, t), _const(1.0 - alpha, p)))
        out = ops.multiply(w, out)
    return _mean(out, axis=axis)


_REDUCTIONS = ("sum_over_batch_size", "sum", "mean", "mean_with_sample_weight", None, "none")


# Keras's short spellings of the functions
mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
kld = KLD = kullback_leibler_divergence = kl_divergence
msle = MSLE = mean_squared_logarithmic_error
mape = MAPE = mean_absolute_percentage_error
logcosh = log_cosh


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


def _fn_loss(cls_name: str, fn: Any, default_name: str, doc: str) -> type:
    """A ``Loss`` subclass computing ``fn`` (Keras's LossFunctionWrapper classes)."""

    def __init__(self: Any, reduction: Any = "sum_over_batch_size", name: str = default_name,
                 dtype: Any = None) -> None:
        Loss.__init__(self, name, reduction, dtype)

    def call(self: Any, y_true: Any, y_pred: Any) -> Tensor:
        return fn(y_true, y_pred)

    return type(cls_name, (Loss,), {"__init__": __init__, "call": call, "__doc__": doc,
                                    "__module__": __name__})


class Huber(Loss):
    """The Huber loss (quadratic below ``delta``, linear above).

    >>> import tapegrad.tf as tf
    >>> float(tf.keras.losses.Huber()([[0.0, 1.0]], [[0.5, 3.0]]))
    0.8125
    """

    def __init__(self, delta: float = 1.0, reduction: Any = "sum_over_batch_size",
                 name: str = "huber_loss", dtype: Any = None) -> None:
        super().__init__(name, reduction, dtype)
        self.delta = delta

    def call(self, y_true: Any, y_pred: Any) -> Tensor:
        return huber(y_true, y_pred, self.delta)


class CosineSimilarity(Loss):
    """Minus the cosine similarity along ``axis``, reduced over the batch."""

    def __init__(self, axis: int = -1, reduction: Any = "sum_over_batch_size",
                 name: str = "cosine_similarity", dtype: Any = None) -> None:
        super().__init__(name, reduction, dtype)
        self.axis = axis

    def call(self, y_true: Any, y_pred: Any) -> Tensor:
        return cosine_similarity(y_true, y_pred, self.axis)


KLDivergence = _fn_loss("KLDivergence", kl_divergence, "kl_divergence",
                        "The Kullback-Leibler divergence of ``y_pred`` from ``y_true``.")
Hinge = _fn_loss("Hinge", hinge, "hinge", "The hinge loss (0/1 labels mapped to -1/1).")
SquaredHinge = _fn_loss("SquaredHinge", squared_hinge, "squared_hinge",
                        "The squared hinge loss (0/1 labels mapped to -1/1).")
CategoricalHinge = _fn_loss("CategoricalHinge", categorical_hinge, "categorical_hinge",
                            "The categorical hinge loss of one-hot labels.")
LogCosh = _fn_loss("LogCosh", log_cosh, "log_cosh",
                   "The logarithm of the hyperbolic cosine of the error.")
Poisson = _fn_loss("Poisson", poisson, "poisson", "The Poisson loss ``y_pred - y_true log y_pred``.")
MeanSquaredLogarithmicError = _fn_loss(
    "MeanSquaredLogarithmicError", mean_squared_logarithmic_error,
    "mean_squared_logarithmic_error", "The mean squared error of ``log(1 + y)``.")
MeanAbsolutePercentageError = _fn_loss(
    "MeanAbsolutePercentageError", mean_absolute_percentage_error,
    "mean_absolute_percentage_error", "The mean absolute error in percent of ``y_true``.")


class BinaryFocalCrossentropy(Loss):
    """Binary cross-entropy down-weighting easy examples by ``(1 - p_t) ** gamma``."""

    def __init__(self, apply_class_balancing: bool = False, alpha: float = 0.25,
                 gamma: float = 2.0, from_logits: bool = False, label_smoothing: float = 0.0,
                 axis: int = -1, reduction: Any = "sum_over_batch_size",
                 name: str = "binary_focal_crossentropy", dtype: Any = None) -> None:
        super().__init__(name, reduction, dtype)
        self.apply_class_balancing = apply_class_balancing
        self.alpha = alpha
        self.gamma = gamma
        self.from_logits = from_logits
        self.label_smoothing = label_smoothing
        self.axis = axis

    def call(self, y_true: Any, y_pred: Any) -> Tensor:
        return binary_focal_crossentropy(
            y_true, y_pred, apply_class_balancing=self.apply_class_balancing, alpha=self.alpha,
            gamma=self.gamma, from_logits=self.from_logits,
            label_smoothing=self.label_smoothing, axis=self.axis)

    def get_config(self) -> dict[str, Any]:
        cfg = super().get_config()
        cfg.update(from_logits=self.from_logits, label_smoothing=self.label_smoothing,
                   axis=self.axis, apply_class_balancing=self.apply_class_balancing,
                   alpha=self.alpha, gamma=self.gamma)
        return cfg


def get(identifier: Any) -> Any:
    """A loss from a name or a callable."""
    table = {"mse": MeanSquaredError, "mean_squared_error": MeanSquaredError,
             "mae": MeanAbsoluteError, "mean_absolute_error": MeanAbsoluteError,
             "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
             "categorical_crossentropy": CategoricalCrossentropy,
             "binary_crossentropy": BinaryCrossentropy}
    functions: dict[str, Any] = {
        "huber": huber, "kl_divergence": kl_divergence, "kld": kl_divergence,
        "KLD": kl_divergence, "cosine_similarity": cosine_similarity, "hinge": hinge,
        "squared_hinge": squared_hinge, "categorical_hinge": categorical_hinge,
        "log_cosh": log_cosh, "poisson": poisson, "msle": mean_squared_logarithmic_error,
        "mean_squared_logarithmic_error": mean_squared_logarithmic_error,
        "MSLE": mean_squared_logarithmic_error, "mape": mean_absolute_percentage_error,
        "mean_absolute_percentage_error": mean_absolute_percentage_error,
        "MAPE": mean_absolute_percentage_error,
        "binary_focal_crossentropy": binary_focal_crossentropy}
    if callable(identifier):
        return identifier
    if str(identifier) in functions:  # Keras returns these names' functions
        return functions[str(identifier)]
    cls = table.get(str(identifier))
    if cls is None:
        raise hinted(ValueError(with_hint(f"Could not interpret loss identifier: {identifier}",
                                   f"known names: {', '.join(sorted([*table, *functions]))}")))
    return cls()
