"""``keras.metrics``: stateful metrics with ``update_state`` / ``result`` / ``reset_state``.

Each metric keeps its state in float32 Keras variables (``total``/``count``,
or confusion-matrix counters), updated with Keras 3's formulas in the same
dtype, so results equal Keras's to float32 rounding.  Metrics are not
differentiable (as in Keras): they read their inputs' values.

>>> import tapegrad.tf as tf
>>> m = tf.keras.metrics.Mean()
>>> m.update_state([1.0, 3.0]); m.update_state(5.0, sample_weight=2.0)
>>> float(m.result())
3.5
>>> m.reset_state(); float(m.result())
0.0
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor
from ...autodiff import tracing as _tracing
from ...ops._tf_eigen import inner_sum_f32
from .._tensor import VariableBase, read, tft
from .layers import _snake, auto_name
from .variables import KerasVariable

__all__ = ["Metric", "Mean", "Sum", "MeanMetricWrapper", "Accuracy", "BinaryAccuracy",
           "CategoricalAccuracy", "SparseCategoricalAccuracy", "MeanSquaredError",
           "MeanAbsoluteError", "AUC", "Precision", "Recall", "get", "accuracy",
           "RootMeanSquaredError", "MeanAbsolutePercentageError", "MeanSquaredLogarithmicError",
           "TopKCategoricalAccuracy", "SparseTopKCategoricalAccuracy", "BinaryCrossentropy",
           "CategoricalCrossentropy", "SparseCategoricalCrossentropy",
           "top_k_categorical_accuracy", "sparse_top_k_categorical_accuracy",
           "binary_accuracy", "categorical_accuracy", "sparse_categorical_accuracy"]

F32 = np.float32


def _arr(x: Any, dtype: Any = None) -> np.ndarray:
    """The values of ``x`` (tensor, variable, list, array) as an ndarray."""
    if isinstance(x, Tensor):
        x = (read(x) if isinstance(x, VariableBase) else x)._data
    # a traced tensor's array keeps its mark (a value taken from it is noted)
    a = x if isinstance(x, np.ndarray) else np.asarray(x)
    return a if dtype is None else a.astype(dtype, copy=False)


def _divide_no_nan(a: Any, b: Any) -> Any:
    a = np.asarray(a, F32)
    b = np.asarray(b, F32)
    if a.ndim == 0 and b.ndim == 0:  # a mean's total / count: one scalar division
        return np.array(a / b if b != 0 else 0, F32)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(b == 0, F32(0), a / np.where(b == 0, F32(1), b))
    return out.astype(F32)


def _traced_update(method: Callable[..., Any]) -> Callable[..., Any]:
    """A built-in metric's ``update_state`` (NumPy on its state variables' arrays): inside
    ``tf.function`` it is one effect of the program, run at every call on that call's
    values (recorded once, it would only have updated the state while tracing)."""
    import functools

    @functools.wraps(method)
    def update_state(self: Any, *args: Any, **kwargs: Any) -> None:
        if _tracing.current() is None:
            return method(self, *args, **kwargs)
        keys = list(kwargs)
        vals = [*args, *(kwargs[k] for k in keys)]
        n = len(args)

        def run(*arrays: Any) -> None:
            method(self, *arrays[:n], **dict(zip(keys, arrays[n:])))

        tensors = [read(v) if isinstance(v, VariableBase) else v for v in vals]
        _tracing.effect(run, tensors, f"{type(self).__name__}.update_state",
                        writes=self._variables)
        return None

    return update_state


def _traced_result(method: Callable[..., Any]) -> Callable[..., Any]:
    """A built-in metric's ``result`` (computed from its state arrays): inside
    ``tf.function`` a source of the program, computed again at every call."""
    import functools

    @functools.wraps(method)
    def result(self: Any) -> Any:
        lv = _tracing.current()
        if lv is None:
            return method(self)
        return lv.source(lambda: method(self), f"{type(self).__name__}.result")

    return result


class Metric:
    """Base class: subclass it, create state with ``add_variable`` and define
    ``update_state`` and ``result``.

    Examples
    --------
    >>> import tapegrad.tf as tf
    >>> class Count(tf.keras.metrics.Metric):
    ...     def __init__(self, name="count", **kw):
    ...         super().__init__(name=name, **kw)
    ...         self.n = self.add_variable(shape=(), initializer="zeros", name="n")
    ...     def update_state(self, y_true, y_pred, sample_weight=None):
    ...         self.n.assign_add(float(len(y_true)))
    ...     def result(self):
    ...         return self.n.value
    >>> c = Count(); c.update_state([1, 2], [1, 2]); float(c.result())
    2.0
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__module__ == __name__:  # the built-in metrics: NumPy on their state
            for attr, wrap in (("update_state", _traced_update), ("result", _traced_result)):
                if attr in cls.__dict__:
                    setattr(cls, attr, wrap(cls.__dict__[attr]))

    def __init__(self, dtype: Any = None, name: str | None = None) -> None:
        self.name = name or _snake(type(self).__name__)
        self._dtype = "float32" if dtype is None else str(dtype)
        self._variables: list[KerasVariable] = []

    # -------------------------------------------------------------- state
    def add_variable(self, shape: Any = (), initializer: Any = "zeros", dtype: Any = None,
                     aggregation: str = "sum", name: str | None = None) -> KerasVariable:
        """A float32 state variable, reset to its initial value by ``reset_state``."""
        shp = tuple(int(s) for s in shape)
        init = np.zeros(shp, F32) if initializer in ("zeros", None) else \
            np.asarray(initializer() if callable(initializer) else initializer, F32) * \
            np.ones(shp, F32)
        wname = name or f"variable_{len(self._variables)}"
        v = KerasVariable(init, name=wname, path=f"{self.name}/{wname}", trainable=False,
                          dtype=dtype or "float32")
        v.__dict__["_initial"] = np.array(init, copy=True)
        self._variables.append(v)
        return v

    add_weight = add_variable

    @property
    def variables(self) -> list[KerasVariable]:
        return list(self._variables)

    @property
    def dtype(self) -> str:
        return self._dtype

    def reset_state(self) -> None:
        """Every state variable back to its initial value."""
        for v in self._variables:
            v.assign(np.array(v.__dict__["_initial"], copy=True))

    def update_state(self, *args: Any, **kwargs: Any) -> None:
        raise hinted(NotImplementedError(with_hint(
            f"Metric {type(self).__name__} does not implement update_state()",
            "define update_state(self, y_true, y_pred, sample_weight=None)")))

    def result(self) -> Any:
        raise hinted(NotImplementedError(with_hint(
            f"Metric {type(self).__name__} does not implement result()",
            "define result(self) returning the metric's value")))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Update the state and return the new result (Keras's ``metric(y_true, y_pred)``)."""
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, "dtype": self._dtype}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name}>"


# ---------------------------------------------------------------------------- reductions
def _samplewise(values: np.ndarray, sample_weight: Any) -> tuple[np.ndarray, Any]:
    """Keras's reduce_to_samplewise_values: weight, then mean over non-batch axes."""
    values = values.astype(F32, copy=False)
    sw = None
    if sample_weight is not None:
        sw = _arr(sample_weight, F32)
        while sw.ndim > values.ndim and sw.shape[-1] == 1:
            sw = sw[..., 0]
        while values.ndim > sw.ndim and values.ndim > 0 and sw.ndim > 0 and \
                values.shape[-1] == 1:
            values = values[..., 0]
        sw_full = np.broadcast_to(sw, np.broadcast_shapes(sw.shape, values.shape)) if \
            sw.ndim else sw
        values = (values * sw_full).astype(F32)
        if sw.ndim > 1:
            sw = _tf_reduce(sw, tuple(range(1, sw.ndim)), mean=True)
    if values.ndim > 1:
        values = _tf_reduce(values, tuple(range(1, values.ndim)), mean=True)
    return values, sw


def _tf_reduce(a: Any, axis: Any = None, mean: bool = False) -> Any:
    """``ops.sum`` / ``ops.mean`` as Keras calls them on TensorFlow: float32 over trailing
    axes (all axes when ``axis`` is None) in TensorFlow's summation order; a float32
    result otherwise."""
    a = np.asarray(a)
    if a.dtype == F32 and a.ndim:
        ax = None if axis is None else tuple(
            int(x) % a.ndim for x in (axis if isinstance(axis, tuple) else (axis,)))
        r = inner_sum_f32(a, ax, False, mean)
        if r is not None:
            return r
    if mean:
        return np.mean(a, axis=axis, dtype=F32 if a.dtype.kind != "f" else None)
    return np.sum(a, axis=axis, dtype=F32)


class Sum(Metric):
    """The (weighted) sum of the values seen.

    >>> import tapegrad.tf as tf
    >>> m = tf.keras.metrics.Sum(); m.update_state([1.0, 3.0, 5.0, 7.0])
    >>> float(m.result())
    16.0
    """

    def __init__(self, name: str = "sum", dtype: Any = None) -> None:
        super().__init__(dtype=dtype, name=name)
        self.total = self.add_variable(shape=(), name="total")

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        v, _ = _samplewise(_arr(values), sample_weight)
        self.total.assign_add(_tf_reduce(v))

    def result(self) -> Tensor:
        return tft(np.array(self.total._data, copy=True))


def _fast_scalar(metric: Metric, values: Any) -> bool:
    """``values`` is an eager float32 scalar tensor and ``metric``'s state is plain float32
    scalars updated outside ``tf.function`` (no constraint, no tracing)."""
    if not isinstance(values, Tensor) or isinstance(values, VariableBase):
        return False
    data = values._data
    if type(data) is not np.ndarray or data.dtype != F32 or data.ndim != 0:
        return False
    if _tracing.current() is not None:
        return False
    for v in metric._variables:
        vd = v._data
        if v.__dict__.get("_constraint") is not None or type(vd) is not np.ndarray or \
                vd.dtype != F32 or vd.ndim != 0:
            return False
    return True


class Mean(Metric):
    """The (weighted) mean of the values seen: ``total / count``.

    >>> import tapegrad.tf as tf
    >>> m = tf.keras.metrics.Mean(); m.update_state([1, 3, 5, 7], sample_weight=[1, 1, 0, 0])
    >>> float(m.result())
    2.0
    """

    def __init__(self, name: str = "mean", dtype: Any = None) -> None:
        super().__init__(dtype=dtype, name=name)
        self.total = self.add_variable(shape=(), name="total")
        self.count = self.add_variable(shape=(), name="count")

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        if type(sample_weight) is int and type(values) is not np.ndarray and \
                _fast_scalar(self, values):
            # the trainer's loss tracker (a scalar loss weighted by the batch size): the
            # same float32 arithmetic as below, without the general reduction's steps
            w = F32(sample_weight)
            self.total._data = np.array(self.total._data + values._data * w, F32)
            self.count._data = np.array(self.count._data + w, F32)
            return
        v, sw = _samplewise(_arr(values), sample_weight)
        self.total.assign_add(_tf_reduce(v))
        n: Any = _tf_reduce(sw) if sw is not None else \
            (v.shape[0] if v.ndim >= 1 else 1)
        self.count.assign_add(F32(n))

    def result(self) -> Tensor:
        return tft(_divide_no_nan(self.total._data, self.count._data))


class MeanMetricWrapper(Mean):
    """The mean of ``fn(y_true, y_pred)`` over the samples seen."""

    def __init__(self, fn: Callable[..., Any], name: str | None = None, dtype: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(name=str(name or getattr(fn, "__name__", "mean_metric_wrapper")),
                         dtype=dtype)
        self._fn = getattr(fn, "_values", fn)  # a public per-sample function: its arrays
        self._fn_kwargs = kwargs

    def update_state(self, y_true: Any, y_pred: Any = None,  # type: ignore[override]
                     sample_weight: Any = None) -> None:
        values = self._fn(y_true, y_pred, **self._fn_kwargs)
        super().update_state(_arr(values), sample_weight)


# ---------------------------------------------------------------------------- per-sample fns
def _same_rank(t: np.ndarray, p: np.ndarray, expand_rank_1: bool = True
               ) -> tuple[np.ndarray, np.ndarray]:
    """Keras's squeeze_or_expand_to_same_rank (a rank-1 side gains a trailing axis)."""
    if t.ndim == p.ndim + 1 and t.shape[-1] == 1:
        if p.ndim == 1 and expand_rank_1:
            p = p[..., None]
        else:
            t = t[..., 0]
    elif p.ndim == t.ndim + 1 and p.shape[-1] == 1:
        if t.ndim == 1 and expand_rank_1:
            t = t[..., None]
        else:
            p = p[..., 0]
    return t, p


def accuracy(y_true: Any, y_pred: Any) -> np.ndarray:
    """1.0 where the prediction equals the label exactly."""
    p = _arr(y_pred)
    t = _arr(y_true, p.dtype)
    t, p = _same_rank(t, p)
    return (t == p).astype(F32)


def binary_accuracy(y_true: Any, y_pred: Any, threshold: float = 0.5) -> np.ndarray:
    """1.0 where ``(y_pred > threshold) == y_true``, elementwise."""
    p = _arr(y_pred)
    t = _arr(y_true, p.dtype)
    t, p = _same_rank(t, p)
    pred = (p > p.dtype.type(threshold) if p.dtype.kind == "f" else p > threshold
            ).astype(t.dtype)
    return (t == pred).astype(F32)


def categorical_accuracy(y_true: Any, y_pred: Any) -> np.ndarray:
    """1.0 where ``argmax(y_pred) == argmax(y_true)`` (one-hot labels)."""
    p = _arr(y_pred)
    t = np.argmax(_arr(y_true), axis=-1)
    shape = t.shape
    reshape = False
    if t.ndim == p.ndim:
        t = t.squeeze(-1)
        reshape = True
    m = (t == np.argmax(p, axis=-1)).astype(F32)
    return m.reshape(shape) if reshape else m


def sparse_categorical_accuracy(y_true: Any, y_pred: Any) -> np.ndarray:
    """1.0 where ``argmax(y_pred)`` equals the integer label."""
    p = _arr(y_pred)
    t = _arr(y_true)
    t = t.astype(p.dtype, copy=False) if p.dtype.kind == "f" else t
    shape = t.shape
    reshape = False
    if t.ndim == p.ndim and t.shape[-1] == 1:
        t = t[..., 0]
        reshape = True
    m = (t == np.argmax(p, axis=-1).astype(t.dtype)).astype(F32)
    if reshape:
        m = m.reshape(shape)
    if m.ndim > 1 and m.shape[-1] == 1:
        m = m[..., 0]
    return m


def _mse(y_true: Any, y_pred: Any) -> np.ndarray:
    p = _arr(y_pred)
    p = p.astype(F32) if p.dtype.kind != "f" else p
    t = _arr(y_true, p.dtype)
    t, p = _same_rank(t, p)
    return _tf_reduce(np.square(t - p), -1, mean=True)


def _mae(y_true: Any, y_pred: Any) -> np.ndarray:
    p = _arr(y_pred)
    p = p.astype(F32) if p.dtype.kind != "f" else p
    t = _arr(y_true, p.dtype)
    t, p = _same_rank(t, p)
    return _tf_reduce(np.abs(t - p), -1, mean=True)


class Accuracy(MeanMetricWrapper):
    """How often predictions equal labels.

    >>> import tapegrad.tf as tf
    >>> m = tf.keras.metrics.Accuracy(); m.update_state([[1], [2], [3], [4]], [[0], [2], [3], [4]])
    >>> float(m.result())
    0.75
    """

    def __init__(self, name: str = "accuracy", dtype: Any = None) -> None:
        super().__init__(accuracy, name=name, dtype=dtype)


class BinaryAccuracy(MeanMetricWrapper):
    """How often ``y_pred > threshold`` matches binary labels.

    >>> import tapegrad.tf as tf
    >>> m = tf.keras.metrics.BinaryAccuracy()
    >>> m.update_state([[1], [1], [0], [0]], [[0.98], [1], [0], [0.6]]); float(m.result())
    0.75
    """

    def __init__(self, name: str = "binary_accuracy", dtype: Any = None,
                 threshold: float = 0.5) -> None:
        super().__init__(binary_accuracy, name=name, dtype=dtype, threshold=threshold)
        self.threshold = threshold


class CategoricalAccuracy(MeanMetricWrapper):
    """How often the arg-max of predictions matches that of one-hot labels."""

    def __init__(self, name: str = "categorical_accuracy", dtype: Any = None) -> None:
        super().__init__(categorical_accuracy, name=name, dtype=dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """How often the arg-max of predictions matches integer labels.

    >>> import tapegrad.tf as tf
    >>> m = tf.keras.metrics.SparseCategoricalAccuracy()
    >>> m.update_state([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0]]); float(m.result())
    0.5
    """

    def __init__(self, name: str = "sparse_categorical_accuracy", dtype: Any = None) -> None:
        super().__init__(sparse_categorical_accuracy, name=name, dtype=dtype)


class MeanSquaredError(MeanMetricWrapper):
    """The mean of the per-sample mean squared errors."""

    def __init__(self, name: str = "mean_squared_error", dtype: Any = None) -> None:
        super().__init__(_mse, name=name, dtype=dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    """The mean of the per-sample mean absolute errors."""

    def __init__(self, name: str = "mean_absolute_error", dtype: Any = None) -> None:
        super().__init__(_mae, name=name, dtype=dtype)


def _mape(y_true: Any, y_pred: Any) -> np.ndarray:
    p = _arr(y_pred)
    p = p.astype(F32) if p.dtype.kind != "f" else p
    t = _arr(y_true, p.dtype)
    t, p = _same_rank(t, p)
    eps = p.dtype.type(1e-7)
    diff = np.abs((t - p) / np.maximum(np.abs(t), eps))
    return p.dtype.type(100.0) * _tf_reduce(diff, -1, mean=True)


def _msle(y_true: Any, y_pred: Any) -> np.ndarray:
    p = _arr(y_pred)
    p = p.astype(F32) if p.dtype.kind != "f" else p
    t = _arr(y_true, p.dtype)
    t, p = _same_rank(t, p)
    eps = p.dtype.type(1e-7)
    one = p.dtype.type(1.0)
    first = np.log(np.maximum(p, eps) + one)
    second = np.log(np.maximum(t, eps) + one)
    return _tf_reduce(np.square(first - second), -1, mean=True)


def sparse_top_k_categorical_accuracy(y_true: Any, y_pred: Any, k: int = 5) -> np.ndarray:
    """1.0 where the label is among the ``k`` highest predictions (TensorFlow's in_top_k:
    a tie with the k-th value counts as in)."""
    p = _arr(y_pred)
    t = _arr(y_true)
    shape = t.shape
    if t.ndim == p.ndim and t.shape[-1] == 1:
        t = t[..., 0]
    t = t.astype(np.int64).reshape(-1)
    flat = p.reshape(-1, p.shape[-1])
    target = flat[np.arange(flat.shape[0]), t]
    above = np.sum(flat > target[:, None], axis=-1)
    out = (above < k).astype(F32)
    return out.reshape(shape[:-1] if len(shape) == p.ndim and shape[-1] == 1 else shape)


def top_k_categorical_accuracy(y_true: Any, y_pred: Any, k: int = 5) -> np.ndarray:
    """``sparse_top_k_categorical_accuracy`` of the one-hot labels' arg-max."""
    return sparse_top_k_categorical_accuracy(np.argmax(_arr(y_true), axis=-1), y_pred, k)


class MeanAbsolutePercentageError(MeanMetricWrapper):
    """The mean of ``100 * |y_true - y_pred| / max(|y_true|, eps)``."""

    def __init__(self, name: str = "mean_absolute_percentage_error", dtype: Any = None) -> None:
        super().__init__(_mape, name=name, dtype=dtype)


class MeanSquaredLogarithmicError(MeanMetricWrapper):
    """The mean of ``(log(1 + y_pred) - log(1 + y_true))**2``."""

    def __init__(self, name: str = "mean_squared_logarithmic_error", dtype: Any = None) -> None:
        super().__init__(_msle, name=name, dtype=dtype)


class RootMeanSquaredError(Mean):
    """``sqrt`` of the (weighted) mean of squared errors.

    >>> import tapegrad.tf as tf
    >>> m = tf.keras.metrics.RootMeanSquaredError(); m.update_state([[0.0], [0.0]], [[3.0], [4.0]])
    >>> round(float(m.result()), 5)
    3.53553
    """

    def __init__(self, name: str = "root_mean_squared_error", dtype: Any = None) -> None:
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true: Any, y_pred: Any = None,  # type: ignore[override]
                     sample_weight: Any = None) -> None:
        p = _arr(y_pred)
        p = p.astype(F32) if p.dtype.kind != "f" else p
        t = _arr(y_true, p.dtype)
        t, p = _same_rank(t, p)
        super().update_state(np.square(p - t), sample_weight)

    def result(self) -> Tensor:
        return tft(np.asarray(np.sqrt(np.asarray(super().result()._data)), dtype=F32))


class TopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the one-hot label is among the ``k`` highest predictions."""

    def __init__(self, k: int = 5, name: str = "top_k_categorical_accuracy",
                 dtype: Any = None) -> None:
        super().__init__(top_k_categorical_accuracy, name=name, dtype=dtype, k=k)
        self.k = k


class SparseTopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the integer label is among the ``k`` highest predictions."""

    def __init__(self, k: int = 5, name: str = "sparse_top_k_categorical_accuracy",
                 dtype: Any = None, from_sorted_ids: bool = False) -> None:
        super().__init__(sparse_top_k_categorical_accuracy, name=name, dtype=dtype, k=k)
        self.k = k


def _loss_metric(fn_name: str) -> Callable[..., np.ndarray]:
    def fn(y_true: Any, y_pred: Any, **kw: Any) -> np.ndarray:
        from . import losses

        return _arr(getattr(losses, fn_name)(y_true, y_pred, **kw))

    fn.__name__ = fn_name
    return fn


class BinaryCrossentropy(MeanMetricWrapper):
    """The mean binary cross-entropy (Keras's loss function, per sample)."""

    def __init__(self, name: str = "binary_crossentropy", dtype: Any = None,
                 from_logits: bool = False, label_smoothing: float = 0.0) -> None:
        super().__init__(_loss_metric("binary_crossentropy"), name=name, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing)


class CategoricalCrossentropy(MeanMetricWrapper):
    """The mean categorical cross-entropy with one-hot labels."""

    def __init__(self, name: str = "categorical_crossentropy", dtype: Any = None,
                 from_logits: bool = False, label_smoothing: float = 0.0,
                 axis: int = -1) -> None:
        super().__init__(_loss_metric("categorical_crossentropy"), name=name, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing)


class SparseCategoricalCrossentropy(MeanMetricWrapper):
    """The mean cross-entropy with integer labels."""

    def __init__(self, name: str = "sparse_categorical_crossentropy", dtype: Any = None,
                 from_logits: bool = False, ignore_class: Any = None, axis: int = -1) -> None:
        super().__init__(_loss_metric("sparse_categorical_crossentropy"), name=name,
                         dtype=dtype, from_logits=from_logits)


def _cosine_similarity(y_true: Any, y_pred: Any, axis: int = -1) -> np.ndarray:
    """Keras's metric ``cosine_similarity`` (the loss's value with the sign flipped)."""
    from . import losses

    return -_arr(losses.cosine_similarity(y_true, y_pred, axis=axis))


class CosineSimilarity(MeanMetricWrapper):
    """The mean cosine similarity of predictions and labels along ``axis``."""

    def __init__(self, name: str = "cosine_similarity", dtype: Any = None,
                 axis: int = -1) -> None:
        super().__init__(_cosine_similarity, name=name, dtype=dtype, axis=axis)
        self.axis = axis


def _loss_wrapper(cls_name: str, fn_name: str, default_name: str, doc: str) -> type:
    def __init__(self: Any, name: str = default_name, dtype: Any = None) -> None:
        MeanMetricWrapper.__init__(self, _loss_metric(fn_name), name=name, dtype=dtype)

    return type(cls_name, (MeanMetricWrapper,), {"__init__": __init__, "__doc__": doc,
                                                 "__module__": __name__})


KLDivergence = _loss_wrapper("KLDivergence", "kl_divergence", "kl_divergence",
                             "The mean Kullback-Leibler divergence.")
Hinge = _loss_wrapper("Hinge", "hinge", "hinge", "The mean hinge loss.")
SquaredHinge = _loss_wrapper("SquaredHinge", "squared_hinge", "squared_hinge",
                             "The mean squared hinge loss.")
CategoricalHinge = _loss_wrapper("CategoricalHinge", "categorical_hinge", "categorical_hinge",
                                 "The mean categorical hinge loss.")
LogCoshError = _loss_wrapper("LogCoshError", "log_cosh", "logcosh",
                             "The mean logarithm of the hyperbolic cosine of the error.")
Poisson = _loss_wrapper("Poisson", "poisson", "poisson", "The mean Poisson loss.")


# ---------------------------------------------------------------------------- confusion
class _Confusion(Metric):
    """Counts of true/false positives/negatives at thresholds (``pred > threshold``)."""

    true_positives: KerasVariable
    false_positives: KerasVariable
    true_negatives: KerasVariable
    false_negatives: KerasVariable

    def __init__(self, thresholds: Any, name: str | None, dtype: Any,
                 counters: tuple[str, ...]) -> None:
        super().__init__(dtype=dtype, name=name)
        self.thresholds = thresholds
        self._th = np.asarray([0.5] if thresholds is None else
                              np.atleast_1d(thresholds), F32)
        self._counters = counters
        for c in counters:
            setattr(self, c, self.add_variable(shape=(len(self._th),), name=c))

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        p = _arr(y_pred, F32).reshape(-1)
        t = _arr(y_true).astype(bool).reshape(-1)
        if p.shape != t.shape:
            raise hinted(ValueError(with_hint(
                f"Shapes {tuple(_arr(y_true).shape)} and {tuple(_arr(y_pred).shape)} are "
                "incompatible", "y_true and y_pred need the same shape")))
        shape = _arr(y_pred).shape
        if sample_weight is None:
            w = np.ones_like(p)
        else:
            sw = _arr(sample_weight, F32)
            while 0 < sw.ndim < len(shape):  # (batch,) weights for (batch, 1) predictions
                sw = sw[..., None]
            w = np.broadcast_to(sw, shape).reshape(-1)
        pos = p[None, :] > self._th[:, None]
        tt = t[None, :]
        sums = {
            "true_positives": (pos & tt), "false_positives": (pos & ~tt),
            "true_negatives": (~pos & ~tt), "false_negatives": (~pos & tt)}
        for c in self._counters:
            var = getattr(self, c)
            var.assign_add(np.sum(sums[c] * w[None, :], axis=1, dtype=F32))

    def _squeeze(self, x: np.ndarray) -> Tensor:
        x = np.asarray(x, F32)
        # Keras: one threshold (None, a float or a one-element list) gives a scalar
        return tft(np.asarray(x[0]) if len(self._th) == 1 else x)


class Precision(_Confusion):
    """``tp / (tp + fp)`` with predictions thresholded at 0.5 (or ``thresholds``).

    >>> import tapegrad.tf as tf
    >>> m = tf.keras.metrics.Precision(); m.update_state([0, 1, 1, 1], [1, 0, 1, 1])
    >>> round(float(m.result()), 6)
    0.666667
    """

    def __init__(self, thresholds: Any = None, top_k: Any = None, class_id: Any = None,
                 name: str | None = None, dtype: Any = None) -> None:
        self.top_k, self.class_id = top_k, class_id
        super().__init__(thresholds, name or auto_name("precision"), dtype,
                         ("true_positives", "false_positives"))

    def result(self) -> Tensor:
        tp, fp = self.true_positives._data, self.false_positives._data
        return self._squeeze(_divide_no_nan(tp, tp + fp))

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "thresholds": self.thresholds, "top_k": self.top_k,
                "class_id": self.class_id}


class Recall(_Confusion):
    """``tp / (tp + fn)`` with predictions thresholded at 0.5 (or ``thresholds``).

    >>> import tapegrad.tf as tf
    >>> m = tf.keras.metrics.Recall(); m.update_state([0, 1, 1, 1], [1, 0, 1, 1])
    >>> round(float(m.result()), 6)
    0.666667
    """

    def __init__(self, thresholds: Any = None, top_k: Any = None, class_id: Any = None,
                 name: str | None = None, dtype: Any = None) -> None:
        self.top_k, self.class_id = top_k, class_id
        super().__init__(thresholds, name or auto_name("recall"), dtype,
                         ("true_positives", "false_negatives"))

    def result(self) -> Tensor:
        tp, fn = self.true_positives._data, self.false_negatives._data
        return self._squeeze(_divide_no_nan(tp, tp + fn))

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "thresholds": self.thresholds, "top_k": self.top_k,
                "class_id": self.class_id}


class AUC(_Confusion):
    """Area under the ROC (or PR) curve from counts at ``num_thresholds`` thresholds.

    Keras's thresholds (``i / (num_thresholds - 1)`` plus ``-eps`` and ``1+eps``)
    and Riemann sums (``summation_method="interpolation"`` by default).

    >>> import tapegrad.tf as tf
    >>> m = tf.keras.metrics.AUC(num_thresholds=3)
    >>> m.update_state([0, 0, 1, 1], [0, 0.5, 0.3, 0.9]); float(m.result())
    0.75
    """

    def __init__(self, num_thresholds: int = 200, curve: str = "ROC",
                 summation_method: str = "interpolation", name: str | None = None,
                 dtype: Any = None, thresholds: Any = None, multi_label: bool = False,
                 num_labels: Any = None, label_weights: Any = None,
                 from_logits: bool = False) -> None:
        if num_thresholds <= 1 and thresholds is None:
            raise hinted(ValueError(with_hint(
                "Argument `num_thresholds` must be an integer > 1. Received: "
                f"num_thresholds={num_thresholds}", "use at least 2 thresholds")))
        eps = 1e-7
        if thresholds is not None:
            inner = sorted(float(t) for t in np.atleast_1d(thresholds))
        else:
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        th = [0.0 - eps] + inner + [1.0 + eps]
        self.curve = curve.upper()
        self.summation_method = summation_method
        self.num_thresholds = len(th)
        self.from_logits = bool(from_logits)
        super().__init__(th, name or auto_name("auc"), dtype,
                         ("true_positives", "false_positives", "true_negatives",
                          "false_negatives"))

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        p = _arr(y_pred, F32)
        if self.from_logits:
            p = (1 / (1 + np.exp(-p))).astype(F32)
        super().update_state(y_true, p, sample_weight)

    def result(self) -> Tensor:
        tp, fp = self.true_positives._data, self.false_positives._data
        tn, fn = self.true_negatives._data, self.false_negatives._data
        n = self.num_thresholds
        if self.curve == "PR" and self.summation_method == "interpolation":
            return tft(np.asarray(self._interpolate_pr_auc(tp, fp, fn), F32))
        recall = _divide_no_nan(tp, tp + fn)
        if self.curve == "ROC":
            x, y = _divide_no_nan(fp, fp + tn), recall
        else:
            x, y = recall, _divide_no_nan(tp, tp + fp)
        if self.summation_method == "interpolation":
            heights = (y[: n - 1] + y[1:]) / F32(2.0)
        elif self.summation_method == "minoring":
            heights = np.minimum(y[: n - 1], y[1:])
        else:
            heights = np.maximum(y[: n - 1], y[1:])
        return tft(np.asarray(np.sum((x[: n - 1] - x[1:]) * heights, dtype=F32)))

    def _interpolate_pr_auc(self, tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> Any:
        n = self.num_thresholds
        dtp = tp[: n - 1] - tp[1:]
        p = tp + fp
        dp = p[: n - 1] - p[1:]
        prec_slope = _divide_no_nan(dtp, np.maximum(dp, 0))
        intercept = tp[1:] - prec_slope * p[1:]
        safe_p_ratio = np.where((p[: n - 1] > 0) & (p[1:] > 0),
                                _divide_no_nan(p[: n - 1], np.maximum(p[1:], 0)),
                                np.ones_like(p[1:]))
        pr_auc_increment = _divide_no_nan(
            prec_slope * (dtp + intercept * np.log(safe_p_ratio)),
            np.maximum(tp[1:] + fn[1:], 0))
        return np.sum(pr_auc_increment, dtype=F32)


class _Counter(_Confusion):
    """One confusion-matrix count at ``thresholds`` (Keras's ``accumulator``)."""

    _which = ""

    def __init__(self, thresholds: Any = None, name: str | None = None,
                 dtype: Any = None) -> None:
        super().__init__(thresholds, name or auto_name(_snake(type(self).__name__)), dtype, ())
        self.accumulator = self.add_variable(shape=(len(self._th),), name="accumulator")
        setattr(self, self._which, self.accumulator)  # the count _Confusion updates
        self._counters = (self._which,)

    def result(self) -> Tensor:
        return self._squeeze(self.accumulator._data)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "thresholds": self.thresholds}


class TruePositives(_Counter):
    """The (weighted) count of positives predicted positive (``y_pred > threshold``).

    >>> import tapegrad.tf as tf
    >>> m = tf.keras.metrics.TruePositives(); m.update_state([0, 1, 1, 1], [1, 0, 1, 1])
    >>> float(m.result())
    2.0
    """

    _which = "true_positives"


class FalsePositives(_Counter):
    """The (weighted) count of negatives predicted positive.

    >>> import tapegrad.tf as tf
    >>> m = tf.keras.metrics.FalsePositives(); m.update_state([0, 1, 0, 0], [0, 0, 1, 1])
    >>> float(m.result())
    2.0
    """

    _which = "false_positives"


class TrueNegatives(_Counter):
    """The (weighted) count of negatives predicted negative."""

    _which = "true_negatives"


class FalseNegatives(_Counter):
    """The (weighted) count of positives predicted negative."""

    _which = "false_negatives"


class FBetaScore(Metric):
    """The F-beta score per class (``average=None``) or averaged ("micro", "macro",
    "weighted"), from 2-D ``(batch, classes)`` inputs; predictions count as positive at
    their row maximum (``threshold=None``) or above ``threshold``.

    >>> import tapegrad.tf as tf
    >>> m = tf.keras.metrics.FBetaScore(beta=2.0, threshold=0.5)
    >>> m.update_state([[1, 0], [0, 1]], [[0.9, 0.2], [0.6, 0.4]])
    >>> m.result().numpy().round(4)
    array([0.8333, 0.    ], dtype=float32)
    """

    true_positives: KerasVariable
    false_positives: KerasVariable
    false_negatives: KerasVariable
    intermediate_weights: KerasVariable

    def __init__(self, average: Any = None, beta: float = 1.0, threshold: Any = None,
                 name: str = "fbeta_score", dtype: Any = None) -> None:
        super().__init__(dtype=dtype, name=name)
        if average not in (None, "micro", "macro", "weighted"):
            raise hinted(ValueError(with_hint(
                "Invalid `average` argument value. Expected one of: {None, 'micro', 'macro', "
                f"'weighted'}}. Received: average={average}",
                "average is None, 'micro', 'macro' or 'weighted'")))
        if not isinstance(beta, float):
            raise hinted(ValueError(with_hint(
                "Invalid `beta` argument value. It should be a Python float. "
                f"Received: beta={beta} of type '{type(beta)}'", "write beta as a float")))
        if beta <= 0.0:
            raise hinted(ValueError(with_hint(
                f"Invalid `beta` argument value. It should be > 0. Received: beta={beta}",
                "beta weighs recall against precision: a positive float")))
        if threshold is not None:
            if not isinstance(threshold, float):
                raise hinted(ValueError(with_hint(
                    "Invalid `threshold` argument value. It should be a Python float. "
                    f"Received: threshold={threshold} of type '{type(threshold)}'",
                    "write threshold as a float")))
            if threshold > 1.0 or threshold <= 0.0:
                raise hinted(ValueError(with_hint(
                    "Invalid `threshold` argument value. It should verify 0 < threshold <= 1. "
                    f"Received: threshold={threshold}", "threshold is in (0, 1]")))
        self.average = average
        self.beta = beta
        self.threshold = threshold
        self.axis = None if average == "micro" else 0
        self._built = False

    def _build(self, t_shape: tuple[int, ...], p_shape: tuple[int, ...]) -> None:
        if len(p_shape) != 2 or len(t_shape) != 2:
            raise hinted(ValueError(with_hint(
                "FBetaScore expects 2D inputs with shape (batch_size, output_dim). Received input shapes: "
                f"y_pred.shape={p_shape} and y_true.shape={t_shape}.",
                "one row of class scores per sample")))
        shape = (p_shape[-1],) if self.average != "micro" else ()
        for n in ("true_positives", "false_positives", "false_negatives",
                  "intermediate_weights"):
            setattr(self, n, self.add_variable(shape=shape, name=n))
        self._built = True

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        t = _arr(y_true, F32)
        p = _arr(y_pred, F32)
        if not self._built:
            self._build(tuple(t.shape), tuple(p.shape))
        if self.threshold is None:
            pos = (p >= np.max(p, axis=-1, keepdims=True)) & (np.abs(p) > F32(1e-9))
        else:
            pos = p > F32(self.threshold)
        pp = pos.astype(F32)
        sw = None if sample_weight is None else _arr(sample_weight, F32)

        def wsum(v: np.ndarray) -> np.ndarray:
            if sw is not None:
                v = (v * np.expand_dims(sw, 1)).astype(F32)
            return np.asarray(np.sum(v, axis=self.axis, dtype=F32))

        one = F32(1)
        self.true_positives.assign(self.true_positives._data + wsum(pp * t))
        self.false_positives.assign(self.false_positives._data + wsum(pp * (one - t)))
        self.false_negatives.assign(self.false_negatives._data + wsum((one - pp) * t))
        self.intermediate_weights.assign(self.intermediate_weights._data + wsum(t))

    def result(self) -> Tensor:
        if not self._built:
            raise hinted(ValueError(with_hint(
                f"{type(self).__name__} has no state yet", "call update_state first")))
        eps = F32(1e-7)
        tp = self.true_positives._data
        precision = (tp / (tp + self.false_positives._data + eps)).astype(F32)
        recall = (tp / (tp + self.false_negatives._data + eps)).astype(F32)
        b2 = F32(self.beta ** 2)
        mean = ((precision * recall) / ((b2 * precision + recall) + eps)).astype(F32)
        f = (mean * (F32(1) + b2)).astype(F32)
        if self.average == "weighted":
            iw = self.intermediate_weights._data
            w = (iw / (np.sum(iw, dtype=F32) + eps)).astype(F32)
            f = np.sum(f * w, dtype=F32)
        elif self.average is not None:
            f = np.mean(f, dtype=F32)
        return tft(np.asarray(f, F32))

    def reset_state(self) -> None:
        for v in self._variables:
            v.assign(np.zeros(v._data.shape, F32))

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, "dtype": self._dtype, "average": self.average,
                "beta": self.beta, "threshold": self.threshold}


class F1Score(FBetaScore):
    """The F1 score (``FBetaScore`` with ``beta=1``).

    >>> import tapegrad.tf as tf
    >>> m = tf.keras.metrics.F1Score(threshold=0.5)
    >>> m.update_state([[1, 0], [0, 1]], [[0.9, 0.2], [0.6, 0.7]])
    >>> m.result().numpy().round(4)
    array([0.6667, 1.    ], dtype=float32)
    """

    def __init__(self, average: Any = None, threshold: Any = None, name: str = "f1_score",
                 dtype: Any = None) -> None:
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name,
                         dtype=dtype)

    def get_config(self) -> dict[str, Any]:
        cfg = super().get_config()
        del cfg["beta"]
        return cfg


class R2Score(Metric):
    """The coefficient of determination per output, averaged (``"uniform_average"``,
    ``"variance_weighted_average"``) or not (``None``); ``num_regressors`` adjusts it.

    >>> import tapegrad.tf as tf
    >>> m = tf.keras.metrics.R2Score()
    >>> m.update_state([[1.0], [2.0], [3.0]], [[1.0], [2.0], [4.0]])
    >>> float(m.result())
    0.5
    """

    squared_sum: KerasVariable
    sum: KerasVariable
    total_mse: KerasVariable
    count: KerasVariable

    def __init__(self, class_aggregation: Any = "uniform_average", num_regressors: int = 0,
                 name: str = "r2_score", dtype: Any = None) -> None:
        super().__init__(dtype=dtype, name=name)
        valid = (None, "uniform_average", "variance_weighted_average")
        if class_aggregation not in valid:
            raise hinted(ValueError(with_hint(
                "Invalid value for argument `class_aggregation`. Expected one of "
                f"{valid}. Received: class_aggregation={class_aggregation}",
                "use 'uniform_average' (the default)")))
        if num_regressors < 0:
            raise hinted(ValueError(with_hint(
                "Invalid value for argument `num_regressors`. Expected a value >= 0. "
                f"Received: num_regressors={num_regressors}", "num_regressors counts inputs")))
        self.class_aggregation = class_aggregation
        self.num_regressors = num_regressors
        self.num_samples = self.add_variable(shape=(), name="num_samples")
        self._built = False

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        t = _arr(y_true, F32)
        p = _arr(y_pred, F32)
        t, p = _same_rank(t, p)
        if not self._built:
            if p.ndim != 2 or t.ndim != 2:
                raise hinted(ValueError(with_hint(
                    "R2Score expects 2D inputs with shape (batch_size, output_dim). Received "
                    f"input shapes: y_pred.shape={tuple(p.shape)} and "
                    f"y_true.shape={tuple(t.shape)}.", "one row of outputs per sample")))
            n = p.shape[-1]
            self.squared_sum = self.add_variable(shape=(n,), name="squared_sum")
            self.sum = self.add_variable(shape=(n,), name="sum")
            self.total_mse = self.add_variable(shape=(n,), name="residual")
            self.count = self.add_variable(shape=(n,), name="count")
            self._built = True
        sw = np.asarray(F32(1) if sample_weight is None else _arr(sample_weight, F32))
        if sw.ndim == 1:
            sw = sw[:, None]
        sw = np.broadcast_to(sw, t.shape).astype(F32)
        wt = (t * sw).astype(F32)
        self.sum.assign(self.sum._data + np.sum(wt, axis=0, dtype=F32))
        self.squared_sum.assign(self.squared_sum._data + np.sum(t * wt, axis=0, dtype=F32))
        self.total_mse.assign(self.total_mse._data +
                              np.sum(np.square(t - p) * sw, axis=0, dtype=F32))
        self.count.assign(self.count._data + np.sum(sw, axis=0, dtype=F32))
        self.num_samples.assign(self.num_samples._data + F32(t.size))

    def result(self) -> Tensor:
        import warnings

        if not self._built:
            raise hinted(ValueError(with_hint("R2Score has no state yet",
                                              "call update_state first")))
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = (self.sum._data / self.count._data).astype(F32)
            total = (self.squared_sum._data - self.sum._data * mean).astype(F32)
            raw = (F32(1) - self.total_mse._data / total).astype(F32)
        raw = np.where(np.isinf(raw), F32(0), raw).astype(F32)
        if self.class_aggregation == "uniform_average":
            r2: Any = np.mean(raw, dtype=F32)
        elif self.class_aggregation == "variance_weighted_average":
            with np.errstate(divide="ignore", invalid="ignore"):
                r2 = F32(np.sum(total * raw, dtype=F32) / np.sum(total, dtype=F32))
        else:
            r2 = raw
        if self.num_regressors != 0:
            ns = float(self.num_samples._data)
            if self.num_regressors > ns - 1:
                warnings.warn("More independent predictors than datapoints in adjusted R2 "
                              "score. Falling back to standard R2 score.", stacklevel=2)
            elif self.num_regressors == ns - 1:
                warnings.warn("Division by zero in Adjusted R2 score. Falling back to "
                              "standard R2 score.", stacklevel=2)
            else:
                n, k = F32(ns), F32(self.num_regressors)
                r2 = F32(1) - ((F32(1) - r2) * (n - F32(1))) / ((n - k) - F32(1))
        return tft(np.asarray(r2, F32))

    def reset_state(self) -> None:
        for v in self._variables:
            v.assign(np.zeros(v._data.shape, F32))

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, "dtype": self._dtype,
                "class_aggregation": self.class_aggregation,
                "num_regressors": self.num_regressors}


# ---------------------------------------------------------------------------- lookup
_TABLE: dict[str, Callable[[], Metric]] = {
    "accuracy": Accuracy, "acc": Accuracy, "binary_accuracy": BinaryAccuracy,
    "categorical_accuracy": CategoricalAccuracy,
    "sparse_categorical_accuracy": SparseCategoricalAccuracy,
    "mean_squared_error": MeanSquaredError, "mse": MeanSquaredError,
    "mean_absolute_error": MeanAbsoluteError, "mae": MeanAbsoluteError,
    "auc": AUC, "precision": Precision, "recall": Recall,
    "mean_absolute_percentage_error": MeanAbsolutePercentageError,
    "mape": MeanAbsolutePercentageError,
    "mean_squared_logarithmic_error": MeanSquaredLogarithmicError,
    "msle": MeanSquaredLogarithmicError, "root_mean_squared_error": RootMeanSquaredError,
    "top_k_categorical_accuracy": TopKCategoricalAccuracy,
    "sparse_top_k_categorical_accuracy": SparseTopKCategoricalAccuracy,
    "binary_crossentropy": BinaryCrossentropy,
    "categorical_crossentropy": CategoricalCrossentropy,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "cosine_similarity": CosineSimilarity, "kl_divergence": KLDivergence,
    "hinge": Hinge, "squared_hinge": SquaredHinge, "categorical_hinge": CategoricalHinge,
    "poisson": Poisson, "r2_score": R2Score, "f1_score": F1Score,
    "true_positives": TruePositives, "true_negatives": TrueNegatives,
    "false_positives": FalsePositives, "false_negatives": FalseNegatives,
}


def get(identifier: Any) -> Any:
    """A metric from a name (``"mae"``, ``"auc"``...), a class, a metric or a function."""
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if callable(identifier):
        return identifier
    cls = _TABLE.get(str(identifier).lower())
    named = globals().get(str(identifier))  # a class name, as Keras deserializes it
    if cls is None and isinstance(named, type) and issubclass(named, Metric) and \
            not str(identifier).startswith("_") and named is not Metric:
        cls = named
    if cls is None:
        raise hinted(ValueError(with_hint(f"Could not interpret metric identifier: {identifier}",
                                   f"known names: {', '.join(sorted(_TABLE))}")))
    return cls()


# the functional metrics Keras keeps under these names (the losses' per-sample functions)
from .losses import (  # noqa: E402
    binary_crossentropy,
    binary_focal_crossentropy,
    categorical_crossentropy,
    categorical_hinge,
    hinge,
    huber,
    kl_divergence,
    log_cosh,
    mean_absolute_error,
    mean_absolute_percentage_error,
    mean_squared_error,
    mean_squared_logarithmic_error,
    poisson,
    sparse_categorical_crossentropy,
    squared_hinge,
)

mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
kld = KLD = kullback_leibler_divergence = kl_divergence
msle = MSLE = mean_squared_logarithmic_error
mape = MAPE = mean_absolute_percentage_error
logcosh = log_cosh
__all__ += ["mean_squared_error", "mean_absolute_error", "mse", "MSE", "mae", "MAE",
            "binary_crossentropy", "binary_focal_crossentropy", "categorical_crossentropy",
            "sparse_categorical_crossentropy", "hinge", "squared_hinge", "categorical_hinge",
            "huber", "kl_divergence", "log_cosh", "poisson", "mean_absolute_percentage_error",
            "mean_squared_logarithmic_error", "kld", "KLD", "msle", "MSLE", "mape", "MAPE",
            "logcosh", "kullback_leibler_divergence", "TruePositives", "TrueNegatives", "FalsePositives", "FalseNegatives",
            "CosineSimilarity", "KLDivergence", "Hinge", "SquaredHinge", "CategoricalHinge",
            "LogCoshError", "Poisson", "R2Score", "F1Score", "FBetaScore"]


def _tensor_result(fn: Callable[..., np.ndarray]) -> Callable[..., Tensor]:
    """The public per-sample function: a tensor, as Keras returns (the metrics use the
    arrays of ``fn`` itself, its ``_values``)."""
    import functools

    @functools.wraps(fn)
    def public(*args: Any, **kwargs: Any) -> Tensor:
        return tft(fn(*args, **kwargs))

    public._values = fn  # type: ignore[attr-defined]
    return public


accuracy = _tensor_result(accuracy)  # type: ignore[assignment]
binary_accuracy = _tensor_result(binary_accuracy)  # type: ignore[assignment]
categorical_accuracy = _tensor_result(categorical_accuracy)  # type: ignore[assignment]
sparse_categorical_accuracy = _tensor_result(sparse_categorical_accuracy)  # type: ignore[assignment]
top_k_categorical_accuracy = _tensor_result(top_k_categorical_accuracy)  # type: ignore[assignment]
sparse_top_k_categorical_accuracy = _tensor_result(sparse_top_k_categorical_accuracy)  # type: ignore[assignment]
