"""Keras 3's training loop: ``compile``, ``fit``, ``evaluate``, ``predict`` and friends.

:class:`Trainer` is mixed into ``keras.Model``.  It follows Keras 3's
TensorFlow-backend trainer step by step, so that a model trained with
``shuffle=False`` from the same weights gives the same history as real
Keras:

- ``train_step`` runs the model under a ``GradientTape``, computes the
  compiled loss, updates the ``loss`` tracker (a ``Mean`` weighted by the
  batch size), applies the gradients and updates the compiled metrics;
  override it (and ``test_step``/``predict_step``) as in Keras.
- Metrics are reset at the start of every epoch (and of ``evaluate``,
  ``train_on_batch``, ``test_on_batch``); the epoch logs are the metrics'
  results, sorted by name, with ``val_``-prefixed validation results.
- Array inputs are sliced into batches (``batch_size`` 32 by default,
  floating data as float32); ``validation_split`` keeps the last fraction
  of the samples (taken before shuffling); a ``tf.data.Dataset`` yields
  batches ``x``, ``(x, y)`` or ``(x, y, sample_weight)``.

``shuffle=True`` on arrays gives Keras's orders: its array adapter permutes with
``tf.random.shuffle`` in a ``tf.data`` map function traced when ``fit`` starts,
so the ``RandomShuffle`` kernel has the global seed of that moment and op seed 0
(graph op seeds count from 0), and each epoch's new iterator makes a new kernel:
with a seed set, every epoch of one ``fit`` repeats the same permutation;
``shuffle="batch"`` permutes inside each batch, one kernel for the epoch.

Where tapegrad knowingly differs: ``steps_per_execution`` and ``jit_compile``
are accepted and ignored (everything runs eagerly).
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..._core.errors import hinted, with_hint
from ..._core.tensor import Tensor
from .. import _philox
from .. import random as _random
from .._tensor import VariableBase, read, tft
from ..tape import GradientTape
from . import callbacks as callbacks_module
from . import losses as losses_module
from . import metrics as metrics_module
from . import optimizers as optimizers_module

__all__ = ["Trainer", "CompileMetrics", "CompileLoss", "unpack_x_y_sample_weight",
           "pack_x_y_sample_weight"]


# ---------------------------------------------------------------------------- data
def unpack_x_y_sample_weight(data: Any) -> tuple[Any, Any, Any]:
    """``(x, y, sample_weight)`` from a batch ``x``, ``(x,)``, ``(x, y)`` or ``(x, y, sw)``."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if len(data) == 1:
        return data[0], None, None
    if len(data) == 2:
        return data[0], data[1], None
    if len(data) == 3:
        return data[0], data[1], data[2]
    raise hinted(ValueError(with_hint(
        "Data is expected to be in format `x`, `(x,)`, `(x, y)`, or `(x, y, sample_weight)`, "
        f"found: {data}", "yield at most three parts per batch")))


def pack_x_y_sample_weight(x: Any, y: Any = None, sample_weight: Any = None) -> Any:
    """The batch as ``train_step`` receives it (Keras's packing)."""
    if y is None:
        return x if not isinstance(x, (tuple, list)) else (x,)
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)


def _map(fn: Callable[[Any], Any], x: Any) -> Any:
    if x is None:
        return None
    if isinstance(x, dict):
        return {k: _map(fn, v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_map(fn, v) for v in x)
    return fn(x)


def _wrap(elem: Any) -> Any:
    """A dataset element (a nest of ndarrays) as tensors; ``(x, y)`` arrays directly."""
    if type(elem) is tuple and all(type(a) is np.ndarray for a in elem):
        return tuple([tft(a) for a in elem])
    return _map(tft, elem)


def _leaves(x: Any) -> list[Any]:
    if x is None:
        return []
    if isinstance(x, dict):
        return [v for k in x for v in _leaves(x[k])]
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in _leaves(item)]
    return [x]


def _as_array(x: Any) -> np.ndarray:
    if isinstance(x, Tensor):
        x = (read(x) if isinstance(x, VariableBase) else x)._data
    a = np.asarray(x)
    if a.dtype == np.float64:  # Keras feeds floating data as floatx (float32)
        a = a.astype(np.float32)
    return a


def _is_dataset(x: Any) -> bool:
    from ..data import Dataset

    return isinstance(x, Dataset)


def _is_array_like(x: Any) -> bool:
    return isinstance(x, (np.ndarray, Tensor)) or (
        isinstance(x, (list, tuple)) and bool(x) and not isinstance(x[0], (list, tuple, dict))
        and np.ndim(x[0]) == 0)


def _standardize(x: Any) -> Any:
    """Arrays for the leaves of ``x``; a list of numbers is one array (not one input each)."""
    if x is None:
        return None
    if isinstance(x, dict):
        return {k: _standardize(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)) and not _is_array_like(x):
        return type(x)(_standardize(v) for v in x)
    return _as_array(x)


def class_weight_to_sample_weights(y: Any, class_weight: dict[int, float]) -> np.ndarray:
    """Keras's per-sample weights from ``class_weight`` (labels, or one-hot rows)."""
    yn = np.asarray(y._data if isinstance(y, Tensor) else y)
    sw = np.ones((yn.shape[0],), dtype=np.float32)
    if yn.ndim > 1:
        yn = np.argmax(yn, axis=-1) if yn.shape[-1] != 1 else np.squeeze(yn, axis=-1)
    labels = np.round(yn).astype("int32")
    for i, c in enumerate(labels):
        sw[i] = class_weight.get(int(c), 1.0)
    return sw


class _Epochs:
    """Batches for ``fit``/``evaluate``/``predict`` from arrays or a ``tf.data.Dataset``."""

    def __init__(self, x: Any, y: Any = None, sample_weight: Any = None,
                 batch_size: int | None = None, steps_per_epoch: int | None = None,
                 shuffle: Any = False, class_weight: dict[int, float] | None = None) -> None:
        if class_weight is not None and sample_weight is not None:
            raise hinted(ValueError(with_hint(
                "You cannot `class_weight` and `sample_weight` at the same time.",
                "fold the class weights into sample_weight yourself, or pass one of them")))
        self._class_weight = class_weight
        self._generator: Iterator[Any] | None = \
            x if hasattr(x, "__next__") and not _is_dataset(x) else None
        self._dataset = x if _is_dataset(x) else None
        self._steps_arg = steps_per_epoch
        self._held: Iterator[Any] | None = None
        self.num_batches: int | None
        if self._generator is not None:  # a Python generator of batches
            if y is not None:
                raise hinted(ValueError(with_hint(
                    "When providing `x` as a generator, `y` should not be passed. Instead, "
                    "the generator should yield `(x, y)` batches.", "yield (x, y) pairs")))
            self.num_batches = steps_per_epoch
            return
        if self._dataset is not None:
            if y is not None:
                raise hinted(ValueError(with_hint(
                    "When providing `x` as a tf.data.Dataset, `y` should not be passed. "
                    "Instead, the targets should be included as part of the Dataset `x`.",
                    "make the dataset yield (x, y) pairs")))
            if shuffle:  # fit's default shuffle=True: Keras says so for every dataset
                warnings.warn(
                    "`shuffle=True` was passed, but will be ignored since the data `x` was "
                    "provided as a tf.data.Dataset. The Dataset is expected to already be "
                    "shuffled (via `.shuffle(buffer_size)`).", UserWarning, stacklevel=3)
            card = int(self._dataset._card)
            self._known: int | None = card if card >= 0 else None  # Keras' _num_batches
            self._seen = 0
            self.num_batches = steps_per_epoch if steps_per_epoch is not None else self._known
            return
        for name, value in (("x", x), ("y", y), ("sample_weight", sample_weight)):
            _check_data(name, value)
        self.x = _standardize(x)
        self.y = _standardize(y)
        self.sw = _standardize(sample_weight)
        leaves = _leaves(self.x)
        if not leaves:
            raise hinted(ValueError(with_hint("Unrecognized data type: x=None",
                                       "pass arrays, tensors or a tf.data.Dataset")))
        self.n = int(leaves[0].shape[0])
        for a in leaves + _leaves(self.y) + _leaves(self.sw):
            if int(a.shape[0]) != self.n:
                sizes = sorted({int(b.shape[0]) for b in leaves + _leaves(self.y)})
                raise hinted(ValueError(with_hint(
                    f"Data cardinality is ambiguous. Make sure all arrays contain the same "
                    f"number of samples.'x' sizes: {self.n}\n'y' sizes: {sizes[-1]}",
                    "x, y and sample_weight need the same number of rows")))
        self.batch_size = 32 if batch_size is None else int(batch_size)
        self.shuffle = shuffle
        # Keras shuffles arrays in a tf.data map function traced when fit starts: its
        # RandomShuffle takes the global seed of that moment and op seed 0
        self._shuffle_seeds = _graph_op_seeds() if shuffle else None
        full = math.ceil(self.n / self.batch_size)
        steps = full if steps_per_epoch is None else int(steps_per_epoch)
        self.num_batches = steps
        self._full = full
        # Keras's epoch iterator: with ``steps_per_epoch`` a pass over the arrays goes on
        # into the next epoch, and a new pass (a new dataset iterator) starts once one ends
        self._pass_pos = 0
        self._pass: list[Any] | None = None

    def epoch(self) -> Iterator[Any]:
        """One epoch of batches, packed as ``train_step`` receives them."""
        cw = self._class_weight
        for batch in self._batches():
            if cw is not None:
                x, y, _ = unpack_x_y_sample_weight(batch)
                if y is not None:
                    batch = (x, y, tft(class_weight_to_sample_weights(y, cw)))
            yield batch

    def _batches(self) -> Iterator[Any]:
        gen = self._generator
        if gen is not None:
            count = 0
            while self._steps_arg is None or count < int(self._steps_arg):
                try:
                    elem = next(gen)
                except StopIteration:
                    return
                count += 1
                yield _map(lambda a: tft(_as_array(a)), elem)
            return
        if self._dataset is not None:
            yield from map(_wrap, self._dataset_epoch(self._dataset))
            return
        if self._steps_arg is None or self._pass is None:
            self._pass_pos = 0
            self._pass = self._new_pass()
        order, _ = self._pass
        for _step in range(self.num_batches or 0):
            b = self._pass_pos
            if b >= self._full:
                if self._steps_arg is not None:
                    warnings.warn(_RAN_OUT, UserWarning, stacklevel=2)
                break
            self._pass_pos = b + 1
            lo, hi = b * self.batch_size, min((b + 1) * self.batch_size, self.n)
            sel: Any = slice(lo, hi) if order is None else order[lo:hi]
            kernel = self._pass[1]
            if kernel is not None:  # shuffle="batch": within each batch
                sel = np.arange(lo, hi)[_philox.shuffle_permutation(kernel, hi - lo)]
                if hi - lo > 1:  # the kernel reserves its words (none for a single row)
                    self._pass[1] = kernel.skip((hi - lo - 1 + 3) // 4)

            def take(a: np.ndarray, sel: Any = sel) -> Any:
                return tft(a[sel])
            yield pack_x_y_sample_weight(_map(take, self.x), _map(take, self.y),
                                         _map(take, self.sw))
        if self._pass_pos >= self._full:
            self._pass = None

    def _dataset_epoch(self, ds: Any) -> Iterator[Any]:
        """One epoch of a ``tf.data.Dataset`` as Keras 3's ``EpochIterator`` reads it.

        With a known length (the dataset's cardinality, or ``steps_per_epoch``) Keras
        makes a new iterator at each epoch's start (without ``steps_per_epoch``) and
        another when the epoch has read that many batches, so a reshuffling dataset
        moves on two orders per epoch; with ``steps_per_epoch`` the iterator made at
        the end is the next epoch's.  Running out of data warns, and an unknown length
        becomes the steps seen by then (one more than the batches).
        """
        steps = self._steps_arg or self._known or -1
        if steps > 0:
            if self._held is None or self._steps_arg is None:
                self._held = ds._iterator()
                self._seen = 0
            for _ in range(steps):
                if self._known and self._seen >= self._known:
                    if self._steps_arg:
                        warnings.warn(_RAN_OUT, UserWarning, stacklevel=3)
                    break
                self._seen += 1
                try:
                    elem = next(self._held)
                except StopIteration:
                    self._ran_out()
                    return
                yield elem
            if self._known and self._seen >= self._known:
                self._held = ds._iterator()
                self._seen = 0
            return
        it = ds._iterator()
        while True:
            self._seen += 1
            try:
                elem = next(it)
            except StopIteration:
                self._ran_out()
                return
            yield elem

    def _ran_out(self) -> None:
        """Keras' ``catch_stop_iteration``: the length is now known, and it warns."""
        if self._known is None:
            self._known = self._seen
        warnings.warn(_RAN_OUT, UserWarning, stacklevel=4)
        self._held = None

    def _new_pass(self) -> list[Any]:
        """``[order, kernel]`` of a new pass: each is a new iterator of Keras's dataset, so a
        fresh RandomShuffle kernel; the order for ``shuffle=True``, the kernel (going on
        from batch to batch) for ``"batch"``, neither without shuffling."""
        if not self.shuffle:
            return [None, None]
        kernel = _shuffle_kernel(self._shuffle_seeds)
        if self.shuffle == "batch":
            return [None, kernel]
        return [_philox.shuffle_permutation(kernel, self.n), None]


_RAN_OUT = ("Your input ran out of data; interrupting training. Make sure that your dataset "
            "or generator can generate at least `steps_per_epoch * epochs` batches. You may "
            "need to use the `.repeat()` function when building your dataset.")


def _graph_op_seeds() -> tuple[int, int] | None:
    """``get_seed(None)`` for the first random op of a new graph: ``(global seed, 0)``
    (``(0, 2**31 - 1)`` for global seed 0); ``None`` when no global seed is set."""
    g = _random._CONTEXT["seed"]
    if g is None:
        return None
    s1 = int(g) % _random._MAXINT32
    return (s1, 0) if s1 else (0, _random._MAXINT32)


def _shuffle_kernel(seeds: tuple[int, int] | None) -> _philox.Philox:
    """A new ``RandomShuffle`` kernel's Philox stream: from its seeds, or (no seed set)
    from fresh entropy, as TensorFlow seeds a kernel whose seeds are both 0."""
    if seeds is None:
        return _philox.Philox.from_seeds(_random._nondeterministic64(),
                                         _random._nondeterministic64())
    return _philox.Philox.from_seeds(*seeds)


def _check_data(name: str, value: Any) -> None:
    """Keras accepts arrays/tensors and lists or dicts of them, not raw Python numbers."""
    def ok(v: Any) -> bool:
        if isinstance(v, (np.ndarray, Tensor)):
            return True
        if isinstance(v, dict):
            return all(ok(u) for u in v.values())
        if isinstance(v, (list, tuple)):
            return bool(v) and all(ok(u) for u in v)
        return False

    if value is not None and not ok(value):
        raise hinted(ValueError(with_hint(
            f"Unrecognized data type: {name}={value!r} (of type {type(value)})",
            "pass NumPy arrays or tensors (np.asarray(your_list))")))


def _split(arrays: Any, validation_split: float) -> tuple[Any, Any]:
    """Keras's train_validation_split: the last ``validation_split`` of the samples."""
    leaves = [a for a in _leaves(arrays) if a is not None]
    n = int(leaves[0].shape[0])
    split_at = int(math.floor(n * (1.0 - validation_split)))
    if split_at == 0 or split_at == n:
        raise hinted(ValueError(with_hint(
            f"Training data contains {n} samples, which is not sufficient to split it into "
            f"a validation and training set as specified by `validation_split={validation_split}"
            "`. Either provide more data, or a different value for the `validation_split` "
            "argument.", "use more samples or a different split")))
    return (_map(lambda a: a[:split_at], arrays), _map(lambda a: a[split_at:], arrays))


def _batch_size_of(x: Any) -> int:
    leaves = _leaves(x)
    return int(leaves[0]._data.shape[0]) if leaves and isinstance(leaves[0], Tensor) else \
        int(np.shape(leaves[0])[0]) if leaves else 1


# ---------------------------------------------------------------------------- compile
def _is_binary_or_sparse(y_true: Any, y_pred: Any) -> tuple[bool, bool]:
    ts, ps = np.shape(_as_array(y_true)), np.shape(_as_array(y_pred))
    is_binary = bool(ps) and ps[-1] == 1
    is_sparse = len(ts) < len(ps) or (bool(ts) and ts[-1] == 1 and bool(ps) and ps[-1] > 1)
    return is_binary, is_sparse


def _get_metric(identifier: Any, y_true: Any, y_pred: Any) -> metrics_module.Metric:
    if identifier is None:
        raise hinted(ValueError(with_hint("Expected metric, received `None`",
                                   "remove None from the metrics list")))
    if str(identifier).lower() in ("accuracy", "acc"):
        binary, sparse = _is_binary_or_sparse(y_true, y_pred)
        name = str(identifier)
        if binary:
            m: Any = metrics_module.BinaryAccuracy(name=name)
        elif sparse:
            m = metrics_module.SparseCategoricalAccuracy(name=name)
        else:
            m = metrics_module.CategoricalAccuracy(name=name)
        return m
    m = metrics_module.get(identifier)
    if isinstance(identifier, str):
        name = identifier
    else:
        name = str(getattr(m, "name", None) or getattr(m, "__name__", type(m).__name__))
    if not isinstance(m, metrics_module.Metric):
        m = metrics_module.MeanMetricWrapper(m, name=name)
    m.name = name
    return m


class CompileMetrics(metrics_module.Metric):
    """The metrics given to ``compile``, built on the first batch (``"accuracy"`` picks
    binary, categorical or sparse accuracy from the shapes, as Keras does)."""

    def __init__(self, metrics: Any, output_names: list[str] | None = None,
                 weighted_metrics: Any = None) -> None:
        super().__init__(name="compile_metrics")
        self._spec = metrics
        self._weighted_spec = weighted_metrics
        self._output_names = output_names or []
        self._flat: list[tuple[int | None, metrics_module.Metric]] = []
        # ``metrics`` ignore sample weights (and class weights); ``weighted_metrics`` use them
        self._weighted: list[metrics_module.Metric] = []
        self.built = False

    @property
    def metrics(self) -> list[metrics_module.Metric]:
        return [m for _, m in self._flat] + self._weighted

    @property
    def variables(self) -> list[Any]:
        return [v for m in self.metrics for v in m.variables]

    def build(self, y_true: Any, y_pred: Any) -> None:
        spec = [] if self._spec is None else self._spec
        multi = isinstance(y_pred, (list, tuple, dict)) and len(_leaves(y_pred)) > 1
        ws = self._weighted_spec
        if ws is not None and not multi:
            for w in ws if isinstance(ws, (list, tuple)) else [ws]:
                metric = _get_metric(w, y_true, y_pred)
                self._weighted.append(metric)
        names = self._output_names
        if not multi:
            for m in spec if isinstance(spec, (list, tuple)) else [spec]:
                self._flat.append((None, _get_metric(m, y_true, y_pred)))
            plain = {m.name for _, m in self._flat}
            for metric in self._weighted:
                if metric.name in plain:
                    metric.name = "weighted_" + metric.name
        else:
            preds = list(y_pred.values()) if isinstance(y_pred, dict) else list(y_pred)
            trues = list(y_true.values()) if isinstance(y_true, dict) else list(y_true)
            if isinstance(spec, dict):
                per = [spec.get(n) for n in names]
            elif isinstance(spec, (list, tuple)) and spec and \
                    all(isinstance(s, (list, tuple)) or s is None for s in spec):
                per = list(spec)
            else:
                raise hinted(ValueError(with_hint(
                    "For a model with multiple outputs, when providing the `metrics` "
                    "argument as a list, it should have as many entries as the model has "
                    f"outputs. Received:\nmetrics={spec}\nof length {len(spec)} whereas the "
                    f"model has {len(preds)} outputs.",
                    "give one list of metrics per output (or a dict by output name)")))
            for i, ms in enumerate(per):
                for m in ([] if ms is None else ms if isinstance(ms, (list, tuple)) else [ms]):
                    metric = _get_metric(m, trues[i], preds[i])
                    if i < len(names):
                        metric.name = f"{names[i]}_{metric.name}"
                    self._flat.append((i, metric))
        self.built = True

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        if not self.built:
            self.build(y_true, y_pred)
        for i, m in self._flat:
            if i is None:
                m.update_state(y_true, y_pred)
            else:
                t = list(y_true.values())[i] if isinstance(y_true, dict) else y_true[i]
                p = list(y_pred.values())[i] if isinstance(y_pred, dict) else y_pred[i]
                m.update_state(t, p)
        for m in self._weighted:
            m.update_state(y_true, y_pred, sample_weight=sample_weight)

    def reset_state(self) -> None:
        for m in self.metrics:
            m.reset_state()

    def result(self) -> dict[str, Any]:
        return {m.name: m.result() for m in self.metrics}


class _FunctionLoss(losses_module.Loss):
    """A plain loss function under Keras's default ``sum_over_batch_size`` reduction."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__(name=getattr(fn, "__name__", "loss"))
        self._fn = fn

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return self._fn(y_true, y_pred)


def _get_loss(identifier: Any) -> Any:
    if identifier is None:
        return None
    if isinstance(identifier, losses_module.Loss):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, losses_module.Loss):
        return identifier()
    if callable(identifier):
        return _FunctionLoss(identifier)
    found = losses_module.get(identifier)  # a Loss, or (Keras's "huber", "kld" ...) a function
    return found if isinstance(found, losses_module.Loss) else _FunctionLoss(found)


class CompileLoss:
    """The compiled loss: one loss, or one per output summed with ``loss_weights``."""

    def __init__(self, loss: Any, loss_weights: Any = None,
                 output_names: list[str] | None = None) -> None:
        self._spec = loss
        self._weights = loss_weights
        self._names = output_names or []
        # one ``<output>_loss`` tracker per output of a multi-output model (Keras 3)
        self.metrics: list[metrics_module.Mean] = []
        if len(self._names) > 1:
            self.metrics = [metrics_module.Mean(name=f"{n}_loss") for n in self._names]

    def __call__(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        from ... import ops

        multi = not isinstance(y_pred, Tensor) and \
            isinstance(y_pred, (list, tuple, dict)) and len(_leaves(y_pred)) > 1
        if not multi:
            fn = self.__dict__.get("_single")
            if fn is None:  # resolved once (a name or a function becomes a Loss object)
                fn = _get_loss(self._spec if not isinstance(self._spec, (list, tuple)) else
                               self._spec[0])
                self.__dict__["_single"] = fn
            value = fn(y_true, y_pred, sample_weight)
            if self._weights is not None:
                w = self._weights[0] if isinstance(self._weights, (list, tuple)) else \
                    self._weights
                value = ops.multiply(value, np.asarray(w, dtype=value._data.dtype))
            return value
        preds = list(y_pred.values()) if isinstance(y_pred, dict) else list(y_pred)
        trues = list(y_true.values()) if isinstance(y_true, dict) else list(y_true)
        spec = self._spec
        if isinstance(spec, dict):
            fns = [spec.get(n) for n in self._names]
        elif isinstance(spec, (list, tuple)):
            if len(spec) != len(preds):
                raise hinted(ValueError(with_hint(
                    f"For a model with multiple outputs, when providing the `loss` argument "
                    f"as a list, it should have as many entries as the model has outputs. "
                    f"Received:\nloss={spec}\nof length {len(spec)} whereas the model has "
                    f"{len(preds)} outputs.", "give one loss per output")))
            fns = list(spec)
        else:
            fns = [spec] * len(preds)
        if isinstance(self._weights, dict):
            ws = [self._weights.get(n, 1.0) for n in self._names]
        elif self._weights is None:
            ws = [1.0] * len(preds)
        else:
            ws = list(self._weights)
        total = None
        trackers: list[Any] = self.metrics or [None] * len(preds)
        for fn, w, t, p, tracker in zip(fns, ws, trues, preds, trackers):
            if fn is None:
                continue
            value = _get_loss(fn)(t, p, sample_weight)
            if tracker is not None:
                # Keras records each output's loss before its loss weight, as a plain mean
                # over batches: its trainer weights it by the static batch size, which is
                # unknown (None) inside its compiled step
                tracker.update_state(value)
            if w != 1.0:
                value = ops.multiply(value, np.asarray(w, dtype=value._data.dtype))
            total = value if total is None else ops.add(total, value)
        return total


_ACCEPTS: dict[Any, bool] = {}


def _accepts_training(layer: Any) -> bool:
    call = type(layer).call
    known = _ACCEPTS.get(call)
    if known is not None:
        return known
    try:
        params = inspect.signature(call).parameters
    except (TypeError, ValueError):
        return False
    ok = "training" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
    _ACCEPTS[call] = ok
    return ok


def call_with_training(layer: Any, x: Any, training: bool) -> Any:
    """``layer(x, training=...)`` when its ``call`` takes ``training``, else ``layer(x)``."""
    if _accepts_training(layer):
        return layer(x, training=training)
    return layer(x)


# ---------------------------------------------------------------------------- trainer
class Trainer:
    """``compile``/``fit``/``evaluate``/``predict`` for ``keras.Model`` (Keras 3 semantics).

    Examples
    --------
    >>> import numpy as np
    >>> import tapegrad.tf as tf
    >>> model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    >>> model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
    >>> x = np.array([[0.0, 1.0], [1.0, 0.0]], np.float32); y = np.array([[1.0], [2.0]])
    >>> history = model.fit(x, y, epochs=3, verbose=0)
    >>> sorted(history.history), history.epoch
    (['loss', 'mae'], [0, 1, 2])
    >>> model.predict(x, verbose=0).shape
    (2, 1)
    """

    optimizer: Any
    stop_training: bool

    # -------------------------------------------------------------- state
    def _trainer_state(self) -> dict[str, Any]:
        d = self.__dict__
        if "_compiled" not in d:
            d["_compiled"] = False
            d["_loss_tracker"] = None
            d["_compile_metrics"] = None
            d["_compile_loss"] = None
            d["_tracked_metrics"] = []
            d["optimizer"] = None
            d["stop_training"] = False
            d["history"] = None
        return d

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, metrics_module.Metric) and not name.startswith("_"):
            tracked = self._trainer_state()["_tracked_metrics"]
            if all(value is not m for m in tracked):
                tracked.append(value)
        super().__setattr__(name, value)

    @property
    def compiled(self) -> bool:
        return bool(self._trainer_state()["_compiled"])

    @property
    def metrics(self) -> list[Any]:
        """The loss tracker, the compiled metrics, then metrics set as attributes."""
        d = self._trainer_state()
        out: list[Any] = []
        if d["_loss_tracker"] is not None:
            out.append(d["_loss_tracker"])
        if d["_compile_metrics"] is not None:
            out.append(d["_compile_metrics"])
        if d["_compile_loss"] is not None:
            out.extend(d["_compile_loss"].metrics)
        out.extend(d["_tracked_metrics"])
        return out

    @property
    def metrics_names(self) -> list[str]:
        return [m.name for m in self.metrics]

    @property
    def metrics_variables(self) -> list[Any]:
        return [v for m in self.metrics for v in m.variables]

    def reset_metrics(self) -> None:
        for m in self.metrics:
            m.reset_state()

    def _output_names(self) -> list[str]:
        names = getattr(self, "output_names", None)
        return list(names) if names else []

    # -------------------------------------------------------------- compile
    def compile(self, optimizer: Any = "rmsprop", loss: Any = None, loss_weights: Any = None,
                metrics: Any = None, weighted_metrics: Any = None, run_eagerly: bool = False,
                steps_per_execution: int = 1, jit_compile: Any = "auto",
                auto_scale_loss: bool = True) -> None:
        """Configure the model for training (optimizer by name or object, loss, metrics)."""
        d = self._trainer_state()
        d["optimizer"] = optimizers_module.get(optimizer)
        d["loss"] = loss
        d["_compile_args"] = {"loss": loss, "loss_weights": loss_weights, "metrics": metrics,
                              "weighted_metrics": weighted_metrics}
        d["_compile_loss"] = None if loss is None else \
            CompileLoss(loss, loss_weights, self._output_names())
        d["_loss_tracker"] = metrics_module.Mean(name="loss")
        d["_compile_metrics"] = None if metrics is None and weighted_metrics is None else \
            CompileMetrics(metrics, self._output_names(), weighted_metrics)
        d["_compiled"] = True
        from ..distribute import _CTX as _dist_ctx

        d["_distribute_strategy"] = _dist_ctx.strategy  # compiled under strategy.scope()
        d["run_eagerly"] = run_eagerly
        d["jit_compile"] = False

    def _assert_compiled(self, method: str) -> None:
        if not self.compiled:
            raise hinted(ValueError(with_hint(
                "You must call `compile()` before using the model.",
                f"model.compile(optimizer=..., loss=...) before {method}()")))

    @property
    def compiled_loss(self) -> Any:
        """The compiled loss as a callable ``(y_true, y_pred, sample_weight=None)``."""
        return self._trainer_state()["_compile_loss"]

    @property
    def compiled_metrics(self) -> Any:
        return self._trainer_state()["_compile_metrics"]

    # -------------------------------------------------------------- steps
    def compute_loss(self, x: Any = None, y: Any = None, y_pred: Any = None,
                     sample_weight: Any = None, training: bool = True) -> Any:
        """The compiled loss plus the losses added by layers (``self.losses``)."""
        d = self._trainer_state()
        losses = []
        if d["_compile_loss"] is not None:
            value = d["_compile_loss"](y, y_pred, sample_weight)
            if value is not None:
                losses.append(value)
        for extra in getattr(self, "losses", []) or []:
            losses.append(extra)
        if len(losses) == 1:
            return losses[0]
        if not losses:
            raise hinted(ValueError(with_hint(
                "No loss to compute. Provide a `loss` argument in `compile()`.",
                "model.compile(loss='mse') or another loss")))
        from ... import ops

        total = losses[0]
        for extra in losses[1:]:
            total = ops.add(total, extra)
        return total

    def compute_metrics(self, x: Any, y: Any, y_pred: Any, sample_weight: Any = None
                        ) -> dict[str, Any]:
        """Update the compiled metrics and return every metric's result."""
        cm = self._trainer_state()["_compile_metrics"]
        if cm is not None:
            cm.update_state(y, y_pred, sample_weight)
        return self.get_metrics_result()

    def get_metrics_result(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for m in self.metrics:
            r = m.result()
            if isinstance(r, dict):
                out.update(r)
            else:
                out[m.name] = r
        return out

    def train_step(self, data: Any) -> dict[str, Any]:
        """One optimisation step on one batch; returns the metrics' results."""
        x, y, sw = unpack_x_y_sample_weight(data)
        with GradientTape() as tape:
            y_pred = call_with_training(self, x, True)
            loss = self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sw, training=True)
            scale = getattr(self.optimizer, "scale_loss", None)  # LossScaleOptimizer
            scaled = loss if scale is None else scale(loss)
        self._trainer_state()["_loss_tracker"].update_state(
            loss, sample_weight=_batch_size_of(x))
        weights = self.trainable_weights  # type: ignore[attr-defined]
        if weights:
            grads = tape.gradient(scaled, weights)
            self.optimizer.apply_gradients(zip(grads, weights))
        else:
            warnings.warn("The model does not have any trainable weights.", stacklevel=2)
        return self.compute_metrics(x, y, y_pred, sample_weight=sw)

    def test_step(self, data: Any) -> dict[str, Any]:
        """One evaluation step on one batch; returns the metrics' results."""
        x, y, sw = unpack_x_y_sample_weight(data)
        y_pred = call_with_training(self, x, False)
        loss = self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sw, training=False)
        self._trainer_state()["_loss_tracker"].update_state(
            loss, sample_weight=_batch_size_of(x))
        return self.compute_metrics(x, y, y_pred, sample_weight=sw)

    def predict_step(self, data: Any) -> Any:
        x, _, _ = unpack_x_y_sample_weight(data)
        return call_with_training(self, x, False)

    def _metrics_or_logs(self, logs: Any) -> dict[str, Any]:
        result = self.get_metrics_result()
        if isinstance(logs, dict) and set(logs) == set(result):
            return result
        return dict(logs or {})

    def _flatten_in_order(self, logs: dict[str, Any]) -> Any:
        names: list[str] = []
        for m in self.metrics:
            if isinstance(m, CompileMetrics):
                # Keras lists a multi-output model's metrics after the others, by name
                names += [s.name for i, s in m._flat if i is None] + \
                    [s.name for s in m._weighted]
            else:
                names.append(m.name)
        results = [logs[n] for n in names if n in logs]
        results += [logs[k] for k in sorted(logs) if k not in names]
        return results[0] if len(results) == 1 else results

    # -------------------------------------------------------------- loops
    def fit(self, x: Any = None, y: Any = None, batch_size: int | None = None, epochs: int = 1,
            verbose: Any = "auto", callbacks: Any = None, validation_split: float = 0.0,
            validation_data: Any = None, shuffle: Any = True, class_weight: Any = None,
            sample_weight: Any = None, initial_epoch: int = 0,
            steps_per_epoch: int | None = None, validation_steps: int | None = None,
            validation_batch_size: int | None = None, validation_freq: int = 1) -> Any:
        """Train for ``epochs`` epochs; returns the ``History`` callback.

        Prints Keras's progress lines for ``verbose=1`` (a bar) and ``verbose=2``
        (one line per epoch); ``"auto"`` is 1.
        """
        self._assert_compiled("fit")
        if validation_split and validation_data is None:
            if _is_dataset(x):
                raise hinted(ValueError(with_hint(
                    "`validation_split` is only supported for Tensors or NumPy arrays."
                    f"Found incompatible type in the input: {[type(x)]}",
                    "pass validation_data for a dataset")))
            arrays = (_standardize(x), _standardize(y), _standardize(sample_weight))
            (x, y, sample_weight), validation_data = _split(arrays, validation_split)
        val: tuple[Any, Any, Any] | None = None
        if validation_data is not None:
            val = (validation_data, None, None) if _is_dataset(validation_data) else \
                unpack_x_y_sample_weight(validation_data)
        data = _Epochs(x, y, sample_weight, batch_size, steps_per_epoch, shuffle, class_weight)
        cbs = callbacks if isinstance(callbacks, callbacks_module.CallbackList) else \
            callbacks_module.CallbackList(callbacks, add_history=True,
                                          add_progbar=verbose != 0, model=self,
                                          verbose=verbose, epochs=epochs,
                                          steps=data.num_batches)
        d = self._trainer_state()
        d["stop_training"] = False
        cbs.on_train_begin()
        training_logs: dict[str, Any] | None = None
        logs: Any = {}
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            cbs.on_epoch_begin(epoch)
            step = -1
            strategy = d.get("_distribute_strategy")
            for step, batch in enumerate(data.epoch()):
                cbs.on_train_batch_begin(step)
                if strategy is not None:  # tf.distribute: this replica's share, all-reduced
                    logs = strategy._keras_train_step(self, batch, epoch == initial_epoch
                                                      and step == 0)
                else:
                    logs = self.train_step(batch)
                cbs.on_train_batch_end(step, logs)
                if self.__dict__["stop_training"]:
                    break
            if step < 0 and not _is_dataset(x):  # a dataset's epoch warns itself
                warnings.warn(_RAN_OUT, UserWarning, stacklevel=2)
            epoch_logs = dict(logs) if strategy is not None else self._metrics_or_logs(logs)
            if val is not None and (epoch + 1) % validation_freq == 0:
                val_logs = self.evaluate(
                    val[0], val[1], sample_weight=val[2],
                    batch_size=validation_batch_size or batch_size, steps=validation_steps,
                    callbacks=cbs, return_dict=True)
                epoch_logs.update({f"val_{k}": v for k, v in val_logs.items()})
            cbs.on_epoch_end(epoch, epoch_logs)
            training_logs = epoch_logs
            if self.__dict__["stop_training"]:
                break
        opt = self.__dict__.get("optimizer")
        if isinstance(opt, optimizers_module.Optimizer) and epochs > 0:
            opt.finalize_variable_values(self.trainable_weights)  # type: ignore[attr-defined]
        cbs.on_train_end(logs=training_logs)
        return self.__dict__["history"]

    def evaluate(self, x: Any = None, y: Any = None, batch_size: int | None = None,
                 verbose: Any = "auto", sample_weight: Any = None, steps: int | None = None,
                 callbacks: Any = None, return_dict: bool = False, **kwargs: Any) -> Any:
        """The loss and metrics over the data (a scalar, a list in ``metrics_names``
        order, or a dict with ``return_dict=True``)."""
        self._assert_compiled("evaluate")
        data = _Epochs(x, y, sample_weight, batch_size, steps, shuffle=False)
        cbs = callbacks if isinstance(callbacks, callbacks_module.CallbackList) else \
            callbacks_module.CallbackList(callbacks, add_progbar=verbose != 0, model=self,
                                          verbose=verbose, epochs=1, steps=data.num_batches)
        self.reset_metrics()
        cbs.on_test_begin()
        logs: Any = {}
        for step, batch in enumerate(data.epoch()):
            cbs.on_test_batch_begin(step)
            logs = self.test_step(batch)
            cbs.on_test_batch_end(step, logs)
        logs = callbacks_module.pythonify_logs(self._metrics_or_logs(logs))
        cbs.on_test_end(logs)
        if return_dict:
            return logs
        return self._flatten_in_order(logs)

    def predict(self, x: Any, batch_size: int | None = None, verbose: Any = "auto",
                steps: int | None = None, callbacks: Any = None) -> Any:
        """The model's outputs over ``x`` as NumPy arrays (batched, concatenated)."""
        data = _Epochs(x, None, None, batch_size, steps, shuffle=False)
        cbs = callbacks if isinstance(callbacks, callbacks_module.CallbackList) else \
            callbacks_module.CallbackList(callbacks, add_progbar=verbose != 0, model=self,
                                          verbose=verbose, epochs=1, steps=data.num_batches)
        cbs.on_predict_begin()
        outputs: list[Any] = []
        for step, batch in enumerate(data.epoch()):
            cbs.on_predict_batch_begin(step)
            out = self.predict_step(batch)
            outputs.append(_map(lambda t: np.asarray(t._data if isinstance(t, Tensor) else t),
                                out))
            cbs.on_predict_batch_end(step, {"outputs": out})
        cbs.on_predict_end()
        if not outputs:
            raise hinted(ValueError(with_hint(
                "Unexpected result of `predict_function` (Empty batch_outputs). Please use "
                "`Model.compile(..., run_eagerly=True)`, or `tf.config.run_functions_eagerly"
                "(True)` for more information of where went wrong, or file a issue/bug to "
                "`tf.keras`.", "the input has no samples")))
        return _concat(outputs)

    def train_on_batch(self, x: Any, y: Any = None, sample_weight: Any = None,
                       class_weight: Any = None, return_dict: bool = False) -> Any:
        """One training step on one batch; returns the loss/metrics of that batch."""
        self._assert_compiled("train_on_batch")
        self.reset_metrics()
        batch = next(_Epochs(x, y, sample_weight, _rows(x), None,
                             class_weight=class_weight).epoch())
        logs = callbacks_module.pythonify_logs(self.train_step(batch))
        return logs if return_dict else self._flatten_in_order(logs)

    def test_on_batch(self, x: Any, y: Any = None, sample_weight: Any = None,
                      return_dict: bool = False) -> Any:
        """Loss/metrics of one batch, without training."""
        self._assert_compiled("test_on_batch")
        self.reset_metrics()
        batch = next(_Epochs(x, y, sample_weight, _rows(x), None).epoch())
        logs = callbacks_module.pythonify_logs(self.test_step(batch))
        return logs if return_dict else self._flatten_in_order(logs)

    def predict_on_batch(self, x: Any) -> Any:
        """The outputs for one batch, as NumPy arrays."""
        batch = next(_Epochs(x, None, None, _rows(x), None).epoch())
        out = self.predict_step(batch)
        return _map(lambda t: np.asarray(t._data if isinstance(t, Tensor) else t), out)


def _rows(x: Any) -> int:
    leaves = _leaves(_standardize(x))
    return max(int(leaves[0].shape[0]), 1) if leaves else 1


def _concat(outputs: list[Any]) -> Any:
    first = outputs[0]
    if isinstance(first, dict):
        return {k: np.concatenate([o[k] for o in outputs]) for k in first}
    if isinstance(first, (list, tuple)):
        return type(first)(np.concatenate([o[i] for o in outputs]) for i in range(len(first)))
    return np.concatenate(outputs)
